//! From a history that broke a rule to the shortest one that still does: delta debugging over
//! the symbolic calls (drop chunks, halving their size; then single calls; then simpler forms of
//! each call), each candidate replayed from a clean state in a fresh attempt, kept only when it
//! breaks the same rule in the answer of the same RPC (a [`Breach`]: the rule broken in another
//! RPC is another finding, another bug). A call a shorter history no longer makes possible (what it names was
//! never made) is left out as the replay goes. Deterministic for a deterministic plugin.

use std::path::Path;
use std::time::{Duration, Instant};

use super::Broken;
use super::call::{Call, Names};
use super::exec::Exchange;
use super::session::{Made, Session};

/// How many replays, and how long, one shrink (one finding) may take; past either, the shortest
/// history found so far is the finding's.
const MAX_REPLAYS: u32 = 400;
const MAX_TIME: Duration = Duration::from_secs(120);

/// What a finding is: a rule, broken by the answer of one RPC (of a listing or a CreateVolume
/// with a source, to a request of one shape: see [`Call::shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Breach<'a> {
    /// The rule's id: `volumes-listed`, `answers: <key>`.
    pub(crate) rule: &'a str,
    /// The RPC whose answer broke it: `ListVolumes`.
    pub(crate) rpc: &'static str,
    /// The request's shape: `source_volume_id, max_entries`.
    pub(crate) shape: Option<&'static str>,
}

impl Breach<'_> {
    /// What of `made`'s answer is this breach, if any.
    fn in_answer(&self, made: &Made) -> Option<Broken> {
        if made.call.rpc() != self.rpc || made.call.shape() != self.shape {
            return None;
        }
        made.broken.iter().find(|b| b.id == self.rule).cloned()
    }
}

/// A history replayed.
#[derive(Debug)]
pub(crate) struct Replayed {
    /// The calls made, up to the first whose answer is the breach (all, if none was).
    pub(crate) made: Vec<Made>,
    /// What broke the rule, if a call's answer did.
    pub(crate) found: Option<Broken>,
    /// When recording: what was asked before the history (NodeGetInfo), then each call
    /// made's exchanges, in order.
    pub(crate) prelude: Vec<Exchange>,
    pub(crate) recorded: Vec<Vec<Exchange>>,
}

/// Replays `history` in a fresh attempt until a call's answer is `breach` (the rule broken by
/// that RPC), then undoes everything. `paths`: make the attempt's paths there (kept for a capture's replay), and
/// record what is sent and answered.
pub(crate) async fn replay(
    s: &mut Session,
    history: &[Call],
    breach: Breach<'_>,
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
        let found = breach.in_answer(&made);
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

/// The shortest history found that still ends in `breach`, from `history` (whose last call's
/// answer was it during the walk).
pub(crate) async fn shrink(
    s: &mut Session,
    history: &[Call],
    breach: Breach<'_>,
) -> Result<Shrunk, String> {
    let mut k = Shrinker { s, breach, replays: 0, started: Instant::now() };
    let first = replay(k.s, history, breach, None).await?;
    k.replays += 1;
    if first.found.is_none() {
        return Ok(Shrunk { calls: history.to_vec(), reproduced: false, replays: k.replays });
    }
    let mut cur: Vec<Call> = first.made.iter().map(|m| m.call).collect();
    // Chunks, then simpler calls, again while either shortens or simplifies the history.
    loop {
        let before = cur.clone();
        cur = k.chunks(cur).await?;
        cur = k.merged(cur).await?;
        cur = k.younger(cur).await?;
        cur = k.simpler(cur).await?;
        if cur == before || k.spent() {
            break;
        }
    }
    Ok(Shrunk { calls: cur, reproduced: true, replays: k.replays })
}

/// One shrink: the breach it keeps and what it has spent.
struct Shrinker<'a> {
    s: &'a mut Session,
    breach: Breach<'a>,
    replays: u32,
    started: Instant,
}

