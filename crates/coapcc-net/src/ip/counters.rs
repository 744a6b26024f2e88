//! The kernel's protocol counters of a namespace (`/proc/net/netstat` and
//! `/proc/net/snmp`: `TcpExt`, `IpExt`, `Ip`, `Tcp`, `Udp`, …), read as
//! `Group.Name` → value, and the difference of two readings.

use std::collections::BTreeMap;

/// Counters by `Group.Name` (e.g. `TcpExt.TCPLossProbes`, `Tcp.RetransSegs`).
pub type Counters = BTreeMap<String, i64>;

/// Parses the header/value line pairs of `/proc/net/netstat` and
/// `/proc/net/snmp` (concatenated is fine).
pub fn parse(text: &str) -> Counters {
    let mut out = Counters::new();
    let mut lines = text.lines();
    while let Some(header) = lines.next() {
        let Some((group, names)) = header.split_once(':') else {
            continue;
        };
        let Some(values) = lines.next() else { break };
        let Some((vgroup, values)) = values.split_once(':') else {
            continue;
        };
        if vgroup != group {
            continue;
        }
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = value.parse::<i64>() {
                out.insert(format!("{group}.{name}"), v);
            }
        }
    }
    out
}

/// Every counter whose value changed from `before` to `after`, with the
/// change (a counter missing before counts from 0).
pub fn delta(before: &Counters, after: &Counters) -> Counters {
    after
        .iter()
        .filter_map(|(k, &v)| {
            let d = v - before.get(k).copied().unwrap_or(0);
            (d != 0).then(|| (k.clone(), d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pairs_and_keeps_changes() {
        let a = "TcpExt: SyncookiesSent TCPLossProbes\nTcpExt: 0 3\n\
                 Tcp: RtoAlgorithm MaxConn RetransSegs\nTcp: 1 -1 10\n";
        let b = "TcpExt: SyncookiesSent TCPLossProbes\nTcpExt: 0 5\n\
                 Tcp: RtoAlgorithm MaxConn RetransSegs\nTcp: 1 -1 17\nUdp: InDatagrams\nUdp: 4\n";
        let (a, b) = (parse(a), parse(b));
        assert_eq!(a["Tcp.MaxConn"], -1);
        let d = delta(&a, &b);
        assert_eq!(
            d.into_iter().collect::<Vec<_>>(),
            vec![
                ("Tcp.RetransSegs".to_string(), 7),
                ("TcpExt.TCPLossProbes".to_string(), 2),
                ("Udp.InDatagrams".to_string(), 4)
            ]
        );
    }
}
