//! `validate()` beside prost decode of the same bytes, and beside a reflective validator over
//! prost-reflect `DynamicMessage` applying the same rules (the baseline, written here), on three
//! requests: a typical NodePublishVolumeRequest, a CreateVolumeRequest filled to the spec's
//! limits, and a 2.4 MB CreateVolumeRequest with 20 000 topologies. Also counts heap
//! allocations made while validating a valid message. Before timing anything, both validators
//! run on messages that break each rule and must report the same violations at the same paths.
//!
//! Run: `cargo bench -p csikit-codegen --bench validate`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]
#![allow(
    unsafe_code,
    reason = "counting allocations needs a GlobalAlloc impl, which is unsafe to write"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use csikit::Validate;
use csikit::v1::{
    CapacityRange, CreateVolumeRequest, NodePublishVolumeRequest, Topology, TopologyRequirement,
    VolumeCapability,
    volume_capability::{AccessMode, AccessType, MountVolume, access_mode::Mode},
};
use csikit_spec::{FieldType, Label, LoadOptions, Model, Presence, SizeLimit};
use prost::Message as _;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, ReflectMessage as _, Value};

/// Counts allocations so the bench can report that validating a valid message makes none.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn capability() -> VolumeCapability {
    VolumeCapability {
        access_mode: Some(AccessMode { mode: Mode::SingleNodeWriter as i32 }),
        access_type: Some(AccessType::Mount(MountVolume {
            fs_type: "ext4".into(),
            ..Default::default()
        })),
    }
}

fn node_publish() -> NodePublishVolumeRequest {
    NodePublishVolumeRequest {
        volume_id: "vol-0123456789abcdef0".into(),
        staging_target_path: "/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/0b2a6c4e/globalmount".into(),
        target_path: "/var/lib/kubelet/pods/0b2a6c4e-3d2f-4f0e-9a7b-1c2d3e4f5a6b/volumes/kubernetes.io~csi/pvc-8e1c2f3a/mount".into(),
        volume_capability: Some(capability()),
        publish_context: HashMap::from([("devicePath".into(), "/dev/xvdba".into())]),
        volume_context: HashMap::from([("csi.storage.k8s.io/pod.name".into(), "web-0".into())]),
        ..Default::default()
    }
}

fn map_of(total: usize, prefix: &str) -> HashMap<String, String> {
    // 16 entries whose keys and values add up to `total` bytes.
    let mut m = HashMap::new();
    let per = total / 16;
    for i in 0..16 {
        let key = format!("{prefix}{i:04}");
        let value = "v".repeat(per - key.len());
        m.insert(key, value);
    }
    m
}

fn create_at_limits() -> CreateVolumeRequest {
    CreateVolumeRequest {
        name: "n".repeat(128),
        capacity_range: Some(CapacityRange { required_bytes: 1 << 30, limit_bytes: 1 << 31 }),
        volume_capabilities: vec![capability(), capability()],
        parameters: map_of(4096, "param."),
        secrets: map_of(4096, "secret."),
        mutable_parameters: map_of(4096, "mutable."),
        accessibility_requirements: Some(TopologyRequirement {
            requisite: vec![Topology { segments: map_of(4096, "zone.") }],
            preferred: vec![],
        }),
        ..Default::default()
    }
}

fn create_with_topologies(n: usize) -> CreateVolumeRequest {
    let topology = |i: usize| Topology {
        segments: HashMap::from([
            ("topology.kubernetes.io/region".into(), format!("region-{:03}", i % 100)),
            ("topology.kubernetes.io/zone".into(), format!("zone-{i:06}-rack-{:04}", i % 997)),
        ]),
    };
    CreateVolumeRequest {
        name: "pvc-8e1c2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6".into(),
        volume_capabilities: vec![capability()],
        accessibility_requirements: Some(TopologyRequirement {
            requisite: (0..n).map(topology).collect(),
            preferred: (0..n / 10).map(topology).collect(),
        }),
        ..Default::default()
    }
}

