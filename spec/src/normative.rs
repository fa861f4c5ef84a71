//! The spec's sentences: every sentence of a spec markdown, from its prose, its list items, its
//! table cells and the comments of its ```` ```protobuf ```` blocks, each with where it stands
//! (the heading above it for prose: `CreateVolume`, `CreateVolume Errors`; the declaration a
//! comment documents for the proto: `CreateVolumeRequest.capacity_range`,
//! `VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER`) and its strongest RFC 2119 keyword
//! (MUST, SHALL, REQUIRED, SHOULD, MAY and their kin), if it has one: [`read_sentences`] gives
//! them all, [`read_normative`] those with a keyword.
//!
//! An audit of what a spec obliges (csi-conformance's) reads them from here, so a sentence added
//! by a new release is never missed. A sentence is the text between two sentence ends (`. `, a
//! blank comment line, the end of a paragraph or cell), whitespace collapsed, link targets and
//! emphasis markers dropped, code spans kept with their backticks.

/// How strongly a sentence binds, by its strongest keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    /// MAY, OPTIONAL, and "NOT REQUIRED" (a permission).
    May,
    /// SHOULD, SHOULD NOT, RECOMMENDED, NOT RECOMMENDED.
    Should,
    /// MUST, MUST NOT, SHALL, SHALL NOT, REQUIRED.
    Must,
}

/// One sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normative {
    /// Where it stands: a heading's text without markup, or `Message.field` for a proto comment.
    pub section: String,
    /// The sentence.
    pub text: String,
    /// Its strongest keyword; `None`: it has none (a description, an example).
    pub strength: Option<Strength>,
    /// 1-based line of the markdown where it starts.
    pub line: u32,
    /// It comes from a proto comment (else from prose, a list item or a table cell).
    pub in_proto: bool,
}

/// Every sentence of a spec markdown that holds an RFC 2119 keyword, in document order.
pub fn read_normative(markdown: &str) -> Vec<Normative> {
    read_sentences(markdown).into_iter().filter(|n| n.strength.is_some()).collect()
}

/// Every sentence of a spec markdown, in document order (code blocks other than protobuf ones
/// left out).
pub fn read_sentences(markdown: &str) -> Vec<Normative> {
    let mut reader = Reader::default();
    let lines: Vec<&str> = markdown.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i as u32 + 1;
        let trimmed = line.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            let close = (i + 1..lines.len())
                .find(|&j| lines[j].trim_start().starts_with("```"))
                .unwrap_or(lines.len());
            reader.flush();
            if lang.trim() == "protobuf" {
                read_proto(&lines[i + 1..close], n + 1, &mut reader.out);
            }
            i = close + 1;
            continue;
        }
        if line.trim().is_empty() {
            reader.flush();
            reader.blank = true;
            i += 1;
            continue;
        }
        // An indented code block: four spaces after a blank line.
        if reader.blank && line.starts_with("    ") {
            i += 1;
            continue;
        }
        reader.blank = false;
        if trimmed.starts_with('#') {
            reader.flush();
            reader.section = plain(trimmed.trim_start_matches('#')).replace('`', "");
        } else if trimmed.starts_with('|') {
            reader.flush();
            // A table row: each cell on its own (the separator row holds no words).
            for cell in trimmed.trim_matches('|').split(" | ") {
                reader.add(cell, n, false);
            }
        } else if is_item(trimmed) {
            reader.flush();
            reader.start(item_text(trimmed), n);
        } else {
            reader.push(trimmed, n);
        }
        i += 1;
    }
    reader.flush();
    reader.out
}

/// Paragraphs and list items being gathered.
#[derive(Default)]
struct Reader {
    section: String,
    open: String,
    open_line: u32,
    blank: bool,
    out: Vec<Normative>,
}

impl Reader {
    fn start(&mut self, text: &str, line: u32) {
        self.open = text.to_owned();
        self.open_line = line;
    }

    fn push(&mut self, text: &str, line: u32) {
        if self.open.is_empty() {
            self.open_line = line;
        } else {
            self.open.push(' ');
        }
        self.open.push_str(text);
    }

    fn flush(&mut self) {
        let text = std::mem::take(&mut self.open);
        let line = self.open_line;
        self.add(&text, line, false);
    }

    fn add(&mut self, text: &str, line: u32, in_proto: bool) {
        add_sentences(&self.section, text, line, in_proto, &mut self.out);
    }
}

