//! The page's "call a plugin" part: the RPCs the schema has, grouped by service; a request per
//! method composed in the tree (kept while the page moves between methods); sending it to the
//! plugin at `--endpoint` once the spec's rules hold (the server checks again whatever the page
//! says); the response as a tree, or the gRPC status with the spec's error-table row.
//!
//! Secrets typed into a request are sent and never shown back: the request's tree is always
//! drawn with them hidden, a status message has them scrubbed, and responses are drawn with
//! their secret fields hidden too. Ids that responses carry (`volume_id`, `snapshot_id`,
//! `node_id`, ...) are kept and offered for the `*_id` fields of later requests.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage};
use serde_json::{Value as Json, json};

use csi_view_core::rpcs::{ErrorLookup, Table};
use csi_view_core::schema::Schema;

use super::ids::{self, SeenId};
use super::{State, edit, tree};
use crate::send::{Outgoing, Plugin, Reply};

/// What the call part holds.
pub(crate) struct Calls {
    /// The plugin requests go to, when there is one.
    plugin: Option<Plugin>,
    timeout: Duration,
    drafts: Mutex<Drafts>,
}

#[derive(Default)]
struct Drafts {
    /// The gRPC path of the method on the page.
    current: Option<String>,
    /// The request of each method opened, by gRPC path.
    requests: HashMap<String, DynamicMessage>,
    ids: Vec<SeenId>,
}

/// Why the page cannot send without an endpoint.
pub(crate) const NO_PLUGIN: &str =
    "no plugin is connected: start csi-view ui with --endpoint ENDPOINT or with CSI_ENDPOINT set";

impl Calls {
    pub(crate) fn new(endpoint: Option<String>, timeout: Duration) -> Calls {
        Calls {
            plugin: endpoint.map(|e| Plugin::new(e, timeout)),
            timeout,
            drafts: Mutex::new(Drafts::default()),
        }
    }

    fn drafts(&self) -> MutexGuard<'_, Drafts> {
        self.drafts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A method the page can call, from its gRPC path (or any name `method::resolve` reads):
/// unary, the client sends one message and reads one.
fn callable(schema: &Schema, name: &str) -> Result<MethodDescriptor> {
    let method = csi_view_core::method::resolve(schema, name)?;
    if method.is_client_streaming() || method.is_server_streaming() {
        bail!("{} streams; the page calls unary methods only", method.name());
    }
    Ok(method)
}

fn method_json(schema: &Schema, m: &MethodDescriptor) -> Json {
    let path = csi_view_core::method::path(m);
    json!({
        "name": m.name(),
        "service": m.parent_service().full_name(),
        "alpha": schema.method_facts(&path).is_some_and(|f| f.alpha),
        "path": path,
        "input": m.input().full_name(),
        "output": m.output().full_name(),
    })
}

impl State {
    /// The endpoint, or why there is none, and every unary RPC of the schema by service.
    pub(super) fn methods(&self) -> Json {
        let mut services: Vec<(String, Vec<Json>)> = Vec::new();
        let unary = csi_view_core::method::all(&self.schema)
            .into_iter()
            .filter(|m| !m.is_client_streaming() && !m.is_server_streaming());
        for m in unary {
            let service = m.parent_service().full_name().to_owned();
            match services.last_mut() {
                Some((name, methods)) if *name == service => {
                    methods.push(method_json(&self.schema, &m))
                }
                _ => services.push((service, vec![method_json(&self.schema, &m)])),
            }
        }
        let calls = &self.calls;
        let endpoint = calls.plugin.as_ref().map(Plugin::endpoint);
        json!({
            "endpoint": endpoint,
            "reason": if endpoint.is_none() { Some(NO_PLUGIN) } else { None },
            "timeout_ms": u64::try_from(calls.timeout.as_millis()).unwrap_or(u64::MAX),
            "services": services.into_iter().map(|(name, methods)| json!({
                "name": name, "methods": methods,
            })).collect::<Vec<_>>(),
        })
    }

    /// Puts the method at gRPC `path` on the page, its request as it was left, else empty.
    pub(super) fn open_method(&self, name: &str) -> Result<Json> {
        let method = callable(&self.schema, name)?;
        let path = csi_view_core::method::path(&method);
        let mut drafts = self.calls.drafts();
        drafts.requests.entry(path.clone()).or_insert_with(|| DynamicMessage::new(method.input()));
        drafts.current = Some(path);
        drop(drafts);
        self.request()
    }

    /// The request on the page as a tree: every field, secrets hidden whatever the page shows.
    pub(super) fn request(&self) -> Result<Json> {
        let drafts = self.calls.drafts();
        let path = drafts.current.clone().ok_or_else(|| anyhow!("no method is open"))?;
        let method = callable(&self.schema, &path)?;
        let real = drafts.requests.get(&path).ok_or_else(|| anyhow!("no request for '{path}'"))?;
        let mut shown = real.clone();
        csi_view_core::redact::redact(&self.schema, &mut shown);
        let shape = tree::Shape { ids: &drafts.ids, ..self.shape(tree::Mode::Compose) };
        let mut out = shape.view(real, &shown);
        out["method"] = method_json(&self.schema, &method);
        Ok(out)
    }

