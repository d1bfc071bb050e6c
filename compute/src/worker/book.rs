//! Per-underlying state of a compute worker: the latest quote of every contract, what the
//! reference data says about the underlying, and whether anything changed since the last
//! publication.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{Company, OptionQuote};

use crate::time::new_york_date;

/// What a worker knows of one underlying.
#[derive(Debug, Clone, Default)]
pub struct UnderlyingBook {
    /// The latest quote of each contract, in arrival order of the contracts.
    quotes: Vec<OptionQuote>,
    /// Position in `quotes` by OCC symbol.
    index: HashMap<String, usize>,
    /// The trade date of the quotes held (New York date of their quote time).
    trade_date: Option<NaiveDate>,
    /// The newest quote time seen.
    last_quote_time: Option<DateTime<Utc>>,
    /// Reference data, when the reference topic has described the underlying.
    company: Option<Company>,
    /// Dividends per share per year at the latest announced schedule, dollars (the carry
    /// fallback when the quotes do not give the forward).
    annual_dividend: f64,
    /// Changed since the last publication.
    dirty: bool,
}

/// What [`UnderlyingBook::apply_quotes`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyStats {
    /// Quotes taken (new contracts or newer quotes).
    pub accepted: usize,
    /// Quotes older than the one held for the contract (out-of-order redelivery).
    pub stale: usize,
    /// Quotes of an earlier session than the one held.
    pub previous_session: usize,
}

impl UnderlyingBook {
    /// Takes `quotes` (all of this underlying). A quote replaces the held one of its contract
    /// unless it is older; a quote of a later session starts that session afresh (every
    /// contract of the earlier one is dropped, so a session never shows another's quotes or
    /// open interest); quotes of an earlier session are ignored.
    pub fn apply_quotes(&mut self, quotes: impl IntoIterator<Item = OptionQuote>) -> ApplyStats {
        let mut stats = ApplyStats::default();
        for quote in quotes {
            let session = new_york_date(quote.quote_time);
            match self.trade_date {
                Some(held) if session < held => {
                    stats.previous_session += 1;
                    continue;
                }
                Some(held) if session > held => {
                    self.quotes.clear();
                    self.index.clear();
                    self.trade_date = Some(session);
                }
                None => self.trade_date = Some(session),
                Some(_) => {}
            }
            if self.last_quote_time.is_none_or(|t| quote.quote_time > t) {
                self.last_quote_time = Some(quote.quote_time);
            }
            match self.index.get(&quote.option_symbol) {
                Some(&i) if self.quotes[i].quote_time > quote.quote_time => {
                    stats.stale += 1;
                    continue;
                }
                Some(&i) => self.quotes[i] = quote,
                None => {
                    self.index
                        .insert(quote.option_symbol.clone(), self.quotes.len());
                    self.quotes.push(quote);
                }
            }
            stats.accepted += 1;
        }
        if stats.accepted > 0 {
            self.dirty = true;
        }
        stats
    }

    /// Records reference data for the underlying.
    pub fn set_company(&mut self, company: Company) {
        self.company = Some(company);
        self.dirty |= !self.quotes.is_empty();
    }

    /// Records the annual dividend (dollars per share) used when the quotes do not give the
    /// forward. Negative or non-finite values are ignored.
    pub fn set_annual_dividend(&mut self, dollars_per_year: f64) {
        if dollars_per_year.is_finite() && dollars_per_year >= 0.0 {
            self.annual_dividend = dollars_per_year;
        }
    }

    /// The latest quote of every contract held.
    pub fn quotes(&self) -> &[OptionQuote] {
        &self.quotes
    }

    /// Number of contracts held.
    pub fn len(&self) -> usize {
        self.quotes.len()
    }

    /// No quotes held.
    pub fn is_empty(&self) -> bool {
        self.quotes.is_empty()
    }

    /// The session of the quotes held.
    pub fn trade_date(&self) -> Option<NaiveDate> {
        self.trade_date
    }

    /// The newest quote time held.
    pub fn last_quote_time(&self) -> Option<DateTime<Utc>> {
        self.last_quote_time
    }

    /// The reference data, if known.
    pub fn company(&self) -> Option<&Company> {
        self.company.as_ref()
    }

    /// Whether the underlying is priced on the forward (cash indices), per reference data.
    pub fn priced_on_forward(&self) -> bool {
        self.company.as_ref().is_some_and(|c| c.priced_on_forward)
    }

    /// Continuous dividend yield for the carry fallback at `spot`, decimal: the annual
    /// dividend over spot (0 without a dividend or a usable spot).
    pub fn dividend_yield(&self, spot: f64) -> f64 {
        if spot.is_finite() && spot > 0.0 {
            self.annual_dividend / spot
        } else {
            0.0
        }
    }

    /// Changed since the last [`mark_published`](Self::mark_published).
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Marks the current state as published.
    pub fn mark_published(&mut self) {
        self.dirty = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotes_at(hour: u32, day: u32) -> Vec<OptionQuote> {
        let at = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, day, hour, 0, 0).unwrap();
        let exp = NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
        (0..3)
            .map(|i| {
                let strike = 100.0 + f64::from(i);
                OptionQuote {
                    underlying: "SPY".into(),
                    option_symbol: optics_schemas::occ_symbol(
                        "SPY",
                        exp,
                        optics_schemas::OptionType::Call,
                        strike,
                    )
                    .unwrap(),
                    expiration: exp,
                    strike,
                    option_type: optics_schemas::OptionType::Call,
                    settlement: optics_schemas::SettlementStyle::Pm,
                    exercise_style: optics_schemas::ExerciseStyle::American,
                    bid: 1.0,
                    ask: 1.1,
                    bid_size: 10,
                    ask_size: 10,
                    last: None,
                    volume: u64::from(hour),
                    open_interest: 100,
                    oi_date: NaiveDate::from_ymd_opt(2026, 11, day - 1).unwrap(),
                    quote_time: at,
                    underlying_price: 100.0,
                }
            })
            .collect()
    }

    #[test]
    fn newer_quotes_replace_older_ones_and_stale_ones_are_ignored() {
        let mut book = UnderlyingBook::default();
        assert_eq!(book.apply_quotes(quotes_at(15, 20)).accepted, 3);
        assert!(book.is_dirty());
        book.mark_published();
        let stats = book.apply_quotes(quotes_at(14, 20));
        assert_eq!((stats.accepted, stats.stale), (0, 3));
        assert!(!book.is_dirty(), "stale redelivery changes nothing");
        assert_eq!(book.apply_quotes(quotes_at(16, 20)).accepted, 3);
        assert!(book.quotes().iter().all(|q| q.volume == 16));
        assert_eq!(book.len(), 3);
    }

    #[test]
    fn a_new_session_starts_afresh_and_an_old_one_is_ignored() {
        let mut book = UnderlyingBook::default();
        book.apply_quotes(quotes_at(15, 20));
        let mut next_day = quotes_at(15, 23);
        next_day.truncate(1);
        book.apply_quotes(next_day);
        assert_eq!(book.len(), 1, "the earlier session's contracts are dropped");
        assert_eq!(book.trade_date(), NaiveDate::from_ymd_opt(2026, 11, 23));
        let stats = book.apply_quotes(quotes_at(15, 20));
        assert_eq!(stats.previous_session, 3);
        assert_eq!(book.len(), 1);
    }
}
