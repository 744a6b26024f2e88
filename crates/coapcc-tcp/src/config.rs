//! Configuration of the TCP model: the `linux` profile of transport-tcp.md §2
//! (Linux 4.9 with Debian 9's defaults, [`TcpConfig::linux`]) and model 2's
//! NewReno profile ([`TcpConfig::newreno`]).

/// One millisecond in nanoseconds.
pub const MS: u64 = 1_000_000;
/// One second in nanoseconds.
pub const SEC: u64 = 1_000_000_000;

/// Which Nagle rule holds back small segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nagle {
    /// No Nagle: small segments leave at once (TCP_NODELAY).
    Off,
    /// RFC 896 as the spec states it (transport-tcp.md §2): a segment smaller
    /// than the MSS waits while any sent data is unacknowledged.
    Classic,
    /// Linux's variant (Minshall): a small segment waits only while the last
    /// *small* segment sent is unacknowledged.
    Minshall,
}

/// The loss-recovery mechanisms of Linux 4.9, each as the sysctl that switches
/// it (transport-tcp.md §2, corrected; `docs/decisions.md`, "CoAP over TCP
/// and the TCP model"). [`Linux49::DEBIAN9`] is every default of a Debian 9
/// host; [`Linux49::BASE`] has all of them off (Linux 4.9's Reno-style
/// recovery with `tcp_sack=0`, used only to take the mechanisms apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Linux49 {
    /// `net.ipv4.tcp_sack = 1`: SACK-permitted on SYN / SYN-ACK, SACK and
    /// D-SACK blocks from the receiver (`tcp_dsack = 1`), the sender's
    /// scoreboard and SACK-based recovery with FACK (`tcp_fack = 1`).
    pub sack: bool,
    /// `net.ipv4.tcp_early_retrans` ∈ {2, 3}: RFC 5827 early retransmit
    /// when fewer than four segments are out, delayed by max(SRTT/4, 2 ms)
    /// (`tcp_time_to_recover`, `tcp_pause_early_retransmit`).
    pub early_retransmit: bool,
    /// `net.ipv4.tcp_recovery = 1`: RACK marks segments lost by send time
    /// once recovery has started (`tcp_rack_mark_lost`).
    pub rack: bool,
    /// `net.ipv4.tcp_early_retrans` ∈ {3, 4}: the tail loss probe
    /// (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`).
    pub tlp: bool,
    /// `net.ipv4.tcp_frto = 2`: F-RTO (RFC 5682, SACK-enhanced) after a
    /// retransmission timeout (`tcp_process_loss`).
    pub frto: bool,
    /// Proportional Rate Reduction (RFC 6937, `tcp_cwnd_reduction`; always on
    /// in 4.9). Off: cwnd = ssthresh for the whole recovery (RFC 6675 §5),
    /// the fast retransmission itself always allowed.
    pub prr: bool,
}

impl Linux49 {
    /// Debian 9's Linux 4.9 as the testbed hosts ran it: `tcp_sack = 1`,
    /// `tcp_dsack = 1`, `tcp_fack = 1`, `tcp_early_retrans = 3`,
    /// `tcp_recovery = 1`, `tcp_frto = 2`, PRR.
    pub const DEBIAN9: Linux49 = Linux49 {
        sack: true,
        early_retransmit: true,
        rack: true,
        tlp: true,
        frto: true,
        prr: true,
    };
    /// Every mechanism off (`tcp_sack = 0`, `tcp_early_retrans = 0`,
    /// `tcp_recovery = 0`, `tcp_frto = 0`, no PRR): the Linux 4.9 state
    /// machine with Reno-style recovery only.
    pub const BASE: Linux49 = Linux49 {
        sack: false,
        early_retransmit: false,
        rack: false,
        tlp: false,
        frto: false,
        prr: false,
    };

    /// The mechanisms' names, in the order the ablation adds them.
    pub const NAMES: [&'static str; 6] = ["sack", "er", "rack", "tlp", "frto", "prr"];

    /// Switches the mechanism called `name` (see [`Self::NAMES`]); false if
    /// there is none.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        let field = match name {
            "sack" => &mut self.sack,
            "er" => &mut self.early_retransmit,
            "rack" => &mut self.rack,
            "tlp" => &mut self.tlp,
            "frto" => &mut self.frto,
            "prr" => &mut self.prr,
            _ => return false,
        };
        *field = on;
        true
    }

    /// Whether the mechanism called `name` is on.
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "sack" => self.sack,
            "er" => self.early_retransmit,
            "rack" => self.rack,
            "tlp" => self.tlp,
            "frto" => self.frto,
            "prr" => self.prr,
            _ => return None,
        })
    }
}

/// Parameters of one TCP endpoint. [`TcpConfig::linux`] is the profile the
/// published evaluations ran (transport-tcp.md §2): Linux 4.9 as Debian 9
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
    /// How many retransmission timeouts of data in a row before giving up.
    pub data_retries: u32,
    /// Initial congestion window in segments (Linux: 10, RFC 6928).
    pub initial_cwnd: u32,
    /// Largest window advertised (no window scaling: at most 65535).
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
    /// The sender's loss recovery: `Some` runs Linux 4.9's (its state
    /// machine, scoreboard and timers, in packets) with these mechanisms;
    /// `None` runs model 2's byte-counted NewReno (`tcp-newreno`).
    pub linux: Option<Linux49>,
}

impl TcpConfig {
    /// The `linux` profile (transport-tcp.md §2) for a 296-byte MTU: MSS 256,
    /// initial RTO 2 s, RTO at most 120 s, 40 SYN and SYN-ACK retries,
    /// initial cwnd 10 segments, Nagle on, delayed ACK 200 ms, and Linux 4.9's
    /// loss recovery with Debian 9's defaults ([`Linux49::DEBIAN9`]).
    pub fn linux() -> Self {
        TcpConfig {
            linux: Some(Linux49::DEBIAN9),
            ..Self::newreno()
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

    #[test]
    fn linux_profile() {
        let c = TcpConfig::linux();
        assert_eq!(c.mss, 256);
        assert_eq!(c.initial_rto, 2_000_000_000);
        assert_eq!(c.max_rto, 120_000_000_000);
        assert_eq!(c.syn_retries, 40);
        assert_eq!(c.delayed_ack, 200_000_000);
        assert_eq!(c.linux, Some(Linux49::DEBIAN9));
        assert_eq!(TcpConfig::newreno().linux, None);
        assert_eq!(TcpConfig { linux: None, ..c }, TcpConfig::newreno());
    }

    #[test]
    fn mechanisms_by_name() {
        let mut m = Linux49::BASE;
        for n in Linux49::NAMES {
            assert_eq!(m.get(n), Some(false));
            assert!(m.set(n, true));
        }
        assert_eq!(m, Linux49::DEBIAN9);
        assert!(!m.set("cubic", true));
        assert_eq!(m.get("cubic"), None);
    }
}
