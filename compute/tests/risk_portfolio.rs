//! Portfolio Greeks, scenarios, stress tests and hedges on a small book whose every figure is
//! worked out by hand in the comments.

use optics_compute::pricing::OptionType;
use optics_compute::risk::hedge::{
    MAX_HEDGE_SPREAD_FRACTION_OF_MID, MIN_HEDGE_OPEN_INTEREST, MIN_HEDGE_VOLUME,
};
use optics_compute::risk::{
    HedgeCandidate, HedgeContract, IV_CHANGE_BASIS, PositionInput, RiskError, RiskLevel,
    STRESS_SCENARIOS, Scenario, TradeAction, UnderlyingPrice, estimate_scenarios, hedge_plan,
    is_liquid, portfolio_greeks, select_hedge_contract, stress_tests, validate_positions,
};
use optics_compute::strategy::SideQuote;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + b.abs())
}

/// - 100 AAPL shares at 200, bought at 180.
/// - Short 2 AAPL 210 calls at 3.00, sold at 4.00; per share delta 0.35, gamma 0.02, theta
///   −0.12, vega 0.25; 36.5 days left.
/// - Long 5 SPY 480 puts at 6.50, no entry price; delta −0.40, gamma 0.01, theta −0.15, vega
///   0.60; 7.3 days left.
fn book() -> Vec<PositionInput> {
    vec![
        PositionInput {
            ticker: Some("AAPL".into()),
            position_type: Some("STOCK".into()),
            quantity: Some(100.0),
            entry_price: Some(180.0),
            current_price: Some(200.0),
            ..PositionInput::default()
        },
        PositionInput {
            ticker: Some("aapl".into()),
            position_type: Some("call".into()),
            quantity: Some(-2.0),
            strike: Some(210.0),
            years_to_expiry: Some(0.1),
            entry_price: Some(4.0),
            current_price: Some(3.0),
            delta: Some(0.35),
            gamma: Some(0.02),
            theta: Some(-0.12),
            vega: Some(0.25),
            iv: Some(0.3),
            ..PositionInput::default()
        },
        PositionInput {
            ticker: Some("SPY".into()),
            position_type: Some("PUT".into()),
            quantity: Some(5.0),
            strike: Some(480.0),
            years_to_expiry: Some(0.02),
            current_price: Some(6.5),
            delta: Some(-0.4),
            gamma: Some(0.01),
            theta: Some(-0.15),
            vega: Some(0.6),
            iv: Some(0.6),
            ..PositionInput::default()
        },
    ]
}

fn spy_price() -> Vec<UnderlyingPrice> {
    vec![UnderlyingPrice {
        ticker: "spy".into(),
        price: 500.0,
    }]
}

#[test]
fn totals_value_pnl_and_risk_level() {
    let positions = validate_positions(&book()).unwrap();
    let p = portfolio_greeks(&positions, &spy_price()).unwrap();
    // delta: 100 − 2·100·0.35 + 5·100·(−0.40) = 100 − 70 − 200.
    assert!(close(p.total_delta_shares, -170.0));
    // theta: −200·(−0.12) + 500·(−0.15) = 24 − 75; vega: −200·0.25 + 500·0.60 = −50 + 300.
    assert!(close(p.total_theta_usd_per_day, -51.0));
    assert!(close(p.total_vega_usd_per_vol_point, 250.0));
    // gamma: 0 − 200·0.02 + 500·0.01.
    assert!(close(p.total_gamma_shares_per_dollar.unwrap(), 1.0));
    // value: 20 000 − 600 + 3 250; gross 20 000 + 600 + 3 250.
    assert!(close(p.net_value_usd, 22_650.0));
    assert!(close(p.gross_value_usd, 23_850.0));
    // P&L: 100·(200 − 180) + (−200)·(3 − 4); the puts have no entry price.
    assert!(close(p.unrealized_pnl_usd, 2_200.0));
    assert_eq!(p.positions_without_entry_price, vec![2]);
    // Dollar delta: AAPL (100 − 70)·200 = 6 000; SPY −200·500 = −100 000.
    assert!(close(p.dollar_delta_usd, -94_000.0));
    let exposure = p.delta_exposure_pct.unwrap();
    assert!(close(exposure, -94_000.0 / 23_850.0 * 100.0));
    assert!(close(p.daily_decay_pct.unwrap(), -51.0 / 23_850.0 * 100.0));
    // |−394 %| is beyond 200: EXTREME (decay −0.21 %/day alone would be MODERATE).
    assert_eq!(p.risk_level, RiskLevel::Extreme);
    assert_eq!(p.risk_level.as_str(), "EXTREME");
    let aapl = &p.by_ticker["AAPL"];
    assert!(close(aapl.delta_shares, 30.0) && close(aapl.value_usd, 19_400.0));
    assert_eq!(aapl.positions, 2);
    assert_eq!(aapl.underlying_price, 200.0);
    assert!(close(p.by_ticker["SPY"].vega_usd_per_vol_point, 300.0));
    assert_eq!(p.by_ticker.keys().collect::<Vec<_>>(), vec!["AAPL", "SPY"]);
}

