//! The invariants the explorer holds a plugin to across calls, each with the spec sentence it
//! rests on (quoted as `normative` reads it, so the audit's tests find it), and the error-table
//! rows it expects after a history (an id deleted, a publication made): a finding is always one
//! of these, named by its stable id.

use crate::sentence::Sentence;

/// One invariant, or an error-table row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Rule {
    CreateRetrySame,
    VolumeIdUnique,
    VolumeIdFound,
    VolumeDeletedGone,
    DeleteIdempotent,
    DeleteRefusedUnaltered,
    VolumesListed,
    VolumesPaged,
    CapacityAtLeast,
    CapacityAtMost,
    PublishRetrySame,
    UnpublishedGone,
    UnpublishedAllGone,
    UnpublishNotAttached,
    SnapshotRetrySame,
    SnapshotIdUnique,
    SnapshotIdFound,
    SnapshotOfDeleted,
    SnapshotDeletedGone,
    DeleteSnapshotIdempotent,
    SnapshotsListed,
    SnapshotsPaged,
    SnapshotsCurrent,
    SnapshotOutlivesSource,
    StageRetrySame,
    UnstageNotStaged,
    UnstageUndoes,
    NodePublishRetrySame,
    NodeUnpublishUndoes,
    NodeUnpublishIdempotent,
    InUseAfterUndo,
    TargetPlaced,
    TargetRemoved,
    OtherTargetsKept,
    SecondTarget,
    ExpandSmaller,
    RestoreAtLeastSnapshot,
    ExpandIdempotent,
    ModifyIdempotent,
    NodeExpandIdempotent,
    ExpandFlagSame,
    ValidateIdempotent,
    GroupRetrySame,
    GroupIdUnique,
    GroupOfDeleted,
    GroupIdFound,
    DeleteGroupIdempotent,
    RefusedKept,
    ForeignPathKept,
    ExpandRefusedKept,
    ExpandRefusedRangeKept,
    NodeExpandSmaller,
    CapacityMaxSize,
    CapacityMinSize,
    VolumeDescribedSame,
    SnapshotDescribedSame,
    SnapshotGroupCarried,
    SnapshotReadyKept,
    RestoreReadyRefused,
    CloneSupported,
    RestoreSupported,
    GroupDeleteNamedKept,
    RefusalLasts,
    RefusedNoTrace,
    RefusalTransientRepeated,
    ReadonlyPublished,
    BlockPlaced,
    SourceData,
    TargetData,
    ModifyRefusedKept,
    /// A row of an RPC's error table: the RPC and the row's condition, as the Model words it.
    Row(&'static str, &'static str),
}

/// Conditions of the rows the explorer expects, as the Model words them.
pub(crate) const NOT_EXIST: &str = "Volume does not exist";
pub(crate) const SNAP_NOT_EXIST: &str = "Snapshot does not exist";
pub(crate) const SOURCE_NOT_EXIST: &str = "Source does not exist";
pub(crate) const VOLUME_INCOMPATIBLE: &str = "Volume already exists but is incompatible";
pub(crate) const SNAPSHOT_INCOMPATIBLE: &str = "Snapshot already exists but is incompatible";
pub(crate) const PUBLISHED_INCOMPATIBLE: &str = "Volume published but is incompatible";
pub(crate) const NODE_NOT_EXIST: &str = "Node does not exist";
pub(crate) const GROUP_INCOMPATIBLE: &str = "Group snapshot already exists but is incompatible";
pub(crate) const GROUP_NOT_EXIST: &str = "Volume group snapshot does not exist";
pub(crate) const IN_GROUP: &str = "Snapshot is part of a group";

