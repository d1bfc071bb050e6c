//! The `flow_aggregates` snapshot dataset that compute publishes beside `flow`: one row per
//! strike (across expirations) and one per expiration of one underlying's session flow, each
//! the sums over the `flow` rows of that strike or expiration.
//!
//! Column names, meanings and units are in [`crate::columns::flow_aggregates`].
//! [`FlowAggregateRow::to_batch`] and [`FlowAggregateRow::from_batch`] validate both ways (a
//! key that disagrees with its grouping, zero volume, call and put volumes that do not add up
//! to the volume, non-finite or negative premiums, a premium that is not the call and put
//! premiums' sum, a contract count of 0 or above the volume, rows out of order or repeated)
//! with [`SchemaError::InvalidValue`]. Batches are read by column name: unknown extra
//! columns are ignored and a missing nullable column reads as nulls.

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use arrow_array::{ArrayRef, Date32Array, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::flow_aggregates as col;
use crate::enums::WireEnum;
use crate::enums::wire_enum;
use crate::error::SchemaError;
use crate::snapshot::{SnapshotColumns, SnapshotDataset, snapshot_row};
use crate::table::{
    date_to_days, dates, f64s, f64s_opt, field, opt, read_rows, snapshot_identity_columns,
    timestamp_type, timestamps, u64s, utf8,
};

/// The dataset's name (storage paths, events, error messages).
pub const FLOW_AGGREGATES_DATASET: &str = SnapshotDataset::FlowAggregates.name();

/// How far `premium_usd` may stray from `call_premium_usd + put_premium_usd`, relative: the
/// three are sums of the same premiums in different orders, which round differently.
pub const PREMIUM_SUM_TOLERANCE: f64 = 1e-9;

wire_enum! {
    /// What a row aggregates over. Declared in code order, the dataset's row order.
    FlowGroupingCode, "flow grouping" {
        /// `expiration`: every contract of one expiration.
        Expiration = "expiration",
        /// `strike`: every contract of one strike, across expirations.
        Strike = "strike",
    }
}

/// The strike or expiration a row aggregates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FlowAggregateKey {
    /// Every contract of this strike (dollars), across expirations.
    Strike(f64),
    /// Every contract of this expiration.
    Expiration(NaiveDate),
}

impl FlowAggregateKey {
    /// The grouping this key belongs to.
    pub fn grouping(self) -> FlowGroupingCode {
        match self {
            Self::Strike(_) => FlowGroupingCode::Strike,
            Self::Expiration(_) => FlowGroupingCode::Expiration,
        }
    }

    /// The strike of a strike key.
    pub fn strike(self) -> Option<f64> {
        match self {
            Self::Strike(strike) => Some(strike),
            Self::Expiration(_) => None,
        }
    }

    /// The expiration of an expiration key.
    pub fn expiration(self) -> Option<NaiveDate> {
        match self {
            Self::Expiration(expiration) => Some(expiration),
            Self::Strike(_) => None,
        }
    }

    /// The dataset's row order: grouping (in [`FlowGroupingCode`] order), then the key
    /// ascending.
    pub fn row_order(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Strike(a), Self::Strike(b)) => a.total_cmp(b),
            (Self::Expiration(a), Self::Expiration(b)) => a.cmp(b),
            _ => self.grouping().cmp(&other.grouping()),
        }
    }
}

/// Sums over a group of `flow` rows (a premium without a price counts 0). Units:
/// [`crate::columns::flow_aggregates`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FlowTotals {
    /// Σ call volume, contracts.
    pub call_volume: u64,
    /// Σ put volume, contracts.
    pub put_volume: u64,
    /// Σ volume, contracts: call + put.
    pub volume: u64,
    /// Σ call premium, dollars.
    pub call_premium_usd: f64,
    /// Σ put premium, dollars.
    pub put_premium_usd: f64,
    /// Σ premium, dollars, added in the rows' order (call + put premium up to rounding).
    pub premium_usd: f64,
    /// Rows counted: contracts that traded.
    pub contracts: u64,
}

/// The session flow of one strike or one expiration. Units: [`crate::columns::flow_aggregates`].
#[derive(Debug, Clone, PartialEq)]
pub struct FlowAggregateRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session.
    pub trade_date: NaiveDate,
    /// The instant described (the `flow` rows' own).
    pub as_of: DateTime<Utc>,
    /// The strike or expiration aggregated.
    pub key: FlowAggregateKey,
    /// Its sums: volume > 0, contracts from 1 to the volume.
    pub totals: FlowTotals,
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(col::UNDERLYING, DataType::Utf8, false),
        field(col::TRADE_DATE, DataType::Date32, false),
        field(col::AS_OF, timestamp_type(), false),
        field(col::GROUPING, DataType::Utf8, false),
        field(col::STRIKE, DataType::Float64, true),
        field(col::EXPIRATION, DataType::Date32, true),
        field(col::CALL_VOLUME, DataType::UInt64, false),
        field(col::PUT_VOLUME, DataType::UInt64, false),
        field(col::VOLUME, DataType::UInt64, false),
        field(col::CALL_PREMIUM_USD, DataType::Float64, false),
        field(col::PUT_PREMIUM_USD, DataType::Float64, false),
        field(col::PREMIUM_USD, DataType::Float64, false),
        field(col::CONTRACTS, DataType::UInt64, false),
    ]))
});

