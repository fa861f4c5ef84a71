//! Server skeleton: what every CSI plugin needs around its own RPC code.
//!
//! A driver implements the traits of a package's `server` module (`csikit::v1::server::Controller`,
//! `Node`, ...) for the RPCs it supports, marks each `impl` block with `#[csikit::csi_service]`,
//! and hands them to a [`Builder`] (`csikit::server::Builder` is the one of `csi.v1`). Every call
//! then passes through the
//! [`Pipeline`], whose layers are each on by default and each switchable through [`Layers`]:
//!
//! 1. **Unimplemented**: an RPC the driver does not define answers `UNIMPLEMENTED` (a service
//!    it does not register too); Identity and the `*GetCapabilities` RPCs it does not define
//!    are answered from what was registered.
//! 2. **Alpha policy** ([`AlphaPolicy`]): `Refuse` turns away alpha RPCs and alpha fields.
//! 3. **Request validation**: the spec's rules from `#[csi_validate]`; a violation answers
//!    `INVALID_ARGUMENT` naming every offending field path. The driver never sees the request.
//! 4. **Per-volume serialisation** ([`Serialisation`]): while a call for a volume (or, for
//!    `CreateVolume`, a volume name; for snapshots, the snapshot id or name: the key the
//!    Model's facts give each RPC) is in flight, a second one for the same object answers
//!    `ABORTED` ("operation pending") at once, as the spec's Concurrency section allows
//!    (`FailFast`, the default); or, with `Serialisation::Wait { timeout }`
//!    ([`Builder::serialisation`]), it waits its turn: calls on one object run one after another
//!    in arrival order, and one answers `ABORTED` only when it has waited `timeout`. A waiting
//!    call whose client goes away leaves the queue. Calls on other objects are never held up.
//! 5. **Response validation** (debug builds by default): a response that breaks the spec's
//!    rules becomes `INTERNAL` naming the field, so driver bugs surface in tests.
//! 6. **Tracing**: a span per call (RPC name, the volume or snapshot it concerns, and
//!    `waited_ms` when it waited its turn) and one line per call at INFO when it ends, with
//!    its outcome (`ok`, or `failed` with the code and the error's message) and the elapsed
//!    time; at DEBUG also the request (its redacting `Debug`: secret values never appear) and
//!    the response. Error messages, logged and returned, are scrubbed of the request's secret
//!    values in case a driver put one there. [`log::LogLayer`] writes these lines (and the
//!    driver's own) off the calls' threads.
//!
//! Serving follows the spec's Supervised Lifecycle Management section: [`Endpoint`] reads
//! `CSI_ENDPOINT` (the forms of [`crate::endpoint`]: `unix:///path/to/plugin.sock`, plus
//! `tcp://host:port` for development), a stale socket file left by a dead plugin is removed (a
//! live one is an error; [`crate::endpoint::bind_unix`]), and SIGTERM or SIGINT
//! ([`shutdown_signal`]) stops accepting calls, lets in-flight ones finish, removes the socket and
//! returns.

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tonic::{Request, Response, Status};

pub mod authority;
mod builder;
pub mod log;
mod serialise;

pub use builder::{
    Builder, Capability, CapabilityTable, Implication, Obligation, Plan, PluginService, PluginSpec,
    Register, Registration, Server, Stated, service,
};
pub use serialise::Serialisation;
use serialise::{Held, KeyLocks};

pub use crate::alpha::AlphaPolicy;
use crate::endpoint::{BindError, EndpointError, GivenError};
/// Where a plugin listens: the runtime's one endpoint type (see [`crate::endpoint`]).
pub use crate::endpoint::{Endpoint, Signal, shutdown_signal};
use crate::facts::PackageFacts;
use crate::validate::Validate;

/// What an RPC of a generated server trait returns: tonic's signature, named once.
pub type RpcResult<T> = Result<Response<T>, Status>;

/// The boxed future a generated adapter's tonic method returns: the signature
/// `#[tonic::async_trait]` gives tonic's server traits, named once.
pub type RpcFuture<'a, T> = Pin<Box<dyn Future<Output = RpcResult<T>> + Send + 'a>>;

/// The response stream of a server-streaming RPC.
pub type BoxStream<T> =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send + 'static>>;

