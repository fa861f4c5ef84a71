//! What every generator of a package's files reads: the package's model, its descriptors and
//! where it sits in the crate, and which parts to generate. Its own module, below everything
//! else, so that the per-package generators (Rust types, server, errors) and the assembly of
//! their output (`package`) depend on it and never on each other.

use csikit_spec::Model;

/// One proto package to turn into a module of the crate.
#[derive(Debug, Clone)]
pub struct Package<'a> {
    /// The package's model.
    pub model: &'a Model,
    /// The encoded `FileDescriptorSet` the model was lowered from (imports included).
    pub descriptor_set: &'a [u8],
    /// The import name of the package's own file in `descriptor_set`, e.g. `csi.proto`.
    pub proto_file: &'a str,
    /// The Rust module path inside the crate, e.g. `v1` or `addons::replication`.
    pub module: String,
    /// The input, for headers and docs, e.g. `csi-spec v1.12.0`.
    pub source: String,
    /// Proto paths served by other modules: (`.csi.v1`, `crate::v1`).
    pub extern_paths: Vec<(String, String)>,
    /// The same spec read with a translation's error tables (Japanese), for the error catalog.
    pub translation: Option<&'a Model>,
}

/// Whether a part of a package is emitted, and behind which cargo feature of the crate it
/// lands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Left out.
    Off,
    /// Emitted unconditionally (a user's build script chose it).
    On,
    /// Emitted behind `#[cfg(feature = "...")]` (the `csikit` crate's own features).
    Feature(&'static str),
}

impl Gate {
    /// Whether the part is emitted at all.
    pub fn emitted(self) -> bool {
        self != Gate::Off
    }

    /// The `#[cfg(...)]` line (with its newline) to put before the part; empty when ungated.
    pub fn cfg(self) -> String {
        match self {
            Gate::Feature(f) => format!("#[cfg(feature = \"{f}\")]\n"),
            Gate::On | Gate::Off => String::new(),
        }
    }
}

/// Which parts of a package to generate. The prost types, their redacted `Debug` and the
/// descriptor set come with `types`; the rest stands on them except facts and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// prost messages and enums, redacted `Debug`, `FILE_DESCRIPTOR_SET`.
    pub types: bool,
    /// `#[csi_validate]` on the messages (the `Validate` impls).
    pub validation: bool,
    /// The spec-facts table (`facts::FACTS`).
    pub facts: bool,
    /// The error-catalog enums (`errors`), when the spec has error tables.
    pub errors: bool,
    /// Server traits, adapters and RPC records (`server`).
    pub server: Gate,
    /// tonic clients (`*_client` modules).
    pub client: Gate,
    /// `descriptor_pool()` through prost-reflect.
    pub reflect: Gate,
}

impl Parts {
    /// What the `csikit` crate carries: everything, clients, servers and reflection behind its
    /// features.
    pub fn csikit_crate() -> Self {
        Parts {
            types: true,
            validation: true,
            facts: true,
            errors: true,
            server: Gate::Feature("server"),
            client: Gate::Feature("client"),
            reflect: Gate::Feature("reflect"),
        }
    }
}
