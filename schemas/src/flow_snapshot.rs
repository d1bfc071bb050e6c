//! The `flow` snapshot dataset that compute publishes: one row per contract that traded in the
//! session, with its cumulative volume, premium, open interest and the unusual-activity flag.
//!
//! Column names, meanings and units are in [`crate::columns::flow`]. [`FlowSnapshotRow::to_batch`]
//! and [`FlowSnapshotRow::from_batch`] validate both ways (non-finite numbers, negative prices,
//! bid above ask, zero volume, a ratio present without open interest or missing with it, a
//! `dte` that disagrees with the dates, unknown codes) with [`SchemaError::InvalidValue`].
//! Batches are read by column name: unknown extra columns are ignored and a missing nullable
//! column reads as nulls.

use std::sync::{Arc, LazyLock};

use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::flow as col;
use crate::enums::wire_enum;
use crate::enums::{OptionType, WireEnum};
use crate::error::SchemaError;
use crate::snapshot::{SnapshotColumns, SnapshotDataset, snapshot_row};
use crate::table::{
    bools, calendar_dte, dates, f64s, f64s_opt, field, opt, read_rows, snapshot_identity_columns,
    timestamp_type, timestamps, u64s, utf8,
};

/// The dataset's name (storage paths, events, error messages).
pub const FLOW_DATASET: &str = SnapshotDataset::Flow.name();

wire_enum! {
    /// In or out of the money against spot.
    MoneynessCode, "moneyness" {
        /// `ITM`.
        Itm = "ITM",
        /// `OTM` (at the money counts as OTM).
        Otm = "OTM",
    }
}

/// One contract's session flow. Units: [`crate::columns::flow`].
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSnapshotRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// The instant described.
    pub as_of: DateTime<Utc>,
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Calendar days from `trade_date` to `expiration`.
    pub dte: i32,
    /// Strike, dollars.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// Bid, dollars per share.
    pub bid: Option<f64>,
    /// Ask, dollars per share.
    pub ask: Option<f64>,
    /// Mid, dollars per share.
    pub mid: Option<f64>,
    /// Per-share delta.
    pub delta: Option<f64>,
    /// Contracts traded this session; > 0.
    pub volume: u64,
    /// Open interest, contracts.
    pub open_interest: u64,
    /// volume × price × 100, dollars.
    pub premium_usd: Option<f64>,
    /// volume / open interest; `None` exactly when open interest is 0.
    pub volume_oi_ratio: Option<f64>,
    /// The unusual-activity flag.
    pub is_unusual: bool,
    /// Against spot.
    pub moneyness: MoneynessCode,
}

/// One contract's values in a `flow` row: all but what an underlying's rows share (underlying,
/// session, instant) and `dte`, which the dates give. Units: [`crate::columns::flow`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowValues {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// Bid, dollars per share.
    pub bid: Option<f64>,
    /// Ask, dollars per share.
    pub ask: Option<f64>,
    /// Mid, dollars per share.
    pub mid: Option<f64>,
    /// Per-share delta.
    pub delta: Option<f64>,
    /// Contracts traded this session; > 0.
    pub volume: u64,
    /// Open interest, contracts.
    pub open_interest: u64,
    /// volume × price × 100, dollars.
    pub premium_usd: Option<f64>,
    /// volume / open interest; `None` exactly when open interest is 0.
    pub volume_oi_ratio: Option<f64>,
    /// The unusual-activity flag.
    pub is_unusual: bool,
    /// Against spot.
    pub moneyness: MoneynessCode,
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(col::UNDERLYING, DataType::Utf8, false),
        field(col::TRADE_DATE, DataType::Date32, false),
        field(col::AS_OF, timestamp_type(), false),
        field(col::EXPIRATION, DataType::Date32, false),
        field(col::DTE, DataType::Int32, false),
        field(col::STRIKE, DataType::Float64, false),
        field(col::OPTION_TYPE, DataType::Utf8, false),
        field(col::BID, DataType::Float64, true),
        field(col::ASK, DataType::Float64, true),
        field(col::MID, DataType::Float64, true),
        field(col::DELTA, DataType::Float64, true),
        field(col::VOLUME, DataType::UInt64, false),
        field(col::OPEN_INTEREST, DataType::UInt64, false),
        field(col::PREMIUM_USD, DataType::Float64, true),
        field(col::VOLUME_OI_RATIO, DataType::Float64, true),
        field(col::IS_UNUSUAL, DataType::Boolean, false),
        field(col::MONEYNESS, DataType::Utf8, false),
    ]))
});

