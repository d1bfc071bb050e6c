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

/// Each edit of `ok` is a 400 from `path` whose message names the edit's names. An edit is
/// a JSON pointer and the value to put there, or `None` to leave that member out.
async fn bad_edits(path: &str, ok: &Value, edits: Vec<(&str, Option<Value>, &str)>) {
    for (pointer, value, names) in edits {
        let mut body = ok.clone();
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        let mut target = &mut body;
        for segment in parent.split('/').skip(1) {
            target = match segment.parse::<usize>() {
                Ok(index) => &mut target[index],
                Err(_) => &mut target[segment],
            };
        }
        match (value, last.parse::<usize>()) {
            (Some(value), Ok(index)) => target[index] = value,
            (Some(value), Err(_)) => target[last] = value,
            (None, _) => {
                target.as_object_mut().unwrap().remove(last);
            }
        }
        bad(path, body, names).await;
    }
}

#[tokio::test]
async fn pop_rejects_malformed_bodies_naming_the_field() {
    let ok_body = || json!({"stock_price": 600.0, "days_to_exp": 30, "legs": bull_put_legs()});
    bad_edits(
        "/pop",
        &ok_body(),
        vec![
            ("/legs", None, "legs"),
            ("/legs", Some(json!([])), "legs"),
            ("/legs/1/strike", Some(json!("575 USD")), "legs[1].strike"),
            ("/legs/0/strike", Some(json!(-580.0)), "legs[0].strike"),
            (
                "/legs/0/option_type",
                Some(json!("FUTURE")),
                "legs[0].option_type",
            ),
            ("/legs/1/option_type", None, "legs[1].option_type"),
            ("/legs/0/action", Some(json!("HOLD")), "legs[0].action"),
            ("/legs/0/quantity", Some(json!(1.5)), "legs[0].quantity"),
            ("/stock_price", Some(json!("six hundred")), "stock_price"),
            ("/stock_price", Some(json!(-1.0)), "stock_price"),
            ("/days_to_exp", Some(json!(-3)), "days_to_exp"),
            ("/days_to_exp", None, "days_to_exp"),
        ],
    )
    .await;
    let mut body = ok_body();
    body["legs"] = json!(vec![body["legs"][0].clone(); 10_000]);
    bad("/pop", body, "legs").await;
    bad_edits(
        "/pop",
        &ok_body(),
        vec![("/legs/0", Some(json!(5)), "legs[0]")],
    )
    .await;
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
    bad_edits(
        "/analyze-strategy",
        &ok_body(),
        vec![
            ("/legs", None, "legs"),
            ("/ticker", None, "ticker"),
            ("/legs", Some(json!([])), "legs"),
            ("/legs/0/premium", Some(json!("8.2!")), "legs[0].premium"),
            ("/legs/1/strike", Some(json!(-610.0)), "legs[1].strike"),
            ("/legs/0/type", Some(json!("STRADDLE")), "legs[0].type"),
            (
                "/legs/0/expiration",
                Some(json!("12/18/2026")),
                "legs[0].expiration",
            ),
            (
                "/legs/0/expiration",
                Some(json!("2026-10-16")),
                "legs[0].expiration",
            ),
        ],
    )
    .await;
    let mut body = ok_body();
    body["legs"] = json!(vec![body["legs"][0].clone(); 10_000]);
    bad("/analyze-strategy", body, "legs").await;
    bad_edits(
        "/analyze-strategy",
        &ok_body(),
        vec![
            ("/stock_price", Some(json!("")), "stock_price"),
            ("/ticker", Some(json!(42)), "ticker"),
        ],
    )
    .await;
}

/// `legs` as pop legs (`option_type`, no expiration) and as analyze-strategy legs (`type`,
/// expiring on `expiration`).
fn pop_and_analyze_legs(legs: &Value, expiration: chrono::NaiveDate) -> (Value, Value) {
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
        a["expiration"] = json!(expiration.to_string());
    }
    (pop_legs, analyze_legs)
}

/// `/pop` of `pop_body` and `/analyze-strategy` of `analyze_body`: the data of both.
async fn pop_and_analysis(
    app: &axum::Router,
    pop_body: &Value,
    analyze_body: &Value,
) -> (Value, Value) {
    let pop = post(app, "/pop", pop_body).await.data();
    let analysis = post(app, "/analyze-strategy", analyze_body).await.data();
    (pop, analysis)
}

