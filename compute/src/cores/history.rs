//! What the cores row reads of an underlying's stored `vol_daily` series, cut to size.
//!
//! A row reads ten daily series (the seven constant-maturity IVs, the 30-day smile slope and
//! curvature, the 30-day 25-delta skew) over at most a year of observations before today's,
//! and the newest earnings-reaction statistics. A market-wide table holds this for every
//! underlying for a whole session (the stored series change only at a session close), so it
//! keeps the newest values of those columns only: at most 33 KB per underlying whatever the
//! depth of the stored history, where three years of full rows are about 750 KB.

use chrono::NaiveDate;
use optics_schemas::VolDailyRow;

use super::catalog::{CHANGE_HORIZONS, STAT_WINDOWS};

/// The stored columns the row reads, in [`CoresHistory`]'s column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredSeries {
    /// Constant-maturity ATM IV at 10 days, points.
    Iv10d,
    /// At 20 days.
    Iv20d,
    /// At 30 days.
    Iv30d,
    /// At 60 days.
    Iv60d,
    /// At 90 days.
    Iv90d,
    /// At 180 days.
    Iv6m,
    /// At 365 days.
    Iv1yr,
    /// Slope of the fitted 30-day smile at the money.
    SkewSlope30d,
    /// Curvature of the fitted 30-day smile at the money.
    SmileCurvature30d,
    /// 30-day 25-delta skew (put − call), points.
    Skew25d30d,
}

/// Every column of [`StoredSeries`], in order.
const COLUMNS: [StoredSeries; 10] = [
    StoredSeries::Iv10d,
    StoredSeries::Iv20d,
    StoredSeries::Iv30d,
    StoredSeries::Iv60d,
    StoredSeries::Iv90d,
    StoredSeries::Iv6m,
    StoredSeries::Iv1yr,
    StoredSeries::SkewSlope30d,
    StoredSeries::SmileCurvature30d,
    StoredSeries::Skew25d30d,
];

impl StoredSeries {
    /// The stored IV of a catalog tenor suffix (`"30d"`, `"6m"`, …).
    pub fn iv(tenor: &str) -> Option<Self> {
        Some(match tenor {
            "10d" => Self::Iv10d,
            "20d" => Self::Iv20d,
            "30d" => Self::Iv30d,
            "60d" => Self::Iv60d,
            "90d" => Self::Iv90d,
            "6m" => Self::Iv6m,
            "1yr" => Self::Iv1yr,
            _ => return None,
        })
    }

    fn of(self, row: &VolDailyRow) -> Option<f64> {
        match self {
            Self::Iv10d => row.iv10d_pct,
            Self::Iv20d => row.iv20d_pct,
            Self::Iv30d => row.iv30d_pct,
            Self::Iv60d => row.iv60d_pct,
            Self::Iv90d => row.iv90d_pct,
            Self::Iv6m => row.iv6m_pct,
            Self::Iv1yr => row.iv1yr_pct,
            Self::SkewSlope30d => row.skew_slope_30d,
            Self::SmileCurvature30d => row.smile_curvature_30d,
            Self::Skew25d30d => row.skew25_30d_pct,
        }
    }

    fn column(self) -> usize {
        self as usize
    }
}

const fn deepest_window() -> usize {
    let mut deepest = 0;
    let mut i = 0;
    while i < STAT_WINDOWS.len() {
        if STAT_WINDOWS[i].1 > deepest {
            deepest = STAT_WINDOWS[i].1;
        }
        i += 1;
    }
    i = 0;
    while i < CHANGE_HORIZONS.len() {
        if CHANGE_HORIZONS[i].1 > deepest {
            deepest = CHANGE_HORIZONS[i].1;
        }
        i += 1;
    }
    deepest
}

