//! What a tool call costs next to the REST call it makes: `get_gex` for SPY (compact window,
//! as an assistant client gets it) against `GET /gex/SPY` with `X-Service-Client`, over the
//! load benchmark's in-memory SPY-sized market (8,100 contracts), in the same run.
//!
//! Two pairs, each timed as the median of `OPTICS_BENCH_CALLS` (default 2,000) sequential
//! calls after a warm-up:
//! - **in process**: the REST route through the router (`oneshot`, body collected) against the
//!   tool call through `OpticsTools::call` with its result serialised as the JSON-RPC result a
//!   transport writes;
//! - **over loopback**: `GET /api/mcp/data/gex/SPY` against `POST /mcp-server` (`tools/call`,
//!   stateless streamable HTTP, JSON response), both on one keep-alive HTTP/1 connection.
//!
//! Figures print; nothing asserts on time. Only loopback is used.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Method, Request};
use chrono::TimeZone;
use http_body_util::Full;
use optics_api::{AppState, router};
use optics_compute::time::ManualClock;
use optics_mcp::OpticsTools;
use optics_mcp::invoke::{SERVICE_CLIENT, SERVICE_CLIENT_HEADER};
use optics_tests::bench::median;
use serde_json::json;
use tokio::net::TcpListener;
use tower::ServiceExt;

#[path = "../../benches/support/loopback.rs"]
mod loopback;
#[allow(dead_code)]
#[path = "../../benches/support/market.rs"]
mod market;
use market::BenchMarket;

const GEX_PATH: &str = "/api/mcp/data/gex/SPY";

fn calls() -> usize {
    std::env::var("OPTICS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(2_000)
}

/// The median of `calls` sequential calls after `calls / 10` warm-up calls, and the size of
/// the last answer in bytes.
async fn median_of(calls: usize, mut call: impl AsyncFnMut() -> usize) -> (Duration, usize) {
    let mut bytes = 0;
    for _ in 0..calls / 10 {
        bytes = call().await;
    }
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        bytes = call().await;
        samples.push(started.elapsed());
    }
    (median(samples), bytes)
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

fn report(label: &str, rest: (Duration, usize), tool: (Duration, usize)) {
    println!(
        "{label}: REST GET /gex/SPY median {:.1} µs ({} B) · tool get_gex median {:.1} µs ({} B) \
         · tool/REST {:.2}×",
        rest.0.as_secs_f64() * 1e6,
        rest.1,
        tool.0.as_secs_f64() * 1e6,
        tool.1,
        tool.0.as_secs_f64() / rest.0.as_secs_f64()
    );
}

fn main() {
    let calls = calls();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async move {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 11, 20, 15, 0, 0)
            .unwrap();
        let app = router(
            AppState::new(Arc::new(ManualClock::new(now)))
                .with_market_data(Arc::new(BenchMarket::spy(now))),
        );
        let tools = OpticsTools::per_request(app.clone());

        // In process.
        let rest = median_of(calls, async || {
            let request = Request::get(GEX_PATH)
                .header(SERVICE_CLIENT_HEADER, SERVICE_CLIENT)
                .body(Body::empty())
                .expect("request");
            let response = app.clone().oneshot(request).await.expect("response");
            assert!(response.status().is_success());
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .expect("body")
                .len()
        })
        .await;
        let tool = median_of(calls, async || {
            let arguments = json!({"ticker": "SPY"}).as_object().cloned();
            let result = tools
                .call("get_gex", arguments, None)
                .await
                .expect("tool call");
            assert_ne!(result.is_error, Some(true), "{:?}", result.content);
            serde_json::to_vec(&result).expect("serialise").len()
        })
        .await;
        report("in process    ", rest, tool);

        // Over loopback: the API and the tool server on one listener.
        let served = app.clone().merge(axum::Router::new().route_service(
            optics_mcp::MCP_PATH,
            optics_mcp::server::http_service(app.clone(), vec!["127.0.0.1".into()]),
        ));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, served).await });
        let mut rest_sender: Sender = loopback::connect(addr).await;
        let mut tool_sender: Sender = loopback::connect(addr).await;
        let rest = median_of(calls, async || {
            let request = Request::get(GEX_PATH)
                .header("host", "127.0.0.1")
                .header(SERVICE_CLIENT_HEADER, SERVICE_CLIENT)
                .body(Full::new(Bytes::new()))
                .expect("request");
            loopback::send(&mut rest_sender, request, "rest").await
        })
        .await;
        let call = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "get_gex", "arguments": {"ticker": "SPY"}}
        })
        .to_string();
        let tool = median_of(calls, async || {
            let request = Request::builder()
                .method(Method::POST)
                .uri(optics_mcp::MCP_PATH)
                .header("host", "127.0.0.1")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-06-18")
                .body(Full::new(Bytes::from(call.clone())))
                .expect("request");
            loopback::send(&mut tool_sender, request, "tool").await
        })
        .await;
        report("over loopback ", rest, tool);
    });
}
