//! `csi-view call`, `list` and `describe` as a user runs them (the binary, one process per call)
//! against memdriver served in process from its library, each plugin on its own unix socket or
//! TCP port with a counter of the calls it received.
//!
//! The oracle is a Python grpcio client with stubs grpcio-tools built from the corpus csi.proto
//! (`call_oracle.py`): the same session (every RPC memdriver implements, ids created and then
//! used, an error at the end) is run by csi-view with JSON requests over a unix socket, with
//! text-format requests (written by Python protobuf) over TCP, and by Python; the answers must
//! be the same messages, ids and timestamps aside. Secrets come from a csi-sanity file that
//! memdriver requires, and no output of csi-view holds their values.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

// memdriver's test support: `grpcio_stubs` and `python`, one copy for both crates' tests.
#[path = "../../memdriver/tests/support/mod.rs"]
mod support;

use support::{grpcio_stubs, python};

const BIN: &str = env!("CARGO_BIN_EXE_csi-view");

/// The value memdriver requires in every `secrets` field (and a second one it ignores).
const SECRET: &str = "s3cr3t-call-value-7f1c";
const OTHER_SECRET: &str = "other-s3cr3t-value-a9e2";

/// memdriver served in process on a listener of its own, counting the calls it receives.
struct Plugin {
    endpoint: String,
    calls: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Plugin {
    fn start(dir: &Path, tcp: bool, config: memdriver::Config) -> Plugin {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let (ready, endpoint) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let socket = dir.join("csi.sock");
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let driver = Arc::new(memdriver::Driver::new(config));
                let routes =
                    memdriver::builder(driver).build().await.expect("builds").into_routes();
                let count = tower::util::MapRequestLayer::new(
                    move |r: http::Request<tonic::body::Body>| {
                        counted.fetch_add(1, Ordering::SeqCst);
                        r
                    },
                );
                let router = tonic::transport::Server::builder().layer(count).add_routes(routes);
                let shutdown = async {
                    let _ = stopped.await;
                };
                if tcp {
                    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
                    let addr = l.local_addr().expect("address");
                    ready.send(format!("tcp://{addr}")).expect("ready");
                    let incoming = tokio_stream::wrappers::TcpListenerStream::new(l);
                    router.serve_with_incoming_shutdown(incoming, shutdown).await.expect("serves");
                } else {
                    let l = tokio::net::UnixListener::bind(&socket).expect("bind");
                    ready.send(format!("unix://{}", socket.display())).expect("ready");
                    // As memdriver's binary: grpcio's `:authority` over a unix socket is one h2
                    // refuses without the skeleton's rewriter.
                    let incoming = tokio_stream::StreamExt::map(
                        tokio_stream::wrappers::UnixListenerStream::new(l),
                        |s| s.map(csikit::server::authority::AuthorityFix::new),
                    );
                    router.serve_with_incoming_shutdown(incoming, shutdown).await.expect("serves");
                }
            });
        });
        let endpoint = endpoint.recv().expect("the plugin listens");
        Plugin { endpoint, calls, stop: Some(stop), thread: Some(thread) }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Drop for Plugin {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn config() -> memdriver::Config {
    memdriver::Config {
        node_id: "call-node".to_owned(),
        required_secret: Some(("user".to_owned(), SECRET.to_owned())),
        ..memdriver::Config::default()
    }
}

fn secrets_file(dir: &Path) -> PathBuf {
    let mut text = String::from("# csi-sanity's secrets file\n");
    for rpc in SECRET_RPCS {
        let kind = csikit::runtime::secrets::kind_of(rpc);
        text.push_str(&format!("{kind}:\n  user: \"{SECRET}\"\n  other: {OTHER_SECRET}\n"));
    }
    let path = dir.join("secrets.yaml");
    std::fs::write(&path, text).expect("secrets file");
    path
}

/// Every csi.v1 RPC whose request has a secret map, from the facts.
const SECRET_RPCS: &[&str] = &[
    "CreateVolume",
    "DeleteVolume",
    "ControllerPublishVolume",
    "ControllerUnpublishVolume",
    "ValidateVolumeCapabilities",
    "ListSnapshots",
    "GetSnapshot",
    "CreateSnapshot",
    "DeleteSnapshot",
    "ControllerExpandVolume",
    "ControllerModifyVolume",
    "NodeStageVolume",
    "NodePublishVolume",
    "NodeExpandVolume",
];

/// Runs csi-view with `args` (and `stdin`), giving up after a minute so a hang fails the test
/// instead of stopping it.
fn run(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env_remove("CSI_ENDPOINT")
        .env_remove("CSI_SECRETS")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("runs csi-view");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(text.as_bytes()).expect("writes stdin");
    }
    let (done, waited) = std::sync::mpsc::channel();
    let id = child.id();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waited.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.expect("csi-view output"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &id.to_string()]).status();
            panic!("csi-view {args:?} did not exit within 60 s");
        }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn oracle(stubs: &Path, args: &[&str], input: &Value) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/call_oracle.py");
    let mut child = python()
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs call_oracle.py");
    child.stdin.take().expect("stdin").write_all(input.to_string().as_bytes()).expect("writes");
    let out = child.wait_with_output().expect("oracle output");
    assert!(out.status.success(), "call_oracle.py {args:?}: {}", stderr(&out));
    let _ = stubs;
    stdout(&out)
}

