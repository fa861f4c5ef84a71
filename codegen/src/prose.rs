//! The spec's prose as rustdoc: a section's blocks (`csikit_spec::prose`) and proto comments
//! printed as markdown that rustdoc reads as the spec meant it, with nothing it would warn about:
//! text escaped, in-document links reduced to their text, bare URLs made autolinks, HTML kept only
//! where its tags are simple and balanced, code blocks fenced as `text` (never doctests).

use std::fmt::Write as _;

use csikit_spec::prose::{Block, Inline, Prose};

/// Inline HTML tags kept as they are (when balanced in their block); any other is printed as text.
const KEPT_TAGS: [&str; 8] = ["sub", "sup", "em", "strong", "code", "b", "i", "br"];

/// The lines of `prose` (without the `///`), blocks separated by blank lines. `error_table`
/// is the line printed where an error table stood.
pub fn prose_lines(prose: &Prose, error_table: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    // The indentation of each open list depth: where its items' text starts.
    let mut indents: Vec<usize> = Vec::new();
    let mut previous_item = false;
    for block in &prose.blocks {
        let item = matches!(block, Block::Item { .. });
        // Items of one list follow each other; every other block starts after a blank line.
        let same_list = item && previous_item;
        if !lines.is_empty() && !same_list {
            lines.push(String::new());
        }
        if !item {
            indents.clear();
        }
        previous_item = item;
        match block {
            Block::Paragraph(runs) => push_runs(&mut lines, runs, "", ""),
            Block::Heading(runs) => {
                let text = inline(runs, html_balanced(runs));
                lines.push(format!("**{}**", text.replace('\n', " ")));
            }
            Block::Quote(runs) => push_runs(&mut lines, runs, "> ", "> "),
            Block::Item { depth, number, content } => {
                indents.truncate(*depth);
                let start = indents.last().copied().unwrap_or(0);
                while indents.len() < *depth {
                    indents.push(start);
                }
                let marker = match number {
                    Some(n) => format!("{n}. "),
                    None => "- ".to_owned(),
                };
                let pad = " ".repeat(start);
                let cont = " ".repeat(start + marker.len());
                indents.push(start + marker.len());
                push_runs(&mut lines, content, &format!("{pad}{marker}"), &cont);
            }
            Block::Code { text, .. } => {
                lines.push("```text".to_owned());
                lines.extend(text.lines().map(|l| l.trim_end().to_owned()));
                lines.push("```".to_owned());
            }
            Block::Table(rows) => table(&mut lines, rows),
            Block::ErrorTable => lines.push(error_table.to_owned()),
        }
    }
    lines
}

/// A proto comment (plain text, not markdown) as rustdoc lines: each line escaped, paragraphs
/// kept.
pub fn comment_lines(comment: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in comment.lines().map(str::trim) {
        if line.is_empty() {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push(String::new());
            }
            continue;
        }
        lines.push(escape_line_start(&escape(line)));
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// `runs` as lines, the first after `first`, the others after `rest`.
fn push_runs(lines: &mut Vec<String>, runs: &[Inline], first: &str, rest: &str) {
    let text = inline(runs, html_balanced(runs));
    for (i, line) in text.split('\n').enumerate() {
        let line = escape_line_start(line.trim_start());
        lines.push(format!("{}{line}", if i == 0 { first } else { rest }));
    }
}

fn table(lines: &mut Vec<String>, rows: &[Vec<Vec<Inline>>]) {
    let Some(width) = rows.iter().map(Vec::len).max() else { return };
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = (0..width)
            .map(|c| {
                let runs = row.get(c).map_or(&[][..], Vec::as_slice);
                inline(runs, html_balanced(runs)).replace('\n', " ")
            })
            .collect();
        lines.push(format!("| {} |", cells.join(" | ")));
        if i == 0 {
            lines.push(format!("|{}", "---|".repeat(width)));
        }
    }
}

/// Whether every kept tag among `runs`' HTML opens and closes in balance (else all of it is
/// printed as text, so rustdoc finds no unclosed tag).
fn html_balanced(runs: &[Inline]) -> bool {
    let mut open: Vec<String> = Vec::new();
    let mut ok = true;
    walk_html(runs, &mut |html| {
        let Some((name, closing, void)) = tag(html) else {
            return;
        };
        if void {
            return;
        }
        if closing {
            if open.pop().as_deref() != Some(name.as_str()) {
                ok = false;
            }
        } else {
            open.push(name);
        }
    });
    ok && open.is_empty()
}

fn walk_html(runs: &[Inline], f: &mut dyn FnMut(&str)) {
    for run in runs {
        match run {
            Inline::Html(h) => f(h),
            Inline::Emphasis(c) | Inline::Strong(c) | Inline::Link { content: c, .. } => {
                walk_html(c, f);
            }
            _ => {}
        }
    }
}

/// A kept tag: its name, whether it closes, whether it is void (`<br>`); `None` for any other
/// HTML.
fn tag(html: &str) -> Option<(String, bool, bool)> {
    let inner = html.trim().strip_prefix('<')?.strip_suffix('>')?;
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let inner = inner.trim_end_matches('/').trim();
    let name = inner.to_ascii_lowercase();
    KEPT_TAGS.contains(&name.as_str()).then(|| {
        let void = name == "br";
        (name, closing, void)
    })
}

