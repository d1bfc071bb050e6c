//! Invalid rows and batches are rejected with the dataset, column and row.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use common::*;
use optics_schemas::columns::{
    borrow_rates as br, companies as co, daily_bars as bar, dividends as dv, earnings as ea,
    economic_calendar as ec, option_quotes as oq, underlying_ticks as tk,
};
use optics_schemas::{
    BorrowRate, Company, DailyBar, Dataset, Dividend, EarningsEvent, EconomicEvent, OptionQuote,
    OptionType, Record, SchemaError, UnderlyingTick,
};

/// Asserts `result` is an `InvalidValue` naming `column` and `row`; returns the reason.
#[track_caller]
fn invalid<T: std::fmt::Debug>(
    result: Result<T, SchemaError>,
    dataset: Dataset,
    column: &str,
    row: usize,
) -> String {
    match result.unwrap_err() {
        SchemaError::InvalidValue {
            dataset: d,
            column: c,
            row: r,
            reason,
        } => {
            assert_eq!((d, c, r), (dataset.into(), column, row), "{reason}");
            reason
        }
        other => panic!("expected InvalidValue for {column} row {row}, got {other}"),
    }
}

fn quotes_with(row: usize, edit: impl FnOnce(&mut OptionQuote)) -> Vec<OptionQuote> {
    let mut rows = spy_quotes();
    edit(&mut rows[row]);
    rows
}

fn quotes(row: usize, edit: impl FnOnce(&mut OptionQuote)) -> Result<RecordBatch, SchemaError> {
    OptionQuote::to_batch(&quotes_with(row, edit))
}

#[test]
fn quote_prices() {
    let ds = Dataset::OptionQuotes;
    invalid(quotes(3, |r| r.bid = f64::NAN), ds, oq::BID, 3);
    invalid(quotes(2, |r| r.ask = -0.05), ds, oq::ASK, 2);
    invalid(quotes(1, |r| r.ask = f64::INFINITY), ds, oq::ASK, 1);
    let reason = invalid(quotes(4, |r| r.bid = 2.0), ds, oq::BID, 4);
    assert!(reason.contains("above ask"), "{reason}");
    invalid(quotes(5, |r| r.last = Some(f64::NAN)), ds, oq::LAST, 5);
    invalid(
        quotes(6, |r| r.underlying_price = 0.0),
        ds,
        oq::UNDERLYING_PRICE,
        6,
    );
    // Zero bid and zero ask (no market at all) are valid.
    quotes(0, |r| {
        r.bid = 0.0;
        r.ask = 0.0;
    })
    .unwrap();
}

#[test]
fn quote_symbols_and_dates() {
    let ds = Dataset::OptionQuotes;
    invalid(
        OptionQuote::to_batch(&quotes_with(7, |r| r.underlying.clear())),
        ds,
        oq::UNDERLYING,
        7,
    );
    invalid(
        OptionQuote::to_batch(&quotes_with(0, |r| r.underlying = "SP Y".into())),
        ds,
        oq::UNDERLYING,
        0,
    );
    invalid(
        OptionQuote::to_batch(&quotes_with(2, |r| r.option_symbol = "SPY".into())),
        ds,
        oq::OPTION_SYMBOL,
        2,
    );
    // The OCC symbol must agree with the expiration, type and strike columns.
    let reason = invalid(
        OptionQuote::to_batch(&quotes_with(3, |r| r.strike += 1.0)),
        ds,
        oq::OPTION_SYMBOL,
        3,
    );
    assert!(reason.contains("strike"), "{reason}");
    invalid(
        OptionQuote::to_batch(&quotes_with(3, |r| {
            r.option_type = match r.option_type {
                OptionType::Call => OptionType::Put,
                OptionType::Put => OptionType::Call,
            }
        })),
        ds,
        oq::OPTION_SYMBOL,
        3,
    );
    invalid(
        OptionQuote::to_batch(&quotes_with(1, |r| r.expiration = date(2026, 12, 19))),
        ds,
        oq::OPTION_SYMBOL,
        1,
    );
    invalid(
        OptionQuote::to_batch(&quotes_with(9, |r| r.oi_date = date(2026, 11, 21))),
        ds,
        oq::OI_DATE,
        9,
    );
}

