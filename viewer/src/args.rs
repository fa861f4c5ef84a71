//! The arguments of each subcommand, as clap reads them, and [`timeout`], the reading of every
//! command's `--timeout`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow};
use clap::{Args, ValueEnum};
use csi_view_core::input::InputFormat;

/// A `--timeout` in seconds: a positive number (the error is one line, as for any bad input,
/// which clap's own value errors are not).
pub(crate) fn timeout(seconds: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| anyhow!("--timeout {seconds}: expected a positive number of seconds"))
}

#[derive(Args, Debug, Clone)]
pub(crate) struct SchemaArgs {
    /// A .proto file to compile (protox) and use instead of the CSI specs.
    #[arg(long = "proto", value_name = "FILE")]
    pub(crate) protos: Vec<PathBuf>,
    /// Import path for --proto.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub(crate) includes: Vec<PathBuf>,
    /// An encoded FileDescriptorSet to use instead of the CSI specs.
    #[arg(long = "descriptor-set", value_name = "FILE")]
    pub(crate) descriptor_sets: Vec<PathBuf>,
    /// A CSI spec directory (spec.md + csi.proto, or a csi-addons README.md + .proto) to use
    /// instead of the built-in schema (csi.v1 and the csi-addons, from `csikit`).
    #[arg(long = "spec-dir", value_name = "DIR")]
    pub(crate) spec_dirs: Vec<PathBuf>,
    /// The CSI release to read csi.v1 as, with the built-in csi-addons.
    #[arg(
        long = "release",
        value_name = "vX.Y.Z",
        long_help = release_help(),
        conflicts_with_all = ["protos", "descriptor_sets", "spec_dirs"]
    )]
    pub(crate) release: Option<String>,
}

/// `--release`'s long help, naming the releases built in.
fn release_help() -> String {
    let kept: Vec<&str> =
        csi_view_core::former::builtin_older().iter().map(|o| o.release).collect();
    format!(
        "The CSI release to read csi.v1 as, with the built-in csi-addons: {} (the built-in \
         schema, the default), {} (kept in csikit), or any release folder of the corpus \
         (CSIKIT_CORPUS). Whatever the release, a field or enum value it reserved that an older \
         release named is shown by that name, marked as such",
        csikit::SPEC_RELEASE,
        kept.join(", ")
    )
}

#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// How the input is written.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) input_format: InputFormat,
    /// The input is gRPC length-prefixed frames (one or many).
    #[arg(long)]
    pub(crate) grpc: bool,
}

/// What the commands that read messages of one type share (`raw`, `diff`, `edit`, `tui`): the
/// type, whether secret values show, how the input is written, and the schema. A command whose
/// flag means more than the words here says so with `mut_arg` where it is declared (`main`).
#[derive(Args, Debug, Clone)]
pub(crate) struct MessageArgs {
    /// Message type; detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    pub(crate) ty: Option<String>,
    /// Show secret values.
    #[arg(long)]
    pub(crate) show_secrets: bool,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
}

/// A file or stdin holding messages, read as [`InputArgs`] says, with the schema: what `detect`
/// reads, and `decode` and `validate` when not given a capture.
#[derive(Args, Debug)]
pub(crate) struct FileArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    /// Input file; stdin when absent or '-'.
    pub(crate) file: Option<PathBuf>,
}

