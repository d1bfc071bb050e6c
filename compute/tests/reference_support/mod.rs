//! Shared by the `*_reference` tests: reading a vector file from `tests/data` and comparing
//! figures with it to 1e-9 relative (floor 1).

#![allow(dead_code)]

use chrono::NaiveDate;
use serde_json::Value;

/// `tests/data/<file>` parsed.
pub fn vectors(file: &str) -> Value {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn date(v: &Value) -> NaiveDate {
    v.as_str().unwrap().parse().unwrap()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// `[[date, value], …]` as pairs.
pub fn dated(v: &Value) -> Vec<(NaiveDate, f64)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| (date(&p[0]), f(&p[1])))
        .collect()
}

/// `actual` within 1e-9 of `expected`, relative with a floor of 1.
#[track_caller]
pub fn close(actual: f64, expected: f64, what: &str) {
    let scale = expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= 1e-9 * scale,
        "{what}: {actual} against {expected}"
    );
}

/// [`close`] where the reference holds a number, `None` where it holds null.
#[track_caller]
pub fn close_opt(actual: Option<f64>, expected: &Value, what: &str) {
    match expected.as_f64() {
        Some(e) => close(actual.unwrap_or(f64::NAN), e, what),
        None => assert_eq!(actual, None, "{what}"),
    }
}
