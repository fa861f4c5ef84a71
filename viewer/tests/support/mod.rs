//! What csi-view's tests that talk to a plugin share: waiting for a socket to listen.

use std::path::Path;
use std::time::Duration;

/// Waits until something accepts connections at `path` (ten seconds at the most).
pub async fn wait_for_socket(path: &Path) {
    for _ in 0..500 {
        if tokio::net::UnixStream::connect(path).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nothing listens on {}", path.display());
}
