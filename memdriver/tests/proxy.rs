//! `csi-view proxy` between real clients and memdriver: the grpcio lifecycle of interop.py (default
//! channel options) and a tonic lifecycle go through the proxy. Every call Python made must be in
//! the proxy's recording with the same request and response (decoded and compared as messages;
//! Python's own serialisation is the oracle) and the same status; the printed output and the
//! default recording hold no secret value; overlapping calls on one volume are flagged; and
//! `csi-view decode --capture` names the type of every recorded message from its method. And
//! `csi-view proxy` started before memdriver answers UNAVAILABLE until memdriver listens, then
//! serves, tonic and grpcio clients alike.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use csi_view_core::capture;
use csi_view_core::mask::{SecretMask, redact_bytes};
use csi_view_core::schema::Schema;
use csikit::v1::controller_client::ControllerClient;
use csikit::v1::identity_client::IdentityClient;
use csikit::v1::node_client::NodeClient;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume};
use csikit::v1::*;
use memdriver::PLUGIN_NAME;
use prost_reflect::DynamicMessage;
use support::{Lifecycle, Server, grpcio_stubs};

/// The proxy, in this process, on its own runtime thread, until `stop` fires.
struct Proxy {
    socket: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<csi_view_proxy::Summary>>>,
}

impl Proxy {
    fn start(dir: &Path, upstream: &Path, record: &Path, output: &Path) -> Proxy {
        let socket = dir.join("proxy.sock");
        let options = csi_view_proxy::Options {
            listen: socket.clone(),
            upstream: upstream.to_owned(),
            record: Some(record.to_owned()),
            keep_secrets: false,
            format: csi_view_proxy::Format::Text,
        };
        let out: Box<dyn Write + Send> =
            Box::new(std::io::BufWriter::new(std::fs::File::create(output).expect("output")));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let schema = Arc::new(Schema::builtin()?);
            rt.block_on(csi_view_proxy::run(schema, options, out, async {
                let _ = stopped.await;
            }))
        });
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(std::time::Instant::now() < deadline, "the proxy never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Proxy { socket, stop: Some(stop), thread: Some(thread) }
    }

    fn stop(&mut self) -> csi_view_proxy::Summary {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let thread = self.thread.take().expect("running");
        thread.join().expect("proxy thread").expect("proxy ran")
    }
}

async fn channel(path: &Path) -> tonic::transport::Channel {
    csikit::channel::connect_unix(&path).await.expect("connects")
}

/// A tonic CO's lifecycle: create, publish, stage, publish on the node, and back, then delete.
async fn tonic_lifecycle(socket: &Path, dir: &Path, secret: (&str, &str)) {
    let ch = channel(socket).await;
    let mut controller = ControllerClient::new(ch.clone());
    let mut node = NodeClient::new(ch);
    let secrets: std::collections::HashMap<String, String> =
        [(secret.0.to_owned(), secret.1.to_owned())].into();
    let cap = VolumeCapability {
        access_type: Some(AccessType::Mount(MountVolume::default())),
        access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
    };
    let created = controller
        .create_volume(CreateVolumeRequest {
            name: "tonic-vol".into(),
            volume_capabilities: vec![cap.clone()],
            secrets: secrets.clone(),
            ..CreateVolumeRequest::default()
        })
        .await
        .expect("CreateVolume")
        .into_inner();
    let id = created.volume.expect("a volume").volume_id;
    let node_id =
        node.node_get_info(NodeGetInfoRequest {}).await.expect("info").into_inner().node_id;
    let published = controller
        .controller_publish_volume(ControllerPublishVolumeRequest {
            volume_id: id.clone(),
            node_id: node_id.clone(),
            volume_capability: Some(cap.clone()),
            secrets: secrets.clone(),
            ..ControllerPublishVolumeRequest::default()
        })
        .await
        .expect("ControllerPublishVolume")
        .into_inner();
    let staging = dir.join("kubelet-tonic/staging");
    let target = dir.join("kubelet-tonic/pods/p/mount");
    std::fs::create_dir_all(&staging).expect("staging dir");
    std::fs::create_dir_all(target.parent().expect("parent")).expect("target parent");
    node.node_stage_volume(NodeStageVolumeRequest {
        volume_id: id.clone(),
        staging_target_path: staging.display().to_string(),
        volume_capability: Some(cap.clone()),
        publish_context: published.publish_context.clone(),
        secrets: secrets.clone(),
        ..NodeStageVolumeRequest::default()
    })
    .await
    .expect("NodeStageVolume");
    node.node_publish_volume(NodePublishVolumeRequest {
        volume_id: id.clone(),
        staging_target_path: staging.display().to_string(),
        target_path: target.display().to_string(),
        volume_capability: Some(cap),
        publish_context: published.publish_context,
        secrets: secrets.clone(),
        ..NodePublishVolumeRequest::default()
    })
    .await
    .expect("NodePublishVolume");
    node.node_unpublish_volume(NodeUnpublishVolumeRequest {
        volume_id: id.clone(),
        target_path: target.display().to_string(),
    })
    .await
    .expect("NodeUnpublishVolume");
    node.node_unstage_volume(NodeUnstageVolumeRequest {
        volume_id: id.clone(),
        staging_target_path: staging.display().to_string(),
    })
    .await
    .expect("NodeUnstageVolume");
    controller
        .controller_unpublish_volume(ControllerUnpublishVolumeRequest {
            volume_id: id.clone(),
            node_id,
            secrets: secrets.clone(),
        })
        .await
        .expect("ControllerUnpublishVolume");
    controller
        .delete_volume(DeleteVolumeRequest { volume_id: id, secrets })
        .await
        .expect("DeleteVolume");
}

