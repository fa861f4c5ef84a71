//! What a plugin says it is: its name and version from `GetPluginInfo`, and the capabilities of
//! each service it serves. Read from a running plugin ([`query`]) or from a capabilities file
//! ([`PluginFacts::from_toml`]), which is what `csikit deploy` writes beside the manifests
//! ([`PluginFacts::to_toml`]), so a derivation can be repeated without the plugin.
//!
//! Capability names are the enum values of csi.proto as csikit's `v1` module spells them, or, for
//! a number v1.13.0 reserved, as `v1_12` spells it (a plugin still on v1.12.0 reports them); a
//! name csikit does not know is refused, never guessed.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use csikit::v1::{
    ControllerGetCapabilitiesRequest, GetPluginCapabilitiesRequest, GetPluginInfoRequest,
    GroupControllerGetCapabilitiesRequest, NodeGetCapabilitiesRequest,
    controller_client::ControllerClient, controller_service_capability,
    group_controller_client::GroupControllerClient, group_controller_service_capability,
    identity_client::IdentityClient, node_client::NodeClient, node_service_capability,
    plugin_capability,
};
use serde::{Deserialize, Serialize};

/// A list of capabilities: the services of csi.proto that report them, plus the plugin's
/// volume-expansion kind (a plugin capability of its own shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    /// `GetPluginCapabilities`, its `Service` entries: `CONTROLLER_SERVICE`, ...
    Plugin,
    /// `GetPluginCapabilities`, its `VolumeExpansion` entries: `ONLINE`, `OFFLINE`.
    VolumeExpansion,
    /// `ControllerGetCapabilities`.
    Controller,
    /// `NodeGetCapabilities`.
    Node,
    /// `GroupControllerGetCapabilities`.
    GroupController,
}

/// Looks a capability up in one release's enum of `service`'s list: `$lookup` on the enum type
/// (`from_str_name(name)`, `try_from(number).ok()`), the hit mapped by `$map`.
macro_rules! names {
    ($service:expr, $release:path, $lookup:ident($arg:expr) $(.$ok:ident())?, $map:expr) => {{
        use $release as release;
        match $service {
            Service::Plugin => {
                release::plugin_capability::service::Type::$lookup($arg)$(.$ok())?.map($map)
            }
            Service::VolumeExpansion => {
                release::plugin_capability::volume_expansion::Type::$lookup($arg)$(.$ok())?.map($map)
            }
            Service::Controller => {
                release::controller_service_capability::rpc::Type::$lookup($arg)$(.$ok())?.map($map)
            }
            Service::Node => {
                release::node_service_capability::rpc::Type::$lookup($arg)$(.$ok())?.map($map)
            }
            Service::GroupController => {
                release::group_controller_service_capability::rpc::Type::$lookup($arg)$(.$ok())?
                    .map($map)
            }
        }
    }};
}

impl Service {
    /// Every list, in the order the files and the comments show them.
    pub const ALL: [Service; 5] = [
        Service::Plugin,
        Service::VolumeExpansion,
        Service::Controller,
        Service::Node,
        Service::GroupController,
    ];

