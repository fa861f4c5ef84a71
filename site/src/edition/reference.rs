//! The reference pages: one per message (its field table with badges) and one per enum (its
//! values), with where each is used.

use csikit_spec::{FieldType, Label, Presence, SizeLimit};

use super::search::SearchIndex;
use super::version::{Lang, Site, Use, relative_name};
use crate::directory::{Directory, PageIdentity};
use crate::history::ElementKind;
use crate::pages::{Badge, FieldRow, FieldTable, Nav, TypePage, UseLink, render};
use crate::prose::{Prose, escape, href, ref_page, rpc_page};

fn bytes_text(n: u32) -> String {
    if n >= 1024 && n.is_multiple_of(1024) { format!("{} KiB", n / 1024) } else { format!("{n} B") }
}

impl Site<'_> {
    pub(super) fn type_html(&self, ty: &FieldType, page: &str) -> String {
        let link = |full: &str| {
            if self.index.is_type(full) {
                format!(
                    "<a class=\"ref\" href=\"{}\"><code>{}</code></a>",
                    escape(&href(page, &ref_page(full))),
                    escape(relative_name(self.model, full))
                )
            } else if let Some(target) = self.externs.get(full) {
                format!(
                    "<a class=\"ref\" href=\"{}\"><code>{}</code></a>",
                    escape(&href(page, target)),
                    escape(full)
                )
            } else {
                format!("<code>{}</code>", escape(full))
            }
        };
        match ty {
            FieldType::Map { key, value }
                if self.index.is_type(value.value_name())
                    || self.externs.contains_key(value.value_name()) =>
            {
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

    pub(super) fn field_table(
        &self,
        lang: &Lang<'_>,
        msg: &csikit_spec::Message,
        prefix: &str,
        prose: &Prose<'_>,
    ) -> String {
        let cat = &lang.cat;
        let message_key = relative_name(self.model, &msg.full_name);
        let rows: Vec<FieldRow> = msg
            .fields
            .iter()
            .map(|f| {
                let mut badges = Vec::new();
                match f.presence {
                    Presence::Required => {
                        badges.push(Badge::new("required", cat.get("badge_required").to_owned()));
                    }
                    Presence::Optional => {
                        badges.push(Badge::new("optional", cat.get("badge_optional").to_owned()));
                    }
                    Presence::Unspecified | Presence::Unknown => {}
                }
                if f.secret {
                    badges.push(Badge::new("secret", cat.get("badge_secret").to_owned()));
                }
                if f.alpha {
                    badges.push(Badge::new("alpha", cat.get("badge_alpha").to_owned()));
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
                    badges.push(Badge::new("size", cat.fill(key, &[("n", &bytes_text(bytes))])));
                }
                if f.non_negative {
                    badges.push(Badge::new("size", cat.get("badge_non_negative").to_owned()));
                }
                badges.extend(self.lifecycle_badges(
                    cat,
                    ElementKind::Field,
                    &format!("{message_key}.{}", f.name),
                ));
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

    pub(super) fn used_in(&self, lang: &Lang<'_>, full: &str, page: &str) -> Vec<UseLink> {
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

    pub(super) fn render_message(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
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
        let name = relative_name(self.model, &msg.full_name);
        search.push("message", name, path, &msg.comment);
        for f in &msg.fields {
            search.push(
                "field",
                &format!("{name}.{}", f.name),
                &format!("{path}#{}", f.name),
                &f.comment,
            );
        }
        let mut badges = Vec::new();
        if msg.alpha {
            badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
        }
        badges.extend(self.lifecycle_badges(&lang.cat, ElementKind::Message, name));
        let oneofs = msg
            .oneofs
            .iter()
            .map(|o| {
                (
                    o.name.clone(),
                    o.required.then(|| {
                        Badge::new("required", lang.cat.get("badge_oneof_required").to_owned())
                    }),
                )
            })
            .collect();
        let identity = PageIdentity {
            page: path,
            label: name,
            element: Some((ElementKind::Message, name.to_owned())),
        };
        let l = self.layout(lang, dir, &identity, name.to_owned(), nav);
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

    pub(super) fn render_enum(
        &self,
        lang: &Lang<'_>,
        dir: &Directory<'_>,
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
        let name = relative_name(self.model, &e.full_name);
        search.push("enum", name, path, &e.comment);
        let rows: Vec<FieldRow> = e
            .values
            .iter()
            .map(|v| {
                search.push(
                    "value",
                    &format!("{name}.{}", v.name),
                    &format!("{path}#{}", v.name),
                    &v.comment,
                );
                let mut badges = Vec::new();
                if v.alpha {
                    badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
                }
                badges.extend(self.lifecycle_badges(
                    &lang.cat,
                    ElementKind::Value,
                    &format!("{name}.{}", v.name),
                ));
                FieldRow {
                    id: v.name.clone(),
                    number: v.number.to_string(),
                    name: v.name.clone(),
                    type_html: String::new(),
                    label: String::new(),
                    badges,
                    comment_html: prose.inline(&v.comment),
                }
            })
            .collect();
        let mut badges = Vec::new();
        if e.alpha {
            badges.push(Badge::new("alpha", lang.cat.get("badge_alpha").to_owned()));
        }
        badges.extend(self.lifecycle_badges(&lang.cat, ElementKind::Enum, name));
        let identity = PageIdentity {
            page: path,
            label: name,
            element: Some((ElementKind::Enum, name.to_owned())),
        };
        let l = self.layout(lang, dir, &identity, name.to_owned(), nav);
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
}

fn inline_names(inline: &[(String, String)]) -> Vec<String> {
    inline.iter().map(|(m, _)| m.clone()).collect()
}
