//! The `chain` snapshot dataset that compute publishes: one row per underlying × expiration ×
//! settlement × strike, with the call and the put of the strike side by side, each with its
//! quote, open interest, implied volatility and Greek set, and the forward, rate and carry the
//! expiration was priced with.
//!
//! Column names, meanings and units are in [`crate::columns::chain`]. [`ChainRow::to_batch`]
//! and [`ChainRow::from_batch`] validate both ways, like the inbound datasets' [`crate::Record`]
//! rows: NaN or infinite numbers (absent values are nulls, never NaN), non-positive strikes,
//! spots or forwards, negative prices, a mid on a quote that is not two-sided, an IV together
//! with a reason for not having one, open interest dated after the trade date, unknown codes,
//! OCC symbols that disagree with the row, and dates out of range are rejected with
//! [`SchemaError::InvalidValue`] naming the column and row. Batches are read by column name:
//! unknown extra columns are ignored and a missing nullable column reads as nulls, so a reader
//! accepts snapshots written before a column was added.

use std::sync::{Arc, LazyLock};

use arrow_array::builder::{
    Date32Builder, Float64Builder, Int32Builder, StringBuilder, TimestampMicrosecondBuilder,
    UInt32Builder, UInt64Builder,
};
use arrow_array::{
    ArrayRef, Date32Array, Float64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::chain::{self as col, CALL, PUT, SideColumns};
use crate::enums::wire_enum;
use crate::enums::{OptionType, SettlementStyle, WireEnum};
use crate::error::SchemaError;
use crate::occ::OccSymbol;
use crate::snapshot::{SnapshotColumns, SnapshotDataset, snapshot_row, validate};
use crate::table::{check_symbol, date_to_days, field, opt, timestamp_type};

/// The dataset's name, as used in storage paths, snapshot events and error messages.
pub const CHAIN_DATASET: &str = SnapshotDataset::Chain.name();

wire_enum! {
    /// How an expiration's forward was obtained.
    ForwardSource, "forward source" {
        /// `parity`: implied from call and put mids near the money by put–call parity.
        Parity = "parity",
        /// `carry`: spot × e^{(r − q)T} with the caller's dividend yield q, when no strike has
        /// a two-sided call and put.
        Carry = "carry",
    }
}

wire_enum! {
    /// The model a chain was priced with.
    PricingModelCode, "pricing model" {
        /// `bsm`: Black–Scholes–Merton on the spot with the implied carry yield (stocks, ETFs).
        Bsm = "bsm",
        /// `black76`: Black-76 on the forward (cash-settled indices); Greeks with respect to
        /// the forward.
        Black76 = "black76",
    }
}

wire_enum! {
    /// Why a listed contract has no implied volatility (and so no Greeks).
    NoIvReason, "reason for no implied volatility" {
        /// `no_two_sided_quote`: no bid, or the ask is below the bid; there is no mid.
        NoTwoSidedQuote = "no_two_sided_quote",
        /// `expired`: the snapshot is at or after the close of the expiration day's session.
        Expired = "expired",
        /// `below_intrinsic`: the mid is below the discounted intrinsic value on the forward.
        BelowIntrinsic = "below_intrinsic",
        /// `no_time_value`: the mid equals the intrinsic value.
        NoTimeValue = "no_time_value",
        /// `above_maximum`: the mid reaches the no-arbitrage maximum.
        AboveMaximum = "above_maximum",
        /// `invalid_input`: the contract's inputs are out of the model's domain.
        InvalidInput = "invalid_input",
    }
}

macro_rules! chain_greeks {
    ($($greek:ident: $doc:literal,)*) => {
        /// The Greek set of one side of a chain row, per share, at the side's implied
        /// volatility. Units are those of `optics_compute::pricing::Greeks`; every field is
        /// `None` when the side has no IV.
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct ChainGreeks {
            $(#[doc = $doc] pub $greek: Option<f64>,)*
        }

        impl ChainGreeks {
            /// Number of Greeks in the set.
            pub const COUNT: usize = [$(stringify!($greek)),*].len();

            /// The side's Greek column names, in schema order.
            fn column_names(side: &SideColumns) -> [&'static str; Self::COUNT] {
                [$(side.$greek),*]
            }

            /// The values, in schema order.
            fn values(&self) -> [Option<f64>; Self::COUNT] {
                [$(self.$greek),*]
            }

            fn from_values(values: [Option<f64>; Self::COUNT]) -> Self {
                let [$($greek),*] = values;
                Self { $($greek),* }
            }
        }

        /// The Greek columns of one side of a `chain` batch, built by the caller (Float64,
        /// nullable), by name; see [`ChainArrays`].
        #[derive(Debug, Clone)]
        pub struct ChainGreekArrays {
            $(#[doc = $doc] pub $greek: ArrayRef,)*
        }

        impl ChainGreekArrays {
            /// The columns, in schema order.
            fn into_columns(self) -> [ArrayRef; ChainGreeks::COUNT] {
                [$(self.$greek),*]
            }

            /// From the columns in schema order (the order of the fields).
            pub fn from_columns(columns: [ArrayRef; ChainGreeks::COUNT]) -> Self {
                let [$($greek),*] = columns;
                Self { $($greek),* }
            }
        }
    };
}

chain_greeks! {
    delta: "∂V/∂S (S the spot for `bsm`, the forward for `black76`).",
    gamma: "∂²V/∂S², per $1.",
    theta: "Dollars per calendar day of time passing.",
    vega: "Dollars per vol point.",
    rho: "Dollars per point of rate.",
    epsilon: "Dollars per point of yield (0 for `black76`).",
    vanna: "Delta per vol point.",
    charm: "Delta per calendar day.",
    vomma: "Vega per vol point.",
    veta: "Vega per calendar day.",
    speed: "Gamma per $1.",
    zomma: "Gamma per vol point.",
    color: "Gamma per calendar day.",
    ultima: "Vomma per vol point.",
}

/// One side (call or put) of a chain row. A side that is not listed at the strike is
/// [`ChainSide::default`]: every field `None`. Units: [`crate::columns::chain::SideColumns`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainSide {
    /// OCC option symbol (compact form); `None` when the side is not listed.
    pub option_symbol: Option<String>,
    /// When the quote used was observed.
    pub quote_time: Option<DateTime<Utc>>,
    /// Best bid, dollars per share (0 = no bid).
    pub bid: Option<f64>,
    /// Best ask, dollars per share.
    pub ask: Option<f64>,
    /// (bid + ask) / 2 when the quote is two-sided (bid > 0, ask ≥ bid), dollars per share.
    pub mid: Option<f64>,
    /// Last trade price, dollars per share.
    pub last: Option<f64>,
    /// Contracts at the bid.
    pub bid_size: Option<u32>,
    /// Contracts at the ask.
    pub ask_size: Option<u32>,
    /// Contracts traded this session up to the quote.
    pub volume: Option<u64>,
    /// Open interest, contracts, at the close of `oi_date`.
    pub open_interest: Option<u64>,
    /// The trade date the open interest applies to; never after the row's trade date.
    pub oi_date: Option<NaiveDate>,
    /// Implied volatility of the mid, decimal.
    pub iv: Option<f64>,
    /// Why a listed side has no IV; `None` when solved or not listed.
    pub iv_status: Option<NoIvReason>,
    /// The Greek set at `iv`.
    pub greeks: ChainGreeks,
    /// Time value of the mid on the forward's intrinsic value, dollars per share, ≥ 0.
    pub extrinsic: Option<f64>,
}

impl ChainSide {
    /// Whether the contract is listed (has a symbol).
    pub fn is_listed(&self) -> bool {
        self.option_symbol.is_some()
    }
}

/// One row of a chain snapshot: a strike of one expiration with its call and put. Units:
/// [`crate::columns::chain`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChainRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session the snapshot belongs to.
    pub trade_date: NaiveDate,
    /// The instant priced.
    pub as_of: DateTime<Utc>,
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Settlement of the series.
    pub settlement: SettlementStyle,
    /// Calendar days from `trade_date` to `expiration`.
    pub dte: i32,
    /// Years from `as_of` to the close of `expiration`'s session (ACT/365).
    pub years_to_expiry: f64,
    /// Strike, dollars.
    pub strike: f64,
    /// Underlying price used, dollars.
    pub spot: f64,
    /// Forward of the expiration, dollars.
    pub forward: f64,
    /// How the forward was obtained.
    pub forward_source: ForwardSource,
    /// Strikes combined into a parity forward (0 for carry).
    pub forward_strike_count: u32,
    /// Continuous risk-free rate, decimal.
    pub rate: f64,
    /// Continuous yield the forward implies, decimal.
    pub carry_yield: f64,
    /// Pricing model.
    pub model: PricingModelCode,
    /// The call at this strike.
    pub call: ChainSide,
    /// The put at this strike.
    pub put: ChainSide,
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields = vec![
        field(col::UNDERLYING, DataType::Utf8, false),
        field(col::TRADE_DATE, DataType::Date32, false),
        field(col::AS_OF, timestamp_type(), false),
        field(col::EXPIRATION, DataType::Date32, false),
        field(col::SETTLEMENT, DataType::Utf8, false),
        field(col::DTE, DataType::Int32, false),
        field(col::YEARS_TO_EXPIRY, DataType::Float64, false),
        field(col::STRIKE, DataType::Float64, false),
        field(col::SPOT, DataType::Float64, false),
        field(col::FORWARD, DataType::Float64, false),
        field(col::FORWARD_SOURCE, DataType::Utf8, false),
        field(col::FORWARD_STRIKE_COUNT, DataType::UInt32, false),
        field(col::RATE, DataType::Float64, false),
        field(col::CARRY_YIELD, DataType::Float64, false),
        field(col::MODEL, DataType::Utf8, false),
    ];
    fields.extend(side_fields(&CALL));
    fields.extend(side_fields(&PUT));
    Arc::new(Schema::new(fields))
});

