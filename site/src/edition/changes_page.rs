//! An edition's `changes.html`: the diff engine's report from the version before, its names
//! linked to this edition and to the edition of the previous version.

use csikit_spec::Model;

use super::version::{Lang, Site, entry_of, relative_name};
use crate::changes::{ChangeLinks, changes_html};
use crate::directory::{Directory, PageIdentity};
use crate::pages::{ChangesPage, Nav, render};
use crate::prose::href;

impl Site<'_> {
    pub(super) fn render_changes(&self, lang: &Lang<'_>, dir: &Directory<'_>, nav: &Nav) -> String {
        let path = "changes.html";
        let cat = &lang.cat;
        let report = self.history.and_then(|(h, at)| h.report(at));
        let (title, intro, body) = match report {
            Some(r) => {
                let previous = dir.find(&lang.dir).and_then(|e| dir.previous(e));
                let links = EditionLinks { site: self, dir, previous, page: path };
                (
                    cat.fill("changes_title", &[("old", &r.old), ("new", &r.new)]),
                    cat.fill("changes_intro", &[("old", &r.old), ("new", &r.new)]),
                    changes_html(cat, r, &links),
                )
            }
            None => (
                cat.fill("nav_changes_first", &[("new", &self.version)]),
                match self.history {
                    Some((h, _)) if h.versions().len() > 1 => {
                        cat.fill("changes_first", &[("new", &self.version)])
                    }
                    _ => cat.fill("changes_only", &[("new", &self.version)]),
                },
                String::new(),
            ),
        };
        let identity = PageIdentity { page: path, label: &title, element: None };
        let l = self.layout(lang, dir, &identity, title.clone(), nav);
        render(&ChangesPage { l, heading: title, intro, body })
    }
}

/// The links of a page about a version's changes (its changes page, a guide): names of the new
/// version in this edition, names of the old version in the edition of the previous version, if
/// the site has one.
pub(super) struct EditionLinks<'s, 'a> {
    pub site: &'s Site<'a>,
    pub dir: &'s Directory<'s>,
    pub previous: Option<(usize, &'s Model)>,
    /// The page the links are on, relative to the edition folder.
    pub page: &'s str,
}

impl ChangeLinks for EditionLinks<'_, '_> {
    fn new_href(&self, full: &str) -> Option<String> {
        self.site.entry_of(full).map(|t| href(self.page, &t))
    }

    fn old_href(&self, full: &str) -> Option<String> {
        let (edition, model) = self.previous?;
        let target = entry_of(model, full)?;
        // From the page up to the site root: its folders in the edition, then LANG/RELEASE.
        let up = "../".repeat(self.page.matches('/').count() + 2);
        Some(format!("{up}{}/{target}", self.dir.editions[edition].dir))
    }

    fn short<'n>(&self, full: &'n str) -> &'n str {
        relative_name(self.site.model, full)
    }

    fn is_service_or_rpc(&self, full: &str) -> bool {
        let models = std::iter::once(self.site.model).chain(self.previous.map(|(_, m)| m));
        models.into_iter().any(|m| {
            m.services.iter().any(|s| {
                s.full_name == full
                    || full
                        .strip_prefix(s.full_name.as_str())
                        .and_then(|r| r.strip_prefix('.'))
                        .is_some_and(|name| s.methods.iter().any(|x| x.name == name))
            })
        })
    }
}
