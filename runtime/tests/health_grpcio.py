"""Client side of tests/health_grpcio.rs: grpcio stubs compiled by grpcio-tools from the corpus's
csi.proto (an implementation of the wire independent of csikit) call the four volume-health RPCs
of a csikit skeleton on a unix socket.

health_grpcio.py PROTO OUT SOCKET MODE
  MODE allow:  the skeleton's alpha policy allows alpha. NodeGetVolumeHealth is written by the
               driver: its answer decodes with a DEGRADED entry. The other three are not: each
               answers UNIMPLEMENTED, and not as a refusal.
  MODE refuse: the policy refuses alpha: all four answer UNIMPLEMENTED with the refusal, the
               written one too.
Prints one line per call: `RPC CODE` (and `ok` for an answer).
"""

import importlib
import os
import sys

import grpc
import grpc_tools
from grpc_tools import protoc


def compile_stubs(proto, out):
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = [
        "protoc",
        "-I" + os.path.dirname(os.path.abspath(proto)),
        "-I" + include,
        "--python_out=" + out,
        "--grpc_python_out=" + out,
        os.path.basename(proto),
    ]
    if protoc.main(args) != 0:
        sys.exit("grpc_tools.protoc failed on " + proto)
    sys.path.insert(0, out)
    return importlib.import_module("csi_pb2"), importlib.import_module("csi_pb2_grpc")


def main():
    proto, out, socket, mode = sys.argv[1:5]
    pb, rpc = compile_stubs(proto, out)
    channel = grpc.insecure_channel("unix://" + socket)
    controller = rpc.ControllerStub(channel)
    node = rpc.NodeStub(channel)
    calls = [
        ("ControllerListVolumeHealth", controller.ControllerListVolumeHealth, pb.ControllerListVolumeHealthRequest()),
        ("ControllerGetVolumeHealth", controller.ControllerGetVolumeHealth, pb.ControllerGetVolumeHealthRequest(volume_id="vol-1")),
        ("NodeGetVolumeHealth", node.NodeGetVolumeHealth, pb.NodeGetVolumeHealthRequest(volume_id="vol-1", volume_publish_path="/pub/vol-1")),
        ("NodeGetStorageHealth", node.NodeGetStorageHealth, pb.NodeGetStorageHealthRequest()),
    ]
    failures = []
    for name, call, request in calls:
        try:
            answer = call(request, timeout=30)
        except grpc.RpcError as e:
            code, message = e.code(), e.details() or ""
            print(name, code.name, message)
            refused = "refused" in message and name in message
            if code != grpc.StatusCode.UNIMPLEMENTED:
                failures.append("%s: %s, not UNIMPLEMENTED: %s" % (name, code.name, message))
            elif mode == "refuse" and not refused:
                failures.append("%s: UNIMPLEMENTED but not the alpha refusal: %s" % (name, message))
            elif mode == "allow" and refused:
                failures.append("%s: refused as alpha although the policy allows it: %s" % (name, message))
            elif mode == "allow" and name == "NodeGetVolumeHealth":
                failures.append("%s: the driver writes it, yet: %s" % (name, message))
            continue
        print(name, "OK")
        if mode != "allow" or name != "NodeGetVolumeHealth":
            failures.append("%s: answered although it should not be: %s" % (name, answer))
            continue
        health = answer.volume_health
        entries = [(pb.VolumeHealthErrorType.Name(e.status), e.reason, e.message) for e in health.health_statuses]
        want = [("DEGRADED", "PathDegraded", "one of two paths is down")]
        if health.volume_id != "vol-1" or entries != want:
            failures.append("%s: answer %r, want vol-1 with %r" % (name, answer, want))
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
