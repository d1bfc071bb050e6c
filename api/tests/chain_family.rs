//! The chain family through the real router (`oneshot`) on an in-memory market
//! ([`chain_support::MemoryMarket`]): every field checked against the hand-built rows or a
//! value recomputed here.

mod chain_support;
mod common;

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use chain_support::{
    MemoryMarket, ONE_SIDED_CALL_STRIKE, SPOT, SPX_PAST_FORWARD, SPX_SPOT, UNLISTED_PUT_STRIKE,
    expirations, share_volumes, spx_expirations, spx_rows, spy_rows,
};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use common::{friday_morning, get, state_at};
use optics_api::router;
use optics_schemas::ChainRow;
use serde_json::Value;

const PREFIX: &str = "/api/mcp/data";

fn app_at(at: DateTime<Utc>) -> Router {
    router(state_at(at).with_market_data(Arc::new(MemoryMarket::spy())))
}

fn app() -> Router {
    app_at(friday_morning())
}

async fn fetch(app: &Router, path: &str) -> Value {
    get(app, &format!("{PREFIX}{path}"), &[]).await.data()
}

async fn error(app: &Router, path: &str, status: StatusCode) -> Value {
    get(app, &format!("{PREFIX}{path}"), &[])
        .await
        .error(status)
}

/// The `error` message of an error envelope.
fn message_of(body: &Value) -> &str {
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message in {body}"))
}

/// The error message of `path`, asserting the envelope with `status`.
async fn error_message(app: &Router, path: &str, status: StatusCode) -> String {
    message_of(&error(app, path, status).await).to_owned()
}

fn close(a: f64, b: &Value) -> bool {
    b.as_f64()
        .is_some_and(|b| (a - b).abs() <= 1e-12 * a.abs().max(1.0))
}

/// The keys spec 2.4 names, plus the ones the brief adds.
const ROW_KEYS: [&str; 25] = [
    "Strike",
    "Call Bid",
    "Call Ask",
    "Put Bid",
    "Put Ask",
    "Delta Call",
    "Delta Put",
    "Gamma Call",
    "Gamma Put",
    "Theta Call",
    "Theta Put",
    "Vega Call",
    "Vega Put",
    "Epsilon Call",
    "Epsilon Put",
    "Extrinsic Call",
    "Extrinsic Put",
    "IV Call",
    "IV Put",
    "Rho Call",
    "Rho Put",
    "Call Volume",
    "Put Volume",
    "Call OI",
    "Put OI",
];

/// Asserts that a payload row carries exactly the values of `row`.
fn assert_row_matches(json: &Value, row: &ChainRow) {
    for key in ROW_KEYS {
        assert!(json.get(key).is_some(), "row lacks {key}: {json}");
    }
    let num = |v: Option<f64>| v.map_or(Value::Null, Value::from);
    let int = |v: Option<u64>| v.map_or(Value::Null, Value::from);
    let (c, p) = (&row.call, &row.put);
    let expected = [
        ("Strike", Value::from(row.strike)),
        ("Call Bid", num(c.bid)),
        ("Call Ask", num(c.ask)),
        ("Call Mid", num(c.mid)),
        ("Put Bid", num(p.bid)),
        ("Put Ask", num(p.ask)),
        ("Put Mid", num(p.mid)),
        ("IV Call", num(c.iv)),
        ("IV Put", num(p.iv)),
        ("Delta Call", num(c.greeks.delta)),
        ("Delta Put", num(p.greeks.delta)),
        ("Gamma Call", num(c.greeks.gamma)),
        ("Gamma Put", num(p.greeks.gamma)),
        ("Theta Call", num(c.greeks.theta)),
        ("Theta Put", num(p.greeks.theta)),
        ("Vega Call", num(c.greeks.vega)),
        ("Vega Put", num(p.greeks.vega)),
        ("Rho Call", num(c.greeks.rho)),
        ("Rho Put", num(p.greeks.rho)),
        ("Epsilon Call", num(c.greeks.epsilon)),
        ("Epsilon Put", num(p.greeks.epsilon)),
        ("Extrinsic Call", num(c.extrinsic)),
        ("Extrinsic Put", num(p.extrinsic)),
        ("Call Volume", int(c.volume)),
        ("Put Volume", int(p.volume)),
        ("Call OI", int(c.open_interest)),
        ("Put OI", int(p.open_interest)),
    ];
    for (key, value) in expected {
        assert_eq!(json[key], value, "{key} at strike {}", row.strike);
    }
}

