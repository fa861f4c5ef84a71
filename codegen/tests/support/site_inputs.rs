//! The site's inputs from the corpus, as `cargo xtask docs` loads them (every CSI release from
//! v1.0.0 on, the ja and zh translations, the four csi-addons packages with their tagged earlier
//! versions): shared by the site tests and the site benchmark.

use std::path::Path;

use csikit_codegen::site::{Addon, Release, SiteOptions, Translation};
use csikit_spec::{CSI_GO_IMPORT, ImportMap, LoadOptions, Model, SourceFile};

/// Each translation: language, file under `translations/`, and the release it translates.
pub const TRANSLATIONS: &[(&str, &str, &str)] =
    &[("ja", "ja/spec.md", "v1.7.0"), ("zh", "zh/spec.md", "v1.6.0")];
/// The csi-addons packages.
pub const ADDONS: &[&str] = &["identity", "reclaimspace", "replication", "volumegroup"];

fn version_key(name: &str) -> Option<Vec<u32>> {
    name.strip_prefix('v')?.split('.').map(|p| p.parse().ok()).collect()
}

/// Folders named like versions under `dir`, oldest first.
fn version_dirs(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    let mut out: Vec<(Vec<u32>, String, std::path::PathBuf)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    Some((version_key(&name)?, name, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|(_, n, p)| (n, p)).collect()
}

fn load(dir: &Path, options: &LoadOptions) -> Model {
    let loaded = csikit_spec::load_dir(dir, options);
    assert!(!loaded.diagnostics.has_errors(), "{}: {}", dir.display(), loaded.diagnostics);
    loaded.model.unwrap_or_else(|| panic!("'{}' did not load", dir.display()))
}

/// The inputs, or `None` (after a loud message) when the corpus is absent, unless
/// `CSIKIT_REQUIRE_CORPUS=1` makes that a failure.
pub fn site_inputs() -> Option<(Vec<Release>, SiteOptions)> {
    let corpus = csikit_spec::corpus_or_skip()?;
    let mut needed = vec![corpus.join("csi-addons/COMMIT")];
    needed.extend(TRANSLATIONS.iter().map(|(_, f, _)| corpus.join("translations").join(f)));
    needed.extend(ADDONS.iter().map(|a| corpus.join("csi-addons").join(a).join("README.md")));
    let missing: Vec<String> =
        needed.iter().filter(|p| !p.is_file()).map(|p| p.display().to_string()).collect();
    if !missing.is_empty() {
        csikit_spec::skip_missing(&format!("corpus files missing: {}", missing.join(", ")));
        return None;
    }
    let releases: Vec<Release> = version_dirs(&corpus.join("csi-spec"))
        .into_iter()
        .filter(|(name, _)| version_key(name).is_some_and(|v| v >= vec![1, 0, 0]))
        .map(|(name, dir)| Release { model: load(&dir, &LoadOptions::default()), name })
        .collect();
    let newest = releases.last().expect("a v1 release").name.clone();
    let translations = TRANSLATIONS
        .iter()
        .map(|(lang, file, release)| Translation {
            lang: (*lang).to_owned(),
            release: (*release).to_owned(),
            model: load(
                &corpus.join("csi-spec").join(release),
                &LoadOptions {
                    translation: Some(((*lang).to_owned(), corpus.join("translations").join(file))),
                    ..LoadOptions::default()
                },
            ),
        })
        .collect();
    let csi_proto = corpus.join("csi-spec").join(&newest).join("csi.proto");
    let text = std::fs::read_to_string(&csi_proto).expect("newest csi.proto");
    let imports = || {
        let mut map = ImportMap::new();
        map.insert(CSI_GO_IMPORT, SourceFile::new(csi_proto.display().to_string(), text.clone()));
        LoadOptions { imports: map, ..LoadOptions::default() }
    };
    let tags = version_dirs(&corpus.join("csi-addons/_tags"));
    let addons = ADDONS
        .iter()
        .map(|name| Addon {
            name: (*name).to_owned(),
            version: "main".to_owned(),
            source: "csi-addons/spec main".to_owned(),
            model: load(&corpus.join("csi-addons").join(name), &imports()),
            earlier: tags
                .iter()
                .filter(|(_, dir)| dir.join(format!("{name}.proto")).is_file())
                .map(|(tag, dir)| Release { name: tag.clone(), model: load(dir, &imports()) })
                .collect(),
        })
        .collect();
    Some((releases, SiteOptions { translations, addons }))
}
