//! `csi-view proxy`: a transparent gRPC proxy between a CO (kubelet, a sidecar, csc, a test) and
//! a plugin over unix sockets, printing every call as it completes.
//!
//! # Design
//!
//! A connection is *tapped*: when a client connects, the proxy connects to the plugin and copies
//! bytes both ways as they come, so every call, its metadata, status, trailers and any streaming
//! reach the other side exactly as sent, at the cost of one more hop and nothing else. Each chunk
//! is also put, once written on, in a queue ([`crate::tap`]). A logger thread takes the queue every
//! few milliseconds, follows each connection's HTTP/2 frames and HPACK header blocks in both
//! directions, puts each call together (method path, request, response, status, times), and
//! decodes each message with the type its method names, hides secrets, checks the spec's rules
//! on both sides, prints and records. No frame is parsed and no thread is woken on the data path.
//!
//! * The client's reads go through `csikit`'s `:authority` rewriter, so a plugin whose HTTP/2
//!   library refuses the authority a client sends over a unix socket (h2 under tonic) answers
//!   every client through the proxy, as a csikit plugin answers it directly.
//! * When the plugin goes away, its connections close, and clients see what they would see from
//!   the plugin itself (UNAVAILABLE, then they reconnect). A connection accepted while the plugin
//!   is down is *answered*: the proxy speaks HTTP/2 with the client (hyper) and answers each call
//!   UNAVAILABLE; once a call reaches the plugin again it is forwarded, and the connection is asked
//!   to end (GOAWAY: calls in flight finish) so the client's next connection is tapped.
//! * Calls are numbered, and checked for overlap, in the order the queue saw them, whichever way
//!   they went. Two calls in flight on one volume (or snapshot) are flagged: the spec says a CO
//!   should not issue them. The volume is the request's `volume_id`, `name` for `Create*`, or
//!   `snapshot_id`.
//! * A status message is scrubbed of the request's secret values before it is printed or
//!   recorded (unless `--keep-secrets`): drivers echo their input in errors.
//! * SIGTERM/SIGINT stop accepting; each connection is closed once the calls on it have ended (at
//!   most five seconds); the logger finishes and the listening socket is removed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, anyhow, bail};
use bytes::{Buf, Bytes};
use http::{HeaderMap, HeaderValue, Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{Either, Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use tokio::net::{UnixListener, UnixStream};

use crate::capture;
use crate::mask::{SecretMask, redact_bytes};
use crate::schema::Schema;
use crate::tap;
use crate::text::{REDACTED, TextOptions, TextPrinter};

/// How the proxy prints calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Annotated text, a block per call.
    Text,
    /// One JSON object per call, per line.
    Json,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where COs connect.
    pub listen: PathBuf,
    /// Where the plugin listens.
    pub upstream: PathBuf,
    /// Record every call here.
    pub record: Option<PathBuf>,
    /// Keep secret values in the recording (mode 0600) and in status messages.
    pub keep_secrets: bool,
    /// Output format.
    pub format: Format,
}

/// What a run saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Calls that completed.
    pub calls: u64,
    /// Calls whose request or response broke a spec rule.
    pub broke_rules: u64,
    /// Calls flagged as concurrent with another on the same volume.
    pub concurrent: u64,
}

/// `unix:///path`, `unix:/path` or a plain path.
///
/// # Errors
///
/// For any other scheme, or a relative `unix://` path.
pub fn socket_path(endpoint: &str) -> Result<PathBuf> {
    if let Some(rest) = endpoint.strip_prefix("unix://") {
        if !rest.starts_with('/') {
            bail!("'{endpoint}': a unix endpoint is unix:///absolute/path");
        }
        return Ok(PathBuf::from(rest));
    }
    if let Some(rest) = endpoint.strip_prefix("unix:") {
        return Ok(PathBuf::from(rest));
    }
    if endpoint.contains("://") {
        bail!("'{endpoint}': only unix sockets are proxied (unix:///path)");
    }
    Ok(PathBuf::from(endpoint))
}

/// How often the logger looks for completed calls.
const LOGGER_PERIOD: Duration = Duration::from_millis(5);

