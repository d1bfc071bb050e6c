//! Every statistic recomputed here by a plain formula written out in the test (loops over the
//! data), never by calling the module's own helpers for the expected value.

use chrono::{DateTime, NaiveDate};
use optics_schemas::{ChainRow, ChainSide, ForwardSource, PricingModelCode, SettlementStyle};

use super::*;

const TOL: f64 = 1e-9;

fn close_to(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// Deterministic pseudo-random numbers in [0, 1) (a 64-bit LCG, Knuth's constants).
fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

/// A close series from returns drawn in ±3 %.
fn closes(seed: u64, n: usize) -> Vec<f64> {
    let mut price = 100.0;
    let mut out = vec![price];
    for u in uniforms(seed, n - 1) {
        price *= 1.0 + (u - 0.5) * 0.06;
        out.push(price);
    }
    out
}

/// Naive HV: loop over the last `window` returns, sample variance with n − 1.
fn naive_hv(closes: &[f64], window: usize) -> f64 {
    let start = closes.len() - window - 1;
    let mut returns = Vec::new();
    for i in start + 1..closes.len() {
        returns.push((closes[i] / closes[i - 1]).ln());
    }
    naive_std_annualised(&returns)
}

fn naive_std_annualised(returns: &[f64]) -> f64 {
    let mut sum = 0.0;
    for r in returns {
        sum += r;
    }
    let mean = sum / returns.len() as f64;
    let mut squares = 0.0;
    for r in returns {
        squares += (r - mean) * (r - mean);
    }
    (squares / (returns.len() as f64 - 1.0)).sqrt() * 252f64.sqrt() * 100.0
}

// ---------------------------------------------------------------------------------------------
// Realized

#[test]
fn hv_matches_a_naive_loop_at_every_standard_window() {
    let c = closes(7, 400);
    let set = HvSet::from_closes(&c);
    for window in HV_WINDOWS {
        let expected = naive_hv(&c, window);
        let got = hv(&c, window).unwrap();
        assert!(
            close_to(got, expected, TOL),
            "{window}: {got} vs {expected}"
        );
        assert_eq!(set.get(window), Some(got));
    }
    assert_eq!(set.get(7), None);
    assert_eq!(set.by_window()[3], (30, set.hv_30d_pct));
}

#[test]
fn hv_of_alternating_returns_has_a_closed_form() {
    // Returns +a, −a, … over an even N: mean 0, variance N·a² / (N − 1).
    let a: f64 = 0.01;
    let mut c = vec![50.0];
    for i in 0..20 {
        let last = *c.last().unwrap();
        c.push(last * if i % 2 == 0 { a.exp() } else { (-a).exp() });
    }
    let expected = a * (20.0f64 / 19.0).sqrt() * 252f64.sqrt() * 100.0;
    assert!(close_to(hv(&c, 20).unwrap(), expected, 1e-12));
    // Constant growth: every return equal, zero dispersion.
    let growth: Vec<f64> = (0..31).map(|i| 100.0 * 1.001f64.powi(i)).collect();
    assert!(hv(&growth, 30).unwrap().abs() < 1e-9);
}

#[test]
fn hv_without_enough_good_closes_is_none() {
    let c = closes(3, 30);
    assert_eq!(hv(&c, 30), None, "30 closes are only 29 returns");
    assert!(hv(&c, 29).is_some());
    assert_eq!(hv(&c, 1), None);
    assert_eq!(hv(&c, 0), None);
    assert_eq!(hv(&[], 5), None);
    assert_eq!(hv(&c, usize::MAX), None);
    let mut bad = c.clone();
    bad[25] = f64::NAN;
    assert_eq!(hv(&bad, 10), None);
    bad[25] = 0.0;
    assert_eq!(hv(&bad, 10), None);
    // A bad close before the window does not matter.
    let mut early = c.clone();
    early[2] = f64::NAN;
    assert!(close_to(hv(&early, 10).unwrap(), naive_hv(&c, 10), TOL));
    let set = HvSet::from_closes(&c[..12]);
    assert!(set.hv_10d_pct.is_some() && set.hv_20d_pct.is_none());
}

#[test]
fn log_returns_reject_bad_closes_with_their_index() {
    assert_eq!(
        log_returns(&[1.0, 2.0, -1.0]),
        Err(VolError::BadValue {
            what: "closes",
            index: 2,
            value: -1.0,
            rule: "a finite number > 0"
        })
    );
    let r = log_returns(&[100.0, 110.0]).unwrap();
    assert!(close_to(r[0], (1.1f64).ln(), 1e-15));
}

#[test]
fn hv_series_is_hv_of_each_prefix() {
    let c = closes(11, 60);
    let series = hv_series(&c, 20);
    assert_eq!(series.len(), c.len());
    assert!(series[..20].iter().all(Option::is_none));
    for (i, value) in series.iter().enumerate().skip(20) {
        let expected = naive_hv(&c[..=i], 20);
        assert!(close_to(value.unwrap(), expected, TOL), "at {i}");
    }
}

#[test]
fn ex_earnings_hv_drops_the_reaction_returns_inside_the_window() {
    let mut c = closes(5, 80);
    // A 12 % gap at close index 70.
    for price in &mut c[70..] {
        *price *= 1.12;
    }
    let window = 30;
    let first = c.len() - window; // index of the close ending the window's first return
    assert!(earnings_in_window(c.len(), window, &[70]));
    assert!(earnings_in_window(c.len(), window, &[first]));
    assert!(!earnings_in_window(c.len(), window, &[first - 1]));
    assert!(!earnings_in_window(c.len(), window, &[c.len()]));
    // No reaction inside: the plain HV.
    assert_eq!(hv_ex_earnings(&c, window, &[10]), hv(&c, window));
    let mut kept = Vec::new();
    for i in first..c.len() {
        if i != 70 {
            kept.push((c[i] / c[i - 1]).ln());
        }
    }
    assert_eq!(kept.len(), window - 1);
    let expected = naive_std_annualised(&kept);
    let got = hv_ex_earnings(&c, window, &[70, 10]).unwrap();
    assert!(close_to(got, expected, TOL));
    assert!(got < hv(&c, window).unwrap());
    // Every return dropped but one: no figure.
    let all: Vec<usize> = (first + 1..c.len()).collect();
    assert_eq!(hv_ex_earnings(&c, window, &all), None);
}

// ---------------------------------------------------------------------------------------------
// Implied

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap() + chrono::Days::new(u64::from(d))
}

