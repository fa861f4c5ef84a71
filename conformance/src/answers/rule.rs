//! The sentences the answers are held to, one constant each, and the list `--list` and the audit
//! print.
// Rows of one shape (a duplicate the tree's scan lists on purpose): data, not code.
use crate::sentence::Sentence;

pub(crate) const REQUIRED_BYTES: Sentence =
    Sentence::must("CapacityRange.required_bytes", "Volume MUST be at least this big.");
pub(crate) const LIMIT_BYTES: Sentence =
    Sentence::must("CapacityRange.limit_bytes", "Volume MUST not be bigger than this.");
pub(crate) const SNAPSHOT_SIZE: Sentence = Sentence::must(
    "Snapshot.size_bytes",
    "The size of the volume MUST NOT be less than the size of the source snapshot.",
);
pub(crate) const TOPOLOGY_CAPABILITY: Sentence = Sentence::must(
    "Volume.accessible_topology / NodeGetInfoResponse.accessible_topology",
    "A plugin that returns this field MUST also set the VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability.",
);
pub(crate) const REQUISITE: Sentence = Sentence::must(
    "TopologyRequirement.requisite",
    "If requisite is specified, the provisioned volume MUST be accessible from at least one of the requisite topologies.",
);
pub(crate) const TOPOLOGY_KEY: Sentence = Sentence::must(
    "Topology",
    "The key name MUST be 63 characters or less, begin and end with an alphanumeric character ([a-z0-9A-Z]), and contain only dashes (-), underscores (_), dots (.), or alphanumerics in between, for example \"zone\".",
);
pub(crate) const TOPOLOGY_PREFIX: Sentence = Sentence::must(
    "Topology",
    "The key prefix MUST be 63 characters or less, begin and end with a lower-case alphanumeric character ([a-z0-9]), contain only dashes (-), dots (.), or lower-case alphanumerics in between, and follow domain name notation format (https://tools.ietf.org/html/rfc1035#section-2.3.1).",
);
pub(crate) const TOPOLOGY_SAME_PREFIX: Sentence = Sentence::must(
    "Topology",
    "If a key prefix is specified, it MUST be identical across all topology keys returned by the SP (across all RPCs).",
);
pub(crate) const TOPOLOGY_CASE: Sentence =
    Sentence::must("Topology", "Meaning the keys \"Zone\" and \"zone\" MUST not both exist.");
pub(crate) const TOPOLOGY_VALUE: Sentence = Sentence::must(
    "Topology",
    "Each string MUST be 63 characters or less and begin and end with an alphanumeric character with '-', '_', '.', or alphanumerics in between.",
);
pub(crate) const SAME_CONTEXT: Sentence = Sentence::must(
    "Volume.volume_context",
    "A volume uniquely identified by `volume_id` SHALL always report the same volume_context.",
);
pub(crate) const PUBLISH_CONTEXT: Sentence = Sentence::must(
    "ControllerPublishVolumeResponse.publish_context",
    "The contents of this field SHALL NOT be mutable.",
);
pub(crate) const CONDITION_CONTROLLER: Sentence = Sentence::must(
    "ControllerGetVolume / ListVolumesResponse.VolumeStatus.volume_condition",
    "A Controller Plugin MUST provide a non-empty `volume_condition` field in `ControllerGetVolumeResponse` if it has `VOLUME_CONDITION` capability. / This field MUST be specified if the VOLUME_CONDITION controller capability is supported.",
);
pub(crate) const CONDITION_NODE: Sentence = Sentence::must(
    "NodeGetVolumeStatsResponse.volume_condition",
    "This field MUST be specified if the VOLUME_CONDITION node capability is supported.",
);
pub(crate) const STATUS_LISTED: Sentence = Sentence::must(
    "ListVolumesResponse.Entry.status",
    "This field MUST be specified if the LIST_VOLUMES_PUBLISHED_NODES controller capability is supported.",
);
pub(crate) const PUBLISHED_NODES: Sentence = Sentence::must(
    "ControllerGetVolumeResponse.VolumeStatus.published_node_ids / ListVolumesResponse.VolumeStatus.published_node_ids",
    "A list of all the `node_id` of nodes that this volume is controller published on. / This field MUST be specified if the LIST_VOLUMES_PUBLISHED_NODES controller capability is supported.",
);
pub(crate) const LIST_VOLUMES_MAX: Sentence = Sentence::must(
    "ListVolumesRequest.max_entries",
    "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response.",
);
pub(crate) const LIST_SNAPSHOTS_MAX: Sentence = Sentence::must(
    "ListSnapshotsRequest.max_entries",
    "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response.",
);
pub(crate) const LIST_SNAPSHOTS_FILTER: Sentence = Sentence::must(
    "ListSnapshots",
    "The Plugin SHALL return the information about all snapshots on the storage system within the given parameters regardless of how they were created.",
);
pub(crate) const SNAPSHOT_OF_SOURCE: Sentence = Sentence::must(
    "CreateSnapshot",
    "If a snapshot corresponding to the specified snapshot `name` is successfully cut and ready to use (meaning it MAY be specified as a `volume_content_source` in a `CreateVolumeRequest`), the Plugin MUST reply `0 OK` with the corresponding `CreateSnapshotResponse`.",
);
pub(crate) const GET_SNAPSHOT_ID: Sentence = Sentence::must(
    "GetSnapshot",
    "A Controller Plugin MUST implement this `GetSnapshot` RPC call if it has `GET_SNAPSHOT` capability.",
);
pub(crate) const GET_VOLUME_ID: Sentence = Sentence::must(
    "ControllerGetVolume",
    "A Controller Plugin MUST implement this `ControllerGetVolume` RPC call if it has `GET_VOLUME` capability.",
);
pub(crate) const GROUP_MEMBER_ID: Sentence = Sentence::must(
    "Snapshot.group_snapshot_id",
    "If this message is inside a VolumeGroupSnapshot message, the value MUST be the same as the group_snapshot_id in that message.",
);
pub(crate) const GROUP_READY: Sentence = Sentence::must(
    "VolumeGroupSnapshot.ready_to_use",
    "If any snapshot in the list of snapshots in this message have ready_to_use set to false, the SP MUST set this field to false.",
);
pub(crate) const GROUP_OF_SOURCES: Sentence = Sentence::must(
    "CreateVolumeGroupSnapshot",
    "If a group snapshot corresponding to the specified group snapshot `name`, `source_volume_ids`, and `parameters` is successfully created (meaning all snapshots associated with the group are successfully cut), the Plugin MUST reply `0 OK` with the corresponding `CreateVolumeGroupSnapshotResponse`.",
);
pub(crate) const GET_GROUP_ID: Sentence = Sentence::must(
    "GetVolumeGroupSnapshot",
    "A Controller Plugin MUST implement this `GetVolumeGroupSnapshot` RPC call if it has `CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT` capability.",
);
pub(crate) const HEALTH_VOLUME_ID: Sentence = Sentence::must(
    "ControllerGetVolumeHealthResponse.volume_health / NodeGetVolumeHealthResponse.volume_health",
    "The health information for the requested volume. / This field is REQUIRED.",
);
pub(crate) const HEALTH_ENTRY_ONCE: Sentence = Sentence::must(
    "VolumeHealth.VolumeHealthEntry.reason",
    "The Plugin MUST NOT return multiple VolumeHealthEntry messages for the same volume with the same (status, reason) combination.",
);
pub(crate) const STORAGE_ENTRY_ONCE: Sentence = Sentence::must(
    "NodeGetStorageHealthResponse.StorageBackendHealth.reason",
    "The Plugin MUST NOT return multiple StorageBackendHealth messages with the same (status, reason, volume_capability) combination.",
);
pub(crate) const LIST_HEALTH_MAX: Sentence = Sentence::must(
    "ControllerListVolumeHealthRequest.max_entries",
    "If specified (non-zero value), the Plugin MUST NOT return more entries than this number in the response.",
);
pub(crate) const STATUS_MESSAGE: Sentence = Sentence::must(
    "Error Scheme",
    "The status `message` MUST contain a human readable description of error, if the status `code` is not `OK`.",
);
pub(crate) const STATUS_DETAILS: Sentence =
    Sentence::must("Error Scheme", "The status `details` MUST be empty.");

