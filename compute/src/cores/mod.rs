//! The cores row: several hundred named numeric fields per underlying, computed from the stored
//! daily bars, the stored `vol_daily` history, the live chain and flow, and the reference data
//! (companies, earnings, borrow fees, dividends). [`catalog`] names, defines and sources each
//! field; [`cores_row`] computes them over already-loaded data (no I/O), with `None` for a
//! field that cannot be computed for the ticker today — never a placeholder.

pub mod catalog;
pub mod history;

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate, Weekday};
use optics_schemas::{
    BorrowRate, ChainRow, Dividend, EarningsEvent, EarningsTiming, FlowSnapshotRow, OptionType,
};

use catalog::{
    ACTIVITY, BENCHMARKS, BORROW_HORIZONS, CHANGE_HORIZONS, CORREL_WINDOWS, DELTA_POINTS,
    DIVIDEND_LOOKBACK_DAYS, EX_EARNINGS_TENORS, FORWARD_PAIRS, HV_ESTIMATORS, HV_WINDOWS,
    IV_TENORS, PRICE_HORIZONS, RANGE_WINDOWS, SMA_WINDOWS, SMILE_TENOR_DAYS, STAT_MIN_OBS,
    STAT_WINDOWS, VOLUME_WINDOWS, beta_name, correl_name, delta_iv_name, fwd_name, hv_name,
    hv_xern_name, iv_name,
};
pub use catalog::{CoreField, DEFAULT_FIELDS, catalog, field_index};
pub use history::{CoresHistory, CoresHistoryBuilder, NewestStored, StoredSeries};

use crate::correlation::{align, beta, correlation, last_n, log_returns};
use crate::vol::realized::sample_std;
use crate::vol::{
    ConstantMaturityIv, ExpirationVol, OhlcBar, RangeEstimator, SviFit, constant_maturity_iv,
    fit_svi, hv, hv_ex_earnings, percentile_of, range_vol, skew25_constant_maturity, smile_points,
};

/// Calendar days per year of the IV tenors.
pub const DAYS_PER_YEAR: f64 = 365.0;

/// One underlying's cores row, aligned with [`catalog`].
#[derive(Debug, Clone, PartialEq)]
pub struct CoresRow {
    /// Underlying symbol.
    pub ticker: String,
    values: Box<[Option<f64>]>,
}

impl CoresRow {
    /// A row with every field null.
    pub fn empty(ticker: &str) -> Self {
        Self {
            ticker: ticker.to_owned(),
            values: vec![None; catalog().len()].into_boxed_slice(),
        }
    }

    /// The value of the field `name`; `None` when null or not a catalog name.
    pub fn get(&self, name: &str) -> Option<f64> {
        field_index(name).and_then(|i| self.value(i))
    }

    /// The value at catalog position `index`.
    pub fn value(&self, index: usize) -> Option<f64> {
        self.values.get(index).copied().flatten()
    }

    /// Every value, in catalog order.
    pub fn values(&self) -> &[Option<f64>] {
        &self.values
    }

    /// Sets `name` (a catalog name) to `value`; a non-finite value is stored as null.
    pub fn set(&mut self, name: &str, value: Option<f64>) {
        let index = field_index(name);
        debug_assert!(index.is_some(), "cores field {name} is not in the catalog");
        if let Some(i) = index {
            self.values[i] = value.filter(|v| v.is_finite());
        }
    }
}

/// One daily bar, dollars and shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// The session.
    pub date: NaiveDate,
    /// Open.
    pub open: f64,
    /// High.
    pub high: f64,
    /// Low.
    pub low: f64,
    /// Close.
    pub close: f64,
    /// Shares traded.
    pub volume: u64,
}

/// The live chain as the row reads it.
#[derive(Debug, Clone, Copy)]
pub struct ChainInput<'a> {
    /// The chain's session.
    pub trade_date: NaiveDate,
    /// Every row (any order).
    pub rows: &'a [ChainRow],
    /// Per-expiration ATM and 25-delta IVs (`expiration_vols`).
    pub expirations: &'a [ExpirationVol],
    /// The constant-maturity ATM IVs.
    pub constant_maturity: &'a ConstantMaturityIv,
    /// Expirations with time left, ascending.
    pub open_expirations: &'a [NaiveDate],
}

/// Everything one row is computed from, already loaded.
#[derive(Debug, Clone, Copy)]
pub struct CoresInput<'a> {
    /// Underlying symbol.
    pub ticker: &'a str,
    /// Today (New York).
    pub today: NaiveDate,
    /// The ticker's daily bars, ascending (bars after today are ignored).
    pub bars: &'a [Bar],
    /// Benchmarks' daily bars by [`catalog::BENCHMARKS`] code (`Spy`, `Qqq`, `Iwm`, `Etf`);
    /// a missing code gives null correlations and betas.
    pub benchmarks: &'a [(&'a str, &'a [Bar])],
    /// What the row reads of the ticker's stored vol_daily rows, cut for `today`
    /// ([`CoresHistory::from_rows`]).
    pub vol: &'a CoresHistory,
    /// The live chain.
    pub chain: Option<ChainInput<'a>>,
    /// The session flow.
    pub flow: Option<&'a [FlowSnapshotRow]>,
    /// Market capitalisation, dollars.
    pub market_cap: Option<f64>,
    /// Earnings reports, ascending by date.
    pub reports: &'a [EarningsEvent],
    /// Stored borrow fees.
    pub borrow: &'a [BorrowRate],
    /// Declared dividends.
    pub dividends: &'a [Dividend],
}

