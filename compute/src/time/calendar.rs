//! The NYSE trading calendar ([`NyseCalendar`]) and its session types.

use std::ops::RangeInclusive;

use chrono::{
    DateTime, Datelike, LocalResult, NaiveDate, NaiveTime, Offset, TimeDelta, TimeZone, Utc,
    Weekday,
};
use chrono_tz::Tz;

/// The time zone of the NYSE and of every session time in this module.
pub const NEW_YORK: Tz = chrono_tz::America::New_York;

/// Regular session open, New York time.
pub const REGULAR_OPEN: NaiveTime = hms(9, 30);

/// Regular session close, New York time.
pub const REGULAR_CLOSE: NaiveTime = hms(16, 0);

/// Close on a scheduled early-close day, New York time (since 1993; it was 14:00 before).
pub const EARLY_CLOSE: NaiveTime = hms(13, 0);

/// Close on the scheduled early-close days before 1993, New York time.
const EARLY_CLOSE_BEFORE_1993: NaiveTime = hms(14, 0);

/// Years for which [`NyseCalendar`] is meant to match NYSE exactly (history from 1990, current
/// rules through 2100); outside them its rules are extrapolated.
pub const VALIDATED_YEARS: RangeInclusive<i32> = 1990..=2100;

const fn hms(hour: u32, minute: u32) -> NaiveTime {
    match NaiveTime::from_hms_opt(hour, minute, 0) {
        Some(time) => time,
        None => panic!("invalid constant time"),
    }
}

const fn ymd(year: i32, month: u32, day: u32) -> NaiveDate {
    match NaiveDate::from_ymd_opt(year, month, day) {
        Some(date) => date,
        None => panic!("invalid constant date"),
    }
}

/// Unscheduled full-day closures since 1990, in date order, with the reason.
const UNSCHEDULED_CLOSURES: &[(NaiveDate, &str)] = &[
    (
        ymd(1994, 4, 27),
        "National Day of Mourning for President Richard Nixon",
    ),
    (ymd(2001, 9, 11), "September 11 attacks"),
    (ymd(2001, 9, 12), "September 11 attacks"),
    (ymd(2001, 9, 13), "September 11 attacks"),
    (ymd(2001, 9, 14), "September 11 attacks"),
    (
        ymd(2004, 6, 11),
        "National Day of Mourning for President Ronald Reagan",
    ),
    (
        ymd(2007, 1, 2),
        "National Day of Mourning for President Gerald Ford",
    ),
    (ymd(2012, 10, 29), "Hurricane Sandy"),
    (ymd(2012, 10, 30), "Hurricane Sandy"),
    (
        ymd(2018, 12, 5),
        "National Day of Mourning for President George H. W. Bush",
    ),
    (
        ymd(2025, 1, 9),
        "National Day of Mourning for President Jimmy Carter",
    ),
];

/// Early closes NYSE scheduled outside the recurring rules (the day after Christmas).
const AD_HOC_EARLY_CLOSES: &[(NaiveDate, NaiveTime)] = &[
    (ymd(1997, 12, 26), EARLY_CLOSE),
    (ymd(2003, 12, 26), EARLY_CLOSE),
];

/// One regular trading session of the NYSE.
///
/// `open` and `close` are in America/New_York, so they print with the offset (EST or EDT) in
/// force that day; convert with [`DateTime::with_timezone`] for UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Session {
    /// The trade date (New York calendar date) of the session.
    pub date: NaiveDate,
    /// 09:30 New York time.
    pub open: DateTime<Tz>,
    /// 16:00 New York time, or the early-close time on early-close days (13:00; 14:00 before
    /// 1993).
    pub close: DateTime<Tz>,
}

impl Session {
    /// True when the session closes before the regular 16:00.
    pub fn is_early_close(&self) -> bool {
        self.close.time() < REGULAR_CLOSE
    }

