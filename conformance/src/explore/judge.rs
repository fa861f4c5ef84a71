//! What each answer may be after the history so far, and what it changes in the model: an
//! error-table row where the history brought its condition about, OK where a sentence says
//! MUST reply OK, and otherwise every answer the spec allows (an error it allows makes what the
//! plugin holds unknown: `Life::Lost`, or a name never used again). Pure, as the model is.

use tonic::Code;

use super::call::{Bounds, Call, Source, Vol};
use super::model::{Chose, Held, Life, MIB, Model, TARGETS, Undo, Violation, VolState};
use super::rules::{
    NODE_NOT_EXIST, NOT_EXIST, PUBLISHED_INCOMPATIBLE, Rule, SOURCE_NOT_EXIST, VOLUME_INCOMPATIBLE,
};
use crate::suite::code_name;

mod change;
mod group;
mod mismatch;
mod node;
mod order;
mod refusal;
mod retry;
mod snapshot;
mod support;

/// What the plugin answered, as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    Ok(Body),
    Err { code: Code, message: String },
}

/// The part of an answer the model reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    /// Nothing the model reads (or an answer without its REQUIRED message, which the facts'
    /// checks report).
    Empty,
    /// CreateVolume: its id, capacity and content source (kind and id, as answered).
    Volume { id: String, capacity: i64, source: Option<(bool, String)> },
    /// CreateSnapshot: `created` is `creation_time` (seconds, nanos) when answered.
    Snapshot { id: String, source: String, size: i64, ready: bool, created: Option<(i64, i32)> },
    /// ValidateVolumeCapabilities: whether `confirmed` was set.
    Validated { confirmed: bool },
    /// GetCapacity's numbers.
    Bounds(Bounds),
    /// ControllerExpandVolume: `capacity_bytes` and `node_expansion_required`.
    Expanded { capacity: i64, node: bool },
    /// ListVolumes, every page.
    Volumes(Listing<Listed>),
    /// ListVolumes, its first page only: its entries, and whether it set `next_token`.
    Page { entries: Vec<Listed>, token: bool },
    /// ListSnapshots, every page.
    Snapshots(Listing<ListedSnapshot>),
    /// ListSnapshots, its first page only: its entries, and whether it set `next_token`.
    SnapPage { entries: Vec<ListedSnapshot>, token: bool },
    /// ControllerGetVolume.
    Got(Listed),
    /// GetSnapshot.
    GotSnapshot(ListedSnapshot),
    /// NodeExpandVolume.
    Capacity(i64),
    /// CreateVolumeGroupSnapshot, GetVolumeGroupSnapshot: the group's id and its snapshots
    /// (snapshot id, source volume id).
    /// `bound`: each snapshot's `group_snapshot_id` was set (it CAN NOT be deleted alone);
    /// `described`: each snapshot as the answer describes it.
    Group {
        id: String,
        members: Vec<(String, String)>,
        bound: Vec<bool>,
        described: Vec<ListedSnapshot>,
    },
    /// NodePublishVolume, NodeUnpublishVolume: whether something is at the target path after
    /// the call (`None`: the path is not this machine's to look at), and (NodeUnpublishVolume)
    /// which of the volume's other targets, published before the call, are gone after it.
    Target { exists: Option<bool>, gone: Vec<u8> },
}

/// A listing followed over its pages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listing<T> {
    pub(crate) entries: Vec<T>,
    pub(crate) end: End,
    /// How many entries the last page held.
    pub(crate) last_page: usize,
    /// When the listing was one full page and no `next_token`: the same listing asked again
    /// without `max_entries`, to tell a page that stopped early from entries never listed.
    pub(crate) unpaged: Option<Vec<T>>,
}

/// How a listing ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum End {
    /// A page without `next_token`.
    Complete,
    /// `next_token` was the token just sent: the same page again, for ever.
    Loop(String),
    /// A page answered an error (the spec allows it; what was listed is still read).
    Failed(Code),
}

/// A volume as ListVolumes or ControllerGetVolume describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listed {
    pub(crate) id: String,
    pub(crate) capacity: i64,
    /// Its `content_source` (kind: a snapshot; id), when answered.
    pub(crate) source: Option<(bool, String)>,
    /// Whether `published_node_ids` holds the explorer's node (`None`: no status answered).
    pub(crate) on_node: Option<bool>,
}

