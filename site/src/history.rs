//! Each element's life across the versions of a spec (the CSI releases, or the versions of a
//! csi-addons package), read from the diff engine's findings between consecutive versions: the
//! version that added it, took it out of alpha, deprecated it or removed it. The site's "since",
//! "alpha until", "deprecated in" and "removed in" badges and its changelog pages come from here;
//! no table of versions is kept by hand.

use std::collections::HashMap;

use csikit_spec::Model;
use csikit_spec::diff::{Change, Report, diff};

/// The kind of a named element; names are relative to the package (`Controller.CreateVolume`,
/// `CreateVolumeRequest.name`, `VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER`), so a
/// package rename (`csi.v0` → `csi.v1`) does not end a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementKind {
    /// A service, by its name.
    Service,
    /// An RPC, as `Service.Method`.
    Rpc,
    /// A message, by its name relative to the package.
    Message,
    /// A field, as `Message.field`.
    Field,
    /// An enum, by its name relative to the package.
    Enum,
    /// An enum value, as `Enum.VALUE`.
    Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Added,
    Removed,
    AlphaOn,
    AlphaOff,
    DeprecatedOn,
    DeprecatedOff,
}

/// What the history says about an element present in one version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    /// The version that added it (the first version of the history for what was there from the
    /// start).
    pub since: Option<String>,
    /// The version that took it out of alpha, if it was alpha and has been promoted.
    pub alpha_until: Option<String>,
    /// The version that deprecated it.
    pub deprecated_in: Option<String>,
    /// The version that removed it, when a later version no longer has it.
    pub removed_in: Option<String>,
}

/// Where an element stands in one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// The version has it.
    Present,
    /// Added by a later version.
    AddedIn(String),
    /// Removed by this or an earlier version.
    RemovedIn(String),
    /// No version of the history has it.
    Unknown,
}

/// The history of every element over the versions of one spec, oldest first.
#[derive(Debug, Clone, Default)]
pub struct History {
    versions: Vec<String>,
    events: HashMap<(ElementKind, String), Vec<(usize, Event)>>,
    reports: Vec<Report>,
}

/// A model's names, for telling which kind of element a finding's path is.
struct Names<'m> {
    model: &'m Model,
    kinds: HashMap<String, ElementKind>,
}

impl<'m> Names<'m> {
    fn new(model: &'m Model) -> Names<'m> {
        let kinds = elements(model).into_iter().map(|(kind, full, _, _)| (full, kind)).collect();
        Names { model, kinds }
    }

    fn relative<'p>(&self, full: &'p str) -> &'p str {
        self.model.relative(full)
    }
}

/// Every element of a model with its alpha and deprecated marks: (kind, full name, alpha,
/// deprecated).
fn elements(model: &Model) -> Vec<(ElementKind, String, bool, bool)> {
    // The one walk over a model's elements: `Names` and a new container's members are read from
    // it too. Its three loops are of one shape (a duplicate the tree's scan lists on purpose,
    // both places being this walk): services, messages and enums are three types with three
    // kinds of children (methods, fields, values), and joining the loops would need a trait over
    // the three with an impl each, longer than the walk and as alike.
    let mut out = Vec::new();
    for s in &model.services {
        out.push((ElementKind::Service, s.full_name.clone(), s.alpha, s.deprecated));
        for m in &s.methods {
            out.push((
                ElementKind::Rpc,
                format!("{}.{}", s.full_name, m.name),
                m.alpha,
                m.deprecated,
            ));
        }
    }
    for m in &model.messages {
        out.push((ElementKind::Message, m.full_name.clone(), m.alpha, m.deprecated));
        for f in &m.fields {
            out.push((
                ElementKind::Field,
                format!("{}.{}", m.full_name, f.name),
                f.alpha,
                f.deprecated,
            ));
        }
    }
    for e in &model.enums {
        out.push((ElementKind::Enum, e.full_name.clone(), e.alpha, e.deprecated));
        for v in &e.values {
            out.push((
                ElementKind::Value,
                format!("{}.{}", e.full_name, v.name),
                v.alpha,
                v.deprecated,
            ));
        }
    }
    out
}

