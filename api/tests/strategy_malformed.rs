//! Hostile bodies against all nine strategy and risk endpoints through the real router. Every
//! answer must be a 200 (the input happened to be valid), a 400 (the body is wrong) or a 424
//! (the market data the valid request needs is missing) — a 404 only for a ticker field, the
//! coverage rule — and never a 500: a failure is always the `{success: false, error}` envelope
//! with a non-empty reason.
//!
//! Two tables: whole bodies that are not a usable object (non-object JSON, truncated JSON,
//! wrong content type, …) with the status each must get, and mutations of one field at a time
//! in a valid body of each endpoint (strings for numbers, NaN-ish strings, ±1e308, negative
//! numbers, null, wrong JSON kinds, empty arrays, 10,000 entries, the field removed); then
//! property-based cases: several fields changed to arbitrary JSON at once, and whole arbitrary
//! documents.

mod common;
mod strategy_support;

use axum::http::{Method, StatusCode};
use optics_compute::strategy;
use serde_json::{Value, json};
use strategy_support::{app, december, post, post_raw};

use crate::common::{Answer, with_body};

/// The nine endpoints with a valid body each (simulate-chain twice: rows in the body, and a
/// ticker whose live chain is fetched).
fn valid_bodies() -> Vec<(&'static str, Value)> {
    let december = december().to_string();
    let legs = json!([
        {"type": "CALL", "action": "BUY", "strike": 600.0, "expiration": december, "premium": 8.2, "quantity": 1, "iv": 0.18},
        {"type": "CALL", "action": "SELL", "strike": 610.0, "expiration": december, "premium": 3.9, "quantity": 1, "iv": 0.17}
    ]);
    let pop_legs = json!([
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0, "quantity": 1},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1, "quantity": 1}
    ]);
    let positions = json!([
        {"ticker": "SPY", "position_type": "STOCK", "quantity": 100, "entry_price": 600.0, "current_price": 610.0},
        {"ticker": "SPY", "position_type": "PUT", "quantity": -2, "strike": 590.0,
         "expiration": december, "entry_price": 4.1, "current_price": 3.6,
         "delta": -0.28, "gamma": 0.012, "theta": -0.21, "vega": 0.55, "iv": 0.19}
    ]);
    vec![
        (
            "/analyze-strategy",
            json!({"ticker": "SPY", "stock_price": 600.0, "name": "Bull call", "legs": legs}),
        ),
        (
            "/pop",
            json!({"ticker": "SPY", "stock_price": 600.0, "days_to_exp": 28, "rate": 0.045,
                   "dividend_yield": 0.012, "legs": pop_legs}),
        ),
        (
            "/build-strategy",
            json!({"ticker": "SPY", "strategy_type": "iron_condor", "target_delta": 0.3,
                   "width": 5, "dte": 30, "expiration": december}),
        ),
        (
            "/optimize-strategy",
            json!({"ticker": "SPY", "strategy_type": "iron_condor", "target": "max_profit",
                   "max_width": 10, "min_credit": 0.1, "dte": 30}),
        ),
        (
            "/simulate-chain",
            json!({"sim_price": 600.0, "sim_dte": 10, "iv_adjustment": 2, "expiration": december,
                   "chain": [{"Strike": 600.0, "IV Call": 0.2, "Call Bid": 5.0, "Call Ask": 5.2,
                              "IV Put": 0.21, "Put Bid": 4.0, "Put Ask": 4.2}]}),
        ),
        (
            "/simulate-chain",
            json!({"ticker": "SPY", "sim_price": 600.0, "sim_dte": 10, "strikes_around": 5,
                   "expiration": december}),
        ),
        (
            "/portfolio-greeks",
            json!({"positions": positions, "underlying_prices": {"SPY": 610.0}}),
        ),
        (
            "/scenario-analysis",
            json!({"positions": positions, "scenarios": [
                {"stock_move_pct": -5, "iv_change_pct": 5, "days_forward": 7}]}),
        ),
        ("/stress-tests", json!({"positions": positions})),
        (
            "/hedge-recommendations",
            json!({"positions": positions, "target_delta": 0, "hedge_ticker": "SPY"}),
        ),
    ]
}

/// The nine paths.
const PATHS: [&str; 9] = [
    "/analyze-strategy",
    "/pop",
    "/build-strategy",
    "/optimize-strategy",
    "/simulate-chain",
    "/portfolio-greeks",
    "/scenario-analysis",
    "/stress-tests",
    "/hedge-recommendations",
];

