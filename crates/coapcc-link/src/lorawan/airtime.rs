//! LoRa time on air and the EU868 payload limits.
//!
//! Time on air follows Semtech's formula (SX1272/76 datasheets, §4.1.1.7;
//! application note AN1200.13, *LoRa Modem Designer's Guide*):
//!
//! - symbol time T_sym = 2^SF / BW;
//! - preamble (n_preamble + 4.25) symbols;
//! - payload 8 + max(⌈(8·PL − 4·SF + 28 + 16·CRC − 20·IH) / (4·(SF − 2·DE))⌉·(CR + 4), 0)
//!   symbols, PL the PHY payload in bytes, CRC = 1 with the payload CRC,
//!   IH = 1 with an implicit header, DE = 1 with the low-data-rate
//!   optimisation, CR = 1..4 for coding rates 4/5..4/8.
//!
//! With BW 125, 250 or 500 kHz a symbol lasts a whole multiple of 4 ns, so
//! the time on air is exact in integer nanoseconds (no rounding).
//!
//! The payload limits are the EU868 table of the LoRaWAN Regional Parameters
//! (RP002-1.0.x, "EU863-870 Maximum payload size"): N, the largest FRMPayload
//! (the application payload) without FOpts, per data rate.

use serde::{Deserialize, Serialize};

use crate::time::{Nanos, SECOND};

/// A LoRa spreading factor, 7 to 12 (the only ones LoRaWAN uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Sf(u8);

impl Sf {
    /// SF7, the fastest.
    pub const SF7: Sf = Sf(7);
    /// SF8.
    pub const SF8: Sf = Sf(8);
    /// SF9.
    pub const SF9: Sf = Sf(9);
    /// SF10.
    pub const SF10: Sf = Sf(10);
    /// SF11.
    pub const SF11: Sf = Sf(11);
    /// SF12, the slowest and most robust (RX2's).
    pub const SF12: Sf = Sf(12);
    /// All six, fastest first.
    pub const ALL: [Sf; 6] = [Sf::SF7, Sf::SF8, Sf::SF9, Sf::SF10, Sf::SF11, Sf::SF12];

    /// The spreading factor `sf`; an error names it if it is not 7 to 12.
    pub fn new(sf: u8) -> Result<Sf, String> {
        if (7..=12).contains(&sf) {
            Ok(Sf(sf))
        } else {
            Err(format!(
                "spreading factor {sf} does not exist in LoRaWAN: expected 7 to 12"
            ))
        }
    }

    /// Its value, 7 to 12.
    pub fn get(self) -> u8 {
        self.0
    }

    /// Its position in per-SF tables: 0 for SF7 to 5 for SF12.
    pub fn index(self) -> usize {
        usize::from(self.0 - 7)
    }
}

impl TryFrom<u8> for Sf {
    type Error = String;
    fn try_from(sf: u8) -> Result<Sf, String> {
        Sf::new(sf)
    }
}

impl From<Sf> for u8 {
    fn from(sf: Sf) -> u8 {
        sf.0
    }
}

impl std::fmt::Display for Sf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SF{}", self.0)
    }
}

/// A LoRa channel bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bandwidth {
    /// 125 kHz, every EU868 data rate DR0–DR5.
    #[serde(rename = "125")]
    Khz125,
    /// 250 kHz (EU868 DR6).
    #[serde(rename = "250")]
    Khz250,
    /// 500 kHz (US915's wide channels).
    #[serde(rename = "500")]
    Khz500,
}

impl Bandwidth {
    /// In hertz.
    pub fn hz(self) -> u64 {
        match self {
            Bandwidth::Khz125 => 125_000,
            Bandwidth::Khz250 => 250_000,
            Bandwidth::Khz500 => 500_000,
        }
    }
}

/// A LoRa coding rate 4/(4 + CR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CodingRate {
    /// 4/5 (CR = 1), LoRaWAN's.
    #[serde(rename = "4/5")]
    Cr45,
    /// 4/6 (CR = 2).
    #[serde(rename = "4/6")]
    Cr46,
    /// 4/7 (CR = 3).
    #[serde(rename = "4/7")]
    Cr47,
    /// 4/8 (CR = 4).
    #[serde(rename = "4/8")]
    Cr48,
}

