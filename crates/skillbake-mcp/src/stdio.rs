//! The MCP server over stdin and stdout, one client per process.

use crate::error::Error;
use crate::server::Server;
use rmcp::service::QuitReason;
use rmcp::ServiceExt;
use skillbake::Registry;

/// Serves `registry` over stdin/stdout until the client closes the connection. Must run inside
/// a tokio runtime with I/O enabled. Nothing but MCP messages is written to stdout.
pub async fn serve_stdio(registry: &'static Registry) -> Result<(), Error> {
    serve(Server::new(registry)?).await
}

/// Serves `server` over stdin/stdout until the client closes the connection (see
/// [`serve_stdio`]); build it with [`Server::with_policy`] to run the packs' scripts.
pub async fn serve(server: Server) -> Result<(), Error> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Initialize(Box::new(e)))?;
    match running.waiting().await {
        Ok(QuitReason::JoinError(e)) | Err(e) => Err(Error::Serve(Box::new(e))),
        Ok(_) => Ok(()),
    }
}