#[test]
fn batch_side_rules_nulls_types_and_codes() {
    let ds = Dataset::OptionQuotes;
    let batch = OptionQuote::to_batch(&spy_quotes()).unwrap();
    let replace = |name: &str, column: ArrayRef| {
        let schema = batch.schema();
        let index = schema.index_of(name).unwrap();
        let mut columns = batch.columns().to_vec();
        columns[index] = column;
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i == index {
                    Arc::new(
                        f.as_ref()
                            .clone()
                            .with_nullable(true)
                            .with_data_type(columns[i].data_type().clone()),
                    )
                } else {
                    Arc::clone(f)
                }
            })
            .collect::<Vec<_>>();
        RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap()
    };
    let n = batch.num_rows();

    // A null where the schema says non-nullable.
    let mut bids: Vec<Option<f64>> = vec![Some(1.0); n];
    bids[6] = None;
    let with_null = replace(oq::BID, Arc::new(Float64Array::from(bids)));
    match OptionQuote::from_batch(&with_null).unwrap_err() {
        SchemaError::UnexpectedNull {
            dataset,
            column,
            row,
        } => {
            assert_eq!((dataset, column, row), (ds.into(), oq::BID, 6));
        }
        other => panic!("{other}"),
    }

    // A wrong type.
    let strings = replace(oq::STRIKE, Arc::new(StringArray::from(vec!["580"; n])));
    assert!(matches!(
        OptionQuote::from_batch(&strings).unwrap_err(),
        SchemaError::ColumnType {
            column: oq::STRIKE,
            ..
        }
    ));

    // An unknown enum code.
    let mut codes = vec!["C"; n];
    codes[4] = "X";
    let bad_code = replace(oq::OPTION_TYPE, Arc::new(StringArray::from(codes)));
    let reason = invalid(OptionQuote::from_batch(&bad_code), ds, oq::OPTION_TYPE, 4);
    assert!(reason.contains("option type"), "{reason}");

    // A missing required column.
    let keep: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| batch.schema().field(i).name() != oq::ASK)
        .collect();
    let missing = batch.project(&keep).unwrap();
    assert!(matches!(
        OptionQuote::from_batch(&missing).unwrap_err(),
        SchemaError::MissingColumn {
            column: oq::ASK,
            ..
        }
    ));

    // A missing nullable column reads as nulls (an older producer).
    let keep: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| batch.schema().field(i).name() != oq::LAST)
        .collect();
    let rows = OptionQuote::from_batch(&batch.project(&keep).unwrap()).unwrap();
    assert!(rows.iter().all(|r| r.last.is_none()));
}

