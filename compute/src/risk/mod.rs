//! Portfolio risk from caller-supplied positions and per-share Greeks: totals, the risk level,
//! first-order scenario and stress estimates, and delta hedges.
//!
//! # Units
//! - Option quantities are contracts of [`OPTION_MULTIPLIER`] = 100 shares; stock quantities
//!   are shares. Negative quantities are short.
//! - Per position: delta in share-equivalents = qty × multiplier × per-share delta (a share
//!   counts delta 1); theta in dollars per calendar day and vega in dollars per vol point are
//!   qty × multiplier × the per-share figure; value = qty × multiplier × current_price (short
//!   positions have negative value).
//! - Percentages are of the **gross** market value Σ|value| (capital at work), so a hedged book
//!   whose net value is near zero still reads sensibly.
//!
//! # Required position fields
//! | position_type | required | optional |
//! | --- | --- | --- |
//! | STOCK | ticker, quantity, current_price (> 0) | entry_price (Greeks are ignored: delta 1, others 0) |
//! | CALL, PUT | ticker, quantity, strike, expiration, current_price (≥ 0), delta, theta, vega | entry_price, gamma, iv |
//!
//! A missing or invalid field is a [`RiskError::Position`] naming the index and field.
//!
//! # Underlying prices
//! Dollar delta (delta exposure, scenario price moves) needs each ticker's underlying price:
//! the caller passes them ([`UnderlyingPrice`]); a ticker without one takes the current_price
//! of a STOCK position in it; otherwise the call fails with
//! [`RiskError::MissingUnderlyingPrice`].

pub mod hedge;
pub mod portfolio;
pub mod scenario;

pub use hedge::{
    HEDGE_NOTE, HedgeCandidate, HedgeContract, HedgeGreeks, HedgePlan, OptionHedge, StockHedge,
    TradeAction, hedge_plan, is_liquid, liquidity_rule, select_hedge_contract,
};
pub use portfolio::{PortfolioGreeks, RiskLevel, TickerGreeks, portfolio_greeks, risk_level_for};
pub use scenario::{
    IV_CHANGE_BASIS, IvChangeBasis, STRESS_SCENARIOS, Scenario, ScenarioEstimate, ScenarioReport,
    StressScenario, estimate_scenarios, stress_tests,
};

use std::collections::BTreeMap;

use chrono::NaiveDate;

use crate::pricing::OptionType;

/// Shares per option contract.
pub const OPTION_MULTIPLIER: f64 = 100.0;

/// Most positions one request may carry.
pub const MAX_POSITIONS: usize = 1_000;

/// The largest |quantity| (shares or contracts) and the largest price or strike accepted:
/// far beyond any real book, and small enough that no total can overflow.
pub const MAX_MAGNITUDE: f64 = 1e9;

/// Most scenarios one scenario-analysis request may carry.
pub const MAX_SCENARIOS: usize = 100;

/// A risk request that cannot be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RiskError {
    /// The positions array is empty.
    #[error("positions: at least one position is required")]
    NoPositions,
    /// More positions than [`MAX_POSITIONS`].
    #[error("positions: {count} positions given; at most {max} are accepted")]
    TooManyPositions {
        /// Positions supplied.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// A position field is missing or invalid.
    #[error("positions[{index}].{field}: {reason}")]
    Position {
        /// Zero-based position index.
        index: usize,
        /// The JSON field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A scenario field is invalid.
    #[error("scenarios[{index}].{field}: {reason}")]
    Scenario {
        /// Zero-based scenario index.
        index: usize,
        /// The JSON field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A request-level parameter is invalid.
    #[error("{field}: {reason}")]
    Input {
        /// The parameter.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// No underlying price is known for a ticker that has positions.
    #[error("no underlying price for {ticker}: supply it or a STOCK position in it")]
    MissingUnderlyingPrice {
        /// The ticker.
        ticker: String,
    },
    /// No contract in the hedge chain qualifies.
    #[error("no hedge contract: {0}")]
    NoHedgeContract(String),
}

impl RiskError {
    fn position(index: usize, field: &'static str, reason: impl Into<String>) -> Self {
        Self::Position {
            index,
            field,
            reason: reason.into(),
        }
    }

    pub(crate) fn input(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Input {
            field,
            reason: reason.into(),
        }
    }
}

/// STOCK, CALL or PUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PositionType {
    /// Shares.
    Stock,
    /// Call contracts.
    Call,
    /// Put contracts.
    Put,
}

impl PositionType {
    /// STOCK / CALL / PUT in any letter case.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        [
            ("stock", Self::Stock),
            ("call", Self::Call),
            ("put", Self::Put),
        ]
        .into_iter()
        .find(|(name, _)| text.eq_ignore_ascii_case(name))
        .map(|(_, t)| t)
    }

    /// The option type, for options.
    pub fn option_type(self) -> Option<OptionType> {
        match self {
            Self::Stock => None,
            Self::Call => Some(OptionType::Call),
            Self::Put => Some(OptionType::Put),
        }
    }

    /// Shares per unit of quantity.
    pub fn multiplier(self) -> f64 {
        match self {
            Self::Stock => 1.0,
            Self::Call | Self::Put => OPTION_MULTIPLIER,
        }
    }
}

