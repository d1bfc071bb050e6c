//! Strategy analysis against optionlab 1.9.1, an independent implementation.
//!
//! `tests/data/strategy_vectors.json` comes from `scripts/reference/strategy_vectors.py`,
//! which sets optionlab's inputs so that its conventions are the service's (T = days/365,
//! continuous r and q, one IV for every leg, the forward model as q = r) and scales its
//! positions so that its "profit ≥ $0.01" threshold becomes $0.00001 per one-lot. Nothing in
//! the file comes from this crate.
//!
//! Tolerances (each derived, not tuned):
//! - Breakevens: optionlab's threshold moves a breakeven by 1e-7 / (net slope in shares) ≤
//!   1e-7 dollars; for calendars it interpolates the Black–Scholes curve linearly between
//!   adaptive nodes refined until the probability is within 1e-9, and our bisection stops at
//!   1e-10. Bound used: 1e-6 dollars (exact cases), 1e-4 dollars (calendars).
//! - Probability of profit: the threshold shifts it by at most the density times 1e-7 (below
//!   1e-8); optionlab's calendar integration is within 1e-9. Bound used: 1e-7 absolute
//!   probability (1e-5 percentage points) for every case.
//! - Max profit / max loss of legs of one expiration: optionlab's $0.01 grid contains every
//!   strike, so its extremes on [0, 3·max strike] are exact up to rounding: 1e-6 dollars. An
//!   unbounded side must be where the grid ends (its extreme is the P&L at the top).
//! - Calendars: our extremes are refined between grid nodes, optionlab's are on a $0.01 grid,
//!   so ours may exceed its by the curvature over half a cent (below 1e-3 dollars) and must
//!   not fall short of it by more than rounding.

use optics_compute::pricing::PricingModel;
use optics_compute::strategy::payoff::expiration_pnl_usd;
use optics_compute::strategy::{
    Bound, LegInput, Market, PriceInterval, StrategyAnalysis, ValuationMethod, analyze,
    pnl_at_first_expiration, probability_of_profit, validate_legs,
};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Vectors {
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    model: String,
    stock_price: f64,
    rate: f64,
    dividend_yield: f64,
    volatility: f64,
    first_expiry_days: f64,
    legs: Vec<CaseLeg>,
    premiums: Vec<f64>,
    optionlab: Reference,
}

#[derive(Debug, Deserialize)]
struct CaseLeg {
    #[serde(rename = "type")]
    option_type: String,
    action: String,
    strike: f64,
    quantity: f64,
    days: f64,
}

#[derive(Debug, Deserialize)]
struct Reference {
    probability_of_profit: f64,
    profit_ranges: Vec<(f64, Option<f64>)>,
    breakevens: Vec<f64>,
    domain_top: f64,
    min_pnl_in_domain: f64,
    max_pnl_in_domain: f64,
}

fn load() -> Vectors {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/strategy_vectors.json"
    ))
    .expect("strategy_vectors.json is committed");
    serde_json::from_str(&text).expect("valid vectors")
}

fn market(case: &Case) -> Market {
    Market {
        underlying_price: case.stock_price,
        rate: case.rate,
        dividend_yield: case.dividend_yield,
        model: match case.model.as_str() {
            "spot" => PricingModel::BlackScholesMerton,
            "forward" => PricingModel::Black76,
            other => panic!("unknown model {other}"),
        },
        // The reference cases give one forward for every horizon.
        forward_curve: Vec::new(),
    }
}

fn inputs(case: &Case) -> Vec<LegInput> {
    case.legs
        .iter()
        .zip(&case.premiums)
        .map(|(leg, &premium)| LegInput {
            // Upper case, as clients send them; the reference file uses lower case.
            option_type: Some(leg.option_type.to_uppercase()),
            action: Some(leg.action.to_uppercase()),
            strike: Some(leg.strike),
            years_to_expiry: Some(leg.days / 365.0),
            premium: Some(premium),
            quantity: Some(leg.quantity),
            iv: Some(case.volatility),
            ..LegInput::default()
        })
        .collect()
}

