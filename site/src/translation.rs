//! Splits a spec markdown into sections and pairs a translation's sections with the release's.
//!
//! Anchors come from the English structure only: a translated heading takes the anchor of the
//! English heading at the same position of the release it was translated from (the
//! translations keep the heading structure), and that English anchor is looked up in the
//! release shown. Stale means the protobuf of a paired section differs once comments are set
//! aside, so translated comments do not count as change.

use std::collections::HashMap;
use std::ops::Range;

use csikit_spec::SourceFile;
use csikit_spec::markdown::parse_doc;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// One heading and the text up to the next heading.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Heading level, 1 to 6.
    pub level: u8,
    /// The heading text, markup removed.
    pub title: String,
    /// The heading's only code span, if that is all it holds.
    pub code_only: Option<String>,
    /// The heading's GitHub-style anchor in its own document.
    pub anchor: String,
    /// Byte range in the document, heading included.
    pub range: Range<usize>,
}

/// Splits a markdown document into units; text before the first heading joins the first unit.
pub fn split_units(src: &SourceFile) -> Vec<Unit> {
    let mut diags = Vec::new();
    let doc = parse_doc(src, &mut diags);
    let len = src.text().len();
    let mut units: Vec<Unit> = Vec::with_capacity(doc.headings.len());
    for (i, h) in doc.headings.iter().enumerate() {
        let start = if i == 0 { 0 } else { h.span.start };
        let end = doc.headings.get(i + 1).map_or(len, |n| n.span.start);
        units.push(Unit {
            level: h.level,
            title: h.title.clone(),
            code_only: h.code_only.clone(),
            anchor: h.anchor.clone(),
            range: start..end,
        });
    }
    units
}

/// How far a section of the release shown is translated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// All its prose is in the translation's language.
    Translated,
    /// Some prose is translated, some is still English.
    Partly,
    /// No translated counterpart, or one with no translated prose: shown in English.
    Missing,
    /// Translated, but the translation's protobuf differs from the release shown.
    Stale,
}

impl Status {
    /// The catalog key of the status's name.
    pub fn key(self) -> &'static str {
        match self {
            Status::Translated => "status_translated",
            Status::Partly => "status_partly",
            Status::Missing => "status_missing",
            Status::Stale => "status_stale",
        }
    }

    /// The CSS class of the status.
    pub fn class(self) -> &'static str {
        match self {
            Status::Translated => "translated",
            Status::Partly => "partly",
            Status::Missing => "missing",
            Status::Stale => "stale",
        }
    }
}

/// A translation paired with the release shown.
#[derive(Debug, Clone)]
pub struct Pairing {
    /// For each unit of the release shown: the paired translated unit.
    pub pair: Vec<Option<usize>>,
    /// For each unit of the release shown: its status in the translation.
    pub status: Vec<Status>,
    /// Anchors of the translated document (and of its English source) to anchors of the release shown.
    pub anchors: HashMap<String, String>,
}

/// True for the scripts the translations use (kana, CJK ideographs, hangul, full-width forms).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xFF00..=0xFFEF)
}

