//! Hand-computed economics of the common structures, and invariants of the exact payoff
//! analysis on random positions.
//!
//! Every expected number below is worked out from the premiums in the comment beside it
//! (dollars per share × 100 per contract), not taken from the code under test.

use optics_compute::pricing::PricingModel;
use optics_compute::strategy::payoff::expiration_pnl_usd;
use optics_compute::strategy::{
    Bound, LegInput, Market, StrategyAnalysis, StrategyError, ValuationMethod, analyze,
    validate_legs,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

const DAYS: f64 = 30.0;

/// (type, action, strike, premium, quantity)
type Spec = (&'static str, &'static str, f64, f64, u32);

fn legs_from(specs: &[Spec]) -> Vec<LegInput> {
    specs
        .iter()
        .map(
            |&(option_type, action, strike, premium, quantity)| LegInput {
                option_type: Some(option_type.into()),
                action: Some(action.into()),
                strike: Some(strike),
                years_to_expiry: Some(DAYS / 365.0),
                premium: Some(premium),
                quantity: Some(f64::from(quantity)),
                iv: Some(0.25),
                ..LegInput::default()
            },
        )
        .collect()
}

fn analyse(specs: &[Spec]) -> StrategyAnalysis {
    let legs = validate_legs(&legs_from(specs)).unwrap();
    analyze(&legs, &Market::spot(100.0, 0.04, 0.0)).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + b.abs())
}

