//! `csi-view proxy`: a transparent gRPC proxy between a CO (kubelet, a sidecar, csc, a test) and
//! a plugin over unix sockets, printing every call as it completes.
//!
//! # Design
//!
//! The proxy speaks HTTP/2 on both sides with hyper and forwards each request as it came: the
//! method path, every metadata entry, the body frames as they arrive (server streaming
//! included), then the response headers, body frames and trailers (status, details) as the plugin
//! sent them. Nothing is decoded on the way through: the request (one message in every CSI RPC)
//! is read whole and sent on in one write, the response body is *teed* (each data frame copied
//! aside) as it streams back, and when a call ends the copies go to a logger thread that splits
//! the gRPC frames, decodes each message with the type its method names, hides secrets, checks
//! the spec's rules on both sides and prints. The call's latency holds only the copies.
//!
//! * Accepted streams go through `csikit`'s `:authority` rewriter, so every client is answered
//!   whatever authority it sends over a unix socket, as a csikit plugin answers it.
//! * One HTTP/2 connection to the upstream carries every call. When it breaks (the plugin
//!   restarts), calls in flight end with UNAVAILABLE and the next call connects again; while the
//!   plugin is down, calls are answered UNAVAILABLE at once.
//! * Two calls in flight on one volume (or snapshot) are flagged: the spec says a CO should not
//!   issue them. The volume is the request's `volume_id`, `name` for `Create*`, or `snapshot_id`.
//! * A status message is scrubbed of the request's secret values before it is printed or
//!   recorded (unless `--keep-secrets`): drivers echo their input in errors.
//! * SIGTERM/SIGINT stop accepting, let the logger finish, and remove the listening socket.

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
use tokio::sync::mpsc;

use crate::capture;
use crate::mask::{SecretMask, redact_bytes};
use crate::schema::Schema;
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

/// What a call leaves behind for the logger.
#[derive(Debug, Default)]
struct CallRecord {
    id: u64,
    method: String,
    start: Option<SystemTime>,
    started: Option<Instant>,
    duration: Duration,
    request: Vec<u8>,
    response: Vec<u8>,
    status: Option<i32>,
    message: String,
    /// Set when the proxy itself ended the call (upstream unreachable or broken).
    proxy_error: Option<String>,
    /// Calls on the same volume that were in flight when this one's request was complete.
    concurrent_with: Vec<(u64, String)>,
    /// The volume the request names, while the call is in flight.
    key: Option<String>,
    finished: bool,
}

/// The state calls share.
struct Shared {
    schema: Arc<Schema>,
    upstream: PathBuf,
    sender: tokio::sync::Mutex<Option<hyper::client::conn::http2::SendRequest<Full<Bytes>>>>,
    next_id: AtomicU64,
    /// Volume key → calls in flight on it.
    in_flight: Mutex<HashMap<String, Vec<(u64, String)>>>,
    /// Per method path: the request field naming the volume.
    keys: Mutex<HashMap<String, Option<u32>>>,
    log: mpsc::UnboundedSender<CallRecord>,
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

    /// The request is complete: note the volume it names, and who else is on it.
    fn request_done(&self) {
        let (method, id, key) = {
            let r = self.lock();
            if r.finished {
                return;
            }
            (r.method.clone(), r.id, self.shared.volume_key(&r.method, &r.request))
        };
        let Some(key) = key else { return };
        let mut flight = self.shared.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let others = flight.entry(key.clone()).or_default();
        let concurrent: Vec<(u64, String)> = others.clone();
        others.push((id, method));
        drop(flight);
        let mut r = self.lock();
        r.concurrent_with = concurrent;
        r.key = Some(key);
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
        let key = r.key.take();
        let record = std::mem::take(&mut *r);
        // What is left says the call is over, so nothing registers or finishes it again.
        r.finished = true;
        drop(r);
        if let Some(key) = key {
            let mut flight = self.shared.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(list) = flight.get_mut(&key) {
                list.retain(|(id, _)| *id != record.id);
                if list.is_empty() {
                    flight.remove(&key);
                }
            }
        }
        let _ = self.shared.log.send(record);
    }
}

fn read_status(h: &HeaderMap, r: &mut CallRecord) {
    if let Some(code) = h.get("grpc-status").and_then(|v| v.to_str().ok()?.parse::<i32>().ok()) {
        r.status = Some(code);
        r.message = h.get("grpc-message").map(|v| percent_decode(v.as_bytes())).unwrap_or_default();
    }
}

/// gRPC's percent-encoding of `grpc-message`.
fn percent_decode(v: &[u8]) -> String {
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

impl Shared {
    /// The volume a request names, for the concurrency check.
    fn volume_key(&self, method: &str, request: &[u8]) -> Option<String> {
        let number = {
            let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            *keys.entry(method.to_owned()).or_insert_with(|| {
                let m = self.schema.find_method(method)?;
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

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<ProxyBody> {
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed) + 1;
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
    let (log, mut calls) = mpsc::unbounded_channel::<CallRecord>();
    let shared = Arc::new(Shared {
        schema: schema.clone(),
        upstream: options.upstream.clone(),
        sender: tokio::sync::Mutex::new(None),
        next_id: AtomicU64::new(0),
        in_flight: Mutex::new(HashMap::new()),
        keys: Mutex::new(HashMap::new()),
        log,
    });
    let logger = {
        let mut printer = Logger {
            schema,
            out,
            record,
            options: options.clone(),
            summary: Summary::default(),
            methods: HashMap::new(),
        };
        // A thread of its own: decoding and printing never hold up the calls. It takes what has
        // completed every few milliseconds rather than being woken for each call: a wake-up (a
        // futex and a context switch) per call cost more than the forwarding.
        std::thread::Builder::new().name("csi-view-logger".into()).spawn(move || {
            loop {
                match calls.try_recv() {
                    Ok(call) => printer.call(call)?,
                    Err(mpsc::error::TryRecvError::Empty) => {
                        printer.out.flush()?;
                        std::thread::sleep(LOGGER_PERIOD);
                    }
                    Err(mpsc::error::TryRecvError::Disconnected) => break,
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
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                let service = hyper::service::service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(handle(shared, req).await) }
                });
                let io = TokioIo::new(csikit::server::authority::AuthorityFix::new(stream));
                let mut stop = stop.clone();
                connections.spawn(async move {
                    let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        () = async {
                            while !*stop.borrow_and_update() {
                                if stop.changed().await.is_err() {
                                    break;
                                }
                            }
                        } => {
                            // GOAWAY: calls in flight finish, no new ones start.
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                });
            }
        }
    }
    drop(listener);
    let removed = std::fs::remove_file(&options.listen);
    // Calls in flight get a moment to finish; then the logger drains what completed.
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    drop(shared);
    let summary = tokio::task::spawn_blocking(move || logger.join())
        .await
        .map_err(|e| anyhow!("the logger stopped: {e}"))?
        .map_err(|_| anyhow!("the logger panicked"))??;
    removed.with_context(|| format!("cannot remove '{}'", options.listen.display()))?;
    Ok(summary)
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
