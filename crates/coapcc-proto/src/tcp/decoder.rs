//! Incremental frame decoding over a byte stream (RFC 8323 §3.2): bytes
//! arrive in arbitrary pieces, a frame may be split across reads and one read
//! may hold several frames.
//!
//! The decoder owns one reusable buffer; frames are returned as views into
//! it, so a long-lived connection allocates only when a larger frame than any
//! before arrives.

use super::frame::{peek_frame_len, FrameView};
use super::FrameError;

/// Accumulates stream bytes and cuts them into frames.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Bytes at the front of `buf` belonging to the frame last returned.
    consumed: usize,
    max_frame: usize,
    failed: bool,
}

impl FrameDecoder {
    /// A decoder that rejects frames longer than `max_frame` bytes (our
    /// Max-Message-Size).
    pub fn new(max_frame: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            consumed: 0,
            max_frame,
            failed: false,
        }
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Bytes buffered and not yet returned as a frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.consumed
    }

    /// The next complete frame, `Ok(None)` if more bytes are needed. After an
    /// error the stream cannot be resynchronised: every later call returns
    /// the error again.
    pub fn next_frame(&mut self) -> Result<Option<FrameView<'_>>, FrameError> {
        if self.failed {
            return Err(FrameError::StreamFailed);
        }
        if self.consumed > 0 {
            self.buf.drain(..self.consumed);
            self.consumed = 0;
        }
        let total = match peek_frame_len(&self.buf) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.fail(e)),
        };
        if total > self.max_frame {
            return Err(self.fail(FrameError::TooLarge));
        }
        if self.buf.len() < total {
            return Ok(None);
        }
        if let Err(e) = FrameView::decode(&self.buf[..total]) {
            return Err(self.fail(e));
        }
        self.consumed = total;
        FrameView::decode(&self.buf[..total]).map(Some)
    }

    fn fail(&mut self, e: FrameError) -> FrameError {
        self.failed = true;
        self.buf.clear();
        self.consumed = 0;
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Code;
    use crate::tcp::frame::encode_frame;

    fn stream() -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 400];
        for (code, token, payload) in [
            (0xE1u8, &[][..], &[][..]),
            (0x01, &[1][..], &b""[..]),
            (0x45, &[1][..], &[5u8; 60][..]),
            (0x43, &[0x7f][..], &b""[..]),
            (0x45, &[][..], &[9u8; 300][..]),
        ] {
            let n = encode_frame(&mut buf, Code(code), token, &[], payload).unwrap();
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    fn codes_with_chunks(bytes: &[u8], chunk: usize) -> Vec<(u8, usize)> {
        let mut d = FrameDecoder::new(1152);
        let mut got = Vec::new();
        for piece in bytes.chunks(chunk) {
            d.push(piece);
            while let Some(f) = d.next_frame().unwrap() {
                got.push((f.code.0, f.payload.len()));
            }
        }
        assert_eq!(d.buffered(), 0);
        got
    }

    #[test]
    fn frames_split_and_merged() {
        let s = stream();
        let want = vec![(0xE1, 0), (0x01, 0), (0x45, 60), (0x43, 0), (0x45, 300)];
        for chunk in [1, 2, 3, 7, 64, 1000] {
            assert_eq!(codes_with_chunks(&s, chunk), want, "chunk {chunk}");
        }
    }

    #[test]
    fn too_large_and_sticky_errors() {
        let mut d = FrameDecoder::new(100);
        let mut buf = [0u8; 400];
        let n = encode_frame(&mut buf, Code(0x45), &[], &[], &[0; 200]).unwrap();
        d.push(&buf[..3]); // the header alone already tells the size
        assert_eq!(d.next_frame().unwrap_err(), FrameError::TooLarge);
        d.push(&buf[3..n]);
        assert_eq!(d.next_frame().unwrap_err(), FrameError::StreamFailed);
    }
}