/// A snapshot as ListSnapshots, GetSnapshot or a group snapshot describes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ListedSnapshot {
    pub(crate) id: String,
    pub(crate) source: String,
    pub(crate) ready: bool,
    pub(crate) size: i64,
    /// `creation_time` (seconds, nanos), when answered.
    pub(crate) created: Option<(i64, i32)>,
    /// `group_snapshot_id` (empty: not set).
    pub(crate) group: String,
}

/// `OK`, or `NOT_FOUND: message`.
pub(crate) fn show(reply: &Reply) -> String {
    match reply {
        Reply::Ok(_) => "OK".to_owned(),
        Reply::Err { code, message } => format!("{}: {message}", code_name(*code)),
    }
}

fn code(reply: &Reply) -> Code {
    match reply {
        Reply::Ok(_) => Code::Ok,
        Reply::Err { code, .. } => *code,
    }
}

/// What one answer was held to, and what it broke.
#[derive(Debug, Default)]
pub(crate) struct Verdicts {
    pub(crate) broken: Vec<Violation>,
    /// Every rule the answer was held to (a rule it broke included), for the coverage table.
    pub(crate) checked: Vec<Rule>,
}

impl Verdicts {
    /// `rule` is held to this answer.
    pub(crate) fn check(&mut self, rule: Rule) {
        self.checked.push(rule);
    }

    pub(crate) fn broke(&mut self, rule: Rule, detail: String) {
        self.checked.push(rule);
        self.broken.push(Violation { rule, detail });
    }

    /// The row's code, or a violation of the row.
    fn row(&mut self, rpc: &'static str, condition: &'static str, reply: &Reply, what: &str) {
        let want = Rule::Row(rpc, condition)
            .sentence()
            .row
            .map_or(Code::Unknown, |r| Code::from_i32(r.code.number()));
        self.check(Rule::Row(rpc, condition));
        if code(reply) != want {
            self.broke(
                Rule::Row(rpc, condition),
                format!("{rpc} {what}: expected {}, got {}", code_name(want), show(reply)),
            );
        }
    }

    /// OK, or a violation of `rule`; true when OK.
    fn ok(&mut self, rule: Rule, reply: &Reply, what: &str) -> bool {
        self.check(rule);
        match reply {
            Reply::Ok(_) => true,
            other => {
                self.broke(rule, format!("{what}: expected OK, got {}", show(other)));
                false
            }
        }
    }
}

