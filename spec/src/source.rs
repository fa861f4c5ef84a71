//! Spec sources: a spec folder (markdown and its `.proto`), a `.proto` alone, or a
//! `FileDescriptorSet` (`protoc --descriptor_set_out`, `buf build -o`), each read into one
//! [`Model`](crate::Model) by [`load_source`]. What a source cannot state is listed in
//! [`SourceInfo::not_available`] and said once as a warning; it is never guessed. It is taken from
//! another release only as `LoadOptions::carry` says (`crate::carry`: by default, for a
//! proto-only release folder of a corpus), each carried fact saying where from, and one more
//! warning saying what was carried.

use std::collections::BTreeSet;
use std::path::Path;

use prost::Message as _;
use prost_reflect::DescriptorPool;

use crate::carry::{self, Carry};
use crate::compile::{self, CSI_GO_IMPORT, Compiled, ImportMap};
use crate::diagnostic::{Diagnostic, Diagnostics, Severity, SourceFile};
use crate::markdown::Doc;
use crate::model::{Model, Presence, SizeLimit};
pub use crate::provenance::{Carried, NotAvailable, SourceInfo, SourceKind};
use crate::{LoadOptions, Loaded, SpecDir, check, corpus, lower};

/// The start of the one warning a source that cannot state everything gives.
pub const NOTICE: &str = "not available from this source";

/// Whether `d` is the warning [`load_source`] gives about what its source cannot state.
pub fn is_source_notice(d: &Diagnostic) -> bool {
    d.severity == Severity::Warning && d.message.contains(NOTICE)
}

/// What a command that loads a source shows of its diagnostics: the errors, the one notice of
/// what the source cannot state and the one of what was carried (other warnings are the spec's
/// own, shown by `cargo xtask model`).
pub fn errors_and_source_notice(diagnostics: &crate::Diagnostics) -> crate::Diagnostics {
    crate::Diagnostics(
        diagnostics
            .0
            .iter()
            .filter(|d| d.is_error() || is_source_notice(d) || carry::is_carry_notice(d))
            .cloned()
            .collect(),
    )
}

