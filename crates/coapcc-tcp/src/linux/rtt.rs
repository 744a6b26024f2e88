//! Linux's RTT estimator and RTO (docs/spec/transport-tcp-spec.md §2; RFC 6298 as Linux
//! implements it in `tcp_rtt_estimator` / `__tcp_set_rto`).
//!
//! Kept in Linux's scaled integer form, in nanoseconds: `srtt8` = 8·SRTT,
//! `mdev4` = 4·mdev, `mdev_max4` and `rttvar4` likewise ×4, so that
//! `RTO = SRTT + RTTVAR4` is RFC 6298's `SRTT + 4·RTTVAR`.
//!
//! - First sample R: SRTT = R, mdev4 = 2R, RTTVAR4 = max(2R, rto_min), so
//!   RTO = R + max(2R, 200 ms).
//! - Later: error e = R − SRTT (old SRTT); SRTT += e/8. If R < SRTT and |e|
//!   exceeds mdev, mdev moves toward |e| with gain 1/32 instead of 1/4 (Linux's
//!   damping of a falling RTT); otherwise gain 1/4. A larger mdev raises
//!   `mdev_max` and RTTVAR at once; once per window of data (when `snd_una`
//!   passes the `rtt_seq` mark) RTTVAR decays a quarter of the way toward
//!   `mdev_max`, which restarts at `rto_min`.
//!
//! The estimator does not know about backoff or Karn's rule: the socket feeds
//! it valid samples only and keeps the backed-off RTO itself.

/// Linux's smoothed RTT, mean deviation and RTO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    srtt8: i64,
    mdev4: i64,
    mdev_max4: i64,
    rttvar4: i64,
    rtt_seq: u64,
    rto_min: i64,
    has_sample: bool,
}

impl RttEstimator {
    /// An estimator with no sample; `rto_min` floors the variation term.
    pub fn new(rto_min: u64) -> Self {
        RttEstimator {
            srtt8: 0,
            mdev4: 0,
            mdev_max4: 0,
            rttvar4: 0,
            rtt_seq: 0,
            rto_min: rto_min as i64,
            has_sample: false,
        }
    }

    /// Feeds one valid sample `r` (ns). `snd_una` / `snd_nxt` are the sender's
    /// sequence offsets after this ACK; they pace the once-per-window decay.
    pub fn sample(&mut self, r: u64, snd_una: u64, snd_nxt: u64) {
        let r = (r as i64).max(1);
        if !self.has_sample {
            self.has_sample = true;
            self.srtt8 = r << 3;
            self.mdev4 = r << 1;
            self.rttvar4 = self.mdev4.max(self.rto_min);
            self.mdev_max4 = self.rttvar4;
            self.rtt_seq = snd_nxt;
            return;
        }
        let mut m = r - (self.srtt8 >> 3);
        self.srtt8 += m;
        if m < 0 {
            m = -m - (self.mdev4 >> 2);
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= self.mdev4 >> 2;
        }
        self.mdev4 += m;
        if self.mdev4 > self.mdev_max4 {
            self.mdev_max4 = self.mdev4;
            if self.mdev_max4 > self.rttvar4 {
                self.rttvar4 = self.mdev_max4;
            }
        }
        if snd_una > self.rtt_seq {
            if self.mdev_max4 < self.rttvar4 {
                self.rttvar4 -= (self.rttvar4 - self.mdev_max4) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max4 = self.rto_min;
        }
        self.srtt8 = self.srtt8.max(1);
    }

    /// Whether any sample was taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// Smoothed RTT (ns), if sampled.
    pub fn srtt(&self) -> Option<u64> {
        self.has_sample.then_some((self.srtt8 >> 3) as u64)
    }

    /// RTTVAR·4 as Linux keeps it (ns), if sampled.
    pub fn rttvar4(&self) -> Option<u64> {
        self.has_sample.then_some(self.rttvar4 as u64)
    }

    /// The unbacked-off RTO, SRTT + 4·RTTVAR (ns), if sampled.
    pub fn rto(&self) -> Option<u64> {
        self.has_sample
            .then_some(((self.srtt8 >> 3) + self.rttvar4) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn first_sample_small_rtt_floors_at_200ms() {
        let mut e = RttEstimator::new(200 * MS);
        e.sample(50 * MS, 1, 10);
        // R + max(2R, 0.2) = 50 + 200
        assert_eq!(e.rto(), Some(250 * MS));
    }

    #[test]
    fn first_sample_large_rtt_is_three_r() {
        let mut e = RttEstimator::new(200 * MS);
        e.sample(400 * MS, 1, 10);
        assert_eq!(e.rto(), Some(1200 * MS));
        assert_eq!(e.srtt(), Some(400 * MS));
    }

    #[test]
    fn falling_rtt_is_damped_with_gain_1_32() {
        let mut e = RttEstimator::new(200 * MS);
        // srtt 400, mdev4 800, rttvar4 800
        e.sample(400 * MS, 1, 10);
        // R = 80: e = -320, |e| - mdev(200) = 120 > 0 → /8 = 15 → mdev4 = 815
        // srtt = 400 - 40 = 360; rttvar4 = mdev_max4 = 815 (no decay: snd_una 5 <= rtt_seq 10)
        e.sample(80 * MS, 5, 12);
        assert_eq!(e.srtt(), Some(360 * MS));
        assert_eq!(e.rttvar4(), Some(815 * MS));
        assert_eq!(e.rto(), Some(1175 * MS));
    }

    #[test]
    fn rising_rtt_uses_gain_1_4() {
        let mut e = RttEstimator::new(200 * MS);
        // srtt 100, mdev4 200, rttvar4 200
        e.sample(100 * MS, 1, 10);
        // R = 300: e = 200 → srtt 125; m = 200 - 50 = 150 → mdev4 350 > rttvar4 → 350
        e.sample(300 * MS, 5, 12);
        assert_eq!(e.srtt(), Some(125 * MS));
        assert_eq!(e.rttvar4(), Some(350 * MS));
        assert_eq!(e.rto(), Some(475 * MS));
    }

    #[test]
    fn rttvar_decays_once_per_window() {
        let mut e = RttEstimator::new(200 * MS);
        e.sample(100 * MS, 1, 10);
        // rttvar4 350, mdev_max4 350, rtt_seq 10
        e.sample(300 * MS, 5, 12);
        // R = 125 = srtt: e = 0; m = -(350>>2) = -87.5ms → mdev4 = 262.5
        // snd_una 11 > rtt_seq 10 → rttvar4 -= (350 - 350)/4 = 350 → mdev_max reset to 200
        e.sample(125 * MS, 11, 20);
        assert_eq!(e.rttvar4(), Some(350 * MS));
        // next window: mdev4 = 262.5 - 65.625 = 196.875 (< mdev_max 200)
        // snd_una 21 > 20: rttvar4 -= (350 - 200)/4 = 37.5 → 312.5
        e.sample(125 * MS, 21, 30);
        assert_eq!(e.rttvar4(), Some(312_500_000));
    }
}
