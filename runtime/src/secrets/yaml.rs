//! The YAML csi-sanity's files are written in, read line by line: block mappings of plain or
//! quoted strings, `#` comments, `---`. Flow style, anchors, aliases, tags, block scalars and
//! deeper nesting are refused with the line, never guessed.
//!
//! Values are read as csi-sanity's YAML library (go-yaml v2) reads them into Go strings: a
//! scalar's text as written (`123` and `true` stay `"123"` and `"true"`), quotes and escapes
//! taken off, and a null (`~`, `null`, nothing) the empty string. A `#` starts a comment only at
//! the start of a line or after a space, so `pa#ss` is a value whole.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// What is wrong with a YAML file, and on which line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// 1-based; 0 when the file could not be read at all.
    pub line: usize,
    /// What is wrong (never a value from the file: it may be a secret).
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for YamlError {}

pub(crate) fn error(line: usize, message: impl Into<String>) -> YamlError {
    YamlError { line, message: message.into() }
}

/// One `key: value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// 1-based.
    pub(crate) line: usize,
    /// How many spaces the line starts with.
    pub(crate) indent: usize,
    pub(crate) key: String,
    pub(crate) value: String,
}

/// Every `key: value` line of `text`, in order.
///
/// # Errors
///
/// A line that is not `key: value`, or holds a tab in its indentation, flow style, an anchor,
/// an alias, a tag or a block scalar, or a quoted scalar that does not end.
pub(crate) fn entries(text: &str) -> Result<Vec<Entry>, YamlError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = strip_comment(raw);
        let body = line.trim_start_matches(' ');
        if body.starts_with('\t') {
            return Err(error(n, "a tab indents this line; YAML indents with spaces"));
        }
        let body = body.trim_end();
        if body.is_empty() || body == "---" || body == "..." {
            continue;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        let (key, rest) = scalar(body, n, true)?;
        let rest = rest
            .strip_prefix(':')
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']))
            .ok_or_else(|| error(n, "expected 'key: value'"))?;
        let rest = rest.trim();
        let value = if rest.is_empty() {
            String::new()
        } else {
            let (value, after) = scalar(rest, n, false)?;
            if !after.trim().is_empty() {
                return Err(error(n, "text after a quoted value"));
            }
            value
        };
        out.push(Entry { line: n, indent, key, value });
    }
    Ok(out)
}

/// One scalar at the start of `s` and what follows it. A plain key ends at `: ` or a trailing
/// `:`; a plain value runs to the end of the line.
fn scalar(s: &str, line: usize, key: bool) -> Result<(String, &str), YamlError> {
    match s.as_bytes().first() {
        Some(b'"') => double_quoted(&s[1..], line),
        Some(b'\'') => single_quoted(&s[1..], line),
        Some(b'{' | b'[') => {
            Err(error(line, "flow style ({ } or [ ]) is not read; write a block mapping"))
        }
        Some(b'&' | b'*') => Err(error(line, "anchors and aliases are not read")),
        Some(b'!') => Err(error(line, "tags are not read")),
        Some(b'|' | b'>') => Err(error(line, "block scalars (| or >) are not read")),
        Some(b'%' | b'@' | b'`' | b',' | b']' | b'}' | b'#') => {
            Err(error(line, "a plain scalar cannot start with this character; quote it"))
        }
        Some(b'-' | b'?' | b':') if s.len() == 1 || s[1..].starts_with([' ', '\t']) => {
            Err(error(line, "sequences and complex keys are not read; write a block mapping"))
        }
        _ if key => {
            let end = mapping_colon(s).ok_or_else(|| error(line, "expected 'key: value'"))?;
            Ok((s[..end].trim_end().to_owned(), &s[end..]))
        }
        _ => {
            let v = s.trim_end();
            if mapping_colon(v).is_some() {
                return Err(error(line, "a ': ' inside a plain value; quote the value"));
            }
            let null = matches!(v, "~" | "null" | "Null" | "NULL");
            Ok((if null { String::new() } else { v.to_owned() }, ""))
        }
    }
}

/// Where a plain scalar's `:` that starts a mapping value is: one followed by a space, a tab or
/// the end of the line.
fn mapping_colon(s: &str) -> Option<usize> {
    s.match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| s[i + 1..].is_empty() || s[i + 1..].starts_with([' ', '\t']))
}

fn single_quoted(s: &str, line: usize) -> Result<(String, &str), YamlError> {
    let mut out = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if chars.peek().is_some_and(|&(_, c)| c == '\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            return Ok((out, &s[i + 1..]));
        }
        out.push(c);
    }
    Err(error(line, "a single-quoted scalar does not end on its line"))
}

