//! The answers of the GroupController's calls held to the history: a group snapshot's name
//! taken again (the same volumes: the same group; others: the row's ALREADY_EXISTS), its id
//! found while it stands and NOT_FOUND once deleted, a delete of what is gone OK; and its
//! snapshots, which ListSnapshots lists while the group stands (see `listing`).

use tonic::Code;

use super::super::call::{Grp, Vol};
use super::super::model::{GroupState, Life, Model, SnapFacts};
use super::super::rules::{GROUP_INCOMPATIBLE, GROUP_NOT_EXIST, IN_GROUP, Rule, SNAP_NOT_EXIST};
use super::{Body, Reply, Verdicts, code, show};

impl Model {
    pub(super) fn create_group(
        &mut self,
        v: &mut Verdicts,
        name: u16,
        vols: [Vol; 2],
        reply: &Reply,
    ) {
        let rpc = "CreateVolumeGroupSnapshot";
        let ids = vols.map(|x| self.vols.get(&x).map(|s| s.id.clone()).unwrap_or_default());
        let held = self
            .current_group(name)
            .filter(|g| self.groups.get(g).is_some_and(|x| x.life == Life::Alive));
        if let Some(cur) = held {
            let g = &self.groups[&cur];
            let what = format!("{rpc} again of name g{name} (held by {cur}, id {})", g.id);
            if g.source_ids != ids {
                v.row(rpc, GROUP_INCOMPATIBLE, reply, &format!("{what} of other volumes"));
                return;
            }
            match reply {
                Reply::Ok(Body::Group { id, .. }) if *id != g.id => v.broke(
                    Rule::GroupRetrySame,
                    format!("{what}, the same volumes, answered another group, id {id}"),
                ),
                // The corresponding response: the snapshots the group was cut with, whatever
                // their sources went through since.
                Reply::Ok(Body::Group { members, .. }) if !same_members(members, &g.members) => {
                    v.broke(
                        Rule::GroupRetrySame,
                        format!(
                            "{what}, the same volumes, answered snapshots {members:?}; its first answer said {:?}",
                            g.members
                        ),
                    );
                }
                other => {
                    v.ok(Rule::GroupRetrySame, other, &format!("{what}, the same volumes"));
                }
            }
            if let Reply::Ok(Body::Group { described, .. }) = reply {
                for e in described {
                    self.snapshot_described(v, e, rpc);
                }
            }
            return;
        }
        let nth = self.group_names.get(&name).map_or(0, |n| n.gens);
        let grp = Grp { name, nth };
        let what = format!("{rpc} of name g{name} (new {grp}) of {} and {}", vols[0], vols[1]);
        if self.of_deleted(v, name, vols, reply, &what) {
            return;
        }
        if code(reply) == Code::NotFound {
            for (x, id) in vols.iter().zip(&ids) {
                v.broke(
                    Rule::VolumeIdFound,
                    format!("{what}: live {x} (id {id}), answered {}", show(reply)),
                );
            }
        }
        let Reply::Ok(Body::Group { id, members, bound, described }) = reply else {
            // Not made, or not known to be: the name is not used again.
            self.group_names.entry(name).or_default().burnt = true;
            return;
        };
        if let Some((other, _)) =
            self.groups.iter().find(|(_, g)| g.life == Life::Alive && g.id == *id)
        {
            v.broke(
                Rule::GroupIdUnique,
                format!("{what} answered id {id}, the id of live group {other}"),
            );
        }
        let g = GroupState {
            id: id.clone(),
            life: Life::Alive,
            sources: vols,
            source_ids: ids,
            members: members.clone(),
            bound: bound.clone(),
            sizes: described.iter().map(|e| e.size).collect(),
        };
        self.groups.insert(grp, g);
        for (e, bound) in described.iter().zip(bound) {
            let group = bound.then(|| id.clone());
            let asked = members.iter().find(|(s, _)| *s == e.id).map_or("", |(_, v)| v.as_str());
            let source = if e.source.is_empty() { asked } else { &e.source };
            let facts =
                SnapFacts { source: source.to_owned(), created: e.created, ready: e.ready, group };
            self.snap_facts.insert(e.id.clone(), facts);
        }
        self.group_names.entry(name).or_default().gens = nth + 1;
    }

    /// A new group of a live volume and a deleted one (its retry too): the plugin cannot
    /// complete it, so any OK breaks the table's preface; a refusal leaves the name free for
    /// the same request again. Whether `vols` hold a deleted volume.
    fn of_deleted(
        &mut self,
        v: &mut Verdicts,
        name: u16,
        vols: [Vol; 2],
        reply: &Reply,
        what: &str,
    ) -> bool {
        let dead: Vec<Vol> = vols
            .into_iter()
            .filter(|x| self.vols.get(x).is_some_and(|s| s.life == Life::Dead))
            .collect();
        let Some(gone) = dead.first() else { return false };
        if let Reply::Ok(Body::Group { id, members, .. }) = reply {
            v.broke(
                Rule::GroupOfDeleted,
                format!(
                    "{what}, {gone} deleted before, answered OK: group {id} with snapshots {members:?}"
                ),
            );
            self.stale_groups.remove(&name);
            self.group_names.entry(name).or_default().burnt = true;
        } else {
            v.check(Rule::GroupOfDeleted);
            self.stale_groups.insert(name, vols);
        }
        true
    }

