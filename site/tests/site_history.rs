//! The docs badges ("since", "alpha until", "deprecated in", "removed in") come from the diff
//! engine over consecutive releases: facts of the real history (GetSnapshot since v1.12;
//! CreateVolumeGroupSnapshot alpha until v1.11; ControllerModifyVolume since v1.9, alpha until
//! v1.12; every element of v1.0.0 since v1.0), the badges as rendered, and, on hand-edited
//! models, deprecation, removal and renames.

use csikit_site::{ElementKind, History, Lifecycle, Presence, Release, SiteOptions, generate_site};
use csikit_spec::corpus::Corpus;
use csikit_spec::{LoadOptions, Model};

fn load(dir: &std::path::Path) -> Model {
    let loaded = csikit_spec::load_source(dir, &LoadOptions::default());
    loaded.model.unwrap_or_else(|| panic!("'{}' did not load", dir.display()))
}

/// The v1 releases of the corpus (as its listing gives them), oldest first, or `None` after a
/// loud skip.
fn releases() -> Option<Vec<Release>> {
    let corpus = csikit_spec::corpus_or_skip()?;
    let listed = Corpus::read(&corpus).expect("the corpus lists");
    Some(
        listed
            .releases_from(csikit_site::FIRST_RELEASE)
            .map(|r| Release { model: load(&r.dir), name: r.name.clone() })
            .collect(),
    )
}

fn history(releases: &[Release]) -> History {
    History::new(&releases.iter().map(|r| (r.name.as_str(), &r.model)).collect::<Vec<_>>())
}

fn at(releases: &[Release], name: &str) -> usize {
    releases.iter().position(|r| r.name == name).unwrap_or_else(|| panic!("no release {name}"))
}

fn lifecycle(since: &str, alpha_until: Option<&str>) -> Lifecycle {
    Lifecycle {
        since: Some(since.to_owned()),
        alpha_until: alpha_until.map(str::to_owned),
        deprecated_in: None,
        removed_in: None,
    }
}

#[test]
fn release_history_facts() {
    let Some(releases) = releases() else { return };
    let h = history(&releases);
    let newest = releases.len() - 1;
    assert_eq!(
        h.lifecycle(ElementKind::Rpc, "Controller.GetSnapshot", newest),
        lifecycle("v1.12.0", None)
    );
    assert_eq!(
        h.presence(ElementKind::Rpc, "Controller.GetSnapshot", at(&releases, "v1.10.0")),
        Presence::AddedIn("v1.12.0".to_owned())
    );
    // Added as alpha in v1.8.0, promoted in v1.11.0: the same story seen from either side.
    for seen_from in ["v1.10.0", "v1.12.0"] {
        assert_eq!(
            h.lifecycle(
                ElementKind::Rpc,
                "GroupController.CreateVolumeGroupSnapshot",
                at(&releases, seen_from)
            ),
            lifecycle("v1.8.0", Some("v1.11.0")),
            "seen from {seen_from}"
        );
    }
    assert_eq!(
        h.lifecycle(ElementKind::Service, "GroupController", newest),
        lifecycle("v1.8.0", Some("v1.11.0"))
    );
    assert_eq!(
        h.lifecycle(ElementKind::Rpc, "Controller.ControllerModifyVolume", newest),
        lifecycle("v1.9.0", Some("v1.12.0"))
    );
    // A field added to a message that already existed, and the values of an enum added whole.
    assert_eq!(
        h.lifecycle(ElementKind::Field, "CreateVolumeRequest.mutable_parameters", newest),
        lifecycle("v1.9.0", Some("v1.12.0"))
    );
    assert_eq!(
        h.lifecycle(
            ElementKind::Value,
            "ControllerServiceCapability.RPC.Type.GET_SNAPSHOT",
            newest
        ),
        lifecycle("v1.12.0", None)
    );
    assert_eq!(
        h.lifecycle(ElementKind::Field, "GetSnapshotRequest.snapshot_id", newest),
        lifecycle("v1.12.0", None)
    );
    // Nothing of the v1 line was ever removed or deprecated.
    assert_eq!(h.report(0).map(|r| r.findings.len()), None, "v1.0.0 has no report");
    // The newest report is of the corpus listing's newest release.
    assert_eq!(h.report(newest).map(|r| r.new.as_str()), releases.last().map(|r| r.name.as_str()));
}

