//! A CSI conformance suite for any driver, generated from the spec's facts (the `csikit` crate's
//! facts tables and descriptors) where the spec states the rule, and written by hand for the
//! behaviour the spec describes in prose.
//!
//! * Generated ([`cases::facts`](crate)): for every RPC of the services the plugin advertises,
//!   whether the spec obliges it (then UNIMPLEMENTED fails); for every RPC it serves, one case
//!   per REQUIRED field and required oneof (cleared: INVALID_ARGUMENT expected); size limits at
//!   the limit and one byte over; a secret key outside the allowed charset; banned control
//!   characters in names; one case per capability implication of the Model
//!   (LIST_VOLUME_HEALTH ⇒ GET_VOLUME_HEALTH, LIST_VOLUMES_PUBLISHED_NODES ⇒
//!   PUBLISH_UNPUBLISH_VOLUME).
//! * From the error tables: one case per row the suite can bring about, expecting its code.
//! * Written: a table of cases per group (identity, capabilities, volume, expand, modify, list,
//!   publish, node, access, snapshot, group, health), each row with what the plugin must
//!   advertise for it to apply (the skip reason comes from there), the spec sentence it checks,
//!   and its body.
//!
//! Verdicts a driver's author can trust: a case fails only for a sentence that binds the plugin
//! with MUST (an error table's row is one). A sentence that binds the sender of a message (the
//! size limits, the secret key charset: limits on what a CO generates) or a SHOULD gives a note
//! instead; [`Config::strict`] makes notes failures. Every answer of every call the suite makes
//! is checked against the spec's facts (REQUIRED response fields, limits, non-negative numbers),
//! for the secret values it sent, and against the request that produced it, what the plugin
//! advertises and what it answered before; a broken answer fails the case that got it.
//!
//! Every volume, snapshot and group snapshot a case creates is deleted even when the case fails,
//! nothing the suite did not make is touched, and ListVolumes must read the same after the run
//! as before it. Every call has a deadline, so an unreachable endpoint, a server that is not CSI
//! or a hanging driver gives a clear line per case, never a hang.
//!
//! `AUDIT.md` audits every MUST sentence of the spec against the cases; [`audit_summary`] prints
//! its coverage.
//!
//! From `cargo test`, [`run_in_process`] serves a driver's routes (for example
//! `csikit::server::Builder::into_routes`) on a temporary socket and runs the suite against it.
//!
//! csi-sanity's YAML files (secrets, volume parameters) are read by `csikit::runtime::secrets`.
//!
//! Modules: `config` (how to run), `sentence` (what a case checks), `case` (a row of the table),
//! `advertised` (what the plugin advertises), `suite` (the connection, what the suite made),
//! `exchange` (every call, and the checks of every answer), `answers` (the table of RPCs; an
//! answer against its request, what the plugin advertises and earlier answers), `v1_12` (the
//! `volume_condition` a plugin still on v1.12.0 sends, read once per answer), `workload` (a
//! volume put in use on the node, and the mount table), `record` (verdicts), `cases` (the table
//! and the generated cases), `generated` (requests changed by reflection), `audit` (`AUDIT.md`),
//! `cleanup`, `run`, `report`, `client`, `in_process` (a driver served in process); and `explore`
//! (`csi-conformance explore`: stateful, model-based testing over the same exchange and answer
//! checks).

mod advertised;
mod answers;
mod audit;
mod case;
mod cases;
mod cleanup;
mod client;
mod config;
mod exchange;
pub mod explore;
mod generated;
mod in_process;
mod record;
mod report;
mod run;
mod sentence;
mod suite;
mod v1_12;
mod workload;

pub use audit::summary as audit_summary;
pub use client::Endpoint;
pub use config::Config;
pub use csikit::runtime::secrets::Secrets;
pub use csikit::runtime::secrets::yaml::read_flat;
pub use report::{CaseResult, Outcome, Report};
pub use run::{list, run, run_in_process};
pub use sentence::{Binds, Level, Sentence};
