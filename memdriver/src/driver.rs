//! The plugin's state and CSI semantics: every RPC as a plain function from request to response,
//! with the spec's idempotency rules and error tables, and no gRPC plumbing.
//!
//! Required fields, in-flight overlap and alpha policy are the server skeleton's job (its layers
//! run before these functions); what is left here is what only the plugin can know: whether a
//! volume exists, whether a retried call matches the first, whether a path is staged.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use csikit::v1::errors::{
    ControllerExpandVolumeError, ControllerGetVolumeError, ControllerModifyVolumeError,
    ControllerPublishVolumeError, CreateSnapshotError, CreateVolumeError, DeleteVolumeError,
    GetSnapshotError, ListSnapshotsError, ListVolumesError, NodeExpandVolumeError,
    NodeGetVolumeStatsError, NodePublishVolumeError, NodeStageVolumeError,
    NodeUnpublishVolumeError, NodeUnstageVolumeError, ValidateVolumeCapabilitiesError,
};
use csikit::v1::volume_capability::AccessType;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_content_source::{SnapshotSource, Type as SourceType, VolumeSource};
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerExpandVolumeResponse,
    ControllerGetVolumeRequest, ControllerGetVolumeResponse, ControllerModifyVolumeRequest,
    ControllerModifyVolumeResponse, ControllerPublishVolumeRequest,
    ControllerPublishVolumeResponse, ControllerUnpublishVolumeRequest,
    ControllerUnpublishVolumeResponse, CreateSnapshotRequest, CreateSnapshotResponse,
    CreateVolumeRequest, CreateVolumeResponse, DeleteSnapshotRequest, DeleteSnapshotResponse,
    DeleteVolumeRequest, DeleteVolumeResponse, GetCapacityRequest, GetCapacityResponse,
    GetSnapshotRequest, GetSnapshotResponse, ListSnapshotsRequest, ListSnapshotsResponse,
    ListVolumesRequest, ListVolumesResponse, NodeExpandVolumeRequest, NodeExpandVolumeResponse,
    NodeGetInfoRequest, NodeGetInfoResponse, NodeGetVolumeStatsRequest, NodeGetVolumeStatsResponse,
    NodePublishVolumeRequest, NodePublishVolumeResponse, NodeStageVolumeRequest,
    NodeStageVolumeResponse, NodeUnpublishVolumeRequest, NodeUnpublishVolumeResponse,
    NodeUnstageVolumeRequest, NodeUnstageVolumeResponse, ValidateVolumeCapabilitiesRequest,
    ValidateVolumeCapabilitiesResponse, VolumeCapability, VolumeContentSource, VolumeUsage,
    controller_get_volume_response, list_snapshots_response, list_volumes_response,
    validate_volume_capabilities_response, volume_usage,
};
use tonic::Status;

use crate::fault::Fault;

/// The `parameters` key (copied into `volume_context`) that makes `CreateVolume`,
/// `NodeStageVolume` and `NodePublishVolume` sleep this many milliseconds first: a test hook that
/// keeps a call in flight long enough for a second, overlapping one to arrive.
pub const DELAY_KEY: &str = "memdriver.csikit.dev/delay-ms";

/// The longest delay the hook honours, so a typo cannot wedge a volume for hours.
const MAX_DELAY: Duration = Duration::from_secs(60);

const GIB: i64 = 1 << 30;

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
    /// The size the node last expanded its file system to.
    node_capacity: i64,
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
    name: String,
    source_volume_id: String,
    size: i64,
    created: prost_types::Timestamp,
    parameters: HashMap<String, String>,
}