/// Each invariant (the rows apart): its stable id and the sentence it rests on, quoted as
/// `normative` reads it. One line a rule: a table, not code.
#[rustfmt::skip]
const INVARIANTS: &[(Rule, &str, Sentence)] = &[
    (Rule::CreateRetrySame, "create-retry-same", Sentence::must("CreateVolume", "If a volume corresponding to the specified volume `name` already exists, is accessible from `accessibility_requirements`, and is compatible with the specified `capacity_range`, `volume_capabilities`, `parameters` and `mutable_parameters` in the `CreateVolumeRequest`, the Plugin MUST reply `0 OK` with the corresponding `CreateVolumeResponse`.")),
    (Rule::VolumeIdUnique, "volume-id-unique", Sentence::must("Volume.volume_id", "This field MUST contain enough information to uniquely identify this specific volume vs all other volumes supported by this plugin.")),
    (Rule::VolumeIdFound, "volume-id-found", Sentence::must("Volume.volume_id", "This field MUST contain enough information to uniquely identify this specific volume vs all other volumes supported by this plugin.")),
    (Rule::VolumeDeletedGone, "volume-deleted-gone", Sentence::must("DeleteVolume Errors", "If the plugin is unable to complete the DeleteVolume call successfully, it MUST return a non-ok gRPC code in the gRPC status.")),
    (Rule::DeleteIdempotent, "delete-idempotent", Sentence::must("DeleteVolume", "If a volume corresponding to the specified `volume_id` does not exist or the artifacts associated with the volume do not exist anymore, the Plugin MUST reply `0 OK`.")),
    (Rule::DeleteRefusedUnaltered, "delete-refused-unaltered", Sentence::must("DeleteVolume", "When a Controller Plugin does not support deleting a volume without affecting its existing snapshots, then the volume MUST NOT be altered in any way by the request and the operation must return the `FAILED_PRECONDITION` error code and MAY include meaningful human-readable information in the `status.message` field.")),
    (Rule::VolumesListed, "volumes-listed", Sentence::must("ListVolumes", "The Plugin SHALL return the information about all the volumes that it knows about.")),
    (Rule::VolumesPaged, "volumes-paged", Sentence::must("ListVolumesRequest.max_entries", "If the actual number of entries is more than this number, the Plugin MUST set `next_token` in the response which can be used to get the next page of entries in the subsequent `ListVolumes` call.")),
    (Rule::CapacityAtLeast, "capacity-at-least", Sentence::must("CapacityRange.required_bytes", "Volume MUST be at least this big.")),
    (Rule::CapacityAtMost, "capacity-at-most", Sentence::must("CapacityRange.limit_bytes", "Volume MUST not be bigger than this.")),
    (Rule::PublishRetrySame, "publish-retry-same", Sentence::must("ControllerPublishVolume", "If the volume corresponding to the `volume_id` has already been published at the node corresponding to the `node_id`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.")),
    (Rule::UnpublishedGone, "unpublished-gone", Sentence::must("ControllerUnpublishVolumeRequest.node_id", "If the value is set, the SP MUST unpublish the volume from the specified node.")),
    (Rule::UnpublishedAllGone, "unpublished-all-gone", Sentence::must("ControllerUnpublishVolumeRequest.node_id", "If the value is unset, the SP MUST unpublish the volume from all nodes it is published to.")),
    (Rule::UnpublishNotAttached, "unpublish-not-attached", Sentence::must("ControllerUnpublishVolume", "If the volume corresponding to the `volume_id` is not attached to the node corresponding to the `node_id`, the Plugin MUST reply `0 OK`.")),
    (Rule::SnapshotRetrySame, "snapshot-retry-same", Sentence::must("CreateSnapshot", "If a snapshot corresponding to the specified snapshot `name` is successfully cut and ready to use (meaning it MAY be specified as a `volume_content_source` in a `CreateVolumeRequest`), the Plugin MUST reply `0 OK` with the corresponding `CreateSnapshotResponse`.")),
    (Rule::SnapshotIdUnique, "snapshot-id-unique", Sentence::must("Snapshot.snapshot_id", "This field MUST contain enough information to uniquely identify this specific snapshot vs all other snapshots supported by this plugin.")),
    (Rule::SnapshotIdFound, "snapshot-id-found", Sentence::must("Snapshot.snapshot_id", "This field MUST contain enough information to uniquely identify this specific snapshot vs all other snapshots supported by this plugin.")),
    (Rule::SnapshotOfDeleted, "snapshot-of-deleted", Sentence::must("CreateSnapshot Errors", "If the plugin is unable to complete the CreateSnapshot call successfully, it MUST return a non-ok gRPC code in the gRPC status.")),
    (Rule::SnapshotDeletedGone, "snapshot-deleted-gone", Sentence::must("DeleteSnapshot Errors", "If the plugin is unable to complete the DeleteSnapshot call successfully, it MUST return a non-ok gRPC code in the gRPC status.")),
    (Rule::DeleteSnapshotIdempotent, "delete-snapshot-idempotent", Sentence::must("DeleteSnapshot", "If a snapshot corresponding to the specified `snapshot_id` does not exist or the artifacts associated with the snapshot do not exist anymore, the Plugin MUST reply `0 OK`.")),
    (Rule::SnapshotsListed, "snapshots-listed", Sentence::must("ListSnapshots", "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created.")),
    (Rule::SnapshotsPaged, "snapshots-paged", Sentence::must("ListSnapshotsRequest.max_entries", "If the actual number of entries is more than this number, the Plugin MUST set `next_token` in the response which can be used to get the next page of entries in the subsequent `ListSnapshots` call.")),
    (Rule::SnapshotsCurrent, "snapshots-current", Sentence::must("CreateSnapshot, DeleteSnapshot, ListSnapshots", "ListSnapshots SHALL return with current information regarding the snapshots on the storage system.")),
    (Rule::SnapshotOutlivesSource, "snapshot-outlives-source", Sentence::must("DeleteVolume", "If the Controller Plugin supports deleting a volume without affecting its existing snapshots, then these snapshots MUST still be fully operational and acceptable as sources for new volumes as well as appear on `ListSnapshot` calls once the volume has been deleted.")),
    (Rule::StageRetrySame, "stage-retry-same", Sentence::must("NodeStageVolume", "If the volume corresponding to the `volume_id` is already staged to the `staging_target_path`, and is identical to the specified `volume_capability` the Plugin MUST reply `0 OK`.")),
    (Rule::UnstageNotStaged, "unstage-not-staged", Sentence::must("NodeUnstageVolume", "If the volume corresponding to the `volume_id` is not staged to the `staging_target_path`, the Plugin MUST reply `0 OK`.")),
    (Rule::UnstageUndoes, "unstage-undoes", Sentence::must("NodeUnstageVolume", "This RPC MUST undo the work by the corresponding `NodeStageVolume`.")),
    (Rule::NodePublishRetrySame, "node-publish-retry-same", Sentence::must("NodePublishVolume", "If the volume corresponding to the `volume_id` has already been published at the specified `target_path`, and is compatible with the specified `volume_capability` and `readonly` flag, the Plugin MUST reply `0 OK`.")),
    (Rule::NodeUnpublishUndoes, "node-unpublish-undoes", Sentence::must("NodeUnpublishVolume", "This RPC MUST undo the work by the corresponding `NodePublishVolume`.")),
    (Rule::NodeUnpublishIdempotent, "node-unpublish-idempotent", Sentence::must("NodeUnpublishVolume", "This operation MUST be idempotent.")),
    (Rule::InUseAfterUndo, "in-use-after-undo", Sentence::must("NodeUnpublishVolume / NodeUnstageVolume / ControllerUnpublishVolumeRequest.node_id", "This RPC MUST undo the work by the corresponding `NodePublishVolume`. / This RPC MUST undo the work by the corresponding `NodeStageVolume`. / If the value is set, the SP MUST unpublish the volume from the specified node. / If the value is unset, the SP MUST unpublish the volume from all nodes it is published to.")),
    (Rule::TargetPlaced, "target-placed", Sentence::must("NodePublishVolumeRequest.target_path", "For volumes with an access type of mount, the SP SHALL place the mounted directory at target_path.")),
    // Seen in the mount table where the target is a mount point (a plugin that makes folders
    // mounts nothing to look at), at the publish and after every later call while published.
    (Rule::ReadonlyPublished, "readonly-published", Sentence::must("NodePublishVolumeRequest.readonly", "Indicates SP MUST publish the volume in readonly mode.")),
    // A folder is never a block device, nor is a mount point that is not one; a plain file
    // (a plugin that mounts nothing) is not judged.
    (Rule::BlockPlaced, "block-placed", Sentence::must("NodePublishVolumeRequest.target_path", "For volumes with an access type of block, the SP SHALL place the block device at target_path.")),
    // The workload's marks (`model/marks`), read where the target is a mount point: a volume
    // made from a source holds what the source held when the call was made; each of a group's
    // snapshots what its volume held then.
    (Rule::SourceData, "source-data", Sentence::must("CreateVolume / CreateVolumeGroupSnapshot", "If CO requests a volume to be created from existing snapshot or volume and the requested size of the volume is larger than the original snapshotted (or cloned volume), the Plugin can either refuse such a call with `OUT_OF_RANGE` error or MUST provide a volume that, when presented to a workload by `NodePublish` call, has both the requested (larger) size and contains data from the snapshot (or original volume). / That is to say, all the of the volume snapshots in the group MUST be taken at the same point-in-time relative to a stream of write traffic to the specified volumes.")),
    // The mounted directory is the volume's: it holds the last mark written into the volume.
    (Rule::TargetData, "target-data", Sentence::must("NodePublishVolumeRequest.target_path", "For volumes with an access type of mount, the SP SHALL place the mounted directory at target_path.")),
    (Rule::TargetRemoved, "target-removed", Sentence::must("NodeUnpublishVolumeRequest.target_path", "The SP MUST delete the file or directory it created at this path.")),
    // The corresponding one only: a volume published at other target paths stays published
    // there, their mounted directories in place.
    (Rule::OtherTargetsKept, "other-targets-kept", Sentence::must("NodeUnpublishVolume", "This RPC MUST undo the work by the corresponding `NodePublishVolume`.")),
    (Rule::SecondTarget, "second-target", Sentence::should("NodePublishVolume", "The following table shows what the Plugin SHOULD return when receiving a second `NodePublishVolume` on the same volume on the same node: / (the table's row Non MULTI_NODE_..., where SINGLE_NODE_WRITER stands, columns T1!=T2: FAILED_PRECONDITION)")),
    (Rule::ExpandSmaller, "expand-smaller", Sentence::should("ControllerExpandVolume", "If a volume corresponding to the specified volume ID is already larger than or equal to the target capacity of the expansion request, the plugin SHOULD reply 0 OK.")),
    (Rule::RestoreAtLeastSnapshot, "restore-at-least-snapshot", Sentence::must("Snapshot.size_bytes", "The size of the volume MUST NOT be less than the size of the source snapshot.")),
    (Rule::ExpandIdempotent, "expand-idempotent", Sentence::must("ControllerExpandVolume", "This operation MUST be idempotent.")),
    (Rule::ModifyIdempotent, "modify-idempotent", Sentence::must("ControllerModifyVolume", "This operation MUST be idempotent.")),
    (Rule::NodeExpandIdempotent, "node-expand-idempotent", Sentence::must("NodeExpandVolume", "This operation MUST be idempotent.")),
    // A note, not a failure: "idempotent" binds what the call does to the volume, and
    // node_expansion_required is the plugin's word on what the node still has to do, which
    // the spec does not fix across calls; a flag that changes with nothing done on the node
    // in between still leaves a CO unsure whether to call NodeExpandVolume.
    (Rule::ExpandFlagSame, "expand-flag-same", Sentence::should("ControllerExpandVolume", "This operation MUST be idempotent. / (node_expansion_required of the same expansion again, no NodeExpandVolume in between: a note, as the flag is the plugin's word on the node's work, not the volume's state)")),
    (Rule::ValidateIdempotent, "validate-idempotent", Sentence::must("ValidateVolumeCapabilities", "This operation MUST be idempotent.")),
    (Rule::GroupRetrySame, "group-retry-same", Sentence::must("CreateVolumeGroupSnapshot", "If a group snapshot corresponding to the specified group snapshot `name`, `source_volume_ids`, and `parameters` is successfully created (meaning all snapshots associated with the group are successfully cut), the Plugin MUST reply `0 OK` with the corresponding `CreateVolumeGroupSnapshotResponse`.")),
    (Rule::GroupIdUnique, "group-id-unique", Sentence::must("VolumeGroupSnapshot.group_snapshot_id", "This field MUST contain enough information to uniquely identify this specific snapshot vs all other group snapshots supported by this plugin.")),
    // A group of a live volume and a deleted one cannot be cut: any OK, first call or retry.
    (Rule::GroupOfDeleted, "group-of-deleted", Sentence::must("CreateVolumeGroupSnapshot Errors", "If the plugin is unable to complete the CreateVolumeGroupSnapshot call successfully, it MUST return a non-ok gRPC code in the gRPC status.")),
    (Rule::GroupIdFound, "group-id-found", Sentence::must("VolumeGroupSnapshot.group_snapshot_id", "This field MUST contain enough information to uniquely identify this specific snapshot vs all other group snapshots supported by this plugin.")),
    (Rule::DeleteGroupIdempotent, "delete-group-idempotent", Sentence::must("DeleteVolumeGroupSnapshot", "If a group snapshot corresponding to the specified `group_snapshot_id` does not exist or the artifacts associated with the group snapshot do not exist anymore, the Plugin MUST reply `0 OK`.")),
    // A call out of the lifecycle's order refused (DeleteVolume, ControllerUnpublishVolume,
    // NodeUnstageVolume while the volume is in use; DeleteVolume's row "Volume in use" says it
    // "could not be deleted"): the volume stays as it was, its id naming it.
    (Rule::RefusedKept, "refused-kept", Sentence::must("Volume.volume_id", "This field MUST contain enough information to uniquely identify this specific volume vs all other volumes supported by this plugin.")),
    // The corresponding one only: a call of one volume at another volume's path (or at a path
    // where it is not) undoes nothing of what stands elsewhere.
    (Rule::ForeignPathKept, "foreign-path-kept", Sentence::must("NodeUnstageVolume / NodeUnpublishVolume", "This RPC MUST undo the work by the corresponding `NodeStageVolume`. / This RPC MUST undo the work by the corresponding `NodePublishVolume`.")),
    (Rule::ExpandRefusedKept, "expand-refused-kept", Sentence::must("ControllerExpandVolume Errors", "Volume in use | 9 FAILED_PRECONDITION | Indicates that the volume corresponding to the specified `volume_id` could not be expanded because it is currently published on a node but the plugin does not have ONLINE expansion capability.")),
    // Refused OUT_OF_RANGE: the range asked "is not allowed by the Plugin", so no read shows
    // the volume grown into it (FAILED_PRECONDITION, "could not be expanded", in any use, is
    // `expand-refused-kept`). Other codes (INTERNAL, a timeout) may come after the work was
    // done: the size is then unknown until read.
    (Rule::ExpandRefusedRangeKept, "expand-refused-range-kept", Sentence::must("ControllerExpandVolume Errors", "Unsupported `capacity_range` | 11 OUT_OF_RANGE | Indicates that the capacity range is not allowed by the Plugin. More human-readable information MAY be provided in the gRPC `status.message` field.")),
    // A note: NodeExpandVolume asked for a size the node's file system already has (made at
    // the size CreateVolume answered, or grown by a NodeExpandVolume answered OK) refused.
    (Rule::NodeExpandSmaller, "node-expand-smaller", Sentence::should("NodeExpandVolume", "If a volume corresponding to the specified volume ID is already larger than or equal to the target capacity of the expansion request, the plugin SHOULD reply 0 OK.")),
    // A read of the volume's id that answers another content_source (or one for a volume made
    // empty) describes another volume under that id: "If specified, indicates that the volume
    // is not empty and is pre-populated with data from the specified source".
    (Rule::VolumeDescribedSame, "volume-described-same", Sentence::must("Volume.volume_id", "This field MUST contain enough information to uniquely identify this specific volume vs all other volumes supported by this plugin.")),
    // A read of the snapshot's id (GetSnapshot, a group's snapshots) that answers another
    // source_volume_id or creation_time, facts of the moment it was cut, describes another
    // snapshot under that id. ListSnapshots is held to its own sentence, `snapshots-current`.
    (Rule::SnapshotDescribedSame, "snapshot-described-same", Sentence::must("Snapshot.snapshot_id", "This field MUST contain enough information to uniquely identify this specific snapshot vs all other snapshots supported by this plugin.")),
    // Its group's answer set group_snapshot_id (so it CAN NOT be deleted alone): every later
    // description of it, while the group stands, carries the same id.
    (Rule::SnapshotGroupCarried, "snapshot-group-carried", Sentence::must("Snapshot.group_snapshot_id", "If this snapshot is a member of a volume group snapshot, and it MUST NOT be deleted as a stand alone snapshot, then the SP MUST provide the ID of the volume group snapshot in this field.")),
    // A note: no sentence forbids ready_to_use going back to false, but a CO that saw it ready
    // may have used it as a source already.
    // In CreateSnapshot's retry it is a MUST, `snapshot-retry-same`: a snapshot described ready
    // is "successfully cut and ready to use", and the retry's answer "the corresponding
    // CreateSnapshotResponse" (its ready_to_use "Indicates if a snapshot is ready to use").
    (Rule::SnapshotReadyKept, "snapshot-ready-kept", Sentence::should("CreateSnapshot, DeleteSnapshot, ListSnapshots", "When processing is complete, the `ready_to_use` parameter of the snapshot from ListSnapshots SHALL become `true`. / (a snapshot described ready_to_use, later described not ready by GetSnapshot, ListSnapshots or a group's answer: a note, as no sentence forbids it)")),
    // A note: "If the plugin is unable to complete the CreateVolume call successfully, it MUST
    // return a non-ok gRPC code", any code; but a snapshot standing and ready "MAY be
    // specified as a volume_content_source", and restored once it was.
    (Rule::RestoreReadyRefused, "restore-ready-refused", Sentence::should("CreateSnapshot", "If a snapshot corresponding to the specified snapshot `name` is successfully cut and ready to use (meaning it MAY be specified as a `volume_content_source` in a `CreateVolumeRequest`), the Plugin MUST reply `0 OK` with the corresponding `CreateSnapshotResponse`. / (ready to use, it MAY be a source: a restore from a snapshot standing and described ready, restored before with OK, answered an error no row of CreateVolume's table nor of the general table gives: a note, as the spec lets a call fail with any non-OK code)")),
    // Notes: the fields say what may be used, not what the plugin must refuse.
    (Rule::CapacityMaxSize, "capacity-max-size", Sentence::should("GetCapacityResponse.maximum_volume_size", "If `volume_capabilities` or `parameters` is specified in the request, the Plugin SHALL take those into consideration when calculating the minimum volume size of the storage. / (maximum_volume_size: the largest size that may be used in a CreateVolumeRequest.capacity_range.required_bytes field to create a volume with the same parameters; a CreateVolume of the same capability and parameters above it answered OK, nothing made, grown or deleted in between)")),
    (Rule::CapacityMinSize, "capacity-min-size", Sentence::should("GetCapacityResponse.minimum_volume_size", "If `volume_capabilities` or `parameters` is specified in the request, the Plugin SHALL take those into consideration when calculating the maximum volume size of the storage. / (minimum_volume_size: the smallest size that may be used in a CreateVolumeRequest.capacity_range.limit_bytes field to create a volume with the same parameters; a CreateVolume of the same capability and parameters with a limit below it answered OK, nothing made, grown or deleted in between)")),
    // A create from a live source, at a size the spec lets no plugin refuse, refused with a
    // code no row of CreateVolume's table gives for it (see `judge/support`).
    (Rule::CloneSupported, "clone-supported", Sentence::must("VolumeContentSource.VolumeSource.volume_id", "Plugins reporting CLONE_VOLUME capability MUST support creating a volume from another volume.")),
    // A snapshot not of the group named in a DeleteVolumeGroupSnapshot's snapshot_ids, found
    // gone later: the SP used the list and did not detect what it could (see `judge/mismatch`).
    (Rule::GroupDeleteNamedKept, "group-delete-named-kept", Sentence::must("DeleteVolumeGroupSnapshotRequest.snapshot_ids", "If SP needs to use this field to delete the snapshots in the group, it MUST report an error if it has the ability to detect a mismatch.")),
    // A create from a source refused OUT_OF_RANGE, then the same request answered OK with a
    // clone smaller than its source: the condition the row names ("trying to create a volume
    // smaller than the source") is encountered again (see `judge/refusal`).
    (Rule::RefusalLasts, "refusal-lasts", Sentence::must("CreateVolume Errors", "If the conditions defined below are encountered, the plugin MUST return the specified gRPC error code.")),
    // A create refused (it could not complete), then another create of the name answered as if
    // the refused one had made a volume: ALREADY_EXISTS, or the refused request's source.
    (Rule::RefusedNoTrace, "refused-no-trace", Sentence::must("CreateVolume Errors", "If the plugin is unable to complete the CreateVolume call successfully, it MUST return a non-ok gRPC code in the gRPC status.")),
    // A ControllerModifyVolume refused INVALID_ARGUMENT, then the volume's own CreateVolume
    // again, which it met before, refused ALREADY_EXISTS: the refused call changed it.
    (Rule::ModifyRefusedKept, "modify-refused-kept", Sentence::must("ControllerModifyVolume Errors", "The SP MUST NOT have applied any modification to the volume as part of this specific call.")),
    (Rule::RestoreSupported, "restore-supported", Sentence::must("ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT", "Therefore plugins supporting CREATE_DELETE_SNAPSHOT MUST support creating volume from snapshot.")),
    // A create from a live source, valid and at an allowed size, refused with one transient
    // code three times in a row, one at a time, while creates of its kind answer OK (see
    // `judge/repeats`; UNKNOWN and INTERNAL so are the support MUST's).
    (Rule::RefusalTransientRepeated, "refusal-transient-repeated", Sentence::should("CreateVolume Errors", "If the plugin is unable to complete the CreateVolume call successfully, it MUST return a non-ok gRPC code in the gRPC status. / (a clone or restore from a live source, valid and at a size no plugin may refuse, answered the same transient code (UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED) three times in a row, sent one at a time, while creates from other sources of its kind answered OK: a note, as the spec bounds no transient condition's length, so no history shows the condition lasting for ever)")),
];

