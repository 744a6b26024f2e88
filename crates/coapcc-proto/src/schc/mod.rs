//! SCHC header compression of IPv6 + UDP + CoAP (RFC 8724, RFC 8824) as
//! LoRaWAN carries it (RFC 9011: the 8-bit rule ID rides in FPort), with the
//! one rule set coapcc uses ([`coapcc_rules`]). See docs/schc.md.
//!
//! ```
//! use coapcc_proto::message::{option, Code, Message, MessageType};
//! use coapcc_proto::schc::{self, Context, Direction, Profile};
//! let (profile, ctx) = (Profile::default(), Context::default());
//! let rules = schc::coapcc_rules(&profile);
//! let mut get = Message::new(MessageType::Con, Code::GET, 7);
//! get.token = vec![0x42];
//! get.options.push((option::URI_PATH, b"sense".to_vec()));
//! let packet = schc::build(&get, &profile, &ctx, Direction::Up).unwrap();
//! let c = schc::compress(&rules, &packet, Direction::Up, &ctx);
//! assert_eq!((packet.len(), c.len()), (59, 3));
//! let back = schc::decompress(&rules, c.rule_id, &c.to_bytes(), Direction::Up, &ctx);
//! assert_eq!(back.unwrap(), packet);
//! ```

mod bits;
mod coapcc_rules;
mod compress;
mod decompress;
mod fields;
mod fits;
mod packet;
mod profile;
mod rule;
#[cfg(test)]
mod tests;

pub use bits::{BitReader, BitWriter};
pub use coapcc_rules::{
    coapcc_rules, CONTENT_FORMATS, DOWN_CODES, DOWN_FIRST, NO_COMPRESSION, SENSE, UP_CODES,
    UP_FIRST,
};
pub use compress::{compress, Compressed};
pub use decompress::{decompress, DecompressError};
pub use fits::{fits, TooLarge};
pub use packet::{build, udp_checksum, IPV6_HEADER, UDP_HEADER};
pub use profile::{Context, Profile, HOP_LIMIT_DOWN};
pub use rule::{
    Cda, Di, Direction, Fid, FieldDescriptor, FieldLength, MatchingOperator, Rule, RuleSet,
    TargetValue, Value,
};
