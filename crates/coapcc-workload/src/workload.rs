//! Workloads: how a client sends (spec `docs/spec/testbed-spec.md` §2), and
//! the two workloads beyond one request at a time: observing a resource
//! (RFC 7641) and block-wise transfers (RFC 7959).

use serde::{Deserialize, Serialize};

/// How a client sends (spec `docs/spec/testbed-spec.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Back-to-back exchanges, state kept throughout.
    #[default]
    Continuous,
    /// Batches of random size; all congestion-control state discarded between.
    Random,
    /// Each client observes one resource of the server (RFC 7641); the
    /// resource changes every [`Workload::period`] and the server notifies
    /// every observer, timing its Confirmable notifications with the
    /// algorithm. `exchanges` is the number of changes.
    Observe,
    /// Each client downloads (Block2) or uploads (Block1) a representation
    /// of [`Workload::size`] bytes in blocks of [`Workload::block_size`]
    /// (RFC 7959), one block exchange at a time. `exchanges` is the number of
    /// transfers, back to back.
    Blockwise,
}

impl WorkloadKind {
    /// Every kind, in the order of [`Self::name`]'s list.
    pub const ALL: [WorkloadKind; 4] = [
        WorkloadKind::Continuous,
        WorkloadKind::Random,
        WorkloadKind::Observe,
        WorkloadKind::Blockwise,
    ];

    /// Parses `continuous|random|observe|blockwise`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Continuous => "continuous",
            WorkloadKind::Random => "random",
            WorkloadKind::Observe => "observe",
            WorkloadKind::Blockwise => "blockwise",
        }
    }

    /// Whether each exchange is one request and its response (continuous
    /// and random clients), as the published evaluations' clients.
    pub fn is_request_response(self) -> bool {
        matches!(self, WorkloadKind::Continuous | WorkloadKind::Random)
    }
}

/// Which way a block-wise transfer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TransferDirection {
    /// GET of a large representation, in Block2 responses (RFC 7959 §2.4).
    #[default]
    Download,
    /// PUT of a large body, in Block1 requests (RFC 7959 §2.5).
    Upload,
}

impl TransferDirection {
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            TransferDirection::Download => "download",
            TransferDirection::Upload => "upload",
        }
    }
}

/// A workload: how many exchanges, and how they are cut into batches; for
/// the observe and block-wise kinds, their own settings. Those settings are
/// left out of the serialised workload when not given, so a continuous or
/// random workload serialises as it always has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Continuous, random, observe or blockwise.
    pub kind: WorkloadKind,
    /// Exchanges per client (50); for `observe`, changes of the resource;
    /// for `blockwise`, transfers per client.
    pub exchanges: u32,
    /// Batch sizes of random clients, uniform in [lo, hi] (1–10).
    pub batch: [u32; 2],
    /// `observe`: seconds between changes of the resource
    /// ([`DEFAULT_PERIOD`] if not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
    /// `observe`: every k-th notification is Confirmable, the others
    /// Non-confirmable ([`DEFAULT_CONFIRM_EVERY`] if not given; 1: all
    /// Confirmable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm_every: Option<u32>,
    /// `blockwise`: download or upload (download if not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<TransferDirection>,
    /// `blockwise`: bytes of the representation ([`DEFAULT_SIZE`] if not
    /// given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// `blockwise`: bytes per block, a power of two from 16 to 1024
    /// ([`DEFAULT_BLOCK_SIZE`] if not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u32>,
}

/// Seconds between changes of an observed resource when not given.
pub const DEFAULT_PERIOD: f64 = 5.0;
/// Every k-th notification Confirmable when not given: 5, as libcoap's
/// server (`COAP_OBS_MAX_NON`: at most five Non-confirmable notifications
/// in a row).
pub const DEFAULT_CONFIRM_EVERY: u32 = 5;
/// Bytes of a block-wise representation when not given.
pub const DEFAULT_SIZE: u32 = 2048;
/// Bytes per block when not given (the largest that fits the testbed's
/// 296-byte MTU with the headers).
pub const DEFAULT_BLOCK_SIZE: u32 = 128;
/// The longest period between changes (one day).
pub const MAX_PERIOD: f64 = 86_400.0;
/// The largest block-wise representation (16 MiB).
pub const MAX_SIZE: u32 = 16 << 20;

