//! simulate-chain: every row re-priced at its own IV plus a shift, at a hypothetical
//! underlying price and days to expiry.
//!
//! - IV: the row's IV (decimal) + `iv_adjustment_points`/100, floored at [`SIM_IV_FLOOR`]
//!   (a shift of −20 points on a 15 % row would otherwise be negative); the side reports
//!   whether the floor applied.
//! - Time: `sim_days`/365 years. At 0 days the contract is at expiry: value = intrinsic, delta
//!   = ±1 in the money and 0 otherwise, the other Greeks 0.
//! - Quotes: the new value is the mid; a side that came with a valid bid and ask keeps that
//!   spread around it (bid cut at 0), otherwise bid = ask = value.
//! - Extrinsic = value − max(θ(S − K), 0) on the simulated underlying price; it may be
//!   slightly negative for a deep in-the-money European put (or a call on a dividend payer).

use super::{MAX_IV_DECIMAL, MAX_PRICE, StrategyError};
use crate::pricing::{OptionInputs, OptionType, PricingModel, greeks_unchecked};
use crate::time::DAYS_PER_YEAR;

/// The lowest IV a shifted row is priced at, decimal (1 vol point).
pub const SIM_IV_FLOOR: f64 = 0.01;

/// Most rows one request may re-price.
pub const MAX_SIM_ROWS: usize = 10_000;

/// The longest scenario horizon, days (ten years: beyond any listed option).
pub const MAX_SIM_DAYS: f64 = 3_650.0;

/// The largest |iv_adjustment|, vol points: the IV cap of a leg ([`MAX_IV_DECIMAL`] = 1,000 %).
pub const MAX_IV_ADJUSTMENT_POINTS: f64 = 100.0 * MAX_IV_DECIMAL;

/// One side of a row to re-price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulationSide {
    /// The row's IV, decimal.
    pub iv: f64,
    /// The quoted bid, if any (dollars per share).
    pub bid: Option<f64>,
    /// The quoted ask, if any.
    pub ask: Option<f64>,
}

/// A row to re-price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulationRow {
    /// Strike, dollars.
    pub strike: f64,
    /// The call side, if it has an IV.
    pub call: Option<SimulationSide>,
    /// The put side, if it has an IV.
    pub put: Option<SimulationSide>,
}

/// The scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulationScenario {
    /// Hypothetical underlying price (spot, or forward on the forward model), dollars.
    pub sim_price: f64,
    /// Days to expiry in the scenario (calendar days, fractions allowed), ≥ 0.
    pub sim_days: f64,
    /// Vol points added to every IV (2.5 = +2.5 points).
    pub iv_adjustment_points: f64,
    /// Continuously compounded rate, decimal.
    pub rate: f64,
    /// Continuously compounded dividend yield, decimal (0 on the forward model).
    pub dividend_yield: f64,
    /// Spot or forward model.
    pub model: PricingModel,
}

/// A re-priced side, per share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulatedSide {
    /// Model value, dollars.
    pub value: f64,
    /// Bid, dollars.
    pub bid: f64,
    /// Ask, dollars.
    pub ask: f64,
    /// The IV priced at, decimal.
    pub iv: f64,
    /// Whether [`SIM_IV_FLOOR`] applied.
    pub iv_floored: bool,
    /// Delta.
    pub delta: f64,
    /// Gamma, per $1.
    pub gamma: f64,
    /// Theta, dollars per calendar day.
    pub theta: f64,
    /// Vega, dollars per vol point.
    pub vega: f64,
    /// Epsilon, dollars per point of dividend yield.
    pub epsilon: f64,
    /// Value above intrinsic, dollars.
    pub extrinsic: f64,
}

/// A re-priced row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulatedRow {
    /// Strike, dollars.
    pub strike: f64,
    /// The call side.
    pub call: Option<SimulatedSide>,
    /// The put side.
    pub put: Option<SimulatedSide>,
}

