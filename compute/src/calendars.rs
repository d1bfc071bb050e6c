//! The events calendars' rules: what the earnings calendar puts beside each report (the move
//! the chain prices for it, the average gap of the symbol's past reports, their ratio, the hour
//! of the report and the session that reacts to it), the day grid it is shown on, and the
//! economic calendar's published values read as numbers.
//!
//! | quantity | unit |
//! | --- | --- |
//! | `atm_iv_pct` | annualised percentage points (25.0 = 25 %) |
//! | `years_to_expiry` | years, ACT/365 calendar time to the expiration's close |
//! | one-sigma move, expected absolute move, gap move | percent of the price (5.0 = 5 %) |
//! | move ratio | unitless |
//! | release values | the release's own unit ([`RELEASE_UNITS`]) |
//!
//! Method. The one-sigma move to an expiration is σ·√T, T the calendar time to it; the mean
//! absolute value of a normal move is √(2/π) ≈ 0.798 of its sigma, which the interface fixes at
//! [`EXPECTED_ABS_MOVE_PER_SIGMA`] = 0.8 (the rounding adds 0.25 % of the move). The historical
//! side is the mean absolute close-to-open gap of past reactions, an expected absolute move
//! too, so the two are compared on one basis.

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, TimeDelta, Utc};
use optics_schemas::{EarningsEvent, EarningsTiming};

use crate::earnings::HISTORY_REPORTS;
use crate::time::{NyseCalendar, REGULAR_OPEN, new_york_date, new_york_datetime};
use crate::vol::close::earnings_moves;

/// The expected absolute move per unit of one-sigma move: √(2/π) = 0.7979 rounded to 0.8, as
/// the interface publishes every implied earnings move.
pub const EXPECTED_ABS_MOVE_PER_SIGMA: f64 = 0.8;

/// `implied_move_basis`: what `implied_move` measures.
pub const IMPLIED_MOVE_BASIS: &str = "expected_abs_move";

/// Past reports `hist_avg_move` averages: the last twelve (three years of quarters).
pub const HIST_MOVE_REPORTS: usize = HISTORY_REPORTS;

/// New York time a pre-open (`bmo`) report is listed at.
pub const BMO_REPORT_TIME: NaiveTime = hm(8, 0);

/// New York time an after-close (`amc`) report is listed at.
pub const AMC_REPORT_TIME: NaiveTime = hm(16, 5);

/// The economic calendar's window when `to_date` is not given: `from_date` + 14 days.
pub const ECONOMIC_DEFAULT_SPAN_DAYS: i64 = 14;

/// The longest economic calendar window, days from `from_date` to `to_date`.
pub const ECONOMIC_MAX_SPAN_DAYS: i64 = 366;

/// The units a published value may carry, as the payload writes them: percent, thousands,
/// millions, billions, trillions.
pub const RELEASE_UNITS: [&str; 5] = ["%", "K", "M", "B", "T"];

const fn hm(hour: u32, minute: u32) -> NaiveTime {
    match NaiveTime::from_hms_opt(hour, minute, 0) {
        Some(t) => t,
        None => panic!("invalid time"),
    }
}

/// `bmo`, `amc` or `tbd`.
pub fn timing_label(timing: EarningsTiming) -> &'static str {
    match timing {
        EarningsTiming::BeforeOpen => "bmo",
        EarningsTiming::AfterClose => "amc",
        EarningsTiming::Unknown => "tbd",
    }
}

/// The New York time a report is listed at: [`BMO_REPORT_TIME`], [`AMC_REPORT_TIME`], none
/// for an unknown timing.
pub fn report_time(timing: EarningsTiming) -> Option<NaiveTime> {
    match timing {
        EarningsTiming::BeforeOpen => Some(BMO_REPORT_TIME),
        EarningsTiming::AfterClose => Some(AMC_REPORT_TIME),
        EarningsTiming::Unknown => None,
    }
}

