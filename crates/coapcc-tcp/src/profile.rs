//! The TCP profiles by name (spec docs/spec/algorithms-spec.md §8) and one socket type that
//! runs either: [`AnySocket`] has the API of [`TcpSocket`] and
//! [`LwipSocket`], so a simulator drives every profile the same way.
//!
//! | name | profile |
//! | --- | --- |
//! | `tcp` | `linux` (docs/spec/transport-tcp-spec.md §2, corrected): Linux 4.9 as the thesis configured it (SACK off, early retransmit, F-RTO, PRR, window scaling) |
//! | `tcp-newreno` | model 2's `linux` profile: byte-counted NewReno, no SACK |
//! | `tcp-linux49-debian9` | model 3's `tcp`: Linux 4.9 with Debian 9's defaults (SACK, ER, RACK, TLP, F-RTO, PRR) |
//! | `tcp-linux6` | a Linux 6.x host as the kernel cross-check configures it |
//! | `tcp-linux6-nosack` | the same with `tcp_sack = 0` |
//! | `tcp-lwip` | lwIP 2.1 (docs/spec/transport-tcp-spec.md §3) |
//! | `tcp-lwip-backoff` | lwIP with the RTO ×2 up to 3 s, ×1.3 above |
//! | `tcp-lwip-cwnd` | lwIP with cwnd = max(min(cwnd, ssthresh)/2, MSS) after a timeout (the ssthresh in force before it) |
//! | `tcp-lwip-backoff-cwnd` | both |
//!
//! Not listed either, for the readings of the lwIP cwnd variant
//! ([`LwipLossWindow::READINGS`]; `docs/decisions/tcp-choices.md`, "The "lwIP
//! cwnd" variant"): `<variant>:<reading>` with `<variant>` `tcp-lwip-cwnd` or
//! `tcp-lwip-backoff-cwnd`:
//!
//! | suffix | cwnd after a timeout (at least one MSS) |
//! | --- | --- |
//! | `:min` | half of min(cwnd, ssthresh in force) (the listed name itself) |
//! | `:prior` | half the ssthresh in force before the timeout |
//! | `:fresh` | half the ssthresh lwIP has just recomputed |
//!
//! `tcp-lwip-cwnd:min` is `tcp-lwip-cwnd`, and
//! `tcp-lwip-backoff-cwnd:prior` is the back-off variant with the `prior`
//! reading.
//!
//! Not listed by [`TcpProfile::names`], for the ablation of
//! `docs/calibration.md`: `tcp-linux49:<mechanisms>` runs Linux 4.9 with
//! only the named mechanisms on, joined by `+` (names of
//! [`Mechanisms::LINUX49_NAMES`]; `tcp-linux49:` has none,
//! `tcp-linux49:er+frto+prr+wheel+oow` is `tcp` without the window-scale
//! option and the fresh rate-limit stamp),
//! and `tcp-linux:<switches>` the same with any switch of
//! [`Mechanisms::NAMES`], the Linux 6.x differences included
//! (`tcp-linux:er+frto+prr+wheel+oow+wscale+oowreset` is `tcp`,
//! `tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+wscale+oowreset` is
//! `tcp-linux49-debian9`,
//! `tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6+tlp1+wscale+oowreset`
//! is `tcp-linux6`). See `docs/decisions/tcp-choices.md`, "Linux 4.9's loss recovery" and
//! "A Linux 6.x host". The readings of `tcp` ([`crate::READINGS`]) are
//! `tcp` with one switch flipped: `quickack`, `hz1000` or `nodelay` on
//! (`tcp-linux:er+frto+prr+wheel+oow+quickack+wscale+oowreset`), or `er`,
//! `wscale` or `oowreset` off (`tcp-linux:frto+prr+wheel+oow+wscale+oowreset`).

use crate::linux::wheel::Due;
use crate::linux::{Mechanisms, TcpConfig, TcpSocket};
use crate::lwip::{LwipBackoff, LwipConfig, LwipLossWindow, LwipSocket};
use crate::segment::Segment;
use crate::state::TcpState;
use crate::stats::{AbortReason, TcpEvent, TcpStats};

