//! Linux's TCP (docs/spec/transport-tcp-spec.md §2): the `tcp` profiles (Linux 4.9 as the
//! thesis configured it, Debian 9's defaults, a Linux 6.x host) and model 2's
//! NewReno (`tcp-newreno`).
//!
//! - [`TcpConfig`]: the options of a Linux socket and its mechanism switches
//!   ([`Mechanisms`]);
//! - [`TcpSocket`]: one endpoint running Linux's rules;
//! - [`rtt`]: Linux's RTT estimator and RTO;
//! - [`delack`]: quick-ACK mode and the adaptive delayed-ACK timeout;
//! - [`wheel`]: jiffies and the timer wheel the timers fire on;
//! - [`linux49`]: Linux 4.9's loss recovery, on the sender's [`scoreboard`];
//! - [`newreno`]: model 2's NewReno, the socket's other recovery
//!   (`tcp-newreno`).

mod config;
pub mod delack;
pub mod linux49;
pub mod newreno;
pub mod rtt;
pub mod scoreboard;
mod socket;
pub mod wheel;

pub use config::{Linux49, Mechanisms, Nagle, TcpConfig};
pub use socket::TcpSocket;
