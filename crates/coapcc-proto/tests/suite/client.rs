//! The client against the real server, in process, on a virtual clock: the
//! exchange loop, retransmissions, MAX_RETRANSMIT, duplicates, the echo of
//! each marking (including from the server's cache), NSTART, separate
//! responses, NON requests, reset.

use std::cell::RefCell;
use std::sync::Arc;

use coapcc_proto::client::{
    Client, ClientConfig, ClientError, ClientEvent, ClientSettings, FailReason, Request, Transmit,
};
use coapcc_proto::message::{option, Code, Message, MessageType};
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};
use coapcc_rto::registry::{self, AlgorithmInfo, BoxedAlgorithm, Build};
use coapcc_rto::{
    Ack, AlgorithmParams, CongestionControl, ExchangeTimer, Marking, ParamError, Random,
};
use proptest::prelude::*;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;
const SERVER: u32 = 0;

/// SplitMix64.
struct Mix(u64);
impl Random for Mix {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What the test algorithm was told.
#[derive(Clone, Debug, PartialEq)]
enum Call {
    Start { now: f64, outstanding: usize },
    Expire { now: f64, retransmissions: u8 },
    Ack { ack: Ack, retransmissions: u8 },
    Failure { now: f64 },
    Reset,
}

thread_local! {
    static LOG: RefCell<Vec<Call>> = const { RefCell::new(Vec::new()) };
}
fn log(c: Call) {
    LOG.with(|l| l.borrow_mut().push(c));
}
fn calls() -> Vec<Call> {
    LOG.with(|l| l.borrow_mut().drain(..).collect())
}
fn acks() -> Vec<(Ack, u8)> {
    calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Ack {
                ack,
                retransmissions,
            } => Some((ack, retransmissions)),
            _ => None,
        })
        .collect()
}

/// Timers 2, 4, 8, … s; marks as configured; logs every call.
struct Fixed(Marking);
impl CongestionControl for Fixed {
    fn start(&mut self, now: f64, outstanding: usize, _: &mut dyn Random) -> ExchangeTimer {
        log(Call::Start { now, outstanding });
        ExchangeTimer {
            initial: 2.0,
            current: 2.0,
            ..ExchangeTimer::default()
        }
    }
    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, _: &mut dyn Random) {
        ex.retransmissions += 1;
        ex.current *= 2.0;
        log(Call::Expire {
            now,
            retransmissions: ex.retransmissions,
        });
    }
    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        log(Call::Ack {
            ack: *ack,
            retransmissions: ex.retransmissions,
        });
    }
    fn on_failure(&mut self, now: f64, _: &ExchangeTimer) {
        log(Call::Failure { now });
    }
    fn reset(&mut self) {
        log(Call::Reset);
    }
    fn marking(&self) -> Marking {
        self.0
    }
}

/// The test algorithm's registry entry, built by `build`.
const fn fixed_info(build: &'static Build) -> AlgorithmInfo {
    AlgorithmInfo {
        name: "fixed",
        summary: "test: 2 s doubling",
        section: "-",
        approximate: false,
        build,
        state_bytes: 0,
    }
}

/// The test algorithm marking its transmissions with `marking`.
fn fixed(marking: Marking) -> Result<BoxedAlgorithm, ParamError> {
    Ok(Box::new(Fixed(marking)))
}
fn plain(_: &AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> {
    fixed(Marking::None)
}
fn tc(_: &AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> {
    fixed(Marking::TransmissionCounter)
}
fn rexmit(_: &AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> {
    fixed(Marking::RexmitCount { probe: false })
}
fn probe(_: &AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> {
    fixed(Marking::RexmitCount { probe: true })
}
fn token(_: &AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> {
    fixed(Marking::Token)
}
static PLAIN: AlgorithmInfo = fixed_info(&plain);
static TC: AlgorithmInfo = fixed_info(&tc);
static REXMIT: AlgorithmInfo = fixed_info(&rexmit);
static PROBE: AlgorithmInfo = fixed_info(&probe);
static TOKEN: AlgorithmInfo = fixed_info(&token);

const GET: Request<'static> = Request {
    method: Code::GET,
    path: "/sense",
    payload: &[],
    confirmable: true,
};

fn client(info: &'static AlgorithmInfo, config: ClientConfig) -> Client<u32, Mix> {
    calls();
    Client::new(config, (info, AlgorithmParams::default()), Mix(7), 100)
}

fn config(max_retransmit: u8) -> ClientConfig {
    ClientConfig {
        max_retransmit,
        ..ClientConfig::default()
    }
}

fn server() -> Server<u32, FixedPayload> {
    Server::new(ServerConfig::default(), FixedPayload { size: 60 })
}

fn tx(c: &mut Client<u32, Mix>) -> Vec<(Transmit<u32>, Vec<u8>)> {
    let mut buf = [0u8; 1152];
    let mut out = Vec::new();
    while let Some(t) = c.poll_transmit(&mut buf) {
        out.push((t, buf[..t.len].to_vec()));
    }
    out
}

fn events(c: &mut Client<u32, Mix>) -> Vec<ClientEvent<u32>> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// The server's answer to `data` from client 1, and whether it came from the
/// cache.
fn serve(s: &mut Server<u32, FixedPayload>, now: u64, data: &[u8]) -> Option<(Vec<u8>, bool)> {
    let mut out = [0u8; 1152];
    match s.handle_datagram(now, 1, data, &mut out) {
        ServerOutput::Reply { len, duplicate } => Some((out[..len].to_vec(), duplicate)),
        ServerOutput::Nothing => None,
    }
}

fn only_tx(c: &mut Client<u32, Mix>) -> (Transmit<u32>, Vec<u8>) {
    let mut t = tx(c);
    assert_eq!(t.len(), 1, "{t:?}");
    t.pop().unwrap()
}

#[test]
fn exchange_completes() {
    let mut c = client(registry::find("default").unwrap(), config(4));
    let mut s = server();
    let id = c.request(0, SERVER, &GET).unwrap();
    let (t, bytes) = only_tx(&mut c);
    assert_eq!(
        (t.peer, t.exchange, t.mid, t.ordinal),
        (SERVER, Some(id), 100, 0)
    );
    assert_eq!(
        bytes,
        [0x40, 0x01, 0x00, 100, 0xB5, b's', b'e', b'n', b's', b'e']
    );
    let ev = events(&mut c);
    let ClientEvent::TimerArmed {
        ordinal: 0, timer, ..
    } = ev[0]
    else {
        panic!("{ev:?}")
    };
    assert!(
        (2.0..=3.0).contains(&timer),
        "Default CoAP's dithered timer: {timer}"
    );
    let deadline = c.poll_timeout().unwrap();
    assert_eq!(deadline, (timer * 1e9).round() as u64);
    let (reply, dup) = serve(&mut s, 300 * MS, &bytes).unwrap();
    assert!(!dup);
    assert_eq!(reply.len(), 65);
    c.handle_datagram(600 * MS, SERVER, &reply);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::Response {
            exchange: id,
            peer: SERVER,
            code: Code::CONTENT,
            retransmissions: 0,
            elapsed: 600 * MS,
            echo: None,
            body: None,
        }]
    );
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.active(), 0);
    assert!(tx(&mut c).is_empty());
    assert!(c.algorithm(SERVER).is_some() && c.algorithm(9).is_none());
}

#[test]
fn payload_is_kept_when_asked() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            keep_payload: true,
            ..ClientConfig::default()
        },
    );
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, bytes) = only_tx(&mut c);
    c.handle_datagram(SEC, SERVER, &serve(&mut s, 0, &bytes).unwrap().0);
    let ev = events(&mut c);
    let Some(ClientEvent::Response { body: Some(b), .. }) = ev.last() else {
        panic!()
    };
    assert_eq!(b.payload, vec![b'x'; 60]);
}

