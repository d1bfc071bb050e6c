//! The history generator: years of daily data for the whole universe, in seconds, so that
//! percentiles, cones, correlations, earnings statistics and chain-at-time have data from the
//! first minute of `optics run`.
//!
//! Everything comes from the [`MarketTape`] (the same daily paths the live session continues:
//! the history's last close is the next session's previous close) and the reference
//! generators of [`super::reference`]:
//!
//! | output | rows | notes |
//! | --- | --- | --- |
//! | [`MarketHistory::bars`] | [`DailyBar`] per underlying × session | see below |
//! | [`MarketHistory::iv`] | [`DailyIv`] per underlying × session | a row type of this module; seeding stores it as the `vol_daily` rows of the history's sessions (IV columns, percentage points) |
//! | [`MarketHistory::earnings`] | `EarningsEvent` | reports in the window and scheduled ones up to 120 days after it |
//! | [`MarketHistory::reactions`] | [`EarningsReaction`] | a row type of this module: the actual moves, derivable from stored rows (see the type) |
//! | [`MarketHistory::dividends`] | `Dividend` | ex-dates in the window and declared ones up to 120 days after it |
//! | [`MarketHistory::borrow`] | `BorrowRate` per stock/ETF × session | |
//! | [`MarketHistory::economic`] | `EconomicEvent` | the window and 60 days after it |
//! | [`MarketHistory::companies`] | `Company` | the universe |
//!
//! # Daily bars
//! Open and close are the tape's (rounded to the cent). High and low are drawn from the
//! distribution of the maximum and minimum of a Brownian bridge from ln(open) to ln(close)
//! with the session's share of the day's variance, `v = σ²Δ(1 − f)`:
//! `ln H = (a + b + √((b − a)² − 2v·ln U))/2` (and the mirror image for the low), so
//! `high ≥ max(open, close)` and `low ≤ min(open, close)` always. (A live session's own bar
//! takes its high and low from its intraday grid instead.) Volume is [`share_volume`].
//! `adj_close` is the close adjusted backwards for the dividends in the window: each ex-date
//! multiplies every earlier close by `1 − amount / previous close` (splits are not simulated).
//!
//! # Daily IV
//! At each session's close, the underlying's surface with its vol level `√(x·s)` and the
//! earnings ahead: the at-the-money-forward IV at the constant maturities the `vol_daily`
//! rows carry (10, 20, 30, 60, 90, 180 and 365 calendar days, ACT/365; decimal), the 30-day
//! IV without the earnings event variance, and the surface's parameters.

use chrono::{DateTime, Months, NaiveDate, TimeDelta, Utc};
use optics_compute::time::{
    NyseCalendar, REGULAR_CLOSE, REGULAR_OPEN, new_york_datetime, year_fraction,
};
use optics_schemas::{
    BorrowRate, Company, DailyBar, DataBatch, Dividend, EarningsEvent, EarningsTiming,
    EconomicEvent, MARKET_WIDE_KEY, Message,
};
use rayon::prelude::*;

use super::error::SimulatorError;
use super::listing::StrikeStyle;
use super::market::{
    DT, EPOCH, MarketTape, OVERNIGHT_VARIANCE_SHARE, PricePath, earnings_events, fnv1a, normal,
};
use super::reference;
use super::rng::{SplitMix64, derive_seed};
use super::surface::{EarningsVariance, Surface, SurfaceInputs};
use super::universe::{Underlying, Universe};
use optics_schemas::AssetClass;

/// The default length of the history, years.
pub const DEFAULT_HISTORY_YEARS: u32 = 3;
/// How far past the window scheduled reports and declared dividends are included, days.
pub const SCHEDULED_AHEAD_DAYS: i64 = 120;
/// How far past the window the economic calendar goes, days.
pub const CALENDAR_AHEAD_DAYS: i64 = 60;

/// What history to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryConfig {
    /// The simulator seed.
    pub seed: u64,
    /// The last session of the history.
    pub end: NaiveDate,
    /// How many years back from `end` (≥ 1).
    pub years: u32,
}

