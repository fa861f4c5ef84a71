//! What changed between two Models (two CSI releases, or two versions of a csi-addons spec):
//! each change once, with a severity and the spec section it belongs to.
//!
//! (over 800 lines: one comparison per kind of element, each short and each deciding its own
//! findings' severity; they share the walk and the severity rules, which is why they stay together.)
//!
//! Matching: services, RPCs, messages and enums by name within the package (across a package
//! rename, such as `csi.v0` → `csi.v1`, the names relative to the package; the rename itself is
//! one finding); fields and enum values by number, a new name at the same number being a rename;
//! a field (or value) that keeps its name under a new number is a `field_number` change. The
//! fields of an added or removed message, and the values of an added or removed enum, are not
//! listed on their own.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};

use crate::model::{
    Enum, ErrorRow, Field, Label, Message, Method, Model, Obligation, Presence, Service, SizeLimit,
};
use crate::provenance::NotAvailable;

/// How much a change matters to code on either side of the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Old and new peers no longer understand each other's bytes.
    WireBreaking,
    /// The wire still works; code written against the old bindings no longer compiles.
    SourceBreaking,
    /// An alpha element went away: breaking, but only for those who opted into alpha features,
    /// which carry no compatibility promise.
    AlphaBreaking,
    /// What a peer must do or may expect changes (a field becomes REQUIRED, an error code...).
    Behaviour,
    /// Additions and clarifications.
    Info,
}

impl Severity {
    /// Every severity, most serious first.
    pub const ALL: [Severity; 5] = [
        Severity::WireBreaking,
        Severity::SourceBreaking,
        Severity::AlphaBreaking,
        Severity::Behaviour,
        Severity::Info,
    ];

    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::WireBreaking => "wire-breaking",
            Severity::SourceBreaking => "source-breaking",
            Severity::AlphaBreaking => "alpha-breaking",
            Severity::Behaviour => "behaviour",
            Severity::Info => "info",
        }
    }
}

/// The kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Only in the new Model.
    Added,
    /// Only in the old Model.
    Removed,
    /// The same element under a new name.
    Renamed,
    /// The same element with a new value of some property.
    Changed,
}

impl Change {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Renamed => "renamed",
            Change::Changed => "changed",
        }
    }
}

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What happened.
    pub change: Change,
    /// To what: `service`, `rpc`, `message`, `field`, `enum`, `enum_value`, `field_type`,
    /// `field_number`, `presence`, `secret`, `alpha`, `deprecated`, `size_limit`, `error_row`,
    /// `obligation`, `package`; and where one side carried an RPC's facts, `error_text` (a row's
    /// description or recovery) and `section` (its anchor).
    pub element: &'static str,
    /// The element's full name in the new Model (the old one for removals).
    pub path: String,
    /// The old full name, for renames.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// How much it matters.
    pub severity: Severity,
    /// The old value, where there is one.
    pub old: Value,
    /// The new value, where there is one.
    pub new: Value,
    /// The anchor of the spec section it belongs to (of the new spec, else the old).
    pub section: Option<String>,
}

/// Which side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The old Model.
    Old,
    /// The new Model.
    New,
    /// Both.
    Both,
}

/// A part of the Models that one side's source cannot state, so it is not compared: never
/// reported as removed or added. Where that side carries the part from an older release, the
/// carried facts are compared (RPC by RPC for error tables and obligations), and only the rest
/// is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotComparable {
    /// What is not compared (a [`NotAvailable`] name: `errors`, `obligations`, `presence`...).
    pub what: NotAvailable,
    /// The side whose source does not state it.
    pub unavailable_in: Side,
    /// How many such items the other side states and the report did not compare (error rows,
    /// obligations, sections, fields with a stated presence...; the error rows and obligations
    /// of carried RPCs are compared, so not counted); 0 when neither side states it.
    pub items: usize,
    /// The release that side carries this part from, if it does (JSON: absent when not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<String>,
}

