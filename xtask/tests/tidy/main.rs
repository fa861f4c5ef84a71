//! The tree's own rules, checked over every source file (in the shape of rust-analyzer's
//! `xtask/src/tidy.rs`): crate docs that name their modules truthfully, no long file without a
//! reason, no `#[allow]` without a reason, no second copy of a rule that has one home (found by
//! its shape in the syntax tree: `shapes`), dependencies that keep ARCHITECTURE.md's crate table
//! (`crates`), and no import circle between the files of a crate (`imports`). The checkers are
//! tested too: a second copy written another way, a dependency that breaks the table and a circle
//! are planted (in memory) and each must be found.
//!
//! Generated code (`generated/`, `build/src/csi_proto.rs`) is exempt: it is checked by its
//! freshness test and follows its generator. Tests, benchmarks, fuzz targets and `#[cfg(test)]`
//! code are exempt from the long-file, one-home and circle rules: a test may bind a socket or
//! write a frame by hand to check the real thing.

mod crates;
mod imports;
mod shapes;
mod syntax;
mod tree;

use tree::{Source, is_generated, is_test, report, sources};

/// Product source files may be this long; a longer one says why at its top.
const MAX_LINES: usize = 800;
/// What a long file's opening comment says, with its reason after it.
const LONG_FILE_MARK: &str = "over 800 lines:";

/// Product files over [`MAX_LINES`] waiting to be split (empty now); an entry that is no longer
/// long fails the test, so the list only shrinks.
const LONG_FILES_PENDING: &[&str] = &[];

/// Crate roots whose docs do not yet name every module (empty now); an entry whose docs are fixed
/// fails the test, so the list only shrinks.
const MODULE_DOCS_PENDING: &[&str] = &[];

