//! Client and subject together: the exchanges of RFC 7641's figures,
//! replacement, bad input and the ordering property.

use coapcc_rto::{registry, AlgorithmParams, Random};
use proptest::prelude::*;

use super::*;
use crate::message::{option, Code, Message, MessageType, MessageView};
use crate::Nanos;

const S: Nanos = 1_000_000_000;

/// Draws 0: the default algorithm's first timer is then exactly 2 s.
struct Zero;
impl Random for Zero {
    fn uniform(&mut self) -> f64 {
        0.0
    }
}

fn subject(config: SubjectConfig) -> Subject<u32, Zero> {
    let factory = (
        registry::find("default").unwrap(),
        AlgorithmParams::default(),
    );
    Subject::new(config, factory, Zero, 0x100).unwrap()
}

/// A response from a server: `observe` and `max_age` as given.
fn response(
    mtype: MessageType,
    code: Code,
    mid: u16,
    token: &[u8],
    observe: Option<u32>,
    max_age: Option<u32>,
    payload: &[u8],
) -> Vec<u8> {
    let mut m = Message::new(mtype, code, mid);
    m.token = token.to_vec();
    let uint = |v: u32| {
        let (b, n) = crate::message::encode_uint(v);
        b[4 - n..].to_vec()
    };
    if let Some(v) = observe {
        m.options.push((option::OBSERVE, uint(v)));
    }
    if let Some(v) = max_age {
        m.options.push((option::MAX_AGE, uint(v)));
    }
    m.payload = payload.to_vec();
    m.encode().unwrap()
}

fn notification(mid: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
    response(
        MessageType::Non,
        Code::CONTENT,
        mid,
        &[0x4a],
        Some(seq),
        None,
        payload,
    )
}

fn events<P: Copy + Eq>(c: &mut ObserveClient<P>) -> Vec<ObserveClientEvent<P>> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn delivered<P: Copy + Eq>(c: &mut ObserveClient<P>) -> Vec<u32> {
    events(c)
        .into_iter()
        .filter_map(|e| match e {
            ObserveClientEvent::Notification { seq, .. } => Some(seq),
            _ => None,
        })
        .collect()
}

/// Everything the client has to send, decoded.
fn sent(c: &mut ObserveClient<u32>) -> Vec<Message> {
    let mut buf = [0u8; 256];
    std::iter::from_fn(|| {
        c.poll_transmit(&mut buf)
            .map(|t| Message::decode(&buf[..t.len]).unwrap())
    })
    .collect()
}

fn client_observing() -> ObserveClient<u32> {
    let mut c = ObserveClient::new(ObserveClientConfig::default(), 7);
    c.observe(0, 1, &[0x4a], "/temperature").unwrap();
    c
}

#[test]
fn figure_2_register_and_three_notifications() {
    // RFC 7641 Figure 2: GET /temperature, Token 0x4a, Observe 0; then
    // 2.05 with Observe 12 "22.9 Cel", 44 "22.8 Cel", 60 "23.1 Cel".
    let mut c = client_observing();
    let reg = sent(&mut c);
    assert_eq!(reg.len(), 1);
    assert_eq!(reg[0].code, Code::GET);
    assert_eq!(reg[0].token, [0x4a]);
    assert_eq!(reg[0].option(option::OBSERVE), Some(&[][..]));
    assert_eq!(reg[0].option(option::URI_PATH), Some(&b"temperature"[..]));
    for (t, (seq, body)) in [(12, "22.9 Cel"), (44, "22.8 Cel"), (60, "23.1 Cel")]
        .into_iter()
        .enumerate()
    {
        c.handle_datagram(
            t as Nanos * S,
            1,
            &notification(t as u16, seq, body.as_bytes()),
        );
    }
    let got: Vec<(u32, Vec<u8>)> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            ObserveClientEvent::Notification { seq, payload, .. } => Some((seq, payload)),
            _ => None,
        })
        .collect();
    assert_eq!(
        got,
        [
            (12, b"22.9 Cel".to_vec()),
            (44, b"22.8 Cel".to_vec()),
            (60, b"23.1 Cel".to_vec())
        ]
    );
}

