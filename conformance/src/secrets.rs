//! csi-sanity's secrets file: the secrets to send, per kind of call.

use std::collections::HashMap;
use std::path::Path;

/// Secrets per kind of call, as csi-sanity's `--csi.secrets` YAML gives them.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    by_kind: HashMap<String, HashMap<String, String>>,
}

impl Secrets {
    /// The secrets for a kind (`CreateVolumeSecret`, `NodePublishVolumeSecret`, ...); empty when
    /// the file names none.
    pub fn get(&self, kind: &str) -> HashMap<String, String> {
        self.by_kind.get(kind).cloned().unwrap_or_default()
    }

    /// True when the file names no kind at all.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }

    /// Every value, to look for in a driver's log.
    pub fn values(&self) -> Vec<String> {
        self.by_kind.values().flat_map(|m| m.values().cloned()).filter(|v| !v.is_empty()).collect()
    }

    /// Reads csi-sanity's secrets file: a YAML mapping of kinds to mappings of keys to values,
    /// as csi-sanity writes it (block style, plain or quoted scalars, `#` comments). Flow style
    /// and anchors are refused with the line.
    ///
    /// # Errors
    ///
    /// A line that is not `Kind:` or an indented `key: value`, with its number.
    pub fn parse(text: &str) -> anyhow::Result<Secrets> {
        let mut by_kind: HashMap<String, HashMap<String, String>> = HashMap::new();
        let mut current: Option<String> = None;
        for e in crate::yaml::entries(text)? {
            if e.indented {
                let kind = current
                    .clone()
                    .ok_or_else(|| anyhow::anyhow!("line {}: a value outside any kind", e.line))?;
                by_kind.entry(kind).or_default().insert(e.key, e.value);
            } else {
                if !e.value.is_empty() {
                    anyhow::bail!("line {}: '{}' must hold a mapping of secrets", e.line, e.key);
                }
                by_kind.entry(e.key.clone()).or_default();
                current = Some(e.key);
            }
        }
        Ok(Secrets { by_kind })
    }

    /// Reads a secrets file.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or does not parse (`path:line: why`).
    pub fn read(path: &Path) -> anyhow::Result<Secrets> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read '{}': {e}", path.display()))?;
        Secrets::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}
