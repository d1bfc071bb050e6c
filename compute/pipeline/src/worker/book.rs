//! Per-underlying state of a compute worker: the latest quote of every contract, what the
//! reference data says about the underlying, and whether anything changed since the last
//! publication.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::time::SystemTime;

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::memory::HeapBytes;
use optics_schemas::{Company, OptionQuote};

use optics_compute::chain::ContractSymbol;
use optics_compute::time::{NyseCalendar, new_york_date};

/// What a worker knows of one underlying.
#[derive(Debug, Clone, Default)]
pub struct UnderlyingBook {
    /// The latest quote of each contract, kept in the chain's row order (expiration,
    /// settlement, strike, call before put) so a chain build need not sort them.
    quotes: Vec<OptionQuote>,
    /// `symbols[i]`: the parsed OCC symbol of `quotes[i]`, parsed once when the contract
    /// entered the book.
    symbols: Vec<Option<ContractSymbol>>,
    /// `arrivals[i]`: when the contract of `quotes[i]` entered the book this session (0, 1, …).
    arrivals: Vec<u64>,
    /// Position in `quotes` by OCC symbol.
    index: HashMap<String, usize>,
    /// The newest held quote's (quote time, arrival) and underlying price: the maximum over
    /// the book, kept as quotes are taken (a held quote is only ever replaced by one at least
    /// as new, so the maximum never moves back).
    newest: Option<(DateTime<Utc>, u64, f64)>,
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
    /// When each batch taken since the last publication was quoted and entered the bus,
    /// oldest first: what the next publication serves for the first time, so the worker can
    /// tell how old each batch is when the API first answers with it. At most
    /// [`UNSERVED_BATCHES_KEPT`]; beyond, the newest replaces the last kept.
    unserved_batches: Vec<BatchTimes>,
    /// Built and handed to an in-process reader since its last snapshot went to the store (a
    /// worker that writes less often than it cycles: `WorkerConfig::store_every`).
    unstored: bool,
    /// When (market time) its last snapshot went to the store.
    stored_at: Option<DateTime<Utc>>,
}

/// When one quote batch was quoted and when it entered the bus: what its freshness is
/// measured from when the API first answers with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BatchTimes {
    /// Its newest accepted quote's time (market time, the worker's clock).
    pub quoted_at: DateTime<Utc>,
    /// When the bus accepted it, on the wall clock ([`optics_schemas::Delivery::entered_bus`]);
    /// `None` for quotes applied without a bus.
    pub entered_bus: Option<SystemTime>,
}

/// Batches of quote times a book keeps between publications (one a quoting interval: a cycle
/// normally takes a few).
pub const UNSERVED_BATCHES_KEPT: usize = 64;

