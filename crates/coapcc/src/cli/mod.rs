//! The command line's own modules: argument types, progress on stderr and
//! printing on stdout, around the library (`coapcc`).

pub mod args;
pub mod calibrate;
pub mod campaign;
pub mod emulated;
pub mod emulators;
pub mod ip;
pub mod net;
pub mod observe;
pub mod progress;
pub mod report;
pub mod stdout;
pub mod tcp;
