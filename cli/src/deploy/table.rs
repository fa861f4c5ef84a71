//! The sidecar table (`cli/data/sidecars.toml`): everything about the Kubernetes CSI sidecars
//! that changes with the outside world, read into plain data. The derivation reads it and holds
//! no sidecar fact of its own.

use serde::Deserialize;

use super::plugin::{PluginFacts, Service};

/// The table as compiled into the command.
const SIDECARS_TOML: &str = include_str!("../../data/sidecars.toml");

/// The whole table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// The Kubernetes releases (`1.34`) the manifests are written for.
    pub kubernetes: Vec<String>,
    /// Capabilities that need a newer Kubernetes than some of those.
    #[serde(default)]
    pub kubernetes_feature: Vec<KubernetesFeature>,
    /// Capabilities no sidecar of the table serves, and what the operator does instead.
    #[serde(default)]
    pub capability_note: Vec<CapabilityNote>,
    /// The plugin's own container.
    pub driver: DriverRow,
    /// The sidecars, in the order their containers are listed in a pod.
    pub sidecar: Vec<Sidecar>,
}

/// A capability that needs a newer Kubernetes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesFeature {
    /// The capability.
    pub capability: Condition,
    /// The first Kubernetes release where it works.
    pub since: String,
    /// Why.
    pub why: String,
    /// Where that was read.
    pub source: String,
}

/// A capability that no sidecar of the table serves: deploy says what serves it (the kubelet,
/// behind a feature gate) or that nothing released does yet.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityNote {
    /// The capability.
    pub capability: Condition,
    /// What the operator needs to know.
    pub why: String,
    /// Where that was read.
    pub source: String,
}

/// The plugin container's row.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverRow {
    /// Its resource requests.
    pub requests: Requests,
    /// Why those.
    pub requests_source: String,
}

/// Resource requests of a container.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// CPU, as a Kubernetes quantity.
    pub cpu: String,
    /// Memory, as a Kubernetes quantity.
    pub memory: String,
}

/// Which pods a sidecar belongs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Acts for the whole cluster: the controller Deployment (or, distributed, each node).
    Controller,
    /// Acts for its own node: the node DaemonSet.
    Node,
    /// Beside the plugin in every pod.
    Both,
}

/// What becomes of a controller sidecar in a distributed deployment (no controller pod).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distributed {
    /// It has a per-node mode and runs on every node.
    OnNodes,
    /// It is left out, with a warning.
    LeftOut,
    /// A plugin that needs it cannot be deployed this way.
    Refused,
}

/// One sidecar.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// The project's name: `external-provisioner`.
    pub name: String,
    /// The container's name in a pod: `csi-provisioner`.
    pub container: String,
    /// The image without its tag.
    pub image: String,
    /// The tag: the release whose flags and rules this entry holds.
    pub version: String,
    /// Where it is developed.
    pub repository: String,
    /// The CSI spec release it is built against.
    pub csi_spec: String,
    /// Where that was read.
    pub csi_spec_source: String,
    /// The oldest Kubernetes it supports.
    pub kubernetes_min: String,
    /// Where that was read.
    pub kubernetes_source: String,
    /// Which pods it belongs in.
    pub role: Role,
    /// For a controller sidecar: what a distributed deployment does with it.
    pub distributed: Option<Distributed>,
    /// Why, when it is not run on nodes.
    pub distributed_why: Option<String>,
    /// Conditions that must all hold for it to be deployed.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Conditions one of which must hold (none: no such requirement).
    #[serde(default)]
    pub when_any: Vec<Condition>,
    /// What it does for the plugin.
    pub why: String,
    /// Its resource requests.
    pub requests: Requests,
    /// Where its RBAC rules were read.
    pub rbac_source: String,
    /// An HTTP liveness probe of its own.
    pub probe: Option<Probe>,
    /// Its flags.
    #[serde(default)]
    pub flag: Vec<Flag>,
    /// Environment variables from the pod's own fields.
    #[serde(default)]
    pub env: Vec<Env>,
    /// Its RBAC rules.
    #[serde(default)]
    pub rule: Vec<Rule>,
}

impl Sidecar {
    /// `image:version`.
    pub fn image_ref(&self) -> String {
        format!("{}:{}", self.image, self.version)
    }
}

/// A sidecar's own liveness probe.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The port its HTTP server listens on.
    pub port: i32,
    /// The path.
    pub path: String,
    /// What a failure means.
    pub why: String,
}

/// One flag and when it is passed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flag {
    /// The argument, with `{csi_address}`, `{registration_path}` or `{health_port}` filled in.
    pub arg: String,
    /// Conditions that must all hold.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Why it is there.
    pub why: String,
    /// Where it was read.
    pub source: String,
}

/// An environment variable taken from a field of the pod (the downward API).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// The variable.
    pub name: String,
    /// The pod's field: `spec.nodeName`.
    pub field: String,
    /// Conditions that must all hold.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Why.
    pub why: String,
    /// Where it was read.
    pub source: String,
}

