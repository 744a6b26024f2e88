//! The dumbbell's observe world (`workload.kind = "observe"`, RFC 7641):
//! every client observes one resource of the server, which changes every
//! `period` seconds, `exchanges` times, and the server notifies each
//! observer of each change.
//!
//! - **Observers**: each client is an [`ObserveClient`] that registers at
//!   time 0 (a Non-confirmable GET with Observe = 0 and an empty token, as the
//!   testbed's requests carry none), acknowledges Confirmable notifications,
//!   and registers again when Max-Age (60 s: the server sends none) and 2 s
//!   pass without a notification (RFC 7641 §3.3.1).
//! - **Server**: the CoAP server ([`CoapServer`]) answers registrations
//!   through [`Registrar`], which holds one [`Subject`] per group: its
//!   notifications are typed by `confirm_every` ([`ConfirmRule`]), and the
//!   retransmissions of its Confirmable ones are timed by the group's
//!   algorithm, one instance per observer (the same algorithm spec → factory
//!   path the clients of the request world use), with MAX_RETRANSMIT
//!   `[coap] max_retransmit`. A changed state waits for a Confirmable
//!   notification in flight and replaces it (§4.5.2). Empty ACKs and RSTs
//!   from observers go to the subject; requests to the server.
//! - **Changes**: change `k` (1 ≤ k ≤ `exchanges`) is made at `k · P`, `P`
//!   the period rounded to the nanosecond, and its Observe value is `k` (the
//!   initial state, 0, is what a registration answers before the first
//!   change). So a notification's Observe value names the change it carries
//!   and when it was made; counts that would wrap the 24-bit sequence
//!   number are refused ([`check`]). Every notification carries
//!   `[coap] response_payload` bytes.
//! - **End**: the run ends once the last change has been made, nothing is in
//!   the network and no Confirmable notification is in flight; or, at the
//!   latest, [`DRAIN`] after the last change (what is still in flight then
//!   is lost).
//!
//! What each observer's record holds is [`ObserveRecord`]'s; how this world
//! fills it (and the usual [`ClientRecord`] fields) is in
//! `docs/decisions/workloads-choices.md`.

use coapcc_link::agenda::Agenda;
use coapcc_link::dumbbell::{Direction, Dumbbell, IPV4_HEADER};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{from_secs, to_secs, Nanos};
use coapcc_link::{Datagram, NodeId, PacketId};
use coapcc_proto::message::{peek_header, Code, MessageType, MessageView};
use coapcc_proto::observe::{
    observe_of, ConfirmRule, ObserveClient, ObserveClientConfig, ObserveClientEvent, Registration,
    Removal, Subject, SubjectConfig, SubjectEvent, CON_INTERVAL, OBSERVE_MAX,
};
use coapcc_proto::server::{Handler, Response, ServerConfig};
use coapcc_workload::metrics::{ClientRecord, RunResult};
use coapcc_workload::observe_metrics::ObserveRecord;
use coapcc_workload::{ObserveSettings, Workload};

use super::config::{validate, RunSpec, UDP_HEADER};
use super::records;
use super::world::{Event, Tap, MAX_DATAGRAM, SERVER};
use crate::apps::coap_server::CoapServer;
use crate::apps::packets::PacketPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// The longest an observe run goes on after its last change: RFC 7252's
/// EXCHANGE_LIFETIME re-derived for the evaluations' MAX_RETRANSMIT = 20
/// ([`ServerConfig::EVALUATION_EXCHANGE_LIFETIME`], 1195 s), by which any
/// Confirmable notification has been acknowledged or given up.
pub const DRAIN: Nanos = ServerConfig::EVALUATION_EXCHANGE_LIFETIME;

/// The longest an observe run's changes may last (10⁷ s, the bound every
/// duration of coapcc has).
const MAX_SPAN_S: f64 = 1e7;

/// "None" for a time.
const NEVER: Nanos = Nanos::MAX;

