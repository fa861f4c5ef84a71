//! `csi-view edit`: the message as annotated text in `$EDITOR`, encoded back on save, checked,
//! shown as a diff and written atomically (temporary file + rename, the original kept as
//! `FILE.bak`). Nothing is written when the editor fails, the text is unchanged, the text does
//! not encode, or the result breaks a rule (unless forced).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use prost_reflect::{DynamicMessage, MessageDescriptor};

use crate::diff::{Change, diff};
use crate::input::{self, InputFormat};
use crate::schema::Schema;
use crate::text::{Redactions, TextOptions, TextPrinter};
use crate::validate::{Violation, validate};

/// How to edit.
#[derive(Debug, Clone)]
pub struct EditOptions {
    /// Write even when the result breaks spec rules.
    pub force: bool,
    /// Show secret values in the editor instead of placeholders.
    pub show_secrets: bool,
    /// The editor command (run through `sh -c`, the file appended).
    pub editor: String,
    /// How the file is written (and is written back).
    pub input_format: InputFormat,
    /// The file holds one gRPC frame.
    pub grpc: bool,
}

/// What an edit did.
#[derive(Debug)]
pub enum EditOutcome {
    /// Nothing written; why.
    Untouched(String),
    /// The new message was written; the changes and any rule it breaks (forced).
    Written {
        /// Field-level changes.
        changes: Vec<Change>,
        /// Rules broken (only when forced).
        violations: Vec<Violation>,
        /// Where the original is kept.
        backup: PathBuf,
    },
    /// The result breaks rules; nothing written; the edited text is kept at the path.
    Refused {
        /// The rules broken.
        violations: Vec<Violation>,
        /// Field-level changes that were not written.
        changes: Vec<Change>,
        /// The edited text, kept so no work is lost.
        kept: PathBuf,
    },
    /// The editor exited with a failure status; nothing written.
    EditorFailed(String),
}

const HEADER: &str = "# csi-view edit: change values, save and quit. Lines starting with '#' are comments.\n\
# Secret values show as \"<redacted:N>\"; leave a placeholder as it is to keep its value.\n\
# Unknown fields are written by number and are kept.\n";

