//! The Block1 uploads in progress at a server: one
//! [`Block1Receiver`] per (peer, resource path), as RFC 7959 §2.5 lets a
//! server match blocks by endpoint and request URI, at most [`MAX_UPLOADS`]
//! of them (a new upload past that drops the oldest, whose next block then
//! gets 4.08 Request Entity Incomplete).

use std::net::SocketAddr;

use coapcc_proto::block::{Block1Config, Block1Outcome, Block1Receiver, BlockValue};

/// Most uploads in progress at once.
pub const MAX_UPLOADS: usize = 16;

/// The receivers, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Uploads {
    entries: Vec<(SocketAddr, String, Block1Receiver)>,
}

impl Uploads {
    /// Takes in one request of an upload from `peer` to `path` (see
    /// [`Block1Receiver::on_request`]); `config` is the resource's.
    pub fn on_request(
        &mut self,
        peer: SocketAddr,
        path: &str,
        config: Block1Config,
        block1: Option<BlockValue>,
        size1: Option<u32>,
        payload: &[u8],
    ) -> Block1Outcome {
        let at = match self
            .entries
            .iter()
            .position(|(p, q, _)| *p == peer && q == path)
        {
            Some(i) => i,
            None => {
                if self.entries.len() >= MAX_UPLOADS {
                    self.entries.remove(0);
                }
                self.entries
                    .push((peer, path.to_string(), Block1Receiver::new(config)));
                self.entries.len() - 1
            }
        };
        let outcome = self.entries[at].2.on_request(block1, size1, payload);
        if !self.entries[at].2.is_active() {
            // Finished or refused: nothing to remember.
            self.entries.remove(at);
        }
        outcome
    }

    /// Uploads in progress.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is in progress.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_proto::message::Code;

    fn b(num: u32, more: bool) -> Option<BlockValue> {
        Some(BlockValue::new(num, more, 0).unwrap())
    }

    #[test]
    fn peers_upload_side_by_side_and_the_table_is_bounded() {
        let mut u = Uploads::default();
        let cfg = Block1Config::default();
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let c: SocketAddr = "127.0.0.1:2".parse().unwrap();
        let block = [7u8; 16];
        assert!(matches!(
            u.on_request(a, "up", cfg, b(0, true), None, &block),
            Block1Outcome::Continue(_)
        ));
        assert!(matches!(
            u.on_request(c, "up", cfg, b(0, true), None, &block),
            Block1Outcome::Continue(_)
        ));
        let Block1Outcome::Complete { body, .. } =
            u.on_request(a, "up", cfg, b(1, false), None, &[1])
        else {
            panic!()
        };
        assert_eq!(body.len(), 17);
        assert_eq!(u.len(), 1);
        for port in 10..10 + MAX_UPLOADS as u16 {
            let p = SocketAddr::from(([127, 0, 0, 1], port));
            u.on_request(p, "up", cfg, b(0, true), None, &block);
        }
        assert_eq!(u.len(), MAX_UPLOADS);
        // The oldest (peer c) was dropped: its next block is out of sequence.
        assert!(matches!(
            u.on_request(c, "up", cfg, b(1, false), None, &[1]),
            Block1Outcome::Reject {
                code: Code::REQUEST_ENTITY_INCOMPLETE,
                ..
            }
        ));
    }
}
