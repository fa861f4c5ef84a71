//! `cargo xtask docs`: loads the site's inputs from the corpus ([`csikit_site::load_corpus`]:
//! every CSI release from v1.0.0 on, the translations and the csi-addons packages with their
//! earlier tagged versions), renders the site with `csikit_site`, and swaps it into place
//! atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::bail;
use csikit_site::{LoadError, Release, SiteOptions, generate_site};

/// Arguments of `cargo xtask docs`.
#[derive(clap::Args)]
pub struct DocsArgs {
    /// Where the site goes (replaced as a whole); default `target/site` in the workspace.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The corpus holding csi-spec/, translations/ and csi-addons/; default `$CSIKIT_CORPUS` or `../shared/corpus`.
    #[arg(long)]
    corpus: Option<PathBuf>,
}

/// Loads the site's inputs from `corpus`; a spec's errors are printed as diagnostics first.
///
/// # Errors
///
/// When a folder is missing or a spec has errors.
fn load_site(corpus: &Path) -> anyhow::Result<(Vec<Release>, SiteOptions)> {
    match csikit_site::load_corpus(corpus) {
        Ok(inputs) => Ok(inputs),
        Err(LoadError::Spec { dir, errors }) => {
            super::report(&errors);
            bail!("'{}' has errors; the site was not written", dir.display())
        }
        Err(e) => Err(e.into()),
    }
}

/// Renders the site and replaces `out` with it.
///
/// # Errors
///
/// When the inputs cannot be loaded or the files cannot be written.
pub fn docs(args: DocsArgs) -> anyhow::Result<ExitCode> {
    let out =
        args.out.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/site"));
    let corpus = args.corpus.unwrap_or_else(csikit_spec::corpus_dir);
    let started = Instant::now();
    let (releases, options) = load_site(&corpus)?;
    let loaded = started.elapsed();
    let rendered_at = Instant::now();
    let files = generate_site(&releases, &options);
    let rendered = rendered_at.elapsed();
    let written_at = Instant::now();
    write_atomically(&out, &files)?;
    let written = written_at.elapsed();
    let bytes: usize = files.values().map(String::len).sum();
    eprintln!(
        "rendered {} files ({} MiB) for {} releases ({} to {}), {} translations and {} csi-addons packages into '{}': load {} ms, render {} ms, write {} ms",
        files.len(),
        bytes / (1024 * 1024),
        releases.len(),
        releases.first().map_or("", |r| r.name.as_str()),
        releases.last().map_or("", |r| r.name.as_str()),
        options.translations.len(),
        options.addons.len(),
        out.display(),
        loaded.as_millis(),
        rendered.as_millis(),
        written.as_millis()
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes every file into a temporary sibling of `out`, then renames it into place, so a
/// reader never sees half a site.
fn write_atomically(
    out: &Path,
    files: &std::collections::BTreeMap<PathBuf, String>,
) -> anyhow::Result<()> {
    let tmp = csikit_cli::tree::stage_unsynced(out, files)?;
    csikit_cli::tree::swap_in(out, &tmp)
}
