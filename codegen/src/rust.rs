//! Rust types, clients and servers of one package through prost-build and tonic-prost-build,
//! from the descriptors the spec crate compiled (no second protoc or protox run).

use prost::Message as _;
use prost_build::{Config, Module};
use prost_types::FileDescriptorSet;

use crate::debug;
use crate::docs::{ALPHA_NOTE, doc_attribute, field_marker};
use crate::error::Error;
use crate::input::{Gate, Package, Parts};

/// Lints the prost and tonic output is not held to: it is reviewed upstream, and its doc
/// comments are spec prose written for protobuf.
pub const GENERATED_ALLOWS: &str = "missing_docs, clippy::all, clippy::pedantic, \
     rustdoc::invalid_html_tags, rustdoc::bare_urls, rustdoc::broken_intra_doc_links";

/// The prost and tonic output for `package`, doc comments already re-tagged. prost, its
/// well-known types, tonic and its codec are named through `::csikit`, so the code compiles in
/// any crate that depends on `csikit`. With `item_allows`, every top-level item carries
/// [`GENERATED_ALLOWS`] (for a file `include!`d where no module-wide `#![allow]` can go).
pub fn generate_rust(
    package: &Package<'_>,
    parts: &Parts,
    item_allows: bool,
) -> Result<String, Error> {
    let model = package.model;
    let pkg = &model.package;
    let set = FileDescriptorSet::decode(package.descriptor_set)
        .map_err(|source| Error::Descriptor { package: pkg.clone(), source })?;
    if !set.file.iter().any(|f| f.name() == package.proto_file) {
        return Err(Error::MissingFile {
            package: pkg.clone(),
            file: package.proto_file.to_owned(),
        });
    }
    // prost-build needs every file in its message graph (to decide `Copy` derives); only the
    // package's own module is kept, imports are served by extern paths. Services are dropped
    // where no code is wanted for them (imported files; the package's own when neither clients
    // nor servers are emitted): prost-build 0.14 panics finalizing a package with services whose
    // module came out empty.
    let services_wanted = parts.client.emitted() || parts.server.emitted();
    let requests: Vec<(Module, prost_types::FileDescriptorProto)> = set
        .file
        .into_iter()
        .map(|mut f| {
            if f.package() != pkg.as_str() || !services_wanted {
                f.service.clear();
            }
            (Module::from_protobuf_package_name(f.package()), f)
        })
        .collect();

    let mut config = Config::new();
    config.prost_path("::csikit::prost");
    config.prost_types_path("::csikit::prost_types");
    config.enable_type_names();
    if item_allows {
        config.type_attribute(".", format!("#[allow({GENERATED_ALLOWS})]"));
    }
    config.skip_debug(debug::skip_debug_paths(model));
    for (proto, rust) in &package.extern_paths {
        config.extern_path(proto, rust);
    }
    for m in &model.messages {
        if m.alpha {
            config.message_attribute(format!(".{}", m.full_name), doc_attribute(ALPHA_NOTE));
        }
        for f in &m.fields {
            config.field_attribute(
                format!(".{}.{}", m.full_name, f.name),
                doc_attribute(&field_marker(f)),
            );
        }
    }
    let validated = |ty: &str| crate::validation::is_validated(ty, model, &package.extern_paths);
    let mut rules = crate::validation::validation_attributes(model, &validated);
    if !parts.validation {
        rules = crate::validation::ValidationAttributes::default();
    }
    for (path, attr) in &rules.messages {
        config.message_attribute(path, attr);
    }
    for (path, attr) in &rules.oneofs {
        config.enum_attribute(path, attr);
    }
    for (path, attr) in &rules.fields {
        config.field_attribute(path, attr);
    }
    for e in &model.enums {
        if e.alpha {
            config.enum_attribute(format!(".{}", e.full_name), doc_attribute(ALPHA_NOTE));
        }
        // prost-build reads an enum value's attributes as field attributes of the enum.
        for v in e.values.iter().filter(|v| v.alpha) {
            config.field_attribute(
                format!(".{}.{}", e.full_name, v.name),
                doc_attribute("**Alpha value:** may change or be removed in a later CSI release."),
            );
        }
    }
    let mut tonic = tonic_prost_build::configure()
        .build_transport(false)
        .build_client(parts.client.emitted())
        .build_server(parts.server.emitted())
        .codec_path("::csikit::tonic_prost::ProstCodec");
    for (gate, cfg) in [(parts.client, true), (parts.server, false)] {
        let mut attr = gate.cfg().trim_end().to_owned();
        if item_allows {
            attr = format!("{attr}#[allow({GENERATED_ALLOWS})]");
        }
        if !attr.is_empty() {
            tonic = if cfg {
                tonic.client_mod_attribute(".", attr)
            } else {
                tonic.server_mod_attribute(".", attr)
            };
        }
    }
    for s in &model.services {
        let alpha: Vec<&str> =
            s.methods.iter().filter(|m| m.alpha).map(|m| m.name.as_str()).collect();
        let note = if s.alpha {
            Some(
                "**Alpha:** this whole service may change or be removed in a later CSI release."
                    .to_owned(),
            )
        } else if !alpha.is_empty() {
            Some(format!(
                "**Alpha RPCs:** {} may change or be removed in a later CSI release.",
                alpha.join(", ")
            ))
        } else {
            None
        };
        if let Some(note) = note {
            let path = format!("{}.{}", pkg, s.name);
            tonic = tonic
                .client_attribute(&path, doc_attribute(&note))
                .trait_attribute(&path, doc_attribute(&note));
        }
    }
    config.service_generator(tonic.service_generator());

    let module = Module::from_protobuf_package_name(pkg);
    let mut out = config
        .generate(requests)
        .map_err(|source| Error::ProstBuild { package: pkg.clone(), source })?;
    let code = out.remove(&module).unwrap_or_default();
    let code = code.strip_prefix("// This file is @generated by prost-build.\n").unwrap_or(&code);
    // tonic-build names `tonic::` from inside each client and server module; the import makes
    // that `::csikit::tonic` there.
    let code =
        code.replace("use tonic::codegen::*;", "use ::csikit::tonic;\n    use tonic::codegen::*;");
    let code = wrap_tonic_modules(&code, "/// Generated client implementations.", parts.client);
    let code = wrap_tonic_modules(&code, "/// Generated server implementations.", parts.server);
    Ok(crate::docs::retag_code_blocks(&code))
}

/// Puts each tonic module of `code` that starts at the line `marker` (tonic's own doc line for
/// its client or server modules) through `gate`'s [`Gate::wrap`]. prost-build prints the code
/// through prettyplease, so a top-level module ends at the first `}` line after it.
fn wrap_tonic_modules(code: &str, marker: &str, gate: Gate) -> String {
    if gate.checked_feature().is_none() {
        return code.to_owned();
    }
    let mut out = String::with_capacity(code.len());
    let mut module: Option<String> = None;
    for line in code.split_inclusive('\n') {
        match &mut module {
            None if line.trim_end() == marker => module = Some(line.to_owned()),
            None => out.push_str(line),
            Some(m) => {
                m.push_str(line);
                if line.trim_end() == "}" {
                    out.push_str(&gate.wrap(m));
                    module = None;
                }
            }
        }
    }
    if let Some(m) = module {
        out.push_str(&m);
    }
    out
}
