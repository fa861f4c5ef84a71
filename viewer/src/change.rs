//! The commands that write messages: `encode` (text or JSON to bytes), `edit` (in `$EDITOR`) and
//! `tui` (the terminal UI).

use std::io::Write;

use anyhow::{Context, Result, anyhow, bail};
use csi_view_core::edit::{EditOptions, EditOutcome, edit_file};
use csi_view_core::input;
use prost_reflect::DynamicMessage;

use crate::args::{EditArgs, EncodeArgs, EncodeTo, OutFormat};
use crate::load::{load_schema, read_file, resolve_type, stdout, uncertain_mask};

pub(crate) fn encode(a: EncodeArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let desc = schema.find_message(&a.ty)?;
    let data = read_file(a.file.as_deref())?;
    let text = String::from_utf8(data)
        .map_err(|e| anyhow!("input is not UTF-8 at byte {}", e.utf8_error().valid_up_to()))?;
    let bytes = match a.from {
        OutFormat::Text => {
            csi_view_core::textparse::encode_text(&desc, &text, None).map_err(|e| anyhow!("{e}"))?
        }
        OutFormat::Json => {
            let mut de = serde_json::Deserializer::from_str(&text);
            let msg = DynamicMessage::deserialize(desc, &mut de)
                .map_err(|e| anyhow!("invalid JSON: {e}"))?;
            de.end().map_err(|e| anyhow!("invalid JSON: {e}"))?;
            prost::Message::encode_to_vec(&msg)
        }
    };
    let out_bytes = match a.to {
        EncodeTo::Raw => bytes,
        EncodeTo::Grpc => input::grpc_frame(&bytes)?,
        EncodeTo::Hex => format!("{}\n", input::to_hex(&bytes)).into_bytes(),
        EncodeTo::Base64 => format!("{}\n", input::to_base64(&bytes)).into_bytes(),
    };
    match &a.output {
        // Atomically, so a failure leaves no half file.
        Some(p) => csikit_runtime::fs::write_atomic(p, &out_bytes)?,
        None => {
            let mut out = stdout();
            out.write_all(&out_bytes)?;
            out.flush()?;
        }
    }
    Ok(0)
}

pub(crate) fn edit(a: EditArgs) -> Result<u8> {
    let schema = load_schema(&a.message.schema)?;
    let desc = a.message.ty.as_deref().map(|t| schema.find_message(t)).transpose()?;
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let opts = EditOptions {
        force: a.force,
        show_secrets: a.message.show_secrets,
        editor,
        input_format: a.message.input.input_format,
        grpc: a.message.input.grpc,
    };
    match edit_file(&schema, desc, &a.file, &opts)? {
        EditOutcome::Untouched(why) => {
            eprintln!("{why}");
            Ok(0)
        }
        EditOutcome::EditorFailed(why) => {
            eprintln!("{why}");
            Ok(1)
        }
        EditOutcome::Refused { violations, changes, kept } => {
            for c in &changes {
                println!("{c}");
            }
            for v in &violations {
                eprintln!("violation: {v}");
            }
            eprintln!(
                "refused: the result breaks {} rule(s); nothing written (--force to write anyway); the edited text is kept in '{}'",
                violations.len(),
                kept.display()
            );
            Ok(1)
        }
        EditOutcome::Written { changes, violations, backup } => {
            for c in &changes {
                println!("{c}");
            }
            for v in &violations {
                eprintln!("violation (forced): {v}");
            }
            eprintln!(
                "wrote '{}'; the original is kept as '{}'",
                a.file.display(),
                backup.display()
            );
            Ok(0)
        }
    }
}

pub(crate) fn tui(a: EditArgs) -> Result<u8> {
    let schema = load_schema(&a.message.schema)?;
    let data =
        std::fs::read(&a.file).with_context(|| format!("cannot read '{}'", a.file.display()))?;
    let trailing_newline = data.last() == Some(&b'\n');
    let (bytes, format) = input::decode_text(data, a.message.input.input_format)
        .map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
    let mut msgs = input::split_messages(bytes, a.message.input.grpc)?;
    if msgs.len() != 1 {
        bail!("'{}' holds {} gRPC frames; tui works on one message", a.file.display(), msgs.len());
    }
    let m = msgs.remove(0);
    let desc = resolve_type(&schema, a.message.ty.as_deref(), &m, true)?;
    let mask = uncertain_mask(&schema, a.message.ty.as_deref(), a.message.show_secrets, &m)?;
    let mut app = csi_view::tui::App::new(
        &schema,
        desc,
        &m.bytes,
        &a.file,
        format,
        a.message.input.grpc,
        trailing_newline,
        a.message.show_secrets,
        mask.as_ref(),
    )?;
    csi_view::tui::run(&mut app)?;
    Ok(0)
}
