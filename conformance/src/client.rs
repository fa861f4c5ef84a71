//! The connection to the plugin, and calls with a deadline: typed through csikit's tonic clients,
//! or as raw bytes to any method path (for the cases built by reflection).

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;
use tonic::{Code, Status};

/// Where the plugin listens: the runtime's endpoint, read as every csikit tool reads it
/// (`unix:///path`, `unix:path`, an absolute path or `tcp://host:port`; its table test is the
/// runtime's).
pub use csikit::runtime::endpoint::Endpoint;

/// Opens a channel to `endpoint`, within `timeout`.
pub(crate) async fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<Channel, String> {
    csikit::channel::connect_to(endpoint, Some(timeout)).await.map_err(|e| e.to_string())
}

/// Bytes in, bytes out: a codec for messages built by reflection.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RawCodec;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RawEncoder;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RawDecoder;

impl Encoder for RawEncoder {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawDecoder {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let mut out = vec![0; src.remaining()];
        src.copy_to_slice(&mut out);
        Ok(Some(out))
    }
}

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Vec<u8>;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

/// A unary call of `path` with encoded `request` (shared bytes, so a caller that keeps the
/// request copies nothing), within `timeout`; a deadline passed is DEADLINE_EXCEEDED, whatever
/// the plugin does.
pub(crate) async fn raw_call(
    channel: &Channel,
    path: &str,
    request: Bytes,
    timeout: Duration,
) -> Result<Vec<u8>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    let call = async {
        grpc.ready()
            .await
            .map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
        let mut req = tonic::Request::new(request);
        req.set_timeout(timeout);
        let path = http::uri::PathAndQuery::try_from(path)
            .map_err(|e| Status::internal(format!("method path '{path}': {e}")))?;
        grpc.unary(req, path, RawCodec).await.map(tonic::Response::into_inner)
    };
    match tokio::time::timeout(timeout + Duration::from_millis(500), call).await {
        Ok(r) => r,
        Err(_) => Err(Status::new(Code::DeadlineExceeded, "no answer within the deadline")),
    }
}
