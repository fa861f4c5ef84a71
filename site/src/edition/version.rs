//! One version of a spec (a CSI release or a csi-addons package) and its languages: what every
//! page of its editions shares (the page plan, the link index, where each type is used, the
//! history), read from the models once.
//!
//! Page structure and anchors come from the English markdown of the version; a translation
//! supplies the text of the sections it has, paired by structure (see [`crate::translation`]),
//! and every other section falls back to English with a notice.

use std::collections::{HashMap, HashSet};

use csikit_spec::{Model, NotAvailable, SourceFile, SourceKind};

use super::plan::{Item, PageKind, PageSpec, plan_pages};
use crate::directory::{PageInfo, Part};
use crate::guides::{Scope, guides_of};
use crate::history::{ElementKind, History, Lifecycle, short_version};
use crate::i18n::Catalog;
use crate::input::{GuideText, Translation};
use crate::pages::{Badge, Nav};
use crate::prose::{LinkIndex, ref_page, rpc_page};
use crate::translation::{self, Pairing, Status, Unit, split_units};

/// One language of a version: an edition folder.
pub(crate) struct Lang<'a> {
    pub lang: String,
    pub cat: Catalog,
    /// The edition folder, e.g. `en/v1.12.0`.
    pub dir: String,
    /// Present for translations.
    pub tr: Option<LangSource<'a>>,
    /// Anchors of the document rendered to targets.
    pub(super) anchors: HashMap<String, String>,
}

/// A translation's text: its model, markdown, sections and their pairing with English.
pub(crate) struct LangSource<'a> {
    pub release: String,
    pub(super) model: &'a Model,
    pub(super) src: &'a SourceFile,
    pub(super) file: usize,
    pub(super) units: Vec<Unit>,
    pub(super) pairing: Pairing,
}

impl Lang<'_> {
    /// How far a section is translated; `None` for English.
    pub(super) fn status(&self, unit: usize) -> Option<Status> {
        self.tr.as_ref().map(|t| t.pairing.status[unit])
    }
}

/// One version and its languages.
pub(crate) struct Site<'a> {
    pub model: &'a Model,
    /// The version's name, e.g. `v1.12.0` or `main`.
    pub version: String,
    pub part: Part,
    pub(super) src: &'a SourceFile,
    pub(super) units: Vec<Unit>,
    pub(super) pages: Vec<PageSpec>,
    pub(super) index: LinkIndex,
    pub(super) used_in: HashMap<String, Vec<Use>>,
    pub langs: Vec<Lang<'a>>,
    /// The history of the version's spec and the version's place in it.
    pub(super) history: Option<(&'a History, usize)>,
    /// Types of other packages (`csi.v1` in a csi-addons spec) with their page, relative to
    /// the edition folder.
    pub(super) externs: HashMap<String, String>,
    /// For a csi-addons package: its name and where it comes from.
    pub(super) addon: Option<(String, String)>,
    /// Where the version's prose comes from.
    pub(super) prose: ProseOrigin,
    /// The index in `model.files` of the markdown `src` is (0 when there is none).
    pub(super) prose_file: usize,
    /// For a carried edition whose origin the site renders: its RPCs the release it carries from
    /// also declares, but whose prose is not carried (they changed since; the others not carried
    /// are new). `None` when that release is not known here.
    pub(super) changed_rpcs: Option<HashSet<String>>,
    /// Guides written outside the spec ([`crate::guides`] renders them in English editions).
    pub(super) texts: &'a [GuideText],
}

/// Where the prose of a version's editions comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProseOrigin {
    /// The version's own spec markdown.
    Own,
    /// The markdown of the older release named here: the version was read from its proto alone
    /// and its loader carried that release's prose facts (`csikit_spec::carry`). Every page that
    /// shows that text says so.
    Carried(String),
    /// None: the version was read from its proto alone and nothing was carried into it; its
    /// pages come from the proto's comments and say so.
    None,
}

impl ProseOrigin {
    /// The release the prose is carried from, if it is.
    pub(super) fn carried_from(&self) -> Option<&str> {
        match self {
            ProseOrigin::Carried(from) => Some(from),
            ProseOrigin::Own | ProseOrigin::None => None,
        }
    }
}

/// Where a type is used: a field of a message, an RPC's request or response.
pub(super) enum Use {
    Field(String, String),
    Request(String),
    Response(String),
}

/// Where `model`'s prose comes from: its own markdown (a spec folder), an older release's whose
/// sections its loader carried in, or none (its proto alone).
pub(super) fn prose_origin(model: &Model) -> ProseOrigin {
    match (model.source.kind, &model.source.carried) {
        (SourceKind::Spec, _) => ProseOrigin::Own,
        (_, Some(c)) if c.parts.contains(&NotAvailable::Sections) => {
            ProseOrigin::Carried(c.from.clone())
        }
        _ => ProseOrigin::None,
    }
}

/// The markdown a model's pages are made from, with its index in `model.files`: its first file,
/// or its last for a translation; for a model read from its proto alone, the markdown carried
/// into it, if any (never for a translation).
fn prose_file(model: &Model, translated: bool) -> Option<(usize, &SourceFile)> {
    let idx = match prose_origin(model) {
        ProseOrigin::None => return None,
        ProseOrigin::Carried(_) if translated => return None,
        ProseOrigin::Carried(_) => model.source.carried.as_ref()?.markdown,
        ProseOrigin::Own if translated => model.files.len().checked_sub(1).filter(|i| *i >= 2)?,
        ProseOrigin::Own => 0,
    };
    model.files.get(idx).map(|f| (idx, f))
}