/// The cores row of `input`.
pub fn cores_row(input: &CoresInput<'_>) -> CoresRow {
    let mut row = CoresRow::empty(input.ticker);
    let today = input.today;
    let bars: Vec<Bar> = input
        .bars
        .iter()
        .copied()
        .take_while(|b| b.date <= today)
        .collect();
    let vol = input.vol;
    price_fields(&mut row, &bars);
    row.set("mktCap", input.market_cap);
    let fits = input.chain.map(smile_fits).unwrap_or_default();
    let ivs = iv_fields(&mut row, input, vol);
    let hvs = hv_fields(&mut row, input, &bars);
    delta_fields(&mut row, input.chain);
    smile_fields(&mut row, input, vol, &fits, &ivs);
    earnings_fields(&mut row, input, vol, &ivs, &hvs);
    borrow_fields(&mut row, input);
    correlation_fields(&mut row, input, &bars);
    dividend_fields(&mut row, input, bars.last().map(|b| b.close));
    if let Some(chain) = input.chain {
        activity_fields(&mut row, &chain);
    }
    if let Some(flow) = input.flow {
        flow_fields(&mut row, flow);
    }
    row
}

/// `date` as a YYYYMMDD integer.
pub fn yyyymmdd(date: NaiveDate) -> f64 {
    f64::from(date.year() * 10_000 + date.month() as i32 * 100 + date.day() as i32)
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

fn price_fields(row: &mut CoresRow, bars: &[Bar]) {
    let Some(last) = bars.last() else {
        return;
    };
    let n_bars = bars.len();
    let px = last.close;
    row.set("stkPx", Some(px));
    for (suffix, n) in PRICE_HORIZONS {
        let back = n_bars.checked_sub(n + 1).map(|i| bars[i].close);
        row.set(
            &format!("stkPxChng{suffix}"),
            back.filter(|c| *c > 0.0).map(|c| (px / c - 1.0) * 100.0),
        );
    }
    for (suffix, n) in RANGE_WINDOWS {
        if n_bars < n {
            continue;
        }
        let window = &bars[n_bars - n..];
        let hi = window
            .iter()
            .map(|b| b.high)
            .fold(f64::NEG_INFINITY, f64::max);
        let lo = window.iter().map(|b| b.low).fold(f64::INFINITY, f64::min);
        row.set(&format!("stkHi{suffix}"), Some(hi));
        row.set(&format!("stkLo{suffix}"), Some(lo));
        row.set(
            &format!("stkRngPos{suffix}"),
            (hi > lo).then(|| (px - lo) / (hi - lo) * 100.0),
        );
    }
    for n in SMA_WINDOWS {
        if n_bars < n {
            continue;
        }
        let closes: Vec<f64> = bars[n_bars - n..].iter().map(|b| b.close).collect();
        let sma = mean(&closes);
        row.set(&format!("stkSma{n}d"), sma);
        row.set(
            &format!("stkPxVsSma{n}d"),
            ratio(Some(px), sma).map(|r| (r - 1.0) * 100.0),
        );
    }
    row.set("stkVolu", Some(last.volume as f64));
    for n in VOLUME_WINDOWS {
        if n_bars < n {
            continue;
        }
        let volumes: Vec<f64> = bars[n_bars - n..].iter().map(|b| b.volume as f64).collect();
        row.set(&format!("avgStkVolu{n}d"), mean(&volumes));
    }
    row.set(
        "stkVoluRatio20d",
        ratio(row.get("stkVolu"), row.get("avgStkVolu20d")),
    );
}

/// Trailing statistics of a daily series whose last element is today's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrailingStats {
    /// Mean of the prior window.
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1) of the prior window.
    pub stdv: Option<f64>,
    /// Minimum of the prior window.
    pub min: Option<f64>,
    /// Maximum of the prior window.
    pub max: Option<f64>,
    /// Share of the prior window strictly below today's value, 0–100.
    pub pctile: Option<f64>,
    /// (today − min) / (max − min) × 100 clamped to 0–100; `None` for a flat window.
    pub rank: Option<f64>,
}

