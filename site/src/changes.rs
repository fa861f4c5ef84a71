//! The changelog page of a version: the diff engine's report from the version before, as HTML
//! in the page's language, every name linked to its entry (in this version, or in the version
//! before for what was removed).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use csikit_spec::NotAvailable;
use csikit_spec::diff::{Change, Finding, Report, Severity, Side};
use serde_json::Value;

use super::i18n::Catalog;
use super::prose::escape;

/// Where a finding's names link to: the href (from the changes page) of a full name in the new
/// version, or in the old one.
pub trait ChangeLinks {
    /// The href of `full` (a service, RPC, message, field, enum or value) in the new version.
    fn new_href(&self, full: &str) -> Option<String>;
    /// The href of `full` in the old version.
    fn old_href(&self, full: &str) -> Option<String>;
    /// `full` relative to its package, as shown.
    fn short<'n>(&self, full: &'n str) -> &'n str;
    /// Whether `full` names a service or an RPC (in either version), so that a finding about
    /// its alpha or deprecated mark is listed under its service.
    fn is_service_or_rpc(&self, full: &str) -> bool;
}

const ORDER: [Severity; 5] = Severity::ALL;

fn severity_key(s: Severity) -> &'static str {
    match s {
        Severity::WireBreaking => "sev_wire_breaking",
        Severity::SourceBreaking => "sev_source_breaking",
        Severity::AlphaBreaking => "sev_alpha_breaking",
        Severity::Behaviour => "sev_behaviour",
        Severity::Info => "sev_info",
    }
}

/// The service a finding is about, or the "types" or "package" group.
fn group(f: &Finding, cat: &Catalog, links: &dyn ChangeLinks) -> (u8, String) {
    let element = match f.element {
        "alpha" | "deprecated" if links.is_service_or_rpc(&f.path) => {
            let owner = f.path.rsplit_once('.').map_or("", |(o, _)| o);
            if links.is_service_or_rpc(owner) { "rpc" } else { "service" }
        }
        other => other,
    };
    match element {
        "service" => (0, f.path.rsplit('.').next().unwrap_or(&f.path).to_owned()),
        "rpc" | "obligation" | "error_row" => {
            let service = f.path.rsplit_once('.').map_or("", |(s, _)| s);
            (0, service.rsplit('.').next().unwrap_or(service).to_owned())
        }
        "package" => (2, cat.get("changes_package").to_owned()),
        _ => (1, cat.get("changes_types").to_owned()),
    }
}

fn kind_key(element: &str) -> &'static str {
    match element {
        "service" => "kind_service",
        "rpc" => "kind_rpc",
        "message" => "kind_message",
        "enum" => "kind_enum",
        "enum_value" => "kind_value",
        _ => "kind_field",
    }
}

/// Fills `{name}` placeholders of a catalog string with HTML (the string itself is escaped).
pub(crate) fn fill_html(cat: &Catalog, key: &str, args: &[(&str, &str)]) -> String {
    let mut out = escape(cat.get(key));
    for (name, html) in args {
        out = out.replace(&format!("{{{name}}}"), html);
    }
    out
}

/// A full name as code, linked to its entry in the new version (the old one for `old`).
pub(crate) fn name_html(links: &dyn ChangeLinks, full: &str, old: bool) -> String {
    let code = format!("<code>{}</code>", escape(links.short(full)));
    let target = if old { links.old_href(full) } else { links.new_href(full) };
    match target {
        Some(h) => format!("<a class=\"ref\" href=\"{}\">{code}</a>", escape(&h)),
        None => code,
    }
}

/// A value of a finding for people: a name, a number, an error row, an obligation.
fn value_html(cat: &Catalog, v: &Value) -> String {
    match v {
        Value::Null => escape(cat.get("changes_nothing")),
        Value::String(s) => format!("<code>{}</code>", escape(s)),
        Value::Object(o) if o.contains_key("condition") => format!(
            "<span class=\"grpc\">{}</span> {}",
            escape(o.get("code").and_then(Value::as_str).unwrap_or("")),
            escape(o.get("condition").and_then(Value::as_str).unwrap_or(""))
        ),
        Value::Object(o) if o.contains_key("plugin") => {
            let plugin = o.get("plugin").and_then(Value::as_str).unwrap_or("");
            let caps: Vec<String> = o
                .get("if_any")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|c| c.get("name").and_then(Value::as_str))
                        .map(|n| format!("<code>{}</code>", escape(n)))
                        .collect()
                })
                .unwrap_or_default();
            if caps.is_empty() {
                fill_html(cat, "changes_obligation", &[("plugin", &escape(plugin))])
            } else {
                fill_html(
                    cat,
                    "changes_obligation_if",
                    &[("plugin", &escape(plugin)), ("caps", &caps.join(", "))],
                )
            }
        }
        Value::Object(o) if o.contains_key("input") => {
            let name = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let stream = o.get("server_streaming").and_then(Value::as_bool).unwrap_or(false);
            format!(
                "<code>{} → {}{}</code>",
                escape(&name("input")),
                if stream { "stream " } else { "" },
                escape(&name("output"))
            )
        }
        other => format!("<code>{}</code>", escape(&other.to_string())),
    }
}

