//! One source of editions: an English spec version (a CSI release or a csi-addons package) and
//! the translations made from that version, each language an edition folder of its own.
//!
//! Page structure and anchors come from the English markdown of the version; a translation
//! supplies the text of the sections it has, paired by structure (see [`super::translation`]),
//! and every other section falls back to English with a notice.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Range;
use std::path::PathBuf;

use csikit_spec::{ErrorRow, FieldType, Label, Model, Presence, SizeLimit, SourceFile};

use super::Translation;
use super::changes::{ChangeLinks, changes_html};
use super::directory::{Directory, PageIdentity, PageInfo, Part};
use super::history::{ElementKind, History, Lifecycle, short_version};
use super::i18n::Catalog;
use super::pages::{
    Badge, ChangesPage, Contents, ErrorRowHtml, ErrorTable, FieldRow, FieldTable, Layout, Nav,
    ProsePage, RpcPage, StatusPage, StatusRow, TypePage, UseLink,
};
use super::prose::{HeadingOut, LinkIndex, Prose, Rendered, escape, href, ref_page, rpc_page};
use super::render;
use super::translation::{self, Pairing, Status, Unit, split_units};

/// A page of an edition, the same in every language of the version.
pub(super) struct PageSpec {
    /// Path relative to the edition folder.
    pub path: String,
    kind: PageKind,
    items: Vec<Item>,
}

enum PageKind {
    Index,
    Chapter,
    /// Service and method index.
    Rpc(usize, usize),
}

enum Item {
    Unit(usize),
    RpcLinks(Vec<(usize, usize)>),
}

/// One language of a version: an edition folder.
pub(super) struct Lang<'a> {
    pub lang: String,
    pub cat: Catalog,
    /// The edition folder, e.g. `en/v1.12.0`.
    pub dir: String,
    /// Present for translations.
    pub tr: Option<LangSource<'a>>,
    /// Anchors of the document rendered to targets.
    anchors: HashMap<String, String>,
}

pub(super) struct LangSource<'a> {
    pub release: String,
    model: &'a Model,
    src: &'a SourceFile,
    file: usize,
    units: Vec<Unit>,
    pairing: Pairing,
}

impl Lang<'_> {
    fn status(&self, unit: usize) -> Option<Status> {
        self.tr.as_ref().map(|t| t.pairing.status[unit])
    }
}

/// One version and its languages.
pub(super) struct Site<'a> {
    pub model: &'a Model,
    /// The version's name, e.g. `v1.12.0` or `main`.
    pub version: String,
    pub part: Part,
    src: &'a SourceFile,
    units: Vec<Unit>,
    pages: Vec<PageSpec>,
    index: LinkIndex,
    used_in: HashMap<String, Vec<Use>>,
    pub langs: Vec<Lang<'a>>,
    /// The history of the version's spec and the version's place in it.
    history: Option<(&'a History, usize)>,
    /// Types of other packages (`csi.v1` in a csi-addons spec) with their page, relative to
    /// the edition folder.
    externs: HashMap<String, String>,
    /// For a csi-addons package: its name and where it comes from.
    addon: Option<(String, String)>,
}

enum Use {
    Field(String, String),
    Request(String),
    Response(String),
}

/// The markdown a model was read from: its first file, or its last for a translation.
fn prose_file(model: &Model, translated: bool) -> Option<(usize, &SourceFile)> {
    let idx = if translated { model.files.len().checked_sub(1)? } else { 0 };
    if translated && idx < 2 {
        return None;
    }
    model.files.get(idx).map(|f| (idx, f))
}

fn first_word(title: &str) -> &str {
    title.split_whitespace().next().unwrap_or("").trim_matches('`').trim_end_matches(',')
}

fn relative_name<'m>(model: &Model, full: &'m str) -> &'m str {
    full.strip_prefix(model.package.as_str()).and_then(|r| r.strip_prefix('.')).unwrap_or(full)
}

fn bytes_text(n: u32) -> String {
    if n >= 1024 && n.is_multiple_of(1024) { format!("{} KiB", n / 1024) } else { format!("{n} B") }
}

/// What a version's site is made of, besides its model.
pub(super) struct SiteSource<'a> {
    pub version: String,
    pub part: Part,
    /// Render the English edition (false for a translation whose release is not rendered in
    /// English).
    pub english: bool,
    pub translations: Vec<&'a Translation>,
    pub history: Option<(&'a History, usize)>,
    pub externs: HashMap<String, String>,
    pub addon: Option<(String, String)>,
}

/// The edition folder of a language and version.
pub(super) fn edition_dir(part: &Part, lang: &str, version: &str) -> String {
    match part {
        Part::Csi => format!("{lang}/{version}"),
        Part::Addon(name) => format!("addons/{name}"),
    }
}

