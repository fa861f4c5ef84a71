//! What each release obliges a plugin to implement, read from the RPC sections' prose and, for
//! an RPC whose section says nothing, its service's line in "RPC Interface": every obligation
//! sentence of every release is read (no diagnostic), and facts checked by hand against the text
//! hold.

mod common;

use csikit_spec::{CapabilityRef, Carry, LoadOptions, Model, Obligation};

fn obligation(model: &Model, rpc: &str) -> Option<Obligation> {
    model.method(rpc).and_then(|(_, m)| m.obligation.clone())
}

fn cap(service: &str, name: &str) -> CapabilityRef {
    CapabilityRef { service: service.into(), name: name.into() }
}

#[test]
fn every_release_states_its_obligations_readably() {
    let Some(corpus) = common::corpus() else { return };
    for (tag, dir) in common::releases(&corpus) {
        let loaded = csikit_spec::load_dir(&dir, &LoadOptions::default());
        let unread: Vec<String> = loaded
            .diagnostics
            .0
            .iter()
            .filter(|d| d.message.contains("obliges"))
            .map(|d| d.message.clone())
            .collect();
        assert!(unread.is_empty(), "{tag}: {unread:?}");
        let model = loaded.model.unwrap_or_else(|| panic!("{tag} loads"));
        let stated = model
            .services
            .iter()
            .flat_map(|s| &s.methods)
            .filter(|m| m.obligation.is_some())
            .count();
        // Every release states it for its core Controller and Node RPCs at least.
        assert!(stated >= 10, "{tag}: only {stated} RPCs state an obligation");
        // CreateVolume: with CREATE_DELETE_VOLUME, in every release.
        assert_eq!(
            obligation(&model, "CreateVolume"),
            Some(Obligation {
                plugin: "Controller".into(),
                if_any: vec![cap("Controller", "CREATE_DELETE_VOLUME")],
                service_wide: false,
                from_comment: false,
            }),
            "{tag}"
        );
        // ValidateVolumeCapabilities and ControllerGetCapabilities: always.
        for rpc in ["ValidateVolumeCapabilities", "ControllerGetCapabilities"] {
            assert_eq!(
                obligation(&model, rpc),
                Some(Obligation {
                    plugin: "Controller".into(),
                    if_any: vec![],
                    service_wide: false,
                    from_comment: false
                }),
                "{tag}: {rpc}"
            );
        }
        // NodeUnpublishVolume and NodeGetCapabilities: always, for a Node plugin, as their
        // sections say. NodePublishVolume's section says nothing: "**Node Service**: The Node
        // Plugin MUST implement this sets of RPCs" obliges it, in every release.
        assert_eq!(
            obligation(&model, "NodePublishVolume"),
            Some(Obligation {
                plugin: "Node".into(),
                if_any: vec![],
                service_wide: true,
                from_comment: false
            }),
            "{tag}"
        );
        // GetPluginInfo: "**Identity Service**: Both the Node Plugin and the Controller Plugin
        // MUST implement this sets of RPCs".
        assert_eq!(
            obligation(&model, "GetPluginInfo"),
            Some(Obligation {
                plugin: "Plugin".into(),
                if_any: vec![],
                service_wide: true,
                from_comment: false
            }),
            "{tag}"
        );
        // Only those the sections leave silent: the service-wide line adds no more than the
        // Identity RPCs besides Probe and NodePublishVolume.
        let wide: Vec<&str> = model
            .services
            .iter()
            .flat_map(|s| &s.methods)
            .filter(|m| m.obligation.as_ref().is_some_and(|o| o.service_wide))
            .map(|m| m.name.as_str())
            .collect();
        let identity =
            if tag == "v0.1.0" { "GetSupportedVersions" } else { "GetPluginCapabilities" };
        let mut expected = vec!["GetPluginInfo", identity, "NodePublishVolume"];
        expected.sort_unstable();
        let mut wide = wide;
        wide.sort_unstable();
        assert_eq!(wide, expected, "{tag}");
        for rpc in ["NodeUnpublishVolume", "NodeGetCapabilities"] {
            assert_eq!(
                obligation(&model, rpc),
                Some(Obligation {
                    plugin: "Node".into(),
                    if_any: vec![],
                    service_wide: false,
                    from_comment: false
                }),
                "{tag}: {rpc}"
            );
        }
    }
}