/// Observations of each column kept: today's value, the deepest trailing window before it,
/// and a month of sessions for a live chain's value, which replaces the stored rows of its
/// session and later ones (a live chain is at most a session or two behind the newest stored
/// row, so every window the row reads is whole).
pub const KEPT_OBSERVATIONS: usize = 1 + deepest_window() + 21;

/// Sessions read at most: a column stored on fewer than one session in two stops the cut here
/// rather than reading the whole history for it.
pub const KEPT_SESSIONS: usize = 2 * KEPT_OBSERVATIONS;

/// One column's newest finite values, ascending by session.
#[derive(Debug, Clone, Default, PartialEq)]
struct Column {
    dates: Vec<NaiveDate>,
    values: Vec<f64>,
}

/// The newest stored values of one underlying as the cores row reads them, for one day: per
/// column, its newest [`KEPT_OBSERVATIONS`] finite values on sessions up to that day among the
/// newest [`KEPT_SESSIONS`] sessions, and the newest earnings-reaction statistics among the
/// newest [`KEPT_OBSERVATIONS`] sessions (they are stored with every session of a ticker that
/// reports). A column with no value in the newest [`KEPT_OBSERVATIONS`] sessions is taken as
/// not stored for this ticker: nothing is kept for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CoresHistory {
    /// One per [`StoredSeries`] (none when the history is empty).
    columns: Vec<Column>,
    /// The newest row with earnings-reaction statistics.
    earnings: Option<Box<VolDailyRow>>,
    /// The newest stored row's session figures.
    newest: Option<NewestStored>,
}

/// Figures of the newest stored session the screens print as they are stored (not recomputed
/// with a live value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewestStored {
    /// Its session.
    pub trade_date: NaiveDate,
    /// iv30d − hv30, points.
    pub vrp_30d_pct: Option<f64>,
    /// IV percentile over one year, 0–100.
    pub iv_percentile: Option<f64>,
    /// IV rank over one year, 0–100.
    pub iv_rank: Option<f64>,
}

impl NewestStored {
    /// The figures of stored row `row`.
    pub fn of(row: &VolDailyRow) -> Self {
        Self {
            trade_date: row.trade_date,
            vrp_30d_pct: row.vrp_30d_pct,
            iv_percentile: row.iv_percentile,
            iv_rank: row.iv_rank,
        }
    }
}

/// A [`CoresHistory`] fed one stored row at a time, newest first: what a reader streaming a
/// market-wide partition per session builds for every underlying at once, holding only what
/// is kept.
#[derive(Debug, Clone)]
pub struct CoresHistoryBuilder {
    today: NaiveDate,
    /// Sessions up to `today` seen.
    seen: usize,
    /// Per column, newest first.
    columns: [Column; COLUMNS.len()],
    earnings: Option<Box<VolDailyRow>>,
    newest: Option<NewestStored>,
}

impl CoresHistoryBuilder {
    /// A history for a row computed on `today`.
    pub fn new(today: NaiveDate) -> Self {
        Self {
            today,
            seen: 0,
            columns: Default::default(),
            earnings: None,
            newest: None,
        }
    }

    /// Whether `kept` values still want older ones: short of [`KEPT_OBSERVATIONS`], unless
    /// none came in a whole [`KEPT_OBSERVATIONS`] sessions (a column this ticker does not
    /// store, or stopped storing over a year ago, is not waited for).
    fn short(&self, kept: usize) -> bool {
        kept < KEPT_OBSERVATIONS && (kept > 0 || self.seen < KEPT_OBSERVATIONS)
    }

    /// Whether the earnings-reaction statistics are still looked for: only in the newest
    /// [`KEPT_OBSERVATIONS`] sessions.
    fn earnings_wanted(&self) -> bool {
        self.earnings.is_none() && self.seen < KEPT_OBSERVATIONS
    }

    /// Whether an older row could still change the history.
    pub fn wants_older(&self) -> bool {
        self.seen < KEPT_SESSIONS
            && (self.earnings_wanted() || self.columns.iter().any(|c| self.short(c.values.len())))
    }