/// Which TCP a connection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpProfile {
    /// The `linux` profile (docs/spec/transport-tcp-spec.md §2): `Some` runs Linux's loss
    /// recovery and ACK policy with these mechanisms, `None` model 2's
    /// NewReno.
    Linux(Option<Mechanisms>),
    /// lwIP (docs/spec/transport-tcp-spec.md §3), original or a published variant.
    Lwip {
        /// RTO growth on timeouts.
        backoff: LwipBackoff,
        /// cwnd after a timeout.
        loss_window: LwipLossWindow,
    },
}

/// A named profile and what `coapcc algorithms` says about it.
#[derive(Clone, Copy, Debug)]
pub struct ProfileInfo {
    /// The name used in scenarios and on the command line.
    pub name: &'static str,
    /// The profile.
    pub profile: TcpProfile,
    /// The spec section defining it.
    pub section: &'static str,
    /// One line of description.
    pub summary: &'static str,
}

/// Prefix of the hidden ablation names over Linux 4.9's recovery mechanisms
/// (`tcp-linux49:sack+rack`).
pub const ABLATION_PREFIX: &str = "tcp-linux49:";
/// Prefix of the hidden names over every switch, the Linux 6.x differences
/// included (`tcp-linux:frto+prr+quickack`).
pub const SWITCHES_PREFIX: &str = "tcp-linux:";
/// The listed lwIP names that take a reading of the cwnd variant after `:`
/// (`tcp-lwip-cwnd:min`), with their back-off.
pub const CWND_VARIANTS: [(&str, LwipBackoff); 2] = [
    ("tcp-lwip-cwnd", LwipBackoff::Table),
    ("tcp-lwip-backoff-cwnd", LwipBackoff::TwoThenOnePointThree),
];

const LWIP: TcpProfile = TcpProfile::Lwip {
    backoff: LwipBackoff::Table,
    loss_window: LwipLossWindow::OneMss,
};

/// Every TCP name, in the order `coapcc algorithms` lists them.
pub const PROFILES: [ProfileInfo; 9] = [
    ProfileInfo {
        name: "tcp",
        profile: TcpProfile::Linux(Some(Mechanisms::THESIS)),
        section: "tcp §2",
        summary: "CoAP over TCP (RFC 8323) with the linux TCP profile (Linux 4.9 as the thesis configured it: NewReno recovery without SACK, early retransmit, F-RTO, PRR, window scaling, IW10, initial RTO 2 s, delayed ACK 200 ms)",
    },
    ProfileInfo {
        name: "tcp-newreno",
        profile: TcpProfile::Linux(None),
        section: "tcp §2",
        summary: "CoAP over TCP with model 2's linux profile: byte-counted NewReno without SACK, TLP, RACK, F-RTO or PRR (kept: stores of models 2 and 3 name it)",
    },
    ProfileInfo {
        name: "tcp-linux49-debian9",
        profile: TcpProfile::Linux(Some(Mechanisms::DEBIAN9)),
        section: "tcp §2",
        summary: "CoAP over TCP with Linux 4.9's Debian 9 defaults (model 3's tcp): SACK, early retransmit, RACK, TLP, F-RTO, PRR",
    },
    ProfileInfo {
        name: "tcp-linux6",
        profile: TcpProfile::Linux(Some(Mechanisms::LINUX6)),
        section: "tcp §2",
        summary: "CoAP over TCP with a Linux 6.x host's defaults (reno): SACK, RACK, TLP, F-RTO, PRR, initial RTO 1 s, quick-ACK mode, adaptive delayed ACK, 6/5 SYN retries",
    },
    ProfileInfo {
        name: "tcp-linux6-nosack",
        profile: TcpProfile::Linux(Some(Mechanisms::LINUX6_NOSACK)),
        section: "tcp §2",
        summary: "tcp-linux6 with tcp_sack = 0 (no SACK, RACK or TLP)",
    },
    ProfileInfo {
        name: "tcp-lwip",
        profile: LWIP,
        section: "tcp §3",
        summary: "CoAP over TCP with lwIP 2.1's TCP (500 ms ticks, backoff table, Reno)",
    },
    ProfileInfo {
        name: "tcp-lwip-backoff",
        profile: TcpProfile::Lwip {
            backoff: LwipBackoff::TwoThenOnePointThree,
            loss_window: LwipLossWindow::OneMss,
        },
        section: "tcp §3",
        summary: "lwIP back-off: RTO ×2 while ≤ 3 s, ×1.3 above",
    },
    ProfileInfo {
        name: "tcp-lwip-cwnd",
        profile: TcpProfile::Lwip {
            backoff: LwipBackoff::Table,
            loss_window: LwipLossWindow::HalfMinCwnd,
        },
        section: "tcp §3",
        summary: "lwIP cwnd: cwnd = max(min(cwnd, ssthresh)/2, MSS) after a timeout",
    },
    ProfileInfo {
        name: "tcp-lwip-backoff-cwnd",
        profile: TcpProfile::Lwip {
            backoff: LwipBackoff::TwoThenOnePointThree,
            loss_window: LwipLossWindow::HalfMinCwnd,
        },
        section: "tcp §3",
        summary: "lwIP back-off & cwnd: both changes",
    },
];

