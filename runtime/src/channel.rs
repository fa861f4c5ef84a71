//! Dialing a plugin (feature `channel`): a tonic [`Channel`] to a CSI endpoint, for the
//! generated clients (`csikit::v1::identity_client::IdentityClient::new(channel)`).
//!
//! CSI plugins listen on unix sockets, which tonic does not dial by itself; this does, and TCP
//! too. Endpoints are read by [`crate::endpoint`], as the server skeleton reads `CSI_ENDPOINT`:
//! `unix:///absolute/path.sock`, `unix:relative.sock`, a bare absolute path, `tcp://host:port`. The channel
//! connects before it is returned, so a plugin that is not there is an error here, naming the
//! endpoint and the cause, not on the first call. Over a unix socket the channel sends the
//! `:authority` `localhost`, as grpc-go (kubelet, the sidecars) does.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::transport::{Channel, Uri};

use crate::endpoint::{Endpoint, EndpointError};

/// Why a plugin could not be reached.
#[derive(Debug)]
pub struct ConnectError {
    endpoint: String,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// The endpoint could not be read: the runtime's one message for it.
    Bad(EndpointError),
    /// Nothing answered there: the causes, `: `-joined.
    Unreachable(String),
}

impl ConnectError {
    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Why the endpoint was refused, when it could not be read at all.
    pub fn bad_endpoint(&self) -> Option<&EndpointError> {
        match &self.kind {
            Kind::Bad(e) => Some(e),
            Kind::Unreachable(_) => None,
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Bad(e) => write!(f, "{e}"),
            Kind::Unreachable(reason) => {
                write!(f, "cannot connect to {}: {reason}", self.endpoint)
            }
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.bad_endpoint().map(|e| e as _)
    }
}

/// Connects to the plugin at `endpoint` (see the module's documentation for the forms).
///
/// # Errors
///
/// When the endpoint cannot be read, or nothing answers there.
pub async fn connect(endpoint: &str) -> Result<Channel, ConnectError> {
    dial(endpoint, None).await
}

/// As [`connect`], with `timeout` on connecting and on every call made on the channel (a call
/// that takes longer fails).
///
/// # Errors
///
/// When the endpoint cannot be read, or nothing answers there within `timeout`.
pub async fn connect_with_timeout(
    endpoint: &str,
    timeout: Duration,
) -> Result<Channel, ConnectError> {
    dial(endpoint, Some(timeout)).await
}

/// Connects to the unix socket at `path`.
///
/// # Errors
///
/// When nothing answers there.
pub async fn connect_unix(path: impl AsRef<Path>) -> Result<Channel, ConnectError> {
    connect_to(&Endpoint::Unix(path.as_ref().to_owned()), None).await
}

async fn dial(endpoint: &str, timeout: Option<Duration>) -> Result<Channel, ConnectError> {
    let target = endpoint
        .parse::<Endpoint>()
        .map_err(|e| ConnectError { endpoint: endpoint.to_owned(), kind: Kind::Bad(e) })?;
    connect_to(&target, timeout).await
}

/// Connects to a parsed endpoint, with `timeout` (when given) on connecting and on every call.
///
/// # Errors
///
/// When nothing answers there (within `timeout`).
pub async fn connect_to(
    endpoint: &Endpoint,
    timeout: Option<Duration>,
) -> Result<Channel, ConnectError> {
    let shown = endpoint.to_string();
    match endpoint {
        Endpoint::Unix(path) => unix(path.clone(), &shown, timeout).await,
        Endpoint::Tcp(addr) => {
            let failed = |e: &dyn std::error::Error| ConnectError {
                endpoint: shown.clone(),
                kind: Kind::Unreachable(causes(e)),
            };
            let mut e = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
                .map_err(|e| failed(&e))?;
            if let Some(t) = timeout {
                e = e.connect_timeout(t).timeout(t);
            }
            e.connect().await.map_err(|e| failed(&e))
        }
    }
}

async fn unix(
    path: PathBuf,
    endpoint: &str,
    timeout: Option<Duration>,
) -> Result<Channel, ConnectError> {
    // The URI is only what the channel names in `:authority`; the connector ignores it.
    let mut e = tonic::transport::Endpoint::from_static("http://localhost");
    if let Some(t) = timeout {
        e = e.connect_timeout(t).timeout(t);
    }
    e.connect_with_connector(tower::service_fn(move |_: Uri| {
        let path = path.clone();
        async move {
            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(
                tokio::net::UnixStream::connect(path).await?,
            ))
        }
    }))
    .await
    .map_err(|e| ConnectError {
        endpoint: endpoint.to_owned(),
        kind: Kind::Unreachable(causes(&e)),
    })
}

/// An error and its causes, `: `-joined (tonic's own message is only "transport error").
fn causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_plugin_not_there_is_an_error_naming_the_endpoint_and_the_cause() {
        let e = connect("unix:///nonexistent-csikit/csi.sock").await.expect_err("an error");
        let text = e.to_string();
        assert!(
            text.starts_with("cannot connect to unix:///nonexistent-csikit/csi.sock: "),
            "{text}"
        );
        assert!(text.contains("No such file or directory"), "{text}");
        assert_eq!(e.endpoint(), "unix:///nonexistent-csikit/csi.sock");
        let e = connect("http://plugin:1").await.expect_err("an error");
        let bad = "http://plugin:1".parse::<Endpoint>().expect_err("refused");
        assert_eq!(e.to_string(), bad.to_string());
        assert_eq!(e.bad_endpoint(), Some(&bad));
    }
}