#[test]
fn a_reordered_notification_is_discarded() {
    // §3.4: 44 arriving after 60 is older and not handed over.
    let mut c = client_observing();
    for (mid, seq) in [(1, 12), (2, 60), (3, 44)] {
        c.handle_datagram(S, 1, &notification(mid, seq, b"x"));
    }
    let ev = events(&mut c);
    assert!(ev.contains(&ObserveClientEvent::Discarded {
        observation: ObservationId(1),
        seq: 44
    }));
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, ObserveClientEvent::Notification { .. }))
            .count(),
        2
    );
}

#[test]
fn wrap_around_is_newer_and_128_seconds_override() {
    let mut c = client_observing();
    c.handle_datagram(0, 1, &notification(1, 0xFF_FFFF, b"a"));
    c.handle_datagram(S, 1, &notification(2, 0, b"b"));
    c.handle_datagram(2 * S, 1, &notification(3, 0xFF_FFFF, b"old"));
    // More than 128 s after the last one taken: any value is taken.
    c.handle_datagram(S + 129 * S, 1, &notification(4, 0xFF_FFFE, b"c"));
    assert_eq!(delivered(&mut c), [0xFF_FFFF, 0, 0xFF_FFFE]);
}

#[test]
fn confirmable_notifications_are_acknowledged_unknown_tokens_reset() {
    let mut c = client_observing();
    sent(&mut c);
    let con = response(
        MessageType::Con,
        Code::CONTENT,
        0x55,
        &[0x4a],
        Some(3),
        None,
        b"",
    );
    c.handle_datagram(S, 1, &con);
    // §3.6: a notification for a token nobody observes — CON or NON — and
    // one from another peer with our token.
    let stranger = response(
        MessageType::Con,
        Code::CONTENT,
        0x56,
        &[0x99],
        Some(4),
        None,
        b"",
    );
    c.handle_datagram(S, 1, &stranger);
    let non = response(
        MessageType::Non,
        Code::CONTENT,
        0x57,
        &[0x99],
        Some(4),
        None,
        b"",
    );
    c.handle_datagram(S, 1, &non);
    c.handle_datagram(S, 2, &con);
    let out = sent(&mut c);
    let kinds: Vec<(MessageType, u16)> = out.iter().map(|m| (m.mtype, m.mid)).collect();
    assert_eq!(
        kinds,
        [
            (MessageType::Ack, 0x55),
            (MessageType::Rst, 0x56),
            (MessageType::Rst, 0x57),
            (MessageType::Rst, 0x55)
        ]
    );
    assert!(out
        .iter()
        .all(|m| m.code == Code::EMPTY && m.token.is_empty()));
}

#[test]
fn an_error_or_a_response_without_observe_ends_the_observation() {
    let mut c = client_observing();
    c.handle_datagram(S, 1, &notification(1, 5, b"x"));
    let err = response(
        MessageType::Non,
        Code::NOT_FOUND,
        2,
        &[0x4a],
        None,
        None,
        b"",
    );
    c.handle_datagram(2 * S, 1, &err);
    assert!(matches!(
        events(&mut c).last(),
        Some(ObserveClientEvent::Ended {
            reason: Ending::Error,
            code: Some(Code::NOT_FOUND),
            ..
        })
    ));
    assert_eq!(c.active(), 0);

    let mut c = client_observing();
    let plain = response(
        MessageType::Non,
        Code::CONTENT,
        3,
        &[0x4a],
        None,
        None,
        b"22",
    );
    c.handle_datagram(S, 1, &plain);
    assert!(matches!(
        events(&mut c).last(),
        Some(ObserveClientEvent::Ended {
            reason: Ending::NotObserved,
            ..
        })
    ));
    assert_eq!(c.active(), 0);
}