/// Every rule, for `--list` and the audit.
pub(crate) const ALL: &[(&str, Sentence)] = &[
    ("a volume within the capacity_range asked for (at least required_bytes)", REQUIRED_BYTES),
    ("a volume within the capacity_range asked for (at most limit_bytes)", LIMIT_BYTES),
    ("a volume from a snapshot no smaller than the snapshot", SNAPSHOT_SIZE),
    ("topology returned only with VOLUME_ACCESSIBILITY_CONSTRAINTS", TOPOLOGY_CAPABILITY),
    ("a volume accessible from a requisite topology", REQUISITE),
    ("topology key names in the charset", TOPOLOGY_KEY),
    ("topology key prefixes in the charset", TOPOLOGY_PREFIX),
    ("one topology key prefix across all answers", TOPOLOGY_SAME_PREFIX),
    ("no two topology keys equal but for case", TOPOLOGY_CASE),
    ("topology values in the charset", TOPOLOGY_VALUE),
    ("a volume always reports the same volume_context", SAME_CONTEXT),
    ("a publication's publish_context does not change", PUBLISH_CONTEXT),
    ("volume_condition given with controller VOLUME_CONDITION", CONDITION_CONTROLLER),
    ("volume_condition given with node VOLUME_CONDITION", CONDITION_NODE),
    ("ListVolumes status given with LIST_VOLUMES_PUBLISHED_NODES", STATUS_LISTED),
    ("published_node_ids lists the nodes the suite published to", PUBLISHED_NODES),
    ("ListVolumes within max_entries", LIST_VOLUMES_MAX),
    ("ListSnapshots within max_entries", LIST_SNAPSHOTS_MAX),
    ("ListSnapshots within its snapshot_id and source_volume_id", LIST_SNAPSHOTS_FILTER),
    ("CreateSnapshot answers a snapshot of the volume named", SNAPSHOT_OF_SOURCE),
    ("GetSnapshot answers the snapshot asked for", GET_SNAPSHOT_ID),
    ("ControllerGetVolume answers the volume asked for", GET_VOLUME_ID),
    ("a group's snapshots carry the group's id", GROUP_MEMBER_ID),
    ("a group is not ready while a member is not", GROUP_READY),
    ("a group snapshot holds a snapshot of each source volume", GROUP_OF_SOURCES),
    ("GetVolumeGroupSnapshot answers the group asked for", GET_GROUP_ID),
    ("a volume's health is the health of the volume asked for", HEALTH_VOLUME_ID),
    ("no two health entries of a volume with the same (status, reason)", HEALTH_ENTRY_ONCE),
    (
        "no two storage backend entries with the same (status, reason, volume_capability)",
        STORAGE_ENTRY_ONCE,
    ),
    ("ControllerListVolumeHealth within max_entries", LIST_HEALTH_MAX),
    ("an error's status has a message", STATUS_MESSAGE),
    ("an error's status has no details", STATUS_DETAILS),
];
