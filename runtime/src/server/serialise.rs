//! Per-id serialisation: one call per volume or snapshot id (or name) at a time; the others are
//! refused at once ([`Serialisation::FailFast`]) or queued in arrival order
//! ([`Serialisation::Wait`]).
//!
//! One map from key to its queue of waiters, under one mutex held only for map updates (never
//! across an await). A key is in the map exactly while a call holds it; the call that ends hands
//! the key to the first waiter still there, or removes the entry when none is, so the map never
//! keeps an entry nobody holds. A waiter that gives up (its timeout, or its client gone) leaves
//! the queue; one that was handed the key in the same instant passes it on.
//!
//! Every serialised call takes and gives back a key, so the cost of that is the cost of the
//! layer: the id is copied into strings the map keeps for reuse (no allocation once a few calls
//! have run) and hashed with [`KeyHasher`], not SipHash.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
// tokio's clock, so the measured wait follows a paused test clock as the timeout does.
use tokio::time::Instant;

/// What the pipeline does with a call for a volume or snapshot that has a call in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Serialisation {
    /// Answer `ABORTED` ("operation pending") at once, as the spec's error scheme describes: the
    /// CO retries with exponential back off. The default.
    #[default]
    FailFast,
    /// Queue the call behind the ones in flight for the same id; they run one after another in
    /// arrival order. A call answers `ABORTED` only when it has waited `timeout` without its turn
    /// coming. Calls for other ids are not held up.
    Wait {
        /// How long a call may wait for its turn.
        timeout: Duration,
    },
}

/// What a call is serialised on: what the id names (`volume`, `snapshot name`, ...), a NUL (which
/// no name of a kind holds), and the id. The map and the call holding it each have a copy, taken
/// from and given back to [`State::spare`].
pub(crate) type KeyId = String;

/// The most spare key strings kept, and the longest (a CSI id is at most 128 bytes where the spec
/// bounds it): room for the calls of a busy plugin, not for whatever a long id once needed.
const SPARE_KEYS: usize = 64;
const SPARE_KEY_BYTES: usize = 256;

/// The map's hasher: a multiply-and-rotate hash over eight bytes at a time (rustc's Fx hash),
/// some twenty times cheaper than the SipHash a `HashMap` uses by default for an id of a few
/// dozen bytes. SipHash resists keys chosen to collide; here the keys are ids sent by the CO over
/// a local socket, and a client able to choose them can already send the plugin anything, so the
/// map's cost per call is what matters.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A call waiting for a key: the ticket that finds it in the queue, the sender of its turn.
struct Waiter {
    ticket: u64,
    turn: oneshot::Sender<()>,
}

#[derive(Default)]
struct State {
    /// The keys held, each with the calls waiting for it, first come first.
    keys: HashMap<KeyId, VecDeque<Waiter>, BuildHasherDefault<KeyHasher>>,
    next_ticket: u64,
    /// The calls waiting, over every key.
    waiting: usize,
    /// Key strings given back, for the next keys.
    spare: Vec<String>,
}

impl State {
    /// The key of `id` of `kind` ([`KeyId`]'s form), in a spare string when there is one.
    fn key(&mut self, kind: &str, id: &str) -> KeyId {
        let mut key = self.copy(kind);
        key.push('\0');
        key.push_str(id);
        key
    }

    /// `text` in a spare string when there is one.
    fn copy(&mut self, text: &str) -> String {
        let mut copy = self.spare.pop().unwrap_or_default();
        copy.push_str(text);
        copy
    }

    /// Keeps `key`'s string for a later key.
    fn recycle(&mut self, mut key: KeyId) {
        if self.spare.len() < SPARE_KEYS && key.capacity() <= SPARE_KEY_BYTES {
            key.clear();
            self.spare.push(key);
        }
    }

    /// The call holding `key` is done: the first waiter still listening gets it, else it is free.
    fn release(&mut self, key: &str) {
        let Some(queue) = self.keys.get_mut(key) else { return };
        while let Some(next) = queue.pop_front() {
            self.waiting -= 1;
            if next.turn.send(()).is_ok() {
                return;
            }
        }
        if let Some((kept, _)) = self.keys.remove_entry(key) {
            self.recycle(kept);
        }
    }

    /// Takes the waiter with `ticket` out of `key`'s queue; false when it is no longer there
    /// (it was handed the key).
    fn leave(&mut self, key: &KeyId, ticket: u64) -> bool {
        let Some(queue) = self.keys.get_mut(key) else { return false };
        let Some(at) = queue.iter().position(|w| w.ticket == ticket) else { return false };
        queue.remove(at);
        self.waiting -= 1;
        true
    }
}

/// The keys held by calls in flight, and the calls waiting for them.
#[derive(Default)]
pub(crate) struct KeyLocks {
    state: Mutex<State>,
}

impl std::fmt::Debug for KeyLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("KeyLocks")
            .field("held", &state.keys.len())
            .field("waiting", &state.waiting)
            .finish()
    }
}

/// A key held by a call; released (to the next waiter, or freed) when dropped, however the call
/// ends: returned, failed, panicked or cancelled.
pub(crate) struct Held<'a> {
    locks: &'a KeyLocks,
    key: KeyId,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut state = self.locks.lock();
        state.release(&self.key);
        state.recycle(std::mem::take(&mut self.key));
    }
}

/// A call in a key's queue. Dropped before its turn (timeout, cancelled call), it leaves the
/// queue; dropped with its turn just handed to it, it passes the key on.
struct Queued<'a> {
    locks: &'a KeyLocks,
    key: Option<KeyId>,
    ticket: u64,
}

