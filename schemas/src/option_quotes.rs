//! The `option_quotes` dataset: one row per option contract per quote update.

use std::sync::{Arc, LazyLock};

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, Utc};

use crate::columns::option_quotes as col;
use crate::enums::{ExerciseStyle, OptionType, SettlementStyle};
use crate::error::SchemaError;
use crate::occ::OccSymbol;
use crate::table::{
    Columns, Dataset, Record, dates, f64s, f64s_opt, field, opt, sealed::RecordImpl,
    timestamp_type, timestamps, u32s, u64s, utf8,
};

/// One option quote. Units: see [`crate::columns::option_quotes`].
#[derive(Debug, Clone, PartialEq)]
pub struct OptionQuote {
    /// Underlying symbol (`SPX`); the bus key.
    pub underlying: String,
    /// Compact OCC symbol (`SPXW261120C05000000`), see [`OccSymbol`].
    pub option_symbol: String,
    /// Last trading day.
    pub expiration: NaiveDate,
    /// Strike, dollars.
    pub strike: f64,
    /// Call or put.
    pub option_type: OptionType,
    /// AM or PM settlement.
    pub settlement: SettlementStyle,
    /// American or European exercise.
    pub exercise_style: ExerciseStyle,
    /// Best bid, dollars per share (0 = no bid).
    pub bid: f64,
    /// Best ask, dollars per share.
    pub ask: f64,
    /// Contracts at the bid.
    pub bid_size: u32,
    /// Contracts at the ask.
    pub ask_size: u32,
    /// Last trade price, dollars per share; `None` if it has not traded.
    pub last: Option<f64>,
    /// Contracts traded this session so far.
    pub volume: u64,
    /// Open interest, contracts, at the close of `oi_date`.
    pub open_interest: u64,
    /// Trade date the open interest applies to.
    pub oi_date: NaiveDate,
    /// When the quote was observed.
    pub quote_time: DateTime<Utc>,
    /// Underlying price at `quote_time`, dollars (cash level for indices).
    pub underlying_price: f64,
}

impl OptionQuote {
    /// The parsed OCC symbol.
    pub fn occ(&self) -> Result<OccSymbol<'_>, SchemaError> {
        OccSymbol::parse(&self.option_symbol)
    }

    /// Bid/ask midpoint, dollars per share, at the quotes' precision ([`quote_mid`]).
    pub fn mid(&self) -> f64 {
        quote_mid(self.bid, self.ask)
    }
}

/// Steps per dollar of the price grids quotes are made on: whole cents, then tenths of a cent.
const QUOTE_GRIDS: [f64; 2] = [100.0, 1_000.0];

/// The midpoint of `bid` and `ask` at the quotes' own precision: when both lie on a grid of
/// whole cents (or of tenths of a cent), the mid is the double nearest its exact half step
/// (19.755, not the 19.755000000000003 that halving the binary sum gives); quotes on no such
/// grid (model prices, say) keep the plain midpoint.
pub fn quote_mid(bid: f64, ask: f64) -> f64 {
    let mid = 0.5 * (bid + ask);
    match QUOTE_GRIDS
        .iter()
        .find(|&&steps| on_grid(bid, steps) && on_grid(ask, steps))
    {
        Some(&steps) => round_to_steps(mid, 2.0 * steps),
        None => mid,
    }
}

/// Whether `price` is a whole number of `1 / steps_per_dollar` (to a millionth of a step,
/// far below any quote's precision and far above the binary error of a decimal price).
fn on_grid(price: f64, steps_per_dollar: f64) -> bool {
    let steps = price * steps_per_dollar;
    steps.is_finite() && (steps - steps.round()).abs() <= 1e-6
}

