//! The files, captures and pasted messages the page shows: opening them (the type named or
//! detected), their trees with secrets hidden as the rest of csi-view hides them, scalar edits,
//! and saving a file back in its own format, atomically.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage};
use serde_json::{Value as Json, json};

use csi_view_core::input::{self, InputFormat};
use csi_view_core::mask::{SecretMask, redact_bytes};
use csi_view_core::schema::Schema;

use super::{Options, State, edit, tree};

/// One message on the page.
pub(super) struct Entry {
    pub(super) label: String,
    pub(super) message: DynamicMessage,
    /// The type came from `--type` or a capture's method (not detection).
    pub(super) certain: bool,
}

/// One file (or pasted text) and its messages, as the page shows them.
pub struct Document {
    /// Where it is saved; `None` for pasted text and captures (read-only).
    pub(super) path: Option<PathBuf>,
    pub(super) name: String,
    pub(super) kind: &'static str,
    pub(super) format: InputFormat,
    pub(super) grpc: bool,
    pub(super) trailing_newline: bool,
    pub(super) entries: Vec<Entry>,
    pub(super) dirty: bool,
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

/// `bytes` as a `desc`, checked field by field first (a clear error with its offset).
fn decode(desc: &MessageDescriptor, bytes: &[u8]) -> Result<DynamicMessage> {
    csi_view_core::text::decode_checked(desc, bytes, 0).map_err(|e| anyhow!("{e}"))
}

impl State {
    fn docs(&self) -> std::sync::MutexGuard<'_, Vec<Document>> {
        self.documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn showing_secrets(&self) -> bool {
        *self.show_secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Shows secret values in the documents' trees (never in a request or a response).
    pub(super) fn set_show_secrets(&self, show: bool) {
        *self.show_secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = show;
    }

    pub(super) fn overview(&self) -> Json {
        let docs = self.docs();
        json!({
            "show_secrets": self.showing_secrets(),
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
    pub(super) fn tree(&self, doc: usize, msg: usize) -> Result<Json> {
        let docs = self.docs();
        let entry = docs
            .get(doc)
            .and_then(|d| d.entries.get(msg))
            .ok_or_else(|| anyhow!("no message {doc}/{msg}"))?;
        let mut display = entry.message.clone();
        if !self.showing_secrets() {
            if !entry.certain {
                let bytes = prost::Message::encode_to_vec(&entry.message);
                let mask =
                    SecretMask::uncertain(&self.schema, &bytes).map_err(|e| anyhow!("{e}"))?;
                let hidden = redact_bytes(&display.descriptor(), &bytes, &mask);
                display = DynamicMessage::decode(display.descriptor(), hidden.as_slice())?;
            }
            csi_view_core::redact::redact(&self.schema, &mut display);
        }
        let mut out = self.shape(tree::Mode::Document).view(&entry.message, &display);
        out["certain"] = json!(entry.certain);
        Ok(out)
    }

    /// Sets the scalar at `path` in a message from the text the page sent.
    pub(super) fn set(&self, doc: usize, msg: usize, path: &str, text: &str) -> Result<()> {
        let mut docs = self.docs();
        let d = docs.get_mut(doc).ok_or_else(|| anyhow!("no document {doc}"))?;
        if d.kind == "capture" {
            bail!("a capture is read-only");
        }
        let entry = d.entries.get_mut(msg).ok_or_else(|| anyhow!("no message {msg}"))?;
        let mut edited = entry.message.clone();
        edit::apply(&self.schema, &mut edited, &edit::Change::Set { path, text })?;
        entry.message = edited;
        d.dirty = true;
        Ok(())
    }

    /// Writes a document back in its own format, atomically, the original kept as `FILE.bak`.
    pub(super) fn save(&self, doc: usize) -> Result<Json> {
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
    pub(super) fn paste(&self, text: &str) -> Result<()> {
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