/// Every column of a side is nullable: the side may not be listed at the strike.
fn side_fields(side: &SideColumns) -> Vec<Field> {
    let nullable = |name: &str, data_type: DataType| field(name, data_type, true);
    let mut fields = vec![
        nullable(side.option_symbol, DataType::Utf8),
        nullable(side.quote_time, timestamp_type()),
        nullable(side.bid, DataType::Float64),
        nullable(side.ask, DataType::Float64),
        nullable(side.mid, DataType::Float64),
        nullable(side.last, DataType::Float64),
        nullable(side.bid_size, DataType::UInt32),
        nullable(side.ask_size, DataType::UInt32),
        nullable(side.volume, DataType::UInt64),
        nullable(side.open_interest, DataType::UInt64),
        nullable(side.oi_date, DataType::Date32),
        nullable(side.iv, DataType::Float64),
        nullable(side.iv_status, DataType::Utf8),
    ];
    fields.extend(ChainGreeks::column_names(side).map(|name| nullable(name, DataType::Float64)));
    fields.push(nullable(side.extrinsic, DataType::Float64));
    fields
}

/// The Arrow schema of the `chain` dataset (shared, built once).
pub fn chain_schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

snapshot_row!(ChainRow, Chain, col::ALL, chain_schema, build: build_batch, read: read);

