//! "Upgrading to vX.Y.Z", for driver authors: in the English edition of a release that has an
//! upgrade table (`csikit_spec::upgrade`, the one table of what replaces what, which the `csikit`
//! crate's `UPGRADING.md` is made from too), made from that table (what replaces what, who reads
//! it, the proto words it stands on, with the sources), the diff engine's findings from the
//! release before (what was removed and added) and the release's proto comments (what the new
//! capabilities oblige, what its comments ask of the new elements).

use std::fmt::Write as _;

use csikit_spec::diff::{Change, Finding, Report};
use csikit_spec::{CapabilityRef, Model};

use super::{Guide, Render, Scope};
use crate::changes::{fill_html, name_html};
use crate::prose::{escape, href};
use csikit_spec::upgrade::{ProtoQuote, Replacement, UpgradeData};

/// The guide.
pub(super) const GUIDE: Guide = Guide { path: "guide/upgrading.html", applies, title, body };

/// The findings that name an element (not a fact of one).
const ELEMENTS: [&str; 6] = ["service", "rpc", "message", "field", "enum", "enum_value"];

/// The upgrade table of the edition's release, with the diff engine's report from the release
/// before. A table that does not read has no guide: `csikit_spec::upgrade`'s tests and `cargo
/// xtask generate` refuse it with its errors.
fn upgrade_of<'a>(scope: &Scope<'a>) -> Option<(UpgradeData, &'a Report)> {
    let report = scope.report?;
    let data = csikit_spec::upgrade::data_for(scope.version)?.ok()?;
    Some((data, report))
}

fn applies(scope: &Scope<'_>) -> bool {
    // The table's words are English.
    scope.csi && scope.lang == "en" && upgrade_of(scope).is_some()
}

fn title(scope: &Scope<'_>) -> String {
    scope.cat.fill("guide_upgrade_title", &[("new", scope.version)])
}

fn body(scope: &Scope<'_>, render: &Render<'_>) -> String {
    let Some((data, report)) = upgrade_of(scope) else { return String::new() };
    let page = Page { scope, render, data: &data, report };
    let mut out = page.intro();
    out.push_str(&page.removed());
    out.push_str(&page.capabilities());
    out.push_str(&page.new_rpcs());
    out.push_str(&page.readers());
    out.push_str(&page.proto_rules());
    out.push_str(&page.sources());
    out
}

/// One guide page being written.
struct Page<'p> {
    scope: &'p Scope<'p>,
    render: &'p Render<'p>,
    data: &'p UpgradeData,
    report: &'p Report,
}