fn double_quoted(s: &str, line: usize) -> Result<(String, &str), YamlError> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &s[i + 1..])),
            '\\' => {
                let (_, e) = chars.next().ok_or_else(|| error(line, "a '\\' ends the line"))?;
                let simple = match e {
                    '0' => Some('\0'),
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    't' | '\t' => Some('\t'),
                    'n' => Some('\n'),
                    'v' => Some('\u{b}'),
                    'f' => Some('\u{c}'),
                    'r' => Some('\r'),
                    'e' => Some('\u{1b}'),
                    ' ' => Some(' '),
                    '"' => Some('"'),
                    '/' => Some('/'),
                    '\\' => Some('\\'),
                    'N' => Some('\u{85}'),
                    '_' => Some('\u{a0}'),
                    'L' => Some('\u{2028}'),
                    'P' => Some('\u{2029}'),
                    _ => None,
                };
                if let Some(c) = simple {
                    out.push(c);
                    continue;
                }
                let digits = match e {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => return Err(error(line, format!("unknown escape '\\{e}'"))),
                };
                let hex: String = chars.by_ref().take(digits).map(|(_, c)| c).collect();
                let c = (hex.len() == digits)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32)
                    .ok_or_else(|| error(line, format!("a bad '\\{e}' escape")))?;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Err(error(line, "a double-quoted scalar does not end on its line"))
}

/// `line` without its comment: a `#` outside quotes at the start or after a space or tab.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (c, quote) {
            // Escapes inside quotes: `\x` in double quotes, `''` in single ones.
            ('\\', Some('"')) => {
                chars.next();
            }
            ('\'', Some('\'')) if chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                chars.next();
            }
            ('"' | '\'', None) if matches!(prev, ' ' | '\t' | ':') => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) if matches!(prev, ' ' | '\t') => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// A flat mapping of strings, as csi-sanity's `--csi.testvolumeparameters` and
/// `--csi.testvolumemutableparameters` files hold.
///
/// # Errors
///
/// A line [`entries`] refuses, or a nested one.
pub fn parse_flat(text: &str) -> Result<HashMap<String, String>, YamlError> {
    let mut out = HashMap::new();
    for e in entries(text)? {
        if e.indent > 0 || e.value.is_empty() {
            return Err(error(e.line, "expected a flat mapping of 'key: value'"));
        }
        out.insert(e.key, e.value);
    }
    Ok(out)
}

/// Reads a flat mapping from a file.
///
/// # Errors
///
/// When the file cannot be read or does not parse (`path: line N: why`).
pub fn read_flat(path: &Path) -> Result<HashMap<String, String>, YamlError> {
    parse_flat(&read(path)?).map_err(|e| in_file(path, e))
}

/// The text of a file, or why it cannot be read.
pub(crate) fn read(path: &Path) -> Result<String, YamlError> {
    std::fs::read_to_string(path)
        .map_err(|e| error(0, format!("cannot read '{}': {e}", path.display())))
}

/// `e` with the file's name in front.
pub(crate) fn in_file(path: &Path, e: YamlError) -> YamlError {
    YamlError { line: 0, message: format!("{}: {e}", path.display()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> (String, String) {
        let e = entries(text).expect("reads");
        assert_eq!(e.len(), 1, "{e:?}");
        (e[0].key.clone(), e[0].value.clone())
    }

    #[test]
    fn scalars_read_as_go_yaml_reads_them_into_strings() {
        assert_eq!(one("a: b"), ("a".into(), "b".into()));
        assert_eq!(one("a: 123"), ("a".into(), "123".into()));
        assert_eq!(one("a: ~"), ("a".into(), String::new()));
        assert_eq!(one("a:"), ("a".into(), String::new()));
        assert_eq!(one("a: pa#ss # comment"), ("a".into(), "pa#ss".into()));
        assert_eq!(one("url: http://x:80/y"), ("url".into(), "http://x:80/y".into()));
        assert_eq!(one("a:b: c"), ("a:b".into(), "c".into()));
        assert_eq!(one(r#""k y": "a\"b\\c\u00e9 # not""#), ("k y".into(), "a\"b\\cé # not".into()));
        assert_eq!(one("'k': 'it''s'"), ("k".into(), "it's".into()));
    }

    #[test]
    fn what_is_not_read_is_refused_with_its_line() {
        for (text, line) in [
            ("a: b\nc: {d: e}", 2),
            ("a: [1]", 1),
            ("a: &x b", 1),
            ("a: *x", 1),
            ("a: !!str b", 1),
            ("a: |", 1),
            ("a: b\n\tc: d", 2),
            ("a: \"open", 1),
            ("a: 'x' y", 1),
            ("just words", 1),
            ("a: \"\\q\"", 1),
            ("a: b: c", 1),
            ("a: - b", 1),
            ("- a: b", 1),
            ("a: @b", 1),
        ] {
            let e = entries(text).expect_err(text);
            assert_eq!(e.line, line, "{text}: {e}");
        }
    }

    #[test]
    fn flat_mappings_refuse_nesting() {
        assert_eq!(parse_flat("iops: 1\n# c\n---\nx: 'y'").map(|m| m.len()), Ok(2));
        assert_eq!(parse_flat("iops: 1\nnested:\n  a: b\n").map_err(|e| e.line), Err(2));
    }
}
