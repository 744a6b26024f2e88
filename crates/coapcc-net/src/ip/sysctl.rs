//! Which sysctls the IP mode may set, and the check that what it set stayed
//! inside its namespaces.
//!
//! `ip netns exec NS sysctl -w` switches only the network namespace: a key
//! outside `net.*` (`kernel.hostname`, `vm.*`, `fs.*`) is the host's, and
//! setting it there changes the host for good. So only keys the kernel keeps
//! per network namespace are accepted ([`check_key`], checked before anything
//! is created):
//!
//! - the key starts with `net.` (under /proc/sys/net a process sees its own
//!   network namespace's table);
//! - it is not one of the `net.*` keys whose value is the host's
//!   ([`HOST_WIDE`]): the kernel shows those read-only inside a namespace,
//!   or not at all; of `net.core.*` only the per-namespace keys
//!   ([`NET_CORE_PER_NAMESPACE`]) are accepted.
//!
//! Belt and braces, [`OutsideValues`] reads every key in this process's own
//! namespace before the values are applied and again after: a value that
//! changed there is restored and the run refused (docs/decisions/emulator-choices.md,
//! "Sysctls stay in the namespaces", has the experiment behind the rule).

use anyhow::{bail, Result};

/// The `net.core.*` keys a fresh network namespace has writable (Linux
/// 6.18); every other `net.core.*` key is the host's (e.g.
/// `netdev_max_backlog`, `bpf_jit_enable`) or, like `rmem_max`, read-only
/// inside a namespace on kernels that show it there.
pub const NET_CORE_PER_NAMESPACE: &[&str] = &[
    "optmem_max",
    "rps_default_mask",
    "somaxconn",
    "tstamp_allow_data",
    "txrehash",
    "xfrm_acq_expires",
    "xfrm_aevent_etime",
    "xfrm_aevent_rseqth",
    "xfrm_larval_drop",
];

/// `net.*` keys outside `net.core` whose value is the host's: a fresh
/// namespace shows them read-only (Linux 6.18), older kernels not at all.
pub const HOST_WIDE: &[&str] = &[
    "net.ipv4.tcp_allowed_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_ehash_entries",
    "net.ipv4.udp_hash_entries",
    "net.mptcp.available_path_managers",
    "net.mptcp.available_schedulers",
    "net.netfilter.nf_conntrack_buckets",
    "net.netfilter.nf_conntrack_count",
    "net.netfilter.nf_conntrack_expect_max",
    "net.netfilter.nf_conntrack_max",
];

/// Whether `key` may be set in the IP mode's namespaces; an error says why
/// not (see the module docs).
pub fn check_key(key: &str) -> Result<()> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.len() < 2
        || parts.iter().any(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
    {
        bail!(
            "--sysctl {key}: not a sysctl name (dot-separated words of letters, digits, `_` \
             and `-`, e.g. net.ipv4.tcp_sack)"
        );
    }
    if parts[0] != "net" {
        bail!(
            "--sysctl {key}: refused: only `net.*` keys are kept per network namespace; \
             `{}.*` keys are the host's, and setting one would change this machine",
            parts[0]
        );
    }
    if parts.len() < 3 {
        bail!("--sysctl {key}: not a sysctl name (e.g. net.ipv4.tcp_sack)");
    }
    let host_wide = if parts[1] == "core" {
        parts.len() != 3 || !NET_CORE_PER_NAMESPACE.contains(&parts[2])
    } else {
        HOST_WIDE.contains(&key)
    };
    if host_wide {
        bail!(
            "--sysctl {key}: refused: its value is the host's, not the network namespace's \
             (of net.core only {} are per namespace)",
            NET_CORE_PER_NAMESPACE.join(", ")
        );
    }
    Ok(())
}

/// `KEY=VALUE` arguments of `--sysctl`, each key checked ([`check_key`]).
pub fn parse(given: &[String]) -> Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|s| {
            let Some((k, v)) = s
                .split_once('=')
                .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
            else {
                bail!("--sysctl: expected KEY=VALUE, found `{s}`");
            };
            let k = k.trim();
            if !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                bail!("--sysctl: `{k}` is not a sysctl name (letters, digits, `.`, `_`, `-`)");
            }
            check_key(k)?;
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The file of `key` under /proc/sys.
fn proc_path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

/// The values of some keys in this process's own network namespace (the one
/// the emulator runs in), read before the namespaces' values are set.
#[derive(Debug, Default)]
pub struct OutsideValues {
    values: Vec<(String, String)>,
}

impl OutsideValues {
    /// Reads `keys` here; keys this namespace does not have are skipped.
    pub fn read<'a>(keys: impl IntoIterator<Item = &'a str>) -> OutsideValues {
        let mut values: Vec<(String, String)> = Vec::new();
        for k in keys {
            if values.iter().any(|(seen, _)| seen == k) {
                continue;
            }
            if let Ok(v) = std::fs::read_to_string(proc_path(k)) {
                values.push((k.to_string(), v));
            }
        }
        OutsideValues { values }
    }

    /// Reads the keys again: any value that changed is written back and
    /// named in the error.
    pub fn check_unchanged(&self) -> Result<()> {
        let mut changed = Vec::new();
        for (k, before) in &self.values {
            let now = std::fs::read_to_string(proc_path(k)).unwrap_or_default();
            if &now != before {
                let restored = std::fs::write(proc_path(k), before.trim_end()).is_ok();
                changed.push(format!(
                    "{k} ({} -> {}{})",
                    before.trim(),
                    now.trim(),
                    if restored {
                        ", restored"
                    } else {
                        ", NOT restored"
                    }
                ));
            }
        }
        if !changed.is_empty() {
            bail!(
                "--sysctl: setting the namespaces' values changed this namespace's too: {}; refused",
                changed.join(", ")
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_namespace_keys_are_accepted() {
        for k in [
            "net.ipv4.tcp_sack",
            "net.ipv4.tcp_congestion_control",
            "net.ipv4.tcp_rto_max_ms",
            "net.ipv6.conf.all.disable_ipv6",
            "net.core.somaxconn",
            "net.unix.max_dgram_qlen",
        ] {
            check_key(k).unwrap();
        }
    }

    #[test]
    fn host_wide_keys_are_refused() {
        for (k, why) in [
            ("kernel.hostname", "`kernel.*` keys are the host's"),
            ("vm.swappiness", "`vm.*` keys are the host's"),
            ("fs.file-max", "`fs.*` keys are the host's"),
            ("net.core.rmem_max", "its value is the host's"),
            ("net.core.netdev_max_backlog", "its value is the host's"),
            ("net.core.somaxconn.x", "its value is the host's"),
            ("net.netfilter.nf_conntrack_max", "its value is the host's"),
            (
                "net.ipv4.tcp_allowed_congestion_control",
                "its value is the host's",
            ),
            ("net.ipv4..tcp_sack", "not a sysctl name"),
            ("net.ipv4", "not a sysctl name"),
            ("kernel", "not a sysctl name"),
            ("net/ipv4/tcp_sack", "not a sysctl name"),
        ] {
            let e = check_key(k).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--sysctl {k}: ")), "{e}");
            assert!(e.contains(why), "{k}: {e}");
        }
    }

    #[test]
    fn parse_checks_every_key() {
        let ok = parse(&["net.ipv4.tcp_sack = 0".into()]).unwrap();
        assert_eq!(ok, vec![("net.ipv4.tcp_sack".into(), "0".into())]);
        let e = parse(&["net.ipv4.tcp_sack=0".into(), "kernel.hostname=x".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--sysctl kernel.hostname: refused"), "{e}");
    }
}
