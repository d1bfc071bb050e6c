//! ORATS strikes import: the committed sample, field by field, and the large-file streaming
//! contract.

use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};
use optics_ingest::vendor::{
    ImportBatch, ImportKind, ImportOptions, ImportSink, MemorySink, Progress, QuoteReader,
    SinkError, import_file, import_reader,
};
use optics_schemas::{ExerciseStyle, OptionQuote, OptionType, SettlementStyle};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vendor/orats_strikes_sample.csv")
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// 2024-03-14 16:00 New York (EDT since 2024-03-10) is 20:00 UTC.
fn close_0314() -> DateTime<Utc> {
    "2024-03-14T20:00:00Z".parse().unwrap()
}

fn spy_base() -> OptionQuote {
    OptionQuote {
        underlying: "SPY".into(),
        option_symbol: String::new(),
        expiration: date(2024, 3, 15),
        strike: 510.0,
        option_type: OptionType::Call,
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
        bid: 0.0,
        ask: 0.0,
        bid_size: 0,
        ask_size: 0,
        last: None,
        volume: 0,
        open_interest: 0,
        oi_date: date(2024, 3, 14),
        quote_time: close_0314(),
        underlying_price: 513.01,
    }
}

fn expected() -> Vec<OptionQuote> {
    let spy = spy_base();
    let spx = OptionQuote {
        underlying: "SPX".into(),
        exercise_style: ExerciseStyle::European,
        underlying_price: 5150.48, // spotPrice (the cash level), not stockPrice 5148.20
        ..spy_base()
    };
    let row = |base: &OptionQuote,
               symbol: &str,
               expiration: NaiveDate,
               strike: f64,
               option_type: OptionType,
               quote: (f64, f64, u32, u32, u64, u64)| OptionQuote {
        option_symbol: symbol.into(),
        expiration,
        strike,
        option_type,
        bid: quote.0,
        ask: quote.1,
        bid_size: quote.2,
        ask_size: quote.3,
        volume: quote.4,
        open_interest: quote.5,
        ..base.clone()
    };
    use OptionType::{Call as C, Put as P};
    let (m15, w22, a19) = (date(2024, 3, 15), date(2024, 3, 22), date(2024, 4, 19));
    let spx_am = OptionQuote {
        settlement: SettlementStyle::Am,
        ..spx.clone()
    };
    vec![
        row(
            &spy,
            "SPY240315C00510000",
            m15,
            510.0,
            C,
            (3.20, 3.31, 250, 310, 15234, 28711),
        ),
        row(
            &spy,
            "SPY240315P00510000",
            m15,
            510.0,
            P,
            (0.22, 0.23, 420, 380, 9821, 40210),
        ),
        row(
            &spy,
            "SPY240315C00515000",
            m15,
            515.0,
            C,
            (0.61, 0.63, 510, 640, 30110, 35502),
        ),
        row(
            &spy,
            "SPY240315P00515000",
            m15,
            515.0,
            P,
            (2.55, 2.60, 150, 175, 4410, 22013),
        ),
        row(
            &spy,
            "SPY240322C00510000",
            w22,
            510.0,
            C,
            (5.10, 5.14, 80, 95, 2210, 11804),
        ),
        row(
            &spy,
            "SPY240322P00510000",
            w22,
            510.0,
            P,
            (1.62, 1.65, 120, 140, 3120, 15230),
        ),
        row(
            &spy,
            "SPY240419C00600000",
            a19,
            600.0,
            C,
            (0.0, 0.01, 0, 410, 12, 3021),
        ),
        row(
            &spy,
            "SPY240419P00600000",
            a19,
            600.0,
            P,
            (86.50, 87.40, 25, 25, 0, 88),
        ),
        // The third-Friday SPX series is the AM-settled monthly under root SPX …
        row(
            &spx_am,
            "SPX240315C05150000",
            m15,
            5150.0,
            C,
            (11.90, 12.20, 35, 40, 4520, 18350),
        ),
        row(
            &spx_am,
            "SPX240315P05150000",
            m15,
            5150.0,
            P,
            (10.80, 11.10, 30, 28, 5210, 21870),
        ),
        // … any other date is the PM-settled SPXW weekly.
        row(
            &spx,
            "SPXW240322C05200000",
            w22,
            5200.0,
            C,
            (13.40, 13.80, 20, 22, 8120, 5250),
        ),
        row(
            &spx,
            "SPXW240322P05200000",
            w22,
            5200.0,
            P,
            (62.10, 63.00, 15, 18, 1045, 3012),
        ),
    ]
}

#[test]
fn sample_file_imports_field_by_field() {
    let mut sink = MemorySink::new();
    let summary = import_file(&sample(), &ImportKind::OratsStrikes, &mut sink).unwrap();
    assert_eq!(summary.kind, "orats-strikes");
    assert_eq!(summary.lines, 6);
    assert_eq!(summary.rows, 12);
    assert_eq!(summary.bytes, std::fs::metadata(sample()).unwrap().len());
    assert_eq!(sink.commits(), 1);
    assert_eq!(sink.aborts(), 0);
    assert!(sink.staged().is_empty());
    let got: Vec<OptionQuote> = sink.quotes().cloned().collect();
    let want = expected();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "row {i}");
    }
}