#[test]
fn reregisters_after_max_age_and_the_margin() {
    let mut c = client_observing();
    sent(&mut c);
    let n = response(
        MessageType::Non,
        Code::CONTENT,
        1,
        &[0x4a],
        Some(9),
        Some(10),
        b"",
    );
    c.handle_datagram(100 * S, 1, &n);
    let margin = ObserveClientConfig::default().reregister_margin;
    assert_eq!(c.poll_timeout(), Some(110 * S + margin));
    c.handle_timeout(110 * S + margin - 1);
    assert!(sent(&mut c).is_empty());
    c.handle_timeout(110 * S + margin);
    let out = sent(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].code, Code::GET);
    assert_eq!(out[0].token, [0x4a], "the same token (§3.3.1)");
    assert_eq!(out[0].option(option::OBSERVE), Some(&[][..]));
    assert!(events(&mut c)
        .iter()
        .any(|e| matches!(e, ObserveClientEvent::Reregistered { .. })));
    // Then the default Max-Age (60 s) runs.
    assert_eq!(c.poll_timeout(), Some(110 * S + margin + 60 * S + margin));
}

#[test]
fn deregistration_by_get_and_by_forgetting() {
    let mut c = client_observing();
    sent(&mut c);
    let id = ObservationId(1);
    assert!(c.cancel(S, id, Cancel::Deregister));
    let out = sent(&mut c);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].option(option::OBSERVE), Some(&[1][..]));
    assert_eq!(out[0].token, [0x4a]);
    // A notification still in flight is acknowledged, not handed over.
    let con = response(
        MessageType::Con,
        Code::CONTENT,
        9,
        &[0x4a],
        Some(3),
        None,
        b"",
    );
    c.handle_datagram(2 * S, 1, &con);
    assert_eq!(sent(&mut c)[0].mtype, MessageType::Ack);
    let plain = response(
        MessageType::Non,
        Code::CONTENT,
        10,
        &[0x4a],
        None,
        None,
        b"",
    );
    c.handle_datagram(3 * S, 1, &plain);
    let ev = events(&mut c);
    assert_eq!(ev.len(), 1);
    assert!(matches!(
        ev[0],
        ObserveClientEvent::Ended {
            reason: Ending::Cancelled,
            ..
        }
    ));

    // Forget: the next CON notification is reset (reactive cancellation).
    let mut c = client_observing();
    sent(&mut c);
    assert!(c.cancel(S, id, Cancel::Forget));
    assert!(!c.cancel(S, id, Cancel::Forget));
    c.handle_datagram(2 * S, 1, &con);
    assert_eq!(sent(&mut c)[0].mtype, MessageType::Rst);
}

#[test]
fn client_refuses_bad_observations() {
    let mut c = client_observing();
    assert_eq!(
        c.observe(0, 1, &[0x4a], "/x"),
        Err(ObserveClientError::TokenInUse)
    );
    assert_eq!(
        c.observe(0, 1, &[0; 9], "/x"),
        Err(ObserveClientError::TokenTooLong)
    );
    let mut c = ObserveClient::<u32>::new(
        ObserveClientConfig {
            max_observations: 1,
            ..Default::default()
        },
        0,
    );
    c.observe(0, 1, &[1], "a").unwrap();
    assert_eq!(c.observe(0, 1, &[2], "a"), Err(ObserveClientError::TooMany));
}

/// Registers `peer` with `token` through a request, as a server would.
fn register(
    s: &mut Subject<u32, Zero>,
    now: Nanos,
    peer: u32,
    token: &[u8],
) -> Option<Registration> {
    let mut m = Message::new(MessageType::Con, Code::GET, 1);
    m.token = token.to_vec();
    m.options.push((option::OBSERVE, Vec::new()));
    let bytes = m.encode().unwrap();
    s.on_request(now, peer, &MessageView::decode(&bytes).unwrap())
}

