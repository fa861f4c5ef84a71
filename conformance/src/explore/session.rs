//! The explorer's side of the connection: the suite (its channel, discovery, secrets and every
//! answer check), what the plugin serves as the model reads it, and attempts: a fresh model and
//! fresh names and folders, each call sent and judged, and everything undone at the end
//! (publications on the node, then the controller's, then snapshots, then volumes).

use std::path::{Path, PathBuf};

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::group_controller_service_capability::rpc::Type as GroupCap;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::plugin_capability::volume_expansion::Type as Expansion;
use csikit::v1::{
    ControllerUnpublishVolumeRequest, DeleteSnapshotRequest, DeleteVolumeGroupSnapshotRequest,
    DeleteVolumeRequest, NodeUnpublishVolumeRequest, NodeUnstageVolumeRequest,
};

use super::Broken;
use super::call::{Call, Vol};
use super::coverage::Coverage;
use super::exec::Exec;
use super::judge::Reply;
use super::model::seen::BlockWalk;
use super::model::{Caps, Life, Model, TARGETS};
use crate::client::Endpoint;
use crate::suite::Suite;

/// One attempt: the model of what the plugin holds, and what makes its calls concrete.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub(crate) model: Model,
    pub(crate) exec: Exec,
}

/// One call of an attempt, made: what the plugin answered and what it broke.
#[derive(Debug, Clone)]
pub(crate) struct Made {
    pub(crate) call: Call,
    pub(crate) reply: Reply,
    pub(crate) broken: Vec<Broken>,
}

/// The connection and what every attempt shares.
pub(crate) struct Session {
    pub(crate) suite: Suite,
    /// `name version`, as GetPluginInfo says.
    pub(crate) plugin: String,
    /// The endpoint, as a capture's header names it.
    pub(crate) endpoint: String,
    pub(crate) caps: Caps,
    /// What the plugin does not serve, each with what the walk leaves out for it.
    pub(crate) skipped: Vec<String>,
    /// Unique to the run: names of every attempt start with it.
    run: String,
    attempts: u32,
    staging: PathBuf,
    mount: PathBuf,
    pub(crate) coverage: Coverage,
    /// Calls made, exploring and shrinking.
    pub(crate) calls: u64,
    /// The run's own folder, removed when the session ends.
    _scratch: tempfile::TempDir,
}

