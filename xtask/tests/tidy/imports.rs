//! Import arrows between the files of each crate, read from the syntax tree: a file points at
//! the file that defines what it names through `crate::`, `super::`, `self::`, a child module or
//! a `use` name (in `use` items, in code and in macro bodies), followed through re-exports to
//! the file that defines the item. A `mod` declaration alone is no arrow, and `#[cfg(test)]` code
//! none either. From the arrows: circles (files that import each other in a loop), and the order
//! a crate's docs may promise ("each depending only on those listed before it").
//!
//! An arrow from a module to the file of a module it is nested in (`super::State`, `crate::report`
//! defined in `main.rs`) runs back up: a child is part of its parent, which it sees whole, so such
//! an arrow closes no circle. A circle is a loop among files that are not nested in each other,
//! or one that a parent closes by reaching into a child of a file that imports it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use syn::visit::{self, Visit};

use crate::syntax::{self, UseEntry};
use crate::tree::{self, Source};

/// One arrow: `from` names `names` that `to` defines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arrow {
    pub from: String,
    pub to: String,
    pub names: BTreeSet<String>,
    /// `to` is the file of a module `from` is nested in.
    pub up: bool,
}

/// The files of one crate (a library or a binary target) and the arrows between them.
pub struct Crate {
    pub root: String,
    pub files: BTreeSet<String>,
    pub arrows: Vec<Arrow>,
    /// Files declared by `#[cfg(test)] mod name;`: test code, though under `src/`.
    pub test_files: BTreeSet<String>,
    /// `mod` declarations whose file is missing, and files that do not parse.
    pub problems: Vec<String>,
}

/// Every crate target (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`) among the product files, with
/// its arrows.
pub fn crates(files: &[Source]) -> Vec<Crate> {
    let by_path: HashMap<&str, &str> =
        files.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
    tree::product(files)
        .filter(|f| is_crate_root(&f.path))
        .map(|f| Graph::build(&f.path, &by_path).into_crate())
        .collect()
}

fn is_crate_root(path: &str) -> bool {
    path.ends_with("/src/lib.rs")
        || path.ends_with("/src/main.rs")
        || path
            .rsplit_once('/')
            .is_some_and(|(dir, name)| dir.ends_with("/src/bin") && name.ends_with(".rs"))
}

/// A circle: its files, and the arrows between them.
pub struct Circle {
    pub files: Vec<String>,
    pub arrows: Vec<Arrow>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:", self.files.join(", "))?;
        for a in &self.arrows {
            let names: Vec<&str> = a.names.iter().map(String::as_str).collect();
            write!(f, "\n      {} -> {}: {}", a.from, a.to, names.join(", "))?;
        }
        Ok(())
    }
}

/// The circles of a crate: each set of two or more files that reach each other by arrows
/// (Tarjan's strongly connected components).
pub fn circles(krate: &Crate) -> Vec<Circle> {
    let files: Vec<&String> = krate.files.iter().collect();
    let index: HashMap<&String, usize> = files.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for a in krate.arrows.iter().filter(|a| !a.up) {
        if let (Some(&from), Some(&to)) = (index.get(&a.from), index.get(&a.to)) {
            next[from].push(to);
        }
    }
    let components = strongly_connected(&next);
    components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let members: BTreeSet<&String> = c.iter().map(|&i| files[i]).collect();
            let arrows = krate
                .arrows
                .iter()
                .filter(|a| !a.up && members.contains(&a.from) && members.contains(&a.to))
                .cloned()
                .collect();
            Circle { files: members.into_iter().cloned().collect(), arrows }
        })
        .collect()
}