/// One finding as a sentence of HTML.
fn sentence(cat: &Catalog, links: &dyn ChangeLinks, f: &Finding) -> String {
    let removed = f.change == Change::Removed;
    let name = name_html(
        links,
        &f.path,
        removed && !matches!(f.element, "alpha" | "deprecated" | "secret"),
    );
    let on_off = |on: &str, off: &str| {
        fill_html(cat, if f.change == Change::Removed { off } else { on }, &[("name", &name)])
    };
    match (f.element, f.change) {
        ("alpha", _) => on_off("chg_alpha_on", "chg_alpha_off"),
        ("deprecated", _) => on_off("chg_deprecated_on", "chg_deprecated_off"),
        ("secret", _) => on_off("chg_secret_on", "chg_secret_off"),
        ("error_row", Change::Added) => fill_html(
            cat,
            "chg_error_added",
            &[("name", &name_html(links, &f.path, false)), ("row", &value_html(cat, &f.new))],
        ),
        ("error_row", Change::Removed) => fill_html(
            cat,
            "chg_error_removed",
            &[("name", &name_html(links, &f.path, false)), ("row", &value_html(cat, &f.old))],
        ),
        (_, Change::Renamed) => {
            let old = f.old_path.as_deref().map_or(String::new(), |p| name_html(links, p, true));
            fill_html(
                cat,
                "chg_renamed",
                &[("kind", &escape(cat.get(kind_key(f.element)))), ("old", &old), ("name", &name)],
            )
        }
        (_, Change::Changed) => {
            let what = format!("what_{}", f.element);
            fill_html(
                cat,
                "chg_changed",
                &[
                    ("name", &name),
                    ("what", &escape(cat.get(&what))),
                    ("old", &value_html(cat, &f.old)),
                    ("new", &value_html(cat, &f.new)),
                ],
            )
        }
        (_, change) => {
            let key = if change == Change::Added { "chg_added" } else { "chg_removed" };
            fill_html(cat, key, &[("kind", &escape(cat.get(kind_key(f.element)))), ("name", &name)])
        }
    }
}

/// The body of a changes page: a summary by severity, then each severity's findings grouped by
/// service (types and the package apart), in the order the new spec declares things.
pub fn changes_html(cat: &Catalog, report: &Report, links: &dyn ChangeLinks) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", escape(cat.get("changes_none")));
        out.push_str(&not_comparable_html(cat, report));
        return out;
    }
    out.push_str("<ul class=\"change-summary\">\n");
    for s in ORDER {
        let n = report.findings.iter().filter(|f| f.severity == s).count();
        if n > 0 {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\"><span class=\"severity severity-{}\">{}</span></a> {n}</li>",
                s.as_str(),
                s.as_str(),
                escape(cat.get(severity_key(s)))
            );
        }
    }
    out.push_str("</ul>\n");
    for s in ORDER {
        let of: Vec<&Finding> = report.findings.iter().filter(|f| f.severity == s).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<h2 id=\"{}\"><span class=\"severity severity-{}\">{}</span> ({})</h2>\n<p class=\"kicker\">{}</p>",
            s.as_str(),
            s.as_str(),
            escape(cat.get(severity_key(s))),
            of.len(),
            escape(cat.get(&format!("{}_help", severity_key(s))))
        );
        let mut groups: BTreeMap<(u8, String), Vec<&Finding>> = BTreeMap::new();
        for f in of {
            groups.entry(group(f, cat, links)).or_default().push(f);
        }
        for ((_, g), fs) in groups {
            let _ = writeln!(out, "<h3>{}</h3>\n<ul class=\"changes\">", escape(&g));
            for f in fs {
                let _ = writeln!(
                    out,
                    "<li data-element=\"{}\" data-change=\"{}\">{}</li>",
                    f.element,
                    f.change.as_str(),
                    sentence(cat, links, f)
                );
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str(&not_comparable_html(cat, report));
    out
}

/// What the report could not compare because one side's source does not state it (a release
/// in the corpus as its proto alone has no error tables or prose): listed, never shown as
/// removed or added.
fn not_comparable_html(cat: &Catalog, report: &Report) -> String {
    let mut out = String::new();
    if report.not_comparable.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "<h2 id=\"not-comparable\">{}</h2>\n<ul class=\"not-comparable\">",
        escape(cat.get("changes_not_comparable"))
    );
    for n in &report.not_comparable {
        let (release, other) = match n.unavailable_in {
            Side::Old => (&report.old, &report.new),
            Side::New => (&report.new, &report.old),
            Side::Both => (&report.new, &report.old),
        };
        let n_items = n.items.to_string();
        // Carried error tables and obligations are compared RPC by RPC (a carried fact that
        // differs would be a finding above); the rest of a carried part is not compared.
        let per_rpc = matches!(n.what, NotAvailable::Errors | NotAvailable::Obligations);
        let text = match (n.unavailable_in, &n.carried_from) {
            (Side::Both, _) => cat.get("not_comparable_both").to_owned(),
            (_, Some(from)) if per_rpc => cat.fill(
                "not_comparable_carried_rpcs",
                &[("release", release), ("from", from), ("other", other), ("n", &n_items)],
            ),
            (_, Some(from)) => cat.fill(
                "not_comparable_carried",
                &[("release", release), ("from", from), ("other", other), ("n", &n_items)],
            ),
            (_, None) => cat.fill("not_comparable_in", &[("release", release)]),
        };
        let _ = writeln!(
            out,
            "<li data-what=\"{}\"><code>{}</code>: {}</li>",
            n.what.as_str(),
            n.what.as_str().replace('_', " "),
            escape(&text)
        );
    }
    out.push_str("</ul>\n");
    out
}
