//! covenant's integration tests, one binary (a binary per file cost a link each: minutes of a
//! clean build and ~90 s after a one-line change). Each module is one area; `common` holds the
//! helpers they share (a server on loopback, clients, the stand-in API server). Run one area
//! with `cargo test --test integration <module>::`.
//!
//! `tests/logging.rs` stays a binary of its own: it installs the process's global tracing
//! subscriber at TRACE, which would capture (and slow) every other test here.

mod common;
#[path = "../../fuzz/harness.rs"]
mod harness;

mod admission;
mod advisory;
mod audit;
mod catalog;
mod ci_output;
mod cli;
mod conformance;
mod console;
mod contract;
mod custom_resources;
mod deploy;
mod events;
mod evolution;
mod fuzz_regressions;
mod hostile;
mod image;
mod launcher;
mod layout;
mod leader;
mod live;
mod meets_ci;
mod mutation;
mod naming;
mod observability;
mod problems;
mod ratchet;
mod readme;
mod reports;
mod robustness;
mod rules;
mod schema;
mod shutdown;
mod tls;
mod vap;
mod versioning;