    /// Changes the request on the page; on an error it is left as it was.
    pub(super) fn edit_request(&self, change: &edit::Change<'_>) -> Result<Json> {
        {
            let mut drafts = self.calls.drafts();
            let path = drafts.current.clone().ok_or_else(|| anyhow!("no method is open"))?;
            let request =
                drafts.requests.get_mut(&path).ok_or_else(|| anyhow!("no request for '{path}'"))?;
            let mut edited = request.clone();
            edit::apply(&self.schema, &mut edited, change)?;
            *request = edited;
        }
        self.request()
    }

    /// Empties the request on the page.
    pub(super) fn reset_request(&self) -> Result<Json> {
        {
            let mut drafts = self.calls.drafts();
            let path = drafts.current.clone().ok_or_else(|| anyhow!("no method is open"))?;
            if let Some(r) = drafts.requests.get_mut(&path) {
                *r = DynamicMessage::new(r.descriptor());
            }
        }
        self.request()
    }

    /// Sends the request on the page, unless it breaks a rule (then nothing is sent and the
    /// answer lists the violations): the response as a tree, or the status and its error row.
    pub(super) async fn send(&self) -> Result<Json> {
        let (path, request) = {
            let drafts = self.calls.drafts();
            let path = drafts.current.clone().ok_or_else(|| anyhow!("no method is open"))?;
            let request =
                drafts.requests.get(&path).cloned().ok_or_else(|| anyhow!("no request"))?;
            (path, request)
        };
        let method = callable(&self.schema, &path)?;
        let request = match Outgoing::checked(&self.schema, &method, &request) {
            Ok(request) => request,
            Err(broken) => {
                let violations: Vec<Json> = broken
                    .iter()
                    .map(|v| json!({"path": v.path, "message": v.to_string()}))
                    .collect();
                return Ok(json!({"outcome": "refused", "violations": violations}));
            }
        };
        let plugin = self.calls.plugin.as_ref().ok_or_else(|| anyhow!(NO_PLUGIN))?;
        let reply = plugin.send(request).await;
        self.answered(&method, &reply)
    }

    /// What the page shows of a plugin's reply: the response as a tree (secrets hidden, its own
    /// rules checked, its ids kept), or the status with the request's secrets scrubbed from its
    /// message.
    pub(super) fn answered(&self, method: &MethodDescriptor, reply: &Reply) -> Result<Json> {
        let elapsed = u64::try_from(reply.answer.elapsed.as_millis()).unwrap_or(u64::MAX);
        let Some(response) = reply.response() else {
            return Ok(self.status_json(method, reply, elapsed));
        };
        let response =
            response.map_err(|e| anyhow!("the plugin's answer to {}: {e}", method.name()))?;
        let mut shown = response.clone();
        csi_view_core::redact::redact(&self.schema, &mut shown);
        let tree = self.shape(tree::Mode::Document).view(&response, &shown);
        self.remember_ids(method, &response);
        Ok(json!({"outcome": "ok", "response": tree, "elapsed_ms": elapsed}))
    }

    /// Keeps the non-secret `*_id` strings of a response, the newest first, each value once.
    fn remember_ids(&self, method: &MethodDescriptor, response: &DynamicMessage) {
        let mut drafts = self.calls.drafts();
        ids::remember(&mut drafts.ids, &self.schema, method.name(), response);
    }
}

impl State {
    /// A gRPC status for the page: code, name and (scrubbed) message, with what the spec's error
    /// tables say about that code for this RPC (its rows, else why there are none); nothing from
    /// them for a status csi-view made itself (no connection, no answer in time).
    fn status_json(&self, method: &MethodDescriptor, reply: &Reply, ms: u64) -> Json {
        let (code, name, message) = (reply.code(), reply.status_name(), reply.message());
        let Some(lookup) = reply.error_rows(&self.schema) else {
            return json!({
                "outcome": "status",
                "status": {"code": code, "name": name, "message": message},
                "method": method.name(),
                "table": "",
                "rows": [],
                "no_row": "the plugin did not answer: this status is csi-view's own, so the spec's error tables say nothing about it",
                "elapsed_ms": ms,
            });
        };
        let table = match &lookup {
            ErrorLookup::Rows { table: Table::Rpc, .. } => {
                format!("{}'s error table", method.name())
            }
            ErrorLookup::Rows { table: Table::General, .. } => "the general error table".to_owned(),
            ErrorLookup::NoRow | ErrorLookup::NoTables => String::new(),
        };
        let rows: Vec<Json> = lookup
            .rows()
            .iter()
            .map(|r| {
                json!({
                    "condition": r.condition,
                    "code": r.code,
                    "description": r.description,
                    "recovery": r.recovery,
                })
            })
            .collect();
        let none =
            if rows.is_empty() { reply.explain(&self.schema).join(" ") } else { String::new() };
        json!({
            "outcome": "status",
            "status": {"code": code, "name": name, "message": message},
            "method": method.name(),
            "table": table,
            "rows": rows,
            "no_row": none,
            "elapsed_ms": ms,
        })
    }
}
