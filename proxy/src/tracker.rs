//! What every call, tapped or answered, leaves behind ([`CallRecord`]) and what it is numbered and
//! checked for overlap against ([`Tracker`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use csi_view_core::schema::Schema;
use csi_view_core::wire::{Records, WireValue};

use crate::grpc::messages;

/// What a call leaves behind for the logger. Its Debug form shows sizes, not bytes: the request
/// may hold secrets.
#[derive(Default)]
pub(crate) struct CallRecord {
    pub(crate) id: u64,
    pub(crate) method: String,
    pub(crate) start: Option<SystemTime>,
    pub(crate) started: Option<Instant>,
    pub(crate) duration: Duration,
    pub(crate) request: Vec<u8>,
    pub(crate) response: Vec<u8>,
    pub(crate) status: Option<i32>,
    pub(crate) message: String,
    /// Set when the proxy itself ended the call (upstream unreachable or broken).
    pub(crate) proxy_error: Option<String>,
    /// Set when the call never ended on the wire (its connection closed first).
    pub(crate) note: Option<String>,
    /// Calls on the same volume that were in flight when this one's request was complete.
    pub(crate) concurrent_with: Vec<(u64, String)>,
    /// The volume the request names, while the call is in flight.
    pub(crate) key: Option<String>,
    pub(crate) finished: bool,
}

impl std::fmt::Debug for CallRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRecord")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("duration", &self.duration)
            .field("request_bytes", &self.request.len())
            .field("response_bytes", &self.response.len())
            .field("status", &self.status)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

/// What every call, tapped or answered, is numbered and checked against: the call numbers, and
/// the calls in flight on each volume. The logger thread's alone: calls are numbered in the order
/// the queue saw them start.
pub(crate) struct Tracker {
    schema: Arc<Schema>,
    next_id: u64,
    /// Volume key → calls in flight on it.
    in_flight: HashMap<String, Vec<(u64, String)>>,
    /// Per method path: the request field naming the volume.
    keys: HashMap<String, Option<(u32, String)>>,
}

impl Tracker {
    pub(crate) fn new(schema: Arc<Schema>) -> Self {
        Self { schema, next_id: 0, in_flight: HashMap::new(), keys: HashMap::new() }
    }

    /// The next call's number.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A call's request is complete: note the volume it names, and the calls already on it.
    pub(crate) fn enter(&mut self, r: &mut CallRecord) {
        let Some(key) = self.volume_key(&r.method, &r.request) else { return };
        let others = self.in_flight.entry(key.clone()).or_default();
        r.concurrent_with.clone_from(others);
        others.push((r.id, r.method.clone()));
        r.key = Some(key);
    }

    /// A call is over: it is no longer in flight on its volume.
    pub(crate) fn leave(&mut self, r: &CallRecord) {
        let Some(key) = &r.key else { return };
        if let Some(list) = self.in_flight.get_mut(key) {
            list.retain(|(id, _)| *id != r.id);
            if list.is_empty() {
                self.in_flight.remove(key);
            }
        }
    }

    /// The volume a request names, for the concurrency check.
    fn volume_key(&mut self, method: &str, request: &[u8]) -> Option<String> {
        // The key is a fact of the RPC (csikit_spec derives it once, as the server skeleton's
        // serialisation uses it): the field's number, and what it names.
        if !self.keys.contains_key(method) {
            let key = self.schema.method_facts(method).and_then(|f| f.key.as_ref());
            let key = key.map(|key| (key.number, key.kind.to_string()));
            self.keys.insert(method.to_owned(), key);
        }
        let (number, kind) = self.keys.get(method)?.as_ref()?;
        let message = messages(request).next()?;
        for r in Records::new(message, 0, 0) {
            let r = r.ok()?;
            if r.number == *number
                && let WireValue::Len(d) = r.value
            {
                let id = String::from_utf8_lossy(d).into_owned();
                return (!id.is_empty()).then(|| format!("{kind}:{id}"));
            }
        }
        None
    }
}

/// What a serialisation key (`kind:id`) names: `volume`, `snapshot`, `volume name`, ...
pub(crate) fn key_kind(key: &str) -> &str {
    key.split_once(':').map_or(key, |(kind, _)| kind)
}
