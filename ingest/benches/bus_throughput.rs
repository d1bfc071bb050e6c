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

use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_schemas::{Bus, DataBatch, Message, OptionQuote, decode, encode};
use optics_tests::bench::median;
use optics_tests::fixtures::synthetic_chain;

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

/// A chain slice of `underlying`: 5 expirations × 100 strikes × call/put.
fn chain_slice(underlying: &str, seed: u64) -> Vec<OptionQuote> {
    let spot = 100.0 + 10.0 * seed as f64;
    synthetic_chain(underlying, spot, 5, 100, spot - 50.0, seed, ROWS_PER_BATCH)
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
            Message::Data(DataBatch::from_rows(key.clone(), &chain_slice(&key, i as u64)).unwrap())
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
            let median = median(
                (0..REPEATS)
                    .map(|_| runtime.block_on(run(Arc::clone(&templates), s)))
                    .collect(),
            );
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
