"""Client side of tests/interop.rs: drives a running memdriver through grpcio stubs built from the
corpus csi.proto, as an independent CO would.

usage: interop.py STUBS_DIR SOCKET REQUIRED_JSON NODE_ID

Environment: MEMDRIVER_TEST_SECRET_KEY / MEMDRIVER_TEST_SECRET_VALUE (the secret the plugin
requires) and MEMDRIVER_TEST_EXTRA_SECRET (another secret value sent alongside). Secret values are
never printed.

REQUIRED_JSON maps each message's full name to its REQUIRED fields and required oneofs, read from
csikit's spec-facts table; every request sent successfully is replayed once per REQUIRED field it
sets, with that field cleared, and must come back INVALID_ARGUMENT naming the field.

Prints one summary line; exits non-zero (with the failed expectation) on the first failure.
"""

import base64
import json
import os
import sys
import threading
import time

STUBS, SOCKET, REQUIRED_JSON, NODE_ID = sys.argv[1:5]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
import csi_pb2 as csi  # noqa: E402
import csi_pb2_grpc as rpc  # noqa: E402

with open(REQUIRED_JSON) as f:
    REQUIRED = json.load(f)

SECRET_KEY = os.environ["MEMDRIVER_TEST_SECRET_KEY"]
SECRETS = {
    SECRET_KEY: os.environ["MEMDRIVER_TEST_SECRET_VALUE"],
    "memdriver-extra": os.environ["MEMDRIVER_TEST_EXTRA_SECRET"],
}
GIB = 1 << 30
DELAY_KEY = "memdriver.csikit.dev/delay-ms"
OK = grpc.StatusCode.OK

# A channel with grpcio's defaults, as a user's client makes it: grpcio >= 1.57 sends the
# %-encoded socket path as :authority, which the skeleton accepts (h2 alone would not).
channel = grpc.insecure_channel("unix://" + SOCKET)
grpc.channel_ready_future(channel).result(timeout=10)
identity = rpc.IdentityStub(channel)
controller = rpc.ControllerStub(channel)
node = rpc.NodeStub(channel)
group = rpc.GroupControllerStub(channel)

# Every (stub method, request) that succeeded, for the missing-field replay.
sent = {}
counts = {"calls": 0, "idempotent": 0, "missing_field": 0, "errors": 0}


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


# With INTEROP_RECORD set, every call() is remembered (method, request and response bytes as
# grpcio serialised and parsed them, status code) and written there as JSON at the end: the
# proxy test compares them with what csi-view proxy recorded in between.
RECORD = os.environ.get("INTEROP_RECORD")
records = []


def remember(method, request, response, code):
    if RECORD:
        records.append({
            "method": method._method.decode(),
            "request": base64.b64encode(request.SerializeToString()).decode(),
            "response": None if response is None else base64.b64encode(response.SerializeToString()).decode(),
            "code": code.value[0],
        })


def call(method, request, expect=OK, name=None):
    """One unary call; returns the response, or the RpcError when a failure is expected."""
    name = name or method._method.decode()
    counts["calls"] += 1
    try:
        response = method(request, timeout=10)
    except grpc.RpcError as e:
        remember(method, request, None, e.code())
        check(e.code() == expect, f"{name}: expected {expect.name}, got {e.code().name}: {e.details()}")
        counts["errors"] += 1
        return e
    remember(method, request, response, OK)
    check(expect == OK, f"{name}: expected {expect.name}, got OK")
    sent.setdefault(name, (method, request))
    return response


def twice(method, request):
    """A call and its retry: both OK with the same response (idempotency)."""
    first = call(method, request)
    second = call(method, request)
    check(first == second, f"{method._method.decode()}: a retry answered differently:\n{first}\n{second}")
    counts["idempotent"] += 1
    return first