    /// True when `at` falls within the session: `open <= at < close`.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.open <= at && at < self.close
    }

    /// Length of the session (6h30 regular, 3h30 on a 13:00 early close).
    pub fn duration(&self) -> TimeDelta {
        self.close.signed_duration_since(self.open)
    }
}

/// The state of the NYSE regular session at one instant; see [`NyseCalendar::market_state`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MarketState {
    /// True when the instant falls in a regular session (open inclusive, close exclusive).
    pub is_open: bool,
    /// The trade date the instant belongs to: the session in progress when open, otherwise the
    /// most recent session that has closed (Saturday → Friday; Monday 08:00 → the previous
    /// Friday; Monday 17:00 → Monday).
    pub trade_date: NaiveDate,
    /// The open of the next session that starts strictly after the instant (when the market is
    /// open, that is the next trading day's open).
    pub next_open: DateTime<Tz>,
    /// The close of the session in progress when open, otherwise of the next session.
    pub next_close: DateTime<Tz>,
}

/// The NYSE trading calendar: holidays, unscheduled closures, early closes and regular-session
/// times, derived from rules (no data files) plus two small constant tables.
///
/// Zero-sized: construct it with `NyseCalendar` or `NyseCalendar::default()`. All methods are
/// pure and total: they never panic and never read the clock.
///
/// # Rules
///
/// Weekends are never trading days. The full-day holidays are the ones NYSE Rule 7.2 lists:
///
/// | holiday | date | when it falls on a weekend |
/// | --- | --- | --- |
/// | New Year's Day | January 1 | Sunday → Monday; Saturday → **not** observed (Friday Dec 31 trades) |
/// | Martin Luther King, Jr. Day | 3rd Monday of January, from 1998 | — |
/// | Washington's Birthday | 3rd Monday of February | — |
/// | Good Friday | Gregorian Easter Sunday − 2 days | — |
/// | Memorial Day | last Monday of May | — |
/// | Juneteenth National Independence Day | June 19, from 2022 | Saturday → Friday, Sunday → Monday |
/// | Independence Day | July 4 | Saturday → Friday, Sunday → Monday |
/// | Labor Day | 1st Monday of September | — |
/// | Thanksgiving Day | 4th Thursday of November | — |
/// | Christmas Day | December 25 | Saturday → Friday, Sunday → Monday |
///
/// On top of these, the unscheduled full-day closures since 1990 (days of mourning, September 11,
/// Hurricane Sandy) come from a constant table.
///
/// The regular session runs 09:30–16:00 America/New_York. Early closes are at 13:00 (14:00
/// before 1993):
///
/// - the trading day before Independence Day: July 3 when it is a Monday, Tuesday or Thursday
///   (from 1995) or a Wednesday (from 2013). From 1996 to 2012 a Wednesday July 3 was a full day
///   and the Friday after (July 5) closed early instead. When July 4 is a Saturday, Friday July 3
///   is the observed holiday and Thursday July 2 is a full day; when it is a Sunday or a Monday,
///   the Friday before is a full day.
/// - the day after Thanksgiving (from 1993; 14:00 in 1992; a full day before that);
/// - Christmas Eve when it falls Monday to Thursday (a Friday December 24 is the observed
///   Christmas holiday);
/// - the ad hoc early closes NYSE scheduled on 1997-12-26 and 2003-12-26.
///
/// Intraday disruptions (trading halts, delayed openings such as 2002-09-11) are not modelled:
/// every session opens at 09:30.
///
/// # Years covered
///
/// The calendar is meant to be right for [`VALIDATED_YEARS`] (1990–2100): NYSE's actual history
/// from 1990, its published calendars, and its current rules projected to 2100. Outside that
/// range every method still answers, without panicking, by applying the same rules: before 1990
/// that is a proleptic approximation (NYSE's older rules and closures differed), after 2100 a
/// projection. [`is_validated`](Self::is_validated) tells the two apart.
///
/// Session instants come from the tz database compiled into `chrono-tz`, which lists explicit
/// daylight-saving transitions through 2099 only: from 2100 on, `chrono-tz` keeps New York on
/// standard time all year, so summer sessions in 2100 and later are one hour off in UTC. This is
/// a limitation of the dependency, not of the calendar rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NyseCalendar;

