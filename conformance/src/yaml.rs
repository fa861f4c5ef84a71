//! The YAML csi-sanity's files are written in, read line by line: block mappings of plain or
//! quoted strings, `#` comments, `---`. Flow style, anchors and block scalars are refused with
//! the line. Used by the secrets file and the volume parameter files.

use std::collections::HashMap;
use std::path::Path;

/// One `key: value` line.
pub(crate) struct Entry {
    /// 1-based.
    pub(crate) line: usize,
    /// The line starts with a space or a tab.
    pub(crate) indented: bool,
    pub(crate) key: String,
    pub(crate) value: String,
}

/// Every `key: value` line of `text`.
///
/// # Errors
///
/// A line that is not `key: value`, or holds flow style, an anchor or a block scalar.
pub(crate) fn entries(text: &str) -> anyhow::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw);
        if line.trim().is_empty() || line.trim() == "---" {
            continue;
        }
        let (key, value) = line
            .trim()
            .split_once(':')
            .ok_or_else(|| anyhow::anyhow!("line {}: expected 'key: value'", i + 1))?;
        let (key, value) = (unquote(key.trim()), unquote(value.trim()));
        if value.starts_with(['{', '[', '&', '*', '|', '>']) {
            anyhow::bail!(
                "line {}: only block mappings of plain or quoted strings are read",
                i + 1
            );
        }
        out.push(Entry { line: i + 1, indented: line.starts_with([' ', '\t']), key, value });
    }
    Ok(out)
}

/// A flat mapping of strings, as csi-sanity's `--csi.testvolumeparameters` and
/// `--csi.testvolumemutableparameters` files hold.
///
/// # Errors
///
/// A line [`entries`] refuses, or a nested one.
pub(crate) fn flat(text: &str) -> anyhow::Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for e in entries(text)? {
        if e.indented || e.value.is_empty() {
            anyhow::bail!("line {}: expected a flat mapping of 'key: value'", e.line);
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
pub fn read_flat(path: &Path) -> anyhow::Result<HashMap<String, String>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
    flat(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

fn strip_comment(line: &str) -> &str {
    // A `#` starts a comment outside quotes.
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(s: &str) -> String {
    let bytes = s.as_bytes();
    if s.len() >= 2 && (bytes[0] == b'"' || bytes[0] == b'\'') && bytes[s.len() - 1] == bytes[0] {
        s[1..s.len() - 1].to_owned()
    } else {
        s.to_owned()
    }
}
