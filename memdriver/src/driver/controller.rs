//! The Controller service's volume RPCs: create, delete, publish, validate, list, get, modify,
//! capacity and expansion.

use std::collections::{BTreeMap, HashMap};

use csikit::v1::errors::{
    ControllerExpandVolumeError, ControllerGetVolumeError, ControllerModifyVolumeError,
    ControllerPublishVolumeError, CreateVolumeError, DeleteVolumeError, ListVolumesError,
    ValidateVolumeCapabilitiesError,
};
use csikit::v1::{
    CapacityRange, ControllerExpandVolumeRequest, ControllerExpandVolumeResponse,
    ControllerGetVolumeRequest, ControllerGetVolumeResponse, ControllerModifyVolumeRequest,
    ControllerModifyVolumeResponse, ControllerPublishVolumeRequest,
    ControllerPublishVolumeResponse, ControllerUnpublishVolumeRequest,
    ControllerUnpublishVolumeResponse, CreateVolumeRequest, CreateVolumeResponse,
    DeleteVolumeRequest, DeleteVolumeResponse, GetCapacityRequest, GetCapacityResponse,
    ListVolumesRequest, ListVolumesResponse, ValidateVolumeCapabilitiesRequest,
    ValidateVolumeCapabilitiesResponse, controller_get_volume_response, list_volumes_response,
    validate_volume_capabilities_response,
};
use tonic::Status;

use super::{
    ControllerPublication, DELAY_KEY, Driver, Snapshot, TOPOLOGY_KEY, Volume, compatible,
    create_mismatch, delay, expansion_target, has_mount, multi_node, no_volume, page,
    publish_context, supported,
};
use crate::fault::Fault;
use csikit::v1::volume_content_source::Type as SourceType;

