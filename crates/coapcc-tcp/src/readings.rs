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
/// configured it) and of the lwIP cwnd variants.
pub const READINGS: &[TcpReading] = &[
    TcpReading {
        switch: "quickack",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+quickack"],
        default: "tcp",
        source: "thesis §5.5 sets \"delayed ACKs … with a constant 200 ms timer\"; 4.9's tcp_in_quickack_mode still acks the first data at once",
    },
    TcpReading {
        switch: "er",
        profiles: &["tcp", "tcp-linux49:er+frto+prr+wheel+oow"],
        default: "tcp",
        source: "thesis §5.5 names NewReno without SACK; 4.9's tcp_early_retrans default (3) is not mentioned",
    },
    TcpReading {
        switch: "wscale",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+wscale"],
        default: "tcp",
        source: "thesis §5.5 lists the options left out (timestamps, TFO), not window scaling, which 4.9 sends by default",
    },
    TcpReading {
        switch: "hz1000",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+hz1000"],
        default: "tcp",
        source: "the thesis does not give its kernels' CONFIG_HZ: 250 (Debian, Ubuntu) or 1000",
    },
    TcpReading {
        switch: "oowreset",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+oowreset"],
        default: "tcp",
        source: "tcp_create_openreq_child (4.9) zeroes last_oow_ack_time; the spec's socket has one stamp",
    },
    TcpReading {
        switch: "nodelay",
        profiles: &["tcp", "tcp-linux:frto+prr+wheel+oow+nodelay"],
        default: "tcp",
        source: "thesis §5.5 is silent on TCP_NODELAY; its libcoap 4.1.2 had no TCP, and upstream libcoap's TCP (Oct 2017 to 4.2.0) never sets it",
    },
    TcpReading {
        switch: "tcp-lwip-cwnd",
        profiles: &["tcp-lwip-cwnd", "tcp-lwip-cwnd:min", "tcp-lwip-cwnd:fresh"],
        default: "tcp-lwip-cwnd",
        source: "paper §4.2 \"set the cwnd to 50% of its ssthresh limit\": which ssthresh, and bounded by cwnd or not",
    },
    TcpReading {
        switch: "tcp-lwip-backoff-cwnd",
        profiles: &[
            "tcp-lwip-backoff-cwnd",
            "tcp-lwip-backoff-cwnd:min",
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
    fn each_linux_reading_is_tcp_with_its_switch() {
        for r in READINGS.iter().filter(|r| r.default == "tcp") {
            let Some(TcpProfile::Linux(Some(m))) = TcpProfile::from_name(r.profiles[1]) else {
                panic!("{}", r.switch)
            };
            let mut expect = Mechanisms::THESIS;
            assert!(expect.set(r.switch, true));
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
        assert_eq!(nagle("tcp-linux:frto+prr+wheel+oow+nodelay"), Nagle::Off);
    }

    #[test]
    fn lwip_readings_select_their_loss_window() {
        let loss = |name| match TcpProfile::from_name(name) {
            Some(TcpProfile::Lwip { loss_window, .. }) => loss_window,
            _ => unreachable!(),
        };
        assert_eq!(loss("tcp-lwip-cwnd"), LwipLossWindow::HalfPriorSsthresh);
        assert_eq!(
            loss("tcp-lwip-cwnd:prior"),
            LwipLossWindow::HalfPriorSsthresh
        );
        assert_eq!(loss("tcp-lwip-cwnd:min"), LwipLossWindow::HalfMinCwnd);
        assert_eq!(
            loss("tcp-lwip-backoff-cwnd:fresh"),
            LwipLossWindow::HalfFreshSsthresh
        );
        assert_eq!(TcpProfile::from_name("tcp-lwip-cwnd:half"), None);
        assert_eq!(TcpProfile::from_name("tcp-lwip:min"), None);
        let e = TcpProfile::switch_name_error("tcp-lwip-cwnd:half").unwrap();
        assert!(e.contains("prior, min, fresh"), "{e}");
    }
}
