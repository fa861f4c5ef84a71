//! A source's descriptor pool inside the [`Schema`](super::Schema): decoded when first used, with
//! what its release reserved put back under older names ([`crate::former`]).

use std::sync::OnceLock;

use csikit::facts::MessageFacts;
use prost_reflect::DescriptorPool;

use crate::former::{self, Restored};

/// A source's descriptor pool, decoded when first used. A built-in package's is decoded from
/// `csikit`'s embedded set without its source info, which nothing reads from the pool (comments
/// come through the Model, `Docs`) and which makes decoding several times slower: a command
/// that needs one package (`call`) decodes only that one. What the source's release reserved and
/// an older release named is put back under that name ([`former::restore`]).
#[derive(Debug)]
pub(super) struct Pool {
    cell: OnceLock<(DescriptorPool, Restored)>,
    pub(super) embedded: &'static [u8],
    /// The source's release, when what it reserved is to be named ([`former`]).
    reserved_in: Option<String>,
}

impl Pool {
    pub(super) fn ready(pool: DescriptorPool, reserved_in: Option<String>) -> Pool {
        let cell = OnceLock::new();
        let restored =
            reserved_in.as_deref().and_then(|release| with_former(&pool.encode_to_vec(), release));
        let _ = cell.set(restored.unwrap_or((pool, Restored::default())));
        Pool { cell, embedded: &[], reserved_in }
    }

    pub(super) fn embedded(bytes: &'static [u8], reserved_in: Option<String>) -> Pool {
        Pool { cell: OnceLock::new(), embedded: bytes, reserved_in }
    }

    fn decoded(&self) -> &(DescriptorPool, Restored) {
        // The bytes were made by csikit's generator and a test decodes every package; should
        // they not decode, the package is empty rather than the viewer failing.
        self.cell.get_or_init(|| {
            let bytes = without_source_info(self.embedded);
            self.reserved_in
                .as_deref()
                .and_then(|release| with_former(&bytes, release))
                .unwrap_or_else(|| {
                    (
                        DescriptorPool::decode(bytes.as_slice()).unwrap_or_default(),
                        Restored::default(),
                    )
                })
        })
    }

    pub(super) fn get(&self) -> &DescriptorPool {
        &self.decoded().0
    }

    /// What was put back; empty until the pool is first used (nothing of it is shown before).
    pub(super) fn restored(&self) -> Option<&Restored> {
        self.cell.get().map(|(_, r)| r)
    }
}

/// `set` with what its release reserved put back from csikit's older releases, decoded; `None`
/// when nothing is, or the result does not decode (the source is then read as it is).
fn with_former(set: &[u8], release: &str) -> Option<(DescriptorPool, Restored)> {
    let (bytes, restored) = former::restore(set, release, &former::builtin_older())?;
    Some((DescriptorPool::decode(bytes.as_slice()).ok()?, restored))
}

/// The facts an older release states for a message of it (a member put back, or its type).
pub(super) fn former_message_facts(release: &str, message: &str) -> Option<&'static MessageFacts> {
    former::builtin_older()
        .into_iter()
        .find(|o| o.release == release)
        .and_then(|o| o.facts)
        .and_then(|f| f.message(message))
}

/// An encoded `FileDescriptorSet` with each file's `source_code_info` (field 9) left out, every
/// other byte as it was (custom options included).
fn without_source_info(set: &[u8]) -> Vec<u8> {
    use crate::wire::{Records, WireValue};
    let mut out = Vec::with_capacity(set.len() / 3);
    for r in Records::new(set, 0, 0) {
        let Ok(r) = r else { return set.to_vec() };
        match (r.number, &r.value) {
            (1, WireValue::Len(file)) => {
                let mut kept = Vec::with_capacity(file.len() / 3);
                for f in Records::new(file, 0, 1) {
                    let Ok(f) = f else { return set.to_vec() };
                    if f.number != 9 {
                        kept.extend_from_slice(&file[f.offset..f.end]);
                    }
                }
                out.push(0x0a);
                prost::encoding::encode_varint(kept.len() as u64, &mut out);
                out.extend_from_slice(&kept);
            }
            _ => out.extend_from_slice(&set[r.offset..r.end]),
        }
    }
    out
}
