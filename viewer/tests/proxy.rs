//! `csi-view proxy` between a tonic client and a csikit plugin over unix sockets: calls
//! forwarded and printed with their types, secrets hidden in the output and the recording,
//! concurrent calls on one volume flagged, the plugin restarted under it (UNAVAILABLE, then
//! a new connection), `--check`, SIGTERM (socket removed), and the recording read back.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use csikit::v1::controller_client::ControllerClient;
use csikit::v1::identity_client::IdentityClient;
use csikit::v1::server::Controller;
use csikit::v1::*;
use support::wait_for_socket;
use tonic::{Code, Request, Response, Status};

const BIN: &str = env!("CARGO_BIN_EXE_csi-view");

struct Plugin;

/// A CreateVolume with the parameter `hold` says it has arrived ([`HELD`]) and is answered once
/// the test lets it go ([`RELEASE`]): two calls overlap for certain, with no waiting on a clock.
const HOLD: &str = "hold";
static HELD: tokio::sync::Notify = tokio::sync::Notify::const_new();
static RELEASE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[csikit::csi_service]
impl Controller for Plugin {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        if r.parameters.contains_key(HOLD) {
            HELD.notify_one();
            RELEASE.notified().await;
        }
        Ok(Response::new(CreateVolumeResponse {
            volume: Some(Volume {
                volume_id: r.name,
                capacity_bytes: 1 << 20,
                ..Volume::default()
            }),
        }))
    }
}

/// Serves the plugin at `socket` until the returned sender is dropped or fired.
fn start_plugin(
    rt: &tokio::runtime::Runtime,
    socket: &Path,
) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = csikit::server::Endpoint::Unix(socket.to_owned());
    let task = rt.spawn(async move {
        let server = csikit::server::Builder::new("proxy-test.csikit.dev", "1")
            .controller(Plugin)
            .build()
            .await
            .expect("builds");
        server
            .serve(&endpoint, async {
                let _ = stopped.await;
            })
            .await
            .expect("serves");
    });
    (stop, task)
}

async fn channel(path: &Path) -> tonic::transport::Channel {
    wait_for_socket(path).await;
    csikit::channel::connect_unix(&path).await.expect("connects")
}

fn start_proxy(dir: &Path, listen: &Path, upstream: &Path, extra: &[&str]) -> Child {
    let out = std::fs::File::create(dir.join("proxy.out")).expect("output file");
    let err = std::fs::File::create(dir.join("proxy.err")).expect("stderr file");
    let listen = format!("unix://{}", listen.display());
    let upstream = format!("unix://{}", upstream.display());
    let mut args = vec!["proxy", "--listen", &listen, "--upstream", &upstream];
    args.extend_from_slice(extra);
    Command::new(BIN).args(&args).stdout(out).stderr(err).spawn().expect("starts the proxy")
}

fn stop(child: &mut Child) -> i32 {
    let status =
        Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("runs kill");
    assert!(status.success());
    child.wait().expect("proxy exits").code().unwrap_or(-1)
}