/// Pairs headings of two documents by the longest common subsequence of (level, code name).
fn align(a: &[Unit], b: &[Unit]) -> Vec<Option<usize>> {
    let same = |x: &Unit, y: &Unit| x.level == y.level && x.code_only == y.code_only;
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same(&a[i], &b[j]) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = vec![None; n];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(&a[i], &b[j]) {
            out[i] = Some(j);
            i += 1;
            j += 1;
        } else if lcs[i + 1][j] >= lcs[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Pairs the translated document `tr` (translated from `source`, an English release) with
/// `shown`, the English release the site shows.
pub fn pair(
    shown: &SourceFile,
    shown_units: &[Unit],
    source: &SourceFile,
    tr: &SourceFile,
    tr_units: &[Unit],
) -> Pairing {
    let source_units = split_units(source);
    // Translated heading -> heading of its English source, by position.
    let source_to_tr = align(&source_units, tr_units);
    let mut by_anchor: HashMap<&str, usize> = HashMap::new();
    for (i, u) in source_units.iter().enumerate() {
        by_anchor.entry(u.anchor.as_str()).or_insert(i);
    }
    let shown_protos = unit_protos(shown, shown_units);
    let tr_protos = unit_protos(tr, tr_units);
    let mut pairing = Pairing { pair: Vec::new(), status: Vec::new(), anchors: HashMap::new() };
    for (k, unit) in shown_units.iter().enumerate() {
        let paired = by_anchor.get(unit.anchor.as_str()).and_then(|&s| source_to_tr[s]);
        pairing.pair.push(paired);
        let status = match paired {
            None => Status::Missing,
            Some(t) => {
                let text = &tr.text()[tr_units[t].range.clone()];
                let base = prose_status(text);
                if base != Status::Missing && shown_protos[k] != tr_protos[t] {
                    Status::Stale
                } else {
                    base
                }
            }
        };
        pairing.status.push(status);
        if let Some(t) = paired {
            pairing.anchors.insert(tr_units[t].anchor.clone(), unit.anchor.clone());
        }
        pairing.anchors.entry(unit.anchor.clone()).or_insert_with(|| unit.anchor.clone());
    }
    pairing
}

/// The protobuf of each unit, comments and layout set aside.
fn unit_protos(src: &SourceFile, units: &[Unit]) -> Vec<String> {
    let mut diags = Vec::new();
    let blocks = csikit_spec::extract::parse_proto_blocks(src, &mut diags);
    let mut out = vec![String::new(); units.len()];
    for b in &blocks {
        if let Some(i) = units.iter().position(|u| u.range.contains(&b.content.start)) {
            out[i].push_str(&proto_tokens(&src.text()[b.content.clone()]));
        }
    }
    out
}

/// Proto text without `//` comments, whitespace collapsed.
fn proto_tokens(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let code = line.split_once("//").map_or(line, |(c, _)| c);
        for word in code.split_whitespace() {
            out.push_str(word);
            out.push(' ');
        }
    }
    out
}

/// Classifies a translated unit by its prose blocks (paragraphs, list items, cells, headings):
/// a block with CJK text is translated; one with a sentence's worth of Latin letters and no CJK is not.
pub fn prose_status(text: &str) -> Status {
    let (mut translated, mut english) = (0usize, 0usize);
    let mut block = String::new();
    let mut in_code = false;
    let mut flush = |block: &mut String| {
        if block.chars().any(is_cjk) {
            translated += 1;
        } else if block.chars().filter(char::is_ascii_alphabetic).count() >= 20 {
            english += 1;
        }
        block.clear();
    };
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if !in_code => block.push_str(&t),
            Event::SoftBreak | Event::HardBreak => block.push(' '),
            Event::End(
                TagEnd::Paragraph | TagEnd::Item | TagEnd::TableCell | TagEnd::Heading(_),
            ) => flush(&mut block),
            _ => {}
        }
    }
    flush(&mut block);
    match (translated, english) {
        (0, 0) => Status::Translated,
        (0, _) => Status::Missing,
        (_, 0) => Status::Translated,
        _ => Status::Partly,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_classified_by_script() {
        assert_eq!(prose_status("## 目的\n\nこれは翻訳された段落です。\n"), Status::Translated);
        assert_eq!(
            prose_status("## Goals\n\nThis paragraph is still in English, sadly.\n"),
            Status::Missing
        );
        assert_eq!(
            prose_status(
                "## Goals\n\nThis paragraph is still in English, sadly.\n\n这是中文段落。\n"
            ),
            Status::Partly
        );
        assert_eq!(
            prose_status("#### `Probe`\n\n```protobuf\nmessage A {}\n```\n"),
            Status::Translated
        );
    }

    #[test]
    fn comments_do_not_make_a_section_stale() {
        assert_eq!(
            proto_tokens("message A { // 注释\n  string a = 1;\n}"),
            proto_tokens("message A {\n string a = 1; // x\n}")
        );
        assert_ne!(
            proto_tokens("message A { string a = 1; }"),
            proto_tokens("message A { string b = 1; }")
        );
    }
}
