//! Spec sources: a proto alone and a protoc-made descriptor set give the Model a full release
//! folder gives, in everything the proto states, for every corpus release from v1.0.0 and the
//! csi-addons packages; what differs is only what the source marks not available. Bad sources
//! give one diagnostic with a location and no model.
//!
//! The proto-only copies and descriptor sets are made in temporary folders at test time.

mod common;

use std::path::{Path, PathBuf};

use csikit_spec::corpus::{Corpus, Form};
use csikit_spec::source::is_source_notice;
use csikit_spec::{LoadOptions, Loaded, Model, NotAvailable, Presence, SizeLimit, SourceKind};

fn model(loaded: Loaded, what: &str) -> Model {
    assert!(!loaded.diagnostics.has_errors(), "{what}: {}", loaded.diagnostics);
    loaded.model.unwrap_or_else(|| panic!("{what}: no model"))
}

/// The full folder's Model with what only the markdown states cleared, and the source of the
/// Model it is compared with.
fn without_prose(mut full: Model, source: &csikit_spec::SourceInfo) -> Model {
    for s in &mut full.services {
        for m in &mut s.methods {
            m.errors.clear();
            m.section = None;
            m.obligation = None;
        }
    }
    full.general_errors.clear();
    full.sections.clear();
    full.source = source.clone();
    full
}

/// The proto-only Model with what it reads from capability comments cleared: the obligations
/// `from_comment` (the only ones it has; `obligations.rs` holds them to the prose), so it
/// compares with [`without_prose`] of its full folder. The implications the comments state are
/// the same in both.
fn without_comment_obligations(mut m: Model) -> Model {
    for x in m.services.iter_mut().flat_map(|s| &mut s.methods) {
        if let Some(o) = x.obligation.take() {
            assert!(o.from_comment, "{}: a proto alone states no prose obligation", x.name);
        }
    }
    m
}

/// What a descriptor set without source info cannot know, cleared as it is.
fn without_comments(mut m: Model, source: &csikit_spec::SourceInfo) -> Model {
    for s in &mut m.services {
        s.comment.clear();
        for x in &mut s.methods {
            x.comment.clear();
            // Read from capability comments.
            x.obligation = None;
        }
    }
    m.implications.clear();
    for msg in &mut m.messages {
        msg.comment.clear();
        for f in &mut msg.fields {
            f.comment.clear();
            f.presence = Presence::Unknown;
            f.size_limit = SizeLimit::None;
            f.non_negative = false;
            f.no_control_chars = false;
            f.plugin_generated = false;
        }
        for o in &mut msg.oneofs {
            o.comment.clear();
            o.required = false;
        }
    }
    for e in &mut m.enums {
        e.comment.clear();
        for v in &mut e.values {
            v.comment.clear();
        }
    }
    m.source = source.clone();
    m
}

/// Asserts two Models have the same JSON, naming the first message or service that differs.
fn assert_same_json(what: &str, got: &Model, want: &Model) {
    let (g, w) = (got.to_json(), want.to_json());
    if g == w {
        return;
    }
    let (gv, wv): (serde_json::Value, serde_json::Value) =
        (serde_json::from_str(&g).expect("json"), serde_json::from_str(&w).expect("json"));
    for key in ["package", "source", "size_limits", "services", "enums", "general_errors"] {
        assert_eq!(gv[key], wv[key], "{what}: '{key}' differs");
    }
    let (gm, wm) = (
        gv["messages"].as_array().expect("messages"),
        wv["messages"].as_array().expect("messages"),
    );
    for (a, b) in gm.iter().zip(wm) {
        assert_eq!(a, b, "{what}: message {} differs", b["full_name"]);
    }
    assert_eq!(gv, wv, "{what}: the Models differ");
}

/// A folder under `tmp` holding a copy of `proto` alone.
fn proto_only_copy(tmp: &Path, name: &str, proto: &Path) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(proto, dir.join(proto.file_name().expect("file name"))).expect("copy the proto");
    dir
}

