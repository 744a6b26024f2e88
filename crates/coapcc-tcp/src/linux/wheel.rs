//! When a Linux TCP timer really fires: jiffies and the timer wheel
//! (`wheel` switch of [`crate::Mechanisms`]; `docs/decisions/tcp-choices.md`, "TCP
//! timers on Linux's timer wheel").
//!
//! Linux keeps TCP's retransmission (RTO, tail loss probe, early
//! retransmit), delayed-ACK, SYN-ACK and TIME-WAIT timers as `timer_list`
//! entries in jiffies, on the hierarchical timer wheel of Linux 4.8 and
//! later (`kernel/time/timer.c`). Two roundings follow:
//!
//! - a timeout becomes whole jiffies, rounded up (`usecs_to_jiffies`), and
//!   counts from the current jiffy: `expires = jiffies + ⌈d / jiffy⌉`;
//! - the wheel files the timer by its distance `delta = expires − jiffies`
//!   into level `l` (level 0 below 63 jiffies; level `l ≥ 1` from
//!   `63 · 8^(l−1)`), whose buckets are `8^l` jiffies wide, and fires it at
//!   the end of its bucket: `((expires >> 3l) + 1) << 3l` (`calc_index`,
//!   `calc_wheel_index`), so never early and up to one bucket late.
//!
//! At HZ = 250 (4 ms jiffies) a 1.5 s RTO fires up to 32 ms late and a 3 s
//! one up to 256 ms late, and every level-2 timer of every connection fires
//! on the same 256 ms grid. The kernel check's packet traces show exactly
//! this: 560 of 560 retransmissions of a run on one 4 ms phase, 473 on one
//! 256 ms phase.
//!
//! At HZ = 1000 (the `hz1000` switch, [`Wheel::HZ1000`]) the levels are the
//! same in jiffies, so 1 ms jiffies and buckets of 1, 8, 64 and 512 ms.
//!
//! The model's clock is the jiffies clock: jiffy 0 starts at time 0, and
//! both ends of a connection share it (one host in the kernel check).

/// HZ of the modelled kernels: Debian's and Ubuntu's configuration
/// (`CONFIG_HZ_250`), and the kernel the check runs on.
pub const HZ: u64 = 250;

/// One jiffy in nanoseconds at [`HZ`].
pub const JIFFY: u64 = 1_000_000_000 / HZ;

/// Bits per level of the wheel (`LVL_CLK_SHIFT`): each level's buckets are
/// eight times wider than the previous level's.
const LVL_CLK_SHIFT: u32 = 3;

/// Buckets per level (`LVL_SIZE`).
const LVL_SIZE: u64 = 64;

/// Levels of the wheel at HZ > 100 (`LVL_DEPTH`).
const LVL_DEPTH: u32 = 9;

/// The timer wheel of a kernel built with one HZ. The levels are the same
/// in jiffies at every HZ > 100 (`LVL_START`, `LVL_GRAN` of
/// `kernel/time/timer.c`), so only the jiffy changes: at HZ = 1000 the
/// buckets are 1, 8, 64, 512 ms wide and level 1 starts at 63 ms, as the
/// "HZ 1000 steps" table of that file gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wheel {
    /// One jiffy in nanoseconds.
    pub jiffy: u64,
}

impl Wheel {
    /// `CONFIG_HZ_250` ([`HZ`]): 4 ms jiffies (the `wheel` switch alone).
    pub const HZ250: Wheel = Wheel { jiffy: JIFFY };
    /// `CONFIG_HZ_1000`: 1 ms jiffies (the `hz1000` switch).
    pub const HZ1000: Wheel = Wheel {
        jiffy: 1_000_000_000 / 1000,
    };

    /// `d` nanoseconds as whole jiffies, rounded up.
    pub fn to_jiffies(self, d: u64) -> u64 {
        d.div_ceil(self.jiffy)
    }

    /// `d` rounded up to whole jiffies, in nanoseconds (what a timeout kept
    /// in jiffies, like `icsk_rto`, really is).
    pub fn round_up(self, d: u64) -> u64 {
        self.to_jiffies(d) * self.jiffy
    }

    /// When a timer armed at `now` (ns) to run `d` ns later fires, in ns.
    pub fn deadline(self, now: u64, d: u64) -> u64 {
        self.arm(now, d).at
    }