/// Checks a `chain` batch: columns found by name (unknown extra columns are dropped, missing
/// nullable columns become nulls), types, nullability and every value rule. Returns the batch
/// in the canonical schema.
pub fn validate_chain_batch(batch: &RecordBatch) -> Result<RecordBatch, SchemaError> {
    validate::<ChainRow>(batch)
}

/// The batch of `rows` in the canonical schema, unchecked.
fn build_batch(rows: &[ChainRow]) -> Result<RecordBatch, SchemaError> {
    // One pass over the rows, appending to every column: a row is ~1 kB, so a pass per column
    // would reload each row from memory once per column.
    let mut builders = RowBuilders::with_capacity(rows.len());
    for row in rows {
        builders.append(row);
    }
    builders.finish().into_batch()
}

/// Every column of a `chain` batch, already built, by name: for a producer that assembles
/// columns directly (the compute worker) instead of going through [`ChainRow`]s. Types and
/// nullability are those of [`chain_schema`]; [`ChainArrays::into_batch_trusted`] puts the
/// columns in schema order.
#[derive(Debug, Clone)]
pub struct ChainArrays {
    /// Utf8.
    pub underlying: ArrayRef,
    /// Date32.
    pub trade_date: ArrayRef,
    /// Timestamp (µs, UTC).
    pub as_of: ArrayRef,
    /// Date32.
    pub expiration: ArrayRef,
    /// Utf8 ([`SettlementStyle`] code).
    pub settlement: ArrayRef,
    /// Int32.
    pub dte: ArrayRef,
    /// Float64.
    pub years_to_expiry: ArrayRef,
    /// Float64.
    pub strike: ArrayRef,
    /// Float64.
    pub spot: ArrayRef,
    /// Float64.
    pub forward: ArrayRef,
    /// Utf8 ([`ForwardSource`] code).
    pub forward_source: ArrayRef,
    /// UInt32.
    pub forward_strike_count: ArrayRef,
    /// Float64.
    pub rate: ArrayRef,
    /// Float64.
    pub carry_yield: ArrayRef,
    /// Utf8 ([`PricingModelCode`] code).
    pub model: ArrayRef,
    /// The call's columns.
    pub call: ChainSideArrays,
    /// The put's columns.
    pub put: ChainSideArrays,
}

