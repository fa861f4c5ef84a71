//! The shutdown signal every listening process waits for: the one place that installs signal
//! handlers (feature `listen`).

use std::fmt;
use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};

/// Which signal asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM: what a supervisor (kubelet, a container runtime) sends.
    Terminate,
    /// SIGINT: Ctrl-C at a terminal.
    Interrupt,
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Terminate => "SIGTERM",
            Self::Interrupt => "SIGINT",
        })
    }
}

/// SIGINT is read as a signal like SIGTERM, not through tokio's `ctrl_c`, so both come from one
/// place and the caller learns which arrived.
///
/// Installs handlers for SIGTERM and SIGINT now, and returns a future that resolves with the
/// first of them to arrive. A signal that comes after this call and before the future is polled
/// is not lost.
///
/// # Errors
///
/// When a handler cannot be installed (no tokio runtime with signals enabled, or the OS refused).
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = Signal> + Send + 'static> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => Signal::Terminate,
            _ = int.recv() => Signal::Interrupt,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_as_the_os_names_them() {
        assert_eq!(Signal::Terminate.to_string(), "SIGTERM");
        assert_eq!(Signal::Interrupt.to_string(), "SIGINT");
    }

    /// Sends `name` to this process with kill(1) (the crate has no unsafe code to call kill(2)).
    fn send(name: &str) {
        let _forking =
            super::super::FORK_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let status = std::process::Command::new("kill")
            .args([&format!("-{name}"), &std::process::id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success());
    }

    #[tokio::test]
    async fn each_signal_resolves_the_future_with_its_name() {
        // Handlers are installed before the signal is sent, so the process is not stopped.
        for (name, want) in [("TERM", Signal::Terminate), ("INT", Signal::Interrupt)] {
            let stop = shutdown_signal().expect("handlers install");
            send(name);
            let got = tokio::time::timeout(std::time::Duration::from_secs(30), stop).await;
            assert_eq!(got.ok(), Some(want), "SIG{name}");
        }
    }
}
