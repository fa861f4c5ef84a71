//! Every edition folder of the site and the pages each holds, so a page can link to its
//! counterpart in another release or language: the same page when that edition has it, else
//! that edition's contents page with `?missing=NAME` (and `&added=` or `&removed=`), which the
//! page's script turns into a notice.

use std::collections::HashMap;

use csikit_spec::Model;

use super::history::{ElementKind, History, Presence, short_version};
use super::i18n::Catalog;
use super::pages::{LangLink, MenuEntry, MenuGroup};

/// The part of the site an edition belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// The CSI specification, one edition per release and language.
    Csi,
    /// A csi-addons package, by its folder name.
    Addon(String),
}

/// What a page shows: how other editions link to it, and what a notice calls it when they
/// do not have it.
#[derive(Debug, Clone)]
pub(super) struct PageIdentity<'p> {
    /// Path relative to the edition folder.
    pub page: &'p str,
    /// What a reader calls it: the RPC's or type's name, the chapter's title.
    pub label: &'p str,
    /// The element it documents, for saying when it came or went.
    pub element: Option<(ElementKind, String)>,
}

/// A page as the directory knows it.
#[derive(Debug, Clone)]
pub(super) struct PageInfo {
    pub label: String,
    pub element: Option<(ElementKind, String)>,
}

/// One edition folder: a language of one version.
pub(super) struct Edition<'a> {
    /// The folder, e.g. `en/v1.12.0` or `addons/replication`.
    pub dir: String,
    pub lang: String,
    pub version: String,
    pub part: Part,
    /// The version's position in its part's history.
    pub at: Option<usize>,
    pub pages: HashMap<String, PageInfo>,
    pub model: &'a Model,
}

/// Every edition of the site.
pub(super) struct Directory<'a> {
    pub editions: Vec<Edition<'a>>,
    pub csi: &'a History,
    pub addons: HashMap<String, &'a History>,
    /// The translations' languages, in the order the site lists them.
    pub lang_order: Vec<String>,
}

