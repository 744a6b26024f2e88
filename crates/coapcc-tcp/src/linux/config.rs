//! Configuration of the TCP model: the `linux` profile of docs/spec/transport-tcp-spec.md §2
//! (Linux 4.9 as the thesis configured it, [`TcpConfig::linux`]), its
//! mechanism switches ([`Mechanisms`]: Debian 9's 4.9 defaults, a Linux 6.x
//! host) and model 2's NewReno profile ([`TcpConfig::newreno`]).

use crate::{MS, SEC};

/// Which Nagle rule holds back small segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nagle {
    /// No Nagle: small segments leave at once (TCP_NODELAY).
    Off,
    /// RFC 896 as the spec states it (docs/spec/transport-tcp-spec.md §2): a segment smaller
    /// than the MSS waits while any sent data is unacknowledged.
    Classic,
    /// Linux's variant (Minshall): a small segment waits only while the last
    /// *small* segment sent is unacknowledged.
    Minshall,
}

/// The mechanisms of the `linux` profile, each behind a named switch
/// (docs/spec/transport-tcp-spec.md §2, corrected; `docs/decisions/tcp-choices.md`, "TCP model" and
/// "Linux 4.9's loss recovery"). The first six are Linux
/// 4.9's loss-recovery mechanisms, as the sysctl that switches each; then
/// Linux's timers and its answers to repeated SYNs; then where a Linux 6.x
/// host differs from Linux 4.9 as the thesis configured it, and `wscale`
/// (both kernels' default); the last three are readings the sources leave
/// open (`docs/decisions/tcp-choices.md`, "Readings behind switches":
/// `oowreset` is 4.9's and 6.x's code and every Linux preset has it,
/// `hz1000` and `nodelay` no listed profile takes). Everything the two
/// kernels share (the state machine, the RTT estimator, Reno window
/// growth, Nagle, the handshake) is always on.
///
/// Named sets: [`Mechanisms::THESIS`] (`tcp`: SACK off, early retransmit,
/// F-RTO, PRR),
/// [`Mechanisms::DEBIAN9`] (Debian 9's 4.9 defaults), [`Mechanisms::LINUX6`]
/// and [`Mechanisms::LINUX6_NOSACK`] (this machine's kernel as the
/// cross-check configures it), [`Mechanisms::BASE`] (all off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mechanisms {
    /// `net.ipv4.tcp_sack = 1`: SACK-permitted on SYN / SYN-ACK, SACK and
    /// D-SACK blocks from the receiver (`tcp_dsack = 1`), the sender's
    /// scoreboard and SACK-based recovery with FACK (`tcp_fack = 1`).
    pub sack: bool,
    /// `net.ipv4.tcp_early_retrans` ∈ {2, 3}: RFC 5827 early retransmit
    /// when fewer than four segments are out, delayed by max(SRTT/4, 2 ms)
    /// (`tcp_time_to_recover`, `tcp_pause_early_retransmit`); without SACK
    /// on Reno's duplicate ACKs (`tcp_add_reno_sack`).
    pub early_retransmit: bool,
    /// `net.ipv4.tcp_recovery = 1`: RACK marks segments lost by send time
    /// once recovery has started (`tcp_rack_mark_lost`).
    pub rack: bool,
    /// `net.ipv4.tcp_early_retrans` ∈ {3, 4}: the tail loss probe
    /// (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`).
    pub tlp: bool,
    /// `net.ipv4.tcp_frto = 2`: F-RTO after a retransmission timeout
    /// (`tcp_process_loss`: RFC 5682's SACK-enhanced steps with SACK, the
    /// basic ones on cumulative ACKs without).
    pub frto: bool,
    /// Proportional Rate Reduction (RFC 6937, `tcp_cwnd_reduction`; always on
    /// in 4.9). Off: cwnd = ssthresh for the whole recovery (RFC 6675 §5),
    /// the fast retransmission itself always allowed.
    pub prr: bool,
    /// `wheel`: Linux's TCP timers in jiffies (HZ = 250) on the timer wheel
    /// of Linux 4.8 and later: every RTO, probe, early-retransmit,
    /// delayed-ACK and TIME-WAIT timer fires at the end of its wheel bucket,
    /// up to 12.5 % late, and the RTO is whole jiffies ([`super::wheel`];
    /// HZ = 1000 with `hz1000`). Off: every timer fires exactly when due.
    pub wheel: bool,
    /// `oow`: a copy of a SYN or SYN-ACK reaching a synchronized socket is
    /// answered at most once per 500 ms (`tcp_oow_rate_limited`), and an
    /// answer in SYN-RECEIVED restarts the SYN-ACK timer (`tcp_check_req`).
    /// Off: every copy answered at once, the timer left alone.
    pub oow: bool,
    /// `quickack`: the receiver's quick-ACK mode (`tcp_incr_quickack`,
    /// `tcp_enter_quickack_mode`, `tcp_in_quickack_mode`,
    /// `tcp_dec_quickack_mode`) with the ping-pong (interactive) detection of
    /// `tcp_event_data_sent`: up to `TCP_MAX_QUICKACKS` = 16 immediate ACKs
    /// from the first data of a connection, after duplicate or
    /// out-of-window data, and after a gap of more than an RTO; an ACK
    /// decided on the receive path leaves as its own segment, before the
    /// application answers (`__tcp_ack_snd_check` runs in the softirq).
    /// Off: the spec's rule (docs/spec/transport-tcp-spec.md §2).
    pub quickack: bool,
    /// `ato`: the adaptive delayed-ACK timeout (`tcp_event_data_recv`,
    /// `tcp_send_delayed_ack`, `tcp_delack_timer_handler`): ato starts at
    /// `TCP_ATO_MIN` = 40 ms, follows the inter-arrival time, doubles when
    /// the timer fires, and the timer waits at most min(ato, SRTT,
    /// `TCP_DELACK_MAX` = 200 ms). Off: a constant [`TcpConfig::delayed_ack`].
    pub adaptive_ato: bool,
    /// `rto1s`: initial RTO 1 s (`TCP_TIMEOUT_INIT` since Linux 3.1,
    /// RFC 6298) instead of the thesis's 2 s.
    pub initial_rto_1s: bool,
    /// `syn6`: the SYN timers of a Linux 6.x host with its defaults:
    /// `tcp_syn_retries = 6`, `tcp_synack_retries = 5`, and
    /// `tcp_syn_linear_timeouts = 4` (the first four SYN timeouts do not
    /// double the RTO). Off: 40 retries each, every timeout doubling.
    pub syn6: bool,
    /// `tlp6`: the tail loss probe's timeout as Linux 6.x computes it
    /// (`tcp_schedule_loss_probe`): 2·SRTT + `tcp_rto_min` with one packet
    /// out, 2·SRTT + 2 ms otherwise, 1 s without a sample, and probes also
    /// from CWR. Off: Linux 4.9's max(2·SRTT, 1.5·SRTT + 200 ms).
    pub tlp6: bool,
    /// `tlp1`: the tail loss probe's timer and episodes as Linux 6.x runs
    /// them. An ACK re-arms the probe or RTO timer only if it acknowledged
    /// data (`tcp_ack` → `tcp_set_xmit_timer` on `FLAG_SET_XMIT_TIMER`,
    /// Linux 4.13+); at most one probe per flight (`tcp_send_loss_probe`,
    /// `tcp_process_tlp_ack`, Linux 5.8+): a probe of new data also opens a
    /// probe episode (`tlp_high_seq`, with `tlp_retrans` clear), which ends
    /// when that data is acknowledged, and no probe, new data or not, leaves
    /// while an episode is open; and only a D-SACK of the probe itself (at
    /// most one MSS, ending at `tlp_high_seq`; `tcp_dsack_seen`'s
    /// `FLAG_DSACK_TLP`, Linux 5.15+) ends a retransmitted probe's episode;
    /// and the probe is armed even while cwnd has room and new data waits
    /// (6.x's `tcp_schedule_loss_probe` has no such test).
    /// Off: every ACK cancels a pending probe and arms it afresh (model 6's
    /// rule), a new-data probe opens no episode, any D-SACK ends one, and no
    /// probe is armed while new data could go (Linux 4.9).
    pub tlp1: bool,
    /// `wscale`: the window-scale option on SYN and SYN-ACK (NOP, kind 3,
    /// length 3, shift: 4 bytes), as both Linux 4.9 and 6.x send it with
    /// `tcp_window_scaling = 1` (the default) and answer it when the SYN had
    /// it (`tcp_syn_options`, `tcp_synack_options`). Only the bytes are
    /// modelled (windows stay below 64 KiB here). Off: the spec's header
    /// sizes (docs/spec/transport-tcp-spec.md §2: the MSS option alone on SYN / SYN-ACK).
    pub wscale: bool,
    /// `hz1000`: the jiffy of a `CONFIG_HZ_1000` kernel (1 ms) instead of
    /// `CONFIG_HZ_250`'s 4 ms for every timer on the wheel and for the RTO's
    /// whole jiffies (`usecs_to_jiffies`, `calc_wheel_index`, `calc_index`
    /// in `kernel/time/timer.c`: the same levels in jiffies, so buckets of
    /// 1, 8, 64, 512 ms); acts only with `wheel`. Off: HZ = 250.
    pub hz1000: bool,
    /// `oowreset`: the server's connection starts with no rate-limit stamp
    /// when the handshake completes (`tcp_create_openreq_child` zeroes the
    /// child's `last_oow_ack_time`; the request socket kept its own), so a
    /// repeated SYN right after the handshake is answered even if the
    /// SYN-ACK was resent less than 500 ms before; acts only with `oow`.
    /// Off: one stamp for the whole connection.
    pub oow_reset: bool,
    /// `nodelay`: `TCP_NODELAY` on every socket, so Nagle never holds a
    /// segment (`tcp_nagle_test` with `TCP_NAGLE_OFF`): the CoAP-over-TCP
    /// client's first request leaves at once after its CSM. Off: Nagle as
    /// the spec states it ([`Nagle::Classic`]).
    pub nodelay: bool,
}