/// Edits the message in `path`, of type `desc` (or detected when `None`).
///
/// # Errors
///
/// Bad input, an unknown or ambiguous type, text that does not encode, or IO failures.
pub fn edit_file(
    schema: &Schema,
    desc: Option<MessageDescriptor>,
    path: &Path,
    opts: &EditOptions,
) -> Result<EditOutcome> {
    let data = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    let (bytes, format) = input::decode_text(data.clone(), opts.input_format)?;
    let bytes = if opts.grpc {
        let mut msgs = input::split_messages(bytes, true)?;
        if msgs.len() != 1 {
            bail!(
                "'{}' holds {} gRPC frames; edit works on one message",
                path.display(),
                msgs.len()
            );
        }
        msgs.remove(0).bytes
    } else {
        bytes
    };
    // Without a type named, the one detected is a guess: values are hidden wherever any type
    // that could have produced the bytes puts a secret.
    let mask = match (&desc, opts.show_secrets) {
        (None, false) => Some(crate::mask::SecretMask::uncertain(schema, &bytes)?),
        _ => None,
    };
    let desc = match desc {
        Some(d) => d,
        None => {
            let ranking = crate::detect::rank(schema, &bytes)?;
            match ranking.best() {
                Some(c) => c.desc.clone(),
                None => bail!("ambiguous type: {} fit equally; pass --type", ranking.tied_names(5)),
            }
        }
    };
    let old = DynamicMessage::decode(desc.clone(), bytes.as_slice())
        .with_context(|| format!("'{}' is not a valid {}", path.display(), desc.full_name()))?;

    let mut table = Redactions::default();
    let options = TextOptions { annotate: true, explain: false, show_secrets: opts.show_secrets };
    let mut text = HEADER.as_bytes().to_vec();
    {
        let mut printer = TextPrinter::new(schema, &mut text, options, Some(&mut table));
        if let Some(mask) = &mask {
            printer = printer.with_mask(mask);
        }
        printer.print(&desc, &bytes, 0).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let text = String::from_utf8(text).context("the text of the message is not UTF-8")?;

    let scratch = scratch_path(path);
    std::fs::write(&scratch, &text)
        .with_context(|| format!("cannot write '{}'", scratch.display()))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{} \"$1\"", opts.editor))
        .arg("csi-view-editor")
        .arg(&scratch)
        .status()
        .with_context(|| format!("cannot run the editor '{}'", opts.editor))?;
    let edited = std::fs::read_to_string(&scratch);
    if !status.success() {
        let _ = std::fs::remove_file(&scratch);
        return Ok(EditOutcome::EditorFailed(format!(
            "the editor exited with {status}; '{}' left untouched",
            path.display()
        )));
    }
    let edited =
        edited.with_context(|| format!("cannot read the edited text '{}'", scratch.display()))?;
    if edited == text {
        let _ = std::fs::remove_file(&scratch);
        return Ok(EditOutcome::Untouched(format!(
            "no changes; '{}' left untouched",
            path.display()
        )));
    }
    let new_bytes = match crate::textparse::encode_text(&desc, &edited, Some(&table)) {
        Ok(b) => b,
        Err(e) => bail!("{e}; nothing written, the edited text is kept in '{}'", scratch.display()),
    };
    if new_bytes == bytes {
        let _ = std::fs::remove_file(&scratch);
        return Ok(EditOutcome::Untouched(format!(
            "the message is unchanged; '{}' left untouched",
            path.display()
        )));
    }
    let new = DynamicMessage::decode(desc.clone(), new_bytes.as_slice())
        .with_context(|| format!("the edited message is not a valid {}", desc.full_name()))?;
    let changes = match &mask {
        Some(mask) => {
            let new_mask = crate::mask::SecretMask::uncertain(schema, &new_bytes)?;
            crate::diff::diff_masked(schema, &desc, (&bytes, mask), (&new_bytes, &new_mask))?
        }
        None => diff(schema, &old, &new, opts.show_secrets),
    };
    let violations = validate(schema, &new);
    if !violations.is_empty() && !opts.force {
        return Ok(EditOutcome::Refused { violations, changes, kept: scratch });
    }
    let out = encode_like(&new_bytes, format, opts.grpc, data.last() == Some(&b'\n'))?;
    let backup = write_atomically(path, &out)?;
    let _ = std::fs::remove_file(&scratch);
    Ok(EditOutcome::Written { changes, violations, backup })
}

/// The file form of `bytes`: in `format`, framed when `grpc`, with a final newline for text
/// forms when the original had one.
///
/// # Errors
///
/// When the message is too large for a gRPC frame.
pub fn encode_like(
    bytes: &[u8],
    format: InputFormat,
    grpc: bool,
    trailing_newline: bool,
) -> Result<Vec<u8>> {
    let framed = if grpc { input::grpc_frame(bytes)? } else { bytes.to_vec() };
    Ok(match format {
        InputFormat::Hex => with_newline(input::to_hex(&framed), trailing_newline),
        InputFormat::Base64 => with_newline(input::to_base64(&framed), trailing_newline),
        InputFormat::Raw | InputFormat::Auto => framed,
    })
}

fn with_newline(s: String, newline: bool) -> Vec<u8> {
    let mut v = s.into_bytes();
    if newline {
        v.push(b'\n');
    }
    v
}

fn scratch_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "message".into());
    std::env::temp_dir().join(format!("csi-view-{}-{name}.txtpb", std::process::id()))
}

/// Keeps the original as `path.bak`, then writes `bytes` to `path` atomically
/// ([`csikit_runtime::fs::write_atomic`]); returns the backup's path.
///
/// # Errors
///
/// When any step fails; the original is then unchanged.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let backup = dir.join(format!("{name}.bak"));
    std::fs::copy(path, &backup)
        .with_context(|| format!("cannot keep the original as '{}'", backup.display()))?;
    csikit_runtime::fs::write_atomic(path, bytes)?;
    Ok(backup)
}
