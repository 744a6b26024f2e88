//! The connection states both profiles share ([`crate::TcpSocket`] and
//! [`crate::LwipSocket`] report them the same way).

/// Connection states (RFC 9293 §3.3.2; LISTEN is the caller's: see
/// [`crate::TcpSocket::accept`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    /// No connection (never opened, fully closed, or aborted).
    Closed,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// We sent FIN; the peer has not acknowledged it.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// The peer sent FIN; we may still send.
    CloseWait,
    /// Both sent FIN at once; waiting for the ACK of ours.
    Closing,
    /// The peer closed first, then we sent FIN; waiting for its ACK.
    LastAck,
    /// Both directions closed; lingering to acknowledge a repeated FIN.
    TimeWait,
}
