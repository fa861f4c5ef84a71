//! A run's result: each finding (a rule and the RPC whose answer broke it, its sentence, the
//! shrunk history with what each call answered, the capture), the coverage and what was skipped;
//! printed as text, and as the JSON `--report` writes: `{"seed", "steps", "findings": [{"rule",
//! "rpc", "level", "sentence", "section", "calls": [{"method", ...}], "capture"}], "coverage"}`.
//! A rule broken by two RPCs' answers is two findings, each shrunk on its own: two bugs, most
//! often, and neither hidden behind the other.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::coverage::Coverage;
use super::session::Session;
use super::shrink::{Breach, replay, shrink};
use super::{Broken, Options};
use crate::record::verdict;
use crate::report::Outcome;
use crate::sentence::Sentence;

/// One call of a finding's history.
#[derive(Debug, Clone)]
pub struct FoundCall {
    /// The RPC: `CreateVolume`.
    pub method: &'static str,
    /// The call in the history's own terms: `CreateVolume name v1, 2 MiB`.
    pub step: String,
    /// `OK`, or the code and message.
    pub answer: String,
    /// Each request sent (a listing sends one per page), as JSON with its secrets hidden.
    pub requests: Vec<serde_json::Value>,
}

/// The most findings a run shrinks and shows (distinct rule and RPC pairs, failures and notes):
/// each costs up to a shrink's budget (400 replays or 120 s), so this bounds both the report and
/// the run. A pair first broken past it is counted in [`Report::unshown`], not shrunk.
pub const MAX_FINDINGS: usize = 32;

/// A rule a plugin broke in the answer of one RPC, shrunk to the shortest history found whose
/// last call's answer breaks it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The stable id: an invariant (`volumes-listed`), a row (`errors: <Rpc>: <condition>`) or an
    /// answer check (`answers: <what>`).
    pub rule: String,
    /// The RPC whose answer broke it: `ListVolumes`. The last call of `calls` when the history
    /// was reproduced; the same rule broken by another RPC's answer is another finding.
    pub rpc: &'static str,
    /// Of a listing RPC or a CreateVolume with a content source, the shape of the request whose
    /// answer broke it: which of `snapshot_id`, `source_volume_id`, `starting_token` and
    /// `max_entries` it set (`source_volume_id, max_entries`; `no filter, no max_entries`), or
    /// its source's kind and whether it set a size (`from a snapshot, no capacity_range`); the
    /// same rule broken in the answer to another shape is another finding (another code path of
    /// the plugin).
    pub shape: Option<&'static str>,
    /// The sentence it rests on.
    pub sentence: Sentence,
    /// What the last call did, in the explorer's words.
    pub detail: String,
    /// A failure (a plugin's MUST, or anything under `--strict`); else a note.
    pub fails: bool,
    /// The shortest history found, each call as the plugin answered it in the capture's run.
    pub calls: Vec<FoundCall>,
    /// The walk's history when the rule was first broken, in calls.
    pub shrunk_from: usize,
    /// The history broke the rule again when replayed from a clean state (else it is given
    /// whole, as the walk made it, and the capture holds that replay).
    pub reproduced: bool,
    /// The capture of the shortest history's replay.
    pub capture: Option<PathBuf>,
    /// How many times the walk broke it in this RPC's answers.
    pub seen: u64,
}

/// A rule and RPC first broken once [`MAX_FINDINGS`] findings were shown: counted, not shrunk.
#[derive(Debug, Clone)]
pub struct Unshown {
    /// As [`Finding::rule`].
    pub rule: String,
    /// As [`Finding::rpc`].
    pub rpc: &'static str,
    /// As [`Finding::shape`].
    pub shape: Option<&'static str>,
    /// A failure, not a note.
    pub fails: bool,
    /// How many times the walk broke it.
    pub seen: u64,
}

/// A whole run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The walk's seed.
    pub seed: u64,
    /// `name version`, as GetPluginInfo says.
    pub plugin: String,
    /// Calls of the walk.
    pub steps: u64,
    /// Every call made, shrinking and clean-ups included.
    pub calls: u64,
    /// How long the run took.
    pub duration: Duration,
    /// Of `duration`, shrinking and writing captures.
    pub shrink_time: Duration,
    /// Each rule broken in each RPC's answers, failures and notes, in the order found.
    pub findings: Vec<Finding>,
    /// What was broken past the cap of [`MAX_FINDINGS`], in the order found: counted, never
    /// shrunk nor captured.
    pub unshown: Vec<Unshown>,
    /// What the walk reached.
    pub coverage: Coverage,
    /// What the plugin does not serve, and what the walk leaves out for it.
    pub skipped: Vec<String>,
    /// What the clean-ups could not delete.
    pub left_over: Vec<String>,
}

