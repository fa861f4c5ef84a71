//! The prose of a section as plain data: blocks of inline runs, so a generator can print the
//! spec's own text in another markup (rustdoc on a server trait's method) without reading
//! markdown itself. What the Model holds elsewhere is left out: ```protobuf blocks (the
//! messages and their comments) and error tables (the RPCs' `errors`), the latter marked where
//! they stood.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::model::{Model, Section};
use crate::provenance::SourceKind;

/// A section's prose, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prose {
    /// The blocks, the section's own heading left out.
    pub blocks: Vec<Block>,
}

/// One block of prose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// A paragraph.
    Paragraph(Vec<Inline>),
    /// A heading inside the section (`##### The ready_to_use Parameter`).
    Heading(Vec<Inline>),
    /// A list item's text; `depth` 0 for a top-level list, `number` for an ordered one.
    Item {
        /// How deep the list is nested.
        depth: usize,
        /// The item's number in an ordered list; `None` in a bullet list.
        number: Option<u64>,
        /// The item's text (its paragraphs joined by line breaks).
        content: Vec<Inline>,
    },
    /// A block quote's text.
    Quote(Vec<Inline>),
    /// A code block other than the spec's ```protobuf blocks, with its info string.
    Code {
        /// The fence's info string (empty for an indented block).
        lang: String,
        /// The code, verbatim.
        text: String,
    },
    /// A table other than an error table: the header row, then the body rows; each cell inline.
    Table(Vec<Vec<Vec<Inline>>>),
    /// Where an error table stood: its rows are the Model's `errors` of the RPC (or the general
    /// ones), so they are not repeated here.
    ErrorTable,
}

/// An inline run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    /// Text, literal (no markup left in it).
    Text(String),
    /// A code span's content.
    Code(String),
    /// Emphasised text.
    Emphasis(Vec<Inline>),
    /// Strong text.
    Strong(Vec<Inline>),
    /// A link: its destination as written (`#anchor`, `https://...`) and its text.
    Link {
        /// The destination.
        url: String,
        /// The link text.
        content: Vec<Inline>,
    },
    /// Raw inline HTML as written (`<sub>`, `</sub>`).
    Html(String),
    /// A line break in the source (a soft break: one sentence per line in the spec).
    LineBreak,
}

impl Model {
    /// The prose of the section with `anchor`, from after its heading to the next heading of the
    /// same or a higher level; `None` when the model has no such section or no prose of its own
    /// (a model read from a `.proto` alone or a descriptor set: see
    /// [`Model::carried_section_prose`] for the prose it carries).
    pub fn section_prose(&self, anchor: &str) -> Option<Prose> {
        if self.source.kind != SourceKind::Spec {
            return None;
        }
        // The sections are the headings of the document in the model's language: the English
        // markdown (file 0), or the translation (the last file) for a translated model.
        let file_index = if self.lang == "en" { 0 } else { self.files.len().checked_sub(1)? };
        self.prose_in(file_index, anchor)
    }

    /// The prose of the section with `anchor` in the markdown of the release this model's
    /// sections were carried from, with that release's name: the older release's words, to be
    /// shown as such. `None` when nothing was carried or there is no such section.
    pub fn carried_section_prose(&self, anchor: &str) -> Option<(Prose, &str)> {
        let carried = self.source.carried.as_ref()?;
        Some((self.prose_in(carried.markdown, anchor)?, carried.from.as_str()))
    }

    /// The prose of the section `anchor` of `sections`, read from file `file_index`.
    fn prose_in(&self, file_index: usize, anchor: &str) -> Option<Prose> {
        let at = self.sections.iter().position(|s| s.anchor == anchor)?;
        let file = self.files.get(file_index)?;
        let section = &self.sections[at];
        let end_line = self.sections[at + 1..]
            .iter()
            .find(|s: &&Section| s.level <= section.level)
            .map(|s| s.line);
        let start = file.line_offset(section.line);
        let end = end_line.map_or(file.text().len(), |l| file.line_offset(l));
        let text = file.text().get(start..end)?;
        // Error rows found in this file, by offset: a table holding one is an error table.
        let rows: Vec<usize> = self
            .services
            .iter()
            .flat_map(|s| s.methods.iter().flat_map(|m| &m.errors))
            .chain(&self.general_errors)
            .filter(|r| r.span.file == file_index)
            .map(|r| r.span.offset)
            .collect();
        Some(read(text, start, &rows))
    }
}

