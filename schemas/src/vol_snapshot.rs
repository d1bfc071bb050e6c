//! The `vol_daily` snapshot dataset that compute publishes once per session close: one row per
//! underlying × session with the close, realized vol at the standard windows, constant-maturity
//! IV, the front ATM IV, the 30-day 25-delta skew, IV rank and percentile, the volatility risk
//! premium, beta and correlation to SPY, the close-to-close log return and the earnings-move
//! statistics — the columns the volatility, earnings and cores endpoints read. Beside it,
//! [`VolTermRow`]: the `vol_term` dataset, the ATM term structure per expiration.
//!
//! Column names, meanings and units are in [`crate::columns::vol_daily`] (every volatility in
//! annualised percentage points). [`VolDailyRow::to_batch`] and [`VolDailyRow::from_batch`]
//! validate both ways: non-finite numbers (absent values are nulls, never NaN), a non-positive
//! close or IV, a negative HV or VRP ratio, a rank or percentile outside 0–100, a correlation
//! outside −1…1, a front ATM IV without its expiration or an expiration not after the trade
//! date are rejected with [`SchemaError::InvalidValue`] naming the column and row. Batches
//! are read by column name: unknown extra columns are ignored and a missing nullable column
//! reads as nulls, so a reader accepts snapshots written before a column was added.

use std::sync::{Arc, LazyLock};

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, RecordBatch, UInt64Array,
};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::vol_daily as col;
use crate::columns::vol_term as t;
use crate::enums::SettlementStyle;
use crate::error::SchemaError;
use crate::snapshot::{SnapshotColumns, SnapshotDataset, snapshot_row};
use crate::table::{
    date_to_days, dates, f64s, f64s_opt, field, opt, timestamp_type, timestamps, utf8,
};

/// The dataset's name (storage paths, events, error messages).
pub const VOL_DAILY_DATASET: &str = SnapshotDataset::VolDaily.name();

/// One underlying's volatility statistics for one session. Units:
/// [`crate::columns::vol_daily`]; `None` is a null (not computable from the data at hand).
#[derive(Debug, Clone, PartialEq)]
pub struct VolDailyRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// The instant described (the session close).
    pub as_of: DateTime<Utc>,
    /// Closing price, dollars.
    pub close: f64,
    /// HV over 5 sessions, percentage points.
    pub hv_5d_pct: Option<f64>,
    /// HV over 10 sessions, percentage points.
    pub hv_10d_pct: Option<f64>,
    /// HV over 20 sessions, percentage points.
    pub hv_20d_pct: Option<f64>,
    /// HV over 30 sessions, percentage points.
    pub hv_30d_pct: Option<f64>,
    /// HV over 60 sessions, percentage points.
    pub hv_60d_pct: Option<f64>,
    /// HV over 90 sessions, percentage points.
    pub hv_90d_pct: Option<f64>,
    /// HV over 120 sessions, percentage points.
    pub hv_120d_pct: Option<f64>,
    /// HV over 180 sessions, percentage points.
    pub hv_180d_pct: Option<f64>,
    /// HV over 252 sessions, percentage points.
    pub hv_252d_pct: Option<f64>,
    /// 30-session HV without the earnings reaction sessions, percentage points.
    pub hv_30d_ex_earnings_pct: Option<f64>,
    /// Whether an earnings reaction session is in the 30-session window.
    pub earnings_in_hv_30d_window: Option<bool>,
    /// Constant-maturity ATM IV at 10 days, percentage points.
    pub iv10d_pct: Option<f64>,
    /// At 20 days.
    pub iv20d_pct: Option<f64>,
    /// At 30 days (`iv30d`).
    pub iv30d_pct: Option<f64>,
    /// At 60 days.
    pub iv60d_pct: Option<f64>,
    /// At 90 days.
    pub iv90d_pct: Option<f64>,
    /// At 180 days.
    pub iv6m_pct: Option<f64>,
    /// At 365 days.
    pub iv1yr_pct: Option<f64>,
    /// The front expiration with an ATM IV.
    pub front_expiration: Option<NaiveDate>,
    /// Its ATM IV, percentage points.
    pub front_atm_iv_pct: Option<f64>,
    /// 30-day 25-delta skew (put − call), percentage points.
    pub skew25_30d_pct: Option<f64>,
    /// Slope of the fitted 30-day smile at the money, points per unit of ln(K/F).
    pub skew_slope_30d: Option<f64>,
    /// Curvature of the fitted 30-day smile at the money, points per unit of ln(K/F)².
    pub smile_curvature_30d: Option<f64>,
    /// IV rank of `iv30d_pct` over one year, 0–100.
    pub iv_rank: Option<f64>,
    /// IV percentile of `iv30d_pct` over one year, 0–100.
    pub iv_percentile: Option<f64>,
    /// iv30d − hv30, percentage points.
    pub vrp_30d_pct: Option<f64>,
    /// iv30d / hv30.
    pub vrp_ratio: Option<f64>,
    /// One-year beta to SPY.
    pub beta_spy_1y: Option<f64>,
    /// One-year correlation with SPY.
    pub correlation_spy_1y: Option<f64>,
    /// ln(close / previous close), decimal.
    pub log_return_1d: Option<f64>,
    /// Past earnings reports with a gap (see [`crate::columns::vol_daily::EARNINGS_COUNT`]).
    pub earnings_count: Option<u64>,
    /// Of those, gap ≥ 0.
    pub earnings_up_count: Option<u64>,
    /// Gap < 0.
    pub earnings_down_count: Option<u64>,
    /// EPS at or above the estimate.
    pub earnings_beat_count: Option<u64>,
    /// EPS below the estimate.
    pub earnings_miss_count: Option<u64>,
    /// Mean signed gap, percent.
    pub earnings_avg_move_pct: Option<f64>,
    /// Mean absolute gap, percent.
    pub earnings_avg_abs_move_pct: Option<f64>,
    /// Mean gap of the up reports, percent.
    pub earnings_avg_up_move_pct: Option<f64>,
    /// Mean gap of the down reports, percent.
    pub earnings_avg_down_move_pct: Option<f64>,
    /// Mean signed gap of the beats, percent.
    pub earnings_avg_beat_move_pct: Option<f64>,
    /// Mean signed gap of the misses, percent.
    pub earnings_avg_miss_move_pct: Option<f64>,
    /// Largest up gap, percent.
    pub earnings_max_up_pct: Option<f64>,
    /// Most negative gap, percent.
    pub earnings_max_down_pct: Option<f64>,
}

