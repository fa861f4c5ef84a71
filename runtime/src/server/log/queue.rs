//! Between the calls' threads and the writer's: a bounded queue of captured events and the
//! thread that turns them into text and writes them.
//!
//! A call's thread takes the queue's lock, appends its event (a copy, no allocation once the
//! buffers have grown) and goes on; it wakes nobody, except a writer asleep after a quiet
//! spell or a queue half full. The writer takes the whole queue every [`PERIOD`] by swapping
//! it for the buffer it emptied last, formats every line, and writes them with one `write_all`.
//! When the queue is full an event is dropped and counted; the writer says how many, in the
//! log itself, with its next write. Closing ([`LogGuard`](super::LogGuard) dropped) has the writer
//! write what is queued and stop; events after that are written on the caller's thread.

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant, SystemTime};

use tracing::Level;

use super::capture::Batch;
use super::format::{write_batch, write_notice};

/// How often the writer takes the queue while lines come.
pub(crate) const PERIOD: Duration = Duration::from_millis(5);
/// Quiet periods after which the writer sleeps until an event wakes it.
const IDLE_PERIODS: u32 = 40;
/// The most bytes of captured values queued, whatever the count of lines: a bound on memory
/// when lines carry large `Debug` values.
const MAX_QUEUED_BYTES: usize = 16 << 20;
/// What a call's scratch batch keeps of its room between events.
pub(crate) const KEPT_SCRATCH: usize = 64 << 10;

/// Locks `m`, going on if a thread panicked holding it (the data is plain buffers and counts).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Default)]
struct Queue {
    batch: Batch,
    /// Lines accepted into the queue so far.
    accepted: u64,
    /// The writer has been told to stop.
    closed: bool,
}

