//! Compiles proto text with protox, resolving imports through an import map.

use std::collections::BTreeMap;

use miette::Diagnostic as _;
use prost_reflect::DescriptorPool;
use protox::file::{
    ChainFileResolver, File, FileResolver, GoogleFileResolver, IncludeFileResolver,
};

use crate::diagnostic::{Diagnostic, Severity, SourceFile};

/// The import path csi-addons protos use for the CSI proto.
pub const CSI_GO_IMPORT: &str = "github.com/container-storage-interface/spec/lib/go/csi/csi.proto";

/// Proto sources by import name; the well-known `google/protobuf/*` types are always there.
#[derive(Debug, Clone, Default)]
pub struct ImportMap {
    files: BTreeMap<String, SourceFile>,
}

impl ImportMap {
    /// An empty map (well-known types only).
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `import "<name>"` read `source`.
    pub fn insert(&mut self, name: impl Into<String>, source: SourceFile) -> &mut Self {
        self.files.insert(name.into(), source);
        self
    }

    /// The source mapped to an import name.
    pub fn get(&self, name: &str) -> Option<&SourceFile> {
        self.files.get(name)
    }
}

struct MapResolver(ImportMap);

impl FileResolver for MapResolver {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        match self.0.files.get(name) {
            Some(src) => File::from_source(name, src.text()),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The result of compiling one proto file.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Descriptors of the file and everything it imports, custom options intact.
    pub pool: DescriptorPool,
    /// The encoded `FileDescriptorSet` (imports included, source info kept).
    pub encoded: Vec<u8>,
    /// The import name of the compiled file.
    pub name: String,
}

/// Compiles `main` (known under import name `name`) against `imports`.
///
/// # Errors
///
/// Every problem protox reports, as a diagnostic pointing into the file it is in.
pub fn compile_proto(
    name: &str,
    main: &SourceFile,
    imports: &ImportMap,
) -> Result<Compiled, Vec<Diagnostic>> {
    compile_proto_in(name, main, imports, &[])
}

/// As [`compile_proto`], imports not in the map also read from the folders `include` (a proto
/// given alone finds the files it imports beside it).
///
/// # Errors
///
/// As [`compile_proto`].
pub fn compile_proto_in(
    name: &str,
    main: &SourceFile,
    imports: &ImportMap,
    include: &[std::path::PathBuf],
) -> Result<Compiled, Vec<Diagnostic>> {
    let mut files = imports.clone();
    files.insert(name, main.clone());
    let mut compiler = compiler(&files, include);
    compiler.include_imports(true).include_source_info(true);
    if let Err(err) = compiler.open_file(name) {
        return Err(vec![to_diagnostic(&err, &files)]);
    }
    Ok(Compiled {
        pool: compiler.descriptor_pool(),
        encoded: compiler.encode_file_descriptor_set(),
        name: name.to_owned(),
    })
}

fn compiler(files: &ImportMap, include: &[std::path::PathBuf]) -> protox::Compiler {
    let mut chain = ChainFileResolver::new();
    chain.add(MapResolver(files.clone()));
    for dir in include {
        chain.add(IncludeFileResolver::new(dir.clone()));
    }
    chain.add(GoogleFileResolver::new());
    protox::Compiler::with_file_resolver(chain)
}

/// Compiles the files `names` (the well-known types, or files of the import map) into one pool,
/// custom options intact: the imports a descriptor set leaves out.
///
/// # Errors
///
/// A name that is neither, or that does not compile.
pub fn compile_imports(
    names: &[&str],
    imports: &ImportMap,
) -> Result<DescriptorPool, Vec<Diagnostic>> {
    let mut compiler = compiler(imports, &[]);
    compiler.include_imports(true).include_source_info(true);
    for name in names {
        if let Err(err) = compiler.open_file(name) {
            return Err(vec![to_diagnostic(&err, imports)]);
        }
    }
    Ok(compiler.descriptor_pool())
}

/// Turns a protox error into our diagnostic, pointing into our copy of the file.
fn to_diagnostic(err: &protox::Error, files: &ImportMap) -> Diagnostic {
    let message = err.to_string();
    let label = err
        .labels()
        .and_then(|mut l| l.next())
        .map(|l| (l.offset(), l.len(), l.label().unwrap_or("here").to_owned()));
    let help = err.help().map(|h| h.to_string());
    let source = err.file().and_then(|f| files.get(f));
    let mut d = match (source, label) {
        (Some(src), Some((offset, len, label))) => {
            Diagnostic::at(Severity::Error, src, (offset, len), message, label)
        }
        (Some(src), None) => Diagnostic::at(Severity::Error, src, (0, 0), message, "in this file"),
        (None, _) => Diagnostic::global(Severity::Error, message).with_help(format!(
            "imports resolve through the import map; '{}' maps the CSI proto",
            CSI_GO_IMPORT
        )),
    };
    if let Some(h) = help {
        d = d.with_help(h);
    }
    d
}
