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
//!
//! Fail-fast ([`KeyLocks::fail_fast`], the pipeline's default) first tries a table of atomic
//! slots: a key's 64-bit hash (SipHash with this process's random keys) picks a slot, and a call
//! whose compare-and-swap puts the hash there holds the key; one that finds its own hash there is
//! refused. That writes one cache line per call where the map writes several (the lock, the
//! map's control bytes and slot, the key strings), and over a socket, where a call comes long
//! after the last and finds the layer's memory out of the caches, it measured 1.1–1.5 µs for the
//! map against 0.3–0.7 µs for the slots (BENCHMARKS.md). A key whose slot another key holds goes to
//! the map, as in wait mode. The two never disagree on a key: a call that takes a slot then
//! looks at the map (under its lock) whenever the map holds keys, and a call that puts a key in
//! the map counts it there first and then looks at the slot (both sequentially consistent), so
//! of two calls on one key racing through the two paths at least one sees the other. Two
//! different keys with the same 64-bit hash are taken as one: the odds are 2^-64 for a pair of
//! ids in flight together, no client can aim at them (the hash keys are random), and the cost
//! would be one `ABORTED`, which a CO retries.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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
    /// The fail-fast slots; `None` in wait mode, where every key goes through the map.
    slots: Option<Slots>,
}

/// How many slots fail-fast has: a key falls back to the map only when another key in flight
/// holds its slot (about one call in 100 with 10 others in flight).
const SLOTS: usize = 1024;

/// Fail-fast's table (see the module's docs).
struct Slots {
    /// Each slot: 0 when free, else the hash of the key that holds it.
    held: Box<[AtomicU64]>,
    /// How many keys fail-fast has put in the map; counted before the slot is looked at.
    in_map: AtomicUsize,
    hasher: RandomState,
}

impl Slots {
    /// The key's hash (never 0, which marks a free slot) and its slot.
    fn find(&self, kind: &str, id: &str) -> (u64, usize) {
        let hash = self.hasher.hash_one((kind, id)).max(1);
        // The low bits of SipHash's output are as good as any.
        #[allow(clippy::cast_possible_truncation, reason = "only the low bits pick the slot")]
        let slot = hash as usize % self.held.len();
        (hash, slot)
    }
}

impl std::fmt::Debug for KeyLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyLocks")
            .field("held", &self.held())
            .field("waiting", &self.waiting())
            .finish()
    }
}

/// A key held by a call; released (to the next waiter, or freed) when dropped, however the call
/// ends: returned, failed, panicked or cancelled.
pub(crate) struct Held<'a> {
    locks: &'a KeyLocks,
    by: HeldBy,
}

/// Where a held key is recorded.
enum HeldBy {
    /// Fail-fast's slot.
    Slot(usize),
    /// The map.
    Map(KeyId),
}