impl Page<'_> {
    fn fill(&self, key: &str, args: &[(&str, &str)]) -> String {
        escape(&self.scope.cat.fill(key, args))
    }

    fn versions(&self) -> [(&'static str, &str); 2] {
        [("old", &self.report.old), ("new", &self.data.release)]
    }

    /// A section's heading and its first paragraph.
    fn heading(&self, id: &str, key: &str, intro: &str) -> String {
        format!(
            "<h2 id=\"{id}\">{}</h2>\n<p>{}</p>\n",
            self.fill(key, &self.versions()),
            self.fill(intro, &self.versions())
        )
    }

    fn new_name(&self, full: &str) -> String {
        name_html(self.render.links, full, false)
    }

    /// An element of the new release named as the table names it (relative to the package, an
    /// RPC by its simple name), linked to its entry.
    fn table_name(&self, name: &str) -> String {
        let full = csikit_spec::upgrade::element(self.scope.model, name)
            .map_or_else(|| self.full(name), |(full, _)| full);
        self.new_name(&full)
    }

    /// A name of the table made full (the package's), for an element the new release lacks.
    fn full(&self, name: &str) -> String {
        format!("{}.{name}", self.scope.model.package)
    }

    /// The rows of the table for the removed element `path` (a full name): its own and its
    /// members'.
    fn rows_of(&self, path: &str) -> Vec<&Replacement> {
        let relative = self.scope.model.relative(path);
        let under = format!("{relative}.");
        self.data
            .replacements
            .iter()
            .filter(|r| r.removed == relative || r.removed.starts_with(&under))
            .collect()
    }

    fn intro(&self) -> String {
        let mut out = format!("<p>{}</p>\n", self.fill("guide_upgrade_intro", &self.versions()));
        if let Some(from) = self.scope.carried_from {
            let _ = writeln!(
                out,
                "<p>{}</p>",
                self.fill("guide_upgrade_no_spec", &[("new", &self.data.release), ("from", from)])
            );
        }
        out
    }

    /// Every removal the diff engine finds, with the table's rows for it and its members.
    fn removed(&self) -> String {
        let removals: Vec<&Finding> = self
            .report
            .findings
            .iter()
            .filter(|f| f.change == Change::Removed && ELEMENTS.contains(&f.element))
            .collect();
        let mut out =
            self.heading("removed", "guide_upgrade_removed", "guide_upgrade_removed_intro");
        let cat = self.scope.cat;
        let _ = writeln!(
            out,
            "<div class=\"table-wrap\"><table class=\"upgrade\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>\n<tbody>",
            self.fill("th_removed_in", &self.versions()),
            escape(cat.get("th_replaced_by")),
            escape(cat.get("th_how")),
            escape(cat.get("th_sources"))
        );
        for f in removals {
            let rows = self.rows_of(&f.path);
            if rows.is_empty() {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td colspan=\"3\">{}</td></tr>",
                    name_html(self.render.links, &f.path, true),
                    escape(cat.get("guide_upgrade_no_row"))
                );
            }
            for r in rows {
                let new: Vec<String> = r.replaced_by.iter().map(|n| self.table_name(n)).collect();
                let _ = writeln!(
                    out,
                    "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&format!("removed.{}", r.removed)),
                    name_html(self.render.links, &self.full(&r.removed), true),
                    new.join("<br>"),
                    self.render.prose.inline(&r.how),
                    self.sources_html(&r.quotes, &r.sources)
                );
            }
        }
        out.push_str("</tbody>\n</table></div>\n");
        out
    }

    /// The proto words a row stands on, then the keys of its other sources, each linked to
    /// its entry under "Sources".
    fn sources_html(&self, quotes: &[ProtoQuote], keys: &[String]) -> String {
        let cat = self.scope.cat;
        let quoted = quotes.iter().map(|q| {
            fill_html(
                cat,
                "guide_source_proto",
                &[
                    ("says", &escape(&one_line(&q.says))),
                    ("element", &self.table_name(&q.element)),
                    ("new", &escape(&self.data.release)),
                ],
            )
        });
        let cited = keys
            .iter()
            .map(|k| format!("<a href=\"#source-{0}\">{0}</a>", escape(k)))
            .collect::<Vec<_>>()
            .join(", ");
        let mut parts: Vec<String> = quoted.collect();
        if !cited.is_empty() {
            parts.push(cited);
        }
        parts.join("<br>")
    }

    /// Each capability the table replaces, and each capability the release adds without a
    /// predecessor, with the RPC its proto comment obliges and what it requires besides.
    fn capabilities(&self) -> String {
        let model = self.scope.model;
        let full = |name: &String| self.full(name);
        let rows: Vec<(Option<String>, Vec<String>)> = self
            .data
            .replacements
            .iter()
            .filter(|r| {
                !r.replaced_by.is_empty()
                    && r.replaced_by.iter().all(|n| capability(model, &full(n)).is_some())
            })
            .map(|r| (Some(full(&r.removed)), r.replaced_by.iter().map(full).collect()))
            .chain(self.report.findings.iter().filter_map(|f| {
                let relative = model.relative(&f.path);
                let fresh = f.change == Change::Added
                    && f.element == "enum_value"
                    && capability_value(model, &f.path)
                    && !self
                        .data
                        .replacements
                        .iter()
                        .any(|r| r.replaced_by.iter().any(|n| n == relative));
                fresh.then(|| (None, vec![f.path.clone()]))
            }))
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let cat = self.scope.cat;
        let mut out = self.heading(
            "capabilities",
            "guide_upgrade_capabilities",
            "guide_upgrade_capabilities_intro",
        );
        let _ = writeln!(
            out,
            "<div class=\"table-wrap\"><table class=\"upgrade\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>\n<tbody>",
            self.fill("th_capability_old", &self.versions()),
            self.fill("th_capability_new", &self.versions()),
            escape(cat.get("th_obliges")),
            escape(cat.get("th_comment"))
        );
        for (old, new) in rows {
            let old = match old {
                Some(o) => name_html(self.render.links, &o, true),
                None => escape(cat.get("guide_upgrade_no_predecessor")),
            };
            for (i, n) in new.iter().enumerate() {
                let first = if i == 0 {
                    format!("<td rowspan=\"{}\">{old}</td>", new.len())
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "<tr>{first}<td>{}</td><td>{}</td><td>{}</td></tr>",
                    self.new_name(n),
                    self.obliges(n),
                    self.render.prose.inline(&value_comment(model, n))
                );
            }
        }
        out.push_str("</tbody>\n</table></div>\n");
        out
    }

    /// The RPCs a capability value obliges (their obligations, read from the proto's comments)
    /// and the capabilities it requires besides (`Model::implications`).
    fn obliges(&self, value: &str) -> String {
        let model = self.scope.model;
        let Some(cap) = capability(model, value) else {
            return escape(self.scope.cat.get("changes_nothing"));
        };
        let mut parts: Vec<String> = model
            .services
            .iter()
            .filter(|s| s.name == cap.service)
            .flat_map(|s| s.methods.iter().map(move |m| (s, m)))
            .filter(|(_, m)| m.obligation.as_ref().is_some_and(|o| o.if_any.contains(&cap)))
            .map(|(s, m)| self.new_name(&format!("{}.{}", s.full_name, m.name)))
            .collect();
        let (owner, _) = value.rsplit_once('.').unwrap_or(("", value));
        for imp in model.implications.iter().filter(|i| i.capability == cap) {
            parts.push(fill_html(
                self.scope.cat,
                "guide_upgrade_requires",
                &[("capability", &self.new_name(&format!("{owner}.{}", imp.requires.name)))],
            ));
        }
        if parts.is_empty() {
            return escape(self.scope.cat.get("changes_nothing"));
        }
        parts.join("<br>")
    }

    /// Every RPC the release adds: its request and response, when a plugin must serve it.
    fn new_rpcs(&self) -> String {
        let model = self.scope.model;
        let added: Vec<(&str, &csikit_spec::Method)> = self
            .report
            .findings
            .iter()
            .filter(|f| f.change == Change::Added && f.element == "rpc")
            .filter_map(|f| {
                let (_, name) = f.path.rsplit_once('.')?;
                Some((f.path.as_str(), model.method(name)?.1))
            })
            .collect();
        if added.is_empty() {
            return String::new();
        }
        let cat = self.scope.cat;
        let mut out = self.heading("new-rpcs", "guide_upgrade_rpcs", "guide_upgrade_rpcs_intro");
        let _ = writeln!(
            out,
            "<div class=\"table-wrap\"><table class=\"upgrade\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead>\n<tbody>",
            escape(cat.get("kind_rpc")),
            escape(cat.get("th_signature")),
            escape(cat.get("th_obliged_when"))
        );
        for (path, m) in added {
            let alpha = if m.alpha {
                format!(
                    " <span class=\"badge badge-alpha\">{}</span>",
                    escape(cat.get("badge_alpha"))
                )
            } else {
                String::new()
            };
            let when = match &m.obligation {
                Some(o) if o.if_any.is_empty() => {
                    fill_html(cat, "changes_obligation", &[("plugin", &escape(&o.plugin))])
                }
                Some(o) => {
                    let caps: Vec<String> = o
                        .if_any
                        .iter()
                        .map(|c| format!("<code>{}</code>", escape(&c.name)))
                        .collect();
                    fill_html(
                        cat,
                        "changes_obligation_if",
                        &[("plugin", &escape(&o.plugin)), ("caps", &caps.join(", "))],
                    )
                }
                None => escape(cat.get("changes_nothing")),
            };
            let _ = writeln!(
                out,
                "<tr><td>{}{alpha}</td><td>{} → {}</td><td>{when}</td></tr>",
                self.new_name(path),
                self.new_name(&m.input),
                self.new_name(&m.output)
            );
        }
        out.push_str("</tbody>\n</table></div>\n");
        out
    }

    /// Who in Kubernetes reads what the removed elements carried, and what stands for it now.
    fn readers(&self) -> String {
        let rows: Vec<&Replacement> =
            self.data.replacements.iter().filter(|r| !r.readers.is_empty()).collect();
        if rows.is_empty() {
            return String::new();
        }
        let cat = self.scope.cat;
        let mut out =
            self.heading("health-monitor", "guide_upgrade_readers", "guide_upgrade_readers_intro");
        let _ = writeln!(
            out,
            "<div class=\"table-wrap\"><table class=\"upgrade\">\n<thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>\n<tbody>",
            escape(cat.get("th_reader")),
            self.fill("th_reader_does", &self.versions()),
            self.fill("th_reads_old", &self.versions()),
            self.fill("th_reads_new", &self.versions())
        );
        for (r, reader) in rows.iter().flat_map(|r| r.readers.iter().map(move |d| (r, d))) {
            let new: Vec<String> = r.replaced_by.iter().map(|n| self.table_name(n)).collect();
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}<br><small>{}</small></td><td>{}</td><td>{}</td></tr>",
                escape(&reader.who),
                self.render.prose.inline(&reader.does),
                self.sources_html(&[], &reader.sources),
                name_html(self.render.links, &self.full(&r.removed), true),
                new.join("<br>")
            );
        }
        out.push_str("</tbody>\n</table></div>\n");
        out
    }

    /// The sentences of the new elements' comments that say what a plugin or CO MUST, SHOULD
    /// or MAY do, by element.
    fn proto_rules(&self) -> String {
        let model = self.scope.model;
        let mut elements: Vec<(String, String)> = Vec::new();
        for f in self.report.findings.iter().filter(|f| f.change == Change::Added) {
            elements.extend(commented(model, f.element, &f.path));
        }
        let mut items = String::new();
        for (full, comment) in &elements {
            let rules = normative_sentences(comment);
            if rules.is_empty() {
                continue;
            }
            let said: Vec<String> =
                rules.iter().map(|s| format!("<li>{}</li>", self.render.prose.inline(s))).collect();
            let _ = writeln!(items, "<li>{}\n<ul>{}</ul></li>", self.new_name(full), said.join(""));
        }
        if items.is_empty() {
            return String::new();
        }
        let mut out =
            self.heading("proto-rules", "guide_upgrade_rules", "guide_upgrade_rules_intro");
        let _ = writeln!(out, "<ul class=\"proto-rules\">\n{items}</ul>");
        out
    }

    fn sources(&self) -> String {
        let cat = self.scope.cat;
        let mut out = format!("<h2 id=\"sources\">{}</h2>\n<ul>\n", escape(cat.get("th_sources")));
        let _ = writeln!(
            out,
            "<li>{}</li>",
            fill_html(
                cat,
                "guide_sources_changes",
                &[
                    (
                        "changes",
                        &format!(
                            "<a href=\"{}\">{}</a>",
                            escape(&href(self.render.prose.page, "changes.html")),
                            escape(cat.get("nav_changes_label"))
                        ),
                    ),
                    ("old", &escape(&self.report.old)),
                    ("new", &escape(&self.data.release)),
                ],
            )
        );
        let _ = writeln!(out, "<li>{}</li>", self.fill("guide_sources_proto", &self.versions()));
        for source in &self.data.sources {
            let _ = writeln!(
                out,
                "<li id=\"source-{0}\"><code>{0}</code>: {1}</li>",
                escape(&source.key),
                self.render.prose.inline(&source.text)
            );
        }
        out.push_str("</ul>\n");
        out
    }
}

