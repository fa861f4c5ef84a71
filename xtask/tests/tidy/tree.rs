//! The workspace as the tidy checks read it: every `.rs` file with its text, and which of them
//! are generated or test code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One source file: its path relative to the workspace root, with `/` separators, and its text.
#[derive(Clone)]
pub struct Source {
    pub path: String,
    pub text: String,
}

impl Source {
    pub fn new(path: &str, text: &str) -> Source {
        Source { path: path.to_owned(), text: text.to_owned() }
    }
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is one level deep").to_owned()
}

/// Every `.rs` file of the workspace (and the fuzz targets), in path order.
pub fn sources() -> Vec<Source> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<Source>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::path);
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                    walk(&path, root, out);
                }
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).expect("source files are UTF-8");
                out.push(Source { path: relative(&path, root), text });
            }
        }
    }
    let root = root();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

/// `path` relative to `root`, with `/` separators.
pub fn relative(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).expect("under the root");
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Written by `cargo xtask generate`: checked by its freshness test, shaped by its generator.
pub fn is_generated(file: &Source) -> bool {
    file.path.starts_with("generated/")
        || file.path == "build/src/csi_proto.rs"
        || file.text.starts_with("// @generated")
}

/// Tests, benchmarks and fuzz targets (files, not `#[cfg(test)]` modules inside product files).
pub fn is_test(path: &str) -> bool {
    path.starts_with("fuzz/") || path.split('/').any(|part| part == "tests" || part == "benches")
}

/// The product files: neither generated nor tests.
pub fn product(files: &[Source]) -> impl Iterator<Item = &Source> {
    files.iter().filter(|f| !is_generated(f) && !is_test(&f.path))
}

/// Fails with every problem found.
pub fn report(what: &str, problems: Vec<String>) {
    if !problems.is_empty() {
        let mut text = format!("{what}:\n");
        for p in problems {
            let _ = writeln!(text, "  {p}");
        }
        panic!("{text}");
    }
}
