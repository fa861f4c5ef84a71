//! The `csi-conformance` command line: `--list` prints every case with its sentence, `--audit`
//! the audit's coverage, and csi-sanity's flags are taken as they are written in a driver's CI.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_csi-conformance"))
}

#[test]
fn list_prints_every_case_with_its_sentence() {
    let out = bin().arg("--list").output().expect("runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 60, "{text}");
    // Pairs: a case's name, then its sentence, indented.
    for pair in lines.chunks(2) {
        assert!(!pair[0].starts_with(' '), "{pair:?}");
        assert!(pair[1].starts_with("    §"), "{pair:?}");
        assert!(
            ["(plugin, MUST)", "(plugin, SHOULD)", "(sender, MUST)"]
                .iter()
                .any(|b| pair[1].contains(b)),
            "{pair:?}"
        );
    }
    assert!(text.contains("Each key MUST consist of alphanumeric characters"), "{text}");
    assert!(text.contains("Invalid `starting_token` | 10 ABORTED"), "{text}");
}

#[test]
fn audit_prints_the_coverage_by_part_of_the_spec() {
    let out = bin().arg("--audit").output().expect("runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let all = text.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{text}"));
    let counts: Vec<usize> =
        all.split_whitespace().skip(1).filter_map(|n| n.parse().ok()).collect();
    assert_eq!(counts.len(), 5, "{all}");
    assert_eq!(counts[..4].iter().sum::<usize>(), counts[4], "{all}");
    assert!(text.contains("GroupController service"), "{text}");
}

#[test]
fn csi_sanity_flags_are_taken() {
    let dir = tempfile::tempdir().expect("temp dir");
    let params = dir.path().join("mutable.yaml");
    std::fs::write(&params, "iops: \"3000\"\nthroughput: 125 # MB/s\n").expect("writes");
    let secrets = dir.path().join("secrets.yaml");
    std::fs::write(&secrets, "CreateVolumeSecret:\n  user: x\n").expect("writes");
    let socket = dir.path().join("none.sock");
    let out = bin()
        .arg(format!("--csi.endpoint=unix://{}", socket.display()))
        .arg(format!("--csi.secrets={}", secrets.display()))
        .arg(format!("--csi.testvolumeparameters={}", params.display()))
        .arg(format!("--csi.testvolumemutableparameters={}", params.display()))
        .arg(format!("--csi.mountdir={}", dir.path().display()))
        .arg(format!("--csi.stagingdir={}", dir.path().display()))
        .args(["--ginkgo.focus", "identity", "--timeout", "1"])
        .output()
        .expect("runs");
    // Every flag parsed; nothing listens there, so the one line says so and the run fails.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL connect:"), "{text}");
}

#[test]
fn a_parameter_file_that_is_not_a_flat_mapping_is_refused_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let params = dir.path().join("bad.yaml");
    std::fs::write(&params, "iops: 1\nnested:\n  a: b\n").expect("writes");
    let out = bin()
        .args(["--endpoint", "unix:///nonexistent/csi.sock", "--mutable-parameters"])
        .arg(&params)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--mutable-parameters") && err.contains("line 2"), "{err}");
}