/// One position as a parser delivers it (JSON names in brackets).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PositionInput {
    /// Underlying symbol (`ticker`).
    pub ticker: Option<String>,
    /// STOCK, CALL or PUT, any case (`position_type`).
    pub position_type: Option<String>,
    /// Shares or contracts, negative for short (`quantity`).
    pub quantity: Option<f64>,
    /// Strike, dollars (`strike`).
    pub strike: Option<f64>,
    /// Years to expiry, calendar days / 365, converted by the caller from `expiration`.
    pub years_to_expiry: Option<f64>,
    /// The expiration date (`expiration`), echoed.
    pub expiration: Option<NaiveDate>,
    /// Price paid per share or per option share (`entry_price`).
    pub entry_price: Option<f64>,
    /// Current price per share (`current_price`).
    pub current_price: Option<f64>,
    /// Per-share delta (`delta`).
    pub delta: Option<f64>,
    /// Per-share gamma, per $1 (`gamma`).
    pub gamma: Option<f64>,
    /// Per-share theta, dollars per calendar day (`theta`).
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point (`vega`).
    pub vega: Option<f64>,
    /// IV, decimal (`iv`).
    pub iv: Option<f64>,
}

/// A validated position.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// Underlying symbol, upper case.
    pub ticker: String,
    /// STOCK, CALL or PUT.
    pub position_type: PositionType,
    /// Shares or contracts; negative = short; never 0.
    pub quantity: f64,
    /// Strike (options).
    pub strike: Option<f64>,
    /// Years to expiry (options), ≥ 0.
    pub years_to_expiry: Option<f64>,
    /// Expiration date, when known.
    pub expiration: Option<NaiveDate>,
    /// Entry price per share, when known.
    pub entry_price: Option<f64>,
    /// Current price per share, dollars.
    pub current_price: f64,
    /// Per-share delta (1 for stock).
    pub delta: f64,
    /// Per-share gamma (0 for stock; `None` when an option did not supply it).
    pub gamma: Option<f64>,
    /// Per-share theta, dollars per day (0 for stock).
    pub theta: f64,
    /// Per-share vega, dollars per vol point (0 for stock).
    pub vega: f64,
    /// IV, decimal.
    pub iv: Option<f64>,
}

impl Position {
    /// qty × multiplier: shares controlled, signed.
    #[inline]
    pub fn share_quantity(&self) -> f64 {
        self.quantity * self.position_type.multiplier()
    }

    /// Market value, dollars (negative for short).
    #[inline]
    pub fn value_usd(&self) -> f64 {
        self.share_quantity() * self.current_price
    }

    /// Delta in share-equivalents.
    #[inline]
    pub fn delta_shares(&self) -> f64 {
        self.share_quantity() * self.delta
    }

    /// Theta, dollars per calendar day.
    #[inline]
    pub fn theta_usd_per_day(&self) -> f64 {
        self.share_quantity() * self.theta
    }

    /// Vega, dollars per vol point.
    #[inline]
    pub fn vega_usd_per_vol_point(&self) -> f64 {
        self.share_quantity() * self.vega
    }

    /// Calendar days the position can still decay (infinite for stock).
    pub fn days_left(&self) -> f64 {
        self.years_to_expiry
            .map_or(f64::INFINITY, |y| y * crate::time::DAYS_PER_YEAR)
    }
}

