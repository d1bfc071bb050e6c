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
//!   buy puts to remove it; among **liquid** contracts ([`is_liquid`]) at least 7 days out,
//!   the expiration nearest 30 days, then the strike whose |delta| is nearest 0.5.
//! - Liquid means tradeable at about the mid in size: a two-sided quote (bid > 0, ask ≥ bid),
//!   open interest of at least [`MIN_HEDGE_OPEN_INTEREST`] contracts or a session volume of
//!   at least [`MIN_HEDGE_VOLUME`], and a bid–ask spread no wider than
//!   [`MAX_HEDGE_SPREAD_FRACTION_OF_MID`] of the mid.
//! - Projected Greeks add the hedge's delta (and the option's theta and vega) to the book's.

use chrono::NaiveDate;

use super::portfolio::portfolio_greeks;
use super::{OPTION_MULTIPLIER, Position, PositionType, RiskError, UnderlyingPrice};
use crate::pricing::OptionType;
use crate::strategy::chain::SideQuote;
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
/// Liquidity: the least open interest, contracts, unless the session volume qualifies.
pub const MIN_HEDGE_OPEN_INTEREST: u64 = 100;
/// Liquidity: the least session volume, contracts, unless the open interest qualifies.
pub const MIN_HEDGE_VOLUME: u64 = 100;
/// Liquidity: the widest bid–ask spread accepted, as a fraction of the mid (10 %).
pub const MAX_HEDGE_SPREAD_FRACTION_OF_MID: f64 = 0.10;

/// One listed contract of the hedge ticker as the selector sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HedgeCandidate {
    /// Call or put.
    pub option_type: OptionType,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration date, when known.
    pub expiration: Option<NaiveDate>,
    /// Years to expiry (calendar days / 365).
    pub years_to_expiry: f64,
    /// Quote, per-share Greeks and IV.
    pub quote: SideQuote,
    /// Open interest, contracts (unknown counts as 0).
    pub open_interest: Option<u64>,
    /// The session's volume, contracts (unknown counts as 0).
    pub volume: Option<u64>,
}

impl HedgeCandidate {
    /// (ask − bid) / mid; infinite without a positive mid.
    pub fn spread_fraction_of_mid(&self) -> f64 {
        let mid = self.quote.mid();
        if mid > 0.0 {
            (self.quote.ask - self.quote.bid) / mid
        } else {
            f64::INFINITY
        }
    }
}

/// The liquidity criterion of the option hedge (module docs).
pub fn is_liquid(candidate: &HedgeCandidate) -> bool {
    let quote = &candidate.quote;
    let two_sided = quote.is_usable() && quote.bid > 0.0;
    let active = candidate.open_interest.unwrap_or(0) >= MIN_HEDGE_OPEN_INTEREST
        || candidate.volume.unwrap_or(0) >= MIN_HEDGE_VOLUME;
    two_sided && active && candidate.spread_fraction_of_mid() <= MAX_HEDGE_SPREAD_FRACTION_OF_MID
}

/// The liquidity criterion in words, for errors and documentation.
pub fn liquidity_rule() -> String {
    format!(
        "a two-sided quote (bid above 0), open interest of at least {MIN_HEDGE_OPEN_INTEREST} \
         or volume of at least {MIN_HEDGE_VOLUME} contracts, and a spread of at most {}% of \
         the mid",
        100.0 * MAX_HEDGE_SPREAD_FRACTION_OF_MID
    )
}

