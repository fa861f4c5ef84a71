//! The plugin's log off the calls' path: a `tracing-subscriber` layer that copies each event's
//! values into a queue and leaves the text and the writing to a thread of its own.
//!
//! The skeleton logs one line per call at INFO (and the redacted request and the response at
//! DEBUG). With `tracing-subscriber`'s `fmt` layer, a line is formatted and written (a system
//! call, on a blocking file or pipe) on the thread serving the call, inside its latency.
//! [`LogLayer`] does neither there: an event's time, metadata and values are copied as they are
//! (a `Debug` value, which borrows from the event, is written to text) into a bounded queue; a
//! writer thread formats the queued lines in `fmt`'s shape and writes them in one go, every few
//! milliseconds.
//!
//! Nothing is lost without a word: when the queue is full (the writer cannot keep up, or its
//! file or pipe blocks), an event is dropped and counted, and the writer's next write says how
//! many were dropped; a failed write is said the same way once writing works again, and
//! [`LogGuard::dropped`] and [`LogGuard::failed`] count both. Dropping the [`LogGuard`] (at the
//! end of `main`) writes every queued line and stops the thread; events after that are written
//! on the thread that logs them.
//!
//! What is logged is what the skeleton and the driver emit: secret values never appear in
//! either (requests are logged with their redacting `Debug`, error messages scrubbed of the
//! request's secrets), and this layer writes only those values.
//!
//! ```no_run
//! use tracing_subscriber::prelude::*;
//!
//! # fn main() -> std::io::Result<()> {
//! let (log, guard) = csikit_runtime::server::log::LogLayer::new(std::io::stderr())?;
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::filter::LevelFilter::INFO)
//!     .with(log)
//!     .init();
//! // ... serve; `guard` lives to the end of main, and its drop writes what is queued.
//! drop(guard);
//! # Ok(())
//! # }
//! ```

mod call;
mod capture;
mod format;
mod queue;

use std::cell::RefCell;
use std::io::Write;
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime};

use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

pub(crate) use call::CallContext;
use capture::{Batch, Encoder};
use queue::Shared;

/// Lines the queue holds by default: at a call every few microseconds, far more than the
/// writer's few milliseconds between writes bring.
pub const DEFAULT_CAPACITY: usize = 16 * 1024;

/// How long dropping the [`LogGuard`] waits for the queued lines to be written, at most: a
/// writer stuck on a pipe nobody reads must not keep the plugin from exiting.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A `tracing-subscriber` layer writing every event it sees as a line, formatted and written on
/// a thread of its own (see the [module](self)). Filter it as any layer (`EnvFilter`,
/// `LevelFilter`).
#[derive(Debug, Clone)]
pub struct LogLayer {
    shared: Arc<Shared>,
}

/// Keeps the log's writer thread; dropped, it writes every queued line and stops the thread
/// (waiting [`CLOSE_TIMEOUT`] at most). Keep it to the end of `main`.
#[derive(Debug)]
#[must_use = "dropping the guard stops the log's writer thread"]
pub struct LogGuard {
    shared: Arc<Shared>,
    done: mpsc::Receiver<()>,
}

impl LogLayer {
    /// The layer and its guard, writing to `writer` (stderr, a file, a pipe) with room for
    /// [`DEFAULT_CAPACITY`] lines.
    ///
    /// # Errors
    ///
    /// When the writer thread cannot be started.
    pub fn new(writer: impl Write + Send + 'static) -> std::io::Result<(LogLayer, LogGuard)> {
        Self::with_capacity(writer, DEFAULT_CAPACITY)
    }

    /// As [`LogLayer::new`], with room for `capacity` lines (at least one).
    ///
    /// # Errors
    ///
    /// When the writer thread cannot be started.
    pub fn with_capacity(
        writer: impl Write + Send + 'static,
        capacity: usize,
    ) -> std::io::Result<(LogLayer, LogGuard)> {
        let (shared, done) = Shared::start(Box::new(writer), capacity)?;
        Ok((LogLayer { shared: Arc::clone(&shared) }, LogGuard { shared, done }))
    }
}

impl LogGuard {
    /// Lines dropped so far because the queue was full (each count also said in the log).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped()
    }

    /// Lines the writer failed to write so far.
    pub fn failed(&self) -> u64 {
        self.shared.failed()
    }

    /// Has the writer write now, and waits until every line logged before the call is written
    /// (or failed), for at most `within`; whether they were.
    pub fn flush(&self, within: Duration) -> bool {
        self.shared.flush(within)
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.shared.close();
        // Ends when the writer thread ends (its sender dropped), or after the timeout.
        let _ = self.done.recv_timeout(CLOSE_TIMEOUT);
    }
}

