//! Reads a CSI spec (markdown with ```protobuf blocks, plus its `.proto`) into one checked
//! [`Model`]: services, RPCs, messages and fields with the facts the spec states in prose
//! and options made explicit.
//!
//! The phases are separate functions: [`extract::extract_proto`] and
//! [`markdown::parse_doc`] read text, [`compile::compile_proto`] builds descriptors,
//! [`lower::lower_model`] builds the model and [`check::check_model`] reports
//! inconsistencies. [`load_dir`] runs them all over a spec directory.
//!
//! Modules: `source` (any spec source: a spec folder, a `.proto` alone, a descriptor set) and
//! `corpus` (the corpus listing); `extract`, `markdown`, `comment` and `compile` read;
//! `lower`, `obligation` and `model` build the Model, `provenance` says where its facts come
//! from, `carry` carries an older release's prose facts into a model read without markdown,
//! `facts` turns it into the runtime's facts tables and `prose` gives a section's text as plain
//! blocks; `check` and `diagnostic` report; `diff` compares two Models; `upgrade` sets the
//! findings that change the generated API beside what replaces each removed element (a data
//! table per release, `data/upgrading/`); `normative` lists the sentences that hold an RFC 2119
//! keyword (for audits of what a release obliges).

pub mod carry;
pub mod check;
pub mod comment;
pub mod compile;
pub mod corpus;
pub mod diagnostic;
#[cfg(feature = "json")]
pub mod diff;
pub mod extract;
pub mod facts;
pub mod lower;
pub mod markdown;
pub mod model;
pub mod normative;
pub mod obligation;
pub mod prose;
pub mod provenance;
pub mod source;
pub mod upgrade;

use std::path::{Path, PathBuf};

pub use carry::Carry;
pub use compile::{CSI_GO_IMPORT, Compiled, ImportMap};
pub use diagnostic::{Diagnostic, Diagnostics, Severity, SourceFile};
pub use extract::{Extracted, Rule};
pub use model::*;
pub use provenance::{Carried, NotAvailable, SourceInfo, SourceKind};
pub use source::{load_descriptor_set, load_proto_file, load_source};

/// The environment variable that points at the corpus of real inputs.
pub const CORPUS_ENV: &str = "CSIKIT_CORPUS";

/// Where the corpus of real inputs is, decided at run time: `$CSIKIT_CORPUS`, else the first
/// `shared/corpus` found beside the current directory or one of its ancestors (a checkout's
/// `../shared/corpus`, whichever crate folder cargo runs a test or bench in), else
/// `../shared/corpus` (which then does not exist, and callers say so).
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CORPUS_ENV) {
        return PathBuf::from(dir);
    }
    let fallback = Path::new("..").join("shared").join("corpus");
    let Ok(cwd) = std::env::current_dir() else { return fallback };
    cwd.ancestors()
        .map(|dir| dir.join("shared").join("corpus"))
        .find(|candidate| candidate.is_dir())
        .unwrap_or(fallback)
}

/// The environment variable that turns a missing test input into a failure (`.ci/run` sets it).
pub const REQUIRE_CORPUS_ENV: &str = "CSIKIT_REQUIRE_CORPUS";

/// For tests and benchmarks: reports an input that is not there. With `CSIKIT_REQUIRE_CORPUS` set
/// (to anything but `0`) this panics, so CI can never pass without reading the real inputs;
/// otherwise it prints a loud SKIPPED line and returns, and the caller skips.
///
/// # Panics
///
/// When `CSIKIT_REQUIRE_CORPUS` is set.
pub fn skip_missing(what: &str) {
    let required = std::env::var_os(REQUIRE_CORPUS_ENV).is_some_and(|v| v != "0");
    assert!(!required, "{what}, and {REQUIRE_CORPUS_ENV} is set");
    eprintln!("\n!!!!!!!! SKIPPED: {what} !!!!!!!!\n");
}

/// For tests and benchmarks: the corpus when it holds v1.12.0, else `None` after
/// [`skip_missing`].
pub fn corpus_or_skip() -> Option<PathBuf> {
    let dir = corpus_dir();
    if dir.join("csi-spec/v1.12.0/spec.md").is_file() {
        return Some(dir);
    }
    skip_missing(&format!(
        "the CSI corpus is missing at '{}' (set {CORPUS_ENV} to its path)",
        dir.display()
    ));
    None
}

/// The CSI proto that csi-addons imports resolve to by default: the newest release in the corpus
/// that has a `csi.proto` ([`corpus::Corpus::latest_release`]).
pub fn default_csi_import() -> PathBuf {
    let corpus = corpus_dir();
    corpus::Corpus::read(&corpus)
        .ok()
        .and_then(|c| c.latest_release().map(corpus::Release::proto))
        .unwrap_or_else(|| corpus.join("csi-spec").join("csi.proto"))
}

