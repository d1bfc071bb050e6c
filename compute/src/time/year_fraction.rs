//! Time to expiry as a year fraction: calendar time, ACT/365 fixed, in fractional seconds, measured
//! to the close of the expiration day's session: 16:00 America/New_York, or 13:00 on the NYSE's
//! early-close days, when options expiring that day stop trading too.
//!
//! A contract expiring on 2026-11-27 (the day after Thanksgiving) therefore has no time left
//! from 13:00 that day: priced at 14:00 it is expired, not three hours from expiry. A date
//! that is not a trading day (a weekend, a holiday: no listed contract expires on one) keeps
//! 16:00, so the year fraction stays a total function of `(now, expiration)`.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

use super::calendar::{NyseCalendar, REGULAR_CLOSE, new_york_date, new_york_datetime};

/// Seconds in a day (calendar time, no leap seconds).
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// Days in a year of the time basis: ACT/365 fixed. Time-decay Greeks (theta, charm, color, …)
/// are quoted per calendar day, i.e. per `1 / DAYS_PER_YEAR` of a year.
pub const DAYS_PER_YEAR: f64 = 365.0;

/// Seconds in a year of the time basis (365 × 86 400 = 31 536 000): a year fraction is elapsed
/// seconds divided by this.
pub const SECONDS_PER_YEAR: f64 = 365.0 * 86_400.0;

/// The wall-clock time (New York) at which an option expires on a regular day: 16:00. Early
/// closes end the day at [`super::EARLY_CLOSE`] instead ([`expiration_close_utc`]).
pub const EXPIRY_CLOSE: NaiveTime = REGULAR_CLOSE;

/// The expiry instant of `expiration`, in UTC: the close of that day's session — 16:00
/// America/New_York (20:00 UTC under daylight saving time, 21:00 UTC under standard time), or
/// 13:00 on an early-close day — and 16:00 on a date without a session.
pub fn expiration_close_utc(expiration: NaiveDate) -> DateTime<Utc> {
    let close = NyseCalendar.early_close(expiration).unwrap_or(EXPIRY_CLOSE);
    new_york_datetime(expiration, close).with_timezone(&Utc)
}

/// Calendar time from `from` to `to` in years: elapsed seconds (fractional) divided by
/// [`SECONDS_PER_YEAR`]. Negative when `to` is before `from`.
pub fn year_fraction(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    let elapsed = to.signed_duration_since(from);
    // `num_seconds` and `subsec_nanos` carry the same sign, so their sum is exact to the
    // nanosecond (f64 permitting) for negative spans too.
    let seconds = elapsed.num_seconds() as f64 + f64::from(elapsed.subsec_nanos()) * 1e-9;
    seconds / SECONDS_PER_YEAR
}

/// Time from `now` to the expiry instant of `expiration` ([`expiration_close_utc`]), in years of
/// 365 days (calendar time, fractional seconds).
///
/// Zero at the close of expiration day ([`expiration_close_utc`]) and **negative** afterwards: an expired option
/// keeps a (small) negative value rather than being clamped, so callers decide how to treat it
/// (pricing code typically treats `t <= 0` as intrinsic value).
pub fn years_to_expiry(now: DateTime<Utc>, expiration: NaiveDate) -> f64 {
    year_fraction(now, expiration_close_utc(expiration))
}