impl TcpProfile {
    /// The profile a name selects (`tcp`, `tcp-lwip`, …), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        let (list, allowed): (&str, &[&str]) =
            if let Some(list) = name.strip_prefix(ABLATION_PREFIX) {
                (list, &Mechanisms::LINUX49_NAMES)
            } else if let Some(list) = name.strip_prefix(SWITCHES_PREFIX) {
                (list, &Mechanisms::NAMES)
            } else if let Some((variant, reading)) = name.split_once(':') {
                return Self::cwnd_reading(variant, reading);
            } else {
                return PROFILES.iter().find(|p| p.name == name).map(|p| p.profile);
            };
        let mut m = Mechanisms::BASE;
        for n in list.split('+').filter(|n| !n.is_empty()) {
            if !allowed.contains(&n) || m.get(n)? {
                return None; // unknown, or named twice
            }
            m.set(n, true);
        }
        Some(TcpProfile::Linux(Some(m)))
    }

    /// `<variant>:<reading>`: the lwIP cwnd variant `variant` (one of
    /// [`CWND_VARIANTS`]) with the reading `reading`
    /// ([`LwipLossWindow::READINGS`]).
    fn cwnd_reading(variant: &str, reading: &str) -> Option<Self> {
        let &(_, backoff) = CWND_VARIANTS.iter().find(|(n, _)| *n == variant)?;
        Some(TcpProfile::Lwip {
            backoff,
            loss_window: LwipLossWindow::from_reading(reading)?,
        })
    }

    /// The name of this profile (for a set of switches no listed profile
    /// has: `tcp-linux49:…` when only Linux 4.9's mechanisms are on,
    /// `tcp-linux:…` otherwise; for a reading of the lwIP cwnd variant no
    /// listed profile takes, `<variant>:<reading>`).
    pub fn name(self) -> String {
        if let Some(p) = PROFILES.iter().find(|p| p.profile == self) {
            return p.name.to_string();
        }
        match self {
            TcpProfile::Linux(Some(m)) if m.has_linux6() => {
                format!("{SWITCHES_PREFIX}{}", m.joined())
            }
            TcpProfile::Linux(Some(m)) => format!("{ABLATION_PREFIX}{}", m.joined()),
            TcpProfile::Lwip {
                backoff,
                loss_window,
            } => {
                let variant = CWND_VARIANTS.iter().find(|&&(_, b)| b == backoff);
                match (variant, loss_window.reading()) {
                    (Some((v, _)), Some(r)) => format!("{v}:{r}"),
                    _ => "tcp-lwip".to_string(),
                }
            }
            TcpProfile::Linux(None) => "tcp-newreno".to_string(),
        }
    }

    /// Why a switch name (`tcp-linux49:…`, `tcp-linux:…`) selects nothing,
    /// or `None` if it is not such a name or is valid.
    pub fn switch_name_error(name: &str) -> Option<String> {
        if Self::from_name(name).is_some() {
            return None;
        }
        let (prefix, allowed): (&str, &[&str]) = if name.starts_with(ABLATION_PREFIX) {
            (ABLATION_PREFIX, &Mechanisms::LINUX49_NAMES)
        } else if name.starts_with(SWITCHES_PREFIX) {
            (SWITCHES_PREFIX, &Mechanisms::NAMES)
        } else if let Some((variant, _)) = name
            .split_once(':')
            .filter(|(v, _)| CWND_VARIANTS.iter().any(|(n, _)| n == v))
        {
            let readings: Vec<&str> = LwipLossWindow::READINGS.iter().map(|r| r.0).collect();
            return Some(format!(
                "`{variant}:` takes one reading of the cwnd variant: {}",
                readings.join(", ")
            ));
        } else {
            return None;
        };
        Some(format!(
            "`{prefix}` takes switches joined by `+`, each at most once, from: {}",
            allowed.join(", ")
        ))
    }

    /// Every TCP name, comma-separated.
    pub fn names() -> String {
        PROFILES.map(|p| p.name).join(", ")
    }

    /// Bytes of per-connection state: `size_of` of the socket a connection
    /// holds (buffers and queues on the heap come on top).
    pub fn state_bytes(self) -> usize {
        match self {
            TcpProfile::Linux(_) => std::mem::size_of::<TcpSocket>(),
            TcpProfile::Lwip { .. } => std::mem::size_of::<LwipSocket>(),
        }
    }

    /// The configuration of this profile on a path with the given MTU: the
    /// `linux` profile's MSS is `MTU − 40`; lwIP keeps `TCP_MSS` = 536 and
    /// derives its send MSS from the MTU as lwIP does (`min(536, MTU − 40)`).
    pub fn config(self, mtu: u16) -> SocketConfig {
        match self {
            TcpProfile::Linux(linux) => SocketConfig::Linux(TcpConfig {
                mss: TcpConfig::mss_for_mtu(mtu),
                ..linux.map_or_else(TcpConfig::newreno, TcpConfig::with_mechanisms)
            }),
            TcpProfile::Lwip {
                backoff,
                loss_window,
            } => SocketConfig::Lwip(LwipConfig {
                mtu,
                ..LwipConfig::variant(backoff, loss_window)
            }),
        }
    }
}

