//! Facts the model must extract from the real releases, and the v1.12.0 JSON snapshot.
//!
//! Bless the snapshot with `UPDATE_EXPECT=1 cargo test -p csikit-spec --test model` and
//! review the diff.

mod common;

use csikit_spec::{LoadOptions, Model, Presence, SizeLimit};

fn load(dir: &std::path::Path, options: &LoadOptions) -> Model {
    let loaded = csikit_spec::load_dir(dir, options);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics);
    loaded.model.expect("model")
}

fn alpha_count(m: &Model) -> usize {
    m.services.iter().filter(|s| s.alpha).count()
        + m.services.iter().flat_map(|s| &s.methods).filter(|x| x.alpha).count()
        + m.messages.iter().filter(|x| x.alpha).count()
        + m.messages.iter().flat_map(|x| &x.fields).filter(|f| f.alpha).count()
        + m.enums.iter().filter(|e| e.alpha).count()
        + m.enums.iter().flat_map(|e| &e.values).filter(|v| v.alpha).count()
}

fn field<'a>(m: &'a Model, message: &str, name: &str) -> &'a csikit_spec::Field {
    m.message(message)
        .unwrap_or_else(|| panic!("no message {message}"))
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {message}.{name}"))
}

#[test]
fn v1_12_0_counts() {
    let Some(corpus) = common::corpus() else { return };
    let m = load(&corpus.join("csi-spec/v1.12.0"), &LoadOptions::default());
    assert_eq!(m.package, "csi.v1");
    assert_eq!(m.services.len(), 5);
    assert_eq!(m.services.iter().map(|s| s.methods.len()).sum::<usize>(), 32);
    let secrets = m.messages.iter().flat_map(|x| &x.fields).filter(|f| f.secret).count();
    assert_eq!(secrets, 19);
    assert_eq!(alpha_count(&m), 21);
    let (_, create) = m.method("CreateVolume").expect("CreateVolume");
    let codes: Vec<i32> = create.errors.iter().map(|e| e.code_number).collect();
    assert_eq!(codes, [3, 5, 6, 8, 11]);
    assert_eq!(create.section.as_deref(), Some("createvolume"));
    assert_eq!(m.general_errors.len(), 6);
    assert_eq!(m.size_limits.string, 128);
    assert_eq!(m.size_limits.map, 4096);
}

#[test]
fn v1_12_0_field_facts() {
    let Some(corpus) = common::corpus() else { return };
    let m = load(&corpus.join("csi-spec/v1.12.0"), &LoadOptions::default());
    let name = field(&m, "csi.v1.CreateVolumeRequest", "name");
    assert_eq!(name.presence, Presence::Required);
    assert_eq!(name.size_limit, SizeLimit::General { bytes: 128 });
    let secrets = field(&m, "csi.v1.CreateVolumeRequest", "secrets");
    assert!(secrets.secret);
    assert_eq!(secrets.presence, Presence::Optional);
    assert_eq!(secrets.max_bytes(), Some(4096));
    let node_id = field(&m, "csi.v1.NodeGetInfoResponse", "node_id");
    assert_eq!(node_id.size_limit, SizeLimit::Max { bytes: 256 });
    // Node IDs elsewhere carry NodeGetInfo's limit.
    assert_eq!(
        field(&m, "csi.v1.ControllerPublishVolumeRequest", "node_id").max_bytes(),
        Some(256)
    );
    let staging = field(&m, "csi.v1.NodeStageVolumeRequest", "staging_target_path");
    assert_eq!(staging.size_limit, SizeLimit::AtLeast { bytes: 128 });
    assert_eq!(staging.max_bytes(), None);
    let flags = field(&m, "csi.v1.VolumeCapability.MountVolume", "mount_flags");
    assert_eq!(flags.size_limit, SizeLimit::MaxTotal { bytes: 4096 });
    assert!(field(&m, "csi.v1.CapacityRange", "required_bytes").non_negative);
    for msg in [
        "csi.v1.CreateVolumeRequest",
        "csi.v1.CreateSnapshotRequest",
        "csi.v1.CreateVolumeGroupSnapshotRequest",
    ] {
        assert!(field(&m, msg, "name").no_control_chars, "{msg}");
    }
    assert!(!field(&m, "csi.v1.CreateVolumeRequest", "parameters").no_control_chars);
    let cap = m.message("csi.v1.VolumeCapability").expect("VolumeCapability");
    assert!(cap.oneofs.iter().any(|o| o.name == "access_type" && o.required));
    let src = m.message("csi.v1.VolumeContentSource").expect("VolumeContentSource");
    assert!(src.oneofs.iter().all(|o| !o.required));
}

