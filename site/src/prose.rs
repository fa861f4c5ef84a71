//! Renders spec markdown to HTML: headings get the release's anchors, identifiers in
//! backticks link to their reference entries, in-document links follow the pages they moved
//! to, and error tables are replaced by the model's rows.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use csikit_spec::Model;
use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    // Writing into a String cannot fail.
    let _ = pulldown_cmark_escape::escape_html(&mut out, text);
    out
}

/// The text an HTML fragment of the site's own making shows: tags dropped, the entities
/// [`escape`] writes undone, spaces collapsed (for the search index).
pub fn text_of(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The href from one page to a target, both relative to the language's folder.
pub fn href(from_page: &str, target: &str) -> String {
    let (path, frag) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    match frag {
        Some(f) if path.is_empty() || path == from_page => format!("#{f}"),
        _ => {
            let up = "../".repeat(from_page.matches('/').count());
            match frag {
                Some(f) => format!("{up}{path}#{f}"),
                None => format!("{up}{path}"),
            }
        }
    }
}

/// The reference page of a message or enum, relative to the language's folder.
pub fn ref_page(full_name: &str) -> String {
    format!("ref/{full_name}.html")
}

/// The page of an RPC, relative to the language's folder.
pub fn rpc_page(name: &str) -> String {
    format!("rpc/{name}.html")
}

/// Where identifiers point: RPCs, messages, enums, fields and enum values of the release shown.
#[derive(Debug, Default)]
pub struct LinkIndex {
    rpcs: HashMap<String, String>,
    types: HashMap<String, String>,
    ambiguous_simple: Vec<String>,
    fields: HashMap<String, Vec<String>>,
    message_fields: HashMap<String, Vec<String>>,
    values: HashMap<String, Vec<String>>,
    enum_values: HashMap<String, Vec<String>>,
}

impl LinkIndex {
    /// Indexes the model's names.
    pub fn new(model: &Model) -> LinkIndex {
        let mut ix = LinkIndex::default();
        for s in &model.services {
            for m in &s.methods {
                ix.rpcs.insert(m.name.clone(), rpc_page(&m.name));
            }
        }
        let prefix = format!("{}.", model.package);
        let names = model
            .messages
            .iter()
            .map(|m| m.full_name.as_str())
            .chain(model.enums.iter().map(|e| e.full_name.as_str()));
        let mut simple_seen: HashMap<String, usize> = HashMap::new();
        for full in names.clone() {
            let simple = full.rsplit('.').next().unwrap_or(full);
            *simple_seen.entry(simple.to_owned()).or_default() += 1;
        }
        for full in names {
            ix.types.insert(full.to_owned(), full.to_owned());
            if let Some(rel) = full.strip_prefix(&prefix) {
                ix.types.entry(rel.to_owned()).or_insert_with(|| full.to_owned());
            }
            let simple = full.rsplit('.').next().unwrap_or(full);
            if simple_seen.get(simple) == Some(&1) {
                ix.types.entry(simple.to_owned()).or_insert_with(|| full.to_owned());
            } else {
                ix.ambiguous_simple.push(simple.to_owned());
            }
        }
        for m in &model.messages {
            for f in &m.fields {
                ix.fields.entry(f.name.clone()).or_default().push(m.full_name.clone());
            }
            ix.message_fields
                .insert(m.full_name.clone(), m.fields.iter().map(|f| f.name.clone()).collect());
        }
        for e in &model.enums {
            for v in &e.values {
                ix.values.entry(v.name.clone()).or_default().push(e.full_name.clone());
            }
            ix.enum_values
                .insert(e.full_name.clone(), e.values.iter().map(|v| v.name.clone()).collect());
        }
        ix
    }

    /// True when `full_name` is a message or enum of the model.
    pub fn is_type(&self, full_name: &str) -> bool {
        self.message_fields.contains_key(full_name) || self.enum_values.contains_key(full_name)
    }

    fn field_target(&self, message: &str, field: &str, cx: &Prose<'_>) -> String {
        match cx.inline.iter().find(|(m, _)| m == message) {
            Some((_, prefix)) => format!("{}#{prefix}{field}", cx.page),
            None => format!("{}#{field}", ref_page(message)),
        }
    }

    /// The target (relative to the language's folder) of an identifier written in backticks.
    pub fn resolve(&self, code: &str, cx: &Prose<'_>) -> Option<String> {
        let code = code.trim().trim_end_matches("()");
        if code.is_empty() || code.contains(char::is_whitespace) {
            return None;
        }
        if let Some(page) = self.rpcs.get(code) {
            return Some(page.clone());
        }
        if let Some(full) = self.types.get(code) {
            return Some(ref_page(full));
        }
        if let Some((owner, last)) = code.rsplit_once('.') {
            let full = self.types.get(owner)?;
            if self.message_fields.get(full).is_some_and(|f| f.iter().any(|n| n == last)) {
                return Some(self.field_target(full, last, cx));
            }
            if self.enum_values.get(full).is_some_and(|v| v.iter().any(|n| n == last)) {
                return Some(format!("{}#{last}", ref_page(full)));
            }
            return None;
        }
        if let Some(owners) = self.fields.get(code) {
            let in_context = cx
                .inline
                .iter()
                .map(|(m, _)| m)
                .chain(cx.context.iter())
                .find(|m| owners.contains(m));
            let owner = in_context.or_else(|| owners.first())?;
            return Some(self.field_target(owner, code, cx));
        }
        match self.values.get(code).map(Vec::as_slice) {
            Some([only]) => Some(format!("{}#{code}", ref_page(only))),
            _ => None,
        }
    }
}

/// How to render markdown on one page.
pub struct Prose<'a> {
    /// Identifier targets.
    pub index: &'a LinkIndex,
    /// The page rendered, relative to the language's folder.
    pub page: &'a str,
    /// Messages whose field tables are on this page, with the prefix of their field ids.
    pub inline: &'a [(String, String)],
    /// Messages whose fields are preferred when a field name is ambiguous.
    pub context: &'a [String],
    /// Anchors of the rendered document to targets relative to the language's folder.
    pub anchors: &'a HashMap<String, String>,
}

