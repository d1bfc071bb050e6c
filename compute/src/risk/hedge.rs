//! Delta hedges: shares of the hedge ticker, or option contracts on it, sized to move the
//! portfolio's delta to a target.
//!
//! Share-equivalent, not beta-weighted ([`HEDGE_NOTE`]): one share-equivalent of delta in any
//! ticker is offset by one share of the hedge ticker.
//!
//! - delta_gap = target − current (share-equivalents).
//! - Stock hedge: round(delta_gap) shares, half away from zero; BUY when positive; when
//!   negative SELL if the book already holds at least that many long shares of the hedge
//!   ticker, otherwise SELL SHORT. est_cost = shares × hedge price (notional traded).
//! - Option hedge: contracts = round(|gap| / |100·delta|) of one contract; BUY when the
//!   contract's delta has the gap's sign, SELL otherwise. est_cost = contracts × mid × 100
//!   (premium paid when buying, received when selling).
//! - [`select_hedge_contract`] picks the contract the spec describes: buy calls to add delta,
//!   buy puts to remove it; the expiration nearest 30 days among those at least 7 days out;
//!   the strike whose |delta| is nearest 0.5 with a bid above zero.
//! - Projected Greeks add the hedge's delta (and the option's theta and vega) to the book's.

use chrono::NaiveDate;

use super::portfolio::portfolio_greeks;
use super::{OPTION_MULTIPLIER, Position, PositionType, RiskError, UnderlyingPrice};
use crate::pricing::OptionType;
use crate::strategy::chain::ExpirationChain;
use crate::time::DAYS_PER_YEAR;

/// The note every hedge answer carries.
pub const HEDGE_NOTE: &str = "Deltas are share-equivalents, not beta-weighted: each share of \
    delta in any ticker is offset one-for-one by a share of the hedge ticker.";

/// The expiration the option hedge aims for, calendar days.
pub const TARGET_HEDGE_DAYS: f64 = 30.0;
/// Expirations closer than this are not used for the option hedge, calendar days.
pub const MIN_HEDGE_DAYS: f64 = 7.0;
/// The |delta| the option hedge aims for.
pub const TARGET_HEDGE_ABS_DELTA: f64 = 0.5;
/// A contract with a smaller |delta| than this cannot size a hedge.
pub const MIN_HEDGE_ABS_DELTA: f64 = 0.01;

/// The trade a hedge makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TradeAction {
    /// Buy shares or contracts.
    Buy,
    /// Sell shares already held, or write contracts.
    Sell,
    /// Sell shares not held.
    SellShort,
}

impl TradeAction {
    /// BUY / SELL / SELL SHORT.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Buy => "BUY",
            Self::Sell => "SELL",
            Self::SellShort => "SELL SHORT",
        }
    }
}

/// One option contract of the hedge ticker, per share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HedgeContract {
    /// Call or put.
    pub option_type: OptionType,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration date, when known.
    pub expiration: Option<NaiveDate>,
    /// Years to expiry.
    pub years_to_expiry: f64,
    /// Per-share delta.
    pub delta: f64,
    /// Per-share theta, dollars per day.
    pub theta: f64,
    /// Per-share vega, dollars per vol point.
    pub vega: f64,
    /// Mid quote, dollars per share.
    pub mid: f64,
}

/// The share hedge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StockHedge {
    /// BUY, SELL or SELL SHORT.
    pub action: TradeAction,
    /// Whole shares, positive.
    pub shares: f64,
    /// shares × hedge price, dollars.
    pub est_cost_usd: f64,
}

/// The option hedge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionHedge {
    /// BUY or SELL.
    pub action: TradeAction,
    /// The contract.
    pub contract: HedgeContract,
    /// Whole contracts, positive.
    pub contracts: f64,
    /// 100 × per-share delta: share-equivalents per contract.
    pub delta_per_contract: f64,
    /// contracts × mid × 100, dollars.
    pub est_cost_usd: f64,
}

/// Greeks of the book before or after a hedge.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HedgeGreeks {
    /// Share-equivalents.
    pub delta_shares: f64,
    /// Dollars per day.
    pub theta_usd_per_day: f64,
    /// Dollars per vol point.
    pub vega_usd_per_vol_point: f64,
}

