use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, TimeDelta, TimeZone, Utc, Weekday};

use super::*;

const CAL: NyseCalendar = NyseCalendar;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn time(hour: u32, minute: u32) -> NaiveTime {
    NaiveTime::from_hms_opt(hour, minute, 0).unwrap()
}

fn utc(year: i32, month: u32, day: u32, hour: u32, minute: u32, second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, hour, minute, second)
        .unwrap()
}

/// `hour:minute` New York time on the given date, as UTC.
fn ny(year: i32, month: u32, day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
    new_york_datetime(date(year, month, day), time(hour, minute)).with_timezone(&Utc)
}

fn year_days(year: i32) -> impl Iterator<Item = NaiveDate> {
    date(year, 1, 1)
        .iter_days()
        .take_while(move |d| d.year() == year)
}

/// Asserts that the weekday closures of `year` are exactly `expected` (date, name), and its early
/// closes exactly `early` (all at 13:00).
fn assert_year(year: i32, expected: &[(NaiveDate, &str)], early: &[NaiveDate]) {
    let closed: Vec<(NaiveDate, &str)> = year_days(year)
        .filter(|d| !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
        .filter_map(|d| CAL.holiday(d).map(|name| (d, name)))
        .collect();
    assert_eq!(closed, expected, "holidays of {year}");
    for &(day, _) in expected {
        assert!(!CAL.is_trading_day(day), "{day} must be closed");
        assert_eq!(CAL.session(day), None);
    }
    let early_closes: Vec<NaiveDate> = year_days(year)
        .filter(|d| CAL.early_close(*d).is_some())
        .collect();
    assert_eq!(early_closes, early, "early closes of {year}");
    for &day in early {
        assert_eq!(CAL.early_close(day), Some(time(13, 0)));
        assert!(CAL.is_trading_day(day));
    }
}

#[test]
fn nyse_calendar_2024() {
    assert_year(
        2024,
        &[
            (date(2024, 1, 1), "New Year's Day"),
            (date(2024, 1, 15), "Martin Luther King, Jr. Day"),
            (date(2024, 2, 19), "Washington's Birthday"),
            (date(2024, 3, 29), "Good Friday"),
            (date(2024, 5, 27), "Memorial Day"),
            (date(2024, 6, 19), "Juneteenth National Independence Day"),
            (date(2024, 7, 4), "Independence Day"),
            (date(2024, 9, 2), "Labor Day"),
            (date(2024, 11, 28), "Thanksgiving Day"),
            (date(2024, 12, 25), "Christmas Day"),
        ],
        &[date(2024, 7, 3), date(2024, 11, 29), date(2024, 12, 24)],
    );
}

#[test]
fn nyse_calendar_2025() {
    assert_year(
        2025,
        &[
            (date(2025, 1, 1), "New Year's Day"),
            (
                date(2025, 1, 9),
                "National Day of Mourning for President Jimmy Carter",
            ),
            (date(2025, 1, 20), "Martin Luther King, Jr. Day"),
            (date(2025, 2, 17), "Washington's Birthday"),
            (date(2025, 4, 18), "Good Friday"),
            (date(2025, 5, 26), "Memorial Day"),
            (date(2025, 6, 19), "Juneteenth National Independence Day"),
            (date(2025, 7, 4), "Independence Day"),
            (date(2025, 9, 1), "Labor Day"),
            (date(2025, 11, 27), "Thanksgiving Day"),
            (date(2025, 12, 25), "Christmas Day"),
        ],
        &[date(2025, 7, 3), date(2025, 11, 28), date(2025, 12, 24)],
    );
}

#[test]
fn nyse_calendar_2026() {
    assert_year(
        2026,
        &[
            (date(2026, 1, 1), "New Year's Day"),
            (date(2026, 1, 19), "Martin Luther King, Jr. Day"),
            (date(2026, 2, 16), "Washington's Birthday"),
            (date(2026, 4, 3), "Good Friday"),
            (date(2026, 5, 25), "Memorial Day"),
            (date(2026, 6, 19), "Juneteenth National Independence Day"),
            (date(2026, 7, 3), "Independence Day (observed)"),
            (date(2026, 9, 7), "Labor Day"),
            (date(2026, 11, 26), "Thanksgiving Day"),
            (date(2026, 12, 25), "Christmas Day"),
        ],
        &[date(2026, 11, 27), date(2026, 12, 24)],
    );
    // July 4 on a Saturday: the observed holiday is Friday July 3 and Thursday July 2 is a full
    // day.
    assert_eq!(CAL.early_close(date(2026, 7, 2)), None);
    assert!(CAL.is_trading_day(date(2026, 7, 2)));
}

#[test]
fn nyse_calendar_2027() {
    assert_year(
        2027,
        &[
            (date(2027, 1, 1), "New Year's Day"),
            (date(2027, 1, 18), "Martin Luther King, Jr. Day"),
            (date(2027, 2, 15), "Washington's Birthday"),
            (date(2027, 3, 26), "Good Friday"),
            (date(2027, 5, 31), "Memorial Day"),
            (
                date(2027, 6, 18),
                "Juneteenth National Independence Day (observed)",
            ),
            (date(2027, 7, 5), "Independence Day (observed)"),
            (date(2027, 9, 6), "Labor Day"),
            (date(2027, 11, 25), "Thanksgiving Day"),
            (date(2027, 12, 24), "Christmas Day (observed)"),
        ],
        // No July early close (July 4 is a Sunday, Friday July 2 is a full day) and no Christmas
        // Eve early close (December 24 is the observed Christmas holiday).
        &[date(2027, 11, 26)],
    );
    assert!(CAL.is_trading_day(date(2027, 7, 2)));
    assert_eq!(CAL.early_close(date(2027, 7, 2)), None);
}

#[test]
fn published_trading_day_counts() {
    let count = |year| CAL.count_trading_days(date(year, 1, 1), date(year, 12, 31));
    assert_eq!(count(2023), 250);
    assert_eq!(count(2024), 252);
    assert_eq!(count(2025), 250);
    assert_eq!(count(2026), 251);
}

/// Trading days per year, 1990–2100, as computed by QuantLib's independent implementation of
/// the NYSE calendar (`UnitedStates(NYSE)`, QuantLib 1.44), whose holiday set agrees with this
/// calendar date for date over the whole range.
const TRADING_DAYS_PER_YEAR_1990: [u32; 111] = [
    253, 253, 254, 253, 252, 252, 254, 253, 252, 252, // 1990–1999
    252, 248, 252, 252, 252, 252, 251, 251, 253, 252, // 2000–2009
    252, 252, 250, 252, 252, 252, 252, 251, 251, 252, // 2010–2019
    253, 252, 251, 250, 252, 250, 251, 251, 251, 251, // 2020–2029
    251, 251, 252, 251, 250, 251, 252, 251, 251, 251, // 2030–2039
    251, 251, 251, 251, 251, 250, 251, 251, 252, 251, // 2040–2049
    251, 250, 252, 251, 251, 251, 251, 251, 251, 251, // 2050–2059
    252, 251, 250, 251, 252, 251, 251, 251, 251, 251, // 2060–2069
    251, 251, 251, 250, 251, 251, 252, 251, 251, 250, // 2070–2079
    252, 251, 251, 251, 251, 251, 251, 251, 252, 251, // 2080–2089
    250, 251, 252, 251, 251, 251, 251, 251, 251, 251, // 2090–2099
    251, // 2100
];

#[test]
fn trading_day_counts_1990_to_2100() {
    for (year, &expected) in (1990..=2100).zip(TRADING_DAYS_PER_YEAR_1990.iter()) {
        let counted = CAL.count_trading_days(date(year, 1, 1), date(year, 12, 31));
        assert_eq!(counted, expected, "trading days in {year}");
    }
}

#[test]
fn new_year_on_saturday_is_not_observed_on_friday() {
    for (friday, saturday) in [
        (date(2021, 12, 31), date(2022, 1, 1)),
        (date(2010, 12, 31), date(2011, 1, 1)),
        (date(2032, 12, 31), date(2033, 1, 1)),
    ] {
        assert_eq!(friday.weekday(), Weekday::Fri);
        assert!(CAL.is_trading_day(friday), "{friday}");
        assert_eq!(CAL.holiday(friday), None);
        assert_eq!(CAL.early_close(friday), None);
        assert!(!CAL.is_trading_day(saturday));
        assert_eq!(CAL.holiday(saturday), None, "weekends are not holidays");
    }
    // The Monday after is a regular day too.
    assert!(CAL.is_trading_day(date(2022, 1, 3)));
}

#[test]
fn new_year_on_sunday_is_observed_on_monday() {
    assert_eq!(
        CAL.holiday(date(2023, 1, 2)),
        Some("New Year's Day (observed)")
    );
    assert!(!CAL.is_trading_day(date(2023, 1, 2)));
    assert!(CAL.is_trading_day(date(2022, 12, 30)));
}

#[test]
fn juneteenth_weekend_observance_and_start() {
    // 2022: Sunday → Monday June 20 (its first year).
    assert_eq!(
        CAL.holiday(date(2022, 6, 20)),
        Some("Juneteenth National Independence Day (observed)")
    );
    // Before 2022 it is a trading day.
    assert!(CAL.is_trading_day(date(2021, 6, 18)));
    assert!(CAL.is_trading_day(date(2020, 6, 19)));
}

#[test]
fn martin_luther_king_day_from_1998() {
    assert!(CAL.is_trading_day(date(1997, 1, 20)));
    assert_eq!(
        CAL.holiday(date(1998, 1, 19)),
        Some("Martin Luther King, Jr. Day")
    );
}

#[test]
fn christmas_weekend_observance() {
    // Saturday → Friday (2021), Sunday → Monday (2022).
    assert_eq!(
        CAL.holiday(date(2021, 12, 24)),
        Some("Christmas Day (observed)")
    );
    assert_eq!(
        CAL.holiday(date(2022, 12, 26)),
        Some("Christmas Day (observed)")
    );
    assert_eq!(CAL.early_close(date(2021, 12, 23)), None);
    // Sunday → Monday Independence Day (2021).
    assert_eq!(
        CAL.holiday(date(2021, 7, 5)),
        Some("Independence Day (observed)")
    );
    assert!(CAL.is_trading_day(date(2021, 7, 2)));
    assert_eq!(CAL.early_close(date(2021, 7, 2)), None);
}

#[test]
fn unscheduled_closures() {
    let closures = [
        (date(1994, 4, 27), "Nixon"),
        (date(2001, 9, 11), "September 11"),
        (date(2001, 9, 12), "September 11"),
        (date(2001, 9, 13), "September 11"),
        (date(2001, 9, 14), "September 11"),
        (date(2004, 6, 11), "Reagan"),
        (date(2007, 1, 2), "Ford"),
        (date(2012, 10, 29), "Sandy"),
        (date(2012, 10, 30), "Sandy"),
        (date(2018, 12, 5), "Bush"),
        (date(2025, 1, 9), "Carter"),
    ];
    for (day, reason) in closures {
        let name = CAL
            .holiday(day)
            .unwrap_or_else(|| panic!("{day} must be closed"));
        assert!(name.contains(reason), "{day}: {name}");
        assert!(!CAL.is_trading_day(day));
    }
    assert_eq!(UNSCHEDULED_CLOSURES.len(), closures.len());
    assert!(UNSCHEDULED_CLOSURES.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(AD_HOC_EARLY_CLOSES.windows(2).all(|w| w[0].0 < w[1].0));
    // The market reopened on Monday 2001-09-17.
    assert_eq!(CAL.next_trading_day(date(2001, 9, 10)), date(2001, 9, 17));
    assert_eq!(
        CAL.previous_trading_day(date(2001, 9, 17)),
        date(2001, 9, 10)
    );
    assert_eq!(CAL.next_trading_day(date(2012, 10, 26)), date(2012, 10, 31));
}

#[test]
fn historical_early_close_rules() {
    // Since 2013 a Wednesday July 3 closes early and Friday July 5 is a full day.
    assert_eq!(CAL.early_close(date(2013, 7, 3)), Some(time(13, 0)));
    assert_eq!(CAL.early_close(date(2013, 7, 5)), None);
    assert_eq!(CAL.early_close(date(2019, 7, 3)), Some(time(13, 0)));
    // Before 2013 it was the other way round.
    assert_eq!(CAL.early_close(date(2002, 7, 3)), None);
    assert_eq!(CAL.early_close(date(2002, 7, 5)), Some(time(13, 0)));
    // July 3 on a Monday, Tuesday, Thursday.
    assert_eq!(CAL.early_close(date(2023, 7, 3)), Some(time(13, 0)));
    assert_eq!(CAL.early_close(date(2018, 7, 3)), Some(time(13, 0)));
    assert_eq!(CAL.early_close(date(2008, 7, 3)), Some(time(13, 0)));
    // July 4 on a Saturday: no early close on Thursday July 2.
    assert_eq!(CAL.early_close(date(2020, 7, 2)), None);
    assert_eq!(
        CAL.holiday(date(2020, 7, 3)),
        Some("Independence Day (observed)")
    );
    // 14:00 closes before 1993; no day-after-Thanksgiving early close before 1992.
    assert_eq!(CAL.early_close(date(1992, 11, 27)), Some(time(14, 0)));
    assert_eq!(CAL.early_close(date(1992, 12, 24)), Some(time(14, 0)));
    assert_eq!(CAL.early_close(date(1991, 11, 29)), None);
    assert_eq!(CAL.early_close(date(1993, 11, 26)), Some(time(13, 0)));
    // Ad hoc: the day after Christmas in 1997 and 2003.
    assert_eq!(CAL.early_close(date(1997, 12, 26)), Some(time(13, 0)));
    assert_eq!(CAL.early_close(date(2003, 12, 26)), Some(time(13, 0)));
    assert_eq!(CAL.early_close(date(2008, 12, 26)), None);
}

#[test]
fn early_closes_only_on_trading_days_and_holidays_only_on_weekdays() {
    let from = date(1990, 1, 1);
    let to = date(2100, 12, 31);
    for day in from.iter_days().take_while(|d| *d <= to) {
        let weekend = matches!(day.weekday(), Weekday::Sat | Weekday::Sun);
        if weekend {
            assert_eq!(CAL.holiday(day), None, "{day}");
        }
        assert_eq!(
            CAL.is_trading_day(day),
            !weekend && CAL.holiday(day).is_none()
        );
        assert_eq!(CAL.session(day).is_some(), CAL.is_trading_day(day));
        if CAL.early_close(day).is_some() {
            assert!(CAL.is_trading_day(day), "{day}");
        }
    }
}

#[test]
fn easter_computus() {
    let known = [
        (1818, 3, 22),
        (1943, 4, 25),
        (1990, 4, 15),
        (2000, 4, 23),
        (2008, 3, 23),
        (2011, 4, 24),
        (2019, 4, 21),
        (2024, 3, 31),
        (2025, 4, 20),
        (2026, 4, 5),
        (2027, 3, 28),
        (2038, 4, 25),
        (2100, 3, 28),
        (2285, 3, 22),
    ];
    for (year, month, day) in known {
        assert_eq!(easter_sunday(year), Some(date(year, month, day)), "{year}");
    }
    for year in 1583..=4099 {
        let easter = easter_sunday(year).unwrap();
        assert_eq!(easter.weekday(), Weekday::Sun, "{year}");
        assert!(easter >= date(year, 3, 22) && easter <= date(year, 4, 25));
    }
    // Total over chrono's whole range (no overflow, no panic).
    assert!(easter_sunday(NaiveDate::MIN.year()).is_some());
    assert!(easter_sunday(NaiveDate::MAX.year()).is_some());
}

#[test]
fn sessions_follow_daylight_saving() {
    // January (EST): 09:30–16:00 ET = 14:30–21:00 UTC.
    let january = CAL.session(date(2026, 1, 14)).unwrap();
    assert_eq!(january.open, utc(2026, 1, 14, 14, 30, 0));
    assert_eq!(january.close, utc(2026, 1, 14, 21, 0, 0));
    assert_eq!(january.close.time(), time(16, 0));
    assert!(!january.is_early_close());
    assert_eq!(january.duration(), TimeDelta::minutes(390));
    // July (EDT): 13:30–20:00 UTC.
    let july = CAL.session(date(2026, 7, 15)).unwrap();
    assert_eq!(july.open, utc(2026, 7, 15, 13, 30, 0));
    assert_eq!(july.close, utc(2026, 7, 15, 20, 0, 0));
    // Early close after DST ends: 13:00 EST = 18:00 UTC.
    let black_friday = CAL.session(date(2026, 11, 27)).unwrap();
    assert_eq!(black_friday.close, utc(2026, 11, 27, 18, 0, 0));
    assert!(black_friday.is_early_close());
    assert_eq!(black_friday.duration(), TimeDelta::minutes(210));
    // Early close under DST: 13:00 EDT = 17:00 UTC.
    let july_3 = CAL.session(date(2025, 7, 3)).unwrap();
    assert_eq!(july_3.close, utc(2025, 7, 3, 17, 0, 0));
    // The Friday before and the Monday after the 2026-03-08 change.
    assert_eq!(
        CAL.session(date(2026, 3, 6)).unwrap().close,
        utc(2026, 3, 6, 21, 0, 0)
    );
    assert_eq!(
        CAL.session(date(2026, 3, 9)).unwrap().close,
        utc(2026, 3, 9, 20, 0, 0)
    );
    // The last DST rule chrono-tz knows (2099) still applies.
    assert_eq!(
        CAL.session(date(2099, 7, 15)).unwrap().close,
        utc(2099, 7, 15, 20, 0, 0)
    );
}

#[test]
fn session_contains_is_half_open() {
    let session = CAL.session(date(2025, 6, 11)).unwrap();
    assert!(session.contains(ny(2025, 6, 11, 9, 30)));
    assert!(session.contains(ny(2025, 6, 11, 15, 59)));
    assert!(!session.contains(ny(2025, 6, 11, 16, 0)));
    assert!(!session.contains(ny(2025, 6, 11, 9, 29)));
    assert_eq!(session.date, date(2025, 6, 11));
}

#[test]
fn next_and_previous_trading_day() {
    // Weekend.
    assert_eq!(CAL.next_trading_day(date(2025, 6, 13)), date(2025, 6, 16));
    assert_eq!(
        CAL.previous_trading_day(date(2025, 6, 16)),
        date(2025, 6, 13)
    );
    // Strictly after / before even from a trading day.
    assert_eq!(CAL.next_trading_day(date(2025, 6, 11)), date(2025, 6, 12));
    assert_eq!(
        CAL.previous_trading_day(date(2025, 6, 11)),
        date(2025, 6, 10)
    );
    // From a weekend day.
    assert_eq!(CAL.next_trading_day(date(2025, 6, 14)), date(2025, 6, 16));
    assert_eq!(
        CAL.previous_trading_day(date(2025, 6, 15)),
        date(2025, 6, 13)
    );
    // Thanksgiving and Good Friday + weekend.
    assert_eq!(CAL.next_trading_day(date(2025, 11, 26)), date(2025, 11, 28));
    assert_eq!(CAL.next_trading_day(date(2025, 4, 17)), date(2025, 4, 21));
    assert_eq!(
        CAL.previous_trading_day(date(2025, 4, 21)),
        date(2025, 4, 17)
    );
    // Year end with New Year's Day.
    assert_eq!(CAL.next_trading_day(date(2025, 12, 31)), date(2026, 1, 2));
}

#[test]
fn trading_days_iterator() {
    let days: Vec<NaiveDate> = CAL
        .trading_days(date(2025, 1, 1), date(2025, 1, 10))
        .collect();
    assert_eq!(
        days,
        [
            date(2025, 1, 2),
            date(2025, 1, 3),
            date(2025, 1, 6),
            date(2025, 1, 7),
            date(2025, 1, 8),
            date(2025, 1, 10),
        ]
    );
    assert_eq!(
        CAL.count_trading_days(date(2025, 1, 1), date(2025, 1, 10)),
        6
    );
    // Inclusive at both ends.
    assert_eq!(
        CAL.count_trading_days(date(2025, 1, 2), date(2025, 1, 2)),
        1
    );
    assert_eq!(
        CAL.count_trading_days(date(2025, 1, 4), date(2025, 1, 4)),
        0
    );
    // Empty when reversed.
    assert_eq!(
        CAL.trading_days(date(2025, 1, 10), date(2025, 1, 1))
            .count(),
        0
    );
    assert_eq!(
        CAL.count_trading_days(date(2025, 1, 10), date(2025, 1, 1)),
        0
    );
    // The iterator does not borrow the calendar.
    let iter = {
        let calendar = NyseCalendar;
        calendar.trading_days(date(2025, 1, 1), date(2025, 1, 3))
    };
    assert_eq!(iter.count(), 2);
}

#[test]
fn market_state_open_mid_session() {
    // Wednesday 2025-06-11 10:00 EDT.
    let state = CAL.market_state(utc(2025, 6, 11, 14, 0, 0));
    assert_eq!(
        state,
        MarketState {
            is_open: true,
            trade_date: date(2025, 6, 11),
            next_open: new_york_datetime(date(2025, 6, 12), time(9, 30)),
            next_close: new_york_datetime(date(2025, 6, 11), time(16, 0)),
        }
    );
    // Open at 09:30 exactly and at 15:59:59.
    assert!(CAL.market_state(ny(2025, 6, 11, 9, 30)).is_open);
    assert!(CAL.market_state(utc(2025, 6, 11, 19, 59, 59)).is_open);
}

#[test]
fn market_state_at_the_close_is_closed() {
    // 16:00 EDT = 20:00 UTC exactly.
    let state = CAL.market_state(utc(2025, 6, 11, 20, 0, 0));
    assert!(!state.is_open);
    assert_eq!(state.trade_date, date(2025, 6, 11));
    assert_eq!(state.next_open, utc(2025, 6, 12, 13, 30, 0));
    assert_eq!(state.next_close, utc(2025, 6, 12, 20, 0, 0));
}

#[test]
fn market_state_before_the_open() {
    // Wednesday 09:29:59 EDT: the trade date is still Tuesday.
    let state = CAL.market_state(utc(2025, 6, 11, 13, 29, 59));
    assert!(!state.is_open);
    assert_eq!(state.trade_date, date(2025, 6, 10));
    assert_eq!(state.next_open, utc(2025, 6, 11, 13, 30, 0));
    // Monday 08:00 EDT → the previous Friday; Monday 17:00 EDT → Monday.
    let monday_morning = CAL.market_state(ny(2025, 6, 16, 8, 0));
    assert!(!monday_morning.is_open);
    assert_eq!(monday_morning.trade_date, date(2025, 6, 13));
    assert_eq!(monday_morning.next_open, ny(2025, 6, 16, 9, 30));
    let monday_evening = CAL.market_state(ny(2025, 6, 16, 17, 0));
    assert!(!monday_evening.is_open);
    assert_eq!(monday_evening.trade_date, date(2025, 6, 16));
    assert_eq!(monday_evening.next_open, ny(2025, 6, 17, 9, 30));
}

#[test]
fn market_state_on_a_weekend() {
    // Saturday noon EDT → Friday; opens Monday.
    let state = CAL.market_state(ny(2025, 6, 14, 12, 0));
    assert!(!state.is_open);
    assert_eq!(state.trade_date, date(2025, 6, 13));
    assert_eq!(state.next_open, utc(2025, 6, 16, 13, 30, 0));
    assert_eq!(state.next_close, utc(2025, 6, 16, 20, 0, 0));
    // Sunday 23:00 EDT is already Monday in UTC, but still Sunday in New York.
    let sunday_night = CAL.market_state(utc(2025, 6, 16, 3, 0, 0));
    assert_eq!(sunday_night.trade_date, date(2025, 6, 13));
    assert_eq!(sunday_night.next_open, utc(2025, 6, 16, 13, 30, 0));
}

#[test]
fn market_state_on_a_holiday_and_early_close() {
    // Independence Day 2025 (Friday) at 11:00 EDT: closed, trade date Thursday July 3, next
    // open Monday July 7.
    let state = CAL.market_state(ny(2025, 7, 4, 11, 0));
    assert!(!state.is_open);
    assert_eq!(state.trade_date, date(2025, 7, 3));
    assert_eq!(state.next_open, ny(2025, 7, 7, 9, 30));
    // July 3 2025 closes at 13:00 EDT.
    assert!(CAL.market_state(ny(2025, 7, 3, 12, 59)).is_open);
    let after_early_close = CAL.market_state(ny(2025, 7, 3, 13, 0));
    assert!(!after_early_close.is_open);
    assert_eq!(after_early_close.trade_date, date(2025, 7, 3));
    assert_eq!(after_early_close.next_open, ny(2025, 7, 7, 9, 30));
    // While open on an early-close day, next_close is 13:00.
    assert_eq!(
        CAL.market_state(ny(2025, 7, 3, 10, 0)).next_close,
        ny(2025, 7, 3, 13, 0)
    );
    // Carter day of mourning (Thursday 2025-01-09), in EST.
    let carter = CAL.market_state(utc(2025, 1, 9, 15, 0, 0));
    assert!(!carter.is_open);
    assert_eq!(carter.trade_date, date(2025, 1, 8));
    assert_eq!(carter.next_open, utc(2025, 1, 10, 14, 30, 0));
}

#[test]
fn out_of_range_years_apply_the_same_rules() {
    assert!(CAL.is_validated(date(1990, 1, 1)));
    assert!(CAL.is_validated(date(2100, 12, 31)));
    assert!(!CAL.is_validated(date(1989, 12, 31)));
    assert!(!CAL.is_validated(date(2101, 1, 1)));
    // 2150: Christmas on a Friday, Good Friday from the computus.
    assert_eq!(CAL.holiday(date(2150, 12, 25)), Some("Christmas Day"));
    let good_friday_2150 = easter_sunday(2150).unwrap() - TimeDelta::days(2);
    assert_eq!(CAL.holiday(good_friday_2150), Some("Good Friday"));
    assert!(CAL.count_trading_days(date(2150, 1, 1), date(2150, 12, 31)) > 240);
    // 1985: Hurricane Gloria (1985-09-27) is not in the table; the rules still answer.
    assert!(CAL.is_trading_day(date(1985, 9, 27)));
    assert_eq!(CAL.holiday(date(1985, 12, 25)), Some("Christmas Day"));
}

#[test]
fn extremes_do_not_panic() {
    for day in [
        NaiveDate::MIN,
        NaiveDate::MAX,
        NaiveDate::MIN.succ_opt().unwrap(),
        NaiveDate::MAX.pred_opt().unwrap(),
    ] {
        let _ = CAL.holiday(day);
        let _ = CAL.is_trading_day(day);
        let _ = CAL.early_close(day);
        let _ = CAL.session(day);
        let _ = CAL.next_trading_day(day);
        let _ = CAL.previous_trading_day(day);
        let _ = CAL.count_trading_days(day, day);
    }
    assert!(CAL.next_trading_day(NaiveDate::MAX) <= NaiveDate::MAX);
    assert!(CAL.previous_trading_day(NaiveDate::MIN) >= NaiveDate::MIN);
    for at in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
        let _ = CAL.market_state(at);
        let _ = new_york_date(at);
    }
}

#[test]
fn new_york_datetime_is_total_around_dst_changes() {
    // Gap (2026-03-08 02:30 does not exist): moved forward to 03:30 EDT = 07:30 UTC.
    assert_eq!(
        new_york_datetime(date(2026, 3, 8), time(2, 30)).with_timezone(&Utc),
        utc(2026, 3, 8, 7, 30, 0)
    );
    // Ambiguous (2026-11-01 01:30 happens twice): the earlier, EDT = 05:30 UTC.
    assert_eq!(
        new_york_datetime(date(2026, 11, 1), time(1, 30)).with_timezone(&Utc),
        utc(2026, 11, 1, 5, 30, 0)
    );
    assert_eq!(
        new_york_date(utc(2026, 1, 2, 3, 0, 0)),
        date(2026, 1, 1),
        "03:00 UTC is still the previous evening in New York"
    );
}
