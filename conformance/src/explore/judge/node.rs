//! The answers of the Node service's calls held to the history: staging, publishing at a
//! target, undoing both, and statistics, each against the volume's lifecycle state; and the
//! record of the undos a volume went through.

use csikit::v1::volume_capability::access_mode::Mode;
use tonic::Code;

use super::super::call::{At, Vol};
use super::super::model::{Life, Model, Undo, VolState};
use super::super::rules::{NOT_EXIST, PUBLISHED_INCOMPATIBLE, Rule};
use super::{Body, Reply, Verdicts, code, show};

impl Model {
    pub(super) fn stage(&mut self, v: &mut Verdicts, vol: Vol, path: u8, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let what = format!("NodeStageVolume of {vol} (id {}) at staging path #{path}", s.id);
        if s.life == Life::Dead {
            v.row("NodeStageVolume", NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
            return;
        }
        if s.staged {
            v.ok(Rule::StageRetrySame, reply, &format!("{what} again at its staging path"));
            return;
        }
        let undo = s.last_undo;
        let second = s.second_staged;
        match reply {
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.staged = true;
                    s.staged_ever = true;
                    s.staging = path;
                }
            }
            // Staged at its second path still: a plugin that stages once per node may refuse.
            Reply::Err { code, .. } if second && *code != Code::NotFound => {}
            Reply::Err { code: Code::NotFound, .. } => {
                self.not_found(v, vol, "NodeStageVolume", reply)
            }
            Reply::Err { code: Code::AlreadyExists | Code::FailedPrecondition, .. }
                if undo == Some(Undo::Unstage) =>
            {
                v.broke(
                    Rule::UnstageUndoes,
                    format!("{what}, unstaged before, answered {}", show(reply)),
                );
                self.lose(vol);
            }
            Reply::Err { .. } => self.lose(vol),
        }
    }

    pub(super) fn unstage(&mut self, v: &mut Verdicts, vol: Vol, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let what = format!("NodeUnstageVolume of {vol} (id {})", s.id);
        if !s.staged {
            v.ok(Rule::UnstageNotStaged, reply, &format!("{what}, not staged"));
            return;
        }
        let undo = s.last_undo;
        // Out of the lifecycle's order: still published at a target. OK (the plugin unstaged
        // under the publication), or a refusal that keeps the staging whole.
        let published = s.targets.iter().any(Option::is_some);
        match reply {
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.staged = false;
                    s.undid(Undo::Unstage);
                }
            }
            Reply::Err { code: Code::NotFound, .. } => {
                self.not_found(v, vol, "NodeUnstageVolume", reply)
            }
            Reply::Err { .. } if published => {
                if let Some(s) = self.state_mut(vol) {
                    s.chose.refused_in_use = true;
                }
            }
            Reply::Err { code: Code::FailedPrecondition, .. }
                if undo == Some(Undo::NodeUnpublish) || s.undone.contains(&Undo::NodeUnpublish) =>
            {
                v.broke(
                    Rule::NodeUnpublishUndoes,
                    format!("{what}, every target unpublished, answered {}", show(reply)),
                );
                self.lose(vol);
            }
            Reply::Err { .. } => self.lose(vol),
        }
    }

    pub(super) fn node_publish(
        &mut self,
        v: &mut Verdicts,
        vol: Vol,
        t: usize,
        readonly: bool,
        reply: &Reply,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "NodePublishVolume";
        let what = format!("{rpc} of {vol} (id {}) at target #{t}", s.id);
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
            return;
        }
        // A block volume's target under the block sentence (what is there: `judge/seen`).
        let rule = if self.is_block(vol) { Rule::BlockPlaced } else { Rule::TargetPlaced };
        let placed = |v: &mut Verdicts| {
            if let Reply::Ok(Body::Target { exists: Some(false), .. }) = reply {
                v.broke(rule, format!("{what} answered OK and nothing is at the target path"));
            }
        };
        match s.targets[t] {
            Some(ro) if ro == readonly => {
                if v.ok(
                    Rule::NodePublishRetrySame,
                    reply,
                    &format!("{what} again, the same arguments"),
                ) {
                    placed(v);
                }
                return;
            }
            Some(_) => {
                v.row(
                    rpc,
                    PUBLISHED_INCOMPATIBLE,
                    reply,
                    &format!("again of {vol} at target #{t} with the other readonly flag"),
                );
                return;
            }
            None => {}
        }
        let second = s.targets.iter().enumerate().any(|(i, x)| i != t && x.is_some());
        // SINGLE_NODE_MULTI_WRITER: a second target on this node is what the mode is for.
        let many_writers = self.mode_of(vol) == Mode::SingleNodeMultiWriter;
        let undo = s.last_undo;
        // Published at this target before, unpublished with OK since: the row "Volume
        // published but is incompatible" names a volume "already published at the specified
        // target_path", which it no longer is (a pod deleted, a new pod at the same path).
        let unpublished_here = s.targets_used[t].is_some();
        match reply {
            Reply::Err { code: Code::AlreadyExists, .. } if unpublished_here => {
                let before = if s.targets_used[t] == Some(readonly) {
                    "with the same readonly flag"
                } else {
                    "with the other readonly flag"
                };
                v.broke(
                    Rule::NodeUnpublishUndoes,
                    format!(
                        "{what}, readonly {readonly}, published there {before} and unpublished since, answered {}",
                        show(reply)
                    ),
                );
                self.lose(vol);
            }
            Reply::Ok(_) => {
                placed(v);
                if second && !many_writers {
                    v.broke(
                        Rule::SecondTarget,
                        format!("{what}, published at the other target too, answered OK"),
                    );
                }
                if let Some(s) = self.state_mut(vol) {
                    s.targets[t] = Some(readonly);
                    s.targets_used[t] = Some(readonly);
                }
            }
            // The table's answer to a second target; the first publication stands.
            Reply::Err { code: Code::FailedPrecondition, .. } if second => {}
            Reply::Err { code: Code::NotFound, .. } => self.not_found(v, vol, rpc, reply),
            Reply::Err { code: Code::AlreadyExists | Code::FailedPrecondition, .. }
                if undo == Some(Undo::NodeUnpublish) && !second =>
            {
                v.broke(
                    Rule::NodeUnpublishUndoes,
                    format!("{what}, no target published, answered {}", show(reply)),
                );
                self.lose(vol);
            }
            Reply::Err { .. } if second => {}
            Reply::Err { .. } => self.lose(vol),
        }
    }

    pub(super) fn node_unpublish(&mut self, v: &mut Verdicts, vol: Vol, t: usize, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "NodeUnpublishVolume";
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {})", s.id));
            return;
        }
        let what = format!("{rpc} of {vol} (id {}) at target #{t}", s.id);
        if s.targets[t].is_none() {
            v.ok(Rule::NodeUnpublishIdempotent, reply, &format!("{what}, unpublished before"));
            return;
        }
        match reply {
            Reply::Ok(body) => {
                if let Body::Target { exists: Some(true), .. } = body {
                    v.broke(
                        Rule::TargetRemoved,
                        format!("{what} answered OK and the target path is still there"),
                    );
                }
                // Undone in any order: the other publications stand, their paths with them.
                if let Body::Target { exists: Some(_), gone } = body {
                    let others = s.targets.iter().enumerate().any(|(i, x)| i != t && x.is_some());
                    if others {
                        v.check(Rule::OtherTargetsKept);
                    }
                    v.targets_gone(Rule::OtherTargetsKept, gone, &format!("{what} answered OK"));
                }
                if let Some(s) = self.state_mut(vol) {
                    s.targets[t] = None;
                    s.undid(Undo::NodeUnpublish);
                }
            }
            Reply::Err { code: Code::NotFound, .. } => self.not_found(v, vol, rpc, reply),
            Reply::Err { .. } => self.lose(vol),
        }
    }

    pub(super) fn stats(&mut self, v: &mut Verdicts, vol: Vol, at: At, reply: &Reply) {
        let Some(s) = self.vols.get(&vol) else { return };
        let rpc = "NodeGetVolumeStats";
        let (there, path) = match at {
            At::Staging => (s.staged, "its staging path".to_owned()),
            At::Target(t) => (s.targets[usize::from(t)].is_some(), format!("target #{t}")),
        };
        if s.life == Life::Dead {
            v.row(rpc, NOT_EXIST, reply, &format!("of deleted {vol} (id {}) at {path}", s.id));
        } else if !there {
            v.row(
                rpc,
                NOT_EXIST,
                reply,
                &format!("of {vol} (id {}) at {path}, where it was and is no more", s.id),
            );
        } else if code(reply) == Code::NotFound {
            self.not_found(v, vol, rpc, reply);
        } else if s.chose.foreign_touched {
            // Still there after a call at a path that was not its own (for the coverage table).
            v.check(Rule::ForeignPathKept);
        }
    }
}

impl Verdicts {
    /// `rule` broken when `gone` (target paths of the volume still published, removed by a
    /// call `what` names) is not empty.
    pub(super) fn targets_gone(&mut self, rule: Rule, gone: &[u8], what: &str) {
        if !gone.is_empty() {
            let gone: Vec<String> = gone.iter().map(|g| format!("#{g}")).collect();
            self.broke(
                rule,
                format!("{what} and removed target {}, still published", gone.join(", ")),
            );
        }
    }
}

impl VolState {
    /// `undo` answered OK.
    pub(super) fn undid(&mut self, undo: Undo) {
        self.last_undo = Some(undo);
        if !self.undone.contains(&undo) {
            self.undone.push(undo);
        }
    }
}

impl Undo {
    /// The RPC that undid.
    pub(super) fn rpc(self) -> &'static str {
        match self {
            Undo::ControllerUnpublish { all: false } => "ControllerUnpublishVolume",
            Undo::ControllerUnpublish { all: true } => "ControllerUnpublishVolume without node_id",
            Undo::Unstage => "NodeUnstageVolume",
            Undo::NodeUnpublish => "NodeUnpublishVolume",
        }
    }
}