/// `protoc` run on `file` (found through `include`), its descriptor set written to `out`.
fn protoc_set(
    protoc: &Path,
    include: &[&Path],
    file: &str,
    source_info: bool,
    imports: bool,
    out: &Path,
) {
    let mut cmd = std::process::Command::new(protoc);
    cmd.arg(format!("--descriptor_set_out={}", out.display()));
    if source_info {
        cmd.arg("--include_source_info");
    }
    if imports {
        cmd.arg("--include_imports");
    }
    for dir in include {
        cmd.arg(format!("-I{}", dir.display()));
    }
    let output = cmd.arg("-I/usr/include").arg(file).output().expect("run protoc");
    assert!(
        output.status.success(),
        "protoc on '{file}': {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// One notice of what the source cannot state, naming each missing part.
fn assert_one_notice(what: &str, loaded: &Loaded, missing: &[NotAvailable]) {
    let notices: Vec<_> = loaded.diagnostics.0.iter().filter(|d| is_source_notice(d)).collect();
    assert_eq!(notices.len(), 1, "{what}: {}", loaded.diagnostics);
    for m in missing {
        assert!(notices[0].message.contains(m.as_str()), "{what}: {}", notices[0].message);
    }
}

fn prose_only() -> Vec<NotAvailable> {
    NotAvailable::PROSE.to_vec()
}

fn no_comments() -> Vec<NotAvailable> {
    let mut all: Vec<NotAvailable> =
        NotAvailable::PROSE.iter().chain(&NotAvailable::COMMENTS).copied().collect();
    all.sort();
    all
}

#[test]
fn a_proto_alone_gives_the_full_folders_model_but_the_prose() {
    let Some(root) = common::corpus() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut seen = 0;
    for release in corpus.releases_from("v1.0.0").filter(|r| r.form == Form::Full) {
        let full =
            model(csikit_spec::load_dir(&release.dir, &LoadOptions::default()), &release.name);
        assert!(full.services.iter().flat_map(|s| &s.methods).any(|m| !m.errors.is_empty()));
        let dir = proto_only_copy(tmp.path(), &release.name, &release.proto());
        let loaded = csikit_spec::load_source(&dir, &LoadOptions::default());
        assert_one_notice(&release.name, &loaded, &prose_only());
        let proto = model(loaded, &release.name);
        assert_eq!(proto.source.kind, SourceKind::Proto);
        assert_eq!(proto.source.not_available, prose_only());
        assert!(proto.services.iter().flat_map(|s| &s.methods).all(|m| m.errors.is_empty()));
        let stripped = without_comment_obligations(proto.clone());
        assert_same_json(&release.name, &stripped, &without_prose(full, &proto.source));
        // The file itself reads the same as its folder.
        let file = model(
            csikit_spec::load_source(&release.proto(), &LoadOptions::default()),
            &release.name,
        );
        assert_eq!(file.to_json(), proto.to_json(), "{}: file and folder", release.name);
        seen += 1;
    }
    assert!(seen >= 13, "expected v1.0.0 … v1.12.0, compared {seen}");
    for addon in common::addons(&root) {
        let full =
            model(csikit_spec::load_dir(&addon.main.dir, &LoadOptions::default()), &addon.name);
        let dir = proto_only_copy(tmp.path(), &addon.name, &addon.proto());
        let proto = model(csikit_spec::load_source(&dir, &LoadOptions::default()), &addon.name);
        let proto = without_comment_obligations(proto);
        assert!(!proto.messages.is_empty(), "{}", addon.name);
        assert_same_json(&addon.name, &proto, &without_prose(full, &proto.source));
    }
}

#[test]
fn protoc_descriptor_sets_give_the_protos_model() {
    let Some(root) = common::corpus() else { return };
    let Some(protoc) = common::protoc() else { return };
    let corpus = Corpus::read(&root).expect("corpus");
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut seen = 0;
    for release in corpus.releases_from("v1.0.0").filter(|r| r.form == Form::Full) {
        let proto = model(
            csikit_spec::load_source(&release.proto(), &LoadOptions::default()),
            &release.name,
        );
        // With source info: everything the proto states. Named without an extension: the
        // content tells what it is.
        let with = tmp.path().join(format!("{}-with-info", release.name));
        protoc_set(&protoc, &[&release.dir], "csi.proto", true, true, &with);
        let loaded = csikit_spec::load_source(&with, &LoadOptions::default());
        assert_one_notice(&release.name, &loaded, &prose_only());
        let set = model(loaded, &release.name);
        assert_eq!(set.source.kind, SourceKind::DescriptorSet);
        let mut want = proto.clone();
        want.source = set.source.clone();
        assert_same_json(&format!("{} with source info", release.name), &set, &want);

        // Without source info: no comments, so presence is unknown and nothing read from
        // comments is set. Built without --include_imports too: descriptor.proto is supplied.
        let without = tmp.path().join(format!("{}-bare.binpb", release.name));
        protoc_set(
            &protoc,
            &[&release.dir],
            "csi.proto",
            false,
            release.name == "v1.12.0",
            &without,
        );
        let loaded = csikit_spec::load_descriptor_set(&without, &LoadOptions::default());
        assert_one_notice(&release.name, &loaded, &no_comments());
        let bare = model(loaded, &release.name);
        assert_eq!(bare.source.not_available, no_comments());
        assert!(
            bare.messages.iter().flat_map(|m| &m.fields).all(|f| f.presence == Presence::Unknown)
        );
        // Secret and alpha come from options, which survive.
        assert_eq!(
            bare.messages.iter().flat_map(|m| &m.fields).filter(|f| f.secret).count(),
            proto.messages.iter().flat_map(|m| &m.fields).filter(|f| f.secret).count(),
        );
        assert_same_json(
            &format!("{} without source info", release.name),
            &bare,
            &without_comments(proto, &bare.source),
        );
        seen += 1;
    }
    assert!(seen >= 13, "compared {seen}");
    // csi-addons import the CSI proto by its Go path: protoc finds it through a folder laid out
    // like that path; a set without imports gets it from the import map.
    let include = tmp.path().join("include");
    let import = include.join(csikit_spec::CSI_GO_IMPORT);
    std::fs::create_dir_all(import.parent().expect("parent")).expect("mkdir");
    let latest = corpus.latest_release().expect("a release").proto();
    std::fs::copy(&latest, &import).expect("copy csi.proto");
    for addon in common::addons(&root) {
        let proto =
            model(csikit_spec::load_source(&addon.proto(), &LoadOptions::default()), &addon.name);
        let file = format!("{}.proto", addon.name);
        for imports in [true, false] {
            let out = tmp.path().join(format!("{}-{imports}.pb", addon.name));
            protoc_set(&protoc, &[&addon.main.dir, &include], &file, true, imports, &out);
            let set = model(csikit_spec::load_source(&out, &LoadOptions::default()), &addon.name);
            let mut want = proto.clone();
            want.source = set.source.clone();
            assert_same_json(&format!("{} (imports: {imports})", addon.name), &set, &want);
        }
    }
}

/// The one error of a bad source: its location names the file, and there is no model.
fn one_error(loaded: &Loaded, path: &Path) -> String {
    let errors: Vec<_> = loaded.diagnostics.0.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{}", loaded.diagnostics);
    assert!(loaded.model.is_none(), "a model from a bad source");
    let shown = format!("{} {}", errors[0].location(), errors[0].message);
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    shown
}

#[test]
fn bad_sources_give_one_located_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let broken = tmp.path().join("broken.proto");
    std::fs::write(
        &broken,
        "syntax = \"proto3\";\npackage x;\nmessage A {\n  strin name = 1;\n}\n",
    )
    .expect("write");
    let shown = one_error(&csikit_spec::load_source(&broken, &LoadOptions::default()), &broken);
    assert!(shown.contains("broken.proto:4:"), "{shown}");

    let garbage = tmp.path().join("set.pb");
    std::fs::write(&garbage, [0xff_u8, 0x00, 0x13, 0x37, 0x80]).expect("write");
    one_error(&csikit_spec::load_source(&garbage, &LoadOptions::default()), &garbage);
    // A proto given as a descriptor set is not one.
    one_error(&csikit_spec::load_descriptor_set(&broken, &LoadOptions::default()), &broken);

    let two = tmp.path().join("two");
    std::fs::create_dir(&two).expect("mkdir");
    for name in ["a.proto", "b.proto"] {
        std::fs::write(two.join(name), "syntax = \"proto3\";\n").expect("write");
    }
    let shown = one_error(&csikit_spec::load_source(&two, &LoadOptions::default()), &two);
    assert!(shown.contains("'a.proto', 'b.proto'"), "{shown}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    one_error(&csikit_spec::load_source(&empty, &LoadOptions::default()), &empty);
}
