//! The reference model: what the plugin holds after the history so far, as the spec's volume
//! lifecycle (CREATED → NODE_READY → VOL_READY → PUBLISHED and back) and snapshots describe it,
//! from the calls made and what the plugin answered. Pure data: no IO, no clock. It says which
//! calls a CO may make next ([`Model::enabled`]) and, in `judge`, what each answer may be.

use std::collections::BTreeMap;

use csikit::v1::volume_capability::access_mode::Mode;

use super::call::{
    At, Bounds, Call, Elsewhere, Filter, Grp, Mismatch, NodeRpc, STAGINGS, Snap, Source, Vol,
};
use super::rules::Rule;

/// What the plugin serves, as far as the explorer uses it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caps {
    /// CREATE_DELETE_VOLUME.
    pub(crate) create: bool,
    /// PUBLISH_UNPUBLISH_VOLUME, and a node to publish to (the Node service names one).
    pub(crate) publish: bool,
    /// PUBLISH_READONLY.
    pub(crate) readonly: bool,
    pub(crate) list_volumes: bool,
    /// LIST_VOLUMES_PUBLISHED_NODES: `published_node_ids` is the plugin's to keep.
    pub(crate) published_nodes: bool,
    pub(crate) get_volume: bool,
    /// Controller EXPAND_VOLUME.
    pub(crate) expand: bool,
    /// VolumeExpansion ONLINE (else a volume is expanded only while unpublished).
    pub(crate) online: bool,
    /// CREATE_DELETE_SNAPSHOT.
    pub(crate) snapshots: bool,
    pub(crate) list_snapshots: bool,
    pub(crate) get_snapshot: bool,
    /// CLONE_VOLUME.
    pub(crate) clone: bool,
    /// The Node service answers.
    pub(crate) node: bool,
    /// STAGE_UNSTAGE_VOLUME.
    pub(crate) stage: bool,
    /// GET_VOLUME_STATS.
    pub(crate) stats: bool,
    /// Node EXPAND_VOLUME.
    pub(crate) node_expand: bool,
    /// MODIFY_VOLUME, and mutable parameters to send (the suite's `--mutable-parameters`).
    pub(crate) modify: bool,
    /// The GroupController's CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT.
    pub(crate) groups: bool,
    /// SINGLE_NODE_MULTI_WRITER, of the Controller service and of the Node service when there
    /// is one: the SINGLE_NODE_SINGLE_WRITER and SINGLE_NODE_MULTI_WRITER access modes.
    pub(crate) single_node_modes: bool,
    /// GET_CAPACITY.
    pub(crate) capacity: bool,
    /// The plugin's paths are this machine's (a unix socket): target paths can be looked at.
    pub(crate) local: bool,
    /// The walk is the only one making and deleting volumes (one lane): a listing's pages
    /// move only with what this model sees.
    pub(crate) alone: bool,
}

/// A ListVolumes (or ListSnapshots) `next_token` the attempt holds: the ids its first page
/// listed, and whether a volume (a snapshot) was created or deleted since (then the spec lets
/// the pages shift: "the CO MAY either witness duplicate volumes in the list, not witness
/// existing volumes, or both", and the same of snapshots).
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    pub(crate) first: Vec<String>,
    pub(crate) changed: bool,
}

/// Whether an object is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Life {
    Alive,
    /// Deleted, and the plugin said OK.
    Dead,
    /// A call that changes it failed with an error the spec allows: what the plugin holds is
    /// not known, so nothing is checked of it and only the clean-up touches it.
    Lost,
}

/// The last call that undid part of a volume's use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Undo {
    ControllerUnpublish { all: bool },
    Unstage,
    NodeUnpublish,
}

/// A range ControllerExpandVolume answered OK, in MiB (`required_bytes`, `limit_bytes`; 0: not
/// set), with the first `node_expansion_required` answered for it and the capacity answered with
/// it (`None` once a NodeExpandVolume answered OK since: the node's work is then done, and the
/// flag may change).
pub(crate) type Growth = (u32, u32, Option<(bool, i64)>);

