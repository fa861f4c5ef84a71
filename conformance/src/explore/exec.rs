//! A symbolic call made concrete and sent: names from the attempt's prefix, ids from the model,
//! staging and target paths under the run's folders (made as a CO makes them), the secrets of
//! the suite, the capability the walk uses; every call through the suite's exchange, so each
//! answer is checked against the facts and by the answer checks as the fixed cases' are. The
//! answer comes back as the model reads it, and, when asked, as the bytes a capture holds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use csikit::v1::volume_content_source::{SnapshotSource, Type as SourceType, VolumeSource};
use csikit::v1::*;
use prost::Message;
use tonic::Status;

use super::call::{
    At, Bounds, Call, Elsewhere, Filter, Grp, Mismatch, NodeRpc, STAGINGS, Snap, Source, Vol,
    unsupported_key,
};
use super::judge::{Body, Listed, Reply};
use super::model::{MIB, Model, TARGETS};

mod look;
mod pages;
use crate::answers::Rpc;
use crate::suite::Suite;

/// A node id no plugin names.
const NO_SUCH_NODE: &str = "csi-explore-no-such-node";

/// One call as a capture holds it.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// The RPC, as the facts name it.
    pub(crate) rpc: &'static str,
    pub(crate) request: Vec<u8>,
    /// The answer's bytes, or its status.
    pub(crate) answer: Result<Vec<u8>, (tonic::Code, String)>,
    pub(crate) start: SystemTime,
    pub(crate) duration: Duration,
}

/// What makes a history's calls concrete for one attempt.
#[derive(Debug)]
pub(crate) struct Exec {
    /// Names start with it: unique to the run and the attempt.
    pub(crate) prefix: String,
    staging: PathBuf,
    mount: PathBuf,
    /// The node the plugin names (NodeGetInfo), where volumes are published.
    pub(crate) node_id: String,
    /// The CO hands these back: each volume's `volume_context`, each publication's
    /// `publish_context`, by volume id.
    contexts: Mutex<HashMap<String, HashMap<String, String>>>,
    publish_contexts: Mutex<HashMap<String, HashMap<String, String>>>,
    /// The ListVolumes and ListSnapshots `next_token` a [`Call::ListHold`] holds, by
    /// `snapshots`.
    held_tokens: Mutex<[Option<String>; 2]>,
    /// Calls as a capture holds them, when recording.
    pub(crate) recorded: Option<Mutex<Vec<Exchange>>>,
}

/// A call with its concrete request, ready to send.
#[derive(Debug)]
pub(crate) enum Prepared {
    Create(CreateVolumeRequest),
    Delete(DeleteVolumeRequest),
    Publish(ControllerPublishVolumeRequest),
    Unpublish(ControllerUnpublishVolumeRequest),
    Validate(ValidateVolumeCapabilitiesRequest),
    /// `max_entries`, from `starting_token`.
    ListVolumes(i32, String),
    /// The first page only, of `max_entries`.
    ListHold(i32),
    /// The first page only.
    SnapHold(ListSnapshotsRequest),
    Get(ControllerGetVolumeRequest),
    Expand(ControllerExpandVolumeRequest),
    Snapshot(CreateSnapshotRequest),
    DeleteSnapshot(DeleteSnapshotRequest),
    ListSnapshots(ListSnapshotsRequest),
    GetSnapshot(GetSnapshotRequest),
    Stage(NodeStageVolumeRequest),
    Unstage(NodeUnstageVolumeRequest),
    NodePublish(NodePublishVolumeRequest, bool),
    /// With the volume's other target paths published before it (when they can be looked at).
    NodeUnpublish(NodeUnpublishVolumeRequest, bool, Vec<(u8, PathBuf)>),
    Stats(NodeGetVolumeStatsRequest),
    NodeExpand(NodeExpandVolumeRequest),
    Modify(ControllerModifyVolumeRequest),
    CreateGroup(CreateVolumeGroupSnapshotRequest),
    DeleteGroup(DeleteVolumeGroupSnapshotRequest),
    GetGroup(GetVolumeGroupSnapshotRequest),
    Capacity(GetCapacityRequest),
}