impl Queued<'_> {
    /// Leaves the queue; `Some(key)` when the turn had already come (the key is then held).
    fn give_up(&mut self) -> Option<KeyId> {
        let key = self.key.take()?;
        let left = self.locks.lock().leave(&key, self.ticket);
        (!left).then_some(key)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let mut state = self.locks.lock();
            if !state.leave(&key, self.ticket) {
                state.release(&key);
            }
            state.recycle(key);
        }
    }
}

impl KeyLocks {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the key of `id` (of `kind`) if no call holds it.
    pub(crate) fn try_acquire(&self, kind: &'static str, id: &str) -> Option<Held<'_>> {
        let mut state = self.lock();
        let key = state.key(kind, id);
        if state.keys.contains_key(&key) {
            state.recycle(key);
            return None;
        }
        let held = state.copy(&key);
        state.keys.insert(key, VecDeque::new());
        Some(Held { locks: self, key: held })
    }

    /// Takes `key`, waiting behind the calls that came for it first, for at most `timeout`.
    /// `on_wait` is told how many calls are ahead when the call has to wait. Returns the key
    /// and how long the call waited.
    ///
    /// # Errors
    ///
    /// How long the call waited when its turn did not come within `timeout`.
    pub(crate) async fn acquire(
        &self,
        kind: &'static str,
        id: &str,
        timeout: Duration,
        on_wait: impl FnOnce(usize),
    ) -> Result<(Held<'_>, Duration), Duration> {
        let (turn, my_turn) = oneshot::channel();
        let (key, ticket, ahead) = {
            let mut state = self.lock();
            let ticket = state.next_ticket;
            let key = state.key(kind, id);
            let Some(queue) = state.keys.get_mut(&key) else {
                let kept = state.copy(&key);
                state.keys.insert(kept, VecDeque::new());
                return Ok((Held { locks: self, key }, Duration::ZERO));
            };
            queue.push_back(Waiter { ticket, turn });
            let ahead = queue.len();
            state.next_ticket += 1;
            state.waiting += 1;
            (key, ticket, ahead)
        };
        let started = Instant::now();
        let mut queued = Queued { locks: self, key: Some(key), ticket };
        on_wait(ahead);
        let came = tokio::time::timeout(timeout, my_turn).await;
        let waited = started.elapsed();
        if matches!(came, Ok(Ok(())))
            && let Some(key) = queued.key.take()
        {
            return Ok((Held { locks: self, key }, waited));
        }
        // The timeout fired; the turn may have come in the same instant, and then it is taken.
        match queued.give_up() {
            Some(key) => Ok((Held { locks: self, key }, waited)),
            None => Err(waited),
        }
    }

    /// How many calls are waiting for a key, over every key.
    pub(crate) fn waiting(&self) -> usize {
        self.lock().waiting
    }

    /// How many keys are held by calls in flight.
    pub(crate) fn held(&self) -> usize {
        self.lock().keys.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn fail_fast_refuses_a_held_key_and_frees_it_on_drop() {
        let locks = KeyLocks::default();
        let held = locks.try_acquire("volume", "a").unwrap();
        assert!(locks.try_acquire("volume", "a").is_none());
        assert!(locks.try_acquire("volume", "b").is_some(), "another key is free");
        drop(held);
        assert_eq!(locks.held(), 0, "no entry left behind");
        assert!(locks.try_acquire("volume", "a").is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn waiters_get_the_key_in_arrival_order() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let first = locks.try_acquire("volume", "a").unwrap();
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..5 {
            let (mine, order) = (locks.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let (_held, _) =
                    mine.acquire("volume", "a", Duration::from_secs(1), |_| {}).await.unwrap();
                order.lock().unwrap().push(i);
                tokio::task::yield_now().await;
            }));
            while locks.waiting() < i + 1 {
                tokio::task::yield_now().await;
            }
        }
        drop(first);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
        assert_eq!((locks.held(), locks.waiting()), (0, 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_that_times_out_leaves_the_queue() {
        let locks = KeyLocks::default();
        let held = locks.try_acquire("volume", "a").unwrap();
        let mut told = 0;
        let waited = locks
            .acquire("volume", "a", Duration::from_millis(20), |ahead| told = ahead)
            .await
            .map(|_| ())
            .unwrap_err();
        assert_eq!(told, 1, "one call ahead");
        assert!(waited >= Duration::from_millis(20), "{waited:?}");
        assert_eq!(locks.waiting(), 0);
        drop(held);
        assert_eq!(locks.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_handed_the_key_as_it_goes_passes_it_on() {
        let locks = std::sync::Arc::new(KeyLocks::default());
        let held = locks.try_acquire("volume", "a").unwrap();
        // The first waiter's future is polled once (queued), then the key is handed to it and
        // the future dropped before it runs again, as when its client goes away.
        let mut first = Box::pin(locks.acquire("volume", "a", Duration::from_secs(1), |_| {}));
        assert!(futures_poll_once(first.as_mut()).await.is_none());
        let second = {
            let locks = locks.clone();
            tokio::spawn(async move {
                locks.acquire("volume", "a", Duration::from_secs(1), |_| {}).await.map(|_| ())
            })
        };
        while locks.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        drop(held);
        assert_eq!(locks.waiting(), 1, "the first waiter was handed the key");
        drop(first);
        second.await.unwrap().unwrap();
        assert_eq!((locks.held(), locks.waiting()), (0, 0));
    }

    /// Polls `f` once; `Some` when it finished.
    async fn futures_poll_once<F: std::future::Future + Unpin>(mut f: F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