/// What is being read: where inline runs go.
#[derive(Default)]
struct Reader {
    blocks: Vec<Block>,
    /// Inline runs being collected, innermost container last.
    stack: Vec<Vec<Inline>>,
    /// Open emphasis, strong and link containers, to close into their parent.
    open: Vec<Container>,
    /// Open lists: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// The item being read: its depth and number.
    item: Option<(usize, Option<u64>)>,
    quote: usize,
    heading: bool,
    /// The table being read (rows of cells), and whether it is an error table.
    table: Option<(Vec<Vec<Vec<Inline>>>, bool)>,
    /// Inside a code block: its info string and text, or a protobuf block being skipped.
    code: Option<(String, String)>,
    /// The section's own heading has been passed.
    past_own_heading: bool,
}

enum Container {
    Emphasis,
    Strong,
    Link(String),
}

/// Reads `text` (starting at byte `base` of its file) into blocks; `error_rows` are the offsets
/// of error-table rows in that file.
fn read(text: &str, base: usize, error_rows: &[usize]) -> Prose {
    let mut r = Reader::default();
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter();
    for (event, range) in parser {
        r.event(event, &range, base, error_rows);
    }
    Prose { blocks: r.blocks }
}

impl Reader {
    fn push(&mut self, inline: Inline) {
        match self.stack.last_mut() {
            Some(runs) => runs.push(inline),
            None => self.stack.push(vec![inline]),
        }
    }

    fn take_runs(&mut self) -> Vec<Inline> {
        let mut runs = self.stack.pop().unwrap_or_default();
        while runs.last() == Some(&Inline::LineBreak) {
            runs.pop();
        }
        runs
    }

    /// Ends the paragraph-like run being collected as the block its place calls for.
    fn flush(&mut self) {
        let runs = self.take_runs();
        if runs.is_empty() {
            return;
        }
        let block = if self.heading {
            Block::Heading(runs)
        } else if let Some((depth, number)) = self.item {
            Block::Item { depth, number, content: runs }
        } else if self.quote > 0 {
            Block::Quote(runs)
        } else {
            Block::Paragraph(runs)
        };
        self.blocks.push(block);
    }

