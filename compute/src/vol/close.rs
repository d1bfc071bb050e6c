//! The market-wide `vol_daily` rows of one session close: every underlying's inputs gathered
//! from the reference tables (daily bars, earnings), its closing chain and the earlier
//! `vol_daily` rows, then [`vol_daily_row`] per underlying in parallel.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{ChainRow, DailyBar, EarningsEvent, EarningsTiming, VolDailyRow, VolTermRow};
use rayon::prelude::*;

use super::VolError;
use super::daily::{DailyVolInputs, IV_RANK_LOOKBACK_SESSIONS, vol_daily_and_term_rows};
use super::stats::{EarningsMove, gap_move_pct};

/// The symbol beta and correlation are measured against.
pub const BENCHMARK_SYMBOL: &str = "SPY";

/// Everything one session close is computed from.
#[derive(Debug, Clone, Copy)]
pub struct SessionCloseInputs<'a> {
    /// The session.
    pub trade_date: NaiveDate,
    /// The session close instant (the rows' `as_of`).
    pub as_of: DateTime<Utc>,
    /// Daily bars of any symbols and dates, any order; bars after `trade_date` are ignored.
    pub bars: &'a [DailyBar],
    /// Earnings reports of any symbols, any order.
    pub earnings: &'a [EarningsEvent],
    /// The closing chain of `trade_date` per underlying.
    pub chains: &'a BTreeMap<String, Vec<ChainRow>>,
    /// Earlier `vol_daily` rows (any dates before `trade_date`; later ones are ignored): the
    /// IV rank and percentile lookback.
    pub prior: &'a [VolDailyRow],
}

/// The rows of a session close and the underlyings that could not get one.
#[derive(Debug, Default)]
pub struct SessionCloseRows {
    /// One row per underlying, sorted by underlying.
    pub rows: Vec<VolDailyRow>,
    /// The ATM term structure of the underlyings with a closing chain: one row per expiration,
    /// sorted by underlying then nearest expiration.
    pub term: Vec<VolTermRow>,
    /// Underlyings without a row, with the reason.
    pub skipped: Vec<(String, VolError)>,
}

/// The `vol_daily` rows of a session close: one per underlying that has a closing chain or a
/// bar on `trade_date`.
///
/// - Closes: the underlying's bars up to `trade_date`; when there is no bar for `trade_date`
///   yet (a live close, before the vendor's daily bar arrives) the closing chain's spot is the
///   day's close.
/// - Earnings reaction sessions: a pre-open report reacts on its date, an after-close report on
///   the next session; a report of unknown timing marks both.
/// - SPY closes for beta and correlation when SPY has a close on every date the underlying has.
/// - IV rank lookback: the underlying's earlier `iv30d_pct` values, oldest first.
/// - Earnings moves: [`earnings_moves`] over the bars' opens and closes (a close taken from
///   the chain has no open: a before-open report of the day waits for the day's bar).
pub fn vol_daily_rows(inputs: &SessionCloseInputs<'_>) -> SessionCloseRows {
    let day = inputs.trade_date;
    let series = SymbolSeries::new(
        inputs.bars.iter().filter(|b| b.date <= day),
        inputs.earnings,
    );
    let bars_by_symbol = &series.closes;
    let prior = iv30_by_underlying(inputs.prior.iter().filter(|r| r.trade_date < day));
    let symbols: BTreeSet<&str> = inputs
        .chains
        .keys()
        .map(String::as_str)
        .chain(
            bars_by_symbol
                .iter()
                .filter(|(_, bars)| bars.contains_key(&day))
                .map(|(s, _)| *s),
        )
        .collect();
    let empty_chain: Vec<ChainRow> = Vec::new();
    let benchmark = bars_by_symbol.get(BENCHMARK_SYMBOL).map(|bars| {
        let mut bars = bars.clone();
        close_from_chain(&mut bars, day, inputs.chains.get(BENCHMARK_SYMBOL));
        bars
    });
    #[allow(clippy::type_complexity)]
    let results: Vec<(String, Result<(VolDailyRow, Vec<VolTermRow>), VolError>)> = symbols
        .par_iter()
        .map(|&symbol| {
            let chain = inputs.chains.get(symbol).unwrap_or(&empty_chain);
            let mut bars = bars_by_symbol.get(symbol).cloned().unwrap_or_default();
            close_from_chain(&mut bars, day, Some(chain));
            let dates: Vec<NaiveDate> = bars.keys().copied().collect();
            let closes: Vec<f64> = bars.values().copied().collect();
            let symbol_reports = series.reports_of(symbol);
            let reaction_sessions = reaction_sessions(&dates, symbol_reports);
            // Opens only for a symbol with reports (an ETF's would go unused).
            let moves: Option<Vec<EarningsMove>> = (!symbol_reports.is_empty()).then(|| {
                let opens = series.opens_on(symbol, &dates);
                earnings_moves(&dates, &opens, &closes, symbol_reports)
                    .into_iter()
                    .map(|(_, m)| m)
                    .collect()
            });
            let spy_closes: Option<Vec<f64>> = benchmark.as_ref().and_then(|spy| {
                dates
                    .iter()
                    .map(|d| spy.get(d).copied())
                    .collect::<Option<_>>()
            });
            let prior_iv30d: Vec<f64> = prior
                .get(symbol)
                .map(|by_date| {
                    let skip = by_date.len().saturating_sub(IV_RANK_LOOKBACK_SESSIONS - 1);
                    by_date.values().skip(skip).copied().collect()
                })
                .unwrap_or_default();
            let row = vol_daily_and_term_rows(&DailyVolInputs {
                underlying: symbol,
                trade_date: day,
                as_of: inputs.as_of,
                closes: &closes,
                reaction_sessions: &reaction_sessions,
                chain,
                prior_iv30d_pct: &prior_iv30d,
                spy_closes: spy_closes.as_deref(),
                earnings_moves: moves.as_deref(),
            });
            (symbol.to_owned(), row)
        })
        .collect();
    let mut out = SessionCloseRows::default();
    for (symbol, result) in results {
        match result {
            Ok((row, term)) => {
                out.rows.push(row);
                out.term.extend(term);
            }
            Err(e) => out.skipped.push((symbol, e)),
        }
    }
    out
}

