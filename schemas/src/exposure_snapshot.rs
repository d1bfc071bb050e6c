//! The `exposures` and `exposure_summary` snapshot datasets that compute publishes: dealer
//! exposures by underlying × expiration × strike ([`ExposureRow`]), and per expiration plus one
//! aggregate row per underlying ([`ExposureSummaryRow`]) with totals, flip levels, walls, max
//! pain and the regime read.
//!
//! Column names, meanings and units are in [`crate::columns::exposures`]. `to_batch` and
//! `from_batch` validate both ways: non-finite numbers (absent values are nulls, never NaN),
//! non-positive strikes, spots or levels, a `dte` that disagrees with the dates, a net that is
//! not call + put, unknown codes and inconsistent null patterns (a flip level together with a
//! degeneracy reason, a wall without its GEX, an aggregate row with a `dte`) are rejected with
//! [`SchemaError::InvalidValue`] naming the column and row. Batches are read by column
//! name: unknown extra columns are ignored and a missing nullable column reads as nulls.

use std::sync::{Arc, LazyLock};

use arrow_array::{
    Array, ArrayRef, Date32Array, Float64Array, Int32Array, RecordBatch, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::exposures::summary as scol;
use crate::columns::exposures::{self as col, CALL, MEASURE_COUNT, MeasureColumns, NET, PUT};
use crate::enums::WireEnum;
use crate::enums::wire_enum;
use crate::error::SchemaError;
use crate::snapshot::{SnapshotColumns, SnapshotDataset, snapshot_row};
use crate::table::{
    bools, calendar_dte, date_to_days, dates, f64s, f64s_opt, field, opt, read_rows,
    snapshot_identity_columns, timestamp_type, timestamps, u64s, utf8, utf8_opt,
};

/// The strike-grain dataset's name (storage paths, events, error messages).
pub const EXPOSURES_DATASET: &str = SnapshotDataset::Exposures.name();
/// The summary dataset's name.
pub const EXPOSURE_SUMMARY_DATASET: &str = SnapshotDataset::ExposureSummary.name();

wire_enum! {
    /// Why there is no flip level.
    FlipDegeneracyCode, "flip degeneracy" {
        /// `no_exposure`: no contract with an IV and open interest.
        NoExposure = "no_exposure",
        /// `always_positive`: net GEX is positive over the whole grid.
        AlwaysPositive = "always_positive",
        /// `always_negative`: net GEX is negative over the whole grid.
        AlwaysNegative = "always_negative",
    }
}

wire_enum! {
    /// What dealer hedging does to moves (sign of net GEX).
    VolatilityRegimeCode, "volatility regime" {
        /// `SUPPRESSED`: net GEX > 0.
        Suppressed = "SUPPRESSED",
        /// `AMPLIFIED`: net GEX < 0.
        Amplified = "AMPLIFIED",
        /// `NEUTRAL`: net GEX = 0.
        Neutral = "NEUTRAL",
    }
}

wire_enum! {
    /// Which side's gamma dominates (from `gex_ratio`).
    PositioningCode, "positioning" {
        /// `CALL_DOMINATED`.
        CallDominated = "CALL_DOMINATED",
        /// `PUT_DOMINATED`.
        PutDominated = "PUT_DOMINATED",
        /// `BALANCED`.
        Balanced = "BALANCED",
    }
}

wire_enum! {
    /// The direction hedging flows lean.
    DirectionalBiasCode, "directional bias" {
        /// `BULLISH`.
        Bullish = "BULLISH",
        /// `BEARISH`.
        Bearish = "BEARISH",
        /// `NEUTRAL`.
        Neutral = "NEUTRAL",
    }
}

macro_rules! exposure_measures {
    ($($field:ident,)*) => {
        /// One side's exposures (call, put or net), one value per measure; units on the fields
        /// of [`MeasureColumns`]. The order of [`to_array`](Self::to_array) is the schema's and
        /// `optics_compute::exposure::ExposureKind::ALL`'s.
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct ExposureMeasures {
            $(#[doc = concat!("`", stringify!($field), "` exposure (unit: [`MeasureColumns`]).")] pub $field: f64,)*
        }

        impl ExposureMeasures {
            /// From values in schema order.
            pub fn from_array(values: [f64; MEASURE_COUNT]) -> Self {
                let [$($field),*] = values;
                Self { $($field),* }
            }

            /// The values in schema order.
            pub fn to_array(&self) -> [f64; MEASURE_COUNT] {
                [$(self.$field),*]
            }
        }
    };
}

exposure_measures! {
    delta, gamma, delta_adjusted_gamma, vanna, charm, vega, theta, speed, color, zomma, vomma,
    ultima,
}

/// One strike of one expiration: both sides' open interest and call, put and net exposures.
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session the snapshot belongs to.
    pub trade_date: NaiveDate,
    /// The instant priced.
    pub as_of: DateTime<Utc>,
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Calendar days from `trade_date` to `expiration`.
    pub dte: i32,
    /// Strike, dollars.
    pub strike: f64,
    /// Spot the exposures are scaled with, dollars.
    pub spot: f64,
    /// Call open interest, contracts.
    pub call_open_interest: u64,
    /// Put open interest, contracts.
    pub put_open_interest: u64,
    /// Call exposures.
    pub call: ExposureMeasures,
    /// Put exposures (dealer-signed).
    pub put: ExposureMeasures,
    /// call + put.
    pub net: ExposureMeasures,
}

/// One expiration's summary, or the aggregate of every expiration (`expiration` = `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExposureSummaryRow {
    /// Underlying symbol.
    pub underlying: String,
    /// The session the snapshot belongs to.
    pub trade_date: NaiveDate,
    /// The instant priced.
    pub as_of: DateTime<Utc>,
    /// Expiration; `None` on the aggregate row.
    pub expiration: Option<NaiveDate>,
    /// Calendar days to `expiration`; `None` on the aggregate row.
    pub dte: Option<i32>,
    /// Spot, dollars.
    pub spot: f64,
    /// Contracts whose exposures are included.
    pub contracts: u64,
    /// Σ call open interest, contracts.
    pub call_open_interest: u64,
    /// Σ put open interest, contracts.
    pub put_open_interest: u64,
    /// Call totals.
    pub call: ExposureMeasures,
    /// Put totals (dealer-signed).
    pub put: ExposureMeasures,
    /// call + put totals.
    pub net: ExposureMeasures,
    /// Re-priced gamma flip level, dollars; `None` when degenerate.
    pub flip_level: Option<f64>,
    /// Why there is no flip level; `None` when there is one.
    pub flip_degeneracy: Option<FlipDegeneracyCode>,
    /// Re-priced flip level of delta-adjusted GEX, dollars.
    pub delta_adjusted_flip_level: Option<f64>,
    /// Crossing of cumulative net GEX by strike, dollars.
    pub gamma_flip: Option<f64>,
    /// Strike of the largest call GEX.
    pub call_wall: Option<f64>,
    /// Call GEX there, dollars per 1 % move.
    pub call_wall_gex: Option<f64>,
    /// Strike of the largest |put GEX|.
    pub put_wall: Option<f64>,
    /// Put GEX there (≤ 0), dollars per 1 % move.
    pub put_wall_gex: Option<f64>,
    /// Strike of the largest |net GEX|.
    pub key_gamma_strike: Option<f64>,
    /// Net GEX there, dollars per 1 % move.
    pub key_gamma_gex: Option<f64>,
    /// Strike of the most positive net GEX.
    pub max_gamma_strike: Option<f64>,
    /// Strike of the most negative net GEX.
    pub min_gamma_strike: Option<f64>,
    /// Listed strike nearest the flip level.
    pub vol_trigger: Option<f64>,
    /// Strike of the largest |net charm exposure|.
    pub charm_pressure_strike: Option<f64>,
    /// At or above spot: strike of the largest |net vanna exposure|.
    pub vanna_resistance_strike: Option<f64>,
    /// Below spot: strike of the largest |net vanna exposure|.
    pub vanna_support_strike: Option<f64>,
    /// Max-pain strike.
    pub max_pain_strike: Option<f64>,
    /// Total payout at the max-pain strike, dollars.
    pub max_pain_usd: Option<f64>,
    /// Call GEX / |put GEX|.
    pub gex_ratio: Option<f64>,
    /// From the sign of net GEX.
    pub volatility_regime: VolatilityRegimeCode,
    /// From `gex_ratio`.
    pub positioning: PositioningCode,
    /// From the two above.
    pub directional_bias: DirectionalBiasCode,
}

