//! The read-only views of a message: `decode` (annotated text or JSON), `raw` (the wire layout)
//! and `detect` (the types that fit).

use std::io::Write;

use anyhow::{Context, Result, anyhow};
use csi_view_core::detect;
use csi_view_core::raw::{RawError, RawPrinter};
use csi_view_core::text::{TextOptions, TextPrinter};
use prost_reflect::DynamicMessage;

use crate::args::{DecodeArgs, DetectArgs, OutFormat, RawArgs};
use crate::load::{
    Typed, capture_messages, load_schema, print_err, read_messages, resolve_type, shift, stdout,
    uncertain_mask,
};

pub(crate) fn decode(a: DecodeArgs) -> Result<u8> {
    let schema = load_schema(&a.source.read.schema)?;
    let typed: Vec<Typed> = match &a.source.capture {
        Some(path) => capture_messages(&schema, path)?,
        None => {
            let msgs = read_messages(a.source.read.file.as_deref(), &a.source.read.input)?;
            let many = msgs.len() > 1;
            let mut typed = Vec::with_capacity(msgs.len());
            for (i, m) in msgs.into_iter().enumerate() {
                typed.push(Typed {
                    label: many.then(|| format!("frame {} at byte {}", i + 1, m.offset)),
                    desc: resolve_type(&schema, a.ty.as_deref(), &m, false)?,
                    mask: uncertain_mask(&schema, a.ty.as_deref(), a.show_secrets, &m)?,
                    message: m,
                });
            }
            typed
        }
    };
    let mut out = stdout();
    for Typed { label, desc, mask, message: m } in typed {
        match a.format {
            OutFormat::Text => {
                if let Some(label) = &label {
                    writeln!(out, "# {label}")?;
                }
                let options = TextOptions {
                    annotate: !a.no_annotations,
                    explain: a.explain,
                    show_secrets: a.show_secrets,
                };
                let mut p = TextPrinter::new(&schema, &mut out, options, None);
                if let Some(mask) = &mask {
                    p = p.with_mask(mask);
                }
                p.print(&desc, &m.bytes, m.offset).map_err(print_err)?;
            }
            OutFormat::Json => {
                if let Some(label) = &label {
                    eprintln!("# {label}");
                }
                let mut msg = csi_view_core::text::decode_checked(&desc, &m.bytes, m.offset)
                    .map_err(|e| anyhow!("{e}"))?;
                if let Some(mask) = &mask {
                    // Hidden where any type that could have produced the bytes puts a secret.
                    let hidden = csi_view_core::mask::redact_bytes(&desc, &m.bytes, mask);
                    msg =
                        DynamicMessage::decode(desc, hidden.as_slice()).context("cannot decode")?;
                }
                let unknown = csi_view_core::redact::unknown_fields(&msg);
                if !unknown.is_empty() {
                    eprintln!(
                        "# unknown fields (not representable in JSON; see 'decode' text or 'raw'): {}",
                        unknown.join(", ")
                    );
                }
                if !a.show_secrets {
                    csi_view_core::redact::redact(&schema, &mut msg);
                }
                let mut ser = serde_json::Serializer::pretty(&mut out);
                msg.serialize_with_options(&mut ser, &prost_reflect::SerializeOptions::new())
                    .context("cannot write JSON")?;
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}

pub(crate) fn raw(a: RawArgs) -> Result<u8> {
    let msgs = read_messages(a.file.as_deref(), &a.message.input)?;
    // The layout needs no schema, but secrets can only be found with one. With `--type` the
    // type is certain; without it, detection names fields, and a value is hidden wherever any
    // type that could have produced the bytes puts a secret.
    let schema = if a.message.show_secrets && a.message.ty.is_none() {
        None
    } else {
        Some(load_schema(&a.message.schema)?)
    };
    let named = match (&schema, &a.message.ty) {
        (Some(s), Some(t)) => Some(s.find_message(t)?),
        _ => None,
    };
    let many = msgs.len() > 1;
    let mut out = stdout();
    for (i, m) in msgs.iter().enumerate() {
        if many {
            writeln!(out, "# frame {} at byte {}, {} bytes", i + 1, m.offset, m.bytes.len())?;
        }
        if m.bytes.is_empty() {
            writeln!(out, "(0 bytes: an empty message, every field unset)")?;
            continue;
        }
        // Bad bytes are reported before anything else is said about them.
        csi_view_core::wire::check_message(&m.bytes, m.offset, 0).map_err(|e| anyhow!("{e}"))?;
        let (desc, mask) = match (&named, &schema) {
            (Some(d), _) => (Some(d.clone()), None),
            (None, Some(s)) => {
                let mask = uncertain_mask(s, None, a.message.show_secrets, m)?;
                let ranking = detect::rank(s, &m.bytes).ok();
                let best = ranking.as_ref().and_then(detect::Ranking::best).map(|c| c.desc.clone());
                let tied = ranking.as_ref().map(|r| r.tied_names(3)).unwrap_or_default();
                let hidden = mask.as_ref().map_or(0, |m| m.ranges().len());
                match &best {
                    Some(d) => eprintln!(
                        "# fields named as in {} (detected); {hidden} value(s) hidden where any type that could have produced these bytes puts a secret; --type to be exact, --show-secrets to show them",
                        d.full_name()
                    ),
                    None => eprintln!(
                        "# type not certain ({tied} read these bytes equally); {hidden} value(s) hidden where any type that could have produced them puts a secret; --type to be exact"
                    ),
                }
                (best, mask)
            }
            (None, None) => (None, None),
        };
        let mut p = RawPrinter::new(&mut out, schema.as_ref(), a.message.show_secrets);
        if let Some(mask) = &mask {
            p = p.with_mask(mask);
        }
        p.print(&m.bytes, m.offset, desc.as_ref()).map_err(|e| match e {
            RawError::Wire(w) => anyhow!("{w}"),
            RawError::Io(e) => anyhow::Error::new(e),
        })?;
    }
    out.flush()?;
    Ok(0)
}

pub(crate) fn detect(a: DetectArgs) -> Result<u8> {
    let schema = load_schema(&a.read.schema)?;
    let msgs = read_messages(a.read.file.as_deref(), &a.read.input)?;
    let mut out = stdout();
    for m in &msgs {
        if m.bytes.is_empty() {
            // The wire form of a message with no field set: every type reads it exactly.
            writeln!(out, "empty: 0 bytes, which every message type reads (every field unset)")?;
            continue;
        }
        let ranking = detect::rank(&schema, &m.bytes).map_err(|e| shift(e, m.offset))?;
        match ranking.best() {
            Some(c) if ranking.is_exact() => writeln!(out, "best: {}", c.desc.full_name())?,
            Some(c) => writeln!(out, "closest: {}", c.desc.full_name())?,
            None => writeln!(out, "ambiguous: {}", ranking.tied_names(usize::MAX))?,
        }
        for c in ranking.candidates.iter().take(a.top) {
            writeln!(out, "{:>8.1}  {}  {}", c.fit.score, c.desc.full_name(), c.fit.verdict())?;
        }
    }
    out.flush()?;
    Ok(0)
}