/// A span's values, kept with the span for the lines of the events inside it.
struct SpanValues(Vec<u8>);

thread_local! {
    /// Where a call's thread captures an event before queueing it, so capturing allocates
    /// nothing once its room has grown, and formatting a `Debug` value happens outside the
    /// queue's lock.
    static SCRATCH: RefCell<Batch> = RefCell::new(Batch::default());
}

impl LogLayer {
    /// Copies `event` and its scope into `line` and queues it.
    fn capture<S>(&self, event: &Event<'_>, ctx: &Context<'_, S>, line: &mut Batch)
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        line.begin(SystemTime::now());
        // The skeleton's call, when it keeps its context for this layer rather than in a span:
        // outermost, as its span would be.
        CallContext::write_current(line);
        let mut spans = 0;
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                let extensions = span.extensions();
                let values = extensions.get::<SpanValues>().map_or(&[][..], |v| &v.0[..]);
                line.part(span.metadata(), |out| out.extend_from_slice(values));
                spans += 1;
            }
        }
        line.reverse_last_parts(spans);
        line.part(event.metadata(), |out| event.record(&mut Encoder(out)));
        self.shared.push(line);
    }
}

impl<S> tracing_subscriber::Layer<S> for LogLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        // Room for a call span's values (an RPC name and an id of up to 128 bytes) at once,
        // rather than a reallocation per value.
        let mut values = Vec::with_capacity(if attrs.values().is_empty() { 0 } else { 192 });
        attrs.record(&mut Encoder(&mut values));
        // `replace`, not `insert` (which panics on a second one): two of these layers in one
        // subscriber share the type.
        span.extensions_mut().replace(SpanValues(values));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(SpanValues(bytes)) = extensions.get_mut::<SpanValues>() {
            values.record(&mut Encoder(bytes));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let captured = SCRATCH.try_with(|scratch| {
            // Busy: an event logged while this thread captures another (a `Debug` impl that
            // logs); it gets a batch of its own.
            let Ok(mut line) = scratch.try_borrow_mut() else { return false };
            self.capture(event, &ctx, &mut line);
            line.clear_keeping(queue::KEPT_SCRATCH);
            true
        });
        if captured != Ok(true) {
            self.capture(event, &ctx, &mut Batch::default());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::sync::Mutex;

    use tracing_subscriber::prelude::*;

    use super::*;

    /// A writer into shared memory; `gate`, when set, holds each write until the test lets it
    /// through, after saying the write began.
    #[derive(Clone, Default)]
    struct Memory {
        text: Arc<Mutex<Vec<u8>>>,
        gate: Option<Arc<Mutex<mpsc::Receiver<()>>>>,
        began: Option<mpsc::SyncSender<()>>,
        fail: bool,
    }

    impl Write for Memory {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Some(began) = &self.began {
                let _ = began.send(());
            }
            if let Some(gate) = &self.gate {
                let _ = gate.lock().unwrap().recv();
            }
            if self.fail {
                return Err(std::io::Error::other("disk full"));
            }
            self.text.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Memory {
        fn text(&self) -> String {
            String::from_utf8(self.text.lock().unwrap().clone()).unwrap()
        }
    }

    const WAIT: Duration = Duration::from_secs(30);

    #[test]
    fn events_in_spans_are_written_as_lines_with_their_spans() {
        let memory = Memory::default();
        let (layer, guard) = LogLayer::new(memory.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let span =
                tracing::info_span!("csi", rpc = "CreateVolume", waited_ms = tracing::field::Empty);
            let _in = span.enter();
            span.record("waited_ms", 3);
            tracing::info!(elapsed_us = 12_u64, "ok");
            tracing::warn!(target: "driver", detail = ?Some("x"), "odd\nline");
        });
        assert!(guard.flush(WAIT));
        let text = memory.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with(
                "  INFO csi{rpc=\"CreateVolume\" waited_ms=3}: csikit_runtime::server::log::tests: ok elapsed_us=12"
            ),
            "{text}"
        );
        assert!(
            lines[1].ends_with("  WARN csi{rpc=\"CreateVolume\" waited_ms=3}: driver: odd\\nline detail=Some(\"x\")"),
            "{text}"
        );
        assert_eq!((guard.dropped(), guard.failed()), (0, 0));
    }

    #[test]
    fn a_call_context_is_written_as_its_span_would_be() {
        let memory = Memory::default();
        let (layer, guard) = LogLayer::new(memory.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            assert!(tracing::dispatcher::get_default(tracing::Dispatch::is::<LogLayer>));
            let mut call = Some(CallContext::new("NodeStageVolume", Some("vol-1")));
            CallContext::enter(&mut call, || {
                assert!(CallContext::record_waited(3));
                tracing::info!(elapsed_us = 12_u64, "ok");
                // The driver's own span, inside the call.
                let span = tracing::info_span!("mount", fs = "ext4");
                let _in = span.enter();
                tracing::warn!("slow");
            });
            // Outside the call again: neither the context nor the wait stays on the thread.
            assert!(!CallContext::record_waited(1));
            tracing::info!("after");
            // Kept by the call between polls.
            CallContext::enter(&mut call, || tracing::info!("again"));
        });
        assert!(guard.flush(WAIT));
        let text = memory.text();
        let lines: Vec<&str> = text.lines().collect();
        let call = "csi{rpc=\"NodeStageVolume\" id=\"vol-1\" waited_ms=3}";
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].ends_with(&format!(
                "  INFO {call}: csikit_runtime::server::log::tests: ok elapsed_us=12"
            )),
            "{text}"
        );
        assert!(
            lines[1].ends_with(&format!(
                "  WARN {call}:mount{{fs=\"ext4\"}}: csikit_runtime::server::log::tests: slow"
            )),
            "{text}"
        );
        assert!(lines[2].ends_with("  INFO csikit_runtime::server::log::tests: after"), "{text}");
        assert!(lines[3].contains(&format!("{call}: ")), "{text}");
    }

    #[test]
    fn a_call_that_panics_leaves_the_thread_outside_it() {
        let mut call = Some(CallContext::new("NodeStageVolume", Some("vol-1")));
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            CallContext::enter(&mut call, || panic!("the driver panicked"));
        }));
        assert!(caught.is_err());
        assert!(!CallContext::record_waited(1), "no call's context left on the thread");
        assert!(call.is_some(), "the call has its context back");
    }

    #[test]
    fn dropping_the_guard_writes_what_is_queued() {
        let memory = Memory::default();
        let (layer, guard) = LogLayer::new(memory.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            for n in 0..100_u64 {
                tracing::info!(n, "queued");
            }
        });
        drop(guard);
        assert_eq!(memory.text().lines().filter(|l| l.contains(" queued n=")).count(), 100);
    }

    #[test]
    fn a_full_queue_drops_lines_and_the_log_says_how_many() {
        let (release, gate) = mpsc::channel();
        let (began_tx, began) = mpsc::sync_channel(16);
        let memory = Memory {
            gate: Some(Arc::new(Mutex::new(gate))),
            began: Some(began_tx),
            ..Memory::default()
        };
        let (layer, guard) = LogLayer::with_capacity(memory.clone(), 4).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(n = 0_u64, "first");
            // The writer takes the first line and is held in its write.
            guard.shared.wake();
            began.recv_timeout(WAIT).unwrap();
            for n in 1..=10_u64 {
                tracing::info!(n, "next");
            }
        });
        assert_eq!(guard.dropped(), 6, "four of ten fit");
        for _ in 0..2 {
            release.send(()).unwrap();
        }
        drop(release);
        assert!(guard.flush(WAIT));
        let text = memory.text();
        let numbers: Vec<&str> = text.lines().filter_map(|l| l.split(" n=").nth(1)).collect();
        assert_eq!(numbers, ["0", "1", "2", "3", "4"], "{text}");
        assert!(
            text.lines().last().unwrap().ends_with(
                " WARN csikit_runtime::server::log: 6 log lines dropped: the log writer's queue was full (4 lines)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_failed_write_is_counted_and_closing_writes_what_is_queued() {
        let memory = Memory { fail: true, ..Memory::default() };
        let (layer, guard) = LogLayer::new(memory.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer.clone());
        tracing::subscriber::with_default(subscriber, || tracing::info!("lost"));
        assert!(guard.flush(WAIT));
        assert_eq!(guard.failed(), 1);
        let shared = Arc::clone(&guard.shared);
        drop(guard);
        // Closed: the writer thread is gone and events are written where they happen.
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || tracing::info!("after"));
        assert_eq!(shared.failed(), 2, "the late line failed on this thread");
        assert!(memory.text().is_empty());
    }
}