fn is_item(line: &str) -> bool {
    line.starts_with("* ")
        || line.starts_with("- ")
        || line
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn item_text(line: &str) -> &str {
    match line.split_once(' ') {
        Some((_, rest)) => rest,
        None => line,
    }
}

/// The sentences of `text`, added to `out`.
fn add_sentences(section: &str, text: &str, line: u32, in_proto: bool, out: &mut Vec<Normative>) {
    let text = plain(text);
    for sentence in split_sentences(&text) {
        let strength = strength(&sentence);
        out.push(Normative {
            section: section.to_owned(),
            text: sentence,
            strength,
            line,
            in_proto,
        });
    }
}

/// Markdown reduced to the words: whitespace collapsed, `[text](target)` to `text`, `**` and
/// HTML tags dropped; code spans keep their backticks.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](") {
            Some(close) if !after[..close].contains('[') => {
                let target = &after[close + 2..];
                match target.find(')') {
                    Some(end) => {
                        out.push_str(&after[..close]);
                        rest = &target[end + 1..];
                    }
                    None => {
                        out.push('[');
                        rest = after;
                    }
                }
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let out = out.replace("**", "");
    let mut no_tags = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(open) = rest.find('<') {
        let tag = &rest[open + 1..];
        let is_tag = tag.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
            && tag.find('>').is_some_and(|end| !tag[..end].contains(' '));
        no_tags.push_str(&rest[..open]);
        if is_tag {
            let end = tag.find('>').unwrap_or(0);
            rest = &tag[end + 1..];
        } else {
            no_tags.push('<');
            rest = tag;
        }
    }
    no_tags.push_str(rest);
    no_tags.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Words after which a period does not end a sentence.
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "aka", "S"];

/// Splits at a `.`, `!` or `?` followed by a space and a capital, digit, backtick, quote or
/// bracket, unless the period ends an abbreviation.
fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    for i in 0..bytes.len() {
        if !matches!(bytes[i], b'.' | b'!' | b'?') || bytes.get(i + 1) != Some(&b' ') {
            continue;
        }
        let next = text[i + 2..].chars().next().unwrap_or(' ');
        if !(next.is_uppercase() || next.is_ascii_digit() || "`\"'(*“".contains(next)) {
            continue;
        }
        let word = text[start..i].rsplit(' ').next().unwrap_or("");
        if bytes[i] == b'.' && ABBREVIATIONS.contains(&word.trim_start_matches('(')) {
            continue;
        }
        out.push(text[start..=i].trim().to_owned());
        start = i + 2;
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last.to_owned());
    }
    out
}

/// The strongest RFC 2119 keyword of a sentence (upper case, whole words).
fn strength(sentence: &str) -> Option<Strength> {
    let words: Vec<&str> = sentence
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    let mut best = None;
    for (i, w) in words.iter().enumerate() {
        let not_before = i > 0 && words[i - 1] == "NOT";
        let s = match *w {
            "MUST" | "SHALL" => Strength::Must,
            "REQUIRED" if not_before => Strength::May,
            "REQUIRED" => Strength::Must,
            "SHOULD" | "RECOMMENDED" => Strength::Should,
            "MAY" | "OPTIONAL" => Strength::May,
            _ => continue,
        };
        best = best.max(Some(s));
    }
    best
}

/// The comments of a protobuf block, each attached to the declaration it documents.
fn read_proto(lines: &[&str], first_line: u32, out: &mut Vec<Normative>) {
    // The names of the messages, enums, services and oneofs open at this point.
    let mut scope: Vec<String> = Vec::new();
    // The comment gathered so far: its paragraphs, each with its first line.
    let mut comment: Vec<(String, u32)> = Vec::new();
    let mut paragraph = String::new();
    let mut paragraph_line = 0;
    for (k, raw) in lines.iter().enumerate() {
        let n = first_line + k as u32;
        let line = raw.trim();
        if let Some(text) = line.strip_prefix("//") {
            let text = text.trim();
            if text.is_empty() {
                if !paragraph.is_empty() {
                    comment.push((std::mem::take(&mut paragraph), paragraph_line));
                }
            } else {
                if paragraph.is_empty() {
                    paragraph_line = n;
                } else {
                    paragraph.push(' ');
                }
                paragraph.push_str(text);
            }
            continue;
        }
        if !paragraph.is_empty() {
            comment.push((std::mem::take(&mut paragraph), paragraph_line));
        }
        if line.is_empty() || line.starts_with("option ") {
            continue;
        }
        let declared = declared_name(line);
        if !comment.is_empty() {
            let mut path = scope.clone();
            if let Some(name) = &declared {
                path.push(name.clone());
            }
            let section = path.join(".");
            for (text, at) in comment.drain(..) {
                add_sentences(&section, &text, at, true, out);
            }
        }
        let opens = line.ends_with('{');
        if opens {
            scope.push(declared.unwrap_or_default());
        }
        // A line such as `}` or `} // end` closes one scope (a one-line `{}` none).
        if line.starts_with('}') {
            scope.pop();
        }
    }
    let section = scope.join(".");
    if !paragraph.is_empty() {
        comment.push((paragraph, 0));
    }
    for (text, at) in comment {
        add_sentences(&section, &text, at, true, out);
    }
}

