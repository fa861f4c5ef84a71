//! What every page of an edition shares around its body: title, language and release
//! switchers, menus, notices and footer.

use super::version::{Lang, Site};
use crate::directory::{Directory, PageIdentity, Part};
use crate::pages::{Layout, Nav};

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
            notices.push((
                "source".to_owned(),
                lang.cat
                    .fill("notice_source", &[("release", &tr.release), ("current", &self.version)]),
            ));
        }
        if self.proto_only {
            let release = match &self.addon {
                Some((name, _)) => format!("{name} {}", self.version),
                None => format!("CSI {}", self.version),
            };
            notices.push((
                "proto-only".to_owned(),
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
}
