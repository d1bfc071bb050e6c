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
    session_freshness(now, calendar).0
}

/// The freshness of data that belongs to the session `data_trade_date`, served at `now`: the
/// same as [`freshness`] when that is the session the clock expects (the one in progress, or
/// the last one closed); otherwise the data is another (in practice an earlier) session's, so
/// it is labelled `EOD` with its own trade date and a message saying the expected session's
/// data has not arrived — never `LIVE`.
pub fn freshness_of_session(
    now: DateTime<Utc>,
    calendar: &NyseCalendar,
    data_trade_date: NaiveDate,
) -> Freshness {
    let (expected, why) = session_freshness(now, calendar);
    if expected.trade_date == data_trade_date {
        return expected;
    }
    let situation = if expected.is_market_hours {
        format!(
            "Market open, but the {} session's data has not arrived",
            expected.trade_date
        )
    } else {
        format!(
            "Market {why}, but the end of day of the {} session has not arrived",
            expected.trade_date
        )
    };
    Freshness {
        is_market_hours: expected.is_market_hours,
        data_freshness: DataFreshness::Eod,
        trade_date: data_trade_date,
        message: format!("{situation}: the data shown is from the {data_trade_date} session."),
    }
}

/// The clock's freshness and, when the market is closed, why (`closed for the weekend`, …).
fn session_freshness(now: DateTime<Utc>, calendar: &NyseCalendar) -> (Freshness, String) {
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
        let live = Freshness {
            is_market_hours: true,
            data_freshness: DataFreshness::Live,
            trade_date: state.trade_date,
            message: format!(
                "Market open: live data for the {} session, which {closes}.",
                state.trade_date
            ),
        };
        return (live, "open".to_owned());
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
    let closed = Freshness {
        is_market_hours: false,
        data_freshness: DataFreshness::Eod,
        trade_date: state.trade_date,
        message: format!(
            "Market {why}: end-of-day data from the {} session. The next session opens {} ET.",
            state.trade_date,
            next_open.format("%Y-%m-%d %H:%M")
        ),
    };
    (closed, why)
}

#[cfg(test)]
mod tests;
