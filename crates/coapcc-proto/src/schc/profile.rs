//! What both ends of coapcc's LoRaWAN link know before any packet: the
//! server's address and ports, the device's prefix and message-ID range
//! ([`Profile`], shared by every device), and the one device's interface
//! identifier ([`Context`]).

use std::net::Ipv6Addr;

use super::rule::Direction;

/// The static values coapcc's rules elide (RFC 8724 §10): documentation
/// addresses (RFC 3849's 2001:db8::/32) and CoAP's port 5683 on both sides.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// The devices' /64 prefix (default 2001:db8:0:1::/64).
    pub dev_prefix: [u8; 8],
    /// The server's /64 prefix (default 2001:db8:0:2::/64).
    pub app_prefix: [u8; 8],
    /// The server's interface identifier (default ::1).
    pub app_iid: [u8; 8],
    /// The devices' UDP port (default 5683).
    pub dev_port: u16,
    /// The server's UDP port (default 5683).
    pub app_port: u16,
    /// The most significant byte every compressed message ID has: only the
    /// low byte travels (RFC 8824 §4.4), so a device draws its message IDs in
    /// `mid_msb·256 ..= mid_msb·256 + 255` (default 0).
    pub mid_msb: u8,
    /// The hop limit of the device's packets (default 64). Downlink packets
    /// leave the decompressor with hop limit 1 (RFC 8724 §10.6).
    pub hop_limit_up: u8,
}

/// The hop limit a decompressed downlink packet gets (RFC 8724 §10.6: it
/// must not be forwarded beyond the device).
pub const HOP_LIMIT_DOWN: u8 = 1;

impl Default for Profile {
    fn default() -> Self {
        Profile {
            dev_prefix: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1],
            app_prefix: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2],
            app_iid: [0, 0, 0, 0, 0, 0, 0, 1],
            dev_port: 5683,
            app_port: 5683,
            mid_msb: 0,
            hop_limit_up: 64,
        }
    }
}

impl Profile {
    /// The server's address: its prefix and IID.
    pub fn app_address(&self) -> Ipv6Addr {
        join(self.app_prefix, self.app_iid)
    }

    /// The address of the device of `ctx`: the devices' prefix and its IID.
    pub fn dev_address(&self, ctx: &Context) -> Ipv6Addr {
        join(self.dev_prefix, ctx.dev_iid)
    }

    /// The hop limit a packet going `dir` has after decompression.
    pub fn hop_limit(&self, dir: Direction) -> u8 {
        match dir {
            Direction::Up => self.hop_limit_up,
            Direction::Down => HOP_LIMIT_DOWN,
        }
    }
}

fn join(prefix: [u8; 8], iid: [u8; 8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a[..8].copy_from_slice(&prefix);
    a[8..].copy_from_slice(&iid);
    Ipv6Addr::from(a)
}

/// One device's part of the context: the interface identifiers the `DevIID`
/// and `AppIID` actions rebuild. RFC 9011 (§5.3) derives the device's IID
/// from its DevEUI keyed by its AppSKey (the first 8 bytes of an AES-CMAC);
/// the LoRaWAN layer that holds those computes it and hands it here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    /// The device's interface identifier.
    pub dev_iid: [u8; 8],
    /// The server's interface identifier (for rules using `AppIID`).
    pub app_iid: [u8; 8],
}

impl Default for Context {
    /// A fixed example device: IID 0200:0000:0000:0001.
    fn default() -> Self {
        Context {
            dev_iid: [2, 0, 0, 0, 0, 0, 0, 1],
            app_iid: [0, 0, 0, 0, 0, 0, 0, 1],
        }
    }
}