#[derive(Debug, Default)]
struct State {
    volumes: BTreeMap<String, Volume>,
    volume_names: HashMap<String, String>,
    snapshots: BTreeMap<String, Snapshot>,
    snapshot_names: HashMap<String, String>,
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
            Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
            Some(_) => Err(Status::unauthenticated(format!("secret '{key}' is not valid"))),
            None => Err(Status::unauthenticated(format!("secret '{key}' is required"))),
        }
    }

    // ---- Controller ----

    /// `CreateVolume`: a new volume, or the one already created under this name when the request
    /// is compatible with it.
    ///
    /// # Errors
    ///
    /// See the spec's CreateVolume error table.
    pub async fn create_volume(
        &self,
        request: CreateVolumeRequest,
    ) -> Result<CreateVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        if self.fault(Fault::LogSecrets) {
            tracing::info!(name = %request.name, secrets = ?request.secrets, "creating a volume");
        }
        delay(&request.parameters).await?;
        for capability in &request.volume_capabilities {
            supported(capability)
                .map_err(|why| CreateVolumeError::InvalidOrUnsupportedFieldInRequest.status(why))?;
        }
        let mut state = self.state();
        // A retry is answered from what the name holds, even if its source has gone since.
        if let Some(existing) = state
            .volume_names
            .get(&request.name)
            .and_then(|id| state.volumes.get(id))
            .filter(|_| !self.fault(Fault::CreateNotIdempotent))
        {
            return match create_mismatch(existing, &request) {
                None => Ok(CreateVolumeResponse { volume: Some(existing.to_csi()) }),
                Some(_) if self.fault(Fault::NoAlreadyExists) => {
                    Ok(CreateVolumeResponse { volume: Some(existing.to_csi()) })
                }
                Some(what) => Err(CreateVolumeError::VolumeAlreadyExistsIncompatible.status(
                    format!("volume '{}' already exists with another {what}", request.name),
                )),
            };
        }
        let source_size = match &request.volume_content_source {
            Some(source) => Some(state.source_size(source)?),
            None => None,
        };
        let capacity = if self.fault(Fault::IgnoreCapacity) {
            1 << 20
        } else {
            self.choose_capacity(request.capacity_range.as_ref(), source_size)?
        };
        if capacity > self.config.total_capacity - state.used {
            return Err(Status::resource_exhausted(format!(
                "the pool has {} bytes free, {capacity} requested",
                self.config.total_capacity - state.used
            )));
        }
        let id = state.new_id("vol");
        let mut context = HashMap::new();
        if let Some(ms) = request.parameters.get(DELAY_KEY) {
            context.insert(DELAY_KEY.to_owned(), ms.clone());
        }
        let volume = Volume {
            id: id.clone(),
            name: request.name.clone(),
            capacity,
            capabilities: request.volume_capabilities,
            parameters: request.parameters,
            mutable_parameters: request.mutable_parameters,
            context,
            source: request.volume_content_source,
            published_nodes: BTreeMap::new(),
            staged: BTreeMap::new(),
            published: BTreeMap::new(),
            node_capacity: capacity,
        };
        let response = CreateVolumeResponse { volume: Some(volume.to_csi()) };
        state.used += capacity;
        state.volume_names.insert(request.name, id.clone());
        state.volumes.insert(id, volume);
        Ok(response)
    }

    /// The size a new volume gets: the range's minimum, the source's size, or the default.
    fn choose_capacity(
        &self,
        range: Option<&CapacityRange>,
        source_size: Option<i64>,
    ) -> Result<i64, Status> {
        let out_of_range = |why: String| CreateVolumeError::UnsupportedCapacityRange.status(why);
        let (required, limit) = range.map_or((0, 0), |r| (r.required_bytes, r.limit_bytes));
        if required < 0 || limit < 0 {
            return Err(out_of_range("capacity_range must not be negative".to_owned()));
        }
        if limit > 0 && limit < required {
            return Err(out_of_range(format!(
                "limit_bytes {limit} is below required_bytes {required}"
            )));
        }
        let floor = source_size.unwrap_or(0);
        if limit > 0 && limit < floor {
            return Err(out_of_range(format!(
                "limit_bytes {limit} is below the source's size {floor}"
            )));
        }
        let capacity = if required > 0 {
            required.max(floor)
        } else if floor > 0 {
            floor
        } else if limit > 0 {
            limit.min(self.config.default_volume_size)
        } else {
            self.config.default_volume_size
        };
        if capacity > self.config.max_volume_size {
            return Err(out_of_range(format!(
                "{capacity} bytes exceeds the largest volume this plugin makes ({} bytes)",
                self.config.max_volume_size
            )));
        }
        Ok(capacity)
    }

    /// `DeleteVolume`: gone, or never there.
    ///
    /// # Errors
    ///
    /// `FAILED_PRECONDITION` while the volume is published or staged anywhere.
    pub fn delete_volume(
        &self,
        request: DeleteVolumeRequest,
    ) -> Result<DeleteVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let Some(volume) = state.volumes.get(&request.volume_id) else {
            if self.fault(Fault::DeleteNotFound) {
                return Err(Status::not_found(format!(
                    "volume '{}' does not exist",
                    request.volume_id
                )));
            }
            return Ok(DeleteVolumeResponse {});
        };
        if self.fault(Fault::LeakOnDelete) {
            return Ok(DeleteVolumeResponse {});
        }
        if let Some(node) = volume.published_nodes.keys().next() {
            return Err(DeleteVolumeError::VolumeInUse
                .status(format!("volume '{}' is published to node '{node}'", volume.id)));
        }
        if let Some(path) = volume.staged.keys().chain(volume.published.keys()).next() {
            return Err(DeleteVolumeError::VolumeInUse
                .status(format!("volume '{}' is in use at '{path}'", volume.id)));
        }
        // Snapshots are independent copies: they outlive the volume.
        let capacity = volume.capacity;
        let name = volume.name.clone();
        state.volumes.remove(&request.volume_id);
        state.volume_names.remove(&name);
        state.used -= capacity;
        Ok(DeleteVolumeResponse {})
    }

    /// `ControllerPublishVolume` to the plugin's own node.
    ///
    /// # Errors
    ///
    /// See the spec's ControllerPublishVolume error table.
    pub fn controller_publish_volume(
        &self,
        request: ControllerPublishVolumeRequest,
    ) -> Result<ControllerPublishVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            ControllerPublishVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        if request.node_id != self.config.node_id {
            return Err(ControllerPublishVolumeError::NodeDoesNotExist
                .status(format!("node '{}' does not exist", request.node_id)));
        }
        let capability = request.volume_capability.unwrap_or_default();
        if !compatible(&volume.capabilities, &capability) {
            return Err(ControllerPublishVolumeError::InvalidOrUnsupportedFieldInRequest.status(
                format!("volume '{}' was not created with this volume_capability", volume.id),
            ));
        }
        let publication = ControllerPublication { capability, readonly: request.readonly };
        if let Some(existing) = volume.published_nodes.get(&request.node_id) {
            if *existing != publication {
                return Err(ControllerPublishVolumeError::VolumePublishedIncompatible.status(format!(
                    "volume '{}' is published to node '{}' with another volume_capability or readonly flag",
                    volume.id, request.node_id
                )));
            }
        } else if let Some(other) = volume.published_nodes.keys().next()
            && !multi_node(&publication.capability)
        {
            return Err(ControllerPublishVolumeError::VolumePublishedToAnotherNode
                .status(format!("volume '{}' is published to node '{other}'", volume.id)));
        }
        volume.published_nodes.insert(request.node_id, publication);
        Ok(ControllerPublishVolumeResponse { publish_context: publish_context(&volume.id) })
    }

    /// `ControllerUnpublishVolume`: an unknown volume or node is unpublished already.
    ///
    /// # Errors
    ///
    /// Only authentication.
    pub fn controller_unpublish_volume(
        &self,
        request: ControllerUnpublishVolumeRequest,
    ) -> Result<ControllerUnpublishVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        if let Some(volume) = state.volumes.get_mut(&request.volume_id) {
            if request.node_id.is_empty() {
                volume.published_nodes.clear();
            } else {
                volume.published_nodes.remove(&request.node_id);
            }
        }
        Ok(ControllerUnpublishVolumeResponse {})
    }

    /// `ValidateVolumeCapabilities`: `confirmed` when the volume supports every capability and
    /// the given parameters and context are the volume's.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume.
    pub fn validate_volume_capabilities(
        &self,
        request: ValidateVolumeCapabilitiesRequest,
    ) -> Result<ValidateVolumeCapabilitiesResponse, Status> {
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let volume = state.volumes.get(&request.volume_id).ok_or_else(|| {
            ValidateVolumeCapabilitiesError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        let refusal = if let Some(i) =
            request.volume_capabilities.iter().position(|c| !compatible(&volume.capabilities, c))
        {
            Some(format!("volume_capabilities[{i}] is not supported by this volume"))
        } else if !request.parameters.is_empty() && request.parameters != volume.parameters {
            Some("parameters differ from the volume's".to_owned())
        } else if !request.mutable_parameters.is_empty()
            && request.mutable_parameters != volume.mutable_parameters
        {
            Some("mutable_parameters differ from the volume's".to_owned())
        } else if !request.volume_context.is_empty() && request.volume_context != volume.context {
            Some("volume_context differs from the volume's".to_owned())
        } else {
            None
        };
        Ok(match refusal {
            Some(message) => ValidateVolumeCapabilitiesResponse { confirmed: None, message },
            None => ValidateVolumeCapabilitiesResponse {
                confirmed: Some(validate_volume_capabilities_response::Confirmed {
                    volume_context: request.volume_context,
                    volume_capabilities: request.volume_capabilities,
                    parameters: request.parameters,
                    mutable_parameters: request.mutable_parameters,
                }),
                message: String::new(),
            },
        })
    }

    /// `ListVolumes`, in volume id order; `next_token` is the last id returned.
    ///
    /// # Errors
    ///
    /// `ABORTED` for a `starting_token` this plugin did not hand out.
    pub fn list_volumes(&self, request: ListVolumesRequest) -> Result<ListVolumesResponse, Status> {
        let state = self.state();
        let token = if self.fault(Fault::IgnoreToken) { "" } else { &request.starting_token };
        let listed = page(&state.volumes, "vol", token, request.max_entries, |_| true);
        let listed = match listed {
            Err(()) if self.fault(Fault::AcceptBadToken) => {
                page(&state.volumes, "vol", "", request.max_entries, |_| true)
            }
            other => other,
        };
        let (page, next_token) = listed.map_err(|()| {
            ListVolumesError::InvalidStartingToken.status(format!(
                "starting_token '{}' is not one this plugin issued",
                request.starting_token
            ))
        })?;
        let entries = page
            .into_iter()
            .map(|v| list_volumes_response::Entry {
                volume: Some(v.to_csi()),
                status: Some(list_volumes_response::VolumeStatus {
                    published_node_ids: v.published_nodes.keys().cloned().collect(),
                    volume_condition: None,
                }),
            })
            .collect();
        Ok(ListVolumesResponse { entries, next_token })
    }

    /// `ControllerGetVolume`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume.
    pub fn controller_get_volume(
        &self,
        request: ControllerGetVolumeRequest,
    ) -> Result<ControllerGetVolumeResponse, Status> {
        let state = self.state();
        let volume = state.volumes.get(&request.volume_id).ok_or_else(|| {
            ControllerGetVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        Ok(ControllerGetVolumeResponse {
            volume: Some(volume.to_csi()),
            status: Some(controller_get_volume_response::VolumeStatus {
                published_node_ids: volume.published_nodes.keys().cloned().collect(),
                volume_condition: None,
            }),
        })
    }

    /// `ControllerModifyVolume`: replaces the mutable parameters.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume.
    pub fn controller_modify_volume(
        &self,
        request: ControllerModifyVolumeRequest,
    ) -> Result<ControllerModifyVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            ControllerModifyVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        if request.mutable_parameters.contains_key(DELAY_KEY) {
            return Err(ControllerModifyVolumeError::ParametersNotSupported
                .status(format!("'{DELAY_KEY}' can only be set at creation")));
        }
        volume.mutable_parameters.extend(request.mutable_parameters);
        Ok(ControllerModifyVolumeResponse {})
    }

    /// `GetCapacity`: what is left of the pool.
    ///
    /// # Errors
    ///
    /// Never.
    pub fn get_capacity(&self, request: GetCapacityRequest) -> Result<GetCapacityResponse, Status> {
        let free = self.config.total_capacity - self.state().used;
        // A capability the plugin cannot serve has no capacity at all.
        let free =
            if request.volume_capabilities.iter().all(|c| supported(c).is_ok()) { free } else { 0 };
        Ok(GetCapacityResponse {
            available_capacity: free,
            maximum_volume_size: Some(free.min(self.config.max_volume_size)),
            minimum_volume_size: None,
        })
    }

    /// `CreateSnapshot`: cut at once, so always `ready_to_use`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown source, `ALREADY_EXISTS` when the name is taken by a snapshot of
    /// another volume.
    pub fn create_snapshot(
        &self,
        request: CreateSnapshotRequest,
    ) -> Result<CreateSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        if let Some(existing) = state
            .snapshot_names
            .get(&request.name)
            .and_then(|id| state.snapshots.get(id))
            .filter(|_| !self.fault(Fault::SnapshotNotIdempotent))
        {
            if existing.source_volume_id != request.source_volume_id
                || existing.parameters != request.parameters
            {
                return Err(CreateSnapshotError::SnapshotAlreadyExistsIncompatible.status(
                    format!(
                        "snapshot '{}' already exists for another source_volume_id or parameters",
                        request.name
                    ),
                ));
            }
            return Ok(CreateSnapshotResponse { snapshot: Some(existing.to_csi()) });
        }
        let size = match state.volumes.get(&request.source_volume_id) {
            Some(volume) => volume.capacity,
            None => {
                return Err(Status::not_found(format!(
                    "source volume '{}' does not exist",
                    request.source_volume_id
                )));
            }
        };
        let id = state.new_id("snap");
        let snapshot = Snapshot {
            id: id.clone(),
            name: request.name.clone(),
            source_volume_id: request.source_volume_id,
            size,
            created: SystemTime::now().into(),
            parameters: request.parameters,
        };
        let response = CreateSnapshotResponse { snapshot: Some(snapshot.to_csi()) };
        state.snapshot_names.insert(request.name, id.clone());
        state.snapshots.insert(id, snapshot);
        Ok(response)
    }

    /// `DeleteSnapshot`: gone, or never there. Volumes made from it are copies, so it is never in
    /// use.
    ///
    /// # Errors
    ///
    /// Only authentication.
    pub fn delete_snapshot(
        &self,
        request: DeleteSnapshotRequest,
    ) -> Result<DeleteSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        if let Some(snapshot) = state.snapshots.remove(&request.snapshot_id) {
            state.snapshot_names.remove(&snapshot.name);
        }
        Ok(DeleteSnapshotResponse {})
    }

    /// `ListSnapshots`, filtered by `snapshot_id` and `source_volume_id`, in snapshot id order.
    ///
    /// # Errors
    ///
    /// `ABORTED` for a `starting_token` this plugin did not hand out.
    pub fn list_snapshots(
        &self,
        request: ListSnapshotsRequest,
    ) -> Result<ListSnapshotsResponse, Status> {
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let wanted = |s: &Snapshot| {
            (request.snapshot_id.is_empty() || s.id == request.snapshot_id)
                && (request.source_volume_id.is_empty()
                    || s.source_volume_id == request.source_volume_id)
        };
        let (page, next_token) =
            page(&state.snapshots, "snap", &request.starting_token, request.max_entries, wanted)
                .map_err(|()| {
                    ListSnapshotsError::InvalidStartingToken.status(format!(
                        "starting_token '{}' is not one this plugin issued",
                        request.starting_token
                    ))
                })?;
        let entries = page
            .into_iter()
            .map(|s| list_snapshots_response::Entry { snapshot: Some(s.to_csi()) })
            .collect();
        Ok(ListSnapshotsResponse { entries, next_token })
    }

    /// `GetSnapshot`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown snapshot.
    pub fn get_snapshot(&self, request: GetSnapshotRequest) -> Result<GetSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let snapshot = state.snapshots.get(&request.snapshot_id).ok_or_else(|| {
            GetSnapshotError::SnapshotDoesNotExist
                .status(format!("snapshot '{}' does not exist", request.snapshot_id))
        })?;
        Ok(GetSnapshotResponse { snapshot: Some(snapshot.to_csi()) })
    }

    /// `ControllerExpandVolume`: online, never shrinks.
    ///
    /// # Errors
    ///
    /// See the spec's ControllerExpandVolume error table.
    pub fn controller_expand_volume(
        &self,
        request: ControllerExpandVolumeRequest,
    ) -> Result<ControllerExpandVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let free = self.config.total_capacity - state.used;
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            ControllerExpandVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        if let Some(capability) = &request.volume_capability
            && !compatible(&volume.capabilities, capability)
        {
            return Err(ControllerExpandVolumeError::ExceedsCapabilities.status(format!(
                "volume '{}' was not created with this volume_capability",
                volume.id
            )));
        }
        let target = expansion_target(request.capacity_range.as_ref(), self.config.max_volume_size)
            .map_err(|why| ControllerExpandVolumeError::UnsupportedCapacityRange.status(why))?;
        let grow = (target - volume.capacity).max(0);
        if grow > free {
            return Err(ControllerExpandVolumeError::UnsupportedCapacityRange
                .status(format!("the pool has {free} bytes free, {grow} more requested")));
        }
        volume.capacity += grow;
        let response = ControllerExpandVolumeResponse {
            capacity_bytes: volume.capacity,
            node_expansion_required: volume.capacity > volume.node_capacity
                && has_mount(&volume.capabilities),
        };
        state.used += grow;
        Ok(response)
    }

    // ---- Node ----

    /// `NodeStageVolume`: records the staging path.
    ///
    /// # Errors
    ///
    /// See the spec's NodeStageVolume error table.
    pub async fn node_stage_volume(
        &self,
        request: NodeStageVolumeRequest,
    ) -> Result<NodeStageVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        delay(&request.volume_context).await?;
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            NodeStageVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        let capability = request.volume_capability.unwrap_or_default();
        if !compatible(&volume.capabilities, &capability) {
            return Err(NodeStageVolumeError::ExceedsCapabilities.status(format!(
                "volume '{}' was not created with this volume_capability",
                volume.id
            )));
        }
        match volume.staged.get(&request.staging_target_path) {
            Some(existing) if *existing == capability => return Ok(NodeStageVolumeResponse {}),
            Some(_) => {
                return Err(NodeStageVolumeError::VolumePublishedIncompatible.status(format!(
                    "volume '{}' is staged at '{}' with another volume_capability",
                    volume.id, request.staging_target_path
                )));
            }
            None => {}
        }
        if let Some(other) = volume.staged.keys().next() {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is already staged on this node at '{other}'",
                volume.id
            )));
        }
        volume.staged.insert(request.staging_target_path, capability);
        Ok(NodeStageVolumeResponse {})
    }

    /// `NodeUnstageVolume`: a path that is not staged is unstaged already.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume, `FAILED_PRECONDITION` while a publication still uses
    /// the staging path.
    pub fn node_unstage_volume(
        &self,
        request: NodeUnstageVolumeRequest,
    ) -> Result<NodeUnstageVolumeResponse, Status> {
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            NodeUnstageVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        if let Some((target, _)) =
            volume.published.iter().find(|(_, p)| p.staging_path == request.staging_target_path)
        {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is still published at '{target}'",
                volume.id
            )));
        }
        volume.staged.remove(&request.staging_target_path);
        Ok(NodeUnstageVolumeResponse {})
    }

    /// `NodePublishVolume`: creates `target_path` (the spec makes that the plugin's job: a
    /// directory for mount access, a file for block access; nothing is mounted on it) and
    /// records the publication, following the spec's table for a second publication on the
    /// same node.
    ///
    /// # Errors
    ///
    /// See the spec's NodePublishVolume error table.
    pub async fn node_publish_volume(
        &self,
        request: NodePublishVolumeRequest,
    ) -> Result<NodePublishVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        delay(&request.volume_context).await?;
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            NodePublishVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        // STAGE_UNSTAGE_VOLUME is advertised, so publication goes through a staging path.
        if request.staging_target_path.is_empty() {
            return Err(NodePublishVolumeError::StagingTargetPathNotSet
                .status("staging_target_path is not set and this plugin stages volumes"));
        }
        if !volume.staged.contains_key(&request.staging_target_path) {
            return Err(NodePublishVolumeError::StagingTargetPathNotSet.status(format!(
                "volume '{}' is not staged at '{}'",
                volume.id, request.staging_target_path
            )));
        }
        let capability = request.volume_capability.unwrap_or_default();
        if !compatible(&volume.capabilities, &capability) {
            return Err(NodePublishVolumeError::ExceedsCapabilities.status(format!(
                "volume '{}' was not created with this volume_capability",
                volume.id
            )));
        }
        let publication = NodePublication {
            staging_path: request.staging_target_path,
            capability,
            readonly: request.readonly,
            context: request.volume_context,
            publish_context: request.publish_context,
        };
        if let Some(existing) = volume.published.get(&request.target_path) {
            if *existing == publication {
                return Ok(NodePublishVolumeResponse {});
            }
            return Err(NodePublishVolumeError::VolumePublishedIncompatible.status(format!(
                "volume '{}' is published at '{}' with other arguments",
                volume.id, request.target_path
            )));
        }
        if let Some(other) = volume.published.keys().next()
            && !multi_writer_on_node(&publication.capability)
        {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is already published at '{other}' and its access mode allows one",
                volume.id
            )));
        }
        let block = matches!(publication.capability.access_type, Some(AccessType::Block(_)));
        if !self.fault(Fault::NoTargetPath) {
            create_target(&request.target_path, block)?;
        }
        volume.published.insert(request.target_path, publication);
        Ok(NodePublishVolumeResponse {})
    }

    /// `NodeUnpublishVolume`: removes what NodePublishVolume created at `target_path`; a path
    /// that is not published is unpublished already.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume.
    pub fn node_unpublish_volume(
        &self,
        request: NodeUnpublishVolumeRequest,
    ) -> Result<NodeUnpublishVolumeResponse, Status> {
        let mut state = self.state();
        let volume = state.volumes.get_mut(&request.volume_id).ok_or_else(|| {
            NodeUnpublishVolumeError::VolumeDoesNotExist
                .status(format!("volume '{}' does not exist", request.volume_id))
        })?;
        if volume.published.remove(&request.target_path).is_some() {
            remove_target(&request.target_path)?;
        } else if self.fault(Fault::UnpublishNotIdempotent) {
            return Err(Status::not_found(format!("'{}' is not published", request.target_path)));
        }
        Ok(NodeUnpublishVolumeResponse {})
    }

    /// `NodeGetVolumeStats` for a staged or published path: nothing is ever written, so all of
    /// the volume is available.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume or a path where it is neither staged nor published.
    pub fn node_get_volume_stats(
        &self,
        request: NodeGetVolumeStatsRequest,
    ) -> Result<NodeGetVolumeStatsResponse, Status> {
        let state = self.state();
        let volume = state
            .volumes
            .get(&request.volume_id)
            .filter(|v| {
                self.fault(Fault::StatsAnyPath)
                    || v.staged.contains_key(&request.volume_path)
                    || v.published.contains_key(&request.volume_path)
            })
            .ok_or_else(|| {
                NodeGetVolumeStatsError::VolumeDoesNotExist.status(format!(
                    "volume '{}' does not exist at '{}'",
                    request.volume_id, request.volume_path
                ))
            })?;
        let bytes = VolumeUsage {
            available: volume.node_capacity,
            total: volume.node_capacity,
            used: 0,
            unit: volume_usage::Unit::Bytes as i32,
        };
        let mut usage = vec![bytes];
        if has_mount(&volume.capabilities) {
            // One inode per 16 KiB, as mkfs.ext4 would lay it out; only the root is used.
            let inodes = volume.node_capacity / (16 << 10);
            usage.push(VolumeUsage {
                available: inodes - 1,
                total: inodes,
                used: 1,
                unit: volume_usage::Unit::Inodes as i32,
            });
        }
        Ok(NodeGetVolumeStatsResponse { usage, volume_condition: None })
    }

    /// `NodeExpandVolume`: grows the node's view up to the controller's size.
    ///
    /// # Errors
    ///
    /// See the spec's NodeExpandVolume error table.
    pub fn node_expand_volume(
        &self,
        request: NodeExpandVolumeRequest,
    ) -> Result<NodeExpandVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let volume = state
            .volumes
            .get_mut(&request.volume_id)
            .filter(|v| {
                v.staged.contains_key(&request.volume_path)
                    || v.published.contains_key(&request.volume_path)
            })
            .ok_or_else(|| {
                NodeExpandVolumeError::VolumeDoesNotExist.status(format!(
                    "volume '{}' is neither staged nor published at '{}'",
                    request.volume_id, request.volume_path
                ))
            })?;
        if let Some(capability) = &request.volume_capability
            && !compatible(&volume.capabilities, capability)
        {
            return Err(NodeExpandVolumeError::ExceedsCapabilities.status(format!(
                "volume '{}' was not created with this volume_capability",
                volume.id
            )));
        }
        let target = expansion_target(request.capacity_range.as_ref(), volume.capacity)
            .map_err(|why| NodeExpandVolumeError::UnsupportedCapacityRange.status(why))?;
        // Without a range, or asked for less than the controller gave, grow to the controller's size.
        volume.node_capacity = volume.node_capacity.max(target).max(volume.capacity);
        Ok(NodeExpandVolumeResponse { capacity_bytes: volume.node_capacity })
    }

    /// `NodeGetInfo`.
    pub fn node_get_info(&self, _request: NodeGetInfoRequest) -> NodeGetInfoResponse {
        NodeGetInfoResponse {
            node_id: self.config.node_id.clone(),
            max_volumes_per_node: 0,
            accessible_topology: None,
        }
    }
}

