//! `cargo xtask diff OLD_DIR NEW_DIR` (what changed between two spec folders) and
//! `cargo xtask changelog` (every consecutive pair of releases in the corpus, newest first, plus
//! csi-addons replication from its v0.1.1 tag to the corpus's main), over
//! `csikit_spec::diff`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use csikit_spec::corpus::Corpus;
use csikit_spec::diff::{Report, diff, markdown};
use csikit_spec::{Carry, LoadOptions, Model};

/// How the report is written.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// Markdown for people.
    Md,
    /// The JSON contract.
    Json,
}

/// `cargo xtask diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The older spec folder (spec.md + csi.proto, or a csi-addons README.md + .proto).
    old: PathBuf,
    /// The newer spec folder.
    new: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    format: Format,
    /// What OLD carries: `--carry-from DIR` carries into OLD (a .proto or proto-only folder)
    /// the prose facts of DIR, so a carried Model is compared with the real one; `--no-carry`
    /// reads both sides alone. A proto-only corpus release carries by default.
    #[command(flatten)]
    carry: crate::CarryArgs,
}

/// `cargo xtask changelog`.
#[derive(Debug, clap::Args)]
pub struct ChangelogArgs {
    /// Write here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What a spec source is called in reports: a folder's name (`v1.12.0`, `replication`), a file's
/// with its folder's (`v1.12.0/csi.proto`).
fn release_name(dir: &Path) -> String {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    match (dir.is_file(), dir.parent().and_then(name)) {
        (true, Some(folder)) => format!("{folder}/{}", name(dir).unwrap_or_default()),
        _ => name(dir).unwrap_or_default(),
    }
}

/// Loads any spec source (a spec folder, a proto-only folder, a .proto, a descriptor set);
/// csi-addons imports of csi.proto resolve to the corpus's newest release, and a proto-only
/// corpus release carries prose facts from the newest older one with spec.md. Errors are
/// reported, and so are the notices of what the source cannot state and what it carries.
fn load(dir: &Path) -> anyhow::Result<Model> {
    load_with(dir, Carry::Corpus)
}

/// [`load`], carrying as `carry` says.
fn load_with(dir: &Path, carry: Carry) -> anyhow::Result<Model> {
    let loaded = csikit_spec::load_source(dir, &LoadOptions { carry, ..LoadOptions::default() });
    let shown = csikit_spec::source::errors_and_source_notice(&loaded.diagnostics);
    if crate::report(&shown) {
        bail!("'{}' has errors", dir.display());
    }
    loaded.model.with_context(|| format!("'{}' is not a spec source", dir.display()))
}

/// The section links of a report: the spec's markdown at its release on GitHub (a file's
/// folder's).
fn link_base(dir: &Path) -> String {
    let dir = if dir.is_file() { dir.parent().unwrap_or(dir) } else { dir };
    let release = release_name(dir);
    // A CSI release folder, with its spec.md or its csi.proto alone (the spec.md is upstream).
    let csi = dir.join("spec.md").is_file()
        || dir.parent().and_then(Path::file_name).is_some_and(|n| n == "csi-spec");
    if csi {
        format!("https://github.com/container-storage-interface/spec/blob/{release}/spec.md")
    } else {
        let tag = if dir.parent().and_then(Path::file_name).is_some_and(|n| n == "_tags") {
            release
        } else {
            "main".into()
        };
        format!("https://github.com/csi-addons/spec/blob/{tag}/{}/README.md", spec_name(dir))
    }
}

/// The side of a pair whose markdown a report's section links go to: the new one, else the old
/// when only it has its markdown (a proto-only release's section anchors are the ones it
/// carries from an older release's markdown).
fn linked<'p>(old: &'p Path, new: &'p Path) -> &'p Path {
    if has_markdown(new) || !has_markdown(old) { new } else { old }
}

/// Whether a spec source is a folder with its markdown.
fn has_markdown(dir: &Path) -> bool {
    ["spec.md", "README.md"].iter().any(|f| dir.join(f).is_file())
}

fn spec_name(dir: &Path) -> String {
    // A csi-addons folder holds <name>.proto.
    std::fs::read_dir(dir)
        .ok()
        .and_then(|entries| {
            entries.filter_map(Result::ok).find_map(|e| {
                let p = e.path();
                (p.extension().is_some_and(|x| x == "proto"))
                    .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .flatten()
            })
        })
        .unwrap_or_default()
}

/// Runs `cargo xtask diff`: exit 0 without findings, 1 with, 2 on bad input.
pub fn run_diff(args: DiffArgs) -> ExitCode {
    let new_carry = if args.carry.no_carry { Carry::None } else { Carry::Corpus };
    let (old, new) =
        match (load_with(&args.old, args.carry.carry()), load_with(&args.new, new_carry)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("error: {e:#}");
                return ExitCode::from(2);
            }
        };
    let report = diff(&old, &new, &release_name(&args.old), &release_name(&args.new));
    let text = match args.format {
        Format::Json => match serde_json::to_string_pretty(&report) {
            Ok(t) => t + "\n",
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        Format::Md => markdown(&report, &link_base(linked(&args.old, &args.new))),
    };
    if let Err(e) = crate::write_stdout(&text) {
        eprintln!("error: {e:#}");
        return ExitCode::from(2);
    }
    ExitCode::from(u8::from(!report.findings.is_empty()))
}

/// Every consecutive pair of the corpus's releases (as `csikit_spec::corpus` lists them),
/// newest first, then each csi-addons package with tagged versions, from its oldest tag to main.
pub fn changelog_reports() -> anyhow::Result<Vec<(Report, String)>> {
    let corpus = Corpus::open().map_err(|d| anyhow::anyhow!("{d}"))?;
    let releases: Vec<PathBuf> = corpus.releases.iter().map(|r| r.dir.clone()).collect();
    let models: Vec<Model> = releases.iter().map(|d| load(d)).collect::<anyhow::Result<_>>()?;
    let mut out = Vec::new();
    for i in (1..models.len()).rev() {
        let report = diff(
            &models[i - 1],
            &models[i],
            &release_name(&releases[i - 1]),
            &release_name(&releases[i]),
        );
        out.push((report, link_base(linked(&releases[i - 1], &releases[i]))));
    }
    for addon in corpus.addons.iter().filter(|a| !a.tags.is_empty()) {
        let versions: Vec<(String, &Path)> = addon
            .tags
            .iter()
            .chain(std::iter::once(&addon.main))
            .map(|v| {
                let label = v.tag.clone().unwrap_or_else(|| "main".to_owned());
                (format!("{} {label}", addon.name), v.dir.as_path())
            })
            .collect();
        for pair in versions.windows(2) {
            let (old, new) = (&pair[0], &pair[1]);
            let report = diff(&load(old.1)?, &load(new.1)?, &old.0, &new.0);
            out.push((report, link_base(new.1)));
        }
    }
    Ok(out)
}

/// Runs `cargo xtask changelog`.
///
/// # Errors
///
/// A release that does not load, or a failed write.
pub fn changelog(args: ChangelogArgs) -> anyhow::Result<ExitCode> {
    let mut text = String::from(
        "# CSI spec changelog\n\nWhat changed between consecutive releases, computed from the spec by \
         `cargo xtask diff` (newest first), then each csi-addons package from its tags to main.\n\n",
    );
    for (report, link) in changelog_reports()? {
        text.push_str(&markdown(&report, &link));
    }
    match args.out {
        Some(path) => csikit_runtime::fs::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing '{}'", path.display()))?,
        None => crate::write_stdout(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}
