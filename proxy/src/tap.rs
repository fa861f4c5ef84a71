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
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

use crate::frames::{Frame, Reader, read_frames};
use crate::grpc::{http_status_code, percent_decode, reset_name, reset_status};
use crate::queue::{Batch, Conn, Dir, Event};
use crate::tracker::{CallRecord, Tracker};

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
pub(crate) struct Tap {
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
    pub(crate) fn new(tracker: Tracker) -> Self {
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

    /// Reads the events of `batch` (and empties it); the calls that ended are pushed to `done`.
    pub fn feed(&mut self, batch: &mut Batch, done: &mut Vec<CallRecord>) {
        let Batch { events, bytes } = batch;
        let mut read = 0;
        for e in events.drain(..) {
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
                Event::Bytes { conn, dir, at, len } => {
                    let chunk = bytes.get(read..read + len).unwrap_or_default();
                    read += len;
                    self.bytes(conn, dir, at, chunk, done);
                }
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
        batch.clear();
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
                    call.record.message =
                        field(b"grpc-message").map(|v| percent_decode(v)).unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::frames::tests::frame;
    use csikit_runtime::h2frame::{DATA, END_HEADERS, END_STREAM, HEADERS, PREFACE, RST_STREAM};

    /// A client and a plugin talking over one tapped connection, as bytes.
    struct Talk {
        client: loona_hpack::Encoder<'static>,
        plugin: loona_hpack::Encoder<'static>,
        events: Batch,
        t0: Instant,
    }

    impl Talk {
        fn new(conn: &Arc<Conn>) -> Self {
            let mut events = Batch::default();
            events.push(Event::Open(conn.clone()));
            let t0 = Instant::now();
            let mut hello = PREFACE.to_vec();
            hello.extend(frame(0x4, 0, 0, &[]));
            events.push_bytes(conn.id, Dir::Client, t0, &hello);
            Self {
                client: loona_hpack::Encoder::new(),
                plugin: loona_hpack::Encoder::new(),
                events,
                t0,
            }
        }

        fn send(&mut self, dir: Dir, ms: u64, bytes: Vec<u8>) {
            let at = self.t0 + Duration::from_millis(ms);
            self.events.push_bytes(1, dir, at, &bytes);
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
        let schema = csi_view_core::schema::Schema::builtin().expect("the built-in schema");
        Tap::new(Tracker::new(Arc::new(schema)))
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
        tap.feed(&mut talk.events, &mut done);
        assert_eq!(conn.open_calls.load(Ordering::Acquire), 1);
        let closed = Event::Closed {
            conn: 1,
            at: talk.t0 + Duration::from_millis(12),
            why: "the plugin closed the connection".into(),
            by_client: false,
        };
        let mut batch = Batch::default();
        batch.push(closed);
        tap.feed(&mut batch, &mut done);
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
        let request = crate::grpc::messages(&done[0].request).next().expect("a request");
        let decoded: csikit::v1::DeleteVolumeRequest =
            prost::Message::decode(request).expect("decodes");
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
        tap.feed(&mut talk.events, &mut done);
        assert!(done.is_empty());
        assert_eq!(tap.notices.len(), 1, "{:?}", tap.notices);
        assert!(
            tap.notices[0].starts_with("connection 1: cannot follow the plugin's HTTP/2 (HPACK")
        );
        assert_eq!(conn.open_calls.load(Ordering::Acquire), 0);
    }
}
