"""Client side of tests/health.rs: the health RPCs of a running memdriver through grpcio stubs
built from the corpus's CSI v1.13.0 csi.proto, as the kubelet and the external health monitor
call them (KEP-1432).

usage: health.py STUBS_DIR SOCKET SCRATCH_DIR

memdriver runs with MEMDRIVER_STORAGE_HEALTH=STORAGE_UNREACHABLE:FabricDown. Prints one summary
line; exits non-zero (with the failed expectation) on the first failure.
"""

import os
import sys

STUBS, SOCKET, SCRATCH = sys.argv[1:4]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
import csi_pb2 as csi  # noqa: E402
import csi_pb2_grpc as rpc  # noqa: E402

HEALTH = "memdriver.csikit.dev/health"
REASON = "memdriver.csikit.dev/health-reason"
OK = grpc.StatusCode.OK

channel = grpc.insecure_channel("unix://" + SOCKET)
grpc.channel_ready_future(channel).result(timeout=10)
controller = rpc.ControllerStub(channel)
node = rpc.NodeStub(channel)
calls = 0


class Failed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failed(what)


def call(method, request, code=OK):
    """The answer, or the error when `code` is expected."""
    global calls
    calls += 1
    try:
        answer = method(request, timeout=10)
    except grpc.RpcError as e:
        expect(e.code() == code, f"{request.DESCRIPTOR.name}: {e.code()} {e.details()}, expected {code}")
        return e
    expect(code == OK, f"{request.DESCRIPTOR.name}: OK, expected {code}")
    return answer


def capability():
    return csi.VolumeCapability(
        mount=csi.VolumeCapability.MountVolume(),
        access_mode=csi.VolumeCapability.AccessMode(mode=csi.VolumeCapability.AccessMode.SINGLE_NODE_WRITER),
    )


def create(name, parameters):
    r = call(controller.CreateVolume, csi.CreateVolumeRequest(
        name=name, volume_capabilities=[capability()], parameters=parameters))
    return r.volume.volume_id


def entries(health):
    return [(csi.VolumeHealthErrorType.Name(e.status), e.reason) for e in health.health_statuses]


# Capabilities: the four health RPCs are served, so advertised.
ctl = {c.rpc.type for c in call(controller.ControllerGetCapabilities, csi.ControllerGetCapabilitiesRequest()).capabilities}
Ctl = csi.ControllerServiceCapability.RPC
expect({Ctl.GET_VOLUME_HEALTH, Ctl.LIST_VOLUME_HEALTH} <= ctl, f"controller capabilities {ctl}")
nd = {c.rpc.type for c in call(node.NodeGetCapabilities, csi.NodeGetCapabilitiesRequest()).capabilities}
Nd = csi.NodeServiceCapability.RPC
expect({Nd.GET_VOLUME_HEALTH, Nd.GET_STORAGE_HEALTH} <= nd, f"node capabilities {nd}")

# Bad health parameters: INVALID_ARGUMENT naming the parameter and what it allows.
for parameters, words in [
    ({HEALTH: "SICK"}, [HEALTH, "DEGRADED, INACCESSIBLE, DATA_LOSS"]),
    ({HEALTH: "DEGRADED", REASON: "path down"}, [REASON, "CamelCase"]),
    ({REASON: "PathDown"}, [REASON, HEALTH]),
]:
    e = call(controller.CreateVolume, csi.CreateVolumeRequest(
        name="bad", volume_capabilities=[capability()], parameters=parameters), grpc.StatusCode.INVALID_ARGUMENT)
    expect(all(w in e.details() for w in words), f"{parameters}: '{e.details()}' does not name {words}")

healthy = create("healthy", {})
degraded = create("degraded", {HEALTH: "DEGRADED", REASON: "PathDown"})
lost = create("lost", {HEALTH: "DATA_LOSS"})
also_healthy = create("also-healthy", {})

# The health monitor with LIST_VOLUME_HEALTH: pages of one, following next_token to its end.
listed, token, pages = {}, "", 0
while True:
    r = call(controller.ControllerListVolumeHealth,
             csi.ControllerListVolumeHealthRequest(max_entries=1, starting_token=token))
    pages += 1
    expect(len(r.entries) <= 1, f"page {pages}: {len(r.entries)} entries for max_entries 1")
    for h in r.entries:
        expect(h.volume_id not in listed, f"{h.volume_id} listed twice")
        listed[h.volume_id] = entries(h)
    if not r.next_token:
        break
    expect(pages < 10, "the listing does not end")
    token = r.next_token
expect(listed == {degraded: [("DEGRADED", "PathDown")], lost: [("DATA_LOSS", "DataLoss")]},
       f"listed {listed}: only the adverse volumes, each with its condition")
