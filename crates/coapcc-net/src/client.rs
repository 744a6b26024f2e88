//! One CoAP client endpoint on a real UDP socket: the sans-IO
//! [`coapcc_proto::client::Client`] driven by tokio (spec `docs/spec/architecture-spec.md`,
//! `docs/spec/algorithms-spec.md` §0.1 for the messaging rules it applies).
//!
//! The driver does three things in a loop: send what the endpoint wants sent
//! (`poll_transmit`), report what happened (`poll_event`), and wait for either a
//! datagram or the endpoint's next retransmission deadline (`poll_timeout`).
//! A datagram's time is taken when the driver receives it.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use coapcc_link::rng::SimRng;
use coapcc_proto::client::{
    Client, ClientConfig, ClientEvent, ExchangeId, FailReason, Request, ResponseBody, Transmit,
};
use coapcc_proto::message::Code;
use coapcc_proto::Nanos;
use coapcc_workload::AlgorithmSpec;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::RECV_BUFFER;

/// How a client endpoint is set up.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The algorithm timing retransmissions, with its parameters.
    pub algorithm: AlgorithmSpec,
    /// MAX_RETRANSMIT.
    pub max_retransmit: u8,
    /// NSTART.
    pub nstart: usize,
    /// Token length of requests not marked by token.
    pub token_len: u8,
    /// Seed of the endpoint's random stream (timer dithering, tokens, first
    /// Message ID).
    pub seed: u64,
    /// Keep response payloads.
    pub keep_payload: bool,
}

impl Default for ClientOptions {
    /// Default CoAP, RFC 7252's MAX_RETRANSMIT and NSTART, 4-byte tokens.
    fn default() -> Self {
        ClientOptions {
            algorithm: AlgorithmSpec::named("default"),
            max_retransmit: 4,
            nstart: 1,
            token_len: 4,
            seed: 1,
            keep_payload: true,
        }
    }
}

/// Something that happened while driving the endpoint.
#[derive(Debug)]
pub enum Happening<'a> {
    /// A datagram was handed to the socket at `at`.
    Sent {
        /// When.
        at: Nanos,
        /// What.
        transmit: &'a Transmit<SocketAddr>,
    },
    /// The endpoint reported an event at `at`.
    Event {
        /// When.
        at: Nanos,
        /// What.
        event: ClientEvent<SocketAddr>,
    },
}

/// How one exchange ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A response arrived.
    Response {
        /// Its code.
        code: Code,
        /// Its payload.
        payload: Vec<u8>,
        /// The echoed transmission ordinal, if the request was marked and the
        /// server echoed the mark.
        echo: Option<u8>,
    },
    /// The exchange was abandoned.
    Failed(FailReason),
}

/// The record of one exchange.
#[derive(Clone, Debug, PartialEq)]
pub struct ExchangeReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Original transmission to acknowledgement (or to abandonment).
    pub elapsed: Nanos,
    /// Retransmissions sent.
    pub retransmissions: u8,
    /// Every timer the algorithm armed for it, in order (seconds).
    pub timers: Vec<f64>,
    /// Piggybacked responses that acknowledged it with a token not its own
    /// (RFC 7252 §5.3.2): not taken as its response.
    pub mismatched_responses: u32,
    /// Times it was sent again with an Echo option after a 4.01 (RFC 9175
    /// §2.4; at most 1). `elapsed`, `retransmissions` and `timers` are
    /// those of the request that got the final response.
    pub echo_retries: u32,
    /// The response's options as (number, value) in message order (empty
    /// after a failure, or unless [`ClientOptions::keep_payload`]).
    pub options: Vec<(u16, Vec<u8>)>,
}

/// A CoAP client endpoint bound to a UDP socket.
pub struct NetClient {
    socket: UdpSocket,
    coap: Client<SocketAddr, SimRng>,
    clock: Clock,
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// Datagrams the socket refused to send (counted as losses).
    pub send_errors: u64,
}

/// Checks `spec` against the registry and returns the client's algorithm
/// factory.
pub fn factory(spec: &AlgorithmSpec) -> Result<coapcc_proto::client::AlgorithmFactory> {
    spec.factory().map_err(|e| anyhow!("{e}"))
}

