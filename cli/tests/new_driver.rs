//! `csikit new-driver`: the crate it writes builds offline outside the workspace, serves CSI on
//! a unix socket (derived Identity, its NodeGetInfo, UNIMPLEMENTED for the rest), stops cleanly
//! on SIGTERM, its own `cargo test` passes csikit's conformance suite, and its `deploy/` is what
//! `csikit deploy` derives from the running driver and validates against Kubernetes' schemas;
//! bad command lines are one-line errors with exit code 2 that write nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use csikit::v1::{
    CreateVolumeRequest, GetPluginCapabilitiesRequest, GetPluginInfoRequest, NodeGetInfoRequest,
    NodePublishVolumeRequest, NodeStageVolumeRequest, ProbeRequest, VolumeCapability,
    controller_client::ControllerClient, controller_service_capability,
    identity_client::IdentityClient, node_client::NodeClient, plugin_capability, volume_capability,
};
use tonic::Code;

use support::{csikit, listing, scratch};

/// Runs csikit expecting a bad command line: exit code 2 and exactly one line on stderr,
/// starting with `expected`.
fn refused(args: &[&str], expected: &str) {
    let out = csikit(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: prints nothing on stdout");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line:\n{stderr}");
    assert!(stderr.starts_with(expected), "{args:?}: expected {expected:?}, got:\n{stderr}");
}

#[test]
fn bad_command_lines_exit_2_and_write_nothing() {
    let root = scratch("new-driver-errors");
    let out = root.join("driver");
    let out_str = out.to_str().expect("utf-8");
    refused(
        &["new-driver", "1driver", "--out", out_str],
        "error: '1driver' is not a valid crate name: it must start with a letter",
    );
    refused(
        &["new-driver", "my driver", "--out", out_str],
        "error: 'my driver' is not a valid crate name: ' ' is not allowed",
    );
    refused(
        &["new-driver", "fn", "--out", out_str],
        "error: 'fn' is not a valid crate name: it is a Rust keyword",
    );
    refused(
        &["new-driver", "ok", "--out", out_str, "--plugin-name", "ok_driver.example.com"],
        "error: 'ok_driver.example.com' is not a valid plugin name",
    );
    let long = "d".repeat(60);
    refused(
        &["new-driver", &long, "--out", out_str],
        &format!(
            "error: '{long}.csi.example.com' is not a valid plugin name: it is 76 characters long; the spec allows 63; pass --plugin-name"
        ),
    );
    refused(
        &["new-driver", "ok", "--out", out_str, "--csikit-path", root.to_str().expect("utf-8")],
        "error: --csikit-path: cannot read",
    );
    refused(
        &["new-driver", "ok", "--out", out_str, "--image", "Ok:1"],
        "error: --image 'Ok:1' is not an image reference",
    );
    assert_eq!(listing(&root), Vec::<String>::new(), "nothing written, no temporary folder left");

    // A folder with something in it is refused, and left as it was.
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    refused(
        &["new-driver", "ok", "--out", out_str],
        &format!(
            "error: '{out_str}' exists and is not empty; choose another --out or pass --force"
        ),
    );
    assert_eq!(listing(&out), ["notes.txt"]);
    assert_eq!(listing(&root), ["driver"]);

    // With --force the scaffold's files are written and the others kept.
    let forced = csikit(&["new-driver", "ok", "--out", out_str, "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", String::from_utf8_lossy(&forced.stderr));
    assert_eq!(
        listing(&out),
        [".gitignore", "Cargo.toml", "README.md", "deploy", "notes.txt", "src"]
    );
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).expect("kept"), "mine");
    assert_eq!(listing(&root), ["driver"], "no temporary folder left");

    // An empty folder is fine without --force.
    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let written = csikit(&["new-driver", "ok", "--out", empty.to_str().expect("utf-8")]);
    assert_eq!(written.status.code(), Some(0), "{}", String::from_utf8_lossy(&written.stderr));
    assert_eq!(listing(&empty), [".gitignore", "Cargo.toml", "README.md", "deploy", "src"]);
    // Without --csikit-path the driver asks for the published csikit of this release.
    let manifest = std::fs::read_to_string(empty.join("Cargo.toml")).expect("manifest");
    let version = env!("CARGO_PKG_VERSION").rsplit_once('.').expect("x.y.z").0.to_owned();
    let wanted = format!(r#"csikit = {{ version = "{version}", features = ["server"] }}"#);
    assert!(manifest.contains(&wanted), "{manifest}");
}