#[test]
fn stock_only_book_is_moderate_and_missing_prices_are_errors() {
    let stock = validate_positions(&book()[..1]).unwrap();
    let p = portfolio_greeks(&stock, &[]).unwrap();
    // A fully invested unlevered long: 100 % exposure, no decay.
    assert!(close(p.delta_exposure_pct.unwrap(), 100.0));
    assert_eq!(p.risk_level, RiskLevel::Moderate);
    let positions = validate_positions(&book()).unwrap();
    assert_eq!(
        portfolio_greeks(&positions, &[]),
        Err(RiskError::MissingUnderlyingPrice {
            ticker: "SPY".into()
        })
    );
    // Without gamma on an option the total gamma is unknown, not zero.
    let mut inputs = book();
    inputs[2].gamma = None;
    let p = portfolio_greeks(&validate_positions(&inputs).unwrap(), &spy_price()).unwrap();
    assert_eq!(p.total_gamma_shares_per_dollar, None);
}

#[test]
fn scenario_contributions_and_the_iv_basis() {
    let positions = validate_positions(&book()).unwrap();
    let scenarios = [
        Scenario {
            stock_move_pct: -10.0,
            iv_change_pct: 5.0,
            days_forward: 7.0,
        },
        Scenario {
            stock_move_pct: 0.0,
            iv_change_pct: 0.0,
            days_forward: 30.0,
        },
    ];
    let report = estimate_scenarios(&positions, &spy_price(), &scenarios).unwrap();
    assert!(close(report.current_value_usd, 22_650.0));
    let first = &report.estimates[0];
    // delta: AAPL 30 sh·200·(−10 %) = −600; SPY −200 sh·500·(−10 %) = +10 000.
    assert!(close(first.delta_contribution_usd, 9_400.0));
    // vega: 250 $/pt × 5 points. Read as points, the positions' IVs (30 % and 60 %) do not
    // matter; read relatively it would have been −50·(0.30·5) + 300·(0.60·5) = 825.
    assert_eq!(IV_CHANGE_BASIS.as_str(), "vol_points");
    assert!(close(first.vega_contribution_usd, 1_250.0));
    // theta: both options outlive 7 days: (24 − 75)·7.
    assert!(close(first.theta_contribution_usd, -357.0));
    assert!(close(first.estimated_pnl_usd, 10_293.0));
    assert!(close(first.new_portfolio_value_usd, 22_650.0 + 10_293.0));
    assert!(close(
        first.estimated_pnl_pct.unwrap(),
        10_293.0 / 23_850.0 * 100.0
    ));
    // 30 days: the calls decay all 30 (24·30 = 720), the puts only their 7.3 remaining days
    // (−75·7.3 = −547.5).
    assert!(close(report.estimates[1].theta_contribution_usd, 172.5));

    let bad = [Scenario {
        stock_move_pct: -150.0,
        iv_change_pct: 0.0,
        days_forward: 0.0,
    }];
    assert!(matches!(
        estimate_scenarios(&positions, &spy_price(), &bad),
        Err(RiskError::Scenario {
            index: 0,
            field: "stock_move_pct",
            ..
        })
    ));
}

#[test]
fn stress_set_is_fixed_named_and_uses_the_same_estimator() {
    let names: Vec<&str> = STRESS_SCENARIOS.iter().map(|s| s.name).collect();
    assert!(names.len() >= 8);
    for wanted in [
        "Market Crash",
        "Correction",
        "Pullback",
        "Vol Spike",
        "Vol Crush",
        "Rally",
        "Melt-Up",
        "Time Decay (1 week)",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing");
    }
    let positions = validate_positions(&book()).unwrap();
    let stress = stress_tests(&positions, &spy_price()).unwrap();
    assert_eq!(stress.estimates.len(), STRESS_SCENARIOS.len());
    let scenarios: Vec<Scenario> = STRESS_SCENARIOS.iter().map(|s| s.scenario).collect();
    assert_eq!(
        stress,
        estimate_scenarios(&positions, &spy_price(), &scenarios).unwrap()
    );
    // The crash on the 100-share book alone: 100·200·(−20 %).
    let stock = validate_positions(&book()[..1]).unwrap();
    let crash = &stress_tests(&stock, &[]).unwrap().estimates[0];
    assert!(close(crash.estimated_pnl_usd, -4_000.0));
}