/// What the calls' threads, the writer and the guard share.
pub(crate) struct Shared {
    queue: Mutex<Queue>,
    /// The most lines queued.
    capacity: usize,
    /// Lines turned away because the queue was full, in all.
    dropped: AtomicU64,
    /// Lines the writer failed to write, in all.
    failed: AtomicU64,
    /// Lines written or failed, counted as `Queue::accepted` counts them: what
    /// [`Shared::flush`] waits for.
    handled: Mutex<u64>,
    handled_changed: Condvar,
    /// The writer sleeps until woken.
    asleep: AtomicBool,
    writer_thread: OnceLock<Thread>,
    writer: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("capacity", &self.capacity)
            .field("queued", &lock(&self.queue).batch.len())
            .field("dropped", &self.dropped.load(Ordering::Relaxed))
            .field("failed", &self.failed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Starts the writer's thread over `writer`, with room for `capacity` lines; `done` is
    /// signalled (its sender dropped) when the thread ends.
    pub(crate) fn start(
        writer: Box<dyn Write + Send>,
        capacity: usize,
    ) -> std::io::Result<(std::sync::Arc<Shared>, mpsc::Receiver<()>)> {
        let shared = std::sync::Arc::new(Shared {
            queue: Mutex::default(),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            handled: Mutex::new(0),
            handled_changed: Condvar::new(),
            asleep: AtomicBool::new(false),
            writer_thread: OnceLock::new(),
            writer: Mutex::new(writer),
        });
        let (done_tx, done) = mpsc::channel::<()>();
        let for_thread = std::sync::Arc::clone(&shared);
        let handle = std::thread::Builder::new().name("csikit-log".into()).spawn(move || {
            run(&for_thread);
            drop(done_tx);
        })?;
        let _ = shared.writer_thread.set(handle.thread().clone());
        Ok((shared, done))
    }

    /// Queues the lines of `lines` (a call's scratch batch, one line), or counts them dropped
    /// when the queue is full; once closed, writes them here.
    pub(crate) fn push(&self, lines: &Batch) {
        let mut queue = lock(&self.queue);
        if queue.closed {
            drop(queue);
            self.write_now(lines);
            return;
        }
        if queue.batch.len() + lines.len() > self.capacity
            || queue.batch.bytes.len() + lines.bytes.len() > MAX_QUEUED_BYTES
        {
            drop(queue);
            self.dropped.fetch_add(lines.len() as u64, Ordering::Relaxed);
            return;
        }
        queue.batch.append(lines);
        queue.accepted += lines.len() as u64;
        let half_full = queue.batch.len() * 2 >= self.capacity;
        drop(queue);
        if half_full
            || (self.asleep.load(Ordering::SeqCst) && self.asleep.swap(false, Ordering::SeqCst))
        {
            self.wake();
        }
    }

    /// Wakes the writer now.
    pub(crate) fn wake(&self) {
        if let Some(thread) = self.writer_thread.get() {
            thread.unpark();
        }
    }

    /// Lines dropped so far because the queue was full.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Lines the writer could not write so far.
    pub(crate) fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Waits until every line queued before the call is written (or failed), for at most
    /// `within`; whether they were.
    pub(crate) fn flush(&self, within: Duration) -> bool {
        let target = lock(&self.queue).accepted;
        self.wake();
        let deadline = Instant::now() + within;
        let mut handled = lock(&self.handled);
        while *handled < target {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { return false };
            handled = self
                .handled_changed
                .wait_timeout(handled, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Tells the writer to write what is queued and stop.
    pub(crate) fn close(&self) {
        lock(&self.queue).closed = true;
        self.wake();
    }

    /// Formats and writes `lines` on this thread (after the writer stopped).
    fn write_now(&self, lines: &Batch) {
        let mut text = Vec::new();
        write_batch(lines, &mut text);
        if write_all(&self.writer, &text).is_err() {
            self.failed.fetch_add(lines.len() as u64, Ordering::Relaxed);
        }
    }

    fn set_handled(&self, up_to: u64) {
        let mut handled = lock(&self.handled);
        if *handled < up_to {
            *handled = up_to;
            self.handled_changed.notify_all();
        }
    }
}

/// Writes `text` and flushes; a writer that panics counts as one that failed.
fn write_all(writer: &Mutex<Box<dyn Write + Send>>, text: &[u8]) -> Result<(), String> {
    let mut writer = lock(writer);
    match std::panic::catch_unwind(AssertUnwindSafe(|| {
        writer.write_all(text).and_then(|()| writer.flush())
    })) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the writer panicked".to_owned()),
    }
}

/// The writer's thread.
fn run(shared: &Shared) {
    let mut batch = Batch::default();
    let mut text = Vec::new();
    let mut reported_dropped = 0;
    // Lines lost to a failed write and its error, not yet said in the log.
    let mut unreported_failure: Option<(u64, String)> = None;
    let mut idle = 0;
    loop {
        let (accepted, closed) = {
            let mut queue = lock(&shared.queue);
            std::mem::swap(&mut queue.batch, &mut batch);
            (queue.accepted, queue.closed)
        };
        let dropped = shared.dropped.load(Ordering::Relaxed);
        // A failure not yet said is tried again with the next lines, or at the end.
        let to_say = dropped > reported_dropped || (closed && unreported_failure.is_some());
        if batch.is_empty() && !to_say {
            idle += 1;
        } else {
            idle = 0;
            text.clear();
            let now = SystemTime::now();
            if let Some((lines, error)) = &unreported_failure {
                let message = format!("{lines} log lines could not be written: {error}");
                write_notice(now, Level::WARN, &message, &mut text);
            }
            write_batch(&batch, &mut text);
            if dropped > reported_dropped {
                let message = format!(
                    "{} log lines dropped: the log writer's queue was full ({} lines)",
                    dropped - reported_dropped,
                    shared.capacity
                );
                write_notice(now, Level::WARN, &message, &mut text);
            }
            match write_all(&shared.writer, &text) {
                Ok(()) => {
                    unreported_failure = None;
                    reported_dropped = dropped;
                }
                Err(error) => {
                    let lines = batch.len() as u64;
                    shared.failed.fetch_add(lines, Ordering::Relaxed);
                    let before = unreported_failure.map_or(0, |(n, _)| n);
                    unreported_failure = Some((before + lines, error));
                }
            }
            batch.clear();
            if text.capacity() > super::capture::KEPT_BYTES {
                text = Vec::new();
            }
        }
        shared.set_handled(accepted);
        if closed {
            return;
        }
        if idle < IDLE_PERIODS {
            std::thread::park_timeout(PERIOD);
            continue;
        }
        // A quiet spell: sleep until an event (or the guard) wakes the thread. The flag is set
        // before the queue is looked at, so an event queued after the look finds it set.
        shared.asleep.store(true, Ordering::SeqCst);
        let pending = {
            let queue = lock(&shared.queue);
            !queue.batch.is_empty() || queue.closed
        };
        if !pending {
            std::thread::park();
        }
        shared.asleep.store(false, Ordering::SeqCst);
        idle = 0;
    }
}
