//! `csi-view replay` as a command: traffic recorded here through `csi-view proxy` (overlapping
//! calls, a required secret the capture blanks, ids, tokens and contexts the plugin generates)
//! sent again to another memdriver whose ids and node id differ, every call the same with the
//! secrets refilled and not without them; a plugin that hangs is DEADLINE_EXCEEDED after
//! `--timeout` and the replay goes on; bad input (a truncated capture, bad base64, bytes that are
//! not the method's type, an unknown method, a bad endpoint) is one line naming the capture's
//! line, exit 2. memdriver is served in this process from its library; csi-view is the binary.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use csikit::v1::controller_client::ControllerClient;
use csikit::v1::identity_client::IdentityClient;
use csikit::v1::node_client::NodeClient;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume, access_mode::Mode};
use csikit::v1::*;
use prost::Message as _;
use support::wait_for_socket;

const BIN: &str = env!("CARGO_BIN_EXE_csi-view");

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// memdriver served at `socket` on `rt` until the runtime is dropped.
fn serve_memdriver(rt: &tokio::runtime::Runtime, socket: &Path, config: memdriver::Config) {
    let endpoint = csikit::server::Endpoint::Unix(socket.to_owned());
    let driver = Arc::new(memdriver::Driver::new(config));
    rt.spawn(async move {
        let server = memdriver::builder(driver).build().await.expect("builds");
        server.serve(&endpoint, std::future::pending()).await.expect("serves");
    });
    rt.block_on(wait_for_socket(socket));
}

fn replay(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.arg("replay").args(args).env_remove("CSI_ENDPOINT").stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs csi-view")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with one line on stderr holding every one of `words`, nothing on stdout.
fn assert_bad_input(o: &Output, words: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stdout: {} stderr: {err}", stdout(o));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    for w in words {
        assert!(err.contains(w), "'{w}' not in: {err}");
    }
    assert!(o.stdout.is_empty(), "{}", stdout(o));
}

const HEADER: &str = r#"{"csi_view_capture":1,"secrets":"blanked","upstream":"unix:///p.sock"}"#;

/// One recorded call, as the proxy writes it.
fn line(call: u64, method: &str, request: &[u8], status: i32, response: Option<&[u8]>) -> String {
    let b64 = csi_view_core::capture::encode;
    serde_json::json!({
        "call": call,
        "method": method,
        "start": "2026-11-24T00:00:00Z",
        "start_unix_ns": 1_000_000u64 * call,
        "duration_ns": 1000,
        "status": status,
        "message": "",
        "requests": [b64(request)],
        "responses": response.map(|r| vec![b64(r)]).unwrap_or_default(),
    })
    .to_string()
}