/// A volume of the history.
#[derive(Debug, Clone)]
pub(crate) struct VolState {
    /// The id the plugin issued.
    pub(crate) id: String,
    pub(crate) life: Life,
    /// The range asked at creation, in MiB (0: not set).
    pub(crate) mib: u32,
    pub(crate) asked_limit: u32,
    pub(crate) source: Option<Source>,
    /// The capacity last answered (0: unknown).
    pub(crate) capacity: i64,
    /// The capacity and content source (kind, id) its CreateVolume answered: a retry's
    /// answer is "the corresponding CreateVolumeResponse".
    pub(crate) first_capacity: i64,
    pub(crate) answered_source: Option<(bool, String)>,
    /// The largest `required_bytes` the plugin accepted for it.
    pub(crate) floor: i64,
    /// The `limit_bytes` that still binds it (0: none): its CreateVolume's, until an
    /// expansion answered OK, then that expansion's ("Volume MUST not be bigger than this"
    /// binds the capacity the volume has after it).
    pub(crate) limit: i64,
    /// ControllerExpandVolume was asked of it (answered or not).
    pub(crate) expanded: bool,
    /// The last ControllerExpandVolume answered OK: its `required_bytes` and `limit_bytes` in
    /// MiB (0: not set), in the use it was made in ([`VolState::usage`]); a repeat in the same
    /// use is the same request again.
    pub(crate) expanded_ok: Option<(u32, u32, u8)>,
    /// Every range ControllerExpandVolume answered OK: a CO may send any of them again, much
    /// later.
    pub(crate) grown: Vec<Growth>,
    /// The last NodeExpandVolume answered OK: its `required_bytes` and `limit_bytes` in MiB
    /// (0: not set), in the use it was made in; a repeat in the same use is the same request.
    pub(crate) node_expanded_ok: Option<(u32, u32, u8)>,
    /// The largest `required_bytes`, in MiB, a NodeExpandVolume answered OK: the node's file
    /// system is at least that big.
    pub(crate) node_grown: u32,
    /// ControllerModifyVolume answered OK (always with the same parameters).
    pub(crate) modified: bool,
    /// Its CreateVolume again (the very request that made it) was answered OK, in this use
    /// ([`VolState::usage`]), with no expansion nor modification since: the plugin met it.
    pub(crate) retried_ok: Option<u8>,
    /// A ControllerModifyVolume of it was refused with INVALID_ARGUMENT, the row "Parameters
    /// not supported" ("The SP MUST NOT have applied any modification to the volume as part of
    /// this specific call"), after its CreateVolume again was met ([`VolState::retried_ok`]).
    pub(crate) modify_refused: bool,
    /// A ControllerModifyVolume of it may have changed it, though not answered OK: refused with
    /// a code no row says applied nothing (a timeout may come after the work was done), or one
    /// with an unknown key answered OK (what it applied is the plugin's).
    pub(crate) modify_unknown: bool,
    /// Whether ValidateVolumeCapabilities (always of the same capability) confirmed it, since
    /// it was made or last modified.
    pub(crate) confirmed: Option<bool>,
    /// Controller-published to the plugin's node: with `readonly`.
    pub(crate) published: Option<bool>,
    pub(crate) staged: bool,
    /// It was staged at some time.
    pub(crate) staged_ever: bool,
    /// The staging path (#0 or #1) it is staged at, or was last: where it is published from,
    /// unstaged, asked for statistics and expanded; its other is its second staging path.
    pub(crate) staging: u8,
    /// Node-published at target #t: with `readonly`.
    pub(crate) targets: [Option<bool>; TARGETS],
    /// Target #t was published at some time: with `readonly`, the last time.
    pub(crate) targets_used: [Option<bool>; TARGETS],
    pub(crate) last_undo: Option<Undo>,
    /// Every kind of undo it went through, in order, for a finding's words.
    pub(crate) undone: Vec<Undo>,
    /// DeleteVolume was refused with FAILED_PRECONDITION (snapshots, or in use).
    pub(crate) refused_delete: bool,
    /// Staged at its second staging path too, the one of the two it is not staged at (the
    /// plugin took a second NodeStageVolume).
    pub(crate) second_staged: bool,
    /// What the plugin chose where the spec let it answer a call out of order more than one
    /// way, and what it is then held to.
    pub(crate) chose: Chose,
}