impl Report {
    /// True when a finding is a failure (shown or past the cap).
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.fails) || self.unshown.iter().any(|u| u.fails)
    }

    /// Calls of the walk per second of walking.
    pub fn steps_per_second(&self) -> f64 {
        let walking = self.duration.saturating_sub(self.shrink_time).as_secs_f64();
        if walking > 0.0 { self.steps as f64 / walking } else { 0.0 }
    }

    /// The report as `--report` writes it.
    pub fn to_json(&self) -> serde_json::Value {
        let finding = |f: &Finding| {
            let calls: Vec<serde_json::Value> = f
                .calls
                .iter()
                .map(|c| {
                    serde_json::json!({"method": c.method, "step": c.step, "answer": c.answer, "requests": c.requests})
                })
                .collect();
            serde_json::json!({
                "rule": f.rule,
                "rpc": f.rpc,
                "shape": f.shape,
                "level": level(&f.sentence),
                "fails": f.fails,
                "sentence": f.sentence.text,
                "section": f.sentence.section,
                "row": f.sentence.row.map(|r| format!("{} | {} | {}", r.condition, r.code_as_written, r.description)),
                "detail": f.detail,
                "calls": calls,
                "shrunk_from": f.shrunk_from,
                "reproduced": f.reproduced,
                "seen": f.seen,
                "capture": f.capture.as_ref().map(|p| p.display().to_string()),
            })
        };
        let (failures, notes): (Vec<&Finding>, Vec<&Finding>) =
            self.findings.iter().partition(|f| f.fails);
        serde_json::json!({
            "seed": self.seed,
            "plugin": self.plugin,
            "steps": self.steps,
            "calls": self.calls,
            "seconds": self.duration.as_secs_f64(),
            "steps_per_second": self.steps_per_second(),
            "findings": failures.into_iter().map(finding).collect::<Vec<_>>(),
            "notes": notes.into_iter().map(finding).collect::<Vec<_>>(),
            "unshown": self.unshown.iter().map(|u| serde_json::json!({
                "rule": u.rule, "rpc": u.rpc, "shape": u.shape, "fails": u.fails, "seen": u.seen,
            })).collect::<Vec<_>>(),
            "coverage": self.coverage.json(),
            "skipped": self.skipped,
            "left_over": self.left_over,
        })
    }

    /// The end of a run as printed: each finding, the coverage, what was skipped, the summary.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            out.push_str(&f.text());
        }
        for u in &self.unshown {
            let mark = if u.fails { "finding" } else { "note" };
            let _ = writeln!(
                out,
                "{mark} {} in {}{}: broken {} times, not shrunk (past the cap of {MAX_FINDINGS} findings)",
                u.rule,
                u.rpc,
                shaped(u.shape),
                u.seen
            );
        }
        out.push_str(&self.coverage.text());
        for s in &self.skipped {
            let _ = writeln!(out, "skipped: {s}");
        }
        for l in &self.left_over {
            let _ = writeln!(out, "left over: {l}");
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// The last line: `# <plugin>: N steps (N calls) in S s, N steps/s; N findings, N notes[, N
    /// more not shrunk]; seed N`.
    pub fn summary(&self) -> String {
        let failures = self.findings.iter().filter(|f| f.fails).count();
        let more = if self.unshown.is_empty() {
            String::new()
        } else {
            format!(", {} more not shrunk", self.unshown.len())
        };
        format!(
            "# {}: {} steps ({} calls) in {:.1} s, {:.0} steps/s; {failures} findings, {} notes{more}; seed {}",
            self.plugin,
            self.steps,
            self.calls,
            self.duration.as_secs_f64(),
            self.steps_per_second(),
            self.findings.len() - failures,
            self.seed
        )
    }
}

impl Finding {
    /// The finding as printed: the rule and sentence, the history, the capture.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mark = if self.fails { "FINDING" } else { "note" };
        let _ = writeln!(
            out,
            "{mark} {} in {}{}: {}",
            self.rule,
            self.rpc,
            shaped(self.shape),
            self.detail
        );
        let _ = writeln!(out, "  {}", self.sentence);
        let how = if self.reproduced {
            format!("shrunk from {} calls to {}", self.shrunk_from, self.calls.len())
        } else {
            format!(
                "{} calls (the replay from a clean state did not break it again)",
                self.calls.len()
            )
        };
        let _ = writeln!(out, "  {how}:");
        for (i, c) in self.calls.iter().enumerate() {
            let _ = writeln!(out, "    {:>2}. {} -> {}", i + 1, c.step, c.answer);
        }
        if let Some(p) = &self.capture {
            let _ = writeln!(
                out,
                "  capture: {} (csi-view replay {} --endpoint ...)",
                p.display(),
                p.display()
            );
        }
        out
    }
}

/// A request's shape as printed after its RPC: ` (source_volume_id, max_entries)`.
fn shaped(shape: Option<&str>) -> String {
    shape.map(|s| format!(" ({s})")).unwrap_or_default()
}

/// `must`, `should`, `may`; a sentence binding the sender: `sender`.
fn level(s: &Sentence) -> &'static str {
    match (s.binds, s.level) {
        (crate::sentence::Binds::Sender, _) => "sender",
        (_, crate::sentence::Level::Must) => "must",
        (_, crate::sentence::Level::Should) => "should",
        (_, crate::sentence::Level::May) => "may",
    }
}

