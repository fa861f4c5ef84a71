//! What `csi-view proxy` adds to a call: CreateVolume (with a secret, so redaction runs) from one
//! tonic client to one csikit plugin over a unix socket, straight and through the proxy, whose
//! output goes to a file as a user would send it. Two floors run beside it: a byte splice
//! (`copy_bidirectional` between the two sockets: the least any proxy can add, and what the
//! proxy's tapped connections are) and a bare HTTP/2 forwarder (hyper server to hyper client,
//! streaming, nothing decoded or printed: the least a proxy that terminates HTTP/2 to see calls
//! can add). Rounds rotate the order, and are short, so machine noise hits all alike; the p50 of
//! each path is taken over every round's samples, in one run. The CPU time (user + system) each
//! of the proxy's threads and each floor's thread spent is read from /proc at the end of the
//! rounds, and shown per call carried.
//!
//! The proxy runs in this process as `csi-view proxy` runs it (`csi_view_proxy::run` on a
//! current-thread runtime of its own, the logger on its thread), printing to a file. It is
//! started once the plugin answers, and every client connects once the socket it dials accepts
//! connections: each wait is bounded and names what did not come.
//!
//! Run: `cargo bench -p csi-view-proxy --bench proxy_latency` (`-- --quick`: a few short rounds,
//! the same lines printed, to see that it runs).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use csikit::v1::controller_client::ControllerClient;

mod create_volume;
use create_volume::{Plugin, ready, request};

/// Rounds, warm-up calls and measured calls per path and round.
struct Size {
    rounds: usize,
    warm_up: usize,
    calls: usize,
}

const FULL: Size = Size { rounds: 40, warm_up: 100, calls: 500 };
const QUICK: Size = Size { rounds: 4, warm_up: 20, calls: 100 };

/// A channel to `path`, once `what` there accepts connections.
async fn channel(what: &str, path: &Path) -> tonic::transport::Channel {
    ready(what, path).await;
    csikit::channel::connect_unix(path)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {what} at {}: {e}", path.display()))
}

async fn measure(client: &mut ControllerClient<tonic::transport::Channel>, n: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        client.create_volume(request(i)).await.expect("answered");
        out.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
    }
    out
}

/// A floor: on its own thread and runtime (as a separate process would be), each connection to
/// `listen_at` handed to `forward` with its own connection to `upstream`. The socket is bound
/// and listening before the thread starts, so it is ready when this returns.
fn floor<F, Fut>(thread: &str, listen_at: &Path, upstream: PathBuf, forward: F)
where
    F: Fn(tokio::net::UnixStream, tokio::net::UnixStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = std::os::unix::net::UnixListener::bind(listen_at)
        .unwrap_or_else(|e| panic!("cannot listen on {}: {e}", listen_at.display()));
    listener.set_nonblocking(true).expect("a non-blocking socket");
    spawn_named(thread, move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        rt.block_on(async move {
            let listener = tokio::net::UnixListener::from_std(listener).expect("a tokio socket");
            while let Ok((down, _)) = listener.accept().await {
                if let Ok(up) = tokio::net::UnixStream::connect(&upstream).await {
                    tokio::spawn(forward(down, up));
                }
            }
        });
    });
}

/// A byte splice between `listen_at` and `upstream`.
fn splice(listen_at: &Path, upstream: PathBuf) {
    floor(SPLICE_THREAD, listen_at, upstream, |mut down, mut up| async move {
        let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
    });
}

/// A bare HTTP/2 forwarder: each request handed on as it comes, the response streamed back.
fn h2_forwarder(listen_at: &Path, upstream: PathBuf) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    floor(H2_THREAD, listen_at, upstream, |down, up| async move {
        let handshake =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(up));
        let Ok((sender, conn)) = handshake.await else { return };
        tokio::spawn(conn);
        let service =
            hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let mut sender = sender.clone();
                async move { sender.send_request(req).await }
            });
        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(down), service)
            .await;
    });
}

/// The floors' threads, named so their CPU time can be read beside the proxy's.
const SPLICE_THREAD: &str = "splice-floor";
const H2_THREAD: &str = "h2-floor";
/// The thread `csi-view proxy`'s runtime runs on here (the binary's main thread).
const PROXY_THREAD: &str = "csi-view-proxy";
/// The proxy's logger thread, as `csi_view_proxy::run` names it.
const LOGGER_THREAD: &str = "csi-view-logger";

fn spawn_named(name: &str, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().name(name.into()).spawn(f).expect("a thread");
}

fn p50(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e3
}

