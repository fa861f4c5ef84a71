//! The long-running commands: `ui` (the web page) and `proxy`, each until SIGTERM or SIGINT.

use std::io::{self, BufWriter, Write};

use anyhow::{Context, Result};

use csikit_runtime::endpoint::Flag;

use crate::args::{OutFormat, ProxyArgs, UiArgs};
use crate::load::load_schema;

pub(crate) fn ui(a: UiArgs) -> Result<u8> {
    let schema = load_schema(&a.schema)?;
    let options = csi_view::ui::Options {
        ty: a.ty.clone(),
        input_format: Some(a.input.input_format),
        grpc: a.input.grpc,
        docs_url: a.docs_url.clone(),
        endpoint: csikit_runtime::endpoint::optional(Some(Flag {
            name: "--endpoint",
            value: a.endpoint.as_deref(),
        }))?
        .map(|given| given.written),
        timeout: crate::args::timeout(a.timeout)?,
    };
    let documents = csi_view::ui::open(&schema, &a.files, &options)?;
    let state = csi_view::ui::State::new(schema, documents, &options)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let shutdown = shutdown_signal()?;
        csi_view::ui::serve(
            state,
            a.port,
            |url| {
                println!("{url}");
                let _ = io::stdout().flush();
            },
            shutdown,
        )
        .await
    })?;
    Ok(0)
}

pub(crate) fn proxy(a: ProxyArgs) -> Result<u8> {
    let schema = std::sync::Arc::new(load_schema(&a.schema)?);
    let options = csi_view_proxy::Options {
        listen: unix_socket(&a.listen).context("--listen")?,
        upstream: unix_socket(&a.upstream).context("--upstream")?,
        record: a.record.clone(),
        keep_secrets: a.keep_secrets,
        format: match a.format {
            OutFormat::Text => csi_view_proxy::Format::Text,
            OutFormat::Json => csi_view_proxy::Format::Json,
        },
    };
    // One thread carries the calls (the proxy only moves bytes; a multi-thread runtime cost more
    // in wake-ups across workers than it gained), the logger has its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(async {
        let shutdown = shutdown_signal()?;
        let out: Box<dyn Write + Send> = Box::new(BufWriter::new(io::stdout()));
        csi_view_proxy::run(schema, options, out, shutdown).await
    })?;
    eprintln!(
        "# {} call(s); {} broke a spec rule; {} concurrent on one volume",
        summary.calls, summary.broke_rules, summary.concurrent
    );
    Ok(u8::from(a.check && summary.broke_rules > 0))
}

/// The socket path of a `--listen` or `--upstream` endpoint.
fn unix_socket(endpoint: &str) -> Result<std::path::PathBuf> {
    csi_view_proxy::socket_path(&csi_view_proxy::read_endpoint(endpoint)?)
}

/// Resolves at the first SIGTERM or SIGINT (the runtime's one signal handler).
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>> {
    let signal = csikit_runtime::endpoint::shutdown_signal().context("cannot watch signals")?;
    Ok(async move {
        let _ = signal.await;
    })
}
