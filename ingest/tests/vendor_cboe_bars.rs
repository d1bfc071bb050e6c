//! Cboe EOD summary and daily-bars imports: the committed samples, field by field.

mod vendor_support;

use std::path::Path;

use chrono::{DateTime, Utc};
use optics_ingest::vendor::{ImportKind, MemorySink, import_file, symbol_from_file_name};
use optics_schemas::{DailyBar, ExerciseStyle, OptionQuote, OptionType, SettlementStyle};
use vendor_support::{data, date, import_sample};

#[test]
fn cboe_sample_imports_field_by_field() {
    let (summary, sink) = import_sample("cboe_eod_sample.csv", &ImportKind::CboeEod);
    assert_eq!((summary.lines, summary.rows), (6, 6));
    let close: DateTime<Utc> = "2024-03-14T20:00:00Z".parse().unwrap();
    // Cboe's open interest is OCC's figure of the previous trading day.
    let oi_date = date(2024, 3, 13);
    let spx = OptionQuote {
        underlying: "SPX".into(),
        option_symbol: "SPX240315C05150000".into(),
        expiration: date(2024, 3, 15),
        strike: 5150.0,
        option_type: OptionType::Call,
        settlement: SettlementStyle::Am,
        exercise_style: ExerciseStyle::European,
        bid: 11.90,
        ask: 12.20,
        bid_size: 35,
        ask_size: 40,
        last: Some(12.0),
        volume: 4520,
        open_interest: 18350,
        oi_date,
        quote_time: close,
        underlying_price: 5150.48,
    };
    let aapl = OptionQuote {
        underlying: "AAPL".into(),
        option_symbol: "AAPL240315C00172500".into(),
        strike: 172.5,
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
        bid: 1.20,
        ask: 1.25,
        bid_size: 150,
        ask_size: 180,
        last: Some(1.23),
        volume: 18231,
        open_interest: 25102,
        underlying_price: 173.0, // mid of 172.99 / 173.01
        ..spx.clone()
    };
    let want = vec![
        spx.clone(),
        OptionQuote {
            option_symbol: "SPXW240322P05200000".into(),
            expiration: date(2024, 3, 22),
            strike: 5200.0,
            option_type: OptionType::Put,
            settlement: SettlementStyle::Pm,
            bid: 62.10,
            ask: 63.00,
            bid_size: 15,
            ask_size: 18,
            last: Some(62.40),
            volume: 1045,
            open_interest: 3012,
            ..spx.clone()
        },
        OptionQuote {
            option_symbol: "SPXW240419C05300000".into(),
            expiration: date(2024, 4, 19),
            strike: 5300.0,
            settlement: SettlementStyle::Pm,
            bid: 8.0,
            ask: 8.4,
            bid_size: 22,
            ask_size: 25,
            last: None, // no trades
            volume: 0,
            open_interest: 741,
            underlying_price: 5149.88, // EOD underlying quote is 0/0: active_underlying_price_1545
            ..spx.clone()
        },
        aapl.clone(),
        OptionQuote {
            option_symbol: "AAPL240315P00172500".into(),
            option_type: OptionType::Put,
            bid: 0.64,
            ask: 0.68,
            bid_size: 110,
            ask_size: 90,
            last: None,
            volume: 0,
            open_interest: 14230,
            ..aapl.clone()
        },
        OptionQuote {
            option_symbol: "AAPL240621P00200000".into(),
            expiration: date(2024, 6, 21),
            strike: 200.0,
            option_type: OptionType::Put,
            bid: 26.70,
            ask: 27.15,
            bid_size: 40,
            ask_size: 41,
            last: Some(26.90),
            volume: 12,
            open_interest: 8810,
            ..aapl.clone()
        },
    ];
    let got: Vec<OptionQuote> = sink.quotes().cloned().collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "row {i}");
    }
}

#[test]
fn bars_sample_imports_field_by_field() {
    let path = data("spy_bars_sample.csv");
    assert_eq!(symbol_from_file_name(Path::new("spy.csv")).unwrap(), "SPY");
    assert_eq!(
        symbol_from_file_name(Path::new("BRK.B.csv")).unwrap(),
        "BRK.B"
    );
    let kind = ImportKind::Bars {
        symbol: "SPY".into(),
    };
    let mut sink = MemorySink::new();
    let summary = import_file(&path, &kind, &mut sink).unwrap();
    assert_eq!((summary.kind, summary.rows), ("bars", 5));
    let bar = |d: u32, o: f64, h: f64, l: f64, c: f64, a: f64, v: u64| DailyBar {
        symbol: "SPY".into(),
        date: date(2024, 3, d),
        open: o,
        high: h,
        low: l,
        close: c,
        volume: v,
        adj_close: a,
    };
    let want = [
        bar(11, 510.48, 511.88, 508.50, 511.28, 508.76, 62_557_200),
        bar(12, 513.45, 517.38, 510.86, 516.78, 514.23, 73_114_400),
        bar(13, 517.11, 517.29, 514.49, 515.97, 513.42, 55_104_100),
        bar(14, 516.97, 517.13, 511.82, 514.95, 512.41, 110_171_800),
        bar(15, 510.21, 511.70, 508.12, 509.83, 508.63, 107_646_300),
    ];
    let got: Vec<&DailyBar> = sink.bars().collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(*g, w);
    }
}

#[test]
fn yahoo_style_bars_without_adj_close_use_the_close() {
    let text =
        "Date,Open,High,Low,Close,Volume,Dividends\n03/15/2024,170.5,172.0,169.9,171.2,1234.0,0\n";
    let mut sink = MemorySink::new();
    let kind = ImportKind::Bars {
        symbol: "AAPL".into(),
    };
    optics_ingest::vendor::import_reader(
        text.as_bytes(),
        "aapl.csv",
        None,
        &kind,
        &mut sink,
        Default::default(),
    )
    .unwrap();
    let bar = sink.bars().next().unwrap();
    assert_eq!(bar.date, date(2024, 3, 15));
    assert_eq!(bar.adj_close, 171.2);
    assert_eq!(bar.volume, 1234);
}