/// Extra options (here Block2 and Size2) go after the path, the response's
/// options come back with its payload, and options out of order or below
/// Uri-Query are refused.
#[test]
fn extra_request_options_and_response_options() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            keep_payload: true,
            ..ClientConfig::default()
        },
    );
    let extra: [(u16, &[u8]); 2] = [(option::BLOCK2, &[0x12]), (option::SIZE2, &[])];
    c.request_with_options(0, SERVER, &GET, &extra).unwrap();
    let (_, bytes) = only_tx(&mut c);
    let m = Message::decode(&bytes).unwrap();
    assert_eq!(
        m.options,
        vec![
            (option::URI_PATH, b"sense".to_vec()),
            (option::BLOCK2, vec![0x12]),
            (option::SIZE2, vec![])
        ]
    );
    let mut reply = Message::new(MessageType::Ack, Code::CONTENT, m.mid);
    reply.token = m.token.clone();
    reply.options.push((option::ETAG, vec![7]));
    reply.options.push((option::BLOCK2, vec![0x1A]));
    reply.payload = vec![1; 64];
    c.handle_datagram(SEC, SERVER, &reply.encode().unwrap());
    let ev = events(&mut c);
    let Some(ClientEvent::Response { body: Some(b), .. }) = ev.last() else {
        panic!("{ev:?}")
    };
    assert_eq!(
        b.options,
        vec![(option::ETAG, vec![7]), (option::BLOCK2, vec![0x1A])]
    );
    assert_eq!(b.payload, vec![1; 64]);
    let bad: [(u16, &[u8]); 2] = [(option::SIZE2, &[]), (option::BLOCK2, &[])];
    assert_eq!(
        c.request_with_options(0, SERVER, &GET, &bad),
        Err(ClientError::OptionOrder)
    );
    let low: [(u16, &[u8]); 1] = [(option::ETAG, &[1])];
    assert_eq!(
        c.request_with_options(0, SERVER, &GET, &low),
        Err(ClientError::OptionOrder)
    );
}

#[test]
fn retransmission_after_the_timer_with_same_mid_and_bytes() {
    let mut c = client(&PLAIN, config(4));
    let mut s = server();
    let id = c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    events(&mut c);
    assert_eq!(c.poll_timeout(), Some(2 * SEC));
    c.handle_timeout(2 * SEC - 1);
    assert!(tx(&mut c).is_empty(), "not yet");
    c.handle_timeout(2 * SEC);
    let (t, copy) = only_tx(&mut c);
    assert_eq!((t.mid, t.ordinal, t.exchange), (100, 1, Some(id)));
    assert_eq!(copy, original);
    assert_eq!(
        events(&mut c),
        vec![
            ClientEvent::TimerExpired {
                exchange: id,
                peer: SERVER,
                timer: 2.0
            },
            ClientEvent::TimerArmed {
                exchange: id,
                peer: SERVER,
                ordinal: 1,
                timer: 4.0
            },
        ]
    );
    assert_eq!(c.poll_timeout(), Some(6 * SEC));
    let (reply, _) = serve(&mut s, 2500 * MS, &copy).unwrap();
    c.handle_datagram(3 * SEC, SERVER, &reply);
    let ev = events(&mut c);
    assert!(
        matches!(
            ev[..],
            [ClientEvent::Response { retransmissions: 1, elapsed, echo: None, .. }] if elapsed == 3 * SEC
        ),
        "{ev:?}"
    );
    let a = acks();
    assert_eq!(a.len(), 1);
    assert_eq!(
        (
            a[0].0.elapsed,
            a[0].0.now,
            a[0].0.echo,
            a[0].0.piggybacked,
            a[0].1
        ),
        (3.0, 3.0, None, true, 1)
    );
}

#[test]
fn max_retransmit_then_failed() {
    let mut c = client(&PLAIN, config(3));
    let id = c.request(0, SERVER, &GET).unwrap();
    let mut sent = tx(&mut c).len();
    // Timers 2, 4, 8, 16: expiries at 2, 6, 14, 30 s.
    for at in [2, 6, 14] {
        assert_eq!(c.poll_timeout(), Some(at * SEC));
        c.handle_timeout(at * SEC);
        sent += tx(&mut c).len();
    }
    assert_eq!(sent, 4, "original + MAX_RETRANSMIT");
    assert_eq!(c.poll_timeout(), Some(30 * SEC));
    c.handle_timeout(30 * SEC);
    assert!(tx(&mut c).is_empty());
    let ev = events(&mut c);
    let expired: Vec<f64> = ev
        .iter()
        .filter_map(|e| match e {
            ClientEvent::TimerExpired { timer, .. } => Some(*timer),
            _ => None,
        })
        .collect();
    assert_eq!(expired, vec![2.0, 4.0, 8.0, 16.0]);
    assert_eq!(
        ev.last(),
        Some(&ClientEvent::Failed {
            exchange: id,
            peer: SERVER,
            retransmissions: 3,
            reason: FailReason::Timeout
        })
    );
    assert!(calls().contains(&Call::Failure { now: 30.0 }));
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.active(), 0);
}

#[test]
fn duplicate_responses_are_reported() {
    let mut c = client(&PLAIN, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    c.handle_timeout(2 * SEC);
    let (_, copy) = only_tx(&mut c);
    // Both copies reach the server: the second is answered from the cache.
    let (r1, d1) = serve(&mut s, 2100 * MS, &original).unwrap();
    let (r2, d2) = serve(&mut s, 2200 * MS, &copy).unwrap();
    assert!(!d1 && d2);
    events(&mut c);
    c.handle_datagram(2300 * MS, SERVER, &r1);
    assert!(matches!(
        events(&mut c)[..],
        [ClientEvent::Response {
            retransmissions: 1,
            ..
        }]
    ));
    c.handle_datagram(2400 * MS, SERVER, &r2);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::DuplicateResponse {
            peer: SERVER,
            mid: 100
        }]
    );
    assert_eq!(acks().len(), 1, "a duplicate never produces a sample");
    // From another peer, or with an unknown MID: nothing.
    c.handle_datagram(2500 * MS, 5, &r2);
    let mut other = Message::decode(&r2).unwrap();
    other.mid = 4000;
    c.handle_datagram(2500 * MS, SERVER, &other.encode().unwrap());
    assert!(events(&mut c).is_empty());
}

/// Runs one exchange where the original's reply is lost and the
/// retransmission's reply (from the server's cache) arrives: returns the
/// request bytes of both copies, the echo and the acknowledgement.
fn lost_reply(
    info: &'static AlgorithmInfo,
    server_config: ServerConfig,
) -> (Vec<u8>, Vec<u8>, Option<u8>, Ack) {
    let mut c = client(info, config(4));
    let mut s = Server::new(server_config, FixedPayload { size: 60 });
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    let (_, d) = serve(&mut s, 100 * MS, &original).unwrap(); // reply lost
    assert!(!d);
    c.handle_timeout(2 * SEC);
    let (t, copy) = only_tx(&mut c);
    assert_eq!(t.ordinal, 1);
    let (reply, d) = serve(&mut s, 2100 * MS, &copy).unwrap();
    assert!(d, "answered from the cache");
    events(&mut c);
    calls();
    c.handle_datagram(2300 * MS, SERVER, &reply);
    let ev = events(&mut c);
    let [ClientEvent::Response { echo, .. }] = ev[..] else {
        panic!("{ev:?}")
    };
    let a = acks();
    (original, copy, echo, a[0].0)
}