/// The same rules, applied by walking a `DynamicMessage` with the Model's facts.
///
/// The rules are read from the Model once, as `codegen::validation` reads them for
/// `#[csi_validate]`, and resolved against the descriptors: each field keeps its descriptor,
/// its rules and the index of its message type's rules, so the walk neither looks types up by
/// name nor asks a descriptor for its kind. Paths are built lazily, as `validate()` builds
/// them, and the string checks are the runtime's own, so what differs is the walk itself.
struct Reflective {
    messages: Vec<MessageRules>,
    by_name: HashMap<String, usize>,
}

struct MessageRules {
    fields: Vec<FieldRules>,
    /// The fields of each oneof one of whose fields MUST be set.
    required_oneofs: Vec<(String, Vec<FieldDescriptor>)>,
}

struct FieldRules {
    desc: FieldDescriptor,
    name: String,
    required: bool,
    /// A singular message or proto3 `optional` field: its rules apply only when it is set.
    has_presence: bool,
    max_bytes: Option<usize>,
    max_total: Option<usize>,
    non_negative: bool,
    no_control_chars: bool,
    secret_keys: bool,
    /// The rules of the message type held (for maps, of the values), when it has any.
    nested: Option<usize>,
}

/// A field path kept on the stack, made text only for a violation.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
    Key(&'a Path<'a>, &'a prost_reflect::MapKey),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(parent, name) => {
                parent.fmt(f)?;
                if !matches!(parent, Path::Root) {
                    f.write_str(".")?;
                }
                f.write_str(name)
            }
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
            Path::Key(parent, k) => match k.as_str() {
                Some(k) => write!(f, "{parent}[{k:?}]"),
                None => write!(f, "{parent}[{k:?}]"),
            },
        }
    }
}

impl Reflective {
    fn new(model: &Model, pool: &prost_reflect::DescriptorPool) -> Self {
        let by_name: HashMap<String, usize> =
            model.messages.iter().enumerate().map(|(i, m)| (m.full_name.clone(), i)).collect();
        let messages = model
            .messages
            .iter()
            .map(|m| {
                let Some(desc) = pool.get_message_by_name(&m.full_name) else {
                    return MessageRules { fields: Vec::new(), required_oneofs: Vec::new() };
                };
                let fields = m
                    .fields
                    .iter()
                    .filter_map(|f| {
                        let fd = desc.get_field_by_name(&f.name)?;
                        let is_string = f.ty.is_scalar("string");
                        let is_message = matches!(f.ty, FieldType::Message(_));
                        let checkable = f.label != Label::Singular
                            || is_string
                            || f.ty.is_scalar("bytes")
                            || is_message
                            || matches!(f.ty, FieldType::Enum(_));
                        let (max_bytes, max_total) = match (f.size_limit, f.label) {
                            (
                                SizeLimit::General { bytes } | SizeLimit::Max { bytes },
                                Label::Map,
                            ) => (None, Some(bytes as usize)),
                            (SizeLimit::General { bytes } | SizeLimit::Max { bytes }, _)
                                if is_string =>
                            {
                                (Some(bytes as usize), None)
                            }
                            (SizeLimit::MaxTotal { bytes }, Label::Repeated | Label::Map) => {
                                (None, Some(bytes as usize))
                            }
                            _ => (None, None),
                        };
                        let held = match fd.kind() {
                            Kind::Message(held) if fd.is_map() => {
                                match held.map_entry_value_field().kind() {
                                    Kind::Message(value) => Some(value),
                                    _ => None,
                                }
                            }
                            Kind::Message(held) => Some(held),
                            _ => None,
                        };
                        Some(FieldRules {
                            name: f.name.clone(),
                            required: f.presence == Presence::Required
                                && f.oneof.is_none()
                                && checkable,
                            has_presence: (is_message && f.label == Label::Singular)
                                || f.proto3_optional,
                            max_bytes,
                            max_total,
                            non_negative: f.non_negative
                                && matches!(
                                    f.ty.value_name(),
                                    "int32"
                                        | "int64"
                                        | "sint32"
                                        | "sint64"
                                        | "sfixed32"
                                        | "sfixed64"
                                        | "double"
                                        | "float"
                                ),
                            no_control_chars: f.no_control_chars && is_string,
                            secret_keys: f.secret && f.label == Label::Map,
                            nested: held.and_then(|h| by_name.get(h.full_name()).copied()),
                            desc: fd,
                        })
                    })
                    .collect();
                let required_oneofs = m
                    .oneofs
                    .iter()
                    .filter(|o| o.required)
                    .filter_map(|o| {
                        let od = desc.oneofs().find(|d| d.name() == o.name)?;
                        Some((o.name.clone(), od.fields().collect()))
                    })
                    .collect();
                MessageRules { fields, required_oneofs }
            })
            .collect();
        Reflective { messages, by_name }
    }

