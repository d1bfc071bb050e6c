//! Calendar seasonality of a daily close series: close-to-close returns per calendar month and
//! per quarter, grouped by month of the year and by quarter.
//!
//! A month's return is its last close over the previous month's last close, − 1, in percent;
//! a quarter's likewise. Only complete periods count: the window is the `years` × 12 months
//! (× 4 quarters) that end with the last complete month (quarter) of the series, a period being
//! complete when the series goes on past it or, for the series' final period, never (the final
//! period of the series is taken as incomplete, since the series may stop mid-month). Each
//! period needs the previous period's last close, so the first month of the series is never
//! measured.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};

use crate::time::NyseCalendar;
use crate::vol::realized::sample_std;
use crate::vol::stats::{mean, median};

/// The statistics of one month of the year (or one quarter) over the window.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodStats {
    /// Returns of that period in the window, percent, oldest first.
    pub returns_pct: Vec<f64>,
    /// Their mean, percent.
    pub avg_return_pct: f64,
    /// Their median, percent.
    pub median_return_pct: f64,
    /// Their sample standard deviation (n − 1), percent; `None` below two.
    pub volatility_pct: Option<f64>,
    /// Share of them above zero, percent.
    pub positive_pct: f64,
}

/// Seasonality over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct Seasonality {
    /// By month of the year (1–12); months without a return in the window are absent.
    pub monthly: BTreeMap<u32, PeriodStats>,
    /// By quarter (1–4).
    pub quarterly: BTreeMap<u32, PeriodStats>,
    /// First and last month measured, as (year, month).
    pub months_measured: Option<((i32, u32), (i32, u32))>,
}

/// The seasonality of `closes` (ascending by date, one per session, finite and > 0) over the
/// last `years` complete years of months and quarters.
pub fn seasonality(closes: &[(NaiveDate, f64)], years: u32) -> Seasonality {
    let month_key = |d: NaiveDate| (d.year(), d.month());
    let quarter_key = |d: NaiveDate| (d.year(), (d.month() - 1) / 3 + 1);
    let monthly_returns = period_returns(closes, month_key, years as usize * 12);
    let quarterly_returns = period_returns(closes, quarter_key, years as usize * 4);
    Seasonality {
        months_measured: monthly_returns
            .first()
            .zip(monthly_returns.last())
            .map(|(a, b)| (a.0, b.0)),
        monthly: group(&monthly_returns),
        quarterly: group(&quarterly_returns),
    }
}

/// ((year, period), return %) of the last `count` complete periods, oldest first.
fn period_returns(
    closes: &[(NaiveDate, f64)],
    key: impl Fn(NaiveDate) -> (i32, u32),
    count: usize,
) -> Vec<((i32, u32), f64)> {
    // The last close of each period, in order.
    let mut last: Vec<((i32, u32), f64)> = Vec::new();
    let mut last_date = None;
    for &(date, close) in closes {
        if !(close.is_finite() && close > 0.0) {
            continue;
        }
        let k = key(date);
        last_date = Some(date);
        match last.last_mut() {
            Some((held, value)) if *held == k => *value = close,
            _ => last.push((k, close)),
        }
    }
    // The series' final period counts only when its last session has closed in it.
    if let Some(date) = last_date
        && key(NyseCalendar.next_trading_day(date)) == key(date)
    {
        last.pop();
    }
    let returns: Vec<((i32, u32), f64)> = last
        .windows(2)
        .map(|w| (w[1].0, (w[1].1 / w[0].1 - 1.0) * 100.0))
        .collect();
    returns[returns.len().saturating_sub(count)..].to_vec()
}

fn group(returns: &[((i32, u32), f64)]) -> BTreeMap<u32, PeriodStats> {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for &((_, period), r) in returns {
        by.entry(period).or_default().push(r);
    }
    by.into_iter()
        .map(|(period, returns_pct)| {
            // Every group holds at least one return.
            let n = returns_pct.len() as f64;
            let mean = mean(returns_pct.iter().copied()).unwrap_or(f64::NAN);
            let median = median(&returns_pct).unwrap_or(f64::NAN);
            let volatility = sample_std(&returns_pct);
            let positive = returns_pct.iter().filter(|r| **r > 0.0).count() as f64 / n * 100.0;
            (
                period,
                PeriodStats {
                    returns_pct,
                    avg_return_pct: mean,
                    median_return_pct: median,
                    volatility_pct: volatility,
                    positive_pct: positive,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn months_are_last_close_over_last_close_and_the_partial_month_is_left_out() {
        let closes = [
            (d(2025, 12, 30), 100.0),
            (d(2025, 12, 31), 100.0),
            (d(2026, 1, 15), 120.0),
            (d(2026, 1, 30), 110.0),
            (d(2026, 2, 27), 99.0),
            (d(2026, 3, 2), 500.0),
        ];
        let s = seasonality(&closes, 3);
        assert_eq!(s.monthly[&1].returns_pct, vec![10.000000000000009]);
        assert!((s.monthly[&2].returns_pct[0] + 10.0).abs() < 1e-12);
        assert!(!s.monthly.contains_key(&3), "March is still running");
        assert_eq!(s.months_measured, Some(((2026, 1), (2026, 2))));
        // Q1 2026 is the final, partial quarter: no quarter is complete after Q4 2025's.
        assert!(s.quarterly.is_empty());
        // A series that stops on the month's last session measures that month.
        let s = seasonality(&closes[..5], 3);
        assert!(
            s.monthly.contains_key(&2),
            "2026-02-27 is February's last session"
        );
    }
}