fn write(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

#[test]
fn bad_input_is_one_line_naming_the_capture_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("dir");
    let probe = line(1, "/csi.v1.Identity/Probe", b"", 0, Some(b""));
    let endpoint = ["--endpoint", "unix:///nonexistent/csi.sock"];
    let run = |path: &Path, extra: &[&str]| {
        let path = path.to_str().expect("utf-8");
        replay(&[&[path], extra].concat(), &[])
    };

    // Cut in the middle of its last line.
    let whole = format!("{HEADER}\n{probe}\n{probe}\n");
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, &whole[..whole.len() - 30]).expect("write");
    assert_bad_input(&run(&cut, &endpoint), &["cut.jsonl:3:", "truncated"]);

    let bad = line(1, "/csi.v1.Identity/Probe", b"", 0, Some(b""))
        .replace(r#""requests":[""]"#, r#""requests":["AB*D"]"#);
    let path = write(dir.path(), "b64.jsonl", &[HEADER.into(), probe.clone(), bad]);
    assert_bad_input(&run(&path, &endpoint), &["b64.jsonl:3:", "not base64", "character 2"]);

    // A length of 5 with one byte left.
    let torn = line(7, "/csi.v1.Controller/DeleteVolume", &[0x0a, 0x05, 0x61], 0, Some(b""));
    let path = write(dir.path(), "torn.jsonl", &[HEADER.into(), torn]);
    assert_bad_input(
        &run(&path, &endpoint),
        &["torn.jsonl:2: call #7: request 1 is not a csi.v1.DeleteVolumeRequest", "at byte"],
    );

    let unknown = line(2, "/csi.v1.Identity/Nope", b"", 0, Some(b""));
    let path = write(dir.path(), "unknown.jsonl", &[HEADER.into(), probe.clone(), unknown]);
    assert_bad_input(
        &run(&path, &endpoint),
        &["unknown.jsonl:3: call #2: method /csi.v1.Identity/Nope is not in the schema"],
    );

    let not_capture = write(dir.path(), "plain.jsonl", &["{}".into()]);
    assert_bad_input(&run(&not_capture, &endpoint), &["plain.jsonl:1:", "not a csi-view capture"]);
    assert_bad_input(&run(&dir.path().join("missing.jsonl"), &endpoint), &["missing.jsonl"]);

    // A good capture, then the endpoint: not one, nothing there, none given.
    let good = write(dir.path(), "good.jsonl", &[HEADER.into(), probe]);
    assert_bad_input(&run(&good, &["--endpoint", "http://x"]), &["http://x"]);
    let nothing = format!("unix://{}", dir.path().join("none.sock").display());
    assert_bad_input(&run(&good, &["--endpoint", &nothing, "--timeout", "2"]), &[&nothing]);
    assert_bad_input(&run(&good, &[]), &["no endpoint", "CSI_ENDPOINT"]);
    assert_bad_input(&run(&good, &["--endpoint", "unix:///x", "--timeout", "0"]), &["--timeout 0"]);
    // A driver log that is not there: said before anything is sent.
    let log = dir.path().join("no-such.log");
    let log = log.to_str().expect("utf-8");
    assert_bad_input(
        &run(&good, &[&endpoint[..], &["--driver-log", log]].concat()),
        &["cannot read the driver log", "no-such.log"],
    );
}

fn capability() -> VolumeCapability {
    VolumeCapability {
        access_type: Some(AccessType::Mount(MountVolume::default())),
        access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
    }
}

#[test]
fn a_plugin_that_hangs_is_deadline_exceeded_and_the_replay_goes_on() {
    let dir = tempfile::tempdir().expect("dir");
    let rt = runtime();
    let socket = dir.path().join("md.sock");
    serve_memdriver(&rt, &socket, memdriver::Config::default());
    let capabilities = rt.block_on(async {
        let ch = csikit::channel::connect_unix(&socket).await.expect("connects");
        IdentityClient::new(ch)
            .get_plugin_capabilities(GetPluginCapabilitiesRequest {})
            .await
            .expect("answers")
            .into_inner()
    });
    // Recorded as quick; memdriver's delay hook holds it for a minute now.
    let slow = CreateVolumeRequest {
        name: "slow".into(),
        volume_capabilities: vec![capability()],
        parameters: [(memdriver::DELAY_KEY.to_owned(), "60000".to_owned())].into(),
        ..Default::default()
    };
    let created = CreateVolumeResponse {
        volume: Some(Volume { volume_id: "vol-0000000001".into(), ..Default::default() }),
    };
    let path = write(
        dir.path(),
        "hang.jsonl",
        &[
            HEADER.into(),
            line(
                1,
                "/csi.v1.Controller/CreateVolume",
                &slow.encode_to_vec(),
                0,
                Some(&created.encode_to_vec()),
            ),
            line(
                2,
                "/csi.v1.Identity/GetPluginCapabilities",
                b"",
                0,
                Some(&capabilities.encode_to_vec()),
            ),
        ],
    );
    let endpoint = format!("unix://{}", socket.display());
    let started = Instant::now();
    let o = replay(
        &[path.to_str().expect("utf-8"), "--timeout", "1", "--format", "json"],
        &[("CSI_ENDPOINT", &endpoint)],
    );
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    // Not a measure of speed: the one-second timeout ended the call, long before its minute.
    assert!(took < Duration::from_secs(30), "the replay took {took:?}");
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    assert_eq!(report["calls"][0]["outcome"], "new_error", "{report}");
    assert_eq!(report["calls"][0]["code"], "DEADLINE_EXCEEDED", "{report}");
    assert_eq!(report["calls"][1]["outcome"], "same", "{report}");
    assert_eq!(report["summary"]["new_errors"], 1);
    // The same in text, once more with --endpoint.
    let o =
        replay(&[path.to_str().expect("utf-8"), "--endpoint", &endpoint, "--timeout", "1"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "#1 /csi.v1.Controller/CreateVolume: new error: DEADLINE_EXCEEDED: no answer from "
        ),
        "{text}"
    );
    assert!(
        text.ends_with("replay: 2 calls: 1 same, 1 new error; 0 generated values followed\n"),
        "{text}"
    );
    rt.shutdown_background();
}

