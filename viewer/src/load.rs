//! What every command starts from: the schema the arguments name, the messages of a file or
//! stdin, each message's type (named, detected or from a capture's method), and stdout.

use std::io::{self, BufWriter, Read};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use csi_view_core::detect;
use csi_view_core::input::{self, Message};
use csi_view_core::mask::SecretMask;
use csi_view_core::schema::{self, Schema};
use csi_view_core::text::PrintError;
use prost_reflect::{DynamicMessage, MessageDescriptor};

use crate::args::{InputArgs, SchemaArgs};

pub(crate) fn load_schema(args: &SchemaArgs) -> Result<Schema> {
    if let Some(release) = &args.release {
        return Schema::release(release);
    }
    let mut schema = Schema::default();
    for p in &args.protos {
        schema::load_proto(&mut schema, p, &args.includes)?;
    }
    for d in &args.descriptor_sets {
        schema::load_descriptor_set(&mut schema, d)?;
    }
    if !args.spec_dirs.is_empty() {
        schema::load_spec_dirs(&mut schema, &args.spec_dirs)?;
    } else if schema.is_empty() {
        schema = Schema::builtin()?;
    }
    Ok(schema)
}

pub(crate) fn read_file(file: Option<&Path>) -> Result<Vec<u8>> {
    match file {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => std::fs::read(p).with_context(|| format!("cannot read '{}'", p.display())),
    }
}

pub(crate) fn read_stdin() -> Result<Vec<u8>> {
    let mut v = Vec::new();
    io::stdin().lock().read_to_end(&mut v).context("cannot read stdin")?;
    Ok(v)
}

pub(crate) fn read_messages(file: Option<&Path>, args: &InputArgs) -> Result<Vec<Message>> {
    let data = read_file(file)?;
    let name = file.map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
    input::parse_input(data, args.input_format, args.grpc).map_err(|e| anyhow!("{name}: {e}"))
}

/// The type named, or the detected one; detection prints its candidates to stderr.
pub(crate) fn resolve_type(
    schema: &Schema,
    ty: Option<&str>,
    msg: &Message,
    quiet: bool,
) -> Result<MessageDescriptor> {
    if let Some(t) = ty {
        return schema.find_message(t);
    }
    if msg.bytes.is_empty() {
        bail!("empty message at byte {}: every type fits; pass --type", msg.offset);
    }
    let ranking = detect::rank(schema, &msg.bytes).map_err(|e| shift(e, msg.offset))?;
    if !quiet {
        let shown: Vec<String> = ranking
            .candidates
            .iter()
            .take(3)
            .map(|c| format!("{} ({})", c.desc.full_name(), c.fit.verdict()))
            .collect();
        eprintln!("# detected type candidates: {}", shown.join(", "));
    }
    match ranking.best() {
        Some(c) => {
            if !ranking.is_exact() && !quiet {
                eprintln!(
                    "# no known type reads every record exactly; {} is the closest",
                    c.desc.full_name()
                );
            }
            Ok(c.desc.clone())
        }
        None => bail!("ambiguous: {} fit equally well; pass --type", ranking.tied_names(5)),
    }
}

/// When the type of `m` is not certain (no `--type`) and secrets are hidden: the positions any
/// type that could have produced the bytes marks secret, to hide whatever type they are shown as.
pub(crate) fn uncertain_mask(
    schema: &Schema,
    ty: Option<&str>,
    show_secrets: bool,
    m: &Message,
) -> Result<Option<SecretMask>> {
    if ty.is_some() || show_secrets {
        return Ok(None);
    }
    Ok(Some(SecretMask::uncertain(schema, &m.bytes).map_err(|e| shift(e, m.offset))?))
}

pub(crate) fn shift(mut e: csi_view_core::wire::WireError, by: usize) -> anyhow::Error {
    e.offset += by;
    anyhow!("{e}")
}

pub(crate) fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

pub(crate) fn print_err(e: PrintError) -> anyhow::Error {
    match e {
        PrintError::Wire(w) => anyhow!("{w}"),
        PrintError::Io(e) => anyhow::Error::new(e),
    }
}

/// One message to decode: its type (named, detected or from a capture's method), and a label.
pub(crate) struct Typed {
    pub(crate) label: Option<String>,
    pub(crate) desc: MessageDescriptor,
    pub(crate) mask: Option<SecretMask>,
    pub(crate) message: Message,
}

/// Every message of a capture, typed by its method; a method the schema lacks is an error.
pub(crate) fn capture_messages(schema: &Schema, path: &Path) -> Result<Vec<Typed>> {
    let capture = csi_view_core::capture::read(path)?;
    let typed = capture
        .typed(schema)
        .map_err(|e| anyhow!("{}: {e} (--spec-dir or --proto)", path.display()))?;
    Ok(typed
        .into_iter()
        .map(|m| {
            let k = if m.of > 1 { format!(" {}", m.index) } else { String::new() };
            Typed {
                label: Some(format!("call #{} {} {}{k} ({})", m.call, m.method, m.side, m.status)),
                desc: m.desc,
                mask: None,
                message: Message { offset: 0, bytes: m.bytes },
            }
        })
        .collect())
}

pub(crate) fn decode_dynamic(
    schema: &Schema,
    ty: Option<&str>,
    m: &Message,
) -> Result<DynamicMessage> {
    let desc = resolve_type(schema, ty, m, true)?;
    csi_view_core::text::decode_checked(&desc, &m.bytes, m.offset).map_err(|e| anyhow!("{e}"))
}
