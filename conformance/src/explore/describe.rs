//! Every answer that describes a volume or a snapshot, held field by field to what earlier
//! answers said of it (Jepsen's lesson: every read is checked against the history, not only the
//! read a step was written for). One checker for each kind of object, called by every RPC that
//! describes one (ListVolumes over its pages and from a held token, ControllerGetVolume;
//! ListSnapshots however filtered and paged, GetSnapshot, the snapshots of
//! CreateVolumeGroupSnapshot and GetVolumeGroupSnapshot), so a path the walk rarely takes is
//! held to the same rule as the common one.
//!
//! What each field may do, by the spec:
//! - a volume's capacity: never below what was accepted, never above a limit that binds
//!   (`capacity-at-least`, `capacity-at-most`); `published_node_ids` as the publications left it;
//! - a volume's `content_source`: OPTIONAL, but when answered it is the source the volume was
//!   made from ("If specified, indicates that the volume is not empty and is pre-populated with
//!   data from the specified source"): another source, or one for a volume made empty, is a
//!   description of another volume under this id (`volume-described-same`);
//! - a snapshot's `source_volume_id` and `creation_time`: facts of the moment it was cut
//!   ("Identity information for the source volume", "Timestamp when the point-in-time snapshot
//!   is taken"); another value later describes another snapshot under this id
//!   (`snapshot-described-same`; ListSnapshots' own sentence, `snapshots-current`, for a listing);
//!   a time not answered at first may become known;
//! - a group's snapshot whose `group_snapshot_id` the group's answer set (it CAN NOT be deleted
//!   alone): every later description carries that id (`snapshot-group-carried`);
//! - `ready_to_use` from true back to false: no sentence forbids it; a note
//!   (`snapshot-ready-kept`), as a CO that saw it ready may have used it as a source;
//! - `size_bytes`: allowed to differ (the field is the plugin's guidance on the space a restore
//!   needs, with no sentence fixing it once answered); a restore is held to the size the
//!   snapshot's CreateSnapshot answered (`restore-at-least-snapshot`).

use super::call::Vol;
use super::judge::{Listed, ListedSnapshot, Verdicts};
use super::model::{Life, Model};
use super::rules::Rule;

impl Model {
    /// A volume of the history as `rpc` describes it.
    pub(super) fn volume_described(&self, v: &mut Verdicts, vol: Vol, e: &Listed, rpc: &str) {
        self.capacity(v, vol, e.capacity, rpc);
        self.published_nodes(v, vol, e.on_node, rpc);
        let Some(s) = self.vols.get(&vol).filter(|s| s.life == Life::Alive) else { return };
        let Some(got) = &e.source else { return };
        v.check(Rule::VolumeDescribedSame);
        let made = s.answered_source.clone().or_else(|| self.source_id(s.source));
        if made.as_ref() == Some(got) {
            return;
        }
        let words =
            |x: &(bool, String)| format!("{} {}", if x.0 { "snapshot" } else { "volume" }, x.1);
        let was = made.as_ref().map_or_else(
            || "made with no content source".to_owned(),
            |m| format!("made from {}", words(m)),
        );
        v.broke(
            Rule::VolumeDescribedSame,
            format!(
                "{rpc} describes {vol} (id {}) with content_source {}; it was {was}",
                s.id,
                words(got)
            ),
        );
    }

    /// A snapshot id that names a snapshot standing: cut alone, or of a group standing.
    fn snap_standing(&self, id: &str) -> bool {
        self.snaps.values().any(|x| x.life == Life::Alive && x.id == id)
            || self.group_members(true).iter().any(|(s, _)| *s == id)
    }

    /// A snapshot as `rpc` describes it, held to what earlier answers said of it; what was not
    /// known before (a creation time) is known from now on.
    pub(super) fn snapshot_described(&mut self, v: &mut Verdicts, e: &ListedSnapshot, rpc: &str) {
        if !self.snap_standing(&e.id) {
            return;
        }
        let Some(f) = self.snap_facts.get_mut(&e.id) else { return };
        let what = format!("{rpc} describes snapshot {}", e.id);
        let same = if rpc == "ListSnapshots" {
            Rule::SnapshotsCurrent
        } else {
            Rule::SnapshotDescribedSame
        };
        v.check(same);
        let mut differs = Vec::new();
        if e.source != f.source {
            differs
                .push(format!("source_volume_id {:?}; it was cut from {:?}", e.source, f.source));
        }
        if let (Some(a), Some(b)) = (e.created, f.created)
            && a != b
        {
            differs.push(format!("creation_time {a:?}; it was cut at {b:?}"));
        }
        if !differs.is_empty() {
            v.broke(same, format!("{what} with {}", differs.join(", ")));
        }
        if let Some(g) = &f.group {
            v.check(Rule::SnapshotGroupCarried);
            if e.group != *g {
                v.broke(
                    Rule::SnapshotGroupCarried,
                    format!(
                        "{what} with group_snapshot_id {:?}; the answer of its group snapshot {g} set it, so it CAN NOT be deleted alone",
                        e.group
                    ),
                );
            }
        }
        if f.ready {
            v.check(Rule::SnapshotReadyKept);
            if !e.ready {
                v.broke(Rule::SnapshotReadyKept, format!("{what} not ready_to_use; it was before"));
            }
        }
        f.ready = e.ready;
        if f.created.is_none() {
            f.created = e.created;
        }
    }
}
