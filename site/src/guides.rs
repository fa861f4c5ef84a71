//! Guide pages: pages for readers of some editions, written from the Model, the diff engine's
//! findings and data tables rather than from the spec's own prose, listed under "Guides" in the
//! navigation and on the contents page of every edition that has them.
//!
//! To add a guide, write its module beside `upgrade` (a [`Guide`]: its path in an edition, which
//! editions have it, its title and its body) and list it in [`GUIDES`]; the edition renders it
//! with the site's frame, links it from the navigation and the contents page, indexes it for
//! search, and the release and language menus find it like any other page.

mod deploying;
mod upgrade;

use csikit_spec::Model;
use csikit_spec::diff::Report;

use crate::changes::ChangeLinks;
use crate::i18n::Catalog;
use crate::input::GuideText;
use crate::prose::Prose;

/// Where a guide would appear: one edition, as much as is known before the site is put
/// together (which editions have a guide decides which pages there are).
pub(crate) struct Scope<'a> {
    /// The version's model.
    pub model: &'a Model,
    /// The version, e.g. `v1.13.0`.
    pub version: &'a str,
    /// The edition's language.
    pub lang: &'a str,
    /// Its interface strings.
    pub cat: &'a Catalog,
    /// Whether the edition is of the CSI spec (not of a csi-addons package).
    pub csi: bool,
    /// The diff engine's report from the version before, if there is one.
    pub report: Option<&'a Report>,
    /// The release the edition's prose is carried from, if it is.
    pub carried_from: Option<&'a str>,
    /// Guides written outside the spec, in markdown.
    pub texts: &'a [GuideText],
}

/// What a guide's body is written with.
pub(crate) struct Render<'a> {
    /// Markdown (comments, table cells) rendered on the guide's page, identifiers linked.
    pub prose: &'a Prose<'a>,
    /// Hrefs from the guide's page to elements of this version and of the version before.
    pub links: &'a dyn ChangeLinks,
}

/// A guide page.
pub(crate) struct Guide {
    /// Its path in an edition folder, under `guide/`.
    pub path: &'static str,
    /// Whether an edition has it.
    pub applies: fn(&Scope<'_>) -> bool,
    /// Its title.
    pub title: fn(&Scope<'_>) -> String,
    /// Its body, as HTML after the title.
    pub body: fn(&Scope<'_>, &Render<'_>) -> String,
}

/// Every guide, in the order the navigation lists them.
pub(crate) const GUIDES: &[Guide] = &[upgrade::GUIDE, deploying::GUIDE];

/// The guides an edition has.
pub(crate) fn guides_of(scope: &Scope<'_>) -> Vec<&'static Guide> {
    GUIDES.iter().filter(|g| (g.applies)(scope)).collect()
}
