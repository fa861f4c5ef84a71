//! What a release reserved, named as the newest older release that used the number named it.
//!
//! CSI v1.13.0 took `volume_condition` (field 2 of three messages) and the `VOLUME_CONDITION`
//! capability values out of the schema and reserved their numbers. A plugin still on v1.12.0
//! sends them all the same; read with v1.13.0's descriptors they are "unknown field 2" and a bare
//! number. [`restore`] puts each such member back into a descriptor set, under its old name and
//! with the types it needs, and says what it put back ([`Restored`]), so every reader of the
//! schema's pool (text, JSON, detection, diff, replay, the proxy's log, the TUI and the page)
//! names it alike and can mark it as a former member. Only a reserved number is ever given a
//! name: a number the release never used stays unknown.
//!
//! The work is on the encoded set (wire records), so everything else in it (custom options such
//! as `csi_secret`) stays byte for byte as it was.

use std::collections::{HashMap, HashSet};
use std::fmt;

use csikit::facts::PackageFacts;

use crate::wire::{self, Records, WireValue};

/// Where a restored member's name comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Former {
    /// The older release that named the number (`v1.12.0`).
    pub release: String,
    /// The release the schema is, which reserved it (`v1.13.0`).
    pub reserved_in: String,
}

impl fmt::Display for Former {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "named as in {}, reserved in {}", self.release, self.reserved_in)
    }
}

/// What [`restore`] put back into a set.
#[derive(Debug, Clone, Default)]
pub struct Restored {
    /// Fields, by message full name and number.
    pub fields: HashMap<String, HashMap<u32, Former>>,
    /// Enum values, by enum full name and number.
    pub values: HashMap<String, HashMap<i32, Former>>,
    /// Types the set no longer declares, copied back because a restored field names them.
    pub types: HashMap<String, Former>,
}

impl Restored {
    /// Where the name of field `number` of `message` comes from, when it was put back.
    pub fn field(&self, message: &str, number: u32) -> Option<&Former> {
        self.fields.get(message)?.get(&number)
    }

    /// Where the name of value `number` of enum `name` comes from, when it was put back.
    pub fn value(&self, name: &str, number: i32) -> Option<&Former> {
        self.values.get(name)?.get(&number)
    }

    /// True when nothing was put back.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.values.is_empty() && self.types.is_empty()
    }
}

/// An older release's encoded descriptors.
#[derive(Debug, Clone, Copy)]
pub struct Older<'a> {
    /// Its name (`v1.12.0`).
    pub release: &'a str,
    /// Its encoded `FileDescriptorSet`.
    pub set: &'a [u8],
    /// Its facts, for what is put back from it.
    pub facts: Option<&'a PackageFacts>,
}

/// The releases `csikit` keeps besides its current one (`csikit::v1_12`), newest first.
pub fn builtin_older() -> [Older<'static>; 1] {
    [Older {
        release: release_name(&csikit::v1_12::facts::FACTS.release),
        set: csikit::v1_12::FILE_DESCRIPTOR_SET,
        facts: Some(&csikit::v1_12::facts::FACTS),
    }]
}

/// A generated facts table's release (`csi-spec v1.12.0`) as a release name (`v1.12.0`).
pub fn release_name(release: &str) -> &str {
    release.rsplit(' ').next().unwrap_or(release)
}

// Field numbers of descriptor.proto's messages, as the encoded set holds them.
const SET_FILE: u32 = 1;
const FILE_PACKAGE: u32 = 2;
const FILE_MESSAGE: u32 = 4;
const FILE_ENUM: u32 = 5;
const NAME: u32 = 1;
const MESSAGE_FIELD: u32 = 2;
const MESSAGE_NESTED: u32 = 3;
const MESSAGE_ENUM: u32 = 4;
const MESSAGE_RESERVED_RANGE: u32 = 9;
const MESSAGE_RESERVED_NAME: u32 = 10;
const FIELD_NUMBER: u32 = 3;
const FIELD_TYPE_NAME: u32 = 6;
const FIELD_ONEOF_INDEX: u32 = 9;
const ENUM_VALUE: u32 = 2;
const ENUM_RESERVED_RANGE: u32 = 4;
const ENUM_RESERVED_NAME: u32 = 5;
const VALUE_NUMBER: u32 = 2;
const RANGE_START: u32 = 1;
const RANGE_END: u32 = 2;

