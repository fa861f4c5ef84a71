//! ARCHITECTURE.md's crate table held against every member's `Cargo.toml`.
//!
//! The table's last column names packages in backticks: the workspace crates a crate may depend on
//! (or "everything above"), the other crates it depends on, and after "never" the packages its
//! dependency tree must not hold. A crate's normal and build dependencies on workspace crates must
//! be named in its row and stand above it in the table (dependencies point down the table, which
//! lists the lowest crate first); every name in the column must be a dependency of some kind, so
//! the row stays true; a "never" name may not be a normal or build dependency of the crate or of
//! any workspace crate it depends on. Dev-dependencies may point anywhere: a test uses a crate as
//! its users do. Members under a `tests/` folder are test crates and have no row.

use std::collections::{BTreeMap, BTreeSet};

/// One row of the table.
#[derive(Debug)]
pub struct Row {
    pub package: String,
    pub folder: String,
    pub allowed: BTreeSet<String>,
    pub everything_above: bool,
    pub never: BTreeSet<String>,
}

/// One member's dependencies, by package name (a renamed dependency by the package it names).
#[derive(Debug)]
pub struct Manifest {
    pub package: String,
    pub folder: String,
    /// `[dependencies]` and `[build-dependencies]`, target-specific ones included.
    pub normal: BTreeSet<String>,
    pub dev: BTreeSet<String>,
}

/// The rows of the table under `## Crates`.
///
/// # Errors
///
/// When there is no table, or a row does not start with a package and its folder.
pub fn parse_table(markdown: &str) -> Result<Vec<Row>, String> {
    let section = markdown
        .split("\n## ")
        .find(|s| s.starts_with("Crates"))
        .ok_or("ARCHITECTURE.md has no `## Crates` section")?;
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
        let (Some(first), Some(last)) = (cells.first(), cells.last()) else { continue };
        let package =
            backticked(first).into_iter().next().ok_or(format!("no package in: {line}"))?;
        let folder = first
            .split_once('(')
            .and_then(|(_, f)| f.split_once(')'))
            .map(|(f, _)| f.trim().to_owned())
            .ok_or(format!("no (folder) in: {line}"))?;
        let (may, never) = last.split_once("never").unwrap_or((last, ""));
        rows.push(Row {
            package,
            folder,
            allowed: backticked(may).into_iter().collect(),
            everything_above: may.contains("everything above"),
            never: backticked(never).into_iter().collect(),
        });
    }
    if rows.is_empty() {
        return Err("ARCHITECTURE.md's `## Crates` section has no table rows".into());
    }
    Ok(rows)
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The members' folders, from the workspace's `Cargo.toml`.
///
/// # Errors
///
/// When it is not TOML or lists no members.
pub fn members(root_manifest: &str) -> Result<Vec<String>, String> {
    let table: toml::Table = root_manifest.parse().map_err(|e| format!("Cargo.toml: {e}"))?;
    let members = table
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .ok_or("Cargo.toml: no [workspace] members")?;
    Ok(members.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect())
}

/// A member's manifest.
///
/// # Errors
///
/// When it is not TOML or names no package.
pub fn parse_manifest(folder: &str, text: &str) -> Result<Manifest, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{folder}/Cargo.toml: {e}"))?;
    let package = table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .ok_or(format!("{folder}/Cargo.toml: no package name"))?
        .to_owned();
    let names = |t: &toml::Table, key: &str| -> Vec<String> {
        let Some(deps) = t.get(key).and_then(toml::Value::as_table) else { return Vec::new() };
        deps.iter()
            .map(|(name, spec)| {
                spec.get("package").and_then(toml::Value::as_str).unwrap_or(name).to_owned()
            })
            .collect()
    };
    // The table itself, and each `[target.'cfg(..)']` table.
    let mut scopes = vec![&table];
    if let Some(targets) = table.get("target").and_then(toml::Value::as_table) {
        scopes.extend(targets.values().filter_map(toml::Value::as_table));
    }
    let mut normal = BTreeSet::new();
    let mut dev = BTreeSet::new();
    for scope in scopes {
        normal.extend(names(scope, "dependencies"));
        normal.extend(names(scope, "build-dependencies"));
        dev.extend(names(scope, "dev-dependencies"));
    }
    Ok(Manifest { package, folder: folder.to_owned(), normal, dev })
}

