//! The tree's own rules, checked over every source file (in the shape of rust-analyzer's
//! `xtask/src/tidy.rs`): crate docs that name their modules truthfully, no long file without a
//! reason, no `#[allow]` without a reason, and no second copy of a rule that has one home.
//!
//! Generated code (`generated/`, `build/src/csi_proto.rs`) is exempt: it is checked by its
//! freshness test and follows its generator. Tests, benchmarks and fuzz targets are
//! exempt from the long-file and one-home rules: a test may bind a socket or write a frame by hand
//! to check the real thing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Product source files may be this long; a longer one says why at its top.
const MAX_LINES: usize = 800;
/// What a long file's opening comment says, with its reason after it.
const LONG_FILE_MARK: &str = "over 800 lines:";

/// A rule with one home: where it lives, and a text that only its home may contain.
struct OneHome {
    rule: &'static str,
    needle: &'static str,
    home: &'static [&'static str],
}

const ONE_HOME: &[OneHome] = &[
    OneHome {
        rule: "binding a unix socket (stale-socket removal)",
        needle: "UnixListener::bind",
        home: &["runtime/src/endpoint/socket.rs"],
    },
    OneHome {
        rule: "installing a signal handler",
        needle: "SignalKind::",
        home: &["runtime/src/endpoint/signal.rs"],
    },
    OneHome {
        rule: "installing a signal handler",
        needle: "ctrl_c",
        home: &["runtime/src/endpoint/signal.rs"],
    },
    OneHome {
        rule: "reading an HTTP/2 frame header",
        needle: "]) << 16",
        home: &["runtime/src/h2frame.rs"],
    },
    OneHome {
        rule: "the HTTP/2 connection preface",
        needle: "PRI * HTTP/2.0",
        home: &["runtime/src/h2frame.rs"],
    },
    OneHome {
        rule: "parsing an endpoint",
        needle: "strip_prefix(\"unix:",
        home: &["runtime/src/endpoint.rs"],
    },
    OneHome {
        rule: "parsing an endpoint",
        needle: "strip_prefix(\"tcp://",
        home: &["runtime/src/endpoint.rs"],
    },
    OneHome {
        rule: "scrubbing secrets from a message",
        needle: "fn scrub",
        home: &["runtime/src/redact.rs"],
    },
    OneHome {
        rule: "csi-sanity's secrets file and its kinds",
        needle: "ControllerValidateVolumeCapabilitiesSecret",
        home: &["runtime/src/secrets.rs"],
    },
];

/// Copies of a shared rule waiting to move to its home (file, needle); empty now. An entry that
/// no longer matches fails the test, so the list only shrinks.
const VIEWER_COPIES_PENDING: &[(&str, &str)] = &[];

const OTHER_COPIES_PENDING: &[(&str, &str)] = &[];

/// Product files over [`MAX_LINES`] waiting to be split (empty now); an entry that is no longer
/// long fails the test, so the list only shrinks.
const LONG_FILES_PENDING: &[&str] = &[];

/// Crate roots whose docs do not yet name every module (empty now); an entry whose docs are fixed
/// fails the test, so the list only shrinks.
const MODULE_DOCS_PENDING: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is one level deep").to_owned()
}

/// Every `.rs` file of the workspace (and the fuzz targets), as a path relative to the root with
/// `/` separators, and its text.
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
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
                let rel = path.strip_prefix(root).expect("under the root");
                let rel =
                    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>();
                let text = std::fs::read_to_string(&path).expect("source files are UTF-8");
                out.push((rel.join("/"), text));
            }
        }
    }
    let root = root();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out
}

fn is_generated(path: &str, text: &str) -> bool {
    path.starts_with("generated/")
        || path == "build/src/csi_proto.rs"
        || text.starts_with("// @generated")
}

fn is_test(path: &str) -> bool {
    path.starts_with("fuzz/") || path.split('/').any(|part| part == "tests" || part == "benches")
}

/// Fails with every problem found, and with every allow-list entry that matches nothing.
fn report(what: &str, problems: Vec<String>) {
    if !problems.is_empty() {
        let mut text = format!("{what}:\n");
        for p in problems {
            let _ = writeln!(text, "  {p}");
        }
        panic!("{text}");
    }
}

#[test]
fn the_tree_is_read() {
    let files = sources();
    assert!(files.len() > 100, "only {} source files found", files.len());
    assert!(files.iter().any(|(p, _)| p == "runtime/src/endpoint.rs"));
}

/// The `mod name;` declarations of a crate root, at its top level.
fn declared_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(char::is_whitespace))
        .filter_map(|l| {
            let l = l.strip_prefix("pub(crate) ").or_else(|| l.strip_prefix("pub ")).unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.to_owned())
        })
        .collect()
}

/// The names a crate root's docs give as list items: `//! * [`name`]...` or `//! - `name`...`.
fn listed_names(docs: &str) -> Vec<String> {
    docs.lines()
        .filter_map(|l| {
            let item =
                l.trim_start().strip_prefix("* ").or_else(|| l.trim_start().strip_prefix("- "))?;
            let item = item.strip_prefix('[').unwrap_or(item);
            let name = item.strip_prefix('`')?;
            let name = &name[..name.find('`')?];
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                .then(|| name.to_owned())
        })
        .collect()
}

