//! `cargo xtask model` and `diff` over every kind of spec source: a proto-only folder, a
//! `.proto` file, a descriptor set; a full release against its own proto-only copy; a release no
//! test has seen, given as its edited `csi.proto` alone, checked against an oracle computed from
//! `protoc`'s descriptor sets; and bad sources (one located error, exit 1, nothing on stdout).
//! Proto-only copies are made in temporary folders at test time.

#[path = "../../spec/tests/descriptor_diff/mod.rs"]
mod descriptor_diff;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use descriptor_diff::{Expected, STRUCTURAL, Schema};
use serde_json::Value;

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("run xtask")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: stdout is not JSON; stderr: {}", String::from_utf8_lossy(&out.stderr))
    })
}

fn protoc_ok() -> bool {
    let ok = Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        csikit_spec::skip_missing("protoc is not installed (apt-get install protobuf-compiler)");
    }
    ok
}

/// `protoc` on `csi.proto` in `dir`: the descriptor set's bytes (imports and source info in).
fn protoc_set(dir: &Path, out: &Path) -> prost_types::FileDescriptorSet {
    use prost::Message as _;
    let status = Command::new("protoc")
        .arg(format!("--descriptor_set_out={}", out.display()))
        .args(["--include_imports", "--include_source_info"])
        .arg(format!("-I{}", dir.display()))
        .arg("-I/usr/include")
        .arg("csi.proto")
        .status()
        .expect("run protoc");
    assert!(status.success(), "protoc on '{}'", dir.display());
    prost_types::FileDescriptorSet::decode(std::fs::read(out).expect("read set").as_slice())
        .expect("decode")
}

/// A folder in `tmp` holding `text` as its `csi.proto`, alone.
fn proto_only(tmp: &Path, name: &str, text: &str) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("csi.proto"), text).expect("write csi.proto");
    dir
}

fn notices(stderr: &str) -> usize {
    stderr.matches(csikit_spec::source::NOTICE).count()
}

