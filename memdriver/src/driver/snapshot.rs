//! The Controller service's snapshot RPCs: create, delete, list and get.

use std::time::SystemTime;

use csikit::v1::errors::{DeleteSnapshotError, GetSnapshotError, ListSnapshotsError};
use csikit::v1::{
    CreateSnapshotRequest, CreateSnapshotResponse, DeleteSnapshotRequest, DeleteSnapshotResponse,
    GetSnapshotRequest, GetSnapshotResponse, ListSnapshotsRequest, ListSnapshotsResponse,
    list_snapshots_response,
};
use csikit::v1_12::errors::CreateSnapshotError;
use tonic::Status;

use super::{Driver, Snapshot, page};
use crate::fault::Fault;

/// `source` is snapshot `id`.
fn restored_from(source: Option<&csikit::v1::VolumeContentSource>, id: &str) -> bool {
    use csikit::v1::volume_content_source::Type;
    matches!(source.and_then(|s| s.r#type.as_ref()), Some(Type::Snapshot(x)) if x.snapshot_id == id)
}

impl Driver {
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
                // v1.13.0's proto states no error table and CreateSnapshot changed in it, so
                // csikit carries none: v1.12.0's row is the last the spec wrote.
                return Err(CreateSnapshotError::SnapshotAlreadyExistsIncompatible.status(
                    format!(
                        "snapshot '{}' already exists for another source_volume_id or parameters",
                        request.name
                    ),
                ));
            }
            let mut snapshot = existing.to_csi();
            if self.fault(Fault::SnapshotRetrySizeNow)
                && let Some(volume) = state.volumes.get(&existing.source_volume_id)
            {
                snapshot.size_bytes = volume.capacity;
            }
            // The fault: a snapshot a volume was restored from is answered as in use, not
            // ready (the answer rebuilt from a flag the restore sets and nothing clears).
            if self.fault(Fault::SnapshotRetryUnreadyAfterRestore)
                && state.volumes.values().any(|v| restored_from(v.source.as_ref(), &existing.id))
            {
                snapshot.ready_to_use = false;
            }
            return Ok(CreateSnapshotResponse { snapshot: Some(snapshot) });
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
            group: String::new(),
        };
        let response = CreateSnapshotResponse { snapshot: Some(snapshot.to_csi()) };
        state.snapshot_names.insert(request.name, id.clone());
        state.snapshots.insert(id, snapshot);
        Ok(response)
    }

    /// `DeleteSnapshot`: gone, or never there. Volumes made from it are copies, so it is never in
    /// use; a group snapshot's member goes with its group only.
    ///
    /// # Errors
    ///
    /// `INVALID_ARGUMENT` for a member of a group snapshot.
    pub fn delete_snapshot(
        &self,
        request: DeleteSnapshotRequest,
    ) -> Result<DeleteSnapshotResponse, Status> {
        self.authenticate(&request.secrets)?;
        let mut state = self.state();
        if let Some(group) = state.snapshots.get(&request.snapshot_id).map(|s| &s.group)
            && !group.is_empty()
            && !self.fault(Fault::MemberDeletedAlone)
        {
            return Err(DeleteSnapshotError::SnapshotPartOfGroup.status(format!(
                "snapshot '{}' is part of group snapshot '{group}': delete the group",
                request.snapshot_id
            )));
        }
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
        let mut state = self.state();
        // The fault: the pages from a token list the snapshots of when it was handed out.
        let stale = self.fault(Fault::ListSnapshotsTokenStale).then(|| {
            let then = state.list_snapshots.get(&request.starting_token);
            then.cloned().unwrap_or_else(|| state.snapshots.clone())
        });
        let snapshots = stale.as_ref().unwrap_or(&state.snapshots);
        // The fault: an id it does not hold is taken for no filter at all.
        let ignore_id = self.fault(Fault::ListSnapshotsUnknownIdAll)
            && !snapshots.contains_key(&request.snapshot_id);
        let wanted = |s: &Snapshot| {
            (request.snapshot_id.is_empty() || ignore_id || s.id == request.snapshot_id)
                && (request.source_volume_id.is_empty()
                    || s.source_volume_id == request.source_volume_id)
        };
        // The fault: of a source's snapshots, only the first is ever listed.
        let two_paths = self.fault(Fault::ListSnapshotsTwoPaths);
        let first_of_source = if (self.fault(Fault::ListSnapshotsFirstOfSource) || two_paths)
            && !request.source_volume_id.is_empty()
        {
            snapshots.values().find(|s| wanted(s)).map(|s| s.id.clone())
        } else {
            None
        };
        let wanted =
            |s: &Snapshot| wanted(s) && first_of_source.as_ref().is_none_or(|f| *f == s.id);
        let (page, next_token) =
            page(snapshots, "snap", &request.starting_token, request.max_entries, wanted).map_err(
                |()| {
                    ListSnapshotsError::InvalidStartingToken.status(format!(
                        "starting_token '{}' is not one this plugin issued",
                        request.starting_token
                    ))
                },
            )?;
        // The fault: every creation_time is the listing's.
        let now = self.fault(Fault::ListSnapshotsTimeNow).then(|| SystemTime::now().into());
        // The fault's second bug: an unfiltered page that has a next page leaves out its last
        // entry (the token already points past it).
        let unfiltered = request.snapshot_id.is_empty() && request.source_volume_id.is_empty();
        let mut page = page;
        if two_paths && unfiltered && !next_token.is_empty() && page.len() > 1 {
            page.pop();
        }
        let entries = page
            .into_iter()
            .map(|s| {
                let mut snapshot = s.to_csi();
                snapshot.creation_time = now.or(snapshot.creation_time);
                list_snapshots_response::Entry { snapshot: Some(snapshot) }
            })
            .collect();
        if let Some(then) = stale.filter(|_| !next_token.is_empty()) {
            state.list_snapshots.insert(next_token.clone(), then);
        }
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
        let snapshot = if self.fault(Fault::GetSnapshotOther) {
            state.snapshots.values().find(|s| s.id != request.snapshot_id).unwrap_or(snapshot)
        } else {
            snapshot
        };
        let mut snapshot = snapshot.to_csi();
        if self.fault(Fault::MemberGetNoGroupId) {
            snapshot.group_snapshot_id.clear();
        }
        Ok(GetSnapshotResponse { snapshot: Some(snapshot) })
    }
}
