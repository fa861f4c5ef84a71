//! A translation's `status.html`: every section of the release and whether each language has
//! it translated, partly, stale or missing.

use std::collections::HashMap;

use super::plan::Item;
use super::version::{Lang, Site};
use crate::directory::{Directory, PageIdentity};
use crate::pages::{Nav, StatusPage, StatusRow, render};
use crate::prose::href;
use crate::translation::Status;

impl Site<'_> {
    pub(super) fn render_status(&self, lang: &Lang<'_>, dir: &Directory<'_>, nav: &Nav) -> String {
        let path = "status.html";
        let translations: Vec<&Lang<'_>> = self.langs.iter().filter(|l| l.tr.is_some()).collect();
        let columns = translations
            .iter()
            .map(|t| {
                (
                    t.cat.get("lang_name").to_owned(),
                    t.tr.as_ref().map_or(String::new(), |s| s.release.clone()),
                )
            })
            .collect();
        let order = [Status::Translated, Status::Partly, Status::Stale, Status::Missing];
        let summary = translations
            .iter()
            .map(|t| {
                let statuses =
                    t.tr.as_ref().map(|s| s.pairing.status.as_slice()).unwrap_or_default();
                order
                    .iter()
                    .map(|st| {
                        (
                            st.class().to_owned(),
                            lang.cat.get(st.key()).to_owned(),
                            statuses.iter().filter(|x| *x == st).count(),
                        )
                    })
                    .collect()
            })
            .collect();
        let mut page_of = HashMap::new();
        for page in &self.pages {
            for item in &page.items {
                if let Item::Unit(u) = item {
                    page_of.insert(*u, page.path.as_str());
                }
            }
        }
        let rows = self
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| StatusRow {
                level: u.level,
                title: self.unit_title(lang, i),
                href: href(
                    path,
                    &format!("{}#{}", page_of.get(&i).copied().unwrap_or("index.html"), u.anchor),
                ),
                cells: translations
                    .iter()
                    .map(|t| {
                        let st = t.status(i).unwrap_or(Status::Missing);
                        (st.class().to_owned(), lang.cat.get(st.key()).to_owned())
                    })
                    .collect(),
            })
            .collect();
        let title = lang.cat.get("status_title").to_owned();
        let identity = PageIdentity { page: path, label: &title, element: None };
        let l = self.layout(lang, dir, &identity, title.clone(), nav);
        render(&StatusPage {
            intro: lang.cat.fill("status_intro", &[("current", &self.version)]),
            columns,
            summary,
            rows,
            l,
        })
    }
}
