//! The plugin builder: the services a driver registers, the capabilities that cannot be derived,
//! then one server with Identity and the `*GetCapabilities` answers derived from what was
//! registered.
//!
//! The builder is generic over a [`PluginSpec`], which a CSI package's generated `server` module
//! implements with `const` tables (each capability with the RPCs that make it, the plugin
//! capabilities that registered services make) and the few functions that turn numbers into
//! that release's response messages. Nothing here names a message of a particular release, so
//! one builder serves every release the generator reads.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tonic::Status;
use tonic::service::Routes;

use super::{Layers, Pipeline, Serialisation, ServeError};

/// Markers naming the CSI services a [`Register`] implementation adds.
pub mod service {
    /// The Identity service.
    #[derive(Debug)]
    pub struct Identity;
    /// The Controller service.
    #[derive(Debug)]
    pub struct Controller;
    /// The Node service.
    #[derive(Debug)]
    pub struct Node;
    /// The GroupController service.
    #[derive(Debug)]
    pub struct GroupController;
    /// The SnapshotMetadata service.
    #[derive(Debug)]
    pub struct SnapshotMetadata;
}

/// A capability the builder derives: it is advertised when every one of its RPCs is implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// The enum value's name, e.g. `CREATE_DELETE_VOLUME`.
    pub name: &'static str,
    /// The enum value's number.
    pub number: i32,
    /// The RPC methods (snake_case) that make it, e.g. `["create_volume", "delete_volume"]`.
    pub rpcs: &'static [&'static str],
}

/// The derivable capabilities of one service's `*GetCapabilities` RPC.
#[derive(Debug, Clone, Copy)]
pub struct CapabilityTable {
    /// The service, e.g. `Controller`.
    pub service: &'static str,
    /// Its capabilities that RPCs imply; the others are declared by the driver.
    pub derivable: &'static [Capability],
}

/// A plugin capability that a registered service makes (`CONTROLLER_SERVICE` for Controller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginService {
    /// The enum value's name, e.g. `CONTROLLER_SERVICE`.
    pub name: &'static str,
    /// The enum value's number.
    pub number: i32,
    /// The service whose registration makes it, e.g. `Controller`.
    pub service: &'static str,
}

/// An RPC the spec obliges a plugin to implement, and when (the RPC's section: "A Controller
/// Plugin MUST implement this RPC call if it has `CREATE_DELETE_VOLUME` controller capability";
/// or, where the section says nothing, its service's line in "RPC Interface": "The Node Plugin
/// MUST implement this sets of RPCs").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Obligation {
    /// The service the RPC belongs to, e.g. `Controller`; the obligation applies to a plugin
    /// that registers it (Identity: every plugin).
    pub service: &'static str,
    /// The RPC, e.g. `CreateVolume`.
    pub rpc: &'static str,
    /// Its method, e.g. `create_volume`.
    pub method: &'static str,
    /// The capabilities (service, value name, number) any one of which, advertised, obliges it;
    /// empty: always.
    pub if_any: &'static [(&'static str, &'static str, i32)],
    /// Stated for the whole service rather than in the RPC's section.
    pub service_wide: bool,
    /// Where the sentence comes from: the release's own prose, an older release's prose carried
    /// into a release read from its proto alone, or a capability's comment in the proto.
    pub stated: Stated,
}

/// Where a fact in a generated table was stated, so what the builder reports says whose word it
/// is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stated {
    /// The release's own spec prose.
    Prose,
    /// The prose of an older release (its name, e.g. `v1.12.0`), carried into a release whose
    /// source is its proto alone because the RPC's schema is unchanged since: that release's
    /// word, to check against the newer text.
    Carried(&'static str),
    /// A comment in the release's proto ("Indicates the SP supports the `X` RPC", "MUST also
    /// support `Y`").
    Comment,
}

impl Stated {
    /// Whose word it is, for a report: `the spec's prose`, `v1.12.0's spec.md, carried`,
    /// `the proto's comment`.
    pub fn words(self) -> String {
        match self {
            Stated::Prose => "the spec's prose".to_owned(),
            Stated::Carried(from) => format!("{from}'s spec.md, carried"),
            Stated::Comment => "the proto's comment".to_owned(),
        }
    }
}

