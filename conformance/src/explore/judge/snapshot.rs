//! The answers of CreateSnapshot, DeleteSnapshot and GetSnapshot held to the history: a name
//! taken again (the same source: the same snapshot, answered as when it was cut; another: the
//! row's ALREADY_EXISTS), a snapshot of a deleted volume refused, ids unique and found while the
//! snapshot stands (its source deleted or not), NOT_FOUND once deleted, a delete of what is gone
//! OK.

use tonic::Code;

use super::super::call::{Snap, Source, Vol};
use super::super::model::{Life, Model, SnapFacts, SnapState};
use super::super::rules::{Rule, SNAP_NOT_EXIST, SNAPSHOT_INCOMPATIBLE};
use super::{Body, Reply, Verdicts, code, show};

impl Model {
    pub(super) fn create_snapshot(
        &mut self,
        v: &mut Verdicts,
        name: u16,
        source: Vol,
        reply: &Reply,
    ) {
        let held = self
            .current_snap(name)
            .filter(|c| self.snaps.get(c).is_some_and(|s| s.life == Life::Alive));
        if let Some(cur) = held {
            let s = &self.snaps[&cur];
            let what = format!("CreateSnapshot again of name s{name} (held by {cur}, id {})", s.id);
            let other = self.vols.get(&source).is_none_or(|x| x.id != s.source_id);
            if other {
                v.row(
                    "CreateSnapshot",
                    SNAPSHOT_INCOMPATIBLE,
                    reply,
                    &format!("{what} of another volume"),
                );
                return;
            }
            // Described ready to use by an earlier answer: "successfully cut and ready to use",
            // so the retry's answer is "the corresponding CreateSnapshotResponse", ready too.
            let was_ready = s.ready || self.snap_facts.get(&s.id).is_some_and(|f| f.ready);
            match reply {
                Reply::Ok(Body::Snapshot { id, ready, size, source: got, created }) => {
                    if *id != s.id {
                        v.broke(
                            Rule::SnapshotRetrySame,
                            format!("{what} answered another snapshot, id {id}"),
                        );
                        return;
                    }
                    if was_ready && !*ready {
                        v.broke(
                            Rule::SnapshotRetrySame,
                            format!("{what} answered ready_to_use false; it was described ready to use before"),
                        );
                    }
                    self.retried_snapshot(v, cur, &what, got, *size, *created);
                    let (ready, size, created) = (*ready, *size, *created);
                    if let Some(s) = self.snaps.get_mut(&cur) {
                        s.ready = ready;
                        if s.size == 0 {
                            s.size = size;
                        }
                        if s.created.is_none() {
                            s.created = created;
                        }
                        if let Some(f) = self.snap_facts.get_mut(&s.id) {
                            f.ready = ready;
                            f.created = f.created.or(created);
                        }
                    }
                }
                Reply::Ok(_) => {}
                Reply::Err { .. } if s.ready => {
                    v.ok(Rule::SnapshotRetrySame, reply, &format!("{what}, ready to use"));
                }
                Reply::Err { .. } => {}
            }
            return;
        }
        let nth = self.snap_names.get(&name).map_or(0, |n| n.gens);
        let snap = Snap { name, nth };
        let Some(src) = self.vols.get(&source) else { return };
        let what =
            format!("CreateSnapshot of name s{name} (new {snap}) of {source} (id {})", src.id);
        let source_dead = src.life == Life::Dead;
        let source_id = src.id.clone();
        if source_dead && code(reply) == Code::Ok {
            v.broke(Rule::SnapshotOfDeleted, format!("{what}, deleted before, answered OK"));
        }
        if !source_dead && code(reply) == Code::NotFound {
            v.broke(Rule::VolumeIdFound, format!("{what}, live, answered {}", show(reply)));
        }
        let Reply::Ok(Body::Snapshot { id, size, ready, source: answered_source, created }) = reply
        else {
            if code(reply) != Code::NotFound || !source_dead {
                self.snap_names.entry(name).or_default().burnt = true;
            }
            return;
        };
        if let Some((other, _)) =
            self.snaps.iter().find(|(_, s)| s.life == Life::Alive && s.id == *id)
        {
            v.broke(
                Rule::SnapshotIdUnique,
                format!("{what} answered id {id}, the id of live snapshot {other}"),
            );
        }
        // The volume it was cut from: a wrong `source_volume_id` in this answer is the answer
        // checks' (and a retry's) to find, not every later read's.
        let facts =
            SnapFacts { source: source_id.clone(), created: *created, ready: *ready, group: None };
        self.snap_facts.insert(id.clone(), facts);
        self.snaps.insert(
            snap,
            SnapState {
                id: id.clone(),
                life: if source_dead { Life::Lost } else { Life::Alive },
                source,
                source_id,
                size: *size,
                ready: *ready,
                answered_source: answered_source.clone(),
                created: *created,
            },
        );
        self.snap_names.entry(name).or_default().gens = nth + 1;
    }