    fn event(&mut self, event: Event<'_>, range: &Range<usize>, base: usize, error_rows: &[usize]) {
        if let Some((lang, text)) = &mut self.code {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, text) = (std::mem::take(lang), std::mem::take(text));
                    if lang != "protobuf" {
                        self.blocks.push(Block::Code { lang, text });
                    }
                    self.code = None;
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(Tag::Heading { .. }) => {
                self.flush();
                self.heading = true;
            }
            Event::End(TagEnd::Heading(_)) => {
                if self.past_own_heading {
                    self.flush();
                } else {
                    self.stack.clear();
                    self.past_own_heading = true;
                }
                self.heading = false;
            }
            // A second paragraph of a list item continues the item on a new line.
            Event::Start(Tag::Paragraph)
                if self.item.is_some() && self.stack.last().is_some_and(|r| !r.is_empty()) =>
            {
                self.push(Inline::LineBreak);
            }
            Event::End(TagEnd::Paragraph) if self.item.is_none() && self.table.is_none() => {
                self.flush();
            }
            Event::Start(Tag::List(start)) => {
                self.flush();
                self.item = None;
                self.lists.push(start);
            }
            Event::End(TagEnd::List(_)) => {
                self.flush();
                self.item = None;
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let number = self.lists.last_mut().and_then(|n| {
                    let this = *n;
                    if let Some(v) = n {
                        *v += 1;
                    }
                    this
                });
                self.item = Some((depth, number));
            }
            Event::End(TagEnd::Item) => {
                self.flush();
                self.item = None;
            }
            Event::Start(Tag::BlockQuote(_)) => {
                self.flush();
                self.quote += 1;
            }
            Event::End(TagEnd::BlockQuote(_)) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.trim().to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Event::Start(Tag::HtmlBlock) => self.flush(),
            Event::End(TagEnd::HtmlBlock) => self.flush(),
            Event::Start(Tag::Table(_)) => {
                self.flush();
                let (start, end) = (base + range.start, base + range.end);
                let errors = error_rows.iter().any(|o| (start..end).contains(o));
                self.table = Some((Vec::new(), errors));
            }
            Event::End(TagEnd::Table) => {
                if let Some((rows, errors)) = self.table.take() {
                    self.blocks.push(if errors { Block::ErrorTable } else { Block::Table(rows) });
                }
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                if let Some((rows, _)) = &mut self.table {
                    rows.push(Vec::new());
                }
            }
            Event::Start(Tag::TableCell) => self.stack.push(Vec::new()),
            Event::End(TagEnd::TableCell) => {
                let runs = self.take_runs();
                if let Some(row) = self.table.as_mut().and_then(|(rows, _)| rows.last_mut()) {
                    row.push(runs);
                }
            }
            Event::Start(Tag::Emphasis) => self.open_container(Container::Emphasis),
            Event::Start(Tag::Strong) => self.open_container(Container::Strong),
            Event::Start(Tag::Link { dest_url, .. }) => {
                self.open_container(Container::Link(dest_url.to_string()));
            }
            Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Link) => {
                let content = self.stack.pop().unwrap_or_default();
                let inline = match self.open.pop() {
                    Some(Container::Emphasis) => Inline::Emphasis(content),
                    Some(Container::Strong) => Inline::Strong(content),
                    Some(Container::Link(url)) => Inline::Link { url, content },
                    None => return,
                };
                self.push(inline);
            }
            Event::Text(t) => self.push(Inline::Text(t.to_string())),
            Event::Code(c) => self.push(Inline::Code(c.to_string())),
            Event::InlineHtml(h) | Event::Html(h) => self.push(Inline::Html(h.to_string())),
            Event::SoftBreak | Event::HardBreak => self.push(Inline::LineBreak),
            _ => {}
        }
    }

    fn open_container(&mut self, container: Container) {
        self.open.push(container);
        self.stack.push(Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(md: &str) -> Vec<Block> {
        read(md, 0, &[]).blocks
    }

    #[test]
    fn protobuf_left_out_subheadings_and_lists_kept() {
        let md = "#### `Rpc`\n\nA plugin MUST *do* it.\nSee [x](#x).\n\n```protobuf\nmessage A {}\n```\n\n\
                  ##### Sub\n\n- one\n  - two\n\n1. first\n2. second\n";
        let b = blocks(md);
        assert_eq!(
            b[0],
            Block::Paragraph(vec![
                Inline::Text("A plugin MUST ".into()),
                Inline::Emphasis(vec![Inline::Text("do".into())]),
                Inline::Text(" it.".into()),
                Inline::LineBreak,
                Inline::Text("See ".into()),
                Inline::Link { url: "#x".into(), content: vec![Inline::Text("x".into())] },
                Inline::Text(".".into()),
            ])
        );
        assert_eq!(b[1], Block::Heading(vec![Inline::Text("Sub".into())]));
        assert_eq!(
            b[2],
            Block::Item { depth: 0, number: None, content: vec![Inline::Text("one".into())] }
        );
        assert_eq!(
            b[3],
            Block::Item { depth: 1, number: None, content: vec![Inline::Text("two".into())] }
        );
        assert_eq!(
            b[5],
            Block::Item { depth: 0, number: Some(2), content: vec![Inline::Text("second".into())] }
        );
        assert_eq!(b.len(), 6);
    }

    #[test]
    fn error_tables_are_marked_other_tables_kept() {
        let md = "#### `Rpc`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n| Condition | gRPC Code |\n|---|---|\n| X | 5 NOT_FOUND |\n";
        let row = md.find("| X").expect("row");
        let b = read(md, 100, &[100 + row]).blocks;
        assert_eq!(b.len(), 2);
        assert!(matches!(&b[0], Block::Table(rows) if rows.len() == 2 && rows[1].len() == 2));
        assert_eq!(b[1], Block::ErrorTable);
    }
}