impl ExposureSummaryRow {
    /// `flip_degenerate`: no flip level.
    pub fn flip_degenerate(&self) -> bool {
        self.flip_level.is_none()
    }
}

fn measure_fields(side: &MeasureColumns) -> impl Iterator<Item = Field> {
    side.names()
        .into_iter()
        .map(|name| field(name, DataType::Float64, false))
}

static EXPOSURES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields = vec![
        field(col::UNDERLYING, DataType::Utf8, false),
        field(col::TRADE_DATE, DataType::Date32, false),
        field(col::AS_OF, timestamp_type(), false),
        field(col::EXPIRATION, DataType::Date32, false),
        field(col::DTE, DataType::Int32, false),
        field(col::STRIKE, DataType::Float64, false),
        field(col::SPOT, DataType::Float64, false),
        field(col::CALL_OPEN_INTEREST, DataType::UInt64, false),
        field(col::PUT_OPEN_INTEREST, DataType::UInt64, false),
    ];
    for side in [&CALL, &PUT, &NET] {
        fields.extend(measure_fields(side));
    }
    Arc::new(Schema::new(fields))
});

/// The optional price-level columns of the summary, in schema order, with their row fields.
type LevelAccess = (&'static str, fn(&ExposureSummaryRow) -> Option<f64>);

/// Number of optional level columns after the flip columns.
const LEVEL_COUNT: usize = 17;

const SUMMARY_LEVELS: [LevelAccess; LEVEL_COUNT] = [
    (scol::DELTA_ADJUSTED_FLIP_LEVEL, |r| {
        r.delta_adjusted_flip_level
    }),
    (scol::GAMMA_FLIP, |r| r.gamma_flip),
    (scol::CALL_WALL, |r| r.call_wall),
    (scol::CALL_WALL_GEX, |r| r.call_wall_gex),
    (scol::PUT_WALL, |r| r.put_wall),
    (scol::PUT_WALL_GEX, |r| r.put_wall_gex),
    (scol::KEY_GAMMA_STRIKE, |r| r.key_gamma_strike),
    (scol::KEY_GAMMA_GEX, |r| r.key_gamma_gex),
    (scol::MAX_GAMMA_STRIKE, |r| r.max_gamma_strike),
    (scol::MIN_GAMMA_STRIKE, |r| r.min_gamma_strike),
    (scol::VOL_TRIGGER, |r| r.vol_trigger),
    (scol::CHARM_PRESSURE_STRIKE, |r| r.charm_pressure_strike),
    (scol::VANNA_RESISTANCE_STRIKE, |r| r.vanna_resistance_strike),
    (scol::VANNA_SUPPORT_STRIKE, |r| r.vanna_support_strike),
    (scol::MAX_PAIN_STRIKE, |r| r.max_pain_strike),
    (scol::MAX_PAIN_USD, |r| r.max_pain_usd),
    (scol::GEX_RATIO, |r| r.gex_ratio),
];

static SUMMARY_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let mut fields = vec![
        field(scol::UNDERLYING, DataType::Utf8, false),
        field(scol::TRADE_DATE, DataType::Date32, false),
        field(scol::AS_OF, timestamp_type(), false),
        field(scol::EXPIRATION, DataType::Date32, true),
        field(scol::DTE, DataType::Int32, true),
        field(scol::SPOT, DataType::Float64, false),
        field(scol::CONTRACTS, DataType::UInt64, false),
        field(scol::CALL_OPEN_INTEREST, DataType::UInt64, false),
        field(scol::PUT_OPEN_INTEREST, DataType::UInt64, false),
    ];
    for side in [&CALL, &PUT, &NET] {
        fields.extend(measure_fields(side));
    }
    fields.push(field(scol::FLIP_LEVEL, DataType::Float64, true));
    fields.push(field(scol::FLIP_DEGENERATE, DataType::Boolean, false));
    fields.push(field(scol::FLIP_DEGENERACY, DataType::Utf8, true));
    for (name, _) in SUMMARY_LEVELS {
        fields.push(field(name, DataType::Float64, true));
    }
    fields.push(field(scol::VOLATILITY_REGIME, DataType::Utf8, false));
    fields.push(field(scol::POSITIONING, DataType::Utf8, false));
    fields.push(field(scol::DIRECTIONAL_BIAS, DataType::Utf8, false));
    Arc::new(Schema::new(fields))
});

