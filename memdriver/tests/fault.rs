//! Fault test: 64 concurrent clients make 10,000 calls against one memdriver over a unix socket,
//! 1% of them malformed (valid HTTP/2 and gRPC framing around garbage protobuf, or gRPC length
//! prefixes that lie) and 1% abrupt disconnects (connect, send part of a request, drop). The
//! server must not die or panic, must answer every well-formed call correctly during and after,
//! and must give back what the faults took: file descriptors to the baseline, RSS to within
//! `RSS_TOLERANCE_KIB` of the baseline measured after a warm-up at the same concurrency.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use csikit::v1::controller_client::ControllerClient;
use csikit::v1::identity_client::IdentityClient;
use csikit::v1::node_client::NodeClient;
use csikit::v1::node_service_capability::rpc::Type as NodeCapability;
use csikit::v1::volume_capability::access_mode::Mode;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume};
use csikit::v1::{
    CapacityRange, CreateVolumeRequest, GetCapacityRequest, ListVolumesRequest,
    NodeGetCapabilitiesRequest, NodePublishVolumeRequest, NodeStageVolumeRequest,
    NodeUnpublishVolumeRequest, ProbeRequest, VolumeCapability,
};
use support::{Server, tail};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tonic::transport::Channel;

const CLIENTS: usize = 64;
const CALLS: usize = 10_000;
const WARM_UP_CALLS: usize = 2_000;
/// How far RSS may stay above the warm-up baseline. The faults open 200 extra connections; if
/// each leaked its HTTP/2 state (buffers, a task, the socket: well over 64 KiB apiece) that alone
/// would be more than 12 MiB, and a per-call leak of 1 KiB over 10,000 calls is 10 MiB. Allocator
/// noise after a run at the warm-up's concurrency stays within a few MiB.
const RSS_TOLERANCE_KIB: u64 = 8 * 1024;
/// Every call, well-formed or not, must be answered (or the connection closed) within this.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What slot `i` of a run does: 1 in 100 malformed, 1 in 100 disconnect, the rest well-formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Probe,
    NodeCapabilities,
    Capacity,
    PublishToggle,
    GarbageProtobuf,
    LyingLength,
    Disconnect,
}

fn kind(i: usize, faults: bool) -> Kind {
    match i % 100 {
        37 if faults => {
            if (i / 100).is_multiple_of(2) {
                Kind::GarbageProtobuf
            } else {
                Kind::LyingLength
            }
        }
        73 if faults => Kind::Disconnect,
        r => [Kind::Probe, Kind::NodeCapabilities, Kind::Capacity, Kind::PublishToggle][r % 4],
    }
}

/// A small deterministic generator, so a failing run can be replayed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Outcomes of the malformed and disconnect slots, for the report.
#[derive(Default)]
struct Tally {
    outcomes: Mutex<BTreeMap<String, usize>>,
    well_formed: AtomicUsize,
    malformed: AtomicUsize,
    disconnects: AtomicUsize,
}

impl Tally {
    fn note(&self, what: String) {
        *self
            .outcomes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(what)
            .or_default() += 1;
    }
}

async fn connect(socket: &Path) -> Channel {
    csikit::channel::connect_unix(socket).await.expect("connect to memdriver")
}

fn mount_capability() -> VolumeCapability {
    VolumeCapability {
        access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
        access_type: Some(AccessType::Mount(MountVolume {
            fs_type: "ext4".into(),
            ..Default::default()
        })),
    }
}

/// One client's fixed volume, staged by the setup; it toggles one publication on it.
#[derive(Clone)]
struct Volume {
    id: String,
    staging: String,
    target: String,
}