/// Which layers run around each call. [`Layers::default()`] turns every one on (response
/// validation only in debug builds); [`Layers::NONE`] turns them all off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools, reason = "each flag is one independent layer")]
pub struct Layers {
    /// Validate requests with the spec's rules; violations answer `INVALID_ARGUMENT`.
    pub validate_requests: bool,
    /// Validate responses; violations answer `INTERNAL`. On by default in debug builds only.
    pub validate_responses: bool,
    /// A tracing span and events per call.
    pub tracing: bool,
    /// Serialise calls per volume or snapshot: one call per id at a time, the others refused or
    /// queued as [`Layers::serialisation`] says.
    pub serialize: bool,
    /// What a call for an id with a call in flight gets: `ABORTED` at once (the default) or a
    /// wait for its turn.
    pub serialisation: Serialisation,
    /// Which alpha RPCs and fields the plugin serves.
    pub alpha: AlphaPolicy,
}

impl Default for Layers {
    fn default() -> Self {
        Self {
            validate_requests: true,
            validate_responses: cfg!(debug_assertions),
            tracing: true,
            serialize: true,
            serialisation: Serialisation::FailFast,
            alpha: AlphaPolicy::Allow,
        }
    }
}

impl Layers {
    /// Every layer off: the driver's code runs bare (UNIMPLEMENTED defaults stay).
    pub const NONE: Layers = Layers {
        validate_requests: false,
        validate_responses: false,
        tracing: false,
        serialize: false,
        serialisation: Serialisation::FailFast,
        alpha: AlphaPolicy::Allow,
    };
}

/// Reads the id (or name) a call works on, for per-volume serialisation.
#[derive(Debug)]
pub struct Key<Req: 'static> {
    /// What the id names, shown in the `ABORTED` message and the span: `volume`, `volume name`,
    /// `snapshot`, `snapshot name`, ...
    pub kind: &'static str,
    /// Reads the id from the request.
    pub get: fn(&Req) -> &str,
}

/// What the pipeline knows about one RPC; the generated `server` modules hold one per RPC.
#[derive(Debug)]
pub struct Rpc<Req: 'static> {
    /// The RPC's name, e.g. `CreateVolume`.
    pub name: &'static str,
    /// The gRPC path, e.g. `/csi.v1.Controller/CreateVolume`.
    pub path: &'static str,
    /// The facts of the RPC's package (for the alpha policy).
    pub facts: &'static PackageFacts,
    /// The id the call is serialised on, if the request names one.
    pub key: Option<Key<Req>>,
}

/// The secret values a request carries, so error messages can be scrubbed of them.
pub trait SecretValues {
    /// Calls `found` with every non-empty secret value in the message, nested ones included.
    fn secret_values<'a>(&'a self, found: &mut dyn FnMut(&'a str));
}

/// The answer to an RPC the plugin does not implement.
pub fn unimplemented(rpc: &str) -> Status {
    Status::unimplemented(format!("{rpc} is not implemented by this plugin"))
}

/// The layers, shared by every service of one server (so serialisation spans services: a
/// `NodePublishVolume` and a `ControllerExpandVolume` on one volume are serialised too).
#[derive(Debug)]
pub struct Pipeline {
    layers: Layers,
    keys: KeyLocks,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::new(Layers::default())
    }
}

impl Pipeline {
    /// A pipeline with these layers.
    pub fn new(layers: Layers) -> Self {
        let keys = match layers.serialisation {
            Serialisation::FailFast => KeyLocks::fail_fast(),
            Serialisation::Wait { .. } => KeyLocks::default(),
        };
        Self { layers, keys }
    }

    /// The layers in force.
    pub fn layers(&self) -> Layers {
        self.layers
    }

    /// How many calls are waiting for their turn on a volume or snapshot
    /// ([`Serialisation::Wait`]), over every id.
    pub fn waiting(&self) -> usize {
        self.keys.waiting()
    }

    /// How many volume or snapshot ids have a call in flight.
    pub fn in_flight(&self) -> usize {
        self.keys.held()
    }

    /// Answers an RPC the plugin does not implement, logging it when tracing (a call too). An
    /// alpha RPC under [`AlphaPolicy::Refuse`] answers the refusal, as it does when the plugin
    /// implements it: the caller learns the policy, whatever the driver wrote.
    pub fn unimplemented<Req>(&self, rpc: &Rpc<Req>) -> Status {
        if self.layers.alpha == AlphaPolicy::Refuse
            && let Err(refusal) = self.layers.alpha.check_method(rpc.facts, rpc.path)
        {
            return refusal.into();
        }
        if self.layers.tracing {
            tracing::info!(rpc = rpc.name, "not implemented");
        }
        unimplemented(rpc.name)
    }

