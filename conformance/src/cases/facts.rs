//! The cases built from the spec's facts: for every RPC of the services the plugin advertises,
//! one valid request is sent; an RPC the spec obliges must not answer UNIMPLEMENTED, and for every
//! RPC the plugin serves (obliged or not) each REQUIRED field is left out in turn, strings are
//! set to their size limit and one byte over, a secret key breaks the charset and a name holds a
//! control character ([`crate::generated`]).

use std::time::Instant;

use csikit::facts::MethodFacts;
use csikit::server::PluginSpec as _;
use csikit::v1::node_service_capability::rpc::Type as Nd;
use csikit::v1::*;
use prost::Message as _;
use prost_reflect::DynamicMessage;
use tonic::{Code, Status};

use crate::case::Need;
use crate::generated::{self, Expect, Mutation};
use crate::record::Recorder;
use crate::report::Outcome;
use crate::sentence::{Sentence, general};
use crate::suite::{MIB, Suite, UNKNOWN_GROUP, UNKNOWN_SNAPSHOT, UNKNOWN_VOLUME, code_name, show};

/// What the REQUIRED-field cases covered.
#[derive(Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) total: usize,
    pub(crate) covered: usize,
    /// `Rpc: field: why`.
    pub(crate) uncovered: Vec<String>,
}