/// Every change from `old` to `new`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The old release's name.
    pub old: String,
    /// The new release's name.
    pub new: String,
    /// The changes, in the order the new spec declares things.
    pub findings: Vec<Finding>,
    /// What one side's source cannot state, so is not compared.
    pub not_comparable: Vec<NotComparable>,
}

/// Compares two Models; `old_name` and `new_name` name them in the report.
///
/// An RPC's error table and obligation are compared where both sides state them: read from
/// their own prose or carried from an older release (`Model::states_errors`,
/// `Model::states_obligation`); two obligations read from capability comments alone compare
/// too. Where either side carried an RPC's facts, they are checked word for word: a row's
/// description and recovery (`error_text`) and the section anchor (`section`) as well, so
/// comparing a carried Model with the release's real one shows what the carry got wrong.
pub fn diff(old: &Model, new: &Model, old_name: &str, new_name: &str) -> Report {
    let lacks = |what| !old.source.states(what) || !new.source.states(what);
    let mut d = Differ {
        old,
        new,
        out: Vec::new(),
        presence: !lacks(NotAvailable::Presence),
        size_limits: !lacks(NotAvailable::SizeLimits),
    };
    d.run();
    Report {
        old: old_name.to_owned(),
        new: new_name.to_owned(),
        findings: d.out,
        not_comparable: not_comparable(old, new),
    }
}

/// Each part one side cannot state, with the side and what the other side holds of it.
fn not_comparable(old: &Model, new: &Model) -> Vec<NotComparable> {
    let mut whats: Vec<NotAvailable> =
        old.source.not_available.iter().chain(&new.source.not_available).copied().collect();
    whats.sort();
    whats.dedup();
    whats
        .into_iter()
        .map(|what| {
            let (in_old, in_new) = (!old.source.states(what), !new.source.states(what));
            let (unavailable_in, other) = match (in_old, in_new) {
                (true, true) => (Side::Both, None),
                (true, false) => (Side::Old, Some(new)),
                _ => (Side::New, Some(old)),
            };
            let lacking = match unavailable_in {
                Side::New => new,
                _ => old,
            };
            let carried_from = lacking
                .source
                .carried
                .as_ref()
                .filter(|c| c.parts.contains(&what))
                .map(|c| c.from.clone());
            let items = other.map_or(0, |m| count(m, what, |method| carried(lacking, method)));
            NotComparable { what, unavailable_in, items, carried_from }
        })
        .collect()
}

/// Whether `model` carries the facts of the RPC named like `method`.
fn carried(model: &Model, method: &Method) -> bool {
    model.method(&method.name).is_some_and(|(_, m)| m.carried_from.is_some())
}

/// How many items of `what` a Model states, leaving out the error rows and obligations of the
/// RPCs `compared` says were compared.
fn count(m: &Model, what: NotAvailable, compared: impl Fn(&Method) -> bool) -> usize {
    let methods = || m.services.iter().flat_map(|s| &s.methods);
    let uncompared = || methods().filter(|x| !compared(x));
    let fields = || m.messages.iter().flat_map(|x| &x.fields);
    match what {
        NotAvailable::Errors => uncompared().map(|x| x.errors.len()).sum(),
        NotAvailable::GeneralErrors => m.general_errors.len(),
        NotAvailable::Sections => m.sections.len(),
        NotAvailable::Obligations => uncompared().filter(|x| x.obligation.is_some()).count(),
        NotAvailable::SizeLimitTable => 1,
        NotAvailable::Comments => {
            m.messages.iter().filter(|x| !x.comment.is_empty()).count()
                + fields().filter(|f| !f.comment.is_empty()).count()
                + methods().filter(|x| !x.comment.is_empty()).count()
        }
        NotAvailable::Presence => fields()
            .filter(|f| matches!(f.presence, Presence::Required | Presence::Optional))
            .count(),
        NotAvailable::SizeLimits => fields().filter(|f| f.size_limit != SizeLimit::None).count(),
        NotAvailable::ValueRules => {
            fields().filter(|f| f.non_negative || f.no_control_chars).count()
        }
        NotAvailable::OneofRequired => {
            m.messages.iter().flat_map(|x| &x.oneofs).filter(|o| o.required).count()
        }
    }
}

