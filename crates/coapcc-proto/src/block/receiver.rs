//! The server side of a Block1 upload (RFC 7959 §2.5): reassembling a
//! request body, answering 2.31 Continue, 4.08 and 4.13.

use super::value::{size_value, BlockValue, MAX_SZX};
use crate::message::Code;

/// The server's Block1 settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block1Config {
    /// The largest request body accepted; a larger one gets 4.13 with Size1
    /// set to this (RFC 7959 §2.9.3, §4). Default 64 KiB.
    pub max_body: usize,
    /// The largest SZX the server wants (0–6); a larger block is still taken,
    /// and the 2.31 asks for this size from then on (RFC 7959 §2.5). Default 6.
    pub max_szx: u8,
}

impl Default for Block1Config {
    fn default() -> Self {
        Block1Config {
            max_body: 64 * 1024,
            max_szx: MAX_SZX,
        }
    }
}

/// What to answer a request carrying a body (or one block of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block1Outcome {
    /// A non-final block was stored: answer 2.31 Continue with this Block1
    /// (the request's NUM, M set, the server's size).
    Continue(BlockValue),
    /// The body is complete: process it. The final response carries this
    /// Block1 (the request's NUM, M unset, the server's size), if any.
    Complete {
        /// The Block1 the final response echoes (`None` for a request that
        /// was not block-wise).
        block1: Option<BlockValue>,
        /// The request body.
        body: Vec<u8>,
    },
    /// Refuse with `code`; with 4.13, Size1 is the largest body accepted.
    Reject {
        /// 4.00 (a block whose payload does not match its size), 4.08 (out of
        /// sequence or missing blocks) or 4.13 (too large).
        code: Code,
        /// Size1 to send (with 4.13).
        size1: Option<u32>,
    },
}

/// The state of one Block1 upload: the bytes received in sequence, at most
/// [`Block1Config::max_body`] of them, and nothing else. One upload at a
/// time per receiver; a server keeps one receiver per (peer, resource), as
/// RFC 7959 §2.5 lets it match blocks by endpoint and request URI.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block1Receiver {
    config: Block1Config,
    body: Vec<u8>,
    /// Whether an upload is in progress (block 0 seen, last block not yet).
    active: bool,
    /// The payload length of the last block stored, to recognise a repeat.
    last_len: usize,
}

impl Block1Receiver {
    /// A receiver with no upload in progress.
    pub fn new(config: Block1Config) -> Self {
        Block1Receiver {
            config,
            ..Default::default()
        }
    }

    /// Whether an upload is in progress.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Takes in a request's Block1 and Size1 options and payload.
    ///
    /// - Without Block1 the payload is the whole body (4.13 if too large).
    /// - Block 0 starts a new upload, dropping one in progress.
    /// - A block continuing the bytes received is appended; a repeat of the
    ///   last block stored is acknowledged again without storing it twice.
    /// - Any other block gets 4.08, and the upload is dropped (§2.9.2).
    /// - Size1 or received bytes over [`Block1Config::max_body`] get 4.13
    ///   with Size1, and the upload is dropped (§2.9.3).
    pub fn on_request(
        &mut self,
        block1: Option<BlockValue>,
        size1: Option<u32>,
        payload: &[u8],
    ) -> Block1Outcome {
        let too_large = Block1Outcome::Reject {
            code: Code::REQUEST_ENTITY_TOO_LARGE,
            size1: Some(size_value(self.config.max_body)),
        };
        let Some(block) = block1 else {
            if payload.len() > self.config.max_body {
                return too_large;
            }
            return Block1Outcome::Complete {
                block1: None,
                body: payload.to_vec(),
            };
        };
        let len_ok = if block.more() {
            payload.len() == block.size()
        } else {
            payload.len() <= block.size()
        };
        if !len_ok {
            self.drop_upload();
            return Block1Outcome::Reject {
                code: Code::BAD_REQUEST,
                size1: None,
            };
        }
        let offset = block.offset();
        if offset == 0 {
            if size1.is_some_and(|s| s as usize > self.config.max_body) {
                self.drop_upload();
                return too_large;
            }
            self.drop_upload();
            self.active = true;
        } else if self.active
            && offset + self.last_len == self.body.len()
            && payload.len() == self.last_len
            && block.more()
            && self.body[offset..] == *payload
        {
            return Block1Outcome::Continue(self.answer(block));
        } else if !self.active || offset != self.body.len() {
            self.drop_upload();
            return Block1Outcome::Reject {
                code: Code::REQUEST_ENTITY_INCOMPLETE,
                size1: None,
            };
        }
        if self.body.len() + payload.len() > self.config.max_body {
            self.drop_upload();
            return too_large;
        }
        self.body.extend_from_slice(payload);
        self.last_len = payload.len();
        if block.more() {
            return Block1Outcome::Continue(self.answer(block));
        }
        self.active = false;
        Block1Outcome::Complete {
            block1: Some(self.answer(block)),
            body: std::mem::take(&mut self.body),
        }
    }

    /// The Block1 of the answer: the request's NUM and M at the server's
    /// size (never larger than the request's).
    fn answer(&self, block: BlockValue) -> BlockValue {
        let szx = block.szx().min(self.config.max_szx.min(MAX_SZX));
        BlockValue::new(block.num(), block.more(), szx).expect("SZX at most MAX_SZX")
    }

    /// Forgets the upload in progress.
    fn drop_upload(&mut self) {
        self.body = Vec::new();
        self.active = false;
        self.last_len = 0;
    }
}