/// Asserts `/pop` and `/analyze-strategy` gave the same probability of profit (within 1e-9)
/// and the same breakevens.
fn assert_same_pop_and_breakevens(pop: &Value, analysis: &Value, what: &str) {
    close(
        num(pop, "probability_of_profit"),
        num(analysis, "probability_of_profit"),
        1e-9,
        what,
    );
    assert_eq!(pop["breakevens"], analysis["breakevens"], "{what}");
}

#[tokio::test]
async fn pop_and_analyze_strategy_agree_on_the_same_legs() {
    let app = app();
    // IWM has no chain: analyze-strategy uses r = 4 %, q = 0 like pop; December is exactly
    // 28 days away at the fixture's clock (16:00 New York).
    for legs in [bull_put_legs(), bull_call_legs()] {
        let (pop_legs, analyze_legs) = pop_and_analyze_legs(&legs, december());
        let (pop, analysis) = pop_and_analysis(
            &app,
            &json!({"stock_price": 600.0, "days_to_exp": 28, "legs": pop_legs}),
            &json!({"ticker": "IWM", "stock_price": 600.0, "legs": analyze_legs}),
        )
        .await;
        assert_same_pop_and_breakevens(&pop, &analysis, "pop vs analyze");
    }
}

#[tokio::test]
async fn pop_with_a_ticker_agrees_with_analyze_strategy_on_its_chain() {
    let app = app();
    // SPY has a chain (r = 4.5 %, q = 1.2 %): both endpoints must price with it. December is
    // 28 days away, so days_to_exp 28 is the legs' expiration.
    let years: f64 = 28.0 / 365.0;
    let forward = SPY_SPOT * ((SPY_RATE - SPY_CARRY) * years).exp();
    for legs in [bull_put_legs(), bull_call_legs()] {
        let (pop_legs, analyze_legs) = pop_and_analyze_legs(&legs, december());
        let (pop, analysis) = pop_and_analysis(
            &app,
            &json!({"ticker": "SPY", "stock_price": SPY_SPOT, "days_to_exp": 28, "legs": pop_legs}),
            &json!({"ticker": "SPY", "stock_price": SPY_SPOT, "legs": analyze_legs}),
        )
        .await;
        assert_same_pop_and_breakevens(&pop, &analysis, "pop vs analyze on SPY");
        // The market used, and where it came from.
        assert_eq!(pop["ticker"], "SPY");
        close(num(&pop, "rate"), SPY_RATE, 0.0, "rate");
        close(num(&pop, "dividend_yield"), SPY_CARRY, 0.0, "yield");
        assert_eq!(pop["rate_source"], "chain");
        assert_eq!(pop["dividend_yield_source"], "chain");
        assert_eq!(pop["market_expiration"], december().to_string());
        assert_eq!(pop["pricing_model"], "bsm");
        close(num(&pop, "forward"), forward, 1e-9, "forward");
    }
    // The bull put against the closed form on the chain's carry: N(d2) at the 579.10
    // breakeven with the 580 put's 20 %, centred on S·e^{(r−q)T}; without the ticker (r = 4 %,
    // q = 0) the answer differs, and sending the chain's r and q by hand gives it back.
    let (pop_legs, _) = pop_and_analyze_legs(&bull_put_legs(), december());
    let expected = 100.0 * prob_above(forward, 579.1, 0.2, years);
    let with_ticker = post(
        &app,
        "/pop",
        &json!({"ticker": "SPY", "stock_price": SPY_SPOT, "days_to_exp": 28, "legs": pop_legs}),
    )
    .await
    .data();
    close(
        num(&with_ticker, "probability_of_profit"),
        expected,
        1e-4,
        "closed form",
    );
    let bare = post(
        &app,
        "/pop",
        &json!({"stock_price": SPY_SPOT, "days_to_exp": 28, "legs": pop_legs}),
    )
    .await
    .data();
    assert_eq!(bare["rate_source"], "default");
    assert_eq!(bare["dividend_yield_source"], "default");
    assert!(bare["ticker"].is_null() && bare["market_expiration"].is_null());
    let default_forward = SPY_SPOT * (0.04 * years).exp();
    close(
        num(&bare, "probability_of_profit"),
        100.0 * prob_above(default_forward, 579.1, 0.2, years),
        1e-4,
        "default market",
    );
    assert!(
        (num(&bare, "probability_of_profit") - expected).abs() > 1e-3,
        "the chain's carry must move the answer"
    );
    let by_hand = post(
        &app,
        "/pop",
        &json!({"stock_price": SPY_SPOT, "days_to_exp": 28, "legs": pop_legs,
                "rate": SPY_RATE, "dividend_yield": SPY_CARRY}),
    )
    .await
    .data();
    assert_eq!(by_hand["rate_source"], "request");
    assert_eq!(by_hand["dividend_yield_source"], "request");
    close(
        num(&by_hand, "probability_of_profit"),
        num(&with_ticker, "probability_of_profit"),
        1e-12,
        "sent r and q",
    );
    // A sent rate overrides the chain's and is reported as sent.
    let overridden = post(
        &app,
        "/pop",
        &json!({"ticker": "SPY", "stock_price": SPY_SPOT, "days_to_exp": 28, "legs": pop_legs,
                "rate": 0.05}),
    )
    .await
    .data();
    assert_eq!(overridden["rate_source"], "request");
    assert_eq!(overridden["dividend_yield_source"], "chain");
    close(
        num(&overridden, "forward"),
        SPY_SPOT * ((0.05 - SPY_CARRY) * years).exp(),
        1e-9,
        "overridden forward",
    );
}

