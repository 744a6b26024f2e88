//! Block-wise transfers (RFC 7959), sans-IO: the Block1/Block2 and
//! Size1/Size2 option values, and the four state machines of a block-wise
//! exchange. Nothing here sends a message or keeps time: each machine is told
//! the options and payload of a message and says what the next one carries.
//!
//! - [`BlockValue`] and [`BlockOptions`]: the option codec (§2.2, §4);
//! - [`Block2Responder`]: the server's block of a representation (§2.4);
//! - [`Block2Download`]: the client's download and reassembly (§2.4);
//! - [`Block1Upload`]: the client's upload of a request body (§2.5);
//! - [`Block1Receiver`]: the server's reassembly of it, with 2.31, 4.08 and
//!   4.13 (§2.5, §2.9);
//! - [`pattern`]: a deterministic representation to transfer and check;
//! - [`BlockResource`]: a server [`crate::server::Handler`] combining them —
//!   one representation served in Block2 blocks, and bodies taken in Block1
//!   blocks, one upload per peer.
//!
//! Transfers are sequential (one block in flight); losses are recovered by
//! repeating the request the machine names. What the RFC leaves open is
//! recorded in `docs/decisions/coap-udp-choices.md`, "Block-wise transfers
//! (RFC 7959)".

mod download;
mod options;
mod pattern;
mod receiver;
mod resource;
mod responder;
mod upload;
mod value;

#[cfg(test)]
mod tests;

pub use download::{Block2Download, DownloadError, Progress};
pub use options::BlockOptions;
pub use pattern::{is_pattern, pattern, pattern_byte};
pub use receiver::{Block1Config, Block1Outcome, Block1Receiver};
pub use resource::{BlockResource, CompletedUpload};
pub use responder::{Block2Refusal, Block2Reply, Block2Responder};
pub use upload::{Block1Upload, OutgoingBlock, UploadError, UploadStep};
pub use value::{
    block_size, decode_size, size_to_vec, size_value, BlockError, BlockValue, MAX_NUM, MAX_SZX,
};
