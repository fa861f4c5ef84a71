//! What a walk reached: each RPC in each lifecycle state of what it was about (a volume's
//! CREATED … PUBLISHED or DELETED, a snapshot's, a name's), and each invariant: how many answers
//! were held to it and how many broke it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::rules::Rule;

/// Counts of a walk.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// (RPC, state) → calls.
    pub calls: BTreeMap<(&'static str, &'static str), u64>,
    /// (RPC, kind or use of the live volume it named) → calls, for the RPCs that read, validate,
    /// grow or measure one volume: a call counts once under each of its volume's kinds and uses.
    pub kinds: BTreeMap<(&'static str, &'static str), u64>,
    /// Rule id → (answers held to it, answers that broke it).
    pub rules: BTreeMap<String, (u64, u64)>,
}

impl Coverage {
    /// A call of `rpc` on something in `state` (a live volume of `kinds`), and the rules its
    /// answer was held to.
    pub(crate) fn record(
        &mut self,
        rpc: &'static str,
        (state, kinds): (&'static str, &[&'static str]),
        checked: &[Rule],
    ) {
        *self.calls.entry((rpc, state)).or_default() += 1;
        for kind in kinds {
            *self.kinds.entry((rpc, kind)).or_default() += 1;
        }
        for rule in checked {
            self.rules.entry(rule.id()).or_default().0 += 1;
        }
    }

    /// What a call of `rpc` found at its paths (see `judge/seen`), each counted as a kind.
    pub(crate) fn seen(&mut self, rpc: &'static str, what: Vec<&'static str>) {
        for what in what {
            *self.kinds.entry((rpc, what)).or_default() += 1;
        }
    }

    /// An answer broke the rule named `id` (an invariant, a row or an answer check).
    pub(crate) fn broke(&mut self, id: &str) {
        let e = self.rules.entry(id.to_owned()).or_default();
        e.1 += 1;
        e.0 = e.0.max(e.1);
    }

    /// The table: one line per RPC with its calls by state, then the invariants.
    pub fn text(&self) -> String {
        let mut out =
            String::from("coverage: calls by RPC and the lifecycle state of what they named\n");
        let mut by_rpc: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
        for ((rpc, state), n) in &self.calls {
            by_rpc.entry(rpc).or_default().push((state, *n));
        }
        for (rpc, states) in by_rpc {
            let cells: Vec<String> = states.iter().map(|(s, n)| format!("{s} {n}")).collect();
            let _ = writeln!(out, "  {rpc:<27} {}", cells.join(", "));
        }
        out.push_str("coverage: calls on a live volume by its kind and use\n");
        let mut by_rpc: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for ((rpc, kind), n) in &self.kinds {
            by_rpc.entry(rpc).or_default().push(format!("{kind} {n}"));
        }
        for (rpc, cells) in by_rpc {
            let _ = writeln!(out, "  {rpc:<27} {}", cells.join(", "));
        }
        out.push_str("coverage: invariants (answers held to each; broken)\n");
        for (id, (checked, broken)) in &self.rules {
            let _ = writeln!(out, "  {checked:>7} {broken:>4}  {id}");
        }
        out
    }

    /// The table as JSON: `{"calls": [{"rpc", "state", "count"}], "kinds": [{"rpc", "kind",
    /// "count"}], "invariants": [{"rule", "checked", "broken"}]}`.
    pub fn json(&self) -> serde_json::Value {
        let calls: Vec<serde_json::Value> = self
            .calls
            .iter()
            .map(|((rpc, state), n)| serde_json::json!({"rpc": rpc, "state": state, "count": n}))
            .collect();
        let kinds: Vec<serde_json::Value> = self
            .kinds
            .iter()
            .map(|((rpc, kind), n)| serde_json::json!({"rpc": rpc, "kind": kind, "count": n}))
            .collect();
        let rules: Vec<serde_json::Value> = self
            .rules
            .iter()
            .map(|(id, (c, b))| serde_json::json!({"rule": id, "checked": c, "broken": b}))
            .collect();
        serde_json::json!({"calls": calls, "kinds": kinds, "invariants": rules})
    }
}