impl NyseCalendar {
    /// True when `date`'s year is in [`VALIDATED_YEARS`]; outside it the rules are extrapolated.
    pub fn is_validated(&self, date: NaiveDate) -> bool {
        VALIDATED_YEARS.contains(&date.year())
    }

    /// The name of the holiday or closure that closes the exchange on `date`, or `None`.
    ///
    /// Weekends return `None` (they are not holidays, just not trading days). A holiday moved
    /// off a weekend is reported on the day the exchange closes, with an " (observed)" suffix,
    /// e.g. `"Independence Day (observed)"` on Friday 2026-07-03.
    pub fn holiday(&self, date: NaiveDate) -> Option<&'static str> {
        if is_weekend(date) {
            return None;
        }
        if let Some(reason) = unscheduled_closure(date) {
            return Some(reason);
        }
        let (year, day, weekday) = (date.year(), date.day(), date.weekday());
        match date.month() {
            1 if day == 1 => Some("New Year's Day"),
            1 if day == 2 && weekday == Weekday::Mon => Some("New Year's Day (observed)"),
            1 if year >= 1998 && weekday == Weekday::Mon && (15..=21).contains(&day) => {
                Some("Martin Luther King, Jr. Day")
            }
            2 if weekday == Weekday::Mon && (15..=21).contains(&day) => {
                Some("Washington's Birthday")
            }
            3 | 4 if weekday == Weekday::Fri && is_good_friday(date) => Some("Good Friday"),
            5 if weekday == Weekday::Mon && day >= 25 => Some("Memorial Day"),
            6 if year >= 2022 => fixed_date_holiday(
                date,
                19,
                "Juneteenth National Independence Day",
                "Juneteenth National Independence Day (observed)",
            ),
            7 => fixed_date_holiday(date, 4, "Independence Day", "Independence Day (observed)"),
            9 if weekday == Weekday::Mon && day <= 7 => Some("Labor Day"),
            11 if weekday == Weekday::Thu && (22..=28).contains(&day) => Some("Thanksgiving Day"),
            12 => fixed_date_holiday(date, 25, "Christmas Day", "Christmas Day (observed)"),
            _ => None,
        }
    }

    /// True when the exchange holds a regular session on `date`: a weekday that is not a
    /// holiday or closure.
    pub fn is_trading_day(&self, date: NaiveDate) -> bool {
        !is_weekend(date) && self.holiday(date).is_none()
    }

    /// The early close time (New York) when `date` is a trading day that closes before 16:00,
    /// otherwise `None` (regular day, weekend or holiday).
    pub fn early_close(&self, date: NaiveDate) -> Option<NaiveTime> {
        if !self.is_trading_day(date) {
            return None;
        }
        if let Ok(i) = AD_HOC_EARLY_CLOSES.binary_search_by_key(&date, |&(d, _)| d) {
            return Some(AD_HOC_EARLY_CLOSES[i].1);
        }
        let (year, day, weekday) = (date.year(), date.day(), date.weekday());
        let early = match (date.month(), day) {
            // The day before Independence Day. July 3 on a Friday is never reached here: it is
            // the observed holiday.
            (7, 3) => match weekday {
                Weekday::Mon | Weekday::Tue | Weekday::Thu => year >= 1995,
                Weekday::Wed => year >= 2013,
                _ => false,
            },
            // 1996–2012: when July 4 was a Thursday, the Friday after closed early.
            (7, 5) => weekday == Weekday::Fri && (1996..=2012).contains(&year),
            // The day after Thanksgiving (Thanksgiving is Nov 22–28).
            (11, 23..=29) => weekday == Weekday::Fri && year >= 1992,
            // Christmas Eve, Monday to Thursday.
            (12, 24) => true,
            _ => false,
        };
        early.then_some(if year >= 1993 {
            EARLY_CLOSE
        } else {
            EARLY_CLOSE_BEFORE_1993
        })
    }

    /// The regular session on `date`, or `None` when `date` is not a trading day.
    pub fn session(&self, date: NaiveDate) -> Option<Session> {
        self.is_trading_day(date).then(|| self.session_times(date))
    }

    /// The first trading day strictly after `date`.
    ///
    /// Saturates at chrono's last representable date (`NaiveDate::MAX`, year 262 142) rather than
    /// panicking; only there can the result fail to be a later trading day.
    pub fn next_trading_day(&self, date: NaiveDate) -> NaiveDate {
        let mut day = date;
        while let Some(next) = day.succ_opt() {
            if self.is_trading_day(next) {
                return next;
            }
            day = next;
        }
        day
    }

    /// The last trading day strictly before `date`.
    ///
    /// Saturates at chrono's first representable date (`NaiveDate::MIN`) rather than panicking;
    /// only there can the result fail to be an earlier trading day.
    pub fn previous_trading_day(&self, date: NaiveDate) -> NaiveDate {
        let mut day = date;
        while let Some(previous) = day.pred_opt() {
            if self.is_trading_day(previous) {
                return previous;
            }
            day = previous;
        }
        day
    }

    /// The trading days `d` with `from <= d <= to`, in order (empty when `from > to`).
    pub fn trading_days(
        &self,
        from: NaiveDate,
        to: NaiveDate,
    ) -> impl Iterator<Item = NaiveDate> + use<> {
        let calendar = *self;
        from.iter_days()
            .take_while(move |day| *day <= to)
            .filter(move |day| calendar.is_trading_day(*day))
    }

    /// The number of trading days `d` with `from <= d <= to` (both ends inclusive, 0 when
    /// `from > to`): the length of [`trading_days`](Self::trading_days). Saturates at
    /// `u32::MAX`.
    pub fn count_trading_days(&self, from: NaiveDate, to: NaiveDate) -> u32 {
        u32::try_from(self.trading_days(from, to).count()).unwrap_or(u32::MAX)
    }

    /// Whether the regular session is open at `at`, which trade date `at` belongs to, and when
    /// the market next opens and closes. See [`MarketState`].
    pub fn market_state(&self, at: DateTime<Utc>) -> MarketState {
        let today = new_york_date(at);
        let next_session = |after: NaiveDate| self.session_times(self.next_trading_day(after));
        if self.is_trading_day(today) {
            let session = self.session_times(today);
            if at < session.open {
                return MarketState {
                    is_open: false,
                    trade_date: self.previous_trading_day(today),
                    next_open: session.open,
                    next_close: session.close,
                };
            }
            if at < session.close {
                return MarketState {
                    is_open: true,
                    trade_date: today,
                    next_open: next_session(today).open,
                    next_close: session.close,
                };
            }
            let next = next_session(today);
            return MarketState {
                is_open: false,
                trade_date: today,
                next_open: next.open,
                next_close: next.close,
            };
        }
        let next = next_session(today);
        MarketState {
            is_open: false,
            trade_date: self.previous_trading_day(today),
            next_open: next.open,
            next_close: next.close,
        }
    }

    /// Session open/close on `date` whether or not it trades (the early close applies only to
    /// trading days, so a non-trading day gets the regular times).
    fn session_times(&self, date: NaiveDate) -> Session {
        let close = self.early_close(date).unwrap_or(REGULAR_CLOSE);
        Session {
            date,
            open: new_york_datetime(date, REGULAR_OPEN),
            close: new_york_datetime(date, close),
        }
    }
}