/// The name of a gRPC status code (`NOT_FOUND`); `NO STATUS` for -1.
pub fn status_name(code: i32) -> String {
    usize::try_from(code).ok().and_then(|c| csikit_spec::check::GRPC_CODES.get(c)).map_or_else(
        || if code < 0 { "NO STATUS".into() } else { format!("CODE {code}") },
        |s| (*s).to_owned(),
    )
}

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
    keys: HashMap<String, Option<u32>>,
}

/// The state calls on answered (not tapped) connections share.
struct Shared {
    upstream: PathBuf,
    sender: tokio::sync::Mutex<Option<hyper::client::conn::http2::SendRequest<Full<Bytes>>>>,
    /// Answered calls go to the logger through the tap's queue, so every call is numbered and
    /// checked for overlap in one order.
    queue: Arc<tap::Queue>,
    /// Names answered calls in the queue.
    tokens: AtomicU64,
}

/// One call's copy, shared by its request and response bodies.
struct Call {
    shared: Arc<Shared>,
    record: Mutex<CallRecord>,
}

impl Call {
    fn lock(&self) -> std::sync::MutexGuard<'_, CallRecord> {
        self.record.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The request is complete: the logger notes the volume it names, and who else is on it.
    fn request_done(&self) {
        let r = self.lock();
        if !r.finished {
            self.shared.queue.push(tap::Event::Request {
                token: r.id,
                method: r.method.clone(),
                request: r.request.clone(),
            });
        }
    }

    fn trailers(&self, t: &HeaderMap) {
        let mut r = self.lock();
        read_status(t, &mut r);
    }

    /// The call is over (its response ended, failed or was dropped): hand it to the logger.
    fn finish(&self) {
        let mut r = self.lock();
        if r.finished {
            return;
        }
        r.finished = true;
        r.duration = r.started.map_or(Duration::ZERO, |s| s.elapsed());
        let record = std::mem::take(&mut *r);
        // What is left says the call is over, so nothing registers or finishes it again.
        r.finished = true;
        drop(r);
        self.shared.queue.push(tap::Event::Answered(Box::new(record)));
    }
}

fn read_status(h: &HeaderMap, r: &mut CallRecord) {
    if let Some(code) = h.get("grpc-status").and_then(|v| v.to_str().ok()?.parse::<i32>().ok()) {
        r.status = Some(code);
        r.message = h.get("grpc-message").map(|v| percent_decode(v.as_bytes())).unwrap_or_default();
    }
}

/// gRPC's percent-encoding of `grpc-message`.
pub(crate) fn percent_decode(v: &[u8]) -> String {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        if v[i] == b'%'
            && let Some(h) = v.get(i + 1..i + 3)
            && let Ok(s) = std::str::from_utf8(h)
            && let Ok(b) = u8::from_str_radix(s, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(v[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
        let number = {
            let schema = &self.schema;
            *self.keys.entry(method.to_owned()).or_insert_with(|| {
                let m = schema.find_method(method)?;
                let input = m.input();
                let create = m.name().starts_with("Create");
                let by_name = |n: &str| input.get_field_by_name(n).map(|f| f.number());
                if create {
                    by_name("name")
                } else {
                    by_name("volume_id").or_else(|| by_name("snapshot_id"))
                }
            })
        }?;
        let message = grpc_messages(request).into_iter().next()?;
        for r in crate::wire::Records::new(&message, 0, 0) {
            let r = r.ok()?;
            if r.number == number
                && let crate::wire::WireValue::Len(d) = r.value
            {
                let id = String::from_utf8_lossy(d).into_owned();
                return (!id.is_empty()).then(|| format!("{}:{id}", key_kind(method)));
            }
        }
        None
    }
}

impl Shared {
    async fn sender(&self) -> Result<hyper::client::conn::http2::SendRequest<Full<Bytes>>> {
        let mut slot = self.sender.lock().await;
        if let Some(s) = slot.as_ref()
            && !s.is_closed()
        {
            return Ok(s.clone());
        }
        *slot = None;
        let stream = UnixStream::connect(&self.upstream).await.with_context(|| {
            format!("cannot connect to the plugin at {}", self.upstream.display())
        })?;
        let (sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .context("HTTP/2 handshake with the plugin failed")?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        *slot = Some(sender.clone());
        Ok(sender)
    }
}

fn key_kind(method: &str) -> &'static str {
    if method.contains("Snapshot") && !method.contains("Volume") { "snapshot" } else { "volume" }
}

/// The plugin's response body, passed through while each data frame is copied into the call's
/// record; the call is handed to the logger when the body ends or is dropped (hyper stops
/// polling a body that says it has ended, and a client may go away mid-call).
pub struct Tee {
    inner: Incoming,
    call: Arc<Call>,
}

impl Body for Tee {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Err(e))) = &polled {
            // The plugin's stream broke mid-response (it restarted): the client gets
            // UNAVAILABLE in trailers, as from a plugin that is down, not a transport error.
            let message = format!("csi-view proxy: the plugin's stream broke: {e}");
            let mut trailers = HeaderMap::new();
            trailers.insert("grpc-status", HeaderValue::from(14));
            if let Ok(v) = HeaderValue::from_str(&percent_encode(&message)) {
                trailers.insert("grpc-message", v);
            }
            {
                let mut r = this.call.lock();
                r.status = Some(14);
                r.message.clone_from(&message);
                r.proxy_error = Some(message);
            }
            return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
        }
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    this.call.lock().response.extend_from_slice(d.chunk());
                }
                if let Some(t) = frame.trailers_ref() {
                    this.call.trailers(t);
                }
            }
            Poll::Ready(None) => this.call.finish(),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        self.call.finish();
    }
}