struct Differ<'a> {
    old: &'a Model,
    new: &'a Model,
    out: Vec<Finding>,
    /// Whether both sides state presence and per-field size limits.
    presence: bool,
    size_limits: bool,
}

/// The severity of removing an element: its own for an alpha one, else `ga`.
fn removal(alpha: bool, ga: Severity) -> Severity {
    if alpha { Severity::AlphaBreaking } else { ga }
}

/// Whether the message or enum `full` of `model` is usable only with alpha features: it, or a
/// message it is nested in, is marked alpha.
fn alpha_scope(model: &Model, full: &str) -> bool {
    let mut name = full;
    loop {
        let marked = model.message(name).is_some_and(|m| m.alpha)
            || model.enum_type(name).is_some_and(|e| e.alpha);
        if marked {
            return true;
        }
        match name.rsplit_once('.') {
            Some((outer, _)) => name = outer,
            None => return false,
        }
    }
}

fn field_type(f: &Field) -> String {
    match f.label {
        Label::Repeated => format!("repeated {}", f.ty),
        _ => f.ty.to_string(),
    }
}

/// An RPC's request and response types and streaming flags, as a finding's value.
fn signature(m: &Method) -> Value {
    json!({
        "input": m.input,
        "output": m.output,
        "client_streaming": m.client_streaming,
        "server_streaming": m.server_streaming,
    })
}

fn presence(p: Presence) -> Value {
    json!(p)
}

impl<'a> Differ<'a> {
    fn push(
        &mut self,
        change: Change,
        element: &'static str,
        path: String,
        severity: Severity,
        (old, new): (Value, Value),
        section: Option<String>,
    ) {
        self.out.push(Finding {
            change,
            element,
            path,
            old_path: None,
            severity,
            old,
            new,
            section,
        });
    }

    /// The section of the RPC a message is the request or response of, if any.
    fn message_section(&self, full: &str) -> Option<String> {
        for (model, name) in [(self.new, full.to_owned()), (self.old, full.to_owned())] {
            for s in &model.services {
                for m in &s.methods {
                    let rel = model.relative(&name);
                    if (model.relative(&m.input) == rel || model.relative(&m.output) == rel)
                        && let Some(sec) = &m.section
                    {
                        return Some(sec.clone());
                    }
                }
            }
        }
        None
    }

    fn run(&mut self) {
        if self.old.package != self.new.package {
            self.push(
                Change::Changed,
                "package",
                self.new.package.clone(),
                Severity::WireBreaking,
                (json!(self.old.package), json!(self.new.package)),
                None,
            );
        }
        self.services();
        self.messages();
        self.enums();
    }

    fn services(&mut self) {
        let old: BTreeMap<&str, &Service> =
            self.old.services.iter().map(|s| (s.name.as_str(), s)).collect();
        for s in &self.new.services {
            match old.get(s.name.as_str()) {
                None => self.push(
                    Change::Added,
                    "service",
                    s.full_name.clone(),
                    Severity::Info,
                    (Value::Null, json!(s.name)),
                    None,
                ),
                Some(o) => {
                    self.alpha(&s.full_name, o.alpha, s.alpha, None);
                    self.deprecated(&s.full_name, o.deprecated, s.deprecated, None);
                    self.methods(o, s);
                }
            }
        }
        let new: BTreeSet<&str> = self.new.services.iter().map(|s| s.name.as_str()).collect();
        for s in &self.old.services {
            if !new.contains(s.name.as_str()) {
                self.push(
                    Change::Removed,
                    "service",
                    s.full_name.clone(),
                    removal(s.alpha, Severity::WireBreaking),
                    (json!(s.name), Value::Null),
                    None,
                );
            }
        }
    }

