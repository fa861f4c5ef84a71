//! `csi-view ui`: messages in a local web page, and a plugin called from it. The page shows each
//! message (from files, captures or pasted hex/base64) as a tree annotated with the spec
//! (presence, secret, alpha, size limits, each field's documentation and a link to its entry on
//! the docs site), lets scalars be edited in place with the spec's rules checked after each edit,
//! and saves files atomically (the original kept as `FILE.bak`). With `--endpoint` (or
//! `CSI_ENDPOINT`) it also composes a request of any unary RPC of the schema in the same tree,
//! sends it once the rules hold, and shows the annotated response or the gRPC status with the
//! spec's error-table row.
//!
//! # Design
//!
//! A small HTTP/1 server (hyper) on 127.0.0.1 at a port the kernel picks. Every route lives under
//! a random 128-bit token (`/TOKEN/...`) and the `Host` header must name 127.0.0.1 or localhost at
//! that port, so neither another local user guessing ports nor a web page rebinding a DNS name
//! reaches it. The page is one HTML document with its script and style inline: nothing is fetched
//! from the network. The server holds every message as decoded (`DynamicMessage`), requests
//! included; the page gets trees of display values, in which secrets are `<redacted>` unless the
//! page asks to show them (never for a request or a response), and sends edits as (field path,
//! text) pairs.
//!
//! Secrets follow the rest of csi-view: with the type certain (named with `--type`, or from a
//! capture's method) the type's secret fields are hidden; with the type only detected, every
//! position any type that could have produced the bytes marks secret is hidden too.
//!
//! Modules, each using only those before it: `ids` (the ids responses carried, offered for later
//! requests), `tree` (the trees the page draws), `edit` (changes by field path), `documents`
//! (files, captures, pasted messages), `call` (composing, sending through `crate::send`, the
//! answer), `routes` (HTTP and the JSON API); the page is `page.html` with its scripts `page.js`
//! and `call.js`.

mod call;
mod documents;
mod edit;
mod ids;
mod routes;
mod tree;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use hyper_util::rt::TokioIo;

use csi_view_core::input::InputFormat;
use csi_view_core::schema::Schema;

pub use documents::{Document, open};

/// What the server holds.
pub struct State {
    schema: Schema,
    token: String,
    docs_url: String,
    port: u16,
    show_secrets: Mutex<bool>,
    documents: Mutex<Vec<Document>>,
    ty: Option<String>,
    calls: call::Calls,
}

/// How to open files and where to send requests.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The type of every message file (captures name theirs).
    pub ty: Option<String>,
    /// The files' format.
    pub input_format: Option<InputFormat>,
    /// Files hold gRPC frames.
    pub grpc: bool,
    /// Where the docs site lives (links go to `URL/en/ref/<type>.html#<field>`).
    pub docs_url: String,
    /// The plugin requests go to (`unix:///csi.sock`, `tcp://host:port`); none: sending is off.
    pub endpoint: Option<String>,
    /// On connecting to the plugin and on each call; 30 s when zero.
    pub timeout: Duration,
}

/// A random 128-bit token from the operating system's generator, in lowercase hex.
fn token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow!("cannot get random bytes for the page's token: {e}"))?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

impl State {
    /// The state for `documents`, with a new token.
    ///
    /// # Errors
    ///
    /// When no token can be made.
    pub fn new(schema: Schema, documents: Vec<Document>, options: &Options) -> Result<State> {
        let timeout =
            if options.timeout.is_zero() { Duration::from_secs(30) } else { options.timeout };
        Ok(State {
            schema,
            token: token()?,
            docs_url: options.docs_url.trim_end_matches('/').to_owned(),
            port: 0,
            show_secrets: Mutex::new(false),
            documents: Mutex::new(documents),
            ty: options.ty.clone(),
            calls: call::Calls::new(options.endpoint.clone(), timeout),
        })
    }

    /// How trees are drawn with this schema and docs site.
    fn shape(&self, mode: tree::Mode) -> tree::Shape<'_> {
        tree::Shape { schema: &self.schema, docs_url: &self.docs_url, mode, ids: &[] }
    }
}

/// Serves the page until `shutdown`; `ready` gets the page's URL once listening.
///
/// # Errors
///
/// When the port cannot be bound.
pub async fn serve(
    mut state: State,
    port: u16,
    ready: impl FnOnce(&str),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    state.port = listener.local_addr()?.port();
    let url = format!("http://127.0.0.1:{}/{}/", state.port, state.token);
    let state = Arc::new(state);
    ready(&url);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(routes::handle(state, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod call_tests;
#[cfg(test)]
mod tests;
