//! From what a plugin says it is to what runs where: the pods, their containers with each flag,
//! volume and mount, the RBAC each sidecar needs, the CSIDriver fields and the example classes,
//! every piece with the reason it is there. A pure function of the plugin's facts, the options
//! and the sidecar table; the Kubernetes objects are built from its result ([`Plan`]).

use std::collections::BTreeSet;

use super::plan::{
    ContainerPlan, CsiDriverPlan, EnvPlan, EnvValue, Mode, MountPlan, Plan, PodPlan, RolePlan,
    StorageClassPlan, VolumePlan, reasoned,
};
use super::plugin::{PluginFacts, Service};
use super::table::{
    Condition, Context, Distributed, PodKind, Role, RoleScope, Rule, Sidecar, Table, all_hold,
    parse_minor,
};

/// Where the plugin's socket is inside every pod, and its file name.
pub const SOCKET_DIR: &str = "/csi";
/// The socket's file name.
pub const SOCKET_FILE: &str = "csi.sock";
/// The port the livenessprobe sidecar serves in each pod, which the plugin's probe asks.
pub const HEALTH_PORT: i32 = 9808;

/// A volume lifecycle mode of the CSIDriver object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lifecycle {
    /// Volumes of PersistentVolumes.
    Persistent,
    /// CSI ephemeral inline volumes of a pod.
    Ephemeral,
}

impl Lifecycle {
    /// The name the CSIDriver object uses.
    pub const fn name(self) -> &'static str {
        match self {
            Lifecycle::Persistent => "Persistent",
            Lifecycle::Ephemeral => "Ephemeral",
        }
    }
}

/// What the command line decides (the plugin's facts decide the rest).
#[derive(Debug, Clone)]
pub struct Options {
    /// The plugin's image.
    pub image: String,
    /// The namespace of the namespaced objects.
    pub namespace: String,
    /// The Kubernetes release, `1.34`.
    pub kubernetes: String,
    /// How the plugin is spread.
    pub mode: Mode,
    /// The prefix of object names; default from the plugin's name.
    pub prefix: Option<String>,
    /// The kubelet's root folder on the nodes.
    pub kubelet_dir: String,
    /// The variable the plugin reads its node id from.
    pub node_id_env: String,
    /// The volume lifecycle modes the plugin supports.
    pub lifecycle: BTreeSet<Lifecycle>,
    /// The CSIDriver's fsGroupPolicy, when given.
    pub fs_group_policy: Option<String>,
    /// The plugin mounts with an SELinux context (`seLinuxMount`).
    pub selinux_mount: bool,
    /// The plugin wants NodePublishVolume again periodically (`requiresRepublish`).
    pub requires_republish: bool,
    /// The plugin serves raw block volumes.
    pub block: bool,
    /// Replicas of the controller Deployment.
    pub replicas: i32,
}

impl Options {
    /// The defaults for `image`: namespace `default`, Kubernetes 1.34, split, the standard kubelet
    /// folder, `NODE_ID`, persistent volumes, one controller replica.
    pub fn new(image: &str) -> Options {
        Options {
            image: image.to_owned(),
            namespace: "default".into(),
            kubernetes: "1.34".into(),
            mode: Mode::Split,
            prefix: None,
            kubelet_dir: "/var/lib/kubelet".into(),
            node_id_env: "NODE_ID".into(),
            lifecycle: BTreeSet::from([Lifecycle::Persistent]),
            fs_group_policy: None,
            selinux_mount: false,
            requires_republish: false,
            block: false,
            replicas: 1,
        }
    }
}

/// Why a plugin cannot be deployed as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeriveError {
    /// The Kubernetes release is not one the table is written for.
    #[error("unknown Kubernetes version '{given}': csikit writes manifests for {known}")]
    Kubernetes {
        /// As given.
        given: String,
        /// The table's releases.
        known: String,
    },
    /// The plugin's name cannot be a CSIDriver object's name.
    #[error("plugin name '{name}': {reason}")]
    PluginName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A distributed deployment cannot serve the plugin.
    #[error("{0}")]
    Distributed(String),
    /// An option's value is refused.
    #[error("{0}")]
    Option(String),
}

