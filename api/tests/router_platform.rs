//! The platform routes on their own (a router with no data handlers: `router_with(state, [])`)
//! — the index, unknown paths, wrong methods, the documentation routes and /metrics — and the
//! router as the binary builds it, whose index lists exactly the mounted data handlers. Driven
//! in-process with `oneshot`.

mod common;

use axum::http::{Method, StatusCode};
use common::{friday_morning, get, state_at, with_body};
use optics_api::{router, router_with};

const PLATFORM_SLUGS: [&str; 4] = ["index", "openapi", "docs", "changelog"];

/// The router with the platform routes and no data handler.
fn platform_only(state: optics_api::AppState) -> axum::Router {
    router_with(state, Vec::new())
}

#[tokio::test]
async fn index_lists_exactly_the_mounted_endpoints() {
    let app = platform_only(state_at(friday_morning()));
    for uri in ["/api/mcp/data/", "/api/mcp/data"] {
        let data = get(&app, uri, &[]).await.data();
        assert_eq!(data["version"], "1.10");
        assert_eq!(data["base_path"], "/api/mcp/data");
        let endpoints = data["endpoints"].as_array().unwrap();
        assert_eq!(data["endpoint_count"], endpoints.len());
        let slugs: Vec<&str> = endpoints
            .iter()
            .map(|e| e["slug"].as_str().unwrap())
            .collect();
        // Only what is mounted: no data endpoint is advertised before its handler exists.
        assert_eq!(slugs, PLATFORM_SLUGS);
        assert_eq!(data["openapi"], "/api/mcp/data/openapi.json");
        assert_eq!(data["markdown"], "/api/mcp/data/docs");
        let families: Vec<(&str, u64)> = data["families"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["slug"].as_str().unwrap(),
                    f["endpoint_count"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(families, [("account-api", 1), ("platform", 3)]);
    }
}

#[tokio::test]
async fn index_entries_carry_the_facts_of_each_endpoint() {
    let app = platform_only(state_at(friday_morning()));
    let data = get(&app, "/api/mcp/data/", &[]).await.data();
    let index = &data["endpoints"][0];
    assert_eq!(index["method"], "GET");
    assert_eq!(index["path"], "/api/mcp/data/");
    assert_eq!(index["tier"], "any");
    assert_eq!(
        index["cost"],
        serde_json::json!({"units": 0, "per": "call"})
    );
    assert_eq!(index["docs"], "/api/mcp/data/docs#index");
    assert_eq!(index["example"]["request"], "GET /api/mcp/data/");
    assert_eq!(index["params"], serde_json::json!([]));
    for entry in data["endpoints"].as_array().unwrap() {
        for key in [
            "summary", "family", "tier", "docs", "example", "params", "cost",
        ] {
            assert!(!entry[key].is_null(), "{key} missing in {entry}");
        }
        // Every example works as written: request it.
        let request = entry["example"]["request"].as_str().unwrap();
        let (method, uri) = request.split_once(' ').unwrap();
        assert_eq!(method, "GET");
        let answer = get(&app, uri, &[]).await;
        assert_eq!(answer.status, StatusCode::OK, "{request}");
    }
}

#[tokio::test]
async fn unknown_paths_are_404_with_suggestions() {
    let app = platform_only(state_at(friday_morning()));
    let body = get(&app, "/api/mcp/data/doc", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "No endpoint at /api/mcp/data/doc");
    assert_eq!(body["endpoint_count"], 4);
    assert_eq!(body["docs"], "/api/mcp/data/docs");
    assert_eq!(body["index"], "/api/mcp/data/");
    let first = &body["did_you_mean"][0];
    assert_eq!(first["path"], "/api/mcp/data/docs");
    assert_eq!(first["method"], "GET");
    assert_eq!(first["docs"], "/api/mcp/data/docs#docs");

    let body = get(&app, "/api/mcp/data/openapi", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(
        body["did_you_mean"][0]["path"],
        "/api/mcp/data/openapi.json"
    );

    // An endpoint of the contract whose handler is not mounted is not served.
    let body = get(&app, "/api/mcp/data/chain/SPY", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "No endpoint at /api/mcp/data/chain/SPY");
    // Nothing near it is mounted: no noise.
    assert_eq!(body["did_you_mean"], serde_json::json!([]));

    // Outside the prefix: the same envelope.
    let body = get(&app, "/nowhere", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "No endpoint at /nowhere");

    // A very long path is not echoed whole.
    let long = format!("/api/mcp/data/{}", "x".repeat(5000));
    let body = get(&app, &long, &[]).await.error(StatusCode::NOT_FOUND);
    assert!(body["error"].as_str().unwrap().len() < 400);
}

#[tokio::test]
async fn wrong_method_is_405_in_the_envelope() {
    let app = platform_only(state_at(friday_morning()));
    let answer = with_body(
        &app,
        Method::POST,
        "/api/mcp/data/docs",
        Some("application/json"),
        "{}",
    )
    .await;
    let body = answer.error(StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        body["error"],
        "Method POST is not allowed on /api/mcp/data/docs; allowed: GET, HEAD"
    );
    assert_eq!(body["allowed_methods"], serde_json::json!(["GET", "HEAD"]));
    assert_eq!(answer.header("allow"), Some("GET, HEAD"));

    let answer = with_body(&app, Method::DELETE, "/api/mcp/data/", None, "").await;
    answer.error(StatusCode::METHOD_NOT_ALLOWED);
    let answer = with_body(&app, Method::PUT, "/metrics", None, "").await;
    answer.error(StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn docs_and_changelog_are_served_as_markdown() {
    let app = platform_only(state_at(friday_morning()));
    let docs = get(&app, "/api/mcp/data/docs", &[]).await;
    assert_eq!(docs.status, StatusCode::OK);
    assert_eq!(
        docs.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    let text = docs.text();
    assert!(text.starts_with("# optics API reference"));
    assert!(text.contains("## Endpoints served by this build"));
    assert!(text.contains("4 endpoints are served"));
    // The anchors the index links to.
    for slug in PLATFORM_SLUGS {
        assert!(text.contains(&format!("<a id=\"{slug}\"></a>")), "{slug}");
    }
    assert!(text.contains("<a id=\"family-platform\"></a>"));
    // Nothing unmounted is documented as served.
    assert!(!text.contains("<a id=\"chain\"></a>"));

    let changelog = get(&app, "/api/mcp/data/changelog", &[]).await;
    assert_eq!(changelog.status, StatusCode::OK);
    let text = changelog.text();
    let versions: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(versions.first(), Some(&"1.10"), "newest first");
    assert!(versions.contains(&"1.0"));
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_status() {
    let app = platform_only(state_at(friday_morning()));
    get(&app, "/api/mcp/data/", &[]).await;
    get(&app, "/api/mcp/data/", &[]).await;
    get(&app, "/api/mcp/data/nope/SPY", &[]).await;
    get(&app, "/api/mcp/data/nope/QQQ", &[]).await;
    let metrics = get(&app, "/metrics", &[]).await;
    assert_eq!(metrics.status, StatusCode::OK);
    assert!(
        metrics
            .header("content-type")
            .is_some_and(|ct| ct.starts_with("application/openmetrics-text"))
    );
    let text = metrics.text();
    assert!(
        text.contains(
            r#"optics_http_requests_total{method="GET",route="/api/mcp/data/",status="200"} 2"#
        ),
        "{text}"
    );
    // Unknown paths share one series: a client cannot create series at will.
    assert!(
        text.contains(
            r#"optics_http_requests_total{method="GET",route="unmatched",status="404"} 2"#
        ),
        "{text}"
    );
    assert!(text.contains("optics_http_request_duration_seconds_bucket"));
    assert!(!text.contains("SPY"));
}

#[tokio::test]
async fn snapshot_age_is_measured_on_the_injected_clock() {
    let state = state_at(friday_morning());
    state
        .metrics()
        .set_snapshot_published_at("chain", friday_morning() - chrono::TimeDelta::seconds(42));
    let app = platform_only(state);
    let text = get(&app, "/metrics", &[]).await.text();
    assert!(
        text.contains(r#"optics_snapshot_age_seconds{dataset="chain"} 42.0"#),
        "{text}"
    );
}

#[tokio::test]
async fn the_full_router_lists_the_platform_and_every_mounted_data_route() {
    let app = router(state_at(friday_morning()));
    let data = get(&app, "/api/mcp/data/", &[]).await.data();
    let listed: std::collections::BTreeSet<String> = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap().to_owned())
        .collect();
    let mounted: std::collections::BTreeSet<String> = PLATFORM_SLUGS
        .iter()
        .copied()
        .chain(
            optics_api::handlers::data_routes()
                .into_iter()
                .map(|(endpoint, _)| endpoint.slug()),
        )
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, mounted);
    assert_eq!(data["endpoint_count"], mounted.len());
    // Every listed endpoint is routed: its example path never answers 404 or 405, even on a
    // state with no market data and no token gate (data routes then answer an honest error).
    for entry in data["endpoints"].as_array().unwrap() {
        let request = entry["example"]["request"].as_str().unwrap();
        let (method, uri) = request.split_once(' ').unwrap();
        let answer = if method == "GET" {
            get(&app, uri, &[]).await
        } else {
            let body = entry["example"]["body"].to_string();
            with_body(&app, Method::POST, uri, Some("application/json"), &body).await
        };
        assert!(
            answer.status != StatusCode::NOT_FOUND
                && answer.status != StatusCode::METHOD_NOT_ALLOWED
                && answer.status != StatusCode::INTERNAL_SERVER_ERROR,
            "{request}: {} {}",
            answer.status,
            answer.text()
        );
    }
    // The chain route of the contract is now served, so it is no longer a 404.
    let answer = get(&app, "/api/mcp/data/chain/SPY", &[]).await;
    assert_ne!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text());
}

#[tokio::test]
async fn the_reference_lists_response_fields_from_the_payload_types() {
    let text = get(
        &router(state_at(friday_morning())),
        "/api/mcp/data/docs",
        &[],
    )
    .await
    .text();
    let section = |slug: &str| -> String {
        let start = text
            .find(&format!("<a id=\"{slug}\"></a>"))
            .unwrap_or_else(|| panic!("no section {slug}"));
        let rest = &text[start..];
        let end = rest[1..].find("<a id=").map_or(rest.len(), |i| i + 1);
        rest[..end].to_owned()
    };
    let chain = section("chain");
    for row in [
        "| `strike_window.truncated` | boolean |",
        "| `chains.<key>[].Call Bid` | number or null |",
        "| `chains.<key>[].IV Call` | number or null |",
        "| `chains.<key>[].Rho Put` | number or null |",
        "| `chains.<key>[].Put OI` | integer or null |",
        "| `priced_on_forward` | boolean |",
        "| `is_market_hours` | boolean |",
        "| `data_freshness` | one of LIVE, EOD |",
        "| `expirations` | list of date |",
    ] {
        assert!(chain.contains(row), "{row} missing from\n{chain}");
    }
    // Descriptions come from the doc comments.
    assert!(chain.contains("Implied volatility of the call's mid, decimal."));
    let stock = section("stock");
    assert!(
        stock.contains("| `company_name` | string or null |"),
        "{stock}"
    );
    assert!(
        stock.contains("| `volume_date` | date or null |"),
        "{stock}"
    );
    assert!(stock.contains("| `industry` | string or null |"), "{stock}");
    assert!(section("options-by-delta").contains("| `iv_pct` | number |"));
    assert!(section("index").contains("| `endpoints[].slug` | string |"));
}

#[tokio::test]
async fn the_reference_describes_the_access_rules_the_binary_enforces() {
    let text = get(
        &router(state_at(friday_morning())),
        "/api/mcp/data/docs",
        &[],
    )
    .await
    .text();
    assert!(!text.contains("not enforced"), "stale wording");
    for fact in [
        "Authorization: Bearer",
        "401",
        "403",
        "upgrade_required",
        "X-RateLimit-Limit-Minute",
        "X-RateLimit-Remaining-Minute",
        "X-RateLimit-Limit-Hour",
        "X-RateLimit-Remaining-Hour",
        "X-Monthly-Budget-Remaining",
        "Retry-After",
        "budget_exceeded",
    ] {
        assert!(text.contains(fact), "{fact} missing");
    }
}

/// The dashboard at `/`: the page and every asset it names are served from the binary with
/// their types and the content security policy, uPlot's licence beside it, and every data read
/// its script makes names a registered endpoint with parameters that endpoint takes (an unknown
/// parameter would be a 400 in the browser).
#[tokio::test]
async fn the_dashboard_and_its_assets_are_served_and_read_real_endpoints() {
    use tower::ServiceExt;
    let app = optics_api::dashboard::dashboard_router::<()>();
    let fetch = |uri: &'static str| {
        let app = app.clone();
        async move {
            let response = app
                .oneshot(
                    axum::http::Request::get(uri)
                        .body(axum::body::Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            let status = response.status();
            let headers = response.headers().clone();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            (status, headers, String::from_utf8(body.to_vec()).unwrap())
        }
    };
    let (status, headers, page) = fetch("/").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    for directive in [
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    // No inline script: everything the page runs is a file of this origin.
    assert!(!page.contains("<script>"), "inline script in the page");
    let mut assets: Vec<&str> = page
        .split(['"', '\''])
        .filter(|piece| piece.starts_with("/dashboard/"))
        .collect();
    assets.sort_unstable();
    assets.dedup();
    assert_eq!(
        assets,
        [
            "/dashboard/app.css",
            "/dashboard/app.js",
            "/dashboard/uPlot-LICENSE.txt",
            "/dashboard/uPlot.iife.min.js",
            "/dashboard/uPlot.min.css"
        ]
    );
    let mut script = String::new();
    for asset in assets {
        let uri: &'static str = Box::leak(asset.to_owned().into_boxed_str());
        let (status, headers, body) = fetch(uri).await;
        assert_eq!(status, StatusCode::OK, "{asset}");
        let kind = headers["content-type"].to_str().unwrap();
        let expected = match asset.rsplit('.').next().unwrap() {
            "js" => "text/javascript",
            "css" => "text/css",
            _ => "text/plain",
        };
        assert!(kind.starts_with(expected), "{asset}: {kind}");
        assert!(!body.is_empty(), "{asset}");
        if asset.ends_with("LICENSE.txt") {
            assert!(body.contains("The MIT License"), "{body}");
        }
        if asset == "/dashboard/app.js" {
            script = body;
        }
    }

    // Every `data(`/path?…`)` of the script: a registered endpoint and its own parameters.
    let reads: Vec<&str> = script
        .split("data(`")
        .skip(1)
        .filter_map(|piece| piece.split_once('`').map(|(path, _)| path))
        .chain(
            script
                .split("data(\"")
                .skip(1)
                .filter_map(|piece| piece.split_once('"').map(|(path, _)| path)),
        )
        .collect();
    assert!(reads.len() >= 10, "{reads:?}");
    for read in reads {
        let (path, query) = read.split_once('?').unwrap_or((read, ""));
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let spec = optics_api::registry::all_endpoints()
            .find(|spec| {
                let template: Vec<&str> = spec.path.trim_start_matches('/').split('/').collect();
                template.len() == segments.len()
                    && template
                        .iter()
                        .zip(&segments)
                        .all(|(t, s)| t == s || (t.starts_with('{') && s.starts_with("${")))
            })
            .unwrap_or_else(|| panic!("the dashboard reads {path}, which is no endpoint"));
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let name = pair.split('=').next().unwrap();
            assert!(
                spec.params.iter().any(|p| p.name == name),
                "the dashboard sends {name} to {}, which does not take it",
                spec.path
            );
        }
    }
}
