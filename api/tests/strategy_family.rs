//! The strategies family through the real router: `/pop`, `/analyze-strategy`. Figures are
//! checked against closed forms recomputed here (payoff arithmetic, N(d2) with an independent
//! normal CDF, Black–Scholes–Merton delta).

mod common;
mod strategy_support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use strategy_support::{
    SPY_CARRY, SPY_RATE, SPY_SPOT, app, bsm_delta, close, december, num, post, post_raw,
    prob_above, spy_iv,
};

fn bull_put_legs() -> Value {
    json!([
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0, "quantity": 1},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1, "quantity": 1}
    ])
}

#[tokio::test]
async fn pop_is_n_d2_of_the_breakeven_at_the_nearest_strikes_iv() {
    let app = app();
    let answer = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": bull_put_legs()}),
    )
    .await;
    let data = answer.data();
    // Credit 0.90 a share: profitable above 580 − 0.90. The 580 put is nearest the spot, so
    // its 20 % IV is used; F = S·e^{0.04·T}.
    let years: f64 = 30.0 / 365.0;
    let forward = 600.0 * (0.04 * years).exp();
    let expected = 100.0 * prob_above(forward, 579.1, 0.2, years);
    close(num(&data, "probability_of_profit"), expected, 1e-4, "pop");
    assert_eq!(data["legs_count"], 2);
    close(num(&data, "probability_vol_pct"), 20.0, 1e-12, "vol");
    close(data["breakevens"][0].as_f64().unwrap(), 579.1, 1e-9, "be");
    assert_eq!(data["breakevens"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn pop_reads_iv_given_in_percentage_points() {
    let app = app();
    let mut legs = bull_put_legs();
    legs[0]["iv"] = json!(20.0);
    legs[1]["iv"] = json!(21.0);
    let in_points = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": legs}),
    )
    .await
    .data();
    let in_decimals = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": bull_put_legs()}),
    )
    .await
    .data();
    close(
        num(&in_points, "probability_of_profit"),
        num(&in_decimals, "probability_of_profit"),
        1e-12,
        "same pop",
    );
}

async fn bad(path: &str, body: Value, names: &str) {
    let app = app();
    let answer = post(&app, path, &body).await;
    let error = answer.error(StatusCode::BAD_REQUEST);
    let message = error["error"].as_str().unwrap();
    assert!(message.contains(names), "{message:?} should name {names:?}");
}

#[tokio::test]
async fn pop_rejects_malformed_bodies_naming_the_field() {
    let ok_body = || json!({"stock_price": 600.0, "days_to_exp": 30, "legs": bull_put_legs()});
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("legs");
    bad("/pop", body, "legs").await;
    let mut body = ok_body();
    body["legs"] = json!([]);
    bad("/pop", body, "legs").await;
    let mut body = ok_body();
    body["legs"][1]["strike"] = json!("575");
    bad("/pop", body, "legs[1].strike").await;
    let mut body = ok_body();
    body["legs"][0]["strike"] = json!(-580.0);
    bad("/pop", body, "legs[0].strike").await;
    let mut body = ok_body();
    body["legs"][0]["option_type"] = json!("FUTURE");
    bad("/pop", body, "legs[0].type").await;
    let mut body = ok_body();
    body["legs"][0]["action"] = json!("HOLD");
    bad("/pop", body, "legs[0].action").await;
    let mut body = ok_body();
    body["legs"][0]["quantity"] = json!(1.5);
    bad("/pop", body, "legs[0].quantity").await;
    let mut body = ok_body();
    body["stock_price"] = json!("600");
    bad("/pop", body, "stock_price").await;
    let mut body = ok_body();
    body["stock_price"] = json!(-1.0);
    bad("/pop", body, "stock_price").await;
    let mut body = ok_body();
    body["days_to_exp"] = json!(-3);
    bad("/pop", body, "days_to_exp").await;
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("days_to_exp");
    bad("/pop", body, "days_to_exp").await;
    let mut body = ok_body();
    body["legs"] = json!(vec![body["legs"][0].clone(); 10_000]);
    bad("/pop", body, "legs").await;
    let mut body = ok_body();
    body["legs"][0] = json!(5);
    bad("/pop", body, "legs[0]").await;
    bad("/pop", json!([1, 2]), "object").await;

    let app = app();
    post_raw(&app, "/pop", "{\"legs\": [")
        .await
        .error(StatusCode::BAD_REQUEST);
}

