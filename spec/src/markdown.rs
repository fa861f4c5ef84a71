//! Reads the prose of a spec markdown: headings and tables, with their source positions.
//!
//! Tables are found with pulldown-cmark, then read again line by line from their source so
//! that a row broken across lines (which markdown silently turns into a paragraph) is
//! recovered and reported instead of lost.

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::diagnostic::{Diagnostic, Severity, SourceFile};

/// A heading of the document.
#[derive(Debug, Clone)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// Text with markup removed.
    pub title: String,
    /// The text of the heading if it is nothing but one code span (`` `CreateVolume` ``).
    pub code_only: Option<String>,
    /// GitHub-style anchor, unique in the document.
    pub anchor: String,
    /// Byte range of the heading line.
    pub span: Range<usize>,
}

/// A row of a table: its cells as raw inline markdown, trimmed.
#[derive(Debug, Clone)]
pub struct Row {
    /// The cells.
    pub cells: Vec<String>,
    /// Byte range of the row's source (several lines if it was broken).
    pub span: Range<usize>,
}

/// A pipe table.
#[derive(Debug, Clone)]
pub struct Table {
    /// Header cells.
    pub header: Vec<String>,
    /// Body rows.
    pub rows: Vec<Row>,
    /// Byte range of the whole table source.
    pub span: Range<usize>,
}

/// The parts of a markdown document the model needs, in document order.
#[derive(Debug, Clone, Default)]
pub struct Doc {
    /// Headings.
    pub headings: Vec<Heading>,
    /// Tables.
    pub tables: Vec<Table>,
}

/// Parses headings and tables.
pub fn parse_doc(src: &SourceFile, diags: &mut Vec<Diagnostic>) -> Doc {
    let text = src.text();
    let mut doc = Doc::default();
    let mut slugs: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<OpenHeading> = None;
    let mut consumed = 0usize;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some(OpenHeading {
                    level: heading_level(level),
                    span: range,
                    ..Default::default()
                });
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(OpenHeading { level, span, title, codes, other }) = heading.take() {
                    let title = title.trim().to_owned();
                    let code_only = (codes.len() == 1 && other == 0).then(|| codes[0].clone());
                    let anchor = unique_slug(&mut slugs, &title);
                    doc.headings.push(Heading { level, title, code_only, anchor, span });
                }
            }
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.title.push_str(&t);
                    if !t.trim().is_empty() {
                        h.other += 1;
                    }
                }
            }
            Event::Code(c) => {
                if let Some(h) = heading.as_mut() {
                    h.title.push_str(&c);
                    h.codes.push(c.to_string());
                }
            }
            Event::Start(Tag::Table(_)) if range.start >= consumed => {
                let table = read_table(src, range.start, diags);
                consumed = table.span.end;
                doc.tables.push(table);
            }
            _ => {}
        }
    }
    doc
}

/// A heading being read: its text so far, its code spans, and how many other text pieces.
#[derive(Default)]
struct OpenHeading {
    level: u8,
    span: Range<usize>,
    title: String,
    codes: Vec<String>,
    other: usize,
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// GitHub's heading anchor: lowercase, letters, digits, `-` and `_` kept, spaces to `-`.
pub fn slug(title: &str) -> String {
    title
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

fn unique_slug(seen: &mut HashMap<String, usize>, title: &str) -> String {
    let base = slug(title);
    let n = seen.entry(base.clone()).or_insert(0);
    let anchor = if *n == 0 { base } else { format!("{base}-{n}") };
    *n += 1;
    anchor
}

/// Splits a table row into trimmed cells; `|` inside code spans or escaped does not split.
pub fn split_cells(line: &str) -> Vec<String> {
    let body = line.trim();
    let body = body.strip_prefix('|').unwrap_or(body);
    let body = match body.strip_suffix('|') {
        Some(b) if !b.ends_with('\\') => b,
        _ => body,
    };
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut in_code = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                cur.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut cur).trim().to_owned()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_owned());
    cells
}

fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Reads the table that starts on the line at `start`, recovering rows broken across lines.
fn read_table(src: &SourceFile, start: usize, diags: &mut Vec<Diagnostic>) -> Table {
    let text = src.text();
    let mut lines = LineCursor { text, pos: start };
    let (header_range, header_line) = lines.next().unwrap_or((start..start, ""));
    let header = split_cells(header_line);
    let width = header.len();
    // The delimiter row; pulldown-cmark only reports a table when it is there.
    let mut end = header_range.end;
    if let Some((r, l)) = lines.peek()
        && is_delimiter_row(l)
    {
        lines.next();
        end = r.end;
    }
    let mut rows = Vec::new();
    while let Some((range, line)) = lines.peek() {
        if !line.trim_start().starts_with('|') {
            break;
        }
        lines.next();
        let mut joined = line.trim().to_owned();
        let mut row_span = range.clone();
        let mut cells = split_cells(&joined);
        if cells.len() < width && !joined.ends_with('|') {
            // A row broken across lines: join what follows until the row has all its cells.
            let save = lines.pos;
            let mut ok = false;
            while let Some((r, l)) = lines.peek() {
                let t = l.trim();
                if t.starts_with('|') || t.starts_with('#') || t.starts_with("```") {
                    break;
                }
                lines.next();
                if t.is_empty() {
                    continue;
                }
                joined.push(' ');
                joined.push_str(t);
                row_span.end = r.end;
                cells = split_cells(&joined);
                if cells.len() >= width && t.ends_with('|') {
                    ok = true;
                    break;
                }
            }
            if ok {
                diags.push(
                    Diagnostic::at(
                        Severity::Warning,
                        src,
                        (row_span.start, row_span.len()),
                        "table row broken across lines",
                        "this row continues over several lines",
                    )
                    .with_help(
                        "keep each table row on one line; the row was read by joining its lines",
                    ),
                );
            } else {
                lines.pos = save;
                row_span = range.clone();
                cells = split_cells(line);
                diags.push(Diagnostic::at(
                    Severity::Warning,
                    src,
                    (range.start, range.len()),
                    format!("table row has {} cells, the table has {width}", cells.len()),
                    "short row",
                ));
            }
        }
        end = row_span.end;
        rows.push(Row { cells, span: row_span });
    }
    Table { header, rows, span: start..end }
}

/// Iterates over source lines from a byte position, yielding each line's range and text.
struct LineCursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> LineCursor<'a> {
    fn peek(&self) -> Option<(Range<usize>, &'a str)> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let len = rest.find('\n').unwrap_or(rest.len());
        Some((self.pos..self.pos + len, &rest[..len]))
    }

    fn next(&mut self) -> Option<(Range<usize>, &'a str)> {
        let item = self.peek()?;
        self.pos = (item.0.end + 1).min(self.text.len());
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_code_spans_whole() {
        assert_eq!(split_cells("| a `x|y` | b \\| c |"), vec!["a `x|y`", "b | c"]);
    }

    #[test]
    fn slugs_match_github() {
        assert_eq!(slug("`CreateVolume`"), "createvolume");
        assert_eq!(slug("CreateVolume Errors"), "createvolume-errors");
        assert_eq!(slug("`REQUIRED` vs. `OPTIONAL`"), "required-vs-optional");
        assert_eq!(slug("MVP のゴール"), "mvp-のゴール");
    }
}
