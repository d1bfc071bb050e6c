//! Builders and the optimizer on hand-built chains whose answers are known, and the optimizer
//! against its exhaustive reference on random chains.

use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, greeks};
use optics_compute::strategy::{
    Action, Bound, ChainRow, ExpirationChain, Market, OptimizeConstraints, OptimizeStructure,
    OptimizeTarget, SideQuote, StrategyError, StrategyType, build_strategy, optimize,
    optimize_exhaustive,
};
use optics_tests::bench::XorShift;

const RATE: f64 = 0.04;

/// One side with a hand-set delta; mid = `mid`, spread 0.10.
fn side(mid: f64, delta: f64) -> Option<SideQuote> {
    Some(SideQuote {
        bid: mid - 0.05,
        ask: mid + 0.05,
        delta,
        theta: -0.02,
        vega: 0.1,
        iv: 0.25,
    })
}

/// Strikes 80..=120 by 5 around spot 100 with hand-set deltas (calls 0.95 → 0.05, puts the
/// complements) and mids that fall away from the money.
fn hand_chain(years: f64) -> ExpirationChain {
    let rows = [
        (80.0, 20.3, 0.95, 0.15, -0.05),
        (85.0, 15.6, 0.90, 0.40, -0.10),
        (90.0, 11.2, 0.80, 0.95, -0.20),
        (95.0, 7.3, 0.65, 2.10, -0.35),
        (100.0, 4.2, 0.50, 4.00, -0.50),
        (105.0, 2.05, 0.35, 6.90, -0.65),
        (110.0, 0.90, 0.22, 10.7, -0.78),
        (115.0, 0.35, 0.12, 15.1, -0.88),
        (120.0, 0.12, 0.05, 19.9, -0.95),
    ];
    ExpirationChain {
        expiration: None,
        years_to_expiry: years,
        rows: rows
            .iter()
            .map(
                |&(strike, call_mid, call_delta, put_mid, put_delta)| ChainRow {
                    strike,
                    call: side(call_mid, call_delta),
                    put: side(put_mid, put_delta),
                },
            )
            .collect(),
    }
}

fn strikes_and_actions(
    legs: &[optics_compute::strategy::Leg],
) -> Vec<(OptionType, Action, f64, u32)> {
    legs.iter()
        .map(|l| (l.option_type, l.action, l.strike, l.quantity))
        .collect()
}

fn market(spot: f64) -> Market {
    Market::spot(spot, RATE, 0.0)
}