/// The configuration of a socket of either profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SocketConfig {
    /// The `linux` profile.
    Linux(TcpConfig),
    /// lwIP.
    Lwip(LwipConfig),
}

impl SocketConfig {
    /// The initial send sequence number.
    pub fn isn(&self) -> u32 {
        match self {
            SocketConfig::Linux(c) => c.isn,
            SocketConfig::Lwip(c) => c.isn,
        }
    }

    /// The same, on a device whose TCP timer first fires at `origin` (lwIP's
    /// timer grid; nothing for the `linux` profile, whose timers are per
    /// connection).
    pub fn with_timer_origin(mut self, origin: u64) -> Self {
        if let SocketConfig::Lwip(c) = &mut self {
            c.timer_origin = origin;
        }
        self
    }

    /// The same with trace events on or off.
    pub fn with_events(mut self, on: bool) -> Self {
        match &mut self {
            SocketConfig::Linux(c) => c.record_events = on,
            SocketConfig::Lwip(c) => c.record_events = on,
        }
        self
    }

    /// Whether this is an lwIP configuration.
    pub fn is_lwip(&self) -> bool {
        matches!(self, SocketConfig::Lwip(_))
    }
}

/// A socket of either profile.
// Both variants are several hundred bytes and live one per connection;
// boxing the larger would add an indirection on every packet for about
// 200 bytes per connection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnySocket {
    /// The `linux` profile.
    Linux(TcpSocket),
    /// lwIP.
    Lwip(LwipSocket),
}

impl AnySocket {
    /// Opens a connection actively.
    pub fn connect(now: u64, cfg: SocketConfig) -> Self {
        match cfg {
            SocketConfig::Linux(c) => AnySocket::Linux(TcpSocket::connect(now, c)),
            SocketConfig::Lwip(c) => AnySocket::Lwip(LwipSocket::connect(now, c)),
        }
    }

    /// Answers a SYN received by a listener.
    pub fn accept(now: u64, cfg: SocketConfig, syn: &Segment) -> Option<Self> {
        match cfg {
            SocketConfig::Linux(c) => TcpSocket::accept(now, c, syn).map(AnySocket::Linux),
            SocketConfig::Lwip(c) => LwipSocket::accept(now, c, syn).map(AnySocket::Lwip),
        }
    }

