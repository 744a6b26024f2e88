//! The disputed readings of the TCP models, each as the profile names that
//! run it, for a sensitivity table: where a source leaves two or more
//! readings open, the model takes one by default and keeps the others
//! reachable by name (`docs/decisions/tcp-choices.md`, "Readings behind
//! switches").

/// One disputed reading: the switch or variant that selects it, and the
/// profiles that differ only in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpReading {
    /// The switch of [`crate::Mechanisms`] (`tcp-linux:…`) or the listed
    /// lwIP name whose `:<reading>` suffixes select it.
    pub switch: &'static str,
    /// One profile name per reading (hidden names included), the default
    /// first; every one parses with [`crate::TcpProfile::from_name`].
    pub profiles: &'static [&'static str],
    /// The profile the published evaluations' name runs today.
    pub default: &'static str,
    /// Where the ambiguity is, in one line.
    pub source: &'static str,
}

/// Every disputed reading of the `tcp` profile (Linux 4.9 as the thesis
/// configured it) and of the lwIP cwnd variants. A Linux reading's
/// alternative is `tcp` with its switch flipped: on for `quickack`,
/// `hz1000` and `nodelay`, off for `er`, `wscale` and `oowreset`, which
/// `tcp` runs as 4.9's defaults.
pub const READINGS: &[TcpReading] = &[
    TcpReading {
        switch: "quickack",
        profiles: &["tcp", "tcp-linux:er+frto+prr+wheel+oow+quickack+wscale+oowreset"],
        default: "tcp",
        source: "thesis §5.5 sets \"delayed ACKs … with a constant 200 ms timer\"; 4.9's tcp_in_quickack_mode still acks the first data at once",
    },
    TcpReading {
        switch: "er",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+wscale+oowreset"],
        default: "tcp",
        source: "thesis §5.5 names NewReno without SACK and not tcp_early_retrans; 4.9's default (3) runs it on Reno's duplicate ACKs (tcp_enable_early_retrans needs no SACK)",
    },
    TcpReading {
        switch: "wscale",
        profiles: &["tcp", "tcp-linux:er+frto+prr+wheel+oow+oowreset"],
        default: "tcp",
        source: "thesis §5.5 lists the options left out (timestamps, TFO), not window scaling, which 4.9 sends by default; the spec's SYN sizes leave it out",
    },
    TcpReading {
        switch: "hz1000",
        profiles: &["tcp", "tcp-linux:er+frto+prr+wheel+oow+wscale+hz1000+oowreset"],
        default: "tcp",
        source: "the thesis does not give its kernels' CONFIG_HZ; its hosts ran Debian 9, whose kernel has 250",
    },
    TcpReading {
        switch: "oowreset",
        profiles: &["tcp", "tcp-linux:er+frto+prr+wheel+oow+wscale"],
        default: "tcp",
        source: "tcp_create_openreq_child (4.0+, 4.9 and 6.x) zeroes last_oow_ack_time; the spec's socket has one stamp",
    },
    TcpReading {
        switch: "nodelay",
        profiles: &["tcp", "tcp-linux:er+frto+prr+wheel+oow+wscale+oowreset+nodelay"],
        default: "tcp",
        source: "thesis §5.5 is silent on TCP_NODELAY; its libcoap 4.1.2 had no TCP, and upstream libcoap's TCP (Oct 2017 to 4.2.0) never sets it",
    },
    TcpReading {
        switch: "tcp-lwip-cwnd",
        profiles: &["tcp-lwip-cwnd", "tcp-lwip-cwnd:prior", "tcp-lwip-cwnd:fresh"],
        default: "tcp-lwip-cwnd",
        source: "paper §4.2 \"set the cwnd to 50% of its ssthresh limit\": which ssthresh, and bounded by cwnd or not (§4.2, §5.2: it \"drops\", \"by 0.5\")",
    },
    TcpReading {
        switch: "tcp-lwip-backoff-cwnd",
        profiles: &[
            "tcp-lwip-backoff-cwnd",
            "tcp-lwip-backoff-cwnd:prior",
            "tcp-lwip-backoff-cwnd:fresh",
        ],
        default: "tcp-lwip-backoff-cwnd",
        source: "paper §4.2 as for tcp-lwip-cwnd, with the ×2 / ×1.3 back-off",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lwip::LwipLossWindow;
    use crate::{Mechanisms, Nagle, SocketConfig, TcpProfile};

    #[test]
    fn every_profile_parses_and_the_default_comes_first() {
        for r in READINGS {
            assert_eq!(r.profiles[0], r.default, "{}", r.switch);
            let parsed: Vec<TcpProfile> = r
                .profiles
                .iter()
                .map(|n| TcpProfile::from_name(n).unwrap_or_else(|| panic!("{n}")))
                .collect();
            for (n, p) in r.profiles.iter().zip(&parsed) {
                // Written as the profile names itself.
                assert_eq!(p.name(), *n);
            }
            for (i, p) in parsed.iter().enumerate() {
                assert!(!parsed[i + 1..].contains(p), "{}: two alike", r.switch);
            }
        }
    }

    #[test]
    fn each_linux_reading_differs_from_tcp_in_exactly_its_switch() {
        // `tcp` runs `er`, `wscale` and `oowreset` (4.9's defaults), so their
        // alternative turns the switch off; the other readings turn it on.
        let runs = ["er", "wscale", "oowreset"];
        for r in READINGS.iter().filter(|r| r.default == "tcp") {
            assert_eq!(r.profiles.len(), 2, "{}", r.switch);
            let Some(TcpProfile::Linux(Some(m))) = TcpProfile::from_name(r.profiles[1]) else {
                panic!("{}", r.switch)
            };
            let in_tcp = runs.contains(&r.switch);
            assert_eq!(Mechanisms::THESIS.get(r.switch), Some(in_tcp));
            let mut expect = Mechanisms::THESIS;
            assert!(expect.set(r.switch, !in_tcp));
            assert_eq!(m, expect, "{}", r.switch);
        }
    }

    #[test]
    fn nodelay_turns_nagle_off() {
        // The `tcp` profile's client: Nagle on (spec §2, "Nagle on"), so the
        // first request waits for the ACK of the CSM; with `nodelay` it does
        // not.
        let nagle = |name| match TcpProfile::from_name(name).unwrap().config(296) {
            SocketConfig::Linux(c) => c.nagle,
            SocketConfig::Lwip(_) => unreachable!(),
        };
        assert_eq!(nagle("tcp"), Nagle::Classic);
        assert_eq!(
            nagle("tcp-linux:er+frto+prr+wheel+oow+wscale+oowreset+nodelay"),
            Nagle::Off
        );
    }

    #[test]
    fn lwip_readings_select_their_loss_window() {
        let loss = |name| match TcpProfile::from_name(name) {
            Some(TcpProfile::Lwip { loss_window, .. }) => loss_window,
            _ => unreachable!(),
        };
        // Paper §4.2, §5.2: cwnd "drops" on a retransmission, a
        // "multiplicative decrease (by 0.5)": half the interrupted window,
        // capped at the limit (`min`), the listed names' reading; `:min`
        // stays accepted and names itself as the listed name.
        assert_eq!(loss("tcp-lwip-cwnd"), LwipLossWindow::HalfMinCwnd);
        assert_eq!(loss("tcp-lwip-backoff-cwnd"), LwipLossWindow::HalfMinCwnd);
        assert_eq!(loss("tcp-lwip-cwnd:min"), LwipLossWindow::HalfMinCwnd);
        assert_eq!(
            TcpProfile::from_name("tcp-lwip-cwnd:min").unwrap().name(),
            "tcp-lwip-cwnd"
        );
        assert_eq!(
            loss("tcp-lwip-cwnd:prior"),
            LwipLossWindow::HalfPriorSsthresh
        );
        assert_eq!(
            loss("tcp-lwip-backoff-cwnd:fresh"),
            LwipLossWindow::HalfFreshSsthresh
        );
        assert_eq!(TcpProfile::from_name("tcp-lwip-cwnd:half"), None);
        assert_eq!(TcpProfile::from_name("tcp-lwip:min"), None);
        let e = TcpProfile::switch_name_error("tcp-lwip-cwnd:half").unwrap();
        assert!(e.contains("min, prior, fresh"), "{e}");
    }
}
