//! `csi-view` on CSI v1.13.0 traffic and on v1.12.0 traffic read with v1.13.0's schema: what
//! v1.13.0 reserved (`volume_condition`, the `VOLUME_CONDITION` capabilities) named as v1.12.0
//! named it, and enum values no release names shown as numbers, never as errors. The oracle is
//! protoc with each release's `csi.proto` from the corpus, on the same bytes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use prost::Message as _;

const BIN: &str = env!("CARGO_BIN_EXE_csi-view");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write as _;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn csi-view");
    if let Some(mut s) = child.stdin.take() {
        s.write_all(stdin).expect("write stdin");
    }
    child.wait_with_output().expect("wait")
}

fn ok(o: &Output) -> String {
    String::from_utf8(ok_bytes(o)).expect("utf-8")
}

fn ok_bytes(o: &Output) -> Vec<u8> {
    assert!(o.status.success(), "exit {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    o.stdout.clone()
}

/// v1.12.0 answers that carry what v1.13.0 reserved, built with `csikit::v1_12`'s types as a
/// v1.12.0 plugin sends them.
fn v1_12_answers() -> Vec<(&'static str, Vec<u8>)> {
    use csikit::v1_12 as old;
    let condition =
        || Some(old::VolumeCondition { abnormal: true, message: "disk is gone".into() });
    let volume = || Some(old::Volume { volume_id: "vol-1".into(), ..Default::default() });
    let controller_rpc = |t: i32| old::ControllerServiceCapability {
        r#type: Some(old::controller_service_capability::Type::Rpc(
            old::controller_service_capability::Rpc { r#type: t },
        )),
    };
    let node_rpc = |t: i32| old::NodeServiceCapability {
        r#type: Some(old::node_service_capability::Type::Rpc(old::node_service_capability::Rpc {
            r#type: t,
        })),
    };
    use old::controller_service_capability::rpc::Type as C;
    use old::node_service_capability::rpc::Type as N;
    vec![
        (
            "ControllerGetVolumeResponse",
            old::ControllerGetVolumeResponse {
                volume: volume(),
                status: Some(old::controller_get_volume_response::VolumeStatus {
                    published_node_ids: vec!["node-1".into()],
                    volume_condition: condition(),
                }),
            }
            .encode_to_vec(),
        ),
        (
            "ListVolumesResponse",
            old::ListVolumesResponse {
                entries: vec![old::list_volumes_response::Entry {
                    volume: volume(),
                    status: Some(old::list_volumes_response::VolumeStatus {
                        published_node_ids: vec![],
                        volume_condition: condition(),
                    }),
                }],
                next_token: String::new(),
            }
            .encode_to_vec(),
        ),
        (
            "NodeGetVolumeStatsResponse",
            old::NodeGetVolumeStatsResponse {
                usage: vec![old::VolumeUsage { available: 5, total: 10, used: 5, unit: 1 }],
                volume_condition: condition(),
            }
            .encode_to_vec(),
        ),
        (
            "ControllerGetCapabilitiesResponse",
            old::ControllerGetCapabilitiesResponse {
                capabilities: vec![
                    controller_rpc(C::CreateDeleteVolume as i32),
                    controller_rpc(C::VolumeCondition as i32),
                    controller_rpc(C::GetVolume as i32),
                ],
            }
            .encode_to_vec(),
        ),
        (
            "NodeGetCapabilitiesResponse",
            old::NodeGetCapabilitiesResponse {
                capabilities: vec![
                    node_rpc(N::StageUnstageVolume as i32),
                    node_rpc(N::VolumeCondition as i32),
                ],
            }
            .encode_to_vec(),
        ),
    ]
}

/// The corpus folder of a release, when the corpus is there (a loud skip, or a failure under
/// CSIKIT_REQUIRE_CORPUS, when not), and whether protoc runs.
fn oracle_inputs() -> Option<PathBuf> {
    let dir = csikit_spec::corpus_dir().join("csi-spec");
    if !dir.join("v1.13.0/csi.proto").is_file() || !dir.join("v1.12.0/csi.proto").is_file() {
        csikit_spec::skip_missing(&format!(
            "the corpus's v1.12.0 and v1.13.0 protos under '{}' are missing; this test did not run",
            dir.display()
        ));
        return None;
    }
    if !Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success()) {
        csikit_spec::skip_missing("protoc is missing; this test did not run");
        return None;
    }
    Some(dir)
}