/// An observe workload's settings, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObserveSettings {
    /// Seconds between changes.
    pub period: f64,
    /// Every k-th notification Confirmable.
    pub confirm_every: u32,
    /// Changes of the resource.
    pub changes: u32,
}

/// A block-wise workload's settings, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockwiseSettings {
    /// Download or upload.
    pub direction: TransferDirection,
    /// Bytes of the representation.
    pub size: u32,
    /// Bytes per block.
    pub block_size: u32,
    /// Transfers per client.
    pub transfers: u32,
}

impl Workload {
    /// The observe settings (meaningful when `kind` is `observe`).
    pub fn observe(&self) -> ObserveSettings {
        ObserveSettings {
            period: self.period.unwrap_or(DEFAULT_PERIOD),
            confirm_every: self.confirm_every.unwrap_or(DEFAULT_CONFIRM_EVERY),
            changes: self.exchanges,
        }
    }

    /// The block-wise settings (meaningful when `kind` is `blockwise`).
    pub fn blockwise(&self) -> BlockwiseSettings {
        BlockwiseSettings {
            direction: self.direction.unwrap_or_default(),
            size: self.size.unwrap_or(DEFAULT_SIZE),
            block_size: self.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
            transfers: self.exchanges,
        }
    }

    /// This workload with kind `kind`, keeping only the settings that belong
    /// to it (a scenario's or campaign's settings of another kind are
    /// dropped when the command line or a campaign set changes the kind).
    pub fn with_kind(&self, kind: WorkloadKind) -> Workload {
        let mut w = self.clone();
        w.kind = kind;
        if kind != WorkloadKind::Observe {
            w.period = None;
            w.confirm_every = None;
        }
        if kind != WorkloadKind::Blockwise {
            w.direction = None;
            w.size = None;
            w.block_size = None;
        }
        w
    }

    /// A line describing the workload: `continuous`, `observe every 5 s,
    /// CON every 5th`, `blockwise download of 2048 B in 128-byte blocks`.
    pub fn describe(&self) -> String {
        match self.kind {
            WorkloadKind::Continuous | WorkloadKind::Random => self.kind.name().to_string(),
            WorkloadKind::Observe => {
                let o = self.observe();
                let con = match o.confirm_every {
                    1 => "every notification CON".to_string(),
                    k => format!("CON every {k}th"),
                };
                format!("observe: {} changes every {} s, {con}", o.changes, o.period)
            }
            WorkloadKind::Blockwise => {
                let b = self.blockwise();
                format!(
                    "blockwise: {} {} of {} B in {}-byte blocks",
                    b.transfers,
                    match b.direction {
                        TransferDirection::Download => "download(s)",
                        TransferDirection::Upload => "upload(s)",
                    },
                    b.size,
                    b.block_size
                )
            }
        }
    }

    /// Checks the fields that belong to one kind: given only with that kind,
    /// and in range. Errors name the field (`workload.<field>`) and what was
    /// expected.
    pub fn check(&self) -> Result<(), String> {
        let kind = self.kind;
        let own = |field: &str, given: bool, owner: WorkloadKind| {
            if given && kind != owner {
                Err(format!(
                    "workload.{field}: belongs to kind = \"{}\", not \"{}\"",
                    owner.name(),
                    kind.name()
                ))
            } else {
                Ok(())
            }
        };
        own("period", self.period.is_some(), WorkloadKind::Observe)?;
        own(
            "confirm_every",
            self.confirm_every.is_some(),
            WorkloadKind::Observe,
        )?;
        own(
            "direction",
            self.direction.is_some(),
            WorkloadKind::Blockwise,
        )?;
        own("size", self.size.is_some(), WorkloadKind::Blockwise)?;
        own(
            "block_size",
            self.block_size.is_some(),
            WorkloadKind::Blockwise,
        )?;
        if self.exchanges == 0 {
            return Err("workload.exchanges: expected at least 1".into());
        }
        match kind {
            WorkloadKind::Observe => {
                let o = self.observe();
                if !(o.period.is_finite() && o.period >= 0.001 && o.period <= MAX_PERIOD) {
                    return Err(format!(
                        "workload.period: expected seconds between changes from 0.001 to \
                         {MAX_PERIOD}, found {}",
                        o.period
                    ));
                }
                if o.confirm_every == 0 {
                    return Err(
                        "workload.confirm_every: expected 1 or more (1: every notification \
                         Confirmable)"
                            .into(),
                    );
                }
            }
            WorkloadKind::Blockwise => {
                let b = self.blockwise();
                if !(16..=1024).contains(&b.block_size) || !b.block_size.is_power_of_two() {
                    return Err(format!(
                        "workload.block_size: expected a power of two from 16 to 1024 bytes \
                         (RFC 7959 SZX 0–6), found {}",
                        b.block_size
                    ));
                }
                if b.size == 0 || b.size > MAX_SIZE {
                    return Err(format!(
                        "workload.size: expected 1 to {MAX_SIZE} bytes, found {}",
                        b.size
                    ));
                }
            }
            WorkloadKind::Continuous | WorkloadKind::Random => {}
        }
        Ok(())
    }
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Continuous,
            exchanges: 50,
            batch: [1, 10],
            period: None,
            confirm_every: None,
            direction: None,
            size: None,
            block_size: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_their_names() {
        for k in WorkloadKind::ALL {
            assert_eq!(WorkloadKind::parse(k.name()), Some(k));
        }
        assert_eq!(WorkloadKind::parse("periodic"), None);
    }