impl State {
    fn new_id(&mut self, kind: &str) -> String {
        self.next_id += 1;
        // Zero-padded so id order is creation order, which paging relies on.
        format!("{kind}-{:010}", self.next_id)
    }

    /// The size of a content source, which a new volume may not undercut.
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
                    CreateVolumeError::SourceDoesNotExist
                        .status(format!("volume '{volume_id}' does not exist"))
                })
            }
            None => Err(CreateVolumeError::SourceIncompatibleOrNotSupported
                .status("volume_content_source names no snapshot or volume")),
        }
    }
}

impl Volume {
    fn to_csi(&self) -> csikit::v1::Volume {
        csikit::v1::Volume {
            capacity_bytes: self.capacity,
            volume_id: self.id.clone(),
            volume_context: self.context.clone(),
            content_source: self.source.clone(),
            accessible_topology: Vec::new(),
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
            group_snapshot_id: String::new(),
        }
    }
}

/// What makes a repeated `CreateVolume` differ from the volume its name already holds, if anything.
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

/// Creates a publication's `target_path`: a directory (mount access) or an empty file (block
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
        _ => Status::internal(format!("cannot create target_path '{path}': {e}")),
    })
}

/// Removes what [`create_target`] made at `path`; nothing there is fine.
fn remove_target(path: &str) -> Result<(), Status> {
    let target = std::path::Path::new(path);
    let removed = match std::fs::symlink_metadata(target) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir(target),
        Ok(_) => std::fs::remove_file(target),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| Status::internal(format!("cannot remove target_path '{path}': {e}")))
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

