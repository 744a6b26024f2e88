//! The block-wise options of one message, read from and written to it.

use super::value::{decode_size, size_to_vec, BlockError, BlockValue};
use crate::message::{option, Message};

/// The Block1, Block2, Size1 and Size2 options of a message (RFC 7959 §2.1,
/// §4); absent ones are `None`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockOptions {
    /// Block1: the request payload's block (descriptive, in a request) or
    /// the block acknowledged and the size wanted (control, in a response).
    pub block1: Option<BlockValue>,
    /// Block2: the block wanted (control, in a request) or the response
    /// payload's block (descriptive, in a response).
    pub block2: Option<BlockValue>,
    /// Size1: the request body's size, or the largest a 4.13 allows.
    pub size1: Option<u32>,
    /// Size2: the response body's size; 0 in a request asks for it.
    pub size2: Option<u32>,
}

impl BlockOptions {
    /// Reads the options from `(number, value)` pairs (for example
    /// [`crate::message::MessageView::options`]); other numbers are skipped.
    pub fn read<'a>(
        options: impl IntoIterator<Item = (u16, &'a [u8])>,
    ) -> Result<Self, BlockError> {
        let mut out = BlockOptions::default();
        for (number, value) in options {
            match number {
                option::BLOCK1 => set(&mut out.block1, number, BlockValue::decode(value)?)?,
                option::BLOCK2 => set(&mut out.block2, number, BlockValue::decode(value)?)?,
                option::SIZE1 => set(&mut out.size1, number, decode_size(value)?)?,
                option::SIZE2 => set(&mut out.size2, number, decode_size(value)?)?,
                _ => {}
            }
        }
        Ok(out)
    }

    /// Reads the options of an owned message.
    pub fn of(message: &Message) -> Result<Self, BlockError> {
        BlockOptions::read(message.options.iter().map(|(n, v)| (*n, v.as_slice())))
    }

    /// Appends the present options to `message` (encoding sorts them).
    pub fn write_to(&self, message: &mut Message) {
        if let Some(b) = self.block1 {
            message.options.push((option::BLOCK1, b.to_vec()));
        }
        if let Some(b) = self.block2 {
            message.options.push((option::BLOCK2, b.to_vec()));
        }
        if let Some(s) = self.size1 {
            message.options.push((option::SIZE1, size_to_vec(s)));
        }
        if let Some(s) = self.size2 {
            message.options.push((option::SIZE2, size_to_vec(s)));
        }
    }
}

/// Stores the first occurrence; a second is an error.
fn set<T>(slot: &mut Option<T>, number: u16, value: T) -> Result<(), BlockError> {
    if slot.is_some() {
        return Err(BlockError::Repeated(number));
    }
    *slot = Some(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Code, MessageType};

    #[test]
    fn options_survive_the_wire() {
        let mut m = Message::new(MessageType::Ack, Code::CONTENT, 7);
        let opts = BlockOptions {
            block1: Some(BlockValue::new(2, false, 3).unwrap()),
            block2: Some(BlockValue::new(0, true, 6).unwrap()),
            size1: None,
            size2: Some(1280),
        };
        opts.write_to(&mut m);
        m.options.push((option::ETAG, vec![1, 2]));
        let back = Message::decode(&m.encode().unwrap()).unwrap();
        assert_eq!(BlockOptions::of(&back), Ok(opts));
    }

    #[test]
    fn a_repeated_option_is_refused() {
        let pairs = [
            (option::BLOCK2, &[0x13u8][..]),
            (option::BLOCK2, &[0x23u8][..]),
        ];
        assert_eq!(
            BlockOptions::read(pairs),
            Err(BlockError::Repeated(option::BLOCK2))
        );
    }
}
