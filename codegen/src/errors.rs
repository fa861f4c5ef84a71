//! The per-RPC error catalog: one enum per RPC listing the spec's error rows for it, the general
//! ones, and csikit's own rows (`csikit_runtime::errors::CSIKIT_ROWS`: internal error, out of
//! capacity, backend unavailable or timed out, operation pending) for each code none of those
//! has, each row as data (`ErrorInfo`), and `classify` for callers.

use std::fmt::Write as _;

use csikit_runtime::errors::{CSIKIT_ROWS, Code, ErrorInfo};
use csikit_spec::check::{canonical_code, grpc_code_number};
use csikit_spec::{ErrorRow, Method, Model, NotAvailable};

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

/// The code a spec row's code *name* implies (the table's number is kept as written for the
/// reader), as gRPC numbers it.
fn implied_number(row: &ErrorRow) -> i32 {
    grpc_code_number(&canonical_code(&row.code)).unwrap_or(row.code_number)
}

fn info(
    row: &ErrorRow,
    rpc: Option<&str>,
    ja: Option<&ErrorRow>,
    carried_from: Option<&str>,
) -> String {
    let number = implied_number(row);
    let code = code_variant(
        csikit_spec::check::GRPC_CODES.get(number as usize).copied().unwrap_or("UNKNOWN"),
    );
    format!(
        "ErrorInfo {{ condition: {:?}, code: Code::{code}, code_as_written: {:?}, description: {:?}, recovery: {:?}, recovery_kind: Recovery::{}, rpc: {:?}, origin: Origin::{}, ja: {}, carried_from: {:?} }}",
        row.condition,
        format!("{} {}", row.code_number, row.code),
        row.description,
        row.recovery,
        recovery_kind(&row.recovery),
        rpc,
        if rpc.is_some() { "Rpc" } else { "General" },
        match ja {
            Some(j) => format!("Some(({:?}, {:?}, {:?}))", j.condition, j.description, j.recovery),
            None => "None".to_owned(),
        },
        carried_from,
    )
}

/// Where a model without error tables of its own took the general table from, if it did.
fn general_carried_from(model: &Model) -> Option<&str> {
    let carried = model.source.carried.as_ref()?;
    carried.parts.contains(&NotAvailable::GeneralErrors).then_some(carried.from.as_str())
}

/// The sentence saying where an RPC's own rows come from, for a model whose source states no
/// error tables (`source` names it, e.g. `csi-spec v1.13.0`); `None` where the source states
/// them.
pub fn table_provenance(model: &Model, method: &Method, source: &str) -> Option<String> {
    if model.source.states(NotAvailable::Errors) {
        return None;
    }
    Some(match (&method.carried_from, &model.source.carried) {
        (Some(from), _) => format!(
            "Its own rows are carried from {from}'s spec.md: {source}'s source has no error \
             tables, and the RPC's schema is unchanged since {from}. Check them against the \
             {source} text."
        ),
        (None, Some(carried)) => format!(
            "{source}'s source has no error tables, and the RPC is new or changed since {}, so \
             none is carried: no rows of its own.",
            carried.from
        ),
        (None, None) => format!("{source}'s source has no error tables: no rows of its own."),
    })
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

/// Where a row of an RPC's catalog comes from.
#[derive(Debug, Clone, Copy)]
pub enum CatalogRow<'m> {
    /// A row of the RPC's own table.
    Own(&'m ErrorRow),
    /// The general table's row at this index.
    General(usize, &'m ErrorRow),
    /// csikit's own row at this index of `CSIKIT_ROWS`.
    Csikit(usize, &'static ErrorInfo),
}

impl CatalogRow<'_> {
    /// The gRPC code the catalog gives the row.
    pub fn code(&self) -> i32 {
        match self {
            CatalogRow::Own(r) | CatalogRow::General(_, r) => implied_number(r),
            CatalogRow::Csikit(_, info) => info.code.number(),
        }
    }

    /// The condition, as its table words it.
    pub fn condition(&self) -> &str {
        match self {
            CatalogRow::Own(r) | CatalogRow::General(_, r) => &r.condition,
            CatalogRow::Csikit(_, info) => info.condition,
        }
    }
}

/// The rows of `method`'s catalog with their variant names, in the enum's order: the RPC's own
/// table, the general table, then each of csikit's rows whose code none of those has.
pub fn catalog<'m>(model: &'m Model, method: &'m Method) -> Vec<(String, CatalogRow<'m>)> {
    let mut rows: Vec<CatalogRow<'m>> = method
        .errors
        .iter()
        .map(CatalogRow::Own)
        .chain(model.general_errors.iter().enumerate().map(|(i, r)| CatalogRow::General(i, r)))
        .collect();
    for (i, info) in CSIKIT_ROWS.iter().enumerate() {
        if !rows.iter().any(|r| r.code() == info.code.number()) {
            rows.push(CatalogRow::Csikit(i, info));
        }
    }
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for row in rows {
        let mut name = variant_name(row.condition());
        if names.contains(&name) {
            let code = Code::from_number(row.code()).map_or("Row".to_owned(), |c| format!("{c:?}"));
            name = format!("{name}{code}");
        }
        while names.contains(&name) {
            name.push('_');
        }
        names.push(name.clone());
        out.push((name, row));
    }
    out
}

/// What a driver answers for the failures every driver meets, one per csikit row: the general
/// table's row with that code (`ListVolumes`' own ABORTED row is about its `starting_token`, not
/// a pending operation), else the RPC's own, else csikit's. With the variant's name and whether
/// it is csikit's.
pub fn answers_for_failures<'c, 'm>(
    catalog: &'c [(String, CatalogRow<'m>)],
) -> Vec<(&'static ErrorInfo, &'c str, bool)> {
    CSIKIT_ROWS
        .iter()
        .filter_map(|info| {
            let code = info.code.number();
            let with_code = |general: bool| {
                catalog.iter().find(|(_, r)| {
                    r.code() == code && matches!(r, CatalogRow::General(..)) == general
                })
            };
            let (name, row) = with_code(true).or_else(|| with_code(false))?;
            Some((info, name.as_str(), matches!(row, CatalogRow::Csikit(..))))
        })
        .collect()
}

