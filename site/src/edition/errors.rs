//! The error tables: which table each row of a model is in (an RPC's or the general one), the
//! anchor every row gets, the table's HTML and the search entry of each row shown. Rows carried
//! from an older release (a release read from its proto alone) go the same way, their table
//! and search entries marked with the release they come from.

use std::ops::Range;

use csikit_spec::{ErrorRow, Model};

use super::search::ErrorEntry;
use super::version::{Lang, Site};
use crate::pages::{ErrorRowHtml, ErrorTable, render};
use crate::prose::Prose;

/// A row of an error table, with the table it is in and its anchor.
pub(super) struct PlacedRow<'m> {
    /// The RPC whose table holds the row; `None` for the general error table.
    pub owner: Option<&'m str>,
    pub row: &'m ErrorRow,
    /// The row's `id`: the same in every language of a version, since it is made of the RPC and
    /// the code, not the condition's words.
    pub id: String,
}

/// The anchor of the `nth` row (from 1) with `code` in `owner`'s table: `CreateVolume.error.NOT_FOUND`,
/// `ControllerPublishVolume.error.NOT_FOUND.2`, `error.INVALID_ARGUMENT` in the general table.
/// The code rather than the position names a row, so the anchor survives a release that adds or
/// reorders rows (the release menu carries it from one release to another).
fn row_anchor(owner: Option<&str>, code: &str, nth: usize) -> String {
    let mut id = match owner {
        Some(rpc) => format!("{rpc}.error.{code}"),
        None => format!("error.{code}"),
    };
    if nth > 1 {
        id.push_str(&format!(".{nth}"));
    }
    id
}

/// One table's rows, placed: the anchors count rows with the same code in table order.
pub(super) fn place<'m>(
    owner: Option<&'m str>,
    rows: impl IntoIterator<Item = &'m ErrorRow>,
) -> Vec<PlacedRow<'m>> {
    let mut placed: Vec<PlacedRow<'m>> = Vec::new();
    for row in rows {
        let nth = 1 + placed.iter().filter(|p| p.row.code == row.code).count();
        placed.push(PlacedRow { owner, row, id: row_anchor(owner, &row.code, nth) });
    }
    placed
}

/// Every error row of a model in its table: per RPC, then the general table.
pub(super) fn placed_rows(model: &Model) -> Vec<PlacedRow<'_>> {
    let mut out: Vec<PlacedRow<'_>> = model
        .services
        .iter()
        .flat_map(|s| &s.methods)
        .flat_map(|m| place(Some(&m.name), &m.errors))
        .collect();
    out.extend(place(None, &model.general_errors));
    out
}

/// The rows of the error table markdown finds at `range` of `model`'s file `file` (whose text
/// is `text`), and where in the file they end. A row the spec broke across lines ends that table
/// early for markdown, while the model has read it whole: rows of the same RPC that follow with
/// nothing but line breaks in between are the same table.
pub(super) fn table_at<'m>(
    model: &'m Model,
    file: usize,
    text: &str,
    range: Range<usize>,
) -> (Vec<PlacedRow<'m>>, usize) {
    let mut rows: Vec<PlacedRow<'m>> = Vec::new();
    let mut end = range.end;
    for p in placed_rows(model).into_iter().filter(|p| p.row.span.file == file) {
        let start = p.row.span.offset;
        let inside = range.contains(&start);
        let follows = rows.last().is_some_and(|last| last.owner == p.owner)
            && start >= end
            && text.get(end..start).is_some_and(|gap| gap.trim().is_empty());
        if inside || follows {
            end = end.max(start + p.row.span.len);
            rows.push(p);
        }
    }
    (rows, end)
}

impl Site<'_> {
    /// An error table's HTML, and the search entry of each of its rows (linking to the row on
    /// `prose.page`).
    pub(super) fn error_table(
        &self,
        lang: &Lang<'_>,
        rows: &[PlacedRow<'_>],
        prose: &Prose<'_>,
    ) -> (String, Vec<ErrorEntry>) {
        let mut html_rows = Vec::with_capacity(rows.len());
        let mut entries = Vec::with_capacity(rows.len());
        for p in rows {
            let r = p.row;
            let condition = prose.inline_rendered(&r.condition);
            let description = prose.inline_rendered(&r.description);
            entries.push(ErrorEntry {
                owner: p.owner.unwrap_or_default().to_owned(),
                code: r.code.clone(),
                number: r.code_number,
                condition: condition.text,
                url: format!("{}#{}", prose.page, p.id),
                description: description.text,
                carried_from: self.prose.carried_from().map(str::to_owned),
            });
            html_rows.push(ErrorRowHtml {
                id: p.id.clone(),
                condition: condition.html,
                code: format!("{} {}", r.code_number, r.code),
                description: description.html,
                recovery: prose.inline(&r.recovery),
                lang: (r.lang != lang.lang).then(|| r.lang.clone()),
            });
        }
        let recovery = html_rows.iter().any(|r| !r.recovery.is_empty());
        // The Model of a release read from its proto alone states no error row of its own:
        // every row it has was carried, and its table says from where.
        let caption = self.prose.carried_from().map_or(String::new(), |from| {
            lang.cat.fill("errors_carried_caption", &[("from", from)])
        });
        (render(&ErrorTable { cat: &lang.cat, rows: &html_rows, recovery, caption }), entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(code: &str) -> ErrorRow {
        ErrorRow {
            condition: String::new(),
            code: code.to_owned(),
            code_number: 0,
            description: String::new(),
            recovery: String::new(),
            lang: "en".to_owned(),
            span: Default::default(),
        }
    }

    #[test]
    fn anchors_name_the_rpc_and_code_and_count_repeated_codes() {
        let rows = [row("NOT_FOUND"), row("ALREADY_EXISTS"), row("NOT_FOUND")];
        let ids: Vec<String> =
            place(Some("ControllerPublishVolume"), &rows).into_iter().map(|p| p.id).collect();
        assert_eq!(
            ids,
            [
                "ControllerPublishVolume.error.NOT_FOUND",
                "ControllerPublishVolume.error.ALREADY_EXISTS",
                "ControllerPublishVolume.error.NOT_FOUND.2"
            ]
        );
        let general: Vec<String> = place(None, &rows[..1]).into_iter().map(|p| p.id).collect();
        assert_eq!(general, ["error.NOT_FOUND"]);
    }
}
