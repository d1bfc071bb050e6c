//! `GET /iv-crush/{ticker}`: the IV built into the next report, the crush past reports saw and
//! the move the straddle over the report prices.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::earnings::{
    HISTORY_REPORTS, IV_WINDOW_TOLERANCE_DAYS, IvAroundReport, mean, median,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::event::EventSetup;
use super::read::{EarningsRead, timing_label};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, latest_chain};
use crate::handlers::volatility::{IV30_BASIS, Served};
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// `crush_basis` of the payload.
pub const CRUSH_BASIS: &str = "per past report, from the stored 30-day constant-maturity IV: \
                               crush = (IV at the close before the reaction - IV at the reaction \
                               close) / IV before x 100; run-up = IV before / IV about days_before \
                               days earlier - 1; change after = IV about days_after days after the \
                               reaction / IV before - 1 (each window reading the session nearest \
                               that day within 4 days); estimated_iv_after_event = current_iv x \
                               (1 - mean crush / 100)";

/// One past report's IV path.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReportIvPath {
    /// The report date.
    #[schema(value_type = IsoDate)]
    pub earnings_date: NaiveDate,
    /// The reaction session.
    #[schema(value_type = IsoDate)]
    pub reaction_date: NaiveDate,
    /// IV about days_before days before the reaction, percentage points.
    pub iv_window_before: Option<f64>,
    /// IV at the close before the reaction.
    pub iv_before: Option<f64>,
    /// IV at the reaction close.
    pub iv_after: Option<f64>,
    /// IV about days_after days after the reaction.
    pub iv_window_after: Option<f64>,
    /// The crush, percent of iv_before.
    pub iv_crush_pct: Option<f64>,
    /// The run-up into the report, percent.
    pub iv_run_up_pct: Option<f64>,
    /// IV days_after days on against iv_before, percent.
    pub iv_change_after_pct: Option<f64>,
    /// The reaction gap, percent.
    pub gap_move_pct: f64,
}

/// The `/iv-crush/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IvCrushPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The next report's date; null when none is scheduled.
    #[schema(value_type = Option<IsoDate>)]
    pub earnings_date: Option<NaiveDate>,
    /// `bmo`, `amc` or `tbd`.
    pub timing: Option<&'static str>,
    /// The session whose open first trades on it.
    #[schema(value_type = Option<IsoDate>)]
    pub reaction_date: Option<NaiveDate>,
    /// Calendar days to the report.
    pub days_to_earnings: Option<i64>,
    /// The report is within days_before days and the nearest open expiration carries it.
    pub is_earnings_play: bool,
    /// Today's 30-day constant-maturity IV, percentage points.
    pub current_iv: Option<f64>,
    /// ATM IV of the event expiration (the first carrying the reaction), percentage points.
    pub atm_iv: Option<f64>,
    /// The event expiration.
    #[schema(value_type = Option<IsoDate>)]
    pub event_expiration: Option<NaiveDate>,
    /// The expiration after it.
    #[schema(value_type = Option<IsoDate>)]
    pub reference_expiration: Option<NaiveDate>,
    /// atm_iv − the reference expiration's ATM IV, percentage points: the premium the report
    /// adds to its expiration.
    pub iv_premium: Option<f64>,
    /// Mean crush of the past reports, percent.
    pub estimated_iv_crush_pct: Option<f64>,
    /// current_iv after that crush, percentage points.
    pub estimated_iv_after_event: Option<f64>,
    /// Median crush of the past reports, percent.
    pub median_iv_crush_pct: Option<f64>,
    /// Mean run-up into past reports, percent.
    pub avg_iv_run_up_pct: Option<f64>,
    /// Mean IV change days_after days on, percent.
    pub avg_iv_change_after_pct: Option<f64>,
    /// The event straddle's expected absolute move, percent of spot.
    pub expected_move_pct: Option<f64>,
    /// The event-only part of it, percent.
    pub implied_move_pct: Option<f64>,
    /// The event straddle, dollars.
    pub straddle_price: Option<f64>,
    /// Mean |gap| of the past reports, percent.
    pub historical_avg_move_pct: Option<f64>,
    /// Past reports with both IVs.
    pub reports_with_iv: usize,
    /// Window before the report, days (after clamping).
    pub days_before: i64,
    /// Window after the report, days (after clamping).
    pub days_after: i64,
    /// The past reports, newest first.
    pub reports: Vec<ReportIvPath>,
    /// How the crush is measured.
    pub crush_basis: &'static str,
    /// The IV the crush is measured on.
    pub iv_basis: &'static str,
    /// Units.
    pub units: &'static str,
    /// Session, instant, freshness, reason, clamps.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /iv-crush/{ticker}?days_before=30&days_after=30`.
