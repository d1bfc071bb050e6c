//! First-order scenario estimates and the fixed stress set.
//!
//! For a scenario (stock move m %, IV change v, d days forward) each position contributes
//! - delta: delta (share-equivalents) × underlying price × m/100,
//! - vega: vega ($ per vol point) × v, where **v is in vol points** ([`IV_CHANGE_BASIS`]):
//!   `iv_change_pct: 5` moves a 20 % IV to 25 %, whatever the position's IV,
//! - theta: theta ($ per day) × min(d, days the option has left): an option stops decaying at
//!   its expiry.
//!
//! estimated_pnl is their sum (no gamma, vanna or re-pricing: the spec's first-order
//! estimate), new_portfolio_value = current value + estimated_pnl, and estimated_pnl_pct is
//! the P&L as a percent of the gross market value.

use super::{MAX_SCENARIOS, Position, RiskError, UnderlyingPrice, underlying_prices};

/// How `iv_change_pct` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IvChangeBasis {
    /// Added to the IV in percentage points (20 % + 5 = 25 %).
    VolPoints,
}

impl IvChangeBasis {
    /// The label the responses carry.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::VolPoints => "vol_points",
        }
    }
}

/// The service's reading of `iv_change_pct`.
pub const IV_CHANGE_BASIS: IvChangeBasis = IvChangeBasis::VolPoints;

/// The largest scenario move, percent (a tenfold rise); the smallest is −100 (a price of 0).
pub const MAX_STOCK_MOVE_PCT: f64 = 1_000.0;

/// The largest |iv_change_pct|, vol points (an IV of 1,000 %).
pub const MAX_IV_CHANGE_POINTS: f64 = 1_000.0;

/// The longest scenario horizon, days (ten years).
pub const MAX_DAYS_FORWARD: f64 = 3_650.0;

/// One scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Underlying move, percent (−10 = down 10 %), ≥ −100.
    pub stock_move_pct: f64,
    /// IV change in vol points.
    pub iv_change_pct: f64,
    /// Calendar days forward, ≥ 0.
    pub days_forward: f64,
}

/// The estimate for one scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScenarioEstimate {
    /// The scenario.
    pub scenario: Scenario,
    /// Dollars from delta.
    pub delta_contribution_usd: f64,
    /// Dollars from vega.
    pub vega_contribution_usd: f64,
    /// Dollars from theta.
    pub theta_contribution_usd: f64,
    /// Their sum, dollars.
    pub estimated_pnl_usd: f64,
    /// P&L as a percent of gross market value; `None` when that is 0.
    pub estimated_pnl_pct: Option<f64>,
    /// Current net value + P&L, dollars.
    pub new_portfolio_value_usd: f64,
}

/// Scenario results with the starting point.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioReport {
    /// Net market value now, dollars.
    pub current_value_usd: f64,
    /// Gross market value now, dollars (the percent base).
    pub gross_value_usd: f64,
    /// One per scenario, in order.
    pub estimates: Vec<ScenarioEstimate>,
}

/// A named stress scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StressScenario {
    /// The scenario_name.
    pub name: &'static str,
    /// What it stands for.
    pub description: &'static str,
    /// Its parameters.
    pub scenario: Scenario,
}

const fn stress(
    name: &'static str,
    description: &'static str,
    stock_move_pct: f64,
    iv_change_pct: f64,
    days_forward: f64,
) -> StressScenario {
    StressScenario {
        name,
        description,
        scenario: Scenario {
            stock_move_pct,
            iv_change_pct,
            days_forward,
        },
    }
}

