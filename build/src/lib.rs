//! csikit's generator for build scripts: turns a CSI or csi-addons style spec (markdown with
//! ```protobuf blocks, and its `.proto`) into the bindings the `csikit` crate carries for its
//! built-in packages, written to `OUT_DIR` for `csikit::include_spec!`.
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     csikit_build::configure().compile("specs/myaddon").unwrap();
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs: the spec's items at this place
//! pub mod myaddon {
//!     csikit::include_spec!("myaddon");
//! }
//! ```
//!
//! The generated code names prost, tonic and the runtime only through `::csikit`, so the
//! crate depends on `csikit` (with its `server` feature for server traits, `client` for
//! clients, `reflect` for `descriptor_pool()`) and on nothing else. The csi-addons import of
//! `csi.proto` resolves to the CSI release `csikit::v1` was generated from, and the `csi.v1`
//! messages the spec uses are `::csikit::v1` types, not generated again.
//!
//! Spec problems are reported the cargo way: warnings as `cargo:warning=` lines with
//! `file:line:col`, errors rendered on stderr and returned as [`Error::Spec`]. Output files
//! are replaced atomically, so a failed build never leaves a half-written one.
//!
//! Module `csi_proto` holds the CSI proto `csikit::v1` was generated from, for the csi-addons
//! import.

mod csi_proto;

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use csikit_codegen::{Gate, Package, Parts};
use csikit_spec::{
    CSI_GO_IMPORT, Diagnostic, ImportMap, LoadOptions, Severity, SourceFile, SpecDir,
};
use prost::Message as _;

pub use csi_proto::{CSI_PROTO, CSI_RELEASE};

/// A builder for one or more `compile` calls, from [`configure`].
#[derive(Debug, Clone)]
pub struct Builder {
    types: bool,
    validation: bool,
    facts: bool,
    errors: bool,
    server: bool,
    client: bool,
    reflect: bool,
    imports: Vec<(String, PathBuf)>,
    extern_paths: Vec<(String, String)>,
    out_dir: Option<PathBuf>,
    emit_cargo: bool,
}

/// Starts a build: by default every part is emitted (types, validation, facts, errors, server
/// traits and clients; `descriptor_pool()` is off), the csi-addons CSI import resolves to
/// `csikit::v1`, and output goes to `OUT_DIR`.
pub fn configure() -> Builder {
    Builder {
        types: true,
        validation: true,
        facts: true,
        errors: true,
        server: true,
        client: true,
        reflect: false,
        imports: Vec::new(),
        extern_paths: Vec::new(),
        out_dir: None,
        emit_cargo: true,
    }
}

/// Why a build failed.
#[non_exhaustive]
pub enum Error {
    /// The spec has errors; each was rendered on stderr.
    Spec {
        /// The spec as given.
        path: PathBuf,
        /// Each error: `file:line:col: message` (no location for errors outside a file).
        errors: Vec<String>,
    },
    /// The options contradict each other.
    Options(String),
    /// No `OUT_DIR` (not run from a build script) and no [`Builder::out_dir`].
    NoOutDir,
    /// Reading an input or writing the output failed.
    Io {
        /// What was being done, naming the path.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The generator refused the compiled spec.
    Generate(csikit_codegen::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Spec { path, errors } => {
                write!(f, "the spec '{}' has {} error(s):", path.display(), errors.len())?;
                for e in errors {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
            Error::Options(m) => write!(f, "csikit-build options: {m}"),
            Error::NoOutDir => f.write_str(
                "OUT_DIR is not set: call csikit-build from a build script, or set Builder::out_dir",
            ),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Generate(e) => write!(f, "generating code: {e}"),
        }
    }
}

// `unwrap()` in a build script prints the `Debug` form: make it the readable one.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Generate(e) => Some(e),
            _ => None,
        }
    }
}

impl Builder {
    /// prost messages and enums, their redacted `Debug` and `FILE_DESCRIPTOR_SET` (default on).
    /// Without them only facts and errors can be emitted.
    pub fn types(mut self, on: bool) -> Self {
        self.types = on;
        self
    }

    /// `#[csi_validate]` on the messages, so they implement `csikit::Validate` (default on;
    /// server traits need it).
    pub fn validation(mut self, on: bool) -> Self {
        self.validation = on;
        self
    }

    /// The spec-facts table `facts::FACTS` (default on; server traits need it).
    pub fn facts(mut self, on: bool) -> Self {
        self.facts = on;
        self
    }

    /// The error-catalog enums `errors::*` from the spec's error tables (default on).
    pub fn errors(mut self, on: bool) -> Self {
        self.errors = on;
        self
    }