impl VolState {
    /// Nothing uses it: the lifecycle's CREATED.
    pub(crate) fn unused(&self) -> bool {
        self.published.is_none()
            && !self.staged
            && !self.second_staged
            && self.targets.iter().all(Option::is_none)
    }

    /// An expansion bounded by `limit` MiB (0: none) can be met: no expansion shrinks, so a
    /// volume of known size already past the limit cannot.
    pub(crate) fn meets_limit(&self, limit: u32) -> bool {
        limit == 0 || (self.capacity > 0 && self.capacity <= i64::from(limit) * MIB)
    }

    /// How it is used, as a number: controller-published, staged, node-published.
    pub(crate) fn usage(&self) -> u8 {
        u8::from(self.published.is_some())
            | u8::from(self.staged) << 1
            | u8::from(self.targets.iter().any(Option::is_some)) << 2
    }

    /// Its lifecycle state, for the coverage table.
    pub(crate) fn state(&self) -> &'static str {
        match self.life {
            Life::Dead if self.chose.deleted_in_use => "DELETED while in use",
            Life::Dead => "DELETED",
            Life::Lost => "LOST",
            Life::Alive if self.targets.iter().any(Option::is_some) => "PUBLISHED",
            Life::Alive if self.staged => "VOL_READY",
            Life::Alive if self.published.is_some() => "NODE_READY",
            Life::Alive => "CREATED",
        }
    }
}

/// The answers a plugin chose to calls out of the lifecycle's order or at paths that are not a
/// volume's, each of which the spec allowed, and which the rest of the history is held to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Chose {
    /// A call out of order (DeleteVolume while in use, ControllerUnpublishVolume while the
    /// node uses the volume, NodeUnstageVolume while published at a target) was refused: the
    /// volume is kept as it was.
    pub(crate) refused_in_use: bool,
    /// DeleteVolume answered OK while the volume was in use: it is gone, on the node too.
    pub(crate) deleted_in_use: bool,
    /// ControllerExpandVolume to this many bytes (the smallest such) was refused with a code
    /// whose row says the volume was not grown (FAILED_PRECONDITION, "could not be expanded";
    /// OUT_OF_RANGE, "not allowed by the Plugin"), and the rule that row is: no read may show
    /// it grown to that size.
    pub(crate) refused_expand: Option<(i64, Rule)>,
    /// A call of another volume (or of this one) at a path that is not where this volume is
    /// was answered OK: what this volume has at its own paths is held to still be there.
    pub(crate) foreign_touched: bool,
}

/// A snapshot of the history.
#[derive(Debug, Clone)]
pub(crate) struct SnapState {
    pub(crate) id: String,
    pub(crate) life: Life,
    pub(crate) source: Vol,
    /// The source volume's id when it was cut.
    pub(crate) source_id: String,
    pub(crate) size: i64,
    pub(crate) ready: bool,
    /// `source_volume_id` and `creation_time` its CreateSnapshot answered: facts of the
    /// snapshot, fixed when it was cut.
    pub(crate) answered_source: String,
    pub(crate) created: Option<(i64, i32)>,
}

/// What earlier answers said of a snapshot (by id) that later descriptions are held to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SnapFacts {
    /// `source_volume_id` as first answered (or, unanswered, the id it was cut from).
    pub(crate) source: String,
    pub(crate) created: Option<(i64, i32)>,
    /// `ready_to_use` as last described.
    pub(crate) ready: bool,
    /// The group snapshot whose answer set its `group_snapshot_id`.
    pub(crate) group: Option<String>,
}

/// A group snapshot of the history.
#[derive(Debug, Clone)]
pub(crate) struct GroupState {
    pub(crate) id: String,
    pub(crate) life: Life,
    /// Its source volumes, and their ids, in the order asked.
    pub(crate) sources: [Vol; 2],
    pub(crate) source_ids: [String; 2],
    /// Its snapshots: (snapshot id, source volume id), as the plugin answered.
    pub(crate) members: Vec<(String, String)>,
    /// Each snapshot's `group_snapshot_id` was set: it CAN NOT be deleted alone.
    pub(crate) bound: Vec<bool>,
    /// Each snapshot's `size_bytes` as answered (0: unknown).
    pub(crate) sizes: Vec<i64>,
}

