//! Each package's `server` module: the traits a driver implements (every RPC defaults to
//! UNIMPLEMENTED), adapters that put those behind tonic's generated servers with the
//! `csikit::server` layers, one [`Rpc`](../../runtime/server.rs) record per RPC (its path, and
//! the id it is serialised on), `SecretValues` for every message, and, for `csi.v1`, the
//! `Builder` that derives Identity and the capabilities from what was registered.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use csikit_spec::{Label, Method, Model, Service};

use crate::debug::secret_holders;
use crate::input::{Package, Parts};
use crate::names::{camel, relative_type_path, snake};

/// The Rust path of a message from inside `<package>::server`.
fn type_path(p: &Package<'_>, full_name: &str) -> Option<String> {
    if let Some(rel) = relative_type_path(&p.model.package, full_name) {
        return Some(format!("super::{rel}"));
    }
    p.extern_paths.iter().find_map(|(proto, rust)| {
        let package = proto.trim_start_matches('.');
        relative_type_path(package, full_name).map(|rel| format!("{rust}::{rel}"))
    })
}

/// The RPCs whose answer the skeleton derives when the driver does not define them.
fn derived_rpc(model: &Model, method: &str) -> bool {
    is_csi(model)
        && matches!(
            method,
            "GetPluginInfo"
                | "GetPluginCapabilities"
                | "Probe"
                | "ControllerGetCapabilities"
                | "NodeGetCapabilities"
                | "GroupControllerGetCapabilities"
        )
}

/// `csi.v1`: the package with the Identity and capability messages the builder knows.
pub fn is_csi(model: &Model) -> bool {
    model.package == "csi.v1"
        && model.method("GetPluginCapabilities").is_some()
        && model.method("ControllerGetCapabilities").is_some()
        && model.method("NodeGetCapabilities").is_some()
}

/// The body of `<package>/server.rs`; `parts` says which other parts the docs may link to.
pub fn generate_server(p: &Package<'_>, parts: &Parts) -> String {
    let model = p.model;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! Server traits of `{}` for drivers: implement the RPCs the plugin supports, mark\n\
         //! the `impl` block with [`#[csi_service]`](csikit::csi_service), and serve it\n//!{}.\n\
         //! Every RPC left out answers UNIMPLEMENTED; every call passes the [`csikit::server`]\n\
         //! layers. Each method's docs give the spec's text for its RPC, what obliges a plugin to\n\
         //! implement it, what the skeleton has checked when it runs, and the errors to answer with.\n\
         // The docs are written here from the Model, not copied from prose meant for protobuf:\n\
         // rustdoc holds them to its lints.\n\
         #![warn(missing_docs, rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags, rustdoc::bare_urls)]\n",
        model.package,
        if is_csi(model) {
            " with `Builder`"
        } else {
            " through a `*Service` adapter added to the v1 `Builder` with `routes_with`"
        }
    );
    out.push_str("use std::future::Future;\nuse std::sync::Arc;\n\n");
    // `Response` only where the adapter answers a derived RPC itself (csi.v1's Identity and
    // capabilities); the driver traits name `RpcResult`.
    let derives =
        model.services.iter().flat_map(|s| &s.methods).any(|m| derived_rpc(model, &m.name));
    out.push_str(if derives {
        "use ::csikit::tonic::{Request, Response};\n\n"
    } else {
        "use ::csikit::tonic::Request;\n\n"
    });
    let streaming = model
        .services
        .iter()
        .flat_map(|s| &s.methods)
        .any(|m| m.server_streaming && !m.client_streaming);
    out.push_str(if streaming {
        "use ::csikit::server::{BoxStream, Pipeline, RpcFuture, RpcResult, SecretValues};\n\n"
    } else {
        "use ::csikit::server::{Pipeline, RpcFuture, RpcResult, SecretValues};\n\n"
    });

    rpc_records(p, &mut out);
    for s in &model.services {
        service(p, parts, s, &mut out);
    }
    secret_values(p, &mut out);
    if is_csi(model) {
        builder(p, &mut out);
    }
    out
}

