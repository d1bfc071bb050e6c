//! The next report as the live chain prices it: the first expiration that carries the
//! reaction, its straddle, and that straddle split into the report's move and the diffusion of
//! its other days ([`optics_compute::earnings::event_move`]).

use chrono::NaiveDate;
use optics_compute::earnings::{EventMove, PRELIMINARY_BEYOND_DAYS, event_move};
use optics_compute::vol::ExpirationVol;
use optics_schemas::EarningsEvent;

use super::read::{EarningsRead, reaction_date_of};
use crate::handlers::exposure::expected_move::{ExpectedMovePayload, expected_move_payload};
use crate::market::ChainView;
use crate::state::AppState;

/// The next report and what the chain prices for it.
#[derive(Debug, Clone)]
pub struct EventSetup {
    /// The report.
    pub report: EarningsEvent,
    /// The session whose open first trades on it.
    pub reaction_date: NaiveDate,
    /// Calendar days from the read's date to the report date.
    pub days_to_earnings: i64,
    /// Beyond [`PRELIMINARY_BEYOND_DAYS`].
    pub preliminary: bool,
    /// The first listed expiration on or after the reaction session, with its implied vols.
    pub event_expiration: Option<ExpirationVol>,
    /// The listed expiration after it (the reference for the wings).
    pub reference_expiration: Option<ExpirationVol>,
    /// The event expiration's ATM straddle.
    pub straddle: Option<ExpectedMovePayload>,
    /// The diffusion vol of the straddle's other days, percentage points, and where it comes
    /// from.
    pub diffusion: Option<(f64, String)>,
    /// The straddle's move split.
    pub event: Option<EventMove>,
    /// Why a figure above is missing.
    pub reason: Option<String>,
}

impl EventSetup {
    /// The setup of `read`'s next report on `chain`; `None` when no report is scheduled.
    pub fn of(state: &AppState, read: &EarningsRead, chain: &ChainView) -> Option<Self> {
        let report = read.next_report()?.clone();
        let reaction_date = reaction_date_of(&report);
        let days_to_earnings = (report.report_date - read.as_of_date).num_days();
        let vols = &chain.implied().expirations;
        let position = vols
            .iter()
            .position(|v| v.expiration >= reaction_date && v.dte >= 0);
        let event_expiration = position.map(|i| vols[i].clone());
        let reference_expiration = position.and_then(|i| {
            vols[i + 1..]
                .iter()
                .find(|v| v.expiration > vols[i].expiration)
                .cloned()
        });
        let mut reason = None;
        let straddle = event_expiration.as_ref().and_then(|e| {
            expected_move_payload(
                &read.ticker,
                chain,
                Some(e.expiration),
                state.freshness_of(chain.trade_date),
            )
            .map_err(|error| reason = Some(format!("no event straddle: {error}")))
            .ok()
        });
        if event_expiration.is_none() {
            reason = Some(format!(
                "no listed expiration of {} carries the reaction session {reaction_date}",
                read.ticker
            ));
        }
        // The diffusion of the straddle's other days: an expiration that ends before the
        // reaction carries no report; without one, the realized vol with the reaction sessions
        // dropped.
        let diffusion = vols
            .iter()
            .rfind(|v| v.expiration < reaction_date && v.dte >= 1)
            .and_then(|v| {
                Some((
                    v.atm_iv_pct?,
                    format!(
                        "ATM IV of the {} expiration, which ends before the report",
                        v.expiration
                    ),
                ))
            })
            .or_else(|| {
                read.hv_ex_earnings().map(|hv| {
                    (
                        hv,
                        "30-session close-to-close realized vol with the earnings reaction \
                         sessions dropped (no listed expiration ends before the report)"
                            .to_owned(),
                    )
                })
            });
        let event = straddle.as_ref().and_then(|s| {
            event_move(
                s.expected_move_pct,
                s.dte as f64,
                diffusion.as_ref().map_or(0.0, |d| d.0),
            )
        });
        Some(Self {
            report,
            reaction_date,
            days_to_earnings,
            preliminary: days_to_earnings > PRELIMINARY_BEYOND_DAYS,
            event_expiration,
            reference_expiration,
            straddle,
            diffusion,
            event,
            reason,
        })
    }
}
