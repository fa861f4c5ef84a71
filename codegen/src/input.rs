//! What every generator of a package's files reads: the package's model, its descriptors and
//! where it sits in the crate, and which parts to generate. Its own module, below everything
//! else, so that the per-package generators (Rust types, server, errors) and the assembly of
//! their output (`package`) depend on it and never on each other.

use csikit_spec::{Model, SourceKind};

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
    /// The crate feature the package's module sits behind, for an older release kept beside
    /// the current one so COs can read its plugins (`v1_12`); `None`: always there. A gated
    /// package has the parts of [`Parts::kept_release`] and stays out of the crate-wide
    /// dispatch by message name (`registry`, `validate_encoded`), whose names the current
    /// release holds.
    pub feature: Option<String>,
}

impl Package<'_> {
    /// The input as headers and docs name it: the source, and for a release read without its
    /// prose, what it was read from and where its prose facts come from
    /// (`csi-spec v1.13.0 (proto; prose facts carried from v1.12.0)`).
    pub fn described_source(&self) -> String {
        let kind = match self.model.source.kind {
            SourceKind::Spec => return self.source.clone(),
            SourceKind::Proto => "proto",
            SourceKind::DescriptorSet => "descriptor set",
        };
        match &self.model.source.carried {
            Some(c) => format!("{} ({kind}; prose facts carried from {})", self.source, c.from),
            None => format!("{} ({kind} alone)", self.source),
        }
    }
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
    /// Emitted for a user's crate that needs this feature of `csikit` (a build script chose
    /// the part): inside `::csikit::__<feature>_items! { .. }`, which drops the items when
    /// `csikit` lacks the feature, so the file's one `::csikit::__require_features!` check is
    /// the only error, naming the feature to turn on.
    Checked(&'static str),
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
            Gate::On | Gate::Off | Gate::Checked(_) => String::new(),
        }
    }

    /// `items` (whole lines) as this gate emits them: as they are, after the `cfg` line, or
    /// inside the checked feature's macro; nothing when the part is off.
    pub fn wrap(self, items: &str) -> String {
        match self {
            Gate::Off => String::new(),
            Gate::On => items.to_owned(),
            Gate::Feature(_) => format!("{}{items}", self.cfg()),
            Gate::Checked(f) => format!("::csikit::__{f}_items! {{\n{items}}}\n"),
        }
    }

    /// The feature a user's crate must give `csikit` for this part, when it is checked.
    pub fn checked_feature(self) -> Option<&'static str> {
        match self {
            Gate::Checked(f) => Some(f),
            Gate::Off | Gate::On | Gate::Feature(_) => None,
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

    /// What an older release kept behind a feature of the `csikit` crate carries: what a CO
    /// needs to read and judge that release's plugins (types, validation, facts, the error
    /// catalogs, clients behind `client`, reflection behind `reflect`), and no server (a plugin
    /// built on csikit serves the current release).
    pub fn kept_release() -> Self {
        Parts { server: Gate::Off, ..Parts::csikit_crate() }
    }
}