/// One message or enum of a set.
#[derive(Debug, Clone, Copy)]
struct Decl<'a> {
    /// Its encoded `DescriptorProto` or `EnumDescriptorProto`.
    bytes: &'a [u8],
    is_enum: bool,
    /// Declared at file level (only those are copied back).
    top_level: bool,
}

/// One field or enum value of a declaration.
#[derive(Debug, Clone, Copy)]
struct Member<'a> {
    number: i64,
    name: &'a str,
    /// The type a field names (`.csi.v1.VolumeCondition`), without the leading dot.
    type_name: Option<&'a str>,
    in_oneof: bool,
    /// The whole record, tag included.
    record: &'a [u8],
}

/// A reserved range, both ends inclusive.
type Range = (i64, i64);

fn records(bytes: &[u8]) -> impl Iterator<Item = wire::Record<'_>> {
    // Sets come from csikit's generator or from prost-reflect's encoder; a record that does not
    // read ends the walk, and `restore` then finds less to put back, never more.
    Records::new(bytes, 0, 0).map_while(Result::ok)
}

fn len_of<'a>(r: &wire::Record<'a>) -> Option<&'a [u8]> {
    match r.value {
        WireValue::Len(d) => Some(d),
        _ => None,
    }
}

fn string_of(bytes: &[u8], number: u32) -> Option<&str> {
    records(bytes)
        .filter(|r| r.number == number)
        .find_map(|r| len_of(&r).and_then(|d| std::str::from_utf8(d).ok()))
}

fn varint_of(bytes: &[u8], number: u32) -> Option<i64> {
    records(bytes).filter(|r| r.number == number).find_map(|r| match r.value {
        // int32 values are written as sign-extended 64-bit varints.
        WireValue::Varint(v) => Some(v as i64),
        _ => None,
    })
}

fn join(scope: &str, name: &str) -> String {
    if scope.is_empty() { name.to_owned() } else { format!("{scope}.{name}") }
}

/// Every message and enum of an encoded set, nested ones included, by full name.
fn declarations(set: &[u8]) -> HashMap<String, Decl<'_>> {
    fn message<'a>(bytes: &'a [u8], full: String, top: bool, out: &mut HashMap<String, Decl<'a>>) {
        for r in records(bytes) {
            let Some(d) = len_of(&r) else { continue };
            let name = string_of(d, NAME).unwrap_or_default();
            match r.number {
                MESSAGE_NESTED => message(d, join(&full, name), false, out),
                MESSAGE_ENUM => {
                    out.insert(
                        join(&full, name),
                        Decl { bytes: d, is_enum: true, top_level: false },
                    );
                }
                _ => {}
            }
        }
        out.insert(full, Decl { bytes, is_enum: false, top_level: top });
    }
    let mut out = HashMap::new();
    for file in records(set).filter(|r| r.number == SET_FILE).filter_map(|r| len_of(&r)) {
        let package = string_of(file, FILE_PACKAGE).unwrap_or_default();
        for r in records(file) {
            let Some(d) = len_of(&r) else { continue };
            let name = join(package, string_of(d, NAME).unwrap_or_default());
            match r.number {
                FILE_MESSAGE => message(d, name, true, &mut out),
                FILE_ENUM => {
                    out.insert(name, Decl { bytes: d, is_enum: true, top_level: true });
                }
                _ => {}
            }
        }
    }
    out
}