    /// What the call's events are written in: a span, or under a [`log::LogLayer`] the log's
    /// own call context (the same line, without the registry's span; see `log::call`).
    fn scope<Req>(&self, rpc: &Rpc<Req>, request: &Req) -> Scope {
        if !self.layers.tracing || !tracing::level_enabled!(tracing::Level::INFO) {
            return Scope::None;
        }
        let id = rpc.key.as_ref().map(|key| (key.get)(request));
        if tracing::dispatcher::get_default(tracing::Dispatch::is::<log::LogLayer>) {
            return Scope::Context(Some(log::CallContext::new(rpc.name, id)));
        }
        Scope::Span(match id {
            Some(id) => {
                tracing::info_span!("csi", rpc = rpc.name, id, waited_ms = tracing::field::Empty)
            }
            None => tracing::info_span!("csi", rpc = rpc.name),
        })
    }

    /// The start of every call: the clock (read only when there is a log to write the
    /// elapsed time to), the request event, the secrets to scrub.
    fn open<Req: SecretValues + fmt::Debug>(
        &self,
        request: &Req,
    ) -> (Option<Instant>, OwnedSecrets) {
        let logging = self.layers.tracing && tracing::level_enabled!(tracing::Level::ERROR);
        if logging {
            tracing::debug!(request = ?request, "request");
        }
        (logging.then(Instant::now), owned_secrets(request))
    }

    /// The checks before the driver runs: alpha policy, validation, serialisation. `Ok(None)`:
    /// the call is not serialised.
    async fn admit<'a, Req>(
        &'a self,
        rpc: &Rpc<Req>,
        request: &Req,
    ) -> Result<Option<Held<'a>>, Status>
    where
        Req: Validate + prost::Message + prost::Name,
    {
        if self.layers.alpha == AlphaPolicy::Refuse {
            self.layers.alpha.check_method(rpc.facts, rpc.path)?;
            self.layers.alpha.check_request(rpc.facts, request)?;
        }
        if self.layers.validate_requests {
            request.validate()?;
        }
        let Some(key) = rpc.key.as_ref().filter(|_| self.layers.serialize) else { return Ok(None) };
        let id = (key.get)(request);
        if id.is_empty() {
            return Ok(None);
        }
        let pending = || format!("an operation is pending for {} \"{id}\"", key.kind);
        match self.layers.serialisation {
            Serialisation::FailFast => match self.keys.try_acquire(key.kind, id) {
                Some(held) => Ok(Some(held)),
                None => Err(Status::aborted(pending())),
            },
            Serialisation::Wait { timeout } => {
                let tracing = self.layers.tracing;
                let on_wait = |ahead: usize| {
                    if tracing {
                        tracing::debug!(kind = key.kind, ahead, "waiting for the calls ahead");
                    }
                };
                let acquired = self.keys.acquire(key.kind, id, timeout, on_wait).await;
                let waited = match &acquired {
                    Ok((_, waited)) | Err(waited) => *waited,
                };
                if tracing && !waited.is_zero() && !log::CallContext::record_waited(millis(waited))
                {
                    tracing::Span::current().record("waited_ms", millis(waited));
                }
                match acquired {
                    Ok((held, _)) => Ok(Some(held)),
                    Err(waited) => Err(Status::aborted(format!(
                        "{}: waited {} ms for it to finish (the serialisation timeout is {} ms)",
                        pending(),
                        millis(waited),
                        millis(timeout)
                    ))),
                }
            }
        }
    }

    /// Runs a unary RPC through the layers.
    ///
    /// A plain function returning the call's future inside its span, rather than an `async fn`
    /// awaiting it: one state machine less to build and move per call.
    pub fn unary<Req, Resp, F, Fut>(
        &self,
        rpc: &'static Rpc<Req>,
        request: Request<Req>,
        handler: F,
    ) -> impl Future<Output = Result<Response<Resp>, Status>>
    where
        Req: Validate + SecretValues + prost::Message + prost::Name + fmt::Debug,
        Resp: Validate + fmt::Debug,
        F: FnOnce(Request<Req>) -> Fut,
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let scope = self.scope(rpc, request.get_ref());
        scope.run(async move {
            let (started, secrets) = self.open(request.get_ref());
            let result = match self.admit(rpc, request.get_ref()).await {
                Ok(_held) => {
                    let result = handler(request).await;
                    match result {
                        Ok(response) if self.layers.validate_responses => {
                            match response.get_ref().validate() {
                                Ok(()) => Ok(response),
                                Err(v) => Err(Status::internal(format!(
                                    "the plugin's {} response breaks the CSI spec: {v}",
                                    rpc.name
                                ))),
                            }
                        }
                        other => other,
                    }
                }
                Err(status) => Err(status),
            };
            let result = result.map_err(|status| status_without_secrets(status, &secrets));
            if self.layers.tracing {
                log_outcome(&result, started);
            }
            result
        })
    }

    /// Runs a server-streaming RPC through the layers. Serialisation covers the call that opens
    /// the stream; each streamed message is validated when response validation is on.
    pub fn server_streaming<Req, Resp, F, Fut>(
        &self,
        rpc: &'static Rpc<Req>,
        request: Request<Req>,
        handler: F,
    ) -> impl Future<Output = Result<Response<BoxStream<Resp>>, Status>>
    where
        Req: Validate + SecretValues + prost::Message + prost::Name + fmt::Debug,
        Resp: Validate + Send + 'static,
        F: FnOnce(Request<Req>) -> Fut,
        Fut: Future<Output = Result<Response<BoxStream<Resp>>, Status>>,
    {
        use tokio_stream::StreamExt as _;
        let scope = self.scope(rpc, request.get_ref());
        scope.run(async move {
            let (started, secrets) = self.open(request.get_ref());
            let result = match self.admit(rpc, request.get_ref()).await {
                Ok(_held) => handler(request).await,
                Err(status) => Err(status),
            };
            let result = result.map_err(|status| status_without_secrets(status, &secrets));
            if self.layers.tracing {
                match &result {
                    Ok(_) => tracing::info!(elapsed_us = elapsed_us(started), "stream opened"),
                    Err(status) => log_error(status, started),
                }
            }
            let name = rpc.name;
            if self.layers.validate_responses {
                result.map(|response| {
                    response.map(|stream| -> BoxStream<Resp> {
                        Box::pin(stream.map(move |item| match item {
                            Ok(message) => match message.validate() {
                                Ok(()) => Ok(message),
                                Err(v) => Err(Status::internal(format!(
                                    "the plugin's {name} response breaks the CSI spec: {v}"
                                ))),
                            },
                            Err(status) => Err(status),
                        }))
                    })
                })
            } else {
                result
            }
        })
    }
}