fn assert_economics(
    specs: &[Spec],
    net_premium: f64,
    max_profit: Bound,
    max_loss: Bound,
    breakevens: &[f64],
) -> StrategyAnalysis {
    let analysis = analyse(specs);
    assert_eq!(analysis.method, ValuationMethod::ExactPiecewiseLinear);
    assert!(
        close(analysis.net_premium_usd, net_premium),
        "net premium {} vs {net_premium}",
        analysis.net_premium_usd
    );
    for (ours, expected, what) in [
        (analysis.max_profit_usd, max_profit, "max profit"),
        (analysis.max_loss_usd, max_loss, "max loss"),
    ] {
        match (ours, expected) {
            (Bound::Unbounded, Bound::Unbounded) => {}
            (Bound::Finite(a), Bound::Finite(b)) => assert!(close(a, b), "{what} {a} vs {b}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    assert_eq!(
        analysis.breakevens.len(),
        breakevens.len(),
        "{:?}",
        analysis.breakevens
    );
    for (ours, expected) in analysis.breakevens.iter().zip(breakevens) {
        assert!(close(*ours, *expected), "breakeven {ours} vs {expected}");
    }
    analysis
}

#[test]
fn bull_call_debit_spread() {
    // Buy 95C at 6.24, sell 105C at 1.18: debit 5.06 → −506; max profit 10·100 − 506 = 494 at
    // and above 105; max loss −506 at and below 95; breakeven 95 + 5.06.
    let a = assert_economics(
        &[
            ("CALL", "BUY", 95.0, 6.24, 1),
            ("CALL", "SELL", 105.0, 1.18, 1),
        ],
        -506.0,
        Bound::Finite(494.0),
        Bound::Finite(-506.0),
        &[100.06],
    );
    assert!(close(a.risk_reward_ratio.finite().unwrap(), 494.0 / 506.0));
}

#[test]
fn put_credit_spread() {
    // Sell 95P at 0.60, buy 90P at 0.08: credit 0.52 → +52; max loss 52 − 500 = −448 below 90;
    // breakeven 95 − 0.52.
    let a = assert_economics(
        &[
            ("put", "sell", 95.0, 0.60, 1),
            ("put", "buy", 90.0, 0.08, 1),
        ],
        52.0,
        Bound::Finite(52.0),
        Bound::Finite(-448.0),
        &[94.48],
    );
    assert!(close(a.risk_reward_ratio.finite().unwrap(), 52.0 / 448.0));
}

#[test]
fn iron_condor_equal_and_unequal_wings() {
    // 85/90/110/115 at 0.02/0.19/0.36/0.09: credit 0.19 + 0.36 − 0.02 − 0.09 = 0.44 → +44;
    // either wing loses at most 5 − 0.44 → −456; breakevens 90 − 0.44 and 110 + 0.44.
    assert_economics(
        &[
            ("PUT", "BUY", 85.0, 0.02, 1),
            ("PUT", "SELL", 90.0, 0.19, 1),
            ("CALL", "SELL", 110.0, 0.36, 1),
            ("CALL", "BUY", 115.0, 0.09, 1),
        ],
        44.0,
        Bound::Finite(44.0),
        Bound::Finite(-456.0),
        &[89.56, 110.44],
    );
    // 80/90/110/115: credit 0.60 + 0.36 − 0.05 − 0.09 = 0.82 → +82; the 10-wide put wing
    // loses 10 − 0.82 → −918, the call wing only 5 − 0.82.
    assert_economics(
        &[
            ("PUT", "BUY", 80.0, 0.05, 1),
            ("PUT", "SELL", 90.0, 0.60, 1),
            ("CALL", "SELL", 110.0, 0.36, 1),
            ("CALL", "BUY", 115.0, 0.09, 1),
        ],
        82.0,
        Bound::Finite(82.0),
        Bound::Finite(-918.0),
        &[89.18, 110.82],
    );
}

#[test]
fn long_call_butterfly() {
    // Buy 90C 10.52, sell 2× 100C 3.04, buy 110C 0.36: debit 10.52 − 6.08 + 0.36 = 4.80 →
    // −480; at 100 the 90C pays 10 → 1000 − 480 = 520; breakevens 90 + 4.8 and 110 − 4.8.
    assert_economics(
        &[
            ("CALL", "BUY", 90.0, 10.52, 1),
            ("CALL", "SELL", 100.0, 3.04, 2),
            ("CALL", "BUY", 110.0, 0.36, 1),
        ],
        -480.0,
        Bound::Finite(520.0),
        Bound::Finite(-480.0),
        &[94.8, 105.2],
    );
}

#[test]
fn broken_wing_put_butterfly() {
    // Buy 105P 6.00, sell 2× 100P 2.50, buy 90P 0.40: debit 6.00 − 5.00 + 0.40 = 1.40 → −140.
    // At 100: the 105P pays 5 → 500 − 140 = 360. Below 90 the payoff is
    // (105 − S) − 2(100 − S) + (90 − S) = −5 → −500 − 140 = −640 (at S = 0 too).
    // Above 105 nothing pays: −140. Breakevens 105 − 1.4 = 103.6 and 100 − 3.6 = 96.4.
    assert_economics(
        &[
            ("PUT", "BUY", 105.0, 6.00, 1),
            ("PUT", "SELL", 100.0, 2.50, 2),
            ("PUT", "BUY", 90.0, 0.40, 1),
        ],
        -140.0,
        Bound::Finite(360.0),
        Bound::Finite(-640.0),
        &[96.4, 103.6],
    );
}

#[test]
fn straddles() {
    // Long 100 straddle at 6.81 + 6.08 = 12.89: −1289, unbounded above, breakevens 100 ± 12.89.
    let long = assert_economics(
        &[
            ("CALL", "BUY", 100.0, 6.81, 1),
            ("PUT", "BUY", 100.0, 6.08, 1),
        ],
        -1289.0,
        Bound::Unbounded,
        Bound::Finite(-1289.0),
        &[87.11, 112.89],
    );
    assert_eq!(long.risk_reward_ratio, Bound::Unbounded);
    // Short: the mirror image; the loss below is bounded at S = 0: 1289 − 10000 = −8711.
    let short = assert_economics(
        &[
            ("CALL", "SELL", 100.0, 6.81, 1),
            ("PUT", "SELL", 100.0, 6.08, 1),
        ],
        1289.0,
        Bound::Finite(1289.0),
        Bound::Unbounded,
        &[87.11, 112.89],
    );
    assert_eq!(short.risk_reward_ratio, Bound::Finite(0.0));
}

#[test]
fn ratio_spreads() {
    // Call 1×2: buy 100C 4.47, sell 2× 110C 1.21: debit 4.47 − 2.42 = 2.05 → −205; peak at
    // 110: 1000 − 205 = 795; above 110 the slope is −100/$ (unlimited risk); breakevens
    // 100 + 2.05 and 110 + 7.95.
    assert_economics(
        &[
            ("CALL", "BUY", 100.0, 4.47, 1),
            ("CALL", "SELL", 110.0, 1.21, 2),
        ],
        -205.0,
        Bound::Finite(795.0),
        Bound::Unbounded,
        &[102.05, 117.95],
    );
    // Put 1×2: buy 100P 3.92, sell 2× 90P 0.75: debit 2.42 → −242; peak at 90: 758; at S = 0:
    // 100 − 180 = −80 per share → −8000 − 242 = −8242, a bounded (if large) loss;
    // breakevens 90 − 7.58 and 100 − 2.42.
    assert_economics(
        &[
            ("PUT", "BUY", 100.0, 3.92, 1),
            ("PUT", "SELL", 90.0, 0.75, 2),
        ],
        -242.0,
        Bound::Finite(758.0),
        Bound::Finite(-8242.0),
        &[82.42, 97.58],
    );
    // Call backspread: sell 100C 5.21, buy 2× 110C 1.75: credit 1.71 → +171 below 100; worst
    // at 110: −1000 + 171 = −829; unbounded above; breakevens 100 + 1.71 and 110 + 8.29.
    assert_economics(
        &[
            ("CALL", "SELL", 100.0, 5.21, 1),
            ("CALL", "BUY", 110.0, 1.75, 2),
        ],
        171.0,
        Bound::Unbounded,
        Bound::Finite(-829.0),
        &[101.71, 118.29],
    );
}

#[test]
fn quantities_scale_the_one_lot() {
    // Three put credit spreads: every dollar figure triples, breakevens do not move.
    assert_economics(
        &[
            ("put", "sell", 95.0, 0.60, 3),
            ("put", "buy", 90.0, 0.08, 3),
        ],
        156.0,
        Bound::Finite(156.0),
        Bound::Finite(-1344.0),
        &[94.48],
    );
}

#[test]
fn net_greeks_are_per_one_lot_from_supplied_greeks() {
    let mut inputs = legs_from(&[
        ("CALL", "BUY", 100.0, 3.0, 2),
        ("PUT", "SELL", 95.0, 1.0, 1),
    ]);
    inputs[0].delta = Some(0.52);
    inputs[0].theta = Some(-0.05);
    inputs[0].vega = Some(0.11);
    inputs[1].delta = Some(-0.3);
    inputs[1].theta = Some(-0.03);
    inputs[1].vega = Some(0.09);
    let legs = validate_legs(&inputs).unwrap();
    let a = analyze(&legs, &Market::spot(100.0, 0.04, 0.0)).unwrap();
    // 2·100·0.52 − 100·(−0.3) = 104 + 30; theta 2·100·(−0.05) − 100·(−0.03) = −10 + 3;
    // vega 2·100·0.11 − 100·0.09 = 22 − 9.
    assert!(close(a.net_greeks.delta_shares, 134.0));
    assert!(close(a.net_greeks.theta_usd_per_day, -7.0));
    assert!(close(a.net_greeks.vega_usd_per_vol_point, 13.0));
}

#[test]
fn pnl_curve_spans_strikes_breakevens_and_spot_with_exact_values() {
    let specs = [
        ("PUT", "BUY", 85.0, 0.02, 1),
        ("PUT", "SELL", 90.0, 0.19, 1),
        ("CALL", "SELL", 110.0, 0.36, 1),
        ("CALL", "BUY", 115.0, 0.09, 1),
    ];
    let a = analyse(&specs);
    let first = a.pnl_curve.first().unwrap().0;
    let last = a.pnl_curve.last().unwrap().0;
    assert!(first < 85.0 && last > 115.0);
    assert!(
        (100..=120).contains(&a.pnl_curve.len()),
        "{}",
        a.pnl_curve.len()
    );
    assert!(a.pnl_curve.windows(2).all(|w| w[0].0 < w[1].0));
    for strike in [85.0, 90.0, 110.0, 115.0, 89.56, 110.44] {
        assert!(
            a.pnl_curve.iter().any(|p| close(p.0, strike)),
            "{strike} missing"
        );
    }
    // Spot-check values by hand: at 100 the condor keeps its credit; at 80 it loses the
    // put wing.
    let at = |price: f64| {
        a.pnl_curve
            .iter()
            .min_by(|x, y| (x.0 - price).abs().total_cmp(&(y.0 - price).abs()))
            .unwrap()
    };
    let (p, v) = *at(110.0);
    assert!(close(p, 110.0) && close(v, 44.0));
}

#[test]
fn calendar_is_valued_at_the_first_expiration() {
    let mut inputs = legs_from(&[
        ("CALL", "SELL", 100.0, 2.98, 1),
        ("CALL", "BUY", 100.0, 4.28, 1),
    ]);
    inputs[1].years_to_expiry = Some(60.0 / 365.0);
    let legs = validate_legs(&inputs).unwrap();
    let spot = Market::spot(100.0, 0.03, 0.0);
    let a = analyze(&legs, &spot).unwrap();
    assert_eq!(a.method, ValuationMethod::NumericFirstExpiration);
    assert_eq!(a.valuation_years, 30.0 / 365.0);
    // At S = 0 both calls are worthless: the loss is the debit, 4.28 − 2.98 → −130.
    assert!(close(a.max_loss_usd.finite().unwrap(), -130.0));
    assert_eq!(a.breakevens.len(), 2);
    assert!(a.breakevens[0] < 100.0 && a.breakevens[1] > 100.0);

    // With a dividend yield the European back month would fall below intrinsic deep in the
    // money; the early-exercise floor keeps the loss bounded by the debit (plus nothing).
    let with_yield = analyze(&legs, &Market::spot(100.0, 0.03, 0.02)).unwrap();
    let loss = with_yield
        .max_loss_usd
        .finite()
        .expect("bounded with the floor");
    assert!(close(loss, -130.0), "{loss}");
    // On the forward model (European index options, no floor) the far call pays e^{−rτ}(F − K)
    // against the near call's F − K: the loss grows without bound as F rises.
    let forward = Market {
        model: PricingModel::Black76,
        ..spot
    };
    assert_eq!(
        analyze(&legs, &forward).unwrap().max_loss_usd,
        Bound::Unbounded
    );
}

// The standard normal CDF, independent of the library's (Numerical Recipes' `erfcc`).
use optics_tests::reference::normal_cdf;

/// Black-76 call value and delta (with respect to the forward) per share.
fn black76_call(forward: f64, strike: f64, years: f64, rate: f64, vol: f64) -> (f64, f64) {
    let sd = vol * years.sqrt();
    let d1 = ((forward / strike).ln() + 0.5 * sd * sd) / sd;
    let discount = (-rate * years).exp();
    (
        discount * (forward * normal_cdf(d1) - strike * normal_cdf(d1 - sd)),
        discount * normal_cdf(d1),
    )
}

#[test]
fn forward_model_prices_each_leg_on_its_own_expirations_forward() {
    use optics_compute::strategy::{ForwardPoint, pnl_at_first_expiration};
    let (near, far) = (30.0 / 365.0, 60.0 / 365.0);
    let rate = 0.03;
    // An index whose 60-day forward stands 2 % above its 30-day forward.
    let market = Market::forward_curve(
        100.0,
        rate,
        vec![
            ForwardPoint {
                years: far,
                forward: 102.0,
            },
            ForwardPoint {
                years: near,
                forward: 100.0,
            },
        ],
    );
    assert!(close(market.forward_at(near), 100.0));
    assert!(close(market.forward_at(far), 102.0));
    // Between: a constant carry (log-linear); outside: the end's forward.
    assert!(close(
        market.forward_at(45.0 / 365.0),
        (100.0f64 * 102.0).sqrt()
    ));
    assert!(close(market.forward_at(1.0), 102.0));
    assert!(close(market.forward_at(1.0 / 365.0), 100.0));
    // A new price moves every forward in proportion.
    let moved = market.with_underlying_price(110.0);
    assert!(close(moved.forward_at(far), 102.0 * 1.1));

    // A long 60-day call alone: its delta is Black-76's at the 60-day forward, and its
    // probability of profit is centred there too.
    let mut inputs = legs_from(&[("CALL", "BUY", 100.0, 4.0, 1)]);
    inputs[0].years_to_expiry = Some(far);
    let legs = validate_legs(&inputs).unwrap();
    let a = analyze(&legs, &market).unwrap();
    let (_, delta) = black76_call(102.0, 100.0, far, rate, 0.25);
    assert!(
        (a.net_greeks.delta_shares - 100.0 * delta).abs() < 1e-4,
        "{} vs {}",
        a.net_greeks.delta_shares,
        100.0 * delta
    );
    assert!(close(a.forward_at_valuation, 102.0));
    let sd = 0.25 * far.sqrt();
    let pop = normal_cdf(((102.0f64 / 104.0).ln() - 0.5 * sd * sd) / sd);
    assert!((a.probability_of_profit_pct - 100.0 * pop).abs() < 1e-4);

    // A calendar (short 30-day, long 60-day call at 100): at the first expiration the far
    // call's forward is the settlement price × 102/100, the carry the curve implies.
    let mut inputs = legs_from(&[
        ("CALL", "SELL", 100.0, 2.98, 1),
        ("CALL", "BUY", 100.0, 4.28, 1),
    ]);
    inputs[1].years_to_expiry = Some(far);
    let legs = validate_legs(&inputs).unwrap();
    let prices = [80.0, 95.0, 100.0, 103.0, 120.0];
    let pnl = pnl_at_first_expiration(&legs, &market, &prices).unwrap();
    for (&settle, &got) in prices.iter().zip(&pnl) {
        let (far_value, _) = black76_call(settle * 1.02, 100.0, far - near, rate, 0.25);
        let expected =
            100.0 * (2.98 - 4.28) - 100.0 * (settle - 100.0f64).max(0.0) + 100.0 * far_value;
        // The test's CDF is good to ~1e-7 relative: about a tenth of a cent per one-lot here.
        assert!(
            (got - expected).abs() < 5e-3,
            "at {settle}: {got} vs {expected}"
        );
    }
}

#[test]
fn missing_iv_is_an_error_naming_the_leg() {
    let mut inputs = legs_from(&[("CALL", "BUY", 100.0, 3.0, 1)]);
    inputs[0].iv = None;
    let legs = validate_legs(&inputs).unwrap();
    match analyze(&legs, &Market::spot(100.0, 0.04, 0.0)) {
        Err(StrategyError::Leg {
            index: 0,
            field: "iv",
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    match analyze(&legs, &Market::spot(f64::NAN, 0.04, 0.0)) {
        Err(StrategyError::Input {
            field: "stock_price",
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

fn random_legs() -> impl Strategy<Value = Vec<LegInput>> {
    let leg = (
        prop::bool::ANY,
        prop::bool::ANY,
        60u32..140,
        0u32..2000,
        1u32..4,
    )
        .prop_map(|(call, buy, strike, premium_cents, quantity)| LegInput {
            option_type: Some(if call { "CALL" } else { "PUT" }.into()),
            action: Some(if buy { "BUY" } else { "SELL" }.into()),
            strike: Some(f64::from(strike) / 2.0 + 50.0),
            years_to_expiry: Some(DAYS / 365.0),
            premium: Some(f64::from(premium_cents) / 100.0),
            quantity: Some(f64::from(quantity)),
            iv: Some(0.3),
            ..LegInput::default()
        });
    prop::collection::vec(leg, 1..7)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        rng_seed: RngSeed::Fixed(0x0071_C502),
        ..ProptestConfig::default()
    })]

    /// The exact extremes bound the P&L on a dense grid and are attained; the P&L is zero at
    /// every breakeven, positive inside the profit intervals and not positive outside them.
    #[test]
    fn exact_analysis_is_consistent_with_the_pnl(inputs in random_legs()) {
        let legs = validate_legs(&inputs).unwrap();
        let a = analyze(&legs, &Market::spot(100.0, 0.04, 0.0)).unwrap();
        let pnl = |s: f64| expiration_pnl_usd(&legs, a.net_premium_usd, s);
        let scale = 1e-9 * (1.0 + a.net_premium_usd.abs() + 1e4 * legs.len() as f64);
        let grid: Vec<f64> = (0..=6000).map(|i| f64::from(i) * 0.05).collect();
        let (mut seen_max, mut seen_min) = (f64::NEG_INFINITY, f64::INFINITY);
        for &s in &grid {
            let v = pnl(s);
            seen_max = seen_max.max(v);
            seen_min = seen_min.min(v);
            if let Bound::Finite(max) = a.max_profit_usd { prop_assert!(v <= max + scale); }
            if let Bound::Finite(min) = a.max_loss_usd { prop_assert!(v >= min - scale); }
            // A lower end of 0 is "from zero": S = 0 belongs to it.
            let inside = a.profit_intervals.iter().any(|i| {
                (s > i.lower || (i.lower == 0.0 && s == 0.0)) && i.upper.is_none_or(|u| s < u)
            });
            let near_edge = a.breakevens.iter().any(|b| (b - s).abs() < 1e-6);
            if !near_edge {
                // Inside: positive (or a single touch of zero merged into the interval);
                // outside: not positive.
                if inside {
                    prop_assert!(v > -scale, "s = {}, pnl = {}", s, v);
                } else {
                    prop_assert!(v <= scale, "s = {}, pnl = {}", s, v);
                }
            }
        }
        // The grid contains every strike (multiples of 0.5 up to 300), so finite extremes are
        // attained on it; unbounded sides keep growing past it.
        match a.max_profit_usd {
            Bound::Finite(max) => prop_assert!((seen_max - max).abs() <= scale),
            Bound::Unbounded => prop_assert!(pnl(1e6) > seen_max),
        }
        match a.max_loss_usd {
            Bound::Finite(min) => prop_assert!((seen_min - min).abs() <= scale),
            Bound::Unbounded => prop_assert!(pnl(1e6) < seen_min),
        }
        for &b in &a.breakevens {
            prop_assert!(pnl(b).abs() <= scale * 10.0, "pnl({}) = {}", b, pnl(b));
        }
        prop_assert!((0.0..=100.0).contains(&a.probability_of_profit_pct));
    }
}
