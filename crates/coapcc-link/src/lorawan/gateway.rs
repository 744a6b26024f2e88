//! The gateway's radio: 8 reception paths, half duplex, and the class-A
//! downlink windows.
//!
//! - **Reception paths.** The gateway demodulates up to 8 frames at once,
//!   on any channel and SF (an SX1301's 8 paths; ns-3 `lorawan` gives its
//!   gateways 8 in `helper/lorawan-mac-helper.cc`). A frame that arrives
//!   while all 8 are busy is lost ([`Gateway::with`] sets another count).
//!   A frame below the sensitivity takes no
//!   path (`model/simple-gateway-lora-phy.cc`): the caller checks it first
//!   ([`super::interference`]).
//! - **Half duplex.** While it transmits the gateway receives nothing, and
//!   starting a transmission ends every reception in progress
//!   (`model/simple-gateway-lora-phy.cc`, `Send` and `StartReceive`).
//! - **Class-A downlinks.** After an uplink that ends at t, the device
//!   listens at t + 1 s (RX1: the uplink's channel and SF, RX1DROffset 0,
//!   sub-band g1) and at t + 2 s (RX2: 869.525 MHz, SF12, sub-band g3)
//!   (LoRaWAN 1.0.x, RECEIVE_DELAY1/2; RP002's EU868 defaults; ns-3's
//!   `model/class-a-end-device-lorawan-mac.cc`). The gateway answers in
//!   RX1 if that window is still ahead, its radio is free for the frame's
//!   whole time on air and g1's duty cycle allows it; else in RX2 on the
//!   same terms with g3; else the downlink is dropped
//!   ([`DownlinkDropped`]) and the caller decides what waits for the
//!   device's next uplink. [`Gateway::book`] tries one window only; the
//!   RX delays are 1 s and 2 s unless [`Gateway::with`] sets others.

use super::airtime::{Modulation, Sf};
use super::region::{Channel, DutyCycle, DutyCycles, SubBand, RX2_CHANNEL, RX2_SF};
use crate::time::{Nanos, SECOND};

/// The gateway's reception paths (demodulators) by default.
pub const RECEPTION_PATHS: usize = 8;

/// RX1 opens this long after the end of the uplink (LoRaWAN's
/// RECEIVE_DELAY1 default).
pub const RX1_DELAY: Nanos = SECOND;

/// RX2 opens this long after the end of the uplink (RECEIVE_DELAY2).
pub const RX2_DELAY: Nanos = 2 * SECOND;

/// Why the gateway could not start receiving a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxRefused {
    /// It is transmitting.
    Transmitting,
    /// All its reception paths are busy.
    PathsBusy,
}

/// The uplink a downlink answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uplink {
    /// When its last symbol arrived.
    pub end: Nanos,
    /// Its channel (RX1's).
    pub channel: Channel,
    /// Its spreading factor (RX1's).
    pub sf: Sf,
}

/// A class-A receive window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// 1 s after the uplink, its channel and SF.
    Rx1,
    /// 2 s after the uplink, 869.525 MHz, SF12.
    Rx2,
}

impl Window {
    /// When the window opens after an uplink, on which channel and SF, with
    /// the default delays ([`RX1_DELAY`], [`RX2_DELAY`]).
    pub fn of(self, uplink: &Uplink) -> (Nanos, Channel, Sf) {
        self.after(uplink, [RX1_DELAY, RX2_DELAY])
    }

    /// When the window opens after an uplink, on which channel and SF, RX1
    /// and RX2 opening `delays[0]` and `delays[1]` after its end.
    pub fn after(self, uplink: &Uplink, delays: [Nanos; 2]) -> (Nanos, Channel, Sf) {
        match self {
            Window::Rx1 => (uplink.end + delays[0], uplink.channel, uplink.sf),
            Window::Rx2 => (uplink.end + delays[1], RX2_CHANNEL, RX2_SF),
        }
    }
}

/// A downlink the gateway has booked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Downlink {
    /// The window it goes in.
    pub window: Window,
    /// Its first symbol (the window's opening).
    pub start: Nanos,
    /// Its last symbol.
    pub end: Nanos,
    /// Its channel.
    pub channel: Channel,
    /// Its spreading factor.
    pub sf: Sf,
}

