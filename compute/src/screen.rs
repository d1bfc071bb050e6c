//! Market screens: the twelve presets of `/screen`, each a filter and an order over one row per
//! underlying of the session's universe table, and the pairs check of `vol_pairs`.
//!
//! Every threshold is a constant here and the rule text each preset prints is built from them,
//! so the payload says exactly what ran.

use std::cmp::Ordering;

use chrono::NaiveDate;

use crate::correlation::{WINDOW_1Y, align, correlation, last_n};

/// `high_iv_rank` / `low_iv_rank`: the one-year IV percentile at or above / at or below these.
pub const HIGH_IV_PERCENTILE: f64 = 80.0;
/// See [`HIGH_IV_PERCENTILE`].
pub const LOW_IV_PERCENTILE: f64 = 20.0;
/// `high_vrp`: iv30d − hv20d at or above this, percentage points.
pub const HIGH_VRP_POINTS: f64 = 5.0;
/// `earnings_this_week`: next report within this many calendar days (0 = today).
pub const EARNINGS_WEEK_DAYS: i64 = 7;
/// `high_skew`: the put skew's one-year steepness percentile at or above this.
pub const HIGH_SKEW_PERCENTILE: f64 = 80.0;
/// `steep_contango`: iv90d − iv30d at or above this, IV percentage points.
pub const STEEP_CONTANGO_POINTS: f64 = 3.0;
/// `mean_reversion`: |iv30d − its one-year mean| / its one-year standard deviation at or above.
pub const MEAN_REVERSION_Z: f64 = 2.0;
/// `decorrelation`: one-year correlation to SPY at least this…
pub const DECORRELATION_MIN_1Y: f64 = 0.5;
/// …and the one-month correlation below it by at least this.
pub const DECORRELATION_DROP: f64 = 0.3;
/// `unusual_volume`: the session's option volume over open interest at or above this…
pub const UNUSUAL_VOLUME_OI_RATIO: f64 = 0.5;
/// …with at least this many contracts traded.
pub const UNUSUAL_VOLUME_MIN_CONTRACTS: f64 = 1_000.0;
/// `pin_risk`: the front expiration at most this many calendar days away…
pub const PIN_MAX_DAYS: i64 = 5;
/// …and spot within this percent of its largest open-interest strike.
pub const PIN_MAX_DISTANCE_PCT: f64 = 1.0;
/// `vol_pairs`: the largest names per sector paired (by market cap).
pub const PAIRS_PER_SECTOR: usize = 10;
/// `vol_pairs`: one-year correlation of daily log returns at or above this…
pub const PAIRS_MIN_CORRELATION: f64 = 0.6;
/// …and the richer name's iv30d over the cheaper's at or above this.
pub const PAIRS_MIN_IV_RATIO: f64 = 1.25;

/// The preset screens, in catalog order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenType {
    /// IV high in its one-year range.
    HighIvRank,
    /// IV low in its one-year range.
    LowIvRank,
    /// Implied well above realized.
    HighVrp,
    /// Reports within the week.
    EarningsThisWeek,
    /// Steep put skew against its own year.
    HighSkew,
    /// Term structure rising steeply.
    SteepContango,
    /// IV stretched from its one-year mean.
    MeanReversion,
    /// Correlated names with far-apart IVs.
    VolPairs,
    /// Correlation to the market breaking down.
    Decorrelation,
    /// Option volume large against open interest.
    UnusualVolume,
    /// Spot next to a large open-interest strike of a near expiration.
    PinRisk,
}

impl ScreenType {
    /// Every preset, in catalog order.
    pub const ALL: [ScreenType; 11] = [
        Self::HighIvRank,
        Self::LowIvRank,
        Self::HighVrp,
        Self::EarningsThisWeek,
        Self::HighSkew,
        Self::SteepContango,
        Self::MeanReversion,
        Self::VolPairs,
        Self::Decorrelation,
        Self::UnusualVolume,
        Self::PinRisk,
    ];