    fn methods(&mut self, old_service: &Service, service: &Service) {
        let old: BTreeMap<&str, &Method> =
            old_service.methods.iter().map(|m| (m.name.as_str(), m)).collect();
        for m in &service.methods {
            let path = format!("{}.{}", service.full_name, m.name);
            let Some(o) = old.get(m.name.as_str()) else {
                self.push(
                    Change::Added,
                    "rpc",
                    path,
                    Severity::Info,
                    (Value::Null, json!(m.name)),
                    m.section.clone(),
                );
                continue;
            };
            let section = m.section.clone().or_else(|| o.section.clone());
            let (oi, oo) = (self.old.relative(&o.input), self.old.relative(&o.output));
            let (ni, no) = (self.new.relative(&m.input), self.new.relative(&m.output));
            if (oi, oo) != (ni, no)
                || o.client_streaming != m.client_streaming
                || o.server_streaming != m.server_streaming
            {
                self.push(
                    Change::Changed,
                    "rpc",
                    path.clone(),
                    Severity::WireBreaking,
                    (signature(o), signature(m)),
                    section.clone(),
                );
            }
            self.alpha(&path, o.alpha, m.alpha, section.clone());
            self.deprecated(&path, o.deprecated, m.deprecated, section.clone());
            let prose = (self.old.states_obligation(o), self.new.states_obligation(m));
            let same_obligation =
                Obligation::same_rules(o.obligation.as_ref(), m.obligation.as_ref());
            // Both from the prose (read or carried), or both from the proto's comments alone.
            if prose.0 == prose.1 && !same_obligation {
                self.push(
                    Change::Changed,
                    "obligation",
                    path.clone(),
                    Severity::Behaviour,
                    (json!(o.obligation), json!(m.obligation)),
                    section.clone(),
                );
            }
            let carried = o.carried_from.is_some() || m.carried_from.is_some();
            if carried && o.section != m.section {
                self.push(
                    Change::Changed,
                    "section",
                    path.clone(),
                    Severity::Info,
                    (json!(o.section), json!(m.section)),
                    section.clone(),
                );
            }
            if self.old.states_errors(o) && self.new.states_errors(m) {
                self.errors(&path, &o.errors, &m.errors, section.clone());
                if carried {
                    self.error_texts(&path, &o.errors, &m.errors, section);
                }
            }
        }
        let new: BTreeSet<&str> = service.methods.iter().map(|m| m.name.as_str()).collect();
        for m in &old_service.methods {
            if !new.contains(m.name.as_str()) {
                self.push(
                    Change::Removed,
                    "rpc",
                    // Named in the old Model, as every removal is (the package may differ).
                    format!("{}.{}", old_service.full_name, m.name),
                    removal(m.alpha || old_service.alpha, Severity::WireBreaking),
                    (json!(m.name), Value::Null),
                    m.section.clone(),
                );
            }
        }
    }

    /// Error rows match by condition; a row whose code changed is one `changed` finding.
    fn errors(&mut self, path: &str, old: &[ErrorRow], new: &[ErrorRow], section: Option<String>) {
        let key = |r: &ErrorRow| r.condition.split_whitespace().collect::<Vec<_>>().join(" ");
        let old_rows: BTreeMap<String, &ErrorRow> = old.iter().map(|r| (key(r), r)).collect();
        let new_keys: BTreeSet<String> = new.iter().map(key).collect();
        for r in new {
            match old_rows.get(&key(r)) {
                None => self.push(
                    Change::Added,
                    "error_row",
                    path.to_owned(),
                    Severity::Behaviour,
                    (Value::Null, json!({"condition": r.condition, "code": r.code})),
                    section.clone(),
                ),
                Some(o) if o.code != r.code => self.push(
                    Change::Changed,
                    "error_row",
                    path.to_owned(),
                    Severity::Behaviour,
                    (
                        json!({"condition": o.condition, "code": o.code}),
                        json!({"condition": r.condition, "code": r.code}),
                    ),
                    section.clone(),
                ),
                Some(_) => {}
            }
        }
        for r in old {
            if !new_keys.contains(&key(r)) {
                self.push(
                    Change::Removed,
                    "error_row",
                    path.to_owned(),
                    Severity::Behaviour,
                    (json!({"condition": r.condition, "code": r.code}), Value::Null),
                    section.clone(),
                );
            }
        }
    }

