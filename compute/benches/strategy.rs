//! Strategy benchmark: prints the median time of analyze-strategy on a 4-leg iron condor
//! (goal ≤ 50 µs), of pop and of a calendar analysis, and of optimize-strategy over a full
//! SPY-like expiration of about 250 strikes (goal ≤ 50 ms) for every target, beside the
//! exhaustive search it must equal. Run with `cargo bench -p optics-compute --bench strategy`.
//! It prints figures; it asserts nothing about time.

use std::hint::black_box;

use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, greeks};
use optics_compute::strategy::{
    ChainRow, ExpirationChain, LegInput, Market, OptimizeConstraints, OptimizeStructure,
    OptimizeTarget, SideQuote, analyze, optimize, optimize_exhaustive, probability_of_profit,
    validate_legs,
};
use optics_tests::bench::{XorShift, time_median};

/// Timed repetitions; the median is reported.
const REPEATS: usize = 15;
/// Analyses per timed repetition.
const ANALYSES: usize = 2_000;

const SPOT: f64 = 502.37;
const RATE: f64 = 0.043;
const DIVIDEND_YIELD: f64 = 0.013;

fn condor_legs(with_greeks: bool) -> Vec<LegInput> {
    let legs = [
        ("PUT", "BUY", 470.0, 1.12, -0.06),
        ("PUT", "SELL", 480.0, 2.31, -0.12),
        ("CALL", "SELL", 520.0, 2.05, 0.16),
        ("CALL", "BUY", 530.0, 0.84, 0.08),
    ];
    legs.iter()
        .map(|&(option_type, action, strike, premium, delta)| LegInput {
            option_type: Some(option_type.into()),
            action: Some(action.into()),
            strike: Some(strike),
            years_to_expiry: Some(30.0 / 365.0),
            premium: Some(premium),
            quantity: Some(1.0),
            iv: Some(0.16),
            delta: with_greeks.then_some(delta),
            theta: with_greeks.then_some(-0.05),
            vega: with_greeks.then_some(0.3),
            ..LegInput::default()
        })
        .collect()
}

/// A SPY-like expiration, 30 days out: $1 strikes within ±20 % of spot and $5 strikes out to
/// ±40 %, an equity skew, Black–Scholes mids with a cent-and-a-bit spread and a little noise.
fn spy_expiration(rng: &mut XorShift) -> ExpirationChain {
    let years = 30.0 / 365.0;
    let mut strikes: Vec<f64> = (300..700)
        .step_by(5)
        .map(f64::from)
        .filter(|k| (k - SPOT).abs() > 0.2 * SPOT)
        .collect();
    strikes.extend(((SPOT * 0.8).ceil() as i32..=(SPOT * 1.2).floor() as i32).map(f64::from));
    strikes.sort_by(f64::total_cmp);
    let rows = strikes
        .into_iter()
        .map(|strike| {
            let iv = (0.16 + 0.35 * (SPOT - strike) / SPOT).max(0.08);
            let mut side = |option_type| {
                let inputs = OptionInputs {
                    option_type,
                    model: PricingModel::BlackScholesMerton,
                    underlying: SPOT,
                    strike,
                    years,
                    rate: RATE,
                    dividend_yield: DIVIDEND_YIELD,
                };
                let g = greeks(&inputs, iv).expect("valid inputs");
                let mid = g.price * (1.0 + rng.uniform(-0.01, 0.01));
                let half = 0.005 + 0.003 * mid;
                Some(SideQuote {
                    bid: (mid - half).max(0.0),
                    ask: mid + half,
                    delta: g.delta,
                    theta: g.theta,
                    vega: g.vega,
                    iv,
                })
            };
            ChainRow {
                strike,
                call: side(OptionType::Call),
                put: side(OptionType::Put),
            }
        })
        .collect();
    ExpirationChain {
        expiration: None,
        years_to_expiry: years,
        rows,
    }
}

fn micros_per(total: std::time::Duration, count: usize) -> f64 {
    total.as_secs_f64() * 1e6 / count as f64
}