#[test]
fn transmission_counter_round_trip_including_the_cached_duplicate() {
    let (original, copy, echo, ack) = lost_reply(&TC, ServerConfig::default());
    // TC = ordinal + 1, appended after Uri-Path (delta 65041 → ext 0xFD04).
    assert_eq!(&original[10..], &[0xE1, 0xFD, 0x04, 0x01]);
    assert_eq!(&copy[10..], &[0xE1, 0xFD, 0x04, 0x02]);
    assert_eq!(&original[..10], &copy[..10], "only the marking differs");
    // The cache answered with the copy's TC: ordinal 1, RTT from its send time.
    assert_eq!(echo, Some(1));
    let e = ack.echo.unwrap();
    assert_eq!(e.ordinal, 1);
    assert!((e.rtt - 0.3).abs() < 1e-9, "{}", e.rtt);
    assert!((ack.elapsed - 2.3).abs() < 1e-9);
}

#[test]
fn transmission_counter_of_the_original() {
    // The original arrives late, after the retransmission was sent: echo 0.
    let mut c = client(&TC, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    c.handle_timeout(2 * SEC);
    let (_, copy) = only_tx(&mut c);
    let (r1, _) = serve(&mut s, 2500 * MS, &original).unwrap();
    let (r2, dup) = serve(&mut s, 2600 * MS, &copy).unwrap();
    assert!(dup);
    assert_eq!(
        Message::decode(&r2).unwrap().option(option::TC),
        Some(&[2][..])
    );
    events(&mut c);
    c.handle_datagram(2700 * MS, SERVER, &r1);
    assert!(matches!(
        events(&mut c)[..],
        [ClientEvent::Response {
            echo: Some(0),
            retransmissions: 1,
            ..
        }]
    ));
    let a = acks();
    assert!((a[0].0.echo.unwrap().rtt - 2.7).abs() < 1e-9);
    c.handle_datagram(2800 * MS, SERVER, &r2);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::DuplicateResponse {
            peer: SERVER,
            mid: 100
        }]
    );
}

#[test]
fn rexmit_cnt_round_trip() {
    let (original, copy, echo, ack) = lost_reply(&REXMIT, ServerConfig::default());
    // Thesis §7.3: the original carries no option (implicit 0); ordinal 1 is
    // the option (delta 65009 → 0xFCE4) with value 1, 4 bytes more.
    assert_eq!(original.len(), 10);
    assert_eq!(&copy[10..], &[0xE1, 0xFC, 0xE4, 0x01]);
    assert_eq!(&original[..10], &copy[..10], "only the marking differs");
    assert_eq!(echo, Some(1));
    assert!(ack.piggybacked);
}

#[test]
fn rexmit_cnt_response_without_the_option_answers_the_original() {
    // Support confirmed (no probe): the original goes out bare, the copy with
    // Rexmit-Cnt 1. The original arrives late and is answered without the
    // option: thesis §7.3, "messages missing the option are inferred as
    // original transmissions" → ordinal 0, RTT 2.7 − 0 = 2.7 s.
    let mut c = client(&REXMIT, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    c.handle_timeout(2 * SEC);
    let (_, copy) = only_tx(&mut c);
    let (r1, _) = serve(&mut s, 2500 * MS, &original).unwrap();
    assert_eq!(
        Message::decode(&r1).unwrap().option(option::REXMIT_CNT),
        None
    );
    let (r2, dup) = serve(&mut s, 2600 * MS, &copy).unwrap();
    assert!(dup);
    assert_eq!(
        Message::decode(&r2).unwrap().option(option::REXMIT_CNT),
        Some(&[1][..])
    );
    events(&mut c);
    c.handle_datagram(2700 * MS, SERVER, &r1);
    assert!(matches!(
        events(&mut c)[..],
        [ClientEvent::Response {
            echo: Some(0),
            retransmissions: 1,
            ..
        }]
    ));
    let a = acks();
    assert!((a[0].0.echo.unwrap().rtt - 2.7).abs() < 1e-9);
    // While probing (support unknown), a response without the option is no
    // echo: it tells the algorithm the server does not support it.
    let mut c = client(&PROBE, config(4));
    let mut s = Server::new(
        ServerConfig {
            echo_options: false,
            ..ServerConfig::default()
        },
        FixedPayload { size: 60 },
    );
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    let (reply, _) = serve(&mut s, 0, &original).unwrap();
    c.handle_datagram(SEC, SERVER, &reply);
    assert!(matches!(
        events(&mut c)[..],
        [_, ClientEvent::Response { echo: None, .. }]
    ));
}

#[test]
fn rexmit_cnt_probe_reads_back_as_the_original() {
    let mut c = client(&PROBE, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, original) = only_tx(&mut c);
    assert_eq!(&original[10..], &[0xE1, 0xFC, 0xE4, 0xFF]);
    let (reply, _) = serve(&mut s, 0, &original).unwrap();
    assert_eq!(
        Message::decode(&reply).unwrap().option(option::REXMIT_CNT),
        Some(&[255][..])
    );
    c.handle_datagram(SEC, SERVER, &reply);
    assert!(matches!(
        events(&mut c)[..],
        [_, ClientEvent::Response { echo: Some(0), .. }]
    ));
    assert_eq!(acks()[0].0.echo.unwrap().rtt, 1.0);
}

#[test]
fn token_marking_echoes_the_answered_copy() {
    let (original, copy, echo, ack) = lost_reply(&TOKEN, ServerConfig::default());
    assert_eq!(&original[..5], &[0x41, 0x01, 0x00, 100, 0x00]);
    assert_eq!(&copy[..5], &[0x41, 0x01, 0x00, 100, 0x01]);
    assert_eq!(original.len(), 11);
    // The original's answer was lost; the server answers copy 1 from its
    // cache with copy 1's token: the precise RTT of copy 1, 0.3 s.
    assert_eq!(echo, Some(1));
    let e = ack.echo.unwrap();
    assert_eq!(e.ordinal, 1);
    assert!((e.rtt - 0.3).abs() < 1e-9);
    assert!((ack.elapsed - 2.3).abs() < 1e-9);
}

#[test]
fn token_marking_with_a_cached_token_server_names_the_first_copy() {
    // A server answering every copy with the cached response (its token
    // included) names copy 0 although copy 1 was answered: the client cannot
    // tell, and the sample from the original contains the 2 s timer
    // (docs/decisions/coap-udp-choices.md, "Server", "FASOR+Token: the token a
    // duplicate's answer carries").
    let config = ServerConfig {
        cached_token: true,
        ..ServerConfig::default()
    };
    let (_, _, echo, ack) = lost_reply(&TOKEN, config);
    assert_eq!(echo, Some(0));
    assert!((ack.echo.unwrap().rtt - 2.3).abs() < 1e-9);
}

#[test]
fn token_of_the_last_copy_names_the_answered_copy() {
    // The original is lost: the server first receives copy 1 and answers it
    // with token 1, the last copy sent: its precise RTT is known.
    let mut c = client(&TOKEN, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    only_tx(&mut c); // lost
    c.handle_timeout(2 * SEC);
    let (_, copy) = only_tx(&mut c);
    let (reply, dup) = serve(&mut s, 2100 * MS, &copy).unwrap();
    assert!(!dup);
    events(&mut c);
    calls();
    c.handle_datagram(2300 * MS, SERVER, &reply);
    assert!(matches!(
        events(&mut c)[..],
        [ClientEvent::Response { echo: Some(1), .. }]
    ));
    let e = acks()[0].0.echo.unwrap();
    assert_eq!(e.ordinal, 1);
    assert!((e.rtt - 0.3).abs() < 1e-9);
}

#[test]
fn server_without_echo_gives_no_echo_but_a_confirmed_rexmit_cnt_reads_the_original() {
    let config = ServerConfig {
        echo_options: false,
        ..ServerConfig::default()
    };
    let (_, _, echo, ack) = lost_reply(&TC, config.clone());
    assert_eq!((echo, ack.echo), (None, None));
    // Rexmit-Cnt with support already confirmed: a response without the
    // option is read as the answer to the original (thesis §7.3), even from
    // a server that stopped echoing.
    let (_, _, echo, _) = lost_reply(&REXMIT, config);
    assert_eq!(echo, Some(0));
}

#[test]
fn nstart_queues_requests() {
    let mut c = client(&PLAIN, config(4));
    let mut s = server();
    let a = c.request(0, SERVER, &GET).unwrap();
    let b = c.request(0, SERVER, &GET).unwrap();
    let (t, bytes) = only_tx(&mut c);
    assert_eq!((t.exchange, t.mid), (Some(a), 100));
    assert_eq!(c.outstanding(SERVER), 1);
    assert_eq!(c.active(), 2);
    // A request to another peer is not held back.
    let other = c.request(0, 9, &GET).unwrap();
    assert_eq!(only_tx(&mut c).0.exchange, Some(other));
    let (reply, _) = serve(&mut s, 0, &bytes).unwrap();
    c.handle_datagram(SEC, SERVER, &reply);
    let (t, _) = only_tx(&mut c);
    assert_eq!((t.exchange, t.mid, t.ordinal), (Some(b), 101, 0));
    assert_eq!(
        c.poll_timeout(),
        Some(2 * SEC),
        "other's timer; b's is at 3 s"
    );
    let starts: Vec<Call> = calls()
        .into_iter()
        .filter(|c| matches!(c, Call::Start { .. }))
        .collect();
    assert_eq!(
        starts,
        vec![
            Call::Start {
                now: 0.0,
                outstanding: 0
            },
            Call::Start {
                now: 0.0,
                outstanding: 0
            },
            Call::Start {
                now: 1.0,
                outstanding: 0
            },
        ]
    );
}

#[test]
fn nstart_two_tells_the_algorithm_what_is_outstanding() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            nstart: 2,
            ..ClientConfig::default()
        },
    );
    for _ in 0..3 {
        c.request(0, SERVER, &GET).unwrap();
    }
    let t = tx(&mut c);
    assert_eq!(
        t.iter().map(|(t, _)| t.mid).collect::<Vec<_>>(),
        vec![100, 101]
    );
    assert_eq!(
        calls(),
        vec![
            Call::Start {
                now: 0.0,
                outstanding: 0
            },
            Call::Start {
                now: 0.0,
                outstanding: 1
            }
        ]
    );
    // An RST for the first frees a slot for the third.
    c.handle_datagram(SEC, SERVER, &[0x70, 0x00, 0x00, 100]);
    assert_eq!(only_tx(&mut c).0.mid, 102);
    let ev = events(&mut c);
    assert!(ev.iter().any(|e| matches!(
        e,
        ClientEvent::Failed {
            reason: FailReason::Reset,
            retransmissions: 0,
            ..
        }
    )));
    assert!(calls().contains(&Call::Failure { now: 1.0 }));
}

