//! A connection accepted while the plugin was down is *answered*: the proxy speaks HTTP/2 with
//! the client (hyper) and answers each call UNAVAILABLE; once the plugin is back, the calls on
//! that connection are forwarded through the same HTTP/2 session for as long as the client keeps
//! it. The connection is never asked to end: a client whose call crosses a GOAWAY on the wire
//! sees it fail (tonic and hyper do not retry it), and the proxy must not fail calls the plugin
//! would have answered. Answered calls reach the logger through the tap's queue, so every call is
//! numbered and checked for overlap in one order.
//!
//! This is also how the proxy starts before its plugin (in a pod, containers start in any order).
//! Answering beats refusing or closing the connection: a gRPC client (grpcio's C core, grpc-go)
//! whose connection is refused or closed before HTTP/2 is spoken marks its channel
//! TRANSIENT_FAILURE and dials again only after a backoff (one second, then 1.6 times longer each
//! time, up to two minutes); meanwhile its calls fail at once with an UNAVAILABLE of its own that
//! names the proxy's socket, and once the plugin is up it may wait out the rest of the backoff.
//! Answered, the channel is READY: each call gets UNAVAILABLE at once with a message naming the
//! upstream (the status gRPC gives "try again", and that COs retry), and the first call after
//! the plugin listens goes through on the same connection, with no restart and no backoff. (A
//! call that waits for readiness gets that UNAVAILABLE too: its channel is ready, the plugin is
//! not.)

use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result};
use bytes::{Buf, Bytes};
use csikit_runtime::server::authority::AuthorityFix;
use http::{HeaderMap, HeaderValue, Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{Either, Empty, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::UnixStream;

use crate::endpoint::shown;
use crate::grpc::{percent_decode, percent_encode};
use crate::queue::{Event, Queue};
use crate::stop::stopping;
use crate::tracker::CallRecord;

/// The state calls on answered (not tapped) connections share.
pub(crate) struct Shared {
    upstream: PathBuf,
    sender: tokio::sync::Mutex<Option<hyper::client::conn::http2::SendRequest<Full<Bytes>>>>,
    /// Answered calls go to the logger through the tap's queue, so every call is numbered and
    /// checked for overlap in one order.
    queue: Arc<Queue>,
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
            self.shared.queue.push(Event::Request {
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
        self.shared.queue.push(Event::Answered(Box::new(record)));
    }
}

fn read_status(h: &HeaderMap, r: &mut CallRecord) {
    if let Some(code) = h.get("grpc-status").and_then(|v| v.to_str().ok()?.parse::<i32>().ok()) {
        r.status = Some(code);
        r.message = h.get("grpc-message").map(|v| percent_decode(v.as_bytes())).unwrap_or_default();
    }
}

impl Shared {
    /// The state of the connections answered while the plugin at `upstream` is down; their
    /// calls go to `queue`.
    pub(crate) fn new(upstream: PathBuf, queue: Arc<Queue>) -> Self {
        Self { upstream, sender: tokio::sync::Mutex::new(None), queue, tokens: AtomicU64::new(0) }
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
            format!("no plugin answers at the upstream {}", shown(&self.upstream))
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

/// The plugin's response body, passed through while each data frame is copied into the call's
/// record; the call is handed to the logger when the body ends or is dropped (hyper stops
/// polling a body that says it has ended, and a client may go away mid-call).
struct Tee {
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
/// back (`back` says so once per connection), answered UNAVAILABLE if it is not.
async fn handle(
    shared: Arc<Shared>,
    back: Arc<AtomicBool>,
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
    match sender.send_request(upstream_req).await {
        Ok(resp) => {
            if !back.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "# csi-view proxy: the plugin is back: calls on the connection opened while it \
                     was down are forwarded (its next connections are tapped)"
                );
            }
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

/// A connection accepted while the plugin was down: HTTP/2 is spoken with the client and each
/// call answered (UNAVAILABLE while the plugin is down, forwarded once it is back) until the
/// client closes the connection or the proxy stops (then GOAWAY: calls in flight finish).
pub(crate) async fn answer(
    stream: UnixStream,
    shared: Arc<Shared>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let back = Arc::new(AtomicBool::new(false));
    let service = {
        let shared = shared.clone();
        hyper::service::service_fn(move |req| {
            let (shared, back) = (shared.clone(), back.clone());
            async move { Ok::<_, Infallible>(handle(shared, back, req).await) }
        })
    };
    let io = TokioIo::new(AuthorityFix::new(stream));
    let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(io, service);
    tokio::pin!(conn);
    eprintln!(
        "# csi-view proxy: the plugin at {} is not answering: calls on a new connection are \
         answered UNAVAILABLE until it is back",
        shown(&shared.upstream)
    );
    tokio::select! {
        _ = conn.as_mut() => return,
        () = stopping(stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
