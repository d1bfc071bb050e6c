//! `GET /earnings-calendar`: the stored reports dated today to `days_ahead` days out (New York),
//! each with the move the live chain prices for it, the average gap of the symbol's past
//! reports and their ratio, as flat rows, per day and as a Monday-to-Sunday grid.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_compute::calendars::{
    AMC_REPORT_TIME, BMO_REPORT_TIME, EXPECTED_ABS_MOVE_PER_SIGMA, HIST_MOVE_REPORTS,
    IMPLIED_MOVE_BASIS, day_label, days_in, expected_abs_move_pct, historical_move, move_ratio,
    one_sigma_move_pct, reaction_session, report_public, report_time, timing_label, weeks_covering,
};
use optics_compute::time::{REGULAR_CLOSE, new_york_date, new_york_datetime};
use optics_schemas::{EarningsEvent, EarningsTiming};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::market::{ChainView, Coverage, SessionBar};
use crate::openapi::{IsoDate, Timestamp};
use crate::params::{ClampNotice, QueryParams};
use crate::state::{AppState, MarketDataReader};
use crate::ticker::Ticker;

/// One report.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsCalendarRow {
    /// Underlying symbol.
    pub symbol: String,
    /// Company name from the coverage universe; null for a symbol outside it.
    pub company_name: Option<String>,
    /// GICS sector; null outside the universe and for funds and indices.
    pub sector: Option<String>,
    /// Market capitalisation, dollars; null when unknown.
    pub market_cap: Option<f64>,
    /// Report date, New York.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// The listed time of the report with its UTC offset (ISO 8601): 08:00 New York for
    /// `bmo`, 16:05 for `amc`; null for `tbd`.
    pub datetime: Option<String>,
    /// `bmo` (before the open), `amc` (after the close) or `tbd` (not announced).
    pub timing: &'static str,
    /// Calendar days from today (New York) to the report date; 0 for today.
    pub days_until: i64,
    /// Fiscal period reported (`FY2026 Q4`).
    pub fiscal_quarter: String,
    /// Consensus EPS, dollars per share.
    pub eps_estimate: f64,
    /// Reported EPS, dollars per share; null until the reaction session has opened.
    pub eps_actual: Option<f64>,
    /// Consensus revenue, dollars; null when the calendar has none.
    pub revenue_estimate: Option<f64>,
    /// Reported revenue, dollars; null until the reaction session has opened.
    pub revenue_actual: Option<f64>,
    /// The NYSE session whose open first trades on the report.
    #[schema(value_type = IsoDate)]
    pub reaction_date: NaiveDate,
    /// Whether the reaction session has opened (the actuals are then shown).
    pub reported: bool,
    /// The one-sigma move the chain prices to `implied_move_expiration`, percent of the price:
    /// its forward-ATM IV × √(calendar time from the chain's quote to its close, years
    /// ACT/365); null with `implied_move_reason`.
    pub implied_move_sigma: Option<f64>,
    /// The expected absolute move: 0.8 × `implied_move_sigma`, percent.
    pub implied_move: Option<f64>,
    /// `expected_abs_move`: the basis `implied_move` shares with `hist_avg_move`.
    pub implied_move_basis: &'static str,
    /// The expiration priced: the first listed on or after `reaction_date`.
    #[schema(value_type = Option<IsoDate>)]
    pub implied_move_expiration: Option<NaiveDate>,
    /// Its forward-ATM implied vol, annualised percentage points.
    pub implied_move_atm_iv: Option<f64>,
    /// Why `implied_move` is null, when it is.
    pub implied_move_reason: Option<String>,
    /// Mean |gap move| (previous close to reaction-session open) of the symbol's last twelve
    /// reports with a reaction in the stored daily bars, percent; null with
    /// `hist_avg_move_reason`.
    pub hist_avg_move: Option<f64>,
    /// Reports averaged into `hist_avg_move` (at most 12).
    pub hist_move_count: usize,
    /// Why `hist_avg_move` is null, when it is.
    pub hist_avg_move_reason: Option<String>,
    /// `implied_move / hist_avg_move`; above 1 the report is priced above its typical move.
    /// Null without both.
    pub move_ratio: Option<f64>,
}

