//! Interop acceptance test: the memdriver binary on a unix socket, driven by grpcio stubs that
//! Python builds from the corpus csi.proto (an independent implementation of the wire), through
//! the whole volume and snapshot lifecycle, idempotent retries, every missing REQUIRED field, the
//! error tables, overlapping calls and an unregistered service; then the captured logs must hold
//! the calls but none of the secret values sent, and SIGTERM must stop the server cleanly.

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use support::{Lifecycle, Server, grpcio_stubs, python, tail};

/// grpcio channels with every `:authority` style real clients send over a unix socket (the
/// %-encoded path by default, the raw path, localhost, host:port, spaces, non-ASCII bytes), each
/// with no other option, against memdriver on a socket whose own path has spaces and non-ASCII
/// bytes. h2 alone answers two of these styles; the skeleton must answer all.
#[test]
fn every_authority_style_from_grpcio() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(stubs) = grpcio_stubs(tmp.path()) else {
        return;
    };
    let dir = tmp.path().join("sock dir \u{fc}");
    std::fs::create_dir_all(&dir).expect("socket dir");
    let mut server = Server::start(&dir, &[("RUST_LOG", "info")]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/authority.py");
    let out =
        python().arg(&script).arg(&stubs).arg(&server.socket).output().expect("run authority.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "authority.py failed:\n{stdout}\n{}\n--- memdriver log (tail) ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        tail(&plugin_lines(&server.log_text()), 40),
    );
    assert_eq!(stdout.lines().count(), 6, "one line per style:\n{stdout}");
    eprintln!("{}", stdout.trim());
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "memdriver exit status after SIGTERM");
}

#[test]
fn lifecycle_errors_overlap_and_secrets_through_grpcio() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let Some(stubs) = grpcio_stubs(tmp.path()) else {
        return;
    };

    let life = Lifecycle::new(tmp.path(), "interop-node-1");
    let (secret_value, extra_secret) = (life.secret_value.clone(), life.extra_secret.clone());
    let require = life.require();
    let mut server = Server::start(
        tmp.path(),
        &[
            ("RUST_LOG", "trace"),
            ("MEMDRIVER_NODE_ID", life.node_id),
            ("MEMDRIVER_REQUIRE_SECRET", &require),
        ],
    );

    let started = Instant::now();
    let out = life.script(&stubs, &server.socket, tmp.path()).output().expect("run interop.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "interop.py failed:\n{stdout}\n{}\n--- memdriver log (tail, transport traces left out) ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        tail(&plugin_lines(&server.log_text()), 40),
    );
    eprintln!("{} ({:.1} s)", stdout.trim(), started.elapsed().as_secs_f64());

    // SIGTERM: drain, exit 0, socket removed.
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "memdriver exit status after SIGTERM");
    assert!(
        !server.socket.exists(),
        "the socket {} is still there after shutdown",
        server.socket.display()
    );

    // The logs: present, about these calls, and free of every secret value sent.
    let log = server.log_text();
    assert!(log.len() > 10_000, "only {} bytes of logs at RUST_LOG=trace", log.len());
    for rpc in [
        "CreateVolume",
        "NodePublishVolume",
        "ControllerPublishVolume",
        "CreateSnapshot",
        "NodeStageVolume",
    ] {
        assert!(
            log.contains(rpc),
            "the log never mentions {rpc}; a secrets check on it would prove nothing"
        );
    }
    assert!(
        log.contains(life.secret_key),
        "the log never mentions the secret's key; are requests logged at all?"
    );
    for (what, secret) in [("required secret", &secret_value), ("extra secret", &extra_secret)] {
        let hex = &secret[secret.len() - 32..];
        if let Some(at) = log.find(hex) {
            let line = log[..at].lines().count();
            panic!("the {what}'s value appears in the memdriver log at line {line}");
        }
    }
}

/// The log without the HTTP/2 and hyper traces that RUST_LOG=trace adds.
fn plugin_lines(log: &str) -> String {
    log.lines()
        .filter(|l| !l.contains(" h2::") && !l.contains(" hyper"))
        .collect::<Vec<_>>()
        .join("\n")
}