impl Rule {
    /// The invariants (rows apart), for `--list` and the audit.
    pub(crate) fn invariants() -> impl Iterator<Item = Rule> {
        INVARIANTS.iter().map(|(r, _, _)| *r)
    }

    /// The rows the explorer brings about after a history, for `--list` and the audit.
    pub(crate) const ROWS: [Rule; 20] = [
        Rule::Row("CreateVolume", SOURCE_NOT_EXIST),
        Rule::Row("CreateVolume", VOLUME_INCOMPATIBLE),
        Rule::Row("ControllerPublishVolume", NOT_EXIST),
        Rule::Row("ControllerPublishVolume", NODE_NOT_EXIST),
        Rule::Row("ControllerPublishVolume", PUBLISHED_INCOMPATIBLE),
        Rule::Row("ValidateVolumeCapabilities", NOT_EXIST),
        Rule::Row("ControllerGetVolume", NOT_EXIST),
        Rule::Row("ControllerExpandVolume", NOT_EXIST),
        Rule::Row("ControllerModifyVolume", NOT_EXIST),
        Rule::Row("CreateVolumeGroupSnapshot", GROUP_INCOMPATIBLE),
        Rule::Row("GetVolumeGroupSnapshot", GROUP_NOT_EXIST),
        Rule::Row("CreateSnapshot", SNAPSHOT_INCOMPATIBLE),
        Rule::Row("GetSnapshot", SNAP_NOT_EXIST),
        Rule::Row("DeleteSnapshot", IN_GROUP),
        Rule::Row("NodeStageVolume", NOT_EXIST),
        Rule::Row("NodePublishVolume", NOT_EXIST),
        Rule::Row("NodePublishVolume", PUBLISHED_INCOMPATIBLE),
        Rule::Row("NodeUnpublishVolume", NOT_EXIST),
        Rule::Row("NodeGetVolumeStats", NOT_EXIST),
        Rule::Row("NodeExpandVolume", NOT_EXIST),
    ];