/// One day of the window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CalendarDay {
    /// The date.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// Day of the month, 1–31.
    pub day_num: u32,
    /// `Jan` … `Dec`.
    pub month_short: &'static str,
    /// 0 = Monday … 6 = Sunday.
    pub weekday: u32,
    /// `Monday` … `Sunday`.
    pub weekday_name: &'static str,
    /// The day's pre-open reports.
    pub bmo: Vec<EarningsCalendarRow>,
    /// The day's after-close reports.
    pub amc: Vec<EarningsCalendarRow>,
    /// The day's reports of unannounced timing.
    pub tbd: Vec<EarningsCalendarRow>,
    /// Reports that day.
    pub count: usize,
}

/// One cell of `week_grid`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct WeekCell {
    /// The date.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// Day of the month, 1–31.
    pub day_num: u32,
    /// True outside the window or without a report.
    pub empty: bool,
    /// Whether the day is in the window.
    pub in_window: bool,
    /// Reports that day (0 outside the window).
    pub count: usize,
}

/// The `/earnings-calendar` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsCalendarPayload {
    /// Every report dated `from_date` to `to_date`, by date, then timing (bmo, amc, tbd), then
    /// symbol.
    pub earnings: Vec<EarningsCalendarRow>,
    /// Every day of the window, empty ones too, with its reports by timing.
    pub calendar: Vec<CalendarDay>,
    /// The Monday-to-Sunday weeks covering the window, seven cells each.
    pub week_grid: Vec<Vec<WeekCell>>,
    /// Reports in the window.
    pub total_count: usize,
    /// Today, New York.
    #[schema(value_type = IsoDate)]
    pub from_date: NaiveDate,
    /// Today + days_ahead, included.
    #[schema(value_type = IsoDate)]
    pub to_date: NaiveDate,
    /// The instant the calendar was read (the clock's).
    #[schema(value_type = Timestamp)]
    pub timestamp: DateTime<Utc>,
    /// Days ahead served (after clamping).
    pub days_ahead: i64,
    /// `expected_abs_move`.
    pub implied_move_basis: &'static str,
    /// How `implied_move_sigma` and `implied_move` are computed.
    pub implied_move_rule: String,
    /// How `hist_avg_move` is computed.
    pub hist_avg_move_rule: String,
    /// How `datetime`, `reaction_date` and the actuals follow the timing.
    pub timing_rule: String,
    /// Zone of every date and listed time: `America/New_York`.
    pub timezone: &'static str,
    /// The clock's freshness.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// `GET /earnings-calendar?days_ahead=7`.
