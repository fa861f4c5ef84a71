//! The answers of Node calls at paths that are not where the volume is staged or published (its
//! second staging path, another volume's paths, a folder of no volume), and of GetCapacity,
//! held to the history: what the plugin chose is what it is held to afterwards.

use tonic::Code;

use super::super::call::Bounds;
use super::super::call::{Elsewhere, NodeRpc, Vol};
use super::super::model::Model;
use super::super::rules::{NOT_EXIST, Rule};
use super::{Body, Reply, Verdicts};

impl Model {
    /// A Node call of `vol` at a path `at` that is not where it is staged or published.
    pub(super) fn elsewhere(
        &mut self,
        v: &mut Verdicts,
        vol: Vol,
        (rpc, name): (NodeRpc, &str),
        at: Elsewhere,
        reply: &Reply,
    ) {
        let Some(s) = self.vols.get(&vol) else { return };
        let place = match at {
            Elsewhere::SecondStaging => "a second staging path".to_owned(),
            Elsewhere::Staging(w) => format!("{w}'s staging path"),
            Elsewhere::Target(w) => format!("{w}'s target #0"),
            Elsewhere::Nowhere => "a folder of no volume".to_owned(),
        };
        let what = format!("{name} of {vol} (id {}) at {place}", s.id);
        let ok = matches!(reply, Reply::Ok(_));
        // An undo at a path where this volume is not: it must leave this volume's own staging
        // and publications as they were.
        let own_kept = ok
            && matches!(rpc, NodeRpc::Unstage | NodeRpc::Unpublish)
            && !(at == Elsewhere::SecondStaging && s.second_staged);
        match (rpc, at) {
            // A second staging path while staged at the first: the plugin's to take (then it is
            // staged at both, each undone apart) or to refuse (then the first stands). Unstaged
            // there, as staged there: OK undoes it, a refusal keeps it.
            (NodeRpc::Stage, _) => self.second_staging(v, vol, true, reply),
            (NodeRpc::Unstage, Elsewhere::SecondStaging) if s.second_staged => {
                self.second_staging(v, vol, false, reply);
            }
            // "If the volume corresponding to the volume_id is not staged to the
            // staging_target_path, the Plugin MUST reply 0 OK": and what is staged elsewhere,
            // this volume's and the other's, stays staged.
            (NodeRpc::Unstage, _) => {
                v.ok(Rule::UnstageNotStaged, reply, &format!("{what}, not staged there"));
            }
            // Not published there (a folder of no volume): the spec fixes no answer, but an OK
            // undoes none of the volume's own publications.
            (NodeRpc::Unpublish, _) => {
                if let Reply::Ok(Body::Target { gone, .. }) = reply {
                    v.check(Rule::ForeignPathKept);
                    v.targets_gone(Rule::ForeignPathKept, gone, &format!("{what} answered OK"));
                }
            }
            // The row: "the volume corresponding to the specified volume_id does not exist on
            // specified volume_path".
            (NodeRpc::Stats, _) => {
                v.row("NodeGetVolumeStats", NOT_EXIST, reply, &what);
            }
        }
        if own_kept && let Some(x) = self.state_mut(vol) {
            x.chose.foreign_touched = true;
        }
        // What the other volume has at its paths is held to still be there.
        if let (true, Elsewhere::Staging(w) | Elsewhere::Target(w)) = (ok, at)
            && let Some(x) = self.state_mut(w)
        {
            x.chose.foreign_touched = true;
        }
    }

    /// NodeStageVolume (`stage`) or NodeUnstageVolume of `vol` at its second staging path.
    fn second_staging(&mut self, v: &mut Verdicts, vol: Vol, stage: bool, reply: &Reply) {
        match reply {
            Reply::Ok(_) => {
                if let Some(s) = self.state_mut(vol) {
                    s.second_staged = stage;
                }
            }
            Reply::Err { code: Code::NotFound, .. } => {
                let rpc = if stage { "NodeStageVolume" } else { "NodeUnstageVolume" };
                self.not_found(v, vol, rpc, reply);
            }
            Reply::Err { .. } => {}
        }
    }

    /// GetCapacity: what it answered for the walk's capability and parameters bounds the
    /// sizes of the creations that follow (the non-negative numbers are the answer checks').
    pub(super) fn capacity_answer(&mut self, with: bool, reply: &Reply) {
        if let (true, Reply::Ok(Body::Bounds(b))) = (with, reply) {
            self.bounds = Some(*b);
            self.bounds_fresh = self.caps.alone;
        }
    }

    /// A CreateVolume answered OK, against the last GetCapacity of the same capability and
    /// parameters, when nothing was made, grown or deleted since: `required_bytes` above its
    /// `maximum_volume_size`, `limit_bytes` below its `minimum_volume_size` (notes: the fields
    /// say what "may be used", not what the plugin must refuse).
    pub(super) fn within_bounds(&self, v: &mut Verdicts, required: i64, limit: i64, what: &str) {
        let Some(Bounds { max, min, .. }) = self.bounds.filter(|_| self.bounds_fresh) else {
            return;
        };
        if let Some(max) = max {
            v.check(Rule::CapacityMaxSize);
            if required > max {
                v.broke(
                    Rule::CapacityMaxSize,
                    format!(
                        "{what}: required_bytes {required} answered OK, GetCapacity's maximum_volume_size just before was {max}"
                    ),
                );
            }
        }
        if let Some(min) = min
            && limit > 0
        {
            v.check(Rule::CapacityMinSize);
            if limit < min {
                v.broke(
                    Rule::CapacityMinSize,
                    format!(
                        "{what}: limit_bytes {limit} answered OK, GetCapacity's minimum_volume_size just before was {min}"
                    ),
                );
            }
        }
    }
}