/// Checks an answer against the allowed statuses; a failure must be the error envelope
/// (`Answer::error`: JSON, success false, a non-empty error), a success the data envelope.
fn check(answer: &Answer, allowed: &[StatusCode], what: &str) {
    assert!(
        allowed.contains(&answer.status),
        "{what}: status {} not in {allowed:?}; body {}",
        answer.status,
        answer.text().chars().take(600).collect::<String>()
    );
    if answer.status == StatusCode::OK {
        answer.data();
    } else {
        answer.error(answer.status);
    }
}

const BAD: StatusCode = StatusCode::BAD_REQUEST;
const UPSTREAM: StatusCode = StatusCode::FAILED_DEPENDENCY;

#[tokio::test]
async fn the_valid_bodies_are_valid() {
    // The baseline the mutations start from: without it a table of 400s proves nothing.
    let app = app();
    for (path, body) in valid_bodies() {
        post(&app, path, &body).await.data();
    }
}

#[tokio::test]
async fn bodies_that_are_not_a_usable_object_are_400_on_every_endpoint() {
    let app = app();
    let deep = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    let raw_cases: [(&str, &str); 14] = [
        ("a number", "42"),
        ("a string", "\"legs\""),
        ("null", "null"),
        ("a boolean", "true"),
        ("an array", "[1, 2]"),
        ("an empty array", "[]"),
        ("an array of objects", "[{\"ticker\": \"SPY\"}]"),
        ("an empty object", "{}"),
        ("truncated JSON", "{\"legs\": ["),
        ("an unterminated string", "{\"ticker\": \"SP"),
        ("an empty body", ""),
        ("bare NaN", "{\"stock_price\": NaN}"),
        ("a number beyond f64", "{\"stock_price\": 1e999}"),
        ("5,000 nested arrays", deep.as_str()),
    ];
    for path in PATHS {
        for (what, raw) in raw_cases {
            let answer = post_raw(&app, path, raw).await;
            check(&answer, &[BAD], &format!("{path} with {what}"));
        }
    }
    // A valid body with the wrong content type, or none: still a 400 with a reason.
    for (path, body) in valid_bodies() {
        let text = body.to_string();
        let uri = format!("{}{path}", optics_api::DATA_PREFIX);
        for content_type in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            None,
        ] {
            let answer = with_body(&app, Method::POST, &uri, content_type, &text).await;
            check(&answer, &[BAD], &format!("{path} as {content_type:?}"));
        }
    }
}