    /// The `screen_type` value.
    pub fn name(self) -> &'static str {
        match self {
            Self::HighIvRank => "high_iv_rank",
            Self::LowIvRank => "low_iv_rank",
            Self::HighVrp => "high_vrp",
            Self::EarningsThisWeek => "earnings_this_week",
            Self::HighSkew => "high_skew",
            Self::SteepContango => "steep_contango",
            Self::MeanReversion => "mean_reversion",
            Self::VolPairs => "vol_pairs",
            Self::Decorrelation => "decorrelation",
            Self::UnusualVolume => "unusual_volume",
            Self::PinRisk => "pin_risk",
        }
    }

    /// The preset named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What the screen finds, in a sentence.
    pub fn description(self) -> &'static str {
        match self {
            Self::HighIvRank => {
                "Names whose 30-day IV sits high in its one-year range: rich \
                                 premium to sell."
            }
            Self::LowIvRank => {
                "Names whose 30-day IV sits low in its one-year range: cheap \
                                premium to buy."
            }
            Self::HighVrp => {
                "Implied volatility well above the volatility realized over the \
                              last 20 sessions."
            }
            Self::EarningsThisWeek => {
                "Names reporting earnings within the next week, with the \
                                       move their options price."
            }
            Self::HighSkew => "Put skew steep against its own one-year history.",
            Self::SteepContango => "Term structures rising steeply from 30 to 90 days.",
            Self::MeanReversion => "30-day IV stretched far from its one-year mean, either way.",
            Self::VolPairs => {
                "Pairs of correlated names in one sector whose IVs are far apart: \
                               the rich leg listed with its cheap partner."
            }
            Self::Decorrelation => {
                "Names whose correlation to SPY over the last month fell well \
                                    below its one-year level."
            }
            Self::UnusualVolume => "Option volume large against open interest today.",
            Self::PinRisk => {
                "Spot close to the largest open-interest strike of an expiration \
                              a few days away."
            }
        }
    }

    /// The membership rule and order, printed from the constants.
    pub fn rule(self) -> String {
        match self {
            Self::HighIvRank => {
                format!("iv_percentile (one-year) >= {HIGH_IV_PERCENTILE}; highest first")
            }
            Self::LowIvRank => {
                format!("iv_percentile (one-year) <= {LOW_IV_PERCENTILE}; lowest first")
            }
            Self::HighVrp => {
                format!("vrp = iv30d - hv20d >= {HIGH_VRP_POINTS} points; largest first")
            }
            Self::EarningsThisWeek => format!(
                "next report 0 to {EARNINGS_WEEK_DAYS} calendar days away; soonest first, then \
                 the larger imp_earn_move"
            ),
            Self::HighSkew => format!(
                "skew_pctile (100 - the one-year percentile of the 30-day smile slope: how steep \
                 the put skew is against its own year) >= {HIGH_SKEW_PERCENTILE}; highest first"
            ),
            Self::SteepContango => format!(
                "contango = iv90d - iv30d >= {STEEP_CONTANGO_POINTS} IV points; steepest first"
            ),
            Self::MeanReversion => format!(
                "|iv30d - one-year mean| / one-year standard deviation >= {MEAN_REVERSION_Z}; \
                 largest stretch first"
            ),
            Self::VolPairs => format!(
                "the {PAIRS_PER_SECTOR} largest names of each sector, paired within it: \
                 one-year correlation of daily log returns >= {PAIRS_MIN_CORRELATION} and \
                 iv30d ratio (rich / cheap) >= {PAIRS_MIN_IV_RATIO}; each rich name once, with \
                 its most correlated cheap partner; largest ratio first"
            ),
            Self::Decorrelation => format!(
                "one-year correlation to SPY >= {DECORRELATION_MIN_1Y} and one-month \
                 correlation at least {DECORRELATION_DROP} below it; largest drop first"
            ),
            Self::UnusualVolume => format!(
                "session option volume / open interest >= {UNUSUAL_VOLUME_OI_RATIO} with at \
                 least {UNUSUAL_VOLUME_MIN_CONTRACTS} contracts; largest ratio first"
            ),
            Self::PinRisk => format!(
                "front expiration within {PIN_MAX_DAYS} calendar days and spot within \
                 {PIN_MAX_DISTANCE_PCT} % of that expiration's largest open-interest strike; \
                 closest first"
            ),
        }
    }
}

