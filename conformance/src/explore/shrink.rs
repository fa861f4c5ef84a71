//! From a history that broke a rule to the shortest one that still does: delta debugging over
//! the symbolic calls (drop chunks, halving their size; then single calls; then simpler forms of
//! each call), each candidate replayed from a clean state in a fresh attempt, kept only when it
//! breaks the same rule. A call a shorter history no longer makes possible (what it names was
//! never made) is left out as the replay goes. Deterministic for a deterministic plugin.

use std::path::Path;
use std::time::{Duration, Instant};

use super::Broken;
use super::call::{Call, Names};
use super::exec::Exchange;
use super::session::{Made, Session};

/// How many replays, and how long, one shrink may take.
const MAX_REPLAYS: u32 = 400;
const MAX_TIME: Duration = Duration::from_secs(120);

/// A history replayed.
#[derive(Debug)]
pub(crate) struct Replayed {
    /// The calls made, up to the first that broke the rule (all, if none did).
    pub(crate) made: Vec<Made>,
    /// What broke the rule, if a call did.
    pub(crate) found: Option<Broken>,
    /// When recording: what was asked before the history (NodeGetInfo), then each call
    /// made's exchanges, in order.
    pub(crate) prelude: Vec<Exchange>,
    pub(crate) recorded: Vec<Vec<Exchange>>,
}

/// Replays `history` in a fresh attempt until a call breaks the rule named `id`, then undoes
/// everything. `paths`: make the attempt's paths there (kept for a capture's replay), and
/// record what is sent and answered.
pub(crate) async fn replay(
    s: &mut Session,
    history: &[Call],
    id: &str,
    paths: Option<&Path>,
) -> Result<Replayed, String> {
    let mut a = s.attempt(paths);
    let recording = paths.is_some();
    let mut out =
        Replayed { made: Vec::new(), found: None, prelude: Vec::new(), recorded: Vec::new() };
    if recording {
        a.exec.recorded = Some(std::sync::Mutex::default());
        // The node the plugin names, first: a replay against another plugin maps it.
        if s.caps.node {
            a.exec.node_info(&s.suite).await;
        }
        out.prelude = a.exec.take_recorded();
    }
    for call in history {
        if !a.model.enabled(call) {
            continue;
        }
        let made = s.make(&mut a, call, false).await;
        let made = match made {
            Ok(m) => m,
            Err(e) => {
                s.clean_up(&a).await;
                return Err(e);
            }
        };
        if recording {
            out.recorded.push(a.exec.take_recorded());
        }
        let found = made.broken.iter().find(|b| b.id == id).cloned();
        out.made.push(made);
        if found.is_some() {
            out.found = found;
            break;
        }
    }
    s.clean_up(&a).await;
    Ok(out)
}

/// The shrunk history, and how it was reached.
#[derive(Debug)]
pub(crate) struct Shrunk {
    pub(crate) calls: Vec<Call>,
    /// The first replay of the whole history broke the rule again.
    pub(crate) reproduced: bool,
    /// Replays it took.
    pub(crate) replays: u32,
}

/// The shortest history found that still breaks the rule named `id`, from `history` (whose
/// last call broke it during the walk).
pub(crate) async fn shrink(s: &mut Session, history: &[Call], id: &str) -> Result<Shrunk, String> {
    let started = Instant::now();
    let mut replays = 0;
    let first = replay(s, history, id, None).await?;
    replays += 1;
    if first.found.is_none() {
        return Ok(Shrunk { calls: history.to_vec(), reproduced: false, replays });
    }
    let mut cur: Vec<Call> = first.made.iter().map(|m| m.call).collect();
    let spent = |replays: u32| replays >= MAX_REPLAYS || started.elapsed() >= MAX_TIME;
    // Chunks, then simpler calls, again while either shortens or simplifies the history.
    loop {
        let before = cur.clone();
        cur = chunks(s, cur, id, &mut replays, &spent).await?;
        cur = merged(s, cur, id, &mut replays, &spent).await?;
        cur = simpler(s, cur, id, &mut replays, &spent).await?;
        if cur == before || spent(replays) {
            break;
        }
    }
    Ok(Shrunk { calls: cur, reproduced: true, replays })
}

/// Delta debugging's chunk passes: remove one chunk at a time; a success keeps the shorter
/// history (truncated at the call that broke the rule again) and the chunk size, a failure
/// halves the chunks.
async fn chunks(
    s: &mut Session,
    mut cur: Vec<Call>,
    id: &str,
    replays: &mut u32,
    spent: &impl Fn(u32) -> bool,
) -> Result<Vec<Call>, String> {
    let mut n = 2usize;
    while cur.len() >= 2 && !spent(*replays) {
        let chunk = cur.len().div_ceil(n);
        let mut reduced = false;
        let mut start = 0;
        while start < cur.len() && !spent(*replays) {
            let candidate: Vec<Call> = cur[..start]
                .iter()
                .chain(cur[(start + chunk).min(cur.len())..].iter())
                .copied()
                .collect();
            let r = replay(s, &candidate, id, None).await?;
            *replays += 1;
            if r.found.is_some() {
                cur = r.made.iter().map(|m| m.call).collect();
                reduced = true;
                break;
            }
            start += chunk;
        }
        if reduced {
            n = n.saturating_sub(1).max(2);
        } else if n >= cur.len() {
            break;
        } else {
            n = (n * 2).min(cur.len());
        }
    }
    Ok(cur)
}

/// One object where the history used two: every use of a later name made a use of an earlier
/// one (volumes, then snapshots), kept where the rule stays broken and the history is no longer.
async fn merged(
    s: &mut Session,
    mut cur: Vec<Call>,
    id: &str,
    replays: &mut u32,
    spent: &impl Fn(u32) -> bool,
) -> Result<Vec<Call>, String> {
    for kind in [Names::Volumes, Names::Snapshots] {
        let mut names: Vec<u16> = cur.iter().flat_map(|c| c.names(kind)).collect();
        names.sort_unstable();
        names.dedup();
        'pairs: for (i, later) in names.iter().enumerate().rev() {
            for earlier in &names[..i] {
                if spent(*replays) {
                    return Ok(cur);
                }
                let candidate: Vec<Call> =
                    cur.iter().map(|c| c.renamed(kind, *later, *earlier)).collect();
                let r = replay(s, &candidate, id, None).await?;
                *replays += 1;
                if r.found.is_some() && r.made.len() <= cur.len() {
                    cur = r.made.iter().map(|m| m.call).collect();
                    continue 'pairs;
                }
            }
        }
    }
    Ok(cur)
}

/// Each call replaced by a simpler form of it (one page, no size) where the rule stays broken.
async fn simpler(
    s: &mut Session,
    mut cur: Vec<Call>,
    id: &str,
    replays: &mut u32,
    spent: &impl Fn(u32) -> bool,
) -> Result<Vec<Call>, String> {
    let mut i = 0;
    while i < cur.len() && !spent(*replays) {
        for alt in cur[i].simpler() {
            let mut candidate = cur.clone();
            candidate[i] = alt;
            let r = replay(s, &candidate, id, None).await?;
            *replays += 1;
            if r.found.is_some() && r.made.len() <= cur.len() {
                cur = r.made.iter().map(|m| m.call).collect();
                break;
            }
        }
        i += 1;
    }
    Ok(cur)
}
