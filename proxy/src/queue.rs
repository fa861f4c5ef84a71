//! The only thing a tapped connection does besides forwarding: each chunk a pump has written on
//! is put in a [`Queue`] with the instant it was read, for the logger thread to take every few
//! milliseconds. No frame is parsed, no task or thread is woken and nothing is allocated on the
//! data path: the chunks are copied into one buffer, which the logger swaps for the one it has
//! emptied.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::tracker::CallRecord;

/// How often the logger takes the queue.
pub(crate) const LOGGER_PERIOD: Duration = Duration::from_millis(5);

/// Which way bytes went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// From the client (the CO) to the plugin.
    Client,
    /// From the plugin to the client.
    Plugin,
}

/// A tapped connection's handle, shared by its pumps and the tap.
#[derive(Debug, Default)]
pub struct Conn {
    /// The connection's number.
    pub id: u64,
    /// Calls the tap has seen start on it and not yet end.
    pub open_calls: AtomicUsize,
}

/// What the pumps tell the tap. Its Debug form shows sizes, not bytes: requests may hold secrets.
pub enum Event {
    /// A connection was spliced.
    Open(Arc<Conn>),
    /// `len` bytes went one way, read at `at`; they follow those of the batch's previous
    /// `Bytes` event in its buffer.
    Bytes { conn: u64, dir: Dir, at: Instant, len: usize },
    /// Both directions of a connection ended; `why` says which side ended it first, and
    /// `by_client` whether that was the client (calls left open were cancelled) or not (the
    /// plugin or the proxy went: they are unavailable).
    Closed { conn: u64, at: Instant, why: String, by_client: bool },
    /// A call the proxy answered itself (on a connection accepted while the plugin was down) has
    /// its whole request; `token` names it until it is numbered.
    Request { token: u64, method: String, request: Vec<u8> },
    /// Such a call is over.
    Answered(Box<CallRecord>),
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open(c) => write!(f, "Open({})", c.id),
            Self::Bytes { conn, dir, len, .. } => {
                write!(f, "Bytes {{ conn: {conn}, dir: {dir:?}, len: {len} }}")
            }
            Self::Closed { conn, why, .. } => write!(f, "Closed {{ conn: {conn}, why: {why:?} }}"),
            Self::Request { token, method, request } => {
                write!(
                    f,
                    "Request {{ token: {token}, method: {method:?}, len: {} }}",
                    request.len()
                )
            }
            Self::Answered(r) => write!(f, "Answered({r:?})"),
        }
    }
}

/// Events in the order they happened, and the bytes of their `Bytes` events, one after another.
/// Its Debug form shows the events (sizes, not bytes) and how many bytes there are.
#[derive(Default)]
pub struct Batch {
    pub(crate) events: Vec<Event>,
    pub(crate) bytes: Vec<u8>,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("events", &self.events)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl Batch {
    /// Adds an event that carries no bytes.
    pub(crate) fn push(&mut self, e: Event) {
        debug_assert!(!matches!(e, Event::Bytes { .. }), "bytes go through push_bytes");
        self.events.push(e);
    }

    /// Adds `data`, read at `at` on connection `conn` going `dir`.
    pub(crate) fn push_bytes(&mut self, conn: u64, dir: Dir, at: Instant, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        self.events.push(Event::Bytes { conn, dir, at, len: data.len() });
    }

    /// How many events it holds.
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }

    /// Empties it, keeping its room (once read, the logger hands it back to the queue). Room
    /// beyond what a busy few milliseconds need is given back.
    pub(crate) fn clear(&mut self) {
        const KEPT: usize = 4 << 20;
        self.events.clear();
        self.bytes.clear();
        if self.bytes.capacity() > KEPT {
            self.bytes.shrink_to(KEPT);
        }
    }
}

/// The events of every tapped connection, in the order they happened.
#[derive(Debug, Default)]
pub struct Queue {
    batch: Mutex<Batch>,
    /// Events pushed, and events the tap has taken in, so far.
    pushed: AtomicU64,
    taken: AtomicU64,
    closed: std::sync::atomic::AtomicBool,
}

impl Queue {
    fn batch(&self) -> std::sync::MutexGuard<'_, Batch> {
        self.batch.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds an event that carries no bytes.
    pub fn push(&self, e: Event) {
        self.batch().push(e);
        self.pushed.fetch_add(1, Ordering::Release);
    }

    /// Adds a chunk a pump has written on (a lock and a copy: the only cost on the data path).
    pub fn push_bytes(&self, conn: u64, dir: Dir, at: Instant, data: &[u8]) {
        self.batch().push_bytes(conn, dir, at, data);
        self.pushed.fetch_add(1, Ordering::Release);
    }

    /// Takes every event so far into `into`, which must be empty; the queue keeps `into`'s room
    /// for what comes next.
    pub fn take(&self, into: &mut Batch) {
        debug_assert!(into.events.is_empty() && into.bytes.is_empty());
        std::mem::swap(&mut *self.batch(), into);
    }
    /// Marks `n` taken events as read by the tap.
    pub fn done(&self, n: usize) {
        self.taken.fetch_add(n as u64, Ordering::Release);
    }

    /// How many events were pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed.load(Ordering::Acquire)
    }

    /// Says nothing more will be pushed.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Whether [`Queue::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Whether the tap has read every event up to `mark` (a value of [`Queue::pushed`]).
    pub fn read_up_to(&self, mark: u64) -> bool {
        self.taken.load(Ordering::Acquire) >= mark
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_shown_for_debugging_shows_sizes_never_bytes() {
        let queue = Queue::default();
        queue.push_bytes(1, Dir::Client, Instant::now(), b"password hunter2");
        let shown = format!("{queue:?}");
        assert!(shown.contains("len: 16") && !shown.contains("hunter2"), "{shown}");
        let mut batch = Batch::default();
        queue.take(&mut batch);
        assert_eq!(batch.len(), 1);
        assert!(!format!("{batch:?}").contains("hunter2"));
        assert!(!format!("{queue:?}").contains("len: 16"), "taken");
    }
}
