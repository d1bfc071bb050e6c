//! The `vol_daily` snapshot dataset that compute publishes once per session close: one row per
//! underlying × session with the close, realized vol at the standard windows, constant-maturity
//! IV, the front ATM IV, the 30-day 25-delta skew, IV rank and percentile, the volatility risk
//! premium, and beta and correlation to SPY — the columns the volatility and cores endpoints
//! read.
//!
//! Column names, meanings and units are in [`crate::columns::vol_daily`] (every volatility in
//! annualised percentage points). [`VolDailyRow::to_batch`] and [`VolDailyRow::from_batch`]
//! validate both ways: non-finite numbers (absent values are nulls, never NaN), a non-positive
//! close or IV, a negative HV or VRP ratio, a rank or percentile outside 0–100, a correlation
//! outside −1…1, a front ATM IV without its expiration or an expiration not after the trade
//! date are rejected with [`SchemaError::InvalidSnapshot`] naming the column and row. Batches
//! are read by column name: unknown extra columns are ignored and a missing nullable column
//! reads as nulls, so a reader accepts snapshots written before a column was added.

use std::sync::{Arc, LazyLock};

use arrow_array::{ArrayRef, BooleanArray, Date32Array, Float64Array, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::vol_daily as col;
use crate::error::SchemaError;
use crate::exposure_snapshot::{SnapshotColumns, conform};
use crate::table::{
    date_to_days, dates, f64s, f64s_opt, field, opt, timestamp_type, timestamps, utf8,
};

/// The dataset's name (storage paths, events, error messages).
pub const VOL_DAILY_DATASET: &str = crate::bus::snapshot_datasets::VOL_DAILY;

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
            iv_rank: None,
            iv_percentile: None,
            vrp_30d_pct: None,
            vrp_ratio: None,
            beta_spy_1y: None,
            correlation_spy_1y: None,
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
    iv_rank: IV_RANK, ZeroToHundred;
    iv_percentile: IV_PERCENTILE, ZeroToHundred;
    vrp_30d_pct: VRP_30D_PCT, Finite;
    vrp_ratio: VRP_RATIO, NonNegative;
    beta_spy_1y: BETA_SPY_1Y, Finite;
    correlation_spy_1y: CORRELATION_SPY_1Y, Correlation;
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

impl VolDailyRow {
    /// Validates the rows and builds a batch in the canonical schema.
    pub fn to_batch(rows: &[VolDailyRow]) -> Result<RecordBatch, SchemaError> {
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
                    _ => match stat(name) {
                        Some(s) => f64s_opt(rows.iter().map(s.get)),
                        None => f64s_opt(rows.iter().map(|_| None)),
                    },
                }
            })
            .collect();
        let batch = RecordBatch::try_new(vol_daily_schema(), columns)?;
        read(&batch)?;
        Ok(batch)
    }

    /// Validates a batch (columns by name, types, nulls, every value rule) and reads its rows.
    pub fn from_batch(batch: &RecordBatch) -> Result<Vec<VolDailyRow>, SchemaError> {
        let batch = conform(VOL_DAILY_DATASET, &vol_daily_schema(), col::ALL, batch)?;
        read(&batch)
    }
}

fn read(batch: &RecordBatch) -> Result<Vec<VolDailyRow>, SchemaError> {
    let c = SnapshotColumns::new(VOL_DAILY_DATASET, batch);
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
            match (out.front_expiration, out.front_atm_iv_pct) {
                (None, Some(_)) => {
                    return Err(c.invalid(
                        col::FRONT_EXPIRATION,
                        Some(row),
                        "null while front_atm_iv_pct is present",
                    ));
                }
                (Some(e), _) if e <= trade_date => {
                    return Err(c.invalid(
                        col::FRONT_EXPIRATION,
                        Some(row),
                        format!("{e} is not after the trade date {trade_date}"),
                    ));
                }
                _ => {}
            }
            Ok(out)
        })
        .collect()
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
        Err(c.invalid(s.name, Some(row), format!("{value} is not {what}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            iv_rank: Some(35.0),
            iv_percentile: Some(41.3),
            vrp_30d_pct: Some(4.0),
            vrp_ratio: Some(26.0 / 22.0),
            beta_spy_1y: Some(1.21),
            correlation_spy_1y: Some(0.68),
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

    fn invalid_column(err: SchemaError) -> &'static str {
        match err {
            SchemaError::InvalidSnapshot { column, .. } => column,
            other => panic!("unexpected error {other}"),
        }
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
                name != col::SKEW25_30D_PCT && name != col::HV_30D_EX_EARNINGS_PCT
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
        assert!(back.iter().all(|r| r.hv_30d_ex_earnings_pct.is_none()));
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
            let mut r = rows();
            edit(&mut r[0]);
            assert_eq!(
                invalid_column(VolDailyRow::to_batch(&r).unwrap_err()),
                column
            );
        }
        let mut r = rows();
        r[1].underlying = String::new();
        assert_eq!(
            invalid_column(VolDailyRow::to_batch(&r).unwrap_err()),
            col::UNDERLYING
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
}
