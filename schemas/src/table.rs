//! What every dataset shares: the [`Dataset`] list, the [`Record`] trait of the typed rows, and
//! the column access, conformance and validation helpers behind them.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, RecordBatch, StringArray,
    Time32SecondArray, TimestampMicrosecondArray, UInt32Array, UInt64Array,
};
use arrow_buffer::{Buffer, OffsetBuffer};
use arrow_schema::{DataType, Field, SchemaRef, TimeUnit};
use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, Timelike, Utc};

use crate::enums::WireEnum;
use crate::error::SchemaError;
use crate::snapshot;

/// Every inbound dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dataset {
    /// [`crate::OptionQuote`] rows.
    OptionQuotes,
    /// [`crate::UnderlyingTick`] rows.
    UnderlyingTicks,
    /// [`crate::DailyBar`] rows.
    DailyBars,
    /// [`crate::EarningsEvent`] rows.
    Earnings,
    /// [`crate::Dividend`] rows.
    Dividends,
    /// [`crate::BorrowRate`] rows.
    BorrowRates,
    /// [`crate::EconomicEvent`] rows.
    EconomicCalendar,
    /// [`crate::Company`] rows.
    Companies,
}

impl Dataset {
    /// Every dataset.
    pub const ALL: [Dataset; 8] = [
        Self::OptionQuotes,
        Self::UnderlyingTicks,
        Self::DailyBars,
        Self::Earnings,
        Self::Dividends,
        Self::BorrowRates,
        Self::EconomicCalendar,
        Self::Companies,
    ];