/// The RPCs a capability obliges the plugin to implement, from csikit's tables.
pub fn obliged_rpcs(service: Service, capability: &str) -> Vec<&'static str> {
    let Some(rpc_service) = service.rpc_service() else { return Vec::new() };
    <csikit::v1::server::Spec as csikit::server::PluginSpec>::OBLIGATIONS
        .iter()
        .filter(|o| o.if_any.iter().any(|(s, name, _)| *s == rpc_service && *name == capability))
        .map(|o| o.rpc)
        .collect()
}

/// `capability (calls A, B)` for the comments.
fn naming(condition: &Condition) -> String {
    match condition.capability() {
        Some((service, name)) => {
            let rpcs = obliged_rpcs(service, name);
            if rpcs.is_empty() {
                format!("{service} capability {name}")
            } else {
                format!("{service} capability {name} (which obliges {})", rpcs.join(", "))
            }
        }
        None => condition.to_string(),
    }
}

/// The conditions of a table row that hold, as the reason it applies.
fn because(when: &[Condition], when_any: &[Condition], cx: &Context<'_>) -> String {
    let mut held: Vec<String> = when
        .iter()
        .chain(when_any.iter().filter(|c| c.holds(cx)))
        .filter(|c| c.capability().is_some())
        .map(naming)
        .collect();
    held.dedup();
    held.join("; ")
}

/// A DNS-1123 label: lowercase letters, digits and `-`, starting and ending with an
/// alphanumeric, at most 63 characters.
pub fn check_label(what: &str, value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} '{value}' is not a DNS label (lowercase letters, digits and '-', starting \
             and ending with a letter or digit, at most 63 characters)"
        ))
    }
}

/// The prefix of object names a plugin name gives: its first label (`hostpath` of
/// `hostpath.csi.k8s.io`).
fn default_prefix(name: &str) -> String {
    name.split('.').next().unwrap_or(name).to_owned()
}