/// A name of the history: its objects so far (the last is the current one), and whether a
/// CreateVolume of it failed (then it is never used again: the plugin may or may not hold it).
#[derive(Debug, Clone, Default)]
pub(crate) struct NameState {
    pub(crate) gens: u16,
    pub(crate) burnt: bool,
}

/// One broken rule, in the explorer's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    pub(crate) rule: Rule,
    pub(crate) detail: String,
}

/// The reference model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Model {
    pub(crate) caps: Caps,
    pub(crate) vols: BTreeMap<Vol, VolState>,
    pub(crate) names: BTreeMap<u16, NameState>,
    pub(crate) snaps: BTreeMap<Snap, SnapState>,
    pub(crate) snap_names: BTreeMap<u16, NameState>,
    pub(crate) groups: BTreeMap<Grp, GroupState>,
    pub(crate) group_names: BTreeMap<u16, NameState>,
    /// The ListVolumes token held, if one.
    pub(crate) held: Option<Held>,
    /// The ListSnapshots token held, if one.
    pub(crate) held_snaps: Option<Held>,
    /// What GetCapacity last answered for the walk's capability and parameters.
    pub(crate) bounds: Option<Bounds>,
    /// Nothing that may move the pool was called since (see [`Call::changes_pool`]).
    pub(crate) bounds_fresh: bool,
    /// What earlier answers said of each snapshot, by id (see `describe`).
    pub(crate) snap_facts: BTreeMap<String, SnapFacts>,
    /// Snapshots not of a group that a DeleteVolumeGroupSnapshot of the group named in its
    /// `snapshot_ids` (by id): held to stand, and, if found gone, that delete is why.
    pub(crate) mismatch_named: BTreeMap<String, Grp>,
    /// Volume names whose last CreateVolume (from a live source) was refused for a reason
    /// that lasts, nothing made of them since (see `judge/refusal`).
    pub(crate) refused_creates: BTreeMap<u16, Refused>,
    /// Refusals that may pass, in a row per source and shape (see `judge/repeats`).
    pub(crate) repeats: repeats::Repeats,
    /// Group snapshot names whose CreateVolumeGroupSnapshot of a live and a deleted volume
    /// was refused: the same request may come again (see `judge/group`).
    pub(crate) stale_groups: BTreeMap<u16, [Vol; 2]>,
    /// Block volumes walked beside mount ones, and the readonly mounts held (see `seen`).
    pub(crate) seen: seen::NodeSeen,
}

pub(crate) const MIB: i64 = 1 << 20;

/// Target paths a volume may be node-published at, at once: up to three, so that undoing them
/// in any order (the first before the second, the second before the first) is walked, where
/// the plugin takes a second target (its access mode allows it, or it accepts what the spec
/// says it SHOULD refuse).
pub(crate) const TARGETS: usize = 3;

impl Model {
    /// An empty model of a plugin with `caps`.
    pub(crate) fn new(caps: Caps) -> Model {
        Model { caps, ..Model::default() }
    }

    /// The volume name #n currently holds (alive, dead or lost), if it ever held one.
    pub(crate) fn current(&self, name: u16) -> Option<Vol> {
        let gens = self.names.get(&name)?.gens;
        (gens > 0).then(|| Vol { name, nth: gens - 1 })
    }

    /// The snapshot snapshot name #n currently holds, if it ever held one.
    pub(crate) fn current_snap(&self, name: u16) -> Option<Snap> {
        let gens = self.snap_names.get(&name)?.gens;
        (gens > 0).then(|| Snap { name, nth: gens - 1 })
    }

    /// The group snapshot group name #n currently holds, if it ever held one.
    pub(crate) fn current_group(&self, name: u16) -> Option<Grp> {
        let gens = self.group_names.get(&name)?.gens;
        (gens > 0).then(|| Grp { name, nth: gens - 1 })
    }

    pub(crate) fn vol(&self, v: Vol) -> Option<&VolState> {
        self.vols.get(&v)
    }