    #[test]
    fn a_request_workload_serialises_without_the_new_fields() {
        let w = Workload::default();
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"continuous","exchanges":50,"batch":[1,10]}"#
        );
    }

    #[test]
    fn fields_of_another_kind_are_refused_by_name() {
        let w = Workload {
            period: Some(2.0),
            ..Workload::default()
        };
        let e = w.check().unwrap_err();
        assert!(
            e.contains("workload.period") && e.contains("observe"),
            "{e}"
        );
        let w = Workload {
            kind: WorkloadKind::Observe,
            block_size: Some(64),
            ..Workload::default()
        };
        assert!(w.check().unwrap_err().contains("workload.block_size"));
    }

    #[test]
    fn ranges_are_checked() {
        let obs = |period: f64, k: u32| Workload {
            kind: WorkloadKind::Observe,
            period: Some(period),
            confirm_every: Some(k),
            ..Workload::default()
        };
        assert!(obs(5.0, 5).check().is_ok());
        assert!(obs(0.0, 5).check().unwrap_err().contains("workload.period"));
        assert!(obs(f64::NAN, 5).check().is_err());
        assert!(obs(1e9, 5).check().is_err());
        assert!(obs(5.0, 0).check().unwrap_err().contains("confirm_every"));
        let blk = |size: u32, b: u32| Workload {
            kind: WorkloadKind::Blockwise,
            size: Some(size),
            block_size: Some(b),
            ..Workload::default()
        };
        assert!(blk(2048, 128).check().is_ok());
        assert!(blk(2048, 100).check().unwrap_err().contains("block_size"));
        assert!(blk(2048, 2048).check().is_err());
        assert!(blk(0, 64).check().unwrap_err().contains("workload.size"));
        assert!(blk(MAX_SIZE + 1, 64).check().is_err());
    }

    #[test]
    fn changing_the_kind_drops_the_other_kinds_settings() {
        let w = Workload {
            kind: WorkloadKind::Observe,
            period: Some(2.0),
            size: Some(10),
            ..Workload::default()
        };
        let c = w.with_kind(WorkloadKind::Continuous);
        assert_eq!((c.period, c.size), (None, None));
        assert!(c.check().is_ok());
        let o = w.with_kind(WorkloadKind::Observe);
        assert_eq!((o.period, o.size), (Some(2.0), None));
        assert_eq!(o.describe(), "observe: 50 changes every 2 s, CON every 5th");
    }

    #[test]
    fn defaults_fill_in() {
        let w = Workload {
            kind: WorkloadKind::Blockwise,
            exchanges: 3,
            ..Workload::default()
        };
        assert_eq!(
            w.blockwise(),
            BlockwiseSettings {
                direction: TransferDirection::Download,
                size: DEFAULT_SIZE,
                block_size: DEFAULT_BLOCK_SIZE,
                transfers: 3
            }
        );
        assert_eq!(w.observe().period, DEFAULT_PERIOD);
    }
}