/// One underlying as the screens see it (units as in `/screen`'s rows).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScreenRow {
    /// Last price, dollars.
    pub price: Option<f64>,
    /// Price change over the last session, percent.
    pub chg_1d_pct: Option<f64>,
    /// Over the last 5 sessions, percent.
    pub chg_1w_pct: Option<f64>,
    /// Over the last 21 sessions, percent.
    pub chg_1m_pct: Option<f64>,
    /// Market capitalisation, dollars; `None` for indices and names without one.
    pub market_cap: Option<f64>,
    /// GICS sector; `None` for indices and broad ETFs.
    pub sector: Option<String>,
    /// 30-day constant-maturity IV, percentage points.
    pub iv30d: Option<f64>,
    /// iv90d − iv30d, IV percentage points.
    pub contango: Option<f64>,
    /// 20-session close-to-close HV, percentage points.
    pub hv20d: Option<f64>,
    /// One-year IV percentile, 0–100.
    pub iv_percentile: Option<f64>,
    /// How steep the put skew is against its own year: 100 − the one-year percentile of the
    /// 30-day smile slope (a more negative slope is a steeper put skew), 0–100.
    pub skew_pctile: Option<f64>,
    /// One-year mean of iv30d, percentage points.
    pub iv30d_mean_1y: Option<f64>,
    /// One-year sample standard deviation of iv30d, percentage points.
    pub iv30d_stdv_1y: Option<f64>,
    /// Calendar days to the next report; `None` when none is known.
    pub days_to_earnings: Option<i64>,
    /// The move the options price for the next report, percent.
    pub imp_earn_move: Option<f64>,
    /// Correlation of daily log returns with SPY over one month.
    pub correl_spy_1m: Option<f64>,
    /// The same over one year.
    pub correl_spy_1y: Option<f64>,
    /// Contracts traded this session, calls and puts.
    pub option_volume: Option<f64>,
    /// Open interest, calls and puts, contracts.
    pub open_interest: Option<f64>,
    /// Call contracts traded this session.
    pub call_volume: Option<f64>,
    /// Put contracts traded this session.
    pub put_volume: Option<f64>,
    /// 30-day 25-delta put IV minus 25-delta call IV, percentage points.
    pub put_skew: Option<f64>,
    /// Calendar days to the front expiration.
    pub front_days: Option<i64>,
    /// |spot − the front expiration's largest open-interest strike| / spot, percent.
    pub pin_distance_pct: Option<f64>,
}

impl ScreenRow {
    /// iv30d − hv20d, percentage points.
    pub fn vrp(&self) -> Option<f64> {
        Some(self.iv30d? - self.hv20d?)
    }

    /// (iv30d − one-year mean) / one-year standard deviation.
    pub fn iv_z_1y(&self) -> Option<f64> {
        let sd = self.iv30d_stdv_1y.filter(|s| *s > 0.0)?;
        Some((self.iv30d? - self.iv30d_mean_1y?) / sd)
    }

    /// Option volume over open interest.
    pub fn volume_oi_ratio(&self) -> Option<f64> {
        let oi = self.open_interest.filter(|o| *o > 0.0)?;
        Some(self.option_volume? / oi)
    }
}

/// The filters every preset applies before its own rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UniverseFilter {
    /// Names below this market cap (dollars) are dropped; names without one are kept only at 0.
    pub min_market_cap: f64,
    /// Names reporting 0 to this many calendar days away are dropped; 0 drops none.
    pub exclude_earnings_days: i64,
}

impl UniverseFilter {
    /// Whether `row` passes.
    pub fn admits(&self, row: &ScreenRow) -> bool {
        let size = match row.market_cap {
            Some(cap) => cap >= self.min_market_cap,
            None => self.min_market_cap <= 0.0,
        };
        let earnings = self.exclude_earnings_days <= 0
            || !row
                .days_to_earnings
                .is_some_and(|d| (0..=self.exclude_earnings_days).contains(&d));
        size && earnings
    }

