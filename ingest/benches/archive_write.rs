//! Quote-archive write rate: 1 M option quotes (4 underlyings, one session) appended in
//! batches of 50 000 to an in-memory store and to a local temp directory, as MB/s of Parquet
//! written and quotes/s; median of 5 runs. Prints figures, asserts nothing about time.
//!
//! `cargo bench -p optics-ingest --bench archive_write`

use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, NaiveDate};
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_ingest::archive::QuoteArchive;
use optics_schemas::{ExerciseStyle, OptionQuote, OptionType, SettlementStyle, occ_symbol};

const QUOTES: usize = 1_000_000;
const BATCH: usize = 50_000;
const RUNS: usize = 5;
const UNDERLYINGS: [&str; 4] = ["SPY", "QQQ", "IWM", "AAPL"];

fn quotes() -> Vec<OptionQuote> {
    let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let open = day.and_hms_opt(14, 30, 0).unwrap().and_utc();
    (0..QUOTES)
        .map(|i| {
            let underlying = UNDERLYINGS[i % UNDERLYINGS.len()];
            let contract = i / UNDERLYINGS.len();
            let expiration = day + Duration::days(7 * (contract % 20) as i64);
            let strike = 400.0 + ((contract / 20) % 200) as f64;
            let option_type = if contract.is_multiple_of(2) {
                OptionType::Call
            } else {
                OptionType::Put
            };
            let bid = 0.05 + (i % 997) as f64 * 0.01;
            OptionQuote {
                underlying: underlying.to_owned(),
                option_symbol: occ_symbol(underlying, expiration, option_type, strike).unwrap(),
                expiration,
                strike,
                option_type,
                settlement: SettlementStyle::Pm,
                exercise_style: ExerciseStyle::American,
                bid,
                ask: bid + 0.05,
                bid_size: (i % 500) as u32,
                ask_size: (i % 300) as u32,
                last: (!i.is_multiple_of(3)).then_some(bid + 0.02),
                volume: (i % 10_000) as u64,
                open_interest: (i % 50_000) as u64,
                oi_date: day - Duration::days(1),
                quote_time: open + Duration::milliseconds(i as i64 * 20),
                underlying_price: 500.0,
            }
        })
        .collect()
}

/// One run: seconds and bytes written.
fn run(archive: &QuoteArchive, rows: &[OptionQuote], rt: &tokio::runtime::Runtime) -> (f64, u64) {
    let start = Instant::now();
    let mut bytes = 0;
    for batch in rows.chunks(BATCH) {
        let parts = rt.block_on(archive.append(batch)).unwrap();
        bytes += parts.iter().map(|p| p.bytes).sum::<u64>();
    }
    (start.elapsed().as_secs_f64(), bytes)
}

fn report(name: &str, mut runs: Vec<(f64, u64)>) {
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (secs, bytes) = runs[runs.len() / 2];
    println!(
        "archive write, {name:<10} {QUOTES} quotes in {secs:.3} s: {:>6.1} MB/s of Parquet, \
         {:>5.2} M quotes/s, {:.1} bytes/quote (median of {RUNS})",
        bytes as f64 / secs / 1e6,
        QUOTES as f64 / secs / 1e6,
        bytes as f64 / QUOTES as f64,
    );
}

fn main() {
    let rows = quotes();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    let memory: Vec<(f64, u64)> = (0..RUNS)
        .map(|_| {
            let archive = QuoteArchive::new(Arc::new(InMemory::new()), Path::default());
            run(&archive, &rows, &rt)
        })
        .collect();
    report("in-memory", memory);

    let dir = std::env::temp_dir().join(format!("optics-archive-bench-{}", std::process::id()));
    let local: Vec<(f64, u64)> = (0..RUNS)
        .map(|_| {
            let _ = std::fs::remove_dir_all(&dir);
            let archive = QuoteArchive::local(&dir).unwrap();
            run(&archive, &rows, &rt)
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    report("local dir", local);
}
