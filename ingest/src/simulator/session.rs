//! One simulated trading session of the whole universe, as a [`QuoteSource`].
//!
//! A [`SessionSimulator`] is deterministic from `(seed, trade date, universe, interval, rate)`
//! and the open interest carried in from the previous session (if any): the same inputs give
//! byte-identical messages.
//!
//! # Instants
//! The regular session only (09:30–16:00 New York, 13:00 on early closes; none on weekends and
//! holidays): the open, then every `interval` (default one second), then the close itself — the
//! closing snapshot, which carries the session's daily bars.
//!
//! # What moves
//! - Underlyings follow the intraday paths of [`super::intraday`] from the day's open (with the
//!   earnings gap of a reaction day) to the day's close of the [`MarketTape`], so the previous
//!   close is the history's last close and the session's close is the tape's.
//! - Each underlying's surface is rebuilt at every instant from its vol level (the market's and
//!   its own variance, intraday) and the earnings ahead: an event's variance is priced until the
//!   open of its reaction session and drops out from then on (the IV crush).
//! - Quotes come from one [`ChainBook`] per underlying, built at the session's start: the listed
//!   contracts, open interest (carried from the previous session's close when given, as of the
//!   previous trading day), and the day's volume, bursts and block prints.
//! - Underlying ticks: the price (cents), a one-basis-point market for stocks and ETFs (none
//!   for cash indices), and cumulative share volume along the U-shaped profile up to the day's
//!   [`share_volume`].
//!
//! # Messages of an event
//! 1. The first event emitted (whichever instant it is) starts with the session's reference
//!    data, market-wide: the company map, earnings reports from a week before to 90 days after
//!    the trade date (actuals as published by then), dividends with an ex-date in the next 90
//!    days, the day's borrow fees, and the economic calendar of the next 30 days.
//! 2. For every underlying, in universe order: its tick (one row) and its chain snapshot, each
//!    keyed by the underlying.
//! 3. The closing event adds each underlying's daily bar for the session (high and low from
//!    the session's grid) and the after-close earnings reports of the day with their actuals.
//!
//! Snapshots of different underlyings are built in parallel (rayon) and collected in universe
//! order, so parallelism does not change the output.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_compute::time::{NyseCalendar, REGULAR_OPEN, Session, new_york_datetime, year_fraction};
use optics_schemas::{
    AssetClass, DailyBar, DataBatch, Dataset, EarningsTiming, MARKET_WIDE_KEY, Message,
    UnderlyingTick,
};
use rayon::prelude::*;

use super::error::SimulatorError;
use super::history::{round_cents, share_volume};
use super::intraday::{MarketIntraday, UnderlyingIntraday};
use super::market::{EPOCH, MarketTape, earnings_events, fnv1a};
use super::quotes::{ChainBook, OpenInterestBook, intraday_profile, session_fraction};
use super::reference;
use super::rng::{SplitMix64, derive_seed};
use super::surface::{EarningsVariance, Surface, SurfaceInputs};
use super::universe::{Underlying, Universe};
use crate::source::{ArchivePolicy, QuoteSource, SourceError, SourceEvent, SourceFuture};

/// The default quoting interval: one second of market time.
pub const DEFAULT_INTERVAL: TimeDelta = TimeDelta::seconds(1);
/// The default continuously compounded risk-free rate, decimal.
pub const DEFAULT_RATE: f64 = 0.04;
/// The liquid share of the universe under a partial update mix ([`SessionConfig::tail_every`]):
/// the fifth of the underlyings with the most listed contracts (indices, index ETFs, the
/// largest stocks), which a real feed shows changing every second.
pub const LIQUID_SHARE: f64 = 0.2;
/// The most intervals a tail underlying may go unquoted ([`SessionConfig::tail_every`]).
pub const MAX_TAIL_EVERY: u32 = 3600;

/// What session to simulate and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionConfig {
    /// The simulator seed.
    pub seed: u64,
    /// The trade date (a trading day).
    pub trade_date: NaiveDate,
    /// Market time between snapshots (1 ms to 1 h).
    pub interval: TimeDelta,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// The update mix: the liquid underlyings ([`LIQUID_SHARE`] of the universe, by listed
    /// contracts) are quoted at every instant, the others at one instant in `tail_every`,
    /// staggered so that as many change at each instant; every underlying is quoted at the
    /// first instant emitted and at the close. 1 (the default) quotes every underlying at
    /// every instant. Paths move at every instant either way: a tail underlying's quotes jump
    /// to where its price went meanwhile.
    pub tail_every: u32,
}

