//! What moving to a CSI release asks of code written against the release before it: the diff
//! engine's findings that change the generated API (elements removed, renamed or retyped; fields,
//! enum values and RPCs added), each removed one with what replaces it. What replaces it is not in
//! a diff, so it is data: a small table per release (`spec/data/upgrading/<release>.md`) whose
//! rows name their sources, who in the CO reads what the removed element carried, and the proto
//! words they stand on, read here ([`data_for`]) and checked against the two releases
//! ([`check_data`]) and the findings ([`note`]). It is the one table of what replaces what: the
//! `csikit` crate's upgrade note (codegen) and the docs site's "Upgrading to" guide both render
//! its rows.

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

/// Who in the CO reads what a removed element carried, and what it does in the new release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The component, e.g. `kubelet`.
    pub who: String,
    /// What it does, in a few sentences of inline markdown.
    pub does: String,
    /// The keys of the sources that say so.
    pub sources: Vec<String>,
}

/// Words of a comment of the new release's proto that say what a row says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoQuote {
    /// The element whose comment holds them, by its name relative to the package.
    pub element: String,
    /// The words, as the comment has them (whitespace aside).
    pub says: String,
    /// Where the quote is in the table's file (`file:line`), for messages.
    pub at: String,
}

/// What replaces one removed element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// The removed element's full name relative to the package, e.g.
    /// `ListVolumesResponse.VolumeStatus.volume_condition`.
    pub removed: String,
    /// What takes its place, each an element of the new release by its name relative to the
    /// package (a message, a field, an enum value, an RPC by its simple name).
    pub replaced_by: Vec<String>,
    /// How, in a few sentences of inline markdown.
    pub how: String,
    /// The keys of the sources that say so.
    pub sources: Vec<String>,
    /// Who reads what the removed element carried (the table's "Readers").
    pub readers: Vec<Reader>,
    /// The proto's words that say it (the table's "Proto words").
    pub quotes: Vec<ProtoQuote>,
    /// Where the row is in the table's file (`file:line`), for messages.
    pub at: String,
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
/// Every problem in the table (a missing table or column, a row citing an unknown source, an
/// empty cell, a reader or quote for a row the table lacks), each with its place in the file.
pub fn data_for(release: &str) -> Option<Result<UpgradeData, Vec<Diagnostic>>> {
    let (_, text) = DATA.iter().find(|(r, _)| *r == release)?;
    let file = SourceFile::new(format!("spec/data/upgrading/{release}.md"), *text);
    Some(parse_data(release, &file))
}

/// The headers of the four tables of an upgrade file, in order.
const SOURCES: [&str; 2] = ["key", "source"];
const REPLACEMENTS: [&str; 4] = ["removed", "replaced by", "how", "sources"];
const READERS: [&str; 4] = ["removed", "reader", "does", "sources"];
const QUOTES: [&str; 3] = ["removed", "element", "says"];

