//! What an answer must be given the request that produced it, what the plugin advertises and
//! what it said before: the spec's sentences that relate a response to its request (a volume
//! within the `capacity_range` asked for, a snapshot of the volume named, no more entries than
//! `max_entries`), the capability-conditional ones (a `volume_condition` when a v1.12 plugin
//! advertises VOLUME_CONDITION, read from the answer's bytes as `csikit::v1_12` since v1.13.0
//! removed it; VOLUME_ACCESSIBILITY_CONSTRAINTS when topology is returned), and the ones across
//! answers (a volume always reports the same `volume_context`, a topology key prefix is the same
//! in every answer), and the health answers' (the health of the volume asked for, no condition
//! reported twice, ControllerListVolumeHealth within `max_entries`). Every answer of every call
//! is checked ([`crate::exchange`]); a broken rule is a problem of the case that got the answer,
//! reported once per rule.
//!
//! The checks are typed: the table of RPCs ([`Rpc`]) names, for each request type, its answer's
//! type and the check its answers get, so a new RPC cannot be added without saying what its
//! answers are held to, and a test holds the table to every unary RPC of the facts. Whoever
//! holds a request and its answer ([`Answers::check`], with the answer's bytes as received), or
//! their bytes ([`Answers::check_encoded`]), calls the same checks with its own memory of earlier
//! answers; nothing is decoded, encoded or looked up by reflection on the typed path, but for
//! what only an older release's types can read.

use std::collections::{BTreeSet, HashMap};

use csikit::Validate;
use csikit::v1::controller_service_capability::rpc::Type as Ctl;
use csikit::v1::volume_content_source::Type as Source;
use csikit::v1::*;
use csikit::v1_12::controller_service_capability::rpc::Type as CtlV1_12;
use csikit::v1_12::node_service_capability::rpc::Type as NdV1_12;
use prost::{Message, Name};
use tonic::Status;

use crate::advertised::Advertised;
use crate::sentence::Sentence;
use crate::v1_12::Conditions;

/// One rule an answer broke.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    /// What was broken, the same for every answer that breaks it the same way:
    /// `ListVolumesResponse.entries.status.volume_condition.message: required`.
    pub(crate) key: String,
    /// The first answer's words.
    pub(crate) detail: String,
    /// The sentence it breaks.
    pub(crate) sentence: Sentence,
}

/// What an answer is held to besides its request and earlier answers: what the plugin
/// advertises, and the controller publications the caller made that still stand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Against<'a> {
    /// The plugin's capabilities.
    pub(crate) plugin: &'a Advertised,
    /// Controller publications standing: (volume, node).
    pub(crate) published: &'a [(String, String)],
}

/// The answer checks' memory: what earlier answers said that later ones must agree with. One
/// per conversation with a plugin; [`Answers::default`] remembers nothing.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    /// The first non-empty `volume_context` each volume reported.
    contexts: HashMap<String, HashMap<String, String>>,
    /// The `publish_context` of each controller publication still standing: (volume, node).
    publish_contexts: HashMap<(String, String), HashMap<String, String>>,
    /// Every topology key prefix the plugin returned, and the first answer that held one.
    prefixes: BTreeSet<String>,
    /// The `size_bytes` each snapshot reported.
    snapshot_sizes: HashMap<String, i64>,
}

mod health;
pub(crate) mod rule;

use health::{get_health, list_health, node_health, storage_health};

/// A request type the suite sends, with its answer's type, its RPC's name and the check its
/// answers get.
pub(crate) trait Rpc: Message + Name + Default + Clone + Send + Sync + 'static {
    /// The answer's type.
    type Response: Message + Name + Validate + Default + Send + Sync + 'static;
    /// The RPC, as the facts name it: `CreateVolume`.
    const METHOD: &'static str;
    /// Holds `answer` to the rules that relate it to this request and to earlier answers.
    fn check(&self, answer: &Self::Response, found: &mut Found<'_>);
}

