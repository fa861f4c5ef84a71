//! `csi-view`: view, validate and edit binary CSI messages from the command line.
//!
//! Exit codes: 0 success; 1 validation failed, the messages differ, or an edit was refused or
//! its editor failed; 2 bad input (not protobuf, wrong type, empty, unknown type name) or a bad
//! command line. Errors are one line on stderr, with the byte offset where the input is bad.

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use csi_view::detect;
use csi_view::edit::{EditOptions, EditOutcome, edit_file};
use csi_view::input::{self, InputFormat, Message};
use csi_view::mask::SecretMask;
use csi_view::raw::{RawError, RawPrinter};
use csi_view::schema::{self, Schema};
use csi_view::text::{PrintError, TextOptions, TextPrinter};
use prost_reflect::{DynamicMessage, MessageDescriptor};

/// View, validate and edit binary CSI (or any protobuf) messages.
#[derive(Parser, Debug)]
#[command(
    name = "csi-view",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 validation failed / differences / edit refused, 2 bad input or usage."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print a message as protobuf text format annotated with the spec, or as JSON.
    Decode(DecodeArgs),
    /// Print the wire layout (offsets, tags, wire types, lengths), no schema needed.
    Raw(RawArgs),
    /// Rank every known message type by how well the bytes fit.
    Detect(DetectArgs),
    /// Encode text format or JSON to raw bytes, hex, base64 or a gRPC frame.
    Encode(EncodeArgs),
    /// Check the spec rules; exit 1 when any is broken.
    Validate(ValidateArgs),
    /// Field-level differences between two messages; exit 1 when they differ.
    Diff(DiffArgs),
    /// Edit a message in $EDITOR; re-encoded, validated and written atomically.
    Edit(EditArgs),
    /// Browse a message as a tree with the spec docs beside it; edit scalars; save atomically.
    Tui(EditArgs),
    /// A gRPC proxy between a CO and a plugin over unix sockets, printing every call decoded,
    /// checked and with secrets hidden; optionally recorded.
    Proxy(ProxyArgs),
    /// View and edit messages (files, captures, pasted hex or base64) in a local web page.
    Ui(UiArgs),
}

#[derive(Args, Debug, Clone)]
struct SchemaArgs {
    /// A .proto file to compile (protox) and use instead of the CSI specs.
    #[arg(long = "proto", value_name = "FILE")]
    protos: Vec<PathBuf>,
    /// Import path for --proto.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    includes: Vec<PathBuf>,
    /// An encoded FileDescriptorSet to use instead of the CSI specs.
    #[arg(long = "descriptor-set", value_name = "FILE")]
    descriptor_sets: Vec<PathBuf>,
    /// A CSI spec directory (spec.md + csi.proto, or a csi-addons README.md + .proto) to use
    /// instead of the built-in schema (csi.v1 v1.12.0 and the csi-addons, from `csikit`).
    #[arg(long = "spec-dir", value_name = "DIR")]
    spec_dirs: Vec<PathBuf>,
}

#[derive(Args, Debug, Clone)]
struct InputArgs {
    /// How the input is written.
    #[arg(long, value_enum, default_value = "auto")]
    input_format: InputFormat,
    /// The input is gRPC length-prefixed frames (one or many).
    #[arg(long)]
    grpc: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    /// Protobuf text format.
    Text,
    /// Canonical proto3 JSON.
    Json,
}