    /// The key of the list in a capabilities file and the prefix of a condition in the sidecar
    /// table: `controller` in `controller:CREATE_DELETE_VOLUME`.
    pub const fn key(self) -> &'static str {
        match self {
            Service::Plugin => "plugin",
            Service::VolumeExpansion => "volume_expansion",
            Service::Controller => "controller",
            Service::Node => "node",
            Service::GroupController => "group_controller",
        }
    }

    /// The list a key names.
    pub fn from_key(key: &str) -> Option<Service> {
        Service::ALL.into_iter().find(|s| s.key() == key)
    }

    /// Whether csikit's csi.proto has this capability (UNKNOWN, the zero value, is not one), or
    /// had it in v1.12.0 ([`Service::named_before`]).
    pub fn knows(self, name: &str) -> bool {
        let number = names!(self, csikit::v1, from_str_name(name), |t| t as i32)
            .or_else(|| names!(self, csikit::v1_12, from_str_name(name), |t| t as i32));
        number.is_some_and(|n| n != 0)
    }

    /// The name csikit's csi.proto gives this capability number, if it names it (UNKNOWN, the
    /// zero value, is not a capability), else the name v1.12.0 gave it: a plugin still on
    /// v1.12.0 reports numbers v1.13.0 reserved (`VOLUME_CONDITION`), and the sidecars of
    /// today read them by those names.
    pub fn name_of(self, number: i32) -> Option<&'static str> {
        if number == 0 {
            return None;
        }
        names!(self, csikit::v1, try_from(number).ok(), |t| t.as_str_name())
            .or_else(|| names!(self, csikit::v1_12, try_from(number).ok(), |t| t.as_str_name()))
    }

    /// Whether `name` is a capability csikit's csi.proto no longer has, only v1.12.0's.
    pub fn named_before(self, name: &str) -> bool {
        names!(self, csikit::v1, from_str_name(name), |t| t as i32).is_none() && self.knows(name)
    }

    /// The service whose RPCs a capability of this list obliges, as csikit's server tables name
    /// it (`Controller`), if the list belongs to one.
    pub const fn rpc_service(self) -> Option<&'static str> {
        match self {
            Service::Controller => Some("Controller"),
            Service::Node => Some("Node"),
            Service::GroupController => Some("GroupController"),
            Service::Plugin | Service::VolumeExpansion => None,
        }
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// What a plugin says it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginFacts {
    /// `GetPluginInfo`'s name: the CSIDriver object's name.
    pub name: String,
    /// `GetPluginInfo`'s vendor version.
    pub vendor_version: String,
    /// The capabilities of each list, by name.
    pub capabilities: [BTreeSet<String>; 5],
}

impl PluginFacts {
    /// The capabilities of one list.
    pub fn list(&self, service: Service) -> &BTreeSet<String> {
        &self.capabilities[service as usize]
    }

    /// The capabilities of one list, to change.
    pub fn list_mut(&mut self, service: Service) -> &mut BTreeSet<String> {
        &mut self.capabilities[service as usize]
    }

    /// Whether the plugin reports `name` in `service`'s list.
    pub fn has(&self, service: Service, name: &str) -> bool {
        self.list(service).contains(name)
    }

    /// The facts as a capabilities file: the form [`PluginFacts::from_toml`] reads.
    pub fn to_toml(&self) -> String {
        let file = File {
            name: self.name.clone(),
            vendor_version: self.vendor_version.clone(),
            plugin: self.list(Service::Plugin).iter().cloned().collect(),
            volume_expansion: self.list(Service::VolumeExpansion).iter().cloned().collect(),
            controller: self.list(Service::Controller).iter().cloned().collect(),
            node: self.list(Service::Node).iter().cloned().collect(),
            group_controller: self.list(Service::GroupController).iter().cloned().collect(),
        };
        // Plain strings and lists of them: serialising cannot fail.
        let body = toml::to_string_pretty(&file).unwrap_or_default();
        let newline = if body.ends_with('\n') { "" } else { "\n" };
        format!("{FILE_HEADER}{body}{newline}")
    }