/// `runs` as inline markdown; a line break becomes `\n` (the caller starts a new doc line).
fn inline(runs: &[Inline], html_ok: bool) -> String {
    let mut out = String::new();
    for run in runs {
        match run {
            Inline::Text(t) => out.push_str(&escape(t)),
            Inline::Code(c) => out.push_str(&code_span(c)),
            Inline::Emphasis(c) => wrap(&mut out, &inline(c, html_ok), "*"),
            Inline::Strong(c) => wrap(&mut out, &inline(c, html_ok), "**"),
            Inline::Link { url, content } => {
                let text = inline(content, html_ok);
                if url.starts_with("https://") || url.starts_with("http://") {
                    if url.contains([' ', '(', ')', '<', '>']) {
                        let _ = write!(out, "[{text}](<{}>)", url.replace(['<', '>'], ""));
                    } else {
                        let _ = write!(out, "[{text}]({url})");
                    }
                } else {
                    // A link into the spec's own document (or a relative one): rustdoc has no
                    // such page, so the text stands alone.
                    out.push_str(&text);
                }
            }
            Inline::Html(h) if html_ok && tag(h).is_some() => out.push_str(h.trim()),
            Inline::Html(h) => out.push_str(&escape(h)),
            Inline::LineBreak => out.push('\n'),
        }
    }
    out
}

/// `text` between `marker`s, with its outer spaces moved outside (`* a*` is no emphasis).
fn wrap(out: &mut String, text: &str, marker: &str) {
    let inner = text.trim();
    if inner.is_empty() {
        out.push_str(text);
        return;
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    let _ = write!(out, "{lead}{marker}{inner}{marker}{trail}");
}

/// A code span holding `code`, with a fence longer than any run of backticks in it.
fn code_span(code: &str) -> String {
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest == 0 { format!("{fence}{code}{fence}") } else { format!("{fence} {code} {fence}") }
}

/// Literal text as markdown: every character markdown could read as markup escaped (`_` only
/// where it could open or close emphasis), bare URLs made autolinks.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().take(8).collect();
        if rest.starts_with("https://") || rest.starts_with("http://") {
            let end = chars[i..]
                .iter()
                .position(|c| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`'))
                .map_or(chars.len(), |p| i + p);
            let mut url: String = chars[i..end].iter().collect();
            // Sentence punctuation after a URL is not part of it.
            let trimmed = url.trim_end_matches(['.', ',', ';', ':', ')', '\'']).len();
            let tail = url.split_off(trimmed);
            let _ = write!(out, "<{url}>");
            out.push_str(&escape(&tail));
            i = end;
            continue;
        }
        let c = chars[i];
        match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '>' | '&' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '_' => {
                let before = i.checked_sub(1).map(|j| chars[j]);
                let after = chars.get(i + 1).copied();
                let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
                if !(word(before) && word(after)) {
                    out.push('\\');
                }
                out.push('_');
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// A line's start escaped where markdown would read a block there: a list marker (`-`, `+`,
/// `1.`), a setext underline (`=`), a heading (`#`).
fn escape_line_start(line: &str) -> String {
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let after_digits = line[digits..].chars().next();
    if line.starts_with(['-', '+', '=', '#']) {
        format!("\\{line}")
    } else if digits > 0 && matches!(after_digits, Some('.' | ')')) {
        format!("{}\\{}", &line[..digits], &line[digits..])
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Inline {
        Inline::Text(s.into())
    }

    #[test]
    fn text_is_escaped_and_urls_become_autolinks() {
        assert_eq!(
            escape("a [b] <c> *d* snake_case _x_"),
            "a \\[b\\] \\<c\\> \\*d\\* snake_case \\_x\\_"
        );
        assert_eq!(
            escape("see https://example.com/a_b. Then"),
            "see <https://example.com/a_b>. Then"
        );
        assert_eq!(escape_line_start("- x"), "\\- x");
        assert_eq!(escape_line_start("12. x"), "12\\. x");
        assert_eq!(escape_line_start("x - y"), "x - y");
    }

    #[test]
    fn prose_blocks_print_as_markdown() {
        let prose = Prose {
            blocks: vec![
                Block::Paragraph(vec![
                    text("A "),
                    Inline::Link { url: "#x".into(), content: vec![Inline::Code("X".into())] },
                    text(" and "),
                    Inline::Link { url: "https://grpc.io".into(), content: vec![text("gRPC")] },
                    text("."),
                    Inline::LineBreak,
                    text("T"),
                    Inline::Html("<sub>".into()),
                    text("n"),
                    Inline::Html("</sub>".into()),
                    Inline::Html("<details>".into()),
                ]),
                Block::Item { depth: 0, number: None, content: vec![text("one")] },
                Block::Item { depth: 1, number: Some(1), content: vec![text("two")] },
                Block::ErrorTable,
                Block::Code { lang: "protobuf".into(), text: "a\n".into() },
                Block::Table(vec![vec![vec![text("a|b")]], vec![vec![Inline::Code("c".into())]]]),
            ],
        };
        let lines = prose_lines(&prose, "(errors)");
        assert_eq!(
            lines,
            [
                "A `X` and [gRPC](https://grpc.io).",
                "T<sub>n</sub>\\<details\\>",
                "",
                "- one",
                "  1. two",
                "",
                "(errors)",
                "",
                "```text",
                "a",
                "```",
                "",
                "| a\\|b |",
                "|---|",
                "| `c` |",
            ]
        );
    }

    #[test]
    fn unbalanced_html_is_text() {
        let runs = vec![text("a"), Inline::Html("<sub>".into())];
        assert_eq!(inline(&runs, html_balanced(&runs)), "a\\<sub\\>");
    }
}
