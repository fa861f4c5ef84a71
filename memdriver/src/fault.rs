//! Fault switches: `MEMDRIVER_FAULT=name` makes memdriver behave like a driver with one bug real
//! drivers have had, so conformance suites can be checked against them (each one must be caught
//! by at least one case). With no switch, nothing here changes anything.

use tonic::{Code, Status};

/// One bug, switched on by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The skeleton's request validation is off (REQUIRED fields, sizes, secret keys unchecked).
    NoValidation,
    /// CreateVolume of a name it already made makes another volume.
    CreateNotIdempotent,
    /// An unknown volume or snapshot id is INTERNAL instead of NOT_FOUND.
    InternalForUnknown,
    /// DeleteVolume of an unknown (or already deleted) volume is NOT_FOUND instead of OK.
    DeleteNotFound,
    /// CreateVolume logs its secrets at INFO.
    LogSecrets,
    /// ListVolumes ignores `starting_token` (every page is the first).
    IgnoreToken,
    /// ListVolumes starts from the beginning for a token it never issued, instead of ABORTED.
    AcceptBadToken,
    /// NodePublishVolume does not create `target_path`.
    NoTargetPath,
    /// CreateVolume ignores `capacity_range` (every volume is 1 MiB).
    IgnoreCapacity,
    /// NodeUnpublishVolume of a path not published is NOT_FOUND instead of OK.
    UnpublishNotIdempotent,
    /// CreateVolume of an existing name with an incompatible request answers the existing volume.
    NoAlreadyExists,
    /// NodeGetVolumeStats answers for any path, published or not.
    StatsAnyPath,
    /// CreateSnapshot of a name it already made makes another snapshot.
    SnapshotNotIdempotent,
    /// DeleteVolume answers OK and keeps the volume.
    LeakOnDelete,
    /// CreateVolume and ControllerModifyVolume accept any mutable parameter name.
    AcceptAnyMutable,
    /// GetSnapshot answers another snapshot than the one asked for, when there is another.
    GetSnapshotOther,
    /// A second NodePublishVolume of a SINGLE_NODE_SINGLE_WRITER volume at another target path
    /// is accepted.
    SingleWriterTwice,
    /// ListVolumes pages newest first by offset, so volumes created while a CO pages shift the
    /// pages: entries are repeated (or, with deletions, skipped).
    ListShiftsUnderCreation,
    /// ControllerPublishVolume does not check `node_id`: any node, named or not, is published to.
    PublishAnyNode,
    /// CreateVolume from a snapshot or volume that does not exist makes an empty volume instead
    /// of NOT_FOUND.
    MissingSourceEmpty,
    /// ValidateVolumeCapabilities confirms the capabilities of a volume it does not hold.
    ValidateUnknownVolume,
    /// NodeGetVolumeStats does not look the volume up: an id it never issued gets usage.
    StatsUnknownVolume,
    /// ListSnapshots with a `snapshot_id` it does not hold lists every snapshot.
    ListSnapshotsUnknownIdAll,
    /// NodeUnpublishVolume of a volume it does not hold answers OK instead of NOT_FOUND.
    UnpublishUnknownOk,
    /// ControllerPublishVolume again to the same node with another `readonly` flag answers OK
    /// (the first publication stands) instead of ALREADY_EXISTS.
    RepublishIncompatibleOk,
    /// DeleteVolume forgets the volume but not its name: CreateVolume of that name again
    /// answers the deleted volume, which nothing else knows. Needs a history: create, delete,
    /// create again, use.
    ReuseNameAfterDelete,
    /// ListSnapshots by `source_volume_id` lists only the first snapshot of the volume
    /// (csi-driver-host-path v1.18.0's bug). Needs two snapshots of one volume.
    ListSnapshotsFirstOfSource,
    /// ListVolumes and ControllerGetVolume report the size a volume was created with, not the
    /// size ControllerExpandVolume grew it to. Needs an expansion, then a read.
    ExpandNotListed,
    /// DeleteVolume deletes the volume's snapshots with it. Needs a snapshot, the source
    /// deleted, then the snapshot used.
    SnapshotDiesWithSource,
    /// ControllerUnpublishVolume answers OK and keeps the publication, so the volume stays in
    /// use. Needs a publication undone, then a DeleteVolume.
    UnpublishKeepsNode,
    /// NodeUnstageVolume answers OK and keeps the staging, so the volume stays in use. Needs a
    /// whole stage cycle, the controller's publication undone, then a DeleteVolume.
    UnstageKeepsPath,
    /// NodeUnpublishVolume removes the target path and answers OK, but keeps the publication,
    /// so the staging path stays in use. Needs publish, unpublish, then NodeUnstageVolume.
    NodeUnpublishKeepsRecord,
    /// ControllerUnpublishVolume of a volume published three times or more (a retry of a
    /// publication standing is not a new one) answers OK and
    /// keeps the publication (a counter that wraps, a cache that fills). Needs a longer
    /// history: three publish cycles, then a DeleteVolume (eight calls).
    ThirdUnpublishKeepsNode,
    /// A volume restored from a snapshot without a `capacity_range` gets the size the
    /// snapshot's source volume was created with, not the snapshot's: a snapshot cut after its
    /// source was expanded restores smaller than itself. Needs a longer history: CreateVolume,
    /// ControllerExpandVolume, CreateSnapshot, then the restore.
    RestoreSizeOfOrigin,
    /// CreateVolume of a name it already made answers the volume without its
    /// `content_source` (the answer is rebuilt from what is stored, which keeps no source).
    /// Needs a clone or restore, then the same request again.
    CreateRetryNoSource,
    /// CreateSnapshot of a name it already made answers the source volume's size now, not the
    /// snapshot's (read from the volume, not from the snapshot). Needs a snapshot, its source
    /// grown, then the same request again.
    SnapshotRetrySizeNow,
    /// ValidateVolumeCapabilities leaves `confirmed` unset while the volume is
    /// controller-published (a check of its capabilities against the publication's, which
    /// fails). Needs a validation, a publication, then the same validation again.
    ValidateUnconfirmedWhenPublished,
    /// DeleteSnapshot of a group snapshot's member deletes it alone, though the group's answer
    /// gave it a `group_snapshot_id` (it CAN NOT be deleted stand alone). Needs a group
    /// snapshot, then DeleteSnapshot of one of its snapshots.
    MemberDeletedAlone,
    /// The pages ListVolumes answers from a `next_token` report each volume at the size it had
    /// when the first page handed the token out (a cache kept per listing). Needs a token
    /// held, a volume expanded, then the pages from the token.
    ListTokenStaleSizes,
    /// DeleteVolume of a volume in use forgets it and then answers FAILED_PRECONDITION (the
    /// in-use check comes after the removal). Needs a publication, the DeleteVolume out of
    /// order, then any use of the volume.
    DeleteInUseForgets,
    /// NodeUnstageVolume unstages the volume from every staging path, whatever
    /// `staging_target_path` names (staging kept per volume, not per path). Needs a staging,
    /// a NodeUnstageVolume at another path, then the staging path used.
    UnstageAnyPath,
    /// NodeUnpublishVolume at a path where the volume is not published unpublishes it from
    /// every target path it is published at (publications kept per volume, not per path).
    /// Needs a publication, then a NodeUnpublishVolume of the volume at another path.
    UnpublishAnyTarget,
    /// A clone's `limit_bytes` is checked against its source volume's size when that was
    /// created, not its size now: a clone of a volume expanded since, with a limit between the
    /// two, is answered at the source's size, over the limit. Needs a volume, its expansion,
    /// then the clone.
    CloneLimitOfCreatedSize,
    /// GetSnapshot of a group snapshot's snapshot leaves `group_snapshot_id` unset, though
    /// DeleteSnapshot refuses it alone (csi-driver-host-path v1.18.0's GetSnapshot does this).
    /// Needs two volumes, their group snapshot, then the GetSnapshot.
    MemberGetNoGroupId,
    /// ListSnapshots answers each snapshot's `creation_time` as the time of the listing. Needs a
    /// snapshot, then a listing.
    ListSnapshotsTimeNow,
    /// ListVolumes and ControllerGetVolume describe a clone of a volume that was itself cloned
    /// or restored with its source's source (the chain's origin) as `content_source`. Needs a
    /// clone of a clone (or of a restore), then a read.
    ReadSourceOfOrigin,
    /// The pages of ListSnapshots from a `next_token` list the snapshots of when the token was
    /// handed out (a listing cache kept per token), a snapshot deleted since among them. Needs
    /// a few snapshots, a first page, a DeleteSnapshot, then the pages from the token.
    ListSnapshotsTokenStale,
    /// NodeUnstageVolume of a path the volume is staged at unstages the path it was first
    /// staged at (kept from its first NodeStageVolume, as a plugin that derives its staging
    /// record once): a volume staged again at another path stays staged there.
    /// Needs a stage, an unstage, a stage at another staging path, its unstage, then a use of
    /// the volume (a stage at the first path again, a DeleteVolume).
    UnstageFirstPath,
    /// NodeUnpublishVolume keeps the `readonly` flag a target path was published with (a
    /// cache of mount options by path), and NodePublishVolume at that path again with the
    /// other flag answers ALREADY_EXISTS. Needs a publication, its undo, then a publication at
    /// the same target with the other flag.
    TargetKeepsReadonly,
    /// CreateSnapshot of a name it already made answers `ready_to_use` false once a volume was
    /// restored from the snapshot (the answer rebuilt from an "in use" flag the restore sets),
    /// though the snapshot was answered ready and still restores. Needs a snapshot, a restore
    /// from it, then the same CreateSnapshot again.
    SnapshotRetryUnreadyAfterRestore,
    /// Two bugs in two code paths of ListSnapshots: by `source_volume_id` it lists only the
    /// first snapshot of the volume (as [`Fault::ListSnapshotsFirstOfSource`]), and unfiltered
    /// with `max_entries` a page that has a next one leaves out its last entry. Needs two
    /// snapshots of one volume listed by source, and three snapshots listed in pages of two or
    /// three: one rule, broken in the answers to two request shapes.
    ListSnapshotsTwoPaths,
    /// CreateVolume cloned from a volume that is itself a clone or a restore answers
    /// FAILED_PRECONDITION (a copy-on-write chain the backend will not lengthen), though the
    /// plugin reports CLONE_VOLUME. Needs a volume, its clone (or a snapshot and its restore),
    /// then a clone of that.
    CloneChainRefused,
    /// DeleteVolumeGroupSnapshot deletes the snapshots its `snapshot_ids` names, not the
    /// group's (the list trusted, never checked against the group). Needs two volumes, their
    /// group snapshot, a snapshot cut alone (or a second group), the group deleted with it
    /// named, then a read of it.
    GroupDeleteTrustsList,
    /// CreateVolume of a name whose create from a source was refused OUT_OF_RANGE sizes the
    /// next request of the name by its range alone (the name's first check taken as done): the
    /// same clone or restore again is answered OK, smaller than its source. Needs a volume (a
    /// snapshot), a clone (a restore) asking for less than it, then the same request again.
    RetrySizedByRange,
    /// NodeUnpublishVolume of one of a volume's targets drops the volume's statistics record
    /// (kept per volume, not per target, and filled by NodePublishVolume), so
    /// NodeGetVolumeStats at a target still published answers NOT_FOUND until the volume is
    /// published again. Needs a volume published at two targets, one of them unpublished,
    /// then the statistics of the other.
    StatsLostByOtherUnpublish,
    /// CreateVolume from a snapshot of a group snapshot answers FAILED_PRECONDITION (the check
    /// that keeps a group's snapshot from being deleted alone applied to its restores too),
    /// though the plugin reports CREATE_DELETE_SNAPSHOT and restores every snapshot cut alone.
    /// Needs two volumes, their group snapshot, then a restore of one of its snapshots.
    MemberRestoreRefused,
    /// CreateVolume cloned from a volume expanded since it was made answers INTERNAL every
    /// time (the copy checks its length against the size recorded at creation, and fails),
    /// though the plugin reports CLONE_VOLUME and clones every volume never grown. One such
    /// answer may be a server that failed once; the same source refused so three times in a
    /// row is not. Needs two volumes, a clone of one (served), the other grown, then three
    /// clones of it.
    CloneOfExpandedInternal,
    /// NodePublishVolume of a block volume makes a folder at `target_path` (the mount path's
    /// code taken for both access types), where the block device belongs. Needs a block
    /// volume published at a target.
    BlockTargetFolder,
    /// NodeExpandVolume with `required_bytes` below the volume's size sets the volume's size to
    /// it (one size per volume, shared by the controller and the node, written from the node's
    /// request, whose size the node never checks): a kubelet's retry with a stale size
    /// shrinks the volume. Needs a volume made
    /// with a size, staged, a NodeExpandVolume one MiB below its size, then a read.
    NodeExpandShrinks,
    /// ControllerExpandVolume past what the plugin can give (above `maximum_volume_size`, or
    /// more than the pool has free) records the size asked before it checks, then answers
    /// OUT_OF_RANGE: the refused size is read back. Needs a volume, an expansion past the
    /// maximum, then a read.
    ExpandPastSaves,
    /// ControllerExpandVolume of a volume grown before allocates in 4 MiB extents: it grows the
    /// volume to the next multiple of 4 MiB at or above the size asked, whatever `limit_bytes`
    /// says, and answers the size asked. Needs a volume, an expansion, a second one with a
    /// limit below the next multiple (an exact size), then a read.
    ExpandRoundsPastLimit,
    /// ControllerModifyVolume with a mutable parameter name it does not take applies the names
    /// it takes, then answers INVALID_ARGUMENT ("Parameters not supported"). Needs a volume,
    /// such a modification, then the volume's CreateVolume again (ALREADY_EXISTS: its mutable
    /// parameters are no longer the request's).
    ModifyRefusedApplies,
    /// CreateVolumeGroupSnapshot of a source that does not exist cuts the sources that do and
    /// keeps them as a group under its name, then answers NOT_FOUND; the same request again
    /// finds the name and answers OK with that group. Needs two volumes, one deleted, the
    /// group, then the group again.
    GroupKeepsPartial,
    /// ControllerGetVolumeHealth and NodeGetVolumeHealth answer without their REQUIRED
    /// `volume_health` (which a CO may take for a healthy volume).
    HealthNoVolumeHealth,
    /// A volume's health names another `volume_id` than the volume asked for.
    HealthOtherVolumeId,
    /// A volume's health entries come without their REQUIRED `reason`.
    HealthNoReason,
    /// A volume's health entries carry the status UNKNOWN_VOLUME_HEALTH_TYPE (0: not set).
    HealthUnknownStatus,
    /// A volume's health entries are each reported twice: the same (status, reason).
    HealthDuplicateEntry,
    /// NodeGetStorageHealth reports each backend entry twice: the same (status, reason,
    /// volume_capability).
    StorageDuplicateBackend,
    /// ControllerListVolumeHealth ignores `max_entries` (every page holds everything).
    HealthIgnoreMaxEntries,
    /// ControllerListVolumeHealth's last page still sets `next_token` (back to where it
    /// started), so paging never ends.
    HealthTokenNeverEnds,
    /// The health answers' `message` holds the request's secret values.
    HealthSecretInMessage,
}