/// A capability that obliges another: a plugin that advertises `capability` MUST also advertise
/// `requires` ("A plugin which supports the `LIST_VOLUME_HEALTH` capability MUST also support the
/// `GET_VOLUME_HEALTH` capability"). Each is (service, value name, number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implication {
    /// The capability that obliges, e.g. (`Controller`, `LIST_VOLUME_HEALTH`, 17).
    pub capability: (&'static str, &'static str, i32),
    /// The capability it obliges the plugin to have too.
    pub requires: (&'static str, &'static str, i32),
    /// Where the sentence comes from.
    pub stated: Stated,
}

/// What a CSI package tells the builder: its capability tables and how to turn the derived
/// numbers into that release's answers. Implemented by the generated `server::Spec` of a
/// package with Identity and capability RPCs (`csi.v1`).
pub trait PluginSpec: Sized + Send + 'static {
    /// The derived answers the generated adapters serve (GetPluginInfo, the capabilities).
    type Derived: Send + Sync + 'static;
    /// A plugin capability as the package writes it (in `csi.v1`, `plugin_capability::Type`).
    type PluginCapability: Send + 'static;
    /// A controller capability (in `csi.v1`, `controller_service_capability::rpc::Type`).
    type ControllerCapability: Into<i32> + Send + 'static;
    /// A node capability (in `csi.v1`, `node_service_capability::rpc::Type`).
    type NodeCapability: Into<i32> + Send + 'static;

    /// The derivable capabilities, per service with a `*GetCapabilities` RPC.
    const CAPABILITIES: &'static [CapabilityTable];
    /// The plugin capabilities that registered services make.
    const PLUGIN_SERVICES: &'static [PluginService];
    /// What the spec obliges a plugin to implement.
    const OBLIGATIONS: &'static [Obligation];
    /// Capabilities a capability obliges the plugin to advertise too.
    const IMPLICATIONS: &'static [Implication];
    /// The RPC methods the skeleton answers itself when a driver leaves them out (Identity, the
    /// `*GetCapabilities` RPCs).
    const ANSWERED: &'static [&'static str];

    /// Builds the derived answers from `plan`; what is wrong with them (a plugin name the spec
    /// does not allow, say) goes into `problems`.
    fn derive(plan: Plan<Self>, problems: &mut Vec<String>) -> Self::Derived;

    /// The Identity service the skeleton serves when the driver registers none.
    fn derived_identity() -> Registration<Self>;
}

/// What the builder settled on, handed to [`PluginSpec::derive`].
#[derive(Debug)]
pub struct Plan<S: PluginSpec> {
    /// `GetPluginInfo.name`.
    pub name: String,
    /// `GetPluginInfo.vendor_version`.
    pub vendor_version: String,
    /// `GetPluginInfo.manifest`.
    pub manifest: HashMap<String, String>,
    /// The plugin service capabilities (enum numbers) of the registered services.
    pub plugin_services: Vec<i32>,
    /// Plugin capabilities the driver declared.
    pub plugin_extra: Vec<S::PluginCapability>,
    /// Per service, the capability numbers to advertise (derived ones first, then declared ones).
    pub capabilities: Vec<(&'static str, Vec<i32>)>,
}

impl<S: PluginSpec> Plan<S> {
    /// The capability numbers to advertise for `service`.
    pub fn capabilities(&self, service: &str) -> &[i32] {
        self.capabilities.iter().find(|(s, _)| *s == service).map_or(&[], |(_, c)| c.as_slice())
    }
}

type Advertised =
    Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = Result<Vec<i32>, Status>> + Send>> + Send>;
type AddService<D> = Box<dyn FnOnce(Routes, &Arc<Pipeline>, &Arc<D>) -> Routes + Send>;

/// One service a driver registers: what it implements, how it joins the routes, and (when the
/// driver answers its capabilities RPC itself) how to ask it what it advertises.
pub struct Registration<S: PluginSpec> {
    service: &'static str,
    implemented: &'static [&'static str],
    advertised: Option<Advertised>,
    add: AddService<S::Derived>,
}

impl<S: PluginSpec> std::fmt::Debug for Registration<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("service", &self.service)
            .field("implemented", &self.implemented)
            .finish_non_exhaustive()
    }
}

