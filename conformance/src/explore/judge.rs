//! What each answer may be after the history so far, and what it changes in the model: an
//! error-table row where the history brought its condition about, OK where a sentence says
//! MUST reply OK, and otherwise every answer the spec allows (an error it allows makes what the
//! plugin holds unknown: `Life::Lost`, or a name never used again). Pure, as the model is.

use tonic::Code;

use super::call::{Call, Source, Vol};
use super::model::{Held, Life, Model, Undo, Violation, VolState};
use super::rules::{NODE_NOT_EXIST, NOT_EXIST, PUBLISHED_INCOMPATIBLE, Rule};
use crate::suite::code_name;

mod change;
mod group;
mod marks;
mod mismatch;
mod node;
mod order;
mod refusal;
mod repeats;
mod reply;
mod retry;
mod seen;
mod snapshot;
mod support;
mod volume;

pub(crate) use reply::{Body, End, Listed, ListedSnapshot, Listing, Reply, code, show};

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
            Call::Expand { vol, mib, limit } => self.expand(&mut v, vol, (mib, limit), reply),
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
            Call::Modify(vol) => self.modify(&mut v, vol, false, reply),
            Call::ModifyUnsupported(vol) => self.modify(&mut v, vol, true, reply),
            Call::CreateGroup { name, vols } => self.create_group(&mut v, name, vols, reply),
            Call::DeleteGroup(g) => self.delete_group(&mut v, g, reply),
            Call::GetGroup(g) => self.get_group(&mut v, g, reply),
            Call::Member { group, nth, delete } => {
                self.member(&mut v, group, usize::from(nth), delete, reply);
            }
            Call::NodeExpand { vol, mib, limit } => {
                self.node_expand(&mut v, vol, (mib, limit), reply);
            }
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
            Source::Volume(v) => Some((false, self.vols.get(&v)?.id.clone())),
            x => Some((true, self.restorable(x)?.id.to_owned())),
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
        if let Some((asked, rule)) = s.chose.refused_expand {
            v.check(rule);
            if capacity >= asked {
                let why = if rule == Rule::ExpandRefusedKept {
                    "FAILED_PRECONDITION (\"could not be expanded\")"
                } else {
                    "OUT_OF_RANGE (\"the capacity range is not allowed\")"
                };
                v.broke(
                    rule,
                    format!(
                        "{what} reports {vol} (id {}) at {capacity} bytes; ControllerExpandVolume to {asked} bytes was refused {why}",
                        s.id
                    ),
                );
            }
        }
        if s.limit > 0 && capacity > s.limit {
            v.broke(
                Rule::CapacityAtMost,
                format!(
                    "{what} reports {vol} (id {}) at {capacity} bytes; the limit_bytes that binds it (its CreateVolume's, or its last expansion's answered OK) is {}",
                    s.id, s.limit
                ),
            );
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
