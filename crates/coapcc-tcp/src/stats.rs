//! Counters and trace events a TCP endpoint reports to the simulator
//! (docs/spec/testbed-spec.md §3: unnecessary retransmissions are counted where they arrive:
//! data the receiver already had, duplicate SYNs and SYN-ACKs).

/// Why a connection ended without a normal close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// The SYN or SYN-ACK was retransmitted the configured number of times.
    HandshakeTimeout,
    /// Data went unacknowledged through the configured number of timeouts.
    RetransmitTimeout,
    /// The peer sent RST.
    Reset,
}

/// A trace event. Enabled with [`crate::TcpConfig::record_events`]; drained
/// with [`crate::TcpSocket::poll_event`]. Events carry no time: they belong to
/// the call that produced them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpEvent {
    /// The handshake completed.
    Connected,
    /// A valid RTT sample (Karn's rule passed) and the RTO it gives (ns).
    RttSample {
        /// The measured round-trip time.
        rtt: u64,
        /// Smoothed RTT after the sample.
        srtt: u64,
        /// The new RTO.
        rto: u64,
    },
    /// The retransmission timer expired.
    RtoExpired {
        /// The timer value that expired (ns).
        expired: u64,
        /// The backed-off RTO now in force (ns).
        next_rto: u64,
        /// Timeouts in a row.
        backoff: u32,
    },
    /// cwnd or ssthresh changed (bytes; ssthresh `u64::MAX` = unbounded).
    Window {
        /// Congestion window.
        cwnd: u64,
        /// Slow-start threshold.
        ssthresh: u64,
    },
    /// Third duplicate ACK: fast retransmit and fast recovery.
    FastRetransmit,
    /// A segment whose data the receiver already had, as stream byte offsets
    /// `[start, end)` (0 is the first data byte).
    DuplicateData {
        /// First stream offset.
        start: u64,
        /// One past the last.
        end: u64,
    },
    /// A SYN the receiver had already received.
    DuplicateSyn,
    /// A SYN-ACK the receiver had already received.
    DuplicateSynAck,
    /// The peer closed its direction (FIN received in order).
    PeerClosed,
    /// The connection is fully closed.
    Closed,
    /// The connection was given up.
    Aborted(AbortReason),
}

/// Counters of one endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Segments emitted, of every kind.
    pub segments_sent: u64,
    /// Segments emitted carrying data.
    pub data_segments_sent: u64,
    /// Payload bytes emitted, retransmissions included.
    pub data_bytes_sent: u64,
    /// Pure ACKs emitted.
    pub pure_acks_sent: u64,
    /// SYN retransmissions.
    pub syn_retransmissions: u64,
    /// SYN-ACK retransmissions (timer or duplicate SYN).
    pub synack_retransmissions: u64,
    /// Segments that resent data or a FIN already sent.
    pub retransmitted_segments: u64,
    /// Payload bytes in those segments that had been sent before.
    pub retransmitted_bytes: u64,
    /// Retransmission-timer expirations (handshake included).
    pub rto_expirations: u64,
    /// Fast retransmits (third duplicate ACK).
    pub fast_retransmits: u64,
    /// Valid RTT samples taken.
    pub rtt_samples: u64,
    /// Received data segments whose every byte had been received before.
    pub dup_data_segments: u64,
    /// Bytes in those segments.
    pub dup_data_bytes: u64,
    /// Received duplicate SYNs.
    pub dup_syns: u64,
    /// Received duplicate SYN-ACKs.
    pub dup_synacks: u64,
    /// Tail loss probes sent (`tcp_send_loss_probe`; Linux's `TCPLossProbes`).
    pub loss_probes: u64,
    /// Timeouts found spurious by F-RTO and undone (`tcp_try_undo_loss` with
    /// `frto_undo`; Linux's `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// ACKs carrying a D-SACK block (`tcp_check_dsack`; Linux's
    /// `TCPDSACKRecv`).
    pub dsacks_received: u64,
}