impl SessionConfig {
    /// The session of `trade_date` with the default interval and rate.
    pub fn new(seed: u64, trade_date: NaiveDate) -> Self {
        Self {
            seed,
            trade_date,
            interval: DEFAULT_INTERVAL,
            rate: DEFAULT_RATE,
            tail_every: 1,
        }
    }

    /// The same with another interval.
    pub fn with_interval(self, interval: TimeDelta) -> Self {
        Self { interval, ..self }
    }

    fn validate(&self) -> Result<Session, SimulatorError> {
        let millis = self.interval.num_milliseconds();
        if !(1..=3_600_000).contains(&millis) {
            return Err(SimulatorError::InvalidInterval { millis });
        }
        if !(self.rate.is_finite() && self.rate.abs() < 1.0) {
            return Err(SimulatorError::InvalidRate { rate: self.rate });
        }
        if !(1..=MAX_TAIL_EVERY).contains(&self.tail_every) {
            return Err(SimulatorError::InvalidTailEvery {
                tail_every: self.tail_every,
            });
        }
        if self.trade_date <= EPOCH {
            return Err(SimulatorError::BeforeEpoch {
                date: self.trade_date,
                epoch: EPOCH,
            });
        }
        NyseCalendar
            .session(self.trade_date)
            .ok_or(SimulatorError::NotATradingDay {
                date: self.trade_date,
            })
    }
}

/// One underlying's state through the session.
#[derive(Debug)]
struct UnderlyingState {
    index: usize,
    intraday: UnderlyingIntraday,
    book: ChainBook,
    previous_close: f64,
    open: f64,
    close: f64,
    high: f64,
    low: f64,
    spot: f64,
    day_share_volume: u64,
    /// Reaction opens of the earnings ahead and their one-sigma moves.
    earnings: Vec<(DateTime<Utc>, f64)>,
    tick_seed: u64,
    /// Under a partial update mix, the phase of a tail underlying's instants (`None`: quoted
    /// at every instant).
    tail_phase: Option<u32>,
}

/// One simulated session: see the module documentation.
#[derive(Debug)]
pub struct SessionSimulator {
    universe: Arc<Universe>,
    tape: Arc<MarketTape>,
    config: SessionConfig,
    session: Session,
    instant_count: usize,
    /// The grid index the states stand at (`None` before the open has been computed).
    position: Option<usize>,
    /// The next grid index that may be emitted.
    next: usize,
    market: MarketIntraday,
    states: Vec<UnderlyingState>,
    /// Whether an instant has been emitted: the first carries the reference data and quotes
    /// every underlying.
    reference_sent: bool,
}

/// Under a partial update mix (`tail_every` > 1), gives each underlying outside the liquid
/// share ([`LIQUID_SHARE`], by listed contracts, ties in universe order) a phase in
/// `0..tail_every`, in turn, so the tail's quotes spread evenly over the instants.
fn assign_tail_phases(states: &mut [UnderlyingState], tail_every: u32) {
    if tail_every <= 1 {
        return;
    }
    let mut by_size: Vec<usize> = (0..states.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(states[i].book.contracts().len()));
    let liquid = (states.len() as f64 * LIQUID_SHARE).ceil() as usize;
    for (rank, &i) in by_size.iter().enumerate().skip(liquid) {
        states[i].tail_phase = Some((rank % tail_every as usize) as u32);
    }
}

impl SessionSimulator {
    /// The session of `config` for `universe`, simulating the market tape first (a second or
    /// so for the real universe). `carried` is the previous session's closing open interest
    /// ([`closing_open_interest`](Self::closing_open_interest)); `None` seeds it.
    ///
    /// # Errors
    /// See [`with_tape`](Self::with_tape).
    pub fn new(
        universe: Arc<Universe>,
        config: SessionConfig,
        carried: Option<&OpenInterestBook>,
    ) -> Result<Self, SimulatorError> {
        config.validate()?;
        let tape = Arc::new(MarketTape::simulate(
            &universe,
            config.seed,
            config.trade_date,
        ));
        Self::with_tape(universe, tape, config, carried)
    }