/// The capability a value of a `*ServiceCapability` enum of `model` is.
fn capability(model: &Model, value: &str) -> Option<CapabilityRef> {
    let (owner, name) = value.rsplit_once('.')?;
    let e = model.enum_type(owner)?;
    e.values.iter().find(|v| v.name == name)?;
    let first = model.relative(owner).split('.').next()?;
    let service = first.strip_suffix("ServiceCapability")?;
    Some(CapabilityRef { service: service.to_owned(), name: name.to_owned() })
}

/// Whether `value` is a value of a capability enum of `model` (a service's or the plugin's).
fn capability_value(model: &Model, value: &str) -> bool {
    value.rsplit_once('.').is_some_and(|(owner, name)| {
        model.enum_type(owner).is_some_and(|e| {
            model.relative(owner).contains("Capability") && e.values.iter().any(|v| v.name == name)
        })
    })
}

/// The comment on an enum value of `model`.
fn value_comment(model: &Model, value: &str) -> String {
    let Some((owner, name)) = value.rsplit_once('.') else { return String::new() };
    model
        .enum_type(owner)
        .and_then(|e| e.values.iter().find(|v| v.name == name))
        .map_or(String::new(), |v| v.comment.clone())
}

/// The elements an addition brings, with their comments: a field or value itself, a message's
/// fields, an enum's values.
fn commented(model: &Model, element: &str, full: &str) -> Vec<(String, String)> {
    let (owner, last) = full.rsplit_once('.').unwrap_or(("", full));
    match element {
        "message" => model
            .message(full)
            .map(|m| {
                m.fields.iter().map(|f| (format!("{full}.{}", f.name), f.comment.clone())).collect()
            })
            .unwrap_or_default(),
        "enum" => model
            .enum_type(full)
            .map(|e| {
                e.values.iter().map(|v| (format!("{full}.{}", v.name), v.comment.clone())).collect()
            })
            .unwrap_or_default(),
        "field" => model
            .message(owner)
            .and_then(|m| m.fields.iter().find(|f| f.name == last))
            .map(|f| vec![(full.to_owned(), f.comment.clone())])
            .unwrap_or_default(),
        "enum_value" => vec![(full.to_owned(), value_comment(model, full))],
        _ => Vec::new(),
    }
}

