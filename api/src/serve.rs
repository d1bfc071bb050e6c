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

use std::future::Future;
use std::net::SocketAddr;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Open connections at most.
    pub max_connections: usize,
    /// The longest a client may take to send a request's headers.
    pub header_read_timeout: Duration,
    /// The longest an answer may take to build.
    pub request_timeout: Duration,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
        }
    }
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
        let app = Router::new().route("/", get(|| async { "ok" })).route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
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
}