impl CodingRate {
    /// CR of the formula: 1 for 4/5 to 4 for 4/8.
    pub fn cr(self) -> u64 {
        match self {
            CodingRate::Cr45 => 1,
            CodingRate::Cr46 => 2,
            CodingRate::Cr47 => 3,
            CodingRate::Cr48 => 4,
        }
    }
}

/// The modulation parameters of one LoRa frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modulation {
    /// Spreading factor.
    pub sf: Sf,
    /// Bandwidth.
    pub bandwidth: Bandwidth,
    /// Coding rate.
    pub coding_rate: CodingRate,
    /// Programmed preamble symbols (the radio adds 4.25).
    pub preamble: u16,
    /// Explicit header (IH = 0), as LoRaWAN uses.
    pub explicit_header: bool,
    /// Payload CRC present.
    pub crc: bool,
    /// Low-data-rate optimisation (DE = 1).
    pub low_data_rate: bool,
}

impl Modulation {
    /// LoRaWAN's EU868 frame at `sf`: BW 125 kHz, CR 4/5, preamble 8,
    /// explicit header, CRC on, and the low-data-rate optimisation at SF11
    /// and SF12 (mandatory when a symbol lasts 16 ms or more).
    pub fn lorawan(sf: Sf) -> Modulation {
        Modulation {
            sf,
            bandwidth: Bandwidth::Khz125,
            coding_rate: CodingRate::Cr45,
            preamble: 8,
            explicit_header: true,
            crc: true,
            low_data_rate: sf >= Sf::SF11,
        }
    }

    /// Symbol time 2^SF / BW.
    pub fn symbol_time(&self) -> Nanos {
        (SECOND << self.sf.get()) / self.bandwidth.hz()
    }

    /// Payload symbols for a PHY payload of `bytes`:
    /// 8 + max(⌈(8·PL − 4·SF + 28 + 16·CRC − 20·IH) / (4·(SF − 2·DE))⌉·(CR + 4), 0).
    pub fn payload_symbols(&self, bytes: usize) -> u64 {
        let sf = i64::from(self.sf.get());
        let num = 8 * bytes as i64 - 4 * sf + 28 + 16 * i64::from(self.crc)
            - 20 * i64::from(!self.explicit_header);
        let den = 4 * (sf - 2 * i64::from(self.low_data_rate));
        let blocks = if num > 0 { (num + den - 1) / den } else { 0 };
        8 + blocks as u64 * (self.coding_rate.cr() + 4)
    }

    /// Time on air of a frame with a PHY payload of `bytes`: preamble
    /// (n + 4.25) symbols plus the payload symbols.
    pub fn time_on_air(&self, bytes: usize) -> Nanos {
        // In quarter symbols, so that the 4.25 stays an integer.
        let quarters = 4 * u64::from(self.preamble) + 17 + 4 * self.payload_symbols(bytes);
        quarters * self.symbol_time() / 4
    }
}

/// Bytes a LoRaWAN data frame adds to its FRMPayload without FOpts: MHDR (1),
/// FHDR (DevAddr 4, FCtrl 1, FCnt 2), FPort (1) and MIC (4).
pub const LORAWAN_OVERHEAD: usize = 13;

/// The PHY payload of a data frame carrying `frm_payload` application bytes
/// (with FPort, without FOpts).
pub fn phy_payload(frm_payload: usize) -> usize {
    frm_payload + LORAWAN_OVERHEAD
}

/// EU868's data rate of `sf` at 125 kHz: DR0 = SF12 to DR5 = SF7 (RP002).
pub fn data_rate(sf: Sf) -> u8 {
    12 - sf.get()
}

