//! Payload pieces shared by the strategy endpoints: the analysis record and the leg shapes.

use chrono::NaiveDate;
use optics_compute::pricing::PricingModel;
use optics_compute::strategy::{
    Bound, IvUnits, Leg, Market, NET_PREMIUM_CONVENTION, StrategyAnalysis, ValuationMethod,
};
use optics_compute::time::DAYS_PER_YEAR;
use optics_schemas::PricingModelCode;
use serde::Serialize;

use super::UNLIMITED;

/// A dollar amount or ratio that may be unbounded: a number, or the string `"unlimited"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Amount {
    /// A finite value.
    Finite(f64),
    /// Always [`UNLIMITED`].
    Unlimited(&'static str),
}

impl From<Bound> for Amount {
    fn from(bound: Bound) -> Self {
        match bound {
            Bound::Finite(value) => Self::Finite(value),
            Bound::Unbounded => Self::Unlimited(UNLIMITED),
        }
    }
}

/// One leg as analyzed (`legs_summary[]`).
#[derive(Debug, Clone, Serialize)]
pub struct LegSummary {
    /// CALL or PUT.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// BUY or SELL.
    pub action: &'static str,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration, YYYY-MM-DD (absent for pop legs).
    pub expiration: Option<NaiveDate>,
    /// Premium, dollars per share.
    pub premium: f64,
    /// Contracts.
    pub quantity: u32,
    /// IV used, decimal (`None` when the leg has none).
    pub iv: Option<f64>,
    /// Where the IV came from: `request` (sent with the leg) or `chain` (the live chain's IV
    /// for the contract); `None` without an IV.
    pub iv_source: Option<&'static str>,
    /// How a sent `iv` was read: `decimal`, or `percentage_points` when it was above 5
    /// (32.5 → 0.325); `None` when the leg sent no IV.
    pub iv_units_read: Option<&'static str>,
}

pub(crate) fn option_type_label(leg: &Leg) -> &'static str {
    match leg.option_type {
        optics_compute::pricing::OptionType::Call => "CALL",
        optics_compute::pricing::OptionType::Put => "PUT",
    }
}

pub(crate) fn leg_summary(leg: &Leg, from_chain: bool) -> LegSummary {
    LegSummary {
        option_type: option_type_label(leg),
        action: leg.action.as_str(),
        strike: leg.strike,
        expiration: leg.expiration,
        premium: leg.premium_per_share,
        quantity: leg.quantity,
        iv: leg.iv,
        iv_source: if from_chain {
            Some("chain")
        } else {
            leg.iv.map(|_| "request")
        },
        iv_units_read: leg.iv_units_read.map(IvUnits::as_str),
    }
}

/// The strategy analysis record (spec 2.3). Dollar figures are per one-lot (the legs exactly
/// as given, 100 shares a contract); `max_profit`, `max_loss` and `risk_reward_ratio` are
/// numbers or `"unlimited"`.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysisRecord {
    /// The underlying.
    pub ticker: String,
    /// The supplied name, or `Custom Strategy`.
    pub strategy_name: String,
    /// The underlying price used, dollars (spot; the nearest expiration's forward for cash
    /// indices, see `stock_price_basis`).
    pub stock_price: f64,
    /// `spot`, or `nearest_forward` for cash indices priced on the forward.
    pub stock_price_basis: &'static str,
    /// `bsm` (spot with carry) or `black76` (forward, cash indices).
    pub pricing_model: &'static str,
    /// The first expiration's forward, dollars: the centre of the lognormal law behind
    /// probability_of_profit.
    pub forward_at_first_expiration: f64,
    /// The legs as read.
    pub legs_summary: Vec<LegSummary>,
    /// Credit positive, dollars per one-lot.
    pub net_premium: f64,
    /// `credit_positive`: a credit received is positive, a debit paid negative.
    pub net_premium_convention: &'static str,
    /// Largest P&L at the first expiration, dollars per one-lot, or `"unlimited"`.
    pub max_profit: Amount,
    /// Smallest P&L at the first expiration, dollars per one-lot (negative when a loss is
    /// possible), or `"unlimited"`.
    pub max_loss: Amount,
    /// max_profit / |max_loss|, or `"unlimited"`.
    pub risk_reward_ratio: Amount,
    /// Share-equivalents per one-lot.
    pub net_delta: f64,
    /// Dollars per calendar day per one-lot.
    pub net_theta: f64,
    /// Dollars per vol point per one-lot.
    pub net_vega: f64,
    /// Prices where the P&L at the first expiration changes sign, dollars, ascending.
    pub breakevens: Vec<f64>,
    /// Probability of finishing in a profit interval, percent.
    pub probability_of_profit: f64,
    /// The volatility behind that probability, percent (the IV of the leg struck nearest
    /// the price).
    pub probability_vol_pct: f64,
    /// Days from now to the first expiration (calendar days, fractional).
    pub days_to_first_expiration: f64,
    /// `[price, pnl]` pairs at the first expiration, dollars per one-lot.
    pub pnl_curve: Vec<[f64; 2]>,
    /// `exact_piecewise_linear` (one expiration) or `numeric_first_expiration` (calendars).
    pub valuation_method: &'static str,
    /// Continuously compounded rate used, decimal.
    pub rate: f64,
    /// Continuously compounded dividend (carry) yield used, decimal.
    pub dividend_yield: f64,
    /// analyze-strategy only, when legs came without an expiration: the expiration and the
    /// chain prices they were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priced_from_chain: Option<ChainPricing>,
}

