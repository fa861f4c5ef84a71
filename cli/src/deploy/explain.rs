//! The sidecar table as markdown, for the docs page "Deploying a csikit driver"
//! (`cli/DEPLOYING.md`), whose generated section a test holds to this output: what each
//! capability adds to the manifests is stated once, in the table.

use std::fmt::Write as _;

use super::derive::obliged_rpcs;
use super::table::{Condition, Distributed, Role, Table};

fn conditions(when: &[Condition], when_any: &[Condition]) -> String {
    let all: Vec<String> = when.iter().map(shown).collect();
    let any: Vec<String> = when_any.iter().map(shown).collect();
    match (all.is_empty(), any.is_empty()) {
        (true, true) => "always".to_owned(),
        (false, true) => all.join(" and "),
        (true, false) => any.join(" or "),
        (false, false) => format!("{} and ({})", all.join(" and "), any.join(" or ")),
    }
}

/// A condition as the page writes it: `` `GET_CAPACITY` (controller; GetCapacity) ``.
fn shown(c: &Condition) -> String {
    match c.capability() {
        Some((service, name)) => {
            let rpcs = obliged_rpcs(service, name);
            if rpcs.is_empty() {
                format!("`{name}` ({service})")
            } else {
                format!("`{name}` ({service}; {})", rpcs.join(", "))
            }
        }
        None => format!("`{c}`"),
    }
}

/// Table cells hold no `|`.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The generated part of the docs page.
pub fn markdown(table: &Table) -> String {
    let mut out = String::new();
    out.push_str(
        "| sidecar | image | deployed when the plugin reports | runs in | distributed | CSI spec | \
         Kubernetes |\n|---|---|---|---|---|---|---|\n",
    );
    for s in &table.sidecar {
        let runs = match s.role {
            Role::Controller => "controller Deployment",
            Role::Node => "node DaemonSet",
            Role::Both => "every pod",
        };
        let distributed = match s.distributed {
            Some(Distributed::OnNodes) => "on every node",
            Some(Distributed::LeftOut) => "left out",
            Some(Distributed::Refused) => "refused",
            None => "on every node",
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {} | {runs} | {distributed} | {} | from {} |",
            s.name,
            s.image_ref(),
            conditions(&s.when, &s.when_any),
            s.csi_spec,
            s.kubernetes_min
        );
    }
    out.push_str("\nFlags and environment, beyond `--csi-address` and `--leader-election`:\n\n");
    out.push_str("| sidecar | flag | when | why | source |\n|---|---|---|---|---|\n");
    for s in &table.sidecar {
        // A flag and an environment variable are rows of one table: what, when, why, source.
        let flags = s
            .flag
            .iter()
            .filter(|f| !f.arg.starts_with("--csi-address") && f.arg != "--leader-election")
            .map(|f| (format!("`{}`", cell(&f.arg)), &f.when, &f.why, &f.source));
        let env = s
            .env
            .iter()
            .map(|e| (format!("env `{}` from `{}`", e.name, e.field), &e.when, &e.why, &e.source));
        for (what, when, why, source) in flags.chain(env) {
            let _ = writeln!(
                out,
                "| {} | {what} | {} | {} | {} |",
                s.name,
                conditions(when, &[]),
                cell(why),
                cell(source)
            );
        }
    }
    out.push_str(
        "\nRBAC rules granted only under a condition (the others always, as published):\n\n",
    );
    out.push_str("| sidecar | rule | when | why |\n|---|---|---|---|\n");
    for s in &table.sidecar {
        for r in s.rule.iter().filter(|r| !r.when.is_empty()) {
            let groups: Vec<&str> =
                r.api_groups.iter().map(|g| if g.is_empty() { "core" } else { g }).collect();
            let _ = writeln!(
                out,
                "| {} | {} {} `{}` | {} | {} |",
                s.name,
                groups.join(","),
                r.resources.join(","),
                r.verbs.join(","),
                conditions(&r.when, &[]),
                cell(r.why.as_deref().unwrap_or_default())
            );
        }
    }
    out.push_str("\nSources of the rules: ");
    let sources: Vec<String> =
        table.sidecar.iter().map(|s| format!("{}: {}", s.name, s.rbac_source)).collect();
    out.push_str(&sources.join("; "));
    out.push_str(".\n");
    if !table.capability_note.is_empty() {
        out.push_str(
            "\nCapabilities no sidecar serves: deploy writes a note on the manifests.\n\n",
        );
        out.push_str("| capability | note | source |\n|---|---|---|\n");
        for n in &table.capability_note {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                conditions(std::slice::from_ref(&n.capability), &[]),
                cell(&n.why),
                cell(&n.source)
            );
        }
    }
    out
}