fn analysed(case: &Case) -> StrategyAnalysis {
    let legs = validate_legs(&inputs(case)).unwrap();
    analyze(&legs, &market(case)).unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

#[test]
fn breakevens_and_profit_ranges_match_optionlab() {
    let vectors = load();
    assert!(vectors.cases.len() >= 20);
    let mut worst = [0.0f64; 2];
    for case in &vectors.cases {
        let analysis = analysed(case);
        let tolerance = match analysis.method {
            ValuationMethod::ExactPiecewiseLinear => 1e-6,
            ValuationMethod::NumericFirstExpiration => 1e-4,
        };
        let reference = &case.optionlab;
        assert_eq!(
            analysis.breakevens.len(),
            reference.breakevens.len(),
            "{}: breakevens {:?} vs optionlab {:?}",
            case.name,
            analysis.breakevens,
            reference.breakevens
        );
        for (ours, theirs) in analysis.breakevens.iter().zip(&reference.breakevens) {
            let slot = usize::from(analysis.method == ValuationMethod::NumericFirstExpiration);
            worst[slot] = worst[slot].max((ours - theirs).abs());
            assert!(
                (ours - theirs).abs() <= tolerance,
                "{}: breakeven {ours} vs optionlab {theirs}",
                case.name
            );
        }
        assert_eq!(
            analysis.profit_intervals.len(),
            reference.profit_ranges.len(),
            "{}",
            case.name
        );
        for (ours, (lower, upper)) in analysis
            .profit_intervals
            .iter()
            .zip(&reference.profit_ranges)
        {
            let PriceInterval {
                lower: our_lower,
                upper: our_upper,
            } = *ours;
            assert!((our_lower - lower).abs() <= tolerance, "{}", case.name);
            match (our_upper, upper) {
                (None, None) => {}
                (Some(a), Some(b)) => assert!((a - b).abs() <= tolerance, "{}", case.name),
                other => panic!("{}: open/closed upper end differs: {other:?}", case.name),
            }
        }
    }
    eprintln!(
        "largest breakeven difference: exact {:e}, calendars {:e} dollars",
        worst[0], worst[1]
    );
}

#[test]
fn probability_of_profit_matches_optionlab() {
    let mut worst = 0.0f64;
    for case in &load().cases {
        let analysis = analysed(case);
        let ours = analysis.probability_of_profit_pct / 100.0;
        let theirs = case.optionlab.probability_of_profit;
        worst = worst.max((ours - theirs).abs());
        assert!(
            (ours - theirs).abs() <= 1e-7,
            "{}: POP {ours} vs optionlab {theirs} (diff {:e})",
            case.name,
            ours - theirs
        );
        // The pop endpoint's function gives the same number as the analysis.
        let legs = validate_legs(&inputs(case)).unwrap();
        assert_eq!(
            probability_of_profit(&legs, &market(case)).unwrap(),
            analysis.probability_of_profit_pct
        );
        assert_eq!(analysis.valuation_years, case.first_expiry_days / 365.0);
    }
    eprintln!("largest probability-of-profit difference: {worst:e}");
}

#[test]
fn extremes_match_optionlab_on_its_grid() {
    for case in &load().cases {
        let analysis = analysed(case);
        let reference = &case.optionlab;
        let legs = validate_legs(&inputs(case)).unwrap();
        match analysis.method {
            ValuationMethod::ExactPiecewiseLinear => {
                let at_top =
                    expiration_pnl_usd(&legs, analysis.net_premium_usd, reference.domain_top);
                let expected_max = match analysis.max_profit_usd {
                    Bound::Finite(value) => value,
                    Bound::Unbounded => at_top,
                };
                let expected_min = match analysis.max_loss_usd {
                    Bound::Finite(value) => value,
                    Bound::Unbounded => at_top,
                };
                assert!(
                    (expected_max - reference.max_pnl_in_domain).abs() <= 1e-6,
                    "{}: max {expected_max} vs optionlab {}",
                    case.name,
                    reference.max_pnl_in_domain
                );
                assert!(
                    (expected_min - reference.min_pnl_in_domain).abs() <= 1e-6,
                    "{}: min {expected_min} vs optionlab {}",
                    case.name,
                    reference.min_pnl_in_domain
                );
            }
            ValuationMethod::NumericFirstExpiration => {
                // An unbounded side is where optionlab's grid ends.
                let at_top = pnl_at_first_expiration(&legs, &market(case), &[reference.domain_top])
                    .unwrap()[0];
                let max = analysis.max_profit_usd.finite().unwrap_or(at_top);
                let min = analysis.max_loss_usd.finite().unwrap_or(at_top);
                assert!(
                    max >= reference.max_pnl_in_domain - 1e-9
                        && max - reference.max_pnl_in_domain <= 1e-3,
                    "{}: max {max} vs optionlab {}",
                    case.name,
                    reference.max_pnl_in_domain
                );
                assert!(
                    min <= reference.min_pnl_in_domain + 1e-9
                        && reference.min_pnl_in_domain - min <= 1e-3,
                    "{}: min {min} vs optionlab {}",
                    case.name,
                    reference.min_pnl_in_domain
                );
            }
        }
    }
}