/// protoc `mode` (`--decode=csi.v1.X` or `--encode=csi.v1.X`) with release `release`'s proto.
fn protoc(spec: &Path, release: &str, mode: &str, stdin: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let dir = spec.join(release);
    let mut child = Command::new("protoc")
        .arg(format!("-I{}", dir.display()))
        .arg(mode)
        .arg("csi.proto")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn protoc");
    if let Some(mut s) = child.stdin.take() {
        s.write_all(stdin).expect("write");
    }
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "protoc {mode}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn v1_12_answers_read_with_v1_13_name_what_it_reserved_as_protoc_with_v1_12_does() {
    let Some(spec) = oracle_inputs() else { return };
    for (ty, bytes) in v1_12_answers() {
        let full = format!("csi.v1.{ty}");
        // The bytes hold what v1.13.0 does not know: protoc with its proto shows a bare number.
        let new = String::from_utf8(protoc(&spec, "v1.13.0", &format!("--decode={full}"), &bytes))
            .expect("utf-8");
        let unknown_to_v1_13 =
            new.contains("2 {") || new.contains("type: 11") || new.contains("type: 4");
        assert!(unknown_to_v1_13, "{ty}: protoc with v1.13.0 knows it all:\n{new}");
        // The built-in schema (v1.13.0) prints what protoc with v1.12.0 prints.
        let ours = ok(&run(&["decode", "--type", ty, "--no-annotations"], &bytes));
        let old = String::from_utf8(protoc(&spec, "v1.12.0", &format!("--decode={full}"), &bytes))
            .expect("utf-8");
        assert_eq!(ours, old, "{ty}");
        // protoc with v1.12.0 encodes the text back to the same bytes.
        assert_eq!(protoc(&spec, "v1.12.0", &format!("--encode={full}"), ours.as_bytes()), bytes);
        // So does csi-view, with v1.13.0.
        assert_eq!(ok_bytes(&run(&["encode", "--type", ty], ours.as_bytes())), bytes, "{ty}");
        // Annotated, each is marked as v1.12.0's, reserved in v1.13.0.
        let annotated = ok(&run(&["decode", "--type", ty], &bytes));
        assert!(
            annotated.contains("named as in v1.12.0, reserved in v1.13.0"),
            "{ty}:\n{annotated}"
        );
        assert!(!annotated.contains("unknown field"), "{ty}:\n{annotated}");
        // Read exactly by its type: v1.13.0 knows every record, by the old names.
        let ranked = ok(&run(&["detect", "--top", "500"], &bytes));
        assert!(
            ranked.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.get(1) == Some(&full.as_str()) && words.get(2..) == Some(&["exact"][..])
            }),
            "{ty}:\n{ranked}"
        );
        // Validation passes, with a note for each.
        let v = ok(&run(&["validate", "--type", ty], &bytes));
        assert!(v.contains(": valid") && v.contains("note: "), "{ty}:\n{v}");
    }
}

#[test]
fn the_old_names_reach_json_and_the_release_flag_reads_v1_12_itself() {
    let (ty, bytes) = v1_12_answers().swap_remove(0);
    let json = ok(&run(&["decode", "--type", ty, "--format", "json"], &bytes));
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["status"]["volumeCondition"]["abnormal"], true, "{json}");
    // --release v1.12.0 reads it as v1.12.0 (csikit's kept tables, or the corpus's folder):
    // nothing to mark.
    let text = ok(&run(&["decode", "--type", ty, "--release", "v1.12.0"], &bytes));
    assert!(text.contains("volume_condition {"), "{text}");
    assert!(!text.contains("reserved in"), "{text}");
    // v1.13.0 named explicitly is the built-in schema.
    let same = ok(&run(&["decode", "--type", ty, "--release", "v1.13.0"], &bytes));
    assert_eq!(same, ok(&run(&["decode", "--type", ty], &bytes)));
    let bad = run(&["decode", "--type", ty, "--release", "v9.9.9"], &bytes);
    assert_eq!(bad.status.code(), Some(2));
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(e.contains("unknown CSI release 'v9.9.9'") && e.contains("v1.12.0"), "{e}");
}