/// The fields of a message, or the values of an enum.
fn members<'a>(decl: &Decl<'a>) -> Vec<Member<'a>> {
    let (number, wanted) =
        if decl.is_enum { (VALUE_NUMBER, ENUM_VALUE) } else { (FIELD_NUMBER, MESSAGE_FIELD) };
    records(decl.bytes)
        .filter(|r| r.number == wanted)
        .filter_map(|r| {
            let d = len_of(&r)?;
            Some(Member {
                number: varint_of(d, number)?,
                name: string_of(d, NAME)?,
                type_name: string_of(d, FIELD_TYPE_NAME)
                    .filter(|_| !decl.is_enum)
                    .map(|t| t.trim_start_matches('.')),
                in_oneof: !decl.is_enum && varint_of(d, FIELD_ONEOF_INDEX).is_some(),
                record: &decl.bytes[r.offset..r.end],
            })
        })
        .collect()
}

/// A declaration's reserved ranges, both ends inclusive.
fn reserved_ranges(decl: &Decl<'_>) -> Vec<Range> {
    let number = if decl.is_enum { ENUM_RESERVED_RANGE } else { MESSAGE_RESERVED_RANGE };
    records(decl.bytes)
        .filter(|r| r.number == number)
        .filter_map(|r| {
            let d = len_of(&r)?;
            let start = varint_of(d, RANGE_START)?;
            let end = varint_of(d, RANGE_END)?;
            // A message's range ends before `end`; an enum's includes it.
            Some((start, if decl.is_enum { end } else { end - 1 }))
        })
        .collect()
}

/// What to put back into one declaration.
#[derive(Debug, Default)]
struct Plan<'a> {
    /// Member records to add, with their numbers and names.
    members: Vec<Member<'a>>,
}

