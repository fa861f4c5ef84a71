//! `csi-view`'s interactive front ends, beside the binary that wires the command line: [`tui`]
//! browses and edits a message in the terminal, [`ui`] serves the same in a local web page,
//! [`client`] makes unary calls of encoded bytes, [`send`] is the one path a request to a plugin
//! takes (for `call`, `replay` and the page: checked, its secrets read, sent, the answer scrubbed
//! and set beside the spec's error tables), and [`replay`] sends a capture's calls again and
//! judges the answers. The offline parts they stand on are `csi-view-core`; the proxy is
//! `csi-view-proxy`.

pub mod client;
pub mod replay;
pub mod send;
pub mod tui;
pub mod ui;
