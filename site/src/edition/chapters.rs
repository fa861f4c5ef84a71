//! The pages made from the spec's prose: the contents page, one page per chapter and one per
//! RPC (its sections, request and response tables and error table).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::ops::Range;

use super::errors::{place, table_at};
use super::plan::{Item, PageKind, PageSpec};
use super::search::{ErrorEntry, SearchIndex};
use super::version::{Lang, ProseOrigin, Site, relative_name};
use crate::directory::{Directory, PageIdentity};
use crate::history::{ElementKind, short_version};
use crate::pages::{Badge, Contents, Nav, Notice, ProsePage, RpcPage, render};
use crate::prose::{HeadingOut, Prose, Rendered, escape, href, ref_page, rpc_page};
use crate::translation::Status;

impl Site<'_> {
    /// Renders one section in a language: the translation when it has the section, else English.
    /// The rows of the error tables it shows go to `table_rows`, for the search index.
    pub(super) fn render_unit(
        &self,
        lang: &Lang<'_>,
        u: usize,
        prose: &Prose<'_>,
        shift: u8,
        first: bool,
        table_rows: &RefCell<Vec<ErrorEntry>>,
    ) -> (String, Rendered) {
        let status = lang.status(u);
        let unit = &self.units[u];
        let translated = match (&lang.tr, status) {
            (Some(tr), Some(s)) if s != Status::Missing => tr.pairing.pair[u].map(|t| (tr, t)),
            _ => None,
        };
        let (src, range, model, file) = match translated {
            Some((tr, t)) => (tr.src, tr.units[t].range.clone(), tr.model, tr.file),
            None => (self.src, unit.range.clone(), self.model, self.prose_file),
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
        let tables = |r: Range<usize>| -> Option<(String, usize)> {
            let (rows, end) = table_at(model, file, src.text(), r);
            if rows.is_empty() {
                return None;
            }
            let (html, entries) = self.error_table(lang, &rows, prose);
            table_rows.borrow_mut().extend(entries);
            Some((html, end))
        };
        let rendered =
            prose.render(&src.text()[range.clone()], range.start, Some(&heading), &tables);
        let class = match (status, self.prose.carried_from()) {
            (Some(s), _) => s.class(),
            (None, Some(_)) => "carried",
            (None, None) => "source",
        };
        let lang_attr = if translated.is_none() && lang.tr.is_some() { " lang=\"en\"" } else { "" };
        let carried_attr = self
            .prose
            .carried_from()
            .map_or(String::new(), |from| format!(" data-carried-from=\"{}\"", escape(from)));
        let html = format!(
            "<section class=\"unit unit-{class}\"{lang_attr}{carried_attr}>\n{}</section>\n",
            rendered.html
        );
        (html, rendered)
    }

    pub(super) fn render_page(
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
        // The rows of the error tables the sections show; an RPC page whose sections show none
        // gets its RPC's table after the reference tables.
        let table_rows = RefCell::new(Vec::new());
        let mut body = String::new();
        let mut fallback = false;
        for (i, item) in page.items.iter().enumerate() {
            match item {
                Item::Unit(u) => {
                    let (html, rendered) =
                        self.render_unit(lang, *u, &prose, shift, i == 0, &table_rows);
                    fallback |= lang.status(*u) == Some(Status::Missing);
                    body.push_str(&html);
                    search.push_section(
                        &rendered.title,
                        &format!("{}#{}", page.path, self.units[*u].anchor),
                        &rendered.text,
                        self.prose.carried_from(),
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
            l.notices.push(Notice::plain(
                "fallback",
                lang.cat.fill("notice_fallback_page", &[("current", &self.version)]),
            ));
        }
        // Text carried from an older release: the page says so first. A carried error table
        // shown without its section counts too.
        let shows_units = page.items.iter().any(|i| matches!(i, Item::Unit(_)));
        let carried_table = match page.kind {
            PageKind::Rpc(s, m) => self.model.services[s].methods[m].carried_from.is_some(),
            _ => false,
        };
        if shows_units || carried_table {
            l.notices.extend(self.carried_notice(lang));
        }
        let html = match page.kind {
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
                if self.prose != ProseOrigin::Own && !shows_units {
                    // No prose: the RPC's own comment in the proto is its description.
                    l.notices.extend(self.not_carried_notice(lang, method));
                    let _ = write!(
                        body,
                        "<section class=\"unit unit-proto\">\n<h1 id=\"{}\">{}</h1>\n{}</section>\n",
                        escape(&method.name.to_lowercase()),
                        escape(&method.name),
                        prose.render(&method.comment, 0, None, &|_| None).html
                    );
                }
                let sections_show_table = !table_rows.borrow().is_empty();
                let errors = (!sections_show_table).then(|| {
                    if self.prose == ProseOrigin::None {
                        return format!("<p>{}</p>", escape(lang.cat.get("errors_not_in_corpus")));
                    }
                    if let Some(from) =
                        self.prose.carried_from().filter(|_| method.carried_from.is_none())
                    {
                        let why = lang
                            .cat
                            .fill("errors_not_carried", &[("from", from), ("release", &self.version)]);
                        return format!("<p>{}</p>", escape(&why));
                    }
                    let own = lang
                        .tr
                        .as_ref()
                        .filter(|_| page.items.iter().any(|i| matches!(i, Item::Unit(u) if lang.status(*u) != Some(Status::Missing))))
                        .and_then(|t| t.model.method(&method.name))
                        .map(|(_, m)| m);
                    let rows = place(Some(&method.name), &own.unwrap_or(method).errors);
                    if rows.is_empty() {
                        format!("<p>{}</p>", escape(lang.cat.get("no_errors")))
                    } else {
                        let (html, entries) = self.error_table(lang, &rows, &prose);
                        table_rows.borrow_mut().extend(entries);
                        html
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
        };
        // Every row shown is a search result of its own, after the page's sections and RPC.
        for entry in table_rows.into_inner() {
            search.push_error(entry);
        }
        html
    }

    /// On the page of an RPC whose prose a carried edition does not show: why (new in this
    /// release, or changed since the release the rest is carried from), as a named region.
    /// `None` in any other edition.
    fn not_carried_notice(&self, lang: &Lang<'_>, method: &csikit_spec::Method) -> Option<Notice> {
        let from = self.prose.carried_from()?;
        let key = match &self.changed_rpcs {
            Some(changed) if changed.contains(&method.name) => "notice_rpc_changed",
            Some(_) => "notice_rpc_new",
            None => "notice_rpc_not_carried",
        };
        Some(Notice {
            kind: "not-carried",
            text: lang.cat.fill(key, &[("from", from), ("release", &self.version)]),
            region: Some(lang.cat.get("notice_not_carried_label").to_owned()),
        })
    }

    /// The line at the top of the contents page: this version, what changed, every version.
    pub(super) fn release_line(&self, lang: &Lang<'_>, dir: &Directory<'_>) -> String {
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
    pub(super) fn rpc_context(
        &self,
        method: &csikit_spec::Method,
    ) -> (Vec<(String, String)>, Vec<String>) {
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

    pub(super) fn contents(&self, lang: &Lang<'_>, page: &str) -> Contents {
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
            guides: nav.guides.iter().map(|(t, p)| (t.clone(), href(page, p))).collect(),
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
}
