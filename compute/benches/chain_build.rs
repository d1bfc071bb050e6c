//! Chain-building benchmark: prints the time and contracts/s of `build_chain` (quotes as rows)
//! and `build_chain_batch` (an `option_quotes` batch in, a `chain` batch out, validation both
//! ways) for a SPY-sized chain (~8k contracts) and a 100k-contract chain, on 1 and 2 threads.
//! Run with `cargo bench -p optics-compute --bench chain_build`. It prints medians; it asserts
//! nothing about time.

use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, Days, NaiveDate, Utc};
use optics_compute::chain::{ChainMarket, build_chain, build_chain_batch};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, price};
use optics_compute::time::years_to_expiry;
use optics_schemas::{ChainRow, ExerciseStyle, OptionQuote, Record, SettlementStyle, occ_symbol};
use optics_tests::bench::time_median;

/// Timed repetitions; the median is reported.
const REPEATS: usize = 7;
const SPOT: f64 = 600.0;
const RATE: f64 = 0.045;
const CARRY: f64 = 0.013;

fn as_of() -> DateTime<Utc> {
    DateTime::from_timestamp(1_795_186_800, 0).expect("valid time") // 2026-11-20 15:00 UTC
}

fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).expect("valid date")
}

fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A listed-like chain of SPY priced by BSM on a skewed smile: `expirations` expirations
/// (1, 2, 5, 10, 17 … days: i² + 1), `strikes` strikes each spread evenly over ±4 standard
/// deviations around the forward (to the thousandth of a dollar), calls and puts, bid/ask
/// two percent around the value rounded to cents (no bid when the value rounds to nothing).
fn spy_like_chain(expirations: u64, strikes: u32) -> Vec<OptionQuote> {
    let mut quotes = Vec::with_capacity(2 * strikes as usize * expirations as usize);
    for i in 0..expirations {
        let expiration = trade_date() + Days::new(i * i + 1);
        let years = years_to_expiry(as_of(), expiration);
        let forward = SPOT * ((RATE - CARRY) * years).exp();
        let width = 4.0 * 0.2 * years.sqrt();
        for j in 0..strikes {
            let z = -width + 2.0 * width * f64::from(j) / f64::from(strikes.max(2) - 1);
            let strike = (forward * z.exp() * 1000.0).round() / 1000.0;
            let k = (strike / forward).ln();
            let vol = 0.18 - 0.25 * k + 0.8 * k * k;
            for (option_type, quote_type) in [
                (OptionType::Call, optics_schemas::OptionType::Call),
                (OptionType::Put, optics_schemas::OptionType::Put),
            ] {
                let inputs = OptionInputs {
                    option_type,
                    model: PricingModel::BlackScholesMerton,
                    underlying: SPOT,
                    strike,
                    years,
                    rate: RATE,
                    dividend_yield: CARRY,
                };
                let value = price(&inputs, vol).expect("valid contract");
                let half_spread = (0.01f64).max(0.01 * value);
                let bid = round_cents(value - half_spread).max(0.0);
                let ask = round_cents(value + half_spread);
                quotes.push(OptionQuote {
                    underlying: "SPY".to_owned(),
                    option_symbol: occ_symbol("SPY", expiration, quote_type, strike)
                        .expect("valid symbol"),
                    expiration,
                    strike,
                    option_type: quote_type,
                    settlement: SettlementStyle::Pm,
                    exercise_style: ExerciseStyle::American,
                    bid,
                    ask,
                    bid_size: 50,
                    ask_size: 50,
                    last: Some(round_cents(value)),
                    volume: 1_000,
                    open_interest: 10_000,
                    oi_date: trade_date().pred_opt().expect("valid date"),
                    quote_time: as_of(),
                    underlying_price: SPOT,
                });
            }
        }
    }
    quotes
}

fn per_second(count: usize, time: Duration) -> f64 {
    count as f64 / time.as_secs_f64()
}

fn main() {
    let market = ChainMarket {
        underlying: "SPY".to_owned(),
        trade_date: trade_date(),
        as_of: as_of(),
        spot: None,
        rate: RATE,
        dividend_yield: CARRY,
        model: PricingModel::BlackScholesMerton,
    };
    println!("chain_build: medians of {REPEATS} runs (shared 2-core machine: figures under load)");
    for (label, expirations, strikes) in [("SPY-sized", 25, 160), ("100k contracts", 50, 1_000)] {
        let quotes = spy_like_chain(expirations, strikes);
        let batch = OptionQuote::to_batch(&quotes).expect("valid quotes");
        let snapshot = build_chain(&quotes, &market).expect("chain builds");
        println!(
            "{label}: {} contracts, {} rows, {} priced, {} solved",
            quotes.len(),
            snapshot.rows.len(),
            snapshot.stats.priced,
            snapshot.stats.solved
        );
        // Where the time of the Arrow entry goes (the default rayon pool).
        let chain_batch = ChainRow::to_batch(&snapshot.rows).expect("valid rows");
        let read_quotes = time_median(REPEATS, || {
            black_box(OptionQuote::from_batch(black_box(&batch)).expect("valid quotes"));
        });
        let write_rows = time_median(REPEATS, || {
            black_box(ChainRow::to_batch(black_box(&snapshot.rows)).expect("valid rows"));
        });
        let read_rows = time_median(REPEATS, || {
            black_box(ChainRow::from_batch(black_box(&chain_batch)).expect("valid rows"));
        });
        println!(
            "  parts: OptionQuote::from_batch {:.2} ms, ChainRow::to_batch {:.2} ms, \
             ChainRow::from_batch {:.2} ms",
            read_quotes.as_secs_f64() * 1e3,
            write_rows.as_secs_f64() * 1e3,
            read_rows.as_secs_f64() * 1e3,
        );
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("thread pool");
            let rows_time = pool.install(|| {
                time_median(REPEATS, || {
                    black_box(build_chain(black_box(&quotes), &market).expect("chain builds"));
                })
            });
            let batch_time = pool.install(|| {
                time_median(REPEATS, || {
                    black_box(build_chain_batch(black_box(&batch), &market).expect("chain builds"));
                })
            });
            println!(
                "  {threads} thread(s): build_chain {:.2} ms ({:.2} M contracts/s, {:.2} M rows/s); \
                 build_chain_batch {:.2} ms ({:.2} M contracts/s, {:.2} M rows/s)",
                rows_time.as_secs_f64() * 1e3,
                per_second(quotes.len(), rows_time) / 1e6,
                per_second(snapshot.rows.len(), rows_time) / 1e6,
                batch_time.as_secs_f64() * 1e3,
                per_second(quotes.len(), batch_time) / 1e6,
                per_second(snapshot.rows.len(), batch_time) / 1e6,
            );
        }
    }
}
