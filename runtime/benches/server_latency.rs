//! What csikit's server skeleton adds to a call: NodePublishVolume over a unix socket through
//! the skeleton with every layer on (`Layers::default()` plus response validation), beside a
//! bare tonic server implementing tonic's generated `Node` trait with the same handler body.
//!
//! Each is measured with no tracing subscriber and at INFO with the log written to a file, as a
//! deployed driver's log goes to a file or a pipe: through the skeleton's non-blocking
//! `server::log::LogLayer`, and through `tracing-subscriber`'s `fmt` layer, which formats and
//! writes each line on the call's thread, for comparison. Bare tonic writes no line per call (it
//! has none to write). A column calls the tonic service directly, without the transport: the
//! layers' own cost, free of socket noise; beside it the heap allocations of one such call, which
//! no load on the machine changes.
//!
//! The client's channel sends `localhost` as its `:authority`, as kubelet and the sidecars do:
//! one h2 takes, so the skeleton's rewriter passes the connection through after its first
//! requests (`server::authority::SETTLE_AFTER`); a client whose authority it rewrites (grpcio,
//! grpc-java) pays the rewriter on every request, which this bench does not show.
//!
//! Run: `cargo bench -p csikit-runtime --bench server_latency`. The last lines compare the
//! skeleton with bare tonic at p50 in microseconds, against the bounds (1 µs added with
//! no subscriber, 2 µs at INFO), and say whether every call was logged, none with a secret.
//!
//! Each log setting runs in a child process of this binary (`--child MODE ROUND`): "no
//! subscriber" then means no tracing dispatcher ever existed in the process, which one process
//! switching subscribers could not give (tracing caches each callsite's interest for every
//! dispatcher created). A child serves the skeleton and bare tonic (and, without a subscriber,
//! the skeleton without its `:authority` rewriter) at once, each on a socket of its own, on one
//! multi-thread tokio runtime; the client (one tonic channel per socket, connected once the
//! server listens) runs on a current-thread runtime of its own and calls the servers in turn,
//! one call each, each turn in an order drawn at random: the compared calls are made side by side in
//! one process, so neither the process nor the moment favours one server (separate processes
//! differed by up to 30 µs at p50 from one run to the next on this machine). A warm-up, then
//! [`SEQUENTIAL`] calls per server (latency), then per server [`IN_FLIGHT`] tasks calling at once
//! on distinct volumes (throughput). The parent runs [`ROUNDS`] rounds, the children in rotating
//! order, and pools the samples. A child with a log reads the file back after the calls over the
//! socket (once the writer has written what was logged): one `ok` line per call the skeleton
//! served, none dropped. The calls without transport come a microsecond apart, far faster than
//! any CO calls a plugin, and may fill the non-blocking log's queue: at the end, every call has
//! its line or is counted dropped, and the log's own notices say as many as were dropped. No line
//! may hold the secret value. At INFO the log's writer thread runs while either server answers:
//! its share of the 2 cores lands on both, so the throughput columns (the servers one after the
//! other) are where the writer's whole cost shows.

#![allow(
    unsafe_code,
    reason = "counting allocations needs a GlobalAlloc impl, which is unsafe to write"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use csikit::server::log::LogLayer;
use csikit::server::{Endpoint, Layers};
use csikit::v1::node_client::NodeClient;
use csikit::v1::volume_capability::{AccessMode, AccessType, MountVolume, access_mode};
use csikit::v1::*;
use prost::Message as _;
use tonic::{Request, Response, Status};
use tracing_subscriber::prelude::*;

/// Rounds of the variants.
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
/// Calls whose allocations are counted, per child.
const COUNTED: usize = 1_000;
/// The node-publish secret's value: it must appear in no log.
const SECRET: &str = "c2VjcmV0LXRva2VuLTEyMzQ";
/// What the skeleton's line for a call that succeeded holds.
const OK_LINE: &str = ": ok elapsed_us=";

/// Counts the heap allocations of the thread that asks, while it asks.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<Option<usize>> = const { Cell::new(None) };
}

