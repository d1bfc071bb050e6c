//! Exposure tests: every figure is recomputed here from per-share Greeks (checked elsewhere
//! against 60-digit reference vectors) with the scaling and aggregation written out again,
//! never compared with the module's own output.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use super::*;
use crate::pricing::{Greeks, OptionInputs, OptionType, PricingModel, greeks};

const SPOT: f64 = 100.0;
const RATE: f64 = 0.03;
const DIVIDEND_YIELD: f64 = 0.01;

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn as_of() -> DateTime<Utc> {
    DateTime::from_timestamp(1_795_100_000, 0).unwrap()
}

/// A BSM context with the carry forward (no `forwards` entries).
fn context() -> UnderlyingContext {
    UnderlyingContext {
        underlying: "TEST".to_owned(),
        spot: SPOT,
        rate: RATE,
        dividend_yield: DIVIDEND_YIELD,
        model: PricingModel::BlackScholesMerton,
        forwards: BTreeMap::new(),
        as_of: as_of(),
    }
}

fn bsm_inputs(option_type: OptionType, spot: f64, strike: f64, years: f64) -> OptionInputs {
    OptionInputs {
        option_type,
        model: PricingModel::BlackScholesMerton,
        underlying: spot,
        strike,
        years,
        rate: RATE,
        dividend_yield: DIVIDEND_YIELD,
    }
}

#[derive(Clone, Copy)]
struct Leg {
    expiration: NaiveDate,
    days: f64,
    strike: f64,
    option_type: OptionType,
    oi: u64,
    iv: f64,
}

fn analytics(leg: &Leg, with_greeks: bool) -> ContractAnalytics {
    let years = leg.days / 365.0;
    let g = greeks(
        &bsm_inputs(leg.option_type, SPOT, leg.strike, years),
        leg.iv,
    )
    .unwrap();
    ContractAnalytics {
        expiration: leg.expiration,
        strike: leg.strike,
        option_type: leg.option_type,
        open_interest: leg.oi,
        volume: 0,
        bid: None,
        ask: None,
        mid: Some(g.price),
        iv: Some(leg.iv),
        greeks: with_greeks.then_some(g),
        years_to_expiry: years,
        dte: leg.days as i64,
    }
}

const NEAR: (i32, u32, u32) = (2026, 12, 18);
const FAR: (i32, u32, u32) = (2027, 1, 15);

/// Two expirations; puts heavy below spot, calls heavy above, so net GEX changes sign.
fn legs() -> Vec<Leg> {
    use OptionType::{Call, Put};
    let near = date(NEAR.0, NEAR.1, NEAR.2);
    let far = date(FAR.0, FAR.1, FAR.2);
    let mut legs = Vec::new();
    let near_book: [(f64, u64, u64, f64); 5] = [
        // strike, call OI, put OI, IV
        (90.0, 500, 20_000, 0.26),
        (95.0, 2_000, 30_000, 0.23),
        (100.0, 10_000, 10_000, 0.20),
        (105.0, 40_000, 3_000, 0.18),
        (110.0, 15_000, 800, 0.17),
    ];
    for (strike, call_oi, put_oi, iv) in near_book {
        for (option_type, oi) in [(Call, call_oi), (Put, put_oi)] {
            legs.push(Leg {
                expiration: near,
                days: 28.0,
                strike,
                option_type,
                oi,
                iv,
            });
        }
    }
    let far_book: [(f64, u64, u64, f64); 4] = [
        (90.0, 300, 12_000, 0.25),
        (100.0, 6_000, 7_000, 0.21),
        (110.0, 9_000, 400, 0.19),
        (120.0, 4_000, 0, 0.19),
    ];
    for (strike, call_oi, put_oi, iv) in far_book {
        for (option_type, oi) in [(Call, call_oi), (Put, put_oi)] {
            legs.push(Leg {
                expiration: far,
                days: 56.0,
                strike,
                option_type,
                oi,
                iv,
            });
        }
    }
    legs
}

/// The near expiration's contracts carry their Greeks; the far one's only IVs (computed inside).
fn chain() -> Vec<ContractAnalytics> {
    legs()
        .iter()
        .map(|l| analytics(l, l.expiration == date(NEAR.0, NEAR.1, NEAR.2)))
        .collect()
}

fn sign(t: OptionType) -> f64 {
    match t {
        OptionType::Call => 1.0,
        OptionType::Put => -1.0,
    }
}

