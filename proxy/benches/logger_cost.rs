//! What the proxy's logger spends on a call, without sockets or scheduling: the bytes of real
//! calls (a tonic client's CreateVolume with a secret, a csikit plugin's answers, recorded on a
//! byte splice between them) are followed by the tap and printed by the logger as the proxy
//! does, to a file, many times over; the CPU time per call is the logger's whole cost (HTTP/2,
//! HPACK, decoding, checks, secrets, printing, writing), without the data path's.
//!
//! Run: `cargo bench -p csi-view-proxy --bench logger_cost` (`-- N` for N calls, 2,000 by
//! default; `-- N 1` to run them once, as under callgrind; `json` to print JSON; a path to keep
//! what was printed there).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use csikit::v1::controller_client::ControllerClient;

mod create_volume;
use create_volume::{Plugin, ready, request};

/// Chunks as they went, each with its direction (false: from the client).
type Recorded = Arc<Mutex<Vec<(bool, Vec<u8>)>>>;

/// Copies `from` to `to`, recording each chunk.
async fn copy(
    mut from: tokio::net::unix::OwnedReadHalf,
    mut to: tokio::net::unix::OwnedWriteHalf,
    plugin: bool,
    recorded: Recorded,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0_u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        recorded.lock().expect("not poisoned").push((plugin, buf[..n].to_vec()));
    }
    let _ = to.shutdown().await;
}

/// `calls` CreateVolume calls on one connection through a recording splice: the chunks.
fn record(dir: &Path, calls: usize) -> Vec<(bool, Vec<u8>)> {
    let (plugin_sock, splice_sock) = (dir.join("plugin.sock"), dir.join("splice.sock"));
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let recorded = Recorded::default();
    rt.block_on(async {
        let endpoint = csikit::server::Endpoint::Unix(plugin_sock.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = csikit::server::Builder::new("bench.csikit.dev", "1")
            .controller(Plugin)
            .build()
            .await
            .expect("builds");
        let plugin = tokio::spawn(async move {
            server
                .serve(&endpoint, async {
                    let _ = stopped.await;
                })
                .await
                .expect("serves");
        });
        let listener = tokio::net::UnixListener::bind(&splice_sock).expect("binds");
        let splice = {
            let recorded = recorded.clone();
            let plugin_sock = plugin_sock.clone();
            tokio::spawn(async move {
                let (down, _) = listener.accept().await.expect("accepts");
                ready("the plugin", &plugin_sock).await;
                let up = tokio::net::UnixStream::connect(&plugin_sock).await.expect("connects");
                let ((dr, dw), (ur, uw)) = (down.into_split(), up.into_split());
                tokio::join!(copy(dr, uw, false, recorded.clone()), copy(ur, dw, true, recorded));
            })
        };
        let channel = csikit::channel::connect_unix(&splice_sock).await.expect("connects");
        let mut client = ControllerClient::new(channel);
        for i in 0..calls {
            client.create_volume(request(i)).await.expect("answered");
        }
        drop(client);
        let _ = splice.await;
        let _ = stop.send(());
        let _ = plugin.await;
    });
    std::mem::take(&mut *recorded.lock().expect("not poisoned"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let numbers: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let calls = numbers.first().copied().unwrap_or(2_000);
    let repeats = numbers.get(1).copied().unwrap_or(10);
    let format = if args.iter().any(|a| a == "json") {
        csi_view_proxy::Format::Json
    } else {
        csi_view_proxy::Format::Text
    };
    let keep = args.iter().find(|a| a.contains('/')).map(PathBuf::from);
    let dir: PathBuf = std::env::temp_dir().join(format!("csiview-logger-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let chunks = record(&dir, calls);
    // The replay format: pieces of at most 127 bytes behind a byte whose high bit is the direction.
    let mut data = Vec::new();
    let preface = csikit_runtime::h2frame::PREFACE.len();
    let mut skipped = 0;
    for (plugin, bytes) in &chunks {
        // `replay` puts the client's preface in front itself.
        let mut bytes = bytes.as_slice();
        if !plugin && skipped < preface {
            let n = (preface - skipped).min(bytes.len());
            skipped += n;
            bytes = &bytes[n..];
        }
        for piece in bytes.chunks(127) {
            data.push(u8::from(*plugin) << 7 | u8::try_from(piece.len()).expect("short"));
            data.extend_from_slice(piece);
        }
    }
    let schema = Arc::new(csi_view_core::schema::Schema::builtin().expect("the built-in schema"));
    let output = dir.join("out");
    let mut best = Duration::MAX;
    for _ in 0..repeats {
        let out = std::io::BufWriter::new(std::fs::File::create(&output).expect("output"));
        let t = Instant::now();
        let printed =
            csi_view_proxy::replay(schema.clone(), &data, format, Box::new(out)).expect("replays");
        best = best.min(t.elapsed());
        assert_eq!(printed, calls as u64);
    }
    let bytes = std::fs::metadata(&output).map_or(0, |m| m.len());
    if let Some(keep) = keep {
        std::fs::copy(&output, keep).expect("kept");
    }
    println!(
        "logger: {calls} calls ({} chunks, {bytes} bytes printed): {:.2} µs per call (best of {repeats})",
        chunks.len(),
        best.as_secs_f64() * 1e6 / calls as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