impl HistoryConfig {
    /// The history a live session of `trade_date` continues: through the previous trading day.
    pub fn for_session(seed: u64, trade_date: NaiveDate, years: u32) -> Self {
        Self {
            seed,
            end: NyseCalendar.previous_trading_day(trade_date),
            years,
        }
    }

    /// The first calendar day of the window: `years` before `end`, plus one day.
    pub fn start(&self) -> Result<NaiveDate, SimulatorError> {
        if self.years == 0 {
            return Err(SimulatorError::InvalidHistory {
                reason: "the history must cover at least one year".to_owned(),
            });
        }
        let start = self
            .end
            .checked_sub_months(Months::new(12 * self.years))
            .and_then(|d| d.succ_opt())
            .ok_or_else(|| SimulatorError::InvalidHistory {
                reason: format!("{} years before {} is not a date", self.years, self.end),
            })?;
        if start < EPOCH {
            return Err(SimulatorError::BeforeEpoch {
                date: start,
                epoch: EPOCH,
            });
        }
        Ok(start)
    }
}

/// An underlying's implied-vol state at one session's close. IVs are decimals (0.2 = 20 %).
#[derive(Debug, Clone, PartialEq)]
pub struct DailyIv {
    /// Underlying symbol.
    pub symbol: String,
    /// The session.
    pub date: NaiveDate,
    /// 10-day constant-maturity at-the-money-forward IV, earnings included.
    pub iv10: f64,
    /// 20-day constant-maturity ATM IV.
    pub iv20: f64,
    /// 30-day constant-maturity at-the-money-forward IV, earnings included.
    pub iv30: f64,
    /// The same without the earnings event variance.
    pub iv30_ex_earnings: f64,
    /// 60-day constant-maturity ATM IV.
    pub iv60: f64,
    /// 90-day constant-maturity ATM IV.
    pub iv90: f64,
    /// 180-day constant-maturity ATM IV.
    pub iv180: f64,
    /// 365-day constant-maturity ATM IV.
    pub iv365: f64,
    /// The surface's vol level `√(x·s)` (1 in a normal market).
    pub vol_level: f64,
    /// The surface's short-end ATM vol σ₀.
    pub sigma_0: f64,
    /// The surface's long-run ATM vol σ∞.
    pub sigma_inf: f64,
    /// The surface's skew correlation ρ.
    pub skew_rho: f64,
    /// The surface's curvature η.
    pub curvature_eta: f64,
    /// The 30-day smile's slope at the money, dσ/dk at k = ln(K/F) = 0 (IV as a decimal).
    pub smile_slope_30d: f64,
    /// The 30-day smile's curvature at the money, d²σ/dk² at k = 0 (IV as a decimal).
    pub smile_curvature_30d: f64,
    /// The one-sigma move of the next earnings event priced in, decimal (`None` without one
    /// within the listed expirations' horizon).
    pub next_earnings_move_sigma: Option<f64>,
}

/// The actual market reaction to one earnings report.
///
/// No dataset stores these rows: every field follows from rows the store holds, so a second
/// copy could only disagree with them. For a report in the `earnings` rows:
/// - `reaction_date`: the first session whose close reflects the report — the report date for
///   a pre-open report, the next session for an after-close one
///   (`optics_compute::vol::close::reaction_sessions` over the symbol's `daily_bars` dates);
/// - `previous_close`: the `daily_bars` close of the session before it; `reaction_open` and
///   `reaction_close`: that session's bar (all as traded, to the cent);
/// - `gap_move_pct`, `close_move_pct`: from those three prices, as documented on the fields
///   (`optics_compute::vol::gap_move_pct`);
/// - `iv30_before`, `iv30_after`: `vol_daily.iv30d_pct / 100` of the session before and of the
///   reaction session — the history's [`DailyIv::iv30`] for the sessions seeded from the
///   history; a session seeded or run with chains carries its closing chain's 30-day IV
///   instead (the same surface, read through quotes).
///
/// `ingest/tests/simulator_earnings_reaction.rs` derives every reaction this way and compares.
#[derive(Debug, Clone, PartialEq)]
pub struct EarningsReaction {
    /// Underlying symbol.
    pub symbol: String,
    /// Report date.
    pub report_date: NaiveDate,
    /// Before the open or after the close.
    pub timing: EarningsTiming,
    /// The first session trading on the news.
    pub reaction_date: NaiveDate,
    /// Close of the session before the reaction, dollars.
    pub previous_close: f64,
    /// Open of the reaction session, dollars.
    pub reaction_open: f64,
    /// Close of the reaction session, dollars.
    pub reaction_close: f64,
    /// `(reaction_open / previous_close − 1) · 100`, percent.
    pub gap_move_pct: f64,
    /// `(reaction_close / previous_close − 1) · 100`, percent.
    pub close_move_pct: f64,
    /// 30-day ATM IV at the close before the reaction, decimal.
    pub iv30_before: f64,
    /// 30-day ATM IV at the reaction session's close, decimal.
    pub iv30_after: f64,
}