/// Every element of a model with its history key.
fn keys(m: &Model) -> Vec<(ElementKind, String)> {
    let rel = |full: &str| full.strip_prefix(&format!("{}.", m.package)).unwrap_or(full).to_owned();
    let mut out = Vec::new();
    for s in &m.services {
        out.push((ElementKind::Service, rel(&s.full_name)));
        for x in &s.methods {
            out.push((ElementKind::Rpc, format!("{}.{}", rel(&s.full_name), x.name)));
        }
    }
    for msg in &m.messages {
        out.push((ElementKind::Message, rel(&msg.full_name)));
        for f in &msg.fields {
            out.push((ElementKind::Field, format!("{}.{}", rel(&msg.full_name), f.name)));
        }
    }
    for e in &m.enums {
        out.push((ElementKind::Enum, rel(&e.full_name)));
        for v in &e.values {
            out.push((ElementKind::Value, format!("{}.{}", rel(&e.full_name), v.name)));
        }
    }
    out
}

#[test]
fn every_element_of_v1_0_0_is_since_v1_0_and_every_element_has_a_since() {
    let Some(releases) = releases() else { return };
    let h = history(&releases);
    let first = keys(&releases[0].model);
    assert!(first.len() > 200, "only {} elements in v1.0.0", first.len());
    for (kind, key) in &first {
        assert_eq!(
            h.lifecycle(*kind, key, 0).since.as_deref(),
            Some("v1.0.0"),
            "{kind:?} {key} in v1.0.0"
        );
    }
    // Seen from every release, each element there has a since no later than that release.
    for (i, r) in releases.iter().enumerate() {
        for (kind, key) in keys(&r.model) {
            let since = h
                .lifecycle(kind, &key, i)
                .since
                .unwrap_or_else(|| panic!("{kind:?} {key} has no since in {}", r.name));
            assert!(at(&releases, &since) <= i, "{kind:?} {key}: since {since} in {}", r.name);
        }
    }
}

#[test]
fn badges_as_rendered() {
    let Some(releases) = releases() else { return };
    // The badges need only the CSI releases; no translation or addon.
    let files = generate_site(&releases, &SiteOptions::default());
    let page = |p: &str| {
        files.get(std::path::Path::new(p)).unwrap_or_else(|| panic!("no page {p}")).as_str()
    };
    let kicker = |html: &str| {
        let i = html.find("<p class=\"kicker\">").expect("kicker");
        html[i..i + html[i..].find("</p>").expect("end of kicker")].to_owned()
    };
    let snapshot = kicker(page("en/v1.12.0/rpc/GetSnapshot.html"));
    assert!(
        snapshot.contains("<span class=\"badge badge-since\">since v1.12</span>"),
        "{snapshot}"
    );
    let group = kicker(page("en/v1.12.0/rpc/CreateVolumeGroupSnapshot.html"));
    assert!(group.contains("since v1.8") && group.contains("alpha until v1.11"), "{group}");
    // Every field row and value row of v1.0.0 says since v1.0.
    let mut rows = 0;
    for (path, html) in &files {
        if !path.starts_with("en/v1.0.0/ref") {
            continue;
        }
        for row in html.split("<tr id=\"").skip(1) {
            let row = &row[..row.find("</tr>").expect("row end")];
            assert!(row.contains("badge-since\">since v1.0<"), "{}: {row}", path.display());
            rows += 1;
        }
    }
    assert!(rows > 100, "only {rows} rows in v1.0.0");
    // A field added in v1.9.0, on its v1.12.0 page.
    let create = page("en/v1.12.0/ref/csi.v1.CreateVolumeRequest.html");
    let row =
        &create[create.find("<tr id=\"mutable_parameters\"").expect("mutable_parameters row")..];
    let row = &row[..row.find("</tr>").expect("row end")];
    assert!(row.contains("since v1.9") && row.contains("alpha until v1.12"), "{row}");
}

