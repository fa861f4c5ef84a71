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

/// Whether a part of a package is emitted, and behind which cargo feature of the crate it
/// lands in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Left out.
    Off,
    /// Emitted unconditionally.
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
}

/// A submodule of a package module: a file of its own in the `csikit` crate, an inline
/// `mod name { ... }` in a build script's single file.
#[derive(Debug, Clone)]
pub struct SubModule {
    /// The module name (and file stem).
    pub name: &'static str,
    /// `pub mod` rather than `mod`.
    pub public: bool,
    /// Outer doc lines (each ending in a newline) to put before the declaration.
    pub doc: String,
    /// Whether and how the module is gated (its `#[cfg]` line, or its checked feature's macro).
    pub gate: Gate,
    /// The module's text (its own `//!` docs first).
    pub content: String,
}

/// The pieces of one package module, from which both layouts are assembled.
#[derive(Debug, Clone)]
pub struct PackageParts {
    /// The prost and tonic output.
    pub code: String,
    /// The submodules, in declaration order.
    pub modules: Vec<SubModule>,
    /// Items after the submodule declarations (`FILE_DESCRIPTOR_SET`, `descriptor_pool`).
    pub tail: String,
}

/// Generates the pieces of `p` that `parts` asks for. `item_allows` puts
/// [`crate::rust::GENERATED_ALLOWS`] on every top-level item (for the single-file layout).
pub fn package_parts(
    p: &Package<'_>,
    parts: &Parts,
    item_allows: bool,
) -> Result<PackageParts, crate::Error> {
    let model = p.model;
    let code = if parts.types {
        crate::rust::generate_rust(p, parts, item_allows)?
    } else {
        String::new()
    };
    let mut modules = Vec::new();
    if parts.facts {
        modules.push(SubModule {
            name: "facts",
            public: true,
            doc: String::new(),
            gate: Gate::On,
            content: format!(
                "//! Spec facts of `{}`.\n\n{}",
                model.package,
                crate::facts::generate_facts(model, &p.source)
            ),
        });
    }
    modules.push(SubModule {
        name: "descriptor_set",
        public: false,
        doc: String::new(),
        gate: Gate::On,
        content: format!(
            "//! The encoded descriptors of `{}`.\n\n{}",
            model.package,
            crate::descriptor::descriptor_const(p.descriptor_set)
        ),
    });
    if parts.types {
        modules.push(SubModule {
            name: "redacted_debug",
            public: false,
            doc: String::new(),
            gate: Gate::On,
            content: format!(
                "//! `Debug` impls of `{}` messages that hold secrets: keys show, values never.\n\n{}",
                model.package,
                crate::debug::generate_debug(model)
            ),
        });
    }
    if parts.server.emitted() {
        modules.push(SubModule {
            name: "server",
            public: true,
            doc: "/// Server traits and layered adapters for drivers (see [`csikit::server`]).\n"
                .to_owned(),
            gate: parts.server,
            content: crate::server::generate_server(p),
        });
    }
    if parts.errors
        && let Some(errors) = crate::errors::generate_errors(model, p.translation, {
            // `status()` needs tonic: the crate's client or server feature, or either part.
            match (parts.client, parts.server) {
                (Gate::Feature(_), _) | (_, Gate::Feature(_)) => {
                    Some(("    #[cfg(any(feature = \"client\", feature = \"server\"))]\n", ""))
                }
                (Gate::Checked(_), _) | (_, Gate::Checked(_)) => {
                    Some(("    ::csikit::__tonic_items! {\n", "    }\n"))
                }
                (Gate::On, _) | (_, Gate::On) => Some(("", "")),
                (Gate::Off, Gate::Off) => None,
            }
        })
    {
        modules.push(SubModule {
            name: "errors",
            public: true,
            doc: "/// The spec's error tables as types: per RPC, the errors it may return and what they mean.\n"
                .to_owned(),
            gate: Gate::On,
            content: errors,
        });
    }
    let mut tail = String::from("pub use descriptor_set::FILE_DESCRIPTOR_SET;\n");
    if parts.reflect.emitted() {
        tail.push('\n');
        tail.push_str(&parts.reflect.wrap(
            "/// The descriptors of [`FILE_DESCRIPTOR_SET`], decoded once.\n\
             pub fn descriptor_pool() -> &'static ::csikit::prost_reflect::DescriptorPool {\n    \
             static POOL: std::sync::OnceLock<::csikit::prost_reflect::DescriptorPool> = std::sync::OnceLock::new();\n    \
             POOL.get_or_init(|| {\n        \
             #[allow(clippy::expect_used, reason = \"the bytes were produced by the compiler at generate time\")]\n        \
             ::csikit::prost_reflect::DescriptorPool::decode(FILE_DESCRIPTOR_SET).expect(\"embedded descriptor set decodes\")\n    \
             })\n}\n",
        ));
    }
    Ok(PackageParts { code, modules, tail })
}

/// One package as a single file of items for `include!` (the build-script layout): the
/// prost and tonic output, each submodule inline, every item carrying its lint allowances.
///
/// # Errors
///
/// When the descriptor set does not decode or prost-build rejects it.
pub fn package_file(p: &Package<'_>, parts: &Parts, command: &str) -> Result<String, crate::Error> {
    let pieces = package_parts(p, parts, true)?;
    let mut out = format!(
        "// @generated by {command} from {}. Do not edit.\n// `{}`: include it with `csikit::include_spec!({:?})`.\n\n",
        p.source, p.model.package, p.model.package
    );
    // One error, naming every feature `csikit` lacks for the parts chosen, instead of one per
    // item that needs them: the checked parts' macros drop those items.
    let checked: Vec<&str> = [parts.client, parts.server, parts.reflect]
        .iter()
        .filter_map(|g| g.checked_feature())
        .collect();
    if !checked.is_empty() {
        out.push_str(&format!(
            "::csikit::__require_features!({:?}: {});\n\n",
            p.model.package,
            checked.join(" ")
        ));
    }
    out.push_str(&pieces.code);
    for m in &pieces.modules {
        let module = format!(
            "{}#[allow({})]\n{}mod {} {{\n{}}}\n",
            m.doc,
            crate::rust::GENERATED_ALLOWS,
            if m.public { "pub " } else { "" },
            m.name,
            m.content
        );
        out.push('\n');
        out.push_str(&m.gate.wrap(&module));
    }
    out.push('\n');
    out.push_str(&pieces.tail);
    Ok(out)
}
