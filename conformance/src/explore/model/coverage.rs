//! What a call is about, in words for the coverage table: the lifecycle state of the volume or
//! snapshot it names, or the kind of move it is where a state does not tell moves apart (a late
//! retry, a size at a boundary, a source used again, a path that is not the volume's).

use super::super::call::{Call, Elsewhere, FAR, Filter, Mismatch, Source};
use super::{Life, MIB, Model, VolState};

impl Model {
    /// Name #n holds a volume standing.
    fn name_held(&self, name: u16) -> bool {
        self.current(name).and_then(|v| self.vol(v)).is_some_and(|s| s.life == Life::Alive)
    }

    /// What `source` went through before a new volume is made from it, for the coverage
    /// table: used before (its earlier uses alive or deleted), itself a clone or restore, or
    /// published on the node; `None` when nothing of these.
    fn source_history(&self, source: Source) -> Option<&'static str> {
        let uses: Vec<&VolState> =
            self.vols.values().filter(|s| s.source == Some(source)).collect();
        let deleted = uses.iter().any(|s| s.life == Life::Dead);
        let snapshot = !matches!(source, Source::Volume(_));
        match source {
            _ if snapshot && deleted => {
                Some("a snapshot restored again, an earlier restore of it deleted")
            }
            _ if snapshot && !uses.is_empty() => Some("a snapshot restored again"),
            Source::Snapshot(_) | Source::Member(..) => None,
            Source::Volume(v) => {
                let s = self.vol(v)?;
                if s.source.is_some() {
                    Some("a clone of a clone or a restore")
                } else if s.targets.iter().any(Option::is_some) {
                    Some("a clone of a node-published volume")
                } else if !uses.is_empty() {
                    Some("a volume cloned again")
                } else {
                    None
                }
            }
        }
    }

    /// A NodeStageVolume or NodePublishVolume of a live volume after it was undone (a pod
    /// deleted, a new pod; a kubelet restarted with another plugin folder), for the coverage
    /// table: staged again at the same or at the other staging path; published again at the
    /// target unpublished (with the same or the other readonly flag) or at a new one.
    fn again(&self, call: &Call) -> Option<&'static str> {
        match *call {
            Call::Stage { vol, path } => {
                let s = self.alive(vol).filter(|s| s.staged_ever && !s.staged)?;
                Some(if path == s.staging {
                    "staged again at the staging path it was unstaged from"
                } else {
                    "staged again at its other staging path"
                })
            }
            Call::Publish { vol, target, readonly } => {
                let s = self.alive(vol).filter(|s| s.targets.iter().all(Option::is_none))?;
                match s.targets_used[usize::from(target)] {
                    Some(ro) if ro == readonly => {
                        Some("again at a target unpublished, the same readonly flag")
                    }
                    Some(_) => Some("again at a target unpublished, the other readonly flag"),
                    None if s.targets_used.iter().any(Option::is_some) => {
                        Some("at a new target after an unpublish")
                    }
                    None => None,
                }
            }
            _ => None,
        }
    }

    /// `call` asks for a size GetCapacity's answer gave (its maximum_volume_size, or
    /// just above; its minimum_volume_size as a limit, or just below).
    fn sized_at_bound(&self, call: &Call) -> bool {
        let Some(b) = self.bounds else { return false };
        let mib = |x: Option<i64>| x.map(|x| (x / MIB, (x + MIB - 1) / MIB));
        let near = |asked: u32, x: Option<(i64, i64)>| {
            let a = i64::from(asked);
            asked > 0 && x.is_some_and(|(lo, hi)| a == lo || a == lo + 1 || a == hi || a == hi - 1)
        };
        match *call {
            Call::CreateVolume { mib: m, limit, source: None, .. } => {
                near(m, mib(b.max)) || near(limit, mib(b.min))
            }
            Call::Expand { mib: m, .. } => near(m, mib(b.max)),
            _ => false,
        }
    }

    /// `call` asks for a size past what the plugin can give: [`FAR`] (GetCapacity not
    /// answered), or more than the `available_capacity` it last answered (more than the free
    /// space plus the volume's size, for an expansion) and more than one MiB above its maximum.
    fn past_pool(&self, call: &Call) -> Option<&'static str> {
        let (mib, now) = match *call {
            Call::CreateVolume { mib, source: None, .. } => (mib, 0),
            Call::Expand { vol, mib, .. } => (mib, self.vol(vol).map_or(0, |s| s.capacity)),
            _ => return None,
        };
        let asked = i64::from(mib) * MIB;
        if mib == FAR {
            return Some("a size far beyond any pool (2^50 bytes)");
        }
        let b = self.bounds?;
        let over_max = b.max.is_none_or(|max| asked > max + MIB);
        (asked > b.available.saturating_add(now) && over_max)
            .then_some("a size past GetCapacity's available_capacity")
    }

    /// The shape of a NodeExpandVolume of a live volume of known size, as `generate/sizes.rs`
    /// makes them: its range, and for a size at the volume's, whether the controller grew it and
    /// the node has not yet.
    fn node_shape(&self, call: &Call) -> Option<&'static str> {
        let Call::NodeExpand { vol, mib, limit } = *call else { return None };
        let s = self.vol(vol).filter(|s| s.life == Life::Alive && s.capacity > 0)?;
        let asked = i64::from(mib) * MIB;
        Some(match (mib, limit) {
            (0, 0) => "no capacity_range",
            (_, l) if l > 0 => "limit_bytes at or above its size",
            _ if asked + MIB <= s.capacity && s.expanded && asked <= s.first_capacity => {
                "a size from before the controller's expansion"
            }
            _ if asked + MIB <= s.capacity => "one MiB or more below its size",
            _ if s.grown.is_empty() => "at its size, never grown by the controller",
            _ if i64::from(s.node_grown) * MIB + MIB > s.capacity => {
                "at the controller's size, the node grown to it before"
            }
            _ => "at the controller's size, before the node grew it",
        })
    }

    /// The lifecycle state of what `call` is about, for the coverage table: the volume's
    /// (`CREATED` ... `DELETED`), a snapshot's (`snapshot alive` ...), or `-`.
    pub(crate) fn state_of(&self, call: &Call) -> &'static str {
        match call {
            Call::CreateVolume { source: None, .. } | Call::Expand { .. }
                if self.past_pool(call).is_some() =>
            {
                self.past_pool(call).unwrap_or("-")
            }
            Call::NodeExpand { .. } if self.node_shape(call).is_some() => {
                self.node_shape(call).unwrap_or("-")
            }
            Call::ModifyUnsupported(_) => "a key no plugin takes among the suite's",
            Call::CreateVolume { name, .. }
                if self
                    .current(*name)
                    .and_then(|v| self.vol(v))
                    .is_some_and(|s| s.life == Life::Alive && s.modify_refused) =>
            {
                "name held, a ControllerModifyVolume of it refused"
            }
            Call::CreateVolume { name, source: Some(src), .. }
                if !self.name_held(*name)
                    && let Some(history) = self.source_history(*src) =>
            {
                history
            }
            Call::CreateSnapshot { name, source }
                if self.current_snap(*name).is_none()
                    && self
                        .vol(*source)
                        .is_some_and(|s| s.life == Life::Alive && s.source.is_some()) =>
            {
                "new name, of a clone or a restore"
            }
            Call::CreateVolume { name, source: Some(_), mib, limit } if *mib > 0 || *limit > 0 => {
                match self.current(*name).and_then(|v| self.vol(v)) {
                    Some(s) if s.life == Life::Alive => "name held",
                    _ => "new name, a size relative to its source",
                }
            }
            Call::CreateVolume { name, .. } if !self.sized_at_bound(call) => {
                match self.current(*name).and_then(|v| self.vol(v)) {
                    Some(s) if s.life == Life::Alive => "name held",
                    Some(_) => "name free again",
                    None => "new name",
                }
            }
            Call::CreateSnapshot { name, .. } => {
                match self.current_snap(*name).and_then(|x| self.snap(x)) {
                    Some(x)
                        if x.life == Life::Alive
                            && self.vol(x.source).is_some_and(|v| v.life == Life::Dead) =>
                    {
                        "name held, its source deleted"
                    }
                    Some(x) if x.life == Life::Alive => "name held",
                    _ => "new name",
                }
            }
            Call::ListHold { .. } => "first page, its token held",
            Call::ListResume { snapshots: false } => match &self.held {
                Some(h) if h.changed => "held token, volumes made or deleted since",
                _ => "held token, nothing made or deleted since",
            },
            Call::ListResume { snapshots: true } => match &self.held_snaps {
                Some(h) if h.changed => "held token, snapshots made or deleted since",
                _ => "held token, nothing made or deleted since",
            },
            // The kinds of move a state does not tell apart: a late retry, a second target.
            Call::Expand { vol, mib, limit }
                if self.vol(*vol).is_some_and(|s| {
                    s.life == Life::Alive
                        && s.grown.iter().any(|(m, l, _)| (m, l) == (mib, limit))
                        && s.capacity > i64::from(*mib) * MIB
                }) =>
            {
                "a size answered before, grown since"
            }
            Call::Expand { vol, mib, limit } if *limit > 0 && self.alive(*vol).is_some() => {
                let before = self.alive(*vol).map_or(0, |s| s.grown.len());
                match (*limit == *mib, before) {
                    (false, _) => "limit_bytes above required_bytes",
                    (true, 0) => "an exact size (limit_bytes = required_bytes), the first growth",
                    (true, 1) => "an exact size (limit_bytes = required_bytes), a second growth",
                    (true, _) => {
                        "an exact size (limit_bytes = required_bytes), a third growth or later"
                    }
                }
            }
            Call::Publish { .. } | Call::Stage { .. } if self.again(call).is_some() => {
                self.again(call).unwrap_or("-")
            }
            Call::Publish { vol, target, .. } | Call::Unpublish { vol, target }
                if self.vol(*vol).is_some_and(|s| {
                    s.life == Life::Alive
                        && s.targets
                            .iter()
                            .enumerate()
                            .any(|(i, x)| i != usize::from(*target) && x.is_some())
                }) =>
            {
                "another target published"
            }
            Call::Elsewhere { at, .. } => match at {
                Elsewhere::SecondStaging => "at its second staging path",
                Elsewhere::Staging(_) => "at another volume's staging path",
                Elsewhere::Target(_) => "at another volume's target path",
                Elsewhere::Nowhere => "at a folder of no volume",
            },
            Call::GetCapacity { with: true } => "with the walk's capability",
            Call::GetCapacity { with: false } => "with no capability",
            Call::CreateVolume { .. } | Call::Expand { .. } if self.sized_at_bound(call) => {
                "a size at GetCapacity's bounds"
            }
            Call::DeleteSnapshot(s)
                if self
                    .vols
                    .values()
                    .any(|v| v.life == Life::Alive && v.source == Some(Source::Snapshot(*s)))
                    && self.snap(*s).is_some_and(|x| x.life == Life::Alive) =>
            {
                "snapshot alive, a restore of it alive"
            }
            Call::DeleteSnapshot(s)
            | Call::GetSnapshot(s)
            | Call::ListSnapshots { filter: Filter::Id(s), .. } => match self.snap(*s) {
                Some(x) if x.life == Life::Dead => "snapshot deleted",
                Some(x) if self.vol(x.source).is_some_and(|v| v.life == Life::Dead) => {
                    "snapshot of a deleted volume"
                }
                Some(_) => "snapshot alive",
                None => "-",
            },
            Call::DeleteGroupMismatch { ids, .. } => match ids {
                Mismatch::Lone(_) => "group standing, a snapshot cut alone named too",
                Mismatch::Other(_) => "group standing, another group's snapshot named too",
                Mismatch::Short => "group standing, one of its snapshots left out",
            },
            Call::Member { group, .. } => match self.groups.get(group) {
                Some(g) if g.life == Life::Alive => "group standing",
                Some(g) if g.life == Life::Dead => "group deleted",
                _ => "-",
            },
            other => match other.volume().and_then(|v| self.vol(v)) {
                Some(s) => s.state(),
                None => "-",
            },
        }
    }
}
