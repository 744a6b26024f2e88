//! Driving a `coapcc_link` network on the wall clock: what the UDP relay
//! ([`crate::emulate`]) and the IP relay ([`crate::ip`]) share. The driver
//! holds each packet's data while the model has it and keeps the model's
//! clock: a packet enters at its arrival time, or at the time of the last
//! event handled if that is later (model time never goes back); events are
//! handled in time order up to a bound the caller gives (the packet's
//! arrival before it enters, the wall clock plus the early margin after).

use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output, PacketId};

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
    slots: Vec<Option<T>>,
    free: Vec<PacketId>,
    count: usize,
}

impl<N: Network, T> Driver<N, T> {
    pub(crate) fn new(net: N) -> Self {
        Driver {
            net,
            model_now: 0,
            slots: Vec::new(),
            free: Vec::new(),
            count: 0,
        }
    }

    /// Packets inside the model.
    pub(crate) fn held(&self) -> usize {
        self.count
    }

    /// The time a packet arriving at `at` enters the model.
    pub(crate) fn entry_time(&self, at: Nanos) -> Nanos {
        self.model_now.max(at)
    }

    /// Hands a packet that arrived at `at` to the model (at
    /// [`Self::entry_time`]); `Err` gives it back with its cause if the
    /// model dropped it at once.
    pub(crate) fn send(
        &mut self,
        at: Nanos,
        (src, dst): (NodeId, NodeId),
        (transport_header, payload): (u16, u16),
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
                self.slots[id as usize] = Some(item);
                self.count += 1;
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
            let item = self.slots[id as usize].take().expect("a held packet");
            self.free.push(id);
            self.count -= 1;
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