fn spy_rows_of(expiration: NaiveDate) -> Vec<ChainRow> {
    spy_rows()
        .into_iter()
        .filter(|r| r.expiration == expiration)
        .collect()
}

/// The strikes a window of `n` per side around `centre` keeps, recomputed from the strikes.
fn window_strikes(rows: &[ChainRow], centre: f64, n: usize) -> Vec<f64> {
    let below: Vec<f64> = rows
        .iter()
        .map(|r| r.strike)
        .filter(|k| *k < centre)
        .collect();
    let above: Vec<f64> = rows
        .iter()
        .map(|r| r.strike)
        .filter(|k| *k >= centre)
        .collect();
    let mut kept: Vec<f64> = below[below.len().saturating_sub(n)..].to_vec();
    kept.extend(above.iter().take(n));
    kept
}

fn strikes_of(rows: &Value) -> Vec<f64> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r["Strike"].as_f64().unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// /expirations

#[tokio::test]
async fn expirations_lists_the_chain_dates_nearest_first() {
    let data = fetch(&app(), "/expirations/spy").await;
    let listed: Vec<String> = expirations()
        .iter()
        .map(|(d, _, _)| d.to_string())
        .collect();
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["expirations"], serde_json::json!(listed));
    assert_eq!(data["count"], 3);
    let dtes: Vec<i64> = data["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["dte"].as_i64().unwrap())
        .collect();
    assert_eq!(dtes, [0, 7, 28]);
    assert_eq!(data["details"][2]["settlements"], serde_json::json!(["PM"]));
    assert_eq!(data["trade_date"], "2026-11-20");
    // Friday 10:00 New York and the chain is that session's.
    assert_eq!(data["data_type"], "LIVE");
    assert_eq!(data["freshness"]["is_market_hours"], true);
}

#[tokio::test]
async fn a_chain_from_an_earlier_session_is_end_of_day_even_while_open() {
    // Monday 2026-11-23 10:00 New York: open, but the chain is Friday's.
    let monday = Utc.with_ymd_and_hms(2026, 11, 23, 15, 0, 0).unwrap();
    let app = app_at(monday);
    for path in [
        "/chain/SPY",
        "/expirations/SPY",
        "/stock/SPY",
        "/options-by-delta/SPY",
    ] {
        let data = fetch(&app, path).await;
        // The market is open, but nothing here is live: the rows are Friday's close.
        assert_eq!(data["is_market_hours"], true, "{path}");
        assert_eq!(data["data_freshness"], "EOD", "{path}");
        assert_eq!(data["data_type"], "EOD", "{path}");
        let message = data["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("2026-11-20") && !message.contains("live data"),
            "{path}: {message}"
        );
    }
    for path in ["/chain/SPY", "/expirations/SPY", "/stock/SPY"] {
        let data = fetch(&app, path).await;
        assert_eq!(data["freshness"]["data_freshness"], "EOD", "{path}");
        assert_eq!(data["freshness"]["trade_date"], "2026-11-20", "{path}");
        assert_eq!(data["freshness"]["message"], data["message"], "{path}");
    }
    // Saturday: closed, and Friday's close is the session expected then.
    let saturday = Utc.with_ymd_and_hms(2026, 11, 21, 15, 0, 0).unwrap();
    let data = fetch(&app_at(saturday), "/expirations/SPY").await;
    assert_eq!(data["data_type"], "EOD");
    assert_eq!(data["data_freshness"], "EOD");
    assert_eq!(data["freshness"]["trade_date"], "2026-11-20");
}

#[tokio::test]
async fn ticker_errors_follow_the_family_rules() {
    let app = app();
    // Malformed, uncovered, covered without a chain.
    error(&app, "/expirations/SP%20Y", StatusCode::BAD_REQUEST).await;
    let message = error_message(&app, "/expirations/ZZZZ", StatusCode::NOT_FOUND).await;
    assert!(message.contains("ZZZZ"), "{message}");
    let body = error(&app, "/expirations/NOCH", StatusCode::FAILED_DEPENDENCY).await;
    assert_eq!(body["upstream"], true, "{body}");
    let body = error(&app, "/chain/NOCH", StatusCode::FAILED_DEPENDENCY).await;
    assert!(message_of(&body).contains("NOCH"), "{body}");
    // No reader attached at all.
    let bare = router(state_at(friday_morning()));
    error(&bare, "/expirations/SPY", StatusCode::FAILED_DEPENDENCY).await;
}

