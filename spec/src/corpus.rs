//! The corpus of real spec inputs, listed from its folders: the one place that knows which CSI
//! releases, csi-addons packages (and their tagged versions) and translations there are, so a
//! release folder dropped into `csi-spec/` shows up in every tool and test that reads the list.
//!
//! Layout (see the corpus README): `csi-spec/<vX.Y.Z>/` holds `spec.md` and `csi.proto`, or the
//! `csi.proto` alone; `csi-addons/<name>/` holds `README.md` and `<name>.proto` (or the proto
//! alone); `csi-addons/_tags/<vX.Y.Z>/` holds earlier versions of some packages;
//! `translations/<lang>/spec.md` holds a translated spec.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Severity};

/// A release number as semantic versioning orders it: `v1.2.0-rc1` < `v1.2.0` < `v1.10.0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major, minor and patch numbers.
    pub numbers: [u64; 3],
    /// Pre-release identifiers (`rc1` in `v1.2.0-rc1`); empty for a release.
    pub pre: Vec<String>,
}

impl Version {
    /// Reads `v1.2.3`, `1.2.3` or `v1.2.3-rc.1` (build metadata after `+` is ignored).
    pub fn parse(name: &str) -> Option<Version> {
        let name = name.strip_prefix('v').unwrap_or(name);
        let name = name.split_once('+').map_or(name, |(v, _)| v);
        let (core, pre) = match name.split_once('-') {
            Some((core, pre)) => (core, pre.split('.').map(str::to_owned).collect()),
            None => (name, Vec::new()),
        };
        let mut parts = core.split('.');
        let mut numbers = [0u64; 3];
        for n in &mut numbers {
            let part = parts.next()?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *n = part.parse().ok()?;
        }
        if parts.next().is_some() || pre.iter().any(String::is_empty) {
            return None;
        }
        Some(Version { numbers, pre })
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.numbers.cmp(&other.numbers).then_with(|| {
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let ord = match (a.parse::<u64>(), b.parse::<u64>()) {
                            (Ok(x), Ok(y)) => x.cmp(&y),
                            (Ok(_), Err(_)) => Ordering::Less,
                            (Err(_), Ok(_)) => Ordering::Greater,
                            (Err(_), Err(_)) => a.cmp(b),
                        };
                        if ord != Ordering::Equal {
                            return ord;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            }
        })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What a spec folder of the corpus holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// The markdown (`spec.md` or `README.md`) and, usually, its `.proto`.
    Full,
    /// The `.proto` alone: no error tables, prose or sections.
    ProtoOnly,
}

impl Form {
    /// How a folder's files make it a spec folder, if they do: markdown makes it full, a
    /// `.proto` without markdown proto-only.
    pub fn of_dir(dir: &Path) -> Option<Form> {
        if ["spec.md", "README.md"].iter().any(|f| dir.join(f).is_file()) {
            Some(Form::Full)
        } else if !protos_in(dir).is_empty() {
            Some(Form::ProtoOnly)
        } else {
            None
        }
    }
}

/// One CSI release folder, `csi-spec/<name>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The folder's name, e.g. `v1.12.0`.
    pub name: String,
    /// Its version.
    pub version: Version,
    /// The folder.
    pub dir: PathBuf,
    /// Full (spec.md) or proto-only.
    pub form: Form,
}

impl Release {
    /// The release's `csi.proto` (which may be absent in a full folder: then the proto is built
    /// from the markdown).
    pub fn proto(&self) -> PathBuf {
        self.dir.join("csi.proto")
    }
}

/// One version of a csi-addons package: the main one (`csi-addons/<name>/`) or a tagged one
/// (`csi-addons/_tags/<tag>/<name>.proto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddonVersion {
    /// The tag (`v0.1.1`), `None` for the main version.
    pub tag: Option<String>,
    /// The folder holding `<name>.proto` (and `README.md` for a full one).
    pub dir: PathBuf,
    /// Full (README.md) or proto-only.
    pub form: Form,
}

/// One csi-addons package, e.g. `replication`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addon {
    /// The package's folder and proto name.
    pub name: String,
    /// The main version (the folder `csi-addons/<name>/`).
    pub main: AddonVersion,
    /// Earlier tagged versions, oldest first.
    pub tags: Vec<AddonVersion>,
}

impl Addon {
    /// The package's proto in its main version.
    pub fn proto(&self) -> PathBuf {
        self.main.dir.join(format!("{}.proto", self.name))
    }
}

/// A translated spec, `translations/<lang>/spec.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// The language code (`ja`, `zh`): the folder's name.
    pub lang: String,
    /// The translated markdown.
    pub markdown: PathBuf,
    /// The release it translates: from a `RELEASE` file in the folder (one line, e.g.
    /// `v1.7.0`), else from [`KNOWN_TRANSLATION_BASES`]; `None` when neither says.
    pub release: Option<String>,
}

