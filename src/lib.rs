//! covenant: a Kubernetes validating and mutating admission webhook, and an offline checker
//! for CI built from the same engine, that enforces the versioning discipline of platform
//! documents: schema strictness, additive-only evolution, the type-name covenant and version
//! stamps.
//!
//! Data flows one way: bytes → subject → family → findings → verdict → response. The engine
//! (`engine`, `families`, `rules`) is pure; the server (`server`, `admission`) and the CLI
//! (`report`, `cli`) are thin faces on it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admission;
pub mod audit;
pub mod certs;
pub mod check;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod contract;
pub mod engine;
pub mod families;
pub mod metrics;
pub mod mutation;
pub mod openchoreo;
pub mod pointer;
pub mod registry;
pub mod report;
pub mod rules;
pub mod schema;
pub mod server;
pub mod source;
pub mod strict;
pub mod subject;
pub mod suggest;
pub mod telemetry;
pub mod upgrade;
pub mod usage;
pub mod vap;
pub mod versioning;