    /// Rows that match by condition and code but whose description or recovery is worded
    /// differently: one `error_text` finding each. Only for carried tables, which claim to be
    /// the other release's words; between two releases' own tables a rewording is not reported.
    fn error_texts(
        &mut self,
        path: &str,
        old: &[ErrorRow],
        new: &[ErrorRow],
        section: Option<String>,
    ) {
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let key = |r: &ErrorRow| (words(&r.condition), r.code.clone());
        let old_rows: BTreeMap<_, &ErrorRow> = old.iter().map(|r| (key(r), r)).collect();
        for r in new {
            let Some(o) = old_rows.get(&key(r)) else { continue };
            if words(&o.description) != words(&r.description)
                || words(&o.recovery) != words(&r.recovery)
            {
                let text = |r: &ErrorRow| json!({"condition": r.condition, "code": r.code, "description": r.description, "recovery": r.recovery});
                self.push(
                    Change::Changed,
                    "error_text",
                    path.to_owned(),
                    Severity::Info,
                    (text(o), text(r)),
                    section.clone(),
                );
            }
        }
    }

    fn alpha(&mut self, path: &str, old: bool, new: bool, section: Option<String>) {
        match (old, new) {
            (false, true) => self.push(
                Change::Added,
                "alpha",
                path.to_owned(),
                Severity::Behaviour,
                (json!(false), json!(true)),
                section,
            ),
            // Promoted to GA.
            (true, false) => self.push(
                Change::Removed,
                "alpha",
                path.to_owned(),
                Severity::Info,
                (json!(true), json!(false)),
                section,
            ),
            _ => {}
        }
    }

    /// The standard `deprecated` option set or cleared: advice to stop using the element, which
    /// changes neither the wire nor the bindings' shape.
    fn deprecated(&mut self, path: &str, old: bool, new: bool, section: Option<String>) {
        if old != new {
            let change = if new { Change::Added } else { Change::Removed };
            self.push(
                change,
                "deprecated",
                path.to_owned(),
                Severity::Info,
                (json!(old), json!(new)),
                section,
            );
        }
    }

    fn messages(&mut self) {
        let old: BTreeMap<&str, &Message> =
            self.old.messages.iter().map(|m| (self.old.relative(&m.full_name), m)).collect();
        for m in &self.new.messages {
            let rel = self.new.relative(&m.full_name);
            let section = self.message_section(&m.full_name);
            match old.get(rel) {
                None => self.push(
                    Change::Added,
                    "message",
                    m.full_name.clone(),
                    Severity::Info,
                    (Value::Null, json!(m.full_name)),
                    section,
                ),
                Some(o) => {
                    self.alpha(&m.full_name, o.alpha, m.alpha, section.clone());
                    self.deprecated(&m.full_name, o.deprecated, m.deprecated, section.clone());
                    self.fields(o, m, section);
                }
            }
        }
        let new: BTreeSet<&str> =
            self.new.messages.iter().map(|m| self.new.relative(&m.full_name)).collect();
        for m in &self.old.messages {
            if !new.contains(self.old.relative(&m.full_name)) {
                let section = self.message_section(&m.full_name);
                self.push(
                    Change::Removed,
                    "message",
                    m.full_name.clone(),
                    removal(alpha_scope(self.old, &m.full_name), Severity::SourceBreaking),
                    (json!(m.full_name), Value::Null),
                    section,
                );
            }
        }
    }