/// A message of `desc` from `bytes`, with the values its type marks secret blanked as the
/// default recording blanks them.
fn blanked(
    schema: &Schema,
    desc: &prost_reflect::MessageDescriptor,
    bytes: &[u8],
) -> DynamicMessage {
    let mask = SecretMask::of_types(schema, bytes, [desc]);
    DynamicMessage::decode(desc.clone(), redact_bytes(desc, bytes, &mask).as_slice())
        .unwrap_or_else(|e| panic!("not a {}: {e}", desc.full_name()))
}

#[test]
fn grpcio_and_tonic_lifecycles_through_csi_view_proxy() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(stubs) = grpcio_stubs(tmp.path()) else {
        return;
    };
    let life = Lifecycle::new(tmp.path(), "proxy-node-1");
    let (secret_key, secret_value, extra_secret) =
        (life.secret_key, life.secret_value.clone(), life.extra_secret.clone());
    let require = life.require();
    let mut server = Server::start(
        tmp.path(),
        &[("MEMDRIVER_NODE_ID", life.node_id), ("MEMDRIVER_REQUIRE_SECRET", &require)],
    );
    let (record, output) = (tmp.path().join("calls.jsonl"), tmp.path().join("proxy.out"));
    let mut proxy = Proxy::start(tmp.path(), &server.socket, &record, &output);

    let sent = tmp.path().join("sent.json");
    let out = life
        .script(&stubs, &proxy.socket, tmp.path())
        .env("INTEROP_RECORD", &sent)
        .output()
        .expect("run interop.py");
    assert!(
        out.status.success(),
        "interop.py through the proxy failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    rt.block_on(tonic_lifecycle(&proxy.socket, tmp.path(), (secret_key, &secret_value)));
    let summary = proxy.stop();
    assert!(!proxy.socket.exists(), "the proxy removed its socket");
    let _ = server.terminate(Duration::from_secs(10));

    // Secrets: in neither the printed output nor the default recording.
    let printed = std::fs::read_to_string(&output).expect("output");
    let recorded = std::fs::read_to_string(&record).expect("recording");
    for (what, text) in [("output", &printed), ("recording", &recorded)] {
        for secret in [&secret_value, &extra_secret] {
            let hex = &secret[secret.len() - 32..];
            assert!(!text.contains(hex), "a secret value in the proxy's {what}");
            let b64 = data_encoding::BASE64.encode(secret.as_bytes());
            assert!(!text.contains(&b64[..24]), "a secret value, base64, in the proxy's {what}");
        }
    }
    // The overlapping calls interop.py makes are flagged.
    assert!(printed.contains("! concurrent: call #"), "no overlap flagged");
    assert!(summary.concurrent >= 1);

    // Every call Python made is in the recording, equal as messages, with its status.
    let schema = Schema::builtin().expect("schema");
    let capture = capture::read(&record).expect("the recording reads");
    let python_calls: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&sent).expect("sent.json")).expect("json");
    assert!(python_calls.len() > 100, "only {} calls recorded by Python", python_calls.len());
    let mut used = vec![false; capture.calls.len()];
    for (i, p) in python_calls.iter().enumerate() {
        let method = p["method"].as_str().expect("method");
        let m = schema.find_method(method).unwrap_or_else(|| panic!("{method} unknown"));
        let b64 = |v: &serde_json::Value| {
            data_encoding::BASE64.decode(v.as_str().unwrap_or_default().as_bytes()).expect("b64")
        };
        let request = blanked(&schema, &m.input(), &b64(&p["request"]));
        let response =
            (!p["response"].is_null()).then(|| blanked(&schema, &m.output(), &b64(&p["response"])));
        let code = p["code"].as_i64().expect("code");
        let found = capture.calls.iter().enumerate().position(|(j, c)| {
            !used[j]
                && c.method == method
                && i64::from(c.status) == code
                && c.request_bytes().ok().and_then(|r| r.first().cloned()).is_some_and(|r| {
                    DynamicMessage::decode(m.input(), r.as_slice()).is_ok_and(|r| r == request)
                })
                && match &response {
                    None => c.responses.is_empty(),
                    Some(resp) => {
                        c.response_bytes().ok().and_then(|r| r.first().cloned()).is_some_and(|r| {
                            DynamicMessage::decode(m.output(), r.as_slice())
                                .is_ok_and(|r| &r == resp)
                        })
                    }
                }
        });
        let j = found.unwrap_or_else(|| {
            panic!(
                "Python's call {} ({method}, status {code}) is not in the recording as sent",
                i + 1
            )
        });
        used[j] = true;
    }

    // `decode --capture` types every recorded message by its method.
    let messages: usize = capture.calls.iter().map(|c| c.requests.len() + c.responses.len()).sum();
    let cli = csi_view_binary();
    let out = std::process::Command::new(&cli)
        .args(["decode", "--capture"])
        .arg(&record)
        .output()
        .expect("csi-view decode --capture");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let typed = text.lines().filter(|l| l.starts_with("# call #")).count();
    assert_eq!(typed, messages, "every recorded message is named by its method");
    eprintln!(
        "through the proxy: {} calls recorded ({} by Python, all matched), {} messages typed, {} overlap flags",
        capture.calls.len(),
        python_calls.len(),
        messages,
        summary.concurrent
    );
}