const CAP: &str = r#"{"mount": {"fsType": "ext4"}, "accessMode": {"mode": "SINGLE_NODE_WRITER"}}"#;

/// The session: every RPC memdriver implements, in the order a CO would call them.
fn steps() -> Vec<Value> {
    let step = |method: &str, request: String| json!({ "method": method, "request": request });
    let saving = |method: &str, request: String, name: &str, dotted: &str| json!({ "method": method, "request": request, "save": { name: dotted } });
    let v = "csi.v1";
    vec![
        step(&format!("{v}.Identity/GetPluginInfo"), "{}".into()),
        step(&format!("{v}.Identity/GetPluginCapabilities"), "{}".into()),
        step(&format!("{v}.Identity/Probe"), "{}".into()),
        step(&format!("{v}.Controller/ControllerGetCapabilities"), "{}".into()),
        step(&format!("{v}.Node/NodeGetCapabilities"), "{}".into()),
        step(&format!("{v}.Node/NodeGetInfo"), "{}".into()),
        step(&format!("{v}.Controller/GetCapacity"), format!(r#"{{"volumeCapabilities": [{CAP}]}}"#)),
        saving(
            &format!("{v}.Controller/CreateVolume"),
            format!(r#"{{"name": "call-1", "capacityRange": {{"requiredBytes": "1048576"}}, "volumeCapabilities": [{CAP}], "parameters": {{"p": "v"}}}}"#),
            "VOL",
            "volume.volumeId",
        ),
        step(
            &format!("{v}.Controller/CreateVolume"),
            format!(r#"{{"name": "call-1", "capacityRange": {{"requiredBytes": "1048576"}}, "volumeCapabilities": [{CAP}], "parameters": {{"p": "v"}}}}"#),
        ),
        step(&format!("{v}.Controller/ControllerGetVolume"), r#"{"volumeId": "{{VOL}}"}"#.into()),
        step(&format!("{v}.Controller/ListVolumes"), "{}".into()),
        step(
            &format!("{v}.Controller/ValidateVolumeCapabilities"),
            format!(r#"{{"volumeId": "{{{{VOL}}}}", "volumeCapabilities": [{CAP}]}}"#),
        ),
        step(
            &format!("{v}.Controller/ControllerPublishVolume"),
            format!(r#"{{"volumeId": "{{{{VOL}}}}", "nodeId": "call-node", "volumeCapability": {CAP}}}"#),
        ),
        step(
            &format!("{v}.Node/NodeStageVolume"),
            format!(r#"{{"volumeId": "{{{{VOL}}}}", "stagingTargetPath": "{{{{DIR}}}}/stage", "volumeCapability": {CAP}}}"#),
        ),
        step(
            &format!("{v}.Node/NodePublishVolume"),
            format!(r#"{{"volumeId": "{{{{VOL}}}}", "stagingTargetPath": "{{{{DIR}}}}/stage", "targetPath": "{{{{DIR}}}}/target", "volumeCapability": {CAP}}}"#),
        ),
        step(
            &format!("{v}.Node/NodeGetVolumeStats"),
            r#"{"volumeId": "{{VOL}}", "volumePath": "{{DIR}}/target"}"#.into(),
        ),
        step(
            &format!("{v}.Controller/ControllerExpandVolume"),
            r#"{"volumeId": "{{VOL}}", "capacityRange": {"requiredBytes": "2097152"}}"#.into(),
        ),
        step(
            &format!("{v}.Node/NodeExpandVolume"),
            r#"{"volumeId": "{{VOL}}", "volumePath": "{{DIR}}/target", "capacityRange": {"requiredBytes": "2097152"}}"#.into(),
        ),
        step(
            &format!("{v}.Controller/ControllerModifyVolume"),
            r#"{"volumeId": "{{VOL}}", "mutableParameters": {"iops": "100"}}"#.into(),
        ),
        saving(
            &format!("{v}.Controller/CreateSnapshot"),
            r#"{"sourceVolumeId": "{{VOL}}", "name": "snap-1"}"#.into(),
            "SNAP",
            "snapshot.snapshotId",
        ),
        step(&format!("{v}.Controller/GetSnapshot"), r#"{"snapshotId": "{{SNAP}}"}"#.into()),
        step(&format!("{v}.Controller/ListSnapshots"), "{}".into()),
        step(&format!("{v}.Controller/DeleteSnapshot"), r#"{"snapshotId": "{{SNAP}}"}"#.into()),
        step(
            &format!("{v}.Node/NodeUnpublishVolume"),
            r#"{"volumeId": "{{VOL}}", "targetPath": "{{DIR}}/target"}"#.into(),
        ),
        step(
            &format!("{v}.Node/NodeUnstageVolume"),
            r#"{"volumeId": "{{VOL}}", "stagingTargetPath": "{{DIR}}/stage"}"#.into(),
        ),
        step(
            &format!("{v}.Controller/ControllerUnpublishVolume"),
            r#"{"volumeId": "{{VOL}}", "nodeId": "call-node"}"#.into(),
        ),
        step(&format!("{v}.Controller/DeleteVolume"), r#"{"volumeId": "{{VOL}}"}"#.into()),
        step(&format!("{v}.Controller/ControllerGetVolume"), r#"{"volumeId": "{{VOL}}"}"#.into()),
    ]
}

fn substitute(text: &str, values: &[(String, String)]) -> String {
    values.iter().fold(text.to_owned(), |t, (k, v)| t.replace(&format!("{{{{{k}}}}}"), v))
}

/// An answer with what legitimately differs between two runs taken out: the ids saved (by
/// their names), the folders, and the snapshots' creation times.
fn normalised(answer: &Value, values: &[(String, String)]) -> Value {
    let mut text = answer.to_string();
    for (k, v) in values {
        text = text.replace(v.as_str(), &format!("{{{{{k}}}}}"));
    }
    let mut v: Value = serde_json::from_str(&text).expect("json");
    strip(&mut v, "creationTime");
    v
}

fn strip(v: &mut Value, key: &str) {
    match v {
        Value::Object(o) => {
            o.remove(key);
            o.values_mut().for_each(|x| strip(x, key));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, key)),
        _ => {}
    }
}

/// Runs the session with csi-view, one process per call: each request as JSON in the argument,
/// or (with `text`, Python's text-format rendering of it) on stdin.
fn session_with_csi_view(
    plugin: &Plugin,
    dir: &Path,
    secrets: &Path,
    text: Option<&[String]>,
    outputs: &mut String,
) -> Vec<Value> {
    let mut values = vec![("DIR".to_owned(), dir.display().to_string())];
    let mut answers = Vec::new();
    for (i, step) in steps().iter().enumerate() {
        let method = step["method"].as_str().expect("method");
        let secrets_arg = secrets.display().to_string();
        let mut args = vec!["call", &plugin.endpoint, method, "--format", "json", "--echo"];
        args.extend(["--secrets", &secrets_arg]);
        let request = match text {
            None => substitute(step["request"].as_str().expect("request"), &values),
            Some(t) => substitute(&t[i], &values),
        };
        let out = match text {
            None => run(&[args.as_slice(), &[request.as_str()]].concat(), None, &[]),
            Some(_) => run(&[args.as_slice(), &["-d", "@-"]].concat(), Some(&request), &[]),
        };
        outputs.push_str(&stdout(&out));
        outputs.push_str(&stderr(&out));
        let answer: Value = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{method}: {e}\n{}\n{}", stdout(&out), stderr(&out)));
        let answer = match answer.get("error") {
            Some(e) => {
                let code = e["code"].as_i64().expect("code");
                assert_eq!(out.status.code(), Some(code as i32), "{method}: exit code");
                json!({ "code": code })
            }
            None => {
                assert_eq!(out.status.code(), Some(0), "{method}: {}", stderr(&out));
                if let Some(save) = step.get("save").and_then(Value::as_object) {
                    for (name, dotted) in save {
                        let v =
                            dotted.as_str().expect("path").split('.').fold(&answer, |v, k| &v[k]);
                        values.push((name.clone(), v.as_str().expect("id").to_owned()));
                    }
                }
                json!({ "code": 0, "response": answer })
            }
        };
        answers.push(normalised(&answer, &values));
    }
    answers
}

fn session_with_python(stubs: &Path, plugin: &Plugin, dir: &Path) -> Vec<Value> {
    let target = plugin.endpoint.strip_prefix("tcp://").unwrap_or(&plugin.endpoint);
    let secret_fields: serde_json::Map<String, Value> = SECRET_RPCS
        .iter()
        .map(|rpc| {
            let m = csikit::v1::facts::FACTS.methods.iter().find(|m| m.name == *rpc).expect("rpc");
            let input = csikit::v1::facts::FACTS.message(&m.input).expect("input");
            let field = input.fields.iter().find(|f| f.secret).expect("a secret field");
            (m.path.trim_start_matches('/').to_owned(), json!(field.name))
        })
        .collect();
    let input = json!({
        "steps": steps(),
        "vars": { "DIR": dir.display().to_string() },
        "secrets": { "user": SECRET, "other": OTHER_SECRET },
        "secret_fields": secret_fields,
    });
    let out = oracle(stubs, &["run", &stubs.display().to_string(), target], &input);
    let lines: Vec<Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(lines.len(), steps().len(), "{out}");
    // The values saved, in the order Python saved them, for normalising.
    let mut values = vec![("DIR".to_owned(), dir.display().to_string())];
    let mut answers = Vec::new();
    for (step, line) in steps().iter().zip(&lines) {
        if let Some(save) = step.get("save").and_then(Value::as_object) {
            for (name, dotted) in save {
                let v =
                    dotted.as_str().expect("path").split('.').fold(&line["response"], |v, k| &v[k]);
                values.push((name.clone(), v.as_str().expect("id").to_owned()));
            }
        }
        answers.push(normalised(line, &values));
    }
    answers
}

#[test]
fn every_rpc_memdriver_implements_answers_as_it_answers_grpcio() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(stubs) = grpcio_stubs(tmp.path()) else {
        return;
    };
    let secrets = secrets_file(tmp.path());
    let texts: Vec<String> = serde_json::from_str(&oracle(
        &stubs,
        &["text", &stubs.display().to_string()],
        &json!({ "steps": steps() }),
    ))
    .expect("text requests");

    let dirs: Vec<PathBuf> = ["json-unix", "text-tcp", "python"]
        .iter()
        .map(|d| {
            let p = tmp.path().join(d);
            std::fs::create_dir_all(&p).expect("dir");
            p
        })
        .collect();
    let mut outputs = String::new();
    let json_unix = {
        let plugin = Plugin::start(&dirs[0], false, config());
        assert!(plugin.endpoint.starts_with("unix://"));
        session_with_csi_view(&plugin, &dirs[0], &secrets, None, &mut outputs)
    };
    let text_tcp = {
        let plugin = Plugin::start(&dirs[1], true, config());
        assert!(plugin.endpoint.starts_with("tcp://"));
        session_with_csi_view(&plugin, &dirs[1], &secrets, Some(&texts), &mut outputs)
    };
    let python = {
        let plugin = Plugin::start(&dirs[2], false, config());
        session_with_python(&stubs, &plugin, &dirs[2])
    };
    for (i, step) in steps().iter().enumerate() {
        assert_eq!(json_unix[i], python[i], "step {i} {} (JSON over unix)", step["method"]);
        assert_eq!(text_tcp[i], python[i], "step {i} {} (text over TCP)", step["method"]);
    }
    // The session did what it says: a volume made and used, and the last call NOT_FOUND.
    assert_eq!(python[7]["response"]["volume"]["volumeId"], "{{VOL}}", "{}", python[7]);
    assert_eq!(python.last().expect("steps")["code"], 5);
    assert!(python.iter().filter(|a| a["code"] == 0).count() >= 26);
    // No secret value in anything csi-view printed (the echoed requests included), though the
    // requests carried them (memdriver answers UNAUTHENTICATED without).
    assert!(outputs.contains("\"user\""), "the echoed requests show the secret keys");
    for secret in [SECRET, OTHER_SECRET] {
        assert!(!outputs.contains(secret), "a secret value was printed");
    }
}

#[test]
fn several_requests_go_in_order_on_one_connection() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plugin = Plugin::start(tmp.path(), false, memdriver::Config::default());
    let requests = format!(
        "{{\"name\": \"a\", \"volumeCapabilities\": [{CAP}]}}\n{{\"name\": \"b\", \"volumeCapabilities\": [{CAP}]}}\n"
    );
    let out =
        run(&["call", &plugin.endpoint, "CreateVolume", "--format", "json"], Some(&requests), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers: Vec<Value> = serde_json::Deserializer::from_str(&stdout(&out))
        .into_iter::<Value>()
        .map(|v| v.expect("json"))
        .collect();
    assert_eq!(answers.len(), 2, "{}", stdout(&out));
    assert_ne!(answers[0]["volume"]["volumeId"], answers[1]["volume"]["volumeId"]);
    // Text format, separated by '---', the first failing ends the run with its code.
    let text = "volume_id: \"nope\" node_id: \"n\" volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }\n---\nvolume_id: \"x\"\n";
    let before = plugin.calls();
    let out = run(&["call", &plugin.endpoint, "ControllerPublishVolume"], Some(text), &[]);
    assert_eq!(out.status.code(), Some(2), "the second breaks the rules: nothing is sent");
    assert!(
        stderr(&out).contains("request 2 (line 3): volume_capability: is REQUIRED"),
        "{}",
        stderr(&out)
    );
    assert_eq!(plugin.calls(), before);
    let text = "volume_id: \"nope\" node_id: \"n\" volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }\n---\nvolume_id: \"x\" node_id: \"n\" volume_capability { mount {} access_mode { mode: SINGLE_NODE_WRITER } }\n";
    let out = run(&["call", &plugin.endpoint, "ControllerPublishVolume"], Some(text), &[]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(plugin.calls(), before + 1, "the run stops at the first failure");
}

#[test]
fn an_invalid_request_is_refused_before_it_is_sent() {
    let tmp = tempfile::tempdir().expect("temp dir");
    // Validation off in the plugin: had the request been sent, the volume would exist.
    let plugin = Plugin::start(
        tmp.path(),
        false,
        memdriver::Config {
            fault: Some(memdriver::fault::Fault::NoValidation),
            ..memdriver::Config::default()
        },
    );
    let long = "n".repeat(200);
    let request = format!(r#"{{"name": "{long}", "volumeCapabilities": [{CAP}]}}"#);
    let out = run(&["call", &plugin.endpoint, "CreateVolume", &request], None, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("violation: name: is 200 bytes, more than the limit of 128"), "{err}");
    assert!(err.contains("--no-validate"), "{err}");
    assert_eq!(plugin.calls(), 0, "memdriver saw a call");
    assert!(stdout(&out).is_empty());
    // The same with --no-validate is sent, and the plugin makes the volume.
    let out =
        run(&["call", &plugin.endpoint, "CreateVolume", &request, "--no-validate"], None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(plugin.calls(), 1);
    let out = run(&["call", &plugin.endpoint, "ListVolumes", "--format", "json"], None, &[]);
    let listed: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(listed["entries"].as_array().map(Vec::len), Some(1), "{listed}");
}

#[test]
fn not_found_comes_with_its_error_table_row() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plugin = Plugin::start(tmp.path(), false, memdriver::Config::default());
    let out =
        run(&["call", &plugin.endpoint, "DeleteSnapshot", "snapshot_id: \"nope\""], None, &[]);
    // DeleteSnapshot of an unknown id is OK (idempotent); GetSnapshot is NOT_FOUND.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run(&["call", &plugin.endpoint, "GetSnapshot", "snapshot_id: \"nope\""], None, &[]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    let mut lines = err.lines();
    assert!(lines.next().is_some_and(|l| l.starts_with("NOT_FOUND: ")), "{err}");
    let row = lines.next().unwrap_or_default();
    // The row is the generated table's, word for word, and says where it is carried from when
    // the release is read from its proto alone.
    let info =
        csikit::v1::errors::classify("GetSnapshot", csikit::errors::Code::NotFound).expect("row");
    let whose =
        info.carried_from.map_or_else(String::new, |f| format!(", carried from {f}'s spec.md"));
    assert!(
        row.contains(&format!("spec (GetSnapshot's error table{whose}): Snapshot does not exist")),
        "{err}"
    );
    assert!(row.contains(info.description) && row.contains(info.recovery), "{err}");
    // JSON: the same on stdout.
    let out = run(
        &[
            "call",
            &plugin.endpoint,
            "GetSnapshot",
            "{\"snapshotId\": \"nope\"}",
            "--format",
            "json",
        ],
        None,
        &[],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(v["error"]["status"], "NOT_FOUND");
    assert_eq!(v["error"]["spec"][0]["condition"], info.condition);
    assert_eq!(v["error"]["spec"][0]["recovery"], info.recovery);
    assert_eq!(v["error"]["spec"][0]["carried_from"], json!(info.carried_from));
    // A proto alone has no error tables, and says so.
    if let Some(corpus) = csikit_spec::corpus_or_skip() {
        let proto = corpus.join("csi-spec/v1.12.0/csi.proto");
        let out = run(
            &[
                "call",
                &plugin.endpoint,
                "GetSnapshot",
                "snapshot_id: \"nope\"",
                "--proto",
                &proto.display().to_string(),
            ],
            None,
            &[],
        );
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        assert!(stderr(&out).contains("spec: no error table in this source"), "{}", stderr(&out));
    }
}

/// One line on stderr, nothing on stdout, and the exit code.
fn one_line(out: &Output, code: i32) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(stdout(out).is_empty(), "{}", stdout(out));
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn bad_input_is_one_line() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plugin = Plugin::start(tmp.path(), false, memdriver::Config::default());
    let e = &plugin.endpoint;
    let err = one_line(&run(&["call", e, "CreateVolum"], None, &[]), 2);
    assert!(
        err.contains("unknown method 'CreateVolum'; did you mean")
            && err.contains("Controller/CreateVolume"),
        "{err}"
    );
    let err = one_line(
        &run(&["call", e, "CreateVolume", "{\"name\": \"a\",\n  \"parameters\": 5}"], None, &[]),
        2,
    );
    assert!(err.contains("REQUEST:2:17: invalid JSON"), "{err}");
    let err = one_line(&run(&["call", e, "CreateVolume", "name: \"a\"\nnope: 1"], None, &[]), 2);
    assert!(err.contains("REQUEST:2:"), "{err}");
    let file = tmp.path().join("req.json");
    std::fs::write(&file, "{\n\n  \"volumeId\": [1]\n}").expect("write");
    let err = one_line(
        &run(&["call", e, "DeleteVolume", "-d", &format!("@{}", file.display())], None, &[]),
        2,
    );
    assert!(err.contains(&format!("{}:3:", file.display())), "{err}");
    let err = one_line(&run(&["call", "http://x", "GetPluginInfo"], None, &[]), 2);
    assert!(err.contains("endpoint 'http://x'"), "{err}");
    let err = one_line(&run(&["call", "GetPluginInfo"], None, &[]), 2);
    assert!(err.contains("CSI_ENDPOINT"), "{err}");
    let none = format!("unix://{}", tmp.path().join("none.sock").display());
    let err = one_line(&run(&["call", &none, "GetPluginInfo"], None, &[]), 14);
    assert!(err.contains("UNAVAILABLE") && err.contains(&none), "{err}");
    let bad = tmp.path().join("bad.yaml");
    std::fs::write(&bad, "CreateVolumeSecret:\n  user: {flow: style}\n").expect("write");
    let err = one_line(
        &run(&["call", e, "GetPluginInfo", "--secrets", &bad.display().to_string()], None, &[]),
        2,
    );
    assert!(err.contains("bad.yaml: line 2"), "{err}");
    let err = one_line(&run(&["call", e, "GetMetadataAllocated"], None, &[]), 2);
    assert!(err.contains("streaming"), "{err}");
    // The environment stands in for the endpoint and the secrets file.
    let out = run(
        &["call", "GetPluginInfo"],
        None,
        &[("CSI_ENDPOINT", e), ("CSI_SECRETS", "/nonexistent/s.yaml")],
    );
    let err = one_line(&out, 2);
    assert!(err.contains("/nonexistent/s.yaml"), "{err}");
    assert_eq!(plugin.calls(), 0);
    let out = run(&["call", "GetPluginInfo"], None, &[("CSI_ENDPOINT", e)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("memdriver.csikit.dev"));
}

#[test]
fn a_plugin_that_never_answers_ends_with_deadline_exceeded() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let socket = tmp.path().join("hang.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    // Accepts every connection and keeps it open, never writing a byte.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming() {
            match s {
                Ok(s) => held.push(s),
                Err(_) => break,
            }
        }
    });
    let endpoint = format!("unix://{}", socket.display());
    let out = run(&["call", &endpoint, "GetPluginInfo", "--timeout", "1"], None, &[]);
    let err = one_line(&out, 4);
    assert!(err.contains("DEADLINE_EXCEEDED") && err.contains("1 s"), "{err}");
    let out = run(&["list", &endpoint, "--timeout", "1"], None, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}

#[test]
fn list_and_describe_say_what_the_plugin_is_beside_the_spec() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plugin = Plugin::start(tmp.path(), false, memdriver::Config::default());
    let out = run(&["list", &plugin.endpoint, "--format", "json"], None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).expect("json");
    assert_eq!(list["plugin"]["name"], "memdriver.csikit.dev");
    assert_eq!(list["probe"]["ready"], true);
    let controller = list["services"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["service"] == "Controller"))
        .expect("a Controller service");
    let create = controller["capabilities"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["capability"] == "rpc CREATE_DELETE_VOLUME"))
        .expect("CREATE_DELETE_VOLUME");
    assert_eq!(create["obliges"], json!(["CreateVolume", "DeleteVolume"]));
    // The capabilities are the ones the plugin states, as a typed client reads them.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    let stated: Vec<String> = rt.block_on(async {
        let ch = csikit::channel::connect(&plugin.endpoint).await.expect("connects");
        let mut c = csikit::v1::controller_client::ControllerClient::new(ch);
        let r = c
            .controller_get_capabilities(csikit::v1::ControllerGetCapabilitiesRequest {})
            .await
            .expect("answers");
        r.into_inner()
            .capabilities
            .iter()
            .filter_map(|c| {
                let csikit::v1::controller_service_capability::Type::Rpc(rpc) =
                    c.r#type.as_ref()?;
                let ty = csikit::v1::controller_service_capability::rpc::Type::try_from(rpc.r#type);
                Some(format!("rpc {}", ty.expect("known").as_str_name()))
            })
            .collect()
    });
    let shown: Vec<String> = controller["capabilities"]
        .as_array()
        .expect("list")
        .iter()
        .map(|c| c["capability"].as_str().expect("text").to_owned())
        .collect();
    assert_eq!(shown, stated);

    let out = run(&["describe", &plugin.endpoint, "--format", "json"], None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let described: Value = serde_json::from_str(&stdout(&out)).expect("json");
    let rpcs = |service: &str| -> Vec<Value> {
        described["services"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["service"] == service))
            .and_then(|s| s["rpcs"].as_array())
            .cloned()
            .unwrap_or_default()
    };
    let row = |service: &str, rpc: &str| {
        rpcs(service).into_iter().find(|r| r["rpc"] == rpc).unwrap_or_else(|| panic!("{rpc}"))
    };
    assert_eq!(row("Controller", "CreateVolume")["answer"], "not probed (changes state)");
    assert_eq!(row("Controller", "ListVolumes")["answer"], "answers (OK)");
    assert_eq!(row("Controller", "ListVolumes")["obliged"], "LIST_VOLUMES");
    assert_eq!(row("Node", "NodeGetInfo")["obliged"], "PUBLISH_UNPUBLISH_VOLUME");
    // v1.13.0's health RPCs are described: each is obliged by its capability's comment when
    // the plugin advertises it, and asked with an empty request (they read).
    let advertised = |service: &str, name: &str| {
        described["services"].as_array().is_some_and(|all| {
            all.iter().filter(|s| s["service"] == service).any(|s| {
                s["capabilities"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["capability"] == format!("rpc {name}")))
            })
        })
    };
    for (service, rpc, capability) in [
        ("Controller", "ControllerGetVolumeHealth", "GET_VOLUME_HEALTH"),
        ("Controller", "ControllerListVolumeHealth", "LIST_VOLUME_HEALTH"),
        ("Node", "NodeGetVolumeHealth", "GET_VOLUME_HEALTH"),
        ("Node", "NodeGetStorageHealth", "GET_STORAGE_HEALTH"),
    ] {
        let r = row(service, rpc);
        let obliged = if advertised(service, capability) { json!(capability) } else { Value::Null };
        assert_eq!(r["obliged"], obliged, "{rpc}");
        let answer = r["answer"].as_str().unwrap_or_default();
        assert!(answer == "UNIMPLEMENTED" || answer.starts_with("answers ("), "{rpc}: {answer}");
    }
    // describe created nothing: ListVolumes is empty, and only reads were sent.
    let out = run(&["call", &plugin.endpoint, "ListVolumes", "--format", "json"], None, &[]);
    assert_eq!(stdout(&out).trim(), "{}");

    // The spec folder's Model states the same obligations as csikit's generated tables.
    if let Some(corpus) = csikit_spec::corpus_or_skip() {
        let dir = corpus.join("csi-spec").join(csikit::SPEC_RELEASE).display().to_string();
        let out =
            run(&["describe", &plugin.endpoint, "--format", "json", "--spec-dir", &dir], None, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let from_model: Value = serde_json::from_str(&stdout(&out)).expect("json");
        assert_eq!(from_model["services"], described["services"]);
        assert_eq!(from_model["identity_always"], described["identity_always"]);
        let proto = corpus.join("csi-spec/v1.12.0/csi.proto").display().to_string();
        let out = run(&["list", &plugin.endpoint, "--proto", &proto], None, &[]);
        assert!(
            stdout(&out).contains("obligations: not stated by this source"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn the_bash_completion_names_the_commands_and_the_methods() {
    let out = run(&["completions", "bash"], None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let script = stdout(&out);
    for word in [
        "call",
        "describe",
        "list",
        "decode",
        "CreateVolume",
        "NodePublishVolume",
        "Probe",
        "identity.Identity/Probe",
    ] {
        assert!(script.contains(word), "the script lacks {word}");
    }
    // It is a script bash reads.
    let check = Command::new("bash").args(["-n", "-c", &script]).output().expect("bash");
    assert!(check.status.success(), "{}", stderr(&check));
}

/// v1.13.0's health RPCs are called like any other: a request that breaks the spec's rules is
/// refused before anything is sent, and the plugin's answer is printed with the spec beside it
/// (today's memdriver does not serve them: UNIMPLEMENTED, with the general table's row).
#[test]
fn a_health_rpc_is_checked_sent_and_answered_with_the_spec() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let plugin = Plugin::start(tmp.path(), false, memdriver::Config::default());
    let out = run(&["call", &plugin.endpoint, "ControllerGetVolumeHealth", "{}"], None, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("volume_id: is REQUIRED"), "{}", stderr(&out));
    assert_eq!(plugin.calls(), 0, "memdriver saw a call");
    let out = run(
        &["call", &plugin.endpoint, "ControllerGetVolumeHealth", "volume_id: \"vol-1\""],
        None,
        &[],
    );
    assert_eq!(plugin.calls(), 1);
    match out.status.code() {
        // Served: the answer, annotated, or the volume not found.
        Some(0) => assert!(stdout(&out).starts_with("# csi.v1.ControllerGetVolumeHealthResponse")),
        Some(5) => assert!(stderr(&out).starts_with("NOT_FOUND: "), "{}", stderr(&out)),
        Some(12) => {
            let err = stderr(&out);
            assert!(err.starts_with("UNIMPLEMENTED: "), "{err}");
            assert!(err.contains("spec (the general error table"), "{err}");
            assert!(err.contains("Call not implemented"), "{err}");
        }
        code => panic!("exit {code:?}: {}", stderr(&out)),
    }
}
