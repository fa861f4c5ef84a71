//! What every page of an edition shares around its body: title, language and release
//! switchers, menus, notices and footer.

use super::version::{Lang, ProseOrigin, Site};
use crate::directory::{Directory, PageIdentity, Part};
use crate::pages::{Layout, Nav, Notice};

impl Site<'_> {
    pub(super) fn layout<'l>(
        &'l self,
        lang: &'l Lang<'_>,
        dir: &'l Directory<'_>,
        identity: &PageIdentity<'_>,
        title: String,
        nav: &'l Nav,
    ) -> Layout<'l> {
        let page = identity.page;
        let depth = page.matches('/').count();
        let up = "../".repeat(depth);
        let root_up = format!("{up}../../");
        let edition = dir.find(&lang.dir);
        let (langs, menu) = match edition {
            Some(e) => {
                (dir.lang_links(e, identity, &root_up), dir.menu(e, identity, &root_up, &lang.cat))
            }
            None => (Vec::new(), Vec::new()),
        };
        let mut notices = Vec::new();
        if let Some(tr) = &lang.tr {
            notices.push(Notice::plain(
                "source",
                lang.cat
                    .fill("notice_source", &[("release", &tr.release), ("current", &self.version)]),
            ));
        }
        // A carried edition says so on the pages that show carried text (see `carried_notice`).
        if self.prose == ProseOrigin::None {
            let release = match &self.addon {
                Some((name, _)) => format!("{name} {}", self.version),
                None => format!("CSI {}", self.version),
            };
            notices.push(Notice::plain(
                "proto-only",
                lang.cat.fill("notice_proto_only", &[("release", &release)]),
            ));
        }
        let footer = match &self.addon {
            Some((name, source)) => {
                lang.cat.fill("footer_addon", &[("name", name), ("source", source)])
            }
            None => lang.cat.fill("footer", &[("current", &self.version)]),
        };
        let previous =
            self.history.and_then(|(h, at)| at.checked_sub(1).map(|p| h.versions()[p].clone()));
        Layout {
            lang: &lang.lang,
            cat: &lang.cat,
            title,
            page: page.to_owned(),
            up,
            root_up,
            release: &self.version,
            edition_label: match &self.addon {
                Some((name, _)) => format!("{name} · {}", self.version),
                None => self.version.clone(),
            },
            site_title: match &self.addon {
                Some(_) => lang.cat.get("addons_title").to_owned(),
                None => lang.cat.get("site_title").to_owned(),
            },
            menu_title: match self.part {
                Part::Csi => lang.cat.get("nav_release").to_owned(),
                Part::Addon(_) => lang.cat.get("nav_package").to_owned(),
            },
            changes: match previous {
                Some(p) => lang.cat.fill("nav_changes", &[("old", &p), ("new", &self.version)]),
                None => lang.cat.fill("nav_changes_first", &[("new", &self.version)]),
            },
            status: lang.tr.is_some(),
            langs,
            menu,
            nav,
            notices,
            footer,
        }
    }

    /// The banner of a page that shows text carried from an older release: which release and
    /// why, as a named region (a landmark a screen reader lists); `None` when the edition's
    /// text is its own.
    pub(super) fn carried_notice(&self, lang: &Lang<'_>) -> Option<Notice> {
        let from = self.prose.carried_from()?;
        Some(Notice {
            kind: "carried",
            text: lang.cat.fill("notice_carried", &[("from", from), ("release", &self.version)]),
            region: Some(lang.cat.get("notice_carried_label").to_owned()),
        })
    }
}