/// The spreading factor of EU868's 125 kHz data rate `dr` (DR0–DR5).
pub fn sf_of_data_rate(dr: u8) -> Result<Sf, String> {
    if dr <= 5 {
        Ok(Sf(12 - dr))
    } else {
        Err(format!(
            "data rate DR{dr} is not a 125 kHz LoRa data rate of EU868: expected DR0 to DR5"
        ))
    }
}

/// N of RP002's EU868 table: the largest FRMPayload without FOpts, by data
/// rate DR0–DR5 (M, the largest MACPayload, is N + 8: 59, 59, 59, 123, 230,
/// 230 — the figures ns-3 `lorawan` sets as its `MaxAppPayloadForDataRate`
/// in `helper/lorawan-mac-helper.cc`).
pub const MAX_FRM_PAYLOAD: [usize; 6] = [51, 51, 51, 115, 222, 222];

/// The largest FRMPayload EU868 allows at `sf` (RP002).
pub fn max_frm_payload(sf: Sf) -> usize {
    MAX_FRM_PAYLOAD[usize::from(data_rate(sf))]
}

/// Refuses an application payload of `bytes` above EU868's limit at `sf`.
pub fn check_frm_payload(sf: Sf, bytes: usize) -> Result<(), String> {
    let limit = max_frm_payload(sf);
    if bytes <= limit {
        Ok(())
    } else {
        Err(format!(
            "a {bytes}-byte LoRaWAN payload does not fit {sf} (DR{}): EU868 allows at most \
             {limit} bytes there",
            data_rate(sf)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Time on air in µs of `phy` bytes at `sf`, LoRaWAN's EU868 modulation.
    fn toa_us(sf: u8, phy: usize) -> f64 {
        Modulation::lorawan(Sf::new(sf).unwrap()).time_on_air(phy) as f64 / 1e3
    }

    #[test]
    fn symbol_times_at_125_khz() {
        // 2^SF / 125 000 s = 2^SF · 8 µs.
        let us: Vec<Nanos> = Sf::ALL
            .iter()
            .map(|&sf| Modulation::lorawan(sf).symbol_time() / 1_000)
            .collect();
        assert_eq!(us, [1_024, 2_048, 4_096, 8_192, 16_384, 32_768]);
    }

    #[test]
    fn time_on_air_of_an_empty_data_frame() {
        // PHYPayload 13 bytes (header, FPort and MIC, no application bytes).
        // BW 125 kHz, CR 4/5 (CR + 4 = 5), preamble 8 + 4.25 = 12.25 symbols,
        // CRC on, explicit header: numerator 8·13 − 4·SF + 28 + 16 = 148 − 4·SF.
        // SF7:  (148 − 28)/28 = 4.29 → 5 → 8 + 25 = 33; 45.25 · 1.024 ms  =   46.336 ms
        // SF8:  (148 − 32)/32 = 3.63 → 4 → 8 + 20 = 28; 40.25 · 2.048 ms  =   82.432 ms
        // SF9:  (148 − 36)/36 = 3.11 → 4 → 8 + 20 = 28; 40.25 · 4.096 ms  =  164.864 ms
        // SF10: (148 − 40)/40 = 2.70 → 3 → 8 + 15 = 23; 35.25 · 8.192 ms  =  288.768 ms
        // SF11, DE = 1, 4·(11 − 2) = 36:
        //       (148 − 44)/36 = 2.89 → 3 → 8 + 15 = 23; 35.25 · 16.384 ms =  577.536 ms
        // SF12, DE = 1, 4·(12 − 2) = 40:
        //       (148 − 48)/40 = 2.50 → 3 → 8 + 15 = 23; 35.25 · 32.768 ms = 1155.072 ms
        let want = [
            46_336.0,
            82_432.0,
            164_864.0,
            288_768.0,
            577_536.0,
            1_155_072.0,
        ];
        for (sf, want) in (7..=12).zip(want) {
            assert_eq!(toa_us(sf, 13), want, "SF{sf}");
        }
    }

    #[test]
    fn time_on_air_of_a_51_byte_phy_payload() {
        // PHYPayload 51 bytes: numerator 8·51 − 4·SF + 44 = 452 − 4·SF.
        // SF7:  424/28 = 15.14 → 16 → 8 + 80 = 88; 100.25 · 1.024 ms  =  102.656 ms
        // SF8:  420/32 = 13.13 → 14 → 8 + 70 = 78;  90.25 · 2.048 ms  =  184.832 ms
        // SF9:  416/36 = 11.56 → 12 → 8 + 60 = 68;  80.25 · 4.096 ms  =  328.704 ms
        // SF10: 412/40 = 10.30 → 11 → 8 + 55 = 63;  75.25 · 8.192 ms  =  616.448 ms
        // SF11: 408/36 = 11.33 → 12 → 8 + 60 = 68;  80.25 · 16.384 ms = 1314.816 ms
        // SF12: 404/40 = 10.10 → 11 → 8 + 55 = 63;  75.25 · 32.768 ms = 2465.792 ms
        let want = [
            102_656.0,
            184_832.0,
            328_704.0,
            616_448.0,
            1_314_816.0,
            2_465_792.0,
        ];
        for (sf, want) in (7..=12).zip(want) {
            assert_eq!(toa_us(sf, 51), want, "SF{sf}");
        }
    }

    #[test]
    fn other_bandwidths_coding_rates_and_tiny_payloads() {
        // SF7, BW 250 kHz: T_sym = 512 µs; CR 4/8: 51 bytes → 16 blocks · 8 = 128,
        // 8 + 128 = 136 symbols; (12.25 + 136) · 0.512 ms = 75.904 ms.
        let m = Modulation {
            bandwidth: Bandwidth::Khz250,
            coding_rate: CodingRate::Cr48,
            ..Modulation::lorawan(Sf::SF7)
        };
        assert_eq!(m.time_on_air(51), 75_904_000);
        // BW 500 kHz: T_sym = 256 µs at SF7.
        let m = Modulation {
            bandwidth: Bandwidth::Khz500,
            ..Modulation::lorawan(Sf::SF7)
        };
        assert_eq!(m.symbol_time(), 256_000);
        // Implicit header, no CRC, 0 bytes: numerator 0 − 48 + 28 − 20 < 0 →
        // 8 payload symbols; (12.25 + 8) · 32.768 ms = 663.552 ms at SF12.
        let m = Modulation {
            explicit_header: false,
            crc: false,
            ..Modulation::lorawan(Sf::SF12)
        };
        assert_eq!(m.payload_symbols(0), 8);
        assert_eq!(m.time_on_air(0), 663_552_000);
    }

    #[test]
    fn spreading_factors_and_data_rates() {
        assert_eq!(Sf::new(7), Ok(Sf::SF7));
        let e = Sf::new(13).unwrap_err();
        assert!(e.contains("13") && e.contains("7 to 12"), "{e}");
        assert!(Sf::new(6).is_err());
        for sf in Sf::ALL {
            assert_eq!(sf_of_data_rate(data_rate(sf)), Ok(sf));
        }
        assert_eq!(data_rate(Sf::SF12), 0);
        assert_eq!(data_rate(Sf::SF7), 5);
        assert!(sf_of_data_rate(6).unwrap_err().contains("DR6"));
    }

    #[test]
    fn eu868_payload_limits() {
        let limits: Vec<usize> = Sf::ALL.iter().map(|&sf| max_frm_payload(sf)).collect();
        // SF7..SF12 = DR5..DR0.
        assert_eq!(limits, [222, 222, 115, 51, 51, 51]);
        assert_eq!(check_frm_payload(Sf::SF12, 51), Ok(()));
        let e = check_frm_payload(Sf::SF12, 52).unwrap_err();
        assert!(
            e.contains("SF12") && e.contains("51 bytes") && e.contains("52"),
            "{e}"
        );
        let e = check_frm_payload(Sf::SF9, 116).unwrap_err();
        assert!(
            e.contains("SF9") && e.contains("DR3") && e.contains("115"),
            "{e}"
        );
        assert_eq!(check_frm_payload(Sf::SF7, 222), Ok(()));
        assert_eq!(phy_payload(0), 13);
    }
}