/// Reads an upgrade table: a `key | source` table of sources; a `removed | replaced by | how |
/// sources` table of replacements (each name in backticks, several separated by commas); a
/// `removed | reader | does | sources` table of who reads what each removed element carried;
/// and a `removed | element | says` table of the proto's words a row stands on.
///
/// # Errors
///
/// As [`data_for`].
pub fn parse_data(release: &str, file: &SourceFile) -> Result<UpgradeData, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let doc = crate::markdown::parse_doc(file, &mut diags);
    let mut errors: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
    let at = |span: &std::ops::Range<usize>, message: String| {
        Diagnostic::at(Severity::Error, file, (span.start, span.len()), message, "this row")
    };
    let line =
        |span: &std::ops::Range<usize>| format!("{}:{}", file.name(), file.line_col(span.start).0);
    let table = |want: &[&str]| {
        doc.tables.iter().find(|t| {
            t.header
                .iter()
                .map(|h| h.trim().to_ascii_lowercase())
                .eq(want.iter().map(|w| w.to_string()))
        })
    };
    let tables = [table(&SOURCES), table(&REPLACEMENTS), table(&READERS), table(&QUOTES)];
    let [Some(sources_table), Some(rows_table), Some(readers_table), Some(quotes_table)] = tables
    else {
        errors.push(
            Diagnostic::global(
                Severity::Error,
                format!(
                    "'{}' lacks one of its tables: `{}`, `{}`, `{}`, `{}`",
                    file.name(),
                    SOURCES.join(" | "),
                    REPLACEMENTS.join(" | "),
                    READERS.join(" | "),
                    QUOTES.join(" | ")
                ),
            )
            .with_help("an upgrade table names its sources, then one row per removed element, its readers and the proto's words"),
        );
        return Err(errors);
    };
    let mut sources = Vec::new();
    for row in &sources_table.rows {
        match row.cells.as_slice() {
            [key, text] if !key.is_empty() && !text.is_empty() => {
                sources.push(UpgradeSource { key: key.clone(), text: text.clone() });
            }
            _ => errors.push(at(&row.span, "a source needs a key and a text".into())),
        }
    }
    let cited = |cell: &str, what: &str, span: &std::ops::Range<usize>, errors: &mut Vec<_>| {
        let keys: Vec<String> =
            cell.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
        for key in keys.iter().filter(|k| !sources.iter().any(|s| &s.key == *k)) {
            errors.push(at(span, format!("{what} cites '{key}', which the sources table lacks")));
        }
        keys
    };
    let mut replacements: Vec<Replacement> = Vec::new();
    for row in &rows_table.rows {
        let [removed, replaced_by, how, keys] = row.cells.as_slice() else {
            errors.push(at(&row.span, "a replacement row has four cells".into()));
            continue;
        };
        let removed = match <[String; 1]>::try_from(code_names(removed)) {
            Ok([removed]) => removed,
            Err(_) => {
                errors.push(at(
                    &row.span,
                    "a replacement row names one removed element, in backticks".into(),
                ));
                continue;
            }
        };
        let replaced_by = code_names(replaced_by);
        let what = format!("the row of `{removed}`");
        let keys = cited(keys, &what, &row.span, &mut errors);
        if replaced_by.is_empty() || how.is_empty() || keys.is_empty() {
            errors.push(at(&row.span, format!("{what} says no replacement, no how or no source")));
            continue;
        }
        if replacements.iter().any(|r| r.removed == removed) {
            errors.push(at(&row.span, format!("`{removed}` has a second row")));
            continue;
        }
        replacements.push(Replacement {
            removed,
            replaced_by,
            how: how.clone(),
            sources: keys,
            readers: Vec::new(),
            quotes: Vec::new(),
            at: line(&row.span),
        });
    }
    for row in &readers_table.rows {
        let [removed, who, does, keys] = row.cells.as_slice() else {
            errors.push(at(&row.span, "a reader row has four cells".into()));
            continue;
        };
        let removed = code_names(removed).join(", ");
        let who = code_names(who).join(", ");
        let what = format!("the reader of `{removed}`");
        let keys = cited(keys, &what, &row.span, &mut errors);
        if who.is_empty() || does.is_empty() || keys.is_empty() {
            errors.push(at(
                &row.span,
                format!("{what} names no reader in backticks, no deed or no source"),
            ));
            continue;
        }
        match replacements.iter_mut().find(|r| r.removed == removed) {
            Some(r) => r.readers.push(Reader { who, does: does.clone(), sources: keys }),
            None => errors.push(at(
                &row.span,
                format!("{what}: the replacements table has no row of `{removed}`"),
            )),
        }
    }
    for row in &quotes_table.rows {
        let [removed, element, says] = row.cells.as_slice() else {
            errors.push(at(&row.span, "a proto words row has three cells".into()));
            continue;
        };
        let removed = code_names(removed).join(", ");
        let element = code_names(element).join(", ");
        if element.is_empty() || says.is_empty() {
            errors.push(at(
                &row.span,
                format!(
                    "the words quoted for `{removed}` name no element in backticks or no words"
                ),
            ));
            continue;
        }
        let quote = ProtoQuote { element, says: says.clone(), at: line(&row.span) };
        match replacements.iter_mut().find(|r| r.removed == removed) {
            Some(r) => r.quotes.push(quote),
            None => errors.push(at(&row.span, format!("the words quoted for `{removed}`: the replacements table has no row of `{removed}`"))),
        }
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

/// The full name of `name` (relative to `model`'s package, an RPC by its simple name) in
/// `model`, with its comment; `None` when `model` has no such element.
pub fn element(model: &crate::Model, name: &str) -> Option<(String, String)> {
    if let Some((service, method)) = model.method(name) {
        return Some((format!("{}.{}", service.full_name, method.name), method.comment.clone()));
    }
    let full = format!("{}.{name}", model.package);
    if let Some(m) = model.message(&full) {
        return Some((full, m.comment.clone()));
    }
    if let Some(e) = model.enum_type(&full) {
        return Some((full, e.comment.clone()));
    }
    let (owner, last) = full.rsplit_once('.')?;
    let comment = if let Some(m) = model.message(owner) {
        m.fields.iter().find(|f| f.name == last)?.comment.clone()
    } else if let Some(e) = model.enum_type(owner) {
        e.values.iter().find(|v| v.name == last)?.comment.clone()
    } else {
        let service = model.services.iter().find(|s| s.full_name == owner)?;
        service.methods.iter().find(|m| m.name == last)?.comment.clone()
    };
    Some((full, comment))
}

/// Text with its whitespace collapsed, so quoted words compare across the comment's line breaks.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks a release's table against the release (`new`) and the one before (`old`): every
/// replacement is an element of `new`, and every quote's words are in the comment of its
/// element in `new`. (Which elements are removed is [`note`]'s check, from the diff engine.)
///
/// `old_name` is the release before, for messages.
pub fn check_data(
    data: &UpgradeData,
    old: &crate::Model,
    new: &crate::Model,
    old_name: &str,
) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    let mut error = |at: &str, message: String| {
        errors.push(Diagnostic::global(Severity::Error, format!("{at}: {message}")));
    };
    let (from, to) = (old_name, &data.release);
    for r in &data.replacements {
        if element(old, &r.removed).is_none() {
            error(
                &r.at,
                format!("`{}` is not an element of the release before ({from})", r.removed),
            );
        }
        for name in r.replaced_by.iter().filter(|n| element(new, n).is_none()) {
            error(
                &r.at,
                format!("`{}` is replaced by `{name}`, which {to} does not have", r.removed),
            );
        }
        for q in &r.quotes {
            match element(new, &q.element) {
                None => error(&q.at, format!("`{}` is not an element of {to}", q.element)),
                Some((_, comment)) if !words(&comment).contains(&words(&q.says)) => error(
                    &q.at,
                    format!(
                        "the comment of `{}` in {to} does not say '{}'",
                        q.element,
                        words(&q.says)
                    ),
                ),
                Some(_) => {}
            }
        }
    }
    errors
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
        errors.extend(check_data(data, old, new, old_name));
        for r in &data.replacements {
            match items.iter_mut().find(|i| i.change == Change::Removed && i.path == r.removed) {
                Some(item) => item.replacement = Some(r.clone()),
                None => errors.push(Diagnostic::global(
                    Severity::Error,
                    format!(
                        "{}: says what replaces `{}`, which {new_name} does not remove (from {old_name})",
                        r.at, r.removed
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
                    | `A` | `B` | because | kep |\n| `C` | | x | proto |\n\n\
                    | removed | reader | does | sources |\n|---|---|---|---|\n\
                    | `D` | `kubelet` | reads | proto |\n\n\
                    | removed | element | says |\n|---|---|---|\n\
                    | `A` | `B` | words |\n| `E` | `B` | words |\n";
        let file = SourceFile::new("t.md", text);
        let errors = parse_data("v9.9.9", &file).expect_err("four bad rows");
        let messages: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "the row of `A` cites 'kep', which the sources table lacks",
                "the row of `C` says no replacement, no how or no source",
                "the reader of `D`: the replacements table has no row of `D`",
                "the words quoted for `E`: the replacements table has no row of `E`",
            ]
        );
        assert!(errors.iter().all(|d| d.source.is_some() && d.span.1 > 0));
        let lines: Vec<u32> = errors
            .iter()
            .map(|d| d.source.as_ref().map_or(0, |f| f.line_col(d.span.0).0))
            .collect();
        assert_eq!(lines, [7, 8, 12, 17]);
    }

    #[test]
    fn a_file_without_its_tables_is_reported() {
        let file = SourceFile::new("t.md", "| key | source |\n|---|---|\n| proto | the proto |\n");
        let errors = parse_data("v9.9.9", &file).expect_err("no rows table");
        assert!(errors[0].message.contains("lacks one of its tables"), "{errors:?}");
    }

    #[test]
    fn readers_and_quotes_join_their_row() {
        let text = "| key | source |\n|---|---|\n| proto | the proto |\n\n\
                    | removed | replaced by | how | sources |\n|---|---|---|---|\n\
                    | `A` | `B`, `C` | so | proto |\n\n\
                    | removed | reader | does | sources |\n|---|---|---|---|\n\
                    | `A` | `kubelet` | reads | proto |\n\n\
                    | removed | element | says |\n|---|---|---|\n\
                    | `A` | `B` | the words |\n";
        let data = parse_data("v9.9.9", &SourceFile::new("t.md", text)).expect("reads");
        let [row] = data.replacements.as_slice() else { panic!("{data:?}") };
        assert_eq!((row.removed.as_str(), row.at.as_str()), ("A", "t.md:7"));
        assert_eq!(row.replaced_by, ["B", "C"]);
        assert_eq!(row.readers[0].who, "kubelet");
        assert_eq!((row.quotes[0].element.as_str(), row.quotes[0].at.as_str()), ("B", "t.md:15"));
    }

    #[test]
    fn names_are_the_code_spans() {
        assert_eq!(code_names("`A`, `B.c` and `D`"), ["A", "B.c", "D"]);
        assert!(code_names("none").is_empty());
    }
}
