//! The per-RPC error catalog: one enum per RPC listing the spec's error rows for it plus the
//! general ones, each row as data (`ErrorInfo`), and `classify` for callers.

use std::fmt::Write as _;

use csikit_spec::check::{canonical_code, grpc_code_number};
use csikit_spec::{ErrorRow, Model};

/// Words left out of variant names: they read as filler in `AlreadyExistsIncompatible`.
const FILLER: [&str; 7] = ["but", "is", "the", "a", "an", "are", "be"];

/// `Volume already exists but is incompatible` → `VolumeAlreadyExistsIncompatible`.
pub fn variant_name(condition: &str) -> String {
    let mut out = String::new();
    for word in condition.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.is_empty() || FILLER.contains(&word.to_ascii_lowercase().as_str()) {
            continue;
        }
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(&chars.as_str().to_ascii_lowercase());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "Row");
    }
    out
}

/// The recovery the spec's words ask for.
pub fn recovery_kind(recovery: &str) -> &'static str {
    let lower = recovery.to_lowercase();
    if recovery.contains("Capabilities") {
        "CallCapabilities"
    } else if recovery.contains("MUST NOT retry") || lower.contains("fail this request") {
        "DoNotRetry"
    } else if lower.contains("back off")
        || lower.contains("backoff")
        || lower.contains("retry") && !lower.contains("fix")
    {
        "RetryWithBackoff"
    } else if lower.contains("fix") || lower.contains("correct") || lower.contains("verify") {
        "FixRequest"
    } else {
        "Other"
    }
}

fn code_variant(name: &str) -> String {
    canonical_code(name)
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_string() + &c.as_str().to_ascii_lowercase()).unwrap_or_default()
        })
        .collect()
}

fn info(row: &ErrorRow, rpc: Option<&str>, ja: Option<&ErrorRow>) -> String {
    // The code the name implies; the table's number is kept as written for the reader.
    let number = grpc_code_number(&canonical_code(&row.code)).unwrap_or(row.code_number);
    let code = code_variant(
        csikit_spec::check::GRPC_CODES.get(number as usize).copied().unwrap_or("UNKNOWN"),
    );
    format!(
        "ErrorInfo {{ condition: {:?}, code: Code::{code}, code_as_written: {:?}, description: {:?}, recovery: {:?}, recovery_kind: Recovery::{}, rpc: {:?}, ja: {} }}",
        row.condition,
        format!("{} {}", row.code_number, row.code),
        row.description,
        row.recovery,
        recovery_kind(&row.recovery),
        rpc,
        match ja {
            Some(j) => format!("Some(({:?}, {:?}, {:?}))", j.condition, j.description, j.recovery),
            None => "None".to_owned(),
        },
    )
}

/// The translated row matching `row`: same code number, same place among the rows with that
/// number (translations follow the English tables row for row), and written in the translation's
/// language (a translation keeps some tables in English).
fn translated<'a>(
    row: &ErrorRow,
    rows: &[ErrorRow],
    translated: &'a [ErrorRow],
) -> Option<&'a ErrorRow> {
    let nth = rows
        .iter()
        .take_while(|r| !std::ptr::eq(*r, row))
        .filter(|r| r.code_number == row.code_number)
        .count();
    translated
        .iter()
        .filter(|r| r.code_number == row.code_number)
        .nth(nth)
        .filter(|r| r.lang != "en")
}