fn const_name(method: &str) -> String {
    snake(method).trim_start_matches("r#").to_ascii_uppercase()
}

fn rpc_records(p: &Package<'_>, out: &mut String) {
    let model = p.model;
    let _ = writeln!(
        out,
        "/// What the pipeline knows about each RPC: its path and the id it is serialised on."
    );
    let keyed = model
        .services
        .iter()
        .flat_map(|s| &s.methods)
        .any(|m| model.serialisation_key(m).is_some());
    let _ = writeln!(
        out,
        "pub mod rpc {{\n    use ::csikit::server::{};\n",
        if keyed { "{Key, Rpc}" } else { "Rpc" }
    );
    for s in &model.services {
        for m in &s.methods {
            let Some(input) = type_path(p, &m.input) else { continue };
            let input = input.replacen("super::", "super::super::", 1);
            // The key is a fact of the method, derived once in `csikit_spec::facts`.
            let key = match model.serialisation_key(m).map(|k| (k.kind, k.field)) {
                Some((kind, field)) => {
                    let fname = format!("key_{}", snake(&m.name).trim_start_matches("r#"));
                    let _ = writeln!(
                        out,
                        "    fn {fname}(request: &{input}) -> &str {{\n        &request.{}\n    }}",
                        snake(&field)
                    );
                    format!("Some(Key {{ kind: {kind:?}, get: {fname} }})")
                }
                None => "None".to_owned(),
            };
            let _ = writeln!(
                out,
                "    /// `{}.{}`.\n    pub static {}: Rpc<{input}> = Rpc {{ name: {:?}, path: \"/{}/{}\", facts: &super::super::facts::FACTS, key: {key} }};\n",
                s.name,
                m.name,
                const_name(&m.name),
                m.name,
                s.full_name,
                m.name,
            );
        }
    }
    let _ = writeln!(out, "}}\n");
}

/// The first paragraph of a proto comment, as escaped rustdoc lines.
fn first_paragraph(comment: &str) -> Vec<String> {
    crate::prose::comment_lines(comment).into_iter().take_while(|l| !l.is_empty()).collect()
}