/// A change's fate for one observer, as flags.
const GENERATED: u8 = 1;
const SENT: u8 = 2;
const REPLACED: u8 = 4;
const DELIVERED: u8 = 8;

/// Checks an observe workload against what this world can run: the changes
/// fit the 24-bit sequence number without wrapping, and their span the
/// bound of every duration.
pub fn check(w: &Workload) -> Result<(), SpecError> {
    let o = w.observe();
    if o.changes > OBSERVE_MAX {
        return Err(SpecError(format!(
            "workload.exchanges: expected at most {OBSERVE_MAX} changes with kind = \"observe\" \
             (the 24-bit Observe sequence number must not wrap), found {}",
            o.changes
        )));
    }
    if f64::from(o.changes) * o.period > MAX_SPAN_S {
        return Err(SpecError(format!(
            "workload.period: {} changes every {} s last past {MAX_SPAN_S} s",
            o.changes, o.period
        )));
    }
    Ok(())
}

/// The server's resource: one [`Subject`] per group. A GET with Observe = 0
/// registers its source with the subject of the source's group; every GET is
/// answered 2.05 with the current state.
pub struct Registrar {
    subjects: Vec<Subject<u32, SimRng>>,
    /// Each observer's group.
    group_of: Vec<u32>,
    /// The state's payload.
    payload: Vec<u8>,
    /// The time and source of the request being handled.
    now: Nanos,
    peer: u32,
    /// The registration the last request made: (observer, Observe value).
    registered: Option<(u32, u32)>,
}

impl Handler for Registrar {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        if request.code != Code::GET {
            response.code = Code::METHOD_NOT_ALLOWED;
            return;
        }
        let g = self.group_of[self.peer as usize] as usize;
        let reg = self.subjects[g].on_request(self.now, self.peer, request);
        if let Some(reg @ Registration::Accepted { seq }) = reg {
            if let Some(o) = reg.response_option() {
                response.options.push(o);
            }
            self.registered = Some((self.peer, seq));
        }
        response.code = Code::CONTENT;
        response.payload.extend_from_slice(&self.payload);
    }
}

/// One observer: its endpoint and its timer.
struct Observer {
    client: ObserveClient<u32>,
    group: u32,
    /// When it first sent ([`NEVER`]: not yet).
    started: Nanos,
    /// The deadline its timer event is queued for ([`NEVER`]: none).
    armed: Nanos,
}

/// What happened to each change for one observer, and its view's age.
struct Books {
    /// Flags per change (index `k`; 0 is the initial state).
    changes: Vec<u8>,
    /// On the subject's list.
    registered: bool,
    /// When the last Confirmable notification to it was sent.
    last_con: Nanos,
    /// The first delivery of a change ([`NEVER`]: none yet).
    first_delivery: Nanos,
    /// When the change the view holds was made, and since when it holds it.
    held: Nanos,
    held_since: Nanos,
    /// ∫ age dt from the first delivery to `held_since` (s²).
    age_integral: f64,
    record: ObserveRecord,
}