def mount_cap(mode=csi.VolumeCapability.AccessMode.SINGLE_NODE_WRITER, fs="ext4"):
    return csi.VolumeCapability(
        mount=csi.VolumeCapability.MountVolume(fs_type=fs, mount_flags=["noatime"]),
        access_mode=csi.VolumeCapability.AccessMode(mode=mode),
    )


def create_request(name, size=GIB, params=None, source=None, secrets=SECRETS):
    return csi.CreateVolumeRequest(
        name=name,
        capacity_range=csi.CapacityRange(required_bytes=size),
        volume_capabilities=[mount_cap()],
        parameters=params or {"tier": "gold"},
        secrets=secrets,
        volume_content_source=source,
    )


# ---- Identity and capabilities ----

info = twice(identity.GetPluginInfo, csi.GetPluginInfoRequest())
check(info.name == "memdriver.csikit.dev", f"plugin name {info.name!r}")
check(info.vendor_version != "", "vendor_version is empty")
caps = twice(identity.GetPluginCapabilities, csi.GetPluginCapabilitiesRequest())
services = {c.service.type for c in caps.capabilities if c.HasField("service")}
check(csi.PluginCapability.Service.CONTROLLER_SERVICE in services, f"no CONTROLLER_SERVICE in {caps}")
expansion = {c.volume_expansion.type for c in caps.capabilities if c.HasField("volume_expansion")}
check(csi.PluginCapability.VolumeExpansion.ONLINE in expansion, f"no ONLINE expansion in {caps}")
probe = twice(identity.Probe, csi.ProbeRequest())
check(not probe.HasField("ready") or probe.ready.value, f"probe not ready: {probe}")

C = csi.ControllerServiceCapability.RPC
ccaps = twice(controller.ControllerGetCapabilities, csi.ControllerGetCapabilitiesRequest())
have = {c.rpc.type for c in ccaps.capabilities}
for want in (C.CREATE_DELETE_VOLUME, C.PUBLISH_UNPUBLISH_VOLUME, C.LIST_VOLUMES, C.GET_CAPACITY,
             C.CREATE_DELETE_SNAPSHOT, C.LIST_SNAPSHOTS, C.CLONE_VOLUME, C.PUBLISH_READONLY,
             C.EXPAND_VOLUME, C.LIST_VOLUMES_PUBLISHED_NODES, C.GET_VOLUME):
    check(want in have, f"controller capability {C.Type.Name(want)} missing from {sorted(have)}")
N = csi.NodeServiceCapability.RPC
ncaps = twice(node.NodeGetCapabilities, csi.NodeGetCapabilitiesRequest())
have = {c.rpc.type for c in ncaps.capabilities}
for want in (N.STAGE_UNSTAGE_VOLUME, N.GET_VOLUME_STATS, N.EXPAND_VOLUME):
    check(want in have, f"node capability {N.Type.Name(want)} missing from {sorted(have)}")
ninfo = twice(node.NodeGetInfo, csi.NodeGetInfoRequest())
check(ninfo.node_id == NODE_ID, f"node_id {ninfo.node_id!r}, expected {NODE_ID!r}")

# An unregistered service is UNIMPLEMENTED, not a crash or a hang.
call(group.GroupControllerGetCapabilities, csi.GroupControllerGetCapabilitiesRequest(),
     expect=grpc.StatusCode.UNIMPLEMENTED)

# ---- Volume lifecycle ----

before = twice(controller.GetCapacity, csi.GetCapacityRequest(volume_capabilities=[mount_cap()]))
vol = twice(controller.CreateVolume, create_request("pvc-lifecycle", 2 * GIB)).volume
check(vol.capacity_bytes == 2 * GIB, f"capacity {vol.capacity_bytes}")
after = call(controller.GetCapacity, csi.GetCapacityRequest())
check(before.available_capacity - after.available_capacity == 2 * GIB, "GetCapacity did not account the volume")
call(controller.CreateVolume, create_request("pvc-lifecycle", 3 * GIB), expect=grpc.StatusCode.ALREADY_EXISTS)
call(controller.CreateVolume, create_request("pvc-lifecycle", 2 * GIB, params={"tier": "silver"}),
     expect=grpc.StatusCode.ALREADY_EXISTS)