impl HedgeContract {
    /// (ask − bid) / mid of the contract's quote; infinite without a positive mid (as
    /// [`HedgeCandidate::spread_fraction_of_mid`], the figure [`is_liquid`] bounds).
    pub fn spread_fraction_of_mid(&self) -> f64 {
        if self.mid > 0.0 {
            (self.ask - self.bid) / self.mid
        } else {
            f64::INFINITY
        }
    }
}

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
    /// Bid, dollars per share.
    pub bid: f64,
    /// Ask, dollars per share.
    pub ask: f64,
    /// Open interest, contracts, when known.
    pub open_interest: Option<u64>,
    /// Session volume, contracts, when known.
    pub volume: Option<u64>,
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
/// removed; among the liquid ones ([`is_liquid`]) at least [`MIN_HEDGE_DAYS`] out, the
/// expiration nearest [`TARGET_HEDGE_DAYS`] (a tie goes to the later), then the strike whose
/// |delta| is nearest [`TARGET_HEDGE_ABS_DELTA`] (a tie goes to the lower strike).
pub fn select_hedge_contract(
    candidates: &[HedgeCandidate],
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
    let out_far_enough = |c: &&HedgeCandidate| {
        c.years_to_expiry.is_finite() && c.years_to_expiry * DAYS_PER_YEAR >= MIN_HEDGE_DAYS
    };
    let eligible: Vec<&HedgeCandidate> = candidates
        .iter()
        .filter(|c| c.option_type == option_type && c.strike.is_finite() && c.strike > 0.0)
        .filter(out_far_enough)
        .collect();
    if eligible.is_empty() {
        return Err(RiskError::NoHedgeContract(format!(
            "no {option_type} expiring at least {MIN_HEDGE_DAYS} days out"
        )));
    }
    let mut liquid: Vec<&HedgeCandidate> = eligible.into_iter().filter(|c| is_liquid(c)).collect();
    if liquid.is_empty() {
        return Err(RiskError::NoHedgeContract(format!(
            "no {option_type} at least {MIN_HEDGE_DAYS} days out is liquid ({})",
            liquidity_rule()
        )));
    }
    // The expiration: nearest the target, a tie (within a millionth of a day: the year
    // fractions of whole days do not subtract exactly) to the later.
    let miss_days =
        |c: &HedgeCandidate| (c.years_to_expiry * DAYS_PER_YEAR - TARGET_HEDGE_DAYS).abs();
    let mut chosen_years: Option<(f64, f64)> = None;
    for candidate in &liquid {
        let miss = miss_days(candidate);
        let better = chosen_years.is_none_or(|(years, best)| {
            miss < best - 1e-6 || (miss <= best + 1e-6 && candidate.years_to_expiry > years)
        });
        if better {
            chosen_years = Some((candidate.years_to_expiry, miss));
        }
    }
    let years = chosen_years.map(|(years, _)| years).ok_or_else(|| {
        RiskError::NoHedgeContract(format!("no liquid {option_type} to hedge with"))
    })?;
    liquid.retain(|c| c.years_to_expiry == years);
    liquid.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    let mut best: Option<(&HedgeCandidate, f64)> = None;
    for candidate in liquid {
        let miss = (candidate.quote.delta.abs() - TARGET_HEDGE_ABS_DELTA).abs();
        if best.is_none_or(|(_, m)| miss < m) {
            best = Some((candidate, miss));
        }
    }
    let (c, _) = best.ok_or_else(|| {
        RiskError::NoHedgeContract(format!("no liquid {option_type} in the chosen expiration"))
    })?;
    Ok(HedgeContract {
        option_type,
        strike: c.strike,
        expiration: c.expiration,
        years_to_expiry: c.years_to_expiry,
        delta: c.quote.delta,
        theta: c.quote.theta,
        vega: c.quote.vega,
        mid: c.quote.mid(),
        bid: c.quote.bid,
        ask: c.quote.ask,
        open_interest: c.open_interest,
        volume: c.volume,
    })
}

#[cfg(test)]
mod spread_tests {
    use super::HedgeContract;
    use crate::pricing::OptionType;

    fn contract(bid: f64, ask: f64, mid: f64) -> HedgeContract {
        HedgeContract {
            option_type: OptionType::Put,
            strike: 590.0,
            expiration: None,
            years_to_expiry: 0.1,
            delta: -0.3,
            theta: -0.2,
            vega: 0.5,
            mid,
            bid,
            ask,
            open_interest: None,
            volume: None,
        }
    }

    #[test]
    fn spread_is_a_fraction_of_the_mid() {
        // 2.00 / 2.20: 0.20 wide on a 2.10 mid = 0.0952…
        let c = contract(2.0, 2.2, 2.1);
        assert!((c.spread_fraction_of_mid() - 0.2 / 2.1).abs() < 1e-15);
        assert!((c.spread_fraction_of_mid() - 0.095_238_095_238).abs() < 1e-12);
        assert_eq!(contract(1.0, 1.0, 1.0).spread_fraction_of_mid(), 0.0);
        assert_eq!(
            contract(0.0, 0.0, 0.0).spread_fraction_of_mid(),
            f64::INFINITY
        );
    }
}
