//! Freshness across the exposure, Greeks and flow families: every payload labels the session of
//! the data it serves (the chain's or the exposures' trade date), not the clock's. Friday's data
//! served on Monday morning, market open, is Friday's `EOD`; the same data during Friday's
//! session is `LIVE`. `/flow` alone still refuses an earlier session's flow while the market is
//! open (503, decided by the clock), and `/smart-money`, which reads it, answers 424.

mod common;
mod exposure_support;

use axum::http::StatusCode;
use chrono::{DateTime, TimeZone, Utc};
use common::get;
use exposure_support::{MemoryMarket, app, market, quoted_at, trade_date};
use serde_json::Value;

/// Endpoints whose payload carries the flattened freshness block.
const FLAT_FRESHNESS: [&str; 10] = [
    "/gex/SPY",
    "/greeks-exposure/SPY",
    "/zero-dte/SPY",
    "/max-pain/SPY",
    "/expected-move/SPY",
    "/greeks-heatmap/SPY",
    "/third-order-greeks/SPY",
    "/volume-profile/SPY",
    "/cross-index-gex?tickers=SPY",
    "/batch/gex?tickers=SPY",
];

/// The router over one synthetic SPY market (its data is of [`trade_date`]) at `now`.
fn spy_at(now: DateTime<Utc>) -> axum::Router {
    app(
        MemoryMarket::default().with(&market("SPY", 100.0, 41, 7)),
        now,
    )
}

/// The `data` of a successful answer, or of its SPY entry for the batch endpoints.
async fn payload(app: &axum::Router, path: &str) -> Value {
    let data = get(app, &format!("/api/mcp/data{path}"), &[]).await.data();
    if path.contains("tickers=") {
        let inner = if path.starts_with("/cross-index-gex") {
            &data["indices"]["SPY"]
        } else {
            &data["results"]["SPY"]
        };
        assert!(inner.is_object(), "{path}: no SPY entry in {data}");
        return inner.clone();
    }
    data
}

/// Asserts the freshness of `data` is `expected` (`LIVE` or `EOD`) for the data's session, the
/// market being open or not as `open` says.
fn assert_freshness(path: &str, data: &Value, expected: &str, open: bool) {
    let session = trade_date().to_string();
    assert_eq!(data["is_market_hours"], open, "{path}: {data}");
    assert_eq!(data["data_freshness"], expected, "{path}");
    assert_eq!(data["trade_date"], session.as_str(), "{path}");
    let message = data["message"].as_str().unwrap_or_default();
    assert!(message.contains(&session), "{path}: {message}");
    assert_eq!(
        message.contains("live data"),
        expected == "LIVE",
        "{path}: {message}"
    );
}

#[tokio::test]
async fn payloads_label_the_session_of_their_data_not_the_clocks() {
    // Friday 2026-11-20, two minutes after the fixtures' quotes: the data's session is open.
    let friday = quoted_at() + chrono::TimeDelta::minutes(2);
    // Monday 2026-11-23 10:00 New York: open, but the data is still Friday's.
    let monday = Utc.with_ymd_and_hms(2026, 11, 23, 15, 0, 0).unwrap();
    // Tuesday 2026-11-24 08:00 New York: not open yet, and Monday's close never arrived.
    let tuesday = Utc.with_ymd_and_hms(2026, 11, 24, 13, 0, 0).unwrap();
    let (live, open_stale, closed_stale) = (spy_at(friday), spy_at(monday), spy_at(tuesday));

    for path in FLAT_FRESHNESS {
        assert_freshness(path, &payload(&live, path).await, "LIVE", true);
        let data = payload(&open_stale, path).await;
        assert_freshness(path, &data, "EOD", true);
        let message = data["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("Market open") && message.contains("2026-11-23"),
            "{path}: {message}"
        );
    }
    // Charm carries only the status.
    let charm = "/charm/SPY";
    assert_eq!(payload(&live, charm).await["data_status"], "LIVE");
    assert_eq!(payload(&open_stale, charm).await["data_status"], "EOD");

    // Flow during Monday's session: Friday's flow is not current, by the clock.
    get(&open_stale, "/api/mcp/data/flow/SPY", &[])
        .await
        .error(StatusCode::SERVICE_UNAVAILABLE);
    get(&open_stale, "/api/mcp/data/smart-money/SPY", &[])
        .await
        .error(StatusCode::FAILED_DEPENDENCY);
    for path in ["/flow/SPY", "/smart-money/SPY"] {
        assert_freshness(path, &payload(&live, path).await, "LIVE", true);
        // Closed, the earlier session's flow is served as what it is.
        let data = payload(&closed_stale, path).await;
        assert_freshness(path, &data, "EOD", false);
        let message = data["message"].as_str().unwrap_or_default();
        assert!(message.contains("2026-11-23"), "{path}: {message}");
    }
}
