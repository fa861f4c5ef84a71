//! What every generator of a package's files reads: the package's model, its descriptors and
//! where it sits in the crate. Its own module so that the crate layout and the per-package
//! generators (Rust types, server) depend on it, not on each other.

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
