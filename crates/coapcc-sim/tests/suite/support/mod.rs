//! Run specifications shared by the testbed's integration tests: the
//! constrained dumbbell of docs/spec/testbed-spec.md §1 with one group of clients.

use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{Group, RunSpec};
use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};

/// `clients` clients of `algorithm` with the default workload of `kind`.
pub fn group(algorithm: AlgorithmSpec, clients: u32, kind: WorkloadKind) -> Group {
    Group {
        algorithm,
        workload: Workload {
            kind,
            ..Workload::default()
        },
        clients,
    }
}

/// The default dumbbell with `buffer` and `errors`, the default CoAP
/// settings, and one `group`.
pub fn on_dumbbell(group: Group, buffer: Buffer, errors: ErrorProfile, seed: u64) -> RunSpec {
    RunSpec {
        network: Config {
            buffer,
            errors,
            ..Config::default()
        },
        coap: Default::default(),
        groups: vec![group],
        seed,
    }
}