/// The csi-view binary of this workspace's build (built by `cargo build -p csi-view` when this
/// test binary was built alone).
fn csi_view_binary() -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>/csi-view
    let exe = std::env::current_exe().expect("own path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let cli = profile_dir.join("csi-view");
    if !cli.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "csi-view", "--bin", "csi-view"])
            .status()
            .expect("cargo build -p csi-view");
        assert!(status.success());
    }
    cli
}

/// Waits until something accepts connections at `path` (twenty seconds at the most), trying
/// again every few milliseconds.
fn accepts(what: &str, path: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while let Err(e) = std::os::unix::net::UnixStream::connect(path) {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} does not accept connections at {} after 20 s: {e}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A grpcio client with default channel options, from Python: it calls GetPluginInfo, prints
/// the outcome, waits for a line on stdin, and calls again on the same channel.
const GRPCIO_TWO_CALLS: &str = r#"
import sys
sys.path.insert(0, sys.argv[1])
import grpc, csi_pb2 as csi, csi_pb2_grpc as rpc
stub = rpc.IdentityStub(grpc.insecure_channel("unix:" + sys.argv[2]))
for turn in ("before", "after"):
    if turn == "after":
        sys.stdin.readline()
    try:
        info = stub.GetPluginInfo(csi.GetPluginInfoRequest(), timeout=30)
        print(turn, "OK", info.name, flush=True)
    except grpc.RpcError as e:
        print(turn, e.code().name, e.details(), flush=True)
"#;

/// `csi-view proxy` started before its plugin, as containers in a pod may start: it listens at
/// once, answers a call made before the plugin is up with UNAVAILABLE naming the upstream (to a
/// tonic client and to a grpcio client with default channel options), and once memdriver listens
/// the calls on those same connections go through, and new connections too, with no restart.
#[test]
fn a_proxy_started_before_its_plugin_serves_calls_once_the_plugin_is_up() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let tmp = tempfile::tempdir().expect("temp dir");
    let stubs = grpcio_stubs(tmp.path());
    // Where memdriver will listen (`Server::start`'s socket), and the proxy.
    let (plugin_sock, proxy_sock) = (tmp.path().join("csi.sock"), tmp.path().join("proxy.sock"));
    let upstream = format!("unix://{}", plugin_sock.display());
    let (out, err) = (tmp.path().join("proxy.out"), tmp.path().join("proxy.err"));
    let mut proxy = Command::new(csi_view_binary())
        .args(["proxy", "--listen", &format!("unix://{}", proxy_sock.display())])
        .args(["--upstream", &upstream])
        .stdout(std::fs::File::create(&out).expect("output file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("starts csi-view proxy");
    accepts("csi-view proxy", &proxy_sock);
    let text = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    assert!(proxy.try_wait().expect("wait").is_none(), "the proxy exited: {}", text(&err));

    // Before the plugin: a tonic client, and a grpcio client on its own channel.
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let mut identity = IdentityClient::new(rt.block_on(channel(&proxy_sock)));
    let down = rt.block_on(identity.get_plugin_info(GetPluginInfoRequest {}));
    let status = down.expect_err("no plugin yet");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert!(status.message().contains(&upstream), "the upstream is named: {status:?}");
    let mut grpcio = stubs.as_ref().map(|stubs| {
        let mut child = support::python()
            .args(["-c", GRPCIO_TWO_CALLS])
            .arg(stubs)
            .arg(&proxy_sock)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("runs python");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let before = lines.next().expect("a line").expect("utf-8");
        assert!(before.starts_with("before UNAVAILABLE "), "{before}");
        assert!(before.contains(&upstream), "the upstream is named: {before}");
        (child, lines)
    });

    // The plugin comes up; nothing is restarted.
    let mut server = Server::start(tmp.path(), &[]);
    accepts("memdriver", &plugin_sock);
    let info = rt.block_on(identity.get_plugin_info(GetPluginInfoRequest {}));
    assert_eq!(info.expect("answered on the same connection").into_inner().name, PLUGIN_NAME);
    let mut fresh = IdentityClient::new(rt.block_on(channel(&proxy_sock)));
    let info = rt.block_on(fresh.get_plugin_info(GetPluginInfoRequest {}));
    assert_eq!(info.expect("answered on a new connection").into_inner().name, PLUGIN_NAME);
    if let Some((mut child, mut lines)) = grpcio.take() {
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "go").expect("writes");
        drop(stdin);
        let after = lines.next().expect("a line").expect("utf-8");
        assert_eq!(after, format!("after OK {PLUGIN_NAME}"));
        assert!(child.wait().expect("python ends").success());
    }

    let kill = Command::new("kill").args(["-TERM", &proxy.id().to_string()]).status();
    assert!(kill.expect("runs kill").success());
    assert_eq!(proxy.wait().expect("the proxy exits").code(), Some(0), "{}", text(&err));
    let _ = server.terminate(Duration::from_secs(10));
    let (printed, said) = (text(&out), text(&err));
    assert!(said.contains("no plugin there yet"), "{said}");
    let calls = if stubs.is_some() { 5 } else { 3 };
    assert_eq!(printed.matches("/csi.v1.Identity/GetPluginInfo").count(), calls, "{printed}");
    assert_eq!(printed.matches(" UNAVAILABLE").count(), calls - 3, "{printed}");
}