/// Reads any spec source into a checked model:
/// - a folder holding `spec.md` or `README.md` (and its `.proto`): as [`crate::load_dir`];
/// - a markdown file: its proto is built from its ```` ```protobuf ```` blocks;
/// - a folder holding one `.proto` and no markdown, or a `.proto` file: read with its imports
///   (from [`LoadOptions::imports`], the folder it is in, and the well-known types; the CSI
///   import of csi-addons resolves to the corpus's newest release unless mapped);
/// - a `FileDescriptorSet` file, recognised by its content (`protoc --include_source_info
///   --descriptor_set_out`, `buf build -o`; with or without source info or imports).
///
/// # Errors
///
/// None: every problem is a diagnostic in [`Loaded::diagnostics`], and the model is absent when
/// one is an error (a proto that does not compile, a file that is neither proto text nor a
/// descriptor set, a folder with several protos and no markdown...).
pub fn load_source(path: &Path, options: &LoadOptions) -> Loaded {
    if path.is_dir() {
        let has_markdown = ["spec.md", "README.md"].iter().any(|f| path.join(f).is_file());
        if has_markdown {
            return crate::load_dir(path, options);
        }
        let protos = corpus::protos_in(path);
        return match protos.as_slice() {
            [proto] => load_proto_file(proto, &corpus_carry(path, options)),
            [] => failed(Diagnostic::global(
                Severity::Error,
                format!("no spec.md, README.md or .proto in '{}'", path.display()),
            )
            .with_help("a spec source is a folder with spec.md (or README.md) and its .proto, a .proto file, or a FileDescriptorSet file")),
            many => failed(
                Diagnostic::global(
                    Severity::Error,
                    format!(
                        "'{}' holds {} .proto files and no spec.md or README.md: {}",
                        path.display(),
                        many.len(),
                        many.iter()
                            .filter_map(|p| p.file_name())
                            .map(|n| format!("'{}'", n.to_string_lossy()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .with_help("pass the .proto file to read (--proto FILE), or keep one .proto in the folder"),
            ),
        };
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return failed(Diagnostic::global(
                Severity::Error,
                format!("cannot read '{}': {e}", path.display()),
            ));
        }
    };
    if path.extension().is_some_and(|x| x == "md") {
        return crate::load_spec(&SpecDir::markdown_file(path), options);
    }
    if let Some(set) = as_descriptor_set(&bytes) {
        return load_descriptor_set_decoded(path, &bytes, &set, options);
    }
    match String::from_utf8(bytes) {
        Ok(text) if path.extension().is_none_or(|x| x != "pb" && x != "binpb") => {
            load_proto_text(path, text, options)
        }
        _ => failed(
            Diagnostic::at(
                Severity::Error,
                &SourceFile::new(path.display().to_string(), String::new()),
                (0, 0),
                format!("'{}' is neither a .proto file nor a FileDescriptorSet", path.display()),
                "this file",
            )
            .with_help("make one with `protoc --include_source_info --include_imports --descriptor_set_out=FILE` or `buf build -o FILE`"),
        ),
    }
}

/// `options` for the proto-only folder `dir`: [`Carry::Corpus`] becomes a carry from the release
/// the corpus names when `dir` is a proto-only release folder of one, else nothing.
fn corpus_carry(dir: &Path, options: &LoadOptions) -> LoadOptions {
    let carry = match &options.carry {
        Carry::Corpus => {
            corpus::carry_source_of(dir).map_or(Carry::None, |(_, from)| Carry::From(from))
        }
        other => other.clone(),
    };
    LoadOptions { carry, ..options.clone() }
}

/// Reads a `.proto` file alone.
pub fn load_proto_file(path: &Path, options: &LoadOptions) -> Loaded {
    match std::fs::read(path).map(String::from_utf8) {
        Ok(Ok(text)) => load_proto_text(path, text, options),
        Ok(Err(e)) => failed(Diagnostic::global(
            Severity::Error,
            format!(
                "'{}' is not valid UTF-8 (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )),
        Err(e) => failed(Diagnostic::global(
            Severity::Error,
            format!("cannot read '{}': {e}", path.display()),
        )),
    }
}

/// A loading that failed with one diagnostic.
fn failed(d: Diagnostic) -> Loaded {
    Loaded { model: None, compiled: None, extracted: None, diagnostics: Diagnostics(vec![d]) }
}

/// A translation needs the markdown: a proto source has none to read it beside.
fn refuse_translation(path: &Path, options: &LoadOptions) -> Option<Loaded> {
    options.translation.as_ref().map(|(lang, _)| {
        failed(
            Diagnostic::global(
                Severity::Error,
                format!(
                    "a '{lang}' translation needs the spec's markdown; '{}' is not a spec folder",
                    path.display()
                ),
            )
            .with_help("translations are read against a folder holding spec.md"),
        )
    })
}

/// The import map of `options`, with the CSI proto that csi-addons import added from the corpus
/// when `text` imports it and nothing maps it.
fn imports_for(text: &str, options: &LoadOptions, diags: &mut Diagnostics) -> Option<ImportMap> {
    let mut imports = options.imports.clone();
    if imports.get(CSI_GO_IMPORT).is_none() && text.contains(CSI_GO_IMPORT) {
        let path = crate::default_csi_import();
        match std::fs::read_to_string(&path) {
            Ok(t) => {
                imports.insert(CSI_GO_IMPORT, SourceFile::new(path.display().to_string(), t));
            }
            Err(_) => {
                diags.push(
                    Diagnostic::global(
                        Severity::Error,
                        format!("'{CSI_GO_IMPORT}' is imported but no CSI proto is mapped"),
                    )
                    .with_help(format!(
                        "pass --import {CSI_GO_IMPORT}=PATH/csi.proto or set {}",
                        crate::CORPUS_ENV
                    )),
                );
                return None;
            }
        }
    }
    Some(imports)
}

fn load_proto_text(path: &Path, text: String, options: &LoadOptions) -> Loaded {
    if let Some(refused) = refuse_translation(path, options) {
        return refused;
    }
    let mut diags = Diagnostics::default();
    let src = SourceFile::new(path.display().to_string(), text);
    let Some(imports) = imports_for(src.text(), options, &mut diags) else {
        return Loaded { model: None, compiled: None, extracted: None, diagnostics: diags };
    };
    let name = path
        .file_name()
        .map_or_else(|| "main.proto".to_owned(), |n| n.to_string_lossy().into_owned());
    let include = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let compiled = match compile::compile_proto_in(&name, &src, &imports, &[include.to_path_buf()])
    {
        Ok(c) => c,
        Err(errs) => {
            diags.extend(errs);
            return Loaded {
                model: None,
                compiled: None,
                extracted: None,
                diagnostics: diags.sorted(),
            };
        }
    };
    lower_without_markdown(path, compiled, src, SourceKind::Proto, &[], options, diags)
}

/// Lowers compiled descriptors with no markdown: the prose's parts are marked not available,
/// then carried as `options.carry` says.
fn lower_without_markdown(
    path: &Path,
    compiled: Compiled,
    src: SourceFile,
    kind: SourceKind,
    also_missing: &[NotAvailable],
    options: &LoadOptions,
    mut diags: Diagnostics,
) -> Loaded {
    let mut raw = Vec::new();
    let origin = lower::ProtoOrigin { proto: &src, proto_file: 0, markdown: None };
    let doc = Doc::default();
    let mut model = lower::lower_model(
        lower::LowerInput {
            compiled: &compiled,
            origin,
            doc: &doc,
            doc_file: 0,
            translation: None,
            files: vec![src.clone()],
        },
        &mut raw,
    );
    let mut missing: BTreeSet<NotAvailable> = NotAvailable::PROSE.into_iter().collect();
    missing.extend(also_missing.iter().copied());
    if missing.contains(&NotAvailable::Comments) {
        forget_comment_facts(&mut model);
    }
    model.source = SourceInfo::lacking(kind, missing);
    raw.extend(check::check_model(&model));
    let carried = carry_into(&mut model, path, options, &mut raw);
    diags.push(notice(path, &model.source));
    diags.extend(raw);
    if !carried {
        return Loaded {
            model: None,
            compiled: None,
            extracted: None,
            diagnostics: diags.sorted(),
        };
    }
    Loaded {
        model: Some(model),
        compiled: Some(compiled),
        extracted: None,
        diagnostics: diags.sorted(),
    }
}

/// Carries prose facts into `model` (read from `path`, which has no markdown) as `options.carry`
/// says: from the folder named, or nothing. Its warnings and the one notice of what was
/// carried go to `diags`; false when the carry was asked for and could not be made (an error
/// is in `diags` then).
fn carry_into(
    model: &mut Model,
    path: &Path,
    options: &LoadOptions,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let Carry::From(dir) = &options.carry else { return true };
    let from = crate::load_dir(
        dir,
        &LoadOptions {
            imports: options.imports.clone(),
            carry: Carry::None,
            ..LoadOptions::default()
        },
    );
    let name = release_name(dir);
    let Some(old) = from.model.filter(|_| !from.diagnostics.has_errors()) else {
        diags.push(
            Diagnostic::global(
                Severity::Error,
                format!("cannot carry facts from '{}': it does not load", dir.display()),
            )
            .with_help(
                "a carry source is a spec folder holding spec.md (or README.md) and its .proto",
            ),
        );
        diags.extend(from.diagnostics.0.into_iter().filter(Diagnostic::is_error));
        return false;
    };
    match carry::carry_facts(model, &old, &name) {
        Ok(report) => {
            diags.push(report.notice(&path.display().to_string()));
            diags.extend(report.warnings);
            true
        }
        Err(d) => {
            diags.push(d);
            false
        }
    }
}

/// A spec folder's name, as carried facts name their release (`v1.12.0`): the folder's own
/// name, or the name the path resolves to (`.`).
fn release_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::canonicalize(dir)
                .ok()
                .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        })
        .unwrap_or_else(|| dir.display().to_string())
}

/// The one warning that says what the source cannot state (and, when facts were carried, that
/// the carry notice says what stands in for them).
fn notice(path: &Path, source: &SourceInfo) -> Diagnostic {
    let what: Vec<&str> = source.not_available.iter().map(|n| n.as_str()).collect();
    let kind = match source.kind {
        SourceKind::Spec => "a spec folder",
        SourceKind::Proto => "a .proto without its spec markdown",
        SourceKind::DescriptorSet => "a descriptor set",
    };
    let help = match &source.carried {
        Some(c) => format!(
            "the model marks these in source.not_available; {}'s stand in for them as the next warning says, each saying carried_from, and nothing is guessed",
            c.from
        ),
        None => "the model marks these in source.not_available; they are left empty, never guessed or taken from another release".to_owned(),
    };
    Diagnostic::global(
        Severity::Warning,
        format!("'{}' is {kind}: {} {NOTICE}", path.display(), what.join(", ")),
    )
    .with_help(help)
}

/// Without comments, nothing read from them is known: presence is unknown, no size limit, value
/// rule or oneof requirement is set.
fn forget_comment_facts(model: &mut Model) {
    for m in &mut model.messages {
        for f in &mut m.fields {
            f.presence = Presence::Unknown;
            f.size_limit = SizeLimit::None;
            f.non_negative = false;
            f.no_control_chars = false;
            f.plugin_generated = false;
        }
        for o in &mut m.oneofs {
            o.required = false;
        }
    }
}

/// `bytes` decoded as a `FileDescriptorSet`, if they are one: they decode, and name at least one
/// file, each `*.proto`.
fn as_descriptor_set(bytes: &[u8]) -> Option<prost_types::FileDescriptorSet> {
    let set = prost_types::FileDescriptorSet::decode(bytes).ok()?;
    let plausible = !set.file.is_empty()
        && set.file.iter().all(|f| f.name.as_deref().is_some_and(|n| n.ends_with(".proto")));
    plausible.then_some(set)
}

/// Reads a `FileDescriptorSet` file.
pub fn load_descriptor_set(path: &Path, options: &LoadOptions) -> Loaded {
    match std::fs::read(path) {
        Ok(bytes) => match as_descriptor_set(&bytes) {
            Some(set) => load_descriptor_set_decoded(path, &bytes, &set, options),
            None => failed(
                Diagnostic::at(
                    Severity::Error,
                    &SourceFile::new(path.display().to_string(), String::new()),
                    (0, 0),
                    format!("'{}' is not a FileDescriptorSet", path.display()),
                    "this file",
                )
                .with_help("make one with `protoc --include_source_info --include_imports --descriptor_set_out=FILE` or `buf build -o FILE`"),
            ),
        },
        Err(e) => failed(Diagnostic::global(
            Severity::Error,
            format!("cannot read '{}': {e}", path.display()),
        )),
    }
}

/// Reads an encoded `FileDescriptorSet` held in memory (a generated crate's embedded
/// descriptors, say); `path` names it in diagnostics.
pub fn load_descriptor_set_bytes(path: &Path, bytes: &[u8], options: &LoadOptions) -> Loaded {
    match as_descriptor_set(bytes) {
        Some(set) => load_descriptor_set_decoded(path, bytes, &set, options),
        None => failed(Diagnostic::global(
            Severity::Error,
            format!("'{}' is not a FileDescriptorSet", path.display()),
        )),
    }
}

fn load_descriptor_set_decoded(
    path: &Path,
    bytes: &[u8],
    set: &prost_types::FileDescriptorSet,
    options: &LoadOptions,
) -> Loaded {
    if let Some(refused) = refuse_translation(path, options) {
        return refused;
    }
    let mut diags = Diagnostics::default();
    let at_file = |message: String| {
        Diagnostic::at(
            Severity::Error,
            &SourceFile::new(path.display().to_string(), String::new()),
            (0, 0),
            message,
            "in this descriptor set",
        )
    };
    // The file the set is about: the one no other file of the set imports (google's aside).
    let imported: BTreeSet<&str> =
        set.file.iter().flat_map(|f| f.dependency.iter().map(String::as_str)).collect();
    let roots: Vec<&str> = set
        .file
        .iter()
        .filter_map(|f| f.name.as_deref())
        .filter(|n| !imported.contains(n) && !n.starts_with("google/protobuf/"))
        .collect();
    let main = match roots.as_slice() {
        [one] => (*one).to_owned(),
        _ => {
            return failed(at_file(format!(
                "'{}' describes {} files that no other file imports ({}); expected one",
                path.display(),
                roots.len(),
                roots.join(", ")
            )));
        }
    };
    // Imports the set leaves out (built without --include_imports) come from the import map.
    let present: BTreeSet<&str> = set.file.iter().filter_map(|f| f.name.as_deref()).collect();
    let missing: Vec<&str> = imported.iter().copied().filter(|n| !present.contains(n)).collect();
    let mut pool = DescriptorPool::new();
    if !missing.is_empty() {
        let text: String = missing.iter().map(|m| format!("import \"{m}\";\n")).collect();
        let Some(imports) = imports_for(&text, options, &mut diags) else {
            return Loaded { model: None, compiled: None, extracted: None, diagnostics: diags };
        };
        match compile::compile_imports(&missing, &imports) {
            Ok(p) => pool = p,
            Err(errs) => {
                diags.extend(errs);
                return Loaded { model: None, compiled: None, extracted: None, diagnostics: diags };
            }
        }
    }
    if let Err(e) = pool.decode_file_descriptor_set(bytes) {
        return failed(at_file(format!(
            "'{}' does not describe valid protos: {e}",
            path.display()
        )));
    }
    let has_source_info = set
        .file
        .iter()
        .find(|f| f.name.as_deref() == Some(main.as_str()))
        .and_then(|f| f.source_code_info.as_ref())
        .is_some_and(|i| !i.location.is_empty());
    // The set as given, with the imports it left out.
    let encoded = if missing.is_empty() { bytes.to_vec() } else { pool.encode_to_vec() };
    let compiled = Compiled { pool, encoded, name: main };
    let src = SourceFile::new(path.display().to_string(), String::new());
    let also: &[NotAvailable] = if has_source_info { &[] } else { &NotAvailable::COMMENTS };
    lower_without_markdown(path, compiled, src, SourceKind::DescriptorSet, also, options, diags)
}
