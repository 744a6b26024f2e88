//! An algorithm arming a timer no deadline can hold (NaN, negative, zero,
//! infinite, 10³⁰ s) is refused where the timer is armed, in the client
//! and in the subject, with a message naming the algorithm, the method and
//! the value and the time: the fault is raised (`coapcc_rto::fault`) for
//! the run's boundary to catch.

use coapcc_proto::client::{Client, ClientConfig, Request};
use coapcc_proto::message::{option, Code, Message, MessageType, MessageView};
use coapcc_proto::observe::{ConfirmRule, Subject, SubjectConfig};
use coapcc_proto::Nanos;
use coapcc_rto::registry::{AlgorithmInfo, BoxedAlgorithm, NewAlgorithm, Registry};
use coapcc_rto::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, Random};

const S: Nanos = 1_000_000_000;

/// Arms `first` at `start` and `next` at every `expire`.
struct Arms {
    first: f64,
    next: f64,
}

impl CongestionControl for Arms {
    fn start(&mut self, _now: f64, _outstanding: usize, _rng: &mut dyn Random) -> ExchangeTimer {
        ExchangeTimer {
            initial: self.first,
            current: self.first,
            ..ExchangeTimer::default()
        }
    }
    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions += 1;
        ex.current = self.next;
    }
    fn on_ack(&mut self, _ex: &ExchangeTimer, _ack: &Ack) {}
    fn reset(&mut self) {}
}

struct Half;
impl Random for Half {
    fn uniform(&mut self) -> f64 {
        0.5
    }
}

/// The registry entry of [`Arms`] under the name `arms`.
fn arms(first: f64, next: f64) -> &'static AlgorithmInfo {
    let mut r = Registry::builtin();
    r.register(NewAlgorithm::new("arms", move |_: &AlgorithmParams| {
        Ok(Box::new(Arms { first, next }) as BoxedAlgorithm)
    }))
    .unwrap()
}

/// The fault `f` raised, as its message, if it raised one.
fn fault_of(f: impl FnOnce()) -> Option<String> {
    coapcc_rto::fault::catch(f).err().map(|e| e.to_string())
}

fn expected(method: &str, at: &str, value: &str) -> Option<String> {
    Some(format!(
        "algorithm `arms`: `{method}` at t = {at} s of the run: armed a timer of {value} s; \
         a timer must be a number of seconds greater than 0 and at most 1.8e10"
    ))
}

const BAD: [(f64, &str); 6] = [
    (f64::NAN, "NaN"),
    (-1.0, "-1.0"),
    (0.0, "0.0"),
    (f64::INFINITY, "inf"),
    (1e30, "1e30"),
    (1.9e10, "19000000000.0"),
];

const GET: Request<'static> = Request {
    method: Code::GET,
    path: "/sense",
    payload: &[],
    confirmable: true,
};

/// A client running `info`'s algorithm.
fn client(info: &'static AlgorithmInfo) -> Client<u32, Half> {
    Client::new(
        ClientConfig::default(),
        (info, AlgorithmParams::default()),
        Half,
        1,
    )
}

#[test]
fn the_client_refuses_a_bad_first_or_backed_off_timer() {
    for (bad, shown) in BAD {
        let mut c = client(arms(bad, 2.0));
        let msg = fault_of(|| {
            c.request(0, 9, &GET).unwrap();
        });
        assert_eq!(msg, expected("start", "0.000000", shown));

        let mut c = client(arms(2.0, bad));
        c.request(0, 9, &GET).unwrap();
        assert_eq!(c.poll_timeout(), Some(2 * S));
        let msg = fault_of(|| c.handle_timeout(2 * S));
        assert_eq!(msg, expected("expire", "2.000000", shown));
    }
}

#[test]
fn the_largest_timer_is_accepted() {
    let mut c = client(arms(1.8e10, 1.8e10));
    c.request(0, 9, &GET).unwrap();
    assert_eq!(c.poll_timeout(), Some(18_000_000_000 * S));
}

/// A subject whose every notification is Confirmable, with `peer` 1
/// observing it.
fn subject(info: &'static AlgorithmInfo) -> Subject<u32, Half> {
    let config = SubjectConfig {
        confirm: ConfirmRule {
            every: 1,
            ..ConfirmRule::default()
        },
        ..SubjectConfig::default()
    };
    let mut s = Subject::new(config, (info, AlgorithmParams::default()), Half, 1).unwrap();
    let mut m = Message::new(MessageType::Con, Code::GET, 1);
    m.token = vec![0x4a];
    m.options.push((option::OBSERVE, Vec::new()));
    let bytes = m.encode().unwrap();
    s.on_request(0, 1, &MessageView::decode(&bytes).unwrap());
    s
}

#[test]
fn the_subject_refuses_a_bad_first_or_backed_off_timer() {
    for (bad, shown) in BAD {
        let mut s = subject(arms(bad, 2.0));
        let msg = fault_of(|| s.set_state(S, Code::CONTENT, b"1"));
        assert_eq!(msg, expected("start", "1.000000", shown));

        let mut s = subject(arms(2.0, bad));
        s.set_state(S, Code::CONTENT, b"1");
        assert_eq!(s.poll_timeout(), Some(3 * S));
        let msg = fault_of(|| s.handle_timeout(3 * S));
        assert_eq!(msg, expected("expire", "3.000000", shown));
    }
}