impl<S: PluginSpec> Registration<S> {
    /// `service` (e.g. `Controller`), whose driver defines the RPC methods `implemented`, joins
    /// the routes through `add`.
    pub fn new(
        service: &'static str,
        implemented: &'static [&'static str],
        add: impl FnOnce(Routes, &Arc<Pipeline>, &Arc<S::Derived>) -> Routes + Send + 'static,
    ) -> Self {
        Self { service, implemented, advertised: None, add: Box::new(add) }
    }

    /// The driver answers the service's capabilities RPC itself: `probe` asks it, at start-up,
    /// which capability numbers it advertises, to compare them with what it implements.
    pub fn advertising<F>(mut self, probe: impl FnOnce() -> F + Send + 'static) -> Self
    where
        F: Future<Output = Result<Vec<i32>, Status>> + Send + 'static,
    {
        self.advertised = Some(Box::new(move || Box::pin(probe())));
        self
    }
}

/// Adds a driver's implementation `T` of the service `Service` to a [`Builder`]; the generated
/// `server` module implements it for each service of its package.
pub trait Register<Service, T>: PluginSpec {
    /// The registration of `service`.
    fn registration(service: T) -> Registration<Self>;
}

/// Assembles a CSI plugin: the services the driver implements, the layers, the capabilities
/// that cannot be derived; then [`serve_from_env`](Builder::serve_from_env).
///
/// Identity is answered by the skeleton unless the driver registers its own (and then only the
/// RPCs the driver leaves out): `GetPluginInfo` from [`Builder::new`], `GetPluginCapabilities`
/// from the registered services, `Probe` ready. `ControllerGetCapabilities`,
/// `NodeGetCapabilities` and `GroupControllerGetCapabilities` likewise, from the implemented RPCs
/// plus the capabilities declared here. Where a driver answers those itself, start-up compares
/// what it advertises with what it implements and reports each disagreement (a warning, or an
/// error with [`Builder::strict`]).
pub struct Builder<S: PluginSpec> {
    name: String,
    vendor_version: String,
    manifest: HashMap<String, String>,
    layers: Layers,
    serialisation: Option<Serialisation>,
    strict: bool,
    drain_timeout: std::time::Duration,
    plugin_extra: Vec<S::PluginCapability>,
    declared: Vec<(&'static str, i32)>,
    registrations: Vec<Registration<S>>,
}

impl<S: PluginSpec> std::fmt::Debug for Builder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("vendor_version", &self.vendor_version)
            .field("layers", &self.layers)
            .field("serialisation", &self.serialisation)
            .field("registrations", &self.registrations)
            .finish_non_exhaustive()
    }
}