impl<'a> Site<'a> {
    pub fn new(model: &'a Model, source: SiteSource<'a>) -> Site<'a> {
        static EMPTY: std::sync::OnceLock<SourceFile> = std::sync::OnceLock::new();
        let src = prose_file(model, false)
            .map(|(_, f)| f)
            .unwrap_or_else(|| EMPTY.get_or_init(|| SourceFile::new("empty.md", String::new())));
        let units = split_units(src);
        let pages = plan_pages(model, &units);
        let mut anchors = HashMap::new();
        for page in &pages {
            for item in &page.items {
                if let Item::Unit(u) = item {
                    anchors.insert(
                        units[*u].anchor.clone(),
                        format!("{}#{}", page.path, units[*u].anchor),
                    );
                }
            }
        }
        let mut langs = Vec::new();
        if source.english {
            langs.push(Lang {
                lang: "en".to_owned(),
                cat: Catalog::for_lang("en"),
                dir: edition_dir(&source.part, "en", &source.version),
                tr: None,
                anchors: anchors.clone(),
            });
        }
        for t in &source.translations {
            let Some((file, tr_src)) = prose_file(&t.model, true) else { continue };
            let Some(english) = t.model.files.first() else { continue };
            let tr_units = split_units(tr_src);
            let pairing = translation::pair(src, &units, english, tr_src, &tr_units);
            let mut lang_anchors = anchors.clone();
            for (from, to) in &pairing.anchors {
                if let Some(target) = anchors.get(to) {
                    lang_anchors.entry(from.clone()).or_insert_with(|| target.clone());
                }
            }
            langs.push(Lang {
                lang: t.lang.clone(),
                cat: Catalog::for_lang(&t.lang),
                dir: edition_dir(&source.part, &t.lang, &source.version),
                tr: Some(LangSource {
                    release: t.release.clone(),
                    model: &t.model,
                    src: tr_src,
                    file,
                    units: tr_units,
                    pairing,
                }),
                anchors: lang_anchors,
            });
        }
        let mut used_in: HashMap<String, Vec<Use>> = HashMap::new();
        for m in &model.messages {
            for f in &m.fields {
                used_in
                    .entry(f.ty.value_name().to_owned())
                    .or_default()
                    .push(Use::Field(m.full_name.clone(), f.name.clone()));
            }
        }
        for s in &model.services {
            for m in &s.methods {
                used_in.entry(m.input.clone()).or_default().push(Use::Request(m.name.clone()));
                used_in.entry(m.output.clone()).or_default().push(Use::Response(m.name.clone()));
            }
        }
        Site {
            model,
            version: source.version,
            part: source.part,
            src,
            units,
            pages,
            index: LinkIndex::new(model),
            used_in,
            langs,
            history: source.history,
            externs: source.externs,
            addon: source.addon,
        }
    }

    /// Every page of an edition of this version, relative to its folder, with what it shows.
    pub fn page_infos(&self, lang: &Lang<'_>) -> Vec<(String, PageInfo)> {
        let info = |label: &str, element: Option<(ElementKind, String)>| PageInfo {
            label: label.to_owned(),
            element,
        };
        let mut out = Vec::new();
        for page in &self.pages {
            let page_info = match (&page.kind, page.items.first()) {
                (PageKind::Rpc(s, m), _) => info(
                    &self.model.services[*s].methods[*m].name,
                    Some((ElementKind::Rpc, self.rpc_key(*s, *m))),
                ),
                (PageKind::Chapter, Some(Item::Unit(u))) => info(&self.unit_title(lang, *u), None),
                _ => info(lang.cat.get("nav_home"), None),
            };
            out.push((page.path.clone(), page_info));
        }
        for m in &self.model.messages {
            let name = relative_name(self.model, &m.full_name);
            out.push((
                ref_page(&m.full_name),
                info(name, Some((ElementKind::Message, name.to_owned()))),
            ));
        }
        for e in &self.model.enums {
            let name = relative_name(self.model, &e.full_name);
            out.push((
                ref_page(&e.full_name),
                info(name, Some((ElementKind::Enum, name.to_owned()))),
            ));
        }
        out.push(("changes.html".to_owned(), info(lang.cat.get("nav_changes_label"), None)));
        if lang.tr.is_some() {
            out.push(("status.html".to_owned(), info(lang.cat.get("status_title"), None)));
        }
        out
    }

    /// The version's position in its history.
    pub fn at(&self) -> Option<usize> {
        self.history.map(|(_, at)| at)
    }

    /// The key of an RPC in the history: `Service.Method`.
    fn rpc_key(&self, s: usize, m: usize) -> String {
        let service = &self.model.services[s];
        format!("{}.{}", relative_name(self.model, &service.full_name), service.methods[m].name)
    }

    /// The lifecycle badges of an element: since, alpha until, deprecated in, removed in.
    fn lifecycle_badges(&self, cat: &Catalog, kind: ElementKind, key: &str) -> Vec<Badge> {
        let Some((history, at)) = self.history else { return Vec::new() };
        let Lifecycle { since, alpha_until, deprecated_in, removed_in } =
            history.lifecycle(kind, key, at);
        let mut out = Vec::new();
        // A history of one version says nothing a reader could use.
        if history.versions().len() > 1
            && let Some(v) = since
        {
            out.push(Badge::new("since", cat.fill("badge_since", &[("v", &short_version(&v))])));
        }
        let mut push = |class: &'static str, key: &str, v: Option<String>| {
            if let Some(v) = v {
                out.push(Badge::new(class, cat.fill(key, &[("v", &short_version(&v))])));
            }
        };
        push("alpha-until", "badge_alpha_until", alpha_until);
        push("deprecated", "badge_deprecated_in", deprecated_in);
        push("removed", "badge_removed_in", removed_in);
        out
    }

    fn layout<'l>(
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

    /// The title of a section in a language.
    fn unit_title(&self, lang: &Lang<'_>, u: usize) -> String {
        match &lang.tr {
            Some(tr) if tr.pairing.status[u] != Status::Missing => match tr.pairing.pair[u] {
                Some(t) => tr.units[t].title.clone(),
                None => self.units[u].title.clone(),
            },
            _ => self.units[u].title.clone(),
        }
    }

    fn nav(&self, lang: &Lang<'_>) -> Nav {
        let mut nav = Nav::default();
        for page in &self.pages {
            if let (PageKind::Chapter, Some(Item::Unit(u))) = (&page.kind, page.items.first()) {
                nav.chapters.push((self.unit_title(lang, *u), page.path.clone()));
            }
        }
        for s in &self.model.services {
            nav.services.push((
                s.name.clone(),
                s.methods.iter().map(|m| (m.name.clone(), rpc_page(&m.name))).collect(),
            ));
        }
        nav
    }

    /// Renders every page of one language into `out`, under the edition folder.
    pub fn render_lang(
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
        put(out, "changes.html", self.render_changes(lang, dir, &nav));
        if lang.tr.is_some() {
            put(out, "status.html", self.render_status(lang, dir, &nav));
        }
        put(out, "search-index.js", search.to_js(&lang.cat));
    }

    /// Renders one section in a language: the translation when it has the section, else English.
    fn render_unit(
        &self,
        lang: &Lang<'_>,
        u: usize,
        prose: &Prose<'_>,
        shift: u8,
        first: bool,
        tables_seen: &Cell<bool>,
    ) -> (String, Rendered) {
        let status = lang.status(u);
        let unit = &self.units[u];
        let translated = match (&lang.tr, status) {
            (Some(tr), Some(s)) if s != Status::Missing => tr.pairing.pair[u].map(|t| (tr, t)),
            _ => None,
        };
        let (src, range, model, file) = match translated {
            Some((tr, t)) => (tr.src, tr.units[t].range.clone(), tr.model, tr.file),
            None => (self.src, unit.range.clone(), self.model, 0),
        };
        let mut after = String::new();
        let tr_release = lang.tr.as_ref().map_or("", |t| t.release.as_str());
        match status {
            Some(Status::Missing) => {
                let _ = write!(
                    after,
                    "<p class=\"notice notice-fallback\" lang=\"{}\">{}</p>",
                    lang.lang,
                    escape(
                        &lang.cat.fill("notice_fallback_section", &[("current", &self.version)])
                    )
                );
            }
            Some(Status::Stale) => {
                let _ = write!(
                    after,
                    "<p class=\"notice notice-stale\" lang=\"{}\">{}</p>",
                    lang.lang,
                    escape(&lang.cat.fill(
                        "notice_stale",
                        &[("release", tr_release), ("current", &self.version)]
                    ))
                );
            }
            _ => {}
        }
        let heading =
            HeadingOut { id: &unit.anchor, shift, min_level: if first { 1 } else { 2 }, after };
        let tables = |r: Range<usize>| -> Option<String> {
            let rows: Vec<&ErrorRow> = error_rows(model)
                .filter(|row| row.span.file == file && r.contains(&row.span.offset))
                .collect();
            if rows.is_empty() {
                return None;
            }
            tables_seen.set(true);
            Some(self.error_table(lang, &rows, prose))
        };
        let rendered =
            prose.render(&src.text()[range.clone()], range.start, Some(&heading), &tables);
        let class = status.map_or("source", Status::class);
        let lang_attr = if translated.is_none() && lang.tr.is_some() { " lang=\"en\"" } else { "" };
        let html = format!(
            "<section class=\"unit unit-{class}\"{lang_attr}>\n{}</section>\n",
            rendered.html
        );
        (html, rendered)
    }

    fn error_table(&self, lang: &Lang<'_>, rows: &[&ErrorRow], prose: &Prose<'_>) -> String {
        let rows: Vec<ErrorRowHtml> = rows
            .iter()
            .map(|r| ErrorRowHtml {
                condition: prose.inline(&r.condition),
                code: format!("{} {}", r.code_number, r.code),
                description: prose.inline(&r.description),
                recovery: prose.inline(&r.recovery),
                lang: (r.lang != lang.lang).then(|| r.lang.clone()),
            })
            .collect();
        let recovery = rows.iter().any(|r| !r.recovery.is_empty());
        render(&ErrorTable { cat: &lang.cat, rows: &rows, recovery })
    }

    fn render_page(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
        page: &PageSpec,
        nav: &Nav,
        search: &mut SearchIndex,
    ) -> String {
        let (inline, context) = match page.kind {
            PageKind::Rpc(s, m) => self.rpc_context(&self.model.services[s].methods[m]),
            _ => (Vec::new(), Vec::new()),
        };
        let prose = Prose {
            index: &self.index,
            page: &page.path,
            inline: &inline,
            context: &context,
            anchors: &lang.anchors,
        };
        let shift = match page.items.first() {
            Some(Item::Unit(u)) => self.units[*u].level.saturating_sub(1),
            _ => 0,
        };
        let tables_seen = Cell::new(false);
        let mut body = String::new();
        let mut fallback = false;
        for (i, item) in page.items.iter().enumerate() {
            match item {
                Item::Unit(u) => {
                    let (html, rendered) =
                        self.render_unit(lang, *u, &prose, shift, i == 0, &tables_seen);
                    fallback |= lang.status(*u) == Some(Status::Missing);
                    body.push_str(&html);
                    search.push(
                        "section",
                        &rendered.title,
                        &format!("{}#{}", page.path, self.units[*u].anchor),
                        &rendered.text,
                    );
                }
                Item::RpcLinks(rpcs) => {
                    body.push_str("<ul class=\"rpc-links\">\n");
                    for &(s, m) in rpcs {
                        let method = &self.model.services[s].methods[m];
                        let _ = writeln!(
                            body,
                            "<li><a href=\"{}\"><code>{}</code></a></li>",
                            escape(&href(&page.path, &rpc_page(&method.name))),
                            escape(&method.name)
                        );
                    }
                    body.push_str("</ul>\n");
                }
            }
        }
        let title = match (&page.kind, page.items.first()) {
            (PageKind::Rpc(s, m), _) => self.model.services[*s].methods[*m].name.clone(),
            (_, Some(Item::Unit(u))) => self.unit_title(lang, *u),
            _ => lang.cat.get("nav_home").to_owned(),
        };
        let element = match page.kind {
            PageKind::Rpc(s, m) => Some((ElementKind::Rpc, self.rpc_key(s, m))),
            _ => None,
        };
        let identity = PageIdentity { page: &page.path, label: &title, element };
        let mut l = self.layout(lang, dir, &identity, title.clone(), nav);
        if fallback {
            l.notices.push((
                "fallback".to_owned(),
                lang.cat.fill("notice_fallback_page", &[("current", &self.version)]),
            ));
        }
        match page.kind {
            PageKind::Rpc(s, m) => {
                let service = &self.model.services[s];
                let method = &service.methods[m];
                search.push("rpc", &method.name, &page.path, &method.comment);
                let table = |full: &str, prefix: &str| match self.model.message(full) {
                    Some(msg) => self.field_table(lang, msg, prefix, &prose),
                    None => String::new(),
                };
                let req_prefix = format!("{}.", relative_name(self.model, &method.input));
                let resp_prefix = format!("{}.", relative_name(self.model, &method.output));
                let errors = (!tables_seen.get()).then(|| {
                    let own = lang
                        .tr
                        .as_ref()
                        .filter(|_| page.items.iter().any(|i| matches!(i, Item::Unit(u) if lang.status(*u) != Some(Status::Missing))))
                        .and_then(|t| t.model.method(&method.name))
                        .map(|(_, m)| m);
                    let rows: Vec<&ErrorRow> = own.unwrap_or(method).errors.iter().collect();
                    if rows.is_empty() {
                        format!("<p>{}</p>", escape(lang.cat.get("no_errors")))
                    } else {
                        self.error_table(lang, &rows, &prose)
                    }
                });
                let mut badges = Vec::new();
                if method.alpha {
                    badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
                }
                if method.client_streaming {
                    badges.push(Badge::new(
                        "stream",
                        lang.cat.get("badge_client_streaming").to_owned(),
                    ));
                }
                if method.server_streaming {
                    badges.push(Badge::new(
                        "stream",
                        lang.cat.get("badge_server_streaming").to_owned(),
                    ));
                }
                badges.extend(self.lifecycle_badges(
                    &lang.cat,
                    ElementKind::Rpc,
                    &self.rpc_key(s, m),
                ));
                render(&RpcPage {
                    request: (
                        relative_name(self.model, &method.input).to_owned(),
                        href(&page.path, &ref_page(&method.input)),
                        format!("{}request", req_prefix.to_lowercase().replace('.', "-")),
                    ),
                    response: (
                        relative_name(self.model, &method.output).to_owned(),
                        href(&page.path, &ref_page(&method.output)),
                        format!("{}response", resp_prefix.to_lowercase().replace('.', "-")),
                    ),
                    request_table: table(&method.input, &req_prefix),
                    response_table: table(&method.output, &resp_prefix),
                    l,
                    name: method.name.clone(),
                    service: service.name.clone(),
                    badges,
                    body,
                    errors,
                })
            }
            PageKind::Index => {
                let contents = self.contents(lang, &page.path);
                let release_line = self.release_line(lang, dir);
                render(&ProsePage { l, body, contents: Some(contents), release_line })
            }
            PageKind::Chapter => {
                render(&ProsePage { l, body, contents: None, release_line: String::new() })
            }
        }
    }

    /// The line at the top of the contents page: this version, what changed, every version.
    fn release_line(&self, lang: &Lang<'_>, dir: &Directory<'_>) -> String {
        let cat = &lang.cat;
        let mut out = String::new();
        let latest = dir.find(&lang.dir).is_some_and(|e| dir.is_latest(e));
        let text = match (&self.addon, latest) {
            (Some((name, source)), _) => {
                cat.fill("release_line_addon", &[("name", name), ("source", source)])
            }
            (None, true) => cat.fill("release_line_latest", &[("release", &self.version)]),
            (None, false) => cat.fill("release_line", &[("release", &self.version)]),
        };
        let _ = write!(out, "{} · ", escape(&text));
        let changes = match self
            .history
            .and_then(|(h, at)| at.checked_sub(1).map(|p| h.versions()[p].clone()))
        {
            Some(p) => cat.fill("nav_changes", &[("old", &p), ("new", &self.version)]),
            None => cat.fill("nav_changes_first", &[("new", &self.version)]),
        };
        let _ = write!(
            out,
            "<a href=\"changes.html\">{}</a> · <a href=\"../../index.html\">{}</a>",
            escape(&changes),
            escape(cat.get("nav_all_releases"))
        );
        out
    }

    /// Messages whose tables sit on an RPC page (with their id prefixes), and messages whose
    /// field names are preferred there.
    fn rpc_context(&self, method: &csikit_spec::Method) -> (Vec<(String, String)>, Vec<String>) {
        let inline: Vec<(String, String)> = [&method.input, &method.output]
            .iter()
            .map(|full| ((*full).clone(), format!("{}.", relative_name(self.model, full))))
            .collect();
        let mut context = Vec::new();
        for (full, _) in &inline {
            let nested = format!("{full}.");
            context.extend(
                self.model
                    .messages
                    .iter()
                    .filter(|m| m.full_name.starts_with(&nested))
                    .map(|m| m.full_name.clone()),
            );
            if let Some(msg) = self.model.message(full) {
                for f in &msg.fields {
                    let ty = f.ty.value_name();
                    if self.model.message(ty).is_some() && !context.iter().any(|c| c == ty) {
                        context.push(ty.to_owned());
                    }
                }
            }
        }
        (inline, context)
    }

    fn type_html(&self, ty: &FieldType, page: &str) -> String {
        let link = |full: &str| {
            if self.index.is_type(full) {
                format!(
                    "<a class=\"ref\" href=\"{}\"><code>{}</code></a>",
                    escape(&href(page, &ref_page(full))),
                    escape(relative_name(self.model, full))
                )
            } else if let Some(target) = self.externs.get(full) {
                format!(
                    "<a class=\"ref\" href=\"{}\"><code>{}</code></a>",
                    escape(&href(page, target)),
                    escape(full)
                )
            } else {
                format!("<code>{}</code>", escape(full))
            }
        };
        match ty {
            FieldType::Map { key, value }
                if self.index.is_type(value.value_name())
                    || self.externs.contains_key(value.value_name()) =>
            {
                format!(
                    "<code>map&lt;{}, </code>{}<code>&gt;</code>",
                    escape(key),
                    link(value.value_name())
                )
            }
            FieldType::Map { key, value } => {
                format!("<code>map&lt;{}, {}&gt;</code>", escape(key), escape(value.value_name()))
            }
            other => link(other.value_name()),
        }
    }

    fn field_table(
        &self,
        lang: &Lang<'_>,
        msg: &csikit_spec::Message,
        prefix: &str,
        prose: &Prose<'_>,
    ) -> String {
        let cat = &lang.cat;
        let message_key = relative_name(self.model, &msg.full_name);
        let rows: Vec<FieldRow> = msg
            .fields
            .iter()
            .map(|f| {
                let mut badges = Vec::new();
                match f.presence {
                    Presence::Required => {
                        badges.push(Badge::new("required", cat.get("badge_required").to_owned()));
                    }
                    Presence::Optional => {
                        badges.push(Badge::new("optional", cat.get("badge_optional").to_owned()));
                    }
                    Presence::Unspecified | Presence::Unknown => {}
                }
                if f.secret {
                    badges.push(Badge::new("secret", cat.get("badge_secret").to_owned()));
                }
                if f.alpha {
                    badges.push(Badge::new("alpha", cat.get("badge_alpha").to_owned()));
                }
                let size = match f.size_limit {
                    SizeLimit::General { bytes } | SizeLimit::Max { bytes } => {
                        Some(("badge_max", bytes))
                    }
                    SizeLimit::MaxTotal { bytes } => Some(("badge_max_total", bytes)),
                    SizeLimit::AtLeast { bytes } => Some(("badge_at_least", bytes)),
                    SizeLimit::None => None,
                };
                if let Some((key, bytes)) = size {
                    badges.push(Badge::new("size", cat.fill(key, &[("n", &bytes_text(bytes))])));
                }
                if f.non_negative {
                    badges.push(Badge::new("size", cat.get("badge_non_negative").to_owned()));
                }
                badges.extend(self.lifecycle_badges(
                    cat,
                    ElementKind::Field,
                    &format!("{message_key}.{}", f.name),
                ));
                let label = match (&f.oneof, f.label) {
                    (Some(o), _) => cat.fill("label_oneof", &[("name", o)]),
                    (None, Label::Singular) => cat.get("label_singular").to_owned(),
                    (None, Label::Repeated) => cat.get("label_repeated").to_owned(),
                    (None, Label::Map) => cat.get("label_map").to_owned(),
                };
                FieldRow {
                    id: format!("{prefix}{}", f.name),
                    number: f.number.to_string(),
                    name: f.name.clone(),
                    type_html: self.type_html(&f.ty, prose.page),
                    label,
                    badges,
                    comment_html: prose.inline(&f.comment),
                }
            })
            .collect();
        if rows.is_empty() {
            return format!("<p>{}</p>", escape(cat.get("no_fields")));
        }
        render(&FieldTable { cat, rows: &rows, values: false })
    }

    fn used_in(&self, lang: &Lang<'_>, full: &str, page: &str) -> Vec<UseLink> {
        let Some(uses) = self.used_in.get(full) else { return Vec::new() };
        uses.iter()
            .map(|u| match u {
                Use::Field(m, f) => (
                    format!("{}.{f}", relative_name(self.model, m)),
                    href(page, &format!("{}#{f}", ref_page(m))),
                ),
                Use::Request(r) => {
                    (format!("{} {r}", lang.cat.get("as_request")), href(page, &rpc_page(r)))
                }
                Use::Response(r) => {
                    (format!("{} {r}", lang.cat.get("as_response")), href(page, &rpc_page(r)))
                }
            })
            .collect()
    }

    fn render_message(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
        msg: &csikit_spec::Message,
        path: &str,
        nav: &Nav,
        search: &mut SearchIndex,
    ) -> String {
        let inline = vec![(msg.full_name.clone(), String::new())];
        let context = Vec::new();
        let prose = Prose {
            index: &self.index,
            page: path,
            inline: &inline,
            context: &context,
            anchors: &lang.anchors,
        };
        let name = relative_name(self.model, &msg.full_name);
        search.push("message", name, path, &msg.comment);
        for f in &msg.fields {
            search.push(
                "field",
                &format!("{name}.{}", f.name),
                &format!("{path}#{}", f.name),
                &f.comment,
            );
        }
        let mut badges = Vec::new();
        if msg.alpha {
            badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
        }
        badges.extend(self.lifecycle_badges(&lang.cat, ElementKind::Message, name));
        let oneofs = msg
            .oneofs
            .iter()
            .map(|o| {
                (
                    o.name.clone(),
                    o.required.then(|| {
                        Badge::new("required", lang.cat.get("badge_oneof_required").to_owned())
                    }),
                )
            })
            .collect();
        let identity = PageIdentity {
            page: path,
            label: name,
            element: Some((ElementKind::Message, name.to_owned())),
        };
        let l = self.layout(lang, dir, &identity, name.to_owned(), nav);
        render(&TypePage {
            full_name: msg.full_name.clone(),
            kind: lang.cat.get("kind_message").to_owned(),
            badges,
            comment_html: prose.render(&msg.comment, 0, None, &|_| None).html,
            table: self.field_table(lang, msg, "", &prose),
            oneofs,
            used_in: self.used_in(lang, &msg.full_name, path),
            table_heading: lang.cat.get("h_fields").to_owned(),
            l,
        })
    }

    fn render_enum(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
        e: &csikit_spec::Enum,
        path: &str,
        nav: &Nav,
        search: &mut SearchIndex,
    ) -> String {
        let inline = Vec::new();
        let prose = Prose {
            index: &self.index,
            page: path,
            inline: &inline,
            context: &inline_names(&inline),
            anchors: &lang.anchors,
        };
        let name = relative_name(self.model, &e.full_name);
        search.push("enum", name, path, &e.comment);
        let rows: Vec<FieldRow> = e
            .values
            .iter()
            .map(|v| {
                search.push(
                    "value",
                    &format!("{name}.{}", v.name),
                    &format!("{path}#{}", v.name),
                    &v.comment,
                );
                let mut badges = Vec::new();
                if v.alpha {
                    badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
                }
                badges.extend(self.lifecycle_badges(
                    &lang.cat,
                    ElementKind::Value,
                    &format!("{name}.{}", v.name),
                ));
                FieldRow {
                    id: v.name.clone(),
                    number: v.number.to_string(),
                    name: v.name.clone(),
                    type_html: String::new(),
                    label: String::new(),
                    badges,
                    comment_html: prose.inline(&v.comment),
                }
            })
            .collect();
        let mut badges = Vec::new();
        if e.alpha {
            badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
        }
        badges.extend(self.lifecycle_badges(&lang.cat, ElementKind::Enum, name));
        let identity = PageIdentity {
            page: path,
            label: name,
            element: Some((ElementKind::Enum, name.to_owned())),
        };
        let l = self.layout(lang, dir, &identity, name.to_owned(), nav);
        render(&TypePage {
            full_name: e.full_name.clone(),
            kind: lang.cat.get("kind_enum").to_owned(),
            badges,
            comment_html: prose.render(&e.comment, 0, None, &|_| None).html,
            table: render(&FieldTable { cat: &lang.cat, rows: &rows, values: true }),
            oneofs: Vec::new(),
            used_in: self.used_in(lang, &e.full_name, path),
            table_heading: lang.cat.get("h_values").to_owned(),
            l,
        })
    }

    fn contents(&self, lang: &Lang<'_>, page: &str) -> Contents {
        let nav = self.nav(lang);
        // On the contents page only what is newer than the history's start carries a badge.
        let newer = |badges: Vec<Badge>| -> Vec<Badge> {
            let first = self.history.and_then(|(h, _)| h.versions().first().cloned());
            let first = first.map(|v| lang.cat.fill("badge_since", &[("v", &short_version(&v))]));
            badges
                .into_iter()
                .filter(|b| b.class != "since" || Some(&b.text) != first.as_ref())
                .collect()
        };
        Contents {
            chapters: nav.chapters.iter().map(|(t, p)| (t.clone(), href(page, p))).collect(),
            services: self
                .model
                .services
                .iter()
                .enumerate()
                .map(|(si, s)| {
                    let rpcs = s
                        .methods
                        .iter()
                        .enumerate()
                        .map(|(mi, m)| {
                            let mut badges = Vec::new();
                            if m.alpha {
                                badges.push(Badge::new(
                                    "alpha",
                                    lang.cat.get("badge_alpha").to_owned(),
                                ));
                            }
                            badges.extend(newer(self.lifecycle_badges(
                                &lang.cat,
                                ElementKind::Rpc,
                                &self.rpc_key(si, mi),
                            )));
                            (m.name.clone(), href(page, &rpc_page(&m.name)), badges)
                        })
                        .collect();
                    (s.name.clone(), rpcs)
                })
                .collect(),
            messages: self
                .model
                .messages
                .iter()
                .map(|m| {
                    (
                        relative_name(self.model, &m.full_name).to_owned(),
                        href(page, &ref_page(&m.full_name)),
                    )
                })
                .collect(),
            enums: self
                .model
                .enums
                .iter()
                .map(|e| {
                    (
                        relative_name(self.model, &e.full_name).to_owned(),
                        href(page, &ref_page(&e.full_name)),
                    )
                })
                .collect(),
        }
    }

    fn render_changes(&self, lang: &Lang<'_>, dir: &Directory<'_>, nav: &Nav) -> String {
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

    fn render_status(&self, lang: &Lang<'_>, dir: &Directory<'_>, nav: &Nav) -> String {
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

    /// Where a full name of this version's model has its entry, relative to the edition folder.
    pub fn entry_of(&self, full: &str) -> Option<String> {
        entry_of(self.model, full)
    }
}

/// Where a full name of `model` (service, RPC, message, field, enum or value) has its entry,
/// relative to the edition folder.
pub(super) fn entry_of(model: &Model, full: &str) -> Option<String> {
    if model.message(full).is_some() || model.enum_type(full).is_some() {
        return Some(ref_page(full));
    }
    if model.services.iter().any(|s| s.full_name == full) {
        return Some("index.html".to_owned());
    }
    let (owner, last) = full.rsplit_once('.')?;
    if let Some(s) = model.services.iter().find(|s| s.full_name == owner) {
        return s.methods.iter().any(|m| m.name == last).then(|| rpc_page(last));
    }
    if model.message(owner).is_some_and(|m| m.fields.iter().any(|f| f.name == last))
        || model.enum_type(owner).is_some_and(|e| e.values.iter().any(|v| v.name == last))
    {
        return Some(format!("{}#{last}", ref_page(owner)));
    }
    None
}

/// The links of a changes page: names of the new version in this edition, names of the old
/// version in the edition of the previous version, if the site has one.
struct EditionLinks<'s, 'a> {
    site: &'s Site<'a>,
    dir: &'s Directory<'s>,
    previous: Option<(usize, &'s Model)>,
    page: &'s str,
}

impl ChangeLinks for EditionLinks<'_, '_> {
    fn new_href(&self, full: &str) -> Option<String> {
        self.site.entry_of(full).map(|t| href(self.page, &t))
    }

    fn old_href(&self, full: &str) -> Option<String> {
        let (edition, model) = self.previous?;
        let target = entry_of(model, full)?;
        Some(format!("../../{}/{target}", self.dir.editions[edition].dir))
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

fn inline_names(inline: &[(String, String)]) -> Vec<String> {
    inline.iter().map(|(m, _)| m.clone()).collect()
}

/// Every error row of a model: per RPC, then the general table.
fn error_rows(model: &Model) -> impl Iterator<Item = &ErrorRow> {
    model
        .services
        .iter()
        .flat_map(|s| s.methods.iter().flat_map(|m| m.errors.iter()))
        .chain(model.general_errors.iter())
}

/// Decides which page every section of the version goes to: the title section to the
/// contents page, an RPC's section (and its sub-sections, "X Errors" included) to the RPC's
/// page, everything else to the page of its level-2 chapter.
fn plan_pages(model: &Model, units: &[Unit]) -> Vec<PageSpec> {
    let mut pages =
        vec![PageSpec { path: "index.html".to_owned(), kind: PageKind::Index, items: Vec::new() }];
    let mut rpc_pages: HashMap<(usize, usize), usize> = HashMap::new();
    for (si, s) in model.services.iter().enumerate() {
        for (mi, m) in s.methods.iter().enumerate() {
            rpc_pages.insert((si, mi), pages.len());
            pages.push(PageSpec {
                path: rpc_page(&m.name),
                kind: PageKind::Rpc(si, mi),
                items: Vec::new(),
            });
        }
    }
    let mut by_anchor: HashMap<&str, (usize, usize)> = model
        .services
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            s.methods
                .iter()
                .enumerate()
                .filter_map(move |(mi, m)| m.section.as_deref().map(|a| (a, (si, mi))))
        })
        .collect();
    // csi-addons specs head an RPC's section with its plain name (`### EnableVolumeReplication`),
    // which the model does not take for the RPC's section; the first such heading is.
    for (si, s) in model.services.iter().enumerate() {
        for (mi, m) in s.methods.iter().enumerate() {
            if m.section.is_none()
                && let Some(u) = units.iter().find(|u| u.title.trim_matches('`') == m.name)
            {
                by_anchor.entry(u.anchor.as_str()).or_insert((si, mi));
            }
        }
    }
    let mut chapter = 0;
    let mut i = 0;
    while i < units.len() {
        let unit = &units[i];
        if let Some(&(si, mi)) = by_anchor.get(unit.anchor.as_str()) {
            let name = &model.services[si].methods[mi].name;
            let page = rpc_pages[&(si, mi)];
            pages[page].items.push(Item::Unit(i));
            let mut j = i + 1;
            while j < units.len()
                && (units[j].level > unit.level || first_word(&units[j].title) == name)
            {
                pages[page].items.push(Item::Unit(j));
                j += 1;
            }
            match pages[chapter].items.last_mut() {
                Some(Item::RpcLinks(list)) => list.push((si, mi)),
                _ => pages[chapter].items.push(Item::RpcLinks(vec![(si, mi)])),
            }
            i = j;
            continue;
        }
        if unit.level <= 1 {
            chapter = 0;
        } else if unit.level == 2 {
            let mut path = format!("{}.html", unit.anchor);
            if ["index.html", "status.html", "changes.html", "search-index.html"]
                .contains(&path.as_str())
                || unit.anchor.is_empty()
            {
                path = format!("chapter-{i}.html");
            }
            chapter = pages.len();
            pages.push(PageSpec { path, kind: PageKind::Chapter, items: Vec::new() });
        }
        pages[chapter].items.push(Item::Unit(i));
        i += 1;
    }
    pages
}

/// The prebuilt search index of one edition.
#[derive(Default)]
struct SearchIndex {
    entries: Vec<(String, String, String, String)>,
}

impl SearchIndex {
    fn push(&mut self, kind: &str, title: &str, url: &str, text: &str) {
        // The whole text is indexed (a translation's own words may come late in a section);
        // the results list shows its start.
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.entries.push((kind.to_owned(), title.to_owned(), url.to_owned(), text));
    }

    /// A script that sets `window.CSIKIT_SEARCH`, so the index loads from `file://` too.
    fn to_js(&self, cat: &Catalog) -> String {
        let kinds: BTreeMap<&str, &str> = ["section", "rpc", "message", "enum", "field", "value"]
            .iter()
            .map(|k| {
                (
                    *k,
                    cat.get(match *k {
                        "section" => "kind_section",
                        "rpc" => "kind_rpc",
                        "message" => "kind_message",
                        "enum" => "kind_enum",
                        "field" => "kind_field",
                        _ => "kind_value",
                    }),
                )
            })
            .collect();
        let value = serde_json::json!({ "kinds": kinds, "entries": self.entries });
        format!("window.CSIKIT_SEARCH = {value};\n")
    }
}