#[test]
fn hand_checked_facts_of_v1_releases() {
    let Some(corpus) = common::corpus() else { return };
    let load = |tag: &str| {
        csikit_spec::load_dir(&corpus.join("csi-spec").join(tag), &LoadOptions::default())
            .model
            .unwrap_or_else(|| panic!("{tag} loads"))
    };
    let v15 = load("v1.5.0");
    // "A Node plugin MUST implement this RPC call if it has GET_VOLUME_STATS node capability or
    // VOLUME_CONDITION node capability."
    assert_eq!(
        obligation(&v15, "NodeGetVolumeStats"),
        Some(Obligation {
            plugin: "Node".into(),
            if_any: vec![cap("Node", "GET_VOLUME_STATS"), cap("Node", "VOLUME_CONDITION")],
            service_wide: false,
            from_comment: false,
        })
    );
    let v112 = load("v1.12.0");
    assert_eq!(
        obligation(&v112, "NodeStageVolume"),
        Some(Obligation {
            plugin: "Node".into(),
            if_any: vec![cap("Node", "STAGE_UNSTAGE_VOLUME")],
            service_wide: false,
            from_comment: false,
        })
    );
    assert_eq!(
        obligation(&v112, "ControllerUnpublishVolume"),
        Some(Obligation {
            plugin: "Controller".into(),
            if_any: vec![cap("Controller", "PUBLISH_UNPUBLISH_VOLUME")],
            service_wide: false,
            from_comment: false,
        })
    );
    // Identity: Probe's section says it ("A Plugin MUST implement this RPC call"); the others
    // have it from the service's line.
    assert_eq!(
        obligation(&v112, "Probe"),
        Some(Obligation {
            plugin: "Plugin".into(),
            if_any: vec![],
            service_wide: false,
            from_comment: false
        })
    );
    assert_eq!(
        obligation(&v112, "GetPluginCapabilities"),
        Some(Obligation {
            plugin: "Plugin".into(),
            if_any: vec![],
            service_wide: true,
            from_comment: false
        })
    );
    assert_eq!(
        obligation(&v112, "GroupControllerGetCapabilities"),
        Some(Obligation {
            plugin: "GroupController".into(),
            if_any: vec![],
            service_wide: false,
            from_comment: false
        })
    );
    assert_eq!(
        obligation(&v112, "ControllerModifyVolume"),
        Some(Obligation {
            plugin: "Controller".into(),
            if_any: vec![cap("Controller", "MODIFY_VOLUME")],
            service_wide: false,
            from_comment: false,
        })
    );
    // Sections that name the RPC inside the phrase: "MUST implement this `GetSnapshot` RPC call".
    for (rpc, service, capability) in [
        ("ControllerGetVolume", "Controller", "GET_VOLUME"),
        ("GetSnapshot", "Controller", "GET_SNAPSHOT"),
        ("GetVolumeGroupSnapshot", "GroupController", "CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"),
    ] {
        let o = obligation(&v112, rpc).unwrap_or_else(|| panic!("{rpc}: stated"));
        assert_eq!(o.if_any, [cap(service, capability)], "{rpc}");
    }
    let group = obligation(&v112, "CreateVolumeGroupSnapshot").expect("stated");
    assert_eq!(group.if_any, [cap("GroupController", "CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT")]);
}

/// The proto's own word: in every release with spec.md, each obligation a capability's comment
/// states ("Indicates the SP supports the `X` RPC", "If Plugin implements GET_VOLUME_STATS
/// capability then it MUST implement NodeGetVolumeStats RPC") agrees with what the RPC's section
/// states: the same plugin, and the comment's capability among the section's conditions.
#[test]
fn capability_comments_agree_with_the_prose_in_every_release() {
    let Some(corpus) = common::corpus() else { return };
    let strict = LoadOptions { carry: Carry::None, ..LoadOptions::default() };
    let mut compared = 0;
    let mut narrower = Vec::new();
    for (tag, dir) in common::releases(&corpus) {
        let full = csikit_spec::load_dir(&dir, &LoadOptions::default()).model.expect("loads");
        let proto = csikit_spec::load_source(&dir.join("csi.proto"), &strict);
        let proto = proto.model.unwrap_or_else(|| panic!("{tag}: the proto loads"));
        for method in proto.services.iter().flat_map(|s| &s.methods) {
            let Some(said) = method.obligation.as_ref() else { continue };
            assert!(said.from_comment, "{tag} {}: a proto alone states no prose", method.name);
            let prose = obligation(&full, &method.name)
                .unwrap_or_else(|| panic!("{tag} {}: no section states it", method.name));
            assert!(!prose.from_comment, "{tag} {}: the section's is kept", method.name);
            assert!(
                csikit_spec::obligation::comment_agrees(said, &prose),
                "{tag} {}: the comment says {said:?}, the section {prose:?}",
                method.name
            );
            compared += 1;
            if said.if_any != prose.if_any {
                narrower.push(format!("{tag} {}", method.name));
            }
        }
    }
    // NodeGetVolumeStats in every v1 release; ControllerGetVolume from v1.3.0; GetSnapshot in
    // v1.12.0.
    assert!(compared >= 24, "{compared} comment obligations compared");
    // The one the section widens: NodeGetVolumeStats with VOLUME_CONDITION too, from v1.3.0.
    assert!(narrower.iter().all(|n| n.ends_with(" NodeGetVolumeStats")), "{narrower:?}");
}