/// The old name of [`Mechanisms`], when it held only Linux 4.9's switches.
pub type Linux49 = Mechanisms;

impl Mechanisms {
    /// Linux 4.9 as the thesis configured it (docs/spec/transport-tcp-spec.md §2,
    /// corrected): `tcp_sack = 0`, so NewReno-style recovery without RACK
    /// or the tail loss probe; what thesis §5.5 does not change runs with
    /// 4.9's defaults: early retransmit (`tcp_early_retrans = 3`; 4.9's
    /// `tcp_enable_early_retrans` does not require SACK, and Reno's
    /// duplicate ACKs count as `sacked_out`), F-RTO (`tcp_frto = 2`, the
    /// non-SACK steps), PRR, the window-scale option
    /// (`tcp_window_scaling = 1`) and the fresh rate-limit stamp of an
    /// accepted connection (`tcp_create_openreq_child`, 4.0+). The `tcp`
    /// profile.
    pub const THESIS: Mechanisms = Mechanisms {
        early_retransmit: true,
        frto: true,
        prr: true,
        wheel: true,
        oow: true,
        wscale: true,
        oow_reset: true,
        ..Self::BASE
    };
    /// Debian 9's Linux 4.9 with its defaults: [`Self::THESIS`] with
    /// `tcp_sack = 1`, `tcp_dsack = 1`, `tcp_fack = 1` and
    /// `tcp_recovery = 1`, so RACK and the tail loss probe
    /// (`tcp_early_retrans = 3`) too (model 3's `tcp` had its recovery
    /// mechanisms; now `tcp-linux49-debian9`).
    pub const DEBIAN9: Mechanisms = Mechanisms {
        sack: true,
        rack: true,
        tlp: true,
        ..Self::THESIS
    };
    /// A Linux 6.x host with its defaults as the kernel cross-check
    /// configures it (Reno per socket, no metrics, no timestamps): Debian 9's
    /// recovery mechanisms, window-scale option and fresh rate-limit stamp
    /// (6.x's `tcp_create_openreq_child` still zeroes it) plus every 6.x
    /// difference the model has (`tcp-linux6`).
    pub const LINUX6: Mechanisms = Mechanisms {
        quickack: true,
        adaptive_ato: true,
        initial_rto_1s: true,
        syn6: true,
        tlp6: true,
        tlp1: true,
        ..Self::DEBIAN9
    };
    /// [`Self::LINUX6`] with `tcp_sack = 0`, so no RACK or tail loss probe
    /// either, and no early retransmit (6.x has none of its own:
    /// RACK took its place): `tcp-linux6-nosack`.
    pub const LINUX6_NOSACK: Mechanisms = Mechanisms {
        sack: false,
        early_retransmit: false,
        rack: false,
        tlp: false,
        tlp6: false,
        tlp1: false,
        ..Self::LINUX6
    };
    /// Every switch off (`tcp_sack = 0`, `tcp_early_retrans = 0`,
    /// `tcp_recovery = 0`, `tcp_frto = 0`, no PRR, the spec's delayed ACK
    /// and timers): the Linux 4.9 state machine with Reno-style recovery
    /// only.
    pub const BASE: Mechanisms = Mechanisms {
        sack: false,
        early_retransmit: false,
        rack: false,
        tlp: false,
        frto: false,
        prr: false,
        wheel: false,
        oow: false,
        quickack: false,
        adaptive_ato: false,
        initial_rto_1s: false,
        syn6: false,
        tlp6: false,
        tlp1: false,
        wscale: false,
        hz1000: false,
        oow_reset: false,
        nodelay: false,
    };

