//! The documentation site: [`load_corpus`] reads the [`Model`]s of every release (and their
//! translations and the csi-addons packages) from a corpus folder, and [`generate_site`], a pure
//! function, renders them into a map of file path to HTML, CSS, JS and search indexes, which
//! `cargo xtask docs` writes.
//!
//! The URL scheme: `LANG/RELEASE/` is one edition (`en/v1.11.0/rpc/CreateVolume.html`), one per
//! English release and one per translation at the release it translates (`ja/v1.7.0/`,
//! `zh/v1.6.0/`); `addons/NAME/` is a csi-addons package. Each edition holds its contents page,
//! chapters, `rpc/NAME.html`, `ref/FULL_NAME.html`, `changes.html` (the diff from the version
//! before), `search-index.js`, and for a translation `status.html`. The layout before releases
//! (`en/rpc/CreateVolume.html`, `ja/...`) is kept as redirect pages to the newest edition of the
//! language, anchor included. `index.html` at the root lists every edition.
//!
//! Modules: `input` and `load` (the releases, translations and packages a site is made of, read
//! through csikit-spec's corpus listing), `edition` (one edition's pages), `pages` (the
//! askama templates and the data they show), `prose` (markdown to HTML), `translation` (pairing a translation's
//! sections with the English), `history` and `changes` (badges and changes pages from the diff
//! engine), `guides` (pages written from the Model and data tables, such as "Upgrading to",
//! from `csikit_spec::upgrade`'s table of what replaces what), `directory` (every
//! edition's pages, for the switchers) and `i18n` (the interface catalogs).
//!
//! A release read from its `.proto` alone whose loader carried an older release's prose
//! (`csikit_spec::carry`) shows that prose and its error tables, each page that does with a
//! banner naming the release the text comes from; RPCs whose schema changed or is new show
//! their proto comments only.

mod changes;
mod directory;
mod edition;
mod guides;
mod history;
mod i18n;
mod input;
mod load;
mod pages;
mod prose;
mod translation;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use csikit_spec::Model;

pub use history::{ElementKind, History, Lifecycle, Presence, short_version};
pub use i18n::Catalog;
pub use input::{Addon, GuideText, Release, SiteOptions, Translation};
pub use load::{FIRST_RELEASE, LoadError, load_corpus, load_guides};
pub use translation::{Status, is_cjk, prose_status};

use directory::{Directory, Edition, PageIdentity, Part};
use edition::{Site, SiteSource};
use pages::{RedirectPage, RootAddon, RootPage, RootRelease, RootTranslation, render};
use prose::ref_page;

/// The stylesheet of the site.
const SITE_CSS: &str = include_str!("../templates/docs/assets/site.css");
/// The script of the site: language and release switchers, notices and search.
const SITE_JS: &str = include_str!("../templates/docs/assets/site.js");

/// The `csi.v1` (or other imported) types an addon names, with their page in the newest
/// English CSI edition, relative to the addon's edition folder.
fn extern_pages(addon: &Model, csi: Option<&Release>) -> HashMap<String, String> {
    let Some(csi) = csi else { return HashMap::new() };
    let local = |full: &str| addon.message(full).is_some() || addon.enum_type(full).is_some();
    addon
        .messages
        .iter()
        .flat_map(|m| &m.fields)
        .filter_map(|f| f.ty.full_name())
        .filter(|full| !local(full))
        .filter(|full| csi.model.message(full).is_some() || csi.model.enum_type(full).is_some())
        .map(|full| (full.to_owned(), format!("../../en/{}/{}", csi.name, ref_page(full))))
        .collect()
}