impl Exec {
    /// For the attempt named `prefix`, with paths under `staging` and `mount`.
    pub(crate) fn new(prefix: String, staging: PathBuf, mount: PathBuf, node_id: String) -> Exec {
        Exec {
            prefix,
            staging,
            mount,
            node_id,
            contexts: Mutex::default(),
            publish_contexts: Mutex::default(),
            held_tokens: Mutex::default(),
            recorded: None,
        }
    }

    fn volume_name(&self, name: u16) -> String {
        format!("{}-v{name}", self.prefix)
    }

    fn snapshot_name(&self, name: u16) -> String {
        format!("{}-s{name}", self.prefix)
    }

    fn group_name(&self, name: u16) -> String {
        format!("{}-g{name}", self.prefix)
    }

    /// Staging path #n of `v` (see [`STAGINGS`]): a folder the CO makes.
    pub(crate) fn staging_path(&self, v: Vol, n: u8) -> PathBuf {
        match n {
            0 => self.staging.join(format!("{}-{v}", self.prefix)),
            n => self.staging.join(format!("{}-{v}-{}", self.prefix, n + 1)),
        }
    }

    /// Target path #t of `v`: its parent the CO makes, itself the plugin.
    pub(crate) fn target_path(&self, v: Vol, t: u8) -> PathBuf {
        self.mount.join(format!("{}-{v}-t{t}", self.prefix)).join("mount")
    }

    /// A folder the CO made that belongs to no volume of the attempt.
    fn nowhere_path(&self) -> PathBuf {
        self.mount.join(format!("{}-nowhere", self.prefix))
    }