/// The Arrow schema of the `flow` dataset (shared, built once).
pub fn flow_schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

snapshot_row!(FlowSnapshotRow, Flow, col::ALL, flow_schema, build: FlowSnapshotRow::build_batch, read: read);

impl FlowSnapshotRow {
    /// The row of `values` for `underlying` in session `trade_date` at `as_of` (`dte` from the
    /// dates, as [`calendar_dte`]).
    pub fn new(
        underlying: &str,
        trade_date: NaiveDate,
        as_of: DateTime<Utc>,
        values: FlowValues,
    ) -> Self {
        let FlowValues {
            expiration,
            strike,
            option_type,
            bid,
            ask,
            mid,
            delta,
            volume,
            open_interest,
            premium_usd,
            volume_oi_ratio,
            is_unusual,
            moneyness,
        } = values;
        Self {
            underlying: underlying.to_owned(),
            trade_date,
            as_of,
            expiration,
            dte: calendar_dte(trade_date, expiration),
            strike,
            option_type,
            bid,
            ask,
            mid,
            delta,
            volume,
            open_interest,
            premium_usd,
            volume_oi_ratio,
            is_unusual,
            moneyness,
        }
    }

    /// The per-contract values of the row.
    pub fn values(&self) -> FlowValues {
        FlowValues {
            expiration: self.expiration,
            strike: self.strike,
            option_type: self.option_type,
            bid: self.bid,
            ask: self.ask,
            mid: self.mid,
            delta: self.delta,
            volume: self.volume,
            open_interest: self.open_interest,
            premium_usd: self.premium_usd,
            volume_oi_ratio: self.volume_oi_ratio,
            is_unusual: self.is_unusual,
            moneyness: self.moneyness,
        }
    }

    /// The batch of one underlying's rows, [`FlowSnapshotRow::new`] of the `values` of each of
    /// `rows`, written column by column without a row (or a copy of the symbol) per contract:
    /// the compute worker's path. As [`FlowSnapshotRow::to_batch_trusted`], the rules are
    /// checked again in debug builds only.
    pub fn batch_of<R>(
        underlying: &str,
        trade_date: NaiveDate,
        as_of: DateTime<Utc>,
        rows: &[R],
        values: impl Fn(&R) -> FlowValues,
    ) -> Result<RecordBatch, SchemaError> {
        let n = rows.len();
        // The expirations come in runs: each run's dte is worked out once.
        let mut run: Option<(NaiveDate, i32)> = None;
        let dte = rows.iter().map(|r| {
            let expiration = values(r).expiration;
            match run {
                Some((date, dte)) if date == expiration => dte,
                _ => {
                    run.insert((expiration, calendar_dte(trade_date, expiration)))
                        .1
                }
            }
        });
        let batch = write_batch(
            rows,
            snapshot_identity_columns(underlying, trade_date, as_of, n),
            Arc::new(Int32Array::from_iter_values(dte)),
            &values,
        )?;
        if cfg!(debug_assertions) {
            read(&batch, false)?;
        }
        Ok(batch)
    }

    fn build_batch(rows: &[Self]) -> Result<RecordBatch, SchemaError> {
        let identity = [
            utf8(rows.iter().map(|r| r.underlying.as_str())),
            dates(rows.iter().map(|r| r.trade_date)),
            timestamps(rows.iter().map(|r| r.as_of)),
        ];
        let dte = Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.dte)));
        write_batch(rows, identity, dte, FlowSnapshotRow::values)
    }
}