// ---------------------------------------------------------------------------------------------
// /chain

#[tokio::test]
async fn chain_defaults_to_the_nearest_expiration_and_twenty_strikes_per_side() {
    let data = fetch(&app(), "/chain/SPY").await;
    let (nearest, forward, _) = expirations()[0];
    let key = nearest.to_string();
    assert_eq!(data["ticker"], "SPY");
    assert!(close(SPOT, &data["stock_price"]), "{}", data["stock_price"]);
    assert_eq!(data["expirations"], serde_json::json!([key]));
    assert_eq!(data["iv_units"], "decimal");
    assert_eq!(data["data_type"], "LIVE");
    assert_eq!(data["chains"].as_object().unwrap().len(), 1);

    let rows = spy_rows_of(nearest);
    let expected = window_strikes(&rows, forward, 20);
    assert_eq!(expected.len(), 40);
    assert_eq!(strikes_of(&data["chains"][&key]), expected);
    let window = &data["strike_window"];
    assert_eq!(window["strikes_around"], 20);
    assert_eq!(window["truncated"], true);
    assert_eq!(window["rows_total"], 81);
    assert_eq!(window["rows_returned"], 40);

    // Every row carries the row's values under the spec's keys.
    for json in data["chains"][&key].as_array().unwrap() {
        let strike = json["Strike"].as_f64().unwrap();
        let row = rows.iter().find(|r| r.strike == strike).unwrap();
        assert_row_matches(json, row);
    }
    let pricing = &data["forwards"][&key];
    assert!(close(forward, &pricing["forward"]), "{pricing}");
    assert_eq!(pricing["forward_source"], "parity");
    assert_eq!(pricing["dte"], 0);
    assert_eq!(data["clamped"], serde_json::json!([]));
}

#[tokio::test]
async fn chain_rows_without_a_quote_or_a_listing_are_null() {
    let data = fetch(&app(), "/chain/SPY?strikes_around=0&num_expirations=3").await;
    assert_eq!(data["strike_window"]["truncated"], false);
    assert_eq!(data["strike_window"]["strikes_around"], 0);
    assert_eq!(data["strike_window"]["rows_total"], 243);
    assert_eq!(data["strike_window"]["rows_returned"], 243);
    for (expiration, _, _) in expirations() {
        let key = expiration.to_string();
        let rows = data["chains"][&key].as_array().unwrap();
        assert_eq!(rows.len(), 81);
        let one_sided = rows
            .iter()
            .find(|r| r["Strike"] == ONE_SIDED_CALL_STRIKE)
            .unwrap();
        assert_eq!(one_sided["IV Call"], Value::Null);
        assert_eq!(one_sided["Delta Call"], Value::Null);
        assert_eq!(one_sided["Call Bid"], 0.0);
        assert!(one_sided["IV Put"].is_f64());
        let unlisted = rows
            .iter()
            .find(|r| r["Strike"] == UNLISTED_PUT_STRIKE)
            .unwrap();
        assert_eq!(unlisted["Put Bid"], Value::Null);
        assert_eq!(unlisted["Put OI"], Value::Null);
        assert_eq!(unlisted["Put Symbol"], Value::Null);
        assert!(unlisted["Call Symbol"].is_string());
    }
}

#[tokio::test]
async fn chain_expiration_overrides_num_expirations_and_must_be_listed() {
    let app = app();
    let (december, forward, _) = expirations()[2];
    let data = fetch(
        &app,
        &format!("/chain/SPY?expiration={december}&num_expirations=3&strikes_around=5"),
    )
    .await;
    let key = december.to_string();
    assert_eq!(data["expirations"], serde_json::json!([key]));
    let expected = window_strikes(&spy_rows_of(december), forward, 5);
    assert_eq!(strikes_of(&data["chains"][&key]), expected);
    assert_eq!(data["forwards"][&key]["dte"], 28);

    let message = error_message(
        &app,
        "/chain/SPY?expiration=2026-12-19",
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        message.contains("2026-12-19") && message.contains("2026-12-18"),
        "{message}"
    );
    error(
        &app,
        "/chain/SPY?expiration=12/18/2026",
        StatusCode::BAD_REQUEST,
    )
    .await;
}