/// The table of RPCs: `Name: Request => Response, check`, where `check` is the function that
/// holds the answer to its request (`facts_only` where no rule of this module relates them). It
/// makes the [`Rpc`] impls and [`Answers::check_encoded`].
macro_rules! rpcs {
    ($($name:ident: $req:ident => $resp:ident, $check:ident;)*) => {
        $(impl Rpc for $req {
            type Response = $resp;
            const METHOD: &'static str = stringify!($name);
            fn check(&self, answer: &$resp, found: &mut Found<'_>) {
                $check(found, self, answer);
            }
        })*

        impl Answers {
            /// [`Answers::check`] for an encoded request and answer of the RPC `name`.
            ///
            /// # Errors
            ///
            /// An RPC the table does not hold, or bytes that do not decode as its messages:
            /// nothing is checked then.
            pub(crate) fn check_encoded(
                &mut self,
                against: Against<'_>,
                name: &str,
                request: &[u8],
                answer: &[u8],
                old: &Conditions,
                out: &mut Vec<Problem>,
            ) -> Result<(), Unchecked> {
                match name {
                    $(stringify!($name) => self.decode_and_check::<$req>(against, request, answer, old, out),)*
                    _ => Err(Unchecked::UnknownRpc(name.to_owned())),
                }
            }
        }

        /// Each row's RPC with its request's and answer's full names, for the table's test.
        #[cfg(test)]
        fn rows() -> Vec<(&'static str, String, String)> {
            vec![$((stringify!($name), $req::full_name(), $resp::full_name())),*]
        }
    };
}

rpcs! {
    GetPluginInfo: GetPluginInfoRequest => GetPluginInfoResponse, facts_only;
    GetPluginCapabilities: GetPluginCapabilitiesRequest => GetPluginCapabilitiesResponse, facts_only;
    Probe: ProbeRequest => ProbeResponse, facts_only;
    CreateVolume: CreateVolumeRequest => CreateVolumeResponse, create_volume;
    DeleteVolume: DeleteVolumeRequest => DeleteVolumeResponse, facts_only;
    ControllerPublishVolume: ControllerPublishVolumeRequest => ControllerPublishVolumeResponse, publish;
    ControllerUnpublishVolume: ControllerUnpublishVolumeRequest => ControllerUnpublishVolumeResponse, unpublished;
    ValidateVolumeCapabilities: ValidateVolumeCapabilitiesRequest => ValidateVolumeCapabilitiesResponse, facts_only;
    ListVolumes: ListVolumesRequest => ListVolumesResponse, list_volumes;
    GetCapacity: GetCapacityRequest => GetCapacityResponse, facts_only;
    ControllerGetCapabilities: ControllerGetCapabilitiesRequest => ControllerGetCapabilitiesResponse, facts_only;
    CreateSnapshot: CreateSnapshotRequest => CreateSnapshotResponse, create_snapshot;
    DeleteSnapshot: DeleteSnapshotRequest => DeleteSnapshotResponse, facts_only;
    ListSnapshots: ListSnapshotsRequest => ListSnapshotsResponse, list_snapshots;
    GetSnapshot: GetSnapshotRequest => GetSnapshotResponse, get_snapshot;
    ControllerExpandVolume: ControllerExpandVolumeRequest => ControllerExpandVolumeResponse, controller_expand;
    ControllerGetVolume: ControllerGetVolumeRequest => ControllerGetVolumeResponse, get_volume;
    ControllerModifyVolume: ControllerModifyVolumeRequest => ControllerModifyVolumeResponse, facts_only;
    GroupControllerGetCapabilities: GroupControllerGetCapabilitiesRequest => GroupControllerGetCapabilitiesResponse, facts_only;
    CreateVolumeGroupSnapshot: CreateVolumeGroupSnapshotRequest => CreateVolumeGroupSnapshotResponse, create_group;
    DeleteVolumeGroupSnapshot: DeleteVolumeGroupSnapshotRequest => DeleteVolumeGroupSnapshotResponse, facts_only;
    GetVolumeGroupSnapshot: GetVolumeGroupSnapshotRequest => GetVolumeGroupSnapshotResponse, get_group;
    NodeStageVolume: NodeStageVolumeRequest => NodeStageVolumeResponse, facts_only;
    NodeUnstageVolume: NodeUnstageVolumeRequest => NodeUnstageVolumeResponse, facts_only;
    NodePublishVolume: NodePublishVolumeRequest => NodePublishVolumeResponse, facts_only;
    NodeUnpublishVolume: NodeUnpublishVolumeRequest => NodeUnpublishVolumeResponse, facts_only;
    NodeGetVolumeStats: NodeGetVolumeStatsRequest => NodeGetVolumeStatsResponse, node_volume_stats;
    NodeGetCapabilities: NodeGetCapabilitiesRequest => NodeGetCapabilitiesResponse, facts_only;
    NodeGetInfo: NodeGetInfoRequest => NodeGetInfoResponse, node_info;
    NodeExpandVolume: NodeExpandVolumeRequest => NodeExpandVolumeResponse, node_expand;
    ControllerListVolumeHealth: ControllerListVolumeHealthRequest => ControllerListVolumeHealthResponse, list_health;
    ControllerGetVolumeHealth: ControllerGetVolumeHealthRequest => ControllerGetVolumeHealthResponse, get_health;
    NodeGetVolumeHealth: NodeGetVolumeHealthRequest => NodeGetVolumeHealthResponse, node_health;
    NodeGetStorageHealth: NodeGetStorageHealthRequest => NodeGetStorageHealthResponse, storage_health;
}