/// GEX of one leg at spot `s`, from the per-share gamma at `s` (dollars per 1 % move).
fn leg_gex_at(leg: &Leg, s: f64) -> f64 {
    let g = greeks(
        &bsm_inputs(leg.option_type, s, leg.strike, leg.days / 365.0),
        leg.iv,
    )
    .unwrap();
    sign(leg.option_type) * leg.oi as f64 * 100.0 * g.gamma * s * s * 0.01
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

fn report() -> ExposureReport {
    compute_exposures(&chain(), &context(), &ExposureConfig::default()).unwrap()
}

#[test]
fn gex_by_strike_and_totals_match_the_formula() {
    let report = report();
    // Independent aggregation: strike → (call GEX, put GEX), over all expirations.
    let mut expected: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for leg in legs() {
        let entry = expected.entry(leg.strike as i64).or_default();
        let gex = leg_gex_at(&leg, SPOT);
        match leg.option_type {
            OptionType::Call => entry.0 += gex,
            OptionType::Put => entry.1 += gex,
        }
    }
    let rows = &report.aggregate.strikes;
    assert_eq!(rows.len(), expected.len());
    for (row, (strike, (call, put))) in rows.iter().zip(&expected) {
        assert_eq!(row.strike as i64, *strike);
        assert!(
            close(row.call[ExposureKind::Gamma], *call, 1e-12),
            "{strike}"
        );
        assert!(close(row.put[ExposureKind::Gamma], *put, 1e-12), "{strike}");
        assert!(row.put[ExposureKind::Gamma] <= 0.0 && row.call[ExposureKind::Gamma] >= 0.0);
    }
    let call_total: f64 = expected.values().map(|v| v.0).sum();
    let put_total: f64 = expected.values().map(|v| v.1).sum();
    let summary = &report.aggregate;
    assert!(close(
        summary.call_totals[ExposureKind::Gamma],
        call_total,
        1e-12
    ));
    assert!(close(
        summary.put_totals[ExposureKind::Gamma],
        put_total,
        1e-12
    ));
    assert!(close(
        summary.net_totals()[ExposureKind::Gamma],
        call_total + put_total,
        1e-12
    ));
    // Per expiration, the same sums restricted to it.
    for exp in &report.expirations {
        let net: f64 = legs()
            .iter()
            .filter(|l| Some(l.expiration) == exp.expiration)
            .map(|l| leg_gex_at(l, SPOT))
            .sum();
        assert!(close(exp.net_totals()[ExposureKind::Gamma], net, 1e-12));
    }
    assert_eq!(report.aggregate.contracts, legs().len());
    assert_eq!(report.contracts_without_greeks, 0);
    // Open interest sums.
    let call_oi: u64 = legs()
        .iter()
        .filter(|l| l.option_type == OptionType::Call)
        .map(|l| l.oi)
        .sum();
    assert_eq!(summary.call_open_interest, call_oi);
}

#[test]
fn every_exposure_scale_of_one_contract() {
    let leg = Leg {
        expiration: date(2026, 12, 18),
        days: 28.0,
        strike: 103.0,
        option_type: OptionType::Put,
        oi: 1_234,
        iv: 0.22,
    };
    let g: Greeks = greeks(
        &bsm_inputs(leg.option_type, SPOT, leg.strike, leg.days / 365.0),
        leg.iv,
    )
    .unwrap();
    let e = contract_exposure(&analytics(&leg, true), &context())
        .unwrap()
        .exposure;
    let n = -1_234.0 * 100.0;
    let s = SPOT;
    let expected = [
        (ExposureKind::Delta, g.delta * n),
        (ExposureKind::Gamma, g.gamma * s * s * 0.01 * n),
        (
            ExposureKind::DeltaAdjustedGamma,
            g.gamma * s * s * 0.01 * n * g.delta.abs(),
        ),
        (ExposureKind::Vanna, g.vanna * n),
        (ExposureKind::Charm, g.charm * n),
        (ExposureKind::Vega, g.vega * n),
        (ExposureKind::Theta, g.theta * n),
        (ExposureKind::Speed, g.speed * s * s * s * 1e-4 * n),
        (ExposureKind::Color, g.color * s * s * 0.01 * n),
        (ExposureKind::Zomma, g.zomma * s * s * 0.01 * n),
        (ExposureKind::Vomma, g.vomma * n),
        (ExposureKind::Ultima, g.ultima * n),
    ];
    for (kind, value) in expected {
        assert!(
            close(e[kind], value, 1e-14),
            "{kind}: {} vs {value}",
            e[kind]
        );
    }
    // A put held short by dealers: negative gamma, positive delta, negative vega.
    assert!(e[ExposureKind::Gamma] < 0.0 && e[ExposureKind::Delta] > 0.0);
    assert!(e[ExposureKind::Vega] < 0.0);
}

#[test]
fn speed_exposure_is_the_change_of_gex_for_a_one_percent_move() {
    // Finite-difference check of the documented meaning: the gamma part of GEX(1.01·S) − GEX(S)
    // (the S² scale held at S) ≈ speed exposure.
    let leg = Leg {
        expiration: date(2026, 12, 18),
        days: 28.0,
        strike: 100.0,
        option_type: OptionType::Call,
        oi: 1_000,
        iv: 0.2,
    };
    let years = leg.days / 365.0;
    let h = 1e-5 * SPOT;
    let gamma_at = |s: f64| {
        greeks(&bsm_inputs(leg.option_type, s, 100.0, years), 0.2)
            .unwrap()
            .gamma
    };
    let dgamma_ds = (gamma_at(SPOT + h) - gamma_at(SPOT - h)) / (2.0 * h);
    let expected = dgamma_ds * (0.01 * SPOT) * SPOT * SPOT * 0.01 * 1_000.0 * 100.0;
    let e = contract_exposure(&analytics(&leg, true), &context()).unwrap();
    assert!(
        close(e.exposure[ExposureKind::Speed], expected, 1e-6),
        "{} vs {expected}",
        e.exposure[ExposureKind::Speed]
    );
}

#[test]
fn flip_level_is_a_root_with_a_sign_change() {
    let report = report();
    let flip = &report.aggregate.flip;
    let level = flip.level.expect("this chain's net GEX changes sign");
    assert!(flip.degeneracy.is_none() && !flip.is_degenerate());
    assert!((SPOT * 0.8..=SPOT * 1.2).contains(&level));
    let total = |s: f64| legs().iter().map(|l| leg_gex_at(l, s)).sum::<f64>();
    let scale: f64 = legs().iter().map(|l| leg_gex_at(l, level).abs()).sum();
    assert!(
        total(level).abs() <= 1e-7 * scale,
        "GEX at the flip {level}: {} (scale {scale})",
        total(level)
    );
    let step = 1e-5 * SPOT;
    assert!(total(level - step) * total(level + step) < 0.0);
    // Below the flip dealers are short gamma here (puts below spot), above it long.
    assert!(total(level - step) < 0.0 && total(level + step) > 0.0);
    // The curve's value at spot is the net GEX of the Greeks.
    assert!(close(
        flip.value_at_spot,
        report.aggregate.net_totals()[ExposureKind::Gamma],
        1e-10
    ));
}

#[test]
fn per_expiration_flips_use_only_their_expiration() {
    let report = report();
    for exp in &report.expirations {
        let mine: Vec<Leg> = legs()
            .into_iter()
            .filter(|l| Some(l.expiration) == exp.expiration)
            .collect();
        let total = |s: f64| mine.iter().map(|l| leg_gex_at(l, s)).sum::<f64>();
        match exp.flip.level {
            Some(level) => {
                let step = 1e-5 * SPOT;
                assert!(total(level - step) * total(level + step) < 0.0);
            }
            None => {
                // No sign change anywhere on the grid.
                let grid = FlipConfig::default().grid(SPOT);
                let signs: Vec<bool> = grid.iter().map(|&s| total(s) > 0.0).collect();
                assert!(signs.iter().all(|&p| p == signs[0]));
            }
        }
    }
}

#[test]
fn delta_adjusted_flip_is_a_root_of_the_delta_adjusted_curve() {
    let report = report();
    let level = report.aggregate.delta_adjusted_flip.level.unwrap();
    let curve = |s: f64| {
        legs()
            .iter()
            .map(|l| {
                let g = greeks(
                    &bsm_inputs(l.option_type, s, l.strike, l.days / 365.0),
                    l.iv,
                )
                .unwrap();
                leg_gex_at(l, s) * g.delta.abs()
            })
            .sum::<f64>()
    };
    let step = 1e-5 * SPOT;
    assert!(curve(level - step) * curve(level + step) < 0.0);
}

#[test]
fn no_sign_change_gives_no_flip() {
    let calls: Vec<ContractAnalytics> = chain()
        .into_iter()
        .filter(|c| c.option_type == OptionType::Call)
        .collect();
    let r = compute_exposures(&calls, &context(), &ExposureConfig::default()).unwrap();
    assert_eq!(r.aggregate.flip.level, None);
    assert!(r.aggregate.flip.is_degenerate());
    assert_eq!(
        r.aggregate.flip.degeneracy,
        Some(FlipDegeneracy::AlwaysPositive)
    );
    assert_eq!(r.aggregate.key_levels.vol_trigger, None);

    let puts: Vec<ContractAnalytics> = chain()
        .into_iter()
        .filter(|c| c.option_type == OptionType::Put)
        .collect();
    let r = compute_exposures(&puts, &context(), &ExposureConfig::default()).unwrap();
    assert_eq!(
        r.aggregate.flip.degeneracy,
        Some(FlipDegeneracy::AlwaysNegative)
    );

    let no_oi: Vec<ContractAnalytics> = chain()
        .into_iter()
        .map(|c| ContractAnalytics {
            open_interest: 0,
            ..c
        })
        .collect();
    let r = compute_exposures(&no_oi, &context(), &ExposureConfig::default()).unwrap();
    assert_eq!(
        r.aggregate.flip.degeneracy,
        Some(FlipDegeneracy::NoExposure)
    );
    assert_eq!(r.aggregate.gamma_levels.call_wall, None);
    assert_eq!(r.aggregate.max_pain, None);

    let empty = compute_exposures(&[], &context(), &ExposureConfig::default()).unwrap();
    assert!(empty.expirations.is_empty() && empty.aggregate.strikes.is_empty());
    assert_eq!(
        empty.aggregate.flip.degeneracy,
        Some(FlipDegeneracy::NoExposure)
    );
}

#[test]
fn walls_and_gamma_strikes() {
    let report = report();
    let levels = &report.aggregate.gamma_levels;
    let mut by_strike: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for leg in legs() {
        let e = by_strike.entry(leg.strike as i64).or_default();
        match leg.option_type {
            OptionType::Call => e.0 += leg_gex_at(&leg, SPOT),
            OptionType::Put => e.1 += leg_gex_at(&leg, SPOT),
        }
    }
    let argmax = |f: &dyn Fn(&(f64, f64)) -> f64| {
        by_strike
            .iter()
            .max_by(|a, b| f(a.1).total_cmp(&f(b.1)))
            .map(|(k, _)| *k as f64)
            .unwrap()
    };
    assert_eq!(levels.call_wall.unwrap().strike, argmax(&|v| v.0));
    assert_eq!(levels.put_wall.unwrap().strike, argmax(&|v| -v.1));
    assert_eq!(
        levels.key_gamma_strike.unwrap().strike,
        argmax(&|v| (v.0 + v.1).abs())
    );
    assert_eq!(
        levels.max_gamma_strike.unwrap().strike,
        argmax(&|v| v.0 + v.1)
    );
    assert_eq!(
        levels.min_gamma_strike.unwrap().strike,
        argmax(&|v| -(v.0 + v.1))
    );
    let wall = levels.call_wall.unwrap();
    assert!(close(
        wall.distance_pct,
        (wall.strike - SPOT) / SPOT * 100.0,
        1e-15
    ));
    assert!(levels.put_wall.unwrap().exposure < 0.0);
    // gex_ratio = call / |put|.
    let call: f64 = by_strike.values().map(|v| v.0).sum();
    let put: f64 = by_strike.values().map(|v| v.1).sum();
    assert!(close(
        report.aggregate.gex_ratio.unwrap(),
        call / put.abs(),
        1e-12
    ));
    // key_levels repeat the walls; the vol trigger is the listed strike nearest the flip.
    let key = &report.aggregate.key_levels;
    assert_eq!(key.call_wall, levels.call_wall);
    let flip = report.aggregate.flip.level.unwrap();
    let nearest = by_strike
        .keys()
        .map(|&k| k as f64)
        .min_by(|a, b| (a - flip).abs().total_cmp(&(b - flip).abs()))
        .unwrap();
    assert_eq!(key.vol_trigger.unwrap().price, nearest);
}

#[test]
fn gamma_flip_is_the_crossing_of_cumulative_gex_by_strike() {
    let report = report();
    let mut by_strike: BTreeMap<i64, f64> = BTreeMap::new();
    for leg in legs() {
        *by_strike.entry(leg.strike as i64).or_default() += leg_gex_at(&leg, SPOT);
    }
    let mut running = 0.0;
    let cumulative: Vec<(f64, f64)> = by_strike
        .iter()
        .map(|(&k, &v)| {
            running += v;
            (k as f64, running)
        })
        .collect();
    // This chain's cumulative GEX starts negative (puts below spot) and ends positive (more
    // call gamma near spot): one crossing.
    let i = cumulative
        .windows(2)
        .position(|w| w[0].1 < 0.0 && w[1].1 > 0.0)
        .unwrap();
    let ((k0, c0), (k1, c1)) = (cumulative[i], cumulative[i + 1]);
    let expected = k0 + (k1 - k0) * (-c0) / (c1 - c0);
    assert!(close(report.aggregate.gamma_flip.unwrap(), expected, 1e-12));
    let last = cumulative_net(&report.aggregate.strikes).last().unwrap()[ExposureKind::Gamma];
    assert!(close(last, running, 1e-12));
}

#[test]
fn greek_levels_and_key_levels() {
    let report = report();
    let summary = &report.aggregate;
    let vanna = summary.greek_levels(ExposureKind::Vanna, SPOT);
    let rows = &summary.strikes;
    let best = |pick: &dyn Fn(&StrikeExposure) -> f64, rows: &[StrikeExposure]| {
        rows.iter()
            .fold(None::<&StrikeExposure>, |b, r| match b {
                Some(b) if pick(b) >= pick(r) => Some(b),
                _ => Some(r),
            })
            .map(|r| r.strike)
    };
    let net_vanna =
        |r: &StrikeExposure| (r.call[ExposureKind::Vanna] + r.put[ExposureKind::Vanna]).abs();
    assert_eq!(vanna.key_strike.map(|l| l.strike), best(&net_vanna, rows));
    assert_eq!(
        vanna.max_call.map(|l| l.strike),
        best(&|r| r.call[ExposureKind::Vanna].abs(), rows)
    );
    let ratio = summary.call_totals[ExposureKind::Vanna].abs()
        / summary.put_totals[ExposureKind::Vanna].abs();
    assert!(close(vanna.ratio.unwrap(), ratio, 1e-12));
    let above: Vec<StrikeExposure> = rows.iter().filter(|r| r.strike >= SPOT).copied().collect();
    let below: Vec<StrikeExposure> = rows.iter().filter(|r| r.strike < SPOT).copied().collect();
    assert_eq!(
        summary.key_levels.vanna_resistance.map(|l| l.strike),
        best(&net_vanna, &above)
    );
    assert_eq!(
        summary.key_levels.vanna_support.map(|l| l.strike),
        best(&net_vanna, &below)
    );
    let net_charm =
        |r: &StrikeExposure| (r.call[ExposureKind::Charm] + r.put[ExposureKind::Charm]).abs();
    assert_eq!(
        summary.key_levels.charm_pressure.map(|l| l.strike),
        best(&net_charm, rows)
    );
    for kind in ExposureKind::ALL {
        assert_eq!(summary.greek_levels(kind, SPOT).kind, kind);
    }
    // The stored gamma flip is the gamma levels' cumulative crossing.
    for summary in std::iter::once(&report.aggregate).chain(&report.expirations) {
        assert_eq!(
            summary.gamma_flip,
            summary
                .greek_levels(ExposureKind::Gamma, SPOT)
                .flip_level
                .map(|l| l.price)
        );
    }
}

#[test]
fn greek_levels_on_ties_zeros_and_nans() {
    let report = report();
    // Ties (the first strike wins), zeros (never a level), and a cumulative profile that
    // crosses twice at the same distance from spot (the lower crossing wins): net 1, −2, 2, 0,
    // cumulative 1, −1, 1, 1, crossings 97.5 and 102.5 around spot 100.
    let mut summary = report.aggregate.clone();
    let strikes = [95.0, 100.0, 105.0, 110.0];
    let values = [2.0, -4.0, 4.0, 0.0];
    summary.strikes = strikes
        .iter()
        .zip(values)
        .map(|(&strike, v)| {
            let mut row = StrikeExposure {
                strike,
                call_open_interest: 1,
                put_open_interest: 1,
                call: ExposureVector::ZERO,
                put: ExposureVector::ZERO,
            };
            row.call.0 = [v; ExposureKind::COUNT];
            row.call[ExposureKind::Vega] = 0.0;
            row.put.0 = [-v / 2.0; ExposureKind::COUNT];
            row
        })
        .collect();
    let gamma = summary.greek_levels(ExposureKind::Gamma, SPOT);
    assert_eq!(gamma.max_call.map(|l| l.strike), Some(100.0));
    assert_eq!(gamma.key_strike.map(|l| l.exposure), Some(-2.0));
    assert_eq!(gamma.flip_level.map(|l| l.price), Some(97.5));
    assert_eq!(
        running_sum_crossing(&summary.strikes, |r| r.net_of(ExposureKind::Gamma), SPOT),
        Some(97.5)
    );
    assert_eq!(
        summary.greek_levels(ExposureKind::Vega, SPOT).max_call,
        None
    );
    // A NaN is the level only when it is the first non-zero value of its search (nothing
    // compares larger after it), and otherwise never.
    let mut with_nan = summary.clone();
    with_nan.strikes[0].call[ExposureKind::Theta] = f64::NAN;
    with_nan.strikes[1].call[ExposureKind::Delta] = f64::NAN;
    assert_eq!(
        with_nan
            .greek_levels(ExposureKind::Theta, SPOT)
            .max_call
            .map(|l| l.strike),
        Some(95.0)
    );
    assert_eq!(
        with_nan
            .greek_levels(ExposureKind::Delta, SPOT)
            .max_call
            .map(|l| l.strike),
        Some(105.0)
    );
}

#[test]
fn implications_follow_the_rules() {
    let config = ImplicationsConfig::default();
    let i = Implications::from_gex(3.0e9, -1.0e9, &config);
    assert_eq!(i.volatility_regime, VolatilityRegime::Suppressed);
    assert_eq!(i.positioning, Positioning::CallDominated);
    assert_eq!(i.directional_bias, DirectionalBias::Bullish);
    let i = Implications::from_gex(1.0e9, -3.0e9, &config);
    assert_eq!(i.volatility_regime, VolatilityRegime::Amplified);
    assert_eq!(i.positioning, Positioning::PutDominated);
    assert_eq!(i.directional_bias, DirectionalBias::Bearish);
    // Ratio 1.05 is inside the ±10 % band.
    let i = Implications::from_gex(1.05e9, -1.0e9, &config);
    assert_eq!(i.positioning, Positioning::Balanced);
    assert_eq!(i.directional_bias, DirectionalBias::Neutral);
    let i = Implications::from_gex(0.0, 0.0, &config);
    assert_eq!(i.volatility_regime, VolatilityRegime::Neutral);
    assert_eq!(i.positioning, Positioning::Balanced);
    // The report applies them to its own totals.
    let report = report();
    let net = report.aggregate.net_totals()[ExposureKind::Gamma];
    assert_eq!(
        report.aggregate.implications.volatility_regime,
        if net > 0.0 {
            VolatilityRegime::Suppressed
        } else {
            VolatilityRegime::Amplified
        }
    );
}

/// Pain at settlement `p`, summed contract by contract.
fn brute_force_pain(rows: &[OpenInterestAtStrike], p: f64) -> f64 {
    rows.iter()
        .map(|r| {
            100.0
                * (r.call as f64 * (p - r.strike).max(0.0) + r.put as f64 * (r.strike - p).max(0.0))
        })
        .sum()
}

#[test]
fn max_pain_matches_brute_force_on_the_chain() {
    let report = report();
    let mut oi: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
    for leg in legs() {
        let e = oi.entry(leg.strike as i64).or_default();
        match leg.option_type {
            OptionType::Call => e.0 += leg.oi,
            OptionType::Put => e.1 += leg.oi,
        }
    }
    let rows: Vec<OpenInterestAtStrike> = oi
        .iter()
        .map(|(&k, &(call, put))| OpenInterestAtStrike {
            strike: k as f64,
            call,
            put,
        })
        .collect();
    let (best_strike, best_pain) = rows
        .iter()
        .map(|r| (r.strike, brute_force_pain(&rows, r.strike)))
        .fold(
            (f64::NAN, f64::INFINITY),
            |b, x| if x.1 < b.1 { x } else { b },
        );
    let mp = report.aggregate.max_pain.as_ref().unwrap();
    assert_eq!(mp.strike, best_strike);
    assert!(close(mp.total_pain_usd, best_pain, 1e-12));
    for p in &mp.pain_by_strike {
        assert!(close(
            p.total_pain_usd,
            brute_force_pain(&rows, p.strike),
            1e-12
        ));
    }
    assert_eq!(mp.distance_from_spot, mp.strike - SPOT);
}

#[test]
fn black76_on_the_forward_gives_the_same_dollar_exposures() {
    // The same chain quoted as an index: Greeks against the forward, Black-76. Dollar GEX,
    // delta shares, vanna and flip must equal the spot (BSM) representation.
    let near = date(NEAR.0, NEAR.1, NEAR.2);
    let far = date(FAR.0, FAR.1, FAR.2);
    let forward_of = |days: f64| SPOT * ((RATE - DIVIDEND_YIELD) * days / 365.0).exp();
    let mut b76 = context();
    b76.model = PricingModel::Black76;
    b76.forwards = [(near, forward_of(28.0)), (far, forward_of(56.0))].into();
    let contracts: Vec<ContractAnalytics> = legs()
        .iter()
        .map(|l| {
            let years = l.days / 365.0;
            let inputs = OptionInputs {
                option_type: l.option_type,
                model: PricingModel::Black76,
                underlying: forward_of(l.days),
                strike: l.strike,
                years,
                rate: RATE,
                dividend_yield: 0.0,
            };
            ContractAnalytics {
                greeks: Some(greeks(&inputs, l.iv).unwrap()),
                ..analytics(l, false)
            }
        })
        .collect();
    let forward_report = compute_exposures(&contracts, &b76, &ExposureConfig::default()).unwrap();
    let spot_report = report();
    for (f, s) in forward_report
        .aggregate
        .strikes
        .iter()
        .zip(&spot_report.aggregate.strikes)
    {
        for kind in [
            ExposureKind::Gamma,
            ExposureKind::Delta,
            ExposureKind::DeltaAdjustedGamma,
            ExposureKind::Vanna,
            ExposureKind::Speed,
            ExposureKind::Vega,
            ExposureKind::Zomma,
        ] {
            assert!(
                close(f.net()[kind], s.net()[kind], 1e-10),
                "{kind} at {}: {} vs {}",
                f.strike,
                f.net()[kind],
                s.net()[kind]
            );
        }
    }
    let (a, b) = (
        forward_report.aggregate.flip.level.unwrap(),
        spot_report.aggregate.flip.level.unwrap(),
    );
    assert!((a - b).abs() <= 1e-7 * SPOT, "{a} vs {b}");
}

#[test]
fn contracts_without_iv_or_greeks_only_count_open_interest() {
    let mut contracts = chain();
    contracts[0].iv = None;
    contracts[0].greeks = None;
    let report = compute_exposures(&contracts, &context(), &ExposureConfig::default()).unwrap();
    assert_eq!(report.contracts_without_greeks, 1);
    assert_eq!(report.aggregate.contracts, contracts.len() - 1);
    let first = &report.aggregate.strikes[0];
    assert_eq!(first.strike, contracts[0].strike);
    assert_eq!(first.call_open_interest, 500 + 300);
}

#[test]
fn bad_input_is_a_typed_error() {
    let mut contracts = chain();
    contracts[3].strike = f64::NAN;
    let err = compute_exposures(&contracts, &context(), &ExposureConfig::default()).unwrap_err();
    assert!(matches!(
        err,
        ExposureError::Contract {
            index: 3,
            field: "strike",
            ..
        }
    ));
    let mut contracts = chain();
    contracts[1].iv = Some(-0.2);
    let err = compute_exposures(&contracts, &context(), &ExposureConfig::default()).unwrap_err();
    assert!(err.to_string().contains("iv"), "{err}");
    let mut ctx = context();
    ctx.spot = 0.0;
    let err = compute_exposures(&chain(), &ctx, &ExposureConfig::default()).unwrap_err();
    assert!(matches!(err, ExposureError::Context { field: "spot", .. }));
    let mut ctx = context();
    ctx.forwards.insert(date(2026, 12, 18), f64::INFINITY);
    assert!(compute_exposures(&chain(), &ctx, &ExposureConfig::default()).is_err());
    let config = ExposureConfig {
        flip: FlipConfig {
            points: 10,
            ..FlipConfig::default()
        },
        ..ExposureConfig::default()
    };
    assert!(matches!(
        compute_exposures(&chain(), &context(), &config),
        Err(ExposureError::Config { .. })
    ));
}

#[test]
fn every_field_out_of_its_domain_is_named_and_every_edge_in_it_passes() {
    let valid = chain()
        .into_iter()
        .find(|c| c.greeks.is_some() && c.mid.is_some())
        .expect("a contract with Greeks");
    assert_eq!(valid.validate(0), Ok(()));
    type Mutation = fn(&mut ContractAnalytics);
    let bad: [(&str, Mutation); 24] = [
        ("strike", |c| c.strike = 0.0),
        ("strike", |c| c.strike = -5.0),
        ("strike", |c| c.strike = f64::NAN),
        ("years_to_expiry", |c| c.years_to_expiry = f64::INFINITY),
        ("bid", |c| c.bid = Some(-0.01)),
        ("bid", |c| c.bid = Some(f64::NAN)),
        ("ask", |c| c.ask = Some(f64::INFINITY)),
        ("mid", |c| c.mid = Some(-1.0)),
        ("iv", |c| c.iv = Some(0.0)),
        ("iv", |c| c.iv = Some(f64::NAN)),
        ("iv", |c| c.iv = Some(f64::INFINITY)),
        ("greeks.delta", |c| {
            c.greeks.as_mut().unwrap().delta = f64::NAN
        }),
        ("greeks.gamma", |c| {
            c.greeks.as_mut().unwrap().gamma = f64::INFINITY
        }),
        ("greeks.vanna", |c| {
            c.greeks.as_mut().unwrap().vanna = f64::NAN
        }),
        ("greeks.charm", |c| {
            c.greeks.as_mut().unwrap().charm = f64::NAN
        }),
        ("greeks.vega", |c| {
            c.greeks.as_mut().unwrap().vega = f64::NAN
        }),
        ("greeks.theta", |c| {
            c.greeks.as_mut().unwrap().theta = f64::NEG_INFINITY
        }),
        ("greeks.speed", |c| {
            c.greeks.as_mut().unwrap().speed = f64::NAN
        }),
        ("greeks.color", |c| {
            c.greeks.as_mut().unwrap().color = f64::NAN
        }),
        ("greeks.zomma", |c| {
            c.greeks.as_mut().unwrap().zomma = f64::NAN
        }),
        ("greeks.vomma", |c| {
            c.greeks.as_mut().unwrap().vomma = f64::NAN
        }),
        ("greeks.ultima", |c| {
            c.greeks.as_mut().unwrap().ultima = f64::NAN
        }),
        ("strike", |c| {
            c.strike = f64::NAN;
            c.iv = Some(-1.0);
        }),
        ("bid", |c| {
            c.bid = Some(-1.0);
            c.greeks.as_mut().unwrap().delta = f64::NAN;
        }),
    ];
    for (field, mutate) in bad {
        let mut contract = valid;
        mutate(&mut contract);
        match contract.validate(7) {
            Err(ExposureError::Contract {
                index: 7, field: f, ..
            }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    // The edges of each domain, and the Greeks the exposures do not read, pass, and pass the
    // one-test check itself (not only its field-by-field fallback): -0 is a price ≥ 0, and
    // the largest finite values do not overflow its sum.
    let good: [Mutation; 9] = [
        |c| c.bid = Some(0.0),
        |c| c.bid = Some(-0.0),
        |c| c.mid = None,
        |c| c.iv = None,
        |c| c.greeks = None,
        |c| c.years_to_expiry = -0.5,
        |c| c.greeks.as_mut().unwrap().rho = f64::NAN,
        |c| {
            let g = c.greeks.as_mut().unwrap();
            (g.delta, g.gamma, g.theta) = (f64::MAX, f64::MAX, -f64::MAX);
        },
        |c| (c.strike, c.ask) = (f64::MAX, Some(f64::MAX)),
    ];
    for mutate in good {
        let mut contract = valid;
        mutate(&mut contract);
        assert!(contract.in_domain(), "{contract:?}");
        assert_eq!(contract.validate(0), Ok(()), "{contract:?}");
    }
}

#[test]
fn grid_is_log_even_on_each_side_with_spot_in_the_middle() {
    let grid = FlipConfig::default().grid(SPOT);
    assert_eq!(grid.len(), 161);
    assert_eq!(grid[80], SPOT);
    assert!(close(grid[0], 80.0, 1e-15) && close(grid[160], 120.0, 1e-15));
    // Even steps in ln S on each side of spot.
    let below = (grid[1] / grid[0]).ln();
    assert!(close(below, -(0.8f64.ln()) / 80.0, 1e-12));
    assert!((1..80).all(|j| close((grid[j + 1] / grid[j]).ln(), below, 1e-9)));
    let above = (grid[160] / grid[159]).ln();
    assert!(close(above, 1.2f64.ln() / 80.0, 1e-12));
    assert!((80..160).all(|j| close((grid[j + 1] / grid[j]).ln(), above, 1e-9)));
}

#[test]
fn brent_finds_roots_to_tolerance() {
    let f = |x: f64| x.powi(3) - 2.0 * x - 5.0; // Wallis's cubic, root 2.0945514815423265…
    let root = flip::brent(f, (2.0, f(2.0)), (3.0, f(3.0)), 1e-12);
    assert!((root - 2.094_551_481_542_326_5).abs() < 1e-11);
    let g = |x: f64| (x - 1.0).exp() - 1.0;
    let root = flip::brent(g, (0.0, g(0.0)), (5.0, g(5.0)), 1e-12);
    assert!((root - 1.0).abs() < 1e-11);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x0071_C500),
        ..ProptestConfig::default()
    })]

    #[test]
    fn max_pain_equals_brute_force(
        rows in prop::collection::vec((1u32..400, 0u64..50_000, 0u64..50_000), 1..40)
    ) {
        // Strikes in half-dollar steps, possibly repeated (merged by the brute force too).
        let rows: Vec<OpenInterestAtStrike> = rows
            .iter()
            .map(|&(k, call, put)| OpenInterestAtStrike { strike: f64::from(k) * 0.5, call, put })
            .collect();
        let result = max_pain(&rows, 100.0);
        if rows.iter().all(|r| r.call == 0 && r.put == 0) {
            prop_assert!(result.is_none());
        } else {
            let result = result.unwrap();
            let best = rows
                .iter()
                .map(|r| brute_force_pain(&rows, r.strike))
                .fold(f64::INFINITY, f64::min);
            prop_assert!(close(result.total_pain_usd, best, 1e-12) || result.total_pain_usd == best);
            prop_assert!(close(brute_force_pain(&rows, result.strike), best, 1e-12)
                || brute_force_pain(&rows, result.strike) == best);
        }
    }

    #[test]
    fn flip_is_a_root(
        book in prop::collection::vec(
            (60u32..=140, 0u64..40_000, 0u64..40_000, 0.08f64..0.8, 2.0f64..120.0),
            2..12
        )
    ) {
        flip_is_a_root_of(&book)?;
    }
}