fn bull_call_legs() -> Value {
    json!([
        {"type": "CALL", "action": "BUY", "strike": 600.0, "expiration": december().to_string(), "premium": 8.2, "iv": 0.18},
        {"type": "CALL", "action": "SELL", "strike": 610.0, "expiration": december().to_string(), "premium": 3.9, "iv": 0.17}
    ])
}

#[tokio::test]
async fn analyze_strategy_economics_of_a_bull_call_spread() {
    let app = app();
    let data = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "stock_price": 600.0, "name": "Bull call", "legs": bull_call_legs()}),
    )
    .await
    .data();
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["strategy_name"], "Bull call");
    // Debit 4.30 a share on a $10 spread.
    close(num(&data, "net_premium"), -430.0, 1e-9, "net premium");
    close(num(&data, "max_profit"), 570.0, 1e-9, "max profit");
    close(num(&data, "max_loss"), -430.0, 1e-9, "max loss");
    close(
        num(&data, "risk_reward_ratio"),
        570.0 / 430.0,
        1e-12,
        "ratio",
    );
    close(data["breakevens"][0].as_f64().unwrap(), 604.3, 1e-9, "be");
    // The chain's rate and carry (not the 4 % default); IV of the 600 call (nearest).
    close(num(&data, "rate"), SPY_RATE, 0.0, "rate");
    close(num(&data, "dividend_yield"), SPY_CARRY, 0.0, "carry");
    let years: f64 = 28.0 / 365.0;
    let forward = 600.0 * ((SPY_RATE - SPY_CARRY) * years).exp();
    let expected = 100.0 * prob_above(forward, 604.3, 0.18, years);
    close(num(&data, "probability_of_profit"), expected, 1e-4, "pop");
    // The curve is the expiration payoff, point by point.
    let curve = data["pnl_curve"].as_array().unwrap();
    assert!(curve.len() >= 100, "{} points", curve.len());
    for point in curve {
        let (s, pnl) = (point[0].as_f64().unwrap(), point[1].as_f64().unwrap());
        let payoff = (s - 600.0).max(0.0) - (s - 610.0).max(0.0) - 4.3;
        close(pnl, 100.0 * payoff, 1e-6, "pnl");
    }
    // Net delta from the supplied IVs.
    let delta = bsm_delta(true, 600.0, 600.0, years, SPY_RATE, SPY_CARRY, 0.18)
        - bsm_delta(true, 600.0, 610.0, years, SPY_RATE, SPY_CARRY, 0.17);
    close(num(&data, "net_delta"), 100.0 * delta, 1e-4, "net delta");
    assert_eq!(data["net_premium_convention"], "credit_positive");
}

#[tokio::test]
async fn analyze_strategy_says_unlimited_for_unbounded_amounts() {
    let app = app();
    let short_call = json!([{"type": "CALL", "action": "SELL", "strike": 610.0,
        "expiration": december().to_string(), "premium": 3.9, "iv": 0.17}]);
    let data = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "stock_price": 600.0, "legs": short_call}),
    )
    .await
    .data();
    assert_eq!(data["max_loss"], "unlimited");
    close(num(&data, "max_profit"), 390.0, 1e-9, "credit kept");
    assert_eq!(data["strategy_name"], "Custom Strategy");
    let long_call = json!([{"type": "CALL", "action": "BUY", "strike": 610.0,
        "expiration": december().to_string(), "premium": 3.9, "iv": 0.17}]);
    let data = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "stock_price": 600.0, "legs": long_call}),
    )
    .await
    .data();
    assert_eq!(data["max_profit"], "unlimited");
    assert_eq!(data["risk_reward_ratio"], "unlimited");
    close(num(&data, "max_loss"), -390.0, 1e-9, "premium paid");
}

