//! A loopback HTTP/1 client for the API benchmarks (`load`, and the MCP crate's `tool_call`).

use std::net::SocketAddr;

use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// One keep-alive HTTP/1 connection to `addr` (Nagle off), its driver spawned on the runtime.
pub async fn connect<B>(addr: SocketAddr) -> SendRequest<B>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = TcpStream::connect(addr).await.expect("connect to loopback");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP/1 handshake");
    tokio::spawn(connection);
    sender
}

/// Sends `request` on `sender` and reads the whole answer; returns the body's length as
/// received. A status other than 2xx panics, naming `label` (the route).
pub async fn send<B>(sender: &mut SendRequest<B>, request: hyper::Request<B>, label: &str) -> usize
where
    B: hyper::body::Body + 'static,
{
    body(sender, request, label).await.len()
}

/// Sends `request` on `sender` and returns the whole body as received. A status other than
/// 2xx panics, naming `label` (the route).
pub async fn body<B>(
    sender: &mut SendRequest<B>,
    request: hyper::Request<B>,
    label: &str,
) -> hyper::body::Bytes
where
    B: hyper::body::Body + 'static,
{
    use http_body_util::BodyExt;
    sender.ready().await.expect("connection ready");
    let response = sender.send_request(request).await.expect("response");
    assert!(
        response.status().is_success(),
        "{label}: {}",
        response.status()
    );
    response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
}