// SAFETY: every call is passed to the system allocator unchanged; the count is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get().map(|n| n + 1)));
        // SAFETY: the caller's layout is passed on as it came.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get().map(|n| n + 1)));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

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
            access_mode: Some(AccessMode { mode: access_mode::Mode::SingleNodeWriter as i32 }),
        }),
        readonly: false,
        secrets: HashMap::from([("token".to_owned(), SECRET.to_owned())]),
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

/// Where a child's log goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Log {
    /// No subscriber at all.
    None,
    /// `LogLayer` at INFO into a file: formatted and written on its own thread.
    NonBlocking,
    /// `tracing-subscriber`'s fmt layer at INFO into the same kind of file, on the call's thread.
    Fmt,
}

/// One server a child runs, each on a socket of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    /// The skeleton as `serve` serves a unix socket, through the `:authority` rewriter.
    Skeleton,
    /// Bare tonic with the same handler body.
    Bare,
    /// The skeleton's routes on a plain listener: everything but the rewriter.
    SkeletonPlain,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Server::Skeleton => "skeleton",
            Server::Bare => "bare tonic",
            Server::SkeletonPlain => "skeleton without the :authority rewriter",
        }
    }

    fn skeleton(self) -> bool {
        self != Server::Bare
    }
}

/// One child process: a log, and the servers it calls in turn.
struct Mode {
    name: &'static str,
    log: Log,
    servers: &'static [Server],
}

const MODES: [Mode; 3] = [
    Mode {
        name: "no subscriber",
        log: Log::None,
        servers: &[Server::Skeleton, Server::Bare, Server::SkeletonPlain],
    },
    Mode {
        name: "INFO, non-blocking log to a file",
        log: Log::NonBlocking,
        servers: &[Server::Skeleton, Server::Bare],
    },
    Mode {
        name: "INFO, fmt to a file on the call's thread",
        log: Log::Fmt,
        servers: &[Server::Skeleton, Server::Bare],
    },
];

/// The comparisons printed at the end: (mode, server, baseline server, what, bound in µs).
const COMPARISONS: [(usize, usize, usize, &str, Option<f64>); 4] = [
    (0, 0, 1, "no subscriber", Some(1.0)),
    (1, 0, 1, "INFO, non-blocking log to a file", Some(2.0)),
    (2, 0, 1, "INFO, fmt on the call's thread (skeleton) against bare tonic", None),
    (
        0,
        0,
        2,
        "the :authority rewriter, for a client whose authority h2 takes (skeleton with it against without it)",
        None,
    ),
];

/// What one child measured of one server.
#[derive(Default)]
struct Measured {
    /// Sequential call latencies, nanoseconds, in the order the calls were made.
    latencies: Vec<u64>,
    /// The throughput run: calls and wall time.
    concurrent_calls: usize,
    concurrent_time: Duration,
    /// Calls straight into the service and their total time.
    direct_calls: usize,
    direct_time: Duration,
    /// Heap allocations of [`COUNTED`] calls straight into the service.
    allocations: usize,
}

/// What one child measured: each server's figures, and the skeleton's log read back.
#[derive(Default)]
struct Child {
    servers: Vec<Measured>,
    /// The log read back after the calls over the socket: `ok` lines, calls the skeleton
    /// served, lines the queue dropped.
    logged_socket: Option<[usize; 3]>,
    /// The log read back at the end: `ok` lines, calls the skeleton served, lines the queue
    /// dropped, lines dropped as the log's notices say, lines holding the secret.
    logged: Option<[usize; 5]>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let number = |k: usize| -> usize {
            args.get(at + k).and_then(|i| i.parse().ok()).expect("--child MODE ROUND")
        };
        child(&MODES[number(1)], number(2));
        return;
    }
    parent();
}

/// The load average, as `uptime` gives it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |text| text.split_whitespace().take(3).collect::<Vec<_>>().join(", "),
    )
}