/// The files of a spec directory.
#[derive(Debug, Clone)]
pub struct SpecDir {
    /// `spec.md` (or `README.md` for csi-addons).
    pub markdown: PathBuf,
    /// The `.proto` beside it, if any.
    pub proto: Option<PathBuf>,
    /// The directory's name, e.g. `v1.12.0` or `replication`.
    pub name: String,
}

impl SpecDir {
    /// Finds the markdown and proto in `dir`.
    ///
    /// # Errors
    ///
    /// When the directory has no `spec.md` or `README.md`, or more than one `.proto`.
    pub fn find(dir: &Path) -> Result<SpecDir, Diagnostic> {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let markdown =
            ["spec.md", "README.md"].iter().map(|f| dir.join(f)).find(|p| p.is_file()).ok_or_else(
                || {
                    Diagnostic::global(
                        Severity::Error,
                        format!("no spec.md or README.md in '{}'", dir.display()),
                    )
                    .with_help(
                        "a spec folder holds spec.md (a CSI release) or README.md (csi-addons style) and its .proto",
                    )
                },
            )?;
        let mut protos: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| {
                Diagnostic::global(Severity::Error, format!("cannot read '{}': {e}", dir.display()))
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "proto"))
            .collect();
        protos.sort();
        if protos.len() > 1 {
            return Err(Diagnostic::global(
                Severity::Error,
                format!("'{}' holds {} .proto files; expected one", dir.display(), protos.len()),
            ));
        }
        Ok(SpecDir { markdown, proto: protos.pop(), name })
    }
}

impl SpecDir {
    /// A spec given as its markdown file alone: the proto is built from its ```protobuf
    /// blocks. The name is the folder's for `spec.md` and `README.md`, else the file's stem.
    pub fn markdown_file(path: &Path) -> SpecDir {
        let stem = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = if stem == "spec" || stem == "README" {
            path.parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(stem)
        } else {
            stem
        };
        SpecDir { markdown: path.to_path_buf(), proto: None, name }
    }

    /// The import name of the proto built from the markdown when no `.proto` is beside it:
    /// `csi.proto` for a CSI `spec.md`, else `<name>.proto` (the csi-addons Makefile rule).
    pub fn proto_name(&self) -> String {
        if self.markdown.file_name().is_some_and(|n| n == "spec.md") {
            "csi.proto".to_owned()
        } else {
            format!("{}.proto", self.name)
        }
    }

    /// The files this spec is read from.
    pub fn inputs(&self) -> Vec<&Path> {
        let mut out = vec![self.markdown.as_path()];
        out.extend(self.proto.as_deref());
        out
    }
}

/// How to load a spec directory.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The extraction rule; by default chosen from the directory name (`v0.1.0`, `v0.2.0`).
    pub rule: Option<Rule>,
    /// A translation of the markdown: language code and file.
    pub translation: Option<(String, PathBuf)>,
    /// Extra imports; the CSI import used by csi-addons is added from the corpus when absent.
    pub imports: ImportMap,
    /// Where a source without spec markdown takes its prose facts from: by default a
    /// proto-only release folder of a corpus carries from the newest older release with
    /// markdown ([`carry`]); [`Carry::None`] reads the source alone.
    pub carry: Carry,
}

/// The outcome of loading: the model when the inputs could be used, and every problem found.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The model, absent when an error stopped lowering.
    pub model: Option<Model>,
    /// The compiled descriptors.
    pub compiled: Option<Compiled>,
    /// The proto built from the markdown.
    pub extracted: Option<Extracted>,
    /// Every problem, sorted by position.
    pub diagnostics: Diagnostics,
}

fn read_source(path: &Path, diags: &mut Diagnostics) -> Option<SourceFile> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Some(SourceFile::new(path.display().to_string(), text)),
            Err(e) => {
                diags.push(Diagnostic::global(
                    Severity::Error,
                    format!(
                        "'{}' is not valid UTF-8 (byte {})",
                        path.display(),
                        e.utf8_error().valid_up_to()
                    ),
                ));
                None
            }
        },
        Err(e) => {
            diags.push(Diagnostic::global(
                Severity::Error,
                format!("cannot read '{}': {e}", path.display()),
            ));
            None
        }
    }
}

/// Reads, lowers and checks a spec directory.
pub fn load_dir(dir: &Path, options: &LoadOptions) -> Loaded {
    match SpecDir::find(dir) {
        Ok(spec) => load_spec(&spec, options),
        Err(d) => Loaded {
            model: None,
            compiled: None,
            extracted: None,
            diagnostics: Diagnostics(vec![d]),
        },
    }
}

