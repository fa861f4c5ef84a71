//! What `derive` decides, as plain data: the pods with their containers, flags, environment,
//! volumes and mounts, the RBAC of each sidecar, the CSIDriver fields and the example classes,
//! every piece with the reason it is there. `objects` builds the Kubernetes objects from it; the
//! tests read it to see what each capability changes.

use super::table::{PodKind, Requests, Rule};

/// How the plugin is spread over the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The Controller service in a Deployment, the Node service in a DaemonSet (a plugin without
    /// `CONTROLLER_SERVICE` gets the DaemonSet alone).
    Split,
    /// Everything on every node: external-provisioner (and the other sidecars that can) beside
    /// each node's plugin, for node-local storage.
    Distributed,
}

/// A value and why it is what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reasoned<T> {
    /// The value.
    pub value: T,
    /// Why.
    pub why: String,
}

/// A value with its reason.
pub fn reasoned<T>(value: T, why: impl Into<String>) -> Reasoned<T> {
    Reasoned { value, why: why.into() }
}

/// Everything that gets deployed, with reasons.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The plugin's name (the CSIDriver's) and vendor version.
    pub driver: String,
    /// Its vendor version.
    pub vendor_version: String,
    /// The prefix of object names.
    pub prefix: String,
    /// The namespace.
    pub namespace: String,
    /// The Kubernetes release.
    pub kubernetes: String,
    /// How the plugin is spread.
    pub mode: Mode,
    /// Replicas of the controller Deployment.
    pub replicas: i32,
    /// The CSIDriver object's fields.
    pub csidriver: CsiDriverPlan,
    /// The pods: the controller's (when there is one), then the node's.
    pub pods: Vec<PodPlan>,
    /// The example StorageClass, when the plugin provisions volumes.
    pub storage_class: Option<StorageClassPlan>,
    /// The example VolumeSnapshotClass, when it takes snapshots.
    pub snapshot_class: Option<Reasoned<()>>,
    /// The example VolumeGroupSnapshotClass, when it takes group snapshots.
    pub group_snapshot_class: Option<Reasoned<()>>,
    /// Sidecars that were left out, and why.
    pub left_out: Vec<String>,
    /// What the author should know (a capability the Kubernetes release cannot use, ...).
    pub warnings: Vec<String>,
}

/// The CSIDriver object's spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsiDriverPlan {
    /// `attachRequired`.
    pub attach_required: Reasoned<bool>,
    /// `storageCapacity`.
    pub storage_capacity: Reasoned<bool>,
    /// `podInfoOnMount`.
    pub pod_info_on_mount: Reasoned<bool>,
    /// `fsGroupPolicy`.
    pub fs_group_policy: Reasoned<String>,
    /// `volumeLifecycleModes`.
    pub volume_lifecycle_modes: Reasoned<Vec<String>>,
    /// `seLinuxMount`.
    pub se_linux_mount: Reasoned<bool>,
    /// `requiresRepublish`.
    pub requires_republish: Reasoned<bool>,
}

/// One pod template: the Deployment's or the DaemonSet's.
#[derive(Debug, Clone)]
pub struct PodPlan {
    /// Which.
    pub kind: PodKind,
    /// The object's name.
    pub name: String,
    /// Why the pod exists.
    pub why: String,
    /// Its ServiceAccount.
    pub service_account: String,
    /// The plugin's container first, then the sidecars.
    pub containers: Vec<ContainerPlan>,
    /// Its volumes.
    pub volumes: Vec<VolumePlan>,
    /// The RBAC of the sidecars in it, bound to its ServiceAccount.
    pub roles: Vec<RolePlan>,
}

/// One container.
#[derive(Debug, Clone)]
pub struct ContainerPlan {
    /// Its name.
    pub name: String,
    /// The sidecar it is (`None`: the plugin itself).
    pub sidecar: Option<String>,
    /// The image.
    pub image: String,
    /// What it is there for.
    pub why: String,
    /// Its arguments, each with why.
    pub args: Vec<Reasoned<String>>,
    /// Environment variables: (name, value or pod field, why).
    pub env: Vec<EnvPlan>,
    /// Mounts of the pod's volumes.
    pub mounts: Vec<MountPlan>,
    /// Privileged (the node plugin only: it mounts volumes into pods).
    pub privileged: bool,
    /// Resource requests.
    pub requests: Requests,
    /// An HTTP liveness probe: (port, path, why).
    pub probe: Option<(i32, String, String)>,
}

/// An environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPlan {
    /// The variable.
    pub name: String,
    /// Its value, or the pod field it is read from.
    pub value: EnvValue,
    /// Why.
    pub why: String,
}

/// Where an environment variable's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// This text.
    Text(String),
    /// This field of the pod (`spec.nodeName`).
    Field(String),
}

/// A volume of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumePlan {
    /// Its name in the pod.
    pub name: String,
    /// A host folder (`None`: an emptyDir).
    pub host_path: Option<String>,
    /// The hostPath type: `Directory` or `DirectoryOrCreate`.
    pub host_type: Option<String>,
    /// Why.
    pub why: String,
}

/// A mount of a pod volume in a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountPlan {
    /// The volume.
    pub volume: String,
    /// The path in the container.
    pub path: String,
    /// Mounts the plugin makes below it reach the host (and the pods).
    pub bidirectional: bool,
}

/// The RBAC of one sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolePlan {
    /// The sidecar.
    pub sidecar: String,
    /// The object name of its ClusterRole, Role and their bindings.
    pub name: String,
    /// Where its rules come from.
    pub source: String,
    /// ClusterRole rules, as the table has them.
    pub cluster: Vec<Rule>,
    /// Role rules, in the namespace.
    pub namespace: Vec<Rule>,
}

/// The example StorageClass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageClassPlan {
    /// Why it is there.
    pub why: String,
    /// `volumeBindingMode`.
    pub binding_mode: Reasoned<String>,
    /// `allowVolumeExpansion`.
    pub allow_expansion: Reasoned<bool>,
}