fn side(iv: Option<f64>, delta: Option<f64>) -> ChainSide {
    let mut s = ChainSide {
        option_symbol: Some("X".to_owned()),
        iv,
        ..ChainSide::default()
    };
    s.greeks.delta = delta;
    s
}

/// One chain row; IVs are decimals.
fn row(dte: u32, forward: f64, strike: f64, call: ChainSide, put: ChainSide) -> ChainRow {
    ChainRow {
        underlying: "AAPL".to_owned(),
        trade_date: day(0),
        as_of: DateTime::from_timestamp(1_795_208_400, 0).unwrap(),
        expiration: day(dte),
        settlement: SettlementStyle::Pm,
        dte: dte as i32,
        years_to_expiry: f64::from(dte) / 365.0,
        strike,
        spot: 100.0,
        forward,
        forward_source: ForwardSource::Parity,
        forward_strike_count: 3,
        rate: 0.04,
        carry_yield: 0.01,
        model: PricingModelCode::Bsm,
        call,
        put,
    }
}

/// Strikes 90…110 by 5 with a linear smile: call IV, put IV (decimals) and deltas given.
fn expiration(dte: u32, forward: f64, level: f64) -> Vec<ChainRow> {
    // (strike, call iv, call delta, put iv, put delta)
    let table = [
        (90.0, 0.01, 0.85, 0.06, -0.14),
        (95.0, 0.005, 0.70, 0.04, -0.29),
        (100.0, 0.0, 0.52, 0.02, -0.47),
        (105.0, -0.01, 0.33, 0.01, -0.66),
        (110.0, -0.02, 0.18, 0.0, -0.81),
    ];
    table
        .iter()
        .map(|&(k, c, cd, p, pd)| {
            row(
                dte,
                forward,
                k,
                side(Some(level + c), Some(cd)),
                side(Some(level + p), Some(pd)),
            )
        })
        .collect()
}

#[test]
fn atm_iv_interpolates_total_variance_between_the_bracketing_strikes() {
    let rows = expiration(30, 102.0, 0.25);
    let vols = expiration_vols(&rows).unwrap();
    assert_eq!(vols.len(), 1);
    // Below F = 102: the put at 100 (0.27); above: the call at 105 (0.24).
    let x = (102.0f64 / 100.0).ln() / (105.0f64 / 100.0).ln();
    let expected = ((1.0 - x) * 0.27 * 0.27 + x * 0.24 * 0.24).sqrt() * 100.0;
    let got = vols[0].atm_iv_pct.unwrap();
    assert!(close_to(got, expected, TOL), "{got} vs {expected}");
    assert!(got < 27.0 && got > 24.0);

    // Forward on a strike: the average of its call and put IVs.
    let on_strike = expiration_vols(&expiration(30, 100.0, 0.25)).unwrap();
    assert!(close_to(on_strike[0].atm_iv_pct.unwrap(), 26.0, TOL));

    // The OTM side missing: the other side is used.
    let mut rows = expiration(30, 102.0, 0.25);
    rows[3].call.iv = None; // strike 105: put IV 0.26 instead
    let expected = ((1.0 - x) * 0.27 * 0.27 + x * 0.26 * 0.26).sqrt() * 100.0;
    let got = expiration_vols(&rows).unwrap()[0].atm_iv_pct.unwrap();
    assert!(close_to(got, expected, TOL));

    // A forward beyond every strike: no ATM figure.
    let beyond = expiration_vols(&expiration(30, 111.0, 0.25)).unwrap();
    assert_eq!(beyond[0].atm_iv_pct, None);
}

#[test]
fn skew_reads_both_sides_at_25_delta() {
    let vols = expiration_vols(&expiration(30, 102.0, 0.25)).unwrap();
    let e = &vols[0];
    // Calls: Δ 0.33 (iv 0.24) and 0.18 (iv 0.23) bracket 0.25.
    let call = 0.23 + (0.24 - 0.23) * (0.25 - 0.18) / (0.33 - 0.18);
    // Puts: |Δ| 0.14 (iv 0.31) and 0.29 (iv 0.29).
    let put = 0.31 + (0.29 - 0.31) * (0.25 - 0.14) / (0.29 - 0.14);
    assert!(close_to(e.call25_iv_pct.unwrap(), call * 100.0, TOL));
    assert!(close_to(e.put25_iv_pct.unwrap(), put * 100.0, TOL));
    assert!(close_to(e.skew25_pct.unwrap(), (put - call) * 100.0, TOL));
    // No call delta below 0.25: no call point, no skew.
    let mut rows = expiration(30, 102.0, 0.25);
    rows[4].call.greeks.delta = None;
    let e = &expiration_vols(&rows).unwrap()[0];
    assert_eq!(e.call25_iv_pct, None);
    assert_eq!(e.skew25_pct, None);
    assert!(e.put25_iv_pct.is_some());
}

#[test]
fn constant_maturity_is_linear_in_total_variance_and_flat_outside() {
    let points = [(20.0 / 365.0, 30.0), (50.0 / 365.0, 20.0)];
    // 30 days: w = σ²T interpolated, then σ = √(w/T).
    let (t1, t2, t): (f64, f64, f64) = (20.0 / 365.0, 50.0 / 365.0, 30.0 / 365.0);
    let w = 900.0 * t1 + (400.0 * t2 - 900.0 * t1) * (t - t1) / (t2 - t1);
    let expected = (w / t).sqrt();
    assert!(close_to(
        constant_maturity_iv(&points, 30.0).unwrap(),
        expected,
        TOL
    ));
    assert!(close_to(
        constant_maturity_iv(&points, 20.0).unwrap(),
        30.0,
        TOL
    ));
    assert_eq!(constant_maturity_iv(&points, 10.0), Some(30.0));
    assert_eq!(constant_maturity_iv(&points, 365.0), Some(20.0));
    // Order does not matter; unusable points are ignored.
    let messy = [
        (50.0 / 365.0, 20.0),
        (f64::NAN, 10.0),
        (0.1, 0.0),
        (20.0 / 365.0, 30.0),
    ];
    assert!(close_to(
        constant_maturity_iv(&messy, 30.0).unwrap(),
        expected,
        TOL
    ));
    assert_eq!(constant_maturity_iv(&[], 30.0), None);
    assert_eq!(constant_maturity_iv(&points, f64::NAN), None);
    assert_eq!(constant_maturity_iv(&points, -1.0), None);
}