/// A worker: takes slots from `next` until `end`, checks every well-formed answer.
async fn client(
    socket: PathBuf,
    volume: Volume,
    next: Arc<AtomicUsize>,
    end: usize,
    faults: bool,
    expected_capacity: i64,
    tally: Arc<Tally>,
) -> Result<(), String> {
    let channel = connect(&socket).await;
    let mut identity = IdentityClient::new(channel.clone());
    let mut node = NodeClient::new(channel.clone());
    let mut controller = ControllerClient::new(channel);
    let mut published = false;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= end {
            break;
        }
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1));
        let slot = kind(i, faults);
        let timed = |what: &str| {
            format!("slot {i} ({slot:?}): {what} not answered within {CALL_TIMEOUT:?}")
        };
        match slot {
            Kind::Probe => {
                let r = tokio::time::timeout(CALL_TIMEOUT, identity.probe(ProbeRequest {}))
                    .await
                    .map_err(|_| timed("Probe"))?
                    .map_err(|e| format!("slot {i}: Probe failed: {e}"))?
                    .into_inner();
                if r.ready == Some(false) {
                    return Err(format!("slot {i}: Probe says not ready"));
                }
            }
            Kind::NodeCapabilities => {
                let r = tokio::time::timeout(
                    CALL_TIMEOUT,
                    node.node_get_capabilities(NodeGetCapabilitiesRequest {}),
                )
                .await
                .map_err(|_| timed("NodeGetCapabilities"))?
                .map_err(|e| format!("slot {i}: NodeGetCapabilities failed: {e}"))?
                .into_inner();
                let stages = r.capabilities.iter().any(|c| {
                    matches!(&c.r#type, Some(csikit::v1::node_service_capability::Type::Rpc(rpc))
                        if rpc.r#type == NodeCapability::StageUnstageVolume as i32)
                });
                if !stages {
                    return Err(format!(
                        "slot {i}: NodeGetCapabilities lost STAGE_UNSTAGE_VOLUME: {r:?}"
                    ));
                }
            }
            Kind::Capacity => {
                let r = tokio::time::timeout(
                    CALL_TIMEOUT,
                    controller.get_capacity(GetCapacityRequest::default()),
                )
                .await
                .map_err(|_| timed("GetCapacity"))?
                .map_err(|e| format!("slot {i}: GetCapacity failed: {e}"))?
                .into_inner();
                if r.available_capacity != expected_capacity {
                    return Err(format!(
                        "slot {i}: GetCapacity says {} available, expected {expected_capacity}",
                        r.available_capacity
                    ));
                }
            }
            Kind::PublishToggle => {
                toggle(&mut node, &volume, &mut published)
                    .await
                    .map_err(|e| format!("slot {i}: {e}"))?;
            }
            Kind::GarbageProtobuf => {
                tally.malformed.fetch_add(1, Ordering::Relaxed);
                // Field 1 with wire type 7 does not exist: no decoder can take this for a message.
                let mut payload = vec![0x0f];
                let len = 1 + (rng.next() % 200) as usize;
                payload.extend(rng.bytes(len));
                let path = GARBAGE_PATHS[(i / 200) % GARBAGE_PATHS.len()];
                let outcome = raw_call(&socket, path, grpc_frame(&payload, None)).await;
                match &outcome {
                    Outcome::Status(0) => {
                        return Err(format!("slot {i}: garbage to {path} answered OK"));
                    }
                    Outcome::Hung => return Err(timed(path)),
                    _ => {}
                }
                tally.note(format!("garbage protobuf -> {outcome}"));
            }
            Kind::LyingLength => {
                tally.malformed.fetch_add(1, Ordering::Relaxed);
                let payload = rng.bytes(16);
                let (label, claimed) = match (i / 200) % 3 {
                    0 => ("length prefix 100 bytes too long", 116),
                    1 => ("length prefix 4 GiB", u32::MAX),
                    _ => ("length prefix 13 bytes too short", 3),
                };
                let outcome = raw_call(
                    &socket,
                    "/csi.v1.Node/NodeGetCapabilities",
                    grpc_frame(&payload, Some(claimed)),
                )
                .await;
                match &outcome {
                    // A short prefix leaves a well-formed 3-byte message followed by a torn
                    // frame; either answer is fine as long as there is one.
                    Outcome::Status(0) if claimed != 3 => {
                        return Err(format!("slot {i}: {label} answered OK"));
                    }
                    Outcome::Hung => return Err(timed(label)),
                    _ => {}
                }
                tally.note(format!("{label} -> {outcome}"));
            }
            Kind::Disconnect => {
                tally.disconnects.fetch_add(1, Ordering::Relaxed);
                let how = disconnect(&socket, (i / 100) % 3, &mut rng).await;
                tally.note(format!("disconnect: {how}"));
            }
        }
        if matches!(
            slot,
            Kind::Probe | Kind::NodeCapabilities | Kind::Capacity | Kind::PublishToggle
        ) {
            tally.well_formed.fetch_add(1, Ordering::Relaxed);
        }
    }
    if published {
        toggle(&mut node, &volume, &mut published).await?;
    }
    Ok(())
}