call(controller.CreateVolume, create_request("pvc-huge", 1 << 50), expect=grpc.StatusCode.OUT_OF_RANGE)
call(controller.CreateVolume, create_request("pvc-no-secret", secrets={}), expect=grpc.StatusCode.UNAUTHENTICATED)
wrong = dict(SECRETS, **{SECRET_KEY: "not-the-secret"})
call(controller.CreateVolume, create_request("pvc-bad-secret", secrets=wrong), expect=grpc.StatusCode.UNAUTHENTICATED)

got = twice(controller.ControllerGetVolume, csi.ControllerGetVolumeRequest(volume_id=vol.volume_id))
check(got.volume == vol, f"ControllerGetVolume: {got.volume} != {vol}")

validated = twice(controller.ValidateVolumeCapabilities, csi.ValidateVolumeCapabilitiesRequest(
    volume_id=vol.volume_id, volume_capabilities=[mount_cap()], secrets=SECRETS))
check(validated.HasField("confirmed"), f"not confirmed: {validated.message}")
block = csi.VolumeCapability(block=csi.VolumeCapability.BlockVolume(),
                             access_mode=csi.VolumeCapability.AccessMode(mode=1))
refused = call(controller.ValidateVolumeCapabilities, csi.ValidateVolumeCapabilitiesRequest(
    volume_id=vol.volume_id, volume_capabilities=[block], secrets=SECRETS))
check(not refused.HasField("confirmed") and refused.message, "a block capability was confirmed on a mount volume")

publish = csi.ControllerPublishVolumeRequest(
    volume_id=vol.volume_id, node_id=NODE_ID, volume_capability=mount_cap(), secrets=SECRETS,
    volume_context=vol.volume_context)
published = twice(controller.ControllerPublishVolume, publish)
readonly = csi.ControllerPublishVolumeRequest()
readonly.CopyFrom(publish)
readonly.readonly = True
call(controller.ControllerPublishVolume, readonly, expect=grpc.StatusCode.ALREADY_EXISTS)
other_node = csi.ControllerPublishVolumeRequest()
other_node.CopyFrom(publish)
other_node.node_id = "no-such-node"
call(controller.ControllerPublishVolume, other_node, expect=grpc.StatusCode.NOT_FOUND)

listed = call(controller.ListVolumes, csi.ListVolumesRequest())
entry = [e for e in listed.entries if e.volume.volume_id == vol.volume_id]
check(entry and list(entry[0].status.published_node_ids) == [NODE_ID], f"ListVolumes status: {entry}")
call(controller.DeleteVolume, csi.DeleteVolumeRequest(volume_id=vol.volume_id, secrets=SECRETS),
     expect=grpc.StatusCode.FAILED_PRECONDITION)

# Paths as kubelet lays them out, under a temporary root: the CO creates the parents (and the
# staging directory), the plugin creates target_path itself and removes it on unpublish.
KUBELET = os.environ["MEMDRIVER_TEST_DIR"]
staging = KUBELET + "/plugins/memdriver/staging/pvc-lifecycle"
target = KUBELET + "/pods/p1/volumes/memdriver/pvc-lifecycle"
os.makedirs(os.path.dirname(target), exist_ok=True)
os.makedirs(staging, exist_ok=True)
publish_node = csi.NodePublishVolumeRequest(
    volume_id=vol.volume_id, publish_context=published.publish_context, staging_target_path=staging,
    target_path=target, volume_capability=mount_cap(), secrets=SECRETS, volume_context=vol.volume_context)