/// Daily bars and earnings reports by symbol (then date): what the session close and the
/// history's `vol_daily` rows both read.
#[derive(Debug)]
pub struct SymbolSeries<'a> {
    /// Each symbol's closes by date.
    pub closes: BTreeMap<&'a str, BTreeMap<NaiveDate, f64>>,
    opens: BTreeMap<&'a str, BTreeMap<NaiveDate, f64>>,
    reports: BTreeMap<&'a str, Vec<&'a EarningsEvent>>,
}

impl<'a> SymbolSeries<'a> {
    /// Indexes `bars` (a later bar of a symbol and date replaces an earlier one) and
    /// `earnings` (in their order).
    pub fn new(
        bars: impl IntoIterator<Item = &'a DailyBar>,
        earnings: &'a [EarningsEvent],
    ) -> Self {
        let mut closes: BTreeMap<&str, BTreeMap<NaiveDate, f64>> = BTreeMap::new();
        let mut opens: BTreeMap<&str, BTreeMap<NaiveDate, f64>> = BTreeMap::new();
        for bar in bars {
            let symbol = bar.symbol.as_str();
            closes
                .entry(symbol)
                .or_default()
                .insert(bar.date, bar.close);
            opens.entry(symbol).or_default().insert(bar.date, bar.open);
        }
        let mut reports: BTreeMap<&str, Vec<&EarningsEvent>> = BTreeMap::new();
        for event in earnings {
            reports
                .entry(event.symbol.as_str())
                .or_default()
                .push(event);
        }
        Self {
            closes,
            opens,
            reports,
        }
    }

    /// The earnings reports of `symbol` (none: empty).
    pub fn reports_of(&self, symbol: &str) -> &[&'a EarningsEvent] {
        self.reports
            .get(symbol)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The open of `symbol` on each of `dates`, `None` where it has no bar.
    pub fn opens_on(&self, symbol: &str, dates: &[NaiveDate]) -> Vec<Option<f64>> {
        let opens = self.opens.get(symbol);
        dates
            .iter()
            .map(|d| opens.and_then(|o| o.get(d).copied()))
            .collect()
    }
}

/// Each underlying's `iv30d_pct` by date, from the rows that have one.
pub fn iv30_by_underlying<'a>(
    rows: impl IntoIterator<Item = &'a VolDailyRow>,
) -> BTreeMap<&'a str, BTreeMap<NaiveDate, f64>> {
    let mut by_underlying: BTreeMap<&str, BTreeMap<NaiveDate, f64>> = BTreeMap::new();
    for row in rows {
        if let Some(iv) = row.iv30d_pct {
            by_underlying
                .entry(row.underlying.as_str())
                .or_default()
                .insert(row.trade_date, iv);
        }
    }
    by_underlying
}

/// Adds the closing chain's spot as the close of `day` when there is no bar for it.
fn close_from_chain(
    bars: &mut BTreeMap<NaiveDate, f64>,
    day: NaiveDate,
    chain: Option<&Vec<ChainRow>>,
) {
    if bars.contains_key(&day) {
        return;
    }
    if let Some(spot) = chain
        .and_then(|rows| rows.first())
        .map(|r| r.spot)
        .filter(|s| s.is_finite() && *s > 0.0)
    {
        bars.insert(day, spot);
    }
}