#[test]
fn reset_peer_resets_that_algorithm() {
    let mut c = client(&PLAIN, config(4));
    c.reset_peer(SERVER);
    assert!(calls().is_empty(), "no algorithm yet for that peer");
    c.request(0, SERVER, &GET).unwrap();
    c.request(0, 9, &GET).unwrap();
    calls();
    c.reset_peer(SERVER);
    assert_eq!(calls(), vec![Call::Reset]);
}

#[test]
fn message_ids_are_sequential_and_wrap() {
    let mut c = Client::new(
        ClientConfig::default(),
        (&PLAIN, AlgorithmParams::default()),
        Mix(1),
        65535,
    );
    for _ in 0..3 {
        c.request(0, SERVER, &GET).unwrap();
    }
    c.request(0, 1, &GET).unwrap();
    c.request(0, 2, &GET).unwrap();
    let mids: Vec<u16> = tx(&mut c).iter().map(|(t, _)| t.mid).collect();
    assert_eq!(mids, vec![65535, 2, 3]);
}

#[test]
fn separate_response_with_token() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 2,
            ..ClientConfig::default()
        },
    );
    let id = c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    let req = Message::decode(&req).unwrap();
    assert_eq!(req.token.len(), 2);
    // Empty ACK at 1 s: retransmission stops, the algorithm gets its sample.
    c.handle_datagram(SEC, SERVER, &[0x60, 0x00, 0x00, 100]);
    assert_eq!(
        c.outstanding(SERVER),
        0,
        "acknowledged: no longer outstanding"
    );
    assert_eq!(
        c.poll_timeout(),
        Some(SEC + 145 * SEC),
        "the response timeout"
    );
    let a = acks();
    assert_eq!(
        (a[0].0.elapsed, a[0].0.piggybacked, a[0].0.echo),
        (1.0, false, None)
    );
    // The separate response: a CON with the token and its own MID.
    let mut resp = Message::new(MessageType::Con, Code::CONTENT, 7000);
    resp.token = req.token.clone();
    resp.payload = b"late".to_vec();
    let resp = resp.encode().unwrap();
    c.handle_datagram(5 * SEC, SERVER, &resp);
    let (t, ack) = only_tx(&mut c);
    assert_eq!((t.exchange, t.mid), (None, 7000));
    assert_eq!(ack, [0x60, 0x00, 0x1B, 0x58]);
    let ev = events(&mut c);
    assert!(
        matches!(
            &ev[..],
            [_, ClientEvent::Response { exchange, retransmissions: 0, elapsed, echo: None, .. }] if *exchange == id && *elapsed == SEC
        ),
        "{ev:?}"
    );
    // Its retransmission is acknowledged again, not reported.
    c.handle_datagram(6 * SEC, SERVER, &resp);
    assert_eq!(only_tx(&mut c).1, [0x60, 0x00, 0x1B, 0x58]);
    assert!(events(&mut c).is_empty());
    // An unknown CON response is rejected with RST.
    let mut stray = Message::new(MessageType::Con, Code::CONTENT, 7001);
    stray.token = vec![1, 2, 3];
    c.handle_datagram(7 * SEC, SERVER, &stray.encode().unwrap());
    assert_eq!(only_tx(&mut c).1, [0x70, 0x00, 0x1B, 0x59]);
}

