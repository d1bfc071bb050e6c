//! Bus codec benchmark: a 10 000-quote option batch through the bus envelope. Prints, per
//! step, the median of several runs in quotes/s and MB/s (of encoded message bytes):
//! rows → validated batch, batch → message bytes (Arrow IPC), bytes → validated batch, and the
//! encode + decode round trip. Run with `cargo bench -p optics-schemas --bench bus_codec`.
//! It prints figures; it asserts nothing about time.

use std::hint::black_box;
use std::time::Duration;

use optics_schemas::{DataBatch, Message, OptionQuote, Record, decode, encode};
use optics_tests::bench::time_median;
use optics_tests::fixtures::synthetic_chain;

/// Quotes in the batch.
const QUOTES: usize = 10_000;
/// Timed repetitions; the median is reported.
const REPEATS: usize = 15;

fn time(run: impl FnMut()) -> Duration {
    time_median(REPEATS, run)
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
    // A SPY-like chain: 25 expirations × 200 strikes × call/put.
    let rows = synthetic_chain("SPY", 587.12, 25, 200, 490.0, 0, QUOTES);
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
