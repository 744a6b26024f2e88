//! The server side of a Block2 download (RFC 7959 §2.4): which slice of a
//! representation answers a request. Stateless: every request is answered
//! from the representation and the request's options alone (§2.4 lets a
//! server be stateless for GET).

use super::value::{block_size, size_value, BlockValue, MAX_NUM, MAX_SZX};
use crate::message::Code;

/// The server's Block2 settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block2Responder {
    /// The largest SZX the server sends (0–6); a request asking for more gets
    /// this size instead (RFC 7959 §2.4: the server may answer with a smaller
    /// block than asked). Default 6 (1024 bytes, RFC 7252 §4.6's payload).
    pub max_szx: u8,
    /// Send Size2 with block 0 even when the request did not ask for it
    /// (RFC 7959 §4 allows it). Default false; a request carrying Size2
    /// (value 0) always gets it.
    pub size2_in_first_block: bool,
}

impl Default for Block2Responder {
    fn default() -> Self {
        Block2Responder {
            max_szx: MAX_SZX,
            size2_in_first_block: false,
        }
    }
}

/// The response's block: payload and options (the ETag to send is the
/// representation's, unchanged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block2Reply<'a> {
    /// The payload to send.
    pub payload: &'a [u8],
    /// The Block2 option to send; `None` when the request had no Block2 and
    /// the whole representation fits one block (no block-wise transfer).
    pub block2: Option<BlockValue>,
    /// The Size2 option to send, if any.
    pub size2: Option<u32>,
}

/// Why a Block2 request cannot be answered with a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block2Refusal {
    /// The block starts at or past the end of the representation. RFC 7959
    /// names no code for it; it is answered with 4.02 Bad Option, the code
    /// for a critical option the server cannot act on (RFC 7252 §5.4.1,
    /// §5.9.2.3): `docs/decisions/coap-udp-choices.md`, "Block-wise
    /// transfers".
    PastEnd,
}

impl Block2Refusal {
    /// The response code to answer with.
    pub fn code(self) -> Code {
        match self {
            Block2Refusal::PastEnd => Code::BAD_OPTION,
        }
    }
}

impl Block2Responder {
    /// The block of `body` that answers a request carrying `request` (its
    /// Block2 option, if any; M is ignored, RFC 7959 §2.4) and, when
    /// `size2_asked`, a Size2 option.
    ///
    /// The block size is the smaller of the requested one and
    /// [`Block2Responder::max_szx`]; when it is smaller than requested, the
    /// block number is scaled so that the block starts at the requested byte
    /// offset (the client must follow the new size, §2.4). Block 0 of an
    /// empty representation is an empty block with M unset.
    pub fn respond<'a>(
        &self,
        body: &'a [u8],
        request: Option<BlockValue>,
        size2_asked: bool,
    ) -> Result<Block2Reply<'a>, Block2Refusal> {
        let max_szx = self.max_szx.min(MAX_SZX);
        let size2 = |first: bool| {
            (size2_asked || (first && self.size2_in_first_block)).then(|| size_value(body.len()))
        };
        let Some(req) = request else {
            if body.len() <= block_size(max_szx) {
                return Ok(Block2Reply {
                    payload: body,
                    block2: None,
                    size2: size2(false),
                });
            }
            return Ok(self.block(body, 0, max_szx, size2(true)));
        };
        let szx = req.szx().min(max_szx);
        let offset = req.offset();
        if offset > 0 && offset >= body.len() {
            return Err(Block2Refusal::PastEnd);
        }
        Ok(self.block(body, offset, szx, size2(offset == 0)))
    }

    /// The block at `offset` (a multiple of the block size) of size `szx`,
    /// or of the smallest larger size whose NUM fits 20 bits (`offset` came
    /// from a NUM that fitted, so one does).
    fn block<'a>(
        &self,
        body: &'a [u8],
        offset: usize,
        szx: u8,
        size2: Option<u32>,
    ) -> Block2Reply<'a> {
        let mut szx = szx;
        while szx < MAX_SZX && offset / block_size(szx) > MAX_NUM as usize {
            szx += 1;
        }
        let end = body.len().min(offset + block_size(szx));
        let block2 = BlockValue::at_offset(offset, szx)
            .map(|b| b.with_more(end < body.len()))
            .ok();
        Block2Reply {
            payload: &body[offset..end],
            block2,
            size2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(num: u32, more: bool, szx: u8) -> BlockValue {
        BlockValue::new(num, more, szx).unwrap()
    }

    #[test]
    fn a_small_body_needs_no_block() {
        let r = Block2Responder::default()
            .respond(b"hi", None, true)
            .unwrap();
        assert_eq!(
            r,
            Block2Reply {
                payload: b"hi",
                block2: None,
                size2: Some(2)
            }
        );
    }

    #[test]
    fn the_last_block_clears_m() {
        let body = vec![7u8; 300];
        let s = Block2Responder::default();
        let r = s.respond(&body, Some(b(2, false, 3)), false).unwrap();
        assert_eq!((r.payload.len(), r.block2), (44, Some(b(2, false, 3))));
        // A body of exactly two blocks: block 1 is the last.
        let r = s
            .respond(&body[..256], Some(b(1, false, 3)), false)
            .unwrap();
        assert_eq!(r.block2, Some(b(1, false, 3)));
    }

    #[test]
    fn a_block_past_the_end_is_refused_with_4_02() {
        let body = vec![0u8; 256];
        let s = Block2Responder::default();
        let e = s.respond(&body, Some(b(2, false, 3)), false).unwrap_err();
        assert_eq!((e, e.code()), (Block2Refusal::PastEnd, Code::BAD_OPTION));
        let e = s.respond(&[], Some(b(1, false, 0)), false).unwrap_err();
        assert_eq!(e, Block2Refusal::PastEnd);
        // Block 0 of an empty body is an empty last block.
        let r = s.respond(&[], Some(b(0, false, 2)), false).unwrap();
        assert_eq!((r.payload, r.block2), (&[][..], Some(b(0, false, 2))));
    }

    #[test]
    fn a_smaller_server_size_keeps_the_requested_offset() {
        let body: Vec<u8> = (0..=255).collect();
        let s = Block2Responder {
            max_szx: 2,
            ..Default::default()
        };
        // 2:1/0/128 asks for bytes 128..256; the server sends 128..192 as 2:2/1/64.
        let r = s.respond(&body, Some(b(1, false, 3)), false).unwrap();
        assert_eq!(r.block2, Some(b(2, true, 2)));
        assert_eq!(r.payload, &body[128..192]);
    }

    #[test]
    fn size2_on_request_or_on_the_first_block() {
        let body = vec![0u8; 2000];
        let s = Block2Responder {
            size2_in_first_block: true,
            ..Default::default()
        };
        assert_eq!(s.respond(&body, None, false).unwrap().size2, Some(2000));
        assert_eq!(
            s.respond(&body, Some(b(1, false, 6)), false).unwrap().size2,
            None
        );
        assert_eq!(
            s.respond(&body, Some(b(1, false, 6)), true).unwrap().size2,
            Some(2000)
        );
    }
}
