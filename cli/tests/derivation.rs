//! The derivation, capability by capability: switching one on or off changes exactly the
//! sidecars, flags, mounts, RBAC rules, CSIDriver fields and example classes it should, and
//! nothing else (the expectations below are the list, written out); least privilege
//! holds for every layout; each sidecar's roles are its published rules.

use std::collections::{BTreeMap, BTreeSet};

use csikit_cli::deploy::derive::{Options, derive};
use csikit_cli::deploy::plan::{Mode, Plan};
use csikit_cli::deploy::plugin::{PluginFacts, Service};
use csikit_cli::deploy::table::{PodKind, Table};

/// Everything a plan deploys, one fact a line.
fn summary(plan: &Plan) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    let c = &plan.csidriver;
    s.insert(format!("csidriver attachRequired={}", c.attach_required.value));
    s.insert(format!("csidriver storageCapacity={}", c.storage_capacity.value));
    s.insert(format!("csidriver podInfoOnMount={}", c.pod_info_on_mount.value));
    s.insert(format!("csidriver fsGroupPolicy={}", c.fs_group_policy.value));
    s.insert(format!(
        "csidriver volumeLifecycleModes={}",
        c.volume_lifecycle_modes.value.join(",")
    ));
    s.insert(format!("csidriver seLinuxMount={}", c.se_linux_mount.value));
    s.insert(format!("csidriver requiresRepublish={}", c.requires_republish.value));
    for pod in &plan.pods {
        let p = match pod.kind {
            PodKind::Controller => "controller",
            PodKind::Node => "node",
        };
        s.insert(format!("pod {p}"));
        for v in &pod.volumes {
            s.insert(format!("volume {p} {}", v.name));
        }
        for ct in &pod.containers {
            s.insert(format!("container {p} {}", ct.name));
            for a in &ct.args {
                s.insert(format!("arg {p} {} {}", ct.name, a.value));
            }
            for e in &ct.env {
                s.insert(format!("env {p} {} {}", ct.name, e.name));
            }
            for m in &ct.mounts {
                let b = if m.bidirectional { " bidirectional" } else { "" };
                s.insert(format!("mount {p} {} {}{b}", ct.name, m.path));
            }
        }
        for role in &pod.roles {
            for (scope, rules) in [("cluster", &role.cluster), ("namespace", &role.namespace)] {
                for r in rules {
                    for g in &r.api_groups {
                        for res in &r.resources {
                            for v in &r.verbs {
                                s.insert(format!(
                                    "rule {p} {} {scope} {g}/{res} {v}",
                                    role.sidecar
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(sc) = &plan.storage_class {
        s.insert(format!(
            "class StorageClass binding={} expansion={}",
            sc.binding_mode.value, sc.allow_expansion.value
        ));
    }
    if plan.snapshot_class.is_some() {
        s.insert("class VolumeSnapshotClass".into());
    }
    if plan.group_snapshot_class.is_some() {
        s.insert("class VolumeGroupSnapshotClass".into());
    }
    s
}

fn facts(caps: &[(Service, &str)]) -> PluginFacts {
    let mut f = PluginFacts {
        name: "matrix.csi.example.com".into(),
        vendor_version: "1".into(),
        ..PluginFacts::default()
    };
    for (service, name) in caps {
        f.list_mut(*service).insert((*name).to_owned());
    }
    f
}

fn plan(facts: &PluginFacts, mode: Mode) -> Plan {
    let table = Table::builtin().expect("the table");
    let options = Options { mode, ..Options::new("matrix:1") };
    derive(facts, &options, &table).expect("derives")
}

/// What changes: lines added with `+`, removed with `-`.
fn diff(before: &BTreeSet<String>, after: &BTreeSet<String>) -> Vec<String> {
    let mut d: Vec<String> = after.difference(before).map(|l| format!("+ {l}")).collect();
    d.extend(before.difference(after).map(|l| format!("- {l}")));
    d.sort();
    d
}

/// The base every capability is switched against: a provisioning plugin with snapshots and
/// the GroupController service.
const BASE: &[(Service, &str)] = &[
    (Service::Plugin, "CONTROLLER_SERVICE"),
    (Service::Plugin, "GROUP_CONTROLLER_SERVICE"),
    (Service::Controller, "CREATE_DELETE_VOLUME"),
    (Service::Controller, "CREATE_DELETE_SNAPSHOT"),
];

fn rules(p: &str, sidecar: &str, scope: &str, group_resource: &str, verbs: &[&str]) -> Vec<String> {
    verbs.iter().map(|v| format!("+ rule {p} {sidecar} {scope} {group_resource} {v}")).collect()
}

fn leases(sidecar: &str) -> Vec<String> {
    rules(
        "controller",
        sidecar,
        "namespace",
        "coordination.k8s.io/leases",
        &["create", "delete", "get", "list", "update", "watch"],
    )
}

/// What each capability adds when switched on against [`BASE`] (for those in the base: what
/// switching it off removes, written as additions). Every capability csikit knows is here;
/// those that change nothing say so with an empty list.
fn expected() -> Vec<((Service, &'static str), Vec<String>)> {
    let mut e = Vec::new();
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let attacher_rules = [
        rules(
            "controller",
            "external-attacher",
            "cluster",
            "/persistentvolumes",
            &["get", "list", "patch", "watch"],
        ),
        rules(
            "controller",
            "external-attacher",
            "cluster",
            "storage.k8s.io/csinodes",
            &["get", "list", "watch"],
        ),
        rules(
            "controller",
            "external-attacher",
            "cluster",
            "storage.k8s.io/volumeattachments",
            &["get", "list", "patch", "watch"],
        ),
        rules(
            "controller",
            "external-attacher",
            "cluster",
            "storage.k8s.io/volumeattachments/status",
            &["patch"],
        ),
        leases("external-attacher"),
        // external-provisioner waits for VolumeAttachments before deleting a volume.
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "storage.k8s.io/volumeattachments",
            &["get", "list", "watch"],
        ),
    ]
    .concat();
    let mut publish = vec![
        "+ container controller csi-attacher".to_owned(),
        "+ arg controller csi-attacher --csi-address=/csi/csi.sock".to_owned(),
        "+ arg controller csi-attacher --leader-election".to_owned(),
        "+ mount controller csi-attacher /csi".to_owned(),
        "+ csidriver attachRequired=true".to_owned(),
        "- csidriver attachRequired=false".to_owned(),
    ];
    publish.extend(attacher_rules);
    e.push(((Service::Controller, "PUBLISH_UNPUBLISH_VOLUME"), sorted(publish)));
    let capacity = [
        vec![
            "+ arg controller csi-provisioner --enable-capacity".to_owned(),
            "+ arg controller csi-provisioner --capacity-ownerref-level=2".to_owned(),
            "+ env controller csi-provisioner NAMESPACE".to_owned(),
            "+ env controller csi-provisioner POD_NAME".to_owned(),
            "+ csidriver storageCapacity=true".to_owned(),
            "- csidriver storageCapacity=false".to_owned(),
        ],
        rules(
            "controller",
            "external-provisioner",
            "namespace",
            "storage.k8s.io/csistoragecapacities",
            &["create", "delete", "get", "list", "patch", "update", "watch"],
        ),
        rules("controller", "external-provisioner", "namespace", "/pods", &["get"]),
        rules("controller", "external-provisioner", "namespace", "apps/replicasets", &["get"]),
    ]
    .concat();
    e.push(((Service::Controller, "GET_CAPACITY"), sorted(capacity)));
    let resizer = [
        vec![
            "+ container controller csi-resizer".to_owned(),
            "+ arg controller csi-resizer --csi-address=/csi/csi.sock".to_owned(),
            "+ arg controller csi-resizer --leader-election".to_owned(),
            "+ mount controller csi-resizer /csi".to_owned(),
            "+ class StorageClass binding=Immediate expansion=true".to_owned(),
            "- class StorageClass binding=Immediate expansion=false".to_owned(),
        ],
        rules(
            "controller",
            "external-resizer",
            "cluster",
            "/persistentvolumes",
            &["get", "list", "patch", "watch"],
        ),
        rules(
            "controller",
            "external-resizer",
            "cluster",
            "/persistentvolumeclaims",
            &["get", "list", "watch"],
        ),
        rules("controller", "external-resizer", "cluster", "/pods", &["get", "list", "watch"]),
        rules(
            "controller",
            "external-resizer",
            "cluster",
            "/persistentvolumeclaims/status",
            &["patch"],
        ),
        rules(
            "controller",
            "external-resizer",
            "cluster",
            "/events",
            &["create", "list", "patch", "update", "watch"],
        ),
        rules(
            "controller",
            "external-resizer",
            "cluster",
            "storage.k8s.io/volumeattributesclasses",
            &["get", "list", "watch"],
        ),
        leases("external-resizer"),
    ]
    .concat();
    // The resizer serves controller and node expansion alike; a class allows expansion then.
    e.push(((Service::Controller, "EXPAND_VOLUME"), sorted(resizer.clone())));
    e.push(((Service::Node, "EXPAND_VOLUME"), sorted(resizer.clone())));
    // Modification alone deploys the resizer, and claims still cannot grow.
    let modify: Vec<String> =
        resizer.into_iter().filter(|l| !l.contains("class StorageClass")).collect();
    e.push(((Service::Controller, "MODIFY_VOLUME"), sorted(modify)));
    e.push((
        (Service::Controller, "PUBLISH_READONLY"),
        // Only with PUBLISH_UNPUBLISH_VOLUME, which the base lacks.
        Vec::new(),
    ));
    // VOLUME_CONDITION alone: the health monitor also needs a way to read volumes
    // (LIST_VOLUMES or GET_VOLUME), which the base lacks; see `health_needs_a_reader`.
    e.push(((Service::Controller, "VOLUME_CONDITION"), Vec::new()));
    let provisioner_off = vec![
        "+ container controller csi-provisioner".to_owned(),
        "+ arg controller csi-provisioner --csi-address=/csi/csi.sock".to_owned(),
        "+ arg controller csi-provisioner --leader-election".to_owned(),
        "+ mount controller csi-provisioner /csi".to_owned(),
        "+ class StorageClass binding=Immediate expansion=false".to_owned(),
    ];
    let provisioner_rules = [
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "/persistentvolumes",
            &["create", "delete", "get", "list", "patch", "watch"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "/persistentvolumeclaims",
            &["get", "list", "update", "watch"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "storage.k8s.io/storageclasses",
            &["get", "list", "watch"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "/events",
            &["create", "list", "patch", "update", "watch"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "snapshot.storage.k8s.io/volumesnapshots",
            &["get", "list", "update", "watch"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "snapshot.storage.k8s.io/volumesnapshotcontents",
            &["get", "list"],
        ),
        rules(
            "controller",
            "external-provisioner",
            "cluster",
            "storage.k8s.io/csinodes",
            &["get", "list", "watch"],
        ),
        rules("controller", "external-provisioner", "cluster", "/nodes", &["get", "list", "watch"]),
        leases("external-provisioner"),
    ]
    .concat();
    e.push((
        (Service::Controller, "CREATE_DELETE_VOLUME"),
        sorted([provisioner_off, provisioner_rules].concat()),
    ));
    let snapshotter = [
        vec![
            "+ container controller csi-snapshotter".to_owned(),
            "+ arg controller csi-snapshotter --csi-address=/csi/csi.sock".to_owned(),
            "+ arg controller csi-snapshotter --leader-election".to_owned(),
            "+ mount controller csi-snapshotter /csi".to_owned(),
            "+ class VolumeSnapshotClass".to_owned(),
        ],
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "/events",
            &["create", "list", "patch", "update", "watch"],
        ),
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "snapshot.storage.k8s.io/volumesnapshotclasses",
            &["get", "list", "watch"],
        ),
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "snapshot.storage.k8s.io/volumesnapshotcontents",
            &["get", "list", "patch", "update", "watch"],
        ),
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "snapshot.storage.k8s.io/volumesnapshotcontents/status",
            &["patch", "update"],
        ),
        leases("external-snapshotter"),
    ]
    .concat();
    e.push(((Service::Controller, "CREATE_DELETE_SNAPSHOT"), sorted(snapshotter)));
    let group = [
        vec![
            "+ arg controller csi-snapshotter --feature-gates=CSIVolumeGroupSnapshot=true"
                .to_owned(),
            "+ class VolumeGroupSnapshotClass".to_owned(),
        ],
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "groupsnapshot.storage.k8s.io/volumegroupsnapshotclasses",
            &["get", "list", "watch"],
        ),
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents",
            &["get", "list", "patch", "update", "watch"],
        ),
        rules(
            "controller",
            "external-snapshotter",
            "cluster",
            "groupsnapshot.storage.k8s.io/volumegroupsnapshotcontents/status",
            &["patch", "update"],
        ),
    ]
    .concat();
    e.push(((Service::GroupController, "CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"), sorted(group)));
    e.push((
        (Service::Plugin, "VOLUME_ACCESSIBILITY_CONSTRAINTS"),
        sorted(vec![
            "+ class StorageClass binding=WaitForFirstConsumer expansion=false".to_owned(),
            "- class StorageClass binding=Immediate expansion=false".to_owned(),
        ]),
    ));
    e.push((
        (Service::Node, "STAGE_UNSTAGE_VOLUME"),
        sorted(vec![
            "+ volume node csi-plugins-dir".to_owned(),
            "+ volume node dev-dir".to_owned(),
            "+ mount node plugin /var/lib/kubelet/plugins/kubernetes.io/csi bidirectional"
                .to_owned(),
            "+ mount node plugin /dev".to_owned(),
        ]),
    ));
    e.push((
        (Service::Node, "VOLUME_MOUNT_GROUP"),
        sorted(vec![
            "+ csidriver fsGroupPolicy=File".to_owned(),
            "- csidriver fsGroupPolicy=ReadWriteOnceWithFSType".to_owned(),
        ]),
    ));
    // Capabilities whose RPCs the sidecars find at run time: nothing to deploy for them.
    for (service, name) in [
        (Service::Controller, "LIST_VOLUMES"),
        (Service::Controller, "LIST_SNAPSHOTS"),
        (Service::Controller, "CLONE_VOLUME"),
        (Service::Controller, "LIST_VOLUMES_PUBLISHED_NODES"),
        (Service::Controller, "GET_VOLUME"),
        (Service::Controller, "SINGLE_NODE_MULTI_WRITER"),
        (Service::Controller, "GET_SNAPSHOT"),
        (Service::Node, "GET_VOLUME_STATS"),
        (Service::Node, "VOLUME_CONDITION"),
        (Service::Node, "SINGLE_NODE_MULTI_WRITER"),
        (Service::VolumeExpansion, "ONLINE"),
        (Service::VolumeExpansion, "OFFLINE"),
        (Service::Plugin, "SNAPSHOT_METADATA_SERVICE"),
        (Service::Plugin, "SNAPSHOT_ACCESSIBILITY_CONSTRAINTS"),
        // CSI v1.13.0's health capabilities: a note on the manifests, no object (see
        // `health_capabilities_get_a_note_and_no_object`).
        (Service::Controller, "GET_VOLUME_HEALTH"),
        (Service::Controller, "LIST_VOLUME_HEALTH"),
        (Service::Node, "GET_VOLUME_HEALTH"),
        (Service::Node, "GET_STORAGE_HEALTH"),
    ] {
        e.push(((service, name), Vec::new()));
    }
    e
}

#[test]
fn health_capabilities_get_a_note_and_no_object() {
    let base = plan(&facts(BASE), Mode::Split);
    for (service, name, says) in [
        (Service::Controller, "GET_VOLUME_HEALTH", "no health monitor is deployed"),
        (Service::Controller, "LIST_VOLUME_HEALTH", "no health monitor is deployed"),
        (Service::Node, "GET_VOLUME_HEALTH", "CSIVolumeHealth feature gate"),
        (Service::Node, "GET_STORAGE_HEALTH", "CSIVolumeHealth feature gate"),
    ] {
        let mut caps = BASE.to_vec();
        caps.push((service, name));
        let with = plan(&facts(&caps), Mode::Split);
        let notes: Vec<&String> = with.warnings.iter().filter(|w| w.contains(name)).collect();
        assert_eq!(notes.len(), 1, "{service} {name}: {:?}", with.warnings);
        assert!(notes[0].contains(says), "{service} {name}: {}", notes[0]);
        assert_eq!(summary(&base), summary(&with), "{service} {name} changed an object");
    }
    // A plugin still on v1.12.0 reports VOLUME_CONDITION (a number v1.13.0 reserved): it is read
    // by that name, and the v1.12.0 health monitor is deployed for it, with no note.
    assert_eq!(Service::Controller.name_of(11), Some("VOLUME_CONDITION"));
    assert!(Service::Controller.named_before("VOLUME_CONDITION"));
    let mut caps = BASE.to_vec();
    caps.extend([(Service::Controller, "VOLUME_CONDITION"), (Service::Controller, "GET_VOLUME")]);
    let with = plan(&facts(&caps), Mode::Split);
    assert!(
        summary(&with).iter().any(|l| l.contains("csi-external-health-monitor-controller")),
        "no health monitor for a v1.12.0 plugin"
    );
    assert!(with.warnings.iter().all(|w| !w.contains("VOLUME_CONDITION")), "{:?}", with.warnings);
}

/// Every value of csikit's capability enums, by list.
fn every_capability() -> BTreeSet<(Service, String)> {
    let mut all = BTreeSet::new();
    for number in 1..64 {
        for service in Service::ALL {
            if let Some(name) = service.name_of(number) {
                all.insert((service, name.to_owned()));
            }
        }
    }
    all
}

#[test]
fn each_capability_changes_exactly_what_it_should() {
    let base = facts(BASE);
    let before = summary(&plan(&base, Mode::Split));
    let expected = expected();
    let listed: BTreeSet<(Service, String)> =
        expected.iter().map(|((s, n), _)| (*s, (*n).to_owned())).collect();
    // Every capability csikit knows is in the matrix, CONTROLLER_SERVICE and
    // GROUP_CONTROLLER_SERVICE aside (the base's layout; see `services_make_the_pods`).
    let mut all = every_capability();
    all.remove(&(Service::Plugin, "CONTROLLER_SERVICE".to_owned()));
    all.remove(&(Service::Plugin, "GROUP_CONTROLLER_SERVICE".to_owned()));
    assert_eq!(all, listed, "the matrix and csikit's capabilities differ");
    let mut failures = Vec::new();
    for ((service, name), want) in expected {
        let mut switched = base.clone();
        let on = switched.list_mut(service).insert(name.to_owned());
        if !on {
            switched.list_mut(service).remove(name);
        }
        let after = summary(&plan(&switched, Mode::Split));
        // Written as what the capability adds: switching one of the base off removes it.
        let got = if on { diff(&before, &after) } else { diff(&after, &before) };
        if got != want {
            failures.push(format!("{service}:{name}\n  expected {want:#?}\n  got {got:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn health_needs_a_reader() {
    let with = |extra: &[(Service, &str)]| {
        let caps: Vec<(Service, &str)> = BASE.iter().chain(extra).copied().collect();
        summary(&plan(&facts(&caps), Mode::Split))
    };
    let monitor = "container controller csi-external-health-monitor-controller";
    assert!(!with(&[(Service::Controller, "VOLUME_CONDITION")]).contains(monitor));
    assert!(!with(&[(Service::Controller, "LIST_VOLUMES")]).contains(monitor));
    for reader in ["LIST_VOLUMES", "GET_VOLUME"] {
        let reader_only = with(&[(Service::Controller, reader)]);
        let both =
            with(&[(Service::Controller, "VOLUME_CONDITION"), (Service::Controller, reader)]);
        let added = diff(&reader_only, &both);
        assert!(added.contains(&format!("+ {monitor}")), "{reader}: {added:#?}");
        assert!(
            added.iter().all(|l| l.contains("external-health-monitor-controller")
                || l.contains("csi-external-health-monitor-controller")),
            "{reader}: {added:#?}"
        );
    }
    // PUBLISH_READONLY with PUBLISH_UNPUBLISH_VOLUME adds one flag.
    let publish = with(&[(Service::Controller, "PUBLISH_UNPUBLISH_VOLUME")]);
    let readonly = with(&[
        (Service::Controller, "PUBLISH_UNPUBLISH_VOLUME"),
        (Service::Controller, "PUBLISH_READONLY"),
    ]);
    assert_eq!(
        diff(&publish, &readonly),
        ["+ arg controller csi-provisioner --controller-publish-readonly=true"]
    );
}

#[test]
fn services_make_the_pods() {
    // Without CONTROLLER_SERVICE: the DaemonSet alone, and attachRequired false.
    let node_only = plan(&facts(&[]), Mode::Split);
    assert_eq!(node_only.pods.len(), 1);
    assert_eq!(node_only.pods[0].kind, PodKind::Node);
    assert!(node_only.pods[0].roles.is_empty());
    assert!(!node_only.csidriver.attach_required.value);
    let names: Vec<&str> = node_only.pods[0].containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["plugin", "node-driver-registrar", "liveness-probe"]);
    // Node EXPAND_VOLUME without a Controller service: no resizer can run, and the author is told.
    let mut f = facts(&[]);
    f.list_mut(Service::Node).insert("EXPAND_VOLUME".into());
    let p = plan(&f, Mode::Split);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("external-resizer") && w.contains("CONTROLLER_SERVICE")),
        "{:?}",
        p.warnings
    );
}

/// The layouts least privilege is checked on: split and distributed with every capability, and
/// Node-only.
fn layouts() -> Vec<(&'static str, Plan)> {
    let mut every = facts(&[]);
    for (service, name) in every_capability() {
        every.list_mut(service).insert(name);
    }
    let mut local = every.clone();
    local.list_mut(Service::Controller).remove("PUBLISH_UNPUBLISH_VOLUME");
    vec![
        ("split", plan(&every, Mode::Split)),
        ("distributed", plan(&local, Mode::Distributed)),
        ("node-only", plan(&facts(&[(Service::Node, "STAGE_UNSTAGE_VOLUME")]), Mode::Split)),
    ]
}

#[test]
fn least_privilege() {
    for (layout, plan) in layouts() {
        for pod in &plan.pods {
            for c in &pod.containers {
                let node_plugin = pod.kind == PodKind::Node && c.sidecar.is_none();
                assert_eq!(c.privileged, node_plugin, "{layout}: {} privileged", c.name);
                assert!(
                    !c.requests.cpu.is_empty() && !c.requests.memory.is_empty(),
                    "{layout}: {}",
                    c.name
                );
                // Only the node plugin mounts with bidirectional propagation.
                assert!(
                    node_plugin || c.mounts.iter().all(|m| !m.bidirectional),
                    "{layout}: {}",
                    c.name
                );
            }
            // A role for each sidecar that talks to the API, none for the others.
            let sidecars: BTreeSet<&str> =
                pod.containers.iter().filter_map(|c| c.sidecar.as_deref()).collect();
            let roles: BTreeSet<&str> = pod.roles.iter().map(|r| r.sidecar.as_str()).collect();
            let without: BTreeSet<&str> = ["node-driver-registrar", "livenessprobe"].into();
            assert_eq!(roles, sidecars.difference(&without).copied().collect(), "{layout}: roles");
        }
    }
}

/// Each sidecar's roles are its published rules (the table holds them as the sidecar's rbac.yaml
/// states them): with every capability on in the controller Deployment every rule applies, none
/// is added; on the nodes, exactly those for the Deployment's leases and ReplicaSets go.
#[test]
fn roles_are_the_published_rules() {
    let table = Table::builtin().expect("the table");
    type Rules = BTreeMap<String, BTreeSet<(String, String, String, String)>>;
    let of_table = |skip: &dyn Fn(&str) -> bool| -> Rules {
        let mut out = Rules::new();
        for s in &table.sidecar {
            for r in &s.rule {
                if r.when.iter().any(|c| skip(&c.to_string())) {
                    continue;
                }
                let scope = format!("{:?}", r.role);
                for g in &r.api_groups {
                    for res in &r.resources {
                        for v in &r.verbs {
                            out.entry(s.name.clone()).or_default().insert((
                                scope.clone(),
                                g.clone(),
                                res.clone(),
                                v.clone(),
                            ));
                        }
                    }
                }
            }
        }
        out
    };
    let of_plan = |plan: &Plan| -> Rules {
        let mut out = Rules::new();
        for pod in &plan.pods {
            for role in &pod.roles {
                for (scope, rules) in [("Cluster", &role.cluster), ("Namespace", &role.namespace)] {
                    for r in rules {
                        for g in &r.api_groups {
                            for res in &r.resources {
                                for v in &r.verbs {
                                    out.entry(role.sidecar.clone()).or_default().insert((
                                        scope.to_owned(),
                                        g.clone(),
                                        res.clone(),
                                        v.clone(),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    };
    let layouts = layouts();
    let split = of_plan(&layouts[0].1);
    assert_eq!(split, of_table(&|c| c == "pod:node"));
    let distributed = of_plan(&layouts[1].1);
    let mut want =
        of_table(&|c| c == "pod:controller" || c == "controller:PUBLISH_UNPUBLISH_VOLUME");
    // Left out of a distributed deployment.
    want.remove("external-attacher");
    want.remove("external-resizer");
    want.remove("external-health-monitor-controller");
    assert_eq!(distributed, want);
}
