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

use anyhow::{Result, anyhow};
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage, Value};
use serde_json::{Value as Json, json};

use csi_view_core::schema::Schema;

use super::{State, documents, edit, tree};
use crate::client::Client;

/// How many ids the page keeps offering (the newest first).
const IDS_KEPT: usize = 64;

/// An id a response carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeenId {
    /// The field it was in (`volume_id`).
    pub(crate) field: String,
    pub(crate) value: String,
    /// The RPC that answered it (`CreateVolume`).
    pub(crate) method: String,
}

/// The ids offered for a request field named `field`: those seen in a field of the same name,
/// or whose name ends in it or it in theirs after a `_` (`source_volume_id` and `volume_id`).
pub(crate) fn offered<'a>(ids: &'a [SeenId], field: &'a str) -> impl Iterator<Item = &'a SeenId> {
    let ends = |long: &str, short: &str| {
        long.strip_suffix(short).is_some_and(|head| head.is_empty() || head.ends_with('_'))
    };
    ids.iter().filter(move |s| ends(&s.field, field) || ends(field, &s.field))
}

/// What the call part holds.
pub(crate) struct Calls {
    endpoint: Option<String>,
    timeout: Duration,
    /// Dialled at the first send, dialled again after a failed dial.
    client: tokio::sync::Mutex<Option<Client>>,
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
            endpoint,
            timeout,
            client: tokio::sync::Mutex::new(None),
            drafts: Mutex::new(Drafts::default()),
        }
    }

    fn drafts(&self) -> MutexGuard<'_, Drafts> {
        self.drafts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A method the page can call: unary (the client sends one message and reads one).
fn callable(schema: &Schema, path: &str) -> Option<MethodDescriptor> {
    schema.find_method(path).filter(|m| !m.is_client_streaming() && !m.is_server_streaming())
}

fn method_json(m: &MethodDescriptor, alpha: bool) -> Json {
    json!({
        "name": m.name(),
        "service": m.parent_service().full_name(),
        "path": format!("/{}/{}", m.parent_service().full_name(), m.name()),
        "input": m.input().full_name(),
        "output": m.output().full_name(),
        "alpha": alpha,
    })
}