#[tokio::test]
async fn pop_on_an_index_uses_the_chains_forward_like_analyze_strategy() {
    use strategy_support::spx_forward;
    let app = app();
    let legs = json!([
        {"option_type": "PUT", "action": "SELL", "strike": 5950.0, "iv": 0.16, "premium": 40.0},
        {"option_type": "PUT", "action": "BUY", "strike": 5900.0, "iv": 0.17, "premium": 28.0}
    ]);
    let (pop_legs, analyze_legs) = pop_and_analyze_legs(&legs, december());
    let (pop, analysis) = pop_and_analysis(
        &app,
        &json!({"ticker": "SPX", "stock_price": spx_forward(december()), "days_to_exp": 28,
                "legs": pop_legs}),
        &json!({"ticker": "SPX", "stock_price": spx_forward(december()), "legs": analyze_legs}),
    )
    .await;
    assert_eq!(pop["pricing_model"], "black76");
    assert_eq!(pop["dividend_yield_source"], "forward");
    close(
        num(&pop, "forward"),
        spx_forward(december()),
        1e-9,
        "forward",
    );
    close(
        num(&pop, "probability_of_profit"),
        num(&analysis, "probability_of_profit"),
        1e-9,
        "pop vs analyze on SPX",
    );
    // A dividend yield has no place on the forward model: a 400 naming it.
    bad(
        "/pop",
        json!({"ticker": "SPX", "stock_price": 6012.0, "days_to_exp": 28, "legs": pop_legs,
               "dividend_yield": 0.01}),
        "dividend_yield",
    )
    .await;
    // Rates are decimals: 4.5 (percent) is refused, not read as 450 %.
    bad(
        "/pop",
        json!({"stock_price": 600.0, "days_to_exp": 28, "legs": bull_put_legs(), "rate": 4.5}),
        "rate",
    )
    .await;
    bad(
        "/pop",
        json!({"ticker": "SPY", "stock_price": 600.0, "days_to_exp": 28,
               "legs": bull_put_legs(), "dividend_yield": "1.2%"}),
        "dividend_yield",
    )
    .await;
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
    bad_edits(
        "/simulate-chain",
        &ok_body(),
        vec![
            ("/sim_price", Some(json!("590x")), "sim_price"),
            ("/sim_price", Some(json!(-590)), "sim_price"),
            ("/sim_dte", None, "sim_dte"),
            ("/chain", Some(json!([])), "chain"),
            ("/chain", Some(json!([{"IV Call": 0.2}])), "chain[0].Strike"),
            (
                "/chain",
                Some(json!([{"Strike": 600.0, "IV Call": -0.2}])),
                "chain[0].IV Call",
            ),
            (
                "/chain",
                Some(json!([{"Strike": -600.0, "IV Call": 0.2}])),
                "Strike",
            ),
            ("/chain", Some(json!(vec![row.clone(); 10_001])), "chain"),
            ("/strikes_around", Some(json!(1.5)), "strikes_around"),
        ],
    )
    .await;
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
    bad_edits(
        "/build-strategy",
        &ok_body(),
        vec![
            (
                "/strategy_type",
                Some(json!("jade_lizard")),
                "strategy_type",
            ),
            ("/strategy_type", None, "strategy_type"),
            ("/width", Some(json!("5 wide")), "width"),
            ("/width", Some(json!(-5)), "width"),
            ("/dte", Some(json!(-1)), "dte"),
            ("/target_delta", Some(json!("0.3d")), "target_delta"),
            ("/ticker", None, "ticker"),
        ],
    )
    .await;
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
    // At target_delta 0.5 both shorts of an iron condor land on the money: the shorts cross,
    // which the request must change (400 naming target_delta), not missing data.
    let body = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "target_delta": 0.5}),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().unwrap().starts_with("target_delta:"),
        "{body}"
    );
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
        // Named for what it is, with its strikes low to high.
        let name = format!("Bull Put Credit Spread {}/{}", best.1, best.0);
        assert_eq!(data["name"], name.as_str(), "{target}");
        assert_eq!(data["analysis"]["strategy_name"], name.as_str(), "{target}");
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
    // Named an iron condor with its four strikes low to high, never "Custom Strategy".
    let mut strikes: Vec<f64> = legs.iter().map(|l| num(l, "strike")).collect();
    strikes.sort_by(f64::total_cmp);
    let name = format!(
        "Iron Condor {}",
        strikes
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join("/")
    );
    assert_eq!(data["name"], name.as_str());
    assert_eq!(data["analysis"]["strategy_name"], name.as_str());
    // Either side: the winner is named for the side it is on.
    for (strategy_type, side, label) in [
        ("call_credit_spread", "CALL", "Bear Call Credit Spread"),
        ("credit_spread", "", ""),
    ] {
        let data = post(
            &app,
            "/optimize-strategy",
            &json!({"ticker": "SPY", "strategy_type": strategy_type}),
        )
        .await
        .data();
        let legs = data["legs"].as_array().unwrap();
        let won = legs[0]["type"].as_str().unwrap();
        assert!(side.is_empty() || won == side, "{strategy_type}: {won}");
        let label = match (label, won) {
            ("", "PUT") => "Bull Put Credit Spread",
            ("", _) => "Bear Call Credit Spread",
            (label, _) => label,
        };
        let mut strikes: Vec<f64> = legs.iter().map(|l| num(l, "strike")).collect();
        strikes.sort_by(f64::total_cmp);
        let name = format!("{label} {}/{}", strikes[0], strikes[1]);
        assert_eq!(data["name"], name.as_str(), "{strategy_type}");
        assert_eq!(data["analysis"]["strategy_name"], name.as_str());
    }
    // The objective is the analysis's probability of profit.
    close(
        num(&data, "objective_value"),
        num(&data["analysis"], "probability_of_profit"),
        1e-6,
        "pop",
    );
    let ok_body = || json!({"ticker": "SPY", "strategy_type": "iron_condor"});
    bad_edits(
        "/optimize-strategy",
        &ok_body(),
        vec![
            ("/strategy_type", Some(json!("straddle")), "strategy_type"),
            ("/target", Some(json!("max_gain")), "target"),
            ("/target", Some(json!(3)), "target"),
            ("/max_width", Some(json!(-1)), "max_width"),
        ],
    )
    .await;
    post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "IWM", "strategy_type": "iron_condor"}),
    )
    .await
    .error(StatusCode::FAILED_DEPENDENCY);
    // Nothing can meet a $50 minimum credit on $10 wings: the request's constraint, a 400
    // naming it (not an upstream failure: the chain is quoted).
    let body = post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPY", "strategy_type": "iron_condor", "min_credit": 50}),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    let message = body["error"].as_str().unwrap();
    assert!(message.starts_with("min_credit:"), "{message}");
    assert!(body.get("upstream").is_none(), "{body}");
    // A wing wider than half of spot is never searched (the search grows with the fourth
    // power of the strikes a wing spans): refused up front, naming the bound.
    bad(
        "/optimize-strategy",
        json!({"ticker": "SPY", "strategy_type": "iron_condor", "max_width": 1e9}),
        "max_width: at most 300.00 dollars",
    )
    .await;
    // Wings narrower than the $5 spacing cannot be built: max_width is named.
    bad(
        "/optimize-strategy",
        json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "max_width": 2}),
        "max_width:",
    )
    .await;
}

