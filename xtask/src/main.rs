//! Project automation: the only place that writes files.
//!
//! Exit codes: 0 success (warnings may be printed), 1 the inputs have errors (nothing is
//! written or printed to stdout), 2 bad command line.
//!
//! Modules: `generate` (`cargo xtask generate`: the `csikit` crate and standalone crates),
//! `diff` (`diff` and `changelog`) and `docs` (`docs`: loads the corpus and writes the site).
//! `new-driver` is the `csikit` command's (`csikit_cli::new_driver`), run by the same code, and
//! trees of files are written by its `tree`.

mod diff;
mod docs;
mod generate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use csikit_spec::{Carry, Diagnostics, ImportMap, LoadOptions, Rule, SourceFile};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "csikit project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What changed between two spec folders (two releases, or two csi-addons versions):
    /// exit 0 without findings, 1 with, 2 on bad input.
    Diff(diff::DiffArgs),
    /// Every consecutive pair of corpus releases (newest first) and csi-addons replication.
    Changelog(diff::ChangelogArgs),
    /// Render the docs site: releases from v1.0.0, ja, zh, csi-addons (default target/site).
    Docs(docs::DocsArgs),
    /// Regenerate the `csikit` crate in `generated/` (or a standalone crate with --out).
    Generate(generate::GenerateArgs),
    /// Write a new CSI driver crate built on csikit's server skeleton.
    NewDriver(csikit_cli::new_driver::NewDriverArgs),
    /// Print the proto built from a spec markdown, as the release's Makefile built it.
    Proto {
        /// The spec markdown (spec.md, or a csi-addons README.md).
        #[arg(long)]
        spec: PathBuf,
        /// makefile (v0.3.0 on), makefile-v0.2 or makefile-v0.1.
        #[arg(long, default_value = "makefile", value_parser = parse_rule)]
        rule: Rule,
    },
    /// Print the spec model as JSON, from a spec folder, a .proto or a descriptor set.
    Model {
        /// Where the spec is read from.
        #[command(flatten)]
        source: SourceArgs,
        /// Language of the prose facts; anything but `en` needs --translation.
        #[arg(long, default_value = "en")]
        lang: String,
        /// The translated spec markdown to read error tables and sections from.
        #[arg(long)]
        translation: Option<PathBuf>,
        /// Map an import name to a file: NAME=PATH (repeatable).
        #[arg(long = "import", value_parser = parse_import)]
        imports: Vec<(String, PathBuf)>,
        /// Extraction rule, when the directory name does not tell (v0.1.0, v0.2.0).
        #[arg(long, value_parser = parse_rule)]
        rule: Option<Rule>,
        /// Where the source's prose facts are carried from.
        #[command(flatten)]
        carry: CarryArgs,
    },
}

/// Where a source without spec markdown takes its prose facts from: a proto-only release
/// folder of the corpus carries from the newest older release with spec.md unless told.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CarryArgs {
    /// Carry error tables, obligations and sections from this spec folder (spec.md and its
    /// .proto) for every RPC whose schema is unchanged since; the general tables and sections too.
    #[arg(long, value_name = "OLD_DIR", conflicts_with = "no_carry")]
    carry_from: Option<PathBuf>,
    /// Carry nothing: the source's own facts alone, even for a proto-only corpus release.
    #[arg(long)]
    no_carry: bool,
}

impl CarryArgs {
    /// The loader's carry option.
    pub fn carry(&self) -> Carry {
        match (&self.carry_from, self.no_carry) {
            (Some(dir), _) => Carry::From(dir.clone()),
            (None, true) => Carry::None,
            (None, false) => Carry::Corpus,
        }
    }
}

/// One spec source: exactly one of the three flags.
#[derive(clap::Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct SourceArgs {
    /// A spec folder: spec.md (or README.md) and its .proto, or the .proto alone.
    #[arg(long)]
    spec_dir: Option<PathBuf>,
    /// A .proto file alone (its imports are read beside it and from --import).
    #[arg(long)]
    proto: Option<PathBuf>,
    /// A FileDescriptorSet (`protoc --include_source_info --descriptor_set_out`, `buf build -o`).
    #[arg(long)]
    descriptor_set: Option<PathBuf>,
}

