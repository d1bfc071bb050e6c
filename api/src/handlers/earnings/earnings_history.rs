//! `GET /earnings-history/{ticker}`: each past report's gap, surprise and IV crush, and the
//! statistics over them.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::vol::stats::earnings_move_stats;
use serde::Serialize;
use utoipa::ToSchema;

use super::read::{EarningsRead, surprise_pct, timing_label};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;

/// `basis` of the payload.
pub const GAP_BASIS: &str = "gap move: the close of the session before the reaction to the open \
                             of the reaction session (a pre-open report reacts on its date, an \
                             after-close report on the next NYSE session; an unknown timing has \
                             no defined gap and is left out), percent and dollars";
/// `iv_basis` of the payload.
pub const IV_AROUND_BASIS: &str = "iv_before: the stored 30-day constant-maturity IV at the close \
                                   before the reaction; iv_after: at the reaction session's \
                                   close; percentage points";

/// One past report.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsMoveRow {
    /// The report date.
    #[schema(value_type = IsoDate)]
    pub earnings_date: NaiveDate,
    /// `bmo`, `amc` or `tbd`.
    pub timing: &'static str,
    /// Fiscal period as the company names it.
    pub fiscal_quarter: String,
    /// The session whose open first traded on the report.
    #[schema(value_type = IsoDate)]
    pub reaction_date: NaiveDate,
    /// Close of the session before the reaction, dollars.
    pub prev_close: f64,
    /// Open of the reaction session, dollars.
    pub next_open: f64,
    /// next_open − prev_close, dollars (to the micro-dollar).
    pub gap_move_dollar: f64,
    /// (next_open / prev_close − 1) × 100, percent.
    pub gap_move_pct: f64,
    /// `up` (gap ≥ 0) or `down`.
    pub direction: &'static str,
    /// Consensus EPS, dollars per share.
    pub eps_estimate: f64,
    /// Reported EPS, dollars per share.
    pub eps_actual: Option<f64>,
    /// (actual − estimate) / |estimate| × 100, percent.
    pub surprise_pct: Option<f64>,
    /// `beat` (actual ≥ estimate) or `miss`; null without an actual.
    pub surprise_direction: Option<&'static str>,
    /// 30-day IV at the close before the reaction, percentage points.
    pub iv_before: Option<f64>,
    /// 30-day IV at the reaction close, percentage points.
    pub iv_after: Option<f64>,
    /// iv_before − iv_after, percentage points.
    pub iv_crush: Option<f64>,
    /// (iv_before − iv_after) / iv_before × 100, percent.
    pub iv_crush_pct: Option<f64>,
}

/// The statistics over the reports listed.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsStatistics {
    /// Reports.
    pub total_earnings: usize,
    /// Gaps ≥ 0.
    pub up_count: usize,
    /// Gaps < 0.
    pub down_count: usize,
    /// Reports with EPS at or above the estimate.
    pub beat_count: usize,
    /// Reports with EPS below it.
    pub miss_count: usize,
    /// Mean signed gap, percent.
    pub avg_move_pct: Option<f64>,
    /// Mean absolute gap, percent.
    pub avg_abs_move_pct: Option<f64>,
    /// Mean gap of the up reports, percent.
    pub avg_up_move_pct: Option<f64>,
    /// Mean gap of the down reports, percent (negative).
    pub avg_down_move_pct: Option<f64>,
    /// Mean signed gap of the beats, percent.
    pub avg_beat_move_pct: Option<f64>,
    /// Mean signed gap of the misses, percent.
    pub avg_miss_move_pct: Option<f64>,
    /// Largest up gap, percent.
    pub max_up_pct: Option<f64>,
    /// Most negative gap, percent.
    pub max_down_pct: Option<f64>,
    /// Mean IV crush of the reports with both IVs, percent.
    pub avg_iv_crush_pct: Option<f64>,
    /// Median of the same.
    pub median_iv_crush_pct: Option<f64>,
}

