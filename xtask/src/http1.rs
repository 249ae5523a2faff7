//! The smallest HTTP/1.1 client the checks and benchmarks need to talk to `skillbake serve
//! --http` on 127.0.0.1: one request written in one piece on a new connection, the reply read
//! to the end (the request says `Connection: close`), chunked bodies joined.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A reply: its status, its head (status line and headers) and its body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Reply {
    /// The value of header `name` (case-insensitive), trimmed.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `text` (a whole request, head and body, with `Connection: close`) to `addr` and
/// reads the reply to its end; every step waits at most `timeout`.
pub(crate) fn exchange(addr: SocketAddr, text: &str, timeout: Duration) -> Result<Reply, String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let mut reply = Reply {
        status,
        head,
        body: String::new(),
    };
    let mut body = raw.get(split + 4..).unwrap_or_default().to_vec();
    if reply
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        body = dechunk(&body)?;
    }
    reply.body = String::from_utf8_lossy(&body).to_string();
    Ok(reply)
}

/// The data of a chunked body.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk")?;
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&rest[..eol])
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        )
        .map_err(|e| format!("bad chunk size: {e}"))?;
        if size == 0 {
            return Ok(out);
        }
        let chunk = rest.get(eol + 2..eol + 2 + size).ok_or("truncated chunk")?;
        out.extend_from_slice(chunk);
        rest = rest.get(eol + 4 + size..).unwrap_or_default();
    }
}