/// A JSON value reached from the body's root: object keys and array indices.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn path_text(steps: &[Step]) -> String {
    let mut text = String::new();
    for step in steps {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// Every value of `value` with its path (the first element only of each array).
fn fields(value: &Value, at: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, Value)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                at.push(Step::Key(key.clone()));
                out.push((at.clone(), child.clone()));
                fields(child, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                at.push(Step::Index(0));
                out.push((at.clone(), first.clone()));
                fields(first, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// `body` with the value at `steps` replaced (`Some`) or removed (`None`).
fn mutated(body: &Value, steps: &[Step], replacement: Option<Value>) -> Value {
    let mut body = body.clone();
    let (last, parents) = steps.split_last().expect("a field path is never empty");
    let mut node = &mut body;
    for step in parents {
        node = match step {
            Step::Key(key) => &mut node[key.as_str()],
            Step::Index(i) => &mut node[*i],
        };
    }
    match (last, replacement) {
        (Step::Key(key), Some(value)) => node[key.as_str()] = value,
        (Step::Key(key), None) => {
            node.as_object_mut().unwrap().remove(key);
        }
        (Step::Index(i), Some(value)) => node[*i] = value,
        (Step::Index(i), None) => {
            node.as_array_mut().unwrap().remove(*i);
        }
    }
    body
}

/// The replacements tried on every field.
fn hostile_values() -> Vec<(&'static str, Value)> {
    vec![
        ("a numeric string", json!("600")),
        ("the string NaN", json!("NaN")),
        ("the string Infinity", json!("Infinity")),
        ("the string -inf", json!("-inf")),
        ("an empty string", json!("")),
        ("a 10,000-character string", json!("X".repeat(10_000))),
        ("1e308", json!(1e308)),
        ("-1e308", json!(-1e308)),
        ("5e-324", json!(5e-324)),
        ("-1", json!(-1)),
        ("-600.5", json!(-600.5)),
        ("0", json!(0)),
        ("1.5", json!(1.5)),
        ("2^63", json!(9_223_372_036_854_775_808u64)),
        ("null", Value::Null),
        ("true", json!(true)),
        ("an object", json!({})),
        ("an empty array", json!([])),
        ("an array of a number", json!([1])),
    ]
}

#[tokio::test]
async fn every_field_of_every_endpoint_survives_hostile_values() {
    let app = app();
    for (path, body) in valid_bodies() {
        let mut all = Vec::new();
        fields(&body, &mut Vec::new(), &mut all);
        for (steps, original) in all {
            let field = path_text(&steps);
            // A symbol that parses but is not covered is a 404 (the coverage rule).
            let names_a_ticker =
                matches!(steps.last(), Some(Step::Key(k)) if k.ends_with("ticker"));
            let mut allowed = vec![StatusCode::OK, BAD, UPSTREAM];
            if names_a_ticker {
                allowed.push(StatusCode::NOT_FOUND);
            }
            let mut cases = hostile_values();
            if let Value::Array(items) = &original
                && let Some(first) = items.first()
            {
                cases.push(("10,000 entries", Value::Array(vec![first.clone(); 10_000])));
            }
            for (what, value) in cases {
                let answer = post(&app, path, &mutated(&body, &steps, Some(value))).await;
                check(&answer, &allowed, &format!("{path} {field} = {what}"));
            }
            let answer = post(&app, path, &mutated(&body, &steps, None)).await;
            check(&answer, &allowed, &format!("{path} without {field}"));
        }
    }
}

/// The body with `field` set to `value`.
fn with(body: &Value, field: &str, value: Value) -> Value {
    let mut body = body.clone();
    body[field] = value;
    body
}

/// The body with `field` removed.
fn without(body: &Value, field: &str) -> Value {
    let mut body = body.clone();
    body.as_object_mut().unwrap().remove(field);
    body
}

/// The valid body of `path` (the first one listed).
fn valid(path: &str) -> Value {
    valid_bodies()
        .into_iter()
        .find(|(p, _)| *p == path)
        .map(|(_, body)| body)
        .unwrap()
}

#[tokio::test]
async fn named_malformed_cases_are_400s_that_name_the_field() {
    let app = app();
    let legs_field = |path: &str| match path {
        "/analyze-strategy" | "/pop" => "legs",
        "/simulate-chain" => "chain",
        _ => "positions",
    };
    let mut cases: Vec<(&str, Value, &str)> = Vec::new();
    // Empty arrays and lists over the cap (10,000 legs or positions; simulate-chain
    // re-prices up to 10,000 rows, so 10,001) on every endpoint that takes a list.
    for path in [
        "/analyze-strategy",
        "/pop",
        "/simulate-chain",
        "/portfolio-greeks",
        "/scenario-analysis",
        "/stress-tests",
        "/hedge-recommendations",
    ] {
        let body = valid(path);
        let field = legs_field(path);
        let first = body[field][0].clone();
        cases.push((path, with(&body, field, json!([])), field));
        let too_many = if path == "/simulate-chain" {
            strategy::simulate::MAX_SIM_ROWS + 1
        } else {
            10_000
        };
        cases.push((
            path,
            with(&body, field, json!(vec![first; too_many])),
            field,
        ));
        cases.push((path, with(&body, field, json!("all of them")), field));
    }
    // Negative strikes and quantities on legs (a negative position quantity is a short and
    // valid; a negative option strike is not).
    for path in ["/analyze-strategy", "/pop"] {
        let body = valid(path);
        let mut negative_strike = body.clone();
        negative_strike["legs"][0]["strike"] = json!(-600.0);
        cases.push((path, negative_strike, "legs[0].strike"));
        let mut negative_quantity = body.clone();
        negative_quantity["legs"][1]["quantity"] = json!(-1);
        cases.push((path, negative_quantity, "legs[1].quantity"));
        let mut string_premium = body.clone();
        string_premium["legs"][0]["premium"] = json!("8.2 USD");
        cases.push((path, string_premium, "legs[0].premium"));
        let mut nan_iv = body.clone();
        nan_iv["legs"][0]["iv"] = json!("NaN");
        cases.push((path, nan_iv, "legs[0].iv"));
    }
    for path in ["/portfolio-greeks", "/stress-tests"] {
        let mut negative_strike = valid(path);
        negative_strike["positions"][1]["strike"] = json!(-590.0);
        cases.push((path, negative_strike, "positions[1].strike"));
        let mut string_delta = valid(path);
        string_delta["positions"][1]["delta"] = json!("-0.28 per share");
        cases.push((path, string_delta, "positions[1].delta"));
    }
    // Build and optimize: a missing ticker, strings for numbers, huge numbers.
    for path in ["/build-strategy", "/optimize-strategy"] {
        let body = valid(path);
        cases.push((path, without(&body, "ticker"), "ticker"));
        cases.push((path, without(&body, "strategy_type"), "strategy_type"));
        cases.push((path, with(&body, "dte", json!("30 days")), "dte"));
        cases.push((path, with(&body, "dte", json!(1e308)), "dte"));
    }
    let optimize = valid("/optimize-strategy");
    cases.push((
        "/optimize-strategy",
        with(&optimize, "min_credit", json!("fifty cents")),
        "min_credit",
    ));
    cases.push((
        "/optimize-strategy",
        with(&optimize, "min_credit", json!(-1)),
        "min_credit",
    ));
    let build = valid("/build-strategy");
    cases.push((
        "/build-strategy",
        with(&build, "width", json!(1e308)),
        "width",
    ));
    cases.push((
        "/build-strategy",
        with(&build, "target_delta", json!("0.3 delta")),
        "target_delta",
    ));
    let pop = valid("/pop");
    cases.push((
        "/pop",
        with(&pop, "stock_price", json!(1e308)),
        "stock_price",
    ));
    cases.push(("/pop", with(&pop, "rate", json!(4.5)), "rate"));
    cases.push((
        "/pop",
        with(&pop, "dividend_yield", json!("1.2%")),
        "dividend_yield",
    ));
    let analyze = valid("/analyze-strategy");
    cases.push((
        "/analyze-strategy",
        with(&analyze, "stock_price", json!(1e308)),
        "stock_price",
    ));
    let simulate = valid("/simulate-chain");
    cases.push((
        "/simulate-chain",
        with(&simulate, "sim_price", json!(1e308)),
        "sim_price",
    ));
    cases.push((
        "/simulate-chain",
        with(&simulate, "sim_dte", json!("ten")),
        "sim_dte",
    ));
    cases.push((
        "/simulate-chain",
        without(&without(&simulate, "chain"), "ticker"),
        "chain or ticker",
    ));
    let hedge = valid("/hedge-recommendations");
    cases.push((
        "/hedge-recommendations",
        with(&hedge, "target_delta", json!(1e308)),
        "target_delta",
    ));
    let scenario = valid("/scenario-analysis");
    cases.push((
        "/scenario-analysis",
        with(&scenario, "scenarios", json!([{"stock_move_pct": "-5%"}])),
        "scenarios[0].stock_move_pct",
    ));
    for (path, body, names) in cases {
        let answer = post(&app, path, &body).await;
        check(&answer, &[BAD], &format!("{path} naming {names}"));
        let message = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(
            message.contains(names),
            "{path}: {message:?} should name {names:?}"
        );
    }
}

/// Any JSON value, up to a few levels deep, with the strings and numbers a hostile client
/// sends most.
fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop_oneof![
            Just("SPY".to_owned()),
            Just("CALL".to_owned()),
            Just("sell".to_owned()),
            Just("2026-12-18".to_owned()),
            Just("[{}]".to_owned()),
            ".{0,12}",
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,14}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 192,
        ..proptest::test_runner::Config::default()
    })]

    /// Several fields of a valid body changed at once to arbitrary JSON (or removed): still a
    /// 200, 400, 404 or 424 with its envelope, never a 500.
    #[test]
    fn several_fields_at_once_never_break_an_endpoint(
        endpoint in 0..10usize,
        picks in proptest::collection::vec(
            (proptest::prelude::any::<proptest::sample::Index>(), proptest::option::of(any_json())),
            1..5,
        ),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (path, mut body) = valid_bodies().swap_remove(endpoint);
        for (pick, replacement) in picks {
            let mut all = Vec::new();
            fields(&body, &mut Vec::new(), &mut all);
            if all.is_empty() {
                break;
            }
            let (steps, _) = &all[pick.index(all.len())];
            body = mutated(&body, steps, replacement);
        }
        let answer = runtime.block_on(async { post(&app(), path, &body).await });
        check(
            &answer,
            &[StatusCode::OK, BAD, StatusCode::NOT_FOUND, UPSTREAM],
            &format!("{path} {body}"),
        );
    }

    /// A whole body of arbitrary JSON on each endpoint: a 400 unless it happens to be valid.
    #[test]
    fn arbitrary_documents_are_answered_with_an_envelope(
        endpoint in 0..9usize,
        body in any_json(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let path = PATHS[endpoint];
        let answer = runtime.block_on(async { post(&app(), path, &body).await });
        check(
            &answer,
            &[StatusCode::OK, BAD, StatusCode::NOT_FOUND, UPSTREAM],
            &format!("{path} {body}"),
        );
    }
}