    /// A CreateVolume from snapshot `x` answered `reply`: where the snapshot stands, was last
    /// described ready to use and an earlier restore of it was answered OK, an error that no row
    /// of CreateVolume's table nor of the general table gives is `restore-ready-refused`, a note
    /// (the spec lets any call fail with a non-OK code, so no MUST binds it).
    pub(super) fn restore_again(&self, v: &mut Verdicts, what: &str, x: Source, reply: &Reply) {
        let Some(s) = self.restorable(x).filter(|s| s.life == Life::Alive) else { return };
        let ready = self.snap_facts.get(s.id).map_or(s.ready, |f| f.ready);
        let restored = self.vols.values().any(|w| w.source == Some(x));
        if !ready || !restored {
            return;
        }
        v.check(Rule::RestoreReadyRefused);
        // OK; the table's rows (incompatible name, range or source, a source gone, no room);
        // the general table's (pending, permission, authentication) and a transport's.
        // The codes that break `restore-supported` (a MUST), INVALID_ARGUMENT among them, are
        // that rule's, not this note's.
        let given = super::support::NOT_A_REASON.contains(&code(reply))
            || matches!(
                code(reply),
                Code::Ok
                    | Code::AlreadyExists
                    | Code::OutOfRange
                    | Code::NotFound
                    | Code::ResourceExhausted
                    | Code::Aborted
                    | Code::PermissionDenied
                    | Code::Unauthenticated
                    | Code::Unavailable
                    | Code::DeadlineExceeded
            );
        if !given {
            v.broke(
                Rule::RestoreReadyRefused,
                format!(
                    "{what} from {} (id {}), ready to use and restored before with OK, answered {}",
                    Model::restorable_words(x),
                    s.id,
                    show(reply)
                ),
            );
        }
    }

    /// NOT_FOUND for a live snapshot: its id, or (its source deleted) its outliving the source.
    pub(super) fn snap_not_found(&self, v: &mut Verdicts, s: Snap, rpc: &str, reply: &Reply) {
        let Some(x) = self.snaps.get(&s) else { return };
        let rule = if self.is_dead(x.source) {
            Rule::SnapshotOutlivesSource
        } else {
            Rule::SnapshotIdFound
        };
        let (rule, why) = (self.gone_rule(&x.id, rule), self.gone_why(&x.id));
        v.broke(
            rule,
            format!("{rpc} of live snapshot {s} (id {}) answered {}{why}", x.id, show(reply)),
        );
    }

    pub(super) fn delete_snapshot(&mut self, v: &mut Verdicts, s: Snap, reply: &Reply) {
        let Some(x) = self.snaps.get(&s) else { return };
        if x.life == Life::Dead {
            let what = format!("DeleteSnapshot of {s} (id {}), deleted before", x.id);
            v.ok(Rule::DeleteSnapshotIdempotent, reply, &what);
            return;
        }
        match reply {
            Reply::Ok(_) => {
                if let Some(x) = self.snaps.get_mut(&s) {
                    x.life = Life::Dead;
                }
            }
            // "Snapshot in use": the row the spec gives, the snapshot unchanged.
            Reply::Err { code: Code::FailedPrecondition, .. } => {}
            Reply::Err { code: Code::NotFound, .. } => {
                self.snap_not_found(v, s, "DeleteSnapshot", reply)
            }
            Reply::Err { .. } => {
                if let Some(x) = self.snaps.get_mut(&s) {
                    x.life = Life::Lost;
                }
            }
        }
    }

    pub(super) fn get_snapshot(&mut self, v: &mut Verdicts, s: Snap, reply: &Reply) {
        let Some(x) = self.snaps.get(&s) else { return };
        if x.life == Life::Dead {
            v.row("GetSnapshot", SNAP_NOT_EXIST, reply, &format!("of deleted {s} (id {})", x.id));
        } else if code(reply) == Code::NotFound {
            self.snap_not_found(v, s, "GetSnapshot", reply);
        } else if let Reply::Ok(Body::GotSnapshot(e)) = reply {
            self.snapshot_described(v, e, "GetSnapshot");
        }
    }
}
