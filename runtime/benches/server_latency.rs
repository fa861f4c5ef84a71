//! What csikit's server skeleton adds to a call: NodePublishVolume over a unix socket through
//! the skeleton with every layer on (`Layers::default()` plus response validation), beside a
//! bare tonic server implementing tonic's generated `Node` trait with the same handler body.
//! Each is measured with no tracing subscriber and with a `tracing-subscriber` fmt subscriber
//! at INFO writing to `io::sink` (a real driver has one), set up as `cargo xtask new-driver`'s
//! scaffold sets it up. A last column calls the tonic service directly, without the transport:
//! the layers' own cost, free of socket noise.
//!
//! Run: `cargo bench -p csikit-codegen --bench server_latency`.
//!
//! Each measurement runs in a child process of this binary (`--child VARIANT`): "no subscriber"
//! then means no tracing dispatcher ever existed in the process, which one process switching
//! subscribers could not give (tracing caches each callsite's interest for every dispatcher
//! created). The parent runs [`ROUNDS`] rounds, each variant once per round in rotating order
//! so machine noise hits all alike, and pools the samples. In a child the server runs on a
//! multi-thread tokio runtime and the client (one tonic channel over the socket) on a
//! current-thread runtime of its own: a warm-up, then [`SEQUENTIAL`] calls one after the other
//! (latency), then [`IN_FLIGHT`] tasks calling at once on distinct volumes (throughput).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use csikit::server::{Endpoint, Layers};
use csikit::v1::node_client::NodeClient;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume, access_mode::Mode};
use csikit::v1::*;
use prost::Message as _;
use tonic::{Request, Response, Status};

/// Rounds of the four variants.
const ROUNDS: usize = 10;
/// Calls before measuring, per child.
const WARM_UP: usize = 2_000;
/// Sequential calls timed one by one, per child.
const SEQUENTIAL: usize = 10_000;
/// Calls in flight at once in the throughput run.
const IN_FLIGHT: usize = 16;
/// Calls per in-flight task in the throughput run.
const PER_TASK: usize = 1_000;
/// Calls straight into the service, without the transport, per child.
const DIRECT: usize = 100_000;

/// A NodePublishVolumeRequest as kubelet sends one for a pod with a node-publish secret and
/// pod info on mount.
fn request(volume: usize) -> NodePublishVolumeRequest {
    let context =
        [("csi.storage.k8s.io/pod.name", "web-0"), ("csi.storage.k8s.io/pod.namespace", "default")];
    NodePublishVolumeRequest {
        volume_id: format!("vol-0123456789abcd{volume:03}"),
        target_path: "/var/lib/kubelet/pods/0b2a6c4e-3d2f-4f0e-9a7b-1c2d3e4f5a6b/volumes/kubernetes.io~csi/pvc-8e1c2f3a/mount".into(),
        volume_capability: Some(VolumeCapability {
            access_type: Some(AccessType::Mount(MountVolume {
                fs_type: "ext4".into(),
                mount_flags: vec!["noatime".into()],
                ..Default::default()
            })),
            access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
        }),
        readonly: false,
        secrets: HashMap::from([("token".to_owned(), "c2VjcmV0LXRva2VuLTEyMzQ".to_owned())]),
        volume_context: context.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..Default::default()
    }
}

/// The handler body both servers run: what a driver's NodePublishVolume does before it mounts.
fn publish(
    request: Request<NodePublishVolumeRequest>,
) -> Result<Response<NodePublishVolumeResponse>, Status> {
    let request = request.into_inner();
    let Some(capability) = request.volume_capability.as_ref() else {
        return Err(Status::invalid_argument("volume_capability is required"));
    };
    if request.target_path.is_empty() {
        return Err(Status::invalid_argument("target_path is required"));
    }
    black_box((&request.volume_id, &request.target_path, capability, request.readonly));
    Ok(Response::new(NodePublishVolumeResponse {}))
}

struct SkeletonNode;

#[csikit::csi_service]
impl csikit::v1::server::Node for SkeletonNode {
    async fn node_publish_volume(
        &self,
        request: Request<NodePublishVolumeRequest>,
    ) -> Result<Response<NodePublishVolumeResponse>, Status> {
        publish(request)
    }
}

struct BareNode;

