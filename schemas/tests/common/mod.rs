//! Sample rows of every dataset, shared by the integration tests.
#![allow(dead_code)]

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use optics_schemas::{
    AssetClass, BorrowRate, Company, DailyBar, Dividend, DividendFrequency, EarningsEvent,
    EarningsTiming, EconomicEvent, ExerciseStyle, Importance, OptionQuote, OptionType,
    SettlementStyle, UnderlyingTick, occ_symbol,
};

pub fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// 2026-11-20 15:30:00.123456 UTC (10:30 New York) plus `micros`.
pub fn time(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(1_795_188_600_123_456 + micros).unwrap()
}

pub fn quote(underlying: &str, root: &str, strike: f64, option_type: OptionType) -> OptionQuote {
    let expiration = date(2026, 12, 18);
    OptionQuote {
        underlying: underlying.to_owned(),
        option_symbol: occ_symbol(root, expiration, option_type, strike).unwrap(),
        expiration,
        strike,
        option_type,
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
        bid: 1.25,
        ask: 1.35,
        bid_size: 40,
        ask_size: 55,
        last: Some(1.3),
        volume: 1_234,
        open_interest: 10_500,
        oi_date: date(2026, 11, 19),
        quote_time: time(0),
        underlying_price: 587.12,
    }
}

/// A small chain of SPY quotes: strikes × calls and puts, with a no-bid wing and a
/// never-traded contract.
pub fn spy_quotes() -> Vec<OptionQuote> {
    let mut rows = Vec::new();
    for (i, strike) in [570.0, 580.0, 587.5, 600.0, 650.0].into_iter().enumerate() {
        for option_type in [OptionType::Call, OptionType::Put] {
            let mut q = quote("SPY", "SPY", strike, option_type);
            q.quote_time = time(i as i64 * 1_000);
            q.volume = 100 * i as u64;
            rows.push(q);
        }
    }
    rows[8].bid = 0.0; // far-wing call: no bid
    rows[8].bid_size = 0;
    rows[9].last = None;
    rows
}

pub fn ticks() -> Vec<UnderlyingTick> {
    vec![
        UnderlyingTick {
            symbol: "SPY".into(),
            tick_time: time(0),
            bid: Some(587.11),
            ask: Some(587.13),
            last: 587.12,
            last_size: 300,
            volume: 12_345_678,
        },
        UnderlyingTick {
            symbol: "SPY".into(),
            tick_time: time(5_000),
            bid: Some(587.10),
            ask: Some(587.12),
            last: 587.11,
            last_size: 100,
            volume: 12_345_778,
        },
    ]
}

pub fn index_tick() -> UnderlyingTick {
    UnderlyingTick {
        symbol: "SPX".into(),
        tick_time: time(0),
        bid: None,
        ask: None,
        last: 5_889.25,
        last_size: 0,
        volume: 0,
    }
}

pub fn bars() -> Vec<DailyBar> {
    vec![
        DailyBar {
            symbol: "AAPL".into(),
            date: date(2026, 11, 19),
            open: 228.1,
            high: 231.4,
            low: 227.5,
            close: 230.9,
            volume: 51_000_000,
            adj_close: 230.9,
        },
        DailyBar {
            symbol: "AAPL".into(),
            date: date(2026, 11, 20),
            open: 230.0,
            high: 230.0,
            low: 225.0,
            close: 226.2,
            volume: 62_000_000,
            adj_close: 226.2,
        },
    ]
}

pub fn earnings() -> Vec<EarningsEvent> {
    vec![
        EarningsEvent {
            symbol: "AAPL".into(),
            report_date: date(2026, 10, 29),
            timing: EarningsTiming::AfterClose,
            fiscal_quarter: "FY2026 Q4".into(),
            eps_estimate: 1.62,
            eps_actual: Some(1.71),
            revenue_estimate: Some(101.2e9),
            revenue_actual: Some(103.9e9),
        },
        EarningsEvent {
            symbol: "TSLA".into(),
            report_date: date(2027, 1, 27),
            timing: EarningsTiming::Unknown,
            fiscal_quarter: "FY2026 Q4".into(),
            eps_estimate: -0.05,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        },
    ]
}

pub fn dividends() -> Vec<Dividend> {
    vec![
        Dividend {
            symbol: "SPY".into(),
            ex_date: date(2026, 12, 19),
            pay_date: date(2027, 1, 30),
            amount: 1.8,
            frequency: DividendFrequency::Quarterly,
        },
        Dividend {
            symbol: "COST".into(),
            ex_date: date(2026, 12, 10),
            pay_date: date(2026, 12, 10),
            amount: 15.0,
            frequency: DividendFrequency::Special,
        },
    ]
}

pub fn borrow() -> Vec<BorrowRate> {
    vec![
        BorrowRate {
            symbol: "AAPL".into(),
            date: date(2026, 11, 20),
            borrow_rate: 0.0025,
            is_hard_to_borrow: false,
        },
        BorrowRate {
            symbol: "GME".into(),
            date: date(2026, 11, 20),
            borrow_rate: 0.85,
            is_hard_to_borrow: true,
        },
    ]
}

pub fn calendar() -> Vec<EconomicEvent> {
    vec![
        EconomicEvent {
            date: date(2026, 12, 4),
            time: NaiveTime::from_hms_opt(8, 30, 0),
            country: "US".into(),
            event: "Nonfarm Payrolls".into(),
            importance: Importance::High,
            actual: None,
            forecast: Some("180K".into()),
            previous: Some("254K".into()),
        },
        EconomicEvent {
            date: date(2026, 11, 20),
            time: None,
            country: "EU".into(),
            event: "ECB President Speaks".into(),
            importance: Importance::Low,
            actual: None,
            forecast: None,
            previous: None,
        },
    ]
}

pub fn companies() -> Vec<Company> {
    vec![
        Company {
            symbol: "AAPL".into(),
            name: "Apple Inc.".into(),
            asset_class: AssetClass::Stock,
            sector: Some("Information Technology".into()),
            sector_etf: Some("XLK".into()),
            market_cap: Some(3.4e12),
            beta_spy: 1.12,
            corr_spy: 0.71,
            priced_on_forward: false,
            industry: Some("Technology Hardware, Storage & Peripherals".into()),
        },
        Company {
            symbol: "SPX".into(),
            name: "S&P 500 Index".into(),
            asset_class: AssetClass::Index,
            sector: None,
            sector_etf: None,
            market_cap: None,
            beta_spy: 1.0,
            corr_spy: 1.0,
            priced_on_forward: true,
            industry: None,
        },
    ]
}
