//! The client side of a Block2 download (RFC 7959 §2.4): which block to ask
//! for next, and the reassembled representation.

use core::fmt;

use super::value::{block_size, BlockValue, MAX_SZX};

/// Why a download cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DownloadError {
    /// The representation is larger than [`Block2Download::new`]'s limit (by
    /// Size2 or by the bytes received).
    TooLarge,
    /// The ETag differs from the first block's (or appeared or vanished):
    /// the representation changed mid-transfer (RFC 7959 §2.4). The download
    /// is void; [`Block2Download::restart`] starts it over from block 0.
    EtagChanged,
    /// A block that neither continues the body nor repeats received bytes.
    OutOfSequence,
    /// A later response without Block2, or a block larger than asked for
    /// (the server must use the requested size or a smaller one, §2.4).
    BadBlock,
    /// A block with M set whose payload is not exactly the block size, or a
    /// last block longer than the block size (§2.2).
    BadLength,
    /// The next block number would not fit 20 bits.
    NumOverflow,
    /// A response after the last block.
    Finished,
}

impl fmt::Display for DownloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DownloadError::TooLarge => "representation larger than the download limit",
            DownloadError::EtagChanged => "ETag changed during the block-wise transfer",
            DownloadError::OutOfSequence => "block out of sequence",
            DownloadError::BadBlock => "missing Block2 or a block larger than requested",
            DownloadError::BadLength => "block payload length does not match its size",
            DownloadError::NumOverflow => "next block number above 2^20 - 1",
            DownloadError::Finished => "response after the last block",
        })
    }
}

impl std::error::Error for DownloadError {}

/// What a response did to the download.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The block was appended; ask for [`Block2Download::next_request`].
    Continue,
    /// The block repeated bytes already received (a duplicate response) and
    /// was ignored; the next request is unchanged.
    Duplicate,
    /// The last block arrived: [`Block2Download::body`] is complete.
    Complete,
}

/// One Block2 download, from the first request to the last block. Strictly
/// sequential: one block is asked for at a time, and a lost request or
/// response is recovered by asking for [`Block2Download::next_request`]
/// again. Memory: the body, at most `max_len` bytes, and the first block's
/// ETag (at most 8 bytes, RFC 7252 §5.10.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block2Download {
    body: Vec<u8>,
    etag: Option<Vec<u8>>,
    /// The SZX of the next request: the client's wish, lowered to the
    /// server's once it answered.
    szx: Option<u8>,
    max_len: usize,
    started: bool,
    done: bool,
}

impl Block2Download {
    /// A download of at most `max_len` bytes. With `szx` (clamped to 0–6),
    /// the first request already carries Block2 `0/0/size` (early
    /// negotiation, RFC 7959 §2.4); without, it carries no Block2 and the
    /// server picks the size.
    pub fn new(max_len: usize, szx: Option<u8>) -> Self {
        Block2Download {
            body: Vec::new(),
            etag: None,
            szx: szx.map(|s| s.min(MAX_SZX)),
            max_len,
            started: false,
            done: false,
        }
    }

    /// Asks for blocks of at most 2^(`szx`+4) bytes from the next request on
    /// (late negotiation by the client, RFC 7959 §2.4 and its Figure 4); a
    /// larger size than the server's is not asked for.
    pub fn prefer_szx(&mut self, szx: u8) {
        let szx = szx.min(MAX_SZX);
        self.szx = Some(self.szx.map_or(szx, |s| s.min(szx)));
    }

    /// The Block2 option the next request must carry: `None` for a first
    /// request without early negotiation (and once complete), else the block
    /// after the bytes received, M unset (§2.4).
    pub fn next_request(&self) -> Result<Option<BlockValue>, DownloadError> {
        if self.done {
            return Ok(None);
        }
        match self.szx {
            None => Ok(None),
            Some(szx) => BlockValue::at_offset(self.body.len(), szx)
                .map(Some)
                .map_err(|_| DownloadError::NumOverflow),
        }
    }

    /// Takes in a 2.xx response: its Block2 option, ETag, Size2 and payload.
    /// An error leaves the download unusable except through
    /// [`Block2Download::restart`].
    pub fn on_response(
        &mut self,
        block2: Option<BlockValue>,
        etag: Option<&[u8]>,
        size2: Option<u32>,
        payload: &[u8],
    ) -> Result<Progress, DownloadError> {
        if size2.is_some_and(|s| s as usize > self.max_len) {
            return Err(DownloadError::TooLarge);
        }
        let Some(block) = block2 else {
            // The whole representation in one response: only as the answer
            // to the first request.
            if self.started {
                // The whole representation again, as it came (a duplicated
                // datagram of a one-response transfer), is a repeat.
                if self.done && payload == self.body.as_slice() && etag == self.etag.as_deref() {
                    return Ok(Progress::Duplicate);
                }
                return Err(DownloadError::BadBlock);
            }
            return self.append(etag, payload, false);
        };
        if self.started && etag != self.etag.as_deref() {
            return Err(DownloadError::EtagChanged);
        }
        if self.szx.is_some_and(|s| block.szx() > s) {
            return Err(DownloadError::BadBlock);
        }
        let len_ok = if block.more() {
            payload.len() == block.size()
        } else {
            payload.len() <= block.size()
        };
        if !len_ok {
            return Err(DownloadError::BadLength);
        }
        let offset = block.offset();
        if offset != self.body.len() || self.done {
            let repeat = offset + payload.len() <= self.body.len()
                && self.body[offset..offset + payload.len()] == *payload;
            return match (repeat, self.done) {
                (true, _) => Ok(Progress::Duplicate),
                (false, true) => Err(DownloadError::Finished),
                (false, false) => Err(DownloadError::OutOfSequence),
            };
        }
        self.szx = Some(self.szx.map_or(block.szx(), |s| s.min(block.szx())));
        self.append(etag, payload, block.more())
    }

    /// Appends a block that continues the body.
    fn append(
        &mut self,
        etag: Option<&[u8]>,
        payload: &[u8],
        more: bool,
    ) -> Result<Progress, DownloadError> {
        if self.body.len() + payload.len() > self.max_len {
            return Err(DownloadError::TooLarge);
        }
        if !self.started {
            self.etag = etag.map(<[u8]>::to_vec);
            self.started = true;
        }
        self.body.extend_from_slice(payload);
        if more {
            // The next NUM must fit 20 bits at the current size.
            self.next_request()?;
            Ok(Progress::Continue)
        } else {
            self.done = true;
            Ok(Progress::Complete)
        }
    }

    /// Forgets what was received and starts over from block 0, keeping the
    /// block size reached (for a changed ETag, RFC 7959 §2.4).
    pub fn restart(&mut self) {
        self.body.clear();
        self.etag = None;
        self.started = false;
        self.done = false;
    }

    /// Whether the last block arrived.
    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// The bytes received so far (the whole representation once complete).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The body, consuming the download.
    pub fn into_body(self) -> Vec<u8> {
        self.body
    }

    /// The ETag of the first block, if it had one.
    pub fn etag(&self) -> Option<&[u8]> {
        self.etag.as_deref()
    }

    /// The block size of the next request, once known.
    pub fn block_size(&self) -> Option<usize> {
        self.szx.map(block_size)
    }
}