/// Text on one line, spaces collapsed.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The sentences of a comment that hold MUST, SHOULD, MAY or SHALL (RFC 2119's words as the spec
/// writes them, in capitals).
fn normative_sentences(comment: &str) -> Vec<String> {
    let text = one_line(comment);
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        // A sentence ends at a full stop followed by a space and a capital.
        let ends = c == '.'
            && bytes.get(i + 1) == Some(&b' ')
            && bytes.get(i + 2).is_some_and(u8::is_ascii_uppercase);
        let end = i + c.len_utf8();
        if ends || end == text.len() {
            out.push(text[start..end].trim().to_owned());
            start = end;
        }
    }
    out.retain(|s| {
        s.split(|c: char| !c.is_ascii_alphabetic())
            .any(|w| matches!(w, "MUST" | "SHOULD" | "MAY" | "SHALL"))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::normative_sentences;

    #[test]
    fn normative_sentences_are_the_ones_with_rfc_2119_words() {
        let comment = "The ID of the volume.\nThe Plugin MUST NOT return two entries\nfor one volume. \
                       This field is REQUIRED. COs MAY ignore it, e.g. when idle.";
        assert_eq!(
            normative_sentences(comment),
            [
                "The Plugin MUST NOT return two entries for one volume.",
                "COs MAY ignore it, e.g. when idle."
            ]
        );
        assert!(normative_sentences("").is_empty());
    }
}
