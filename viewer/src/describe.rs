//! `csi-view list [ENDPOINT]` and `csi-view describe [ENDPOINT]`: what a plugin says it is, beside
//! what the spec says that obliges it to implement.
//!
//! `list` calls the Identity RPCs (GetPluginInfo, GetPluginCapabilities, Probe) and the
//! `*GetCapabilities` RPC of each service the plugin serves (a service named by a plugin
//! capability, `CONTROLLER_SERVICE` for Controller; Node, which no capability names, when
//! `NodeGetCapabilities` is not UNIMPLEMENTED), and prints each capability with the RPCs the
//! spec's obligations tie to it (from the schema's source: the Model's, or for the built-in
//! schema `csikit`'s server tables, which come from it), plus the RPCs each service must always
//! implement. `describe` adds every RPC of each served service: whether the spec obliges it here,
//! and whether the plugin answers it. Only RPCs that read (their name, after the service's, starts
//! with `Get`, `List`, `Probe` or `Validate`) are called to find out, each with an empty request,
//! which changes nothing on any plugin; the others are "not probed". Streaming RPCs are not called.
//!
//! `describe METHOD` (a method name where the endpoint goes: no ':' and not an absolute path)
//! calls nothing: it sets out the RPC as the schema states it (`csi_view_core::outline`).
//!
//! Everything is read by reflection through the schema, so `--spec-dir`, `--proto` and
//! `--descriptor-set` work as for every command. Exit code: 0; 1 from `describe` when an RPC the
//! spec obliges the plugin to implement answers UNIMPLEMENTED; the gRPC code when an Identity call
//! fails; 14 when nothing answers at the endpoint; 2 for bad input.

use std::collections::BTreeSet;
use std::io::Write;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use csi_view_core::rpcs::{CapabilityRef, ObligedRpc, status_name};
use csi_view_core::schema::Schema;
use csikit_runtime::endpoint::Flag;
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage, ServiceDescriptor, Value};
use serde_json::json;

use crate::args::{DescribeArgs, OutFormat};
use crate::load::{load_schema, stdout};
use csi_view::client::Client;

/// One capability as the plugin states it, and what the spec ties to it.
struct Capability {
    /// The oneof member set and its type's value: `service CONTROLLER_SERVICE`, `rpc LIST_VOLUMES`.
    shown: String,
    /// The enum value's name, `CONTROLLER_SERVICE`.
    name: String,
    /// The RPCs whose obligation names it.
    obliges: Vec<String>,
}

/// One RPC of a served service, for `describe`.
struct RpcRow {
    name: String,
    /// Why the spec obliges it here (`always`, `CREATE_DELETE_VOLUME`), if it does.
    obliged: Option<String>,
    /// The status name of a probe, or why it was not called.
    answer: String,
    unimplemented: bool,
}

/// A service the plugin serves.
struct Served {
    name: String,
    capabilities: Vec<Capability>,
    always: Vec<String>,
    rpcs: Vec<RpcRow>,
}

pub(crate) fn list(a: DescribeArgs) -> Result<u8> {
    run(a, false)
}

pub(crate) fn describe(a: DescribeArgs) -> Result<u8> {
    run(a, true)
}

fn run(a: DescribeArgs, probe_all: bool) -> Result<u8> {
    let mut schema = load_schema(&a.schema)?;
    if schema.builtin {
        schema.set_obligations("csi.v1", builtin_obligations());
    }
    if probe_all
        && let Some(given) = a.endpoint.as_deref()
        && !crate::call::names_endpoint(&schema, given)
    {
        // `describe METHOD`: the RPC as the schema states it, with no plugin.
        let method = csi_view_core::method::resolve(&schema, given).map_err(|e| anyhow!("{e}"))?;
        if a.format == OutFormat::Json {
            bail!("describe METHOD prints text; --format json is for a plugin's description");
        }
        let mut out = stdout();
        out.write_all(csi_view_core::outline::outline(&schema, &method).as_bytes())?;
        out.flush()?;
        return Ok(0);
    }
    let flag = Flag { name: "ENDPOINT", value: a.endpoint.as_deref() };
    let endpoint = csikit_runtime::endpoint::required(Some(flag))?.written;
    let timeout = crate::args::timeout(a.timeout)?;
    let identity = identity_service(&schema)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async {
        let mut client = match Client::connect(&endpoint, timeout).await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: UNAVAILABLE: {e}");
                return Ok(tonic::Code::Unavailable as u8);
            }
        };
        let mut plugin = Plugin { schema: &schema, client: &mut client, identity: &identity };
        plugin.report(&endpoint, a.format == OutFormat::Json, probe_all).await
    })
}

