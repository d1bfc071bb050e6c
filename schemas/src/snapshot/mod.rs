//! The one codec every dataset's batches go through: `conform` (select a schema's columns by
//! name), one typed-column accessor (`Columns`), the per-value rules of the snapshot datasets
//! (`SnapshotColumns`), the codec methods every snapshot row type shares (`snapshot_row!`) and
//! the list of snapshot datasets ([`SnapshotDataset`]).
//!
//! Inbound datasets ([`Dataset`]) and the snapshots compute publishes share the code and the
//! errors: a column problem is [`SchemaError::MissingColumn`], [`SchemaError::ColumnType`] or
//! [`SchemaError::UnexpectedNull`], a value that breaks its column's rule
//! [`SchemaError::InvalidValue`], each naming the dataset as a [`DatasetId`].

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float64Type, Int32Type, Time32SecondType, TimestampMicrosecondType, UInt32Type,
    UInt64Type,
};
use arrow_array::{
    Array, BooleanArray, Date32Array, Float64Array, Int32Array, RecordBatch, StringArray,
    Time32SecondArray, TimestampMicrosecondArray, UInt32Array, UInt64Array, new_null_array,
};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use chrono::{DateTime, Datelike, NaiveDate, Utc};

use crate::bus::snapshot_datasets as names;
use crate::enums::WireEnum;
use crate::error::SchemaError;
use crate::table::{Dataset, check_symbol, days_to_date, micros_to_timestamp, timestamp_type};

/// A dataset compute publishes as snapshots; [`SnapshotDataset::name`] is the name of
/// [`crate::bus::snapshot_datasets`] (storage paths, snapshot events, error messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SnapshotDataset {
    /// `chain`: [`crate::ChainRow`].
    Chain,
    /// `exposures`: [`crate::ExposureRow`].
    Exposures,
    /// `exposure_summary`: [`crate::ExposureSummaryRow`].
    ExposureSummary,
    /// `flow`: [`crate::FlowSnapshotRow`].
    Flow,
    /// `flow_aggregates`: [`crate::FlowAggregateRow`].
    FlowAggregates,
    /// `vol_daily`: [`crate::VolDailyRow`].
    VolDaily,
    /// `vol_term`: [`crate::VolTermRow`].
    VolTerm,
}

impl SnapshotDataset {
    /// Every snapshot dataset.
    pub const ALL: [Self; 7] = [
        Self::Chain,
        Self::Exposures,
        Self::ExposureSummary,
        Self::Flow,
        Self::FlowAggregates,
        Self::VolDaily,
        Self::VolTerm,
    ];

    /// The dataset's name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Chain => names::CHAIN,
            Self::Exposures => names::EXPOSURES,
            Self::ExposureSummary => names::EXPOSURE_SUMMARY,
            Self::Flow => names::FLOW,
            Self::FlowAggregates => names::FLOW_AGGREGATES,
            Self::VolDaily => names::VOL_DAILY,
            Self::VolTerm => names::VOL_TERM,
        }
    }

    /// The dataset called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The dataset's Arrow schema.
    pub fn schema(self) -> SchemaRef {
        match self {
            Self::Chain => crate::chain_schema(),
            Self::Exposures => crate::exposures_schema(),
            Self::ExposureSummary => crate::exposure_summary_schema(),
            Self::Flow => crate::flow_schema(),
            Self::FlowAggregates => crate::flow_aggregates_schema(),
            Self::VolDaily => crate::vol_daily_schema(),
            Self::VolTerm => crate::vol_term_schema(),
        }
    }

    /// The dataset's column names, in schema order (the `ALL` of its [`crate::columns`]
    /// module).
    pub fn columns(self) -> &'static [&'static str] {
        use crate::columns as c;
        match self {
            Self::Chain => c::chain::ALL,
            Self::Exposures => c::exposures::ALL,
            Self::ExposureSummary => c::exposures::summary::ALL,
            Self::Flow => c::flow::ALL,
            Self::FlowAggregates => c::flow_aggregates::ALL,
            Self::VolDaily => c::vol_daily::ALL,
            Self::VolTerm => c::vol_term::ALL,
        }
    }
}