fn parent() {
    let size = request(0).encode_to_vec().len();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!("NodePublishVolume over a unix socket, request {size} bytes, {cores} cores");
    println!(
        "{ROUNDS} rounds x {} children (one per log setting), each calling its servers in turn, one call each in an order drawn per turn: {WARM_UP} warm-up and {SEQUENTIAL} timed sequential calls per server, then per server {} calls with {IN_FLIGHT} in flight and {DIRECT} without transport",
        MODES.len(),
        IN_FLIGHT * PER_TASK
    );
    let load_before = load_average();
    let exe = std::env::current_exe().expect("own path");
    let mut pooled: Vec<Child> = MODES
        .iter()
        .map(|mode| Child {
            servers: mode.servers.iter().map(|_| Measured::default()).collect(),
            ..Child::default()
        })
        .collect();
    // Per round, each comparison's difference of p50s, for its spread between rounds.
    let mut round_added: Vec<Vec<f64>> = vec![Vec::new(); COMPARISONS.len()];
    for round in 0..ROUNDS {
        for k in 0..MODES.len() {
            let index = (round + k) % MODES.len();
            let measured = run_child(&exe, index, round);
            for (c, (mode, server, base, ..)) in COMPARISONS.iter().enumerate() {
                if *mode == index {
                    let p = |s: usize| percentile(&mut measured.servers[s].latencies.clone(), 50.0);
                    round_added[c].push(micros_f(p(*server)) - micros_f(p(*base)));
                }
            }
            let pool = &mut pooled[index];
            for (total, m) in pool.servers.iter_mut().zip(measured.servers) {
                total.latencies.extend(m.latencies);
                total.concurrent_calls += m.concurrent_calls;
                total.concurrent_time += m.concurrent_time;
                total.direct_calls += m.direct_calls;
                total.direct_time += m.direct_time;
                total.allocations = m.allocations;
            }
            if let Some(logged) = measured.logged {
                let sum = pool.logged.get_or_insert([0; 5]);
                for (total, n) in sum.iter_mut().zip(logged) {
                    *total += n;
                }
            }
            if let Some(logged) = measured.logged_socket {
                let sum = pool.logged_socket.get_or_insert([0; 3]);
                for (total, n) in sum.iter_mut().zip(logged) {
                    *total += n;
                }
            }
        }
        eprintln!("round {}/{ROUNDS} done (load average {})", round + 1, load_average());
    }

    println!();
    println!(
        "| log | server | p50 | p99 | sequential calls/s | {IN_FLIGHT} in flight calls/s | no transport: time per call | allocations per call |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (mode, child) in MODES.iter().zip(&pooled) {
        for (server, m) in mode.servers.iter().zip(&child.servers) {
            let mut sorted = m.latencies.clone();
            let total: u64 = sorted.iter().sum();
            let sequential = sorted.len() as f64 / (total as f64 / 1e9);
            let concurrent = m.concurrent_calls as f64 / m.concurrent_time.as_secs_f64();
            let p50 = percentile(&mut sorted, 50.0);
            let p99 = percentile(&mut sorted, 99.0);
            let direct = m.direct_time.as_nanos() as f64 / m.direct_calls as f64;
            let allocations = m.allocations as f64 / COUNTED as f64;
            println!(
                "| {} | {} | {} | {} | {sequential:.0} | {concurrent:.0} | {direct:.0} ns | {allocations:.1} |",
                mode.name,
                server.name(),
                micros(p50),
                micros(p99)
            );
        }
    }
    println!();
    println!(
        "Skeleton against its baseline, same run: the difference of the pooled p50s (per round: median, range), and the median of the differences of calls made side by side:"
    );
    for (c, (mode, server, base, what, bound)) in COMPARISONS.iter().enumerate() {
        let child = &pooled[*mode];
        let (ours, theirs) = (&child.servers[*server].latencies, &child.servers[*base].latencies);
        let p = |samples: &Vec<u64>| percentile(&mut samples.clone(), 50.0);
        let added = micros_f(p(ours)) - micros_f(p(theirs));
        let percent = (p(ours) as f64 / p(theirs) as f64 - 1.0) * 100.0;
        let mut paired: Vec<i64> = ours
            .iter()
            .zip(theirs)
            .map(|(a, b)| i64::try_from(*a).expect("fits") - i64::try_from(*b).expect("fits"))
            .collect();
        paired.sort_unstable();
        let paired_median = paired[paired.len() / 2] as f64 / 1000.0;
        let per_round = &mut round_added[c];
        per_round.sort_by(f64::total_cmp);
        let verdict = bound.map_or(String::new(), |b| {
            let within = if added <= b { "within" } else { "OVER" };
            format!(" [bound {b:.0} µs: {within}]")
        });
        println!(
            "  {what}: {added:+.2} µs ({percent:+.1}%) (per round: median {:+.2} µs, {:+.2} to {:+.2} µs; side by side: median {paired_median:+.2} µs){verdict}",
            per_round[per_round.len() / 2],
            per_round[0],
            per_round[per_round.len() - 1]
        );
    }
    println!();
    println!("The logs, over all rounds:");
    for (mode, child) in MODES.iter().zip(&pooled) {
        if let (Some([lines, calls, dropped]), Some([all, served, all_dropped, said, secret])) =
            (child.logged_socket, child.logged)
        {
            println!(
                "  '{}': over the socket {lines} ok lines for {calls} calls, {dropped} dropped; with the calls without transport {all} for {served}, {all_dropped} dropped ({said} said in the log); {secret} lines with the secret value",
                mode.name
            );
        }
    }
    println!("load average: {load_before} at the start, {} at the end", load_average());
}

