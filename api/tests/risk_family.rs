//! The risk family through the real router. Expected figures are worked out here by hand from
//! the positions' per-share Greeks (the endpoints' first-order formulas, written out).

mod common;
mod strategy_support;

use axum::http::StatusCode;
use optics_compute::risk::STRESS_SCENARIOS;
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
    // One field of one position wrong (`None`: left out), named by its place.
    for (i, field, value) in [
        (1, "strike", Some(json!("590 or so"))),
        (1, "strike", Some(json!(-590.0))),
        (0, "position_type", Some(json!("BOND"))),
        (1, "delta", None),
        (1, "expiration", Some(json!("soon"))),
    ] {
        let mut positions = book();
        match value {
            Some(value) => positions[i][field] = value,
            None => {
                positions[i].as_object_mut().unwrap().remove(field);
            }
        }
        let names = format!("positions[{i}].{field}");
        bad(path, json!({"positions": positions}), &names).await;
    }
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
        json!({"positions": book(), "scenarios": [{"stock_move_pct": "minus five"}]}),
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
    // The full documented set, in order: at least eight, named and parameterised exactly as
    // the constant, each through the first-order estimator (the puts have 28 days left).
    assert!(STRESS_SCENARIOS.len() >= 8);
    assert_eq!(scenarios.len(), STRESS_SCENARIOS.len());
    for (got, want) in scenarios.iter().zip(STRESS_SCENARIOS.iter()) {
        assert_eq!(got["scenario_name"], want.name);
        assert_eq!(got["description"], want.description);
        let (m, v, d) = (
            want.scenario.stock_move_pct,
            want.scenario.iv_change_pct,
            want.scenario.days_forward,
        );
        close(num(got, "stock_move_pct"), m, 0.0, want.name);
        close(num(got, "iv_change_pct"), v, 0.0, want.name);
        close(num(got, "days_forward"), d, 0.0, want.name);
        let (delta, vega, theta) = (DELTA * SPY_PRICE * m / 100.0, VEGA * v, THETA * d.min(28.0));
        close(num(&got["contributions"], "delta"), delta, 1e-9, want.name);
        close(num(&got["contributions"], "vega"), vega, 1e-9, want.name);
        close(num(&got["contributions"], "theta"), theta, 1e-6, want.name);
        let pnl = delta + vega + theta;
        close(num(got, "estimated_pnl"), pnl, 1e-6, want.name);
        close(
            num(got, "estimated_pnl_pct"),
            100.0 * pnl / GROSS,
            1e-9,
            want.name,
        );
        close(num(got, "new_portfolio_value"), NET + pnl, 1e-6, want.name);
    }
    let names: Vec<&str> = scenarios
        .iter()
        .map(|s| s["scenario_name"].as_str().unwrap())
        .collect();
    for kind in [
        "Crash",
        "Correction",
        "Pullback",
        "Vol Spike",
        "Vol Crush",
        "Rally",
        "Melt-Up",
        "Time Decay",
    ] {
        assert!(
            names.iter().any(|n| n.contains(kind)),
            "no {kind} in {names:?}"
        );
    }
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
        json!({"positions": book(), "target_delta": "zero"}),
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

#[tokio::test]
async fn portfolio_greeks_reports_its_risk_scale() {
    use optics_compute::risk::portfolio::{DAILY_DECAY_LIMITS_PCT, DELTA_EXPOSURE_LIMITS_PCT};
    let app = app();
    let data = post(&app, "/portfolio-greeks", &json!({"positions": book()}))
        .await
        .data();
    let scale = &data["portfolio_summary"]["risk_level_scale"];
    assert_eq!(
        scale["levels"],
        json!(["LOW", "MODERATE", "HIGH", "EXTREME"])
    );
    assert_eq!(
        scale["delta_exposure_pct_limits"],
        json!(DELTA_EXPOSURE_LIMITS_PCT)
    );
    assert_eq!(
        scale["daily_decay_pct_limits"],
        json!(DAILY_DECAY_LIMITS_PCT)
    );
}

