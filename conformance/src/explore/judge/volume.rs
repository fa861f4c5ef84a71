//! CreateVolume and DeleteVolume: what a name already holds, a source alive or deleted, an id
//! new to the plugin, and what a deletion (or its refusal) leaves of a volume.

use tonic::Code;

use super::super::call::{Call, Source, Vol};
use super::super::model::{Chose, Life, MIB, Model, TARGETS, VolState};
use super::super::rules::{Rule, SOURCE_NOT_EXIST, VOLUME_INCOMPATIBLE};
use super::{Body, Reply, Verdicts, code, show};

impl Model {
    pub(super) fn create_volume(
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
            } else if s.modified || s.modify_unknown {
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
                // Refused as incompatible after a refused ControllerModifyVolume, where the
                // volume was otherwise held to meet it: the refused call changed it.
                (Some(true), Reply::Err { code: Code::AlreadyExists, .. })
                    if s.modify_refused && s.retried_ok == Some(s.usage()) =>
                {
                    v.check(Rule::ModifyRefusedKept);
                    v.broke(
                        Rule::ModifyRefusedKept,
                        format!(
                            "{what}, the same request, answered {}; it was answered OK before a ControllerModifyVolume of the volume was refused INVALID_ARGUMENT, with no other call since that changes the volume",
                            show(reply)
                        ),
                    );
                }
                (Some(true), Reply::Err { .. }) => {
                    v.ok(Rule::CreateRetrySame, reply, &what);
                }
                (_, Reply::Ok(Body::Volume { id: got, capacity, source: got_source })) => {
                    if compatible == Some(true) && s.modify_refused {
                        v.check(Rule::ModifyRefusedKept);
                    }
                    // The very request that made it, met: a later refusal of it has a cause.
                    let very = (mib, asked_limit, source) == (s.mib, s.asked_limit, s.source);
                    let met = (compatible == Some(true) && very && *got == id).then(|| s.usage());
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
                        if met.is_some() {
                            s.retried_ok = met;
                        }
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
            // A snapshot cut alone or a group's: a member's group deleted is its deletion.
            Some(s @ (Source::Snapshot(_) | Source::Member(..))) => match self.restorable(s) {
                Some(x) if x.life == Life::Alive => {
                    let gone = x.origin.is_some_and(|o| self.is_dead(o));
                    let rule =
                        if gone { Rule::SnapshotOutlivesSource } else { Rule::SnapshotIdFound };
                    let rule = self.gone_rule(x.id, rule);
                    Src::Alive(format!("{} (id {})", Model::restorable_words(s), x.id), rule)
                }
                Some(x) => {
                    Src::Dead(format!("deleted {} (id {})", Model::restorable_words(s), x.id))
                }
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
        if let Some(x) = source {
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
            let held = self.source_supported(v, &what, from, (mib, asked_limit), reply);
            let shape = Call::CreateVolume { name, mib, limit: asked_limit, source }.shape();
            let shape = shape.unwrap_or_default();
            self.refused_repeatedly(v, &what, from, held, (mib, asked_limit), shape, reply);
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
        if let Some(x) = source
            && let Some(snap) = self.restorable(x)
            && *capacity > 0
            && snap.size > 0
        {
            v.check(Rule::RestoreAtLeastSnapshot);
            if *capacity < snap.size {
                v.broke(
                    Rule::RestoreAtLeastSnapshot,
                    format!(
                        "{what} from {} (id {}, {} bytes) answered {capacity} bytes",
                        Model::restorable_words(x),
                        snap.id,
                        snap.size
                    ),
                );
            }
        }
        // GetCapacity is asked of the mount capability: a block create is not its to bound.
        if source.is_none() && !self.block_for(name, true) {
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
                node_grown: 0,
                modified: false,
                retried_ok: None,
                modify_refused: false,
                modify_unknown: false,
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

    pub(super) fn delete_volume(&mut self, v: &mut Verdicts, vol: Vol, reply: &Reply) {
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
}