impl VolDailyRow {
    /// A row with only the required fields; every statistic null.
    pub fn new(underlying: &str, trade_date: NaiveDate, as_of: DateTime<Utc>, close: f64) -> Self {
        Self {
            underlying: underlying.to_owned(),
            trade_date,
            as_of,
            close,
            hv_5d_pct: None,
            hv_10d_pct: None,
            hv_20d_pct: None,
            hv_30d_pct: None,
            hv_60d_pct: None,
            hv_90d_pct: None,
            hv_120d_pct: None,
            hv_180d_pct: None,
            hv_252d_pct: None,
            hv_30d_ex_earnings_pct: None,
            earnings_in_hv_30d_window: None,
            iv10d_pct: None,
            iv20d_pct: None,
            iv30d_pct: None,
            iv60d_pct: None,
            iv90d_pct: None,
            iv6m_pct: None,
            iv1yr_pct: None,
            front_expiration: None,
            front_atm_iv_pct: None,
            skew25_30d_pct: None,
            skew_slope_30d: None,
            smile_curvature_30d: None,
            iv_rank: None,
            iv_percentile: None,
            vrp_30d_pct: None,
            vrp_ratio: None,
            beta_spy_1y: None,
            correlation_spy_1y: None,
            log_return_1d: None,
            earnings_count: None,
            earnings_up_count: None,
            earnings_down_count: None,
            earnings_beat_count: None,
            earnings_miss_count: None,
            earnings_avg_move_pct: None,
            earnings_avg_abs_move_pct: None,
            earnings_avg_up_move_pct: None,
            earnings_avg_down_move_pct: None,
            earnings_avg_beat_move_pct: None,
            earnings_avg_miss_move_pct: None,
            earnings_max_up_pct: None,
            earnings_max_down_pct: None,
        }
    }
}

/// The value rule of a nullable statistic column.
#[derive(Debug, Clone, Copy)]
enum Rule {
    Finite,
    NonNegative,
    Positive,
    ZeroToHundred,
    Correlation,
}

/// A nullable Float64 statistic: its column, accessors and rule.
struct Stat {
    name: &'static str,
    get: fn(&VolDailyRow) -> Option<f64>,
    set: fn(&mut VolDailyRow, Option<f64>),
    rule: Rule,
}

macro_rules! stats {
    ($($field:ident: $column:ident, $rule:ident;)*) => {
        const STATS: &[Stat] = &[$(Stat {
            name: col::$column,
            get: |r| r.$field,
            set: |r, v| r.$field = v,
            rule: Rule::$rule,
        },)*];
    };
}

