//! `cargo xtask generate`: `generated/` is fresh, output is deterministic, and every CSI release
//! from v0.3.0 on generates into a crate that `cargo check` accepts.

use std::path::{Path, PathBuf};
use std::process::Command;

fn xtask() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{cmd:?} failed ({}):\n{text}", out.status);
    text
}

fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else {
                out.push((
                    path.strip_prefix(dir).expect("inside").to_path_buf(),
                    std::fs::read(&path).expect("readable"),
                ));
            }
        }
    }
    out.sort();
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn generated_crate_is_fresh() {
    if csikit_spec::corpus_or_skip().is_none() {
        return;
    }
    let out = xtask().args(["generate", "--check"]).output().expect("xtask runs");
    assert!(
        out.status.success(),
        "generated/ is stale; run `cargo xtask generate`:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn output_is_deterministic() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let spec = corpus.join("csi-spec/v1.12.0");
    let (a, b) = (scratch("deterministic-a"), scratch("deterministic-b"));
    for dir in [&a, &b] {
        run(xtask().arg("generate").arg("--spec-dir").arg(&spec).arg("--out").arg(dir));
    }
    let (ta, tb) = (tree(&a), tree(&b));
    assert!(ta.len() > 5, "a crate was written");
    assert!(ta == tb, "two runs gave different output");
    // --check on a fresh --out tree passes; after an edit it fails and names the command.
    run(xtask().arg("generate").arg("--spec-dir").arg(&spec).arg("--out").arg(&a).arg("--check"));
    std::fs::write(a.join("src/lib.rs"), "// edited\n").expect("write");
    let out = xtask()
        .arg("generate")
        .arg("--spec-dir")
        .arg(&spec)
        .arg("--out")
        .arg(&a)
        .arg("--check")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("run `cargo xtask generate"), "{stderr}");
}

#[test]
fn missing_inputs_say_what_to_pass() {
    let out = xtask()
        .args(["generate", "--spec-dir", "/nonexistent/csi-spec/v9.9.9", "--check"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("pass --spec-dir DIR")
            && stderr.contains("CSIKIT_CORPUS"),
        "{stderr}"
    );
}

/// Every release from v0.3.0 on generates into a standalone crate that `cargo check`s; the
/// crates share one target directory (and the workspace's lock file) so dependencies build once.
#[test]
fn every_release_generates_a_crate_that_checks() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let releases: Vec<String> = csikit_spec::corpus::Corpus::read(&corpus)
        .expect("csi-spec folder")
        .releases_from("v0.3.0")
        .map(|r| r.name.clone())
        .collect();
    assert!(releases.len() >= 14, "expected v0.3.0 and v1.0.0..v1.12.0, found {releases:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-check-target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    for release in &releases {
        let dir = scratch(&format!("release-{release}"));
        run(xtask()
            .arg("generate")
            .arg("--spec-dir")
            .arg(corpus.join("csi-spec").join(release))
            .arg("--out")
            .arg(&dir));
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
        run(Command::new(&cargo)
            .args(["check", "--offline", "--quiet", "--all-features"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS"));
        eprintln!("{release}: generated and checked");
    }
}