#[test]
fn crate_docs_name_their_modules_truthfully() {
    let mut problems = Vec::new();
    let mut pending_seen = Vec::new();
    for (path, text) in sources() {
        let is_root = path.ends_with("/src/lib.rs") || path.ends_with("/src/main.rs");
        if !is_root || is_generated(&path, &text) || is_test(&path) {
            continue;
        }
        let docs: String = text
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .fold(String::new(), |acc, l| acc + l + "\n");
        let modules = declared_modules(&text);
        let mut wrong = Vec::new();
        for m in &modules {
            if !(docs.contains(&format!("`{m}`")) || docs.contains(&format!("`{m}::"))) {
                wrong.push(format!("{path}: module `{m}` is not named in the crate docs"));
            }
        }
        for name in listed_names(&docs) {
            if !modules.contains(&name) {
                wrong.push(format!("{path}: the docs list `{name}`, which is not a module here"));
            }
        }
        if MODULE_DOCS_PENDING.contains(&path.as_str()) {
            if wrong.is_empty() {
                problems.push(format!(
                    "{path}: its docs are right now; remove it from MODULE_DOCS_PENDING"
                ));
            }
            pending_seen.push(path);
        } else {
            problems.extend(wrong);
        }
    }
    for p in MODULE_DOCS_PENDING {
        if !pending_seen.iter().any(|s| s == p) {
            problems.push(format!("{p}: in MODULE_DOCS_PENDING but not a crate root"));
        }
    }
    report("crate docs that do not name their modules", problems);
}

#[test]
fn long_files_say_why() {
    let mut problems = Vec::new();
    for (path, text) in sources() {
        if is_generated(&path, &text) || is_test(&path) || !path.contains("/src/") {
            continue;
        }
        let lines = text.lines().count();
        let explained = text.lines().take(20).any(|l| l.contains(LONG_FILE_MARK));
        let pending = LONG_FILES_PENDING.contains(&path.as_str());
        if lines > MAX_LINES && !explained && !pending {
            problems.push(format!(
                "{path}: {lines} lines; split it, or say why at its top (\"{LONG_FILE_MARK} ...\")"
            ));
        }
        if pending && lines <= MAX_LINES {
            problems.push(format!("{path}: {lines} lines now; remove it from LONG_FILES_PENDING"));
        }
    }
    report("long files", problems);
}

/// The text of the attribute that starts at line `at`, up to its closing `]`.
fn attribute(lines: &[&str], at: usize) -> String {
    let mut text = String::new();
    let mut depth = 0i32;
    for line in &lines[at..] {
        for c in line.chars() {
            text.push(c);
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return text;
                    }
                }
                _ => {}
            }
        }
        text.push('\n');
    }
    text
}

#[test]
fn every_allow_has_a_reason() {
    let mut problems = Vec::new();
    for (path, text) in sources() {
        if is_generated(&path, &text) {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim_start();
            if !(t.starts_with("#[allow(") || t.starts_with("#![allow(")) {
                continue;
            }
            let attr = attribute(&lines, i);
            let commented = line.contains("//")
                || i.checked_sub(1).is_some_and(|p| lines[p].trim_start().starts_with("//"));
            if !attr.contains("reason =") && !commented {
                problems.push(format!("{path}:{}: `{}` without a reason", i + 1, t));
            }
        }
    }
    report("allows without a reason (add `reason = \"...\"` or a comment)", problems);
}

#[test]
fn each_shared_rule_has_one_home() {
    let files = sources();
    let pending: Vec<(&str, &str)> =
        VIEWER_COPIES_PENDING.iter().chain(OTHER_COPIES_PENDING).copied().collect();
    let mut problems = Vec::new();
    let mut used = vec![false; pending.len()];
    for rule in ONE_HOME {
        for home in rule.home {
            let found = files.iter().any(|(p, t)| p == home && t.contains(rule.needle));
            if !found {
                problems
                    .push(format!("{home}: no longer holds `{}`: update ONE_HOME", rule.needle));
            }
        }
        for (path, text) in &files {
            if rule.home.contains(&path.as_str()) || is_generated(path, text) || is_test(path) {
                continue;
            }
            if path.starts_with("xtask/tests/tidy.rs") || !text.contains(rule.needle) {
                continue;
            }
            match pending.iter().position(|&(p, n)| p == path && n == rule.needle) {
                Some(i) => used[i] = true,
                None => problems.push(format!(
                    "{path}: `{}` outside its home {:?}: {} lives there; call it",
                    rule.needle, rule.home, rule.rule
                )),
            }
        }
    }
    for (i, (path, needle)) in pending.iter().enumerate() {
        if !used[i] {
            problems.push(format!(
                "{path}: no longer holds `{needle}`; remove it from the pending list"
            ));
        }
    }
    report("second copies of a shared rule", problems);
}