/// Whether a member is a test crate (it has no row).
fn is_test_member(folder: &str) -> bool {
    folder.split('/').any(|part| part == "tests")
}

/// Every way the manifests break the table, or the table misstates the manifests.
pub fn check(rows: &[Row], manifests: &[Manifest]) -> Vec<String> {
    let mut problems = Vec::new();
    let position: BTreeMap<&str, usize> =
        rows.iter().enumerate().map(|(i, r)| (r.package.as_str(), i)).collect();
    let by_package: BTreeMap<&str, &Manifest> =
        manifests.iter().map(|m| (m.package.as_str(), m)).collect();
    for row in rows {
        match by_package.get(row.package.as_str()) {
            None => problems.push(format!(
                "ARCHITECTURE.md: the crate table has a row for `{}`, which is no workspace member",
                row.package
            )),
            Some(m) if m.folder != row.folder => problems.push(format!(
                "ARCHITECTURE.md: the crate table puts `{}` in ({}); it is in {}",
                row.package, row.folder, m.folder
            )),
            Some(_) => {}
        }
    }
    for m in manifests.iter().filter(|m| !is_test_member(&m.folder)) {
        let Some(&at) = position.get(m.package.as_str()) else {
            problems.push(format!(
                "{}/Cargo.toml: `{}` has no row in ARCHITECTURE.md's crate table",
                m.folder, m.package
            ));
            continue;
        };
        let row = &rows[at];
        for dep in m.normal.iter().filter(|d| by_package.contains_key(d.as_str())) {
            let Some(&dep_at) = position.get(dep.as_str()) else { continue };
            if dep_at >= at {
                problems.push(format!(
                    "{}/Cargo.toml: `{}` depends on `{dep}`, which stands below it in ARCHITECTURE.md's crate table: dependencies point down",
                    m.folder, m.package
                ));
            } else if !row.everything_above && !row.allowed.contains(dep) {
                problems.push(format!(
                    "{}/Cargo.toml: `{}` depends on `{dep}`, which its row of ARCHITECTURE.md's crate table does not name",
                    m.folder, m.package
                ));
            }
        }
        for name in &row.allowed {
            if !m.normal.contains(name) && !m.dev.contains(name) {
                problems.push(format!(
                    "ARCHITECTURE.md: the row of `{}` names `{name}`, which is none of its dependencies",
                    m.package
                ));
            }
        }
        for (holder, name) in reachable(m, &by_package)
            .into_iter()
            .flat_map(|h| h.normal.iter().map(move |d| (h, d)))
            .filter(|(_, d)| row.never.contains(*d))
        {
            let via = if holder.package == m.package {
                String::new()
            } else {
                format!(" through `{}`", holder.package)
            };
            problems.push(format!(
                "{}/Cargo.toml: `{}` holds `{name}`{via}, which its row of ARCHITECTURE.md's crate table says it never does",
                holder.folder, m.package
            ));
        }
    }
    problems
}

/// `m` and every workspace crate it reaches by normal and build dependencies.
fn reachable<'a>(m: &'a Manifest, by_package: &BTreeMap<&str, &'a Manifest>) -> Vec<&'a Manifest> {
    let mut seen = BTreeSet::from([m.package.as_str()]);
    let mut out = vec![m];
    let mut i = 0;
    while let Some(current) = out.get(i) {
        for dep in &current.normal {
            if let Some(next) = by_package.get(dep.as_str())
                && seen.insert(next.package.as_str())
            {
                out.push(next);
            }
        }
        i += 1;
    }
    out
}

/// The table, the workspace manifest and each member's manifest as texts, checked: what the test
/// of the real tree reads from disk, and the planted tests change in memory.
pub fn check_texts(
    architecture: &str,
    root_manifest: &str,
    manifest_of: impl Fn(&str) -> Result<String, String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let rows = match parse_table(architecture) {
        Ok(rows) => rows,
        Err(e) => return vec![e],
    };
    let folders = match members(root_manifest) {
        Ok(f) => f,
        Err(e) => return vec![e],
    };
    let mut manifests = Vec::new();
    for folder in folders {
        match manifest_of(&folder).and_then(|text| parse_manifest(&folder, &text)) {
            Ok(m) => manifests.push(m),
            Err(e) => problems.push(e),
        }
    }
    problems.extend(check(&rows, &manifests));
    problems
}