    fn validate(&self, msg: &DynamicMessage, out: &mut Vec<String>) {
        if let Some(&i) = self.by_name.get(msg.descriptor().full_name()) {
            self.validate_at(i, msg, &Path::Root, out);
        }
    }

    fn validate_at(
        &self,
        rules: usize,
        msg: &DynamicMessage,
        path: &Path<'_>,
        out: &mut Vec<String>,
    ) {
        let rules = &self.messages[rules];
        for (name, fields) in &rules.required_oneofs {
            if !fields.iter().any(|f| msg.has_field(f)) {
                out.push(format!("{}: required", Path::Field(path, name)));
            }
        }
        for f in &rules.fields {
            let here = Path::Field(path, &f.name);
            if f.has_presence {
                if msg.has_field(&f.desc) {
                    self.check_value(f, &msg.get_field(&f.desc), &here, out);
                } else if f.required {
                    out.push(format!("{here}: required"));
                }
                continue;
            }
            let value = msg.get_field(&f.desc);
            if f.required {
                let missing = match &*value {
                    Value::String(s) => s.is_empty(),
                    Value::Bytes(b) => b.is_empty(),
                    Value::List(l) => l.is_empty(),
                    Value::Map(m) => m.is_empty(),
                    Value::EnumNumber(n) => *n == 0,
                    _ => false,
                };
                if missing {
                    out.push(format!("{here}: required"));
                }
            }
            match &*value {
                Value::List(items) => {
                    if let Some(max) = f.max_total {
                        let total: usize =
                            items.iter().map(|v| v.as_str().map_or(0, str::len)).sum();
                        if total > max {
                            out.push(format!("{here}: max_total_bytes"));
                        }
                    }
                    for (i, item) in items.iter().enumerate() {
                        self.check_value(f, item, &Path::Index(&here, i), out);
                    }
                }
                Value::Map(m) => {
                    let len = |k: &prost_reflect::MapKey, v: &Value| {
                        k.as_str().map_or(0, str::len) + v.as_str().map_or(0, str::len)
                    };
                    match (f.max_total, f.secret_keys) {
                        (Some(max), true) => {
                            // One pass, as `check::secret_map` does.
                            let mut total = 0;
                            let mut keys_ok = true;
                            for (k, v) in m {
                                total += len(k, v);
                                keys_ok &= k.as_str().is_some_and(csikit::check::is_secret_key);
                            }
                            if total > max {
                                out.push(format!("{here}: max_total_bytes"));
                            }
                            if !keys_ok {
                                self.secret_keys(m, &here, out);
                            }
                        }
                        (Some(max), false) => {
                            if m.iter().map(|(k, v)| len(k, v)).sum::<usize>() > max {
                                out.push(format!("{here}: max_total_bytes"));
                            }
                        }
                        (None, true) => self.secret_keys(m, &here, out),
                        (None, false) => {}
                    }
                    if let Some(nested) = f.nested {
                        for (k, v) in m {
                            if let Value::Message(inner) = v {
                                self.validate_at(nested, inner, &Path::Key(&here, k), out);
                            }
                        }
                    }
                }
                other => self.check_value(f, other, &here, out),
            }
        }
    }