    /// Reads a capabilities file. Every problem is reported with its line and column in
    /// `origin`, all of them at once.
    ///
    /// # Errors
    ///
    /// When the text is not such a file: bad TOML, a missing or unknown key, a capability
    /// csikit does not know, or controller capabilities without `CONTROLLER_SERVICE`.
    pub fn from_toml(origin: &str, text: &str) -> Result<PluginFacts, FileError> {
        let file: SpannedFile = toml::from_str(text).map_err(|e| FileError {
            problems: vec![match e.span() {
                Some(span) => format!("{origin}:{}: {}", line_col(text, span.start), e.message()),
                None => format!("{origin}: {}", e.message()),
            }],
        })?;
        let mut facts = PluginFacts {
            name: file.name.into_inner(),
            vendor_version: file.vendor_version.into_inner(),
            ..PluginFacts::default()
        };
        let mut problems = Vec::new();
        let lists = [
            (Service::Plugin, file.plugin),
            (Service::VolumeExpansion, file.volume_expansion),
            (Service::Controller, file.controller),
            (Service::Node, file.node),
            (Service::GroupController, file.group_controller),
        ];
        for (service, names) in lists {
            for name in names {
                let at = line_col(text, name.span().start);
                let name = name.into_inner();
                if !service.knows(&name) {
                    problems.push(format!(
                        "{origin}:{at}: '{name}' is not a {service} capability of csi.proto {}",
                        csikit::SPEC_RELEASE
                    ));
                } else if !facts.list_mut(service).insert(name.clone()) {
                    problems.push(format!("{origin}:{at}: '{name}' is listed twice"));
                }
            }
        }
        if let Err(problem) = facts.check() {
            problems.push(format!("{origin}: {problem}"));
        }
        if problems.is_empty() { Ok(facts) } else { Err(FileError { problems }) }
    }

    /// What no plugin can say: capabilities of a service it does not serve.
    fn check(&self) -> Result<(), String> {
        let serves = |service: &str| self.has(Service::Plugin, service);
        if !self.list(Service::Controller).is_empty() && !serves("CONTROLLER_SERVICE") {
            return Err("controller capabilities are listed but the plugin capabilities do not \
                        name CONTROLLER_SERVICE"
                .into());
        }
        if !self.list(Service::GroupController).is_empty() && !serves("GROUP_CONTROLLER_SERVICE") {
            return Err("group_controller capabilities are listed but the plugin capabilities \
                        do not name GROUP_CONTROLLER_SERVICE"
                .into());
        }
        Ok(())
    }
}

const FILE_HEADER: &str = "\
# What the plugin said it is, as `csikit deploy` read it: GetPluginInfo and the capabilities of
# each service (names as in csi.proto). `csikit deploy --capabilities FILE` derives the same
# manifests from this file without a running plugin.
";

/// A capabilities file, as written.
#[derive(Serialize)]
struct File {
    name: String,
    vendor_version: String,
    plugin: Vec<String>,
    volume_expansion: Vec<String>,
    controller: Vec<String>,
    node: Vec<String>,
    group_controller: Vec<String>,
}

/// A capabilities file, as read: every value keeps where it was, for the messages.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpannedFile {
    name: toml::Spanned<String>,
    vendor_version: toml::Spanned<String>,
    #[serde(default)]
    plugin: Vec<toml::Spanned<String>>,
    #[serde(default)]
    volume_expansion: Vec<toml::Spanned<String>>,
    #[serde(default)]
    controller: Vec<toml::Spanned<String>>,
    #[serde(default)]
    node: Vec<toml::Spanned<String>>,
    #[serde(default)]
    group_controller: Vec<toml::Spanned<String>>,
}

/// `line:column` (both from 1) of a byte offset.
fn line_col(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{line}:{column}")
}

/// Why a capabilities file was refused: every problem, each with its place.
#[derive(Debug, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct FileError {
    /// One line per problem.
    pub problems: Vec<String>,
}

/// Why a plugin could not be asked what it is.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Nothing answered at the endpoint, or the endpoint cannot be read.
    #[error("{0}")]
    Connect(#[from] csikit::channel::ConnectError),
    /// A call failed.
    #[error("{rpc} failed: {code:?}: {message}")]
    Call {
        /// The RPC.
        rpc: &'static str,
        /// Its status code.
        code: tonic::Code,
        /// Its status message.
        message: String,
    },
    /// The plugin named no capability at all: nothing says which services it serves.
    #[error(
        "the plugin at {endpoint} answered GetPluginCapabilities with no capabilities: nothing \
         says whether it serves the Controller service; if it is a Node-only plugin, describe it \
         in a capabilities file (plugin = []) and pass --capabilities FILE"
    )]
    NoCapabilities {
        /// The endpoint asked.
        endpoint: String,
    },
    /// An answer the spec does not allow.
    #[error("{rpc} answered {problem}")]
    Answer {
        /// The RPC.
        rpc: &'static str,
        /// What is wrong with the answer.
        problem: String,
    },
}