#[test]
fn v0_1_0_trailing_comments_give_presence() {
    let Some(corpus) = common::corpus() else { return };
    let m = load(&corpus.join("csi-spec/v0.1.0"), &LoadOptions::default());
    for name in ["major", "minor", "patch"] {
        assert_eq!(field(&m, "csi.Version", name).presence, Presence::Required, "{name}");
    }
}

#[test]
fn every_release_and_addon_lowers_without_errors() {
    let Some(corpus) = common::corpus() else { return };
    for (tag, dir) in common::releases(&corpus) {
        let m = load(&dir, &LoadOptions::default());
        assert!(!m.services.is_empty() && !m.general_errors.is_empty(), "{tag}");
        // Every RPC heading was found in the prose.
        for s in &m.services {
            for rpc in &s.methods {
                assert!(rpc.section.is_some(), "{tag}: rpc '{}' has no section", rpc.name);
            }
        }
        let required = m
            .messages
            .iter()
            .flat_map(|x| &x.fields)
            .filter(|f| f.presence == Presence::Required)
            .count();
        assert!(required > 10, "{tag}: only {required} required fields");
    }
    for addon in common::addons(&corpus) {
        let name = addon.name.as_str();
        let m = load(&addon.main.dir, &LoadOptions::default());
        assert_eq!(m.package, name);
        assert!(
            m.services.iter().flat_map(|s| &s.methods).any(|x| !x.errors.is_empty())
                || name == "identity",
            "{name}"
        );
    }
    // The hand-written v0.1.1 replication proto uses its own secret and alpha options.
    let old = load(&corpus.join("csi-addons/_tags/v0.1.1"), &LoadOptions::default());
    assert!(old.messages.iter().flat_map(|x| &x.fields).any(|f| f.secret));
}

#[test]
fn japanese_model_carries_japanese_conditions_with_the_same_codes() {
    let Some(corpus) = common::corpus() else { return };
    let dir = corpus.join("csi-spec/v1.7.0");
    let en = load(&dir, &LoadOptions::default());
    let ja = load(
        &dir,
        &LoadOptions {
            translation: Some(("ja".into(), corpus.join("translations/ja/spec.md"))),
            ..LoadOptions::default()
        },
    );
    assert_eq!(ja.lang, "ja");
    let japanese = |s: &str| {
        s.chars().any(|c| {
            ('\u{3040}'..='\u{30ff}').contains(&c) || ('\u{4e00}'..='\u{9fff}').contains(&c)
        })
    };
    let (_, en_create) = en.method("CreateVolume").expect("CreateVolume");
    let (_, ja_create) = ja.method("CreateVolume").expect("CreateVolume");
    let codes = |rows: &[csikit_spec::ErrorRow]| {
        rows.iter().map(|e| (e.code_number, e.code.clone())).collect::<Vec<_>>()
    };
    assert_eq!(codes(&ja_create.errors), codes(&en_create.errors));
    assert!(ja_create.errors.iter().all(|e| japanese(&e.condition) && e.lang == "ja"));
    assert!(japanese(&ja.general_errors[0].condition));
    // The CreateSnapshot row broken across lines is recovered, and the row after it kept.
    let (_, snap) = ja.method("CreateSnapshot").expect("CreateSnapshot");
    assert_eq!(snap.errors.iter().map(|e| e.code_number).collect::<Vec<_>>(), [6, 10, 13]);
    assert!(snap.errors[1].recovery.contains("指数バックオフ"));
    // Tables the translation left in English say so.
    let (_, stage) = ja.method("NodeStageVolume").expect("NodeStageVolume");
    assert!(stage.errors.iter().all(|e| e.lang == "en"));
}

