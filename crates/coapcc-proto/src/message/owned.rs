//! An owned message (`Vec`-backed), for code where allocation does not matter.

use super::{Code, DecodeError, EncodeError, MessageType, MessageView, MessageWriter};

/// An owned CoAP message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    /// Type.
    pub mtype: MessageType,
    /// Code.
    pub code: Code,
    /// Message ID.
    pub mid: u16,
    /// Token (0–8 bytes).
    pub token: Vec<u8>,
    /// Options as (number, value), in any order: encoding sorts them by number,
    /// keeping the order of repeated options.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Message {
    /// A message with no token, options or payload.
    pub fn new(mtype: MessageType, code: Code, mid: u16) -> Self {
        Message {
            mtype,
            code,
            mid,
            token: Vec::new(),
            options: Vec::new(),
            payload: Vec::new(),
        }
    }

    /// The encoded size (an upper bound is not needed: this is exact).
    pub fn encoded_len(&self) -> usize {
        let mut len = 4 + self.token.len();
        let mut last = 0u16;
        for (n, v) in self.sorted_options() {
            let n = *n;
            let ext = |x: usize| match x {
                0..=12 => 0,
                13..=268 => 1,
                _ => 2,
            };
            len += 1 + ext(usize::from(n - last)) + ext(v.len()) + v.len();
            last = n;
        }
        if !self.payload.is_empty() {
            len += 1 + self.payload.len();
        }
        len
    }

    fn sorted_options(&self) -> Vec<&(u16, Vec<u8>)> {
        let mut opts: Vec<&(u16, Vec<u8>)> = self.options.iter().collect();
        opts.sort_by_key(|(n, _)| *n);
        opts
    }

    /// Encodes into `buf`, returning the length.
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = MessageWriter::new(buf, self.mtype, self.code, self.mid, &self.token)?;
        for (n, v) in self.sorted_options() {
            w.option(*n, v)?;
        }
        w.payload(&self.payload)?;
        Ok(w.len())
    }

    /// Encodes into a new vector. Fails only for a token over 8 bytes, an
    /// option value over 65804 bytes, or an Empty message with content.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut buf = vec![0u8; self.encoded_len()];
        let len = self.encode_into(&mut buf)?;
        buf.truncate(len);
        Ok(buf)
    }

    /// Decodes and validates (see [`MessageView::decode`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        Ok(Message::from(&MessageView::decode(bytes)?))
    }

    /// The first value of option `number`.
    pub fn option(&self, number: u16) -> Option<&[u8]> {
        self.options
            .iter()
            .find(|(n, _)| *n == number)
            .map(|(_, v)| v.as_slice())
    }
}

impl From<&MessageView<'_>> for Message {
    fn from(v: &MessageView<'_>) -> Self {
        Message {
            mtype: v.mtype,
            code: v.code,
            mid: v.mid,
            token: v.token.to_vec(),
            options: v.options().map(|(n, v)| (n, v.to_vec())).collect(),
            payload: v.payload.to_vec(),
        }
    }
}
