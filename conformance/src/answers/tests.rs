//! The answer checks: the RPC table held to the descriptors and the facts, the typed and the
//! encoded paths finding the same, and the rules that depend on capabilities and on memory.

use std::collections::BTreeMap;

use csikit::v1::node_service_capability::Rpc as NodeRpc;

use super::*;

/// The table against the descriptors and the facts: a row for every unary RPC of `csi.v1`
/// (the streaming ones are not the suite's to call), each with the facts' request and answer.
#[test]
fn the_table_holds_every_unary_rpc_with_its_messages() {
    let table: BTreeMap<&str, (String, String)> =
        rows().into_iter().map(|(name, q, a)| (name, (q, a))).collect();
    let pool = csikit::v1::descriptor_pool();
    let mut unary = BTreeMap::new();
    for service in pool.services().filter(|s| s.package_name() == "csi.v1") {
        for m in service.methods() {
            if !m.is_client_streaming() && !m.is_server_streaming() {
                let io = (m.input().full_name().to_owned(), m.output().full_name().to_owned());
                unary.insert(m.name().to_owned(), io);
            }
        }
    }
    let unary: BTreeMap<&str, (String, String)> =
        unary.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    assert_eq!(table, unary, "the RPC table against the unary RPCs of csi.v1");
    for (name, (q, a)) in &table {
        let facts = csikit::v1::facts::FACTS.methods.iter().find(|m| m.name == *name);
        let facts = facts.expect("a table row has facts");
        assert_eq!((&*facts.input, &*facts.output), (q.as_str(), a.as_str()), "{name}");
    }
}

/// A plugin whose Node service advertises the capabilities numbered `node`.
fn plugin(node: &[i32]) -> Advertised {
    let mut out = Advertised::default();
    out.read_node(&NodeGetCapabilitiesResponse {
        capabilities: node
            .iter()
            .map(|t| NodeServiceCapability {
                r#type: Some(node_service_capability::Type::Rpc(NodeRpc { r#type: *t })),
            })
            .collect(),
    });
    out
}

fn keys(out: &[Problem]) -> Vec<&str> {
    out.iter().map(|p| p.key.as_str()).collect()
}

/// A typed check and the same exchange as bytes find the same problems.
#[test]
fn typed_and_encoded_checks_agree() {
    let plugin = Advertised::default();
    let against = Against { plugin: &plugin, published: &[] };
    let q = CreateVolumeRequest {
        name: "v".into(),
        capacity_range: Some(CapacityRange { required_bytes: 10, limit_bytes: 20 }),
        ..Default::default()
    };
    let small = CreateVolumeResponse {
        volume: Some(Volume { volume_id: "v1".into(), capacity_bytes: 5, ..Default::default() }),
    };
    let (mut typed, mut encoded) = (Vec::new(), Vec::new());
    Answers::default().check(against, &q, &small, &Conditions::default(), &mut typed);
    Answers::default()
        .check_encoded(
            against,
            "CreateVolume",
            &q.encode_to_vec(),
            &small.encode_to_vec(),
            &Conditions::default(),
            &mut encoded,
        )
        .expect("a row of the table");
    assert_eq!(keys(&typed), ["CreateVolumeResponse.volume.capacity_bytes: below required_bytes"]);
    assert_eq!(typed[0].sentence, rule::REQUIRED_BYTES);
    assert_eq!(keys(&typed), keys(&encoded));
    assert_eq!(typed[0].detail, encoded[0].detail);
}

#[test]
fn encoded_checks_refuse_what_they_cannot_read() {
    let plugin = Advertised::default();
    let against = Against { plugin: &plugin, published: &[] };
    let mut out = Vec::new();
    let mut answers = Answers::default();
    assert_eq!(
        answers.check_encoded(against, "NoSuchRpc", &[], &[], &Conditions::default(), &mut out),
        Err(Unchecked::UnknownRpc("NoSuchRpc".into()))
    );
    // A field 1 of wire type 2 whose length runs past the end.
    let torn = [0x0a, 0x05, b'a'];
    assert!(matches!(
        answers.check_encoded(
            against,
            "CreateVolume",
            &torn,
            &[],
            &Conditions::default(),
            &mut out
        ),
        Err(Unchecked::Request(_))
    ));
    assert!(matches!(
        answers.check_encoded(
            against,
            "CreateVolume",
            &[],
            &torn,
            &Conditions::default(),
            &mut out
        ),
        Err(Unchecked::Answer(_))
    ));
    assert!(out.is_empty());
}