/// The book's quotes, their parsed symbols and arrivals, the symbol index and the reference
/// data.
impl HeapBytes for UnderlyingBook {
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.quotes.heap_bytes()
            + self.symbols.capacity() * size_of::<Option<ContractSymbol>>()
            + self.arrivals.capacity() * size_of::<u64>()
            // hashbrown: a slot and a control byte per bucket, plus each key's text.
            + self.index.capacity() * (size_of::<(String, usize)>() + 1)
            + self.index.keys().map(String::capacity).sum::<usize>()
            + self.company.as_ref().map_or(0, |c| c.heap_bytes())
            + self.unserved_batches.capacity() * size_of::<BatchTimes>()
    }
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
        self.apply_quote_batch(quotes, None)
    }

    /// [`apply_quotes`](Self::apply_quotes) for a batch that entered the bus at `entered_bus`.
    pub fn apply_quote_batch(
        &mut self,
        quotes: impl IntoIterator<Item = OptionQuote>,
        entered_bus: Option<SystemTime>,
    ) -> ApplyStats {
        let mut stats = ApplyStats::default();
        let mut batch_time: Option<DateTime<Utc>> = None;
        for quote in quotes {
            let session = new_york_date(quote.quote_time);
            match self.trade_date {
                Some(held) if session < held => {
                    stats.previous_session += 1;
                    continue;
                }
                Some(held) if session > held => {
                    self.clear_contracts();
                    self.trade_date = Some(session);
                }
                None => self.trade_date = Some(session),
                Some(_) => {}
            }
            if self.last_quote_time.is_none_or(|t| quote.quote_time > t) {
                self.last_quote_time = Some(quote.quote_time);
            }
            let held = self.index.get(&quote.option_symbol).copied();
            if held.is_some_and(|i| self.quotes[i].quote_time > quote.quote_time) {
                stats.stale += 1;
                continue;
            }
            batch_time = batch_time.max(Some(quote.quote_time));
            let arrival = held.map_or(self.quotes.len() as u64, |i| self.arrivals[i]);
            if self.newest.is_none_or(|(time, newest_arrival, _)| {
                (quote.quote_time, arrival) >= (time, newest_arrival)
            }) {
                self.newest = Some((quote.quote_time, arrival, quote.underlying_price));
            }
            match held {
                Some(i) => self.quotes[i] = quote,
                None => {
                    self.index
                        .insert(quote.option_symbol.clone(), self.quotes.len());
                    self.symbols
                        .push(ContractSymbol::parse(&quote.option_symbol));
                    self.arrivals.push(arrival);
                    self.quotes.push(quote);
                }
            }
            stats.accepted += 1;
        }
        if stats.accepted > 0 {
            self.dirty = true;
            self.keep_row_order();
        }
        if let Some(quoted_at) = batch_time {
            let times = BatchTimes {
                quoted_at,
                entered_bus,
            };
            if self.unserved_batches.len() < UNSERVED_BATCHES_KEPT {
                self.unserved_batches.push(times);
            } else if let Some(last) = self.unserved_batches.last_mut() {
                *last = times;
            }
        }
        stats
    }

    /// When each batch taken since the last publication was quoted and entered the bus,
    /// oldest first (see [`UNSERVED_BATCHES_KEPT`]).
    pub fn unserved_batches(&self) -> &[BatchTimes] {
        &self.unserved_batches
    }

    /// Restores the row order after quotes were taken, when they broke it (new contracts
    /// arriving out of order).
    fn keep_row_order(&mut self) {
        let ordered = (1..self.quotes.len()).all(|i| self.row_order(i - 1, i).is_le());
        if ordered {
            return;
        }
        let mut order: Vec<usize> = (0..self.quotes.len()).collect();
        order.sort_by(|&a, &b| self.row_order(a, b));
        let mut quotes: Vec<Option<OptionQuote>> = std::mem::take(&mut self.quotes)
            .into_iter()
            .map(Some)
            .collect();
        let symbols = std::mem::take(&mut self.symbols);
        let arrivals = std::mem::take(&mut self.arrivals);
        for &i in &order {
            if let Some(quote) = quotes[i].take() {
                self.symbols.push(symbols[i]);
                self.arrivals.push(arrivals[i]);
                self.quotes.push(quote);
            }
        }
        for (i, quote) in self.quotes.iter().enumerate() {
            if let Some(position) = self.index.get_mut(&quote.option_symbol) {
                *position = i;
            }
        }
    }

    /// The chain build's selection order of quotes `a` and `b`: contract (expiration,
    /// settlement, strike, type), then quote time, then symbol; symbols that do not parse
    /// (left out of the chain) first.
    fn row_order(&self, a: usize, b: usize) -> Ordering {
        let key = |i: usize| {
            let quote = &self.quotes[i];
            self.symbols[i].map(|s| {
                (
                    quote.expiration,
                    quote.settlement,
                    s.strike_thousandths,
                    quote.option_type,
                )
            })
        };
        let (qa, qb) = (&self.quotes[a], &self.quotes[b]);
        key(a)
            .cmp(&key(b))
            .then(qa.quote_time.cmp(&qb.quote_time))
            .then(qa.option_symbol.cmp(&qb.option_symbol))
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

    /// The latest quote of every contract held, in the chain's row order.
    pub fn quotes(&self) -> &[OptionQuote] {
        &self.quotes
    }

    /// The parsed OCC symbol of each of [`quotes`](Self::quotes) (`None` when it does not
    /// parse), for [`optics_compute::chain::build_chain_with_symbols`].
    pub fn symbols(&self) -> &[Option<ContractSymbol>] {
        &self.symbols
    }

    /// The underlying price of the newest quote held (of the contract that entered the book
    /// last, among quotes of the same time).
    pub fn latest_underlying_price(&self) -> Option<f64> {
        let newest = self.newest.map(|(_, _, price)| price);
        debug_assert_eq!(
            newest.map(f64::to_bits),
            self.newest_price_by_scan().map(f64::to_bits),
            "the newest quote kept on apply is the book's newest"
        );
        newest
    }

    /// What [`latest_underlying_price`](Self::latest_underlying_price) keeps, found by scanning
    /// the book (its definition, checked against in debug builds).
    fn newest_price_by_scan(&self) -> Option<f64> {
        (0..self.quotes.len())
            .max_by_key(|&i| (self.quotes[i].quote_time, self.arrivals[i]))
            .map(|i| self.quotes[i].underlying_price)
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
        self.unserved_batches.clear();
    }

    /// Marks the current state as published and its snapshots as written to the store at `at`.
    pub fn mark_stored(&mut self, at: DateTime<Utc>) {
        self.mark_published();
        self.unstored = false;
        self.stored_at = Some(at);
    }

    /// Marks the current state as handed to an in-process reader but not written to the store.
    pub fn mark_handed_over(&mut self) {
        self.mark_published();
        self.unstored = true;
    }

    /// Whether what the reader was last handed has not been written to the store yet.
    pub fn is_unstored(&self) -> bool {
        self.unstored
    }

    /// When (market time) its last snapshot was written to the store.
    pub fn stored_at(&self) -> Option<DateTime<Utc>> {
        self.stored_at
    }

    /// Whether its newest quote is at or past its session's close: the closing snapshot, which
    /// the session close reads from the store.
    pub fn quoted_at_close(&self) -> bool {
        let (Some(day), Some(newest)) = (self.trade_date, self.last_quote_time) else {
            return false;
        };
        NyseCalendar
            .session(day)
            .is_some_and(|session| newest >= session.close.to_utc())
    }

    /// Forgets every quote, keeping the reference data: the underlying's quotes now go to
    /// another worker, so what is held here is stale and must not be published. If they come
    /// back, the book starts again from the quotes redelivered after the group's last commit.
    pub fn release_quotes(&mut self) {
        self.unstored = false;
        self.clear_contracts();
        self.trade_date = None;
        self.last_quote_time = None;
        self.dirty = false;
    }

    fn clear_contracts(&mut self) {
        self.quotes.clear();
        self.symbols.clear();
        self.arrivals.clear();
        self.index.clear();
        self.newest = None;
        self.unserved_batches.clear();
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
    fn released_quotes_are_forgotten_and_the_reference_data_kept() {
        let mut book = UnderlyingBook::default();
        book.set_annual_dividend(2.0);
        book.apply_quotes(quotes_at(15, 20));
        assert!(book.is_dirty());
        book.release_quotes();
        assert!(book.is_empty() && !book.is_dirty());
        assert_eq!((book.trade_date(), book.last_quote_time()), (None, None));
        assert_eq!(book.latest_underlying_price(), None);
        assert_eq!(book.dividend_yield(100.0), 0.02);
        // Back from a redelivery: an earlier session's quotes are not refused any more.
        assert_eq!(book.apply_quotes(quotes_at(14, 19)).accepted, 3);
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

    #[test]
    fn contracts_are_kept_in_row_order_with_their_parsed_symbols() {
        let mut quotes = quotes_at(15, 20);
        // Puts of the same strikes, and a later expiration, arriving first and in reverse.
        // The same quotes as another contract: its type and expiration, and the symbol they make.
        let relisted = |option_type, expiration: Option<NaiveDate>| {
            let mut quotes = quotes_at(15, 20);
            for q in &mut quotes {
                q.option_type = option_type;
                q.expiration = expiration.unwrap_or(q.expiration);
                q.option_symbol =
                    optics_schemas::occ_symbol("SPY", q.expiration, option_type, q.strike).unwrap();
            }
            quotes
        };
        let mut puts = relisted(optics_schemas::OptionType::Put, None);
        for q in &mut puts {
            q.underlying_price = 101.0;
        }
        let mut later = relisted(
            optics_schemas::OptionType::Call,
            NaiveDate::from_ymd_opt(2027, 1, 15),
        );
        let mut book = UnderlyingBook::default();
        later.reverse();
        book.apply_quotes(later.clone());
        book.apply_quotes(puts.clone());
        // The calls arrive last: among quotes of one time, theirs is the latest price.
        quotes[2].underlying_price = 102.0;
        book.apply_quotes(quotes.clone());
        let held: Vec<(NaiveDate, f64, optics_schemas::OptionType)> = book
            .quotes()
            .iter()
            .map(|q| (q.expiration, q.strike, q.option_type))
            .collect();
        let mut expected = held.clone();
        expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(held, expected);
        assert_eq!(held.len(), 9);
        for (quote, symbol) in book.quotes().iter().zip(book.symbols()) {
            assert_eq!(*symbol, ContractSymbol::parse(&quote.option_symbol));
            assert!(symbol.is_some());
        }
        assert_eq!(book.latest_underlying_price(), Some(102.0));
        // The index follows the moves: a newer quote replaces its own contract.
        let mut newer = puts[1].clone();
        newer.quote_time += chrono::TimeDelta::minutes(1);
        newer.bid = 2.0;
        book.apply_quotes([newer.clone()]);
        assert_eq!(book.len(), 9);
        let replaced: Vec<&OptionQuote> = book
            .quotes()
            .iter()
            .filter(|q| q.option_symbol == newer.option_symbol)
            .collect();
        assert_eq!(replaced.len(), 1);
        assert_eq!(replaced[0].bid, 2.0);
        assert_eq!(book.latest_underlying_price(), Some(101.0));
    }

    #[test]
    fn the_newest_price_kept_on_apply_is_that_of_the_newest_quote_held() {
        // Contracts of two days, quote times of a few minutes, prices all distinct: after every
        // batch (stale quotes, replacements at the same time, a session roll) the price kept
        // equals the scan over what the book holds.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |bound: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % bound
        };
        let mut book = UnderlyingBook::default();
        let mut price = 100.0;
        for _ in 0..200 {
            let day = if next(10) == 0 { 23 } else { 20 };
            let mut batch = Vec::new();
            for _ in 0..=next(4) {
                let mut quote = quotes_at(15, day)[next(3) as usize].clone();
                quote.quote_time += chrono::TimeDelta::minutes(next(4) as i64);
                price += 1.0;
                quote.underlying_price = price;
                batch.push(quote);
            }
            book.apply_quotes(batch);
            assert_eq!(book.latest_underlying_price(), book.newest_price_by_scan());
        }
    }
}
