//! The integration tests of `coapcc-tcp`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc-tcp --test suite <module>::`.

mod any_wire;
mod common;

mod coap_over_tcp;
mod data;
mod handshake;
mod linux49;
mod linux6;
mod lossy;
mod lwip;
mod lwip_lossy;
