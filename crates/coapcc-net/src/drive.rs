//! Driving a `coapcc_link` network on the wall clock: what the UDP relay
//! ([`crate::emulate`]) and the IP relay ([`crate::ip`]) share. The driver
//! holds each packet's data while the model has it and keeps the model's
//! clock: a packet enters at its arrival time, or at the time of the last
//! event handled if that is later (model time never goes back); events are
//! handled in time order up to a bound the caller gives (the packet's
//! arrival before it enters, the wall clock plus the early margin after).
//!
//! The driver also bounds what it holds: at most a given number of IP
//! bytes per direction inside the model (queued, being sent or
//! propagating), whatever the model's own buffer (an infinite one never
//! drops). A packet that would exceed it is not handed to the model
//! ([`Driver::admits`]); the relays refuse and count it. The default,
//! [`DEFAULT_MAX_HELD_BYTES`], is above the 1 410 000 B that stand for an
//! infinite buffer in the evaluations, so on their networks the model's
//! buffer, not this bound, decides every drop.

use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output, PacketId};

/// The default bound on IP bytes held per direction: 4 MiB.
pub const DEFAULT_MAX_HELD_BYTES: u64 = 4 << 20;

/// What became of a packet.
pub(crate) enum Fate<T> {
    /// It reached its destination.
    Delivered(T),
    /// The model dropped it.
    Dropped(DropCause, T),
}

/// A network and the packets inside it (see the module docs).
pub(crate) struct Driver<N, T> {
    /// The network model.
    pub(crate) net: N,
    model_now: Nanos,
    /// Each held packet, its direction (0 up, 1 down) and IP bytes.
    slots: Vec<Option<(T, usize, u64)>>,
    free: Vec<PacketId>,
    count: usize,
    max_held_bytes: u64,
    held_bytes: [u64; 2],
    peak_held_bytes: [u64; 2],
}

impl<N: Network, T> Driver<N, T> {
    /// A driver holding at most `max_held_bytes` IP bytes per direction.
    pub(crate) fn new(net: N, max_held_bytes: u64) -> Self {
        Driver {
            net,
            model_now: 0,
            slots: Vec::new(),
            free: Vec::new(),
            count: 0,
            max_held_bytes,
            held_bytes: [0; 2],
            peak_held_bytes: [0; 2],
        }
    }

    /// Packets inside the model.
    pub(crate) fn held(&self) -> usize {
        self.count
    }

    /// IP bytes inside the model now in direction `up` (toward the server)
    /// or down.
    pub(crate) fn held_bytes(&self, up: bool) -> u64 {
        self.held_bytes[usize::from(!up)]
    }

    /// The most IP bytes ever held at once in that direction.
    pub(crate) fn peak_held_bytes(&self, up: bool) -> u64 {
        self.peak_held_bytes[usize::from(!up)]
    }

    /// Whether a packet of `bytes` IP bytes in direction `up` stays within
    /// the bound.
    pub(crate) fn admits(&self, up: bool, bytes: u64) -> bool {
        self.held_bytes(up) + bytes <= self.max_held_bytes
    }

    /// The time a packet arriving at `at` enters the model.
    pub(crate) fn entry_time(&self, at: Nanos) -> Nanos {
        self.model_now.max(at)
    }

    /// Hands a packet of `ip_bytes` in direction `up` that arrived at `at`
    /// to the model (at [`Self::entry_time`]); `Err` gives it back with its
    /// cause if the model dropped it at once. The caller checks
    /// [`Self::admits`] first.
    pub(crate) fn send(
        &mut self,
        at: Nanos,
        (src, dst): (NodeId, NodeId),
        (transport_header, payload): (u16, u16),
        (up, ip_bytes): (bool, u64),
        item: T,
    ) -> Result<(), (DropCause, T)> {
        self.model_now = self.entry_time(at);
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as PacketId
            }
        };
        let d = Datagram {
            id,
            src,
            dst,
            transport_header,
            payload,
            unnecessary: false,
        };
        match self.net.send(self.model_now, d) {
            Ok(()) => {
                let dir = usize::from(!up);
                self.slots[id as usize] = Some((item, dir, ip_bytes));
                self.count += 1;
                self.held_bytes[dir] += ip_bytes;
                self.peak_held_bytes[dir] = self.peak_held_bytes[dir].max(self.held_bytes[dir]);
                Ok(())
            }
            Err(cause) => {
                self.free.push(id);
                Err((cause, item))
            }
        }
    }

    /// The next packet the model delivers or drops by `until`, with the
    /// time; events that produce nothing are handled on the way.
    pub(crate) fn poll(&mut self, until: Nanos) -> Option<(Nanos, Fate<T>)> {
        loop {
            let (at, out) = self.net.poll(until)?;
            self.model_now = at;
            let (id, cause) = match out {
                Some(Output::Delivered { id, .. }) => (id, None),
                Some(Output::Dropped { id, cause }) => (id, Some(cause)),
                None => continue,
            };
            let (item, dir, bytes) = self.slots[id as usize].take().expect("a held packet");
            self.free.push(id);
            self.count -= 1;
            self.held_bytes[dir] -= bytes;
            return Some((
                at,
                match cause {
                    None => Fate::Delivered(item),
                    Some(c) => Fate::Dropped(c, item),
                },
            ));
        }
    }
}
