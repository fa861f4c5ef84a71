//! A broken spec in a user's build script fails `cargo build` with the diagnostic's
//! `file:line:col` in cargo's output, and the build script says what it read.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("test setup")
}

/// The workspace's target directory, shared so the user crate's dependencies are built once.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

#[test]
fn a_broken_spec_fails_cargo_build_with_its_location() {
    let ws = workspace();
    let tmp = tempfile::tempdir().expect("test setup");
    let krate = tmp.path().join("broken-user");
    let spec = krate.join("spec");
    std::fs::create_dir_all(spec.join("..").join("src")).expect("test setup");
    std::fs::create_dir_all(&spec).expect("test setup");

    let readme =
        std::fs::read_to_string(ws.join("build/tests/myaddon/tests/data/myaddon/README.md"))
            .expect("test setup")
            .replacen("string address = 1;", "strng address = 1;", 1);
    let line = readme.lines().position(|l| l.contains("strng address")).expect("test setup") + 1;
    let col =
        readme.lines().nth(line - 1).expect("test setup").find("strng").expect("test setup") + 1;
    std::fs::write(spec.join("README.md"), &readme).expect("test setup");

    // The same dependency versions and profile as the workspace, so nothing is rebuilt but
    // this crate.
    std::fs::copy(ws.join("Cargo.lock"), krate.join("Cargo.lock")).expect("test setup");
    let manifest = format!(
        "[package]\nname = \"broken-user\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncsikit = {{ path = {:?}, features = [\"server\", \"client\"] }}\n\n\
         [build-dependencies]\ncsikit-build = {{ path = {:?} }}\n\n\
         [profile.dev.package.\"*\"]\nopt-level = 1\n\n[workspace]\n",
        ws.join("generated").display().to_string(),
        ws.join("build").display().to_string(),
    );
    std::fs::write(krate.join("Cargo.toml"), manifest).expect("test setup");
    std::fs::write(
        krate.join("build.rs"),
        "fn main() {\n    csikit_build::configure().compile(\"spec\").unwrap();\n}\n",
    )
    .expect("test setup");
    std::fs::write(
        krate.join("src/lib.rs"),
        "//! A user crate.\npub mod myaddon {\n    csikit::include_spec!(\"myaddon\");\n}\n",
    )
    .expect("test setup");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("test setup");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the build must fail:\n{stderr}");
    let location = format!("README.md:{line}:{col}");
    assert!(stderr.contains(&location), "'{location}' not in cargo's output:\n{stderr}");
    assert!(stderr.contains("strng"), "the rendered diagnostic quotes the line:\n{stderr}");

    // The build script named every input it read, so fixing the spec reruns it: cargo shows a
    // failed build script's stdout in its error.
    for input in ["spec", "spec/README.md"] {
        let line = format!("cargo:rerun-if-changed={input}\n");
        assert!(stderr.contains(&line), "'{line}' not in the build script's output:\n{stderr}");
    }
}