fn main() {
    // `cargo bench` passes `--bench`; `-- --quick` asks for the short run.
    let size = if std::env::args().any(|a| a == "--quick") { QUICK } else { FULL };
    let dir: PathBuf = std::env::temp_dir().join(format!("csiview-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (plugin_sock, proxy_sock, output) =
        (dir.join("plugin.sock"), dir.join("proxy.sock"), dir.join("proxy.out"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let (stop_plugin, plugin_stopped) = tokio::sync::oneshot::channel::<()>();
    let endpoint = csikit::server::Endpoint::Unix(plugin_sock.clone());
    let plugin = rt.spawn(async move {
        let server =
            csikit::server::Builder::new("bench.csikit.dev", "1").controller(Plugin).build().await;
        let server = server.expect("builds");
        server
            .serve(&endpoint, async {
                let _ = plugin_stopped.await;
            })
            .await
            .expect("serves");
    });
    // The proxy as `csi-view proxy` runs it: its own current-thread runtime, output to a file.
    // It is started once the plugin answers: a connection it accepted before would be answered
    // (terminated HTTP/2, see the proxy's `answer`), not tapped, and tapping is what is measured.
    rt.block_on(ready("the plugin", &plugin_sock));
    let proxy = Proxy::start(&proxy_sock, &plugin_sock, &output);

    let (splice_sock, h2_sock) = (dir.join("splice.sock"), dir.join("h2.sock"));
    splice(&splice_sock, plugin_sock.clone());
    h2_forwarder(&h2_sock, plugin_sock.clone());

    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "CreateVolume (with a secret) over unix sockets, {cores} cores; proxy output to a file"
    );
    println!(
        "{} rounds, each: {} warm-up + {} sequential calls on each path, order rotating",
        size.rounds, size.warm_up, size.calls
    );
    const PATHS: [&str; 4] =
        ["direct", "byte splice (floor)", "bare HTTP/2 forwarder (floor)", "csi-view proxy"];
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); PATHS.len()];
    let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); PATHS.len()];
    rt.block_on(async {
        let mut clients = Vec::new();
        for (what, sock) in [
            ("the plugin", &plugin_sock),
            ("the byte splice", &splice_sock),
            ("the HTTP/2 forwarder", &h2_sock),
            ("csi-view proxy", &proxy_sock),
        ] {
            clients.push(ControllerClient::new(channel(what, sock).await));
        }
        for round in 0..size.rounds {
            let mut this_round = vec![0.0; PATHS.len()];
            for k in 0..PATHS.len() {
                let which = (round + k) % PATHS.len();
                let c = &mut clients[which];
                measure(c, size.warm_up).await;
                let mut v = measure(c, size.calls).await;
                this_round[which] = p50(&mut v);
                samples[which].extend(v);
            }
            for (which, p) in this_round.iter().enumerate() {
                per_round[which].push(p - this_round[0]);
            }
        }
    });
    // CPU time (user + system) of the proxy's threads and of the floors', read once the logger
    // has written every call the proxy carried (it takes the queue every 5 ms), before the proxy
    // stops: all of the logger's work on them is counted, and none of the stopping.
    let carried = size.rounds * (size.warm_up + size.calls);
    let printed_calls = || {
        std::fs::read_to_string(&output)
            .map_or(0, |t| t.lines().filter(|l| l.starts_with('#')).count())
    };
    let waited = Instant::now();
    while printed_calls() < carried && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    if printed_calls() < carried {
        println!(
            "(the logger had not written every call 5 s after the rounds: CPU time below is short)"
        );
    }
    let cpu = [SPLICE_THREAD, H2_THREAD, PROXY_THREAD, LOGGER_THREAD].map(threads_cpu);
    proxy.stop();
    let calls = printed_calls();
    let _ = stop_plugin.send(());
    rt.block_on(plugin).expect("plugin stops");
    let printed = std::fs::metadata(&output).map_or(0, |m| m.len());
    let direct = p50(&mut samples[0]);
    println!("| path | p50 | added at p50 | per-round added: median (range) |");
    println!("|---|---:|---:|---:|");
    for (which, name) in PATHS.iter().enumerate() {
        let p = p50(&mut samples[which]);
        let r = &mut per_round[which];
        r.sort_by(f64::total_cmp);
        println!(
            "| {name} | {p:.1} µs | {:+.1} µs | {:+.1} ({:+.1} to {:+.1}) µs |",
            p - direct,
            r[r.len() / 2],
            r[0],
            r[r.len() - 1]
        );
    }
    println!("the proxy printed {calls} calls, {:.1} MiB", printed as f64 / (1 << 20) as f64);
    println!("proxy − splice at p50: {:+.1} µs", p50(&mut samples[3]) - p50(&mut samples[1]));
    // Every path carried the same calls.
    let per_call =
        |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6 / carried as f64);
    let [splice_cpu, h2_cpu, data_path, logger] = cpu.map(per_call);
    println!("CPU time per call carried (user + system):");
    println!("| path | CPU per call |");
    println!("|---|---:|");
    println!("| byte splice (floor) | {splice_cpu:.1} µs |");
    println!("| bare HTTP/2 forwarder (floor) | {h2_cpu:.1} µs |");
    println!(
        "| csi-view proxy, logger included | {:.1} µs (data path {data_path:.1}, logger {logger:.1}) |",
        data_path + logger
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The proxy on its own thread and runtime, until `stop`.
struct Proxy {
    stop: tokio::sync::oneshot::Sender<()>,
    thread: std::thread::JoinHandle<anyhow::Result<csi_view_proxy::Summary>>,
}

impl Proxy {
    fn start(listen: &Path, upstream: &Path, output: &Path) -> Self {
        let options = csi_view_proxy::Options {
            listen: listen.to_owned(),
            upstream: upstream.to_owned(),
            record: None,
            keep_secrets: false,
            format: csi_view_proxy::Format::Text,
        };
        let out: Box<dyn std::io::Write + Send> =
            Box::new(std::io::BufWriter::new(std::fs::File::create(output).expect("output")));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new().name(PROXY_THREAD.into()).spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let schema = std::sync::Arc::new(csi_view_core::schema::Schema::builtin()?);
            rt.block_on(csi_view_proxy::run(schema, options, out, async {
                let _ = stopped.await;
            }))
        });
        Self { stop, thread: thread.expect("a thread") }
    }

    fn stop(self) {
        let _ = self.stop.send(());
        self.thread.join().expect("proxy thread").expect("the proxy ran and stopped cleanly");
    }
}

/// User + system time of this process's threads named `name`, from /proc (Linux; `None`
/// elsewhere).
fn threads_cpu(name: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        // The kernel keeps 15 bytes of a thread's name.
        if comm.trim_end() == &name[..name.len().min(15)] {
            total += thread_cpu(task.file_name().to_str()?.parse().ok()?)?;
        }
    }
    Some(total)
}

/// User + system time of one of this process's threads, from /proc.
fn thread_cpu(tid: u64) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}
