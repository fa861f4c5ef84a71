//! The proxy's main loop ([`run`]): the listening socket, a tapped or answered task per
//! connection, the logger thread, and the stop; and [`replay`], which feeds recorded bytes to the
//! same tap and logger.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use csi_view_core::schema::Schema;
use csikit_runtime::endpoint::bind_unix;
use csikit_runtime::h2frame::PREFACE;
use tokio::net::UnixStream;

use crate::answer::{Shared, answer};
use crate::config::{Format, Options, Summary};
use crate::endpoint::shown;
use crate::logger::{Logger, open_record};
use crate::queue::{Batch, Conn, Dir, Event, LOGGER_PERIOD, Queue};
use crate::splice::splice;
use crate::stop::DRAIN;
use crate::tap::Tap;
use crate::tracker::Tracker;

/// Runs the proxy until `shutdown` resolves; prints to `out`.
///
/// # Errors
///
/// When the listening socket cannot be made, or the recording cannot be written.
pub async fn run(
    schema: Arc<Schema>,
    options: Options,
    out: Box<dyn Write + Send>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Summary> {
    // The plugin need not be there yet: in a pod, containers start in any order, so the proxy
    // listens at once and reaches the plugin per connection (a connection accepted before it is
    // up is answered, see `answer`). A file at the upstream path that is not a socket is another
    // matter: no plugin can ever listen there (a plugin does not replace such a file).
    let upstream_now = {
        use std::os::unix::fs::FileTypeExt;
        match std::fs::metadata(&options.upstream) {
            Ok(m) if m.file_type().is_socket() => true,
            Ok(_) => bail!("upstream '{}' is not a socket", options.upstream.display()),
            Err(_) => false,
        }
    };
    if options.upstream == options.listen {
        bail!("--listen and --upstream are the same socket");
    }
    // The recording first: a failure there leaves no socket behind.
    let record = match &options.record {
        Some(p) => Some(open_record(p, &options)?),
        None => None,
    };
    // A stale socket file is replaced; a live socket or another file is left alone.
    let listener = bind_unix(&options.listen).await.context("cannot listen")?;
    eprintln!(
        "# csi-view proxy: listening on {}, forwarding to {}{}",
        shown(&options.listen),
        shown(&options.upstream),
        if upstream_now {
            ""
        } else {
            " (no plugin there yet: calls are answered UNAVAILABLE until one listens)"
        }
    );
    let queue = Arc::new(Queue::default());
    let shared = Arc::new(Shared::new(options.upstream.clone(), queue.clone()));
    let logger = {
        let mut printer = Logger::new(schema.clone(), out, record, options.clone());
        let queue = queue.clone();
        let mut tap = Tap::new(Tracker::new(schema));
        // A thread of its own: following, decoding and printing never hold up the calls. It takes
        // what the pumps and the answered calls left once every few milliseconds, however busy
        // the calls are, rather than being woken for each: a wake-up (a futex and a context
        // switch) per call cost more than the forwarding, and a logger that ran whenever there
        // was something to take would share the calls' cores as often as they run.
        std::thread::Builder::new().name("csi-view-logger".into()).spawn(move || {
            let (mut batch, mut ended) = (Batch::default(), Vec::new());
            loop {
                let started = Instant::now();
                // Closed is read before the events: once the queue is closed nothing is added.
                let closed = queue.is_closed();
                queue.take(&mut batch);
                let n = batch.len();
                tap.feed(&mut batch, &mut ended);
                queue.done(n);
                for notice in tap.notices.drain(..) {
                    eprintln!("# csi-view proxy: {notice}");
                }
                for call in ended.drain(..) {
                    printer.call(call)?;
                }
                if n == 0 && closed {
                    break;
                }
                // What the batch printed goes out in one write.
                printer.flush()?;
                std::thread::sleep(LOGGER_PERIOD.saturating_sub(started.elapsed()));
            }
            Ok::<Summary, anyhow::Error>(printer.finish()?)
        })?
    };
    let mut connections = tokio::task::JoinSet::new();
    let (stopping, stop) = tokio::sync::watch::channel(false);
    let mut conn_ids = 0_u64;
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                conn_ids += 1;
                let stop = stop.clone();
                match UnixStream::connect(&options.upstream).await {
                    Ok(up) => {
                        let conn = Arc::new(Conn { id: conn_ids, ..Conn::default() });
                        connections.spawn(splice(stream, up, conn, queue.clone(), stop));
                    }
                    Err(_) => {
                        connections.spawn(answer(stream, shared.clone(), stop));
                    }
                }
            }
        }
    }
    drop(listener);
    let removed = std::fs::remove_file(&options.listen);
    // Calls in flight get a moment to finish; then the logger drains what completed.
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(DRAIN + Duration::from_secs(1), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    drop(shared);
    queue.close();
    let summary = tokio::task::spawn_blocking(move || logger.join())
        .await
        .map_err(|e| anyhow!("the logger stopped: {e}"))?
        .map_err(|_| anyhow!("the logger panicked"))??;
    removed.with_context(|| format!("cannot remove '{}'", options.listen.display()))?;
    Ok(summary)
}