/// Renders the site: `index.html`, `assets/`, one edition folder per English release
/// (`releases`, oldest first; the last is the default), per translation and per csi-addons
/// package, and redirect pages for the layout before releases.
pub fn generate_site(releases: &[Release], options: &SiteOptions) -> BTreeMap<PathBuf, String> {
    let csi_history =
        History::new(&releases.iter().map(|r| (r.name.as_str(), &r.model)).collect::<Vec<_>>());
    let addon_histories: Vec<History> = options
        .addons
        .iter()
        .map(|a| {
            let mut versions: Vec<(&str, &Model)> =
                a.earlier.iter().map(|r| (r.name.as_str(), &r.model)).collect();
            versions.push((&a.version, &a.model));
            History::new(&versions)
        })
        .collect();

    let mut sites = Vec::new();
    for (i, r) in releases.iter().enumerate() {
        sites.push(Site::new(
            &r.model,
            SiteSource {
                version: r.name.clone(),
                part: Part::Csi,
                english: true,
                translations: options.translations.iter().filter(|t| t.release == r.name).collect(),
                history: Some((&csi_history, i)),
                externs: HashMap::new(),
                addon: None,
                origin: r
                    .model
                    .source
                    .carried
                    .as_ref()
                    .and_then(|c| releases.iter().find(|o| o.name == c.from))
                    .map(|o| &o.model),
                guides: &options.guides,
            },
        ));
    }
    for t in &options.translations {
        if releases.iter().all(|r| r.name != t.release) {
            // A translation of a release not rendered in English stands on its own model.
            sites.push(Site::new(
                &t.model,
                SiteSource {
                    version: t.release.clone(),
                    part: Part::Csi,
                    english: false,
                    translations: vec![t],
                    history: None,
                    externs: HashMap::new(),
                    addon: None,
                    origin: None,
                    guides: &[],
                },
            ));
        }
    }
    for (a, h) in options.addons.iter().zip(&addon_histories) {
        sites.push(Site::new(
            &a.model,
            SiteSource {
                version: a.version.clone(),
                part: Part::Addon(a.name.clone()),
                english: true,
                translations: Vec::new(),
                history: Some((h, h.versions().len().saturating_sub(1))),
                externs: extern_pages(&a.model, releases.last()),
                addon: Some((a.name.clone(), a.source.clone())),
                origin: None,
                guides: &[],
            },
        ));
    }

    let mut dir = Directory {
        editions: Vec::new(),
        csi: &csi_history,
        addons: options.addons.iter().map(|a| a.name.clone()).zip(&addon_histories).collect(),
        lang_order: options.translations.iter().map(|t| t.lang.clone()).collect(),
    };
    for site in &sites {
        for lang in &site.langs {
            dir.editions.push(Edition {
                dir: lang.dir.clone(),
                lang: lang.lang.clone(),
                version: site.version.clone(),
                part: site.part.clone(),
                at: site.at(),
                pages: site.page_infos(lang).into_iter().collect(),
                model: site.model,
            });
        }
    }

    let mut out = BTreeMap::new();
    out.insert(PathBuf::from("assets/site.css"), SITE_CSS.to_owned());
    out.insert(PathBuf::from("assets/site.js"), SITE_JS.to_owned());
    out.insert(PathBuf::from("index.html"), render(&root_page(&dir, options)));
    render_editions(&sites, &dir, &mut out);
    redirects(&dir, &mut out);
    out
}

/// Renders every edition, the sites shared out over the machine's cores.
fn render_editions(sites: &[Site<'_>], dir: &Directory<'_>, out: &mut BTreeMap<PathBuf, String>) {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    if workers == 1 || sites.len() < 2 {
        for site in sites {
            for lang in &site.langs {
                site.render_lang(lang, dir, out);
            }
        }
        return;
    }
    let parts: Vec<BTreeMap<PathBuf, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    let mut part = BTreeMap::new();
                    for site in sites.iter().skip(w).step_by(workers) {
                        for lang in &site.langs {
                            site.render_lang(lang, dir, &mut part);
                        }
                    }
                    part
                })
            })
            .collect();
        // A worker only renders templates into strings; if one panicked, that is a bug to surface.
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    for part in parts {
        out.extend(part);
    }
}

