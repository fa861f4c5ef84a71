//! What each RPC's section obliges a plugin to implement: the sentence "A Controller Plugin
//! MUST implement this [`Rpc`] RPC call [if it has `X` controller capability]" (and its variants
//! across releases) read into [`Obligation`]s, with a diagnostic for such a sentence that cannot
//! be read. Then the "RPC Interface" list's sentences that oblige a whole service ("**Node
//! Service**: The Node Plugin MUST implement this sets of RPCs"), for the RPCs of that service
//! whose own section states nothing (NodePublishVolume, GetPluginInfo, GetPluginCapabilities):
//! an RPC's own sentence, conditional or not, is the more specific and wins.
//!
//! The proto states some of this too, in the comments on the capability enums' values, which is
//! all a release read from its `.proto` alone has: "Indicates the SP supports the `X` RPC" makes
//! `X` obliged with that capability (`from_comment`), and "The SP MUST also support `Y`" makes the
//! capability imply `Y` ([`Implication`]). Where the section states an obligation too, the
//! section's is kept, and one that contradicts the comment is reported.

use crate::comment;
use crate::diagnostic::{Diagnostic, Severity};
use crate::markdown::Doc;
use crate::model::{CapabilityRef, Implication, Model, Obligation};

/// The capability enums by service: the service the capability belongs to and the suffix of
/// its enum's full name.
const CAPABILITY_ENUMS: [(&str, &str); 3] = [
    ("Controller", "ControllerServiceCapability.RPC.Type"),
    ("Node", "NodeServiceCapability.RPC.Type"),
    ("GroupController", "GroupControllerServiceCapability.RPC.Type"),
];

/// Reads what the comments on the capability enums' values oblige: the RPCs they say the
/// capability stands for (an obligation `from_comment` on each, the capabilities of one RPC
/// gathered as alternatives) and the capabilities they say it implies
/// ([`Model::implications`]). A statement naming an RPC or capability this release does not
/// declare is a warning and obliges nothing.
pub fn attach_capability_statements(model: &mut Model, diags: &mut Vec<Diagnostic>) {
    let mut obliged: Vec<(usize, usize, CapabilityRef)> = Vec::new();
    let mut implications = Vec::new();
    for (service, suffix) in CAPABILITY_ENUMS {
        let Some(e) = model.enums.iter().find(|e| e.full_name.ends_with(suffix)) else { continue };
        let warn = |message: String, diags: &mut Vec<Diagnostic>| {
            let diagnostic = match model.files.get(e.span.file) {
                Some(src) => Diagnostic::at(
                    Severity::Warning,
                    src,
                    (e.span.offset, e.span.len),
                    message,
                    "in this enum's comments",
                ),
                None => Diagnostic::global(Severity::Warning, message),
            };
            diags.push(diagnostic.with_help("the statement is left out of the model"));
        };
        let capability =
            |name: &str| CapabilityRef { service: service.to_owned(), name: name.to_owned() };
        let declared = |name: &str| e.values.iter().any(|v| v.name == name);
        for v in &e.values {
            let text = comment::normalise(&v.comment);
            if let Some(rpc) = comment::capability_rpc(&text) {
                let at = model.services.iter().enumerate().find_map(|(si, s)| {
                    s.methods.iter().position(|m| m.name == rpc).map(|mi| (si, mi))
                });
                match at {
                    Some((si, mi)) => obliged.push((si, mi, capability(&v.name))),
                    None => warn(
                        format!(
                            "capability '{}' stands for rpc '{rpc}', which is not declared",
                            v.name
                        ),
                        diags,
                    ),
                }
            }
            if let Some((subject, required)) = comment::capability_requires(&text) {
                let subject = subject.unwrap_or(&v.name);
                match [subject, required].into_iter().find(|n| !declared(n)) {
                    None => implications.push(Implication {
                        capability: capability(subject),
                        requires: capability(required),
                    }),
                    Some(unknown) => warn(
                        format!(
                            "capability '{}' names '{unknown}', which is not a {service} capability",
                            v.name
                        ),
                        diags,
                    ),
                }
            }
        }
    }
    for (si, mi, cap) in obliged {
        let plugin = model.services[si].name.clone();
        let method = &mut model.services[si].methods[mi];
        match &mut method.obligation {
            Some(o) if o.from_comment => {
                if !o.if_any.contains(&cap) {
                    o.if_any.push(cap);
                }
            }
            _ => {
                method.obligation = Some(Obligation {
                    plugin,
                    if_any: vec![cap],
                    service_wide: false,
                    from_comment: true,
                });
            }
        }
    }
    model.implications = implications;
}