    fn fields(&mut self, old: &Message, new: &Message, section: Option<String>) {
        let old_by_number: BTreeMap<u32, &Field> =
            old.fields.iter().map(|f| (f.number, f)).collect();
        let new_by_number: BTreeMap<u32, &Field> =
            new.fields.iter().map(|f| (f.number, f)).collect();
        // A name kept under a new number: one `field_number` finding, not a removal and an addition.
        let mut renumbered: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
        for f in &new.fields {
            if old_by_number.contains_key(&f.number) {
                continue;
            }
            if let Some(o) = old
                .fields
                .iter()
                .find(|o| o.name == f.name && !new_by_number.contains_key(&o.number))
            {
                renumbered.insert(f.name.as_str(), (o.number, f.number));
            }
        }
        for f in &new.fields {
            let path = format!("{}.{}", new.full_name, f.name);
            if let Some((from, to)) = renumbered.get(f.name.as_str()) {
                self.push(
                    Change::Changed,
                    "field_number",
                    path.clone(),
                    Severity::WireBreaking,
                    (json!(from), json!(to)),
                    section.clone(),
                );
                if let Some(o) = old_by_number.get(from) {
                    self.field_props(&path, o, f, section.clone());
                }
                continue;
            }
            let Some(o) = old_by_number.get(&f.number) else {
                let severity = if f.presence == Presence::Required {
                    Severity::Behaviour
                } else {
                    Severity::Info
                };
                self.push(
                    Change::Added,
                    "field",
                    path,
                    severity,
                    (Value::Null, json!({"number": f.number, "type": field_type(f)})),
                    section.clone(),
                );
                continue;
            };
            if o.name != f.name {
                self.out.push(Finding {
                    change: Change::Renamed,
                    element: "field",
                    path: path.clone(),
                    old_path: Some(format!("{}.{}", old.full_name, o.name)),
                    severity: Severity::SourceBreaking,
                    old: json!(o.name),
                    new: json!(f.name),
                    section: section.clone(),
                });
            }
            self.field_props(&path, o, f, section.clone());
        }
        for o in &old.fields {
            if !new_by_number.contains_key(&o.number) && !renumbered.contains_key(o.name.as_str()) {
                self.push(
                    Change::Removed,
                    "field",
                    format!("{}.{}", old.full_name, o.name),
                    removal(
                        o.alpha
                            || alpha_scope(self.old, &old.full_name)
                            || o.ty.full_name().is_some_and(|t| alpha_scope(self.old, t)),
                        Severity::WireBreaking,
                    ),
                    (json!({"number": o.number, "type": field_type(o)}), Value::Null),
                    section.clone(),
                );
            }
        }
    }

    /// Type, label, presence, secret, alpha and size limit of a field present on both sides.
    fn field_props(&mut self, path: &str, o: &Field, f: &Field, section: Option<String>) {
        let (ot, nt) = (field_type(o), field_type(f));
        // Types across a package rename are compared relative to the package.
        let same_type = ot == nt
            || ot.replace(&format!("{}.", self.old.package), &format!("{}.", self.new.package))
                == nt;
        if !same_type || o.label != f.label {
            self.push(
                Change::Changed,
                "field_type",
                path.to_owned(),
                Severity::WireBreaking,
                (json!(ot), json!(nt)),
                section.clone(),
            );
        }
        if self.presence && o.presence != f.presence {
            let severity =
                if f.presence == Presence::Required { Severity::Behaviour } else { Severity::Info };
            self.push(
                Change::Changed,
                "presence",
                path.to_owned(),
                severity,
                (presence(o.presence), presence(f.presence)),
                section.clone(),
            );
        }
        if o.secret != f.secret {
            let change = if f.secret { Change::Added } else { Change::Removed };
            self.push(
                change,
                "secret",
                path.to_owned(),
                Severity::Behaviour,
                (json!(o.secret), json!(f.secret)),
                section.clone(),
            );
        }
        self.alpha(path, o.alpha, f.alpha, section.clone());
        self.deprecated(path, o.deprecated, f.deprecated, section.clone());
        if self.size_limits && o.max_bytes() != f.max_bytes() {
            self.push(
                Change::Changed,
                "size_limit",
                path.to_owned(),
                Severity::Behaviour,
                (json!(o.max_bytes()), json!(f.max_bytes())),
                section,
            );
        }
    }

