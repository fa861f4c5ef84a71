//! Rejects rules that cannot apply to their field, each error at the rule's own tokens.

use crate::ast::{Body, Input, Member, Shape};
use crate::attr::RuleKind;

fn is_str(s: &Shape) -> bool {
    matches!(s, Shape::Str)
}

fn allowed(kind: &RuleKind, shape: &Shape, in_oneof: bool) -> Result<(), String> {
    let on = shape.describe();
    let ok = match kind {
        RuleKind::Name(_) => true,
        RuleKind::Required => {
            if in_oneof {
                return Err(
                    "`required` belongs on the message's oneof field, not on a variant".into()
                );
            }
            match shape {
                Shape::Str
                | Shape::Option(_)
                | Shape::Vec(_)
                | Shape::Map(..)
                | Shape::SignedInt
                | Shape::UnsignedInt => true,
                Shape::Bool | Shape::Float => {
                    return Err(format!(
                        "`required` cannot be checked on {on}: proto3 cannot tell an unset value from zero"
                    ));
                }
                Shape::Other => return Err(
                    "`required` on a message needs `Option<..>`: a bare value is always present"
                        .into(),
                ),
            }
        }
        RuleKind::MaxBytes(_) | RuleKind::NoControlChars => match shape {
            Shape::Str => true,
            Shape::Option(i) | Shape::Vec(i) => is_str(i),
            _ => false,
        },
        RuleKind::MaxTotalBytes(_) => match shape {
            Shape::Map(k, v) => is_str(k) && is_str(v),
            Shape::Vec(i) => is_str(i),
            _ => false,
        },
        RuleKind::NonNegative => {
            match shape {
                Shape::SignedInt | Shape::Float => true,
                Shape::UnsignedInt => return Err(
                    "`non_negative` on an unsigned integer checks nothing: it is never negative"
                        .into(),
                ),
                Shape::Option(i) | Shape::Vec(i) => matches!(**i, Shape::SignedInt | Shape::Float),
                _ => false,
            }
        }
        RuleKind::SecretKeys => matches!(shape, Shape::Map(k, _) if is_str(k)),
        RuleKind::Nested => match shape {
            Shape::Other => true,
            Shape::Option(i) | Shape::Vec(i) => matches!(**i, Shape::Other),
            Shape::Map(k, v) => is_str(k) && matches!(**v, Shape::Other),
            _ => false,
        },
        RuleKind::Oneof => {
            if in_oneof {
                return Err("`oneof` belongs on the message's field that holds the oneof".into());
            }
            matches!(shape, Shape::Option(i) if matches!(**i, Shape::Other))
        }
    };
    if ok {
        Ok(())
    } else {
        let what = match kind {
            RuleKind::MaxBytes(_) => "a string, an Option<String> or a Vec<String>",
            RuleKind::NoControlChars => "a string, an Option<String> or a Vec<String>",
            RuleKind::MaxTotalBytes(_) => "a map of strings or a Vec<String>",
            RuleKind::NonNegative => "a signed integer or a float",
            RuleKind::SecretKeys => "a map with string keys",
            RuleKind::Nested => "a message type, or an Option, Vec or map of one",
            RuleKind::Oneof => "an `Option<oneof enum>` field",
            _ => "this field",
        };
        Err(format!("`{}` applies to {what}, not to {on}", kind.id()))
    }
}

fn check_member(m: &Member, in_oneof: bool, errors: &mut Vec<syn::Error>) {
    let mut seen: Vec<&'static str> = Vec::new();
    for rule in &m.rules {
        let id = rule.kind.id();
        if seen.contains(&id) {
            errors.push(syn::Error::new(rule.span, format!("rule `{id}` is given twice")));
            continue;
        }
        seen.push(id);
        if let Err(msg) = allowed(&rule.kind, &m.shape, in_oneof) {
            errors.push(syn::Error::new(rule.span, msg));
        }
    }
    if seen.contains(&"oneof") && seen.contains(&"nested") {
        let span = m.rules.iter().find(|r| r.kind.id() == "nested").map(|r| r.span);
        if let Some(span) = span {
            errors.push(syn::Error::new(
                span,
                "`oneof` already validates the variants; drop `nested`",
            ));
        }
    }
}

pub fn check(input: &Input, errors: &mut Vec<syn::Error>) {
    match &input.body {
        Body::Struct(members) => members.iter().for_each(|m| check_member(m, false, errors)),
        Body::Oneof(members) => members.iter().for_each(|m| check_member(m, true, errors)),
    }
}