/// Why a window could not carry a downlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The window opened before the downlink was ready.
    NoWindow,
    /// The gateway's radio is booked for another downlink then.
    GatewayBusy,
    /// The sub-band's off-time has not passed by the window.
    DutyCycle,
}

/// A downlink neither window could carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownlinkDropped {
    /// Why not in RX1.
    pub rx1: Miss,
    /// Why not in RX2.
    pub rx2: Miss,
}

impl DownlinkDropped {
    /// The cause to count: RX2's, the last chance.
    pub fn cause(&self) -> Miss {
        self.rx2
    }
}

/// A frame a reception path is locked onto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lock {
    frame: u32,
    end: Nanos,
}

/// The gateway's radio state.
#[derive(Clone, Debug)]
pub struct Gateway {
    paths: Vec<Option<Lock>>,
    /// RX1's and RX2's delays after an uplink's end.
    delays: [Nanos; 2],
    duty: DutyCycle,
    /// Booked downlinks (start, end), by start; those over are pruned.
    booked: Vec<(Nanos, Nanos)>,
}

impl Gateway {
    /// An idle gateway whose transmissions obey `limits`, with
    /// [`RECEPTION_PATHS`] paths and the default RX delays.
    pub fn new(limits: DutyCycles) -> Self {
        Gateway::with(limits, RECEPTION_PATHS, [RX1_DELAY, RX2_DELAY])
    }

    /// An idle gateway whose transmissions obey `limits`, with `paths`
    /// reception paths (at least 1), answering in RX1 and RX2 `delays[0]`
    /// and `delays[1]` after an uplink's end.
    pub fn with(limits: DutyCycles, paths: usize, delays: [Nanos; 2]) -> Self {
        assert!(paths >= 1, "a gateway needs a reception path");
        Gateway {
            paths: vec![None; paths],
            delays,
            duty: DutyCycle::new(limits),
            booked: Vec::new(),
        }
    }

    /// Its duty-cycle state.
    pub fn duty_cycle(&self) -> &DutyCycle {
        &self.duty
    }

    /// Whether a booked downlink is on the air at `at`.
    pub fn transmitting(&self, at: Nanos) -> bool {
        self.booked.iter().any(|&(s, e)| s <= at && at < e)
    }

    /// Reception paths locked onto a frame that has not ended by `now`.
    pub fn busy_paths(&self, now: Nanos) -> usize {
        self.paths
            .iter()
            .flatten()
            .filter(|lock| lock.end > now)
            .count()
    }

    /// `frame`, ending at `end`, starts arriving at `now` (above the
    /// sensitivity): a free path locks onto it, unless the gateway is
    /// transmitting or every path is busy. A path frees itself when its
    /// frame ends.
    pub fn receive(&mut self, now: Nanos, frame: u32, end: Nanos) -> Result<(), RxRefused> {
        self.prune(now);
        if self.transmitting(now) {
            return Err(RxRefused::Transmitting);
        }
        let free = self
            .paths
            .iter_mut()
            .find(|p| p.is_none_or(|lock| lock.end <= now))
            .ok_or(RxRefused::PathsBusy)?;
        *free = Some(Lock { frame, end });
        Ok(())
    }

    /// A booked downlink starts at `now`: every reception still in progress
    /// is cut off. Returns the frames lost so.
    pub fn start_transmission(&mut self, now: Nanos) -> Vec<u32> {
        debug_assert!(self.transmitting(now), "no downlink is booked at {now} ns");
        self.paths
            .iter_mut()
            .filter_map(|p| {
                p.take()
                    .filter(|lock| lock.end > now)
                    .map(|lock| lock.frame)
            })
            .collect()
    }