#[test]
fn error_messages_name_column_and_row() {
    let err = OptionQuote::to_batch(&quotes_with(4, |r| r.bid = 9.0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "option_quotes: row 4, column `bid`: bid 9 is above ask 1.35"
    );
}

#[test]
fn ticks_and_bars() {
    let mut rows = ticks();
    rows[1].bid = Some(600.0);
    invalid(
        UnderlyingTick::to_batch(&rows),
        Dataset::UnderlyingTicks,
        tk::BID,
        1,
    );
    let mut rows = ticks();
    rows[0].last = -1.0;
    invalid(
        UnderlyingTick::to_batch(&rows),
        Dataset::UnderlyingTicks,
        tk::LAST,
        0,
    );

    let ds = Dataset::DailyBars;
    let mut rows = bars();
    rows[1].low = 231.0; // above open and close
    invalid(DailyBar::to_batch(&rows), ds, bar::LOW, 1);
    let mut rows = bars();
    rows[0].high = 229.0; // below close
    invalid(DailyBar::to_batch(&rows), ds, bar::CLOSE, 0);
    let mut rows = bars();
    rows[0].adj_close = f64::NAN;
    invalid(DailyBar::to_batch(&rows), ds, bar::ADJ_CLOSE, 0);
    let mut rows = bars();
    rows[1].date = date(1899, 12, 31);
    invalid(DailyBar::to_batch(&rows), ds, bar::DATE, 1);
}

#[test]
fn reference_rules() {
    let mut rows = earnings();
    rows[1].fiscal_quarter = " ".into();
    invalid(
        EarningsEvent::to_batch(&rows),
        Dataset::Earnings,
        ea::FISCAL_QUARTER,
        1,
    );
    let mut rows = earnings();
    rows[0].revenue_actual = Some(-1.0);
    invalid(
        EarningsEvent::to_batch(&rows),
        Dataset::Earnings,
        ea::REVENUE_ACTUAL,
        0,
    );

    let mut rows = dividends();
    rows[0].pay_date = date(2026, 12, 1);
    invalid(
        Dividend::to_batch(&rows),
        Dataset::Dividends,
        dv::PAY_DATE,
        0,
    );
    let mut rows = dividends();
    rows[1].amount = 0.0;
    invalid(Dividend::to_batch(&rows), Dataset::Dividends, dv::AMOUNT, 1);

    let mut rows = borrow();
    rows[1].borrow_rate = -0.01;
    invalid(
        BorrowRate::to_batch(&rows),
        Dataset::BorrowRates,
        br::BORROW_RATE,
        1,
    );

    let mut rows = calendar();
    rows[0].country = "usa".into();
    invalid(
        EconomicEvent::to_batch(&rows),
        Dataset::EconomicCalendar,
        ec::COUNTRY,
        0,
    );
    let mut rows = calendar();
    rows[1].forecast = Some(String::new());
    invalid(
        EconomicEvent::to_batch(&rows),
        Dataset::EconomicCalendar,
        ec::FORECAST,
        1,
    );

    let mut rows = companies();
    rows[0].corr_spy = 1.5;
    invalid(
        Company::to_batch(&rows),
        Dataset::Companies,
        co::CORR_SPY,
        0,
    );
    let mut rows = companies();
    rows[1].name = String::new();
    invalid(Company::to_batch(&rows), Dataset::Companies, co::NAME, 1);
    let mut rows = companies();
    rows[0].market_cap = Some(0.0);
    invalid(
        Company::to_batch(&rows),
        Dataset::Companies,
        co::MARKET_CAP,
        0,
    );
    let mut rows = companies();
    rows[0].industry = Some(" Software".into());
    invalid(
        Company::to_batch(&rows),
        Dataset::Companies,
        co::INDUSTRY,
        0,
    );
}

/// A company map written before `industry` existed: the nine columns of the first release,
/// built here column by column, read with every other field intact and no industry.
#[test]
fn a_company_map_without_industry_still_reads() {
    use arrow_array::BooleanArray;
    let older = RecordBatch::try_from_iter([
        (
            co::SYMBOL,
            Arc::new(StringArray::from(vec!["AAPL", "SPX"])) as ArrayRef,
        ),
        (
            co::NAME,
            Arc::new(StringArray::from(vec!["Apple Inc.", "S&P 500 Index"])),
        ),
        (
            co::ASSET_CLASS,
            Arc::new(StringArray::from(vec!["STOCK", "INDEX"])),
        ),
        (
            co::SECTOR,
            Arc::new(StringArray::from(vec![
                Some("Information Technology"),
                None,
            ])),
        ),
        (
            co::SECTOR_ETF,
            Arc::new(StringArray::from(vec![Some("XLK"), None])),
        ),
        (
            co::MARKET_CAP,
            Arc::new(Float64Array::from(vec![Some(3.4e12), None])),
        ),
        (co::BETA_SPY, Arc::new(Float64Array::from(vec![1.12, 1.0]))),
        (co::CORR_SPY, Arc::new(Float64Array::from(vec![0.71, 1.0]))),
        (
            co::PRICED_ON_FORWARD,
            Arc::new(BooleanArray::from(vec![false, true])),
        ),
    ])
    .unwrap();
    assert!(older.column_by_name(co::INDUSTRY).is_none());
    let read = Company::from_batch(&older).unwrap();
    let expected: Vec<Company> = companies()
        .into_iter()
        .map(|c| Company {
            industry: None,
            ..c
        })
        .collect();
    assert_eq!(read, expected);
}
