//! Parses `#[csi(...)]` field rules and the macro's own arguments, keeping each rule's tokens
//! so errors point at the exact attribute.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

/// One rule as written.
#[derive(Clone)]
pub enum RuleKind {
    Required,
    MaxBytes(usize),
    MaxTotalBytes(usize),
    NonNegative,
    NoControlChars,
    SecretKeys,
    Nested,
    Oneof,
    Name(String),
}

impl RuleKind {
    pub fn id(&self) -> &'static str {
        match self {
            RuleKind::Required => "required",
            RuleKind::MaxBytes(_) => "max_bytes",
            RuleKind::MaxTotalBytes(_) => "max_total_bytes",
            RuleKind::NonNegative => "non_negative",
            RuleKind::NoControlChars => "no_control_chars",
            RuleKind::SecretKeys => "secret_keys",
            RuleKind::Nested => "nested",
            RuleKind::Oneof => "oneof",
            RuleKind::Name(_) => "name",
        }
    }
}

/// A rule and the span of its tokens.
#[derive(Clone)]
pub struct Rule {
    pub kind: RuleKind,
    pub span: Span,
}

const KNOWN: &str = "required, max_bytes = N, max_total_bytes = N, non_negative, no_control_chars, secret_keys, nested, oneof, name = \"...\"";

fn int_value(meta: &Meta, errors: &mut Vec<syn::Error>) -> Option<usize> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => match i.base10_parse::<usize>() {
                Ok(n) => Some(n),
                Err(e) => {
                    errors.push(e);
                    None
                }
            },
            other => {
                errors.push(syn::Error::new_spanned(other, "expected a whole number of bytes"));
                None
            }
        },
        _ => {
            errors.push(syn::Error::new_spanned(
                meta,
                format!(
                    "`{}` needs a value: `{} = N`",
                    path_name(meta.path()),
                    path_name(meta.path())
                ),
            ));
            None
        }
    }
}

fn path_name(p: &Path) -> String {
    p.get_ident().map(ToString::to_string).unwrap_or_else(|| quote::quote!(#p).to_string())
}

/// Reads `#[csi_oneof]` / `#[csi_oneof(required)]`: the field holds a prost oneof.
///
/// It is a separate attribute because prost-build copies a oneof field's attributes onto the
/// oneof's variants; on a variant it is ignored.
fn parse_oneof(attrs: &[Attribute], in_oneof: bool, errors: &mut Vec<syn::Error>) -> Vec<Rule> {
    let mut rules = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("csi_oneof")) {
        if in_oneof {
            continue;
        }
        rules.push(Rule { kind: RuleKind::Oneof, span: attr.path().span() });
        if let Meta::List(_) = &attr.meta {
            let parsed = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated);
            match parsed {
                Ok(metas) => {
                    for meta in metas {
                        if meta.path().is_ident("required") && matches!(meta, Meta::Path(_)) {
                            rules.push(Rule { kind: RuleKind::Required, span: meta.span() });
                        } else {
                            errors.push(syn::Error::new_spanned(
                                &meta,
                                "`csi_oneof` takes only `required`",
                            ));
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    rules
}

/// Reads every `#[csi(...)]` (and `#[csi_oneof]`) attribute of a field or variant.
pub fn parse_rules(attrs: &[Attribute], in_oneof: bool, errors: &mut Vec<syn::Error>) -> Vec<Rule> {
    let mut rules = parse_oneof(attrs, in_oneof, errors);
    for attr in attrs.iter().filter(|a| a.path().is_ident("csi")) {
        let metas = match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for meta in metas {
            let name = path_name(meta.path());
            let flag = |kind: RuleKind, errors: &mut Vec<syn::Error>| -> Option<RuleKind> {
                if let Meta::Path(_) = meta {
                    Some(kind)
                } else {
                    errors.push(syn::Error::new_spanned(&meta, format!("`{name}` takes no value")));
                    None
                }
            };
            let kind = match name.as_str() {
                "required" => flag(RuleKind::Required, errors),
                "non_negative" => flag(RuleKind::NonNegative, errors),
                "no_control_chars" => flag(RuleKind::NoControlChars, errors),
                "secret_keys" => flag(RuleKind::SecretKeys, errors),
                "nested" => flag(RuleKind::Nested, errors),
                "oneof" => flag(RuleKind::Oneof, errors),
                "max_bytes" => int_value(&meta, errors).map(RuleKind::MaxBytes),
                "max_total_bytes" => int_value(&meta, errors).map(RuleKind::MaxTotalBytes),
                "name" => match &meta {
                    Meta::NameValue(nv) => match &nv.value {
                        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                            Some(RuleKind::Name(s.value()))
                        }
                        other => {
                            errors.push(syn::Error::new_spanned(
                                other,
                                "expected a string: `name = \"field_name\"`",
                            ));
                            None
                        }
                    },
                    _ => {
                        errors.push(syn::Error::new_spanned(
                            &meta,
                            "`name` needs a value: `name = \"field_name\"`",
                        ));
                        None
                    }
                },
                _ => {
                    errors.push(syn::Error::new_spanned(
                        meta.path(),
                        format!("unknown rule `{name}`; expected one of: {KNOWN}"),
                    ));
                    None
                }
            };
            if let Some(kind) = kind {
                rules.push(Rule { kind, span: meta.span() });
            }
        }
    }
    rules
}

/// The macro's own arguments: `crate = path`, `check = path` (repeatable).
#[derive(Default)]
pub struct Args {
    pub krate: Option<Path>,
    pub checks: Vec<Path>,
}

pub fn parse_args(tokens: proc_macro2::TokenStream, errors: &mut Vec<syn::Error>) -> Args {
    let mut args = Args::default();
    if tokens.is_empty() {
        return args;
    }
    let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
    let metas = match syn::parse::Parser::parse2(parser, tokens) {
        Ok(m) => m,
        Err(e) => {
            errors.push(e);
            return args;
        }
    };
    for meta in metas {
        let Meta::NameValue(nv) = &meta else {
            errors
                .push(syn::Error::new_spanned(&meta, "expected `crate = path` or `check = path`"));
            continue;
        };
        let value: Option<Path> = match &nv.value {
            Expr::Path(p) => Some(p.path.clone()),
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => parse_str_path(s, errors),
            other => {
                errors.push(syn::Error::new_spanned(other, "expected a path"));
                None
            }
        };
        let Some(value) = value else { continue };
        if nv.path.is_ident("crate") {
            args.krate = Some(value);
        } else if nv.path.is_ident("check") {
            args.checks.push(value);
        } else {
            errors.push(syn::Error::new_spanned(
                &nv.path,
                "unknown argument; expected `crate = path` or `check = path`",
            ));
        }
    }
    args
}

fn parse_str_path(s: &LitStr, errors: &mut Vec<syn::Error>) -> Option<Path> {
    match s.parse::<Path>() {
        Ok(p) => Some(p),
        Err(e) => {
            errors.push(syn::Error::new(s.span(), format!("not a path: {e}")));
            None
        }
    }
}
