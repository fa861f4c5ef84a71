//! `csi-view ui`: messages in a local web page. The page shows each message (from files, captures
//! or pasted hex/base64) as a tree annotated with the spec (presence, secret, alpha, size limits,
//! each field's documentation and a link to its entry on the docs site), lets scalars be edited in
//! place with the spec's rules checked after each edit, and saves files atomically (the original
//! kept as `FILE.bak`).
//!
//! # Design
//!
//! A small HTTP/1 server (hyper) on 127.0.0.1 at a port the kernel picks. Every route lives under
//! a random 128-bit token (`/TOKEN/...`) and the `Host` header must name 127.0.0.1 or localhost at
//! that port, so neither another local user guessing ports nor a web page rebinding a DNS name
//! reaches it. The page is one HTML document with its script and style inline: nothing is fetched
//! from the network. The server holds every message as decoded (`DynamicMessage`); the page
//! gets trees of display values, in which secrets are `<redacted>` unless the page asks to show
//! them, and sends edits as (field path, new value) pairs.
//!
//! Secrets follow the rest of csi-view: with the type certain (named with `--type`, or from a
//! capture's method) the type's secret fields are hidden; with the type only detected, every
//! position any type that could have produced the bytes marks secret is hidden too.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result, anyhow, bail};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, ReflectMessage, Value,
};
use serde_json::{Value as Json, json};

use csi_view_core::input::{self, InputFormat};
use csi_view_core::mask::{SecretMask, redact_bytes};
use csi_view_core::redact::REDACTED;
use csi_view_core::schema::Schema;

/// One message on the page.
struct Entry {
    label: String,
    message: DynamicMessage,
    /// The type came from `--type` or a capture's method (not detection).
    certain: bool,
}

/// One file (or pasted text) and its messages, as the page shows them.
pub struct Document {
    /// Where it is saved; `None` for pasted text and captures (read-only).
    path: Option<PathBuf>,
    name: String,
    kind: &'static str,
    format: InputFormat,
    grpc: bool,
    trailing_newline: bool,
    entries: Vec<Entry>,
    dirty: bool,
}

/// What the server holds.
pub struct State {
    schema: Schema,
    token: String,
    docs_url: String,
    port: u16,
    show_secrets: Mutex<bool>,
    documents: Mutex<Vec<Document>>,
    ty: Option<String>,
}

/// How to open files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The type of every message file (captures name theirs).
    pub ty: Option<String>,
    /// The files' format.
    pub input_format: Option<InputFormat>,
    /// Files hold gRPC frames.
    pub grpc: bool,
    /// Where the docs site lives (links go to `URL/en/ref/<type>.html#<field>`).
    pub docs_url: String,
}

/// A random 128-bit token from the operating system's generator, in lowercase hex.
fn token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow!("cannot get random bytes for the page's token: {e}"))?;
    Ok(data_encoding::HEXLOWER.encode(&bytes))
}

/// The route after `/TOKEN/` when `path` starts with the page's token, compared in constant time
/// so the time a guess takes says nothing about how much of it was right.
fn token_route<'a>(path: &'a str, token: &str) -> Option<&'a str> {
    use subtle::ConstantTimeEq;
    let rest = path.strip_prefix('/')?;
    let (given, route) = rest.split_at_checked(token.len())?;
    let route = route.strip_prefix('/')?;
    bool::from(given.as_bytes().ct_eq(token.as_bytes())).then_some(route)
}

/// The query string's pairs, percent-decoded (`+` is a space), as forms encode them.
fn query_pairs(query: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect()
}