pub async fn iv_crush(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<IvCrushPayload>>, ApiError> {
    let days_before = params.int("days_before")?.value;
    let days_after = params.int("days_after")?.value;
    let chain = latest_chain(&state, &ticker)?;
    let read = EarningsRead::of(&state, ticker).await?;
    let past = read.past(HISTORY_REPORTS);
    let reports: Vec<ReportIvPath> = past
        .iter()
        .rev()
        .map(|p| {
            let iv = IvAroundReport::read(
                &read.iv30d_around(
                    p.reaction_date,
                    days_before + IV_WINDOW_TOLERANCE_DAYS,
                    days_after + IV_WINDOW_TOLERANCE_DAYS,
                ),
                days_before,
                days_after,
            );
            ReportIvPath {
                earnings_date: p.report.report_date,
                reaction_date: p.reaction_date,
                iv_window_before: iv.iv_window_before,
                iv_before: iv.iv_before,
                iv_after: iv.iv_after,
                iv_window_after: iv.iv_window_after,
                iv_crush_pct: iv.crush_pct(),
                iv_run_up_pct: iv.run_up_pct(),
                iv_change_after_pct: iv.change_after_pct(),
                gap_move_pct: p.reaction.gap_move_pct,
            }
        })
        .collect();
    let crushes: Vec<f64> = reports.iter().filter_map(|r| r.iv_crush_pct).collect();
    let estimated_crush = mean(crushes.iter().copied());
    let median_crush = median(&crushes);
    let current_iv = chain.implied().constant_maturity.iv30d_pct;
    let setup = EventSetup::of(&state, &read, &chain);
    let atm = |e: Option<&optics_compute::vol::ExpirationVol>| e.and_then(|e| e.atm_iv_pct);
    let (atm_iv, reference_iv) = setup.as_ref().map_or((None, None), |s| {
        (
            atm(s.event_expiration.as_ref()),
            atm(s.reference_expiration.as_ref()),
        )
    });
    let nearest_open = chain.open_expirations().first().copied();
    let is_earnings_play = setup.as_ref().is_some_and(|s| {
        (0..=days_before).contains(&s.days_to_earnings)
            && nearest_open.is_some_and(|e| e >= s.reaction_date)
    });
    let mut reason = match &setup {
        None => Some(format!(
            "no report of {} is scheduled on or after {}",
            read.ticker, read.as_of_date
        )),
        Some(s) => s.reason.clone(),
    };
    if reports.is_empty() {
        reason = Some(format!(
            "{}no past report of {} has reacted inside the stored daily bars",
            reason.map(|r| format!("{r}; ")).unwrap_or_default(),
            read.ticker
        ));
    }
    Ok(ok(IvCrushPayload {
        ticker: read.ticker.to_string(),
        earnings_date: setup.as_ref().map(|s| s.report.report_date),
        timing: setup.as_ref().map(|s| timing_label(s.report.timing)),
        reaction_date: setup.as_ref().map(|s| s.reaction_date),
        days_to_earnings: setup.as_ref().map(|s| s.days_to_earnings),
        is_earnings_play,
        current_iv,
        atm_iv,
        event_expiration: setup
            .as_ref()
            .and_then(|s| s.event_expiration.as_ref().map(|e| e.expiration)),
        reference_expiration: setup
            .as_ref()
            .and_then(|s| s.reference_expiration.as_ref().map(|e| e.expiration)),
        iv_premium: atm_iv.zip(reference_iv).map(|(a, r)| a - r),
        estimated_iv_crush_pct: estimated_crush,
        estimated_iv_after_event: current_iv
            .zip(estimated_crush)
            .map(|(iv, crush)| iv * (1.0 - crush / 100.0)),
        median_iv_crush_pct: median_crush,
        avg_iv_run_up_pct: mean(reports.iter().filter_map(|r| r.iv_run_up_pct)),
        avg_iv_change_after_pct: mean(reports.iter().filter_map(|r| r.iv_change_after_pct)),
        expected_move_pct: setup
            .as_ref()
            .and_then(|s| s.straddle.as_ref().map(|m| m.expected_move_pct)),
        implied_move_pct: setup
            .as_ref()
            .and_then(|s| s.event.map(|e| e.implied_move_pct)),
        straddle_price: setup
            .as_ref()
            .and_then(|s| s.straddle.as_ref().map(|m| m.straddle_price)),
        historical_avg_move_pct: mean(past.iter().map(|p| p.reaction.gap_move_pct.abs())),
        reports_with_iv: crushes.len(),
        days_before,
        days_after,
        reports,
        crush_basis: CRUSH_BASIS,
        iv_basis: IV30_BASIS,
        units: "IVs in percentage points; crush, run-up, change and moves in percent; \
                straddle_price in dollars",
        served: Served::of(&state, &chain, reason, params.clamp_notices()),
    }))
}
