//! optics-schemas: the one place that defines data — every inbound dataset's columns, units,
//! Arrow schema and typed row, and the bus messages that carry them. No I/O beyond byte
//! buffers, no business logic: other crates import these definitions instead of writing column
//! names or wire formats of their own.
//!
//! # Datasets
//!
//! | dataset ([`Dataset`]) | row type | grain | key |
//! | --- | --- | --- | --- |
//! | `option_quotes` | [`OptionQuote`] | one contract's quote at one instant | underlying |
//! | `underlying_ticks` | [`UnderlyingTick`] | one top-of-book / trade update | symbol |
//! | `daily_bars` | [`DailyBar`] | one underlying × session | symbol |
//! | `earnings` | [`EarningsEvent`] | one report (scheduled or past) | symbol or `*` |
//! | `dividends` | [`Dividend`] | one cash dividend | symbol or `*` |
//! | `borrow_rates` | [`BorrowRate`] | one underlying × date | symbol or `*` |
//! | `economic_calendar` | [`EconomicEvent`] | one macro release | always `*` |
//! | `companies` | [`Company`] | one underlying of the universe | symbol or `*` |
//!
//! The column names, with meaning and unit of each, are the constants of [`columns`]. Units in
//! one line: prices in **dollars** (option premiums per share), rates and ratios as
//! **decimals**, sizes/volume/open interest in **contracts** for options and **shares** for
//! underlyings, dates as ISO dates (Arrow `Date32`, New York trading days), timestamps in **UTC
//! microseconds** (Arrow `Timestamp(Microsecond, "UTC")`). Small enums ([`OptionType`],
//! [`SettlementStyle`], …) are `Utf8` code columns (`C`/`P`, `AM`/`PM`, …). Option symbols are
//! OCC's ([`OccSymbol`], [`occ_symbol`]). Open interest carries the trade date it applies to
//! (`oi_date`), since OCC publishes it once a day for the previous session; session volume is
//! cumulative within the session.
//!
//! # Validation
//!
//! Both directions validate ([`Record::to_batch`], [`Record::from_batch`],
//! [`Dataset::validate_batch`]): NaN, infinite or negative prices, bid above ask, empty or
//! malformed symbols, OCC symbols that disagree with their expiration/type/strike columns,
//! unknown enum codes, implausible dates (outside 1900–2199), and nulls in non-nullable columns
//! are rejected with a [`SchemaError`] naming the dataset, the column and the row. Batches are
//! read by column *name*: unknown extra columns are dropped, a missing nullable column reads as
//! nulls, so producers and consumers can be upgraded independently.
//!
//! # Snapshots
//!
//! The datasets compute publishes ([`SnapshotDataset`]: `chain`, `exposures`,
//! `exposure_summary`, `flow`, `flow_aggregates`, `vol_daily`, `vol_term`) have row types with
//! the same `to_batch` / `to_batch_trusted` / `from_batch` and the same rules. Every dataset,
//! inbound or snapshot, is read through the one codec of [`snapshot`]: one conforming by
//! column name, one typed-column accessor, and one set of errors naming the dataset
//! ([`DatasetId`]), column and row: [`SchemaError::MissingColumn`], [`SchemaError::ColumnType`],
//! [`SchemaError::UnexpectedNull`], [`SchemaError::InvalidValue`]. Strikes
//! used as keys (grouping, maps, joins) are [`StrikeKey`]s: exact thousandths of a dollar, so
//! adjusted strikes a fraction of a cent apart (33.375 and 33.37) stay distinct.
//!
//! # Bus messages
//!
//! A [`Message`] is either a [`DataBatch`] (one dataset's validated batch and its key, the
//! underlying symbol, so a Kafka partition keeps one underlying's messages in order) or a
//! [`SnapshotEvent`] (compute published a snapshot). [`encode`] / [`decode`] write and read a
//! small fixed header (magic `OPTB`, format version, kind, flags, key) followed by the body:
//! **Arrow IPC stream bytes** for row data — zero-copy into the compute kernels, the schema
//! travels with the data (schema evolution by column name), compact, and encoding is a memcpy
//! of the columns (about 130 bytes per quote; see the `bus_codec` benchmark) — and JSON for the
//! tiny snapshot event. A newer format version is a clear [`SchemaError::UnsupportedVersion`];
//! truncated or garbage bytes are an error, never a panic. The wire format is documented in
//! [`bus`].
//!
//! ```
//! use optics_schemas::{DataBatch, Message, OptionQuote, Record, decode, encode};
//! # fn quotes() -> Vec<OptionQuote> { Vec::new() }
//! let message = Message::Data(DataBatch::from_rows("SPY", &quotes())?);
//! let bytes = encode(&message)?;
//! let Message::Data(batch) = decode(&bytes)? else { unreachable!() };
//! assert_eq!(batch.key(), "SPY");
//! let rows: Vec<OptionQuote> = batch.rows()?;
//! # Ok::<(), optics_schemas::SchemaError>(())
//! ```

#![forbid(unsafe_code)]

pub mod bus;
mod bus_trait;
pub mod chain_snapshot;
pub mod columns;
pub mod enums;
mod error;
pub mod exposure_snapshot;
pub mod flow_aggregates;
pub mod flow_snapshot;
pub mod health;
pub mod memory;
pub mod occ;
mod option_quotes;
mod reference;
pub mod snapshot;
mod strike;
mod table;
mod underlying;
pub mod vol_snapshot;

pub use bus::{
    DataBatch, FORMAT_VERSION, Header, MARKET_WIDE_KEY, Message, MessageKind, SnapshotEvent,
    decode, decode_header, encode,
};
pub use bus_trait::{Bus, BusError, BusFuture, Delivery, Pressure, Subscription};
pub use chain_snapshot::{
    ChainArrays, ChainGreekArrays, ChainGreeks, ChainRow, ChainSide, ChainSideArrays,
    ForwardSource, NoIvReason, PricingModelCode, chain_schema,
};
pub use enums::{
    AssetClass, DividendFrequency, EarningsTiming, ExerciseStyle, Importance, OptionType,
    SettlementStyle, WireEnum,
};
pub use error::SchemaError;
pub use exposure_snapshot::{
    DirectionalBiasCode, ExposureBatchBuilder, ExposureMeasures, ExposureRow, ExposureSummaryRow,
    FlipDegeneracyCode, PositioningCode, VolatilityRegimeCode, exposure_summary_schema,
    exposures_schema,
};
pub use flow_aggregates::{
    FLOW_AGGREGATES_DATASET, FlowAggregateKey, FlowAggregateRow, FlowGroupingCode, FlowTotals,
    flow_aggregates_schema,
};
pub use flow_snapshot::{FlowSnapshotRow, FlowValues, MoneynessCode, flow_schema};
pub use occ::{OccSymbol, occ_symbol};
pub use option_quotes::{OptionQuote, option_quotes_schema, quote_mid, round_to_steps};
pub use reference::{
    BorrowRate, Company, Dividend, EarningsEvent, EconomicEvent, borrow_rates_schema,
    companies_schema, dividends_schema, earnings_schema, economic_calendar_schema,
};
pub use snapshot::{DatasetId, SnapshotDataset};
pub use strike::StrikeKey;
pub use table::{
    Dataset, Record, calendar_dte, date_to_days, days_to_date, text_runs, timestamp_type,
};
pub use underlying::{DailyBar, UnderlyingTick, daily_bars_schema, underlying_ticks_schema};
pub use vol_snapshot::{
    VOL_DAILY_DATASET, VOL_TERM_DATASET, VolDailyRow, VolTermRow, vol_daily_schema, vol_term_schema,
};