/// A caller-supplied underlying price.
#[derive(Debug, Clone, PartialEq)]
pub struct UnderlyingPrice {
    /// The ticker (any case).
    pub ticker: String,
    /// Its price, dollars, > 0.
    pub price: f64,
}

/// Validates parsed positions: 1 to [`MAX_POSITIONS`], the fields each type requires (module
/// docs), finite and in domain.
pub fn validate_positions(inputs: &[PositionInput]) -> Result<Vec<Position>, RiskError> {
    if inputs.is_empty() {
        return Err(RiskError::NoPositions);
    }
    if inputs.len() > MAX_POSITIONS {
        return Err(RiskError::TooManyPositions {
            count: inputs.len(),
            max: MAX_POSITIONS,
        });
    }
    inputs
        .iter()
        .enumerate()
        .map(|(index, input)| validate_position(index, input))
        .collect()
}

fn validate_position(index: usize, input: &PositionInput) -> Result<Position, RiskError> {
    let err = |field, reason: &str| RiskError::position(index, field, reason);
    let ticker = match input.ticker.as_deref().map(str::trim) {
        None | Some("") => return Err(err("ticker", "is required")),
        Some(t) => t.to_ascii_uppercase(),
    };
    let position_type = match input.position_type.as_deref() {
        None => return Err(err("position_type", "is required (STOCK, CALL or PUT)")),
        Some(text) => PositionType::parse(text).ok_or_else(|| {
            RiskError::position(
                index,
                "position_type",
                format!("unknown type {text:?}; expected STOCK, CALL or PUT"),
            )
        })?,
    };
    let quantity = required(index, "quantity", input.quantity)?;
    if quantity == 0.0 {
        return Err(err(
            "quantity",
            "must not be zero (negative for short positions)",
        ));
    }
    let current_price = required(index, "current_price", input.current_price)?;
    let entry_price = optional(index, "entry_price", input.entry_price)?;
    if entry_price.is_some_and(|p| p < 0.0) {
        return Err(err("entry_price", "must not be negative"));
    }
    let iv = optional(index, "iv", input.iv)?;
    if iv.is_some_and(|v| v <= 0.0) {
        return Err(err("iv", "must be greater than zero"));
    }
    if position_type == PositionType::Stock {
        if current_price <= 0.0 {
            return Err(err("current_price", "must be greater than zero"));
        }
        return Ok(Position {
            ticker,
            position_type,
            quantity,
            strike: None,
            years_to_expiry: None,
            expiration: None,
            entry_price,
            current_price,
            delta: 1.0,
            gamma: Some(0.0),
            theta: 0.0,
            vega: 0.0,
            iv,
        });
    }
    if current_price < 0.0 {
        return Err(err("current_price", "must not be negative"));
    }
    let strike = required(index, "strike", input.strike)?;
    if strike <= 0.0 {
        return Err(err("strike", "must be greater than zero"));
    }
    let years = required(index, "expiration", input.years_to_expiry)?;
    if years < 0.0 {
        return Err(err("expiration", "is in the past"));
    }
    let delta = required(index, "delta", input.delta)?;
    if delta.abs() > 1.0 {
        return Err(err("delta", "must be between −1 and 1 (per share)"));
    }
    Ok(Position {
        ticker,
        position_type,
        quantity,
        strike: Some(strike),
        years_to_expiry: Some(years),
        expiration: input.expiration,
        entry_price,
        current_price,
        delta,
        gamma: optional(index, "gamma", input.gamma)?,
        theta: required(index, "theta", input.theta)?,
        vega: required(index, "vega", input.vega)?,
        iv,
    })
}

fn required(index: usize, field: &'static str, value: Option<f64>) -> Result<f64, RiskError> {
    match value {
        None => Err(RiskError::position(index, field, "is required")),
        Some(v) => checked(index, field, v),
    }
}

fn optional(
    index: usize,
    field: &'static str,
    value: Option<f64>,
) -> Result<Option<f64>, RiskError> {
    value.map(|v| checked(index, field, v)).transpose()
}

/// Finite and at most [`MAX_MAGNITUDE`] in size.
fn checked(index: usize, field: &'static str, value: f64) -> Result<f64, RiskError> {
    if !value.is_finite() {
        Err(RiskError::position(index, field, "must be a finite number"))
    } else if value.abs() > MAX_MAGNITUDE {
        Err(RiskError::position(
            index,
            field,
            "is beyond 1e9 in magnitude",
        ))
    } else {
        Ok(value)
    }
}

