//! The integration tests of `coapcc-net`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc-net --test suite <module>::`.

mod tcp_load;
mod tcp_socket;
