//! Rustdoc from spec comments: visible markers for presence, size, secret and alpha, and code
//! blocks re-tagged `text` so rustdoc does not run spec examples as doctests.

use std::fmt::Write as _;

use csikit_spec::{Field, Presence, SizeLimit};

/// The marker line appended to a field's rustdoc.
pub fn field_marker(field: &Field) -> String {
    let mut parts = Vec::new();
    parts.push(match field.presence {
        Presence::Required => "**Presence:** REQUIRED".to_owned(),
        Presence::Optional => "**Presence:** OPTIONAL".to_owned(),
        Presence::Unspecified => "**Presence:** not stated".to_owned(),
        Presence::Unknown => "**Presence:** unknown (the source has no comments)".to_owned(),
    });
    match field.size_limit {
        SizeLimit::None => {}
        SizeLimit::General { bytes } => {
            parts.push(format!("**Size limit:** {bytes} bytes (general limit)"))
        }
        SizeLimit::Max { bytes } => parts.push(format!("**Size limit:** {bytes} bytes")),
        SizeLimit::MaxTotal { bytes } => {
            parts.push(format!("**Size limit:** {bytes} bytes in total"))
        }
        SizeLimit::AtLeast { bytes } => {
            parts.push(format!("**Size limit:** none; receivers accept at least {bytes} bytes"))
        }
    }
    if field.secret {
        parts.push("**Secret:** values are redacted in `Debug` output".to_owned());
    }
    if field.alpha {
        parts.push(ALPHA_NOTE.to_owned());
    }
    parts.join(" · ")
}

/// The note on every alpha element.
pub const ALPHA_NOTE: &str = "**Alpha:** may change or be removed in a later CSI release; refused under `AlphaPolicy::Refuse`";

/// A `#[doc]` attribute pair (blank line, then `text`) for prost-build's attribute hooks.
pub fn doc_attribute(text: &str) -> String {
    let mut out = String::from("#[doc = \"\"]");
    for line in wrap(text, 84) {
        out.push_str(&format!("\n#[doc = {:?}]", format!(" {line}")));
    }
    out
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word stands alone).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// Re-tags code blocks in `///` comments: fences without a language or with a non-Rust one
/// become ```` ```text ````, and indented code blocks are fenced as `text`.
pub fn retag_code_blocks(src: &str) -> String {
    let mut out = String::with_capacity(src.len() + 1024);
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if doc_content(lines[i]).is_none() {
            let _ = writeln!(out, "{}", lines[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && doc_content(lines[i]).is_some() {
            i += 1;
        }
        retag_block(&lines[start..i], &mut out);
    }
    out
}

/// `(indent prefix, content)` of a `///` line.
fn doc_content(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    trimmed.strip_prefix("///").map(|c| (indent, c.strip_prefix(' ').unwrap_or(c)))
}

/// The columns `s`'s leading blanks reach, a tab to the next multiple of 4 as in CommonMark
/// (v1.13.0's proto indents comment lines with tabs, which rustdoc reads as code too).
fn indent_width(s: &str) -> usize {
    let mut width = 0;
    for c in s.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width += 4 - width % 4,
            _ => break,
        }
    }
    width
}

/// `s` without its first 4 columns of indentation.
fn unindent4(s: &str) -> &str {
    let mut width = 0;
    for (i, c) in s.char_indices() {
        if width >= 4 {
            return &s[i..];
        }
        match c {
            ' ' => width += 1,
            '\t' => width += 4 - width % 4,
            _ => return &s[i..],
        }
    }
    ""
}

fn retag_block(block: &[&str], out: &mut String) {
    let mut in_fence = false;
    let mut in_indented = false;
    let mut prev_blank = true;
    let mut prefix = "";
    for line in block {
        let Some((ind, content)) = doc_content(line) else { continue };
        prefix = ind;
        let blank = content.trim().is_empty();
        if in_indented && !blank && indent_width(content) < 4 {
            let _ = writeln!(out, "{ind}/// ```");
            in_indented = false;
        }
        let fence = content.trim_start();
        if !in_indented && fence.starts_with("```") {
            if in_fence {
                in_fence = false;
                let _ = writeln!(out, "{ind}/// ```");
            } else {
                in_fence = true;
                let lang = fence.trim_start_matches('`').trim();
                if lang == "rust" {
                    let _ = writeln!(out, "{line}");
                } else {
                    let _ = writeln!(out, "{ind}/// ```text");
                }
            }
            prev_blank = false;
            continue;
        }
        if !in_fence && !in_indented && prev_blank && !blank && indent_width(content) >= 4 {
            let _ = writeln!(out, "{ind}/// ```text");
            in_indented = true;
        }
        if in_indented {
            let _ = match unindent4(content).trim_end() {
                "" => writeln!(out, "{ind}///"),
                text => writeln!(out, "{ind}/// {text}"),
            };
        } else if blank {
            let _ = writeln!(out, "{ind}///");
        } else {
            let _ = writeln!(out, "{line}");
        }
        prev_blank = blank;
    }
    if in_fence || in_indented {
        let _ = writeln!(out, "{prefix}/// ```");
    }
}

#[cfg(test)]
mod tests {
    use super::retag_code_blocks;

    #[test]
    fn fences_and_indented_blocks_become_text() {
        let src = "/// Example:\n///\n///     {\"a\": 1}\n///     {\"b\": 2}\n/// after\n/// ```\n/// x\n/// ```\nstruct A;\n";
        let want = "/// Example:\n///\n/// ```text\n/// {\"a\": 1}\n/// {\"b\": 2}\n/// ```\n/// after\n/// ```text\n/// x\n/// ```\nstruct A;\n";
        assert_eq!(retag_code_blocks(src), want);
    }

    /// A tab reaches column 4: rustdoc would run such a block as a doctest (v1.13.0's proto
    /// indents its examples with tabs after a blank comment line).
    #[test]
    fn tab_indented_blocks_become_text() {
        let src = "/// Example 1:\n///\n/// \tthe Plugin may\n/// \t  set it.\n///\n/// after\nstruct A;\n";
        let want = "/// Example 1:\n///\n/// ```text\n/// the Plugin may\n///   set it.\n///\n/// ```\n/// after\nstruct A;\n";
        assert_eq!(retag_code_blocks(src), want);
    }
}
