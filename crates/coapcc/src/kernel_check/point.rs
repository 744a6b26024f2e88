//! What the kernel cross-check measures: points of the constrained dumbbell
//! (workload × router buffer × TCP configuration), each run through the host
//! kernel's TCP behind the IP-level emulator and through the simulator's TCP
//! model with the same mechanisms (issue "the TCP model held to the kernel";
//! spec `docs/spec/transport-tcp-spec.md` §2, `docs/spec/testbed-spec.md` §1–3).

use std::fmt;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// How the kernel of a point is configured, and the model profile that has
/// the same mechanisms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelConfig {
    /// As close to the evaluations' Linux 4.9 as a stock kernel allows:
    /// SACK off (so NewReno recovery, no RACK and no tail loss probe),
    /// Reno, 40 SYN retries with exponential back-off, no cached metrics,
    /// no timestamps.
    Thesis,
    /// This kernel's own loss recovery (SACK, RACK, the tail loss probe,
    /// F-RTO, PRR), with Reno, no cached metrics and no timestamps: the
    /// settings a user's host has, minus what would make runs depend on
    /// each other or on the host's default congestion control.
    Defaults,
    /// `thesis` with Nagle's algorithm off (TCP_NODELAY) on the client's
    /// and the server's sockets: the other reading of the `nodelay` switch
    /// (`docs/decisions/tcp-choices.md`, "Readings behind switches").
    /// `thesis` and `defaults` leave Nagle on, as the evaluations' libcoap
    /// did.
    ThesisNodelay,
}

impl KernelConfig {
    /// Every configuration, in table order.
    pub const ALL: [KernelConfig; 3] = [
        KernelConfig::Thesis,
        KernelConfig::Defaults,
        KernelConfig::ThesisNodelay,
    ];

    /// Its name on the command line and in the store.
    pub fn name(self) -> &'static str {
        match self {
            KernelConfig::Thesis => "thesis",
            KernelConfig::Defaults => "defaults",
            KernelConfig::ThesisNodelay => "thesis-nodelay",
        }
    }

    /// Whether the client's and the server's sockets set TCP_NODELAY.
    pub fn nodelay(self) -> bool {
        self == KernelConfig::ThesisNodelay
    }

    /// The `net.ipv4.*` values set in both namespaces before a kernel run.
    /// Every other `net.ipv4.tcp_*` value keeps the kernel's default and is
    /// recorded with the run.
    pub fn sysctls(self) -> &'static [(&'static str, &'static str)] {
        // Shared: per-destination metrics would carry one run's RTT and
        // ssthresh into the next connection (tcp_no_metrics_save); the
        // evaluations ran without timestamps; Reno for every socket of the
        // namespace, the server's accepted ones included (the host default
        // may be cubic or BBR).
        const COMMON: [(&str, &str); 3] = [
            ("net.ipv4.tcp_no_metrics_save", "1"),
            ("net.ipv4.tcp_timestamps", "0"),
            ("net.ipv4.tcp_congestion_control", "reno"),
        ];
        const THESIS: [(&str, &str); 8] = [
            COMMON[0],
            COMMON[1],
            COMMON[2],
            // NewReno recovery: without SACK the kernel runs neither RACK
            // nor the tail loss probe.
            ("net.ipv4.tcp_sack", "0"),
            // docs/spec/transport-tcp-spec.md §2: SYN and SYN-ACK retried up to 40 times,
            // with Linux 4.9's exponential back-off (no linear first tries).
            ("net.ipv4.tcp_syn_retries", "40"),
            ("net.ipv4.tcp_synack_retries", "40"),
            ("net.ipv4.tcp_syn_linear_timeouts", "0"),
            // Maximum RTO 120 s (the default; set so a host that changed it
            // does not change the point).
            ("net.ipv4.tcp_rto_max_ms", "120000"),
        ];
        match self {
            KernelConfig::Thesis | KernelConfig::ThesisNodelay => &THESIS,
            KernelConfig::Defaults => &COMMON,
        }
    }

    /// The simulator's TCP profiles to set beside the kernel: first the
    /// profile of this kernel with the same mechanisms, then (for `thesis`)
    /// `tcp`, the evaluations' Linux 4.9, whose differences from the first
    /// are what a stock kernel cannot be made to do ([`Self::cannot`]).
    pub fn model_profiles(self) -> &'static [&'static str] {
        match self {
            // `tcp-linux6-nosack` without `syn6`: 40 SYN and SYN-ACK retries
            // backing off from the first, as [`Self::sysctls`] sets them.
            KernelConfig::Thesis => &[THESIS_PROFILE, "tcp"],
            KernelConfig::Defaults => &["tcp-linux6"],
            KernelConfig::ThesisNodelay => &[
                THESIS_NODELAY_PROFILE,
                "tcp-linux:er+frto+prr+wheel+oow+wscale+oowreset+nodelay",
            ],
        }
    }

    /// What a stock kernel cannot be made to do in this configuration,
    /// against the evaluations' Linux 4.9 (`docs/spec/transport-tcp-spec.md` §2).
    pub fn cannot(self) -> &'static str {
        match self {
            KernelConfig::Thesis | KernelConfig::ThesisNodelay => {
                "initial RTO 1 s (the evaluations: 2 s; no sysctl sets it); adaptive delayed \
                 ACK from 40 ms with quick-ACK mode (the evaluations: a constant 200 ms, a \
                 modified kernel); no early retransmit without SACK (4.9 ran it on duplicate \
                 ACKs; 6.x has RACK in its place, which needs SACK)"
            }
            KernelConfig::Defaults => {
                "as `thesis`, and SYN retries / linear SYN timeouts left at this kernel's \
                 defaults"
            }
        }
    }
}

