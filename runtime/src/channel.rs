//! Dialing a plugin (feature `channel`): a tonic [`Channel`] to a CSI endpoint, for the
//! generated clients (`csikit::v1::identity_client::IdentityClient::new(channel)`).
//!
//! CSI plugins listen on unix sockets, which tonic does not dial by itself; this does, and TCP
//! too. Endpoints are written as `CSI_ENDPOINT` is: `unix:///absolute/path.sock`,
//! `unix:relative.sock`, `tcp://host:port`; a bare absolute path is a unix socket. The channel
//! connects before it is returned, so a plugin that is not there is an error here, naming the
//! endpoint and the cause, not on the first call. Over a unix socket the channel sends the
//! `:authority` `localhost`, as grpc-go (kubelet, the sidecars) does.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::transport::{Channel, Endpoint, Uri};

/// Why a plugin could not be reached.
#[derive(Debug)]
pub struct ConnectError {
    endpoint: String,
    reason: String,
}

impl ConnectError {
    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot connect to {}: {}", self.endpoint, self.reason)
    }
}

impl std::error::Error for ConnectError {}

/// Where a plugin listens, as a client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Unix(PathBuf),
    Tcp(String),
}

fn parse(endpoint: &str) -> Result<Target, &'static str> {
    if let Some(rest) = endpoint.strip_prefix("unix:") {
        let path = match rest.strip_prefix("//") {
            Some(abs) if abs.starts_with('/') => abs,
            Some(_) => return Err("a unix endpoint has no host; write unix:///absolute/path.sock"),
            None => rest,
        };
        if path.is_empty() {
            return Err("the socket path is empty");
        }
        return Ok(Target::Unix(PathBuf::from(path)));
    }
    if let Some(rest) = endpoint.strip_prefix("tcp://") {
        let port = rest.rsplit_once(':').map(|(host, port)| (host, port.parse::<u16>()));
        return match port {
            Some((host, Ok(_))) if !host.is_empty() && !rest.contains('/') => {
                Ok(Target::Tcp(rest.to_owned()))
            }
            _ => Err("a tcp endpoint is tcp://host:port with a port number"),
        };
    }
    if endpoint.starts_with('/') {
        return Ok(Target::Unix(PathBuf::from(endpoint)));
    }
    Err("expected unix:///path/to/plugin.sock, tcp://host:port or an absolute socket path")
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
    let path = path.as_ref();
    let shown = if path.is_absolute() {
        format!("unix://{}", path.display())
    } else {
        format!("unix:{}", path.display())
    };
    unix(path.to_owned(), &shown, None).await
}

async fn dial(endpoint: &str, timeout: Option<Duration>) -> Result<Channel, ConnectError> {
    let target = parse(endpoint)
        .map_err(|reason| ConnectError { endpoint: endpoint.to_owned(), reason: reason.into() })?;
    match target {
        Target::Unix(path) => unix(path, endpoint, timeout).await,
        Target::Tcp(addr) => {
            let failed = |e: &dyn std::error::Error| ConnectError {
                endpoint: endpoint.to_owned(),
                reason: causes(e),
            };
            let mut e = Endpoint::from_shared(format!("http://{addr}")).map_err(|e| failed(&e))?;
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
    let mut e = Endpoint::from_static("http://localhost");
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
    .map_err(|e| ConnectError { endpoint: endpoint.to_owned(), reason: causes(&e) })
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

    #[test]
    fn endpoints_read_as_csi_endpoint_is_written() {
        let unix = |p: &str| Ok(Target::Unix(PathBuf::from(p)));
        assert_eq!(parse("unix:///run/csi/csi.sock"), unix("/run/csi/csi.sock"));
        assert_eq!(parse("unix:/run/csi.sock"), unix("/run/csi.sock"));
        assert_eq!(parse("unix:csi.sock"), unix("csi.sock"));
        assert_eq!(parse("/run/csi.sock"), unix("/run/csi.sock"));
        assert_eq!(parse("tcp://127.0.0.1:10000"), Ok(Target::Tcp("127.0.0.1:10000".into())));
        assert!(parse("unix://host/csi.sock").is_err());
        assert!(parse("unix:").is_err());
        assert!(parse("tcp://127.0.0.1").is_err());
        assert!(parse("tcp://:1").is_err());
        assert!(parse("http://x:1").is_err());
        assert!(parse("csi.sock").is_err());
    }

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
        assert!(e.to_string().contains("expected unix:///path/to/plugin.sock"), "{e}");
    }
}
