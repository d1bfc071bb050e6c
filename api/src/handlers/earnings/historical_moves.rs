//! `GET /historical-moves/{ticker}`: per horizon, the distribution of the stock's rolling
//! close-to-close moves over the stored daily bars. The block of one horizon
//! ([`MoveAnalysis`]) is also what `/expected-vs-actual` averages and what
//! `/mispricing-assessment` returns as `historical_moves`.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::moves::{LARGE_MOVE_PCT, move_distribution};
use optics_compute::time::new_york_date;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;

/// `basis` of every move figure.
pub const MOVES_BASIS: &str = "rolling close-to-close moves of the stored daily bars: for a \
                               horizon of h trading sessions, 100 x (close_t / close_(t-h) - 1) \
                               at every session t with a close h sessions earlier (overlapping \
                               windows), over the bars up to today's New York date";

/// `units` of every move figure.
pub const MOVES_UNITS: &str = "percent of the starting close (2.5 = 2.5 %); pct_moves_above_5 \
                               in percent of the moves; days and sample_size in sessions";

/// The stored daily closes of one ticker up to a date, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct CloseSeries {
    /// The bars' sessions.
    pub dates: Vec<NaiveDate>,
    /// Their closes, dollars.
    pub closes: Vec<f64>,
}

impl CloseSeries {
    /// `ticker`'s bars on or before the clock's New York date (a bar dated after today is not
    /// history yet).
    pub(crate) fn of(state: &AppState, ticker: &Ticker) -> Result<Self, ApiError> {
        let today = new_york_date(state.now());
        let coverage = state.market_data()?.coverage();
        let bars = coverage.bars_of(ticker.as_str());
        let end = bars.partition_point(|b| b.date <= today);
        Ok(Self {
            dates: bars[..end].iter().map(|b| b.date).collect(),
            closes: bars[..end].iter().map(|b| b.close).collect(),
        })
    }

    /// The last bar's session.
    pub(crate) fn last_bar(&self) -> Option<NaiveDate> {
        self.dates.last().copied()
    }
}

/// `move_analysis.<days>`: the moves over one horizon. Every figure is null, with `reason`,
/// when fewer than `days` + 1 closes are stored.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MoveAnalysis {
    /// The horizon, trading sessions.
    pub days: usize,
    /// Moves measured: one per session with a close `days` sessions before it.
    pub sample_size: usize,
    /// Mean absolute move, percent.
    pub avg_abs_move_pct: Option<f64>,
    /// Mean signed move, percent.
    pub mean_move_pct: Option<f64>,
    /// Median signed move, percent.
    pub median_move_pct: Option<f64>,
    /// Sample standard deviation (n − 1) of the signed moves, percent; null below two moves.
    pub std_dev_pct: Option<f64>,
    /// 10th percentile of the signed moves (linear between order statistics, numpy's
    /// default), percent.
    pub p10: Option<f64>,
    /// 25th percentile of the signed moves, percent.
    pub p25: Option<f64>,
    /// 75th percentile of the signed moves, percent.
    pub p75: Option<f64>,
    /// 90th percentile of the signed moves, percent.
    pub p90: Option<f64>,
    /// Largest signed move, percent (negative when every move was down).
    pub max_up_move_pct: Option<f64>,
    /// Smallest signed move (the deepest fall), percent.
    pub max_down_move_pct: Option<f64>,
    /// Share of the moves larger than 5 % in absolute value, percent of the moves.
    pub pct_moves_above_5: Option<f64>,
    /// The first session used: the start of the oldest window.
    #[schema(value_type = Option<IsoDate>)]
    pub first_session: Option<NaiveDate>,
    /// The last session used: the end of the newest window.
    #[schema(value_type = Option<IsoDate>)]
    pub last_session: Option<NaiveDate>,
    /// Why the figures are null, when they are.
    pub reason: Option<String>,
}