/// Whether `b` is a failure (a plugin's MUST, or anything under `--strict`), not a note.
pub(crate) fn fails(b: &Broken, options: &Options) -> bool {
    matches!(
        verdict(b.sentence, Outcome::Failed(String::new()), options.config.strict),
        Outcome::Failed(_)
    )
}

/// What one call of the walk broke: each rule not found before in this call's RPC is shrunk
/// (keeping it broken in this RPC's answer), replayed once more with its capture recorded, and
/// added to the report; one found before in this RPC is counted, as is one past the cap.
pub(crate) async fn found(
    s: &mut Session,
    options: &Options,
    report: &mut Report,
    history: &[super::call::Call],
    broken: &[Broken],
    line: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let started = Instant::now();
    // The call whose answer broke them: the history's last.
    let Some(last) = history.last() else {
        return Ok(());
    };
    let (rpc, shape) = (last.rpc(), last.shape());
    for b in broken {
        let same = |rule: &str, r: &str, sh: Option<&str>| rule == b.id && r == rpc && sh == shape;
        if let Some(f) = report.findings.iter_mut().find(|f| same(&f.rule, f.rpc, f.shape)) {
            f.seen += 1;
            continue;
        }
        let fails = fails(b, options);
        if report.findings.len() >= MAX_FINDINGS {
            match report.unshown.iter_mut().find(|u| same(&u.rule, u.rpc, u.shape)) {
                Some(u) => u.seen += 1,
                None => {
                    report.unshown.push(Unshown { rule: b.id.clone(), rpc, shape, fails, seen: 1 })
                }
            }
            continue;
        }
        line(&format!(
            "{} {} in {rpc}{} after {} calls: {}; shrinking",
            if fails { "found" } else { "noted" },
            b.id,
            shaped(shape),
            history.len(),
            b.detail
        ));
        let breach = Breach { rule: &b.id, rpc, shape };
        let shrunk = shrink(s, history, breach).await?;
        line(&format!("shrunk to {} calls in {} replays", shrunk.calls.len(), shrunk.replays));
        let n = report.findings.len() + 1;
        let named = match shape {
            Some(sh) => format!("{rpc} {sh}"),
            None => rpc.to_owned(),
        };
        let path = capture_path(options, n, &b.id, &named);
        let folders = path.with_extension("paths");
        let r = replay(s, &shrunk.calls, breach, Some(&folders)).await?;
        let schema = csi_view_core::schema::Schema::builtin().map_err(|e| format!("{e:#}"))?;
        let calls: Vec<FoundCall> = r
            .made
            .iter()
            .zip(r.recorded.iter())
            .map(|(m, x)| FoundCall {
                method: m.call.rpc(),
                step: m.call.to_string(),
                answer: super::judge::show(&m.reply),
                requests: x.iter().map(|e| super::capture::request_json(&schema, e)).collect(),
            })
            .collect();
        let exchanges: Vec<&super::exec::Exchange> =
            r.prelude.iter().chain(r.recorded.iter().flatten()).collect();
        let secrets: Vec<String> = s.suite.sent_secrets.iter().cloned().collect();
        let capture = match super::capture::write(&path, &s.endpoint, &exchanges, &secrets) {
            Ok(()) => Some(path),
            Err(e) => {
                line(&format!("cannot write the capture: {e}"));
                None
            }
        };
        // The last replay's own words, when it broke the rule again; else the walk's.
        let detail = r.found.as_ref().map_or_else(|| b.detail.clone(), |f| f.detail.clone());
        let finding = Finding {
            rule: b.id.clone(),
            rpc,
            shape,
            sentence: b.sentence,
            detail,
            fails,
            calls,
            shrunk_from: history.len(),
            reproduced: shrunk.reproduced && r.found.is_some(),
            capture,
            seen: 1,
        };
        line(&finding.text());
        report.findings.push(finding);
    }
    report.shrink_time += started.elapsed();
    Ok(())
}

/// Where finding #n's capture goes (see [`Options::capture_out`]): named by the rule (its first
/// 48 characters) and the RPC, whole, so that two findings of one rule are told apart by name.
fn capture_path(options: &Options, n: usize, rule: &str, rpc: &str) -> PathBuf {
    let slug = |what: &str| -> String {
        what.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
            .collect::<String>()
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-")
    };
    let rule = slug(rule);
    let own = format!(
        "csi-explore-{}-{n}-{}-{}.jsonl",
        options.seed,
        rule[..rule.len().min(48)].trim_end_matches('-'),
        slug(rpc)
    );
    match &options.capture_out {
        None => PathBuf::from(own),
        Some(p) if p.is_dir() => p.join(own),
        Some(p) if n == 1 => p.clone(),
        Some(p) => {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let ext =
                p.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
            p.with_file_name(format!("{stem}-{n}{ext}"))
        }
    }
}