/// The `flow` columns of `rows`: `identity` holds the underlying, trade date and `as_of`
/// columns (in that order), `dte` its column, `values` gives the rest of a row; each column is
/// one pass over `rows`.
fn write_batch<'r, R>(
    rows: &'r [R],
    identity: [ArrayRef; 3],
    dte: ArrayRef,
    values: impl Fn(&'r R) -> FlowValues,
) -> Result<RecordBatch, SchemaError> {
    let v = || rows.iter().map(&values);
    let mut columns: Vec<ArrayRef> = identity.into();
    columns.extend([
        dates(v().map(|r| r.expiration)),
        dte,
        f64s(v().map(|r| r.strike)),
        utf8(v().map(|r| r.option_type.as_str())),
        f64s_opt(v().map(|r| r.bid)),
        f64s_opt(v().map(|r| r.ask)),
        f64s_opt(v().map(|r| r.mid)),
        f64s_opt(v().map(|r| r.delta)),
        u64s(v().map(|r| r.volume)),
        u64s(v().map(|r| r.open_interest)),
        f64s_opt(v().map(|r| r.premium_usd)),
        f64s_opt(v().map(|r| r.volume_oi_ratio)),
        bools(v().map(|r| r.is_unusual)),
        utf8(v().map(|r| r.moneyness.as_str())),
    ]);
    Ok(RecordBatch::try_new(flow_schema(), columns)?)
}

