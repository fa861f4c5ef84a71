//! `csi-view-proxy`, the daemon behind `csi-view proxy`: a transparent gRPC proxy between a CO (kubelet, a sidecar, csc, a test) and
//! a plugin over unix sockets, printing every call as it completes.
//!
//! # Design
//!
//! A connection is *tapped*: when a client connects, the proxy connects to the plugin and copies
//! bytes both ways as they come, so every call, its metadata, status, trailers and any streaming
//! reach the other side exactly as sent, at the cost of one more hop and nothing else. Each chunk
//! is also put, once written on, in a queue. A logger thread takes the queue every
//! few milliseconds, follows each connection's HTTP/2 frames and HPACK header blocks in both
//! directions, puts each call together (method path, request, response, status, times), and
//! decodes each message with the type its method names, hides secrets, checks the spec's rules
//! on both sides, prints and records. No frame is parsed and no thread is woken on the data path.
//!
//! * The client's reads go through `csikit`'s `:authority` rewriter, so a plugin whose HTTP/2
//!   library refuses the authority a client sends over a unix socket (h2 under tonic) answers
//!   every client through the proxy, as a csikit plugin answers it directly.
//! * The proxy listens at once, whether the plugin is up or not (in a pod, containers start in
//!   any order), and reaches the plugin per connection. When the plugin goes away, its
//!   connections close, and clients see what they would see from the plugin itself
//!   (UNAVAILABLE, then they reconnect). A connection accepted while the plugin is down (or not
//!   yet up) is *answered*: the proxy speaks HTTP/2 with the client (hyper) and answers each call
//!   UNAVAILABLE, naming the upstream; once the plugin is there, that connection's calls are
//!   forwarded for as long as the client keeps it (never a GOAWAY: a call crossing one fails in
//!   tonic and hyper clients), and new connections are tapped.
//! * Calls are numbered, and checked for overlap, in the order the queue saw them, whichever way
//!   they went. Two calls in flight on one volume (or snapshot) are flagged: the spec says a CO
//!   should not issue them. The id is the RPC's serialisation key from the spec facts
//!   (`csikit::facts::MethodFacts::key`: `name` for `Create*`, else the first REQUIRED `*_id`),
//!   the one the server skeleton serialises on.
//! * A status message is scrubbed of the request's secret values before it is printed or
//!   recorded (unless `--keep-secrets`): drivers echo their input in errors.
//! * When told to stop (the binary passes SIGTERM/SIGINT) the proxy stops accepting; each
//!   connection is closed once the calls on it have ended (at most five seconds); the logger
//!   finishes and the listening socket is removed.
//!
//! # Modules
//!
//! Each depends only on those above it: `config` (options and the summary), `endpoint` (the
//! runtime's endpoint forms, unix sockets only), `grpc` (messages through view-core's reader of
//! the length prefix, status coding), `tracker` (call records, numbering, the
//! overlap check), `queue` (the data path's only cost), `stop`, `frames` (the tap's HTTP/2
//! reader), `tap` (calls put together from the queue), `splice` (tapped connections), `answer`
//! (connections accepted while the plugin is down), `print` (text and JSON), `logger` (checks,
//! scrubs the request's secrets from the status message, prints and records each call) and
//! `run` (the main loop, and `replay` for the fuzzer).

mod answer;
mod config;
mod endpoint;
mod frames;
mod grpc;
mod logger;
mod print;
mod queue;
mod run;
mod splice;
mod stop;
mod tap;
mod tracker;

pub use config::{Format, Options, Summary};
pub use csi_view_core::timestamp::rfc3339;
pub use endpoint::{read_endpoint, socket_path};
pub use run::{replay, run};