    /// The session of `config` on an already simulated `tape` of the same universe and seed
    /// (the one the history was generated from, so the session continues it).
    ///
    /// # Errors
    /// [`SimulatorError::NotATradingDay`], [`SimulatorError::BeforeEpoch`],
    /// [`SimulatorError::InvalidInterval`], [`SimulatorError::InvalidRate`],
    /// [`SimulatorError::EmptyUniverse`], [`SimulatorError::DateNotInTape`], and
    /// [`SimulatorError::StaleOpenInterest`] when `carried` is not as of the previous trading
    /// day.
    pub fn with_tape(
        universe: Arc<Universe>,
        tape: Arc<MarketTape>,
        config: SessionConfig,
        carried: Option<&OpenInterestBook>,
    ) -> Result<Self, SimulatorError> {
        let session = config.validate()?;
        if universe.is_empty() {
            return Err(SimulatorError::EmptyUniverse);
        }
        let calendar = NyseCalendar;
        let trade_date = config.trade_date;
        let day = tape
            .day_index(trade_date)
            .filter(|&d| d > 0 && tape.paths.len() == universe.len())
            .ok_or(SimulatorError::DateNotInTape { date: trade_date })?;
        let expected = calendar.previous_trading_day(trade_date);
        if let Some(book) = carried
            && book.as_of != Some(expected)
        {
            return Err(SimulatorError::StaleOpenInterest {
                trade_date,
                as_of: book.as_of,
                expected,
            });
        }
        let duration_micros = session.duration().num_microseconds().unwrap_or(0).max(0);
        let interval_micros = config.interval.num_microseconds().unwrap_or(1).max(1);
        // The open, every interval strictly before the close, and the close.
        let instant_count =
            usize::try_from((duration_micros + interval_micros - 1) / interval_micros + 1)
                .unwrap_or(1);
        let seed = config.seed;
        let market = MarketIntraday::new(&tape.factor, day, seed);
        let horizon = trade_date + TimeDelta::days(3 * 366 + 31);
        let mut states: Vec<UnderlyingState> = universe
            .as_slice()
            .par_iter()
            .zip(&tape.paths)
            .enumerate()
            .map(|(index, (u, path))| {
                let previous_close = round_cents(path.closes[day - 1]).max(0.01);
                let book = ChainBook::new(
                    u,
                    trade_date,
                    previous_close,
                    seed,
                    carried.and_then(|b| b.underlying(&u.symbol)),
                    &calendar,
                );
                let move_sigma = EarningsVariance::typical(u, 0.0).move_sigma;
                let earnings =
                    earnings_events(u, seed, trade_date - TimeDelta::days(7), horizon, &calendar)
                        .into_iter()
                        .map(|e| {
                            (
                                new_york_datetime(e.reaction_date, REGULAR_OPEN).to_utc(),
                                move_sigma,
                            )
                        })
                        .collect();
                let open = round_cents(path.opens[day]).max(0.01);
                UnderlyingState {
                    index,
                    intraday: UnderlyingIntraday::new(u, path, day, seed),
                    book,
                    previous_close,
                    open,
                    close: round_cents(path.closes[day]).max(0.01),
                    high: open,
                    low: open,
                    spot: open,
                    day_share_volume: share_volume(u, path, day, seed),
                    earnings,
                    tick_seed: derive_seed(
                        derive_seed(seed, fnv1a(u.symbol.as_bytes())),
                        0x5449_434B, // "TICK"
                    ),
                    tail_phase: None,
                }
            })
            .collect();
        assign_tail_phases(&mut states, config.tail_every);
        Ok(Self {
            universe,
            tape,
            config,
            session,
            instant_count,
            position: None,
            next: 0,
            market,
            states,
            reference_sent: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Contracts listed this session, and the bytes of the session's state: every
    /// underlying's listed contracts and their static quote columns (not the market tape:
    /// see [`tape`](Self::tape)). Fixed for the session: nothing in it grows with the instants
    /// emitted.
    pub fn held(&self) -> (usize, usize) {
        use optics_schemas::memory::HeapBytes;
        let contracts = self.states.iter().map(|s| s.book.contracts().len()).sum();
        let bytes = self.states.capacity() * std::mem::size_of::<UnderlyingState>()
            + self
                .states
                .iter()
                .map(|s| {
                    s.book.heap_bytes()
                        + s.earnings.capacity() * std::mem::size_of::<(DateTime<Utc>, f64)>()
                })
                .sum::<usize>();
        (contracts, bytes)
    }

    /// The trade date.
    pub fn trade_date(&self) -> NaiveDate {
        self.config.trade_date
    }

    /// The regular session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The market tape the session runs on.
    pub fn tape(&self) -> &Arc<MarketTape> {
        &self.tape
    }

    /// How many instants the session has (the open, each interval, the close).
    pub fn instant_count(&self) -> usize {
        self.instant_count
    }

    /// Instant `k` of the session (0 = the open; the last = the close).
    pub fn instant(&self, k: usize) -> Option<DateTime<Utc>> {
        if k >= self.instant_count {
            return None;
        }
        let close = self.session.close.to_utc();
        if k + 1 == self.instant_count {
            return Some(close);
        }
        let offset = self.config.interval.checked_mul(i32::try_from(k).ok()?)?;
        Some((self.session.open.to_utc() + offset).min(close))
    }

    /// The next instant [`step`](Self::step) would emit, `None` after the close.
    pub fn next_instant(&self) -> Option<DateTime<Utc>> {
        self.instant(self.next)
    }

    /// True once the close has been emitted (or skipped past).
    pub fn is_finished(&self) -> bool {
        self.next >= self.instant_count
    }

    /// The previous session's close of `symbol` (the history's last close), dollars.
    pub fn previous_close(&self, symbol: &str) -> Option<f64> {
        let i = self.universe.index_of(symbol)?;
        self.states.get(i).map(|s| s.previous_close)
    }

    /// The chain books, in universe order.
    pub fn books(&self) -> impl Iterator<Item = &ChainBook> {
        self.states.iter().map(|s| &s.book)
    }

    /// The open interest after this session's close, as of the trade date: what the next
    /// session carries. Available from the start (the day's activity is fixed when the session
    /// is built).
    pub fn closing_open_interest(&self) -> OpenInterestBook {
        OpenInterestBook {
            as_of: Some(self.config.trade_date),
            by_underlying: self
                .states
                .iter()
                .map(|s| {
                    (
                        self.universe.as_slice()[s.index].symbol.clone(),
                        s.book.closing_open_interest(),
                    )
                })
                .collect(),
        }
    }

    /// Emits the next instant; `None` after the close.
    pub fn step(&mut self) -> Option<Result<SourceEvent, SimulatorError>> {
        if self.is_finished() {
            return None;
        }
        let k = self.next;
        Some(self.emit(k))
    }

    /// Emits the latest instant at or before `at` that has not been emitted yet, moving the
    /// paths through the instants skipped (a live source that fell behind does not replay
    /// them). `None` when that instant is still to come, or after the close.
    pub fn advance_to(&mut self, at: DateTime<Utc>) -> Option<Result<SourceEvent, SimulatorError>> {
        let next_instant = self.next_instant()?;
        if at < next_instant {
            return None;
        }
        let open = self.session.open.to_utc();
        let interval_micros = self.config.interval.num_microseconds().unwrap_or(1).max(1);
        let elapsed = at
            .signed_duration_since(open)
            .num_microseconds()
            .unwrap_or(i64::MAX);
        let k = usize::try_from(elapsed / interval_micros)
            .unwrap_or(usize::MAX)
            .min(self.instant_count - 1)
            .max(self.next);
        // The last grid point is the close, which may be less than an interval after the one
        // before it.
        let k = if self
            .instant(self.instant_count - 1)
            .is_some_and(|close| at >= close)
        {
            self.instant_count - 1
        } else {
            k.min(self.instant_count.saturating_sub(2)).max(self.next)
        };
        Some(self.emit(k))
    }

    /// Moves the paths to grid index `k` (≥ the current position).
    fn move_to(&mut self, k: usize) {
        let start = self.position.map_or(0, |p| p + 1);
        for j in start..=k {
            let Some(instant) = self.instant(j) else {
                break;
            };
            let fraction = session_fraction(&self.session, instant);
            self.market.advance(fraction);
            for state in &mut self.states {
                state.intraday.advance(&self.market, fraction);
                let price = round_cents(state.intraday.price()).max(0.01);
                state.spot = price;
                state.high = state.high.max(price);
                state.low = state.low.min(price);
            }
            self.position = Some(j);
        }
    }

    fn emit(&mut self, k: usize) -> Result<SourceEvent, SimulatorError> {
        let first = !self.reference_sent;
        self.move_to(k);
        self.next = k + 1;
        let instant = self
            .instant(k)
            .unwrap_or_else(|| self.session.close.to_utc());
        let closing = k + 1 == self.instant_count;
        let mut messages = Vec::new();
        if first {
            messages.extend(self.reference_messages(instant)?);
            self.reference_sent = true;
        }
        let fraction = session_fraction(&self.session, instant);
        let profile = intraday_profile(fraction);
        let (universe, market, rate) = (&self.universe, &self.market, self.config.rate);
        let everyone = first || closing;
        let tail_every = self.config.tail_every as usize;
        let snapshots: Vec<Result<(Message, Message), SimulatorError>> = self
            .states
            .par_iter()
            .filter(|state| {
                everyone
                    || state
                        .tail_phase
                        .is_none_or(|phase| (k + phase as usize).is_multiple_of(tail_every))
            })
            .map(|state| {
                let u = &universe.as_slice()[state.index];
                state.snapshot(u, instant, fraction, profile, market, rate)
            })
            .collect();
        for snapshot in snapshots {
            let (tick, quotes) = snapshot?;
            messages.push(tick);
            messages.push(quotes);
        }
        if closing {
            messages.extend(self.closing_messages(instant)?);
        }
        Ok(SourceEvent {
            at: instant,
            trade_date: self.config.trade_date,
            session_close: closing,
            messages,
        })
    }

    fn reference_messages(&self, instant: DateTime<Utc>) -> Result<Vec<Message>, SimulatorError> {
        let calendar = NyseCalendar;
        let (seed, date) = (self.config.seed, self.config.trade_date);
        let universe = self.universe.as_slice();
        let per: Vec<_> = universe
            .par_iter()
            .zip(&self.tape.paths)
            .map(|(u, path)| {
                (
                    reference::earnings_rows(
                        u,
                        path,
                        seed,
                        date - TimeDelta::days(7),
                        date + TimeDelta::days(90),
                        instant,
                        &calendar,
                    ),
                    reference::dividend_rows(u, seed, date, date + TimeDelta::days(90), &calendar),
                    reference::borrow_rows(u, seed, date, date, &calendar),
                )
            })
            .collect();
        let (mut earnings, mut dividends, mut borrow) = (Vec::new(), Vec::new(), Vec::new());
        for (e, d, b) in per {
            earnings.extend(e);
            dividends.extend(d);
            borrow.extend(b);
        }
        let economic = reference::economic_calendar(
            seed,
            date,
            date + TimeDelta::days(30),
            instant,
            &calendar,
        );
        let mut out = vec![Message::Data(DataBatch::from_rows(
            MARKET_WIDE_KEY,
            &reference::companies(&self.universe),
        )?)];
        for batch in [
            (!earnings.is_empty()).then(|| DataBatch::from_rows(MARKET_WIDE_KEY, &earnings)),
            (!dividends.is_empty()).then(|| DataBatch::from_rows(MARKET_WIDE_KEY, &dividends)),
            (!borrow.is_empty()).then(|| DataBatch::from_rows(MARKET_WIDE_KEY, &borrow)),
            (!economic.is_empty()).then(|| DataBatch::from_rows(MARKET_WIDE_KEY, &economic)),
        ]
        .into_iter()
        .flatten()
        {
            out.push(Message::Data(batch?));
        }
        Ok(out)
    }

    fn closing_messages(&self, instant: DateTime<Utc>) -> Result<Vec<Message>, SimulatorError> {
        let calendar = NyseCalendar;
        let date = self.config.trade_date;
        let mut out = Vec::with_capacity(self.states.len() + 1);
        let mut reports = Vec::new();
        for (state, path) in self.states.iter().zip(&self.tape.paths) {
            let u = &self.universe.as_slice()[state.index];
            let bar = DailyBar {
                symbol: u.symbol.clone(),
                date,
                open: state.open,
                high: state.high.max(state.open).max(state.close),
                low: state.low.min(state.open).min(state.close),
                close: state.close,
                volume: state.day_share_volume,
                adj_close: state.close,
            };
            out.push(Message::Data(DataBatch::from_rows(
                u.symbol.as_str(),
                &[bar],
            )?));
            if u.earnings
                .is_some_and(|c| c.timing == EarningsTiming::AfterClose)
            {
                reports.extend(
                    reference::earnings_rows(
                        u,
                        path,
                        self.config.seed,
                        date,
                        date,
                        instant + TimeDelta::minutes(10),
                        &calendar,
                    )
                    .into_iter()
                    .filter(|e| e.timing == EarningsTiming::AfterClose),
                );
            }
        }
        if !reports.is_empty() {
            out.push(Message::Data(DataBatch::from_rows(
                MARKET_WIDE_KEY,
                &reports,
            )?));
        }
        Ok(out)
    }
}

impl UnderlyingState {
    fn snapshot(
        &self,
        u: &Underlying,
        instant: DateTime<Utc>,
        fraction: f64,
        profile: f64,
        market: &MarketIntraday,
        rate: f64,
    ) -> Result<(Message, Message), SimulatorError> {
        let spot = self.spot;
        let events: Vec<EarningsVariance> = self
            .earnings
            .iter()
            .filter(|(reaction, _)| *reaction > instant)
            .map(|&(reaction, move_sigma)| EarningsVariance {
                years: year_fraction(instant, reaction),
                move_sigma,
            })
            .collect();
        let surface = Surface::for_underlying(
            u,
            &SurfaceInputs {
                vol_level: self.intraday.vol_level(market),
                events,
            },
        );
        let batch = self.book.quote_batch(instant, spot, &surface, rate)?;
        let quotes = DataBatch::try_new(Dataset::OptionQuotes, u.symbol.as_str(), &batch)?;
        let tick = self.tick(u, instant, fraction, profile);
        let tick = DataBatch::from_rows(u.symbol.as_str(), &[tick])?;
        Ok((Message::Data(tick), Message::Data(quotes)))
    }

    fn tick(
        &self,
        u: &Underlying,
        instant: DateTime<Utc>,
        fraction: f64,
        profile: f64,
    ) -> UnderlyingTick {
        let spot = self.spot;
        if u.asset_class == AssetClass::Index {
            return UnderlyingTick {
                symbol: u.symbol.clone(),
                tick_time: instant,
                bid: None,
                ask: None,
                last: spot,
                last_size: 0,
                volume: 0,
            };
        }
        let half = (spot * 0.00005).max(0.005);
        let bid = (((spot - half) * 100.0).floor() / 100.0).clamp(0.0, spot);
        let ask = (((spot + half) * 100.0).ceil() / 100.0).max(spot);
        let mut rng = SplitMix64::new(derive_seed(
            self.tick_seed,
            instant.timestamp_micros() as u64,
        ));
        let last_size = (rng.log_uniform(1.0, 50.0) * 100.0).round() as u64;
        let volume = if fraction > 0.0 {
            (self.day_share_volume as f64 * profile).floor() as u64
        } else {
            0
        };
        UnderlyingTick {
            symbol: u.symbol.clone(),
            tick_time: instant,
            bid: Some(bid),
            ask: Some(ask),
            last: spot,
            last_size,
            volume,
        }
    }
}

impl QuoteSource for SessionSimulator {
    fn name(&self) -> &str {
        "simulator"
    }

    /// Every event re-quotes the whole universe and the seed regenerates any instant: the
    /// archive keeps a sample.
    fn archive_policy(&self) -> ArchivePolicy {
        ArchivePolicy::Sampled
    }

    fn next_event(&mut self) -> SourceFuture<'_, Result<Option<SourceEvent>, SourceError>> {
        let next = self.step().transpose().map_err(SourceError::from);
        Box::pin(std::future::ready(next))
    }
}