stats! {
    hv_5d_pct: HV_5D_PCT, NonNegative;
    hv_10d_pct: HV_10D_PCT, NonNegative;
    hv_20d_pct: HV_20D_PCT, NonNegative;
    hv_30d_pct: HV_30D_PCT, NonNegative;
    hv_60d_pct: HV_60D_PCT, NonNegative;
    hv_90d_pct: HV_90D_PCT, NonNegative;
    hv_120d_pct: HV_120D_PCT, NonNegative;
    hv_180d_pct: HV_180D_PCT, NonNegative;
    hv_252d_pct: HV_252D_PCT, NonNegative;
    hv_30d_ex_earnings_pct: HV_30D_EX_EARNINGS_PCT, NonNegative;
    iv10d_pct: IV10D_PCT, Positive;
    iv20d_pct: IV20D_PCT, Positive;
    iv30d_pct: IV30D_PCT, Positive;
    iv60d_pct: IV60D_PCT, Positive;
    iv90d_pct: IV90D_PCT, Positive;
    iv6m_pct: IV6M_PCT, Positive;
    iv1yr_pct: IV1YR_PCT, Positive;
    front_atm_iv_pct: FRONT_ATM_IV_PCT, Positive;
    skew25_30d_pct: SKEW25_30D_PCT, Finite;
    skew_slope_30d: SKEW_SLOPE_30D, Finite;
    smile_curvature_30d: SMILE_CURVATURE_30D, Finite;
    iv_rank: IV_RANK, ZeroToHundred;
    iv_percentile: IV_PERCENTILE, ZeroToHundred;
    vrp_30d_pct: VRP_30D_PCT, Finite;
    vrp_ratio: VRP_RATIO, NonNegative;
    beta_spy_1y: BETA_SPY_1Y, Finite;
    correlation_spy_1y: CORRELATION_SPY_1Y, Correlation;
    log_return_1d: LOG_RETURN_1D, Finite;
    earnings_avg_move_pct: EARNINGS_AVG_MOVE_PCT, Finite;
    earnings_avg_abs_move_pct: EARNINGS_AVG_ABS_MOVE_PCT, NonNegative;
    earnings_avg_up_move_pct: EARNINGS_AVG_UP_MOVE_PCT, NonNegative;
    earnings_avg_down_move_pct: EARNINGS_AVG_DOWN_MOVE_PCT, Finite;
    earnings_avg_beat_move_pct: EARNINGS_AVG_BEAT_MOVE_PCT, Finite;
    earnings_avg_miss_move_pct: EARNINGS_AVG_MISS_MOVE_PCT, Finite;
    earnings_max_up_pct: EARNINGS_MAX_UP_PCT, NonNegative;
    earnings_max_down_pct: EARNINGS_MAX_DOWN_PCT, Finite;
}

/// A nullable UInt64 count column and its accessors.
struct Count {
    name: &'static str,
    get: fn(&VolDailyRow) -> Option<u64>,
    set: fn(&mut VolDailyRow, Option<u64>),
}

macro_rules! counts {
    ($($field:ident: $column:ident;)*) => {
        const COUNTS: &[Count] = &[$(Count {
            name: col::$column,
            get: |r| r.$field,
            set: |r, v| r.$field = v,
        },)*];
    };
}

counts! {
    earnings_count: EARNINGS_COUNT;
    earnings_up_count: EARNINGS_UP_COUNT;
    earnings_down_count: EARNINGS_DOWN_COUNT;
    earnings_beat_count: EARNINGS_BEAT_COUNT;
    earnings_miss_count: EARNINGS_MISS_COUNT;
}

fn stat(name: &str) -> Option<&'static Stat> {
    STATS.iter().find(|s| s.name == name)
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let fields = col::ALL.iter().map(|&name| match name {
        col::UNDERLYING => field(name, DataType::Utf8, false),
        col::TRADE_DATE => field(name, DataType::Date32, false),
        col::AS_OF => field(name, timestamp_type(), false),
        col::CLOSE => field(name, DataType::Float64, false),
        col::EARNINGS_IN_HV_30D_WINDOW => field(name, DataType::Boolean, true),
        col::FRONT_EXPIRATION => field(name, DataType::Date32, true),
        _ if COUNTS.iter().any(|c| c.name == name) => field(name, DataType::UInt64, true),
        // Every other column is a nullable statistic (`schema_follows_the_column_constants`
        // checks that each has an entry in STATS).
        _ => field(name, DataType::Float64, true),
    });
    Arc::new(Schema::new(fields.collect::<Vec<_>>()))
});

/// The Arrow schema of the `vol_daily` dataset (shared, built once).
pub fn vol_daily_schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