/// The columns of one side of a `chain` batch (all nullable), by name; see [`ChainArrays`].
#[derive(Debug, Clone)]
pub struct ChainSideArrays {
    /// Utf8.
    pub option_symbol: ArrayRef,
    /// Timestamp (µs, UTC).
    pub quote_time: ArrayRef,
    /// Float64.
    pub bid: ArrayRef,
    /// Float64.
    pub ask: ArrayRef,
    /// Float64.
    pub mid: ArrayRef,
    /// Float64.
    pub last: ArrayRef,
    /// UInt32.
    pub bid_size: ArrayRef,
    /// UInt32.
    pub ask_size: ArrayRef,
    /// UInt64.
    pub volume: ArrayRef,
    /// UInt64.
    pub open_interest: ArrayRef,
    /// Date32.
    pub oi_date: ArrayRef,
    /// Float64.
    pub iv: ArrayRef,
    /// Utf8 ([`NoIvReason`] code).
    pub iv_status: ArrayRef,
    /// Float64 each.
    pub greeks: ChainGreekArrays,
    /// Float64.
    pub extrinsic: ArrayRef,
}

impl ChainSideArrays {
    fn into_columns(self) -> impl Iterator<Item = ArrayRef> {
        [
            self.option_symbol,
            self.quote_time,
            self.bid,
            self.ask,
            self.mid,
            self.last,
            self.bid_size,
            self.ask_size,
            self.volume,
            self.open_interest,
            self.oi_date,
            self.iv,
            self.iv_status,
        ]
        .into_iter()
        .chain(self.greeks.into_columns())
        .chain([self.extrinsic])
    }
}

impl ChainArrays {
    /// The batch in schema order, unchecked: an array of the wrong type or length is an
    /// error, values break the dataset's rules only in debug builds (as
    /// [`ChainRow::to_batch_trusted`]: the producer derived them by those rules).
    pub fn into_batch_trusted(self) -> Result<RecordBatch, SchemaError> {
        let batch = self.into_batch()?;
        if cfg!(debug_assertions) {
            read(&batch, false)?;
        }
        Ok(batch)
    }

    fn into_batch(self) -> Result<RecordBatch, SchemaError> {
        let columns: Vec<ArrayRef> = [
            self.underlying,
            self.trade_date,
            self.as_of,
            self.expiration,
            self.settlement,
            self.dte,
            self.years_to_expiry,
            self.strike,
            self.spot,
            self.forward,
            self.forward_source,
            self.forward_strike_count,
            self.rate,
            self.carry_yield,
            self.model,
        ]
        .into_iter()
        .chain(self.call.into_columns())
        .chain(self.put.into_columns())
        .collect();
        Ok(RecordBatch::try_new(chain_schema(), columns)?)
    }
}

/// Column builders of the shared columns, in schema order.
struct RowBuilders {
    underlying: StringBuilder,
    trade_date: Date32Builder,
    as_of: TimestampMicrosecondBuilder,
    expiration: Date32Builder,
    settlement: StringBuilder,
    dte: Int32Builder,
    years_to_expiry: Float64Builder,
    strike: Float64Builder,
    spot: Float64Builder,
    forward: Float64Builder,
    forward_source: StringBuilder,
    forward_strike_count: UInt32Builder,
    rate: Float64Builder,
    carry_yield: Float64Builder,
    model: StringBuilder,
    call: SideBuilders,
    put: SideBuilders,
}