/// How legs sent without an expiration (`BUY 1 C 150`) were priced from the live chain.
#[derive(Debug, Clone, Serialize)]
pub struct ChainPricing {
    /// The rule applied.
    pub rule: &'static str,
    /// The expiration they were given: the nearest listed one with time left.
    pub expiration: NaiveDate,
    /// Calendar days to it (fractional, to the session's close).
    pub days_to_expiration: f64,
    /// Each leg so priced.
    pub legs: Vec<ChainPricedLeg>,
}

/// One leg priced from the chain.
#[derive(Debug, Clone, Serialize)]
pub struct ChainPricedLeg {
    /// Its index in `legs`.
    pub leg: usize,
    /// CALL or PUT.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// Strike, dollars.
    pub strike: f64,
    /// The premium used, dollars per share.
    pub premium: f64,
    /// `chain_mid`, or `request` when the leg carried its own premium.
    pub premium_source: &'static str,
    /// The chain's bid and ask, dollars per share.
    pub bid: Option<f64>,
    /// See `bid`.
    pub ask: Option<f64>,
    /// The chain's IV of the contract, decimal (used unless the leg sent its own).
    pub chain_iv: Option<f64>,
}

/// Builds the record from an analysis.
pub(crate) fn analysis_record(
    ticker: &str,
    name: Option<&str>,
    legs: &[Leg],
    chain_iv: &[bool],
    market: &Market,
    analysis: &StrategyAnalysis,
) -> AnalysisRecord {
    AnalysisRecord {
        ticker: ticker.to_owned(),
        strategy_name: name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("Custom Strategy")
            .to_owned(),
        stock_price: market.underlying_price,
        stock_price_basis: stock_price_basis(market),
        pricing_model: PricingModelCode::from(market.model).as_str(),
        forward_at_first_expiration: analysis.forward_at_valuation,
        legs_summary: legs
            .iter()
            .enumerate()
            .map(|(i, leg)| leg_summary(leg, chain_iv.get(i).copied().unwrap_or(false)))
            .collect(),
        net_premium: analysis.net_premium_usd,
        net_premium_convention: NET_PREMIUM_CONVENTION.as_str(),
        max_profit: analysis.max_profit_usd.into(),
        max_loss: analysis.max_loss_usd.into(),
        risk_reward_ratio: analysis.risk_reward_ratio.into(),
        net_delta: analysis.net_greeks.delta_shares,
        net_theta: analysis.net_greeks.theta_usd_per_day,
        net_vega: analysis.net_greeks.vega_usd_per_vol_point,
        breakevens: analysis.breakevens.clone(),
        probability_of_profit: analysis.probability_of_profit_pct,
        probability_vol_pct: 100.0 * analysis.probability_vol,
        days_to_first_expiration: analysis.valuation_years * DAYS_PER_YEAR,
        pnl_curve: analysis.pnl_curve.iter().map(|&(p, v)| [p, v]).collect(),
        valuation_method: match analysis.method {
            ValuationMethod::ExactPiecewiseLinear => "exact_piecewise_linear",
            ValuationMethod::NumericFirstExpiration => "numeric_first_expiration",
        },
        rate: market.rate,
        dividend_yield: market.dividend_yield,
        priced_from_chain: None,
    }
}

/// `spot`, or `nearest_forward` on the forward model (module docs).
pub(crate) fn stock_price_basis(market: &Market) -> &'static str {
    match market.model {
        PricingModel::BlackScholesMerton => "spot",
        PricingModel::Black76 => "nearest_forward",
    }
}

/// One leg of a built or optimized strategy (`legs[]`): the chain's mid, Greeks and IV.
#[derive(Debug, Clone, Serialize)]
pub struct BuiltLeg {
    /// CALL or PUT.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// BUY or SELL.
    pub action: &'static str,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration.
    pub expiration: Option<NaiveDate>,
    /// Mid quote, dollars per share.
    pub premium: f64,
    /// Contracts per one-lot.
    pub quantity: u32,
    /// Per-share delta.
    pub delta: Option<f64>,
    /// Per-share theta, dollars per calendar day.
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point.
    pub vega: Option<f64>,
    /// IV, decimal.
    pub iv: Option<f64>,
}

pub(crate) fn built_leg(leg: &Leg) -> BuiltLeg {
    BuiltLeg {
        option_type: option_type_label(leg),
        action: leg.action.as_str(),
        strike: leg.strike,
        expiration: leg.expiration,
        premium: leg.premium_per_share,
        quantity: leg.quantity,
        delta: leg.delta,
        theta: leg.theta,
        vega: leg.vega,
        iv: leg.iv,
    }
}