    /// The stable id a finding is named by: `create-retry-same`, `errors: GetSnapshot:
    /// Snapshot does not exist`.
    pub(crate) fn id(&self) -> String {
        match self {
            Rule::Row(rpc, condition) => format!("errors: {rpc}: {condition}"),
            own => {
                INVARIANTS.iter().find(|(r, _, _)| r == own).map_or("", |(_, id, _)| id).to_owned()
            }
        }
    }

    /// The sentence it rests on.
    pub(crate) fn sentence(&self) -> Sentence {
        match self {
            Rule::Row(rpc, condition) => row(rpc, condition),
            own => INVARIANTS.iter().find(|(r, _, _)| r == own).map_or_else(
                || Sentence::must("", "(a rule without its sentence: an explorer bug)"),
                |(_, _, s)| *s,
            ),
        }
    }
}

/// The sentence of `rpc`'s error-table row whose condition is `condition`, from the Model: the
/// table as the spec last wrote it, by the suite's one rule (`cases::errors::spec_rows`: v1.12.0's
/// for an RPC whose table v1.13.0's proto does not state).
fn row(rpc: &'static str, condition: &str) -> Sentence {
    let found = crate::cases::errors::spec_rows(rpc).and_then(|rows| {
        rows.iter().find(|r| r.condition == condition && r.origin == csikit::errors::Origin::Rpc)
    });
    match found {
        Some(info) => Sentence::row(rpc, info),
        None => Sentence::must(rpc, "(no such row in the Model's error table: an explorer bug)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_own_id_and_every_row_is_the_models() {
        let mut ids = std::collections::BTreeSet::new();
        for r in Rule::invariants().chain(Rule::ROWS) {
            assert!(ids.insert(r.id()), "{} twice", r.id());
            let s = r.sentence();
            assert!(!s.text.contains("explorer bug"), "{}: {s}", r.id());
            if let Rule::Row(..) = r {
                assert!(s.row.is_some(), "{}", r.id());
            }
        }
    }
}
