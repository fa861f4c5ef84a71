//! The input item as plain structs: fields or oneof variants, each with its type's shape and
//! its rules; the original tokens are kept for error spans.

use syn::{Data, DeriveInput, Fields, GenericArgument, Ident, PathArguments, Type};

use crate::attr::{Rule, RuleKind, parse_rules};

/// What a field's Rust type is, as far as validation cares.
#[derive(Clone)]
pub enum Shape {
    Str,
    SignedInt,
    UnsignedInt,
    Float,
    Bool,
    Option(Box<Shape>),
    Vec(Box<Shape>),
    Map(Box<Shape>, Box<Shape>),
    /// Any other type: a message (or a user type implementing `Validate`).
    Other,
}

impl Shape {
    pub fn describe(&self) -> &'static str {
        match self {
            Shape::Str => "a string",
            Shape::SignedInt => "a signed integer",
            Shape::UnsignedInt => "an unsigned integer",
            Shape::Float => "a float",
            Shape::Bool => "a bool",
            Shape::Option(_) => "an Option",
            Shape::Vec(_) => "a Vec",
            Shape::Map(..) => "a map",
            Shape::Other => "a message type",
        }
    }
}

fn generic_args(args: &PathArguments) -> Vec<&Type> {
    match args {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads a type's shape from its last path segment (prost writes `::prost::alloc::string::String`,
/// `::core::option::Option<T>`, `::std::collections::HashMap<K, V>`).
pub fn shape_of(ty: &Type) -> Shape {
    let Type::Path(p) = ty else { return Shape::Other };
    let Some(last) = p.path.segments.last() else { return Shape::Other };
    let args = generic_args(&last.arguments);
    match (last.ident.to_string().as_str(), args.as_slice()) {
        ("String", []) => Shape::Str,
        ("i8" | "i16" | "i32" | "i64" | "isize", []) => Shape::SignedInt,
        ("u8" | "u16" | "u32" | "u64" | "usize", []) => Shape::UnsignedInt,
        ("f32" | "f64", []) => Shape::Float,
        ("bool", []) => Shape::Bool,
        ("Option", [t]) => Shape::Option(Box::new(shape_of(t))),
        ("Vec", [t]) => Shape::Vec(Box::new(shape_of(t))),
        ("HashMap" | "BTreeMap", [k, v]) => {
            Shape::Map(Box::new(shape_of(k)), Box::new(shape_of(v)))
        }
        _ => Shape::Other,
    }
}

/// A field of a struct, or the single field of a oneof variant.
pub struct Member {
    /// How to reach the value: the field's ident, or the variant's.
    pub ident: Ident,
    /// The name shown in paths (proto field name).
    pub name: String,
    pub shape: Shape,
    pub rules: Vec<Rule>,
}

pub enum Body {
    Struct(Vec<Member>),
    /// A prost oneof enum: one member per variant.
    Oneof(Vec<Member>),
}

pub struct Input {
    pub body: Body,
}

/// `SnapshotId` → `snapshot_id`: prost names oneof variants after their proto fields.
fn snake_case(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn display_name(ident: &Ident, rules: &[Rule], oneof_variant: bool) -> String {
    if let Some(name) = rules.iter().find_map(|r| match &r.kind {
        RuleKind::Name(n) => Some(n.clone()),
        _ => None,
    }) {
        return name;
    }
    let raw = ident.to_string();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw);
    if oneof_variant { snake_case(raw) } else { raw.to_owned() }
}

pub fn parse_input(item: &DeriveInput, errors: &mut Vec<syn::Error>) -> Option<Input> {
    let body = match &item.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Body::Struct(
                named
                    .named
                    .iter()
                    .filter_map(|f| {
                        let ident = f.ident.clone()?;
                        let rules = parse_rules(&f.attrs, false, errors);
                        Some(Member {
                            name: display_name(&ident, &rules, false),
                            ident,
                            shape: shape_of(&f.ty),
                            rules,
                        })
                    })
                    .collect(),
            ),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "#[csi_validate] needs named fields: a struct like a protobuf message",
                ));
                return None;
            }
        },
        Data::Enum(e) => {
            let mut members = Vec::new();
            for v in &e.variants {
                let rules = parse_rules(&v.attrs, true, errors);
                match &v.fields {
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                        let ty = f.unnamed[0].ty.clone();
                        members.push(Member {
                            name: display_name(&v.ident, &rules, true),
                            ident: v.ident.clone(),
                            shape: shape_of(&ty),
                            rules,
                        });
                    }
                    _ => errors.push(syn::Error::new_spanned(
                        v,
                        "#[csi_validate] on an enum needs one value per variant, as prost writes a oneof: `Variant(Type)`",
                    )),
                }
            }
            Body::Oneof(members)
        }
        Data::Union(u) => {
            errors.push(syn::Error::new_spanned(
                u.union_token,
                "#[csi_validate] does not apply to unions",
            ));
            return None;
        }
    };
    Some(Input { body })
}
