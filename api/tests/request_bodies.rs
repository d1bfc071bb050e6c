//! The typed request bodies of the strategy and risk endpoints through the real router: a bad
//! field is a 400 whose message starts with its path (`legs[1].strike: …`), and the lenient
//! forms clients send are read as the strict ones (same answer, figure for figure).

mod common;
mod strategy_support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use strategy_support::{app, december, post};

fn pop_body() -> Value {
    json!({"stock_price": 600.0, "days_to_exp": 30, "legs": [
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1}
    ]})
}

fn analyze_body() -> Value {
    let december = december().to_string();
    json!({"ticker": "SPY", "stock_price": 600.0, "legs": [
        {"type": "CALL", "action": "BUY", "strike": 600.0, "expiration": december, "premium": 8.2, "iv": 0.18},
        {"type": "CALL", "action": "SELL", "strike": 610.0, "expiration": december, "premium": 3.9, "iv": 0.17}
    ]})
}

fn book_body() -> Value {
    json!({"underlying_prices": {"SPY": 610.0}, "positions": [
        {"ticker": "SPY", "position_type": "STOCK", "quantity": 100, "entry_price": 600.0, "current_price": 610.0},
        {"ticker": "SPY", "position_type": "PUT", "quantity": -2, "strike": 590.0,
         "expiration": december().to_string(), "entry_price": 4.1, "current_price": 3.6,
         "delta": -0.28, "gamma": 0.012, "theta": -0.21, "vega": 0.55, "iv": 0.19}
    ]})
}