/// One replication of an observe run on the dumbbell in progress.
pub struct World<'a> {
    core: Core<Dumbbell, Event>,
    packets: PacketPool,
    observers: Vec<Observer>,
    records: Vec<ClientRecord>,
    books: Vec<Books>,
    server: CoapServer<Registrar>,
    /// Each group's subject deadline queued ([`NEVER`]: none).
    subject_armed: Vec<Nanos>,
    histograms: Vec<Vec<u64>>,
    settings: ObserveSettings,
    /// The period, ns.
    period: Nanos,
    /// The next change to make (`changes + 1` once all are made).
    next_change: u32,
    ended: bool,
    path: String,
    buf: [u8; MAX_DATAGRAM],
    tap: Option<&'a mut dyn Tap>,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec` (every group observing), before
    /// time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let settings = spec.groups[0].workload.observe();
        let population: usize = spec.groups.iter().map(|g| g.clients as usize).sum();
        let mut server_rng = SimRng::new(derive(seed, Stream::Client, u64::from(SERVER)));
        let mut subjects = Vec::with_capacity(spec.groups.len());
        let mut observers = Vec::with_capacity(population);
        let mut records = Vec::with_capacity(population);
        let mut books = Vec::with_capacity(population);
        let mut group_of = Vec::with_capacity(population);
        for (gi, g) in spec.groups.iter().enumerate() {
            let w = g.workload.observe();
            let config = SubjectConfig {
                max_observers: population,
                max_per_peer: 1,
                max_retransmit: spec.coap.max_retransmit,
                confirm: ConfirmRule {
                    every: w.confirm_every,
                    interval: CON_INTERVAL,
                },
                max_age: None,
                first_seq: 0,
            };
            let factory = g.algorithm.factory().map_err(SpecError)?;
            let rng = SimRng::new(server_rng.next_u64());
            let first_mid = server_rng.next_u64() as u16;
            let subject = Subject::new(config, factory, rng, first_mid)
                .map_err(|e| SpecError(format!("algorithm `{}`: {e}", factory.0.name)))?;
            subjects.push(subject);
            for _ in 0..g.clients {
                let index = observers.len() as u32;
                let mut rng = SimRng::new(derive(seed, Stream::Client, u64::from(index)));
                let first_mid = rng.next_u64() as u16;
                observers.push(Observer {
                    client: ObserveClient::new(ObserveClientConfig::default(), first_mid),
                    group: gi as u32,
                    started: NEVER,
                    armed: NEVER,
                });
                records.push(ClientRecord {
                    group: gi as u32,
                    ..ClientRecord::default()
                });
                books.push(Books {
                    changes: vec![0; w.changes as usize + 1],
                    registered: false,
                    last_con: 0,
                    first_delivery: NEVER,
                    held: 0,
                    held_since: 0,
                    age_integral: 0.0,
                    record: ObserveRecord::default(),
                });
                group_of.push(gi as u32);
            }
        }
        let registrar = Registrar {
            subjects,
            group_of,
            payload: vec![b'x'; spec.coap.response_payload],
            now: 0,
            peer: 0,
            registered: None,
        };
        let server = CoapServer::new(SERVER, registrar, population, MAX_DATAGRAM);
        Ok(World {
            core: Core::new(
                Dumbbell::new(&spec.network, seed, 2 * population + 64),
                Agenda::new(0, 2 * population + 64),
            ),
            packets: PacketPool::default(),
            observers,
            records,
            books,
            server,
            subject_armed: vec![NEVER; spec.groups.len()],
            histograms: vec![Vec::new(); spec.groups.len()],
            period: from_secs(settings.period),
            settings,
            next_change: 1,
            ended: false,
            path: spec.coap.path.clone(),
            buf: [0; MAX_DATAGRAM],
            tap: None,
        })
    }

    /// Shows every packet sent to `tap`.
    pub(super) fn attach(&mut self, tap: &'a mut dyn Tap) {
        self.tap = Some(tap);
    }

    /// Puts `len` bytes of the buffer on the network from `src` to `dst`.
    fn send(&mut self, src: u32, dst: u32, len: usize, unnecessary: bool) {
        if let Some(tap) = self.tap.as_mut() {
            tap.packet(self.core.now, src, dst, &self.buf[..len]);
        }
        let p = self.packets.alloc(src, dst, &self.buf[..len]);
        let d = Datagram {
            id: p,
            src,
            dst,
            transport_header: UDP_HEADER as u16,
            payload: len as u16,
            unnecessary,
        };
        if !self.core.send(d) {
            self.packets.release(p);
        }
    }

    /// A packet reached the server: an Empty ACK or RST goes to the subject
    /// of its source's group, a request to the server.
    fn at_server(&mut self, p: PacketId) {
        let now = self.core.now;
        let packet = self.packets.get(p);
        let src = packet.src;
        let g = self.observers[src as usize].group as usize;
        let header = peek_header(packet.data);
        if header.is_some_and(|h| matches!(h.mtype, MessageType::Ack | MessageType::Rst)) {
            if let Ok(msg) = MessageView::decode(packet.data) {
                self.server.handler_mut().subjects[g].handle_message(now, src, &msg);
            }
            self.packets.release(p);
            return self.service_subject(g);
        }
        let registrar = self.server.handler_mut();
        registrar.now = now;
        registrar.peer = src;
        let reply = self.server.answer(now, &mut self.packets, p);
        if let Some((o, seq)) = self.server.handler_mut().registered.take() {
            let b = &mut self.books[o as usize];
            b.registered = true;
            b.changes[seq as usize] |= SENT;
        }
        if let Some(reply) = reply {
            if let Some(tap) = self.tap.as_mut() {
                tap.packet(now, SERVER, reply.to, self.packets.get(reply.packet).data);
            }
            let d = Datagram {
                id: reply.packet,
                src: SERVER,
                dst: reply.to,
                transport_header: UDP_HEADER as u16,
                payload: reply.len as u16,
                unnecessary: false,
            };
            if !self.core.send(d) {
                self.packets.release(reply.packet);
            }
        }
    }

    /// Sends what group `g`'s subject has to send, books its events, and
    /// queues its timer.
    fn service_subject(&mut self, g: usize) {
        let now = self.core.now;
        loop {
            let subject = &mut self.server.handler_mut().subjects[g];
            let Some(tx) = subject.poll_transmit(&mut self.buf) else {
                break;
            };
            let o = tx.peer as usize;
            let (b, record) = (&mut self.books[o], &mut self.records[o]);
            b.changes[tx.seq as usize] |= SENT;
            if tx.ordinal == 0 {
                if tx.confirmable {
                    b.record.confirmable += 1;
                } else {
                    b.record.non_confirmable += 1;
                }
            } else {
                // A retransmission (or a replacement, §4.5.2): the timer of
                // the last copy expired.
                record.retransmissions += 1;
                expired(record, now - b.last_con);
            }
            if tx.confirmable {
                b.last_con = now;
            }
            self.send(SERVER, tx.peer, tx.len, false);
        }
        let subject = &mut self.server.handler_mut().subjects[g];
        while let Some(ev) = subject.poll_event() {
            match ev {
                SubjectEvent::Acknowledged {
                    peer,
                    retransmissions,
                    elapsed,
                    ..
                } => {
                    let record = &mut self.records[peer as usize];
                    record.completed += 1;
                    record.rtt_sum += to_secs(elapsed);
                    records::count(&mut self.histograms[g], retransmissions);
                }
                SubjectEvent::Replaced { peer, old_seq, .. } => {
                    self.books[peer as usize].changes[old_seq as usize] |= REPLACED;
                }
                SubjectEvent::Removed { peer, reason, .. } => {
                    let (b, record) = (
                        &mut self.books[peer as usize],
                        &mut self.records[peer as usize],
                    );
                    b.registered = false;
                    match reason {
                        Removal::Timeout => {
                            record.failed += 1;
                            expired(record, now - b.last_con);
                        }
                        Removal::Reset => record.failed += 1,
                        Removal::Deregistered | Removal::Ended => {}
                    }
                }
            }
        }
        let deadline = subject.poll_timeout();
        match deadline {
            Some(t) if t != self.subject_armed[g] => {
                self.subject_armed[g] = t;
                self.core.agenda.push(t, Event::ServerTimer(g as u32));
            }
            Some(_) => {}
            None => self.subject_armed[g] = NEVER,
        }
    }

    /// A packet reached observer `o`.
    fn at_client(&mut self, p: PacketId) {
        let now = self.core.now;
        let packet = self.packets.get(p);
        let o = packet.dst as usize;
        if let Ok(msg) = MessageView::decode(packet.data) {
            let seq = observe_of(&msg).and_then(Result::ok);
            let notification = matches!(msg.mtype, MessageType::Con | MessageType::Non);
            if let (true, Some(seq)) = (notification, seq) {
                let flags = self.books[o].changes.get(seq as usize).copied();
                if flags.is_some_and(|f| f & DELIVERED != 0) {
                    // A copy of a change it has: an unnecessary one.
                    self.records[o].unnecessary += 1;
                    let bytes = (IPV4_HEADER + UDP_HEADER + packet.data.len()) as u64;
                    self.core.net.count_unnecessary(Direction::Down, bytes);
                }
            }
        }
        self.observers[o]
            .client
            .handle_datagram(now, SERVER, packet.data);
        self.packets.release(p);
        self.service_observer(o);
    }

    /// Sends what observer `o` has to send, books its events, and queues
    /// its timer.
    fn service_observer(&mut self, o: usize) {
        let now = self.core.now;
        while let Some(tx) = self.observers[o].client.poll_transmit(&mut self.buf) {
            let ob = &mut self.observers[o];
            if ob.started == NEVER {
                ob.started = now;
            }
            self.send(o as u32, SERVER, tx.len, false);
        }
        while let Some(ev) = self.observers[o].client.poll_event() {
            match ev {
                ObserveClientEvent::Notification { seq, .. } => self.deliver(o, seq),
                ObserveClientEvent::Discarded { .. } => self.books[o].record.discarded += 1,
                ObserveClientEvent::Reregistered { .. } => {
                    self.books[o].record.reregistrations += 1
                }
                // The server answers every registration with Observe (its
                // list has room for every observer): no observation ends.
                ObserveClientEvent::Ended { .. } => {}
            }
        }
        let ob = &mut self.observers[o];
        if let Some(t) = ob.client.poll_timeout().filter(|&t| t != ob.armed) {
            ob.armed = t;
            self.core.agenda.push(t, Event::ClientTimer(o as u32));
        }
    }

    /// Observer `o`'s application got the state with Observe value `seq`.
    fn deliver(&mut self, o: usize, seq: u32) {
        let now = self.core.now;
        let b = &mut self.books[o];
        let Some(flags) = b.changes.get_mut(seq as usize).filter(|_| seq > 0) else {
            // The initial state (a registration's answer before any change).
            return;
        };
        if *flags & DELIVERED != 0 {
            // Handed over again (the 128-second rule of RFC 7641 §3.4).
            return;
        }
        *flags |= DELIVERED | GENERATED;
        let made = Nanos::from(seq) * self.period;
        b.record.delays.push(to_secs(now - made));
        if b.first_delivery == NEVER {
            b.first_delivery = now;
        } else {
            b.age_integral += age_area(b.held, b.held_since, now);
        }
        b.held = made;
        b.held_since = now;
        if seq == self.settings.changes {
            let ob = &self.observers[o];
            self.records[o].fct = Some(to_secs(now - ob.started));
        }
    }

    /// Change `k` of the resource, now.
    fn change(&mut self, k: u32) {
        let now = self.core.now;
        for b in &mut self.books {
            if b.registered {
                b.changes[k as usize] |= GENERATED;
            }
        }
        for g in 0..self.subject_armed.len() {
            let registrar = self.server.handler_mut();
            registrar.subjects[g].set_state(now, Code::CONTENT, &registrar.payload);
            self.service_subject(g);
        }
        self.next_change = k + 1;
        if k < self.settings.changes {
            let at = Nanos::from(k + 1) * self.period;
            self.core.agenda.push(at, Event::Change(k + 1));
        } else {
            self.core.agenda.push(now + DRAIN, Event::End);
        }
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        let end = self.core.now;
        for (b, record) in self.books.iter_mut().zip(&mut self.records) {
            let mut r = std::mem::take(&mut b.record);
            attribute(&b.changes, &mut r);
            if b.first_delivery != NEVER {
                let span = to_secs(end - b.first_delivery);
                r.mean_age = if span > 0.0 {
                    (b.age_integral + age_area(b.held, b.held_since, end)) / span
                } else {
                    to_secs(end - b.held)
                };
            }
            record.observe = Some(Box::new(r));
        }
        records::result(&mut self.core, self.records, self.histograms, processed)
    }
}