/// The hedge-recommendations result.
#[derive(Debug, Clone, PartialEq)]
pub struct HedgePlan {
    /// The book's delta, share-equivalents.
    pub current_delta: f64,
    /// Where to land.
    pub target_delta: f64,
    /// target − current.
    pub delta_gap: f64,
    /// The hedge ticker, upper case.
    pub hedge_ticker: String,
    /// Shares to trade; `None` when the gap rounds to zero shares.
    pub stock: Option<StockHedge>,
    /// Contracts to trade; `None` without a contract or when the gap rounds to zero.
    pub option: Option<OptionHedge>,
    /// The book now.
    pub current: HedgeGreeks,
    /// After the share hedge.
    pub after_stock: HedgeGreeks,
    /// After the option hedge, when there is one.
    pub after_option: Option<HedgeGreeks>,
    /// [`HEDGE_NOTE`].
    pub note: &'static str,
}

/// Plans the hedges of validated `positions` towards `target_delta` with `hedge_ticker` at
/// `hedge_price`, and with `contract` for the option alternative.
pub fn hedge_plan(
    positions: &[Position],
    prices: &[UnderlyingPrice],
    hedge_ticker: &str,
    hedge_price: f64,
    target_delta: f64,
    contract: Option<&HedgeContract>,
) -> Result<HedgePlan, RiskError> {
    let hedge_ticker = hedge_ticker.trim().to_ascii_uppercase();
    if hedge_ticker.is_empty() {
        return Err(RiskError::input("hedge_ticker", "must not be empty"));
    }
    if !hedge_price.is_finite() || hedge_price <= 0.0 {
        return Err(RiskError::input(
            "hedge_price",
            "must be a finite number of dollars above zero",
        ));
    }
    if !target_delta.is_finite() {
        return Err(RiskError::input("target_delta", "must be a finite number"));
    }
    let book = portfolio_greeks(positions, prices)?;
    let current = HedgeGreeks {
        delta_shares: book.total_delta_shares,
        theta_usd_per_day: book.total_theta_usd_per_day,
        vega_usd_per_vol_point: book.total_vega_usd_per_vol_point,
    };
    let gap = target_delta - current.delta_shares;

    let shares = gap.round();
    let stock = (shares != 0.0).then(|| {
        let held: f64 = positions
            .iter()
            .filter(|p| p.position_type == PositionType::Stock && p.ticker == hedge_ticker)
            .map(|p| p.quantity)
            .sum();
        let action = if shares > 0.0 {
            TradeAction::Buy
        } else if held >= -shares {
            TradeAction::Sell
        } else {
            TradeAction::SellShort
        };
        StockHedge {
            action,
            shares: shares.abs(),
            est_cost_usd: shares.abs() * hedge_price,
        }
    });
    let after_stock = HedgeGreeks {
        delta_shares: current.delta_shares + shares,
        ..current
    };

    let option = match contract {
        None => None,
        Some(contract) => option_hedge(gap, contract)?,
    };
    let after_option = option.map(|hedge| {
        let signed = match hedge.action {
            TradeAction::Buy => hedge.contracts,
            TradeAction::Sell | TradeAction::SellShort => -hedge.contracts,
        } * OPTION_MULTIPLIER;
        HedgeGreeks {
            delta_shares: current.delta_shares + signed * hedge.contract.delta,
            theta_usd_per_day: current.theta_usd_per_day + signed * hedge.contract.theta,
            vega_usd_per_vol_point: current.vega_usd_per_vol_point + signed * hedge.contract.vega,
        }
    });
    Ok(HedgePlan {
        current_delta: current.delta_shares,
        target_delta,
        delta_gap: gap,
        hedge_ticker,
        stock,
        option,
        current,
        after_stock,
        after_option,
        note: HEDGE_NOTE,
    })
}

