//! The HTTP/1 server loop with the bounds a public service needs: a cap on open connections,
//! a deadline for a request's headers (slowloris) and a deadline for the whole answer.
//!
//! `axum::serve` sets none of them. Here each accepted connection takes a slot of
//! [`ServeLimits::max_connections`] (a connection past the cap is closed at once: queueing
//! it would hold a socket for nothing), hyper closes a connection whose request headers take
//! longer than [`ServeLimits::header_read_timeout`] (idle keep-alive waits included), and a
//! request whose answer takes longer than [`ServeLimits::request_timeout`] is answered 503
//! with `Retry-After`. On shutdown every connection finishes its in-flight request and
//! closes; the loop then waits for them up to [`SHUTDOWN_GRACE`].
//!
//! Behind a reverse proxy every connection comes from the proxy. When the peer is one of
//! [`ServeLimits::trusted_proxies`], the client is the right-most address of
//! `X-Forwarded-For` that is not itself a trusted proxy, and the handlers see that address as
//! the peer (the login throttle counts per client, not per proxy). From any other peer the
//! header is ignored: a client cannot choose the address it is counted under.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower::Service;

use crate::error::ApiError;

/// How long a shutdown waits for open connections to finish.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The server's bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeLimits {
    /// Open connections at most.
    pub max_connections: usize,
    /// The longest a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// The longest an answer may take to build.
    pub request_timeout: Duration,
    /// The reverse proxies whose `X-Forwarded-For` names the client (none by default).
    pub trusted_proxies: Vec<IpNetwork>,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            trusted_proxies: Vec::new(),
        }
    }
}

/// An address block: `10.0.0.0/8`, `fd00::/8`, or one address (`172.28.0.10`, a /32 or
/// /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNetwork {
    address: IpAddr,
    prefix: u8,
}

impl IpNetwork {
    /// Whether `ip` is in the block (an IPv4 address mapped into IPv6 counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            IpAddr::V4(_) => ip,
        };
        match (self.address, ip) {
            (IpAddr::V4(block), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(block) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(block), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(block) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::str::FromStr for IpNetwork {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("{text:?} is not an IP address or block (10.0.0.0/8)"))?;
        let longest = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => longest,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= longest)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {longest}"))?,
        };
        Ok(Self { address, prefix })
    }
}

/// The client behind `peer`: the right-most `X-Forwarded-For` address that is not a trusted
/// proxy when `peer` is one, `peer` otherwise (and when the header is absent or unreadable).
fn forwarded_client(
    peer: SocketAddr,
    forwarded_for: Option<&str>,
    trusted: &[IpNetwork],
) -> SocketAddr {
    let is_trusted = |ip: IpAddr| trusted.iter().any(|block| block.contains(ip));
    if !is_trusted(peer.ip()) {
        return peer;
    }
    let Some(header) = forwarded_for else {
        return peer;
    };
    for hop in header.rsplit(',') {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            // A hop we cannot read: what is left of it was written by someone we do not
            // trust, so stop at the last address we could vouch for.
            return peer;
        };
        if !is_trusted(ip) {
            return SocketAddr::new(ip, 0);
        }
    }
    peer
}

/// Longest `X-Forwarded-For` read (a longer one is ignored: the peer stands).
const FORWARDED_FOR_MAX_BYTES: usize = 1024;

/// Replaces the peer address the handlers see with the client a trusted proxy names.
async fn client_behind_proxy(
    trusted: Arc<[IpNetwork]>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(axum::extract::ConnectInfo(peer)) = request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .copied()
    {
        let header = request
            .headers()
            .get("x-forwarded-for")
            .filter(|v| v.len() <= FORWARDED_FOR_MAX_BYTES)
            .and_then(|v| v.to_str().ok());
        let client = forwarded_client(peer, header, &trusted);
        if client != peer {
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(client));
        }
    }
    next.run(request).await
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves; the handlers see the
/// peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve_with_limits(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let deadline = limits.request_timeout;
    let app = app.layer(middleware::from_fn(move |request: Request, next: Next| {
        answer_within(deadline, request, next)
    }));
    let app = if limits.trusted_proxies.is_empty() {
        app
    } else {
        let trusted: Arc<[IpNetwork]> = limits.trusted_proxies.clone().into();
        app.layer(middleware::from_fn(move |request: Request, next: Next| {
            client_behind_proxy(Arc::clone(&trusted), request, next)
        }))
    };
    let mut make_service = app.into_make_service_with_connect_info::<SocketAddr>();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!(%peer, "connection refused: at the connection cap");
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let Ok(service) = make_service.call(peer).await;
        let service = TowerToHyperService::new(service);
        let mut stop = stop_rx.clone();
        let header_read_timeout = limits.header_read_timeout;
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(slot);
        });
    }
    let _ = stop_tx.send(true);
    let all = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, slots.acquire_many(all)).await;
    Ok(())
}

