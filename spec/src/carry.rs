//! Facts carried across releases: a release read from its `.proto` alone has no error tables,
//! obligations, sections or size-limit table of its own, so where an RPC's schema is unchanged
//! since an older release that has its spec markdown, that release's prose facts stand in for
//! them, each saying where it came from (`Method::carried_from`, `SourceInfo::carried`).
//!
//! "Schema unchanged" is the RPC's own declaration (request and response types relative to the
//! package, streaming, `alpha` and `deprecated`) and the fields of its request and response
//! messages (name, number, type, label, oneof, proto3 `optional`, `secret`, `alpha`,
//! `deprecated`): not comments, not what comments state (presence, size limits), not
//! message-level options, not nested or referenced messages. An RPC that changed, or is new, gets
//! only what its own proto states. The document-level prose (the general error table, the
//! size-limit table, the sections with the markdown they are read from) is carried whole.
//!
//! Over the corpus's history (every consecutive pair from v1.0.0) a carry by this rule kept the
//! real error rows and codes, obligation and section in 285 of 290 RPCs (275 word for word); the
//! other five tables changed while nothing in the proto did, not even a comment
//! (`spec/tests/carry.rs` measures it, `BENCHMARKS.md` has the table). So carrying is never silent: the loader says what
//! was carried and what was not in one warning ([`CarryReport::notice`]).

use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, Severity};
use crate::lower::general_limit;
use crate::model::{Field, Message, Method, Model, SizeLimit, Span};
use crate::obligation::{comment_agrees, describe};
use crate::provenance::{Carried, NotAvailable, SourceKind};

/// Where a source without spec markdown takes its prose facts from (`LoadOptions::carry`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Carry {
    /// A proto-only release folder of a corpus (`csi-spec/<version>/` holding its `.proto`
    /// alone) carries from the newest older release of that corpus that has its spec markdown
    /// (`corpus::Corpus::carry_source`); any other source carries nothing.
    #[default]
    Corpus,
    /// Nothing is carried: the source's own facts alone (the strict view).
    None,
    /// Carried from this spec folder (its markdown and proto), whatever the source is.
    From(PathBuf),
}

/// What [`carry_facts`] carried.
#[derive(Debug, Clone, Default)]
pub struct CarryReport {
    /// The release carried from, e.g. `v1.12.0`.
    pub from: String,
    /// RPCs whose schema is unchanged since `from`: their error table, section and obligation
    /// were carried.
    pub carried: Vec<String>,
    /// RPCs both releases declare whose schema changed: nothing carried.
    pub changed: Vec<String>,
    /// RPCs `from` does not declare.
    pub new: Vec<String>,
    /// Rows of the general error table carried (0 when the source states its own).
    pub general_errors: usize,
    /// Section headings carried.
    pub sections: usize,
    /// Problems found while carrying: a carried obligation that contradicts what the new
    /// proto's capability comment says (the carried one is kept).
    pub warnings: Vec<Diagnostic>,
}

impl CarryReport {
    /// The one warning that says, with counts, what `what` (a path or release name) carries
    /// and what it does not.
    pub fn notice(&self, what: &str) -> Diagnostic {
        let total = self.carried.len() + self.changed.len() + self.new.len();
        let mut message = format!(
            "'{what}' {CARRIED} {}: the error tables, sections and obligations of {} of its {total} RPCs, whose schema is unchanged since, the general error table ({} rows), the size-limit table and {} section headings",
            self.from,
            self.carried.len(),
            self.general_errors,
            self.sections,
        );
        let listed = |names: &[String]| names.join(", ");
        match (self.changed.is_empty(), self.new.is_empty()) {
            (true, true) => {}
            (false, true) => message.push_str(&format!(
                "; not carried: {} changed ({})",
                self.changed.len(),
                listed(&self.changed)
            )),
            (true, false) => message.push_str(&format!(
                "; not carried: {} new ({})",
                self.new.len(),
                listed(&self.new)
            )),
            (false, false) => message.push_str(&format!(
                "; not carried: {} changed ({}) and {} new ({})",
                self.changed.len(),
                listed(&self.changed),
                self.new.len(),
                listed(&self.new)
            )),
        }
        Diagnostic::global(Severity::Warning, message).with_help(format!(
            "each carried fact says carried_from; it is {}'s word, so check it against this release's own spec.md when that is available (`cargo xtask diff --carry-from` shows what differs); --no-carry reads the source alone",
            self.from
        ))
    }
}

