//! Binding a unix socket where a stale one may lie: the one place that removes a socket file
//! (feature `listen`).

use std::fmt;
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

/// Why a unix socket could not be bound.
#[derive(Debug)]
pub enum BindError {
    /// Something answers on the socket: another plugin (or proxy) is serving there.
    InUse(PathBuf),
    /// The path holds something other than a socket; it is left alone.
    NotASocket(PathBuf),
    /// Inspecting, removing or binding the path failed.
    Io {
        /// What was being done, naming the path.
        action: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InUse(path) => {
                write!(f, "'{}': another process is serving on this socket", path.display())
            }
            Self::NotASocket(path) => {
                write!(f, "'{}' exists and is not a socket; not removing it", path.display())
            }
            Self::Io { action, source } => write!(f, "{action}: {source}"),
        }
    }
}

impl std::error::Error for BindError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Listens on the unix socket at `path`. A socket file left there by a process that is gone is
/// removed first; a socket something still answers on, and a path that is not a socket, are
/// refused and left as they are.
///
/// The caller removes the file when it stops listening (`std::fs::remove_file`).
///
/// # Errors
///
/// [`BindError::InUse`], [`BindError::NotASocket`], or the IO error of inspecting, removing or
/// binding. Must run inside a tokio runtime.
pub async fn bind_unix(path: &Path) -> Result<UnixListener, BindError> {
    use std::os::unix::fs::FileTypeExt as _;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(BindError::Io {
                action: format!("inspecting '{}'", path.display()),
                source,
            });
        }
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(BindError::NotASocket(path.to_owned()));
        }
        Ok(_) => {
            if UnixStream::connect(path).await.is_ok() {
                return Err(BindError::InUse(path.to_owned()));
            }
            tracing::info!(path = %path.display(), "removing stale socket");
            std::fs::remove_file(path).map_err(|source| BindError::Io {
                action: format!("removing stale socket '{}'", path.display()),
                source,
            })?;
        }
    }
    UnixListener::bind(path)
        .map_err(|source| BindError::Io { action: format!("binding '{}'", path.display()), source })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("csikit-bind-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    #[allow(
        clippy::await_holding_lock,
        reason = "the other holder starts a process and never awaits: nothing waits on this one"
    )]
    async fn stale_sockets_are_replaced_live_ones_and_other_files_kept() {
        let dir = dir("stale");
        let sock = dir.join("csi.sock");
        // Nothing there: bound.
        let first = bind_unix(&sock).await.unwrap();
        // Live: refused, and the file stays.
        let e = bind_unix(&sock).await.unwrap_err();
        assert!(matches!(e, BindError::InUse(_)), "{e}");
        assert!(sock.exists());
        // Stale (its listener gone, its file left): replaced, and the new one answers.
        let forking =
            super::super::FORK_LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        drop(first);
        assert!(sock.exists());
        let second = bind_unix(&sock).await.unwrap();
        drop(forking);
        let (accepted, connected) = tokio::join!(second.accept(), UnixStream::connect(&sock));
        assert!(accepted.is_ok() && connected.is_ok());
        drop(second);
        // Not a socket: refused, untouched.
        let file = dir.join("data");
        std::fs::write(&file, b"keep me").unwrap();
        let e = bind_unix(&file).await.unwrap_err();
        assert!(matches!(e, BindError::NotASocket(_)), "{e}");
        assert_eq!(
            e.to_string(),
            format!("'{}' exists and is not a socket; not removing it", file.display())
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
        // A directory: refused, untouched.
        let e = bind_unix(&dir).await.unwrap_err();
        assert!(matches!(e, BindError::NotASocket(_)), "{e}");
        // A missing parent directory: the bind's own error, naming the path.
        let e = bind_unix(&dir.join("no/such/csi.sock")).await.unwrap_err();
        assert!(e.to_string().starts_with("binding '"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