impl RowBuilders {
    fn with_capacity(n: usize) -> Self {
        let text = |bytes_per_row: usize| StringBuilder::with_capacity(n, n * bytes_per_row);
        Self {
            underlying: text(4),
            trade_date: Date32Builder::with_capacity(n),
            as_of: TimestampMicrosecondBuilder::with_capacity(n),
            expiration: Date32Builder::with_capacity(n),
            settlement: text(2),
            dte: Int32Builder::with_capacity(n),
            years_to_expiry: Float64Builder::with_capacity(n),
            strike: Float64Builder::with_capacity(n),
            spot: Float64Builder::with_capacity(n),
            forward: Float64Builder::with_capacity(n),
            forward_source: text(6),
            forward_strike_count: UInt32Builder::with_capacity(n),
            rate: Float64Builder::with_capacity(n),
            carry_yield: Float64Builder::with_capacity(n),
            model: text(7),
            call: SideBuilders::with_capacity(n),
            put: SideBuilders::with_capacity(n),
        }
    }

    fn append(&mut self, row: &ChainRow) {
        self.underlying.append_value(&row.underlying);
        self.trade_date.append_value(date_to_days(row.trade_date));
        self.as_of.append_value(row.as_of.timestamp_micros());
        self.expiration.append_value(date_to_days(row.expiration));
        self.settlement.append_value(row.settlement.as_str());
        self.dte.append_value(row.dte);
        self.years_to_expiry.append_value(row.years_to_expiry);
        self.strike.append_value(row.strike);
        self.spot.append_value(row.spot);
        self.forward.append_value(row.forward);
        self.forward_source
            .append_value(row.forward_source.as_str());
        self.forward_strike_count
            .append_value(row.forward_strike_count);
        self.rate.append_value(row.rate);
        self.carry_yield.append_value(row.carry_yield);
        self.model.append_value(row.model.as_str());
        self.call.append(&row.call);
        self.put.append(&row.put);
    }

    fn finish(mut self) -> ChainArrays {
        ChainArrays {
            underlying: Arc::new(self.underlying.finish()),
            trade_date: Arc::new(self.trade_date.finish()),
            as_of: Arc::new(self.as_of.finish().with_timezone("UTC")),
            expiration: Arc::new(self.expiration.finish()),
            settlement: Arc::new(self.settlement.finish()),
            dte: Arc::new(self.dte.finish()),
            years_to_expiry: Arc::new(self.years_to_expiry.finish()),
            strike: Arc::new(self.strike.finish()),
            spot: Arc::new(self.spot.finish()),
            forward: Arc::new(self.forward.finish()),
            forward_source: Arc::new(self.forward_source.finish()),
            forward_strike_count: Arc::new(self.forward_strike_count.finish()),
            rate: Arc::new(self.rate.finish()),
            carry_yield: Arc::new(self.carry_yield.finish()),
            model: Arc::new(self.model.finish()),
            call: self.call.finish(),
            put: self.put.finish(),
        }
    }
}

/// Column builders of one side, in schema order.
struct SideBuilders {
    option_symbol: StringBuilder,
    quote_time: TimestampMicrosecondBuilder,
    bid: Float64Builder,
    ask: Float64Builder,
    mid: Float64Builder,
    last: Float64Builder,
    bid_size: UInt32Builder,
    ask_size: UInt32Builder,
    volume: UInt64Builder,
    open_interest: UInt64Builder,
    oi_date: Date32Builder,
    iv: Float64Builder,
    iv_status: StringBuilder,
    greeks: Vec<Float64Builder>,
    extrinsic: Float64Builder,
}

impl SideBuilders {
    fn with_capacity(n: usize) -> Self {
        Self {
            option_symbol: StringBuilder::with_capacity(n, n * 21),
            quote_time: TimestampMicrosecondBuilder::with_capacity(n),
            bid: Float64Builder::with_capacity(n),
            ask: Float64Builder::with_capacity(n),
            mid: Float64Builder::with_capacity(n),
            last: Float64Builder::with_capacity(n),
            bid_size: UInt32Builder::with_capacity(n),
            ask_size: UInt32Builder::with_capacity(n),
            volume: UInt64Builder::with_capacity(n),
            open_interest: UInt64Builder::with_capacity(n),
            oi_date: Date32Builder::with_capacity(n),
            iv: Float64Builder::with_capacity(n),
            iv_status: StringBuilder::with_capacity(n, n),
            greeks: (0..ChainGreeks::COUNT)
                .map(|_| Float64Builder::with_capacity(n))
                .collect(),
            extrinsic: Float64Builder::with_capacity(n),
        }
    }

