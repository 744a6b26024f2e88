//! RFC 8323 §5 signalling messages (class 7) and their options: CSM 7.01
//! (Max-Message-Size 2, Block-Wise-Transfer 4), Ping 7.02 and Pong 7.03
//! (Custody 2), Release 7.04 (Alternative-Address 2, Hold-Off 4), Abort
//! 7.05 (Bad-CSM-Option 2). Signalling option numbers are scoped to their
//! code (§5.2).

use super::frame::{FrameView, FrameWriter};
use super::options::read_uint;
use super::FrameError;
use crate::message::Code;

/// 7.01 Capabilities and Settings Message.
pub const CSM: Code = Code(0xE1);
/// 7.02 Ping.
pub const PING: Code = Code(0xE2);
/// 7.03 Pong.
pub const PONG: Code = Code(0xE3);
/// 7.04 Release.
pub const RELEASE: Code = Code(0xE4);
/// 7.05 Abort.
pub const ABORT: Code = Code(0xE5);

/// CSM option Max-Message-Size (uint).
pub const OPT_MAX_MESSAGE_SIZE: u16 = 2;
/// CSM option Block-Wise-Transfer (empty).
pub const OPT_BLOCK_WISE_TRANSFER: u16 = 4;
/// Ping / Pong option Custody (empty).
pub const OPT_CUSTODY: u16 = 2;
/// Abort option Bad-CSM-Option (uint).
pub const OPT_BAD_CSM_OPTION: u16 = 2;

/// Max-Message-Size assumed until the peer's CSM says otherwise (§5.3.1).
pub const BASE_MAX_MESSAGE_SIZE: u32 = 1152;

/// The smallest Max-Message-Size accepted in a CSM. RFC 8323 sets no floor,
/// but a peer must be able to receive at least an answer: a response header
/// with the longest token (10 bytes) and a short option. Below this, no
/// response, Pong or diagnostic could be sent within the limit, so the CSM
/// is refused as invalid (§5.3: Abort, naming the option in Bad-CSM-Option)
/// rather than answered beyond the limit. Our own `--max-message-size` has
/// the same floor.
pub const MIN_MAX_MESSAGE_SIZE: u32 = 16;

/// Whether a code is a signalling code (class 7).
pub fn is_signal(code: Code) -> bool {
    code.0 >> 5 == 7
}

/// The peer's capabilities as its CSM stated them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Csm {
    /// Largest message the peer accepts.
    pub max_message_size: u32,
    /// Whether the peer supports BERT / block-wise over this connection.
    pub block_wise: bool,
}

impl Default for Csm {
    fn default() -> Self {
        Csm {
            max_message_size: BASE_MAX_MESSAGE_SIZE,
            block_wise: false,
        }
    }
}

/// Why a CSM was refused: the number of an unknown critical option (to be
/// named in the Abort's Bad-CSM-Option).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadCsmOption(pub u16);

impl Csm {
    /// Reads a CSM frame, starting from `previous` (CSMs update the settings
    /// they name and keep the others, §5.3). Unknown elective options are
    /// ignored; unknown critical ones refused, and so is a Max-Message-Size
    /// below [`MIN_MAX_MESSAGE_SIZE`].
    pub fn update(previous: Csm, frame: &FrameView<'_>) -> Result<Csm, BadCsmOption> {
        let mut csm = previous;
        for (n, v) in frame.options() {
            match n {
                OPT_MAX_MESSAGE_SIZE => {
                    csm.max_message_size = read_uint(v)
                        .filter(|m| *m >= MIN_MAX_MESSAGE_SIZE)
                        .ok_or(BadCsmOption(n))?;
                }
                OPT_BLOCK_WISE_TRANSFER => csm.block_wise = true,
                n if n & 1 == 1 => return Err(BadCsmOption(n)),
                _ => {}
            }
        }
        Ok(csm)
    }

    /// Writes this CSM (empty token) into `buf`; returns its length. The
    /// base Max-Message-Size is left implicit.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, FrameError> {
        let mut w = FrameWriter::new(buf, CSM, &[])?;
        if self.max_message_size != BASE_MAX_MESSAGE_SIZE {
            w.uint_option(OPT_MAX_MESSAGE_SIZE, self.max_message_size)?;
        }
        if self.block_wise {
            w.option(OPT_BLOCK_WISE_TRANSFER, &[])?;
        }
        Ok(w.finish())
    }
}

/// Writes an Abort with an optional Bad-CSM-Option and a diagnostic payload.
pub fn encode_abort(
    buf: &mut [u8],
    bad_option: Option<u16>,
    diagnostic: &str,
) -> Result<usize, FrameError> {
    let mut w = FrameWriter::new(buf, ABORT, &[])?;
    if let Some(n) = bad_option {
        w.uint_option(OPT_BAD_CSM_OPTION, u32::from(n))?;
    }
    w.payload(diagnostic.as_bytes())?;
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::frame::encode_frame;

    #[test]
    fn csm_encoding() {
        let mut buf = [0u8; 32];
        let n = Csm::default().encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[0x00, 0xE1]);
        let c = Csm {
            max_message_size: 2048,
            block_wise: true,
        };
        let n = c.encode(&mut buf).unwrap();
        // Len 4: option 2 (delta 2, len 2: 0x08 0x00), option 4 (delta 2, len 0).
        assert_eq!(&buf[..n], &[0x40, 0xE1, 0x22, 0x08, 0x00, 0x20]);
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(Csm::update(Csm::default(), &v), Ok(c));
    }

    #[test]
    fn csm_critical_unknown_refused_elective_ignored() {
        let mut buf = [0u8; 32];
        let n = encode_frame(&mut buf, CSM, &[], &[(6, &[1])], &[]).unwrap();
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(Csm::update(Csm::default(), &v), Ok(Csm::default()));
        let n = encode_frame(&mut buf, CSM, &[], &[(9, &[1])], &[]).unwrap();
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(Csm::update(Csm::default(), &v), Err(BadCsmOption(9)));
    }

    #[test]
    fn csm_max_message_size_below_the_floor_refused() {
        let mut buf = [0u8; 32];
        for (mms, ok) in [
            (0u32, false),
            (10, false),
            (15, false),
            (16, true),
            (17, true),
        ] {
            let n = encode_frame(&mut buf, CSM, &[], &[(2, &mms.to_be_bytes())], &[]).unwrap();
            let v = FrameView::decode(&buf[..n]).unwrap();
            let want = if ok {
                Ok(Csm {
                    max_message_size: mms,
                    block_wise: false,
                })
            } else {
                Err(BadCsmOption(OPT_MAX_MESSAGE_SIZE))
            };
            assert_eq!(Csm::update(Csm::default(), &v), want, "{mms}");
        }
    }

    #[test]
    fn abort_encoding() {
        let mut buf = [0u8; 64];
        let n = encode_abort(&mut buf, Some(9), "x").unwrap();
        assert_eq!(&buf[..n], &[0x40, 0xE5, 0x21, 0x09, 0xFF, b'x']);
        assert!(is_signal(ABORT) && !is_signal(Code(0x45)));
    }
}
