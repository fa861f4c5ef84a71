//! The plugin's state and CSI semantics: every RPC as a plain function from request to response,
//! with the spec's idempotency rules and error tables, and no gRPC plumbing.
//!
//! Required fields, in-flight overlap and alpha policy are the server skeleton's job (its layers
//! run before these functions); what is left here is what only the plugin can know: whether a
//! volume exists, whether a retried call matches the first, whether a path is staged.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use subtle::ConstantTimeEq as _;

use csikit::v1::errors::{CreateVolumeError, NodePublishVolumeError, NodeUnpublishVolumeError};
use csikit::v1::volume_capability::AccessType;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_content_source::{SnapshotSource, Type as SourceType, VolumeSource};
use csikit::v1::{
    CapacityRange, CreateVolumeRequest, Topology, TopologyRequirement, VolumeCapability,
    VolumeContentSource,
};
use tonic::Status;

use crate::fault::Fault;

pub use health::{
    HEALTH_KEY, HEALTH_REASON_KEY, HEALTH_RPCS, StorageCondition, VolumeCondition,
    requested_condition,
};

/// The `parameters` key (copied into `volume_context`) that makes `CreateVolume`,
/// `NodeStageVolume` and `NodePublishVolume` sleep this many milliseconds first: a test hook that
/// keeps a call in flight long enough for a second, overlapping one to arrive.
pub const DELAY_KEY: &str = "memdriver.csikit.dev/delay-ms";

/// The longest delay the hook honours, so a typo cannot wedge a volume for hours.
const MAX_DELAY: Duration = Duration::from_secs(60);

const GIB: i64 = 1 << 30;

/// The topology key of the one node this plugin serves: `NodeGetInfo` reports the node under
/// it, every volume is accessible from there.
pub const TOPOLOGY_KEY: &str = "memdriver.csikit.dev/node";

/// The mutable parameter names accepted when `MEMDRIVER_MUTABLE_PARAMETERS` is unset.
pub const DEFAULT_MUTABLE_PARAMETERS: &[&str] = &["iops", "throughput"];

/// File systems a mount capability may ask for; the empty string means the plugin's default.
const FS_TYPES: &[&str] = &["", "ext4", "xfs"];

/// How the plugin is set up.
#[derive(Clone)]
pub struct Config {
    /// The node this plugin serves (`NodeGetInfo`), and the only node `ControllerPublishVolume`
    /// knows.
    pub node_id: String,
    /// The pool volumes are carved from, in bytes.
    pub total_capacity: i64,
    /// The largest single volume, in bytes; larger requests get `OUT_OF_RANGE`.
    pub max_volume_size: i64,
    /// The size of a volume created without a `capacity_range`.
    pub default_volume_size: i64,
    /// A secret every request with a `secrets` field must carry: `(key, value)`.
    pub required_secret: Option<(String, String)>,
    /// A bug to have on purpose (`MEMDRIVER_FAULT`), for testing conformance suites.
    pub fault: Option<crate::fault::Fault>,
    /// The mutable parameter names `CreateVolume` and `ControllerModifyVolume` accept.
    pub mutable_parameters: Vec<String>,
    /// Serve the GroupController service (group snapshots).
    pub group_controller: bool,
    /// How many volumes may be controller-published to the node (`NodeGetInfo`); 0: no limit.
    pub max_volumes_per_node: i64,
    /// Serve the health RPCs and advertise their capabilities (`MEMDRIVER_HEALTH`).
    pub health: bool,
    /// What `NodeGetStorageHealth` answers (`MEMDRIVER_STORAGE_HEALTH`); `None`: healthy.
    pub storage_health: Option<StorageCondition>,
}

// Hand-written so the required secret's value never reaches a log line through `{:?}`.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("node_id", &self.node_id)
            .field("total_capacity", &self.total_capacity)
            .field("max_volume_size", &self.max_volume_size)
            .field("default_volume_size", &self.default_volume_size)
            .field(
                "required_secret",
                &self.required_secret.as_ref().map(|(key, _)| (key, csikit::redact::Redacted)),
            )
            .field("fault", &self.fault)
            .field("mutable_parameters", &self.mutable_parameters)
            .field("group_controller", &self.group_controller)
            .field("max_volumes_per_node", &self.max_volumes_per_node)
            .field("health", &self.health)
            .field("storage_health", &self.storage_health)
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            node_id: "memdriver-node".to_owned(),
            total_capacity: 1024 * GIB,
            max_volume_size: 256 * GIB,
            default_volume_size: GIB,
            required_secret: None,
            fault: None,
            mutable_parameters: DEFAULT_MUTABLE_PARAMETERS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            group_controller: false,
            max_volumes_per_node: 0,
            health: true,
            storage_health: None,
        }
    }
}

