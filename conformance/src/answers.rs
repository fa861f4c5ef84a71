//! What an answer must be given the request that produced it, what the plugin advertises and
//! what it said before: the spec's sentences that relate a response to its request (a volume
//! within the `capacity_range` asked for, a snapshot of the volume named, no more entries than
//! `max_entries`), the capability-conditional ones (a `volume_condition` when VOLUME_CONDITION is
//! advertised, VOLUME_ACCESSIBILITY_CONSTRAINTS when topology is returned), and the ones across
//! answers (a volume always reports the same `volume_context`, a topology key prefix is the same
//! in every answer). Every answer of every call is checked ([`crate::exchange`]); a broken rule
//! is a problem of the case that got the answer, reported once per rule.

use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::sync::PoisonError;

use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::volume_content_source::Type as Source;
use csikit::v1::*;
use tonic::Status;

use crate::sentence::Sentence;
use crate::suite::Suite;

/// What earlier answers said that later ones must agree with.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// The first non-empty `volume_context` each volume reported.
    contexts: HashMap<String, HashMap<String, String>>,
    /// The `publish_context` of each controller publication still standing: (volume, node).
    publish_contexts: HashMap<(String, String), HashMap<String, String>>,
    /// Every topology key prefix the plugin returned, and the first answer that held one.
    prefixes: BTreeSet<String>,
    /// The `size_bytes` each snapshot reported.
    snapshot_sizes: HashMap<String, i64>,
}

pub(crate) mod rule {
    //! The sentences the answers are held to.
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
        ("an error's status has a message", STATUS_MESSAGE),
        ("an error's status has no details", STATUS_DETAILS),
    ];
}