    /// Server traits and the adapters that plug into `csikit::server::Builder` with
    /// `routes_with` (default on; needs `csikit`'s `server` feature).
    pub fn server(mut self, on: bool) -> Self {
        self.server = on;
        self
    }

    /// tonic clients (default on; needs `csikit`'s `client` feature).
    pub fn client(mut self, on: bool) -> Self {
        self.client = on;
        self
    }

    /// `descriptor_pool()` through prost-reflect (default off; needs `csikit`'s `reflect`
    /// feature).
    pub fn reflect(mut self, on: bool) -> Self {
        self.reflect = on;
        self
    }

    /// Makes `import "<name>"` in the spec read the file at `path`. Mapping
    /// [`csikit_spec::CSI_GO_IMPORT`] replaces the CSI release `csikit::v1` comes from; its
    /// types are still `::csikit::v1` types, so map only a compatible release.
    pub fn import(mut self, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.imports.push((name.into(), path.into()));
        self
    }

    /// Serves the proto path `proto` (e.g. `.other.pkg`) by the Rust path `rust` (e.g.
    /// `crate::other`), for imported packages other than `csi.v1` and the well-known types.
    pub fn extern_path(mut self, proto: impl Into<String>, rust: impl Into<String>) -> Self {
        self.extern_paths.push((proto.into(), rust.into()));
        self
    }

    /// Writes to `dir` instead of `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether to print `cargo:` lines (default on; off for use outside build scripts).
    pub fn emit_cargo_lines(mut self, on: bool) -> Self {
        self.emit_cargo = on;
        self
    }

    fn parts(&self) -> Result<Parts, Error> {
        let needs = |on: bool, what: &str, need: bool, needed: &str| {
            if on && !need {
                Err(Error::Options(format!("{what} needs {needed}; turn it off or {needed} on")))
            } else {
                Ok(())
            }
        };
        needs(self.validation, "validation", self.types, "types")?;
        needs(self.client, "client", self.types, "types")?;
        needs(self.reflect, "reflect", self.types, "types")?;
        needs(self.server, "server", self.types, "types")?;
        needs(self.server, "server", self.validation, "validation")?;
        needs(self.server, "server", self.facts, "facts")?;
        // A part that needs a feature of `csikit` is checked: a crate without the feature gets
        // one error naming it (and this builder's option), not one per item that needs it.
        let gate =
            |on: bool, feature: &'static str| if on { Gate::Checked(feature) } else { Gate::Off };
        Ok(Parts {
            types: self.types,
            validation: self.validation,
            facts: self.facts,
            errors: self.errors,
            server: gate(self.server, "server"),
            client: gate(self.client, "client"),
            reflect: gate(self.reflect, "reflect"),
        })
    }

    fn cargo(&self, line: &str) {
        if self.emit_cargo {
            println!("cargo:{line}");
        }
    }