    /// The dataset's name (snake case), as used in storage paths and messages.
    pub const fn name(self) -> &'static str {
        match self {
            Self::OptionQuotes => "option_quotes",
            Self::UnderlyingTicks => "underlying_ticks",
            Self::DailyBars => "daily_bars",
            Self::Earnings => "earnings",
            Self::Dividends => "dividends",
            Self::BorrowRates => "borrow_rates",
            Self::EconomicCalendar => "economic_calendar",
            Self::Companies => "companies",
        }
    }

    /// The dataset whose [`name`](Self::name) is `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The Arrow schema (shared, built once).
    pub fn schema(self) -> SchemaRef {
        use crate::{
            BorrowRate, Company, DailyBar, Dividend, EarningsEvent, EconomicEvent, OptionQuote,
            UnderlyingTick,
        };
        match self {
            Self::OptionQuotes => OptionQuote::schema(),
            Self::UnderlyingTicks => UnderlyingTick::schema(),
            Self::DailyBars => DailyBar::schema(),
            Self::Earnings => EarningsEvent::schema(),
            Self::Dividends => Dividend::schema(),
            Self::BorrowRates => BorrowRate::schema(),
            Self::EconomicCalendar => EconomicEvent::schema(),
            Self::Companies => Company::schema(),
        }
    }

    /// The column names in schema order (the `ALL` of its [`crate::columns`] module).
    pub fn columns(self) -> &'static [&'static str] {
        use crate::columns::*;
        match self {
            Self::OptionQuotes => option_quotes::ALL,
            Self::UnderlyingTicks => underlying_ticks::ALL,
            Self::DailyBars => daily_bars::ALL,
            Self::Earnings => earnings::ALL,
            Self::Dividends => dividends::ALL,
            Self::BorrowRates => borrow_rates::ALL,
            Self::EconomicCalendar => economic_calendar::ALL,
            Self::Companies => companies::ALL,
        }
    }

    /// The column holding the symbol a bus message is keyed by; `None` for the economic
    /// calendar, which is market-wide.
    pub fn key_column(self) -> Option<&'static str> {
        use crate::columns::*;
        match self {
            Self::OptionQuotes => Some(option_quotes::UNDERLYING),
            Self::UnderlyingTicks => Some(underlying_ticks::SYMBOL),
            Self::DailyBars => Some(daily_bars::SYMBOL),
            Self::Earnings => Some(earnings::SYMBOL),
            Self::Dividends => Some(dividends::SYMBOL),
            Self::BorrowRates => Some(borrow_rates::SYMBOL),
            Self::EconomicCalendar => None,
            Self::Companies => Some(companies::SYMBOL),
        }
    }

    /// Whether this is reference data (slowly changing, may be published for the whole
    /// universe in one message).
    pub fn is_reference(self) -> bool {
        !matches!(
            self,
            Self::OptionQuotes | Self::UnderlyingTicks | Self::DailyBars
        )
    }

    /// Checks a batch against this dataset: columns found by name (unknown extra columns are
    /// dropped, missing nullable columns become nulls), types, nullability and every value
    /// rule. Returns the batch in the canonical schema.
    pub fn validate_batch(self, batch: &RecordBatch) -> Result<RecordBatch, SchemaError> {
        use crate::{
            BorrowRate, Company, DailyBar, Dividend, EarningsEvent, EconomicEvent, OptionQuote,
            UnderlyingTick,
        };
        match self {
            Self::OptionQuotes => OptionQuote::validate_batch(batch),
            Self::UnderlyingTicks => UnderlyingTick::validate_batch(batch),
            Self::DailyBars => DailyBar::validate_batch(batch),
            Self::Earnings => EarningsEvent::validate_batch(batch),
            Self::Dividends => Dividend::validate_batch(batch),
            Self::BorrowRates => BorrowRate::validate_batch(batch),
            Self::EconomicCalendar => EconomicEvent::validate_batch(batch),
            Self::Companies => Company::validate_batch(batch),
        }
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub(crate) mod sealed {
    use arrow_array::{ArrayRef, RecordBatch};

    use crate::error::SchemaError;

    /// The per-dataset code behind [`super::Record`]; not implementable outside the crate.
    pub trait RecordImpl: Sized {
        /// The columns of `rows`, in schema order (no checks).
        fn columns(rows: &[Self]) -> Vec<ArrayRef>;
        /// Every value rule, on a batch already in the canonical schema.
        fn check(batch: &RecordBatch) -> Result<(), SchemaError>;
        /// The rows of a checked batch in the canonical schema.
        fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError>;
    }
}

/// A typed row of a dataset, convertible to and from Arrow record batches. Both directions
/// validate: a batch made by [`to_batch`](Record::to_batch) or accepted by
/// [`from_batch`](Record::from_batch) satisfies every rule of the dataset.
pub trait Record: sealed::RecordImpl {
    /// Which dataset this row belongs to.
    const DATASET: Dataset;

    /// The dataset's Arrow schema.
    fn schema() -> SchemaRef;

    /// Validates the rows and builds a batch in the canonical schema.
    fn to_batch(rows: &[Self]) -> Result<RecordBatch, SchemaError> {
        let batch = RecordBatch::try_new(Self::schema(), Self::columns(rows))?;
        Self::check(&batch)?;
        Ok(batch)
    }

    /// Validates a batch (see [`Dataset::validate_batch`]) and reads its rows.
    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let batch = Self::validate_batch(batch)?;
        Self::read(&batch)
    }

    /// See [`Dataset::validate_batch`].
    fn validate_batch(batch: &RecordBatch) -> Result<RecordBatch, SchemaError> {
        let batch = snapshot::conform(
            Self::DATASET,
            &Self::schema(),
            Self::DATASET.columns(),
            batch,
        )?;
        Self::check(&batch)?;
        Ok(batch)
    }
}

// ---------------------------------------------------------------------------------------------
// Arrow types and schema building.

/// The Arrow type of every timestamp column: microseconds, UTC.
pub fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC")))
}

pub(crate) fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

// ---------------------------------------------------------------------------------------------
// Typed column access on a conformed batch.

