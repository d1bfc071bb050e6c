//! The chain row and expiration pricing blocks `/chain` and `/chain-at-time` both print
//! (spec 2.4).

use optics_schemas::{ChainRow, ForwardSource, SettlementStyle};
use serde::Serialize;
use utoipa::ToSchema;

use crate::openapi::{ForwardSourceCode, SettlementCode};

/// One strike of one expiration, call and put side by side, with the spec's keys. Prices are
/// dollars per share, IV decimal, Greeks per share in the units of
/// [`optics_schemas::ChainGreeks`], volume and open interest in contracts. A value the side
/// does not have (not listed, no two-sided quote, no IV) is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = ChainRow)]
pub struct ChainRowPayload {
    /// Strike, dollars.
    #[serde(rename = "Strike")]
    pub strike: f64,
    /// `AM` or `PM` settlement of the series.
    #[serde(rename = "Settlement")]
    #[schema(value_type = SettlementCode)]
    pub settlement: SettlementStyle,
    /// Best bid of the call, dollars per share.
    #[serde(rename = "Call Bid")]
    pub call_bid: Option<f64>,
    /// Best ask of the call, dollars per share.
    #[serde(rename = "Call Ask")]
    pub call_ask: Option<f64>,
    /// Mid of the call's two-sided quote, dollars per share.
    #[serde(rename = "Call Mid")]
    pub call_mid: Option<f64>,
    /// Last trade of the call, dollars per share.
    #[serde(rename = "Call Last")]
    pub call_last: Option<f64>,
    /// Best bid of the put, dollars per share.
    #[serde(rename = "Put Bid")]
    pub put_bid: Option<f64>,
    /// Best ask of the put, dollars per share.
    #[serde(rename = "Put Ask")]
    pub put_ask: Option<f64>,
    /// Mid of the put's two-sided quote, dollars per share.
    #[serde(rename = "Put Mid")]
    pub put_mid: Option<f64>,
    /// Last trade of the put, dollars per share.
    #[serde(rename = "Put Last")]
    pub put_last: Option<f64>,
    /// Implied volatility of the call's mid, decimal.
    #[serde(rename = "IV Call")]
    pub iv_call: Option<f64>,
    /// Implied volatility of the put's mid, decimal.
    #[serde(rename = "IV Put")]
    pub iv_put: Option<f64>,
    /// Delta of the call, per share.
    #[serde(rename = "Delta Call")]
    pub delta_call: Option<f64>,
    /// Delta of the put, per share.
    #[serde(rename = "Delta Put")]
    pub delta_put: Option<f64>,
    /// Gamma of the call, per $1 of the underlying.
    #[serde(rename = "Gamma Call")]
    pub gamma_call: Option<f64>,
    /// Gamma of the put, per $1 of the underlying.
    #[serde(rename = "Gamma Put")]
    pub gamma_put: Option<f64>,
    /// Theta of the call, dollars per calendar day.
    #[serde(rename = "Theta Call")]
    pub theta_call: Option<f64>,
    /// Theta of the put, dollars per calendar day.
    #[serde(rename = "Theta Put")]
    pub theta_put: Option<f64>,
    /// Vega of the call, dollars per vol point.
    #[serde(rename = "Vega Call")]
    pub vega_call: Option<f64>,
    /// Vega of the put, dollars per vol point.
    #[serde(rename = "Vega Put")]
    pub vega_put: Option<f64>,
    /// Rho of the call, dollars per point of rate.
    #[serde(rename = "Rho Call")]
    pub rho_call: Option<f64>,
    /// Rho of the put, dollars per point of rate.
    #[serde(rename = "Rho Put")]
    pub rho_put: Option<f64>,
    /// Epsilon of the call, dollars per point of yield.
    #[serde(rename = "Epsilon Call")]
    pub epsilon_call: Option<f64>,
    /// Epsilon of the put, dollars per point of yield.
    #[serde(rename = "Epsilon Put")]
    pub epsilon_put: Option<f64>,
    /// Time value of the call's mid, dollars per share.
    #[serde(rename = "Extrinsic Call")]
    pub extrinsic_call: Option<f64>,
    /// Time value of the put's mid, dollars per share.
    #[serde(rename = "Extrinsic Put")]
    pub extrinsic_put: Option<f64>,
    /// Call contracts traded this session.
    #[serde(rename = "Call Volume")]
    pub call_volume: Option<u64>,
    /// Put contracts traded this session.
    #[serde(rename = "Put Volume")]
    pub put_volume: Option<u64>,
    /// Open interest of the call, contracts.
    #[serde(rename = "Call OI")]
    pub call_oi: Option<u64>,
    /// Open interest of the put, contracts.
    #[serde(rename = "Put OI")]
    pub put_oi: Option<u64>,
    /// OCC symbol of the call.
    #[serde(rename = "Call Symbol")]
    pub call_symbol: Option<String>,
    /// OCC symbol of the put.
    #[serde(rename = "Put Symbol")]
    pub put_symbol: Option<String>,
}

impl ChainRowPayload {
    /// The payload row of a chain row.
    pub fn from_row(row: &ChainRow) -> Self {
        let (c, p) = (&row.call, &row.put);
        Self {
            strike: row.strike,
            settlement: row.settlement,
            call_bid: c.bid,
            call_ask: c.ask,
            call_mid: c.mid,
            call_last: c.last,
            put_bid: p.bid,
            put_ask: p.ask,
            put_mid: p.mid,
            put_last: p.last,
            iv_call: c.iv,
            iv_put: p.iv,
            delta_call: c.greeks.delta,
            delta_put: p.greeks.delta,
            gamma_call: c.greeks.gamma,
            gamma_put: p.greeks.gamma,
            theta_call: c.greeks.theta,
            theta_put: p.greeks.theta,
            vega_call: c.greeks.vega,
            vega_put: p.greeks.vega,
            rho_call: c.greeks.rho,
            rho_put: p.greeks.rho,
            epsilon_call: c.greeks.epsilon,
            epsilon_put: p.greeks.epsilon,
            extrinsic_call: c.extrinsic,
            extrinsic_put: p.extrinsic,
            call_volume: c.volume,
            put_volume: p.volume,
            call_oi: c.open_interest,
            put_oi: p.open_interest,
            call_symbol: c.option_symbol.clone(),
            put_symbol: p.option_symbol.clone(),
        }
    }
}

/// How one expiration was priced.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpirationPricing {
    /// Forward of the expiration, dollars.
    pub forward: f64,
    /// `parity` (from call and put mids) or `carry` (spot × e^{(r − q)T}).
    #[schema(value_type = ForwardSourceCode)]
    pub forward_source: ForwardSource,
    /// Strikes combined into a parity forward (0 for carry).
    pub forward_strike_count: u32,
    /// Calendar days from the trade date.
    pub dte: i32,
    /// Years to the expiration day's close (16:00 New York, 13:00 on early-close days; ACT/365).
    pub years_to_expiry: f64,
    /// Continuous risk-free rate, decimal.
    pub rate: f64,
    /// Continuous yield the forward implies, decimal.
    pub carry_yield: f64,
}

impl ExpirationPricing {
    pub(super) fn of(row: &ChainRow) -> Self {
        Self {
            forward: row.forward,
            forward_source: row.forward_source,
            forward_strike_count: row.forward_strike_count,
            dte: row.dte,
            years_to_expiry: row.years_to_expiry,
            rate: row.rate,
            carry_yield: row.carry_yield,
        }
    }
}