#[test]
fn hedges_close_the_delta_gap() {
    let positions = validate_positions(&book()).unwrap();
    let call = HedgeContract {
        option_type: OptionType::Call,
        strike: 500.0,
        expiration: None,
        years_to_expiry: 30.0 / 365.0,
        delta: 0.5,
        theta: -0.2,
        vega: 0.5,
        mid: 10.0,
        bid: 9.95,
        ask: 10.05,
        open_interest: Some(5_000),
        volume: Some(800),
    };
    let plan = hedge_plan(&positions, &spy_price(), "spy", 500.0, 0.0, Some(&call)).unwrap();
    assert!(close(plan.current_delta, -170.0));
    assert!(close(plan.delta_gap, 170.0));
    let stock = plan.stock.unwrap();
    assert_eq!(
        (stock.action, stock.shares, stock.est_cost_usd),
        (TradeAction::Buy, 170.0, 85_000.0)
    );
    assert!(close(plan.after_stock.delta_shares, 0.0));
    // 170 / 50 per contract = 3.4 → 3 contracts bought for 3·10·100; delta −170 + 150.
    let option = plan.option.unwrap();
    assert_eq!(option.action, TradeAction::Buy);
    assert_eq!(option.contracts, 3.0);
    assert_eq!(option.delta_per_contract, 50.0);
    assert!(close(option.est_cost_usd, 3_000.0));
    let after = plan.after_option.unwrap();
    assert!(close(after.delta_shares, -20.0));
    assert!(close(after.theta_usd_per_day, -51.0 - 60.0));
    assert!(close(after.vega_usd_per_vol_point, 250.0 + 150.0));
    assert!(plan.note.contains("not beta-weighted"));

    // A long SPY holder reducing delta sells what it holds; beyond that it sells short.
    let mut long_spy = book();
    long_spy.push(PositionInput {
        ticker: Some("SPY".into()),
        position_type: Some("stock".into()),
        quantity: Some(400.0),
        current_price: Some(500.0),
        ..PositionInput::default()
    });
    let positions = validate_positions(&long_spy).unwrap();
    // Delta −170 + 400 = 230; to 0: sell 230 of the 400 held.
    let plan = hedge_plan(&positions, &[], "SPY", 500.0, 0.0, None).unwrap();
    assert_eq!(plan.stock.unwrap().action, TradeAction::Sell);
    assert_eq!(plan.stock.unwrap().shares, 230.0);
    // To −500: sell 730, more than held.
    let plan = hedge_plan(&positions, &[], "SPY", 500.0, -500.0, None).unwrap();
    assert_eq!(plan.stock.unwrap().action, TradeAction::SellShort);
    assert_eq!(plan.stock.unwrap().action.as_str(), "SELL SHORT");
    assert!(plan.option.is_none() && plan.after_option.is_none());
}

/// A contract with a 20-cent market above `bid`, busy enough to be liquid.
fn candidate(
    option_type: OptionType,
    strike: f64,
    days: f64,
    delta: f64,
    bid: f64,
) -> HedgeCandidate {
    HedgeCandidate {
        option_type,
        strike,
        expiration: None,
        years_to_expiry: days / 365.0,
        quote: SideQuote {
            bid,
            ask: bid + 0.2,
            delta,
            theta: -0.1,
            vega: 0.4,
            iv: 0.2,
        },
        open_interest: Some(2_000),
        volume: Some(300),
    }
}

/// Strikes 490, 500, 510 of one expiration; the 500 put has no bid.
fn expiry(days: f64) -> Vec<HedgeCandidate> {
    use OptionType::{Call, Put};
    vec![
        candidate(Call, 490.0, days, 0.62, 14.0),
        candidate(Put, 490.0, days, -0.38, 6.0),
        candidate(Call, 500.0, days, 0.52, 9.0),
        candidate(Put, 500.0, days, -0.48, 0.0),
        candidate(Call, 510.0, days, 0.41, 5.0),
        candidate(Put, 510.0, days, -0.59, 13.0),
    ]
}