/// The model of this kernel as the `thesis` configuration sets it up: a
/// Linux 6.x host (`tcp-linux6`) with SACK off (so no early retransmit,
/// RACK or probe either) and the SYN retries of
/// docs/spec/transport-tcp-spec.md §2 (40 each, every timeout doubling; the `syn6` switch
/// off); 6.x zeroes the accepted connection's rate-limit stamp
/// (`oowreset`).
pub const THESIS_PROFILE: &str = "tcp-linux:frto+prr+wheel+oow+quickack+ato+rto1s+wscale+oowreset";

/// [`THESIS_PROFILE`] with Nagle off (`thesis-nodelay`).
pub const THESIS_NODELAY_PROFILE: &str =
    "tcp-linux:frto+prr+wheel+oow+quickack+ato+rto1s+wscale+oowreset+nodelay";

/// The workload of every client (`docs/spec/testbed-spec.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// One connection, set up before timing starts; 50 exchanges back to back.
    Continuous,
    /// A new connection per batch of 1–10 exchanges, set-up timed.
    Random,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 2] = [Workload::Continuous, Workload::Random];

    /// Its name in scenario files, on the command line and in the store.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Continuous => "continuous",
            Workload::Random => "random",
        }
    }
}

/// One point of the cross-check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    /// The kernel's configuration (and so the model's profile).
    pub config: KernelConfig,
    /// The clients' workload.
    pub workload: Workload,
    /// Router buffer per direction in bytes; `None`: the evaluations'
    /// "infinite" buffer.
    pub buffer: Option<u64>,
    /// Clients.
    pub clients: u32,
    /// Exchanges per client.
    pub exchanges: u32,
}

impl Point {
    /// The buffer as scenario files and `--buffer` write it.
    pub fn buffer_text(&self) -> String {
        self.buffer
            .map_or_else(|| "inf".to_string(), |b| b.to_string())
    }

    /// The canonical JSON of the point: the part of a run's key that says
    /// what was run.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("a point serialises")
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} clients {}, buffer {}, {}",
            self.clients,
            self.workload.name(),
            self.buffer_text(),
            self.config.name()
        )
    }
}

/// Parses a comma-separated list with `parse`, naming `what` in errors.
pub fn parse_list<T: Copy>(
    text: &str,
    what: &str,
    parse: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        match parse(item) {
            Some(v) => out.push(v),
            None => bail!("{what}: `{item}` is not one of {expected}"),
        }
    }
    if out.is_empty() {
        bail!("{what}: empty list; expected {expected}");
    }
    Ok(out)
}

/// A config by name.
pub fn config_named(s: &str) -> Option<KernelConfig> {
    KernelConfig::ALL.into_iter().find(|c| c.name() == s)
}

/// A workload by name.
pub fn workload_named(s: &str) -> Option<Workload> {
    Workload::ALL.into_iter().find(|w| w.name() == s)
}

