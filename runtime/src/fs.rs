//! Writing a file so that no reader ever sees it half-written: the one atomic write every tool of
//! the workspace replaces a file with (`cargo xtask`, `csi-view`, `csikit-build`,
//! `csi-conformance`).

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` atomically: into a temporary file in the same directory (from the
/// `tempfile` crate, so its name cannot clash), synced to disk, given the permissions of the
/// file it replaces (if any), then renamed over `path`, and the directory synced so the rename
/// survives a crash. On any failure `path` is as it was and the temporary file is gone.
///
/// # Errors
///
/// When the directory cannot hold the temporary file or any step fails; the message names the
/// path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let context = |what: &str, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("{what} '{}': {e}", path.display()))
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".csikit-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| context("cannot create a temporary file beside", e))?;
    tmp.write_all(bytes).map_err(|e| context("cannot write the new", e))?;
    tmp.as_file().sync_all().map_err(|e| context("cannot sync the new", e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(|e| context("cannot keep the permissions of", e))?;
    }
    tmp.persist(path).map_err(|e| context("cannot replace", e.error))?;
    // The rename is durable once the directory is synced (not possible everywhere: ignored).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn writes_replaces_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        write_atomic(&path, b"one").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["a.bin"], "no temporary file left");
    }

    #[test]
    fn a_failure_names_the_path_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        // A directory cannot be replaced by a file: the rename fails after the write.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"kept").unwrap();
        let err = write_atomic(&path, b"new").unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert_eq!(std::fs::read(path.join("inside")).unwrap(), b"kept");
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["taken"], "no temporary file left");
        let missing = dir.path().join("no/such/dir/file");
        assert!(write_atomic(&missing, b"x").unwrap_err().to_string().contains("no/such/dir"));
    }
}