    /// The path `at` names for `v`, the folders a CO makes made.
    fn elsewhere_dir(&self, m: &Model, v: Vol, at: Elsewhere) -> Result<String, String> {
        let dir = match at {
            Elsewhere::SecondStaging => self.staging_path(v, m.other_staging(v)),
            Elsewhere::Staging(w) => return self.staging_dir(m, w),
            Elsewhere::Target(w) => return self.target_dir(w, 0),
            Elsewhere::Nowhere => self.nowhere_path(),
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make the folder '{}': {e}", dir.display()))?;
        Ok(dir.display().to_string())
    }

    /// The target paths `vol` is published at but `except`, where they can be looked at.
    fn standing_targets(&self, m: &Model, vol: Vol, except: Option<u8>) -> Vec<(u8, PathBuf)> {
        m.vol(vol)
            .filter(|_| m.caps.local)
            .map(|s| {
                (0..TARGETS as u8)
                    .filter(|t| Some(*t) != except && s.targets[usize::from(*t)].is_some())
                    .map(|t| (t, self.target_path(vol, t)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// NodeStageVolume of volume `id` at `path`, with the contexts the CO hands back.
    fn stage_request(
        &self,
        s: &mut Suite,
        id: String,
        path: String,
        cap: VolumeCapability,
    ) -> NodeStageVolumeRequest {
        NodeStageVolumeRequest {
            publish_context: self.context(true, &id),
            volume_context: self.context(false, &id),
            volume_id: id,
            staging_target_path: path,
            volume_capability: Some(cap),
            secrets: s.secrets("NodeStageVolume"),
        }
    }

    fn capability(s: &Suite) -> VolumeCapability {
        s.capability()
    }

    /// The capability of volume `v`, in its access mode ([`Model::mode_of`]).
    fn capability_of(s: &Suite, m: &Model, v: Vol) -> VolumeCapability {
        s.capability_typed(m.mode_of(v), m.is_block(v))
    }

    /// The concrete request for `call`; `model` gives the ids. `None` when the call names
    /// something the model has no id for (then it is not made), or a folder cannot be made.
    pub(crate) fn prepare(
        &self,
        s: &mut Suite,
        m: &Model,
        call: &Call,
    ) -> Result<Prepared, String> {
        let vid = |v: Vol| m.vol(v).map(|x| x.id.clone()).ok_or_else(|| format!("no id for {v}"));
        let sid = |x: Snap| m.snap(x).map(|y| y.id.clone()).ok_or_else(|| format!("no id for {x}"));
        // A group's id and its snapshots' ids, as the CO hands them back.
        let gid = |g: Grp| {
            m.groups
                .get(&g)
                .map(|x| (x.id.clone(), x.members.iter().map(|(s, _)| s.clone()).collect()))
                .ok_or_else(|| format!("no id for {g}"))
        };
        let range = |mib: u32, limit: u32| {
            (mib > 0 || limit > 0).then(|| CapacityRange {
                required_bytes: i64::from(mib) * MIB,
                limit_bytes: i64::from(limit) * MIB,
            })
        };
        Ok(match *call {
            Call::CreateVolume { name, mib, limit, source } => {
                let source = match source {
                    None => None,
                    Some(Source::Snapshot(x)) => {
                        Some(SourceType::Snapshot(SnapshotSource { snapshot_id: sid(x)? }))
                    }
                    Some(Source::Volume(v)) => {
                        Some(SourceType::Volume(VolumeSource { volume_id: vid(v)? }))
                    }
                    Some(Source::Member(g, n)) => {
                        let id = m.member_id(g, n).ok_or_else(|| format!("no id for {g}"))?;
                        Some(SourceType::Snapshot(SnapshotSource { snapshot_id: id.to_owned() }))
                    }
                };
                let mut r = s.create_request(&self.volume_name(name), 0);
                let plain = source.is_none();
                r.volume_capabilities =
                    vec![s.capability_typed(m.mode_for(name, plain), m.block_for(name, plain))];
                r.capacity_range = range(mib, limit);
                r.volume_content_source = source.map(|t| VolumeContentSource { r#type: Some(t) });
                r.accessibility_requirements = Self::requirements(s, name);
                Prepared::Create(r)
            }
            Call::DeleteVolume(v) => Prepared::Delete(DeleteVolumeRequest {
                volume_id: vid(v)?,
                secrets: s.secrets("DeleteVolume"),
            }),
            Call::ControllerPublish { vol, readonly, own } => {
                let id = vid(vol)?;
                Prepared::Publish(ControllerPublishVolumeRequest {
                    volume_context: self.context(false, &id),
                    volume_id: id,
                    node_id: if own { self.node_id.clone() } else { NO_SUCH_NODE.to_owned() },
                    volume_capability: Some(Self::capability_of(s, m, vol)),
                    readonly,
                    secrets: s.secrets("ControllerPublishVolume"),
                })
            }
            Call::ControllerUnpublish { vol, all } => {
                Prepared::Unpublish(ControllerUnpublishVolumeRequest {
                    volume_id: vid(vol)?,
                    node_id: if all { String::new() } else { self.node_id.clone() },
                    secrets: s.secrets("ControllerUnpublishVolume"),
                })
            }
            Call::Validate(v) => {
                let id = vid(v)?;
                Prepared::Validate(ValidateVolumeCapabilitiesRequest {
                    volume_context: self.context(false, &id),
                    volume_id: id,
                    volume_capabilities: vec![Self::capability_of(s, m, v)],
                    secrets: s.secrets("ValidateVolumeCapabilities"),
                    ..ValidateVolumeCapabilitiesRequest::default()
                })
            }
            Call::ListVolumes { max_entries } => Prepared::ListVolumes(max_entries, String::new()),
            Call::ListHold { max_entries, snapshots: false } => Prepared::ListHold(max_entries),
            Call::ListHold { max_entries, snapshots: true } => {
                Prepared::SnapHold(ListSnapshotsRequest {
                    max_entries,
                    secrets: s.secrets("ListSnapshots"),
                    ..ListSnapshotsRequest::default()
                })
            }
            Call::ListResume { snapshots: true } => Prepared::ListSnapshots(ListSnapshotsRequest {
                starting_token: self.take_held_token(true).ok_or("no ListSnapshots token held")?,
                secrets: s.secrets("ListSnapshots"),
                ..ListSnapshotsRequest::default()
            }),
            Call::ListResume { snapshots: false } => Prepared::ListVolumes(
                0,
                self.take_held_token(false).ok_or("no ListVolumes token held")?,
            ),
            Call::GetVolume(v) => Prepared::Get(ControllerGetVolumeRequest { volume_id: vid(v)? }),
            Call::Expand { vol, mib, limit } => Prepared::Expand(ControllerExpandVolumeRequest {
                volume_id: vid(vol)?,
                capacity_range: range(mib, limit),
                secrets: s.secrets("ControllerExpandVolume"),
                volume_capability: Some(Self::capability_of(s, m, vol)),
            }),
            Call::CreateSnapshot { name, source } => Prepared::Snapshot(CreateSnapshotRequest {
                source_volume_id: vid(source)?,
                name: self.snapshot_name(name),
                secrets: s.secrets("CreateSnapshot"),
                ..CreateSnapshotRequest::default()
            }),
            Call::DeleteSnapshot(x) => Prepared::DeleteSnapshot(DeleteSnapshotRequest {
                snapshot_id: sid(x)?,
                secrets: s.secrets("DeleteSnapshot"),
            }),
            Call::ListSnapshots { filter, max_entries } => {
                let mut r = ListSnapshotsRequest {
                    max_entries,
                    secrets: s.secrets("ListSnapshots"),
                    ..ListSnapshotsRequest::default()
                };
                match filter {
                    Filter::All => {}
                    Filter::Id(x) => r.snapshot_id = sid(x)?,
                    Filter::Source(v) => r.source_volume_id = vid(v)?,
                }
                Prepared::ListSnapshots(r)
            }
            Call::GetSnapshot(x) => Prepared::GetSnapshot(GetSnapshotRequest {
                snapshot_id: sid(x)?,
                secrets: s.secrets("GetSnapshot"),
            }),
            Call::Stage { vol, path } => {
                let dir = self.make_staging(vol, path)?;
                Prepared::Stage(self.stage_request(
                    s,
                    vid(vol)?,
                    dir,
                    Self::capability_of(s, m, vol),
                ))
            }
            Call::Unstage(v) => Prepared::Unstage(NodeUnstageVolumeRequest {
                volume_id: vid(v)?,
                staging_target_path: self.staging_dir(m, v)?,
            }),
            Call::Publish { vol, target, readonly } => {
                let id = vid(vol)?;
                let staging = if m.caps.stage { self.staging_dir(m, vol)? } else { String::new() };
                Prepared::NodePublish(
                    NodePublishVolumeRequest {
                        publish_context: self.context(true, &id),
                        volume_context: self.context(false, &id),
                        volume_id: id,
                        staging_target_path: staging,
                        target_path: self.target_dir(vol, target)?,
                        volume_capability: Some(Self::capability_of(s, m, vol)),
                        readonly,
                        secrets: s.secrets("NodePublishVolume"),
                    },
                    m.caps.local,
                )
            }
            Call::Unpublish { vol, target } => {
                let others = self.standing_targets(m, vol, Some(target));
                Prepared::NodeUnpublish(
                    NodeUnpublishVolumeRequest {
                        volume_id: vid(vol)?,
                        target_path: self.target_dir(vol, target)?,
                    },
                    m.caps.local,
                    others,
                )
            }
            Call::Stats { vol, at } => {
                let path = match at {
                    At::Staging => self.staging_dir(m, vol)?,
                    At::Target(t) => self.target_dir(vol, t)?,
                };
                let staging = if m.caps.stage { self.staging_dir(m, vol)? } else { String::new() };
                Prepared::Stats(NodeGetVolumeStatsRequest {
                    volume_id: vid(vol)?,
                    volume_path: path,
                    staging_target_path: staging,
                })
            }
            Call::CreateGroup { name, vols } => {
                Prepared::CreateGroup(CreateVolumeGroupSnapshotRequest {
                    name: self.group_name(name),
                    source_volume_ids: vec![vid(vols[0])?, vid(vols[1])?],
                    secrets: s.secrets("CreateVolumeGroupSnapshot"),
                    ..CreateVolumeGroupSnapshotRequest::default()
                })
            }
            Call::DeleteGroup(g) => {
                let (group_snapshot_id, snapshot_ids) = gid(g)?;
                Prepared::DeleteGroup(DeleteVolumeGroupSnapshotRequest {
                    group_snapshot_id,
                    snapshot_ids,
                    secrets: s.secrets("DeleteVolumeGroupSnapshot"),
                })
            }
            Call::DeleteGroupMismatch { group, ids } => {
                let (group_snapshot_id, mut snapshot_ids): (String, Vec<String>) = gid(group)?;
                match ids {
                    Mismatch::Lone(x) => snapshot_ids.push(sid(x)?),
                    Mismatch::Other(o) => snapshot_ids.extend(gid(o)?.1.into_iter().take(1)),
                    Mismatch::Short => {
                        snapshot_ids.pop();
                    }
                }
                Prepared::DeleteGroup(DeleteVolumeGroupSnapshotRequest {
                    group_snapshot_id,
                    snapshot_ids,
                    secrets: s.secrets("DeleteVolumeGroupSnapshot"),
                })
            }
            Call::Member { group, nth, delete } => {
                let id = m
                    .groups
                    .get(&group)
                    .and_then(|g| g.members.get(usize::from(nth)))
                    .map(|(id, _)| id.clone())
                    .ok_or_else(|| format!("no id for {group}'s snapshot #{nth}"))?;
                if delete {
                    Prepared::DeleteSnapshot(DeleteSnapshotRequest {
                        snapshot_id: id,
                        secrets: s.secrets("DeleteSnapshot"),
                    })
                } else {
                    Prepared::GetSnapshot(GetSnapshotRequest {
                        snapshot_id: id,
                        secrets: s.secrets("GetSnapshot"),
                    })
                }
            }
            Call::GetGroup(g) => {
                let (group_snapshot_id, snapshot_ids) = gid(g)?;
                Prepared::GetGroup(GetVolumeGroupSnapshotRequest {
                    group_snapshot_id,
                    snapshot_ids,
                    secrets: s.secrets("GetVolumeGroupSnapshot"),
                })
            }
            Call::Modify(v) => Prepared::Modify(ControllerModifyVolumeRequest {
                volume_id: vid(v)?,
                secrets: s.secrets("ControllerModifyVolume"),
                mutable_parameters: s.cfg.mutable_parameters.clone(),
            }),
            Call::ModifyUnsupported(v) => {
                let mut mutable_parameters = s.cfg.mutable_parameters.clone();
                mutable_parameters.insert(unsupported_key(v).to_owned(), "1".to_owned());
                Prepared::Modify(ControllerModifyVolumeRequest {
                    volume_id: vid(v)?,
                    secrets: s.secrets("ControllerModifyVolume"),
                    mutable_parameters,
                })
            }
            Call::Elsewhere { vol, rpc, at } => {
                let id = vid(vol)?;
                let path = self.elsewhere_dir(m, vol, at)?;
                match rpc {
                    NodeRpc::Stage => Prepared::Stage(self.stage_request(
                        s,
                        id,
                        path,
                        Self::capability_of(s, m, vol),
                    )),
                    NodeRpc::Unstage => Prepared::Unstage(NodeUnstageVolumeRequest {
                        volume_id: id,
                        staging_target_path: path,
                    }),
                    NodeRpc::Unpublish => Prepared::NodeUnpublish(
                        NodeUnpublishVolumeRequest { volume_id: id, target_path: path },
                        m.caps.local,
                        self.standing_targets(m, vol, None),
                    ),
                    NodeRpc::Stats => Prepared::Stats(NodeGetVolumeStatsRequest {
                        volume_id: id,
                        volume_path: path,
                        staging_target_path: if m.caps.stage {
                            self.staging_dir(m, vol)?
                        } else {
                            String::new()
                        },
                    }),
                }
            }
            Call::GetCapacity { with } => Prepared::Capacity(GetCapacityRequest {
                volume_capabilities: if with { vec![Self::capability(s)] } else { Vec::new() },
                parameters: if with { s.cfg.volume_parameters.clone() } else { Default::default() },
                accessible_topology: None,
            }),
            Call::NodeExpand { vol, mib, limit } => {
                let staged = m.caps.stage;
                let path = if staged {
                    self.staging_dir(m, vol)?
                } else {
                    let t = m
                        .vol(vol)
                        .and_then(|x| x.targets.iter().position(Option::is_some))
                        .unwrap_or(0);
                    self.target_dir(vol, u8::try_from(t).unwrap_or(0))?
                };
                Prepared::NodeExpand(NodeExpandVolumeRequest {
                    volume_id: vid(vol)?,
                    volume_path: path,
                    capacity_range: range(mib, limit),
                    staging_target_path: if staged {
                        self.staging_dir(m, vol)?
                    } else {
                        String::new()
                    },
                    volume_capability: Some(Self::capability_of(s, m, vol)),
                    secrets: s.secrets("NodeExpandVolume"),
                })
            }
        })
    }

    /// Whether `published_node_ids` (when a status was answered) holds this node.
    fn on_node(&self, ids: Option<Vec<String>>) -> Option<bool> {
        ids.map(|ids| ids.contains(&self.node_id))
    }

    /// Removes the folders the CO's part made for `vols` under `mount` and `staging` (if these
    /// are the attempt's), once the attempt is cleaned up: a long walk would otherwise leave
    /// thousands in one folder, and every later folder made there costs more. Only empty
    /// folders go (`remove_dir`): one a plugin left a mount or files in stays as it is.
    pub(crate) fn remove_folders(&self, mount: &Path, staging: &Path, vols: &[Vol]) {
        if self.mount != mount || self.staging != staging {
            return;
        }
        for v in vols {
            for t in 0..TARGETS as u8 {
                let target = self.target_path(*v, t);
                let _ = std::fs::remove_dir(&target);
                if let Some(parent) = target.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
            for n in 0..STAGINGS {
                let _ = std::fs::remove_dir(self.staging_path(*v, n));
            }
        }
        let _ = std::fs::remove_dir(self.nowhere_path());
    }

    /// The staging folder of `v` where the model has it staged (or last had), made (the CO's
    /// part).
    fn staging_dir(&self, m: &Model, v: Vol) -> Result<String, String> {
        self.make_staging(v, m.staging_of(v))
    }

    /// Staging folder #n of `v`, made (the CO's part).
    fn make_staging(&self, v: Vol, n: u8) -> Result<String, String> {
        let dir = self.staging_path(v, n);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make the staging folder '{}': {e}", dir.display()))?;
        Ok(dir.display().to_string())
    }

    /// Target path #t of `v`, its parent made (the CO's part).
    fn target_dir(&self, v: Vol, t: u8) -> Result<String, String> {
        let path = self.target_path(v, t);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot make the folder '{}': {e}", parent.display()))?;
        }
        Ok(path.display().to_string())
    }

    /// The node's topology (NodeGetInfo) as requisite and preferred, for every other name (odd
    /// ones), so that volumes made with accessibility requirements and without both meet every
    /// move; the same name always asks the same. Each answer is then held to "If requisite is
    /// specified, the provisioned volume MUST be accessible from at least one of the requisite
    /// topologies" by the answer checks, whatever the history: a clone, a restore, a retry, a
    /// name made again. None where the node gives no topology.
    fn requirements(s: &Suite, name: u16) -> Option<TopologyRequirement> {
        let node = s.node_topology.as_ref().filter(|t| !t.segments.is_empty())?;
        (name % 2 == 1).then(|| TopologyRequirement {
            requisite: vec![node.clone()],
            preferred: vec![node.clone()],
        })
    }

    /// Sends `p` and reads the answer as the model does.
    pub(crate) async fn send(&self, s: &Suite, p: Prepared) -> Reply {
        match p {
            Prepared::Create(r) => {
                let answer = self.ask(s, r).await;
                match answer {
                    Ok(CreateVolumeResponse { volume: Some(v) }) => {
                        if !v.volume_context.is_empty() {
                            self.remember(true, &v.volume_id, &v.volume_context);
                        }
                        Reply::Ok(Body::Volume {
                            source: content_source(v.content_source),
                            id: v.volume_id,
                            capacity: v.capacity_bytes,
                        })
                    }
                    other => empty(other),
                }
            }
            Prepared::Delete(r) => empty(self.ask(s, r).await),
            Prepared::Publish(r) => {
                let id = r.volume_id.clone();
                let answer = self.ask(s, r).await;
                if let Ok(a) = &answer {
                    self.remember(false, &id, &a.publish_context);
                }
                empty(answer)
            }
            Prepared::Unpublish(r) => empty(self.ask(s, r).await),
            Prepared::Validate(r) => match self.ask(s, r).await {
                Ok(a) => Reply::Ok(Body::Validated { confirmed: a.confirmed.is_some() }),
                Err(e) => error(&e),
            },
            Prepared::ListVolumes(max_entries, token) => {
                self.list_volumes(s, max_entries, token).await
            }
            Prepared::ListHold(max_entries) => self.hold_first_page(s, max_entries).await,
            Prepared::SnapHold(r) => self.hold_first_snapshots(s, r).await,
            Prepared::Get(r) => match self.ask(s, r).await {
                Ok(ControllerGetVolumeResponse { volume: Some(v), status }) => {
                    let on_node = self.on_node(status.map(|st| st.published_node_ids));
                    Reply::Ok(Body::Got(Listed {
                        source: content_source(v.content_source),
                        id: v.volume_id,
                        capacity: v.capacity_bytes,
                        on_node,
                    }))
                }
                other => empty(other),
            },
            Prepared::Expand(r) => match self.ask(s, r).await {
                Ok(a) => Reply::Ok(Body::Expanded {
                    capacity: a.capacity_bytes,
                    node: a.node_expansion_required,
                }),
                Err(e) => error(&e),
            },
            Prepared::Snapshot(r) => match self.ask(s, r).await {
                Ok(CreateSnapshotResponse { snapshot: Some(x) }) => Reply::Ok(Body::Snapshot {
                    id: x.snapshot_id,
                    source: x.source_volume_id,
                    size: x.size_bytes,
                    ready: x.ready_to_use,
                    created: x.creation_time.map(|t| (t.seconds, t.nanos)),
                }),
                other => empty(other),
            },
            Prepared::DeleteSnapshot(r) => empty(self.ask(s, r).await),
            Prepared::ListSnapshots(r) => self.list_snapshots(s, r).await,
            Prepared::GetSnapshot(r) => match self.ask(s, r).await {
                Ok(GetSnapshotResponse { snapshot: Some(x) }) => {
                    Reply::Ok(Body::GotSnapshot(pages::described_snapshot(x)))
                }
                other => empty(other),
            },
            Prepared::Stage(r) => empty(self.ask(s, r).await),
            Prepared::Unstage(r) => empty(self.ask(s, r).await),
            Prepared::NodePublish(r, local) => {
                let target = PathBuf::from(&r.target_path);
                match self.ask(s, r).await {
                    Ok(_) => Reply::Ok(Body::Target {
                        exists: local.then(|| there(&target)),
                        gone: Vec::new(),
                    }),
                    Err(e) => error(&e),
                }
            }
            Prepared::NodeUnpublish(r, local, others) => {
                let target = PathBuf::from(&r.target_path);
                match self.ask(s, r).await {
                    Ok(_) => Reply::Ok(Body::Target {
                        exists: local.then(|| there(&target)),
                        gone: others.iter().filter(|(_, p)| !there(p)).map(|(t, _)| *t).collect(),
                    }),
                    Err(e) => error(&e),
                }
            }
            Prepared::Stats(r) => empty(self.ask(s, r).await),
            Prepared::Modify(r) => empty(self.ask(s, r).await),
            Prepared::CreateGroup(r) => group(self.ask(s, r).await.map(|a| a.group_snapshot)),
            Prepared::DeleteGroup(r) => empty(self.ask(s, r).await),
            Prepared::GetGroup(r) => group(self.ask(s, r).await.map(|a| a.group_snapshot)),
            Prepared::Capacity(r) => match self.ask(s, r).await {
                Ok(a) => Reply::Ok(Body::Bounds(Bounds {
                    available: a.available_capacity,
                    max: a.maximum_volume_size,
                    min: a.minimum_volume_size,
                })),
                Err(e) => error(&e),
            },
            Prepared::NodeExpand(r) => match self.ask(s, r).await {
                Ok(a) => Reply::Ok(Body::Capacity(a.capacity_bytes)),
                Err(e) => error(&e),
            },
        }
    }

    /// NodeGetInfo, for a capture: a replay against another plugin maps the node id it names.
    pub(crate) async fn node_info(&self, s: &Suite) {
        let _ = self.ask(s, NodeGetInfoRequest {}).await;
    }

    /// The exchanges recorded since the last call, in order.
    pub(crate) fn take_recorded(&self) -> Vec<Exchange> {
        self.recorded
            .as_ref()
            .map(|r| std::mem::take(&mut *r.lock().unwrap_or_else(PoisonError::into_inner)))
            .unwrap_or_default()
    }

    /// Keeps a `volume_context` (`volume`) or a `publish_context` to hand back later.
    fn remember(&self, volume: bool, id: &str, context: &HashMap<String, String>) {
        let map = if volume { &self.contexts } else { &self.publish_contexts };
        map.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), context.clone());
    }

    /// The `publish_context` (`publish`) or `volume_context` the CO hands back for volume `id`.
    fn context(&self, publish: bool, id: &str) -> HashMap<String, String> {
        let map = if publish { &self.publish_contexts } else { &self.contexts };
        map.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned().unwrap_or_default()
    }

    /// One call through the suite's exchange; recorded when recording.
    async fn ask<Q: Rpc>(&self, s: &Suite, request: Q) -> Result<Q::Response, Status> {
        let Some(recorded) = &self.recorded else {
            return s.ask(request).await;
        };
        let bytes = request.encode_to_vec();
        let (start, clock) = (SystemTime::now(), Instant::now());
        let answer = s.ask(request).await;
        let exchange = Exchange {
            rpc: Q::METHOD,
            request: bytes,
            answer: match &answer {
                Ok(a) => Ok(a.encode_to_vec()),
                Err(e) => Err((e.code(), e.message().to_owned())),
            },
            start,
            duration: clock.elapsed(),
        };
        recorded.lock().unwrap_or_else(PoisonError::into_inner).push(exchange);
        answer
    }
}

fn error(e: &Status) -> Reply {
    Reply::Err { code: e.code(), message: e.message().to_owned() }
}

/// A group snapshot answered, as the model reads it.
fn group(answer: Result<Option<VolumeGroupSnapshot>, Status>) -> Reply {
    match answer {
        Ok(Some(g)) => Reply::Ok(Body::Group {
            id: g.group_snapshot_id,
            bound: g.snapshots.iter().map(|x| !x.group_snapshot_id.is_empty()).collect(),
            members: g
                .snapshots
                .iter()
                .map(|x| (x.snapshot_id.clone(), x.source_volume_id.clone()))
                .collect(),
            described: g.snapshots.into_iter().map(pages::described_snapshot).collect(),
        }),
        other => empty(other),
    }
}

/// A volume's `content_source` as the model reads it: (a snapshot, its id).
fn content_source(c: Option<VolumeContentSource>) -> Option<(bool, String)> {
    c.and_then(|c| c.r#type).map(|t| match t {
        SourceType::Snapshot(x) => (true, x.snapshot_id),
        SourceType::Volume(x) => (false, x.volume_id),
    })
}

/// An answer whose body the model does not read.
fn empty<T>(answer: Result<T, Status>) -> Reply {
    match answer {
        Ok(_) => Reply::Ok(Body::Empty),
        Err(e) => error(&e),
    }
}

/// Something is at `path` (a folder or a file; a dangling link counts).
fn there(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