/// A valid request for each RPC the suite can build one for, as bytes of its request type.
fn baseline(s: &mut Suite, rpc: &str) -> Option<Vec<u8>> {
    let cap = s.capability();
    let fixture = s.fixture.clone();
    let staging = s.staging_dir().map(|p| p.display().to_string()).unwrap_or_default();
    let target = s.target_path().map(|p| p.display().to_string()).unwrap_or_default();
    Some(match rpc {
        "CreateVolume" => {
            let name = s.name("generated");
            let mut r = s.create_request(&name, 0);
            r.mutable_parameters = s.cfg.mutable_parameters.clone();
            r.encode_to_vec()
        }
        "DeleteVolume" => DeleteVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            secrets: s.secrets("DeleteVolume"),
        }
        .encode_to_vec(),
        "ControllerPublishVolume" => ControllerPublishVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            node_id: s.node_id.clone(),
            volume_capability: Some(cap),
            secrets: s.secrets("ControllerPublishVolume"),
            ..ControllerPublishVolumeRequest::default()
        }
        .encode_to_vec(),
        "ControllerUnpublishVolume" => ControllerUnpublishVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            node_id: s.node_id.clone(),
            secrets: s.secrets("ControllerUnpublishVolume"),
        }
        .encode_to_vec(),
        "ValidateVolumeCapabilities" => ValidateVolumeCapabilitiesRequest {
            volume_id: fixture,
            volume_capabilities: vec![cap],
            secrets: s.secrets("ValidateVolumeCapabilities"),
            ..ValidateVolumeCapabilitiesRequest::default()
        }
        .encode_to_vec(),
        "ListVolumes" => ListVolumesRequest::default().encode_to_vec(),
        "GetCapacity" => GetCapacityRequest {
            volume_capabilities: vec![cap],
            parameters: s.cfg.volume_parameters.clone(),
            ..GetCapacityRequest::default()
        }
        .encode_to_vec(),
        "CreateSnapshot" => CreateSnapshotRequest {
            source_volume_id: fixture,
            name: s.name("generated-snap"),
            secrets: s.secrets("CreateSnapshot"),
            ..CreateSnapshotRequest::default()
        }
        .encode_to_vec(),
        "DeleteSnapshot" => DeleteSnapshotRequest {
            snapshot_id: UNKNOWN_SNAPSHOT.into(),
            secrets: s.secrets("DeleteSnapshot"),
        }
        .encode_to_vec(),
        "ListSnapshots" => ListSnapshotsRequest::default().encode_to_vec(),
        "ControllerExpandVolume" => ControllerExpandVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            capacity_range: Some(CapacityRange { required_bytes: 2 * MIB, limit_bytes: 0 }),
            secrets: s.secrets("ControllerExpandVolume"),
            volume_capability: Some(cap),
        }
        .encode_to_vec(),
        "ControllerGetVolume" => ControllerGetVolumeRequest { volume_id: fixture }.encode_to_vec(),
        "ControllerModifyVolume" => ControllerModifyVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            secrets: s.secrets("ControllerModifyVolume"),
            mutable_parameters: if s.cfg.mutable_parameters.is_empty() {
                [("csi-conformance".to_owned(), "1".to_owned())].into()
            } else {
                s.cfg.mutable_parameters.clone()
            },
        }
        .encode_to_vec(),
        "GetSnapshot" => GetSnapshotRequest {
            snapshot_id: UNKNOWN_SNAPSHOT.into(),
            secrets: s.secrets("GetSnapshot"),
        }
        .encode_to_vec(),
        "NodeStageVolume" => NodeStageVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            staging_target_path: staging,
            volume_capability: Some(cap),
            secrets: s.secrets("NodeStageVolume"),
            ..NodeStageVolumeRequest::default()
        }
        .encode_to_vec(),
        "NodeUnstageVolume" => NodeUnstageVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            staging_target_path: staging,
        }
        .encode_to_vec(),
        "NodePublishVolume" => NodePublishVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            target_path: target,
            staging_target_path: if s.plugin.node_has(Nd::StageUnstageVolume) {
                staging
            } else {
                String::new()
            },
            volume_capability: Some(cap),
            secrets: s.secrets("NodePublishVolume"),
            ..NodePublishVolumeRequest::default()
        }
        .encode_to_vec(),
        "NodeUnpublishVolume" => {
            NodeUnpublishVolumeRequest { volume_id: UNKNOWN_VOLUME.into(), target_path: target }
                .encode_to_vec()
        }
        "NodeGetVolumeStats" => NodeGetVolumeStatsRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            volume_path: target,
            ..NodeGetVolumeStatsRequest::default()
        }
        .encode_to_vec(),
        "NodeExpandVolume" => NodeExpandVolumeRequest {
            volume_id: UNKNOWN_VOLUME.into(),
            volume_path: target,
            capacity_range: Some(CapacityRange { required_bytes: 2 * MIB, limit_bytes: 0 }),
            volume_capability: Some(cap),
            secrets: s.secrets("NodeExpandVolume"),
            ..NodeExpandVolumeRequest::default()
        }
        .encode_to_vec(),
        "CreateVolumeGroupSnapshot" => CreateVolumeGroupSnapshotRequest {
            name: s.name("generated-group"),
            source_volume_ids: vec![fixture],
            secrets: s.secrets("CreateVolumeGroupSnapshot"),
            ..CreateVolumeGroupSnapshotRequest::default()
        }
        .encode_to_vec(),
        "DeleteVolumeGroupSnapshot" => DeleteVolumeGroupSnapshotRequest {
            group_snapshot_id: UNKNOWN_GROUP.into(),
            snapshot_ids: vec![UNKNOWN_SNAPSHOT.into()],
            secrets: s.secrets("DeleteVolumeGroupSnapshot"),
        }
        .encode_to_vec(),
        "GetVolumeGroupSnapshot" => GetVolumeGroupSnapshotRequest {
            group_snapshot_id: UNKNOWN_GROUP.into(),
            snapshot_ids: vec![UNKNOWN_SNAPSHOT.into()],
            secrets: s.secrets("GetVolumeGroupSnapshot"),
        }
        .encode_to_vec(),
        "ControllerGetVolumeHealth" => ControllerGetVolumeHealthRequest {
            volume_id: fixture,
            secrets: s.secrets("ControllerGetVolumeHealth"),
        }
        .encode_to_vec(),
        "ControllerListVolumeHealth" => ControllerListVolumeHealthRequest {
            secrets: s.secrets("ControllerListVolumeHealth"),
            ..ControllerListVolumeHealthRequest::default()
        }
        .encode_to_vec(),
        "NodeGetVolumeHealth" => NodeGetVolumeHealthRequest {
            volume_id: fixture,
            ..NodeGetVolumeHealthRequest::default()
        }
        .encode_to_vec(),
        "NodeGetStorageHealth" => {
            NodeGetStorageHealthRequest { secrets: s.secrets("NodeGetStorageHealth") }
                .encode_to_vec()
        }
        "GetPluginInfo"
        | "GetPluginCapabilities"
        | "GroupControllerGetCapabilities"
        | "Probe"
        | "ControllerGetCapabilities"
        | "NodeGetCapabilities"
        | "NodeGetInfo" => Vec::new(),
        _ => return None,
    })
}