const GARBAGE_PATHS: &[&str] = &[
    "/csi.v1.Identity/Probe",
    "/csi.v1.Node/NodePublishVolume",
    "/csi.v1.Controller/CreateVolume",
    "/csi.v1.Controller/GetCapacity",
];

/// Publishes the client's volume, or unpublishes it if published.
async fn toggle(
    node: &mut NodeClient<Channel>,
    volume: &Volume,
    published: &mut bool,
) -> Result<(), String> {
    let answer = if *published {
        let request = NodeUnpublishVolumeRequest {
            volume_id: volume.id.clone(),
            target_path: volume.target.clone(),
        };
        tokio::time::timeout(CALL_TIMEOUT, node.node_unpublish_volume(request))
            .await
            .map(|r| r.map(|_| ()))
    } else {
        let request = NodePublishVolumeRequest {
            volume_id: volume.id.clone(),
            staging_target_path: volume.staging.clone(),
            target_path: volume.target.clone(),
            volume_capability: Some(mount_capability()),
            ..Default::default()
        };
        tokio::time::timeout(CALL_TIMEOUT, node.node_publish_volume(request))
            .await
            .map(|r| r.map(|_| ()))
    };
    let what = if *published { "NodeUnpublishVolume" } else { "NodePublishVolume" };
    answer
        .map_err(|_| format!("{what} not answered"))?
        .map_err(|e| format!("{what} failed: {e}"))?;
    *published = !*published;
    Ok(())
}

/// A gRPC message frame: flag, big-endian length (the true one unless `claimed`), payload.
fn grpc_frame(payload: &[u8], claimed: Option<u32>) -> Bytes {
    let mut frame = BytesMut::with_capacity(5 + payload.len());
    frame.put_u8(0);
    frame.put_u32(claimed.unwrap_or(payload.len() as u32));
    frame.put_slice(payload);
    frame.freeze()
}

/// How the server answered a raw call.
enum Outcome {
    /// A `grpc-status`, from the headers (trailers-only) or the trailers.
    Status(u32),
    /// The stream or connection was reset or closed without a status.
    Reset(String),
    /// No answer within `CALL_TIMEOUT`.
    Hung,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Status(code) => {
                write!(f, "grpc-status {code} ({:?})", tonic::Code::from_i32(*code as i32))
            }
            Outcome::Reset(why) => write!(f, "reset ({why})"),
            Outcome::Hung => f.write_str("no answer"),
        }
    }
}

/// Sends `body` as one unary gRPC request on a fresh HTTP/2 connection, bypassing every codec.
async fn raw_call(socket: &Path, path: &str, body: Bytes) -> Outcome {
    match tokio::time::timeout(CALL_TIMEOUT, raw_call_inner(socket, path, body)).await {
        Ok(Ok(code)) => Outcome::Status(code),
        Ok(Err(why)) => Outcome::Reset(why),
        Err(_) => Outcome::Hung,
    }
}