/// Whether what a capability's comment obliges (`from_comment`) agrees with what the prose
/// obliges: the prose names the same plugin (or every plugin) and, unless it obliges always,
/// each capability the comment names among its conditions. The comment states one way the RPC
/// becomes obliged; the prose may list more ("if it has GET_VOLUME_STATS node capability or
/// VOLUME_CONDITION node capability" beside the comment on GET_VOLUME_STATS).
pub fn comment_agrees(comment: &Obligation, prose: &Obligation) -> bool {
    (prose.plugin == comment.plugin || prose.plugin == "Plugin")
        && (prose.if_any.is_empty() || comment.if_any.iter().all(|c| prose.if_any.contains(c)))
}

/// An obligation in words, for diagnostics: "Controller Plugin if it has CREATE_DELETE_VOLUME".
pub fn describe(o: &Obligation) -> String {
    let names: Vec<&str> = o.if_any.iter().map(|c| c.name.as_str()).collect();
    let plugin = match o.plugin.as_str() {
        "Plugin" => "every Plugin".to_owned(),
        other => format!("{other} Plugin"),
    };
    if names.is_empty() {
        format!("{plugin}, always")
    } else {
        format!("{plugin} if it has {}", names.join(" or "))
    }
}

/// The phrase every obligation sentence holds, once the RPC's own name (which some sections put
/// between "this" and "RPC": "MUST implement this `GetSnapshot` RPC call") is taken out.
const PHRASE: &str = "MUST implement this RPC call";

/// Where `body` states the obligation phrase for `rpc`, either way it is worded: the byte offset
/// of "MUST" and the phrase's length there.
fn find_phrase(body: &str, rpc: &str) -> Option<(usize, usize)> {
    let named = format!("MUST implement this `{rpc}` RPC call");
    [PHRASE.to_owned(), named]
        .into_iter()
        .filter_map(|p| body.find(&p).map(|at| (at, p.len())))
        .min()
}

/// Reads the obligation sentence of every RPC that has a section in `doc` (file `file` of the
/// model).
pub fn attach_obligations(model: &mut Model, doc: &Doc, file: usize, diags: &mut Vec<Diagnostic>) {
    let text = model.files[file].text().to_owned();
    let capabilities = capability_names(model);
    let mut found = Vec::new();
    // The RPCs whose section holds the phrase, read or not: the service's sentence never
    // stands in for one the section states.
    let mut stated = Vec::new();
    for (si, service) in model.services.iter().enumerate() {
        for (mi, method) in service.methods.iter().enumerate() {
            let Some(anchor) = &method.section else { continue };
            let Some(hi) = doc.headings.iter().position(|h| &h.anchor == anchor) else { continue };
            let heading = &doc.headings[hi];
            let end = doc.headings[hi + 1..]
                .iter()
                .find(|h| h.level <= heading.level)
                .map_or(text.len(), |h| h.span.start);
            let body = &text[heading.span.end..end];
            let Some((at, len)) = find_phrase(body, &method.name) else { continue };
            stated.push((si, mi));
            let offset = heading.span.end + at;
            let sentence = sentence_around(&text, offset);
            let sentence = sentence.replace(&format!("this `{}` RPC", method.name), "this RPC");
            match read_sentence(&sentence, &service.name, &capabilities) {
                Ok(obligation) => found.push((si, mi, obligation, offset, len)),
                Err(why) => diags.push(
                    Diagnostic::at(
                        Severity::Warning,
                        &model.files[file],
                        (offset, len),
                        format!("cannot read what rpc '{}' obliges: {why}", method.name),
                        "this obligation sentence",
                    )
                    .with_help(
                        "expected \"A <Controller|Node|Group Controller> Plugin MUST implement this \
                         RPC call [if it has `CAPABILITY` <controller|node> capability]\"",
                    ),
                ),
            }
        }
    }
    for (si, mi, obligation, offset, len) in found {
        let method = &mut model.services[si].methods[mi];
        if let Some(said) = method.obligation.as_ref().filter(|o| o.from_comment)
            && !comment_agrees(said, &obligation)
        {
            diags.push(
                Diagnostic::at(
                    Severity::Warning,
                    &model.files[file],
                    (offset, len),
                    format!(
                        "rpc '{}': the section obliges the {} but the proto's capability comment says the {}",
                        method.name,
                        describe(&obligation),
                        describe(said)
                    ),
                    "this obligation sentence",
                )
                .with_help("the section's obligation is kept; correct whichever of the two is wrong"),
            );
        }
        method.obligation = Some(obligation);
    }
    for (service, plugin) in service_sentences(&text, file, model, diags) {
        let Some(si) = model.services.iter().position(|s| s.name == service) else { continue };
        for (mi, method) in model.services[si].methods.iter_mut().enumerate() {
            // An alpha or deprecated RPC is never required of every plugin, whatever the list
            // says of its service; and a capability's comment, which names a condition, is
            // the more specific.
            if stated.contains(&(si, mi))
                || method.alpha
                || method.deprecated
                || method.obligation.is_some()
            {
                continue;
            }
            method.obligation = Some(Obligation {
                plugin: plugin.clone(),
                if_any: Vec::new(),
                service_wide: true,
                from_comment: false,
            });
        }
    }
}