/// Derives what to deploy for `facts`.
///
/// # Errors
///
/// When the Kubernetes release is unknown, the plugin name cannot name a CSIDriver, an option is
/// refused, or a distributed deployment cannot serve what the plugin needs.
pub fn derive(facts: &PluginFacts, options: &Options, table: &Table) -> Result<Plan, DeriveError> {
    let kubernetes = match parse_minor(&options.kubernetes) {
        Some((major, minor)) if table.kubernetes.contains(&format!("{major}.{minor}")) => {
            format!("{major}.{minor}")
        }
        _ => {
            return Err(DeriveError::Kubernetes {
                given: options.kubernetes.clone(),
                known: table.kubernetes.join(", "),
            });
        }
    };
    crate::new_driver::scaffold::check_plugin_name(&facts.name)
        .map_err(|e| DeriveError::PluginName { name: facts.name.clone(), reason: e.to_string() })?;
    if facts.name.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(DeriveError::PluginName {
            name: facts.name.clone(),
            reason: "a CSIDriver object is named after the plugin, and Kubernetes names are \
                     lowercase"
                .into(),
        });
    }
    let prefix = options.prefix.clone().unwrap_or_else(|| default_prefix(&facts.name));
    // The longest name made from it is `PREFIX-external-health-monitor-controller` (41 more).
    check_label("the name prefix", &prefix).map_err(DeriveError::Option)?;
    if prefix.len() > 22 {
        return Err(DeriveError::Option(format!(
            "the name prefix '{prefix}' is longer than 22 characters (object names built from \
             it would pass 63); pass --name"
        )));
    }
    check_label("the namespace", &options.namespace).map_err(DeriveError::Option)?;
    check_label(
        "the node id variable",
        &options.node_id_env.to_ascii_lowercase().replace('_', "-"),
    )
    .map_err(|_| {
        DeriveError::Option(format!(
            "'{}' is not an environment variable name",
            options.node_id_env
        ))
    })?;
    if !options.kubelet_dir.starts_with('/') || options.kubelet_dir.len() < 2 {
        return Err(DeriveError::Option(format!(
            "--kubelet-dir '{}' is not an absolute folder",
            options.kubelet_dir
        )));
    }
    if let Some(policy) = &options.fs_group_policy
        && !["None", "File", "ReadWriteOnceWithFSType"].contains(&policy.as_str())
    {
        return Err(DeriveError::Option(format!(
            "--fs-group-policy '{policy}': expected None, File or ReadWriteOnceWithFSType"
        )));
    }
    if options.replicas < 1 {
        return Err(DeriveError::Option("--replicas must be at least 1".into()));
    }
    if options.lifecycle.is_empty() {
        return Err(DeriveError::Option("at least one volume lifecycle mode is needed".into()));
    }

    let mut plan = Plan {
        driver: facts.name.clone(),
        vendor_version: facts.vendor_version.clone(),
        prefix: prefix.clone(),
        namespace: options.namespace.clone(),
        kubernetes: kubernetes.clone(),
        mode: options.mode,
        replicas: options.replicas,
        csidriver: csidriver(facts, options),
        pods: Vec::new(),
        storage_class: None,
        snapshot_class: None,
        group_snapshot_class: None,
        left_out: Vec::new(),
        warnings: Vec::new(),
    };
    let controller_service = facts.has(Service::Plugin, "CONTROLLER_SERVICE");
    if options.mode == Mode::Distributed {
        if !facts.has(Service::Plugin, "VOLUME_ACCESSIBILITY_CONSTRAINTS") {
            return Err(DeriveError::Distributed(
                "distributed provisioning is for node-local storage, which the plugin states \
                 with VOLUME_ACCESSIBILITY_CONSTRAINTS; it does not report it"
                    .into(),
            ));
        }
        if !facts.has(Service::Controller, "CREATE_DELETE_VOLUME") {
            return Err(DeriveError::Distributed(
                "distributed provisioning runs external-provisioner on every node; the plugin \
                 does not report CREATE_DELETE_VOLUME"
                    .into(),
            ));
        }
    }
    for feature in &table.kubernetes_feature {
        let needed = parse_minor(&feature.since);
        let have = parse_minor(&kubernetes);
        if let (Some((service, name)), Some(needed), Some(have)) =
            (feature.capability.capability(), needed, have)
            && facts.has(service, name)
            && have < needed
        {
            plan.warnings.push(format!(
                "the plugin reports {service} capability {name}, which Kubernetes {kubernetes} \
                 does not use: {} ({})",
                feature.why, feature.source
            ));
        }
    }

    for note in &table.capability_note {
        if let Some((service, name)) = note.capability.capability()
            && facts.has(service, name)
        {
            plan.warnings.push(format!(
                "the plugin reports {service} capability {name}: {} ({})",
                note.why, note.source
            ));
        }
    }

    // Which sidecars are needed, and where each goes.
    let base = Context { facts, pod: None, block: options.block };
    let mut controller_sidecars = Vec::new();
    let mut node_sidecars = Vec::new();
    for sidecar in &table.sidecar {
        let needed = all_hold(&sidecar.when, &base)
            && (sidecar.when_any.is_empty() || sidecar.when_any.iter().any(|c| c.holds(&base)));
        if !needed {
            continue;
        }
        match (sidecar.role, options.mode) {
            (Role::Node, _) => node_sidecars.push(sidecar),
            (Role::Both, _) => {
                node_sidecars.push(sidecar);
                controller_sidecars.push(sidecar);
            }
            (Role::Controller, Mode::Split) if controller_service => {
                controller_sidecars.push(sidecar);
            }
            (Role::Controller, Mode::Split) => {
                let why = because(&sidecar.when, &sidecar.when_any, &base);
                plan.left_out.push(format!(
                    "{} ({why}): it calls the Controller service, which the plugin does not \
                     serve (no CONTROLLER_SERVICE)",
                    sidecar.name
                ));
            }
            (Role::Controller, Mode::Distributed) => match sidecar.distributed {
                Some(Distributed::OnNodes) => node_sidecars.push(sidecar),
                Some(Distributed::Refused) => {
                    let why = because(&sidecar.when, &sidecar.when_any, &base);
                    return Err(DeriveError::Distributed(format!(
                        "the plugin reports {why}, which needs {}: {}",
                        sidecar.name,
                        sidecar.distributed_why.as_deref().unwrap_or_default()
                    )));
                }
                Some(Distributed::LeftOut) | None => {
                    let why = because(&sidecar.when, &sidecar.when_any, &base);
                    plan.left_out.push(format!(
                        "{} ({why}): {}",
                        sidecar.name,
                        sidecar.distributed_why.as_deref().unwrap_or_default()
                    ));
                }
            },
        }
    }
    for left in &plan.left_out {
        plan.warnings.push(format!("not deployed: {left}"));
    }

    let with_controller = options.mode == Mode::Split && controller_service;
    let inputs = PodInputs { facts, options, table, prefix: &prefix };
    if with_controller {
        plan.pods.push(controller_pod(inputs, &controller_sidecars));
    }
    plan.pods.push(node_pod(inputs, &node_sidecars));

    let deployed = |name: &str| {
        plan.pods.iter().any(|p| p.containers.iter().any(|c| c.sidecar.as_deref() == Some(name)))
    };
    // The CSIDriver fields that depend on what is deployed.
    let attacher = deployed("external-attacher");
    plan.csidriver.attach_required = if attacher {
        reasoned(
            true,
            format!(
                "the plugin reports {}: the kubelet waits for external-attacher's VolumeAttachment",
                naming(&cap(Service::Controller, "PUBLISH_UNPUBLISH_VOLUME"))
            ),
        )
    } else {
        reasoned(
            false,
            "the plugin does not report PUBLISH_UNPUBLISH_VOLUME: no VolumeAttachment to wait for",
        )
    };
    let capacity =
        deployed("external-provisioner") && facts.has(Service::Controller, "GET_CAPACITY");
    plan.csidriver.storage_capacity = if capacity {
        reasoned(
            true,
            format!(
                "the plugin reports {}: external-provisioner publishes CSIStorageCapacity objects \
                 and the scheduler reads them",
                naming(&cap(Service::Controller, "GET_CAPACITY"))
            ),
        )
    } else {
        reasoned(false, "no GET_CAPACITY: no capacity is published for the scheduler to read")
    };
    if deployed("external-provisioner") {
        let topology = facts.has(Service::Plugin, "VOLUME_ACCESSIBILITY_CONSTRAINTS");
        plan.storage_class = Some(StorageClassPlan {
            why: format!(
                "an example class for dynamic provisioning: the plugin reports {}",
                naming(&cap(Service::Controller, "CREATE_DELETE_VOLUME"))
            ),
            binding_mode: if topology {
                reasoned(
                    "WaitForFirstConsumer".to_owned(),
                    "the plugin reports VOLUME_ACCESSIBILITY_CONSTRAINTS: a volume is created \
                     once its pod has a node, within that node's topology",
                )
            } else {
                reasoned(
                    "Immediate".to_owned(),
                    "no VOLUME_ACCESSIBILITY_CONSTRAINTS: every node reaches every volume",
                )
            },
            allow_expansion: if deployed("external-resizer")
                && (facts.has(Service::Controller, "EXPAND_VOLUME")
                    || facts.has(Service::Node, "EXPAND_VOLUME"))
            {
                reasoned(true, "the plugin reports EXPAND_VOLUME and external-resizer is deployed")
            } else {
                reasoned(false, "no EXPAND_VOLUME served: claims of this class cannot grow")
            },
        });
    }
    if deployed("external-snapshotter") {
        plan.snapshot_class = Some(reasoned(
            (),
            format!(
                "an example class for snapshots: the plugin reports {}",
                naming(&cap(Service::Controller, "CREATE_DELETE_SNAPSHOT"))
            ),
        ));
        if facts.has(Service::GroupController, "CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT") {
            plan.group_snapshot_class = Some(reasoned(
                (),
                format!(
                    "an example class for group snapshots: the plugin reports {}",
                    naming(&cap(
                        Service::GroupController,
                        "CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"
                    ))
                ),
            ));
        }
    }
    Ok(plan)
}

