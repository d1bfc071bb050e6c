//! Reference datasets: earnings events, dividends, borrow rates, the economic calendar and the
//! company map. They change slowly and are published on change.

use std::sync::{Arc, LazyLock};

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema, SchemaRef, TimeUnit};
use chrono::{NaiveDate, NaiveTime};

use crate::columns::{
    borrow_rates as br, companies as co, dividends as dv, earnings as ea, economic_calendar as ec,
};
use crate::enums::{AssetClass, DividendFrequency, EarningsTiming, Importance};
use crate::error::SchemaError;
use crate::table::{
    Columns, Dataset, Record, bools, dates, f64s, f64s_opt, field, opt, sealed::RecordImpl,
    seconds_to_time, times_opt, utf8, utf8_opt,
};

/// One earnings report, scheduled or past. Units: see [`crate::columns::earnings`].
#[derive(Debug, Clone, PartialEq)]
pub struct EarningsEvent {
    /// Underlying symbol.
    pub symbol: String,
    /// Report date.
    pub report_date: NaiveDate,
    /// Before the open, after the close, or unknown.
    pub timing: EarningsTiming,
    /// Fiscal period label (`FY2026 Q3`).
    pub fiscal_quarter: String,
    /// Consensus EPS, dollars per share.
    pub eps_estimate: f64,
    /// Reported EPS, dollars per share; `None` until reported.
    pub eps_actual: Option<f64>,
    /// Consensus revenue, dollars.
    pub revenue_estimate: Option<f64>,
    /// Reported revenue, dollars; `None` until reported.
    pub revenue_actual: Option<f64>,
}

/// One cash dividend. Units: see [`crate::columns::dividends`].
#[derive(Debug, Clone, PartialEq)]
pub struct Dividend {
    /// Underlying symbol.
    pub symbol: String,
    /// Ex-dividend date.
    pub ex_date: NaiveDate,
    /// Payment date (≥ ex-date).
    pub pay_date: NaiveDate,
    /// Dollars per share.
    pub amount: f64,
    /// Payment schedule.
    pub frequency: DividendFrequency,
}

/// The stock-borrow fee of an underlying on a date. Units: see
/// [`crate::columns::borrow_rates`].
#[derive(Debug, Clone, PartialEq)]
pub struct BorrowRate {
    /// Underlying symbol.
    pub symbol: String,
    /// The date the rate applies to.
    pub date: NaiveDate,
    /// Annualised fee, decimal.
    pub borrow_rate: f64,
    /// Hard to borrow.
    pub is_hard_to_borrow: bool,
}

/// One scheduled macro release. Units: see [`crate::columns::economic_calendar`].
#[derive(Debug, Clone, PartialEq)]
pub struct EconomicEvent {
    /// Release date (New York).
    pub date: NaiveDate,
    /// Release time, New York local; `None` when not fixed.
    pub time: Option<NaiveTime>,
    /// ISO 3166-1 alpha-2 country (or `EU`).
    pub country: String,
    /// Release name.
    pub event: String,
    /// Market importance.
    pub importance: Importance,
    /// Reported value as published text.
    pub actual: Option<String>,
    /// Consensus forecast as published text.
    pub forecast: Option<String>,
    /// Previous value as published text.
    pub previous: Option<String>,
}

/// One underlying of the coverage universe. Units: see [`crate::columns::companies`].
#[derive(Debug, Clone, PartialEq)]
pub struct Company {
    /// Underlying symbol.
    pub symbol: String,
    /// Company, fund or index name.
    pub name: String,
    /// Index, ETF or stock.
    pub asset_class: AssetClass,
    /// GICS sector name; `None` for indices and broad ETFs.
    pub sector: Option<String>,
    /// The sector's SPDR ETF symbol.
    pub sector_etf: Option<String>,
    /// Market capitalisation, dollars; `None` for indices and ETFs.
    pub market_cap: Option<f64>,
    /// Beta to SPY.
    pub beta_spy: f64,
    /// Correlation with SPY, in [-1, 1].
    pub corr_spy: f64,
    /// Priced on the forward (Black-76): cash indices.
    pub priced_on_forward: bool,
    /// GICS industry within the sector; `None` for indices and funds (and in files written
    /// before the column existed).
    pub industry: Option<String>,
}

static EARNINGS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(ea::SYMBOL, DataType::Utf8, false),
        field(ea::REPORT_DATE, DataType::Date32, false),
        field(ea::TIMING, DataType::Utf8, false),
        field(ea::FISCAL_QUARTER, DataType::Utf8, false),
        field(ea::EPS_ESTIMATE, DataType::Float64, false),
        field(ea::EPS_ACTUAL, DataType::Float64, true),
        field(ea::REVENUE_ESTIMATE, DataType::Float64, true),
        field(ea::REVENUE_ACTUAL, DataType::Float64, true),
    ]))
});