impl Session {
    /// Connects and learns what the plugin serves.
    pub(crate) async fn connect(
        endpoint: &Endpoint,
        config: &crate::Config,
        run: String,
    ) -> Result<Session, String> {
        let suite = Suite::connect(endpoint, config).await?;
        let plugin = match suite.ask(csikit::v1::GetPluginInfoRequest {}).await {
            Ok(info) => format!("{} {}", info.name, info.vendor_version),
            Err(e) => return Err(format!("GetPluginInfo: {}", crate::suite::show_status(&e))),
        };
        suite.take_problems();
        let (caps, skipped) = caps(&suite, endpoint);
        let scratch = tempfile::Builder::new()
            .prefix("csi-explore-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let staging = folder(config.staging_dir.as_ref(), scratch.path(), "staging")?;
        let mount = folder(config.mount_dir.as_ref(), scratch.path(), "mount")?;
        Ok(Session {
            plugin,
            endpoint: endpoint.to_string(),
            _scratch: scratch,
            suite,
            caps,
            skipped,
            run,
            attempts: 0,
            staging,
            mount,
            coverage: Coverage::default(),
            calls: 0,
        })
    }

    /// A fresh attempt: an empty model, names no earlier attempt used, paths under the run's
    /// folders (or under `paths`, for a capture that is to be replayed later).
    pub(crate) fn attempt(&mut self, paths: Option<&Path>) -> Attempt {
        self.attempts += 1;
        let prefix = format!("csi-explore-{}-{}", self.run, self.attempts);
        let (staging, mount) = match paths {
            Some(p) => (p.join("staging"), p.join("mount")),
            None => (self.staging.clone(), self.mount.clone()),
        };
        let mut model = Model::new(self.caps.clone());
        // Block volumes beside mount ones, where the Node service uses them and the suite's
        // volumes are mounts (a block-only plugin's are all block).
        if self.caps.node && self.caps.create && !self.suite.block {
            model.seen.block = BlockWalk::Unknown;
        }
        // The workload's marks: where its paths can be looked at and no other lane writes.
        model.seen.marks.on = self.caps.node && self.caps.local && self.caps.alone;
        // Marks of one attempt are none of another's (a plugin that mounts an earlier
        // attempt's volume shows another number).
        model.seen.marks.next = self.attempts.saturating_mul(1 << 16);
        Attempt { model, exec: Exec::new(prefix, staging, mount, self.suite.node_id.clone()) }
    }

    /// Makes `call` (enabled in `a`'s model): prepared, sent, judged. `count`: the call is part of
    /// the walk (its coverage counted), not of a replay.
    pub(crate) async fn make(
        &mut self,
        a: &mut Attempt,
        call: &Call,
        count: bool,
    ) -> Result<Made, String> {
        let state = (a.model.state_of(call), a.model.kinds_of(call));
        if matches!(
            call,
            Call::ListVolumes { .. }
                | Call::ListHold { .. }
                | Call::ListResume { .. }
                | Call::GetVolume(_)
        ) {
            // The answer checks hold published_node_ids to the publications standing.
            self.suite.published = a.model.publications(&self.suite.node_id);
        }
        let prepared = a.exec.prepare(&mut self.suite, &a.model, call)?;
        let looks = a.exec.looks(&a.model, call);
        let reply = a.exec.send(&self.suite, prepared).await;
        self.calls += 1;
        let mut verdicts = a.model.judge(call, &reply);
        let seen = a.model.judge_seen(
            &mut verdicts,
            call,
            &reply,
            &looks.see(matches!(reply, Reply::Ok(_))),
        );
        let mut broken: Vec<Broken> = verdicts.broken.iter().map(Broken::from_violation).collect();
        broken.extend(self.suite.take_problems().into_iter().map(Broken::from_problem));
        if count {
            self.coverage.record(call.rpc(), (state.0, &state.1), &verdicts.checked);
            self.coverage.seen(call.rpc(), seen);
            for b in &broken {
                self.coverage.broke(&b.id);
            }
        }
        Ok(Made { call: *call, reply, broken })
    }

    /// Undoes everything `a` holds, as a CO takes a volume out of use and deletes it: each
    /// target unpublished, unstaged, unpublished from the node, then snapshots and volumes
    /// deleted. What could not be deleted, in the plugin's words. What the answers break here
    /// is not judged: the model has stopped.
    pub(crate) async fn clean_up(&mut self, a: &Attempt) -> Vec<String> {
        let mut left = Vec::new();
        let s = &mut self.suite;
        let live: Vec<(Vol, bool)> = a
            .model
            .vols
            .iter()
            .filter(|(_, v)| v.life != Life::Dead)
            .map(|(vol, v)| (*vol, v.life == Life::Lost))
            .collect();
        // A volume deleted while in use may still be staged or published on the node: the CO
        // undoes that too (the answers are the plugin's, not judged).
        let used_dead = a
            .model
            .vols
            .iter()
            .filter(|(_, v)| v.chose.deleted_in_use)
            .map(|(vol, _)| (*vol, true));
        let undo: Vec<(Vol, bool)> = live.iter().copied().chain(used_dead).collect();
        for (vol, lost) in &undo {
            let Some(v) = a.model.vol(*vol) else { continue };
            if self.caps.node {
                for t in 0..TARGETS as u8 {
                    if v.targets[usize::from(t)].is_some()
                        || (*lost && v.targets_used[usize::from(t)].is_some())
                    {
                        let target_path = a.exec.target_path(*vol, t).display().to_string();
                        let _ = s
                            .ask(NodeUnpublishVolumeRequest {
                                volume_id: v.id.clone(),
                                target_path,
                            })
                            .await;
                    }
                }
            }
            if self.caps.stage && (v.second_staged || *lost) {
                let second = a.model.other_staging(*vol);
                let staging_target_path = a.exec.staging_path(*vol, second).display().to_string();
                let _ = s
                    .ask(NodeUnstageVolumeRequest { volume_id: v.id.clone(), staging_target_path })
                    .await;
            }
            if self.caps.stage && (v.staged || (*lost && v.staged_ever)) {
                let staging_target_path =
                    a.exec.staging_path(*vol, v.staging).display().to_string();
                let _ = s
                    .ask(NodeUnstageVolumeRequest { volume_id: v.id.clone(), staging_target_path })
                    .await;
            }
            if self.caps.publish && (v.published.is_some() || *lost) {
                let secrets = s.secrets("ControllerUnpublishVolume");
                let r = ControllerUnpublishVolumeRequest {
                    volume_id: v.id.clone(),
                    node_id: s.node_id.clone(),
                    secrets,
                };
                let _ = s.ask(r).await;
            }
        }
        for g in a.model.groups.values().filter(|g| g.life != Life::Dead) {
            let r = DeleteVolumeGroupSnapshotRequest {
                group_snapshot_id: g.id.clone(),
                snapshot_ids: g.members.iter().map(|(x, _)| x.clone()).collect(),
                secrets: s.secrets("DeleteVolumeGroupSnapshot"),
            };
            if let Err(e) = s.ask(r).await {
                left.push(format!("group snapshot {}: {}", g.id, crate::suite::show_status(&e)));
            }
        }
        for x in a.model.snaps.values().filter(|x| x.life != Life::Dead) {
            let secrets = s.secrets("DeleteSnapshot");
            if let Err(e) =
                s.ask(DeleteSnapshotRequest { snapshot_id: x.id.clone(), secrets }).await
            {
                left.push(format!("snapshot {}: {}", x.id, crate::suite::show_status(&e)));
            }
        }
        for (vol, _) in &live {
            let Some(v) = a.model.vol(*vol) else { continue };
            let secrets = s.secrets("DeleteVolume");
            if let Err(e) = s.ask(DeleteVolumeRequest { volume_id: v.id.clone(), secrets }).await {
                left.push(format!("volume {}: {}", v.id, crate::suite::show_status(&e)));
            }
        }
        s.take_problems();
        self.calls += u64::try_from(live.len()).unwrap_or(0);
        let vols: Vec<Vol> = a.model.vols.keys().copied().collect();
        a.exec.remove_folders(&self.mount, &self.staging, &vols);
        left
    }
}

impl Model {
    /// The controller publications standing: (volume id, node).
    pub(crate) fn publications(&self, node: &str) -> Vec<(String, String)> {
        self.vols
            .values()
            .filter(|v| v.life == Life::Alive && v.published.is_some())
            .map(|v| (v.id.clone(), node.to_owned()))
            .collect()
    }

