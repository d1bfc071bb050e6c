//! The risk family through the real router. Expected figures are worked out here by hand from
//! the positions' per-share Greeks (the endpoints' first-order formulas, written out).

mod common;
mod strategy_support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use strategy_support::{app, close, december, num, post};

/// 100 SPY shares bought at 600, now 610, and two short December 590 puts.
fn book() -> Value {
    json!([
        {"ticker": "SPY", "position_type": "STOCK", "quantity": 100, "entry_price": 600.0, "current_price": 610.0},
        {"ticker": "SPY", "position_type": "PUT", "quantity": -2, "strike": 590.0,
         "expiration": december().to_string(), "entry_price": 4.1, "current_price": 3.6,
         "delta": -0.28, "gamma": 0.012, "theta": -0.21, "vega": 0.55, "iv": 0.19}
    ])
}

// Book totals: delta 100 + (−200)(−0.28) = 156 shares; theta (−200)(−0.21) = 42 $/day;
// vega (−200)(0.55) = −110 $/pt; value 61,000 − 720; gross 61,720; SPY at 610 (the stock's
// current price).
const DELTA: f64 = 156.0;
const THETA: f64 = 42.0;
const VEGA: f64 = -110.0;
const NET: f64 = 60_280.0;
const GROSS: f64 = 61_720.0;
const SPY_PRICE: f64 = 610.0;

#[tokio::test]
async fn portfolio_greeks_totals_and_risk_level() {
    let app = app();
    let data = post(&app, "/portfolio-greeks", &json!({"positions": book()}))
        .await
        .data();
    let summary = &data["portfolio_summary"];
    close(num(summary, "total_delta"), DELTA, 1e-9, "delta");
    close(num(summary, "total_theta"), THETA, 1e-9, "theta");
    close(num(summary, "total_vega"), VEGA, 1e-9, "vega");
    close(num(summary, "total_gamma"), -200.0 * 0.012, 1e-12, "gamma");
    close(num(summary, "net_value"), NET, 1e-9, "net");
    close(num(summary, "gross_value"), GROSS, 1e-9, "gross");
    let exposure = 100.0 * DELTA * SPY_PRICE / GROSS;
    close(
        num(summary, "delta_exposure_pct"),
        exposure,
        1e-9,
        "exposure",
    );
    close(
        num(summary, "daily_decay_pct"),
        100.0 * THETA / GROSS,
        1e-12,
        "decay",
    );
    // 154 % delta exposure is between 100 and 200: HIGH; decay 0.07 %/day is LOW.
    assert_eq!(summary["risk_level"], "HIGH");
    close(
        num(summary, "unrealized_pnl"),
        100.0 * 10.0 + (-200.0) * (3.6 - 4.1),
        1e-9,
        "pnl",
    );
    let spy = &data["positions_by_ticker"]["SPY"];
    close(num(spy, "delta"), DELTA, 1e-9, "spy delta");
    close(num(spy, "value"), NET, 1e-9, "spy value");
    close(num(spy, "theta"), THETA, 1e-9, "spy theta");
    close(num(spy, "vega"), VEGA, 1e-9, "spy vega");
}

fn qqq_call() -> Value {
    json!({"ticker": "QQQ", "position_type": "CALL", "quantity": 3, "strike": 500.0,
        "expiration": december().to_string(), "current_price": 12.0,
        "delta": 0.5, "theta": -0.3, "vega": 0.6})
}