# Before staging: the plugin stages, so publishing is refused.
call(node.NodePublishVolume, publish_node, expect=grpc.StatusCode.FAILED_PRECONDITION)
twice(node.NodeStageVolume, csi.NodeStageVolumeRequest(
    volume_id=vol.volume_id, publish_context=published.publish_context, staging_target_path=staging,
    volume_capability=mount_cap(), secrets=SECRETS, volume_context=vol.volume_context))
call(node.NodeStageVolume, csi.NodeStageVolumeRequest(
    volume_id=vol.volume_id, staging_target_path=staging, volume_capability=mount_cap(fs="xfs",
    mode=csi.VolumeCapability.AccessMode.SINGLE_NODE_READER_ONLY), secrets=SECRETS),
    expect=grpc.StatusCode.FAILED_PRECONDITION)
twice(node.NodePublishVolume, publish_node)
check(os.path.isdir(target), f"NodePublishVolume created no directory at {target}")
changed = csi.NodePublishVolumeRequest()
changed.CopyFrom(publish_node)
changed.readonly = True
call(node.NodePublishVolume, changed, expect=grpc.StatusCode.ALREADY_EXISTS)
second_target = csi.NodePublishVolumeRequest()
second_target.CopyFrom(publish_node)
second_target.target_path = target + "-2"
call(node.NodePublishVolume, second_target, expect=grpc.StatusCode.FAILED_PRECONDITION)

stats = twice(node.NodeGetVolumeStats, csi.NodeGetVolumeStatsRequest(
    volume_id=vol.volume_id, volume_path=target, staging_target_path=staging))
units = {u.unit: u for u in stats.usage}
check(units[csi.VolumeUsage.BYTES].total == 2 * GIB, f"stats: {stats}")
call(node.NodeGetVolumeStats, csi.NodeGetVolumeStatsRequest(volume_id=vol.volume_id, volume_path="/not/here"),
     expect=grpc.StatusCode.NOT_FOUND)

# Online expansion: controller first, then the node's file system.
expanded = twice(controller.ControllerExpandVolume, csi.ControllerExpandVolumeRequest(
    volume_id=vol.volume_id, capacity_range=csi.CapacityRange(required_bytes=4 * GIB), secrets=SECRETS,
    volume_capability=mount_cap()))
check(expanded.capacity_bytes == 4 * GIB and expanded.node_expansion_required, f"expand: {expanded}")
node_expanded = twice(node.NodeExpandVolume, csi.NodeExpandVolumeRequest(
    volume_id=vol.volume_id, volume_path=target, capacity_range=csi.CapacityRange(required_bytes=4 * GIB),
    staging_target_path=staging, volume_capability=mount_cap(), secrets=SECRETS))
check(node_expanded.capacity_bytes == 4 * GIB, f"node expand: {node_expanded}")
call(controller.ControllerExpandVolume, csi.ControllerExpandVolumeRequest(
    volume_id=vol.volume_id, capacity_range=csi.CapacityRange(required_bytes=1 << 50), secrets=SECRETS),
    expect=grpc.StatusCode.OUT_OF_RANGE)

twice(node.NodeUnpublishVolume, csi.NodeUnpublishVolumeRequest(volume_id=vol.volume_id, target_path=target))
check(not os.path.exists(target), f"NodeUnpublishVolume left {target} behind")
twice(node.NodeUnstageVolume, csi.NodeUnstageVolumeRequest(volume_id=vol.volume_id, staging_target_path=staging))
twice(controller.ControllerUnpublishVolume, csi.ControllerUnpublishVolumeRequest(
    volume_id=vol.volume_id, node_id=NODE_ID, secrets=SECRETS))

# ---- Snapshots ----

snap = twice(controller.CreateSnapshot, csi.CreateSnapshotRequest(
    source_volume_id=vol.volume_id, name="snap-lifecycle", secrets=SECRETS)).snapshot