static DIVIDENDS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(dv::SYMBOL, DataType::Utf8, false),
        field(dv::EX_DATE, DataType::Date32, false),
        field(dv::PAY_DATE, DataType::Date32, false),
        field(dv::AMOUNT, DataType::Float64, false),
        field(dv::FREQUENCY, DataType::Utf8, false),
    ]))
});

static BORROW_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(br::SYMBOL, DataType::Utf8, false),
        field(br::DATE, DataType::Date32, false),
        field(br::BORROW_RATE, DataType::Float64, false),
        field(br::IS_HARD_TO_BORROW, DataType::Boolean, false),
    ]))
});

static CALENDAR_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(ec::DATE, DataType::Date32, false),
        field(ec::TIME, DataType::Time32(TimeUnit::Second), true),
        field(ec::COUNTRY, DataType::Utf8, false),
        field(ec::EVENT, DataType::Utf8, false),
        field(ec::IMPORTANCE, DataType::Utf8, false),
        field(ec::ACTUAL, DataType::Utf8, true),
        field(ec::FORECAST, DataType::Utf8, true),
        field(ec::PREVIOUS, DataType::Utf8, true),
    ]))
});

static COMPANIES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        field(co::SYMBOL, DataType::Utf8, false),
        field(co::NAME, DataType::Utf8, false),
        field(co::ASSET_CLASS, DataType::Utf8, false),
        field(co::SECTOR, DataType::Utf8, true),
        field(co::SECTOR_ETF, DataType::Utf8, true),
        field(co::MARKET_CAP, DataType::Float64, true),
        field(co::BETA_SPY, DataType::Float64, false),
        field(co::CORR_SPY, DataType::Float64, false),
        field(co::PRICED_ON_FORWARD, DataType::Boolean, false),
        // Last and nullable: added after the first release, so older files still read.
        field(co::INDUSTRY, DataType::Utf8, true),
    ]))
});

/// The Arrow schema of `earnings`.
pub fn earnings_schema() -> SchemaRef {
    Arc::clone(&EARNINGS_SCHEMA)
}

/// The Arrow schema of `dividends`.
pub fn dividends_schema() -> SchemaRef {
    Arc::clone(&DIVIDENDS_SCHEMA)
}

/// The Arrow schema of `borrow_rates`.
pub fn borrow_rates_schema() -> SchemaRef {
    Arc::clone(&BORROW_SCHEMA)
}

/// The Arrow schema of `economic_calendar`.
pub fn economic_calendar_schema() -> SchemaRef {
    Arc::clone(&CALENDAR_SCHEMA)
}

/// The Arrow schema of `companies`.
pub fn companies_schema() -> SchemaRef {
    Arc::clone(&COMPANIES_SCHEMA)
}

// ---------------------------------------------------------------------------------------------

impl Record for EarningsEvent {
    const DATASET: Dataset = Dataset::Earnings;

    fn schema() -> SchemaRef {
        earnings_schema()
    }
}

impl RecordImpl for EarningsEvent {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            dates(rows.iter().map(|r| r.report_date)),
            utf8(rows.iter().map(|r| r.timing.as_str())),
            utf8(rows.iter().map(|r| r.fiscal_quarter.as_str())),
            f64s(rows.iter().map(|r| r.eps_estimate)),
            f64s_opt(rows.iter().map(|r| r.eps_actual)),
            f64s_opt(rows.iter().map(|r| r.revenue_estimate)),
            f64s_opt(rows.iter().map(|r| r.revenue_actual)),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::Earnings, batch);
        c.symbol(ea::SYMBOL)?;
        c.date_in_range(ea::REPORT_DATE)?;
        c.code::<EarningsTiming>(ea::TIMING)?;
        c.text(ea::FISCAL_QUARTER)?;
        c.finite(ea::EPS_ESTIMATE)?;
        c.finite(ea::EPS_ACTUAL)?;
        c.non_negative(ea::REVENUE_ESTIMATE)?;
        c.non_negative(ea::REVENUE_ACTUAL)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::Earnings, batch);
        let symbol = c.str(ea::SYMBOL)?;
        let report_date = c.date(ea::REPORT_DATE)?;
        let timing = c.str(ea::TIMING)?;
        let fiscal_quarter = c.str(ea::FISCAL_QUARTER)?;
        let eps_estimate = c.f64(ea::EPS_ESTIMATE)?;
        let eps_actual = c.f64(ea::EPS_ACTUAL)?;
        let revenue_estimate = c.f64(ea::REVENUE_ESTIMATE)?;
        let revenue_actual = c.f64(ea::REVENUE_ACTUAL)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(EarningsEvent {
                    symbol: symbol.value(i).to_owned(),
                    report_date: c.read_date(ea::REPORT_DATE, report_date, i)?,
                    timing: c.read_code(ea::TIMING, timing, i)?,
                    fiscal_quarter: fiscal_quarter.value(i).to_owned(),
                    eps_estimate: eps_estimate.value(i),
                    eps_actual: opt(eps_actual, i, || eps_actual.value(i)),
                    revenue_estimate: opt(revenue_estimate, i, || revenue_estimate.value(i)),
                    revenue_actual: opt(revenue_actual, i, || revenue_actual.value(i)),
                })
            })
            .collect()
    }
}