/// Everything the history generator produces (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct MarketHistory {
    /// The seed.
    pub seed: u64,
    /// First calendar day of the window.
    pub start: NaiveDate,
    /// Last session of the window.
    pub end: NaiveDate,
    /// The universe's company map.
    pub companies: Vec<Company>,
    /// Daily bars, by underlying (universe order) then date.
    pub bars: Vec<DailyBar>,
    /// Daily IV, by underlying then date.
    pub iv: Vec<DailyIv>,
    /// Earnings reports, by underlying then date.
    pub earnings: Vec<EarningsEvent>,
    /// The actual moves of the reports whose reaction fell in the window.
    pub reactions: Vec<EarningsReaction>,
    /// Dividends, by underlying then ex-date.
    pub dividends: Vec<Dividend>,
    /// Borrow fees, by underlying then date.
    pub borrow: Vec<BorrowRate>,
    /// The economic calendar, by date.
    pub economic: Vec<EconomicEvent>,
}

impl MarketHistory {
    /// The bars of `symbol`, by date.
    pub fn bars_of<'a>(&'a self, symbol: &'a str) -> impl Iterator<Item = &'a DailyBar> + 'a {
        self.bars.iter().filter(move |b| b.symbol == symbol)
    }

    /// The last close of `symbol` in the window.
    pub fn last_close(&self, symbol: &str) -> Option<f64> {
        self.bars_of(symbol).last().map(|b| b.close)
    }

    /// The history as bus messages: daily bars, earnings, dividends and borrow fees keyed by
    /// underlying (one message per underlying and dataset), then the company map and the
    /// economic calendar market-wide. [`DailyIv`] (stored as `vol_daily` rows by seeding) and
    /// [`EarningsReaction`] (derived from stored rows) have no bus dataset and are not
    /// included.
    ///
    /// # Errors
    /// [`SimulatorError::Schema`] if a batch fails validation (a simulator bug).
    pub fn messages(&self) -> Result<Vec<Message>, SimulatorError> {
        let mut out = Vec::new();
        out.push(Message::Data(DataBatch::from_rows(
            MARKET_WIDE_KEY,
            &self.companies,
        )?));
        for company in &self.companies {
            let symbol = company.symbol.as_str();
            push_keyed(&mut out, symbol, &self.bars, |b| b.symbol == symbol)?;
            push_keyed(&mut out, symbol, &self.earnings, |e| e.symbol == symbol)?;
            push_keyed(&mut out, symbol, &self.dividends, |d| d.symbol == symbol)?;
            push_keyed(&mut out, symbol, &self.borrow, |b| b.symbol == symbol)?;
        }
        if !self.economic.is_empty() {
            out.push(Message::Data(DataBatch::from_rows(
                MARKET_WIDE_KEY,
                &self.economic,
            )?));
        }
        Ok(out)
    }
}

fn push_keyed<R: optics_schemas::Record + Clone>(
    out: &mut Vec<Message>,
    key: &str,
    rows: &[R],
    keep: impl Fn(&R) -> bool,
) -> Result<(), SimulatorError> {
    let selected: Vec<R> = rows.iter().filter(|r| keep(r)).cloned().collect();
    if !selected.is_empty() {
        out.push(Message::Data(DataBatch::from_rows(key, &selected)?));
    }
    Ok(())
}