    /// Every switch's name: Linux 4.9's recovery mechanisms in the order
    /// the ablation adds them, then the Linux 6.x differences and
    /// `wscale`, then the readings (`hz1000`, `oowreset`, `nodelay`).
    pub const NAMES: [&'static str; 18] = [
        "sack", "er", "rack", "tlp", "frto", "prr", "wheel", "oow", "quickack", "ato", "rto1s",
        "syn6", "tlp6", "tlp1", "wscale", "hz1000", "oowreset", "nodelay",
    ];
    /// The names of Linux 4.9's recovery mechanisms (the first six of
    /// [`Self::NAMES`]).
    pub const LINUX49_NAMES: [&'static str; 8] =
        ["sack", "er", "rack", "tlp", "frto", "prr", "wheel", "oow"];

    /// Switches the mechanism called `name` (see [`Self::NAMES`]); false if
    /// there is none.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match self.field(name) {
            Some(f) => {
                *f = on;
                true
            }
            None => false,
        }
    }

    /// Whether the mechanism called `name` is on.
    pub fn get(&self, name: &str) -> Option<bool> {
        let mut copy = *self;
        copy.field(name).map(|f| *f)
    }

    fn field(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "sack" => &mut self.sack,
            "er" => &mut self.early_retransmit,
            "rack" => &mut self.rack,
            "tlp" => &mut self.tlp,
            "frto" => &mut self.frto,
            "prr" => &mut self.prr,
            "wheel" => &mut self.wheel,
            "oow" => &mut self.oow,
            "quickack" => &mut self.quickack,
            "ato" => &mut self.adaptive_ato,
            "rto1s" => &mut self.initial_rto_1s,
            "syn6" => &mut self.syn6,
            "tlp6" => &mut self.tlp6,
            "tlp1" => &mut self.tlp1,
            "wscale" => &mut self.wscale,
            "hz1000" => &mut self.hz1000,
            "oowreset" => &mut self.oow_reset,
            "nodelay" => &mut self.nodelay,
            _ => return None,
        })
    }

    /// Whether any switch past [`Self::LINUX49_NAMES`] is on: a Linux 6.x
    /// difference, `wscale` or a reading (`hz1000`, `oowreset`, `nodelay`),
    /// so the profile, if no listed name has it, is named `tcp-linux:…`.
    pub fn has_linux6(&self) -> bool {
        Self::NAMES[Self::LINUX49_NAMES.len()..]
            .iter()
            .any(|n| self.get(n) == Some(true))
    }

    /// The names of the switches that are on, joined by `+`.
    pub fn joined(&self) -> String {
        let on: Vec<&str> = Self::NAMES
            .into_iter()
            .filter(|n| self.get(n) == Some(true))
            .collect();
        on.join("+")
    }
}

