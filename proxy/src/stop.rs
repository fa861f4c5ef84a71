//! How the proxy stops: connections are told through a watch channel, and a stopping connection
//! waits [`DRAIN`] at most for its calls to end.

use std::time::Duration;

/// How long a stopping connection waits for its calls to end before it is closed.
pub(crate) const DRAIN: Duration = Duration::from_secs(5);

/// Waits until `stop` says the proxy is stopping.
pub(crate) async fn stopping(mut stop: tokio::sync::watch::Receiver<bool>) {
    while !*stop.borrow_and_update() {
        if stop.changed().await.is_err() {
            // The proxy is gone without saying so: never stop from here.
            std::future::pending::<()>().await;
        }
    }
}