impl Model {
    /// Judges `reply` to `call` against the model and applies what it did; the rules broken.
    /// `call` must be [`Model::enabled`].
    pub(crate) fn judge(&mut self, call: &Call, reply: &Reply) -> Verdicts {
        let mut v = Verdicts::default();
        if matches!(call, Call::CreateVolume { .. } | Call::DeleteVolume(_))
            && let Some(h) = &mut self.held
        {
            h.changed = true;
        }
        if call.makes_or_deletes_snapshots()
            && let Some(h) = &mut self.held_snaps
        {
            h.changed = true;
        }
        // GetCapacity's answer holds until the pool may have moved: anything made, grown or
        // deleted since (or another lane at work).
        self.bounds_fresh &= self.caps.alone;
        let changes_pool = call.changes_pool();
        match *call {
            Call::CreateVolume { name, mib, limit, source } => {
                self.create_volume(&mut v, name, (mib, limit), source, reply);
            }
            Call::DeleteVolume(vol) => self.delete_volume(&mut v, vol, reply),
            Call::ControllerPublish { vol, readonly, own } => {
                self.controller_publish(&mut v, vol, readonly, own, reply);
            }
            Call::ControllerUnpublish { vol, all } => {
                self.controller_unpublish(&mut v, vol, all, reply);
            }
            Call::Validate(vol) => {
                self.read_volume(&mut v, "ValidateVolumeCapabilities", vol, reply);
                if let Reply::Ok(Body::Validated { confirmed }) = reply {
                    self.validated(&mut v, vol, *confirmed);
                }
            }
            Call::GetVolume(vol) => {
                self.read_volume(&mut v, "ControllerGetVolume", vol, reply);
                if let Reply::Ok(Body::Got(e)) = reply {
                    self.volume_described(&mut v, vol, e, "ControllerGetVolume");
                }
            }
            Call::Expand { vol, mib } => self.expand(&mut v, vol, mib, reply),
            Call::ListVolumes { max_entries } => {
                if let Reply::Ok(Body::Volumes(l)) = reply {
                    self.list_volumes(&mut v, max_entries, l);
                }
            }
            Call::ListHold { snapshots: true, .. } | Call::ListResume { snapshots: true } => {
                self.held_snapshots(&mut v, call, reply);
            }
            Call::ListHold { .. } => {
                self.held = None;
                if let Reply::Ok(Body::Page { entries, token }) = reply {
                    self.listed_entries(&mut v, entries);
                    let first = entries.iter().map(|e| e.id.clone()).collect();
                    self.held = token.then_some(Held { first, changed: false });
                }
            }
            Call::ListResume { snapshots: false } => {
                // ABORTED ("Invalid starting_token") or any error: the plugin's to give.
                if let (Some(held), Reply::Ok(Body::Volumes(l))) = (self.held.take(), reply) {
                    self.listed_entries(&mut v, &l.entries);
                    self.resumed(&mut v, &held, l);
                }
                self.held = None;
            }
            Call::CreateSnapshot { name, source } => {
                self.create_snapshot(&mut v, name, source, reply);
            }
            Call::DeleteSnapshot(s) => self.delete_snapshot(&mut v, s, reply),
            Call::ListSnapshots { filter, max_entries } => {
                if let Reply::Ok(Body::Snapshots(l)) = reply {
                    self.list_snapshots(&mut v, filter, max_entries, l);
                }
            }
            Call::GetSnapshot(s) => self.get_snapshot(&mut v, s, reply),
            Call::Stage { vol, path } => self.stage(&mut v, vol, path, reply),
            Call::Unstage(vol) => self.unstage(&mut v, vol, reply),
            Call::Publish { vol, target, readonly } => {
                self.node_publish(&mut v, vol, usize::from(target), readonly, reply);
            }
            Call::Unpublish { vol, target } => {
                self.node_unpublish(&mut v, vol, usize::from(target), reply);
            }
            Call::Stats { vol, at } => self.stats(&mut v, vol, at, reply),
            Call::Modify(vol) => self.modify(&mut v, vol, reply),
            Call::CreateGroup { name, vols } => self.create_group(&mut v, name, vols, reply),
            Call::DeleteGroup(g) => self.delete_group(&mut v, g, reply),
            Call::GetGroup(g) => self.get_group(&mut v, g, reply),
            Call::Member { group, nth, delete } => {
                self.member(&mut v, group, usize::from(nth), delete, reply);
            }
            Call::NodeExpand { vol, mib } => self.node_expand(&mut v, vol, mib, reply),
            Call::Elsewhere { vol, rpc, at } => {
                self.elsewhere(&mut v, vol, (rpc, call.rpc()), at, reply);
            }
            Call::GetCapacity { with } => self.capacity_answer(with, reply),
            Call::DeleteGroupMismatch { group, ids } => {
                self.delete_group_mismatch(&mut v, group, ids, reply);
            }
        }
        if changes_pool {
            self.bounds_fresh = false;
        }
        v
    }

    /// What a plugin sees of a content source: its kind and id (two volumes of the history may
    /// share an id, one deleted and the other made since).
    pub(super) fn source_id(&self, source: Option<Source>) -> Option<(bool, String)> {
        match source? {
            Source::Snapshot(x) => Some((true, self.snaps.get(&x)?.id.clone())),
            Source::Volume(v) => Some((false, self.vols.get(&v)?.id.clone())),
        }
    }

    fn is_dead(&self, v: Vol) -> bool {
        self.vols.get(&v).is_some_and(|s| s.life == Life::Dead)
    }

    fn state_mut(&mut self, v: Vol) -> Option<&mut VolState> {
        self.vols.get_mut(&v)
    }

