//! Correlation math against independent references on a real series.
//!
//! `tests/data/stock_vectors.json` was written by `scripts/reference/stock_vectors.py` (pandas)
//! from the S&P 500 closes bundled with `arch` and a deterministic second series on the same
//! sessions less every 13th. Nothing in it comes from this crate.
//!
//! Tolerance: 1e-9 (pandas' rolling moments sum in another order); dates, counts and which
//! windows are null exactly.

mod reference_support;

use reference_support::{close_opt, dated};

use optics_compute::correlation::{
    WINDOW_1M, WINDOW_1Y, align, beta, correlation, last_n, log_returns, rolling,
};
use serde_json::Value;

fn vectors() -> Value {
    reference_support::vectors("stock_vectors.json")
}

#[test]
fn current_and_rolling_figures_match_pandas() {
    let v = vectors();
    let pairs = align(
        &log_returns(&dated(&v["second"])),
        &log_returns(&dated(&v["benchmark"])),
    );
    assert_eq!(pairs.len() as u64, v["joined_returns"].as_u64().unwrap());
    let cur = &v["current"];
    close_opt(
        last_n(&pairs, WINDOW_1M).and_then(correlation),
        &cur["correlation_1m"],
        "correlation_1m",
    );
    close_opt(
        last_n(&pairs, WINDOW_1Y).and_then(correlation),
        &cur["correlation_1y"],
        "correlation_1y",
    );
    close_opt(
        last_n(&pairs, WINDOW_1M).and_then(beta),
        &cur["beta_1m"],
        "beta_1m",
    );
    close_opt(
        last_n(&pairs, WINDOW_1Y).and_then(beta),
        &cur["beta_1y"],
        "beta_1y",
    );

    let days = usize::try_from(v["series_days"].as_u64().unwrap()).unwrap();
    let series = rolling(&pairs, days);
    let expected = v["series"].as_array().unwrap();
    assert_eq!(series.len(), expected.len());
    for (got, want) in series.iter().zip(expected) {
        let d = want["date"].as_str().unwrap();
        assert_eq!(got.date.to_string(), d);
        close_opt(got.correl_1m, &want["correl_1m"], &format!("{d} correl_1m"));
        close_opt(got.correl_1y, &want["correl_1y"], &format!("{d} correl_1y"));
        close_opt(got.beta_1m, &want["beta_1m"], &format!("{d} beta_1m"));
    }
    assert!(series.iter().any(|p| p.correl_1y.is_none()));
}