/// `value` rounded to the nearest multiple of `1 / steps_per_dollar`, as the double nearest to
/// that multiple (the division by a whole number of steps is correctly rounded, where a
/// multiplication by an inexact tick such as 0.005 is not). Values too large for the grid to
/// matter, and non-finite ones, are returned as they are.
pub fn round_to_steps(value: f64, steps_per_dollar: f64) -> f64 {
    let steps = value * steps_per_dollar;
    // Beyond 2^52 steps every double is already a whole number of them.
    if !steps.is_finite() || steps.abs() >= 4_503_599_627_370_496.0 {
        return value;
    }
    steps.round() / steps_per_dollar
}

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(col::UNDERLYING, DataType::Utf8, false),
        field(col::OPTION_SYMBOL, DataType::Utf8, false),
        field(col::EXPIRATION, DataType::Date32, false),
        field(col::STRIKE, DataType::Float64, false),
        field(col::OPTION_TYPE, DataType::Utf8, false),
        field(col::SETTLEMENT, DataType::Utf8, false),
        field(col::EXERCISE_STYLE, DataType::Utf8, false),
        field(col::BID, DataType::Float64, false),
        field(col::ASK, DataType::Float64, false),
        field(col::BID_SIZE, DataType::UInt32, false),
        field(col::ASK_SIZE, DataType::UInt32, false),
        field(col::LAST, DataType::Float64, true),
        field(col::VOLUME, DataType::UInt64, false),
        field(col::OPEN_INTEREST, DataType::UInt64, false),
        field(col::OI_DATE, DataType::Date32, false),
        field(col::QUOTE_TIME, timestamp_type(), false),
        field(col::UNDERLYING_PRICE, DataType::Float64, false),
    ]))
});

/// The Arrow schema of `option_quotes`.
pub fn option_quotes_schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

impl Record for OptionQuote {
    const DATASET: Dataset = Dataset::OptionQuotes;

    fn schema() -> SchemaRef {
        option_quotes_schema()
    }
}

impl RecordImpl for OptionQuote {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.underlying.as_str())),
            utf8(rows.iter().map(|r| r.option_symbol.as_str())),
            dates(rows.iter().map(|r| r.expiration)),
            f64s(rows.iter().map(|r| r.strike)),
            utf8(rows.iter().map(|r| r.option_type.as_str())),
            utf8(rows.iter().map(|r| r.settlement.as_str())),
            utf8(rows.iter().map(|r| r.exercise_style.as_str())),
            f64s(rows.iter().map(|r| r.bid)),
            f64s(rows.iter().map(|r| r.ask)),
            u32s(rows.iter().map(|r| r.bid_size)),
            u32s(rows.iter().map(|r| r.ask_size)),
            f64s_opt(rows.iter().map(|r| r.last)),
            u64s(rows.iter().map(|r| r.volume)),
            u64s(rows.iter().map(|r| r.open_interest)),
            dates(rows.iter().map(|r| r.oi_date)),
            timestamps(rows.iter().map(|r| r.quote_time)),
            f64s(rows.iter().map(|r| r.underlying_price)),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::OptionQuotes, batch);
        c.symbol(col::UNDERLYING)?;
        c.date_in_range(col::EXPIRATION)?;
        c.positive(col::STRIKE)?;
        c.code::<OptionType>(col::OPTION_TYPE)?;
        c.code::<SettlementStyle>(col::SETTLEMENT)?;
        c.code::<ExerciseStyle>(col::EXERCISE_STYLE)?;
        c.non_negative(col::BID)?;
        c.non_negative(col::ASK)?;
        c.not_above(col::BID, col::ASK)?;
        c.non_negative(col::LAST)?;
        c.date_in_range(col::OI_DATE)?;
        c.timestamp_in_range(col::QUOTE_TIME)?;
        c.positive(col::UNDERLYING_PRICE)?;
        check_option_symbols(&c)?;
        check_oi_date(&c)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::OptionQuotes, batch);
        let underlying = c.str(col::UNDERLYING)?;
        let option_symbol = c.str(col::OPTION_SYMBOL)?;
        let expiration = c.date(col::EXPIRATION)?;
        let strike = c.f64(col::STRIKE)?;
        let option_type = c.str(col::OPTION_TYPE)?;
        let settlement = c.str(col::SETTLEMENT)?;
        let exercise_style = c.str(col::EXERCISE_STYLE)?;
        let bid = c.f64(col::BID)?;
        let ask = c.f64(col::ASK)?;
        let bid_size = c.u32(col::BID_SIZE)?;
        let ask_size = c.u32(col::ASK_SIZE)?;
        let last = c.f64(col::LAST)?;
        let volume = c.u64(col::VOLUME)?;
        let open_interest = c.u64(col::OPEN_INTEREST)?;
        let oi_date = c.date(col::OI_DATE)?;
        let quote_time = c.timestamp(col::QUOTE_TIME)?;
        let underlying_price = c.f64(col::UNDERLYING_PRICE)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(OptionQuote {
                    underlying: underlying.value(i).to_owned(),
                    option_symbol: option_symbol.value(i).to_owned(),
                    expiration: c.read_date(col::EXPIRATION, expiration, i)?,
                    strike: strike.value(i),
                    option_type: c.read_code(col::OPTION_TYPE, option_type, i)?,
                    settlement: c.read_code(col::SETTLEMENT, settlement, i)?,
                    exercise_style: c.read_code(col::EXERCISE_STYLE, exercise_style, i)?,
                    bid: bid.value(i),
                    ask: ask.value(i),
                    bid_size: bid_size.value(i),
                    ask_size: ask_size.value(i),
                    last: opt(last, i, || last.value(i)),
                    volume: volume.value(i),
                    open_interest: open_interest.value(i),
                    oi_date: c.read_date(col::OI_DATE, oi_date, i)?,
                    quote_time: c.read_timestamp(col::QUOTE_TIME, quote_time, i)?,
                    underlying_price: underlying_price.value(i),
                })
            })
            .collect()
    }
}

