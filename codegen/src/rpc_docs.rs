//! The rustdoc of each server-trait method, from the Model: the spec's text for the RPC (its
//! section's prose, or the proto comment where the source has no prose), what obliges a plugin
//! to implement it (`Method::obligation`), what the skeleton has checked when the method runs
//! (the request's rules from the facts, the serialisation key, secrets, the alpha policy, the
//! response's rules) and the error enum to answer with.

use csikit_spec::{Label, Method, Model, Service, SourceKind};

use crate::input::{Package, Parts};
use crate::validation::{field_rules, is_validated};

/// What the skeleton checks of one message type, gathered over its nested messages.
#[derive(Debug, Default)]
struct Rules {
    /// REQUIRED fields it checks, as the docs list them (`` `volume_capabilities` (at least
    /// one) ``, `` `volume_capabilities[i].access_mode` ``).
    required: Vec<String>,
    /// The same fields' paths alone.
    required_paths: Vec<String>,
    /// REQUIRED fields the wire cannot tell from their zero value (a bool, a number): not checked.
    unchecked: Vec<String>,
    /// Required oneofs: path and members.
    oneofs: Vec<(String, Vec<String>)>,
    /// Strings' largest size per value.
    max_bytes: Vec<(String, u32)>,
    /// Maps' and repeated fields' largest size in total.
    max_total: Vec<(String, u32)>,
    non_negative: Vec<String>,
    no_control_chars: Vec<String>,
    secret_keys: Vec<String>,
    /// Fields whose values follow another package's type's own rules: path, type.
    foreign: Vec<(String, String)>,
    /// Alpha fields (and fields of an alpha message type).
    alpha: Vec<String>,
    /// Secret fields.
    secrets: Vec<String>,
}

impl Rules {
    fn of(p: &Package<'_>, message: &str) -> Rules {
        let mut rules = Rules::default();
        let validated = |t: &str| is_validated(t, p.model, &p.extern_paths);
        rules.walk(p.model, &validated, message, "", &mut Vec::new());
        rules
    }

    fn walk(
        &mut self,
        model: &Model,
        validated: &dyn Fn(&str) -> bool,
        message: &str,
        prefix: &str,
        seen: &mut Vec<String>,
    ) {
        let Some(m) = model.message(message) else { return };
        seen.push(message.to_owned());
        let join = |name: &str| {
            if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") }
        };
        for o in m.oneofs.iter().filter(|o| o.required) {
            let members = m
                .fields
                .iter()
                .filter(|f| f.oneof.as_deref() == Some(o.name.as_str()))
                .map(|f| f.name.clone())
                .collect();
            self.oneofs.push((join(&o.name), members));
        }
        for f in &m.fields {
            let path = join(&f.name);
            let element = match f.label {
                Label::Singular => path.clone(),
                Label::Repeated => format!("{path}[i]"),
                Label::Map => format!("{path}[key]"),
            };
            let r = field_rules(f, validated);
            if r.required {
                self.required_paths.push(path.clone());
                self.required.push(match f.label {
                    Label::Singular => format!("`{path}`"),
                    Label::Repeated | Label::Map => format!("`{path}` (at least one)"),
                });
            } else if f.presence == csikit_spec::Presence::Required && f.oneof.is_none() {
                self.unchecked.push(path.clone());
            }
            if let Some(bytes) = r.max_bytes {
                self.max_bytes.push((element.clone(), bytes));
            }
            if let Some(bytes) = r.max_total_bytes {
                self.max_total.push((path.clone(), bytes));
            }
            if r.non_negative {
                self.non_negative.push(path.clone());
            }
            if r.no_control_chars {
                self.no_control_chars.push(element.clone());
            }
            if r.secret_keys {
                self.secret_keys.push(path.clone());
            }
            if f.alpha {
                self.alpha.push(path.clone());
            }
            if f.secret {
                self.secrets.push(path.clone());
            }
            let Some(ty) =
                f.ty.full_name().filter(|t| model.message(t).is_some() || r.nested.is_some())
            else {
                continue;
            };
            match model.message(ty) {
                Some(nested) if !seen.iter().any(|s| s == ty) => {
                    if nested.alpha && !f.alpha {
                        self.alpha.push(format!("{path} (its type is alpha)"));
                    }
                    self.walk(model, validated, ty, &element, seen);
                }
                Some(_) => {}
                None => self.foreign.push((element, ty.to_owned())),
            }
        }
        seen.pop();
    }

