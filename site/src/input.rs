//! What the site is rendered from: the models of the CSI releases, the translations and the
//! csi-addons packages.

use csikit_spec::Model;

/// One English version of a spec: a CSI release, or a version of a csi-addons package.
#[derive(Debug, Clone)]
pub struct Release {
    /// Its name, e.g. `v1.12.0`.
    pub name: String,
    /// Its model (English).
    pub model: Model,
}

/// A translation of the spec, rendered as the edition of the release it translates.
#[derive(Debug, Clone)]
pub struct Translation {
    /// Language code, e.g. `ja`.
    pub lang: String,
    /// The release the translation was made from, e.g. `v1.7.0`.
    pub release: String,
    /// That release's model loaded with the translation (`LoadOptions::translation`): its
    /// files are the release's English markdown, its proto and the translated markdown.
    pub model: Model,
}

/// A csi-addons package, rendered in English under `addons/NAME/`.
#[derive(Debug, Clone)]
pub struct Addon {
    /// Its folder name, e.g. `replication`.
    pub name: String,
    /// The version rendered, e.g. `main`.
    pub version: String,
    /// Where it comes from, for the footer, e.g. `csi-addons/spec main at 80d74f987a54`.
    pub source: String,
    /// Its model; `csi.v1` types it names link to the newest CSI release.
    pub model: Model,
    /// Earlier versions, oldest first: the history of its badges and its changes page.
    pub earlier: Vec<Release>,
}

/// What to render besides the CSI releases.
#[derive(Debug, Clone, Default)]
pub struct SiteOptions {
    /// Translations, in the order their languages are listed.
    pub translations: Vec<Translation>,
    /// csi-addons packages, in the order they are listed.
    pub addons: Vec<Addon>,
    /// Guides written outside the spec, in markdown, for every English edition of a CSI release.
    pub guides: Vec<GuideText>,
}

/// A guide written in markdown outside the spec (csikit's own documents, such as the csikit
/// CLI's `DEPLOYING.md`): its first line is its `# Title`, the rest its body.
#[derive(Debug, Clone)]
pub struct GuideText {
    /// Its name, which makes its page `guide/NAME.html` (`deploying`).
    pub name: String,
    /// Its markdown.
    pub markdown: String,
}