fn read(batch: &RecordBatch, keep: bool) -> Result<Vec<FlowSnapshotRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::Flow, batch);
    let underlying = c.str(col::UNDERLYING)?;
    let trade_date = c.date(col::TRADE_DATE)?;
    let as_of = c.timestamp(col::AS_OF)?;
    let expiration = c.date(col::EXPIRATION)?;
    let dte = c.i32(col::DTE)?;
    let strike = c.f64(col::STRIKE)?;
    let option_type = c.str(col::OPTION_TYPE)?;
    let bid = c.f64(col::BID)?;
    let ask = c.f64(col::ASK)?;
    let mid = c.f64(col::MID)?;
    let delta = c.f64(col::DELTA)?;
    let volume = c.u64(col::VOLUME)?;
    let open_interest = c.u64(col::OPEN_INTEREST)?;
    let premium = c.f64(col::PREMIUM_USD)?;
    let ratio = c.f64(col::VOLUME_OI_RATIO)?;
    let is_unusual = c.bool(col::IS_UNUSUAL)?;
    let moneyness = c.str(col::MONEYNESS)?;
    read_rows(batch.num_rows(), keep, |row| {
        let price = |name: &'static str, array: &Float64Array| {
            opt(array, row, || c.non_negative(name, row, array.value(row))).transpose()
        };
        let trade_date = c.date_value(col::TRADE_DATE, trade_date, row)?;
        let expiration = c.date_value(col::EXPIRATION, expiration, row)?;
        let dte = dte.value(row);
        c.check_dte(col::DTE, row, trade_date, expiration, dte)?;
        let (bid, ask) = (price(col::BID, bid)?, price(col::ASK, ask)?);
        if let (Some(b), Some(a)) = (bid, ask)
            && b > a
        {
            return Err(c.invalid(col::BID, row, format!("bid {b} is above ask {a}")));
        }
        let volume = volume.value(row);
        if volume == 0 {
            return Err(c.invalid(
                col::VOLUME,
                row,
                "a flow row is a contract that traded: volume must be > 0",
            ));
        }
        let open_interest = open_interest.value(row);
        let volume_oi_ratio = price(col::VOLUME_OI_RATIO, ratio)?;
        if volume_oi_ratio.is_some() != (open_interest > 0) {
            return Err(c.invalid(
                col::VOLUME_OI_RATIO,
                row,
                "present exactly when open interest is > 0",
            ));
        }
        Ok(FlowSnapshotRow {
            underlying: c.symbol(col::UNDERLYING, underlying, row)?,
            trade_date,
            as_of: c.timestamp_value(col::AS_OF, as_of, row)?,
            expiration,
            dte,
            strike: c.positive(col::STRIKE, row, strike.value(row))?,
            option_type: c.code(col::OPTION_TYPE, option_type, row)?,
            bid,
            ask,
            mid: price(col::MID, mid)?,
            delta: opt(delta, row, || c.finite(col::DELTA, row, delta.value(row))).transpose()?,
            volume,
            open_interest,
            premium_usd: price(col::PREMIUM_USD, premium)?,
            volume_oi_ratio,
            is_unusual: is_unusual.value(row),
            moneyness: c.code(col::MONEYNESS, moneyness, row)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_support::{invalid_column, rejects};

    use arrow_schema::Field;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    fn rows() -> Vec<FlowSnapshotRow> {
        let row = FlowSnapshotRow {
            underlying: "AAPL".to_owned(),
            trade_date: day(20),
            as_of: DateTime::from_timestamp(1_795_100_000, 0).unwrap(),
            expiration: day(27),
            dte: 7,
            strike: 230.0,
            option_type: OptionType::Call,
            bid: Some(2.1),
            ask: Some(2.2),
            mid: Some(2.15),
            delta: Some(0.41),
            volume: 1_500,
            open_interest: 600,
            premium_usd: Some(322_500.0),
            volume_oi_ratio: Some(2.5),
            is_unusual: true,
            moneyness: MoneynessCode::Otm,
        };
        let no_oi = FlowSnapshotRow {
            option_type: OptionType::Put,
            bid: Some(0.0),
            ask: Some(0.05),
            mid: None,
            delta: None,
            volume: 20,
            open_interest: 0,
            premium_usd: Some(50.0),
            volume_oi_ratio: None,
            is_unusual: false,
            moneyness: MoneynessCode::Itm,
            ..row.clone()
        };
        vec![row, no_oi]
    }

    #[test]
    fn rows_round_trip_and_evolve() {
        let batch = FlowSnapshotRow::to_batch(&rows()).unwrap();
        assert_eq!(FlowSnapshotRow::from_batch(&batch).unwrap(), rows());
        // One underlying's values written column by column: the same batch, the same rows.
        let all = rows();
        let first = &all[0];
        let by_values = FlowSnapshotRow::batch_of(
            &first.underlying,
            first.trade_date,
            first.as_of,
            &all,
            FlowSnapshotRow::values,
        )
        .unwrap();
        assert_eq!(by_values, batch);
        let rebuilt: Vec<FlowSnapshotRow> = all
            .iter()
            .map(|r| {
                FlowSnapshotRow::new(&first.underlying, first.trade_date, first.as_of, r.values())
            })
            .collect();
        assert_eq!(rebuilt, all);
        // Written before `delta` existed, read by a newer reader with an extra column.
        let schema = batch.schema();
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| schema.field(i).name() != col::DELTA)
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
        let back = FlowSnapshotRow::from_batch(&newer).unwrap();
        assert!(back.iter().all(|r| r.delta.is_none()));
        assert_eq!(back[0].premium_usd, Some(322_500.0));
    }

    #[test]
    fn bad_values_are_rejected_with_the_column() {
        rejects(
            &rows(),
            FlowSnapshotRow::to_batch,
            |r| {
                r[0].bid = Some(2.3);
            },
            col::BID,
        );
        rejects(
            &rows(),
            FlowSnapshotRow::to_batch,
            |r| {
                r[1].volume = 0;
            },
            col::VOLUME,
        );
        rejects(
            &rows(),
            FlowSnapshotRow::to_batch,
            |r| {
                r[1].volume_oi_ratio = Some(1.0);
            },
            col::VOLUME_OI_RATIO,
        );
        rejects(
            &rows(),
            FlowSnapshotRow::to_batch,
            |r| {
                r[0].premium_usd = Some(f64::INFINITY);
            },
            col::PREMIUM_USD,
        );
        rejects(
            &rows(),
            FlowSnapshotRow::to_batch,
            |r| {
                r[0].dte = 8;
            },
            col::DTE,
        );
        let batch = FlowSnapshotRow::to_batch(&rows()).unwrap();
        let index = batch.schema().index_of(col::MONEYNESS).unwrap();
        let mut columns = batch.columns().to_vec();
        columns[index] = utf8(["OTM", "ATM"]);
        let bad = RecordBatch::try_new(batch.schema(), columns).unwrap();
        assert_eq!(
            invalid_column(FlowSnapshotRow::from_batch(&bad).unwrap_err()),
            col::MONEYNESS
        );
    }

    #[test]
    fn moneyness_codes() {
        assert_eq!(MoneynessCode::from_code("ITM"), Some(MoneynessCode::Itm));
        assert_eq!(MoneynessCode::from_code("itm"), None);
        assert_eq!(MoneynessCode::Otm.as_str(), "OTM");
    }
}