/// Parameters of one TCP endpoint. [`TcpConfig::linux`] is the profile the
/// published evaluations ran (docs/spec/transport-tcp-spec.md §2): Linux 4.9 as the thesis
/// configured it; [`TcpConfig::newreno`] is model 2's NewReno profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Maximum segment size announced in the SYN and used for sending (the
    /// smaller of ours and the peer's).
    pub mss: u16,
    /// RTO before the first RTT sample (ns).
    pub initial_rto: u64,
    /// Lower bound on the RTT variation term (Linux `tcp_rto_min`, ns).
    pub min_rto: u64,
    /// Upper bound on the RTO, also on the backed-off RTO (ns).
    pub max_rto: u64,
    /// RTO used for data when the handshake had a retransmission and gave no
    /// RTT sample (RFC 6298 §5.7; Linux `TCP_TIMEOUT_FALLBACK`, ns).
    pub fallback_rto: u64,
    /// How many times a SYN is retransmitted before giving up.
    pub syn_retries: u32,
    /// How many times a SYN-ACK is retransmitted before giving up.
    pub synack_retries: u32,
    /// How many SYN timeouts leave the RTO as it is before the doubling
    /// starts, and how many retries they add to [`Self::syn_retries`]
    /// (Linux 6.7+ `tcp_syn_linear_timeouts`, a u8 sysctl; 0 doubles every
    /// time).
    pub syn_linear_timeouts: u8,
    /// How many retransmission timeouts of data in a row before giving up.
    pub data_retries: u32,
    /// Initial congestion window in segments (Linux: 10, RFC 6928).
    pub initial_cwnd: u32,
    /// Largest window advertised (at most 65535: the `wscale` switch sends
    /// the option's bytes, and no shift is applied).
    pub rcv_wnd: u16,
    /// Receive buffer capacity (bytes delivered but not yet read, plus
    /// out-of-order data). The advertised window is the smaller of
    /// `rcv_wnd` and the free space.
    pub rcv_buf: usize,
    /// Send buffer capacity (unacknowledged plus unsent bytes).
    pub snd_buf: usize,
    /// Delayed-ACK timer (ns); 0 acknowledges every segment at once.
    pub delayed_ack: u64,
    /// Nagle's algorithm.
    pub nagle: Nagle,
    /// How long TIME-WAIT lasts (ns; Linux `TCP_TIMEWAIT_LEN` = 60 s).
    pub time_wait: u64,
    /// Initial send sequence number.
    pub isn: u32,
    /// Whether to queue [`crate::TcpEvent`]s for [`crate::TcpSocket::poll_event`].
    pub record_events: bool,
    /// The sender's loss recovery and the receiver's ACK policy: `Some`
    /// runs Linux's (its state machine, scoreboard and timers, in packets)
    /// with these mechanisms; `None` runs model 2's byte-counted NewReno
    /// (`tcp-newreno`). Build with [`TcpConfig::with_mechanisms`], which also
    /// sets the timers the switches change.
    pub linux: Option<Mechanisms>,
}