/// A book: (strike, call OI, put OI, IV, days to expiry) per strike.
type FlipBook = [(u32, u64, u64, f64, f64)];

/// Every reported crossing is a root of the independently re-priced GEX curve, the level is the
/// crossing nearest spot, and without a crossing the curve keeps one sign over the grid.
fn flip_is_a_root_of(book: &FlipBook) -> Result<(), TestCaseError> {
    let expiration = date(2027, 1, 15);
    let legs: Vec<Leg> = book
        .iter()
        .flat_map(|&(k, call_oi, put_oi, iv, days)| {
            [(OptionType::Call, call_oi), (OptionType::Put, put_oi)].map(|(option_type, oi)| Leg {
                expiration,
                days,
                strike: f64::from(k),
                option_type,
                oi,
                iv,
            })
        })
        .collect();
    let contracts: Vec<ContractAnalytics> = legs.iter().map(|l| analytics(l, false)).collect();
    let report = compute_exposures(&contracts, &context(), &ExposureConfig::default()).unwrap();
    let total = |s: f64| legs.iter().map(|l| leg_gex_at(l, s)).sum::<f64>();
    let flip = &report.aggregate.flip;
    for &root in &flip.crossings {
        let step = 1e-6 * SPOT;
        let scale: f64 = legs.iter().map(|l| leg_gex_at(l, root).abs()).sum();
        // A root: tiny against the gross exposure there, or a sign change across it.
        prop_assert!(
            total(root).abs() <= 1e-6 * scale || total(root - step) * total(root + step) <= 0.0,
            "GEX {} at {root} (scale {scale})",
            total(root)
        );
    }
    if let Some(level) = flip.level {
        prop_assert!(
            flip.crossings
                .iter()
                .all(|c| (c - SPOT).abs() >= (level - SPOT).abs())
        );
    } else {
        // No crossing: the grid values share one sign (or are all zero). The curve drops a
        // contract where |d1| > 9 (φ below 2.6e-18 of its peak), so the exact far tails of two
        // strikes may still change sign here where the curve is zero: values below 1e-9 of
        // the largest gross exposure on the grid count as zero.
        let grid = FlipConfig::default().grid(SPOT);
        let gross = |s: f64| legs.iter().map(|l| leg_gex_at(l, s).abs()).sum::<f64>();
        let largest = grid.iter().map(|&s| gross(s)).fold(0.0, f64::max);
        let values: Vec<f64> = grid
            .iter()
            .map(|&s| total(s))
            .filter(|v| v.abs() > 1e-9 * largest)
            .collect();
        prop_assert!(values.iter().all(|v| *v > 0.0) || values.iter().all(|v| *v < 0.0));
    }
    Ok(())
}

