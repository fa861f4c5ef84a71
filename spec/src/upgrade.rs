//! What moving to a CSI release asks of code written against the release before it: the diff
//! engine's findings that change the generated API (elements removed, renamed or retyped; fields,
//! enum values and RPCs added), each removed one with what replaces it. What replaces it is not in
//! a diff, so it is data: a small table per release (`spec/data/upgrading/<release>.md`) whose
//! rows name their sources, read here ([`data_for`]) and checked against the findings ([`note`]).
//! The result is plain data ([`UpgradeNote`]) for every renderer: the `csikit` crate's upgrade
//! note (codegen) and the docs site's upgrade page.

use crate::diagnostic::{Diagnostic, Severity, SourceFile};

/// The upgrade tables, by the release that made the changes they describe. A release that
/// removes something needs its row here and its file in `spec/data/upgrading/`.
pub const DATA: &[(&str, &str)] = &[("v1.13.0", include_str!("../data/upgrading/v1.13.0.md"))];

/// One source a table's rows cite, by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeSource {
    /// The key rows cite it by, e.g. `kep-1432`.
    pub key: String,
    /// What it is, as inline markdown (links as `<https://...>`).
    pub text: String,
}

/// What replaces one removed element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// The removed element's full name relative to the package, e.g.
    /// `ListVolumesResponse.VolumeStatus.volume_condition`.
    pub removed: String,
    /// What takes its place, each an element of the new release by its name relative to the
    /// package (a message, an enum value, an RPC by its simple name).
    pub replaced_by: Vec<String>,
    /// How, in a few sentences of inline markdown.
    pub how: String,
    /// The keys of the sources that say so.
    pub sources: Vec<String>,
}

/// A release's upgrade table, read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeData {
    /// The release whose changes it describes, e.g. `v1.13.0`.
    pub release: String,
    /// Where the table lives in this repository, for messages.
    pub file: String,
    /// The sources its rows cite.
    pub sources: Vec<UpgradeSource>,
    /// One row per removed element.
    pub replacements: Vec<Replacement>,
}

/// The upgrade table of `release`, or `None` when the release has none.
///
/// # Errors
///
/// Every problem in the table (a missing column, a row citing an unknown source, an empty
/// cell), each with its place in the file.
pub fn data_for(release: &str) -> Option<Result<UpgradeData, Vec<Diagnostic>>> {
    let (_, text) = DATA.iter().find(|(r, _)| *r == release)?;
    let file = SourceFile::new(format!("spec/data/upgrading/{release}.md"), *text);
    Some(parse_data(release, &file))
}

/// Reads an upgrade table: a `key | source` table of sources, then a `removed | replaced by |
/// how | sources` table of replacements (each name in backticks, several separated by commas).
///
/// # Errors
///
/// As [`data_for`].
pub fn parse_data(release: &str, file: &SourceFile) -> Result<UpgradeData, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let doc = crate::markdown::parse_doc(file, &mut diags);
    let mut errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
    let at = |span: &std::ops::Range<usize>, message: String, label: &str| {
        Diagnostic::at(Severity::Error, file, (span.start, span.len()), message, label)
    };
    let header = |t: &crate::markdown::Table| -> Vec<String> {
        t.header.iter().map(|h| h.trim().to_ascii_lowercase()).collect()
    };
    let sources_table = doc.tables.iter().find(|t| header(t) == ["key", "source"]);
    let rows_table =
        doc.tables.iter().find(|t| header(t) == ["removed", "replaced by", "how", "sources"]);
    let (Some(sources_table), Some(rows_table)) = (sources_table, rows_table) else {
        errors.push(
            Diagnostic::global(
                Severity::Error,
                format!(
                    "'{}' has no `key | source` table or no `removed | replaced by | how | sources` table",
                    file.name()
                ),
            )
            .with_help("an upgrade table names its sources, then one row per removed element"),
        );
        return Err(errors);
    };
    let mut sources = Vec::new();
    for row in &sources_table.rows {
        match row.cells.as_slice() {
            [key, text] if !key.is_empty() && !text.is_empty() => {
                sources.push(UpgradeSource { key: key.clone(), text: text.clone() });
            }
            _ => errors.push(at(&row.span, "a source needs a key and a text".into(), "this row")),
        }
    }
    let mut replacements = Vec::new();
    for row in &rows_table.rows {
        let [removed, replaced_by, how, cited] = row.cells.as_slice() else {
            errors.push(at(&row.span, "a replacement row has four cells".into(), "this row"));
            continue;
        };
        let removed = code_names(removed);
        let replaced_by = code_names(replaced_by);
        let cited: Vec<String> =
            cited.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        let [removed] = removed.as_slice() else {
            errors.push(at(
                &row.span,
                "a replacement row names one removed element, in backticks".into(),
                "this row",
            ));
            continue;
        };
        if replaced_by.is_empty() || how.is_empty() || cited.is_empty() {
            errors.push(at(
                &row.span,
                format!("the row of `{removed}` says no replacement, no how or no source"),
                "this row",
            ));
            continue;
        }
        for key in cited.iter().filter(|k| !sources.iter().any(|s| &s.key == *k)) {
            errors.push(at(
                &row.span,
                format!("the row of `{removed}` cites '{key}', which the sources table lacks"),
                "this row",
            ));
        }
        replacements.push(Replacement {
            removed: removed.clone(),
            replaced_by,
            how: how.clone(),
            sources: cited,
        });
    }
    if errors.is_empty() {
        Ok(UpgradeData {
            release: release.to_owned(),
            file: file.name().to_owned(),
            sources,
            replacements,
        })
    } else {
        Err(errors)
    }
}