    /// Generates the bindings of the spec at `path` (a folder holding `spec.md` or
    /// `README.md` and its `.proto`, a markdown file alone, or a `.proto` alone or in a folder
    /// of its own, such as a CSI release's `csi.proto`: package `csi.v1` then gets its own
    /// bindings, apart from `csikit::v1`) into `<package>.rs` in the output directory, and
    /// returns that file's path.
    ///
    /// # Errors
    ///
    /// [`Error::Spec`] when the spec has errors (each rendered on stderr first), and the
    /// other variants for contradicting options, a missing `OUT_DIR`, unreadable inputs or
    /// an unwritable output. Nothing is written then.
    pub fn compile(&self, path: impl AsRef<Path>) -> Result<PathBuf, Error> {
        let path = path.as_ref();
        let parts = self.parts()?;
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or(Error::NoOutDir)?,
        };
        self.cargo(&format!("rerun-if-changed={}", path.display()));
        if !path.exists() {
            return Err(Error::Io {
                what: format!("reading the spec '{}'", path.display()),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such folder, markdown file or .proto",
                ),
            });
        }
        if path.is_dir() {
            // A spec folder's files, whichever of them the source reads.
            for input in SpecDir::find(path)
                .map(|s| s.inputs().into_iter().map(Path::to_path_buf).collect())
                .unwrap_or_else(|_| protos_in(path))
            {
                self.cargo(&format!("rerun-if-changed={}", input.display()));
            }
        }

        let mut imports = ImportMap::new();
        for (name, file) in &self.imports {
            self.cargo(&format!("rerun-if-changed={}", file.display()));
            let text = std::fs::read_to_string(file).map_err(|source| Error::Io {
                what: format!("reading the import '{name}' from '{}'", file.display()),
                source,
            })?;
            imports.insert(name.clone(), SourceFile::new(file.display().to_string(), text));
        }
        if imports.get(CSI_GO_IMPORT).is_none() {
            imports.insert(
                CSI_GO_IMPORT,
                SourceFile::new(format!("csi.proto of csikit::v1 ({CSI_RELEASE})"), CSI_PROTO),
            );
        }
        // Any spec source: a folder with its markdown, a markdown file, a `.proto` alone (a CSI
        // release's `csi.proto` included) or a folder holding only that.
        let loaded =
            csikit_spec::load_source(path, &LoadOptions { imports, ..LoadOptions::default() });
        let (errors, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
            loaded.diagnostics.0.into_iter().partition(Diagnostic::is_error);
        for w in others.iter().filter(|d| d.severity == Severity::Warning) {
            self.cargo(&format!("warning={}", one_line(w)));
        }
        let (Some(model), Some(compiled), true) =
            (loaded.model, loaded.compiled, errors.is_empty())
        else {
            let mut errors = errors;
            if errors.is_empty() {
                errors.push(Diagnostic::global(Severity::Error, "the spec could not be read"));
            }
            return Err(self.fail(path, errors));
        };

        let extern_paths = self.extern_paths_for(&model.package, &compiled.encoded)?;
        let package = Package {
            model: &model,
            descriptor_set: &compiled.encoded,
            proto_file: &compiled.name,
            module: model.package.clone(),
            source: format!("{} ({})", spec_name(path), path.display()),
            extern_paths,
            translation: None,
            feature: None,
        };
        let text = csikit_codegen::package_file(&package, &parts, "csikit-build")
            .map_err(Error::Generate)?;
        let out = out_dir.join(format!("{}.rs", model.package));
        csikit_runtime::fs::write_atomic(&out, text.as_bytes())
            .map_err(|source| Error::Io { what: format!("writing '{}'", out.display()), source })?;
        Ok(out)
    }

    /// Every imported package gets a Rust path: `csi.v1` is `::csikit::v1`, the well-known
    /// types are prost's, the rest must be mapped by the user.
    fn extern_paths_for(
        &self,
        package: &str,
        encoded: &[u8],
    ) -> Result<Vec<(String, String)>, Error> {
        let set = prost_types::FileDescriptorSet::decode(encoded).map_err(|source| {
            Error::Generate(csikit_codegen::Error::Descriptor {
                package: package.to_owned(),
                source,
            })
        })?;
        let mut out = self.extern_paths.clone();
        for file in &set.file {
            let p = file.package();
            let proto = format!(".{p}");
            if p == package
                || p == "google.protobuf"
                || out
                    .iter()
                    .any(|(mapped, _)| proto == *mapped || proto.starts_with(&format!("{mapped}.")))
            {
                continue;
            }
            if p == "csi.v1" {
                out.push((proto, "::csikit::v1".to_owned()));
                continue;
            }
            return Err(Error::Options(format!(
                "'{}' (package '{p}') is imported but has no Rust path; map it with \
                 .extern_path(\"{proto}\", \"crate::...\")",
                file.name()
            )));
        }
        Ok(out)
    }

    /// Renders `errors` on stderr (a line each, then the source line it points at) and makes
    /// the [`Error::Spec`].
    fn fail(&self, path: &Path, errors: Vec<Diagnostic>) -> Error {
        let mut stderr = std::io::stderr().lock();
        let mut lines = Vec::new();
        for d in &errors {
            let loc = d.location();
            let _ = writeln!(stderr, "error: {}", one_line(d));
            let _ = write!(stderr, "{}", d.snippet());
            lines.push(if loc.is_empty() {
                d.message.clone()
            } else {
                format!("{loc}: {}", d.message)
            });
        }
        Error::Spec { path: path.to_path_buf(), errors: lines }
    }
}

/// The name a spec goes by in headers: its folder's or file's name.
fn spec_name(path: &Path) -> String {
    let path = if path.file_name().is_some() { path.to_path_buf() } else { path.join(".") };
    let path = path.canonicalize().unwrap_or(path);
    path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The `.proto` files directly in `dir`, for a folder that holds a proto alone.
fn protos_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "proto"))
        .collect();
    out.sort();
    out
}

/// `file:line:col: message` on one line (cargo reads `cargo:` lines up to the newline).
fn one_line(d: &Diagnostic) -> String {
    let loc = d.location();
    let mut text = if loc.is_empty() { d.message.clone() } else { format!("{loc}: {}", d.message) };
    if let Some(help) = &d.help {
        text.push_str(&format!(" (help: {help})"));
    }
    text.replace(['\n', '\r'], " ")
}