#[test]
fn a_flat_surface_gives_the_same_vol_everywhere() {
    let mut rows = Vec::new();
    for dte in [7, 35, 91, 400] {
        for k in [80.0, 90.0, 100.0, 110.0, 120.0] {
            let cd = 1.0 - k / 130.0;
            rows.push(row(
                dte,
                101.0,
                k,
                side(Some(0.2), Some(cd)),
                side(Some(0.2), Some(0.4 - k / 130.0)),
            ));
        }
    }
    let vols = expiration_vols(&rows).unwrap();
    let cm = ConstantMaturityIv::from_expirations(&vols);
    for (days, iv) in cm.by_tenor() {
        assert!(close_to(iv.unwrap(), 20.0, 1e-12), "{days}");
    }
    for e in &vols {
        assert!(close_to(e.skew25_pct.unwrap(), 0.0, 1e-12));
    }
    assert!(close_to(
        skew25_constant_maturity(&vols, 30.0).unwrap(),
        0.0,
        1e-12
    ));
}

#[test]
fn term_structure_orders_expirations_and_interpolates_across_them() {
    let mut rows = expiration(60, 102.0, 0.20);
    rows.extend(expiration(0, 102.0, 0.50)); // expiring today: left out
    rows.extend(expiration(21, 101.0, 0.30));
    // Expiring today but before the close: listed, yet not a constant-maturity input.
    let mut same_day = expiration(0, 102.0, 0.90);
    for r in &mut same_day {
        r.years_to_expiry = 2.0 / 24.0 / 365.0;
        r.settlement = SettlementStyle::Am;
    }
    rows.extend(same_day);
    let all = expiration_vols(&rows).unwrap();
    let dtes: Vec<i32> = all.iter().map(|e| e.dte).collect();
    assert_eq!(dtes, [0, 21, 60]);
    assert_eq!(
        ConstantMaturityIv::from_expirations(&all),
        ConstantMaturityIv::from_expirations(&all[1..])
    );
    assert_eq!(
        skew25_constant_maturity(&all, 30.0),
        skew25_constant_maturity(&all[1..], 30.0)
    );
    let vols = all[1..].to_vec();
    assert_eq!(front_atm(&vols).map(|e| e.dte), Some(21));
    let (s1, s2) = (vols[0].atm_iv_pct.unwrap(), vols[1].atm_iv_pct.unwrap());
    let (t1, t2, t) = (21.0 / 365.0, 60.0 / 365.0, 30.0 / 365.0);
    let w = s1 * s1 * t1 + (s2 * s2 * t2 - s1 * s1 * t1) * (t - t1) / (t2 - t1);
    let cm = ConstantMaturityIv::from_expirations(&vols);
    assert!(close_to(cm.iv30d_pct.unwrap(), (w / t).sqrt(), TOL));
    assert_eq!(cm.iv10d_pct, Some(s1));
    assert_eq!(cm.iv1yr_pct, Some(s2));
    // 30-day skew: each wing interpolated in total variance, then differenced.
    let wing = |a: f64, b: f64| {
        let w = a * a * t1 + (b * b * t2 - a * a * t1) * (t - t1) / (t2 - t1);
        (w / t).sqrt()
    };
    let expected = wing(vols[0].put25_iv_pct.unwrap(), vols[1].put25_iv_pct.unwrap())
        - wing(
            vols[0].call25_iv_pct.unwrap(),
            vols[1].call25_iv_pct.unwrap(),
        );
    assert!(close_to(
        skew25_constant_maturity(&vols, 30.0).unwrap(),
        expected,
        TOL
    ));
}

#[test]
fn chains_that_mix_underlyings_or_bad_numbers_are_errors() {
    let mut rows = expiration(30, 102.0, 0.25);
    rows[2].underlying = "MSFT".to_owned();
    assert!(matches!(
        expiration_vols(&rows),
        Err(VolError::MixedChain {
            what: "underlyings",
            ..
        })
    ));
    let mut rows = expiration(30, 102.0, 0.25);
    rows[1].trade_date = day(1);
    assert!(matches!(
        expiration_vols(&rows),
        Err(VolError::MixedChain {
            what: "trade dates",
            ..
        })
    ));
    let mut rows = expiration(30, 102.0, 0.25);
    rows[3].forward = f64::NAN;
    assert!(matches!(
        expiration_vols(&rows),
        Err(VolError::BadValue { index: 3, .. })
    ));
    assert_eq!(expiration_vols(&[]).unwrap(), Vec::new());
    // NaN IVs are skipped, not propagated.
    let mut rows = expiration(30, 102.0, 0.25);
    for r in &mut rows {
        r.call.iv = Some(f64::NAN);
        r.put.iv = Some(f64::NAN);
    }
    let e = &expiration_vols(&rows).unwrap()[0];
    assert_eq!((e.atm_iv_pct, e.skew25_pct), (None, None));
}

// ---------------------------------------------------------------------------------------------
// Stats