    fn any_request_rule(&self) -> bool {
        !(self.required.is_empty()
            && self.oneofs.is_empty()
            && self.max_bytes.is_empty()
            && self.max_total.is_empty()
            && self.non_negative.is_empty()
            && self.no_control_chars.is_empty()
            && self.secret_keys.is_empty()
            && self.foreign.is_empty())
    }
}

fn code_list(paths: &[String]) -> String {
    paths.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
}

fn sized_list(paths: &[(String, u32)]) -> String {
    paths.iter().map(|(p, b)| format!("`{p}` ({b})")).collect::<Vec<_>>().join(", ")
}

/// The words for a plugin kind of an obligation.
fn plugin_words(plugin: &str) -> &'static str {
    match plugin {
        "Controller" => "Controller plugin",
        "Node" => "Node plugin",
        "GroupController" => "Group Controller plugin",
        _ => "plugin",
    }
}

fn capability_service_words(service: &str) -> &'static str {
    match service {
        "Controller" => "controller",
        "Node" => "node",
        "GroupController" => "group controller",
        _ => "",
    }
}

/// Whose words an obligation of `m` is, when not this release's own prose: the proto's comment
/// on a capability, or an older release's section carried into a release read from its proto.
fn obligation_provenance(m: &Method, from_comment: bool) -> String {
    match (&m.carried_from, from_comment) {
        (_, true) => " This is the proto's comment on the capability (\"Indicates the SP supports \
                       the ... RPC\"); the release's prose, where there is one, may name more \
                       conditions."
            .to_owned(),
        (Some(from), false) => format!(
            " Carried from {from}'s spec.md: this release is read from its proto alone and the \
             RPC's schema is unchanged since {from}; check it against this release's text."
        ),
        (None, false) => String::new(),
    }
}

/// The sentence saying who must implement `m`, and whose word that is; the phrase "No
/// obligation: optional" when the section states none. A test reads these against the Model.
pub fn obligation_line(model: &Model, m: &Method) -> String {
    let provenance =
        obligation_provenance(m, m.obligation.as_ref().is_some_and(|o| o.from_comment));
    let line = obligation_sentence(model, m);
    format!("{line}{provenance}")
}

/// [`obligation_line`] without the provenance.
fn obligation_sentence(model: &Model, m: &Method) -> String {
    match &m.obligation {
        Some(o) if o.service_wide => format!(
            "Every {} MUST implement it: its section names no condition, and the spec's \"RPC \
             Interface\" obliges the whole service (\"{}\").",
            plugin_words(&o.plugin),
            match o.plugin.as_str() {
                "Plugin" =>
                    "Both the Node Plugin and the Controller Plugin MUST implement this \
                             sets of RPCs",
                "Controller" => "The Controller Plugin MUST implement this sets of RPCs",
                _ => "The Node Plugin MUST implement this sets of RPCs",
            }
        ),
        Some(o) if o.if_any.is_empty() => {
            format!("Every {} MUST implement it, as its section says.", plugin_words(&o.plugin))
        }
        Some(o) => {
            let caps: Vec<String> = o
                .if_any
                .iter()
                .map(|c| {
                    format!("`{}` {} capability", c.name, capability_service_words(&c.service))
                })
                .collect();
            let whose = if o.from_comment {
                "the proto's comment on that capability"
            } else {
                "its section"
            };
            format!(
                "A {} MUST implement it if it has the {}, as {whose} says.",
                plugin_words(&o.plugin),
                caps.join(" or the ")
            )
        }
        None if model.states_obligation(m) => format!(
            "No obligation: optional. {}; left out, it answers UNIMPLEMENTED.",
            if m.section.is_some() {
                "Its section has no \"MUST implement this RPC call\" sentence"
            } else {
                "The spec has no section of its own for it"
            }
        ),
        None => match &model.source.carried {
            Some(c) => format!(
                "Not known from this source: what obliges a plugin to implement it is stated in \
                 the spec's prose, which this source does not have, and the RPC is new or \
                 changed since {}, whose prose the other RPCs' obligations are carried from.",
                c.from
            ),
            None => "Not known from this source: what obliges a plugin to implement it is stated \
                     in the spec's prose, which this source does not have."
                .to_owned(),
        },
    }
}