/// Why [`Answers::check_encoded`] checked nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unchecked {
    /// The table holds no RPC of this name.
    UnknownRpc(String),
    /// The request's bytes do not decode as the RPC's request.
    Request(prost::DecodeError),
    /// The answer's bytes do not decode as the RPC's answer.
    Answer(prost::DecodeError),
}

impl Answers {
    /// Checks `answer` (with `old`, the v1.12.0 conditions its bytes held) against `request`,
    /// `against` and what earlier answers said (which it remembers in turn); each rule broken
    /// goes to `out`.
    pub(crate) fn check<Q: Rpc>(
        &mut self,
        against: Against<'_>,
        request: &Q,
        answer: &Q::Response,
        old: &Conditions,
        out: &mut Vec<Problem>,
    ) {
        request.check(answer, &mut Found { against, memory: self, out, old });
    }

    fn decode_and_check<Q: Rpc>(
        &mut self,
        against: Against<'_>,
        request: &[u8],
        answer: &[u8],
        old: &Conditions,
        out: &mut Vec<Problem>,
    ) -> Result<(), Unchecked> {
        let request = Q::decode(request).map_err(Unchecked::Request)?;
        let typed = Q::Response::decode(answer).map_err(Unchecked::Answer)?;
        self.check(against, &request, &typed, old, out);
        Ok(())
    }
}

/// Checks an error's status against the Error Scheme: a message, no details.
pub(crate) fn check_status(what: &str, status: &Status, out: &mut Vec<Problem>) {
    if status.message().trim().is_empty() {
        out.push(Problem {
            key: format!("{what}: empty"),
            detail: format!("{what} is empty (code {:?})", status.code()),
            sentence: rule::STATUS_MESSAGE,
        });
    }
    if !status.details().is_empty() {
        out.push(Problem {
            key: format!("{what}: details set"),
            detail: format!(
                "the status of a {:?} answer carries {} bytes of details",
                status.code(),
                status.details().len()
            ),
            sentence: rule::STATUS_DETAILS,
        });
    }
}

/// One answer being checked: what it is held to, the memory of earlier answers, and where the
/// rules it breaks go.
pub(crate) struct Found<'c> {
    against: Against<'c>,
    memory: &'c mut Answers,
    out: &'c mut Vec<Problem>,
    /// The `volume_condition`s a plugin still on v1.12.0 sent, which v1.13.0 removed.
    old: &'c Conditions,
}