/// The `/earnings-history/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsHistoryPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Reports asked for (after clamping).
    pub num_quarters: usize,
    /// The last reports that have reacted, newest first.
    pub earnings_moves: Vec<EarningsMoveRow>,
    /// Over `earnings_moves`.
    pub statistics: EarningsStatistics,
    /// Reports on record, past and scheduled.
    pub reports_on_record: usize,
    /// How the move is measured.
    pub basis: &'static str,
    /// Where the IVs come from.
    pub iv_basis: &'static str,
    /// Units.
    pub units: &'static str,
    /// The last date the read sees (New York); later reactions are not known to it.
    #[schema(value_type = IsoDate)]
    pub as_of_date: NaiveDate,
    /// Why the list is empty, when it is.
    pub reason: Option<String>,
    /// The freshness of the last daily bar's session.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// `GET /earnings-history/{ticker}?num_quarters=8`.
pub async fn earnings_history(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<EarningsHistoryPayload>>, ApiError> {
    let quarters = usize::try_from(params.int("num_quarters")?.value).unwrap_or(8);
    let read = EarningsRead::of(&state, ticker).await?;
    let past = read.past(quarters);
    let statistics = earnings_move_stats(&past.iter().map(|p| p.moved).collect::<Vec<_>>())?;
    let rows: Vec<EarningsMoveRow> = past
        .iter()
        .rev()
        .map(|p| {
            let crush = p.moved.iv_crush_pct();
            EarningsMoveRow {
                earnings_date: p.report.report_date,
                timing: timing_label(p.report.timing),
                fiscal_quarter: p.report.fiscal_quarter.clone(),
                reaction_date: p.reaction_date,
                prev_close: p.reaction.prev_close,
                next_open: p.reaction.next_open,
                // To the micro-dollar: the difference of two prices, without float noise.
                gap_move_dollar: ((p.reaction.next_open - p.reaction.prev_close) * 1e6).round()
                    / 1e6,
                gap_move_pct: p.reaction.gap_move_pct,
                direction: if p.reaction.gap_move_pct >= 0.0 {
                    "up"
                } else {
                    "down"
                },
                eps_estimate: p.report.eps_estimate,
                eps_actual: p.report.eps_actual,
                surprise_pct: surprise_pct(p.report),
                surprise_direction: p.moved.beat().map(|b| if b { "beat" } else { "miss" }),
                iv_before: p.moved.iv_before_pct,
                iv_after: p.moved.iv_after_pct,
                iv_crush: p
                    .moved
                    .iv_before_pct
                    .zip(p.moved.iv_after_pct)
                    .map(|(b, a)| b - a),
                iv_crush_pct: crush,
            }
        })
        .collect();
    let reason = rows.is_empty().then(|| {
        format!(
            "{} has {} reports on record and {} daily bars through {}: no report with a known \
             timing has reacted inside the stored bars",
            read.ticker,
            read.reports.len(),
            read.dates.len(),
            read.as_of_date
        )
    });
    let last_bar = read.dates.last().copied().unwrap_or(read.as_of_date);
    Ok(ok(EarningsHistoryPayload {
        ticker: read.ticker.to_string(),
        num_quarters: quarters,
        earnings_moves: rows,
        statistics: EarningsStatistics::from(statistics),
        reports_on_record: read.reports.len(),
        basis: GAP_BASIS,
        iv_basis: IV_AROUND_BASIS,
        units: "moves and surprise in percent, gap_move_dollar and prices in dollars, IVs in \
                percentage points",
        as_of_date: read.as_of_date,
        reason,
        freshness: state.freshness_of(last_bar),
        clamped: params.clamp_notices(),
    }))
}

impl From<optics_compute::vol::stats::EarningsMoveStats> for EarningsStatistics {
    fn from(s: optics_compute::vol::stats::EarningsMoveStats) -> Self {
        Self {
            total_earnings: s.total_earnings,
            up_count: s.up_count,
            down_count: s.down_count,
            beat_count: s.beat_count,
            miss_count: s.miss_count,
            avg_move_pct: s.avg_move_pct,
            avg_abs_move_pct: s.avg_abs_move_pct,
            avg_up_move_pct: s.avg_up_move_pct,
            avg_down_move_pct: s.avg_down_move_pct,
            avg_beat_move_pct: s.avg_beat_move_pct,
            avg_miss_move_pct: s.avg_miss_move_pct,
            max_up_pct: s.max_up_pct,
            max_down_pct: s.max_down_pct,
            avg_iv_crush_pct: s.avg_iv_crush_pct,
            median_iv_crush_pct: s.median_iv_crush_pct,
        }
    }
}