/// The name a proto line declares: `message X {` → `X`, `string name = 1;` → `name`,
/// `UNKNOWN = 0;` → `UNKNOWN`, `rpc Foo(...)` → `Foo`, `extend a.b.C {` → `C`.
fn declared_name(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let first = *words.first()?;
    let name = match first {
        "message" | "enum" | "service" | "oneof" | "rpc" | "extend" => {
            let w = words.get(1)?;
            let w = w.split(['(', '{']).next().unwrap_or(w);
            w.rsplit('.').next().unwrap_or(w)
        }
        _ => {
            let eq = words.iter().position(|w| *w == "=" || w.starts_with('='))?;
            let name = words.get(eq.checked_sub(1)?)?;
            name.split('=').next().unwrap_or(name)
        }
    };
    Some(name.trim_end_matches(['{', ';']).to_owned()).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_lists_tables_and_proto_comments() {
        let md = "# Title\n\n## `CreateVolume`\n\nThis operation MUST be idempotent.\nIt is fine, e.g. here. A [link](http://x) SHALL go.\n\n\
* An item MAY be\n  continued here.\n\n| Condition | Code |\n|---|---|\n| Bad | The SP MUST NOT do it. |\n\n\
```protobuf\nmessage Foo {\n  // This field is REQUIRED.\n  // It MUST be set.\n  //\n  // The Plugin SHOULD care.\n  string name = 1;\n\n  message Bar {\n    enum Mode {\n      // Nothing normative.\n      UNKNOWN = 0;\n      // It MUST NOT be used.\n      OLD = 1 [(alpha_enum_value) = true];\n    }\n  }\n  // Trailing MAY.\n}\n```\n\n    code MUST be skipped\n\nIt is NOT REQUIRED to do this.\n";
        let got: Vec<(String, String, Strength, bool)> = read_normative(md)
            .into_iter()
            .filter_map(|n| Some((n.section, n.text, n.strength?, n.in_proto)))
            .collect();
        let want = [
            ("CreateVolume", "This operation MUST be idempotent.", Strength::Must, false),
            ("CreateVolume", "A link SHALL go.", Strength::Must, false),
            ("CreateVolume", "An item MAY be continued here.", Strength::May, false),
            ("CreateVolume", "The SP MUST NOT do it.", Strength::Must, false),
            ("Foo.name", "This field is REQUIRED.", Strength::Must, true),
            ("Foo.name", "It MUST be set.", Strength::Must, true),
            ("Foo.name", "The Plugin SHOULD care.", Strength::Should, true),
            ("Foo.Bar.Mode.OLD", "It MUST NOT be used.", Strength::Must, true),
            ("Foo", "Trailing MAY.", Strength::May, true),
            ("CreateVolume", "It is NOT REQUIRED to do this.", Strength::May, false),
        ];
        let want: Vec<(String, String, Strength, bool)> =
            want.iter().map(|(s, t, k, p)| ((*s).into(), (*t).into(), *k, *p)).collect();
        assert_eq!(got, want);
        let all = read_sentences(md);
        assert!(all.iter().any(|n| n.text == "It is fine, e.g. here." && n.strength.is_none()));
        assert!(!all.iter().any(|n| n.text.contains("code MUST be skipped")));
    }

    #[test]
    fn sentences_split_at_ends_only() {
        assert_eq!(
            split_sentences("The CO MUST ensure n >= 1. The SP MUST ensure x >= 1"),
            ["The CO MUST ensure n >= 1.", "The SP MUST ensure x >= 1"]
        );
        assert_eq!(split_sentences("(e.g. NFS share). Next"), ["(e.g. NFS share).", "Next"]);
        assert_eq!(split_sentences("version v1.2.3 is here"), ["version v1.2.3 is here"]);
    }
}