impl Record for Dividend {
    const DATASET: Dataset = Dataset::Dividends;

    fn schema() -> SchemaRef {
        dividends_schema()
    }
}

impl RecordImpl for Dividend {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            dates(rows.iter().map(|r| r.ex_date)),
            dates(rows.iter().map(|r| r.pay_date)),
            f64s(rows.iter().map(|r| r.amount)),
            utf8(rows.iter().map(|r| r.frequency.as_str())),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::Dividends, batch);
        c.symbol(dv::SYMBOL)?;
        c.date_in_range(dv::EX_DATE)?;
        c.date_in_range(dv::PAY_DATE)?;
        c.date_not_before(dv::PAY_DATE, dv::EX_DATE)?;
        c.positive(dv::AMOUNT)?;
        c.code::<DividendFrequency>(dv::FREQUENCY)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::Dividends, batch);
        let symbol = c.str(dv::SYMBOL)?;
        let ex_date = c.date(dv::EX_DATE)?;
        let pay_date = c.date(dv::PAY_DATE)?;
        let amount = c.f64(dv::AMOUNT)?;
        let frequency = c.str(dv::FREQUENCY)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(Dividend {
                    symbol: symbol.value(i).to_owned(),
                    ex_date: c.read_date(dv::EX_DATE, ex_date, i)?,
                    pay_date: c.read_date(dv::PAY_DATE, pay_date, i)?,
                    amount: amount.value(i),
                    frequency: c.read_code(dv::FREQUENCY, frequency, i)?,
                })
            })
            .collect()
    }
}

impl Record for BorrowRate {
    const DATASET: Dataset = Dataset::BorrowRates;

    fn schema() -> SchemaRef {
        borrow_rates_schema()
    }
}

impl RecordImpl for BorrowRate {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            dates(rows.iter().map(|r| r.date)),
            f64s(rows.iter().map(|r| r.borrow_rate)),
            bools(rows.iter().map(|r| r.is_hard_to_borrow)),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::BorrowRates, batch);
        c.symbol(br::SYMBOL)?;
        c.date_in_range(br::DATE)?;
        c.non_negative(br::BORROW_RATE)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::BorrowRates, batch);
        let symbol = c.str(br::SYMBOL)?;
        let date = c.date(br::DATE)?;
        let borrow_rate = c.f64(br::BORROW_RATE)?;
        let hard = c.bool(br::IS_HARD_TO_BORROW)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(BorrowRate {
                    symbol: symbol.value(i).to_owned(),
                    date: c.read_date(br::DATE, date, i)?,
                    borrow_rate: borrow_rate.value(i),
                    is_hard_to_borrow: hard.value(i),
                })
            })
            .collect()
    }
}

impl Record for EconomicEvent {
    const DATASET: Dataset = Dataset::EconomicCalendar;

    fn schema() -> SchemaRef {
        economic_calendar_schema()
    }
}