#[test]
fn enum_values_no_release_names_are_numbers_and_never_errors() {
    use csikit::v1::{ControllerGetVolumeHealthResponse, VolumeHealth, volume_health};
    let entry = |status: i32| volume_health::VolumeHealthEntry {
        status,
        reason: "Odd".into(),
        message: String::new(),
    };
    let bytes = ControllerGetVolumeHealthResponse {
        volume_health: Some(VolumeHealth {
            volume_id: "vol-1".into(),
            health_statuses: vec![entry(1), entry(7)],
        }),
    }
    .encode_to_vec();
    let ty = "ControllerGetVolumeHealthResponse";
    let annotated = ok(&run(&["decode", "--type", ty], &bytes));
    assert!(annotated.contains("status: DEGRADED"), "{annotated}");
    assert!(
        annotated.contains("status: 7  # REQUIRED; unknown VolumeHealthErrorType value"),
        "{annotated}"
    );
    let v = run(&["validate", "--type", ty], &bytes);
    let out = ok(&v);
    assert!(out.contains("csi.v1.ControllerGetVolumeHealthResponse: valid"), "{out}");
    assert!(
        out.contains("note: volume_health.health_statuses[1].status: 7 is no csi.v1.VolumeHealthErrorType value"),
        "{out}"
    );
    let json = ok(&run(&["decode", "--type", ty, "--format", "json"], &bytes));
    assert!(json.contains("\"status\": 7") || json.contains("\"status\":7"), "{json}");
    // Text with the number encodes back to the same bytes.
    let plain = ok(&run(&["decode", "--type", ty, "--no-annotations"], &bytes));
    assert_eq!(ok_bytes(&run(&["encode", "--type", ty], plain.as_bytes())), bytes);
    let Some(spec) = oracle_inputs() else { return };
    let full = format!("--decode=csi.v1.{ty}");
    assert_eq!(plain.into_bytes(), protoc(&spec, "v1.13.0", &full, &bytes));
}

/// A capture of a v1.12.0 plugin (its answers built with `csikit::v1_12`'s types, as the proxy
/// records them): `decode --capture` names what v1.13.0 reserved and `validate --capture` passes.
#[test]
fn a_v1_12_plugins_capture_reads_by_the_old_names() {
    use csi_view_core::capture::{Call, Header, encode};
    let answers = v1_12_answers();
    let answer =
        |ty: &str| answers.iter().find(|(t, _)| *t == ty).map(|(_, b)| b.clone()).expect("answer");
    let request = csikit::v1::ControllerGetVolumeRequest { volume_id: "vol-1".into() };
    let call = |n: u64, method: &str, request: Vec<u8>, response: Vec<u8>| Call {
        call: n,
        method: method.to_owned(),
        start: "2026-11-27T00:00:00Z".to_owned(),
        start_unix_ns: u128::from(n),
        duration_ns: 1,
        status: 0,
        message: String::new(),
        requests: vec![encode(&request)],
        responses: vec![encode(&response)],
    };
    let header = Header {
        csi_view_capture: 1,
        secrets: "blanked".to_owned(),
        upstream: "unix:///plugin.sock".to_owned(),
    };
    let lines = [
        serde_json::to_string(&header).expect("json"),
        serde_json::to_string(&call(
            1,
            "/csi.v1.Controller/ControllerGetCapabilities",
            Vec::new(),
            answer("ControllerGetCapabilitiesResponse"),
        ))
        .expect("json"),
        serde_json::to_string(&call(
            2,
            "/csi.v1.Controller/ControllerGetVolume",
            request.encode_to_vec(),
            answer("ControllerGetVolumeResponse"),
        ))
        .expect("json"),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("v1.12.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write capture");
    let path = path.to_str().expect("utf-8 path");
    let text = ok(&run(&["decode", "--capture", path], b""));
    let marked = "named as in v1.12.0, reserved in v1.13.0";
    assert!(text.contains(&format!("type: VOLUME_CONDITION  # {marked}")), "{text}");
    assert!(text.contains("volume_condition {"), "{text}");
    assert!(!text.contains("unknown field"), "{text}");
    let checked = ok(&run(&["validate", "--capture", path], b""));
    assert!(!checked.contains("is REQUIRED"), "{checked}");
    assert_eq!(checked.matches("note: ").count(), 2, "{checked}");
}

/// `describe METHOD` sets out an RPC with no plugin: v1.13.0's health RPCs with their facts.
#[test]
fn describe_sets_out_a_health_rpc_with_no_plugin() {
    let text = ok(&run(&["describe", "ControllerGetVolumeHealth"], b""));
    for line in [
        "rpc csi.v1.Controller/ControllerGetVolumeHealth  alpha",
        "  request csi.v1.ControllerGetVolumeHealthRequest  alpha",
        "  message csi.v1.VolumeHealth.VolumeHealthEntry",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in:\n{text}");
    }
    // Its obligation comes from the capability's comment in the proto (csikit's server tables).
    assert!(
        text.contains(
            "obliged: when the plugin advertises Controller GET_VOLUME_HEALTH (the proto's comment)"
        ),
        "{text}"
    );
    let bad = run(&["describe", "ControllerGetVolumeHealth", "--format", "json"], b"");
    assert_eq!(bad.status.code(), Some(2));
    let unknown = run(&["describe", "ControllerGetVolumeHelth"], b"");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("ControllerGetVolumeHealth"));
}
