//! Renders the multilingual documentation site from the [`Model`]: pure functions from the
//! model (and its translations) to a map of file path to HTML, CSS, JS and search index.
//!
//! Page structure and anchors come from the English release shown; a translation supplies
//! the text of the sections it has, paired by structure (see [`translation`]), and every
//! other section falls back to English with a notice.

mod i18n;
mod pages;
mod prose;
mod translation;

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Range;
use std::path::PathBuf;

use askama::Template;
use csikit_spec::{ErrorRow, FieldType, Label, Model, Presence, SizeLimit, SourceFile};

pub use i18n::Catalog;
pub use translation::{Status, is_cjk, prose_status};

use pages::{
    Badge, Contents, ErrorRowHtml, ErrorTable, FieldRow, FieldTable, LangLink, Layout, Nav,
    ProsePage, RootPage, RpcPage, StatusPage, StatusRow, TypePage, UseLink,
};
use prose::{HeadingOut, LinkIndex, Prose, Rendered, escape, href, ref_page, rpc_page};
use translation::{Pairing, Unit, split_units};

/// The stylesheet of the site.
const SITE_CSS: &str = include_str!("../templates/docs/assets/site.css");
/// The script of the site: language switcher and search.
const SITE_JS: &str = include_str!("../templates/docs/assets/site.js");

/// A translation of the spec to render beside the English site.
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

/// What to render besides the English model.
#[derive(Debug, Clone, Default)]
pub struct SiteOptions {
    /// The release the English model is, e.g. `v1.12.0`.
    pub release: String,
    /// Translations, in the order their languages are listed.
    pub translations: Vec<Translation>,
}

/// Renders the site: `index.html`, `assets/`, and per language `LANG/index.html`, one page
/// per chapter, `LANG/rpc/NAME.html`, `LANG/ref/FULL_NAME.html`, `LANG/status.html` and
/// `LANG/search-index.js`.
pub fn generate_site(model: &Model, options: &SiteOptions) -> BTreeMap<PathBuf, String> {
    let site = Site::new(model, options);
    let mut out = BTreeMap::new();
    out.insert(PathBuf::from("assets/site.css"), SITE_CSS.to_owned());
    out.insert(PathBuf::from("assets/site.js"), SITE_JS.to_owned());
    let root = RootPage {
        langs: site
            .langs
            .iter()
            .map(|l| {
                (
                    l.lang.clone(),
                    l.cat.get("lang_name").to_owned(),
                    l.cat.get("site_title").to_owned(),
                )
            })
            .collect(),
        release: options.release.clone(),
    };
    out.insert(PathBuf::from("index.html"), render(&root));
    for lang in &site.langs {
        site.render_lang(lang, &mut out);
    }
    out
}

fn render<T: Template>(t: &T) -> String {
    // Templates write into a String; the only failure is a template's own Display error, which ours never return.
    t.render().unwrap_or_else(|e| format!("<!-- template error: {} -->", escape(&e.to_string())))
}

/// A page of the site, the same in every language.
struct PageSpec {
    /// Path relative to the language folder.
    path: String,
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

/// One language of the site.
struct Lang<'a> {
    lang: String,
    cat: Catalog,
    /// Present for translations.
    tr: Option<LangSource<'a>>,
    /// Anchors of the document rendered to targets.
    anchors: HashMap<String, String>,
}

struct LangSource<'a> {
    release: String,
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

/// Everything shared by the languages.
struct Site<'a> {
    model: &'a Model,
    release: String,
    src: &'a SourceFile,
    units: Vec<Unit>,
    pages: Vec<PageSpec>,
    index: LinkIndex,
    used_in: HashMap<String, Vec<Use>>,
    langs: Vec<Lang<'a>>,
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