#[tonic::async_trait]
impl csikit::v1::node_server::Node for BareNode {
    async fn node_stage_volume(
        &self,
        _: Request<NodeStageVolumeRequest>,
    ) -> Result<Response<NodeStageVolumeResponse>, Status> {
        Err(Status::unimplemented("NodeStageVolume"))
    }
    async fn node_unstage_volume(
        &self,
        _: Request<NodeUnstageVolumeRequest>,
    ) -> Result<Response<NodeUnstageVolumeResponse>, Status> {
        Err(Status::unimplemented("NodeUnstageVolume"))
    }
    async fn node_publish_volume(
        &self,
        request: Request<NodePublishVolumeRequest>,
    ) -> Result<Response<NodePublishVolumeResponse>, Status> {
        publish(request)
    }
    async fn node_unpublish_volume(
        &self,
        _: Request<NodeUnpublishVolumeRequest>,
    ) -> Result<Response<NodeUnpublishVolumeResponse>, Status> {
        Err(Status::unimplemented("NodeUnpublishVolume"))
    }
    async fn node_get_volume_stats(
        &self,
        _: Request<NodeGetVolumeStatsRequest>,
    ) -> Result<Response<NodeGetVolumeStatsResponse>, Status> {
        Err(Status::unimplemented("NodeGetVolumeStats"))
    }
    async fn node_expand_volume(
        &self,
        _: Request<NodeExpandVolumeRequest>,
    ) -> Result<Response<NodeExpandVolumeResponse>, Status> {
        Err(Status::unimplemented("NodeExpandVolume"))
    }
    async fn node_get_volume_health(
        &self,
        _: Request<csikit::v1::NodeGetVolumeHealthRequest>,
    ) -> Result<Response<csikit::v1::NodeGetVolumeHealthResponse>, Status> {
        Err(Status::unimplemented("NodeGetVolumeHealth"))
    }
    async fn node_get_storage_health(
        &self,
        _: Request<csikit::v1::NodeGetStorageHealthRequest>,
    ) -> Result<Response<csikit::v1::NodeGetStorageHealthResponse>, Status> {
        Err(Status::unimplemented("NodeGetStorageHealth"))
    }
    async fn node_get_capabilities(
        &self,
        _: Request<NodeGetCapabilitiesRequest>,
    ) -> Result<Response<NodeGetCapabilitiesResponse>, Status> {
        Err(Status::unimplemented("NodeGetCapabilities"))
    }
    async fn node_get_info(
        &self,
        _: Request<NodeGetInfoRequest>,
    ) -> Result<Response<NodeGetInfoResponse>, Status> {
        Err(Status::unimplemented("NodeGetInfo"))
    }
}

/// One configuration measured: which server, and whether a subscriber is installed.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    skeleton: bool,
    subscriber: bool,
    /// Served as `serve_routes` serves a unix socket, through the `:authority` rewriter.
    rewriter: bool,
}

const VARIANTS: [Variant; 5] = [
    Variant { name: "skeleton, no subscriber", skeleton: true, subscriber: false, rewriter: true },
    Variant {
        name: "bare tonic, no subscriber",
        skeleton: false,
        subscriber: false,
        rewriter: false,
    },
    Variant {
        name: "skeleton, fmt subscriber at INFO",
        skeleton: true,
        subscriber: true,
        rewriter: true,
    },
    Variant {
        name: "bare tonic, fmt subscriber at INFO",
        skeleton: false,
        subscriber: true,
        rewriter: false,
    },
    Variant {
        name: "skeleton, no subscriber, no :authority rewriter",
        skeleton: true,
        subscriber: false,
        rewriter: false,
    },
];

/// What one child measured.
struct Measured {
    /// Sequential call latencies, nanoseconds.
    latencies: Vec<u64>,
    /// The throughput run: calls and wall time.
    concurrent_calls: usize,
    concurrent_time: Duration,
    /// Calls straight into the service and their total time.
    direct_calls: usize,
    direct_time: Duration,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let index: usize =
            args.get(at + 1).and_then(|i| i.parse().ok()).expect("--child VARIANT_INDEX");
        child(VARIANTS[index]);
        return;
    }
    parent();
}