impl fmt::Display for SnapshotDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Any dataset a batch can belong to: an inbound one or a snapshot compute publishes. Errors
/// name it; its text is the dataset's name, with ` snapshot` after a snapshot's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatasetId {
    /// A dataset that comes in (quotes, bars, reference tables).
    Inbound(Dataset),
    /// A snapshot dataset compute publishes.
    Snapshot(SnapshotDataset),
}

impl fmt::Display for DatasetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Inbound(dataset) => write!(f, "{dataset}"),
            Self::Snapshot(dataset) => write!(f, "{dataset} snapshot"),
        }
    }
}

impl PartialEq<Dataset> for DatasetId {
    fn eq(&self, other: &Dataset) -> bool {
        *self == Self::Inbound(*other)
    }
}

impl PartialEq<SnapshotDataset> for DatasetId {
    fn eq(&self, other: &SnapshotDataset) -> bool {
        *self == Self::Snapshot(*other)
    }
}

/// What is wrong with a whole column.
pub(crate) enum ColumnProblem {
    Missing,
    Type { expected: DataType, found: DataType },
    Null { row: usize },
}

impl From<Dataset> for DatasetId {
    fn from(dataset: Dataset) -> Self {
        Self::Inbound(dataset)
    }
}

impl From<SnapshotDataset> for DatasetId {
    fn from(dataset: SnapshotDataset) -> Self {
        Self::Snapshot(dataset)
    }
}

impl DatasetId {
    pub(crate) fn column_error(self, column: &'static str, problem: ColumnProblem) -> SchemaError {
        let dataset = self;
        match problem {
            ColumnProblem::Missing => SchemaError::MissingColumn { dataset, column },
            ColumnProblem::Type { expected, found } => SchemaError::ColumnType {
                dataset,
                column,
                expected,
                found,
            },
            ColumnProblem::Null { row } => SchemaError::UnexpectedNull {
                dataset,
                column,
                row,
            },
        }
    }

    /// A value of `column` at `row` that breaks the column's rule.
    pub(crate) fn invalid_value(
        self,
        column: &'static str,
        row: usize,
        reason: impl Into<String>,
    ) -> SchemaError {
        SchemaError::InvalidValue {
            dataset: self,
            column,
            row,
            reason: reason.into(),
        }
    }
}

/// The schema's columns of `batch` by name, in schema order (`names` are the schema's field
/// names): extra columns (from a newer producer) are dropped, a missing nullable column becomes
/// all nulls (an older producer); a missing required column, another type or a null in a
/// non-nullable column is an error.
pub(crate) fn conform(
    target: impl Into<DatasetId>,
    schema: &SchemaRef,
    names: &'static [&'static str],
    batch: &RecordBatch,
) -> Result<RecordBatch, SchemaError> {
    let target = target.into();
    // The common case, a batch we wrote: only the nulls need a look.
    let same = batch.schema_ref() == schema;
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, &name) in schema.fields().iter().zip(names) {
        match batch.column_by_name(name) {
            Some(column) => {
                if column.data_type() != field.data_type() {
                    let problem = ColumnProblem::Type {
                        expected: field.data_type().clone(),
                        found: column.data_type().clone(),
                    };
                    return Err(target.column_error(name, problem));
                }
                if !field.is_nullable()
                    && column.null_count() > 0
                    && let Some(row) = (0..column.len()).find(|&i| column.is_null(i))
                {
                    return Err(target.column_error(name, ColumnProblem::Null { row }));
                }
                if !same {
                    columns.push(Arc::clone(column));
                }
            }
            None if field.is_nullable() => {
                columns.push(new_null_array(field.data_type(), batch.num_rows()));
            }
            None => return Err(target.column_error(name, ColumnProblem::Missing)),
        }
    }
    if same {
        return Ok(batch.clone());
    }
    Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
}

/// Typed access to the columns of a conformed batch, the one accessor of every dataset.
pub(crate) struct Columns<'a> {
    pub(crate) target: DatasetId,
    batch: &'a RecordBatch,
}