/// The `errors` module of a package: `None` when it has no RPCs. `status` is what goes before
/// and after the `status()` methods (which need tonic): a `#[cfg]` line, or a checked feature's
/// macro; `None` leaves them out.
pub fn generate_errors(
    model: &Model,
    source: &str,
    translation: Option<&Model>,
    status: Option<(&str, &str)>,
) -> Option<String> {
    if model.services.iter().all(|s| s.methods.is_empty()) {
        return None;
    }
    let tables = model.source.states(NotAvailable::Errors);
    let general_from = general_carried_from(model);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! The error catalogs of `{}` as types: for each RPC, its own error rows from the spec, the",
        model.package
    );
    let _ = writeln!(
        out,
        "//! general ones, then csikit's own rows for the failures the spec's tables do not name (each"
    );
    let _ = writeln!(
        out,
        "//! marked as csikit's: [`Origin::Csikit`]), each with its gRPC code, description and the recovery\n\
         //! asked of the caller. A driver answers every error with its RPC's enum (`status(message)`),\n\
         //! never with a status of its own making."
    );
    match (&model.source.carried, tables) {
        (_, true) => {}
        (Some(carried), false) => {
            let _ = writeln!(
                out,
                "//!\n//! {source}'s source has no error tables of its own (its prose is not in it). The\n\
                 //! general table, and the tables of the RPCs whose schema is unchanged since {from}, are\n\
                 //! carried from {from}'s spec.md (each says so, and each row's `carried_from`): check them\n\
                 //! against the {source} text. The catalogs of RPCs that are new or changed since hold the\n\
                 //! general table's rows and csikit's only.",
                from = carried.from
            );
        }
        (None, false) => {
            let _ = writeln!(
                out,
                "//!\n//! This source has no error tables (its prose is not in it), so the catalogs hold\n\
                 //! csikit's rows only; the spec's rows are not borrowed from another release."
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "pub use ::csikit::errors::{{Code, ErrorInfo, Origin, Recovery}};\n");
    let _ = writeln!(
        out,
        "/// The general error table (\"Error Scheme\"), which applies to every RPC."
    );
    if let Some(from) = general_from {
        let _ = writeln!(
            out,
            "///\n/// Carried from {from}'s spec.md ({source}'s source has none): check it against the\n\
             /// {source} text."
        );
    }
    let _ = writeln!(out, "pub const GENERAL: &[ErrorInfo] = &[");
    let tr_general: &[ErrorRow] = translation.map_or(&[], |t| &t.general_errors);
    for row in &model.general_errors {
        let _ = writeln!(
            out,
            "    {},",
            info(row, None, translated(row, &model.general_errors, tr_general), general_from)
        );
    }
    let _ = writeln!(out, "];\n");
    let mut rpcs = Vec::new();
    for s in &model.services {
        for m in &s.methods {
            rpcs.push(m);
            let ty = format!("{}Error", m.name);
            let rows = catalog(model, m);
            let _ = writeln!(
                out,
                "/// The errors of `{}`: its own table's rows, the general table's, then csikit's.",
                m.name
            );
            if let Some(provenance) = table_provenance(model, m, source) {
                let _ = writeln!(out, "///\n/// {provenance}");
            }
            let answers = answers_for_failures(&rows);
            if !answers.is_empty() {
                let _ =
                    writeln!(out, "///\n/// What to answer for the failures every driver meets:");
                for (info, name, csikit) in &answers {
                    let _ = writeln!(
                        out,
                        "/// - {}: [`{ty}::{name}`]{}",
                        info.condition.to_lowercase(),
                        if *csikit { "" } else { " (the spec's row with that code)" }
                    );
                }
            }
            let _ = writeln!(out, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
            let _ = writeln!(out, "pub enum {ty} {{");
            for (name, row) in &rows {
                match row {
                    CatalogRow::Own(r) | CatalogRow::General(_, r) => {
                        let carried = match row {
                            CatalogRow::Own(_) => m.carried_from.as_deref(),
                            _ => general_from,
                        };
                        let _ = writeln!(
                            out,
                            "    /// {}\n    /// — `{} {}`{}{}",
                            r.condition.replace('`', ""),
                            r.code_number,
                            r.code,
                            if matches!(row, CatalogRow::Own(_)) { "" } else { " (general)" },
                            carried.map(|f| format!(", carried from {f}")).unwrap_or_default()
                        );
                        if grpc_code_number(&canonical_code(&r.code)) != Some(r.code_number) {
                            let _ = writeln!(
                                out,
                                "    ///\n    /// The spec writes `{} {}`; the catalog uses the number the name implies.",
                                r.code_number, r.code
                            );
                        }
                    }
                    CatalogRow::Csikit(_, info) => {
                        let _ = writeln!(
                            out,
                            "    /// {}\n    /// — `{}` (csikit's own row, not in the spec's tables)",
                            info.condition, info.code_as_written
                        );
                    }
                }
                let _ = writeln!(out, "    {name},");
            }
            let _ = writeln!(out, "}}\n");
            let _ = writeln!(out, "impl {ty} {{");
            let _ = writeln!(out, "    /// Every row: the spec's, in its order, then csikit's.");
            let _ = writeln!(
                out,
                "    pub const ALL: &'static [Self] = &[{}];\n",
                rows.iter().map(|(n, _)| format!("Self::{n}")).collect::<Vec<_>>().join(", ")
            );
            let _ = writeln!(out, "    const INFO: &'static [ErrorInfo] = &[");
            let tr_rows: &[ErrorRow] =
                translation.and_then(|t| t.method(&m.name)).map_or(&[], |(_, tm)| &tm.errors);
            for (_, row) in &rows {
                let _ = match row {
                    CatalogRow::Own(r) => writeln!(
                        out,
                        "        {},",
                        info(
                            r,
                            Some(m.name.as_str()),
                            translated(r, &m.errors, tr_rows),
                            m.carried_from.as_deref()
                        )
                    ),
                    // The general rows are the ones in `GENERAL`, csikit's the runtime's: not copies.
                    CatalogRow::General(i, _) => writeln!(out, "        GENERAL[{i}],"),
                    CatalogRow::Csikit(i, _) => {
                        writeln!(out, "        ::csikit::errors::CSIKIT_ROWS[{i}],")
                    }
                };
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
    let unstated: Vec<String> =
        rpcs.iter().filter(|m| !model.states_errors(m)).map(|m| format!("{:?}", m.name)).collect();
    let _ = writeln!(
        out,
        "/// The RPCs whose own error table this source does not state (read without its prose, it\n\
         /// states none; only tables carried from an older release are known): their catalogs hold\n\
         /// the general table's rows and csikit's, and [`rpc_rows`] gives them none.\n\
         pub const TABLES_NOT_STATED: &[&str] = &[{}];\n",
        unstated.join(", ")
    );
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
        "/// What the catalog tells a caller of `rpc` to do after a status with `code`: the RPC's own row for"
    );
    let _ = writeln!(
        out,
        "/// that code, else the general table's, else csikit's own (its `origin` is `Origin::Csikit`);\n\
         /// `None` when none has a row for it."
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