/// The fixed stress set: instantaneous shocks (0 days) sized on US equity history, plus two
/// pure time-decay horizons. IV changes are vol points.
pub const STRESS_SCENARIOS: [StressScenario; 10] = [
    stress(
        "Market Crash",
        "A 1987 / March-2020 style collapse: prices −20 %, implied vol +20 points",
        -20.0,
        20.0,
        0.0,
    ),
    stress(
        "Correction",
        "A 10 % correction with implied vol up 8 points",
        -10.0,
        8.0,
        0.0,
    ),
    stress(
        "Pullback",
        "A routine 5 % pullback with implied vol up 4 points",
        -5.0,
        4.0,
        0.0,
    ),
    stress(
        "Vol Spike",
        "Prices unchanged, implied vol up 10 points (an event scare)",
        0.0,
        10.0,
        0.0,
    ),
    stress(
        "Vol Crush",
        "Prices unchanged, implied vol down 10 points (after an event)",
        0.0,
        -10.0,
        0.0,
    ),
    stress(
        "Rally",
        "A 5 % rally with implied vol down 3 points",
        5.0,
        -3.0,
        0.0,
    ),
    stress(
        "Melt-Up",
        "A 15 % melt-up with implied vol down 5 points",
        15.0,
        -5.0,
        0.0,
    ),
    stress(
        "Gap Down Overnight",
        "A 3 % overnight gap down with implied vol up 3 points, one day passing",
        -3.0,
        3.0,
        1.0,
    ),
    stress(
        "Time Decay (1 week)",
        "Nothing moves for 7 calendar days",
        0.0,
        0.0,
        7.0,
    ),
    stress(
        "Time Decay (1 month)",
        "Nothing moves for 30 calendar days",
        0.0,
        0.0,
        30.0,
    ),
];

fn validate_scenario(index: usize, scenario: &Scenario) -> Result<(), RiskError> {
    let err = |field, reason: &str| RiskError::Scenario {
        index,
        field,
        reason: reason.into(),
    };
    if !(-100.0..=MAX_STOCK_MOVE_PCT).contains(&scenario.stock_move_pct) {
        return Err(err(
            "stock_move_pct",
            "must be a percent from −100 to 1,000",
        ));
    }
    if !(-MAX_IV_CHANGE_POINTS..=MAX_IV_CHANGE_POINTS).contains(&scenario.iv_change_pct) {
        return Err(err(
            "iv_change_pct",
            "must be a number of vol points from −1,000 to 1,000",
        ));
    }
    if !(0.0..=MAX_DAYS_FORWARD).contains(&scenario.days_forward) {
        return Err(err(
            "days_forward",
            "must be a number of days from 0 to 3,650",
        ));
    }
    Ok(())
}

/// First-order estimates of `scenarios` on validated `positions`.
pub fn estimate_scenarios(
    positions: &[Position],
    prices: &[UnderlyingPrice],
    scenarios: &[Scenario],
) -> Result<ScenarioReport, RiskError> {
    if positions.is_empty() {
        return Err(RiskError::NoPositions);
    }
    if scenarios.len() > MAX_SCENARIOS {
        return Err(RiskError::input(
            "scenarios",
            format!(
                "{} given; at most {MAX_SCENARIOS} are accepted",
                scenarios.len()
            ),
        ));
    }
    for (index, scenario) in scenarios.iter().enumerate() {
        validate_scenario(index, scenario)?;
    }
    let underlying = underlying_prices(positions, prices)?;
    let current: f64 = positions.iter().map(Position::value_usd).sum();
    let gross: f64 = positions.iter().map(|p| p.value_usd().abs()).sum();
    let estimates = scenarios
        .iter()
        .map(|scenario| {
            let (mut delta, mut vega, mut theta) = (0.0, 0.0, 0.0);
            for position in positions {
                let price = underlying[&position.ticker];
                delta += position.delta_shares() * price * scenario.stock_move_pct / 100.0;
                vega += position.vega_usd_per_vol_point() * scenario.iv_change_pct;
                theta +=
                    position.theta_usd_per_day() * scenario.days_forward.min(position.days_left());
            }
            let pnl = delta + vega + theta;
            ScenarioEstimate {
                scenario: *scenario,
                delta_contribution_usd: delta,
                vega_contribution_usd: vega,
                theta_contribution_usd: theta,
                estimated_pnl_usd: pnl,
                estimated_pnl_pct: (gross > 0.0).then(|| 100.0 * pnl / gross),
                new_portfolio_value_usd: current + pnl,
            }
        })
        .collect();
    Ok(ScenarioReport {
        current_value_usd: current,
        gross_value_usd: gross,
        estimates,
    })
}

/// [`STRESS_SCENARIOS`] through [`estimate_scenarios`]; estimates in the same order.
pub fn stress_tests(
    positions: &[Position],
    prices: &[UnderlyingPrice],
) -> Result<ScenarioReport, RiskError> {
    let scenarios: Vec<Scenario> = STRESS_SCENARIOS.iter().map(|s| s.scenario).collect();
    estimate_scenarios(positions, prices, &scenarios)
}
