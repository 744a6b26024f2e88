//! Keys that tie stored results to exactly what produced them.
//!
//! A run's key is the SHA-256 of [`MODEL_VERSION`], the canonical JSON of its
//! full run spec (the network's `SimNetwork::RunSpec`: a dumbbell [`RunSpec`],
//! a grid [`grid::RunSpec`](coapcc_sim::grid::RunSpec) or a star
//! [`star::RunSpec`](coapcc_sim::star::RunSpec)) and its replication index. Runs are pure functions of these
//! (spec `docs/spec/architecture-spec.md`: determinism), so a key names one result forever: a
//! store never recomputes a key it holds, and any change to a parameter, to the
//! seed, or to the model version gives new keys.

#[cfg(doc)]
use coapcc_sim::dumbbell::RunSpec;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The version of the simulation model whose results a store holds. **Bump it
/// whenever a change to the testbed, the CoAP endpoints or an algorithm changes
/// any run's outcome**: results of other versions are then never reused.
pub const MODEL_VERSION: &str = coapcc_sim::MODEL_VERSION;

/// The canonical text of a run spec: its JSON with fields in declaration order
/// (serde's derive) and shortest round-trip floats.
pub fn canonical<S: Serialize + ?Sized>(spec: &S) -> String {
    serde_json::to_string(spec).expect("a run spec serialises")
}

/// The key of replication `replication` of `spec` (a dumbbell [`RunSpec`] or a
/// grid run spec — the same function for both): 64 hex digits.
pub fn run_key<S: Serialize + ?Sized>(spec: &S, replication: u32) -> String {
    let mut h = Sha256::new();
    h.update(b"coapcc-run\n");
    h.update(MODEL_VERSION.as_bytes());
    h.update(b"\n");
    h.update(canonical(spec).as_bytes());
    h.update(b"\n");
    h.update(replication.to_string().as_bytes());
    hex(&h.finalize())
}

/// The keys of replications `0..replications` of `spec` ([`run_key`]), in
/// order.
pub fn run_keys<S: Serialize + ?Sized>(spec: &S, replications: u32) -> Vec<String> {
    (0..replications).map(|r| run_key(spec, r)).collect()
}

/// SHA-256 of `parts`, each followed by a newline, in hex.
pub fn digest<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_sim::dumbbell::{Group, RunSpec};
    use coapcc_sim::{AlgorithmSpec, Workload};

    fn spec() -> RunSpec {
        RunSpec {
            network: coapcc_link::dumbbell::Config::default(),
            coap: Default::default(),
            groups: vec![Group {
                algorithm: AlgorithmSpec::named("default"),
                workload: Workload::default(),
                clients: 10,
            }],
            seed: 1,
        }
    }

    #[test]
    fn sha256_of_the_empty_string() {
        // FIPS 180-2 test vector.
        let mut h = Sha256::new();
        h.update(b"");
        assert_eq!(
            hex(&h.finalize()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn every_input_changes_the_key() {
        let base = run_key(&spec(), 0);
        assert_eq!(base.len(), 64);
        assert_eq!(base, run_key(&spec(), 0), "stable");
        assert_ne!(base, run_key(&spec(), 1), "replication");
        let mut s = spec();
        s.seed = 2;
        assert_ne!(base, run_key(&s, 0), "seed");
        let mut s = spec();
        s.groups[0].algorithm.cap = Some(60.0);
        assert_ne!(base, run_key(&s, 0), "algorithm parameter");
        let mut s = spec();
        s.network.path_delay_ms = [10.0, 20.5];
        assert_ne!(base, run_key(&s, 0), "network");
        let mut s = spec();
        s.groups[0].workload.exchanges = 49;
        assert_ne!(base, run_key(&s, 0), "workload");
    }

    #[test]
    fn grid_keys_hash_the_grid_spec_json() {
        use coapcc_sim::grid;
        let spec = grid::RunSpec {
            network: Default::default(),
            coap: Default::default(),
            workload: Default::default(),
            algorithm: AlgorithmSpec::named("pcocoa"),
            seed: 2018,
        };
        let json = canonical(&spec);
        assert!(json.starts_with("{\"network\":{\"rows\":6,"), "{json}");
        let mut h = Sha256::new();
        h.update(format!("coapcc-run\n{MODEL_VERSION}\n{json}\n3").as_bytes());
        assert_eq!(run_key(&spec, 3), hex(&h.finalize()));
        let mut t = spec.clone();
        t.workload.period_s = 8.0;
        assert_ne!(run_key(&spec, 3), run_key(&t, 3), "period");
    }
}
