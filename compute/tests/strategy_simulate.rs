//! simulate-chain against a textbook Black–Scholes written out here, with its own normal
//! distribution (Abramowitz & Stegun 26.2.17, absolute error below 7.5e-8): prices and deltas
//! agree to 1e-6 of the underlying price, which that approximation guarantees.

use optics_compute::pricing::PricingModel;
use optics_compute::strategy::simulate::SIM_IV_FLOOR;
use optics_compute::strategy::{
    SimulationRow, SimulationScenario, SimulationSide, StrategyError, simulate_chain,
};

/// Φ(x) by Abramowitz & Stegun 26.2.17.
fn normal_cdf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.231_641_9 * x.abs());
    let poly = t
        * (0.319_381_530
            + t * (-0.356_563_782
                + t * (1.781_477_937 + t * (-1.821_255_978 + t * 1.330_274_429))));
    let tail = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt() * poly;
    if x >= 0.0 { 1.0 - tail } else { tail }
}

/// (call, put, call delta) by the textbook formulas with continuous r and q.
fn textbook(s: f64, k: f64, t: f64, r: f64, q: f64, vol: f64) -> (f64, f64, f64) {
    let d1 = ((s / k).ln() + (r - q + 0.5 * vol * vol) * t) / (vol * t.sqrt());
    let d2 = d1 - vol * t.sqrt();
    let call = s * (-q * t).exp() * normal_cdf(d1) - k * (-r * t).exp() * normal_cdf(d2);
    let put = k * (-r * t).exp() * normal_cdf(-d2) - s * (-q * t).exp() * normal_cdf(-d1);
    (call, put, (-q * t).exp() * normal_cdf(d1))
}

fn scenario(sim_price: f64, sim_days: f64, iv_adjustment_points: f64) -> SimulationScenario {
    SimulationScenario {
        sim_price,
        sim_days,
        iv_adjustment_points,
        rate: 0.045,
        dividend_yield: 0.01,
        model: PricingModel::BlackScholesMerton,
    }
}

fn row(strike: f64, call_iv: f64, put_iv: f64) -> SimulationRow {
    SimulationRow {
        strike,
        call: Some(SimulationSide {
            iv: call_iv,
            bid: Some(1.00),
            ask: Some(1.20),
        }),
        put: Some(SimulationSide {
            iv: put_iv,
            bid: None,
            ask: None,
        }),
    }
}

#[test]
fn rows_are_repriced_at_their_own_iv_plus_the_shift() {
    let rows = [
        row(95.0, 0.22, 0.26),
        row(100.0, 0.2, 0.21),
        row(110.0, 0.18, 0.2),
    ];
    let out = simulate_chain(&rows, &scenario(103.0, 21.0, 2.5)).unwrap();
    assert_eq!(out.len(), 3);
    let t = 21.0 / 365.0;
    for (input, output) in rows.iter().zip(&out) {
        let call_iv = input.call.unwrap().iv + 0.025;
        let put_iv = input.put.unwrap().iv + 0.025;
        let (call, _, call_delta) = textbook(103.0, input.strike, t, 0.045, 0.01, call_iv);
        let (_, put, _) = textbook(103.0, input.strike, t, 0.045, 0.01, put_iv);
        let c = output.call.unwrap();
        let p = output.put.unwrap();
        assert!((c.iv - call_iv).abs() < 1e-15 && (p.iv - put_iv).abs() < 1e-15);
        assert!(
            (c.value - call).abs() < 1e-6 * 103.0,
            "{} vs {call}",
            c.value
        );
        assert!((p.value - put).abs() < 1e-6 * 103.0, "{} vs {put}", p.value);
        assert!((c.delta - call_delta).abs() < 1e-6);
        // The call came with a 0.20 spread and keeps it around the new value; the put had no
        // quote, so bid = ask = value.
        assert!(
            (c.ask - c.bid - 0.2).abs() < 1e-12 && (c.bid + c.ask - 2.0 * c.value).abs() < 1e-12
        );
        assert_eq!((p.bid, p.ask), (p.value, p.value));
        assert!((c.extrinsic - (c.value - (103.0 - input.strike).max(0.0))).abs() < 1e-12);
    }
}

#[test]
fn expiry_and_iv_floor() {
    let rows = [row(95.0, 0.22, 0.26), row(105.0, 0.2, 0.21)];
    let out = simulate_chain(&rows, &scenario(100.0, 0.0, 0.0)).unwrap();
    // At 0 days: intrinsic values, delta ±1 in the money.
    let (itm_call, otm_put) = (out[0].call.unwrap(), out[0].put.unwrap());
    assert_eq!(
        (itm_call.value, itm_call.delta, itm_call.gamma),
        (5.0, 1.0, 0.0)
    );
    assert_eq!((otm_put.value, otm_put.delta), (0.0, 0.0));
    assert_eq!(
        (out[1].put.unwrap().value, out[1].put.unwrap().delta),
        (5.0, -1.0)
    );
    // The bid of a worthless contract cannot go below zero.
    assert_eq!(out[1].call.unwrap().bid, 0.0);

    // −30 points on a 22 % row: floored at 1 %.
    let shifted = simulate_chain(&rows, &scenario(100.0, 10.0, -30.0)).unwrap();
    let side = shifted[0].call.unwrap();
    assert!(side.iv_floored && side.iv == SIM_IV_FLOOR);
    assert!(
        !simulate_chain(&rows, &scenario(100.0, 10.0, 1.0)).unwrap()[0]
            .call
            .unwrap()
            .iv_floored
    );
}

#[test]
fn bad_inputs_name_their_field() {
    let rows = [row(95.0, 0.22, 0.26)];
    for (s, field) in [
        (scenario(0.0, 10.0, 0.0), "sim_price"),
        (scenario(100.0, -1.0, 0.0), "sim_dte"),
        (scenario(100.0, 10.0, f64::NAN), "iv_adjustment"),
    ] {
        match simulate_chain(&rows, &s) {
            Err(StrategyError::Input { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{other:?}"),
        }
    }
    let bad_row = [row(95.0, -0.1, 0.2)];
    assert!(matches!(
        simulate_chain(&bad_row, &scenario(100.0, 10.0, 0.0)),
        Err(StrategyError::Row {
            index: 0,
            field: "call_iv",
            ..
        })
    ));
}