/// `date` at wall-clock `time` in New York, with the UTC offset (EST/EDT) in force then.
///
/// Total: an ambiguous time (the repeated hour when daylight saving ends) resolves to the earlier
/// instant; a time inside the spring-forward gap is moved forward by the gap (02:30 → 03:30 EDT).
/// Market times (09:30, 13:00, 16:00) are never affected.
pub fn new_york_datetime(date: NaiveDate, time: NaiveTime) -> DateTime<Tz> {
    let local = date.and_time(time);
    match NEW_YORK.from_local_datetime(&local) {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => at,
        LocalResult::None => local
            .checked_add_signed(TimeDelta::hours(1))
            .and_then(|shifted| NEW_YORK.from_local_datetime(&shifted).earliest())
            // Unreachable with the New York rules (gaps are one hour); read as UTC rather
            // than panic.
            .unwrap_or_else(|| NEW_YORK.from_utc_datetime(&local)),
    }
}

/// The New York calendar date of the instant `at`.
///
/// Total: at chrono's lower limit, where the New York date is not representable, this returns
/// the UTC date instead of panicking.
pub fn new_york_date(at: DateTime<Utc>) -> NaiveDate {
    let utc = at.naive_utc();
    let offset = NEW_YORK.offset_from_utc_datetime(&utc).fix();
    utc.checked_add_offset(offset)
        .map_or_else(|| utc.date(), |local| local.date())
}