/// The obligation the spec puts on this plugin to implement `method`, if any, given what it
/// advertises: `always` or `with CAPABILITY`.
fn obliged(s: &Suite, service: &str, rpc: &str) -> Option<String> {
    let o = csikit::v1::server::Spec::OBLIGATIONS
        .iter()
        .find(|o| o.service == service && o.rpc == rpc)?;
    let applies = o.if_any.is_empty()
        || o.if_any
            .iter()
            .any(|(service, _, number)| Need::numbered(service, *number).is_some_and(|n| n.met(s)));
    applies.then(|| {
        if o.if_any.is_empty() {
            "always".to_owned()
        } else {
            format!("with {}", o.if_any.iter().map(|(_, n, _)| *n).collect::<Vec<_>>().join(" or "))
        }
    })
}

/// The RPCs of the services the plugin advertises.
fn methods(s: &Suite) -> Vec<(&'static str, &'static MethodFacts)> {
    csikit::v1::facts::FACTS
        .methods
        .iter()
        .filter_map(|m| {
            let service = m.service.rsplit('.').next().unwrap_or(&m.service);
            let advertised = match service {
                "Identity" => true,
                "Controller" => s.plugin.controller(),
                "GroupController" => s.plugin.group_service(),
                "Node" => s.plugin.has_node,
                _ => false,
            };
            advertised.then_some((service, m))
        })
        .collect()
}

/// Something a call made (a plugin that did not refuse it) is remembered for the clean-up.
fn adopt(s: &mut Suite, rpc: &str, answer: &Result<Vec<u8>, Status>) {
    let Ok(bytes) = answer else { return };
    match rpc {
        "CreateVolume" => {
            if let Ok(r) = CreateVolumeResponse::decode(bytes.as_slice())
                && let Some(v) = r.volume
            {
                s.adopt_volume(&v.volume_id);
            }
        }
        "CreateSnapshot" => {
            if let Ok(r) = CreateSnapshotResponse::decode(bytes.as_slice())
                && let Some(x) = r.snapshot
            {
                s.adopt_snapshot(&x.snapshot_id);
            }
        }
        "CreateVolumeGroupSnapshot" => {
            if let Ok(r) = CreateVolumeGroupSnapshotResponse::decode(bytes.as_slice())
                && let Some(g) = r.group_snapshot
            {
                crate::cases::group::adopt(s, &g);
            }
        }
        _ => {}
    }
}

