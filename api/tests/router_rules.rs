//! The cross-cutting rules on routes that use them: test handlers are mounted under real
//! registry entries with `router_with`, so they get the real paths, parameter specs, tiers and
//! layers. Each test checks one rule end to end through `oneshot`.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::NaiveDate;
use common::{friday_morning, get as get_req, state_at, with_body};
use optics_api::market::{self, ChainView, ExposureView, FlowView};
use optics_api::window::{GEX_STRIKES_PER_SIDE, WindowRequest, window_around_strike};
use optics_api::{
    ApiError, ApiJson, AppState, Endpoint, Envelope, MarketDataReader, QueryParams, RateLimit,
    ReadFuture, Ticker, Tier, ok, router_with,
};
use optics_schemas::ChainRow;
use serde::Deserialize;

/// Covers a fixed set of symbols.
#[derive(Debug)]
struct Coverage(BTreeSet<&'static str>);

impl MarketDataReader for Coverage {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.0.contains(ticker.as_str())
    }

    // The rules under test never read data.
    fn chain(&self, _: &Ticker) -> Option<Arc<ChainView>> {
        None
    }

    fn exposures(&self, _: &Ticker) -> Option<Arc<ExposureView>> {
        None
    }

    fn flow(&self, _: &Ticker) -> Option<Arc<FlowView>> {
        None
    }

    fn coverage(&self) -> Arc<market::Coverage> {
        Arc::default()
    }

    fn chain_at_time<'a>(
        &'a self,
        _: &'a Ticker,
        _: NaiveDate,
        _: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }
}

async fn chain_echo(
    ticker: Ticker,
    params: QueryParams,
) -> Result<Json<Envelope<serde_json::Value>>, ApiError> {
    let num_expirations = params.int("num_expirations")?;
    let strikes_around = params.int("strikes_around")?;
    let expiration = params.date("expiration")?;
    Ok(ok(serde_json::json!({
        "ticker": ticker,
        "num_expirations": num_expirations.value,
        "strikes_around": strikes_around.value,
        "expiration": expiration,
        "clamped": params.clamp_notices(),
    })))
}

async fn expirations_covered(
    State(state): State<AppState>,
    ticker: Ticker,
) -> Result<Json<Envelope<serde_json::Value>>, ApiError> {
    let ticker = state.covered_ticker(ticker.as_str())?;
    Ok(ok(
        serde_json::json!({ "ticker": ticker, "freshness": state.freshness() }),
    ))
}

#[derive(Debug, Deserialize)]
struct PopBody {
    stock_price: f64,
    days_to_exp: u32,
    legs: Vec<serde_json::Value>,
}

async fn pop_echo(ApiJson(body): ApiJson<PopBody>) -> Json<Envelope<serde_json::Value>> {
    ok(serde_json::json!({
        "legs": body.legs.len(),
        "stock_price": body.stock_price,
        "days_to_exp": body.days_to_exp,
    }))
}

/// Uses axum's plain extractors: the router must still answer in the envelope.
async fn plain_json(Json(body): Json<PopBody>) -> Json<Envelope<f64>> {
    ok(body.stock_price)
}

#[derive(Debug, Deserialize)]
struct SearchQuery {
    #[allow(dead_code)]
    limit: u32,
}

async fn plain_query(Query(_): Query<SearchQuery>) -> Json<Envelope<bool>> {
    ok(true)
}

async fn panics() -> Json<Envelope<()>> {
    panic!("secret panic detail /etc/optics")
}

async fn internal() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::internal(
        "reading a snapshot",
        "object store said: key s3://secret-bucket/x",
    ))
}

async fn limited() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::RateLimited {
        limit: RateLimit::PerMinute,
        retry_after_secs: 17,
    })
}

async fn budget() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::RateLimited {
        limit: RateLimit::MonthlyBudget,
        retry_after_secs: 86_400,
    })
}

async fn forbidden() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::Forbidden {
        upgrade_required: true,
        required_tier: Some(Tier::Premium),
        your_tier: Some("basic".to_owned()),
    })
}

async fn unauthorized() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::Unauthorized)
}

async fn flow_down() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::FlowUnavailable(
        "The intraday volume feed is unavailable; retry later".to_owned(),
    ))
}

async fn upstream() -> Result<Json<Envelope<()>>, ApiError> {
    Err(ApiError::upstream(
        "No two-sided quote for SPY 2026-12-18 600 C; cannot price",
    ))
}

/// Declares its query parameters, so the required ones are enforced before it runs.
async fn at_time_upstream(_params: QueryParams) -> Result<Json<Envelope<()>>, ApiError> {
    upstream().await
}