fn cap(service: Service, name: &str) -> Condition {
    Condition::Capability(service, name.to_owned())
}

/// The CSIDriver fields the plugin's facts and the options decide alone (attachRequired and
/// storageCapacity follow from what is deployed, later).
fn csidriver(facts: &PluginFacts, options: &Options) -> CsiDriverPlan {
    let ephemeral = options.lifecycle.contains(&Lifecycle::Ephemeral);
    let modes: Vec<String> = options.lifecycle.iter().map(|m| m.name().to_owned()).collect();
    let mount_group = facts.has(Service::Node, "VOLUME_MOUNT_GROUP");
    CsiDriverPlan {
        attach_required: reasoned(false, ""),
        storage_capacity: reasoned(false, ""),
        pod_info_on_mount: if ephemeral {
            reasoned(
                true,
                "Ephemeral volumes: the plugin learns a volume is ephemeral (and whose it is) from \
                 the pod information in its volume context",
            )
        } else {
            reasoned(false, "persistent volumes only: the plugin needs no pod information")
        },
        fs_group_policy: match (&options.fs_group_policy, mount_group) {
            (Some(policy), _) => reasoned(policy.clone(), "given with --fs-group-policy"),
            (None, true) => reasoned(
                "File".to_owned(),
                format!(
                    "the plugin reports {}: the kubelet hands the pod's fsGroup to the plugin, \
                     which applies it whatever the volume's fs type or access mode",
                    naming(&cap(Service::Node, "VOLUME_MOUNT_GROUP"))
                ),
            ),
            (None, false) => reasoned(
                "ReadWriteOnceWithFSType".to_owned(),
                "Kubernetes' default, written out: the kubelet changes ownership to the pod's \
                 fsGroup only for a ReadWriteOnce volume with an fs type (no VOLUME_MOUNT_GROUP; \
                 --fs-group-policy changes it)",
            ),
        },
        volume_lifecycle_modes: reasoned(
            modes,
            if ephemeral {
                "--lifecycle names them: ephemeral inline volumes are served"
            } else {
                "persistent volumes (--lifecycle ephemeral adds inline volumes)"
            },
        ),
        se_linux_mount: if options.selinux_mount {
            reasoned(
                true,
                "--selinux-mount: the plugin mounts with -o context, so the kubelet skips \
                 relabelling",
            )
        } else {
            reasoned(
                false,
                "no capability says the plugin mounts with an SELinux context (--selinux-mount)",
            )
        },
        requires_republish: if options.requires_republish {
            reasoned(
                true,
                "--requires-republish: the kubelet calls NodePublishVolume again periodically",
            )
        } else {
            reasoned(false, "NodePublishVolume once per mount (--requires-republish changes it)")
        },
    }
}

