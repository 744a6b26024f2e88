//! The unit-disk radio medium of Cooja (spec `docs/spec/radio-spec.md` §1.2; Cooja's UDGM).
//!
//! - A frame from `s` can be received by nodes within the reception range and
//!   disturbs every node within the interference range.
//! - A node *locks* onto a frame when the frame starts, if the sender is in
//!   reception range, the node is neither transmitting nor deaf (turning its
//!   radio around), and no other transmission within its interference range is
//!   on the air. Otherwise it does not receive that frame at all.
//! - A locked reception is destroyed by any other transmission that starts
//!   within the node's interference range before it ends, and by the node
//!   starting to transmit itself: any overlap, no capture.
//! - When a frame ends, every node locked onto it gets it if intact.
//!
//! What a node senses when it checks the channel depends on the MAC profile
//! and is answered by [`Medium::locked`], [`Medium::strong`] and
//! [`Medium::transmitting`].

use crate::time::Nanos;

use super::layout::Topology;

/// A reception in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reception {
    /// The frame (an index into the grid's frame table).
    pub frame: u32,
    /// Its sender's index.
    pub from: u16,
    /// No other transmission has overlapped it so far.
    pub intact: bool,
}

/// Per-node radio state as the medium sees it.
#[derive(Clone, Debug, Default)]
struct Radio {
    /// The frame this node is sending, if any.
    sending: Option<u32>,
    /// Transmissions of others within interference range on the air now.
    heard: u16,
    /// Of those, transmissions from strictly inside the reception range.
    strong: u16,
    /// The frame this node is locked onto.
    rx: Option<Reception>,
    /// The radio cannot lock onto a frame before this time (turnaround).
    deaf_until: Nanos,
}

/// The medium: who is sending, who hears whom.
#[derive(Clone, Debug)]
pub struct Medium {
    radios: Vec<Radio>,
    /// Transmission starts (for tests and counters).
    pub transmissions: u64,
    /// Receptions destroyed by an overlap.
    pub collisions: u64,
}

impl Medium {
    /// A silent medium over `n` nodes.
    pub fn new(n: usize) -> Self {
        Medium {
            radios: vec![Radio::default(); n],
            transmissions: 0,
            collisions: 0,
        }
    }

    /// Node `s` starts sending `frame` at `now`. Its own reception, if any, is
    /// lost; neighbours lock on or are disturbed as the module docs say.
    pub fn start(&mut self, topo: &Topology, now: Nanos, s: usize, frame: u32) {
        self.transmissions += 1;
        let me = &mut self.radios[s];
        debug_assert!(me.sending.is_none(), "node {} is already sending", s + 1);
        me.sending = Some(frame);
        if let Some(rx) = me.rx.as_mut() {
            if rx.intact {
                self.collisions += 1;
            }
            rx.intact = false;
        }
        for nb in &topo.neighbours[s] {
            let r = &mut self.radios[usize::from(nb.index)];
            let quiet = r.heard == 0;
            r.heard += 1;
            r.strong += u16::from(nb.strong);
            if let Some(rx) = r.rx.as_mut() {
                if rx.intact {
                    self.collisions += 1;
                }
                rx.intact = false;
            } else if nb.receives && quiet && r.sending.is_none() && now >= r.deaf_until {
                r.rx = Some(Reception {
                    frame,
                    from: s as u16,
                    intact: true,
                });
            }
        }
    }

    /// Node `s`'s frame ends. Calls `received(r, reception)` for every node
    /// that was locked onto it (intact or not), in neighbour order; returns
    /// the frame.
    pub fn end(
        &mut self,
        topo: &Topology,
        s: usize,
        mut received: impl FnMut(usize, Reception),
    ) -> u32 {
        let frame = self.radios[s]
            .sending
            .take()
            .expect("a node ends only the frame it sends");
        for nb in &topo.neighbours[s] {
            let r = usize::from(nb.index);
            let radio = &mut self.radios[r];
            radio.heard -= 1;
            radio.strong -= u16::from(nb.strong);
            if radio
                .rx
                .is_some_and(|rx| rx.frame == frame && usize::from(rx.from) == s)
            {
                let rx = radio.rx.take().expect("checked");
                received(r, rx);
            }
        }
        frame
    }

