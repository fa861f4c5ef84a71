//! The rules that have one home, found by their shape in the syntax tree rather than by a line of
//! text: a path that resolves (through the file's `use` names) to a given function or type, a
//! method called by name, a function defined under a name, a literal, and two shapes of their own
//! (three bytes read big-endian, a text replaced by the redaction mask). A line written another
//! way, a `use ... as` alias or a second definition inside an `impl` block is still found; a
//! comment, a test or a `#[cfg(test)]` module is not.

use std::collections::{HashMap, HashSet};

use syn::visit::{self, Visit};

use crate::imports;
use crate::syntax::{self, UseEntry};
use crate::tree::{self, Source};

/// A rule with one home: the files where it lives, and what a copy of it looks like.
pub struct Rule {
    pub name: &'static str,
    pub home: &'static [&'static str],
    pub marks: &'static [Mark],
}

/// One shape a copy of a rule takes.
pub enum Mark {
    /// A path (a call, a type, a value) whose resolved segments end with these.
    PathEnds(&'static [&'static str]),
    /// A path whose resolved segments start with these.
    PathStarts(&'static [&'static str]),
    /// A path with this segment anywhere.
    PathHas(&'static str),
    /// A method called by this name.
    Method(&'static str),
    /// A function or method defined under this name.
    Defines(&'static str),
    /// A string or byte-string literal holding this text.
    Literal(&'static str),
    /// A string literal a text is compared with (an argument of `strip_prefix`, `starts_with`,
    /// `split_once` ...; a pattern; a side of `==`) that is one of these words, or starts with
    /// one followed by `:`.
    Compared(&'static [&'static str]),
    /// A string literal equal to one of the home's literals that passes this test.
    HomeLiteral(fn(&str) -> bool),
    /// Three bytes read as a big-endian integer: an indexed byte shifted left by 16, or
    /// `from_be_bytes([0, a, b, c])`.
    BigEndian24,
    /// A text replacement (`replace`, `replacen`, `replace_range`) that writes the redaction mask
    /// (the literal `<redacted>` or a path ending in `REDACTED`).
    ReplaceByMask,
}

/// Methods that compare a text with a literal.
const MATCHERS: &[&str] = &[
    "strip_prefix",
    "strip_suffix",
    "starts_with",
    "ends_with",
    "split_once",
    "rsplit_once",
    "split",
    "splitn",
    "find",
    "contains",
    "trim_start_matches",
    "eq_ignore_ascii_case",
];

fn is_sanity_secret_key(s: &str) -> bool {
    s.len() > "Secret".len()
        && s.ends_with("Secret")
        && s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
}

pub const RULES: &[Rule] = &[
    Rule {
        name: "binding a unix socket (stale-socket removal)",
        home: &["runtime/src/endpoint/socket.rs"],
        marks: &[
            Mark::PathEnds(&["UnixListener", "bind"]),
            Mark::PathEnds(&["UnixListener", "bind_addr"]),
            Mark::PathEnds(&["UnixDatagram", "bind"]),
            Mark::PathEnds(&["UnixSocket", "new_stream"]),
            Mark::PathEnds(&["UnixSocket", "new_datagram"]),
        ],
    },
    Rule {
        name: "installing a signal handler",
        home: &["runtime/src/endpoint/signal.rs"],
        marks: &[
            Mark::PathStarts(&["tokio", "signal"]),
            Mark::PathStarts(&["signal_hook"]),
            Mark::PathStarts(&["signal_hook_tokio"]),
            Mark::PathStarts(&["ctrlc"]),
            Mark::PathStarts(&["libc", "signal"]),
            Mark::PathStarts(&["libc", "sigaction"]),
            Mark::PathStarts(&["nix", "sys", "signal"]),
            Mark::PathHas("SignalKind"),
        ],
    },
    Rule {
        name: "reading an HTTP/2 frame header",
        home: &["runtime/src/h2frame.rs"],
        marks: &[Mark::BigEndian24],
    },
    Rule {
        name: "the HTTP/2 connection preface",
        home: &["runtime/src/h2frame.rs"],
        marks: &[Mark::Literal("PRI * HTTP/2.0")],
    },
    Rule {
        name: "parsing an endpoint",
        home: &["runtime/src/endpoint.rs"],
        marks: &[Mark::Compared(&["unix", "tcp"])],
    },
    Rule {
        name: "scrubbing secrets from a message",
        home: &["runtime/src/redact.rs"],
        marks: &[Mark::Defines("scrub"), Mark::ReplaceByMask, Mark::Literal("<redacted>")],
    },
    Rule {
        name: "csi-sanity's secrets file and its kinds",
        home: &["runtime/src/secrets.rs"],
        marks: &[Mark::HomeLiteral(is_sanity_secret_key)],
    },
    Rule {
        name: "replacing a file atomically (a temporary file, then a rename)",
        // xtask's tree writer swaps whole folders, each file written by the one writer.
        home: &["runtime/src/fs.rs", "cli/src/tree.rs"],
        marks: &[
            Mark::PathEnds(&["fs", "rename"]),
            Mark::PathStarts(&["libc", "rename"]),
            Mark::PathStarts(&["libc", "renameat"]),
            Mark::PathStarts(&["libc", "renameat2"]),
            Mark::PathHas("NamedTempFile"),
            Mark::Method("persist"),
            Mark::Method("persist_noclobber"),
            Mark::Method("tempfile_in"),
            Mark::Method("into_temp_path"),
        ],
    },
];

/// A place where a file shows a rule's shape.
struct Sighting {
    pub path: String,
    pub rule: usize,
    /// What was seen, and in which item: "calls `std::fs::rename` (in `fn save`)".
    pub what: String,
}

/// Every sighting of every rule in the product files (tests and generated code aside), and the
/// files that do not parse.
fn sightings(files: &[Source], rules: &[Rule]) -> (Vec<Sighting>, Vec<String>) {
    let mut home_literals: Vec<HashSet<String>> = vec![HashSet::new(); rules.len()];
    for (i, rule) in rules.iter().enumerate() {
        if !rule.marks.iter().any(|m| matches!(m, Mark::HomeLiteral(_))) {
            continue;
        }
        for file in files.iter().filter(|f| rule.home.contains(&f.path.as_str())) {
            if let Ok(ast) = syn::parse_file(&file.text) {
                let mut all = Literals::default();
                all.visit_file(&ast);
                home_literals[i].extend(all.0);
            }
        }
    }
    let test_files: HashSet<String> =
        imports::crates(files).into_iter().flat_map(|c| c.test_files).collect();
    let mut found = Vec::new();
    let mut broken = Vec::new();
    for file in tree::product(files).filter(|f| !test_files.contains(&f.path)) {
        let ast = match syn::parse_file(&file.text) {
            Ok(ast) => ast,
            Err(e) => {
                broken.push(format!("{}: does not parse: {e}", file.path));
                continue;
            }
        };
        let mut aliases = Aliases::default();
        aliases.visit_file(&ast);
        let mut finder = Finder {
            rules,
            home_literals: &home_literals,
            aliases: &aliases.0,
            context: Vec::new(),
            found: Vec::new(),
        };
        finder.visit_file(&ast);
        found.extend(finder.found.into_iter().map(|(rule, what)| Sighting {
            path: file.path.clone(),
            rule,
            what,
        }));
    }
    (found, broken)
}

/// The problems: a rule's shape outside its home, and a home that no longer shows its rule (the
/// table is then out of date).
pub fn check(files: &[Source], rules: &[Rule]) -> Vec<String> {
    let (found, mut problems) = sightings(files, rules);
    for (i, rule) in rules.iter().enumerate() {
        for home in rule.home {
            if !found.iter().any(|s| s.rule == i && s.path == *home) {
                problems.push(format!(
                    "{home}: shows no shape of {} any more: update shapes::RULES",
                    rule.name
                ));
            }
        }
    }
    let mut seen = HashSet::new();
    for s in &found {
        let rule = &rules[s.rule];
        if rule.home.contains(&s.path.as_str()) || !seen.insert((&s.path, s.rule, &s.what)) {
            continue;
        }
        problems.push(format!(
            "{}: {}: {} lives in {}; call it",
            s.path,
            s.what,
            rule.name,
            rule.home.join(" and ")
        ));
    }
    problems
}

/// Every string literal of a file (the home's, for [`Mark::HomeLiteral`]).
#[derive(Default)]
struct Literals(HashSet<String>);

impl<'ast> Visit<'ast> for Literals {
    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.0.insert(lit.value());
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        for lit in syntax::read_tokens(mac.tokens.clone()).literals {
            if let syn::Lit::Str(s) = lit {
                self.0.insert(s.value());
            }
        }
    }
}

/// The names a file's `use` items bring in, wherever they stand (a function body's too), with
/// the paths they stand for.
#[derive(Default)]
struct Aliases(HashMap<String, Vec<Vec<String>>>);

impl<'ast> Visit<'ast> for Aliases {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        for UseEntry { name, path } in syntax::flatten_use(&item.tree) {
            if let Some(name) = name {
                self.0.entry(name).or_default().push(path);
            }
        }
    }
}