impl MoveAnalysis {
    /// The block of `days` over `series` (`ticker` names the stock in the reason).
    pub(crate) fn of(series: &CloseSeries, days: usize, ticker: &Ticker) -> Self {
        let Some(d) = move_distribution(&series.closes, days) else {
            return Self {
                days,
                sample_size: 0,
                avg_abs_move_pct: None,
                mean_move_pct: None,
                median_move_pct: None,
                std_dev_pct: None,
                p10: None,
                p25: None,
                p75: None,
                p90: None,
                max_up_move_pct: None,
                max_down_move_pct: None,
                pct_moves_above_5: None,
                first_session: None,
                last_session: None,
                reason: Some(format!(
                    "{} daily closes are stored for {ticker}; a {days}-session move needs at \
                     least {}",
                    series.closes.len(),
                    days + 1
                )),
            };
        };
        Self {
            days,
            sample_size: d.sample_size,
            avg_abs_move_pct: Some(d.avg_abs_move_pct),
            mean_move_pct: Some(d.mean_move_pct),
            median_move_pct: Some(d.median_move_pct),
            std_dev_pct: d.std_dev_pct,
            p10: Some(d.p10),
            p25: Some(d.p25),
            p75: Some(d.p75),
            p90: Some(d.p90),
            max_up_move_pct: Some(d.max_up_move_pct),
            max_down_move_pct: Some(d.max_down_move_pct),
            pct_moves_above_5: Some(d.pct_moves_above_5),
            first_session: series.dates.get(d.first_close).copied(),
            last_session: series.dates.get(d.last_close).copied(),
            reason: None,
        }
    }
}

/// The `/historical-moves/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HistoricalMovesPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The horizons measured, trading sessions, ascending (duplicates dropped, after clamping).
    pub periods: Vec<usize>,
    /// By horizon in sessions (`"7"`, `"14"`, …): the distribution of its moves.
    // JSON object keys are strings: the horizon in days, written out ("7", "14", …).
    #[schema(value_type = BTreeMap<String, MoveAnalysis>)]
    pub move_analysis: BTreeMap<usize, MoveAnalysis>,
    /// Daily closes stored up to today.
    pub sessions: usize,
    /// The first stored bar's session.
    #[schema(value_type = Option<IsoDate>)]
    pub first_bar: Option<NaiveDate>,
    /// The last stored bar's session.
    #[schema(value_type = Option<IsoDate>)]
    pub last_bar: Option<NaiveDate>,
    /// The |move| above which a move counts in `pct_moves_above_5`, percent.
    pub large_move_pct: f64,
    /// How the moves are measured.
    pub basis: &'static str,
    /// Unit of every figure.
    pub units: &'static str,
    /// Why every block is empty, when it is.
    pub reason: Option<String>,
    /// The freshness of the last bar's session.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// `GET /historical-moves/{ticker}?periods=7,14,21,30`.
pub async fn historical_moves(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<HistoricalMovesPayload>>, ApiError> {
    // The registry bounds each horizon to 1..=252 and the list to 8 values.
    let mut periods: Vec<usize> = params
        .int_list("periods")?
        .iter()
        .map(|p| usize::try_from(p.value).unwrap_or(1))
        .collect();
    periods.sort_unstable();
    periods.dedup();
    let series = CloseSeries::of(&state, &ticker)?;
    let move_analysis: BTreeMap<usize, MoveAnalysis> = periods
        .iter()
        .map(|&days| (days, MoveAnalysis::of(&series, days, &ticker)))
        .collect();
    let last_bar = series.last_bar();
    Ok(ok(HistoricalMovesPayload {
        ticker: ticker.to_string(),
        reason: series
            .closes
            .is_empty()
            .then(|| format!("no daily bars are stored for {ticker}: no move to measure")),
        periods,
        move_analysis,
        sessions: series.closes.len(),
        first_bar: series.dates.first().copied(),
        last_bar,
        large_move_pct: LARGE_MOVE_PCT,
        basis: MOVES_BASIS,
        units: MOVES_UNITS,
        freshness: state.freshness_of(last_bar.unwrap_or_else(|| new_york_date(state.now()))),
        clamped: params.clamp_notices(),
    }))
}
