//! The client side of a Block1 upload (RFC 7959 §2.5): which block to send
//! next, following the server's block size.

use core::fmt;

use super::value::{block_size, size_value, BlockValue, MAX_SZX};
use crate::message::Code;

/// Why an upload cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadError {
    /// 4.13 Request Entity Too Large (RFC 7959 §2.9.3), with the largest
    /// body the server accepts (its Size1) if it said.
    TooLarge(Option<u32>),
    /// 4.08 Request Entity Incomplete (RFC 7959 §2.9.2): the server lost
    /// track of the upload; [`Block1Upload::restart`] starts it over.
    Incomplete,
    /// Another non-success code.
    Rejected(Code),
    /// A response to a non-final block without Block1, or acknowledging
    /// another block than the one sent, or a 2.31 to the final block.
    BadResponse,
    /// The body needs more than 2^20 blocks at the current size.
    NumOverflow,
    /// A response after the final one.
    Finished,
}

impl fmt::Display for UploadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UploadError::TooLarge(Some(n)) => {
                write!(f, "4.13: the server accepts at most {n} bytes")
            }
            UploadError::TooLarge(None) => f.write_str("4.13: request entity too large"),
            UploadError::Incomplete => f.write_str("4.08: request entity incomplete"),
            UploadError::Rejected(c) => write!(f, "upload rejected with {c}"),
            UploadError::BadResponse => f.write_str("response does not acknowledge the block sent"),
            UploadError::NumOverflow => f.write_str("body needs more than 2^20 blocks"),
            UploadError::Finished => f.write_str("response after the final one"),
        }
    }
}

impl std::error::Error for UploadError {}

/// What a response did to the upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadStep {
    /// The block was acknowledged (2.31 Continue): send
    /// [`Block1Upload::next_block`].
    Continue,
    /// The final response, with its code (carrying the response payload, if
    /// any, that the caller keeps).
    Done(Code),
}

/// One Block1 upload of a request body. Strictly sequential: a lost block or
/// acknowledgement is recovered by sending [`Block1Upload::next_block`]
/// again. Memory: the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block1Upload {
    body: Vec<u8>,
    /// Bytes acknowledged.
    acked: usize,
    szx: u8,
    done: bool,
    send_size1: bool,
}

/// The block to send: its Block1 option, payload and (on block 0) Size1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingBlock<'a> {
    /// The Block1 option.
    pub block1: BlockValue,
    /// The payload.
    pub payload: &'a [u8],
    /// Size1 (the whole body's size) on block 0 when
    /// [`Block1Upload::with_size1`] asked for it.
    pub size1: Option<u32>,
}

impl Block1Upload {
    /// An upload of `body` in blocks of 2^(`szx`+4) bytes (`szx` clamped to
    /// 0–6). Fails if the body needs more than 2^20 blocks.
    pub fn new(body: Vec<u8>, szx: u8) -> Result<Self, UploadError> {
        let up = Block1Upload {
            body,
            acked: 0,
            szx: szx.min(MAX_SZX),
            done: false,
            send_size1: false,
        };
        up.check_blocks()?;
        Ok(up)
    }

    /// Sends Size1 (the body's size) with block 0 (RFC 7959 §4), so that a
    /// server can refuse a body too large for it at once. Off by default.
    pub fn with_size1(mut self, send: bool) -> Self {
        self.send_size1 = send;
        self
    }

    /// Whether the last block's NUM fits 20 bits.
    fn check_blocks(&self) -> Result<(), UploadError> {
        let last = self.body.len().saturating_sub(1);
        BlockValue::at_offset(last, self.szx)
            .map(|_| ())
            .map_err(|_| UploadError::NumOverflow)
    }

    /// The block to send now (again, after a loss); `None` once done.
    pub fn next_block(&self) -> Option<OutgoingBlock<'_>> {
        if self.done {
            return None;
        }
        let end = self.body.len().min(self.acked + block_size(self.szx));
        let block1 = BlockValue::at_offset(self.acked, self.szx)
            .ok()?
            .with_more(end < self.body.len());
        Some(OutgoingBlock {
            block1,
            payload: &self.body[self.acked..end],
            size1: (self.send_size1 && self.acked == 0).then(|| size_value(self.body.len())),
        })
    }

    /// Takes in the response to the block last sent: its code, Block1 and
    /// Size1.
    pub fn on_response(
        &mut self,
        code: Code,
        block1: Option<BlockValue>,
        size1: Option<u32>,
    ) -> Result<UploadStep, UploadError> {
        let Some(sent) = self.next_block() else {
            return Err(UploadError::Finished);
        };
        if code == Code::REQUEST_ENTITY_TOO_LARGE {
            return Err(UploadError::TooLarge(size1));
        }
        if code == Code::REQUEST_ENTITY_INCOMPLETE {
            return Err(UploadError::Incomplete);
        }
        if code.class() != 2 {
            return Err(UploadError::Rejected(code));
        }
        if !sent.block1.more() {
            // The final response; RFC 7959 §2.3 has it echo Block1, but a
            // server that answers the final block without it is accepted.
            if code == Code::CONTINUE || block1.is_some_and(|b| b.num() != sent.block1.num()) {
                return Err(UploadError::BadResponse);
            }
            self.done = true;
            return Ok(UploadStep::Done(code));
        }
        let Some(ack) = block1.filter(|b| b.num() == sent.block1.num()) else {
            return Err(UploadError::BadResponse);
        };
        self.acked += sent.payload.len();
        // The server's smaller size is followed (RFC 7959 §2.5); a larger one
        // is not taken up (§2.3: a request's size may only shrink).
        if ack.szx() < self.szx {
            self.szx = ack.szx();
            self.check_blocks()?;
        }
        Ok(UploadStep::Continue)
    }

    /// Starts over from block 0, at the size reached or at the smaller
    /// `szx` a 4.13's Block1 asked for (RFC 7959 §2.9.3).
    pub fn restart(&mut self, szx: Option<u8>) -> Result<(), UploadError> {
        self.acked = 0;
        self.done = false;
        if let Some(s) = szx {
            self.szx = self.szx.min(s);
        }
        self.check_blocks()
    }

    /// The current block size.
    pub fn block_size(&self) -> usize {
        block_size(self.szx)
    }

    /// Whether the final response arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }
}