#[test]
fn iron_condor_by_delta_and_width() {
    use Action::{Buy, Sell};
    use OptionType::{Call, Put};
    let chain = hand_chain(30.0 / 365.0);
    // |delta| nearest 0.30: the 95 put (0.35) and the 105 call (0.35); wings 5 beyond.
    let built = build_strategy(
        StrategyType::IronCondor,
        0.3,
        5.0,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!(
        strikes_and_actions(&built.legs),
        vec![
            (Put, Buy, 90.0, 1),
            (Put, Sell, 95.0, 1),
            (Call, Sell, 105.0, 1),
            (Call, Buy, 110.0, 1)
        ]
    );
    assert_eq!(built.name, "Iron Condor 90/95/105/110");
    // Credit at the mids: 2.10 + 2.05 − 0.95 − 0.90 = 2.30 → +230; max loss 230 − 500.
    let a = &built.analysis;
    assert!((a.net_premium_usd - 230.0).abs() < 1e-9);
    assert_eq!(a.max_profit_usd, Bound::Finite(a.net_premium_usd));
    assert!((a.max_loss_usd.finite().unwrap() + 270.0).abs() < 1e-9);
    assert!(!built.target_delta_clamped);
    // The legs carry the chain's Greeks and IV.
    assert_eq!(built.legs[1].delta, Some(-0.35));
    assert_eq!(built.legs[1].iv, Some(0.25));
    assert!((built.legs[1].premium_per_share - 2.10).abs() < 1e-12);

    // Width 7: 88 is nearest the 90 (miss 2) rather than 85 (miss 3); width 7.5 ties 90 and
    // 85 (both 2.5 off) and the wider wins.
    let seven = build_strategy(
        StrategyType::IronCondor,
        0.3,
        7.0,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!(seven.legs[0].strike, 90.0);
    assert_eq!(seven.legs[3].strike, 110.0);
    let tie = build_strategy(
        StrategyType::IronCondor,
        0.3,
        7.5,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!(tie.legs[0].strike, 85.0);
    assert_eq!(tie.legs[3].strike, 115.0);
    // A fractional width below the spacing takes the adjacent strike.
    let narrow = build_strategy(
        StrategyType::IronCondor,
        0.3,
        0.5,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!(narrow.legs[0].strike, 90.0);
}

#[test]
fn target_delta_is_clamped_and_crossing_shorts_are_refused() {
    let chain = hand_chain(30.0 / 365.0);
    // 0.9 is clamped to 0.5: the short put lands on 100 (|delta| 0.50).
    let spread = build_strategy(
        StrategyType::CreditSpread(OptionType::Put),
        0.9,
        5.0,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert!(spread.target_delta_clamped);
    assert_eq!(spread.target_delta, 0.5);
    assert_eq!(spread.legs[0].strike, 100.0);
    assert_eq!(spread.legs[1].strike, 95.0);
    // 0.01 is clamped to 0.05: the 80 put and the 120 call.
    let wide = build_strategy(
        StrategyType::Strangle,
        0.01,
        5.0,
        &chain,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!((wide.legs[0].strike, wide.legs[1].strike), (80.0, 120.0));
    // Each refusal names the parameter at fault, and says whether the chain cannot meet it
    // (`Unsatisfiable`) or the value itself is invalid (`Input`).
    let refusal = |strategy, target_delta, width| match build_strategy(
        strategy,
        target_delta,
        width,
        &chain,
        None,
        &market(100.0),
    ) {
        Err(StrategyError::Unsatisfiable { field, .. }) => ("unsatisfiable", field),
        Err(StrategyError::Input { field, .. }) => ("input", field),
        other => panic!("{strategy:?} {target_delta} {width}: {other:?}"),
    };
    // At 0.5 both shorts are the 100 strike: an iron condor cannot be formed, and that is
    // the request's target_delta, not missing data.
    assert_eq!(
        refusal(StrategyType::IronCondor, 0.5, 5.0),
        ("unsatisfiable", "target_delta")
    );
    // 0.05 puts the short put on the lowest listed strike (80): no strike below it for the
    // wing, which is the target_delta's doing.
    assert_eq!(
        refusal(StrategyType::CreditSpread(OptionType::Put), 0.05, 5.0),
        ("unsatisfiable", "target_delta")
    );
    assert_eq!(
        refusal(StrategyType::IronCondor, f64::NAN, 5.0),
        ("input", "target_delta")
    );
    assert_eq!(
        refusal(StrategyType::IronCondor, 0.3, -1.0),
        ("input", "width")
    );
}

#[test]
fn other_structures() {
    use Action::{Buy, Sell};
    use OptionType::{Call, Put};
    let chain = hand_chain(30.0 / 365.0);
    let at = |strategy, spot| {
        strikes_and_actions(
            &build_strategy(strategy, 0.3, 5.0, &chain, None, &market(spot))
                .unwrap()
                .legs,
        )
    };
    // ATM ties (102.5 is as far from 100 as from 105) go to the lower strike.
    assert_eq!(
        at(StrategyType::Straddle, 102.5),
        vec![(Call, Buy, 100.0, 1), (Put, Buy, 100.0, 1)]
    );
    assert_eq!(
        at(StrategyType::Butterfly(Call), 101.0),
        vec![
            (Call, Buy, 95.0, 1),
            (Call, Sell, 100.0, 2),
            (Call, Buy, 105.0, 1)
        ]
    );
    assert_eq!(
        at(StrategyType::IronButterfly, 99.0),
        vec![
            (Put, Buy, 95.0, 1),
            (Put, Sell, 100.0, 1),
            (Call, Sell, 100.0, 1),
            (Call, Buy, 105.0, 1)
        ]
    );
    assert_eq!(
        at(StrategyType::DebitSpread(Call), 100.0),
        vec![(Call, Buy, 105.0, 1), (Call, Sell, 110.0, 1)]
    );
    assert_eq!(
        at(StrategyType::CreditSpread(Call), 100.0),
        vec![(Call, Sell, 105.0, 1), (Call, Buy, 110.0, 1)]
    );
    assert_eq!(
        at(StrategyType::DebitSpread(Put), 100.0),
        vec![(Put, Buy, 95.0, 1), (Put, Sell, 90.0, 1)]
    );
    assert_eq!(
        at(StrategyType::Strangle, 100.0),
        vec![(Put, Buy, 95.0, 1), (Call, Buy, 105.0, 1)]
    );
    // A crossed quote on the 90 put makes it unusable: the wing moves out to 85.
    let mut crossed = chain.clone();
    crossed.rows[2].put = Some(SideQuote {
        bid: 1.2,
        ask: 0.9,
        ..crossed.rows[2].put.unwrap()
    });
    let built = build_strategy(
        StrategyType::IronCondor,
        0.3,
        5.0,
        &crossed,
        None,
        &market(100.0),
    )
    .unwrap();
    assert_eq!(built.legs[0].strike, 85.0);
}

#[test]
fn calendar_sells_near_and_buys_far_at_the_money() {
    let near = hand_chain(30.0 / 365.0);
    let mut far = hand_chain(60.0 / 365.0);
    for row in &mut far.rows {
        row.call = row.call.map(|q| SideQuote {
            bid: q.bid + 1.0,
            ask: q.ask + 1.0,
            ..q
        });
    }
    let built = build_strategy(
        StrategyType::Calendar(OptionType::Call),
        0.3,
        5.0,
        &near,
        Some(&far),
        &market(101.0),
    )
    .unwrap();
    assert_eq!(built.legs[0].action, Action::Sell);
    assert_eq!(built.legs[0].years_to_expiry, 30.0 / 365.0);
    assert_eq!(built.legs[1].action, Action::Buy);
    assert_eq!(built.legs[1].years_to_expiry, 60.0 / 365.0);
    assert_eq!((built.legs[0].strike, built.legs[1].strike), (100.0, 100.0));
    // Debit: far mid 5.20 − near mid 4.20 → −100 per one-lot.
    assert!((built.analysis.net_premium_usd + 100.0).abs() < 1e-9);
    assert!(matches!(
        build_strategy(
            StrategyType::Calendar(OptionType::Call),
            0.3,
            5.0,
            &near,
            None,
            &market(101.0)
        ),
        Err(StrategyError::Input {
            field: "expiration",
            ..
        })
    ));
    assert_eq!(
        StrategyType::parse("Bull-Put Spread").unwrap(),
        StrategyType::CreditSpread(OptionType::Put)
    );
    assert!(matches!(
        StrategyType::parse("condor_of_doom"),
        Err(StrategyError::UnknownStrategyType(_))
    ));
}

/// A Black–Scholes chain with a flat IV (or a skew), strikes `first..=last` by `step`,
/// mids at model value and a spread of 1 % + 1 cent; `noise` perturbs mids by up to ±3 %
/// and occasionally drops a bid or crosses a quote.
fn model_chain(
    spot: f64,
    days: f64,
    strikes: impl Iterator<Item = f64>,
    skew: f64,
    mut noise: Option<&mut XorShift>,
) -> ExpirationChain {
    let years = days / 365.0;
    let rows = strikes
        .map(|strike| {
            let iv = (0.2 + skew * (spot - strike) / spot).max(0.05);
            let mut quote = |option_type| {
                let inputs = OptionInputs {
                    option_type,
                    model: PricingModel::BlackScholesMerton,
                    underlying: spot,
                    strike,
                    years,
                    rate: RATE,
                    dividend_yield: 0.0,
                };
                let g = greeks(&inputs, iv).unwrap();
                let mut mid = g.price;
                let mut half = 0.01 + 0.005 * mid;
                if let Some(rng) = noise.as_deref_mut() {
                    mid *= 1.0 + rng.uniform(-0.03, 0.03);
                    if rng.next_f64() < 0.03 {
                        half = -half; // crossed: unusable
                    }
                }
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
                call: quote(OptionType::Call),
                put: quote(OptionType::Put),
            }
        })
        .collect();
    ExpirationChain {
        expiration: None,
        years_to_expiry: years,
        rows,
    }
}

#[test]
fn optimizer_finds_the_known_best_put_spread() {
    // Flat IV, arbitrage-free mids: a put spread's credit P(Ks) − P(Ks − w) grows with the
    // short strike and with the width (the put price is increasing and convex in the strike),
    // and its loss w − credit shrinks as the short strike rises. With shorts at or below spot
    // 100.5 and |delta| ≤ 0.5, and wings up to $5 on $1 strikes:
    // - max_profit: short 100 (the highest allowed), long 95 (the widest);
    // - min_loss: short 100, long 99 (the narrowest);
    // - probability (the breakeven Ks − credit is lowest at the lowest short and the widest
    //   wing; flat IV, so the lowest breakeven wins): the lowest short whose 5-wide spread
    //   still collects the minimum credit.
    let chain = model_chain(100.5, 30.0, (80..=120).map(f64::from), 0.0, None);
    let spot = market(100.5);
    let constraints = OptimizeConstraints {
        max_width_dollars: 5.0,
        min_credit_per_share: 0.10,
        ..OptimizeConstraints::default()
    };
    let put = OptimizeStructure::CreditSpread(Some(OptionType::Put));
    let run = |target| optimize(put, target, &chain, &spot, &constraints).unwrap();
    let strikes = |o: &optics_compute::strategy::Optimized| {
        (o.legs[0].strike, o.legs[1].strike) // (long, short)
    };
    assert_eq!(strikes(&run(OptimizeTarget::MaxProfit)), (95.0, 100.0));
    assert_eq!(strikes(&run(OptimizeTarget::MinLoss)), (99.0, 100.0));
    let best = run(OptimizeTarget::Probability);
    let mid = |k: f64, t| {
        chain
            .rows
            .iter()
            .find(|r| r.strike == k)
            .unwrap()
            .side(t)
            .unwrap()
            .mid()
    };
    let expected_short = (85..=100)
        .map(f64::from)
        .find(|&k| {
            let delta = chain
                .rows
                .iter()
                .find(|r| r.strike == k)
                .unwrap()
                .put
                .unwrap()
                .delta;
            delta.abs() >= 0.05 && mid(k, OptionType::Put) - mid(k - 5.0, OptionType::Put) >= 0.10
        })
        .unwrap();
    assert_eq!(strikes(&best), (expected_short - 5.0, expected_short));
    // The analysis of the winner agrees with the objective it was chosen on.
    assert!(
        (best.analysis.probability_of_profit_pct / 100.0 - best.objective).abs() < 1e-12,
        "{} vs {}",
        best.analysis.probability_of_profit_pct,
        best.objective
    );
    assert_eq!(best.target, OptimizeTarget::Probability);
}

#[test]
fn optimizer_iron_condor_max_profit_is_the_two_best_sides() {
    // max_profit separates: the best put side (short 100, 5 wide) and the best call side
    // (short 101, 5 wide) by the argument of the previous test and its mirror image.
    let chain = model_chain(100.5, 30.0, (80..=120).map(f64::from), 0.0, None);
    let constraints = OptimizeConstraints {
        max_width_dollars: 5.0,
        ..OptimizeConstraints::default()
    };
    let best = optimize(
        OptimizeStructure::IronCondor,
        OptimizeTarget::MaxProfit,
        &chain,
        &market(100.5),
        &constraints,
    )
    .unwrap();
    let strikes: Vec<f64> = best.legs.iter().map(|l| l.strike).collect();
    assert_eq!(strikes, vec![95.0, 100.0, 101.0, 106.0]);
    assert!((best.analysis.net_premium_usd - 100.0 * best.credit_per_share).abs() < 1e-9);
}

#[test]
fn optimizer_equals_exhaustive_search_on_random_chains() {
    let mut rng = XorShift(0x0b7e_c0de);
    let structures = [
        OptimizeStructure::IronCondor,
        OptimizeStructure::CreditSpread(None),
        OptimizeStructure::CreditSpread(Some(OptionType::Call)),
    ];
    let targets = [
        OptimizeTarget::MaxProfit,
        OptimizeTarget::MinLoss,
        OptimizeTarget::RiskReward,
        OptimizeTarget::Probability,
    ];
    let mut compared = 0;
    let mut cross_checked = 0;
    for round in 0..12 {
        let spot = rng.uniform(50.0, 500.0);
        let step = if round % 3 == 0 {
            0.5
        } else {
            (spot / 100.0).round().max(1.0)
        };
        let first = ((spot * 0.8) / step).floor() * step;
        let count = 60 + (rng.next_f64() * 60.0) as usize;
        let days = rng.uniform(5.0, 60.0);
        let skew = rng.uniform(0.0, 0.4);
        let chain = model_chain(
            spot,
            days,
            (0..count).map(|i| first + step * i as f64),
            skew,
            Some(&mut rng),
        );
        let constraints = OptimizeConstraints {
            max_width_dollars: step * rng.uniform(2.0, 12.0).floor(),
            min_credit_per_share: rng.uniform(0.0, 0.5),
            ..OptimizeConstraints::default()
        };
        let m = market(spot);
        for structure in structures {
            for target in targets {
                let fast = optimize(structure, target, &chain, &m, &constraints);
                let slow = optimize_exhaustive(structure, target, &chain, &m, &constraints);
                // The optimizer's own reference shares its candidate enumeration; the brute
                // force below is written from the documented rules alone.
                let brute = brute_force(structure, target, &chain, spot, &constraints);
                match &fast {
                    Ok(found) => {
                        brute.check_winner(found, structure, target);
                        cross_checked += 1;
                    }
                    Err(error) => assert!(
                        brute.best.is_none(),
                        "{structure:?} {target:?}: the optimizer found nothing ({error}) but \
                         the brute force found {:?}",
                        brute.best
                    ),
                }
                match (fast, slow) {
                    (Ok(fast), Ok(slow)) => {
                        assert_eq!(fast.objective.to_bits(), slow.objective.to_bits());
                        assert_eq!(
                            strikes_and_actions(&fast.legs),
                            strikes_and_actions(&slow.legs)
                        );
                        assert_eq!(fast.combinations, slow.combinations);
                        compared += 1;
                    }
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    other => panic!("{structure:?} {target:?}: {other:?}"),
                }
            }
        }
    }
    assert!(compared >= 100, "only {compared} comparisons had a winner");
    assert_eq!(cross_checked, compared);
}

// ---------------------------------------------------------------------------------------------
// An independent brute force of the optimizer's documented rules (module docs of
// `strategy::optimizer`), sharing no code with it: every (short, long) vertical, every put ×
// call pair, scored with this file's own normal CDF.
// ---------------------------------------------------------------------------------------------

// The standard normal CDF, independent of the library's (Numerical Recipes' `erfcc`).
use optics_tests::reference::normal_cdf;

/// P(S_T > level), lognormal with forward `forward`.
fn above(forward: f64, level: f64, vol: f64, years: f64) -> f64 {
    if level <= 0.0 {
        return 1.0;
    }
    let sd = vol * years.sqrt();
    normal_cdf(((forward / level).ln() - 0.5 * sd * sd) / sd)
}

#[derive(Debug, Clone, Copy)]
struct Vertical {
    short: f64,
    long: f64,
    credit: f64,
    width: f64,
    short_iv: f64,
}

#[derive(Debug, Clone, Copy)]
struct Scored {
    score: f64,
    credit: f64,
    width: f64,
    /// long put, short put, short call, long call (0 where absent).
    strikes: [f64; 4],
}

struct BruteForce {
    best: Option<Scored>,
    all: Vec<Scored>,
}

impl BruteForce {
    /// The optimizer's winner is a feasible combination the brute force also found, its
    /// objective is the best score (exactly for the arithmetic targets; within the test
    /// CDF's accuracy for probability), the tie-break picks the same strikes for the
    /// arithmetic targets, and both counted the same feasible combinations.
    fn check_winner(
        &self,
        found: &optics_compute::strategy::Optimized,
        structure: OptimizeStructure,
        target: OptimizeTarget,
    ) {
        let best = self
            .best
            .unwrap_or_else(|| panic!("{structure:?} {target:?}: brute force found nothing"));
        let mut strikes = [0.0; 4];
        for leg in &found.legs {
            let slot = match (leg.option_type, leg.action) {
                (OptionType::Put, Action::Buy) => 0,
                (OptionType::Put, Action::Sell) => 1,
                (OptionType::Call, Action::Sell) => 2,
                (OptionType::Call, Action::Buy) => 3,
            };
            strikes[slot] = leg.strike;
        }
        let mine = self
            .all
            .iter()
            .find(|c| c.strikes == strikes)
            .unwrap_or_else(|| {
                panic!("{structure:?} {target:?}: winner {strikes:?} is not feasible")
            });
        assert_eq!(
            found.combinations as usize,
            self.all.len(),
            "{structure:?} {target:?}: feasible combinations"
        );
        if target == OptimizeTarget::Probability {
            assert!(
                mine.score >= best.score - 1e-6,
                "{structure:?}: winner's probability {} below the best {}",
                mine.score,
                best.score
            );
            assert!((found.objective - mine.score).abs() < 1e-6);
        } else {
            let tolerance = 1e-12 * best.score.abs().max(1.0);
            assert!(
                (found.objective - best.score).abs() <= tolerance,
                "{structure:?} {target:?}: objective {} vs brute force {}",
                found.objective,
                best.score
            );
            assert_eq!(strikes, best.strikes, "{structure:?} {target:?}: tie-break");
        }
    }
}

fn brute_force(
    structure: OptimizeStructure,
    target: OptimizeTarget,
    chain: &ExpirationChain,
    spot: f64,
    constraints: &OptimizeConstraints,
) -> BruteForce {
    let years = chain.years_to_expiry;
    let forward = spot * (RATE * years).exp();
    let mut rows = chain.rows.clone();
    rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let quote = |row: &ChainRow, side: OptionType| {
        let q = match side {
            OptionType::Call => row.call,
            OptionType::Put => row.put,
        }?;
        // Two-sided and uncrossed (a zero bid allowed).
        (q.bid >= 0.0 && q.ask > 0.0 && q.ask >= q.bid && q.iv > 0.0).then_some(q)
    };
    let verticals = |side: OptionType| {
        let mut out = Vec::new();
        for short_row in &rows {
            let Some(short) = quote(short_row, side) else {
                continue;
            };
            let out_of_the_money = match side {
                OptionType::Put => short_row.strike <= spot,
                OptionType::Call => short_row.strike >= spot,
            };
            let d = short.delta.abs();
            if !out_of_the_money
                || d < constraints.min_short_abs_delta
                || d > constraints.max_short_abs_delta
            {
                continue;
            }
            for long_row in &rows {
                let beyond = match side {
                    OptionType::Put => long_row.strike < short_row.strike,
                    OptionType::Call => long_row.strike > short_row.strike,
                };
                let width = (long_row.strike - short_row.strike).abs();
                let Some(long) = quote(long_row, side) else {
                    continue;
                };
                let credit = 0.5 * (short.bid + short.ask) - 0.5 * (long.bid + long.ask);
                if beyond
                    && width <= constraints.max_width_dollars
                    && credit > 0.0
                    && credit < width
                {
                    out.push(Vertical {
                        short: short_row.strike,
                        long: long_row.strike,
                        credit,
                        width,
                        short_iv: short.iv,
                    });
                }
            }
        }
        out
    };
    let score = |put: Option<&Vertical>, call: Option<&Vertical>| -> Option<Scored> {
        let credit = put.map_or(0.0, |v| v.credit) + call.map_or(0.0, |v| v.credit);
        let width = put
            .map_or(0.0, |v| v.width)
            .max(call.map_or(0.0, |v| v.width));
        if credit < constraints.min_credit_per_share || credit >= width {
            return None;
        }
        let score = match target {
            OptimizeTarget::MaxProfit => credit,
            OptimizeTarget::MinLoss => credit - width,
            OptimizeTarget::RiskReward => credit / (width - credit),
            OptimizeTarget::Probability => {
                // Profit between short put − C and short call + C; a side whose credit
                // covers its width cannot lose and leaves that end open.
                let vol = match (put, call) {
                    (Some(p), Some(c)) => {
                        let (dp, dc) = ((p.short - spot).abs(), (c.short - spot).abs());
                        if dp < dc {
                            p.short_iv
                        } else if dc < dp {
                            c.short_iv
                        } else {
                            0.5 * (p.short_iv + c.short_iv)
                        }
                    }
                    (Some(v), None) | (None, Some(v)) => v.short_iv,
                    (None, None) => unreachable!(),
                };
                let lower = put.filter(|p| credit <= p.width).map(|p| p.short - credit);
                let upper = call.filter(|c| credit <= c.width).map(|c| c.short + credit);
                let p_above_lower = lower.map_or(1.0, |l| above(forward, l, vol, years));
                let p_above_upper = upper.map_or(0.0, |u| above(forward, u, vol, years));
                p_above_lower - p_above_upper
            }
        };
        Some(Scored {
            score,
            credit,
            width,
            strikes: [
                put.map_or(0.0, |v| v.long),
                put.map_or(0.0, |v| v.short),
                call.map_or(0.0, |v| v.short),
                call.map_or(0.0, |v| v.long),
            ],
        })
    };
    let puts = verticals(OptionType::Put);
    let calls = verticals(OptionType::Call);
    let mut all = Vec::new();
    match structure {
        OptimizeStructure::CreditSpread(side) => {
            if side != Some(OptionType::Call) {
                all.extend(puts.iter().filter_map(|p| score(Some(p), None)));
            }
            if side != Some(OptionType::Put) {
                all.extend(calls.iter().filter_map(|c| score(None, Some(c))));
            }
        }
        OptimizeStructure::IronCondor => {
            for p in &puts {
                for c in calls.iter().filter(|c| p.short < c.short) {
                    all.extend(score(Some(p), Some(c)));
                }
            }
        }
    }
    // Best score, then larger credit, then the narrower wider wing, then lower strikes.
    let best = all.iter().copied().reduce(|a, b| {
        let key = |x: &Scored| (x.score, x.credit, -x.width);
        let (ka, kb) = (key(&a), key(&b));
        let b_wins = kb.0 > ka.0
            || (kb.0 == ka.0
                && (kb.1 > ka.1
                    || (kb.1 == ka.1 && (kb.2 > ka.2 || (kb.2 == ka.2 && b.strikes < a.strikes)))));
        if b_wins { b } else { a }
    });
    BruteForce { best, all }
}

#[test]
fn optimizer_rejects_bad_constraints_and_reports_no_candidate() {
    let chain = hand_chain(30.0 / 365.0);
    let bad = OptimizeConstraints {
        max_width_dollars: 0.0,
        ..OptimizeConstraints::default()
    };
    assert!(matches!(
        optimize(
            OptimizeStructure::IronCondor,
            OptimizeTarget::MaxProfit,
            &chain,
            &market(100.0),
            &bad
        ),
        Err(StrategyError::Input {
            field: "max_width",
            ..
        })
    ));
    let impossible = OptimizeConstraints {
        min_credit_per_share: 50.0,
        ..OptimizeConstraints::default()
    };
    // Unreachable minimum credit: the constraint is named with the best available credit.
    match optimize(
        OptimizeStructure::IronCondor,
        OptimizeTarget::MaxProfit,
        &chain,
        &market(100.0),
        &impossible,
    ) {
        Err(StrategyError::Unsatisfiable {
            field: "min_credit",
            reason,
        }) => assert!(reason.contains("the most one collects is"), "{reason}"),
        other => panic!("expected min_credit to be named, got {other:?}"),
    }
    // Wings narrower than any listed spacing: max_width is named.
    let too_narrow = OptimizeConstraints {
        max_width_dollars: 1.0,
        ..OptimizeConstraints::default()
    };
    assert!(matches!(
        optimize(
            OptimizeStructure::CreditSpread(Some(OptionType::Put)),
            OptimizeTarget::MaxProfit,
            &chain,
            &market(100.0),
            &too_narrow
        ),
        Err(StrategyError::Unsatisfiable {
            field: "max_width",
            ..
        })
    ));
    // No usable put at all is missing data, not the request's fault.
    let mut no_puts = chain.clone();
    for row in &mut no_puts.rows {
        row.put = None;
    }
    assert!(matches!(
        optimize(
            OptimizeStructure::CreditSpread(Some(OptionType::Put)),
            OptimizeTarget::MaxProfit,
            &no_puts,
            &market(100.0),
            &OptimizeConstraints::default()
        ),
        Err(StrategyError::MissingQuotes(_))
    ));
    assert!(matches!(
        build_strategy(
            StrategyType::CreditSpread(OptionType::Put),
            0.3,
            5.0,
            &no_puts,
            None,
            &market(100.0)
        ),
        Err(StrategyError::MissingQuotes(_))
    ));
    assert_eq!(
        OptimizeTarget::parse("RISK_REWARD").unwrap(),
        OptimizeTarget::RiskReward
    );
    assert!(OptimizeTarget::parse("fastest").is_err());
}

#[test]
fn optimizer_refuses_searches_too_wide_to_run() {
    // 1,001 strikes ten cents apart: the default delta range with $40 wings admits tens of
    // thousands of spreads a side, billions of condors; refused before any is examined.
    let chain = model_chain(
        100.0,
        30.0,
        (0..=1000).map(|i| 50.0 + 0.1 * f64::from(i)),
        0.0,
        None,
    );
    let spot = market(100.0);
    let condor = OptimizeStructure::IronCondor;
    let wide = OptimizeConstraints {
        max_width_dollars: 40.0,
        ..OptimizeConstraints::default()
    };
    let refused = optimize(condor, OptimizeTarget::MaxProfit, &chain, &spot, &wide).unwrap_err();
    let message = refused.to_string();
    assert!(
        matches!(
            refused,
            StrategyError::Input {
                field: "max_width",
                ..
            }
        ),
        "{message}"
    );
    assert!(
        message.contains("condors, more than the 2000000"),
        "{message}"
    );
    // A wing wider than half the underlying price is never searched.
    let absurd = OptimizeConstraints {
        max_width_dollars: 1e9,
        ..OptimizeConstraints::default()
    };
    let message = optimize(condor, OptimizeTarget::MaxProfit, &chain, &spot, &absurd)
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("max_width: at most 50.00 dollars"),
        "{message}"
    );
    // The same chain with $1 wings is searched.
    let narrow = OptimizeConstraints {
        max_width_dollars: 1.0,
        ..OptimizeConstraints::default()
    };
    assert!(optimize(condor, OptimizeTarget::MaxProfit, &chain, &spot, &narrow).is_ok());
}