fn socket_volume(host: Option<String>, why: &str) -> VolumePlan {
    VolumePlan {
        name: "socket-dir".into(),
        host_type: host.as_ref().map(|_| "DirectoryOrCreate".to_owned()),
        host_path: host,
        why: why.into(),
    }
}

fn socket_mount() -> MountPlan {
    MountPlan { volume: "socket-dir".into(), path: SOCKET_DIR.into(), bidirectional: false }
}

/// The plugin's own container.
fn driver_container(options: &Options, table: &Table, pod: PodKind) -> ContainerPlan {
    let endpoint = format!("unix://{SOCKET_DIR}/{SOCKET_FILE}");
    let mut env = vec![EnvPlan {
        name: "CSI_ENDPOINT".into(),
        value: EnvValue::Text(endpoint),
        why: "where the plugin serves; the sidecars dial the same socket".into(),
    }];
    if pod == PodKind::Node {
        env.push(EnvPlan {
            name: options.node_id_env.clone(),
            value: EnvValue::Field("spec.nodeName".into()),
            why: "NodeGetInfo's node id: the Kubernetes node's name".into(),
        });
    }
    ContainerPlan {
        name: "plugin".into(),
        sidecar: None,
        image: options.image.clone(),
        why: match pod {
            PodKind::Controller => "the plugin, whose Controller service the sidecars call".into(),
            PodKind::Node => "the plugin, whose Node service the kubelet calls".into(),
        },
        args: Vec::new(),
        env,
        mounts: vec![socket_mount()],
        privileged: false,
        requests: table.driver.requests.clone(),
        probe: Some((
            HEALTH_PORT,
            "/healthz".into(),
            "livenessprobe answers from the plugin's Probe".into(),
        )),
    }
}

