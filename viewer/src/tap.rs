//! The proxy's passive tap: the bytes of a spliced connection, read as HTTP/2 off the data path.
//!
//! A tapped connection is two byte pumps (client to plugin, plugin to client); each chunk a pump
//! has written on is also put in a [`Queue`] with the instant it was read. Nothing else happens on
//! the data path: no frame is parsed there, no task or thread is woken. The logger thread takes
//! the queue every few milliseconds and hands it to a [`Tap`], which follows each connection's
//! two directions frame by frame (with an HPACK decoder per direction, so the header tables stay
//! in step with the peers'), puts each stream's request and response together, and gives back a
//! [`CallRecord`] for every call that has ended.
//!
//! A connection the tap cannot follow (not HTTP/2 with prior knowledge, an HPACK error, a frame
//! it cannot read) is still forwarded byte for byte; its calls are not shown, and a line on
//! stderr says so once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::proxy::{CallRecord, Tracker};

/// The HTTP/2 client connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const FRAME_HEADER: usize = 9;
/// Frame types.
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const PUSH_PROMISE: u8 = 0x5;
const CONTINUATION: u8 = 0x9;
/// Flags.
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The largest frame a peer may be allowed to send (2^24 - 1); anything larger is not HTTP/2.
const MAX_FRAME: usize = (1 << 24) - 1;
/// The largest header block put together; a larger one is not followed.
const MAX_BLOCK: usize = 1 << 20;

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
    /// Bytes went one way, read at `at`.
    Bytes { conn: u64, dir: Dir, at: Instant, bytes: Vec<u8> },
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
            Self::Bytes { conn, dir, bytes, .. } => {
                write!(f, "Bytes {{ conn: {conn}, dir: {dir:?}, len: {} }}", bytes.len())
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

/// The events of every tapped connection, in the order they happened.
#[derive(Debug, Default)]
pub struct Queue {
    events: Mutex<Vec<Event>>,
    /// Events pushed, and events the tap has taken in, so far.
    pushed: AtomicU64,
    taken: AtomicU64,
    closed: std::sync::atomic::AtomicBool,
}

impl Queue {
    /// Adds an event (a lock and a push: the only cost on the data path).
    pub fn push(&self, e: Event) {
        let mut events = self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        events.push(e);
        self.pushed.fetch_add(1, Ordering::Release);
    }

    /// Takes every event so far.
    pub fn take(&self) -> Vec<Event> {
        let mut events = self.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let out = std::mem::take(&mut *events);
        drop(events);
        out
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

/// One direction of a connection, as the tap follows it.
struct Reader {
    /// Bytes not yet made into frames.
    buf: Vec<u8>,
    /// Preface bytes still expected (the client's direction only).
    preface: usize,
    decoder: loona_hpack::Decoder<'static>,
    /// A header block waiting for its CONTINUATION frames: stream, END_STREAM, fragments so far.
    block: Option<(u32, bool, Vec<u8>)>,
}

impl Reader {
    fn new(dir: Dir) -> Self {
        Self {
            buf: Vec::new(),
            preface: if dir == Dir::Client { PREFACE.len() } else { 0 },
            decoder: loona_hpack::Decoder::new(),
            block: None,
        }
    }
}

/// A frame, as far as the tap cares.
enum Frame {
    Headers { stream: u32, end_stream: bool, fields: Vec<(Vec<u8>, Vec<u8>)> },
    Data { stream: u32, end_stream: bool, data: Vec<u8> },
    Reset { stream: u32, code: u32 },
}

/// A call on a tapped connection.
struct Open {
    record: CallRecord,
    start: Instant,
    request_done: bool,
}

struct TapConn {
    conn: Arc<Conn>,
    client: Reader,
    plugin: Reader,
    calls: HashMap<u32, Open>,
    /// Why the connection is not followed any more.
    lost: Option<String>,
}

/// Follows every tapped connection; see the module's documentation.
pub struct Tap {
    tracker: Tracker,
    conns: HashMap<u64, TapConn>,
    /// Answered calls whose request is complete: token → number, volume key, calls overlapped.
    answered: HashMap<u64, CallRecord>,
    /// The wall clock at a known instant, to date calls from the instants the pumps took.
    epoch: (SystemTime, Instant),
    /// What the user should be told (a connection no longer followed), not yet taken.
    pub notices: Vec<String>,
}

impl Tap {
    /// A tap numbering calls with `tracker`.
    pub fn new(tracker: Tracker) -> Self {
        Self {
            tracker,
            conns: HashMap::new(),
            answered: HashMap::new(),
            epoch: (SystemTime::now(), Instant::now()),
            notices: Vec::new(),
        }
    }

    fn wall(&self, at: Instant) -> SystemTime {
        self.epoch.0 + at.saturating_duration_since(self.epoch.1)
    }

    /// Reads `events`; the calls that ended are pushed to `done`.
    pub fn feed(&mut self, events: Vec<Event>, done: &mut Vec<CallRecord>) {
        for e in events {
            match e {
                Event::Open(conn) => {
                    self.conns.insert(
                        conn.id,
                        TapConn {
                            conn,
                            client: Reader::new(Dir::Client),
                            plugin: Reader::new(Dir::Plugin),
                            calls: HashMap::new(),
                            lost: None,
                        },
                    );
                }
                Event::Bytes { conn, dir, at, bytes } => self.bytes(conn, dir, at, &bytes, done),
                Event::Request { token, method, request } => {
                    // Only the number, the volume and the overlaps are kept: the call's own
                    // record (start, times, response) comes with `Answered`.
                    let mut r = CallRecord {
                        id: self.tracker.next_id(),
                        method,
                        request,
                        ..CallRecord::default()
                    };
                    self.tracker.enter(&mut r);
                    self.answered.insert(token, r);
                }
                Event::Answered(mut record) => {
                    match self.answered.remove(&record.id) {
                        Some(seen) => {
                            self.tracker.leave(&seen);
                            record.id = seen.id;
                            record.concurrent_with = seen.concurrent_with;
                        }
                        // Ended before its request was whole.
                        None => record.id = self.tracker.next_id(),
                    }
                    done.push(*record);
                }
                Event::Closed { conn, at, why, by_client } => {
                    let Some(mut c) = self.conns.remove(&conn) else { continue };
                    let mut open: Vec<(u32, Open)> = c.calls.drain().collect();
                    open.sort_by_key(|(s, _)| *s);
                    for (_, call) in open {
                        let code = if by_client { 1 } else { 14 };
                        let message = format!("the call did not end: {why}");
                        self.end(&c.conn, call, at, Some((code, message, true)), done);
                    }
                    c.conn.open_calls.store(0, Ordering::Release);
                }
            }
        }
    }

    fn bytes(
        &mut self,
        conn: u64,
        dir: Dir,
        at: Instant,
        bytes: &[u8],
        done: &mut Vec<CallRecord>,
    ) {
        let Some(mut c) = self.conns.remove(&conn) else { return };
        if c.lost.is_none() {
            let reader = if dir == Dir::Client { &mut c.client } else { &mut c.plugin };
            let mut frames = Vec::new();
            match read_frames(reader, bytes, &mut frames) {
                Ok(()) => {
                    for f in frames {
                        self.frame(&mut c, dir, at, f, done);
                    }
                }
                Err(why) => {
                    let side = if dir == Dir::Client { "client" } else { "plugin" };
                    self.notices.push(format!(
                        "connection {conn}: cannot follow the {side}'s HTTP/2 ({why}); its calls \
                         are forwarded but not shown"
                    ));
                    for (_, call) in c.calls.drain() {
                        self.tracker.leave(&call.record);
                    }
                    c.conn.open_calls.store(0, Ordering::Release);
                    c.lost = Some(why);
                }
            }
        }
        self.conns.insert(conn, c);
    }

    fn frame(
        &mut self,
        c: &mut TapConn,
        dir: Dir,
        at: Instant,
        f: Frame,
        done: &mut Vec<CallRecord>,
    ) {
        match (dir, f) {
            // A header block on no stream (a pushed request's) only kept the decoder in step.
            (_, Frame::Headers { stream: 0, .. }) => {}
            (Dir::Client, Frame::Headers { stream, end_stream, fields }) => {
                if let Some(call) = c.calls.get_mut(&stream) {
                    // Request trailers: gRPC sends none; the request ends here if they say so.
                    if end_stream && !call.request_done {
                        call.request_done = true;
                        self.tracker.enter(&mut call.record);
                    }
                    return;
                }
                let method = fields
                    .iter()
                    .find(|(n, _)| n == b":path")
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
                    .unwrap_or_default();
                let mut call = Open {
                    record: CallRecord {
                        id: self.tracker.next_id(),
                        method,
                        start: Some(self.wall(at)),
                        ..CallRecord::default()
                    },
                    start: at,
                    request_done: false,
                };
                if end_stream {
                    call.request_done = true;
                    self.tracker.enter(&mut call.record);
                }
                c.calls.insert(stream, call);
                c.conn.open_calls.fetch_add(1, Ordering::AcqRel);
            }
            (Dir::Client, Frame::Data { stream, end_stream, data }) => {
                if let Some(call) = c.calls.get_mut(&stream) {
                    call.record.request.extend_from_slice(&data);
                    if end_stream && !call.request_done {
                        call.request_done = true;
                        self.tracker.enter(&mut call.record);
                    }
                }
            }
            (Dir::Plugin, Frame::Headers { stream, end_stream, fields }) => {
                let Some(call) = c.calls.get_mut(&stream) else { return };
                let field = |name: &[u8]| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v);
                if let Some(code) = field(b"grpc-status")
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse::<i32>().ok())
                {
                    call.record.status = Some(code);
                    call.record.message = field(b"grpc-message")
                        .map(|v| crate::proxy::percent_decode(v))
                        .unwrap_or_default();
                } else if let Some(s) = field(b":status").filter(|s| s.as_slice() != b"200") {
                    // Not a gRPC answer: gRPC's mapping of HTTP statuses.
                    let http = String::from_utf8_lossy(s).into_owned();
                    call.record.status = Some(http_status_code(&http));
                    call.record.message = format!("HTTP status {http} from the plugin");
                }
                if end_stream && let Some(call) = c.calls.remove(&stream) {
                    self.end(&c.conn, call, at, None, done);
                }
            }
            (Dir::Plugin, Frame::Data { stream, end_stream, data }) => {
                let Some(call) = c.calls.get_mut(&stream) else { return };
                call.record.response.extend_from_slice(&data);
                if end_stream && let Some(call) = c.calls.remove(&stream) {
                    self.end(&c.conn, call, at, None, done);
                }
            }
            (_, Frame::Reset { stream, code }) => {
                let Some(call) = c.calls.remove(&stream) else { return };
                let (who, grpc) = match dir {
                    Dir::Client => ("the client", 1),
                    Dir::Plugin => ("the plugin", reset_status(code)),
                };
                let message = format!("{who} reset the stream ({})", reset_name(code));
                self.end(&c.conn, call, at, Some((grpc, message, false)), done);
            }
        }
    }

    /// A call is over: hand it on.
    fn end(
        &mut self,
        conn: &Conn,
        mut call: Open,
        at: Instant,
        ended: Option<(i32, String, bool)>,
        done: &mut Vec<CallRecord>,
    ) {
        if let Some((code, message, connection)) = ended
            && call.record.status.is_none()
        {
            call.record.status = Some(code);
            call.record.message.clone_from(&message);
            if connection {
                call.record.note = Some(message);
            }
        }
        call.record.duration = at.saturating_duration_since(call.start);
        call.record.finished = true;
        self.tracker.leave(&call.record);
        let _ =
            conn.open_calls.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        done.push(call.record);
    }
}

/// Adds `bytes` to `r` and reads the whole frames now in it.
fn read_frames(r: &mut Reader, mut bytes: &[u8], out: &mut Vec<Frame>) -> Result<(), String> {
    if r.preface > 0 {
        let at = PREFACE.len() - r.preface;
        let n = r.preface.min(bytes.len());
        if bytes[..n] != PREFACE[at..at + n] {
            return Err("no HTTP/2 connection preface".into());
        }
        r.preface -= n;
        bytes = &bytes[n..];
    }
    r.buf.extend_from_slice(bytes);
    let mut at = 0;
    while let Some(h) = r.buf.get(at..at + FRAME_HEADER) {
        let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
        let (kind, flags) = (h[3], h[4]);
        let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
        if len > MAX_FRAME {
            return Err(format!("a frame of {len} bytes"));
        }
        let Some(payload) = r.buf.get(at + FRAME_HEADER..at + FRAME_HEADER + len) else { break };
        at += FRAME_HEADER + len;
        if let Some((block_stream, end_stream, mut block)) = r.block.take() {
            if kind != CONTINUATION || stream != block_stream {
                return Err("a header block without its CONTINUATION".into());
            }
            block.extend_from_slice(payload);
            if block.len() > MAX_BLOCK {
                return Err("a header block over 1 MiB".into());
            }
            if flags & END_HEADERS == 0 {
                r.block = Some((block_stream, end_stream, block));
            } else {
                out.push(headers(&mut r.decoder, stream, end_stream, &block)?);
            }
            continue;
        }
        match kind {
            DATA => {
                let data = unpad(payload, flags)?;
                out.push(Frame::Data {
                    stream,
                    end_stream: flags & END_STREAM != 0,
                    data: data.to_vec(),
                });
            }
            HEADERS | PUSH_PROMISE => {
                let mut fragment = unpad(payload, flags)?;
                let skip = match kind {
                    HEADERS if flags & PRIORITY != 0 => 5,
                    PUSH_PROMISE => 4,
                    _ => 0,
                };
                fragment = fragment.get(skip..).ok_or("a header frame too short")?;
                // A pushed request's header block only keeps the decoder in step.
                let stream = if kind == PUSH_PROMISE { 0 } else { stream };
                let end_stream = kind == HEADERS && flags & END_STREAM != 0;
                if flags & END_HEADERS == 0 {
                    r.block = Some((stream, end_stream, fragment.to_vec()));
                } else {
                    out.push(headers(&mut r.decoder, stream, end_stream, fragment)?);
                }
            }
            RST_STREAM => {
                let code =
                    payload.get(..4).map_or(0, |c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                out.push(Frame::Reset { stream, code });
            }
            CONTINUATION => return Err("a CONTINUATION without a header block".into()),
            _ => {}
        }
    }
    r.buf.drain(..at);
    Ok(())
}

fn unpad(payload: &[u8], flags: u8) -> Result<&[u8], String> {
    if flags & PADDED == 0 {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or("a padded frame without its pad length")?);
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or_else(|| "padding longer than its frame".into())
}

fn headers(
    decoder: &mut loona_hpack::Decoder<'static>,
    stream: u32,
    end_stream: bool,
    block: &[u8],
) -> Result<Frame, String> {
    let mut fields = Vec::new();
    decoder
        .decode_with_cb(block, |n, v| fields.push((n.into_owned(), v.into_owned())))
        .map_err(|e| format!("HPACK: {e:?}"))?;
    Ok(Frame::Headers { stream, end_stream, fields })
}

/// gRPC's status for a stream the server reset (as gRPC clients map it).
fn reset_status(code: u32) -> i32 {
    match code {
        0x7 => 14, // REFUSED_STREAM: UNAVAILABLE
        0x8 => 1,  // CANCEL: CANCELLED
        0xb => 8,  // ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED
        0xc => 7,  // INADEQUATE_SECURITY: PERMISSION_DENIED
        _ => 13,   // INTERNAL
    }
}

fn reset_name(code: u32) -> String {
    const NAMES: [&str; 14] = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|c| NAMES.get(c))
        .map_or_else(|| format!("error code {code}"), |n| (*n).to_owned())
}

/// gRPC's mapping of a non-200 HTTP status to a status code.
fn http_status_code(status: &str) -> i32 {
    match status {
        "400" => 13,
        "401" => 16,
        "403" => 7,
        "404" => 12,
        "429" | "502" | "503" | "504" => 14,
        _ => 2,
    }
}

/// How long a stopping connection waits for its calls to end before it is closed.
pub const DRAIN: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn frames_split_anywhere_read_the_same() {
        let mut encoder = loona_hpack::Encoder::new();
        let block = encoder.encode([(&b":path"[..], &b"/csi.v1.Identity/Probe"[..])]);
        let mut bytes = PREFACE.to_vec();
        bytes.extend(frame(0x4, 0, 0, &[]));
        // A header block over HEADERS (padded, with priority) and a CONTINUATION.
        let (a, b) = block.split_at(3);
        let mut first = vec![2u8];
        first.extend_from_slice(&[0, 0, 0, 0, 16]);
        first.extend_from_slice(a);
        first.extend_from_slice(&[0, 0]);
        bytes.extend(frame(HEADERS, PADDED | PRIORITY, 1, &first));
        bytes.extend(frame(CONTINUATION, END_HEADERS, 1, b));
        bytes.extend(frame(DATA, END_STREAM, 1, &[0, 0, 0, 0, 0]));
        for cut in 0..bytes.len() {
            let mut r = Reader::new(Dir::Client);
            let mut out = Vec::new();
            read_frames(&mut r, &bytes[..cut], &mut out).expect("reads");
            read_frames(&mut r, &bytes[cut..], &mut out).expect("reads");
            assert_eq!(out.len(), 2, "cut at {cut}");
            match &out[0] {
                Frame::Headers { stream: 1, end_stream: false, fields } => {
                    assert_eq!(fields, &[(b":path".to_vec(), b"/csi.v1.Identity/Probe".to_vec())]);
                }
                _ => panic!("cut at {cut}: not the headers"),
            }
            assert!(
                matches!(&out[1], Frame::Data { stream: 1, end_stream: true, data } if data.len() == 5)
            );
        }
    }

    #[test]
    fn any_bytes_are_frames_or_a_reason_never_a_panic() {
        // A fixed-seed generator: frames with random types, flags, lengths and payloads (header
        // blocks included), cut at random places.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut followed, mut refused) = (0, 0);
        for _ in 0..5_000 {
            let mut bytes = PREFACE.to_vec();
            for _ in 0..(next() % 6) {
                let kind = [DATA, HEADERS, RST_STREAM, PUSH_PROMISE, CONTINUATION, 0x4, 0x8]
                    [(next() % 7) as usize];
                let flags = (next() % 64) as u8;
                let len = (next() % 40) as usize;
                let payload: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                bytes.extend(frame(kind, flags, (next() % 4) as u32, &payload));
            }
            let cut = (next() as usize) % (bytes.len() + 1);
            let mut r = Reader::new(Dir::Client);
            let mut out = Vec::new();
            let read = read_frames(&mut r, &bytes[..cut], &mut out)
                .and_then(|()| read_frames(&mut r, &bytes[cut..], &mut out));
            if read.is_ok() { followed += 1 } else { refused += 1 }
        }
        assert!(followed > 100 && refused > 100, "{followed} followed, {refused} refused");
    }

    #[test]
    fn what_is_not_http2_is_refused_with_a_reason() {
        let mut r = Reader::new(Dir::Client);
        let e = read_frames(&mut r, b"GET / HTTP/1.1\r\n", &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("no HTTP/2 connection preface"));
        let mut r = Reader::new(Dir::Plugin);
        let e =
            read_frames(&mut r, &frame(CONTINUATION, END_HEADERS, 1, b"x"), &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("a CONTINUATION without a header block"));
        let mut r = Reader::new(Dir::Plugin);
        let e = read_frames(
            &mut r,
            &frame(HEADERS, END_HEADERS, 1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            &mut Vec::new(),
        )
        .err();
        assert!(e.is_some_and(|e| e.starts_with("HPACK")));
        let mut r = Reader::new(Dir::Plugin);
        let e = read_frames(&mut r, &frame(DATA, PADDED, 1, &[9, 1, 2]), &mut Vec::new()).err();
        assert_eq!(e.as_deref(), Some("padding longer than its frame"));
    }

    /// A client and a plugin talking over one tapped connection, as bytes.
    struct Talk {
        client: loona_hpack::Encoder<'static>,
        plugin: loona_hpack::Encoder<'static>,
        events: Vec<Event>,
        t0: Instant,
    }

    impl Talk {
        fn new(conn: &Arc<Conn>) -> Self {
            let mut events = vec![Event::Open(conn.clone())];
            let t0 = Instant::now();
            let mut hello = PREFACE.to_vec();
            hello.extend(frame(0x4, 0, 0, &[]));
            events.push(Event::Bytes { conn: conn.id, dir: Dir::Client, at: t0, bytes: hello });
            Self {
                client: loona_hpack::Encoder::new(),
                plugin: loona_hpack::Encoder::new(),
                events,
                t0,
            }
        }

        fn send(&mut self, dir: Dir, ms: u64, bytes: Vec<u8>) {
            let at = self.t0 + Duration::from_millis(ms);
            self.events.push(Event::Bytes { conn: 1, dir, at, bytes });
        }

        fn request(&mut self, ms: u64, stream: u32, method: &str, volume: &str) {
            let block = self.client.encode([
                (&b":path"[..], method.as_bytes()),
                (b"content-type", b"application/grpc"),
            ]);
            let mut bytes = frame(HEADERS, END_HEADERS, stream, &block);
            let m = prost::Message::encode_to_vec(&csikit::v1::DeleteVolumeRequest {
                volume_id: volume.into(),
                ..Default::default()
            });
            let mut grpc = vec![0, 0, 0, 0, u8::try_from(m.len()).expect("short")];
            grpc.extend(m);
            bytes.extend(frame(DATA, END_STREAM, stream, &grpc));
            self.send(Dir::Client, ms, bytes);
        }

        fn answer(&mut self, ms: u64, stream: u32, status: &str, message: &str) {
            let block = self.plugin.encode([(&b":status"[..], &b"200"[..])]);
            let mut bytes = frame(HEADERS, END_HEADERS, stream, &block);
            bytes.extend(frame(DATA, 0, stream, &[0, 0, 0, 0, 0]));
            let block = self.plugin.encode([
                (&b"grpc-status"[..], status.as_bytes()),
                (b"grpc-message", message.as_bytes()),
            ]);
            bytes.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &block));
            self.send(Dir::Plugin, ms, bytes);
        }
    }

    fn tap() -> Tap {
        let schema = crate::schema::Schema::builtin().expect("the built-in schema");
        Tap::new(crate::proxy::Tracker::new(Arc::new(schema)))
    }

    #[test]
    fn calls_are_put_together_timed_and_checked_for_overlap() {
        let conn = Arc::new(Conn { id: 1, ..Conn::default() });
        let mut talk = Talk::new(&conn);
        let delete = "/csi.v1.Controller/DeleteVolume";
        talk.request(1, 1, delete, "vol-a");
        talk.request(2, 3, delete, "vol-a");
        talk.request(3, 5, delete, "vol-b");
        talk.answer(4, 1, "0", "");
        talk.answer(7, 3, "10", "busy%20on%20vol-a");
        // Cancelled by the client; then the plugin's connection goes with one call open.
        talk.send(Dir::Client, 8, frame(RST_STREAM, 0, 5, &8_u32.to_be_bytes()));
        talk.request(9, 7, delete, "vol-c");
        let mut tap = tap();
        let mut done = Vec::new();
        tap.feed(std::mem::take(&mut talk.events), &mut done);
        assert_eq!(conn.open_calls.load(Ordering::Acquire), 1);
        let closed = Event::Closed {
            conn: 1,
            at: talk.t0 + Duration::from_millis(12),
            why: "the plugin closed the connection".into(),
            by_client: false,
        };
        tap.feed(vec![closed], &mut done);
        assert_eq!(conn.open_calls.load(Ordering::Acquire), 0);
        let seen: Vec<_> = done
            .iter()
            .map(|c| {
                (
                    c.id,
                    c.status,
                    c.message.as_str(),
                    c.duration.as_millis(),
                    c.concurrent_with.len(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, Some(0), "", 3, 0),
                (2, Some(10), "busy on vol-a", 5, 1),
                (3, Some(1), "the client reset the stream (CANCEL)", 5, 0),
                (4, Some(14), "the call did not end: the plugin closed the connection", 3, 0),
            ]
        );
        assert_eq!(done[1].concurrent_with, [(1, delete.to_owned())]);
        assert_eq!(done[0].method, delete);
        assert_eq!(done[0].response, [0, 0, 0, 0, 0]);
        assert!(done[3].note.is_some() && done[0].note.is_none());
        let request = crate::proxy::grpc_messages(&done[0].request);
        let decoded: csikit::v1::DeleteVolumeRequest =
            prost::Message::decode(request[0].as_slice()).expect("decodes");
        assert_eq!(decoded.volume_id, "vol-a");
    }

    #[test]
    fn a_connection_it_cannot_follow_is_dropped_from_view() {
        let conn = Arc::new(Conn { id: 1, ..Conn::default() });
        let mut talk = Talk::new(&conn);
        talk.request(1, 1, "/csi.v1.Controller/DeleteVolume", "vol-a");
        talk.send(Dir::Plugin, 2, frame(HEADERS, END_HEADERS, 1, &[0xff, 0xff, 0xff, 0xff, 0x0f]));
        talk.answer(3, 1, "0", "");
        let mut tap = tap();
        let mut done = Vec::new();
        tap.feed(std::mem::take(&mut talk.events), &mut done);
        assert!(done.is_empty());
        assert_eq!(tap.notices.len(), 1, "{:?}", tap.notices);
        assert!(
            tap.notices[0].starts_with("connection 1: cannot follow the plugin's HTTP/2 (HPACK")
        );
        assert_eq!(conn.open_calls.load(Ordering::Acquire), 0);
    }

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
        let schema = Arc::new(crate::schema::Schema::builtin().expect("the built-in schema"));
        for format in [crate::proxy::Format::Text, crate::proxy::Format::Json] {
            let out = Printed::default();
            let calls = crate::proxy::replay(schema.clone(), &data, format, Box::new(out.clone()));
            assert_eq!(calls.ok(), Some(1));
            let text =
                String::from_utf8(out.0.lock().expect("not poisoned").clone()).expect("utf-8");
            assert!(text.contains("UNAUTHENTICATED") && text.contains("pvc-1"), "{text}");
            assert!(!text.contains("hunter2"), "{text}");
        }
    }
}