/// The NYSE session whose open is the first to trade on a report: the report date's session
/// for a pre-open report (the next session when that date has none); the next session after the
/// report date for an after-close report, and for an unknown timing too — the later of its two
/// possible reactions, so an expiration on or after it carries the report either way and the
/// actuals wait for both.
pub fn reaction_session(report_date: NaiveDate, timing: EarningsTiming) -> NaiveDate {
    let calendar = NyseCalendar;
    match timing {
        EarningsTiming::BeforeOpen if calendar.is_trading_day(report_date) => report_date,
        _ => calendar.next_trading_day(report_date),
    }
}

/// Whether a report's results are public at `now`: the open (09:30 New York) of its
/// [`reaction_session`] has passed.
pub fn report_public(report_date: NaiveDate, timing: EarningsTiming, now: DateTime<Utc>) -> bool {
    let open = new_york_datetime(reaction_session(report_date, timing), REGULAR_OPEN);
    now >= open.with_timezone(&Utc)
}

/// The one-sigma move to an expiration, percent of the price: `atm_iv_pct × √years_to_expiry`
/// (σ√T with σ = atm_iv_pct / 100, × 100). `None` unless both are finite and > 0.
pub fn one_sigma_move_pct(atm_iv_pct: f64, years_to_expiry: f64) -> Option<f64> {
    (atm_iv_pct.is_finite()
        && atm_iv_pct > 0.0
        && years_to_expiry.is_finite()
        && years_to_expiry > 0.0)
        .then(|| atm_iv_pct * years_to_expiry.sqrt())
}

/// The expected absolute move of a one-sigma move `sigma_pct`:
/// [`EXPECTED_ABS_MOVE_PER_SIGMA`] × sigma.
pub fn expected_abs_move_pct(sigma_pct: f64) -> f64 {
    EXPECTED_ABS_MOVE_PER_SIGMA * sigma_pct
}

/// `implied / historical`; `None` without both or for a historical move that is not > 0.
pub fn move_ratio(implied_pct: Option<f64>, historical_pct: Option<f64>) -> Option<f64> {
    let (implied, historical) = (implied_pct?, historical_pct?);
    (implied.is_finite() && historical.is_finite() && historical > 0.0)
        .then(|| implied / historical)
}

/// The average size of a symbol's past earnings gaps.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoricalMove {
    /// Mean |gap move| over `reports`, percent; `None` for none.
    pub avg_abs_move_pct: Option<f64>,
    /// Reports averaged (at most [`HIST_MOVE_REPORTS`]).
    pub reports: usize,
    /// The reaction session of each, oldest first.
    pub reaction_sessions: Vec<NaiveDate>,
}

/// The mean absolute gap move (previous close → reaction-session open, percent) of the last
/// [`HIST_MOVE_REPORTS`] of `reports` whose reaction session is in `dates` (ascending sessions,
/// `opens` and `closes` aligned), with the reaction rule of
/// [`earnings_moves`](crate::vol::close::earnings_moves): a pre-open report reacts on its
/// date's session, an after-close one on the next; a report of unknown timing has no gap.
pub fn historical_move(
    dates: &[NaiveDate],
    opens: &[Option<f64>],
    closes: &[f64],
    reports: &[&EarningsEvent],
) -> HistoricalMove {
    let moves = earnings_moves(dates, opens, closes, reports);
    let last = &moves[moves.len().saturating_sub(HIST_MOVE_REPORTS)..];
    let abs: Vec<f64> = last.iter().map(|(_, m)| m.gap_move_pct.abs()).collect();
    HistoricalMove {
        avg_abs_move_pct: (!abs.is_empty()).then(|| abs.iter().sum::<f64>() / abs.len() as f64),
        reports: abs.len(),
        reaction_sessions: last.iter().map(|(session, _)| dates[*session]).collect(),
    }
}

