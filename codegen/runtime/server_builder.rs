/// The answers of Identity and the `*GetCapabilities` RPCs a driver leaves out, derived from
/// what it registered.
#[derive(Debug, Clone, Default)]
pub struct Derived {
    get_plugin_info: super::GetPluginInfoResponse,
    get_plugin_capabilities: super::GetPluginCapabilitiesResponse,
    probe: super::ProbeResponse,
    controller_get_capabilities: super::ControllerGetCapabilitiesResponse,
    node_get_capabilities: super::NodeGetCapabilitiesResponse,
    group_controller_get_capabilities: super::GroupControllerGetCapabilitiesResponse, //group
}

/// A capability and the RPC methods that make it.
type Table<E> = &'static [(E, &'static [&'static str])];

/// Controller capabilities and their RPCs (the spec's prose; the others are declared with
/// [`Builder::controller_capability`]).
const CONTROLLER_CAPS: Table<super::controller_service_capability::rpc::Type> = /*CONTROLLER_CAPS*/&[];
/// Node capabilities and their RPCs.
const NODE_CAPS: Table<super::node_service_capability::rpc::Type> = /*NODE_CAPS*/&[];
/// Group controller capabilities and their RPCs. //group
const GROUP_CAPS: Table<super::group_controller_service_capability::rpc::Type> = /*GROUP_CAPS*/&[]; //group
/// Plugin capabilities that a registered service makes.
const PLUGIN_SERVICES: &[(super::plugin_capability::service::Type, &str)] = /*PLUGIN_SERVICES*/&[];

/// The Identity the server answers when the driver registers none: everything derived.
struct DerivedIdentity;

impl Identity for DerivedIdentity {
    fn implemented(&self) -> &'static [&'static str] {
        &[]
    }
}