    /// A group snapshot that is gone, and whose id names no group standing.
    fn group_dead(&self, g: Grp) -> Option<&GroupState> {
        self.groups.get(&g).filter(|x| {
            x.life == Life::Dead
                && !self.groups.values().any(|o| o.life != Life::Dead && o.id == x.id)
        })
    }

    pub(super) fn delete_group(&mut self, v: &mut Verdicts, g: Grp, reply: &Reply) {
        let Some(x) = self.groups.get(&g) else { return };
        let rpc = "DeleteVolumeGroupSnapshot";
        if x.life == Life::Dead {
            let what = format!("{rpc} of {g} (id {}), deleted before", x.id);
            v.ok(Rule::DeleteGroupIdempotent, reply, &what);
            return;
        }
        let life = match reply {
            Reply::Ok(_) => Life::Dead,
            Reply::Err { code: Code::NotFound, .. } => {
                v.broke(
                    Rule::GroupIdFound,
                    format!("{rpc} of live {g} (id {}) answered {}", x.id, show(reply)),
                );
                Life::Lost
            }
            // In use: the row's FAILED_PRECONDITION, the group unchanged.
            Reply::Err { code: Code::FailedPrecondition, .. } => Life::Alive,
            Reply::Err { .. } => Life::Lost,
        };
        if let Some(x) = self.groups.get_mut(&g) {
            x.life = life;
        }
    }

    pub(super) fn get_group(&mut self, v: &mut Verdicts, g: Grp, reply: &Reply) {
        let rpc = "GetVolumeGroupSnapshot";
        if let Some(x) = self.group_dead(g) {
            v.row(rpc, GROUP_NOT_EXIST, reply, &format!("of deleted {g} (id {})", x.id));
            return;
        }
        let Some(x) = self.groups.get(&g).filter(|x| x.life == Life::Alive) else { return };
        v.check(Rule::GroupIdFound);
        match reply {
            Reply::Err { code: Code::NotFound, .. } => {
                v.broke(
                    Rule::GroupIdFound,
                    format!("{rpc} of live {g} (id {}) answered {}", x.id, show(reply)),
                );
            }
            Reply::Ok(Body::Group { id, .. }) if *id != x.id => {
                v.broke(
                    Rule::GroupIdFound,
                    format!("{rpc} of live {g} (id {}) answered group {id}", x.id),
                );
            }
            Reply::Ok(Body::Group { described, .. }) => {
                for e in described {
                    self.snapshot_described(v, e, rpc);
                }
            }
            _ => {}
        }
    }

    /// DeleteSnapshot or GetSnapshot of one of a group's snapshots alone. While the group
    /// stands: a snapshot it said CAN NOT be deleted alone (its `group_snapshot_id` set) is
    /// refused with the row's INVALID_ARGUMENT, and is found. Once the group was deleted (which
    /// "will delete ... all individual snapshots that are part of" it): GetSnapshot's NOT_FOUND
    /// row, and DeleteSnapshot of what does not exist, OK.
    pub(super) fn member(
        &mut self,
        v: &mut Verdicts,
        g: Grp,
        nth: usize,
        delete: bool,
        reply: &Reply,
    ) {
        let Some(x) = self.groups.get(&g) else { return };
        let Some((id, _)) = x.members.get(nth) else { return };
        let id = id.clone();
        let what = format!("of {g}'s snapshot #{nth} (id {id}) alone");
        if self.group_dead(g).is_some() {
            if delete {
                let what = format!("DeleteSnapshot {what}, its group deleted");
                v.ok(Rule::DeleteSnapshotIdempotent, reply, &what);
            } else {
                v.row("GetSnapshot", SNAP_NOT_EXIST, reply, &format!("{what}, its group deleted"));
            }
            return;
        }
        if x.life != Life::Alive {
            return;
        }
        let bound = x.bound.get(nth).copied().unwrap_or(false);
        if delete && bound {
            v.row("DeleteSnapshot", IN_GROUP, reply, &what);
            return;
        }
        if let Reply::Ok(Body::GotSnapshot(e)) = reply {
            self.snapshot_described(v, e, "GetSnapshot");
        }
        if code(reply) == Code::NotFound {
            let rpc = if delete { "DeleteSnapshot" } else { "GetSnapshot" };
            v.broke(
                self.gone_rule(&id, Rule::SnapshotIdFound),
                format!(
                    "{rpc} {what}, its group standing, answered {}{}",
                    show(reply),
                    self.gone_why(&id)
                ),
            );
        }
        if delete && code(reply) != Code::InvalidArgument {
            // Deleted alone (or not known to be): what the group holds is not known now.
            if let Some(x) = self.groups.get_mut(&g) {
                x.life = Life::Lost;
            }
        }
    }

    /// The snapshots of group snapshots standing, and of those deleted with OK whose ids no
    /// standing snapshot holds: (snapshot id, source volume id).
    pub(crate) fn group_members(&self, alive: bool) -> Vec<(&str, &str)> {
        let want = if alive { Life::Alive } else { Life::Dead };
        self.groups
            .values()
            .filter(|g| g.life == want)
            .flat_map(|g| g.members.iter().map(|(s, v)| (s.as_str(), v.as_str())))
            .collect()
    }
}

/// The same snapshots, in any order.
fn same_members(a: &[(String, String)], b: &[(String, String)]) -> bool {
    let sorted = |x: &[(String, String)]| {
        let mut x = x.to_vec();
        x.sort();
        x
    };
    sorted(a) == sorted(b)
}
