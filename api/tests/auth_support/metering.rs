//! The service as `optics serve` builds it, over the chain tests' market, with any limiter; and
//! the budget rule checked through it: the month is charged only for fresh successful answers.
//!
//! A test crate that uses it declares `mod auth_support;`, `mod chain_support;` and
//! `#[path = "auth_support/metering.rs"] mod metering;`.

#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{Method, StatusCode};
use chrono::{DateTime, TimeZone, Utc};
use optics_api::accounts::{AccountId, Plan};
use optics_api::limits::{Limiter, PlanBudgets};
use optics_compute::time::{Clock, ManualClock};

use crate::auth_support::{
    Answer, Fixture, ScratchDir, account, bearer, calls_by_endpoint, fixture, send, sqlite_store,
    start_instant, token,
};
use crate::chain_support;

/// The chain tests' market with a generation (so answers are cached, as over the snapshot
/// store) and a count of chain reads (so a cached answer can be told from a rebuilt one).
#[derive(Debug)]
pub struct CachingMarket {
    pub inner: chain_support::MemoryMarket,
    pub chain_reads: AtomicU64,
}

impl optics_api::MarketDataReader for CachingMarket {
    fn covers(&self, ticker: &optics_api::Ticker) -> bool {
        self.inner.covers(ticker)
    }
    fn chain(&self, ticker: &optics_api::Ticker) -> Option<Arc<optics_api::market::ChainView>> {
        self.chain_reads.fetch_add(1, Ordering::SeqCst);
        self.inner.chain(ticker)
    }
    fn exposures(
        &self,
        ticker: &optics_api::Ticker,
    ) -> Option<Arc<optics_api::market::ExposureView>> {
        self.inner.exposures(ticker)
    }
    fn flow(&self, ticker: &optics_api::Ticker) -> Option<Arc<optics_api::market::FlowView>> {
        self.inner.flow(ticker)
    }
    fn coverage(&self) -> Arc<optics_api::market::Coverage> {
        self.inner.coverage()
    }
    fn chain_at_time<'a>(
        &'a self,
        ticker: &'a optics_api::Ticker,
        trade_date: chrono::NaiveDate,
        expiration: chrono::NaiveDate,
    ) -> optics_api::ReadFuture<
        'a,
        Result<Option<Vec<optics_schemas::ChainRow>>, optics_api::ApiError>,
    > {
        self.inner.chain_at_time(ticker, trade_date, expiration)
    }
    fn generation(&self) -> Option<u64> {
        Some(1)
    }
}

/// The production service (`auth::service_router`: every real handler behind the route gate,
/// plus the account area) over the chain tests' market, with the data on `market_clock` and
/// accounts and limits on a manual real clock.
pub struct Service {
    pub router: axum::Router,
    pub fx: Fixture,
    pub market: Arc<CachingMarket>,
}

/// [`Service`] over a fresh SQLite store and `limiter`.
pub fn service_with(
    limiter: Arc<dyn Limiter>,
    market_clock: Arc<dyn Clock>,
) -> (Service, ScratchDir) {
    let (store, dir) = sqlite_store();
    let real = Arc::new(ManualClock::new(start_instant()));
    let fx = fixture(store, limiter, real, PlanBudgets::default());
    let market = Arc::new(CachingMarket {
        inner: chain_support::MemoryMarket::spy(),
        chain_reads: AtomicU64::new(0),
    });
    let state = optics_api::AppState::new(market_clock).with_market_data(market.clone());
    let router = optics_api::auth::service_router(state, fx.access.clone());
    (Service { router, fx, market }, dir)
}

/// Friday 2026-11-20 15:00 UTC, the session the chain tests' market holds.
pub fn market_morning() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap()
}

/// A market clock standing at [`market_morning`] (so cached answers stay in their second).
pub fn fixed_market_clock() -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(market_morning()))
}

/// A GET of `path` with an optional `Authorization` value.
pub fn get_path(path: &str, authorization: Option<&str>) -> axum::http::Request<axum::body::Body> {
    let mut builder = axum::http::Request::builder().uri(path);
    if let Some(value) = authorization {
        builder = builder.header("authorization", value);
    }
    builder.body(axum::body::Body::empty()).unwrap()
}

/// The answer of [`Service`] to a GET of `path` with the `Authorization` value `authorization`.
pub async fn get_as(svc: &Service, path: &str, authorization: &str) -> Answer {
    send(&svc.router, get_path(path, Some(authorization))).await
}

/// The answer to `path` asked again as `authorization`, asserted to come from the response
/// cache: a 200 with the body of `first`, and the market's chain reads still at `reads`.
pub async fn again_from_the_cache(
    svc: &Service,
    path: &str,
    authorization: &str,
    first: &Answer,
    reads: u64,
) -> Answer {
    let again = get_as(svc, path, authorization).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body, first.body);
    assert_eq!(
        svc.market.chain_reads.load(Ordering::SeqCst),
        reads,
        "answered from the cache"
    );
    again
}