    fn lose(&mut self, v: Vol) {
        if let Some(s) = self.state_mut(v) {
            s.life = Life::Lost;
        }
    }

    /// NOT_FOUND for a live volume: the id the plugin issued no longer names it (or, after a
    /// refused DeleteVolume, the refusal altered it).
    fn not_found(&self, v: &mut Verdicts, vol: Vol, rpc: &str, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rule = if s.refused_delete {
            Rule::DeleteRefusedUnaltered
        } else if s.chose.refused_in_use {
            Rule::RefusedKept
        } else if s.chose.foreign_touched {
            Rule::ForeignPathKept
        } else {
            Rule::VolumeIdFound
        };
        v.check(rule);
        v.broke(rule, format!("{rpc} of live {vol} (id {}) answered {}", s.id, show(reply)));
    }

    /// A capacity read back: never below what was accepted, never above a limit that binds.
    /// `published_node_ids` (with LIST_VOLUMES_PUBLISHED_NODES) still names the node after a
    /// ControllerUnpublishVolume the plugin answered OK: the publication was not undone. (That
    /// it names the node while published is the suite's answer check.)
    pub(super) fn published_nodes(
        &self,
        v: &mut Verdicts,
        vol: Vol,
        on_node: Option<bool>,
        what: &str,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        if !self.caps.published_nodes || s.life != Life::Alive || s.published.is_some() {
            return;
        }
        let Some(undo) =
            s.undone.iter().rev().find(|u| matches!(u, Undo::ControllerUnpublish { .. }))
        else {
            return;
        };
        let rule = undo_rule(*undo);
        v.check(rule);
        if on_node == Some(true) {
            v.broke(
                rule,
                format!(
                    "{what} lists {vol} (id {}) as published to the node after {} answered OK",
                    s.id,
                    undo.rpc()
                ),
            );
        }
    }

    pub(super) fn capacity(&self, v: &mut Verdicts, vol: Vol, capacity: i64, what: &str) {
        let Some(s) = self.vols.get(&vol) else { return };
        if capacity == 0 {
            return;
        }
        v.check(Rule::CapacityAtLeast);
        if s.limit > 0 {
            v.check(Rule::CapacityAtMost);
        }
        if capacity < s.floor {
            v.broke(
                Rule::CapacityAtLeast,
                format!(
                    "{what} reports {vol} (id {}) at {capacity} bytes; it accepted required_bytes {}",
                    s.id, s.floor
                ),
            );
        }
        if let Some(asked) = s.chose.refused_expand
            && capacity >= asked
        {
            v.broke(
                Rule::ExpandRefusedKept,
                format!(
                    "{what} reports {vol} (id {}) at {capacity} bytes; ControllerExpandVolume to {asked} bytes was refused while in use"
                    , s.id
                ),
            );
        } else if s.chose.refused_expand.is_some() {
            v.check(Rule::ExpandRefusedKept);
        }
        if s.limit > 0 && capacity > s.limit {
            v.broke(
                Rule::CapacityAtMost,
                format!(
                    "{what} reports {vol} (id {}) at {capacity} bytes; it was made with limit_bytes {}",
                    s.id, s.limit
                ),
            );
        }
    }