    /// Takes the next older stored row (a row after `today` is passed over).
    pub fn push_older(&mut self, row: &VolDailyRow) {
        if row.trade_date > self.today || !self.wants_older() {
            return;
        }
        if self.seen == 0 {
            self.newest = Some(NewestStored::of(row));
        }
        if self.earnings_wanted() && row.earnings_count.is_some() {
            self.earnings = Some(Box::new(row.clone()));
        }
        let wanted = self.columns.each_ref().map(|c| self.short(c.values.len()));
        self.seen += 1;
        for ((column, series), wanted) in self.columns.iter_mut().zip(COLUMNS).zip(wanted) {
            if wanted && let Some(value) = series.of(row).filter(|v| v.is_finite()) {
                column.dates.push(row.trade_date);
                column.values.push(value);
            }
        }
    }

    /// The history.
    pub fn finish(self) -> CoresHistory {
        let empty = self.columns.iter().all(|c| c.values.is_empty());
        CoresHistory {
            columns: if empty {
                Vec::new()
            } else {
                self.columns
                    .into_iter()
                    .map(|mut c| {
                        c.dates.reverse();
                        c.values.reverse();
                        c.dates.shrink_to_fit();
                        c.values.shrink_to_fit();
                        c
                    })
                    .collect()
            },
            earnings: self.earnings,
            newest: self.newest,
        }
    }
}

impl CoresHistory {
    /// The history `rows` (ascending by trade date, one per session) give a row computed on
    /// `today`.
    pub fn from_rows(rows: &[VolDailyRow], today: NaiveDate) -> Self {
        let mut builder = CoresHistoryBuilder::new(today);
        for row in rows.iter().rev() {
            if !builder.wants_older() {
                break;
            }
            builder.push_older(row);
        }
        builder.finish()
    }

    /// Whether no stored row was read.
    pub fn is_empty(&self) -> bool {
        self.newest.is_none()
    }