impl Shrinker<'_> {
    fn spent(&self) -> bool {
        self.replays >= MAX_REPLAYS || self.started.elapsed() >= MAX_TIME
    }

    /// Replays `candidate`; the calls it made up to the one whose answer was the breach again,
    /// when one was within `at_most` calls.
    async fn attempt(
        &mut self,
        candidate: &[Call],
        at_most: usize,
    ) -> Result<Option<Vec<Call>>, String> {
        let r = replay(self.s, candidate, self.breach, None).await?;
        self.replays += 1;
        Ok((r.found.is_some() && r.made.len() <= at_most)
            .then(|| r.made.iter().map(|m| m.call).collect()))
    }

    /// Delta debugging's chunk passes: remove one chunk at a time; a success keeps the shorter
    /// history (truncated at the call that broke the rule again) and the chunk size, a failure
    /// halves the chunks.
    async fn chunks(&mut self, mut cur: Vec<Call>) -> Result<Vec<Call>, String> {
        let mut n = 2usize;
        while cur.len() >= 2 && !self.spent() {
            let chunk = cur.len().div_ceil(n);
            let mut reduced = false;
            let mut start = 0;
            while start < cur.len() && !self.spent() {
                let candidate: Vec<Call> = cur[..start]
                    .iter()
                    .chain(cur[(start + chunk).min(cur.len())..].iter())
                    .copied()
                    .collect();
                if let Some(kept) = self.attempt(&candidate, usize::MAX).await? {
                    cur = kept;
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

    /// One object where the history used two: every use of a later name made a use of an
    /// earlier one (volumes, then snapshots), kept where the rule stays broken and the history
    /// is no longer.
    async fn merged(&mut self, mut cur: Vec<Call>) -> Result<Vec<Call>, String> {
        for kind in [Names::Volumes, Names::Snapshots] {
            let mut names: Vec<u16> = cur.iter().flat_map(|c| c.names(kind)).collect();
            names.sort_unstable();
            names.dedup();
            'pairs: for (i, later) in names.iter().enumerate().rev() {
                for earlier in &names[..i] {
                    if self.spent() {
                        return Ok(cur);
                    }
                    let candidate: Vec<Call> =
                        cur.iter().map(|c| c.renamed(kind, *later, *earlier)).collect();
                    if let Some(kept) = self.attempt(&candidate, cur.len()).await? {
                        cur = kept;
                        continue 'pairs;
                    }
                }
            }
        }
        Ok(cur)
    }

    /// Without a name's first object, when the history goes on to a later one of the name (a
    /// volume deleted and its name made again): the first creation of the name, and every call
    /// on its first object, dropped, and each later object of the name one younger. Dropping
    /// chunks cannot do it, as what a later call names would then never be made.
    async fn younger(&mut self, mut cur: Vec<Call>) -> Result<Vec<Call>, String> {
        for kind in [Names::Volumes, Names::Snapshots] {
            let mut names: Vec<u16> = cur
                .iter()
                .flat_map(|c| c.names(kind))
                .filter(|n| cur.iter().any(|c| c.without_first(kind, *n) != Some(*c)))
                .collect();
            names.sort_unstable();
            names.dedup();
            for name in names {
                if self.spent() {
                    return Ok(cur);
                }
                let creates = |c: &Call| match *c {
                    Call::CreateVolume { name: n, .. } => kind == Names::Volumes && n == name,
                    Call::CreateSnapshot { name: n, .. } => kind == Names::Snapshots && n == name,
                    _ => false,
                };
                let Some(first) = cur.iter().position(creates) else { continue };
                let candidate: Vec<Call> = cur
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != first)
                    .filter_map(|(_, c)| c.without_first(kind, name))
                    .collect();
                if candidate.len() < cur.len()
                    && let Some(kept) = self.attempt(&candidate, cur.len() - 1).await?
                {
                    cur = kept;
                }
            }
        }
        Ok(cur)
    }

    /// Each call replaced by a simpler form of it (one page, no size) where the rule stays
    /// broken.
    async fn simpler(&mut self, mut cur: Vec<Call>) -> Result<Vec<Call>, String> {
        let mut i = 0;
        while i < cur.len() && !self.spent() {
            for alt in cur[i].simpler() {
                let mut candidate = cur.clone();
                candidate[i] = alt;
                if let Some(kept) = self.attempt(&candidate, cur.len()).await? {
                    cur = kept;
                    break;
                }
            }
            i += 1;
        }
        Ok(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::call::Vol;
    use crate::explore::judge::{Body, Reply};
    use crate::sentence::Sentence;

    /// A call that broke `rule`.
    fn made(call: Call, rule: &str) -> Made {
        let broken = Broken {
            id: rule.to_owned(),
            sentence: Sentence::must("Volume", "a sentence"),
            detail: "broken".to_owned(),
        };
        Made { call, reply: Reply::Ok(Body::Empty), broken: vec![broken] }
    }

    #[test]
    fn a_breach_is_its_rule_in_its_rpcs_answer_only() {
        let rule = "volume-source-carried";
        let listing = made(Call::ListVolumes { max_entries: 0 }, rule);
        let get = made(Call::GetVolume(Vol { name: 0, nth: 0 }), rule);
        let shape = Some("no max_entries");
        let in_listing = Breach { rule, rpc: "ListVolumes", shape };
        assert_eq!(in_listing.in_answer(&listing).map(|b| b.id), Some(rule.to_owned()));
        // The same rule broken by ControllerGetVolume's answer is another finding's breach.
        assert_eq!(in_listing.in_answer(&get), None);
        assert!(Breach { rule, rpc: "ControllerGetVolume", shape: None }.in_answer(&get).is_some());
        // Another rule in the same RPC is not this breach either.
        let other = Breach { rule: "volumes-listed", rpc: "ListVolumes", shape };
        assert_eq!(other.in_answer(&listing), None);
        // Nor the same rule in the answer to a request of another shape (paged).
        let paged = made(Call::ListVolumes { max_entries: 2 }, rule);
        assert_eq!(in_listing.in_answer(&paged), None);
        let by_pages = Breach { shape: Some("max_entries"), ..in_listing };
        assert!(by_pages.in_answer(&paged).is_some());
    }
}