/// The value rules of the inbound datasets, a whole column at a time; errors are
/// [`SchemaError::InvalidValue`]. Typed columns through the one accessor,
/// [`snapshot::Columns`].
pub(crate) struct Columns<'a> {
    columns: snapshot::Columns<'a>,
}

impl<'a> Deref for Columns<'a> {
    type Target = snapshot::Columns<'a>;
    fn deref(&self) -> &snapshot::Columns<'a> {
        &self.columns
    }
}

impl<'a> Columns<'a> {
    pub(crate) fn new(dataset: Dataset, batch: &'a RecordBatch) -> Self {
        Self {
            columns: snapshot::Columns::new(dataset.into(), batch),
        }
    }

    pub(crate) fn invalid(
        &self,
        column: &'static str,
        row: usize,
        reason: impl Into<String>,
    ) -> SchemaError {
        self.columns.target.invalid_value(column, row, reason)
    }

    // -----------------------------------------------------------------------------------------
    // Value rules. Each checks every non-null value of one column and reports the first
    // offender. `!(x >= 0.0)` is true for NaN too, so NaN never passes.

    /// Finite and ≥ 0 (prices where 0 means "none", such as a bid).
    pub(crate) fn non_negative(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.f64(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(v) = value
                && !(v >= 0.0 && v.is_finite())
            {
                return Err(self.invalid(name, row, format!("{v} is not a finite value ≥ 0")));
            }
        }
        Ok(())
    }

    /// Finite and > 0 (prices that must exist).
    pub(crate) fn positive(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.f64(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(v) = value
                && !(v > 0.0 && v.is_finite())
            {
                return Err(self.invalid(name, row, format!("{v} is not a finite value > 0")));
            }
        }
        Ok(())
    }

    /// Finite (values that may be negative, such as EPS).
    pub(crate) fn finite(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.f64(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(v) = value
                && !v.is_finite()
            {
                return Err(self.invalid(name, row, format!("{v} is not finite")));
            }
        }
        Ok(())
    }

    /// Within `[low, high]`.
    pub(crate) fn within(
        &self,
        name: &'static str,
        low: f64,
        high: f64,
    ) -> Result<(), SchemaError> {
        let column = self.f64(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(v) = value
                && !(v >= low && v <= high)
            {
                return Err(self.invalid(name, row, format!("{v} is not in [{low}, {high}]")));
            }
        }
        Ok(())
    }

    /// `low ≤ high` on every row where both are present; the error names `low`'s column.
    pub(crate) fn not_above(
        &self,
        low_name: &'static str,
        high_name: &'static str,
    ) -> Result<(), SchemaError> {
        let low = self.f64(low_name)?;
        let high = self.f64(high_name)?;
        for (row, (l, h)) in low.iter().zip(high.iter()).enumerate() {
            if let (Some(l), Some(h)) = (l, h)
                && l > h
            {
                return Err(self.invalid(
                    low_name,
                    row,
                    format!("{low_name} {l} is above {high_name} {h}"),
                ));
            }
        }
        Ok(())
    }

    /// A symbol: 1–32 printable ASCII characters, no spaces.
    pub(crate) fn symbol(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.str(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(s) = value
                && let Err(reason) = check_symbol(s)
            {
                return Err(self.invalid(name, row, reason));
            }
        }
        Ok(())
    }

    /// Non-empty text without leading or trailing whitespace.
    pub(crate) fn text(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.str(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(s) = value
                && (s.is_empty() || s.trim() != s)
            {
                return Err(self.invalid(
                    name,
                    row,
                    format!("{s:?} is empty or has surrounding whitespace"),
                ));
            }
        }
        Ok(())
    }

    /// One of the codes of `E`.
    pub(crate) fn code<E: WireEnum>(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.str(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(s) = value
                && E::from_code(s).is_none()
            {
                return Err(self.invalid(name, row, unknown_code::<E>(s)));
            }
        }
        Ok(())
    }