/// The `errors` module of a package: `None` when its spec has no error tables. `status` is
/// what goes before and after the `status()` methods (which need tonic): a `#[cfg]` line, or a
/// checked feature's macro; `None` leaves them out.
pub fn generate_errors(
    model: &Model,
    translation: Option<&Model>,
    status: Option<(&str, &str)>,
) -> Option<String> {
    let any = !model.general_errors.is_empty()
        || model.services.iter().any(|s| s.methods.iter().any(|m| !m.errors.is_empty()));
    if !any {
        return None;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! The spec's error tables for `{}` as types: for each RPC, its own error rows plus the",
        model.package
    );
    let _ = writeln!(
        out,
        "//! general ones, each with its gRPC code, description and the recovery the spec asks of the caller.\n"
    );
    let _ = writeln!(out, "pub use ::csikit::errors::{{Code, ErrorInfo, Recovery}};\n");
    let _ = writeln!(
        out,
        "/// The general error table (\"Error Scheme\"), which applies to every RPC."
    );
    let _ = writeln!(out, "pub const GENERAL: &[ErrorInfo] = &[");
    let tr_general: &[ErrorRow] = translation.map_or(&[], |t| &t.general_errors);
    for row in &model.general_errors {
        let _ = writeln!(
            out,
            "    {},",
            info(row, None, translated(row, &model.general_errors, tr_general))
        );
    }
    let _ = writeln!(out, "];\n");
    let mut rpcs = Vec::new();
    for s in &model.services {
        for m in &s.methods {
            rpcs.push(m);
            let ty = format!("{}Error", m.name);
            let _ = writeln!(
                out,
                "/// The errors of `{}`: its own table, then the general one.",
                m.name
            );
            let _ = writeln!(out, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
            let _ = writeln!(out, "pub enum {ty} {{");
            let mut names: Vec<String> = Vec::new();
            let rows: Vec<(&ErrorRow, bool)> = m
                .errors
                .iter()
                .map(|r| (r, true))
                .chain(model.general_errors.iter().map(|r| (r, false)))
                .collect();
            for (row, own) in &rows {
                let mut name = variant_name(&row.condition);
                if names.contains(&name) {
                    name = format!("{name}{}", code_variant(&row.code));
                }
                while names.contains(&name) {
                    name.push('_');
                }
                let _ = writeln!(
                    out,
                    "    /// {}\n    /// — `{} {}`{}",
                    row.condition.replace('`', ""),
                    row.code_number,
                    row.code,
                    if *own { "" } else { " (general)" }
                );
                if grpc_code_number(&canonical_code(&row.code)) != Some(row.code_number) {
                    let _ = writeln!(
                        out,
                        "    ///\n    /// The spec writes `{} {}`; the catalog uses the number the name implies.",
                        row.code_number, row.code
                    );
                }
                let _ = writeln!(out, "    {name},");
                names.push(name);
            }
            let _ = writeln!(out, "}}\n");
            let _ = writeln!(out, "impl {ty} {{");
            let _ = writeln!(out, "    /// Every row, in the spec's order.");
            let _ = writeln!(
                out,
                "    pub const ALL: &'static [Self] = &[{}];\n",
                names.iter().map(|n| format!("Self::{n}")).collect::<Vec<_>>().join(", ")
            );
            let _ = writeln!(out, "    const INFO: &'static [ErrorInfo] = &[");
            let tr_rows: &[ErrorRow] =
                translation.and_then(|t| t.method(&m.name)).map_or(&[], |(_, tm)| &tm.errors);
            for (row, _) in rows.iter().filter(|(_, own)| *own) {
                let _ = writeln!(
                    out,
                    "        {},",
                    info(row, Some(m.name.as_str()), translated(row, &m.errors, tr_rows))
                );
            }
            // The general rows are the ones in `GENERAL`, not copies.
            for i in 0..model.general_errors.len() {
                let _ = writeln!(out, "        GENERAL[{i}],");
            }
            let _ = writeln!(out, "    ];\n");
            let _ = writeln!(out, "    /// The row: condition, code, description, recovery.");
            let _ = writeln!(
                out,
                "    pub const fn info(self) -> &'static ErrorInfo {{\n        &Self::INFO[self as usize]\n    }}\n"
            );
            let _ = writeln!(out, "    /// The gRPC code.");
            let _ = writeln!(
                out,
                "    pub const fn code(self) -> Code {{\n        self.info().code\n    }}\n"
            );
            if let Some((before, after)) = status {
                let _ = write!(out, "{before}");
                let _ = writeln!(out, "    /// A status with this row's code and `message`.");
                let _ = writeln!(
                    out,
                    "    pub fn status(self, message: impl Into<String>) -> ::csikit::tonic::Status {{\n        ::csikit::tonic::Status::new(::csikit::tonic::Code::from_i32(self.code().number()), message)\n    }}"
                );
                let _ = write!(out, "{after}");
            }
            let _ = writeln!(out, "}}\n");
            let _ = writeln!(
                out,
                "impl std::fmt::Display for {ty} {{\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{\n        self.info().fmt(f)\n    }}\n}}\n"
            );
        }
    }
    let _ = writeln!(out, "/// The rows of an RPC's own table, by RPC name.");
    let _ = writeln!(
        out,
        "pub fn rpc_rows(rpc: &str) -> Option<&'static [ErrorInfo]> {{\n    let rows: &'static [ErrorInfo] = match rpc {{"
    );
    for m in &rpcs {
        let _ =
            writeln!(out, "        {:?} => &{}Error::INFO[..{}],", m.name, m.name, m.errors.len());
    }
    let _ = writeln!(out, "        _ => return None,\n    }};\n    Some(rows)\n}}\n");
    let _ = writeln!(
        out,
        "/// What the spec tells a caller of `rpc` to do after a status with `code`: the RPC's own row for"
    );
    let _ = writeln!(
        out,
        "/// that code, else the general table's; `None` when the spec has no row for it."
    );
    let _ =
        writeln!(out, "pub fn classify(rpc: &str, code: Code) -> Option<&'static ErrorInfo> {{");
    let _ = writeln!(
        out,
        "    ::csikit::errors::classify_code(rpc_rows(rpc).unwrap_or(&[]), GENERAL, code)\n}}"
    );
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_well() {
        assert_eq!(
            variant_name("Volume already exists but is incompatible"),
            "VolumeAlreadyExistsIncompatible"
        );
        assert_eq!(variant_name("Unsupported `capacity_range`"), "UnsupportedCapacityRange");
        assert_eq!(
            variant_name("Source incompatible or not supported"),
            "SourceIncompatibleOrNotSupported"
        );
    }

    #[test]
    fn recoveries_are_classified() {
        assert_eq!(
            recovery_kind("Caller MUST NOT retry. Caller MAY call `GetPluginCapabilities`"),
            "CallCapabilities"
        );
        assert_eq!(
            recovery_kind(
                "Caller MUST fix the request by adding the missing required field before retrying."
            ),
            "FixRequest"
        );
        assert_eq!(
            recovery_kind(
                "Caller SHOULD ensure that there are no other calls pending for the specified volume, and then retry with exponential back off."
            ),
            "RetryWithBackoff"
        );
        assert_eq!(recovery_kind("Caller SHOULD fail this request."), "DoNotRetry");
    }
}