/// A POST of a JSON `body` to `path`.
pub fn post_json(
    path: &str,
    authorization: &str,
    body: &str,
) -> axum::http::Request<axum::body::Body> {
    axum::http::Request::builder()
        .method(Method::POST)
        .uri(path)
        .header("authorization", authorization)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap()
}

/// The five quota headers of an answer: limit and remaining of the minute, of the hour, and
/// the budget left.
pub fn quota_headers(answer: &Answer) -> [u64; 5] {
    [
        answer.header_u64("x-ratelimit-limit-minute"),
        answer.header_u64("x-ratelimit-remaining-minute"),
        answer.header_u64("x-ratelimit-limit-hour"),
        answer.header_u64("x-ratelimit-remaining-hour"),
        answer.header_u64("x-monthly-budget-remaining"),
    ]
}

/// The budget rule through the production router over `limiter` (fresh; default limits): a
/// fresh 2xx answer spends its cost; the same answer served from the response cache, a 404 and
/// 400s spend nothing, though every one of them counts in the minute and the hour; the usage
/// report lists only the charged calls, and the limiter's month agrees.
pub async fn only_fresh_successes_spend_the_budget(limiter: Arc<dyn Limiter>) {
    let (svc, _dir) = service_with(limiter.clone(), fixed_market_clock());
    let id: AccountId = account(&svc.fx, "charged@example.com", Plan::Pro).await;
    let issued = token(&svc.fx, id, None).await;
    let header = bearer(&issued);
    let full = 10_000u64;
    let mut requests = 0u64;
    let mut expect = |answer: &Answer, spent: u64, what: &str| {
        requests += 1;
        assert_eq!(
            quota_headers(answer),
            [60, 60 - requests, 1_000, 1_000 - requests, full - spent],
            "{what}: {}",
            String::from_utf8_lossy(&answer.body)
        );
    };

    // A fresh 200 of a one-unit endpoint: charged.
    let fresh = get_as(&svc, "/api/mcp/data/chain/SPY", &header).await;
    assert_eq!(fresh.status, StatusCode::OK);
    expect(&fresh, 1, "fresh chain");
    let reads = svc.market.chain_reads.load(Ordering::SeqCst);

    // The same request in the same second: served from the response cache, nothing spent.
    let cached =
        again_from_the_cache(&svc, "/api/mcp/data/chain/SPY", &header, &fresh, reads).await;
    expect(&cached, 1, "cached chain");

    // Errors spend nothing: a ticker outside the coverage (404), a parameter that is not a
    // whole number (400), a POST body of the wrong shape (400).
    let missing = get_as(&svc, "/api/mcp/data/chain/NOPE", &header).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    expect(&missing, 1, "404");
    let bad_query = get_as(&svc, "/api/mcp/data/chain/SPY?strikes_around=abc", &header).await;
    assert_eq!(bad_query.status, StatusCode::BAD_REQUEST);
    expect(&bad_query, 1, "400 on a query");
    let bad_body = send(
        &svc.router,
        post_json("/api/mcp/data/pop", &header, "{\"legs\": 5}"),
    )
    .await;
    assert_eq!(bad_body.status, StatusCode::BAD_REQUEST);
    expect(&bad_body, 1, "400 on a body");

    // A fresh 200 of a per-symbol endpoint: one unit per distinct symbol asked for.
    let batch = get_as(
        &svc,
        "/api/mcp/data/batch/expected-move?tickers=SPY,AAPL",
        &header,
    )
    .await;
    assert_eq!(
        batch.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&batch.body)
    );
    expect(&batch, 3, "fresh batch of two symbols");

    // The report: the two charged calls and itself (free), 3 units; the limiter agrees.
    let usage = get_as(&svc, "/api/mcp/data/me/usage", &header).await;
    assert_eq!(usage.status, StatusCode::OK);
    expect(&usage, 3, "usage report");
    let data = usage.json()["data"].clone();
    assert_eq!(
        (data["used"].as_u64(), data["remaining"].as_u64()),
        (Some(3), Some(full - 3))
    );
    assert_eq!(data["calls_this_month"], 3);
    assert_eq!(
        data["rate_limits"]["per_minute"]["used"], 7,
        "every request counted"
    );
    let mut listed = calls_by_endpoint(&data);
    listed.sort();
    assert_eq!(
        listed,
        [
            ("GET /batch/expected-move".to_owned(), 1, 2),
            ("GET /chain/{ticker}".to_owned(), 1, 1),
            ("GET /me/usage".to_owned(), 1, 0),
        ]
    );
    let report = limiter
        .usage(&issued.info.id, id, full, svc.fx.clock.now())
        .await
        .unwrap();
    assert_eq!((report.quota.month.used, report.quota.minute.used), (3, 7));
    let mut counted: Vec<_> = report
        .by_endpoint
        .iter()
        .map(|e| (e.endpoint.clone(), e.calls, e.units))
        .collect();
    counted.sort();
    assert_eq!(counted, listed, "the report is the limiter's month");
}