    fn append(&mut self, side: &ChainSide) {
        self.option_symbol
            .append_option(side.option_symbol.as_deref());
        self.quote_time
            .append_option(side.quote_time.map(|t| t.timestamp_micros()));
        self.bid.append_option(side.bid);
        self.ask.append_option(side.ask);
        self.mid.append_option(side.mid);
        self.last.append_option(side.last);
        self.bid_size.append_option(side.bid_size);
        self.ask_size.append_option(side.ask_size);
        self.volume.append_option(side.volume);
        self.open_interest.append_option(side.open_interest);
        self.oi_date.append_option(side.oi_date.map(date_to_days));
        self.iv.append_option(side.iv);
        self.iv_status
            .append_option(side.iv_status.map(NoIvReason::as_str));
        for (builder, value) in self.greeks.iter_mut().zip(side.greeks.values()) {
            builder.append_option(value);
        }
        self.extrinsic.append_option(side.extrinsic);
    }

    fn finish(mut self) -> ChainSideArrays {
        let greeks: [ArrayRef; ChainGreeks::COUNT] =
            std::array::from_fn(|i| Arc::new(self.greeks[i].finish()) as ArrayRef);
        ChainSideArrays {
            option_symbol: Arc::new(self.option_symbol.finish()),
            quote_time: Arc::new(self.quote_time.finish().with_timezone("UTC")),
            bid: Arc::new(self.bid.finish()),
            ask: Arc::new(self.ask.finish()),
            mid: Arc::new(self.mid.finish()),
            last: Arc::new(self.last.finish()),
            bid_size: Arc::new(self.bid_size.finish()),
            ask_size: Arc::new(self.ask_size.finish()),
            volume: Arc::new(self.volume.finish()),
            open_interest: Arc::new(self.open_interest.finish()),
            oi_date: Arc::new(self.oi_date.finish()),
            iv: Arc::new(self.iv.finish()),
            iv_status: Arc::new(self.iv_status.finish()),
            greeks: ChainGreekArrays::from_columns(greeks),
            extrinsic: Arc::new(self.extrinsic.finish()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Conformance, validation and reading.

/// The columns of one side of a conformed batch.
struct SideArrays<'a> {
    names: &'static SideColumns,
    option_type: OptionType,
    option_symbol: &'a StringArray,
    quote_time: &'a TimestampMicrosecondArray,
    bid: &'a Float64Array,
    ask: &'a Float64Array,
    mid: &'a Float64Array,
    last: &'a Float64Array,
    bid_size: &'a UInt32Array,
    ask_size: &'a UInt32Array,
    volume: &'a UInt64Array,
    open_interest: &'a UInt64Array,
    oi_date: &'a Date32Array,
    iv: &'a Float64Array,
    iv_status: &'a StringArray,
    greeks: Vec<&'a Float64Array>,
    extrinsic: &'a Float64Array,
}

/// What a side's row is checked against.
struct RowContext {
    row: usize,
    trade_date: NaiveDate,
    expiration: NaiveDate,
    strike: f64,
}

impl<'a> SideArrays<'a> {
    fn new(
        c: &SnapshotColumns<'a>,
        names: &'static SideColumns,
        option_type: OptionType,
    ) -> Result<Self, SchemaError> {
        Ok(Self {
            names,
            option_type,
            option_symbol: c.str(names.option_symbol)?,
            quote_time: c.timestamp(names.quote_time)?,
            bid: c.f64(names.bid)?,
            ask: c.f64(names.ask)?,
            mid: c.f64(names.mid)?,
            last: c.f64(names.last)?,
            bid_size: c.u32(names.bid_size)?,
            ask_size: c.u32(names.ask_size)?,
            volume: c.u64(names.volume)?,
            open_interest: c.u64(names.open_interest)?,
            oi_date: c.date(names.oi_date)?,
            iv: c.f64(names.iv)?,
            iv_status: c.str(names.iv_status)?,
            greeks: ChainGreeks::column_names(names)
                .into_iter()
                .map(|name| c.f64(name))
                .collect::<Result<_, _>>()?,
            extrinsic: c.f64(names.extrinsic)?,
        })
    }

    /// Checks every rule of the side at `ctx.row` and, when `keep`, reads it.
    fn read(
        &self,
        c: &SnapshotColumns<'a>,
        ctx: &RowContext,
        keep: bool,
    ) -> Result<Option<ChainSide>, SchemaError> {
        let n = self.names;
        let row = ctx.row;
        let f64_opt = |column: &'static str,
                       array: &Float64Array,
                       rule: fn(
            &SnapshotColumns<'a>,
            &'static str,
            usize,
            f64,
        ) -> Result<f64, SchemaError>|
         -> Result<Option<f64>, SchemaError> {
            opt(array, row, || rule(c, column, row, array.value(row))).transpose()
        };

        let option_symbol = opt(self.option_symbol, row, || self.option_symbol.value(row));
        if let Some(symbol) = option_symbol {
            self.check_symbol(c, symbol, ctx)?;
        }
        let bid = f64_opt(n.bid, self.bid, SnapshotColumns::non_negative)?;
        let ask = f64_opt(n.ask, self.ask, SnapshotColumns::non_negative)?;
        let mid = f64_opt(n.mid, self.mid, SnapshotColumns::non_negative)?;
        if mid.is_some() && !matches!((bid, ask), (Some(b), Some(a)) if b > 0.0 && a >= b) {
            return Err(c.invalid(
                n.mid,
                row,
                "a mid needs a two-sided quote (bid > 0 and ask ≥ bid)",
            ));
        }
        let open_interest = opt(self.open_interest, row, || self.open_interest.value(row));
        let oi_date = opt(self.oi_date, row, || {
            c.date_value(n.oi_date, self.oi_date, row)
        })
        .transpose()?;
        if open_interest.is_some() != oi_date.is_some() {
            return Err(c.invalid(
                n.oi_date,
                row,
                "open interest and its date must be both present or both null",
            ));
        }
        if let Some(date) = oi_date
            && date > ctx.trade_date
        {
            return Err(c.invalid(
                n.oi_date,
                row,
                format!(
                    "open interest of {date} is after the trade date {}",
                    ctx.trade_date
                ),
            ));
        }
        let iv = f64_opt(n.iv, self.iv, SnapshotColumns::positive)?;
        let iv_status = opt(self.iv_status, row, || {
            c.code::<NoIvReason>(n.iv_status, self.iv_status, row)
        })
        .transpose()?;
        if iv.is_some() && iv_status.is_some() {
            return Err(c.invalid(n.iv_status, row, "a solved IV has no reason for missing"));
        }
        let names = ChainGreeks::column_names(n);
        let mut greeks = [None; ChainGreeks::COUNT];
        for ((value, array), name) in greeks.iter_mut().zip(&self.greeks).zip(names) {
            *value = f64_opt(name, array, SnapshotColumns::finite)?;
        }
        let quote_time = opt(self.quote_time, row, || {
            c.timestamp_value(n.quote_time, self.quote_time, row)
        })
        .transpose()?;
        let last = f64_opt(n.last, self.last, SnapshotColumns::non_negative)?;
        let extrinsic = f64_opt(n.extrinsic, self.extrinsic, SnapshotColumns::non_negative)?;
        Ok(keep.then(|| ChainSide {
            option_symbol: option_symbol.map(str::to_owned),
            quote_time,
            bid,
            ask,
            mid,
            last,
            bid_size: opt(self.bid_size, row, || self.bid_size.value(row)),
            ask_size: opt(self.ask_size, row, || self.ask_size.value(row)),
            volume: opt(self.volume, row, || self.volume.value(row)),
            open_interest,
            oi_date,
            iv,
            iv_status,
            greeks: ChainGreeks::from_values(greeks),
            extrinsic,
        }))
    }

    /// The OCC symbol parses and names this side's type, the row's expiration and strike.
    fn check_symbol(
        &self,
        c: &SnapshotColumns<'_>,
        symbol: &str,
        ctx: &RowContext,
    ) -> Result<(), SchemaError> {
        let column = self.names.option_symbol;
        let occ =
            OccSymbol::parse(symbol).map_err(|e| c.invalid(column, ctx.row, e.to_string()))?;
        let disagrees = |what: &str| {
            c.invalid(
                column,
                ctx.row,
                format!("{symbol} disagrees with the row's {what}"),
            )
        };
        if occ.option_type != self.option_type {
            return Err(disagrees("side"));
        }
        if occ.expiration != ctx.expiration {
            return Err(disagrees(col::EXPIRATION));
        }
        if (ctx.strike * 1000.0 - f64::from(occ.strike_thousandths)).abs() > 1e-6 {
            return Err(disagrees(col::STRIKE));
        }
        Ok(())
    }
}

/// Checks every value rule of a conformed batch and, when `keep`, reads its rows (without
/// `keep` nothing is allocated per row: the check of [`ChainRow::to_batch`]).
fn read(batch: &RecordBatch, keep: bool) -> Result<Vec<ChainRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::Chain, batch);
    let underlying = c.str(col::UNDERLYING)?;
    let trade_date = c.date(col::TRADE_DATE)?;
    let as_of = c.timestamp(col::AS_OF)?;
    let expiration = c.date(col::EXPIRATION)?;
    let settlement = c.str(col::SETTLEMENT)?;
    let dte = c.i32(col::DTE)?;
    let years_to_expiry = c.f64(col::YEARS_TO_EXPIRY)?;
    let strike = c.f64(col::STRIKE)?;
    let spot = c.f64(col::SPOT)?;
    let forward = c.f64(col::FORWARD)?;
    let forward_source = c.str(col::FORWARD_SOURCE)?;
    let forward_strike_count = c.u32(col::FORWARD_STRIKE_COUNT)?;
    let rate = c.f64(col::RATE)?;
    let carry_yield = c.f64(col::CARRY_YIELD)?;
    let model = c.str(col::MODEL)?;
    let call = SideArrays::new(&c, &CALL, OptionType::Call)?;
    let put = SideArrays::new(&c, &PUT, OptionType::Put)?;

    let mut rows = Vec::with_capacity(if keep { batch.num_rows() } else { 0 });
    for row in 0..batch.num_rows() {
        let symbol = underlying.value(row);
        check_symbol(symbol).map_err(|reason| c.invalid(col::UNDERLYING, row, reason))?;
        let trade_date = c.date_value(col::TRADE_DATE, trade_date, row)?;
        let expiration = c.date_value(col::EXPIRATION, expiration, row)?;
        let dte = dte.value(row);
        let days = expiration.signed_duration_since(trade_date).num_days();
        if i64::from(dte) != days {
            return Err(c.invalid(
                col::DTE,
                row,
                format!("{dte} is not the {days} days from the trade date to the expiration"),
            ));
        }
        let strike = c.positive(col::STRIKE, row, strike.value(row))?;
        let as_of = c.timestamp_value(col::AS_OF, as_of, row)?;
        let settlement = c.code(col::SETTLEMENT, settlement, row)?;
        let years_to_expiry = c.finite(col::YEARS_TO_EXPIRY, row, years_to_expiry.value(row))?;
        let spot = c.positive(col::SPOT, row, spot.value(row))?;
        let forward = c.positive(col::FORWARD, row, forward.value(row))?;
        let forward_source = c.code(col::FORWARD_SOURCE, forward_source, row)?;
        let rate = c.finite(col::RATE, row, rate.value(row))?;
        let carry_yield = c.finite(col::CARRY_YIELD, row, carry_yield.value(row))?;
        let model = c.code(col::MODEL, model, row)?;
        let ctx = RowContext {
            row,
            trade_date,
            expiration,
            strike,
        };
        let call = call.read(&c, &ctx, keep)?;
        let put = put.read(&c, &ctx, keep)?;
        if let (Some(call), Some(put)) = (call, put) {
            rows.push(ChainRow {
                underlying: symbol.to_owned(),
                trade_date,
                as_of,
                expiration,
                settlement,
                dte,
                years_to_expiry,
                strike,
                spot,
                forward,
                forward_source,
                forward_strike_count: forward_strike_count.value(row),
                rate,
                carry_yield,
                model,
                call,
                put,
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_follows_the_column_constants() {
        let schema = chain_schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, col::ALL);
        assert_eq!(names.len(), 15 + 2 * (14 + ChainGreeks::COUNT));
    }

    #[test]
    fn codes_round_trip() {
        for &reason in NoIvReason::ALL {
            assert_eq!(NoIvReason::from_code(reason.as_str()), Some(reason));
        }
        assert_eq!(
            ForwardSource::from_code("parity"),
            Some(ForwardSource::Parity)
        );
        assert_eq!(
            PricingModelCode::from_code("black76"),
            Some(PricingModelCode::Black76)
        );
        assert_eq!(PricingModelCode::from_code("Black76"), None);
    }
}
