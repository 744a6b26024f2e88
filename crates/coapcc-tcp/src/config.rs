//! Configuration of the TCP model: the `linux` profile of transport-tcp.md §2.

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

/// Parameters of one TCP endpoint. [`TcpConfig::linux`] is the profile the
/// published evaluations ran (transport-tcp.md §2).
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
}

impl TcpConfig {
    /// The `linux` profile (transport-tcp.md §2) for a 296-byte MTU: MSS 256,
    /// initial RTO 2 s, RTO at most 120 s, 40 SYN and SYN-ACK retries,
    /// initial cwnd 10 segments, Nagle on, delayed ACK 200 ms.
    pub fn linux() -> Self {
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
    }
}
