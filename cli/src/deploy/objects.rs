//! The Kubernetes objects of a [`Plan`], built as typed values (k8s-openapi's, and small serde
//! types for the snapshot classes, which are CRDs, and the kustomization) and serialised once
//! each, with the comment that says why the object and each of its parts is there.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, HTTPGetAction,
    HostPathVolumeSource, Namespace, ObjectFieldSelector, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, SecurityContext, ServiceAccount, Volume, VolumeMount,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::api::storage::v1::{CSIDriver, CSIDriverSpec, StorageClass};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

use super::plan::{ContainerPlan, EnvValue, Plan, PodPlan, Reasoned, RolePlan};
use super::table::PodKind;
use super::table::Rule as TableRule;

/// One serialised object and the comment above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Its kind: `Deployment`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// Comment lines, without the `# `.
    pub comment: Vec<String>,
    /// The object as YAML.
    pub yaml: String,
}

/// Why an object could not be serialised (a bug: typed values always serialise).
#[derive(Debug, thiserror::Error)]
#[error("serialising {kind} '{name}': {message}")]
pub struct SerialiseError {
    kind: &'static str,
    name: String,
    message: String,
}

fn document(
    kind: &'static str,
    name: &str,
    comment: Vec<String>,
    value: &impl Serialize,
) -> Result<Document, SerialiseError> {
    let yaml = serde_saphyr::to_string(value).map_err(|e| SerialiseError {
        kind,
        name: name.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Document { kind, name: name.to_owned(), comment, yaml })
}

/// The labels every object carries.
fn labels(plan: &Plan, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), format!("{}-{component}", plan.prefix)),
        ("app.kubernetes.io/instance".to_owned(), plan.driver.clone()),
        ("app.kubernetes.io/component".to_owned(), component.to_owned()),
        ("app.kubernetes.io/part-of".to_owned(), plan.prefix.clone()),
        ("app.kubernetes.io/managed-by".to_owned(), "csikit".to_owned()),
    ])
}

fn meta(plan: &Plan, name: &str, component: &str, namespaced: bool) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespaced.then(|| plan.namespace.clone()),
        labels: Some(labels(plan, component)),
        ..ObjectMeta::default()
    }
}

/// A VolumeSnapshotClass (snapshot.storage.k8s.io/v1) or VolumeGroupSnapshotClass
/// (groupsnapshot.storage.k8s.io/v1): CRDs of external-snapshotter, of the same shape.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SnapshotClass {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    driver: String,
    deletion_policy: &'static str,
}

/// A kustomize Kustomization.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Kustomization {
    api_version: &'static str,
    kind: &'static str,
    namespace: String,
    resources: Vec<String>,
}

impl Kustomization {
    /// A kustomization listing `resources`, with every namespaced object in `namespace`.
    pub fn new(namespace: &str, resources: Vec<String>) -> Kustomization {
        Kustomization {
            api_version: "kustomize.config.k8s.io/v1beta1",
            kind: "Kustomization",
            namespace: namespace.to_owned(),
            resources,
        }
    }

    /// As YAML.
    ///
    /// # Errors
    ///
    /// Never in practice: plain strings.
    pub fn to_yaml(&self) -> Result<String, SerialiseError> {
        Ok(document("Kustomization", "kustomization", Vec::new(), self)?.yaml)
    }
}

/// A value as a comment shows it.
trait Shown {
    fn shown(&self) -> String;
}

impl Shown for bool {
    fn shown(&self) -> String {
        self.to_string()
    }
}

impl Shown for String {
    fn shown(&self) -> String {
        self.clone()
    }
}

impl Shown for Vec<String> {
    fn shown(&self) -> String {
        self.join(", ")
    }
}

/// A reason as a comment line: `field: value: why`.
fn line<T: Shown>(field: &str, r: &Reasoned<T>) -> String {
    format!("{field} {}: {}", r.value.shown(), r.why)
}