#[test]
fn the_tree_is_read() {
    let files = sources();
    assert!(files.len() > 100, "only {} source files found", files.len());
    assert!(files.iter().any(|f| f.path == "runtime/src/endpoint.rs"));
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
    for file in sources() {
        let is_root = file.path.ends_with("/src/lib.rs") || file.path.ends_with("/src/main.rs");
        if !is_root || is_generated(&file) || is_test(&file.path) {
            continue;
        }
        let Source { path, text } = file;
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
    for file in sources() {
        if is_generated(&file) || is_test(&file.path) || !file.path.contains("/src/") {
            continue;
        }
        let Source { path, text } = file;
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
    for file in sources() {
        if is_generated(&file) {
            continue;
        }
        let Source { path, text } = file;
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
    report("second copies of a shared rule", shapes::check(&sources(), shapes::RULES));
}

/// A change to the text of one member's manifest.
type ManifestChange<'a> = (&'a str, &'a dyn Fn(String) -> String);

/// The real ARCHITECTURE.md and manifests, with `change` applied to the manifest of one folder.
fn crate_table_problems(change: Option<ManifestChange>) -> Vec<String> {
    let root = tree::root();
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let architecture = read(&root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let workspace = read(&root.join("Cargo.toml")).expect("Cargo.toml");
    crates::check_texts(&architecture, &workspace, |folder| {
        let text = read(&root.join(folder).join("Cargo.toml"))?;
        Ok(match change {
            Some((f, change)) if f == folder => change(text),
            _ => text,
        })
    })
}

#[test]
fn the_crate_table_matches_the_manifests() {
    report("dependencies against ARCHITECTURE.md's crate table", crate_table_problems(None));
}

#[test]
fn no_import_circle_between_files() {
    let mut problems = Vec::new();
    for krate in imports::crates(&sources()) {
        problems.extend(krate.problems.iter().cloned());
        problems.extend(imports::circles(&krate).iter().map(|c| format!("circle: {c}")));
    }
    report("import circles between files (break each: move what both need down)", problems);
}

#[test]
fn module_orders_the_docs_promise_hold() {
    let files = sources();
    let mut problems = Vec::new();
    let mut promised = 0;
    for krate in imports::crates(&files) {
        let root = files.iter().find(|f| f.path == krate.root).expect("the root is a source");
        if let Some(order) = imports::promised_order(&root.text) {
            promised += 1;
            problems.extend(imports::order_breaks(&krate, &order));
        }
    }
    report("modules that depend on ones their crate docs list after them", problems);
    assert!(promised > 0, "no crate docs promise an order: is the phrase read right?");
}

/// Planted copies of shared rules, each written so that a plain text search for the rule's usual
/// spelling misses it (`old_needle`), each placed beside the real tree's files.
const PLANTED_COPIES: &[(&str, &str, &str)] = &[
    (
        "binding a unix socket",
        "UnixListener::bind",
        "use tokio::net::UnixListener as Listener;\n\
         pub fn listen(p: &std::path::Path) -> std::io::Result<Listener> { Listener::bind(p) }\n",
    ),
    (
        "installing a signal handler",
        "SignalKind::",
        "use tokio::signal::unix::{SignalKind as Kind, signal};\n\
         pub fn on_term() -> std::io::Result<tokio::signal::unix::Signal> { signal(Kind::terminate()) }\n",
    ),
    (
        "reading an HTTP/2 frame header",
        "]) << 16",
        "pub fn length(head: &[u8; 9]) -> u32 { u32::from_be_bytes([0, head[0], head[1], head[2]]) }\n",
    ),
    (
        "parsing an endpoint",
        "strip_prefix(\"unix:",
        "pub fn socket(endpoint: &str) -> Option<&str> {\n\
         match endpoint.split_once(\"://\") { Some((\"unix\", path)) => Some(path), _ => None }\n}\n",
    ),
    (
        "scrubbing secrets from a message",
        "fn scrub",
        "pub struct Hider;\nimpl Hider {\n    pub(crate) fn\n    scrub(&self, m: &str, s: &str) -> String { m.replace(s, \"***\") }\n}\n",
    ),
    (
        "scrubbing secrets from a message",
        "fn scrub",
        "use csikit_runtime::redact::REDACTED as MASK;\n\
         pub fn hide(m: &str, s: &str) -> String { m.replace(s, MASK) }\n",
    ),
    (
        "csi-sanity's secrets file and its kinds",
        "ControllerValidateVolumeCapabilitiesSecret",
        "pub fn kind(rpc: &str) -> &'static str {\n\
         match rpc { \"NodeStageVolume\" => \"NodeStageVolumeSecret\", _ => \"\" }\n}\n",
    ),
    (
        "replacing a file atomically",
        "write_atomic",
        "use std::fs::rename as swap;\n\
         pub fn save(p: &std::path::Path, b: &[u8]) -> std::io::Result<()> {\n\
         let tmp = p.with_extension(\"part\");\n    std::fs::write(&tmp, b)?;\n    swap(&tmp, p)\n}\n",
    ),
    (
        "replacing a file atomically",
        "write_atomic",
        "pub fn save(p: &std::path::Path, b: &[u8]) -> std::io::Result<()> {\n\
         let mut f = tempfile::NamedTempFile::new()?;\n    std::io::Write::write_all(&mut f, b)?;\n\
         f.persist(p).map(drop).map_err(|e| e.error)\n}\n",
    ),
];

const PLANTED: &str = "proxy/src/planted.rs";

/// The homes of the shared rules, as they are: the tree a plant is checked in (the whole tree
/// is checked by `each_shared_rule_has_one_home`).
fn homes() -> Vec<Source> {
    let homes: Vec<&str> = shapes::RULES.iter().flat_map(|r| r.home.iter().copied()).collect();
    sources().into_iter().filter(|f| homes.contains(&f.path.as_str())).collect()
}

#[test]
fn a_second_copy_written_another_way_is_found() {
    let real = homes();
    let before = shapes::check(&real, shapes::RULES);
    for (rule, old_needle, text) in PLANTED_COPIES {
        assert!(!text.contains(old_needle), "the plant for {rule} is written the usual way");
        let mut files = real.clone();
        files.push(Source::new(PLANTED, text));
        let found: Vec<String> = shapes::check(&files, shapes::RULES)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        assert!(
            found.iter().any(|p| p.starts_with(PLANTED) && p.contains(rule)),
            "a copy of {rule} was not found:\n{text}\nnew problems: {found:#?}"
        );
    }
}

#[test]
fn copies_in_tests_and_comments_are_not_copies() {
    let real = homes();
    let before = shapes::check(&real, shapes::RULES);
    let test_module = format!(
        "//! `UnixListener::bind` and `fn scrub` in a comment are words, not code.\n\
         pub fn f() {{}}\n#[cfg(test)]\nmod tests {{\n{}\n}}\n",
        PLANTED_COPIES.iter().map(|(_, _, t)| *t).collect::<Vec<_>>().join("\n")
    );
    let mut files = real.clone();
    files.push(Source::new(PLANTED, &test_module));
    files.push(Source::new("proxy/tests/planted.rs", PLANTED_COPIES[0].2));
    let after = shapes::check(&files, shapes::RULES);
    let new: Vec<&String> = after.iter().filter(|p| !before.contains(p)).collect();
    assert!(new.is_empty(), "test code or comments taken for copies: {new:#?}");
}

/// Planted dependencies (folder, table, line, what the report must say), each breaking the crate
/// table another way.
const PLANTED_DEPENDENCIES: &[(&str, &str, &str, &str)] = &[
    // Up the table: the spec reader on the generator.
    ("spec", "dependencies", "csikit-codegen = { path = \"../codegen\" }", "stands below it"),
    // Renamed, so the key says nothing: the docs site in users' build scripts.
    (
        "build",
        "dependencies",
        "docs = { package = \"csikit-site\", path = \"../site\" }",
        "`csikit-site`",
    ),
    // Above it, but not in its row; a build dependency.
    ("memdriver", "build-dependencies", "csikit-spec = { path = \"../spec\" }", "does not name"),
    // What csikit-build's row says it never holds, through a crate it depends on.
    ("codegen", "dependencies", "askama.workspace = true", "`askama` through `csikit-codegen`"),
];

/// `manifest` with `line` added to its `[table]` (made when missing).
fn plant(manifest: &str, table: &str, line: &str) -> String {
    let header = format!("[{table}]\n");
    match manifest.find(&header) {
        Some(at) => {
            let at = at + header.len();
            format!("{}{line}\n{}", &manifest[..at], &manifest[at..])
        }
        None => format!("{manifest}\n{header}{line}\n"),
    }
}

#[test]
fn a_dependency_that_breaks_the_table_is_found() {
    let before = crate_table_problems(None);
    for (folder, table, line, says) in PLANTED_DEPENDENCIES {
        let change = |text: String| plant(&text, table, line);
        let found: Vec<String> = crate_table_problems(Some((folder, &change)))
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        assert!(
            found.iter().any(|p| p.contains(says)),
            "{folder}/Cargo.toml with `{line}` was not reported ({says}): {found:#?}"
        );
    }
}

/// A small crate in memory: `planted/src/lib.rs` and its modules.
fn planted_crate(files: &[(&str, &str)]) -> imports::Crate {
    let sources: Vec<Source> =
        files.iter().map(|(p, t)| Source::new(&format!("planted/src/{p}"), t)).collect();
    let mut crates = imports::crates(&sources);
    assert_eq!(crates.len(), 1);
    let krate = crates.remove(0);
    assert!(krate.problems.is_empty(), "{:?}", krate.problems);
    krate
}

#[test]
fn a_planted_circle_is_found() {
    let lib = "//! Planted.\nmod a;\nmod b;\npub mod c;\npub use c::C;\n";
    let a = "use crate::b::B;\npub struct A(pub B);\n";
    let b = "pub struct B;\nimpl B { pub fn c(&self) -> crate::C { crate::C } }\n";
    // `C` is re-exported by lib.rs, so the arrow from b.rs goes to c.rs, which defines it.
    let c_clean = "pub struct C;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n";
    let c_circle = "pub struct C;\npub fn wrap(x: super::a::A) -> super::a::A { x }\n";

    let clean = planted_crate(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b), ("c.rs", c_clean)]);
    let arrow = |from: &str, to: &str| {
        clean
            .arrows
            .iter()
            .any(|x| x.from == format!("planted/src/{from}") && x.to == format!("planted/src/{to}"))
    };
    assert!(arrow("a.rs", "b.rs") && arrow("b.rs", "c.rs") && arrow("lib.rs", "c.rs"));
    assert!(!arrow("b.rs", "lib.rs"), "a re-export is followed to the file that defines the item");
    assert!(imports::circles(&clean).is_empty(), "test code makes no circle");

    let circle = planted_crate(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b), ("c.rs", c_circle)]);
    let circles = imports::circles(&circle);
    assert_eq!(circles.len(), 1, "{}", circles.iter().map(ToString::to_string).collect::<String>());
    assert_eq!(circles[0].files, ["planted/src/a.rs", "planted/src/b.rs", "planted/src/c.rs"]);
}

#[test]
fn a_broken_promised_order_is_found() {
    let lib = "//! The phases, each depending only on those listed before it: [`low`], then [`high`].\n\
               pub mod high;\npub mod low;\n";
    let kept = planted_crate(&[
        ("lib.rs", lib),
        ("low.rs", "pub struct Low;\n"),
        ("high.rs", "pub struct High(pub crate::low::Low);\n"),
    ]);
    let order = imports::promised_order(lib).expect("the promise is read");
    assert_eq!(order, ["low", "high"]);
    assert!(imports::order_breaks(&kept, &order).is_empty());
    let broken = planted_crate(&[
        ("lib.rs", lib),
        ("low.rs", "pub fn up() -> crate::high::High { crate::high::High }\n"),
        ("high.rs", "pub struct High;\n"),
    ]);
    let breaks = imports::order_breaks(&broken, &order);
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    assert!(breaks[0].starts_with("planted/src/low.rs -> planted/src/high.rs"), "{breaks:?}");
}