/// Puts back into `current` (an encoded `FileDescriptorSet` of release `reserved_in`) every
/// member whose number it reserves and an older release names, from the newest of `older`
/// that names it; `None` when there is nothing to put back. A field is put back only when it
/// stands in no oneof, its name is free, and its type is declared in `current` or is a
/// file-level type of that older release, which is then copied back (with what it needs).
pub fn restore(
    current: &[u8],
    reserved_in: &str,
    older: &[Older<'_>],
) -> Option<(Vec<u8>, Restored)> {
    let now = declarations(current);
    let reserving: Vec<(&String, &Decl<'_>, Vec<Range>)> = now
        .iter()
        .map(|(name, d)| (name, d, reserved_ranges(d)))
        .filter(|(_, _, ranges)| !ranges.is_empty())
        .collect();
    if reserving.is_empty() {
        return None;
    }
    let mut plans: HashMap<String, Plan<'_>> = HashMap::new();
    let mut copies: Vec<(String, Decl<'_>)> = Vec::new();
    let mut restored = Restored::default();
    let olds: Vec<(&str, HashMap<String, Decl<'_>>)> =
        older.iter().map(|o| (o.release, declarations(o.set))).collect();
    for (name, decl, ranges) in &reserving {
        let taken: HashSet<&str> = members(decl).iter().map(|m| m.name).collect();
        let mut numbers: HashSet<i64> = HashSet::new();
        for (release, old) in &olds {
            let Some(was) = old.get(*name).filter(|d| d.is_enum == decl.is_enum) else { continue };
            for m in members(was) {
                let reserved = ranges.iter().any(|&(a, b)| (a..=b).contains(&m.number));
                if !reserved || m.in_oneof || taken.contains(m.name) || numbers.contains(&m.number)
                {
                    continue;
                }
                let mut needed = Vec::new();
                if !decl.is_enum && !resolves(m.type_name, &now, old, &mut needed) {
                    continue;
                }
                numbers.insert(m.number);
                let former =
                    Former { release: (*release).to_owned(), reserved_in: reserved_in.to_owned() };
                for (t, d) in needed {
                    if !restored.types.contains_key(&t) {
                        restored.types.insert(t.clone(), former.clone());
                        copies.push((t, d));
                    }
                }
                if decl.is_enum {
                    let values = restored.values.entry((*name).clone()).or_default();
                    values.insert(m.number as i32, former);
                } else {
                    let fields = restored.fields.entry((*name).clone()).or_default();
                    fields.insert(m.number as u32, former);
                }
                plans.entry((*name).clone()).or_default().members.push(m);
            }
        }
    }
    if plans.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(current.len() + 256);
    for r in records(current) {
        match (r.number, len_of(&r)) {
            (SET_FILE, Some(file)) => {
                wire::put_len(&mut out, SET_FILE, &rewrite_file(file, &plans, &mut copies));
            }
            _ => out.extend_from_slice(&current[r.offset..r.end]),
        }
    }
    Some((out, restored))
}

/// True when a field's type is a scalar, declared in `now`, or a file-level type of `old` that
/// can be copied back (added to `needed`, with the types its own fields need).
fn resolves<'a>(
    type_name: Option<&str>,
    now: &HashMap<String, Decl<'_>>,
    old: &HashMap<String, Decl<'a>>,
    needed: &mut Vec<(String, Decl<'a>)>,
) -> bool {
    let Some(t) = type_name else { return true };
    if now.contains_key(t) || needed.iter().any(|(n, _)| n == t) {
        return true;
    }
    let Some(decl) = old.get(t).filter(|d| d.top_level) else { return false };
    needed.push((t.to_owned(), *decl));
    decl.is_enum || members(decl).iter().all(|m| resolves(m.type_name, now, old, needed))
}

fn rewrite_file(
    file: &[u8],
    plans: &HashMap<String, Plan<'_>>,
    copies: &mut Vec<(String, Decl<'_>)>,
) -> Vec<u8> {
    let package = string_of(file, FILE_PACKAGE).unwrap_or_default();
    let mut out = Vec::with_capacity(file.len() + 128);
    for r in records(file) {
        match (r.number, len_of(&r)) {
            (FILE_MESSAGE, Some(d)) => {
                let name = join(package, string_of(d, NAME).unwrap_or_default());
                wire::put_len(&mut out, FILE_MESSAGE, &rewrite_message(d, &name, plans));
            }
            (FILE_ENUM, Some(d)) => {
                let name = join(package, string_of(d, NAME).unwrap_or_default());
                wire::put_len(&mut out, FILE_ENUM, &rewrite_enum(d, &name, plans));
            }
            _ => out.extend_from_slice(&file[r.offset..r.end]),
        }
    }
    // A copied type goes into the first file of its package.
    let prefix = format!("{package}.");
    copies.retain(|(name, decl)| {
        let here = name.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('.'));
        if here {
            let number = if decl.is_enum { FILE_ENUM } else { FILE_MESSAGE };
            wire::put_len(&mut out, number, decl.bytes);
        }
        !here
    });
    out
}

fn rewrite_message(bytes: &[u8], full: &str, plans: &HashMap<String, Plan<'_>>) -> Vec<u8> {
    let plan = plans.get(full);
    let mut out = Vec::with_capacity(bytes.len() + 64);
    for r in records(bytes) {
        let whole = &bytes[r.offset..r.end];
        match (r.number, len_of(&r)) {
            (MESSAGE_NESTED, Some(d)) => {
                let name = join(full, string_of(d, NAME).unwrap_or_default());
                wire::put_len(&mut out, MESSAGE_NESTED, &rewrite_message(d, &name, plans));
            }
            (MESSAGE_ENUM, Some(d)) => {
                let name = join(full, string_of(d, NAME).unwrap_or_default());
                wire::put_len(&mut out, MESSAGE_ENUM, &rewrite_enum(d, &name, plans));
            }
            (MESSAGE_RESERVED_RANGE, Some(d)) if plan.is_some() => {
                let (Some(a), Some(b)) = (varint_of(d, RANGE_START), varint_of(d, RANGE_END))
                else {
                    out.extend_from_slice(whole);
                    continue;
                };
                put_ranges(&mut out, MESSAGE_RESERVED_RANGE, (a, b - 1), plan, 1);
            }
            (MESSAGE_RESERVED_NAME, Some(d)) if plan.is_some_and(|p| named(p, d)) => {}
            _ => out.extend_from_slice(whole),
        }
    }
    for m in plan.map_or(&[][..], |p| &p.members) {
        out.extend_from_slice(m.record);
    }
    out
}

fn rewrite_enum(bytes: &[u8], full: &str, plans: &HashMap<String, Plan<'_>>) -> Vec<u8> {
    let Some(plan) = plans.get(full) else { return bytes.to_vec() };
    let mut out = Vec::with_capacity(bytes.len() + 64);
    for r in records(bytes) {
        let whole = &bytes[r.offset..r.end];
        match (r.number, len_of(&r)) {
            (ENUM_RESERVED_RANGE, Some(d)) => {
                let (Some(a), Some(b)) = (varint_of(d, RANGE_START), varint_of(d, RANGE_END))
                else {
                    out.extend_from_slice(whole);
                    continue;
                };
                put_ranges(&mut out, ENUM_RESERVED_RANGE, (a, b), Some(plan), 0);
            }
            (ENUM_RESERVED_NAME, Some(d)) if named(plan, d) => {}
            _ => out.extend_from_slice(whole),
        }
    }
    for m in &plan.members {
        out.extend_from_slice(m.record);
    }
    out
}

/// True when a reserved name record is the name of a member put back.
fn named(plan: &Plan<'_>, name: &[u8]) -> bool {
    plan.members.iter().any(|m| m.name.as_bytes() == name)
}

/// Writes the inclusive range `(a, b)` less the numbers put back, as records of `number` whose
/// end is written `end_past` beyond the last number (1 for a message's, 0 for an enum's).
fn put_ranges(
    out: &mut Vec<u8>,
    number: u32,
    (a, b): Range,
    plan: Option<&Plan<'_>>,
    end_past: i64,
) {
    let mut holes: Vec<i64> = plan
        .map(|p| p.members.iter().map(|m| m.number).filter(|n| (a..=b).contains(n)).collect())
        .unwrap_or_default();
    holes.sort_unstable();
    let mut start = a;
    for hole in holes.into_iter().chain(std::iter::once(b + 1)) {
        if start < hole {
            let mut range = Vec::new();
            wire::put_tag(&mut range, RANGE_START, wire::WireType::Varint);
            wire::put_varint(&mut range, start as u64);
            wire::put_tag(&mut range, RANGE_END, wire::WireType::Varint);
            wire::put_varint(&mut range, (hole - 1 + end_past) as u64);
            wire::put_len(out, number, &range);
        }
        start = hole + 1;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    fn compile(name: &str, text: &str) -> Vec<u8> {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(name), text).expect("write");
        let files = protox::compile([name], [dir.path()]).expect("compiles");
        prost::Message::encode_to_vec(&files)
    }

    const OLD: &str = r#"syntax = "proto3";
package p;
message Status { string id = 1; Condition condition = 2; message Inner { int32 gone = 3; } }
message Condition { bool abnormal = 1; Detail detail = 2; }
message Detail { string text = 1; }
message Choice { oneof pick { string a = 1; string b = 2; } }
enum Kind { KIND_UNKNOWN = 0; OLD_KIND = 4; KEPT = 5; }
"#;

    const NEW: &str = r#"syntax = "proto3";
package p;
message Status { reserved 2, 7 to 9; string id = 1; message Inner { reserved 3; } }
message Choice { reserved 2; oneof pick { string a = 1; } }
enum Kind { reserved 4; KIND_UNKNOWN = 0; KEPT = 5; NEW_KIND = 6; }
"#;

    #[test]
    fn reserved_members_come_back_under_their_old_names_with_their_types() {
        let old = compile("old.proto", OLD);
        let new = compile("new.proto", NEW);
        let (set, restored) =
            restore(&new, "v2", &[Older { release: "v1", set: &old, facts: None }])
                .expect("something restored");
        let pool = DescriptorPool::decode(set.as_slice()).expect("the restored set decodes");
        let status = pool.get_message_by_name("p.Status").unwrap();
        let field = status.get_field(2).expect("field 2 back");
        assert_eq!(field.name(), "condition");
        assert_eq!(field.kind().as_message().unwrap().full_name(), "p.Condition");
        // The rest of the range stays reserved.
        let ranges: Vec<_> = status.reserved_ranges().collect();
        assert_eq!((ranges.len(), ranges.first()), (1, Some(&(7..10))));
        let inner = pool.get_message_by_name("p.Status.Inner").unwrap();
        assert_eq!(inner.get_field(3).unwrap().name(), "gone");
        assert!(pool.get_message_by_name("p.Detail").is_some(), "what Condition needs is copied");
        let kind = pool.get_enum_by_name("p.Kind").unwrap();
        assert_eq!(kind.get_value(4).unwrap().name(), "OLD_KIND");
        assert_eq!(kind.reserved_ranges().count(), 0);
        // A oneof member is not put back.
        assert!(pool.get_message_by_name("p.Choice").unwrap().get_field(2).is_none());
        let former = Former { release: "v1".into(), reserved_in: "v2".into() };
        assert_eq!(restored.field("p.Status", 2), Some(&former));
        assert_eq!(restored.field("p.Status.Inner", 3), Some(&former));
        assert_eq!(restored.value("p.Kind", 4), Some(&former));
        assert_eq!(restored.field("p.Status", 7), None);
        assert_eq!(
            restored.types.keys().map(String::as_str).collect::<HashSet<_>>(),
            HashSet::from(["p.Condition", "p.Detail"])
        );
        assert_eq!(former.to_string(), "named as in v1, reserved in v2");
    }

    #[test]
    fn nothing_reserved_or_nothing_named_is_left_alone() {
        let old = compile("old2.proto", OLD);
        assert!(restore(&old, "v1", &[Older { release: "v0", set: &old, facts: None }]).is_none());
        let new = compile("new2.proto", NEW);
        assert!(restore(&new, "v2", &[]).is_none());
    }

    #[test]
    fn csikit_v1_13_gets_v1_12_names_for_what_it_reserved() {
        let (set, restored) =
            restore(csikit::v1::FILE_DESCRIPTOR_SET, csikit::SPEC_RELEASE, &builtin_older())
                .expect("v1.13.0 reserved what v1.12.0 named");
        let pool = DescriptorPool::decode(set.as_slice()).expect("decodes");
        for m in [
            "csi.v1.ListVolumesResponse.VolumeStatus",
            "csi.v1.ControllerGetVolumeResponse.VolumeStatus",
            "csi.v1.NodeGetVolumeStatsResponse",
        ] {
            let f = pool.get_message_by_name(m).and_then(|m| m.get_field(2)).expect(m);
            assert_eq!(f.name(), "volume_condition", "{m}");
            assert_eq!(restored.field(m, 2).map(|f| &*f.release), Some("v1.12.0"), "{m}");
        }
        for (e, n) in [
            ("csi.v1.ControllerServiceCapability.RPC.Type", 11),
            ("csi.v1.NodeServiceCapability.RPC.Type", 4),
        ] {
            let v = pool.get_enum_by_name(e).and_then(|e| e.get_value(n)).expect(e);
            assert_eq!(v.name(), "VOLUME_CONDITION");
        }
        assert_eq!(restored.types.keys().collect::<Vec<_>>(), ["csi.v1.VolumeCondition"]);
        let fields: usize = restored.fields.values().map(HashMap::len).sum();
        let values: usize = restored.values.values().map(HashMap::len).sum();
        assert_eq!((fields, values), (3, 2));
        // Custom options are untouched: the secret fields are still marked.
        let secrets = pool
            .get_message_by_name("csi.v1.CreateVolumeRequest")
            .and_then(|m| m.get_field_by_name("secrets"))
            .unwrap();
        assert!(secrets.options().extensions().any(|(e, _)| e.name() == "csi_secret"));
    }
}
