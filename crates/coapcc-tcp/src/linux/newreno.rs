//! NewReno congestion control (docs/spec/transport-tcp-spec.md §2): slow start and congestion
//! avoidance (RFC 5681), fast retransmit on the third duplicate ACK and fast
//! recovery with partial ACKs (RFC 6582), and the loss window after a
//! retransmission timeout.
//!
//! Windows are in bytes. Slow start grows by the bytes acknowledged, at most
//! 2·MSS per ACK (RFC 3465, L = 2); congestion avoidance adds one MSS per
//! cwnd of acknowledged bytes. As in Linux (`tcp_is_cwnd_limited`), the window
//! grows only while the sender is using it: in slow start while the flight
//! before the ACK was more than half of cwnd, in congestion avoidance while it
//! was within one MSS of cwnd. Without this, an application-limited CoAP
//! connection would inflate cwnd without bound.
//!
//! The state machine decides; the socket moves bytes. `on_*` return whether
//! the first unacknowledged segment must be retransmitted now.

/// NewReno state of one sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewReno {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged toward the next congestion-avoidance increase.
    ca_acked: u64,
    dupacks: u32,
    /// RFC 6582 `recover`, as the offset one past the highest sent.
    recover: u64,
    in_recovery: bool,
    /// Whether the next partial ACK is the first of this recovery.
    first_partial: bool,
}

/// What the sender must do after an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckAction {
    /// Retransmit the first unacknowledged segment now.
    pub retransmit: bool,
    /// Restart the retransmission timer (false only for a later partial ACK of
    /// a recovery: RFC 6582's "impatient" variant resets it on the first).
    pub restart_timer: bool,
    /// Fast recovery started (third duplicate ACK).
    pub entered_recovery: bool,
    /// Fast recovery ended (full ACK).
    pub exited_recovery: bool,
}

