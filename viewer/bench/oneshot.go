// One CSI call as a one-shot grpc-go client makes it (a baseline of call_latency.py): the CSI
// spec's Go bindings and grpc-go, which gocsi's csc and grpcurl both stand on, built from
// csi-test's vendor folder (neither csc nor grpcurl builds offline).
//
//	oneshot ENDPOINT METHOD [JSON]     METHOD: GetPluginInfo or CreateVolume
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	conn, err := grpc.NewClient(os.Args[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := "{}"
	if len(os.Args) > 3 {
		body = os.Args[3]
	}
	var resp proto.Message
	switch os.Args[2] {
	case "GetPluginInfo":
		resp, err = csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	case "CreateVolume":
		req := &csi.CreateVolumeRequest{}
		if err = protojson.Unmarshal([]byte(body), req); err == nil {
			resp, err = csi.NewControllerClient(conn).CreateVolume(ctx, req)
		}
	default:
		err = fmt.Errorf("unknown method %q", os.Args[2])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(protojson.Format(resp))
}