async fn raw_call_inner(socket: &Path, path: &str, body: Bytes) -> Result<u32, String> {
    let io = UnixStream::connect(socket).await.map_err(|e| format!("connect: {e}"))?;
    let (client, connection) =
        h2::client::handshake(io).await.map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let result = async {
        let mut client = client.ready().await.map_err(|e| format!("ready: {e}"))?;
        let request = http::Request::post(format!("http://memdriver.invalid{path}"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .map_err(|e| e.to_string())?;
        let (response, mut send) =
            client.send_request(request, false).map_err(|e| format!("send: {e}"))?;
        send.send_data(body, true).map_err(|e| format!("send data: {e}"))?;
        let response = response.await.map_err(|e| reason(&e))?;
        if let Some(code) = grpc_status(response.headers()) {
            return Ok(code);
        }
        let mut body = response.into_body();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|e| reason(&e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        let trailers = body.trailers().await.map_err(|e| reason(&e))?;
        trailers.as_ref().and_then(grpc_status).ok_or_else(|| "no grpc-status".to_owned())
    }
    .await;
    driver.abort();
    result
}

fn reason(e: &h2::Error) -> String {
    match e.reason() {
        Some(r) => format!("{r:?}"),
        None if e.is_io() => "io".to_owned(),
        None => "closed".to_owned(),
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<u32> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// Connects, sends part of something, and drops the connection. Returns what it did.
async fn disconnect(socket: &Path, variant: usize, rng: &mut XorShift) -> &'static str {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let Ok(mut io) = UnixStream::connect(socket).await else {
        return "connect refused";
    };
    match variant {
        0 => {
            let cut = 1 + (rng.next() as usize) % (PREFACE.len() - 1);
            let _ = io.write_all(&PREFACE[..cut]).await;
            "part of the preface"
        }
        1 => {
            // Preface, empty SETTINGS, then a HEADERS frame header promising 100 bytes, and 10.
            let mut bytes = PREFACE.to_vec();
            bytes.extend([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
            bytes.extend([0, 0, 100, 0x1, 0x4, 0, 0, 0, 1]);
            bytes.extend(rng.bytes(10));
            let _ = io.write_all(&bytes).await;
            "a torn HEADERS frame"
        }
        _ => {
            // A real HTTP/2 request whose gRPC frame promises 64 bytes; send 8, then vanish.
            let Ok((client, connection)) = h2::client::handshake(io).await else {
                return "handshake refused";
            };
            let driver = tokio::spawn(connection);
            if let Ok(mut client) = client.ready().await
                && let Ok(request) =
                    http::Request::post("http://memdriver.invalid/csi.v1.Node/NodePublishVolume")
                        .header("content-type", "application/grpc")
                        .header("te", "trailers")
                        .body(())
                && let Ok((_response, mut send)) = client.send_request(request, false)
            {
                let mut partial = grpc_frame(&rng.bytes(64), None).to_vec();
                partial.truncate(13);
                let _ = send.send_data(Bytes::from(partial), false);
                // Let the frames reach the socket before it goes.
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            driver.abort();
            "half a request body"
        }
    }
}

/// Runs `calls` slots over `CLIENTS` clients; every client error is collected.
async fn run(
    socket: &Path,
    volumes: &[Volume],
    calls: usize,
    faults: bool,
    expected_capacity: i64,
    tally: &Arc<Tally>,
) -> Vec<String> {
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = volumes
        .iter()
        .map(|v| {
            tokio::spawn(client(
                socket.to_owned(),
                v.clone(),
                next.clone(),
                calls,
                faults,
                expected_capacity,
                tally.clone(),
            ))
        })
        .collect();
    let mut errors = Vec::new();
    for task in tasks {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(format!("client task: {e}")),
        }
    }
    errors
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn survives_malformed_frames_and_disconnects() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut server =
        Server::start(tmp.path(), &[("RUST_LOG", "info"), ("MEMDRIVER_NODE_ID", "fault-node")]);
    let socket = server.socket.clone();

    // One staged volume per client, so publications never overlap (no ABORTED by design).
    let channel = connect(&socket).await;
    let mut controller = ControllerClient::new(channel.clone());
    let mut node = NodeClient::new(channel);
    let mut volumes = Vec::new();
    for c in 0..CLIENTS {
        let created = controller
            .create_volume(CreateVolumeRequest {
                name: format!("fault-{c}"),
                capacity_range: Some(CapacityRange { required_bytes: 1 << 30, limit_bytes: 0 }),
                volume_capabilities: vec![mount_capability()],
                ..Default::default()
            })
            .await
            .expect("CreateVolume")
            .into_inner();
        let id = created.volume.expect("a volume").volume_id;
        let staging = format!("/staging/fault-{c}");
        node.node_stage_volume(NodeStageVolumeRequest {
            volume_id: id.clone(),
            staging_target_path: staging.clone(),
            volume_capability: Some(mount_capability()),
            ..Default::default()
        })
        .await
        .expect("NodeStageVolume");
        // The plugin creates target_path inside a parent the CO (here, the test) provides.
        let target = tmp.path().join(format!("target-fault-{c}"));
        volumes.push(Volume { id, staging, target: target.to_str().expect("utf-8").to_owned() });
    }
    let capacity = controller
        .get_capacity(GetCapacityRequest::default())
        .await
        .expect("GetCapacity")
        .into_inner();
    let expected = capacity.available_capacity;

    // Warm-up at full concurrency so the allocator's arenas exist before the baseline.
    let warm = Arc::new(Tally::default());
    let errors = run(&socket, &volumes, WARM_UP_CALLS, false, expected, &warm).await;
    assert!(errors.is_empty(), "warm-up failed:\n{}", errors.join("\n"));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_baseline = server.status_kib("VmRSS");
    let fds_baseline = server.open_fds();

    let tally = Arc::new(Tally::default());
    let started = Instant::now();
    let errors = run(&socket, &volumes, CALLS, true, expected, &tally).await;
    let elapsed = started.elapsed();
    assert!(
        errors.is_empty(),
        "{} clients failed:\n{}\n--- memdriver log (tail) ---\n{}",
        errors.len(),
        errors.join("\n"),
        tail(&server.log_text(), 40)
    );
    assert!(server.exited().is_none(), "memdriver died:\n{}", tail(&server.log_text(), 40));
    let rss_peak = server.status_kib("VmHWM");

    // After the run: the server still answers, and its state is what the clients left.
    let listed = controller
        .list_volumes(ListVolumesRequest::default())
        .await
        .expect("ListVolumes")
        .into_inner();
    assert_eq!(listed.entries.len(), CLIENTS, "volumes after the run");
    let capacity = controller
        .get_capacity(GetCapacityRequest::default())
        .await
        .expect("GetCapacity")
        .into_inner();
    assert_eq!(capacity.available_capacity, expected, "capacity after the run");
    drop(controller);
    drop(node);

    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = server.status_kib("VmRSS");
    let fds_after = server.open_fds();

    let malformed = tally.malformed.load(Ordering::Relaxed);
    let disconnects = tally.disconnects.load(Ordering::Relaxed);
    let well_formed = tally.well_formed.load(Ordering::Relaxed);
    eprintln!(
        "fault run: {CALLS} calls from {CLIENTS} clients in {:.2} s: {well_formed} well-formed (all correct), \
         {malformed} malformed, {disconnects} disconnects",
        elapsed.as_secs_f64()
    );
    for (outcome, n) in
        tally.outcomes.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter()
    {
        eprintln!("  {n:4} x {outcome}");
    }
    eprintln!(
        "RSS: baseline {rss_baseline} KiB after {WARM_UP_CALLS} warm-up calls, peak {rss_peak} KiB, after {rss_after} KiB \
         (tolerance +{RSS_TOLERANCE_KIB} KiB); open fds: baseline {fds_baseline}, after {fds_after}"
    );

    assert_eq!(malformed, CALLS / 100, "malformed calls made");
    assert_eq!(disconnects, CALLS / 100, "disconnects made");
    assert_eq!(
        well_formed,
        CALLS - malformed - disconnects,
        "well-formed calls answered correctly"
    );
    let log = server.log_text();
    assert!(!log.contains("panicked"), "memdriver panicked:\n{}", tail(&log, 40));
    // The clients' 64 channels and the setup channel are closed now; no fault connection may linger.
    assert!(
        fds_after <= fds_baseline,
        "open fds grew from {fds_baseline} to {fds_after}: connections leak"
    );
    assert!(
        rss_after <= rss_baseline + RSS_TOLERANCE_KIB,
        "RSS grew from {rss_baseline} KiB to {rss_after} KiB, beyond the {RSS_TOLERANCE_KIB} KiB tolerance"
    );

    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "memdriver exit status after SIGTERM");
}