    /// The finite values of `series` on the sessions up to `today` and before `before`
    /// (exclusive, when given), ascending.
    pub fn values(
        &self,
        series: StoredSeries,
        today: NaiveDate,
        before: Option<NaiveDate>,
    ) -> impl Iterator<Item = f64> + '_ {
        self.dated_values(series, today, before).map(|(_, v)| v)
    }

    /// [`values`](Self::values) with their sessions.
    pub fn dated_values(
        &self,
        series: StoredSeries,
        today: NaiveDate,
        before: Option<NaiveDate>,
    ) -> impl Iterator<Item = (NaiveDate, f64)> + '_ {
        let (dates, values) = self
            .columns
            .get(series.column())
            .map_or((&[][..], &[][..]), |c| (&c.dates[..], &c.values[..]));
        dates
            .iter()
            .zip(values)
            .filter(move |(d, _)| **d <= today && before.is_none_or(|b| **d < b))
            .map(|(d, v)| (*d, *v))
    }

    /// The newest stored row's session figures (up to the history's day).
    pub fn newest(&self) -> Option<&NewestStored> {
        self.newest.as_ref()
    }

    /// The newest row up to `today` with earnings-reaction statistics.
    pub fn earnings(&self, today: NaiveDate) -> Option<&VolDailyRow> {
        self.earnings.as_deref().filter(|r| r.trade_date <= today)
    }

    /// Bytes held on the heap, about.
    pub fn heap_bytes(&self) -> usize {
        self.columns.capacity() * size_of::<Column>()
            + self
                .columns
                .iter()
                .map(|c| {
                    c.dates.capacity() * size_of::<NaiveDate>()
                        + c.values.capacity() * size_of::<f64>()
                })
                .sum::<usize>()
            + self
                .earnings
                .as_ref()
                .map_or(0, |r| size_of::<VolDailyRow>() + r.underlying.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn rows(n: usize) -> Vec<VolDailyRow> {
        let start = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        (0..n)
            .map(|i| {
                let mut r = VolDailyRow::new(
                    "XYZ",
                    start + chrono::Days::new(i as u64),
                    DateTime::<Utc>::default(),
                    100.0,
                );
                r.iv30d_pct = Some(i as f64);
                // The slope is stored on every other session, the 60-day IV on every fourth,
                // the curvature up to session 1,000 only, the other columns never.
                r.skew_slope_30d = (i % 2 == 0).then_some(-(i as f64));
                r.iv60d_pct = (i % 4 == 0).then_some(i as f64);
                r.smile_curvature_30d = (i < 1_000).then_some(1.0);
                // Statistics on three sessions: of the newest year, the newest is read.
                if i == 10 || i == 1_200 || i == 1_300 {
                    r.earnings_count = Some(i as u64);
                }
                r
            })
            .collect()
    }

    #[test]
    fn keeps_the_newest_values_of_each_column() {
        let all = rows(2_000);
        let today = all[1_500].trade_date;
        let history = CoresHistory::from_rows(&all, today);
        let slope: Vec<f64> = history
            .values(StoredSeries::SkewSlope30d, today, None)
            .collect();
        assert_eq!(slope.len(), KEPT_OBSERVATIONS);
        assert_eq!(slope.last(), Some(&-1_500.0));
        let iv: Vec<f64> = history.values(StoredSeries::Iv30d, today, None).collect();
        assert_eq!(iv.len(), KEPT_OBSERVATIONS);
        assert_eq!(iv.last(), Some(&1_500.0));
        assert_eq!(iv[0], (1_501 - KEPT_OBSERVATIONS) as f64);
        // Sparser than one session in two: what the sessions read hold.
        let iv60: Vec<f64> = history.values(StoredSeries::Iv60d, today, None).collect();
        assert_eq!(iv60.len(), KEPT_SESSIONS / 4);
        let never = history.values(StoredSeries::Iv1yr, today, None).count();
        assert_eq!(never, 0);
        // Stored only more than a year before today: not kept either.
        let curvature = history.values(StoredSeries::SmileCurvature30d, today, None);
        assert_eq!(curvature.count(), 0);
        // A live value of today's session replaces the stored one.
        let before: Vec<f64> = history
            .values(StoredSeries::Iv30d, today, Some(today))
            .collect();
        assert_eq!(before.last(), Some(&1_499.0));
        assert_eq!(
            history.earnings(today).map(|r| r.earnings_count),
            Some(Some(1_300))
        );
        // None in the newest year: none read.
        let later = all[1_300 + KEPT_OBSERVATIONS].trade_date;
        assert_eq!(CoresHistory::from_rows(&all, later).earnings(later), None);
        let early = all[100].trade_date;
        assert_eq!(
            CoresHistory::from_rows(&all, early)
                .earnings(early)
                .map(|r| r.earnings_count),
            Some(Some(10))
        );
        // Three columns of values and one row of statistics.
        let values = 2 * KEPT_OBSERVATIONS + KEPT_SESSIONS / 4;
        assert!(history.heap_bytes() <= values * 12 + 10 * 64 + 2 * size_of::<VolDailyRow>());
    }

    #[test]
    fn every_catalog_tenor_has_its_stored_series() {
        for (tenor, _) in super::super::catalog::IV_TENORS {
            assert!(StoredSeries::iv(tenor).is_some(), "{tenor}");
        }
    }

    #[test]
    fn a_short_history_is_kept_whole() {
        let all = rows(30);
        let today = all[29].trade_date;
        let history = CoresHistory::from_rows(&all, today);
        let iv: Vec<f64> = history.values(StoredSeries::Iv30d, today, None).collect();
        assert_eq!(iv, (0..30).map(f64::from).collect::<Vec<_>>());
        assert!(!history.is_empty());
        assert!(CoresHistory::from_rows(&[], all[0].trade_date).is_empty());
    }
}