/// Runs the rest of the stack, or answers 503 with `Retry-After` past `deadline`.
async fn answer_within(deadline: Duration, request: Request, next: Next) -> Response {
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Busy {
            reason: format!(
                "The answer took longer than {} s; retry later",
                deadline.as_secs_f64()
            ),
            retry_after_secs: deadline.as_secs().clamp(1, 60),
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;

    async fn start(limits: ServeLimits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
        let app =
            Router::new()
                .route("/", get(|| async { "ok" }))
                .route(
                    "/slow",
                    get(|| async {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        "late"
                    }),
                )
                .route(
                    "/peer",
                    get(
                        |axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<
                            SocketAddr,
                        >| async move { peer.ip().to_string() },
                    ),
                );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(serve_with_limits(listener, app, limits, async {
            let _ = stopped.await;
        }));
        (address, stop)
    }

    async fn answer(stream: &mut TcpStream) -> String {
        let mut bytes = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Err(_) | Ok(Err(_)) => break,
                Ok(Ok(n)) => bytes.extend_from_slice(&buffer[..n]),
            }
            if bytes.windows(4).any(|w| w == b"\r\n\r\n") && !bytes.ends_with(b"\r\n\r\n") {
                break;
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn slow_headers_are_cut_and_connections_past_the_cap_are_closed() {
        let limits = ServeLimits {
            max_connections: 1,
            header_read_timeout: Duration::from_millis(300),
            request_timeout: Duration::from_millis(300),
            trusted_proxies: Vec::new(),
        };
        let (address, _stop) = start(limits).await;
        // A client that never finishes its headers is disconnected after the deadline.
        let started = Instant::now();
        let mut slow = TcpStream::connect(address).await.unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        // While it holds the only slot, another connection is closed without an answer.
        let mut second = TcpStream::connect(address).await.unwrap();
        second
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let refused = answer(&mut second).await;
        assert!(!refused.contains("200 OK"), "{refused}");
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(3), slow.read_to_end(&mut rest)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
        assert!(waited < Duration::from_secs(3), "{waited:?}");
        // The slot is free again: a complete request is answered; a slow answer is a 503.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut client = TcpStream::connect(address).await.unwrap();
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        assert!(answer(&mut client).await.contains("200 OK"));
        client
            .write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let late = answer(&mut client).await;
        assert!(late.contains("503"), "{late}");
        assert!(
            late.to_ascii_lowercase().contains("retry-after: 1"),
            "{late}"
        );
    }

    fn net(text: &str) -> IpNetwork {
        text.parse().unwrap()
    }

    #[test]
    fn address_blocks_parse_and_contain() {
        assert!(net("10.0.0.0/8").contains("10.200.3.4".parse().unwrap()));
        assert!(!net("10.0.0.0/8").contains("11.0.0.1".parse().unwrap()));
        assert!(net("172.28.0.10").contains("172.28.0.10".parse().unwrap()));
        assert!(!net("172.28.0.10").contains("172.28.0.11".parse().unwrap()));
        assert!(net("0.0.0.0/0").contains("8.8.8.8".parse().unwrap()));
        assert!(net("fd00::/8").contains("fd12::1".parse().unwrap()));
        // An IPv4 peer on a dual-stack socket arrives mapped into IPv6.
        assert!(net("127.0.0.1").contains("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!net("::1").contains("127.0.0.1".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/x"] {
            assert!(bad.parse::<IpNetwork>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_a_trusted_proxy_names_the_client() {
        let trusted = [net("172.28.0.10"), net("10.0.0.0/8")];
        let proxy: SocketAddr = "172.28.0.10:5000".parse().unwrap();
        let stranger: SocketAddr = "203.0.113.7:5000".parse().unwrap();
        let client = |peer, header| forwarded_client(peer, header, &trusted).ip().to_string();
        assert_eq!(client(proxy, Some("198.51.100.1")), "198.51.100.1");
        // The right-most untrusted hop: what the client wrote to the left is not believed.
        assert_eq!(
            client(proxy, Some("1.2.3.4, 198.51.100.1, 10.1.1.1")),
            "198.51.100.1"
        );
        assert_eq!(client(stranger, Some("198.51.100.1")), "203.0.113.7");
        assert_eq!(client(proxy, None), "172.28.0.10");
        assert_eq!(client(proxy, Some("garbage")), "172.28.0.10");
        assert_eq!(client(proxy, Some("10.1.1.1")), "172.28.0.10");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_handlers_see_the_client_a_trusted_proxy_names() {
        for (trusted, seen) in [
            (vec![], "127.0.0.1"),
            (vec![net("127.0.0.1")], "198.51.100.1"),
        ] {
            let (address, _stop) = start(ServeLimits {
                trusted_proxies: trusted,
                ..ServeLimits::default()
            })
            .await;
            let mut client = TcpStream::connect(address).await.unwrap();
            client
                .write_all(
                    b"GET /peer HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.1\r\n\r\n",
                )
                .await
                .unwrap();
            let answer = answer(&mut client).await;
            assert!(answer.ends_with(seen), "{answer}");
        }
    }
}