fn is_weekend(date: NaiveDate) -> bool {
    matches!(date.weekday(), Weekday::Sat | Weekday::Sun)
}

fn unscheduled_closure(date: NaiveDate) -> Option<&'static str> {
    UNSCHEDULED_CLOSURES
        .binary_search_by_key(&date, |&(d, _)| d)
        .ok()
        .map(|i| UNSCHEDULED_CLOSURES[i].1)
}

/// For a holiday fixed on day `day` of `date`'s month that moves off weekends (Saturday →
/// Friday, Sunday → Monday): `name` when the weekday `date` is the holiday itself,
/// `observed_name` when it is the day the holiday moved to, `None` otherwise.
fn fixed_date_holiday(
    date: NaiveDate,
    day: u32,
    name: &'static str,
    observed_name: &'static str,
) -> Option<&'static str> {
    let on = date.day();
    if on == day {
        Some(name)
    } else if (date.weekday() == Weekday::Fri && on + 1 == day)
        || (date.weekday() == Weekday::Mon && on == day + 1)
    {
        Some(observed_name)
    } else {
        None
    }
}

fn is_good_friday(date: NaiveDate) -> bool {
    easter_sunday(date.year())
        .and_then(|easter| easter.checked_sub_signed(TimeDelta::days(2)))
        .is_some_and(|good_friday| good_friday == date)
}

/// Gregorian Easter Sunday of `year` (the anonymous Gregorian computus of Meeus, Jones and
/// Butcher, exact for every Gregorian year); `None` only if chrono cannot represent the date.
pub(crate) fn easter_sunday(year: i32) -> Option<NaiveDate> {
    let y = i64::from(year);
    let a = y.rem_euclid(19);
    let b = y.div_euclid(100);
    let c = y.rem_euclid(100);
    let d = b.div_euclid(4);
    let e = b.rem_euclid(4);
    let f = (b + 8).div_euclid(25);
    let g = (b - f + 1).div_euclid(3);
    let h = (19 * a + b - d - g + 15).rem_euclid(30);
    let i = c.div_euclid(4);
    let k = c.rem_euclid(4);
    let l = (32 + 2 * e + 2 * i - h - k).rem_euclid(7);
    let m = (a + 11 * h + 22 * l).div_euclid(451);
    let month = (h + l - 7 * m + 114).div_euclid(31);
    let day = (h + l - 7 * m + 114).rem_euclid(31) + 1;
    NaiveDate::from_ymd_opt(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)
}

#[cfg(test)]
mod tests;