/// The statistics of `series`' last value against the (up to) `n` values before it; all
/// `None` when fewer than min(n, [`STAT_MIN_OBS`]) values precede it.
pub fn trailing_stats(series: &[f64], n: usize) -> TrailingStats {
    let none = TrailingStats {
        mean: None,
        stdv: None,
        min: None,
        max: None,
        pctile: None,
        rank: None,
    };
    let Some((&today, prior)) = series.split_last() else {
        return none;
    };
    let window = &prior[prior.len().saturating_sub(n)..];
    if window.len() < STAT_MIN_OBS.min(n) || window.is_empty() {
        return none;
    }
    let min = window.iter().copied().fold(f64::INFINITY, f64::min);
    let max = window.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    TrailingStats {
        mean: mean(window),
        stdv: sample_std(window),
        min: Some(min),
        max: Some(max),
        pctile: percentile_of(window, today).ok(),
        rank: (max > min).then(|| ((today - min) / (max - min) * 100.0).clamp(0.0, 100.0)),
    }
}

/// `series`' last value minus the value `n` observations before it.
pub fn change(series: &[f64], n: usize) -> Option<f64> {
    let last = series.len().checked_sub(1)?;
    Some(series[last] - series[last.checked_sub(n)?])
}

/// The daily series of a statistic: the stored rows' values, then today's live value (which
/// replaces a stored row of the same or a later session) when there is one.
fn daily_series(
    vol: &CoresHistory,
    stored: StoredSeries,
    today: NaiveDate,
    live: Option<(NaiveDate, f64)>,
) -> Vec<f64> {
    let mut series: Vec<f64> = vol.values(stored, today, live.map(|(d, _)| d)).collect();
    if let Some((_, v)) = live {
        series.push(v);
    }
    series
}

fn set_stats(row: &mut CoresRow, base: &str, series: &[f64], windows: &[(&str, usize)]) {
    for &(w, n) in windows {
        let s = trailing_stats(series, n);
        for (stat, value) in [
            ("Mean", s.mean),
            ("Stdv", s.stdv),
            ("Min", s.min),
            ("Max", s.max),
            ("Pctile", s.pctile),
            ("Rank", s.rank),
        ] {
            let name = format!("{base}{stat}{w}");
            if field_index(&name).is_some() {
                row.set(&name, value);
            }
        }
    }
}

fn live_iv(cm: &ConstantMaturityIv, tenor: &str) -> Option<f64> {
    match tenor {
        "10d" => cm.iv10d_pct,
        "20d" => cm.iv20d_pct,
        "30d" => cm.iv30d_pct,
        "60d" => cm.iv60d_pct,
        "90d" => cm.iv90d_pct,
        "6m" => cm.iv6m_pct,
        "1yr" => cm.iv1yr_pct,
        _ => None,
    }
}

/// Today's constant-maturity IVs by tenor suffix.
type Ivs = BTreeMap<&'static str, f64>;

fn iv_fields(row: &mut CoresRow, input: &CoresInput<'_>, vol: &CoresHistory) -> Ivs {
    let mut ivs = Ivs::new();
    for (tenor, _) in IV_TENORS {
        let Some(stored) = StoredSeries::iv(tenor) else {
            continue;
        };
        let live = input.chain.and_then(|c| {
            live_iv(c.constant_maturity, tenor)
                .filter(|v| v.is_finite())
                .map(|v| (c.trade_date, v))
        });
        let series = daily_series(vol, stored, input.today, live);
        let name = iv_name(tenor);
        let Some(&current) = series.last() else {
            continue;
        };
        ivs.insert(tenor, current);
        row.set(&name, Some(current));
        for (h, n) in CHANGE_HORIZONS {
            row.set(&format!("{name}Chng{h}"), change(&series, n));
        }
        set_stats(row, &name, &series, &STAT_WINDOWS);
    }
    row.set("ivPctile1y", row.get("iv30dPctile1y"));
    row.set("ivRank1y", row.get("iv30dRank1y"));
    for (hi, lo) in FORWARD_PAIRS {
        let days = |t: &str| {
            IV_TENORS
                .iter()
                .find(|(s, _)| *s == t)
                .map(|(_, d)| f64::from(*d) / DAYS_PER_YEAR)
        };
        let fwd = match (ivs.get(hi), ivs.get(lo), days(hi), days(lo)) {
            (Some(a), Some(b), Some(ta), Some(tb)) => forward_vol(*a, ta, *b, tb),
            _ => None,
        };
        row.set(&fwd_name(hi, lo), fwd);
    }
    row.set(
        "contango",
        ivs.get("90d").zip(ivs.get("30d")).map(|(a, b)| a - b),
    );
    ivs
}

/// Forward vol (points) between `t_short` and `t_long` years from the IVs (points) at each;
/// `None` for a negative forward variance or `t_long ≤ t_short`.
pub fn forward_vol(iv_long: f64, t_long: f64, iv_short: f64, t_short: f64) -> Option<f64> {
    if t_long <= t_short {
        return None;
    }
    let var = (iv_long * iv_long * t_long - iv_short * iv_short * t_short) / (t_long - t_short);
    (var >= 0.0).then(|| var.sqrt())
}

/// Today's realized vols the earnings fields read.
struct Hvs {
    cls30: Option<f64>,
    cls30_xern: Option<f64>,
}

