//! Turns spec [`Model`]s into the sources of the `csikit` crate; returns file contents, does no IO.
//!
//! [`generate_crate`] is the one entry point: each [`Package`] (CSI `v1`, each csi-addons
//! spec) becomes a module with prost types, tonic clients and servers, the encoded
//! descriptor set, a spec-facts table and `Debug` impls that redact secrets. The proto
//! compile happens once, in `csikit-spec`; prost-build only turns those descriptors into
//! Rust (through [`prost_build::Config::generate`], which returns strings).
//!
//! The documentation site is `csikit-site`'s and the driver scaffold `xtask`'s, so a build script's
//! dependency tree holds neither.
//!
//! Inside, dependencies point down. At the bottom, `error` (why generation failed), `input` (a
//! [`Package`] and which [`Parts`] to make of it), `names` (Rust names and type paths) and `docs` (rustdoc from spec comments). The
//! per-package generators read only those: `rust` (prost/tonic output with `validation`'s
//! attributes), `facts`, `descriptor`, `debug` (redacted `Debug`), `server` (with `rpc_docs`, each
//! trait method's docs, and `prose`, the spec's prose as rustdoc) and `errors` (the error
//! catalogs). `package` assembles their output into one package module, and `layout` lays
//! the packages out as the `csikit` crate, with `upgrade` (the upgrade note, from an
//! [`csikit_spec::upgrade::UpgradeNote`] and the error catalogs) for its `UPGRADING.md`.

mod debug;
mod descriptor;
mod docs;
mod error;
mod errors;
mod facts;
mod input;
mod layout;
mod names;
mod package;
mod prose;
mod rpc_docs;
mod rust;
mod server;
mod upgrade;
pub mod validation;

use std::collections::BTreeMap;
use std::path::PathBuf;

use csikit_spec::Model;

pub use error::Error;
pub use layout::{CrateOptions, Dependency};
pub use package::{Gate, Package, Parts, package_file};

/// Generates every file of the `csikit` crate, keyed by path relative to the crate root.
///
/// The output is deterministic: the same inputs give byte-identical files.
///
/// # Errors
///
/// When a package's descriptor set does not decode or prost-build rejects it.
pub fn generate_crate(
    packages: &[Package<'_>],
    options: &CrateOptions,
) -> Result<BTreeMap<PathBuf, String>, Error> {
    layout::generate_crate(packages, options)
}

/// The messages of `model` whose `Debug` output must be redacted: those with a secret field,
/// and every message holding one of those, transitively (through fields and oneofs).
pub fn secret_holding_messages(model: &Model) -> Vec<&str> {
    debug::secret_holders(model).into_iter().collect()
}