/// The last 16 acknowledged separate responses are acknowledged again when
/// retransmitted; the 17th-last is forgotten (RST).
#[test]
fn the_last_sixteen_separate_responses_are_remembered() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 2,
            ..ClientConfig::default()
        },
    );
    let mut responses = Vec::new();
    for k in 0..17u16 {
        let now = u64::from(k) * 10 * SEC;
        c.request(now, SERVER, &GET).unwrap();
        let (_, req) = only_tx(&mut c);
        let req = Message::decode(&req).unwrap();
        c.handle_datagram(
            now + SEC,
            SERVER,
            &[
                0x60,
                0x00,
                req.mid.to_be_bytes()[0],
                req.mid.to_be_bytes()[1],
            ],
        );
        let mut resp = Message::new(MessageType::Con, Code::CONTENT, 7000 + k);
        resp.token = req.token.clone();
        let resp = resp.encode().unwrap();
        c.handle_datagram(now + 2 * SEC, SERVER, &resp);
        assert_eq!(only_tx(&mut c).1[0], 0x60, "response {k} acknowledged");
        events(&mut c);
        responses.push(resp);
    }
    // Retransmissions: the first is forgotten, the 16 after it are known.
    c.handle_datagram(200 * SEC, SERVER, &responses[0]);
    assert_eq!(
        only_tx(&mut c).1,
        [0x70, 0x00, 0x1B, 0x58],
        "RST for MID 7000"
    );
    for (k, resp) in responses.iter().enumerate().skip(1) {
        c.handle_datagram(200 * SEC, SERVER, resp);
        let mid = (7000 + k as u16).to_be_bytes();
        assert_eq!(
            only_tx(&mut c).1,
            [0x60, 0x00, mid[0], mid[1]],
            "ACK for {k}"
        );
    }
    assert!(
        events(&mut c).is_empty(),
        "retransmissions are not reported"
    );
}

#[test]
fn separate_response_before_the_empty_ack() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 1,
            ..ClientConfig::default()
        },
    );
    c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    let mut resp = Message::new(MessageType::Non, Code::CONTENT, 9);
    resp.token = Message::decode(&req).unwrap().token;
    c.handle_datagram(SEC, SERVER, &resp.encode().unwrap());
    assert!(matches!(
        events(&mut c)[..],
        [_, ClientEvent::Response { .. }]
    ));
    assert!(!acks()[0].0.piggybacked);
    assert!(tx(&mut c).is_empty(), "a NON response is not acknowledged");
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn zero_length_tokens_match_a_single_waiting_exchange_only() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            nstart: 2,
            ..ClientConfig::default()
        },
    );
    let mut resp = Message::new(MessageType::Con, Code::CONTENT, 500);
    resp.payload = b"r".to_vec();
    let resp = resp.encode().unwrap();
    // One exchange awaits a separate response: accepted.
    c.request(0, SERVER, &GET).unwrap();
    tx(&mut c);
    c.handle_datagram(SEC, SERVER, &[0x60, 0x00, 0x00, 100]);
    c.handle_datagram(2 * SEC, SERVER, &resp);
    assert!(matches!(
        events(&mut c)[..],
        [_, ClientEvent::Response { .. }]
    ));
    assert_eq!(only_tx(&mut c).0.mid, 500);
    // Two await one: ambiguous, rejected.
    c.request(3 * SEC, SERVER, &GET).unwrap();
    c.request(3 * SEC, SERVER, &GET).unwrap();
    tx(&mut c);
    c.handle_datagram(4 * SEC, SERVER, &[0x60, 0x00, 0x00, 101]);
    c.handle_datagram(4 * SEC, SERVER, &[0x60, 0x00, 0x00, 102]);
    events(&mut c);
    let mut resp2 = Message::decode(&resp).unwrap();
    resp2.mid = 501;
    c.handle_datagram(5 * SEC, SERVER, &resp2.encode().unwrap());
    assert!(events(&mut c).is_empty());
    assert_eq!(only_tx(&mut c).1, [0x70, 0x00, 0x01, 0xF5]);
    assert_eq!(c.active(), 2);
    // Both give up after the response timeout.
    c.handle_timeout(4 * SEC + 145 * SEC);
    let failed = events(&mut c)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                ClientEvent::Failed {
                    reason: FailReason::Timeout,
                    ..
                }
            )
        })
        .count();
    assert_eq!(failed, 2);
    assert_eq!(c.active(), 0);
}

#[test]
fn non_request_and_response() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 4,
            ..ClientConfig::default()
        },
    );
    let mut s = server();
    let non = Request {
        confirmable: false,
        ..GET
    };
    let id = c.request(0, SERVER, &non).unwrap();
    let (_, bytes) = only_tx(&mut c);
    assert_eq!(bytes[0], 0x54, "NON, TKL 4");
    assert!(
        calls().is_empty(),
        "NON requests do not involve the algorithm"
    );
    let (reply, _) = serve(&mut s, 0, &bytes).unwrap();
    c.handle_datagram(SEC, SERVER, &reply);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::Response {
            exchange: id,
            peer: SERVER,
            code: Code::CONTENT,
            retransmissions: 0,
            elapsed: SEC,
            echo: None,
            body: None
        }]
    );
    // A NON without answer fails after the response timeout; no retransmission.
    let id = c.request(2 * SEC, SERVER, &non).unwrap();
    tx(&mut c);
    c.handle_timeout(100 * SEC);
    assert!(tx(&mut c).is_empty());
    c.handle_timeout(147 * SEC);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::Failed {
            exchange: id,
            peer: SERVER,
            retransmissions: 0,
            reason: FailReason::Timeout
        }]
    );
}

#[test]
fn request_encoding_and_limits() {
    let mut c = client(&PLAIN, config(4));
    let req = Request {
        method: Code::POST,
        path: "a/b?x=1&y",
        payload: b"hi",
        confirmable: true,
    };
    c.request(0, SERVER, &req).unwrap();
    let m = Message::decode(&only_tx(&mut c).1).unwrap();
    assert_eq!(
        m.options,
        vec![
            (option::URI_PATH, b"a".to_vec()),
            (option::URI_PATH, b"b".to_vec()),
            (option::URI_QUERY, b"x=1".to_vec()),
            (option::URI_QUERY, b"y".to_vec()),
        ]
    );
    assert_eq!((m.code, m.payload.as_slice()), (Code::POST, &b"hi"[..]));
    let long = "x".repeat(256);
    assert_eq!(
        c.request(0, SERVER, &Request { path: &long, ..GET }),
        Err(ClientError::OptionTooLong)
    );
    let big = vec![0u8; 1200];
    assert_eq!(
        c.request(
            0,
            SERVER,
            &Request {
                payload: &big,
                ..GET
            }
        ),
        Err(ClientError::TooLarge)
    );
    // Refused requests use no Message ID.
    c.request(0, 3, &GET).unwrap();
    assert_eq!(only_tx(&mut c).0.mid, 101);
}

#[test]
fn small_buffer_keeps_the_transmission_pending() {
    let mut c = client(&PLAIN, config(4));
    c.request(0, SERVER, &GET).unwrap();
    let mut small = [0u8; 8];
    assert!(c.poll_transmit(&mut small).is_none());
    assert_eq!(only_tx(&mut c).0.mid, 100);
}