fn micros(ns: u64) -> String {
    format!("{:.1} µs", micros_f(ns))
}

fn micros_f(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The `p`th percentile (nearest rank) of `samples`.
fn percentile(samples: &mut [u64], p: f64) -> u64 {
    samples.sort_unstable();
    let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

/// Runs one child and reads what it printed: per server `seq K` and the latencies, `conc K` and
/// `direct K` with the calls and the nanoseconds they took, `allocs K`; and `logged` with the
/// log's figures.
fn run_child(exe: &Path, index: usize, round: usize) -> Child {
    let out = Command::new(exe)
        .arg("--child")
        .arg(index.to_string())
        .arg(round.to_string())
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child {index} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = &MODES[index];
    let mut measured = Child {
        servers: mode.servers.iter().map(|_| Measured::default()).collect(),
        ..Child::default()
    };
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        let numbers = |words: std::str::SplitWhitespace<'_>| {
            words.map(|w| w.parse::<u64>().expect("number")).collect::<Vec<_>>()
        };
        let size = |n: u64| usize::try_from(n).expect("fits");
        let Some(what) = words.next() else { continue };
        let n = numbers(words);
        match what {
            "seq" => measured.servers[size(n[0])].latencies = n[1..].to_vec(),
            "conc" => {
                let m = &mut measured.servers[size(n[0])];
                m.concurrent_calls = size(n[1]);
                m.concurrent_time = Duration::from_nanos(n[2]);
            }
            "direct" => {
                let m = &mut measured.servers[size(n[0])];
                m.direct_calls = size(n[1]);
                m.direct_time = Duration::from_nanos(n[2]);
            }
            "allocs" => measured.servers[size(n[0])].allocations = size(n[1]),
            "logged_socket" => measured.logged_socket = Some([size(n[0]), size(n[1]), size(n[2])]),
            "logged" => {
                measured.logged =
                    Some([size(n[0]), size(n[1]), size(n[2]), size(n[3]), size(n[4])]);
            }
            _ => {}
        }
    }
    for (server, m) in mode.servers.iter().zip(&measured.servers) {
        assert_eq!(
            m.latencies.len(),
            SEQUENTIAL,
            "child '{}' printed the samples of '{}'",
            mode.name,
            server.name()
        );
    }
    let name = mode.name;
    if let Some([lines, calls, dropped]) = measured.logged_socket {
        assert_eq!((lines, dropped), (calls, 0), "{name}: every call over the socket has its line");
    }
    if let Some([lines, calls, dropped, said, secret]) = measured.logged {
        assert_eq!(secret, 0, "{name}: a log line holds the secret value");
        // A dropped event may be another line (the server's "stopped"), hence at least.
        assert!(
            lines <= calls && lines + dropped >= calls,
            "{name}: every call has its line or is counted dropped ({lines} lines, {dropped} dropped, {calls} calls)"
        );
        assert_eq!(said, dropped, "{name}: the log says how many lines it dropped");
    }
    measured
}