    /// A timer armed at `now` (ns) to run `d` ns later: when it fires and
    /// the level it waits in.
    pub fn arm(self, now: u64, d: u64) -> Due {
        let now_j = now / self.jiffy;
        let (level, at) = bucket(now_j, now_j + self.to_jiffies(d));
        Due {
            at: at * self.jiffy,
            level: Some(level as u8),
        }
    }
}

/// The first distance (in jiffies) filed into level `lvl` (`LVL_START`).
fn level_start(lvl: u32) -> u64 {
    (LVL_SIZE - 1) << ((lvl - 1) * LVL_CLK_SHIFT)
}

/// The level a timer armed at jiffy `now_j` to expire at jiffy `expires`
/// waits in, and the jiffy at which it fires.
fn bucket(now_j: u64, expires: u64) -> (u32, u64) {
    let delta = expires - now_j;
    let lvl = (1..LVL_DEPTH)
        .take_while(|&l| delta >= level_start(l))
        .last()
        .unwrap_or(0);
    let shift = lvl * LVL_CLK_SHIFT;
    (lvl, ((expires >> shift) + 1) << shift)
}

/// When a pending timer fires (ns) and, for a timer on the wheel, the level
/// of its bucket.
///
/// At one jiffy the wheel runs the expired buckets from the highest level
/// down, and each bucket from the timer armed last to the one armed first:
/// `enqueue_timer` adds at the head of the bucket's list, `__run_timers`
/// expires the collected levels from the top, `expire_timers` takes the
/// head. A timer re-armed into the bucket it waits in keeps its place
/// (`__mod_timer` with an unchanged index). A driver of many sockets
/// orders their timers so: `docs/decisions/tcp-choices.md`, "Timers of one bucket,
/// last armed first".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Due {
    /// When the timer fires, in ns.
    pub at: u64,
    /// Its level on the wheel; `None` off the wheel (fires exactly when due).
    pub level: Option<u8>,
}