impl<S: PluginSpec> Builder<S> {
    /// A plugin named `name` (domain-name notation, at most 63 characters) at `vendor_version`.
    pub fn new(name: impl Into<String>, vendor_version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            vendor_version: vendor_version.into(),
            manifest: HashMap::new(),
            layers: Layers::default(),
            serialisation: None,
            strict: false,
            drain_timeout: super::DEFAULT_DRAIN_TIMEOUT,
            plugin_extra: Vec::new(),
            declared: Vec::new(),
            registrations: Vec::new(),
        }
    }

    /// Adds an entry to `GetPluginInfo`'s manifest.
    pub fn manifest(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.manifest.insert(key.into(), value.into());
        self
    }

    /// Chooses the layers (default: all on, response validation in debug builds).
    pub fn layers(mut self, layers: Layers) -> Self {
        self.layers = layers;
        self
    }

    /// What a call for a volume or snapshot with a call in flight gets: `ABORTED` at once
    /// ([`Serialisation::FailFast`], the default, as the spec's error scheme describes) or a wait
    /// for its turn, in arrival order, of at most a timeout
    /// (`Serialisation::Wait { timeout: Duration::from_secs(30) }`). Set here, it holds whatever
    /// [`Builder::layers`] says, before or after; serialisation itself stays switchable through
    /// [`Layers::serialize`].
    pub fn serialisation(mut self, serialisation: Serialisation) -> Self {
        self.serialisation = Some(serialisation);
        self
    }

    /// Makes every problem the start-up check finds a start-up error rather than a warning: a
    /// disagreement between advertised capabilities and implemented RPCs, an RPC the spec
    /// obliges the plugin to implement and it leaves out, a capability advertised without one
    /// it obliges the plugin to have too.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// How long in-flight calls get to finish after SIGTERM/SIGINT (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](super::DEFAULT_DRAIN_TIMEOUT)).
    pub fn drain_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Advertises a plugin capability that no registered service implies
    /// (`VOLUME_ACCESSIBILITY_CONSTRAINTS`, online or offline volume expansion).
    pub fn plugin_capability(mut self, capability: S::PluginCapability) -> Self {
        self.plugin_extra.push(capability);
        self
    }

    /// Advertises a controller capability that no RPC implies (`CLONE_VOLUME`,
    /// `PUBLISH_READONLY`, `LIST_VOLUMES_PUBLISHED_NODES`, ...).
    pub fn controller_capability(mut self, capability: S::ControllerCapability) -> Self {
        self.declared.push(("Controller", capability.into()));
        self
    }

    /// Advertises a node capability that no RPC implies (`SINGLE_NODE_MULTI_WRITER`,
    /// `VOLUME_MOUNT_GROUP`).
    pub fn node_capability(mut self, capability: S::NodeCapability) -> Self {
        self.declared.push(("Node", capability.into()));
        self
    }

    /// Registers the driver's own Identity service; the RPCs it leaves out are still derived.
    pub fn identity<T>(self, service: T) -> Self
    where
        S: Register<service::Identity, T>,
    {
        self.register(S::registration(service))
    }

    /// Registers the driver's Controller service.
    pub fn controller<T>(self, service: T) -> Self
    where
        S: Register<service::Controller, T>,
    {
        self.register(S::registration(service))
    }

    /// Registers the driver's Node service.
    pub fn node<T>(self, service: T) -> Self
    where
        S: Register<service::Node, T>,
    {
        self.register(S::registration(service))
    }

    /// Registers the driver's GroupController service (releases from v1.9.0 on).
    pub fn group_controller<T>(self, service: T) -> Self
    where
        S: Register<service::GroupController, T>,
    {
        self.register(S::registration(service))
    }

    /// Registers the driver's SnapshotMetadata service (releases from v1.10.0 on).
    pub fn snapshot_metadata<T>(self, service: T) -> Self
    where
        S: Register<service::SnapshotMetadata, T>,
    {
        self.register(S::registration(service))
    }

    /// Registers a service through its [`Registration`].
    pub fn register(mut self, registration: Registration<S>) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Adds other services (csi-addons adapters, say) that share this server's pipeline, so
    /// serialisation spans them too: `|routes, pipeline| routes.add_service(
    /// csikit::addons::replication::server::ControllerService::new(Arc::new(driver), pipeline).into_server())`.
    pub fn routes_with(
        self,
        add: impl FnOnce(Routes, Arc<Pipeline>) -> Routes + Send + 'static,
    ) -> Self {
        self.register(Registration::new("", &[], move |routes, pipeline, _| {
            add(routes, Arc::clone(pipeline))
        }))
    }

    /// Whether the driver registered `service`.
    fn methods_registered(&self, service: &str) -> bool {
        self.registrations.iter().any(|r| r.service == service)
    }

    /// The RPC methods registered for `service`.
    fn methods(&self, service: &str) -> Vec<&'static str> {
        self.registrations
            .iter()
            .filter(|r| r.service == service)
            .flat_map(|r| r.implemented.iter().copied())
            .collect()
    }

    /// Derives Identity and the capabilities, runs the start-up check and assembles the routes.
    ///
    /// # Errors
    ///
    /// [`ServeError::Capabilities`] with [`Builder::strict`] when the check finds a problem.
    pub async fn build(mut self) -> Result<Server, ServeError> {
        let mut problems = Vec::new();
        if !self.registrations.iter().any(|r| r.service == "Identity") {
            self.registrations.insert(0, S::derived_identity());
        }
        // Computed in a block: nothing borrowed from `self` may live across the awaits below,
        // or the future would not be `Send`.
        let (capabilities, plugin_services) = {
            let mut capabilities = Vec::new();
            for table in S::CAPABILITIES {
                let methods = self.methods(table.service);
                let mut numbers = derive(table, &methods, &mut problems);
                numbers
                    .extend(self.declared.iter().filter(|(s, _)| *s == table.service).map(|d| d.1));
                capabilities.push((table.service, numbers));
            }
            let registered =
                |service: &str| self.registrations.iter().any(|r| r.service == service);
            let plugin_services: Vec<i32> = S::PLUGIN_SERVICES
                .iter()
                .filter(|p| registered(p.service))
                .map(|p| p.number)
                .collect();
            (capabilities, plugin_services)
        };

        // What the spec obliges, given the registered services and the capabilities advertised.
        for o in S::OBLIGATIONS {
            let registered = o.service == "Identity" || self.methods_registered(o.service);
            let obliged = o.if_any.is_empty()
                || o.if_any.iter().any(|(service, _, number)| {
                    capabilities.iter().any(|(s, n)| s == service && n.contains(number))
                });
            let answered =
                S::ANSWERED.contains(&o.method) || self.methods(o.service).contains(&o.method);
            if registered && obliged && !answered {
                let when = match o.if_any {
                    [] => String::new(),
                    caps => {
                        let names: Vec<&str> = caps.iter().map(|c| c.1).collect();
                        format!(" with {}", names.join(" or "))
                    }
                };
                problems.push(format!(
                    "{}: the spec obliges a {} plugin{when} to implement it ({}), and it answers \
                     UNIMPLEMENTED",
                    o.rpc,
                    o.service,
                    o.stated.words()
                ));
            }
        }

        // What the driver advertises itself, against what it implements: only the capabilities
        // the builder can derive are compared (the others are the driver's word).
        let mut registrations = Vec::with_capacity(self.registrations.len());
        // What each service's own capabilities RPC answers, where the driver answers it.
        let mut own: Vec<(&'static str, Vec<i32>)> = Vec::new();
        for mut registration in std::mem::take(&mut self.registrations) {
            let service = registration.service;
            if let Some(advertised) = registration.advertised.take() {
                let advertised = match advertised().await {
                    Ok(numbers) => {
                        own.push((service, numbers.clone()));
                        numbers
                    }
                    Err(status) => {
                        problems.push(format!(
                            "{service}: its capabilities RPC failed at start-up: {}",
                            status.message()
                        ));
                        registrations.push(registration);
                        continue;
                    }
                };
                let (derivable, derived): (Vec<(&str, i32)>, &[i32]) = if service == "Identity" {
                    let rows = S::PLUGIN_SERVICES.iter().map(|p| (p.name, p.number)).collect();
                    (rows, &plugin_services)
                } else {
                    let rows = S::CAPABILITIES
                        .iter()
                        .filter(|t| t.service == service)
                        .flat_map(|t| t.derivable.iter().map(|c| (c.name, c.number)))
                        .collect();
                    let derived = capabilities
                        .iter()
                        .find(|(s, _)| *s == service)
                        .map_or(&[][..], |(_, n)| n.as_slice());
                    (rows, derived)
                };
                for (name, number) in derivable {
                    let says = advertised.contains(&number);
                    let does = derived.contains(&number);
                    if says && !does {
                        problems.push(format!(
                            "{service} advertises {name} but the plugin does not implement what it needs"
                        ));
                    } else if does && !says {
                        problems.push(format!(
                            "{service} implements {name} but does not advertise it, so COs will not use it"
                        ));
                    }
                }
            }
            registrations.push(registration);
        }
        implications::<S>(&own, &capabilities, &mut problems);

        let plan = Plan::<S> {
            name: self.name,
            vendor_version: self.vendor_version,
            manifest: self.manifest,
            plugin_services,
            plugin_extra: self.plugin_extra,
            capabilities,
        };
        let derived = Arc::new(S::derive(plan, &mut problems));
        for problem in &problems {
            tracing::warn!(problem = problem.as_str(), "capabilities");
        }
        if self.strict && !problems.is_empty() {
            return Err(ServeError::Capabilities(problems));
        }

        let mut layers = self.layers;
        if let Some(serialisation) = self.serialisation {
            layers.serialisation = serialisation;
        }
        let pipeline = Arc::new(Pipeline::new(layers));
        let mut routes = Routes::default();
        for registration in registrations {
            routes = (registration.add)(routes, &pipeline, &derived);
        }
        Ok(Server { routes, problems, drain_timeout: self.drain_timeout })
    }

    /// Builds and serves on `CSI_ENDPOINT` until SIGTERM or SIGINT, then drains in-flight calls.
    ///
    /// # Errors
    ///
    /// When `CSI_ENDPOINT` is missing or bad, the start-up check fails with
    /// [`Builder::strict`], or serving fails.
    pub async fn serve_from_env(self) -> Result<(), ServeError> {
        let endpoint = super::Endpoint::from_env()?;
        let signal = super::shutdown_signal().map_err(|source| ServeError::Io {
            action: "installing the SIGTERM and SIGINT handlers".into(),
            source,
        })?;
        let shutdown = async move {
            let signal = signal.await;
            tracing::info!("{signal}: draining in-flight calls");
        };
        self.build().await?.serve(&endpoint, shutdown).await
    }
}