    /// The filter in words.
    pub fn rule(&self) -> String {
        let mut rule = if self.min_market_cap > 0.0 {
            format!(
                "market cap >= {} dollars (names without one, such as indices, are left out)",
                self.min_market_cap
            )
        } else {
            "any market cap".to_owned()
        };
        if self.exclude_earnings_days > 0 {
            rule.push_str(&format!(
                "; names reporting within {} calendar days left out",
                self.exclude_earnings_days
            ));
        }
        rule
    }
}

/// One member of a screen: the row's index and the figure it is ranked by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenHit {
    /// Index into the rows screened.
    pub row: usize,
    /// The ranking figure (the preset's metric, e.g. the percentile or the stretch).
    pub metric: f64,
    /// `vol_pairs`: the cheap partner's index.
    pub partner: Option<usize>,
    /// `vol_pairs`: the pair's one-year correlation.
    pub pair_correlation: Option<f64>,
}

impl ScreenHit {
    fn of(row: usize, metric: f64) -> Self {
        Self {
            row,
            metric,
            partner: None,
            pair_correlation: None,
        }
    }
}

/// Every member of `screen` among `rows` that `filter` admits, ranked by the preset's order.
/// `returns(i)` gives row `i`'s dated daily log returns (used by `vol_pairs` only).
pub fn run_screen<'a>(
    screen: ScreenType,
    rows: &[ScreenRow],
    filter: &UniverseFilter,
    returns: impl Fn(usize) -> &'a [(NaiveDate, f64)],
) -> Vec<ScreenHit> {
    let admitted = || {
        rows.iter()
            .enumerate()
            .filter(|(_, row)| filter.admits(row))
    };
    let by = |metric: fn(&ScreenRow) -> Option<f64>, keep: &dyn Fn(f64) -> bool| {
        admitted()
            .filter_map(|(i, row)| {
                metric(row)
                    .filter(|m| keep(*m))
                    .map(|m| ScreenHit::of(i, m))
            })
            .collect::<Vec<_>>()
    };
    let (mut hits, descending) = match screen {
        ScreenType::HighIvRank => (by(|r| r.iv_percentile, &|m| m >= HIGH_IV_PERCENTILE), true),
        ScreenType::LowIvRank => (by(|r| r.iv_percentile, &|m| m <= LOW_IV_PERCENTILE), false),
        ScreenType::HighVrp => (by(ScreenRow::vrp, &|m| m >= HIGH_VRP_POINTS), true),
        ScreenType::EarningsThisWeek => {
            let mut hits: Vec<ScreenHit> = admitted()
                .filter_map(|(i, row)| {
                    let days = row.days_to_earnings?;
                    (0..=EARNINGS_WEEK_DAYS)
                        .contains(&days)
                        .then(|| ScreenHit::of(i, days as f64))
                })
                .collect();
            hits.sort_by(|a, b| {
                a.metric.total_cmp(&b.metric).then_with(|| {
                    let moved = |h: &ScreenHit| rows[h.row].imp_earn_move.unwrap_or(f64::MIN);
                    moved(b).total_cmp(&moved(a))
                })
            });
            return hits;
        }
        ScreenType::HighSkew => (by(|r| r.skew_pctile, &|m| m >= HIGH_SKEW_PERCENTILE), true),
        ScreenType::SteepContango => (by(|r| r.contango, &|m| m >= STEEP_CONTANGO_POINTS), true),
        ScreenType::MeanReversion => {
            let mut hits = by(ScreenRow::iv_z_1y, &|m| m.abs() >= MEAN_REVERSION_Z);
            hits.sort_by(|a, b| b.metric.abs().total_cmp(&a.metric.abs()));
            return hits;
        }
        ScreenType::VolPairs => {
            let admitted: Vec<usize> = admitted().map(|(i, _)| i).collect();
            return vol_pairs(rows, &admitted, returns);
        }
        ScreenType::Decorrelation => (
            by(
                |r| {
                    let (month, year) = (r.correl_spy_1m?, r.correl_spy_1y?);
                    (year >= DECORRELATION_MIN_1Y).then_some(year - month)
                },
                &|drop| drop >= DECORRELATION_DROP,
            ),
            true,
        ),
        ScreenType::UnusualVolume => (
            admitted()
                .filter(|(_, r)| {
                    r.option_volume
                        .is_some_and(|v| v >= UNUSUAL_VOLUME_MIN_CONTRACTS)
                })
                .filter_map(|(i, r)| {
                    r.volume_oi_ratio()
                        .filter(|m| *m >= UNUSUAL_VOLUME_OI_RATIO)
                        .map(|m| ScreenHit::of(i, m))
                })
                .collect(),
            true,
        ),
        ScreenType::PinRisk => (
            admitted()
                .filter(|(_, r)| {
                    r.front_days
                        .is_some_and(|d| (0..=PIN_MAX_DAYS).contains(&d))
                })
                .filter_map(|(i, r)| {
                    r.pin_distance_pct
                        .filter(|d| *d <= PIN_MAX_DISTANCE_PCT)
                        .map(|d| ScreenHit::of(i, d))
                })
                .collect(),
            false,
        ),
    };
    hits.sort_by(|a, b| {
        let order = a.metric.total_cmp(&b.metric);
        if descending { order.reverse() } else { order }
    });
    hits
}

