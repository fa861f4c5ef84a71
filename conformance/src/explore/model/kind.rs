//! What kind of volume a call about one volume names, and in which use, for the coverage
//! table: a volume read, validated, grown or asked for statistics is the same volume to the
//! spec whatever made it (a clone, a restore, a clone of either, grown, with snapshots, its
//! source gone) and however the node uses it (at either staging path, at one or two targets,
//! one of two taken away, readonly), and the walk is held to reach every such pair.

use super::super::call::{At, Call, Source, Vol};
use super::{Life, Model, VolState};

/// The kinds and uses the walk makes rarely: a volume in one of them is read on purpose
/// (`generate/kind.rs`).
pub(crate) const RARE: [&str; 5] = [
    "made from a clone or restore",
    "source deleted",
    "staged at the second staging path",
    "published at two targets",
    "one of two targets unpublished",
];

impl Model {
    /// The kinds and uses of the live volume `call` names, when `call` is a
    /// ControllerExpandVolume, NodeExpandVolume, NodeGetVolumeStats, ControllerGetVolume or
    /// ValidateVolumeCapabilities; for a NodePublishVolume, the pair of readonly flags it makes
    /// (see [`Model::flag_pair`]); none otherwise.
    pub(crate) fn kinds_of(&self, call: &Call) -> Vec<&'static str> {
        let (vol, at) = match *call {
            Call::Expand { vol, .. }
            | Call::NodeExpand { vol, .. }
            | Call::GetVolume(vol)
            | Call::Validate(vol) => (vol, None),
            Call::Stats { vol, at } => (vol, Some(at)),
            Call::Publish { vol, target, readonly } => {
                return self.flag_pair(vol, target, readonly);
            }
            _ => return Vec::new(),
        };
        self.kinds_of_vol(vol, at)
    }

    /// The kinds and uses of `vol` when alive (none otherwise), and where a NodeGetVolumeStats
    /// at `at` looks.
    pub(crate) fn kinds_of_vol(&self, vol: Vol, at: Option<At>) -> Vec<&'static str> {
        let Some(s) = self.vol(vol).filter(|s| s.life == Life::Alive) else { return Vec::new() };
        let mut kinds = Vec::new();
        kinds.push(match s.source {
            None => "plain",
            Some(Source::Volume(_)) => "clone",
            Some(Source::Snapshot(_) | Source::Member(..)) => "restore",
        });
        let origin = match s.source {
            Some(Source::Volume(v)) => Some(v),
            Some(x) => self.restorable(x).and_then(|x| x.origin),
            None => None,
        };
        if origin.and_then(|o| self.vol(o)).is_some_and(|o| o.source.is_some()) {
            kinds.push("made from a clone or restore");
        }
        let source_dead = match s.source {
            Some(Source::Volume(v)) => self.vol(v).is_some_and(|o| o.life == Life::Dead),
            Some(x) => self.restorable(x).is_some_and(|x| x.life == Life::Dead),
            None => false,
        };
        if !s.grown.is_empty() {
            kinds.push("expanded");
        }
        if self.snaps.values().any(|x| x.source == vol && x.life == Life::Alive) {
            kinds.push("with snapshots");
        }
        if source_dead {
            kinds.push("source deleted");
        }
        uses(s, at, &mut kinds);
        kinds
    }
}

/// How the node uses `s`, and (NodeGetVolumeStats) where the call looks.
fn uses(s: &VolState, at: Option<At>, kinds: &mut Vec<&'static str>) {
    if s.staged {
        kinds.push("staged");
        if s.staging == 1 {
            kinds.push("staged at the second staging path");
        }
    }
    let published = s.targets.iter().filter(|t| t.is_some()).count();
    if published >= 2 {
        kinds.push("published at two targets");
    }
    // A target published before and unpublished since, while another stands.
    let taken = s.targets.iter().zip(&s.targets_used).any(|(t, u)| t.is_none() && u.is_some());
    if taken && published >= 1 {
        kinds.push("one of two targets unpublished");
    }
    if s.targets.contains(&Some(true)) {
        kinds.push("readonly target");
    }
    match at {
        Some(At::Staging) if s.staged => kinds.push("at the staging path"),
        Some(At::Target(t)) if taken && s.targets[usize::from(t)].is_some() => {
            kinds.push("at the target kept after another's unpublish");
        }
        _ => {}
    }
}