/// Opens every file: a capture when its first line is a capture header, else message bytes.
///
/// # Errors
///
/// A file that cannot be read or decoded, named with the reason.
pub fn open(schema: &Schema, files: &[PathBuf], options: &Options) -> Result<Vec<Document>> {
    let mut out = Vec::new();
    for path in files {
        let data =
            std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
        if data.starts_with(b"{\"csi_view_capture\"") {
            out.push(open_capture(schema, path)?);
            continue;
        }
        let trailing_newline = data.last() == Some(&b'\n');
        let format = options.input_format.unwrap_or(InputFormat::Auto);
        let (bytes, format) =
            input::decode_text(data, format).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let messages = input::split_messages(bytes, options.grpc)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let many = messages.len() > 1;
        let mut entries = Vec::new();
        for (i, m) in messages.into_iter().enumerate() {
            let (desc, certain) = type_of(schema, options.ty.as_deref(), &m.bytes)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let message =
                decode(&desc, &m.bytes).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let label = if many { format!("frame {}", i + 1) } else { "message".into() };
            entries.push(Entry { label, message, certain });
        }
        out.push(Document {
            name: path.display().to_string(),
            path: Some(path.clone()),
            kind: "message",
            format,
            grpc: options.grpc,
            trailing_newline,
            entries,
            dirty: false,
        });
    }
    Ok(out)
}

fn open_capture(schema: &Schema, path: &Path) -> Result<Document> {
    let capture = csi_view_core::capture::read(path)?;
    let typed = capture.typed(schema).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut entries = Vec::new();
    for m in typed {
        let message = decode(&m.desc, &m.bytes)
            .map_err(|e| anyhow!("{}: call #{}: {e}", path.display(), m.call))?;
        let label = format!("#{} {} {} ({})", m.call, m.method, m.side, m.status);
        entries.push(Entry { label, message, certain: true });
    }
    Ok(Document {
        name: path.display().to_string(),
        path: None,
        kind: "capture",
        format: InputFormat::Raw,
        grpc: false,
        trailing_newline: false,
        entries,
        dirty: false,
    })
}

/// The type named, or the one detected (not certain).
fn type_of(schema: &Schema, ty: Option<&str>, bytes: &[u8]) -> Result<(MessageDescriptor, bool)> {
    if let Some(t) = ty {
        return Ok((schema.find_message(t)?, true));
    }
    if bytes.is_empty() {
        bail!("an empty message fits every type; pass --type");
    }
    let ranking = csi_view_core::detect::rank(schema, bytes).map_err(|e| anyhow!("{e}"))?;
    match ranking.best() {
        Some(c) => Ok((c.desc.clone(), false)),
        None => bail!("the type is ambiguous ({}); pass --type", ranking.tied_names(3)),
    }
}

fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage> {
    csi_view_core::text::check_typed(desc, bytes, 0, 0).map_err(|e| anyhow!("{e}"))?;
    DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| anyhow!("not a {}: {e}", desc.full_name()))
}

impl State {
    /// The state for `documents`, with a new token.
    ///
    /// # Errors
    ///
    /// When no token can be made.
    pub fn new(schema: Schema, documents: Vec<Document>, options: &Options) -> Result<State> {
        Ok(State {
            schema,
            token: token()?,
            docs_url: options.docs_url.trim_end_matches('/').to_owned(),
            port: 0,
            show_secrets: Mutex::new(false),
            documents: Mutex::new(documents),
            ty: options.ty.clone(),
        })
    }