impl Found<'_> {
    /// `rule` broken: `key` names what (the same for every answer that breaks it the same way).
    fn broke(&mut self, rule: Sentence, key: &str, detail: String) {
        self.out.push(Problem { key: key.to_owned(), detail, sentence: rule });
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
        let earlier = match self.memory.contexts.get(&v.volume_id) {
            Some(c) => Some(c.clone()),
            None => {
                self.memory.contexts.insert(v.volume_id.clone(), v.volume_context.clone());
                None
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
        if !self.against.plugin.accessibility {
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
                    self.memory.prefixes.insert(prefix.to_owned());
                    let others: Vec<String> =
                        self.memory.prefixes.iter().filter(|p| *p != prefix).cloned().collect();
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
        if self.against.plugin.has_v1_12(CtlV1_12::VolumeCondition) && !condition {
            self.broke(
                rule::CONDITION_CONTROLLER,
                &format!("{what}.volume_condition: unset"),
                format!("{what} of volume {volume} has no volume_condition, and the plugin advertises VOLUME_CONDITION"),
            );
        }
        if !self.against.plugin.has(Ctl::ListVolumesPublishedNodes) {
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
        for (v, node) in self.against.published {
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

/// An answer no rule of this module relates to its request: the facts' checks (REQUIRED fields,
/// limits, enums, secrets; [`crate::exchange`]) are all it is held to.
fn facts_only<Q, A>(_: &mut Found<'_>, _: &Q, _: &A) {}

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
        let size = f.memory.snapshot_sizes.get(&src.snapshot_id).copied().unwrap_or(0);
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
    for (i, e) in a.entries.iter().enumerate() {
        let Some(v) = &e.volume else { continue };
        f.volume("ListVolumesResponse.entries.volume", v);
        let nodes = e.status.as_ref().map(|st| st.published_node_ids.as_slice());
        let condition = f.old.held(i);
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
    let condition = f.old.held(0);
    f.status("ControllerGetVolumeResponse.status", &v.volume_id, nodes.or(Some(&[])), condition);
}

fn publish(
    f: &mut Found<'_>,
    q: &ControllerPublishVolumeRequest,
    a: &ControllerPublishVolumeResponse,
) {
    let key = (q.volume_id.clone(), q.node_id.clone());
    let earlier = match f.memory.publish_contexts.get(&key) {
        Some(c) => Some(c.clone()),
        None => {
            f.memory.publish_contexts.insert(key, a.publish_context.clone());
            None
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
fn unpublished(
    f: &mut Found<'_>,
    q: &ControllerUnpublishVolumeRequest,
    _: &ControllerUnpublishVolumeResponse,
) {
    f.memory
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

fn remember_size(f: &mut Found<'_>, snap: &Snapshot) {
    if !snap.snapshot_id.is_empty() && snap.size_bytes > 0 {
        f.memory.snapshot_sizes.insert(snap.snapshot_id.clone(), snap.size_bytes);
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

fn node_info(f: &mut Found<'_>, _: &NodeGetInfoRequest, a: &NodeGetInfoResponse) {
    if let Some(t) = &a.accessible_topology {
        f.topologies("NodeGetInfoResponse.accessible_topology", std::slice::from_ref(t));
    }
}

fn node_volume_stats(
    f: &mut Found<'_>,
    _: &NodeGetVolumeStatsRequest,
    _: &NodeGetVolumeStatsResponse,
) {
    if !f.against.plugin.node_has_v1_12(NdV1_12::VolumeCondition) {
        return;
    }
    if !f.old.held(0) {
        f.broke(
            rule::CONDITION_NODE,
            "NodeGetVolumeStatsResponse.volume_condition: unset",
            "NodeGetVolumeStats answered no volume_condition, and the plugin advertises node VOLUME_CONDITION".into(),
        );
    }
}

#[cfg(test)]
mod tests;