impl<'a> Site<'a> {
    fn new(model: &'a Model, options: &'a SiteOptions) -> Site<'a> {
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
        let mut langs = vec![Lang {
            lang: "en".to_owned(),
            cat: Catalog::for_lang("en"),
            tr: None,
            anchors: anchors.clone(),
        }];
        for t in &options.translations {
            let Some((file, tr_src)) = prose_file(&t.model, true) else { continue };
            let Some(source) = t.model.files.first() else { continue };
            let tr_units = split_units(tr_src);
            let pairing = translation::pair(src, &units, source, tr_src, &tr_units);
            let mut lang_anchors = anchors.clone();
            for (from, to) in &pairing.anchors {
                if let Some(target) = anchors.get(to) {
                    lang_anchors.entry(from.clone()).or_insert_with(|| target.clone());
                }
            }
            langs.push(Lang {
                lang: t.lang.clone(),
                cat: Catalog::for_lang(&t.lang),
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
            release: options.release.clone(),
            src,
            units,
            pages,
            index: LinkIndex::new(model),
            used_in,
            langs,
        }
    }

    fn layout<'l>(
        &'l self,
        lang: &'l Lang<'_>,
        page: &str,
        title: String,
        nav: &'l Nav,
    ) -> Layout<'l> {
        let depth = page.matches('/').count();
        let up = "../".repeat(depth);
        let root_up = "../".repeat(depth + 1);
        let langs = self
            .langs
            .iter()
            .map(|other| LangLink {
                code: other.lang.clone(),
                name: other.cat.get("lang_name").to_owned(),
                href: format!("{root_up}{}/{page}", other.lang),
                current: other.lang == lang.lang,
            })
            .collect();
        let mut notices = Vec::new();
        if let Some(tr) = &lang.tr {
            notices.push((
                "source".to_owned(),
                lang.cat
                    .fill("notice_source", &[("release", &tr.release), ("current", &self.release)]),
            ));
        }
        Layout {
            lang: &lang.lang,
            cat: &lang.cat,
            title,
            page: page.to_owned(),
            up,
            root_up,
            release: &self.release,
            langs,
            nav,
            notices,
            footer: lang.cat.fill("footer", &[("current", &self.release)]),
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

    fn render_lang(&self, lang: &Lang<'_>, out: &mut BTreeMap<PathBuf, String>) {
        let nav = self.nav(lang);
        let mut search = SearchIndex::default();
        for page in &self.pages {
            let html = self.render_page(lang, page, &nav, &mut search);
            out.insert(PathBuf::from(format!("{}/{}", lang.lang, page.path)), html);
        }
        for m in &self.model.messages {
            let path = ref_page(&m.full_name);
            out.insert(
                PathBuf::from(format!("{}/{path}", lang.lang)),
                self.render_message(lang, m, &path, &nav, &mut search),
            );
        }
        for e in &self.model.enums {
            let path = ref_page(&e.full_name);
            out.insert(
                PathBuf::from(format!("{}/{path}", lang.lang)),
                self.render_enum(lang, e, &path, &nav, &mut search),
            );
        }
        out.insert(
            PathBuf::from(format!("{}/status.html", lang.lang)),
            self.render_status(lang, &nav),
        );
        out.insert(
            PathBuf::from(format!("{}/search-index.js", lang.lang)),
            search.to_js(&lang.cat),
        );
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
                        &lang.cat.fill("notice_fallback_section", &[("current", &self.release)])
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
                        &[("release", tr_release), ("current", &self.release)]
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
        let mut l = self.layout(lang, &page.path, title, nav);
        if fallback {
            l.notices.push((
                "fallback".to_owned(),
                lang.cat.fill("notice_fallback_page", &[("current", &self.release)]),
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
                    badges.push(Badge {
                        class: "alpha",
                        text: lang.cat.get("badge_alpha").to_owned(),
                    });
                }
                if method.client_streaming {
                    badges.push(Badge {
                        class: "stream",
                        text: lang.cat.get("badge_client_streaming").to_owned(),
                    });
                }
                if method.server_streaming {
                    badges.push(Badge {
                        class: "stream",
                        text: lang.cat.get("badge_server_streaming").to_owned(),
                    });
                }
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
                render(&ProsePage { l, body, contents: Some(contents) })
            }
            PageKind::Chapter => render(&ProsePage { l, body, contents: None }),
        }
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
            } else {
                format!("<code>{}</code>", escape(full))
            }
        };
        match ty {
            FieldType::Map { key, value } if self.index.is_type(value.value_name()) => {
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
        let rows: Vec<FieldRow> = msg
            .fields
            .iter()
            .map(|f| {
                let mut badges = Vec::new();
                match f.presence {
                    Presence::Required => badges.push(Badge {
                        class: "required",
                        text: cat.get("badge_required").to_owned(),
                    }),
                    Presence::Optional => badges.push(Badge {
                        class: "optional",
                        text: cat.get("badge_optional").to_owned(),
                    }),
                    Presence::Unspecified => {}
                }
                if f.secret {
                    badges
                        .push(Badge { class: "secret", text: cat.get("badge_secret").to_owned() });
                }
                if f.alpha {
                    badges.push(Badge { class: "alpha", text: cat.get("badge_alpha").to_owned() });
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
                    badges.push(Badge {
                        class: "size",
                        text: cat.fill(key, &[("n", &bytes_text(bytes))]),
                    });
                }
                if f.non_negative {
                    badges.push(Badge {
                        class: "size",
                        text: cat.get("badge_non_negative").to_owned(),
                    });
                }
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
        search.push("message", relative_name(self.model, &msg.full_name), path, &msg.comment);
        for f in &msg.fields {
            search.push(
                "field",
                &format!("{}.{}", relative_name(self.model, &msg.full_name), f.name),
                &format!("{path}#{}", f.name),
                &f.comment,
            );
        }
        let mut badges = Vec::new();
        if msg.alpha {
            badges.push(Badge { class: "alpha", text: lang.cat.get("badge_alpha").to_owned() });
        }
        let oneofs = msg
            .oneofs
            .iter()
            .map(|o| {
                (
                    o.name.clone(),
                    o.required.then(|| Badge {
                        class: "required",
                        text: lang.cat.get("badge_oneof_required").to_owned(),
                    }),
                )
            })
            .collect();
        let l = self.layout(lang, path, relative_name(self.model, &msg.full_name).to_owned(), nav);
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
        search.push("enum", relative_name(self.model, &e.full_name), path, &e.comment);
        let rows: Vec<FieldRow> = e
            .values
            .iter()
            .map(|v| {
                search.push(
                    "value",
                    &format!("{}.{}", relative_name(self.model, &e.full_name), v.name),
                    &format!("{path}#{}", v.name),
                    &v.comment,
                );
                FieldRow {
                    id: v.name.clone(),
                    number: v.number.to_string(),
                    name: v.name.clone(),
                    type_html: String::new(),
                    label: String::new(),
                    badges: if v.alpha {
                        vec![Badge { class: "alpha", text: lang.cat.get("badge_alpha").to_owned() }]
                    } else {
                        Vec::new()
                    },
                    comment_html: prose.inline(&v.comment),
                }
            })
            .collect();
        let mut badges = Vec::new();
        if e.alpha {
            badges.push(Badge { class: "alpha", text: lang.cat.get("badge_alpha").to_owned() });
        }
        let l = self.layout(lang, path, relative_name(self.model, &e.full_name).to_owned(), nav);
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
        Contents {
            chapters: nav.chapters.iter().map(|(t, p)| (t.clone(), href(page, p))).collect(),
            services: self
                .model
                .services
                .iter()
                .map(|s| {
                    let rpcs = s
                        .methods
                        .iter()
                        .map(|m| {
                            let badges = if m.alpha {
                                vec![Badge {
                                    class: "alpha",
                                    text: lang.cat.get("badge_alpha").to_owned(),
                                }]
                            } else {
                                Vec::new()
                            };
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

    fn render_status(&self, lang: &Lang<'_>, nav: &Nav) -> String {
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
        let l = self.layout(lang, path, lang.cat.get("status_title").to_owned(), nav);
        render(&StatusPage {
            intro: lang.cat.fill("status_intro", &[("current", &self.release)]),
            columns,
            summary,
            rows,
            l,
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

/// Decides which page every section of the release goes to: the title section to the
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
    let by_anchor: HashMap<&str, (usize, usize)> = model
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
            if ["index.html", "status.html", "search-index.html"].contains(&path.as_str())
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

/// The prebuilt search index of one language.
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