/// What a call's events are written in (see [`Pipeline::scope`]).
enum Scope {
    /// No log (the tracing layer is off, or nothing takes INFO).
    None,
    Span(tracing::Span),
    /// The call's context, kept by the log's thread-local while the call is polled.
    Context(Option<log::CallContext>),
}

impl Scope {
    /// `body` in the scope: the span entered, or the context made the thread's, for each poll.
    fn run<F: Future>(self, body: F) -> InScope<F> {
        InScope { body, scope: self }
    }
}

pin_project_lite::pin_project! {
    /// A call's future in its [`Scope`]: as `tracing`'s `Instrumented`, with the log's context
    /// as the other kind of scope.
    struct InScope<F> {
        #[pin]
        body: F,
        scope: Scope,
    }
}

impl<F: Future> Future for InScope<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        let this = self.project();
        match this.scope {
            Scope::None => this.body.poll(cx),
            Scope::Span(span) => {
                let _entered = span.enter();
                this.body.poll(cx)
            }
            Scope::Context(slot) => log::CallContext::enter(slot, || this.body.poll(cx)),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn elapsed_us(started: Option<Instant>) -> u64 {
    started.map_or(0, |t| u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX))
}

/// The call's line (INFO: every call is logged), and at DEBUG the response.
fn log_outcome<Resp: fmt::Debug>(
    result: &Result<Response<Resp>, Status>,
    started: Option<Instant>,
) {
    match result {
        Ok(response) => {
            tracing::info!(elapsed_us = elapsed_us(started), "ok");
            tracing::debug!(response = ?response.get_ref(), "response");
        }
        Err(status) => log_error(status, started),
    }
}

