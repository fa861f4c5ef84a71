//! What the spec says about each RPC beyond its messages: its error table (and the general one),
//! and who must implement it. [`crate::schema::Schema`] holds one [`RpcTables`] per source: for
//! the built-in schema, `csikit`'s generated error tables; for a loaded source, its Model's rows
//! and obligations. A source that states none (a `.proto` alone, a descriptor set) says so
//! ([`ErrorLookup::NoTables`]), and nothing is taken from another release but
//! what a release read from its proto alone carries from an older release's prose (`csikit_spec`'s
//! carry, or csikit's catalog generated from it), each table saying where from. The name every tool
//! shows for a status code ([`status_name`]) is here too, beside the rows that name codes.

use std::collections::HashMap;

use csikit::errors::ErrorInfo;
use csikit_spec::source::NotAvailable;
pub use csikit_spec::{CapabilityRef, ErrorRow, Obligation};

/// The name of a gRPC status code as captures, the proxy and the error tables show it
/// (`NOT_FOUND`); `NO STATUS` for -1 (a call that ended without one), the number for a code gRPC
/// does not name.
pub fn status_name(code: i32) -> String {
    usize::try_from(code).ok().and_then(|c| csikit_spec::check::GRPC_CODES.get(c)).map_or_else(
        || if code < 0 { "NO STATUS".into() } else { format!("CODE {code}") },
        |s| (*s).to_owned(),
    )
}

/// Which table a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The RPC's own error table.
    Rpc,
    /// The spec's general error table.
    General,
}

/// One error table's rows, in the spec's order, and the older release whose prose it is carried
/// from (`v1.12.0`), if it is.
pub type TableRows = (Table, Vec<ErrorRow>, Option<String>);

/// What the spec's error tables say about a status code returned by an RPC.
#[derive(Debug, Clone)]
pub enum ErrorLookup {
    /// The RPC's own rows with the code (it may have several: `NOT_FOUND` for the volume and for
    /// the node), else the general table's.
    Rows {
        /// The table the rows are from.
        table: Table,
        /// The rows, in the spec's order.
        rows: Vec<ErrorRow>,
        /// The older release whose prose the table is carried from (`v1.12.0`), if it is.
        carried_from: Option<String>,
    },
    /// The tables have no row with this code.
    NoRow,
    /// The source states no error tables.
    NoTables,
}

impl ErrorLookup {
    /// The rows found (none for [`ErrorLookup::NoRow`] and [`ErrorLookup::NoTables`]).
    pub fn rows(&self) -> &[ErrorRow] {
        match self {
            ErrorLookup::Rows { rows, .. } => rows,
            _ => &[],
        }
    }
}

impl ErrorLookup {
    /// What the spec says, as lines to print under a status (`rpc`: the RPC's simple name,
    /// `code`: the status code's name): each row's condition, description and recovery, or why
    /// there is none.
    pub fn explain(&self, rpc: &str, code: &str) -> Vec<String> {
        match self {
            ErrorLookup::Rows { table, rows, carried_from } => rows
                .iter()
                .map(|r| {
                    let mut from = match table {
                        Table::Rpc => format!("{rpc}'s error table"),
                        Table::General => "the general error table".to_owned(),
                    };
                    if let Some(release) = carried_from {
                        from.push_str(&format!(", carried from {release}'s spec.md"));
                    }
                    let mut line = format!("spec ({from}): {}: {}", r.condition, r.description);
                    if !r.recovery.is_empty() {
                        line.push(' ');
                        line.push_str(&r.recovery);
                    }
                    line
                })
                .collect(),
            ErrorLookup::NoRow => {
                vec![format!("spec: no row for {code} in {rpc}'s error table or the general one")]
            }
            ErrorLookup::NoTables => vec!["spec: no error table in this source".to_owned()],
        }
    }
}

/// An RPC the spec obliges a plugin to implement, with when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObligedRpc {
    /// The service's simple name, `Controller`.
    pub service: String,
    /// The RPC's simple name, `CreateVolume`.
    pub rpc: String,
    /// Who must implement it, and the capabilities any one of which obliges it (none: always).
    pub obligation: Obligation,
    /// The older release whose prose states it, when carried into a release read from its
    /// proto alone (`v1.12.0`).
    pub carried_from: Option<String>,
}

