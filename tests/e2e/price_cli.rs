//! `optics price`: the single-contract calculator, run as a user runs it.

use optics_tests::{run_optics, stdout_json};

const OPTICS: &str = env!("CARGO_BIN_EXE_optics");

#[test]
fn prices_a_call_and_reports_every_greek() {
    let output = run_optics(
        OPTICS,
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "105", "--days", "30",
            "--rate", "0.05", "--div", "0.01", "--iv", "0.25",
        ],
    );
    let json = stdout_json(&output);
    let price = json["price"].as_f64().unwrap();
    // Independent textbook evaluation of the same contract.
    let expected = textbook_call(100.0, 105.0, 30.0 / 365.0, 0.05, 0.01, 0.25);
    assert!((price - expected).abs() < 1e-12, "{price} vs {expected}");
    for greek in [
        "delta",
        "gamma",
        "theta",
        "vega",
        "rho",
        "epsilon",
        "vanna",
        "charm",
        "vomma",
        "veta",
        "speed",
        "zomma",
        "color",
        "ultima",
        "dual_delta",
    ] {
        assert!(
            json["greeks"][greek].as_f64().is_some_and(f64::is_finite),
            "{greek}"
        );
        assert!(json["units"][greek].is_string(), "unit of {greek}");
    }
    assert_eq!(json["iv_source"], "input");
}

#[test]
fn solves_the_implied_vol_from_a_price() {
    let output = run_optics(
        OPTICS,
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "105", "--days", "30",
            "--rate", "0.05", "--div", "0.01", "--price", "1.17",
        ],
    );
    let json = stdout_json(&output);
    let iv = json["iv"].as_f64().unwrap();
    let repriced = textbook_call(100.0, 105.0, 30.0 / 365.0, 0.05, 0.01, iv);
    assert!(
        (repriced - 1.17).abs() < 1e-12,
        "iv {iv} reprices to {repriced}"
    );
    assert_eq!(json["iv_source"], "solved_from_price");
}

#[test]
fn index_options_price_on_the_forward() {
    let output = run_optics(
        OPTICS,
        &[
            "price",
            "--type",
            "put",
            "--forward",
            "5000",
            "--strike",
            "4900",
            "--days",
            "45",
            "--rate",
            "0.045",
            "--iv",
            "0.18",
        ],
    );
    let json = stdout_json(&output);
    assert_eq!(json["inputs"]["model"], "black76");
    assert_eq!(json["greeks"]["epsilon"].as_f64(), Some(0.0));
}

#[test]
fn a_price_below_intrinsic_is_a_clear_error() {
    let output = run_optics(
        OPTICS,
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "80", "--days", "30",
            "--price", "5",
        ],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("below the intrinsic value"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn bad_arguments_exit_non_zero_with_a_message() {
    for args in [
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "-5", "--days", "30", "--iv",
            "0.2",
        ][..],
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "100", "--days", "0", "--iv",
            "0.2",
        ][..],
        &[
            "price", "--type", "call", "--spot", "abc", "--strike", "100", "--days", "30", "--iv",
            "0.2",
        ][..],
        &[
            "price", "--type", "straddle", "--spot", "100", "--strike", "100", "--days", "30",
            "--iv", "0.2",
        ][..],
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "100", "--days", "30",
        ][..],
        &[
            "price", "--type", "call", "--spot", "100", "--strike", "100", "--days", "30", "--iv",
            "0.2", "--price", "3",
        ][..],
    ] {
        let output = run_optics(OPTICS, args);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(!output.stderr.is_empty(), "{args:?} should explain itself");
    }
}

/// Black–Scholes–Merton call by the textbook formula with an erfc from the standard library's
/// companion (std has none, so use a 1e-16-accurate series/continued fraction here).
fn textbook_call(s: f64, k: f64, t: f64, r: f64, q: f64, vol: f64) -> f64 {
    let d1 = ((s / k).ln() + (r - q + 0.5 * vol * vol) * t) / (vol * t.sqrt());
    let d2 = d1 - vol * t.sqrt();
    s * (-q * t).exp() * norm_cdf(d1) - k * (-r * t).exp() * norm_cdf(d2)
}

fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// erfc by the continued fraction for |x| ≥ 2 and the Taylor series of erf below; ~1e-15
/// relative in the range these tests use.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        let mut sum = x;
        let mut term = x;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        return 1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum;
    }
    // Lentz continued fraction for erfc.
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for n in 1..200 {
        let a = f64::from(n) / 2.0;
        d = x + a * d;
        d = 1.0 / d;
        c = x + a / c;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / (f * std::f64::consts::PI.sqrt())
}
