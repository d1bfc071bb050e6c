//! Volatility math against independent references on a real series.
//!
//! `tests/data/vol_vectors.json` was written by `scripts/reference/vol_vectors.py` (numpy,
//! pandas and `arch`; see that script and `scripts/reference/README.md`) from the last 1,300
//! sessions of the S&P 500 OHLC bundled with `arch`. Nothing in it comes from this crate.
//!
//! Tolerances, and why:
//! - HV (10/20/60/252 sessions, last value and the whole rolling series), cone figures, IV
//!   rank/percentile: 1e-9 relative. Both sides compute a two-pass sample std (pandas' rolling
//!   std is a running-sum algorithm, accurate to ~1e-12 on these magnitudes) and the same
//!   order statistics.
//! - Parkinson, Garman–Klass, Yang–Zhang: 1e-10 relative (the same sums, different order).
//! - GARCH(1,1): the log-likelihood **at arch's parameters** to 1e-10 relative (same backcast,
//!   same recursion: this pins the objective); our maximised log-likelihood no lower than
//!   arch's by more than 1e-9 relative (two optimisers on the same objective; ours may be
//!   higher); parameters within 1e-5 absolute and forecasts, last variance and long-run vol
//!   within 1e-4 relative. Measured: likelihoods equal to ~5e-15 relative, parameters to ~1e-7
//!   (arch's SLSQP at tol 1e-12 against our Nelder–Mead); a flat likelihood surface lets two
//!   optimisers stop that far apart, so the bounds keep two orders of margin.
//! - VIX on synthetic chains against a plain Python implementation of the white paper:
//!   forward, strip sum, σ² and the index to 1e-12 relative; forward strike, K₀, strike counts
//!   and strip ends exactly.

mod reference_support;

use reference_support::{f, floats};

use optics_compute::vol::{
    BidAsk, GarchParams, OhlcBar, RangeEstimator, VixStrike, distribution, fit_garch11,
    garch_backcast, garch11_log_likelihood, hv, hv_series, iv_rank_percentile, pct_log_returns,
    percentile_of, range_vol, range_vol_series, vix_index, vix_term_variance,
};
use serde_json::Value;

fn optional_floats(v: &Value) -> Vec<Option<f64>> {
    v.as_array().unwrap().iter().map(Value::as_f64).collect()
}

#[track_caller]
fn rel(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(
        (got - want).abs() <= tolerance * want.abs().max(1e-300),
        "{what}: got {got}, reference {want}, relative error {:e}",
        (got - want).abs() / want.abs()
    );
}

fn bars(v: &Value) -> Vec<OhlcBar> {
    let (o, h, l, c) = (
        floats(&v["open"]),
        floats(&v["high"]),
        floats(&v["low"]),
        floats(&v["close"]),
    );
    (0..c.len())
        .map(|i| OhlcBar {
            open: o[i],
            high: h[i],
            low: l[i],
            close: c[i],
        })
        .collect()
}

fn series_match(got: &[Option<f64>], want: &[Option<f64>], tolerance: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        match (g, w) {
            (Some(g), Some(w)) => rel(*g, *w, tolerance, &format!("{what}[{i}]")),
            (None, None) => {}
            _ => panic!("{what}[{i}]: got {g:?}, reference {w:?}"),
        }
    }
}

fn vectors() -> Value {
    reference_support::vectors("vol_vectors.json")
}

#[test]
fn hv_and_cones_against_numpy() {
    let v = vectors();
    let closes = floats(&v["close"]);
    for window in [10usize, 20, 60, 252] {
        let key = window.to_string();
        rel(
            hv(&closes, window).unwrap(),
            f(&v["hv"]["last"][&key]),
            1e-9,
            &format!("hv {window}"),
        );
        let series = hv_series(&closes, window);
        series_match(
            &series,
            &optional_floats(&v["hv"]["series"][&key]),
            1e-9,
            &format!("hv series {window}"),
        );
        let values: Vec<f64> = series.into_iter().flatten().collect();
        let cone = distribution(&values).unwrap();
        let want = &v["hv"]["cone"][&key];
        assert_eq!(cone.count as u64, want["count"].as_u64().unwrap());
        for (name, got) in [
            ("min", cone.min),
            ("p10", cone.p10),
            ("p25", cone.p25),
            ("p50", cone.p50),
            ("p75", cone.p75),
            ("p90", cone.p90),
            ("max", cone.max),
            ("mean", cone.mean),
        ] {
            rel(got, f(&want[name]), 1e-9, &format!("cone {window} {name}"));
        }
    }
}

#[test]
fn iv_rank_and_percentiles_against_numpy() {
    let v = &vectors()["iv_rank"];
    let iv = floats(&v["iv_series"]);
    let (lookback, current) = iv.split_at(iv.len() - 1);
    let got = iv_rank_percentile(lookback, current[0]).unwrap();
    rel(got.iv_rank.unwrap(), f(&v["rank"]), 1e-9, "iv rank");
    rel(
        got.iv_percentile,
        f(&v["percentile"]),
        1e-9,
        "iv percentile",
    );
    rel(got.iv_min_pct, f(&v["min"]), 1e-12, "min");
    rel(got.iv_max_pct, f(&v["max"]), 1e-12, "max");
    rel(got.iv_mean_pct, f(&v["mean"]), 1e-9, "mean");
    rel(got.iv_std_pct.unwrap(), f(&v["std"]), 1e-9, "std");
    let vrp = floats(&v["vrp_series"]);
    let (history, last) = vrp.split_at(vrp.len() - 1);
    rel(
        percentile_of(history, last[0]).unwrap(),
        f(&v["vrp_percentile_of_last"]),
        1e-9,
        "vrp percentile",
    );
}