/// A volume as the controller and the node both see it (one process plays both parts).
#[derive(Debug, Clone)]
struct Volume {
    id: String,
    name: String,
    capacity: i64,
    capabilities: Vec<VolumeCapability>,
    parameters: HashMap<String, String>,
    mutable_parameters: HashMap<String, String>,
    context: HashMap<String, String>,
    source: Option<VolumeContentSource>,
    /// Controller-published: node id to how.
    published_nodes: BTreeMap<String, ControllerPublication>,
    /// Node-staged: staging path to capability.
    staged: BTreeMap<String, VolumeCapability>,
    /// Node-published: target path to how.
    published: BTreeMap<String, NodePublication>,
    /// The staging path of its first NodeStageVolume (what [`Fault::UnstageFirstPath`]
    /// unstages; kept only under that fault).
    first_staging: Option<String>,
    /// Each target path's `readonly` flag when last published there (what
    /// [`Fault::TargetKeepsReadonly`] holds a new publication to; kept only under that fault).
    target_readonly: BTreeMap<String, bool>,
    /// Its statistics record was dropped by the unpublish of another target (what
    /// [`Fault::StatsLostByOtherUnpublish`] answers NOT_FOUND for; set only under that fault).
    stats_dropped: bool,
    /// The size the node last expanded its file system to.
    node_capacity: i64,
    /// The size it was created with (what [`Fault::ExpandNotListed`] reports).
    created_capacity: i64,
    /// How many times ControllerPublishVolume published it (what
    /// [`Fault::ThirdUnpublishKeepsNode`] counts).
    publications: u32,
    /// Where it is accessible from: the node's topology.
    topology: Topology,
}

#[derive(Debug, Clone, PartialEq)]
struct ControllerPublication {
    capability: VolumeCapability,
    readonly: bool,
}

/// Everything of a `NodePublishVolume` call but its secrets (the spec's P<sub>n</sub>).
#[derive(Debug, Clone, PartialEq)]
struct NodePublication {
    staging_path: String,
    capability: VolumeCapability,
    readonly: bool,
    context: HashMap<String, String>,
    publish_context: HashMap<String, String>,
}

#[derive(Debug, Clone)]
struct Snapshot {
    id: String,
    /// Empty for a group snapshot's member.
    name: String,
    source_volume_id: String,
    size: i64,
    created: prost_types::Timestamp,
    parameters: HashMap<String, String>,
    /// The group snapshot it belongs to (empty: none); it is deleted with the group only.
    group: String,
}

/// A group snapshot: one snapshot per source volume, cut together.
#[derive(Debug, Clone)]
struct Group {
    id: String,
    sources: Vec<String>,
    members: Vec<String>,
    created: prost_types::Timestamp,
    parameters: HashMap<String, String>,
}

#[derive(Debug, Default)]
struct State {
    volumes: BTreeMap<String, Volume>,
    volume_names: HashMap<String, String>,
    snapshots: BTreeMap<String, Snapshot>,
    snapshot_names: HashMap<String, String>,
    groups: BTreeMap<String, Group>,
    group_names: HashMap<String, String>,
    /// Deleted volumes whose names [`Fault::ReuseNameAfterDelete`] still answers with.
    graveyard: BTreeMap<String, Volume>,
    /// The capacities of every volume when a ListVolumes `next_token` was handed out, by
    /// token: what [`Fault::ListTokenStaleSizes`] pages from.
    list_sizes: HashMap<String, HashMap<String, i64>>,
    /// The snapshots when a ListSnapshots `next_token` was handed out, by token: what
    /// [`Fault::ListSnapshotsTokenStale`] pages from.
    list_snapshots: HashMap<String, BTreeMap<String, Snapshot>>,
    /// Names whose CreateVolume from a source was refused OUT_OF_RANGE: what
    /// [`Fault::RetrySizedByRange`] sizes by the range alone next time.
    refused_names: std::collections::HashSet<String>,
    next_id: u64,
    used: i64,
}

/// The plugin: configuration plus the state behind one mutex, never held across an `await`.
#[derive(Debug, Default)]
pub struct Driver {
    config: Config,
    state: Mutex<State>,
}