impl NetClient {
    /// A client on a socket bound to `local` (port 0 = any).
    pub async fn bind(local: SocketAddr, opts: &ClientOptions, clock: Clock) -> Result<Self> {
        let socket = UdpSocket::bind(local).await?;
        Self::with_socket(socket, opts, clock)
    }

    /// A client on an existing socket.
    pub fn with_socket(socket: UdpSocket, opts: &ClientOptions, clock: Clock) -> Result<Self> {
        if opts.nstart == 0 {
            bail!("nstart: expected at least 1");
        }
        let factory = factory(&opts.algorithm)?;
        let mut rng = SimRng::new(opts.seed);
        let coap_rng = SimRng::new(rng.next_u64());
        let first_mid = rng.next_u64() as u16;
        let config = ClientConfig {
            max_retransmit: opts.max_retransmit,
            nstart: opts.nstart,
            keep_payload: opts.keep_payload,
            token_len: opts.token_len.min(8),
            ..ClientConfig::default()
        };
        Ok(NetClient {
            socket,
            coap: Client::new(config, factory, coap_rng, first_mid),
            clock,
            tx: vec![0; RECV_BUFFER],
            rx: vec![0; RECV_BUFFER],
            send_errors: 0,
        })
    }

    /// The socket's address.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.socket.local_addr()?)
    }

    /// The sans-IO endpoint (e.g. to look at an algorithm's state).
    pub fn coap(&self) -> &Client<SocketAddr, SimRng> {
        &self.coap
    }

    /// The sans-IO endpoint, mutably (e.g. to reset a peer's state).
    pub fn coap_mut(&mut self) -> &mut Client<SocketAddr, SimRng> {
        &mut self.coap
    }

    /// The clock the endpoint's time comes from.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Starts (or queues) a request to `peer`; it goes out on the next
    /// [`NetClient::step`].
    pub fn start(&mut self, peer: SocketAddr, req: &Request<'_>) -> Result<ExchangeId> {
        self.start_with_options(peer, req, &[])
    }

    /// [`NetClient::start`] with extra options after the path
    /// ([`Client::request_with_options`]: numbered 16 to 251, ascending).
    pub fn start_with_options(
        &mut self,
        peer: SocketAddr,
        req: &Request<'_>,
        extra: &[(u16, &[u8])],
    ) -> Result<ExchangeId> {
        let now = self.clock.now();
        Ok(self.coap.request_with_options(now, peer, req, extra)?)
    }

    /// Sends everything due and reports every pending event.
    pub async fn flush(&mut self, on: &mut impl FnMut(Happening<'_>)) {
        while let Some(t) = self.coap.poll_transmit(&mut self.tx) {
            let at = self.clock.now();
            if self
                .socket
                .send_to(&self.tx[..t.len], t.peer)
                .await
                .is_err()
            {
                self.send_errors += 1;
            }
            on(Happening::Sent { at, transmit: &t });
        }
        while let Some(event) = self.coap.poll_event() {
            on(Happening::Event {
                at: self.clock.now(),
                event,
            });
        }
    }

    /// Flushes, waits for one datagram, the next retransmission deadline or
    /// `until` (whichever is first), handles it, and flushes again.
    pub async fn step(&mut self, until: Instant, on: &mut impl FnMut(Happening<'_>)) {
        self.flush(on).await;
        let wake = match self.coap.poll_timeout() {
            Some(d) => self.clock.instant(d).min(until),
            None => until,
        };
        tokio::select! {
            r = self.socket.recv_from(&mut self.rx) => {
                if let Ok((n, from)) = r {
                    let now = self.clock.now();
                    self.coap.handle_datagram(now, from, &self.rx[..n]);
                }
            }
            _ = tokio::time::sleep_until(wake) => {
                let now = self.clock.now();
                if self.coap.poll_timeout().is_some_and(|d| d <= now) {
                    self.coap.handle_timeout(now);
                }
            }
        }
        self.flush(on).await;
    }

    /// Runs one exchange to its end, or fails after `limit`.
    pub async fn exchange(
        &mut self,
        peer: SocketAddr,
        req: &Request<'_>,
        limit: Duration,
    ) -> Result<ExchangeReport> {
        self.exchange_with_options(peer, req, &[], limit).await
    }

    /// [`NetClient::exchange`] with extra options after the path (see
    /// [`NetClient::start_with_options`]).
    pub async fn exchange_with_options(
        &mut self,
        peer: SocketAddr,
        req: &Request<'_>,
        extra: &[(u16, &[u8])],
        limit: Duration,
    ) -> Result<ExchangeReport> {
        let until = Instant::now() + limit;
        let id = self.start_with_options(peer, req, extra)?;
        let mut t = Tracker {
            id,
            timers: Vec::new(),
            first_sent: None,
            mismatched: 0,
            echo_retries: 0,
            done: None,
        };
        loop {
            self.step(until, &mut |h| t.see(h)).await;
            if t.done.is_some() {
                break;
            }
            if Instant::now() >= until {
                bail!(
                    "no response from {peer} within {:.1} s",
                    limit.as_secs_f64()
                );
            }
        }
        Ok(t.done.expect("loop ends when done"))
    }
}

/// Follows one exchange through the endpoint's happenings.
struct Tracker {
    id: ExchangeId,
    timers: Vec<f64>,
    first_sent: Option<Nanos>,
    mismatched: u32,
    echo_retries: u32,
    done: Option<ExchangeReport>,
}

impl Tracker {
    fn see(&mut self, h: Happening<'_>) {
        match h {
            Happening::Sent { at, transmit } => {
                if transmit.exchange == Some(self.id) && self.first_sent.is_none() {
                    self.first_sent = Some(at);
                }
            }
            Happening::Event { at, event } => match event {
                ClientEvent::TimerArmed {
                    exchange, timer, ..
                } if exchange == self.id => self.timers.push(timer),
                ClientEvent::MismatchedResponse { exchange, .. } if exchange == self.id => {
                    self.mismatched += 1;
                }
                ClientEvent::EchoRetry { exchange, .. } if exchange == self.id => {
                    // the retry is a new request: its timers start over
                    self.echo_retries += 1;
                    self.timers.clear();
                    self.first_sent = None;
                }
                ClientEvent::Response {
                    exchange,
                    code,
                    retransmissions,
                    elapsed,
                    echo,
                    body,
                    ..
                } if exchange == self.id => {
                    let ResponseBody { payload, options } = body.map(|b| *b).unwrap_or_default();
                    self.done = Some(ExchangeReport {
                        outcome: Outcome::Response {
                            code,
                            payload,
                            echo,
                        },
                        elapsed,
                        retransmissions,
                        timers: std::mem::take(&mut self.timers),
                        mismatched_responses: self.mismatched,
                        echo_retries: self.echo_retries,
                        options,
                    })
                }
                ClientEvent::Failed {
                    exchange,
                    retransmissions,
                    reason,
                    ..
                } if exchange == self.id => {
                    self.done = Some(ExchangeReport {
                        outcome: Outcome::Failed(reason),
                        elapsed: at.saturating_sub(self.first_sent.unwrap_or(at)),
                        retransmissions,
                        timers: std::mem::take(&mut self.timers),
                        mismatched_responses: self.mismatched,
                        echo_retries: self.echo_retries,
                        options: Vec::new(),
                    })
                }
                _ => {}
            },
        }
    }
}

/// Test peers and a bound on test runs, shared by the UDP client's and load
/// generator's deadline tests.
#[cfg(test)]
pub(crate) mod flood {
    use std::net::{SocketAddr, UdpSocket};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    /// The generous margin past a time limit within which a run must return.
    pub(crate) const MARGIN: Duration = Duration::from_secs(3);

    /// How long a flooding peer runs at most (the tests stop it sooner).
    const BOUND: Duration = Duration::from_secs(20);

    /// A UDP peer on loopback that waits for a first datagram, then sends
    /// its sender NON 2.05 responses with a token no request has (1 byte:
    /// the clients' are 0 or 4 bytes long), as fast as it can, never
    /// answering a request. Stops when dropped, or after [`BOUND`].
    pub(crate) struct UdpFlood {
        pub(crate) addr: SocketAddr,
        stop: Arc<AtomicBool>,
        sent: Arc<AtomicU64>,
        thread: Option<JoinHandle<()>>,
    }

    impl UdpFlood {
        pub(crate) fn start() -> Self {
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let addr = sock.local_addr().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let sent = Arc::new(AtomicU64::new(0));
            let (s, n) = (stop.clone(), sent.clone());
            let thread = std::thread::spawn(move || {
                let end = Instant::now() + BOUND;
                let mut buf = [0u8; 1500];
                let mut client = None;
                while client.is_none() && !s.load(Ordering::Relaxed) && Instant::now() < end {
                    client = sock.recv_from(&mut buf).ok().map(|(_, from)| from);
                }
                let Some(to) = client else { return };
                let mut mid = 0u16;
                while !s.load(Ordering::Relaxed) && Instant::now() < end {
                    mid = mid.wrapping_add(1);
                    let [a, b] = mid.to_be_bytes();
                    // NON 2.05, TKL 1, token F0, payload "x"
                    let _ = sock.send_to(&[0x51, 0x45, a, b, 0xF0, 0xFF, b'x'], to);
                    n.fetch_add(1, Ordering::Relaxed);
                }
            });
            UdpFlood {
                addr,
                stop,
                sent,
                thread: Some(thread),
            }
        }

        /// Datagrams sent so far.
        pub(crate) fn sent(&self) -> u64 {
            self.sent.load(Ordering::Relaxed)
        }
    }

    impl Drop for UdpFlood {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    /// Runs `fut` on a runtime like the CLI's, bounded at `bound` from
    /// outside (a run that ignores its own deadline fails the test instead
    /// of running on); returns its output and how long it took.
    pub(crate) fn bounded<T>(
        bound: Duration,
        fut: impl std::future::Future<Output = T>,
    ) -> (Option<T>, Duration) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let began = Instant::now();
        let out = rt.block_on(async { tokio::time::timeout(bound, fut).await.ok() });
        let took = began.elapsed();
        rt.shutdown_timeout(Duration::from_secs(1));
        (out, took)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer that floods the client with responses to no request of its
    /// own: the exchange fails at its limit, by the clock.
    #[test]
    fn an_exchange_ends_at_its_limit_while_the_peer_floods_foreign_tokens() {
        use flood::{bounded, UdpFlood, MARGIN};
        let peer = UdpFlood::start();
        let limit = Duration::from_secs(2);
        let opts = ClientOptions {
            max_retransmit: 20,
            ..ClientOptions::default()
        };
        let (r, took) = bounded(limit + MARGIN, async {
            let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), &opts, Clock::start())
                .await
                .unwrap();
            let req = Request {
                method: Code::GET,
                path: "x",
                payload: &[],
                confirmable: true,
            };
            c.exchange(peer.addr, &req, limit).await
        });
        let r = r.unwrap_or_else(|| panic!("the exchange ran past {limit:?} + {MARGIN:?}"));
        let e = r.expect_err("no response to the request ever came");
        assert!(took >= limit, "{took:?}");
        assert_eq!(
            e.to_string(),
            format!("no response from {} within 2.0 s", peer.addr)
        );
        assert!(peer.sent() > 100, "the peer flooded: {}", peer.sent());
    }

    /// A peer that ignores the first copy of each request and answers the
    /// second with a piggybacked 2.05: the client retransmits once, and its
    /// Default CoAP timers are a [2, 3] s draw then twice that — here with
    /// ACK_TIMEOUT 0.05 s, so [0.05, 0.075] then doubled.
    #[tokio::test]
    async fn retransmits_on_timeout_and_reports_timers() {
        let peer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let peer_addr = peer.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            let mut seen = Vec::new();
            for _ in 0..2 {
                let (n, from) = peer.recv_from(&mut buf).await.unwrap();
                seen.push(buf[..n].to_vec());
                if seen.len() == 2 {
                    // ACK, 2.05, same MID and token, payload "ok"
                    let req = &seen[1];
                    let tkl = (req[0] & 0x0f) as usize;
                    let mut resp = vec![0x60 | tkl as u8, 0x45, req[2], req[3]];
                    resp.extend_from_slice(&req[4..4 + tkl]);
                    resp.extend_from_slice(&[0xff, b'o', b'k']);
                    peer.send_to(&resp, from).await.unwrap();
                }
            }
            seen
        });
        let opts = ClientOptions {
            algorithm: AlgorithmSpec {
                ack_timeout: Some(0.05),
                ..AlgorithmSpec::named("default")
            },
            ..ClientOptions::default()
        };
        let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), &opts, Clock::start())
            .await
            .unwrap();
        let req = Request {
            method: Code::GET,
            path: "a/b",
            payload: &[],
            confirmable: true,
        };
        let r = c
            .exchange(peer_addr, &req, Duration::from_secs(5))
            .await
            .unwrap();
        let seen = server.await.unwrap();
        assert_eq!(
            seen[0], seen[1],
            "a retransmission is the identical message"
        );
        assert_eq!(
            r.outcome,
            Outcome::Response {
                code: Code::CONTENT,
                payload: b"ok".to_vec(),
                echo: None
            }
        );
        assert_eq!(r.retransmissions, 1);
        assert_eq!(r.timers.len(), 2);
        assert!((0.05..=0.075).contains(&r.timers[0]), "{:?}", r.timers);
        assert!((r.timers[1] - 2.0 * r.timers[0]).abs() < 1e-9);
        // E is measured from the original: at least the first timer.
        assert!(r.elapsed as f64 / 1e9 >= r.timers[0]);
    }

    /// RFC 7252 §5.3.2 against a crafted peer: it acknowledges the request
    /// with a piggybacked 2.05 carrying the right Message ID but another
    /// token ("wrong"), then sends the real response separately as a NON
    /// with the request's token ("right"). The first acknowledges the
    /// request without answering it, and is counted; the second answers it.
    #[tokio::test]
    async fn a_piggybacked_response_with_another_token_is_not_the_answer() {
        let peer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let peer_addr = peer.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            let (n, from) = peer.recv_from(&mut buf).await.unwrap();
            let req = buf[..n].to_vec();
            let tkl = (req[0] & 0x0f) as usize;
            let token = req[4..4 + tkl].to_vec();
            let mut other = token.clone();
            other[0] ^= 0xff;
            // ACK 2.05, the request's Message ID, another token.
            let mut wrong = vec![0x60 | tkl as u8, 0x45, req[2], req[3]];
            wrong.extend_from_slice(&other);
            wrong.extend_from_slice(b"\xffwrong");
            peer.send_to(&wrong, from).await.unwrap();
            // NON 2.05, a Message ID of the server's, the request's token.
            let mid = u16::from_be_bytes([req[2], req[3]]).wrapping_add(1000);
            let mut right = vec![0x50 | tkl as u8, 0x45];
            right.extend_from_slice(&mid.to_be_bytes());
            right.extend_from_slice(&token);
            right.extend_from_slice(b"\xffright");
            peer.send_to(&right, from).await.unwrap();
            req
        });
        let mut c = NetClient::bind(
            "127.0.0.1:0".parse().unwrap(),
            &ClientOptions::default(),
            Clock::start(),
        )
        .await
        .unwrap();
        let req = Request {
            method: Code::GET,
            path: "x",
            payload: &[],
            confirmable: true,
        };
        let r = c
            .exchange(peer_addr, &req, Duration::from_secs(10))
            .await
            .unwrap();
        let sent = server.await.unwrap();
        assert_eq!(sent[0] & 0x0f, 4, "4-byte tokens by default");
        assert_eq!(
            r.outcome,
            Outcome::Response {
                code: Code::CONTENT,
                payload: b"right".to_vec(),
                echo: None
            }
        );
        assert_eq!(r.mismatched_responses, 1);
    }

    #[tokio::test]
    async fn gives_up_after_max_retransmit_and_after_the_wall_limit() {
        let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = silent.local_addr().unwrap();
        let opts = ClientOptions {
            algorithm: AlgorithmSpec {
                ack_timeout: Some(0.01),
                ..AlgorithmSpec::named("default")
            },
            max_retransmit: 2,
            ..ClientOptions::default()
        };
        let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), &opts, Clock::start())
            .await
            .unwrap();
        let req = Request {
            method: Code::GET,
            path: "x",
            payload: &[],
            confirmable: true,
        };
        let r = c.exchange(to, &req, Duration::from_secs(5)).await.unwrap();
        assert_eq!(r.outcome, Outcome::Failed(FailReason::Timeout));
        assert_eq!(r.retransmissions, 2);
        assert_eq!(r.timers.len(), 3);
        let slow = ClientOptions {
            max_retransmit: 20,
            ..ClientOptions::default()
        };
        let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), &slow, Clock::start())
            .await
            .unwrap();
        let e = c.exchange(to, &req, Duration::from_millis(100)).await;
        assert!(e.is_err());
    }
}