#[tokio::test]
async fn analyze_strategy_takes_ivs_and_spot_from_the_live_chain() {
    let app = app();
    let legs = json!([
        {"type": "PUT", "action": "SELL", "strike": 590.0, "expiration": december().to_string(), "premium": 6.0},
        {"type": "PUT", "action": "BUY", "strike": 580.0, "expiration": december().to_string(), "premium": 3.5}
    ]);
    let data = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "spy", "legs": legs}),
    )
    .await
    .data();
    close(num(&data, "stock_price"), SPY_SPOT, 0.0, "spot");
    let summary = data["legs_summary"].as_array().unwrap();
    assert_eq!(summary[0]["iv_source"], "chain");
    close(
        num(&summary[0], "iv"),
        spy_iv(590.0, december()),
        1e-15,
        "iv",
    );
    let years: f64 = 28.0 / 365.0;
    let delta = -bsm_delta(
        false,
        SPY_SPOT,
        590.0,
        years,
        SPY_RATE,
        SPY_CARRY,
        spy_iv(590.0, december()),
    ) + bsm_delta(
        false,
        SPY_SPOT,
        580.0,
        years,
        SPY_RATE,
        SPY_CARRY,
        spy_iv(580.0, december()),
    );
    close(num(&data, "net_delta"), 100.0 * delta, 1e-4, "net delta");
}