fn parent() {
    let size = request(0).encode_to_vec().len();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!("NodePublishVolume over a unix socket, request {size} bytes, {cores} cores");
    println!(
        "{ROUNDS} rounds x {} variants, each a child process: {WARM_UP} warm-up calls, {SEQUENTIAL} sequential calls, {} calls with {IN_FLIGHT} in flight",
        VARIANTS.len(),
        IN_FLIGHT * PER_TASK
    );
    let exe = std::env::current_exe().expect("own path");
    let mut pooled: Vec<Measured> = VARIANTS
        .iter()
        .map(|_| Measured {
            latencies: Vec::new(),
            concurrent_calls: 0,
            concurrent_time: Duration::ZERO,
            direct_calls: 0,
            direct_time: Duration::ZERO,
        })
        .collect();
    // Per round, each variant's p50, for the spread of the overhead between rounds.
    let mut round_p50 = vec![[0u64; VARIANTS.len()]; ROUNDS];
    for (round, p50s) in round_p50.iter_mut().enumerate() {
        for k in 0..VARIANTS.len() {
            let index = (round + k) % VARIANTS.len();
            let measured = run_child(&exe, index);
            p50s[index] = percentile(&mut measured.latencies.clone(), 50.0);
            let pool = &mut pooled[index];
            pool.latencies.extend(measured.latencies);
            pool.concurrent_calls += measured.concurrent_calls;
            pool.concurrent_time += measured.concurrent_time;
            pool.direct_calls += measured.direct_calls;
            pool.direct_time += measured.direct_time;
        }
        eprintln!("round {}/{ROUNDS} done", round + 1);
    }

    println!();
    println!(
        "| server | p50 | p99 | sequential calls/s | {IN_FLIGHT} in flight calls/s | no transport: time per call |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let mut p50 = [0u64; VARIANTS.len()];
    for (i, (variant, m)) in VARIANTS.iter().zip(&mut pooled).enumerate() {
        let total: u64 = m.latencies.iter().sum();
        let sequential = m.latencies.len() as f64 / (total as f64 / 1e9);
        let concurrent = m.concurrent_calls as f64 / m.concurrent_time.as_secs_f64();
        p50[i] = percentile(&mut m.latencies, 50.0);
        let p99 = percentile(&mut m.latencies, 99.0);
        let direct = m.direct_time.as_nanos() as f64 / m.direct_calls as f64;
        println!(
            "| {} | {} | {} | {sequential:.0} | {concurrent:.0} | {direct:.0} ns |",
            variant.name,
            micros(p50[i]),
            micros(p99)
        );
    }
    println!();
    for (skeleton, bare, what) in [
        (0, 1, "no subscriber"),
        (2, 3, "fmt subscriber at INFO"),
        (0, 4, "the :authority rewriter (skeleton with it against without it)"),
    ] {
        let pooled_overhead = overhead(p50[skeleton], p50[bare]);
        let mut per_round: Vec<f64> =
            round_p50.iter().map(|r| overhead(r[skeleton], r[bare])).collect();
        per_round.sort_by(f64::total_cmp);
        println!(
            "overhead at p50, {what}: {pooled_overhead:+.1}% (per round: median {:+.1}%, range {:+.1}% to {:+.1}%)",
            per_round[per_round.len() / 2],
            per_round[0],
            per_round[per_round.len() - 1]
        );
    }
}

fn overhead(skeleton: u64, bare: u64) -> f64 {
    (skeleton as f64 / bare as f64 - 1.0) * 100.0
}

fn micros(ns: u64) -> String {
    format!("{:.1} µs", ns as f64 / 1000.0)
}

/// The `p`th percentile (nearest rank) of `samples`.
fn percentile(samples: &mut [u64], p: f64) -> u64 {
    samples.sort_unstable();
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

/// Runs one child and reads what it printed: `seq` and the latencies, then `conc`, the calls
/// and the nanoseconds they took.
fn run_child(exe: &Path, index: usize) -> Measured {
    let out = Command::new(exe).arg("--child").arg(index.to_string()).output().expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {index} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut measured = Measured {
        latencies: Vec::new(),
        concurrent_calls: 0,
        concurrent_time: Duration::ZERO,
        direct_calls: 0,
        direct_time: Duration::ZERO,
    };
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let numbers = |words: std::str::SplitWhitespace<'_>| {
            words.map(|w| w.parse::<u64>().expect("number")).collect::<Vec<_>>()
        };
        match words.next() {
            Some("seq") => measured.latencies = numbers(words),
            Some("conc") => {
                let n = numbers(words);
                measured.concurrent_calls = usize::try_from(n[0]).expect("fits");
                measured.concurrent_time = Duration::from_nanos(n[1]);
            }
            Some("direct") => {
                let n = numbers(words);
                measured.direct_calls = usize::try_from(n[0]).expect("fits");
                measured.direct_time = Duration::from_nanos(n[1]);
            }
            _ => {}
        }
    }
    assert_eq!(measured.latencies.len(), SEQUENTIAL, "child {index} printed its samples");
    measured
}

