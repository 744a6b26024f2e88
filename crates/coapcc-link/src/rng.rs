//! Deterministic random streams.
//!
//! A run is a pure function of (scenario, seed, replication index): every entity
//! that needs randomness (each client, each link direction's error state and loss
//! draws, each path's jitter) gets its own stream, derived from the run's seed by
//! hashing a tag and an index. Streams never share draws, so adding a packet on one
//! link does not shift the random numbers another entity sees.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// SplitMix64's finaliser: a strong 64-bit mixing function.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives a child seed from a parent seed, a stream tag and an index.
pub fn derive(parent: u64, tag: Stream, index: u64) -> u64 {
    mix64(parent ^ mix64((tag as u64) << 48 ^ mix64(index)))
}

/// What a random stream is for; part of the derivation so streams never collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stream {
    /// One replication of a scenario.
    Replication = 1,
    /// One client (timer dithering, batch sizes, Message IDs).
    Client = 2,
    /// A link direction's error-state sojourns.
    ErrorState = 3,
    /// A link direction's per-packet loss draws.
    ErrorLoss = 4,
    /// A path's per-packet delay jitter.
    PathJitter = 5,
    /// A radio node's MAC (backoffs, first sequence number and tag).
    Mac = 6,
    /// A workload's own draws (start offsets, ON/OFF phases).
    Workload = 7,
    /// A radio channel's bit errors (the star's `bit_error_rate`).
    Channel = 8,
}

/// A deterministic generator (xoshiro256++).
#[derive(Clone, Debug)]
pub struct SimRng(Xoshiro256PlusPlus);

impl SimRng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SimRng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `lo..=hi`.
    pub fn int_in(&mut self, lo: u32, hi: u32) -> u32 {
        let span = u64::from(hi - lo) + 1;
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u32
    }
}

/// A `SimRng` is a `rand_core` generator, so it can drive anything written
/// against that trait (the algorithms' `coapcc_rto::Random` among them).
impl RngCore for SimRng {
    fn next_u32(&mut self) -> u32 {
        (self.0.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.0.fill_bytes(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_tag_and_index() {
        let a = derive(1, Stream::Client, 0);
        assert_ne!(a, derive(1, Stream::Client, 1));
        assert_ne!(a, derive(1, Stream::PathJitter, 0));
        assert_ne!(a, derive(2, Stream::Client, 0));
        assert_eq!(a, derive(1, Stream::Client, 0));
    }

    #[test]
    fn uniform_and_int_ranges() {
        let mut r = SimRng::new(7);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            let k = r.int_in(1, 10);
            assert!((1..=10).contains(&k));
            seen[(k - 1) as usize] += 1;
        }
        // Each of the ten values appears about 1000 times.
        assert!(seen.iter().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    }
}