check(snap.ready_to_use and snap.size_bytes == 4 * GIB, f"snapshot: {snap}")
call(controller.CreateSnapshot, csi.CreateSnapshotRequest(source_volume_id="vol-unknown", name="snap-lifecycle",
     secrets=SECRETS), expect=grpc.StatusCode.ALREADY_EXISTS)
by_id = twice(controller.ListSnapshots, csi.ListSnapshotsRequest(snapshot_id=snap.snapshot_id, secrets=SECRETS))
check([e.snapshot for e in by_id.entries] == [snap], f"ListSnapshots by id: {by_id}")
by_source = call(controller.ListSnapshots, csi.ListSnapshotsRequest(source_volume_id=vol.volume_id, secrets=SECRETS))
check([e.snapshot for e in by_source.entries] == [snap], f"ListSnapshots by source: {by_source}")
got_snap = twice(controller.GetSnapshot, csi.GetSnapshotRequest(snapshot_id=snap.snapshot_id, secrets=SECRETS))
check(got_snap.snapshot == snap, "GetSnapshot differs from CreateSnapshot")

from_snap = csi.VolumeContentSource(snapshot=csi.VolumeContentSource.SnapshotSource(snapshot_id=snap.snapshot_id))
restored = twice(controller.CreateVolume, create_request("pvc-restored", GIB, source=from_snap)).volume
check(restored.capacity_bytes == 4 * GIB and restored.content_source == from_snap, f"restored: {restored}")
from_vol = csi.VolumeContentSource(volume=csi.VolumeContentSource.VolumeSource(volume_id=vol.volume_id))
clone = twice(controller.CreateVolume, create_request("pvc-clone", 5 * GIB, source=from_vol)).volume
check(clone.capacity_bytes == 5 * GIB and clone.content_source == from_vol, f"clone: {clone}")
# Snapshots and clones are independent of their source: it can go.
twice(controller.DeleteVolume, csi.DeleteVolumeRequest(volume_id=vol.volume_id, secrets=SECRETS))
call(controller.ControllerGetVolume, csi.ControllerGetVolumeRequest(volume_id=vol.volume_id),
     expect=grpc.StatusCode.NOT_FOUND)
small = csi.CreateVolumeRequest()
small.CopyFrom(create_request("pvc-too-small", GIB, source=from_snap))
small.capacity_range.limit_bytes = GIB
call(controller.CreateVolume, small, expect=grpc.StatusCode.OUT_OF_RANGE)
gone = csi.VolumeContentSource(snapshot=csi.VolumeContentSource.SnapshotSource(snapshot_id="snap-0000009999"))
call(controller.CreateVolume, create_request("pvc-from-nothing", source=gone), expect=grpc.StatusCode.NOT_FOUND)

twice(controller.DeleteSnapshot, csi.DeleteSnapshotRequest(snapshot_id=snap.snapshot_id, secrets=SECRETS))
after_delete = call(controller.ListSnapshots, csi.ListSnapshotsRequest(snapshot_id=snap.snapshot_id, secrets=SECRETS))
check(len(after_delete.entries) == 0, "a deleted snapshot is still listed")

# ---- Paging ----

for i in range(3):
    call(controller.CreateVolume, create_request(f"pvc-page-{i}"))
every = call(controller.ListVolumes, csi.ListVolumesRequest())
check(every.next_token == "", "an unlimited ListVolumes returned a next_token")
paged, token = [], ""
while True:
    page = call(controller.ListVolumes, csi.ListVolumesRequest(max_entries=2, starting_token=token))
    check(len(page.entries) <= 2, f"max_entries 2 returned {len(page.entries)}")
    paged += [e.volume.volume_id for e in page.entries]
    token = page.next_token
    if not token:
        break
check(paged == [e.volume.volume_id for e in every.entries], f"paging {paged} != {every}")
call(controller.ListVolumes, csi.ListVolumesRequest(starting_token="garbage"), expect=grpc.StatusCode.ABORTED)
call(controller.ListSnapshots, csi.ListSnapshotsRequest(starting_token="garbage", secrets=SECRETS), expect=grpc.StatusCode.ABORTED)