macro_rules! typed_column {
    ($method:ident, $array:ty, $expected:expr, $cast:expr) => {
        pub(crate) fn $method(&self, name: &'static str) -> Result<&'a $array, SchemaError> {
            let column = self
                .batch
                .column_by_name(name)
                .ok_or_else(|| self.target.column_error(name, ColumnProblem::Missing))?;
            $cast(column).ok_or_else(|| {
                let problem = ColumnProblem::Type {
                    expected: $expected,
                    found: column.data_type().clone(),
                };
                self.target.column_error(name, problem)
            })
        }
    };
}

impl<'a> Columns<'a> {
    pub(crate) fn new(target: DatasetId, batch: &'a RecordBatch) -> Self {
        Self { target, batch }
    }

    typed_column!(f64, Float64Array, DataType::Float64, |c: &'a dyn Array| {
        c.as_primitive_opt::<Float64Type>()
    });
    typed_column!(i32, Int32Array, DataType::Int32, |c: &'a dyn Array| {
        c.as_primitive_opt::<Int32Type>()
    });
    typed_column!(u32, UInt32Array, DataType::UInt32, |c: &'a dyn Array| {
        c.as_primitive_opt::<UInt32Type>()
    });
    typed_column!(u64, UInt64Array, DataType::UInt64, |c: &'a dyn Array| {
        c.as_primitive_opt::<UInt64Type>()
    });
    typed_column!(date, Date32Array, DataType::Date32, |c: &'a dyn Array| {
        c.as_primitive_opt::<Date32Type>()
    });
    typed_column!(
        timestamp,
        TimestampMicrosecondArray,
        timestamp_type(),
        |c: &'a dyn Array| c.as_primitive_opt::<TimestampMicrosecondType>()
    );
    typed_column!(
        time,
        Time32SecondArray,
        DataType::Time32(TimeUnit::Second),
        |c: &'a dyn Array| c.as_primitive_opt::<Time32SecondType>()
    );
    typed_column!(str, StringArray, DataType::Utf8, |c: &'a dyn Array| c
        .as_string_opt::<i32>());
    typed_column!(bool, BooleanArray, DataType::Boolean, |c: &'a dyn Array| c
        .as_boolean_opt());
}

const MIN_YEAR: i32 = 1900;
const MAX_YEAR: i32 = 2199;

/// The value rules of a conformed snapshot batch, one value at a time; errors are
/// [`SchemaError::InvalidValue`]. Typed columns through [`Columns`].
pub(crate) struct SnapshotColumns<'a> {
    dataset: SnapshotDataset,
    columns: Columns<'a>,
}

impl<'a> Deref for SnapshotColumns<'a> {
    type Target = Columns<'a>;
    fn deref(&self) -> &Columns<'a> {
        &self.columns
    }
}

impl<'a> SnapshotColumns<'a> {
    pub(crate) fn new(dataset: SnapshotDataset, batch: &'a RecordBatch) -> Self {
        Self {
            dataset,
            columns: Columns::new(DatasetId::Snapshot(dataset), batch),
        }
    }

    pub(crate) fn invalid(
        &self,
        column: &'static str,
        row: usize,
        reason: impl Into<String>,
    ) -> SchemaError {
        DatasetId::Snapshot(self.dataset).invalid_value(column, row, reason)
    }

    fn number(
        &self,
        column: &'static str,
        row: usize,
        value: f64,
        what: &str,
        rule: impl Fn(f64) -> bool,
    ) -> Result<f64, SchemaError> {
        if value.is_finite() && rule(value) {
            Ok(value)
        } else {
            Err(self.invalid(column, row, format!("{value} is not {what}")))
        }
    }

    pub(crate) fn finite(
        &self,
        column: &'static str,
        row: usize,
        v: f64,
    ) -> Result<f64, SchemaError> {
        self.number(column, row, v, "a finite number", |_| true)
    }

