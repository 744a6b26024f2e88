//! Counters of CoAP-over-TCP clients, by kind (spec `docs/spec/testbed-spec.md` §3: unnecessary
//! retransmissions over TCP are "TCP segments and SYN/SYN-ACK/CSM copies that the
//! receiver had already received"). Kept per client in
//! [`crate::metrics::ClientRecord::tcp`] and summed in
//! [`crate::metrics::Summary::tcp`].

use serde::{Deserialize, Serialize};

/// What one TCP client's connections did, both endpoints included.
///
/// "Unnecessary" counts are taken where the copy arrives: a segment every byte
/// of which the receiving socket already had, or a repeated SYN / SYN-ACK. A
/// duplicate data segment is classed by its first byte: inside the sender's CSM
/// (stream offsets `0..csm_len`) it is a CSM copy, otherwise a request copy
/// (client → server) or a response copy (server → client).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TcpRecord {
    /// Connections opened (one per batch for random clients).
    pub connections: u32,
    /// Connections given up (handshake or data retries exhausted, or reset).
    pub aborted: u32,
    /// Copies of request segments the server already had.
    pub unnecessary_requests: u32,
    /// Copies of response segments the client already had.
    pub unnecessary_responses: u32,
    /// Copies of a CSM (either direction) the receiver already had.
    pub unnecessary_csm: u32,
    /// Repeated SYNs the server already had.
    pub unnecessary_syn: u32,
    /// Repeated SYN-ACKs the client already had.
    pub unnecessary_synack: u32,
    /// SYN retransmissions (client).
    pub syn_retransmissions: u32,
    /// SYN-ACK retransmissions (server; timer or repeated SYN).
    pub synack_retransmissions: u32,
    /// Segments the client resent (data or FIN), go-back-N and fast
    /// retransmits included.
    pub client_retransmitted_segments: u32,
    /// Segments the server resent.
    pub server_retransmitted_segments: u32,
    /// Retransmission-timer expirations at the server (the client's are in
    /// [`crate::metrics::ClientRecord::expirations`]).
    pub server_rto_expirations: u32,
    /// Fast retransmits, both endpoints.
    pub fast_retransmits: u32,
    /// Tail loss probes sent, both endpoints (Linux's `TCPLossProbes`).
    pub loss_probes: u32,
    /// Retransmission timeouts found spurious by F-RTO and undone, both
    /// endpoints (Linux's `TCPSpuriousRTOs`).
    pub spurious_rtos: u32,
    /// D-SACK blocks received, both endpoints (Linux's `TCPDSACKRecv`).
    pub dsacks_received: u32,
}

impl TcpRecord {
    /// Every unnecessary copy, of any kind.
    pub fn unnecessary(&self) -> u32 {
        self.unnecessary_requests
            + self.unnecessary_responses
            + self.unnecessary_csm
            + self.unnecessary_syn
            + self.unnecessary_synack
    }

    /// Adds `o` field by field.
    pub fn add(&mut self, o: &TcpRecord) {
        self.connections += o.connections;
        self.aborted += o.aborted;
        self.unnecessary_requests += o.unnecessary_requests;
        self.unnecessary_responses += o.unnecessary_responses;
        self.unnecessary_csm += o.unnecessary_csm;
        self.unnecessary_syn += o.unnecessary_syn;
        self.unnecessary_synack += o.unnecessary_synack;
        self.syn_retransmissions += o.syn_retransmissions;
        self.synack_retransmissions += o.synack_retransmissions;
        self.client_retransmitted_segments += o.client_retransmitted_segments;
        self.server_retransmitted_segments += o.server_retransmitted_segments;
        self.server_rto_expirations += o.server_rto_expirations;
        self.fast_retransmits += o.fast_retransmits;
        self.loss_probes += o.loss_probes;
        self.spurious_rtos += o.spurious_rtos;
        self.dsacks_received += o.dsacks_received;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_totals() {
        let a = TcpRecord {
            connections: 2,
            unnecessary_requests: 1,
            unnecessary_csm: 2,
            unnecessary_syn: 3,
            unnecessary_synack: 4,
            unnecessary_responses: 5,
            ..Default::default()
        };
        assert_eq!(a.unnecessary(), 15);
        let mut b = a.clone();
        b.add(&a);
        assert_eq!(b.connections, 4);
        assert_eq!(b.unnecessary(), 30);
    }
}