impl Due {
    /// A timer that fires exactly at `at`, off the wheel.
    pub fn exact(at: u64) -> Self {
        Due { at, level: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;
    const W: Wheel = Wheel::HZ250;

    fn deadline(now: u64, d: u64) -> u64 {
        W.deadline(now, d)
    }

    fn arm(now: u64, d: u64) -> Due {
        W.arm(now, d)
    }

    #[test]
    fn jiffies_round_up() {
        assert_eq!(JIFFY, 4 * MS);
        assert_eq!(W.to_jiffies(0), 0);
        assert_eq!(W.to_jiffies(1), 1);
        assert_eq!(W.to_jiffies(4 * MS), 1);
        assert_eq!(W.to_jiffies(4 * MS + 1), 2);
        assert_eq!(W.round_up(201 * MS), 204 * MS);
    }

    #[test]
    fn level_zero_fires_one_jiffy_after_expiry() {
        // Armed at 10 ms (jiffy 2) for 200 ms (50 jiffies): expires at jiffy
        // 52, delta 50 < 63, level 0: fires at jiffy 53 = 212 ms.
        assert_eq!(deadline(10 * MS, 200 * MS), 212 * MS);
    }

    #[test]
    fn level_one_rounds_to_32_ms() {
        // At 0 for 1.5 s: 375 jiffies, 63 ≤ 375 < 504, level 1 (8 jiffies):
        // (375 >> 3) + 1 = 47 → jiffy 376 = 1.504 s.
        assert_eq!(deadline(0, 1500 * MS), 1504 * MS);
        // At 1 s (jiffy 250) for 1 s: expires 500; (500 >> 3) + 1 = 63 →
        // jiffy 504 = 2.016 s.
        assert_eq!(deadline(1000 * MS, 1000 * MS), 2016 * MS);
    }

    #[test]
    fn level_two_rounds_to_256_ms() {
        // At 0 for 3 s: 750 jiffies, 504 ≤ 750 < 4032, level 2 (64 jiffies):
        // (750 >> 6) + 1 = 12 → jiffy 768 = 3.072 s.
        assert_eq!(deadline(0, 3000 * MS), 3072 * MS);
        // Two timers armed 100 ms apart land in the same bucket.
        assert_eq!(deadline(100 * MS, 2900 * MS), 3072 * MS);
    }

    #[test]
    fn level_three_rounds_to_2048_ms() {
        // At 0 for 20 s: 5000 jiffies, 4032 ≤ 5000 < 32256, level 3
        // (512 jiffies): (5000 >> 9) + 1 = 10 → jiffy 5120 = 20.48 s.
        assert_eq!(deadline(0, 20_000 * MS), 20_480 * MS);
        // The maximum RTO, 120 s = 30000 jiffies: (30000 >> 9) + 1 = 59 →
        // jiffy 30208 = 120.832 s.
        assert_eq!(deadline(0, 120_000 * MS), 120_832 * MS);
    }

    #[test]
    fn arming_tells_the_level() {
        // 200 ms: 50 jiffies, level 0; 1 s: 250, level 1; 3 s: 750, level 2
        // (fires at (750 >> 6) + 1 = 12 → jiffy 768 = 3.072 s); 20 s: level 3.
        let level = |d| arm(0, d).level;
        assert_eq!(level(200 * MS), Some(0));
        assert_eq!(level(1000 * MS), Some(1));
        assert_eq!(
            arm(0, 3000 * MS),
            Due {
                at: 3072 * MS,
                level: Some(2)
            }
        );
        assert_eq!(level(20_000 * MS), Some(3));
        // The boundaries: 62 jiffies is level 0, 63 level 1; 503 level 1,
        // 504 level 2.
        assert_eq!(level(62 * JIFFY), Some(0));
        assert_eq!(level(63 * JIFFY), Some(1));
        assert_eq!(level(503 * JIFFY), Some(1));
        assert_eq!(level(504 * JIFFY), Some(2));
    }

    #[test]
    fn hz1000_buckets_follow_the_kernel_table() {
        // kernel/time/timer.c, "HZ 1000 steps": level 0 granularity 1 ms up
        // to 63 ms, level 1 8 ms up to 511 ms, level 2 64 ms up to 4095 ms,
        // level 3 512 ms.
        let w = Wheel::HZ1000;
        assert_eq!(w.jiffy, MS);
        // 200 ms armed at 0: 200 jiffies, 63 ≤ 200 < 504: level 1,
        // (200 >> 3) + 1 = 26 → jiffy 208 = 208 ms (4 ms jiffies: 50, level 0,
        // 204 ms).
        assert_eq!(
            w.arm(0, 200 * MS),
            Due {
                at: 208 * MS,
                level: Some(1)
            }
        );
        // 40 ms (TCP_DELACK_MIN): 40 jiffies < 63, level 0: 41 ms.
        assert_eq!(
            w.arm(0, 40 * MS),
            Due {
                at: 41 * MS,
                level: Some(0)
            }
        );
        // 3 s: 3000 jiffies, 504 ≤ 3000 < 4032: level 2 (64 ms),
        // (3000 >> 6) + 1 = 47 → 3008 ms (4 ms jiffies: 3072 ms).
        assert_eq!(
            w.arm(0, 3000 * MS),
            Due {
                at: 3008 * MS,
                level: Some(2)
            }
        );
        // 20 s: 20000 jiffies ≥ 4032: level 3 (512 ms),
        // (20000 >> 9) + 1 = 40 → 20480 ms.
        assert_eq!(w.deadline(0, 20_000 * MS), 20_480 * MS);
        // RTOs in whole 1 ms jiffies: 201.5 ms → 202 ms.
        assert_eq!(w.round_up(201 * MS + MS / 2), 202 * MS);
    }

    #[test]
    fn never_early_and_at_most_one_bucket_late() {
        for now in (0..3000).map(|i| i * 7 * MS / 3) {
            for d in [1, 3 * MS, 200 * MS, 999 * MS, 2500 * MS, 9 * 1000 * MS] {
                let t = deadline(now, d);
                assert!(t >= now + d, "early: now {now} d {d} t {t}");
                let gran = if d < 252 * MS {
                    JIFFY
                } else if d < 2016 * MS {
                    8 * JIFFY
                } else {
                    64 * JIFFY
                };
                assert!(
                    t <= now + d + gran + 2 * JIFFY,
                    "late: now {now} d {d} t {t}"
                );
            }
        }
    }
}
