//! Frame sizes from SCHC: each CoAP message a device or the server sends
//! is compressed with coapcc's SCHC rule set (`coapcc_proto::schc`,
//! `docs/schc.md`: IPv6 and UDP headers elided, CoAP header fields
//! compressed, the rule ID in FPort), and its compressed length is what the
//! LoRaWAN frame carries.
//!
//! The message ID: only its low byte travels (RFC 8824), so a device's
//! SCHC context keeps the high byte of its message IDs; a message is
//! compressed with its high byte set to the context's. Sizes depend on a
//! message's shape (type, code, token, options, payload), not on its
//! message ID's low byte or token value: they are computed once per shape
//! and kept, so the event loop allocates only for a shape it has not seen.

use std::collections::HashMap;

use coapcc_proto::message::Message;
use coapcc_proto::schc::{self, Context, Direction, Profile, RuleSet};

/// Compressed lengths by message shape.
pub struct Sizes {
    rules: RuleSet,
    profile: Profile,
    context: Context,
    /// Direction (1 = up) and the message with its ID and token zeroed.
    known: HashMap<Vec<u8>, usize>,
    key: Vec<u8>,
}

impl Default for Sizes {
    fn default() -> Self {
        let profile = Profile::default();
        Sizes {
            rules: schc::coapcc_rules(&profile),
            profile,
            context: Context::default(),
            known: HashMap::new(),
            key: Vec::new(),
        }
    }
}

impl Sizes {
    /// The FRMPayload of CoAP message `coap` sent uplink (`up`) or
    /// downlink: its SCHC compression's length (residue padded to a byte,
    /// then the CoAP payload). A message that is not valid CoAP (none is,
    /// from coapcc's endpoints) is sent whole, with its IPv6 and UDP
    /// headers, as SCHC's no-compression rule sends it.
    pub fn frame(&mut self, coap: &[u8], up: bool) -> usize {
        self.key.clear();
        self.key.push(u8::from(up));
        self.key.extend_from_slice(coap);
        if coap.len() >= 4 {
            // The shape: message ID and token value zeroed.
            let tkl = usize::from(coap[0] & 0x0f).min(coap.len() - 4);
            self.key[3..5 + tkl].fill(0);
        }
        if let Some(&n) = self.known.get(self.key.as_slice()) {
            return n;
        }
        let n = self.compress(coap, up);
        self.known.insert(self.key.clone(), n);
        n
    }

    /// Compresses `coap` with the context's message-ID high byte.
    fn compress(&self, coap: &[u8], up: bool) -> usize {
        let dir = if up { Direction::Up } else { Direction::Down };
        let whole = schc::IPV6_HEADER + schc::UDP_HEADER + coap.len();
        let Ok(mut msg) = Message::decode(coap) else {
            return whole;
        };
        msg.mid = (u16::from(self.profile.mid_msb) << 8) | (msg.mid & 0xff);
        schc::build(&msg, &self.profile, &self.context, dir).map_or(whole, |packet| {
            schc::compress(&self.rules, &packet, dir, &self.context).len()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_proto::message::{option, Code, MessageType};

    fn get(mid: u16, token: &[u8]) -> Vec<u8> {
        let mut m = Message::new(MessageType::Con, Code::GET, mid);
        m.token = token.to_vec();
        m.options.push((option::URI_PATH, b"sense".to_vec()));
        m.encode().unwrap()
    }

    #[test]
    fn a_get_of_sense_is_three_bytes_whatever_its_message_id_and_token() {
        // docs/schc.md: a CON GET /sense with a 1-byte token is 59 bytes of
        // IPv6 + UDP + CoAP and a 24-bit residue.
        let mut s = Sizes::default();
        assert_eq!(s.frame(&get(7, &[0x42]), true), 3);
        assert_eq!(s.frame(&get(0x1234, &[0x99]), true), 3);
        assert_eq!(s.known.len(), 1, "one shape");
        // Another token length is another shape.
        assert_eq!(s.frame(&get(7, &[]), true), s.compress(&get(7, &[]), true));
        assert_eq!(s.known.len(), 2);
    }

    #[test]
    fn not_coap_goes_whole() {
        let mut s = Sizes::default();
        assert_eq!(s.frame(&[0xff, 0x00], true), 40 + 8 + 2);
    }
}
