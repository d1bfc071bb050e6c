//! Portfolio Greeks totals, value, P&L against entry and the risk level.
//!
//! # Risk level
//! Two readings, each mapped to a level by its magnitude, and the higher level wins:
//!
//! | level | \|delta_exposure_pct\| up to | \|daily_decay_pct\| up to |
//! | --- | --- | --- |
//! | LOW | 50 | 0.1 |
//! | MODERATE | 100 | 0.5 |
//! | HIGH | 200 | 1.0 |
//! | EXTREME | above | above |
//!
//! delta_exposure_pct is the dollar delta (Σ delta in share-equivalents × the underlying
//! price) as a percent of gross market value: a fully invested unlevered stock book reads 100
//! (MODERATE); option leverage pushes it higher. daily_decay_pct is the total theta as a
//! percent of gross market value per day, either sign (short premium earns theta but carries
//! the matching gamma risk).

use std::collections::BTreeMap;

use super::{Position, RiskError, UnderlyingPrice, underlying_prices};

/// |delta_exposure_pct| limits of LOW, MODERATE, HIGH (above: EXTREME).
pub const DELTA_EXPOSURE_LIMITS_PCT: [f64; 3] = [50.0, 100.0, 200.0];

/// |daily_decay_pct| limits of LOW, MODERATE, HIGH (above: EXTREME).
pub const DAILY_DECAY_LIMITS_PCT: [f64; 3] = [0.1, 0.5, 1.0];

/// The documented risk scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RiskLevel {
    /// Small directional and time exposure.
    Low,
    /// About a fully invested, unlevered book.
    Moderate,
    /// Levered up to 2×, or decaying up to 1 % a day.
    High,
    /// Beyond.
    Extreme,
}

impl RiskLevel {
    /// LOW / MODERATE / HIGH / EXTREME.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "LOW",
            Self::Moderate => "MODERATE",
            Self::High => "HIGH",
            Self::Extreme => "EXTREME",
        }
    }

    fn from_limits(value: f64, limits: [f64; 3]) -> Self {
        let magnitude = value.abs();
        if magnitude <= limits[0] {
            Self::Low
        } else if magnitude <= limits[1] {
            Self::Moderate
        } else if magnitude <= limits[2] {
            Self::High
        } else {
            Self::Extreme
        }
    }
}

/// The level for the two readings (percent), the higher of the two scales.
pub fn risk_level_for(delta_exposure_pct: f64, daily_decay_pct: f64) -> RiskLevel {
    RiskLevel::from_limits(delta_exposure_pct, DELTA_EXPOSURE_LIMITS_PCT).max(
        RiskLevel::from_limits(daily_decay_pct, DAILY_DECAY_LIMITS_PCT),
    )
}

/// Totals of one ticker.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TickerGreeks {
    /// Share-equivalents.
    pub delta_shares: f64,
    /// Share-equivalents per $1; `None` when an option position did not supply gamma.
    pub gamma_shares_per_dollar: Option<f64>,
    /// Dollars per calendar day.
    pub theta_usd_per_day: f64,
    /// Dollars per vol point.
    pub vega_usd_per_vol_point: f64,
    /// Net market value, dollars.
    pub value_usd: f64,
    /// delta × underlying price, dollars.
    pub dollar_delta_usd: f64,
    /// The underlying price used, dollars.
    pub underlying_price: f64,
    /// Positions in the ticker.
    pub positions: usize,
}

/// The portfolio-greeks result.
#[derive(Debug, Clone, PartialEq)]
pub struct PortfolioGreeks {
    /// Σ delta, share-equivalents.
    pub total_delta_shares: f64,
    /// Σ gamma, share-equivalents per $1; `None` when an option position lacks gamma.
    pub total_gamma_shares_per_dollar: Option<f64>,
    /// Σ theta, dollars per calendar day.
    pub total_theta_usd_per_day: f64,
    /// Σ vega, dollars per vol point.
    pub total_vega_usd_per_vol_point: f64,
    /// Σ value (long − short), dollars.
    pub net_value_usd: f64,
    /// Σ |value|, dollars.
    pub gross_value_usd: f64,
    /// Σ delta × underlying price, dollars.
    pub dollar_delta_usd: f64,
    /// Σ (current − entry) × shares over positions with an entry price, dollars.
    pub unrealized_pnl_usd: f64,
    /// Indices of positions without an entry price (left out of the P&L).
    pub positions_without_entry_price: Vec<usize>,
    /// dollar delta / gross value × 100; `None` when the gross value is 0.
    pub delta_exposure_pct: Option<f64>,
    /// total theta / gross value × 100 per day; `None` when the gross value is 0.
    pub daily_decay_pct: Option<f64>,
    /// The level on the documented scale.
    pub risk_level: RiskLevel,
    /// Per ticker, ordered by ticker.
    pub by_ticker: BTreeMap<String, TickerGreeks>,
}