pub(super) fn relative_name<'m>(model: &Model, full: &'m str) -> &'m str {
    full.strip_prefix(model.package.as_str()).and_then(|r| r.strip_prefix('.')).unwrap_or(full)
}

/// What a version's site is made of, besides its model.
pub(crate) struct SiteSource<'a> {
    pub version: String,
    pub part: Part,
    /// Render the English edition (false for a translation whose release is not rendered in
    /// English).
    pub english: bool,
    pub translations: Vec<&'a Translation>,
    pub history: Option<(&'a History, usize)>,
    pub externs: HashMap<String, String>,
    pub addon: Option<(String, String)>,
    /// The model of the release the version's prose is carried from, when the site renders it:
    /// its RPCs whose prose is not carried (changed or removed since) keep their sections off
    /// this version's pages.
    pub origin: Option<&'a Model>,
    /// Guides written outside the spec, for the English edition.
    pub guides: &'a [GuideText],
}

/// The RPCs of a carried version whose sections in the carried markdown are not shown: every
/// RPC of the release carried from whose facts were not carried (changed or removed since),
/// and the version's own new ones. Empty for any other version.
fn withheld_rpcs(model: &Model, origin: Option<&Model>) -> HashSet<String> {
    if prose_origin(model).carried_from().is_none() {
        return HashSet::new();
    }
    let carried = |name: &str| model.method(name).is_some_and(|(_, m)| m.carried_from.is_some());
    let methods = |m: &Model| {
        m.services.iter().flat_map(|s| &s.methods).map(|x| x.name.clone()).collect::<Vec<_>>()
    };
    let mut out: HashSet<String> = methods(model).into_iter().filter(|n| !carried(n)).collect();
    if let Some(origin) = origin {
        out.extend(methods(origin).into_iter().filter(|n| !carried(n)));
    }
    out
}

/// The edition folder of a language and version.
fn edition_dir(part: &Part, lang: &str, version: &str) -> String {
    match part {
        Part::Csi => format!("{lang}/{version}"),
        Part::Addon(name) => format!("addons/{name}"),
    }
}

impl<'a> Site<'a> {
    pub(crate) fn new(model: &'a Model, source: SiteSource<'a>) -> Site<'a> {
        static EMPTY: std::sync::OnceLock<SourceFile> = std::sync::OnceLock::new();
        let (prose_file_index, src) = prose_file(model, false).unwrap_or_else(|| {
            (0, EMPTY.get_or_init(|| SourceFile::new("empty.md", String::new())))
        });
        let units = split_units(src);
        let withheld = withheld_rpcs(model, source.origin);
        let pages = plan_pages(model, &units, &withheld);
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
            prose: prose_origin(model),
            prose_file: prose_file_index,
            changed_rpcs: source.origin.map(|origin| {
                withheld
                    .into_iter()
                    .filter(|n| model.method(n).is_some() && origin.method(n).is_some())
                    .collect()
            }),
            texts: source.guides,
        }
    }

    /// Every page of an edition of this version, relative to its folder, with what it shows.
    pub(crate) fn page_infos(&self, lang: &Lang<'_>) -> Vec<(String, PageInfo)> {
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
        for guide in guides_of(&self.guide_scope(lang)) {
            out.push((guide.path.to_owned(), info(&(guide.title)(&self.guide_scope(lang)), None)));
        }
        out.push(("changes.html".to_owned(), info(lang.cat.get("nav_changes_label"), None)));
        if lang.tr.is_some() {
            out.push(("status.html".to_owned(), info(lang.cat.get("status_title"), None)));
        }
        out
    }

    /// The version's position in its history.
    pub(crate) fn at(&self) -> Option<usize> {
        self.history.map(|(_, at)| at)
    }

    /// The key of an RPC in the history: `Service.Method`.
    pub(super) fn rpc_key(&self, s: usize, m: usize) -> String {
        let service = &self.model.services[s];
        format!("{}.{}", relative_name(self.model, &service.full_name), service.methods[m].name)
    }

    /// The lifecycle badges of an element: since, alpha until, deprecated in, removed in.
    pub(super) fn lifecycle_badges(
        &self,
        cat: &Catalog,
        kind: ElementKind,
        key: &str,
    ) -> Vec<Badge> {
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

    /// The title of a section in a language.
    pub(super) fn unit_title(&self, lang: &Lang<'_>, u: usize) -> String {
        match &lang.tr {
            Some(tr) if tr.pairing.status[u] != Status::Missing => match tr.pairing.pair[u] {
                Some(t) => tr.units[t].title.clone(),
                None => self.units[u].title.clone(),
            },
            _ => self.units[u].title.clone(),
        }
    }

    /// Where a guide would appear: this version in `lang`.
    pub(super) fn guide_scope<'s>(&'s self, lang: &'s Lang<'_>) -> Scope<'s> {
        Scope {
            model: self.model,
            version: &self.version,
            lang: &lang.lang,
            cat: &lang.cat,
            csi: self.part == Part::Csi,
            report: self.history.and_then(|(h, at)| h.report(at)),
            carried_from: self.prose.carried_from(),
            texts: self.texts,
        }
    }

    pub(super) fn nav(&self, lang: &Lang<'_>) -> Nav {
        let mut nav = Nav::default();
        let scope = self.guide_scope(lang);
        for guide in guides_of(&scope) {
            nav.guides.push(((guide.title)(&scope), guide.path.to_owned()));
        }
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

    /// Where a full name of this version's model has its entry, relative to the edition folder.
    pub(super) fn entry_of(&self, full: &str) -> Option<String> {
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