#[tokio::test]
async fn hedge_option_is_a_liquid_contract() {
    use optics_compute::risk::hedge::{
        MAX_HEDGE_SPREAD_FRACTION_OF_MID, MIN_HEDGE_OPEN_INTEREST, MIN_HEDGE_VOLUME,
    };
    use strategy_support::{
        DIA_QUIET_STRIKES, DIA_WIDE_STRIKES, SPY_CARRY, SPY_RATE, SPY_SPOT, bsm_delta, bsm_price,
        spy_iv,
    };
    let app = app();
    // DIA carries SPY's quotes, but its December puts nearest 0.5 |delta| are spoiled: one
    // trades too little, the next is quoted 40 % of its mid wide.
    let data = post(
        &app,
        "/hedge-recommendations",
        &json!({"positions": book(), "hedge_ticker": "DIA"}),
    )
    .await
    .data();
    let years: f64 = 28.0 / 365.0;
    // The fixture's figures for every December put, and the criterion applied here.
    let liquid = |strike: f64| {
        let value = bsm_price(
            false,
            SPY_SPOT,
            strike,
            years,
            SPY_RATE,
            SPY_CARRY,
            spy_iv(strike, december()),
        );
        let (mut bid, mut ask) = ((value - 0.05).max(0.0), value + 0.05);
        let (mut oi, mut volume) = (1_000u64, 100u64);
        if DIA_QUIET_STRIKES.contains(&strike) {
            (oi, volume) = (20, 3);
        }
        if DIA_WIDE_STRIKES.contains(&strike) {
            let mid = 0.5 * (bid + ask);
            (bid, ask) = (0.8 * mid, 1.2 * mid);
        }
        let mid = 0.5 * (bid + ask);
        bid > 0.0
            && ask >= bid
            && (oi >= MIN_HEDGE_OPEN_INTEREST || volume >= MIN_HEDGE_VOLUME)
            && (ask - bid) <= MAX_HEDGE_SPREAD_FRACTION_OF_MID * mid
    };
    let miss = |k: f64| {
        let delta = bsm_delta(
            false,
            SPY_SPOT,
            k,
            years,
            SPY_RATE,
            SPY_CARRY,
            spy_iv(k, december()),
        );
        (delta.abs() - 0.5).abs()
    };
    let strikes: Vec<f64> = (0..=20).map(|i| 550.0 + 5.0 * f64::from(i)).collect();
    let best_any = strikes
        .iter()
        .copied()
        .min_by(|a, b| miss(*a).total_cmp(&miss(*b)))
        .unwrap();
    let best_liquid = strikes
        .iter()
        .copied()
        .filter(|k| liquid(*k))
        .min_by(|a, b| miss(*a).total_cmp(&miss(*b)))
        .unwrap();
    // The spoiling matters: without it another strike would have been chosen.
    assert_ne!(best_any, best_liquid);
    let option = data["hedges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["type"] == "option")
        .unwrap_or_else(|| panic!("no option hedge in {data}"))
        .clone();
    assert_eq!(option["option_type"], "PUT");
    assert_eq!(option["expiration"], december().to_string());
    close(num(&option, "strike"), best_liquid, 0.0, "liquid strike");
    let liquidity = &option["details"]["liquidity"];
    assert!(num(liquidity, "bid") > 0.0);
    assert!(num(liquidity, "spread_pct_of_mid") <= 100.0 * MAX_HEDGE_SPREAD_FRACTION_OF_MID);
    assert!(liquidity["open_interest"].as_u64().unwrap() >= MIN_HEDGE_OPEN_INTEREST);
    assert_eq!(liquidity["rule"], optics_compute::risk::liquidity_rule());
}

#[tokio::test]
async fn served_reference_lists_the_stress_set_and_the_risk_scale() {
    use optics_compute::risk::portfolio::{DAILY_DECAY_LIMITS_PCT, DELTA_EXPOSURE_LIMITS_PCT};
    use optics_compute::risk::{IV_CHANGE_BASIS, RiskLevel};
    let app = app();
    let answer = strategy_support::get(&app, "/docs").await;
    assert_eq!(answer.status, StatusCode::OK);
    let reference = answer.text();
    let section = reference
        .split("## Strategies and portfolio risk")
        .nth(1)
        .expect("the reference has a Strategies and portfolio risk section");
    let section = section.split("\n## ").next().unwrap();
    let must = |text: &str| {
        let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat(section).contains(&flat(text)),
            "the reference's risk section lacks {text:?}"
        );
    };
    // Every stress scenario as one table row: name, parameters, description.
    for s in &STRESS_SCENARIOS {
        must(&format!(
            "| {} | {} | {} | {} | {} |",
            s.name,
            s.scenario.stock_move_pct,
            s.scenario.iv_change_pct,
            s.scenario.days_forward,
            s.description
        ));
    }
    // The risk scale's thresholds, level by level.
    let levels = [RiskLevel::Low, RiskLevel::Moderate, RiskLevel::High];
    for (i, level) in levels.iter().enumerate() {
        must(&format!(
            "| {} | {} | {} |",
            level.as_str(),
            DELTA_EXPOSURE_LIMITS_PCT[i],
            DAILY_DECAY_LIMITS_PCT[i]
        ));
    }
    must(&format!(
        "| {} | above | above |",
        RiskLevel::Extreme.as_str()
    ));
    // iv_change_pct in vol points; the hedge's liquidity rule; the optional price override.
    must("**`iv_change_pct` is in vol points**");
    must(&format!(
        "iv_change_basis: \"{}\"",
        IV_CHANGE_BASIS.as_str()
    ));
    must(&optics_compute::risk::liquidity_rule());
    must("`underlying_prices`");
    // Required position fields per type.
    must("| STOCK | ticker, quantity, current_price (> 0) |");
    must(
        "| CALL, PUT | ticker, quantity, strike, expiration, current_price (≥ 0), delta, theta, vega |",
    );
    // The index lists the optional underlying_prices of every risk endpoint.
    let index = strategy_support::get(&app, "/").await.json();
    for slug in [
        "portfolio-greeks",
        "scenario-analysis",
        "stress-tests",
        "hedge-recommendations",
    ] {
        let entry = index["data"]["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["slug"] == slug)
            .unwrap()
            .clone();
        assert!(
            entry["params"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "underlying_prices" && p["required"] == false),
            "{slug}: {entry}"
        );
    }
}