    fn create_volume(
        &mut self,
        v: &mut Verdicts,
        name: u16,
        (mib, asked_limit): (u32, u32),
        source: Option<Source>,
        reply: &Reply,
    ) {
        let required = i64::from(mib) * MIB;
        let limit = i64::from(asked_limit) * MIB;
        let held =
            self.current(name).filter(|c| self.vols.get(c).is_some_and(|s| s.life == Life::Alive));
        if let Some(cur) = held {
            let s = &self.vols[&cur];
            // The same request, or one whose range the volume meets: the MUST-OK sentence. A
            // range it does not meet, or another source: the ALREADY_EXISTS row. A range
            // against a capacity the plugin never said: either.
            let fits = |cap: i64| cap >= required && (limit == 0 || cap <= limit);
            let compatible = if self.source_id(s.source) != self.source_id(source) {
                Some(false)
            } else if s.modified {
                // Its mutable parameters changed since: whether a request without them is
                // compatible is the plugin's to say.
                None
            } else if required == 0 && limit == 0 {
                Some(true)
            } else if s.expanded && limit > 0 && (s.capacity == 0 || s.capacity > limit) {
                // Grown past the limit it was made with (a CO's late retry of the first
                // request): "compatible with the specified capacity_range" is then the
                // plugin's to judge, OK (the volume, grown) or ALREADY_EXISTS.
                None
            } else if s.capacity > 0 {
                Some(fits(s.capacity))
            } else if mib == s.mib && asked_limit == s.asked_limit && !s.expanded {
                // Made for this very request, and never grown since.
                Some(true)
            } else {
                None
            };
            let id = s.id.clone();
            let what = format!("CreateVolume again of name v{name} (held by {cur}, id {id})");
            match (compatible, reply) {
                (Some(false), _) => v.row("CreateVolume", VOLUME_INCOMPATIBLE, reply, &what),
                (Some(true), Reply::Err { .. }) => {
                    v.ok(Rule::CreateRetrySame, reply, &what);
                }
                (_, Reply::Ok(Body::Volume { id: got, capacity, source: got_source })) => {
                    if *got != id {
                        v.broke(
                            Rule::CreateRetrySame,
                            format!("{what} answered another volume, id {got}"),
                        );
                        return;
                    }
                    let capacity = *capacity;
                    self.retried_volume(v, cur, &what, capacity, got_source, (mib, asked_limit));
                    if let Some(s) = self.state_mut(cur) {
                        s.floor = s.floor.max(required);
                        if limit > 0 {
                            s.limit = if s.limit == 0 { limit } else { s.limit.min(limit) };
                        }
                        if capacity > 0 {
                            s.capacity = capacity;
                        }
                    }
                }
                // No volume in the answer: the facts' checks say so.
                (_, Reply::Ok(_)) | (None, Reply::Err { .. }) => {}
            }
            return;
        }
        let nth = self.names.get(&name).map_or(0, |n| n.gens);
        let reused = nth > 0;
        let vol = Vol { name, nth };
        let what = format!("CreateVolume of name v{name} (new {vol})");
        let refused = self.refused_creates.remove(&name);
        if let Some(r) = &refused {
            self.after_refusal(v, &what, r, (mib, asked_limit, source), reply);
        }
        // The source: alive (then NOT_FOUND breaks its id), or deleted (then NOT_FOUND is the row).
        enum Src {
            None,
            Alive(String, Rule),
            Dead(String),
        }
        let src = match source {
            None => Src::None,
            Some(Source::Snapshot(s)) => match self.snaps.get(&s) {
                Some(x) if x.life == Life::Alive => {
                    let gone = self.is_dead(x.source);
                    let rule =
                        if gone { Rule::SnapshotOutlivesSource } else { Rule::SnapshotIdFound };
                    let rule = self.gone_rule(&x.id, rule);
                    Src::Alive(format!("snapshot {s} (id {})", x.id), rule)
                }
                Some(x) => Src::Dead(format!("deleted snapshot {s} (id {})", x.id)),
                None => Src::None,
            },
            Some(Source::Volume(sv)) => match self.vols.get(&sv) {
                Some(x) if x.life == Life::Alive => {
                    Src::Alive(format!("volume {sv} (id {})", x.id), Rule::VolumeIdFound)
                }
                Some(x) => Src::Dead(format!("deleted volume {sv} (id {})", x.id)),
                None => Src::None,
            },
        };
        if let Some(Source::Snapshot(x)) = source {
            self.restore_again(v, &what, x, reply);
        }
        match (&src, reply) {
            (Src::Dead(from), _) => {
                v.row("CreateVolume", SOURCE_NOT_EXIST, reply, &format!("{what} from {from}"));
            }
            (Src::Alive(from, rule), Reply::Err { code: Code::NotFound, .. }) => {
                v.broke(*rule, format!("{what} from live {from} answered {}", show(reply)));
            }
            (_, Reply::Err { code: Code::AlreadyExists, .. }) if reused && refused.is_none() => {
                let old = Vol { name, nth: nth - 1 };
                let id = self.vols.get(&old).map(|s| s.id.clone()).unwrap_or_default();
                v.broke(
                    Rule::VolumeDeletedGone,
                    format!(
                        "{what} answered {}: the name's volume {old} (id {id}) was deleted with OK",
                        show(reply)
                    ),
                );
            }
            _ => {}
        }
        if let (Some(from), Src::Alive(..)) = (source, &src) {
            self.source_supported(v, &what, from, (mib, asked_limit), reply);
        }
        let Reply::Ok(Body::Volume { id, capacity, source: answered_source }) = reply else {
            // Refused for a reason that lasts: the name is free, and held to be.
            if self.refusal_kept(name, (mib, asked_limit), source, reply) {
                return;
            }
            // Not made, or not known to be: the name is not used again.
            if !matches!(src, Src::Dead(_)) || code(reply) == Code::Ok {
                self.names.entry(name).or_default().burnt = true;
            }
            return;
        };
        if let Some((other, _)) =
            self.vols.iter().find(|(_, s)| s.life == Life::Alive && s.id == *id)
        {
            v.broke(
                Rule::VolumeIdUnique,
                format!("{what} answered id {id}, the id of live volume {other}"),
            );
        }
        // A volume restored from a snapshot is no smaller than the snapshot (both sizes known).
        if let Some(Source::Snapshot(x)) = source
            && let Some(snap) = self.snaps.get(&x)
            && *capacity > 0
            && snap.size > 0
        {
            v.check(Rule::RestoreAtLeastSnapshot);
            if *capacity < snap.size {
                v.broke(
                    Rule::RestoreAtLeastSnapshot,
                    format!(
                        "{what} from snapshot {x} (id {}, {} bytes) answered {capacity} bytes",
                        snap.id, snap.size
                    ),
                );
            }
        }
        if source.is_none() {
            self.within_bounds(v, required, limit, &what);
        }
        let life = if matches!(src, Src::Dead(_)) { Life::Lost } else { Life::Alive };
        self.vols.insert(
            vol,
            VolState {
                id: id.clone(),
                life,
                mib,
                asked_limit,
                source,
                capacity: *capacity,
                first_capacity: *capacity,
                answered_source: answered_source.clone(),
                grown: Vec::new(),
                confirmed: None,
                floor: required,
                limit,
                expanded: false,
                expanded_ok: None,
                node_expanded_ok: None,
                modified: false,
                undone: Vec::new(),
                published: None,
                staged: false,
                staged_ever: false,
                staging: 0,
                targets: [None; TARGETS],
                targets_used: [None; TARGETS],
                last_undo: None,
                refused_delete: false,
                second_staged: false,
                chose: Chose::default(),
            },
        );
        self.names.entry(name).or_default().gens = nth + 1;
    }