#[test]
fn range_estimators_against_numpy() {
    let v = vectors();
    let bars = bars(&v);
    for (name, estimator) in [
        ("parkinson", RangeEstimator::Parkinson),
        ("garman_klass", RangeEstimator::GarmanKlass),
        ("yang_zhang", RangeEstimator::YangZhang),
    ] {
        assert_eq!(estimator.code(), name);
        for window in [10usize, 20, 60, 252] {
            rel(
                range_vol(&bars, window, estimator).unwrap().unwrap(),
                f(&v["range"]["last"][name][window.to_string()]),
                1e-10,
                &format!("{name} {window}"),
            );
        }
        series_match(
            &range_vol_series(&bars, 20, estimator).unwrap(),
            &optional_floats(&v["range"]["series_20"][name]),
            1e-10,
            &format!("{name} series"),
        );
    }
}

#[test]
fn garch_against_arch() {
    let v = vectors();
    let all = pct_log_returns(&floats(&v["close"])).unwrap();
    for case in v["garch"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let from = case["returns_from"].as_u64().unwrap() as usize;
        let returns = &all[from..];
        assert_eq!(returns.len() as u64, case["observations"].as_u64().unwrap());
        rel(
            garch_backcast(returns),
            f(&case["backcast"]),
            1e-12,
            "backcast",
        );
        let theirs = GarchParams {
            mu: f(&case["mu"]),
            omega: f(&case["omega"]),
            alpha: f(&case["alpha"]),
            beta: f(&case["beta"]),
        };
        let arch_ll = f(&case["log_likelihood"]);
        rel(
            garch11_log_likelihood(returns, &theirs).unwrap(),
            arch_ll,
            1e-10,
            &format!("{name}: log-likelihood at arch's parameters"),
        );

        let fit = fit_garch11(returns).unwrap();
        assert!(
            fit.log_likelihood >= arch_ll - 1e-9 * arch_ll.abs(),
            "{name}: ours {} below arch {arch_ll}",
            fit.log_likelihood
        );
        for (what, got, want) in [
            ("mu", fit.params.mu, theirs.mu),
            ("omega", fit.params.omega, theirs.omega),
            ("alpha", fit.params.alpha, theirs.alpha),
            ("beta", fit.params.beta, theirs.beta),
        ] {
            assert!(
                (got - want).abs() <= 1e-5,
                "{name} {what}: ours {got}, arch {want}"
            );
        }
        rel(
            fit.long_run_vol_pct,
            f(&case["long_run_vol_pct"]),
            1e-4,
            "long-run vol",
        );
        rel(
            fit.last_variance,
            f(&case["last_variance"]),
            1e-4,
            "last variance",
        );
        let forecast = fit.variance_forecast(60);
        for (h, want) in floats(&case["variance_forecast"]).iter().enumerate() {
            rel(
                forecast[h],
                *want,
                1e-4,
                &format!("{name} variance h{}", h + 1),
            );
        }
        for h in [1usize, 5, 20, 60] {
            rel(
                fit.forecast_vol_pct(h).unwrap(),
                f(&case["forecast_vol_pct"][h.to_string()]),
                1e-4,
                &format!("{name} forecast vol {h}"),
            );
        }
    }
}

fn chain(rows: &Value) -> Vec<VixStrike> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let x = floats(r);
            VixStrike {
                strike: x[0],
                call: Some(BidAsk {
                    bid: x[1],
                    ask: x[2],
                }),
                put: Some(BidAsk {
                    bid: x[3],
                    ask: x[4],
                }),
            }
        })
        .collect()
}

#[test]
fn vix_against_a_plain_python_implementation() {
    let v = vectors();
    for (i, case) in v["vix"].as_array().unwrap().iter().enumerate() {
        let mut terms = Vec::new();
        for key in ["near", "next"] {
            let t = &case[key];
            let term =
                vix_term_variance(&chain(&t["chain"]), f(&t["years"]), f(&t["rate"])).unwrap();
            let e = &t["expected"];
            let what = format!("case {i} {key}");
            assert_eq!(term.forward_strike, f(&e["forward_strike"]), "{what}");
            assert_eq!(term.k0, f(&e["k0"]), "{what}");
            assert_eq!(
                term.puts_used as u64,
                e["puts_used"].as_u64().unwrap(),
                "{what}"
            );
            assert_eq!(
                term.calls_used as u64,
                e["calls_used"].as_u64().unwrap(),
                "{what}"
            );
            assert_eq!(term.strip[0].strike, f(&e["lowest_strike"]), "{what}");
            assert_eq!(
                term.strip.last().unwrap().strike,
                f(&e["highest_strike"]),
                "{what}"
            );
            rel(term.forward, f(&e["forward"]), 1e-12, &what);
            rel(term.strip_sum, f(&e["strip_sum"]), 1e-12, &what);
            rel(
                term.forward_adjustment,
                f(&e["forward_adjustment"]),
                1e-9,
                &what,
            );
            rel(term.variance, f(&e["variance"]), 1e-12, &what);
            terms.push(term);
        }
        let index = vix_index(&terms[0], &terms[1]).unwrap();
        rel(index.vix, f(&case["vix"]), 1e-12, &format!("case {i} VIX"));
    }
}