/// Writes doc `lines` at `indent`.
fn write_doc(out: &mut String, indent: &str, lines: &[String]) {
    for line in lines {
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

fn service(p: &Package<'_>, parts: &Parts, s: &Service, out: &mut String) {
    let model = p.model;
    let trait_name = camel(&s.name);
    let tonic_mod = format!("super::{}_server", snake(&s.name).trim_start_matches("r#"));
    let methods: Vec<&Method> = s.methods.iter().filter(|m| !m.client_streaming).collect();
    let typed: Vec<(&Method, String, String)> = methods
        .iter()
        .filter_map(|m| Some((*m, type_path(p, &m.input)?, type_path(p, &m.output)?)))
        .collect();

    // The trait.
    let doc = first_paragraph(&s.comment);
    if !doc.is_empty() {
        write_doc(out, "", &doc);
        let _ = writeln!(out, "///");
    }
    let _ = writeln!(
        out,
        "/// The `{}` service as a driver writes it:\n/// define the RPCs the plugin\n\
         /// supports (as `async fn`, with the tonic signature) in an `impl` block marked\n\
         /// `#[csikit::csi_service]`; the rest answer UNIMPLEMENTED.",
        s.full_name
    );
    let _ = writeln!(out, "pub trait {trait_name}: Send + Sync + 'static {{");
    let _ = writeln!(
        out,
        "    /// The RPC methods (snake_case names) this implementation defines. `#[csikit::csi_service]`\n    \
         /// writes it from the `impl` block; the server answers UNIMPLEMENTED for the others and derives\n    \
         /// capabilities from the list.\n    fn implemented(&self) -> &'static [&'static str];\n"
    );
    for (m, input, output) in &typed {
        let method = snake(&m.name);
        let made = made_capabilities(model, &s.name, m);
        let doc = crate::rpc_docs::method_doc(p, parts, s, m, &made, derived_rpc(model, &m.name));
        write_doc(out, "    ", &doc);
        let ret = if m.server_streaming { format!("BoxStream<{output}>") } else { output.clone() };
        let _ = writeln!(
            out,
            "    fn {method}(&self, request: Request<{input}>) -> impl Future<Output = RpcResult<{ret}>> + Send {{\n        \
             drop(request);\n        std::future::ready(Err(::csikit::server::unimplemented({:?})))\n    }}\n",
            m.name
        );
    }
    let _ = writeln!(out, "}}\n");

    // The adapter.
    let has_derived = typed.iter().any(|(m, ..)| derived_rpc(model, &m.name));
    let adapter = format!("{trait_name}Service");
    let _ = writeln!(
        out,
        "/// A [`{trait_name}`] behind the [`csikit::server`] layers, as tonic's\n/// `{}` server.",
        s.full_name
    );
    let _ = writeln!(
        out,
        "pub struct {adapter}<T> {{\n    inner: Arc<T>,\n    pipeline: Arc<Pipeline>,\n    implemented: [bool; {}],",
        typed.len()
    );
    if has_derived {
        let _ = writeln!(out, "    derived: Arc<Derived>,");
    }
    let _ = writeln!(out, "}}\n");
    let names: Vec<String> = typed
        .iter()
        .map(|(m, ..)| format!("{:?}", snake(&m.name).trim_start_matches("r#")))
        .collect();
    let _ = writeln!(
        out,
        "impl<T> {adapter}<T> {{\n    /// The RPC methods of the service, in declaration order.\n    pub const METHODS: [&'static str; {}] = [{}];\n",
        typed.len(),
        names.join(", ")
    );
    let _ = writeln!(
        out,
        "    /// Whether the driver defines the RPC method `method` (snake_case).\n    pub fn implements(&self, method: &str) -> bool {{\n        Self::METHODS.iter().zip(self.implemented).any(|(m, i)| i && *m == method)\n    }}\n}}\n"
    );
    let _ = writeln!(out, "impl<T> Clone for {adapter}<T> {{\n    fn clone(&self) -> Self {{");
    let _ = writeln!(
        out,
        "        Self {{ inner: Arc::clone(&self.inner), pipeline: Arc::clone(&self.pipeline), implemented: self.implemented{} }}\n    }}\n}}\n",
        if has_derived { ", derived: Arc::clone(&self.derived)" } else { "" }
    );
    let derived_param = if has_derived { ", derived: Arc<Derived>" } else { "" };
    let _ = writeln!(out, "impl<T: {trait_name}> {adapter}<T> {{");
    let _ = writeln!(
        out,
        "    /// Wraps `inner`; calls pass through `pipeline`.\n    pub fn new(inner: Arc<T>, pipeline: Arc<Pipeline>{derived_param}) -> Self {{"
    );
    let _ = writeln!(
        out,
        "        let defined = inner.implemented();\n        let implemented = Self::METHODS.map(|m| defined.contains(&m));"
    );
    let _ = writeln!(
        out,
        "        Self {{ inner, pipeline, implemented{} }}\n    }}\n",
        if has_derived { ", derived" } else { "" }
    );
    let _ = writeln!(
        out,
        "    /// The tonic server of this adapter, ready for a router.\n    pub fn into_server(self) -> {tonic_mod}::{trait_name}Server<Self> {{\n        {tonic_mod}::{trait_name}Server::new(self)\n    }}\n}}\n"
    );

    // Written as `#[tonic::async_trait]` expands, not through it: the method boxes the pipeline's
    // future itself, rather than an `async` block that would hold the request and then that
    // future beside it (one more copy of both per call, and a larger box).
    let _ = writeln!(out, "impl<T: {trait_name}> {tonic_mod}::{trait_name} for {adapter}<T> {{");
    for (i, (m, input, output)) in typed.iter().enumerate() {
        let method = snake(&m.name);
        let record = format!("rpc::{}", const_name(&m.name));
        let fallback = if derived_rpc(model, &m.name) {
            format!(
                "            return Box::pin(std::future::ready(Ok(Response::new(self.derived.{}.clone()))));",
                snake(&m.name).trim_start_matches("r#")
            )
        } else {
            format!(
                "            return Box::pin(std::future::ready(Err(self.pipeline.unimplemented(&{record}))));"
            )
        };
        if m.server_streaming {
            let stream = format!("{}Stream", camel(&m.name));
            let _ = writeln!(out, "    type {stream} = BoxStream<{output}>;\n");
            let _ = writeln!(
                out,
                "    fn {method}<'life0, 'async_trait>(&'life0 self, request: Request<{input}>) -> RpcFuture<'async_trait, Self::{stream}>\n    \
                 where\n        'life0: 'async_trait,\n        Self: 'async_trait,\n    {{\n        \
                 if !self.implemented[{i}] {{\n{fallback}\n        }}\n        let inner = &*self.inner;\n        \
                 Box::pin(self.pipeline.server_streaming(&{record}, request, move |r| inner.{method}(r)))\n    }}\n"
            );
        } else {
            let _ = writeln!(
                out,
                "    fn {method}<'life0, 'async_trait>(&'life0 self, request: Request<{input}>) -> RpcFuture<'async_trait, {output}>\n    \
                 where\n        'life0: 'async_trait,\n        Self: 'async_trait,\n    {{\n        \
                 if !self.implemented[{i}] {{\n{fallback}\n        }}\n        let inner = &*self.inner;\n        \
                 Box::pin(self.pipeline.unary(&{record}, request, move |r| inner.{method}(r)))\n    }}\n"
            );
        }
    }
    let _ = writeln!(out, "}}\n");
}

fn secret_values(p: &Package<'_>, out: &mut String) {
    let model = p.model;
    let holders = secret_holders(model);
    for m in &model.messages {
        let Some(path) = type_path(p, &m.full_name) else { continue };
        if !holders.contains(m.full_name.as_str()) {
            let _ = writeln!(
                out,
                "impl SecretValues for {path} {{\n    fn secret_values<'a>(&'a self, _found: &mut dyn FnMut(&'a str)) {{}}\n}}\n"
            );
            continue;
        }
        let _ = writeln!(
            out,
            "impl SecretValues for {path} {{\n    fn secret_values<'a>(&'a self, found: &mut dyn FnMut(&'a str)) {{"
        );
        let mut oneofs = BTreeSet::new();
        for f in &m.fields {
            let value = f.ty.value_name();
            let nested = holders.contains(value);
            if !f.secret && !nested {
                continue;
            }
            // What to do with one value `v: &T`.
            let one = if nested {
                "v.secret_values(found)".to_owned()
            } else if value == "bytes" {
                "if let Ok(s) = std::str::from_utf8(v) { if !s.is_empty() { found(s) } }".to_owned()
            } else if value == "string" {
                "if !v.is_empty() { found(v) }".to_owned()
            } else {
                continue; // a secret number or enum cannot appear in text as such
            };
            let ident = snake(&f.name);
            if let Some(oneof) = &f.oneof {
                oneofs.insert(oneof.clone());
                let enum_path = format!("{}::{}", path_module(&path), camel(oneof));
                let _ = writeln!(
                    out,
                    "        if let Some({enum_path}::{}(v)) = &self.{} {{ {one}; }}",
                    camel(&f.name),
                    snake(oneof)
                );
                continue;
            }
            match f.label {
                Label::Map => {
                    let _ = writeln!(out, "        for v in self.{ident}.values() {{ {one}; }}");
                }
                Label::Repeated => {
                    let _ = writeln!(out, "        for v in &self.{ident} {{ {one}; }}");
                }
                Label::Singular if nested || f.proto3_optional => {
                    let _ = writeln!(out, "        if let Some(v) = &self.{ident} {{ {one}; }}");
                }
                Label::Singular => {
                    let _ = writeln!(out, "        {{ let v = &self.{ident}; {one}; }}");
                }
            }
        }
        let _ = writeln!(out, "    }}\n}}\n");
    }
}

/// `super::a::Msg` -> `super::a::msg` (the module prost puts a message's nested types in).
fn path_module(path: &str) -> String {
    match path.rsplit_once("::") {
        Some((parent, last)) => format!("{parent}::{}", snake(last)),
        None => snake(path),
    }
}

/// The capability <-> RPC pairings the Model does not state, by service: the builder takes every
/// other pairing from the Model's obligations ("A Controller Plugin MUST implement this RPC call
/// if it has `CREATE_DELETE_VOLUME` controller capability" pairs CreateVolume with it; from a
/// proto alone, "Indicates the SP supports the `X` RPC"). From v1.5.0 to v1.12.0
/// NodeGetVolumeStats' section names two ("GET_VOLUME_STATS ... or VOLUME_CONDITION", of which
/// only GET_VOLUME_STATS is made by the RPC alone). CreateSnapshot's section, from v1.0.0 to
/// v1.12.0, pairs it with CREATE_DELETE_SNAPSHOT; v1.13.0 is read from its proto alone, whose
/// capability comment does not say so, and CreateSnapshot changed in it (an alpha field), so
/// that section is not carried either: without this row DeleteSnapshot alone would make the
/// capability. Values without RPCs of their own (CLONE_VOLUME, PUBLISH_READONLY, ...) are
/// declared by the driver.
const CONTROLLER_CAPS: CapPairs = &[("CREATE_DELETE_SNAPSHOT", &["CreateSnapshot"])];
const NODE_CAPS: CapPairs = &[("GET_VOLUME_STATS", &["NodeGetVolumeStats"])];
const GROUP_CAPS: CapPairs = &[];
/// Plugin capabilities that a registered service makes.
const PLUGIN_SERVICES: &[(&str, &str)] = &[
    ("CONTROLLER_SERVICE", "Controller"),
    ("GROUP_CONTROLLER_SERVICE", "GroupController"),
    ("SNAPSHOT_METADATA_SERVICE", "SnapshotMetadata"),
];

/// The services whose capabilities the builder derives: (service, its capabilities RPC, the
/// capability message's module, the hand table of pairings).
fn cap_services(model: &Model) -> Vec<(&'static str, &'static str, &'static str, CapPairs)> {
    let has = |s: &str| model.services.iter().any(|x| x.name == s);
    let group = has("GroupController") && model.method("GroupControllerGetCapabilities").is_some();
    let mut services = vec![
        (
            "Controller",
            "ControllerGetCapabilities",
            "controller_service_capability",
            CONTROLLER_CAPS,
        ),
        ("Node", "NodeGetCapabilities", "node_service_capability", NODE_CAPS),
    ];
    if group {
        services.push((
            "GroupController",
            "GroupControllerGetCapabilities",
            "group_controller_service_capability",
            GROUP_CAPS,
        ));
    }
    services
}

/// The capability <-> RPC pairings of a hand table.
type CapPairs = &'static [(&'static str, &'static [&'static str])];

