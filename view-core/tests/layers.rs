//! The crate's modules stand in layers: each uses only the modules before it in [`ORDER`], which
//! is the order the crate's documentation (`src/lib.rs`) names them in, so there is no circle of
//! imports between its files and the documentation says so truly. A module added to the crate
//! must be given its place here.

use std::path::{Path, PathBuf};

/// The modules, lowest first.
const ORDER: &[&str] = &[
    "wire",
    "input",
    "rpcs",
    "former",
    "schema",
    "redact",
    "detect",
    "mask",
    "text",
    "raw",
    "textparse",
    "validate",
    "diff",
    "edit",
    "timestamp",
    "capture",
    "method",
    "outline",
    "request",
    "render",
    "replay",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The files of module `name`: `src/name.rs` and, for a module with submodules, `src/name/*.rs`.
fn files(name: &str) -> Vec<PathBuf> {
    let mut out = vec![src().join(format!("{name}.rs"))];
    if let Ok(dir) = std::fs::read_dir(src().join(name)) {
        out.extend(
            dir.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "rs")),
        );
    }
    out
}

/// The modules of this crate a file's code names (`crate::name`), comments left out.
fn uses(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn every_module_uses_only_those_before_it() {
    let mut wrong = Vec::new();
    for (i, module) in ORDER.iter().enumerate() {
        for file in files(module) {
            for used in uses(&read(&file)) {
                let at = ORDER.iter().position(|m| *m == used);
                if at.is_none_or(|at| at > i) {
                    wrong.push(format!("{} uses crate::{used}", file.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn the_order_is_the_crates_modules_as_its_documentation_names_them() {
    let lib = read(&src().join("lib.rs"));
    let mut declared: Vec<&str> =
        lib.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    declared.sort_unstable();
    let mut ordered = ORDER.to_vec();
    ordered.sort_unstable();
    assert_eq!(declared, ordered, "every module of src/lib.rs has a place in ORDER");
    // The documentation links each module as [`name`]; its first mention is its place.
    let doc: String = lib.lines().filter_map(|l| l.strip_prefix("//!")).collect();
    let mut named: Vec<&str> = Vec::new();
    for (at, _) in doc.match_indices("[`") {
        let name = doc[at + 2..].split('`').next().unwrap_or_default();
        if ORDER.contains(&name) && !named.contains(&name) {
            named.push(name);
        }
    }
    assert_eq!(named, ORDER, "src/lib.rs names the modules in their order");
}

#[test]
fn the_check_sees_a_use_against_the_layers() {
    // A planted use from a lower module of a higher one is found; comments are not code.
    assert_eq!(uses("use crate::capture::status_name;\n// crate::replay"), ["capture"]);
    assert_eq!(uses("let x = crate::text::decode_checked(d, b, 0);"), ["text"]);
}