/// Where a rule is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoleScope {
    /// A ClusterRole.
    Cluster,
    /// A Role in the driver's namespace.
    Namespace,
}

/// One RBAC rule of a sidecar.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// ClusterRole or Role.
    pub role: RoleScope,
    /// API groups.
    pub api_groups: Vec<String>,
    /// Resources.
    pub resources: Vec<String>,
    /// Verbs.
    pub verbs: Vec<String>,
    /// Conditions that must all hold (none: always granted).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Why it is conditional.
    pub why: Option<String>,
}

/// Where a sidecar runs in the pods of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PodKind {
    /// The controller Deployment.
    Controller,
    /// The node DaemonSet.
    Node,
}

/// An option of the command line a condition may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionName {
    /// `--block`.
    Block,
}

/// A condition of the table: `controller:GET_CAPACITY`, `pod:node`, `option:block`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum Condition {
    /// The plugin reports this capability.
    Capability(Service, String),
    /// The sidecar runs in this pod.
    Pod(PodKind),
    /// The option is given.
    Option(OptionName),
}

impl TryFrom<String> for Condition {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let (kind, name) =
            text.split_once(':').ok_or_else(|| format!("condition '{text}' is not KIND:NAME"))?;
        match (kind, name) {
            ("pod", "controller") => Ok(Condition::Pod(PodKind::Controller)),
            ("pod", "node") => Ok(Condition::Pod(PodKind::Node)),
            ("option", "block") => Ok(Condition::Option(OptionName::Block)),
            ("pod" | "option", _) => Err(format!("condition '{text}': unknown {kind}")),
            _ => {
                let service = Service::from_key(kind)
                    .filter(|s| *s != Service::VolumeExpansion)
                    .ok_or_else(|| format!("condition '{text}': unknown kind '{kind}'"))?;
                if !service.knows(name) {
                    return Err(format!(
                        "condition '{text}': csi.proto {} has no {service} capability '{name}'",
                        csikit::SPEC_RELEASE
                    ));
                }
                Ok(Condition::Capability(service, name.to_owned()))
            }
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::Capability(service, name) => write!(f, "{service}:{name}"),
            Condition::Pod(PodKind::Controller) => f.write_str("pod:controller"),
            Condition::Pod(PodKind::Node) => f.write_str("pod:node"),
            Condition::Option(OptionName::Block) => f.write_str("option:block"),
        }
    }
}

/// What a condition is evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// What the plugin says it is.
    pub facts: &'a PluginFacts,
    /// The pod being filled, if any.
    pub pod: Option<PodKind>,
    /// `--block`.
    pub block: bool,
}

impl Condition {
    /// Whether it holds.
    pub fn holds(&self, cx: &Context<'_>) -> bool {
        match self {
            Condition::Capability(service, name) => cx.facts.has(*service, name),
            Condition::Pod(kind) => cx.pod == Some(*kind),
            Condition::Option(OptionName::Block) => cx.block,
        }
    }

    /// The capability it names, if it names one.
    pub fn capability(&self) -> Option<(Service, &str)> {
        match self {
            Condition::Capability(service, name) => Some((*service, name)),
            Condition::Pod(_) | Condition::Option(_) => None,
        }
    }
}

/// Whether every condition holds.
pub fn all_hold(conditions: &[Condition], cx: &Context<'_>) -> bool {
    conditions.iter().all(|c| c.holds(cx))
}

impl Table {
    /// The table compiled into the command, checked.
    ///
    /// # Errors
    ///
    /// When the table does not parse or breaks a rule of [`Table::check`]: a bug of this
    /// release, reported rather than panicking.
    pub fn builtin() -> Result<Table, String> {
        let table: Table =
            toml::from_str(SIDECARS_TOML).map_err(|e| format!("the sidecar table: {e}"))?;
        let problems = table.check();
        if problems.is_empty() {
            Ok(table)
        } else {
            Err(format!("the sidecar table: {}", problems.join("; ")))
        }
    }