    pub(crate) fn positive(
        &self,
        column: &'static str,
        row: usize,
        v: f64,
    ) -> Result<f64, SchemaError> {
        self.number(column, row, v, "a finite number > 0", |v| v > 0.0)
    }

    pub(crate) fn non_negative(
        &self,
        column: &'static str,
        row: usize,
        v: f64,
    ) -> Result<f64, SchemaError> {
        self.number(column, row, v, "a finite number ≥ 0", |v| v >= 0.0)
    }

    pub(crate) fn symbol(
        &self,
        column: &'static str,
        array: &StringArray,
        row: usize,
    ) -> Result<String, SchemaError> {
        let s = array.value(row);
        check_symbol(s).map_err(|reason| self.invalid(column, row, reason))?;
        Ok(s.to_owned())
    }

    pub(crate) fn date_value(
        &self,
        column: &'static str,
        array: &Date32Array,
        row: usize,
    ) -> Result<NaiveDate, SchemaError> {
        days_to_date(array.value(row))
            .filter(|d| (MIN_YEAR..=MAX_YEAR).contains(&d.year()))
            .ok_or_else(|| {
                self.invalid(
                    column,
                    row,
                    format!("day {} is outside {MIN_YEAR}–{MAX_YEAR}", array.value(row)),
                )
            })
    }

    pub(crate) fn timestamp_value(
        &self,
        column: &'static str,
        array: &TimestampMicrosecondArray,
        row: usize,
    ) -> Result<DateTime<Utc>, SchemaError> {
        micros_to_timestamp(array.value(row))
            .filter(|t| (MIN_YEAR..=MAX_YEAR).contains(&t.year()))
            .ok_or_else(|| {
                self.invalid(
                    column,
                    row,
                    format!(
                        "{} µs since the epoch is outside {MIN_YEAR}–{MAX_YEAR}",
                        array.value(row)
                    ),
                )
            })
    }

    pub(crate) fn code<E: WireEnum>(
        &self,
        column: &'static str,
        array: &StringArray,
        row: usize,
    ) -> Result<E, SchemaError> {
        let code = array.value(row);
        E::from_code(code).ok_or_else(|| {
            let codes: Vec<&str> = E::ALL.iter().map(|e| e.as_str()).collect();
            self.invalid(
                column,
                row,
                format!("unknown {} {code:?} (expected one of {codes:?})", E::WHAT),
            )
        })
    }

    /// `dte` is the calendar days from the trade date to the expiration.
    pub(crate) fn check_dte(
        &self,
        column: &'static str,
        row: usize,
        trade_date: NaiveDate,
        expiration: NaiveDate,
        dte: i32,
    ) -> Result<(), SchemaError> {
        let days = expiration.signed_duration_since(trade_date).num_days();
        if i64::from(dte) == days {
            Ok(())
        } else {
            Err(self.invalid(
                column,
                row,
                format!("{dte} is not the {days} days from the trade date to the expiration"),
            ))
        }
    }
}

/// What a snapshot dataset's batches are read and checked by (implemented by [`snapshot_row`],
/// which also gives the row type its `to_batch`, `to_batch_trusted` and `from_batch`).
pub(crate) trait SnapshotCodec: Sized {
    const DATASET: SnapshotDataset;
    /// The schema's column names, in schema order.
    const COLUMNS: &'static [&'static str];
    fn schema() -> SchemaRef;
    /// Checks every value rule of a conformed batch and, when `keep`, reads its rows (without
    /// `keep` nothing need be allocated per row).
    fn read(batch: &RecordBatch, keep: bool) -> Result<Vec<Self>, SchemaError>;
}

/// `batch` conformed to `R`'s schema (see [`conform`]) with every value rule checked.
pub(crate) fn validate<R: SnapshotCodec>(batch: &RecordBatch) -> Result<RecordBatch, SchemaError> {
    let batch = conform(R::DATASET, &R::schema(), R::COLUMNS, batch)?;
    R::read(&batch, false)?;
    Ok(batch)
}