/// Every object of the plan, in the order a reader meets them.
///
/// # Errors
///
/// When an object does not serialise (a bug).
pub fn build(plan: &Plan) -> Result<Vec<Document>, SerialiseError> {
    let mut docs = Vec::new();
    if !["default", "kube-system", "kube-public"].contains(&plan.namespace.as_str()) {
        let ns = Namespace {
            metadata: meta(plan, &plan.namespace, "namespace", false),
            ..Namespace::default()
        };
        docs.push(document(
            "Namespace",
            &plan.namespace,
            vec!["the namespace of the driver's pods, ServiceAccounts and Roles".into()],
            &ns,
        )?);
    }
    docs.push(csidriver(plan)?);
    for pod in &plan.pods {
        let sa = ServiceAccount {
            metadata: meta(plan, &pod.service_account, &component(pod), true),
            // A pod whose sidecars use no Kubernetes API gets no token at all.
            automount_service_account_token: Some(!pod.roles.is_empty()),
            ..ServiceAccount::default()
        };
        let why = if pod.roles.is_empty() {
            format!(
                "the {} pod's: nothing in it calls the Kubernetes API, so no token is mounted",
                component(pod)
            )
        } else {
            format!(
                "the {} pod's: the roles of its sidecars ({}) are bound to it",
                component(pod),
                pod.roles.iter().map(|r| r.sidecar.as_str()).collect::<Vec<_>>().join(", ")
            )
        };
        docs.push(document("ServiceAccount", &pod.service_account, vec![why], &sa)?);
    }
    for pod in &plan.pods {
        for role in &pod.roles {
            rbac(plan, pod, role, &mut docs)?;
        }
    }
    for pod in &plan.pods {
        docs.push(workload(plan, pod)?);
    }
    if let Some(class) = &plan.storage_class {
        let sc = StorageClass {
            metadata: meta(plan, &plan.prefix, "storageclass", false),
            provisioner: plan.driver.clone(),
            volume_binding_mode: Some(class.binding_mode.value.clone()),
            allow_volume_expansion: Some(class.allow_expansion.value),
            reclaim_policy: Some("Delete".into()),
            ..StorageClass::default()
        };
        docs.push(document(
            "StorageClass",
            &plan.prefix,
            vec![
                class.why.clone(),
                line("volumeBindingMode", &class.binding_mode),
                line("allowVolumeExpansion", &class.allow_expansion),
                "parameters: none; the plugin's CreateVolume receives what is added here".into(),
            ],
            &sc,
        )?);
    }
    if let Some(class) = &plan.snapshot_class {
        let vsc = SnapshotClass {
            api_version: "snapshot.storage.k8s.io/v1",
            kind: "VolumeSnapshotClass",
            metadata: meta(plan, &plan.prefix, "volumesnapshotclass", false),
            driver: plan.driver.clone(),
            deletion_policy: "Delete",
        };
        docs.push(document(
            "VolumeSnapshotClass",
            &plan.prefix,
            vec![
                class.why.clone(),
                "its CRD and the snapshot-controller come from external-snapshotter, installed \
                 once per cluster"
                    .into(),
            ],
            &vsc,
        )?);
    }
    if let Some(class) = &plan.group_snapshot_class {
        let vgsc = SnapshotClass {
            api_version: "groupsnapshot.storage.k8s.io/v1",
            kind: "VolumeGroupSnapshotClass",
            metadata: meta(plan, &plan.prefix, "volumegroupsnapshotclass", false),
            driver: plan.driver.clone(),
            deletion_policy: "Delete",
        };
        docs.push(document(
            "VolumeGroupSnapshotClass",
            &plan.prefix,
            vec![
                class.why.clone(),
                "its CRD comes from external-snapshotter, with the snapshot-controller's \
                 CSIVolumeGroupSnapshot gate on"
                    .into(),
            ],
            &vgsc,
        )?);
    }
    Ok(docs)
}

fn component(pod: &PodPlan) -> String {
    match pod.kind {
        PodKind::Controller => "controller".into(),
        PodKind::Node => "node".into(),
    }
}

fn csidriver(plan: &Plan) -> Result<Document, SerialiseError> {
    let c = &plan.csidriver;
    let driver = CSIDriver {
        metadata: meta(plan, &plan.driver, "csidriver", false),
        spec: CSIDriverSpec {
            attach_required: Some(c.attach_required.value),
            storage_capacity: Some(c.storage_capacity.value),
            pod_info_on_mount: Some(c.pod_info_on_mount.value),
            fs_group_policy: Some(c.fs_group_policy.value.clone()),
            volume_lifecycle_modes: Some(c.volume_lifecycle_modes.value.clone()),
            se_linux_mount: Some(c.se_linux_mount.value),
            requires_republish: Some(c.requires_republish.value),
            ..CSIDriverSpec::default()
        },
    };
    document(
        "CSIDriver",
        &plan.driver,
        vec![
            format!("how Kubernetes treats the volumes of {} {}", plan.driver, plan.vendor_version),
            line("attachRequired", &c.attach_required),
            line("storageCapacity", &c.storage_capacity),
            line("podInfoOnMount", &c.pod_info_on_mount),
            line("fsGroupPolicy", &c.fs_group_policy),
            line("volumeLifecycleModes", &c.volume_lifecycle_modes),
            line("seLinuxMount", &c.se_linux_mount),
            line("requiresRepublish", &c.requires_republish),
        ],
        &driver,
    )
}