/// The Arrow schema of the `exposures` dataset (shared, built once).
pub fn exposures_schema() -> SchemaRef {
    Arc::clone(&EXPOSURES_SCHEMA)
}

/// The Arrow schema of the `exposure_summary` dataset (shared, built once).
pub fn exposure_summary_schema() -> SchemaRef {
    Arc::clone(&SUMMARY_SCHEMA)
}

fn measure_arrays<R>(rows: &[R], side: impl Fn(&R) -> &ExposureMeasures) -> Vec<ArrayRef> {
    (0..MEASURE_COUNT)
        .map(|m| f64s(rows.iter().map(|r| side(r).to_array()[m])))
        .collect()
}

snapshot_row!(ExposureRow, Exposures, col::ALL, exposures_schema, build: ExposureRow::build_batch, read: read_exposures);

impl ExposureRow {
    fn build_batch(rows: &[Self]) -> Result<RecordBatch, SchemaError> {
        let mut columns = vec![
            utf8(rows.iter().map(|r| r.underlying.as_str())),
            dates(rows.iter().map(|r| r.trade_date)),
            timestamps(rows.iter().map(|r| r.as_of)),
            dates(rows.iter().map(|r| r.expiration)),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.dte))) as ArrayRef,
            f64s(rows.iter().map(|r| r.strike)),
            f64s(rows.iter().map(|r| r.spot)),
            u64s(rows.iter().map(|r| r.call_open_interest)),
            u64s(rows.iter().map(|r| r.put_open_interest)),
        ];
        columns.extend(measure_arrays(rows, |r| &r.call));
        columns.extend(measure_arrays(rows, |r| &r.put));
        columns.extend(measure_arrays(rows, |r| &r.net));
        Ok(RecordBatch::try_new(exposures_schema(), columns)?)
    }
}