#[tokio::test]
async fn analyze_strategy_without_iv_off_the_chain_is_upstream() {
    let app = app();
    let legs = json!([{"type": "PUT", "action": "SELL", "strike": 592.5,
        "expiration": december().to_string(), "premium": 6.0}]);
    let body = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "legs": legs}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    assert!(body["error"].as_str().unwrap().contains("legs[0].iv"));
    // IWM is covered but has no chain yet: no price to take.
    let body = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "IWM", "legs": bull_call_legs()}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    assert_eq!(body["upstream"], true);
    // Not covered at all.
    post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "ZZZZ", "stock_price": 600.0, "legs": bull_call_legs()}),
    )
    .await
    .error(StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn analyze_strategy_rejects_malformed_bodies_naming_the_field() {
    let ok_body = || json!({"ticker": "SPY", "stock_price": 600.0, "legs": bull_call_legs()});
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("legs");
    bad("/analyze-strategy", body, "legs").await;
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("ticker");
    bad("/analyze-strategy", body, "ticker").await;
    let mut body = ok_body();
    body["legs"] = json!([]);
    bad("/analyze-strategy", body, "legs").await;
    let mut body = ok_body();
    body["legs"][0]["premium"] = json!("8.2");
    bad("/analyze-strategy", body, "legs[0].premium").await;
    let mut body = ok_body();
    body["legs"][1]["strike"] = json!(-610.0);
    bad("/analyze-strategy", body, "legs[1].strike").await;
    let mut body = ok_body();
    body["legs"][0]["type"] = json!("STRADDLE");
    bad("/analyze-strategy", body, "legs[0].type").await;
    let mut body = ok_body();
    body["legs"][0]["expiration"] = json!("12/18/2026");
    bad("/analyze-strategy", body, "legs[0].expiration").await;
    let mut body = ok_body();
    body["legs"][0]["expiration"] = json!("2026-10-16");
    bad("/analyze-strategy", body, "legs[0].expiration").await;
    let mut body = ok_body();
    body["legs"] = json!(vec![body["legs"][0].clone(); 10_000]);
    bad("/analyze-strategy", body, "legs").await;
    let mut body = ok_body();
    body["stock_price"] = json!("600");
    bad("/analyze-strategy", body, "stock_price").await;
    let mut body = ok_body();
    body["ticker"] = json!(42);
    bad("/analyze-strategy", body, "ticker").await;
}

#[tokio::test]
async fn pop_and_analyze_strategy_agree_on_the_same_legs() {
    let app = app();
    // IWM has no chain: analyze-strategy uses r = 4 %, q = 0 like pop; December is exactly
    // 28 days away at the fixture's clock (16:00 New York).
    for legs in [bull_put_legs(), bull_call_legs()] {
        let mut pop_legs = legs.clone();
        let mut analyze_legs = legs.clone();
        for (p, a) in pop_legs
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(analyze_legs.as_array_mut().unwrap())
        {
            let option_type = p
                .get("option_type")
                .or_else(|| p.get("type"))
                .cloned()
                .unwrap();
            p["option_type"] = option_type.clone();
            a["type"] = option_type;
            a["expiration"] = json!(december().to_string());
        }
        let pop = post(
            &app,
            "/pop",
            &json!({"stock_price": 600.0, "days_to_exp": 28, "legs": pop_legs}),
        )
        .await
        .data();
        let analysis = post(
            &app,
            "/analyze-strategy",
            &json!({"ticker": "IWM", "stock_price": 600.0, "legs": analyze_legs}),
        )
        .await
        .data();
        close(
            num(&pop, "probability_of_profit"),
            num(&analysis, "probability_of_profit"),
            1e-9,
            "pop vs analyze",
        );
        assert_eq!(pop["breakevens"], analysis["breakevens"]);
    }
}

#[tokio::test]
async fn simulate_chain_reprices_rows_sent_in_the_body() {
    use strategy_support::bsm_price;
    let app = app();
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"sim_price": 590.0, "sim_dte": 10, "iv_adjustment": 3,
            "chain": [{"Strike": 600.0, "IV Call": 0.2, "IV Put": 0.22,
                "Call Bid": 9.9, "Call Ask": 10.3}]}),
    )
    .await
    .data();
    assert_eq!(data["source"], "request");
    assert_eq!(data["iv_units"], "decimal");
    let row = &data["chain"][0];
    let years: f64 = 10.0 / 365.0;
    // r = 4 %, q = 0 for rows without a ticker; IVs shifted by 3 points.
    let call = bsm_price(true, 590.0, 600.0, years, 0.04, 0.0, 0.23);
    let put = bsm_price(false, 590.0, 600.0, years, 0.04, 0.0, 0.25);
    close(num(row, "Call Mid"), call, 1e-4, "call");
    close(num(row, "Put Mid"), put, 1e-4, "put");
    close(num(row, "IV Call"), 0.23, 1e-12, "iv");
    close(
        num(row, "Delta Call"),
        bsm_delta(true, 590.0, 600.0, years, 0.04, 0.0, 0.23),
        1e-6,
        "delta",
    );
    // The 40-cent spread is kept around the new value; the put had no quote.
    close(
        num(row, "Call Ask") - num(row, "Call Bid"),
        0.4,
        1e-9,
        "spread",
    );
    close(num(row, "Put Ask"), num(row, "Put Bid"), 0.0, "no spread");
    // At expiry: intrinsic value.
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"sim_price": 610.0, "sim_dte": 0,
            "chain": [{"Strike": 600.0, "IV Call": 0.2, "IV Put": 0.22}]}),
    )
    .await
    .data();
    close(num(&data["chain"][0], "Call Mid"), 10.0, 1e-12, "intrinsic");
    close(num(&data["chain"][0], "Put Mid"), 0.0, 1e-12, "worthless");
}