#[test]
fn iv_rank_and_percentile_match_brute_force() {
    let series: Vec<f64> = uniforms(9, 252).iter().map(|u| 15.0 + 30.0 * u).collect();
    for current in [series[100], 14.0, 50.0, 30.0] {
        let r = iv_rank_percentile(&series, current).unwrap();
        let (mut lo, mut hi, mut below, mut sum) = (f64::MAX, f64::MIN, 0, 0.0);
        for &v in &series {
            lo = lo.min(v);
            hi = hi.max(v);
            if v < current {
                below += 1;
            }
            sum += v;
        }
        let rank = ((current - lo) / (hi - lo) * 100.0).clamp(0.0, 100.0);
        assert!(close_to(r.iv_rank.unwrap(), rank, TOL));
        assert!(close_to(
            r.iv_percentile,
            f64::from(below) / 252.0 * 100.0,
            TOL
        ));
        assert_eq!((r.iv_min_pct, r.iv_max_pct), (lo, hi));
        assert!(close_to(r.iv_mean_pct, sum / 252.0, TOL));
        assert_eq!(r.observations, 252);
    }
    let low = iv_rank_percentile(&series, 14.0).unwrap();
    assert_eq!((low.iv_rank, low.iv_percentile), (Some(0.0), 0.0));
    let high = iv_rank_percentile(&series, 50.0).unwrap();
    assert_eq!((high.iv_rank, high.iv_percentile), (Some(100.0), 100.0));
    // Flat history: no rank; empty or bad values: errors.
    let flat = iv_rank_percentile(&[20.0; 10], 20.0).unwrap();
    assert_eq!((flat.iv_rank, flat.iv_percentile), (None, 0.0));
    assert!(matches!(
        iv_rank_percentile(&[], 20.0),
        Err(VolError::TooFewObservations { .. })
    ));
    assert!(matches!(
        iv_rank_percentile(&[20.0, f64::NAN], 20.0),
        Err(VolError::BadValue { index: 1, .. })
    ));
    assert!(iv_rank_percentile(&[20.0], f64::INFINITY).is_err());
}

#[test]
fn vrp_is_iv_minus_hv_and_their_ratio() {
    let v = vrp(24.0, 18.0).unwrap();
    assert!(close_to(v.premium_pct, 6.0, 1e-15));
    assert!(close_to(v.ratio.unwrap(), 24.0 / 18.0, 1e-15));
    let negative = vrp(20.0, 32.0).unwrap();
    assert!(close_to(negative.premium_pct, -12.0, 1e-15));
    assert_eq!(vrp(20.0, 0.0).unwrap().ratio, None);
    assert!(vrp(f64::NAN, 10.0).is_err());
    assert!(vrp(20.0, -1.0).is_err());
}

#[test]
fn correlation_and_beta_match_the_textbook_formulas() {
    let bench = closes(21, 300);
    let noise = uniforms(22, 299);
    // asset return = 1.5 × bench return + noise.
    let mut asset = vec![40.0];
    for i in 1..300 {
        let rb = (bench[i] / bench[i - 1]).ln();
        let last = *asset.last().unwrap();
        asset.push(last * (1.5 * rb + (noise[i - 1] - 0.5) * 0.01).exp());
    }
    for window in [CORRELATION_WINDOW_1M, CORRELATION_WINDOW_1Y] {
        let got = correlation_beta(&asset, &bench, window).unwrap();
        let start = 300 - window;
        let (mut sa, mut sb) = (0.0, 0.0);
        let mut ra = Vec::new();
        let mut rb = Vec::new();
        for i in start..300 {
            ra.push((asset[i] / asset[i - 1]).ln());
            rb.push((bench[i] / bench[i - 1]).ln());
            sa += ra.last().unwrap();
            sb += rb.last().unwrap();
        }
        let n = window as f64;
        let (ma, mb) = (sa / n, sb / n);
        let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
        for j in 0..window {
            cov += (ra[j] - ma) * (rb[j] - mb) / (n - 1.0);
            va += (ra[j] - ma).powi(2) / (n - 1.0);
            vb += (rb[j] - mb).powi(2) / (n - 1.0);
        }
        assert_eq!(got.observations, window);
        assert!(close_to(got.beta.unwrap(), cov / vb, 1e-9));
        assert!(close_to(
            got.correlation.unwrap(),
            cov / (va * vb).sqrt(),
            1e-9
        ));
        assert!(got.correlation.unwrap() > 0.8);
        assert!((got.beta.unwrap() - 1.5).abs() < 0.2);
    }
    // Exact relation: asset = bench² → beta 2, correlation 1.
    let squared: Vec<f64> = bench.iter().map(|b| b * b).collect();
    let exact = correlation_beta(&squared, &bench, 252).unwrap();
    assert!(close_to(exact.beta.unwrap(), 2.0, 1e-9));
    assert!(close_to(exact.correlation.unwrap(), 1.0, 1e-12));
    // A flat benchmark: neither is defined.
    let flat = vec![10.0; 300];
    let none = correlation_beta(&asset, &flat, 21).unwrap();
    assert_eq!((none.correlation, none.beta), (None, None));
}

#[test]
fn correlation_inputs_are_checked() {
    let a = closes(1, 30);
    assert!(matches!(
        correlation_beta(&a, &a[1..], 10),
        Err(VolError::LengthMismatch {
            left: 30,
            right: 29,
            ..
        })
    ));
    assert!(matches!(
        correlation_beta(&a, &a, 30),
        Err(VolError::TooFewObservations {
            needed: 31,
            got: 30,
            ..
        })
    ));
    assert!(matches!(
        correlation_beta(&a, &a, 1),
        Err(VolError::TooFewObservations { .. })
    ));
    let mut bad = a.clone();
    bad[27] = f64::NAN;
    assert!(matches!(
        correlation_beta(&a, &bad, 10),
        Err(VolError::BadValue {
            what: "benchmark closes",
            index: 27,
            ..
        })
    ));
    // A bad close before the window is not read.
    let mut early = a.clone();
    early[5] = f64::NAN;
    assert!(correlation_beta(&a, &early, 10).is_ok());
}

