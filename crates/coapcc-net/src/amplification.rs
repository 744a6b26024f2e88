//! The server's amplification bound (RFC 7252 §11.3, RFC 9175 §2.4): a
//! response larger than [`AmplificationLimit::factor`] times its request goes
//! only to a client that has shown it receives what is sent to its address —
//! by returning an Echo option value the server gave it — or to a loopback
//! address (which no host but this one can put as a source; IPv4 loopback
//! seen on a dual-stack socket as `::ffff:127.0.0.1` too). Anyone else gets
//! a small 4.01 Unauthorized carrying a fresh Echo value; a client that
//! repeats the request with that Echo option gets the full response.
//!
//! Echo values are stateless: the first 8 bytes of a keyed hash (SipHash with
//! this process's random keys) of the client's address and the current
//! [`AmplificationLimit::ECHO_WINDOW`]; a value from the current or the
//! previous window is accepted. The server keeps no per-client state for it.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;

use coapcc_proto::message::{Code, MessageType, MessageView, MessageWriter};

/// The Echo option (RFC 9175 §2.2): elective, safe to forward.
pub use coapcc_proto::message::option::ECHO;

/// How the server bounds amplification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmplificationLimit {
    /// A response to an unverified source is at most this many times its
    /// request's size; 0 turns the bound off.
    pub factor: usize,
    /// Loopback sources are verified (they cannot be spoofed from another host).
    pub exempt_loopback: bool,
}

impl AmplificationLimit {
    /// How long an Echo value stays valid: between one and two windows.
    pub const ECHO_WINDOW: u64 = 60;
}

impl Default for AmplificationLimit {
    /// Factor 3 (RFC 9175 §2.4), loopback exempt.
    fn default() -> Self {
        AmplificationLimit {
            factor: 3,
            exempt_loopback: true,
        }
    }
}

/// Whether `from` is a loopback address, IPv4 loopback mapped into IPv6
/// (`::ffff:127.0.0.0/104`, how a dual-stack socket sees it) included.
pub fn is_loopback(from: SocketAddr) -> bool {
    from.ip().to_canonical().is_loopback()
}

/// What the guard did with a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Send the reply as it is (`len` bytes).
    Send(usize),
    /// The reply was too large: send the 4.01 with an Echo option now in the
    /// buffer (`len` bytes) instead.
    Challenge(usize),
    /// Too large, and even a 4.01 would exceed the bound: send nothing.
    Drop,
}

/// Checks replies against an [`AmplificationLimit`].
#[derive(Debug)]
pub struct Guard {
    limit: AmplificationLimit,
    keys: RandomState,
}

impl Guard {
    /// A guard with fresh random keys.
    pub fn new(limit: AmplificationLimit) -> Self {
        Guard {
            limit,
            keys: RandomState::new(),
        }
    }

    /// The Echo value for `from` in window `window`.
    pub fn echo_value(&self, from: SocketAddr, window: u64) -> [u8; 8] {
        let mut h = self.keys.build_hasher();
        h.write(from.to_string().as_bytes());
        h.write_u64(window);
        h.finish().to_be_bytes()
    }

    /// Whether `request` from `from` carries an Echo value of the current or
    /// the previous window (`now_s`: seconds on any monotonic clock).
    fn echoed(&self, from: SocketAddr, request: &[u8], now_s: u64) -> bool {
        let Ok(view) = MessageView::decode(request) else {
            return false;
        };
        let Some(value) = view.option(ECHO) else {
            return false;
        };
        let w = now_s / AmplificationLimit::ECHO_WINDOW;
        [w, w.saturating_sub(1)]
            .iter()
            .any(|&w| value == self.echo_value(from, w))
    }