/// Underlying price per ticker: supplied prices first, then STOCK positions' current price.
pub(crate) fn underlying_prices(
    positions: &[Position],
    supplied: &[UnderlyingPrice],
) -> Result<BTreeMap<String, f64>, RiskError> {
    let mut prices = BTreeMap::new();
    for entry in supplied {
        if !(entry.price.is_finite() && entry.price > 0.0 && entry.price <= MAX_MAGNITUDE) {
            return Err(RiskError::input(
                "underlying_prices",
                format!(
                    "the price of {} must be a number of dollars above zero and at most 1e9",
                    entry.ticker
                ),
            ));
        }
        prices.insert(entry.ticker.trim().to_ascii_uppercase(), entry.price);
    }
    complete_underlying_prices(prices, positions, |ticker| {
        Err(RiskError::MissingUnderlyingPrice {
            ticker: ticker.to_owned(),
        })
    })
}

/// `prices` (supplied, by upper-case ticker) completed with each STOCK position's current
/// price, then with `missing(ticker)` for every ticker still without one. The API and the
/// risk functions share this order so both pick the same price for a ticker.
pub fn complete_underlying_prices<E>(
    mut prices: BTreeMap<String, f64>,
    positions: &[Position],
    mut missing: impl FnMut(&str) -> Result<f64, E>,
) -> Result<BTreeMap<String, f64>, E> {
    for position in positions {
        if position.position_type == PositionType::Stock {
            prices
                .entry(position.ticker.clone())
                .or_insert(position.current_price);
        }
    }
    for position in positions {
        if !prices.contains_key(&position.ticker) {
            let price = missing(&position.ticker)?;
            prices.insert(position.ticker.clone(), price);
        }
    }
    Ok(prices)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option() -> PositionInput {
        PositionInput {
            ticker: Some("spy".into()),
            position_type: Some("Call".into()),
            quantity: Some(-2.0),
            strike: Some(500.0),
            years_to_expiry: Some(0.1),
            current_price: Some(4.0),
            delta: Some(0.4),
            theta: Some(-0.1),
            vega: Some(0.5),
            ..PositionInput::default()
        }
    }

    fn error_field(input: PositionInput) -> (usize, &'static str) {
        match validate_positions(&[option(), input]) {
            Err(RiskError::Position { index, field, .. }) => (index, field),
            other => panic!("expected a position error, got {other:?}"),
        }
    }

    #[test]
    fn stock_needs_only_ticker_quantity_and_price() {
        let stock = PositionInput {
            ticker: Some("aapl".into()),
            position_type: Some("STOCK".into()),
            quantity: Some(100.0),
            current_price: Some(200.0),
            ..PositionInput::default()
        };
        let positions = validate_positions(&[stock]).unwrap();
        assert_eq!(positions[0].ticker, "AAPL");
        assert_eq!(positions[0].delta_shares(), 100.0);
        assert_eq!(positions[0].value_usd(), 20_000.0);
    }

    #[test]
    fn option_fields_are_required_and_named() {
        let ok = validate_positions(&[option()]).unwrap();
        assert_eq!(ok[0].delta_shares(), -80.0);
        assert_eq!(
            error_field(PositionInput {
                delta: None,
                ..option()
            }),
            (1, "delta")
        );
        assert_eq!(
            error_field(PositionInput {
                strike: None,
                ..option()
            }),
            (1, "strike")
        );
        assert_eq!(
            error_field(PositionInput {
                years_to_expiry: None,
                ..option()
            }),
            (1, "expiration")
        );
        assert_eq!(
            error_field(PositionInput {
                quantity: Some(0.0),
                ..option()
            }),
            (1, "quantity")
        );
        assert_eq!(
            error_field(PositionInput {
                position_type: Some("future".into()),
                ..option()
            }),
            (1, "position_type")
        );
        assert_eq!(
            error_field(PositionInput {
                theta: Some(f64::NAN),
                ..option()
            }),
            (1, "theta")
        );
        assert_eq!(validate_positions(&[]), Err(RiskError::NoPositions));
        assert!(matches!(
            validate_positions(&vec![option(); MAX_POSITIONS + 1]),
            Err(RiskError::TooManyPositions { .. })
        ));
    }
}