#[tokio::test]
async fn simulate_chain_fetches_the_live_chain_around_sim_price() {
    use strategy_support::bsm_price;
    let app = app();
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "iv_adjustment": 3,
            "strikes_around": 2}),
    )
    .await
    .data();
    assert_eq!(data["source"], "live_chain");
    assert_eq!(data["expiration"], december().to_string());
    close(num(&data, "rate"), SPY_RATE, 0.0, "rate");
    let strikes: Vec<f64> = data["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| num(r, "Strike"))
        .collect();
    assert_eq!(strikes, vec![580.0, 585.0, 590.0, 595.0]);
    assert_eq!(data["window"]["truncated"], true);
    assert_eq!(data["window"]["rows_total"], 21);
    let row = &data["chain"][2];
    let years: f64 = 5.0 / 365.0;
    let iv = spy_iv(590.0, december()) + 0.03;
    close(
        num(row, "Put Mid"),
        bsm_price(false, 590.0, 590.0, years, SPY_RATE, SPY_CARRY, iv),
        1e-4,
        "put",
    );
    // strikes_around 0: every strike.
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "strikes_around": 0,
            "expiration": strategy_support::january().to_string()}),
    )
    .await
    .data();
    assert_eq!(data["chain"].as_array().unwrap().len(), 21);
    assert_eq!(data["expiration"], strategy_support::january().to_string());
}

#[tokio::test]
async fn simulate_chain_errors() {
    let app = app();
    let row = json!({"Strike": 600.0, "IV Call": 0.2});
    let ok_body = || json!({"sim_price": 590.0, "sim_dte": 10, "chain": [row.clone()]});
    bad(
        "/simulate-chain",
        json!({"sim_price": 590.0, "sim_dte": 10}),
        "ticker",
    )
    .await;
    let mut body = ok_body();
    body["sim_price"] = json!("590");
    bad("/simulate-chain", body, "sim_price").await;
    let mut body = ok_body();
    body["sim_price"] = json!(-590);
    bad("/simulate-chain", body, "sim_price").await;
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("sim_dte");
    bad("/simulate-chain", body, "sim_dte").await;
    let mut body = ok_body();
    body["chain"] = json!([]);
    bad("/simulate-chain", body, "chain").await;
    let mut body = ok_body();
    body["chain"] = json!([{"IV Call": 0.2}]);
    bad("/simulate-chain", body, "chain[0].Strike").await;
    let mut body = ok_body();
    body["chain"] = json!([{"Strike": 600.0, "IV Call": -0.2}]);
    bad("/simulate-chain", body, "chain[0].IV Call").await;
    let mut body = ok_body();
    body["chain"] = json!([{"Strike": -600.0, "IV Call": 0.2}]);
    bad("/simulate-chain", body, "Strike").await;
    let mut body = ok_body();
    body["chain"] = json!(vec![row.clone(); 10_001]);
    bad("/simulate-chain", body, "chain").await;
    let mut body = ok_body();
    body["strikes_around"] = json!(1.5);
    bad("/simulate-chain", body, "strikes_around").await;
    post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "expiration": "2026-12-19"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "IWM", "sim_price": 590.0, "sim_dte": 5}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
}

/// The fixture's mid for a side: its 10-cent market around the model price, bid cut at 0.
fn fixture_mid(call: bool, strike: f64, expiration: chrono::NaiveDate, years: f64) -> f64 {
    let price = strategy_support::bsm_price(
        call,
        SPY_SPOT,
        strike,
        years,
        SPY_RATE,
        SPY_CARRY,
        spy_iv(strike, expiration),
    );
    0.5 * ((price - 0.05).max(0.0) + price + 0.05)
}

fn fixture_delta(call: bool, strike: f64, years: f64) -> f64 {
    bsm_delta(
        call,
        SPY_SPOT,
        strike,
        years,
        SPY_RATE,
        SPY_CARRY,
        spy_iv(strike, december()),
    )
}

fn strikes() -> impl Iterator<Item = f64> {
    (0..=20).map(|i| 550.0 + 5.0 * f64::from(i))
}

/// The strike whose |delta| is nearest `target` (ties to the lower strike).
fn by_delta(call: bool, target: f64, years: f64) -> f64 {
    strikes()
        .min_by(|a, b| {
            let miss = |k: f64| (fixture_delta(call, k, years).abs() - target).abs();
            miss(*a).total_cmp(&miss(*b))
        })
        .unwrap()
}