    fn delete_volume(&mut self, v: &mut Verdicts, vol: Vol, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let what = format!("DeleteVolume of {vol} (id {})", s.id);
        if s.life == Life::Dead {
            v.ok(Rule::DeleteIdempotent, reply, &format!("{what}, deleted before"));
            return;
        }
        let in_use = !s.unused();
        match reply {
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.life = Life::Dead;
                    s.chose.deleted_in_use = in_use;
                }
            }
            // Out of the lifecycle's order: the row "Volume in use" (FAILED_PRECONDITION) or
            // any refusal; the volume is then held to be kept whole.
            Reply::Err { code, .. } if in_use && *code != Code::NotFound => {
                if let Some(s) = self.state_mut(vol) {
                    s.chose.refused_in_use = true;
                }
            }
            Reply::Err { code: Code::FailedPrecondition, .. } => {
                let snapshots =
                    self.snaps.values().any(|x| x.source == vol && x.life != Life::Dead)
                        || self
                            .groups
                            .values()
                            .any(|g| g.life != Life::Dead && g.source_ids.contains(&s.id));
                let clones = self
                    .vols
                    .values()
                    .any(|x| x.life != Life::Dead && x.source == Some(Source::Volume(vol)));
                if snapshots || clones {
                    if let Some(s) = self.state_mut(vol) {
                        s.refused_delete = snapshots;
                    }
                } else if !s.undone.is_empty() {
                    // In use by what the history undid, each undo answered OK.
                    let undone: Vec<&str> = s.undone.iter().map(|u| u.rpc()).collect();
                    v.broke(
                        Rule::InUseAfterUndo,
                        format!(
                            "{what}, unused after {} answered OK, answered {}",
                            undone.join(", "),
                            show(reply)
                        ),
                    );
                }
            }
            Reply::Err { code: Code::NotFound, .. } => {
                self.not_found(v, vol, "DeleteVolume", reply)
            }
            Reply::Err { .. } => self.lose(vol),
        }
    }

    fn controller_publish(
        &mut self,
        v: &mut Verdicts,
        vol: Vol,
        readonly: bool,
        own: bool,
        reply: &Reply,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "ControllerPublishVolume";
        let what = format!("of {vol} (id {})", s.id);
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
            return;
        }
        if !own {
            v.row(rpc, NODE_NOT_EXIST, reply, &format!("{what} to a node it never named"));
            return;
        }
        match s.published {
            Some(ro) if ro == readonly => {
                v.ok(
                    Rule::PublishRetrySame,
                    reply,
                    &format!("{rpc} again {what}, the same readonly"),
                );
            }
            Some(_) => v.row(
                rpc,
                PUBLISHED_INCOMPATIBLE,
                reply,
                &format!("again {what} with the other readonly flag"),
            ),
            None => {
                let undo = s.last_undo;
                match reply {
                    Reply::Ok(_) => {
                        if let Some(s) = self.state_mut(vol) {
                            s.published = Some(readonly);
                        }
                    }
                    Reply::Err { code: Code::NotFound, .. } => self.not_found(v, vol, rpc, reply),
                    Reply::Err { code: Code::AlreadyExists | Code::FailedPrecondition, .. }
                        if matches!(undo, Some(Undo::ControllerUnpublish { .. })) =>
                    {
                        let rule = undo.map_or(Rule::UnpublishedGone, undo_rule);
                        v.broke(
                            rule,
                            format!("{rpc} {what}, unpublished before, answered {}", show(reply)),
                        );
                        self.lose(vol);
                    }
                    Reply::Err { .. } => self.lose(vol),
                }
            }
        }
    }

    fn controller_unpublish(&mut self, v: &mut Verdicts, vol: Vol, all: bool, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        if s.life == Life::Dead {
            // OK, or the row's NOT_FOUND: both are the spec's.
            return;
        }
        let what = format!("ControllerUnpublishVolume of {vol} (id {})", s.id);
        if s.published.is_none() {
            v.ok(Rule::UnpublishNotAttached, reply, &format!("{what}, not published"));
            return;
        }
        // Out of the lifecycle's order (the node still stages or publishes it): OK, or a
        // refusal that keeps the publication whole.
        let node_uses = s.staged || s.second_staged || s.targets.iter().any(Option::is_some);
        match reply {
            Reply::Err { code, .. } if node_uses && *code != Code::NotFound => {
                if let Some(s) = self.state_mut(vol) {
                    s.chose.refused_in_use = true;
                }
            }
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.published = None;
                    s.undid(Undo::ControllerUnpublish { all });
                }
            }
            Reply::Err { code: Code::NotFound, .. } => {
                self.not_found(v, vol, "ControllerUnpublishVolume", reply);
            }
            Reply::Err { .. } => self.lose(vol),
        }
    }

    /// ValidateVolumeCapabilities, ControllerGetVolume: NOT_FOUND exactly when deleted.
    fn read_volume(&mut self, v: &mut Verdicts, rpc: &'static str, vol: Vol, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
        } else if code(reply) == Code::NotFound {
            self.not_found(v, vol, rpc, reply);
        } else if s.chose.refused_in_use {
            // Found after a refusal: the choice held (for the coverage table).
            v.check(Rule::RefusedKept);
        }
    }
}

/// The sentence an undo broke when the plugin still acts as if it had not happened.
fn undo_rule(undo: Undo) -> Rule {
    match undo {
        Undo::ControllerUnpublish { all: false } => Rule::UnpublishedGone,
        Undo::ControllerUnpublish { all: true } => Rule::UnpublishedAllGone,
        Undo::Unstage => Rule::UnstageUndoes,
        Undo::NodeUnpublish => Rule::NodeUnpublishUndoes,
    }
}
