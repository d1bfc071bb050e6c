//! The bodies the original service's public MCP client (`apexvol-mcp` 0.1.4 on PyPI, which
//! forwards each tool to the REST endpoints) posts, replayed exactly as it builds them:
//! `analyze_strategy` parses "BUY 1 C 600, SELL 1 C 605" into `{action, quantity, type,
//! strike}` legs (action upper case, type "call"/"put", quantity an int, strike a float) with
//! no expiration or premium; `optimize_strategy` sends `target: "credit"` by default. The
//! priced legs are checked against the chain the same fixture serves on `/chain`.

mod common;
mod strategy_support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use strategy_support::{app, close, december, num, post};

/// `_parse_legs("BUY 1 C 600, SELL 1 C 605")` of apexvol-mcp 0.1.4.
fn client_legs() -> Value {
    json!([
        {"action": "BUY", "quantity": 1, "type": "call", "strike": 600.0},
        {"action": "SELL", "quantity": 1, "type": "call", "strike": 605.0}
    ])
}

/// The call mid the chain endpoint serves for `strike` at `expiration`.
async fn chain_call_mid(app: &axum::Router, expiration: &str, strike: f64) -> f64 {
    let chain = common::get(
        app,
        &format!("/api/mcp/data/chain/SPY?expiration={expiration}&strikes_around=0"),
        &[],
    )
    .await
    .json();
    let rows = chain["data"]["chains"][expiration].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| (r["Strike"].as_f64().unwrap() - strike).abs() < 1e-9)
        .unwrap_or_else(|| panic!("{strike} listed"));
    row["Call Mid"].as_f64().unwrap()
}

#[tokio::test]
async fn bare_legs_are_priced_at_the_nearest_expiration_from_the_chain_mids() {
    let app = app();
    let answer = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "legs": client_legs()}),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let data = answer.data();
    // The fixture's nearest expiration with time left is December's.
    let december = december().to_string();
    let priced = &data["priced_from_chain"];
    assert_eq!(priced["expiration"], december.as_str());
    close(num(priced, "days_to_expiration"), 28.0, 1e-9, "days");
    let buy_mid = chain_call_mid(&app, &december, 600.0).await;
    let sell_mid = chain_call_mid(&app, &december, 605.0).await;
    let legs = priced["legs"].as_array().unwrap();
    assert_eq!(legs.len(), 2);
    for (leg, (strike, mid)) in legs.iter().zip([(600.0, buy_mid), (605.0, sell_mid)]) {
        assert_eq!(leg["premium_source"], "chain_mid");
        assert_eq!(leg["type"], "CALL");
        close(num(leg, "strike"), strike, 0.0, "strike");
        close(num(leg, "premium"), mid, 1e-12, "premium = chain mid");
    }
    // The analysis used those prices and the chain's IVs.
    for (summary, mid) in data["legs_summary"]
        .as_array()
        .unwrap()
        .iter()
        .zip([buy_mid, sell_mid])
    {
        assert_eq!(summary["expiration"], december.as_str());
        close(num(summary, "premium"), mid, 1e-12, "summary premium");
        assert_eq!(summary["iv_source"], "chain");
    }
    close(
        num(&data, "net_premium"),
        100.0 * (sell_mid - buy_mid),
        1e-9,
        "net premium, credit positive",
    );
}

#[tokio::test]
async fn bare_legs_need_a_ticker_and_a_listed_strike() {
    let app = app();
    let no_ticker = post(&app, "/analyze-strategy", &json!({"legs": client_legs()})).await;
    assert_eq!(no_ticker.status, StatusCode::BAD_REQUEST);
    assert!(
        no_ticker.json()["error"]
            .as_str()
            .unwrap()
            .contains("legs[0].expiration: is required (or send ticker"),
    );
    let unlisted = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "legs": [{"action": "BUY", "quantity": 1, "type": "call", "strike": 601.0}]}),
    )
    .await;
    assert_eq!(unlisted.status, StatusCode::BAD_REQUEST);
    let message = unlisted.json()["error"].as_str().unwrap().to_owned();
    assert!(
        message.contains("601 is not listed") && message.contains("nearest listed: 595, 600, 605"),
        "{message}"
    );
    // A leg that carries its own premium keeps it; only the expiration is filled.
    let own = post(
        &app,
        "/analyze-strategy",
        &json!({"ticker": "SPY", "legs": [{"action": "BUY", "quantity": 1, "type": "call", "strike": 600.0, "premium": 9.5}]}),
    )
    .await
    .data();
    assert_eq!(
        own["priced_from_chain"]["legs"][0]["premium_source"],
        "request"
    );
    close(
        num(&own["legs_summary"][0], "premium"),
        9.5,
        0.0,
        "own premium",
    );
}

#[tokio::test]
async fn the_clients_default_target_credit_is_the_max_credit_search() {
    let app = app();
    // optimize_strategy(ticker, strategy_type, target="credit") of apexvol-mcp 0.1.4.
    let credit = post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "target": "credit"}),
    )
    .await;
    assert_eq!(
        credit.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&credit.body)
    );
    let credit = credit.data();
    let max_profit = post(
        &app,
        "/optimize-strategy",
        &json!({"ticker": "SPY", "strategy_type": "put_credit_spread", "target": "max_profit"}),
    )
    .await
    .data();
    assert_eq!(credit["optimization_target"], "max_profit");
    assert_eq!(credit["legs"], max_profit["legs"]);
    assert_eq!(credit["objective_value"], max_profit["objective_value"]);
}
