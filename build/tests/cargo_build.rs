//! User crates built with csikit-build by `cargo build`: a broken spec fails with the
//! diagnostic's `file:line:col` and the build script says what it read; a crate without the
//! features its bindings need gets one error naming them.

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

/// A user crate in a fresh folder under `tmp`: `csikit` with `features` and `csikit-build` by
/// path, `build.rs` compiling the folder `spec` (already filled by the caller), and `lib_rs`.
fn user_crate(tmp: &Path, name: &str, features: &str, build_rs: &str, lib_rs: &str) -> PathBuf {
    let ws = workspace();
    let krate = tmp.join(name);
    std::fs::create_dir_all(krate.join("src")).expect("test setup");
    // The same dependency versions and profile as the workspace, so nothing is rebuilt but
    // this crate (and csikit, for a feature set the workspace does not build).
    std::fs::copy(ws.join("Cargo.lock"), krate.join("Cargo.lock")).expect("test setup");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncsikit = {{ path = {:?}{features} }}\n\n\
         [build-dependencies]\ncsikit-build = {{ path = {:?} }}\n\n\
         [profile.dev.package.\"*\"]\nopt-level = 1\n\n[workspace]\n",
        ws.join("generated").display().to_string(),
        ws.join("build").display().to_string(),
    );
    std::fs::write(krate.join("Cargo.toml"), manifest).expect("test setup");
    std::fs::write(krate.join("build.rs"), build_rs).expect("test setup");
    std::fs::write(krate.join("src/lib.rs"), lib_rs).expect("test setup");
    krate
}

/// `cargo <args> --offline --quiet` in `krate`, with the workspace's target directory.
fn cargo(krate: &Path, args: &[&str]) -> std::process::Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args(args)
        .args(["--offline", "--quiet"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("test setup")
}

const BUILD_RS: &str =
    "fn main() {\n    csikit_build::configure().compile(\"spec\").unwrap();\n}\n";
const MYADDON_LIB: &str =
    "//! A user crate.\npub mod myaddon {\n    csikit::include_spec!(\"myaddon\");\n}\n";

#[test]
fn a_broken_spec_fails_cargo_build_with_its_location() {
    let ws = workspace();
    let tmp = tempfile::tempdir().expect("test setup");
    let krate = user_crate(
        tmp.path(),
        "broken-user",
        ", features = [\"server\", \"client\"]",
        BUILD_RS,
        MYADDON_LIB,
    );
    let spec = krate.join("spec");
    std::fs::create_dir_all(&spec).expect("test setup");

    let readme =
        std::fs::read_to_string(ws.join("build/tests/myaddon/tests/data/myaddon/README.md"))
            .expect("test setup")
            .replacen("string address = 1;", "strng address = 1;", 1);
    let line = readme.lines().position(|l| l.contains("strng address")).expect("test setup") + 1;
    let col =
        readme.lines().nth(line - 1).expect("test setup").find("strng").expect("test setup") + 1;
    std::fs::write(spec.join("README.md"), &readme).expect("test setup");

    let output = cargo(&krate, &["build"]);
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

/// The README's snippet without its `features` line: the bindings the build script generates
/// need `client` and `server`, and the build says so once, naming both and the builder options
/// that leave them out, instead of an error per item that needs tonic.
#[test]
fn a_crate_without_the_features_its_bindings_need_gets_one_error_naming_them() {
    let ws = workspace();
    let tmp = tempfile::tempdir().expect("test setup");
    let krate = user_crate(tmp.path(), "featureless-user", "", BUILD_RS, MYADDON_LIB);
    let spec = krate.join("spec");
    std::fs::create_dir_all(&spec).expect("test setup");
    for file in ["README.md", "myaddon.proto"] {
        std::fs::copy(
            ws.join("build/tests/myaddon/tests/data/myaddon").join(file),
            spec.join(file),
        )
        .expect("test setup");
    }
    let output = cargo(&krate, &["build"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the build must fail:\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 2, "one error and cargo's summary of it:\n{stderr}");
    assert!(
        errors[0].contains("need csikit's `client`, `server` features")
            && errors[0].contains("features = [\"client\", \"server\"]")
            && errors[0].contains("configure().client(false).server(false)"),
        "the error names the features and the builder options:\n{stderr}"
    );
    assert!(errors[1].contains("due to 1 previous error"), "{stderr}");
}