pub async fn earnings_calendar(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<EarningsCalendarPayload>>, ApiError> {
    let days_ahead = params.int("days_ahead")?.value;
    let now = state.now();
    let from = new_york_date(now);
    let to = from + TimeDelta::days(days_ahead);
    let market = state.market_data()?;
    let coverage = market.coverage();
    let bars_through = last_complete_session(now);
    let mut rows = Vec::new();
    for (symbol, reports) in &coverage.earnings {
        let start = reports.partition_point(|r| r.report_date < from);
        let end = reports.partition_point(|r| r.report_date <= to);
        if start == end {
            continue;
        }
        let historical = HistoricalRead::of(&coverage, symbol, reports, bars_through);
        let chain = chain_of(market.as_ref(), symbol);
        for report in &reports[start..end] {
            rows.push(report_row(
                report,
                &coverage,
                &historical,
                &chain,
                from,
                now,
            ));
        }
    }
    rows.sort_by(|a, b| {
        (a.date, timing_order(a.timing), &a.symbol).cmp(&(
            b.date,
            timing_order(b.timing),
            &b.symbol,
        ))
    });
    let calendar: Vec<CalendarDay> = days_in(from, to)
        .into_iter()
        .map(|date| calendar_day(date, &rows))
        .collect();
    let week_grid = weeks_covering(from, to)
        .into_iter()
        .map(|week| {
            week.iter()
                .map(|date| {
                    let in_window = (from..=to).contains(date);
                    let count = if in_window {
                        rows.iter().filter(|r| r.date == *date).count()
                    } else {
                        0
                    };
                    WeekCell {
                        date: *date,
                        day_num: day_label(*date).day_num,
                        empty: count == 0,
                        in_window,
                        count,
                    }
                })
                .collect()
        })
        .collect();
    Ok(ok(EarningsCalendarPayload {
        total_count: rows.len(),
        earnings: rows,
        calendar,
        week_grid,
        from_date: from,
        to_date: to,
        timestamp: now,
        days_ahead,
        implied_move_basis: IMPLIED_MOVE_BASIS,
        implied_move_rule: format!(
            "implied_move_sigma = forward-ATM IV (percentage points) of the first listed \
             expiration on or after the reaction session x sqrt(calendar time from the chain's \
             quote to the expiration's close, 16:00 New York or 13:00 on an early-close day, in \
             years ACT/365), percent of the price, from the symbol's live chain; \
             implied_move = {EXPECTED_ABS_MOVE_PER_SIGMA} x implied_move_sigma, the expected \
             absolute move (sqrt(2/pi) = 0.798 rounded); move_ratio = implied_move / \
             hist_avg_move; null once the reaction session has opened"
        ),
        hist_avg_move_rule: format!(
            "mean |open of the reaction session / close of the session before - 1| x 100 over \
             the symbol's last {HIST_MOVE_REPORTS} bmo or amc reports whose reaction session is \
             in the stored daily bars complete at the read (tbd reports have no defined gap)"
        ),
        timing_rule: format!(
            "datetime: bmo at {} New York, amc at {}, tbd null; reaction_date: bmo the report \
             date's session (the next one when the date has none), amc and tbd the next NYSE \
             session after the report date; eps_actual and revenue_actual are shown from the \
             reaction session's 09:30 New York open",
            BMO_REPORT_TIME.format("%H:%M"),
            AMC_REPORT_TIME.format("%H:%M")
        ),
        timezone: "America/New_York",
        freshness: state.freshness(),
        clamped: params.clamp_notices(),
    }))
}

/// The last session whose daily bar is complete at `now`: today's once 16:00 New York has
/// passed, else the day before (a bar of a later day is never read).
fn last_complete_session(now: DateTime<Utc>) -> NaiveDate {
    let today = new_york_date(now);
    if now >= new_york_datetime(today, REGULAR_CLOSE).with_timezone(&Utc) {
        today
    } else {
        today.pred_opt().unwrap_or(today)
    }
}

/// A symbol's average past gap, read once for all its reports in the window.
struct HistoricalRead {
    avg_abs_move_pct: Option<f64>,
    reports: usize,
    reason: Option<String>,
}

impl HistoricalRead {
    fn of(
        coverage: &Coverage,
        symbol: &str,
        reports: &[EarningsEvent],
        through: NaiveDate,
    ) -> Self {
        let all = coverage.bars_of(symbol);
        let bars: &[SessionBar] = &all[..all.partition_point(|b| b.date <= through)];
        let dates: Vec<NaiveDate> = bars.iter().map(|b| b.date).collect();
        let opens: Vec<Option<f64>> = bars.iter().map(|b| Some(b.open)).collect();
        let closes: Vec<f64> = bars.iter().map(|b| b.close).collect();
        let refs: Vec<&EarningsEvent> = reports.iter().collect();
        let found = historical_move(&dates, &opens, &closes, &refs);
        let reason = found.avg_abs_move_pct.is_none().then(|| {
            format!(
                "no past bmo or amc report of {symbol} has its reaction session in the {} \
                 stored daily bars",
                bars.len()
            )
        });
        Self {
            avg_abs_move_pct: found.avg_abs_move_pct,
            reports: found.reports,
            reason,
        }
    }
}

/// The symbol's live chain, or why there is none.
fn chain_of(
    market: &dyn MarketDataReader,
    symbol: &str,
) -> Result<std::sync::Arc<ChainView>, String> {
    let ticker = Ticker::parse(symbol)
        .map_err(|_| format!("{symbol} is not a well-formed symbol: no chain to price it"))?;
    if !market.covers(&ticker) {
        return Err(format!(
            "{symbol} is not in the coverage universe: no chain prices its report"
        ));
    }
    market
        .chain(&ticker)
        .ok_or_else(|| format!("no chain of {symbol} is loaded yet"))
}

/// The priced move of a report: sigma, the expiration, its ATM IV, or why not.
struct Priced {
    sigma_pct: Option<f64>,
    expiration: Option<NaiveDate>,
    atm_iv_pct: Option<f64>,
    reason: Option<String>,
}

fn priced_move(
    chain: &Result<std::sync::Arc<ChainView>, String>,
    symbol: &str,
    reaction: NaiveDate,
    reported: bool,
) -> Priced {
    let none = |reason: String| Priced {
        sigma_pct: None,
        expiration: None,
        atm_iv_pct: None,
        reason: Some(reason),
    };
    if reported {
        return none(format!(
            "the reaction session {reaction} has opened: the chain no longer prices this report"
        ));
    }
    let chain = match chain {
        Ok(chain) => chain,
        Err(reason) => return none(reason.clone()),
    };
    let Some(vol) = chain
        .implied()
        .expirations
        .iter()
        .find(|v| v.expiration >= reaction && v.years_to_expiry > 0.0)
    else {
        return none(format!(
            "no listed expiration of {symbol} on or after the reaction session {reaction}"
        ));
    };
    let sigma = vol
        .atm_iv_pct
        .and_then(|iv| one_sigma_move_pct(iv, vol.years_to_expiry));
    Priced {
        sigma_pct: sigma,
        expiration: Some(vol.expiration),
        atm_iv_pct: vol.atm_iv_pct,
        reason: sigma.is_none().then(|| {
            format!(
                "the {} expiration of {symbol} has no usable forward-ATM IV",
                vol.expiration
            )
        }),
    }
}

fn report_row(
    report: &EarningsEvent,
    coverage: &Coverage,
    historical: &HistoricalRead,
    chain: &Result<std::sync::Arc<ChainView>, String>,
    today: NaiveDate,
    now: DateTime<Utc>,
) -> EarningsCalendarRow {
    let company = coverage.get(&report.symbol);
    let reaction = reaction_session(report.report_date, report.timing);
    let reported = report_public(report.report_date, report.timing, now);
    let priced = priced_move(chain, &report.symbol, reaction, reported);
    let implied = priced.sigma_pct.map(expected_abs_move_pct);
    EarningsCalendarRow {
        symbol: report.symbol.clone(),
        company_name: company.map(|c| c.name.clone()),
        sector: company.and_then(|c| c.sector.clone()),
        market_cap: company.and_then(|c| c.market_cap),
        date: report.report_date,
        datetime: report_time(report.timing)
            .map(|t| new_york_datetime(report.report_date, t).to_rfc3339()),
        timing: timing_label(report.timing),
        days_until: (report.report_date - today).num_days(),
        fiscal_quarter: report.fiscal_quarter.clone(),
        eps_estimate: report.eps_estimate,
        eps_actual: report.eps_actual.filter(|_| reported),
        revenue_estimate: report.revenue_estimate,
        revenue_actual: report.revenue_actual.filter(|_| reported),
        reaction_date: reaction,
        reported,
        implied_move_sigma: priced.sigma_pct,
        implied_move: implied,
        implied_move_basis: IMPLIED_MOVE_BASIS,
        implied_move_expiration: priced.expiration,
        implied_move_atm_iv: priced.atm_iv_pct,
        implied_move_reason: priced.reason,
        hist_avg_move: historical.avg_abs_move_pct,
        hist_move_count: historical.reports,
        hist_avg_move_reason: historical.reason.clone(),
        move_ratio: move_ratio(implied, historical.avg_abs_move_pct),
    }
}

/// bmo, amc, tbd.
fn timing_order(label: &str) -> u8 {
    match label {
        "bmo" => 0,
        "amc" => 1,
        _ => 2,
    }
}

fn calendar_day(date: NaiveDate, rows: &[EarningsCalendarRow]) -> CalendarDay {
    let label = day_label(date);
    let of = |timing: EarningsTiming| -> Vec<EarningsCalendarRow> {
        rows.iter()
            .filter(|r| r.date == date && r.timing == timing_label(timing))
            .cloned()
            .collect()
    };
    let (bmo, amc, tbd) = (
        of(EarningsTiming::BeforeOpen),
        of(EarningsTiming::AfterClose),
        of(EarningsTiming::Unknown),
    );
    CalendarDay {
        date,
        day_num: label.day_num,
        month_short: label.month_short,
        weekday: label.weekday,
        weekday_name: label.weekday_name,
        count: bmo.len() + amc.len() + tbd.len(),
        bmo,
        amc,
        tbd,
    }
}
