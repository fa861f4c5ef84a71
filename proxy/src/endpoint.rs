//! Where the proxy listens and forwards to: endpoints are read by csikit-runtime's one reader
//! (`csikit_runtime::endpoint`), so `--listen` and `--upstream` take exactly the forms a plugin's
//! `CSI_ENDPOINT`, the client channel and csi-conformance take, and refuse the rest with the same
//! words. The proxy splices unix sockets only: a TCP endpoint, which the reader accepts, is then
//! refused here.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use csikit_runtime::endpoint::Endpoint;

/// Reads an endpoint as every csikit tool reads one.
///
/// # Errors
///
/// The runtime's refusal (`endpoint 'unix://rel': ...`).
pub fn read_endpoint(endpoint: &str) -> Result<Endpoint> {
    Ok(endpoint.parse::<Endpoint>()?)
}

/// The socket path of a unix endpoint.
///
/// # Errors
///
/// For a TCP endpoint: the proxy splices unix sockets only.
pub fn socket_path(endpoint: &Endpoint) -> Result<PathBuf> {
    match endpoint.unix_path() {
        Some(path) => Ok(path.to_owned()),
        None => bail!("endpoint '{endpoint}': only unix sockets are proxied (unix:///path.sock)"),
    }
}

/// A socket path as an endpoint is written (`unix:///abs/csi.sock`, `unix:rel/csi.sock`).
pub(crate) fn shown(path: &Path) -> String {
    Endpoint::Unix(path.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use csikit_runtime::endpoint::check_reader;

    /// The proxy's row of the workspace's endpoint table: `--listen` and `--upstream` read every
    /// form as the server, the channel and csi-conformance do, with the same words.
    #[test]
    fn endpoints_are_read_as_every_csikit_tool_reads_them() {
        check_reader(|s| read_endpoint(s).map_err(|e| format!("--listen: {e:#}")))
            .expect("the proxy agrees with the runtime's table");
    }

    #[test]
    fn only_unix_sockets_are_proxied() {
        let unix = |s: &str| read_endpoint(s).and_then(|e| socket_path(&e)).ok();
        assert_eq!(unix("unix:///a/b.sock"), Some(PathBuf::from("/a/b.sock")));
        assert_eq!(unix("unix:/a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(unix("unix:rel.sock"), Some(PathBuf::from("rel.sock")));
        assert_eq!(unix("/a/b.sock"), Some(PathBuf::from("/a/b.sock")));
        let tcp = read_endpoint("tcp://h:1").and_then(|e| socket_path(&e));
        let e = tcp.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "endpoint 'tcp://h:1': only unix sockets are proxied (unix:///path.sock)");
        assert_eq!(shown(Path::new("/a/b.sock")), "unix:///a/b.sock");
        assert_eq!(shown(Path::new("rel.sock")), "unix:rel.sock");
    }
}
