//! `cargo xtask docs`: loads every CSI release from v1.0.0 on, the translations and the
//! csi-addons packages (with their earlier tagged versions), renders the site with
//! `csikit_codegen::site`, and swaps it into place atomically.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use csikit_codegen::site::{Addon, Release, SiteOptions, Translation, generate_site};
use csikit_spec::{CSI_GO_IMPORT, ImportMap, LoadOptions, Loaded, Model, SourceFile};

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

/// The first release the site covers: the v1 line.
pub const FIRST_RELEASE: &str = "v1.0.0";
/// Language, translated file under `translations/`, and the release it translates.
pub const TRANSLATIONS: &[(&str, &str, &str)] =
    &[("ja", "ja/spec.md", "v1.7.0"), ("zh", "zh/spec.md", "v1.6.0")];

/// One spec folder to load.
struct Job {
    dir: PathBuf,
    options: LoadOptions,
}

/// The jobs of one csi-addons package.
struct AddonJobs {
    name: &'static str,
    /// Each earlier tag: its name and job index.
    earlier: Vec<(String, usize)>,
    /// The job of the version rendered (main).
    main: usize,
}

/// Loads every job, spread over the machine's cores; results in the order of `jobs`.
fn load_all(jobs: &[Job]) -> Vec<Loaded> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let mut slots: Vec<Option<Loaded>> = (0..jobs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    jobs.iter()
                        .enumerate()
                        .skip(w)
                        .step_by(workers)
                        .map(|(i, job)| (i, csikit_spec::load_dir(&job.dir, &job.options)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            // load_dir reports bad input as diagnostics; a panic there is a bug to surface as one.
            for (i, loaded) in h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)) {
                slots[i] = Some(loaded);
            }
        }
    });
    slots.into_iter().flatten().collect()
}

/// The model of a loaded folder; its errors (not advice or warnings about the upstream text,
/// which are the `model` command's business) are printed and stop the site.
fn model_of(loaded: Loaded, dir: &Path) -> anyhow::Result<Model> {
    if loaded.diagnostics.has_errors() {
        let errors = csikit_spec::Diagnostics(
            loaded.diagnostics.0.iter().filter(|d| d.is_error()).cloned().collect(),
        );
        super::report(&errors);
        bail!("'{}' has errors; the site was not written", dir.display());
    }
    loaded.model.with_context(|| format!("'{}' could not be read into a model", dir.display()))
}

/// A version number read from a folder name such as `v1.12.0`.
fn version_key(name: &str) -> Option<Vec<u32>> {
    name.strip_prefix('v')?.split('.').map(|p| p.parse().ok()).collect()
}

/// The folders under `dir` named like versions, oldest first.
fn version_dirs(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out: Vec<(Vec<u32>, String, PathBuf)> = std::fs::read_dir(dir)
        .with_context(|| format!("reading '{}'", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            Some((version_key(&name)?, name, e.path()))
        })
        .collect();
    out.sort();
    Ok(out.into_iter().map(|(_, n, p)| (n, p)).collect())
}

/// Loads everything the site shows from the corpus: the CSI releases from v1.0.0 on (oldest
/// first), the translations, and the csi-addons packages, whose `csi.proto` import is the newest
/// release's and whose earlier versions are the `csi-addons/_tags/TAG/` folders holding the
/// package's proto.
///
/// # Errors
///
/// When a folder is missing or a spec has errors (printed as diagnostics first).
pub fn load_site(corpus: &Path) -> anyhow::Result<(Vec<Release>, SiteOptions)> {
    let first = version_key(FIRST_RELEASE).unwrap_or_default();
    let releases: Vec<(String, PathBuf)> = version_dirs(&corpus.join("csi-spec"))?
        .into_iter()
        .filter(|(name, _)| version_key(name).is_some_and(|v| v >= first))
        .collect();
    let Some((newest, newest_dir)) = releases.last().cloned() else {
        bail!(
            "no CSI release from {FIRST_RELEASE} on in '{}'; set {} to the corpus folder",
            corpus.join("csi-spec").display(),
            csikit_spec::CORPUS_ENV
        );
    };
    let csi_proto = newest_dir.join("csi.proto");
    let csi_text = std::fs::read_to_string(&csi_proto)
        .with_context(|| format!("reading '{}'", csi_proto.display()))?;
    let addon_imports = || {
        let mut imports = ImportMap::new();
        imports.insert(
            CSI_GO_IMPORT,
            SourceFile::new(csi_proto.display().to_string(), csi_text.clone()),
        );
        LoadOptions { imports, ..LoadOptions::default() }
    };

    let mut jobs: Vec<Job> = releases
        .iter()
        .map(|(_, dir)| Job { dir: dir.clone(), options: LoadOptions::default() })
        .collect();
    for (lang, file, release) in TRANSLATIONS {
        let path = corpus.join("translations").join(file);
        if !path.is_file() {
            bail!("translation '{}' is missing", path.display());
        }
        let options =
            LoadOptions { translation: Some(((*lang).to_owned(), path)), ..LoadOptions::default() };
        jobs.push(Job { dir: corpus.join("csi-spec").join(release), options });
    }
    let addons_dir = corpus.join("csi-addons");
    let tags = version_dirs(&addons_dir.join("_tags")).unwrap_or_default();
    let mut addon_jobs: Vec<AddonJobs> = Vec::new();
    for name in crate::generate::ADDONS {
        let mut earlier = Vec::new();
        for (tag, dir) in &tags {
            if dir.join(format!("{name}.proto")).is_file() {
                earlier.push((tag.clone(), jobs.len()));
                jobs.push(Job { dir: dir.clone(), options: addon_imports() });
            }
        }
        addon_jobs.push(AddonJobs { name, earlier, main: jobs.len() });
        jobs.push(Job { dir: addons_dir.join(name), options: addon_imports() });
    }

    let mut models: Vec<Option<Model>> = Vec::with_capacity(jobs.len());
    for (loaded, job) in load_all(&jobs).into_iter().zip(&jobs) {
        models.push(Some(model_of(loaded, &job.dir)?));
    }
    let mut take = |i: usize| models[i].take().context("a model was used twice");
    let mut out_releases = Vec::new();
    for (i, (name, _)) in releases.iter().enumerate() {
        out_releases.push(Release { name: name.clone(), model: take(i)? });
    }
    let mut translations = Vec::new();
    for (k, (lang, _, release)) in TRANSLATIONS.iter().enumerate() {
        translations.push(Translation {
            lang: (*lang).to_owned(),
            release: (*release).to_owned(),
            model: take(releases.len() + k)?,
        });
    }
    let commit = std::fs::read_to_string(addons_dir.join("COMMIT"))
        .map(|c| c.trim().chars().take(12).collect::<String>())
        .unwrap_or_default();
    let source = if commit.is_empty() {
        "csi-addons/spec main".to_owned()
    } else {
        format!("csi-addons/spec main at {commit}")
    };
    let mut addons = Vec::new();
    for AddonJobs { name, earlier, main } in addon_jobs {
        let mut versions = Vec::new();
        for (tag, i) in earlier {
            versions.push(Release { name: tag, model: take(i)? });
        }
        addons.push(Addon {
            name: name.to_owned(),
            version: "main".to_owned(),
            source: format!("{source}, imports CSI {newest}"),
            model: take(main)?,
            earlier: versions,
        });
    }
    Ok((out_releases, SiteOptions { translations, addons }))
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
    let tmp = crate::tree::stage_unsynced(out, files)?;
    crate::tree::swap_in(out, &tmp)
}