fn rule(r: &TableRule) -> PolicyRule {
    PolicyRule {
        api_groups: Some(r.api_groups.clone()),
        resources: Some(r.resources.clone()),
        verbs: r.verbs.clone(),
        ..PolicyRule::default()
    }
}

fn rule_comments(rules: &[TableRule]) -> Vec<String> {
    rules
        .iter()
        .filter_map(|r| r.why.as_ref().map(|why| format!("  {}: {why}", r.resources.join(", "))))
        .collect()
}

fn rbac(
    plan: &Plan,
    pod: &PodPlan,
    role: &RolePlan,
    docs: &mut Vec<Document>,
) -> Result<(), SerialiseError> {
    let subject = Subject {
        kind: "ServiceAccount".into(),
        name: pod.service_account.clone(),
        namespace: Some(plan.namespace.clone()),
        ..Subject::default()
    };
    let component = format!("{}-rbac", role.sidecar);
    if !role.cluster.is_empty() {
        let cr = ClusterRole {
            metadata: meta(plan, &role.name, &component, false),
            rules: Some(role.cluster.iter().map(rule).collect()),
            ..ClusterRole::default()
        };
        let mut comment = vec![format!(
            "what {} needs cluster-wide: the rules of its {}",
            role.sidecar, role.source
        )];
        comment.extend(rule_comments(&role.cluster));
        docs.push(document("ClusterRole", &role.name, comment, &cr)?);
        let binding = ClusterRoleBinding {
            metadata: meta(plan, &role.name, &component, false),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "ClusterRole".into(),
                name: role.name.clone(),
            },
            subjects: Some(vec![subject.clone()]),
        };
        docs.push(document(
            "ClusterRoleBinding",
            &role.name,
            vec![format!("{}'s ClusterRole, for the {} pod", role.sidecar, component_of(pod))],
            &binding,
        )?);
    }
    if !role.namespace.is_empty() {
        let r = Role {
            metadata: meta(plan, &role.name, &component, true),
            rules: Some(role.namespace.iter().map(rule).collect()),
        };
        let mut comment = vec![format!(
            "what {} needs in the namespace {}: the rules of its {}",
            role.sidecar, plan.namespace, role.source
        )];
        comment.extend(rule_comments(&role.namespace));
        docs.push(document("Role", &role.name, comment, &r)?);
        let binding = RoleBinding {
            metadata: meta(plan, &role.name, &component, true),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name: role.name.clone(),
            },
            subjects: Some(vec![subject]),
        };
        docs.push(document(
            "RoleBinding",
            &role.name,
            vec![format!("{}'s Role, for the {} pod", role.sidecar, component_of(pod))],
            &binding,
        )?);
    }
    Ok(())
}

fn component_of(pod: &PodPlan) -> &'static str {
    match pod.kind {
        PodKind::Controller => "controller",
        PodKind::Node => "node",
    }
}

fn container(c: &ContainerPlan) -> Container {
    let env: Vec<EnvVar> = c
        .env
        .iter()
        .map(|e| match &e.value {
            EnvValue::Text(text) => {
                EnvVar { name: e.name.clone(), value: Some(text.clone()), ..EnvVar::default() }
            }
            EnvValue::Field(path) => EnvVar {
                name: e.name.clone(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path: path.clone(),
                        ..ObjectFieldSelector::default()
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            },
        })
        .collect();
    let security_context = if c.privileged {
        SecurityContext { privileged: Some(true), ..SecurityContext::default() }
    } else {
        // Least privilege: nothing in a sidecar (or a controller plugin) needs to gain any.
        // The sidecars write nothing but their sockets; the plugin's own files are its
        // author's to know.
        SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: c.sidecar.is_some().then_some(true),
            ..SecurityContext::default()
        }
    };
    let (ports, liveness_probe) = match &c.probe {
        Some((port, path, _)) => (
            Some(vec![ContainerPort {
                name: Some("healthz".into()),
                container_port: *port,
                protocol: Some("TCP".into()),
                ..ContainerPort::default()
            }]),
            Some(Probe {
                http_get: Some(HTTPGetAction {
                    path: Some(path.clone()),
                    port: IntOrString::String("healthz".into()),
                    ..HTTPGetAction::default()
                }),
                initial_delay_seconds: Some(10),
                timeout_seconds: Some(3),
                period_seconds: Some(10),
                failure_threshold: Some(5),
                ..Probe::default()
            }),
        ),
        None => (None, None),
    };
    Container {
        name: c.name.clone(),
        image: Some(c.image.clone()),
        args: (!c.args.is_empty()).then(|| c.args.iter().map(|a| a.value.clone()).collect()),
        env: (!env.is_empty()).then_some(env),
        volume_mounts: Some(
            c.mounts
                .iter()
                .map(|m| VolumeMount {
                    name: m.volume.clone(),
                    mount_path: m.path.clone(),
                    mount_propagation: m.bidirectional.then(|| "Bidirectional".to_owned()),
                    ..VolumeMount::default()
                })
                .collect(),
        ),
        security_context: Some(security_context),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), Quantity(c.requests.cpu.clone())),
                ("memory".to_owned(), Quantity(c.requests.memory.clone())),
            ])),
            ..ResourceRequirements::default()
        }),
        ports,
        liveness_probe,
        ..Container::default()
    }
}

