//! The one path a request to a plugin takes, for `csi-view call`, the page and `replay`: the
//! request checked against the spec's rules (unless it is sent as it is), encoded once and its secret
//! values read from those very bytes ([`Outgoing`]); sent on the connection to the plugin,
//! dialled at the first call and again after a failed dial ([`Plugin`]); and what came back
//! ([`Reply`]): the status message with the request's secrets scrubbed from it (drivers echo
//! their input in errors), the response decoded and checked as the method's output, and what the
//! spec's error tables say about the status, nothing for a status csi-view made itself.
//!
//! How an answer is shown (text, JSON, the page's tree, a replay's verdict) stays with each
//! caller.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use csi_view_core::rpcs::{ErrorLookup, status_name};
use csi_view_core::schema::Schema;
use csi_view_core::validate::Violation;
use prost_reflect::{DynamicMessage, MethodDescriptor, ReflectMessage};

use crate::client::{Answer, Client};

/// A request ready to go: its method, its bytes (encoded once) and the secret values they hold.
#[derive(Clone)]
pub struct Outgoing {
    method: MethodDescriptor,
    path: String,
    bytes: Bytes,
    secrets: Vec<String>,
}

impl Outgoing {
    /// `request` for `method`, checked first against the spec's rules (`call`, the page).
    ///
    /// # Errors
    ///
    /// The rules the request breaks: then nothing may be sent.
    pub fn checked(
        schema: &Schema,
        method: &MethodDescriptor,
        request: &DynamicMessage,
    ) -> Result<Outgoing, Vec<Violation>> {
        let broken = csi_view_core::validate::validate(schema, request);
        if broken.is_empty() { Ok(Outgoing::new(schema, method, request)) } else { Err(broken) }
    }

    /// `request` for `method`, as it is, rules broken or not (`replay` sends recorded requests
    /// as they were; `call --no-validate`).
    pub fn new(schema: &Schema, method: &MethodDescriptor, request: &DynamicMessage) -> Outgoing {
        let bytes = prost::Message::encode_to_vec(request);
        // The bytes sent are the bytes read for secrets: what is scrubbed is what went out.
        let secrets = csi_view_core::mask::secret_strings(schema, &request.descriptor(), &bytes);
        Outgoing {
            method: method.clone(),
            path: csi_view_core::method::path(method),
            bytes: bytes.into(),
            secrets,
        }
    }

    /// The encoded request.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The secret values the request holds, sorted, each once.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// Also hides `values` in what the reply shows (`replay`: the secrets file's values, which a
    /// plugin may echo whichever request carried them).
    pub fn also_hide(&mut self, values: impl IntoIterator<Item = String>) {
        self.secrets.extend(values);
    }

    /// The reply this request got as `answer`.
    pub fn answered(self, answer: Answer) -> Reply {
        Reply { method: self.method, secrets: self.secrets, answer }
    }

    /// Sends the request on `client`.
    pub async fn send(self, client: &mut Client) -> Reply {
        let answer = client.unary(&self.path, self.bytes.clone()).await;
        self.answered(answer)
    }
}

/// The plugin requests go to: one connection, dialled at the first call, and again at the next
/// call after a dial failed. Clones share the connection.
#[derive(Clone)]
pub struct Plugin {
    endpoint: String,
    timeout: Duration,
    client: Arc<tokio::sync::Mutex<Option<Client>>>,
}

impl Plugin {
    /// The plugin at `endpoint` (as the user wrote it), with `timeout` on dialling and on every
    /// call. Nothing is dialled yet.
    pub fn new(endpoint: String, timeout: Duration) -> Plugin {
        Plugin { endpoint, timeout, client: Arc::default() }
    }

    /// The endpoint as given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The deadline of dialling and of each call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The connection, dialled now unless it is up.
    ///
    /// # Errors
    ///
    /// When the endpoint cannot be read or nothing answers there within the timeout.
    pub async fn connect(&self) -> Result<Client, csikit_runtime::channel::ConnectError> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = Client::connect(&self.endpoint, self.timeout).await?;
        Ok(slot.insert(client).clone())
    }

    /// Sends `request`. A failed dial is the reply's status: UNAVAILABLE naming the endpoint,
    /// made here (the spec's tables say nothing about it).
    pub async fn send(&self, request: Outgoing) -> Reply {
        let started = Instant::now();
        match self.connect().await {
            Ok(mut client) => request.send(&mut client).await,
            Err(e) => request.answered(Answer {
                response: None,
                status: tonic::Status::unavailable(e.to_string()),
                elapsed: started.elapsed(),
                local: true,
            }),
        }
    }
}

/// What came back for one request.
#[derive(Debug)]
pub struct Reply {
    method: MethodDescriptor,
    secrets: Vec<String>,
    /// The call's answer, as the client got it.
    pub answer: Answer,
}

impl Reply {
    /// The status code's number (0 OK).
    pub fn code(&self) -> i32 {
        self.answer.code()
    }

    /// The status code's name (`NOT_FOUND`).
    pub fn status_name(&self) -> String {
        status_name(self.code())
    }

    /// The secret values the request held, to hide in whatever is shown of the reply.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// The status message, every secret value the request held taken out.
    pub fn message(&self) -> String {
        csikit_runtime::redact::scrub(self.answer.status.message(), &self.secrets).into_owned()
    }

    /// The response's bytes, when the status is OK.
    pub fn response_bytes(&self) -> Option<&Bytes> {
        self.answer.response.as_ref().filter(|_| self.code() == 0)
    }

    /// The response decoded as the method's output, checked first; `None` when the status is
    /// not OK.
    ///
    /// # Errors
    ///
    /// Bytes that are not a valid output message, with the offset of the problem.
    pub fn response(&self) -> Option<Result<DynamicMessage, String>> {
        let output = self.method.output();
        self.response_bytes().map(|bytes| {
            csi_view_core::text::decode_checked(&output, bytes, 0)
                .map_err(|e| format!("not a {}: {e}", output.full_name()))
        })
    }

    /// What the spec's error tables say about the status for this RPC; `None` for a status
    /// csi-view made itself (no connection, no answer in time): the plugin did not say it.
    pub fn error_rows(&self, schema: &Schema) -> Option<ErrorLookup> {
        (!self.answer.local).then(|| schema.error_rows(&self.method, self.code()))
    }

    /// [`Reply::error_rows`] as lines to print under the status (none for a status made here).
    pub fn explain(&self, schema: &Schema) -> Vec<String> {
        self.error_rows(schema)
            .map(|rows| rows.explain(self.method.name(), &self.status_name()))
            .unwrap_or_default()
    }
}
