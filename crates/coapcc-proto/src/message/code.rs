//! Message types (RFC 7252 §3) and codes (§12.1).

use core::fmt;

/// Message type (RFC 7252 §3, the 2-bit T field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// Confirmable: retransmitted until acknowledged.
    Con = 0,
    /// Non-confirmable.
    Non = 1,
    /// Acknowledgement.
    Ack = 2,
    /// Reset.
    Rst = 3,
}

impl MessageType {
    /// The type from the two low bits of `bits`.
    pub fn from_bits(bits: u8) -> MessageType {
        match bits & 3 {
            0 => MessageType::Con,
            1 => MessageType::Non,
            2 => MessageType::Ack,
            _ => MessageType::Rst,
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MessageType::Con => "CON",
            MessageType::Non => "NON",
            MessageType::Ack => "ACK",
            MessageType::Rst => "RST",
        })
    }
}

/// A method or response code: 3-bit class, 5-bit detail, shown as `c.dd`
/// (RFC 7252 §3, §12.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(pub u8);

impl Code {
    /// 0.00 Empty.
    pub const EMPTY: Code = Code::new(0, 0);
    /// 0.01 GET.
    pub const GET: Code = Code::new(0, 1);
    /// 0.02 POST.
    pub const POST: Code = Code::new(0, 2);
    /// 0.03 PUT.
    pub const PUT: Code = Code::new(0, 3);
    /// 0.04 DELETE.
    pub const DELETE: Code = Code::new(0, 4);
    /// 2.01 Created.
    pub const CREATED: Code = Code::new(2, 1);
    /// 2.02 Deleted.
    pub const DELETED: Code = Code::new(2, 2);
    /// 2.03 Valid.
    pub const VALID: Code = Code::new(2, 3);
    /// 2.04 Changed.
    pub const CHANGED: Code = Code::new(2, 4);
    /// 2.05 Content.
    pub const CONTENT: Code = Code::new(2, 5);
    /// 2.31 Continue (RFC 7959 §2.9.1): a non-final block of a Block1
    /// upload was received.
    pub const CONTINUE: Code = Code::new(2, 31);
    /// 4.00 Bad Request.
    pub const BAD_REQUEST: Code = Code::new(4, 0);
    /// 4.01 Unauthorized.
    pub const UNAUTHORIZED: Code = Code::new(4, 1);
    /// 4.02 Bad Option.
    pub const BAD_OPTION: Code = Code::new(4, 2);
    /// 4.03 Forbidden.
    pub const FORBIDDEN: Code = Code::new(4, 3);
    /// 4.04 Not Found.
    pub const NOT_FOUND: Code = Code::new(4, 4);
    /// 4.05 Method Not Allowed.
    pub const METHOD_NOT_ALLOWED: Code = Code::new(4, 5);
    /// 4.06 Not Acceptable.
    pub const NOT_ACCEPTABLE: Code = Code::new(4, 6);
    /// 4.08 Request Entity Incomplete (RFC 7959 §2.9.2): a Block1 upload's
    /// blocks arrived out of sequence or with one missing.
    pub const REQUEST_ENTITY_INCOMPLETE: Code = Code::new(4, 8);
    /// 4.12 Precondition Failed.
    pub const PRECONDITION_FAILED: Code = Code::new(4, 12);
    /// 4.13 Request Entity Too Large.
    pub const REQUEST_ENTITY_TOO_LARGE: Code = Code::new(4, 13);
    /// 4.15 Unsupported Content-Format.
    pub const UNSUPPORTED_CONTENT_FORMAT: Code = Code::new(4, 15);
    /// 5.00 Internal Server Error.
    pub const INTERNAL_SERVER_ERROR: Code = Code::new(5, 0);
    /// 5.01 Not Implemented.
    pub const NOT_IMPLEMENTED: Code = Code::new(5, 1);
    /// 5.02 Bad Gateway.
    pub const BAD_GATEWAY: Code = Code::new(5, 2);
    /// 5.03 Service Unavailable.
    pub const SERVICE_UNAVAILABLE: Code = Code::new(5, 3);
    /// 5.04 Gateway Timeout.
    pub const GATEWAY_TIMEOUT: Code = Code::new(5, 4);
    /// 5.05 Proxying Not Supported.
    pub const PROXYING_NOT_SUPPORTED: Code = Code::new(5, 5);

    /// `class.detail`; `class` is taken modulo 8 and `detail` modulo 32.
    pub const fn new(class: u8, detail: u8) -> Code {
        Code(((class & 7) << 5) | (detail & 0x1F))
    }
    /// The class (0–7).
    pub const fn class(self) -> u8 {
        self.0 >> 5
    }
    /// The detail (0–31).
    pub const fn detail(self) -> u8 {
        self.0 & 0x1F
    }
    /// A request method (0.01–0.31).
    pub const fn is_request(self) -> bool {
        self.class() == 0 && self.detail() != 0
    }
    /// A response (classes 2, 4 and 5).
    pub const fn is_response(self) -> bool {
        matches!(self.class(), 2 | 4 | 5)
    }
    /// 0.00, the code of Empty messages.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// A class the RFC reserves (1, 6, 7; RFC 7252 §12.1). Class 7 is used by
    /// RFC 8323 signalling, which is not carried over UDP.
    pub const fn is_reserved_class(self) -> bool {
        matches!(self.class(), 1 | 6 | 7)
    }
}

impl Default for Code {
    /// 2.05 Content, the usual answer (a handler's starting point).
    fn default() -> Self {
        Code::CONTENT
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.class(), self.detail())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_rfc_values_and_display() {
        assert_eq!(Code::CONTENT.0, 0x45);
        assert_eq!(Code::NOT_FOUND.0, 0x84);
        assert_eq!(Code::METHOD_NOT_ALLOWED.0, 0x85);
        assert_eq!(Code::INTERNAL_SERVER_ERROR.0, 0xA0);
        assert_eq!(Code::CONTENT.to_string(), "2.05");
        assert_eq!(Code::PRECONDITION_FAILED.to_string(), "4.12");
        assert_eq!(Code::EMPTY.to_string(), "0.00");
        assert_eq!(Code(0xFF).to_string(), "7.31");
        assert_eq!((Code::CONTENT.class(), Code::CONTENT.detail()), (2, 5));
    }

    #[test]
    fn classification() {
        assert!(Code::GET.is_request() && !Code::GET.is_response());
        assert!(!Code::EMPTY.is_request() && Code::EMPTY.is_empty());
        assert!(Code::NOT_FOUND.is_response() && Code::CONTENT.is_response());
        assert!(Code::new(1, 0).is_reserved_class() && Code::new(6, 1).is_reserved_class());
        assert!(Code::new(7, 2).is_reserved_class() && !Code::new(3, 0).is_reserved_class());
        assert!(!Code::new(3, 0).is_response() && !Code::new(3, 0).is_request());
    }

    #[test]
    fn types_round_trip_through_bits() {
        for t in [
            MessageType::Con,
            MessageType::Non,
            MessageType::Ack,
            MessageType::Rst,
        ] {
            assert_eq!(MessageType::from_bits(t as u8), t);
        }
        assert_eq!(MessageType::Ack.to_string(), "ACK");
    }
}