    /// Reports each key of a secrets map outside the secret charset.
    fn secret_keys(
        &self,
        m: &HashMap<prost_reflect::MapKey, Value>,
        path: &Path<'_>,
        out: &mut Vec<String>,
    ) {
        for k in m.keys() {
            if !k.as_str().is_some_and(csikit::check::is_secret_key) {
                out.push(format!("{}: secret_keys", Path::Key(path, k)));
            }
        }
    }

    /// The rules that apply to each value: a singular field's, or each element of a list.
    fn check_value(&self, f: &FieldRules, value: &Value, path: &Path<'_>, out: &mut Vec<String>) {
        match value {
            Value::String(s) => {
                if f.max_bytes.is_some_and(|max| s.len() > max) {
                    out.push(format!("{path}: max_bytes"));
                }
                if f.no_control_chars && csikit::check::has_banned_control(s) {
                    out.push(format!("{path}: no_control_chars"));
                }
            }
            Value::I32(n) if f.non_negative && *n < 0 => out.push(format!("{path}: non_negative")),
            Value::I64(n) if f.non_negative && *n < 0 => out.push(format!("{path}: non_negative")),
            Value::F32(n) if f.non_negative && *n < 0.0 => {
                out.push(format!("{path}: non_negative"))
            }
            Value::F64(n) if f.non_negative && *n < 0.0 => {
                out.push(format!("{path}: non_negative"))
            }
            Value::Message(inner) => {
                if let Some(nested) = f.nested {
                    self.validate_at(nested, inner, path, out);
                }
            }
            _ => {}
        }
    }
}

/// Both validators find the same violations, path for path, on messages that break each rule:
/// the baseline is only a fair comparison if it does the same work.
fn check_same_rules(reflective: &Reflective, pool: &prost_reflect::DescriptorPool) {
    fn both<M: prost::Message + prost::Name + Validate>(
        reflective: &Reflective,
        pool: &prost_reflect::DescriptorPool,
        what: &str,
        msg: &M,
    ) {
        let mut typed: Vec<String> = match msg.validate() {
            Ok(()) => Vec::new(),
            Err(v) => v.into_iter().map(|v| format!("{}: {}", v.path, v.rule)).collect(),
        };
        let desc = pool.get_message_by_name(&M::full_name()).expect("descriptor");
        let dynamic =
            DynamicMessage::decode(desc, msg.encode_to_vec().as_slice()).expect("decode dynamic");
        let mut dynamic_out = Vec::new();
        reflective.validate(&dynamic, &mut dynamic_out);
        typed.sort();
        dynamic_out.sort();
        assert!(!typed.is_empty(), "{what}: breaks a rule");
        assert_eq!(typed, dynamic_out, "{what}: the reflective baseline applies the same rules");
    }
    let bad_capability = |f: &dyn Fn(&mut VolumeCapability)| {
        let mut c = capability();
        f(&mut c);
        c
    };
    type Change = Box<dyn Fn(&mut CreateVolumeRequest)>;
    let create_cases: Vec<(&str, Change)> = vec![
        ("empty name", Box::new(|r| r.name.clear())),
        ("long name", Box::new(|r| r.name.push('n'))),
        ("control character in name", Box::new(|r| r.name.replace_range(5..6, "\u{85}"))),
        ("no capabilities", Box::new(|r| r.volume_capabilities.clear())),
        (
            "negative capacity",
            Box::new(|r| {
                r.capacity_range = Some(CapacityRange { required_bytes: -1, limit_bytes: -2 })
            }),
        ),
        (
            "parameters too big",
            Box::new(|r| {
                r.parameters.insert("x".into(), "y".into());
            }),
        ),
        (
            "secrets too big, bad keys",
            Box::new(|r| {
                r.secrets.insert("a b".into(), "y".into());
                r.secrets.insert(String::new(), "z".into());
            }),
        ),
        (
            "segment too big",
            Box::new(|r| {
                if let Some(t) = r.accessibility_requirements.as_mut() {
                    t.preferred.push(Topology { segments: map_of(4096, "zone.") });
                    t.preferred[0].segments.insert("x".into(), "y".into());
                }
            }),
        ),
        (
            "bad capabilities",
            Box::new(move |r| {
                r.volume_capabilities = vec![
                    bad_capability(&|c| c.access_mode = None),
                    bad_capability(&|c| c.access_type = None),
                    bad_capability(&|c| c.access_mode = Some(AccessMode { mode: 0 })),
                    bad_capability(&|c| {
                        c.access_type = Some(AccessType::Mount(MountVolume {
                            fs_type: "f".repeat(129),
                            mount_flags: vec!["o".repeat(4000), "p".repeat(97)],
                            volume_mount_group: "g".repeat(129),
                        }))
                    }),
                ];
            }),
        ),
    ];
    for (what, change) in &create_cases {
        let mut r = create_at_limits();
        change(&mut r);
        both(reflective, pool, what, &r);
    }
    let mut r = node_publish();
    r.volume_id.clear();
    r.target_path.clear();
    r.volume_capability = None;
    r.secrets.insert("bad key".into(), "v".into());
    both(reflective, pool, "node publish", &r);
}

