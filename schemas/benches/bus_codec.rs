//! Bus codec benchmark: a 10 000-quote option batch through the bus envelope. Prints, per
//! step, the median of several runs in quotes/s and MB/s (of encoded message bytes):
//! rows → validated batch, batch → message bytes (Arrow IPC), bytes → validated batch, and the
//! encode + decode round trip. Run with `cargo bench -p optics-schemas --bench bus_codec`.
//! It prints figures; it asserts nothing about time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate};
use optics_schemas::{
    DataBatch, ExerciseStyle, Message, OptionQuote, OptionType, Record, SettlementStyle, decode,
    encode, occ_symbol,
};

/// Quotes in the batch.
const QUOTES: usize = 10_000;
/// Timed repetitions; the median is reported.
const REPEATS: usize = 15;

/// A deterministic xorshift generator, so every run measures the same batch.
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A SPY-like chain: 25 expirations × 200 strikes × call/put, realistic widths and sizes.
fn chain(n: usize) -> Vec<OptionQuote> {
    let mut rng = Rng(0x5eed_0fc0_ffee);
    let first = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let quote_time = DateTime::from_timestamp_micros(1_795_188_600_000_000).unwrap();
    let spot = 587.12;
    let mut rows = Vec::with_capacity(n);
    'outer: for e in 0..25 {
        let expiration = first + chrono::Days::new(7 * e);
        for k in 0..200 {
            let strike = 490.0 + k as f64;
            for option_type in [OptionType::Call, OptionType::Put] {
                if rows.len() == n {
                    break 'outer;
                }
                let moneyness = match option_type {
                    OptionType::Call => spot - strike,
                    OptionType::Put => strike - spot,
                };
                let value = moneyness.max(0.0) + 8.0 * (-(moneyness / 40.0).powi(2)).exp();
                let half_width = 0.01 + 0.02 * value.sqrt() * rng.next_f64();
                let bid = ((value - half_width).max(0.0) * 100.0).round() / 100.0;
                let ask = ((value + half_width) * 100.0).round() / 100.0;
                rows.push(OptionQuote {
                    underlying: "SPY".to_owned(),
                    option_symbol: occ_symbol("SPY", expiration, option_type, strike).unwrap(),
                    expiration,
                    strike,
                    option_type,
                    settlement: SettlementStyle::Pm,
                    exercise_style: ExerciseStyle::American,
                    bid,
                    ask,
                    bid_size: (rng.next_f64() * 500.0) as u32,
                    ask_size: (rng.next_f64() * 500.0) as u32,
                    last: (rng.next_f64() < 0.9).then_some(0.5 * (bid + ask)),
                    volume: (rng.next_f64() * 20_000.0) as u64,
                    open_interest: (rng.next_f64() * 100_000.0) as u64,
                    oi_date: first.pred_opt().unwrap(),
                    quote_time,
                    underlying_price: spot,
                });
            }
        }
    }
    rows
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(mut run: impl FnMut()) -> Duration {
    run(); // warm-up
    median(
        (0..REPEATS)
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed()
            })
            .collect(),
    )
}

fn report(step: &str, elapsed: Duration, bytes: usize) {
    let secs = elapsed.as_secs_f64();
    println!(
        "{step:<34} {:>9.3} ms  {:>7.2} M quotes/s  {:>8.0} MB/s",
        secs * 1e3,
        QUOTES as f64 / secs / 1e6,
        bytes as f64 / secs / 1e6
    );
}

fn main() {
    let rows = chain(QUOTES);
    assert_eq!(rows.len(), QUOTES);
    let message = Message::Data(DataBatch::from_rows("SPY", &rows).unwrap());
    let bytes = encode(&message).unwrap();
    assert_eq!(decode(&bytes).unwrap(), message);
    println!(
        "optics bus codec benchmark: {QUOTES} option quotes, {} bytes encoded ({:.1} bytes/quote), median of {REPEATS}",
        bytes.len(),
        bytes.len() as f64 / QUOTES as f64
    );

    let to_batch = time(|| {
        black_box(OptionQuote::to_batch(black_box(&rows)).unwrap());
    });
    report("rows -> validated batch", to_batch, bytes.len());
    let enc = time(|| {
        black_box(encode(black_box(&message)).unwrap());
    });
    report("encode (batch -> bytes)", enc, bytes.len());
    let dec = time(|| {
        black_box(decode(black_box(&bytes)).unwrap());
    });
    report("decode (bytes -> validated batch)", dec, bytes.len());
    let round_trip = time(|| {
        black_box(decode(&encode(black_box(&message)).unwrap()).unwrap());
    });
    report("encode + decode", round_trip, bytes.len());
    let Message::Data(batch) = &message else {
        unreachable!()
    };
    let to_rows = time(|| {
        black_box(batch.rows::<OptionQuote>().unwrap());
    });
    report("batch -> rows (no validation)", to_rows, bytes.len());
}