    /// A date in 1900-01-01 ..= 2199-12-31.
    pub(crate) fn date_in_range(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.date(name)?;
        let range = date_range_days();
        for (row, value) in column.iter().enumerate() {
            if let Some(days) = value
                && !range.contains(&days)
            {
                return Err(self.invalid(
                    name,
                    row,
                    format!("{days} days since 1970-01-01 is outside {MIN_YEAR}–{MAX_YEAR}"),
                ));
            }
        }
        Ok(())
    }

    /// A timestamp in 1900 ..= 2199.
    pub(crate) fn timestamp_in_range(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.timestamp(name)?;
        let range = timestamp_range_micros();
        for (row, value) in column.iter().enumerate() {
            if let Some(micros) = value
                && !range.contains(&micros)
            {
                return Err(self.invalid(
                    name,
                    row,
                    format!("{micros} µs since the epoch is outside {MIN_YEAR}–{MAX_YEAR}"),
                ));
            }
        }
        Ok(())
    }

    /// `earlier ≤ later` for two date columns; the error names `later`'s column.
    pub(crate) fn date_not_before(
        &self,
        later_name: &'static str,
        earlier_name: &'static str,
    ) -> Result<(), SchemaError> {
        let later = self.date(later_name)?;
        let earlier = self.date(earlier_name)?;
        for (row, (l, e)) in later.iter().zip(earlier.iter()).enumerate() {
            if let (Some(l), Some(e)) = (l, e)
                && l < e
            {
                return Err(self.invalid(
                    later_name,
                    row,
                    format!(
                        "{later_name} {} is before {earlier_name} {}",
                        show_date(l),
                        show_date(e)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A time of day: 0 ≤ seconds < 86 400.
    pub(crate) fn time_of_day(&self, name: &'static str) -> Result<(), SchemaError> {
        let column = self.time(name)?;
        for (row, value) in column.iter().enumerate() {
            if let Some(secs) = value
                && !(0..86_400).contains(&secs)
            {
                return Err(self.invalid(name, row, format!("{secs} s is not a time of day")));
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Value readers for `read`, on checked batches (the errors are a second line of defence).

    pub(crate) fn read_date(
        &self,
        name: &'static str,
        column: &Date32Array,
        row: usize,
    ) -> Result<NaiveDate, SchemaError> {
        days_to_date(column.value(row)).ok_or_else(|| self.invalid(name, row, "date out of range"))
    }

    pub(crate) fn read_timestamp(
        &self,
        name: &'static str,
        column: &TimestampMicrosecondArray,
        row: usize,
    ) -> Result<DateTime<Utc>, SchemaError> {
        micros_to_timestamp(column.value(row))
            .ok_or_else(|| self.invalid(name, row, "timestamp out of range"))
    }

    pub(crate) fn read_code<E: WireEnum>(
        &self,
        name: &'static str,
        column: &StringArray,
        row: usize,
    ) -> Result<E, SchemaError> {
        let s = column.value(row);
        E::from_code(s).ok_or_else(|| self.invalid(name, row, unknown_code::<E>(s)))
    }
}

fn unknown_code<E: WireEnum>(s: &str) -> String {
    let codes: Vec<&str> = E::ALL.iter().map(|e| e.as_str()).collect();
    format!("unknown {} {s:?} (expected one of {codes:?})", E::WHAT)
}

/// The symbol rule shared by every symbol column and every bus key: 1–32 printable ASCII
/// characters without spaces (`BRK.B` and `^VIX` pass, normalisation is the source's job).
pub(crate) fn check_symbol(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("empty symbol".to_owned());
    }
    if s.len() > 32 || !s.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "{s:?} is not a symbol (1–32 printable ASCII characters, no spaces)"
        ));
    }
    Ok(())
}

/// Reads every row of a batch with `read_row`, stopping at the first error, and keeps the rows
/// only when `keep`: `to_batch` checks what it built without allocating a second copy of it.
pub(crate) fn read_rows<R>(
    rows: usize,
    keep: bool,
    mut read_row: impl FnMut(usize) -> Result<R, SchemaError>,
) -> Result<Vec<R>, SchemaError> {
    let mut out = Vec::with_capacity(if keep { rows } else { 0 });
    for row in 0..rows {
        let value = read_row(row)?;
        if keep {
            out.push(value);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Dates and times.

const MIN_YEAR: i32 = 1900;
const MAX_YEAR: i32 = 2199;
/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const UNIX_EPOCH_FROM_CE: i32 = 719_163;

/// Days since 1970-01-01 (Arrow `Date32`).
pub fn date_to_days(date: NaiveDate) -> i32 {
    date.num_days_from_ce() - UNIX_EPOCH_FROM_CE
}

/// Calendar days from `trade_date` to `expiration`, as every `dte` column stores them.
pub fn calendar_dte(trade_date: NaiveDate, expiration: NaiveDate) -> i32 {
    // Day numbers of chrono's dates lie within ±2^27, so the difference cannot overflow; it is
    // `signed_duration_since` in days without its duration arithmetic (tested equal).
    expiration.num_days_from_ce() - trade_date.num_days_from_ce()
}

/// The date `days` after 1970-01-01 (Arrow `Date32`); `None` outside chrono's range.
///
/// Remembers recent conversions on each thread (eight slots by day number): a batch's date
/// columns repeat a handful of values (the trade date on every row, expirations in runs), and
/// chrono's calendar arithmetic was a measurable part of checking a chain batch.
pub fn days_to_date(days: i32) -> Option<NaiveDate> {
    const SLOTS: usize = 8;
    thread_local! {
        static RECENT: std::cell::Cell<[(i32, Option<NaiveDate>); SLOTS]> =
            const { std::cell::Cell::new([(0, NaiveDate::from_ymd_opt(1970, 1, 1)); SLOTS]) };
    }
    RECENT.with(|recent| {
        let mut slots = recent.get();
        let slot = days.rem_euclid(SLOTS as i32) as usize;
        if slots[slot].0 == days {
            return slots[slot].1;
        }
        let date = NaiveDate::from_num_days_from_ce_opt(days.checked_add(UNIX_EPOCH_FROM_CE)?);
        slots[slot] = (days, date);
        recent.set(slots);
        date
    })
}

/// The instant `micros` µs after 1970-01-01T00:00:00Z (Arrow timestamps); `None` outside
/// chrono's range. Equal to `DateTime::from_timestamp_micros`, with the date part through
/// [`days_to_date`].
pub fn micros_to_timestamp(micros: i64) -> Option<DateTime<Utc>> {
    const MICROS_PER_DAY: i64 = 86_400_000_000;
    let days = i32::try_from(micros.div_euclid(MICROS_PER_DAY)).ok()?;
    let within_day = micros.rem_euclid(MICROS_PER_DAY);
    let seconds = u32::try_from(within_day / 1_000_000).ok()?;
    let nanos = u32::try_from(within_day % 1_000_000).ok()? * 1_000;
    let time = chrono::NaiveTime::from_num_seconds_from_midnight_opt(seconds, nanos)?;
    Some(days_to_date(days)?.and_time(time).and_utc())
}

fn year_start(year: i32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, 1, 1).unwrap_or_default()
}

fn date_range_days() -> std::ops::Range<i32> {
    date_to_days(year_start(MIN_YEAR))..date_to_days(year_start(MAX_YEAR + 1))
}

fn timestamp_range_micros() -> std::ops::Range<i64> {
    let micros = |year| {
        year_start(year)
            .and_time(NaiveTime::MIN)
            .and_utc()
            .timestamp_micros()
    };
    micros(MIN_YEAR)..micros(MAX_YEAR + 1)
}

fn show_date(days: i32) -> String {
    days_to_date(days).map_or_else(|| format!("day {days}"), |d| d.to_string())
}

/// Seconds since midnight (Arrow `Time32(Second)`).
pub(crate) fn time_to_seconds(time: NaiveTime) -> i32 {
    // < 86 400, fits.
    time.num_seconds_from_midnight() as i32
}

pub(crate) fn seconds_to_time(seconds: i32) -> Option<NaiveTime> {
    NaiveTime::from_num_seconds_from_midnight_opt(u32::try_from(seconds).ok()?, 0)
}

// ---------------------------------------------------------------------------------------------
// Array builders for `columns`.

pub(crate) fn utf8<'r, I: IntoIterator<Item = &'r str>>(values: I) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// A text column made of runs of one value each (`(value, rows)` in row order): the values
/// buffer is each run's text repeated and the offsets step by its length, with no per-row
/// bookkeeping of a builder (a snapshot's underlying, model or settlement column repeats one
/// value over thousands of rows). Panics, as Arrow's builders do, when the column's text
/// exceeds 2 GiB (i32 offsets).
pub fn text_runs<'r, I: IntoIterator<Item = (&'r str, usize)>>(runs: I) -> StringArray {
    let runs: Vec<(&str, usize)> = runs.into_iter().collect();
    let rows: usize = runs.iter().map(|&(_, n)| n).sum();
    let bytes: usize = runs.iter().map(|&(text, n)| text.len() * n).sum();
    i32::try_from(bytes).expect("text column over 2 GiB");
    let mut values: Vec<u8> = Vec::with_capacity(bytes);
    let mut offsets: Vec<i32> = Vec::with_capacity(rows + 1);
    offsets.push(0);
    let mut end = 0_i32;
    for (text, n) in runs {
        // `repeat` copies by doubling: cheaper than one small copy per row, its temporary
        // included (measured).
        values.extend(text.as_bytes().repeat(n));
        // Within i32: the total was checked above.
        let length = text.len() as i32;
        offsets.extend((0..n).map(|_| {
            end += length;
            end
        }));
    }
    StringArray::new(
        OffsetBuffer::new(offsets.into()),
        Buffer::from_vec(values),
        None,
    )
}

pub(crate) fn utf8_opt<'r, I: IntoIterator<Item = Option<&'r str>>>(values: I) -> ArrayRef {
    Arc::new(values.into_iter().collect::<StringArray>())
}

pub(crate) fn f64s<I: IntoIterator<Item = f64>>(values: I) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(values))
}

pub(crate) fn f64s_opt<I: IntoIterator<Item = Option<f64>>>(values: I) -> ArrayRef {
    Arc::new(values.into_iter().collect::<Float64Array>())
}

pub(crate) fn u32s<I: IntoIterator<Item = u32>>(values: I) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(values))
}

pub(crate) fn u64s<I: IntoIterator<Item = u64>>(values: I) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(values))
}