impl Driver {
    /// A plugin with nothing provisioned.
    pub fn new(config: Config) -> Driver {
        Driver { config, state: Mutex::default() }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    fn fault(&self, fault: crate::fault::Fault) -> bool {
        self.config.fault == Some(fault)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves state that is still consistent enough to serve
        // (every mutation is a single insert or remove), so keep going rather than fail forever.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks `secrets` against the required secret, if one is configured.
    ///
    /// # Errors
    ///
    /// `UNAUTHENTICATED` when the key is missing or its value differs. The message names the key,
    /// never a value.
    pub fn authenticate(&self, secrets: &HashMap<String, String>) -> Result<(), Status> {
        let Some((key, expected)) = &self.config.required_secret else {
            return Ok(());
        };
        match secrets.get(key) {
            // Without an early exit, so timing does not reveal a matching prefix.
            Some(given) if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) => Ok(()),
            Some(_) => Err(Status::unauthenticated(format!("secret '{key}' is not valid"))),
            None => Err(Status::unauthenticated(format!("secret '{key}' is required"))),
        }
    }

    /// The message refusing `refused` mutable parameter names.
    fn mutable_refusal(&self, refused: &[String]) -> String {
        format!(
            "mutable_parameters: {} not supported (this plugin accepts: {})",
            refused.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", "),
            if self.config.mutable_parameters.is_empty() {
                "none".to_owned()
            } else {
                self.config.mutable_parameters.join(", ")
            }
        )
    }

    /// The mutable parameter names in `parameters` this plugin does not accept, sorted; empty
    /// when it accepts them all.
    fn refused_mutable(&self, parameters: &HashMap<String, String>) -> Vec<String> {
        if self.fault(Fault::AcceptAnyMutable) {
            return Vec::new();
        }
        let mut refused: Vec<String> = parameters
            .keys()
            .filter(|k| !self.config.mutable_parameters.iter().any(|a| a == *k))
            .cloned()
            .collect();
        refused.sort();
        refused
    }
}

impl Config {
    /// The topology of the node this plugin serves.
    pub fn topology(&self) -> Topology {
        Topology { segments: HashMap::from([(TOPOLOGY_KEY.to_owned(), self.node_id.clone())]) }
    }

    /// Whether a volume can be made within `requirement`: its requisite (if any) names this
    /// node's topology. A topology naming other keys too, or this key with another node, is
    /// not this node.
    fn can_serve(&self, requirement: Option<&TopologyRequirement>) -> bool {
        let Some(requirement) = requirement.filter(|r| !r.requisite.is_empty()) else {
            return true;
        };
        let mine = self.topology();
        requirement.requisite.iter().any(|t| t.segments == mine.segments)
    }
}

impl State {
    /// The volume `id`; when there is none, the RPC's "volume does not exist" row (`row`) with a
    /// message naming it.
    fn volume_mut(
        &mut self,
        id: &str,
        row: impl FnOnce(String) -> Status,
    ) -> Result<&mut Volume, Status> {
        self.volumes.get_mut(id).ok_or_else(|| row(no_volume(id)))
    }

    fn new_id(&mut self, kind: &str) -> String {
        self.next_id += 1;
        // Zero-padded so id order is creation order, which paging relies on.
        format!("{kind}-{:010}", self.next_id)
    }

    /// The size of a content source, which a new volume may not undercut.
    /// [`Fault::RestoreSizeOfOrigin`]: a snapshot source's size as the size its source volume
    /// was created with (while that volume stands); any other source's own size.
    fn origin_size(&self, source: &VolumeContentSource) -> Result<i64, Status> {
        let size = self.source_size(source)?;
        Ok(match &source.r#type {
            Some(SourceType::Snapshot(SnapshotSource { snapshot_id })) => self
                .snapshots
                .get(snapshot_id)
                .and_then(|s| self.volumes.get(&s.source_volume_id))
                .map_or(size, |v| v.created_capacity),
            _ => size,
        })
    }

    fn source_size(&self, source: &VolumeContentSource) -> Result<i64, Status> {
        match &source.r#type {
            Some(SourceType::Snapshot(SnapshotSource { snapshot_id })) => {
                self.snapshots.get(snapshot_id).map(|s| s.size).ok_or_else(|| {
                    CreateVolumeError::SourceDoesNotExist
                        .status(format!("snapshot '{snapshot_id}' does not exist"))
                })
            }
            Some(SourceType::Volume(VolumeSource { volume_id })) => {
                self.volumes.get(volume_id).map(|v| v.capacity).ok_or_else(|| {
                    CreateVolumeError::SourceDoesNotExist.status(no_volume(volume_id))
                })
            }
            None => Err(CreateVolumeError::SourceIncompatibleOrNotSupported
                .status("volume_content_source names no snapshot or volume")),
        }
    }
}