/// The phrase of the sentences that oblige a whole service ("this sets of RPCs" in every
/// release; "this set of RPCs" read too).
const SERVICE_PHRASES: [&str; 2] =
    ["MUST implement this sets of RPCs", "MUST implement this set of RPCs"];

/// The list items "**X Service**: <plugin> MUST implement this sets of RPCs" of `text`: the
/// service's proto name (`X` without spaces) and the plugin they oblige.
/// An item whose plugin cannot be read is a warning, and obliges nothing.
fn service_sentences(
    text: &str,
    file: usize,
    model: &Model,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let here = line_start;
        line_start += line.len();
        let Some((at, phrase)) =
            SERVICE_PHRASES.iter().find_map(|p| line.find(p).map(|at| (at, *p)))
        else {
            continue;
        };
        let item = line.trim_start().trim_start_matches(['*', '-']).trim_start();
        let Some(rest) = item.strip_prefix("**") else { continue };
        let Some((name, rest)) = rest.split_once("**") else { continue };
        let Some(service) = name.trim().strip_suffix(" Service") else { continue };
        let subject = rest.trim_start_matches(':').trim();
        let subject = subject.split(phrase).next().unwrap_or_default();
        let words = subject.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
        let plugin = match words.trim_start_matches("the ").trim_start_matches("a ") {
            "controller plugin" => "Controller",
            "node plugin" => "Node",
            "both the node plugin and the controller plugin"
            | "both the controller plugin and the node plugin" => "Plugin",
            other => {
                diags.push(
                    Diagnostic::at(
                        Severity::Warning,
                        &model.files[file],
                        (here + at, phrase.len()),
                        format!("cannot read which plugin '{other}' is"),
                        "this service's obligation",
                    )
                    .with_help(
                        "expected \"**<Name> Service**: The <Controller|Node> Plugin MUST \
                         implement this sets of RPCs\"",
                    ),
                );
                continue;
            }
        };
        out.push((service.replace(' ', ""), plugin.to_owned()));
    }
    out
}

/// The capability enums' value names, per service: `(service, names)`.
fn capability_names(model: &Model) -> Vec<(&'static str, Vec<String>)> {
    CAPABILITY_ENUMS
        .into_iter()
        .map(|(service, suffix)| {
            let names = model
                .enums
                .iter()
                .find(|e| e.full_name.ends_with(suffix))
                .map(|e| e.values.iter().map(|v| v.name.clone()).collect())
                .unwrap_or_default();
            (service, names)
        })
        .collect()
}

/// The sentence of `text` that holds byte `offset`: from the previous sentence end or blank line
/// to the next period.
fn sentence_around(text: &str, offset: usize) -> &str {
    let start = text[..offset]
        .rfind(". ")
        .map(|i| i + 2)
        .max(text[..offset].rfind("\n\n").map(|i| i + 2))
        .unwrap_or(0);
    let end = text[offset..].find('.').map_or(text.len(), |i| offset + i);
    &text[start..end]
}