/// Every notification the subject has to send, decoded.
fn notifications(s: &mut Subject<u32, Zero>) -> Vec<(NotifyTransmit<u32>, Message)> {
    let mut buf = [0u8; 256];
    std::iter::from_fn(|| {
        s.poll_transmit(&mut buf)
            .map(|t| (t, Message::decode(&buf[..t.len]).unwrap()))
    })
    .collect()
}

fn subject_events(s: &mut Subject<u32, Zero>) -> Vec<SubjectEvent<u32>> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn empty(mtype: MessageType, mid: u16) -> Vec<u8> {
    Message::new(mtype, Code::EMPTY, mid).encode().unwrap()
}

fn ack(s: &mut Subject<u32, Zero>, now: Nanos, peer: u32, mid: u16) -> bool {
    let bytes = empty(MessageType::Ack, mid);
    s.handle_message(now, peer, &MessageView::decode(&bytes).unwrap())
}

#[test]
fn subject_registers_and_numbers_notifications() {
    let mut s = subject(SubjectConfig {
        first_seq: 0xFF_FFFE,
        max_age: Some(30),
        ..Default::default()
    });
    let reg = register(&mut s, 0, 1, &[0x4a]).unwrap();
    assert_eq!(reg, Registration::Accepted { seq: 0xFF_FFFE });
    assert_eq!(
        reg.response_option(),
        Some((option::OBSERVE, vec![0xFF, 0xFF, 0xFE]))
    );
    let mut seqs = Vec::new();
    for k in 0..5 {
        s.set_state(k * S, Code::CONTENT, format!("{k}").as_bytes());
        for (t, m) in notifications(&mut s) {
            assert_eq!(m.token, [0x4a]);
            assert_eq!(m.option(option::MAX_AGE), Some(&[30][..]));
            assert_eq!(t.confirmable, m.mtype == MessageType::Con);
            seqs.push((t.seq, t.confirmable));
            if t.confirmable {
                assert!(ack(&mut s, k * S, 1, t.mid));
            }
        }
    }
    // 24-bit wrap; four NONs then a CON (the default rule).
    assert_eq!(
        seqs,
        [
            (0xFF_FFFF, false),
            (0, false),
            (1, false),
            (2, false),
            (3, true)
        ]
    );
}

#[test]
fn an_observer_flood_hits_the_bounds() {
    let mut s = subject(SubjectConfig::default());
    let mut accepted = 0;
    for k in 0u32..10_000 {
        let reg = register(&mut s, 0, 7, &k.to_be_bytes()).unwrap();
        match reg {
            Registration::Accepted { .. } => accepted += 1,
            Registration::Refused(r) => {
                assert_eq!(r, Refusal::PeerFull);
                assert_eq!(reg.response_option(), None, "served as a plain GET");
            }
        }
    }
    assert_eq!(accepted, 4);
    assert_eq!(s.observers(), 4);
    assert_eq!(s.stats().refused_peer, 9_996);
    // The same token again is an update, not a new observer.
    assert!(matches!(
        register(&mut s, 0, 7, &0u32.to_be_bytes()),
        Some(Registration::Accepted { .. })
    ));
    assert_eq!(s.observers(), 4);
    // Many addresses: the total bound.
    let mut s = subject(SubjectConfig {
        max_observers: 100,
        ..Default::default()
    });
    for peer in 0..10_000 {
        register(&mut s, 0, peer, &[1]);
    }
    assert_eq!(s.observers(), 100);
    assert_eq!(s.stats().refused_full, 9_900);
}