    /// Books the downlink answering `uplink`, a PHY payload of `phy_bytes`,
    /// decided at `now`: RX1 if it can go there, else RX2 (module docs).
    /// A booked downlink counts against its sub-band's duty cycle and
    /// occupies the radio from its start to its end.
    pub fn schedule_downlink(
        &mut self,
        now: Nanos,
        uplink: &Uplink,
        phy_bytes: usize,
    ) -> Result<Downlink, DownlinkDropped> {
        self.prune(now);
        let rx1 = match self.book(now, uplink, Window::Rx1, phy_bytes) {
            Ok(d) => return Ok(d),
            Err(miss) => miss,
        };
        let rx2 = match self.book(now, uplink, Window::Rx2, phy_bytes) {
            Ok(d) => return Ok(d),
            Err(miss) => miss,
        };
        Err(DownlinkDropped { rx1, rx2 })
    }

    /// Books the downlink answering `uplink`, a PHY payload of `phy_bytes`,
    /// decided at `now`, in `window` only: if that window is still ahead,
    /// the radio is free over the frame and the sub-band's duty cycle
    /// allows it (else the [`Miss`] says which failed first, in that order).
    pub fn book(
        &mut self,
        now: Nanos,
        uplink: &Uplink,
        window: Window,
        phy_bytes: usize,
    ) -> Result<Downlink, Miss> {
        self.prune(now);
        let (start, channel, sf) = window.after(uplink, self.delays);
        let end = start + Modulation::lorawan(sf).time_on_air(phy_bytes);
        let band: SubBand = channel.sub_band;
        if start < now {
            return Err(Miss::NoWindow);
        }
        if self.booked.iter().any(|&(s, e)| s < end && start < e) {
            return Err(Miss::GatewayBusy);
        }
        if !self.duty.allows(band, start) {
            return Err(Miss::DutyCycle);
        }
        self.duty.record(band, start, end - start);
        let at = self.booked.partition_point(|&(s, _)| s <= start);
        self.booked.insert(at, (start, end));
        Ok(Downlink {
            window,
            start,
            end,
            channel,
            sf,
        })
    }

