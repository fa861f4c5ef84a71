//! `csi-conformance explore`: stateful, model-based testing. A reference model of the plugin's
//! state (`model`: volumes with their lifecycle, snapshots, names, from the capabilities the
//! plugin advertises) chooses each next call a CO may make (`generate`: lifecycle moves,
//! retries, incompatible repeats, calls on what was deleted), the call is made concrete and sent
//! through the suite's exchange (`exec`, `session`: every answer checked against the facts as
//! the fixed cases' are), and the answer is judged against what the history allows (`judge`,
//! `listing`: error-table rows, the spec's MUST-OK sentences, invariants across calls, each in
//! `rules` with its sentence). A rule broken in an RPC's answer is a finding of its own (the same
//! rule broken by another RPC is another), shrunk to the shortest history that still ends in it
//! (`shrink`), printed with its sentence, and written as a capture `csi-view replay` sends
//! again (`capture`); the walk goes on from a clean state. `coverage` counts each RPC in each
//! lifecycle state and each invariant held; `concurrent` walks, one history or several in
//! flight at once (`--concurrency`), each on objects of its own; `report` prints and writes the result. The same seed gives the same walk against the
//! same plugin.

mod call;
mod capture;
mod concurrent;
mod coverage;
mod describe;
mod exec;
mod generate;
mod judge;
mod listing;
mod model;
mod report;
mod rules;
mod session;
mod shrink;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use coverage::Coverage;
pub use report::{Finding, FoundCall, MAX_FINDINGS, Report, Unshown};

use crate::answers::Problem;
use crate::client::Endpoint;
use crate::config::Config;
use crate::sentence::Sentence;
use session::Session;

/// The budget of a run given neither `--steps` nor `--time`: enough for a history bug of a
/// local plugin to be found, shrunk and written within about a minute.
pub const DEFAULT_STEPS: u64 = 20_000;
/// See [`DEFAULT_STEPS`]: the run stops at whichever comes first.
pub const DEFAULT_TIME: Duration = Duration::from_secs(60);
/// How to explore.
#[derive(Debug, Clone)]
pub struct Options {
    /// The walk's seed: the same seed, the same walk (against the same plugin).
    pub seed: u64,
    /// Stop after this many calls of the walk (shrinking apart).
    pub steps: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    /// Histories in flight at once, each on volumes of its own.
    pub concurrency: usize,
    /// Stop once this many findings (a rule broken in one RPC's answers) are shrunk (none: walk
    /// the whole budget).
    pub stop_after: Option<usize>,
    /// Where to write each finding's capture: a folder, or a file name (`NAME.jsonl`, then
    /// `NAME-2.jsonl` ...); none: `csi-explore-<seed>-<n>-<rule>-<rpc>.jsonl` in the current
    /// folder.
    pub capture_out: Option<PathBuf>,
    /// The suite's settings: deadline, secrets, parameters, folders, `strict`.
    pub config: Config,
}

impl Options {
    /// Calls and time the walk may take, from now: the defaults when neither is given, else
    /// only what is given.
    fn budget(&self) -> Budget {
        let (steps, time) = match (self.steps, self.time) {
            (None, None) => (DEFAULT_STEPS, Some(DEFAULT_TIME)),
            (steps, time) => (steps.unwrap_or(u64::MAX), time),
        };
        Budget { steps, deadline: time.map(|t| Instant::now() + t) }
    }
}

/// What a walk may spend: calls, and a deadline.
#[derive(Debug, Clone, Copy)]
struct Budget {
    steps: u64,
    deadline: Option<Instant>,
}

impl Budget {
    /// Calls and time are left after `steps` calls.
    fn left(&self, steps: u64) -> bool {
        steps < self.steps && self.deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// A rule one answer broke: the explorer's own (an invariant or a row) or an answer check of the
/// suite's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broken {
    /// The stable id: `volumes-listed`, `errors: GetSnapshot: Snapshot does not exist`,
    /// `answers: <key>`.
    pub(crate) id: String,
    pub(crate) sentence: Sentence,
    pub(crate) detail: String,
}

impl Broken {
    pub(crate) fn from_violation(v: &model::Violation) -> Broken {
        Broken { id: v.rule.id(), sentence: v.rule.sentence(), detail: v.detail.clone() }
    }

    pub(crate) fn from_problem(p: Problem) -> Broken {
        Broken { id: format!("answers: {}", p.key), sentence: p.sentence, detail: p.detail }
    }
}

/// Every invariant and row the explorer holds plugins to, with its sentence, for `--list` and
/// the audit: `explore: <id>`.
pub(crate) fn list() -> impl Iterator<Item = (String, Sentence)> {
    rules::Rule::invariants()
        .chain(rules::Rule::ROWS)
        .map(|r| (format!("explore: {}", r.id()), r.sentence()))
}

/// Explores the plugin at `endpoint`; `line` gets a line as each finding is found and shrunk.
///
/// # Errors
///
/// When the plugin cannot be reached or does not answer Identity, or a folder cannot be made.
pub async fn explore(
    endpoint: &Endpoint,
    options: &Options,
    line: &mut dyn FnMut(&str),
) -> Result<Report, String> {
    let started = Instant::now();
    let mut s = Session::connect(endpoint, &options.config, run_id()).await?;
    let mut report = Report {
        seed: options.seed,
        plugin: s.plugin.clone(),
        skipped: s.skipped.clone(),
        ..Report::default()
    };
    // One history at a time is one lane.
    concurrent::walk(&mut s, options, &mut report, line).await?;
    report.calls = s.calls;
    report.coverage = std::mem::take(&mut s.coverage);
    report.duration = started.elapsed();
    Ok(report)
}

/// A name part unique to this run: attempts of two runs with the same seed never share a name.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{:x}{:05x}", std::process::id() & 0xfff, nanos & 0xf_ffff)
}

/// Serves `routes` (a driver's tonic routes) on a temporary unix socket, explores it, and stops
/// the server.
///
/// # Errors
///
/// When the temporary socket cannot be made, or the exploration cannot start.
pub async fn explore_in_process(
    routes: tonic::service::Routes,
    options: &Options,
) -> anyhow::Result<Report> {
    let (endpoint, server) = crate::in_process::serve(routes).await?;
    let report = explore(&endpoint, options, &mut |_| {}).await;
    server.stop().await;
    report.map_err(|e| anyhow::anyhow!(e))
}
