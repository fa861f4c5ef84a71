//! Reads what the site shows from a corpus folder: the CSI releases from v1.0.0 on, the
//! translations and the csi-addons packages with their earlier tagged versions, each through
//! `csikit-spec`'s loader. It reads and never writes; `cargo xtask docs`, the tests and the
//! benchmark all load the site this way.

use std::path::{Path, PathBuf};

use csikit_spec::corpus::Corpus;
use csikit_spec::{CSI_GO_IMPORT, Diagnostics, ImportMap, LoadOptions, Loaded, Model, SourceFile};

use crate::input::{Addon, GuideText, Release, SiteOptions, Translation};

/// The first release the site covers: the v1 line.
pub const FIRST_RELEASE: &str = "v1.0.0";

/// Why the site's inputs could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The corpus, or a file it must hold, could not be read.
    Corpus(String),
    /// A spec folder has errors (only the errors: advice and warnings about the upstream text
    /// are `cargo xtask model`'s business).
    Spec {
        /// The folder.
        dir: PathBuf,
        /// Its errors.
        errors: Diagnostics,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Corpus(message) => f.write_str(message),
            LoadError::Spec { dir, errors } => {
                write!(f, "'{}' has {} error(s)", dir.display(), errors.0.len())
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// What the corpus holds for the site, listed from its folders.
#[derive(Debug, Default)]
struct Listing {
    /// CSI releases from [`FIRST_RELEASE`] on, oldest first: name and folder.
    releases: Vec<(String, PathBuf)>,
    /// Translations: language, translated markdown, the release it translates.
    translations: Vec<(String, PathBuf, String)>,
    /// csi-addons packages.
    addons: Vec<AddonListing>,
    /// The csi-addons commit the main versions are at, if recorded.
    addons_commit: Option<String>,
    /// The newest release with a `csi.proto`, which csi-addons imports resolve to: its name and
    /// that file.
    csi_import: Option<(String, PathBuf)>,
}

/// One csi-addons package of the corpus.
#[derive(Debug)]
struct AddonListing {
    name: String,
    /// The main version's folder.
    dir: PathBuf,
    /// Earlier tags (tag, folder), oldest first.
    tags: Vec<(String, PathBuf)>,
}

/// The jobs of one csi-addons package.
struct AddonJobs<'a> {
    name: &'a str,
    /// Each earlier tag: its name and job index.
    earlier: Vec<(String, usize)>,
    /// The job of the main version.
    main: usize,
}

/// Lists the corpus through [`Corpus::read`], the one place that knows which releases,
/// translations and csi-addons packages there are: a release folder dropped into the corpus,
/// with its `.proto` alone or its spec.md too, shows up here.
fn list(corpus: &Path) -> Result<Listing, LoadError> {
    let listed = Corpus::read(corpus).map_err(|d| LoadError::Corpus(d.to_string()))?;
    let releases =
        listed.releases_from(FIRST_RELEASE).map(|r| (r.name.clone(), r.dir.clone())).collect();
    let mut translations = Vec::new();
    for t in &listed.translations {
        let Some(release) = &t.release else {
            return Err(LoadError::Corpus(format!(
                "translation '{}' does not say which release it translates; put its name in a RELEASE file beside it",
                t.markdown.display()
            )));
        };
        translations.push((t.lang.clone(), t.markdown.clone(), release.clone()));
    }
    let addons = listed
        .addons
        .iter()
        .map(|a| AddonListing {
            name: a.name.clone(),
            dir: a.main.dir.clone(),
            tags: a.tags.iter().filter_map(|t| Some((t.tag.clone()?, t.dir.clone()))).collect(),
        })
        .collect();
    let addons_commit = std::fs::read_to_string(corpus.join("csi-addons/COMMIT"))
        .ok()
        .map(|c| c.trim().chars().take(12).collect::<String>())
        .filter(|c| !c.is_empty());
    let csi_import = listed.latest_release().map(|r| (r.name.clone(), r.proto()));
    Ok(Listing { releases, translations, addons, addons_commit, csi_import })
}

/// One spec folder to load.
struct Job {
    dir: PathBuf,
    options: LoadOptions,
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
                        .map(|(i, job)| (i, csikit_spec::load_source(&job.dir, &job.options)))
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

/// The model of a loaded folder, or its errors.
fn model_of(loaded: Loaded, dir: &Path) -> Result<Model, LoadError> {
    if loaded.diagnostics.has_errors() {
        let errors =
            Diagnostics(loaded.diagnostics.0.into_iter().filter(|d| d.is_error()).collect());
        return Err(LoadError::Spec { dir: dir.to_path_buf(), errors });
    }
    loaded.model.ok_or_else(|| {
        LoadError::Corpus(format!("'{}' could not be read into a model", dir.display()))
    })
}

/// Loads everything the site shows from the corpus at `corpus`: the CSI releases from
/// [`FIRST_RELEASE`] on (oldest first), the translations, and the csi-addons packages, whose
/// `csi.proto` import is the newest release's and whose earlier versions are the
/// `csi-addons/_tags/TAG/` folders holding the package's proto. The folders load in parallel.
///
/// # Errors
///
/// When the corpus lacks a folder or file the site needs, or a spec has errors.
pub fn load_corpus(corpus: &Path) -> Result<(Vec<Release>, SiteOptions), LoadError> {
    let listing = list(corpus)?;
    let Some((newest, csi_proto)) =
        listing.csi_import.clone().filter(|_| !listing.releases.is_empty())
    else {
        return Err(LoadError::Corpus(format!(
            "no CSI release from {FIRST_RELEASE} on with a csi.proto in '{}'; set {} to the corpus folder",
            corpus.join("csi-spec").display(),
            csikit_spec::CORPUS_ENV
        )));
    };
    let csi_text = std::fs::read_to_string(&csi_proto)
        .map_err(|e| LoadError::Corpus(format!("reading '{}': {e}", csi_proto.display())))?;
    let addon_imports = || {
        let mut imports = ImportMap::new();
        imports.insert(
            CSI_GO_IMPORT,
            SourceFile::new(csi_proto.display().to_string(), csi_text.clone()),
        );
        LoadOptions { imports, ..LoadOptions::default() }
    };

    let mut jobs: Vec<Job> = listing
        .releases
        .iter()
        .map(|(_, dir)| Job { dir: dir.clone(), options: LoadOptions::default() })
        .collect();
    for (lang, path, release) in &listing.translations {
        let options = LoadOptions {
            translation: Some((lang.clone(), path.clone())),
            ..LoadOptions::default()
        };
        jobs.push(Job { dir: corpus.join("csi-spec").join(release), options });
    }
    let mut addon_jobs: Vec<AddonJobs<'_>> = Vec::new();
    for AddonListing { name, dir, tags } in &listing.addons {
        let mut earlier = Vec::new();
        for (tag, tag_dir) in tags {
            earlier.push((tag.clone(), jobs.len()));
            jobs.push(Job { dir: tag_dir.clone(), options: addon_imports() });
        }
        addon_jobs.push(AddonJobs { name, earlier, main: jobs.len() });
        jobs.push(Job { dir: dir.clone(), options: addon_imports() });
    }

    let mut models: Vec<Option<Model>> = Vec::with_capacity(jobs.len());
    for (loaded, job) in load_all(&jobs).into_iter().zip(&jobs) {
        models.push(Some(model_of(loaded, &job.dir)?));
    }
    let mut take = |i: usize| {
        models[i].take().ok_or_else(|| LoadError::Corpus("a model was used twice".to_owned()))
    };
    let mut releases = Vec::new();
    for (i, (name, _)) in listing.releases.iter().enumerate() {
        releases.push(Release { name: name.clone(), model: take(i)? });
    }
    let mut translations = Vec::new();
    for (k, (lang, _, release)) in listing.translations.iter().enumerate() {
        translations.push(Translation {
            lang: lang.clone(),
            release: release.clone(),
            model: take(listing.releases.len() + k)?,
        });
    }
    let source = match &listing.addons_commit {
        Some(commit) => format!("csi-addons/spec main at {commit}"),
        None => "csi-addons/spec main".to_owned(),
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
    Ok((releases, SiteOptions { translations, addons, guides: Vec::new() }))
}

/// csikit's own guides from the csikit workspace at `workspace`: the csikit CLI's
/// `cli/DEPLOYING.md`, as [`SiteOptions::guides`] holds them.
///
/// # Errors
///
/// When a guide cannot be read (named with its path).
pub fn load_guides(workspace: &Path) -> Result<Vec<GuideText>, LoadError> {
    let path = workspace.join("cli").join("DEPLOYING.md");
    let markdown = std::fs::read_to_string(&path).map_err(|e| {
        LoadError::Corpus(format!("cannot read the guide '{}': {e}", path.display()))
    })?;
    Ok(vec![GuideText { name: "deploying".into(), markdown }])
}