/// A sidecar's container in a pod.
fn sidecar_container(
    sidecar: &Sidecar,
    cx: &Context<'_>,
    registration_path: &str,
) -> ContainerPlan {
    let fill = |arg: &str| {
        arg.replace("{csi_address}", &format!("{SOCKET_DIR}/{SOCKET_FILE}"))
            .replace("{registration_path}", registration_path)
            .replace("{health_port}", &HEALTH_PORT.to_string())
    };
    let args = sidecar
        .flag
        .iter()
        .filter(|f| all_hold(&f.when, cx))
        .map(|f| {
            let held = because(&f.when, &[], cx);
            let why = if held.is_empty() { f.why.clone() } else { format!("{held}: {}", f.why) };
            reasoned(fill(&f.arg), why)
        })
        .collect();
    let env = sidecar
        .env
        .iter()
        .filter(|e| all_hold(&e.when, cx))
        .map(|e| EnvPlan {
            name: e.name.clone(),
            value: EnvValue::Field(e.field.clone()),
            why: e.why.clone(),
        })
        .collect();
    let held = because(&sidecar.when, &sidecar.when_any, cx);
    let why =
        if held.is_empty() { sidecar.why.clone() } else { format!("{held}: {}", sidecar.why) };
    let mut mounts = vec![socket_mount()];
    if sidecar.name == "node-driver-registrar" {
        mounts.push(MountPlan {
            volume: "registration-dir".into(),
            path: "/registration".into(),
            bidirectional: false,
        });
    }
    ContainerPlan {
        name: sidecar.container.clone(),
        sidecar: Some(sidecar.name.clone()),
        image: sidecar.image_ref(),
        why: format!("{} {}: {why}", sidecar.name, sidecar.version),
        args,
        env,
        mounts,
        privileged: false,
        requests: sidecar.requests.clone(),
        probe: sidecar.probe.as_ref().map(|p| (p.port, p.path.clone(), p.why.clone())),
    }
}

/// The RBAC a sidecar needs in a pod, if any.
fn role(sidecar: &Sidecar, cx: &Context<'_>, prefix: &str) -> Option<RolePlan> {
    let rules = |scope: RoleScope| -> Vec<Rule> {
        sidecar.rule.iter().filter(|r| r.role == scope && all_hold(&r.when, cx)).cloned().collect()
    };
    let plan = RolePlan {
        sidecar: sidecar.name.clone(),
        name: format!("{prefix}-{}", sidecar.name),
        source: sidecar.rbac_source.clone(),
        cluster: rules(RoleScope::Cluster),
        namespace: rules(RoleScope::Namespace),
    };
    (!plan.cluster.is_empty() || !plan.namespace.is_empty()).then_some(plan)
}

/// A pod's containers (the plugin's first, then each sidecar's) and the roles its sidecars need.
fn with_sidecars(
    driver: ContainerPlan,
    sidecars: &[&Sidecar],
    cx: &Context<'_>,
    prefix: &str,
    registration_path: &str,
) -> (Vec<ContainerPlan>, Vec<RolePlan>) {
    let mut containers = vec![driver];
    let mut roles = Vec::new();
    for sidecar in sidecars {
        containers.push(sidecar_container(sidecar, cx, registration_path));
        roles.extend(role(sidecar, cx, prefix));
    }
    (containers, roles)
}

/// What each pod is built from, besides its sidecars: the plugin's facts, the options, the
/// sidecar table and the prefix of the objects' names.
#[derive(Clone, Copy)]
struct PodInputs<'a> {
    facts: &'a PluginFacts,
    options: &'a Options,
    table: &'a Table,
    prefix: &'a str,
}