/// A gex-shaped handler: strikes 400..=800 by 5, spot 601.3, windowed per the request.
async fn gex_window(
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<serde_json::Value>>, ApiError> {
    let request = WindowRequest::from_request(&headers, &params)?;
    let strikes: Vec<f64> = (0..=80).map(|i| 400.0 + 5.0 * f64::from(i)).collect();
    let (range, window) = window_around_strike(
        &strikes,
        |k| *k,
        601.3,
        request.strikes_per_side(GEX_STRIKES_PER_SIDE),
        request.detail,
    );
    Ok(ok(serde_json::json!({
        "gex_by_strike": strikes[range],
        "spot": 601.3,
        "window": window,
        "clamped": params.clamp_notices(),
    })))
}

fn app_with(state: AppState) -> Router {
    router_with(
        state,
        vec![
            (Endpoint::Chain, get(chain_echo)),
            (Endpoint::Expirations, get(expirations_covered)),
            (Endpoint::Pop, post(pop_echo)),
            (Endpoint::AnalyzeStrategy, post(plain_json)),
            (Endpoint::Search, get(plain_query)),
            (Endpoint::Stock, get(panics)),
            (Endpoint::Skew, get(internal)),
            (Endpoint::Vix, get(limited)),
            (Endpoint::IvRank, get(budget)),
            (Endpoint::Vrp, get(forbidden)),
            (Endpoint::Monies, get(unauthorized)),
            (Endpoint::Flow, get(flow_down)),
            (Endpoint::ChainAtTime, get(at_time_upstream)),
            (Endpoint::Gex, get(gex_window)),
        ],
    )
}

fn app() -> Router {
    app_with(
        state_at(friday_morning()).with_market_data(Arc::new(Coverage(
            ["SPY", "QQQ", "BRK.B"].into_iter().collect(),
        ))),
    )
}

#[tokio::test]
async fn mounted_handlers_are_indexed_counted_and_suggested() {
    let app = app();
    let data = get_req(&app, "/api/mcp/data/", &[]).await.data();
    let slugs: Vec<&str> = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap())
        .collect();
    // Contract order. (A route names its registry row by `Endpoint`, so an unknown slug no
    // longer compiles.)
    assert_eq!(data["endpoint_count"], 18);
    assert!(slugs.contains(&"chain") && slugs.contains(&"gex"));
    let chain = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "chain")
        .unwrap();
    assert_eq!(chain["path"], "/api/mcp/data/chain/{ticker}");
    assert_eq!(chain["tier"], "basic");
    assert_eq!(
        chain["cost"],
        serde_json::json!({"units": 1, "per": "call"})
    );
    let num = chain["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "num_expirations")
        .unwrap();
    assert_eq!(
        num,
        &serde_json::json!({"name": "num_expirations", "in": "query", "required": false, "default": "1", "bounds": "1 to 10"})
    );
    // The example date placeholders are filled from the clock: the market is open on
    // 2026-11-20, so the last closed session is 2026-11-19; next month's third Friday is
    // 2026-12-18.
    let at_time = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "chain-at-time")
        .unwrap();
    assert_eq!(
        at_time["example"]["request"],
        "GET /api/mcp/data/chain-at-time/SPY?expiration=2026-12-18&trade_date=2026-11-19"
    );
    let pop = data["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "analyze-strategy")
        .unwrap();
    assert_eq!(
        pop["example"]["request"],
        "POST /api/mcp/data/analyze-strategy"
    );
    assert_eq!(pop["example"]["body"]["ticker"], "SPY");
    assert_eq!(
        pop["example"]["body"]["legs"][0]["expiration"],
        "2026-12-18"
    );

    let body = get_req(&app, "/api/mcp/data/gexx/SPY", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(
        body["did_you_mean"][0]["path"],
        "/api/mcp/data/gex/{ticker}"
    );
    assert_eq!(body["did_you_mean"][0]["docs"], "/api/mcp/data/docs#gex");
    assert_eq!(body["endpoint_count"], 18);
    let body = get_req(&app, "/api/mcp/data/chian/SPY", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(
        body["did_you_mean"][0]["path"],
        "/api/mcp/data/chain/{ticker}"
    );
    let body = get_req(&app, "/api/mcp/data/chain", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert_eq!(
        body["did_you_mean"][0]["path"],
        "/api/mcp/data/chain/{ticker}"
    );
    // An oversized path is answered without the edit distances (they grow with the product
    // of the lengths): a 404, no suggestions.
    let long = format!("/api/mcp/data/gexx/{}", "A".repeat(8_000));
    let body = get_req(&app, &long, &[]).await.error(StatusCode::NOT_FOUND);
    assert_eq!(body["did_you_mean"], serde_json::json!([]), "{body}");
    let deep = format!("/api/mcp/data/gexx{}", "/a".repeat(40));
    let body = get_req(&app, &deep, &[]).await.error(StatusCode::NOT_FOUND);
    assert_eq!(body["did_you_mean"], serde_json::json!([]), "{body}");

    // GET on a POST endpoint: 405 naming POST.
    let answer = get_req(&app, "/api/mcp/data/pop", &[]).await;
    let body = answer.error(StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(body["allowed_methods"], serde_json::json!(["POST"]));
}

#[tokio::test]
async fn query_parameters_are_typed_clamped_and_reported() {
    let app = app();
    let data = get_req(&app, "/api/mcp/data/chain/spy", &[]).await.data();
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["num_expirations"], 1);
    assert_eq!(data["strikes_around"], 20);
    assert_eq!(data["clamped"], serde_json::json!([]));

    let data = get_req(
        &app,
        "/api/mcp/data/chain/SPY?num_expirations=50&expiration=2026-12-18",
        &[],
    )
    .await
    .data();
    assert_eq!(data["num_expirations"], 10);
    assert_eq!(data["expiration"], "2026-12-18");
    assert_eq!(
        data["clamped"],
        serde_json::json!([{"parameter": "num_expirations", "requested": "50", "used": 10, "min": 1, "max": 10}])
    );

    let body = get_req(&app, "/api/mcp/data/chain/SPY?num_expirations=2.5", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "num_expirations must be a whole number, got \"2.5\""
    );

    let body = get_req(&app, "/api/mcp/data/chain/SPY?expiration=12/18/2026", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("YYYY-MM-DD"));

    let body = get_req(&app, "/api/mcp/data/chain/SPY?strike_around=5", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("Did you mean strikes_around?")
    );

    let body = get_req(&app, "/api/mcp/data/chain/SP$Y", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid ticker")
    );

    // Percent-decoded before validation.
    let data = get_req(&app, "/api/mcp/data/chain/brk%2Eb", &[])
        .await
        .data();
    assert_eq!(data["ticker"], "BRK.B");
    let body = get_req(&app, "/api/mcp/data/chain/%FF", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(!body["error"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn coverage_and_missing_market_data() {
    let app = app();
    let data = get_req(&app, "/api/mcp/data/expirations/qqq", &[])
        .await
        .data();
    assert_eq!(data["ticker"], "QQQ");
    assert_eq!(data["freshness"]["data_freshness"], "LIVE");
    assert_eq!(data["freshness"]["is_market_hours"], true);

    let body = get_req(&app, "/api/mcp/data/expirations/ZZZZ", &[])
        .await
        .error(StatusCode::NOT_FOUND);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("No options data for ticker ZZZZ"),
        "{body}"
    );

    // No market data attached: 424 with upstream true.
    let bare = app_with(state_at(friday_morning()));
    let body = get_req(&bare, "/api/mcp/data/expirations/SPY", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
}

#[tokio::test]
async fn json_bodies_and_their_rejections() {
    let app = app();
    let good = r#"{"stock_price": 600, "days_to_exp": 30, "legs": [{}, {}]}"#;
    let data = with_body(
        &app,
        Method::POST,
        "/api/mcp/data/pop",
        Some("application/json"),
        good,
    )
    .await
    .data();
    assert_eq!(data["legs"], 2);

    let cases = [
        (Some("application/json"), r#"{"stock_price": 600,"#, "parse"),
        (
            Some("application/json"),
            r#"{"stock_price": 600, "legs": []}"#,
            "days_to_exp",
        ),
        (
            Some("application/json"),
            r#"{"stock_price": "x", "days_to_exp": 1, "legs": []}"#,
            "stock_price",
        ),
        (Some("text/plain"), good, "Content-Type"),
        (None, good, "Content-Type"),
    ];
    for uri in ["/api/mcp/data/pop", "/api/mcp/data/analyze-strategy"] {
        for (content_type, body, needle) in cases {
            let answer = with_body(&app, Method::POST, uri, content_type, body).await;
            let error = answer.error(StatusCode::BAD_REQUEST);
            assert!(
                error["error"].as_str().unwrap().contains(needle),
                "{uri} {content_type:?} {body}: {error}"
            );
        }
    }
}

#[tokio::test]
async fn plain_axum_query_rejections_are_enveloped_too() {
    let app = app();
    let body = get_req(&app, "/api/mcp/data/search?limit=lots", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().unwrap().contains("limit"), "{body}");
}

#[tokio::test]
async fn panics_and_internal_errors_never_leak() {
    let app = app();
    for uri in ["/api/mcp/data/stock/SPY", "/api/mcp/data/skew/SPY"] {
        let answer = get_req(&app, uri, &[]).await;
        let body = answer.error(StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"], optics_api::error::INTERNAL_ERROR_MESSAGE);
        let text = answer.text();
        assert!(!text.contains("secret"), "{text}");
    }
    // The service keeps answering after a panic.
    get_req(&app, "/api/mcp/data/", &[]).await.data();
}

#[tokio::test]
async fn every_status_of_the_error_table() {
    let app = app();

    let answer = get_req(&app, "/api/mcp/data/vix", &[]).await;
    let body = answer.error(StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.header("retry-after"), Some("17"));
    assert_eq!(body["limit"], "per_minute");
    assert_eq!(body["retry_after_seconds"], 17);
    assert!(body.get("budget_exceeded").is_none());

    let answer = get_req(&app, "/api/mcp/data/iv-rank/SPY", &[]).await;
    let body = answer.error(StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(body["limit"], "monthly_budget");
    assert_eq!(body["budget_exceeded"], true);
    assert_eq!(answer.header("retry-after"), Some("86400"));

    let body = get_req(&app, "/api/mcp/data/vrp/SPY", &[])
        .await
        .error(StatusCode::FORBIDDEN);
    assert_eq!(body["upgrade_required"], true);
    assert_eq!(body["required_tier"], "premium");
    assert_eq!(body["your_tier"], "basic");

    get_req(&app, "/api/mcp/data/monies/SPY", &[])
        .await
        .error(StatusCode::UNAUTHORIZED);

    let body = get_req(&app, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["data_unavailable"], true);

    let body = get_req(
        &app,
        "/api/mcp/data/chain-at-time/SPY?expiration=2026-12-18&trade_date=2026-01-02",
        &[],
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    // Required parameters are enforced before the handler runs.
    let body = get_req(&app, "/api/mcp/data/chain-at-time/SPY", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("Missing required parameter")
    );
}

#[tokio::test]
async fn compact_windows_follow_the_client_header_and_overrides() {
    let app = app();
    let strikes = |data: &serde_json::Value| -> Vec<f64> {
        data["gex_by_strike"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };

    let rest = get_req(&app, "/api/mcp/data/gex/SPY", &[]).await.data();
    assert_eq!(strikes(&rest).len(), 81);
    assert_eq!(rest["window"]["detail"], "full");
    assert_eq!(rest["window"]["truncated"], false);

    let assistant = get_req(
        &app,
        "/api/mcp/data/gex/SPY",
        &[("X-Service-Client", "optics-mcp")],
    )
    .await
    .data();
    // 25 per side of 601.3 over 400..=800 by 5: 480..=600 below, 605..=725 at or above.
    let kept = strikes(&assistant);
    assert_eq!((kept.len(), kept[0], kept[49]), (50, 480.0, 725.0));
    assert_eq!(
        assistant["window"],
        serde_json::json!({"detail": "compact", "rows_total": 81, "rows_returned": 50, "truncated": true, "strikes_around": 25})
    );

    let narrow = get_req(
        &app,
        "/api/mcp/data/gex/SPY?strikes_around=2",
        &[("X-ApexVol-Client", "1")],
    )
    .await
    .data();
    assert_eq!(strikes(&narrow), [595.0, 600.0, 605.0, 610.0]);
    assert_eq!(narrow["window"]["rows_returned"], 4);

    let forced_full = get_req(
        &app,
        "/api/mcp/data/gex/SPY?detail=full&strikes_around=2",
        &[("X-Service-Client", "optics-mcp")],
    )
    .await
    .data();
    assert_eq!(strikes(&forced_full).len(), 81);

    let forced_compact = get_req(
        &app,
        "/api/mcp/data/gex/SPY?detail=COMPACT&strikes_around=1",
        &[],
    )
    .await
    .data();
    assert_eq!(strikes(&forced_compact), [600.0, 605.0]);
    assert_eq!(forced_compact["window"]["detail"], "compact");

    let clamped = get_req(
        &app,
        "/api/mcp/data/gex/SPY?detail=compact&strikes_around=100000",
        &[],
    )
    .await
    .data();
    assert_eq!(clamped["clamped"][0]["used"], 500);
    assert_eq!(strikes(&clamped).len(), 81);

    let body = get_req(&app, "/api/mcp/data/gex/SPY?detail=brief", &[])
        .await
        .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("allowed: compact, full")
    );
}