/// The Arrow schema of the `flow_aggregates` dataset (shared, built once).
pub fn flow_aggregates_schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

snapshot_row!(FlowAggregateRow, FlowAggregates, col::ALL, flow_aggregates_schema, build: FlowAggregateRow::build_batch, read: read);

impl FlowAggregateRow {
    /// The batch of one underlying's groups, each a [`FlowAggregateRow`] of `underlying`,
    /// `trade_date` and `as_of` with that key and totals, written column by column without a
    /// row (or a copy of the symbol) per group: the compute worker's path. As
    /// [`FlowAggregateRow::to_batch_trusted`], the rules are checked again in debug builds only.
    pub fn batch_of(
        underlying: &str,
        trade_date: NaiveDate,
        as_of: DateTime<Utc>,
        groups: &[(FlowAggregateKey, FlowTotals)],
    ) -> Result<RecordBatch, SchemaError> {
        let identity = snapshot_identity_columns(underlying, trade_date, as_of, groups.len());
        let batch = write_batch(groups, identity, |g| (g.0, &g.1))?;
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
        write_batch(rows, identity, |r| (r.key, &r.totals))
    }
}

/// The `flow_aggregates` columns of `rows`: `identity` holds the underlying, trade date and
/// `as_of` columns (in that order), `group` gives a row's key and totals.
fn write_batch<'r, R>(
    rows: &'r [R],
    identity: [ArrayRef; 3],
    group: impl Fn(&'r R) -> (FlowAggregateKey, &'r FlowTotals),
) -> Result<RecordBatch, SchemaError> {
    let key = || rows.iter().map(|r| group(r).0);
    let totals = || rows.iter().map(|r| group(r).1);
    let mut columns: Vec<ArrayRef> = identity.into();
    columns.extend([
        utf8(key().map(|k| k.grouping().as_str())),
        f64s_opt(key().map(FlowAggregateKey::strike)),
        Arc::new(
            key()
                .map(|k| k.expiration().map(date_to_days))
                .collect::<Date32Array>(),
        ),
        u64s(totals().map(|t| t.call_volume)),
        u64s(totals().map(|t| t.put_volume)),
        u64s(totals().map(|t| t.volume)),
        f64s(totals().map(|t| t.call_premium_usd)),
        f64s(totals().map(|t| t.put_premium_usd)),
        f64s(totals().map(|t| t.premium_usd)),
        u64s(totals().map(|t| t.contracts)),
    ]);
    Ok(RecordBatch::try_new(flow_aggregates_schema(), columns)?)
}

