//! `validate()` beside prost decode of the same bytes, and beside a reflective validator over
//! prost-reflect `DynamicMessage` applying the same rules (the baseline, written here), on three
//! requests: a typical NodePublishVolumeRequest, a CreateVolumeRequest filled to the spec's
//! limits, and a 2.4 MB CreateVolumeRequest with 20 000 topologies. Also counts heap
//! allocations made while validating a valid message.
//!
//! Run: `cargo bench -p csikit-codegen --bench validate`.

#![allow(missing_docs, reason = "criterion's macros generate undocumented items")]
#![allow(unsafe_code, reason = "counting allocations needs a GlobalAlloc impl, which is unsafe to write")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use csikit::Validate;
use csikit::v1::{
    CapacityRange, CreateVolumeRequest, NodePublishVolumeRequest, Topology, TopologyRequirement, VolumeCapability,
    volume_capability::{AccessMode, AccessType, MountVolume, access_mode::Mode},
};
use csikit_spec::{Label, LoadOptions, Model, Presence, SizeLimit};
use prost::Message as _;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage as _, Value};

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
        access_type: Some(AccessType::Mount(MountVolume { fs_type: "ext4".into(), ..Default::default() })),
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
struct Reflective {
    rules: HashMap<String, Vec<(FieldDescriptor, csikit_spec::Field)>>,
}

impl Reflective {
    fn new(model: &Model, pool: &prost_reflect::DescriptorPool) -> Self {
        let mut rules = HashMap::new();
        for m in &model.messages {
            let Some(desc) = pool.get_message_by_name(&m.full_name) else { continue };
            let fields = m
                .fields
                .iter()
                .filter_map(|f| desc.get_field_by_name(&f.name).map(|d| (d, f.clone())))
                .collect();
            rules.insert(m.full_name.clone(), fields);
        }
        Reflective { rules }
    }

    fn validate(&self, msg: &DynamicMessage, path: &str, out: &mut Vec<String>) {
        let desc: MessageDescriptor = msg.descriptor();
        let Some(fields) = self.rules.get(desc.full_name()) else { return };
        for (fd, facts) in fields {
            let present = msg.has_field(fd);
            let value = msg.get_field(fd);
            let here = || format!("{path}.{}", facts.name);
            if facts.presence == Presence::Required && facts.oneof.is_none() {
                let missing = match &*value {
                    Value::String(s) => s.is_empty(),
                    Value::List(l) => l.is_empty(),
                    Value::Map(m) => m.is_empty(),
                    Value::Message(_) => !present,
                    Value::EnumNumber(n) => *n == 0,
                    _ => false,
                };
                if missing {
                    out.push(format!("{}: required", here()));
                }
            }
            match (&*value, facts.size_limit) {
                (Value::String(s), SizeLimit::General { bytes } | SizeLimit::Max { bytes }) if s.len() > bytes as usize => {
                    out.push(format!("{}: max_bytes", here()));
                }
                (Value::Map(m), SizeLimit::General { bytes } | SizeLimit::Max { bytes }) => {
                    let total: usize = m
                        .iter()
                        .map(|(k, v)| k.as_str().map_or(0, str::len) + v.as_str().map_or(0, str::len))
                        .sum();
                    if total > bytes as usize {
                        out.push(format!("{}: max_total_bytes", here()));
                    }
                    if facts.secret && m.keys().any(|k| !k.as_str().is_some_and(csikit::check::is_secret_key)) {
                        out.push(format!("{}: secret_keys", here()));
                    }
                }
                _ => {}
            }
            if facts.non_negative && matches!(&*value, Value::I64(n) if *n < 0) {
                out.push(format!("{}: non_negative", here()));
            }
            if facts.no_control_chars && matches!(&*value, Value::String(s) if s.chars().any(csikit::check::is_banned_control)) {
                out.push(format!("{}: no_control_chars", here()));
            }
            if matches!(fd.kind(), Kind::Message(_)) {
                match &*value {
                    Value::Message(inner) if present => self.validate(inner, &here(), out),
                    Value::List(items) if facts.label == Label::Repeated => {
                        for (i, item) in items.iter().enumerate() {
                            if let Value::Message(inner) = item {
                                self.validate(inner, &format!("{}[{i}]", here()), out);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = csikit_spec::corpus_dir().join("csi-spec/v1.12.0");
    let Some(model) = csikit_spec::load_dir(&dir, &LoadOptions::default()).model else {
        eprintln!("SKIPPED: no corpus at '{}'", dir.display());
        return;
    };
    let pool = csikit::v1::descriptor_pool();
    let reflective = Reflective::new(&model, &pool);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("NodePublishVolumeRequest typical", node_publish().encode_to_vec(), "csi.v1.NodePublishVolumeRequest"),
        ("CreateVolumeRequest at limits", create_at_limits().encode_to_vec(), "csi.v1.CreateVolumeRequest"),
        ("CreateVolumeRequest 20000 topologies", create_with_topologies(20_000).encode_to_vec(), "csi.v1.CreateVolumeRequest"),
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
                reflective.validate(black_box(&dynamic), "", &mut out);
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
    group.bench_function(BenchmarkId::new("validate", "csikit"), |b| b.iter(|| black_box(&msg).validate()));
    group.bench_function(BenchmarkId::new("decode", "prost"), |b| b.iter(|| M::decode(black_box(bytes))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