/// Follows `data` as one tapped connection's traffic and prints each call it puts together to
/// `out`, as the proxy would; returns how many calls were printed. For the fuzzer and tests: the
/// data is chunks, each behind a byte whose high bit picks the direction (0 from the client) and
/// whose other bits are its length; the client's connection preface is put in front of its
/// bytes; the connection closes at the end.
///
/// # Errors
///
/// When `out` cannot be written.
#[doc(hidden)]
pub fn replay(
    schema: Arc<Schema>,
    data: &[u8],
    format: Format,
    out: Box<dyn Write + Send>,
) -> Result<u64> {
    let conn = Arc::new(Conn { id: 1, ..Conn::default() });
    let at = Instant::now();
    let mut events = Batch::default();
    events.push(Event::Open(conn));
    events.push_bytes(1, Dir::Client, at, PREFACE);
    let mut rest = data;
    while let Some((&head, tail)) = rest.split_first() {
        let n = usize::from(head & 0x7f).min(tail.len());
        let dir = if head & 0x80 == 0 { Dir::Client } else { Dir::Plugin };
        events.push_bytes(1, dir, at, &tail[..n]);
        rest = &tail[n..];
    }
    let why = "the client closed the connection".into();
    events.push(Event::Closed { conn: 1, at, why, by_client: true });
    let mut tap = Tap::new(Tracker::new(schema.clone()));
    let mut calls = Vec::new();
    tap.feed(&mut events, &mut calls);
    let options = Options {
        listen: PathBuf::new(),
        upstream: PathBuf::new(),
        record: None,
        keep_secrets: false,
        format,
    };
    let mut logger = Logger::new(schema, out, None, options);
    for call in calls {
        logger.call(call)?;
    }
    Ok(logger.finish()?.calls)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::frames::tests::frame;
    use csikit_runtime::h2frame::{DATA, END_HEADERS, END_STREAM, HEADERS};

    /// Collects what the logger prints.
    #[derive(Clone, Default)]
    struct Printed(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Printed {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_replayed_call_is_printed_with_its_secret_hidden() {
        let mut client = loona_hpack::Encoder::new();
        let mut plugin = loona_hpack::Encoder::new();
        let request = prost::Message::encode_to_vec(&csikit::v1::CreateVolumeRequest {
            name: "pvc-1".into(),
            secrets: [("password".to_owned(), "hunter2".to_owned())].into(),
            ..Default::default()
        });
        let mut c = frame(0x4, 0, 0, &[]);
        let block = client.encode([(&b":path"[..], &b"/csi.v1.Controller/CreateVolume"[..])]);
        c.extend(frame(HEADERS, END_HEADERS, 1, &block));
        let mut grpc = vec![0, 0, 0, 0, u8::try_from(request.len()).expect("short")];
        grpc.extend(request);
        c.extend(frame(DATA, END_STREAM, 1, &grpc));
        let block = plugin.encode([
            (&b":status"[..], &b"200"[..]),
            (b"grpc-status", b"16"),
            (b"grpc-message", b"bad password hunter2"),
        ]);
        let p = frame(HEADERS, END_HEADERS | END_STREAM, 1, &block);
        let mut data = Vec::new();
        for (high, bytes) in [(0, c), (0x80, p)] {
            for chunk in bytes.chunks(127) {
                data.push(high | u8::try_from(chunk.len()).expect("short"));
                data.extend_from_slice(chunk);
            }
        }
        let schema = Arc::new(Schema::builtin().expect("the built-in schema"));
        for format in [Format::Text, Format::Json] {
            let out = Printed::default();
            let calls = replay(schema.clone(), &data, format, Box::new(out.clone()));
            assert_eq!(calls.ok(), Some(1));
            let text =
                String::from_utf8(out.0.lock().expect("not poisoned").clone()).expect("utf-8");
            assert!(text.contains("UNAUTHENTICATED") && text.contains("pvc-1"), "{text}");
            assert!(!text.contains("hunter2"), "{text}");
        }
    }
}
