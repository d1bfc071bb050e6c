//! Dividend math against independent references.
//!
//! `tests/data/dividend_borrow_vectors.json` was written by
//! `scripts/reference/dividend_borrow_vectors.py` (pandas and numpy) from a deterministic
//! quarterly payment series and a grid of parity cases. Nothing in it comes from this crate.
//!
//! Tolerance: 1e-9 relative (the same sums and ratios, pandas summing in its own order).

mod reference_support;

use reference_support::{close, close_opt, date, f};

use optics_compute::dividend::{
    Payment, annual_totals, cagr_pct, declared_yield_pct, growth_pct, implied_dividend,
    trailing_annual,
};
use serde_json::Value;

fn vectors() -> Value {
    reference_support::vectors("dividend_borrow_vectors.json")
}

#[test]
fn payment_series_figures_match_pandas() {
    let v = vectors();
    let payments: Vec<Payment> = v["payments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Payment {
            ex_date: date(&p[0]),
            amount: f(&p[1]),
            per_year: Some(4),
        })
        .collect();
    for case in v["cases"].as_array().unwrap() {
        let as_of = date(&case["as_of"]);
        let past: Vec<Payment> = payments
            .iter()
            .copied()
            .filter(|p| p.ex_date <= as_of)
            .collect();
        let what = format!("as of {as_of}");
        close(
            trailing_annual(&payments, as_of),
            f(&case["trailing_annual"]),
            &format!("{what} trailing"),
        );
        let totals = annual_totals(&past, as_of);
        let expected = case["annual_totals"].as_array().unwrap();
        assert_eq!(totals.len(), expected.len(), "{what} totals");
        for (got, want) in totals.iter().zip(expected) {
            assert_eq!(i64::from(got.0), want[0].as_i64().unwrap(), "{what} year");
            close(got.1, f(&want[1]), &format!("{what} total {}", got.0));
        }
        close_opt(
            cagr_pct(&totals),
            &case["cagr_pct"],
            &format!("{what} cagr"),
        );
        close_opt(
            growth_pct(&past),
            &case["growth_pct"],
            &format!("{what} growth"),
        );
        close(
            past.last().unwrap().amount,
            f(&case["latest_amount"]),
            &format!("{what} latest"),
        );
    }
}

#[test]
fn yields_and_implied_dividends_match_numpy() {
    let v = vectors();
    for case in v["yields"].as_array().unwrap() {
        let per_year = u32::try_from(case["per_year"].as_u64().unwrap()).unwrap();
        close(
            declared_yield_pct(f(&case["amount"]), per_year, f(&case["price"])).unwrap(),
            f(&case["yield_pct"]),
            "yield",
        );
    }
    for case in v["implied"].as_array().unwrap() {
        let got =
            implied_dividend(f(&case["s"]), f(&case["f"]), f(&case["r"]), f(&case["t"])).unwrap();
        close(got.pv, f(&case["pv"]), "pv");
        close(got.annualised, f(&case["annualised"]), "annualised");
    }
}