/// Where `decode` and `validate` read messages from: a capture (each message typed by its call's
/// method), or [`FileArgs`]. `--capture` is worded per command with `mut_arg` where it is
/// declared (`main`).
#[derive(Args, Debug)]
pub(crate) struct SourceArgs {
    /// Read a capture written by `csi-view proxy --record`: every message, typed by its method.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["file", "ty"])]
    pub(crate) capture: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) read: FileArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum OutFormat {
    /// Protobuf text format.
    Text,
    /// Canonical proto3 JSON.
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct DecodeArgs {
    /// Message type: short (CreateVolumeRequest) or full (csi.v1.CreateVolumeRequest) name;
    /// detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    pub(crate) ty: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: OutFormat,
    /// Add each field's comment from the spec.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Leave out the spec annotations.
    #[arg(long)]
    pub(crate) no_annotations: bool,
    /// Show secret values.
    #[arg(long)]
    pub(crate) show_secrets: bool,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
}

#[derive(Args, Debug)]
pub(crate) struct RawArgs {
    #[command(flatten)]
    pub(crate) message: MessageArgs,
    /// Input file; stdin when absent or '-'.
    pub(crate) file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct DetectArgs {
    /// How many candidates to print.
    #[arg(long, default_value_t = 5)]
    pub(crate) top: usize,
    #[command(flatten)]
    pub(crate) read: FileArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum EncodeTo {
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
pub(crate) struct EncodeArgs {
    /// Message type (short or full name).
    #[arg(long = "type", short = 't', value_name = "NAME")]
    pub(crate) ty: String,
    /// Input format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) from: OutFormat,
    /// Output encoding.
    #[arg(long, value_enum, default_value = "raw")]
    pub(crate) to: EncodeTo,
    /// Write here instead of stdout (atomically).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    /// Text or JSON file; stdin when absent or '-'.
    pub(crate) file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ValidateArgs {
    /// Message type; detected when absent.
    #[arg(long = "type", short = 't', value_name = "NAME")]
    pub(crate) ty: Option<String>,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
}

#[derive(Args, Debug)]
pub(crate) struct UiArgs {
    /// The type of the message files; detected when absent (captures name their own).
    #[arg(long = "type", short = 't', value_name = "NAME")]
    pub(crate) ty: Option<String>,
    /// Port on 127.0.0.1; a free one when 0.
    #[arg(long, default_value_t = 0)]
    pub(crate) port: u16,
    /// The docs site that field links point into.
    #[arg(long, value_name = "URL", default_value = concat!(env!("CARGO_PKG_HOMEPAGE"), "/docs"))]
    pub(crate) docs_url: String,
    /// The plugin the page sends requests to: unix:///path.sock, /path.sock or tcp://host:port
    /// (as CSI_ENDPOINT is written); default: $CSI_ENDPOINT. Without one the page composes
    /// requests but cannot send them.
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) endpoint: Option<String>,
    /// Seconds allowed for connecting to the plugin and for each call.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) input: InputArgs,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
    /// Message files (raw, hex, base64; --grpc for frames) and captures from `proxy --record`.
    pub(crate) files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ProxyArgs {
    /// Where COs connect: unix:///path.sock.
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) listen: String,
    /// Where the plugin listens: unix:///path.sock.
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) upstream: String,
    /// Record every call to FILE (JSON Lines; secret values blanked unless --keep-secrets).
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Keep secret values in the recording (written with mode 0600) and in status messages.
    #[arg(long, requires = "record")]
    pub(crate) keep_secrets: bool,
    /// How each call is printed.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: OutFormat,
    /// Exit 1 at the end when any call broke a spec rule.
    #[arg(long)]
    pub(crate) check: bool,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
}

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    #[command(flatten)]
    pub(crate) message: MessageArgs,
    /// The first message.
    pub(crate) a: PathBuf,
    /// The second message.
    pub(crate) b: PathBuf,
}

#[derive(Args, Debug)]
pub(crate) struct EditArgs {
    #[command(flatten)]
    pub(crate) message: MessageArgs,
    /// Write even when the result breaks spec rules.
    // Shown after --type, as before the shared flags were one group (they take the places from
    // 0 on in the order they are declared; a tie goes by name).
    #[arg(long, display_order = 1)]
    pub(crate) force: bool,
    /// The message file, rewritten in place (the original kept as FILE.bak).
    pub(crate) file: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// A line per call (differences indented below it) and a summary line.
    Text,
    /// The report as one JSON object: `calls` and `summary`.
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct ReplayArgs {
    /// A capture written by `csi-view proxy --record`.
    pub(crate) capture: PathBuf,
    /// The plugin, as CSI_ENDPOINT writes it (unix:///path.sock, tcp://host:port); $CSI_ENDPOINT
    /// when absent.
    #[arg(long, value_name = "ENDPOINT")]
    pub(crate) endpoint: Option<String>,
    /// Send one call at a time, even where the recording overlapped.
    #[arg(long)]
    pub(crate) serial: bool,
    /// Seconds to wait for the plugin on connecting and for each call's answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub(crate) timeout: f64,
    /// csi-sanity's secrets YAML, to refill the secret values the capture blanked.
    #[arg(long, value_name = "FILE")]
    pub(crate) secrets: Option<PathBuf>,
    /// The plugin's log: once the calls have ended, no secret value sent may be in it (exit 1
    /// when one is; its line is said, never the value).
    #[arg(long, value_name = "FILE")]
    pub(crate) driver_log: Option<PathBuf>,
    /// How the report is printed.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
}

/// Any string, offering the built-in schema's method names to shell completion (its possible
/// values are candidates, not a restriction).
#[derive(Clone, Debug)]
pub(crate) struct MethodOrEndpoint;

impl clap::builder::TypedValueParser for MethodOrEndpoint {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let schema = csi_view_core::schema::Schema::builtin().ok()?;
        let names = csi_view_core::method::names(&schema);
        Some(Box::new(names.into_iter().map(clap::builder::PossibleValue::new)))
    }
}

#[derive(Args, Debug)]
pub(crate) struct CallArgs {
    /// The plugin's endpoint as CSI_ENDPOINT writes it (unix:///path.sock, /path.sock,
    /// tcp://host:port); $CSI_ENDPOINT when left out. A first argument is the endpoint when it has
    /// a ':' (a scheme) or is an absolute path that names no method.
    #[arg(value_name = "ENDPOINT|METHOD", value_parser = MethodOrEndpoint, hide_possible_values = true)]
    pub(crate) first: String,
    /// The RPC: CreateVolume, Controller/CreateVolume or csi.v1.Controller/CreateVolume.
    #[arg(value_name = "METHOD", value_parser = MethodOrEndpoint, hide_possible_values = true)]
    pub(crate) second: Option<String>,
    /// The request, JSON or text format (several: JSON values one after another, or text
    /// separated by '---' lines); else -d, else stdin when it is not a terminal, else empty.
    #[arg(value_name = "REQUEST")]
    pub(crate) third: Option<String>,
    /// The request: TEXT, @FILE, or @- for stdin.
    #[arg(short = 'd', long = "data", value_name = "TEXT|@FILE|@-")]
    pub(crate) data: Option<String>,
    /// csi-sanity's secrets YAML; the RPC's kind (CreateVolumeSecret, ...) goes into the
    /// request's secret fields. Never printed.
    #[arg(long, value_name = "FILE", env = "CSI_SECRETS")]
    pub(crate) secrets: Option<PathBuf>,
    /// Send requests that break the spec's rules (REQUIRED fields, size limits, secret keys).
    #[arg(long)]
    pub(crate) no_validate: bool,
    /// How responses are printed.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: OutFormat,
    /// JSON: include fields set to their default values.
    #[arg(long)]
    pub(crate) defaults: bool,
    /// Leave out the spec annotations of text output.
    #[arg(long)]
    pub(crate) no_annotations: bool,
    /// Print each request as sent (annotated, secrets hidden) on stderr.
    #[arg(long)]
    pub(crate) echo: bool,
    /// Seconds allowed for connecting and for each call.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
}

#[derive(Args, Debug)]
pub(crate) struct DescribeArgs {
    /// The plugin's endpoint as CSI_ENDPOINT writes it; $CSI_ENDPOINT when left out. For
    /// describe, a method name instead (CreateVolume, Controller/CreateVolume) sets out that RPC
    /// as the schema states it (fields, facts, obligation, error tables; whose word each is),
    /// calling nothing.
    #[arg(value_name = "ENDPOINT")]
    pub(crate) endpoint: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: OutFormat,
    /// Seconds allowed for connecting and for each call.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub(crate) timeout: f64,
    #[command(flatten)]
    pub(crate) schema: SchemaArgs,
}

#[derive(Args, Debug)]
pub(crate) struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}
