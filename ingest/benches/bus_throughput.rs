//! Embedded bus throughput: option-quote batches (1,000 rows each, 16 underlyings) published
//! from 1 or 2 tasks and consumed by one consumer group (1 or 2 members) that counts the rows
//! and commits after every batch. Prints the median of several runs in quotes/s:
//! - as the embedded bus runs (decoded `Message`s passed in memory), and
//! - for reference, with an encode + decode of every message on the publishing side (what a
//!   Kafka round trip adds in CPU, without the network).
//!
//! Run with `cargo bench -p optics-ingest --bench bus_throughput`. It prints figures; it
//! asserts nothing about time (only that every row arrived).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate};
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_schemas::{
    Bus, DataBatch, ExerciseStyle, Message, OptionQuote, OptionType, SettlementStyle, decode,
    encode, occ_symbol,
};

/// Quotes per message.
const ROWS_PER_BATCH: usize = 1_000;
/// Distinct underlyings (keys).
const UNDERLYINGS: usize = 16;
/// Messages per run.
const MESSAGES: usize = 4_000;
/// Messages a consumer takes at most per `next_batch`.
const MAX_BATCH: usize = 64;
/// Timed repetitions; the median is reported.
const REPEATS: usize = 7;

/// A deterministic xorshift generator, so every run measures the same batches.
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A chain slice of `underlying`: 5 expirations × 100 strikes × call/put.
fn quotes(underlying: &str, seed: u64) -> Vec<OptionQuote> {
    let mut rng = Rng(0x5eed_0fc0_ffee ^ seed);
    let first = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    let quote_time = DateTime::from_timestamp_micros(1_795_188_600_000_000).unwrap();
    let spot = 100.0 + 10.0 * seed as f64;
    let mut rows = Vec::with_capacity(ROWS_PER_BATCH);
    for e in 0..5 {
        let expiration = first + chrono::Days::new(7 * e);
        for k in 0..100 {
            let strike = spot - 50.0 + k as f64;
            for option_type in [OptionType::Call, OptionType::Put] {
                let moneyness = match option_type {
                    OptionType::Call => spot - strike,
                    OptionType::Put => strike - spot,
                };
                let value = moneyness.max(0.0) + 4.0 * (-(moneyness / 20.0).powi(2)).exp();
                let half_width = 0.01 + 0.02 * value.sqrt() * rng.next_f64();
                let bid = ((value - half_width).max(0.0) * 100.0).round() / 100.0;
                let ask = ((value + half_width) * 100.0).round() / 100.0;
                rows.push(OptionQuote {
                    underlying: underlying.to_owned(),
                    option_symbol: occ_symbol(underlying, expiration, option_type, strike).unwrap(),
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

#[derive(Clone, Copy)]
struct Scenario {
    publishers: usize,
    consumers: usize,
    round_trip: bool,
}

/// One run: every message published and consumed; answers the elapsed time.
async fn run(templates: Arc<Vec<Message>>, s: Scenario) -> Duration {
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::new(EmbeddedBusConfig::default()));
    let topic = optics_schemas::bus::topics::OPTION_QUOTES;
    let mut consumers = Vec::new();
    for _ in 0..s.consumers {
        let mut sub = bus.subscribe(topic, "bench").await.unwrap();
        consumers.push(tokio::spawn(async move {
            let mut rows = 0;
            while let Some(batch) = sub.next_batch(MAX_BATCH).await.unwrap() {
                for d in &batch {
                    if let Message::Data(data) = &d.message {
                        rows += data.num_rows();
                    }
                }
                sub.commit().await.unwrap();
            }
            rows
        }));
    }
    let start = Instant::now();
    let publishers: Vec<_> = (0..s.publishers)
        .map(|p| {
            let bus = Arc::clone(&bus);
            let templates = Arc::clone(&templates);
            tokio::spawn(async move {
                for i in (p..MESSAGES).step_by(s.publishers) {
                    let template = &templates[i % templates.len()];
                    let message = if s.round_trip {
                        decode(&encode(template).unwrap()).unwrap()
                    } else {
                        template.clone()
                    };
                    bus.publish(topic, message).await.unwrap();
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    bus.close();
    let mut rows = 0;
    for c in consumers {
        rows += c.await.unwrap();
    }
    let elapsed = start.elapsed();
    assert_eq!(rows, MESSAGES * ROWS_PER_BATCH, "every row arrives");
    elapsed
}

fn main() {
    let templates: Vec<Message> = (0..UNDERLYINGS)
        .map(|i| {
            let key = format!("U{i:02}");
            Message::Data(DataBatch::from_rows(key.clone(), &quotes(&key, i as u64)).unwrap())
        })
        .collect();
    let templates = Arc::new(templates);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .build()
        .unwrap();
    println!(
        "optics embedded bus benchmark: {MESSAGES} messages × {ROWS_PER_BATCH} option quotes, \
         {UNDERLYINGS} underlyings, {threads} worker threads, capacity {} messages/topic, \
         median of {REPEATS}",
        EmbeddedBusConfig::default().capacity_per_topic
    );
    for round_trip in [false, true] {
        for (publishers, consumers) in [(1, 1), (2, 1), (2, 2)] {
            let s = Scenario {
                publishers,
                consumers,
                round_trip,
            };
            runtime.block_on(run(Arc::clone(&templates), s)); // warm-up
            let mut samples: Vec<Duration> = (0..REPEATS)
                .map(|_| runtime.block_on(run(Arc::clone(&templates), s)))
                .collect();
            samples.sort();
            let median = samples[REPEATS / 2];
            let quotes = (MESSAGES * ROWS_PER_BATCH) as f64;
            println!(
                "{:<24} {publishers} publisher(s), {consumers} member(s)  {:>9.3} ms  {:>9.2} M quotes/s  {:>9.0} messages/s",
                if round_trip {
                    "encode+decode per msg"
                } else {
                    "in memory (no encoding)"
                },
                median.as_secs_f64() * 1e3,
                quotes / median.as_secs_f64() / 1e6,
                MESSAGES as f64 / median.as_secs_f64(),
            );
        }
    }
}