/// The sentence naming what `m` is serialised on (from the Model's serialisation key), or that
/// it is not.
pub fn serialisation_line(model: &Model, m: &Method) -> String {
    match model.serialisation_key(m) {
        Some(key) => format!(
            "**Serialised per {kind}** on `{field}` (the Model's serialisation key): while a call \
             on the same {kind} is in flight (of this RPC or another keyed on a {kind}), \
             [`Serialisation::FailFast`](csikit::server::Serialisation::FailFast) (the default) \
             answers this one ABORTED at once, and \
             [`Serialisation::Wait`](csikit::server::Serialisation::Wait) holds it until the calls \
             ahead finish, in arrival order (ABORTED only past its timeout). A call with an empty \
             `{field}` is not serialised.",
            kind = key.kind,
            field = key.field
        ),
        None if m.server_streaming || m.client_streaming => {
            "**Not serialised**: a streaming RPC only reads.".to_owned()
        }
        None => {
            "**Not serialised**: the request names no object two calls could race on.".to_owned()
        }
    }
}

/// The doc lines (without `///`) of the trait method for `m`. `made` lists the capabilities
/// defining it makes the builder advertise (`csi.v1`), `derived` whether the skeleton answers it
/// when the driver leaves it out.
pub fn method_doc(
    p: &Package<'_>,
    parts: &Parts,
    s: &Service,
    m: &Method,
    made: &[String],
    derived: bool,
) -> Vec<String> {
    let model = p.model;
    let mut lines = vec![format!("The `{}` RPC (`/{}/{}`).", m.name, s.full_name, m.name)];
    let error_enum = parts.errors.then(|| format!("{}Error", m.name));
    let error_link =
        error_enum.as_ref().map(|e| format!("[`{e}`](super::errors::{e})")).unwrap_or_default();

    // The spec's text.
    lines.push(String::new());
    lines.push("# The spec".to_owned());
    lines.push(String::new());
    // The release's own prose, else (for a release read from its proto alone) the section an
    // older release's spec.md has for it, carried because the RPC's schema is unchanged since.
    let own = m.section.as_deref().and_then(|a| model.section_prose(a)).map(|p| (p, None));
    let carried = || {
        let anchor = m.section.as_deref().filter(|_| m.carried_from.is_some())?;
        model.carried_section_prose(anchor).map(|(p, from)| (p, Some(from)))
    };
    let prose = own.or_else(carried);
    match prose {
        Some((prose, from)) if !prose.blocks.is_empty() => {
            let title = m.section.as_deref().and_then(|a| {
                model.sections.iter().find(|sec| sec.anchor == a).map(|sec| sec.title.clone())
            });
            let title = crate::prose::escape(&title.unwrap_or_else(|| m.name.clone()));
            match from {
                None => lines.push(format!("From the section \"{title}\" of {}:", p.source)),
                Some(from) => lines.push(format!(
                    "From the section \"{title}\" of {from}'s spec.md, carried: {} has the \
                     proto's comments only, and the RPC's schema is unchanged since {from}. \
                     This is {from}'s text: check it against the {} text.",
                    p.described_source(),
                    p.source
                )),
            }
            lines.push(String::new());
            let table = match &error_enum {
                Some(_) => format!(
                    "(The error table: its rows are {error_link}'s first {}.)",
                    m.errors.len()
                ),
                None => "(The error table is left out here.)".to_owned(),
            };
            lines.extend(crate::prose::prose_lines(&prose, &table));
        }
        _ => {
            let comment = crate::prose::comment_lines(&m.comment);
            if model.source.kind == SourceKind::Spec {
                lines.push(
                    "The spec's prose has no section of this RPC's own; from the proto's comment:"
                        .to_owned(),
                );
            } else if let Some(c) = &model.source.carried {
                lines.push(format!(
                    "{} has the proto's comments only: the spec's prose for this RPC is not in \
                     this source, and the RPC is new or changed since {}, so that release's \
                     prose is not carried for it.",
                    p.source, c.from
                ));
            } else {
                lines.push(format!(
                    "{} has the proto's comments only: the spec's prose for this RPC is not in \
                     this source (and is not borrowed from another release).",
                    p.source
                ));
            }
            lines.push(String::new());
            if comment.is_empty() {
                lines.push("The proto has no comment on this RPC.".to_owned());
            } else {
                lines.extend(comment);
            }
        }
    }

    // Who must implement it.
    lines.push(String::new());
    lines.push("# Who must implement it".to_owned());
    lines.push(String::new());
    lines.push(obligation_line(model, m));
    if !made.is_empty() {
        lines.push(String::new());
        let caps: Vec<String> = made.iter().map(|c| format!("`{c}`")).collect();
        lines.push(format!(
            "Defining this method makes the builder advertise {} in the derived capabilities; \
             a plugin that the spec obliges to implement it and leaves it out is reported at \
             start-up.",
            caps.join(" and ")
        ));
    }
    if derived {
        lines.push(String::new());
        lines.push(
            "Left out, the skeleton answers it itself from what the driver registered.".to_owned(),
        );
    }

    // What the skeleton has checked.
    let request = Rules::of(p, &m.input);
    let response = Rules::of(p, &m.output);
    lines.push(String::new());
    lines.push("# Checked before it runs".to_owned());
    lines.push(String::new());
    lines.push(
        "The skeleton's layers ([`Layers`](csikit::server::Layers), each on by default) have run:"
            .to_owned(),
    );
    lines.push(String::new());
    if m.alpha || s.alpha {
        lines.push(
            "- **Alpha**: this RPC is alpha; under \
             [`AlphaPolicy::Refuse`](csikit::alpha::AlphaPolicy::Refuse) it answers UNIMPLEMENTED \
             and this method never runs."
                .to_owned(),
        );
    }
    if !request.alpha.is_empty() {
        lines.push(format!(
            "- **Alpha fields**: under [`AlphaPolicy::Refuse`](csikit::alpha::AlphaPolicy::Refuse) \
             a request setting {} is refused INVALID_ARGUMENT.",
            code_list(&request.alpha)
        ));
    }
    request_lines(&request, &mut lines);
    lines.push(format!("- {}", serialisation_line(model, m)));
    if !request.secrets.is_empty() {
        lines.push(format!(
            "- **Secrets** ({}): never logged (the request is logged with its redacting `Debug`), \
             and scrubbed from the message of any error this method returns.",
            code_list(&request.secrets)
        ));
    }
    let stream = if m.server_streaming { "each streamed response" } else { "the response" };
    let mut response_line = format!(
        "- **Response checked** in debug builds (`Layers::validate_responses`): {stream} is \
         validated with the spec's rules, and one that breaks them becomes INTERNAL naming the \
         field."
    );
    if !response.required.is_empty() {
        response_line.push_str(&format!(" REQUIRED in it: {}.", response.required.join(", ")));
    }
    lines.push(response_line);

    // Errors.
    lines.push(String::new());
    lines.push("# Errors".to_owned());
    lines.push(String::new());
    match &error_enum {
        Some(e) => {
            let rows = crate::errors::catalog(model, m);
            let answers = crate::errors::answers_for_failures(&rows);
            let mut from = Vec::new();
            if !m.errors.is_empty() {
                from.push(format!(
                    "the {} rows of this RPC's table{}",
                    m.errors.len(),
                    m.carried_from
                        .as_ref()
                        .map(|f| format!(" (carried from {f})"))
                        .unwrap_or_default()
                ));
            }
            if !model.general_errors.is_empty() {
                from.push(format!("the general table's {}", model.general_errors.len()));
            }
            from.push(format!(
                "{}csikit's own for what the spec's tables do not name",
                if from.is_empty() { "" } else { "and " }
            ));
            let mut line = format!(
                "Answer every error with {error_link} (`{e}::Variant.status(message)`): {}.",
                from.join(", ")
            );
            let named: Vec<String> = answers
                .iter()
                .map(|(info, name, csikit)| {
                    format!(
                        "{}: [`{name}`](super::errors::{e}::{name}){}",
                        info.condition.to_lowercase(),
                        if *csikit { "" } else { " (the spec's row with that code)" }
                    )
                })
                .collect();
            if !named.is_empty() {
                line.push_str(&format!(
                    " For the failures every driver meets: {}.",
                    named.join("; ")
                ));
            }
            if let Some(provenance) = crate::errors::table_provenance(model, m, &p.source) {
                line.push(' ');
                line.push_str(&provenance);
            }
            lines.push(line);
        }
        None => lines.push(
            "The error catalog is not generated; answer with the codes the spec's error tables \
             name for this RPC."
                .to_owned(),
        ),
    }
    lines
}

