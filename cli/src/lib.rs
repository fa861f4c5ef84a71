//! The `csikit` command's library: what `csikit new-driver` and `csikit deploy` do, so that
//! `cargo xtask new-driver` runs the same code.
//!
//! Modules: `new_driver` (the driver scaffold and its templates in `templates/new-driver/`),
//! `deploy` (Kubernetes manifests derived from what a plugin says it is, with the sidecar table
//! `data/sidecars.toml`) and `tree` (writing a tree of files so no reader sees it half-written).

pub mod deploy;
pub mod new_driver;
pub mod tree;