/// Whether defining `m` of `service` makes the capability `value`: its section makes that
/// capability, alone, its condition, or the hand table pairs them.
fn makes(service: &str, m: &Method, value: &str, hand: CapPairs) -> bool {
    let from_prose = m.obligation.as_ref().is_some_and(
        |o| matches!(o.if_any.as_slice(), [c] if c.service == service && c.name == value),
    );
    let from_hand = hand.iter().any(|(v, rpcs)| *v == value && rpcs.contains(&m.name.as_str()));
    from_prose || from_hand
}

/// The capabilities defining `m` (of `service`) makes the `csi.v1` builder advertise.
fn made_capabilities(model: &Model, service: &str, m: &Method) -> Vec<String> {
    if !is_csi(model) {
        return Vec::new();
    }
    let Some((_, _, module, hand)) = cap_services(model).into_iter().find(|c| c.0 == service)
    else {
        return Vec::new();
    };
    let enum_name = format!("csi.v1.{}.RPC.Type", camel(module));
    let Some(e) = model.enum_type(&enum_name) else { return Vec::new() };
    e.values.iter().filter(|v| makes(service, m, &v.name, hand)).map(|v| v.name.clone()).collect()
}

/// The derivable capabilities of one service, keeping the values and RPCs this release has:
/// `CapabilityTable { service, derivable: &[Capability { name, number, rpcs }, ..] }`.
fn cap_table(model: &Model, service: &str, enum_name: &str, hand: CapPairs) -> String {
    let Some(e) = model.enum_type(enum_name) else { return String::new() };
    let Some(svc) = model.services.iter().find(|s| s.name == service) else {
        return String::new();
    };
    let mut rows = Vec::new();
    for v in &e.values {
        // The service's RPCs that make this capability, in declaration order.
        let rpcs: Vec<String> = svc
            .methods
            .iter()
            .filter(|m| makes(service, m, &v.name, hand))
            .map(|m| format!("{:?}", snake(&m.name)))
            .collect();
        if rpcs.is_empty() {
            continue;
        }
        rows.push(format!(
            "Capability {{ name: {:?}, number: {}, rpcs: &[{}] }}",
            v.name,
            v.number,
            rpcs.join(", ")
        ));
    }
    format!("CapabilityTable {{ service: {service:?}, derivable: &[{}] }},\n", rows.join(",\n"))
}