#[test]
fn earnings_statistics_by_hand() {
    let m =
        |gap: f64, est: Option<f64>, act: Option<f64>, before: Option<f64>, after| EarningsMove {
            gap_move_pct: gap,
            eps_estimate: est,
            eps_actual: act,
            iv_before_pct: before,
            iv_after_pct: after,
        };
    let moves = [
        m(4.0, Some(1.0), Some(1.2), Some(50.0), Some(30.0)), // beat, up, crush 40 %
        m(-6.0, Some(1.0), Some(0.8), Some(40.0), Some(30.0)), // miss, down, crush 25 %
        m(2.0, Some(1.0), Some(1.0), None, Some(30.0)),       // beat (equal), up
        m(-1.0, None, Some(0.5), Some(20.0), Some(18.0)),     // no surprise, crush 10 %
    ];
    let s = earnings_move_stats(&moves).unwrap();
    assert_eq!(
        (
            s.total_earnings,
            s.up_count,
            s.down_count,
            s.beat_count,
            s.miss_count
        ),
        (4, 2, 2, 2, 1)
    );
    assert!(close_to(s.avg_move_pct.unwrap(), -0.25, 1e-15));
    assert!(close_to(s.avg_abs_move_pct.unwrap(), 13.0 / 4.0, 1e-15));
    assert!(close_to(s.avg_up_move_pct.unwrap(), 3.0, 1e-15));
    assert!(close_to(s.avg_down_move_pct.unwrap(), -3.5, 1e-15));
    assert!(close_to(s.avg_beat_move_pct.unwrap(), 3.0, 1e-15));
    assert!(close_to(s.avg_miss_move_pct.unwrap(), -6.0, 1e-15));
    assert_eq!((s.max_up_pct, s.max_down_pct), (Some(4.0), Some(-6.0)));
    assert!(close_to(s.avg_iv_crush_pct.unwrap(), 25.0, 1e-12));
    assert!(close_to(s.median_iv_crush_pct.unwrap(), 25.0, 1e-12));
    let even = earnings_move_stats(&moves[..2]).unwrap();
    assert!(close_to(even.median_iv_crush_pct.unwrap(), 32.5, 1e-12));

    let empty = earnings_move_stats(&[]).unwrap();
    assert_eq!(empty, EarningsMoveStats::default());
    assert!(matches!(
        earnings_move_stats(&[m(f64::NAN, None, None, None, None)]),
        Err(VolError::BadValue {
            what: "gap_move_pct",
            ..
        })
    ));
    assert!(matches!(
        earnings_move_stats(&[m(1.0, None, None, Some(0.0), None)]),
        Err(VolError::BadValue {
            what: "iv_before_pct",
            ..
        })
    ));
    assert!(close_to(gap_move_pct(100.0, 105.05).unwrap(), 5.05, 1e-12));
    assert!(gap_move_pct(0.0, 1.0).is_err());
}

#[test]
fn distribution_and_percentile_by_hand() {
    // 1…11 shuffled: rank p·10 lands on integers.
    let values = [6.0, 1.0, 11.0, 3.0, 9.0, 2.0, 10.0, 4.0, 8.0, 5.0, 7.0];
    let d = distribution(&values).unwrap();
    assert_eq!(
        (d.count, d.min, d.p10, d.p50, d.p90, d.max, d.mean),
        (11, 1.0, 2.0, 6.0, 10.0, 11.0, 6.0)
    );
    assert!(close_to(d.p25, 3.5, 1e-15) && close_to(d.p75, 8.5, 1e-15));
    // Five values: p10 at rank 0.4 between 10 and 20.
    let d = distribution(&[50.0, 10.0, 40.0, 20.0, 30.0]).unwrap();
    assert!(close_to(d.p10, 14.0, 1e-12));
    assert_eq!((d.p25, d.p50), (20.0, 30.0));
    let one = distribution(&[3.0]).unwrap();
    assert_eq!((one.min, one.p10, one.p90, one.max), (3.0, 3.0, 3.0, 3.0));
    assert!(distribution(&[]).is_err());
    assert!(distribution(&[1.0, f64::NAN]).is_err());

    let history = [-3.0, -1.0, 0.0, 2.0, 5.0];
    assert_eq!(percentile_of(&history, 1.0).unwrap(), 60.0);
    assert_eq!(percentile_of(&history, -3.0).unwrap(), 0.0);
    assert!(percentile_of(&[], 1.0).is_err());
    assert!(percentile_of(&history, f64::NAN).is_err());
}

/// A flat 20 % surface for AAPL on `day(0)`: expirations 7, 35, 91 and 400 days.
fn flat_chain() -> Vec<ChainRow> {
    let mut rows = Vec::new();
    for dte in [7, 35, 91, 400] {
        for k in [80.0, 90.0, 100.0, 110.0, 120.0] {
            rows.push(row(
                dte,
                101.0,
                k,
                side(Some(0.2), Some(1.0 - k / 130.0)),
                side(Some(0.2), Some(0.4 - k / 130.0)),
            ));
        }
    }
    rows
}