# ---- Unknown ids ----

NF = grpc.StatusCode.NOT_FOUND
U = "vol-0000009999"
call(controller.ControllerPublishVolume, csi.ControllerPublishVolumeRequest(
    volume_id=U, node_id=NODE_ID, volume_capability=mount_cap(), secrets=SECRETS), expect=NF)
call(controller.ValidateVolumeCapabilities, csi.ValidateVolumeCapabilitiesRequest(
    volume_id=U, volume_capabilities=[mount_cap()], secrets=SECRETS), expect=NF)
call(controller.ControllerGetVolume, csi.ControllerGetVolumeRequest(volume_id=U), expect=NF)
call(controller.ControllerExpandVolume, csi.ControllerExpandVolumeRequest(
    volume_id=U, capacity_range=csi.CapacityRange(required_bytes=GIB), secrets=SECRETS), expect=NF)
call(controller.GetSnapshot, csi.GetSnapshotRequest(snapshot_id="snap-0000009999", secrets=SECRETS), expect=NF)
call(node.NodeStageVolume, csi.NodeStageVolumeRequest(
    volume_id=U, staging_target_path=staging, volume_capability=mount_cap(), secrets=SECRETS), expect=NF)
call(node.NodePublishVolume, csi.NodePublishVolumeRequest(
    volume_id=U, staging_target_path=staging, target_path=target, volume_capability=mount_cap(),
    secrets=SECRETS), expect=NF)
call(node.NodeUnstageVolume, csi.NodeUnstageVolumeRequest(volume_id=U, staging_target_path=staging), expect=NF)
call(node.NodeUnpublishVolume, csi.NodeUnpublishVolumeRequest(volume_id=U, target_path=target), expect=NF)
call(node.NodeGetVolumeStats, csi.NodeGetVolumeStatsRequest(volume_id=U, volume_path=target), expect=NF)
call(node.NodeExpandVolume, csi.NodeExpandVolumeRequest(volume_id=U, volume_path=target, secrets=SECRETS), expect=NF)
# Nothing to undo is success.
twice(controller.DeleteVolume, csi.DeleteVolumeRequest(volume_id=U, secrets=SECRETS))
twice(controller.ControllerUnpublishVolume, csi.ControllerUnpublishVolumeRequest(volume_id=U, node_id=NODE_ID, secrets=SECRETS))
twice(controller.DeleteSnapshot, csi.DeleteSnapshotRequest(snapshot_id="snap-0000009999", secrets=SECRETS))

# ---- Overlapping calls on one volume: the second is ABORTED while the first is in flight ----


def overlapped(method, request, gap=0.3):
    """Sends request, then the same again `gap` seconds later; returns both outcomes' codes."""
    first = method.future(request, timeout=20)
    time.sleep(gap)
    try:
        method(request, timeout=20)
        second = OK
    except grpc.RpcError as e:
        second = e.code()
    try:
        first.result()
        first_code = OK
    except grpc.RpcError as e:
        first_code = e.code()
    counts["calls"] += 2
    return first_code, second


delayed = create_request("pvc-delayed", params={"tier": "gold", DELAY_KEY: "1500"})
codes = overlapped(controller.CreateVolume, delayed)
check(codes == (OK, grpc.StatusCode.ABORTED), f"overlapping CreateVolume answered {codes}")
slow = call(controller.CreateVolume, delayed).volume
check(slow.volume_context.get(DELAY_KEY) == "1500", f"delay key not in volume_context: {slow}")
slow_staging = staging + "-delayed"
twice(node.NodeStageVolume, csi.NodeStageVolumeRequest(
    volume_id=slow.volume_id, staging_target_path=slow_staging, volume_capability=mount_cap(),
    secrets=SECRETS, volume_context=slow.volume_context))