/// `vol_pairs`: within each sector, the [`PAIRS_PER_SECTOR`] largest admitted names by market
/// cap are paired; a pair qualifies with a one-year return correlation of at least
/// [`PAIRS_MIN_CORRELATION`] and an iv30d ratio of at least [`PAIRS_MIN_IV_RATIO`]. Each rich
/// name is listed once, with its most correlated qualifying cheap partner; ranked by the ratio.
fn vol_pairs<'a>(
    rows: &[ScreenRow],
    admitted: &[usize],
    returns: impl Fn(usize) -> &'a [(NaiveDate, f64)],
) -> Vec<ScreenHit> {
    let mut sectors: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for &i in admitted {
        if let (Some(sector), Some(iv)) = (rows[i].sector.as_deref(), rows[i].iv30d)
            && iv > 0.0
        {
            sectors.entry(sector).or_default().push(i);
        }
    }
    let mut best: std::collections::BTreeMap<usize, ScreenHit> = Default::default();
    for members in sectors.values_mut() {
        members.sort_by(|a, b| {
            let cap = |i: &usize| rows[*i].market_cap.unwrap_or(0.0);
            cap(b).total_cmp(&cap(a)).then(a.cmp(b))
        });
        members.truncate(PAIRS_PER_SECTOR);
        for (n, &a) in members.iter().enumerate() {
            for &b in &members[n + 1..] {
                let (Some(iv_a), Some(iv_b)) = (rows[a].iv30d, rows[b].iv30d) else {
                    continue;
                };
                let (rich, cheap, ratio) = if iv_a >= iv_b {
                    (a, b, iv_a / iv_b)
                } else {
                    (b, a, iv_b / iv_a)
                };
                if ratio < PAIRS_MIN_IV_RATIO {
                    continue;
                }
                let pairs = align(returns(a), returns(b));
                let Some(rho) = last_n(&pairs, WINDOW_1Y).and_then(correlation) else {
                    continue;
                };
                if rho < PAIRS_MIN_CORRELATION {
                    continue;
                }
                let hit = ScreenHit {
                    row: rich,
                    metric: ratio,
                    partner: Some(cheap),
                    pair_correlation: Some(rho),
                };
                let better = best.get(&rich).is_none_or(|held| {
                    held.pair_correlation
                        .is_some_and(|c| rho.partial_cmp(&c) == Some(Ordering::Greater))
                });
                if better {
                    best.insert(rich, hit);
                }
            }
        }
    }
    let mut hits: Vec<ScreenHit> = best.into_values().collect();
    hits.sort_by(|a, b| b.metric.total_cmp(&a.metric).then(a.row.cmp(&b.row)));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(iv_percentile: f64) -> ScreenRow {
        ScreenRow {
            market_cap: Some(5e9),
            iv_percentile: Some(iv_percentile),
            ..ScreenRow::default()
        }
    }

    const ANY: UniverseFilter = UniverseFilter {
        min_market_cap: 1e9,
        exclude_earnings_days: 0,
    };

    fn no_returns(_: usize) -> &'static [(NaiveDate, f64)] {
        &[]
    }

    #[test]
    fn presets_round_trip_by_name() {
        for screen in ScreenType::ALL {
            assert_eq!(ScreenType::parse(screen.name()), Some(screen));
            assert!(!screen.rule().is_empty());
        }
        assert_eq!(ScreenType::parse("list"), None);
    }

    #[test]
    fn high_iv_rank_keeps_the_threshold_and_orders_highest_first() {
        let rows = [row(79.9), row(80.0), row(95.0), row(10.0)];
        let hits = run_screen(ScreenType::HighIvRank, &rows, &ANY, no_returns);
        let members: Vec<usize> = hits.iter().map(|h| h.row).collect();
        assert_eq!(members, [2, 1]);
        let low = run_screen(ScreenType::LowIvRank, &rows, &ANY, no_returns);
        assert_eq!(low.iter().map(|h| h.row).collect::<Vec<_>>(), [3]);
    }

    #[test]
    fn the_universe_filter_drops_small_caps_and_reporters() {
        let mut small = row(90.0);
        small.market_cap = Some(5e8);
        let mut index = row(90.0);
        index.market_cap = None;
        let mut reporting = row(90.0);
        reporting.days_to_earnings = Some(3);
        let rows = [small, index, reporting, row(90.0)];
        let filter = UniverseFilter {
            min_market_cap: 1e9,
            exclude_earnings_days: 5,
        };
        let hits = run_screen(ScreenType::HighIvRank, &rows, &filter, no_returns);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [3]);
        let open = UniverseFilter {
            min_market_cap: 0.0,
            exclude_earnings_days: 0,
        };
        assert_eq!(
            run_screen(ScreenType::HighIvRank, &rows, &open, no_returns).len(),
            4
        );
    }

    #[test]
    fn mean_reversion_ranks_by_absolute_stretch() {
        let stretched = |iv: f64| ScreenRow {
            market_cap: Some(2e9),
            iv30d: Some(iv),
            iv30d_mean_1y: Some(30.0),
            iv30d_stdv_1y: Some(5.0),
            ..ScreenRow::default()
        };
        let rows = [stretched(40.0), stretched(15.0), stretched(35.0)];
        let hits = run_screen(ScreenType::MeanReversion, &rows, &ANY, no_returns);
        assert_eq!(hits.iter().map(|h| h.row).collect::<Vec<_>>(), [1, 0]);
        assert_eq!(hits[0].metric, -3.0);
    }

    #[test]
    fn vol_pairs_needs_correlation_and_an_iv_gap() {
        let day =
            |n: i64| NaiveDate::from_ymd_opt(2025, 1, 1).unwrap() + chrono::Days::new(n as u64);
        let wave: Vec<(NaiveDate, f64)> = (0..300)
            .map(|n| (day(n), ((n * 7919) % 101) as f64 / 1000.0 - 0.05))
            .collect();
        let flipped: Vec<(NaiveDate, f64)> = wave.iter().map(|(d, r)| (*d, -r)).collect();
        let names = |iv: f64| ScreenRow {
            market_cap: Some(1e10),
            sector: Some("Energy".to_owned()),
            iv30d: Some(iv),
            ..ScreenRow::default()
        };
        let rows = [names(40.0), names(30.0), names(20.0)];
        let series = [wave.clone(), wave, flipped];
        let hits = run_screen(ScreenType::VolPairs, &rows, &ANY, |i| &series[i]);
        // 0 and 1 move together (ratio 1.33); 2 moves against both.
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].row, hits[0].partner), (0, Some(1)));
        assert!((hits[0].metric - 40.0 / 30.0).abs() < 1e-12);
    }
}