#[tokio::test]
async fn pop_reports_how_each_leg_iv_was_read() {
    let app = app();
    let legs = |short_iv: f64| {
        json!([
            {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": short_iv, "premium": 4.0},
            {"option_type": "put", "action": "buy", "strike": 575.0, "iv": 0.33, "premium": 3.1}
        ])
    };
    let in_points = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": legs(32.5)}),
    )
    .await
    .data();
    let in_decimal = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": legs(0.325)}),
    )
    .await
    .data();
    let summary = in_points["legs_summary"].as_array().unwrap();
    assert_eq!(summary[0]["iv_units_read"], "percentage_points");
    close(num(&summary[0], "iv"), 0.325, 1e-15, "32.5 read as 0.325");
    assert_eq!(summary[1]["iv_units_read"], "decimal");
    assert_eq!(summary[0]["iv_source"], "request");
    assert_eq!(in_decimal["legs_summary"][0]["iv_units_read"], "decimal");
    // The same probability either way, and the N(d2) of the breakeven 580 − 0.90 at 32.5 %
    // (the 580 put is the leg struck nearest the price).
    close(
        num(&in_points, "probability_of_profit"),
        num(&in_decimal, "probability_of_profit"),
        1e-12,
        "points vs decimal",
    );
    let years: f64 = 30.0 / 365.0;
    let forward = 600.0 * (0.04 * years).exp();
    close(
        num(&in_points, "probability_of_profit"),
        100.0 * prob_above(forward, 579.1, 0.325, years),
        1e-4,
        "pop",
    );
    close(num(&in_points, "forward"), forward, 1e-9, "forward");
}