fn bench(c: &mut Criterion) {
    let dir = csikit_spec::corpus_dir().join("csi-spec/v1.12.0");
    let Some(model) = csikit_spec::load_dir(&dir, &LoadOptions::default()).model else {
        eprintln!("SKIPPED: no corpus at '{}'", dir.display());
        return;
    };
    let pool = csikit::v1::descriptor_pool();
    let reflective = Reflective::new(&model, pool);
    check_same_rules(&reflective, pool);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "NodePublishVolumeRequest typical",
            node_publish().encode_to_vec(),
            "csi.v1.NodePublishVolumeRequest",
        ),
        (
            "CreateVolumeRequest at limits",
            create_at_limits().encode_to_vec(),
            "csi.v1.CreateVolumeRequest",
        ),
        (
            "CreateVolumeRequest 20000 topologies",
            create_with_topologies(20_000).encode_to_vec(),
            "csi.v1.CreateVolumeRequest",
        ),
    ];
    for (name, bytes, full) in &cases {
        let desc = pool.get_message_by_name(full).expect("descriptor");
        let dynamic = DynamicMessage::decode(desc, bytes.as_slice()).expect("decode dynamic");
        let mut group = c.benchmark_group(format!("{name} ({} bytes)", bytes.len()));
        if full.ends_with("NodePublishVolumeRequest") {
            typed::<NodePublishVolumeRequest>(&mut group, name, bytes);
        } else {
            typed::<CreateVolumeRequest>(&mut group, name, bytes);
        }
        group.bench_function(BenchmarkId::new("validate", "reflective baseline"), |b| {
            b.iter(|| {
                let mut out = Vec::new();
                reflective.validate(black_box(&dynamic), &mut out);
                assert!(out.is_empty(), "{out:?}");
                out
            })
        });
        group.finish();
    }
}

/// Benches typed validation and prost decode, and reports allocations made by one validation.
fn typed<M: prost::Message + Default + Validate>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    bytes: &[u8],
) {
    let msg = M::decode(bytes).expect("decode");
    let start = ALLOCATIONS.load(Ordering::Relaxed);
    let ok = msg.validate().is_ok();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - start;
    eprintln!("{name}: valid = {ok}, {allocations} heap allocations while validating");
    assert!(ok, "{name} is valid");
    group.bench_function(BenchmarkId::new("validate", "csikit"), |b| {
        b.iter(|| black_box(&msg).validate())
    });
    group.bench_function(BenchmarkId::new("decode", "prost"), |b| {
        b.iter(|| M::decode(black_box(bytes)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