/// Generates the history of `universe` (simulating the tape first).
///
/// # Errors
/// [`SimulatorError::EmptyUniverse`], [`SimulatorError::InvalidHistory`] or
/// [`SimulatorError::BeforeEpoch`] for a window that starts before the simulator's epoch.
pub fn generate_history(
    universe: &Universe,
    config: &HistoryConfig,
) -> Result<MarketHistory, SimulatorError> {
    config.start()?;
    let tape = MarketTape::simulate(universe, config.seed, config.end);
    history_from_tape(universe, &tape, config)
}

/// The history of `universe` from an already simulated `tape` (which must cover `config.end`
/// and have been simulated with `config.seed` for the same universe).
///
/// # Errors
/// As [`generate_history`], and [`SimulatorError::DateNotInTape`] when the tape is too short.
pub fn history_from_tape(
    universe: &Universe,
    tape: &MarketTape,
    config: &HistoryConfig,
) -> Result<MarketHistory, SimulatorError> {
    if universe.is_empty() {
        return Err(SimulatorError::EmptyUniverse);
    }
    let start = config.start()?;
    let end = config.end;
    if tape.last_date().is_none_or(|last| last < end) || tape.paths.len() != universe.len() {
        return Err(SimulatorError::DateNotInTape { date: end });
    }
    let calendar = NyseCalendar;
    let as_of = calendar
        .session(end)
        .map_or_else(|| close_instant(end), |s| s.close.to_utc())
        + TimeDelta::hours(7);
    let first = tape.factor.dates.partition_point(|&d| d < start);
    let last = tape.factor.dates.partition_point(|&d| d <= end);
    let per_underlying: Vec<UnderlyingHistory> = universe
        .as_slice()
        .par_iter()
        .zip(&tape.paths)
        .map(|(u, path)| underlying_history(u, path, tape, config.seed, first..last, as_of))
        .collect();
    let mut history = MarketHistory {
        seed: config.seed,
        start,
        end,
        companies: reference::companies(universe),
        bars: Vec::new(),
        iv: Vec::new(),
        earnings: Vec::new(),
        reactions: Vec::new(),
        dividends: Vec::new(),
        borrow: Vec::new(),
        economic: reference::economic_calendar(
            config.seed,
            start,
            end + TimeDelta::days(CALENDAR_AHEAD_DAYS),
            as_of,
            &calendar,
        ),
    };
    for part in per_underlying {
        history.bars.extend(part.bars);
        history.iv.extend(part.iv);
        history.earnings.extend(part.earnings);
        history.reactions.extend(part.reactions);
        history.dividends.extend(part.dividends);
        history.borrow.extend(part.borrow);
    }
    Ok(history)
}

#[derive(Default)]
struct UnderlyingHistory {
    bars: Vec<DailyBar>,
    iv: Vec<DailyIv>,
    earnings: Vec<EarningsEvent>,
    reactions: Vec<EarningsReaction>,
    dividends: Vec<Dividend>,
    borrow: Vec<BorrowRate>,
}

fn close_instant(date: NaiveDate) -> DateTime<Utc> {
    NyseCalendar.session(date).map_or_else(
        || new_york_datetime(date, REGULAR_CLOSE).to_utc(),
        |s| s.close.to_utc(),
    )
}