/// The elements inside a container element (an RPC's are none; a message's are its fields...).
fn members(model: &Model, kind: ElementKind, full: &str) -> Vec<(ElementKind, String, bool, bool)> {
    let prefix = format!("{full}.");
    elements(model)
        .into_iter()
        .filter(|(k, name, _, _)| {
            let child = match kind {
                ElementKind::Service => *k == ElementKind::Rpc,
                ElementKind::Message => *k == ElementKind::Field,
                ElementKind::Enum => *k == ElementKind::Value,
                _ => false,
            };
            child && name.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('.'))
        })
        .collect()
}

impl History {
    /// Builds the history of `versions` (name and model, oldest first) from the diff of each
    /// consecutive pair.
    pub fn new(versions: &[(&str, &Model)]) -> History {
        let mut h = History {
            versions: versions.iter().map(|(n, _)| (*n).to_owned()).collect(),
            ..History::default()
        };
        let Some((_, first)) = versions.first() else { return h };
        let names = Names::new(first);
        for (kind, full, alpha, deprecated) in elements(first) {
            h.introduce(kind, names.relative(&full), alpha, deprecated, 0);
        }
        for (i, pair) in versions.windows(2).enumerate() {
            let at = i + 1;
            let ((old_name, old), (new_name, new)) = (pair[0], pair[1]);
            let report = diff(old, new, old_name, new_name);
            h.apply(&report, &Names::new(old), &Names::new(new), at);
            h.reports.push(report);
        }
        h
    }

    fn push(&mut self, kind: ElementKind, key: &str, at: usize, event: Event) {
        self.events.entry((kind, key.to_owned())).or_default().push((at, event));
    }

    fn introduce(
        &mut self,
        kind: ElementKind,
        key: &str,
        alpha: bool,
        deprecated: bool,
        at: usize,
    ) {
        self.push(kind, key, at, Event::Added);
        if alpha {
            self.push(kind, key, at, Event::AlphaOn);
        }
        if deprecated {
            self.push(kind, key, at, Event::DeprecatedOn);
        }
    }

    fn apply(&mut self, report: &Report, old: &Names<'_>, new: &Names<'_>, at: usize) {
        for f in &report.findings {
            let kind = match f.element {
                "service" => Some(ElementKind::Service),
                "rpc" => Some(ElementKind::Rpc),
                "message" => Some(ElementKind::Message),
                "field" => Some(ElementKind::Field),
                "enum" => Some(ElementKind::Enum),
                "enum_value" => Some(ElementKind::Value),
                "alpha" | "deprecated" => {
                    new.kinds.get(&f.path).or_else(|| old.kinds.get(&f.path)).copied()
                }
                _ => None,
            };
            let Some(kind) = kind else { continue };
            match (f.element, f.change) {
                ("alpha", Change::Added) => {
                    self.push(kind, new.relative(&f.path), at, Event::AlphaOn)
                }
                ("alpha", Change::Removed) => {
                    self.push(kind, new.relative(&f.path), at, Event::AlphaOff);
                }
                ("deprecated", Change::Added) => {
                    self.push(kind, new.relative(&f.path), at, Event::DeprecatedOn);
                }
                ("deprecated", Change::Removed) => {
                    self.push(kind, new.relative(&f.path), at, Event::DeprecatedOff);
                }
                (_, Change::Added) => {
                    // The diff lists a new container once; its members are new with it.
                    let own = elements(new.model)
                        .into_iter()
                        .find(|(k, name, _, _)| *k == kind && *name == f.path)
                        .unwrap_or((kind, f.path.clone(), false, false));
                    for (k, full, alpha, deprecated) in
                        std::iter::once(own).chain(members(new.model, kind, &f.path))
                    {
                        self.introduce(k, new.relative(&full), alpha, deprecated, at);
                    }
                }
                (_, Change::Removed) => {
                    let mut removed = vec![(kind, f.path.clone())];
                    removed.extend(
                        members(old.model, kind, &f.path).into_iter().map(|(k, n, _, _)| (k, n)),
                    );
                    for (k, full) in removed {
                        self.push(k, old.relative(&full), at, Event::Removed);
                    }
                }
                (_, Change::Renamed) => {
                    // The element lives on under its new name; the old name ends here.
                    if let Some(old_path) = &f.old_path {
                        let old_key = (kind, old.relative(old_path).to_owned());
                        let past = self.events.get(&old_key).cloned().unwrap_or_default();
                        self.events.insert((kind, new.relative(&f.path).to_owned()), past);
                        self.push(kind, &old_key.1, at, Event::Removed);
                    }
                }
                (_, Change::Changed) => {}
            }
        }
    }

