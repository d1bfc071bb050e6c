//! Freshness labels: is the market open, is the data live or the last session's end of day,
//! and a sentence saying so.
//!
//! Computed from an instant (the injected clock's "now") and the NYSE calendar in
//! America/New_York ([`optics_compute::time::NyseCalendar`]): during a regular session
//! (09:30 to 16:00 New York, 13:00 on early-close days) data is `LIVE` for that session;
//! otherwise it is `EOD`, the close of the last session that has ended (after the close, the
//! same day's; before the open, over weekends and on holidays, the previous trading day's).

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::time::{NEW_YORK, NyseCalendar, new_york_date};
use serde::Serialize;
use utoipa::ToSchema;

/// Whether the numbers are from the session in progress or a closed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum DataFreshness {
    /// The regular session is open; data updates intraday.
    #[serde(rename = "LIVE")]
    Live,
    /// The market is closed; data is the last session's end of day.
    #[serde(rename = "EOD")]
    Eod,
}

/// The freshness block handlers put in their payloads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Freshness {
    /// True during a regular NYSE session.
    pub is_market_hours: bool,
    /// `LIVE` or `EOD`.
    pub data_freshness: DataFreshness,
    /// The session the data belongs to (New York date, `YYYY-MM-DD`).
    #[schema(value_type = String, format = Date)]
    pub trade_date: NaiveDate,
    /// One sentence for a person: open or closed, why, which session, and when that changes.
    pub message: String,
}

/// The freshness of data served at `now`.
pub fn freshness(now: DateTime<Utc>, calendar: &NyseCalendar) -> Freshness {
    let state = calendar.market_state(now);
    let next_open = state.next_open.with_timezone(&NEW_YORK);
    let close = state.next_close.with_timezone(&NEW_YORK);
    if state.is_open {
        let early = calendar.early_close(state.trade_date).is_some();
        let closes = if early {
            format!("closes early at {} ET", close.format("%H:%M"))
        } else {
            format!("closes at {} ET", close.format("%H:%M"))
        };
        return Freshness {
            is_market_hours: true,
            data_freshness: DataFreshness::Live,
            trade_date: state.trade_date,
            message: format!(
                "Market open: live data for the {} session, which {closes}.",
                state.trade_date
            ),
        };
    }
    let today = new_york_date(now);
    let why = if let Some(holiday) = calendar.holiday(today) {
        format!("closed for {holiday}")
    } else if !calendar.is_trading_day(today) {
        "closed for the weekend".to_owned()
    } else if today == state.trade_date {
        "closed for the day".to_owned()
    } else {
        "not open yet".to_owned()
    };
    Freshness {
        is_market_hours: false,
        data_freshness: DataFreshness::Eod,
        trade_date: state.trade_date,
        message: format!(
            "Market {why}: end-of-day data from the {} session. The next session opens {} ET.",
            state.trade_date,
            next_open.format("%Y-%m-%d %H:%M")
        ),
    }
}

#[cfg(test)]
mod tests;