struct Finder<'a> {
    rules: &'a [Rule],
    home_literals: &'a [HashSet<String>],
    aliases: &'a HashMap<String, Vec<Vec<String>>>,
    /// The items being walked, innermost last, to say where a sighting is.
    context: Vec<String>,
    found: Vec<(usize, String)>,
}

impl Finder<'_> {
    fn note(&mut self, rule: usize, what: String) {
        let place = match self.context.last() {
            Some(item) => format!("{what} (in {item})"),
            None => what,
        };
        self.found.push((rule, place));
    }

    /// The full paths `segments` may stand for: as written, and through the file's `use` names
    /// (twice, for a name that a `use` brings in from another `use` name).
    fn resolve(&self, segments: &[String]) -> Vec<Vec<String>> {
        let mut out = vec![segments.to_vec()];
        let mut frontier = vec![segments.to_vec()];
        for _ in 0..2 {
            let mut next = Vec::new();
            for path in &frontier {
                for full in self.aliases.get(&path[0]).into_iter().flatten() {
                    if full.first() == path.first() && full.len() == 1 {
                        continue;
                    }
                    let joined: Vec<String> = full.iter().chain(&path[1..]).cloned().collect();
                    if !out.contains(&joined) {
                        out.push(joined.clone());
                        next.push(joined);
                    }
                }
            }
            frontier = next;
        }
        out
    }

    fn check_path(&mut self, segments: &[String]) {
        if segments.is_empty() {
            return;
        }
        let candidates = self.resolve(segments);
        for (i, rule) in self.rules.iter().enumerate() {
            for mark in rule.marks {
                let hit = candidates.iter().find(|c| match mark {
                    Mark::PathEnds(end) => c.ends_with_str(end),
                    Mark::PathStarts(start) => c.starts_with_str(start),
                    Mark::PathHas(part) => c.iter().any(|s| s == part),
                    _ => false,
                });
                if let Some(full) = hit {
                    self.note(i, format!("names `{}`", full.join("::")));
                }
            }
        }
    }

    fn check_method(&mut self, name: &str) {
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.marks.iter().any(|m| matches!(m, Mark::Method(n) if *n == name)) {
                self.note(i, format!("calls `.{name}()`"));
            }
        }
    }

    fn check_literal(&mut self, lit: &syn::Lit) {
        let text = match lit {
            syn::Lit::Str(s) => s.value(),
            syn::Lit::ByteStr(b) => String::from_utf8_lossy(&b.value()).into_owned(),
            _ => return,
        };
        for (i, rule) in self.rules.iter().enumerate() {
            for mark in rule.marks {
                let hit = match mark {
                    Mark::Literal(needle) => text.contains(needle),
                    Mark::HomeLiteral(test) => test(&text) && self.home_literals[i].contains(&text),
                    _ => false,
                };
                if hit {
                    self.note(i, format!("holds the literal {text:?}"));
                }
            }
        }
    }

    /// A literal a text is compared with.
    fn check_compared(&mut self, expr: &syn::Expr) {
        let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = expr else { return };
        let text = s.value().to_ascii_lowercase();
        for (i, rule) in self.rules.iter().enumerate() {
            for mark in rule.marks {
                if let Mark::Compared(words) = mark
                    && words.iter().any(|w| text == *w || text.starts_with(&format!("{w}:")))
                {
                    self.note(i, format!("compares a text with {:?}", s.value()));
                }
            }
        }
    }

    /// Whether `expr` is the redaction mask: its literal, or a path that resolves to `REDACTED`.
    fn is_mask(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => s.value() == "<redacted>",
            syn::Expr::Path(p) => self
                .resolve(&syntax::segments(&p.path))
                .iter()
                .any(|c| c.last().is_some_and(|s| s == "REDACTED")),
            syn::Expr::Reference(r) => self.is_mask(&r.expr),
            _ => false,
        }
    }

    fn check_mark(&mut self, hit: impl Fn(&Mark) -> bool, what: &str) {
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.marks.iter().any(&hit) {
                self.note(i, what.to_owned());
            }
        }
    }

    fn within(&mut self, item: String, walk: impl FnOnce(&mut Self)) {
        self.context.push(item);
        walk(self);
        self.context.pop();
    }

    /// A function (free, in an `impl` or a trait): its name checked, then its body walked.
    fn within_fn(&mut self, sig: &syn::Signature, walk: impl FnOnce(&mut Self)) {
        let name = sig.ident.to_string();
        self.check_mark(
            |m| matches!(m, Mark::Defines(n) if *n == name),
            &format!("defines `fn {name}`"),
        );
        self.within(format!("fn {name}"), walk);
    }
}