fn hv_fields(row: &mut CoresRow, input: &CoresInput<'_>, bars: &[Bar]) -> Hvs {
    let closes: Vec<f64> = bars.iter().map(|b| b.close).collect();
    let ohlc: Vec<OhlcBar> = bars
        .iter()
        .map(|b| OhlcBar {
            open: b.open,
            high: b.high,
            low: b.low,
            close: b.close,
        })
        .collect();
    let dates: Vec<NaiveDate> = bars.iter().map(|b| b.date).collect();
    let reports: Vec<&EarningsEvent> = input.reports.iter().collect();
    let reactions = crate::vol::close::reaction_sessions(&dates, &reports);
    for (prefix, _) in HV_ESTIMATORS {
        for w in HV_WINDOWS {
            let value = match prefix {
                "cls" => hv(&closes, w),
                "or" => range_vol(&ohlc, w, RangeEstimator::Parkinson)
                    .ok()
                    .flatten(),
                "gk" => range_vol(&ohlc, w, RangeEstimator::GarmanKlass)
                    .ok()
                    .flatten(),
                _ => range_vol(&ohlc, w, RangeEstimator::YangZhang)
                    .ok()
                    .flatten(),
            };
            row.set(&hv_name(prefix, w), value);
        }
    }
    for w in HV_WINDOWS {
        row.set(&hv_xern_name(w), hv_ex_earnings(&closes, w, &reactions));
    }
    Hvs {
        cls30: row.get("clsHv30d"),
        cls30_xern: row.get("clsHv30dXern"),
    }
}

/// One expiration's smile fit.
#[derive(Debug, Clone)]
pub struct ExpirationFit {
    /// Years to expiry.
    pub years: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// The raw SVI fit.
    pub fit: SviFit,
}

/// One expiration with time left: years to expiry, forward and the rows of the settlement
/// series with the most strikes (by strike), nearest first.
pub fn expiration_series(rows: &[ChainRow]) -> Vec<(f64, f64, Vec<&ChainRow>)> {
    let mut series: BTreeMap<(NaiveDate, &str), Vec<&ChainRow>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.dte > 0 && r.years_to_expiry > 0.0) {
        series
            .entry((r.expiration, r.settlement.as_str()))
            .or_default()
            .push(r);
    }
    let mut by_expiration: BTreeMap<NaiveDate, Vec<&ChainRow>> = BTreeMap::new();
    for ((expiration, _), rows) in series {
        let held = by_expiration.entry(expiration).or_default();
        if rows.len() > held.len() {
            *held = rows;
        }
    }
    by_expiration
        .into_values()
        .filter_map(|mut rows| {
            rows.sort_by(|a, b| a.strike.total_cmp(&b.strike));
            let first = rows.first()?;
            Some((first.years_to_expiry, first.forward, rows))
        })
        .collect()
}

/// A raw SVI fit of the (up to) two expirations bracketing [`SMILE_TENOR_DAYS`] (the nearest
/// one alone outside the listed ones), nearest first; an expiration whose fit fails is left
/// out. Only these are fitted: a fit is a Nelder–Mead search, the costliest step of the row.
pub fn smile_fits(chain: ChainInput<'_>) -> Vec<ExpirationFit> {
    let series = expiration_series(chain.rows);
    let target = SMILE_TENOR_DAYS / DAYS_PER_YEAR;
    let upper = series.iter().position(|(t, _, _)| *t >= target);
    let chosen = match upper {
        None => series.len().saturating_sub(1)..series.len(),
        Some(0) => 0..series.len().min(1),
        Some(i) => i - 1..i + 1,
    };
    series[chosen]
        .iter()
        .filter_map(|(years, forward, rows)| {
            let fit = fit_svi(&smile_points(rows.iter().copied()), *years).ok()?;
            Some(ExpirationFit {
                years: *years,
                forward: *forward,
                fit,
            })
        })
        .collect()
}