fn underlying_history(
    u: &Underlying,
    path: &PricePath,
    tape: &MarketTape,
    seed: u64,
    days: std::ops::Range<usize>,
    as_of: DateTime<Utc>,
) -> UnderlyingHistory {
    let calendar = NyseCalendar;
    let (Some(&start), Some(&end)) = (
        path.dates.get(days.start),
        path.dates.get(days.end.saturating_sub(1)),
    ) else {
        return UnderlyingHistory::default();
    };
    let ahead = end + TimeDelta::days(SCHEDULED_AHEAD_DAYS);
    let dividends = reference::dividend_rows(u, seed, start, ahead, &calendar);
    let past_dividends: Vec<&Dividend> = dividends.iter().filter(|d| d.ex_date <= end).collect();
    let mut bars: Vec<DailyBar> = days.clone().map(|i| daily_bar(u, path, i, seed)).collect();
    adjust_for_dividends(&mut bars, &past_dividends);

    // Events ahead of each day, for the surfaces (three years covers every listed expiration).
    let events = earnings_events(u, seed, start, end + TimeDelta::days(3 * 366), &calendar);
    let iv: Vec<DailyIv> = days
        .clone()
        .map(|i| daily_iv(u, path, tape, i, &events))
        .collect();
    let iv_on = |date: NaiveDate| {
        iv.binary_search_by_key(&date, |row| row.date)
            .ok()
            .map(|k| iv[k].iv30)
    };
    let reactions = path
        .earnings
        .iter()
        .filter(|e| e.reaction_date >= start && e.reaction_date <= end)
        .filter_map(|e| {
            let i = path.index_of(e.reaction_date)?;
            let previous_close = round_cents(*path.closes.get(i.checked_sub(1)?)?);
            let reaction_open = round_cents(path.opens[i]);
            let reaction_close = round_cents(path.closes[i]);
            let before = path.dates[i - 1];
            Some(EarningsReaction {
                symbol: u.symbol.clone(),
                report_date: e.report_date,
                timing: e.timing,
                reaction_date: e.reaction_date,
                previous_close,
                reaction_open,
                reaction_close,
                gap_move_pct: (reaction_open / previous_close - 1.0) * 100.0,
                close_move_pct: (reaction_close / previous_close - 1.0) * 100.0,
                iv30_before: iv_on(before)?,
                iv30_after: iv_on(e.reaction_date)?,
            })
        })
        .collect();
    UnderlyingHistory {
        bars,
        iv,
        earnings: reference::earnings_rows(u, path, seed, start, ahead, as_of, &calendar),
        reactions,
        dividends,
        borrow: reference::borrow_rows(u, seed, start, end, &calendar),
    }
}

/// Rounds to the cent.
pub fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// Shares traded by `underlying` on day `day` of its path (0 for cash indices): an average
/// daily volume (stocks: 0.4 % of the market cap a day; index ETFs: a table; other ETFs:
/// $1.5 bn a day), × a log-normal day factor (sd 0.35), × `1 + 0.4·min(|r|/σ_daily, 6)` for
/// the day's absolute return `r`, × 2.5 on earnings reaction days; in round lots of 100.
pub fn share_volume(underlying: &Underlying, path: &PricePath, day: usize, seed: u64) -> u64 {
    let u = underlying;
    let average = match u.asset_class {
        AssetClass::Index => return 0,
        AssetClass::Stock => 0.004 * u.market_cap_usd_bn.unwrap_or(10.0) * 1e9 / u.start_price,
        AssetClass::Etf => match u.symbol.as_str() {
            "SPY" => 70e6,
            "QQQ" => 45e6,
            "IWM" => 30e6,
            "DIA" => 3.5e6,
            _ => 1.5e9 / u.start_price,
        },
    };
    let date = path.dates.get(day).copied().unwrap_or(NaiveDate::MIN);
    let mut rng = SplitMix64::new(derive_seed(
        derive_seed(
            derive_seed(seed, fnv1a(u.symbol.as_bytes())),
            0x564F_4C55_4D45,
        ), // "VOLUME"
        optics_schemas::date_to_days(date) as i64 as u64,
    ));
    let day_factor = (0.35 * normal(&mut rng) - 0.06).exp();
    let r = match (
        day.checked_sub(1).and_then(|i| path.closes.get(i)),
        path.closes.get(day),
    ) {
        (Some(&previous), Some(&close)) if previous > 0.0 => (close / previous).ln().abs(),
        _ => 0.0,
    };
    let daily_sigma = u.base_iv * DT.sqrt();
    let move_factor = 1.0 + 0.4 * (r / daily_sigma).min(6.0);
    let earnings = if path.earnings.iter().any(|e| e.reaction_date == date) {
        2.5
    } else {
        1.0
    };
    let shares = average * day_factor * move_factor * earnings;
    ((shares / 100.0).round().max(1.0) as u64) * 100
}