#[derive(Args, Debug)]
struct DecodeArgs {
    /// Message type: short (CreateVolumeRequest) or full (csi.v1.CreateVolumeRequest) name;
    /// detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    /// Add each field's comment from the spec.
    #[arg(long)]
    explain: bool,
    /// Leave out the spec annotations.
    #[arg(long)]
    no_annotations: bool,
    /// Show secret values.
    #[arg(long)]
    show_secrets: bool,
    /// Read a capture written by `csi-view proxy --record`: every message, typed by its method.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "ty"])]
    capture: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Input file; stdin when absent or '-'.
    file: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RawArgs {
    /// Message type, to name fields and redact secrets (the layout needs none).
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Show secret values (only matters with --type).
    #[arg(long)]
    show_secrets: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Input file; stdin when absent or '-'.
    file: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct DetectArgs {
    /// How many candidates to print.
    #[arg(long, default_value_t = 5)]
    top: usize,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Input file; stdin when absent or '-'.
    file: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum EncodeTo {
    /// Raw bytes.
    Raw,
    /// Lowercase hex.
    Hex,
    /// Standard base64.
    Base64,
    /// One gRPC frame (raw bytes).
    Grpc,
}

#[derive(Args, Debug)]
struct EncodeArgs {
    /// Message type (short or full name).
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: String,
    /// Input format.
    #[arg(long, value_enum, default_value = "text")]
    from: OutFormat,
    /// Output encoding.
    #[arg(long, value_enum, default_value = "raw")]
    to: EncodeTo,
    /// Write here instead of stdout (atomically).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Text or JSON file; stdin when absent or '-'.
    file: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ValidateArgs {
    /// Message type; detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Check every message of a capture written by `csi-view proxy --record`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "ty"])]
    capture: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Input file; stdin when absent or '-'.
    file: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct UiArgs {
    /// The type of the message files; detected when absent (captures name their own).
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Port on 127.0.0.1; a free one when 0.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The docs site that field links point into.
    #[arg(long, value_name = "URL", default_value = concat!(env!("CARGO_PKG_HOMEPAGE"), "/docs"))]
    docs_url: String,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// Message files (raw, hex, base64; --grpc for frames) and captures from `proxy --record`.
    files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
struct ProxyArgs {
    /// Where COs connect: unix:///path.sock.
    #[arg(long, value_name = "ENDPOINT")]
    listen: String,
    /// Where the plugin listens: unix:///path.sock.
    #[arg(long, value_name = "ENDPOINT")]
    upstream: String,
    /// Record every call to FILE (JSON Lines; secret values blanked unless --keep-secrets).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Keep secret values in the recording (written with mode 0600) and in status messages.
    #[arg(long, requires = "record")]
    keep_secrets: bool,
    /// How each call is printed.
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    /// Exit 1 at the end when any call broke a spec rule.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    schema: SchemaArgs,
}

#[derive(Args, Debug)]
struct DiffArgs {
    /// Message type of both; detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Show secret values.
    #[arg(long)]
    show_secrets: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// The first message.
    a: PathBuf,
    /// The second message.
    b: PathBuf,
}

#[derive(Args, Debug)]
struct EditArgs {
    /// Message type; detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    ty: Option<String>,
    /// Write even when the result breaks spec rules.
    #[arg(long)]
    force: bool,
    /// Show secret values in the editor.
    #[arg(long)]
    show_secrets: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    schema: SchemaArgs,
    /// The message file, rewritten in place (the original kept as FILE.bak).
    file: PathBuf,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Cmd::Decode(a) => decode(a),
        Cmd::Raw(a) => raw(a),
        Cmd::Detect(a) => detect_cmd(a),
        Cmd::Encode(a) => encode(a),
        Cmd::Validate(a) => validate(a),
        Cmd::Diff(a) => diff(a),
        Cmd::Edit(a) => edit(a),
        Cmd::Tui(a) => tui(a),
        Cmd::Proxy(a) => proxy(a),
        Cmd::Ui(a) => ui(a),
    }
}

fn load_schema(args: &SchemaArgs) -> Result<Schema> {
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

fn read_file(file: Option<&Path>) -> Result<Vec<u8>> {
    match file {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => std::fs::read(p).with_context(|| format!("cannot read '{}'", p.display())),
    }
}

fn read_stdin() -> Result<Vec<u8>> {
    let mut v = Vec::new();
    io::stdin().lock().read_to_end(&mut v).context("cannot read stdin")?;
    Ok(v)
}

fn read_messages(file: Option<&Path>, args: &InputArgs) -> Result<Vec<Message>> {
    let data = read_file(file)?;
    let name = file.map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
    input::parse_input(data, args.input_format, args.grpc).map_err(|e| anyhow!("{name}: {e}"))
}

/// The type named, or the detected one; detection prints its candidates to stderr.
fn resolve_type(
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
fn uncertain_mask(
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

fn shift(mut e: csi_view::wire::WireError, by: usize) -> anyhow::Error {
    e.offset += by;
    anyhow!("{e}")
}

fn stdout() -> BufWriter<io::StdoutLock<'static>> {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

fn print_err(e: PrintError) -> anyhow::Error {
    match e {
        PrintError::Wire(w) => anyhow!("{w}"),
        PrintError::Io(e) => anyhow::Error::new(e),
    }
}

/// One message to decode: its type (named, detected or from a capture's method), and a label.
struct Typed {
    label: Option<String>,
    desc: MessageDescriptor,
    mask: Option<SecretMask>,
    message: Message,
}

/// Every message of a capture, typed by its method; a method the schema lacks is an error.
fn capture_messages(schema: &Schema, path: &Path) -> Result<Vec<Typed>> {
    let capture = csi_view::capture::read(path)?;
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

fn decode(a: DecodeArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let typed: Vec<Typed> = match &a.capture {
        Some(path) => capture_messages(&schema, path)?,
        None => {
            let msgs = read_messages(a.file.as_deref(), &a.input)?;
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
                csi_view::text::check_typed(&desc, &m.bytes, m.offset, 0)
                    .map_err(|e| anyhow!("{e}"))?;
                let mut msg = DynamicMessage::decode(desc.clone(), m.bytes.as_slice())
                    .context("cannot decode")?;
                if let Some(mask) = &mask {
                    // Hidden where any type that could have produced the bytes puts a secret.
                    let hidden = csi_view::mask::redact_bytes(&desc, &m.bytes, mask);
                    msg =
                        DynamicMessage::decode(desc, hidden.as_slice()).context("cannot decode")?;
                }
                let unknown = csi_view::redact::unknown_fields(&msg);
                if !unknown.is_empty() {
                    eprintln!(
                        "# unknown fields (not representable in JSON; see 'decode' text or 'raw'): {}",
                        unknown.join(", ")
                    );
                }
                if !a.show_secrets {
                    csi_view::redact::redact(&schema, &mut msg);
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

fn raw(a: RawArgs) -> Result<u8> {
    let msgs = read_messages(a.file.as_deref(), &a.input)?;
    // The layout needs no schema, but secrets can only be found with one. With `--type` the
    // type is certain; without it, detection names fields, and a value is hidden wherever any
    // type that could have produced the bytes puts a secret.
    let schema =
        if a.show_secrets && a.ty.is_none() { None } else { Some(load_schema(&a.schema)?) };
    let named = match (&schema, &a.ty) {
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
        csi_view::wire::check_message(&m.bytes, m.offset, 0).map_err(|e| anyhow!("{e}"))?;
        let (desc, mask) = match (&named, &schema) {
            (Some(d), _) => (Some(d.clone()), None),
            (None, Some(s)) => {
                let mask = uncertain_mask(s, None, a.show_secrets, m)?;
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
        let mut p = RawPrinter::new(&mut out, schema.as_ref(), a.show_secrets);
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

fn detect_cmd(a: DetectArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let msgs = read_messages(a.file.as_deref(), &a.input)?;
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

fn encode(a: EncodeArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let desc = schema.find_message(&a.ty)?;
    let data = read_file(a.file.as_deref())?;
    let text = String::from_utf8(data)
        .map_err(|e| anyhow!("input is not UTF-8 at byte {}", e.utf8_error().valid_up_to()))?;
    let bytes = match a.from {
        OutFormat::Text => {
            csi_view::textparse::encode_text(&desc, &text, None).map_err(|e| anyhow!("{e}"))?
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
        Some(p) => write_new(p, &out_bytes)?,
        None => {
            let mut out = stdout();
            out.write_all(&out_bytes)?;
            out.flush()?;
        }
    }
    Ok(0)
}

/// Writes a file atomically, so a failure leaves no half file.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(csikit_spec::fs::write_atomic(path, bytes)?)
}

fn decode_dynamic(schema: &Schema, ty: Option<&str>, m: &Message) -> Result<DynamicMessage> {
    let desc = resolve_type(schema, ty, m, true)?;
    csi_view::text::check_typed(&desc, &m.bytes, m.offset, 0).map_err(|e| anyhow!("{e}"))?;
    DynamicMessage::decode(desc, m.bytes.as_slice()).context("cannot decode")
}

fn validate(a: ValidateArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let typed: Vec<(String, DynamicMessage)> = match &a.capture {
        Some(path) => capture_messages(&schema, path)?
            .into_iter()
            .map(|t| {
                let label = format!("{}: ", t.label.unwrap_or_default());
                csi_view::text::check_typed(&t.desc, &t.message.bytes, 0, 0)
                    .map_err(|e| anyhow!("{label}{e}"))?;
                let msg = DynamicMessage::decode(t.desc, t.message.bytes.as_slice())
                    .with_context(|| format!("{label}cannot decode"))?;
                Ok((label, msg))
            })
            .collect::<Result<_>>()?,
        None => {
            let msgs = read_messages(a.file.as_deref(), &a.input)?;
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
        let violations = csi_view::validate::validate(&schema, msg);
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
        failed |= !violations.is_empty();
    }
    out.flush()?;
    Ok(u8::from(failed))
}

fn ui(a: UiArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let options = csi_view::ui::Options {
        ty: a.ty.clone(),
        input_format: Some(a.input.input_format),
        grpc: a.input.grpc,
        docs_url: a.docs_url.clone(),
    };
    let documents = csi_view::ui::open(&schema, &a.files, &options)?;
    let state = csi_view::ui::State::new(schema, documents, &options)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot watch SIGTERM")?;
        let shutdown = async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        };
        csi_view::ui::serve(
            state,
            a.port,
            |url| {
                println!("{url}");
                let _ = io::stdout().flush();
            },
            shutdown,
        )
        .await
    })?;
    Ok(0)
}

fn proxy(a: ProxyArgs) -> Result<u8> {
    let schema = std::sync::Arc::new(load_schema(&a.schema)?);
    let options = csi_view::proxy::Options {
        listen: csi_view::proxy::socket_path(&a.listen).context("--listen")?,
        upstream: csi_view::proxy::socket_path(&a.upstream).context("--upstream")?,
        record: a.record.clone(),
        keep_secrets: a.keep_secrets,
        format: match a.format {
            OutFormat::Text => csi_view::proxy::Format::Text,
            OutFormat::Json => csi_view::proxy::Format::Json,
        },
    };
    // One thread carries the calls (the proxy only moves bytes; a multi-thread runtime cost more
    // in wake-ups across workers than it gained), the logger has its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("cannot watch SIGTERM")?;
        let shutdown = async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        };
        let out: Box<dyn Write + Send> = Box::new(BufWriter::new(io::stdout()));
        csi_view::proxy::run(schema, options, out, shutdown).await
    })?;
    eprintln!(
        "# {} call(s); {} broke a spec rule; {} concurrent on one volume",
        summary.calls, summary.broke_rules, summary.concurrent
    );
    Ok(u8::from(a.check && summary.broke_rules > 0))
}

fn diff(a: DiffArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let ma = read_messages(Some(&a.a), &a.input)?;
    let mb = read_messages(Some(&a.b), &a.input)?;
    if ma.len() != mb.len() {
        println!("~ frames: {} -> {}", ma.len(), mb.len());
        return Ok(1);
    }
    let mut out = stdout();
    let mut differ = false;
    for (x, y) in ma.iter().zip(&mb) {
        let (mx, my) = (x, y);
        let x = decode_dynamic(&schema, a.ty.as_deref(), mx)?;
        let desc = prost_reflect::ReflectMessage::descriptor(&x);
        let y = decode_dynamic(&schema, Some(desc.full_name()), my)?;
        let changes = match (
            uncertain_mask(&schema, a.ty.as_deref(), a.show_secrets, mx)?,
            uncertain_mask(&schema, a.ty.as_deref(), a.show_secrets, my)?,
        ) {
            (Some(ka), Some(kb)) => {
                csi_view::diff::diff_masked(&schema, &desc, (&mx.bytes, &ka), (&my.bytes, &kb))
                    .context("cannot decode")?
            }
            _ => csi_view::diff::diff(&schema, &x, &y, a.show_secrets),
        };
        for c in changes {
            differ = true;
            writeln!(out, "{c}")?;
        }
    }
    out.flush()?;
    Ok(u8::from(differ))
}

fn edit(a: EditArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let desc = a.ty.as_deref().map(|t| schema.find_message(t)).transpose()?;
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("EDITOR").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let opts = EditOptions {
        force: a.force,
        show_secrets: a.show_secrets,
        editor,
        input_format: a.input.input_format,
        grpc: a.input.grpc,
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

fn tui(a: EditArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let data =
        std::fs::read(&a.file).with_context(|| format!("cannot read '{}'", a.file.display()))?;
    let trailing_newline = data.last() == Some(&b'\n');
    let (bytes, format) = input::decode_text(data, a.input.input_format)
        .map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
    let mut msgs = input::split_messages(bytes, a.input.grpc)?;
    if msgs.len() != 1 {
        bail!("'{}' holds {} gRPC frames; tui works on one message", a.file.display(), msgs.len());
    }
    let m = msgs.remove(0);
    let desc = resolve_type(&schema, a.ty.as_deref(), &m, true)?;
    let mask = uncertain_mask(&schema, a.ty.as_deref(), a.show_secrets, &m)?;
    let mut app = csi_view::tui::App::new(
        &schema,
        desc,
        &m.bytes,
        &a.file,
        format,
        a.input.grpc,
        trailing_newline,
        a.show_secrets,
        mask.as_ref(),
    )?;
    csi_view::tui::run(&mut app)?;
    Ok(0)
}