/// What a CO did through the proxy: a node's id, a volume, then two created at once, one
/// published on the node, all listed page by page, a snapshot of another, everything undone.
/// (The page boundary falls after the first volume: where it falls between the two made at once
/// depends on which one memdriver numbered first, which `--serial` changes.)
async fn co_lifecycle(socket: &Path, dir: &Path, secret: &(String, String)) {
    let ch = csikit::channel::connect_unix(socket).await.expect("connects");
    let mut controller = ControllerClient::new(ch.clone());
    let mut node = NodeClient::new(ch);
    let secrets: std::collections::HashMap<String, String> = [secret.clone()].into();
    let node_id =
        node.node_get_info(NodeGetInfoRequest {}).await.expect("info").into_inner().node_id;
    let create = |name: &str, delay: Option<&str>| CreateVolumeRequest {
        name: name.into(),
        volume_capabilities: vec![capability()],
        secrets: secrets.clone(),
        parameters: delay
            .map(|d| (memdriver::DELAY_KEY.to_owned(), d.to_owned()))
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let first = controller.create_volume(create("first", None)).await.expect("first");
    let first = first.into_inner().volume.expect("volume");
    // Overlapping in the recording: the slow one is still running when the quick one starts.
    let (mut c1, mut c2) = (controller.clone(), controller.clone());
    let (slow, quick) = tokio::join!(c1.create_volume(create("slow", Some("300"))), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        c2.create_volume(create("quick", None)).await
    });
    let slow = slow.expect("slow created").into_inner().volume.expect("volume");
    let quick = quick.expect("quick created").into_inner().volume.expect("volume");
    let published = controller
        .controller_publish_volume(ControllerPublishVolumeRequest {
            volume_id: slow.volume_id.clone(),
            node_id: node_id.clone(),
            volume_capability: Some(capability()),
            secrets: secrets.clone(),
            volume_context: slow.volume_context.clone(),
            ..Default::default()
        })
        .await
        .expect("published")
        .into_inner();
    let staging = dir.join("staging").display().to_string();
    let target = dir.join("pods/p/mount").display().to_string();
    node.node_stage_volume(NodeStageVolumeRequest {
        volume_id: slow.volume_id.clone(),
        publish_context: published.publish_context.clone(),
        staging_target_path: staging.clone(),
        volume_capability: Some(capability()),
        secrets: secrets.clone(),
        volume_context: slow.volume_context.clone(),
    })
    .await
    .expect("staged");
    node.node_publish_volume(NodePublishVolumeRequest {
        volume_id: slow.volume_id.clone(),
        publish_context: published.publish_context.clone(),
        staging_target_path: staging.clone(),
        target_path: target.clone(),
        volume_capability: Some(capability()),
        secrets: secrets.clone(),
        volume_context: slow.volume_context.clone(),
        ..Default::default()
    })
    .await
    .expect("published on the node");
    let page = controller
        .list_volumes(ListVolumesRequest { max_entries: 1, starting_token: String::new() })
        .await
        .expect("page 1")
        .into_inner();
    assert!(!page.next_token.is_empty());
    assert_eq!(page.entries[0].volume.as_ref().map(|v| &v.volume_id), Some(&first.volume_id));
    controller
        .list_volumes(ListVolumesRequest { max_entries: 2, starting_token: page.next_token })
        .await
        .expect("page 2");
    let snapshot = controller
        .create_snapshot(CreateSnapshotRequest {
            source_volume_id: quick.volume_id.clone(),
            name: "snap".into(),
            secrets: secrets.clone(),
            ..Default::default()
        })
        .await
        .expect("snapshot")
        .into_inner()
        .snapshot
        .expect("a snapshot");
    controller
        .list_snapshots(ListSnapshotsRequest {
            snapshot_id: snapshot.snapshot_id.clone(),
            secrets: secrets.clone(),
            ..Default::default()
        })
        .await
        .expect("listed");
    controller
        .delete_snapshot(DeleteSnapshotRequest {
            snapshot_id: snapshot.snapshot_id,
            secrets: secrets.clone(),
        })
        .await
        .expect("snapshot deleted");
    node.node_unpublish_volume(NodeUnpublishVolumeRequest {
        volume_id: slow.volume_id.clone(),
        target_path: target,
    })
    .await
    .expect("unpublished on the node");
    node.node_unstage_volume(NodeUnstageVolumeRequest {
        volume_id: slow.volume_id.clone(),
        staging_target_path: staging,
    })
    .await
    .expect("unstaged");
    controller
        .controller_unpublish_volume(ControllerUnpublishVolumeRequest {
            volume_id: slow.volume_id.clone(),
            node_id,
            secrets: secrets.clone(),
        })
        .await
        .expect("unpublished");
    for id in [slow.volume_id, quick.volume_id, first.volume_id] {
        controller
            .delete_volume(DeleteVolumeRequest { volume_id: id, secrets: secrets.clone() })
            .await
            .expect("deleted");
    }
}