fn daily_bar(u: &Underlying, path: &PricePath, i: usize, seed: u64) -> DailyBar {
    let open = round_cents(path.opens[i]).max(0.01);
    let close = round_cents(path.closes[i]).max(0.01);
    let vol = if u.strike_style == StrikeStyle::Volatility {
        u.base_iv
    } else {
        path.vols[i]
    };
    let variance = vol * vol * DT * (1.0 - OVERNIGHT_VARIANCE_SHARE);
    let mut rng = SplitMix64::new(derive_seed(
        derive_seed(derive_seed(seed, fnv1a(u.symbol.as_bytes())), 0x4849_4C4F), // "HILO"
        optics_schemas::date_to_days(path.dates[i]) as i64 as u64,
    ));
    let (a, b) = (path.opens[i].ln(), path.closes[i].ln());
    let spread = |uniform: f64| ((b - a).powi(2) - 2.0 * variance * (1.0 - uniform).ln()).sqrt();
    let high = ((a + b + spread(rng.next_f64())) / 2.0).exp();
    let low = ((a + b - spread(rng.next_f64())) / 2.0).exp();
    DailyBar {
        symbol: u.symbol.clone(),
        date: path.dates[i],
        open,
        high: round_cents(high).max(open).max(close),
        low: round_cents(low).min(open).min(close).max(0.01),
        close,
        volume: share_volume(u, path, i, seed),
        adj_close: close,
    }
}

/// Backward dividend adjustment of `adj_close` (bars by date ascending): the bar of an ex-date
/// and later ones are unchanged by that dividend, earlier ones are multiplied by
/// `1 − amount / close of the session before the ex-date`.
fn adjust_for_dividends(bars: &mut [DailyBar], dividends: &[&Dividend]) {
    let amounts: std::collections::BTreeMap<NaiveDate, f64> =
        dividends.iter().map(|d| (d.ex_date, d.amount)).collect();
    let mut factor = 1.0;
    for k in (0..bars.len()).rev() {
        bars[k].adj_close = (bars[k].close * factor * 1e4).round() / 1e4;
        if let Some(&amount) = amounts.get(&bars[k].date)
            && k > 0
            && bars[k - 1].close > amount
        {
            factor *= 1.0 - amount / bars[k - 1].close;
        }
    }
}

fn daily_iv(
    u: &Underlying,
    path: &PricePath,
    tape: &MarketTape,
    i: usize,
    events: &[super::market::EarningsEvent],
) -> DailyIv {
    let date = path.dates[i];
    let close = close_instant(date);
    let x = tape.factor.close_ratio.get(i).copied().unwrap_or(1.0);
    let vol_level = (x * path.own_ratio[i]).sqrt();
    let ahead: Vec<EarningsVariance> = events
        .iter()
        .filter(|e| e.reaction_date > date)
        .map(|e| {
            let reaction = new_york_datetime(e.reaction_date, REGULAR_OPEN).to_utc();
            EarningsVariance::typical(u, year_fraction(close, reaction))
        })
        .collect();
    let next_move = ahead.first().map(|e| e.move_sigma);
    let with_events = Surface::for_underlying(
        u,
        &SurfaceInputs {
            vol_level,
            events: ahead,
        },
    );
    let without = Surface::for_underlying(u, &SurfaceInputs::at_level(vol_level));
    // The smile's derivatives at the money by central differences: the slice is smooth (SSVI),
    // and at h = 10⁻³ the truncation error is O(h²) of the derivatives themselves.
    let slice = with_events.slice(30.0 / 365.0);
    let h = 1e-3;
    let (down, atm, up) = (slice.iv(-h), slice.iv(0.0), slice.iv(h));
    DailyIv {
        symbol: u.symbol.clone(),
        date,
        iv10: with_events.atm_iv(10.0 / 365.0),
        iv20: with_events.atm_iv(20.0 / 365.0),
        iv30: with_events.atm_iv(30.0 / 365.0),
        iv30_ex_earnings: without.atm_iv(30.0 / 365.0),
        iv60: with_events.atm_iv(60.0 / 365.0),
        iv90: with_events.atm_iv(90.0 / 365.0),
        iv180: with_events.atm_iv(180.0 / 365.0),
        iv365: with_events.atm_iv(1.0),
        vol_level,
        sigma_0: with_events.sigma_0,
        sigma_inf: with_events.sigma_inf,
        skew_rho: with_events.rho,
        curvature_eta: with_events.eta,
        smile_slope_30d: (up - down) / (2.0 * h),
        smile_curvature_30d: (up - 2.0 * atm + down) / (h * h),
        next_earnings_move_sigma: next_move,
    }
}