#[test]
fn reader_batches_are_capped_and_columns_may_be_reordered() {
    // Reverse the column order and drop every ignored column except one.
    let text = std::fs::read_to_string(sample()).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let keep: Vec<usize> = (0..lines[0].len())
        .rev()
        .filter(|&i| !lines[0][i].ends_with("Iv") && lines[0][i] != "delta")
        .collect();
    let shuffled: String = lines
        .iter()
        .map(|l| keep.iter().map(|&i| l[i]).collect::<Vec<_>>().join(",") + "\n")
        .collect();
    let reader = QuoteReader::orats_strikes(shuffled.as_bytes(), "shuffled.csv", 5).unwrap();
    let batches: Vec<Vec<OptionQuote>> = reader.map(Result::unwrap).collect();
    // Two rows per line, at most 5 per batch: 4 + 4 + 4.
    assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 4]);
    assert_eq!(batches.concat(), expected());
}

#[test]
fn spot_price_falls_back_to_stock_price() {
    let text = "ticker,tradeDate,expirDate,strike,stockPrice,spotPrice,callVolume,callOpenInterest,\
callBidSize,callAskSize,putVolume,putOpenInterest,putBidSize,putAskSize,callBidPrice,callAskPrice,\
putBidPrice,putAskPrice\n\
AAPL,2024-03-14,2024-03-15,172.5,173.0,,1,2,3,4,5,6,7,8,1.2,1.25,0.64,0.68\n";
    let rows: Vec<OptionQuote> = QuoteReader::orats_strikes(text.as_bytes(), "t.csv", 100)
        .unwrap()
        .flat_map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|q| q.underlying_price == 173.0));
    assert_eq!(rows[1].option_symbol, "AAPL240315P00172500");
}

/// A synthetic ORATS file of `lines` lines, produced on the fly (never held in memory).
struct Generated {
    next_line: usize,
    lines: usize,
    pending: Vec<u8>,
    offset: usize,
}

const HEADER: &str = "ticker,tradeDate,expirDate,dte,strike,stockPrice,callVolume,callOpenInterest,\
callBidSize,callAskSize,putVolume,putOpenInterest,putBidSize,putAskSize,callBidPrice,callValue,\
callAskPrice,putBidPrice,putValue,putAskPrice,smvVol,spotPrice\n";

impl Generated {
    fn new(lines: usize) -> Self {
        Self {
            next_line: 0,
            lines,
            pending: HEADER.as_bytes().to_vec(),
            offset: 0,
        }
    }

    fn line(i: usize) -> String {
        let expirations = [
            "2024-03-15",
            "2024-03-22",
            "04/19/2024",
            "2024-06-21",
            "12/19/2025",
        ];
        let expiration = expirations[(i / 1000) % expirations.len()];
        let strike = 100.0 + (i % 1000) as f64 * 0.5;
        let call = (600.0 - strike).max(0.0) * 0.01 + 0.05;
        format!(
            "SPY,03/14/2024,{expiration},7,{strike},513.01,{},{},10,12,{},{},9,11,{call:.2},0,{:.2},0.05,0,0.07,0.15,513.01\n",
            i % 97,
            i % 5000,
            i % 89,
            i % 4000,
            call + 0.02,
        )
    }
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.offset == self.pending.len() {
            if self.next_line == self.lines {
                return Ok(0);
            }
            self.pending = Self::line(self.next_line).into_bytes();
            self.offset = 0;
            self.next_line += 1;
        }
        let n = buf.len().min(self.pending.len() - self.offset);
        buf[..n].copy_from_slice(&self.pending[self.offset..self.offset + n]);
        self.offset += n;
        Ok(n)
    }
}

/// Counts rows and remembers the largest batch, keeping nothing.
#[derive(Default)]
struct CountingSink {
    rows: usize,
    batches: usize,
    max_batch: usize,
    committed: bool,
}

impl ImportSink for CountingSink {
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError> {
        self.rows += batch.len();
        self.batches += 1;
        self.max_batch = self.max_batch.max(batch.len());
        Ok(())
    }
    fn commit(&mut self) -> Result<(), SinkError> {
        self.committed = true;
        Ok(())
    }
    fn abort(&mut self) {}
}

#[test]
fn a_200k_line_file_streams_in_capped_batches() {
    const LINES: usize = 200_000;
    const CAP: usize = 4_999; // odd on purpose: a line is two rows, a batch never exceeds it
    let total: u64 = HEADER.len() as u64
        + (0..LINES)
            .map(|i| Generated::line(i).len() as u64)
            .sum::<u64>();
    let mut sink = CountingSink::default();
    let mut reports: Vec<Progress> = Vec::new();
    let mut on_progress = |p: Progress| reports.push(p);
    let summary = import_reader(
        Generated::new(LINES),
        "generated.csv",
        Some(total),
        &ImportKind::OratsStrikes,
        &mut sink,
        ImportOptions {
            batch_rows: CAP,
            progress: Some(&mut on_progress),
        },
    )
    .unwrap();
    assert!(sink.committed);
    assert_eq!(sink.rows, 2 * LINES);
    assert_eq!(summary.rows, 2 * LINES as u64);
    assert_eq!(summary.lines, LINES as u64);
    assert!(sink.max_batch <= CAP, "max batch {}", sink.max_batch);
    assert_eq!(sink.max_batch, CAP - 1);
    assert_eq!(sink.batches as u64, summary.batches);
    assert_eq!(summary.bytes, total);
    // Progress: once per batch and once at the end, monotonic, ending at the total.
    assert_eq!(reports.len(), sink.batches + 1);
    assert!(
        reports
            .windows(2)
            .all(|w| w[0].bytes_read <= w[1].bytes_read)
    );
    assert_eq!(reports.last().unwrap().bytes_read, total);
    assert!(reports.iter().all(|p| p.total_bytes == Some(total)));
}
