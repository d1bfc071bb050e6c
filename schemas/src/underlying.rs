//! The underlying datasets: `underlying_ticks` (intraday) and `daily_bars`.

use std::sync::{Arc, LazyLock};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::{daily_bars as bar, underlying_ticks as tick};
use crate::error::SchemaError;
use crate::table::{
    Columns, Dataset, Record, dates, f64s, f64s_opt, field, opt, sealed::RecordImpl,
    timestamp_type, timestamps, u64s, utf8,
};

/// One top-of-book or trade update of an underlying. Units: see
/// [`crate::columns::underlying_ticks`].
#[derive(Debug, Clone, PartialEq)]
pub struct UnderlyingTick {
    /// Underlying symbol; the bus key.
    pub symbol: String,
    /// When the tick was observed.
    pub tick_time: DateTime<Utc>,
    /// Best bid, dollars; `None` for cash indices.
    pub bid: Option<f64>,
    /// Best ask, dollars; `None` for cash indices.
    pub ask: Option<f64>,
    /// Last trade price or index level, dollars.
    pub last: f64,
    /// Size of the last trade, shares.
    pub last_size: u64,
    /// Shares traded this session so far.
    pub volume: u64,
}

/// One session of an underlying. Units: see [`crate::columns::daily_bars`].
#[derive(Debug, Clone, PartialEq)]
pub struct DailyBar {
    /// Underlying symbol; the bus key.
    pub symbol: String,
    /// The session.
    pub date: NaiveDate,
    /// Open, dollars, as traded.
    pub open: f64,
    /// High, dollars, as traded.
    pub high: f64,
    /// Low, dollars, as traded.
    pub low: f64,
    /// Close, dollars, as traded.
    pub close: f64,
    /// Shares traded.
    pub volume: u64,
    /// Split- and dividend-adjusted close, dollars.
    pub adj_close: f64,
}

static TICK_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(tick::SYMBOL, DataType::Utf8, false),
        field(tick::TICK_TIME, timestamp_type(), false),
        field(tick::BID, DataType::Float64, true),
        field(tick::ASK, DataType::Float64, true),
        field(tick::LAST, DataType::Float64, false),
        field(tick::LAST_SIZE, DataType::UInt64, false),
        field(tick::VOLUME, DataType::UInt64, false),
    ]))
});

static BAR_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(bar::SYMBOL, DataType::Utf8, false),
        field(bar::DATE, DataType::Date32, false),
        field(bar::OPEN, DataType::Float64, false),
        field(bar::HIGH, DataType::Float64, false),
        field(bar::LOW, DataType::Float64, false),
        field(bar::CLOSE, DataType::Float64, false),
        field(bar::VOLUME, DataType::UInt64, false),
        field(bar::ADJ_CLOSE, DataType::Float64, false),
    ]))
});

/// The Arrow schema of `underlying_ticks`.
pub fn underlying_ticks_schema() -> SchemaRef {
    Arc::clone(&TICK_SCHEMA)
}

/// The Arrow schema of `daily_bars`.
pub fn daily_bars_schema() -> SchemaRef {
    Arc::clone(&BAR_SCHEMA)
}

impl Record for UnderlyingTick {
    const DATASET: Dataset = Dataset::UnderlyingTicks;

    fn schema() -> SchemaRef {
        underlying_ticks_schema()
    }
}

impl RecordImpl for UnderlyingTick {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            timestamps(rows.iter().map(|r| r.tick_time)),
            f64s_opt(rows.iter().map(|r| r.bid)),
            f64s_opt(rows.iter().map(|r| r.ask)),
            f64s(rows.iter().map(|r| r.last)),
            u64s(rows.iter().map(|r| r.last_size)),
            u64s(rows.iter().map(|r| r.volume)),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::UnderlyingTicks, batch);
        c.symbol(tick::SYMBOL)?;
        c.timestamp_in_range(tick::TICK_TIME)?;
        c.non_negative(tick::BID)?;
        c.non_negative(tick::ASK)?;
        c.not_above(tick::BID, tick::ASK)?;
        c.positive(tick::LAST)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::UnderlyingTicks, batch);
        let symbol = c.str(tick::SYMBOL)?;
        let tick_time = c.timestamp(tick::TICK_TIME)?;
        let bid = c.f64(tick::BID)?;
        let ask = c.f64(tick::ASK)?;
        let last = c.f64(tick::LAST)?;
        let last_size = c.u64(tick::LAST_SIZE)?;
        let volume = c.u64(tick::VOLUME)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(UnderlyingTick {
                    symbol: symbol.value(i).to_owned(),
                    tick_time: c.read_timestamp(tick::TICK_TIME, tick_time, i)?,
                    bid: opt(bid, i, || bid.value(i)),
                    ask: opt(ask, i, || ask.value(i)),
                    last: last.value(i),
                    last_size: last_size.value(i),
                    volume: volume.value(i),
                })
            })
            .collect()
    }
}

impl Record for DailyBar {
    const DATASET: Dataset = Dataset::DailyBars;

    fn schema() -> SchemaRef {
        daily_bars_schema()
    }
}

impl RecordImpl for DailyBar {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            dates(rows.iter().map(|r| r.date)),
            f64s(rows.iter().map(|r| r.open)),
            f64s(rows.iter().map(|r| r.high)),
            f64s(rows.iter().map(|r| r.low)),
            f64s(rows.iter().map(|r| r.close)),
            u64s(rows.iter().map(|r| r.volume)),
            f64s(rows.iter().map(|r| r.adj_close)),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::DailyBars, batch);
        c.symbol(bar::SYMBOL)?;
        c.date_in_range(bar::DATE)?;
        for price in [bar::OPEN, bar::HIGH, bar::LOW, bar::CLOSE, bar::ADJ_CLOSE] {
            c.positive(price)?;
        }
        c.not_above(bar::LOW, bar::OPEN)?;
        c.not_above(bar::LOW, bar::CLOSE)?;
        c.not_above(bar::OPEN, bar::HIGH)?;
        c.not_above(bar::CLOSE, bar::HIGH)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::DailyBars, batch);
        let symbol = c.str(bar::SYMBOL)?;
        let date = c.date(bar::DATE)?;
        let open = c.f64(bar::OPEN)?;
        let high = c.f64(bar::HIGH)?;
        let low = c.f64(bar::LOW)?;
        let close = c.f64(bar::CLOSE)?;
        let volume = c.u64(bar::VOLUME)?;
        let adj_close = c.f64(bar::ADJ_CLOSE)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(DailyBar {
                    symbol: symbol.value(i).to_owned(),
                    date: c.read_date(bar::DATE, date, i)?,
                    open: open.value(i),
                    high: high.value(i),
                    low: low.value(i),
                    close: close.value(i),
                    volume: volume.value(i),
                    adj_close: adj_close.value(i),
                })
            })
            .collect()
    }
}