/// Makes memdriver's next ids differ from a fresh one's: a volume and a snapshot made and gone.
async fn advance_ids(socket: &Path, secret: &(String, String)) {
    let ch = csikit::channel::connect_unix(socket).await.expect("connects");
    let mut controller = ControllerClient::new(ch);
    let secrets: std::collections::HashMap<String, String> = [secret.clone()].into();
    let v = controller
        .create_volume(CreateVolumeRequest {
            name: "before".into(),
            volume_capabilities: vec![capability()],
            secrets: secrets.clone(),
            ..Default::default()
        })
        .await
        .expect("created")
        .into_inner()
        .volume
        .expect("volume");
    controller
        .delete_volume(DeleteVolumeRequest { volume_id: v.volume_id, secrets })
        .await
        .expect("deleted");
}

fn stop(child: &mut Child) {
    let status =
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill");
    assert!(status.success());
    assert_eq!(child.wait().expect("proxy exits").code(), Some(0));
}

#[test]
fn recorded_traffic_replays_the_same_on_another_plugin_with_its_ids_and_secrets_followed() {
    let dir = tempfile::tempdir().expect("dir");
    let rt = runtime();
    let secret = ("memdriver-key".to_owned(), format!("s3cr3t-{}", std::process::id()));
    let config = |node: &str| memdriver::Config {
        node_id: node.into(),
        required_secret: Some(secret.clone()),
        ..memdriver::Config::default()
    };
    let recorded = dir.path().join("a.sock");
    serve_memdriver(&rt, &recorded, config("node-recorded"));
    std::fs::create_dir_all(dir.path().join("pods/p")).expect("the target's parent");

    let listen = dir.path().join("proxy.sock");
    let capture = dir.path().join("capture.jsonl");
    let mut proxy = Command::new(BIN)
        .args(["proxy", "--listen", &format!("unix://{}", listen.display())])
        .args(["--upstream", &format!("unix://{}", recorded.display())])
        .args(["--record", capture.to_str().expect("utf-8")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts the proxy");
    rt.block_on(async {
        wait_for_socket(&listen).await;
        co_lifecycle(&listen, dir.path(), &secret).await;
    });
    stop(&mut proxy);
    let text = std::fs::read_to_string(&capture).expect("the capture");
    assert!(!text.contains(&secret.1), "the capture blanks the secret");
    let calls = text.lines().count() - 1;

    // Another plugin: another node id, ids further on.
    let replayed = dir.path().join("b.sock");
    serve_memdriver(&rt, &replayed, config("node-replayed"));
    rt.block_on(advance_ids(&replayed, &secret));
    let endpoint = format!("unix://{}", replayed.display());
    let kinds: String = csikit::runtime::secrets::SANITY_KINDS
        .iter()
        .map(|(kind, _)| format!("{kind}:\n  {}: \"{}\"\n", secret.0, secret.1))
        .collect();
    let secrets = dir.path().join("secrets.yaml");
    std::fs::write(&secrets, kinds).expect("secrets file");
    let capture = capture.to_str().expect("utf-8");
    let secrets = secrets.to_str().expect("utf-8");

    for serial in [false, true] {
        let mut args =
            vec![capture, "--endpoint", &endpoint, "--secrets", secrets, "--format", "json"];
        if serial {
            args.push("--serial");
        }
        let o = replay(&args, &[]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
        assert_eq!(stderr(&o), "");
        assert!(!out.contains(&secret.1));
        let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(report["summary"]["same"], calls, "{report}");
        // The node id, the volume ids, the snapshot id and the publish context came back
        // different, and requests carried the new ones (the page token among them).
        assert!(report["summary"]["values_mapped"].as_u64() >= Some(6), "{report}");
        let rewritten = |method: &str| -> u64 {
            report["calls"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["method"] == method)
                .map(|c| c["rewritten"].as_u64().unwrap_or(0))
                .sum()
        };
        assert!(rewritten("/csi.v1.Controller/ListVolumes") >= 1, "the page token is followed");
        assert!(rewritten("/csi.v1.Node/NodeStageVolume") >= 2, "volume id and publish context");
        assert!(
            rewritten("/csi.v1.Controller/ControllerPublishVolume") >= 2,
            "volume and node ids"
        );
    }

    // The schema read from the spec folder at run time: the same facts, so the same replay.
    if let Some(corpus) = csikit_spec::corpus_or_skip() {
        let spec = corpus.join("csi-spec").join(csikit::SPEC_RELEASE);
        let spec = spec.to_str().expect("utf-8");
        let o = replay(
            &[capture, "--endpoint", &endpoint, "--secrets", secrets, "--spec-dir", spec],
            &[],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains(&format!("replay: {calls} calls: {calls} same;")),
            "{}",
            stdout(&o)
        );
    }

    // Without the secrets file the blanked values go as recorded: memdriver refuses them, once
    // warned about, and no secret is printed.
    let o = replay(&[capture, "--endpoint", &endpoint], &[]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--secrets"), "{err}");
    assert!(
        out.contains("#2 /csi.v1.Controller/CreateVolume: new error: UNAUTHENTICATED"),
        "{out}"
    );
    // The general table, saying where it is carried from when the release is read from its
    // proto alone.
    let whose = csikit::v1::errors::GENERAL
        .first()
        .and_then(|r| r.carried_from)
        .map_or_else(String::new, |f| format!(", carried from {f}'s spec.md"));
    assert!(
        out.contains(&format!("    spec (the general error table{whose}): ")),
        "the spec's row: {out}"
    );
    assert!(!out.contains(&secret.1) && !err.contains(&secret.1));
    rt.shutdown_background();
}