/// A built plugin server: its routes and what the start-up check found.
#[derive(Debug)]
pub struct Server {
    routes: Routes,
    problems: Vec<String>,
    drain_timeout: std::time::Duration,
}

impl Server {
    /// Disagreements between advertised capabilities and implemented RPCs (logged as warnings).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The routes, for a tonic server of the caller's own.
    pub fn into_routes(self) -> Routes {
        self.routes
    }

    /// Serves on `endpoint` until `shutdown` resolves, then drains in-flight calls (for at most
    /// the drain timeout).
    ///
    /// # Errors
    ///
    /// When the endpoint cannot be bound or serving fails.
    pub async fn serve(
        self,
        endpoint: &super::Endpoint,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ServeError> {
        super::serve_routes(self.routes, endpoint, shutdown, self.drain_timeout).await
    }
}

/// Reports each capability the plugin will advertise without one that it obliges the plugin to
/// have too. What a service advertises is its driver's own capabilities answer where it gives
/// one (`own`), else what the skeleton derives and answers (`derived`).
fn implications<S: PluginSpec>(
    own: &[(&'static str, Vec<i32>)],
    derived: &[(&'static str, Vec<i32>)],
    problems: &mut Vec<String>,
) {
    let advertises = |service: &str, number: i32| {
        let answer = own
            .iter()
            .find(|(s, _)| *s == service)
            .or_else(|| derived.iter().find(|(s, _)| *s == service));
        answer.is_some_and(|(_, numbers)| numbers.contains(&number))
    };
    for i in S::IMPLICATIONS {
        let (service, name, number) = i.capability;
        let (required_service, required, required_number) = i.requires;
        if advertises(service, number) && !advertises(required_service, required_number) {
            problems.push(format!(
                "{service} advertises {name} but not {required}: the spec says a plugin with \
                 {name} MUST also support {required} ({})",
                i.stated.words()
            ));
        }
    }
}

/// The capabilities of `table` that `methods` make; a capability with only some of its RPCs
/// implemented is left out and reported.
fn derive(table: &CapabilityTable, methods: &[&str], problems: &mut Vec<String>) -> Vec<i32> {
    let mut out = Vec::new();
    for capability in table.derivable {
        let (have, missing): (Vec<&str>, Vec<&str>) =
            capability.rpcs.iter().partition(|r| methods.contains(r));
        if missing.is_empty() {
            out.push(capability.number);
        } else if !have.is_empty() {
            problems.push(format!(
                "{} implements {} but not {}, so {} is not advertised",
                table.service,
                have.join(", "),
                missing.join(", "),
                capability.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up service: the derivation is the same whatever the release.
    const TABLE: CapabilityTable = CapabilityTable {
        service: "Backup",
        derivable: &[
            Capability { name: "SAVE_LOAD", number: 7, rpcs: &["save", "load"] },
            Capability { name: "LIST", number: 9, rpcs: &["list"] },
        ],
    };

    #[test]
    fn derive_takes_whole_capabilities_and_reports_halves() {
        let mut problems = Vec::new();
        assert_eq!(derive(&TABLE, &["save", "load"], &mut problems), vec![7]);
        assert!(problems.is_empty());
        assert_eq!(derive(&TABLE, &["save", "list"], &mut problems), vec![9]);
        assert_eq!(
            problems,
            ["Backup implements save but not load, so SAVE_LOAD is not advertised"]
        );
    }
}
