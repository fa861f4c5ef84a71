//! What was seen at the node's paths after a call, held to the history (see `model/seen`): a
//! NodePublishVolume with `readonly` of a mount volume answered OK, its target a mount point,
//! mounted read-only, and so after every later call while it stays published; a block volume's
//! target, where it can be told, a block device. And whether the plugin serves block volumes:
//! the first block create's answer.

use super::super::call::{Call, Vol};
use super::super::model::Model;
use super::super::model::seen::{BlockWalk, FileKind, Seen};
use super::super::rules::Rule;
use super::{Reply, Verdicts, show};

impl Model {
    /// Judges `seen` after `call` answered `reply` (the model already changed by it); what the
    /// call's own target was seen as, and what it held, for the coverage table.
    pub(crate) fn judge_seen(
        &mut self,
        v: &mut Verdicts,
        call: &Call,
        reply: &Reply,
        seen: &Seen,
    ) -> Vec<&'static str> {
        let data = self.judge_marks(v, call, reply, seen);
        self.placed(v, call, reply, seen).into_iter().chain(data).collect()
    }

    /// The call's own target, and the readonly mounts watched.
    fn placed(
        &mut self,
        v: &mut Verdicts,
        call: &Call,
        reply: &Reply,
        seen: &Seen,
    ) -> Option<&'static str> {
        if let Call::CreateVolume { name, source: None, .. } = *call
            && self.seen.block == BlockWalk::Unknown
            && self.block_for(name, true)
        {
            let ok = matches!(reply, Reply::Ok(_));
            self.seen.block = if ok { BlockWalk::Served } else { BlockWalk::Off };
        }
        self.readonly_kept(v, call, reply, seen);
        self.mounts_kept(v, call, reply, seen);
        let (Call::Publish { vol, target, readonly }, Reply::Ok(_), Some(placed)) =
            (*call, reply, seen.target)
        else {
            return None;
        };
        // Only a publication the model took (a second target refused is not one).
        let s = self.published_at(vol, target, readonly)?;
        let what = format!("NodePublishVolume of {vol} (id {}) at target #{target}", s.id);
        if self.is_block(vol) {
            let broke = |v: &mut Verdicts, why: &str| {
                v.broke(
                    Rule::BlockPlaced,
                    format!("{what}, a block volume, answered OK and {why}"),
                );
            };
            return Some(match (placed.kind, placed.mount) {
                (Some(FileKind::Folder), _) => {
                    broke(v, "a folder is at the target path");
                    "block target, a folder"
                }
                (Some(FileKind::BlockDevice), _) => {
                    v.check(Rule::BlockPlaced);
                    "block target, a block device"
                }
                (Some(FileKind::Other), Some(_)) => {
                    broke(v, "the target path is a mount point that is not a block device");
                    "block target, a mount point not a block device"
                }
                (Some(FileKind::Other), None) => {
                    "block target, a file, not a mount point (not judged)"
                }
                // Nothing there: `target-placed`'s words, under this rule (see `node_publish`).
                (None, _) => "block target, nothing",
            });
        }
        if !readonly {
            // A read-write mount point: watched while it stands.
            if placed.mount == Some(false) {
                self.seen.readonly_mounts.remove(&(vol, target));
                self.seen.rw_mounts.insert((vol, target));
            }
            return None;
        }
        Some(match placed.mount {
            Some(true) => {
                v.check(Rule::ReadonlyPublished);
                self.seen.rw_mounts.remove(&(vol, target));
                self.seen.readonly_mounts.insert((vol, target));
                "readonly target, mounted read-only"
            }
            Some(false) => {
                v.broke(
                    Rule::ReadonlyPublished,
                    format!(
                        "{what}, readonly true, answered OK and the target is mounted read-write"
                    ),
                );
                "readonly target, mounted read-write"
            }
            None => "readonly target, not a mount point (not judged)",
        })
    }

    /// Each readonly mount watched, still published readonly: still mounted read-only after
    /// `call`. One no longer a mount point, or no longer published, is no longer watched.
    fn readonly_kept(&mut self, v: &mut Verdicts, call: &Call, reply: &Reply, seen: &Seen) {
        for (vol, t, now) in &seen.watched {
            if !self.seen.readonly_mounts.contains(&(*vol, *t)) {
                continue;
            }
            let standing = self.published_at(*vol, *t, true);
            // Asked read-write at that very target (the other flag again: the row's
            // ALREADY_EXISTS is owed, `node_publish`): what it is now is not this rule's.
            let asked_rw = matches!(*call, Call::Publish { vol: c, target, readonly: false }
                if c == *vol && target == *t);
            let (Some(s), Some(read_only), false) = (standing, now, asked_rw) else {
                self.seen.readonly_mounts.remove(&(*vol, *t));
                continue;
            };
            if *read_only {
                v.check(Rule::ReadonlyPublished);
                continue;
            }
            v.broke(
                Rule::ReadonlyPublished,
                format!(
                    "{call} answered {}, and target #{t} of {vol} (id {}), published readonly and mounted read-only before, is now mounted read-write",
                    show(reply),
                    s.id
                ),
            );
            self.seen.readonly_mounts.remove(&(*vol, *t));
        }
    }

    /// Each read-write mount watched, still published read-write: still a mount point after
    /// `call`, which did not undo it. Let go after the volume's own undos out of the
    /// lifecycle's order (NodeUnstageVolume, ControllerUnpublishVolume, DeleteVolume while
    /// published: what they leave is the plugin's) and a publish at that very target.
    fn mounts_kept(&mut self, v: &mut Verdicts, call: &Call, reply: &Reply, seen: &Seen) {
        for (vol, t, now) in &seen.watched {
            if !self.seen.rw_mounts.contains(&(*vol, *t)) {
                continue;
            }
            let standing = self.published_at(*vol, *t, false);
            let (Some(s), false) = (standing, undoes_own(call, *vol, *t)) else {
                self.seen.rw_mounts.remove(&(*vol, *t));
                continue;
            };
            let rule = match *call {
                Call::Unpublish { .. } => Rule::OtherTargetsKept,
                Call::Unstage(_) | Call::Elsewhere { .. } => Rule::ForeignPathKept,
                _ => Rule::TargetPlaced,
            };
            if now.is_some() {
                if rule != Rule::TargetPlaced {
                    v.check(rule);
                }
                continue;
            }
            v.broke(
                rule,
                format!(
                    "{call} answered {}, and target #{t} of {vol} (id {}), published read-write and a mount point before, is no longer a mount point",
                    show(reply),
                    s.id
                ),
            );
            self.seen.rw_mounts.remove(&(*vol, *t));
        }
    }
}

/// `call` is volume `vol`'s own undo out of the lifecycle's order (NodeUnstageVolume,
/// ControllerUnpublishVolume, DeleteVolume while published: what they leave at its targets is
/// the plugin's), or a publish at its target #`t` itself.
pub(super) fn undoes_own(call: &Call, vol: Vol, t: u8) -> bool {
    match *call {
        Call::Unstage(c) | Call::DeleteVolume(c) => c == vol,
        Call::ControllerUnpublish { vol: c, .. } => c == vol,
        Call::Publish { vol: c, target, .. } => c == vol && target == t,
        _ => false,
    }
}
