//! Invariants of the pricing core, checked over random and dense inputs.

use optics_compute::pricing::{
    ChainColumns, IvStatus, OptionInputs, OptionType, PricingModel, greeks_unchecked, implied_vol,
    implied_vol_and_greeks_batch, price_unchecked,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn contract(
    option_type: OptionType,
    model: PricingModel,
    underlying: f64,
    strike: f64,
    years: f64,
    rate: f64,
    dividend_yield: f64,
) -> OptionInputs {
    OptionInputs {
        option_type,
        model,
        underlying,
        strike,
        years,
        rate,
        dividend_yield: if model == PricingModel::Black76 {
            0.0
        } else {
            dividend_yield
        },
    }
}

fn any_model() -> impl Strategy<Value = PricingModel> {
    prop_oneof![
        Just(PricingModel::BlackScholesMerton),
        Just(PricingModel::Black76)
    ]
}

fn any_type() -> impl Strategy<Value = OptionType> {
    prop_oneof![Just(OptionType::Call), Just(OptionType::Put)]
}

/// A market that is ordinary enough for finite differences to be meaningful.
fn ordinary() -> impl Strategy<Value = (OptionType, PricingModel, f64, f64, f64, f64, f64, f64)> {
    (
        any_type(),
        any_model(),
        20.0..500.0f64, // underlying
        -0.4..0.4f64,   // ln(K/S)
        0.02..2.5f64,   // years
        -0.01..0.08f64, // rate
        0.0..0.05f64,   // dividend yield
        0.08..1.2f64,   // vol
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        rng_seed: RngSeed::Fixed(0x0071_C503),
        ..ProptestConfig::default()
    })]

    /// C − P = D·(F − K), to the rounding of the larger of the two prices.
    #[test]
    fn put_call_parity(
        (_, model, s, log_k, years, rate, q, vol) in ordinary()
    ) {
        let k = s * log_k.exp();
        let call = contract(OptionType::Call, model, s, k, years, rate, q);
        let put = contract(OptionType::Put, model, s, k, years, rate, q);
        let lhs = price_unchecked(&call, vol) - price_unchecked(&put, vol);
        let rhs = call.discount() * (call.forward() - k);
        let scale = s.max(k);
        prop_assert!((lhs - rhs).abs() <= 1e-13 * scale, "lhs {lhs} rhs {rhs}");
    }

    /// Every Greek is the finite difference of its parent (Richardson-extrapolated central
    /// differences, relative step 1e-4; truncation O(h⁴), round-off ≈ 1e-12/h), checked to
    /// 1e-6 of the Greek's scale.
    #[test]
    fn greeks_are_finite_differences_of_their_parents(
        (option_type, model, s, log_k, years, rate, q, vol) in ordinary()
    ) {
        let k = s * log_k.exp();
        let base = contract(option_type, model, s, k, years, rate, q);
        let g = greeks_unchecked(&base, vol);
        let at = |s_: f64, years_: f64, rate_: f64, q_: f64, vol_: f64| {
            greeks_unchecked(&contract(option_type, model, s_, k, years_, rate_, q_), vol_)
        };
        let hs = s * 1e-4;
        let hv = 1e-4;
        let ht = years * 1e-4;
        let hr = 1e-4;
        // Richardson-extrapolated central difference: truncation error O(h⁴).
        let central = |f: &dyn Fn(f64) -> f64, h: f64| {
            let d1 = (f(h) - f(-h)) / (2.0 * h);
            let d2 = (f(2.0 * h) - f(-2.0 * h)) / (4.0 * h);
            (4.0 * d1 - d2) / 3.0
        };
        // First order from the price.
        let d_s = central(&|h| at(s + h, years, rate, q, vol).price, hs);
        let d_v = central(&|h| at(s, years, rate, q, vol + h).price, hv) / 100.0;
        let d_t = -central(&|h| at(s, years + h, rate, q, vol).price, ht) / 365.0;
        let d_r = central(&|h| at(s, years, rate + h, q, vol).price, hr) / 100.0;
        // Higher orders from their parents.
        let gamma = central(&|h| at(s + h, years, rate, q, vol).delta, hs);
        let vanna = central(&|h| at(s, years, rate, q, vol + h).delta, hv) / 100.0;
        let charm = -central(&|h| at(s, years + h, rate, q, vol).delta, ht) / 365.0;
        let vomma = central(&|h| at(s, years, rate, q, vol + h).vega, hv) / 100.0;
        let veta = -central(&|h| at(s, years + h, rate, q, vol).vega, ht) / 365.0;
        let speed = central(&|h| at(s + h, years, rate, q, vol).gamma, hs);
        let zomma = central(&|h| at(s, years, rate, q, vol + h).gamma, hv) / 100.0;
        let color = -central(&|h| at(s, years + h, rate, q, vol).gamma, ht) / 365.0;
        let ultima = central(&|h| at(s, years, rate, q, vol + h).vomma, hv) / 100.0;
        let dual = {
            let with_k = |kk: f64| price_unchecked(&contract(option_type, model, s, kk, years, rate, q), vol);
            central(&|h| with_k(k + h), k * 1e-4)
        };
        let checks = [
            ("delta", g.delta, d_s, 1.0),
            ("vega", g.vega, d_v, s * years.sqrt() / 100.0),
            ("theta", g.theta, d_t, s / 365.0),
            ("rho", g.rho, d_r, s * years / 100.0),
            ("gamma", g.gamma, gamma, 1.0 / (s * vol * years.sqrt())),
            ("vanna", g.vanna, vanna, 1.0 / (100.0 * vol)),
            ("charm", g.charm, charm, 1.0 / (365.0 * years)),
            ("vomma", g.vomma, vomma, s * years.sqrt() / 1e4 / vol),
            ("veta", g.veta, veta, s * years.sqrt() / (100.0 * 365.0 * years)),
            ("speed", g.speed, speed, 1.0 / (s * s * vol * years * vol)),
            ("zomma", g.zomma, zomma, 1.0 / (s * vol * years.sqrt() * 100.0 * vol)),
            ("color", g.color, color, 1.0 / (s * vol * years.sqrt() * 365.0 * years)),
            ("ultima", g.ultima, ultima, s * years.sqrt() / 1e6 / (vol * vol)),
            ("dual_delta", g.dual_delta, dual, 1.0),
        ];
        for (name, closed, finite_difference, scale) in checks {
            prop_assert!(
                (closed - finite_difference).abs() <= 1e-6 * closed.abs().max(scale),
                "{name}: closed form {closed:e}, finite difference {finite_difference:e}"
            );
        }
        if model == PricingModel::BlackScholesMerton {
            let d_q = central(&|h| at(s, years, rate, q + h, vol).price, hr) / 100.0;
            prop_assert!((g.epsilon - d_q).abs() <= 1e-6 * g.epsilon.abs().max(s * years / 100.0));
        } else {
            prop_assert_eq!(g.epsilon, 0.0);
        }
    }

    /// Bounds and monotonicity: intrinsic ≤ price < maximum; price rises with vol and time
    /// value; calls fall and puts rise with the strike.
    #[test]
    fn bounds_and_monotonicity(
        (option_type, model, s, log_k, years, rate, q, vol) in ordinary()
    ) {
        let k = s * log_k.exp();
        let c = contract(option_type, model, s, k, years, rate, q);
        let p = price_unchecked(&c, vol);
        let maximum = match option_type {
            OptionType::Call => c.discount() * c.forward(),
            OptionType::Put => c.discount() * k,
        };
        prop_assert!(p >= c.intrinsic_value() - 1e-14 * s.max(k));
        prop_assert!(p < maximum);
        let p_more_vol = price_unchecked(&c, vol * 1.01);
        if p - c.intrinsic_value() > 1e-12 * p {
            prop_assert!(p_more_vol > p);
        } else {
            prop_assert!(p_more_vol >= p); // time value below the price's last digits
        }
        let higher_strike = contract(option_type, model, s, k * 1.01, years, rate, q);
        let p_higher = price_unchecked(&higher_strike, vol);
        match option_type {
            OptionType::Call => prop_assert!(p_higher < p),
            OptionType::Put => prop_assert!(p_higher > p),
        }
    }
}