/// Polls until `path` accepts a connection, failing early if the driver exits.
fn wait_for_socket(path: &Path, driver: &mut std::process::Child, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::os::unix::net::UnixStream::connect(path).is_err() {
        if let Some(status) = driver.try_wait().expect("wait") {
            panic!("the driver exited ({status}) before serving:\n{}", read_log(log));
        }
        assert!(
            Instant::now() < deadline,
            "no socket at '{}' after 60 s:\n{}",
            path.display(),
            read_log(log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_log(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

async fn channel(path: PathBuf) -> tonic::transport::Channel {
    csikit::channel::connect_unix(&path).await.expect("connects")
}

fn mount() -> Option<VolumeCapability> {
    Some(VolumeCapability {
        access_type: Some(volume_capability::AccessType::Mount(volume_capability::MountVolume {
            fs_type: "ext4".into(),
            ..Default::default()
        })),
        access_mode: Some(volume_capability::AccessMode {
            mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
        }),
    })
}

/// The calls a CO makes first, plus a written RPC, an unwritten one and an invalid request.
/// Returns the channel, which the caller keeps open as a CO would.
async fn talk_to(socket: PathBuf) -> tonic::transport::Channel {
    let socket_dir = socket.parent().expect("socket in a folder").to_owned();
    let ch = channel(socket).await;
    let mut identity = IdentityClient::new(ch.clone());
    assert_eq!(
        identity.probe(ProbeRequest {}).await.expect("Probe").into_inner().ready,
        Some(true)
    );
    let info = identity
        .get_plugin_info(GetPluginInfoRequest {})
        .await
        .expect("GetPluginInfo")
        .into_inner();
    assert_eq!(
        (info.name.as_str(), info.vendor_version.as_str()),
        ("demo-driver.csi.example.com", "0.1.0")
    );
    let caps = identity
        .get_plugin_capabilities(GetPluginCapabilitiesRequest {})
        .await
        .expect("GetPluginCapabilities")
        .into_inner();
    let controller_service = plugin_capability::service::Type::ControllerService as i32;
    assert!(
        caps.capabilities.iter().any(|c| matches!(&c.r#type, Some(plugin_capability::Type::Service(s)) if s.r#type == controller_service)),
        "{caps:?}"
    );

    let mut controller = ControllerClient::new(ch.clone());
    let created = controller
        .create_volume(CreateVolumeRequest {
            name: "vol-1".into(),
            volume_capabilities: mount().into_iter().collect(),
            ..Default::default()
        })
        .await
        .expect("CreateVolume is written")
        .into_inner();
    assert_eq!(created.volume.map(|v| v.volume_id).as_deref(), Some("vol-1"));

    let mut node = NodeClient::new(ch.clone());
    let info = node.node_get_info(NodeGetInfoRequest {}).await.expect("NodeGetInfo").into_inner();
    assert_eq!(info.node_id, "node-7");
    let target = socket_dir.join("pods/p/volumes/kubernetes.io~csi/pv/mount");
    let publish = NodePublishVolumeRequest {
        volume_id: "vol-1".into(),
        target_path: target.to_string_lossy().into_owned(),
        volume_capability: mount(),
        ..Default::default()
    };
    node.node_publish_volume(publish).await.expect("NodePublishVolume is written");
    assert!(target.is_dir(), "the plugin creates the target path");
    let stage = NodeStageVolumeRequest {
        volume_id: "vol-1".into(),
        staging_target_path: "/stage".into(),
        volume_capability: mount(),
        ..Default::default()
    };
    let err = node.node_stage_volume(stage).await.expect_err("NodeStageVolume is not written");
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    // CSI v1.13.0's health RPCs are optional: not written, so UNIMPLEMENTED, and their
    // capabilities are not advertised.
    let health =
        csikit::v1::NodeGetVolumeHealthRequest { volume_id: "vol-1".into(), ..Default::default() };
    let err = node.node_get_volume_health(health).await.expect_err("not written");
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    let err = controller
        .controller_get_volume_health(csikit::v1::ControllerGetVolumeHealthRequest {
            volume_id: "vol-1".into(),
            ..Default::default()
        })
        .await
        .expect_err("not written");
    assert_eq!(err.code(), Code::Unimplemented, "{err:?}");
    let node_caps = node
        .node_get_capabilities(csikit::v1::NodeGetCapabilitiesRequest {})
        .await
        .expect("NodeGetCapabilities")
        .into_inner();
    assert!(node_caps.capabilities.is_empty(), "{node_caps:?}");

    // The RPC the spec obliges every Controller plugin to implement.
    let validated = controller
        .validate_volume_capabilities(csikit::v1::ValidateVolumeCapabilitiesRequest {
            volume_id: "vol-1".into(),
            volume_capabilities: mount().into_iter().collect(),
            ..Default::default()
        })
        .await
        .expect("ValidateVolumeCapabilities is written")
        .into_inner();
    assert!(validated.confirmed.is_some(), "{validated:?}");
    let caps = controller
        .controller_get_capabilities(csikit::v1::ControllerGetCapabilitiesRequest {})
        .await
        .expect("caps")
        .into_inner();
    let rpc_types: Vec<i32> = caps
        .capabilities
        .iter()
        .filter_map(|c| {
            c.r#type.as_ref().map(|controller_service_capability::Type::Rpc(r)| r.r#type)
        })
        .collect();
    let create_delete = controller_service_capability::rpc::Type::CreateDeleteVolume as i32;
    assert_eq!(rpc_types, [create_delete], "{caps:?}");
    let err = controller.create_volume(CreateVolumeRequest::default()).await.expect_err("no name");
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    ch
}

/// Scaffolds a driver, builds it offline against this checkout's csikit (dependencies come
/// from the workspace's lock file and the local registry cache), runs it and talks to it.
#[test]
fn scaffolded_driver_builds_serves_and_stops_on_sigterm() {
    let root = scratch("new-driver-demo");
    let crate_dir = root.join("demo-driver");
    // Nothing is published from here, so the scaffold takes this checkout's csikit by path.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let generated = workspace.join("generated");
    let out = csikit(&[
        "new-driver",
        "demo-driver",
        "--out",
        crate_dir.to_str().expect("utf-8"),
        "--csikit-path",
        generated.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    std::fs::copy(workspace.join("Cargo.lock"), crate_dir.join("Cargo.lock"))
        .expect("copy Cargo.lock");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-driver-target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let started = Instant::now();
    let build = Command::new(&cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        build.status.success(),
        "the scaffold does not build:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    eprintln!("scaffold built in {:.1} s", started.elapsed().as_secs_f64());

    // Its own test runs csikit's conformance suite against it in process, and passes.
    let test = Command::new(&cargo)
        .args(["test", "--offline", "--quiet", "--", "--nocapture"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo test");
    let test_err = String::from_utf8_lossy(&test.stderr);
    assert!(test.status.success(), "the scaffold's conformance test fails:\n{test_err}");
    assert!(
        test_err.contains("csi-conformance: ") && test_err.contains(" passed, 0 failed"),
        "the scaffold's test ran the suite:\n{test_err}"
    );

    // A short socket path: unix socket paths are limited to about 100 bytes.
    let sock_dir = std::env::temp_dir().join(format!("csikit-new-driver-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&sock_dir);
    std::fs::create_dir_all(&sock_dir).expect("socket dir");
    let socket = sock_dir.join("csi.sock");
    let log = root.join("driver.log");
    let mut driver = Command::new(target.join("debug/demo-driver"))
        .env("CSI_ENDPOINT", format!("unix://{}", socket.display()))
        .env("NODE_ID", "node-7")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("start the driver");
    wait_for_socket(&socket, &mut driver, &log);

    // A worker thread keeps the client's connection alive and answering (a CO keeps its
    // connection open), so the shutdown below must not wait for the client to go away.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let _open = runtime.block_on(talk_to(socket.clone()));

    // Its deploy/ is what `csikit deploy` derives from the running driver, and Kubernetes'
    // schemas take it.
    let derived = root.join("derived");
    let deployed = csikit(&[
        "deploy",
        "--endpoint",
        &format!("unix://{}", socket.display()),
        "--image",
        "demo-driver:0.1.0",
        "--out",
        derived.to_str().expect("utf-8"),
    ]);
    assert_eq!(deployed.status.code(), Some(0), "{}", String::from_utf8_lossy(&deployed.stderr));
    let written = crate_dir.join("deploy");
    assert_eq!(support::objects_of(&written), support::objects_of(&derived));
    assert_eq!(
        std::fs::read_to_string(written.join("capabilities.toml")).expect("read"),
        std::fs::read_to_string(derived.join("capabilities.toml")).expect("read")
    );
    if let Some(verdicts) = support::kubernetes_validate(&written, &["1.33", "1.34", "1.35"]) {
        for (release, errors) in verdicts {
            assert!(
                errors.is_empty(),
                "deploy/ against Kubernetes {release}:\n{}",
                errors.join("\n")
            );
        }
    }

    let killed =
        Command::new("kill").args(["-TERM", &driver.id().to_string()]).status().expect("run kill");
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = driver.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = driver.kill();
            panic!("the driver did not stop within 20 s of SIGTERM:\n{}", read_log(&log));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let log_text = read_log(&log);
    assert_eq!(status.code(), Some(0), "exit status after SIGTERM:\n{log_text}");
    assert!(!socket.exists(), "the socket is removed on shutdown");
    assert!(log_text.contains("serving") && log_text.contains("SIGTERM"), "{log_text}");
    assert!(!log_text.contains('\u{1b}'), "no colour codes when stderr is a file:\n{log_text}");
    let _ = std::fs::remove_dir_all(&sock_dir);
}