/// Makes `$row` a snapshot row: its [`SnapshotCodec`] and the public codec methods, the same for
/// every dataset. `build` writes the rows' batch unchecked; `read(batch, keep)` checks every
/// value rule of a conformed batch and, when `keep`, reads its rows.
macro_rules! snapshot_row {
    ($row:ty, $dataset:ident, $columns:expr, $schema:path, build: $build:path, read: $read:path) => {
        impl $crate::snapshot::SnapshotCodec for $row {
            const DATASET: $crate::snapshot::SnapshotDataset =
                $crate::snapshot::SnapshotDataset::$dataset;
            const COLUMNS: &'static [&'static str] = $columns;
            fn schema() -> ::arrow_schema::SchemaRef {
                $schema()
            }
            fn read(
                batch: &::arrow_array::RecordBatch,
                keep: bool,
            ) -> Result<Vec<Self>, $crate::SchemaError> {
                $read(batch, keep)
            }
        }

        impl $row {
            /// Validates the rows and builds a batch in the canonical schema.
            pub fn to_batch(
                rows: &[Self],
            ) -> Result<::arrow_array::RecordBatch, $crate::SchemaError> {
                let batch = $build(rows)?;
                $read(&batch, false)?;
                Ok(batch)
            }

            /// Builds a batch of rows the caller derived itself by the dataset's rules (the
            /// compute worker's): every rule is checked in debug builds (tests) only, since the
            /// rules hold by construction and every reader checks them again
            /// ([`Self::from_batch`]). Rows from outside (files, requests, other processes) go
            /// through [`Self::to_batch`].
            pub fn to_batch_trusted(
                rows: &[Self],
            ) -> Result<::arrow_array::RecordBatch, $crate::SchemaError> {
                let batch = $build(rows)?;
                if cfg!(debug_assertions) {
                    $read(&batch, false)?;
                }
                Ok(batch)
            }

            /// Validates a batch (columns by name: unknown extra columns are dropped, a missing
            /// nullable column reads as nulls; types, nulls and every value rule) and reads its
            /// rows.
            pub fn from_batch(
                batch: &::arrow_array::RecordBatch,
            ) -> Result<Vec<Self>, $crate::SchemaError> {
                let batch = $crate::snapshot::conform(
                    $crate::snapshot::SnapshotDataset::$dataset,
                    &$schema(),
                    $columns,
                    batch,
                )?;
                $read(&batch, true)
            }
        }
    };
}
pub(crate) use snapshot_row;

#[cfg(test)]
pub(crate) mod test_support {
    use arrow_array::RecordBatch;

    use crate::error::SchemaError;

    /// Asserts that `rows` edited by `edit` make no batch, for a reason that names `column`.
    pub(crate) fn rejects<R: Clone>(
        rows: &[R],
        to_batch: fn(&[R]) -> Result<RecordBatch, SchemaError>,
        edit: impl FnOnce(&mut Vec<R>),
        column: &str,
    ) {
        let mut edited = rows.to_vec();
        edit(&mut edited);
        let err = to_batch(&edited).expect_err("the edited rows must be refused");
        assert_eq!(invalid_column(err), column);
    }

    /// The column a batch error names.
    pub(crate) fn invalid_column(err: SchemaError) -> &'static str {
        match err {
            SchemaError::InvalidValue { column, .. }
            | SchemaError::MissingColumn { column, .. }
            | SchemaError::ColumnType { column, .. }
            | SchemaError::UnexpectedNull { column, .. } => column,
            other => panic!("unexpected error {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_follow_the_column_constants() {
        let inbound = Dataset::ALL.map(|d| (d.to_string(), d.schema(), d.columns()));
        let snapshots = SnapshotDataset::ALL.map(|d| (d.to_string(), d.schema(), d.columns()));
        for (name, schema, columns) in inbound.into_iter().chain(snapshots) {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            assert_eq!(names, columns, "{name}");
        }
    }

    #[test]
    fn snapshot_dataset_names_round_trip() {
        for d in SnapshotDataset::ALL {
            assert_eq!(SnapshotDataset::from_name(d.name()), Some(d));
        }
        assert_eq!(SnapshotDataset::from_name("option_quotes"), None);
    }
}
