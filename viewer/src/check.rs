//! The commands that judge messages: `validate` (the spec's rules), `diff` (two messages) and
//! `replay` (a capture's answers beside a plugin's answers now; `csi_view::replay`).

use std::io::Write;

use anyhow::{Context, Result, anyhow};
use csikit_runtime::endpoint::Flag;
use prost_reflect::DynamicMessage;

use crate::args::{DiffArgs, ReplayArgs, ReportFormat, ValidateArgs};
use crate::load::{
    capture_messages, decode_dynamic, load_schema, read_messages, stdout, uncertain_mask,
};

pub(crate) fn validate(a: ValidateArgs) -> Result<u8> {
    let schema = load_schema(&a.source.read.schema)?;
    let typed: Vec<(String, DynamicMessage)> = match &a.source.capture {
        Some(path) => capture_messages(&schema, path)?
            .into_iter()
            .map(|t| {
                let label = format!("{}: ", t.label.unwrap_or_default());
                let msg = csi_view_core::text::decode_checked(&t.desc, &t.message.bytes, 0)
                    .map_err(|e| anyhow!("{label}{e}"))?;
                Ok((label, msg))
            })
            .collect::<Result<_>>()?,
        None => {
            let msgs = read_messages(a.source.read.file.as_deref(), &a.source.read.input)?;
            let many = msgs.len() > 1;
            msgs.iter()
                .enumerate()
                .map(|(i, m)| {
                    let prefix = if many { format!("frame {}: ", i + 1) } else { String::new() };
                    Ok((prefix, decode_dynamic(&schema, a.ty.as_deref(), m)?))
                })
                .collect::<Result<_>>()?
        }
    };
    let mut out = stdout();
    let mut failed = false;
    for (prefix, msg) in &typed {
        let violations = csi_view_core::validate::validate(&schema, msg);
        if violations.is_empty() {
            writeln!(
                out,
                "{prefix}{}: valid",
                prost_reflect::ReflectMessage::descriptor(msg).full_name()
            )?;
        }
        for v in &violations {
            writeln!(out, "{prefix}{v}")?;
        }
        for note in csi_view_core::validate::notes(&schema, msg) {
            writeln!(out, "{prefix}note: {note}")?;
        }
        failed |= !violations.is_empty();
    }
    out.flush()?;
    Ok(u8::from(failed))
}

pub(crate) fn diff(a: DiffArgs) -> Result<u8> {
    let schema = load_schema(&a.message.schema)?;
    let ma = read_messages(Some(&a.a), &a.message.input)?;
    let mb = read_messages(Some(&a.b), &a.message.input)?;
    if ma.len() != mb.len() {
        println!("~ frames: {} -> {}", ma.len(), mb.len());
        return Ok(1);
    }
    let mut out = stdout();
    let mut differ = false;
    for (x, y) in ma.iter().zip(&mb) {
        let (mx, my) = (x, y);
        let x = decode_dynamic(&schema, a.message.ty.as_deref(), mx)?;
        let desc = prost_reflect::ReflectMessage::descriptor(&x);
        let y = decode_dynamic(&schema, Some(desc.full_name()), my)?;
        let changes = match (
            uncertain_mask(&schema, a.message.ty.as_deref(), a.message.show_secrets, mx)?,
            uncertain_mask(&schema, a.message.ty.as_deref(), a.message.show_secrets, my)?,
        ) {
            (Some(ka), Some(kb)) => {
                csi_view_core::diff::diff_masked(&schema, &desc, (&mx.bytes, &ka), (&my.bytes, &kb))
                    .context("cannot decode")?
            }
            _ => csi_view_core::diff::diff(&schema, &x, &y, a.message.show_secrets),
        };
        for c in changes {
            differ = true;
            writeln!(out, "{c}")?;
        }
    }
    out.flush()?;
    Ok(u8::from(differ))
}

pub(crate) fn replay(a: ReplayArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let flag = Flag { name: "--endpoint", value: a.endpoint.as_deref() };
    let endpoint = csikit_runtime::endpoint::required(Some(flag))?.written;
    let options = csi_view::replay::Options {
        capture: a.capture,
        endpoint,
        serial: a.serial,
        timeout: crate::args::timeout(a.timeout)?,
        secrets: a.secrets,
        driver_log: a.driver_log,
    };
    let report = csi_view::replay::run(&schema, &options, &mut std::io::stderr())?;
    let mut out = stdout();
    match a.format {
        ReportFormat::Text => report.write_text(&mut out)?,
        ReportFormat::Json => writeln!(out, "{}", report.to_json())?,
    }
    out.flush()?;
    Ok(report.exit_code())
}