/// Every RPC of the advertised services: the obligation case, then the generated cases of each
/// RPC the plugin serves.
pub(crate) async fn run(s: &mut Suite, rec: &mut Recorder<'_>) -> Coverage {
    let mut coverage = Coverage::default();
    for (service, method) in methods(s) {
        let Some(bytes) = baseline(s, &method.name) else { continue };
        let why = obliged(s, service, &method.name);
        let started = Instant::now();
        let answer = s.raw(method, bytes.clone()).await;
        adopt(s, &method.name, &answer);
        let unimplemented = matches!(&answer, Err(e) if e.code() == Code::Unimplemented);
        if let Some(why) = &why {
            let name = format!("{}: implemented, as the spec obliges ({why})", method.name);
            let outcome = if unimplemented {
                Outcome::Failed(format!(
                    "UNIMPLEMENTED, but the spec obliges a {service} plugin to implement it ({why})"
                ))
            } else {
                Outcome::Passed
            };
            if rec.wants(&name) {
                rec.record(s, name, general::OBLIGED, started, outcome);
            }
        }
        let paths = generated::required_paths(&method.input);
        if unimplemented {
            continue;
        }
        coverage.total += paths.len();
        let Some(desc) = csikit::v1::descriptor_pool().get_message_by_name(&method.input) else {
            continue;
        };
        let Ok(base) = DynamicMessage::decode(desc, bytes.as_slice()) else { continue };
        let mut mutations: Vec<Mutation> = generated::missing_required(&base);
        let covered: Vec<String> = mutations.iter().filter_map(|m| m.required.clone()).collect();
        for p in &paths {
            if covered.contains(p) {
                coverage.covered += 1;
            } else {
                let parent = p.rsplit_once('.').map_or("", |(parent, _)| parent);
                coverage.uncovered.push(format!(
                    "{}: {p}: the suite's valid request sets no {parent}",
                    method.name
                ));
            }
        }
        mutations.extend(generated::size_limits(&base));
        mutations.extend(generated::bad_secret_key(&base));
        mutations.extend(generated::control_chars(&base));
        let unknown_id = [UNKNOWN_VOLUME, UNKNOWN_SNAPSHOT, UNKNOWN_GROUP]
            .iter()
            .any(|id| bytes.windows(id.len()).any(|w| w == id.as_bytes()));
        for m in mutations {
            let name = format!("{}: {}", method.name, m.what);
            if !rec.wants(&name) {
                continue;
            }
            let started = Instant::now();
            let answer = s.raw(method, m.bytes).await;
            adopt(s, &method.name, &answer);
            let mut outcome = verdict(m.expect, &answer);
            // The request also names an id never issued: "Volume does not exist" holds as much
            // as "Missing required field", and the spec orders neither row before the other.
            let also_not_found = unknown_id
                && m.required.as_deref().is_some_and(|p| !p.ends_with("_id"))
                && matches!(&answer, Err(e) if e.code() == Code::NotFound);
            // A Delete* of an id never issued: "does not exist ... the Plugin MUST reply `0 OK`"
            // holds as much as "Missing required field" for the other fields.
            let also_gone = unknown_id
                && method.name.starts_with("Delete")
                && m.required.as_deref().is_some_and(|p| !p.ends_with("_id"))
                && answer.is_ok();
            if also_not_found || also_gone {
                outcome = Outcome::Passed;
            }
            if m.expect == Expect::Invalid {
                // A request out of the spec on purpose: what its answer breaks (a volume_context
                // echoing an oversized parameter, a capability echoed without its access mode)
                // follows from the request, so it is told with this case, not on its own.
                let problems = s.take_problems();
                if !problems.is_empty() {
                    let also = format!(
                        "the answer to this request breaks the spec too: {}",
                        problems.iter().map(|p| p.detail.as_str()).collect::<Vec<_>>().join("; ")
                    );
                    outcome = match outcome {
                        Outcome::Passed => Outcome::Note(also),
                        Outcome::Failed(w) => Outcome::Failed(format!("{w}; {also}")),
                        Outcome::Note(w) => Outcome::Note(format!("{w}; {also}")),
                        other => other,
                    };
                }
            }
            rec.record(s, name, m.sentence, started, outcome);
        }
    }
    coverage
}

fn verdict(expect: Expect, answer: &Result<Vec<u8>, Status>) -> Outcome {
    match (expect, answer) {
        (Expect::Invalid, Err(e)) if e.code() == Code::InvalidArgument => Outcome::Passed,
        (Expect::Invalid, other) => Outcome::Failed(format!(
            "expected {}, got {}",
            code_name(Code::InvalidArgument),
            show(other)
        )),
        (Expect::NotInvalid, Err(e)) if e.code() == Code::InvalidArgument => {
            Outcome::Failed(format!("a value within the limit was refused: {}", e.message()))
        }
        (Expect::NotInvalid, Err(e)) if e.code() == Code::DeadlineExceeded => {
            Outcome::Failed("no answer within the deadline".into())
        }
        (Expect::NotInvalid, _) => Outcome::Passed,
    }
}

/// The families of generated cases, for `--list`.
pub(crate) const FAMILIES: &[(&str, Sentence)] = &[
    ("<Rpc>: implemented, as the spec obliges (<why>)", general::OBLIGED),
    ("<Rpc>: without <REQUIRED field>", general::MISSING_REQUIRED),
    ("<Rpc>: <field> at / one byte over its limit", general::SIZE_LIMITS),
    ("<Rpc>: secrets with the key 'bad key!'", general::SECRET_KEYS),
    ("<Rpc>: <name> holding U+0007", general::CONTROL_CHARS),
];