/// The releases the corpus's translations translate, as its README records them (the
/// translated files do not say so themselves). A `RELEASE` file beside a translation overrides.
pub const KNOWN_TRANSLATION_BASES: &[(&str, &str)] = &[("ja", "v1.7.0"), ("zh", "v1.6.0")];

/// Everything the corpus holds, listed from its folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// The corpus folder.
    pub root: PathBuf,
    /// CSI releases, oldest first by version.
    pub releases: Vec<Release>,
    /// csi-addons packages, by name.
    pub addons: Vec<Addon>,
    /// Translations, by language.
    pub translations: Vec<Translation>,
}

impl Corpus {
    /// Lists the corpus at `root`. Folders that are not spec folders (no markdown, no proto)
    /// and release folders whose name is not a version are left out.
    ///
    /// # Errors
    ///
    /// When `root/csi-spec` cannot be read.
    pub fn read(root: &Path) -> Result<Corpus, Diagnostic> {
        let spec_dir = root.join("csi-spec");
        let mut releases: Vec<Release> = subdirs(&spec_dir)?
            .into_iter()
            .filter_map(|(name, dir)| {
                let version = Version::parse(&name)?;
                let form = Form::of_dir(&dir)?;
                Some(Release { name, version, dir, form })
            })
            .collect();
        releases.sort_by(|a, b| a.version.cmp(&b.version).then_with(|| a.name.cmp(&b.name)));

        let addons_dir = root.join("csi-addons");
        let mut tags: Vec<(Version, String, PathBuf)> = subdirs(&addons_dir.join("_tags"))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, dir)| Some((Version::parse(&name)?, name, dir)))
            .collect();
        tags.sort();
        let addons = subdirs(&addons_dir)
            .unwrap_or_default()
            .into_iter()
            .filter(|(name, _)| !name.starts_with(['_', '.']))
            .filter_map(|(name, dir)| {
                let form = Form::of_dir(&dir)?;
                if !dir.join(format!("{name}.proto")).is_file() && form == Form::ProtoOnly {
                    return None;
                }
                let tags = tags
                    .iter()
                    .filter(|(_, _, tag_dir)| tag_dir.join(format!("{name}.proto")).is_file())
                    .filter_map(|(_, tag, tag_dir)| {
                        Some(AddonVersion {
                            tag: Some(tag.clone()),
                            dir: tag_dir.clone(),
                            form: Form::of_dir(tag_dir)?,
                        })
                    })
                    .collect();
                Some(Addon { name, main: AddonVersion { tag: None, dir, form }, tags })
            })
            .collect();

        let translations = subdirs(&root.join("translations"))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, dir)| dir.join("spec.md").is_file())
            .map(|(lang, dir)| {
                let release = std::fs::read_to_string(dir.join("RELEASE"))
                    .ok()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .or_else(|| {
                        KNOWN_TRANSLATION_BASES
                            .iter()
                            .find(|(l, _)| *l == lang)
                            .map(|(_, r)| (*r).to_owned())
                    });
                Translation { markdown: dir.join("spec.md"), lang, release }
            })
            .collect();
        Ok(Corpus { root: root.to_path_buf(), releases, addons, translations })
    }

    /// Lists the corpus at [`crate::corpus_dir`].
    ///
    /// # Errors
    ///
    /// As [`Corpus::read`].
    pub fn open() -> Result<Corpus, Diagnostic> {
        Corpus::read(&crate::corpus_dir())
    }

    /// A release by folder name.
    pub fn release(&self, name: &str) -> Option<&Release> {
        self.releases.iter().find(|r| r.name == name)
    }

    /// Releases from `first` on (by version), oldest first.
    pub fn releases_from(&self, first: &str) -> impl Iterator<Item = &Release> {
        let first = Version::parse(first);
        self.releases.iter().filter(move |r| first.as_ref().is_none_or(|f| r.version >= *f))
    }

    /// The newest release (by version) that has a `csi.proto`: what csi-addons imports of the
    /// CSI proto resolve to by default.
    pub fn latest_release(&self) -> Option<&Release> {
        self.releases.iter().rev().find(|r| r.proto().is_file())
    }

    /// The release `release` carries its prose facts from by default when it is proto-only:
    /// the newest older release (by version) that has its spec markdown. `None` for a full
    /// release, or when no older release has markdown.
    pub fn carry_source(&self, release: &Release) -> Option<&Release> {
        if release.form != Form::ProtoOnly {
            return None;
        }
        self.releases
            .iter()
            .rev()
            .filter(|r| r.version < release.version)
            .find(|r| r.form == Form::Full)
    }

    /// A csi-addons package by name.
    pub fn addon(&self, name: &str) -> Option<&Addon> {
        self.addons.iter().find(|a| a.name == name)
    }

    /// The translation into `lang`.
    pub fn translation(&self, lang: &str) -> Option<&Translation> {
        self.translations.iter().find(|t| t.lang == lang)
    }
}