    /// Decides about the `len`-byte reply in `tx` to `request` from `from`;
    /// may rewrite `tx` into a 4.01 challenge.
    pub fn check(
        &self,
        from: SocketAddr,
        request: &[u8],
        tx: &mut [u8],
        len: usize,
        now_s: u64,
    ) -> Verdict {
        let limit = self.limit.factor.saturating_mul(request.len());
        if self.limit.factor == 0
            || len <= limit
            || (self.limit.exempt_loopback && is_loopback(from))
            || self.echoed(from, request, now_s)
        {
            return Verdict::Send(len);
        }
        let (Ok(req), Some(&first)) = (MessageView::decode(request), tx.first()) else {
            return Verdict::Drop;
        };
        // the reply's own type and Message ID: an ACK to a CON, else a NON
        let mtype = MessageType::from_bits((first >> 4) & 0x3);
        let mid = u16::from_be_bytes([tx[2], tx[3]]);
        let echo = self.echo_value(from, now_s / AmplificationLimit::ECHO_WINDOW);
        let written =
            MessageWriter::new(tx, mtype, Code::UNAUTHORIZED, mid, req.token).and_then(|mut w| {
                w.option(ECHO, &echo)?;
                Ok(w.len())
            });
        match written {
            Ok(n) if n <= limit => Verdict::Challenge(n),
            _ => Verdict::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_proto::message::option;

    fn request(echo: Option<&[u8]>) -> Vec<u8> {
        let mut buf = [0u8; 64];
        let mut w =
            MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 7, &[1, 2, 3, 4]).unwrap();
        w.option(option::URI_PATH, b"large").unwrap();
        if let Some(e) = echo {
            w.option(ECHO, e).unwrap();
        }
        w.bytes().to_vec()
    }

    fn reply(len: usize) -> Vec<u8> {
        let mut tx = vec![0u8; 1152];
        let w = MessageWriter::new(&mut tx, MessageType::Ack, Code::CONTENT, 7, &[1, 2, 3, 4])
            .unwrap()
            .len();
        assert!(len >= w);
        tx
    }

    #[test]
    fn bounds_replies_of_unverified_sources_and_accepts_fresh_echoes() {
        let remote: SocketAddr = "192.0.2.1:5683".parse().unwrap();
        let g = Guard::new(AmplificationLimit::default());
        let req = request(None);
        let limit = 3 * req.len();
        let mut tx = reply(limit);
        assert_eq!(
            g.check(remote, &req, &mut tx, limit, 0),
            Verdict::Send(limit)
        );
        let Verdict::Challenge(n) = g.check(remote, &req, &mut tx, limit + 1, 0) else {
            panic!("a challenge")
        };
        assert!(n <= limit);
        let v = MessageView::decode(&tx[..n]).unwrap();
        assert_eq!(
            (v.code, v.mid, v.token),
            (Code::UNAUTHORIZED, 7, &[1, 2, 3, 4][..])
        );
        assert_eq!(v.mtype, MessageType::Ack);
        let echo = v.option(ECHO).unwrap().to_vec();
        let with = request(Some(&echo));
        let w = AmplificationLimit::ECHO_WINDOW;
        let mut tx = reply(1000);
        // valid in its window and the next, not after
        assert_eq!(
            g.check(remote, &with, &mut tx, 1000, 5),
            Verdict::Send(1000)
        );
        assert_eq!(
            g.check(remote, &with, &mut tx, 1000, w + 5),
            Verdict::Send(1000)
        );
        assert!(matches!(
            g.check(remote, &with, &mut tx, 1000, 2 * w + 5),
            Verdict::Challenge(_)
        ));
        // not valid for another address
        let other: SocketAddr = "192.0.2.2:5683".parse().unwrap();
        assert!(matches!(
            g.check(other, &with, &mut tx, 1000, 5),
            Verdict::Challenge(_)
        ));
        // a request too small for even a 4.01 gets nothing
        let tiny = [0x40, 0x01, 0, 9];
        let mut tx = reply(100);
        assert_eq!(g.check(remote, &tiny, &mut tx, 100, 0), Verdict::Drop);
        // loopback is exempt by default, not when told otherwise; factor 0 is off
        let lo: SocketAddr = "127.0.0.1:5683".parse().unwrap();
        assert_eq!(g.check(lo, &req, &mut tx, 1000, 0), Verdict::Send(1000));
        let strict = Guard::new(AmplificationLimit {
            factor: 3,
            exempt_loopback: false,
        });
        assert!(matches!(
            strict.check(lo, &req, &mut tx, 1000, 0),
            Verdict::Challenge(_)
        ));
        // IPv4 loopback on a dual-stack socket is still loopback; other
        // mapped addresses are not
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:5683".parse().unwrap();
        assert!(is_loopback(mapped) && is_loopback("[::ffff:127.3.2.1]:1".parse().unwrap()));
        assert_eq!(g.check(mapped, &req, &mut tx, 1000, 0), Verdict::Send(1000));
        let mapped_remote: SocketAddr = "[::ffff:192.0.2.1]:5683".parse().unwrap();
        assert!(!is_loopback(mapped_remote));
        assert!(matches!(
            g.check(mapped_remote, &req, &mut tx, 1000, 0),
            Verdict::Challenge(_)
        ));
        assert!(matches!(
            strict.check(mapped, &req, &mut tx, 1000, 0),
            Verdict::Challenge(_)
        ));
        let off = Guard::new(AmplificationLimit {
            factor: 0,
            exempt_loopback: false,
        });
        assert_eq!(
            off.check(remote, &req, &mut tx, 1000, 0),
            Verdict::Send(1000)
        );
    }
}