codes = overlapped(node.NodePublishVolume, csi.NodePublishVolumeRequest(
    volume_id=slow.volume_id, staging_target_path=slow_staging, target_path=target + "-delayed",
    volume_capability=mount_cap(), secrets=SECRETS, volume_context=slow.volume_context))
check(codes == (OK, grpc.StatusCode.ABORTED), f"overlapping NodePublishVolume answered {codes}")

# A cancelled call frees its volume at once: the next call on it is not ABORTED.
pending = node.NodePublishVolume.future(csi.NodePublishVolumeRequest(
    volume_id=slow.volume_id, staging_target_path=slow_staging, target_path=target + "-cancelled",
    volume_capability=mount_cap(), secrets=SECRETS, volume_context=slow.volume_context), timeout=20)
time.sleep(0.3)
check(pending.cancel(), "a delayed NodePublishVolume could not be cancelled")
time.sleep(0.2)
call(node.NodeUnpublishVolume, csi.NodeUnpublishVolumeRequest(volume_id=slow.volume_id, target_path=target + "-cancelled"))

# ---- Every REQUIRED field, missing ----


def required_paths(msg, prefix=""):
    """(path, clear) for every REQUIRED field or required oneof that msg sets, at any depth."""
    facts = REQUIRED.get(msg.DESCRIPTOR.full_name, {"fields": [], "oneofs": []})
    out = []
    for field in msg.DESCRIPTOR.fields:
        name = field.name
        path = f"{prefix}.{name}" if prefix else name
        is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
        repeated = is_map or (field.is_repeated if hasattr(field, "is_repeated") else field.label == 3)
        if repeated:
            present = len(getattr(msg, name)) > 0
        elif field.message_type is not None or field.containing_oneof is not None:
            present = msg.HasField(name)
        else:
            present = getattr(msg, name) != field.default_value
        if not present:
            continue
        if name in facts["fields"]:
            out.append((path, lambda m, n=name: m.ClearField(n)))
        # Recurse into set messages (the first element of a repeated one), never into maps.
        if field.message_type is not None and not is_map:
            child = getattr(msg, name)[0] if repeated else getattr(msg, name)
            child_prefix = f"{path}[0]" if repeated else path
            for sub_path, clear in required_paths(child, child_prefix):
                out.append((sub_path, lambda m, n=name, r=repeated, c=clear: c(getattr(m, n)[0] if r else getattr(m, n))))
    for oneof in msg.DESCRIPTOR.oneofs:
        if oneof.name in facts["oneofs"] and msg.WhichOneof(oneof.name) is not None:
            path = f"{prefix}.{oneof.name}" if prefix else oneof.name
            out.append((path, lambda m, n=oneof.name: m.ClearField(n)))
    return out


def last_name(path):
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


checked_methods = 0
for name, (method, request) in sorted(sent.items()):
    paths = required_paths(request)
    checked_methods += 1
    for path, clear in paths:
        broken = type(request)()
        broken.CopyFrom(request)
        clear(broken)
        counts["calls"] += 1
        try:
            method(broken, timeout=10)
            raise Failed(f"{name} without {path}: expected INVALID_ARGUMENT, got OK")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT,
                  f"{name} without {path}: expected INVALID_ARGUMENT, got {e.code().name}: {e.details()}")
            check(last_name(path) in e.details(), f"{name} without {path}: message does not name it: {e.details()}")
        counts["missing_field"] += 1

check(counts["missing_field"] >= 40, f"only {counts['missing_field']} missing-field cases: the replay is not reaching the requests")
print(f"interop ok: {counts['calls']} calls, {len(sent)} RPCs succeeded, {counts['idempotent']} idempotent pairs, "
      f"{counts['errors']} expected errors, {counts['missing_field']} missing REQUIRED fields over {checked_methods} RPCs")
if RECORD:
    with open(RECORD, "w") as f:
        json.dump(records, f)
