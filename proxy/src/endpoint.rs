//! Where the proxy listens and forwards to: the endpoint forms it takes, and the listening socket's
//! stale-file check.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use tokio::net::UnixStream;

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

/// Removes a socket file left by a proxy or plugin that is gone; refuses a live one or a file
/// that is not a socket.
pub(crate) async fn clear_socket(path: &Path) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(socket_path("unix:///a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert_eq!(socket_path("unix:/a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert_eq!(socket_path("/a/b.sock").ok(), Some(PathBuf::from("/a/b.sock")));
        assert!(socket_path("unix://rel.sock").is_err());
        assert!(socket_path("tcp://127.0.0.1:1").is_err());
    }
}