#[test]
fn hedge_contract_selection() {
    let chains: Vec<HedgeCandidate> = [3.0, 25.0, 35.0, 60.0]
        .into_iter()
        .flat_map(expiry)
        .collect();
    // Adding delta: calls. 25 and 35 days tie around 30: the later. |delta| nearest 0.5: 500.
    let call = select_hedge_contract(&chains, 120.0).unwrap();
    assert_eq!(call.option_type, OptionType::Call);
    assert_eq!(call.years_to_expiry, 35.0 / 365.0);
    assert_eq!(call.strike, 500.0);
    assert!(close(call.mid, 9.1));
    assert_eq!((call.open_interest, call.volume), (Some(2_000), Some(300)));
    // Removing delta: puts; the 500 put has no bid, so 490 (0.38) and 510 (0.59) compete:
    // 510 is 0.09 off 0.5, 490 is 0.12 off.
    let put = select_hedge_contract(&chains, -120.0).unwrap();
    assert_eq!((put.option_type, put.strike), (OptionType::Put, 510.0));
    // Only expirations under 7 days: none qualifies.
    assert!(matches!(
        select_hedge_contract(&expiry(3.0), 10.0),
        Err(RiskError::NoHedgeContract(_))
    ));
}

#[test]
fn hedge_contracts_must_be_liquid() {
    use OptionType::Call;
    let busy = candidate(Call, 500.0, 30.0, 0.5, 9.0);
    assert!(is_liquid(&busy));
    // Quiet: open interest and volume both under their minimums.
    let quiet = HedgeCandidate {
        open_interest: Some(MIN_HEDGE_OPEN_INTEREST - 1),
        volume: Some(MIN_HEDGE_VOLUME - 1),
        ..busy
    };
    assert!(!is_liquid(&quiet));
    // Either figure alone is enough; unknown counts as none.
    assert!(is_liquid(&HedgeCandidate {
        open_interest: None,
        volume: Some(MIN_HEDGE_VOLUME),
        ..busy
    }));
    assert!(is_liquid(&HedgeCandidate {
        open_interest: Some(MIN_HEDGE_OPEN_INTEREST),
        volume: None,
        ..busy
    }));
    assert!(!is_liquid(&HedgeCandidate {
        open_interest: None,
        volume: None,
        ..busy
    }));
    // Spread: 9.0 / 9.2 is 2.2 % of the mid; a spread just over the limit is refused, one at
    // it accepted (mid 10, spread = limit × 10).
    let at_limit = |extra: f64| HedgeCandidate {
        quote: SideQuote {
            bid: 10.0 - 5.0 * MAX_HEDGE_SPREAD_FRACTION_OF_MID - extra,
            ask: 10.0 + 5.0 * MAX_HEDGE_SPREAD_FRACTION_OF_MID + extra,
            ..busy.quote
        },
        ..busy
    };
    assert!(is_liquid(&at_limit(0.0)));
    assert!(!is_liquid(&at_limit(0.01)));
    // One-sided (no bid) is not liquid.
    assert!(!is_liquid(&HedgeCandidate {
        quote: SideQuote {
            bid: 0.0,
            ..busy.quote
        },
        ..busy
    }));

    // Selection skips the illiquid: the 0.5-delta 500 call of the 30-day expiration is quiet,
    // so the 0.45 call (510) of that expiration is chosen.
    let mut chain = vec![
        quiet,
        candidate(Call, 510.0, 30.0, 0.45, 6.0),
        candidate(Call, 490.0, 30.0, 0.62, 14.0),
    ];
    let chosen = select_hedge_contract(&chain, 50.0).unwrap();
    assert_eq!(chosen.strike, 510.0);
    // An expiration with nothing liquid is passed over for the next nearest 30 days.
    chain.retain(|c| c.strike == 500.0);
    chain.push(candidate(Call, 500.0, 45.0, 0.5, 11.0));
    let chosen = select_hedge_contract(&chain, 50.0).unwrap();
    assert_eq!(chosen.years_to_expiry, 45.0 / 365.0);
    // Nothing liquid anywhere: the reason states the rule.
    match select_hedge_contract(&[quiet], 50.0) {
        Err(RiskError::NoHedgeContract(reason)) => {
            assert!(reason.contains("open interest"), "{reason}")
        }
        other => panic!("expected no hedge contract, got {other:?}"),
    }
}