#[test]
fn the_daily_row_carries_every_statistic() {
    let spy = closes(31, 300);
    // asset = spy² / 100: log returns exactly twice SPY's.
    let asset: Vec<f64> = spy.iter().map(|s| s * s / 100.0).collect();
    let prior: Vec<f64> = uniforms(32, 260).iter().map(|u| 15.0 + 20.0 * u).collect();
    let chain = flat_chain();
    let inputs = DailyVolInputs {
        underlying: "AAPL",
        trade_date: day(0),
        as_of: DateTime::from_timestamp(1_795_208_400, 0).unwrap(),
        closes: &asset,
        reaction_sessions: &[290, 100],
        chain: &chain,
        prior_iv30d_pct: &prior,
        spy_closes: Some(&spy),
        earnings_moves: None,
    };
    let (r, term) = vol_daily_and_term_rows(&inputs).unwrap();
    assert_eq!(r.close, asset[299]);
    assert!(close_to(
        r.log_return_1d.unwrap(),
        (asset[299] / asset[298]).ln(),
        TOL
    ));
    assert_eq!(r.earnings_count, None, "no earnings data, no statistics");
    // One term point per expiration, nearest first, each at the flat chain's 20 %.
    let expirations: Vec<NaiveDate> = term.iter().map(|t| t.expiration).collect();
    assert_eq!(expirations, [day(7), day(35), day(91), day(400)]);
    for t in &term {
        assert!(close_to(t.atm_iv_pct.unwrap(), 20.0, 1e-12));
        assert_eq!(
            (t.forward, t.dte),
            (101.0, (t.expiration - day(0)).num_days() as i32)
        );
    }
    for (window, value) in [(5, r.hv_5d_pct), (30, r.hv_30d_pct), (252, r.hv_252d_pct)] {
        assert!(close_to(value.unwrap(), naive_hv(&asset, window), TOL));
    }
    let hv30 = naive_hv(&asset, 30);
    let mut kept = Vec::new();
    for i in 270..300 {
        if i != 290 {
            kept.push((asset[i] / asset[i - 1]).ln());
        }
    }
    assert!(close_to(
        r.hv_30d_ex_earnings_pct.unwrap(),
        naive_std_annualised(&kept),
        TOL
    ));
    assert_eq!(r.earnings_in_hv_30d_window, Some(true));
    for iv in [r.iv10d_pct, r.iv30d_pct, r.iv1yr_pct, r.front_atm_iv_pct] {
        assert!(close_to(iv.unwrap(), 20.0, 1e-12));
    }
    assert_eq!(r.front_expiration, Some(day(7)));
    assert!(r.skew25_30d_pct.unwrap().abs() < 1e-12);
    // Rank and percentile over the last 251 prior sessions plus today (20.0).
    let lookback = &prior[prior.len() - 251..];
    let (mut lo, mut hi, mut below) = (20.0f64, 20.0f64, 0);
    for &v in lookback {
        lo = lo.min(v);
        hi = hi.max(v);
        if v < 20.0 {
            below += 1;
        }
    }
    assert!(close_to(
        r.iv_rank.unwrap(),
        (20.0 - lo) / (hi - lo) * 100.0,
        TOL
    ));
    assert!(close_to(
        r.iv_percentile.unwrap(),
        f64::from(below) / 252.0 * 100.0,
        TOL
    ));
    assert!(close_to(r.vrp_30d_pct.unwrap(), 20.0 - hv30, TOL));
    assert!(close_to(r.vrp_ratio.unwrap(), 20.0 / hv30, TOL));
    assert!(close_to(r.beta_spy_1y.unwrap(), 2.0, 1e-9));
    assert!(close_to(r.correlation_spy_1y.unwrap(), 1.0, 1e-12));
    // The row passes the snapshot's validation.
    let batch = optics_schemas::VolDailyRow::to_batch(std::slice::from_ref(&r)).unwrap();
    assert_eq!(
        optics_schemas::VolDailyRow::from_batch(&batch).unwrap(),
        [r]
    );
}

#[test]
fn a_short_history_gives_nulls_not_errors() {
    let c = closes(41, 12);
    let spy = closes(42, 12);
    let inputs = DailyVolInputs {
        underlying: "NEWCO",
        trade_date: day(0),
        as_of: DateTime::from_timestamp(1_795_208_400, 0).unwrap(),
        closes: &c,
        reaction_sessions: &[],
        chain: &[],
        prior_iv30d_pct: &[],
        spy_closes: Some(&spy),
        earnings_moves: None,
    };
    let r = vol_daily_row(&inputs).unwrap();
    assert!(r.hv_5d_pct.is_some() && r.hv_10d_pct.is_some() && r.hv_20d_pct.is_none());
    assert!(close_to(
        r.log_return_1d.unwrap(),
        (c[11] / c[10]).ln(),
        TOL
    ));
    let first_day = vol_daily_row(&DailyVolInputs {
        closes: &c[..1],
        spy_closes: Some(&spy[..1]),
        ..inputs
    })
    .unwrap();
    assert_eq!(
        first_day.log_return_1d, None,
        "no return on the first close"
    );
    assert_eq!((r.iv30d_pct, r.iv_rank, r.vrp_30d_pct), (None, None, None));
    assert_eq!((r.beta_spy_1y, r.earnings_in_hv_30d_window), (None, None));
    optics_schemas::VolDailyRow::to_batch(&[r]).unwrap();

    // A chain but too little IV history: no rank.
    let chain = flat_chain();
    let few = [18.0; 5];
    let with_chain = DailyVolInputs {
        underlying: "AAPL",
        chain: &chain,
        prior_iv30d_pct: &few,
        ..inputs
    };
    let r = vol_daily_row(&with_chain).unwrap();
    assert!(r.iv30d_pct.is_some() && r.iv_rank.is_none() && r.iv_percentile.is_none());

    // Errors: no closes, someone else's chain, a misaligned SPY series, a bad last close.
    assert!(matches!(
        vol_daily_row(&DailyVolInputs {
            closes: &[],
            ..inputs
        }),
        Err(VolError::TooFewObservations { .. })
    ));
    assert!(matches!(
        vol_daily_row(&DailyVolInputs {
            chain: &chain,
            ..inputs
        }),
        Err(VolError::MixedChain {
            what: "underlyings",
            ..
        })
    ));
    assert!(matches!(
        vol_daily_row(&DailyVolInputs {
            spy_closes: Some(&spy[1..]),
            ..inputs
        }),
        Err(VolError::LengthMismatch { .. })
    ));
    let mut bad = c.clone();
    bad[11] = f64::NAN;
    assert!(matches!(
        vol_daily_row(&DailyVolInputs {
            closes: &bad,
            ..inputs
        }),
        Err(VolError::BadValue { index: 11, .. })
    ));
}

#[test]
fn reaction_sessions_follow_the_report_timing() {
    use optics_schemas::{EarningsEvent, EarningsTiming};
    let d = |day: u32| NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
    // Mon 16 … Fri 20, then Mon 23.
    let dates = [d(16), d(17), d(18), d(19), d(20), d(23)];
    let report = |day: u32, timing| EarningsEvent {
        symbol: "X".into(),
        report_date: d(day),
        timing,
        fiscal_quarter: "Q".into(),
        eps_estimate: 1.0,
        eps_actual: None,
        revenue_estimate: None,
        revenue_actual: None,
    };
    let sessions = |r: &EarningsEvent| close::reaction_sessions(&dates, &[r]);
    assert_eq!(sessions(&report(18, EarningsTiming::BeforeOpen)), [2]);
    assert_eq!(sessions(&report(18, EarningsTiming::AfterClose)), [3]);
    assert_eq!(sessions(&report(18, EarningsTiming::Unknown)), [2, 3]);
    // After Friday's close the reaction is Monday's; a weekend report too.
    assert_eq!(sessions(&report(20, EarningsTiming::AfterClose)), [5]);
    assert_eq!(sessions(&report(21, EarningsTiming::BeforeOpen)), [5]);
    // The first close has no return; a reaction after the last close is not in the series.
    assert!(sessions(&report(16, EarningsTiming::BeforeOpen)).is_empty());
    assert!(sessions(&report(23, EarningsTiming::AfterClose)).is_empty());
}