/// The OCC symbol parses and agrees with the expiration, type and strike columns.
fn check_option_symbols(c: &Columns<'_>) -> Result<(), SchemaError> {
    let symbols = c.str(col::OPTION_SYMBOL)?;
    let expiration = c.date(col::EXPIRATION)?;
    let option_type = c.str(col::OPTION_TYPE)?;
    let strike = c.f64(col::STRIKE)?;
    for row in 0..symbols.len() {
        let text = symbols.value(row);
        let occ = OccSymbol::parse(text)
            .map_err(|e| c.invalid(col::OPTION_SYMBOL, row, e.to_string()))?;
        let mismatch = |what: &str| {
            c.invalid(
                col::OPTION_SYMBOL,
                row,
                format!("{text} disagrees with the {what} column"),
            )
        };
        if crate::table::date_to_days(occ.expiration) != expiration.value(row) {
            return Err(mismatch(col::EXPIRATION));
        }
        if occ.option_type.as_str() != option_type.value(row) {
            return Err(mismatch(col::OPTION_TYPE));
        }
        if (strike.value(row) * 1000.0 - f64::from(occ.strike_thousandths)).abs() > 1e-6 {
            return Err(mismatch(col::STRIKE));
        }
    }
    Ok(())
}

/// Open interest is published after the close of its trade date, so `oi_date` is never after
/// the quote's date. The quote's UTC date is on or after its New York date, so comparing with
/// the UTC date never rejects a valid row.
fn check_oi_date(c: &Columns<'_>) -> Result<(), SchemaError> {
    const MICROS_PER_DAY: i64 = 86_400_000_000;
    let oi_date = c.date(col::OI_DATE)?;
    let quote_time = c.timestamp(col::QUOTE_TIME)?;
    for row in 0..oi_date.len() {
        let quote_day = quote_time.value(row).div_euclid(MICROS_PER_DAY);
        if i64::from(oi_date.value(row)) > quote_day {
            return Err(c.invalid(
                col::OI_DATE,
                row,
                "the open-interest date is after the quote's date",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mid_of_cent_quotes_is_the_half_cent_itself() {
        // Halving the binary sum gives 19.755000000000003; the mid is the double nearest to
        // 19.755, which prints as 19.755.
        assert_ne!(0.5 * (19.75 + 19.76), 19.755);
        assert_eq!(quote_mid(19.75, 19.76), 19.755);
        assert_eq!(
            serde_json::to_string(&quote_mid(19.75, 19.76)).unwrap(),
            "19.755"
        );
        // Every pair of cent quotes up to $50: the mid is the decimal half cent.
        for bid_cents in (0..5_000).step_by(7) {
            for spread in [0, 1, 2, 5, 15, 100] {
                let (bid, ask) = (
                    f64::from(bid_cents) / 100.0,
                    f64::from(bid_cents + spread) / 100.0,
                );
                let decimal = format!(
                    "{}.{:03}",
                    (2 * bid_cents + spread) / 200,
                    ((2 * bid_cents + spread) % 200) * 5
                );
                assert_eq!(
                    quote_mid(bid, ask),
                    decimal.parse::<f64>().unwrap(),
                    "{bid} / {ask}"
                );
            }
        }
        // Tenth-of-a-cent quotes keep their precision: half a tenth.
        assert_eq!(quote_mid(0.101, 0.104), 0.1025);
        // Quotes on no grid (model prices) keep the plain midpoint.
        let (bid, ask) = (1.234_567_8, 1.244_567_8);
        assert_eq!(quote_mid(bid, ask), 0.5 * (bid + ask));
        // Non-finite and huge values pass through the rounding.
        assert!(round_to_steps(f64::NAN, 200.0).is_nan());
        assert_eq!(round_to_steps(1e300, 200.0), 1e300);
    }
}