pub(crate) fn dates<I: IntoIterator<Item = NaiveDate>>(values: I) -> ArrayRef {
    Arc::new(Date32Array::from_iter_values(
        values.into_iter().map(date_to_days),
    ))
}

/// The underlying, trade-date and `as_of` columns of `rows` rows of one underlying's snapshot,
/// every row the same (the leading columns of the per-underlying snapshot datasets).
pub(crate) fn snapshot_identity_columns(
    underlying: &str,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    rows: usize,
) -> [ArrayRef; 3] {
    [
        Arc::new(text_runs([(underlying, rows)])),
        Arc::new(Date32Array::from_value(date_to_days(trade_date), rows)),
        Arc::new(
            TimestampMicrosecondArray::from_value(as_of.timestamp_micros(), rows)
                .with_timezone("UTC"),
        ),
    ]
}

pub(crate) fn timestamps<I: IntoIterator<Item = DateTime<Utc>>>(values: I) -> ArrayRef {
    Arc::new(
        TimestampMicrosecondArray::from_iter_values(
            values.into_iter().map(|t| t.timestamp_micros()),
        )
        .with_timezone("UTC"),
    )
}

pub(crate) fn times_opt<I: IntoIterator<Item = Option<NaiveTime>>>(values: I) -> ArrayRef {
    Arc::new(
        values
            .into_iter()
            .map(|t| t.map(time_to_seconds))
            .collect::<Time32SecondArray>(),
    )
}