#[test]
fn a_gap_in_the_bars_is_no_reaction_session_and_no_earnings_move() {
    use optics_schemas::{EarningsEvent, EarningsTiming};
    let d = |month: u32, day: u32| NaiveDate::from_ymd_opt(2026, month, day).unwrap();
    // Bars stop on Wed 4 Nov and resume on Mon 16 Nov: a report in between has no reaction
    // in this series, and both the ex-earnings HV and the gap statistics must agree on that.
    let dates = [d(11, 3), d(11, 4), d(11, 16), d(11, 17)];
    let closes = [100.0, 101.0, 120.0, 121.0];
    let opens = [Some(100.0), Some(100.5), Some(119.0), Some(120.5)];
    let report = |date: NaiveDate, timing| EarningsEvent {
        symbol: "X".into(),
        report_date: date,
        timing,
        fiscal_quarter: "Q".into(),
        eps_estimate: 1.0,
        eps_actual: Some(1.1),
        revenue_estimate: None,
        revenue_actual: None,
    };
    let gap = [
        report(d(11, 6), EarningsTiming::AfterClose),
        report(d(11, 9), EarningsTiming::BeforeOpen),
        report(d(11, 10), EarningsTiming::Unknown),
    ];
    for r in &gap {
        assert!(close::reaction_sessions(&dates, &[r]).is_empty(), "{r:?}");
        assert!(
            earnings_moves(&dates, &opens, &closes, &[r]).is_empty(),
            "{r:?}"
        );
    }
    // Five calendar days is still a reaction (Wed 11 after the close → Mon 16).
    let late = report(d(11, 11), EarningsTiming::AfterClose);
    assert_eq!(close::reaction_sessions(&dates, &[&late]), [2]);
    let moves = earnings_moves(&dates, &opens, &closes, &[&late]);
    assert_eq!(moves.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [2]);
    // Six is not (Tue 10 after the close → Mon 16).
    let too_late = report(d(11, 10), EarningsTiming::AfterClose);
    assert!(close::reaction_sessions(&dates, &[&too_late]).is_empty());
}

#[test]
fn earnings_moves_are_the_gaps_of_the_reaction_sessions() {
    use optics_schemas::{EarningsEvent, EarningsTiming};
    let d = |day: u32| NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
    // Mon 16 … Fri 20, then Mon 23; Wednesday has no open (a close from the chain).
    let dates = [d(16), d(17), d(18), d(19), d(20), d(23)];
    let closes = [100.0, 102.0, 101.0, 99.0, 104.0, 103.0];
    let opens = [
        Some(99.5),
        Some(103.0),
        None,
        Some(97.0),
        Some(105.0),
        Some(101.0),
    ];
    let report = |day: u32, timing, actual: Option<f64>| EarningsEvent {
        symbol: "X".into(),
        report_date: d(day),
        timing,
        fiscal_quarter: "Q".into(),
        eps_estimate: 1.0,
        eps_actual: actual,
        revenue_estimate: None,
        revenue_actual: None,
    };
    let reports = [
        // Before Tuesday's open: Monday's close to Tuesday's open.
        report(17, EarningsTiming::BeforeOpen, Some(1.2)),
        // After Friday's close: Monday 23's open against Friday's close.
        report(20, EarningsTiming::AfterClose, Some(0.8)),
        // After Wednesday's close: Thursday's open against Wednesday's close.
        report(18, EarningsTiming::AfterClose, None),
        // Before Wednesday's open, which has none: left out.
        report(18, EarningsTiming::BeforeOpen, Some(2.0)),
        // Unknown timing: no defined gap.
        report(19, EarningsTiming::Unknown, Some(2.0)),
        // Before the first close, and after the last: not in the series.
        report(16, EarningsTiming::BeforeOpen, Some(2.0)),
        report(23, EarningsTiming::AfterClose, Some(2.0)),
    ];
    let refs: Vec<&EarningsEvent> = reports.iter().collect();
    let moves = earnings_moves(&dates, &opens, &closes, &refs);
    let sessions: Vec<usize> = moves.iter().map(|(s, _)| *s).collect();
    assert_eq!(sessions, [1, 3, 5]);
    let expected_gaps = [
        (103.0 / 100.0 - 1.0) * 100.0,
        (97.0 / 101.0 - 1.0) * 100.0,
        (101.0 / 104.0 - 1.0) * 100.0,
    ];
    for ((_, m), expected) in moves.iter().zip(expected_gaps) {
        assert!(close_to(m.gap_move_pct, expected, 1e-12));
    }
    assert_eq!(moves[0].1.eps_actual, Some(1.2));
    assert_eq!(moves[1].1.eps_actual, None);

    // The daily row's statistics over those moves, recomputed by hand.
    let only: Vec<EarningsMove> = moves.iter().map(|(_, m)| *m).collect();
    let row_with = |earnings_moves: &[EarningsMove]| {
        vol_daily_row(&DailyVolInputs {
            underlying: "X",
            trade_date: d(23),
            as_of: DateTime::from_timestamp(1_795_208_400, 0).unwrap(),
            closes: &closes,
            reaction_sessions: &[],
            chain: &[],
            prior_iv30d_pct: &[],
            spy_closes: None,
            earnings_moves: Some(earnings_moves),
        })
        .unwrap()
    };
    let r = row_with(&only);
    let [up, down, later_down] = expected_gaps;
    assert_eq!(r.earnings_count, Some(3));
    assert_eq!(
        (r.earnings_up_count, r.earnings_down_count),
        (Some(1), Some(2))
    );
    // 1.2 ≥ 1.0 beats, 0.8 misses; the report without an actual is neither.
    assert_eq!(
        (r.earnings_beat_count, r.earnings_miss_count),
        (Some(1), Some(1))
    );
    let mean = (up + down + later_down) / 3.0;
    let mean_abs = (up.abs() + down.abs() + later_down.abs()) / 3.0;
    let mean_down = (down + later_down) / 2.0;
    for (what, got, expected) in [
        ("avg", r.earnings_avg_move_pct, mean),
        ("avg abs", r.earnings_avg_abs_move_pct, mean_abs),
        ("avg up", r.earnings_avg_up_move_pct, up),
        ("avg down", r.earnings_avg_down_move_pct, mean_down),
        ("avg beat", r.earnings_avg_beat_move_pct, up),
        ("avg miss", r.earnings_avg_miss_move_pct, later_down),
        ("max up", r.earnings_max_up_pct, up),
        ("max down", r.earnings_max_down_pct, down.min(later_down)),
    ] {
        assert!(close_to(got.unwrap(), expected, 1e-12), "{what}");
    }
    optics_schemas::VolDailyRow::to_batch(&[r]).unwrap();

    // Reports but none reacted yet: counts of zero, averages null.
    let none_yet = row_with(&[]);
    assert_eq!(none_yet.earnings_count, Some(0));
    assert_eq!(none_yet.earnings_avg_abs_move_pct, None);
}