#[test]
fn deregistration_and_reset_remove_the_observer() {
    let mut s = subject(SubjectConfig::default());
    register(&mut s, 0, 1, &[1]);
    register(&mut s, 0, 2, &[2]);
    let mut m = Message::new(MessageType::Con, Code::GET, 5);
    m.token = vec![1];
    m.options.push((option::OBSERVE, vec![1]));
    let bytes = m.encode().unwrap();
    assert_eq!(
        s.on_request(0, 1, &MessageView::decode(&bytes).unwrap()),
        None
    );
    assert_eq!(s.observers(), 1);
    // RST to a NON notification (§3.6).
    s.set_state(S, Code::CONTENT, b"x");
    let (t, _) = notifications(&mut s).pop().unwrap();
    assert!(!t.confirmable);
    let rst = empty(MessageType::Rst, t.mid);
    assert!(s.handle_message(S, 2, &MessageView::decode(&rst).unwrap()));
    assert_eq!(s.observers(), 0);
    let reasons: Vec<Removal> = subject_events(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            SubjectEvent::Removed { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, [Removal::Deregistered, Removal::Reset]);
}

#[test]
fn unusable_observe_values_are_served_as_plain_gets() {
    let mut s = subject(SubjectConfig::default());
    for value in [vec![2], vec![0, 0, 0, 0]] {
        let mut m = Message::new(MessageType::Con, Code::GET, 5);
        m.options.push((option::OBSERVE, value));
        let bytes = m.encode().unwrap();
        assert_eq!(
            s.on_request(0, 1, &MessageView::decode(&bytes).unwrap()),
            None
        );
    }
    assert_eq!(s.stats().bad_option, 2);
    assert_eq!(s.observers(), 0);
}

fn all_con() -> SubjectConfig {
    SubjectConfig {
        confirm: ConfirmRule {
            every: 1,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn unacknowledged_notifications_back_off_then_remove_the_observer() {
    let mut s = subject(all_con());
    register(&mut s, 0, 1, &[1]);
    s.set_state(0, Code::CONTENT, b"x");
    let (first, _) = notifications(&mut s).pop().unwrap();
    let mut now = 0;
    let mut timers = Vec::new();
    while let Some(deadline) = s.poll_timeout() {
        timers.push((deadline - now) / S);
        now = deadline;
        s.handle_timeout(now);
        for (t, _) in notifications(&mut s) {
            assert_eq!(t.mid, first.mid, "a retransmission is the same message");
        }
    }
    // The default algorithm with a zero draw: 2 s doubling, MAX_RETRANSMIT 4.
    assert_eq!(timers, [2, 4, 8, 16, 32]);
    assert_eq!(s.observers(), 0);
    assert!(subject_events(&mut s).contains(&SubjectEvent::Removed {
        peer: 1,
        token: Token::new(&[1]).unwrap(),
        reason: Removal::Timeout
    }));
}

#[test]
fn a_newer_state_replaces_the_notification_in_flight() {
    let mut s = subject(all_con());
    let mut c = ObserveClient::new(ObserveClientConfig::default(), 0);
    c.observe(0, 9, &[0x4a], "/r").unwrap();
    sent(&mut c);
    register(&mut s, 0, 1, &[0x4a]);
    s.set_state(0, Code::CONTENT, b"one");
    let (old, old_bytes) = notifications(&mut s).pop().unwrap();
    assert_eq!(old.seq, 1);
    // Lost. The state changes while it is in flight: nothing goes out
    // before the current attempt's timer (2 s) fires.
    s.set_state(S, Code::CONTENT, b"two");
    assert!(notifications(&mut s).is_empty());
    s.handle_timeout(2 * S);
    let (new, new_bytes) = notifications(&mut s).pop().unwrap();
    assert_eq!((new.seq, new.ordinal), (2, 1), "the counter is retained");
    assert_ne!(new.mid, old.mid, "a new transmission");
    assert_eq!(new_bytes.payload, b"two");
    assert!(subject_events(&mut s).contains(&SubjectEvent::Replaced {
        peer: 1,
        old_seq: 1,
        new_seq: 2,
        mid: new.mid
    }));
    // The timer backed off as for a retransmission: 4 s.
    assert_eq!(s.poll_timeout(), Some(6 * S));
    // The client gets the new one, then a late copy of the old: never
    // handed over after the newer.
    let encode = |m: &Message| m.encode().unwrap();
    c.handle_datagram(3 * S, 9, &encode(&new_bytes));
    c.handle_datagram(4 * S, 9, &encode(&old_bytes));
    assert_eq!(delivered(&mut c), [2]);
    // An ACK of the aborted copy changes nothing; the current one's ends it.
    assert!(!ack(&mut s, 4 * S, 1, old.mid));
    assert!(ack(&mut s, 5 * S, 1, new.mid));
    assert!(
        subject_events(&mut s).contains(&SubjectEvent::Acknowledged {
            peer: 1,
            seq: 2,
            retransmissions: 1,
            elapsed: 5 * S
        })
    );
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn a_reregistration_keeps_the_flight_identical() {
    let mut s = subject(all_con());
    register(&mut s, 0, 1, &[1]);
    s.set_state(0, Code::CONTENT, b"a");
    let (first, first_msg) = notifications(&mut s).pop().unwrap();
    assert_eq!(
        register(&mut s, S, 1, &[1]),
        Some(Registration::Accepted { seq: 1 })
    );
    assert_eq!(s.observers(), 1);
    s.handle_timeout(2 * S);
    let (again, again_msg) = notifications(&mut s).pop().unwrap();
    assert_eq!((again.mid, again.ordinal), (first.mid, 1));
    assert_eq!(again_msg, first_msg);
}

#[test]
fn a_state_changed_before_the_ack_goes_out_at_once() {
    let mut s = subject(all_con());
    register(&mut s, 0, 1, &[1]);
    s.set_state(0, Code::CONTENT, b"a");
    let (t, _) = notifications(&mut s).pop().unwrap();
    s.set_state(S / 2, Code::CONTENT, b"b");
    assert!(ack(&mut s, S, 1, t.mid));
    let (next, _) = notifications(&mut s).pop().unwrap();
    assert_eq!((next.seq, next.ordinal), (2, 0));
    assert_eq!(s.poll_timeout(), Some(S + 2 * S));
}

#[test]
fn an_error_notification_ends_every_observation() {
    let mut s = subject(SubjectConfig::default());
    register(&mut s, 0, 1, &[1]);
    register(&mut s, 0, 2, &[2]);
    s.set_state(S, Code::NOT_FOUND, b"");
    let sent = notifications(&mut s);
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|(_, m)| m.code == Code::NOT_FOUND));
    assert_eq!(s.observers(), 0);
    assert_eq!(s.poll_timeout(), None);
}

proptest! {
    /// §3.4: whatever the arrival order (duplicates included) of
    /// notifications sent in order — from any start value, wrapping —
    /// within 128 s, none is handed over after one sent later.
    #[test]
    fn never_older_after_newer(
        start in 0u32..=OBSERVE_MAX,
        steps in proptest::collection::vec(1u32..200_000, 1..40),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 1..80),
        gaps in proptest::collection::vec(0u64..3 * S, 80),
    ) {
        // Sent values: their total span stays under 2^23.
        let mut seqs = vec![start];
        for d in &steps {
            seqs.push((seqs.last().unwrap() + d) & OBSERVE_MAX);
        }
        let mut c = client_observing();
        let mut now = 0;
        let mut last_index = None;
        for (k, pick) in order.iter().enumerate() {
            let index = pick.index(seqs.len());
            now += gaps[k] / 3 + 1;
            c.handle_datagram(now, 1, &notification(k as u16, seqs[index], b""));
            for seq in delivered(&mut c) {
                let got = seqs.iter().position(|v| *v == seq).unwrap();
                prop_assert_eq!(got, index);
                prop_assert!(last_index.is_none_or(|l| got > l));
                last_index = Some(got);
            }
        }
    }

    /// Nothing panics on arbitrary datagrams, on either side.
    #[test]
    fn arbitrary_datagrams_do_not_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut c = client_observing();
        c.handle_datagram(S, 1, &data);
        sent(&mut c);
        let mut s = subject(SubjectConfig::default());
        register(&mut s, 0, 1, &[0x4a]);
        if let Ok(m) = MessageView::decode(&data) {
            s.handle_message(S, 1, &m);
            s.on_request(S, 1, &m);
        }
        notifications(&mut s);
    }
}