/// Re-prices `rows` under `scenario`. Errors name the row and field.
pub fn simulate_chain(
    rows: &[SimulationRow],
    scenario: &SimulationScenario,
) -> Result<Vec<SimulatedRow>, StrategyError> {
    validate_scenario(scenario)?;
    if rows.len() > MAX_SIM_ROWS {
        return Err(StrategyError::input(
            "chain",
            format!(
                "{} rows given; at most {MAX_SIM_ROWS} are accepted",
                rows.len()
            ),
        ));
    }
    rows.iter()
        .enumerate()
        .map(|(index, row)| {
            if !(row.strike.is_finite() && row.strike > 0.0 && row.strike <= MAX_PRICE) {
                return Err(StrategyError::row(
                    index,
                    "Strike",
                    format!("must be a number of dollars above zero and at most {MAX_PRICE:e}"),
                ));
            }
            let side = |option_type, side: Option<SimulationSide>, field| {
                side.map(|s| reprice(index, row.strike, option_type, &s, scenario, field))
                    .transpose()
            };
            Ok(SimulatedRow {
                strike: row.strike,
                call: side(OptionType::Call, row.call, "call_iv")?,
                put: side(OptionType::Put, row.put, "put_iv")?,
            })
        })
        .collect()
}

fn validate_scenario(scenario: &SimulationScenario) -> Result<(), StrategyError> {
    if !(scenario.sim_price.is_finite()
        && scenario.sim_price > 0.0
        && scenario.sim_price <= MAX_PRICE)
    {
        return Err(StrategyError::input(
            "sim_price",
            format!("must be a number of dollars above zero and at most {MAX_PRICE:e}"),
        ));
    }
    if !(0.0..=MAX_SIM_DAYS).contains(&scenario.sim_days) {
        return Err(StrategyError::input(
            "sim_dte",
            format!("must be a number of days from 0 to {MAX_SIM_DAYS}"),
        ));
    }
    if !(-MAX_IV_ADJUSTMENT_POINTS..=MAX_IV_ADJUSTMENT_POINTS)
        .contains(&scenario.iv_adjustment_points)
    {
        return Err(StrategyError::input(
            "iv_adjustment",
            format!(
                "must be a number of vol points from −{MAX_IV_ADJUSTMENT_POINTS} to {MAX_IV_ADJUSTMENT_POINTS}"
            ),
        ));
    }
    if !scenario.rate.is_finite() || !scenario.dividend_yield.is_finite() {
        return Err(StrategyError::input(
            "rate",
            "rate and dividend yield must be finite",
        ));
    }
    Ok(())
}

fn reprice(
    index: usize,
    strike: f64,
    option_type: OptionType,
    side: &SimulationSide,
    scenario: &SimulationScenario,
    field: &'static str,
) -> Result<SimulatedSide, StrategyError> {
    if !side.iv.is_finite() || side.iv <= 0.0 {
        return Err(StrategyError::row(
            index,
            field,
            "must be a finite decimal IV above zero",
        ));
    }
    let shifted = side.iv + scenario.iv_adjustment_points / 100.0;
    let iv = shifted.max(SIM_IV_FLOOR);
    let price = scenario.sim_price;
    let intrinsic = match option_type {
        OptionType::Call => (price - strike).max(0.0),
        OptionType::Put => (strike - price).max(0.0),
    };
    let years = scenario.sim_days / DAYS_PER_YEAR;
    let (value, delta, gamma, theta, vega, epsilon) = if years > 0.0 {
        let inputs = OptionInputs {
            option_type,
            model: scenario.model,
            underlying: price,
            strike,
            years,
            rate: scenario.rate,
            dividend_yield: match scenario.model {
                PricingModel::BlackScholesMerton => scenario.dividend_yield,
                PricingModel::Black76 => 0.0,
            },
        };
        let g = greeks_unchecked(&inputs, iv);
        (g.price, g.delta, g.gamma, g.theta, g.vega, g.epsilon)
    } else {
        let delta = if intrinsic > 0.0 {
            option_type.sign()
        } else {
            0.0
        };
        (intrinsic, delta, 0.0, 0.0, 0.0, 0.0)
    };
    let half_spread = match (side.bid, side.ask) {
        (Some(bid), Some(ask))
            if bid.is_finite() && ask.is_finite() && bid >= 0.0 && ask >= bid =>
        {
            0.5 * (ask - bid)
        }
        _ => 0.0,
    };
    Ok(SimulatedSide {
        value,
        bid: (value - half_spread).max(0.0),
        ask: value + half_spread,
        iv,
        iv_floored: shifted < SIM_IV_FLOOR,
        delta,
        gamma,
        theta,
        vega,
        epsilon,
        extrinsic: value - intrinsic,
    })
}