    /// The connection state.
    pub fn state(&self) -> TcpState {
        match self {
            AnySocket::Linux(s) => s.state(),
            AnySocket::Lwip(s) => s.state(),
        }
    }
    /// Whether the handshake is done and the connection not yet fully closed.
    pub fn is_established(&self) -> bool {
        match self {
            AnySocket::Linux(s) => s.is_established(),
            AnySocket::Lwip(s) => s.is_established(),
        }
    }
    /// Whether the connection ended by timeout or reset, and why.
    pub fn abort_reason(&self) -> Option<AbortReason> {
        match self {
            AnySocket::Linux(s) => s.abort_reason(),
            AnySocket::Lwip(s) => s.abort_reason(),
        }
    }
    /// The sending MSS in force.
    pub fn mss(&self) -> u64 {
        match self {
            AnySocket::Linux(s) => s.mss(),
            AnySocket::Lwip(s) => s.mss(),
        }
    }
    /// The RTO in force (ns).
    pub fn rto(&self) -> u64 {
        match self {
            AnySocket::Linux(s) => s.rto(),
            AnySocket::Lwip(s) => s.rto(),
        }
    }
    /// Timeouts (retransmissions, for lwIP) since the last valid sample or
    /// new ACK.
    pub fn backoff(&self) -> u32 {
        match self {
            AnySocket::Linux(s) => s.backoff(),
            AnySocket::Lwip(s) => s.backoff(),
        }
    }
    /// Smoothed RTT (ns), once sampled.
    pub fn srtt(&self) -> Option<u64> {
        match self {
            AnySocket::Linux(s) => s.srtt(),
            AnySocket::Lwip(s) => s.srtt(),
        }
    }
    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        match self {
            AnySocket::Linux(s) => s.cwnd(),
            AnySocket::Lwip(s) => s.cwnd(),
        }
    }
    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        match self {
            AnySocket::Linux(s) => s.ssthresh(),
            AnySocket::Lwip(s) => s.ssthresh(),
        }
    }
    /// Whether fast recovery is under way.
    pub fn in_fast_recovery(&self) -> bool {
        match self {
            AnySocket::Linux(s) => s.in_fast_recovery(),
            AnySocket::Lwip(s) => s.in_fast_recovery(),
        }
    }
    /// Sent but unacknowledged sequence space.
    pub fn bytes_in_flight(&self) -> u64 {
        match self {
            AnySocket::Linux(s) => s.bytes_in_flight(),
            AnySocket::Lwip(s) => s.bytes_in_flight(),
        }
    }
    /// Bytes written and not yet acknowledged.
    pub fn send_queue_len(&self) -> usize {
        match self {
            AnySocket::Linux(s) => s.send_queue_len(),
            AnySocket::Lwip(s) => s.send_queue_len(),
        }
    }
    /// Whether everything written (and the FIN, if closing) is acknowledged.
    pub fn all_acked(&self) -> bool {
        match self {
            AnySocket::Linux(s) => s.all_acked(),
            AnySocket::Lwip(s) => s.all_acked(),
        }
    }
    /// Counters.
    pub fn stats(&self) -> &TcpStats {
        match self {
            AnySocket::Linux(s) => s.stats(),
            AnySocket::Lwip(s) => s.stats(),
        }
    }
    /// Bytes ready to read.
    pub fn recv_len(&self) -> usize {
        match self {
            AnySocket::Linux(s) => s.recv_len(),
            AnySocket::Lwip(s) => s.recv_len(),
        }
    }
    /// Whether the peer's FIN has arrived and every byte before it was read.
    pub fn recv_finished(&self) -> bool {
        match self {
            AnySocket::Linux(s) => s.recv_finished(),
            AnySocket::Lwip(s) => s.recv_finished(),
        }
    }
    /// Queues application bytes; returns how many were taken.
    pub fn send(&mut self, data: &[u8]) -> usize {
        match self {
            AnySocket::Linux(s) => s.send(data),
            AnySocket::Lwip(s) => s.send(data),
        }
    }
    /// Reads delivered bytes into `buf`.
    pub fn recv(&mut self, buf: &mut [u8]) -> usize {
        match self {
            AnySocket::Linux(s) => s.recv(buf),
            AnySocket::Lwip(s) => s.recv(buf),
        }
    }
    /// The delivered bytes as two slices.
    pub fn recv_slices(&self) -> (&[u8], &[u8]) {
        match self {
            AnySocket::Linux(s) => s.recv_slices(),
            AnySocket::Lwip(s) => s.recv_slices(),
        }
    }
    /// Drops `n` delivered bytes.
    pub fn consume(&mut self, n: usize) {
        match self {
            AnySocket::Linux(s) => s.consume(n),
            AnySocket::Lwip(s) => s.consume(n),
        }
    }
    /// Closes our direction.
    pub fn close(&mut self) {
        match self {
            AnySocket::Linux(s) => s.close(),
            AnySocket::Lwip(s) => s.close(),
        }
    }
    /// Aborts with a RST.
    pub fn abort(&mut self) {
        match self {
            AnySocket::Linux(s) => s.abort(),
            AnySocket::Lwip(s) => s.abort(),
        }
    }
    /// Next trace event.
    pub fn poll_event(&mut self) -> Option<TcpEvent> {
        match self {
            AnySocket::Linux(s) => s.poll_event(),
            AnySocket::Lwip(s) => s.poll_event(),
        }
    }
    /// When the socket next wants [`Self::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<u64> {
        match self {
            AnySocket::Linux(s) => s.poll_timeout(),
            AnySocket::Lwip(s) => s.poll_timeout(),
        }
    }
    /// The timer behind [`Self::poll_timeout`], with its level on Linux's
    /// timer wheel ([`crate::linux::wheel::Due`]; lwIP's timers are off it).
    pub fn poll_timer(&self) -> Option<Due> {
        match self {
            AnySocket::Linux(s) => s.poll_timer(),
            AnySocket::Lwip(s) => s.poll_timeout().map(Due::exact),
        }
    }
    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        match self {
            AnySocket::Linux(s) => s.handle_timeout(now),
            AnySocket::Lwip(s) => s.handle_timeout(now),
        }
    }
    /// Processes one arriving segment.
    pub fn handle_segment(&mut self, now: u64, seg: &Segment) {
        match self {
            AnySocket::Linux(s) => s.handle_segment(now, seg),
            AnySocket::Lwip(s) => s.handle_segment(now, seg),
        }
    }
    /// The next segment to send, if any.
    pub fn poll_transmit(&mut self, now: u64) -> Option<Segment> {
        match self {
            AnySocket::Linux(s) => s.poll_transmit(now),
            AnySocket::Lwip(s) => s.poll_transmit(now),
        }
    }
    /// Writes the next segment to send into `out`; false when there is none.
    pub fn poll_transmit_into(&mut self, now: u64, out: &mut Segment) -> bool {
        match self {
            AnySocket::Linux(s) => s.poll_transmit_into(now, out),
            AnySocket::Lwip(s) => s.poll_transmit_into(now, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in PROFILES {
            assert_eq!(TcpProfile::from_name(p.name), Some(p.profile));
            assert_eq!(p.profile.name(), p.name);
        }
        assert_eq!(TcpProfile::from_name("tcp-lwip-foo"), None);
        assert!(TcpProfile::names().starts_with(
            "tcp, tcp-newreno, tcp-linux49-debian9, tcp-linux6, tcp-linux6-nosack, tcp-lwip,"
        ));
        // Ablation names: any subset of the mechanisms, in any order.
        let base = TcpProfile::from_name("tcp-linux49:").unwrap();
        assert_eq!(base, TcpProfile::Linux(Some(Mechanisms::BASE)));
        assert_eq!(base.name(), "tcp-linux49:");
        let two = TcpProfile::from_name("tcp-linux49:rack+sack").unwrap();
        assert_eq!(two.name(), "tcp-linux49:sack+rack");
        // Model 9's `tcp`: without early retransmit, the window-scale
        // option and the fresh stamp, an ablation named as such.
        assert_eq!(
            TcpProfile::from_name("tcp-linux49:prr+frto+wheel+oow")
                .unwrap()
                .name(),
            "tcp-linux49:frto+prr+wheel+oow"
        );
        // Without the timer wheel: an ablation of `tcp`, named as such.
        assert_eq!(
            TcpProfile::from_name("tcp-linux49:prr+frto")
                .unwrap()
                .name(),
            "tcp-linux49:frto+prr"
        );
        // Model 9's `tcp-linux49-debian9`, without `wscale` and `oowreset`.
        let d9 = "tcp-linux49:sack+er+rack+tlp+frto+prr+wheel+oow";
        assert_eq!(TcpProfile::from_name(d9).unwrap().name(), d9);
        assert_eq!(
            TcpProfile::from_name("tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+wscale+oowreset")
                .unwrap()
                .name(),
            "tcp-linux49-debian9"
        );
        assert_eq!(TcpProfile::from_name("tcp-linux49:sack+sack"), None);
        assert_eq!(TcpProfile::from_name("tcp-linux49:cubic"), None);
        // The 6.x switches only under `tcp-linux:`.
        assert_eq!(TcpProfile::from_name("tcp-linux49:frto+quickack"), None);
        let q = TcpProfile::from_name("tcp-linux:quickack+frto+prr").unwrap();
        assert_eq!(q.name(), "tcp-linux:frto+prr+quickack");
        // `tcp`: thesis §5.5's settings, 4.9's defaults otherwise.
        assert_eq!(
            TcpProfile::from_name("tcp-linux:oowreset+wscale+oow+wheel+prr+frto+er")
                .unwrap()
                .name(),
            "tcp"
        );
        // Without 6.x switches, `tcp-linux:` names what `tcp-linux49:` does.
        assert_eq!(
            TcpProfile::from_name("tcp-linux:frto+prr+wheel+oow")
                .unwrap()
                .name(),
            "tcp-linux49:frto+prr+wheel+oow"
        );
        assert_eq!(
            TcpProfile::from_name(
                "tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6+tlp1+wscale+oowreset"
            )
            .unwrap()
            .name(),
            "tcp-linux6"
        );
        // Model 9's `tcp-linux6`, without `oowreset`, model 7's, without
        // `wscale` either, and model 6's, without `tlp1` too, stay
        // reachable.
        let m9 = "tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6+tlp1+wscale";
        assert_eq!(TcpProfile::from_name(m9).unwrap().name(), m9);
        let m7 = "tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6+tlp1";
        assert_eq!(TcpProfile::from_name(m7).unwrap().name(), m7);
        let m6 = "tcp-linux:sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6";
        assert_eq!(TcpProfile::from_name(m6).unwrap().name(), m6);
        assert_eq!(TcpProfile::from_name("tcp-linux:cubic"), None);
        let e = TcpProfile::switch_name_error("tcp-linux49:quickack").unwrap();
        assert!(e.contains("sack, er, rack, tlp, frto, prr") && !e.contains("quickack"));
        let e = TcpProfile::switch_name_error("tcp-linux:tlp+tlp").unwrap();
        assert!(e.contains("quickack, ato, rto1s, syn6, tlp6, tlp1"), "{e}");
        assert_eq!(TcpProfile::switch_name_error("tcp-linux:tlp"), None);
        assert_eq!(TcpProfile::switch_name_error("tcp-bogus"), None);
    }

    #[test]
    fn configs_follow_the_mtu() {
        let SocketConfig::Linux(l) = TcpProfile::from_name("tcp").unwrap().config(296) else {
            panic!()
        };
        assert_eq!(l, TcpConfig::linux());
        let SocketConfig::Linux(d) = TcpProfile::Linux(Some(Mechanisms::DEBIAN9)).config(296)
        else {
            panic!()
        };
        assert_eq!(d, TcpConfig::debian9());
        let SocketConfig::Linux(k) = TcpProfile::from_name("tcp-linux6").unwrap().config(1500)
        else {
            panic!()
        };
        assert_eq!(
            k,
            TcpConfig {
                mss: 1460,
                ..TcpConfig::linux6()
            }
        );
        let SocketConfig::Linux(n) = TcpProfile::from_name("tcp-newreno").unwrap().config(296)
        else {
            panic!()
        };
        assert_eq!(n, TcpConfig::newreno());
        let SocketConfig::Lwip(w) = TcpProfile::from_name("tcp-lwip-cwnd").unwrap().config(296)
        else {
            panic!()
        };
        assert_eq!((w.tcp_mss, w.announced_mss()), (536, 256));
        assert_eq!(w.loss_window, LwipLossWindow::HalfMinCwnd);
        assert_eq!(w.backoff, LwipBackoff::Table);
    }
}
