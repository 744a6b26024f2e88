//! The integration tests of `coapcc-sim`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc-sim --test suite <module>::`.

mod support;

mod blockwise;
mod grid;
mod nstart;
mod observe;
mod spurious;
mod star;
mod stop;
mod tcp;
mod tcp_decompose;
mod tcp_lwip;
mod tcp_newreno;
mod testbed;
