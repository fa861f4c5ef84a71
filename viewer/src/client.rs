//! Sending requests to a plugin: unary gRPC calls of already-encoded messages on the runtime's
//! channel (`csikit_runtime::channel`, which reads the endpoint as `CSI_ENDPOINT` is read and
//! sends the `:authority` grpc-go sends). The bytes go out and come back as they are: typing,
//! validating and printing them is the caller's, with the Model's facts.
//!
//! Every call has a deadline: the request carries it (`grpc-timeout`, so the plugin knows), and
//! a plugin that never answers gives DEADLINE_EXCEEDED when it passes, whatever the connection
//! does, so no caller ever hangs on one.

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
    /// The status was made here (no answer within the deadline, no connection), not sent by
    /// the plugin: the spec's error tables say nothing about it.
    pub local: bool,
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
    ///
    /// # Errors
    ///
    /// When the endpoint cannot be read, or nothing answers there within `timeout`.
    pub async fn connect(endpoint: &str, timeout: Duration) -> Result<Self, ConnectError> {
        let ch = channel::connect_with_timeout(endpoint, timeout).await?;
        Ok(Self { grpc: tonic::client::Grpc::new(ch), endpoint: endpoint.to_owned(), timeout })
    }

    /// The deadline of every call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Calls `path` (`/csi.v1.Controller/CreateVolume`) with `request`, the encoded message.
    /// A transport failure comes back as the status tonic gives it (UNAVAILABLE, CANCELLED), as
    /// for any other client; no answer within the deadline is DEADLINE_EXCEEDED.
    pub async fn unary(&mut self, path: &str, request: Bytes) -> Answer {
        let started = Instant::now();
        let (status, local) =
            match tokio::time::timeout(self.timeout, self.unary_inner(path, request)).await {
                Ok(Ok(response)) => {
                    return Answer {
                        response: Some(response),
                        status: tonic::Status::ok(""),
                        elapsed: started.elapsed(),
                        local: false,
                    };
                }
                // tonic's channel reports its own deadline as CANCELLED "Timeout expired"; gRPC
                // (and every other client) names that DEADLINE_EXCEEDED.
                Ok(Err((status, _)))
                    if status.code() == tonic::Code::Cancelled
                        && status.message() == tonic::TimeoutExpired(()).to_string() =>
                {
                    (self.no_answer(), true)
                }
                Ok(Err(failed)) => failed,
                Err(_) => (self.no_answer(), true),
            };
        Answer { response: None, status, elapsed: started.elapsed(), local }
    }

    fn no_answer(&self) -> tonic::Status {
        tonic::Status::deadline_exceeded(format!(
            "no answer from {} within {}",
            self.endpoint,
            seconds(self.timeout)
        ))
    }

    /// The response, or the status and whether it was made here.
    async fn unary_inner(
        &mut self,
        path: &str,
        request: Bytes,
    ) -> Result<Bytes, (tonic::Status, bool)> {
        let p = http::uri::PathAndQuery::try_from(path).map_err(|e| {
            (tonic::Status::internal(format!("bad method path '{path}': {e}")), true)
        })?;
        self.grpc
            .ready()
            .await
            .map_err(|e| (tonic::Status::unavailable(format!("{}: {e}", self.endpoint)), true))?;
        let mut request = tonic::Request::new(request);
        request.set_timeout(self.timeout);
        match self.grpc.unary(request, p, RawCodec).await {
            Ok(r) => Ok(r.into_inner()),
            Err(s) => Err((s, false)),
        }
    }
}

/// A duration as a person reads it: `30 s`, `250 ms`.
pub fn seconds(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs_f64())
    }
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