impl State {
    /// `volume` as ListVolumes and ControllerGetVolume describe it: [`Volume::to_csi_read`],
    /// and under [`Fault::ReadSourceOfOrigin`] a clone of a clone (or of a restore) with its
    /// source's own source.
    fn read(&self, volume: &Volume, fault: Option<Fault>) -> csikit::v1::Volume {
        let mut v = volume.to_csi_read(fault);
        if fault == Some(Fault::ReadSourceOfOrigin)
            && let Some(SourceType::Volume(VolumeSource { volume_id })) =
                volume.source.as_ref().and_then(|s| s.r#type.as_ref())
            && let Some(origin) = self.volumes.get(volume_id).and_then(|s| s.source.clone())
        {
            v.content_source = Some(origin);
        }
        v
    }
}

impl Volume {
    /// The volume as ListVolumes and ControllerGetVolume describe it: as [`Volume::to_csi`], but
    /// at the size it was created with under [`Fault::ExpandNotListed`].
    fn to_csi_read(&self, fault: Option<Fault>) -> csikit::v1::Volume {
        let mut v = self.to_csi();
        if fault == Some(Fault::ExpandNotListed) {
            v.capacity_bytes = self.created_capacity;
        }
        v
    }

    fn to_csi(&self) -> csikit::v1::Volume {
        csikit::v1::Volume {
            capacity_bytes: self.capacity,
            volume_id: self.id.clone(),
            volume_context: self.context.clone(),
            content_source: self.source.clone(),
            accessible_topology: vec![self.topology.clone()],
        }
    }
}

impl Snapshot {
    fn to_csi(&self) -> csikit::v1::Snapshot {
        csikit::v1::Snapshot {
            size_bytes: self.size,
            snapshot_id: self.id.clone(),
            source_volume_id: self.source_volume_id.clone(),
            creation_time: Some(self.created),
            ready_to_use: true,
            group_snapshot_id: self.group.clone(),
            // Without the SNAPSHOT_ACCESSIBILITY_CONSTRAINTS plugin capability a snapshot is
            // usable from everywhere, which an empty list says.
            accessible_topology: Vec::new(),
        }
    }
}

/// What makes a repeated `CreateVolume` differ from the volume its name already holds, if anything.
/// What a call naming an unknown volume is told.
fn no_volume(id: &str) -> String {
    format!("volume '{id}' does not exist")
}

fn create_mismatch(existing: &Volume, request: &CreateVolumeRequest) -> Option<&'static str> {
    let (required, limit) =
        request.capacity_range.map_or((0, 0), |r| (r.required_bytes, r.limit_bytes));
    if existing.capacity < required || (limit > 0 && existing.capacity > limit) {
        return Some("capacity_range");
    }
    if request.volume_capabilities.iter().any(|c| !compatible(&existing.capabilities, c)) {
        return Some("volume_capabilities");
    }
    if request.parameters != existing.parameters {
        return Some("parameters");
    }
    if request.mutable_parameters != existing.mutable_parameters {
        return Some("mutable_parameters");
    }
    if request.volume_content_source != existing.source {
        return Some("volume_content_source");
    }
    None
}

/// The size an expansion asks for: at least `required_bytes`, at most `limit_bytes` and `max`.
fn expansion_target(range: Option<&CapacityRange>, max: i64) -> Result<i64, String> {
    let (required, limit) = range.map_or((0, 0), |r| (r.required_bytes, r.limit_bytes));
    if required < 0 || limit < 0 {
        return Err("capacity_range must not be negative".to_owned());
    }
    if limit > 0 && limit < required {
        return Err(format!("limit_bytes {limit} is below required_bytes {required}"));
    }
    if required > max {
        return Err(format!(
            "{required} bytes exceeds the largest size allowed here ({max} bytes)"
        ));
    }
    Ok(required)
}

/// Whether the plugin can serve a capability at all.
fn supported(capability: &VolumeCapability) -> Result<(), String> {
    let mode = capability
        .access_mode
        .map_or(Mode::Unknown, |m| Mode::try_from(m.mode).unwrap_or(Mode::Unknown));
    if mode == Mode::Unknown {
        return Err("access_mode is unknown".to_owned());
    }
    match &capability.access_type {
        Some(AccessType::Block(_)) => Ok(()),
        Some(AccessType::Mount(mount)) if FS_TYPES.contains(&mount.fs_type.as_str()) => Ok(()),
        Some(AccessType::Mount(mount)) => {
            Err(format!("fs_type '{}' is not supported", mount.fs_type))
        }
        None => Err("access_type is not set".to_owned()),
    }
}

