//! One source of editions: an English spec version (a CSI release or a csi-addons package) and
//! the translations made from that version, each language an edition folder of its own.
//!
//! The files depend on each other downwards only: `plan` (which section goes to which page) and
//! `search` (the index) stand alone; `version` holds what every page of a version shares;
//! `frame` (the page around a body) builds on it; `errors` (the error tables, each row with its
//! anchor and search entry), `reference` (message and enum pages), `chapters` (contents,
//! chapters and RPC pages, which show `reference`'s field tables and `errors`' tables),
//! `changes_page`, `guide_page` (the guides of `crate::guides`, linked as the changes page
//! links) and `status_page` render pages; this file puts an edition together.

mod changes_page;
mod chapters;
mod errors;
mod frame;
mod guide_page;
mod plan;
mod reference;
mod search;
mod status_page;
mod version;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::directory::Directory;
use crate::guides::guides_of;
use crate::prose::ref_page;
use search::SearchIndex;
use version::Lang;
pub(crate) use version::{Site, SiteSource};

impl Site<'_> {
    /// Renders every page of one language into `out`, under the edition folder.
    pub(crate) fn render_lang(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
        out: &mut BTreeMap<PathBuf, String>,
    ) {
        let nav = self.nav(lang);
        let mut search = SearchIndex::default();
        let put = |out: &mut BTreeMap<PathBuf, String>, path: &str, text: String| {
            out.insert(PathBuf::from(format!("{}/{path}", lang.dir)), text);
        };
        for page in &self.pages {
            let html = self.render_page(lang, dir, page, &nav, &mut search);
            put(out, &page.path, html);
        }
        for m in &self.model.messages {
            let path = ref_page(&m.full_name);
            let html = self.render_message(lang, dir, m, &path, &nav, &mut search);
            put(out, &path, html);
        }
        for e in &self.model.enums {
            let path = ref_page(&e.full_name);
            let html = self.render_enum(lang, dir, e, &path, &nav, &mut search);
            put(out, &path, html);
        }
        for guide in guides_of(&self.guide_scope(lang)) {
            let html = self.render_guide(lang, dir, guide, &nav, &mut search);
            put(out, guide.path, html);
        }
        put(out, "changes.html", self.render_changes(lang, dir, &nav));
        if lang.tr.is_some() {
            put(out, "status.html", self.render_status(lang, dir, &nav));
        }
        put(out, "search-index.js", search.to_js(&lang.cat));
    }
}