everything = call(controller.ControllerListVolumeHealth, csi.ControllerListVolumeHealthRequest())
expect(len(everything.entries) == 2 and not everything.next_token, "one page without max_entries")
call(controller.ControllerListVolumeHealth,
     csi.ControllerListVolumeHealthRequest(starting_token="not-a-token"), grpc.StatusCode.ABORTED)

# The health monitor without LIST: ControllerGetVolumeHealth of each volume.
for volume, expected in [(healthy, []), (degraded, [("DEGRADED", "PathDown")]), (lost, [("DATA_LOSS", "DataLoss")])]:
    r = call(controller.ControllerGetVolumeHealth, csi.ControllerGetVolumeHealthRequest(volume_id=volume))
    expect(r.HasField("volume_health"), f"{volume}: no volume_health")
    expect(r.volume_health.volume_id == volume, f"{volume}: health of {r.volume_health.volume_id}")
    expect(entries(r.volume_health) == expected, f"{volume}: {entries(r.volume_health)}, expected {expected}")
call(controller.ControllerGetVolumeHealth, csi.ControllerGetVolumeHealthRequest(volume_id="vol-none"),
     grpc.StatusCode.NOT_FOUND)

# The kubelet: the volume staged and published for a pod, then NodeGetVolumeHealth with the
# volume id and its publish path.
info = call(node.NodeGetInfo, csi.NodeGetInfoRequest())
published = []
for volume in [degraded, healthy]:
    staging = os.path.join(SCRATCH, volume, "staging")
    target = os.path.join(SCRATCH, volume, "pod", "mount")
    os.makedirs(staging)
    os.makedirs(os.path.dirname(target))
    pc = call(controller.ControllerPublishVolume, csi.ControllerPublishVolumeRequest(
        volume_id=volume, node_id=info.node_id, volume_capability=capability())).publish_context
    call(node.NodeStageVolume, csi.NodeStageVolumeRequest(
        volume_id=volume, staging_target_path=staging, volume_capability=capability(), publish_context=pc))
    call(node.NodePublishVolume, csi.NodePublishVolumeRequest(
        volume_id=volume, staging_target_path=staging, target_path=target,
        volume_capability=capability(), publish_context=pc))
    published.append((volume, staging, target))
for (volume, staging, target), expected in zip(published, [[("DEGRADED", "PathDown")], []]):
    r = call(node.NodeGetVolumeHealth, csi.NodeGetVolumeHealthRequest(volume_id=volume, volume_publish_path=target))
    expect(r.HasField("volume_health") and r.volume_health.volume_id == volume, f"{volume}: {r}")
    expect(entries(r.volume_health) == expected, f"{volume}: {entries(r.volume_health)}, expected {expected}")
    r = call(node.NodeGetVolumeHealth, csi.NodeGetVolumeHealthRequest(
        volume_id=volume, volume_publish_path=target, staging_target_path=staging))
    expect(entries(r.volume_health) == expected, f"{volume} with its staging path: {entries(r.volume_health)}")
call(node.NodeGetVolumeHealth, csi.NodeGetVolumeHealthRequest(
    volume_id=degraded, volume_publish_path=os.path.join(SCRATCH, "elsewhere")), grpc.StatusCode.NOT_FOUND)

# The node's storage, from MEMDRIVER_STORAGE_HEALTH.
storage = call(node.NodeGetStorageHealth, csi.NodeGetStorageHealthRequest()).backend_health
got = [(csi.StorageHealthErrorType.Name(b.status), b.reason) for b in storage]
expect(got == [("STORAGE_UNREACHABLE", "FabricDown")], f"storage health {got}")

# Clean up, as a CO would.
for volume, staging, target in published:
    call(node.NodeUnpublishVolume, csi.NodeUnpublishVolumeRequest(volume_id=volume, target_path=target))
    call(node.NodeUnstageVolume, csi.NodeUnstageVolumeRequest(volume_id=volume, staging_target_path=staging))
    call(controller.ControllerUnpublishVolume, csi.ControllerUnpublishVolumeRequest(volume_id=volume, node_id=info.node_id))
for volume in [healthy, degraded, lost, also_healthy]:
    call(controller.DeleteVolume, csi.DeleteVolumeRequest(volume_id=volume))
after = call(controller.ControllerListVolumeHealth, csi.ControllerListVolumeHealthRequest())
expect(not after.entries, "deleted volumes are still listed")

print(f"health: {calls} calls; listed {len(listed)} adverse volumes in {pages} pages; kubelet, monitor and storage answers as asked")