/// A failed call's line: ERROR for the codes that say the plugin is at fault, INFO for the
/// others (a CO's mistake, a missing volume, a call pending). `error` is the status message,
/// already scrubbed of the request's secrets.
fn log_error(status: &Status, started: Option<Instant>) {
    let code = status.code();
    let elapsed_us = elapsed_us(started);
    match code {
        tonic::Code::Internal | tonic::Code::Unknown | tonic::Code::DataLoss => {
            tracing::error!(elapsed_us, code = ?code, error = status.message(), "failed");
        }
        _ => tracing::info!(elapsed_us, code = ?code, error = status.message(), "failed"),
    }
}

/// The request's secret values, copied so the error path can scrub them after the request
/// moved into the driver: one buffer of length-prefixed values, so a request with secrets costs
/// one allocation however many it holds, and one without (most) none.
#[derive(Default)]
struct OwnedSecrets(Vec<u8>);

fn owned_secrets<Req: SecretValues>(request: &Req) -> OwnedSecrets {
    // Measured first, so the buffer is allocated once at its size.
    let mut size = 0;
    request.secret_values(&mut |value| size += 4 + value.len());
    if size == 0 {
        return OwnedSecrets::default();
    }
    let mut out = Vec::with_capacity(size);
    request.secret_values(&mut |value| {
        // A value over 4 GiB cannot come in a gRPC message; it is left out rather than cut.
        if let Ok(len) = u32::try_from(value.len()) {
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(value.as_bytes());
        }
    });
    OwnedSecrets(out)
}

impl OwnedSecrets {
    /// The values, for the error path.
    fn values(&self) -> Vec<&str> {
        let mut values = Vec::new();
        let mut rest = &self.0[..];
        while let Some((len, tail)) = rest.split_first_chunk::<4>() {
            let len = usize::try_from(u32::from_le_bytes(*len)).unwrap_or(usize::MAX);
            let Some((value, tail)) = tail.split_at_checked(len) else { break };
            // Copied from a `&str`, so always UTF-8.
            values.extend(std::str::from_utf8(value).ok());
            rest = tail;
        }
        values
    }
}

/// The status with every secret value in its message replaced ([`crate::redact::scrub`]'s rule).
fn status_without_secrets(status: Status, secrets: &OwnedSecrets) -> Status {
    if secrets.0.is_empty() {
        return status;
    }
    match crate::redact::scrub(status.message(), &secrets.values()) {
        std::borrow::Cow::Borrowed(_) => status,
        std::borrow::Cow::Owned(message) => Status::with_details_and_metadata(
            status.code(),
            message,
            status.details().to_vec().into(),
            status.metadata().clone(),
        ),
    }
}

