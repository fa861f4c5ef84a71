//! A run's results: each case's outcome and sentence, the summary, and JUnit XML.

use std::fmt::Write as _;
use std::time::Duration;

use crate::sentence::Sentence;

/// How a case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// As the spec says.
    Passed,
    /// A plugin's MUST (or an error table's row) broken; why.
    Failed(String),
    /// Not as the sentence says, but the sentence binds the sender or is a SHOULD or MAY: a note
    /// for the driver's author, not a failure (`--strict` makes it one); why.
    Note(String),
    /// Not applicable to this plugin; why.
    Skipped(String),
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name: `group: what`.
    pub name: String,
    /// The spec sentence the case checks.
    pub sentence: Sentence,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub duration: Duration,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every case, in the order run.
    pub results: Vec<CaseResult>,
    /// REQUIRED fields (and required oneofs) of the served RPCs' requests, and how many had a
    /// case.
    pub required_total: usize,
    /// See `required_total`.
    pub required_covered: usize,
    /// The REQUIRED fields without a case, each with why (`NodeGetVolumeStatsRequest.volume_path:
    /// ...`).
    pub required_uncovered: Vec<String>,
    /// How long the run took.
    pub duration: Duration,
}

impl Report {
    /// Cases passed, failed and skipped (notes apart: [`Report::notes`]).
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for r in &self.results {
            match r.outcome {
                Outcome::Passed => c.0 += 1,
                Outcome::Failed(_) => c.1 += 1,
                Outcome::Skipped(_) => c.2 += 1,
                Outcome::Note(_) => {}
            }
        }
        c
    }

    /// Cases that ended with a note.
    pub fn notes(&self) -> Vec<&CaseResult> {
        self.results.iter().filter(|r| matches!(r.outcome, Outcome::Note(_))).collect()
    }

    /// True when no case failed.
    pub fn passed(&self) -> bool {
        self.counts().1 == 0
    }

    /// The failed cases.
    pub fn failures(&self) -> Vec<&CaseResult> {
        self.results.iter().filter(|r| matches!(r.outcome, Outcome::Failed(_))).collect()
    }

    /// The summary line: `N passed, N failed, N notes, N skipped`.
    pub fn summary(&self) -> String {
        let (p, f, s) = self.counts();
        format!("{p} passed, {f} failed, {} notes, {s} skipped", self.notes().len())
    }

    /// JUnit XML, one testcase per case; a failure's and a note's text carry the sentence (a note
    /// is a passed testcase with the note in its `system-out`).
    pub fn junit(&self) -> String {
        let (_, failed, skipped) = self.counts();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuite name=\"csi-conformance\" tests=\"{}\" failures=\"{failed}\" skipped=\"{skipped}\" time=\"{:.3}\">",
            self.results.len(),
            self.duration.as_secs_f64()
        );
        for r in &self.results {
            let (class, name) = r.name.split_once(": ").unwrap_or(("csi", &r.name));
            let _ = write!(
                out,
                "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                xml(class),
                xml(name),
                r.duration.as_secs_f64()
            );
            match &r.outcome {
                Outcome::Passed => out.push_str("/>\n"),
                Outcome::Failed(why) => {
                    let _ = writeln!(
                        out,
                        "><failure message=\"{}\">{}</failure></testcase>",
                        xml(why),
                        xml(&r.sentence.to_string())
                    );
                }
                Outcome::Note(why) => {
                    let _ = writeln!(
                        out,
                        "><system-out>note: {} {}</system-out></testcase>",
                        xml(why),
                        xml(&r.sentence.to_string())
                    );
                }
                Outcome::Skipped(why) => {
                    let _ = writeln!(out, "><skipped message=\"{}\"/></testcase>", xml(why));
                }
            }
        }
        out.push_str("</testsuite>\n");
        out
    }
}

/// Writes a file whole: a temporary file beside it, then a rename (JUnit, reports, captures).
///
/// # Errors
///
/// When the folder cannot take the temporary file or the rename fails.
pub fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir =
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no place for other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