/// One underlying's `exposures` batch written column by column, one expiration at a time: for a
/// producer that has the strike profile at hand (the compute worker), without an
/// [`ExposureRow`] (and its copy of the symbol) per strike. The columns every row shares
/// (underlying, trade date, `as_of`, spot) are given once; `dte` and `net` are derived here
/// (days between the dates; call + put), so they hold by construction.
#[derive(Debug, Clone)]
pub struct ExposureBatchBuilder {
    underlying: String,
    trade_date: NaiveDate,
    as_of: DateTime<Utc>,
    spot: f64,
    expiration: Vec<i32>,
    dte: Vec<i32>,
    strike: Vec<f64>,
    call_open_interest: Vec<u64>,
    put_open_interest: Vec<u64>,
    /// Call, put and net measures, in schema order.
    measures: [Vec<f64>; 3 * MEASURE_COUNT],
}

impl ExposureBatchBuilder {
    /// An empty batch of `underlying` priced at `as_of` with `spot`, room for `strikes` rows.
    pub fn new(
        underlying: &str,
        trade_date: NaiveDate,
        as_of: DateTime<Utc>,
        spot: f64,
        strikes: usize,
    ) -> Self {
        Self {
            underlying: underlying.to_owned(),
            trade_date,
            as_of,
            spot,
            expiration: Vec::with_capacity(strikes),
            dte: Vec::with_capacity(strikes),
            strike: Vec::with_capacity(strikes),
            call_open_interest: Vec::with_capacity(strikes),
            put_open_interest: Vec::with_capacity(strikes),
            measures: std::array::from_fn(|_| Vec::with_capacity(strikes)),
        }
    }

    /// Appends the `rows` strikes of one expiration, column by column (each column in one pass,
    /// without a length check per value): row `i` has strike `strike(i)`, the (call, put) open
    /// interest `open_interest(i)`, and the call and put measures `call(i)` and `put(i)` in
    /// schema order ([`ExposureMeasures::to_array`]'s); its net measures are their sums.
    pub fn push_expiration<'a>(
        &mut self,
        expiration: NaiveDate,
        rows: usize,
        strike: impl Fn(usize) -> f64,
        open_interest: impl Fn(usize) -> (u64, u64),
        call: impl Fn(usize) -> &'a [f64; MEASURE_COUNT],
        put: impl Fn(usize) -> &'a [f64; MEASURE_COUNT],
    ) {
        let days = date_to_days(expiration);
        let dte = calendar_dte(self.trade_date, expiration);
        self.expiration.extend(std::iter::repeat_n(days, rows));
        self.dte.extend(std::iter::repeat_n(dte, rows));
        self.strike.extend((0..rows).map(&strike));
        self.call_open_interest
            .extend((0..rows).map(|i| open_interest(i).0));
        self.put_open_interest
            .extend((0..rows).map(|i| open_interest(i).1));
        let (calls, rest) = self.measures.split_at_mut(MEASURE_COUNT);
        let (puts, nets) = rest.split_at_mut(MEASURE_COUNT);
        for m in 0..MEASURE_COUNT {
            calls[m].extend((0..rows).map(|i| call(i)[m]));
            puts[m].extend((0..rows).map(|i| put(i)[m]));
            nets[m].extend((0..rows).map(|i| call(i)[m] + put(i)[m]));
        }
    }

    /// Rows appended so far.
    pub fn len(&self) -> usize {
        self.strike.len()
    }

    /// True before the first [`push`](Self::push).
    pub fn is_empty(&self) -> bool {
        self.strike.is_empty()
    }

    /// The batch in the canonical schema. As [`ExposureRow::to_batch_trusted`], the dataset's
    /// rules are checked again in debug builds only.
    pub fn finish(self) -> Result<RecordBatch, SchemaError> {
        let rows = self.len();
        let mut columns: Vec<ArrayRef> =
            snapshot_identity_columns(&self.underlying, self.trade_date, self.as_of, rows).into();
        columns.extend([
            Arc::new(Date32Array::from(self.expiration)) as ArrayRef,
            Arc::new(Int32Array::from(self.dte)),
            Arc::new(Float64Array::from(self.strike)),
            Arc::new(Float64Array::from(vec![self.spot; rows])),
            Arc::new(UInt64Array::from(self.call_open_interest)),
            Arc::new(UInt64Array::from(self.put_open_interest)),
        ]);
        columns.extend(
            self.measures
                .into_iter()
                .map(|values| Arc::new(Float64Array::from(values)) as ArrayRef),
        );
        let batch = RecordBatch::try_new(exposures_schema(), columns)?;
        if cfg!(debug_assertions) {
            read_exposures(&batch, false)?;
        }
        Ok(batch)
    }
}

snapshot_row!(ExposureSummaryRow, ExposureSummary, scol::ALL, exposure_summary_schema, build: ExposureSummaryRow::build_batch, read: read_summary);