impl TcpConfig {
    /// The `linux` profile (docs/spec/transport-tcp-spec.md §2, corrected) for a 296-byte
    /// MTU: MSS 256, initial RTO 2 s, RTO at most 120 s, 40 SYN and SYN-ACK
    /// retries, initial cwnd 10 segments, Nagle on, delayed ACK 200 ms, and
    /// Linux 4.9's loss recovery as the thesis configured it
    /// ([`Mechanisms::THESIS`]: SACK off, early retransmit, F-RTO, PRR,
    /// the window-scale option).
    pub fn linux() -> Self {
        Self::with_mechanisms(Mechanisms::THESIS)
    }

    /// Model 3's `tcp`: Linux 4.9 with Debian 9's defaults
    /// ([`Mechanisms::DEBIAN9`]), the same parameters otherwise.
    pub fn debian9() -> Self {
        Self::with_mechanisms(Mechanisms::DEBIAN9)
    }

    /// A Linux 6.x host with its defaults ([`Mechanisms::LINUX6`]): initial
    /// RTO 1 s, 6 SYN and 5 SYN-ACK retries with 4 linear SYN timeouts,
    /// quick-ACK mode and the adaptive delayed ACK, SACK, RACK, the tail
    /// loss probe, F-RTO, PRR.
    pub fn linux6() -> Self {
        Self::with_mechanisms(Mechanisms::LINUX6)
    }