impl NewReno {
    /// Initial state: cwnd = `initial_segments`·MSS, ssthresh unbounded.
    pub fn new(mss: u64, initial_segments: u32) -> Self {
        NewReno {
            mss,
            cwnd: mss * u64::from(initial_segments.max(1)),
            ssthresh: u64::MAX,
            ca_acked: 0,
            dupacks: 0,
            recover: 0,
            in_recovery: false,
            first_partial: true,
        }
    }

    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold (bytes; `u64::MAX` until the first loss).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// Whether fast recovery is under way.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Duplicate ACKs counted since the last new ACK.
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }

    /// Sets the MSS (after the handshake) and the initial window in segments.
    pub fn reset_window(&mut self, mss: u64, segments: u32) {
        self.mss = mss;
        self.cwnd = mss * u64::from(segments.max(1));
    }

    fn loss_ssthresh(&self, flight: u64) -> u64 {
        (flight / 2).max(2 * self.mss)
    }

    /// An ACK that acknowledges `acked` new bytes, moving `snd_una` to
    /// `una`. `flight_before` is the flight size before it, `snd_max` one past
    /// the highest offset sent.
    pub fn on_new_ack(
        &mut self,
        acked: u64,
        una: u64,
        flight_before: u64,
        snd_max: u64,
    ) -> AckAction {
        self.dupacks = 0;
        let mut act = AckAction {
            restart_timer: true,
            ..AckAction::default()
        };
        if self.in_recovery {
            if una >= self.recover {
                // Full ACK (RFC 6582 §3.2 step 3, option 1).
                let flight = snd_max - una;
                self.cwnd = self.ssthresh.min(flight.max(self.mss) + self.mss);
                self.in_recovery = false;
                self.ca_acked = 0;
                act.exited_recovery = true;
            } else {
                // Partial ACK (step 4): retransmit, deflate, add back one MSS.
                act.retransmit = true;
                act.restart_timer = self.first_partial;
                self.first_partial = false;
                let add_back = if acked >= self.mss { self.mss } else { 0 };
                self.cwnd = (self.cwnd.saturating_sub(acked) + add_back).max(self.mss);
            }
            return act;
        }
        if self.cwnd < self.ssthresh {
            if 2 * flight_before > self.cwnd {
                let grow = acked.min(2 * self.mss);
                self.cwnd = self
                    .cwnd
                    .saturating_add(grow)
                    .min(self.ssthresh.max(self.cwnd));
            }
        } else if flight_before + self.mss > self.cwnd {
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
        act
    }

    /// A duplicate ACK (RFC 5681 §2 definition, checked by the caller).
    /// `una` is the current `snd_una`, `flight` the flight size.
    pub fn on_dupack(&mut self, una: u64, flight: u64, snd_max: u64) -> AckAction {
        self.dupacks += 1;
        let mut act = AckAction::default();
        if self.in_recovery {
            // Step 5: inflate by one MSS per further duplicate.
            self.cwnd += self.mss;
        } else if self.dupacks == 3 && una >= self.recover {
            // Steps 1–2: fast retransmit, enter fast recovery.
            self.ssthresh = self.loss_ssthresh(flight);
            self.cwnd = self.ssthresh + 3 * self.mss;
            self.recover = snd_max;
            self.in_recovery = true;
            self.first_partial = true;
            self.ca_acked = 0;
            act.retransmit = true;
            act.entered_recovery = true;
        }
        act
    }

    /// A retransmission timeout. `first` is false for a repeated timeout of
    /// the same data, which keeps ssthresh (RFC 5681 §3.1, note to eq. 4).
    pub fn on_rto(&mut self, flight: u64, snd_max: u64, first: bool) {
        if first {
            self.ssthresh = self.loss_ssthresh(flight);
        }
        self.cwnd = self.mss;
        self.ca_acked = 0;
        self.dupacks = 0;
        self.in_recovery = false;
        self.recover = snd_max;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MSS: u64 = 256;

    #[test]
    fn slow_start_then_avoidance() {
        let mut r = NewReno::new(MSS, 2);
        assert_eq!(r.cwnd(), 512);
        // flight 512 = cwnd: grows by min(acked, 2 MSS).
        r.on_new_ack(512, 513, 512, 513);
        assert_eq!(r.cwnd(), 1024);
        // Application-limited: flight 100 of cwnd 1024 → no growth.
        r.on_new_ack(100, 613, 100, 613);
        assert_eq!(r.cwnd(), 1024);
        r.ssthresh = 1024; // now in congestion avoidance
        for i in 0..3 {
            r.on_new_ack(256, 1000 + i, 1024, 2000);
            assert_eq!(r.cwnd(), 1024);
        }
        r.on_new_ack(256, 2000, 1024, 2000);
        assert_eq!(r.cwnd(), 1280);
    }

    #[test]
    fn three_dupacks_enter_recovery() {
        let mut r = NewReno::new(MSS, 10);
        assert!(!r.on_dupack(1, 2560, 2561).retransmit);
        assert!(!r.on_dupack(1, 2560, 2561).retransmit);
        let a = r.on_dupack(1, 2560, 2561);
        assert!(a.retransmit && a.entered_recovery);
        assert_eq!(r.ssthresh(), 1280);
        assert_eq!(r.cwnd(), 1280 + 768);
        r.on_dupack(1, 2560, 2561);
        assert_eq!(r.cwnd(), 1280 + 1024);
        // Partial ACK of 512 bytes: retransmit, cwnd - 512 + 256.
        let p = r.on_new_ack(512, 513, 2560, 2561);
        assert!(p.retransmit && p.restart_timer);
        assert_eq!(r.cwnd(), 2304 - 512 + 256);
        let p2 = r.on_new_ack(100, 613, 2048, 2561);
        assert!(p2.retransmit && !p2.restart_timer);
        assert_eq!(r.cwnd(), 2048 - 100);
        // Full ACK: cwnd = min(ssthresh, max(flight, mss) + mss) = min(1280, 512).
        let f = r.on_new_ack(1948, 2561, 1948, 2561);
        assert!(f.exited_recovery && !f.retransmit);
        assert_eq!(r.cwnd(), 512);
        assert!(!r.in_recovery());
    }

    #[test]
    fn no_second_fast_retransmit_below_recover() {
        let mut r = NewReno::new(MSS, 10);
        r.on_rto(2560, 2561, true);
        assert_eq!(r.cwnd(), MSS);
        assert_eq!(r.ssthresh(), 1280);
        for _ in 0..3 {
            assert!(!r.on_dupack(1, 2560, 2561).retransmit);
        }
        // A repeated timeout keeps ssthresh.
        r.on_rto(100, 2561, false);
        assert_eq!(r.ssthresh(), 1280);
    }
}
