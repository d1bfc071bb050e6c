//! Expected values come from the published NYSE calendar (2026 holidays and early closes) and
//! the US daylight-saving dates, not from the code under test.

use super::*;
use chrono::TimeZone;

fn at(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, min, 0).unwrap()
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn regular_session_is_live() {
    // Friday 2026-11-20 15:00 UTC = 10:00 EST.
    let f = freshness(at(2026, 11, 20, 15, 0), &NyseCalendar);
    assert!(f.is_market_hours);
    assert_eq!(f.data_freshness, DataFreshness::Live);
    assert_eq!(f.trade_date, date(2026, 11, 20));
    assert_eq!(
        f.message,
        "Market open: live data for the 2026-11-20 session, which closes at 16:00 ET."
    );
    // Summer time: Thursday 2026-07-02 13:45 UTC = 09:45 EDT (open); 13:15 UTC = 09:15 EDT.
    assert!(freshness(at(2026, 7, 2, 13, 45), &NyseCalendar).is_market_hours);
    assert!(!freshness(at(2026, 7, 2, 13, 15), &NyseCalendar).is_market_hours);
}

#[test]
fn after_the_close_is_that_sessions_eod() {
    // Friday 2026-11-20 21:30 UTC = 16:30 EST.
    let f = freshness(at(2026, 11, 20, 21, 30), &NyseCalendar);
    assert!(!f.is_market_hours);
    assert_eq!(f.data_freshness, DataFreshness::Eod);
    assert_eq!(f.trade_date, date(2026, 11, 20));
    assert_eq!(
        f.message,
        "Market closed for the day: end-of-day data from the 2026-11-20 session. The next \
         session opens 2026-11-23 09:30 ET."
    );
    // The close itself (16:00 EST = 21:00 UTC) is already closed.
    assert!(!freshness(at(2026, 11, 20, 21, 0), &NyseCalendar).is_market_hours);
}

#[test]
fn before_the_open_serves_the_previous_session() {
    // Monday 2026-11-23 13:00 UTC = 08:00 EST.
    let f = freshness(at(2026, 11, 23, 13, 0), &NyseCalendar);
    assert_eq!(f.data_freshness, DataFreshness::Eod);
    assert_eq!(f.trade_date, date(2026, 11, 20));
    assert!(
        f.message
            .starts_with("Market not open yet: end-of-day data from the 2026-11-20")
    );
    assert!(f.message.ends_with("opens 2026-11-23 09:30 ET."));
}

#[test]
fn weekend() {
    // Saturday 2026-11-21 17:00 UTC.
    let f = freshness(at(2026, 11, 21, 17, 0), &NyseCalendar);
    assert!(!f.is_market_hours);
    assert_eq!(f.trade_date, date(2026, 11, 20));
    assert!(
        f.message
            .starts_with("Market closed for the weekend: end-of-day data from the 2026-11-20")
    );
}

#[test]
fn holiday() {
    // Thanksgiving, Thursday 2026-11-26, 15:00 UTC = 10:00 EST.
    let f = freshness(at(2026, 11, 26, 15, 0), &NyseCalendar);
    assert!(!f.is_market_hours);
    assert_eq!(f.trade_date, date(2026, 11, 25));
    assert_eq!(
        f.message,
        "Market closed for Thanksgiving Day: end-of-day data from the 2026-11-25 session. The \
         next session opens 2026-11-27 09:30 ET."
    );
}

#[test]
fn early_close() {
    // Friday 2026-11-27, the day after Thanksgiving, closes at 13:00 EST (18:00 UTC).
    let open = freshness(at(2026, 11, 27, 17, 0), &NyseCalendar);
    assert!(open.is_market_hours);
    assert_eq!(
        open.message,
        "Market open: live data for the 2026-11-27 session, which closes early at 13:00 ET."
    );
    let closed = freshness(at(2026, 11, 27, 18, 30), &NyseCalendar);
    assert!(!closed.is_market_hours);
    assert_eq!(closed.trade_date, date(2026, 11, 27));
    assert!(closed.message.starts_with("Market closed for the day"));
    assert!(closed.message.ends_with("opens 2026-11-30 09:30 ET."));
}

#[test]
fn serializes_with_the_spec_field_names() {
    let f = freshness(at(2026, 11, 20, 15, 0), &NyseCalendar);
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!(json["is_market_hours"], true);
    assert_eq!(json["data_freshness"], "LIVE");
    assert_eq!(json["trade_date"], "2026-11-20");
    let eod = serde_json::to_value(freshness(at(2026, 11, 21, 15, 0), &NyseCalendar)).unwrap();
    assert_eq!(eod["data_freshness"], "EOD");
}

#[test]
fn data_of_an_earlier_session_is_never_live() {
    // Friday 2026-11-20 15:00 UTC: the session is open, but the data is Thursday's.
    let now = at(2026, 11, 20, 15, 0);
    let stale = freshness_of_session(now, &NyseCalendar, date(2026, 11, 19));
    assert!(stale.is_market_hours);
    assert_eq!(stale.data_freshness, DataFreshness::Eod);
    assert_eq!(stale.trade_date, date(2026, 11, 19));
    assert_eq!(
        stale.message,
        "Market open, but the 2026-11-20 session's data has not arrived: the data shown is \
         from the 2026-11-19 session."
    );
    // The session's own data is labelled as freshness() labels it.
    assert_eq!(
        freshness_of_session(now, &NyseCalendar, date(2026, 11, 20)),
        freshness(now, &NyseCalendar)
    );
    // Saturday: the last session is Friday's; Thursday's data says so.
    let weekend = freshness_of_session(at(2026, 11, 21, 15, 0), &NyseCalendar, date(2026, 11, 19));
    assert!(!weekend.is_market_hours);
    assert_eq!(weekend.data_freshness, DataFreshness::Eod);
    assert_eq!(weekend.trade_date, date(2026, 11, 19));
    assert!(
        weekend
            .message
            .starts_with("Market closed for the weekend, but the end of day of the 2026-11-20"),
        "{}",
        weekend.message
    );
}