#[test]
fn v1_12_0_json_snapshot() {
    let Some(corpus) = common::corpus() else { return };
    let m = load(&corpus.join("csi-spec/v1.12.0"), &LoadOptions::default());
    let json = m.to_json();
    // Deterministic: a second load prints the same bytes.
    assert_eq!(json, load(&corpus.join("csi-spec/v1.12.0"), &LoadOptions::default()).to_json());
    expect_test::expect_file!["data/model-v1.12.0.json"].assert_eq(&json);
}

/// Deprecation is read from the standard `deprecated` option only: a small spec of its own shows
/// it is read on every kind of element; of the releases, only v0.3.0 sets it (on `NodeGetId`,
/// removed in v1.0.0), so the v1 line has no deprecated element.
#[test]
fn deprecated_option_is_read_on_every_element() {
    let dir = std::env::temp_dir().join(format!("csikit-deprecated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let spec = "# Old\n\n```protobuf\nsyntax = \"proto3\";\npackage old.v1;\n\n\
        service Old {\n  option deprecated = true;\n  rpc Ping (PingRequest) returns (PingResponse) {\n    option deprecated = true;\n  }\n  rpc Pong (PingRequest) returns (PingResponse) {}\n}\n\n\
        message PingRequest {\n  option deprecated = true;\n  string a = 1 [deprecated = true];\n  string b = 2;\n}\n\n\
        message PingResponse {\n  Kind kind = 1;\n}\n\n\
        enum Kind {\n  option deprecated = true;\n  KIND_UNKNOWN = 0;\n  KIND_OLD = 1 [deprecated = true];\n}\n```\n";
    std::fs::write(dir.join("spec.md"), spec).expect("write spec");
    let loaded = csikit_spec::load_dir(&dir, &LoadOptions::default());
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics);
    let m = loaded.model.expect("model");
    let service = &m.services[0];
    assert!(service.deprecated);
    let flags: Vec<(&str, bool)> =
        service.methods.iter().map(|x| (x.name.as_str(), x.deprecated)).collect();
    assert_eq!(flags, [("Ping", true), ("Pong", false)]);
    let request = m.message("old.v1.PingRequest").expect("PingRequest");
    assert!(request.deprecated);
    assert_eq!(request.fields.iter().map(|f| f.deprecated).collect::<Vec<_>>(), [true, false]);
    assert!(!m.message("old.v1.PingResponse").expect("PingResponse").deprecated);
    let kind = m.enum_type("old.v1.Kind").expect("Kind");
    assert!(kind.deprecated);
    assert_eq!(kind.values.iter().map(|v| v.deprecated).collect::<Vec<_>>(), [false, true]);

    let Some(corpus) = common::corpus() else { return };
    for (tag, dir) in common::releases(&corpus) {
        let m = load(&dir, &LoadOptions::default());
        let any = m.services.iter().any(|s| s.deprecated)
            || m.services.iter().flat_map(|s| &s.methods).any(|x| x.deprecated)
            || m.messages.iter().any(|x| x.deprecated || x.fields.iter().any(|f| f.deprecated))
            || m.enums.iter().any(|e| e.deprecated || e.values.iter().any(|v| v.deprecated));
        if tag == "v0.3.0" {
            let (_, get_id) = m.method("NodeGetId").expect("NodeGetId");
            assert!(get_id.deprecated, "v0.3.0 deprecates NodeGetId");
        } else {
            assert!(!any, "{tag} marks something deprecated");
        }
    }
}