/// Why a plugin could not serve.
#[derive(Debug)]
pub enum ServeError {
    /// `CSI_ENDPOINT` is not set (or is empty).
    NoEndpoint,
    /// `CSI_ENDPOINT` could not be read.
    BadEndpoint(EndpointError),
    /// Another plugin answers on the socket.
    InUse(PathBuf),
    /// The socket path holds something other than a socket; it is left alone.
    NotASocket(PathBuf),
    /// The start-up check found capabilities and RPCs that disagree (with `strict`).
    Capabilities(Vec<String>),
    /// Binding, listening or serving failed.
    Io {
        /// What was being done.
        action: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The transport failed.
    Transport(tonic::transport::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoEndpoint => fmt::Display::fmt(&GivenError::Missing { flag: None }, f),
            Self::BadEndpoint(e) => write!(f, "CSI_ENDPOINT: {e}"),
            Self::InUse(path) => {
                write!(f, "{}: another process is serving on this socket", path.display())
            }
            Self::NotASocket(path) => {
                write!(f, "{}: exists and is not a socket; not removing it", path.display())
            }
            Self::Capabilities(problems) => {
                write!(f, "capabilities and implemented RPCs disagree: {}", problems.join("; "))
            }
            Self::Io { action, source } => write!(f, "{action}: {source}"),
            Self::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Transport(e) => Some(e),
            Self::BadEndpoint(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EndpointError> for ServeError {
    fn from(e: EndpointError) -> Self {
        Self::BadEndpoint(e)
    }
}

impl From<BindError> for ServeError {
    fn from(e: BindError) -> Self {
        match e {
            BindError::InUse(path) => Self::InUse(path),
            BindError::NotASocket(path) => Self::NotASocket(path),
            BindError::Io { action, source } => Self::Io { action, source },
        }
    }
}

impl Endpoint {
    /// Reads `CSI_ENDPOINT` by the runtime's one rule for a tool's endpoint
    /// ([`crate::endpoint::required`], with no flag).
    pub fn from_env() -> Result<Self, ServeError> {
        match crate::endpoint::required(None) {
            Ok(given) => Ok(given.endpoint),
            Err(GivenError::Missing { .. }) => Err(ServeError::NoEndpoint),
            Err(GivenError::Bad { error, .. }) => Err(ServeError::BadEndpoint(error)),
        }
    }
}

/// How long in-flight calls get to finish after the shutdown signal before the plugin stops
/// anyway (Kubernetes sends SIGKILL 30 s after SIGTERM by default).
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(25);

/// Serves `routes` on `endpoint` until `shutdown` resolves, then lets in-flight calls finish
/// (for at most `drain_timeout`: a client that keeps its connection open without reading would
/// otherwise hold the plugin forever) and, for a unix socket, removes the socket file.
pub async fn serve_routes(
    routes: tonic::service::Routes,
    endpoint: &Endpoint,
    shutdown: impl Future<Output = ()>,
    drain_timeout: Duration,
) -> Result<(), ServeError> {
    if let Some(note) = endpoint.spec_note() {
        tracing::warn!(%endpoint, note, "serving on an endpoint outside the spec's form");
    }
    let server = tonic::transport::Server::builder().add_routes(routes);
    let (fired, signalled) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        let _ = fired.send(());
    };
    // Resolves `drain_timeout` after the shutdown signal; never without one.
    let deadline = async move {
        match signalled.await {
            Ok(()) => tokio::time::sleep(drain_timeout).await,
            Err(_) => std::future::pending().await,
        }
    };
    let served = match endpoint {
        Endpoint::Unix(path) => {
            let listener = crate::endpoint::bind_unix(path).await?;
            tracing::info!(%endpoint, "serving");
            // Over a unix socket the `:authority` clients send is often one h2 refuses.
            let incoming = tokio_stream::StreamExt::map(
                tokio_stream::wrappers::UnixListenerStream::new(listener),
                |accepted| accepted.map(authority::AuthorityFix::new),
            );
            let served =
                drain(server.serve_with_incoming_shutdown(incoming, shutdown), deadline).await;
            let removed = std::fs::remove_file(path);
            served?;
            removed.map_err(|source| ServeError::Io {
                action: format!("removing {}", path.display()),
                source,
            })
        }
        Endpoint::Tcp(addr) => {
            let listener =
                tokio::net::TcpListener::bind(addr.as_str()).await.map_err(|source| {
                    ServeError::Io { action: format!("binding {endpoint}"), source }
                })?;
            tracing::info!(%endpoint, "serving");
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            drain(server.serve_with_incoming_shutdown(incoming, shutdown), deadline).await
        }
    };
    if served.is_ok() {
        tracing::info!("stopped");
    }
    served
}

/// Runs the server until it stops by itself or the drain deadline passes.
async fn drain(
    serve: impl Future<Output = Result<(), tonic::transport::Error>>,
    deadline: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    tokio::select! {
        served = serve => served.map_err(ServeError::Transport),
        () = deadline => {
            tracing::warn!("calls still open at the end of the drain timeout; stopping anyway");
            Ok(())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// A request's secret values, as the generated `SecretValues` hand them over.
    struct Holder(Vec<&'static str>);

    impl SecretValues for Holder {
        fn secret_values<'a>(&'a self, found: &mut dyn FnMut(&'a str)) {
            self.0.iter().for_each(|v| found(v));
        }
    }

    #[test]
    fn owned_secrets_read_back_as_they_were_given() {
        for values in [vec![], vec!["one"], vec!["abc", "", "caf\u{e9} \u{1f511}", "abcdef"]] {
            let owned = owned_secrets(&Holder(values.clone()));
            assert_eq!(owned.values(), values);
            assert_eq!(owned.0.is_empty(), values.is_empty(), "no secrets, no allocation");
        }
    }

    #[test]
    fn a_status_keeps_its_code_and_loses_its_secrets() {
        let secrets = owned_secrets(&Holder(vec!["abc", "abcdef"]));
        let s = status_without_secrets(Status::internal("bad password abcdef and abc"), &secrets);
        assert_eq!(s.message(), "bad password <redacted> and <redacted>");
        assert_eq!(s.code(), tonic::Code::Internal);
        let untouched = status_without_secrets(Status::not_found("nothing here"), &secrets);
        assert_eq!(
            (untouched.message(), untouched.code()),
            ("nothing here", tonic::Code::NotFound)
        );
    }
}