/// The code spans of a cell, in order: `` `A`, `B` `` gives `A`, `B`.
fn code_names(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).filter(|s| !s.is_empty()).collect()
}

/// What happened to an element, as far as code against the generated API is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Only in the old release: code naming it stops compiling.
    Removed,
    /// Renamed: code naming the old name stops compiling.
    Renamed,
    /// Its type changed: code reading or setting it may stop compiling.
    Retyped,
    /// Only in the new release.
    Added,
}

/// One change of the generated API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeItem {
    /// What happened.
    pub change: Change,
    /// The kind of element: `service`, `rpc`, `message`, `field`, `enum`, `enum_value`.
    pub element: &'static str,
    /// Its full name relative to the package (the old name for a removal or rename).
    pub path: String,
    /// The new name, for a rename; the new type, for a retyped field.
    pub now: Option<String>,
    /// Whether the element was alpha (a removal then carries no compatibility promise).
    pub alpha: bool,
    /// What replaces a removed element, from the release's table.
    pub replacement: Option<Replacement>,
}

/// Everything code written against `from` meets when it moves to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeNote {
    /// The old release, e.g. `v1.12.0`.
    pub from: String,
    /// The new release, e.g. `v1.13.0`.
    pub to: String,
    /// The proto package, e.g. `csi.v1`.
    pub package: String,
    /// The changes, in the diff engine's order (the new spec's declaration order).
    pub items: Vec<UpgradeItem>,
    /// The sources the replacements cite.
    pub sources: Vec<UpgradeSource>,
    /// Where the replacements were read from.
    pub data_file: Option<String>,
}

impl UpgradeNote {
    /// The changes of `change`.
    pub fn items(&self, change: Change) -> impl Iterator<Item = &UpgradeItem> {
        self.items.iter().filter(move |i| i.change == change)
    }
}