fn main() {
    println!(
        "optics strategy benchmark (medians of {REPEATS}; shared machine, figures under load)"
    );
    let market = Market::spot(SPOT, RATE, DIVIDEND_YIELD);

    for (label, with_greeks) in [
        ("IVs only, Greeks by Black–Scholes", false),
        ("Greeks supplied", true),
    ] {
        let inputs = condor_legs(with_greeks);
        let time = time_median(REPEATS, || {
            for _ in 0..ANALYSES {
                let legs = validate_legs(black_box(&inputs)).expect("valid legs");
                black_box(analyze(&legs, &market).expect("analysis"));
            }
        });
        println!(
            "analyze-strategy, 4-leg iron condor ({label}): {:.2} µs per analysis incl. \
             validation (goal ≤ 50 µs)",
            micros_per(time, ANALYSES)
        );
    }
    let legs = validate_legs(&condor_legs(false)).expect("valid legs");
    let time = time_median(REPEATS, || {
        for _ in 0..ANALYSES {
            black_box(probability_of_profit(black_box(&legs), &market).expect("pop"));
        }
    });
    println!(
        "pop, 4-leg iron condor: {:.2} µs",
        micros_per(time, ANALYSES)
    );

    let mut calendar = condor_legs(false)[2..3].to_vec();
    calendar[0].strike = Some(500.0);
    let mut back = calendar[0].clone();
    back.action = Some("BUY".into());
    back.years_to_expiry = Some(60.0 / 365.0);
    back.premium = Some(14.0);
    calendar.push(back);
    let calendar = validate_legs(&calendar).expect("valid legs");
    let runs = 50;
    let time = time_median(REPEATS, || {
        for _ in 0..runs {
            black_box(analyze(black_box(&calendar), &market).expect("calendar"));
        }
    });
    println!(
        "analyze-strategy, call calendar (numeric, 2,000-cell grid): {:.1} µs",
        micros_per(time, runs)
    );

    let mut rng = XorShift(0x5b7_2024);
    let chain = spy_expiration(&mut rng);
    println!(
        "optimize-strategy over one SPY-like expiration: {} strikes, default constraints \
         (max width $10, min credit $0.10, short |delta| 0.05–0.50)",
        chain.rows.len()
    );
    let constraints = OptimizeConstraints::default();
    for structure in [
        OptimizeStructure::IronCondor,
        OptimizeStructure::CreditSpread(None),
    ] {
        for target in [
            OptimizeTarget::MaxProfit,
            OptimizeTarget::MinLoss,
            OptimizeTarget::RiskReward,
            OptimizeTarget::Probability,
        ] {
            let mut combinations = 0;
            let fast = time_median(REPEATS, || {
                let best = optimize(structure, target, black_box(&chain), &market, &constraints)
                    .expect("a winner");
                combinations = best.combinations;
                black_box(best);
            });
            let slow = time_median(3, || {
                black_box(
                    optimize_exhaustive(
                        structure,
                        target,
                        black_box(&chain),
                        &market,
                        &constraints,
                    )
                    .expect("a winner"),
                );
            });
            println!(
                "  {structure:?} / {}: {:.2} ms ({combinations} feasible combinations; \
                 exhaustive {:.2} ms, ×{:.1}) (goal ≤ 50 ms)",
                target.as_str(),
                fast.as_secs_f64() * 1e3,
                slow.as_secs_f64() * 1e3,
                slow.as_secs_f64() / fast.as_secs_f64()
            );
        }
    }
    let wide = OptimizeConstraints {
        max_width_dollars: 50.0,
        ..OptimizeConstraints::default()
    };
    let fast = time_median(5, || {
        black_box(
            optimize(
                OptimizeStructure::IronCondor,
                OptimizeTarget::Probability,
                &chain,
                &market,
                &wide,
            )
            .expect("a winner"),
        );
    });
    let slow = time_median(3, || {
        black_box(
            optimize_exhaustive(
                OptimizeStructure::IronCondor,
                OptimizeTarget::Probability,
                &chain,
                &market,
                &wide,
            )
            .expect("a winner"),
        );
    });
    println!(
        "  IronCondor / probability, max width $50: {:.2} ms (exhaustive {:.2} ms)",
        fast.as_secs_f64() * 1e3,
        slow.as_secs_f64() * 1e3
    );
}