impl State {
    /// The endpoint, or why there is none, and every unary RPC of the schema by service.
    pub(super) fn methods(&self) -> Json {
        let mut services: Vec<(String, bool, Vec<Json>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for facts in self.schema.facts_tables().flat_map(|p| p.methods.iter()) {
            let Some(m) = callable(&self.schema, &facts.path) else { continue };
            if !seen.insert(facts.path.to_string()) {
                continue;
            }
            let entry = match services.iter_mut().find(|s| s.0 == *facts.service) {
                Some(s) => s,
                None => {
                    services.push((facts.service.to_string(), true, Vec::new()));
                    services.last_mut().unwrap_or_else(|| unreachable!())
                }
            };
            entry.1 &= facts.alpha;
            entry.2.push(method_json(&m, facts.alpha));
        }
        let calls = &self.calls;
        json!({
            "endpoint": calls.endpoint,
            "reason": if calls.endpoint.is_none() { Some(NO_PLUGIN) } else { None },
            "timeout_ms": u64::try_from(calls.timeout.as_millis()).unwrap_or(u64::MAX),
            "services": services.into_iter().map(|(name, alpha, methods)| json!({
                "name": name, "alpha": alpha, "methods": methods,
            })).collect::<Vec<_>>(),
        })
    }

    /// Puts the method at gRPC `path` on the page, its request as it was left, else empty.
    pub(super) fn open_method(&self, path: &str) -> Result<Json> {
        let method = callable(&self.schema, path)
            .ok_or_else(|| anyhow!("'{path}' is not a unary method of the schema"))?;
        let mut drafts = self.calls.drafts();
        drafts
            .requests
            .entry(path.to_owned())
            .or_insert_with(|| DynamicMessage::new(method.input()));
        drafts.current = Some(path.to_owned());
        drop(drafts);
        self.request()
    }

    /// The request on the page as a tree: every field, secrets hidden whatever the page shows.
    pub(super) fn request(&self) -> Result<Json> {
        let drafts = self.calls.drafts();
        let path = drafts.current.clone().ok_or_else(|| anyhow!("no method is open"))?;
        let method = callable(&self.schema, &path).ok_or_else(|| anyhow!("no method '{path}'"))?;
        let real = drafts.requests.get(&path).ok_or_else(|| anyhow!("no request for '{path}'"))?;
        let mut shown = real.clone();
        csi_view_core::redact::redact(&self.schema, &mut shown);
        let shape = tree::Shape { ids: &drafts.ids, ..self.shape(tree::Mode::Compose) };
        let mut out = shape.view(real, &shown);
        let alpha = self.schema.method_facts(&path).is_some_and(|f| f.alpha);
        out["method"] = method_json(&method, alpha);
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
        let method = callable(&self.schema, &path).ok_or_else(|| anyhow!("no method '{path}'"))?;
        let broken = csi_view_core::validate::validate(&self.schema, &request);
        if !broken.is_empty() {
            let violations: Vec<Json> =
                broken.iter().map(|v| json!({"path": v.path, "message": v.to_string()})).collect();
            return Ok(json!({"outcome": "refused", "violations": violations}));
        }
        let endpoint = self.calls.endpoint.as_deref().ok_or_else(|| anyhow!(NO_PLUGIN))?;
        let bytes = prost::Message::encode_to_vec(&request);
        let client = {
            let mut slot = self.calls.client.lock().await;
            match slot.as_ref() {
                Some(c) => c.clone(),
                None => match Client::connect(endpoint, self.calls.timeout).await {
                    Ok(c) => slot.insert(c).clone(),
                    Err(e) => return Ok(status_json(&method, 14, &e.to_string(), 0)),
                },
            }
        };
        let answer = client.clone().unary(&path, bytes.clone().into()).await;
        self.answered(&method, &bytes, answer)
    }

    /// What the page shows of a plugin's answer to `request` (encoded): the response as a tree
    /// (secrets hidden, its own rules checked, its ids kept), or the status with the request's
    /// secrets scrubbed from its message.
    pub(super) fn answered(
        &self,
        method: &MethodDescriptor,
        request: &[u8],
        answer: crate::client::Answer,
    ) -> Result<Json> {
        let elapsed = u64::try_from(answer.elapsed.as_millis()).unwrap_or(u64::MAX);
        let code = answer.code();
        let Some(body) = answer.response.filter(|_| code == 0) else {
            // Drivers echo their input in errors: the request's secrets are taken out.
            let secrets = secret_values(&self.schema, method, request);
            let message = csikit_runtime::redact::scrub(answer.status.message(), &secrets);
            return Ok(status_json(method, code, &message, elapsed));
        };
        let response = documents::decode(&method.output(), &body)
            .map_err(|e| anyhow!("the plugin's answer to {}: {e}", method.name()))?;
        let mut shown = response.clone();
        csi_view_core::redact::redact(&self.schema, &mut shown);
        let tree = self.shape(tree::Mode::Document).view(&response, &shown);
        self.remember_ids(method, &response);
        Ok(json!({"outcome": "ok", "response": tree, "elapsed_ms": elapsed}))
    }

    /// Keeps the non-secret `*_id` strings of a response, the newest first, each value once.
    fn remember_ids(&self, method: &MethodDescriptor, response: &DynamicMessage) {
        let mut found = Vec::new();
        collect_ids(&self.schema, method.name(), response, &mut found);
        let mut drafts = self.calls.drafts();
        for id in found.into_iter().rev() {
            drafts.ids.retain(|s| s.value != id.value || s.field != id.field);
            drafts.ids.insert(0, id);
        }
        drafts.ids.truncate(IDS_KEPT);
    }
}

fn collect_ids(schema: &Schema, method: &str, msg: &DynamicMessage, out: &mut Vec<SeenId>) {
    for (field, value) in msg.fields() {
        if schema.is_secret(&field) {
            continue;
        }
        let values: Vec<&Value> = match value {
            Value::List(items) => items.iter().collect(),
            Value::Map(map) => map.values().collect(),
            v => vec![v],
        };
        for v in values {
            match v {
                Value::Message(m) => collect_ids(schema, method, m, out),
                Value::String(s) if !s.is_empty() && field.name().ends_with("_id") => {
                    out.push(SeenId {
                        field: field.name().to_owned(),
                        value: s.clone(),
                        method: method.to_owned(),
                    });
                }
                _ => {}
            }
        }
    }
}

/// The secret strings of an encoded request, for the runtime's one scrubbing rule.
fn secret_values(schema: &Schema, method: &MethodDescriptor, bytes: &[u8]) -> Vec<String> {
    let input = method.input();
    let mask = csi_view_core::mask::SecretMask::of_types(schema, bytes, [&input]);
    mask.ranges()
        .iter()
        .filter_map(|r| bytes.get(r.clone()))
        .filter_map(|v| std::str::from_utf8(v).ok())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A gRPC status for the page: code, name and (scrubbed) message, with the spec's row.
fn status_json(method: &MethodDescriptor, code: i32, message: &str, elapsed_ms: u64) -> Json {
    json!({
        "outcome": "status",
        "status": {
            "code": code,
            "name": csi_view_core::capture::status_name(code),
            "message": message,
        },
        "method": method.name(),
        "row": Json::Null,
        "elapsed_ms": elapsed_ms,
    })
}