    fn docs(&self) -> std::sync::MutexGuard<'_, Vec<Document>> {
        self.documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn overview(&self) -> Json {
        let docs = self.docs();
        json!({
            "show_secrets": *self.show_secrets.lock().unwrap_or_else(|e| e.into_inner()),
            "documents": docs.iter().enumerate().map(|(i, d)| json!({
                "id": i,
                "name": d.name,
                "kind": d.kind,
                "saveable": d.path.is_some(),
                "dirty": d.dirty,
                "messages": d.entries.iter().enumerate().map(|(j, e)| json!({
                    "id": j,
                    "label": e.label,
                    "type": e.message.descriptor().full_name(),
                    "certain": e.certain,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// The tree of one message, values redacted unless shown, with its violations.
    fn tree(&self, doc: usize, msg: usize) -> Result<Json> {
        let docs = self.docs();
        let entry = docs
            .get(doc)
            .and_then(|d| d.entries.get(msg))
            .ok_or_else(|| anyhow!("no message {doc}/{msg}"))?;
        let show = *self.show_secrets.lock().unwrap_or_else(|e| e.into_inner());
        let mut display = entry.message.clone();
        if !show {
            if !entry.certain {
                let bytes = prost::Message::encode_to_vec(&entry.message);
                let mask =
                    SecretMask::uncertain(&self.schema, &bytes).map_err(|e| anyhow!("{e}"))?;
                let hidden = redact_bytes(&display.descriptor(), &bytes, &mask);
                display = DynamicMessage::decode(display.descriptor(), hidden.as_slice())?;
            }
            csi_view_core::redact::redact(&self.schema, &mut display);
        }
        let broken = csi_view_core::validate::validate(&self.schema, &entry.message);
        // The tree marks a field missing exactly where the validation does, so the two agree.
        let missing: HashSet<&str> = broken
            .iter()
            .filter(|v| v.rule == csikit_runtime::RuleId::Required)
            .map(|v| v.path.as_str())
            .collect();
        let violations: Vec<Json> =
            broken.iter().map(|v| json!({"path": v.path, "message": v.to_string()})).collect();
        Ok(json!({
            "type": entry.message.descriptor().full_name(),
            "certain": entry.certain,
            "doc": self.schema.message_comment(&entry.message.descriptor()),
            "link": self.link(&entry.message.descriptor(), None),
            "fields": self.fields(&display, "", &missing),
            "violations": violations,
        }))
    }

    fn link(&self, desc: &MessageDescriptor, field: Option<&str>) -> String {
        let anchor = field.map(|f| format!("#{f}")).unwrap_or_default();
        format!("{}/en/ref/{}.html{anchor}", self.docs_url, desc.full_name())
    }

    /// Every field of `msg`: the set ones with their values, the ones the validation found
    /// `missing` (REQUIRED and unset), and the REQUIRED ones the wire cannot tell from unset (a
    /// proto3 bool or number without presence: `readonly: false`), with their zero value.
    fn fields(&self, msg: &DynamicMessage, path: &str, missing: &HashSet<&str>) -> Vec<Json> {
        let desc = msg.descriptor();
        let mut out = Vec::new();
        for field in desc.fields() {
            let facts = self.schema.field_facts(&field);
            let fpath = join(path, field.name());
            let is_missing = missing.contains(fpath.as_str());
            let zero_value = facts.presence == csikit_spec::Presence::Required
                && !field.supports_presence()
                && !field.is_list()
                && !field.is_map();
            let set = msg.has_field(&field) || (zero_value && !is_missing);
            if !set && !is_missing {
                continue;
            }
            let base = json!({
                "name": field.name(),
                "number": field.number(),
                "path": fpath,
                "type": csi_view_core::text::kind_name(&field.kind()),
                "note": csi_view_core::schema::note(facts, facts.secret),
                "doc": self.schema.field_comment(&field),
                "link": self.link(&desc, Some(field.name())),
                "secret": facts.secret,
            });
            let mut node = base;
            if is_missing {
                node["missing"] = json!(true);
                node["editable"] = json!(is_scalar(&field.kind()) && !field.is_list());
                out.push(node);
                continue;
            }
            let value = msg.get_field(&field);
            match value.as_ref() {
                Value::List(items) => {
                    node["items"] = items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            self.value(&field.kind(), v, &format!("{fpath}[{i}]"), missing)
                        })
                        .collect();
                }
                Value::Map(map) => {
                    let value_kind = match field.kind() {
                        Kind::Message(entry) => entry.map_entry_value_field().kind(),
                        k => k,
                    };
                    let mut keys: Vec<&MapKey> = map.keys().collect();
                    keys.sort();
                    node["entries"] = keys
                        .into_iter()
                        .map(|k| {
                            let key = csi_view_core::validate::show_key(k);
                            let mut e = self.value(
                                &value_kind,
                                &map[k],
                                &format!("{fpath}[{key}]"),
                                missing,
                            );
                            e["key"] = json!(key);
                            e
                        })
                        .collect();
                }
                v => {
                    let shown = self.value(&field.kind(), v, &fpath, missing);
                    if let Json::Object(o) = shown {
                        for (k, v) in o {
                            node[k] = v;
                        }
                    }
                }
            }
            out.push(node);
        }
        out
    }

    fn value(&self, kind: &Kind, v: &Value, path: &str, missing: &HashSet<&str>) -> Json {
        match v {
            Value::Message(m) => json!({"path": path, "fields": self.fields(m, path, missing)}),
            v => {
                let text = scalar_text(kind, v);
                json!({
                    "path": path,
                    "value": text,
                    "redacted": text == format!("{REDACTED:?}") || text == REDACTED,
                    "editable": true,
                })
            }
        }
    }

    /// Sets the scalar at `path` in a message from the text the page sent.
    fn set(&self, doc: usize, msg: usize, path: &str, text: &str) -> Result<()> {
        let mut docs = self.docs();
        let d = docs.get_mut(doc).ok_or_else(|| anyhow!("no document {doc}"))?;
        if d.kind == "capture" {
            bail!("a capture is read-only");
        }
        let entry = d.entries.get_mut(msg).ok_or_else(|| anyhow!("no message {msg}"))?;
        let mut edited = entry.message.clone();
        set_path(&mut edited, path, text)?;
        entry.message = edited;
        d.dirty = true;
        Ok(())
    }

    /// Writes a document back in its own format, atomically, the original kept as `FILE.bak`.
    fn save(&self, doc: usize) -> Result<Json> {
        let mut docs = self.docs();
        let d = docs.get_mut(doc).ok_or_else(|| anyhow!("no document {doc}"))?;
        let path = d.path.clone().ok_or_else(|| anyhow!("{} cannot be saved", d.name))?;
        let mut bytes = Vec::new();
        for e in &d.entries {
            let encoded = prost::Message::encode_to_vec(&e.message);
            if d.grpc {
                bytes.extend(input::grpc_frame(&encoded)?);
            } else {
                bytes.extend(encoded);
            }
        }
        let out = csi_view_core::edit::encode_like(&bytes, d.format, false, d.trailing_newline)?;
        let backup = csi_view_core::edit::write_atomically(&path, &out)?;
        d.dirty = false;
        Ok(json!({"saved": path.display().to_string(), "backup": backup.display().to_string()}))
    }

    /// A pasted message (hex or base64) as a new, unsaveable document.
    fn paste(&self, text: &str) -> Result<()> {
        let (bytes, _) = input::decode_text(text.trim().as_bytes().to_vec(), InputFormat::Auto)
            .map_err(|e| anyhow!("pasted text: {e}"))?;
        let (desc, certain) = type_of(&self.schema, self.ty.as_deref(), &bytes)?;
        let message = decode(&desc, &bytes)?;
        let mut docs = self.docs();
        let n = docs.iter().filter(|d| d.kind == "pasted").count() + 1;
        docs.push(Document {
            path: None,
            name: format!("pasted {n}"),
            kind: "pasted",
            format: InputFormat::Raw,
            grpc: false,
            trailing_newline: false,
            entries: vec![Entry { label: "message".into(), message, certain }],
            dirty: false,
        });
        Ok(())
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

fn is_scalar(kind: &Kind) -> bool {
    !matches!(kind, Kind::Message(_))
}

fn scalar_text(kind: &Kind, v: &Value) -> String {
    match (kind, v) {
        (Kind::Enum(e), Value::EnumNumber(n)) => {
            e.get_value(*n).map_or_else(|| n.to_string(), |v| v.name().to_owned())
        }
        (_, Value::String(s)) => s.clone(),
        (_, Value::Bytes(b)) => match std::str::from_utf8(b) {
            Ok(s) if s == REDACTED => s.to_owned(),
            _ => data_encoding::HEXLOWER.encode(b),
        },
        (_, Value::Bool(b)) => b.to_string(),
        (_, Value::I32(n)) => n.to_string(),
        (_, Value::I64(n)) => n.to_string(),
        (_, Value::U32(n)) => n.to_string(),
        (_, Value::U64(n)) => n.to_string(),
        (_, Value::F32(n)) => n.to_string(),
        (_, Value::F64(n)) => n.to_string(),
        (_, Value::EnumNumber(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// A scalar of `kind` from the page's text (enums by name or number, bytes in hex).
fn parse_scalar(kind: &Kind, text: &str) -> Result<Value> {
    let t = text.trim();
    let bad = |what: &str| anyhow!("'{text}' is not {what}");
    Ok(match kind {
        Kind::String => Value::String(text.to_owned()),
        Kind::Bytes => Value::Bytes(
            data_encoding::HEXLOWER_PERMISSIVE
                .decode(t.as_bytes())
                .map_err(|_| bad("hex bytes"))?
                .into(),
        ),
        Kind::Bool => Value::Bool(t.parse().map_err(|_| bad("true or false"))?),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            Value::I32(t.parse().map_err(|_| bad("a 32-bit integer"))?)
        }
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            Value::I64(t.parse().map_err(|_| bad("a 64-bit integer"))?)
        }
        Kind::Uint32 | Kind::Fixed32 => {
            Value::U32(t.parse().map_err(|_| bad("an unsigned 32-bit integer"))?)
        }
        Kind::Uint64 | Kind::Fixed64 => {
            Value::U64(t.parse().map_err(|_| bad("an unsigned 64-bit integer"))?)
        }
        Kind::Float => Value::F32(t.parse().map_err(|_| bad("a number"))?),
        Kind::Double => Value::F64(t.parse().map_err(|_| bad("a number"))?),
        Kind::Enum(e) => match e.get_value_by_name(t) {
            Some(v) => Value::EnumNumber(v.number()),
            None => Value::EnumNumber(t.parse().map_err(|_| {
                bad(&format!(
                    "a value of {} ({})",
                    e.name(),
                    e.values().map(|v| v.name().to_owned()).collect::<Vec<_>>().join(", ")
                ))
            })?),
        },
        Kind::Message(m) => bail!("{} is a message; edit its fields", m.full_name()),
    })
}

/// One step of a field path: a field, then an optional `[index]` or `["key"]`.
fn steps(path: &str) -> Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = rest[..end].to_owned();
        rest = &rest[end..];
        let mut sub = None;
        if let Some(r) = rest.strip_prefix('[') {
            // A quoted key may hold ']' or '.': read it as JSON.
            let close = if r.starts_with('"') {
                let mut escaped = false;
                let mut at = None;
                for (i, c) in r.char_indices().skip(1) {
                    match c {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            at = Some(i + 1);
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                at.ok_or_else(|| anyhow!("unterminated key in '{path}'"))?
            } else {
                r.find(']').ok_or_else(|| anyhow!("unterminated index in '{path}'"))?
            };
            sub = Some(r[..close].to_owned());
            rest = r[close..].strip_prefix(']').ok_or_else(|| anyhow!("bad path '{path}'"))?;
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if name.is_empty() {
            bail!("bad path '{path}'");
        }
        out.push((name, sub));
    }
    Ok(out)
}

fn map_key(field: &FieldDescriptor, text: &str) -> Result<MapKey> {
    let Kind::Message(entry) = field.kind() else { bail!("{} is not a map", field.name()) };
    let raw: String = if text.starts_with('"') {
        serde_json::from_str(text).map_err(|e| anyhow!("bad key {text}: {e}"))?
    } else {
        text.to_owned()
    };
    Ok(match parse_scalar(&entry.map_entry_key_field().kind(), &raw)? {
        Value::String(s) => MapKey::String(s),
        Value::Bool(b) => MapKey::Bool(b),
        Value::I32(n) => MapKey::I32(n),
        Value::I64(n) => MapKey::I64(n),
        Value::U32(n) => MapKey::U32(n),
        Value::U64(n) => MapKey::U64(n),
        _ => bail!("bad key {text}"),
    })
}

/// Sets the scalar at `path` (as the tree names it) to the value `text` reads as.
fn set_path(msg: &mut DynamicMessage, path: &str, text: &str) -> Result<()> {
    let steps = steps(path)?;
    let mut current = msg;
    for (i, (name, sub)) in steps.iter().enumerate() {
        let last = i + 1 == steps.len();
        let desc = current.descriptor();
        let field = desc
            .get_field_by_name(name)
            .ok_or_else(|| anyhow!("{} has no field '{name}'", desc.full_name()))?;
        let slot = current.get_field_mut(&field);
        let target: &mut Value = match (sub, slot) {
            (None, v) => v,
            (Some(index), Value::List(items)) => {
                let i: usize = index.parse().map_err(|_| anyhow!("bad index [{index}]"))?;
                let len = items.len();
                items.get_mut(i).ok_or_else(|| anyhow!("{name}[{i}]: only {len} items"))?
            }
            (Some(key), Value::Map(map)) => {
                let k = map_key(&field, key)?;
                map.get_mut(&k).ok_or_else(|| anyhow!("{name}[{key}]: no such key"))?
            }
            (Some(_), _) => bail!("{name} is not a list or map"),
        };
        if last {
            let kind = match (&field.kind(), sub.is_some() && field.is_map()) {
                (Kind::Message(entry), true) => entry.map_entry_value_field().kind(),
                (k, _) => k.clone(),
            };
            *target = parse_scalar(&kind, text)?;
            return Ok(());
        }
        current = match target {
            Value::Message(m) => m,
            _ => bail!("{name} is not a message"),
        };
    }
    bail!("empty path")
}

fn respond(status: StatusCode, body: Json) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
    r.headers_mut().insert("cache-control", http::HeaderValue::from_static("no-store"));
    r
}

fn not_found() -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(b"not found")));
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

/// The page itself.
const PAGE: &str = include_str!("ui.html");

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    // The Host must be this server by address or `localhost` (no DNS rebinding).
    let host_ok = req.headers().get("host").and_then(|h| h.to_str().ok()).is_some_and(|h| {
        h == format!("127.0.0.1:{}", state.port) || h == format!("localhost:{}", state.port)
    });
    let Some(route) = token_route(req.uri().path(), &state.token).map(str::to_owned) else {
        return not_found();
    };
    if !host_ok {
        return not_found();
    }
    let query = query_pairs(req.uri().query());
    let num = |k: &str| query.get(k).and_then(|v| v.parse::<usize>().ok());
    let method = req.method().clone();
    let body: Json = if method == Method::POST {
        match req.into_body().collect().await {
            Ok(b) => serde_json::from_slice(&b.to_bytes()).unwrap_or(Json::Null),
            Err(_) => Json::Null,
        }
    } else {
        Json::Null
    };
    let field = |k: &str| body.get(k).and_then(Json::as_u64).and_then(|n| usize::try_from(n).ok());
    let result: Result<Json> = match (method, route.as_str()) {
        (Method::GET, "") => {
            let mut r = Response::new(Full::new(Bytes::from_static(PAGE.as_bytes())));
            let h = r.headers_mut();
            h.insert("content-type", http::HeaderValue::from_static("text/html; charset=utf-8"));
            // Inline script and style only; nothing from anywhere else, not even this server.
            h.insert(
                "content-security-policy",
                http::HeaderValue::from_static(
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
                ),
            );
            return r;
        }
        (Method::GET, "api/state") => Ok(state.overview()),
        (Method::GET, "api/message") => match (num("doc"), num("msg")) {
            (Some(d), Some(m)) => state.tree(d, m),
            _ => Err(anyhow!("doc and msg are needed")),
        },
        (Method::POST, "api/set") => {
            match (field("doc"), field("msg"), body.get("path"), body.get("value")) {
                (Some(d), Some(m), Some(Json::String(p)), Some(Json::String(v))) => {
                    state.set(d, m, p, v).and_then(|()| state.tree(d, m))
                }
                _ => Err(anyhow!("doc, msg, path and value are needed")),
            }
        }
        (Method::POST, "api/save") => match field("doc") {
            Some(d) => state.save(d),
            None => Err(anyhow!("doc is needed")),
        },
        (Method::POST, "api/paste") => match body.get("text").and_then(Json::as_str) {
            Some(t) => state.paste(t).map(|()| state.overview()),
            None => Err(anyhow!("text is needed")),
        },
        (Method::POST, "api/secrets") => {
            *state.show_secrets.lock().unwrap_or_else(|e| e.into_inner()) =
                body.get("show").and_then(Json::as_bool).unwrap_or(false);
            Ok(state.overview())
        }
        _ => return not_found(),
    };
    match result {
        Ok(j) => respond(StatusCode::OK, j),
        Err(e) => respond(StatusCode::BAD_REQUEST, json!({"error": format!("{e:#}")})),
    }
}

/// Serves the page until `shutdown`; `ready` gets the page's URL once listening.
///
/// # Errors
///
/// When the port cannot be bound.
pub async fn serve(
    mut state: State,
    port: u16,
    ready: impl FnOnce(&str),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    state.port = listener.local_addr()?.port();
    let url = format!("http://127.0.0.1:{}/{}/", state.port, state.token);
    let state = Arc::new(state);
    ready(&url);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(state, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