/// English three-letter month names, January first.
pub const MONTHS_SHORT: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// English weekday names, Monday first (the index is `weekday`).
pub const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// How a day is labelled on the calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayLabel {
    /// The date.
    pub date: NaiveDate,
    /// Day of the month, 1–31.
    pub day_num: u32,
    /// `Jan` … `Dec`.
    pub month_short: &'static str,
    /// 0 = Monday … 6 = Sunday.
    pub weekday: u32,
    /// `Monday` … `Sunday`.
    pub weekday_name: &'static str,
}

/// The labels of `date`.
pub fn day_label(date: NaiveDate) -> DayLabel {
    let weekday = date.weekday().num_days_from_monday();
    DayLabel {
        date,
        day_num: date.day(),
        month_short: MONTHS_SHORT[date.month0() as usize],
        weekday,
        weekday_name: WEEKDAYS[weekday as usize],
    }
}

/// Every date from `from` to `to`, both included (empty when `from > to`).
pub fn days_in(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    from.iter_days().take_while(|d| *d <= to).collect()
}

/// The Monday-to-Sunday weeks that cover `from` to `to`: the first starts on the Monday on or
/// before `from`, the last ends on the Sunday on or after `to` (empty when `from > to`).
pub fn weeks_covering(from: NaiveDate, to: NaiveDate) -> Vec<[NaiveDate; 7]> {
    if from > to {
        return Vec::new();
    }
    let first_monday = from - TimeDelta::days(i64::from(from.weekday().num_days_from_monday()));
    let mut weeks = Vec::new();
    let mut monday = first_monday;
    while monday <= to {
        weeks.push(std::array::from_fn(|i| monday + TimeDelta::days(i as i64)));
        monday += TimeDelta::days(7);
    }
    weeks
}

/// A published value read as a number: `"3.2%"` → 3.2 `%`, `"254K"` → 254 `K`,
/// `"-0.1%"` → −0.1 `%`, `"1,234.5"` → 1234.5 without a unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReleaseValue {
    /// The number as written, in `unit`.
    pub value: f64,
    /// One of [`RELEASE_UNITS`], or `None` for a bare number.
    pub unit: Option<&'static str>,
}

/// Reads a published value: surrounding spaces dropped; an optional trailing unit (`%`, or
/// `K`, `M`, `B`, `T` in either case); before it an optional sign and decimal digits with at
/// most one `.` and optional `,` thousands separators. Anything else (`n/a`, `1e3`, a bare
/// unit, words) is `None`.
pub fn parse_release_value(text: &str) -> Option<ReleaseValue> {
    let text = text.trim();
    let last = text.chars().last()?;
    let (number, unit) = match RELEASE_UNITS
        .iter()
        .find(|u| u.eq_ignore_ascii_case(&last.to_string()))
    {
        Some(unit) => (text[..text.len() - last.len_utf8()].trim_end(), Some(*unit)),
        None => (text, None),
    };
    let digits = number.strip_prefix(['+', '-']).unwrap_or(number);
    let well_formed = digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
        && digits.bytes().filter(|b| *b == b'.').count() <= 1
        && !digits.starts_with([',', '.'])
        && !digits.ends_with(',');
    if !well_formed {
        return None;
    }
    let value: f64 = number.replace(',', "").parse().ok()?;
    value.is_finite().then_some(ReleaseValue { value, unit })
}