fn failed(rpc: &'static str) -> impl Fn(tonic::Status) -> QueryError {
    move |status| QueryError::Call {
        rpc,
        code: status.code(),
        message: status.message().to_owned(),
    }
}

/// Asks the plugin at `endpoint` what it is: `GetPluginInfo`, `GetPluginCapabilities`, and the
/// `*GetCapabilities` RPC of each service it serves (`ControllerGetCapabilities` with
/// `CONTROLLER_SERVICE`, `GroupControllerGetCapabilities` with `GROUP_CONTROLLER_SERVICE`, and
/// `NodeGetCapabilities`, which every plugin must implement). Each call waits at most `timeout`.
///
/// A capability number csikit does not know is left out and returned as a warning.
///
/// # Errors
///
/// When nothing answers, a call fails, or the plugin reports no capability at all.
pub async fn query(
    endpoint: &str,
    timeout: Duration,
) -> Result<(PluginFacts, Vec<String>), QueryError> {
    let channel = csikit::channel::connect_with_timeout(endpoint, timeout).await?;
    let mut identity = IdentityClient::new(channel.clone());
    let info = identity
        .get_plugin_info(GetPluginInfoRequest {})
        .await
        .map_err(failed("GetPluginInfo"))?
        .into_inner();
    if info.name.is_empty() {
        return Err(QueryError::Answer {
            rpc: "GetPluginInfo",
            problem: "an empty name, which the spec requires".into(),
        });
    }
    let mut facts =
        PluginFacts { name: info.name, vendor_version: info.vendor_version, ..Default::default() };
    let mut warnings = Vec::new();
    // Every number reported goes through csikit's names; one it does not know is said, not kept.
    let mut record =
        |facts: &mut PluginFacts, service: Service, number: i32| match service.name_of(number) {
            Some(name) => {
                facts.list_mut(service).insert(name.to_owned());
            }
            None => warnings.push(format!(
                "the plugin reports {service} capability number {number}, which csi.proto {} \
                 does not name; it is left out",
                csikit::SPEC_RELEASE
            )),
        };

    let plugin = identity
        .get_plugin_capabilities(GetPluginCapabilitiesRequest {})
        .await
        .map_err(failed("GetPluginCapabilities"))?
        .into_inner();
    if plugin.capabilities.is_empty() {
        return Err(QueryError::NoCapabilities { endpoint: endpoint.to_owned() });
    }
    for capability in plugin.capabilities {
        match capability.r#type {
            Some(plugin_capability::Type::Service(s)) => {
                record(&mut facts, Service::Plugin, s.r#type);
            }
            Some(plugin_capability::Type::VolumeExpansion(e)) => {
                record(&mut facts, Service::VolumeExpansion, e.r#type);
            }
            None => {}
        }
    }
    if facts.has(Service::Plugin, "CONTROLLER_SERVICE") {
        let answer = ControllerClient::new(channel.clone())
            .controller_get_capabilities(ControllerGetCapabilitiesRequest {})
            .await
            .map_err(failed("ControllerGetCapabilities"))?
            .into_inner();
        for capability in answer.capabilities {
            if let Some(controller_service_capability::Type::Rpc(rpc)) = capability.r#type {
                record(&mut facts, Service::Controller, rpc.r#type);
            }
        }
    }
    let answer = NodeClient::new(channel.clone())
        .node_get_capabilities(NodeGetCapabilitiesRequest {})
        .await
        .map_err(failed("NodeGetCapabilities"))?
        .into_inner();
    for capability in answer.capabilities {
        if let Some(node_service_capability::Type::Rpc(rpc)) = capability.r#type {
            record(&mut facts, Service::Node, rpc.r#type);
        }
    }
    if facts.has(Service::Plugin, "GROUP_CONTROLLER_SERVICE") {
        let answer = GroupControllerClient::new(channel)
            .group_controller_get_capabilities(GroupControllerGetCapabilitiesRequest {})
            .await
            .map_err(failed("GroupControllerGetCapabilities"))?
            .into_inner();
        for capability in answer.capabilities {
            if let Some(group_controller_service_capability::Type::Rpc(rpc)) = capability.r#type {
                record(&mut facts, Service::GroupController, rpc.r#type);
            }
        }
    }
    Ok((facts, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> PluginFacts {
        let mut facts = PluginFacts {
            name: "x.csi.example.com".into(),
            vendor_version: "1.0".into(),
            ..Default::default()
        };
        facts.list_mut(Service::Plugin).insert("CONTROLLER_SERVICE".into());
        facts.list_mut(Service::Controller).insert("CREATE_DELETE_VOLUME".into());
        facts.list_mut(Service::Node).insert("STAGE_UNSTAGE_VOLUME".into());
        facts
    }

    #[test]
    fn a_capabilities_file_reads_back_what_was_written() {
        let facts = facts();
        let text = facts.to_toml();
        assert!(text.starts_with("# What the plugin said it is"), "{text}");
        assert_eq!(PluginFacts::from_toml("caps.toml", &text).expect("reads"), facts);
    }

    #[test]
    fn every_problem_of_a_file_is_named_with_its_place() {
        let text = "name = \"x\"\nvendor_version = \"1\"\ncontroller = [\"CREATE_DELETE_VOLUME\", \
                    \"MAKE_COFFEE\"]\nnode = [\"UNKNOWN\", \"EXPAND_VOLUME\", \"EXPAND_VOLUME\"]\n";
        let err = PluginFacts::from_toml("caps.toml", text).expect_err("refused");
        let release = csikit::SPEC_RELEASE;
        assert_eq!(
            err.problems,
            [
                format!(
                    "caps.toml:3:39: 'MAKE_COFFEE' is not a controller capability of csi.proto \
                     {release}"
                ),
                format!("caps.toml:4:9: 'UNKNOWN' is not a node capability of csi.proto {release}"),
                "caps.toml:4:37: 'EXPAND_VOLUME' is listed twice".to_owned(),
                "caps.toml: controller capabilities are listed but the plugin capabilities do \
                 not name CONTROLLER_SERVICE"
                    .to_owned(),
            ]
        );
        let err = PluginFacts::from_toml("c.toml", "name = \"x\"\nvendor_version = 1\n")
            .expect_err("refused");
        assert!(err.problems[0].starts_with("c.toml:2:18: "), "{err}");
        let err =
            PluginFacts::from_toml("c.toml", "name = \"x\"\nvendor_version = \"1\"\nnods = []\n")
                .expect_err("refused");
        assert!(err.problems[0].starts_with("c.toml:3:1: unknown field `nods`"), "{err}");
        let err =
            PluginFacts::from_toml("c.toml", "vendor_version = \"1\"\n").expect_err("refused");
        assert!(err.problems[0].contains("missing field `name`"), "{err}");
    }

    #[test]
    fn names_come_from_csikit() {
        assert!(Service::Controller.knows("CREATE_DELETE_VOLUME"));
        assert!(Service::Node.knows("VOLUME_MOUNT_GROUP"));
        assert!(Service::GroupController.knows("CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT"));
        assert!(Service::VolumeExpansion.knows("ONLINE"));
        assert!(!Service::Node.knows("CREATE_DELETE_VOLUME"));
        assert!(!Service::Plugin.knows("UNKNOWN"));
        for s in Service::ALL {
            assert_eq!(Service::from_key(s.key()), Some(s));
        }
    }
}
