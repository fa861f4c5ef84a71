//! DeleteVolumeGroupSnapshot with `snapshot_ids` that are not the group's snapshots exactly:
//! one more (a snapshot cut alone, another group's snapshot) or one fewer. The spec lets the
//! plugin refuse the mismatch (the row's INVALID_ARGUMENT) or, if it cannot tell, take the
//! call; what no answer allows is deleting a snapshot that is not of the group. The snapshot
//! named beside the group's is held to stand, and a later read that finds it gone breaks the
//! sentence on the list, not the snapshot's id.

use tonic::Code;

use super::super::call::{Grp, Mismatch};
use super::super::model::{Life, Model};
use super::super::rules::Rule;
use super::{Reply, Verdicts, show};

impl Model {
    /// The answer to DeleteVolumeGroupSnapshot of standing `group` with `ids` mismatched. OK:
    /// the group and its snapshots are gone (when one of its snapshots was left out, what the
    /// plugin kept of the group is not known: the spec does not say whether an SP that does not
    /// detect the mismatch deletes what the list leaves out). INVALID_ARGUMENT (the row "Snapshot
    /// list mismatch"): nothing done, the group stands. NOT_FOUND: the live group's id. Any
    /// other error: the group is not known now. Whatever the answer, the snapshot named beside
    /// the group's stands.
    pub(super) fn delete_group_mismatch(
        &mut self,
        v: &mut Verdicts,
        group: Grp,
        ids: Mismatch,
        reply: &Reply,
    ) {
        let Some(x) = self.groups.get(&group).filter(|x| x.life == Life::Alive) else { return };
        let named = match ids {
            Mismatch::Lone(s) => self.snaps.get(&s).map(|y| y.id.clone()),
            Mismatch::Other(o) => {
                self.groups.get(&o).and_then(|y| y.members.first()).map(|(id, _)| id.clone())
            }
            Mismatch::Short => None,
        };
        let life = match reply {
            Reply::Ok(_) if ids == Mismatch::Short => Life::Lost,
            Reply::Ok(_) => Life::Dead,
            Reply::Err { code: Code::InvalidArgument, .. } => Life::Alive,
            Reply::Err { code: Code::NotFound, .. } => {
                v.broke(
                    Rule::GroupIdFound,
                    format!(
                        "DeleteVolumeGroupSnapshot of live {group} (id {}) answered {}",
                        x.id,
                        show(reply)
                    ),
                );
                Life::Lost
            }
            Reply::Err { .. } => Life::Lost,
        };
        if let Some(x) = self.groups.get_mut(&group) {
            x.life = life;
        }
        if let Some(id) = named {
            v.check(Rule::GroupDeleteNamedKept);
            self.mismatch_named.insert(id, group);
        }
    }

    /// The rule broken when snapshot `id`, held to stand, is found gone: the sentence on a
    /// group delete's list when such a delete named it, else `otherwise`.
    pub(crate) fn gone_rule(&self, id: &str, otherwise: Rule) -> Rule {
        if self.mismatch_named.contains_key(id) { Rule::GroupDeleteNamedKept } else { otherwise }
    }

    /// The words a finding adds when snapshot `id` was named by a mismatched group delete.
    pub(crate) fn gone_why(&self, id: &str) -> String {
        self.mismatch_named.get(id).map_or_else(String::new, |g| {
            format!(
                " (DeleteVolumeGroupSnapshot of {g} named it in snapshot_ids, not of that group)"
            )
        })
    }
}