/// Compares secrets without an early exit, so timing does not reveal a matching prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use csikit::v1::volume_capability::{AccessMode, MountVolume};
    use tonic::Code;

    fn capability(mode: Mode) -> VolumeCapability {
        VolumeCapability {
            access_mode: Some(AccessMode { mode: mode as i32 }),
            access_type: Some(AccessType::Mount(MountVolume::default())),
        }
    }

    async fn create(driver: &Driver, name: &str, bytes: i64, mode: Mode) -> Result<String, Status> {
        let request = CreateVolumeRequest {
            name: name.to_owned(),
            capacity_range: Some(CapacityRange { required_bytes: bytes, limit_bytes: 0 }),
            volume_capabilities: vec![capability(mode)],
            ..Default::default()
        };
        Ok(driver.create_volume(request).await?.volume.unwrap_or_default().volume_id)
    }

    fn code<T: std::fmt::Debug>(result: Result<T, Status>) -> Code {
        result.map_or_else(|s| s.code(), |_| Code::Ok)
    }

    #[tokio::test]
    async fn paging_follows_tokens_past_deleted_entries_and_refuses_foreign_ones() {
        let driver = Driver::default();
        let mut ids = Vec::new();
        for i in 0..5 {
            ids.push(
                create(&driver, &format!("v{i}"), GIB, Mode::SingleNodeWriter)
                    .await
                    .expect("create"),
            );
        }
        let first = driver
            .list_volumes(ListVolumesRequest { max_entries: 2, starting_token: String::new() });
        let first = first.expect("page 1");
        assert_eq!(first.entries.len(), 2);
        // The entry the token names goes away; the token still leads on.
        driver
            .delete_volume(DeleteVolumeRequest {
                volume_id: first.next_token.clone(),
                ..Default::default()
            })
            .expect("delete");
        let rest = driver
            .list_volumes(ListVolumesRequest { max_entries: 0, starting_token: first.next_token });
        let rest: Vec<String> = rest
            .expect("rest")
            .entries
            .into_iter()
            .filter_map(|e| e.volume)
            .map(|v| v.volume_id)
            .collect();
        assert_eq!(rest, ids[2..]);
        for token in ["nonsense", "vol-1", "snap-0000000001", "vol-00000000x1"] {
            let listed = driver.list_volumes(ListVolumesRequest {
                max_entries: 1,
                starting_token: token.to_owned(),
            });
            assert_eq!(code(listed), Code::Aborted, "token {token}");
        }
    }

    #[tokio::test]
    async fn capacity_is_accounted_and_bounded() {
        let config =
            Config { total_capacity: 10 * GIB, max_volume_size: 6 * GIB, ..Config::default() };
        let driver = Driver::new(config);
        assert_eq!(
            code(create(&driver, "too-big", 7 * GIB, Mode::SingleNodeWriter).await),
            Code::OutOfRange
        );
        let a = create(&driver, "a", 6 * GIB, Mode::SingleNodeWriter).await.expect("a");
        assert_eq!(
            code(create(&driver, "b", 6 * GIB, Mode::SingleNodeWriter).await),
            Code::ResourceExhausted
        );
        let free = driver.get_capacity(GetCapacityRequest::default()).expect("capacity");
        assert_eq!((free.available_capacity, free.maximum_volume_size), (4 * GIB, Some(4 * GIB)));
        // Retrying with a range the volume satisfies is the same volume; one it does not is a conflict.
        assert_eq!(create(&driver, "a", 5 * GIB, Mode::SingleNodeWriter).await.expect("retry"), a);
        assert_eq!(
            code(create(&driver, "a", 6 * GIB, Mode::MultiNodeMultiWriter).await),
            Code::AlreadyExists
        );
        driver
            .delete_volume(DeleteVolumeRequest { volume_id: a, ..Default::default() })
            .expect("delete");
        assert_eq!(
            driver
                .get_capacity(GetCapacityRequest::default())
                .expect("capacity")
                .available_capacity,
            10 * GIB
        );
    }

    #[tokio::test]
    async fn publish_creates_the_target_path_and_unpublish_removes_it() {
        let driver = Driver::default();
        let dir = tempfile::tempdir().expect("temp dir");
        let id = create(&driver, "paths", GIB, Mode::SingleNodeWriter).await.expect("create");
        let stage = NodeStageVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: "/staging".into(),
            volume_capability: Some(capability(Mode::SingleNodeWriter)),
            ..Default::default()
        };
        driver.node_stage_volume(stage).await.expect("stage");
        let target = dir.path().join("mount");
        let publish = |target: &std::path::Path| NodePublishVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: "/staging".into(),
            target_path: target.to_str().expect("utf-8").to_owned(),
            volume_capability: Some(capability(Mode::SingleNodeWriter)),
            ..Default::default()
        };
        driver.node_publish_volume(publish(&target)).await.expect("publish");
        assert!(target.is_dir(), "a mount publication is a directory");
        driver.node_publish_volume(publish(&target)).await.expect("publish again: idempotent");
        let unpublish = NodeUnpublishVolumeRequest {
            volume_id: id.clone(),
            target_path: target.to_str().expect("utf-8").to_owned(),
        };
        driver.node_unpublish_volume(unpublish.clone()).expect("unpublish");
        assert!(!target.exists(), "unpublish removes it");
        driver.node_unpublish_volume(unpublish).expect("unpublish again: idempotent");
        let orphan = dir.path().join("no-parent/mount");
        assert_eq!(
            code(driver.node_publish_volume(publish(&orphan)).await),
            Code::FailedPrecondition
        );
        // Block access: a file.
        let block = dir.path().join("block");
        create_target(block.to_str().expect("utf-8"), true).expect("create");
        assert!(block.is_file());
        remove_target(block.to_str().expect("utf-8")).expect("remove");
        assert!(!block.exists());
    }

    #[tokio::test]
    async fn a_second_target_path_needs_a_multi_writer_mode() {
        let driver = Driver::default();
        for (mode, second) in [
            (Mode::SingleNodeWriter, Code::FailedPrecondition),
            (Mode::SingleNodeMultiWriter, Code::Ok),
            (Mode::MultiNodeReaderOnly, Code::Ok),
        ] {
            let id = create(&driver, &format!("{mode:?}"), GIB, mode).await.expect("create");
            let stage = NodeStageVolumeRequest {
                volume_id: id.clone(),
                staging_target_path: format!("/staging/{id}"),
                volume_capability: Some(capability(mode)),
                ..Default::default()
            };
            driver.node_stage_volume(stage).await.expect("stage");
            let publish = |target: &str| NodePublishVolumeRequest {
                volume_id: id.clone(),
                staging_target_path: format!("/staging/{id}"),
                target_path: target.to_owned(),
                volume_capability: Some(capability(mode)),
                ..Default::default()
            };
            let dir = tempfile::tempdir().expect("temp dir");
            let (t1, t2) = (dir.path().join("t1"), dir.path().join("t2"));
            let (t1, t2) = (t1.to_str().expect("utf-8"), t2.to_str().expect("utf-8"));
            driver.node_publish_volume(publish(t1)).await.expect("first publish");
            assert_eq!(code(driver.node_publish_volume(publish(t2)).await), second, "{mode:?}");
            let unstage = NodeUnstageVolumeRequest {
                volume_id: id.clone(),
                staging_target_path: format!("/staging/{id}"),
            };
            assert_eq!(
                code(driver.node_unstage_volume(unstage)),
                Code::FailedPrecondition,
                "unstage while published"
            );
        }
    }
}