fn child(mode: &Mode, round: usize) {
    let dir = std::env::temp_dir().join(format!("csikit-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("child dir");
    let log_path = dir.join("plugin.log");
    // INFO, as `cargo xtask new-driver`'s scaffold filters; no colour (a file, not a terminal).
    let filter = || tracing_subscriber::EnvFilter::new("info");
    let guard = match mode.log {
        Log::None => None,
        Log::NonBlocking => {
            let file = std::fs::File::create(&log_path).expect("log file");
            let (layer, guard) = LogLayer::new(file).expect("log writer thread");
            tracing_subscriber::registry().with(filter()).with(layer).init();
            Some(guard)
        }
        Log::Fmt => {
            let file = std::fs::File::create(&log_path).expect("log file");
            tracing_subscriber::fmt()
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .with_env_filter(filter())
                .init();
            None
        }
    };

    let server_runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("server runtime");
    let mut stops = Vec::new();
    let mut serving = Vec::new();
    let mut sockets = Vec::new();
    // The servers are started and connected in an order rotated by round: the first started
    // and connected measured up to 2 µs apart from the last at p50 on this machine whatever
    // they were (where tokio's two workers run each connection), and rotating the order
    // spreads that over every server alike.
    let n = mode.servers.len();
    let order: Vec<usize> = (0..n).map(|i| (i + round) % n).collect();
    for &k in &order {
        let server = &mode.servers[k];
        let socket = dir.join(format!("csi-{k}.sock"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        stops.push(stop);
        serving.push(serve(&server_runtime, *server, &socket, async {
            let _ = stopped.await;
        }));
        sockets.push(socket);
    }

    let client_runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let in_order = client_runtime.block_on(measure(&sockets, round));
    // Back to the servers' own order.
    let mut measured: Vec<_> = (0..n).map(|_| None).collect();
    for (at, figures) in in_order.into_iter().enumerate() {
        measured[order[at]] = Some(figures);
    }
    let measured: Vec<_> =
        measured.into_iter().map(|m| m.expect("every server measured")).collect();
    // Every skeleton of the child logs each call it serves: over the socket, then without transport.
    let skeletons = mode.servers.iter().filter(|s| s.skeleton()).count();
    let over_socket = skeletons * (WARM_UP + SEQUENTIAL + IN_FLIGHT * PER_TASK);
    if mode.log != Log::None {
        // What the writer has written of the calls so far (fmt wrote each line as it came).
        let dropped = guard.as_ref().map_or(0, |guard| {
            assert!(guard.flush(Duration::from_secs(60)), "the log writer wrote what was logged");
            guard.dropped()
        });
        let lines = read_log(&log_path).0;
        println!("logged_socket {lines} {over_socket} {dropped}");
    }
    for (k, server) in mode.servers.iter().enumerate() {
        let direct = client_runtime.block_on(direct_calls(server.skeleton(), DIRECT));
        let allocations = client_runtime.block_on(count_allocations(server.skeleton()));
        println!("direct {k} {DIRECT} {}", direct.as_nanos());
        println!("allocs {k} {allocations}");
    }
    // Closes the client's connections, which the servers' drain waits for.
    drop(client_runtime);
    drop(stops);
    for served in serving {
        server_runtime.block_on(served).expect("server stops");
    }

    for (k, (latencies, calls, took)) in measured.into_iter().enumerate() {
        let mut out = format!("seq {k}");
        for ns in latencies {
            out.push(' ');
            out.push_str(&ns.to_string());
        }
        println!("{out}");
        println!("conc {k} {calls} {}", took.as_nanos());
    }
    if mode.log != Log::None {
        // Closing the log writes out what its queue holds.
        let dropped = guard.as_ref().map_or(0, csikit::server::log::LogGuard::dropped);
        drop(guard);
        let (lines, said, secret) = read_log(&log_path);
        let served = over_socket + skeletons * (DIRECT + COUNTED);
        println!("logged {lines} {served} {dropped} {said} {secret}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts `server` on `socket` until `shutdown`.
fn serve(
    runtime: &tokio::runtime::Runtime,
    server: Server,
    socket: &Path,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let layers = Layers { validate_responses: true, ..Layers::default() };
    let skeleton = move || async move {
        csikit::server::Builder::new("bench.csikit.dev", "1")
            .layers(layers)
            .node(SkeletonNode)
            .build()
            .await
            .expect("builds")
    };
    match server {
        Server::Skeleton => {
            let endpoint = Endpoint::Unix(socket.to_owned());
            runtime.spawn(async move {
                skeleton().await.serve(&endpoint, shutdown).await.expect("serves");
            })
        }
        Server::SkeletonPlain => {
            let listener = bind::<2>(runtime, socket);
            runtime.spawn(async move {
                tonic::transport::Server::builder()
                    .add_routes(skeleton().await.into_routes())
                    .serve_with_incoming_shutdown(listener, shutdown)
                    .await
                    .expect("serves");
            })
        }
        Server::Bare => {
            let listener = bind::<1>(runtime, socket);
            runtime.spawn(async move {
                tonic::transport::Server::builder()
                    .add_service(csikit::v1::node_server::NodeServer::new(BareNode))
                    .serve_with_incoming_shutdown(listener, shutdown)
                    .await
                    .expect("serves");
            })
        }
    }
}

/// The log read back: the calls' `ok` lines, the lines dropped as the log's notices say (the
/// writer's "N log lines dropped"), the lines holding the secret value.
fn read_log(path: &Path) -> (usize, usize, usize) {
    let text = std::fs::read_to_string(path).expect("read the log");
    let ok = text.lines().filter(|l| l.contains(OK_LINE)).count();
    let said = text
        .lines()
        .filter_map(|l| {
            l.split_once("csikit_runtime::server::log: ")?.1.split_once(" log lines dropped")
        })
        .map(|(n, _)| n.parse::<usize>().expect("a count"))
        .sum();
    let secret = text.lines().filter(|l| l.contains(SECRET)).count();
    (ok, said, secret)
}

/// A listener bound before the client is started, so it connects at once. Each accepted
/// stream comes as a type of its own (`K`), so each server gets its own copy of the transport's
/// code (hyper's and h2's, generic over the stream), as `serve` does with the rewriter's type and
/// as every server has in a process of its own: two servers over one stream type would share
/// one copy, warm in the caches from both, and the third pay for its own.
fn bind<const K: usize>(
    runtime: &tokio::runtime::Runtime,
    socket: &Path,
) -> impl tokio_stream::Stream<Item = std::io::Result<Own<K>>> + use<K> {
    let _entered = runtime.enter();
    let listener = tokio::net::UnixListener::bind(socket).expect("binds");
    tokio_stream::StreamExt::map(tokio_stream::wrappers::UnixListenerStream::new(listener), |s| {
        s.map(Own)
    })
}

/// An accepted stream as a type of its own: every call passed on as it is.
struct Own<const K: usize>(tokio::net::UnixStream);

impl<const K: usize> tokio::io::AsyncRead for Own<K> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<const K: usize> tokio::io::AsyncWrite for Own<K> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

impl<const K: usize> tonic::transport::server::Connected for Own<K> {
    type ConnectInfo = <tokio::net::UnixStream as tonic::transport::server::Connected>::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.0.connect_info()
    }
}

/// The adapter the skeleton's builder makes, for calls straight into it.
fn adapter() -> csikit::v1::server::NodeService<SkeletonNode> {
    let layers = Layers { validate_responses: true, ..Layers::default() };
    csikit::v1::server::NodeService::new(
        std::sync::Arc::new(SkeletonNode),
        std::sync::Arc::new(csikit::server::Pipeline::new(layers)),
        std::sync::Arc::default(),
    )
}

/// Calls straight into the tonic service (no transport): what the layers cost by themselves.
async fn direct_calls(skeleton: bool, calls: usize) -> Duration {
    use csikit::v1::node_server::Node as _;
    let adapter = adapter();
    let one = request(0);
    let mut total = Duration::ZERO;
    for _ in 0..calls {
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

/// Heap allocations of [`COUNTED`] calls straight into the service, the request's own copy
/// left out.
async fn count_allocations(skeleton: bool) -> usize {
    use csikit::v1::node_server::Node as _;
    let adapter = adapter();
    let one = request(0);
    let mut total = 0;
    for _ in 0..COUNTED {
        let r = Request::new(one.clone());
        ALLOCATIONS.with(|n| n.set(Some(0)));
        let response = if skeleton {
            adapter.node_publish_volume(r).await
        } else {
            BareNode.node_publish_volume(r).await
        };
        total += ALLOCATIONS.with(|n| n.take()).unwrap_or(0);
        black_box(response.expect("call"));
    }
    total
}

/// Per server: the sequential latencies, and the calls and time of the throughput run. The
/// sequential calls go to the servers in turn, one call each, each turn in a random order,
/// so what the machine does at a moment lands on every server alike; the throughput runs go one
/// server after the other, in an order rotating with the round.
async fn measure(sockets: &[PathBuf], round: usize) -> Vec<(Vec<u64>, usize, Duration)> {
    let mut clients = Vec::new();
    for socket in sockets {
        clients.push(NodeClient::new(channel(socket.clone()).await));
    }
    let n = clients.len();
    let one = request(0);
    // Each turn calls the servers in an order of its own, drawn at random (seeded by the round):
    // a call's latency depends on which server was called just before it (whether the worker
    // that served that call is still awake), and a rotated order makes some servers follow
    // others more often than not.
    let mut rng = fastrand::Rng::with_seed(round as u64);
    let mut turn: Vec<usize> = (0..n).collect();
    for _ in 0..WARM_UP {
        rng.shuffle(&mut turn);
        for &server in &turn {
            clients[server].node_publish_volume(one.clone()).await.expect("call");
        }
    }
    let mut latencies: Vec<Vec<u64>> = (0..n).map(|_| Vec::with_capacity(SEQUENTIAL)).collect();
    for _ in 0..SEQUENTIAL {
        rng.shuffle(&mut turn);
        for &server in &turn {
            let r = one.clone();
            let started = Instant::now();
            clients[server].node_publish_volume(r).await.expect("call");
            latencies[server].push(u64::try_from(started.elapsed().as_nanos()).expect("fits"));
        }
    }
    let mut throughput = vec![(0, Duration::ZERO); n];
    for k in 0..n {
        let server = (round + k) % n;
        // Distinct volumes: calls on one volume overlapping would be ABORTED by the skeleton.
        let started = Instant::now();
        let tasks: Vec<_> = (0..IN_FLIGHT)
            .map(|task| {
                let mut client = clients[server].clone();
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
        throughput[server] = (IN_FLIGHT * PER_TASK, started.elapsed());
    }
    latencies.into_iter().zip(throughput).map(|(l, (calls, took))| (l, calls, took)).collect()
}

/// A channel over `path`, once the server listens there: the skeleton's `serve` binds the
/// socket itself (over a stale one), so the client waits for the socket to answer.
async fn channel(path: PathBuf) -> tonic::transport::Channel {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::UnixStream::connect(&path).await.is_err() {
        assert!(Instant::now() < deadline, "the server never listened on '{}'", path.display());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    csikit::channel::connect_unix(&path).await.expect("connects")
}