type ProxyBody = Either<Tee, Empty<Bytes>>;

/// A trailers-only gRPC answer the proxy gives itself.
fn status_response(code: i32, message: &str) -> Response<ProxyBody> {
    let mut r = Response::new(Either::Right(Empty::new()));
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static("application/grpc"));
    h.insert("grpc-status", HeaderValue::from(code));
    if let Ok(v) = HeaderValue::from_str(&percent_encode(message)) {
        h.insert("grpc-message", v);
    }
    r
}

/// Answers a call on a connection accepted while the plugin was down: forwarded if the plugin is
/// back (and `back` told, so the connection is asked to end and the client's next one is
/// tapped), answered UNAVAILABLE if it is not.
async fn handle(
    shared: Arc<Shared>,
    back: Arc<tokio::sync::Notify>,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    // A token until the logger numbers the call.
    let id = shared.tokens.fetch_add(1, Ordering::Relaxed) + 1;
    let method = req.uri().path().to_owned();
    let call = Arc::new(Call {
        shared: shared.clone(),
        record: Mutex::new(CallRecord {
            id,
            method: method.clone(),
            start: Some(SystemTime::now()),
            started: Some(Instant::now()),
            ..CallRecord::default()
        }),
    });
    let (mut parts, body) = req.into_parts();
    let mut uri = Uri::builder().scheme("http").authority("localhost");
    if let Some(pq) = parts.uri.path_and_query() {
        uri = uri.path_and_query(pq.clone());
    }
    match uri.build() {
        Ok(u) => parts.uri = u,
        Err(e) => return fail(&call, 13, &format!("csi-view proxy: bad request path: {e}")),
    }
    // Every CSI request is one message: it is read whole and sent on in one go (headers and
    // data in one write), which saves the plugin a wake-up per call.
    let body = match http_body_util::BodyExt::collect(body).await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return fail(&call, 1, &format!("csi-view proxy: the client's request broke: {e}"));
        }
    };
    call.lock().request.extend_from_slice(&body);
    call.request_done();
    let upstream_req = Request::from_parts(parts, Full::new(body));
    let mut sender = match shared.sender().await {
        Ok(s) => s,
        Err(e) => return fail(&call, 14, &format!("csi-view proxy: {e:#}")),
    };
    back.notify_one();
    match sender.send_request(upstream_req).await {
        Ok(resp) => {
            let (parts, body) = resp.into_parts();
            {
                let mut r = call.lock();
                read_status(&parts.headers, &mut r);
            }
            let tee = Tee { inner: body, call };
            Response::from_parts(parts, Either::Left(tee))
        }
        Err(e) => {
            // The connection is gone (the plugin restarted): the next call connects again.
            *shared.sender.lock().await = None;
            fail(&call, 14, &format!("csi-view proxy: the plugin connection broke: {e}"))
        }
    }
}