    /// The versions, oldest first.
    pub fn versions(&self) -> &[String] {
        &self.versions
    }

    /// The position of a version in the history.
    pub fn index(&self, version: &str) -> Option<usize> {
        self.versions.iter().position(|v| v == version)
    }

    /// The diff from the version before `at` to `at` (none for the first version).
    pub fn report(&self, at: usize) -> Option<&Report> {
        at.checked_sub(1).and_then(|i| self.reports.get(i))
    }

    fn events(&self, kind: ElementKind, name: &str) -> &[(usize, Event)] {
        self.events.get(&(kind, name.to_owned())).map_or(&[], Vec::as_slice)
    }

    /// The life of the element `name` (relative to the package) as seen from version `at`;
    /// every field is `None` when that version does not have it.
    pub fn lifecycle(&self, kind: ElementKind, name: &str, at: usize) -> Lifecycle {
        let events = self.events(kind, name);
        let Some(start) = self.added_at(events, at) else { return Lifecycle::default() };
        let end = events
            .iter()
            .find(|(i, e)| *i > start && *e == Event::Removed)
            .map_or(usize::MAX, |(i, _)| *i);
        let first = |want: Event, from: usize| {
            events
                .iter()
                .find(|(i, e)| *e == want && *i >= from && *i < end)
                .map(|(i, _)| self.versions[*i].clone())
        };
        Lifecycle {
            since: Some(self.versions[start].clone()),
            alpha_until: first(Event::AlphaOff, start + 1),
            deprecated_in: first(Event::DeprecatedOn, start),
            removed_in: (end != usize::MAX).then(|| self.versions[end].clone()),
        }
    }

    /// The last addition at or before `at`, if the element was not removed since.
    fn added_at(&self, events: &[(usize, Event)], at: usize) -> Option<usize> {
        let mut start = None;
        for (i, e) in events {
            if *i > at {
                break;
            }
            match e {
                Event::Added => start = Some(*i),
                Event::Removed => start = None,
                _ => {}
            }
        }
        start
    }

    /// Whether version `at` has the element, and if not, when it came or went.
    pub fn presence(&self, kind: ElementKind, name: &str, at: usize) -> Presence {
        let events = self.events(kind, name);
        if events.is_empty() {
            return Presence::Unknown;
        }
        if self.added_at(events, at).is_some() {
            return Presence::Present;
        }
        let removed = events.iter().rev().find(|(i, e)| *i <= at && *e == Event::Removed);
        let added = events.iter().find(|(i, e)| *i > at && *e == Event::Added);
        match (added, removed) {
            (Some((i, _)), _) => Presence::AddedIn(self.versions[*i].clone()),
            (None, Some((i, _))) => Presence::RemovedIn(self.versions[*i].clone()),
            (None, None) => Presence::Unknown,
        }
    }
}

/// `v1.12.0` → `v1.12`: releases are named by major and minor in badges; any other name is kept.
pub fn short_version(version: &str) -> String {
    match version.strip_suffix(".0") {
        Some(short) if short.starts_with('v') && short.matches('.').count() == 1 => {
            short.to_owned()
        }
        _ => version.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_shortened_only_when_the_patch_is_zero() {
        assert_eq!(short_version("v1.12.0"), "v1.12");
        assert_eq!(short_version("v1.2.1"), "v1.2.1");
        assert_eq!(short_version("main"), "main");
    }
}