    /// Node `n` cannot lock onto a frame before `until` (radio turnaround).
    pub fn deafen(&mut self, n: usize, until: Nanos) {
        self.radios[n].deaf_until = until;
    }

    /// Whether node `n` is locked onto a frame (Contiki's
    /// `receiving_packet()`; ns-3's "PHY busy receiving").
    pub fn locked(&self, n: usize) -> bool {
        self.radios[n].rx.is_some()
    }

    /// Whether a transmission from strictly inside node `n`'s reception range
    /// is on the air (Cooja's clear-channel assessment: above −95 dBm).
    pub fn strong(&self, n: usize) -> bool {
        self.radios[n].strong > 0
    }

    /// Whether node `n` is sending.
    pub fn transmitting(&self, n: usize) -> bool {
        self.radios[n].sending.is_some()
    }

    /// Transmissions on the air now.
    pub fn on_air(&self) -> usize {
        self.radios.iter().filter(|r| r.sending.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::Routing;
    use super::*;

    /// Nodes at 0, 10, 20, 30 m on a line: reception 10 m, interference 20 m.
    fn line() -> Topology {
        let pos = (0..4).map(|i| [10.0 * f64::from(i), 0.0]).collect();
        Topology::new(pos, 0, 10.0, 20.0, Routing::Root).unwrap()
    }

    fn ends(m: &mut Medium, t: &Topology, s: usize) -> Vec<(usize, bool)> {
        let mut got = Vec::new();
        m.end(t, s, |r, rx| got.push((r, rx.intact)));
        got
    }

    /// One frame from node 1 (index 0): node 2 receives it; node 3 (20 m) is
    /// disturbed but receives nothing.
    #[test]
    fn a_lone_frame() {
        let t = line();
        let mut m = Medium::new(4);
        m.start(&t, 0, 0, 7);
        assert!(m.locked(1) && !m.locked(2) && !m.strong(1));
        assert_eq!(ends(&mut m, &t, 0), [(1, true)]);
        assert_eq!(m.collisions, 0);
    }

    /// The hidden terminal: nodes 1 and 3 (20 m apart) both send to node 2.
    /// Node 3 does not lock onto node 1's frame (it is 20 m away), so it
    /// cannot sense it; its frame starts while node 2 receives node 1's, and
    /// destroys it. Node 2 never locks onto node 3's frame (it was already
    /// locked). Both frames are lost.
    #[test]
    fn the_hidden_terminal_destroys_both() {
        let t = line();
        let mut m = Medium::new(4);
        m.start(&t, 0, 0, 1);
        assert!(!m.locked(2), "node 3 does not sense node 1");
        m.start(&t, 100, 2, 2);
        assert_eq!(m.collisions, 1);
        assert_eq!(ends(&mut m, &t, 0), [(1, false)]);
        // node 4 (index 3) locked onto node 3's frame: it was quiet before
        assert_eq!(ends(&mut m, &t, 2), [(3, true)]);
    }

    /// Interference from 20 m keeps a node from locking: node 4 sends, then
    /// node 1 sends to node 2, which hears node 4's transmission (20 m away)
    /// and therefore does not lock onto node 1's frame at all.
    #[test]
    fn an_interfered_node_does_not_lock() {
        let t = line();
        let mut m = Medium::new(4);
        m.start(&t, 0, 3, 1);
        m.start(&t, 10, 0, 2);
        assert!(!m.locked(1));
        assert_eq!(ends(&mut m, &t, 0), []);
        // node 3 locked onto node 4's frame before node 1 started; node 1's
        // frame (20 m from node 3) then destroyed it.
        assert_eq!(ends(&mut m, &t, 3), [(2, false)]);
    }

    /// A node that starts sending loses what it was receiving, and a deaf
    /// node does not lock. Node 3 does not receive node 2's frame either: it
    /// started while node 1's frame (20 m from node 3) was on the air.
    #[test]
    fn sending_and_deaf_nodes_do_not_receive() {
        let t = line();
        let mut m = Medium::new(4);
        m.start(&t, 0, 0, 1);
        m.start(&t, 5, 1, 2);
        assert_eq!(ends(&mut m, &t, 0), [(1, false)]);
        assert_eq!(ends(&mut m, &t, 1), []);
        m.deafen(1, 1000);
        m.start(&t, 999, 0, 3);
        assert!(!m.locked(1));
        assert_eq!(ends(&mut m, &t, 0), []);
    }
}