    /// `words` name one of the ids this model's plugin gave (a volume's or a snapshot's).
    pub(crate) fn names_an_id(&self, words: &str) -> bool {
        let named = |id: &str| !id.is_empty() && words.contains(id);
        self.vols.values().any(|v| named(&v.id)) || self.snaps.values().any(|x| named(&x.id))
    }
}

/// The folder the explorer makes `what` paths under: the one given, made absolute (the spec's
/// paths are absolute in the plugin's filesystem), else one in the run's own folder.
fn folder(given: Option<&PathBuf>, scratch: &Path, what: &str) -> Result<PathBuf, String> {
    let dir = match given {
        Some(d) => std::path::absolute(d)
            .map_err(|e| format!("cannot make '{}' an absolute path: {e}", d.display()))?,
        None => scratch.join(what),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot make the folder '{}': {e}", dir.display()))?;
    Ok(dir)
}

/// What the plugin serves as the model reads it, and what the walk leaves out, with why.
fn caps(s: &Suite, endpoint: &Endpoint) -> (Caps, Vec<String>) {
    let p = &s.plugin;
    let c = Caps {
        create: p.has(Ctl::CreateDeleteVolume),
        publish: p.has(Ctl::PublishUnpublishVolume) && p.has_node,
        readonly: p.has(Ctl::PublishReadonly),
        list_volumes: p.has(Ctl::ListVolumes),
        published_nodes: p.has(Ctl::ListVolumesPublishedNodes),
        get_volume: p.has(Ctl::GetVolume),
        expand: p.has(Ctl::ExpandVolume),
        online: p.expansion == Some(Expansion::Online),
        snapshots: p.has(Ctl::CreateDeleteSnapshot),
        list_snapshots: p.has(Ctl::ListSnapshots),
        get_snapshot: p.has(Ctl::GetSnapshot),
        clone: p.has(Ctl::CloneVolume),
        node: p.has_node,
        stage: p.node_has(Nd::StageUnstageVolume),
        stats: p.node_has(Nd::GetVolumeStats),
        node_expand: p.node_has(Nd::ExpandVolume),
        modify: p.has(Ctl::ModifyVolume) && !s.cfg.mutable_parameters.is_empty(),
        groups: p.group_has(GroupCap::CreateDeleteGetVolumeGroupSnapshot),
        single_node_modes: p.has(Ctl::SingleNodeMultiWriter)
            && (!p.has_node || p.node_has(Nd::SingleNodeMultiWriter)),
        capacity: p.has(Ctl::GetCapacity),
        local: matches!(endpoint, Endpoint::Unix(_)),
        alone: true,
    };
    let mut skipped = Vec::new();
    let mut skip = |missing: bool, what: &str| {
        if missing {
            skipped.push(what.to_owned());
        }
    };
    skip(!p.controller(), "the Controller service: not served");
    skip(
        p.controller() && !c.create,
        "volumes: no CREATE_DELETE_VOLUME, so nothing that needs a volume is explored",
    );
    skip(!c.node, "the Node service: not served");
    skip(
        c.node && !c.create,
        "the Node service: no volume to use on it (the plugin makes none: no CREATE_DELETE_VOLUME)",
    );
    skip(
        p.has(Ctl::PublishUnpublishVolume) && !c.node,
        "ControllerPublishVolume: no node to publish to (no Node service names one)",
    );
    skip(!c.list_volumes, "ListVolumes: no LIST_VOLUMES");
    skip(!c.get_volume, "ControllerGetVolume: no GET_VOLUME");
    skip(!c.capacity, "GetCapacity: no GET_CAPACITY");
    skip(!c.expand, "ControllerExpandVolume: no EXPAND_VOLUME");
    skip(!c.snapshots, "snapshots: no CREATE_DELETE_SNAPSHOT");
    skip(c.snapshots && !c.list_snapshots, "ListSnapshots: no LIST_SNAPSHOTS");
    skip(c.snapshots && !c.get_snapshot, "GetSnapshot: no GET_SNAPSHOT");
    skip(!c.clone, "clones: no CLONE_VOLUME");
    skip(c.node && !c.stage, "NodeStageVolume: no STAGE_UNSTAGE_VOLUME");
    skip(c.node && !c.stats, "NodeGetVolumeStats: no GET_VOLUME_STATS");
    skip(c.node && !c.node_expand, "NodeExpandVolume: no node EXPAND_VOLUME");
    skip(!p.has(Ctl::ModifyVolume), "ControllerModifyVolume: no MODIFY_VOLUME");
    skip(
        p.has(Ctl::ModifyVolume) && !c.modify,
        "ControllerModifyVolume: no mutable parameters to send (--mutable-parameters FILE)",
    );
    skip(
        !c.local,
        "target paths: the plugin is not on a unix socket here, so what is at a target path is not looked at",
    );
    skip(
        !c.groups,
        "group snapshots: no GroupController with CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT",
    );
    (c, skipped)
}