/// Whether a release of `date` at New York `time` is public at `now`: from that instant on;
/// a release without a time only once its date has passed in New York (its hour is unknown).
pub fn release_public(date: NaiveDate, time: Option<NaiveTime>, now: DateTime<Utc>) -> bool {
    match time {
        Some(time) => now >= new_york_datetime(date, time).with_timezone(&Utc),
        None => new_york_date(now) > date,
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn report(date: NaiveDate, timing: EarningsTiming) -> EarningsEvent {
        EarningsEvent {
            symbol: "AAPL".into(),
            report_date: date,
            timing,
            fiscal_quarter: "FY2026 Q4".into(),
            eps_estimate: 1.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        }
    }

    #[test]
    fn published_values_read_as_numbers_with_their_unit() {
        let read = |t: &str| parse_release_value(t).map(|v| (v.value, v.unit));
        assert_eq!(read("3.2%"), Some((3.2, Some("%"))));
        assert_eq!(read("254K"), Some((254.0, Some("K"))));
        assert_eq!(read("-0.1%"), Some((-0.1, Some("%"))));
        assert_eq!(read(" +1.5 M "), Some((1.5, Some("M"))));
        assert_eq!(read("2.1b"), Some((2.1, Some("B"))));
        assert_eq!(read("1,234.5"), Some((1234.5, None)));
        assert_eq!(read("0.75T"), Some((0.75, Some("T"))));
        assert_eq!(read("52.3"), Some((52.3, None)));
        for bad in [
            "", " ", "%", "K", "n/a", "1e3", "inf", "NaN", "1.2.3", "--1", "1-", ",5", "5,", ".",
            "-", "3.2%%", "abc%", "12 34",
        ] {
            assert_eq!(parse_release_value(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_release_is_public_from_its_instant_or_after_its_day() {
        // 2026-11-20 08:30 New York (EST) is 13:30 UTC.
        let at = |h, m| Utc.with_ymd_and_hms(2026, 11, 20, h, m, 0).unwrap();
        let time = Some(hm(8, 30));
        assert!(!release_public(day(2026, 11, 20), time, at(13, 29)));
        assert!(release_public(day(2026, 11, 20), time, at(13, 30)));
        // Without a time: public only once the day has passed in New York (05:00 UTC is
        // midnight EST).
        assert!(!release_public(day(2026, 11, 20), None, at(23, 59)));
        let next_midnight = Utc.with_ymd_and_hms(2026, 11, 21, 5, 0, 0).unwrap();
        assert!(release_public(day(2026, 11, 20), None, next_midnight));
    }

    #[test]
    fn reaction_sessions_follow_the_timing_and_the_nyse_calendar() {
        // Friday 2026-11-20; the next session is Monday the 23rd. Thanksgiving is the 26th.
        let friday = day(2026, 11, 20);
        assert_eq!(reaction_session(friday, EarningsTiming::BeforeOpen), friday);
        assert_eq!(
            reaction_session(friday, EarningsTiming::AfterClose),
            day(2026, 11, 23)
        );
        assert_eq!(
            reaction_session(friday, EarningsTiming::Unknown),
            day(2026, 11, 23)
        );
        assert_eq!(
            reaction_session(day(2026, 11, 26), EarningsTiming::BeforeOpen),
            day(2026, 11, 27)
        );
        assert_eq!(
            reaction_session(day(2026, 11, 25), EarningsTiming::AfterClose),
            day(2026, 11, 27)
        );
        // Public from the reaction session's 09:30 New York open (14:30 UTC in November).
        let open = Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 0).unwrap();
        assert!(report_public(friday, EarningsTiming::BeforeOpen, open));
        assert!(!report_public(
            friday,
            EarningsTiming::BeforeOpen,
            open - TimeDelta::seconds(1)
        ));
        assert!(!report_public(
            friday,
            EarningsTiming::AfterClose,
            open + TimeDelta::hours(8)
        ));
        assert!(report_public(
            friday,
            EarningsTiming::AfterClose,
            open + TimeDelta::days(3)
        ));
    }

    #[test]
    fn moves_scale_with_root_time_and_share_the_expected_absolute_basis() {
        // 40 points over a quarter of a year: 40 × 0.5 = 20 % one sigma, 16 % expected.
        let sigma = one_sigma_move_pct(40.0, 0.25).unwrap();
        assert!((sigma - 20.0).abs() < 1e-12);
        assert!((expected_abs_move_pct(sigma) - 16.0).abs() < 1e-12);
        assert!((EXPECTED_ABS_MOVE_PER_SIGMA - (2.0 / std::f64::consts::PI).sqrt()).abs() < 0.003);
        assert_eq!(one_sigma_move_pct(0.0, 0.25), None);
        assert_eq!(one_sigma_move_pct(40.0, 0.0), None);
        assert_eq!(one_sigma_move_pct(f64::NAN, 0.25), None);
        assert_eq!(move_ratio(Some(6.0), Some(4.0)), Some(1.5));
        assert_eq!(move_ratio(Some(6.0), Some(0.0)), None);
        assert_eq!(move_ratio(None, Some(4.0)), None);
        assert_eq!(move_ratio(Some(6.0), None), None);
    }

    #[test]
    fn the_historical_move_averages_the_last_twelve_gaps() {
        // One session a day; a report every 5 sessions after the close, each gapping by
        // (i + 1) % into its next session: 14 reports, the last 12 average (3 + … + 14) / 12.
        let dates: Vec<NaiveDate> = (0..80)
            .map(|i| day(2026, 1, 1) + TimeDelta::days(i))
            .collect();
        let mut opens: Vec<Option<f64>> = vec![Some(100.0); dates.len()];
        let closes = vec![100.0; dates.len()];
        let mut reports = Vec::new();
        for i in 0..14usize {
            let at = 5 * i + 2;
            reports.push(report(dates[at], EarningsTiming::AfterClose));
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            opens[at + 1] = Some(100.0 * (1.0 + sign * (i as f64 + 1.0) / 100.0));
        }
        // A report of unknown timing and one after the bars are left out.
        reports.push(report(dates[73], EarningsTiming::Unknown));
        reports.push(report(day(2027, 1, 1), EarningsTiming::BeforeOpen));
        let refs: Vec<&EarningsEvent> = reports.iter().collect();
        let found = historical_move(&dates, &opens, &closes, &refs);
        assert_eq!(found.reports, 12);
        let want = (3..=14).map(f64::from).sum::<f64>() / 12.0;
        assert!((found.avg_abs_move_pct.unwrap() - want).abs() < 1e-9);
        assert_eq!(found.reaction_sessions[0], dates[5 * 2 + 3]);
        let none = historical_move(&dates, &opens, &closes, &[]);
        assert_eq!((none.avg_abs_move_pct, none.reports), (None, 0));
    }

    #[test]
    fn days_are_labelled_and_weeks_start_on_monday() {
        let label = day_label(day(2026, 11, 20));
        assert_eq!(
            (
                label.day_num,
                label.month_short,
                label.weekday,
                label.weekday_name
            ),
            (20, "Nov", 4, "Friday")
        );
        assert_eq!(day_label(day(2026, 11, 22)).weekday_name, "Sunday");
        assert_eq!(days_in(day(2026, 11, 20), day(2026, 11, 27)).len(), 8);
        assert!(days_in(day(2026, 11, 21), day(2026, 11, 20)).is_empty());
        // Friday the 20th to Friday the 27th: the weeks of Monday the 16th and the 23rd.
        let weeks = weeks_covering(day(2026, 11, 20), day(2026, 11, 27));
        assert_eq!(weeks.len(), 2);
        assert_eq!(weeks[0][0], day(2026, 11, 16));
        assert_eq!(weeks[1][6], day(2026, 11, 29));
        // A window of one Monday is one week.
        assert_eq!(
            weeks_covering(day(2026, 11, 23), day(2026, 11, 23)).len(),
            1
        );
        assert!(weeks_covering(day(2026, 11, 24), day(2026, 11, 23)).is_empty());
    }

    #[test]
    fn reports_are_listed_at_their_hour() {
        assert_eq!(report_time(EarningsTiming::BeforeOpen), Some(hm(8, 0)));
        assert_eq!(report_time(EarningsTiming::AfterClose), Some(hm(16, 5)));
        assert_eq!(report_time(EarningsTiming::Unknown), None);
        assert_eq!(timing_label(EarningsTiming::AfterClose), "amc");
    }
}
