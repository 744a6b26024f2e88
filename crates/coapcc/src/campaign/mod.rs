//! Campaigns: a whole published evaluation as one matrix of runs (algorithms ×
//! buffers × client counts × workloads × error profiles × replications, and
//! mixed populations; spec `docs/spec/testbed-spec.md` §1.3, §2, `docs/spec/algorithms-spec.md` §7), run on all
//! cores into a resumable results store ([`crate::store`]).
//!
//! What every network's campaigns share; each network's campaign file and
//! plan are in its folder ([`crate::networks`]).
//!
//! - [`mod@unit`]: one run, computed and stored the same way by every executor,
//!   and a network's plan as a [`Campaign`]; [`plan`]: a plan of any
//!   network; [`ceiling`]: the size of a whole plan, before it is
//!   expanded; [`runner`]: parallel execution;
//!   [`progress`]: the progress on stderr; [`sets`]: what the campaign files
//!   check and hash alike. Run keys and the model version: [`crate::key`].

pub mod ceiling;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod sets;
pub mod unit;

pub use plan::{CampaignFile, Plan};
pub use progress::Progress;
pub use runner::Outcome;
pub use unit::{prepare, run, Campaign, NetworkPlan, PlanCell, Unit};