/// Three hand-edited versions of v1.12.0: a field deprecated in the second, an RPC removed and a
/// field renamed in the third.
#[test]
fn deprecation_removal_and_renames() {
    let Some(releases) = releases() else { return };
    let base = releases.last().expect("releases").model.clone();
    let mut deprecated = base.clone();
    let create = deprecated
        .messages
        .iter_mut()
        .find(|m| m.full_name == "csi.v1.CreateVolumeRequest")
        .expect("CreateVolumeRequest");
    create.fields.iter_mut().find(|f| f.name == "parameters").expect("parameters").deprecated =
        true;
    let mut removed = deprecated.clone();
    for s in &mut removed.services {
        s.methods.retain(|m| m.name != "GetCapacity");
    }
    let create = removed
        .messages
        .iter_mut()
        .find(|m| m.full_name == "csi.v1.CreateVolumeRequest")
        .expect("CreateVolumeRequest");
    create.fields.iter_mut().find(|f| f.name == "name").expect("name").name = "volume_name".into();
    let h = History::new(&[("a", &base), ("b", &deprecated), ("c", &removed)]);
    let parameters = h.lifecycle(ElementKind::Field, "CreateVolumeRequest.parameters", 2);
    assert_eq!(parameters.since.as_deref(), Some("a"));
    assert_eq!(parameters.deprecated_in.as_deref(), Some("b"));
    // Seen from before it was deprecated, the deprecation is still part of its story.
    assert_eq!(
        h.lifecycle(ElementKind::Field, "CreateVolumeRequest.parameters", 0)
            .deprecated_in
            .as_deref(),
        Some("b")
    );
    let capacity = h.lifecycle(ElementKind::Rpc, "Controller.GetCapacity", 1);
    assert_eq!(capacity.removed_in.as_deref(), Some("c"));
    assert_eq!(
        h.presence(ElementKind::Rpc, "Controller.GetCapacity", 2),
        Presence::RemovedIn("c".to_owned())
    );
    assert_eq!(h.lifecycle(ElementKind::Rpc, "Controller.GetCapacity", 2), Lifecycle::default());
    // A renamed field keeps its history under its new name; the old name ends.
    let renamed = h.lifecycle(ElementKind::Field, "CreateVolumeRequest.volume_name", 2);
    assert_eq!(renamed.since.as_deref(), Some("a"));
    assert_eq!(
        h.lifecycle(ElementKind::Field, "CreateVolumeRequest.name", 0).removed_in.as_deref(),
        Some("c")
    );
    // The rendered badges say the same.
    let versions = vec![
        Release { name: "v9.0.0".into(), model: base },
        Release { name: "v9.1.0".into(), model: deprecated },
        Release { name: "v9.2.0".into(), model: removed },
    ];
    let files = generate_site(&versions, &SiteOptions::default());
    let create = &files[std::path::Path::new("en/v9.2.0/ref/csi.v1.CreateVolumeRequest.html")];
    assert!(create.contains("deprecated in v9.1"), "no deprecated badge");
    let capacity = &files[std::path::Path::new("en/v9.0.0/rpc/GetCapacity.html")];
    assert!(capacity.contains("removed in v9.2"), "no removed badge");
    let changes = &files[std::path::Path::new("en/v9.1.0/changes.html")];
    assert!(changes.contains("data-element=\"deprecated\""), "deprecation not in the changes");
}