/// Calendar days from the New York date of `now` to `expiration`: the integer "days to expiry"
/// (DTE) of the API. 0 on expiration day (all of it, including after the close), 1 the day
/// before, negative once the expiration date has passed.
pub fn days_to_expiry(now: DateTime<Utc>, expiration: NaiveDate) -> i64 {
    expiration
        .signed_duration_since(new_york_date(now))
        .num_days()
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};

    use super::*;

    fn date(year: i32, month: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(year, month, day).unwrap()
    }

    fn utc(year: i32, month: u32, day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(year, month, day, hour, minute, 0)
            .unwrap()
    }

    #[test]
    fn time_basis_constants() {
        assert_eq!(SECONDS_PER_YEAR, 31_536_000.0);
        assert_eq!(SECONDS_PER_YEAR, DAYS_PER_YEAR * SECONDS_PER_DAY);
        assert_eq!(EXPIRY_CLOSE, NaiveTime::from_hms_opt(16, 0, 0).unwrap());
    }

    #[test]
    fn expiration_close_follows_daylight_saving() {
        assert_eq!(
            expiration_close_utc(date(2026, 1, 16)),
            utc(2026, 1, 16, 21, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 7, 17)),
            utc(2026, 7, 17, 20, 0)
        );
        // DST starts 2026-03-08 and ends 2026-11-01.
        assert_eq!(
            expiration_close_utc(date(2026, 3, 6)),
            utc(2026, 3, 6, 21, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 3, 9)),
            utc(2026, 3, 9, 20, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 10, 30)),
            utc(2026, 10, 30, 20, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 11, 2)),
            utc(2026, 11, 2, 21, 0)
        );
    }

    #[test]
    fn expiration_close_is_the_early_close_and_16_00_without_a_session() {
        // 2026-11-27, the day after Thanksgiving, closes at 13:00 ET (18:00 UTC); so does
        // Christmas Eve 2026 (a Thursday).
        assert_eq!(
            expiration_close_utc(date(2026, 11, 27)),
            utc(2026, 11, 27, 18, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 12, 24)),
            utc(2026, 12, 24, 18, 0)
        );
        // An hour after that close the contract has expired: an hour's worth of negative time.
        assert_eq!(
            years_to_expiry(utc(2026, 11, 27, 19, 0), date(2026, 11, 27)),
            -3_600.0 / SECONDS_PER_YEAR
        );
        // Saturday and a holiday still map to 16:00 New York.
        assert_eq!(
            expiration_close_utc(date(2026, 7, 4)),
            utc(2026, 7, 4, 20, 0)
        );
        assert_eq!(
            expiration_close_utc(date(2026, 12, 25)),
            utc(2026, 12, 25, 21, 0)
        );
    }

    #[test]
    fn years_to_expiry_is_exact_across_a_dst_change() {
        // Friday 2026-03-06 16:00 EST = 21:00 UTC to Monday 2026-03-09 16:00 EDT = 20:00 UTC:
        // 3 days less the hour lost when DST starts on Sunday 2026-03-08.
        let now = utc(2026, 3, 6, 21, 0);
        let seconds = 3.0 * 86_400.0 - 3_600.0;
        assert_eq!(
            years_to_expiry(now, date(2026, 3, 9)),
            seconds / SECONDS_PER_YEAR
        );
        // And the autumn change adds the hour back: 2026-10-30 20:00 UTC to 2026-11-02 21:00 UTC.
        let now = utc(2026, 10, 30, 20, 0);
        let seconds = 3.0 * 86_400.0 + 3_600.0;
        assert_eq!(
            years_to_expiry(now, date(2026, 11, 2)),
            seconds / SECONDS_PER_YEAR
        );
    }

    #[test]
    fn years_to_expiry_is_zero_at_the_close_and_negative_after() {
        let expiration = date(2025, 6, 20);
        assert_eq!(years_to_expiry(utc(2025, 6, 20, 20, 0), expiration), 0.0);
        assert_eq!(
            years_to_expiry(utc(2025, 6, 20, 20, 1), expiration),
            -60.0 / SECONDS_PER_YEAR
        );
        assert_eq!(
            years_to_expiry(utc(2025, 6, 19, 20, 0), expiration),
            1.0 / 365.0
        );
    }

    #[test]
    fn years_to_expiry_keeps_fractional_seconds() {
        let expiration = date(2025, 6, 20);
        let now = utc(2025, 6, 20, 19, 59) + TimeDelta::milliseconds(59_750);
        let expected = 0.25 / SECONDS_PER_YEAR;
        assert!((years_to_expiry(now, expiration) - expected).abs() < 1e-18);
        // Negative spans with a fractional part: 1.25 s past the close.
        let now = utc(2025, 6, 20, 20, 0) + TimeDelta::milliseconds(1_250);
        let expected = -1.25 / SECONDS_PER_YEAR;
        assert!((years_to_expiry(now, expiration) - expected).abs() < 1e-18);
    }

    #[test]
    fn year_fraction_over_a_full_non_leap_year_is_one() {
        let from = utc(2025, 1, 1, 0, 0);
        let to = utc(2026, 1, 1, 0, 0);
        assert_eq!(year_fraction(from, to), 1.0);
        assert_eq!(year_fraction(to, from), -1.0);
        // ACT/365F: a leap year is 366/365 of a year.
        assert_eq!(year_fraction(utc(2024, 1, 1, 0, 0), from), 366.0 / 365.0);
    }

    #[test]
    fn days_to_expiry_uses_the_new_york_date() {
        let expiration = date(2025, 6, 20);
        // 2025-06-20 02:00 UTC is still June 19 in New York (22:00 EDT).
        assert_eq!(days_to_expiry(utc(2025, 6, 20, 2, 0), expiration), 1);
        assert_eq!(days_to_expiry(utc(2025, 6, 20, 4, 0), expiration), 0);
        // Expiration day after the close is still 0; the next New York day is -1.
        assert_eq!(days_to_expiry(utc(2025, 6, 20, 23, 0), expiration), 0);
        assert_eq!(days_to_expiry(utc(2025, 6, 21, 4, 0), expiration), -1);
        assert_eq!(days_to_expiry(utc(2025, 5, 21, 14, 0), expiration), 30);
    }

    #[test]
    fn extreme_dates_do_not_panic() {
        for expiration in [NaiveDate::MIN, NaiveDate::MAX] {
            for now in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
                let years = years_to_expiry(now, expiration);
                assert!(years.is_finite());
                let _ = days_to_expiry(now, expiration);
            }
        }
    }
}
