//! What `csi-view proxy` adds to a call: CreateVolume (with a secret, so redaction runs) from one
//! tonic client to one csikit plugin over a unix socket, straight and through the proxy, whose
//! output goes to a file as a user would send it. Rounds alternate the two so machine noise hits
//! both alike; the p50 of each is taken over every round's samples, in one run.
//!
//! Run: `cargo bench -p csi-view --bench proxy_latency`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use csikit::v1::controller_client::ControllerClient;
use csikit::v1::server::Controller;
use csikit::v1::*;
use tonic::{Request, Response, Status};

const ROUNDS: usize = 10;
const WARM_UP: usize = 300;
const CALLS: usize = 2_000;

struct Plugin;

#[csikit::csi_service]
impl Controller for Plugin {
    async fn create_volume(
        &self,
        request: Request<CreateVolumeRequest>,
    ) -> Result<Response<CreateVolumeResponse>, Status> {
        let r = request.into_inner();
        Ok(Response::new(CreateVolumeResponse {
            volume: Some(Volume {
                volume_id: r.name,
                capacity_bytes: 1 << 30,
                ..Volume::default()
            }),
        }))
    }
}

fn request(i: usize) -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: format!("pvc-0b2a6c4e-3d2f-4f0e-9a7b-{i:012}"),
        volume_capabilities: vec![VolumeCapability {
            access_type: Some(volume_capability::AccessType::Mount(
                volume_capability::MountVolume { fs_type: "ext4".into(), ..Default::default() },
            )),
            access_mode: Some(volume_capability::AccessMode {
                mode: volume_capability::access_mode::Mode::SingleNodeWriter as i32,
            }),
        }],
        secrets: [("password".to_owned(), "hunter2".to_owned())].into(),
        parameters: [("csi.storage.k8s.io/pvc/name".to_owned(), "data-web-0".to_owned())].into(),
        ..CreateVolumeRequest::default()
    }
}

async fn channel(path: &Path) -> tonic::transport::Channel {
    for _ in 0..500 {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let path = path.to_owned();
    tonic::transport::Endpoint::from_static("http://plugin")
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let path = path.clone();
            async move {
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                    tokio::net::UnixStream::connect(path).await?,
                ))
            }
        }))
        .await
        .expect("connects")
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

fn p50(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e3
}

fn main() {
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
    // The proxy as users run it: the csi-view binary, its output to a file.
    let mut proxy = std::process::Command::new(env!("CARGO_BIN_EXE_csi-view"))
        .arg("proxy")
        .arg("--listen")
        .arg(format!("unix://{}", proxy_sock.display()))
        .arg("--upstream")
        .arg(format!("unix://{}", plugin_sock.display()))
        .stdout(std::fs::File::create(&output).expect("output file"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts csi-view proxy");

    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "CreateVolume (with a secret) over unix sockets, {cores} cores; proxy output to a file"
    );
    println!(
        "{ROUNDS} rounds, each: {WARM_UP} warm-up + {CALLS} sequential calls direct and through the proxy, order alternating"
    );
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    let mut per_round = Vec::new();
    rt.block_on(async {
        let mut d = ControllerClient::new(channel(&plugin_sock).await);
        let mut p = ControllerClient::new(channel(&proxy_sock).await);
        for round in 0..ROUNDS {
            let run = |c: &mut ControllerClient<_>| {
                let mut c = c.clone();
                async move {
                    measure(&mut c, WARM_UP).await;
                    measure(&mut c, CALLS).await
                }
            };
            let (mut a, mut b) = if round % 2 == 0 {
                let a = run(&mut d).await;
                (a, run(&mut p).await)
            } else {
                let b = run(&mut p).await;
                (run(&mut d).await, b)
            };
            per_round.push(p50(&mut b) - p50(&mut a));
            direct.extend(a);
            proxied.extend(b);
        }
    });
    // The proxy's own CPU time (user + system), per call it carried.
    let cpu = proxy_cpu(proxy.id());
    let killed =
        std::process::Command::new("kill").arg("-TERM").arg(proxy.id().to_string()).status();
    assert!(killed.is_ok_and(|s| s.success()), "SIGTERM to the proxy");
    assert!(proxy.wait().expect("proxy exits").success(), "the proxy exits 0");
    let calls = std::fs::read_to_string(&output)
        .map_or(0, |t| t.lines().filter(|l| l.starts_with('#')).count());
    let _ = stop_plugin.send(());
    rt.block_on(plugin).expect("plugin stops");
    let printed = std::fs::metadata(&output).map_or(0, |m| m.len());
    let (d, p) = (p50(&mut direct), p50(&mut proxied));
    per_round.sort_by(f64::total_cmp);
    println!("| path | p50 |");
    println!("|---|---:|");
    println!("| direct | {d:.1} µs |");
    println!("| through csi-view proxy | {p:.1} µs |");
    println!(
        "added at p50: {:.1} µs (per round: median {:.1}, range {:.1} to {:.1}); the proxy printed {} calls, {:.1} MiB",
        p - d,
        per_round[per_round.len() / 2],
        per_round[0],
        per_round[per_round.len() - 1],
        calls,
        printed as f64 / (1 << 20) as f64
    );
    if let Some(cpu) = cpu {
        let carried = (ROUNDS * (WARM_UP + CALLS)) as f64;
        println!(
            "proxy CPU time per call (user + system, logger included): {:.1} µs",
            cpu.as_secs_f64() * 1e6 / carried
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// User + system time of a process, from /proc (Linux; `None` elsewhere).
fn proxy_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis(ticks * 10))
}
