//! Consistency checks over a lowered [`Model`].

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{ErrorRow, Label, Model, Presence};

/// gRPC's canonical codes, by number.
pub const GRPC_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The number gRPC gives a code name.
pub fn grpc_code_number(name: &str) -> Option<i32> {
    GRPC_CODES.iter().position(|c| *c == name).map(|n| n as i32)
}

/// Runs every check.
pub fn check_model(model: &Model) -> Vec<Diagnostic> {
    let mut out = check_error_codes(model);
    out.extend(check_required_in_oneof(model));
    out
}

/// A code number must be the one gRPC gives the code name written beside it.
pub fn check_error_codes(model: &Model) -> Vec<Diagnostic> {
    let rows = model
        .general_errors
        .iter()
        .chain(model.services.iter().flat_map(|s| s.methods.iter().flat_map(|m| &m.errors)));
    rows.filter_map(|row| check_row(model, row)).collect()
}

/// The code name gRPC uses for a name as a table writes it (`NOT FOUND` is `NOT_FOUND`).
pub fn canonical_code(name: &str) -> String {
    name.trim().replace(' ', "_")
}

fn check_row(model: &Model, row: &ErrorRow) -> Option<Diagnostic> {
    let src = model.files.get(row.span.file)?;
    // Point at the code cell itself rather than the whole row.
    let written = format!("{} {}", row.code_number, row.code);
    let row_text = src.text().get(row.span.offset..row.span.offset + row.span.len).unwrap_or("");
    let span = match row_text.find(&written) {
        Some(i) => (row.span.offset + i, written.len()),
        None => (row.span.offset, row.span.len),
    };
    if let Some(n) = grpc_code_number(&canonical_code(&row.code)).filter(|_| row.code.contains(' '))
    {
        return Some(
            Diagnostic::at(
                Severity::Warning,
                src,
                span,
                format!("code name '{}' is not spelled as gRPC spells it", row.code),
                format!("read as {} {}", n, canonical_code(&row.code)),
            )
            .with_help(format!(
                "write '{} {}'",
                row.code_number,
                canonical_code(&row.code)
            )),
        );
    }
    match grpc_code_number(&row.code) {
        Some(n) if n == row.code_number => None,
        Some(n) => Some(
            Diagnostic::at(
                Severity::Warning,
                src,
                span,
                format!("error code {} does not match '{}'", row.code_number, row.code),
                format!("gRPC numbers '{}' as {n}", row.code),
            )
            .with_help(format!(
                "write '{n} {}' or name the code numbered {}",
                row.code, row.code_number
            )),
        ),
        None => Some(Diagnostic::at(
            Severity::Warning,
            src,
            span,
            format!("'{}' is not a gRPC status code", row.code),
            "unknown code name",
        )),
    }
}

/// A field inside a oneof cannot be REQUIRED on its own; the oneof carries the requirement.
pub fn check_required_in_oneof(model: &Model) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for m in &model.messages {
        for f in &m.fields {
            if f.oneof.is_some()
                && f.presence == Presence::Required
                && f.label == Label::Singular
                && let Some(src) = model.files.get(f.span.file)
            {
                out.push(Diagnostic::at(
                    Severity::Advice,
                    src,
                    (f.span.offset, f.span.len),
                    format!(
                        "field '{}.{}' is REQUIRED inside oneof '{}'",
                        m.full_name,
                        f.name,
                        f.oneof.as_deref().unwrap_or_default()
                    ),
                    "a oneof member cannot be required by itself",
                ));
            }
        }
    }
    out
}