/// Reads, lowers and checks the spec whose files `spec` names.
pub fn load_spec(spec: &SpecDir, options: &LoadOptions) -> Loaded {
    let mut diags = Diagnostics::default();
    let failed = |diags: Diagnostics| Loaded {
        model: None,
        compiled: None,
        extracted: None,
        diagnostics: diags.sorted(),
    };
    if let Carry::From(from) = &options.carry {
        diags.push(
            Diagnostic::global(
                Severity::Error,
                format!(
                    "'{}' has its own spec markdown; nothing is carried into it from '{}'",
                    spec.markdown.display(),
                    from.display()
                ),
            )
            .with_help("carrying is for a release read from its .proto alone: pass the .proto (--proto FILE) or a folder holding it alone"),
        );
        return failed(diags);
    }
    let Some(md) = read_source(&spec.markdown, &mut diags) else { return failed(diags) };
    let rule = options.rule.unwrap_or_else(|| Rule::for_release(&spec.name));
    let mut raw = Vec::new();
    let extracted = extract::extract_proto(&md, rule, &mut raw);
    let doc = markdown::parse_doc(&md, &mut raw);
    let mut files = vec![md.clone()];

    // The proto beside the markdown is what the release shipped; when it is exactly the
    // extraction, positions are reported in the markdown, the text people edit.
    let proto_name = spec
        .proto
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| spec.proto_name());
    let (proto_src, same_as_extracted) = match &spec.proto {
        Some(path) => {
            let Some(src) = read_source(path, &mut diags) else { return failed(diags) };
            let same = src.text() == extracted.proto;
            if !same {
                let first_diff = src
                    .text()
                    .lines()
                    .zip(extracted.proto.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| {
                        src.text().lines().count().min(extracted.proto.lines().count())
                    });
                let off = src.line_offset(first_diff as u32 + 1);
                raw.push(
                    Diagnostic::at(
                        Severity::Advice,
                        &src,
                        (off, 0),
                        format!("'{}' differs from the proto built from '{}'", proto_name, md.name()),
                        "first differing line",
                    )
                    .with_help("the model is built from the .proto file; regenerate it from the markdown if the markdown is the source"),
                );
            }
            (src, same)
        }
        None => (
            SourceFile::new(format!("{} (extracted proto)", md.name()), extracted.proto.clone()),
            true,
        ),
    };
    files.push(proto_src.clone());
    if raw.iter().any(Diagnostic::is_error) {
        diags.extend(raw);
        return Loaded {
            model: None,
            compiled: None,
            extracted: Some(extracted),
            diagnostics: diags.sorted(),
        };
    }

    let mut imports = options.imports.clone();
    if imports.get(CSI_GO_IMPORT).is_none() && proto_src.text().contains(CSI_GO_IMPORT) {
        let path = default_csi_import();
        let Some(src) = read_source(&path, &mut diags) else {
            diags.push(
                Diagnostic::global(
                    Severity::Error,
                    format!("'{CSI_GO_IMPORT}' is imported but no CSI proto is mapped"),
                )
                .with_help(format!(
                    "pass --import {CSI_GO_IMPORT}=PATH/csi.proto or set {CORPUS_ENV}"
                )),
            );
            return failed(diags);
        };
        imports.insert(CSI_GO_IMPORT, src);
    }
    let compiled = match compile::compile_proto(&proto_name, &proto_src, &imports) {
        Ok(c) => c,
        Err(errs) => {
            diags.extend(raw);
            for e in errs {
                diags.push(remap_to_markdown(e, &proto_src, &md, &extracted, same_as_extracted));
            }
            return Loaded {
                model: None,
                compiled: None,
                extracted: Some(extracted),
                diagnostics: diags.sorted(),
            };
        }
    };

    let translation = match &options.translation {
        Some((lang, path)) => {
            let Some(src) = read_source(path, &mut diags) else { return failed(diags) };
            let tdoc = markdown::parse_doc(&src, &mut raw);
            files.push(src);
            Some((lang.clone(), tdoc))
        }
        None => None,
    };
    let origin = lower::ProtoOrigin {
        proto: &proto_src,
        proto_file: 1,
        markdown: same_as_extracted.then_some((&md, 0, &extracted)),
    };
    let model = lower::lower_model(
        lower::LowerInput {
            compiled: &compiled,
            origin,
            doc: &doc,
            doc_file: 0,
            translation: translation.as_ref().map(|(l, d)| (l.as_str(), d, 2)),
            files,
        },
        &mut raw,
    );
    raw.extend(check::check_model(&model));
    diags.extend(raw);
    Loaded {
        model: Some(model),
        compiled: Some(compiled),
        extracted: Some(extracted),
        diagnostics: diags.sorted(),
    }
}

/// Points a diagnostic about the compiled proto at the markdown line it was copied from.
fn remap_to_markdown(
    d: Diagnostic,
    proto: &SourceFile,
    md: &SourceFile,
    ex: &Extracted,
    same: bool,
) -> Diagnostic {
    let Some(src) = &d.source else { return d };
    if !same || src.name() != proto.name() {
        return d;
    }
    match ex.markdown_offset(proto, md, d.span.0) {
        Some(offset) => Diagnostic { source: Some(md.clone()), span: (offset, d.span.1), ..d },
        None => d,
    }
}