/// Rendered HTML and the plain text it shows (for the search index).
#[derive(Debug, Default, Clone)]
pub struct Rendered {
    /// The HTML.
    pub html: String,
    /// The heading's text.
    pub title: String,
    /// All text, for search.
    pub text: String,
}

/// What to do with a unit's heading.
pub struct HeadingOut<'a> {
    /// The anchor the heading gets.
    pub id: &'a str,
    /// The HTML level is the markdown level minus this, kept between 1 and 6.
    pub shift: u8,
    /// The smallest HTML level (the page's first heading is the only `h1`).
    pub min_level: u8,
    /// HTML put right after the heading (notices).
    pub after: String,
}

fn level_num(level: HeadingLevel) -> u8 {
    level as u8
}

impl Prose<'_> {
    fn code_html(&self, code: &str, in_link: bool) -> String {
        let code_tag = format!("<code>{}</code>", escape(code));
        if in_link {
            return code_tag;
        }
        match self.index.resolve(code, self) {
            Some(target) => format!(
                "<a class=\"ref\" href=\"{}\">{code_tag}</a>",
                escape(&href(self.page, &target))
            ),
            None => code_tag,
        }
    }

    /// Renders inline markdown (a comment or a table cell) without block wrappers.
    pub fn inline(&self, text: &str) -> String {
        self.inline_rendered(text).html
    }

    /// Renders inline markdown without block wrappers, with the plain text it shows (a table
    /// cell's words for the search index).
    pub fn inline_rendered(&self, text: &str) -> Rendered {
        let mut r = self.render(text, 0, None, &|_| None);
        let html = r.html.trim();
        let html = html
            .strip_prefix("<p>")
            .and_then(|h| h.strip_suffix("</p>"))
            .filter(|h| !h.contains("<p>"))
            .unwrap_or(html);
        r.html = html.to_owned();
        r.text = r.text.split_whitespace().collect::<Vec<_>>().join(" ");
        r
    }

    /// Renders a block of markdown. `offset` is where `text` starts in its file, so that
    /// `tables` can replace a table (given by its range in the file) with other HTML; it also
    /// says where in the file the source it replaces ends, which is past the table markdown
    /// sees when a row was broken across lines (markdown ends the table there and reads the rest
    /// of the row as paragraphs, which the replacement already shows: they are left out).
    pub fn render(
        &self,
        text: &str,
        offset: usize,
        heading: Option<&HeadingOut<'_>>,
        tables: &dyn Fn(Range<usize>) -> Option<(String, usize)>,
    ) -> Rendered {
        let mut out = Rendered::default();
        let mut events: Vec<Event<'_>> = Vec::new();
        let mut link_stack: Vec<bool> = Vec::new();
        let mut skip_table = false;
        // Blocks that start before this (relative to `text`) belong to the table replaced last.
        let mut replaced_until = 0usize;
        let mut in_heading: Option<(u8, bool, usize)> = None;
        let mut first_done = false;
        let mut in_code_block = false;
        let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
            if skip_table {
                if matches!(event, Event::End(TagEnd::Table)) {
                    skip_table = false;
                }
                continue;
            }
            if range.start < replaced_until {
                // A whole block (every event of it starts before its end) inside the rest of a
                // broken row is skipped; one that goes on past the row is kept.
                let rest = text.get(replaced_until..range.end).unwrap_or("");
                if range.end <= replaced_until || rest.trim().is_empty() {
                    replaced_until = replaced_until.max(range.end);
                    continue;
                }
                replaced_until = 0;
            }
            match event {
                Event::Start(Tag::Table(_)) => {
                    if let Some((html, end)) = tables(offset + range.start..offset + range.end) {
                        events.push(Event::Html(html.into()));
                        skip_table = true;
                        replaced_until = end.saturating_sub(offset);
                    } else {
                        events.push(Event::Html("<div class=\"table-wrap\">".into()));
                        events.push(event);
                    }
                }
                Event::End(TagEnd::Table) => {
                    events.push(event);
                    events.push(Event::Html("</div>".into()));
                }
                Event::Start(Tag::Heading { level, .. }) => {
                    let md = level_num(level);
                    let first = heading.is_some() && !first_done;
                    let lvl = match heading {
                        Some(h) => md.saturating_sub(h.shift).clamp(h.min_level.max(1), 6),
                        None => md.clamp(2, 6),
                    };
                    in_heading = Some((lvl, first, out.text.len()));
                    let open = match heading {
                        Some(h) if first => format!("<h{lvl} id=\"{}\">", escape(h.id)),
                        _ => format!("<h{lvl}>"),
                    };
                    events.push(Event::Html(open.into()));
                }
                Event::End(TagEnd::Heading(_)) => {
                    let (lvl, first, text_start) =
                        in_heading.take().unwrap_or((2, false, out.text.len()));
                    let mut close = String::new();
                    if let (Some(h), true) = (heading, first) {
                        let _ = write!(
                            close,
                            " <a class=\"anchor\" href=\"#{}\" aria-hidden=\"true\">#</a></h{lvl}>",
                            escape(h.id)
                        );
                        close.push_str(&h.after);
                        out.title = out.text[text_start..].trim().to_owned();
                        first_done = true;
                    } else {
                        let _ = write!(close, "</h{lvl}>");
                    }
                    events.push(Event::Html(close.into()));
                    out.text.push(' ');
                }
                Event::Start(Tag::Link { dest_url, title, id, link_type }) => {
                    let target = link_target(&dest_url, self);
                    link_stack.push(target.is_some());
                    if let Some(t) = target {
                        events.push(Event::Start(Tag::Link {
                            dest_url: CowStr::from(t),
                            title,
                            id,
                            link_type,
                        }));
                    }
                }
                Event::End(TagEnd::Link) => {
                    if link_stack.pop().unwrap_or(false) {
                        events.push(event);
                    }
                }
                Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
                Event::Code(c) => {
                    out.text.push_str(&c);
                    let in_link = link_stack.iter().any(|&l| l);
                    events.push(Event::InlineHtml(self.code_html(&c, in_link).into()));
                }
                Event::Html(h) | Event::InlineHtml(h) => {
                    out.text.push_str(&h);
                    events.push(Event::Text(h));
                }
                Event::Start(Tag::CodeBlock(_)) => {
                    in_code_block = true;
                    events.push(event);
                }
                Event::End(TagEnd::CodeBlock) => {
                    in_code_block = false;
                    events.push(event);
                }
                Event::Text(t) => {
                    if !in_code_block {
                        out.text.push_str(&t);
                    }
                    events.push(Event::Text(t));
                }
                Event::SoftBreak | Event::HardBreak => {
                    out.text.push(' ');
                    events.push(event);
                }
                other => events.push(other),
            }
        }
        pulldown_cmark::html::push_html(&mut out.html, events.into_iter());
        out
    }
}

/// Where a markdown link goes on the site: in-document anchors follow their section's page;
/// links into the upstream repository (relative paths) are dropped, as the site does not hold them.
fn link_target(dest: &str, cx: &Prose<'_>) -> Option<String> {
    if let Some(anchor) = dest.strip_prefix('#') {
        let target = cx.anchors.get(anchor)?;
        return Some(href(cx.page, target));
    }
    let external = ["http://", "https://", "mailto:"].iter().any(|p| dest.starts_with(p));
    external.then(|| dest.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_relative_to_the_page() {
        assert_eq!(href("rpc/CreateVolume.html", "rpc/CreateVolume.html#x"), "#x");
        assert_eq!(
            href("rpc/CreateVolume.html", "ref/csi.v1.Topology.html"),
            "../ref/csi.v1.Topology.html"
        );
        assert_eq!(href("index.html", "rpc/Probe.html#probe"), "rpc/Probe.html#probe");
    }

    #[test]
    fn text_of_html_is_what_it_shows() {
        let html = format!("<p>A <code>{}</code> &amp; <a href=\"x\">b</a></p>", escape("<T>"));
        assert_eq!(text_of(&html), "A <T> & b");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