#[tokio::test]
async fn build_strategy_iron_condor_by_delta_and_width() {
    let app = app();
    let data = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "dte": 30, "width": 5,
            "target_delta": 0.2}),
    )
    .await
    .data();
    // 30 days: December (28) is nearer than January (56).
    let years: f64 = 28.0 / 365.0;
    let short_put = by_delta(false, 0.2, years);
    let short_call = by_delta(true, 0.2, years);
    let legs = data["legs"].as_array().unwrap();
    let got: Vec<(String, String, f64)> = legs
        .iter()
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_owned(),
                l["action"].as_str().unwrap().to_owned(),
                num(l, "strike"),
            )
        })
        .collect();
    let want = vec![
        ("PUT".to_owned(), "BUY".to_owned(), short_put - 5.0),
        ("PUT".to_owned(), "SELL".to_owned(), short_put),
        ("CALL".to_owned(), "SELL".to_owned(), short_call),
        ("CALL".to_owned(), "BUY".to_owned(), short_call + 5.0),
    ];
    assert_eq!(got, want);
    for leg in legs {
        assert_eq!(leg["expiration"], december().to_string());
        let call = leg["type"] == "CALL";
        let strike = num(leg, "strike");
        close(
            num(leg, "premium"),
            fixture_mid(call, strike, december(), years),
            1e-4,
            "mid",
        );
    }
    let credit = fixture_mid(false, short_put, december(), years)
        - fixture_mid(false, short_put - 5.0, december(), years)
        + fixture_mid(true, short_call, december(), years)
        - fixture_mid(true, short_call + 5.0, december(), years);
    let analysis = &data["analysis"];
    close(num(analysis, "net_premium"), 100.0 * credit, 0.02, "credit");
    close(
        num(analysis, "max_profit"),
        100.0 * credit,
        0.02,
        "max profit",
    );
    close(
        num(analysis, "max_loss"),
        100.0 * (credit - 5.0),
        0.02,
        "max loss",
    );
    assert_eq!(data["ticker"], "SPY");
    assert_eq!(data["target_delta_clamped"], false);
    assert!(data["name"].as_str().unwrap().starts_with("Iron Condor"));
    assert_eq!(data["created_at"], "2026-11-20T21:00:00Z");
}

#[tokio::test]
async fn build_strategy_clamps_delta_and_builds_calendars_across_expirations() {
    let app = app();
    let data = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "target_delta": 0.9}),
    )
    .await
    .data();
    assert_eq!(data["target_delta_clamped"], true);
    close(num(&data, "target_delta"), 0.5, 0.0, "clamped");
    let data = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "calendar",
            "expiration": december().to_string()}),
    )
    .await
    .data();
    let legs = data["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 2);
    assert_eq!(legs[0]["expiration"], december().to_string());
    assert_eq!(
        legs[1]["expiration"],
        strategy_support::january().to_string()
    );
    assert_eq!(legs[0]["strike"], legs[1]["strike"]);
    assert_eq!(
        data["analysis"]["valuation_method"],
        "numeric_first_expiration"
    );
}