/// The capability-conditional rule follows what the plugin advertises: a v1.12 plugin with node
/// VOLUME_CONDITION (which v1.13.0 reserves) must answer a `volume_condition`, read from the
/// answer's bytes as v1.12.0 since `csikit::v1` no longer has the field.
#[test]
fn node_volume_condition_only_with_its_capability() {
    use csikit::v1_12::node_service_capability::rpc::Type as NdV1_12;
    let q = NodeGetVolumeStatsRequest::default();
    let without = csikit::v1_12::NodeGetVolumeStatsResponse::default();
    let with = csikit::v1_12::NodeGetVolumeStatsResponse {
        volume_condition: Some(csikit::v1_12::VolumeCondition {
            abnormal: false,
            message: "ok".into(),
        }),
        ..Default::default()
    };
    let condition = NdV1_12::VolumeCondition as i32;
    let unset = "NodeGetVolumeStatsResponse.volume_condition: unset";
    for (caps, answer, expected) in [
        (vec![], &without, vec![]),
        (vec![condition], &without, vec![unset]),
        (vec![condition], &with, vec![]),
    ] {
        let plugin = plugin(&caps);
        let mut out = Vec::new();
        let against = Against { plugin: &plugin, published: &[] };
        let bytes = answer.encode_to_vec();
        let typed = NodeGetVolumeStatsResponse::decode(bytes.as_slice()).expect("decodes");
        let old = Conditions::read("csi.v1.NodeGetVolumeStatsResponse", &bytes);
        Answers::default().check(against, &q, &typed, &old, &mut out);
        assert_eq!(keys(&out), expected, "{caps:?} {answer:?}");
    }
}

/// What earlier answers said: a publication's context may not change while it stands, and
/// may once it is undone.
#[test]
fn publish_context_is_remembered_until_unpublished() {
    let plugin = Advertised::default();
    let against = Against { plugin: &plugin, published: &[] };
    let q = ControllerPublishVolumeRequest {
        volume_id: "v".into(),
        node_id: "n".into(),
        ..Default::default()
    };
    let answer = |k: &str| ControllerPublishVolumeResponse {
        publish_context: HashMap::from([(k.to_owned(), "x".to_owned())]),
    };
    let mut answers = Answers::default();
    let mut out = Vec::new();
    answers.check(against, &q, &answer("a"), &Conditions::default(), &mut out);
    answers.check(against, &q, &answer("a"), &Conditions::default(), &mut out);
    assert!(out.is_empty());
    answers.check(against, &q, &answer("b"), &Conditions::default(), &mut out);
    assert_eq!(keys(&out), ["ControllerPublishVolumeResponse.publish_context: changed"]);
    out.clear();
    let undo = ControllerUnpublishVolumeRequest {
        volume_id: "v".into(),
        node_id: "n".into(),
        ..Default::default()
    };
    answers.check(
        against,
        &undo,
        &ControllerUnpublishVolumeResponse {},
        &Conditions::default(),
        &mut out,
    );
    answers.check(against, &q, &answer("b"), &Conditions::default(), &mut out);
    assert!(out.is_empty());
}

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

fn entry(status: VolumeHealthErrorType, reason: &str) -> volume_health::VolumeHealthEntry {
    volume_health::VolumeHealthEntry {
        status: status as i32,
        reason: reason.into(),
        message: String::new(),
    }
}

/// The problems one health answer gets from the answer checks.
fn checked<Q: Rpc>(q: &Q, a: &Q::Response) -> Vec<String> {
    let plugin = Advertised::default();
    let against = Against { plugin: &plugin, published: &[] };
    let mut out = Vec::new();
    Answers::default().check(against, q, a, &Conditions::default(), &mut out);
    keys(&out).into_iter().map(str::to_owned).collect()
}

