//! A driver's routes served in process on a temporary unix socket, for the suite's and the
//! explorer's `*_in_process` entry points (one home for both, below either).

use crate::client::Endpoint;

/// A driver's routes served on a temporary unix socket, until [`InProcess::stop`].
pub(crate) struct InProcess {
    _dir: tempfile::TempDir,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl InProcess {
    /// Stops the server and waits for it.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.server.await;
    }
}

/// Serves `routes` on a temporary unix socket: its endpoint, and the server.
///
/// # Errors
///
/// When the temporary socket cannot be made.
pub(crate) async fn serve(routes: tonic::service::Routes) -> anyhow::Result<(Endpoint, InProcess)> {
    let dir = tempfile::Builder::new().prefix("csi-conformance-").tempdir()?;
    let socket = dir.path().join("csi.sock");
    let listener = csikit::runtime::endpoint::bind_unix(&socket).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder().add_routes(routes).serve_with_incoming_shutdown(
            tokio_stream::wrappers::UnixListenerStream::new(listener),
            async {
                let _ = stopped.await;
            },
        ),
    );
    Ok((Endpoint::Unix(socket), InProcess { _dir: dir, stop, server }))
}