#[test]
fn client_rejects_requests_and_malformed_confirmables() {
    let mut c = client(&PLAIN, config(4));
    // A CON request (we are no server) and a ping: RST.
    c.handle_datagram(0, SERVER, &[0x40, 0x01, 0x00, 0x05]);
    c.handle_datagram(0, SERVER, &[0x40, 0x00, 0x00, 0x06]);
    // Malformed CON: RST; malformed NON: nothing.
    c.handle_datagram(0, SERVER, &[0x40, 0x45, 0x00, 0x07, 0xFF]);
    c.handle_datagram(0, SERVER, &[0x50, 0x45, 0x00, 0x08, 0xFF]);
    let t: Vec<Vec<u8>> = tx(&mut c).into_iter().map(|(_, b)| b).collect();
    assert_eq!(
        t,
        vec![
            vec![0x70, 0, 0, 5],
            vec![0x70, 0, 0, 6],
            vec![0x70, 0, 0, 7]
        ]
    );
    assert!(events(&mut c).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A lossy, reordering path between the client and the real server: every
    /// request ends exactly once, by a response or a failure, and nothing
    /// panics. Acknowledgement samples are never produced by duplicates.
    #[test]
    fn lossy_loop(
        losses in proptest::collection::vec(any::<bool>(), 256),
        delays in proptest::collection::vec(10u64..3000, 256),
        nstart in 1usize..3,
        marking in 0usize..5,
        requests in 1usize..8,
    ) {
        let info: &'static AlgorithmInfo = [&PLAIN, &TC, &REXMIT, &PROBE, &TOKEN][marking];
        let mut c = client(info, ClientConfig { max_retransmit: 3, nstart, ..ClientConfig::default() });
        let mut s = server();
        // In flight: (arrival, to_server, bytes).
        let mut flight: Vec<(u64, bool, Vec<u8>)> = Vec::new();
        let mut k = 0usize;
        let mut now = 0u64;
        for _ in 0..requests {
            c.request(0, SERVER, &GET).unwrap();
        }
        let (mut responses, mut failures, mut dups) = (0, 0, 0);
        for _ in 0..2000 {
            for (_, bytes) in tx(&mut c) {
                if !losses[k % 256] {
                    flight.push((now + delays[k % 256] * MS, true, bytes));
                }
                k += 1;
            }
            for e in events(&mut c) {
                match e {
                    ClientEvent::Response { .. } => responses += 1,
                    ClientEvent::Failed { .. } => failures += 1,
                    ClientEvent::DuplicateResponse { .. } => dups += 1,
                    _ => {}
                }
            }
            // Next event: earliest arrival or timer.
            let next_arrival = flight.iter().map(|f| f.0).min();
            let next = match (next_arrival, c.poll_timeout()) {
                (Some(a), Some(t)) => a.min(t),
                (a, t) => match a.or(t) { Some(x) => x, None => break },
            };
            now = next;
            if next_arrival == Some(next) {
                let i = flight.iter().position(|f| f.0 == next).unwrap();
                let (_, to_server, bytes) = flight.swap_remove(i);
                if to_server {
                    if let Some((reply, _)) = serve(&mut s, now, &bytes) {
                        if !losses[k % 256] {
                            flight.push((now + delays[k % 256] * MS, false, reply));
                        }
                        k += 1;
                    }
                } else {
                    c.handle_datagram(now, SERVER, &bytes);
                }
            } else {
                c.handle_timeout(now);
            }
        }
        prop_assert_eq!(responses + failures, requests);
        prop_assert_eq!(c.active(), 0);
        prop_assert_eq!(acks().len(), responses, "one sample per acknowledged exchange");
        prop_assert!(dups <= s.stats().duplicates as usize);
    }

    #[test]
    fn garbage_to_the_client_never_panics(
        datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..32), 1..64),
        token_len in 0u8..3,
    ) {
        let mut c = client(&TOKEN, ClientConfig { token_len, nstart: 2, ..ClientConfig::default() });
        c.request(0, SERVER, &GET).unwrap();
        c.request(0, SERVER, &GET).unwrap();
        for (i, d) in datagrams.iter().enumerate() {
            let mut d = d.clone();
            if d.len() >= 4 && i % 2 == 0 {
                d[0] = 0x40 | (d[0] & 0x3F);
            }
            c.handle_datagram(i as u64 * MS, SERVER, &d);
            tx(&mut c);
        }
        c.handle_timeout(1000 * SEC);
        events(&mut c);
    }
}

/// The piggybacked response to `req` with its token replaced by `token`.
fn reply_with_token(
    s: &mut Server<u32, FixedPayload>,
    now: u64,
    req: &[u8],
    token: &[u8],
) -> Vec<u8> {
    let (reply, _) = serve(s, now, req).unwrap();
    let mut m = Message::decode(&reply).unwrap();
    m.token = token.to_vec();
    m.encode().unwrap()
}

/// RFC 7252 §5.3.2: a piggybacked response matches by Message ID *and*
/// token. One with the right Message ID and a wrong token acknowledges the
/// CON (retransmission stops) but does not answer the request; it is
/// counted, and the exchange then waits for its response like after an Empty
/// ACK.
#[test]
fn piggybacked_response_with_a_wrong_token_is_not_the_answer() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 2,
            ..ClientConfig::default()
        },
    );
    let mut s = server();
    let id = c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    let token = Message::decode(&req).unwrap().token;
    events(&mut c);
    let wrong = reply_with_token(&mut s, 0, &req, &[token[0], token[1] ^ 0xFF]);
    c.handle_datagram(SEC, SERVER, &wrong);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::MismatchedResponse {
            exchange: id,
            peer: SERVER,
            mid: 100
        }]
    );
    // Acknowledged: no retransmission, NSTART slot free, the algorithm got
    // the acknowledgement as from an Empty ACK (no echo, not piggybacked).
    assert_eq!(c.outstanding(SERVER), 0);
    assert_eq!(c.poll_timeout(), Some(SEC + 145 * SEC));
    c.handle_timeout(10 * SEC);
    assert!(tx(&mut c).is_empty());
    let a = acks();
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].0.piggybacked, a[0].0.echo), (false, None));
    // Its duplicate is a duplicate acknowledgement, still not the answer.
    c.handle_datagram(11 * SEC, SERVER, &wrong);
    assert_eq!(
        events(&mut c),
        vec![ClientEvent::DuplicateResponse {
            peer: SERVER,
            mid: 100
        }]
    );
    // The response that does carry the token (here a separate NON) answers.
    let mut resp = Message::new(MessageType::Non, Code::CONTENT, 7);
    resp.token = token.clone();
    c.handle_datagram(12 * SEC, SERVER, &resp.encode().unwrap());
    let ev = events(&mut c);
    assert!(
        matches!(&ev[..], [ClientEvent::Response { exchange, .. }] if *exchange == id),
        "{ev:?}"
    );
    assert_eq!(c.active(), 0);
}

/// Zero-length tokens (the testbed's): a piggybacked response carrying a
/// token is not theirs; with the right (empty) token it is.
#[test]
fn piggybacked_response_with_a_token_to_a_tokenless_request() {
    let mut c = client(&PLAIN, config(4));
    let mut s = server();
    c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    events(&mut c);
    c.handle_datagram(SEC, SERVER, &reply_with_token(&mut s, 0, &req, &[9]));
    assert!(matches!(
        events(&mut c)[..],
        [ClientEvent::MismatchedResponse { mid: 100, .. }]
    ));
    let mut c = client(&PLAIN, config(4));
    c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    events(&mut c);
    c.handle_datagram(SEC, SERVER, &reply_with_token(&mut s, 0, &req, &[]));
    assert!(matches!(events(&mut c)[..], [ClientEvent::Response { .. }]));
}