/// Tarjan's algorithm, iteratively (no recursion depth to run out of).
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = next.len();
    let (mut order, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let (mut on_stack, mut stack, mut out) = (vec![false; n], Vec::new(), Vec::new());
    let mut counter = 0;
    for start in 0..n {
        if order[start] != UNSEEN {
            continue;
        }
        // Each frame: a node and how many of its successors are done.
        let mut frames = vec![(start, 0usize)];
        order[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut done)) = frames.last_mut() {
            if let Some(&w) = next[v].get(*done) {
                *done += 1;
                if order[w] == UNSEEN {
                    order[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

/// What a crate root's docs promise about its modules' order, if they do: the modules in the
/// order the docs first name them.
pub fn promised_order(root_text: &str) -> Option<Vec<String>> {
    let docs: String = root_text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    if !(docs.contains("only on those listed before it")
        || docs.contains("only on modules listed before it"))
    {
        return None;
    }
    let mut order: Vec<String> = Vec::new();
    for piece in docs.split('`').skip(1).step_by(2) {
        let name = piece.split("::").next().unwrap_or(piece);
        if !name.is_empty()
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && !order.iter().any(|o| o == name)
        {
            order.push(name.to_owned());
        }
    }
    Some(order)
}

/// The arrows that break a crate's promised order: from a module to one its docs name later.
pub fn order_breaks(krate: &Crate, order: &[String]) -> Vec<String> {
    let top = |file: &str| -> Option<usize> {
        let dir = krate.root.rsplit_once('/').map_or("", |(d, _)| d);
        let rest = file.strip_prefix(dir)?.strip_prefix('/')?;
        let first = rest.split('/').next()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        order.iter().position(|o| o == name)
    };
    let mut out = Vec::new();
    for a in &krate.arrows {
        if let (Some(from), Some(to)) = (top(&a.from), top(&a.to))
            && to > from
        {
            let names: Vec<&str> = a.names.iter().map(String::as_str).collect();
            out.push(format!(
                "{} -> {} ({}): the docs of {} name `{}` after `{}`",
                a.from,
                a.to,
                names.join(", "),
                krate.root,
                order[to],
                order[from]
            ));
        }
    }
    out
}

/// A module of the crate: a file, or a `mod name { ... }` block inside one.
struct Module {
    file: String,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    /// Items defined here (not modules).
    defines: HashSet<String>,
    /// Names brought in by `use` (re-exports included), and globs.
    uses: Vec<UseEntry>,
    /// Paths written in code (and the `use` paths) that may lead into the crate.
    named: Vec<Vec<String>>,
}

struct Graph<'a> {
    modules: Vec<Module>,
    sources: &'a HashMap<&'a str, &'a str>,
    test_files: BTreeSet<String>,
    problems: Vec<String>,
}

impl<'a> Graph<'a> {
    fn build(root: &str, sources: &'a HashMap<&'a str, &'a str>) -> Graph<'a> {
        let mut g = Graph {
            modules: Vec::new(),
            sources,
            test_files: BTreeSet::new(),
            problems: Vec::new(),
        };
        let dir = root.rsplit_once('/').map_or(String::new(), |(d, _)| d.to_owned());
        g.load_file(root, None, &dir);
        g
    }

    fn new_module(&mut self, file: &str, parent: Option<usize>) -> usize {
        self.modules.push(Module {
            file: file.to_owned(),
            parent,
            children: BTreeMap::new(),
            defines: HashSet::new(),
            uses: Vec::new(),
            named: Vec::new(),
        });
        self.modules.len() - 1
    }

    /// Reads `file` as a module (child of `parent`) whose own children live in `dir`.
    fn load_file(&mut self, file: &str, parent: Option<usize>, dir: &str) -> Option<usize> {
        let text = *self.sources.get(file)?;
        let ast = match syn::parse_file(text) {
            Ok(ast) => ast,
            Err(e) => {
                self.problems.push(format!("{file}: does not parse: {e}"));
                return None;
            }
        };
        let m = self.new_module(file, parent);
        self.load_items(m, &ast.items, dir, file);
        Some(m)
    }

    fn load_items(&mut self, m: usize, items: &[syn::Item], dir: &str, file: &str) {
        for item in items {
            if syntax::is_test_only(syntax::item_attrs(item)) {
                if let syn::Item::Mod(module) = item
                    && module.content.is_none()
                {
                    let files = self.mod_files(module, dir, file);
                    self.test_files.extend(files);
                }
                continue;
            }
            match item {
                syn::Item::Mod(module) => self.load_mod(m, module, dir, file),
                syn::Item::Use(u) => {
                    for entry in syntax::flatten_use(&u.tree) {
                        self.modules[m].named.push(entry.path.clone());
                        self.modules[m].uses.push(entry);
                    }
                }
                other => {
                    if let Some(name) = defined_name(other) {
                        self.modules[m].defines.insert(name);
                    }
                    let mut reader = Reader::default();
                    reader.visit_item(other);
                    self.modules[m].named.extend(reader.paths);
                    for entry in reader.uses {
                        self.modules[m].named.push(entry.path.clone());
                        self.modules[m].uses.push(entry);
                    }
                }
            }
        }
    }

    fn load_mod(&mut self, parent: usize, module: &syn::ItemMod, dir: &str, file: &str) {
        let name = module.ident.to_string();
        if let Some((_, items)) = &module.content {
            // An inline module: its file is its parent's; its children live one folder down.
            let m = self.new_module(file, Some(parent));
            self.modules[parent].children.insert(name.clone(), m);
            let child_dir = format!("{dir}/{}", path_attr(module).unwrap_or(name));
            self.load_items(m, items, &child_dir, file);
            return;
        }
        let candidates = self.mod_files(module, dir, file);
        let Some(child_file) = candidates.iter().find(|c| self.sources.contains_key(c.as_str()))
        else {
            self.problems
                .push(format!("{file}: `mod {name};` has no file ({})", candidates.join(" or ")));
            return;
        };
        let child_dir = match child_file.strip_suffix("/mod.rs") {
            Some(d) => d.to_owned(),
            None => child_file.strip_suffix(".rs").unwrap_or(child_file).to_owned(),
        };
        if let Some(m) = self.load_file(&child_file.clone(), Some(parent), &child_dir) {
            self.modules[parent].children.insert(name, m);
        }
    }

    /// Where the file of `mod name;`, declared in `file` with children in `dir`, may be.
    fn mod_files(&self, module: &syn::ItemMod, dir: &str, file: &str) -> Vec<String> {
        let name = module.ident.to_string();
        match path_attr(module) {
            Some(p) => {
                let base = file.rsplit_once('/').map_or("", |(d, _)| d);
                vec![normalise(&format!("{base}/{p}"))]
            }
            None => vec![format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")],
        }
    }

    /// Whether `file` is the file of a module `m` is nested in (not `m`'s own).
    fn is_ancestor_file(&self, m: usize, file: &str) -> bool {
        let mut at = self.modules[m].parent;
        while let Some(p) = at {
            if self.modules[p].file == file && self.modules[m].file != file {
                return true;
            }
            at = self.modules[p].parent;
        }
        false
    }

    fn into_crate(self) -> Crate {
        let root = self.modules.first().map(|m| m.file.clone()).unwrap_or_default();
        let mut arrows: BTreeMap<(String, String, bool), BTreeSet<String>> = BTreeMap::new();
        for (m, module) in self.modules.iter().enumerate() {
            for path in &module.named {
                if let Some(to) = self.resolve(m, path, 0)
                    && to != module.file
                {
                    let name = path.last().cloned().unwrap_or_default();
                    let up = self.is_ancestor_file(m, &to);
                    arrows.entry((module.file.clone(), to, up)).or_default().insert(name);
                }
            }
        }
        Crate {
            root,
            files: self.modules.iter().map(|m| m.file.clone()).collect(),
            arrows: arrows
                .into_iter()
                .map(|((from, to, up), names)| Arrow { from, to, names, up })
                .collect(),
            test_files: self.test_files,
            problems: self.problems,
        }
    }

    /// The file that defines what `path`, written in module `m`, names; `None` when it is
    /// outside the crate (another crate, the prelude, a local variable).
    fn resolve(&self, m: usize, path: &[String], depth: usize) -> Option<String> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let mut rest = path;
        let at = match rest[0].as_str() {
            "crate" => {
                rest = &rest[1..];
                0
            }
            "self" => {
                rest = &rest[1..];
                m
            }
            "super" => {
                let mut at = m;
                while rest.first().is_some_and(|s| s == "super") {
                    at = self.modules[at].parent?;
                    rest = &rest[1..];
                }
                at
            }
            first => {
                if let Some(&child) = self.modules[m].children.get(first) {
                    rest = &rest[1..];
                    child
                } else if let Some(entry) =
                    self.modules[m].uses.iter().find(|u| u.name.as_deref() == Some(first))
                {
                    if entry.path.as_slice() == path {
                        return self.walk_from_use(m, path, depth);
                    }
                    let joined: Vec<String> =
                        entry.path.iter().chain(&rest[1..]).cloned().collect();
                    return self.resolve(m, &joined, depth + 1);
                } else if self.modules[m].defines.contains(first) {
                    return Some(self.modules[m].file.clone());
                } else {
                    return None;
                }
            }
        };
        self.walk(at, rest, depth)
    }

    /// A `use` path written relative to the module (`use schema::Schema;` naming a child or an
    /// outside crate): only a child of `m` makes it the crate's.
    fn walk_from_use(&self, m: usize, path: &[String], depth: usize) -> Option<String> {
        let child = *self.modules[m].children.get(&path[0])?;
        self.walk(child, &path[1..], depth)
    }

    /// From module `at`, follows `rest` through child modules and re-exports to the file that
    /// defines the item.
    fn walk(&self, mut at: usize, mut rest: &[String], depth: usize) -> Option<String> {
        while let Some(segment) = rest.first() {
            let module = &self.modules[at];
            if let Some(&child) = module.children.get(segment) {
                at = child;
                rest = &rest[1..];
                continue;
            }
            if module.defines.contains(segment) {
                return Some(module.file.clone());
            }
            if let Some(entry) = module.uses.iter().find(|u| u.name.as_deref() == Some(segment)) {
                let joined: Vec<String> = entry.path.iter().chain(&rest[1..]).cloned().collect();
                return self.resolve(at, &joined, depth + 1);
            }
            for glob in module.uses.iter().filter(|u| u.name.is_none()) {
                let joined: Vec<String> = glob.path.iter().chain(rest).cloned().collect();
                if let Some(file) = self.resolve(at, &joined, depth + 1)
                    && file != module.file
                {
                    return Some(file);
                }
            }
            return Some(module.file.clone());
        }
        Some(self.modules[at].file.clone())
    }
}

/// The value of a module's `#[path = "..."]`.
fn path_attr(module: &syn::ItemMod) -> Option<String> {
    module.attrs.iter().filter(|a| a.path().is_ident("path")).find_map(|a| match &a.meta {
        syn::Meta::NameValue(syn::MetaNameValue {
            value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }),
            ..
        }) => Some(s.value()),
        _ => None,
    })
}

/// `a/b/../c` as `a/c`.
fn normalise(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => {
                out.pop();
            }
            "." | "" => {}
            p => out.push(p),
        }
    }
    out.join("/")
}

/// The name an item defines in its module, if any.
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The paths an item's code writes, and the `use` items inside it (a function body's); nested
/// modules are read on their own.
#[derive(Default)]
struct Reader {
    paths: Vec<Vec<String>>,
    uses: Vec<UseEntry>,
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !syntax::is_test_only(syntax::item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }
    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !syntax::is_test_only(&item.attrs) {
            visit::visit_impl_item_fn(self, item);
        }
    }
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.uses.extend(syntax::flatten_use(&item.tree));
    }
    fn visit_path(&mut self, path: &'ast syn::Path) {
        // A bare name leads where its `use` does, which is already an arrow.
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            self.paths.push(syntax::segments(path));
        }
        visit::visit_path(self, path);
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        if let Some(tokens) = syntax::walk_macro_body(self, mac) {
            self.paths.extend(tokens.paths);
        }
    }
}