impl ExposureSummaryRow {
    fn build_batch(rows: &[Self]) -> Result<RecordBatch, SchemaError> {
        let mut columns = vec![
            utf8(rows.iter().map(|r| r.underlying.as_str())),
            dates(rows.iter().map(|r| r.trade_date)),
            timestamps(rows.iter().map(|r| r.as_of)),
            Arc::new(
                rows.iter()
                    .map(|r| r.expiration.map(date_to_days))
                    .collect::<Date32Array>(),
            ) as ArrayRef,
            Arc::new(rows.iter().map(|r| r.dte).collect::<Int32Array>()),
            f64s(rows.iter().map(|r| r.spot)),
            u64s(rows.iter().map(|r| r.contracts)),
            u64s(rows.iter().map(|r| r.call_open_interest)),
            u64s(rows.iter().map(|r| r.put_open_interest)),
        ];
        columns.extend(measure_arrays(rows, |r| &r.call));
        columns.extend(measure_arrays(rows, |r| &r.put));
        columns.extend(measure_arrays(rows, |r| &r.net));
        columns.push(f64s_opt(rows.iter().map(|r| r.flip_level)));
        columns.push(bools(rows.iter().map(|r| r.flip_level.is_none())));
        columns.push(utf8_opt(
            rows.iter()
                .map(|r| r.flip_degeneracy.map(FlipDegeneracyCode::as_str)),
        ));
        for (_, get) in SUMMARY_LEVELS {
            columns.push(f64s_opt(rows.iter().map(get)));
        }
        columns.push(utf8(rows.iter().map(|r| r.volatility_regime.as_str())));
        columns.push(utf8(rows.iter().map(|r| r.positioning.as_str())));
        columns.push(utf8(rows.iter().map(|r| r.directional_bias.as_str())));
        Ok(RecordBatch::try_new(exposure_summary_schema(), columns)?)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading and validation.

/// The measure columns of one side.
struct MeasureArrays<'a> {
    names: [&'static str; MEASURE_COUNT],
    arrays: Vec<&'a Float64Array>,
}

impl<'a> MeasureArrays<'a> {
    fn new(c: &SnapshotColumns<'a>, side: &MeasureColumns) -> Result<Self, SchemaError> {
        let names = side.names();
        Ok(Self {
            names,
            arrays: names
                .iter()
                .map(|name| c.f64(name))
                .collect::<Result<_, _>>()?,
        })
    }

    fn read(&self, c: &SnapshotColumns<'a>, row: usize) -> Result<ExposureMeasures, SchemaError> {
        let mut values = [0.0; MEASURE_COUNT];
        for ((value, array), name) in values.iter_mut().zip(&self.arrays).zip(self.names) {
            *value = c.finite(name, row, array.value(row))?;
        }
        Ok(ExposureMeasures::from_array(values))
    }
}

/// `net` must be `call + put` (to rounding): catches a writer that mixed up the sides.
fn check_net(
    c: &SnapshotColumns<'_>,
    row: usize,
    call: &ExposureMeasures,
    put: &ExposureMeasures,
    net: &ExposureMeasures,
) -> Result<(), SchemaError> {
    let (call, put, net) = (call.to_array(), put.to_array(), net.to_array());
    for (m, name) in NET.names().into_iter().enumerate() {
        let sum = call[m] + put[m];
        if (net[m] - sum).abs() > 1e-9 * (call[m].abs() + put[m].abs()) + f64::MIN_POSITIVE {
            return Err(c.invalid(name, row, format!("{} is not call + put = {sum}", net[m])));
        }
    }
    Ok(())
}

fn read_exposures(batch: &RecordBatch, keep: bool) -> Result<Vec<ExposureRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::Exposures, batch);
    let underlying = c.str(col::UNDERLYING)?;
    let trade_date = c.date(col::TRADE_DATE)?;
    let as_of = c.timestamp(col::AS_OF)?;
    let expiration = c.date(col::EXPIRATION)?;
    let dte = c.i32(col::DTE)?;
    let strike = c.f64(col::STRIKE)?;
    let spot = c.f64(col::SPOT)?;
    let call_oi = c.u64(col::CALL_OPEN_INTEREST)?;
    let put_oi = c.u64(col::PUT_OPEN_INTEREST)?;
    let call = MeasureArrays::new(&c, &CALL)?;
    let put = MeasureArrays::new(&c, &PUT)?;
    let net = MeasureArrays::new(&c, &NET)?;
    read_rows(batch.num_rows(), keep, |row| {
        let trade_date = c.date_value(col::TRADE_DATE, trade_date, row)?;
        let expiration = c.date_value(col::EXPIRATION, expiration, row)?;
        let dte = dte.value(row);
        c.check_dte(col::DTE, row, trade_date, expiration, dte)?;
        let (call, put, net) = (call.read(&c, row)?, put.read(&c, row)?, net.read(&c, row)?);
        check_net(&c, row, &call, &put, &net)?;
        Ok(ExposureRow {
            underlying: c.symbol(col::UNDERLYING, underlying, row)?,
            trade_date,
            as_of: c.timestamp_value(col::AS_OF, as_of, row)?,
            expiration,
            dte,
            strike: c.positive(col::STRIKE, row, strike.value(row))?,
            spot: c.positive(col::SPOT, row, spot.value(row))?,
            call_open_interest: call_oi.value(row),
            put_open_interest: put_oi.value(row),
            call,
            put,
            net,
        })
    })
}