/// FASOR+Token: an exchange has one token per transmission, and a server
/// answering a duplicate from its cache echoes the token of the copy it
/// first answered, so any token the exchange sent matches; an ordinal never
/// sent does not.
#[test]
fn token_marking_matches_every_token_the_exchange_sent() {
    for (token, answers) in [(0u8, true), (1, true), (2, false), (7, false)] {
        let mut c = client(&TOKEN, config(4));
        let mut s = server();
        c.request(0, SERVER, &GET).unwrap();
        let (_, original) = only_tx(&mut c);
        c.handle_timeout(2 * SEC);
        let (t, _) = only_tx(&mut c);
        assert_eq!(t.ordinal, 1);
        events(&mut c);
        let reply = reply_with_token(&mut s, 0, &original, &[token]);
        c.handle_datagram(3 * SEC, SERVER, &reply);
        let ev = events(&mut c);
        if answers {
            assert!(
                matches!(ev[..], [ClientEvent::Response { .. }]),
                "{token}: {ev:?}"
            );
        } else {
            assert!(
                matches!(ev[..], [ClientEvent::MismatchedResponse { .. }]),
                "{token}: {ev:?}"
            );
        }
    }
}

/// A FASOR+Token client whose responses are sometimes lost must not stall:
/// here a path of fixed 0.33 s each way loses the first answer of every
/// third exchange. The server answers the retransmission with its own token,
/// so the sample is that copy's 0.66 s. (With the cached token, `now - t_0`
/// contained the timer itself, and each further lost answer ratcheted
/// FastRTO up to the 60 s cap: `docs/calibration.md`, "FASOR+Token on lossy
/// links".)
#[test]
fn lost_responses_do_not_stall_a_fasor_token_client() {
    let info = registry::find("fasor-token").unwrap();
    let mut c = client(info, config(20));
    let mut s = server();
    let one_way = 330 * MS;
    let mut now = 0u64;
    let mut largest_timer = 0f64;
    for n in 0..60 {
        c.request(now, SERVER, &GET).unwrap();
        let mut answered = false;
        let mut copies = 0;
        while !answered {
            let (t, bytes) = only_tx(&mut c);
            copies += 1;
            let (reply, _) = serve(&mut s, now + one_way, &bytes).unwrap();
            let lost = n % 3 == 1 && t.ordinal == 0;
            let deadline = c.poll_timeout().unwrap();
            if !lost && now + 2 * one_way < deadline {
                now += 2 * one_way;
                c.handle_datagram(now, SERVER, &reply);
            } else {
                now = deadline;
                c.handle_timeout(now);
            }
            for e in events(&mut c) {
                match e {
                    ClientEvent::TimerArmed { timer, .. } => {
                        largest_timer = largest_timer.max(timer)
                    }
                    ClientEvent::Response { .. } => answered = true,
                    ClientEvent::Failed { .. } => panic!("exchange {n} failed"),
                    _ => {}
                }
            }
        }
        assert!(copies <= 3, "exchange {n}: {copies} copies");
    }
    // Unambiguous samples are 0.66 s: FastRTO stays near 1 s, and a lost
    // answer costs one timer. The ratchet reached 60 s timers here.
    assert!(largest_timer < 5.0, "largest timer {largest_timer} s");
    assert!(now < 140 * SEC, "60 exchanges took {} s", now / SEC);
}

/// Clients sharing one `ClientSettings` behave as clients each built with a
/// copy of their own (same datagrams, same events, through retransmissions
/// to MAX_RETRANSMIT); settings whose parameters the algorithm rejects are
/// refused.
#[test]
fn clients_sharing_settings_behave_as_own_copies() {
    let info = registry::find("cocoa").unwrap();
    let config = ClientConfig {
        max_retransmit: 2,
        token_len: 2,
        ..ClientConfig::default()
    };
    let shared = ClientSettings::new(config.clone(), (info, AlgorithmParams::default())).unwrap();
    for (seed, mid) in [(7, 100), (9, 65535)] {
        let mut a = Client::with_settings(Arc::clone(&shared), Mix(seed), mid);
        let mut b = Client::new(
            config.clone(),
            (info, AlgorithmParams::default()),
            Mix(seed),
            mid,
        );
        assert_eq!(a.config(), b.config());
        let mut now = 0;
        let mut sent = 0;
        for _ in 0..2 {
            a.request(now, SERVER, &GET).unwrap();
            b.request(now, SERVER, &GET).unwrap();
            // Nothing answers: the first transmission and two retransmissions.
            while let Some(at) = a.poll_timeout() {
                let (ta, tb) = (tx(&mut a), tx(&mut b));
                sent += ta.len();
                assert_eq!(ta, tb);
                assert_eq!(events(&mut a), events(&mut b));
                assert_eq!(Some(at), b.poll_timeout());
                now = at;
                a.handle_timeout(now);
                b.handle_timeout(now);
            }
            assert_eq!(events(&mut a), events(&mut b));
            assert_eq!(b.poll_timeout(), None);
        }
        assert_eq!(sent, 2 * 3, "two exchanges of three transmissions");
    }
    assert_eq!(Arc::strong_count(&shared), 1, "the clients are gone");
    let bad = AlgorithmParams {
        cap: Some(-1.0),
        ..AlgorithmParams::default()
    };
    let err = ClientSettings::new(config, (registry::find("default").unwrap(), bad)).err();
    assert_eq!(err.map(|e| e.field), Some("cap"));
}

/// A 4.01 Unauthorized answering `req` (ACK to a CON, else NON), with an
/// Echo option of `echo` if given.
fn challenge(req: &[u8], echo: Option<&[u8]>) -> Vec<u8> {
    let r = Message::decode(req).unwrap();
    let mtype = if r.mtype == MessageType::Con {
        MessageType::Ack
    } else {
        MessageType::Non
    };
    let mid = if mtype == MessageType::Ack {
        r.mid
    } else {
        0x7000
    };
    let mut m = Message::new(mtype, Code::UNAUTHORIZED, mid);
    m.token = r.token;
    if let Some(e) = echo {
        m.options.push((option::ECHO, e.to_vec()));
    }
    m.encode().unwrap()
}