/// The upgrade note from `old` (named `old_name`) to `new` (named `new_name`): the diff
/// engine's findings that touch the generated API, each removed element with its row of the
/// new release's table ([`data_for`]).
///
/// # Errors
///
/// The table's own problems; a removed element the table has no row for; a row naming an
/// element the release does not remove.
#[cfg(feature = "json")]
pub fn note(
    old: &crate::Model,
    new: &crate::Model,
    old_name: &str,
    new_name: &str,
) -> Result<UpgradeNote, Vec<Diagnostic>> {
    use crate::diff::{self, Change as Found};
    let data = data_for(new_name).transpose()?;
    let report = diff::diff(old, new, old_name, new_name);
    let relative = |path: &str| old.relative(new.relative(path)).to_owned();
    let mut items = Vec::new();
    for f in &report.findings {
        let (change, element) = match (f.change, f.element) {
            (
                Found::Removed,
                element @ ("service" | "rpc" | "message" | "field" | "enum" | "enum_value"),
            ) => (Change::Removed, element),
            (
                Found::Renamed,
                element @ ("service" | "rpc" | "message" | "field" | "enum" | "enum_value"),
            ) => (Change::Renamed, element),
            (Found::Changed, "field_type") => (Change::Retyped, "field"),
            (
                Found::Added,
                element @ ("service" | "rpc" | "message" | "field" | "enum" | "enum_value"),
            ) => (Change::Added, element),
            _ => continue,
        };
        let path = match (&f.old_path, change) {
            (Some(old_path), Change::Renamed) => relative(old_path),
            _ => relative(&f.path),
        };
        let now = match change {
            Change::Renamed => Some(relative(&f.path)),
            Change::Retyped => f.new.as_str().map(str::to_owned),
            Change::Removed | Change::Added => None,
        };
        let alpha = f.severity == diff::Severity::AlphaBreaking
            || (change == Change::Added && added_alpha(new, element, &f.path));
        items.push(UpgradeItem { change, element, path, now, alpha, replacement: None });
    }
    let mut errors = Vec::new();
    if let Some(data) = &data {
        for r in &data.replacements {
            match items.iter_mut().find(|i| i.change == Change::Removed && i.path == r.removed) {
                Some(item) => item.replacement = Some(r.clone()),
                None => errors.push(Diagnostic::global(
                    Severity::Error,
                    format!(
                        "'{}' says what replaces `{}`, which {new_name} does not remove (from {old_name})",
                        data.file, r.removed
                    ),
                )),
            }
        }
    }
    for item in items.iter().filter(|i| i.change == Change::Removed && i.replacement.is_none()) {
        errors.push(
            Diagnostic::global(
                Severity::Error,
                format!(
                    "{new_name} removes the {} `{}`, and no upgrade table says what replaces it",
                    item.element.replace('_', " "),
                    item.path
                ),
            )
            .with_help(format!(
                "add its row to spec/data/upgrading/{new_name}.md (listed in csikit_spec::upgrade::DATA), naming its sources"
            )),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(UpgradeNote {
        from: old_name.to_owned(),
        to: new_name.to_owned(),
        package: new.package.clone(),
        items,
        sources: data.as_ref().map(|d| d.sources.clone()).unwrap_or_default(),
        data_file: data.map(|d| d.file),
    })
}

/// Whether the added element at `path` (a full name) is alpha in `new`.
#[cfg(feature = "json")]
fn added_alpha(new: &crate::Model, element: &str, path: &str) -> bool {
    let (parent, last) = path.rsplit_once('.').unwrap_or(("", path));
    match element {
        "rpc" => new.method(last).is_some_and(|(s, m)| m.alpha || s.alpha),
        "service" => new.services.iter().any(|s| s.full_name == path && s.alpha),
        "message" => new.message(path).is_some_and(|m| m.alpha),
        "enum" => new.enum_type(path).is_some_and(|e| e.alpha),
        "field" => new
            .message(parent)
            .and_then(|m| m.fields.iter().find(|f| f.name == last))
            .is_some_and(|f| f.alpha),
        "enum_value" => new
            .enum_type(parent)
            .and_then(|e| e.values.iter().find(|v| v.name == last))
            .is_some_and(|v| v.alpha),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_reads() {
        for (release, _) in DATA {
            let data = data_for(release).expect("listed").unwrap_or_else(|e| panic!("{e:?}"));
            assert!(!data.replacements.is_empty(), "{release}");
        }
    }

    #[test]
    fn a_bad_table_is_reported_at_its_row() {
        let text = "| key | source |\n|---|---|\n| proto | the proto |\n\n\
                    | removed | replaced by | how | sources |\n|---|---|---|---|\n\
                    | `A` | `B` | because | kep |\n| `C` | | x | proto |\n";
        let file = SourceFile::new("t.md", text);
        let errors = parse_data("v9.9.9", &file).expect_err("two bad rows");
        let messages: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "the row of `A` cites 'kep', which the sources table lacks",
                "the row of `C` says no replacement, no how or no source"
            ]
        );
        assert!(errors.iter().all(|d| d.source.is_some() && d.span.1 > 0));
    }

    #[test]
    fn names_are_the_code_spans() {
        assert_eq!(code_names("`A`, `B.c` and `D`"), ["A", "B.c", "D"]);
        assert!(code_names("none").is_empty());
    }
}
