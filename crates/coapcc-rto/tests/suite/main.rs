//! The integration tests of `coapcc-rto`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc-rto --test suite <module>::`.

mod properties;
