//! Validating a valid message makes no heap allocation: field paths stay on the stack and
//! become text only when a violation is recorded. Counted per thread, so the test harness's
//! other threads do not disturb the count.

#![allow(
    unsafe_code,
    reason = "counting allocations needs a GlobalAlloc impl, which is unsafe to write"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;

use csikit::Validate;
use csikit::v1::{
    CreateVolumeRequest, NodePublishVolumeRequest, Topology, TopologyRequirement, VolumeCapability,
    volume_capability::{AccessMode, AccessType, MountVolume},
};

thread_local! {
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = COUNT.with(Cell::get);
    let out = f();
    (out, COUNT.with(Cell::get) - before)
}

fn capability() -> VolumeCapability {
    VolumeCapability {
        access_mode: Some(AccessMode { mode: 1 }),
        access_type: Some(AccessType::Mount(MountVolume {
            fs_type: "ext4".into(),
            ..Default::default()
        })),
    }
}

#[test]
fn valid_messages_validate_without_allocating() {
    let publish = NodePublishVolumeRequest {
        volume_id: "vol-1".into(),
        target_path: "/var/lib/kubelet/pods/uid/volumes/kubernetes.io~csi/pvc/mount".into(),
        volume_capability: Some(capability()),
        secrets: HashMap::from([("user".into(), "secret".into())]),
        ..Default::default()
    };
    let create = CreateVolumeRequest {
        name: "pvc-1".into(),
        volume_capabilities: vec![capability(), capability()],
        parameters: HashMap::from([("type".into(), "ssd".into())]),
        accessibility_requirements: Some(TopologyRequirement {
            requisite: (0..100)
                .map(|i| Topology { segments: HashMap::from([("zone".into(), format!("z{i}"))]) })
                .collect(),
            preferred: Vec::new(),
        }),
        ..Default::default()
    };
    let (ok, n) = allocations(|| publish.validate().is_ok());
    assert!(ok);
    assert_eq!(n, 0, "NodePublishVolumeRequest");
    let (ok, n) = allocations(|| create.validate().is_ok());
    assert!(ok);
    assert_eq!(n, 0, "CreateVolumeRequest");
    // The counter works: an invalid message allocates its report.
    let mut bad = create.clone();
    bad.name.clear();
    let (ok, n) = allocations(|| bad.validate().is_ok());
    assert!(!ok);
    assert!(n > 0);
}