impl SourceArgs {
    /// Loads the source the flags name.
    fn load(&self, options: &LoadOptions) -> csikit_spec::Loaded {
        match (&self.spec_dir, &self.proto, &self.descriptor_set) {
            (_, Some(proto), _) => csikit_spec::source::load_proto_file(proto, options),
            (_, _, Some(set)) => csikit_spec::source::load_descriptor_set(set, options),
            (Some(dir), _, _) => csikit_spec::load_source(dir, options),
            // clap requires one of the three.
            (None, None, None) => csikit_spec::load_source(Path::new("."), options),
        }
    }
}

fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::parse(s).ok_or_else(|| {
        format!("unknown rule '{s}'; expected makefile, makefile-v0.2 or makefile-v0.1")
    })
}

fn parse_import(s: &str) -> Result<(String, PathBuf), String> {
    let (name, path) = s.split_once('=').ok_or_else(|| format!("expected NAME=PATH, got '{s}'"))?;
    Ok((name.to_owned(), PathBuf::from(path)))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Proto { spec, rule } => proto(&spec, rule),
        Command::Generate(args) => generate::generate(args),
        Command::Diff(args) => Ok(diff::run_diff(args)),
        Command::Changelog(args) => diff::changelog(args),
        Command::Docs(args) => docs::docs(args),
        Command::NewDriver(args) => csikit_cli::new_driver::new_driver(args),
        Command::Model { source, lang, translation, imports, rule, carry } => {
            model(&source, &lang, translation, &imports, rule, carry.carry())
        }
    }
}

/// Renders diagnostics to stderr with miette and says whether any is an error.
fn report(diags: &Diagnostics) -> bool {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    for d in &diags.0 {
        let mut out = String::new();
        if handler.render_report(&mut out, d).is_err() {
            out = format!("{}: {}\n", d.location(), d.message);
        }
        let loc = d.location();
        if !loc.is_empty() {
            eprintln!("{loc}");
        }
        eprint!("{out}");
    }
    diags.has_errors()
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).context("writing to stdout")?;
    out.flush().context("writing to stdout")
}

fn proto(spec: &Path, rule: Rule) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(spec).with_context(|| format!("reading '{}'", spec.display()))?;
    let text =
        String::from_utf8(bytes).with_context(|| format!("'{}' is not UTF-8", spec.display()))?;
    let src = SourceFile::new(spec.display().to_string(), text);
    let mut diags = Vec::new();
    let extracted = csikit_spec::extract::extract_proto(&src, rule, &mut diags);
    if report(&Diagnostics(diags)) {
        return Ok(ExitCode::from(1));
    }
    write_stdout(&extracted.proto)?;
    Ok(ExitCode::SUCCESS)
}

fn model(
    source: &SourceArgs,
    lang: &str,
    translation: Option<PathBuf>,
    imports: &[(String, PathBuf)],
    rule: Option<Rule>,
    carry: Carry,
) -> anyhow::Result<ExitCode> {
    let mut map = ImportMap::new();
    for (name, path) in imports {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading import '{}'", path.display()))?;
        map.insert(name.clone(), SourceFile::new(path.display().to_string(), text));
    }
    let usage = |msg: String| -> ! {
        use clap::CommandFactory;
        Cli::command().error(clap::error::ErrorKind::ArgumentConflict, msg).exit()
    };
    let translation = match (lang, translation) {
        ("en", None) => None,
        ("en", Some(_)) => usage("--translation needs --lang naming its language".into()),
        (_, None) => {
            usage(format!("--lang {lang} needs --translation FILE (the translated spec.md)"))
        }
        (l, Some(path)) => Some((l.to_owned(), path)),
    };
    let loaded = source.load(&LoadOptions { rule, translation, imports: map, carry });
    let failed = report(&loaded.diagnostics);
    match loaded.model {
        Some(model) if !failed => {
            write_stdout(&model.to_json())?;
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(ExitCode::from(1)),
    }
}