pub(crate) fn bools<I: IntoIterator<Item = bool>>(values: I) -> ArrayRef {
    Arc::new(values.into_iter().map(Some).collect::<BooleanArray>())
}

/// The value of a nullable column as an `Option`.
pub(crate) fn opt<T>(column: &impl Array, row: usize, value: impl FnOnce() -> T) -> Option<T> {
    column.is_valid(row).then(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_runs_is_each_value_repeated_in_order() {
        let runs = [("SPX", 3), ("", 2), ("PM", 0), ("é€", 2), ("AM", 1)];
        let rows: Vec<&str> = runs
            .iter()
            .flat_map(|&(t, n)| std::iter::repeat_n(t, n))
            .collect();
        let expected = StringArray::from_iter_values(rows);
        assert_eq!(text_runs(runs), expected);
        assert_eq!(
            text_runs([]),
            StringArray::from_iter_values(Vec::<&str>::new())
        );
    }

    #[test]
    fn calendar_dte_is_the_signed_duration_in_days() {
        let dates = [
            NaiveDate::MIN,
            NaiveDate::from_ymd_opt(-1, 12, 31).unwrap(),
            NaiveDate::from_ymd_opt(1900, 2, 28).unwrap(),
            NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
            NaiveDate::from_ymd_opt(2026, 11, 27).unwrap(),
            NaiveDate::from_ymd_opt(2099, 1, 1).unwrap(),
            NaiveDate::MAX,
        ];
        for a in dates {
            for b in dates {
                let days = b.signed_duration_since(a).num_days();
                assert_eq!(i64::from(calendar_dte(a, b)), days, "{a} to {b}");
            }
        }
    }

    #[test]
    fn dates_match_arrow_day_numbers() {
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
        assert_eq!(date_to_days(epoch), 0);
        let d = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        assert_eq!(date_to_days(d), (d - epoch).num_days() as i32);
        assert_eq!(days_to_date(date_to_days(d)), Some(d));
        assert_eq!(days_to_date(i32::MAX), None);
        assert_eq!(days_to_date(i32::MIN), None);
    }

    #[test]
    fn remembered_conversions_equal_chrono_s() {
        // Repeats, alternations and out-of-range values, so the one-entry memo is exercised.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut micros: Vec<i64> = vec![
            0,
            -1,
            1,
            i64::MIN,
            i64::MAX,
            86_400_000_000,
            -86_400_000_000,
        ];
        for _ in 0..20_000 {
            let v = next();
            micros.push(match v % 4 {
                0 => (v >> 2) as i64,
                1 => ((v >> 2) as i64) % 10_000_000_000_000_000,
                2 => *micros.last().unwrap(),
                _ => 1_795_000_000_000_000 + ((v >> 2) % 1_000_000_000_000) as i64,
            });
        }
        for &m in &micros {
            assert_eq!(
                micros_to_timestamp(m),
                DateTime::from_timestamp_micros(m),
                "{m}"
            );
            let days = (m >> 34) as i32;
            assert_eq!(
                days_to_date(days),
                days.checked_add(UNIX_EPOCH_FROM_CE)
                    .and_then(NaiveDate::from_num_days_from_ce_opt),
                "{days}"
            );
        }
    }

    #[test]
    fn dataset_names_round_trip() {
        for d in Dataset::ALL {
            assert_eq!(Dataset::from_name(d.name()), Some(d));
        }
    }

    #[test]
    fn symbols() {
        assert!(check_symbol("BRK.B").is_ok());
        assert!(check_symbol("").is_err());
        assert!(check_symbol("SP Y").is_err());
        assert!(check_symbol(&"X".repeat(33)).is_err());
    }
}
