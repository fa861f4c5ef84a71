"""Client side of the authority test in tests/interop.rs: calls a running memdriver from grpcio
channels that each send one style of :authority over its unix socket.

usage: authority.py STUBS_DIR SOCKET

Styles: grpcio's default (the %-encoded socket path), the raw path, localhost, host:port, a path
with spaces, a path with non-ASCII bytes. Each channel makes several calls (so the authority is
sent literally, then from the HPACK dynamic table) and one call that fails (NOT_FOUND must come
back as NOT_FOUND, not as a transport error). Prints one line per style; exits non-zero on the
first failure.
"""

import sys

STUBS, SOCKET = sys.argv[1:3]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
import csi_pb2 as csi  # noqa: E402
import csi_pb2_grpc as rpc  # noqa: E402

STYLES = [
    ("grpcio default (%-encoded path)", None),
    ("raw path", SOCKET),
    ("localhost", "localhost"),
    ("host:port", "csi.example.com:10000"),
    ("path with spaces", "/var/lib/kubelet/plugins/my driver/csi.sock"),
    ("non-ASCII path", "/var/lib/kubelet/plugins/\u00fcn\u00efc\u00f6d\u00e9/csi.sock"),
]

for name, authority in STYLES:
    options = [] if authority is None else [("grpc.default_authority", authority)]
    channel = grpc.insecure_channel("unix://" + SOCKET, options=options)
    grpc.channel_ready_future(channel).result(timeout=10)
    identity = rpc.IdentityStub(channel)
    node = rpc.NodeStub(channel)
    for _ in range(3):
        info = identity.GetPluginInfo(csi.GetPluginInfoRequest(), timeout=10)
        assert info.name, name
        identity.Probe(csi.ProbeRequest(), timeout=10)
        node.NodeGetCapabilities(csi.NodeGetCapabilitiesRequest(), timeout=10)
    try:
        node.NodeUnpublishVolume(
            csi.NodeUnpublishVolumeRequest(volume_id="no-such-volume", target_path="/tmp/x"), timeout=10
        )
        code = grpc.StatusCode.OK
    except grpc.RpcError as e:
        code = e.code()
    assert code in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.OK), "%s: %s" % (name, code)
    channel.close()
    print("%s: 10 calls answered (%s)" % (name, info.name))
