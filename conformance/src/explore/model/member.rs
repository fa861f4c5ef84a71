//! The snapshot a restore names, whatever cut it: one cut alone (`Source::Snapshot`) or one of
//! a group snapshot's (`Source::Member`). To the spec a group's snapshots are snapshots like
//! any other ("plugins supporting CREATE_DELETE_SNAPSHOT MUST support creating volume from
//! snapshot"), so the rules of restores read both through this one view.

use super::super::call::{Grp, Source, Vol};
use super::{Life, Model};

/// A snapshot as a restore's rules see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Restorable<'a> {
    pub(crate) id: &'a str,
    /// A member's is its group's: deleted with it ("will delete ... all individual snapshots
    /// that are part of" it), unknown when the group is.
    pub(crate) life: Life,
    /// The volume it was cut from, when the history knows it.
    pub(crate) origin: Option<Vol>,
    /// `size_bytes` as answered (0: unknown).
    pub(crate) size: i64,
    /// Ready to use when cut, or as last described.
    pub(crate) ready: bool,
}

impl Model {
    /// The id group `g`'s answer gave its `nth` snapshot.
    pub(crate) fn member_id(&self, g: Grp, nth: u8) -> Option<&str> {
        let x = self.groups.get(&g)?;
        x.members.get(usize::from(nth)).map(|(id, _)| id.as_str())
    }

    /// The snapshot `source` names (none for a volume, or a snapshot the history lost track
    /// of).
    pub(crate) fn restorable(&self, source: Source) -> Option<Restorable<'_>> {
        let described = |id: &str| self.snap_facts.get(id).is_some_and(|f| f.ready);
        match source {
            Source::Volume(_) => None,
            Source::Snapshot(x) => {
                let s = self.snaps.get(&x)?;
                Some(Restorable {
                    id: &s.id,
                    life: s.life,
                    origin: Some(s.source),
                    size: s.size,
                    ready: s.ready || described(&s.id),
                })
            }
            Source::Member(g, nth) => {
                let x = self.groups.get(&g)?;
                let (id, from) = x.members.get(usize::from(nth))?;
                let origin = x.source_ids.iter().position(|i| i == from).map(|i| x.sources[i]);
                Some(Restorable {
                    id,
                    life: x.life,
                    origin,
                    size: x.sizes.get(usize::from(nth)).copied().unwrap_or(0),
                    ready: described(id),
                })
            }
        }
    }

    /// The snapshot `source` names, in a finding's words.
    pub(crate) fn restorable_words(source: Source) -> String {
        match source {
            Source::Snapshot(x) => format!("snapshot {x}"),
            Source::Member(g, n) => format!("{g}'s snapshot #{n}"),
            Source::Volume(v) => format!("volume {v}"),
        }
    }
}