snapshot_row!(VolDailyRow, VolDaily, col::ALL, vol_daily_schema, build: build_daily, read: read);

fn build_daily(rows: &[VolDailyRow]) -> Result<RecordBatch, SchemaError> {
    let columns: Vec<ArrayRef> = col::ALL
        .iter()
        .map(|&name| -> ArrayRef {
            match name {
                col::UNDERLYING => utf8(rows.iter().map(|r| r.underlying.as_str())),
                col::TRADE_DATE => dates(rows.iter().map(|r| r.trade_date)),
                col::AS_OF => timestamps(rows.iter().map(|r| r.as_of)),
                col::CLOSE => f64s(rows.iter().map(|r| r.close)),
                col::EARNINGS_IN_HV_30D_WINDOW => Arc::new(
                    rows.iter()
                        .map(|r| r.earnings_in_hv_30d_window)
                        .collect::<BooleanArray>(),
                ),
                col::FRONT_EXPIRATION => Arc::new(
                    rows.iter()
                        .map(|r| r.front_expiration.map(date_to_days))
                        .collect::<Date32Array>(),
                ),
                _ => match (stat(name), COUNTS.iter().find(|c| c.name == name)) {
                    (Some(s), _) => f64s_opt(rows.iter().map(s.get)),
                    (None, Some(count)) => {
                        Arc::new(rows.iter().map(count.get).collect::<UInt64Array>())
                    }
                    (None, None) => f64s_opt(rows.iter().map(|_| None)),
                },
            }
        })
        .collect();
    Ok(RecordBatch::try_new(vol_daily_schema(), columns)?)
}

/// Checks every value rule of a conformed batch and reads its rows (always: vol batches are
/// small, so `_keep` saves nothing).
fn read(batch: &RecordBatch, _keep: bool) -> Result<Vec<VolDailyRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::VolDaily, batch);
    let underlying = c.str(col::UNDERLYING)?;
    let trade_date = c.date(col::TRADE_DATE)?;
    let as_of = c.timestamp(col::AS_OF)?;
    let close = c.f64(col::CLOSE)?;
    let earnings = c.bool(col::EARNINGS_IN_HV_30D_WINDOW)?;
    let front_expiration = c.date(col::FRONT_EXPIRATION)?;
    let stats: Vec<(&Stat, &Float64Array)> = STATS
        .iter()
        .map(|s| Ok((s, c.f64(s.name)?)))
        .collect::<Result<_, SchemaError>>()?;
    let counts: Vec<(&Count, &UInt64Array)> = COUNTS
        .iter()
        .map(|k| Ok((k, c.u64(k.name)?)))
        .collect::<Result<_, SchemaError>>()?;
    (0..batch.num_rows())
        .map(|row| {
            let trade_date = c.date_value(col::TRADE_DATE, trade_date, row)?;
            let mut out = VolDailyRow::new(
                &c.symbol(col::UNDERLYING, underlying, row)?,
                trade_date,
                c.timestamp_value(col::AS_OF, as_of, row)?,
                c.positive(col::CLOSE, row, close.value(row))?,
            );
            out.earnings_in_hv_30d_window = opt(earnings, row, || earnings.value(row));
            out.front_expiration = opt(front_expiration, row, || {
                c.date_value(col::FRONT_EXPIRATION, front_expiration, row)
            })
            .transpose()?;
            for (s, array) in &stats {
                let value = opt(*array, row, || check(&c, s, row, array.value(row))).transpose()?;
                (s.set)(&mut out, value);
            }
            for (k, array) in &counts {
                (k.set)(&mut out, opt(*array, row, || array.value(row)));
            }
            check_earnings_counts(&c, &out, row)?;
            match out.front_expiration {
                Some(e) => after_trade_date(&c, col::FRONT_EXPIRATION, row, trade_date, e)?,
                None if out.front_atm_iv_pct.is_some() => {
                    return Err(c.invalid(
                        col::FRONT_EXPIRATION,
                        row,
                        "null while front_atm_iv_pct is present",
                    ));
                }
                None => {}
            }
            Ok(out)
        })
        .collect()
}