/// A buffer by its text (`inf` or bytes ≥ 1).
pub fn buffer_named(s: &str) -> Option<Option<u64>> {
    if s == "inf" {
        return Some(None);
    }
    s.parse::<u64>().ok().filter(|&b| b > 0).map(Some)
}

/// Every point of the product of the lists, in table order (configuration,
/// then workload, then buffer).
pub fn points(
    configs: &[KernelConfig],
    workloads: &[Workload],
    buffers: &[Option<u64>],
    clients: u32,
    exchanges: u32,
) -> Vec<Point> {
    let mut out = Vec::new();
    for &config in configs {
        for &workload in workloads {
            for &buffer in buffers {
                out.push(Point {
                    config,
                    workload,
                    buffer,
                    clients,
                    exchanges,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_bad_items_are_named() {
        let b = parse_list("inf,2500", "--buffers", buffer_named, "inf or bytes").unwrap();
        assert_eq!(b, vec![None, Some(2500)]);
        let e = parse_list("inf,0", "--buffers", buffer_named, "inf or bytes")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--buffers") && e.contains("`0`"), "{e}");
        let e = parse_list(
            "thesis,linux",
            "--configs",
            config_named,
            "thesis, defaults",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`linux`"), "{e}");
    }

    #[test]
    fn the_product_is_in_table_order() {
        let p = points(
            &[KernelConfig::Thesis, KernelConfig::Defaults],
            &Workload::ALL,
            &[None, Some(2500)],
            100,
            50,
        );
        assert_eq!(p.len(), 8);
        assert_eq!(
            (p[0].config, p[0].workload, p[0].buffer),
            (KernelConfig::Thesis, Workload::Continuous, None)
        );
        assert_eq!(
            (p[7].config, p[7].workload, p[7].buffer),
            (KernelConfig::Defaults, Workload::Random, Some(2500))
        );
    }

    /// The model row beside a kernel run has the kernel's SACK and SYN
    /// settings: those the configuration sets, or this kernel's defaults
    /// (`tcp_syn_retries` 6, `tcp_synack_retries` 5,
    /// `tcp_syn_linear_timeouts` 4, SACK on).
    #[test]
    fn the_model_row_has_the_kernel_runs_sack_and_syn_settings() {
        use coapcc_tcp::{SocketConfig, TcpProfile};
        for c in KernelConfig::ALL {
            let set = |key: &str, default: &str| -> u32 {
                let v = c.sysctls().iter().find(|(k, _)| *k == key);
                v.map_or(default, |(_, v)| *v).parse().unwrap()
            };
            let want = (
                set("net.ipv4.tcp_sack", "1") == 1,
                set("net.ipv4.tcp_syn_retries", "6"),
                set("net.ipv4.tcp_synack_retries", "5"),
                set("net.ipv4.tcp_syn_linear_timeouts", "4"),
            );
            let name = c.model_profiles()[0];
            let SocketConfig::Linux(cfg) = TcpProfile::from_name(name).unwrap().config(296) else {
                panic!("{name} is a Linux profile");
            };
            let m = cfg.linux.unwrap();
            let got = (
                m.sack,
                cfg.syn_retries,
                cfg.synack_retries,
                u32::from(cfg.syn_linear_timeouts),
            );
            assert_eq!(got, want, "{c:?}: {name}");
        }
    }

    #[test]
    fn the_thesis_configuration_turns_sack_off_and_both_use_reno() {
        let t: Vec<_> = KernelConfig::Thesis.sysctls().to_vec();
        assert!(t.contains(&("net.ipv4.tcp_sack", "0")));
        for c in KernelConfig::ALL {
            assert!(c
                .sysctls()
                .contains(&("net.ipv4.tcp_congestion_control", "reno")));
            assert!(c.sysctls().contains(&("net.ipv4.tcp_no_metrics_save", "1")));
        }
        assert!(!KernelConfig::Defaults
            .sysctls()
            .iter()
            .any(|(k, _)| *k == "net.ipv4.tcp_sack"));
    }

    /// The kernel runs set their sysctls through `emulate --ip --sysctl`:
    /// every key must be one the namespaces keep apart from the host.
    #[test]
    fn every_configuration_sets_per_namespace_keys_only() {
        for c in KernelConfig::ALL {
            for (k, _) in c.sysctls() {
                coapcc_net::ip::sysctl::check_key(k).unwrap();
            }
        }
    }
}
