//! The chain as the builders and the optimizer see it: one expiration's strikes, each with a
//! call and a put quote and their per-share Greeks and IV.

use std::collections::HashSet;

use chrono::NaiveDate;
use optics_schemas::StrikeKey;

use crate::time::DAYS_PER_YEAR;

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

/// The first of `items` at each strike, in the order given: the series a chain is read as when
/// a date lists a strike twice (AM before PM settlement). Strikes are the same when their
/// [`StrikeKey`]s are (exact thousandths of a dollar, so float noise merges and 33.375 and
/// 33.37 stay apart); an item whose strike is not finite names no listed strike and is always
/// kept. Linear in the items.
pub fn first_per_strike<T>(items: &[T], strike: impl Fn(&T) -> f64) -> Vec<&T> {
    let mut seen: HashSet<StrikeKey> = HashSet::with_capacity(items.len());
    items
        .iter()
        .filter(|item| {
            let k = strike(item);
            !k.is_finite() || seen.insert(StrikeKey::from_dollars(k))
        })
        .collect()
}

/// Whether two strikes, dollars, are the same listed strike (equal [`StrikeKey`]s; a strike
/// that is not finite matches none).
pub fn same_strike(a: f64, b: f64) -> bool {
    a.is_finite() && b.is_finite() && StrikeKey::from_dollars(a) == StrikeKey::from_dollars(b)
}

/// The index of the horizon nearest `days` calendar days among `years` (years to each
/// expiration, calendar days / 365, in listing order), a tie going to the later listed; `None`
/// when there is none. The rule the strategy endpoints pick an expiration by from `dte` or
/// `days_to_exp`.
pub fn nearest_horizon(years: &[f64], days: f64) -> Option<usize> {
    let miss = |y: f64| (y * DAYS_PER_YEAR - days).abs();
    let mut best: Option<usize> = None;
    for (index, &y) in years.iter().enumerate() {
        if best.is_none_or(|b| miss(y) <= miss(years[b])) {
            best = Some(index);
        }
    }
    best
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

#[cfg(test)]
mod strike_tests {
    use super::{first_per_strike, nearest_horizon, same_strike};

    #[test]
    fn nearest_horizon_picks_the_closest_and_ties_go_later() {
        // 0, half a year (182.5 days) and a year (365 days).
        let years = [0.0, 0.5, 1.0];
        assert_eq!(nearest_horizon(&years, 100.0), Some(1)); // 82.5 days off vs 100
        assert_eq!(nearest_horizon(&years, 91.0), Some(0)); // 91 vs 91.5 days off
        assert_eq!(nearest_horizon(&years, 300.0), Some(2)); // 65 vs 117.5
        // 91.25 days is 91.25 from both 0 and 182.5: the later.
        assert_eq!(nearest_horizon(&years, 91.25), Some(1));
        // 0.5 and 0.5 again: the later listed.
        assert_eq!(nearest_horizon(&[0.5, 0.5], 10.0), Some(1));
        assert_eq!(nearest_horizon(&[], 30.0), None);
    }

    #[test]
    fn first_per_strike_keeps_the_first_series_of_each_strike() {
        // An AM run then a PM run of one date: 95 and 100 are listed by both (the PM 95 with
        // float noise), 97.5 and 120 by PM only, 120 twice; NaN and infinity are kept.
        let strikes = [
            90.0,
            95.0,
            100.0,
            80.0,
            0.1 + 0.2 + 94.7, // 95.00000000000001
            97.5,
            100.0,
            120.0,
            120.0,
            f64::NAN,
            f64::INFINITY,
        ];
        let kept: Vec<usize> = first_per_strike(&strikes, |k| *k)
            .into_iter()
            .map(|k| strikes.iter().position(|s| std::ptr::eq(s, k)).unwrap())
            .collect();
        // Indices: 90, 95 (AM), 100 (AM), 80, 97.5, the first 120, NaN, infinity.
        assert_eq!(kept, [0, 1, 2, 3, 5, 7, 9, 10]);
        assert!(first_per_strike(&[] as &[f64], |k| *k).is_empty());
    }

    #[test]
    fn adjusted_strikes_a_cent_apart_are_different_strikes() {
        let strikes = [33.375, 33.37, 33.38, 33.375];
        assert_eq!(
            first_per_strike(&strikes, |k| *k),
            [&33.375, &33.37, &33.38]
        );
        assert!(same_strike(33.375, 33.375));
        assert!(!same_strike(33.375, 33.37));
        assert!(same_strike(600.0, 599.9999999999999));
        assert!(!same_strike(f64::NAN, f64::NAN));
        assert!(!same_strike(f64::NAN, 0.0));
    }
}
