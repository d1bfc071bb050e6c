//! Option strategies: payoff analysis, probability of profit, strategy builders, the
//! iron-condor / credit-spread optimizer and the simulate-chain re-pricer.
//!
//! Pure functions over plain structs; the HTTP layer parses JSON into [`LegInput`]s (or chain
//! rows), calls these functions and renders the results.
//!
//! # Conventions (the contract of the strategy endpoints)
//! - **One-lot.** Dollar totals (`net_premium`, `max_profit`, `max_loss`, P&L) are for the
//!   legs exactly as given, each contract being [`CONTRACT_MULTIPLIER`] = 100 shares. A 1×2
//!   ratio spread's one-lot is one contract of the first leg and two of the second.
//! - **Premium sign.** `net_premium` is **credit positive** ([`NET_PREMIUM_CONVENTION`]): the
//!   cash received when opening (selling legs adds, buying legs subtracts), so
//!   P&L(S) = net_premium + 100·Σ side·qty·payoff(S) with side = +1 for BUY, −1 for SELL.
//! - **Unbounded** profit or loss is [`Bound::Unbounded`], never a large number. Below, the
//!   payoff is always bounded (the underlying cannot fall below 0); above the highest strike
//!   it is bounded only when the calls net to zero.
//! - **risk_reward_ratio** = max_profit / |max_loss|: dollars of potential profit per dollar at
//!   risk (higher is better). Unbounded when the profit is unbounded or no loss is possible;
//!   0 when the loss is unbounded or no profit is possible.
//! - **Profit** means P&L > 0. Breakevens are the finite ends of the profit intervals (the
//!   prices where the P&L changes sign), exact roots of the linear pieces for legs of one
//!   expiration ([`ValuationMethod::ExactPiecewiseLinear`]); for mixed expirations
//!   (calendars) the position is valued at the first expiration with the later legs priced by
//!   Black–Scholes at their own IV — on the spot model (American equity and ETF options) never
//!   below their intrinsic value, the early-exercise floor; on the forward model (European
//!   index options) without it — and breakevens, maxima and minima are numeric
//!   ([`ValuationMethod::NumericFirstExpiration`], see [`analysis`]).
//! - **Probability of profit** is P(S_T in a profit interval) under the lognormal law with
//!   forward F = S·e^{(r−q)T} (Black-76: the first expiration's forward on the market's
//!   curve), summed over the intervals with [`crate::probability`] (the N(d2) form). T is the
//!   time to the first expiration in years of 365 days (the pop endpoint passes
//!   days_to_exp/365). The volatility is the IV of the leg struck closest to the price (the
//!   spot; Black-76: the first expiration's forward) among the legs expiring first (the mean
//!   of their IVs when several legs tie); both analyze-strategy and pop use this one rule
//!   ([`profit_probability`], which needs no Greeks). It is reported in percent.
//! - **Forward model** (cash indices): every expiration has its own forward
//!   ([`Market::forward_at`]); a leg's model Greeks use its own expiration's forward, the
//!   builders and the optimizer compare strikes with the forward of the expiration they
//!   search, and a calendar's later legs move with the settlement price in the ratio of the
//!   two forwards.
//! - **IV** in legs is a decimal; a value above [`IV_PERCENT_THRESHOLD`] (5) is read as
//!   percentage points (clients send 32.5 for 32.5 %), and each leg records how it was read.
//! - **Net Greeks** are per one-lot: Σ side·qty·100·greek — delta in share-equivalents, theta
//!   in dollars per calendar day, vega in dollars per vol point — from the leg's supplied
//!   per-share Greek when given, otherwise Black–Scholes (Black-76 on the forward model) at
//!   its IV.
//! - **Errors**: [`StrategyError::MissingQuotes`] is missing market data (the API answers 424,
//!   upstream); [`StrategyError::Unsatisfiable`] is a request whose constraints the quoted
//!   chain cannot meet (400, naming the constraint); the others are malformed input (400).

pub mod analysis;
pub mod builder;
mod calendar;
pub mod chain;
pub mod leg;
pub mod optimizer;
pub mod payoff;
pub mod simulate;