/// The folder a release folder of a corpus carries its prose facts from by default
/// ([`Corpus::carry_source`]), with that release's name: `dir` must be a proto-only
/// `<corpus>/csi-spec/<version>/` folder. `None` for any other folder.
pub fn carry_source_of(dir: &Path) -> Option<(String, PathBuf)> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let releases = dir.parent().filter(|p| p.file_name().is_some_and(|n| n == "csi-spec"))?;
    let corpus = Corpus::read(releases.parent()?).ok()?;
    let release = corpus.release(dir.file_name()?.to_str()?)?;
    corpus.carry_source(release).map(|r| (r.name.clone(), r.dir.clone()))
}

/// The `.proto` files directly in `dir`, sorted.
pub fn protos_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "proto") && p.is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The subfolders of `dir` by name, sorted by name.
fn subdirs(dir: &Path) -> Result<Vec<(String, PathBuf)>, Diagnostic> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Diagnostic::global(Severity::Error, format!("cannot read '{}': {e}", dir.display()))
            .with_help(format!("set {} to the corpus folder", crate::CORPUS_ENV))
    })?;
    let mut out: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_as_semver() {
        let mut names =
            ["v1.10.0", "v1.2.0", "v1.2.0-rc.1", "v0.3.0", "v1.2.0-rc.10", "v1.2.0-alpha"];
        names.sort_by_key(|n| Version::parse(n).unwrap());
        assert_eq!(
            names,
            ["v0.3.0", "v1.2.0-alpha", "v1.2.0-rc.1", "v1.2.0-rc.10", "v1.2.0", "v1.10.0"]
        );
        for bad in ["v1.2", "main", "v1.2.x", "v1.2.3.4", "v1..2", "v1.2.3-"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_dropped_in_folder_is_listed_with_its_form() {
        let root = tempfile::tempdir().unwrap();
        let spec = root.path().join("csi-spec");
        for (name, files) in [
            ("v1.2.0", &["spec.md", "csi.proto"][..]),
            ("v1.10.0", &["csi.proto"][..]),
            ("v1.9.0", &["spec.md"][..]),
            ("notes", &["spec.md"][..]),
            ("v1.11.0", &[][..]),
        ] {
            std::fs::create_dir_all(spec.join(name)).unwrap();
            for f in files {
                std::fs::write(spec.join(name).join(f), "").unwrap();
            }
        }
        let addons = root.path().join("csi-addons");
        for (dir, files) in [
            ("replication", &["README.md", "replication.proto"][..]),
            ("fence", &["fence.proto"][..]),
            ("_tags/v0.1.1", &["README.md", "replication.proto"][..]),
            ("_tags/v0.0.9", &["replication.proto"][..]),
        ] {
            std::fs::create_dir_all(addons.join(dir)).unwrap();
            for f in files {
                std::fs::write(addons.join(dir).join(f), "").unwrap();
            }
        }
        std::fs::create_dir_all(root.path().join("translations/fr")).unwrap();
        std::fs::write(root.path().join("translations/fr/spec.md"), "").unwrap();
        std::fs::write(root.path().join("translations/fr/RELEASE"), "v1.9.0\n").unwrap();

        let c = Corpus::read(root.path()).unwrap();
        let listed: Vec<(&str, Form)> =
            c.releases.iter().map(|r| (r.name.as_str(), r.form)).collect();
        assert_eq!(
            listed,
            [("v1.2.0", Form::Full), ("v1.9.0", Form::Full), ("v1.10.0", Form::ProtoOnly)]
        );
        assert_eq!(c.latest_release().unwrap().name, "v1.10.0");
        // The proto-only v1.10.0 carries from v1.9.0, the newest older release with spec.md.
        let newest = c.release("v1.10.0").unwrap();
        assert_eq!(c.carry_source(newest).map(|r| r.name.as_str()), Some("v1.9.0"));
        assert_eq!(c.carry_source(c.release("v1.9.0").unwrap()), None);
        let (name, dir) = carry_source_of(&spec.join("v1.10.0")).unwrap();
        assert_eq!((name.as_str(), dir.file_name().unwrap()), ("v1.9.0", "v1.9.0".as_ref()));
        assert_eq!(carry_source_of(&spec.join("v1.9.0")), None);
        assert_eq!(carry_source_of(root.path()), None);
        assert_eq!(c.releases_from("v1.9.0").count(), 2);
        let names: Vec<&str> = c.addons.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["fence", "replication"]);
        assert_eq!(c.addon("fence").unwrap().main.form, Form::ProtoOnly);
        let tags: Vec<(Option<&str>, Form)> = c
            .addon("replication")
            .unwrap()
            .tags
            .iter()
            .map(|t| (t.tag.as_deref(), t.form))
            .collect();
        assert_eq!(tags, [(Some("v0.0.9"), Form::ProtoOnly), (Some("v0.1.1"), Form::Full)]);
        assert_eq!(c.translation("fr").unwrap().release.as_deref(), Some("v1.9.0"));
        assert!(Corpus::read(&root.path().join("missing")).is_err());
    }
}