fn container_comments(c: &ContainerPlan, image_given: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let shown = if image_given { "the image given".to_owned() } else { c.image.clone() };
    lines.push(format!("{} ({shown}): {}", c.name, c.why));
    if c.privileged {
        lines.push(
            "  privileged: it mounts volumes into pods, and its mounts reach the host through \
             bidirectional propagation"
                .into(),
        );
    }
    for a in &c.args {
        lines.push(format!("  {}: {}", a.value, a.why));
    }
    for e in &c.env {
        lines.push(format!("  env {}: {}", e.name, e.why));
    }
    for m in c.mounts.iter().filter(|m| m.bidirectional) {
        lines.push(format!(
            "  {} (Bidirectional): mounts the plugin makes there reach the host and the pods",
            m.path
        ));
    }
    if let Some((_, _, why)) = &c.probe {
        lines.push(format!("  livenessProbe: {why}"));
    }
    lines
}

fn workload(plan: &Plan, pod: &PodPlan) -> Result<Document, SerialiseError> {
    let component = component(pod);
    let selector = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), pod.name.clone()),
        ("app.kubernetes.io/instance".to_owned(), plan.driver.clone()),
    ]);
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(plan, &component)),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            service_account_name: Some(pod.service_account.clone()),
            containers: pod.containers.iter().map(container).collect(),
            volumes: Some(
                pod.volumes
                    .iter()
                    .map(|v| Volume {
                        name: v.name.clone(),
                        host_path: v.host_path.as_ref().map(|path| HostPathVolumeSource {
                            path: path.clone(),
                            type_: v.host_type.clone(),
                        }),
                        empty_dir: v.host_path.is_none().then(EmptyDirVolumeSource::default),
                        ..Volume::default()
                    })
                    .collect(),
            ),
            ..PodSpec::default()
        }),
    };
    let mut comment = vec![format!("{}: {}", pod.name, pod.why)];
    for c in &pod.containers {
        comment.extend(container_comments(c, c.sidecar.is_none()));
    }
    comment.push("volumes:".into());
    for v in &pod.volumes {
        let place = v.host_path.as_deref().unwrap_or("emptyDir");
        comment.push(format!("  {} ({place}): {}", v.name, v.why));
    }
    // The labels of the pods (`{prefix}-controller`, `{prefix}-node`) are what the selector
    // matches.
    let selector = LabelSelector { match_labels: Some(selector), ..LabelSelector::default() };
    let meta = meta(plan, &pod.name, &component, true);
    match pod.kind {
        PodKind::Controller => {
            let replicas = plan.replicas;
            comment.insert(
                1,
                format!(
                    "replicas: {replicas}; every controller sidecar elects a leader, so only one \
                     acts at a time"
                ),
            );
            let deployment = Deployment {
                metadata: meta,
                spec: Some(DeploymentSpec {
                    replicas: Some(replicas),
                    selector,
                    template,
                    ..DeploymentSpec::default()
                }),
                ..Deployment::default()
            };
            document("Deployment", &pod.name, comment, &deployment)
        }
        PodKind::Node => {
            let daemonset = DaemonSet {
                metadata: meta,
                spec: Some(DaemonSetSpec { selector, template, ..DaemonSetSpec::default() }),
                ..DaemonSet::default()
            };
            document("DaemonSet", &pod.name, comment, &daemonset)
        }
    }
}