/// `csikit`'s generated obligations of `csi.v1` (the built-in schema's), as the Model states them.
fn builtin_obligations() -> Vec<ObligedRpc> {
    use csikit::runtime::server::{PluginSpec, Stated};
    csikit::v1::server::Spec::OBLIGATIONS
        .iter()
        .map(|o| ObligedRpc {
            service: o.service.to_owned(),
            rpc: o.rpc.to_owned(),
            obligation: csi_view_core::rpcs::Obligation {
                plugin: o.service.to_owned(),
                if_any: o
                    .if_any
                    .iter()
                    .map(|(service, name, _)| CapabilityRef {
                        service: (*service).to_owned(),
                        name: (*name).to_owned(),
                    })
                    .collect(),
                service_wide: o.service_wide,
                // Whose word: the release's prose, an older release's carried, or a
                // capability's comment in the proto.
                from_comment: o.stated == Stated::Comment,
            },
            carried_from: match o.stated {
                Stated::Carried(from) => Some(from.to_owned()),
                _ => None,
            },
        })
        .collect()
}

/// The schema's CSI Identity service: a service named `Identity` with `GetPluginInfo`.
fn identity_service(schema: &Schema) -> Result<ServiceDescriptor> {
    schema
        .pools()
        .flat_map(|p| p.services().collect::<Vec<_>>())
        .find(|s| s.name() == "Identity" && s.methods().any(|m| m.name() == "GetPluginInfo"))
        .ok_or_else(|| anyhow!("the schema has no Identity service with GetPluginInfo"))
}

/// `CONTROLLER_SERVICE` → `Controller`, `GROUP_CONTROLLER_SERVICE` → `GroupController`.
fn service_of_capability(name: &str) -> Option<String> {
    let words = name.strip_suffix("_SERVICE")?;
    Some(
        words
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next().map_or_else(String::new, |f| {
                    f.to_ascii_uppercase().to_string() + &c.as_str().to_ascii_lowercase()
                })
            })
            .collect(),
    )
}

/// Whether an RPC only reads, by its verb: the name after its service's starts with `Get`,
/// `List`, `Probe` or `Validate`.
fn reads(service: &str, rpc: &str) -> bool {
    let verb = rpc.strip_prefix(service).unwrap_or(rpc);
    ["Get", "List", "Probe", "Validate"].iter().any(|v| verb.starts_with(v))
}

struct Plugin<'a> {
    schema: &'a Schema,
    client: &'a mut Client,
    identity: &'a ServiceDescriptor,
}

/// A failed Identity call: its code, printed.
struct Failed(u8);

