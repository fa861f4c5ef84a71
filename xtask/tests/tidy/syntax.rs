//! What the syntax-tree checks share: `use` trees flattened to (local name, path), items that
//! exist only under `cfg(test)`, and a macro call's body read as code wherever it is code.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::Visit;

/// One name a `use` item brings in: `name` (`None` for a glob) stands for `path`.
#[derive(Clone, Debug)]
pub struct UseEntry {
    pub name: Option<String>,
    pub path: Vec<String>,
}

/// Every name `tree` brings in, with the path it stands for (`use a::{b as c, d::*}`: `c` for
/// `a::b` and a glob of `a::d`).
pub fn flatten_use(tree: &syn::UseTree) -> Vec<UseEntry> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseEntry>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => {
                out.push(UseEntry { name: prefix.last().cloned(), path: prefix.clone() });
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                out.push(UseEntry { name: Some(n.ident.to_string()), path });
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                out.push(UseEntry { name: Some(r.rename.to_string()), path });
            }
            syn::UseTree::Glob(_) => out.push(UseEntry { name: None, path: prefix.clone() }),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    walk(t, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// Whether `attrs` hold a `cfg` that only `test` builds satisfy (`cfg(test)`,
/// `cfg(all(test, ..))`).
pub fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    fn needs_test(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            syn::Meta::List(list) => {
                let Ok(inner) =
                    list.parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
                else {
                    return false;
                };
                if list.path.is_ident("all") {
                    inner.iter().any(needs_test)
                } else if list.path.is_ident("any") {
                    !inner.is_empty() && inner.iter().all(needs_test)
                } else {
                    false
                }
            }
            syn::Meta::NameValue(_) => false,
        }
    }
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .any(|a| a.parse_args::<syn::Meta>().is_ok_and(|m| needs_test(&m)))
}

/// The attributes of any item.
pub fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Walks a macro call's body with `visitor` when it is a comma-separated list of expressions
/// (`format!`, `vec!`, `assert_eq!`, `write!` ...); otherwise returns what its tokens hold.
pub fn walk_macro_body<V>(visitor: &mut V, mac: &syn::Macro) -> Option<Tokens>
where
    V: for<'a> Visit<'a>,
{
    match mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated) {
        Ok(exprs) => {
            for e in &exprs {
                visitor.visit_expr(e);
            }
            None
        }
        Err(_) => Some(read_tokens(mac.tokens.clone())),
    }
}

/// What a macro body that is not a list of expressions (`macro_rules!`, `matches!`, `select!`
/// ...) holds, read from its tokens: paths (`a::b::c`), literals, and method calls (`.name(`).
#[derive(Default)]
pub struct Tokens {
    pub paths: Vec<Vec<String>>,
    pub literals: Vec<syn::Lit>,
    pub methods: Vec<String>,
}

pub fn read_tokens(stream: TokenStream) -> Tokens {
    fn walk(stream: TokenStream, out: &mut Tokens) {
        let tokens: Vec<TokenTree> = stream.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => walk(g.stream(), out),
                TokenTree::Literal(l) => out.literals.push(syn::Lit::new(l.clone())),
                TokenTree::Punct(p) if p.as_char() == '.' => {
                    if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                        && g.delimiter() == Delimiter::Parenthesis
                    {
                        out.methods.push(name.to_string());
                    }
                }
                TokenTree::Ident(first) => {
                    let mut path = vec![first.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (tokens.get(j), tokens.get(j + 1))
                        && a.as_char() == ':'
                        && a.spacing() == Spacing::Joint
                        && b.as_char() == ':'
                    {
                        let Some(TokenTree::Ident(next)) = tokens.get(j + 2) else { break };
                        path.push(next.to_string());
                        j += 3;
                    }
                    if path.len() > 1 {
                        out.paths.push(path);
                        i = j;
                        continue;
                    }
                }
                TokenTree::Punct(_) => {}
            }
            i += 1;
        }
    }
    let mut out = Tokens::default();
    walk(stream, &mut out);
    out
}

/// A path's segments as text.
pub fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}