fn controller_pod(inputs: PodInputs<'_>, sidecars: &[&Sidecar]) -> PodPlan {
    let PodInputs { facts, options, table, prefix } = inputs;
    let cx = Context { facts, pod: Some(PodKind::Controller), block: options.block };
    let driver = driver_container(options, table, PodKind::Controller);
    let (containers, roles) = with_sidecars(driver, sidecars, &cx, prefix, "");
    PodPlan {
        kind: PodKind::Controller,
        name: format!("{prefix}-controller"),
        why: format!(
            "the plugin reports {}: its Controller service and the sidecars that call it, once \
             for the cluster",
            naming(&cap(Service::Plugin, "CONTROLLER_SERVICE"))
        ),
        service_account: format!("{prefix}-controller"),
        containers,
        volumes: vec![socket_volume(
            None,
            "the plugin's socket, shared by the containers of this pod only",
        )],
        roles,
    }
}

fn node_pod(inputs: PodInputs<'_>, sidecars: &[&Sidecar]) -> PodPlan {
    let PodInputs { facts, options, table, prefix } = inputs;
    let kubelet = options.kubelet_dir.trim_end_matches('/');
    let socket_host = format!("{kubelet}/plugins/{}", facts.name);
    let registration_path = format!("{socket_host}/{SOCKET_FILE}");
    let cx = Context { facts, pod: Some(PodKind::Node), block: options.block };
    let mut driver = driver_container(options, table, PodKind::Node);
    driver.privileged = true;
    let mut volumes = vec![
        socket_volume(
            Some(socket_host),
            "the plugin's socket, in the folder the kubelet looks for it in",
        ),
        VolumePlan {
            name: "registration-dir".into(),
            host_path: Some(format!("{kubelet}/plugins_registry")),
            host_type: Some("Directory".into()),
            why: "where node-driver-registrar registers the plugin with the kubelet".into(),
        },
        VolumePlan {
            name: "mountpoint-dir".into(),
            host_path: Some(format!("{kubelet}/pods")),
            host_type: Some("Directory".into()),
            why: "NodePublishVolume's target paths are below it".into(),
        },
    ];
    driver.mounts.push(MountPlan {
        volume: "mountpoint-dir".into(),
        path: format!("{kubelet}/pods"),
        bidirectional: true,
    });
    let staging = facts.has(Service::Node, "STAGE_UNSTAGE_VOLUME");
    if staging || options.block {
        let why = match (staging, options.block) {
            (true, _) => format!(
                "the plugin reports {}: staging paths are below it, and the mounts made there \
                 must reach the host",
                naming(&cap(Service::Node, "STAGE_UNSTAGE_VOLUME"))
            ),
            (false, _) => "--block: the kubelet publishes raw block volumes below it".to_owned(),
        };
        volumes.push(VolumePlan {
            name: "csi-plugins-dir".into(),
            host_path: Some(format!("{kubelet}/plugins/kubernetes.io/csi")),
            host_type: Some("DirectoryOrCreate".into()),
            why,
        });
        driver.mounts.push(MountPlan {
            volume: "csi-plugins-dir".into(),
            path: format!("{kubelet}/plugins/kubernetes.io/csi"),
            bidirectional: true,
        });
        volumes.push(VolumePlan {
            name: "dev-dir".into(),
            host_path: Some("/dev".into()),
            host_type: Some("Directory".into()),
            why: "devices attached after the pod started appear here (a container's own /dev is \
                  a copy from its start)"
                .into(),
        });
        driver.mounts.push(MountPlan {
            volume: "dev-dir".into(),
            path: "/dev".into(),
            bidirectional: false,
        });
    }
    let (containers, roles) = with_sidecars(driver, sidecars, &cx, prefix, &registration_path);
    let why = match options.mode {
        Mode::Distributed => "distributed provisioning: on every node, the plugin with its Node \
                              service, the kubelet's registration and the sidecars that act for \
                              that node's volumes"
            .to_owned(),
        Mode::Split => "on every node: the plugin's Node service, which the kubelet calls to \
                        mount volumes into pods, and its registration with the kubelet"
            .to_owned(),
    };
    PodPlan {
        kind: PodKind::Node,
        name: format!("{prefix}-node"),
        why,
        service_account: format!("{prefix}-node"),
        containers,
        volumes,
        roles,
    }
}
