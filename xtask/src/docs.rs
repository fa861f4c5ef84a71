//! `cargo xtask docs`: loads the release and its translations, renders the site with
//! `csikit_codegen::site`, and swaps it into place atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use csikit_codegen::site::{SiteOptions, Translation, generate_site};
use csikit_spec::{LoadOptions, Model};

/// Arguments of `cargo xtask docs`.
#[derive(clap::Args)]
pub struct DocsArgs {
    /// Where the site goes (replaced as a whole); default `target/site` in the workspace.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The corpus holding csi-spec/ and translations/; default `$CSIKIT_CORPUS` or `../shared/corpus`.
    #[arg(long)]
    corpus: Option<PathBuf>,
}

/// The release the English site shows, and each translation with the release it was made from.
pub const RELEASE: &str = "v1.12.0";
/// Language, translated file under `translations/`, and the release it translates.
pub const TRANSLATIONS: &[(&str, &str, &str)] =
    &[("ja", "ja/spec.md", "v1.7.0"), ("zh", "zh/spec.md", "v1.6.0")];

fn load(dir: &Path, translation: Option<(&str, PathBuf)>) -> anyhow::Result<Model> {
    let options = LoadOptions {
        translation: translation.map(|(l, p)| (l.to_owned(), p)),
        ..LoadOptions::default()
    };
    let loaded = csikit_spec::load_dir(dir, &options);
    // Advice and warnings about the upstream text are the `model` command's business; only errors stop the site.
    if loaded.diagnostics.has_errors() {
        super::report(&loaded.diagnostics);
    }
    loaded.model.with_context(|| format!("'{}' could not be read into a model", dir.display()))
}

/// Loads the English release and the translations from the corpus.
///
/// # Errors
///
/// When a spec directory or translation is missing or has errors.
pub fn load_site(corpus: &Path) -> anyhow::Result<(Model, SiteOptions)> {
    let en = load(&corpus.join("csi-spec").join(RELEASE), None)?;
    let mut translations = Vec::new();
    for (lang, file, release) in TRANSLATIONS {
        let path = corpus.join("translations").join(file);
        anyhow::ensure!(path.is_file(), "translation '{}' is missing", path.display());
        let model = load(&corpus.join("csi-spec").join(release), Some((lang, path)))?;
        translations.push(Translation {
            lang: (*lang).to_owned(),
            release: (*release).to_owned(),
            model,
        });
    }
    Ok((en, SiteOptions { release: RELEASE.to_owned(), translations }))
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
    let (model, options) = load_site(&corpus)?;
    let loaded = started.elapsed();
    let rendered_at = Instant::now();
    let files = generate_site(&model, &options);
    let rendered = rendered_at.elapsed();
    write_atomically(&out, &files)?;
    let bytes: usize = files.values().map(String::len).sum();
    eprintln!(
        "rendered {} files ({} KiB) for en, ja, zh into '{}': load {} ms, render {} ms",
        files.len(),
        bytes / 1024,
        out.display(),
        loaded.as_millis(),
        rendered.as_millis()
    );
    Ok(ExitCode::SUCCESS)
}

/// Writes every file into a temporary sibling of `out`, then renames it into place, so a
/// reader never sees half a site.
fn write_atomically(
    out: &Path,
    files: &std::collections::BTreeMap<PathBuf, String>,
) -> anyhow::Result<()> {
    let tmp = crate::tree::stage(out, files)?;
    crate::tree::swap_in(out, &tmp)
}
