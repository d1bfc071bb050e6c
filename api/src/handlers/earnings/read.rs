//! What the per-report earnings endpoints read, cut at one as-of date so a past session never
//! sees a later one: the daily bars up to that date (the reaction gaps and drifts), the
//! ticker's reports (an EPS actual only for a report that has reacted by then) and the stored
//! 30-day IV and front-expiration IV of the sessions up to it.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use optics_compute::calendars::reaction_session;
pub use optics_compute::calendars::timing_label;
use optics_compute::earnings::{DriftEvent, drift_path};
use optics_compute::time::new_york_date;
use optics_compute::vol::close::{Reaction, reactions};
use optics_compute::vol::stats::EarningsMove;
use optics_schemas::EarningsEvent;

use crate::error::ApiError;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The stored series of one ticker as of one date.
#[derive(Debug, Clone)]
pub struct EarningsRead {
    /// The covered ticker.
    pub ticker: Ticker,
    /// The last date the read sees: the clock's New York date.
    pub as_of_date: NaiveDate,
    /// Sessions of the stored daily bars up to `as_of_date`, ascending.
    pub dates: Vec<NaiveDate>,
    /// Their opens.
    pub opens: Vec<Option<f64>>,
    /// Their closes.
    pub closes: Vec<f64>,
    /// Every report of the ticker, ascending by date.
    pub reports: Vec<EarningsEvent>,
    /// The reports that have reacted by `as_of_date`, by session.
    pub reactions: Vec<Reaction>,
    /// Stored 30-day constant-maturity IV by session, up to `as_of_date`.
    iv30d: BTreeMap<NaiveDate, f64>,
    /// Stored front expiration and its ATM IV by session, up to `as_of_date`.
    front: BTreeMap<NaiveDate, (NaiveDate, f64)>,
    /// The last stored session's 30-session realized vol without the reaction sessions.
    hv_ex_earnings: Option<f64>,
}

/// A past report with its reaction and the IVs around it.
#[derive(Debug, Clone)]
pub struct PastReport<'a> {
    /// The report.
    pub report: &'a EarningsEvent,
    /// Its reaction.
    pub reaction: Reaction,
    /// The reaction session.
    pub reaction_date: NaiveDate,
    /// The inputs of the move statistics (IVs from the stored 30-day IV: the close before the
    /// reaction and the reaction's close).
    pub moved: EarningsMove,
}

impl EarningsRead {
    /// Reads `ticker` as of the clock's New York date (424 when the store cannot be read).
    pub async fn of(state: &AppState, ticker: Ticker) -> Result<Self, ApiError> {
        let as_of_date = new_york_date(state.now());
        let reader = state.market_data()?.clone();
        let coverage = reader.coverage();
        let bars = coverage.bars_of(ticker.as_str());
        let bars = &bars[..bars.partition_point(|b| b.date <= as_of_date)];
        let dates: Vec<NaiveDate> = bars.iter().map(|b| b.date).collect();
        let opens: Vec<Option<f64>> = bars.iter().map(|b| Some(b.open)).collect();
        let closes: Vec<f64> = bars.iter().map(|b| b.close).collect();
        let reports = coverage.reports_of(ticker.as_str()).to_vec();
        let refs: Vec<&EarningsEvent> = reports.iter().collect();
        let reactions = reactions(&dates, &opens, &closes, &refs);
        let series = reader.vol_history(&ticker).await?;
        let seen = &series[..series.partition_point(|r| r.trade_date <= as_of_date)];
        let iv30d = seen
            .iter()
            .filter_map(|r| Some((r.trade_date, r.iv30d_pct?)))
            .collect();
        let front = seen
            .iter()
            .filter_map(|r| Some((r.trade_date, (r.front_expiration?, r.front_atm_iv_pct?))))
            .collect();
        let hv_ex_earnings = seen.last().and_then(|r| r.hv_30d_ex_earnings_pct);
        Ok(Self {
            ticker,
            as_of_date,
            dates,
            opens,
            closes,
            reports,
            reactions,
            iv30d,
            front,
            hv_ex_earnings,
        })
    }

    /// The stored 30-day IV of `date`'s session.
    pub fn iv30d_on(&self, date: NaiveDate) -> Option<f64> {
        self.iv30d.get(&date).copied()
    }

    /// `(calendar days from `origin`, iv30d)` of every stored session within `before` days
    /// before and `after` days after `origin`.
    pub fn iv30d_around(&self, origin: NaiveDate, before: i64, after: i64) -> Vec<(i64, f64)> {
        let from = origin - chrono::TimeDelta::days(before);
        let to = origin + chrono::TimeDelta::days(after);
        self.iv30d
            .range(from..=to)
            .map(|(d, iv)| ((*d - origin).num_days(), *iv))
            .collect()
    }

    /// The last stored session's 30-session realized vol with the reaction sessions dropped,
    /// percentage points.
    pub fn hv_ex_earnings(&self) -> Option<f64> {
        self.hv_ex_earnings
    }

    /// The stored front expiration and its ATM IV at `date`'s close.
    pub fn front_on(&self, date: NaiveDate) -> Option<(NaiveDate, f64)> {
        self.front.get(&date).copied()
    }

    /// The last `count` reports that have reacted, oldest first.
    pub fn past(&self, count: usize) -> Vec<PastReport<'_>> {
        let skip = self.reactions.len().saturating_sub(count);
        self.reactions[skip..]
            .iter()
            .map(|reaction| {
                let report = &self.reports[reaction.report];
                let reaction_date = self.dates[reaction.session];
                let before = self.dates[reaction.session - 1];
                PastReport {
                    report,
                    reaction: *reaction,
                    reaction_date,
                    moved: EarningsMove {
                        gap_move_pct: reaction.gap_move_pct,
                        eps_estimate: Some(report.eps_estimate),
                        eps_actual: report.eps_actual,
                        iv_before_pct: self.iv30d_on(before),
                        iv_after_pct: self.iv30d_on(reaction_date),
                    },
                }
            })
            .collect()
    }

    /// Each of `past`'s gap with its drift at `horizons` sessions (cut at the last session the
    /// read sees).
    pub fn drift_events(&self, past: &[PastReport<'_>], horizons: &[usize]) -> Vec<DriftEvent> {
        past.iter()
            .map(|p| DriftEvent {
                gap_pct: p.reaction.gap_move_pct,
                drift: drift_path(&self.opens, &self.closes, p.reaction.session, horizons),
            })
            .collect()
    }

    /// The next report: the first dated on or after `as_of_date`.
    pub fn next_report(&self) -> Option<&EarningsEvent> {
        self.reports
            .iter()
            .find(|r| r.report_date >= self.as_of_date)
    }
}

/// The session whose open first trades on a report ([`reaction_session`]: a tbd report takes
/// the later of its two possible sessions, so the event expiration carries it either way).
pub fn reaction_date_of(report: &EarningsEvent) -> NaiveDate {
    reaction_session(report.report_date, report.timing)
}

/// `(actual − estimate) / |estimate| × 100`, percent; `None` without both or for a zero
/// estimate.
pub fn surprise_pct(report: &EarningsEvent) -> Option<f64> {
    let actual = report.eps_actual?;
    (report.eps_estimate != 0.0)
        .then(|| (actual - report.eps_estimate) / report.eps_estimate.abs() * 100.0)
}
