//! One package's module, assembled from the per-package generators' output (Rust types, facts,
//! descriptors, redacted `Debug`, server, errors) in the two layouts: module files of the
//! `csikit` crate (`layout`) and one file for a build script's `OUT_DIR` ([`package_file`]).
//! It sits above the generators: they read [`crate::input`], never this module.

pub use crate::input::{Gate, Package, Parts};

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
) -> Result<PackageParts, crate::error::Error> {
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
            content: crate::server::generate_server(p, parts),
        });
    }
    if parts.errors
        && let Some(errors) = crate::errors::generate_errors(model, &p.source, p.translation, {
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
            doc: "/// The error catalogs as types: per RPC, the spec's rows it may return and csikit's own for what\n/// the tables do not name.\n"
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
pub fn package_file(
    p: &Package<'_>,
    parts: &Parts,
    command: &str,
) -> Result<String, crate::error::Error> {
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