    /// The plugin expands volume `s` in its present use: any use with ONLINE expansion, only
    /// unused without it (else an expansion is out of order).
    pub(crate) fn may_expand(&self, s: &VolState) -> bool {
        self.caps.online || s.unused()
    }

    /// The access mode the walk asks for with volume name #`name`, made from nothing when
    /// `plain`. A kubelet asks for the mode of the volume's claim, and a claim may be
    /// ReadWriteOncePod (SINGLE_NODE_SINGLE_WRITER) where the plugin advertises the single-node
    /// modes: plain volumes then take SINGLE_NODE_WRITER, SINGLE_NODE_SINGLE_WRITER and
    /// SINGLE_NODE_MULTI_WRITER in turn, by name, so a retry asks what its first call asked.
    /// A clone or a restore keeps SINGLE_NODE_WRITER ("and/or": a plugin may serve one of the
    /// two modes only, and a source refused for its mode is not the source's fault).
    pub(crate) fn mode_for(&self, name: u16, plain: bool) -> Mode {
        if !self.caps.single_node_modes || !plain {
            return Mode::SingleNodeWriter;
        }
        match name % 3 {
            0 => Mode::SingleNodeWriter,
            1 => Mode::SingleNodeSingleWriter,
            _ => Mode::SingleNodeMultiWriter,
        }
    }

    /// The staging path (#0 or #1, see [`STAGINGS`]) volume `v` is staged at, or was last (#0
    /// for a volume the model does not know).
    pub(crate) fn staging_of(&self, v: Vol) -> u8 {
        self.vol(v).map_or(0, |s| s.staging)
    }

    /// The staging path volume `v` is not staged at (or was not last): its second.
    pub(crate) fn other_staging(&self, v: Vol) -> u8 {
        (self.staging_of(v) + 1) % STAGINGS
    }

    /// [`Model::mode_for`] of volume `v` (a volume the model does not know counts as plain).
    pub(crate) fn mode_of(&self, v: Vol) -> Mode {
        self.mode_for(v.name, self.vol(v).is_none_or(|x| x.source.is_none()))
    }

    pub(crate) fn snap(&self, s: Snap) -> Option<&SnapState> {
        self.snaps.get(&s)
    }

    fn alive(&self, v: Vol) -> Option<&VolState> {
        self.vols.get(&v).filter(|s| s.life == Life::Alive)
    }

    /// `v` is dead and its id names no live volume of the history (a plugin may give a deleted
    /// volume's id to a new one: then a call with it is a call on the new one).
    fn dead(&self, v: Vol) -> bool {
        self.vols.get(&v).is_some_and(|s| s.life == Life::Dead && !self.id_in_use(&s.id))
    }

    fn snap_dead(&self, s: Snap) -> bool {
        self.snaps.get(&s).is_some_and(|x| {
            x.life == Life::Dead
                && !self.snaps.values().any(|o| o.life != Life::Dead && o.id == x.id)
        })
    }

    /// A volume of the history that is not dead holds `id`.
    pub(crate) fn id_in_use(&self, id: &str) -> bool {
        self.vols.values().any(|s| s.life != Life::Dead && s.id == id)
    }

    /// Live volumes, and live snapshots.
    pub(crate) fn live_counts(&self) -> (usize, usize) {
        let v = self.vols.values().filter(|s| s.life != Life::Dead).count();
        let s = self.snaps.values().filter(|s| s.life != Life::Dead).count();
        (v, s)
    }