/// The number of capability `name` of `service`'s `*ServiceCapability.RPC.Type` enum.
fn capability_number(model: &Model, service: &str, name: &str) -> Option<i32> {
    let module = match service {
        "Controller" => "ControllerServiceCapability",
        "Node" => "NodeServiceCapability",
        _ => "GroupControllerServiceCapability",
    };
    model
        .enum_type(&format!("{}.{module}.RPC.Type", model.package))
        .and_then(|e| e.values.iter().find(|v| v.name == name))
        .map(|v| v.number)
}

/// Whose word a fact of `m` is, as the runtime's `Stated`: a capability's comment in the proto,
/// an older release's prose carried in, or this release's prose.
fn stated(m: &Method, from_comment: bool) -> String {
    match (&m.carried_from, from_comment) {
        (_, true) => "Stated::Comment".to_owned(),
        (Some(from), false) => format!("Stated::Carried({from:?})"),
        (None, false) => "Stated::Prose".to_owned(),
    }
}

/// One `Implication { capability, requires, stated }` per capability the Model says obliges
/// another ("MUST also support"), read from the capabilities' comments in the proto.
fn implication_rows(model: &Model) -> Vec<String> {
    model
        .implications
        .iter()
        .filter_map(|i| {
            let (c, r) = (&i.capability, &i.requires);
            let cn = capability_number(model, &c.service, &c.name)?;
            let rn = capability_number(model, &r.service, &r.name)?;
            Some(format!(
                "Implication {{ capability: ({:?}, {:?}, {cn}), requires: ({:?}, {:?}, {rn}), \
                 stated: Stated::Comment }}",
                c.service, c.name, r.service, r.name
            ))
        })
        .collect()
}

