//! Turns spec [`Model`]s into the sources of the `csikit` crate; returns file contents, does no IO.
//!
//! [`generate_crate`] is the one entry point: each [`Package`] (CSI `v1`, each csi-addons
//! spec) becomes a module with prost types, tonic clients and servers, the encoded
//! descriptor set, a spec-facts table and `Debug` impls that redact secrets. The proto
//! compile happens once, in `csikit-spec`; prost-build only turns those descriptors into
//! Rust (through [`prost_build::Config::generate`], which returns strings).
//!
//! [`site`] renders the documentation site and [`scaffold`] a new driver crate, likewise as
//! maps of path to text.
//!
//! Inside, dependencies point down. At the bottom, `input` (a [`Package`] and which [`Parts`] to
//! make of it), `names` (Rust names and type paths) and `docs` (rustdoc from spec comments). The
//! per-package generators read only those: `rust` (prost/tonic output with `validation`'s
//! attributes), `facts`, `descriptor`, `debug` (redacted `Debug`), `server` and `errors` (the
//! error catalogs). `package` assembles their output into one package module, and `layout` lays
//! the packages out as the `csikit` crate.

mod debug;
mod descriptor;
mod docs;
mod errors;
mod facts;
mod input;
mod layout;
mod names;
mod package;
mod rust;
pub mod scaffold;
mod server;
pub mod site;
pub mod validation;

use std::collections::BTreeMap;
use std::path::PathBuf;

use csikit_spec::Model;

pub use layout::{CrateOptions, Dependency};
pub use package::{Gate, Package, Parts, package_file};

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The encoded descriptor set given with a package does not decode.
    #[error("descriptor set of '{package}' does not decode: {source}")]
    Descriptor {
        /// The proto package.
        package: String,
        /// The decode error.
        source: prost::DecodeError,
    },
    /// The descriptor set does not contain the file the model was built from.
    #[error("descriptor set of '{package}' has no file '{file}'")]
    MissingFile {
        /// The proto package.
        package: String,
        /// The import name looked for.
        file: String,
    },
    /// prost-build refused the descriptors.
    #[error("prost-build failed on '{package}': {source}")]
    ProstBuild {
        /// The proto package.
        package: String,
        /// The error prost-build gave.
        source: std::io::Error,
    },
}

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