    /// Whether a CO may make `call` now, as the spec's lifecycle and the plugin's capabilities
    /// allow, and whether what it names is there to be named (a shrunk history may have lost
    /// the step that made it: then the call is left out).
    pub(crate) fn enabled(&self, call: &Call) -> bool {
        let c = &self.caps;
        if self.block_source(call) {
            return false;
        }
        match *call {
            Call::CreateVolume { name, source, .. } => {
                let name_ok = self.names.get(&name).is_none_or(|n| !n.burnt)
                    && self
                        .current(name)
                        .is_none_or(|v| self.vols.get(&v).is_some_and(|s| s.life != Life::Lost));
                let source_ok = match source {
                    None => true,
                    Some(Source::Snapshot(s)) => {
                        c.snapshots
                            && (self.snap(s).is_some_and(|x| x.life == Life::Alive)
                                || self.snap_dead(s))
                    }
                    Some(Source::Volume(v)) => c.clone && (self.alive(v).is_some() || self.dead(v)),
                    Some(g) => self.restorable(g).is_some_and(|x| x.life != Life::Lost),
                };
                c.create && name_ok && source_ok
            }
            // In use too: a CO may call out of the lifecycle's order (a crashed kubelet, a
            // force-detach, an operator).
            Call::DeleteVolume(v) => c.create && (self.alive(v).is_some() || self.dead(v)),
            Call::ControllerPublish { vol, readonly, own } => {
                if !c.publish || (readonly && !c.readonly) {
                    return false;
                }
                match self.alive(vol) {
                    Some(s) if own => s.published.is_some() || s.unused(),
                    Some(s) => s.unused(),
                    None => own && self.dead(vol),
                }
            }
            Call::ControllerUnpublish { vol, .. } => {
                c.publish && (self.alive(vol).is_some() || self.dead(vol))
            }
            Call::Validate(v) => c.create && (self.alive(v).is_some() || self.dead(v)),
            Call::ListVolumes { .. } | Call::ListHold { snapshots: false, .. } => c.list_volumes,
            Call::ListResume { snapshots: false } => c.list_volumes && self.held.is_some(),
            Call::ListHold { snapshots: true, .. } => c.list_snapshots,
            Call::ListResume { snapshots: true } => c.list_snapshots && self.held_snaps.is_some(),
            Call::GetVolume(v) => c.get_volume && (self.alive(v).is_some() || self.dead(v)),
            Call::Expand { vol, .. } => c.expand && (self.alive(vol).is_some() || self.dead(vol)),
            Call::CreateSnapshot { name, source } => {
                let current = self.current_snap(name).and_then(|s| self.snap(s));
                let name_ok = self.snap_names.get(&name).is_none_or(|n| !n.burnt)
                    && current.is_none_or(|s| s.life != Life::Lost);
                c.snapshots && name_ok && (self.alive(source).is_some() || self.dead(source))
            }
            Call::DeleteSnapshot(s) => {
                c.snapshots
                    && (self.snap(s).is_some_and(|x| x.life == Life::Alive) || self.snap_dead(s))
            }
            Call::ListSnapshots { filter, .. } => {
                c.list_snapshots
                    && match filter {
                        Filter::All => true,
                        Filter::Id(s) => self.snap(s).is_some_and(|x| x.life != Life::Lost),
                        Filter::Source(v) => self.vol(v).is_some_and(|x| x.life != Life::Lost),
                    }
            }
            Call::GetSnapshot(s) => {
                c.get_snapshot
                    && (self.snap(s).is_some_and(|x| x.life == Life::Alive) || self.snap_dead(s))
            }
            Call::Stage { vol, path } => {
                // Staged (at either path): the retry goes where it is staged; unstaged, it
                // may go to either.
                c.stage
                    && path < STAGINGS
                    && match self.alive(vol) {
                        Some(s) => {
                            (!c.publish || s.published.is_some())
                                && (path == s.staging || !(s.staged || s.second_staged))
                        }
                        None => self.dead(vol),
                    }
            }
            Call::Unstage(v) => c.stage && self.alive(v).is_some(),
            Call::Publish { vol, target, .. } => {
                let t = usize::from(target);
                c.node
                    && t < TARGETS
                    && match self.alive(vol) {
                        Some(s) => (!c.stage || s.staged) && (!c.publish || s.published.is_some()),
                        None => self.dead(vol),
                    }
            }
            Call::Unpublish { vol, target } => {
                let t = usize::from(target);
                c.node
                    && t < TARGETS
                    && match self.alive(vol) {
                        Some(s) => s.targets[t].is_some() || s.targets_used[t].is_some(),
                        None => self.dead(vol),
                    }
            }
            Call::Stats { vol, at } => {
                // A live volume is asked where it is or was; a deleted one anywhere its paths
                // would be (the CO makes the folders).
                let dead = self.dead(vol);
                c.stats
                    && match (self.alive(vol), at) {
                        (Some(s), At::Staging) => c.stage && (s.staged || s.staged_ever),
                        (Some(s), At::Target(t)) => {
                            let t = usize::from(t);
                            t < TARGETS && (s.targets[t].is_some() || s.targets_used[t].is_some())
                        }
                        (None, At::Staging) => dead && c.stage,
                        (None, At::Target(t)) => dead && usize::from(t) < TARGETS,
                    }
            }
            Call::Modify(v) => c.modify && (self.alive(v).is_some() || self.dead(v)),
            Call::ModifyUnsupported(v) => c.modify && self.alive(v).is_some(),
            Call::CreateGroup { name, vols: [a, b] } => {
                let current = self.current_group(name).and_then(|g| self.groups.get(&g));
                // A retry of a standing group, its volumes deleted since or not (a CO's retry
                // after a timeout), as CreateSnapshot's retry after its source was deleted.
                let retry = current.is_some_and(|g| g.life == Life::Alive && g.sources == [a, b]);
                // A live volume beside a deleted one (a CO's stale handle), and the same again.
                let stale = (current.is_none()
                    && (self.alive(a).is_some() && self.dead(b)
                        || self.dead(a) && self.alive(b).is_some()))
                    || self.stale_groups.get(&name) == Some(&[a, b]);
                c.groups
                    && a != b
                    && (retry || stale || (self.alive(a).is_some() && self.alive(b).is_some()))
                    && self.group_names.get(&name).is_none_or(|n| !n.burnt)
                    && current.is_none_or(|g| g.life != Life::Lost)
            }
            Call::Member { group, nth, delete } => {
                let served = if delete { c.snapshots } else { c.get_snapshot };
                c.groups
                    && served
                    && self
                        .groups
                        .get(&group)
                        .is_some_and(|x| x.life != Life::Lost && usize::from(nth) < x.members.len())
            }
            Call::DeleteGroup(g) | Call::GetGroup(g) => {
                c.groups && self.groups.get(&g).is_some_and(|x| x.life != Life::Lost)
            }
            Call::Elsewhere { vol, rpc, at } => {
                let Some(s) = self.alive(vol) else { return false };
                let other = |w: Vol| w != vol && self.alive(w).is_some();
                let served = match rpc {
                    NodeRpc::Stage => c.stage && s.staged && at == Elsewhere::SecondStaging,
                    NodeRpc::Unstage => c.stage,
                    NodeRpc::Unpublish => c.node,
                    NodeRpc::Stats => c.stats,
                };
                served
                    && match at {
                        Elsewhere::SecondStaging => {
                            matches!(rpc, NodeRpc::Stage | NodeRpc::Unstage)
                        }
                        Elsewhere::Staging(w) => c.stage && other(w),
                        // Not another volume's target: "The CO SHALL ensure uniqueness of
                        // target_path per volume", so no CO names one volume at another's.
                        Elsewhere::Target(w) => rpc == NodeRpc::Stats && other(w),
                        Elsewhere::Nowhere => true,
                    }
            }
            Call::GetCapacity { .. } => c.capacity,
            Call::DeleteGroupMismatch { group, ids } => {
                let standing = |g: Grp| {
                    self.groups.get(&g).filter(|x| x.life == Life::Alive && !x.members.is_empty())
                };
                c.groups
                    && standing(group).is_some_and(|x| match ids {
                        Mismatch::Lone(s) => self.snap(s).is_some_and(|y| y.life == Life::Alive),
                        Mismatch::Other(o) => o != group && standing(o).is_some(),
                        Mismatch::Short => x.members.len() > 1,
                    })
            }
            Call::NodeExpand { vol, mib, .. } => {
                c.node_expand
                    && match self.alive(vol) {
                        Some(s) => {
                            (s.staged || (!c.stage && s.targets.iter().any(Option::is_some)))
                                && i64::from(mib) * MIB <= s.capacity
                        }
                        None => self.dead(vol),
                    }
            }
        }
    }
}

mod coverage;
mod kind;
pub(crate) mod marks;
mod member;
mod refused;
pub(crate) mod repeats;
pub(crate) mod seen;
pub(crate) use kind::RARE;
pub(crate) use refused::Refused;

#[cfg(test)]
mod tests;
