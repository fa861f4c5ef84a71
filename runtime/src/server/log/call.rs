//! A call's context for [`LogLayer`](super::LogLayer) without a `tracing` span.
//!
//! Under any other subscriber the skeleton opens a span per call (`csi{rpc=… id=…}`), and every
//! event inside the call, the driver's own included, is written in it. A span costs the registry
//! a slot to take and give back, and the layer a copy of its values, on every call. When the
//! process's subscriber has a [`LogLayer`](super::LogLayer), the skeleton keeps the same values
//! here instead: on the thread polling the call, for as long as it polls it (as a span is
//! entered), and the layer writes them into each line as it would write the span. The lines are
//! the same; what is given up is the span itself, which other layers beside a `LogLayer` then do
//! not see (their lines carry the call's own fields, `rpc` and `id` aside), and which a task the
//! driver spawns would not carry either way unless it was instrumented.

use std::cell::RefCell;

use tracing::Metadata;
use tracing::callsite::{Callsite, Identifier};
use tracing::field::{FieldSet, Visit};
use tracing::metadata::Kind;
use tracing::subscriber::Interest;

use super::capture::{Batch, Encoder};

/// The fields of a call's context, as the span under other subscribers names them.
const FIELDS: &[&str] = &["rpc", "id", "waited_ms"];

/// Where the context's metadata says it comes from: a callsite of its own, never enabled or
/// dispatched, so its metadata can name the values as a span's do.
struct ContextSite;

static SITE: ContextSite = ContextSite;

static META: Metadata<'static> = Metadata::new(
    "csi",
    "csikit_runtime::server",
    tracing::Level::INFO,
    Some(file!()),
    Some(line!()),
    Some(module_path!()),
    FieldSet::new(FIELDS, Identifier(&SITE)),
    Kind::SPAN,
);

impl Callsite for ContextSite {
    fn set_interest(&self, _: Interest) {}

    fn metadata(&self) -> &Metadata<'_> {
        &META
    }
}

/// One call's context: its RPC, the id it works on, how long it waited for its turn.
#[derive(Debug)]
pub(crate) struct CallContext {
    rpc: &'static str,
    id: Option<Box<str>>,
    waited_ms: Option<u64>,
}

thread_local! {
    /// The context of the call this thread is polling, if any.
    static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
}

impl CallContext {
    /// The context of a call of `rpc` on `id` (`None` when the request names none).
    pub(crate) fn new(rpc: &'static str, id: Option<&str>) -> Self {
        Self { rpc, id: id.map(Into::into), waited_ms: None }
    }

    /// Runs `poll` with this context as the thread's, as a span is entered for one poll; what
    /// the poll records (the time waited) stays with the context. The thread's own is given back
    /// however `poll` ends, a panic included (as a span's guard exits it), so no later event on
    /// the thread is written in a call it is not in.
    pub(crate) fn enter<T>(slot: &mut Option<CallContext>, poll: impl FnOnce() -> T) -> T {
        /// Gives the thread its own context back, and the call its context, when dropped.
        struct Entered<'a> {
            slot: &'a mut Option<CallContext>,
            outer: Option<CallContext>,
        }
        impl Drop for Entered<'_> {
            fn drop(&mut self) {
                let outer = self.outer.take();
                *self.slot = CURRENT.with(|current| current.replace(outer));
            }
        }
        let outer = CURRENT.with(|current| current.replace(slot.take()));
        let _entered = Entered { slot, outer };
        poll()
    }

    /// Records the time the current call waited for its turn; `false` when the thread polls no
    /// call with a context (the caller records it on its span instead).
    pub(crate) fn record_waited(ms: u64) -> bool {
        CURRENT.with(|current| {
            let Ok(mut current) = current.try_borrow_mut() else { return false };
            let Some(context) = current.as_mut() else { return false };
            context.waited_ms = Some(ms);
            true
        })
    }

    /// Adds the current call's context, if any, to the line begun last, as a span's part.
    pub(crate) fn write_current(line: &mut Batch) {
        CURRENT.with(|current| {
            let Ok(current) = current.try_borrow() else { return };
            let Some(context) = current.as_ref() else { return };
            line.part(&META, |out| context.encode(out));
        });
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let fields = META.fields();
        let mut encoder = Encoder(out);
        let field = |name: &str| fields.field(name);
        if let Some(f) = field("rpc") {
            encoder.record_str(&f, self.rpc);
        }
        if let (Some(f), Some(id)) = (field("id"), &self.id) {
            encoder.record_str(&f, id);
        }
        if let (Some(f), Some(ms)) = (field("waited_ms"), self.waited_ms) {
            encoder.record_u64(&f, ms);
        }
    }
}