fn child(variant: Variant) {
    if variant.subscriber {
        // What `cargo xtask new-driver` sets up, with stderr replaced by a sink: INFO, no colour
        // (a plugin's stderr is a container log, not a terminal).
        tracing_subscriber::fmt()
            .with_writer(std::io::sink)
            .with_ansi(false)
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .init();
    }
    let dir = std::env::temp_dir().join(format!("csikit-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("socket dir");
    let socket = dir.join("csi.sock");

    let server_runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("server runtime");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async {
        let _ = stopped.await;
    };
    let serving = if variant.skeleton && !variant.rewriter {
        // The skeleton's routes on a plain listener: everything but the rewriter.
        let socket = socket.clone();
        server_runtime.spawn(async move {
            let layers = Layers { validate_responses: true, ..Layers::default() };
            let server = csikit::server::Builder::new("bench.csikit.dev", "1")
                .layers(layers)
                .node(SkeletonNode)
                .build()
                .await
                .expect("builds");
            let listener = tokio::net::UnixListener::bind(&socket).expect("binds");
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            tonic::transport::Server::builder()
                .add_routes(server.into_routes())
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
                .expect("serves");
        })
    } else if variant.skeleton {
        let endpoint = Endpoint::Unix(socket.clone());
        server_runtime.spawn(async move {
            let layers = Layers { validate_responses: true, ..Layers::default() };
            let server = csikit::server::Builder::new("bench.csikit.dev", "1")
                .layers(layers)
                .node(SkeletonNode)
                .build()
                .await
                .expect("builds");
            server.serve(&endpoint, shutdown).await.expect("serves");
        })
    } else {
        let socket = socket.clone();
        server_runtime.spawn(async move {
            let listener = tokio::net::UnixListener::bind(&socket).expect("binds");
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            tonic::transport::Server::builder()
                .add_service(csikit::v1::node_server::NodeServer::new(BareNode))
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
                .expect("serves");
        })
    };

    let client_runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let (latencies, calls, took) = client_runtime.block_on(measure(&socket));
    let direct = client_runtime.block_on(direct_calls(variant.skeleton));
    // Closes the client's connection, which the server's drain waits for.
    drop(client_runtime);
    drop(stop);
    server_runtime.block_on(serving).expect("server stops");
    let _ = std::fs::remove_dir_all(&dir);

    let mut out = String::from("seq");
    for ns in latencies {
        out.push(' ');
        out.push_str(&ns.to_string());
    }
    println!("{out}");
    println!("conc {calls} {}", took.as_nanos());
    println!("direct {DIRECT} {}", direct.as_nanos());
}

/// Calls straight into the tonic service (no transport): what the layers cost by themselves.
async fn direct_calls(skeleton: bool) -> Duration {
    use csikit::v1::node_server::Node as _;
    let layers = Layers { validate_responses: true, ..Layers::default() };
    let adapter = csikit::v1::server::NodeService::new(
        std::sync::Arc::new(SkeletonNode),
        std::sync::Arc::new(csikit::server::Pipeline::new(layers)),
        std::sync::Arc::default(),
    );
    let one = request(0);
    let mut total = Duration::ZERO;
    for _ in 0..DIRECT {
        let r = Request::new(one.clone());
        let started = Instant::now();
        let response = if skeleton {
            adapter.node_publish_volume(r).await
        } else {
            BareNode.node_publish_volume(r).await
        };
        total += started.elapsed();
        black_box(response.expect("call"));
    }
    total
}

async fn measure(socket: &Path) -> (Vec<u64>, usize, Duration) {
    let mut client = NodeClient::new(channel(socket.to_owned()).await);
    let one = request(0);
    for _ in 0..WARM_UP {
        client.node_publish_volume(one.clone()).await.expect("call");
    }
    let mut latencies = Vec::with_capacity(SEQUENTIAL);
    for _ in 0..SEQUENTIAL {
        let r = one.clone();
        let started = Instant::now();
        client.node_publish_volume(r).await.expect("call");
        latencies.push(u64::try_from(started.elapsed().as_nanos()).expect("fits"));
    }
    // Distinct volumes: calls on one volume overlapping would be ABORTED by the skeleton.
    let started = Instant::now();
    let tasks: Vec<_> = (0..IN_FLIGHT)
        .map(|task| {
            let mut client = client.clone();
            let r = request(task + 1);
            tokio::spawn(async move {
                for _ in 0..PER_TASK {
                    client.node_publish_volume(r.clone()).await.expect("call");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    (latencies, IN_FLIGHT * PER_TASK, started.elapsed())
}

async fn channel(path: PathBuf) -> tonic::transport::Channel {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::UnixStream::connect(&path).await.is_err() {
        assert!(Instant::now() < deadline, "the server never listened on '{}'", path.display());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    csikit::channel::connect_unix(&path).await.expect("connects")
}