/// The out-of-the-money quotes of one expiration as (call-equivalent delta, IV points),
/// ascending by delta: the call's delta and IV at strikes at or above the forward, the put's
/// delta + 1 and IV below it.
pub fn call_delta_smile(rows: &[&ChainRow]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let (delta, iv) = if r.strike >= r.forward {
                (r.call.greeks.delta?, r.call.iv?)
            } else {
                (r.put.greeks.delta? + 1.0, r.put.iv?)
            };
            (delta.is_finite() && delta > 0.0 && delta < 1.0 && iv.is_finite() && iv > 0.0)
                .then_some((delta, iv * 100.0))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The IV at call-equivalent `delta`, linear between the two quotes around it; `None`
/// outside the quoted deltas.
pub fn iv_at_call_delta(smile: &[(f64, f64)], delta: f64) -> Option<f64> {
    let upper = smile.iter().position(|(d, _)| *d >= delta)?;
    let (d1, v1) = smile[upper];
    if d1 == delta || upper == 0 {
        return (d1 == delta).then_some(v1);
    }
    let (d0, v0) = smile[upper - 1];
    Some(v0 + (v1 - v0) * (delta - d0) / (d1 - d0))
}

/// Linear in years between the two points bracketing `target_years`; the nearest point alone
/// outside them. `points` ascending by years.
pub fn interpolate_years(points: &[(f64, f64)], target_years: f64) -> Option<f64> {
    let upper = points.iter().position(|(t, _)| *t >= target_years);
    match upper {
        None => points.last().map(|p| p.1),
        Some(0) => points.first().map(|p| p.1),
        Some(i) => {
            let ((t0, v0), (t1, v1)) = (points[i - 1], points[i]);
            Some(v0 + (v1 - v0) * (target_years - t0) / (t1 - t0))
        }
    }
}

fn delta_fields(row: &mut CoresRow, chain: Option<ChainInput<'_>>) {
    let Some(chain) = chain else {
        return;
    };
    let smiles: Vec<(f64, Vec<(f64, f64)>)> = expiration_series(chain.rows)
        .iter()
        .map(|(years, _, rows)| (*years, call_delta_smile(rows)))
        .collect();
    for d in DELTA_POINTS {
        let delta = f64::from(d) / 100.0;
        let points: Vec<(f64, f64)> = smiles
            .iter()
            .filter_map(|(years, smile)| Some((*years, iv_at_call_delta(smile, delta)?)))
            .collect();
        for (tenor, days) in IV_TENORS {
            row.set(
                &delta_iv_name(d, tenor),
                constant_maturity_iv(&points, f64::from(days)),
            );
        }
    }
}

fn smile_fields(
    row: &mut CoresRow,
    input: &CoresInput<'_>,
    vol: &CoresHistory,
    fits: &[ExpirationFit],
    _ivs: &Ivs,
) {
    let target = SMILE_TENOR_DAYS / DAYS_PER_YEAR;
    let at = |f: &dyn Fn(&SviFit) -> Option<f64>| {
        let points: Vec<(f64, f64)> = fits
            .iter()
            .filter_map(|x| Some((x.years, f(&x.fit)?)))
            .collect();
        interpolate_years(&points, target)
    };
    let live_date = input.chain.map(|c| c.trade_date);
    let live_slope = at(&|f| f.slope()).zip(live_date).map(|(v, d)| (d, v));
    let slopes = daily_series(vol, StoredSeries::SkewSlope30d, input.today, live_slope);
    row.set("slope", slopes.last().copied());
    let s = trailing_stats(&slopes, 252);
    row.set("slopeMean1y", s.mean);
    row.set("slopeStdv1y", s.stdv);
    row.set("slopePctile1y", s.pctile);
    let live_deriv = at(&|f| f.curvature()).zip(live_date).map(|(v, d)| (d, v));
    row.set(
        "deriv",
        daily_series(
            vol,
            StoredSeries::SmileCurvature30d,
            input.today,
            live_deriv,
        )
        .last()
        .copied(),
    );
    row.set("error", at(&|f| Some(f.rmse_iv_pct)));
    row.set("maxError", at(&|f| Some(f.max_abs_error_iv_pct)));
    let live_skew = input.chain.and_then(|c| {
        skew25_constant_maturity(c.expirations, SMILE_TENOR_DAYS).map(|v| (c.trade_date, v))
    });
    row.set(
        "skew25d30d",
        daily_series(vol, StoredSeries::Skew25d30d, input.today, live_skew)
            .last()
            .copied(),
    );
}

/// Whether an expiration's close comes after the market has reacted to `report`.
fn reflects(expiration: NaiveDate, report: &EarningsEvent) -> bool {
    match report.timing {
        EarningsTiming::BeforeOpen => expiration >= report.report_date,
        EarningsTiming::AfterClose | EarningsTiming::Unknown => expiration > report.report_date,
    }
}

/// The implied earnings event: (event standard deviation as a decimal, years to the first
/// expiration after the report) from the forward ATM IVs (points) of the first two
/// expirations after it, `(t1, iv1)` and `(t2, iv2)`; `None` when the event variance is ≤ 0.
pub fn implied_event(t1: f64, iv1: f64, t2: f64, iv2: f64) -> Option<f64> {
    if !(t2 > t1 && t1 > 0.0) {
        return None;
    }
    let (w1, w2) = ((iv1 / 100.0).powi(2) * t1, (iv2 / 100.0).powi(2) * t2);
    let diffusive = (w2 - w1) / (t2 - t1);
    let event = w1 - diffusive * t1;
    (event > 0.0).then(|| event.sqrt())
}

/// The expected absolute move, percent, of a normal move with standard deviation `event`
/// (decimal).
pub fn expected_abs_move_pct(event: f64) -> f64 {
    event * (2.0 / std::f64::consts::PI).sqrt() * 100.0
}

/// IV (points) at `years` with an event of standard deviation `event` (decimal) removed.
pub fn ex_event_iv(iv_pct: f64, years: f64, event: f64) -> Option<f64> {
    (years > 0.0)
        .then(|| ((iv_pct / 100.0).powi(2) * years - event * event).max(0.0) / years)
        .map(|v| v.sqrt() * 100.0)
}

fn earnings_fields(
    row: &mut CoresRow,
    input: &CoresInput<'_>,
    vol: &CoresHistory,
    ivs: &Ivs,
    hvs: &Hvs,
) {
    let today = input.today;
    let mut reports: Vec<&EarningsEvent> = input.reports.iter().collect();
    reports.sort_by_key(|r| r.report_date);
    let next = reports.iter().find(|r| r.report_date >= today);
    let last = reports.iter().rev().find(|r| r.report_date < today);
    row.set("nextErn", next.map(|r| yyyymmdd(r.report_date)));
    row.set(
        "daysToNextErn",
        next.map(|r| (r.report_date - today).num_days() as f64),
    );
    row.set("lastErn", last.map(|r| yyyymmdd(r.report_date)));
    row.set(
        "daysSinceLastErn",
        last.map(|r| (today - r.report_date).num_days() as f64),
    );
    if let Some(stats) = vol.earnings(today) {
        let count = |v: Option<u64>| v.map(|c| c as f64);
        for (name, value) in [
            ("ernCnt", count(stats.earnings_count)),
            ("ernUpCnt", count(stats.earnings_up_count)),
            ("ernDnCnt", count(stats.earnings_down_count)),
            ("ernBeatCnt", count(stats.earnings_beat_count)),
            ("ernMissCnt", count(stats.earnings_miss_count)),
            ("avgErnMv", stats.earnings_avg_move_pct),
            ("absAvgErnMv", stats.earnings_avg_abs_move_pct),
            ("avgUpErnMv", stats.earnings_avg_up_move_pct),
            ("avgDnErnMv", stats.earnings_avg_down_move_pct),
            ("avgBeatErnMv", stats.earnings_avg_beat_move_pct),
            ("avgMissErnMv", stats.earnings_avg_miss_move_pct),
            ("maxUpErnMv", stats.earnings_max_up_pct),
            ("maxDnErnMv", stats.earnings_max_down_pct),
        ] {
            row.set(name, value);
        }
    }
    // The implied event of the next report not yet reflected in the chain's session.
    let mut event: Option<(f64, i64)> = None; // (std, calendar days to the reaction)
    let mut upcoming = false;
    if let Some(chain) = input.chain {
        let pending = input
            .reports
            .iter()
            .find(|r| !reflects(chain.trade_date, r));
        if let Some(report) = pending {
            upcoming = true;
            let mut atm: Vec<(NaiveDate, f64, f64)> = chain
                .expirations
                .iter()
                .filter(|e| e.dte > 0 && reflects(e.expiration, report))
                .filter_map(|e| Some((e.expiration, e.years_to_expiry, e.atm_iv_pct?)))
                .collect();
            atm.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            atm.dedup_by_key(|e| e.0);
            if let [(_, t1, iv1), (_, t2, iv2), ..] = atm[..] {
                let reaction_days = match report.timing {
                    EarningsTiming::BeforeOpen => 0,
                    _ => 1,
                } + (report.report_date - chain.trade_date).num_days();
                event = implied_event(t1, iv1, t2, iv2).map(|e| (e, reaction_days));
            }
        }
    }
    row.set("impErnMv", event.map(|(e, _)| expected_abs_move_pct(e)));
    for tenor in EX_EARNINGS_TENORS {
        let Some((&iv, days)) = IV_TENORS
            .iter()
            .find(|(t, _)| *t == tenor)
            .and_then(|(t, d)| Some((ivs.get(t)?, *d)))
        else {
            continue;
        };
        let years = f64::from(days) / DAYS_PER_YEAR;
        let value = match event {
            Some((e, reaction)) if reaction <= i64::from(days) => ex_event_iv(iv, years, e),
            Some(_) => Some(iv),
            // A pending report inside the tenor whose event the chain does not price: unknown.
            None if upcoming
                && reports.iter().any(|r| {
                    r.report_date >= today && (r.report_date - today).num_days() <= i64::from(days)
                }) =>
            {
                None
            }
            None if input.chain.is_some() => Some(iv),
            None => None,
        };
        row.set(&format!("exErnIv{tenor}"), value);
    }
    row.set(
        "ivHvXernRatio",
        ratio(row.get("exErnIv30d"), hvs.cls30_xern),
    );
    let iv30 = ivs.get("30d").copied();
    row.set("ivHvRatio", ratio(iv30, hvs.cls30));
    row.set("ivHvDiff", iv30.zip(hvs.cls30).map(|(a, b)| a - b));
}

fn borrow_fields(row: &mut CoresRow, input: &CoresInput<'_>) {
    let mut fees: Vec<&BorrowRate> = input
        .borrow
        .iter()
        .filter(|b| b.date <= input.today)
        .collect();
    fees.sort_by_key(|b| b.date);
    let Some(last) = fees.last() else {
        return;
    };
    let series: Vec<f64> = fees.iter().map(|b| b.borrow_rate * 100.0).collect();
    row.set("borrow30", series.last().copied());
    for (h, n) in BORROW_HORIZONS {
        row.set(&format!("borrowChng{h}"), change(&series, n));
    }
    set_stats(row, "borrow", &series, &STAT_WINDOWS);
    row.set("htb", Some(if last.is_hard_to_borrow { 1.0 } else { 0.0 }));
}

fn dated_log_returns(bars: &[Bar], today: NaiveDate) -> Vec<(NaiveDate, f64)> {
    let closes: Vec<(NaiveDate, f64)> = bars
        .iter()
        .take_while(|b| b.date <= today)
        .map(|b| (b.date, b.close))
        .collect();
    log_returns(&closes)
}

fn correlation_fields(row: &mut CoresRow, input: &CoresInput<'_>, bars: &[Bar]) {
    let own = dated_log_returns(bars, input.today);
    for (code, _) in BENCHMARKS {
        let Some((_, bench)) = input.benchmarks.iter().find(|(c, _)| *c == code) else {
            continue;
        };
        let pairs = align(&own, &dated_log_returns(bench, input.today));
        for (w, n) in CORREL_WINDOWS {
            let window = last_n(&pairs, n);
            row.set(&correl_name(code, w), window.and_then(correlation));
            row.set(&beta_name(code, w), window.and_then(beta));
        }
    }
}

fn dividend_fields(row: &mut CoresRow, input: &CoresInput<'_>, px: Option<f64>) {
    let today = input.today;
    let mut divs: Vec<&Dividend> = input.dividends.iter().collect();
    divs.sort_by_key(|d| d.ex_date);
    let past: Vec<&&Dividend> = divs.iter().filter(|d| d.ex_date <= today).collect();
    row.set("divAmt", past.last().map(|d| d.amount));
    let year: Vec<f64> = past
        .iter()
        .filter(|d| (today - d.ex_date).num_days() < DIVIDEND_LOOKBACK_DAYS)
        .map(|d| d.amount)
        .collect();
    let annual = year.iter().sum::<f64>();
    row.set("divFreq", Some(year.len() as f64));
    row.set("annDiv", Some(annual));
    row.set(
        "divYield",
        px.filter(|p| *p > 0.0).map(|p| annual / p * 100.0),
    );
    let next = divs.iter().find(|d| d.ex_date > today);
    row.set("nextDiv", next.map(|d| yyyymmdd(d.ex_date)));
    row.set(
        "daysToNextDiv",
        next.map(|d| (d.ex_date - today).num_days() as f64),
    );
}

/// Whether `date` is a standard monthly expiration (the third Friday of its month).
pub fn is_monthly(date: NaiveDate) -> bool {
    date.weekday() == Weekday::Fri && (15..=21).contains(&date.day())
}

fn activity_fields(row: &mut CoresRow, chain: &ChainInput<'_>) {
    debug_assert_eq!(ACTIVITY.len(), 10);
    let Some(&first_open) = chain.open_expirations.first() else {
        return;
    };
    let open: Vec<&ChainRow> = chain
        .rows
        .iter()
        .filter(|r| r.expiration >= first_open)
        .collect();
    let sum =
        |f: &dyn Fn(&ChainRow) -> Option<u64>| open.iter().filter_map(|r| f(r)).sum::<u64>() as f64;
    let (cv, pv) = (sum(&|r| r.call.volume), sum(&|r| r.put.volume));
    let (co, po) = (
        sum(&|r| r.call.open_interest),
        sum(&|r| r.put.open_interest),
    );
    row.set("cVolu", Some(cv));
    row.set("pVolu", Some(pv));
    row.set("totVolu", Some(cv + pv));
    row.set("cOi", Some(co));
    row.set("pOi", Some(po));
    row.set("totOi", Some(co + po));
    row.set("pcVoluRatio", ratio(Some(pv), Some(cv)));
    row.set("pcOiRatio", ratio(Some(po), Some(co)));
    let last = chain
        .open_expirations
        .iter()
        .copied()
        .find(|e| is_monthly(*e))
        .or(chain.open_expirations.last().copied());
    let front: Vec<&&ChainRow> = open
        .iter()
        .filter(|r| last.is_some_and(|l| r.expiration <= l))
        .collect();
    let max_strike = |f: &dyn Fn(&ChainRow) -> u64| {
        let mut by_strike: Vec<(f64, u64)> = Vec::new();
        for r in &front {
            let v = f(r);
            match by_strike.iter_mut().find(|(k, _)| *k == r.strike) {
                Some(entry) => entry.1 += v,
                None => by_strike.push((r.strike, v)),
            }
        }
        by_strike.sort_by(|a, b| a.0.total_cmp(&b.0));
        by_strike
            .iter()
            .fold(None, |best: Option<(f64, u64)>, &(k, v)| match best {
                Some((_, bv)) if bv >= v => best,
                _ => Some((k, v)),
            })
            .filter(|(_, v)| *v > 0)
            .map(|(k, _)| k)
    };
    row.set(
        "oiMaxStrike",
        max_strike(&|r| r.call.open_interest.unwrap_or(0) + r.put.open_interest.unwrap_or(0)),
    );
    row.set(
        "voluMaxStrike",
        max_strike(&|r| r.call.volume.unwrap_or(0) + r.put.volume.unwrap_or(0)),
    );
}

fn flow_fields(row: &mut CoresRow, flow: &[FlowSnapshotRow]) {
    let prem = |t: OptionType| {
        flow.iter()
            .filter(|r| r.option_type == t)
            .filter_map(|r| r.premium_usd)
            .sum::<f64>()
    };
    row.set("cPremFlow", Some(prem(OptionType::Call)));
    row.set("pPremFlow", Some(prem(OptionType::Put)));
    row.set(
        "unusualCnt",
        Some(flow.iter().filter(|r| r.is_unusual).count() as f64),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_complete_and_unique() {
        let fields = catalog();
        assert!(fields.len() >= 340, "{} fields", fields.len());
        let mut names = std::collections::BTreeSet::new();
        for f in fields {
            assert!(!f.name.is_empty() && !f.unit.is_empty());
            assert!(!f.definition.is_empty() && !f.source.is_empty());
            assert!(names.insert(f.name), "duplicate {}", f.name);
            assert!(!f.definition.contains("{W}"), "{}", f.name);
        }
        for name in DEFAULT_FIELDS {
            assert!(field_index(name).is_some(), "default {name}");
        }
        for name in [
            "stkPx",
            "stkPxChng1d",
            "stkPxChng1wk",
            "stkPxChng1m",
            "mktCap",
            "stkVolu",
            "avgStkVolu20d",
            "iv30d",
            "iv60d",
            "iv90d",
            "clsHv20d",
            "orHv20d",
            "ivPctile1y",
            "ivRank1y",
            "iv30dMean1y",
            "iv30dStdv1y",
            "slope",
            "slopePctile1y",
            "contango",
            "dlt25Iv30d",
            "dlt75Iv30d",
            "impErnMv",
            "absAvgErnMv",
            "daysToNextErn",
            "nextErn",
            "borrow30",
            "beta1y",
            "correlSpy1m",
            "correlSpy1y",
            "cVolu",
            "pVolu",
            "cOi",
            "pOi",
            "oiMaxStrike",
            "error",
            "exErnIv30d",
            "ivHvXernRatio",
        ] {
            assert!(field_index(name).is_some(), "{name}");
        }
    }

    #[test]
    fn empty_input_is_all_null_but_counts() {
        let today = NaiveDate::from_ymd_opt(2026, 1, 5).unwrap_or_default();
        let row = cores_row(&CoresInput {
            ticker: "X",
            today,
            bars: &[],
            benchmarks: &[],
            vol: &CoresHistory::default(),
            chain: None,
            flow: None,
            market_cap: None,
            reports: &[],
            borrow: &[],
            dividends: &[],
        });
        assert_eq!(row.get("iv30d"), None);
        assert_eq!(row.get("borrow30"), None);
        assert_eq!(row.get("divFreq"), Some(0.0));
    }

    #[test]
    fn delta_interpolation_stays_inside_the_quotes() {
        let smile = [(0.2, 30.0), (0.4, 26.0), (0.6, 24.0)];
        assert_eq!(iv_at_call_delta(&smile, 0.3), Some(28.0));
        assert_eq!(iv_at_call_delta(&smile, 0.2), Some(30.0));
        assert_eq!(iv_at_call_delta(&smile, 0.6), Some(24.0));
        assert_eq!(iv_at_call_delta(&smile, 0.1), None);
        assert_eq!(iv_at_call_delta(&smile, 0.7), None);
    }

    #[test]
    fn trailing_statistics() {
        let s: Vec<f64> = (1..=22).map(f64::from).collect();
        let t = trailing_stats(&s, 21);
        assert_eq!(t.mean, Some(11.0));
        assert_eq!(t.min, Some(1.0));
        assert_eq!(t.max, Some(21.0));
        assert_eq!(t.pctile, Some(100.0));
        assert_eq!(t.rank, Some(100.0));
        assert_eq!(change(&s, 5), Some(5.0));
        assert_eq!(trailing_stats(&s[..10], 21).mean, None);
    }

    #[test]
    fn forward_and_event() {
        assert_eq!(forward_vol(20.0, 1.0, 20.0, 0.5), Some(20.0));
        assert_eq!(forward_vol(10.0, 1.0, 20.0, 0.5), None);
        // Same total variance slope: no event.
        assert_eq!(implied_event(0.1, 20.0, 0.2, 20.0), None);
        let e = implied_event(0.05, 40.0, 0.1, 30.0).unwrap_or_default();
        // w1 = 0.008, w2 = 0.009, s² = 0.02, e² = 0.008 − 0.001 = 0.007.
        assert!((e - 0.007f64.sqrt()).abs() < 1e-12);
        let ex = ex_event_iv(40.0, 0.05, e).unwrap_or_default();
        assert!((ex - 0.02f64.sqrt() * 100.0).abs() < 1e-9, "{ex}");
        assert!(is_monthly(
            NaiveDate::from_ymd_opt(2026, 1, 16).unwrap_or_default()
        ));
        assert_eq!(
            yyyymmdd(NaiveDate::from_ymd_opt(2026, 1, 16).unwrap_or_default()),
            20260116.0
        );
    }
}
