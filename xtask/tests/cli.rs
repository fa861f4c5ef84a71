//! The command contract: output on stdout only when the inputs are usable, diagnostics on
//! stderr, and exit codes 0 (ok, warnings allowed), 1 (input errors), 2 (bad command line).

use std::path::Path;
use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("run xtask")
}

#[test]
fn proto_prints_the_makefile_output() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let dir = corpus.join("csi-spec/v0.1.0");
    let out = xtask(&[
        "proto",
        "--spec",
        dir.join("spec.md").to_str().expect("utf-8"),
        "--rule",
        "makefile-v0.1",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout == std::fs::read(dir.join("csi.proto")).expect("read"), "v0.1.0 differs");
}

#[test]
fn model_prints_json_and_warns_on_stderr() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let dir = corpus.join("csi-spec/v1.12.0");
    let out = xtask(&["model", "--spec-dir", dir.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["package"], "csi.v1");
    for key in ["services", "messages", "enums", "general_errors", "size_limits"] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("spec.md:2038:"),
        "the 13 RESOURCE_EXHAUSTED row is reported with its line:\n{stderr}"
    );
}

#[test]
fn broken_input_prints_nothing_and_exits_1() {
    let dir = "spec/tests/data/diagnostics/unterminated-fence";
    let out = xtask(&["model", "--spec-dir", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("spec.md:38:1"));
    let out = xtask(&["proto", "--spec", &format!("{dir}/spec.md")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_flags_exit_2() {
    let out = xtask(&["proto", "--spec", "x.md", "--rule", "sed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown rule 'sed'"));
    let out = xtask(&["model", "--spec-dir", "spec", "--lang", "ja"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--translation"));
}

#[test]
fn diff_exit_codes_json_and_changelog() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let spec = corpus.join("csi-spec");
    let (v11, v12) = (spec.join("v1.11.0"), spec.join("v1.12.0"));
    let (v11, v12) = (v11.to_str().expect("utf-8"), v12.to_str().expect("utf-8"));
    // The same release twice: nothing to say, exit 0.
    let out = xtask(&["diff", v12, v12, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["findings"], serde_json::json!([]));
    // Two releases: findings, exit 1, the contract's keys.
    let out = xtask(&["diff", v11, v12, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!((json["old"].as_str(), json["new"].as_str()), (Some("v1.11.0"), Some("v1.12.0")));
    let findings = json["findings"].as_array().expect("findings");
    assert!(findings.iter().any(|f| f["element"] == "rpc"
        && f["change"] == "added"
        && f["path"] == "csi.v1.Controller.GetSnapshot"
        && f["severity"] == "info"
        && f["section"] == "getsnapshot"));
    let md = xtask(&["diff", v11, v12]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("## v1.11.0 → v1.12.0") && md.contains("spec.md#getsnapshot"), "{md}");
    // Bad input: exit 2, nothing on stdout.
    let out = xtask(&["diff", "/nonexistent", v12]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    // The changelog: every consecutive pair newest first, then replication.
    let out = xtask(&["changelog"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    // Newest first, from the corpus listing (a release folder dropped in needs no edit here).
    let listed = csikit_spec::corpus::Corpus::read(&corpus).expect("the corpus lists");
    let names: Vec<&str> = listed.releases.iter().map(|r| r.name.as_str()).collect();
    let [.., before, newest] = names.as_slice() else { panic!("fewer than two releases") };
    assert_eq!(heads.first().copied(), Some(format!("## {before} → {newest}").as_str()));
    assert!(heads.contains(&"## v0.3.0 → v1.0.0") && heads.contains(&"## v0.1.0 → v0.2.0"));
    assert_eq!(heads.last().copied(), Some("## replication v0.1.1 → replication main"));
    assert_eq!(heads.len(), names.len(), "one per consecutive pair, and replication: {heads:?}");
}

/// `cargo xtask new-driver` is `csikit new-driver` (the same code, in csikit-cli): the crate and
/// its deploy/ folder.
#[test]
fn new_driver_is_the_csikit_command() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xtask-new-driver");
    let _ = std::fs::remove_dir_all(&out);
    let run = xtask(&["new-driver", "same-code", "--out", out.to_str().expect("utf-8")]);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    for file in ["Cargo.toml", "src/main.rs", "deploy/kustomization.yaml", "deploy/csidriver.yaml"]
    {
        assert!(out.join(file).is_file(), "{file}");
    }
}
