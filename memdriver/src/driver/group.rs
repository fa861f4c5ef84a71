//! The GroupController service's RPCs: a group snapshot is one snapshot per source volume, all
//! cut at the same instant (under the one state lock), each carrying the group's id; they are
//! deleted with the group, never alone.

use std::collections::BTreeSet;
use std::time::SystemTime;

use csikit::v1::errors::{
    CreateVolumeGroupSnapshotError, DeleteVolumeGroupSnapshotError, GetVolumeGroupSnapshotError,
};
use csikit::v1::{
    CreateVolumeGroupSnapshotRequest, CreateVolumeGroupSnapshotResponse,
    DeleteVolumeGroupSnapshotRequest, DeleteVolumeGroupSnapshotResponse,
    GetVolumeGroupSnapshotRequest, GetVolumeGroupSnapshotResponse, VolumeGroupSnapshot,
};
use tonic::Status;

use super::{Driver, Group, Snapshot, State};
use crate::fault::Fault;

impl Driver {
    /// `CreateVolumeGroupSnapshot`: a new group, or the one its name already holds when the
    /// source volumes and parameters are the same.
    ///
    /// # Errors
    ///
    /// `ALREADY_EXISTS` when the name holds a group of other volumes or parameters, `NOT_FOUND`
    /// for a source volume it does not hold.
    pub fn create_volume_group_snapshot(
        &self,
        request: CreateVolumeGroupSnapshotRequest,
    ) -> Result<CreateVolumeGroupSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let sources: BTreeSet<&String> = request.source_volume_ids.iter().collect();
        if let Some(existing) =
            state.group_names.get(&request.name).and_then(|id| state.groups.get(id))
        {
            if existing.sources.iter().collect::<BTreeSet<_>>() != sources
                || existing.parameters != request.parameters
            {
                return Err(CreateVolumeGroupSnapshotError::GroupSnapshotAlreadyExistsIncompatible
                    .status(format!(
                        "group snapshot '{}' already exists for other source_volume_ids or parameters",
                        request.name
                    )));
            }
            return Ok(CreateVolumeGroupSnapshotResponse {
                group_snapshot: Some(state.group_to_csi(existing)),
            });
        }
        let missing =
            sources.iter().find(|v| !state.volumes.contains_key(**v)).map(|m| (*m).clone());
        if let (Some(missing), false) = (&missing, self.fault(Fault::GroupKeepsPartial)) {
            return Err(Status::not_found(format!("source volume '{missing}' does not exist")));
        }
        let sources: Vec<&String> =
            sources.into_iter().filter(|v| state.volumes.contains_key(*v)).collect();
        let group_id = state.new_id("group");
        let created = SystemTime::now().into();
        let mut members = Vec::new();
        // The fault cuts what exists and keeps it under the name before it refuses.
        for volume in sources {
            let size = state.volumes.get(volume).map_or(0, |v| v.capacity);
            let id = state.new_id("snap");
            // Members have no name of their own: CreateSnapshot's names stay free.
            state.snapshots.insert(
                id.clone(),
                Snapshot {
                    id: id.clone(),
                    name: String::new(),
                    source_volume_id: volume.clone(),
                    size,
                    created,
                    parameters: request.parameters.clone(),
                    group: group_id.clone(),
                },
            );
            members.push(id);
        }
        let group = Group {
            id: group_id.clone(),
            sources: request.source_volume_ids,
            members,
            created,
            parameters: request.parameters,
        };
        let response =
            CreateVolumeGroupSnapshotResponse { group_snapshot: Some(state.group_to_csi(&group)) };
        state.group_names.insert(request.name, group_id.clone());
        state.groups.insert(group_id, group);
        if let Some(missing) = missing {
            return Err(Status::not_found(format!("source volume '{missing}' does not exist")));
        }
        Ok(response)
    }

    /// `DeleteVolumeGroupSnapshot`: the group and its snapshots gone, or never there.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` when `snapshot_ids` are not the group's.
    pub fn delete_volume_group_snapshot(
        &self,
        request: DeleteVolumeGroupSnapshotRequest,
    ) -> Result<DeleteVolumeGroupSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        let Some(group) = state.groups.get(&request.group_snapshot_id) else {
            return Ok(DeleteVolumeGroupSnapshotResponse {});
        };
        // The fault trusts the list: it deletes what snapshot_ids names, of the group or not.
        if self.fault(Fault::GroupDeleteTrustsList) {
            for id in &request.snapshot_ids {
                state.snapshots.remove(id);
            }
            state.groups.remove(&request.group_snapshot_id);
            state.group_names.retain(|_, id| *id != request.group_snapshot_id);
            return Ok(DeleteVolumeGroupSnapshotResponse {});
        }
        if !same_members(group, &request.snapshot_ids) {
            return Err(DeleteVolumeGroupSnapshotError::SnapshotListMismatch
                .status(mismatch(group, &request.snapshot_ids)));
        }
        if let Some(group) = state.groups.remove(&request.group_snapshot_id) {
            for id in &group.members {
                state.snapshots.remove(id);
            }
            state.group_names.retain(|_, id| *id != group.id);
        }
        Ok(DeleteVolumeGroupSnapshotResponse {})
    }

    /// `GetVolumeGroupSnapshot`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` for an unknown group, `INVALID_ARGUMENT` when `snapshot_ids` are not its.
    pub fn get_volume_group_snapshot(
        &self,
        request: GetVolumeGroupSnapshotRequest,
    ) -> Result<GetVolumeGroupSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let state = self.state();
        let group = state.groups.get(&request.group_snapshot_id).ok_or_else(|| {
            GetVolumeGroupSnapshotError::VolumeGroupSnapshotDoesNotExist
                .status(format!("group snapshot '{}' does not exist", request.group_snapshot_id))
        })?;
        if !same_members(group, &request.snapshot_ids) {
            return Err(GetVolumeGroupSnapshotError::SnapshotListMismatch
                .status(mismatch(group, &request.snapshot_ids)));
        }
        Ok(GetVolumeGroupSnapshotResponse { group_snapshot: Some(state.group_to_csi(group)) })
    }
}

fn same_members(group: &Group, ids: &[String]) -> bool {
    group.members.iter().collect::<BTreeSet<_>>() == ids.iter().collect::<BTreeSet<_>>()
}

fn mismatch(group: &Group, ids: &[String]) -> String {
    format!(
        "snapshot_ids {ids:?} are not the snapshots of group snapshot '{}' ({:?})",
        group.id, group.members
    )
}

impl State {
    fn group_to_csi(&self, group: &Group) -> VolumeGroupSnapshot {
        VolumeGroupSnapshot {
            group_snapshot_id: group.id.clone(),
            snapshots: group
                .members
                .iter()
                .filter_map(|id| self.snapshots.get(id))
                .map(Snapshot::to_csi)
                .collect(),
            creation_time: Some(group.created),
            ready_to_use: true,
        }
    }
}
