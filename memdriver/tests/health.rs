//! The health RPCs through grpcio stubs Python builds from the corpus's CSI v1.13.0 `csi.proto`
//! (an independent implementation of the wire), making the calls KEP-1432's callers make: the
//! kubelet's NodeGetVolumeHealth with the volume's publish path, and the external health
//! monitor's ControllerListVolumeHealth paging and ControllerGetVolumeHealth; plus the
//! capabilities, NodeGetStorageHealth from `MEMDRIVER_STORAGE_HEALTH`, and the refusals of bad
//! health parameters (`tests/health.py`), with `MEMDRIVER_HEALTH=1`. Then a bad `MEMDRIVER_STORAGE_HEALTH` keeps memdriver
//! from starting, with a message naming it.

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{Server, grpcio_stubs_of, python, tail};

#[test]
fn the_kubelet_and_the_health_monitor_get_the_conditions_asked_for() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(stubs) = grpcio_stubs_of(tmp.path(), "v1.13.0") else {
        return;
    };
    let mut server = Server::start(
        tmp.path(),
        &[
            ("RUST_LOG", "info"),
            ("MEMDRIVER_HEALTH", "1"),
            ("MEMDRIVER_STORAGE_HEALTH", "STORAGE_UNREACHABLE:FabricDown"),
        ],
    );
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/health.py");
    let out = python()
        .arg(&script)
        .arg(&stubs)
        .arg(&server.socket)
        .arg(tmp.path().join("kubelet"))
        .output()
        .expect("run health.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "health.py failed:\n{stdout}\n{}\n--- memdriver log (tail) ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        tail(&server.log_text(), 40),
    );
    eprintln!("{}", stdout.trim());
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "memdriver exit status after SIGTERM");
}

#[test]
fn a_bad_storage_health_keeps_memdriver_from_starting() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for bad in ["STORAGE_DEGRADED", "SICK:PathDown", "STORAGE_DEGRADED:path down"] {
        let out = Command::new(env!("CARGO_BIN_EXE_memdriver"))
            .current_dir(tmp.path())
            .env("CSI_ENDPOINT", format!("unix://{}", tmp.path().join("csi.sock").display()))
            .env("MEMDRIVER_STORAGE_HEALTH", bad)
            .stdin(Stdio::null())
            .output()
            .expect("run memdriver");
        assert_eq!(out.status.code(), Some(1), "{bad}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("MEMDRIVER_STORAGE_HEALTH"), "{bad}: {stderr}");
        assert!(!tmp.path().join("csi.sock").exists(), "{bad}: a socket was made");
    }
}