    /// The `linux` profile with these mechanisms, and the parameters their
    /// switches set: `rto1s` the initial RTO (1 s, else 2 s), `syn6` the
    /// SYN retries (6 / 5 with 4 linear timeouts, else 40 / 40), `nodelay`
    /// Nagle (off, else [`Nagle::Classic`]).
    pub fn with_mechanisms(m: Mechanisms) -> Self {
        let base = Self::newreno();
        TcpConfig {
            linux: Some(m),
            nagle: if m.nodelay { Nagle::Off } else { base.nagle },
            initial_rto: if m.initial_rto_1s {
                SEC
            } else {
                base.initial_rto
            },
            syn_retries: if m.syn6 { 6 } else { base.syn_retries },
            synack_retries: if m.syn6 { 5 } else { base.synack_retries },
            syn_linear_timeouts: if m.syn6 { 4 } else { 0 },
            ..base
        }
    }

    /// Model 2's `linux` profile, kept as `tcp-newreno`: the same parameters
    /// with byte-counted NewReno, no SACK, no tail loss probe, no RACK, no
    /// F-RTO, no PRR.
    pub fn newreno() -> Self {
        TcpConfig {
            mss: Self::mss_for_mtu(296),
            initial_rto: 2 * SEC,
            min_rto: 200 * MS,
            max_rto: 120 * SEC,
            fallback_rto: 3 * SEC,
            syn_retries: 40,
            synack_retries: 40,
            syn_linear_timeouts: 0,
            data_retries: 15,
            initial_cwnd: 10,
            rcv_wnd: 65535,
            rcv_buf: 1 << 20,
            snd_buf: 1 << 20,
            delayed_ack: 200 * MS,
            nagle: Nagle::Classic,
            time_wait: 60 * SEC,
            isn: 0,
            record_events: false,
            linux: None,
        }
    }