type Advertised = Box<dyn FnOnce() -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<String>, Status>> + Send>> + Send>;
type AddService = Box<dyn FnOnce(tonic::service::Routes, &Arc<Pipeline>, &Arc<Derived>) -> tonic::service::Routes + Send>;

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
pub struct Builder {
    info: super::GetPluginInfoResponse,
    layers: crate::server::Layers,
    strict: bool,
    drain_timeout: std::time::Duration,
    identity: bool,
    plugin_extra: Vec<super::PluginCapability>,
    controller_extra: Vec<super::controller_service_capability::rpc::Type>,
    node_extra: Vec<super::node_service_capability::rpc::Type>,
    implemented: Vec<(&'static str, &'static [&'static str])>,
    advertised: Vec<(&'static str, Advertised)>,
    add: Vec<AddService>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder").field("info", &self.info).field("layers", &self.layers).field("implemented", &self.implemented).finish_non_exhaustive()
    }
}

impl Builder {
    /// A plugin named `name` (domain-name notation, at most 63 characters) at `vendor_version`.
    pub fn new(name: impl Into<String>, vendor_version: impl Into<String>) -> Self {
        Self {
            info: super::GetPluginInfoResponse { name: name.into(), vendor_version: vendor_version.into(), manifest: Default::default() },
            layers: crate::server::Layers::default(),
            strict: false,
            drain_timeout: crate::server::DEFAULT_DRAIN_TIMEOUT,
            identity: false,
            plugin_extra: Vec::new(),
            controller_extra: Vec::new(),
            node_extra: Vec::new(),
            implemented: Vec::new(),
            advertised: Vec::new(),
            add: Vec::new(),
        }
    }

    /// Adds an entry to `GetPluginInfo`'s manifest.
    pub fn manifest(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.info.manifest.insert(key.into(), value.into());
        self
    }

    /// Chooses the layers (default: all on, response validation in debug builds).
    pub fn layers(mut self, layers: crate::server::Layers) -> Self {
        self.layers = layers;
        self
    }

    /// Makes a disagreement between advertised capabilities and implemented RPCs a start-up
    /// error rather than a warning.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// How long in-flight calls get to finish after SIGTERM/SIGINT (default
    /// [`DEFAULT_DRAIN_TIMEOUT`](crate::server::DEFAULT_DRAIN_TIMEOUT)).
    pub fn drain_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Advertises a plugin capability that no registered service implies
    /// (`VOLUME_ACCESSIBILITY_CONSTRAINTS`, online or offline volume expansion).
    pub fn plugin_capability(mut self, capability: super::plugin_capability::Type) -> Self {
        self.plugin_extra.push(super::PluginCapability { r#type: Some(capability) });
        self
    }

    /// Advertises a controller capability that no RPC implies (`CLONE_VOLUME`,
    /// `PUBLISH_READONLY`, `LIST_VOLUMES_PUBLISHED_NODES`, `VOLUME_CONDITION`, ...).
    pub fn controller_capability(mut self, capability: super::controller_service_capability::rpc::Type) -> Self {
        self.controller_extra.push(capability);
        self
    }

    /// Advertises a node capability that no RPC implies (`VOLUME_CONDITION`,
    /// `SINGLE_NODE_MULTI_WRITER`, `VOLUME_MOUNT_GROUP`).
    pub fn node_capability(mut self, capability: super::node_service_capability::rpc::Type) -> Self {
        self.node_extra.push(capability);
        self
    }

    /// Registers the driver's own Identity service; the RPCs it leaves out are still derived.
    pub fn identity<T: Identity>(mut self, service: T) -> Self {
        let service = Arc::new(service);
        self.identity = true;
        self.implemented.push(("Identity", service.implemented()));
        if service.implemented().contains(&"get_plugin_capabilities") {
            let probe = Arc::clone(&service);
            self.advertised.push((
                "Identity",
                Box::new(move || {
                    Box::pin(async move { probe.get_plugin_capabilities(Request::new(super::GetPluginCapabilitiesRequest::default())).await.map(|r| plugin_caps(r.get_ref())) })
                }),
            ));
        }
        self.add.push(Box::new(move |routes, pipeline, derived| routes.add_service(IdentityService::new(service, Arc::clone(pipeline), Arc::clone(derived)).into_server())));
        self
    }

    /*REGISTER*/

    /// Adds other services (csi-addons adapters, say) that share this server's pipeline, so
    /// serialisation spans them too: `|routes, pipeline| routes.add_service(
    /// csikit::addons::replication::server::ControllerService::new(Arc::new(driver), pipeline).into_server())`.
    pub fn routes_with(mut self, add: impl FnOnce(tonic::service::Routes, Arc<Pipeline>) -> tonic::service::Routes + Send + 'static) -> Self {
        self.add.push(Box::new(move |routes, pipeline, _| add(routes, Arc::clone(pipeline))));
        self
    }

    /// Derives Identity and the capabilities, runs the start-up check and assembles the routes.
    pub async fn build(self) -> Result<Server, crate::server::ServeError> {
        let mut problems = Vec::new();
        let methods = |service: &str| self.implemented.iter().filter(|(s, _)| *s == service).flat_map(|(_, m)| m.iter().copied()).collect::<Vec<_>>();
        let registered = |service: &str| self.implemented.iter().any(|(s, _)| *s == service);

        let mut controller = derive("Controller", CONTROLLER_CAPS, &methods("Controller"), |t| t.as_str_name(), &mut problems);
        controller.extend(self.controller_extra.iter().copied());
        let mut node = derive("Node", NODE_CAPS, &methods("Node"), |t| t.as_str_name(), &mut problems);
        node.extend(self.node_extra.iter().copied());
        let group = derive("GroupController", GROUP_CAPS, &methods("GroupController"), |t| t.as_str_name(), &mut problems); //group
        let mut plugin: Vec<super::PluginCapability> = PLUGIN_SERVICES
            .iter()
            .filter(|(_, service)| registered(service))
            .map(|(t, _)| super::PluginCapability { r#type: Some(super::plugin_capability::Type::Service(super::plugin_capability::Service { r#type: *t as i32 })) })
            .collect();
        plugin.extend(self.plugin_extra.iter().cloned());

        use super::controller_service_capability as cc;
        use super::node_service_capability as nc;
        use super::group_controller_service_capability as gc; //group
        let derived = Derived {
            get_plugin_info: self.info.clone(),
            get_plugin_capabilities: super::GetPluginCapabilitiesResponse { capabilities: plugin },
            probe: super::ProbeResponse { ready: Some(true) },
            controller_get_capabilities: super::ControllerGetCapabilitiesResponse {
                capabilities: controller.iter().map(|t| super::ControllerServiceCapability { r#type: Some(cc::Type::Rpc(cc::Rpc { r#type: *t as i32 })) }).collect(),
            },
            node_get_capabilities: super::NodeGetCapabilitiesResponse {
                capabilities: node.iter().map(|t| super::NodeServiceCapability { r#type: Some(nc::Type::Rpc(nc::Rpc { r#type: *t as i32 })) }).collect(),
            },
            group_controller_get_capabilities: super::GroupControllerGetCapabilitiesResponse { //group
                capabilities: group.iter().map(|t| super::GroupControllerServiceCapability { r#type: Some(gc::Type::Rpc(gc::Rpc { r#type: *t as i32 })) }).collect(), //group
            }, //group
        };
        if let Err(v) = crate::Validate::validate(&derived.get_plugin_info) {
            problems.push(format!("GetPluginInfo: {v}"));
        }

        // What the driver advertises itself, against what it implements.
        for (service, advertised) in self.advertised {
            let advertised = match advertised().await {
                Ok(names) => names,
                Err(status) => {
                    problems.push(format!("{service}: its capabilities RPC failed at start-up: {}", status.message()));
                    continue;
                }
            };
            let expected: Vec<String> = match service {
                "Identity" => plugin_caps(&derived.get_plugin_capabilities),
                "Controller" => controller_caps(&derived.controller_get_capabilities),
                "Node" => node_caps(&derived.node_get_capabilities),
                "GroupController" => group_caps(&derived.group_controller_get_capabilities), //group
                _ => continue,
            };
            let derivable: Vec<&str> = match service {
                "Identity" => PLUGIN_SERVICES.iter().map(|(t, _)| t.as_str_name()).collect(),
                "Controller" => CONTROLLER_CAPS.iter().map(|(t, _)| t.as_str_name()).collect(),
                "Node" => NODE_CAPS.iter().map(|(t, _)| t.as_str_name()).collect(),
                "GroupController" => GROUP_CAPS.iter().map(|(t, _)| t.as_str_name()).collect(), //group
                _ => continue,
            };
            for name in derivable {
                let says = advertised.iter().any(|a| a == name);
                let does = expected.iter().any(|e| e == name);
                if says && !does {
                    problems.push(format!("{service} advertises {name} but the plugin does not implement what it needs"));
                } else if does && !says {
                    problems.push(format!("{service} implements {name} but does not advertise it, so COs will not use it"));
                }
            }
        }
        for problem in &problems {
            tracing::warn!(problem = problem.as_str(), "capabilities");
        }
        if self.strict && !problems.is_empty() {
            return Err(crate::server::ServeError::Capabilities(problems));
        }

        let pipeline = Arc::new(Pipeline::new(self.layers));
        let derived = Arc::new(derived);
        let mut routes = tonic::service::Routes::default();
        if !self.identity {
            routes = routes.add_service(IdentityService::new(Arc::new(DerivedIdentity), Arc::clone(&pipeline), Arc::clone(&derived)).into_server());
        }
        for add in self.add {
            routes = add(routes, &pipeline, &derived);
        }
        Ok(Server { routes, problems, drain_timeout: self.drain_timeout })
    }

    /// Builds and serves on `CSI_ENDPOINT` until SIGTERM or SIGINT, then drains in-flight calls.
    pub async fn serve_from_env(self) -> Result<(), crate::server::ServeError> {
        let endpoint = crate::server::Endpoint::from_env()?;
        self.build().await?.serve(&endpoint, crate::server::shutdown_signal()).await
    }
}

/// A built plugin server: its routes and what the start-up check found.
#[derive(Debug)]
pub struct Server {
    routes: tonic::service::Routes,
    problems: Vec<String>,
    drain_timeout: std::time::Duration,
}

impl Server {
    /// Disagreements between advertised capabilities and implemented RPCs (logged as warnings).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The routes, for a tonic server of the caller's own.
    pub fn into_routes(self) -> tonic::service::Routes {
        self.routes
    }

    /// Serves on `endpoint` until `shutdown` resolves, then drains in-flight calls (for at most
    /// the drain timeout).
    pub async fn serve(self, endpoint: &crate::server::Endpoint, shutdown: impl Future<Output = ()>) -> Result<(), crate::server::ServeError> {
        crate::server::serve_routes(self.routes, endpoint, shutdown, self.drain_timeout).await
    }
}

/// The capabilities a table derives from `methods`; a capability with only some of its RPCs
/// implemented is left out and reported.
fn derive<E: Copy>(service: &str, table: Table<E>, methods: &[&str], name: fn(E) -> &'static str, problems: &mut Vec<String>) -> Vec<E> {
    let mut out = Vec::new();
    for (capability, rpcs) in table {
        let (have, missing): (Vec<&str>, Vec<&str>) = rpcs.iter().partition(|r| methods.contains(r));
        if missing.is_empty() {
            out.push(*capability);
        } else if !have.is_empty() {
            problems.push(format!("{service} implements {} but not {}, so {} is not advertised", have.join(", "), missing.join(", "), name(*capability)));
        }
    }
    out
}

/// The names of the capabilities in a `*GetCapabilities` response: `number` reads a
/// capability's enum number (if it is of the kind compared), `name` names a number.
fn cap_names<C>(caps: &[C], number: impl Fn(&C) -> Option<i32>, name: impl Fn(i32) -> Option<&'static str>) -> Vec<String> {
    caps.iter().filter_map(number).map(|n| name(n).map_or_else(|| n.to_string(), str::to_owned)).collect()
}

fn plugin_caps(r: &super::GetPluginCapabilitiesResponse) -> Vec<String> {
    use super::plugin_capability::{Type, service};
    let number = |c: &super::PluginCapability| match &c.r#type {
        Some(Type::Service(s)) => Some(s.r#type),
        _ => None,
    };
    cap_names(&r.capabilities, number, |n| service::Type::try_from(n).ok().map(|t| t.as_str_name()))
}

fn controller_caps(r: &super::ControllerGetCapabilitiesResponse) -> Vec<String> {
    use super::controller_service_capability::{Type, rpc};
    let number = |c: &super::ControllerServiceCapability| c.r#type.as_ref().map(|Type::Rpc(x)| x.r#type);
    cap_names(&r.capabilities, number, |n| rpc::Type::try_from(n).ok().map(|t| t.as_str_name()))
}

fn node_caps(r: &super::NodeGetCapabilitiesResponse) -> Vec<String> {
    use super::node_service_capability::{Type, rpc};
    let number = |c: &super::NodeServiceCapability| c.r#type.as_ref().map(|Type::Rpc(x)| x.r#type);
    cap_names(&r.capabilities, number, |n| rpc::Type::try_from(n).ok().map(|t| t.as_str_name()))
}

fn group_caps(r: &super::GroupControllerGetCapabilitiesResponse) -> Vec<String> { //group
    use super::group_controller_service_capability::{Type, rpc}; //group
    let number = |c: &super::GroupControllerServiceCapability| c.r#type.as_ref().map(|Type::Rpc(x)| x.r#type); //group
    cap_names(&r.capabilities, number, |n| rpc::Type::try_from(n).ok().map(|t| t.as_str_name())) //group
} //group