/// A volume's health is the asked volume's, each (status, reason) once; a listing is within
/// `max_entries`.
#[test]
fn health_answers_are_the_volume_asked_for_each_condition_once() {
    use VolumeHealthErrorType::{Degraded, Inaccessible};
    let q = ControllerGetVolumeHealthRequest { volume_id: "v1".into(), ..Default::default() };
    let health = |id: &str, entries| ControllerGetVolumeHealthResponse {
        volume_health: Some(VolumeHealth { volume_id: id.into(), health_statuses: entries }),
    };
    let fine =
        vec![entry(Degraded, "PathDown"), entry(Inaccessible, "PathDown"), entry(Degraded, "Slow")];
    assert!(checked(&q, &health("v1", fine)).is_empty());
    assert_eq!(
        checked(&q, &health("v2", vec![])),
        ["ControllerGetVolumeHealthResponse.volume_health.volume_id: another volume"]
    );
    assert_eq!(
        checked(&q, &health("v1", vec![entry(Degraded, "PathDown"), entry(Degraded, "PathDown")])),
        [
            "ControllerGetVolumeHealthResponse.volume_health.health_statuses: the same (status, reason) twice"
        ]
    );
    let nq = NodeGetVolumeHealthRequest { volume_id: "v1".into(), ..Default::default() };
    let node = NodeGetVolumeHealthResponse {
        volume_health: Some(VolumeHealth { volume_id: "v9".into(), health_statuses: vec![] }),
    };
    assert_eq!(
        checked(&nq, &node),
        ["NodeGetVolumeHealthResponse.volume_health.volume_id: another volume"]
    );
    let lq = ControllerListVolumeHealthRequest { max_entries: 1, ..Default::default() };
    let listed = |n: usize| ControllerListVolumeHealthResponse {
        entries: (0..n)
            .map(|i| VolumeHealth {
                volume_id: format!("v{i}"),
                health_statuses: vec![entry(Degraded, "PathDown")],
            })
            .collect(),
        next_token: String::new(),
    };
    assert!(checked(&lq, &listed(1)).is_empty());
    assert_eq!(
        checked(&lq, &listed(2)),
        ["ControllerListVolumeHealthResponse.entries: more than max_entries"]
    );
}

/// A storage backend's (status, reason, volume_capability) once: the same status and reason for
/// two capabilities is two conditions.
#[test]
fn storage_backends_are_each_reported_once() {
    use node_get_storage_health_response::StorageBackendHealth;
    let backend = |cap: Option<VolumeCapability>| StorageBackendHealth {
        status: StorageHealthErrorType::StorageDegraded as i32,
        reason: "PathDown".into(),
        message: String::new(),
        volume_capability: cap,
    };
    let block = VolumeCapability {
        access_type: Some(volume_capability::AccessType::Block(Default::default())),
        access_mode: None,
    };
    let q = NodeGetStorageHealthRequest::default();
    let two =
        NodeGetStorageHealthResponse { backend_health: vec![backend(None), backend(Some(block))] };
    assert!(checked(&q, &two).is_empty());
    let twice = NodeGetStorageHealthResponse { backend_health: vec![backend(None), backend(None)] };
    assert_eq!(
        checked(&q, &twice),
        [
            "NodeGetStorageHealthResponse.backend_health: the same (status, reason, volume_capability) twice"
        ]
    );
}

/// What the answer checks leave to the facts: a health answer without `volume_health`, and an
/// entry with status UNKNOWN_VOLUME_HEALTH_TYPE (0, "not set" for a REQUIRED enum) or without a
/// reason, each break a REQUIRED field.
#[test]
fn the_facts_hold_the_required_health_fields() {
    let paths = |a: &dyn Fn() -> Result<(), csikit::Violations>| -> Vec<String> {
        a().err()
            .map(|v| v.iter().map(|one| crate::generated::plain(&one.path)).collect())
            .unwrap_or_default()
    };
    let none = ControllerGetVolumeHealthResponse { volume_health: None };
    assert_eq!(paths(&|| none.validate()), ["volume_health"]);
    let node = NodeGetVolumeHealthResponse { volume_health: None };
    assert_eq!(paths(&|| node.validate()), ["volume_health"]);
    let unset = ControllerGetVolumeHealthResponse {
        volume_health: Some(VolumeHealth {
            volume_id: "v1".into(),
            health_statuses: vec![entry(VolumeHealthErrorType::UnknownVolumeHealthType, "")],
        }),
    };
    let mut found = paths(&|| unset.validate());
    found.sort();
    assert_eq!(
        found,
        ["volume_health.health_statuses.reason", "volume_health.health_statuses.status"]
    );
}