/// The 400's message, which must be exactly `expected`.
async fn message(path: &str, body: &Value) -> String {
    let app = app();
    let error = post(&app, path, body).await.error(StatusCode::BAD_REQUEST);
    error["error"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_bad_field_is_named_by_its_path() {
    let mut body = pop_body();
    body["legs"][1]["strike"] = json!("575 dollars");
    assert_eq!(
        message("/pop", &body).await,
        "legs[1].strike: must be a number, not the string \"575 dollars\""
    );
    let mut body = analyze_body();
    body["legs"][0]["expiration"] = json!("12/19/2025");
    assert_eq!(
        message("/analyze-strategy", &body).await,
        "legs[0].expiration: \"12/19/2025\" is not a date in the form YYYY-MM-DD"
    );
    // The same strict rule as a query date: no single-digit month or day.
    body["legs"][0]["expiration"] = json!("2026-1-5");
    assert_eq!(
        message("/analyze-strategy", &body).await,
        "legs[0].expiration: \"2026-1-5\" is not a date in the form YYYY-MM-DD"
    );
    let mut body = analyze_body();
    body["legs"][1]["action"] = json!(["BUY"]);
    assert_eq!(
        message("/analyze-strategy", &body).await,
        "legs[1].action: must be a string, not an array"
    );
    let mut body = book_body();
    body["positions"][1]["delta"] = json!(true);
    assert_eq!(
        message("/portfolio-greeks", &body).await,
        "positions[1].delta: must be a number, not a boolean"
    );
    let mut body = book_body();
    body["underlying_prices"]["SPY"] = json!("NaN");
    assert_eq!(
        message("/stress-tests", &body).await,
        "underlying_prices.SPY: must be a number, not the string \"NaN\""
    );
    let mut body = book_body();
    body["scenarios"] = json!([{"stock_move_pct": -5}, {"days_forward": {}}]);
    assert_eq!(
        message("/scenario-analysis", &body).await,
        "scenarios[1].days_forward: must be a number, not an object"
    );
    let body = json!({"sim_price": 600.0, "sim_dte": 10,
                      "chain": [{"Strike": 600.0, "IV Call": "inf"}]});
    assert_eq!(
        message("/simulate-chain", &body).await,
        "chain[0].IV Call: must be a number, not the string \"inf\""
    );
    let body = json!({"ticker": "SPY", "strategy_type": "iron_condor", "expiration": 20251219});
    assert_eq!(
        message("/build-strategy", &body).await,
        "expiration: must be a string, not a number"
    );
    let mut body = pop_body();
    body["legs"][0] = json!(5);
    assert!(
        message("/pop", &body).await.starts_with("legs[0]: "),
        "an entry that is not an object is named by its index"
    );
    assert_eq!(
        message("/pop", &json!([1, 2])).await,
        "the body must be a JSON object, not an array"
    );
}

#[tokio::test]
async fn list_bounds_are_checked_before_the_entries_are_read() {
    let mut body = pop_body();
    // 51 entries that are not legs at all: the count is refused, not the first entry.
    body["legs"] = json!(vec![json!("not a leg"); 51]);
    assert_eq!(
        message("/pop", &body).await,
        "legs: 51 entries given; at most 50 are accepted"
    );
    let mut body = book_body();
    body["positions"] = json!(vec![json!(0); 1_001]);
    assert_eq!(
        message("/portfolio-greeks", &body).await,
        "positions: 1001 entries given; at most 1000 are accepted"
    );
    let mut body = book_body();
    body["scenarios"] = json!(vec![json!({}); 101]);
    assert_eq!(
        message("/scenario-analysis", &body).await,
        "scenarios: 101 entries given; at most 100 are accepted"
    );
    let mut body = book_body();
    let prices: serde_json::Map<String, Value> =
        (0..1_001).map(|i| (format!("T{i}"), json!(1.0))).collect();
    body["underlying_prices"] = Value::Object(prices);
    assert_eq!(
        message("/portfolio-greeks", &body).await,
        "underlying_prices: 1001 entries given; at most 1000 are accepted"
    );
    let mut body = book_body();
    body["underlying_prices"] = json!([610.0]);
    assert_eq!(
        message("/hedge-recommendations", &body).await,
        "underlying_prices: must be an object of ticker → price, not an array"
    );
    // In a JSON string too, counted as the string's array is read.
    let mut body = pop_body();
    body["legs"] = json!(json!(vec![body["legs"][0].clone(); 51]).to_string());
    let text = message("/pop", &body).await;
    assert!(
        text.starts_with(
            "legs: (a JSON string): more than 50 entries given; at most 50 are accepted"
        ),
        "{text}"
    );
    let mut body = pop_body();
    body["legs"] = json!([]);
    assert_eq!(
        message("/pop", &body).await,
        "legs: at least one entry is required"
    );
}

/// The data of `path` for `body`, which must be a 200.
async fn data(path: &str, body: &Value) -> Value {
    let app = app();
    post(&app, path, body).await.data()
}

#[tokio::test]
async fn numbers_sent_as_strings_are_read_as_the_numbers() {
    let strict = data("/pop", &pop_body()).await;
    let mut lenient = pop_body();
    lenient["stock_price"] = json!("600");
    lenient["days_to_exp"] = json!(" 30 ");
    lenient["legs"][1]["strike"] = json!("575.0");
    lenient["legs"][1]["iv"] = json!("2.1e-1");
    assert_eq!(data("/pop", &lenient).await, strict);

    let strict = data("/stress-tests", &book_body()).await;
    let mut lenient = book_body();
    lenient["underlying_prices"]["SPY"] = json!("610");
    lenient["positions"][1]["quantity"] = json!("-2");
    assert_eq!(data("/stress-tests", &lenient).await, strict);
}

#[tokio::test]
async fn lists_sent_as_json_strings_are_read_as_the_lists() {
    for (path, body, field) in [
        ("/pop", pop_body(), "legs"),
        ("/analyze-strategy", analyze_body(), "legs"),
        ("/portfolio-greeks", book_body(), "positions"),
        ("/stress-tests", book_body(), "positions"),
    ] {
        let strict = data(path, &body).await;
        let mut lenient = body.clone();
        lenient[field] = json!(body[field].to_string());
        assert_eq!(
            data(path, &lenient).await,
            strict,
            "{path} {field} as a string"
        );
    }
    let mut body = book_body();
    body["scenarios"] = json!(r#"[{"stock_move_pct": -5, "iv_change_pct": 5}]"#);
    let lenient = data("/scenario-analysis", &body).await;
    body["scenarios"] = json!([{"stock_move_pct": -5, "iv_change_pct": 5}]);
    assert_eq!(data("/scenario-analysis", &body).await, lenient);
    // A string that does not hold an array is still a 400 naming the field, with where it
    // failed inside the string.
    let mut body = pop_body();
    body["legs"] = json!(r#"[{"strike": "575 dollars"}]"#);
    let text = message("/pop", &body).await;
    assert!(
        text.starts_with("legs: (a JSON string) at [0].strike: must be a number, not the string"),
        "{text}"
    );
    body["legs"] = json!("all of them");
    assert_eq!(
        message("/pop", &body).await,
        "legs: must be an array, not a string"
    );
    // A string inside the string is not read again.
    body["legs"] = json!(json!(pop_body()["legs"].to_string()).to_string());
    assert_eq!(
        message("/pop", &body).await,
        "legs: must be an array, not a string"
    );
}

#[tokio::test]
async fn enumerations_are_read_in_any_case() {
    let strict = data("/pop", &pop_body()).await;
    let mut body = pop_body();
    body["legs"][0]["option_type"] = json!("put");
    body["legs"][0]["action"] = json!("Sell");
    body["legs"][1]["option_type"] = json!("Put");
    body["legs"][1]["action"] = json!("buy");
    assert_eq!(data("/pop", &body).await, strict);

    let strict = data("/analyze-strategy", &analyze_body()).await;
    let mut body = analyze_body();
    body["legs"][0]["type"] = json!("call");
    body["legs"][1]["type"] = json!("cAlL");
    body["legs"][1]["action"] = json!("sell");
    assert_eq!(data("/analyze-strategy", &body).await, strict);

    let strict = data("/portfolio-greeks", &book_body()).await;
    let mut body = book_body();
    body["positions"][0]["position_type"] = json!("stock");
    body["positions"][1]["position_type"] = json!("put");
    body["positions"][1]["ticker"] = json!("spy");
    body["underlying_prices"] = json!({"spy": 610.0});
    assert_eq!(data("/portfolio-greeks", &body).await, strict);

    let body = json!({"ticker": "SPY", "strategy_type": "IRON_CONDOR", "target": "MAX_PROFIT",
                      "max_width": 10, "dte": 30});
    let upper = data("/optimize-strategy", &body).await;
    let body = json!({"ticker": "spy", "strategy_type": "iron_condor", "target": "max_profit",
                      "max_width": 10, "dte": 30});
    let lower = data("/optimize-strategy", &body).await;
    assert_eq!(upper["name"], lower["name"]);
    assert_eq!(upper["objective_value"], lower["objective_value"]);
}

#[tokio::test]
async fn leg_type_names_are_interchangeable_and_dates_trimmed() {
    // /pop reads `type` when `option_type` is absent; /analyze-strategy the reverse.
    let strict = data("/pop", &pop_body()).await;
    let mut body = pop_body();
    for leg in body["legs"].as_array_mut().unwrap() {
        let kind = leg.as_object_mut().unwrap().remove("option_type").unwrap();
        leg["type"] = kind;
    }
    assert_eq!(data("/pop", &body).await, strict);

    let strict = data("/analyze-strategy", &analyze_body()).await;
    let mut body = analyze_body();
    for leg in body["legs"].as_array_mut().unwrap() {
        let kind = leg.as_object_mut().unwrap().remove("type").unwrap();
        leg["option_type"] = kind;
        leg["expiration"] = json!(format!(" {} ", december()));
    }
    assert_eq!(data("/analyze-strategy", &body).await, strict);
}

#[tokio::test]
async fn openapi_documents_the_request_bodies() {
    let app = app();
    let answer = strategy_support::get(&app, "/openapi.json").await;
    assert_eq!(answer.status, StatusCode::OK);
    let doc = answer.json();
    let body = |path: &str| {
        doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"].clone()
    };
    let required = |schema: &Value| {
        let mut names: Vec<String> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        names.sort_unstable();
        names
    };
    let analyze = body("/analyze-strategy");
    assert_eq!(required(&analyze), ["legs", "ticker"]);
    assert_eq!(
        analyze["properties"]["legs"]["items"]["$ref"],
        "#/components/schemas/LegBody"
    );
    let leg = &doc["components"]["schemas"]["LegBody"];
    for field in [
        "option_type",
        "type",
        "action",
        "strike",
        "expiration",
        "iv",
    ] {
        assert!(leg["properties"][field].is_object(), "LegBody.{field}");
    }
    assert_eq!(
        required(&body("/pop")),
        ["days_to_exp", "legs", "stock_price"]
    );
    assert_eq!(
        required(&body("/build-strategy")),
        ["strategy_type", "ticker"]
    );
    assert_eq!(required(&body("/simulate-chain")), ["sim_dte", "sim_price"]);
    assert!(body("/simulate-chain")["properties"]["chain"].is_object());
    for path in [
        "/portfolio-greeks",
        "/scenario-analysis",
        "/stress-tests",
        "/hedge-recommendations",
    ] {
        let schema = body(path);
        assert_eq!(required(&schema), ["positions"], "{path}");
        assert_eq!(
            schema["properties"]["positions"]["items"]["$ref"], "#/components/schemas/PositionBody",
            "{path}"
        );
    }
    assert!(body("/scenario-analysis")["properties"]["scenarios"].is_object());
    assert!(body("/hedge-recommendations")["properties"]["hedge_ticker"].is_object());
}
