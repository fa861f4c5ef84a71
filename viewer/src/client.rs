//! Sending requests to a plugin: unary gRPC calls of already-encoded messages on the runtime's
//! channel (`csikit_runtime::channel`, which reads the endpoint as `CSI_ENDPOINT` is read and
//! sends the `:authority` grpc-go sends). The bytes go out and come back as they are: typing,
//! validating and printing them is the caller's, with the Model's facts.

use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes};
use csikit_runtime::channel::{self, ConnectError};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;

/// One connection to a plugin; calls on it share the connection.
#[derive(Clone)]
pub struct Client {
    grpc: tonic::client::Grpc<Channel>,
    endpoint: String,
    timeout: Duration,
}

/// What one call came back with.
#[derive(Debug)]
pub struct Answer {
    /// The response message's bytes, when the status is OK.
    pub response: Option<Bytes>,
    /// The gRPC status (`Code::Ok` with an empty message on success).
    pub status: tonic::Status,
    /// From sending the request to the status.
    pub elapsed: Duration,
}

impl Answer {
    /// The status code as its number (0 OK … 16 UNAUTHENTICATED).
    pub fn code(&self) -> i32 {
        self.status.code() as i32
    }
}

impl Client {
    /// Connects to `endpoint` (`unix:///a.sock`, `/a.sock`, `tcp://host:port`), with `timeout`
    /// on connecting and on every call.
    pub async fn connect(endpoint: &str, timeout: Duration) -> Result<Self, ConnectError> {
        let ch = channel::connect_with_timeout(endpoint, timeout).await?;
        Ok(Self { grpc: tonic::client::Grpc::new(ch), endpoint: endpoint.to_owned(), timeout })
    }

    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Calls `path` (`/csi.v1.Controller/CreateVolume`) with `request`, the encoded message.
    /// A transport failure comes back as the status tonic gives it (UNAVAILABLE, CANCELLED), as
    /// for any other client; a call the timeout ended is DEADLINE_EXCEEDED, as grpc-go reports
    /// its own deadline (tonic says CANCELLED).
    pub async fn unary(&mut self, path: &str, request: Bytes) -> Answer {
        let started = Instant::now();
        let status = match http::uri::PathAndQuery::try_from(path) {
            Ok(p) => match self.grpc.ready().await {
                Ok(()) => match self.grpc.unary(tonic::Request::new(request), p, RawCodec).await {
                    Ok(resp) => {
                        return Answer {
                            response: Some(resp.into_inner()),
                            status: tonic::Status::ok(""),
                            elapsed: started.elapsed(),
                        };
                    }
                    Err(s) => deadline(s, self.timeout),
                },
                Err(e) => tonic::Status::unavailable(format!("{}: {e}", self.endpoint)),
            },
            Err(e) => tonic::Status::internal(format!("bad method path '{path}': {e}")),
        };
        Answer { response: None, status, elapsed: started.elapsed() }
    }
}

/// DEADLINE_EXCEEDED for a status the channel's timeout made, else the status as it is.
fn deadline(status: tonic::Status, timeout: Duration) -> tonic::Status {
    let mut source = std::error::Error::source(&status);
    while let Some(e) = source {
        if e.is::<tonic::TimeoutExpired>() {
            return tonic::Status::deadline_exceeded(format!("no answer within {timeout:?}"));
        }
        source = e.source();
    }
    status
}

/// Messages as bytes, both ways: the caller encodes and decodes with the Model's types.
#[derive(Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Self::Error> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Self::Error> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_endpoint_is_the_runtime_s_one_error() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        let err = rt
            .block_on(Client::connect("http://x", Duration::from_secs(1)))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.starts_with("endpoint 'http://x'"), "{err}");
    }

    #[test]
    fn nothing_listening_names_the_endpoint() {
        let dir = tempfile::tempdir().expect("dir");
        let sock = dir.path().join("none.sock");
        let endpoint = format!("unix://{}", sock.display());
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        let err = rt
            .block_on(Client::connect(&endpoint, Duration::from_secs(1)))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(&endpoint), "{err}");
    }
}
