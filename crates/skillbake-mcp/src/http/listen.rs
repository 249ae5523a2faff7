//! The accept loop of [`serve`](super::serve): HTTP/1.1 connections with a header read
//! timeout, and the graceful stop (stop accepting, let calls in progress finish within the
//! grace period, then stop their runs so that they answer, then end the sessions).

use super::gate::Gate;
use crate::{Error, Server};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long, after the grace period, calls whose runs were stopped have to send their replies,
/// and connections to close.
const AFTER_GRACE: Duration = Duration::from_secs(5);

/// What [`serve`] needs.
pub(super) struct Stopping<F> {
    pub app: Router,
    pub gate: Arc<Gate>,
    pub server: Server,
    pub listener: tokio::net::TcpListener,
    pub header_timeout: Duration,
    pub grace: Duration,
    /// Ends every session (and rmcp's event streams) when cancelled.
    pub stop: CancellationToken,
    pub shutdown: F,
}

/// Accepts connections until `shutdown` completes, then stops gracefully.
pub(super) async fn serve<F>(s: Stopping<F>) -> Result<(), Error>
where
    F: Future<Output = ()> + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(s.header_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(s.shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = s.listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) if is_connection_error(&e) => continue,
            Err(_) => {
                // Out of descriptors, say: wait for some to be freed rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Replies go out as several small writes (event-stream chunks): without TCP_NODELAY a
        // client that keeps its connection open waits for its delayed ACK on every request.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(s.app.clone());
        let connection = builder.serve_connection(TokioIo::new(tcp), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
    drop(s.listener);
    // Idle connections close now, busy ones after their reply.
    let closed = tokio::spawn(graceful.shutdown());
    if !s.gate.wait_idle(s.grace).await {
        // Past the grace period: stopped runs answer cancelled.
        s.server.stop_runs();
        s.gate.wait_idle(AFTER_GRACE).await;
    }
    s.stop.cancel();
    let _ = tokio::time::timeout(AFTER_GRACE, closed).await;
    Ok(())
}

/// An error of one connection that does not concern the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
