//! Which page of an edition every section of the spec's markdown goes to: the contents page,
//! one page per level-2 chapter, one page per RPC; and, in an edition whose markdown is carried
//! from an older release, which RPC sections stay off every page.

use std::collections::{HashMap, HashSet};

use csikit_spec::Model;

use crate::prose::rpc_page;
use crate::translation::Unit;

/// A page of an edition, the same in every language of the version.
pub(super) struct PageSpec {
    /// Path relative to the edition folder.
    pub path: String,
    pub kind: PageKind,
    pub items: Vec<Item>,
}

pub(super) enum PageKind {
    Index,
    Chapter,
    /// Service and method index.
    Rpc(usize, usize),
}

pub(super) enum Item {
    Unit(usize),
    RpcLinks(Vec<(usize, usize)>),
}

fn first_word(title: &str) -> &str {
    title.split_whitespace().next().unwrap_or("").trim_matches('`').trim_end_matches(',')
}

/// Decides which page every section of the version goes to: the title section to the
/// contents page, an RPC's section (and its sub-sections, "X Errors" included) to the RPC's
/// page, everything else to the page of its level-2 chapter. The sections of the RPCs named in
/// `withheld` (a carried markdown's RPCs whose facts were not carried: that text describes
/// another schema) go nowhere, their sub-sections with them.
pub(super) fn plan_pages(
    model: &Model,
    units: &[Unit],
    withheld: &HashSet<String>,
) -> Vec<PageSpec> {
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
                && !withheld.contains(&m.name)
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
        let name = unit.title.trim_matches('`');
        if !by_anchor.contains_key(unit.anchor.as_str()) && withheld.contains(name) {
            // The chapter still lists the RPC where its section was, if the version has it.
            if let Some(at) = rpc_of(model, name) {
                link_rpc(&mut pages[chapter], at);
            }
            i = section_end(units, i, name);
            continue;
        }
        if let Some(&(si, mi)) = by_anchor.get(unit.anchor.as_str()) {
            let name = &model.services[si].methods[mi].name;
            let page = rpc_pages[&(si, mi)];
            let j = section_end(units, i, name);
            pages[page].items.extend((i..j).map(Item::Unit));
            link_rpc(&mut pages[chapter], (si, mi));
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

/// The service and method index of the RPC `name`.
fn rpc_of(model: &Model, name: &str) -> Option<(usize, usize)> {
    model
        .services
        .iter()
        .enumerate()
        .find_map(|(si, s)| s.methods.iter().position(|m| m.name == name).map(|mi| (si, mi)))
}

/// Lists an RPC on a chapter page, in the list of RPC links its last item is or a new one.
fn link_rpc(chapter: &mut PageSpec, rpc: (usize, usize)) {
    match chapter.items.last_mut() {
        Some(Item::RpcLinks(list)) => list.push(rpc),
        _ => chapter.items.push(Item::RpcLinks(vec![rpc])),
    }
}

/// Where the section of RPC `name` that starts at unit `start` ends: after its sub-sections
/// and the sections named after it that follow ("CreateVolume Errors").
fn section_end(units: &[Unit], start: usize, name: &str) -> usize {
    let level = units[start].level;
    let mut j = start + 1;
    while j < units.len() && (units[j].level > level || first_word(&units[j].title) == name) {
        j += 1;
    }
    j
}