fn fail(call: &Arc<Call>, code: i32, message: &str) -> Response<ProxyBody> {
    {
        let mut r = call.lock();
        r.status = Some(code);
        r.message = message.to_owned();
        r.proxy_error = Some(message.to_owned());
    }
    call.finish();
    status_response(code, message)
}

/// Removes a socket file left by a proxy or plugin that is gone; refuses a live one or a file
/// that is not a socket.
async fn clear_socket(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if !meta.file_type().is_socket() {
        bail!("'{}' exists and is not a socket; not removing it", path.display());
    }
    if UnixStream::connect(path).await.is_ok() {
        bail!("'{}' is in use by a live server", path.display());
    }
    std::fs::remove_file(path).with_context(|| format!("cannot remove '{}'", path.display()))
}

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
    // A plugin that is not there at start is a mistake on the command line; one that goes away
    // later is a restart, which the proxy rides out.
    {
        use std::os::unix::fs::FileTypeExt;
        match std::fs::metadata(&options.upstream) {
            Ok(m) if m.file_type().is_socket() => {}
            Ok(_) => bail!("upstream '{}' is not a socket", options.upstream.display()),
            Err(e) => bail!("no plugin at upstream '{}': {e}", options.upstream.display()),
        }
    }
    if options.upstream == options.listen {
        bail!("--listen and --upstream are the same socket");
    }
    // The recording first: a failure there leaves no socket behind.
    let record = match &options.record {
        Some(p) => Some(open_record(p, &options)?),
        None => None,
    };
    clear_socket(&options.listen).await?;
    let listener = UnixListener::bind(&options.listen)
        .with_context(|| format!("cannot listen on '{}'", options.listen.display()))?;
    eprintln!(
        "# csi-view proxy: listening on unix://{}, forwarding to unix://{}",
        options.listen.display(),
        options.upstream.display()
    );
    let queue = Arc::new(tap::Queue::default());
    let shared = Arc::new(Shared {
        upstream: options.upstream.clone(),
        sender: tokio::sync::Mutex::new(None),
        queue: queue.clone(),
        tokens: AtomicU64::new(0),
    });
    let logger = {
        let mut printer = Logger {
            schema: schema.clone(),
            out,
            record,
            options: options.clone(),
            summary: Summary::default(),
            methods: HashMap::new(),
        };
        let queue = queue.clone();
        let mut tap = tap::Tap::new(Tracker::new(schema));
        // A thread of its own: following, decoding and printing never hold up the calls. It takes
        // what the pumps and the answered calls left every few milliseconds rather than being
        // woken for each: a wake-up (a futex and a context switch) per call cost more than the
        // forwarding.
        std::thread::Builder::new().name("csi-view-logger".into()).spawn(move || {
            let mut ended = Vec::new();
            loop {
                // Closed is read before the events: once the queue is closed nothing is added.
                let closed = queue.is_closed();
                let events = queue.take();
                let (n, idle) = (events.len(), events.is_empty());
                tap.feed(events, &mut ended);
                queue.done(n);
                for notice in tap.notices.drain(..) {
                    eprintln!("# csi-view proxy: {notice}");
                }
                for call in ended.drain(..) {
                    printer.call(call)?;
                }
                if idle {
                    if closed {
                        break;
                    }
                    printer.out.flush()?;
                    std::thread::sleep(LOGGER_PERIOD);
                }
            }
            printer.out.flush()?;
            if let Some(r) = printer.record.as_mut() {
                r.flush()?;
            }
            Ok::<Summary, anyhow::Error>(printer.summary)
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
                        let conn = Arc::new(tap::Conn { id: conn_ids, ..tap::Conn::default() });
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
    let _ = tokio::time::timeout(tap::DRAIN + Duration::from_secs(1), async {
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

/// Waits until `stop` says the proxy is stopping.
async fn stopping(mut stop: tokio::sync::watch::Receiver<bool>) {
    while !*stop.borrow_and_update() {
        if stop.changed().await.is_err() {
            // The proxy is gone without saying so: never stop from here.
            std::future::pending::<()>().await;
        }
    }
}

/// A tapped connection: bytes both ways as they come, each chunk also queued for the tap. When
/// the proxy stops, the connection is closed once the calls on it have ended (at most
/// [`tap::DRAIN`] later).
async fn splice(
    down: UnixStream,
    up: UnixStream,
    conn: Arc<tap::Conn>,
    queue: Arc<tap::Queue>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let id = conn.id;
    queue.push(tap::Event::Open(conn.clone()));
    let (down_read, down_write) = down.into_split();
    let (up_read, up_write) = up.into_split();
    // Over a unix socket the client's `:authority` may be one the plugin's HTTP/2 library
    // refuses; it is made acceptable on the way, as a csikit plugin does itself.
    let down_read = csikit::server::authority::AuthorityFix::new(down_read);
    let to_plugin = pump(down_read, up_write, id, tap::Dir::Client, &queue);
    let to_client = pump(up_read, down_write, id, tap::Dir::Plugin, &queue);
    tokio::pin!(to_plugin, to_client);
    // When one side is done, the other is told (its write half shut) and given a moment to
    // follow.
    let (why, by_client) = tokio::select! {
        r = &mut to_plugin => {
            let _ = tokio::time::timeout(tap::DRAIN, &mut to_client).await;
            (ended("client", r), true)
        }
        r = &mut to_client => {
            let _ = tokio::time::timeout(tap::DRAIN, &mut to_plugin).await;
            (ended("plugin", r), false)
        }
        () = drained(stop, &conn, &queue) => ("the proxy stopped".to_owned(), false),
    };
    queue.push(tap::Event::Closed { conn: id, at: Instant::now(), why, by_client });
}

fn ended(side: &str, r: std::io::Result<()>) -> String {
    match r {
        Ok(()) => format!("the {side} closed the connection"),
        Err(e) => format!("the {side}'s connection broke: {e}"),
    }
}

/// Resolves once the proxy is stopping and the tap has seen every call on `conn` end (or
/// [`tap::DRAIN`] after the stop).
async fn drained(stop: tokio::sync::watch::Receiver<bool>, conn: &tap::Conn, queue: &tap::Queue) {
    stopping(stop).await;
    let _ = tokio::time::timeout(tap::DRAIN, async {
        loop {
            let mark = queue.pushed();
            tokio::time::sleep(LOGGER_PERIOD).await;
            if queue.read_up_to(mark) && conn.open_calls.load(Ordering::Acquire) == 0 {
                break;
            }
        }
    })
    .await;
}

/// Copies `from` to `to` until `from` ends (then shuts `to`'s write side), queueing each chunk
/// after it is written on.
async fn pump(
    mut from: impl tokio::io::AsyncRead + Unpin,
    mut to: tokio::net::unix::OwnedWriteHalf,
    conn: u64,
    dir: tap::Dir,
    queue: &tap::Queue,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(());
        }
        let at = Instant::now();
        to.write_all(&buf[..n]).await?;
        queue.push(tap::Event::Bytes { conn, dir, at, bytes: buf[..n].to_vec() });
    }
}

/// A connection accepted while the plugin was down: HTTP/2 is spoken with the client and each
/// call answered (UNAVAILABLE while the plugin is down, forwarded once it is back). Once a call
/// has reached the plugin again, the connection is asked to end (GOAWAY: calls in flight
/// finish), so the client's next connection is tapped.
async fn answer(stream: UnixStream, shared: Arc<Shared>, stop: tokio::sync::watch::Receiver<bool>) {
    let back = Arc::new(tokio::sync::Notify::new());
    let service = {
        let (back, shared) = (back.clone(), shared.clone());
        hyper::service::service_fn(move |req| {
            let (shared, back) = (shared.clone(), back.clone());
            async move { Ok::<_, Infallible>(handle(shared, back, req).await) }
        })
    };
    let io = TokioIo::new(csikit::server::authority::AuthorityFix::new(stream));
    let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(io, service);
    tokio::pin!(conn);
    eprintln!(
        "# csi-view proxy: the plugin at unix://{} is not answering: calls on a new connection are \
         answered UNAVAILABLE until it is back",
        shared.upstream.display()
    );
    tokio::select! {
        _ = conn.as_mut() => return,
        () = stopping(stop) => {}
        () = back.notified() => eprintln!(
            "# csi-view proxy: the plugin is back: asking the client to reconnect (GOAWAY), so its \
             calls are tapped again"
        ),
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
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
    let conn = Arc::new(tap::Conn { id: 1, ..tap::Conn::default() });
    let at = Instant::now();
    let mut events = vec![
        tap::Event::Open(conn),
        tap::Event::Bytes { conn: 1, dir: tap::Dir::Client, at, bytes: tap::PREFACE.to_vec() },
    ];
    let mut rest = data;
    while let Some((&head, tail)) = rest.split_first() {
        let n = usize::from(head & 0x7f).min(tail.len());
        let dir = if head & 0x80 == 0 { tap::Dir::Client } else { tap::Dir::Plugin };
        events.push(tap::Event::Bytes { conn: 1, dir, at, bytes: tail[..n].to_vec() });
        rest = &tail[n..];
    }
    let why = "the client closed the connection".into();
    events.push(tap::Event::Closed { conn: 1, at, why, by_client: true });
    let mut tap = tap::Tap::new(Tracker::new(schema.clone()));
    let mut calls = Vec::new();
    tap.feed(events, &mut calls);
    let options = Options {
        listen: PathBuf::new(),
        upstream: PathBuf::new(),
        record: None,
        keep_secrets: false,
        format,
    };
    let mut logger = Logger {
        schema,
        out,
        record: None,
        options,
        summary: Summary::default(),
        methods: HashMap::new(),
    };
    for call in calls {
        logger.call(call)?;
    }
    logger.out.flush()?;
    Ok(logger.summary.calls)
}

fn open_record(path: &Path, options: &Options) -> Result<std::io::BufWriter<std::fs::File>> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    if options.keep_secrets {
        open.mode(0o600);
    }
    let file = open.open(path).with_context(|| format!("cannot write '{}'", path.display()))?;
    if options.keep_secrets {
        // An existing file keeps its mode through `open`: narrow it.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot set the mode of '{}'", path.display()))?;
    }
    let mut w = std::io::BufWriter::new(file);
    let header = capture::Header {
        csi_view_capture: capture::VERSION,
        secrets: if options.keep_secrets { "kept" } else { "blanked" }.into(),
        upstream: format!("unix://{}", options.upstream.display()),
    };
    serde_json::to_writer(&mut w, &header)?;
    w.write_all(b"\n")?;
    w.flush()?;
    Ok(w)
}

/// The payloads of the length-prefixed gRPC frames in `body` (a compressed frame is kept as
/// it came; a truncated tail is dropped).
pub fn grpc_messages(body: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(h) = body.get(at..at + 5) {
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        let Some(m) = body.get(at + 5..at + 5 + len) else { break };
        out.push(m.to_vec());
        at += 5 + len;
    }
    out
}

/// Prints and records completed calls.
struct Logger {
    schema: Arc<Schema>,
    out: Box<dyn Write + Send>,
    record: Option<std::io::BufWriter<std::fs::File>>,
    options: Options,
    summary: Summary,
    methods: HashMap<String, Option<MethodDescriptor>>,
}

/// One side of a call, decoded.
struct Side {
    desc: Option<MessageDescriptor>,
    messages: Vec<Vec<u8>>,
}

impl Logger {
    fn call(&mut self, call: CallRecord) -> Result<()> {
        let method = match self.methods.get(&call.method) {
            Some(m) => m.clone(),
            None => {
                let m = self.schema.find_method(&call.method);
                self.methods.insert(call.method.clone(), m.clone());
                m
            }
        };
        let requests = Side {
            desc: method.as_ref().map(MethodDescriptor::input),
            messages: grpc_messages(&call.request),
        };
        let responses = Side {
            desc: method.as_ref().map(MethodDescriptor::output),
            messages: grpc_messages(&call.response),
        };
        let secrets = secret_values(&self.schema, &requests);
        let status = call.status.unwrap_or(-1);
        let message = if self.options.keep_secrets {
            call.message.clone()
        } else {
            scrub(&call.message, &secrets)
        };
        let mut violations = Vec::new();
        for (side, s) in [("request", &requests), ("response", &responses)] {
            if let Some(desc) = &s.desc {
                for m in &s.messages {
                    match crate::validate::validate_bytes(&self.schema, desc, m) {
                        Some(vs) => {
                            violations.extend(vs.into_iter().map(|v| format!("{side}: {v}")));
                        }
                        None => {
                            violations.push(format!("{side}: not a valid {}", desc.full_name()))
                        }
                    }
                }
            }
        }
        self.summary.calls += 1;
        if !violations.is_empty() {
            self.summary.broke_rules += 1;
        }
        if !call.concurrent_with.is_empty() {
            self.summary.concurrent += 1;
        }
        let start = call.start.unwrap_or(UNIX_EPOCH);
        match self.options.format {
            Format::Text => {
                self.text(&call, start, status, &message, &requests, &responses, &violations)?;
            }
            Format::Json => {
                self.json(&call, start, status, &message, &requests, &responses, &violations)?;
            }
        }
        if let Some(w) = self.record.as_mut() {
            let keep = self.options.keep_secrets;
            let stored = |s: &Side| -> Vec<String> {
                s.messages
                    .iter()
                    .map(|m| match (&s.desc, keep) {
                        (Some(d), false) => {
                            let mask = SecretMask::of_types(&self.schema, m, [d]);
                            capture::encode(&redact_bytes(d, m, &mask))
                        }
                        _ => capture::encode(m),
                    })
                    .collect()
            };
            let line = capture::Call {
                call: call.id,
                method: call.method.clone(),
                start: rfc3339(start),
                start_unix_ns: start.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
                duration_ns: u64::try_from(call.duration.as_nanos()).unwrap_or(u64::MAX),
                status,
                message,
                requests: stored(&requests),
                responses: stored(&responses),
            };
            let mut bytes = serde_json::to_vec(&line)?;
            bytes.push(b'\n');
            // Whole lines only: a line is written in one call once the buffer cannot hold it.
            if w.capacity() - w.buffer().len() < bytes.len() {
                w.flush()?;
            }
            w.write_all(&bytes)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments, reason = "the parts of one printed call")]
    fn text(
        &mut self,
        call: &CallRecord,
        start: SystemTime,
        status: i32,
        message: &str,
        requests: &Side,
        responses: &Side,
        violations: &[String],
    ) -> Result<()> {
        let mut b = Vec::new();
        write!(
            b,
            "#{} {} {} {:.3} ms {}",
            call.id,
            call.method,
            rfc3339(start),
            call.duration.as_secs_f64() * 1e3,
            status_name(status)
        )?;
        if !message.is_empty() {
            write!(b, ": {message}")?;
        }
        b.push(b'\n');
        for (what, side) in [("request", requests), ("response", responses)] {
            for (i, m) in side.messages.iter().enumerate() {
                let n = if side.messages.len() > 1 { format!(" {}", i + 1) } else { String::new() };
                match &side.desc {
                    Some(desc) => {
                        writeln!(b, "  {what}{n}: {}", desc.full_name())?;
                        let mut text = Vec::new();
                        let options =
                            TextOptions { annotate: true, explain: false, show_secrets: false };
                        let printed = TextPrinter::new(&self.schema, &mut text, options, None)
                            .print(desc, m, 0);
                        match printed {
                            Ok(()) => {
                                for line in String::from_utf8_lossy(&text).lines().skip(1) {
                                    writeln!(b, "    {line}")?;
                                }
                            }
                            Err(e) => writeln!(b, "    (cannot decode: {e})")?,
                        }
                    }
                    None => writeln!(
                        b,
                        "  {what}{n}: {} bytes (method not in the schema; bytes not shown)",
                        m.len()
                    )?,
                }
            }
        }
        for v in violations {
            writeln!(b, "  violation: {v}")?;
        }
        for (other, method) in &call.concurrent_with {
            writeln!(
                b,
                "  ! concurrent: call #{other} ({method}) on the same {} was in flight; the spec says a CO should not issue it",
                key_kind(&call.method)
            )?;
        }
        if let Some(e) = &call.proxy_error {
            writeln!(b, "  (answered by the proxy: {e})")?;
        }
        if let Some(n) = &call.note {
            writeln!(b, "  (no answer on the wire: {n})")?;
        }
        self.out.write_all(&b)?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments, reason = "the parts of one printed call")]
    fn json(
        &mut self,
        call: &CallRecord,
        start: SystemTime,
        status: i32,
        message: &str,
        requests: &Side,
        responses: &Side,
        violations: &[String],
    ) -> Result<()> {
        let decode = |s: &Side| -> Vec<serde_json::Value> {
            s.messages
                .iter()
                .map(|m| {
                    let Some(desc) = &s.desc else {
                        return serde_json::json!({"bytes": m.len()});
                    };
                    match DynamicMessage::decode(desc.clone(), m.as_slice()) {
                        Ok(mut msg) => {
                            crate::redact::redact(&self.schema, &mut msg);
                            let opts = prost_reflect::SerializeOptions::new();
                            msg.serialize_with_options(serde_json::value::Serializer, &opts)
                                .unwrap_or(serde_json::Value::Null)
                        }
                        Err(e) => serde_json::json!({"error": e.to_string()}),
                    }
                })
                .collect()
        };
        let v = serde_json::json!({
            "call": call.id,
            "method": call.method,
            "start": rfc3339(start),
            "duration_us": call.duration.as_micros(),
            "status": status,
            "code": status_name(status),
            "message": message,
            "request_type": requests.desc.as_ref().map(|d| d.full_name().to_owned()),
            "requests": decode(requests),
            "response_type": responses.desc.as_ref().map(|d| d.full_name().to_owned()),
            "responses": decode(responses),
            "violations": violations,
            "concurrent_with": call.concurrent_with.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            "proxy_error": call.proxy_error,
            "note": call.note,
        });
        serde_json::to_writer(&mut self.out, &v)?;
        self.out.write_all(b"\n")?;
        Ok(())
    }
}

/// The secret string values of the requests (to scrub them from status messages).
fn secret_values(schema: &Schema, side: &Side) -> Vec<String> {
    let Some(desc) = &side.desc else { return Vec::new() };
    let mut out = Vec::new();
    for m in &side.messages {
        let mask = SecretMask::of_types(schema, m, [desc]);
        for r in mask.ranges() {
            if let Some(v) = m.get(r.clone())
                && let Ok(s) = std::str::from_utf8(v)
                && !s.is_empty()
            {
                out.push(s.to_owned());
            }
        }
    }
    // Longest first, so a value holding another is replaced whole.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `message` with every secret value replaced: values of 4 bytes or more wherever they occur,
/// shorter ones where they stand as a whole word.
fn scrub(message: &str, secrets: &[String]) -> String {
    let mut out = message.to_owned();
    for s in secrets {
        if s.len() >= 4 {
            out = out.replace(s.as_str(), REDACTED);
        } else {
            out = out
                .split_inclusive(|c: char| !c.is_alphanumeric())
                .map(|w| {
                    let word = w.trim_end_matches(|c: char| !c.is_alphanumeric());
                    if word == s { format!("{REDACTED}{}", &w[word.len()..]) } else { w.to_owned() }
                })
                .collect();
        }
    }
    out
}

/// `t` as RFC 3339 UTC with microseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days since the epoch to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        let at = |s: u64, us: u64| UNIX_EPOCH + Duration::from_micros(s * 1_000_000 + us);
        assert_eq!(rfc3339(at(0, 0)), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(at(951_782_400, 5)), "2000-02-29T00:00:00.000005Z");
        assert_eq!(rfc3339(at(1_795_421_521, 250_113)), "2026-11-23T08:12:01.250113Z");
        assert_eq!(rfc3339(at(4_102_444_799, 0)), "2099-12-31T23:59:59.000000Z");
    }

    #[test]
    fn grpc_frames_split_and_truncated_tails_dropped() {
        let body = [0, 0, 0, 0, 2, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1];
        assert_eq!(grpc_messages(&body), vec![vec![8, 1], vec![]]);
    }

    #[test]
    fn status_messages_are_scrubbed_and_percent_coded() {
        let secrets = vec!["hunter2".to_owned(), "pw".to_owned()];
        assert_eq!(
            scrub("bad password hunter2 for pw, pwd", &secrets),
            "bad password <redacted> for <redacted>, pwd"
        );
        assert_eq!(percent_decode(percent_encode("100% ✓ done\n").as_bytes()), "100% ✓ done\n");
        assert_eq!(status_name(5), "NOT_FOUND");
        assert_eq!(status_name(-1), "NO STATUS");
    }

    #[test]
    fn endpoints() {
        assert_eq!(socket_path("unix:///a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert_eq!(socket_path("unix:/a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert_eq!(socket_path("/a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert!(socket_path("unix://rel.sock").is_err());
        assert!(socket_path("tcp://127.0.0.1:1").is_err());
    }
}