pub use analysis::{
    ForwardPoint, Market, NetGreeks, ProfitProbability, StrategyAnalysis, ValuationMethod, analyze,
    net_greeks, pnl_at_first_expiration, pnl_curve_range, probability_of_profit, probability_vol,
    profit_probability, risk_reward_ratio,
};
pub use builder::{BuiltStrategy, StrategyType, build_strategy, clamp_target_delta, strategy_name};
pub use chain::{
    ChainRow, ExpirationChain, SideQuote, first_per_strike, nearest_horizon, same_strike,
};
pub use leg::{
    Action, IvUnits, Leg, LegInput, parse_option_type, read_iv, validate_legs, validate_legs_named,
};
pub use optimizer::{
    MAX_CONDOR_PAIRS, MAX_WIDTH_SPOT_FRACTION, OPTIMIZE_STRUCTURE_NAMES, OPTIMIZE_TARGET_NAMES,
    OptimizeConstraints, OptimizeStructure, OptimizeTarget, Optimized, optimize,
    optimize_exhaustive,
};
pub use payoff::{Bound, PayoffSummary, PriceInterval, expiration_payoff};
pub use simulate::{
    SimulatedRow, SimulatedSide, SimulationRow, SimulationScenario, SimulationSide, simulate_chain,
};

/// Shares per option contract.
pub const CONTRACT_MULTIPLIER: f64 = 100.0;

/// Most legs one strategy may have. The largest listed structures have four legs (condors,
/// butterflies) and custom ladders a handful more; the cap keeps a request's cost bounded
/// (analysis is O(n²) in the legs, calendars price every later leg on a 2,000-point grid), so
/// a body with 10,000 legs is a 400, not a slow request.
pub const MAX_LEGS: usize = 50;

/// Most contracts per leg: a one-lot larger than this is not a one-lot.
pub const MAX_QUANTITY: u32 = 100_000;

/// The largest strike or premium accepted, dollars: far above any listed contract, and low
/// enough that no sum over [`MAX_LEGS`] legs of [`MAX_QUANTITY`] contracts can overflow.
pub const MAX_PRICE: f64 = 1e9;

/// A leg IV strictly above this is read as percentage points (32.5 → 0.325).
pub const IV_PERCENT_THRESHOLD: f64 = 5.0;

/// The largest IV accepted once read, as a decimal (1,000 %).
pub const MAX_IV_DECIMAL: f64 = 10.0;

/// How the sign of `net_premium` is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PremiumConvention {
    /// Money received when the position is opened is positive; a debit is negative.
    CreditPositive,
}

impl PremiumConvention {
    /// The label the API reference prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CreditPositive => "credit_positive",
        }
    }
}

/// The service's sign convention for `net_premium`.
pub const NET_PREMIUM_CONVENTION: PremiumConvention = PremiumConvention::CreditPositive;

/// A strategy request that cannot be answered, saying what is wrong and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StrategyError {
    /// The legs array is empty.
    #[error("legs: at least one leg is required")]
    NoLegs,
    /// More legs than [`MAX_LEGS`].
    #[error("legs: {count} legs given; at most {max} are accepted per strategy")]
    TooManyLegs {
        /// Legs supplied.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// One leg field is missing or invalid.
    #[error("legs[{index}].{field}: {reason}")]
    Leg {
        /// Zero-based leg index.
        index: usize,
        /// The JSON field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A request-level parameter is missing or invalid.
    #[error("{field}: {reason}")]
    Input {
        /// The parameter name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A chain row is invalid.
    #[error("chain[{index}].{field}: {reason}")]
    Row {
        /// Zero-based row index.
        index: usize,
        /// The field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The chain lacks the quotes the structure needs (no usable quote on a side, no strike
    /// quoted in both expirations of a calendar): missing market data, not a bad request.
    #[error("the live chain lacks the quotes needed: {0}")]
    MissingQuotes(String),
    /// The chain is quoted, but no strikes meet a constraint of the request (a minimum
    /// credit no combination reaches, a target delta that crosses the shorts): the request
    /// must change, so it is the client's error. `field` names the constraint.
    #[error("{field}: {reason}")]
    Unsatisfiable {
        /// The request parameter whose value cannot be met.
        field: &'static str,
        /// What the chain offers instead.
        reason: String,
    },
    /// An unknown strategy_type.
    #[error("unknown strategy_type {0:?}; expected one of {known}", known = builder::STRATEGY_TYPE_NAMES.join(", "))]
    UnknownStrategyType(String),
    /// An unknown optimization target.
    #[error(
        "unknown target {0:?}; expected credit (= max_profit), max_profit, min_loss, risk_reward \
         or probability"
    )]
    UnknownTarget(String),
}

impl StrategyError {
    pub(crate) fn leg(index: usize, field: &'static str, reason: impl Into<String>) -> Self {
        Self::Leg {
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

    pub(crate) fn unsatisfiable(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Unsatisfiable {
            field,
            reason: reason.into(),
        }
    }

    pub(crate) fn row(index: usize, field: &'static str, reason: impl Into<String>) -> Self {
        Self::Row {
            index,
            field,
            reason: reason.into(),
        }
    }
}