/// Price → implied vol → σ over a dense grid: log-moneyness to ±6 standard deviations,
/// one hour to three years, 1 % to 500 % vol, calls and puts, both models.
#[test]
fn implied_vol_round_trips_on_a_dense_grid() {
    let mut checked = 0usize;
    let mut worst_strict = 0.0f64;
    for model in [PricingModel::BlackScholesMerton, PricingModel::Black76] {
        for &days in &[
            1.0_f64 / 24.0,
            0.5,
            1.0,
            3.0,
            7.0,
            30.0,
            91.0,
            365.0,
            1095.0,
        ] {
            let years = days / 365.0;
            for vol_index in 0..=24 {
                let vol = 0.01 * 500f64.powf(f64::from(vol_index) / 24.0);
                for z_index in -12..=12 {
                    let z = f64::from(z_index) * 0.5;
                    for option_type in [OptionType::Call, OptionType::Put] {
                        let strike = 100.0 * (z * vol * years.sqrt()).exp();
                        let c = contract(option_type, model, 100.0, strike, years, 0.03, 0.01);
                        let price = price_unchecked(&c, vol);
                        let time_value = price - c.intrinsic_value();
                        if !(price > 1e-280 && time_value > 1e-14 * price) {
                            continue; // no volatility information left in the price
                        }
                        let solved = implied_vol(&c, price)
                            .unwrap_or_else(|e| panic!("{c:?} at {vol}: {e}"));
                        let vega = greeks_unchecked(&c, vol).vega * 100.0;
                        let attainable = (1.0 + (price / (vol * vega)).abs()) * f64::EPSILON;
                        let relative_error = ((solved - vol) / vol).abs();
                        let tolerance = if attainable < 1e-13 {
                            1e-12
                        } else {
                            16.0 * attainable
                        };
                        assert!(
                            relative_error <= tolerance,
                            "{c:?} vol {vol}: solved {solved}, error {relative_error:e} > {tolerance:e}"
                        );
                        if attainable < 1e-13 {
                            worst_strict = worst_strict.max(relative_error);
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(
        checked > 15_000,
        "only {checked} grid points carried information"
    );
    assert!(worst_strict <= 1e-12);
}

/// Prices outside the no-arbitrage range have no volatility, and the error says which bound.
#[test]
fn prices_outside_the_bounds_are_typed_failures() {
    let c = contract(
        OptionType::Call,
        PricingModel::BlackScholesMerton,
        100.0,
        80.0,
        0.25,
        0.05,
        0.0,
    );
    let intrinsic = c.intrinsic_value();
    let below = implied_vol(&c, intrinsic * 0.99).unwrap_err();
    assert_eq!(below.code(), "below_intrinsic");
    assert_eq!(
        implied_vol(&c, intrinsic).unwrap_err().code(),
        "no_time_value"
    );
    let maximum = c.discount() * c.forward();
    assert_eq!(
        implied_vol(&c, maximum).unwrap_err().code(),
        "above_maximum"
    );
    assert_eq!(
        implied_vol(&c, maximum * 1.5).unwrap_err().code(),
        "above_maximum"
    );
    assert_eq!(
        implied_vol(&c, f64::NAN).unwrap_err().code(),
        "invalid_input"
    );
    let expired = OptionInputs { years: 0.0, ..c };
    assert_eq!(
        implied_vol(&expired, 21.0).unwrap_err().code(),
        "invalid_input"
    );
    let put = OptionInputs {
        option_type: OptionType::Put,
        strike: 120.0,
        ..c
    };
    assert_eq!(
        implied_vol(&put, put.discount() * 120.0)
            .unwrap_err()
            .code(),
        "above_maximum"
    );
}

/// The batch kernel gives the single-contract answers, row for row, bit for bit.
#[test]
fn batch_matches_single_contract_calls() {
    let n = 20_000;
    let mut types = Vec::with_capacity(n);
    let mut underlying = Vec::with_capacity(n);
    let mut strike = Vec::with_capacity(n);
    let mut years = Vec::with_capacity(n);
    let mut prices = Vec::with_capacity(n);
    for i in 0..n {
        let f = i as f64 / n as f64;
        let option_type = if i % 2 == 0 {
            OptionType::Call
        } else {
            OptionType::Put
        };
        let c = contract(
            option_type,
            PricingModel::BlackScholesMerton,
            100.0,
            60.0 + 80.0 * f,
            0.01 + 2.0 * f,
            0.04,
            0.01,
        );
        let mut price = price_unchecked(&c, 0.1 + 0.5 * f);
        if i % 997 == 0 {
            price = -1.0; // some rows fail, and must fail in both paths
        }
        types.push(option_type);
        underlying.push(100.0);
        strike.push(c.strike);
        years.push(c.years);
        prices.push(price);
    }
    let rates = vec![0.04; n];
    let yields = vec![0.01; n];
    let chain = ChainColumns {
        model: PricingModel::BlackScholesMerton,
        option_type: &types,
        underlying: &underlying,
        strike: &strike,
        years: &years,
        rate: &rates,
        dividend_yield: &yields,
    };
    let batch = implied_vol_and_greeks_batch(&chain, &prices);
    for i in 0..n {
        let c = contract(
            types[i],
            PricingModel::BlackScholesMerton,
            100.0,
            strike[i],
            years[i],
            0.04,
            0.01,
        );
        match implied_vol(&c, prices[i]) {
            Ok(vol) => {
                assert_eq!(batch.iv_status[i], IvStatus::Solved);
                assert_eq!(batch.iv[i].to_bits(), vol.to_bits());
                let g = greeks_unchecked(&c, vol);
                assert_eq!(batch.gamma[i].to_bits(), g.gamma.to_bits());
                assert_eq!(batch.ultima[i].to_bits(), g.ultima.to_bits());
            }
            Err(e) => {
                assert_eq!(batch.iv_status[i].code(), Some(e.code()));
                assert!(batch.iv[i].is_nan());
            }
        }
    }
}
