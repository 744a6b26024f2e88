//! Observing resources (RFC 7641), sans-IO.
//!
//! - [`value`]: the Observe option (§2) and its codec;
//! - [`fresh`]: the §3.4 rule that orders notifications ([`is_fresher`]);
//! - [`observation`]: the client side — observations, their notifications,
//!   re-registration and cancellation ([`ObserveClient`]);
//! - [`subject`]: the server side — an observed resource with its bounded
//!   list of observers, sequence numbers, Confirmable or Non-confirmable
//!   notifications ([`confirm`]) and their retransmission, timed by each
//!   peer's congestion-control algorithm ([`Subject`]).
//!
//! What the RFC leaves to the implementation is recorded in
//! `docs/decisions/coap-udp-choices.md` ("Observe (RFC 7641)").

pub mod confirm;
pub mod fresh;
pub mod observation;
pub mod subject;
mod token;
pub mod value;

#[cfg(test)]
mod tests;

pub use confirm::{ConfirmRule, CON_INTERVAL};
pub use fresh::{is_fresher, FRESHNESS_WINDOW, HALF_SEQ};
pub use observation::{
    Cancel, Ending, ObservationId, ObserveClient, ObserveClientConfig, ObserveClientError,
    ObserveClientEvent, ObserveTransmit, DEFAULT_MAX_AGE,
};
pub use subject::{
    NotifyTransmit, Refusal, Registration, Removal, Subject, SubjectConfig, SubjectEvent,
    SubjectStats,
};
pub use token::Token;
pub use value::{
    decode_observe, encode_observe, observe_of, ObserveAction, ObserveError, OBSERVE_MAX,
};