impl Fault {
    /// Every fault, in the order of the crate docs.
    pub const ALL: [Fault; 72] = [
        Fault::NoValidation,
        Fault::CreateNotIdempotent,
        Fault::InternalForUnknown,
        Fault::DeleteNotFound,
        Fault::LogSecrets,
        Fault::IgnoreToken,
        Fault::AcceptBadToken,
        Fault::NoTargetPath,
        Fault::IgnoreCapacity,
        Fault::UnpublishNotIdempotent,
        Fault::NoAlreadyExists,
        Fault::StatsAnyPath,
        Fault::SnapshotNotIdempotent,
        Fault::LeakOnDelete,
        Fault::AcceptAnyMutable,
        Fault::GetSnapshotOther,
        Fault::SingleWriterTwice,
        Fault::ListShiftsUnderCreation,
        Fault::PublishAnyNode,
        Fault::MissingSourceEmpty,
        Fault::ValidateUnknownVolume,
        Fault::StatsUnknownVolume,
        Fault::ListSnapshotsUnknownIdAll,
        Fault::UnpublishUnknownOk,
        Fault::RepublishIncompatibleOk,
        Fault::ReuseNameAfterDelete,
        Fault::ListSnapshotsFirstOfSource,
        Fault::ExpandNotListed,
        Fault::SnapshotDiesWithSource,
        Fault::UnpublishKeepsNode,
        Fault::UnstageKeepsPath,
        Fault::NodeUnpublishKeepsRecord,
        Fault::ThirdUnpublishKeepsNode,
        Fault::RestoreSizeOfOrigin,
        Fault::CreateRetryNoSource,
        Fault::SnapshotRetrySizeNow,
        Fault::ValidateUnconfirmedWhenPublished,
        Fault::MemberDeletedAlone,
        Fault::ListTokenStaleSizes,
        Fault::DeleteInUseForgets,
        Fault::UnstageAnyPath,
        Fault::UnpublishAnyTarget,
        Fault::CloneLimitOfCreatedSize,
        Fault::MemberGetNoGroupId,
        Fault::ListSnapshotsTimeNow,
        Fault::ReadSourceOfOrigin,
        Fault::ListSnapshotsTokenStale,
        Fault::UnstageFirstPath,
        Fault::TargetKeepsReadonly,
        Fault::SnapshotRetryUnreadyAfterRestore,
        Fault::ListSnapshotsTwoPaths,
        Fault::CloneChainRefused,
        Fault::GroupDeleteTrustsList,
        Fault::RetrySizedByRange,
        Fault::StatsLostByOtherUnpublish,
        Fault::MemberRestoreRefused,
        Fault::CloneOfExpandedInternal,
        Fault::BlockTargetFolder,
        Fault::NodeExpandShrinks,
        Fault::ExpandPastSaves,
        Fault::ExpandRoundsPastLimit,
        Fault::ModifyRefusedApplies,
        Fault::GroupKeepsPartial,
        Fault::HealthNoVolumeHealth,
        Fault::HealthOtherVolumeId,
        Fault::HealthNoReason,
        Fault::HealthUnknownStatus,
        Fault::HealthDuplicateEntry,
        Fault::StorageDuplicateBackend,
        Fault::HealthIgnoreMaxEntries,
        Fault::HealthTokenNeverEnds,
        Fault::HealthSecretInMessage,
    ];