    fn enums(&mut self) {
        let old: BTreeMap<&str, &Enum> =
            self.old.enums.iter().map(|e| (self.old.relative(&e.full_name), e)).collect();
        for e in &self.new.enums {
            match old.get(self.new.relative(&e.full_name)) {
                None => self.push(
                    Change::Added,
                    "enum",
                    e.full_name.clone(),
                    Severity::Info,
                    (Value::Null, json!(e.full_name)),
                    None,
                ),
                Some(o) => {
                    self.alpha(&e.full_name, o.alpha, e.alpha, None);
                    self.deprecated(&e.full_name, o.deprecated, e.deprecated, None);
                    self.values(o, e);
                }
            }
        }
        let new: BTreeSet<&str> =
            self.new.enums.iter().map(|e| self.new.relative(&e.full_name)).collect();
        for e in &self.old.enums {
            if !new.contains(self.old.relative(&e.full_name)) {
                self.push(
                    Change::Removed,
                    "enum",
                    e.full_name.clone(),
                    removal(alpha_scope(self.old, &e.full_name), Severity::SourceBreaking),
                    (json!(e.full_name), Value::Null),
                    None,
                );
            }
        }
    }

    fn values(&mut self, old: &Enum, new: &Enum) {
        let old_by_number: BTreeMap<i32, _> = old.values.iter().map(|v| (v.number, v)).collect();
        let new_by_number: BTreeMap<i32, _> = new.values.iter().map(|v| (v.number, v)).collect();
        let mut renumbered: BTreeMap<&str, (i32, i32)> = BTreeMap::new();
        for v in &new.values {
            if old_by_number.contains_key(&v.number) {
                continue;
            }
            if let Some(o) = old
                .values
                .iter()
                .find(|o| o.name == v.name && !new_by_number.contains_key(&o.number))
            {
                renumbered.insert(v.name.as_str(), (o.number, v.number));
            }
        }
        for v in &new.values {
            let path = format!("{}.{}", new.full_name, v.name);
            if let Some((from, to)) = renumbered.get(v.name.as_str()) {
                self.push(
                    Change::Changed,
                    "field_number",
                    path,
                    Severity::WireBreaking,
                    (json!(from), json!(to)),
                    None,
                );
                continue;
            }
            match old_by_number.get(&v.number) {
                None => self.push(
                    Change::Added,
                    "enum_value",
                    path,
                    Severity::Info,
                    (Value::Null, json!(v.number)),
                    None,
                ),
                Some(o) => {
                    if o.name != v.name {
                        self.out.push(Finding {
                            change: Change::Renamed,
                            element: "enum_value",
                            path: path.clone(),
                            old_path: Some(format!("{}.{}", old.full_name, o.name)),
                            severity: Severity::SourceBreaking,
                            old: json!(o.name),
                            new: json!(v.name),
                            section: None,
                        });
                    }
                    self.alpha(&path, o.alpha, v.alpha, None);
                    self.deprecated(&path, o.deprecated, v.deprecated, None);
                }
            }
        }
        for o in &old.values {
            if !new_by_number.contains_key(&o.number) && !renumbered.contains_key(o.name.as_str()) {
                self.push(
                    Change::Removed,
                    "enum_value",
                    format!("{}.{}", old.full_name, o.name),
                    removal(
                        o.alpha || alpha_scope(self.old, &old.full_name),
                        Severity::WireBreaking,
                    ),
                    (json!(o.number), Value::Null),
                    None,
                );
            }
        }
    }
}