trait Segments {
    fn ends_with_str(&self, end: &[&str]) -> bool;
    fn starts_with_str(&self, start: &[&str]) -> bool;
}

impl Segments for Vec<String> {
    fn ends_with_str(&self, end: &[&str]) -> bool {
        self.len() >= end.len()
            && self[self.len() - end.len()..].iter().zip(end).all(|(a, b)| a == b)
    }
    fn starts_with_str(&self, start: &[&str]) -> bool {
        self.len() >= start.len() && self.iter().zip(start).all(|(a, b)| a == b)
    }
}

/// Whether an expression holds an indexing (`h[0]`) anywhere.
fn has_index(expr: &syn::Expr) -> bool {
    struct Find(bool);
    impl<'ast> Visit<'ast> for Find {
        fn visit_expr_index(&mut self, _: &'ast syn::ExprIndex) {
            self.0 = true;
        }
    }
    let mut f = Find(false);
    f.visit_expr(expr);
    f.0
}

fn is_int(expr: &syn::Expr, value: u64) -> bool {
    matches!(expr, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })
        if i.base10_parse::<u64>().is_ok_and(|v| v == value))
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        // Doc comments are words about the code, not code.
        if !attr.path().is_ident("doc") {
            visit::visit_attribute(self, attr);
        }
    }

    fn visit_item(&mut self, item: &'ast syn::Item) {
        // What only a test build compiles is test code.
        if !syntax::is_test_only(syntax::item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.within(format!("mod {}", item.ident), |v| visit::visit_item_mod(v, item));
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.within_fn(&item.sig, |v| visit::visit_item_fn(v, item));
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !syntax::is_test_only(&item.attrs) {
            self.within_fn(&item.sig, |v| visit::visit_impl_item_fn(v, item));
        }
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        self.within_fn(&item.sig, |v| visit::visit_trait_item_fn(v, item));
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.check_path(&syntax::segments(path));
        visit::visit_path(self, path);
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let name = call.method.to_string();
        self.check_method(&name);
        if MATCHERS.contains(&name.as_str()) {
            for arg in &call.args {
                self.check_compared(arg);
            }
        }
        if ["replace", "replacen", "replace_range"].contains(&name.as_str())
            && call.args.iter().any(|a| self.is_mask(a))
        {
            self.check_mark(
                |m| matches!(m, Mark::ReplaceByMask),
                &format!("replaces a text by the redaction mask (`.{name}()`)"),
            );
        }
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(f) = &*call.func
            && f.path.segments.last().is_some_and(|s| s.ident == "from_be_bytes")
            && let Some(syn::Expr::Array(a)) = call.args.first()
            && a.elems.len() == 4
            && a.elems.first().is_some_and(|e| is_int(e, 0))
        {
            self.check_mark(
                |m| matches!(m, Mark::BigEndian24),
                "reads three bytes big-endian (`from_be_bytes([0, ..])`)",
            );
        }
        visit::visit_expr_call(self, call);
    }

    fn visit_expr_binary(&mut self, bin: &'ast syn::ExprBinary) {
        if matches!(bin.op, syn::BinOp::Shl(_)) && is_int(&bin.right, 16) && has_index(&bin.left) {
            self.check_mark(
                |m| matches!(m, Mark::BigEndian24),
                "reads three bytes big-endian (an indexed byte `<< 16`)",
            );
        }
        if matches!(bin.op, syn::BinOp::Eq(_) | syn::BinOp::Ne(_)) {
            self.check_compared(&bin.left);
            self.check_compared(&bin.right);
        }
        visit::visit_expr_binary(self, bin);
    }

    fn visit_pat(&mut self, pat: &'ast syn::Pat) {
        if let syn::Pat::Lit(lit) = pat {
            self.check_compared(&syn::Expr::Lit(lit.clone()));
        }
        visit::visit_pat(self, pat);
    }

    fn visit_lit(&mut self, lit: &'ast syn::Lit) {
        self.check_literal(lit);
        visit::visit_lit(self, lit);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        let Some(tokens) = syntax::walk_macro_body(self, mac) else { return };
        for path in &tokens.paths {
            self.check_path(path);
        }
        for lit in &tokens.literals {
            self.check_literal(lit);
        }
        for m in &tokens.methods {
            self.check_method(m);
        }
    }
}