/// The words every carry notice holds ([`CarryReport::notice`]).
pub const CARRIED: &str = "carries prose facts from";

/// Whether `d` is the warning that says what a model carries.
pub fn is_carry_notice(d: &Diagnostic) -> bool {
    d.severity == Severity::Warning && d.message.contains(CARRIED)
}

/// Carries into `new` (a model whose source has no spec markdown) the prose facts of `from` (a
/// model read from an English spec folder, named `from_name` in the facts' provenance): every
/// RPC whose schema is unchanged ([`schema_unchanged`]) gets `from`'s error table, section and
/// obligation (a carried obligation replaces one read from a capability's comment, which names
/// one condition where the prose names all), and the model gets `from`'s general error table,
/// size-limit table and sections, with `from`'s markdown appended to `new.files` for their spans
/// and lines. Only what `new`'s source cannot state is carried.
///
/// # Errors
///
/// When `new` has spec markdown of its own, `from` has none (or is a translation) or is of
/// another package (its version aside), or `new` has already been carried into.
pub fn carry_facts(
    new: &mut Model,
    from: &Model,
    from_name: &str,
) -> Result<CarryReport, Diagnostic> {
    if new.source.kind == SourceKind::Spec {
        return Err(Diagnostic::global(
            Severity::Error,
            "the model was read with its spec markdown; nothing is carried into it",
        )
        .with_help("carrying is for a release read from its .proto alone or a descriptor set"));
    }
    if new.source.carried.is_some() {
        return Err(Diagnostic::global(
            Severity::Error,
            format!("the model already carries facts; not carried again from '{from_name}'"),
        ));
    }
    let Some(markdown) = from.files.first().filter(|_| {
        from.source.kind == SourceKind::Spec && from.lang == "en" && from.source.carried.is_none()
    }) else {
        return Err(Diagnostic::global(
            Severity::Error,
            format!("'{from_name}' has no English spec markdown of its own to carry facts from"),
        )
        .with_help("carry from a spec folder holding spec.md (or README.md) and its .proto"));
    };
    // Another spec's prose (a csi-addons package's, say) says nothing about this one.
    if unversioned(&new.package) != unversioned(&from.package) {
        return Err(Diagnostic::global(
            Severity::Error,
            format!(
                "'{from_name}' is package '{}', not an older release of '{}'; nothing is carried from it",
                from.package, new.package
            ),
        )
        .with_help("carry from an older release of the same spec"));
    }
    let lacks = |what| !new.source.states(what);
    let parts: Vec<NotAvailable> = NotAvailable::PROSE.into_iter().filter(|w| lacks(*w)).collect();
    let file = new.files.len();
    new.files.push(markdown.clone());
    // Rows are read from the English markdown, file 0 of `from`.
    let moved = |span: &Span| Span { file, ..span.clone() };
    let carry_rows = |rows: &[crate::model::ErrorRow]| {
        rows.iter()
            .map(|r| crate::model::ErrorRow { span: moved(&r.span), ..r.clone() })
            .collect::<Vec<_>>()
    };

    let mut report = CarryReport { from: from_name.to_owned(), ..CarryReport::default() };
    let mut carried_methods: Vec<(usize, usize, &Method)> = Vec::new();
    for (si, service) in new.services.iter().enumerate() {
        for (mi, method) in service.methods.iter().enumerate() {
            let old = from
                .services
                .iter()
                .find(|s| s.name == service.name)
                .and_then(|s| s.methods.iter().find(|m| m.name == method.name));
            match old {
                None => report.new.push(method.name.clone()),
                Some(o) if !schema_unchanged(from, o, new, method) => {
                    report.changed.push(method.name.clone());
                }
                Some(o) => carried_methods.push((si, mi, o)),
            }
        }
    }
    for (si, mi, o) in carried_methods {
        let method = &mut new.services[si].methods[mi];
        report.carried.push(method.name.clone());
        if lacks(NotAvailable::Errors) {
            method.errors = carry_rows(&o.errors);
        }
        if lacks(NotAvailable::Sections) {
            method.section.clone_from(&o.section);
        }
        if lacks(NotAvailable::Obligations)
            && let Some(prose) = &o.obligation
        {
            if let Some(said) = method.obligation.as_ref().filter(|x| x.from_comment)
                && !comment_agrees(said, prose)
            {
                report.warnings.push(Diagnostic::global(
                    Severity::Warning,
                    format!(
                        "rpc '{}': {from_name}'s section, carried, obliges the {} but this proto's capability comment says the {}",
                        method.name,
                        describe(prose),
                        describe(said)
                    ),
                ).with_help("the carried obligation is kept; the release's own spec.md decides"));
            }
            method.obligation = Some(prose.clone());
        }
        method.carried_from = Some(from_name.to_owned());
    }
    if lacks(NotAvailable::GeneralErrors) {
        new.general_errors = carry_rows(&from.general_errors);
        report.general_errors = new.general_errors.len();
    }
    if lacks(NotAvailable::Sections) {
        new.sections = from.sections.clone();
        report.sections = new.sections.len();
    }
    if lacks(NotAvailable::SizeLimitTable) {
        new.size_limits = from.size_limits;
        let limits = new.size_limits;
        for f in new.messages.iter_mut().flat_map(|m| m.fields.iter_mut()) {
            if let SizeLimit::General { .. } = f.size_limit
                && let Some(bytes) = general_limit(limits, f)
            {
                f.size_limit = SizeLimit::General { bytes };
            }
        }
    }
    new.source.carried = Some(Carried { from: from_name.to_owned(), parts, markdown: file });
    Ok(report)
}