impl ObligedRpc {
    /// Whose word the obligation is: `the spec's prose`, `v1.12.0's spec.md, carried`, or `the
    /// proto's comment` (the words of `csikit`'s server tables).
    pub fn stated(&self) -> String {
        match (&self.carried_from, self.obligation.from_comment) {
            (Some(from), _) => format!("{from}'s spec.md, carried"),
            (None, true) => "the proto's comment".to_owned(),
            (None, false) => "the spec's prose".to_owned(),
        }
    }
}

/// The error tables of one source.
#[derive(Debug)]
enum ErrorTables {
    /// Rows from a Model, by RPC simple name (with the release a carried table comes from), and
    /// its general table (likewise).
    Model {
        by_rpc: HashMap<String, (Vec<ErrorRow>, Option<String>)>,
        general: (Vec<ErrorRow>, Option<String>),
    },
    /// `csikit`'s generated tables of a built-in package.
    Generated { rpc_rows: fn(&str) -> Option<&'static [ErrorInfo]>, general: &'static [ErrorInfo] },
    /// The source states none.
    None,
}

/// What one source says about its RPCs.
#[derive(Debug)]
pub struct RpcTables {
    errors: ErrorTables,
    /// `None`: the source does not state obligations.
    obligations: Option<Vec<ObligedRpc>>,
}

impl RpcTables {
    /// The tables of a Model: its rows and obligations, or none where its source cannot state
    /// them. A release read from its proto alone with facts carried from an older release's
    /// prose (`carried_from`) has the carried general table, and each RPC whose schema is
    /// unchanged since has its carried table; the others (new or changed RPCs) have the general
    /// table only, as csikit's generated catalog has.
    pub fn of_model(model: &csikit_spec::Model) -> RpcTables {
        let states = |what| model.source.states(what);
        let carried = model.source.carried.is_some();
        let methods = || model.services.iter().flat_map(|s| s.methods.iter().map(move |m| (s, m)));
        let general_from = model
            .source
            .carried
            .as_ref()
            .filter(|c| c.parts.contains(&NotAvailable::GeneralErrors))
            .map(|c| c.from.clone());
        let errors =
            if states(NotAvailable::Errors) || states(NotAvailable::GeneralErrors) || carried {
                ErrorTables::Model {
                    by_rpc: methods()
                        .filter(|(_, m)| model.states_errors(m))
                        .map(|(_, m)| (m.name.clone(), (m.errors.clone(), m.carried_from.clone())))
                        .collect(),
                    general: (model.general_errors.clone(), general_from),
                }
            } else {
                ErrorTables::None
            };
        let obligations = (states(NotAvailable::Obligations) || carried).then(|| {
            methods()
                .filter_map(|(s, m)| {
                    Some(ObligedRpc {
                        service: s.name.clone(),
                        rpc: m.name.clone(),
                        obligation: m.obligation.clone()?,
                        carried_from: m.carried_from.clone(),
                    })
                })
                .collect()
        });
        RpcTables { errors, obligations }
    }

    /// The generated error tables of a built-in package; obligations are added with
    /// [`RpcTables::set_obligations`] by a caller that compiles `csikit`'s server tables.
    pub fn generated(
        rpc_rows: fn(&str) -> Option<&'static [ErrorInfo]>,
        general: &'static [ErrorInfo],
    ) -> RpcTables {
        RpcTables { errors: ErrorTables::Generated { rpc_rows, general }, obligations: None }
    }

    /// A source with neither error tables nor obligations.
    pub fn none() -> RpcTables {
        RpcTables { errors: ErrorTables::None, obligations: None }
    }

    /// Replaces the obligations.
    pub fn set_obligations(&mut self, obligations: Vec<ObligedRpc>) {
        self.obligations = Some(obligations);
    }

    /// The obligations, or `None` when the source does not state them.
    pub fn obligations(&self) -> Option<&[ObligedRpc]> {
        self.obligations.as_deref()
    }

    /// The rows for `code` returned by `rpc` (its simple name): the RPC's own, else the general
    /// table's.
    pub fn lookup(&self, rpc: &str, code: i32) -> ErrorLookup {
        let Some([(_, own, own_from), (_, general, general_from)]) = self.tables(rpc) else {
            return ErrorLookup::NoTables;
        };
        let with = |rows: Vec<ErrorRow>| -> Vec<ErrorRow> {
            rows.into_iter().filter(|r| code_of(r) == Some(code)).collect()
        };
        let (own, general) = (with(own), with(general));
        if !own.is_empty() {
            ErrorLookup::Rows { table: Table::Rpc, rows: own, carried_from: own_from }
        } else if !general.is_empty() {
            ErrorLookup::Rows { table: Table::General, rows: general, carried_from: general_from }
        } else {
            ErrorLookup::NoRow
        }
    }