/// Reads one obligation sentence of an RPC of `service` (the proto service it is declared in).
fn read_sentence(
    sentence: &str,
    service: &str,
    capabilities: &[(&'static str, Vec<String>)],
) -> Result<Obligation, String> {
    let sentence = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    let (subject, rest) = sentence.split_once(PHRASE).ok_or("no obligation phrase")?;
    let subject = subject.trim().trim_start_matches("A ").trim_start_matches("An ").trim();
    let plugin = match subject.to_ascii_lowercase().as_str() {
        "controller plugin" => "Controller",
        "node plugin" => "Node",
        "group controller plugin" | "plugin that implements groupcontroller" => "GroupController",
        "plugin" => "Plugin",
        other => return Err(format!("unknown plugin '{other}'")),
    };
    let condition = rest.trim();
    if condition.is_empty() {
        return Ok(Obligation {
            plugin: plugin.to_owned(),
            if_any: Vec::new(),
            service_wide: false,
            from_comment: false,
        });
    }
    let condition =
        condition.strip_prefix("if ").ok_or("a condition that does not start with 'if'")?;
    let mut if_any = Vec::new();
    for alternative in condition.split(" or ") {
        let words: Vec<&str> = alternative.split(' ').map(|w| w.trim_matches('`')).collect();
        let Some(i) = words.iter().position(|w| comment::capability_shaped(w)) else {
            return Err(format!("no capability named in '{alternative}'"));
        };
        let name = words[i];
        // The capability's service: said after the name ("controller capability"), else the
        // service the RPC is declared in (a GroupController RPC's "controller capability" is
        // the group controller's own).
        let said = words.get(i + 1).map(|w| w.to_ascii_lowercase());
        let own = if service == "GroupController" { "GroupController" } else { service };
        let cap_service = match said.as_deref() {
            Some("controller") if service == "GroupController" => "GroupController",
            Some("controller") => "Controller",
            Some("node") => "Node",
            _ => own,
        };
        let known = capabilities
            .iter()
            .any(|(s, names)| *s == cap_service && names.iter().any(|n| n == name));
        if !known {
            return Err(format!("'{name}' is not a {cap_service} capability of this release"));
        }
        if_any.push(CapabilityRef { service: cap_service.to_owned(), name: name.to_owned() });
    }
    Ok(Obligation { plugin: plugin.to_owned(), if_any, service_wide: false, from_comment: false })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Vec<(&'static str, Vec<String>)> {
        vec![
            ("Controller", vec!["CREATE_DELETE_VOLUME".into(), "PUBLISH_UNPUBLISH_VOLUME".into()]),
            ("Node", vec!["GET_VOLUME_STATS".into(), "VOLUME_CONDITION".into()]),
            ("GroupController", vec!["CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT".into()]),
        ]
    }

    #[test]
    fn the_sentences_of_every_release() {
        let read = |s: &str, service: &str| read_sentence(s, service, &caps());
        let always = read("A Controller Plugin MUST implement this RPC call", "Controller");
        assert_eq!(
            always,
            Ok(Obligation {
                plugin: "Controller".into(),
                if_any: vec![],
                service_wide: false,
                from_comment: false
            })
        );
        let o = read(
            "A Node plugin MUST implement this RPC call if it has GET_VOLUME_STATS node capability or VOLUME_CONDITION node capability",
            "Node",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.if_any.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["GET_VOLUME_STATS", "VOLUME_CONDITION"]
        );
        let o = read(
            "A Node Plugin MUST implement this RPC call if the plugin has `PUBLISH_UNPUBLISH_VOLUME` controller capability",
            "Node",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            o.if_any,
            [CapabilityRef {
                service: "Controller".into(),
                name: "PUBLISH_UNPUBLISH_VOLUME".into()
            }]
        );
        let o = read(
            "A Group Controller Plugin MUST implement this RPC call if it has `CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT` controller capability",
            "GroupController",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.if_any[0].service, "GroupController");
        assert!(read("A Plugin MUST implement this RPC call", "Identity").is_ok());
        let o = read(
            "A Plugin that implements GroupController MUST implement this RPC call",
            "GroupController",
        );
        assert_eq!(o.map(|o| o.plugin), Ok("GroupController".to_owned()));
        assert!(read("A Storage Plugin MUST implement this RPC call", "Controller").is_err());
        assert!(
            read(
                "A Controller Plugin MUST implement this RPC call if it has `NO_SUCH` capability",
                "Controller"
            )
            .is_err()
        );
        assert!(
            read(
                "A Controller Plugin MUST implement this RPC call when it feels like it",
                "Controller"
            )
            .is_err()
        );
    }
}
