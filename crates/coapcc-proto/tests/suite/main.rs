//! The integration tests of `coapcc-proto`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc-proto --test suite <module>::`.

mod bad_timers;
mod client;
mod codec;
mod fuzz;
mod server;