/// The request-validation bullet and its rules.
fn request_lines(rules: &Rules, lines: &mut Vec<String>) {
    if !rules.any_request_rule() {
        lines.push(
            "- **Request validated** (`Layers::validate_requests`): its type states no rule to \
             check."
                .to_owned(),
        );
        if !rules.unchecked.is_empty() {
            lines.push(format!(
                "  REQUIRED but not checkable (the wire does not tell a bool's or a number's zero \
                 from unset): {}.",
                code_list(&rules.unchecked)
            ));
        }
        return;
    }
    // The message a missing field gets, on this request's first REQUIRED field.
    let example =
        rules.required_paths.first().map(|p| format!(" (`{p}: is REQUIRED`)")).unwrap_or_default();
    lines.push(format!(
        "- **Request validated** (`Layers::validate_requests`): a request breaking one of these \
         rules is answered INVALID_ARGUMENT naming every offending field{example}, and this \
         method never sees it; a nested field is checked where its parent is set:"
    ));
    let mut sub = |label: &str, text: String| {
        if !text.is_empty() {
            lines.push(format!("  - {label}: {text}."));
        }
    };
    sub("REQUIRED", rules.required.join(", "));
    sub(
        "one of REQUIRED",
        rules
            .oneofs
            .iter()
            .map(|(o, members)| format!("`{o}` ({})", code_list(members).replace(", ", " or ")))
            .collect::<Vec<_>>()
            .join(", "),
    );
    sub("at most N bytes", sized_list(&rules.max_bytes));
    sub("at most N bytes in total (keys and values, or all values)", sized_list(&rules.max_total));
    sub("not negative", code_list(&rules.non_negative));
    sub("no control characters", code_list(&rules.no_control_chars));
    sub("secret keys of the spec's characters", code_list(&rules.secret_keys));
    sub(
        "by its type's own rules",
        rules
            .foreign
            .iter()
            .map(|(path, ty)| format!("`{path}` (`{ty}`)"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    sub(
        "REQUIRED but not checkable (the wire does not tell a bool's or a number's zero from unset)",
        code_list(&rules.unchecked),
    );
}