impl<'a> Held<'a> {
    fn map(locks: &'a KeyLocks, key: KeyId) -> Self {
        Held { locks, by: HeldBy::Map(key) }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        match &mut self.by {
            HeldBy::Slot(at) => {
                if let Some(slots) = &self.locks.slots {
                    slots.held[*at].store(0, Ordering::SeqCst);
                }
            }
            HeldBy::Map(key) => {
                let mut state = self.locks.lock();
                state.release(key);
                state.recycle(std::mem::take(key));
                if let Some(slots) = &self.locks.slots {
                    slots.in_map.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
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
    /// Keys for fail-fast: slots first, the map for a key whose slot another key holds. Such a
    /// table serves [`KeyLocks::try_acquire`] only; wait mode's is [`KeyLocks::default`].
    pub(crate) fn fail_fast() -> Self {
        Self::fail_fast_with(SLOTS)
    }

    /// As [`KeyLocks::fail_fast`] with `slots` slots (at least one): few, in tests, so that keys
    /// share them.
    fn fail_fast_with(slots: usize) -> Self {
        KeyLocks {
            state: Mutex::default(),
            slots: Some(Slots {
                held: (0..slots.max(1)).map(|_| AtomicU64::new(0)).collect(),
                in_map: AtomicUsize::new(0),
                hasher: RandomState::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the key of `id` (of `kind`) if no call holds it.
    pub(crate) fn try_acquire(&self, kind: &'static str, id: &str) -> Option<Held<'_>> {
        let Some(slots) = &self.slots else { return self.try_acquire_in_map(kind, id) };
        let (hash, at) = slots.find(kind, id);
        match slots.held[at].compare_exchange(0, hash, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => {
                let held = Held { locks: self, by: HeldBy::Slot(at) };
                if slots.in_map.load(Ordering::SeqCst) == 0 {
                    return Some(held);
                }
                // The map holds keys: this one may be among them (put there while another key
                // held this slot). Dropping `held` frees the slot again.
                let mut state = self.lock();
                let key = state.key(kind, id);
                let taken = state.keys.contains_key(&key);
                state.recycle(key);
                drop(state);
                (!taken).then_some(held)
            }
            Err(holder) if holder == hash => None,
            Err(_) => {
                // Counted before the slot is looked at again (see the module's docs).
                slots.in_map.fetch_add(1, Ordering::SeqCst);
                let held = self.try_acquire_in_map_unless(kind, id, || {
                    slots.held[at].load(Ordering::SeqCst) == hash
                });
                if held.is_none() {
                    slots.in_map.fetch_sub(1, Ordering::SeqCst);
                }
                held
            }
        }
    }

    /// Takes the key of `id` (of `kind`) in the map if no call holds it there.
    fn try_acquire_in_map(&self, kind: &'static str, id: &str) -> Option<Held<'_>> {
        self.try_acquire_in_map_unless(kind, id, || false)
    }

    /// As [`KeyLocks::try_acquire_in_map`], refusing also when `held_elsewhere` says (under the
    /// map's lock) that the key's slot holds it.
    fn try_acquire_in_map_unless(
        &self,
        kind: &'static str,
        id: &str,
        held_elsewhere: impl FnOnce() -> bool,
    ) -> Option<Held<'_>> {
        let mut state = self.lock();
        if held_elsewhere() {
            return None;
        }
        let key = state.key(kind, id);
        if state.keys.contains_key(&key) {
            state.recycle(key);
            return None;
        }
        let held = state.copy(&key);
        state.keys.insert(key, VecDeque::new());
        Some(Held::map(self, held))
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
                return Ok((Held::map(self, key), Duration::ZERO));
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
            return Ok((Held::map(self, key), waited));
        }
        // The timeout fired; the turn may have come in the same instant, and then it is taken.
        match queued.give_up() {
            Some(key) => Ok((Held::map(self, key), waited)),
            None => Err(waited),
        }
    }

    /// How many calls are waiting for a key, over every key.
    pub(crate) fn waiting(&self) -> usize {
        self.lock().waiting
    }

    /// How many keys are held by calls in flight.
    pub(crate) fn held(&self) -> usize {
        let in_slots = self.slots.as_ref().map_or(0, |slots| {
            slots.held.iter().filter(|slot| slot.load(Ordering::SeqCst) != 0).count()
        });
        self.lock().keys.len() + in_slots
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn fail_fast_slots_refuse_a_held_key_and_free_it_on_drop() {
        let locks = KeyLocks::fail_fast();
        let held = locks.try_acquire("volume", "a").unwrap();
        assert!(locks.try_acquire("volume", "a").is_none());
        assert!(locks.try_acquire("volume name", "a").is_some(), "another kind, another key");
        let other = locks.try_acquire("volume", "b").unwrap();
        assert_eq!(locks.held(), 2);
        drop((held, other));
        assert_eq!(locks.held(), 0, "no slot or entry left behind");
        assert!(locks.try_acquire("volume", "a").is_some());
    }

    /// One slot for every key: the first key in flight takes it, the others go to the map, and
    /// a key is refused whichever of the two holds it.
    #[test]
    fn keys_that_share_a_slot_are_told_apart_through_the_map() {
        let locks = KeyLocks::fail_fast_with(1);
        let in_map = |locks: &KeyLocks| locks.slots.as_ref().unwrap().in_map.load(Ordering::SeqCst);
        let a = locks.try_acquire("volume", "a").unwrap();
        assert!(matches!(a.by, HeldBy::Slot(0)));
        let b = locks.try_acquire("volume", "b").unwrap();
        assert!(matches!(b.by, HeldBy::Map(_)));
        assert_eq!(in_map(&locks), 1);
        assert!(locks.try_acquire("volume", "a").is_none(), "held in the slot");
        assert!(locks.try_acquire("volume", "b").is_none(), "held in the map");
        assert_eq!(in_map(&locks), 1, "a refusal leaves no count behind");
        drop(a);
        // The slot is free, but b is in the map: taking the slot does not take b.
        assert!(locks.try_acquire("volume", "b").is_none());
        assert_eq!(locks.held(), 1, "the refused call gave the slot back");
        let c = locks.try_acquire("volume", "c").unwrap();
        assert!(matches!(c.by, HeldBy::Slot(0)));
        drop(b);
        assert_eq!(in_map(&locks), 0);
        let b = locks.try_acquire("volume", "b").unwrap();
        assert!(matches!(b.by, HeldBy::Map(_)), "c holds the slot");
        drop((b, c));
        assert_eq!((locks.held(), in_map(&locks)), (0, 0));
    }

    /// Threads racing for a few keys through two slots: never two holders of one key at once,
    /// whichever path each took, and nothing held at the end.
    #[test]
    fn racing_calls_never_hold_one_key_twice() {
        use std::sync::Arc;
        let locks = Arc::new(KeyLocks::fail_fast_with(2));
        let keys = ["a", "b", "c", "d", "e"];
        let holders: Arc<Vec<AtomicUsize>> =
            Arc::new(keys.iter().map(|_| AtomicUsize::new(0)).collect());
        let taken = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (locks, holders, taken) = (locks.clone(), holders.clone(), taken.clone());
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        let k = (i * 7 + t * 3) % keys.len();
                        if let Some(held) = locks.try_acquire("volume", keys[k]) {
                            assert_eq!(holders[k].fetch_add(1, Ordering::SeqCst), 0, "{}", keys[k]);
                            taken.fetch_add(1, Ordering::Relaxed);
                            std::hint::spin_loop();
                            holders[k].fetch_sub(1, Ordering::SeqCst);
                            drop(held);
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert!(taken.load(Ordering::Relaxed) > 0);
        assert_eq!(locks.held(), 0);
        assert_eq!(locks.slots.as_ref().unwrap().in_map.load(Ordering::SeqCst), 0);
    }

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