/// Percent-encodes a query value (everything but RFC 3986's unreserved characters).
pub(super) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl<'a> Directory<'a> {
    /// The edition in folder `dir`.
    pub fn find(&self, dir: &str) -> Option<usize> {
        self.editions.iter().position(|e| e.dir == dir)
    }

    fn history(&self, part: &Part) -> Option<&'a History> {
        match part {
            Part::Csi => Some(self.csi),
            Part::Addon(name) => self.addons.get(name).copied(),
        }
    }

    /// The newest English CSI edition: the site's default.
    pub fn latest(&self) -> Option<usize> {
        (0..self.editions.len())
            .filter(|&i| self.editions[i].part == Part::Csi && self.editions[i].lang == "en")
            .max_by_key(|&i| self.editions[i].at)
    }

    /// Whether `e` is the newest English CSI edition.
    pub fn is_latest(&self, e: usize) -> bool {
        self.latest() == Some(e)
    }

    /// The newest edition of a part in a language.
    pub fn newest(&self, part: &Part, lang: &str) -> Option<usize> {
        (0..self.editions.len())
            .filter(|&i| self.editions[i].part == *part && self.editions[i].lang == lang)
            .max_by_key(|&i| self.editions[i].at)
    }

    /// The edition of the version before `e`'s (same language if there is one, else English)
    /// and that version's model.
    pub fn previous(&self, e: usize) -> Option<(usize, &'a Model)> {
        let ed = &self.editions[e];
        let at = ed.at?.checked_sub(1)?;
        let same = |lang: &str| {
            self.editions
                .iter()
                .position(|o| o.part == ed.part && o.lang == lang && o.at == Some(at))
        };
        let found = same(&ed.lang).or_else(|| same("en"))?;
        Some((found, self.editions[found].model))
    }

    /// The href of a page's counterpart in edition `target`, from a page `root_up` below the
    /// site root, and whether the target lacks it (the href is then its contents page).
    pub fn link(&self, target: usize, page: &PageIdentity<'_>, root_up: &str) -> (String, bool) {
        let t = &self.editions[target];
        if t.pages.contains_key(page.page) {
            return (format!("{root_up}{}/{}", t.dir, page.page), false);
        }
        let mut href =
            format!("{root_up}{}/index.html?missing={}", t.dir, query_escape(page.label));
        if let (Some((kind, key)), Some(h), Some(at)) = (&page.element, self.history(&t.part), t.at)
        {
            match h.presence(*kind, key, at) {
                Presence::AddedIn(v) => {
                    href.push_str(&format!("&added={}", query_escape(&short_version(&v))));
                }
                Presence::RemovedIn(v) => {
                    href.push_str(&format!("&removed={}", query_escape(&short_version(&v))));
                }
                Presence::Present | Presence::Unknown => {}
            }
        }
        (href, true)
    }

    /// The languages of a part: English first, then the others in the order their first
    /// edition was listed (the translations' order).
    pub fn langs(&self, part: &Part) -> Vec<&str> {
        let mut langs: Vec<&str> = Vec::new();
        if self.editions.iter().any(|o| o.part == *part && o.lang == "en") {
            langs.push("en");
        }
        for o in &self.lang_order {
            if self.editions.iter().any(|x| x.part == *part && x.lang == *o)
                && !langs.contains(&o.as_str())
            {
                langs.push(o);
            }
        }
        langs
    }

    /// The language switcher of a page of edition `e`: each language of its part, at the same
    /// version when that language has it, else at the language's newest version.
    pub fn lang_links(&self, e: usize, page: &PageIdentity<'_>, root_up: &str) -> Vec<LangLink> {
        let ed = &self.editions[e];
        self.langs(&ed.part)
            .into_iter()
            .filter_map(|lang| {
                let target = if lang == ed.lang {
                    e
                } else {
                    self.editions
                        .iter()
                        .position(|o| {
                            o.part == ed.part && o.lang == lang && o.version == ed.version
                        })
                        .or_else(|| self.newest(&ed.part, lang))?
                };
                let (href, missing) = self.link(target, page, root_up);
                Some(LangLink {
                    code: lang.to_owned(),
                    name: Catalog::lang_name(lang),
                    href,
                    current: target == e,
                    missing,
                })
            })
            .collect()
    }

    /// The release menu of a page of edition `e`: for the CSI spec, the releases in its language
    /// (then, for a translation, the English releases), newest first; for a csi-addons package,
    /// the packages and the newest CSI release.
    pub fn menu(
        &self,
        e: usize,
        page: &PageIdentity<'_>,
        root_up: &str,
        cat: &Catalog,
    ) -> Vec<MenuGroup> {
        let ed = &self.editions[e];
        let releases = |lang: &str| -> Vec<MenuEntry> {
            let mut of: Vec<usize> = (0..self.editions.len())
                .filter(|&i| self.editions[i].part == Part::Csi && self.editions[i].lang == lang)
                .collect();
            of.sort_by_key(|&i| std::cmp::Reverse(self.editions[i].at));
            of.into_iter()
                .map(|i| {
                    let (href, missing) = self.link(i, page, root_up);
                    MenuEntry {
                        label: self.editions[i].version.clone(),
                        href,
                        current: i == e,
                        missing,
                        switch: Some(self.editions[i].dir.clone()),
                        note: if self.is_latest(i) {
                            cat.get("release_latest").to_owned()
                        } else {
                            String::new()
                        },
                    }
                })
                .collect()
        };
        match &ed.part {
            Part::Csi => {
                let mut groups =
                    vec![MenuGroup { title: String::new(), entries: releases(&ed.lang) }];
                if ed.lang != "en" {
                    groups.push(MenuGroup {
                        title: cat.get("menu_english").to_owned(),
                        entries: releases("en"),
                    });
                }
                groups
            }
            Part::Addon(_) => {
                let packages = self
                    .editions
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| matches!(o.part, Part::Addon(_)))
                    .map(|(i, o)| MenuEntry {
                        label: match &o.part {
                            Part::Addon(name) => name.clone(),
                            Part::Csi => o.version.clone(),
                        },
                        href: format!("{root_up}{}/index.html", o.dir),
                        current: i == e,
                        missing: false,
                        switch: None,
                        note: o.version.clone(),
                    })
                    .collect();
                let mut groups = vec![MenuGroup { title: String::new(), entries: packages }];
                if let Some(latest) = self.latest() {
                    let l = &self.editions[latest];
                    groups.push(MenuGroup {
                        title: cat.get("site_title").to_owned(),
                        entries: vec![MenuEntry {
                            label: l.version.clone(),
                            href: format!("{root_up}{}/index.html", l.dir),
                            current: false,
                            missing: false,
                            switch: None,
                            note: cat.get("release_latest").to_owned(),
                        }],
                    });
                }
                groups
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(query_escape("GetSnapshot"), "GetSnapshot");
        assert_eq!(query_escape("a b&c=d"), "a%20b%26c%3Dd");
        assert_eq!(query_escape("卷"), "%E5%8D%B7");
    }
}