impl Plugin<'_> {
    /// Calls `method` with an empty request: the decoded response, or the status.
    async fn empty_call(
        &mut self,
        method: &MethodDescriptor,
    ) -> Result<DynamicMessage, tonic::Status> {
        let answer = self.client.unary(&csi_view_core::method::path(method), Bytes::new()).await;
        match answer.response {
            Some(bytes) => DynamicMessage::decode(method.output(), bytes.as_ref()).map_err(|e| {
                tonic::Status::internal(format!(
                    "the response is not a valid {}: {e}",
                    method.output().full_name()
                ))
            }),
            None => Err(answer.status),
        }
    }

    /// An Identity RPC that must answer; its status printed when it does not.
    async fn required(&mut self, rpc: &str) -> Result<DynamicMessage, Failed> {
        let method = self.identity.methods().find(|m| m.name() == rpc);
        let Some(method) = method else {
            eprintln!("error: the schema's Identity service has no {rpc}");
            return Err(Failed(2));
        };
        self.empty_call(&method).await.map_err(|s| {
            let name = status_name(s.code() as i32);
            eprintln!("{rpc}: {name}: {}", s.message().replace('\n', " "));
            for line in self.schema.error_rows(&method, s.code() as i32).explain(rpc, &name) {
                eprintln!("  {line}");
            }
            Failed(u8::try_from(s.code() as i32).unwrap_or(2))
        })
    }

    async fn report(&mut self, endpoint: &str, json: bool, probe_all: bool) -> Result<u8> {
        let (info, caps, probe) = match (
            self.required("GetPluginInfo").await,
            self.required("GetPluginCapabilities").await,
            self.required("Probe").await,
        ) {
            (Ok(i), Ok(c), Ok(p)) => (i, c, p),
            (Err(Failed(code)), _, _) | (_, Err(Failed(code)), _) | (_, _, Err(Failed(code))) => {
                return Ok(code);
            }
        };
        let package = self.identity.parent_file().package_name().to_owned();
        let obligations = self.schema.obligations(&package).map(<[ObligedRpc]>::to_vec);
        let plugin_caps =
            capabilities(self.schema, &caps, "capabilities", &obligations, "Identity");
        let mut served = Vec::new();
        let services: Vec<ServiceDescriptor> = self
            .identity
            .parent_pool()
            .services()
            .filter(|s| s.package_name() == package)
            .collect();
        for service in &services {
            let name = service.name().to_owned();
            if name == "Identity" {
                continue;
            }
            let named = plugin_caps
                .iter()
                .any(|c| service_of_capability(&c.name).as_deref() == Some(name.as_str()));
            let get_caps = service.methods().find(|m| m.name() == format!("{name}GetCapabilities"));
            // Node is served by node plugins, which no plugin capability names: ask it.
            let capabilities = match (&get_caps, named) {
                (Some(m), _) => match self.empty_call(m).await {
                    Ok(resp) => {
                        capabilities(self.schema, &resp, "capabilities", &obligations, &name)
                    }
                    Err(s) if s.code() == tonic::Code::Unimplemented && !named => continue,
                    Err(s) => {
                        eprintln!(
                            "{}: {}: {}",
                            m.name(),
                            status_name(s.code() as i32),
                            s.message().replace('\n', " ")
                        );
                        Vec::new()
                    }
                },
                (None, true) => Vec::new(),
                (None, false) => continue,
            };
            let always = obliged_always(&obligations, &name);
            served.push((service.clone(), Served { name, capabilities, always, rpcs: Vec::new() }));
        }
        // Every capability advertised, by service: an obligation may name another service's
        // (NodeGetInfo, with the Controller's PUBLISH_UNPUBLISH_VOLUME).
        let advertised: BTreeSet<(String, String)> = served
            .iter()
            .flat_map(|(_, s)| s.capabilities.iter().map(|c| (s.name.clone(), c.name.clone())))
            .collect();
        if probe_all {
            for (service, s) in &mut served {
                s.rpcs = self.rpc_rows(service, &advertised, &obligations).await;
            }
        }
        let served: Vec<Served> = served.into_iter().map(|(_, s)| s).collect();
        let identity_always = obliged_always(&obligations, "Identity");
        let broken =
            served.iter().flat_map(|s| &s.rpcs).any(|r| r.obliged.is_some() && r.unimplemented);
        let mut out = stdout();
        if json {
            let value = json!({
                "endpoint": endpoint,
                "package": package,
                "plugin": message_json(&info),
                "probe": message_json(&probe),
                "obligations_stated": obligations.is_some(),
                "identity_always": identity_always,
                "plugin_capabilities": caps_json(&plugin_caps),
                "services": served.iter().map(|s| json!({
                    "service": s.name,
                    "capabilities": caps_json(&s.capabilities),
                    "always": s.always,
                    "rpcs": s.rpcs.iter().map(|r| json!({
                        "rpc": r.name, "obliged": r.obliged, "answer": r.answer,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut out, &value)?;
            writeln!(out)?;
        } else {
            let name = field_text(&info, "name");
            let version = field_text(&info, "vendor_version");
            writeln!(out, "plugin {name} {version} ({package}, {endpoint})")?;
            let manifest = field_text(&info, "manifest");
            if !manifest.is_empty() {
                writeln!(out, "  manifest {manifest}")?;
            }
            writeln!(out, "  probe: ready {}", field_text(&probe, "ready"))?;
            if obligations.is_none() {
                writeln!(out, "  (obligations: not stated by this source)")?;
            } else if !identity_always.is_empty() {
                writeln!(out, "  Identity must always implement {}", identity_always.join(", "))?;
            }
            writeln!(out, "plugin capabilities")?;
            print_caps(&mut out, &plugin_caps)?;
            for s in &served {
                writeln!(out, "{} service", s.name)?;
                if !s.always.is_empty() {
                    writeln!(out, "  must always implement {}", s.always.join(", "))?;
                }
                print_caps(&mut out, &s.capabilities)?;
                for r in &s.rpcs {
                    let why = r
                        .obliged
                        .as_deref()
                        .map_or("not obliged".to_owned(), |w| format!("obliged: {w}"));
                    let flag = if r.obliged.is_some() && r.unimplemented {
                        "  <- the spec obliges it"
                    } else {
                        ""
                    };
                    writeln!(out, "  rpc {:<32} {:<42} {}{flag}", r.name, why, r.answer)?;
                }
            }
        }
        out.flush()?;
        Ok(u8::from(broken))
    }

    /// Every RPC of `service`: obliged or not, and its answer to an empty request when it reads.
    async fn rpc_rows(
        &mut self,
        service: &ServiceDescriptor,
        advertised: &BTreeSet<(String, String)>,
        obligations: &Option<Vec<ObligedRpc>>,
    ) -> Vec<RpcRow> {
        let mut rows = Vec::new();
        for m in service.methods() {
            let obliged = obligations.as_ref().and_then(|all| {
                let o = all.iter().find(|o| o.service == service.name() && o.rpc == m.name())?;
                let if_any = &o.obligation.if_any;
                if if_any.is_empty() {
                    return Some("always".to_owned());
                }
                let by: Vec<&str> = if_any
                    .iter()
                    .filter(|c| advertised.contains(&(c.service.clone(), c.name.clone())))
                    .map(|c| c.name.as_str())
                    .collect();
                (!by.is_empty()).then(|| by.join(" or "))
            });
            let (answer, unimplemented) = if m.is_client_streaming() || m.is_server_streaming() {
                ("not probed (streaming)".to_owned(), false)
            } else if !reads(service.name(), m.name()) {
                ("not probed (changes state)".to_owned(), false)
            } else {
                match self.empty_call(&m).await {
                    Ok(_) => ("answers (OK)".to_owned(), false),
                    Err(s) if s.code() == tonic::Code::Unimplemented => {
                        ("UNIMPLEMENTED".to_owned(), true)
                    }
                    Err(s) => (format!("answers ({})", status_name(s.code() as i32)), false),
                }
            };
            rows.push(RpcRow { name: m.name().to_owned(), obliged, answer, unimplemented });
        }
        rows
    }
}

/// The RPCs of `service` the spec obliges whatever it advertises.
fn obliged_always(obligations: &Option<Vec<ObligedRpc>>, service: &str) -> Vec<String> {
    obligations
        .iter()
        .flatten()
        .filter(|o| o.service == service && o.obligation.if_any.is_empty())
        .map(|o| o.rpc.clone())
        .collect()
}

/// The capabilities listed in `field` of a `*GetCapabilities` response, each with the RPCs whose
/// obligation names it (`service` is the capability's service: `Controller`, `Node`, or
/// `Identity` for plugin capabilities).
fn capabilities(
    schema: &Schema,
    resp: &DynamicMessage,
    field: &str,
    obligations: &Option<Vec<ObligedRpc>>,
    service: &str,
) -> Vec<Capability> {
    let Some(list) = resp.get_field_by_name(field) else {
        return Vec::new();
    };
    let Value::List(items) = &*list else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_message)
        .map(|cap| {
            // The oneof member set (`service`, `rpc`, `volume_expansion`) and its `type`.
            let (shown, name) = cap
                .fields()
                .find_map(|(f, v)| {
                    let inner = v.as_message()?;
                    let ty = inner.get_field_by_name("type")?;
                    let number = ty.as_enum_number()?;
                    let field = inner.descriptor().get_field_by_name("type")?;
                    let kind = field.kind();
                    let value = kind.as_enum().and_then(|e| e.get_value(number));
                    let name =
                        value.as_ref().map_or_else(|| number.to_string(), |v| v.name().to_owned());
                    // A value this release reserved, named as an older release named it.
                    let former = value.as_ref().and_then(|v| schema.former_value(v));
                    let shown = match (former, &value) {
                        (Some(former), _) => format!("{} {name} ({former})", f.name()),
                        (None, None) => format!("{} {name} (unknown value)", f.name()),
                        (None, Some(_)) => format!("{} {name}", f.name()),
                    };
                    Some((shown, name))
                })
                .unwrap_or_else(|| ("? UNKNOWN".to_owned(), "UNKNOWN".to_owned()));
            let obliges = obligations
                .iter()
                .flatten()
                .filter(|o| {
                    o.obligation
                        .if_any
                        .iter()
                        .any(|c| c.name == name && (c.service == service || service == "Identity"))
                })
                .map(|o| o.rpc.clone())
                .collect();
            Capability { shown, name, obliges }
        })
        .collect()
}

fn print_caps(out: &mut impl Write, caps: &[Capability]) -> std::io::Result<()> {
    if caps.is_empty() {
        writeln!(out, "  (none advertised)")?;
    }
    for c in caps {
        if c.obliges.is_empty() {
            writeln!(out, "  {}", c.shown)?;
        } else {
            writeln!(out, "  {:<40} obliges {}", c.shown, c.obliges.join(", "))?;
        }
    }
    Ok(())
}

fn caps_json(caps: &[Capability]) -> Vec<serde_json::Value> {
    caps.iter().map(|c| json!({ "capability": c.shown, "obliges": c.obliges })).collect()
}

/// A message as canonical JSON (GetPluginInfo and Probe hold no secrets).
fn message_json(m: &DynamicMessage) -> serde_json::Value {
    m.serialize_with_options(serde_json::value::Serializer, &prost_reflect::SerializeOptions::new())
        .unwrap_or(serde_json::Value::Null)
}

/// A field as one short text: strings bare, messages and maps as compact JSON, unset empty
/// (`unset` for Probe's `ready`).
fn field_text(m: &DynamicMessage, name: &str) -> String {
    let key = m
        .descriptor()
        .get_field_by_name(name)
        .map_or_else(|| name.to_owned(), |f| f.json_name().to_owned());
    match message_json(m).get(&key) {
        None if name == "ready" => "unset".to_owned(),
        None => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_a_release_reserved_is_named_and_marked_and_an_unknown_one_is_a_number() {
        use csikit::v1_12::controller_service_capability::{Rpc, Type, rpc};
        use prost::Message as _;
        let schema = Schema::builtin().expect("built in");
        let cap = |t: i32| csikit::v1_12::ControllerServiceCapability {
            r#type: Some(Type::Rpc(Rpc { r#type: t })),
        };
        // What a v1.12.0 plugin advertises, and a number no release names.
        let answer = csikit::v1_12::ControllerGetCapabilitiesResponse {
            capabilities: vec![
                cap(rpc::Type::GetVolume as i32),
                cap(rpc::Type::VolumeCondition as i32),
                cap(99),
            ],
        };
        let desc = schema.find_message("csi.v1.ControllerGetCapabilitiesResponse").expect("type");
        let resp =
            DynamicMessage::decode(desc, answer.encode_to_vec().as_slice()).expect("decodes");
        let shown: Vec<String> = capabilities(&schema, &resp, "capabilities", &None, "Controller")
            .into_iter()
            .map(|c| c.shown)
            .collect();
        assert_eq!(
            shown,
            [
                "rpc GET_VOLUME".to_owned(),
                format!(
                    "rpc VOLUME_CONDITION (named as in v1.12.0, reserved in {})",
                    csikit::SPEC_RELEASE
                ),
                "rpc 99 (unknown value)".to_owned(),
            ]
        );
    }

    #[test]
    fn capability_names_name_their_services() {
        assert_eq!(service_of_capability("CONTROLLER_SERVICE").as_deref(), Some("Controller"));
        assert_eq!(
            service_of_capability("GROUP_CONTROLLER_SERVICE").as_deref(),
            Some("GroupController")
        );
        assert_eq!(service_of_capability("VOLUME_ACCESSIBILITY_CONSTRAINTS"), None);
    }

    #[test]
    fn only_reading_verbs_are_probed() {
        for (service, rpc) in [
            ("Controller", "ListVolumes"),
            ("Controller", "ControllerGetVolume"),
            ("Controller", "ValidateVolumeCapabilities"),
            ("Node", "NodeGetVolumeStats"),
            ("Identity", "Probe"),
        ] {
            assert!(reads(service, rpc), "{rpc}");
        }
        for (service, rpc) in [
            ("Controller", "CreateVolume"),
            ("Controller", "ControllerPublishVolume"),
            ("Controller", "ControllerModifyVolume"),
            ("Node", "NodeStageVolume"),
            ("GroupController", "DeleteVolumeGroupSnapshot"),
        ] {
            assert!(!reads(service, rpc), "{rpc}");
        }
    }
}