    /// Forgets downlinks over by `now`.
    fn prune(&mut self, now: Nanos) {
        self.booked.retain(|&(_, e)| e > now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lorawan::region::UPLINK_CHANNELS;

    const MS: Nanos = 1_000_000;

    fn uplink(end: Nanos, ch: usize, sf: Sf) -> Uplink {
        Uplink {
            end,
            channel: UPLINK_CHANNELS[ch],
            sf,
        }
    }

    #[test]
    fn eight_paths_then_lost() {
        let mut gw = Gateway::new(DutyCycles::default());
        for f in 0..8 {
            assert_eq!(gw.receive(f * MS, f as u32, 1000 * MS), Ok(()));
        }
        assert_eq!(gw.busy_paths(10 * MS), 8);
        assert_eq!(gw.receive(10 * MS, 8, 500 * MS), Err(RxRefused::PathsBusy));
        // At 1 s the first eight end: their paths are free again.
        assert_eq!(gw.busy_paths(1000 * MS), 0);
        assert_eq!(gw.receive(1000 * MS, 9, 1100 * MS), Ok(()));
    }

    #[test]
    fn rx1_then_rx2_then_dropped_by_hand() {
        let mut gw = Gateway::new(DutyCycles::default());
        // A 12-byte ACK (header and MIC, no FPort) at SF7:
        // 8·12 − 28 + 44 = 112, /28 = 4 → 20 → 28 payload symbols;
        // (12.25 + 28) · 1.024 ms = 41.216 ms.
        // Uplink ends at 10 s → RX1 at 11 s on 868.1 MHz, SF7.
        let d = gw
            .schedule_downlink(10 * SECOND, &uplink(10 * SECOND, 0, Sf::SF7), 12)
            .unwrap();
        assert_eq!(
            (d.window, d.start, d.end),
            (Window::Rx1, 11 * SECOND, 11_041_216_000)
        );
        assert_eq!((d.channel.hz, d.sf), (868_100_000, Sf::SF7));
        // g1 is off for 99 × 41.216 ms: free at 11 s + 100 × 41.216 ms = 15.1216 s.
        assert_eq!(gw.duty_cycle().free_at(SubBand::G1), 15_121_600_000);

        // Another device's uplink ends at 12 s on 868.3 MHz: RX1 (13 s) is in
        // g1's off-time → RX2 at 14 s, 869.525 MHz SF12:
        // 8·12 − 48 + 44 = 92, /40 = 2.3 → 3 → 15 → 23 symbols;
        // (12.25 + 23) · 32.768 ms = 1155.072 ms; g3 then off for 9 × that.
        let d = gw
            .schedule_downlink(12 * SECOND, &uplink(12 * SECOND, 1, Sf::SF7), 12)
            .unwrap();
        assert_eq!(
            (d.window, d.start, d.end),
            (Window::Rx2, 14 * SECOND, 15_155_072_000)
        );
        assert_eq!((d.channel.hz, d.sf), (869_525_000, Sf::SF12));
        assert_eq!(gw.duty_cycle().free_at(SubBand::G3), 25_550_720_000);

        // An uplink ending at 12.5 s: RX1 (13.5 s) in g1's off-time, RX2
        // (14.5 s) while the radio sends the previous downlink.
        let e = gw
            .schedule_downlink(12_500 * MS, &uplink(12_500 * MS, 2, Sf::SF7), 12)
            .unwrap_err();
        assert_eq!((e.rx1, e.rx2), (Miss::DutyCycle, Miss::GatewayBusy));
        assert_eq!(e.cause(), Miss::GatewayBusy);

        // An SF9 uplink ending at 13 s: RX1 at 14 s overlaps the RX2 downlink
        // (busy); RX2 at 15 s too.
        let e = gw
            .schedule_downlink(13 * SECOND, &uplink(13 * SECOND, 0, Sf::SF9), 12)
            .unwrap_err();
        assert_eq!((e.rx1, e.rx2), (Miss::GatewayBusy, Miss::GatewayBusy));

        // An uplink ending at 15.2 s: RX1 at 16.2 s, g1 free since 15.1216 s.
        let d = gw
            .schedule_downlink(15_200 * MS, &uplink(15_200 * MS, 0, Sf::SF7), 12)
            .unwrap();
        assert_eq!(d.window, Window::Rx1);

        // An uplink ending at 16.3 s: RX1 in g1's new off-time, RX2 at 18.3 s
        // in g3's (until 25.55072 s).
        let e = gw
            .schedule_downlink(16_300 * MS, &uplink(16_300 * MS, 0, Sf::SF7), 12)
            .unwrap_err();
        assert_eq!((e.rx1, e.rx2), (Miss::DutyCycle, Miss::DutyCycle));
    }

    #[test]
    fn windows_already_past() {
        let mut gw = Gateway::new(DutyCycles::default());
        // Ready 1.5 s after the uplink: RX1 has opened, RX2 has not.
        let up = uplink(10 * SECOND, 0, Sf::SF7);
        let d = gw.schedule_downlink(11_500 * MS, &up, 12).unwrap();
        assert_eq!((d.window, d.start), (Window::Rx2, 12 * SECOND));
        // Ready 2.5 s after: both gone.
        let mut gw = Gateway::new(DutyCycles::default());
        let e = gw.schedule_downlink(12_500 * MS, &up, 12).unwrap_err();
        assert_eq!((e.rx1, e.rx2), (Miss::NoWindow, Miss::NoWindow));
    }

    #[test]
    fn half_duplex() {
        let mut gw = Gateway::new(DutyCycles::default());
        let d = gw
            .schedule_downlink(10 * SECOND, &uplink(10 * SECOND, 0, Sf::SF7), 12)
            .unwrap();
        // Two frames arrive before the downlink; one ends before it starts.
        assert_eq!(gw.receive(10_500 * MS, 1, 10_900 * MS), Ok(()));
        assert_eq!(gw.receive(10_800 * MS, 2, 11_300 * MS), Ok(()));
        // The downlink starts at 11 s: frame 2 is cut off, frame 1 is done.
        assert!(gw.transmitting(d.start));
        assert_eq!(gw.start_transmission(d.start), vec![2]);
        assert_eq!(gw.busy_paths(d.start), 0);
        // Nothing is received while it sends; afterwards again.
        assert_eq!(
            gw.receive(11_010 * MS, 3, 11_500 * MS),
            Err(RxRefused::Transmitting)
        );
        assert!(!gw.transmitting(d.end));
        assert_eq!(gw.receive(d.end, 4, d.end + 100 * MS), Ok(()));
    }
}