#[tokio::test]
async fn prices_come_from_the_body_a_stock_position_or_the_live_chain() {
    let app = app();
    // A SPY option alone takes SPY's price from the live chain (600).
    let put_only = json!([book()[1].clone()]);
    let data = post(&app, "/portfolio-greeks", &json!({"positions": put_only}))
        .await
        .data();
    close(
        num(&data["positions_by_ticker"]["SPY"], "underlying_price"),
        600.0,
        0.0,
        "live",
    );
    close(
        num(&data["portfolio_summary"], "dollar_delta"),
        56.0 * 600.0,
        1e-9,
        "dollar delta",
    );
    // QQQ is covered but has no chain: 424 unless its price is supplied.
    let body = post(
        &app,
        "/portfolio-greeks",
        &json!({"positions": [qqq_call()]}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    let data = post(
        &app,
        "/portfolio-greeks",
        &json!({"positions": [qqq_call()], "underlying_prices": {"qqq": 510.0}}),
    )
    .await
    .data();
    close(
        num(&data["portfolio_summary"], "dollar_delta"),
        150.0 * 510.0,
        1e-9,
        "supplied",
    );
}

async fn bad(path: &str, body: Value, names: &str) {
    let app = app();
    let error = post(&app, path, &body).await.error(StatusCode::BAD_REQUEST);
    let message = error["error"].as_str().unwrap();
    assert!(message.contains(names), "{message:?} should name {names:?}");
}

/// Malformed position lists, for every endpoint that reads them.
async fn rejects_malformed_positions(path: &str) {
    bad(path, json!({}), "positions").await;
    bad(path, json!({"positions": []}), "positions").await;
    bad(path, json!({"positions": {"a": 1}}), "positions").await;
    let mut positions = book();
    positions[1]["strike"] = json!("590");
    bad(path, json!({"positions": positions}), "positions[1].strike").await;
    let mut positions = book();
    positions[1]["strike"] = json!(-590.0);
    bad(path, json!({"positions": positions}), "positions[1].strike").await;
    let mut positions = book();
    positions[0]["position_type"] = json!("BOND");
    bad(
        path,
        json!({"positions": positions}),
        "positions[0].position_type",
    )
    .await;
    let mut positions = book();
    positions[1].as_object_mut().unwrap().remove("delta");
    bad(path, json!({"positions": positions}), "positions[1].delta").await;
    let mut positions = book();
    positions[1]["expiration"] = json!("soon");
    bad(
        path,
        json!({"positions": positions}),
        "positions[1].expiration",
    )
    .await;
    let positions = json!(vec![book()[0].clone(); 10_000]);
    bad(path, json!({"positions": positions}), "positions").await;
    bad(path, json!("positions"), "object").await;
}

#[tokio::test]
async fn portfolio_greeks_rejects_malformed_bodies() {
    rejects_malformed_positions("/portfolio-greeks").await;
}

#[tokio::test]
async fn scenario_analysis_is_the_first_order_sum() {
    let app = app();
    let data = post(
        &app,
        "/scenario-analysis",
        &json!({"positions": book(), "scenarios": [
            {"stock_move_pct": -5, "iv_change_pct": 10, "days_forward": 1},
            {"days_forward": 40}
        ]}),
    )
    .await
    .data();
    close(num(&data, "current_value"), NET, 1e-9, "current");
    assert_eq!(data["iv_change_basis"], "vol_points");
    let first = &data["scenarios"][0];
    let delta = DELTA * SPY_PRICE * -0.05;
    let vega = VEGA * 10.0;
    let theta = THETA * 1.0;
    close(num(first, "delta_contribution"), delta, 1e-9, "delta");
    close(num(first, "vega_contribution"), vega, 1e-9, "vega");
    close(num(first, "theta_contribution"), theta, 1e-9, "theta");
    let pnl = delta + vega + theta;
    close(num(first, "estimated_pnl"), pnl, 1e-9, "pnl");
    close(
        num(first, "estimated_pnl_pct"),
        100.0 * pnl / GROSS,
        1e-12,
        "pct",
    );
    close(num(first, "new_portfolio_value"), NET + pnl, 1e-9, "new");
    // The puts have 28 days left: 40 days forward decays them for 28 only; missing fields
    // are zero.
    let second = &data["scenarios"][1];
    close(
        num(second, "theta_contribution"),
        THETA * 28.0,
        1e-6,
        "capped",
    );
    close(num(second, "delta_contribution"), 0.0, 0.0, "no move");
    // No scenarios: an empty list, not an error.
    let data = post(&app, "/scenario-analysis", &json!({"positions": book()}))
        .await
        .data();
    assert_eq!(data["scenarios"], json!([]));
}

#[tokio::test]
async fn scenario_analysis_rejects_malformed_bodies() {
    rejects_malformed_positions("/scenario-analysis").await;
    bad(
        "/scenario-analysis",
        json!({"positions": book(), "scenarios": "crash"}),
        "scenarios",
    )
    .await;
    bad(
        "/scenario-analysis",
        json!({"positions": book(), "scenarios": [{"stock_move_pct": "-5"}]}),
        "scenarios[0].stock_move_pct",
    )
    .await;
    bad(
        "/scenario-analysis",
        json!({"positions": book(), "scenarios": [{}, {"stock_move_pct": -150}]}),
        "scenarios[1].stock_move_pct",
    )
    .await;
    bad(
        "/scenario-analysis",
        json!({"positions": book(), "scenarios": vec![json!({}); 10_000]}),
        "scenarios",
    )
    .await;
}

#[tokio::test]
async fn stress_tests_run_the_named_set() {
    let app = app();
    let data = post(&app, "/stress-tests", &json!({"positions": book()}))
        .await
        .data();
    close(num(&data, "current_value"), NET, 1e-9, "current");
    let scenarios = data["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 5, "{}", scenarios.len());
    let by_name = |name: &str| {
        scenarios
            .iter()
            .find(|s| s["scenario_name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {data}"))
            .clone()
    };
    let crash = by_name("Market Crash");
    let move_pct = num(&crash, "stock_move_pct");
    let iv_change = num(&crash, "iv_change_pct");
    assert!(move_pct < 0.0 && iv_change > 0.0);
    let expected = DELTA * SPY_PRICE * move_pct / 100.0 + VEGA * iv_change;
    close(num(&crash, "estimated_pnl"), expected, 1e-9, "crash");
    close(
        num(&crash["contributions"], "delta"),
        DELTA * SPY_PRICE * move_pct / 100.0,
        1e-9,
        "crash delta",
    );
    for name in ["Correction", "Vol Spike", "Rally"] {
        let s = by_name(name);
        let expected = DELTA * SPY_PRICE * num(&s, "stock_move_pct") / 100.0
            + VEGA * num(&s, "iv_change_pct")
            + THETA * num(&s, "days_forward").min(28.0);
        close(num(&s, "estimated_pnl"), expected, 1e-9, name);
    }
    rejects_malformed_positions("/stress-tests").await;
}

#[tokio::test]
async fn hedge_recommendations_sell_short_shares_or_buy_puts() {
    use strategy_support::{SPY_CARRY, SPY_RATE, SPY_SPOT, bsm_delta, bsm_price, spy_iv};
    let app = app();
    let data = post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "hedge_ticker": "spy"}),
    )
    .await
    .data();
    close(num(&data, "current_delta"), DELTA, 1e-9, "current");
    close(num(&data, "target_delta"), 0.0, 0.0, "target");
    close(num(&data, "delta_gap"), -DELTA, 1e-9, "gap");
    assert_eq!(data["hedge_ticker"], "SPY");
    assert!(data["note"].as_str().unwrap().contains("beta"));
    let hedges = data["hedges"].as_array().unwrap();
    // 156 shares to remove and only 100 held: SELL SHORT 156 at the book's SPY price (610).
    let stock = &hedges[0];
    assert_eq!(stock["type"], "stock");
    assert_eq!(stock["action"], "SELL SHORT");
    close(num(stock, "quantity"), 156.0, 0.0, "shares");
    close(num(stock, "est_cost"), 156.0 * SPY_PRICE, 1e-9, "notional");
    // Option: puts of the expiration nearest 30 days (December, 28 days), |delta| nearest
    // 0.5, recomputed here from the fixture's IVs.
    let years: f64 = 28.0 / 365.0;
    let (strike, delta) = (0..=20)
        .map(|i| 550.0 + 5.0 * f64::from(i))
        .map(|k| {
            let iv = spy_iv(k, december());
            (
                k,
                bsm_delta(false, SPY_SPOT, k, years, SPY_RATE, SPY_CARRY, iv),
            )
        })
        .min_by(|a, b| (a.1.abs() - 0.5).abs().total_cmp(&(b.1.abs() - 0.5).abs()))
        .unwrap();
    let option = &hedges[1];
    assert_eq!(option["type"], "option");
    assert_eq!(option["option_type"], "PUT");
    assert_eq!(option["action"], "BUY");
    assert_eq!(option["expiration"], december().to_string());
    close(num(option, "strike"), strike, 0.0, "strike");
    close(
        num(option, "delta_per_contract"),
        100.0 * delta,
        1e-4,
        "delta/contract",
    );
    let contracts = (DELTA / (100.0 * delta.abs())).round();
    close(num(option, "contracts"), contracts, 0.0, "contracts");
    let mid = bsm_price(
        false,
        SPY_SPOT,
        strike,
        years,
        SPY_RATE,
        SPY_CARRY,
        spy_iv(strike, december()),
    );
    close(
        num(option, "est_cost"),
        contracts * mid * 100.0,
        0.05, // the test's normal CDF is good to ~1e-7: cents on the premium
        "premium",
    );
    let projected = &data["projected_greeks"];
    close(
        num(&projected["after_stock_hedge"], "total_delta"),
        0.0,
        1e-9,
        "after stock",
    );
    close(
        num(&projected["after_option_hedge"], "total_delta"),
        DELTA + contracts * 100.0 * delta,
        1e-3,
        "after option",
    );
    close(
        num(&data["portfolio_greeks"], "total_delta"),
        DELTA,
        1e-9,
        "book",
    );
}

#[tokio::test]
async fn hedge_recommendations_edge_cases_and_errors() {
    let app = app();
    // Already at the target: nothing to do.
    let data = post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "target_delta": DELTA}),
    )
    .await
    .data();
    assert_eq!(data["hedges"], json!([]));
    // QQQ is covered, has no chain and no price in the book: 424.
    post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "hedge_ticker": "QQQ"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    // With a supplied price the share hedge stands; the option alternative says why not.
    let data = post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "hedge_ticker": "QQQ", "underlying_prices": {"QQQ": 500.0}}),
    )
    .await
    .data();
    assert_eq!(data["hedges"].as_array().unwrap().len(), 1);
    assert!(data["option_hedge_unavailable"].is_string());
    post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "hedge_ticker": "ZZZZ"}),
    )
    .await
    .error(StatusCode::NOT_FOUND);
    bad(
        "/hedge-recommendations",
        json!({"positions": book(), "target_delta": "0"}),
        "target_delta",
    )
    .await;
    bad(
        "/hedge-recommendations",
        json!({"positions": book(), "hedge_ticker": 7}),
        "hedge_ticker",
    )
    .await;
    rejects_malformed_positions("/hedge-recommendations").await;
}