/// A package without its version (`csi.v1` → `csi`), so releases across a package rename
/// (`csi.v0` → `csi.v1`) are of one spec.
fn unversioned(package: &str) -> &str {
    match package.rsplit_once('.') {
        Some((family, version))
            if version
                .strip_prefix('v')
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit())) =>
        {
            family
        }
        _ => package,
    }
}

/// Whether RPC `new_method` of `new` has the schema `old_method` had in `old`: the same
/// declaration (request and response types relative to the package, streaming, `alpha`,
/// `deprecated`) and the same fields in its request and response messages (name, number, type
/// relative to the package, label, oneof, proto3 `optional`, `secret`, `alpha`, `deprecated`).
/// Comments, and the facts read from them, are not part of the schema.
pub fn schema_unchanged(
    old: &Model,
    old_method: &Method,
    new: &Model,
    new_method: &Method,
) -> bool {
    let (o, n) = (old_method, new_method);
    o.client_streaming == n.client_streaming
        && o.server_streaming == n.server_streaming
        && o.alpha == n.alpha
        && o.deprecated == n.deprecated
        && same_message(old, &o.input, new, &n.input)
        && same_message(old, &o.output, new, &n.output)
}

/// Whether message `o` of `old` and `n` of `new` have the same name relative to their package
/// and the same fields.
fn same_message(old: &Model, o: &str, new: &Model, n: &str) -> bool {
    if old.relative(o) != new.relative(n) {
        return false;
    }
    match (old.message(o), new.message(n)) {
        (Some(om), Some(nm)) => fields(old, om) == fields(new, nm),
        _ => false,
    }
}

/// The schema of a message's fields, types relative to the package.
fn fields<'m>(model: &Model, message: &'m Message) -> Vec<FieldSchema<'m>> {
    message.fields.iter().map(|f| FieldSchema::of(model, f)).collect()
}

/// What of a field is its schema.
#[derive(PartialEq, Eq)]
struct FieldSchema<'m> {
    name: &'m str,
    number: u32,
    ty: String,
    label: crate::model::Label,
    oneof: Option<&'m str>,
    proto3_optional: bool,
    secret: bool,
    alpha: bool,
    deprecated: bool,
}

impl<'m> FieldSchema<'m> {
    fn of(model: &Model, f: &'m Field) -> FieldSchema<'m> {
        FieldSchema {
            name: &f.name,
            number: f.number,
            ty: f.ty.to_string().replace(&format!("{}.", model.package), ""),
            label: f.label,
            oneof: f.oneof.as_deref(),
            proto3_optional: f.proto3_optional,
            secret: f.secret,
            alpha: f.alpha,
            deprecated: f.deprecated,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_package_is_one_spec_across_its_versions() {
        assert_eq!(super::unversioned("csi.v1"), "csi");
        assert_eq!(super::unversioned("csi.v0"), "csi");
        assert_eq!(super::unversioned("replication"), "replication");
        assert_eq!(super::unversioned("csi.vendor"), "csi.vendor");
    }
}
