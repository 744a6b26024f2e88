//! Option numbers (RFC 7252 §5.10, §12.2) and the experimental numbers of the
//! transmission-marking options (spec docs/spec/algorithms-spec.md §4 and §6.6 Decisions).

/// If-Match.
pub const IF_MATCH: u16 = 1;
/// Uri-Host.
pub const URI_HOST: u16 = 3;
/// ETag.
pub const ETAG: u16 = 4;
/// If-None-Match.
pub const IF_NONE_MATCH: u16 = 5;
/// Observe (RFC 7641).
pub const OBSERVE: u16 = 6;
/// Uri-Port.
pub const URI_PORT: u16 = 7;
/// Location-Path.
pub const LOCATION_PATH: u16 = 8;
/// Uri-Path.
pub const URI_PATH: u16 = 11;
/// Content-Format.
pub const CONTENT_FORMAT: u16 = 12;
/// Max-Age.
pub const MAX_AGE: u16 = 14;
/// Uri-Query.
pub const URI_QUERY: u16 = 15;
/// Accept.
pub const ACCEPT: u16 = 17;
/// Location-Query.
pub const LOCATION_QUERY: u16 = 20;
/// Block2 (RFC 7959).
pub const BLOCK2: u16 = 23;
/// Block1 (RFC 7959).
pub const BLOCK1: u16 = 27;
/// Size2 (RFC 7959).
pub const SIZE2: u16 = 28;
/// Proxy-Uri.
pub const PROXY_URI: u16 = 35;
/// Proxy-Scheme.
pub const PROXY_SCHEME: u16 = 39;
/// Size1.
pub const SIZE1: u16 = 60;
/// Echo (RFC 9175 §2.2): elective, safe to forward, NoCacheKey; 1 to
/// [`ECHO_MAX_LEN`] bytes.
pub const ECHO: u16 = 252;
/// The longest Echo value (RFC 9175 §2.2.1).
pub const ECHO_MAX_LEN: usize = 40;
/// Rexmit-Cnt, FASOR's retransmission count (spec docs/spec/algorithms-spec.md §6.6
/// Decision): elective, safe-to-forward, NoCacheKey, uint 0–1 byte.
pub const REXMIT_CNT: u16 = 65020;
/// Transmission Counter, pCoCoA's (spec docs/spec/algorithms-spec.md §4 Decision): elective,
/// safe-to-forward, NoCacheKey, uint 0–1 byte.
pub const TC: u16 = 65052;

/// Whether an option is critical: odd numbers (RFC 7252 §5.4.1, §5.4.6).
pub const fn is_critical(number: u16) -> bool {
    number & 1 == 1
}

/// Whether an option is unsafe to forward (RFC 7252 §5.4.2, §5.4.6).
pub const fn is_unsafe(number: u16) -> bool {
    number & 2 == 2
}

/// Whether an option is NoCacheKey (RFC 7252 §5.4.6: bits 2–4 all set).
pub const fn is_no_cache_key(number: u16) -> bool {
    number & 0x1E == 0x1C
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_of_rfc_options() {
        // RFC 7252 Table 4: Uri-Path is critical and unsafe; Content-Format is
        // elective and safe; Size1 is NoCacheKey.
        assert!(is_critical(URI_PATH) && is_unsafe(URI_PATH));
        assert!(!is_critical(CONTENT_FORMAT) && !is_unsafe(CONTENT_FORMAT));
        assert!(is_no_cache_key(SIZE1) && !is_no_cache_key(URI_PATH));
    }

    #[test]
    fn marking_options_are_elective_safe_and_no_cache_key() {
        for n in [TC, REXMIT_CNT, ECHO] {
            assert!(!is_critical(n), "{n}");
            assert!(!is_unsafe(n), "{n}");
            assert!(is_no_cache_key(n), "{n}");
        }
    }
}
