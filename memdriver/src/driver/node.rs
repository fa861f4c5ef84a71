//! The Node service's RPCs: stage, publish, stats, expansion and the node's identity.

use csikit::v1::errors::{
    NodeExpandVolumeError, NodePublishVolumeError, NodeStageVolumeError, NodeUnpublishVolumeError,
    NodeUnstageVolumeError,
};
use csikit::v1::volume_capability::AccessType;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::{
    NodeExpandVolumeRequest, NodeExpandVolumeResponse, NodeGetInfoRequest, NodeGetInfoResponse,
    NodeGetVolumeStatsRequest, NodeGetVolumeStatsResponse, NodePublishVolumeRequest,
    NodePublishVolumeResponse, NodeStageVolumeRequest, NodeStageVolumeResponse,
    NodeUnpublishVolumeRequest, NodeUnpublishVolumeResponse, NodeUnstageVolumeRequest,
    NodeUnstageVolumeResponse, VolumeUsage, volume_usage,
};
use csikit::v1_12::errors::NodeGetVolumeStatsError;
use tonic::Status;

use super::{
    Driver, NodePublication, compatible, create_target, delay, expansion_target, has_mount, mode,
    multi_writer_on_node, remove_target,
};
use crate::fault::Fault;

impl Driver {
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
        let volume = state.volume_mut(&request.volume_id, |m| {
            NodeStageVolumeError::VolumeDoesNotExist.status(m)
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
        // Kept for the fault alone: a correct driver keeps no record of paths it unstaged.
        if self.fault(Fault::UnstageFirstPath) {
            volume.first_staging.get_or_insert_with(|| request.staging_target_path.clone());
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
        let volume = state.volume_mut(&request.volume_id, |m| {
            NodeUnstageVolumeError::VolumeDoesNotExist.status(m)
        })?;
        if let Some((target, _)) =
            volume.published.iter().find(|(_, p)| p.staging_path == request.staging_target_path)
        {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is still published at '{target}'",
                volume.id
            )));
        }
        if self.fault(Fault::UnstageAnyPath) {
            volume.staged.clear();
        } else if self.fault(Fault::UnstageFirstPath) {
            // Staged where the request names: the record of the first staging path goes.
            if volume.staged.contains_key(&request.staging_target_path) {
                let first = volume.first_staging.clone().unwrap_or_default();
                volume.staged.remove(&first);
            }
        } else if !self.fault(Fault::UnstageKeepsPath) {
            volume.staged.remove(&request.staging_target_path);
        }
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
        let volume = state.volume_mut(&request.volume_id, |m| {
            NodePublishVolumeError::VolumeDoesNotExist.status(m)
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
        if self.fault(Fault::TargetKeepsReadonly)
            && volume
                .target_readonly
                .get(&request.target_path)
                .is_some_and(|r| *r != request.readonly)
        {
            return Err(NodePublishVolumeError::VolumePublishedIncompatible.status(format!(
                "volume '{}' was published at '{}' with the other readonly flag",
                volume.id, request.target_path
            )));
        }
        if let Some(other) = volume.published.keys().next()
            && !multi_writer_on_node(&publication.capability)
            && !(self.fault(Fault::SingleWriterTwice)
                && mode(&publication.capability) == Mode::SingleNodeSingleWriter)
        {
            return Err(Status::failed_precondition(format!(
                "volume '{}' is already published at '{other}' and its access mode allows one",
                volume.id
            )));
        }
        let block = matches!(publication.capability.access_type, Some(AccessType::Block(_)))
            && !self.fault(Fault::BlockTargetFolder);
        if !self.fault(Fault::NoTargetPath) {
            create_target(&request.target_path, block)?;
        }
        // Kept for the fault alone: a record per target ever published would only grow.
        if self.fault(Fault::TargetKeepsReadonly) {
            volume.target_readonly.insert(request.target_path.clone(), publication.readonly);
        }
        volume.published.insert(request.target_path, publication);
        volume.stats_dropped = false;
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
        if self.fault(Fault::UnpublishUnknownOk) && !state.volumes.contains_key(&request.volume_id)
        {
            return Ok(NodeUnpublishVolumeResponse {});
        }
        let volume = state.volume_mut(&request.volume_id, |m| {
            NodeUnpublishVolumeError::VolumeDoesNotExist.status(m)
        })?;
        // The fault keeps the record of the publication (so the staging stays in use) while the
        // target goes.
        let published = if self.fault(Fault::NodeUnpublishKeepsRecord) {
            volume.published.contains_key(&request.target_path)
        } else {
            volume.published.remove(&request.target_path).is_some()
        };
        if published {
            remove_target(&request.target_path)?;
            volume.stats_dropped =
                self.fault(Fault::StatsLostByOtherUnpublish) && !volume.published.is_empty();
        } else if self.fault(Fault::UnpublishAnyTarget) {
            // Unpublished "from the node": every publication of the volume goes.
            for (target, _) in std::mem::take(&mut volume.published) {
                remove_target(&target)?;
            }
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
        if self.fault(Fault::StatsUnknownVolume) && !state.volumes.contains_key(&request.volume_id)
        {
            let nothing =
                VolumeUsage { unit: volume_usage::Unit::Bytes as i32, ..VolumeUsage::default() };
            return Ok(NodeGetVolumeStatsResponse { usage: vec![nothing] });
        }
        let volume = state
            .volumes
            .get(&request.volume_id)
            .filter(|v| {
                self.fault(Fault::StatsAnyPath)
                    || v.staged.contains_key(&request.volume_path)
                    || (v.published.contains_key(&request.volume_path) && !v.stats_dropped)
            })
            .ok_or_else(|| {
                // v1.13.0's proto states no error table and NodeGetVolumeStats changed in it, so
                // csikit carries none: v1.12.0's row is the last the spec wrote.
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
        Ok(NodeGetVolumeStatsResponse { usage })
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
        // Under the fault the node trusts the request's size: never checked, and written.
        let max = if self.fault(Fault::NodeExpandShrinks) { i64::MAX } else { volume.capacity };
        let target = expansion_target(request.capacity_range.as_ref(), max)
            .map_err(|why| NodeExpandVolumeError::UnsupportedCapacityRange.status(why))?;
        if self.fault(Fault::NodeExpandShrinks) && target > 0 && target < volume.capacity {
            volume.capacity = target;
            volume.node_capacity = target;
            return Ok(NodeExpandVolumeResponse { capacity_bytes: target });
        }
        // Without a range, or asked for less than the controller gave, grow to the controller's size.
        volume.node_capacity = volume.node_capacity.max(target).max(volume.capacity);
        Ok(NodeExpandVolumeResponse { capacity_bytes: volume.node_capacity })
    }

    /// `NodeGetInfo`.
    pub fn node_get_info(&self, _request: NodeGetInfoRequest) -> NodeGetInfoResponse {
        NodeGetInfoResponse {
            node_id: self.config.node_id.clone(),
            max_volumes_per_node: self.config.max_volumes_per_node,
            accessible_topology: Some(self.config.topology()),
        }
    }
}