fn option_hedge(gap: f64, contract: &HedgeContract) -> Result<Option<OptionHedge>, RiskError> {
    let finite = [
        contract.strike,
        contract.delta,
        contract.theta,
        contract.vega,
        contract.mid,
    ]
    .iter()
    .all(|v| v.is_finite());
    if !finite || contract.mid < 0.0 || contract.strike <= 0.0 {
        return Err(RiskError::NoHedgeContract(
            "the contract's strike, Greeks and mid must be finite (mid ≥ 0)".into(),
        ));
    }
    if contract.delta.abs() < MIN_HEDGE_ABS_DELTA {
        return Err(RiskError::NoHedgeContract(format!(
            "|delta| {} is too small to size a hedge",
            contract.delta
        )));
    }
    let delta_per_contract = OPTION_MULTIPLIER * contract.delta;
    let contracts = (gap.abs() / delta_per_contract.abs()).round();
    if contracts == 0.0 {
        return Ok(None);
    }
    let action = if (contract.delta > 0.0) == (gap > 0.0) {
        TradeAction::Buy
    } else {
        TradeAction::Sell
    };
    Ok(Some(OptionHedge {
        action,
        contract: *contract,
        contracts,
        delta_per_contract,
        est_cost_usd: contracts * contract.mid * OPTION_MULTIPLIER,
    }))
}

/// The option-hedge contract for a `delta_gap`: calls when delta is to be added, puts when
/// removed; the expiration nearest [`TARGET_HEDGE_DAYS`] among those at least
/// [`MIN_HEDGE_DAYS`] out (a tie goes to the later); the strike with a bid above zero whose
/// |delta| is nearest [`TARGET_HEDGE_ABS_DELTA`] (a tie goes to the lower strike).
pub fn select_hedge_contract(
    chains: &[ExpirationChain],
    delta_gap: f64,
) -> Result<HedgeContract, RiskError> {
    if !delta_gap.is_finite() || delta_gap == 0.0 {
        return Err(RiskError::NoHedgeContract(
            "there is no delta gap to hedge".into(),
        ));
    }
    let option_type = if delta_gap > 0.0 {
        OptionType::Call
    } else {
        OptionType::Put
    };
    // Later first, so that a tie (within a millionth of a day: the year fractions of whole
    // days do not subtract exactly) keeps the later expiration.
    let mut expirations: Vec<&ExpirationChain> = chains
        .iter()
        .filter(|c| {
            c.years_to_expiry.is_finite() && c.years_to_expiry * DAYS_PER_YEAR >= MIN_HEDGE_DAYS
        })
        .collect();
    expirations.sort_by(|a, b| b.years_to_expiry.total_cmp(&a.years_to_expiry));
    let miss = |c: &ExpirationChain| (c.years_to_expiry * DAYS_PER_YEAR - TARGET_HEDGE_DAYS).abs();
    let mut chosen: Option<&ExpirationChain> = None;
    for chain in expirations {
        if chosen.is_none_or(|best| miss(chain) < miss(best) - 1e-6) {
            chosen = Some(chain);
        }
    }
    let chain = chosen.ok_or_else(|| {
        RiskError::NoHedgeContract(format!("no expiration at least {MIN_HEDGE_DAYS} days out"))
    })?;
    let mut best: Option<(HedgeContract, f64)> = None;
    let mut rows = chain.rows.clone();
    rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    for row in &rows {
        let Some(quote) = row.side(option_type) else {
            continue;
        };
        if !(quote.bid > 0.0) || !(row.strike > 0.0) {
            continue;
        }
        let miss = (quote.delta.abs() - TARGET_HEDGE_ABS_DELTA).abs();
        if best.as_ref().is_none_or(|(_, m)| miss < *m) {
            best = Some((
                HedgeContract {
                    option_type,
                    strike: row.strike,
                    expiration: chain.expiration,
                    years_to_expiry: chain.years_to_expiry,
                    delta: quote.delta,
                    theta: quote.theta,
                    vega: quote.vega,
                    mid: quote.mid(),
                },
                miss,
            ));
        }
    }
    best.map(|(c, _)| c).ok_or_else(|| {
        RiskError::NoHedgeContract(format!(
            "no {option_type} in the chosen expiration has a bid"
        ))
    })
}