/// The earnings counts are all present or all null, up + down = count and beat + miss ≤ count
/// (a report without both EPS figures is neither).
fn check_earnings_counts(
    c: &SnapshotColumns<'_>,
    r: &VolDailyRow,
    row: usize,
) -> Result<(), SchemaError> {
    let all = [
        r.earnings_count,
        r.earnings_up_count,
        r.earnings_down_count,
        r.earnings_beat_count,
        r.earnings_miss_count,
    ];
    match all {
        [None, None, None, None, None] => Ok(()),
        [Some(n), Some(up), Some(down), Some(beat), Some(miss)] => {
            if up.checked_add(down) != Some(n) {
                Err(c.invalid(
                    col::EARNINGS_UP_COUNT,
                    row,
                    format!("{up} up + {down} down is not the {n} reports"),
                ))
            } else if beat.checked_add(miss).is_none_or(|sum| sum > n) {
                Err(c.invalid(
                    col::EARNINGS_BEAT_COUNT,
                    row,
                    format!("{beat} beats + {miss} misses exceed the {n} reports"),
                ))
            } else {
                Ok(())
            }
        }
        _ => Err(c.invalid(
            col::EARNINGS_COUNT,
            row,
            "the earnings counts must be all present or all null",
        )),
    }
}

/// An expiration of a row falls after the row's trade date.
fn after_trade_date(
    c: &SnapshotColumns<'_>,
    column: &'static str,
    row: usize,
    trade_date: NaiveDate,
    expiration: NaiveDate,
) -> Result<(), SchemaError> {
    if expiration > trade_date {
        Ok(())
    } else {
        Err(c.invalid(
            column,
            row,
            format!("{expiration} is not after the trade date {trade_date}"),
        ))
    }
}

fn check(c: &SnapshotColumns<'_>, s: &Stat, row: usize, v: f64) -> Result<f64, SchemaError> {
    let value = c.finite(s.name, row, v)?;
    let (ok, what) = match s.rule {
        Rule::Finite => (true, ""),
        Rule::NonNegative => (value >= 0.0, "≥ 0"),
        Rule::Positive => (value > 0.0, "> 0"),
        Rule::ZeroToHundred => ((0.0..=100.0).contains(&value), "within 0–100"),
        Rule::Correlation => ((-1.0..=1.0).contains(&value), "within −1…1"),
    };
    if ok {
        Ok(value)
    } else {
        Err(c.invalid(s.name, row, format!("{value} is not {what}")))
    }
}

/// The `vol_term` dataset's name.
pub const VOL_TERM_DATASET: &str = SnapshotDataset::VolTerm.name();

/// One expiration of an underlying's at-the-money term structure at a session close. Units:
/// [`crate::columns::vol_term`].
#[derive(Debug, Clone, PartialEq)]
pub struct VolTermRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// The instant described (the session close).
    pub as_of: DateTime<Utc>,
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Settlement of the series.
    pub settlement: SettlementStyle,
    /// Calendar days from the trade date.
    pub dte: i32,
    /// Years to expiry, > 0.
    pub years_to_expiry: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// IV at the forward, percentage points.
    pub atm_iv_pct: Option<f64>,
    /// Call IV at Δ = 0.25, percentage points.
    pub call25_iv_pct: Option<f64>,
    /// Put IV at Δ = −0.25, percentage points.
    pub put25_iv_pct: Option<f64>,
    /// `put25_iv_pct − call25_iv_pct`, percentage points.
    pub skew25_pct: Option<f64>,
}

static TERM_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(t::UNDERLYING, DataType::Utf8, false),
        field(t::TRADE_DATE, DataType::Date32, false),
        field(t::AS_OF, timestamp_type(), false),
        field(t::EXPIRATION, DataType::Date32, false),
        field(t::SETTLEMENT, DataType::Utf8, false),
        field(t::DTE, DataType::Int32, false),
        field(t::YEARS_TO_EXPIRY, DataType::Float64, false),
        field(t::FORWARD, DataType::Float64, false),
        field(t::ATM_IV_PCT, DataType::Float64, true),
        field(t::CALL25_IV_PCT, DataType::Float64, true),
        field(t::PUT25_IV_PCT, DataType::Float64, true),
        field(t::SKEW25_PCT, DataType::Float64, true),
    ]))
});

/// The Arrow schema of the `vol_term` dataset (shared, built once).
pub fn vol_term_schema() -> SchemaRef {
    Arc::clone(&TERM_SCHEMA)
}

snapshot_row!(VolTermRow, VolTerm, t::ALL, vol_term_schema, build: build_term, read: read_term);

fn build_term(rows: &[VolTermRow]) -> Result<RecordBatch, SchemaError> {
    let columns: Vec<ArrayRef> = vec![
        utf8(rows.iter().map(|r| r.underlying.as_str())),
        dates(rows.iter().map(|r| r.trade_date)),
        timestamps(rows.iter().map(|r| r.as_of)),
        dates(rows.iter().map(|r| r.expiration)),
        utf8(rows.iter().map(|r| r.settlement.as_str())),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.dte))),
        f64s(rows.iter().map(|r| r.years_to_expiry)),
        f64s(rows.iter().map(|r| r.forward)),
        f64s_opt(rows.iter().map(|r| r.atm_iv_pct)),
        f64s_opt(rows.iter().map(|r| r.call25_iv_pct)),
        f64s_opt(rows.iter().map(|r| r.put25_iv_pct)),
        f64s_opt(rows.iter().map(|r| r.skew25_pct)),
    ];
    Ok(RecordBatch::try_new(vol_term_schema(), columns)?)
}