#[tokio::test]
async fn pop_needs_only_its_own_fields() {
    let app = app();
    // The far wing has no iv, no Greeks and no expiration: pop needs none of them (the
    // probability uses the IV of the 580 put, struck nearest the price).
    let legs = json!([
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "premium": 3.1}
    ]);
    let data = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": legs}),
    )
    .await
    .data();
    let years: f64 = 30.0 / 365.0;
    let forward = 600.0 * (0.04 * years).exp();
    close(
        num(&data, "probability_of_profit"),
        100.0 * prob_above(forward, 579.1, 0.2, years),
        1e-4,
        "pop",
    );
    assert!(data["legs_summary"][1]["iv"].is_null());
    assert!(data["legs_summary"][1]["iv_units_read"].is_null());
    // The leg whose IV is used must have one, and the error says why.
    let legs = json!([
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "premium": 4.0},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1}
    ]);
    let body = post(
        &app,
        "/pop",
        &json!({"stock_price": 600.0, "days_to_exp": 30, "legs": legs}),
    )
    .await
    .error(StatusCode::BAD_REQUEST);
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("legs[0].iv"), "{message}");
    assert!(!message.contains("Greeks"), "{message}");
}

#[tokio::test]
async fn build_strategy_snaps_fractional_widths_to_listed_strikes() {
    let app = app();
    let years: f64 = 28.0 / 365.0;
    let short = by_delta(false, 0.3, years);
    // $5 strikes: a wing 7.4 away is nearest the 5-dollar wing, 7.6 the 10-dollar one; 7.5 is
    // as near both and the wider wins; 0.5 is below the spacing and takes the adjacent strike.
    for (width, wing) in [
        (7.4, 5.0),
        (7.5, 10.0),
        (7.6, 10.0),
        (0.5, 5.0),
        (12.49, 10.0),
    ] {
        let data = post(
            &app,
            "/build-strategy",
            &json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "width": width,
                "target_delta": 0.3, "expiration": december().to_string()}),
        )
        .await
        .data();
        let legs = data["legs"].as_array().unwrap();
        let sold = legs.iter().find(|l| l["action"] == "SELL").unwrap();
        let bought = legs.iter().find(|l| l["action"] == "BUY").unwrap();
        close(num(sold, "strike"), short, 0.0, "short put");
        close(
            num(sold, "strike") - num(bought, "strike"),
            wing,
            0.0,
            &format!("wing for width {width}"),
        );
        close(num(&data, "width"), width, 0.0, "width echoed");
    }
}