#[test]
fn model_reads_every_kind_of_source() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let release = corpus.join("csi-spec/v1.12.0");
    let proto = std::fs::read_to_string(release.join("csi.proto")).expect("read");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = proto_only(tmp.path(), "v1.12.0", &proto);
    let out = xtask(&["model", "--spec-dir", s(&dir)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let from_dir = json(&out);
    assert_eq!(from_dir["source"]["kind"], "proto");
    let missing = from_dir["source"]["not_available"].as_array().expect("not_available");
    assert!(missing.contains(&Value::from("errors")), "{missing:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(notices(&stderr), 1, "said once: {stderr}");

    let out = xtask(&["model", "--proto", s(&dir.join("csi.proto"))]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out), from_dir, "--proto and --spec-dir of the same proto");

    let full = json(&xtask(&["model", "--spec-dir", s(&release)]));
    assert_eq!(full["source"], serde_json::json!({"kind": "spec", "not_available": []}));
    assert_eq!(full["messages"], from_dir["messages"], "the proto states every message fact");

    if protoc_ok() {
        let set = tmp.path().join("csi.binpb");
        protoc_set(&release, &set);
        let out = xtask(&["model", "--descriptor-set", s(&set)]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let from_set = json(&out);
        assert_eq!(from_set["source"]["kind"], "descriptor_set");
        assert_eq!(from_set["messages"], from_dir["messages"]);
        assert_eq!(from_set["services"], from_dir["services"]);
    }
    // Two flags at once is a bad command line.
    let out = xtask(&["model", "--spec-dir", s(&dir), "--proto", s(&dir.join("csi.proto"))]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_release_against_its_proto_only_copy_has_nothing_but_not_comparable() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    for name in ["v1.0.0", "v1.12.0"] {
        let release = corpus.join("csi-spec").join(name);
        let text = std::fs::read_to_string(release.join("csi.proto")).expect("read");
        let copy = proto_only(tmp.path(), name, &text);
        let out = xtask(&["diff", s(&release), s(&copy), "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let report = json(&out);
        assert_eq!(report["findings"], serde_json::json!([]), "{name}");
        let nc = report["not_comparable"].as_array().expect("not_comparable");
        let errors = nc.iter().find(|n| n["what"] == "errors").expect("errors not comparable");
        assert_eq!(errors["unavailable_in"], "new");
        assert!(errors["items"].as_u64().is_some_and(|n| n > 20), "{errors}");
        assert!(nc.iter().any(|n| n["what"] == "obligations" || name == "v1.0.0"), "{nc:?}");
        // The other way round: the old side lacks them; still nothing removed or added.
        let out = xtask(&["diff", s(&copy), s(&release), "--format", "json"]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(json(&out)["not_comparable"][0]["unavailable_in"], "old");
        let md = xtask(&["diff", s(&release), s(&copy)]);
        let md = String::from_utf8_lossy(&md.stdout);
        assert!(
            md.contains("### not comparable") && md.contains("- errors: not available"),
            "{md}"
        );
    }
}

/// Carrying on the command line: a proto-only corpus release carries by default (one notice
/// with the counts), `--no-carry` reads it alone, `--carry-from` carries into a `.proto` from a
/// spec folder, and `diff --carry-from` compares that carried Model with the real one, showing
/// what the carry got wrong. A carry into a spec folder, or both flags, are refused.
#[test]
fn carried_models_on_the_command_line() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let listed = csikit_spec::corpus::Corpus::read(&corpus).expect("corpus");
    let carries = |out: &Output| {
        String::from_utf8_lossy(&out.stderr).matches(csikit_spec::carry::CARRIED).count()
    };
    if let Some(release) =
        listed.releases.iter().rev().find(|r| r.form == csikit_spec::corpus::Form::ProtoOnly)
    {
        let from = listed.carry_source(release).expect("an older release with spec.md");
        let out = xtask(&["model", "--spec-dir", s(&release.dir)]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(carries(&out), 1, "{}", String::from_utf8_lossy(&out.stderr));
        let m = json(&out);
        assert_eq!(m["source"]["carried_from"], from.name.as_str());
        let methods: Vec<&Value> = m["services"]
            .as_array()
            .expect("services")
            .iter()
            .flat_map(|s| s["methods"].as_array().expect("methods"))
            .collect();
        assert!(methods.iter().any(|x| x["carried_from"] == from.name.as_str()));
        assert!(methods.iter().any(|x| x.get("carried_from").is_none()));

        let out = xtask(&["model", "--spec-dir", s(&release.dir), "--no-carry"]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(carries(&out), 0);
        let m = json(&out);
        assert!(m["source"].get("carried_from").is_none(), "{}", m["source"]);
    }

    let (v11, v12) = (corpus.join("csi-spec/v1.11.0"), corpus.join("csi-spec/v1.12.0"));
    let proto = v12.join("csi.proto");
    let out = xtask(&["model", "--proto", s(&proto), "--carry-from", s(&v11)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(carries(&out), 1);
    assert_eq!(json(&out)["source"]["carried_from"], "v1.11.0");

    // What v1.11.0's facts got wrong about v1.12.0: GetMetadataDelta's table gained a row, and
    // two rows are reworded.
    let out = xtask(&["diff", "--carry-from", s(&v11), s(&proto), s(&v12), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let findings = report["findings"].as_array().expect("findings");
    let rows: Vec<(&str, &str)> = findings
        .iter()
        .filter(|f| {
            ["error_row", "error_text", "obligation", "section"]
                .contains(&f["element"].as_str().unwrap_or(""))
        })
        .map(|f| (f["element"].as_str().unwrap_or(""), f["path"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        rows,
        [
            ("error_text", "csi.v1.SnapshotMetadata.GetMetadataAllocated"),
            ("error_row", "csi.v1.SnapshotMetadata.GetMetadataDelta"),
            ("error_text", "csi.v1.SnapshotMetadata.GetMetadataDelta"),
        ],
        "{findings:#?}"
    );
    let errors = report["not_comparable"]
        .as_array()
        .expect("not_comparable")
        .iter()
        .find(|n| n["what"] == "errors")
        .expect("errors");
    assert_eq!(
        (&errors["unavailable_in"], &errors["carried_from"]),
        (&Value::from("old"), &Value::from("v1.11.0"))
    );

    for args in [
        vec!["model", "--spec-dir", s(&v12), "--carry-from", s(&v11)],
        vec!["model", "--proto", s(&proto), "--carry-from", s(&proto)],
    ] {
        let out = xtask(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = xtask(&["model", "--proto", s(&proto), "--carry-from", s(&v11), "--no-carry"]);
    assert_eq!(out.status.code(), Some(2));
}

/// An unseen release: v1.12.0's csi.proto with the alpha VolumeCondition, the capabilities and
/// fields that use it removed, a field and an RPC added.
const EDITS: [(&str, &str); 8] = [
    ("    VolumeCondition volume_condition = 2 [(alpha_field) = true];\n", ""),
    // NodeGetVolumeStatsResponse's, indented less (matched once the one above is gone).
    ("  VolumeCondition volume_condition = 2 [(alpha_field) = true];\n", ""),
    ("    VolumeCondition volume_condition = 2;\n", ""),
    ("      VOLUME_CONDITION = 11 [(alpha_enum_value) = true];\n", ""),
    ("      VOLUME_CONDITION = 4 [(alpha_enum_value) = true];\n", ""),
    (
        "// VolumeCondition represents the current condition of a volume.\nmessage VolumeCondition {",
        "message VolumeConditionGone {",
    ),
    (
        "  rpc GetPluginCapabilities(GetPluginCapabilitiesRequest)",
        "  rpc Ping(ProbeRequest)\n    returns (ProbeResponse) {}\n\n  rpc GetPluginCapabilities(GetPluginCapabilitiesRequest)",
    ),
    (
        "  string volume_id = 1;\n}\n\nmessage ControllerGetVolumeResponse {",
        "  string volume_id = 1;\n\n  // This field is OPTIONAL.\n  string hint = 2;\n}\n\nmessage ControllerGetVolumeResponse {",
    ),
];

/// The unseen release as the folder `into/v1.13.0` holding its edited `csi.proto` alone.
fn unseen_release(corpus: &Path, into: &Path) -> PathBuf {
    let release = corpus.join("csi-spec/v1.12.0");
    let mut text = std::fs::read_to_string(release.join("csi.proto")).expect("read");
    for (from, to) in EDITS {
        assert_eq!(text.matches(from).count(), 1, "'{from}' is not in v1.12.0's csi.proto once");
        text = text.replacen(from, to, 1);
    }
    // Nothing else names the removed message: drop the renamed leftover so it is removed.
    let start = text.find("message VolumeConditionGone {").expect("renamed");
    let end = start + text[start..].find("\n}\n").expect("its end") + 3;
    text.replace_range(start..end, "");
    proto_only(into, "v1.13.0", &text)
}

#[test]
fn an_unseen_release_given_as_its_proto_alone() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let release = corpus.join("csi-spec/v1.12.0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let unseen = unseen_release(&corpus, tmp.path());

    let out = xtask(&["model", "--spec-dir", s(&unseen)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let m = json(&out);
    assert!(
        m["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .all(|x| x["full_name"] != "csi.v1.VolumeCondition")
    );

    let out = xtask(&["diff", s(&release), s(&unseen), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "findings: {}", String::from_utf8_lossy(&out.stderr));
    let report = json(&out);
    let findings = report["findings"].as_array().expect("findings");
    let of = |element: &str, path: &str| -> Vec<&Value> {
        findings.iter().filter(|f| f["element"] == element && f["path"] == path).collect()
    };
    let removed = of("message", "csi.v1.VolumeCondition");
    assert_eq!(removed.len(), 1, "{findings:#?}");
    assert_eq!(removed[0]["severity"], "alpha-breaking");
    for value in [
        "csi.v1.ControllerServiceCapability.RPC.Type.VOLUME_CONDITION",
        "csi.v1.NodeServiceCapability.RPC.Type.VOLUME_CONDITION",
    ] {
        let v = of("enum_value", value);
        assert_eq!((v.len(), &v[0]["severity"]), (1, &Value::from("alpha-breaking")), "{value}");
    }
    for field in [
        "csi.v1.ListVolumesResponse.VolumeStatus.volume_condition",
        "csi.v1.ControllerGetVolumeResponse.VolumeStatus.volume_condition",
        "csi.v1.NodeGetVolumeStatsResponse.volume_condition",
    ] {
        let f = of("field", field);
        assert_eq!((f.len(), &f[0]["severity"]), (1, &Value::from("alpha-breaking")), "{field}");
    }
    assert!(
        findings
            .iter()
            .all(|f| f["severity"] != "wire-breaking" && f["severity"] != "source-breaking"),
        "{findings:#?}"
    );
    assert_eq!(of("rpc", "csi.v1.Identity.Ping")[0]["change"], "added");
    assert_eq!(of("field", "csi.v1.ControllerGetVolumeRequest.hint")[0]["severity"], "info");
    let md =
        String::from_utf8_lossy(&xtask(&["diff", s(&release), s(&unseen)]).stdout).into_owned();
    assert!(md.contains("### alpha-breaking ("), "{md}");

    // The structural findings are exactly what protoc's descriptors say changed.
    if !protoc_ok() {
        return;
    }
    let old = Schema::read(&protoc_set(&release, &tmp.path().join("old.pb")), "csi.proto");
    let new = Schema::read(&protoc_set(&unseen, &tmp.path().join("new.pb")), "csi.proto");
    let want = descriptor_diff::expected(&old, &new);
    let got: std::collections::BTreeSet<Expected> = findings
        .iter()
        .filter(|f| STRUCTURAL.iter().any(|e| f["element"] == *e))
        .map(|f| Expected {
            change: leak(&f["change"]),
            element: leak(&f["element"]),
            path: f["path"].as_str().expect("path").to_owned(),
            old_path: f["old_path"].as_str().map(str::to_owned),
        })
        .collect();
    assert_eq!(got, want, "xtask diff and the protoc oracle disagree");
}

/// The oracle's `&'static str` fields, from the report's JSON strings.
fn leak(v: &Value) -> &'static str {
    let s = v.as_str().expect("a string");
    STRUCTURAL
        .iter()
        .chain(&["added", "removed", "renamed", "changed"])
        .find(|k| **k == s)
        .copied()
        .unwrap_or_else(|| panic!("unexpected '{s}'"))
}

#[test]
fn bad_sources_exit_1_with_one_located_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let broken = tmp.path().join("broken.proto");
    std::fs::write(&broken, "syntax = \"proto3\";\nmessage A {\n  strin name = 1;\n}\n")
        .expect("write");
    let garbage = tmp.path().join("set.binpb");
    std::fs::write(&garbage, [0xff_u8, 0x00, 0x13, 0x37]).expect("write");
    let two = tmp.path().join("two");
    std::fs::create_dir(&two).expect("mkdir");
    for name in ["a.proto", "b.proto"] {
        std::fs::write(two.join(name), "syntax = \"proto3\";\n").expect("write");
    }
    for (args, path) in [
        (vec!["model", "--proto", s(&broken)], &broken),
        (vec!["model", "--spec-dir", s(&broken)], &broken),
        (vec!["model", "--descriptor-set", s(&garbage)], &garbage),
        (vec!["model", "--descriptor-set", s(&broken)], &broken),
        (vec!["model", "--spec-dir", s(&two)], &two),
    ] {
        let out = xtask(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout");
        assert_eq!(stderr.matches("× ").count(), 1, "{args:?}: one diagnostic: {stderr}");
        assert!(stderr.contains(s(path)), "{args:?}: names the source: {stderr}");
    }
}

/// The workspace's target directory: the crates built below reuse what the tests built.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// `cargo test --offline --quiet` in `krate` with the workspace's lock file, target directory and
/// dependency profile, so nothing but the crate and csikit's own crates is compiled.
fn cargo_test(krate: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).expect("copy Cargo.lock");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["test", "--offline", "--quiet", "--config", "profile.dev.package.\"*\".opt-level=1"])
        .current_dir(krate)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo test in '{}':\n{}{}",
        krate.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a test in a crate holding the unseen release's bindings (at `path`) checks: the field
/// the release added is there, and the generated validator applies the REQUIRED its comment
/// states.
fn validate_test(path: &str) -> String {
    format!(
        "//! The unseen release's bindings: its new field, and its REQUIRED rule applied.\n\
         use csikit::Validate as _;\n\n\
         #[test]\n\
         fn the_new_field_is_there_and_volume_id_is_required() {{\n    \
         let request = {path}::ControllerGetVolumeRequest {{ hint: \"h\".into(), ..Default::default() }};\n    \
         let err = request.validate().expect_err(\"volume_id is REQUIRED\");\n    \
         assert!(err.to_string().contains(\"volume_id\"), \"{{err}}\");\n}}\n"
    )
}

/// The unseen release, given as its folder alone, also generates a crate that builds and
/// validates (`xtask generate`), builds in a user's crate through csikit-build's `build.rs`
/// (package `csi.v1`, before csikit carries it), and gets its own docs edition
/// (`xtask docs` over a corpus holding it beside v1.12.0, whose prose it carries): no code or
/// table knows it.
#[test]
fn an_unseen_release_generates_builds_and_renders_from_its_folder_alone() {
    let Some(corpus) = csikit_spec::corpus_or_skip() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    // A corpus of its own: the newest release csikit carries, and the unseen one dropped in.
    let mine = tmp.path().join("corpus");
    std::fs::create_dir_all(mine.join("csi-spec")).expect("mkdir");
    std::os::unix::fs::symlink(corpus.join("csi-spec/v1.12.0"), mine.join("csi-spec/v1.12.0"))
        .expect("link v1.12.0");
    let unseen = unseen_release(&corpus, &mine.join("csi-spec"));

    // xtask generate: a standalone crate that builds and validates.
    let generated = tmp.path().join("generated");
    let out = xtask(&["generate", "--spec-dir", s(&unseen), "--out", s(&generated)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::create_dir_all(generated.join("tests")).expect("mkdir");
    std::fs::write(generated.join("tests/validate.rs"), validate_test("csikit::v1"))
        .expect("write test");
    cargo_test(&generated);

    // csikit-build in a user's build.rs, the spec folder holding the proto alone.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("root");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(user.join("src")).expect("mkdir");
    std::fs::create_dir_all(user.join("tests")).expect("mkdir");
    std::fs::create_dir_all(user.join("spec")).expect("mkdir");
    std::fs::copy(unseen.join("csi.proto"), user.join("spec/csi.proto")).expect("copy proto");
    let manifest = format!(
        "[package]\nname = \"unseen-user\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncsikit = {{ path = {:?}, features = [\"server\", \"client\"] }}\n\n\
         [build-dependencies]\ncsikit-build = {{ path = {:?} }}\n\n[workspace]\n",
        root.join("generated").display().to_string(),
        root.join("build").display().to_string(),
    );
    std::fs::write(user.join("Cargo.toml"), manifest).expect("write manifest");
    std::fs::write(
        user.join("build.rs"),
        "fn main() {\n    csikit_build::configure().compile(\"spec\").unwrap();\n}\n",
    )
    .expect("write build.rs");
    std::fs::write(
        user.join("src/lib.rs"),
        "//! A user crate with a newer CSI release's bindings.\n\
         pub mod csi {\n    csikit::include_spec!(\"csi.v1\");\n}\n",
    )
    .expect("write lib.rs");
    std::fs::write(user.join("tests/validate.rs"), validate_test("unseen_user::csi"))
        .expect("write test");
    cargo_test(&user);

    // xtask docs: the unseen release has its own edition, made from its proto and the prose its
    // loader carried from v1.12.0: a banner on the pages showing that text, the new RPC's proto
    // comment under a notice that says it is new.
    let site = tmp.path().join("site");
    let out = xtask(&["docs", "--corpus", s(&mine), "--out", s(&site)]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let page = |p: &str| {
        std::fs::read_to_string(site.join(p)).unwrap_or_else(|e| panic!("site page '{p}': {e}"))
    };
    let banner = "are v1.12.0&#39;s, carried from its spec.md because v1.13.0&#39;s own spec.md is \
                  not in the corpus";
    for p in ["en/v1.13.0/index.html", "en/v1.13.0/rpc/CreateVolume.html"] {
        assert!(page(p).contains(banner), "no carried-text banner on {p}");
    }
    let ping = page("en/v1.13.0/rpc/Ping.html");
    assert!(!ping.contains(banner) && ping.contains("This RPC is new in v1.13.0"), "{ping}");
    assert!(!page("en/v1.13.0/changes.html").contains(banner));
    assert!(!page("en/v1.12.0/index.html").contains("notice-carried"));
    let changes = page("en/v1.13.0/changes.html");
    assert!(changes.contains("VolumeCondition") && changes.contains("Ping"), "{changes}");
}