mod never_panic {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    proptest! {
        #![proptest_config(ProptestConfig {
            rng_seed: RngSeed::Fixed(0x0071_C501),
            ..ProptestConfig::default()
        })]

        #[test]
        fn realized_on_any_numbers(
            closes in prop::collection::vec(any::<f64>(), 0..40),
            window in 0usize..45,
            reactions in prop::collection::vec(0usize..50, 0..4),
        ) {
            let got = hv(&closes, window);
            prop_assert!(got.is_none_or(|v| v.is_finite() && v >= 0.0));
            let ex = hv_ex_earnings(&closes, window, &reactions);
            prop_assert!(ex.is_none_or(|v| v.is_finite() && v >= 0.0));
            let _ = hv_series(&closes, window);
            let _ = earnings_in_window(closes.len(), window, &reactions);
        }

        #[test]
        fn any_daily_row_passes_the_snapshot_validation(
            closes in prop::collection::vec(0.01f64..1e6, 1..300),
            spy_scale in 0.5f64..2.0,
            prior in prop::collection::vec(1.0f64..300.0, 0..40),
            reactions in prop::collection::vec(0usize..300, 0..4),
            gaps in prop::collection::vec((-60.0f64..60.0, 0.0f64..3.0, prop::option::of(-3.0f64..3.0)), 0..6),
        ) {
            let spy: Vec<f64> = closes.iter().rev().map(|c| c * spy_scale).collect();
            let moves: Vec<EarningsMove> = gaps
                .iter()
                .map(|&(gap, estimate, actual)| EarningsMove {
                    gap_move_pct: gap,
                    eps_estimate: Some(estimate),
                    eps_actual: actual,
                    ..EarningsMove::default()
                })
                .collect();
            let chain = flat_chain();
            let inputs = DailyVolInputs {
                underlying: "AAPL",
                trade_date: day(0),
                as_of: DateTime::from_timestamp(1_795_208_400, 0).unwrap(),
                closes: &closes,
                reaction_sessions: &reactions,
                chain: &chain,
                prior_iv30d_pct: &prior,
                spy_closes: Some(&spy),
                earnings_moves: Some(&moves),
            };
            let (row, term) = vol_daily_and_term_rows(&inputs).unwrap();
            prop_assert!(optics_schemas::VolDailyRow::to_batch(&[row]).is_ok());
            prop_assert!(optics_schemas::VolTermRow::to_batch(&term).is_ok());
        }

        #[test]
        fn interpolation_and_stats_on_any_numbers(
            points in prop::collection::vec((any::<f64>(), any::<f64>()), 0..8),
            days in any::<f64>(),
            values in prop::collection::vec(any::<f64>(), 0..20),
            today in any::<f64>(),
        ) {
            let _ = constant_maturity_iv(&points, days);
            let _ = iv_rank_percentile(&values, today);
            let _ = distribution(&values);
            let _ = percentile_of(&values, today);
            let _ = vrp(today, days);
            let half = values.len() / 2;
            let _ = correlation_beta(&values[..half], &values[half..2 * half], 3);
        }
    }
}

#[test]
fn standing_reads_a_value_against_its_history() {
    let history = [1.0, 2.0, 3.0, 4.0];
    let s = standing(&history, Some(3.5));
    assert_eq!(s.mean, Some(2.5));
    // Sample variance (n − 1) of 1..4 is 5/3.
    let std = (5.0f64 / 3.0).sqrt();
    assert!((s.std.unwrap() - std).abs() < 1e-15);
    assert!((s.z_score.unwrap() - 1.0 / std).abs() < 1e-15);
    assert_eq!(s.percentile, Some(75.0));
    let empty = standing(&[], Some(1.0));
    assert_eq!(
        (empty.mean, empty.std, empty.percentile),
        (None, None, None)
    );
    assert_eq!(standing(&[2.0, 2.0], Some(3.0)).z_score, None);
}

#[test]
fn the_earnings_effect_removes_one_moves_variance() {
    // 30 % over 0.1 years carries 0.009 of variance; a 5 % mean absolute move is a normal move
    // of σ = 5 % × √(π/2), whose square leaves 0.009 − 0.0039270 = 0.0050730: 22.52334 %.
    let effect = earnings_effect_pct(30.0, 0.1, 5.0).unwrap();
    assert!((effect - (30.0 - 22.523_342)).abs() < 1e-5, "{effect}");
    assert_eq!(earnings_effect_pct(30.0, 0.0, 5.0), None);
    // A move larger than the whole variance leaves nothing: the effect is the whole IV.
    assert_eq!(earnings_effect_pct(10.0, 0.01, 50.0), Some(10.0));
}
