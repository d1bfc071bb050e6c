//! The Arrow entry points: nulls in, nulls out, reasons beside them, values equal to the
//! single-contract functions.

use arrow_array::{Array, BooleanArray, Float64Array};
use optics_compute::pricing::{
    ArrowBatchError, ArrowChain, OptionInputs, OptionType, PricingModel, greeks_arrow,
    greeks_unchecked, implied_vol, implied_vol_arrow, price_unchecked,
};

fn contract(is_call: bool, strike: f64, years: f64) -> OptionInputs {
    OptionInputs {
        option_type: if is_call {
            OptionType::Call
        } else {
            OptionType::Put
        },
        model: PricingModel::BlackScholesMerton,
        underlying: 100.0,
        strike,
        years,
        rate: 0.05,
        dividend_yield: 0.01,
    }
}

#[test]
fn arrow_batch_solves_rows_and_explains_the_rest() {
    let is_call = BooleanArray::from(vec![
        Some(true),
        Some(false),
        Some(true),
        None,
        Some(true),
        Some(false),
    ]);
    let strikes = [95.0, 105.0, 80.0, 100.0, 110.0, 120.0];
    let years = [0.25, 0.5, 0.25, 0.25, 1.0, 0.1];
    let mut prices: Vec<Option<f64>> = strikes
        .iter()
        .zip(&years)
        .enumerate()
        .map(|(i, (&k, &t))| Some(price_unchecked(&contract(i % 2 == 0, k, t), 0.3)))
        .collect();
    prices[2] = Some(1.0); // below the intrinsic value of a call 20 in the money
    prices[4] = None; // no quote
    let n = strikes.len();
    let underlying = Float64Array::from(vec![100.0; n]);
    let strike = Float64Array::from(strikes.to_vec());
    let years_array = Float64Array::from(years.to_vec());
    let rate = Float64Array::from(vec![0.05; n]);
    let dividend_yield = Float64Array::from(vec![0.01; n]);
    let price_array = Float64Array::from(prices.clone());
    let chain = ArrowChain {
        model: PricingModel::BlackScholesMerton,
        is_call: &is_call,
        underlying: &underlying,
        strike: &strike,
        years: &years_array,
        rate: &rate,
        dividend_yield: &dividend_yield,
    };

    let (iv, reasons) = implied_vol_arrow(&chain, &price_array).unwrap();
    assert_eq!(iv.len(), n);
    for i in [0, 1, 5] {
        let c = contract(i % 2 == 0, strikes[i], years[i]);
        let expected = implied_vol(&c, prices[i].unwrap()).unwrap();
        assert_eq!(iv.value(i), expected);
        assert!((expected - 0.3).abs() < 1e-12);
        assert!(reasons.is_null(i));
    }
    assert!(iv.is_null(2));
    assert_eq!(reasons.value(2), "below_intrinsic");
    assert!(iv.is_null(3));
    assert_eq!(reasons.value(3), "missing_input");
    assert!(iv.is_null(4));
    assert_eq!(reasons.value(4), "missing_input");

    let (columns, greek_reasons) = greeks_arrow(&chain, &price_array).unwrap();
    let names: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
    assert_eq!(names[0], "iv");
    for required in [
        "price",
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
        assert!(names.contains(&required), "{required} column");
    }
    let gamma = &columns.iter().find(|(name, _)| *name == "gamma").unwrap().1;
    let c0 = contract(true, 95.0, 0.25);
    let vol0 = implied_vol(&c0, prices[0].unwrap()).unwrap();
    assert_eq!(gamma.value(0), greeks_unchecked(&c0, vol0).gamma);
    assert!(gamma.is_null(2) && gamma.is_null(3) && gamma.is_null(4));
    assert_eq!(greek_reasons.value(2), "below_intrinsic");
}

#[test]
fn arrays_of_different_lengths_are_rejected() {
    let is_call = BooleanArray::from(vec![true, false]);
    let two = Float64Array::from(vec![100.0, 100.0]);
    let three = Float64Array::from(vec![1.0, 2.0, 3.0]);
    let chain = ArrowChain {
        model: PricingModel::Black76,
        is_call: &is_call,
        underlying: &two,
        strike: &two,
        years: &two,
        rate: &two,
        dividend_yield: &two,
    };
    let error = implied_vol_arrow(&chain, &three).unwrap_err();
    assert_eq!(
        error,
        ArrowBatchError::LengthMismatch {
            name: "prices",
            len: 3,
            expected: 2
        }
    );
}