fn read_summary(batch: &RecordBatch, keep: bool) -> Result<Vec<ExposureSummaryRow>, SchemaError> {
    let c = SnapshotColumns::new(SnapshotDataset::ExposureSummary, batch);
    let underlying = c.str(scol::UNDERLYING)?;
    let trade_date = c.date(scol::TRADE_DATE)?;
    let as_of = c.timestamp(scol::AS_OF)?;
    let expiration = c.date(scol::EXPIRATION)?;
    let dte = c.i32(scol::DTE)?;
    let spot = c.f64(scol::SPOT)?;
    let contracts = c.u64(scol::CONTRACTS)?;
    let call_oi = c.u64(scol::CALL_OPEN_INTEREST)?;
    let put_oi = c.u64(scol::PUT_OPEN_INTEREST)?;
    let call = MeasureArrays::new(&c, &CALL)?;
    let put = MeasureArrays::new(&c, &PUT)?;
    let net = MeasureArrays::new(&c, &NET)?;
    let flip_level = c.f64(scol::FLIP_LEVEL)?;
    let flip_degenerate = c.bool(scol::FLIP_DEGENERATE)?;
    let flip_degeneracy = c.str(scol::FLIP_DEGENERACY)?;
    let levels: Vec<(&'static str, &Float64Array)> = SUMMARY_LEVELS
        .iter()
        .map(|(name, _)| c.f64(name).map(|a| (*name, a)))
        .collect::<Result<_, _>>()?;
    let regime = c.str(scol::VOLATILITY_REGIME)?;
    let positioning = c.str(scol::POSITIONING)?;
    let bias = c.str(scol::DIRECTIONAL_BIAS)?;
    read_rows(batch.num_rows(), keep, |row| {
        let trade_date = c.date_value(scol::TRADE_DATE, trade_date, row)?;
        let expiration = opt(expiration, row, || {
            c.date_value(scol::EXPIRATION, expiration, row)
        })
        .transpose()?;
        let dte = opt(dte, row, || dte.value(row));
        match (expiration, dte) {
            (Some(e), Some(d)) => c.check_dte(scol::DTE, row, trade_date, e, d)?,
            (None, None) => {}
            _ => {
                return Err(c.invalid(
                    scol::DTE,
                    row,
                    "expiration and dte must be both present or both null (aggregate row)",
                ));
            }
        }
        let (call, put, net) = (call.read(&c, row)?, put.read(&c, row)?, net.read(&c, row)?);
        check_net(&c, row, &call, &put, &net)?;
        let flip = opt(flip_level, row, || {
            c.positive(scol::FLIP_LEVEL, row, flip_level.value(row))
        })
        .transpose()?;
        if flip_degenerate.is_null(row) || flip_degenerate.value(row) != flip.is_none() {
            return Err(c.invalid(
                scol::FLIP_DEGENERATE,
                row,
                "must be true exactly when flip_level is null",
            ));
        }
        let degeneracy = opt(flip_degeneracy, row, || {
            c.code::<FlipDegeneracyCode>(scol::FLIP_DEGENERACY, flip_degeneracy, row)
        })
        .transpose()?;
        if degeneracy.is_some() == flip.is_some() {
            return Err(c.invalid(
                scol::FLIP_DEGENERACY,
                row,
                "a reason is given exactly when there is no flip level",
            ));
        }
        let mut values = [None; LEVEL_COUNT];
        for (value, (name, array)) in values.iter_mut().zip(&levels) {
            *value = opt(*array, row, || {
                let v = array.value(row);
                // GEX values carry a sign; every other level is a price or a ratio.
                if name.ends_with("_gex_usd_per_pct") {
                    c.finite(name, row, v)
                } else if *name == scol::MAX_PAIN_USD || *name == scol::GEX_RATIO {
                    c.non_negative(name, row, v)
                } else {
                    c.positive(name, row, v)
                }
            })
            .transpose()?;
        }
        let [
            delta_adjusted_flip_level,
            gamma_flip,
            call_wall,
            call_wall_gex,
            put_wall,
            put_wall_gex,
            key_gamma_strike,
            key_gamma_gex,
            max_gamma_strike,
            min_gamma_strike,
            vol_trigger,
            charm_pressure_strike,
            vanna_resistance_strike,
            vanna_support_strike,
            max_pain_strike,
            max_pain_usd,
            gex_ratio,
        ] = values;
        for (level, exposure, name) in [
            (call_wall, call_wall_gex, scol::CALL_WALL_GEX),
            (put_wall, put_wall_gex, scol::PUT_WALL_GEX),
            (key_gamma_strike, key_gamma_gex, scol::KEY_GAMMA_GEX),
            (max_pain_strike, max_pain_usd, scol::MAX_PAIN_USD),
        ] {
            if level.is_some() != exposure.is_some() {
                return Err(c.invalid(
                    name,
                    row,
                    "a level and its value must be both present or both null",
                ));
            }
        }
        Ok(ExposureSummaryRow {
            underlying: c.symbol(scol::UNDERLYING, underlying, row)?,
            trade_date,
            as_of: c.timestamp_value(scol::AS_OF, as_of, row)?,
            expiration,
            dte,
            spot: c.positive(scol::SPOT, row, spot.value(row))?,
            contracts: contracts.value(row),
            call_open_interest: call_oi.value(row),
            put_open_interest: put_oi.value(row),
            call,
            put,
            net,
            flip_level: flip,
            flip_degeneracy: degeneracy,
            delta_adjusted_flip_level,
            gamma_flip,
            call_wall,
            call_wall_gex,
            put_wall,
            put_wall_gex,
            key_gamma_strike,
            key_gamma_gex,
            max_gamma_strike,
            min_gamma_strike,
            vol_trigger,
            charm_pressure_strike,
            vanna_resistance_strike,
            vanna_support_strike,
            max_pain_strike,
            max_pain_usd,
            gex_ratio,
            volatility_regime: c.code(scol::VOLATILITY_REGIME, regime, row)?,
            positioning: c.code(scol::POSITIONING, positioning, row)?,
            directional_bias: c.code(scol::DIRECTIONAL_BIAS, bias, row)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_support::{invalid_column, rejects};

    #[test]
    fn schemas_follow_the_column_constants() {
        let names =
            |s: SchemaRef| -> Vec<String> { s.fields().iter().map(|f| f.name().clone()).collect() };
        assert_eq!(names(exposures_schema()), col::ALL);
        assert_eq!(names(exposure_summary_schema()), scol::ALL);
        assert_eq!(col::ALL.len(), 9 + 3 * MEASURE_COUNT);
        assert_eq!(CALL.gamma, "call_gamma_usd_per_pct");
        assert_eq!(NET.ultima, "net_ultima_usd_per_vol_pt_cubed");
    }

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    fn as_of() -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_100_000, 0).unwrap()
    }

    fn measures(scale: f64) -> ExposureMeasures {
        ExposureMeasures::from_array(std::array::from_fn(|i| scale * (i as f64 - 5.5)))
    }

    fn strike_rows() -> Vec<ExposureRow> {
        [95.0, 100.0, 105.5]
            .into_iter()
            .enumerate()
            .map(|(i, strike)| {
                let call = measures(1.0e6 * (i as f64 + 1.0));
                let put = measures(-7.0e5 * (i as f64 + 0.5));
                let net = ExposureMeasures::from_array(std::array::from_fn(|m| {
                    call.to_array()[m] + put.to_array()[m]
                }));
                ExposureRow {
                    underlying: "SPY".to_owned(),
                    trade_date: day(20),
                    as_of: as_of(),
                    expiration: day(27),
                    dte: 7,
                    strike,
                    spot: 101.25,
                    call_open_interest: 1_000 * i as u64,
                    put_open_interest: 2_500,
                    call,
                    put,
                    net,
                }
            })
            .collect()
    }

    fn summary_rows() -> Vec<ExposureSummaryRow> {
        let call = measures(3.0e6);
        let put = measures(-1.0e6);
        let net = ExposureMeasures::from_array(std::array::from_fn(|m| {
            call.to_array()[m] + put.to_array()[m]
        }));
        let per_expiration = ExposureSummaryRow {
            underlying: "SPY".to_owned(),
            trade_date: day(20),
            as_of: as_of(),
            expiration: Some(day(27)),
            dte: Some(7),
            spot: 101.25,
            contracts: 6,
            call_open_interest: 3_000,
            put_open_interest: 7_500,
            call,
            put,
            net,
            flip_level: Some(99.75),
            flip_degeneracy: None,
            delta_adjusted_flip_level: Some(99.5),
            gamma_flip: Some(98.0),
            call_wall: Some(105.5),
            call_wall_gex: Some(3.0e6),
            put_wall: Some(95.0),
            put_wall_gex: Some(-1.5e6),
            key_gamma_strike: Some(105.5),
            key_gamma_gex: Some(2.0e6),
            max_gamma_strike: Some(105.5),
            min_gamma_strike: Some(95.0),
            vol_trigger: Some(100.0),
            charm_pressure_strike: Some(100.0),
            vanna_resistance_strike: Some(105.5),
            vanna_support_strike: Some(95.0),
            max_pain_strike: Some(100.0),
            max_pain_usd: Some(1.25e6),
            gex_ratio: Some(3.0),
            volatility_regime: VolatilityRegimeCode::Suppressed,
            positioning: PositioningCode::CallDominated,
            directional_bias: DirectionalBiasCode::Bullish,
        };
        let aggregate = ExposureSummaryRow {
            expiration: None,
            dte: None,
            flip_level: None,
            flip_degeneracy: Some(FlipDegeneracyCode::AlwaysPositive),
            vol_trigger: None,
            gex_ratio: None,
            ..per_expiration.clone()
        };
        vec![aggregate, per_expiration]
    }

    #[test]
    fn rows_round_trip() {
        let batch = ExposureRow::to_batch(&strike_rows()).unwrap();
        assert_eq!(batch.num_columns(), col::ALL.len());
        assert_eq!(ExposureRow::from_batch(&batch).unwrap(), strike_rows());
        let batch = ExposureSummaryRow::to_batch(&summary_rows()).unwrap();
        let back = ExposureSummaryRow::from_batch(&batch).unwrap();
        assert_eq!(back, summary_rows());
        assert!(back[0].flip_degenerate() && !back[1].flip_degenerate());
    }

    #[test]
    fn missing_nullable_columns_read_as_null_and_extra_columns_are_ignored() {
        let batch = ExposureSummaryRow::to_batch(&summary_rows()).unwrap();
        let schema = batch.schema();
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| schema.field(i).name() != scol::GAMMA_FLIP)
            .collect();
        let older = batch.project(&keep).unwrap();
        let mut extra_fields: Vec<Field> = older
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        extra_fields.push(Field::new("added_later", DataType::Float64, true));
        let mut extra_columns = older.columns().to_vec();
        extra_columns.push(f64s([1.0, 2.0]));
        let newer =
            RecordBatch::try_new(Arc::new(Schema::new(extra_fields)), extra_columns).unwrap();
        let rows = ExposureSummaryRow::from_batch(&newer).unwrap();
        assert!(rows.iter().all(|r| r.gamma_flip.is_none()));
        assert_eq!(rows[1].call_wall, Some(105.5));
        // A required column missing is an error naming it.
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| schema.field(i).name() != scol::SPOT)
            .collect();
        let err = ExposureSummaryRow::from_batch(&batch.project(&keep).unwrap()).unwrap_err();
        assert_eq!(invalid_column(err), scol::SPOT);
    }

    #[test]
    fn bad_values_are_rejected_with_the_column() {
        rejects(
            &strike_rows(),
            ExposureRow::to_batch,
            |rows| {
                rows[1].call.gamma = f64::NAN;
            },
            CALL.gamma,
        );
        rejects(
            &strike_rows(),
            ExposureRow::to_batch,
            |rows| {
                rows[0].net.vanna += 1.0e3;
            },
            NET.vanna,
        );
        rejects(
            &strike_rows(),
            ExposureRow::to_batch,
            |rows| {
                rows[2].dte = 6;
            },
            col::DTE,
        );
        rejects(
            &strike_rows(),
            ExposureRow::to_batch,
            |rows| {
                rows[0].strike = 0.0;
            },
            col::STRIKE,
        );

        rejects(
            &summary_rows(),
            ExposureSummaryRow::to_batch,
            |rows| {
                rows[0].dte = Some(7);
            },
            scol::DTE,
        );
        rejects(
            &summary_rows(),
            ExposureSummaryRow::to_batch,
            |rows| {
                rows[1].flip_degeneracy = Some(FlipDegeneracyCode::NoExposure);
            },
            scol::FLIP_DEGENERACY,
        );
        rejects(
            &summary_rows(),
            ExposureSummaryRow::to_batch,
            |rows| {
                rows[1].put_wall_gex = None;
            },
            scol::PUT_WALL_GEX,
        );
        rejects(
            &summary_rows(),
            ExposureSummaryRow::to_batch,
            |rows| {
                rows[1].gex_ratio = Some(-1.0);
            },
            scol::GEX_RATIO,
        );
        // An unknown code in a batch written by someone else.
        let batch = ExposureSummaryRow::to_batch(&summary_rows()).unwrap();
        let index = batch.schema().index_of(scol::POSITIONING).unwrap();
        let mut columns = batch.columns().to_vec();
        columns[index] = utf8(["BALANCED", "SIDEWAYS"]);
        let bad = RecordBatch::try_new(batch.schema(), columns).unwrap();
        let err = ExposureSummaryRow::from_batch(&bad).unwrap_err();
        assert!(err.to_string().contains("SIDEWAYS"), "{err}");
        // flip_degenerate disagreeing with flip_level.
        let index = batch.schema().index_of(scol::FLIP_DEGENERATE).unwrap();
        let mut columns = batch.columns().to_vec();
        columns[index] = bools([true, true]);
        let bad = RecordBatch::try_new(batch.schema(), columns).unwrap();
        assert_eq!(
            invalid_column(ExposureSummaryRow::from_batch(&bad).unwrap_err()),
            scol::FLIP_DEGENERATE
        );
    }

    #[test]
    fn measures_round_trip_through_arrays() {
        let values: [f64; MEASURE_COUNT] = std::array::from_fn(|i| i as f64 + 0.5);
        let m = ExposureMeasures::from_array(values);
        assert_eq!(m.delta, 0.5);
        assert_eq!(m.ultima, 11.5);
        assert_eq!(m.to_array(), values);
    }
}