    /// Every row of `rpc`'s own table and of the general table, each table with the release it
    /// is carried from (if it is); `None` when the source states no error tables. An RPC whose
    /// own table the source does not state (new or changed in a release read from its proto
    /// alone) has none of its own.
    pub fn tables(&self, rpc: &str) -> Option<[TableRows; 2]> {
        match &self.errors {
            ErrorTables::None => None,
            ErrorTables::Model { by_rpc, general } => {
                let (own, from) = by_rpc.get(rpc).cloned().unwrap_or_default();
                Some([
                    (Table::Rpc, own, from),
                    (Table::General, general.0.clone(), general.1.clone()),
                ])
            }
            ErrorTables::Generated { rpc_rows, general } => {
                let rows = |infos: &[ErrorInfo]| -> (Vec<ErrorRow>, Option<String>) {
                    let from = infos.first().and_then(|i| i.carried_from).map(str::to_owned);
                    (infos.iter().map(row_of_info).collect(), from)
                };
                let (own, own_from) = rows(rpc_rows(rpc).unwrap_or(&[]));
                let (general, general_from) = rows(general);
                Some([(Table::Rpc, own, own_from), (Table::General, general, general_from)])
            }
        }
    }
}

/// The code a row means: the number its code name implies (a table whose number disagrees with
/// the name is a diagnostic of the spec reader; the name is what the spec's prose means).
fn code_of(row: &ErrorRow) -> Option<i32> {
    csikit_spec::check::grpc_code_number(&row.code).or(Some(row.code_number))
}

/// A generated row as the Model writes one.
fn row_of_info(info: &ErrorInfo) -> ErrorRow {
    let number = info.code.number();
    // The number as the table writes it (`13 RESOURCE_EXHAUSTED` in one v1.12.0 table), as the
    // Model keeps it; the name, which the code follows, is the same either way.
    let written = info.code_as_written.split_whitespace().next().and_then(|n| n.parse().ok());
    ErrorRow {
        condition: info.condition.to_owned(),
        code: status_name(number),
        code_number: written.unwrap_or(number),
        description: info.description.to_owned(),
        recovery: info.recovery.to_owned(),
        lang: "en".to_owned(),
        span: csikit_spec::Span::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rpc_row_comes_before_the_general_table() {
        let t = RpcTables::generated(csikit::v1::errors::rpc_rows, csikit::v1::errors::GENERAL);
        let ErrorLookup::Rows { table, rows, .. } = t.lookup("ControllerPublishVolume", 5) else {
            panic!("no rows")
        };
        assert_eq!(table, Table::Rpc);
        // The volume and the node: both NOT_FOUND rows of the RPC's table.
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().all(|r| r.code == "NOT_FOUND" && r.code_number == 5));
        let ErrorLookup::Rows { table, rows, .. } = t.lookup("CreateVolume", 12) else {
            panic!("no rows")
        };
        assert_eq!((table, rows[0].condition.as_str()), (Table::General, "Call not implemented"));
        let lines =
            t.lookup("ControllerPublishVolume", 5).explain("ControllerPublishVolume", "NOT_FOUND");
        // csikit's catalog of a release read from its proto alone carries its tables from an
        // older release's prose, and says so.
        let whose = csikit::v1::errors::rpc_rows("ControllerPublishVolume")
            .and_then(|rows| rows.first()?.carried_from)
            .map_or_else(String::new, |from| format!(", carried from {from}'s spec.md"));
        assert!(
            lines[0].starts_with(&format!(
                "spec (ControllerPublishVolume's error table{whose}): Volume does not exist: "
            )),
            "{lines:?}"
        );
        assert!(lines[0].contains("Caller MUST"), "{lines:?}");
        assert!(matches!(t.lookup("CreateVolume", 15), ErrorLookup::NoRow));
        assert!(matches!(RpcTables::none().lookup("CreateVolume", 5), ErrorLookup::NoTables));
    }
}