    /// The table's own rules: names unique, every controller sidecar says what a distributed
    /// deployment does with it (and why, when it is not run on nodes), flags only name known
    /// placeholders, every Kubernetes release is `MAJOR.MINOR`.
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for release in &self.kubernetes {
            if parse_minor(release).is_none() {
                problems.push(format!("Kubernetes release '{release}' is not MAJOR.MINOR"));
            }
        }
        for feature in &self.kubernetes_feature {
            if parse_minor(&feature.since).is_none() {
                problems.push(format!("'{}' is not MAJOR.MINOR", feature.since));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for s in &self.sidecar {
            if !names.insert(&s.name) {
                problems.push(format!("sidecar '{}' is listed twice", s.name));
            }
            match (s.role, s.distributed, &s.distributed_why) {
                (Role::Controller, None, _) => {
                    problems.push(format!("sidecar '{}' does not say `distributed`", s.name));
                }
                (Role::Controller, Some(Distributed::LeftOut | Distributed::Refused), None) => {
                    problems.push(format!("sidecar '{}' does not say `distributed_why`", s.name));
                }
                (Role::Node | Role::Both, Some(_), _) => problems
                    .push(format!("sidecar '{}' runs on nodes; `distributed` is moot", s.name)),
                _ => {}
            }
            for flag in &s.flag {
                let mut rest = flag.arg.as_str();
                while let Some(start) = rest.find('{') {
                    let end = rest[start..].find('}').map_or(rest.len(), |e| start + e + 1);
                    let placeholder = &rest[start..end];
                    if !PLACEHOLDERS.contains(&placeholder) {
                        problems.push(format!(
                            "sidecar '{}': flag '{}' names '{placeholder}'",
                            s.name, flag.arg
                        ));
                    }
                    rest = &rest[end..];
                }
            }
            for rule in &s.rule {
                if rule.verbs.is_empty() || rule.resources.is_empty() || rule.api_groups.is_empty()
                {
                    problems.push(format!("sidecar '{}': a rule with an empty list", s.name));
                }
                if !rule.when.is_empty() && rule.why.is_none() {
                    problems.push(format!(
                        "sidecar '{}': the conditional rule on {:?} says no why",
                        s.name, rule.resources
                    ));
                }
            }
        }
        problems
    }

    /// The sidecar of that name.
    pub fn sidecar(&self, name: &str) -> Option<&Sidecar> {
        self.sidecar.iter().find(|s| s.name == name)
    }
}

/// What a flag of the table may name.
pub const PLACEHOLDERS: [&str; 3] = ["{csi_address}", "{registration_path}", "{health_port}"];

/// `1.34` (also `v1.34`, `1.34.2`) as `(1, 34)`.
pub fn parse_minor(text: &str) -> Option<(u32, u32)> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    match parts.next() {
        None => Some((major, minor)),
        Some(patch) if patch.parse::<u32>().is_ok() && parts.next().is_none() => {
            Some((major, minor))
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_reads_and_keeps_its_rules() {
        let table = Table::builtin().expect("the table is good");
        assert_eq!(table.kubernetes, ["1.33", "1.34", "1.35"]);
        for name in [
            "external-provisioner",
            "external-attacher",
            "external-resizer",
            "external-snapshotter",
            "external-health-monitor-controller",
            "node-driver-registrar",
            "livenessprobe",
        ] {
            let s = table.sidecar(name).unwrap_or_else(|| panic!("{name} is in the table"));
            // Every sidecar names its sources, and every flag one.
            assert!(s.rbac_source.contains(&s.version) || s.rule.is_empty(), "{name}");
            assert!(s.csi_spec_source.contains(&s.version), "{name}");
            for flag in &s.flag {
                assert!(!flag.source.is_empty() && !flag.why.is_empty(), "{name} {}", flag.arg);
            }
        }
    }

    #[test]
    fn conditions_name_what_csikit_knows() {
        let ok = |s: &str| Condition::try_from(s.to_owned());
        assert_eq!(
            ok("controller:GET_CAPACITY"),
            Ok(Condition::Capability(Service::Controller, "GET_CAPACITY".into()))
        );
        assert_eq!(ok("pod:node"), Ok(Condition::Pod(PodKind::Node)));
        assert_eq!(ok("option:block"), Ok(Condition::Option(OptionName::Block)));
        let release = csikit::SPEC_RELEASE;
        assert_eq!(
            ok("node:GET_CAPACITY"),
            Err(format!(
                "condition 'node:GET_CAPACITY': csi.proto {release} has no node capability \
                 'GET_CAPACITY'"
            ))
        );
        assert_eq!(ok("pod:other"), Err("condition 'pod:other': unknown pod".into()));
        assert_eq!(ok("GET_CAPACITY"), Err("condition 'GET_CAPACITY' is not KIND:NAME".into()));
        assert_eq!(ok("disk:X"), Err("condition 'disk:X': unknown kind 'disk'".into()));
        for c in ["controller:GET_CAPACITY", "pod:controller", "option:block"] {
            assert_eq!(ok(c).expect("reads").to_string(), c);
        }
    }

    #[test]
    fn a_bad_table_is_reported() {
        let mut table = Table::builtin().expect("the table is good");
        table.kubernetes.push("1.x".into());
        table.sidecar[0].flag[0].arg = "--x={socket}".into();
        table.sidecar[0].distributed = None;
        let dup = table.sidecar[1].clone();
        table.sidecar.push(dup);
        let problems = table.check();
        assert_eq!(problems.len(), 4, "{problems:?}");
    }

    #[test]
    fn releases_read_as_major_minor() {
        assert_eq!(parse_minor("1.34"), Some((1, 34)));
        assert_eq!(parse_minor("v1.35"), Some((1, 35)));
        assert_eq!(parse_minor("1.33.4"), Some((1, 33)));
        for bad in ["", "1", "1.x", "1.34.2.1", "1.34-rc"] {
            assert_eq!(parse_minor(bad), None, "{bad}");
        }
    }
}
