//! The audit of what the spec asks of a plugin (`AUDIT.md`, beside this crate's sources, read
//! in at build time): every MUST-level sentence, every error-table row and every other sentence
//! a case cites, with whom it binds and the cases that check it, or why none does. `--list`
//! prints the error-table rows no case checks from it, `--audit` its coverage; its tests hold it
//! to the spec (the corpus's `spec.md`, and the new comments of a release read from its proto
//! alone, both read by `csikit_spec::normative`), to the Model's error
//! rows and to the suite's own list of cases and sentences, so that neither side can drift.

use std::fmt::Write as _;

/// The audit, as written.
const TEXT: &str = include_str!("../AUDIT.md");

/// Where the suite stands on a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Cases check it.
    Checked,
    /// It cannot be checked from outside a plugin.
    Outside,
    /// It binds the CO, the supervisor or the spec's own wording.
    NotThePlugins,
    /// The suite could check it and does not yet.
    Left,
}

impl Verdict {
    fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "checked" => Verdict::Checked,
            "outside" => Verdict::Outside,
            "co" => Verdict::NotThePlugins,
            "left" => Verdict::Left,
            _ => return None,
        })
    }
}

/// One row of the audit.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The part of the spec it stands in (the `## ` heading above its table).
    pub(crate) part: String,
    pub(crate) section: String,
    /// The sentence, or `row: <condition> → <code>` for an error-table row.
    pub(crate) text: String,
    pub(crate) binds: String,
    /// MUST, SHOULD, `—` or `row`.
    pub(crate) level: String,
    pub(crate) verdict: Verdict,
    /// The cases (`; ` between them) when checked, else why not.
    pub(crate) by: String,
}

impl Row {
    /// The RPC and condition of an error-table row (`Error Scheme` for the general table).
    pub(crate) fn error_row(&self) -> Option<(&str, &str)> {
        let rest = self.text.strip_prefix("row: ")?;
        let (condition, _code) = rest.rsplit_once(" → ")?;
        let rpc = self.section.strip_suffix(" Errors").unwrap_or(&self.section);
        Some((rpc, condition))
    }

    /// The cases that check it.
    #[cfg(test)]
    pub(crate) fn cases(&self) -> impl Iterator<Item = &str> {
        let checked = self.verdict == Verdict::Checked;
        self.by.split("; ").filter(move |c| checked && !c.is_empty())
    }
}

/// The audit's rows and its coverage table (`part`, counts of checked, outside, co, left, all).
pub(crate) struct Audit {
    pub(crate) rows: Vec<Row>,
    pub(crate) coverage: Vec<(String, [usize; 5])>,
}

/// Splits a table line into its cells (`\|` is a `|` inside a cell).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                if let Some(s) = out.last_mut() {
                    s.push('|');
                }
            }
            '|' => out.push(String::new()),
            c => {
                if let Some(s) = out.last_mut() {
                    s.push(c);
                }
            }
        }
    }
    out.into_iter().map(|s| s.trim().to_owned()).collect()
}

/// Reads the audit.
///
/// # Errors
///
/// A line of a table that is not a row of the audit's shape, with its line number.
pub(crate) fn read() -> Result<Audit, String> {
    let mut audit = Audit { rows: Vec::new(), coverage: Vec::new() };
    let mut part = String::new();
    for (n, line) in TEXT.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            part = heading.trim().to_owned();
            continue;
        }
        if !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        let c = cells(line);
        let bad = || format!("AUDIT.md line {}: not a row of the audit: {line}", n + 1);
        if part == "Coverage" {
            if c[0] == "part" {
                continue;
            }
            let mut counts = [0; 5];
            for (i, count) in counts.iter_mut().enumerate() {
                *count = c.get(i + 1).and_then(|x| x.parse().ok()).ok_or_else(bad)?;
            }
            audit.coverage.push((c[0].clone(), counts));
            continue;
        }
        if c.first().map(String::as_str) == Some("§") {
            continue;
        }
        let [section, text, binds, level, verdict, by] =
            <[String; 6]>::try_from(c).map_err(|_| bad())?;
        let verdict = Verdict::parse(&verdict).ok_or_else(bad)?;
        audit.rows.push(Row { part: part.clone(), section, text, binds, level, verdict, by });
    }
    Ok(audit)
}

/// The coverage of the audit's rows, counted: per part, then `all`.
pub(crate) fn count(rows: &[Row]) -> Vec<(String, [usize; 5])> {
    let mut out: Vec<(String, [usize; 5])> = Vec::new();
    let mut all = [0; 5];
    for r in rows {
        if out.last().is_none_or(|(p, _)| *p != r.part) {
            out.push((r.part.clone(), [0; 5]));
        }
        let i = match r.verdict {
            Verdict::Checked => 0,
            Verdict::Outside => 1,
            Verdict::NotThePlugins => 2,
            Verdict::Left => 3,
        };
        if let Some((_, counts)) = out.last_mut() {
            counts[i] += 1;
            counts[4] += 1;
        }
        all[i] += 1;
        all[4] += 1;
    }
    out.push(("all".into(), all));
    out
}

/// The coverage table and the sentences left, for `--audit`.
pub fn summary() -> String {
    let audit = match read() {
        Ok(a) => a,
        Err(why) => return format!("the audit does not read: {why}\n"),
    };
    let mut out = String::from(
        "What CSI v1.13.0 asks of a plugin (the MUST sentences, error-table rows and other sentences cases cite of v1.12.0's spec.md, whose prose v1.13.0 keeps, and those v1.13.0's proto adds), and where csi-conformance stands:\n\n",
    );
    let _ = writeln!(
        out,
        "{:<55} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "part", "checked", "outside", "co", "left", "all"
    );
    for (part, c) in count(&audit.rows) {
        let _ =
            writeln!(out, "{part:<55} {:>8} {:>8} {:>8} {:>8} {:>8}", c[0], c[1], c[2], c[3], c[4]);
    }
    out.push_str("\nLeft (a plugin's obligation the suite could check and does not yet):\n");
    for r in audit.rows.iter().filter(|r| r.verdict == Verdict::Left) {
        let _ = writeln!(
            out,
            "  §{} ({}, {}): {}\n      {}",
            r.section, r.binds, r.level, r.text, r.by
        );
    }
    out
}

#[cfg(test)]
mod tests;