#[tokio::test]
async fn simulate_chain_clamps_strikes_around_and_says_so() {
    let app = app();
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "strikes_around": 600}),
    )
    .await
    .data();
    let max = optics_api::handlers::strategy::MAX_SIM_STRIKES_AROUND;
    assert_eq!(
        data["clamped"],
        json!([{"parameter": "strikes_around", "requested": "600", "used": max,
            "min": 0, "max": max}])
    );
    // 500 a side keeps every one of the 21 strikes.
    assert_eq!(data["chain"].as_array().unwrap().len(), 21);
    // In range: nothing clamped.
    let data = post(
        &app,
        "/simulate-chain",
        &json!({"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "strikes_around": 2}),
    )
    .await
    .data();
    assert_eq!(data["clamped"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// Index chains priced on the forward: every expiration on its own forward.
// ---------------------------------------------------------------------------------------------

use strategy_support::{SPX_RATE, b76_delta, b76_price, spx_forward, spx_iv};

/// The fixture's mid of an SPX side: its 10-cent market around the Black-76 value.
fn spx_mid(call: bool, strike: f64, expiration: chrono::NaiveDate, years: f64) -> f64 {
    let value = b76_price(
        call,
        spx_forward(expiration),
        strike,
        years,
        SPX_RATE,
        spx_iv(strike, expiration),
    );
    0.5 * ((value - 0.05).max(0.0) + value + 0.05)
}

#[tokio::test]
async fn analyze_strategy_prices_index_legs_on_their_own_expirations_forward() {
    let app = app();
    let january = strategy_support::january();
    let (f1, f2) = (spx_forward(december()), spx_forward(january));
    let years: f64 = 56.0 / 365.0;
    let legs = json!([
        {"type": "CALL", "action": "BUY", "strike": 6040.0, "expiration": january.to_string(),
            "premium": 95.0, "iv": 0.17},
        {"type": "CALL", "action": "SELL", "strike": 6080.0, "expiration": january.to_string(),
            "premium": 70.0, "iv": 0.165}
    ]);
    // Once at the chain's own price, once with a stock_price 60 above it: read on the same
    // basis (the nearest forward), it lifts January's forward by the same proportion.
    for (sent, scale) in [(None, 1.0), (Some(f1 + 60.0), (f1 + 60.0) / f1)] {
        let mut body = json!({"ticker": "SPX", "legs": legs});
        if let Some(price) = sent {
            body["stock_price"] = json!(price);
        }
        let data = post(&app, "/analyze-strategy", &body).await.data();
        let forward = f2 * scale;
        assert_eq!(data["pricing_model"], "black76");
        assert_eq!(data["stock_price_basis"], "nearest_forward");
        close(num(&data, "stock_price"), f1 * scale, 1e-9, "stock_price");
        close(
            num(&data, "forward_at_first_expiration"),
            forward,
            1e-9,
            "January forward",
        );
        // Greeks: Black-76 on January's forward, not December's.
        let delta = b76_delta(true, forward, 6040.0, years, SPX_RATE, 0.17)
            - b76_delta(true, forward, 6080.0, years, SPX_RATE, 0.165);
        close(num(&data, "net_delta"), 100.0 * delta, 1e-4, "net delta");
        // Debit 25: breakeven 6,065; the probability is centred on January's forward with
        // the IV of the leg struck nearest that forward (6,040 at 6,024; 6,080 once moved to
        // about 6,084).
        close(data["breakevens"][0].as_f64().unwrap(), 6065.0, 1e-9, "be");
        let vol = if (6040.0 - forward).abs() < (6080.0 - forward).abs() {
            0.17
        } else {
            0.165
        };
        close(num(&data, "probability_vol_pct"), 100.0 * vol, 1e-12, "vol");
        close(
            num(&data, "probability_of_profit"),
            100.0 * prob_above(forward, 6065.0, vol, years),
            1e-3,
            "pop",
        );
    }
}

/// Roots of `f` on [lo, hi] found by a fine scan and bisection (the test's own solver).
fn roots(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> Vec<f64> {
    let steps = 20_000;
    let mut out = Vec::new();
    let mut a = lo;
    let mut fa = f(a);
    for i in 1..=steps {
        let b = lo + (hi - lo) * f64::from(i) / f64::from(steps);
        let fb = f(b);
        if (fa > 0.0) != (fb > 0.0) {
            let (mut x0, mut x1) = (a, b);
            for _ in 0..100 {
                let mid = 0.5 * (x0 + x1);
                if (f(mid) > 0.0) == (fa > 0.0) {
                    x0 = mid;
                } else {
                    x1 = mid;
                }
            }
            out.push(0.5 * (x0 + x1));
        }
        a = b;
        fa = fb;
    }
    out
}

#[tokio::test]
async fn build_strategy_on_an_index_uses_each_expirations_forward() {
    let app = app();
    let january = strategy_support::january();
    let (f1, f2) = (spx_forward(december()), spx_forward(january));
    let (t1, t2): (f64, f64) = (28.0 / 365.0, 56.0 / 365.0);

    // A January straddle is struck at the money of January's forward (6,024 → 6,020), not
    // December's (6,012 → 6,010).
    let data = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPX", "strategy_type": "straddle", "expiration": january.to_string()}),
    )
    .await
    .data();
    let legs = data["legs"].as_array().unwrap();
    assert!(legs.iter().all(|l| num(l, "strike") == 6020.0), "{data}");
    let debit = spx_mid(true, 6020.0, january, t2) + spx_mid(false, 6020.0, january, t2);
    let analysis = &data["analysis"];
    close(
        num(analysis, "forward_at_first_expiration"),
        f2,
        1e-9,
        "forward",
    );
    // The test's CDF is good to ~1e-7 relative: under a tenth of a cent a share at 6,000.
    close(num(analysis, "net_premium"), -100.0 * debit, 0.2, "debit");
    let vol = spx_iv(6020.0, january);
    let below = 1.0 - prob_above(f2, 6020.0 - debit, vol, t2);
    let above = prob_above(f2, 6020.0 + debit, vol, t2);
    close(
        num(analysis, "probability_of_profit"),
        100.0 * (below + above),
        1e-3,
        "straddle pop",
    );

    // A December calendar: sell December, buy January at the strike nearest December's
    // forward (6,010). At December's expiry the January call's forward is the settlement
    // price × F_Jan / F_Dec, so its breakevens are where this P&L crosses zero.
    let data = post(
        &app,
        "/build-strategy",
        &json!({"ticker": "SPX", "strategy_type": "calendar", "expiration": december().to_string()}),
    )
    .await
    .data();
    let legs = data["legs"].as_array().unwrap();
    assert_eq!(num(&legs[0], "strike"), 6010.0, "{data}");
    assert_eq!(num(&legs[1], "strike"), 6010.0);
    let near_mid = spx_mid(true, 6010.0, december(), t1);
    let far_mid = spx_mid(true, 6010.0, january, t2);
    let far_iv = spx_iv(6010.0, january);
    let pnl = |settle: f64| {
        let far_value = b76_price(true, settle * f2 / f1, 6010.0, t2 - t1, SPX_RATE, far_iv);
        100.0 * (near_mid - far_mid - (settle - 6010.0).max(0.0) + far_value)
    };
    let expected = roots(pnl, 5000.0, 7000.0);
    assert_eq!(expected.len(), 2, "{expected:?}");
    let analysis = &data["analysis"];
    let breakevens: Vec<f64> = analysis["breakevens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect();
    assert_eq!(breakevens.len(), 2, "{analysis}");
    for (got, want) in breakevens.iter().zip(&expected) {
        // The test's CDF is good to ~1e-7: a few thousandths of a point at these slopes.
        close(*got, *want, 0.02, "calendar breakeven");
    }
    // Profit between the breakevens, lognormal on December's forward at the near leg's IV.
    let vol = spx_iv(6010.0, december());
    let pop = prob_above(f1, expected[0], vol, t1) - prob_above(f1, expected[1], vol, t1);
    close(
        num(analysis, "probability_of_profit"),
        100.0 * pop,
        1e-2,
        "calendar pop",
    );
}

#[tokio::test]
async fn optimize_strategy_on_an_index_searches_at_that_expirations_forward() {
    let app = app();
    let january = strategy_support::january();
    let data = post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPX", "strategy_type": "iron_condor", "target": "probability",
            "expiration": january.to_string(), "max_width": 30}),
    )
    .await
    .data();
    let analysis = &data["analysis"];
    close(
        num(analysis, "forward_at_first_expiration"),
        spx_forward(january),
        1e-9,
        "forward",
    );
    // Shorts are out of the money of January's forward: the short put at or below 6,024,
    // the short call at or above it.
    let legs = data["legs"].as_array().unwrap();
    let short_put = legs
        .iter()
        .find(|l| l["type"] == "PUT" && l["action"] == "SELL")
        .unwrap();
    let short_call = legs
        .iter()
        .find(|l| l["type"] == "CALL" && l["action"] == "SELL")
        .unwrap();
    assert!(num(short_put, "strike") <= spx_forward(january));
    assert!(num(short_call, "strike") >= spx_forward(january));
    close(
        num(&data, "objective_value"),
        num(analysis, "probability_of_profit"),
        1e-6,
        "objective is the analysis's probability",
    );
}

// ---------------------------------------------------------------------------------------------
// The served reference states the strategy conventions the code uses.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn served_reference_states_the_strategy_conventions() {
    use optics_api::handlers::strategy::{
        DEFAULT_DTE, DEFAULT_SIM_STRIKES_AROUND, DEFAULT_TARGET_DELTA, DEFAULT_WIDTH,
        MAX_SIM_STRIKES_AROUND, UNLIMITED,
    };
    use optics_compute::strategy::builder::TARGET_DELTA_RANGE;
    use optics_compute::strategy::{
        IV_PERCENT_THRESHOLD, MAX_LEGS, NET_PREMIUM_CONVENTION, OptimizeConstraints,
    };
    let app = app();
    let answer = strategy_support::get(&app, "/docs").await;
    assert_eq!(answer.status, StatusCode::OK);
    let reference = answer.text();
    let section = reference
        .split("## Strategies and portfolio risk")
        .nth(1)
        .expect("the reference has a Strategies and portfolio risk section");
    // Compared with line breaks and runs of spaces as single spaces: the prose is wrapped.
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let section = flat(section.split("\n## ").next().unwrap());
    let must = |text: String| {
        let text = flat(&text);
        assert!(
            section.contains(&text),
            "the reference's strategy section lacks {text:?}"
        );
    };
    must(format!("`\"{UNLIMITED}\"`"));
    must(format!(
        "net_premium_convention: \"{}\"",
        NET_PREMIUM_CONVENTION.as_str()
    ));
    must("credit positive".into());
    must("risk_reward_ratio`** = max_profit / |max_loss|".into());
    must(format!(
        "A value **above {IV_PERCENT_THRESHOLD}** is read as percentage points"
    ));
    must(format!("At most {MAX_LEGS} legs"));
    must(format!(
        "default {DEFAULT_TARGET_DELTA}, clamped to {:.2}–{:.2}",
        TARGET_DELTA_RANGE.0, TARGET_DELTA_RANGE.1
    ));
    must(format!("wing width in dollars, default {DEFAULT_WIDTH}"));
    let d = OptimizeConstraints::default();
    must(format!("| `dte` | {DEFAULT_DTE} |"));
    must(format!("| `max_width` | {} |", d.max_width_dollars));
    must(format!("| `min_credit` | {} |", d.min_credit_per_share));
    must(format!(
        "|delta| from {} to {}",
        d.min_short_abs_delta, d.max_short_abs_delta
    ));
    for target in ["max_profit", "min_loss", "risk_reward", "probability"] {
        must(format!("`{target}`"));
    }
    must(format!(
        "default {DEFAULT_SIM_STRIKES_AROUND} per side of `sim_price`, 0 = all) is clamped to 0 \
         to {MAX_SIM_STRIKES_AROUND}"
    ));
    must("nearest expiration's forward".into());
    // The index lists the optimizer's body parameters.
    let index = strategy_support::get(&app, "/").await.json();
    let optimize = index["data"]["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "optimize-strategy")
        .unwrap()
        .clone();
    let names: Vec<&str> = optimize["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in ["target", "expiration", "dte", "max_width", "min_credit"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}