fn create(name: &str, extra: &[(&str, &str)]) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: name.into(),
        volume_capabilities: vec![VolumeCapability {
            access_type: Some(volume_capability::AccessType::Mount(
                volume_capability::MountVolume::default(),
            )),
            access_mode: Some(volume_capability::AccessMode {
                mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
            }),
        }],
        secrets: [("password".to_owned(), "hunter2-secret".to_owned())].into(),
        parameters: extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..CreateVolumeRequest::default()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn temp_dir(name: &str) -> PathBuf {
    // Short: a unix socket path has a 108-byte limit.
    let dir = std::env::temp_dir().join(format!("csiview-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn proxy_forwards_prints_records_and_survives_a_plugin_restart() {
    let dir = temp_dir("proxy");
    let (plugin_sock, proxy_sock, record) =
        (dir.join("plugin.sock"), dir.join("proxy.sock"), dir.join("calls.jsonl"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    let record_arg = record.to_str().unwrap_or_default().to_owned();
    let mut proxy =
        start_proxy(&dir, &proxy_sock, &plugin_sock, &["--record", &record_arg, "--check"]);

    rt.block_on(async {
        let ch = channel(&proxy_sock).await;
        let mut controller = ControllerClient::new(ch.clone());
        // A plain call.
        let v = controller.create_volume(create("vol-a", &[])).await.expect("created");
        assert_eq!(v.into_inner().volume.map(|v| v.volume_id), Some("vol-a".into()));
        // Two at once on one volume: the second is flagged whatever the plugin answers.
        let held = create("vol-b", &[(HOLD, "")]);
        let mut c2 = controller.clone();
        let first = tokio::spawn(async move { c2.create_volume(held).await });
        HELD.notified().await;
        let second = controller.create_volume(create("vol-b", &[])).await;
        RELEASE.notify_one();
        assert!(first.await.expect("joins").is_ok());
        assert!(second.is_ok() || second.as_ref().is_err_and(|s| s.code() == Code::Aborted));
        // A request breaking a rule (no name): INVALID_ARGUMENT, and a violation for --check.
        let bad = controller.create_volume(create("", &[])).await;
        assert_eq!(bad.err().map(|s| s.code()), Some(Code::InvalidArgument));
    });

    // One client connection through the plugin's restart. While the plugin is up the connection
    // is tapped; when the plugin goes away, so does the connection, and the client's next one is
    // answered by the proxy (UNAVAILABLE); once the plugin is back, that connection forwards every
    // call (no GOAWAY: a tonic call that crossed one failed with CANCELLED, once in CI).
    let ch = rt.block_on(channel(&proxy_sock));
    let mut identity = IdentityClient::new(ch);
    assert!(rt.block_on(identity.probe(ProbeRequest {})).is_ok(), "a probe before the restart");
    let _ = plugin_stop.send(());
    rt.block_on(plugin_task).expect("plugin stops");
    let (probe, retried) = rt.block_on(async {
        // The client may first see its connection close, as from the plugin itself.
        let first = identity.probe(ProbeRequest {}).await;
        if first.is_ok() { (first, false) } else { (identity.probe(ProbeRequest {}).await, true) }
    });
    assert_eq!(probe.err().map(|s| s.code()), Some(Code::Unavailable));
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    for _ in 0..20 {
        let info = rt.block_on(identity.get_plugin_info(GetPluginInfoRequest {}));
        assert_eq!(
            info.expect("answered after the restart").into_inner().name,
            "proxy-test.csikit.dev"
        );
    }

    // SIGTERM: exit 1 under --check (a call broke a rule), socket removed.
    assert_eq!(stop(&mut proxy), 1, "{}", read(&dir.join("proxy.err")));
    assert!(!proxy_sock.exists(), "the listening socket is removed");
    let _ = plugin_stop.send(());
    rt.block_on(plugin_task).expect("plugin stops");

    let out = read(&dir.join("proxy.out"));
    let err = read(&dir.join("proxy.err"));
    let rec = read(&record);
    for (what, text) in [("output", &out), ("stderr", &err), ("recording", &rec)] {
        assert!(!text.contains("hunter2"), "a secret in the {what}:\n{text}");
    }
    assert!(out.contains("/csi.v1.Controller/CreateVolume"), "{out}");
    assert!(out.contains("  request: csi.v1.CreateVolumeRequest"), "{out}");
    assert!(out.contains("volume_id: \"vol-a\""), "{out}");
    assert!(out.contains("value: \"<redacted>\""), "{out}");
    assert!(out.contains("! concurrent: call #"), "{out}");
    assert!(out.contains("INVALID_ARGUMENT") && out.contains("violation: request: name"), "{out}");
    assert!(out.contains("/csi.v1.Identity/Probe") && out.contains("UNAVAILABLE"), "{out}");
    assert!(out.contains("/csi.v1.Identity/GetPluginInfo") && out.contains(" OK"), "{out}");
    assert!(err.contains("broke a spec rule"), "{err}");
    assert!(err.contains("the plugin at unix://") && err.contains("is not answering"), "{err}");
    assert!(err.contains("the plugin is back: calls on the connection"), "{err}");
    assert_eq!(err.matches("the plugin is back").count(), 1, "{err}");
    assert_eq!(out.matches("/csi.v1.Identity/GetPluginInfo").count(), 20, "{out}");
    // Calls are numbered in the order they started, tapped or answered alike.
    let mut started: Vec<(&str, u64)> = out
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix('#')?.split(' ');
            let id = words.next()?.parse().ok()?;
            Some((words.nth(1)?, id))
        })
        .collect();
    // 26 calls: vol-a, vol-b twice, the bad one, a probe, the probe answered UNAVAILABLE and 20
    // GetPluginInfo; plus the probe that met the closing connection, when the client sent it
    // before it saw the close (a race between the two, so it is printed or not).
    let expected = if retried { 26..=27 } else { 26..=26 };
    assert!(expected.contains(&started.len()), "{} calls printed:\n{out}", started.len());
    started.sort_unstable();
    assert!(started.windows(2).all(|w| w[0].1 < w[1].1), "{started:?}\n{out}");

    // The recording reads back, each message typed by its method, the secret blanked.
    let decoded = Command::new(BIN)
        .args(["decode", "--show-secrets", "--capture", record.to_str().unwrap_or_default()])
        .output()
        .expect("decode runs");
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(decoded.status.success(), "{}", String::from_utf8_lossy(&decoded.stderr));
    assert!(text.contains("# call #1 /csi.v1.Controller/CreateVolume request (OK)"), "{text}");
    assert!(text.contains("value: \"<redacted>\"") && !text.contains("hunter2"), "{text}");
    assert!(text.contains("name: \"vol-a\""), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keep_secrets_records_them_exactly_in_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("keep");
    let (plugin_sock, proxy_sock, record) =
        (dir.join("plugin.sock"), dir.join("proxy.sock"), dir.join("calls.jsonl"));
    // An existing, world-readable file is narrowed too.
    std::fs::write(&record, "old").expect("writes");
    std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    let record_arg = record.to_str().unwrap_or_default().to_owned();
    let mut proxy =
        start_proxy(&dir, &proxy_sock, &plugin_sock, &["--record", &record_arg, "--keep-secrets"]);
    rt.block_on(async {
        let mut controller = ControllerClient::new(channel(&proxy_sock).await);
        controller.create_volume(create("vol-k", &[])).await.expect("created");
    });
    assert_eq!(stop(&mut proxy), 0, "{}", read(&dir.join("proxy.err")));
    let _ = plugin_stop.send(());
    rt.block_on(plugin_task).expect("plugin stops");
    let mode = std::fs::metadata(&record).expect("recorded").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(!read(&dir.join("proxy.out")).contains("hunter2"), "printed output stays redacted");
    let decoded = Command::new(BIN)
        .args(["decode", "--show-secrets", "--capture", record.to_str().unwrap_or_default()])
        .stdout(Stdio::piped())
        .output()
        .expect("decode runs");
    let text = String::from_utf8_lossy(&decoded.stdout);
    assert!(text.contains("value: \"hunter2-secret\""), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_that_does_not_speak_http2_is_forwarded_and_named() {
    let dir = temp_dir("not-h2");
    let (plugin_sock, proxy_sock) = (dir.join("plugin.sock"), dir.join("proxy.sock"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    let mut proxy = start_proxy(&dir, &proxy_sock, &plugin_sock, &[]);
    rt.block_on(wait_for_socket(&proxy_sock));
    // HTTP/1.1 where HTTP/2 is due: the bytes reach the plugin, whose answer (or close) comes
    // back; the proxy says it cannot follow that connection and goes on serving.
    let answered = rt.block_on(async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::UnixStream::connect(&proxy_sock).await.expect("connects");
        s.write_all(b"GET / HTTP/1.1\r\nHost: plugin\r\n\r\n").await.expect("writes");
        let mut back = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut back))
            .await
            .expect("the connection ends")
            .map(|_| back)
    });
    assert!(answered.is_ok(), "{answered:?}");
    let probe = rt.block_on(async {
        IdentityClient::new(channel(&proxy_sock).await).probe(ProbeRequest {}).await
    });
    assert!(probe.is_ok(), "{probe:?}");
    assert_eq!(stop(&mut proxy), 0);
    let _ = plugin_stop.send(());
    rt.block_on(plugin_task).expect("plugin stops");
    let (out, err) = (read(&dir.join("proxy.out")), read(&dir.join("proxy.err")));
    assert!(
        err.contains("cannot follow the client's HTTP/2 (no HTTP/2 connection preface)"),
        "{err}"
    );
    assert_eq!(out.lines().filter(|l| l.starts_with('#')).count(), 1, "{out}");
    assert!(out.contains("/csi.v1.Identity/Probe") && out.contains(" OK"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_endpoints_and_captures_are_clear_errors() {
    let dir = temp_dir("bad");
    let run = |args: &[&str]| Command::new(BIN).args(args).output().expect("runs");
    let out = run(&["proxy", "--listen", "tcp://127.0.0.1:1", "--upstream", "unix:///x.sock"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only unix sockets"));
    let not_socket = dir.join("file");
    std::fs::write(&not_socket, "x").expect("writes");
    let listen = format!("unix://{}", not_socket.display());
    // No plugin at the upstream yet is no error (the proxy waits for it; memdriver's proxy test
    // shows it serving once the plugin is up), but a file there that is not a socket is: no
    // plugin can listen on it.
    let missing = format!("unix://{}", dir.join("none.sock").display());
    let out = run(&["proxy", "--listen", &listen, "--upstream", &missing]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("none.sock") && err.contains("is not a socket"), "{err}");
    let free = format!("unix://{}", dir.join("free.sock").display());
    let out = run(&["proxy", "--listen", &free, "--upstream", &listen]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("upstream '") && err.contains("is not a socket"), "{err}");
    assert!(err.lines().count() == 1 && !dir.join("free.sock").exists(), "{err}");
    // A busy listen path (a live server) and a file that is not a socket are left alone.
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let plugin_sock = dir.join("plugin.sock");
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    let upstream = format!("unix://{}", plugin_sock.display());
    let out = run(&["proxy", "--listen", &listen, "--upstream", &upstream]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a socket"));
    assert_eq!(read(&not_socket), "x", "left alone");
    let busy = format!("unix://{}", dir.join("busy.sock").display());
    let (busy_stop, busy_task) = start_plugin(&rt, &dir.join("busy.sock"));
    rt.block_on(wait_for_socket(&dir.join("busy.sock")));
    let out = run(&["proxy", "--listen", &busy, "--upstream", &upstream]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("another process is serving on this socket")
    );
    for (stop, task) in [(plugin_stop, plugin_task), (busy_stop, busy_task)] {
        let _ = stop.send(());
        rt.block_on(task).expect("plugin stops");
    }
    // A truncated capture, and a file that is not one.
    let good = "{\"csi_view_capture\":1,\"secrets\":\"blanked\",\"upstream\":\"u\"}\n";
    let cut = dir.join("cut.jsonl");
    std::fs::write(&cut, format!("{good}{{\"call\":1,\"method\":\"/csi.v1.Identity/Pro"))
        .expect("writes");
    let out = run(&["decode", "--capture", cut.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cut.jsonl:2: not a recorded call"));
    let out = run(&["decode", "--capture", not_socket.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a csi-view capture"));
    // `ui` on a truncated capture, a missing file, an endpoint CSI_ENDPOINT could not be, no
    // timeout, a busy port: one line, exit 2.
    for (args, words) in [
        (vec!["ui", cut.to_str().unwrap_or_default()], "cut.jsonl:2: not a recorded call"),
        (vec!["ui", "/nonexistent/msg.bin"], "cannot read '/nonexistent/msg.bin'"),
        (vec!["ui", "--endpoint", "http://x"], "--endpoint: endpoint 'http://x'"),
        (vec!["ui", "--endpoint", "unix:///a.sock", "--timeout", "0"], "--timeout"),
        (vec!["ui", "--endpoint", "unix:///a.sock", "--timeout=-1"], "--timeout"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(words) && err.lines().count() == 1, "{args:?}: {err}");
    }
    let busy_port = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = busy_port.local_addr().expect("addr").port().to_string();
    let msg = dir.join("probe.bin");
    std::fs::write(&msg, b"").expect("writes");
    let out = run(&[
        "ui",
        "--type",
        "csi.v1.ProbeRequest",
        "--port",
        &port,
        msg.to_str().unwrap_or_default(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on 127.0.0.1"));
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"csi_view_capture\":1,\"secrets\":\"blanked\",\"upstream\":\"u\"}\n{nope\n",
    )
    .expect("writes");
    let out = run(&["decode", "--capture", bad.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:2: not a recorded call"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A grpcio client from Python with its default options sends the %-encoded socket path as
/// `:authority`; other clients send the raw path. The proxy answers each, as a csikit plugin does.
#[test]
fn grpcio_clients_with_default_options_pass_through_the_proxy() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let probe = Command::new(&python).args(["-c", "import grpc, grpc_tools.protoc"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        csikit_spec::skip_missing("python3 with grpcio and grpcio-tools is missing");
        return;
    }
    let dir = temp_dir("grpcio");
    let stubs = dir.join("stubs");
    std::fs::create_dir_all(&stubs).expect("stubs dir");
    let out = Command::new(&python)
        .args(["-m", "grpc_tools.protoc"])
        .arg(format!("-I{}", corpus.join("csi-spec/v1.12.0").display()))
        .arg(format!("--python_out={}", stubs.display()))
        .arg(format!("--grpc_python_out={}", stubs.display()))
        .arg("csi.proto")
        .output()
        .expect("runs grpc_tools.protoc");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (plugin_sock, proxy_sock) = (dir.join("plugin.sock"), dir.join("proxy.sock"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (plugin_stop, plugin_task) = start_plugin(&rt, &plugin_sock);
    rt.block_on(wait_for_socket(&plugin_sock));
    let mut proxy = start_proxy(&dir, &proxy_sock, &plugin_sock, &[]);
    rt.block_on(wait_for_socket(&proxy_sock));
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1])
import grpc, csi_pb2 as csi, csi_pb2_grpc as rpc
sock = sys.argv[2]
for name, options in [("default", []), ("raw path", [("grpc.default_authority", sock)])]:
    channel = grpc.insecure_channel("unix://" + sock, options=options)
    for _ in range(3):
        info = rpc.IdentityStub(channel).GetPluginInfo(csi.GetPluginInfoRequest(), timeout=10)
    print(name, info.name)
    channel.close()
"#;
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(&stubs)
        .arg(&proxy_sock)
        .output()
        .expect("runs python");
    assert_eq!(stop(&mut proxy), 0);
    let _ = plugin_stop.send(());
    rt.block_on(plugin_task).expect("plugin stops");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("default proxy-test.csikit.dev"), "{text}");
    assert!(text.contains("raw path proxy-test.csikit.dev"), "{text}");
    let printed = read(&dir.join("proxy.out"));
    assert_eq!(printed.matches("/csi.v1.Identity/GetPluginInfo").count(), 6, "{printed}");
    let _ = std::fs::remove_dir_all(&dir);
}
