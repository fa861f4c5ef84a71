//! A tapped connection: the client's socket spliced to the plugin's, bytes copied both ways as
//! they come (the client's reads through csikit's `:authority` rewriter), each chunk also queued
//! for the tap.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use csikit_runtime::server::authority::AuthorityFix;
use tokio::net::UnixStream;

use crate::queue::{Conn, Dir, Event, LOGGER_PERIOD, Queue};
use crate::stop::{DRAIN, stopping};

/// A tapped connection: bytes both ways as they come, each chunk also queued for the tap. When
/// the proxy stops, the connection is closed once the calls on it have ended (at most
/// [`DRAIN`] later).
pub(crate) async fn splice(
    down: UnixStream,
    up: UnixStream,
    conn: Arc<Conn>,
    queue: Arc<Queue>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    let id = conn.id;
    queue.push(Event::Open(conn.clone()));
    let (down_read, down_write) = down.into_split();
    let (up_read, up_write) = up.into_split();
    // Over a unix socket the client's `:authority` may be one the plugin's HTTP/2 library
    // refuses; it is made acceptable on the way, as a csikit plugin does itself.
    let down_read = AuthorityFix::new(down_read);
    let to_plugin = pump(down_read, up_write, id, Dir::Client, &queue);
    let to_client = pump(up_read, down_write, id, Dir::Plugin, &queue);
    tokio::pin!(to_plugin, to_client);
    // When one side is done, the other is told (its write half shut) and given a moment to
    // follow.
    let (why, by_client) = tokio::select! {
        r = &mut to_plugin => {
            let _ = tokio::time::timeout(DRAIN, &mut to_client).await;
            (ended("client", r), true)
        }
        r = &mut to_client => {
            let _ = tokio::time::timeout(DRAIN, &mut to_plugin).await;
            (ended("plugin", r), false)
        }
        () = drained(stop, &conn, &queue) => ("the proxy stopped".to_owned(), false),
    };
    queue.push(Event::Closed { conn: id, at: Instant::now(), why, by_client });
}

fn ended(side: &str, r: std::io::Result<()>) -> String {
    match r {
        Ok(()) => format!("the {side} closed the connection"),
        Err(e) => format!("the {side}'s connection broke: {e}"),
    }
}

/// Resolves once the proxy is stopping and the tap has seen every call on `conn` end (or
/// [`DRAIN`] after the stop).
async fn drained(stop: tokio::sync::watch::Receiver<bool>, conn: &Conn, queue: &Queue) {
    stopping(stop).await;
    let _ = tokio::time::timeout(DRAIN, async {
        loop {
            let mark = queue.pushed();
            tokio::time::sleep(LOGGER_PERIOD).await;
            if queue.read_up_to(mark) && conn.open_calls.load(Ordering::Acquire) == 0 {
                break;
            }
        }
    })
    .await;
}

/// Copies `from` to `to` until `from` ends (then shuts `to`'s write side), queueing each chunk
/// after it is written on.
async fn pump(
    mut from: impl tokio::io::AsyncRead + Unpin,
    mut to: tokio::net::unix::OwnedWriteHalf,
    conn: u64,
    dir: Dir,
    queue: &Queue,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0_u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(());
        }
        let at = Instant::now();
        to.write_all(&buf[..n]).await?;
        queue.push_bytes(conn, dir, at, &buf[..n]);
    }
}