    /// The MSS for an IPv4 path MTU: MTU − 20 (IPv4) − 20 (TCP).
    pub fn mss_for_mtu(mtu: u16) -> u16 {
        mtu.saturating_sub(40)
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::linux()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `tcp` profile's parameters, each from the source that sets it,
    /// not from the constants above.
    fn thesis_parameters(linux: Option<Mechanisms>) -> TcpConfig {
        TcpConfig {
            // The testbed's 296-byte MTU less 20 (IPv4) and 20 (TCP) bytes.
            mss: 296 - 40,
            // Thesis §5.5: "by default an initial RTO of 2 seconds and a
            // maximum RTO of 120 seconds, which were not modified".
            initial_rto: 2 * 1_000_000_000,
            max_rto: 120 * 1_000_000_000,
            // `TCP_RTO_MIN` = HZ/5 jiffies = 200 ms; `TCP_TIMEOUT_FALLBACK`
            // = 3·HZ = 3 s (include/net/tcp.h).
            min_rto: 200_000_000,
            fallback_rto: 3_000_000_000,
            // Thesis §5.5: "The TCP SYN and SYN/ACK retries is increased to
            // 40"; no linear timeouts in 4.9.
            syn_retries: 40,
            synack_retries: 40,
            syn_linear_timeouts: 0,
            // `tcp_retries2` = 15 (`TCP_RETR2`).
            data_retries: 15,
            // `TCP_INIT_CWND` = 10 (RFC 6928).
            initial_cwnd: 10,
            // The 16-bit field's largest value: `wscale` sends the option's
            // bytes, not a shift (no window here reaches 64 KiB).
            rcv_wnd: 65_535,
            // The model's buffers, larger than anything a run queues.
            rcv_buf: 1 << 20,
            snd_buf: 1 << 20,
            // Thesis §5.5: "delayed ACKs are sent with a constant 200 ms
            // timer".
            delayed_ack: 200_000_000,
            // Nagle on: sockets without TCP_NODELAY (spec §2), as the spec
            // states it.
            nagle: Nagle::Classic,
            // `TCP_TIMEWAIT_LEN` = 60·HZ.
            time_wait: 60 * 1_000_000_000,
            isn: 0,
            record_events: false,
            linux,
        }
    }

    #[test]
    fn linux_profile() {
        let thesis = Mechanisms::THESIS;
        assert_eq!(TcpConfig::linux(), thesis_parameters(Some(thesis)));
        // Model 2's NewReno and Debian 9's 4.9: the same parameters.
        assert_eq!(TcpConfig::newreno(), thesis_parameters(None));
        assert_eq!(
            TcpConfig::debian9(),
            thesis_parameters(Some(Mechanisms::DEBIAN9))
        );
    }

    #[test]
    fn thesis_is_sack_off_with_er_frto_and_prr() {
        // Thesis §5.5: "The implementation uses TCP NewReno", i.e.
        // `tcp_sack = 0`. Linux 4.9 runs RACK and the tail loss probe only
        // on SACK connections (`tcp_is_sack` in `tcp_schedule_loss_probe`,
        // RACK's SACK marks), so both are off. Everything §5.5 does not set
        // keeps 4.9's default: early retransmit (`tcp_early_retrans` = 3;
        // 4.9's `tcp_enable_early_retrans` has no SACK test, and
        // `tcp_add_reno_sack` counts Reno's duplicate ACKs in
        // `sacked_out`), `tcp_frto` = 2 and PRR (`tcp_cwnd_reduction`, no
        // sysctl). The timer wheel (4.8+) and the 500 ms answer limit
        // (`tcp_invalid_ratelimit` = HZ/2, 4.0+) are 4.9's code, and so is
        // the accepted connection's zeroed stamp (`tcp_create_openreq_child`
        // clears `last_oow_ack_time`, 4.0+): `oowreset`.
        // `tcp_window_scaling` = 1 is the default, and §5.5 lists the
        // options it turned off (timestamps, TFO), not this one: `wscale`.
        // "delayed ACKs are sent with a constant 200 ms timer": no quick-ACK
        // mode, no adaptive ato. "initial RTO of 2 seconds" and "retries …
        // 40": no `rto1s`, no `syn6`. Debian 9's kernel is built with
        // CONFIG_HZ=250: no `hz1000`. Upstream libcoap's TCP never sets
        // TCP_NODELAY: no `nodelay`.
        let expect = Mechanisms {
            sack: false,
            early_retransmit: true,
            rack: false,
            tlp: false,
            frto: true,
            prr: true,
            wheel: true,
            oow: true,
            quickack: false,
            adaptive_ato: false,
            initial_rto_1s: false,
            syn6: false,
            tlp6: false,
            tlp1: false,
            wscale: true,
            hz1000: false,
            oow_reset: true,
            nodelay: false,
        };
        assert_eq!(Mechanisms::THESIS, expect);
        assert!(expect.has_linux6());
        assert_eq!(expect.joined(), "er+frto+prr+wheel+oow+wscale+oowreset");
    }

    #[test]
    fn presets_are_their_kernels_defaults() {
        // Debian 9's 4.9 adds to `tcp` what its `tcp_sack` = 1 turns on:
        // SACK, RACK (`tcp_recovery` = 1) and the tail loss probe
        // (`tcp_early_retrans` = 3); the window-scale option and the
        // zeroed stamp are 4.9's defaults as in `tcp`.
        let debian9 = Mechanisms {
            sack: true,
            rack: true,
            tlp: true,
            ..Mechanisms::THESIS
        };
        assert_eq!(Mechanisms::DEBIAN9, debian9);
        assert_eq!(
            debian9.joined(),
            "sack+er+rack+tlp+frto+prr+wheel+oow+wscale+oowreset"
        );
        // A 6.x host: 6.x's `tcp_create_openreq_child` still zeroes the
        // stamp, so `oowreset` with the 6.x differences; with SACK off 6.x
        // runs no early retransmit (removed from later kernels for RACK, which needs
        // SACK), no RACK and no probe.
        assert_eq!(
            Mechanisms::LINUX6.joined(),
            "sack+er+rack+tlp+frto+prr+wheel+oow+quickack+ato+rto1s+syn6+tlp6+tlp1+wscale+oowreset"
        );
        assert_eq!(
            Mechanisms::LINUX6_NOSACK.joined(),
            "frto+prr+wheel+oow+quickack+ato+rto1s+syn6+wscale+oowreset"
        );
    }

    #[test]
    fn linux6_timers_follow_the_switches() {
        // A Linux 6.x host's defaults: `TCP_TIMEOUT_INIT` = 1·HZ (1 s),
        // `tcp_syn_retries` = 6 (`TCP_SYN_RETRIES`), `tcp_synack_retries` =
        // 5 (`TCP_SYNACK_RETRIES`), `tcp_syn_linear_timeouts` = 4 (6.7+);
        // `TCP_RTO_MIN` 200 ms, `TCP_RTO_MAX` 120 s and the 200 ms delayed
        // ACK bound (`TCP_DELACK_MAX`) as in 4.9.
        let c = TcpConfig::linux6();
        assert_eq!(
            c,
            TcpConfig {
                initial_rto: 1_000_000_000,
                syn_retries: 6,
                synack_retries: 5,
                syn_linear_timeouts: 4,
                ..thesis_parameters(Some(Mechanisms::LINUX6))
            }
        );
        // `tcp_sack = 0` leaves the timers as they are.
        let n = TcpConfig::with_mechanisms(Mechanisms::LINUX6_NOSACK);
        assert_eq!(
            n,
            TcpConfig {
                linux: Some(Mechanisms::LINUX6_NOSACK),
                ..c
            }
        );
        // One switch at a time: `rto1s` alone moves the initial RTO to 1 s
        // and leaves the thesis's 40 SYN retries; `nodelay` alone turns
        // Nagle off (TCP_NODELAY).
        let only = |name: &str| {
            let mut m = Mechanisms::THESIS;
            assert!(m.set(name, true));
            TcpConfig::with_mechanisms(m)
        };
        let rto = only("rto1s");
        assert_eq!((rto.initial_rto, rto.syn_retries), (1_000_000_000, 40));
        let nodelay = only("nodelay");
        assert_eq!(
            nodelay,
            TcpConfig {
                nagle: Nagle::Off,
                ..thesis_parameters(nodelay.linux)
            }
        );
        // `hz1000` acts in the socket, not on parameters; so do `er`,
        // `wscale` and `oowreset`, which `tcp` has: turning one off leaves
        // the parameters too.
        let hz = only("hz1000");
        assert_eq!(hz, thesis_parameters(hz.linux));
        for name in ["er", "wscale", "oowreset"] {
            let mut m = Mechanisms::THESIS;
            assert_eq!(m.get(name), Some(true), "{name}");
            m.set(name, false);
            assert_eq!(
                TcpConfig::with_mechanisms(m),
                thesis_parameters(Some(m)),
                "{name}"
            );
        }
    }

    #[test]
    fn mechanisms_by_name() {
        let mut m = Mechanisms::BASE;
        for n in Mechanisms::LINUX49_NAMES {
            assert_eq!(m.get(n), Some(false));
            assert!(m.set(n, true));
        }
        for n in ["wscale", "oowreset"] {
            assert!(m.set(n, true));
        }
        assert_eq!(m, Mechanisms::DEBIAN9);
        for n in ["quickack", "ato", "rto1s", "syn6", "tlp6", "tlp1"] {
            assert!(m.set(n, true));
        }
        assert_eq!(m, Mechanisms::LINUX6);
        for n in ["hz1000", "nodelay"] {
            assert!(m.set(n, true));
        }
        assert_eq!(m.joined(), Mechanisms::NAMES.join("+"));
        assert!(!m.set("cubic", true));
        assert_eq!(m.get("cubic"), None);
    }
}
