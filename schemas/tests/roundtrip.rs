//! Rows → batch → rows is the identity for every dataset, including nulls and empty batches.

mod common;

use std::fmt::Debug;

use arrow_array::RecordBatch;
use common::*;
use optics_schemas::columns::option_quotes as oq;
use optics_schemas::{
    BorrowRate, Company, DailyBar, Dataset, Dividend, EarningsEvent, EconomicEvent, OptionQuote,
    Record, UnderlyingTick, option_quotes_schema,
};

fn round_trip<R: Record + PartialEq + Debug>(rows: &[R]) -> RecordBatch {
    let batch = R::to_batch(rows).unwrap();
    assert_eq!(batch.schema(), R::schema());
    assert_eq!(batch.num_rows(), rows.len());
    assert_eq!(R::from_batch(&batch).unwrap(), rows);
    assert_eq!(R::DATASET.schema(), R::schema());
    // An empty batch round trips too.
    let empty = R::to_batch(&[]).unwrap();
    assert_eq!(empty.num_rows(), 0);
    assert!(R::from_batch(&empty).unwrap().is_empty());
    batch
}

#[test]
fn option_quotes() {
    let rows = spy_quotes();
    let batch = round_trip(&rows);
    assert_eq!(batch.column_by_name(oq::LAST).unwrap().null_count(), 1);
    // Index options: AM-settled European SPX monthlies next to PM SPXW weeklies.
    let mut spx = quote("SPX", "SPX", 5_900.0, optics_schemas::OptionType::Put);
    spx.settlement = optics_schemas::SettlementStyle::Am;
    spx.exercise_style = optics_schemas::ExerciseStyle::European;
    let mut spxw = quote("SPX", "SPXW", 5_905.0, optics_schemas::OptionType::Call);
    spxw.underlying_price = 5_889.25;
    round_trip(&[spx, spxw]);
}

#[test]
fn underlying_ticks() {
    let mut rows = ticks();
    rows.push(index_tick());
    let batch = round_trip(&rows);
    assert_eq!(batch.column(2).null_count(), 1);
}

#[test]
fn daily_bars() {
    round_trip(&bars());
}

#[test]
fn reference_datasets() {
    round_trip(&earnings());
    round_trip(&dividends());
    round_trip(&borrow());
    round_trip(&calendar());
    round_trip(&companies());
}

#[test]
fn every_dataset_has_a_row_type() {
    let datasets = [
        OptionQuote::DATASET,
        UnderlyingTick::DATASET,
        DailyBar::DATASET,
        EarningsEvent::DATASET,
        Dividend::DATASET,
        BorrowRate::DATASET,
        EconomicEvent::DATASET,
        Company::DATASET,
    ];
    assert_eq!(datasets, Dataset::ALL);
}

#[test]
fn schema_types_and_nullability() {
    use arrow_schema::{DataType, TimeUnit};
    let schema = option_quotes_schema();
    let field = |name| schema.field_with_name(name).unwrap();
    assert_eq!(field(oq::EXPIRATION).data_type(), &DataType::Date32);
    assert_eq!(
        field(oq::QUOTE_TIME).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert!(field(oq::LAST).is_nullable());
    assert!(!field(oq::BID).is_nullable());
    assert!(!field(oq::OI_DATE).is_nullable());
}

#[test]
fn column_order_does_not_matter_on_the_way_in() {
    let batch = OptionQuote::to_batch(&spy_quotes()).unwrap();
    let reversed: Vec<usize> = (0..batch.num_columns()).rev().collect();
    let shuffled = batch.project(&reversed).unwrap();
    assert_eq!(OptionQuote::from_batch(&shuffled).unwrap(), spy_quotes());
    assert_eq!(
        Dataset::OptionQuotes.validate_batch(&shuffled).unwrap(),
        batch
    );
}
