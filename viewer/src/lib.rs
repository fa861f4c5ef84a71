//! `csi-view`'s interactive front ends, beside the binary that wires the command line: [`tui`]
//! browses and edits a message in the terminal, [`ui`] serves the same in a local web page,
//! [`client`] sends requests to a plugin (for `call`, `replay` and the page), and [`replay`]
//! sends a capture's calls again and judges the answers. The offline parts they stand on are
//! `csi-view-core`; the proxy is `csi-view-proxy`.

pub mod client;
pub mod replay;
pub mod tui;
pub mod ui;