#[tokio::test]
async fn chain_clamps_out_of_range_sizes_and_says_so() {
    let app = app();
    let data = fetch(&app, "/chain/SPY?num_expirations=50&strikes_around=3").await;
    // Clamped to 10; three are listed.
    assert_eq!(data["expirations"].as_array().unwrap().len(), 3);
    let clamped = data["clamped"].as_array().unwrap();
    assert_eq!(clamped.len(), 1, "{clamped:?}");
    assert_eq!(clamped[0]["parameter"], "num_expirations");
    assert_eq!(clamped[0]["used"], 10);
    assert_eq!(data["strike_window"]["rows_returned"], 3 * 6);

    // Above the documented 500 is clamped like any bounded size.
    let data = fetch(&app, "/chain/SPY?strikes_around=900").await;
    assert_eq!(data["strike_window"]["strikes_around"], 500);
    assert_eq!(data["clamped"][0]["parameter"], "strikes_around");
    assert_eq!(data["clamped"][0]["used"], 500);

    // A negative count is refused: clamped to 0 it would mean the full chain, the opposite of
    // a narrow window.
    let message = error_message(
        &app,
        "/chain/SPY?strikes_around=-4",
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(
        message.contains("strikes_around") && message.contains("-4"),
        "{message}"
    );

    error(
        &app,
        "/chain/SPY?num_expirations=two",
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(&app, "/chain/SPY?strike_around=4", StatusCode::BAD_REQUEST).await;
}

// ---------------------------------------------------------------------------------------------
// /stock

#[tokio::test]
async fn stock_reports_the_chain_price_and_the_profile() {
    let app = app();
    let data = fetch(&app, "/stock/AAPL").await;
    assert_eq!(data["ticker"], "AAPL");
    assert!(close(SPOT, &data["price"]), "{data}");
    assert_eq!(data["company_name"], "Apple Inc.");
    assert_eq!(data["asset_class"], "STOCK");
    assert_eq!(data["sector"], "Information Technology");
    assert_eq!(
        data["industry"],
        "Technology Hardware, Storage & Peripherals"
    );
    assert_eq!(data["market_cap"], "$3.45T");
    assert_eq!(data["beta"], "1.21");
    assert_eq!(data["earnings_date"], Value::Null);
    assert_eq!(data["data_type"], "LIVE");
    assert_eq!(data["priced_on_forward"], false);

    // Option volume summed here over the rows (missing sides count nothing).
    let total: u64 = spy_rows()
        .iter()
        .map(|r| r.call.volume.unwrap_or(0) + r.put.volume.unwrap_or(0))
        .sum();
    assert!((1_000..1_000_000).contains(&total), "{total}");
    let data = fetch(&app, "/stock/spy").await;
    #[allow(clippy::cast_precision_loss)]
    let thousands = total as f64 / 1e3;
    assert_eq!(data["options_volume"], format!("{thousands:.2}K"));
    assert_eq!(data["company_name"], "SPDR S&P 500 ETF Trust");
    assert_eq!(data["market_cap"], Value::Null);
    assert_eq!(data["sector"], Value::Null);
    // A fund has no GICS industry: present and null.
    assert_eq!(data.get("industry"), Some(&Value::Null), "{data}");
    assert_eq!(data["beta"], "1.00");

    let body = error(&app, "/stock/NOCH", StatusCode::FAILED_DEPENDENCY).await;
    assert_eq!(body["upstream"], true, "{body}");
    error(&app, "/stock/QQQQ", StatusCode::NOT_FOUND).await;
}

/// The last (date, shares) of `symbol`'s bars on or before `day`, found here.
fn last_bar_on_or_before(symbol: &str, day: NaiveDate) -> Option<(NaiveDate, u64)> {
    share_volumes()
        .remove(symbol)?
        .into_iter()
        .filter(|(date, _)| *date <= day)
        .max_by_key(|(date, _)| *date)
}

#[tokio::test]
async fn stock_volume_is_the_last_session_of_the_daily_bars() {
    let app = app();
    let session = chain_support::trade_date();
    // AAPL: a bar on the chain's session (and a later one, which is not used).
    let (date, shares) = last_bar_on_or_before("AAPL", session).unwrap();
    assert_eq!(date, session);
    let data = fetch(&app, "/stock/AAPL").await;
    assert_eq!(data["volume_shares"], shares);
    assert_eq!(data["volume_date"], date.to_string());
    #[allow(clippy::cast_precision_loss)]
    let millions = shares as f64 / 1e6;
    assert_eq!(data["volume"], format!("{millions:.2}M"));
    assert_eq!(data["volume"], "48.13M");

    // SPY: the bars stop the session before the chain's; that session is reported.
    let (date, shares) = last_bar_on_or_before("SPY", session).unwrap();
    assert!(date < session);
    let data = fetch(&app, "/stock/SPY").await;
    assert_eq!(data["volume_shares"], shares);
    assert_eq!(data["volume_date"], date.to_string());
    #[allow(clippy::cast_precision_loss)]
    let millions = shares as f64 / 1e6;
    assert_eq!(data["volume"], format!("{millions:.2}M"));

    // A cash index trades no shares: null, not "0"; SPY-like ETFs without bars: null.
    let data = fetch(&app, "/stock/SPX").await;
    assert_eq!(data["volume"], Value::Null);
    assert_eq!(data["volume_shares"], Value::Null);
    let mut market = MemoryMarket::spy();
    market.coverage = Arc::new(optics_api::market::Coverage {
        companies: chain_support::companies(),
        ..Default::default()
    });
    let bare = router(state_at(friday_morning()).with_market_data(Arc::new(market)));
    let data = fetch(&bare, "/stock/AAPL").await;
    assert_eq!(data["volume"], Value::Null);
    assert_eq!(data["volume_date"], Value::Null);
}

// ---------------------------------------------------------------------------------------------
// Cash indices: priced on the forward

#[tokio::test]
async fn index_chains_report_the_forward_not_the_spot() {
    let app = app();
    let listed = spx_expirations();
    let (nearest, nearest_forward, _) = listed[0];
    let (december, december_forward, _) = listed[2];
    // The fixture's forwards are far from the spot: quoting the spot would be caught.
    assert!((nearest_forward - SPX_SPOT).abs() > 1.0);

    let data = fetch(&app, "/chain/SPX").await;
    assert_eq!(data["priced_on_forward"], true);
    assert_eq!(data["stock_price"], nearest_forward);
    assert_eq!(
        data["forwards"][nearest.to_string()]["forward"],
        nearest_forward
    );
    // With another expiration chosen, the price is that expiration's forward.
    let data = fetch(&app, &format!("/chain/SPX?expiration={december}")).await;
    assert_eq!(data["stock_price"], december_forward);
    let rows = data["chains"][december.to_string()].as_array().unwrap();
    let stored: Vec<ChainRow> = spx_rows()
        .into_iter()
        .filter(|r| r.expiration == december)
        .collect();
    for json in rows {
        let strike = json["Strike"].as_f64().unwrap();
        assert_row_matches(json, stored.iter().find(|r| r.strike == strike).unwrap());
    }
    // The window is centred on the forward: 20 strikes below it, 20 at or above.
    assert_eq!(
        strikes_of(&data["chains"][december.to_string()]),
        window_strikes(&stored, december_forward, 20)
    );

    // An ETF is quoted on its spot.
    let data = fetch(&app, "/chain/SPY").await;
    assert_eq!(data["priced_on_forward"], false);
    assert_eq!(data["stock_price"], SPOT);

    // /stock: the nearest forward.
    let data = fetch(&app, "/stock/SPX").await;
    assert_eq!(data["price"], nearest_forward);
    assert_eq!(data["priced_on_forward"], true);
    assert_eq!(data["asset_class"], "INDEX");
    assert_eq!(data["company_name"], "S&P 500 Index");

    // /options-by-delta: the forward of the expiration searched.
    let data = fetch(
        &app,
        &format!("/options-by-delta/SPX?expiration={december}"),
    )
    .await;
    assert_eq!(data["stock_price"], december_forward);
    assert_eq!(data["priced_on_forward"], true);

    // /chain-at-time: that day's forward of the expiration, not the spot.
    let data = fetch(
        &app,
        &format!("/chain-at-time/SPX?expiration={december}&trade_date=2026-11-19"),
    )
    .await;
    assert_eq!(data["underlying_price"], SPX_PAST_FORWARD);
    assert_eq!(data["pricing"]["forward"], SPX_PAST_FORWARD);
    assert_eq!(data["priced_on_forward"], true);
    let data = fetch(
        &app,
        "/chain-at-time/SPY?expiration=2026-12-18&trade_date=2026-11-19",
    )
    .await;
    assert_eq!(data["priced_on_forward"], false);
    assert_eq!(data["underlying_price"], SPOT);
}

// ---------------------------------------------------------------------------------------------
// Freshness

/// The market state at `at`, worked out here from the session hours (not the API's code):
/// Friday 2026-11-20 10:00 New York is in the regular session; Saturday is not.
fn assert_session_fields(data: &Value, open: bool, path: &str) {
    assert_eq!(data["is_market_hours"], open, "{path}: {data}");
    assert_eq!(
        data["data_freshness"],
        if open { "LIVE" } else { "EOD" },
        "{path}"
    );
    let message = data["message"].as_str().unwrap_or_default();
    let expected = if open { "Market open" } else { "weekend" };
    assert!(message.contains(expected), "{path}: {message}");
}

#[tokio::test]
async fn the_family_carries_the_market_state_at_the_top_of_data() {
    let saturday = Utc.with_ymd_and_hms(2026, 11, 21, 15, 0, 0).unwrap();
    for (at, open) in [(friday_morning(), true), (saturday, false)] {
        let app = app_at(at);
        for path in [
            "/chain/SPY",
            "/expirations/SPY",
            "/stock/SPY",
            "/options-by-delta/SPY",
        ] {
            let data = fetch(&app, path).await;
            assert_session_fields(&data, open, path);
        }
        // The nested block these payloads carried first stays, with the same values.
        for path in ["/chain/SPY", "/expirations/SPY", "/stock/SPY"] {
            let data = fetch(&app, path).await;
            for key in ["is_market_hours", "data_freshness", "message"] {
                assert_eq!(data["freshness"][key], data[key], "{path} {key}");
            }
            assert_eq!(data["freshness"]["trade_date"], "2026-11-20", "{path}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// /search

fn symbols(data: &Value) -> Vec<String> {
    data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["symbol"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn search_ranks_symbols_then_name_words_then_substrings() {
    let app = app();
    // "Apple" starts a word of Apple Inc.; "pineapple" only contains it.
    let data = fetch(&app, "/search?q=apple").await;
    assert_eq!(symbols(&data), ["AAPL", "PAPL"]);
    assert_eq!(data["results"][0]["matched_on"], "name_prefix");
    assert_eq!(data["results"][1]["matched_on"], "name");
    assert_eq!(data["exact_match"], false);
    assert_eq!(data["supported"], false);

    // Symbol prefix first; then name-word prefixes by market cap (AAPL 3.45T, AMAT 140B).
    let data = fetch(&app, "/search?q=ap&limit=3").await;
    assert_eq!(symbols(&data), ["APLD", "AAPL", "AMAT"]);
    assert_eq!(data["count"], 3);
    let tiers: Vec<&Value> = data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["market_cap_tier"])
        .collect();
    // 1.5B small, 3.45T mega, 140B large.
    assert_eq!(
        tiers,
        [
            &Value::from("small"),
            &Value::from("mega"),
            &Value::from("large")
        ]
    );

    let data = fetch(&app, "/search?q=spy").await;
    assert_eq!(symbols(&data)[0], "SPY");
    assert_eq!(data["results"][0]["matched_on"], "symbol");
    assert_eq!(data["results"][0]["market_cap_tier"], Value::Null);
    assert_eq!(data["results"][0]["asset_class"], "ETF");
    assert_eq!(data["exact_match"], true);
    assert_eq!(data["supported"], true);

    let data = fetch(&app, "/search?q=pineapple").await;
    assert_eq!(data["results"][0]["market_cap_tier"], "micro");
    let data = fetch(&app, "/search?q=zzzz").await;
    assert_eq!(data["count"], 0);
}

#[tokio::test]
async fn search_bounds_and_errors() {
    let app = app();
    let data = fetch(&app, "/search?q=a&limit=0").await;
    assert_eq!(data["count"], 1);
    assert_eq!(data["clamped"][0]["parameter"], "limit");
    let data = fetch(&app, "/search?q=a&limit=500").await;
    assert_eq!(data["clamped"][0]["used"], 20);
    // Default 8; 5 of the 6 companies have an A in the symbol or name (not SPY).
    let data = fetch(&app, "/search?q=a").await;
    assert_eq!(data["count"], 5);
    assert!(!symbols(&data).contains(&"SPY".to_owned()));

    error(&app, "/search", StatusCode::BAD_REQUEST).await;
    let long = "x".repeat(65);
    error(&app, &format!("/search?q={long}"), StatusCode::BAD_REQUEST).await;
    let empty =
        router(state_at(friday_morning()).with_market_data(Arc::new(MemoryMarket::default())));
    error(&empty, "/search?q=spy", StatusCode::FAILED_DEPENDENCY).await;
}

// ---------------------------------------------------------------------------------------------
// /options-by-delta

/// The row whose side's |delta| is nearest `target` (ties: lower strike), found here.
fn nearest_by_delta(rows: &[ChainRow], put: bool, target: f64) -> &ChainRow {
    let mut best: Option<(f64, &ChainRow)> = None;
    for row in rows {
        let side = if put { &row.put } else { &row.call };
        if let Some(delta) = side.greeks.delta {
            let distance = (delta.abs() - target).abs();
            if best.is_none_or(|(d, _)| distance < d) {
                best = Some((distance, row));
            }
        }
    }
    best.unwrap().1
}

#[tokio::test]
async fn options_by_delta_picks_the_nearest_delta() {
    let app = app();
    let data = fetch(&app, "/options-by-delta/SPY").await;
    let (nearest, _, _) = expirations()[0];
    let rows = spy_rows_of(nearest);
    let row = nearest_by_delta(&rows, false, 0.3);
    let call = &row.call;
    assert_eq!(data["option_type"], "call");
    assert_eq!(data["expiration"], nearest.to_string());
    assert_eq!(data["strike"], row.strike);
    assert_eq!(data["actual_delta"], call.greeks.delta.unwrap());
    assert_eq!(data["target_delta"], 0.3);
    assert_eq!(data["bid"], call.bid.unwrap());
    assert_eq!(data["ask"], call.ask.unwrap());
    assert_eq!(data["mid"], call.mid.unwrap());
    let iv = call.iv.unwrap();
    assert_eq!(data["iv"], iv);
    assert!(close(iv * 100.0, &data["iv_pct"]), "{data}");
    assert_eq!(data["iv_units"], "decimal");
    assert!(close(SPOT, &data["stock_price"]));
    assert_eq!(data["option_symbol"], call.option_symbol.clone().unwrap());
    // The neighbours are no nearer.
    let delta = call.greeks.delta.unwrap();
    assert!(
        rows.iter()
            .filter_map(|r| r.call.greeks.delta)
            .all(|d| (d - 0.3).abs() >= (delta - 0.3).abs())
    );

    let (december, _, _) = expirations()[2];
    let data = fetch(
        &app,
        &format!("/options-by-delta/SPY?delta=0.25&option_type=PUT&expiration={december}"),
    )
    .await;
    let rows = spy_rows_of(december);
    let row = nearest_by_delta(&rows, true, 0.25);
    assert_eq!(data["option_type"], "put");
    assert_eq!(data["strike"], row.strike);
    assert_eq!(data["actual_delta"], row.put.greeks.delta.unwrap());
    assert!(data["actual_delta"].as_f64().unwrap() < 0.0);
    assert_eq!(data["dte"], 28);
}

#[tokio::test]
async fn options_by_delta_bounds_and_errors() {
    let app = app();
    let data = fetch(&app, "/options-by-delta/SPY?delta=1.5").await;
    assert_eq!(data["target_delta"], 0.99);
    assert_eq!(data["clamped"][0]["parameter"], "delta");
    error(
        &app,
        "/options-by-delta/SPY?option_type=straddle",
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(
        &app,
        "/options-by-delta/SPY?delta=abc",
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(
        &app,
        "/options-by-delta/SPY?expiration=2027-01-15",
        StatusCode::BAD_REQUEST,
    )
    .await;

    // No call with a delta (no two-sided quotes): 424.
    let mut market = MemoryMarket::spy();
    let rows: Vec<ChainRow> = spy_rows()
        .into_iter()
        .map(|mut r| {
            r.call.greeks.delta = None;
            r.call.iv = None;
            r
        })
        .collect();
    market.chains.insert(
        "SPY".to_owned(),
        Arc::new(optics_api::market::ChainView::new(rows).unwrap()),
    );
    let app = router(state_at(friday_morning()).with_market_data(Arc::new(market)));
    let body = error(&app, "/options-by-delta/SPY", StatusCode::FAILED_DEPENDENCY).await;
    assert_eq!(body["upstream"], true);
    fetch(&app, "/options-by-delta/SPY?option_type=put").await;
}

// ---------------------------------------------------------------------------------------------
// /chain-at-time

#[tokio::test]
async fn chain_at_time_serves_a_carried_close() {
    let app = app();
    let data = fetch(
        &app,
        "/chain-at-time/SPY?expiration=2026-12-18&trade_date=2026-11-19",
    )
    .await;
    let rows = chain_support::spy_history_rows();
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["trade_date"], "2026-11-19");
    assert_eq!(data["expiration"], "2026-12-18");
    assert_eq!(data["time_of_day"], "close");
    assert_eq!(data["iv_units"], "decimal");
    assert_eq!(data["dte"], 29);
    assert!(close(SPOT, &data["underlying_price"]));
    assert!(close(598.0, &data["pricing"]["forward"]));
    let chain = data["chain"].as_array().unwrap();
    assert_eq!(chain.len(), rows.len());
    for (json, row) in chain.iter().zip(&rows) {
        assert_row_matches(json, row);
    }
    let calls = data["calls"].as_array().unwrap();
    let puts = data["puts"].as_array().unwrap();
    assert_eq!(calls.len(), 81);
    assert_eq!(puts.len(), 80, "the 700 put is not listed");
    let row = &rows[40];
    let call = calls.iter().find(|c| c["strike"] == row.strike).unwrap();
    assert_eq!(call["bid"], row.call.bid.unwrap());
    assert_eq!(call["implied_vol"], row.call.iv.unwrap());
    assert_eq!(call["rho"], row.call.greeks.rho.unwrap());
    assert_eq!(call["open_interest"], row.call.open_interest.unwrap());
}

#[tokio::test]
async fn chain_at_time_refuses_dates_it_cannot_serve() {
    let app = app();
    let at = |e: &str, t: &str| format!("/chain-at-time/SPY?expiration={e}&trade_date={t}");
    // A past trading day that is not carried: 424.
    let body = error(
        &app,
        &at("2026-12-18", "2026-11-18"),
        StatusCode::FAILED_DEPENDENCY,
    )
    .await;
    assert!(message_of(&body).contains("No end-of-day chain"), "{body}");
    assert_eq!(body["upstream"], true, "{body}");
    // An expiration not listed that day: 404 naming the ones that were (retrying cannot help).
    let body = error(&app, &at("2026-11-27", "2026-11-19"), StatusCode::NOT_FOUND).await;
    assert_ne!(body["upstream"], true, "{body}");
    let message = message_of(&body);
    assert!(message.contains("2026-11-27"), "{message}");
    assert!(
        message.contains("listed that day: ") && message.contains("2026-12-18"),
        "{message}"
    );
    // The session in progress has not closed (Friday 10:00 New York).
    error(
        &app,
        &at("2026-12-18", "2026-11-20"),
        StatusCode::BAD_REQUEST,
    )
    .await;
    // A Sunday.
    let message = error_message(
        &app,
        &at("2026-12-18", "2026-11-15"),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert!(message.contains("not a trading day"), "{message}");
    // Expired before the trade date.
    error(
        &app,
        &at("2026-11-13", "2026-11-19"),
        StatusCode::BAD_REQUEST,
    )
    .await;
    // Required parameters.
    error(
        &app,
        "/chain-at-time/SPY?expiration=2026-12-18",
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(
        &app,
        "/chain-at-time/SPY?trade_date=2026-11-19",
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(
        &app,
        &at("2026-12-18", "11/19/2026"),
        StatusCode::BAD_REQUEST,
    )
    .await;
    error(
        &app,
        &at("2026-12-18", "2026-11-19").replace("SPY", "ZZZZ"),
        StatusCode::NOT_FOUND,
    )
    .await;

    // After Friday's close the Friday session counts as closed (and is not carried: 424).
    let evening = Utc.with_ymd_and_hms(2026, 11, 20, 22, 0, 0).unwrap();
    let body = error(
        &app_at(evening),
        &at("2026-12-18", "2026-11-20"),
        StatusCode::FAILED_DEPENDENCY,
    )
    .await;
    assert_eq!(body["upstream"], true, "{body}");
}