/// One `Obligation { service, rpc, method, if_any, service_wide, stated }` per RPC the spec
/// obliges a plugin to implement (the capabilities with their enum numbers).
fn obligation_rows(model: &Model) -> Vec<String> {
    let number = |service: &str, name: &str| capability_number(model, service, name);
    let mut rows = Vec::new();
    for s in &model.services {
        for m in &s.methods {
            let Some(o) = &m.obligation else { continue };
            let caps: Option<Vec<String>> = o
                .if_any
                .iter()
                .map(|c| {
                    number(&c.service, &c.name)
                        .map(|n| format!("({:?}, {:?}, {n})", c.service, c.name))
                })
                .collect();
            let Some(caps) = caps else { continue };
            rows.push(format!(
                "Obligation {{ service: {:?}, rpc: {:?}, method: {:?}, if_any: &[{}], \
                 service_wide: {}, stated: {} }}",
                s.name,
                m.name,
                snake(&m.name),
                caps.join(", "),
                o.service_wide,
                stated(m, o.from_comment)
            ));
        }
    }
    rows
}

/// The `Spec` of `csi.v1` for the runtime's generic plugin builder: the capability tables of
/// this release, the derived answers, and a `Register` impl per service.
fn builder(p: &Package<'_>, out: &mut String) {
    let model = p.model;
    let has = |s: &str| model.services.iter().any(|x| x.name == s);
    // (service, capabilities RPC, capability module, hand table)
    let cap_services = cap_services(model);

    let implications = implication_rows(model);
    out.push_str(
        "use ::csikit::runtime::server::{Capability, CapabilityTable, Implication, Obligation, \
         Plan, PluginService, Registration, Stated};\n\n",
    );
    out.push_str(
        "/// The answers of Identity and the `*GetCapabilities` RPCs a driver leaves out, derived \
         from\n/// what it registered.\n#[derive(Debug, Clone, Default)]\npub struct Derived {\n    \
         get_plugin_info: super::GetPluginInfoResponse,\n    \
         get_plugin_capabilities: super::GetPluginCapabilitiesResponse,\n    \
         probe: super::ProbeResponse,\n",
    );
    for (_, rpc, ..) in &cap_services {
        let _ = writeln!(out, "    {}: super::{rpc}Response,", snake(rpc));
    }
    out.push_str("}\n\n");
    out.push_str(
        "/// The Identity the server answers when the driver registers none: everything derived.\n\
         struct DerivedIdentity;\n\nimpl Identity for DerivedIdentity {\n    \
         fn implemented(&self) -> &'static [&'static str] {\n        &[]\n    }\n}\n\n",
    );
    let _ = writeln!(
        out,
        "/// `{}` as the runtime's plugin builder sees it: which capabilities the implemented RPCs\n\
         /// make, and how this release writes the derived answers.\n#[derive(Debug, Clone, Copy)]\n\
         pub struct Spec;\n\n\
         /// The plugin builder of this release (see [`csikit::runtime::server::Builder`]).\n\
         pub type Builder = ::csikit::runtime::server::Builder<Spec>;\n\n\
         pub use ::csikit::runtime::server::Server;\n",
        model.package
    );

    let mut tables = String::new();
    for (service, _, module, table) in &cap_services {
        let enum_name = format!("csi.v1.{}.RPC.Type", camel(module));
        tables.push_str(&cap_table(model, service, &enum_name, table));
    }
    let plugin_rows: Vec<String> = model
        .enum_type("csi.v1.PluginCapability.Service.Type")
        .map(|e| {
            PLUGIN_SERVICES
                .iter()
                .filter(|(_, s)| has(s))
                .filter_map(|(v, s)| {
                    let value = e.values.iter().find(|x| x.name == *v)?;
                    Some(format!(
                        "PluginService {{ name: {:?}, number: {}, service: {s:?} }}",
                        value.name, value.number
                    ))
                })
                .collect()
        })
        .unwrap_or_default();

    let _ = writeln!(
        out,
        "impl ::csikit::runtime::server::PluginSpec for Spec {{\n    type Derived = Derived;\n    \
         type PluginCapability = super::plugin_capability::Type;\n    \
         type ControllerCapability = super::controller_service_capability::rpc::Type;\n    \
         type NodeCapability = super::node_service_capability::rpc::Type;\n\n    \
         const CAPABILITIES: &'static [CapabilityTable] = &[\n{tables}];\n    \
         const PLUGIN_SERVICES: &'static [PluginService] = &[{}];\n    \
         const OBLIGATIONS: &'static [Obligation] = &[{}];\n    \
         const IMPLICATIONS: &'static [Implication] = &[{}];\n    \
         const ANSWERED: &'static [&'static str] = &[{}];\n",
        plugin_rows.join(", "),
        obligation_rows(model).join(",\n"),
        implications.join(",\n"),
        model
            .services
            .iter()
            .flat_map(|s| &s.methods)
            .filter(|m| derived_rpc(model, &m.name))
            .map(|m| format!("{:?}", snake(&m.name)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    out.push_str(
        "    fn derive(plan: Plan<Self>, problems: &mut Vec<String>) -> Derived {\n        \
         let mut plugin: Vec<super::PluginCapability> = plan\n            .plugin_services\n            \
         .iter()\n            .map(|t| super::PluginCapability {\n                \
         r#type: Some(super::plugin_capability::Type::Service(super::plugin_capability::Service { \
         r#type: *t })),\n            })\n            .collect();\n        \
         plugin.extend(plan.plugin_extra.iter().cloned().map(|t| super::PluginCapability { r#type: \
         Some(t) }));\n        let derived = Derived {\n",
    );
    for (service, rpc, module, _) in &cap_services {
        let ty = camel(module);
        let _ = writeln!(
            out,
            "            {}: super::{rpc}Response {{\n                capabilities: plan\n                    \
             .capabilities({service:?})\n                    .iter()\n                    \
             .map(|t| super::{ty} {{ r#type: Some(super::{module}::Type::Rpc(super::{module}::Rpc {{ \
             r#type: *t }})) }})\n                    .collect(),\n            }},",
            snake(rpc)
        );
    }
    out.push_str(
        "            get_plugin_capabilities: super::GetPluginCapabilitiesResponse { capabilities: \
         plugin },\n            probe: super::ProbeResponse { ready: Some(true) },\n            \
         get_plugin_info: super::GetPluginInfoResponse {\n                name: plan.name,\n                \
         vendor_version: plan.vendor_version,\n                manifest: plan.manifest,\n            },\n        \
         };\n        if let Err(v) = ::csikit::Validate::validate(&derived.get_plugin_info) {\n            \
         problems.push(format!(\"GetPluginInfo: {v}\"));\n        }\n        derived\n    }\n\n    \
         fn derived_identity() -> Registration<Self> {\n        \
         Registration::new(\"Identity\", &[], |routes, pipeline, derived| {\n            \
         routes.add_service(\n                IdentityService::new(Arc::new(DerivedIdentity), \
         Arc::clone(pipeline), Arc::clone(derived))\n                    .into_server(),\n            )\n        \
         })\n    }\n}\n\n",
    );

    // One `Register` impl per service of this release.
    let services = ["Identity", "Controller", "Node", "GroupController", "SnapshotMetadata"];
    for s in services.into_iter().filter(|s| has(s)) {
        let derived = if s == "SnapshotMetadata" { "" } else { ", Arc::clone(derived)" };
        let param = if s == "SnapshotMetadata" { "_derived" } else { "derived" };
        let _ = writeln!(
            out,
            "impl<T: {s}> ::csikit::runtime::server::Register<::csikit::runtime::server::service::{s}, T> \
             for Spec {{\n    fn registration(service: T) -> Registration<Spec> {{\n        \
             let service = Arc::new(service);\n        let implemented = service.implemented();\n        \
             let probe = Arc::clone(&service);\n        \
             let registration = Registration::new({s:?}, implemented, move |routes, pipeline, {param}| {{\n            \
             routes.add_service({s}Service::new(service, Arc::clone(pipeline){derived}).into_server())\n        }});"
        );
        // The driver's own capabilities answer, as enum numbers, for the start-up comparison.
        let caps: Option<(&str, String)> = match s {
            "Identity" => Some((
                "GetPluginCapabilities",
                "if let Some(super::plugin_capability::Type::Service(s)) = &c.r#type { \
                 Some(s.r#type) } else { None }"
                    .to_owned(),
            )),
            _ => cap_services.iter().find(|c| c.0 == s).map(|(_, rpc, module, _)| {
                let number = format!(
                    "if let Some(super::{module}::Type::Rpc(x)) = &c.r#type {{ Some(x.r#type) }} \
                     else {{ None }}"
                );
                (*rpc, number)
            }),
        };
        match caps {
            Some((rpc, number)) => {
                let method = snake(rpc);
                let _ = writeln!(
                    out,
                    "        if !implemented.contains(&{method:?}) {{\n            return registration;\n        }}\n        \
                     registration.advertising(move || async move {{\n            \
                     let request = Request::new(super::{rpc}Request::default());\n            \
                     let response = probe.{method}(request).await?;\n            \
                     Ok(response.get_ref().capabilities.iter().filter_map(|c| {number}).collect())\n        }})\n    }}\n}}\n"
                );
            }
            None => {
                let _ = writeln!(out, "        drop(probe);\n        registration\n    }}\n}}\n");
            }
        }
    }
}