#[tokio::test]
async fn build_strategy_errors() {
    let app = app();
    let ok_body = || json!({"ticker": "SPY", "strategy_type": "iron_condor"});
    let mut body = ok_body();
    body["strategy_type"] = json!("jade_lizard");
    bad("/build-strategy", body, "strategy_type").await;
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("strategy_type");
    bad("/build-strategy", body, "strategy_type").await;
    let mut body = ok_body();
    body["width"] = json!("5");
    bad("/build-strategy", body, "width").await;
    let mut body = ok_body();
    body["width"] = json!(-5);
    bad("/build-strategy", body, "width").await;
    let mut body = ok_body();
    body["dte"] = json!(-1);
    bad("/build-strategy", body, "dte").await;
    let mut body = ok_body();
    body["target_delta"] = json!("0.3");
    bad("/build-strategy", body, "target_delta").await;
    let mut body = ok_body();
    body.as_object_mut().unwrap().remove("ticker");
    bad("/build-strategy", body, "ticker").await;
    post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "expiration": "2026-12-11"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    post(
        &app,
        "/build-strategy",
        &json!({"ticker": "IWM", "strategy_type": "iron_condor"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    // A calendar on the last expiration has no far leg.
    post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "calendar",
            "expiration": strategy_support::january().to_string()}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
}

/// Every feasible put credit spread of the December fixture under the default constraints:
/// (short strike, long strike, credit per share).
fn put_spreads(years: f64) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for short in strikes().filter(|k| *k <= SPY_SPOT) {
        let d = fixture_delta(false, short, years).abs();
        if !(0.05..=0.50).contains(&d) {
            continue;
        }
        for long in strikes().filter(|k| *k < short && short - *k <= 10.0) {
            let credit = fixture_mid(false, short, december(), years)
                - fixture_mid(false, long, december(), years);
            if credit > 0.0 && credit < short - long && credit >= 0.10 {
                out.push((short, long, credit));
            }
        }
    }
    out
}

#[tokio::test]
async fn optimize_strategy_finds_the_best_put_credit_spread() {
    let app = app();
    let years: f64 = 28.0 / 365.0;
    let spreads = put_spreads(years);
    assert!(!spreads.is_empty());
    for (target, score) in [
        (
            "max_profit",
            Box::new(|c: f64, _w: f64| c) as Box<dyn Fn(f64, f64) -> f64>,
        ),
        ("risk_reward", Box::new(|c: f64, w: f64| c / (w - c))),
    ] {
        let data = post(
            &app,
            "/optimize-strategy",
            &json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "target": target}),
        )
        .await
        .data();
        let best = spreads
            .iter()
            .max_by(|a, b| score(a.2, a.0 - a.1).total_cmp(&score(b.2, b.0 - b.1)))
            .unwrap();
        assert_eq!(data["optimization_target"], target);
        let legs = data["legs"].as_array().unwrap();
        let short = legs.iter().find(|l| l["action"] == "SELL").unwrap();
        let long = legs.iter().find(|l| l["action"] == "BUY").unwrap();
        close(num(short, "strike"), best.0, 0.0, target);
        close(num(long, "strike"), best.1, 0.0, target);
        close(
            num(&data["analysis"], "max_profit"),
            100.0 * best.2,
            0.02,
            "max profit",
        );
        close(
            num(&data, "objective_value"),
            score(best.2, best.0 - best.1),
            1e-3,
            "objective",
        );
    }
}

#[tokio::test]
async fn optimize_strategy_iron_condor_and_errors() {
    let app = app();
    let data = post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "target": "probability"}),
    )
    .await
    .data();
    let legs = data["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 4);
    // The objective is the analysis's probability of profit.
    close(
        num(&data, "objective_value"),
        num(&data["analysis"], "probability_of_profit"),
        1e-6,
        "pop",
    );
    let ok_body = || json!({"ticker": "SPY", "strategy_type": "iron_condor"});
    let mut body = ok_body();
    body["strategy_type"] = json!("straddle");
    bad("/optimize-strategy", body, "strategy_type").await;
    let mut body = ok_body();
    body["target"] = json!("max_gain");
    bad("/optimize-strategy", body, "target").await;
    let mut body = ok_body();
    body["target"] = json!(3);
    bad("/optimize-strategy", body, "target").await;
    let mut body = ok_body();
    body["max_width"] = json!(-1);
    bad("/optimize-strategy", body, "max_width").await;
    post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "IWM", "strategy_type": "iron_condor"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    // Nothing can meet a $50 minimum credit on $10 wings: upstream, not a bad request.
    post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "min_credit": 50}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
}