/// v1.13.0 comes as its proto alone: its health RPCs are obliged by their capabilities'
/// comments, and LIST_VOLUME_HEALTH implies GET_VOLUME_HEALTH; LIST_VOLUMES_PUBLISHED_NODES
/// implies PUBLISH_UNPUBLISH_VOLUME from v1.6.0 on.
#[test]
fn the_proto_states_the_health_obligations_and_implications() {
    let Some(corpus) = common::corpus() else { return };
    let strict = LoadOptions { carry: Carry::None, ..LoadOptions::default() };
    let v113 = csikit_spec::load_source(&corpus.join("csi-spec/v1.13.0"), &strict)
        .model
        .expect("v1.13.0 loads");
    for (rpc, service, capability) in [
        ("ControllerGetVolumeHealth", "Controller", "GET_VOLUME_HEALTH"),
        ("ControllerListVolumeHealth", "Controller", "LIST_VOLUME_HEALTH"),
        ("NodeGetVolumeHealth", "Node", "GET_VOLUME_HEALTH"),
        ("NodeGetStorageHealth", "Node", "GET_STORAGE_HEALTH"),
    ] {
        assert_eq!(
            obligation(&v113, rpc),
            Some(Obligation {
                plugin: service.into(),
                if_any: vec![cap(service, capability)],
                service_wide: false,
                from_comment: true,
            }),
            "{rpc}"
        );
    }
    let implied: Vec<(&str, &str)> = v113
        .implications
        .iter()
        .map(|i| (i.capability.name.as_str(), i.requires.name.as_str()))
        .collect();
    assert_eq!(
        implied,
        [
            ("LIST_VOLUMES_PUBLISHED_NODES", "PUBLISH_UNPUBLISH_VOLUME"),
            ("LIST_VOLUME_HEALTH", "GET_VOLUME_HEALTH")
        ]
    );
    assert!(v113.implications.iter().all(|i| i.capability.service == "Controller"));
    for (tag, dir) in common::releases(&corpus) {
        let model = csikit_spec::load_dir(&dir, &LoadOptions::default()).model.expect("loads");
        let published =
            model.implications.iter().any(|i| i.capability.name == "LIST_VOLUMES_PUBLISHED_NODES");
        let from_v1_6 = csikit_spec::corpus::Version::parse(&tag)
            .is_some_and(|v| v >= csikit_spec::corpus::Version::parse("v1.6.0").expect("v1.6.0"));
        assert_eq!(published, from_v1_6, "{tag}: {:?}", model.implications);
    }
}

/// A section that contradicts its capability's comment is reported, and the section wins; a
/// comment naming an RPC the proto does not declare is reported and obliges nothing.
#[test]
fn a_section_that_contradicts_the_comment_is_reported_and_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let spec = "# Spec\n\n```protobuf\nsyntax = \"proto3\";\npackage t.v1;\n\n\
        service Controller {\n  rpc GetThing (Req) returns (Resp) {}\n}\n\n\
        message Req {}\nmessage Resp {}\n\n\
        message ControllerServiceCapability {\n  message RPC {\n    enum Type {\n      UNKNOWN = 0;\n      \
        // Indicates the SP supports the GetThing RPC.\n      GET_THING = 1;\n      \
        // Indicates the SP supports the GetOther RPC.\n      // The SP MUST also support NO_SUCH_THING.\n      OTHER_THING = 2;\n    }\n  }\n}\n```\n\n\
        ## RPCs\n\n### `GetThing`\n\nA Controller Plugin MUST implement this RPC call if it has `OTHER_THING` controller capability.\n";
    std::fs::write(tmp.path().join("spec.md"), spec).expect("write spec");
    let loaded = csikit_spec::load_dir(tmp.path(), &LoadOptions::default());
    let messages: Vec<&str> = loaded.diagnostics.0.iter().map(|d| d.message.as_str()).collect();
    let model = loaded.model.expect("loads");
    assert_eq!(
        obligation(&model, "GetThing"),
        Some(Obligation {
            plugin: "Controller".into(),
            if_any: vec![cap("Controller", "OTHER_THING")],
            service_wide: false,
            from_comment: false,
        })
    );
    assert!(
        messages.iter().any(|m| m.contains("rpc 'GetThing': the section obliges")
            && m.contains("capability comment says the Controller Plugin if it has GET_THING")),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("rpc 'GetOther', which is not declared")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("'NO_SUCH_THING', which is not a Controller capability")),
        "{messages:?}"
    );
    assert!(model.implications.is_empty());
}