/// As [`read`], for `vol_term`.
fn read_term(batch: &RecordBatch, _keep: bool) -> Result<Vec<VolTermRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::VolTerm, batch);
    let underlying = c.str(t::UNDERLYING)?;
    let trade_date = c.date(t::TRADE_DATE)?;
    let as_of = c.timestamp(t::AS_OF)?;
    let expiration = c.date(t::EXPIRATION)?;
    let settlement = c.str(t::SETTLEMENT)?;
    let dte = c.i32(t::DTE)?;
    let years = c.f64(t::YEARS_TO_EXPIRY)?;
    let forward = c.f64(t::FORWARD)?;
    let atm = c.f64(t::ATM_IV_PCT)?;
    let call25 = c.f64(t::CALL25_IV_PCT)?;
    let put25 = c.f64(t::PUT25_IV_PCT)?;
    let skew = c.f64(t::SKEW25_PCT)?;
    let iv = |name, array: &Float64Array, row| {
        opt(array, row, || c.positive(name, row, array.value(row))).transpose()
    };
    (0..batch.num_rows())
        .map(|row| {
            let trade_date = c.date_value(t::TRADE_DATE, trade_date, row)?;
            let expiration = c.date_value(t::EXPIRATION, expiration, row)?;
            after_trade_date(&c, t::EXPIRATION, row, trade_date, expiration)?;
            let dte = dte.value(row);
            c.check_dte(t::DTE, row, trade_date, expiration, dte)?;
            Ok(VolTermRow {
                underlying: c.symbol(t::UNDERLYING, underlying, row)?,
                trade_date,
                as_of: c.timestamp_value(t::AS_OF, as_of, row)?,
                expiration,
                settlement: c.code(t::SETTLEMENT, settlement, row)?,
                dte,
                years_to_expiry: c.positive(t::YEARS_TO_EXPIRY, row, years.value(row))?,
                forward: c.positive(t::FORWARD, row, forward.value(row))?,
                atm_iv_pct: iv(t::ATM_IV_PCT, atm, row)?,
                call25_iv_pct: iv(t::CALL25_IV_PCT, call25, row)?,
                put25_iv_pct: iv(t::PUT25_IV_PCT, put25, row)?,
                skew25_pct: opt(skew, row, || c.finite(t::SKEW25_PCT, row, skew.value(row)))
                    .transpose()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_support::{invalid_column, rejects};
    use arrow_schema::Field;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    fn rows() -> Vec<VolDailyRow> {
        let as_of = DateTime::from_timestamp(1_795_208_400, 0).unwrap();
        let full = VolDailyRow {
            hv_5d_pct: Some(18.2),
            hv_10d_pct: Some(19.0),
            hv_20d_pct: Some(21.5),
            hv_30d_pct: Some(22.0),
            hv_60d_pct: Some(23.1),
            hv_90d_pct: Some(24.0),
            hv_120d_pct: Some(24.4),
            hv_180d_pct: Some(25.0),
            hv_252d_pct: Some(26.3),
            hv_30d_ex_earnings_pct: Some(19.9),
            earnings_in_hv_30d_window: Some(true),
            iv10d_pct: Some(27.0),
            iv20d_pct: Some(26.5),
            iv30d_pct: Some(26.0),
            iv60d_pct: Some(25.7),
            iv90d_pct: Some(25.5),
            iv6m_pct: Some(25.2),
            iv1yr_pct: Some(25.0),
            front_expiration: Some(day(21)),
            front_atm_iv_pct: Some(28.0),
            skew25_30d_pct: Some(4.2),
            skew_slope_30d: Some(-31.5),
            smile_curvature_30d: Some(48.0),
            iv_rank: Some(35.0),
            iv_percentile: Some(41.3),
            vrp_30d_pct: Some(4.0),
            vrp_ratio: Some(26.0 / 22.0),
            beta_spy_1y: Some(1.21),
            correlation_spy_1y: Some(0.68),
            log_return_1d: Some(-0.0123),
            earnings_count: Some(4),
            earnings_up_count: Some(3),
            earnings_down_count: Some(1),
            earnings_beat_count: Some(2),
            earnings_miss_count: Some(1),
            earnings_avg_move_pct: Some(1.5),
            earnings_avg_abs_move_pct: Some(3.0),
            earnings_avg_up_move_pct: Some(3.0),
            earnings_avg_down_move_pct: Some(-3.0),
            earnings_avg_beat_move_pct: Some(2.5),
            earnings_avg_miss_move_pct: Some(-3.0),
            earnings_max_up_pct: Some(4.0),
            earnings_max_down_pct: Some(-3.0),
            ..VolDailyRow::new("AAPL", day(20), as_of, 231.4)
        };
        // A young listing: only the close and a short HV.
        let sparse = VolDailyRow {
            hv_5d_pct: Some(30.0),
            earnings_in_hv_30d_window: Some(false),
            ..VolDailyRow::new("NEWCO", day(20), as_of, 12.5)
        };
        vec![full, sparse]
    }

    #[test]
    fn schema_follows_the_column_constants() {
        let schema = vol_daily_schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, col::ALL);
        // Every Float64 column but the close is a statistic with a rule, and vice versa.
        let float_stats = schema
            .fields()
            .iter()
            .filter(|f| f.data_type() == &DataType::Float64 && f.name() != col::CLOSE)
            .count();
        assert_eq!(float_stats, STATS.len());
        assert!(STATS.iter().all(|s| col::ALL.contains(&s.name)));
        let counts = schema
            .fields()
            .iter()
            .filter(|f| f.data_type() == &DataType::UInt64)
            .count();
        assert_eq!(counts, COUNTS.len());
        assert!(COUNTS.iter().all(|c| col::ALL.contains(&c.name)));
    }

    #[test]
    fn rows_round_trip() {
        let batch = VolDailyRow::to_batch(&rows()).unwrap();
        assert_eq!(batch.num_rows(), 2);
        assert_eq!(VolDailyRow::from_batch(&batch).unwrap(), rows());
        assert_eq!(VolDailyRow::to_batch(&[]).unwrap().num_rows(), 0);
    }

    #[test]
    fn missing_nullable_columns_read_as_null_and_extra_columns_are_ignored() {
        let batch = VolDailyRow::to_batch(&rows()).unwrap();
        // Written before the skew and the ex-earnings HV existed, read with a later column.
        let schema = batch.schema();
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| {
                let name = schema.field(i).name();
                name != col::SKEW25_30D_PCT
                    && name != col::SKEW_SLOPE_30D
                    && name != col::HV_30D_EX_EARNINGS_PCT
                    && name != col::LOG_RETURN_1D
                    && !name.starts_with("earnings_")
            })
            .collect();
        let older = batch.project(&keep).unwrap();
        let mut fields: Vec<Field> = older
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(Field::new("later", DataType::Utf8, true));
        let mut columns = older.columns().to_vec();
        columns.push(utf8(["x", "y"]));
        let newer = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let back = VolDailyRow::from_batch(&newer).unwrap();
        assert!(back.iter().all(|r| r.skew25_30d_pct.is_none()));
        assert!(back.iter().all(|r| r.skew_slope_30d.is_none()));
        assert!(back.iter().all(|r| r.hv_30d_ex_earnings_pct.is_none()));
        // Files written before the return and the earnings statistics read them as null.
        assert!(back.iter().all(|r| r.log_return_1d.is_none()));
        assert!(back.iter().all(|r| r.earnings_count.is_none()));
        assert!(back.iter().all(|r| r.earnings_avg_abs_move_pct.is_none()));
        assert!(back.iter().all(|r| r.earnings_in_hv_30d_window.is_none()));
        assert_eq!(back[0].iv30d_pct, Some(26.0));
        // A required column missing is an error naming it.
        let no_close: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| schema.field(i).name() != col::CLOSE)
            .collect();
        let err = VolDailyRow::from_batch(&batch.project(&no_close).unwrap()).unwrap_err();
        assert_eq!(invalid_column(err), col::CLOSE);
    }

    #[test]
    fn bad_values_are_rejected_with_the_column() {
        type Edit = fn(&mut VolDailyRow);
        let cases: [(Edit, &str); 10] = [
            (|r| r.close = 0.0, col::CLOSE),
            (|r| r.close = f64::NAN, col::CLOSE),
            (|r| r.hv_20d_pct = Some(-0.1), col::HV_20D_PCT),
            (|r| r.iv30d_pct = Some(0.0), col::IV30D_PCT),
            (
                |r| r.skew25_30d_pct = Some(f64::INFINITY),
                col::SKEW25_30D_PCT,
            ),
            (|r| r.iv_rank = Some(100.5), col::IV_RANK),
            (|r| r.iv_percentile = Some(-1.0), col::IV_PERCENTILE),
            (
                |r| r.correlation_spy_1y = Some(1.01),
                col::CORRELATION_SPY_1Y,
            ),
            (|r| r.front_expiration = None, col::FRONT_EXPIRATION),
            (
                |r| r.front_expiration = Some(day(20)),
                col::FRONT_EXPIRATION,
            ),
        ];
        for (edit, column) in cases {
            rejects(
                &rows(),
                VolDailyRow::to_batch,
                |r| {
                    edit(&mut r[0]);
                },
                column,
            );
        }
        // The earnings counts must add up and come together.
        type CountEdit = fn(&mut VolDailyRow);
        let count_cases: [(CountEdit, &str); 3] = [
            (|r| r.earnings_up_count = Some(2), col::EARNINGS_UP_COUNT),
            (
                |r| r.earnings_beat_count = Some(4),
                col::EARNINGS_BEAT_COUNT,
            ),
            (|r| r.earnings_miss_count = None, col::EARNINGS_COUNT),
        ];
        for (edit, column) in count_cases {
            rejects(
                &rows(),
                VolDailyRow::to_batch,
                |r| {
                    edit(&mut r[0]);
                },
                column,
            );
        }
        rejects(
            &rows(),
            VolDailyRow::to_batch,
            |r| {
                r[0].earnings_avg_abs_move_pct = Some(-0.5);
            },
            col::EARNINGS_AVG_ABS_MOVE_PCT,
        );
        rejects(
            &rows(),
            VolDailyRow::to_batch,
            |r| {
                r[1].underlying = String::new();
            },
            col::UNDERLYING,
        );
        // A stored batch with a bad value is rejected on read too.
        let batch = VolDailyRow::to_batch(&rows()).unwrap();
        let index = batch.schema().index_of(col::VRP_RATIO).unwrap();
        let mut columns = batch.columns().to_vec();
        columns[index] = f64s_opt([Some(-2.0), None]);
        let bad = RecordBatch::try_new(batch.schema(), columns).unwrap();
        assert_eq!(
            invalid_column(VolDailyRow::from_batch(&bad).unwrap_err()),
            col::VRP_RATIO
        );
    }

    fn term_rows() -> Vec<VolTermRow> {
        let as_of = DateTime::from_timestamp(1_795_208_400, 0).unwrap();
        let row = |expiration: NaiveDate, dte, atm: Option<f64>| VolTermRow {
            underlying: "SPX".into(),
            trade_date: day(20),
            as_of,
            expiration,
            settlement: SettlementStyle::Pm,
            dte,
            years_to_expiry: f64::from(dte) / 365.0,
            forward: 6_000.5,
            atm_iv_pct: atm,
            call25_iv_pct: atm.map(|v| v - 2.0),
            put25_iv_pct: atm.map(|v| v + 3.0),
            skew25_pct: atm.map(|_| 5.0),
        };
        vec![
            row(day(21), 1, Some(14.0)),
            VolTermRow {
                settlement: SettlementStyle::Am,
                ..row(day(27), 7, None)
            },
        ]
    }

    #[test]
    fn term_rows_round_trip_and_read_older_files() {
        let names: Vec<String> = vol_term_schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, t::ALL);
        let batch = VolTermRow::to_batch(&term_rows()).unwrap();
        assert_eq!(VolTermRow::from_batch(&batch).unwrap(), term_rows());
        // A file without the wing columns reads them as null.
        let schema = batch.schema();
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| !schema.field(i).name().contains("25"))
            .collect();
        let back = VolTermRow::from_batch(&batch.project(&keep).unwrap()).unwrap();
        assert!(back.iter().all(|r| r.skew25_pct.is_none()));
        assert_eq!(back[0].atm_iv_pct, Some(14.0));
    }

    #[test]
    fn bad_term_rows_are_rejected_with_the_column() {
        type Edit = fn(&mut VolTermRow);
        let cases: [(Edit, &str); 5] = [
            (|r| r.expiration = day(20), t::EXPIRATION),
            (|r| r.dte = 2, t::DTE),
            (|r| r.forward = 0.0, t::FORWARD),
            (|r| r.atm_iv_pct = Some(0.0), t::ATM_IV_PCT),
            (|r| r.skew25_pct = Some(f64::NAN), t::SKEW25_PCT),
        ];
        for (edit, column) in cases {
            rejects(
                &term_rows(),
                VolTermRow::to_batch,
                |r| {
                    edit(&mut r[0]);
                },
                column,
            );
        }
    }
}