/// The report as markdown for people: grouped by severity, then by service (messages and enums
/// under the service whose RPCs use them, else under "Types"), a line per finding, each linked to
/// its section at `link_base` + `#anchor`.
pub fn markdown(report: &Report, link_base: &str) -> String {
    use std::fmt::Write as _;
    let mut out = format!("## {} → {}\n\n", report.old, report.new);
    if report.findings.is_empty() {
        out.push_str("No change.\n\n");
    }
    for severity in Severity::ALL {
        let of: Vec<&Finding> = report.findings.iter().filter(|f| f.severity == severity).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(out, "### {} ({})\n", severity.as_str(), of.len());
        let mut groups: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
        for f in of {
            groups.entry(group(f)).or_default().push(f);
        }
        for (g, fs) in groups {
            let _ = writeln!(out, "**{g}**\n");
            for f in fs {
                let what = match (f.change, &f.old_path) {
                    (Change::Renamed, Some(old)) => format!("`{old}` renamed to `{}`", f.path),
                    (Change::Changed, _) if f.element == "error_text" => format!(
                        "`{}`: the words of {} changed (description or recovery)",
                        f.path,
                        show(&f.new)
                    ),
                    (Change::Changed, _) => format!(
                        "`{}`: {} changed from {} to {}",
                        f.path,
                        f.element.replace('_', " "),
                        show(&f.old),
                        show(&f.new)
                    ),
                    (c, _) if f.element == "alpha" => {
                        if c == Change::Removed {
                            format!("`{}` promoted to GA (no longer alpha)", f.path)
                        } else {
                            format!("`{}` marked alpha", f.path)
                        }
                    }
                    (c, _) if f.element == "deprecated" => {
                        if c == Change::Removed {
                            format!("`{}` no longer deprecated", f.path)
                        } else {
                            format!("`{}` deprecated", f.path)
                        }
                    }
                    (c, _) => {
                        let verb = match c {
                            Change::Added => "added",
                            Change::Removed => "removed",
                            _ => "changed",
                        };
                        let detail = match (&f.old, &f.new) {
                            (_, Value::Null) | (Value::Null, _) if f.element == "error_row" => {
                                format!(": {}", show(if f.new.is_null() { &f.old } else { &f.new }))
                            }
                            _ => String::new(),
                        };
                        format!("{} `{}` {verb}{detail}", f.element.replace('_', " "), f.path)
                    }
                };
                match &f.section {
                    Some(s) => {
                        let _ = writeln!(out, "- {what} ([spec]({link_base}#{s}))");
                    }
                    None => {
                        let _ = writeln!(out, "- {what}");
                    }
                }
            }
            out.push('\n');
        }
    }
    out.push_str(&not_comparable_md(report));
    out
}

/// The "not comparable" lines of a report, if any.
fn not_comparable_md(report: &Report) -> String {
    use std::fmt::Write as _;
    if report.not_comparable.is_empty() {
        return String::new();
    }
    let mut out = format!("### not comparable ({})\n\n", report.not_comparable.len());
    for n in &report.not_comparable {
        let side = match n.unavailable_in {
            Side::Old => format!("not available from {}'s source", report.old),
            Side::New => format!("not available from {}'s source", report.new),
            Side::Both => "not available from either source".to_owned(),
        };
        let per_rpc = matches!(n.what, NotAvailable::Errors | NotAvailable::Obligations);
        let carried = match &n.carried_from {
            Some(from) if per_rpc => format!(
                ", carried from {from} for the RPCs whose schema is unchanged, which are compared"
            ),
            Some(from) => format!(", carried from {from} (not compared)"),
            None => String::new(),
        };
        let more = if n.carried_from.is_some() && per_rpc { " more" } else { "" };
        let held = match n.unavailable_in {
            Side::Both => String::new(),
            Side::Old => format!("; {} states {}{more}", report.new, n.items),
            Side::New => format!("; {} states {}{more}", report.old, n.items),
        };
        let _ = writeln!(out, "- {}: {side}{carried}{held}", n.what.as_str().replace('_', " "));
    }
    out.push('\n');
    out
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => format!("`{s}`"),
        Value::Object(o) if o.contains_key("condition") => format!(
            "{} — {}",
            o.get("code").and_then(Value::as_str).unwrap_or(""),
            o.get("condition").and_then(Value::as_str).unwrap_or("")
        ),
        v => format!("`{v}`"),
    }
}

/// The service a finding is about, from its path (`csi.v1.Controller.CreateVolume`).
fn group(f: &Finding) -> String {
    match f.element {
        "service" | "rpc" | "obligation" | "error_row" | "error_text" | "section" => {
            let mut parts: Vec<&str> = f.path.rsplitn(2, '.').collect();
            if f.element != "service" {
                parts = vec![parts.get(1).copied().unwrap_or("")];
            } else {
                parts = vec![f.path.as_str()];
            }
            parts[0].rsplit('.').next().unwrap_or("").to_owned()
        }
        "package" => "Package".into(),
        _ => "Types".into(),
    }
}
