//! What each release obliges a plugin to implement, read from the RPC sections' prose and, for
//! an RPC whose section says nothing, its service's line in "RPC Interface": every obligation
//! sentence of every release is read (no diagnostic), and facts checked by hand against the text
//! hold.

mod common;

use csikit_spec::{CapabilityRef, LoadOptions, Model, Obligation};

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
                    service_wide: false
                }),
                "{tag}: {rpc}"
            );
        }
        // NodeUnpublishVolume and NodeGetCapabilities: always, for a Node plugin, as their
        // sections say. NodePublishVolume's section says nothing: "**Node Service**: The Node
        // Plugin MUST implement this sets of RPCs" obliges it, in every release.
        assert_eq!(
            obligation(&model, "NodePublishVolume"),
            Some(Obligation { plugin: "Node".into(), if_any: vec![], service_wide: true }),
            "{tag}"
        );
        // GetPluginInfo: "**Identity Service**: Both the Node Plugin and the Controller Plugin
        // MUST implement this sets of RPCs".
        assert_eq!(
            obligation(&model, "GetPluginInfo"),
            Some(Obligation { plugin: "Plugin".into(), if_any: vec![], service_wide: true }),
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
                Some(Obligation { plugin: "Node".into(), if_any: vec![], service_wide: false }),
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
        })
    );
    let v112 = load("v1.12.0");
    assert_eq!(
        obligation(&v112, "NodeStageVolume"),
        Some(Obligation {
            plugin: "Node".into(),
            if_any: vec![cap("Node", "STAGE_UNSTAGE_VOLUME")],
            service_wide: false,
        })
    );
    assert_eq!(
        obligation(&v112, "ControllerUnpublishVolume"),
        Some(Obligation {
            plugin: "Controller".into(),
            if_any: vec![cap("Controller", "PUBLISH_UNPUBLISH_VOLUME")],
            service_wide: false,
        })
    );
    // Identity: Probe's section says it ("A Plugin MUST implement this RPC call"); the others
    // have it from the service's line.
    assert_eq!(
        obligation(&v112, "Probe"),
        Some(Obligation { plugin: "Plugin".into(), if_any: vec![], service_wide: false })
    );
    assert_eq!(
        obligation(&v112, "GetPluginCapabilities"),
        Some(Obligation { plugin: "Plugin".into(), if_any: vec![], service_wide: true })
    );
    assert_eq!(
        obligation(&v112, "GroupControllerGetCapabilities"),
        Some(Obligation { plugin: "GroupController".into(), if_any: vec![], service_wide: false })
    );
    assert_eq!(
        obligation(&v112, "ControllerModifyVolume"),
        Some(Obligation {
            plugin: "Controller".into(),
            if_any: vec![cap("Controller", "MODIFY_VOLUME")],
            service_wide: false,
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