/// Most calendar days from a report to its reaction session (a long weekend after an
/// after-close report on a Thursday before a holiday Friday is 4).
const MAX_REACTION_DELAY_DAYS: i64 = 5;

/// Index into `dates` (ascending sessions) of the first session on or after `report_date`
/// (`after_close` false) or after it (true): the session whose close first reflects the
/// report. `None` for index 0 (no return before it), past the last session, or more than
/// [`MAX_REACTION_DELAY_DAYS`] after the report (a gap in the bars, not its reaction).
pub fn reaction_session(
    dates: &[NaiveDate],
    report_date: NaiveDate,
    after_close: bool,
) -> Option<usize> {
    let session = if after_close {
        dates.partition_point(|d| *d <= report_date)
    } else {
        dates.partition_point(|d| *d < report_date)
    };
    let date = *dates.get(session)?;
    (session >= 1 && (date - report_date).num_days() <= MAX_REACTION_DELAY_DAYS).then_some(session)
}

/// Indices into `dates` (ascending sessions) of the sessions whose close first reflects a
/// report: the report date for a pre-open report, the next session for an after-close one,
/// both for an unknown timing ([`reaction_session`]; the same sessions [`earnings_moves`]
/// measures).
pub fn reaction_sessions(dates: &[NaiveDate], reports: &[&EarningsEvent]) -> Vec<usize> {
    let mut sessions: BTreeSet<usize> = BTreeSet::new();
    for report in reports {
        let date = report.report_date;
        let candidates = match report.timing {
            EarningsTiming::BeforeOpen => [reaction_session(dates, date, false), None],
            EarningsTiming::AfterClose => [reaction_session(dates, date, true), None],
            EarningsTiming::Unknown => [
                reaction_session(dates, date, false),
                reaction_session(dates, date, true),
            ],
        };
        sessions.extend(candidates.into_iter().flatten());
    }
    sessions.into_iter().collect()
}

/// One report's reaction, as the daily bars show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reaction {
    /// Position of the report in the slice given to [`reactions`].
    pub report: usize,
    /// Index into the sessions of the reaction session (its open is the first price after the
    /// report).
    pub session: usize,
    /// The close of the session before it, dollars.
    pub prev_close: f64,
    /// The reaction session's open, dollars.
    pub next_open: f64,
    /// `(next_open / prev_close − 1) × 100`, percent ([`gap_move_pct`]).
    pub gap_move_pct: f64,
}

/// The reaction of every report of `reports` (one symbol's) whose reaction session is in
/// `dates` (ascending sessions; `opens` and `closes` aligned with them), ordered by session.
/// The reaction session of a before-open report is its date's, of an after-close report the
/// next one (as [`reaction_sessions`]); a report of unknown timing has no defined gap and is
/// left out, as is one whose reaction session has no open or no earlier session. Sessions
/// after the last date are not known yet: cutting `dates` at an as-of date keeps every later
/// reaction out.
pub fn reactions(
    dates: &[NaiveDate],
    opens: &[Option<f64>],
    closes: &[f64],
    reports: &[&EarningsEvent],
) -> Vec<Reaction> {
    let mut found: Vec<Reaction> = reports
        .iter()
        .enumerate()
        .filter_map(|(index, report)| {
            let session = match report.timing {
                EarningsTiming::BeforeOpen => reaction_session(dates, report.report_date, false)?,
                EarningsTiming::AfterClose => reaction_session(dates, report.report_date, true)?,
                EarningsTiming::Unknown => return None,
            };
            let next_open = opens.get(session).copied().flatten()?;
            let prev_close = *closes.get(session - 1)?;
            let gap = gap_move_pct(prev_close, next_open).ok()?;
            Some(Reaction {
                report: index,
                session,
                prev_close,
                next_open,
                gap_move_pct: gap,
            })
        })
        .collect();
    found.sort_by_key(|r| r.session);
    found
}

/// The gap move of every report with a [`Reaction`], with its session index, ordered by
/// session, and the report's EPS figures. IVs before and after are not filled in.
pub fn earnings_moves(
    dates: &[NaiveDate],
    opens: &[Option<f64>],
    closes: &[f64],
    reports: &[&EarningsEvent],
) -> Vec<(usize, EarningsMove)> {
    reactions(dates, opens, closes, reports)
        .into_iter()
        .map(|r| {
            let report = reports[r.report];
            (
                r.session,
                EarningsMove {
                    gap_move_pct: r.gap_move_pct,
                    eps_estimate: Some(report.eps_estimate),
                    eps_actual: report.eps_actual,
                    iv_before_pct: None,
                    iv_after_pct: None,
                },
            )
        })
        .collect()
}