/// RFC 9175 §2.4: a piggybacked 4.01 with an Echo option makes the client
/// send the request again, once, with the Echo value, a new Message ID and
/// the same token, after any Uri-Path/Uri-Query and before the marking; the
/// server's answer to that copy is the exchange's response. The retry is
/// reported and its timers start over; the 4.01 acknowledged the first
/// request for the algorithm.
#[test]
fn an_echo_challenge_is_answered_once_with_the_echo_value() {
    for (info, marking_option) in [(&PLAIN, None), (&TC, Some(option::TC))] {
        let mut c = client(
            info,
            ClientConfig {
                token_len: 2,
                ..config(4)
            },
        );
        let req = Request {
            path: "a/b?x=1",
            ..GET
        };
        let id = c.request(0, SERVER, &req).unwrap();
        let (t, first) = only_tx(&mut c);
        assert_eq!(t.mid, 100);
        events(&mut c);
        c.handle_datagram(300 * MS, SERVER, &challenge(&first, Some(b"abcdefgh")));
        let ev = events(&mut c);
        assert_eq!(
            ev[0],
            ClientEvent::EchoRetry {
                exchange: id,
                peer: SERVER,
                mid: 101
            },
            "{ev:?}"
        );
        assert!(
            matches!(ev[1], ClientEvent::TimerArmed { ordinal: 0, .. }),
            "{ev:?}"
        );
        assert_eq!(ev.len(), 2, "{ev:?}");
        let acked = acks();
        assert_eq!(acked.len(), 1, "the 4.01 acknowledged the first request");
        let (t, second) = only_tx(&mut c);
        assert_eq!((t.exchange, t.mid, t.ordinal), (Some(id), 101, 0));
        let (a, b) = (
            Message::decode(&first).unwrap(),
            Message::decode(&second).unwrap(),
        );
        assert_eq!((b.mtype, b.code, b.mid), (MessageType::Con, Code::GET, 101));
        assert_eq!(b.token, a.token);
        let numbers: Vec<u16> = b.options.iter().map(|(n, _)| *n).collect();
        let mut expected = vec![option::URI_PATH, option::URI_PATH, option::URI_QUERY];
        expected.push(option::ECHO);
        expected.extend(marking_option);
        assert_eq!(numbers, expected, "{b:?}");
        assert_eq!(b.options[3].1, b"abcdefgh");
        assert_eq!(b.options[..3], a.options[..3]);
        // a retransmission of the retry is the same bytes
        c.handle_timeout(c.poll_timeout().unwrap());
        let (t, again) = only_tx(&mut c);
        assert_eq!((t.mid, t.ordinal), (101, 1));
        if marking_option.is_none() {
            assert_eq!(again, second);
        }
        // a late duplicate of the 4.01 is a duplicate, not a second challenge
        c.handle_datagram(3 * SEC, SERVER, &challenge(&first, Some(b"abcdefgh")));
        assert_eq!(
            events(&mut c)
                .into_iter()
                .filter(|e| !matches!(
                    e,
                    ClientEvent::TimerArmed { .. } | ClientEvent::TimerExpired { .. }
                ))
                .collect::<Vec<_>>(),
            vec![ClientEvent::DuplicateResponse {
                peer: SERVER,
                mid: 100
            }]
        );
        let mut s = server();
        let (reply, _) = serve(&mut s, 4 * SEC, &again).unwrap();
        c.handle_datagram(4 * SEC, SERVER, &reply);
        let ev = events(&mut c);
        assert!(
            matches!(ev[..], [ClientEvent::Response { exchange, code: Code::CONTENT, .. }] if exchange == id),
            "{ev:?}"
        );
        assert_eq!(c.active(), 0);
    }
}

/// Only once: a second 4.01 with Echo is the exchange's response. A 4.01
/// without Echo, or with an empty or over-long value, is a response as
/// before.
#[test]
fn a_second_challenge_or_an_unusable_echo_ends_the_exchange() {
    let mut c = client(&PLAIN, config(4));
    let id = c.request(0, SERVER, &GET).unwrap();
    let (_, first) = only_tx(&mut c);
    c.handle_datagram(MS, SERVER, &challenge(&first, Some(b"e1")));
    let (_, second) = only_tx(&mut c);
    events(&mut c);
    c.handle_datagram(2 * MS, SERVER, &challenge(&second, Some(b"e2")));
    let ev = events(&mut c);
    assert!(
        matches!(ev[..], [ClientEvent::Response { exchange, code: Code::UNAUTHORIZED, .. }] if exchange == id),
        "{ev:?}"
    );
    assert!(tx(&mut c).is_empty());
    let long = [7u8; 41];
    for echo in [None, Some(&b""[..]), Some(&long[..])] {
        let id = c.request(0, SERVER, &GET).unwrap();
        let (_, req) = only_tx(&mut c);
        events(&mut c);
        c.handle_datagram(MS, SERVER, &challenge(&req, echo));
        let ev = events(&mut c);
        assert!(
            matches!(ev[..], [ClientEvent::Response { exchange, code: Code::UNAUTHORIZED, .. }] if exchange == id),
            "{echo:?}: {ev:?}"
        );
        assert!(tx(&mut c).is_empty());
    }
    // a request that would no longer fit with the Echo option is not retried
    let mut c = client(
        &PLAIN,
        ClientConfig {
            max_message_size: 60,
            ..config(4)
        },
    );
    let payload = [b'p'; 40];
    let big = Request {
        payload: &payload,
        ..GET
    };
    let id = c.request(0, SERVER, &big).unwrap();
    let (_, req) = only_tx(&mut c);
    events(&mut c);
    c.handle_datagram(MS, SERVER, &challenge(&req, Some(&[1; 8])));
    let ev = events(&mut c);
    assert!(
        matches!(ev[..], [ClientEvent::Response { exchange, code: Code::UNAUTHORIZED, .. }] if exchange == id),
        "{ev:?}"
    );
}

/// A Non-confirmable request answered by a NON 4.01 with Echo is sent
/// again (NON, new Message ID) with the Echo value; a challenge arriving as
/// a separate response after an Empty ACK is answered the same way, the
/// separate CON 4.01 acknowledged.
#[test]
fn echo_challenges_of_non_requests_and_separate_responses_are_answered() {
    let mut c = client(
        &PLAIN,
        ClientConfig {
            token_len: 4,
            nstart: 2,
            ..config(4)
        },
    );
    let non = Request {
        confirmable: false,
        ..GET
    };
    let id = c.request(0, SERVER, &non).unwrap();
    let (_, req) = only_tx(&mut c);
    c.handle_datagram(MS, SERVER, &challenge(&req, Some(b"nn")));
    let (t, again) = only_tx(&mut c);
    let m = Message::decode(&again).unwrap();
    assert_eq!(
        (m.mtype, t.mid, t.exchange),
        (MessageType::Non, 101, Some(id))
    );
    assert!(m.options.contains(&(option::ECHO, b"nn".to_vec())));
    assert!(events(&mut c)
        .iter()
        .any(|e| matches!(e, ClientEvent::EchoRetry { mid: 101, .. })));
    // CON, Empty ACK, then a CON 4.01 with Echo as the separate response
    let id = c.request(0, SERVER, &GET).unwrap();
    let (_, req) = only_tx(&mut c);
    let r = Message::decode(&req).unwrap();
    let empty = Message::new(MessageType::Ack, Code::EMPTY, r.mid);
    c.handle_datagram(MS, SERVER, &empty.encode().unwrap());
    let mut sep = Message::new(MessageType::Con, Code::UNAUTHORIZED, 0x5555);
    sep.token = r.token.clone();
    sep.options.push((option::ECHO, b"ss".to_vec()));
    c.handle_datagram(2 * MS, SERVER, &sep.encode().unwrap());
    let out = tx(&mut c);
    assert_eq!(out.len(), 2, "{out:?}");
    let ack = Message::decode(&out[0].1).unwrap();
    assert_eq!((ack.mtype, ack.mid), (MessageType::Ack, 0x5555));
    let retry = Message::decode(&out[1].1).unwrap();
    assert_eq!(out[1].0.exchange, Some(id));
    assert_eq!((retry.mtype, retry.token), (MessageType::Con, r.token));
    assert!(retry.options.contains(&(option::ECHO, b"ss".to_vec())));
}