/// Checks one answer against its request; what breaks a rule is a problem of the running case.
pub(crate) fn check(s: &Suite, request: &dyn Any, answer: &dyn Any) {
    let mut found = Found { s, out: Vec::new() };
    if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        create_volume(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        controller_expand(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        node_expand(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        list_volumes(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        get_volume(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        publish(&mut found, q, a);
    } else if let Some(q) = request.downcast_ref::<ControllerUnpublishVolumeRequest>() {
        unpublished(&found, q);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        create_snapshot(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        get_snapshot(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        list_snapshots(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        create_group(&mut found, q, a);
    } else if let (Some(q), Some(a)) = (request.downcast_ref(), answer.downcast_ref()) {
        get_group(&mut found, q, a);
    } else if let Some(a) = answer.downcast_ref::<NodeGetInfoResponse>() {
        if let Some(t) = &a.accessible_topology {
            found.topologies("NodeGetInfoResponse.accessible_topology", std::slice::from_ref(t));
        }
    } else if let Some(a) = answer.downcast_ref::<NodeGetVolumeStatsResponse>()
        && s.node_has(Nd::VolumeCondition)
        && a.volume_condition.is_none()
    {
        found.broke(
            rule::CONDITION_NODE,
            "NodeGetVolumeStatsResponse.volume_condition: unset",
            "NodeGetVolumeStats answered no volume_condition, and the plugin advertises node VOLUME_CONDITION".into(),
        );
    }
    found.report();
}

/// Checks an error's status against the Error Scheme: a message, no details.
pub(crate) fn check_status(s: &Suite, what: &str, status: &Status) {
    if status.message().trim().is_empty() {
        s.problem(
            format!("{what}: empty"),
            format!("{what} is empty (code {:?})", status.code()),
            rule::STATUS_MESSAGE,
        );
    }
    if !status.details().is_empty() {
        s.problem(
            format!("{what}: details set"),
            format!(
                "the status of a {:?} answer carries {} bytes of details",
                status.code(),
                status.details().len()
            ),
            rule::STATUS_DETAILS,
        );
    }
}

/// The problems one answer showed, reported together.
struct Found<'s> {
    s: &'s Suite,
    out: Vec<(Sentence, String, String)>,
}

impl Found<'_> {
    /// `rule` broken: `key` names what (the same for every answer that breaks it the same way).
    fn broke(&mut self, rule: Sentence, key: &str, detail: String) {
        self.out.push((rule, key.to_owned(), detail));
    }

    fn report(self) {
        for (sentence, key, detail) in self.out {
            self.s.problem(key, detail, sentence);
        }
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.s.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A capacity answered against the range asked for (0: unknown, not checked).
    fn capacity(&mut self, what: &str, capacity: i64, range: Option<&CapacityRange>) {
        let Some(range) = range else { return };
        if capacity == 0 {
            return;
        }
        if range.required_bytes > 0 && capacity < range.required_bytes {
            self.broke(
                rule::REQUIRED_BYTES,
                &format!("{what}: below required_bytes"),
                format!("{what} is {capacity} bytes for required_bytes {}", range.required_bytes),
            );
        }
        if range.limit_bytes > 0 && capacity > range.limit_bytes {
            self.broke(
                rule::LIMIT_BYTES,
                &format!("{what}: above limit_bytes"),
                format!("{what} is {capacity} bytes for limit_bytes {}", range.limit_bytes),
            );
        }
    }

    /// A volume the plugin described: its topology and its context against earlier answers.
    fn volume(&mut self, what: &str, v: &Volume) {
        self.topologies(&format!("{what}.accessible_topology"), &v.accessible_topology);
        if v.volume_id.is_empty() || v.volume_context.is_empty() {
            return;
        }
        let earlier = {
            let mut m = self.memory();
            match m.contexts.get(&v.volume_id) {
                Some(c) => Some(c.clone()),
                None => {
                    m.contexts.insert(v.volume_id.clone(), v.volume_context.clone());
                    None
                }
            }
        };
        if let Some(earlier) = earlier
            && earlier != v.volume_context
        {
            self.broke(
                rule::SAME_CONTEXT,
                &format!("{what}.volume_context: changed"),
                format!(
                    "volume {} reported volume_context keys {:?} in {what}, {:?} before",
                    v.volume_id,
                    keys(&v.volume_context),
                    keys(&earlier)
                ),
            );
        }
    }

    /// Topologies the plugin returned: allowed by its capabilities, keys and values in their
    /// charsets, one key prefix across all answers.
    fn topologies(&mut self, what: &str, topologies: &[Topology]) {
        if topologies.is_empty() {
            return;
        }
        if !self.s.accessibility {
            self.broke(
                rule::TOPOLOGY_CAPABILITY,
                &format!("{what}: without VOLUME_ACCESSIBILITY_CONSTRAINTS"),
                format!("{what} is set, and the plugin does not advertise VOLUME_ACCESSIBILITY_CONSTRAINTS"),
            );
        }
        for t in topologies {
            let mut lower = BTreeSet::new();
            for (key, value) in &t.segments {
                let (prefix, name) = match key.rsplit_once('/') {
                    Some((p, n)) => (Some(p), n),
                    None => (None, key.as_str()),
                };
                if !segment_ok(name, false) {
                    self.broke(
                        rule::TOPOLOGY_KEY,
                        &format!("{what}: key name"),
                        format!("{what} has the key '{key}', whose name is not 1–63 alphanumerics, '-', '_' or '.', alphanumeric at both ends"),
                    );
                }
                if let Some(prefix) = prefix {
                    if !prefix_ok(prefix) {
                        self.broke(
                            rule::TOPOLOGY_PREFIX,
                            &format!("{what}: key prefix"),
                            format!("{what} has the key '{key}', whose prefix is not a lower-case DNS name of at most 63 characters"),
                        );
                    }
                    let others: Vec<String> = {
                        let mut m = self.memory();
                        m.prefixes.insert(prefix.to_owned());
                        m.prefixes.iter().filter(|p| *p != prefix).cloned().collect()
                    };
                    if !others.is_empty() {
                        self.broke(
                            rule::TOPOLOGY_SAME_PREFIX,
                            "topology keys: more than one prefix",
                            format!("{what} has the key prefix '{prefix}'; other answers used {others:?}"),
                        );
                    }
                }
                if !lower.insert(key.to_ascii_lowercase()) {
                    self.broke(
                        rule::TOPOLOGY_CASE,
                        &format!("{what}: keys equal but for case"),
                        format!("{what} holds two keys equal but for case ('{key}')"),
                    );
                }
                if !segment_ok(value, false) {
                    self.broke(
                        rule::TOPOLOGY_VALUE,
                        &format!("{what}: value"),
                        format!("{what} has the value '{value}' for '{key}', not 1–63 alphanumerics, '-', '_' or '.', alphanumeric at both ends"),
                    );
                }
            }
        }
    }

    /// A listed or fetched volume's status against the capabilities and the suite's
    /// publications.
    fn status(&mut self, what: &str, volume: &str, nodes: Option<&[String]>, condition: bool) {
        if self.s.has(Ctl::VolumeCondition) && !condition {
            self.broke(
                rule::CONDITION_CONTROLLER,
                &format!("{what}.volume_condition: unset"),
                format!("{what} of volume {volume} has no volume_condition, and the plugin advertises VOLUME_CONDITION"),
            );
        }
        if !self.s.has(Ctl::ListVolumesPublishedNodes) {
            return;
        }
        let Some(nodes) = nodes else {
            self.broke(
                rule::STATUS_LISTED,
                &format!("{what}: unset"),
                format!("{what} of volume {volume} is unset, and the plugin advertises LIST_VOLUMES_PUBLISHED_NODES"),
            );
            return;
        };
        for (v, node) in &self.s.published {
            if v == volume && !nodes.contains(node) {
                self.broke(
                    rule::PUBLISHED_NODES,
                    &format!("{what}.published_node_ids: a publication missing"),
                    format!("{what}.published_node_ids of volume {volume} is {nodes:?}: node {node}, where the suite published it, is missing"),
                );
            }
        }
    }
}

fn keys(m: &HashMap<String, String>) -> BTreeSet<&str> {
    m.keys().map(String::as_str).collect()
}

/// 1 to 63 characters, alphanumeric at both ends, `-`, `_`, `.` or alphanumerics between
/// (`lower`: lower case only, no `_`).
fn segment_ok(s: &str, lower: bool) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| {
        if lower { c.is_ascii_lowercase() || c.is_ascii_digit() } else { c.is_ascii_alphanumeric() }
    };
    !b.is_empty()
        && b.len() <= 63
        && b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
        && b.iter().all(|c| alnum(c) || *c == b'-' || *c == b'.' || (!lower && *c == b'_'))
}

/// A topology key prefix: a lower-case DNS name of at most 63 characters.
fn prefix_ok(s: &str) -> bool {
    segment_ok(s, true) && s.split('.').all(|label| segment_ok(label, true))
}

/// A volume accessible from `t` is accessible from the requested `r`: they agree on every key
/// they share, and they share one.
pub(crate) fn accessible_from(t: &Topology, r: &Topology) -> bool {
    let shared: Vec<&String> = t.segments.keys().filter(|k| r.segments.contains_key(*k)).collect();
    !shared.is_empty() && shared.iter().all(|k| t.segments.get(*k) == r.segments.get(*k))
}

fn create_volume(f: &mut Found<'_>, q: &CreateVolumeRequest, a: &CreateVolumeResponse) {
    let Some(v) = &a.volume else { return };
    f.capacity(
        "CreateVolumeResponse.volume.capacity_bytes",
        v.capacity_bytes,
        q.capacity_range.as_ref(),
    );
    f.volume("CreateVolumeResponse.volume", v);
    if let Some(Source::Snapshot(src)) =
        q.volume_content_source.as_ref().and_then(|c| c.r#type.as_ref())
    {
        let size = f.memory().snapshot_sizes.get(&src.snapshot_id).copied().unwrap_or(0);
        if size > 0 && v.capacity_bytes > 0 && v.capacity_bytes < size {
            f.broke(
                rule::SNAPSHOT_SIZE,
                "CreateVolumeResponse.volume.capacity_bytes: smaller than its snapshot",
                format!(
                    "a volume of {} bytes from snapshot {} of {size} bytes",
                    v.capacity_bytes, src.snapshot_id
                ),
            );
        }
    }
    let requisite =
        q.accessibility_requirements.as_ref().map(|r| r.requisite.as_slice()).unwrap_or_default();
    if !requisite.is_empty()
        && !v.accessible_topology.is_empty()
        && !v.accessible_topology.iter().any(|t| requisite.iter().any(|r| accessible_from(t, r)))
    {
        f.broke(
            rule::REQUISITE,
            "CreateVolumeResponse.volume.accessible_topology: outside the requisite",
            format!(
                "the volume is accessible from {:?}, none of it within the requisite {:?}",
                v.accessible_topology.iter().map(|t| &t.segments).collect::<Vec<_>>(),
                requisite.iter().map(|t| &t.segments).collect::<Vec<_>>()
            ),
        );
    }
}

fn controller_expand(
    f: &mut Found<'_>,
    q: &ControllerExpandVolumeRequest,
    a: &ControllerExpandVolumeResponse,
) {
    f.capacity(
        "ControllerExpandVolumeResponse.capacity_bytes",
        a.capacity_bytes,
        q.capacity_range.as_ref(),
    );
}

fn node_expand(f: &mut Found<'_>, q: &NodeExpandVolumeRequest, a: &NodeExpandVolumeResponse) {
    f.capacity(
        "NodeExpandVolumeResponse.capacity_bytes",
        a.capacity_bytes,
        q.capacity_range.as_ref(),
    );
}

fn list_volumes(f: &mut Found<'_>, q: &ListVolumesRequest, a: &ListVolumesResponse) {
    if q.max_entries > 0 && a.entries.len() > q.max_entries as usize {
        f.broke(
            rule::LIST_VOLUMES_MAX,
            "ListVolumesResponse.entries: more than max_entries",
            format!(
                "ListVolumes gave {} entries for max_entries {}",
                a.entries.len(),
                q.max_entries
            ),
        );
    }
    for e in &a.entries {
        let Some(v) = &e.volume else { continue };
        f.volume("ListVolumesResponse.entries.volume", v);
        let nodes = e.status.as_ref().map(|st| st.published_node_ids.as_slice());
        let condition = e.status.as_ref().is_some_and(|st| st.volume_condition.is_some());
        f.status("ListVolumesResponse.entries.status", &v.volume_id, nodes, condition);
    }
}

fn get_volume(f: &mut Found<'_>, q: &ControllerGetVolumeRequest, a: &ControllerGetVolumeResponse) {
    let Some(v) = &a.volume else { return };
    if !q.volume_id.is_empty() && v.volume_id != q.volume_id {
        f.broke(
            rule::GET_VOLUME_ID,
            "ControllerGetVolumeResponse.volume.volume_id: another volume",
            format!("ControllerGetVolume of {} answered volume '{}'", q.volume_id, v.volume_id),
        );
    }
    f.volume("ControllerGetVolumeResponse.volume", v);
    let nodes = a.status.as_ref().map(|st| st.published_node_ids.as_slice());
    let condition = a.status.as_ref().is_some_and(|st| st.volume_condition.is_some());
    f.status("ControllerGetVolumeResponse.status", &v.volume_id, nodes.or(Some(&[])), condition);
}

fn publish(
    f: &mut Found<'_>,
    q: &ControllerPublishVolumeRequest,
    a: &ControllerPublishVolumeResponse,
) {
    let key = (q.volume_id.clone(), q.node_id.clone());
    let earlier = {
        let mut m = f.memory();
        match m.publish_contexts.get(&key) {
            Some(c) => Some(c.clone()),
            None => {
                m.publish_contexts.insert(key, a.publish_context.clone());
                None
            }
        }
    };
    if let Some(earlier) = earlier
        && earlier != a.publish_context
    {
        f.broke(
            rule::PUBLISH_CONTEXT,
            "ControllerPublishVolumeResponse.publish_context: changed",
            format!(
                "ControllerPublishVolume of volume {} to node {} answered publish_context keys {:?}, {:?} before",
                q.volume_id,
                q.node_id,
                keys(&a.publish_context),
                keys(&earlier)
            ),
        );
    }
}

/// A publication undone: its `publish_context` may be new next time.
fn unpublished(f: &Found<'_>, q: &ControllerUnpublishVolumeRequest) {
    f.memory()
        .publish_contexts
        .retain(|(v, n), _| !(*v == q.volume_id && (q.node_id.is_empty() || *n == q.node_id)));
}

fn create_snapshot(f: &mut Found<'_>, q: &CreateSnapshotRequest, a: &CreateSnapshotResponse) {
    let Some(snap) = &a.snapshot else { return };
    remember_size(f, snap);
    if !q.source_volume_id.is_empty() && snap.source_volume_id != q.source_volume_id {
        f.broke(
            rule::SNAPSHOT_OF_SOURCE,
            "CreateSnapshotResponse.snapshot.source_volume_id: another volume",
            format!(
                "CreateSnapshot of volume {} answered a snapshot of '{}'",
                q.source_volume_id, snap.source_volume_id
            ),
        );
    }
}

fn remember_size(f: &Found<'_>, snap: &Snapshot) {
    if !snap.snapshot_id.is_empty() && snap.size_bytes > 0 {
        f.memory().snapshot_sizes.insert(snap.snapshot_id.clone(), snap.size_bytes);
    }
}

fn get_snapshot(f: &mut Found<'_>, q: &GetSnapshotRequest, a: &GetSnapshotResponse) {
    let Some(snap) = &a.snapshot else { return };
    remember_size(f, snap);
    if !q.snapshot_id.is_empty() && snap.snapshot_id != q.snapshot_id {
        f.broke(
            rule::GET_SNAPSHOT_ID,
            "GetSnapshotResponse.snapshot.snapshot_id: another snapshot",
            format!("GetSnapshot of {} answered snapshot '{}'", q.snapshot_id, snap.snapshot_id),
        );
    }
}

fn list_snapshots(f: &mut Found<'_>, q: &ListSnapshotsRequest, a: &ListSnapshotsResponse) {
    if q.max_entries > 0 && a.entries.len() > q.max_entries as usize {
        f.broke(
            rule::LIST_SNAPSHOTS_MAX,
            "ListSnapshotsResponse.entries: more than max_entries",
            format!(
                "ListSnapshots gave {} entries for max_entries {}",
                a.entries.len(),
                q.max_entries
            ),
        );
    }
    for snap in a.entries.iter().filter_map(|e| e.snapshot.as_ref()) {
        remember_size(f, snap);
        let outside = (!q.snapshot_id.is_empty() && snap.snapshot_id != q.snapshot_id)
            || (!q.source_volume_id.is_empty() && snap.source_volume_id != q.source_volume_id);
        if outside {
            f.broke(
                rule::LIST_SNAPSHOTS_FILTER,
                "ListSnapshotsResponse.entries: outside the filter",
                format!(
                    "ListSnapshots with snapshot_id '{}' and source_volume_id '{}' listed snapshot {} of volume {}",
                    q.snapshot_id, q.source_volume_id, snap.snapshot_id, snap.source_volume_id
                ),
            );
        }
    }
}

fn group(f: &mut Found<'_>, what: &str, g: &VolumeGroupSnapshot) {
    for snap in &g.snapshots {
        remember_size(f, snap);
        if snap.group_snapshot_id != g.group_snapshot_id {
            f.broke(
                rule::GROUP_MEMBER_ID,
                &format!("{what}.snapshots.group_snapshot_id: not the group's"),
                format!(
                    "snapshot {} of group {} carries group_snapshot_id '{}'",
                    snap.snapshot_id, g.group_snapshot_id, snap.group_snapshot_id
                ),
            );
        }
    }
    if g.ready_to_use && g.snapshots.iter().any(|x| !x.ready_to_use) {
        f.broke(
            rule::GROUP_READY,
            &format!("{what}.ready_to_use: true with a member not ready"),
            format!("group {} is ready_to_use with a snapshot that is not", g.group_snapshot_id),
        );
    }
}

fn create_group(
    f: &mut Found<'_>,
    q: &CreateVolumeGroupSnapshotRequest,
    a: &CreateVolumeGroupSnapshotResponse,
) {
    let Some(g) = &a.group_snapshot else { return };
    group(f, "CreateVolumeGroupSnapshotResponse.group_snapshot", g);
    let asked: BTreeSet<&str> = q.source_volume_ids.iter().map(String::as_str).collect();
    let got: BTreeSet<&str> = g.snapshots.iter().map(|x| x.source_volume_id.as_str()).collect();
    if !asked.is_empty() && asked != got {
        f.broke(
            rule::GROUP_OF_SOURCES,
            "CreateVolumeGroupSnapshotResponse.group_snapshot.snapshots: not the source volumes",
            format!("a group snapshot of volumes {asked:?} holds snapshots of {got:?}"),
        );
    }
}

fn get_group(
    f: &mut Found<'_>,
    q: &GetVolumeGroupSnapshotRequest,
    a: &GetVolumeGroupSnapshotResponse,
) {
    let Some(g) = &a.group_snapshot else { return };
    group(f, "GetVolumeGroupSnapshotResponse.group_snapshot", g);
    if !q.group_snapshot_id.is_empty() && g.group_snapshot_id != q.group_snapshot_id {
        f.broke(
            rule::GET_GROUP_ID,
            "GetVolumeGroupSnapshotResponse.group_snapshot.group_snapshot_id: another group",
            format!(
                "GetVolumeGroupSnapshot of {} answered group '{}'",
                q.group_snapshot_id, g.group_snapshot_id
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_segments_and_prefixes() {
        assert!(segment_ok("zone", false));
        assert!(segment_ok("Z_1.a-b", false));
        assert!(!segment_ok("-zone", false));
        assert!(!segment_ok("", false));
        assert!(!segment_ok(&"a".repeat(64), false));
        assert!(prefix_ok("topology.hostpath.csi"));
        assert!(!prefix_ok("Topology.csi"));
        assert!(!prefix_ok("a..b"));
        assert!(!prefix_ok("a_b.c"));
    }
}