    /// The switch's name, as `MEMDRIVER_FAULT` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Fault::NoValidation => "no-validation",
            Fault::CreateNotIdempotent => "create-not-idempotent",
            Fault::InternalForUnknown => "internal-for-unknown",
            Fault::DeleteNotFound => "delete-not-found",
            Fault::LogSecrets => "log-secrets",
            Fault::IgnoreToken => "ignore-token",
            Fault::AcceptBadToken => "accept-bad-token",
            Fault::NoTargetPath => "no-target-path",
            Fault::IgnoreCapacity => "ignore-capacity",
            Fault::UnpublishNotIdempotent => "unpublish-not-idempotent",
            Fault::NoAlreadyExists => "no-already-exists",
            Fault::StatsAnyPath => "stats-any-path",
            Fault::SnapshotNotIdempotent => "snapshot-not-idempotent",
            Fault::LeakOnDelete => "leak-on-delete",
            Fault::AcceptAnyMutable => "accept-any-mutable",
            Fault::GetSnapshotOther => "get-snapshot-other",
            Fault::SingleWriterTwice => "single-writer-twice",
            Fault::ListShiftsUnderCreation => "list-shifts-under-creation",
            Fault::PublishAnyNode => "publish-any-node",
            Fault::MissingSourceEmpty => "missing-source-empty",
            Fault::ValidateUnknownVolume => "validate-unknown-volume",
            Fault::StatsUnknownVolume => "stats-unknown-volume",
            Fault::ListSnapshotsUnknownIdAll => "list-snapshots-unknown-id-all",
            Fault::UnpublishUnknownOk => "unpublish-unknown-ok",
            Fault::RepublishIncompatibleOk => "republish-incompatible-ok",
            Fault::ReuseNameAfterDelete => "reuse-name-after-delete",
            Fault::ListSnapshotsFirstOfSource => "list-snapshots-first-of-source",
            Fault::ExpandNotListed => "expand-not-listed",
            Fault::SnapshotDiesWithSource => "snapshot-dies-with-source",
            Fault::UnpublishKeepsNode => "unpublish-keeps-node",
            Fault::UnstageKeepsPath => "unstage-keeps-path",
            Fault::NodeUnpublishKeepsRecord => "node-unpublish-keeps-record",
            Fault::ThirdUnpublishKeepsNode => "third-unpublish-keeps-node",
            Fault::RestoreSizeOfOrigin => "restore-size-of-origin",
            Fault::CreateRetryNoSource => "create-retry-no-source",
            Fault::SnapshotRetrySizeNow => "snapshot-retry-size-now",
            Fault::ValidateUnconfirmedWhenPublished => "validate-unconfirmed-when-published",
            Fault::MemberDeletedAlone => "member-deleted-alone",
            Fault::ListTokenStaleSizes => "list-token-stale-sizes",
            Fault::DeleteInUseForgets => "delete-in-use-forgets",
            Fault::UnstageAnyPath => "unstage-any-path",
            Fault::UnpublishAnyTarget => "unpublish-any-target",
            Fault::CloneLimitOfCreatedSize => "clone-limit-of-created-size",
            Fault::MemberGetNoGroupId => "member-get-no-group-id",
            Fault::ListSnapshotsTimeNow => "list-snapshots-time-now",
            Fault::ReadSourceOfOrigin => "read-source-of-origin",
            Fault::ListSnapshotsTokenStale => "list-snapshots-token-stale",
            Fault::UnstageFirstPath => "unstage-first-path",
            Fault::TargetKeepsReadonly => "target-keeps-readonly",
            Fault::SnapshotRetryUnreadyAfterRestore => "snapshot-retry-unready-after-restore",
            Fault::ListSnapshotsTwoPaths => "list-snapshots-two-paths",
            Fault::CloneChainRefused => "clone-chain-refused",
            Fault::GroupDeleteTrustsList => "group-delete-trusts-list",
            Fault::RetrySizedByRange => "retry-sized-by-range",
            Fault::StatsLostByOtherUnpublish => "stats-lost-by-other-unpublish",
            Fault::MemberRestoreRefused => "member-restore-refused",
            Fault::CloneOfExpandedInternal => "clone-of-expanded-internal",
            Fault::BlockTargetFolder => "block-target-folder",
            Fault::NodeExpandShrinks => "node-expand-shrinks",
            Fault::ExpandPastSaves => "expand-past-saves",
            Fault::ExpandRoundsPastLimit => "expand-rounds-past-limit",
            Fault::ModifyRefusedApplies => "modify-refused-applies",
            Fault::GroupKeepsPartial => "group-keeps-partial",
            Fault::HealthNoVolumeHealth => "health-no-volume-health",
            Fault::HealthOtherVolumeId => "health-other-volume-id",
            Fault::HealthNoReason => "health-no-reason",
            Fault::HealthUnknownStatus => "health-unknown-status",
            Fault::HealthDuplicateEntry => "health-duplicate-entry",
            Fault::StorageDuplicateBackend => "storage-duplicate-backend",
            Fault::HealthIgnoreMaxEntries => "health-ignore-max-entries",
            Fault::HealthTokenNeverEnds => "health-token-never-ends",
            Fault::HealthSecretInMessage => "health-secret-in-message",
        }
    }

    /// Whether the bug is an answer that breaks a REQUIRED field: the skeleton's response
    /// validation (on in debug builds) would turn it into INTERNAL, so it is off with these, as
    /// in a release build, and the bug reaches the CO.
    pub fn breaks_required_answer_fields(self) -> bool {
        matches!(
            self,
            Fault::HealthNoVolumeHealth | Fault::HealthNoReason | Fault::HealthUnknownStatus
        )
    }

    /// The fault named `name`.
    ///
    /// # Errors
    ///
    /// An unknown name, with the known ones.
    pub fn parse(name: &str) -> Result<Fault, String> {
        Fault::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let known: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
            format!("unknown MEMDRIVER_FAULT '{name}'; known: {}", known.join(", "))
        })
    }

    /// `MEMDRIVER_FAULT`, when set.
    ///
    /// # Errors
    ///
    /// An unknown name.
    pub fn from_env() -> Result<Option<Fault>, String> {
        match std::env::var("MEMDRIVER_FAULT") {
            Ok(name) if !name.is_empty() => Fault::parse(&name).map(Some),
            _ => Ok(None),
        }
    }
}

/// The status a call answers under `fault`: NOT_FOUND becomes INTERNAL for
/// [`Fault::InternalForUnknown`]; everything else as it was.
pub fn status(fault: Option<Fault>, status: Status) -> Status {
    if fault == Some(Fault::InternalForUnknown) && status.code() == Code::NotFound {
        // The planted bug answers with csikit's own INTERNAL row (the RPC is any).
        return csikit::errors::INTERNAL_ERROR
            .status(format!("lookup failed: {}", status.message()));
    }
    status
}