/// Totals, value, P&L and the risk level of validated `positions`.
pub fn portfolio_greeks(
    positions: &[Position],
    prices: &[UnderlyingPrice],
) -> Result<PortfolioGreeks, RiskError> {
    if positions.is_empty() {
        return Err(RiskError::NoPositions);
    }
    let underlying = underlying_prices(positions, prices)?;
    let mut by_ticker: BTreeMap<String, TickerGreeks> = BTreeMap::new();
    let (mut gross, mut pnl) = (0.0, 0.0);
    let mut without_entry = Vec::new();
    for (index, position) in positions.iter().enumerate() {
        let price = underlying[&position.ticker];
        let entry = by_ticker
            .entry(position.ticker.clone())
            .or_insert_with(|| TickerGreeks {
                gamma_shares_per_dollar: Some(0.0),
                underlying_price: price,
                ..TickerGreeks::default()
            });
        entry.delta_shares += position.delta_shares();
        entry.theta_usd_per_day += position.theta_usd_per_day();
        entry.vega_usd_per_vol_point += position.vega_usd_per_vol_point();
        entry.value_usd += position.value_usd();
        entry.dollar_delta_usd += position.delta_shares() * price;
        entry.positions += 1;
        entry.gamma_shares_per_dollar = entry
            .gamma_shares_per_dollar
            .zip(position.gamma)
            .map(|(sum, g)| sum + position.share_quantity() * g);
        gross += position.value_usd().abs();
        match position.entry_price {
            Some(entry_price) => {
                pnl += position.share_quantity() * (position.current_price - entry_price);
            }
            None => without_entry.push(index),
        }
    }
    let sum = |f: fn(&TickerGreeks) -> f64| by_ticker.values().map(f).sum::<f64>();
    let total_delta = sum(|t| t.delta_shares);
    let total_theta = sum(|t| t.theta_usd_per_day);
    let dollar_delta = sum(|t| t.dollar_delta_usd);
    let total_gamma = by_ticker
        .values()
        .map(|t| t.gamma_shares_per_dollar)
        .sum::<Option<f64>>();
    let percent_of_gross = |x: f64| (gross > 0.0).then(|| 100.0 * x / gross);
    let delta_exposure_pct = percent_of_gross(dollar_delta);
    let daily_decay_pct = percent_of_gross(total_theta);
    Ok(PortfolioGreeks {
        total_delta_shares: total_delta,
        total_gamma_shares_per_dollar: total_gamma,
        total_theta_usd_per_day: total_theta,
        total_vega_usd_per_vol_point: sum(|t| t.vega_usd_per_vol_point),
        net_value_usd: sum(|t| t.value_usd),
        gross_value_usd: gross,
        dollar_delta_usd: dollar_delta,
        unrealized_pnl_usd: pnl,
        positions_without_entry_price: without_entry,
        risk_level: risk_level_for(
            delta_exposure_pct.unwrap_or(0.0),
            daily_decay_pct.unwrap_or(0.0),
        ),
        delta_exposure_pct,
        daily_decay_pct,
        by_ticker,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_boundaries_belong_to_the_lower_level() {
        assert_eq!(risk_level_for(50.0, 0.0), RiskLevel::Low);
        assert_eq!(risk_level_for(50.0001, 0.0), RiskLevel::Moderate);
        assert_eq!(risk_level_for(-100.0, 0.0), RiskLevel::Moderate);
        assert_eq!(risk_level_for(150.0, 0.0), RiskLevel::High);
        assert_eq!(risk_level_for(201.0, 0.0), RiskLevel::Extreme);
        assert_eq!(risk_level_for(10.0, -0.6), RiskLevel::High);
        assert_eq!(risk_level_for(10.0, 1.5), RiskLevel::Extreme);
    }
}