/// Whether a volume created with `created` can be used as `wanted`: same access type kind and
/// access mode as one of its capabilities.
fn compatible(created: &[VolumeCapability], wanted: &VolumeCapability) -> bool {
    supported(wanted).is_ok()
        && created.iter().any(|c| {
            c.access_mode == wanted.access_mode
                && matches!(
                    (&c.access_type, &wanted.access_type),
                    (Some(AccessType::Block(_)), Some(AccessType::Block(_)))
                        | (Some(AccessType::Mount(_)), Some(AccessType::Mount(_)))
                )
        })
}

fn mode(capability: &VolumeCapability) -> Mode {
    capability
        .access_mode
        .map_or(Mode::Unknown, |m| Mode::try_from(m.mode).unwrap_or(Mode::Unknown))
}

/// MULTI_NODE_* modes may be controller-published to several nodes.
fn multi_node(capability: &VolumeCapability) -> bool {
    matches!(
        mode(capability),
        Mode::MultiNodeReaderOnly | Mode::MultiNodeSingleWriter | Mode::MultiNodeMultiWriter
    )
}

/// The spec's second NodePublishVolume table: these modes may be published at several target
/// paths on one node.
fn multi_writer_on_node(capability: &VolumeCapability) -> bool {
    multi_node(capability) || mode(capability) == Mode::SingleNodeMultiWriter
}

/// Creates a publication's `target_path` (for NodePublishVolume): a directory (mount access) or an empty file (block
/// access); one that is already there as such is fine. The parent is the CO's to create.
fn create_target(path: &str, block: bool) -> Result<(), Status> {
    let target = std::path::Path::new(path);
    let made = if block {
        std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(target).map(drop)
    } else {
        match std::fs::create_dir(target) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && target.is_dir() => Ok(()),
            other => other,
        }
    };
    made.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Status::failed_precondition(format!(
            "cannot create target_path '{path}': its parent directory does not exist (the CO creates it)"
        )),
        _ => NodePublishVolumeError::InternalError
            .status(format!("cannot create target_path '{path}': {e}")),
    })
}

/// Removes what [`create_target`] made at `path` (for NodeUnpublishVolume); nothing there is
/// fine.
fn remove_target(path: &str) -> Result<(), Status> {
    let target = std::path::Path::new(path);
    let removed = match std::fs::symlink_metadata(target) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir(target),
        Ok(_) => std::fs::remove_file(target),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| {
        NodeUnpublishVolumeError::InternalError
            .status(format!("cannot remove target_path '{path}': {e}"))
    })
}

fn has_mount(capabilities: &[VolumeCapability]) -> bool {
    capabilities.iter().any(|c| matches!(c.access_type, Some(AccessType::Mount(_))))
}

fn publish_context(volume_id: &str) -> HashMap<String, String> {
    HashMap::from([("devicePath".to_owned(), format!("/dev/memdriver/{volume_id}"))])
}

/// Sleeps for the test hook's delay, if `map` sets it.
async fn delay(map: &HashMap<String, String>) -> Result<(), Status> {
    let Some(value) = map.get(DELAY_KEY) else {
        return Ok(());
    };
    let ms: u64 = value.parse().map_err(|_| {
        Status::invalid_argument(format!("'{DELAY_KEY}' must be a number of milliseconds"))
    })?;
    tokio::time::sleep(Duration::from_millis(ms).min(MAX_DELAY)).await;
    Ok(())
}

/// One page of `map` after `token` (an id previously returned), and the next token.
fn page<'a, T>(
    map: &'a BTreeMap<String, T>,
    kind: &str,
    token: &str,
    max_entries: i32,
    wanted: impl Fn(&T) -> bool,
) -> Result<(Vec<&'a T>, String), ()> {
    let start = if token.is_empty() {
        std::ops::Bound::Unbounded
    } else {
        let digits = token.strip_prefix(kind).and_then(|t| t.strip_prefix('-')).ok_or(())?;
        if digits.len() != 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(());
        }
        std::ops::Bound::Excluded(token.to_owned())
    };
    let limit = usize::try_from(max_entries).ok().filter(|&n| n > 0).unwrap_or(usize::MAX);
    let mut matching = map.range((start, std::ops::Bound::Unbounded)).filter(|(_, v)| wanted(v));
    let page: Vec<(&String, &T)> = matching.by_ref().take(limit).collect();
    let next_token = match (page.last(), matching.next()) {
        (Some((last, _)), Some(_)) => (*last).clone(),
        _ => String::new(),
    };
    Ok((page.into_iter().map(|(_, v)| v).collect(), next_token))
}

mod controller;
mod group;
mod health;
mod node;
mod snapshot;

#[cfg(test)]
mod tests;