/// Books an expired timer of `timer` ns on `record`.
fn expired(record: &mut ClientRecord, timer: Nanos) {
    record.expirations += 1;
    record.max_expired_timer = record.max_expired_timer.max(to_secs(timer));
}

/// ∫ (t − made) dt over [`from`, `to`] (s²): the age of a view holding the
/// change made at `made`.
fn age_area(made: Nanos, from: Nanos, to: Nanos) -> f64 {
    let (a, b, c) = (to_secs(from), to_secs(to), to_secs(made));
    (b - a) * ((a + b) / 2.0 - c)
}

/// Counts each change's fate from its flags: of the changes generated for
/// the observer, delivered ones; superseded ones — not delivered, never
/// sent or sent in a Confirmable notification a fresher state replaced,
/// and a fresher state sent afterwards; the rest lost.
fn attribute(changes: &[u8], r: &mut ObserveRecord) {
    let mut fresher_sent = false;
    for &f in changes.iter().skip(1).rev() {
        if f & GENERATED != 0 {
            r.generated += 1;
            if f & DELIVERED != 0 {
                r.delivered += 1;
            } else if fresher_sent && (f & SENT == 0 || f & REPLACED != 0) {
                r.superseded += 1;
            } else {
                r.lost += 1;
            }
        }
        if f & (SENT | DELIVERED) != 0 {
            fresher_sent = true;
        }
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Dumbbell;
    type Timer = Event;
    type Result = RunResult;

    fn start(&mut self) {
        for o in 0..self.observers.len() {
            self.observers[o]
                .client
                .observe(0, SERVER, &[], &self.path)
                .expect("a new observer has room for its observation");
            self.service_observer(o);
        }
        self.core.agenda.push(self.period, Event::Change(1));
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Dumbbell, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        let c = &self.core.conservation;
        self.ended
            || (self.next_change > self.settings.changes
                && c.sent == c.delivered + c.dropped
                && self.subject_armed.iter().all(|&t| t == NEVER))
    }

    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        if node == SERVER {
            self.at_server(id)
        } else {
            self.at_client(id)
        }
    }

    fn on_dropped(&mut self, id: PacketId) {
        self.packets.release(id);
    }

    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match timer {
            Event::ClientTimer(o) => {
                let ob = &mut self.observers[o as usize];
                if ob.armed == at {
                    ob.armed = NEVER;
                    ob.client.handle_timeout(at);
                    self.service_observer(o as usize);
                }
            }
            Event::ServerTimer(g) => {
                let g = g as usize;
                if self.subject_armed[g] == at {
                    self.subject_armed[g] = NEVER;
                    self.server.handler_mut().subjects[g].handle_timeout(at);
                    self.service_subject(g);
                }
            }
            Event::Change(k) => self.change(k),
            Event::End => self.ended = true,
            Event::TcpTimer(_) => unreachable!("a TCP timer in the observe world"),
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fates_are_attributed_from_the_flags() {
        let g = GENERATED;
        // 1 delivered; 2 never sent, 3 sent fresher: superseded; 3 NON
        // sent and lost; 4 sent in a replaced CON, 5 delivered: superseded;
        // 6 never sent, nothing fresher: lost; 7 not generated.
        let changes = [
            0,
            g | DELIVERED,
            g,
            g | SENT,
            g | SENT | REPLACED,
            g | SENT | DELIVERED,
            g,
            0,
        ];
        let mut r = ObserveRecord::default();
        attribute(&changes, &mut r);
        assert_eq!(
            (r.generated, r.delivered, r.superseded, r.lost),
            (6, 2, 2, 2)
        );
    }

    #[test]
    fn the_age_grows_linearly() {
        // Holding a change made at 1 s from 2 s to 4 s: ∫ (t − 1) dt = 4.
        let s = 1_000_000_000;
        assert_eq!(age_area(s, 2 * s, 4 * s), 4.0);
    }
}