impl RecordImpl for EconomicEvent {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            dates(rows.iter().map(|r| r.date)),
            times_opt(rows.iter().map(|r| r.time)),
            utf8(rows.iter().map(|r| r.country.as_str())),
            utf8(rows.iter().map(|r| r.event.as_str())),
            utf8(rows.iter().map(|r| r.importance.as_str())),
            utf8_opt(rows.iter().map(|r| r.actual.as_deref())),
            utf8_opt(rows.iter().map(|r| r.forecast.as_deref())),
            utf8_opt(rows.iter().map(|r| r.previous.as_deref())),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::EconomicCalendar, batch);
        c.date_in_range(ec::DATE)?;
        c.time_of_day(ec::TIME)?;
        let country = c.str(ec::COUNTRY)?;
        for row in 0..country.len() {
            let code = country.value(row);
            if !(code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase())) {
                return Err(c.invalid(
                    ec::COUNTRY,
                    row,
                    format!("{code:?} is not a two-letter upper-case country code"),
                ));
            }
        }
        c.text(ec::EVENT)?;
        c.code::<Importance>(ec::IMPORTANCE)?;
        c.text(ec::ACTUAL)?;
        c.text(ec::FORECAST)?;
        c.text(ec::PREVIOUS)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::EconomicCalendar, batch);
        let date = c.date(ec::DATE)?;
        let time = c.time(ec::TIME)?;
        let country = c.str(ec::COUNTRY)?;
        let event = c.str(ec::EVENT)?;
        let importance = c.str(ec::IMPORTANCE)?;
        let actual = c.str(ec::ACTUAL)?;
        let forecast = c.str(ec::FORECAST)?;
        let previous = c.str(ec::PREVIOUS)?;
        (0..batch.num_rows())
            .map(|i| {
                let time = if time.is_valid(i) {
                    Some(
                        seconds_to_time(time.value(i))
                            .ok_or_else(|| c.invalid(ec::TIME, i, "not a time of day"))?,
                    )
                } else {
                    None
                };
                Ok(EconomicEvent {
                    date: c.read_date(ec::DATE, date, i)?,
                    time,
                    country: country.value(i).to_owned(),
                    event: event.value(i).to_owned(),
                    importance: c.read_code(ec::IMPORTANCE, importance, i)?,
                    actual: opt(actual, i, || actual.value(i).to_owned()),
                    forecast: opt(forecast, i, || forecast.value(i).to_owned()),
                    previous: opt(previous, i, || previous.value(i).to_owned()),
                })
            })
            .collect()
    }
}

impl Record for Company {
    const DATASET: Dataset = Dataset::Companies;

    fn schema() -> SchemaRef {
        companies_schema()
    }
}

impl RecordImpl for Company {
    fn columns(rows: &[Self]) -> Vec<ArrayRef> {
        vec![
            utf8(rows.iter().map(|r| r.symbol.as_str())),
            utf8(rows.iter().map(|r| r.name.as_str())),
            utf8(rows.iter().map(|r| r.asset_class.as_str())),
            utf8_opt(rows.iter().map(|r| r.sector.as_deref())),
            utf8_opt(rows.iter().map(|r| r.sector_etf.as_deref())),
            f64s_opt(rows.iter().map(|r| r.market_cap)),
            f64s(rows.iter().map(|r| r.beta_spy)),
            f64s(rows.iter().map(|r| r.corr_spy)),
            bools(rows.iter().map(|r| r.priced_on_forward)),
            utf8_opt(rows.iter().map(|r| r.industry.as_deref())),
        ]
    }

    fn check(batch: &RecordBatch) -> Result<(), SchemaError> {
        let c = Columns::new(Dataset::Companies, batch);
        c.symbol(co::SYMBOL)?;
        c.text(co::NAME)?;
        c.code::<AssetClass>(co::ASSET_CLASS)?;
        c.text(co::SECTOR)?;
        c.symbol(co::SECTOR_ETF)?;
        c.positive(co::MARKET_CAP)?;
        c.finite(co::BETA_SPY)?;
        c.within(co::CORR_SPY, -1.0, 1.0)?;
        c.text(co::INDUSTRY)
    }

    fn read(batch: &RecordBatch) -> Result<Vec<Self>, SchemaError> {
        let c = Columns::new(Dataset::Companies, batch);
        let symbol = c.str(co::SYMBOL)?;
        let name = c.str(co::NAME)?;
        let asset_class = c.str(co::ASSET_CLASS)?;
        let sector = c.str(co::SECTOR)?;
        let sector_etf = c.str(co::SECTOR_ETF)?;
        let market_cap = c.f64(co::MARKET_CAP)?;
        let beta_spy = c.f64(co::BETA_SPY)?;
        let corr_spy = c.f64(co::CORR_SPY)?;
        let forward = c.bool(co::PRICED_ON_FORWARD)?;
        let industry = c.str(co::INDUSTRY)?;
        (0..batch.num_rows())
            .map(|i| {
                Ok(Company {
                    symbol: symbol.value(i).to_owned(),
                    name: name.value(i).to_owned(),
                    asset_class: c.read_code(co::ASSET_CLASS, asset_class, i)?,
                    sector: opt(sector, i, || sector.value(i).to_owned()),
                    sector_etf: opt(sector_etf, i, || sector_etf.value(i).to_owned()),
                    market_cap: opt(market_cap, i, || market_cap.value(i)),
                    beta_spy: beta_spy.value(i),
                    corr_spy: corr_spy.value(i),
                    priced_on_forward: forward.value(i),
                    industry: opt(industry, i, || industry.value(i).to_owned()),
                })
            })
            .collect()
    }
}
