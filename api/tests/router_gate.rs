//! The route gate (where authentication, plans and limits plug in) runs in front of every
//! registered route, sees the matched endpoint, and its refusals come out enveloped and counted.

mod common;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use common::{friday_morning, get as get_req, state_at};
use optics_api::{ApiError, Endpoint, MatchedEndpoint, RouteGate, ok, router_with};

async fn test_gate(request: Request, next: Next) -> Response {
    let Some(MatchedEndpoint(endpoint)) = request.extensions().get::<MatchedEndpoint>().copied()
    else {
        return ApiError::internal("test gate", "no matched endpoint").into_response();
    };
    if request.headers().get("x-test-pass").is_none() {
        return ApiError::Unauthorized.into_response();
    }
    let mut response = next.run(request).await;
    response.headers_mut().insert(
        "x-test-tier",
        HeaderValue::from_static(endpoint.tier.as_str()),
    );
    response
}

#[tokio::test]
async fn the_gate_guards_registered_routes_only() {
    let state = state_at(friday_morning()).with_gate(RouteGate::new(test_gate));
    let app = router_with(
        state,
        vec![(Endpoint::Chain, get(|| async { ok("chain") }))],
    );

    let body = get_req(&app, "/api/mcp/data/chain/SPY", &[])
        .await
        .error(StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "Missing or invalid API token");
    let answer = get_req(&app, "/api/mcp/data/chain/SPY", &[("x-test-pass", "1")]).await;
    assert_eq!(answer.data(), "chain");
    assert_eq!(answer.header("x-test-tier"), Some("basic"));

    let answer = get_req(&app, "/api/mcp/data/", &[("x-test-pass", "1")]).await;
    answer.data();
    assert_eq!(answer.header("x-test-tier"), Some("any"));
    get_req(&app, "/api/mcp/data", &[])
        .await
        .error(StatusCode::UNAUTHORIZED);

    // Not behind the gate: unknown paths and the operators' metrics.
    get_req(&app, "/api/mcp/data/nope", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    let metrics = get_req(&app, "/metrics", &[]).await;
    assert_eq!(metrics.status, StatusCode::OK);
    assert!(metrics.text().contains(
        r#"optics_http_requests_total{method="GET",route="/api/mcp/data/chain/{ticker}",status="401"} 1"#
    ));
}