#[test]
fn flip_ignores_sign_changes_in_negligible_far_tails() {
    // Found by CI: the exact tails of the two strikes change sign far below spot, where the
    // re-priced curve has dropped both contracts.
    flip_is_a_root_of(&[
        (
            131,
            9076,
            9518,
            0.090_578_803_074_157_17,
            73.860_052_067_337_48,
        ),
        (126, 4328, 0, 0.293_866_509_022_943_6, 5.701_791_025_962_64),
    ])
    .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Chain rows in, snapshot rows out.

mod snapshot_rows {
    use optics_schemas::columns::exposures::{CALL, NET, PUT};
    use optics_schemas::{
        ChainRow, DirectionalBiasCode, ExposureRow, ExposureSummaryRow, PositioningCode,
        VolatilityRegimeCode,
    };

    use super::*;
    use crate::chain::{ChainMarket, build_chain};

    fn trade_date() -> NaiveDate {
        date(2026, 11, 20)
    }

    fn chain_rows(model: PricingModel) -> Vec<ChainRow> {
        let quotes = optics_tests::fixtures::synthetic_chain("SPY", 100.0, 3, 41, 80.0, 3, 10_000);
        let market = ChainMarket {
            underlying: "SPY".to_owned(),
            trade_date: trade_date(),
            // 10:30 New York on the first expiration's day.
            as_of: DateTime::from_timestamp(1_795_188_600, 0).unwrap(),
            spot: None,
            rate: 0.04,
            dividend_yield: 0.01,
            model,
        };
        build_chain(&quotes, &market).unwrap().rows
    }

    #[test]
    fn measure_order_is_the_schema_order() {
        for (i, kind) in ExposureKind::ALL.into_iter().enumerate() {
            for (side, prefix) in [(&CALL, "call_"), (&PUT, "put_"), (&NET, "net_")] {
                let name = side.names()[i];
                assert!(
                    name.starts_with(&format!("{prefix}{}_", kind.name())),
                    "{name} is not {kind}"
                );
            }
        }
        for (regime, code) in [
            (
                VolatilityRegime::Suppressed,
                VolatilityRegimeCode::Suppressed,
            ),
            (VolatilityRegime::Amplified, VolatilityRegimeCode::Amplified),
            (VolatilityRegime::Neutral, VolatilityRegimeCode::Neutral),
        ] {
            assert_eq!(regime.code(), code.as_str());
        }
        for (p, code) in [
            (Positioning::CallDominated, PositioningCode::CallDominated),
            (Positioning::PutDominated, PositioningCode::PutDominated),
            (Positioning::Balanced, PositioningCode::Balanced),
        ] {
            assert_eq!(p.code(), code.as_str());
        }
        for (b, code) in [
            (DirectionalBias::Bullish, DirectionalBiasCode::Bullish),
            (DirectionalBias::Bearish, DirectionalBiasCode::Bearish),
            (DirectionalBias::Neutral, DirectionalBiasCode::Neutral),
        ] {
            assert_eq!(b.code(), code.as_str());
        }
    }

    #[test]
    fn gex_from_a_built_chain_matches_its_gamma_columns() {
        for model in [PricingModel::BlackScholesMerton, PricingModel::Black76] {
            let rows = chain_rows(model);
            let (contracts, context) = contracts_from_chain(&rows).unwrap();
            assert_eq!(context.model, model);
            let report =
                compute_exposures(&contracts, &context, &ExposureConfig::default()).unwrap();
            // Independently: the chain's own gamma columns × OI × 100 × X² × 1 %, X the price
            // its Greeks are taken against (spot for BSM, the row's forward for Black-76).
            let mut expected: BTreeMap<(NaiveDate, i64), f64> = BTreeMap::new();
            for row in &rows {
                let x = match model {
                    PricingModel::BlackScholesMerton => row.spot,
                    PricingModel::Black76 => row.forward,
                };
                for (side, sign) in [(&row.call, 1.0), (&row.put, -1.0)] {
                    if let (Some(gamma), Some(oi)) = (side.greeks.gamma, side.open_interest) {
                        *expected
                            .entry((row.expiration, (row.strike * 1000.0) as i64))
                            .or_default() += sign * gamma * oi as f64 * 100.0 * x * x * 0.01;
                    }
                }
            }
            let mut compared = 0;
            for exp in &report.expirations {
                for s in &exp.strikes {
                    let key = (exp.expiration.unwrap(), (s.strike * 1000.0) as i64);
                    let want = expected.get(&key).copied().unwrap_or(0.0);
                    let got = s.net()[ExposureKind::Gamma];
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "{model:?} {key:?}: {got} vs {want}"
                    );
                    compared += 1;
                }
            }
            assert_eq!(compared, rows.len());
        }
    }

    #[test]
    fn report_rows_pass_the_schemas_and_round_trip() {
        let rows = chain_rows(PricingModel::BlackScholesMerton);
        let (contracts, context) = contracts_from_chain(&rows).unwrap();
        let report = compute_exposures(&contracts, &context, &ExposureConfig::default()).unwrap();

        let strike_rows = exposure_rows(&report, trade_date());
        assert_eq!(strike_rows.len(), rows.len());
        let batch = ExposureRow::to_batch(&strike_rows).unwrap();
        assert_eq!(ExposureRow::from_batch(&batch).unwrap(), strike_rows);
        // The worker's column-written batch holds the same rows.
        let columns = exposure_batch(&report, trade_date()).unwrap();
        assert_eq!(columns.schema(), batch.schema());
        assert_eq!(ExposureRow::from_batch(&columns).unwrap(), strike_rows);
        let first = &strike_rows[0];
        let first_strike = &report.expirations[0].strikes[0];
        assert_eq!(first.call.gamma, first_strike.call[ExposureKind::Gamma]);
        assert_eq!(first.put.vanna, first_strike.put[ExposureKind::Vanna]);
        assert_eq!(first.dte, 0);

        let summaries = exposure_summary_rows(&report, trade_date());
        assert_eq!(summaries.len(), 1 + report.expirations.len());
        assert_eq!(summaries[0].expiration, None);
        assert_eq!(summaries[0].flip_level, report.aggregate.flip.level);
        assert_eq!(
            summaries[0].net.gamma,
            report.aggregate.net_totals()[ExposureKind::Gamma]
        );
        assert_eq!(
            summaries[0].call_wall,
            report.aggregate.gamma_levels.call_wall.map(|l| l.strike)
        );
        let batch = ExposureSummaryRow::to_batch(&summaries).unwrap();
        assert_eq!(ExposureSummaryRow::from_batch(&batch).unwrap(), summaries);
    }

    #[test]
    fn chain_input_errors() {
        assert!(matches!(
            contracts_from_chain(&[]),
            Err(ExposureError::Context { field: "chain", .. })
        ));
        let mut rows = chain_rows(PricingModel::BlackScholesMerton);
        rows[1].underlying = "QQQ".to_owned();
        assert!(matches!(
            contracts_from_chain(&rows),
            Err(ExposureError::Context {
                field: "underlying",
                ..
            })
        ));
    }
}

#[test]
fn max_pain_magnet_reads_strong_moderate_weak_by_distance() {
    use super::{magnet_rule, magnet_strength};
    assert_eq!(magnet_strength(0.0), "STRONG");
    assert_eq!(magnet_strength(-1.0), "STRONG");
    assert_eq!(magnet_strength(1.5), "MODERATE");
    assert_eq!(magnet_strength(-3.0), "MODERATE");
    assert_eq!(magnet_strength(3.01), "WEAK");
    assert_eq!(
        magnet_rule(),
        "STRONG within 1% of spot, MODERATE within 3%, WEAK beyond; a pull toward max pain into \
         expiration is a tendency, not a forecast"
    );
}