/// The site's front door: every release, translation and csi-addons package.
fn root_page(dir: &Directory<'_>, options: &SiteOptions) -> RootPage {
    let mut releases: Vec<&Edition<'_>> =
        dir.editions.iter().filter(|e| e.part == Part::Csi && e.lang == "en").collect();
    releases.sort_by_key(|e| std::cmp::Reverse(e.at));
    let latest = dir.latest().map(|i| dir.editions[i].dir.clone());
    let translations = dir
        .langs(&Part::Csi)
        .into_iter()
        .filter(|l| *l != "en")
        .flat_map(|l| dir.editions.iter().filter(move |e| e.part == Part::Csi && e.lang == l))
        .map(|e| {
            let cat = Catalog::for_lang(&e.lang);
            RootTranslation {
                lang: e.lang.clone(),
                name: cat.get("lang_name").to_owned(),
                title: cat.get("site_title").to_owned(),
                release: e.version.clone(),
                dir: e.dir.clone(),
            }
        })
        .collect();
    let addons = options
        .addons
        .iter()
        .map(|a| RootAddon {
            name: a.name.clone(),
            version: a.version.clone(),
            source: a.source.clone(),
            dir: format!("addons/{}", a.name),
            changes: !a.earlier.is_empty(),
        })
        .collect();
    RootPage {
        latest: latest.clone().unwrap_or_default(),
        releases: releases
            .iter()
            .map(|e| RootRelease {
                name: e.version.clone(),
                dir: e.dir.clone(),
                latest: latest.as_deref() == Some(e.dir.as_str()),
                first: e.at == Some(0),
            })
            .collect(),
        translations,
        addons,
    }
}

/// Redirect pages for the layout before releases: `LANG/PAGE` goes to the newest edition of
/// the language (anchor kept), or to its contents page with a notice when that edition lacks
/// the page; `en/ref/` also answers for csi-addons types (links such as csi-view's name
/// `en/ref/FULL_NAME.html` whatever the package).
fn redirects(dir: &Directory<'_>, out: &mut BTreeMap<PathBuf, String>) {
    let Some(latest) = dir.latest() else { return };
    let mut old_pages: Vec<(&String, _)> = dir.editions[latest].pages.iter().collect();
    old_pages.sort_by(|a, b| a.0.cmp(b.0));
    for lang in dir.langs(&Part::Csi) {
        let Some(target) = dir.newest(&Part::Csi, lang) else { continue };
        for (page, info) in &old_pages {
            let identity = PageIdentity { page, label: &info.label, element: info.element.clone() };
            let up = "../".repeat(page.matches('/').count());
            // From LANG/PAGE the site root is one folder further up than from LANG/RELEASE/PAGE.
            let (href, missing) = dir.link(target, &identity, &format!("{up}../"));
            put_redirect(out, &format!("{lang}/{page}"), &href, !missing);
        }
        let status = if dir.editions[target].pages.contains_key("status.html") {
            format!("{}/status.html", dir.editions[target].version)
        } else {
            "../index.html".to_owned()
        };
        put_redirect(out, &format!("{lang}/status.html"), &status, false);
    }
    let addon_pages: Vec<(String, String)> = dir
        .editions
        .iter()
        .filter(|e| matches!(e.part, Part::Addon(_)))
        .flat_map(|e| {
            e.pages
                .keys()
                .filter(|p| p.starts_with("ref/"))
                .map(|p| (p.clone(), format!("{}/{p}", e.dir)))
        })
        .collect();
    for (page, target) in addon_pages {
        let path = format!("en/{page}");
        if !out.contains_key(&PathBuf::from(&path)) {
            put_redirect(out, &path, &format!("../../{target}"), true);
        }
    }
}

fn put_redirect(out: &mut BTreeMap<PathBuf, String>, path: &str, target: &str, keep_hash: bool) {
    out.insert(
        PathBuf::from(path),
        render(&RedirectPage {
            target: target.to_owned(),
            // A JSON string is a JavaScript string literal; `</` is split so that no `</script>`
            // can end the script.
            target_js: serde_json::Value::from(target).to_string().replace("</", "<\\/"),
            keep_hash,
        }),
    );
}
