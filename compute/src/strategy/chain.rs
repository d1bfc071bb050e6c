//! The chain as the builders and the optimizer see it: one expiration's strikes, each with a
//! call and a put quote and their per-share Greeks and IV.

use chrono::NaiveDate;

use super::StrategyError;
use super::leg::{Action, Leg};
use crate::pricing::OptionType;

/// One side (call or put) of a chain row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SideQuote {
    /// Bid, dollars per share.
    pub bid: f64,
    /// Ask, dollars per share.
    pub ask: f64,
    /// Per-share delta.
    pub delta: f64,
    /// Per-share theta, dollars per calendar day.
    pub theta: f64,
    /// Per-share vega, dollars per vol point.
    pub vega: f64,
    /// IV, decimal.
    pub iv: f64,
}

impl SideQuote {
    /// The mid quote, dollars per share, at the quotes' precision (as the chain serves it): the
    /// premium builders and the optimizer use.
    #[inline]
    pub fn mid(&self) -> f64 {
        optics_schemas::quote_mid(self.bid, self.ask)
    }

    /// A two-sided, uncrossed quote (bid may be 0) with finite Greeks and a positive IV.
    /// Other sides are skipped by the builders, not rejected: chains have no-bid wings.
    pub fn is_usable(&self) -> bool {
        self.bid.is_finite()
            && self.ask.is_finite()
            && self.bid >= 0.0
            && self.ask > 0.0
            && self.ask >= self.bid
            && self.delta.is_finite()
            && self.delta.abs() <= 1.0
            && self.theta.is_finite()
            && self.vega.is_finite()
            && self.iv.is_finite()
            && self.iv > 0.0
    }
}

/// One strike of the chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainRow {
    /// Strike, dollars.
    pub strike: f64,
    /// The call side, if quoted.
    pub call: Option<SideQuote>,
    /// The put side, if quoted.
    pub put: Option<SideQuote>,
}

impl ChainRow {
    /// The usable quote of one side.
    #[inline]
    pub fn side(&self, option_type: OptionType) -> Option<&SideQuote> {
        match option_type {
            OptionType::Call => self.call.as_ref(),
            OptionType::Put => self.put.as_ref(),
        }
        .filter(|q| q.is_usable())
    }
}

/// One expiration of the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpirationChain {
    /// The expiration date, echoed into the legs.
    pub expiration: Option<NaiveDate>,
    /// Years to expiry (calendar days / 365), > 0.
    pub years_to_expiry: f64,
    /// The strikes, in any order.
    pub rows: Vec<ChainRow>,
}

impl ExpirationChain {
    /// The rows sorted by strike, after checking the strikes and the time: finite, positive
    /// and distinct. Errors name the row.
    pub(crate) fn sorted_rows(&self) -> Result<Vec<ChainRow>, StrategyError> {
        if !self.years_to_expiry.is_finite() || self.years_to_expiry <= 0.0 {
            return Err(StrategyError::input(
                "expiration",
                "must be in the future (years to expiry > 0)",
            ));
        }
        if self.rows.is_empty() {
            return Err(StrategyError::input("chain", "has no rows"));
        }
        for (index, row) in self.rows.iter().enumerate() {
            if !row.strike.is_finite() || row.strike <= 0.0 {
                return Err(StrategyError::row(
                    index,
                    "Strike",
                    "must be a finite number greater than zero",
                ));
            }
        }
        let mut rows = self.rows.clone();
        rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
        if let Some(pair) = rows.windows(2).find(|w| w[0].strike == w[1].strike) {
            let index = self
                .rows
                .iter()
                .rposition(|r| r.strike == pair[1].strike)
                .unwrap_or(0);
            return Err(StrategyError::row(index, "Strike", "appears twice"));
        }
        Ok(rows)
    }

    /// A leg on row `row`'s `option_type` side at the mid, carrying its Greeks and IV.
    /// `None` when that side has no usable quote.
    pub(crate) fn leg(
        &self,
        row: &ChainRow,
        option_type: OptionType,
        action: Action,
        quantity: u32,
    ) -> Option<Leg> {
        let quote = row.side(option_type)?;
        Some(Leg {
            option_type,
            action,
            strike: row.strike,
            years_to_expiry: self.years_to_expiry,
            expiration: self.expiration,
            premium_per_share: quote.mid(),
            quantity,
            iv: Some(quote.iv),
            iv_units_read: None,
            delta: Some(quote.delta),
            theta: Some(quote.theta),
            vega: Some(quote.vega),
        })
    }
}