fn read(batch: &RecordBatch, keep: bool) -> Result<Vec<FlowAggregateRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::FlowAggregates, batch);
    let underlying = c.str(col::UNDERLYING)?;
    let trade_date = c.date(col::TRADE_DATE)?;
    let as_of = c.timestamp(col::AS_OF)?;
    let grouping = c.str(col::GROUPING)?;
    let strike = c.f64(col::STRIKE)?;
    let expiration = c.date(col::EXPIRATION)?;
    let call_volume = c.u64(col::CALL_VOLUME)?;
    let put_volume = c.u64(col::PUT_VOLUME)?;
    let volume = c.u64(col::VOLUME)?;
    let call_premium = c.f64(col::CALL_PREMIUM_USD)?;
    let put_premium = c.f64(col::PUT_PREMIUM_USD)?;
    let premium = c.f64(col::PREMIUM_USD)?;
    let contracts = c.u64(col::CONTRACTS)?;
    let mut previous: Option<FlowAggregateKey> = None;
    read_rows(batch.num_rows(), keep, |row| {
        let strike = opt(strike, row, || {
            c.positive(col::STRIKE, row, strike.value(row))
        })
        .transpose()?;
        let expiration = opt(expiration, row, || {
            c.date_value(col::EXPIRATION, expiration, row)
        })
        .transpose()?;
        let key = match (c.code(col::GROUPING, grouping, row)?, strike, expiration) {
            (FlowGroupingCode::Strike, Some(strike), None) => FlowAggregateKey::Strike(strike),
            (FlowGroupingCode::Expiration, None, Some(expiration)) => {
                FlowAggregateKey::Expiration(expiration)
            }
            (grouping, _, _) => {
                return Err(c.invalid(
                    col::GROUPING,
                    row,
                    format!(
                        "a {grouping} row carries its {grouping} and only it (strike {strike:?}, \
                         expiration {expiration:?})"
                    ),
                ));
            }
        };
        if previous.is_some_and(|p| p.row_order(&key) != Ordering::Less) {
            return Err(c.invalid(
                col::GROUPING,
                row,
                "rows are ordered by grouping then key ascending, one row per key",
            ));
        }
        previous = Some(key);
        let (calls, puts, volume) = (
            call_volume.value(row),
            put_volume.value(row),
            volume.value(row),
        );
        if volume == 0 || calls.checked_add(puts) != Some(volume) {
            return Err(c.invalid(
                col::VOLUME,
                row,
                format!(
                    "{volume} must be > 0 (a group of contracts that traded) and the sum of \
                     call volume {calls} and put volume {puts}"
                ),
            ));
        }
        let call_premium_usd =
            c.non_negative(col::CALL_PREMIUM_USD, row, call_premium.value(row))?;
        let put_premium_usd = c.non_negative(col::PUT_PREMIUM_USD, row, put_premium.value(row))?;
        let premium_usd = c.non_negative(col::PREMIUM_USD, row, premium.value(row))?;
        let sides = call_premium_usd + put_premium_usd;
        if (premium_usd - sides).abs() > PREMIUM_SUM_TOLERANCE * premium_usd.max(sides) {
            return Err(c.invalid(
                col::PREMIUM_USD,
                row,
                format!("{premium_usd} is not call premium + put premium ({sides})"),
            ));
        }
        let contracts = contracts.value(row);
        if contracts == 0 || contracts > volume {
            return Err(c.invalid(
                col::CONTRACTS,
                row,
                format!(
                    "{contracts} contracts: at least one traded, each at least one of the \
                     {volume} contracts of volume"
                ),
            ));
        }
        Ok(FlowAggregateRow {
            underlying: c.symbol(col::UNDERLYING, underlying, row)?,
            trade_date: c.date_value(col::TRADE_DATE, trade_date, row)?,
            as_of: c.timestamp_value(col::AS_OF, as_of, row)?,
            key,
            totals: FlowTotals {
                call_volume: calls,
                put_volume: puts,
                volume,
                call_premium_usd,
                put_premium_usd,
                premium_usd,
                contracts,
            },
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_support::invalid_column;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    /// Two expirations and two strikes of one session: a 230 call of the 27th (1,500
    /// contracts, $322,500) and a 235 put of the 20th (20 contracts, $50), each alone in its
    /// groups.
    fn rows() -> Vec<FlowAggregateRow> {
        let row =
            |key, calls: u64, puts: u64, call_premium: f64, put_premium: f64| FlowAggregateRow {
                underlying: "AAPL".to_owned(),
                trade_date: day(20),
                as_of: DateTime::from_timestamp(1_795_100_000, 0).unwrap(),
                key,
                totals: FlowTotals {
                    call_volume: calls,
                    put_volume: puts,
                    volume: calls + puts,
                    call_premium_usd: call_premium,
                    put_premium_usd: put_premium,
                    premium_usd: call_premium + put_premium,
                    contracts: 1,
                },
            };
        vec![
            row(FlowAggregateKey::Expiration(day(20)), 0, 20, 0.0, 50.0),
            row(
                FlowAggregateKey::Expiration(day(27)),
                1_500,
                0,
                322_500.0,
                0.0,
            ),
            row(FlowAggregateKey::Strike(230.0), 1_500, 0, 322_500.0, 0.0),
            row(FlowAggregateKey::Strike(235.0), 0, 20, 0.0, 50.0),
        ]
    }

    /// `rows` with one column replaced (its field takes the column's type), as a reader would
    /// receive it.
    fn with_column(rows: &[FlowAggregateRow], name: &str, column: ArrayRef) -> RecordBatch {
        let batch = FlowAggregateRow::to_batch(rows).unwrap();
        let index = batch.schema().index_of(name).unwrap();
        let mut fields: Vec<arrow_schema::Field> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields[index] = fields[index]
            .clone()
            .with_data_type(column.data_type().clone());
        let mut columns = batch.columns().to_vec();
        columns[index] = column;
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    #[test]
    fn rows_round_trip_in_their_order() {
        let batch = FlowAggregateRow::to_batch(&rows()).unwrap();
        assert_eq!(FlowAggregateRow::from_batch(&batch).unwrap(), rows());
        let groupings: Vec<&str> = rows().iter().map(|r| r.key.grouping().as_str()).collect();
        assert_eq!(groupings, ["expiration", "expiration", "strike", "strike"]);
        assert_eq!(
            FlowGroupingCode::from_code("strike"),
            Some(FlowGroupingCode::Strike)
        );
        assert_eq!(FlowGroupingCode::from_code("Strike"), None);
    }

    #[test]
    fn bad_values_are_rejected_with_the_column() {
        type Edit = fn(&mut Vec<FlowAggregateRow>);
        let cases: [(Edit, &str, &str); 11] = [
            (
                |r| (r[2].totals.volume, r[2].totals.call_volume) = (0, 0),
                col::VOLUME,
                "no volume",
            ),
            (
                |r| r[1].totals.put_volume = 1,
                col::VOLUME,
                "call + put ≠ volume",
            ),
            (
                |r| (r[0].totals.put_premium_usd, r[0].totals.premium_usd) = (-50.0, -50.0),
                col::PUT_PREMIUM_USD,
                "a negative premium",
            ),
            (
                |r| r[3].totals.premium_usd = f64::NAN,
                col::PREMIUM_USD,
                "NaN",
            ),
            (
                |r| r[2].totals.premium_usd += 1.0,
                col::PREMIUM_USD,
                "premium ≠ call + put",
            ),
            (|r| r[2].totals.contracts = 0, col::CONTRACTS, "no contract"),
            (
                |r| r[3].totals.contracts = 21,
                col::CONTRACTS,
                "more contracts than volume",
            ),
            (
                |r| r[2].key = FlowAggregateKey::Strike(0.0),
                col::STRIKE,
                "a zero strike",
            ),
            (|r| r.swap(0, 1), col::GROUPING, "expirations out of order"),
            (
                |r| r.swap(1, 2),
                col::GROUPING,
                "a strike row before an expiration",
            ),
            (|r| r[3].key = r[2].key, col::GROUPING, "one row per key"),
        ];
        for (edit, column, what) in cases {
            let mut r = rows();
            edit(&mut r);
            let err = FlowAggregateRow::to_batch(&r).unwrap_err();
            assert_eq!(invalid_column(err), column, "{what}");
        }

        // On read: a strike row that names an expiration, an expiration row without one, an
        // expiration row that carries a strike, an unknown grouping.
        let days = |d: Option<u32>| d.map(|d| date_to_days(day(d)));
        let expirations: Date32Array = [Some(20), Some(27), Some(20), None]
            .into_iter()
            .map(days)
            .collect();
        for (name, column) in [
            (col::EXPIRATION, Arc::new(expirations) as ArrayRef),
            (
                col::EXPIRATION,
                Arc::new(Date32Array::from(vec![None::<i32>; 4])),
            ),
            (col::STRIKE, f64s([1.0, 2.0, 230.0, 235.0])),
            (
                col::GROUPING,
                utf8(["expiration", "expiration", "strike", "put"]),
            ),
        ] {
            let bad = with_column(&rows(), name, column);
            assert_eq!(
                invalid_column(FlowAggregateRow::from_batch(&bad).unwrap_err()),
                col::GROUPING,
                "{name}"
            );
        }
        // A negative volume cannot be stored as the dataset's unsigned type.
        let negative = Arc::new(arrow_array::Int64Array::from(vec![20, 0, 0, -20]));
        let bad = with_column(&rows(), col::PUT_VOLUME, negative);
        assert_eq!(
            invalid_column(FlowAggregateRow::from_batch(&bad).unwrap_err()),
            col::PUT_VOLUME,
            "a negative volume"
        );
    }

    #[test]
    fn premium_may_differ_from_the_sides_by_rounding_only() {
        let mut r = rows();
        // 0.1 + 0.2 is not 0.3 in binary: a sum in another order.
        let totals = &mut r[0].totals;
        (totals.call_premium_usd, totals.put_premium_usd) = (0.1, 0.2);
        totals.premium_usd = 0.3;
        (totals.call_volume, totals.volume, totals.contracts) = (1, 21, 2);
        assert_ne!(0.1 + 0.2, 0.3);
        assert!(FlowAggregateRow::to_batch(&r).is_ok());
    }

    #[test]
    fn row_order_is_grouping_then_key() {
        let (e, s) = (
            FlowAggregateKey::Expiration(day(20)),
            FlowAggregateKey::Strike(1.0),
        );
        assert_eq!(e.row_order(&s), Ordering::Less);
        assert_eq!(s.row_order(&e), Ordering::Greater);
        assert_eq!(
            FlowAggregateKey::Strike(2.0).row_order(&s),
            Ordering::Greater
        );
        assert_eq!(e.row_order(&e), Ordering::Equal);
    }
}