// One plain function per RPC, as the spec has one section per RPC: their openings (the secrets
// checked, the state locked, the volume looked up with the RPC's own NOT_FOUND row) are alike on
// purpose, so each reads alone against its section (duplicates pairs them).
impl Driver {
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
        let refused = self.refused_mutable(&request.mutable_parameters);
        if !refused.is_empty() {
            return Err(CreateVolumeError::InvalidOrUnsupportedFieldInRequest
                .status(self.mutable_refusal(&refused)));
        }
        // The health the volume will report is read from its parameters whenever it is asked
        // for; a value it cannot read is refused here, once.
        super::requested_condition(&request.parameters)
            .map_err(|why| CreateVolumeError::InvalidOrUnsupportedFieldInRequest.status(why))?;
        let mut state = self.state();
        if self.fault(Fault::ReuseNameAfterDelete)
            && let Some(stale) =
                state.volume_names.get(&request.name).and_then(|id| state.graveyard.get(id))
        {
            return Ok(CreateVolumeResponse { volume: Some(stale.to_csi()) });
        }
        // A retry is answered from what the name holds, even if its source has gone since.
        if let Some(existing) = state
            .volume_names
            .get(&request.name)
            .and_then(|id| state.volumes.get(id))
            .filter(|_| !self.fault(Fault::CreateNotIdempotent))
        {
            return match create_mismatch(existing, &request) {
                None if self.fault(Fault::CreateRetryNoSource) => {
                    let volume = csikit::v1::Volume { content_source: None, ..existing.to_csi() };
                    Ok(CreateVolumeResponse { volume: Some(volume) })
                }
                None => Ok(CreateVolumeResponse { volume: Some(existing.to_csi()) }),
                Some(_) if self.fault(Fault::NoAlreadyExists) => {
                    Ok(CreateVolumeResponse { volume: Some(existing.to_csi()) })
                }
                Some(what) => Err(CreateVolumeError::VolumeAlreadyExistsIncompatible.status(
                    format!("volume '{}' already exists with another {what}", request.name),
                )),
            };
        }
        // The volume a clone copies, and its record, for the faults that read it.
        let cloned = match request.volume_content_source.as_ref().and_then(|c| c.r#type.as_ref()) {
            Some(SourceType::Volume(v)) => state.volumes.get(&v.volume_id).map(|o| (v, o)),
            _ => None,
        };
        // The fault refuses to lengthen a copy-on-write chain: a clone of a clone or restore.
        if self.fault(Fault::CloneChainRefused)
            && let Some((v, _)) = cloned.filter(|(_, o)| o.source.is_some())
        {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is itself a copy: flatten it before cloning it",
                v.volume_id
            )));
        }
        // The fault fails every copy of a volume grown since it was made.
        if self.fault(Fault::CloneOfExpandedInternal)
            && let Some((v, _)) = cloned.filter(|(_, o)| o.capacity > o.created_capacity)
        {
            return Err(Status::internal(format!(
                "copying volume '{}': length does not match its record",
                v.volume_id
            )));
        }
        // The fault holds a group's snapshot to the group for restores as for deletes.
        if self.fault(Fault::MemberRestoreRefused)
            && let Some(SourceType::Snapshot(x)) =
                request.volume_content_source.as_ref().and_then(|c| c.r#type.as_ref())
            && state.snapshots.get(&x.snapshot_id).is_some_and(|s| !s.group.is_empty())
        {
            return Err(Status::failed_precondition(format!(
                "snapshot '{}' belongs to a group snapshot: restore the group",
                x.snapshot_id
            )));
        }
        let no_size = request.capacity_range.as_ref().is_none_or(|r| r.required_bytes == 0);
        let source_size = match &request.volume_content_source {
            Some(source) if no_size && self.fault(Fault::RestoreSizeOfOrigin) => {
                Some(state.origin_size(source)?)
            }
            Some(source) => match state.source_size(source) {
                Ok(size) => Some(size),
                Err(e)
                    if e.code() == tonic::Code::NotFound
                        && self.fault(Fault::MissingSourceEmpty) =>
                {
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        if !self.config.can_serve(request.accessibility_requirements.as_ref()) {
            return Err(CreateVolumeError::UnableToProvisionInAccessibleTopology.status(format!(
                "this plugin serves only {{{TOPOLOGY_KEY}: {}}}, which the requisite topologies do not name",
                self.config.node_id
            )));
        }
        let capacity = if self.fault(Fault::IgnoreCapacity) {
            1 << 20
        } else {
            // The fault checks a clone's limit against its source's size when the source was
            // created, not its size now (a size cached at creation).
            let source = request.volume_content_source.as_ref().and_then(|c| c.r#type.as_ref());
            let checked = match source {
                Some(SourceType::Volume(v)) if self.fault(Fault::CloneLimitOfCreatedSize) => {
                    state.volumes.get(&v.volume_id).map(|v| v.created_capacity)
                }
                _ => source_size,
            };
            let sized_by_range = self.fault(Fault::RetrySizedByRange)
                && source.is_some()
                && state.refused_names.contains(&request.name);
            match self.choose_capacity(request.capacity_range.as_ref(), source_size, checked) {
                // The fault remembers a name refused for its range, and sizes its next
                // request by the range alone, the source's size forgotten.
                _ if sized_by_range => {
                    let range = request.capacity_range.as_ref();
                    range.map_or(0, |r| {
                        if r.limit_bytes > 0 { r.limit_bytes } else { r.required_bytes }
                    })
                }
                Err(e) if self.fault(Fault::RetrySizedByRange) && source.is_some() => {
                    state.refused_names.insert(request.name.clone());
                    return Err(e);
                }
                chosen => chosen?,
            }
        };
        if capacity > self.config.total_capacity - state.used {
            // The spec's one RESOURCE_EXHAUSTED row for CreateVolume: the pool, memdriver's only
            // topology, has no room for the volume.
            return Err(CreateVolumeError::UnableToProvisionInAccessibleTopology.status(format!(
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
            first_staging: None,
            target_readonly: BTreeMap::new(),
            stats_dropped: false,
            node_capacity: capacity,
            created_capacity: capacity,
            publications: 0,
            topology: self.config.topology(),
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
        checked_size: Option<i64>,
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
        if limit > 0 && limit < checked_size.unwrap_or(0) {
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
        let in_use = !volume.published_nodes.is_empty()
            || !volume.staged.is_empty()
            || !volume.published.is_empty();
        if in_use && self.fault(Fault::DeleteInUseForgets) {
            let id = volume.id.clone();
            let capacity = volume.capacity;
            state.volumes.remove(&id);
            state.used -= capacity;
            return Err(DeleteVolumeError::VolumeInUse.status(format!("volume '{id}' is in use")));
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
        let removed = state.volumes.remove(&request.volume_id);
        state.used -= capacity;
        match removed {
            Some(v) if self.fault(Fault::ReuseNameAfterDelete) => {
                state.graveyard.insert(v.id.clone(), v);
            }
            _ => {
                state.volume_names.remove(&name);
            }
        }
        if self.fault(Fault::SnapshotDiesWithSource) {
            let gone: Vec<Snapshot> = state
                .snapshots
                .values()
                .filter(|s| s.source_volume_id == request.volume_id && s.group.is_empty())
                .cloned()
                .collect();
            for snap in gone {
                state.snapshots.remove(&snap.id);
                state.snapshot_names.remove(&snap.name);
            }
        }
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
        let volume = state.volume_mut(&request.volume_id, |m| {
            ControllerPublishVolumeError::VolumeDoesNotExist.status(m)
        })?;
        if request.node_id != self.config.node_id && !self.fault(Fault::PublishAnyNode) {
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
            if self.fault(Fault::RepublishIncompatibleOk) {
                return Ok(ControllerPublishVolumeResponse {
                    publish_context: publish_context(&volume.id),
                });
            }
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
        let limit = self.config.max_volumes_per_node;
        if limit > 0 {
            let attached = state
                .volumes
                .values()
                .filter(|v| v.published_nodes.contains_key(&request.node_id))
                .count();
            if attached as i64 >= limit {
                return Err(ControllerPublishVolumeError::MaxVolumesAttached.status(format!(
                    "node '{}' has {attached} volumes attached, its limit",
                    request.node_id
                )));
            }
        }
        let Some(volume) = state.volumes.get_mut(&request.volume_id) else {
            return Err(ControllerPublishVolumeError::InternalError
                .status("the volume went away under the state lock"));
        };
        // A retry publishes nothing new: only a new publication counts.
        if volume.published_nodes.insert(request.node_id, publication).is_none() {
            volume.publications += 1;
        }
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
        if self.fault(Fault::UnpublishKeepsNode) {
            return Ok(ControllerUnpublishVolumeResponse {});
        }
        if let Some(volume) = state.volumes.get_mut(&request.volume_id) {
            // The fault: from the third publication of a volume on (retries apart), an unpublish is
            // forgotten.
            if self.fault(Fault::ThirdUnpublishKeepsNode) && volume.publications >= 3 {
                return Ok(ControllerUnpublishVolumeResponse {});
            }
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
        let Some(volume) = state.volumes.get(&request.volume_id) else {
            if self.fault(Fault::ValidateUnknownVolume) {
                return Ok(confirmed(request));
            }
            return Err(ValidateVolumeCapabilitiesError::VolumeDoesNotExist
                .status(no_volume(&request.volume_id)));
        };
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
        } else if self.fault(Fault::ValidateUnconfirmedWhenPublished)
            && !volume.published_nodes.is_empty()
        {
            Some("the volume's publication does not take these capabilities".to_owned())
        } else {
            None
        };
        Ok(match refusal {
            Some(message) => ValidateVolumeCapabilitiesResponse { confirmed: None, message },
            None => confirmed(request),
        })
    }

    /// `ListVolumes`, in volume id order; `next_token` is the last id returned.
    ///
    /// # Errors
    ///
    /// `ABORTED` for a `starting_token` this plugin did not hand out.
    pub fn list_volumes(&self, request: ListVolumesRequest) -> Result<ListVolumesResponse, Status> {
        let mut state = self.state();
        let token = if self.fault(Fault::IgnoreToken) { "" } else { &request.starting_token };
        let listed = if self.fault(Fault::ListShiftsUnderCreation) {
            offset_page(&state.volumes, token, request.max_entries)
        } else {
            page(&state.volumes, "vol", token, request.max_entries, |_| true)
        };
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
        // The fault: the pages from a token report the sizes of when it was handed out.
        let stale = self.fault(Fault::ListTokenStaleSizes);
        let sizes = state.list_sizes.get(&request.starting_token).filter(|_| stale);
        let entries = page
            .into_iter()
            .map(|v| {
                let mut volume = state.read(v, self.config.fault);
                if let Some(size) = sizes.and_then(|s| s.get(&v.id)) {
                    volume.capacity_bytes = *size;
                }
                list_volumes_response::Entry {
                    volume: Some(volume),
                    status: Some(list_volumes_response::VolumeStatus {
                        published_node_ids: v.published_nodes.keys().cloned().collect(),
                    }),
                }
            })
            .collect();
        if stale && !next_token.is_empty() {
            let then = match sizes {
                Some(s) => s.clone(),
                None => state.volumes.values().map(|v| (v.id.clone(), v.capacity)).collect(),
            };
            state.list_sizes.insert(next_token.clone(), then);
        }
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
            ControllerGetVolumeError::VolumeDoesNotExist.status(no_volume(&request.volume_id))
        })?;
        Ok(ControllerGetVolumeResponse {
            volume: Some(state.read(volume, self.config.fault)),
            status: Some(controller_get_volume_response::VolumeStatus {
                published_node_ids: volume.published_nodes.keys().cloned().collect(),
            }),
        })
    }

    /// `ControllerModifyVolume`: replaces the mutable parameters.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown volume; `INVALID_ARGUMENT` ("Parameters not supported") for a
    /// mutable parameter name not in [`Config::mutable_parameters`](super::Config), with nothing
    /// applied.
    pub fn controller_modify_volume(
        &self,
        request: ControllerModifyVolumeRequest,
    ) -> Result<ControllerModifyVolumeResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let volume = state.volume_mut(&request.volume_id, |m| {
            ControllerModifyVolumeError::VolumeDoesNotExist.status(m)
        })?;
        if request.mutable_parameters.contains_key(DELAY_KEY) {
            return Err(ControllerModifyVolumeError::ParametersNotSupported
                .status(format!("'{DELAY_KEY}' can only be set at creation")));
        }
        // Refused as a whole: nothing of this call is applied.
        let refused = self.refused_mutable(&request.mutable_parameters);
        if !refused.is_empty() {
            if self.fault(Fault::ModifyRefusedApplies) {
                let taken = request
                    .mutable_parameters
                    .into_iter()
                    .filter(|(k, _)| self.config.mutable_parameters.iter().any(|a| a == k));
                volume.mutable_parameters.extend(taken);
            }
            return Err(ControllerModifyVolumeError::ParametersNotSupported
                .status(self.mutable_refusal(&refused)));
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
        let volume = state.volume_mut(&request.volume_id, |m| {
            ControllerExpandVolumeError::VolumeDoesNotExist.status(m)
        })?;
        if let Some(capability) = &request.volume_capability
            && !compatible(&volume.capabilities, capability)
        {
            return Err(ControllerExpandVolumeError::ExceedsCapabilities.status(format!(
                "volume '{}' was not created with this volume_capability",
                volume.id
            )));
        }
        if self.fault(Fault::ExpandPastSaves) {
            let asked = request.capacity_range.as_ref().map_or(0, |r| r.required_bytes);
            if asked > volume.capacity
                && (asked > self.config.max_volume_size || asked - volume.capacity > free)
            {
                volume.capacity = asked;
                return Err(ControllerExpandVolumeError::UnsupportedCapacityRange
                    .status(format!("{asked} bytes is more than this plugin can give")));
            }
        }
        let target = expansion_target(request.capacity_range.as_ref(), self.config.max_volume_size)
            .map_err(|why| ControllerExpandVolumeError::UnsupportedCapacityRange.status(why))?;
        // No expansion shrinks: a limit below what the volume has cannot be met.
        let limit = request.capacity_range.as_ref().map_or(0, |r| r.limit_bytes);
        if limit > 0 && volume.capacity > limit {
            return Err(ControllerExpandVolumeError::UnsupportedCapacityRange.status(format!(
                "the volume is {} bytes already, above limit_bytes {limit}",
                volume.capacity
            )));
        }
        let rounds = self.fault(Fault::ExpandRoundsPastLimit)
            && volume.capacity != volume.created_capacity
            && target > volume.capacity;
        let extent = 4 << 20;
        let size = if rounds { (target + extent - 1) / extent * extent } else { target };
        let grow = (size - volume.capacity).max(0);
        if grow > free {
            return Err(ControllerExpandVolumeError::UnsupportedCapacityRange
                .status(format!("the pool has {free} bytes free, {grow} more requested")));
        }
        volume.capacity += grow;
        let response = ControllerExpandVolumeResponse {
            capacity_bytes: if rounds { target } else { volume.capacity },
            node_expansion_required: volume.capacity > volume.node_capacity
                && has_mount(&volume.capabilities),
        };
        state.used += grow;
        Ok(response)
    }
}

/// A `ValidateVolumeCapabilities` answer confirming all that `request` asks.
fn confirmed(request: ValidateVolumeCapabilitiesRequest) -> ValidateVolumeCapabilitiesResponse {
    ValidateVolumeCapabilitiesResponse {
        confirmed: Some(validate_volume_capabilities_response::Confirmed {
            volume_context: request.volume_context,
            volume_capabilities: request.volume_capabilities,
            parameters: request.parameters,
            mutable_parameters: request.mutable_parameters,
        }),
        message: String::new(),
    }
}

/// [`Fault::ListShiftsUnderCreation`]'s paging: newest first, the token an offset, so a volume
/// created between two pages shifts every later entry by one.
fn offset_page<'a, T>(
    map: &'a BTreeMap<String, T>,
    token: &str,
    max_entries: i32,
) -> Result<(Vec<&'a T>, String), ()> {
    let offset: usize = if token.is_empty() {
        0
    } else {
        token.strip_prefix("offset-").and_then(|n| n.parse().ok()).ok_or(())?
    };
    let limit = usize::try_from(max_entries).ok().filter(|&n| n > 0).unwrap_or(usize::MAX);
    let page: Vec<&T> = map.values().rev().skip(offset).take(limit).collect();
    let next = offset + page.len();
    let next_token = if next < map.len() { format!("offset-{next}") } else { String::new() };
    Ok((page, next_token))
}
