//! Kafka bus throughput through librdkafka's in-process mock cluster (one broker, loopback):
//! option-quote batches (1,000 rows each, 16 underlyings, the bus codec's Arrow IPC) published
//! by the idempotent producer and consumed by a one-member consumer group that counts the rows
//! and commits after every batch. Prints medians in quotes/s for
//! - produce: every publish (encode + enqueue) and the final flush (broker acknowledgements),
//! - consume: receiving (fetch + decode) and committing everything just produced,
//! - end to end: publisher and consumer running at once, until the last row arrives.
//!
//! Each timed run gets a fresh mock cluster, so the mock's per-partition retention (about
//! 5 MB) never drops unread messages; the group join (about 3 s on the mock) is not timed.
//! The mock broker runs in this process and shares its CPUs, so the figures are a lower bound
//! of the client's cost, not of a real cluster's throughput.
//!
//! Run with `cargo bench -p optics-ingest --features kafka --bench kafka_throughput` (the Kafka
//! bus is behind the `kafka` feature). It prints figures; it asserts nothing about time (only
//! that every row arrived).

use std::time::{Duration, Instant};

use optics_ingest::bus::kafka::{KafkaBus, KafkaBusConfig, KafkaSubscription};
use optics_schemas::bus::topics::OPTION_QUOTES;
use optics_schemas::{Bus, DataBatch, Message, OptionQuote, Subscription, encode};
use optics_tests::bench::median;
use optics_tests::fixtures::synthetic_chain;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;

/// Quotes per message.
const ROWS_PER_BATCH: usize = 1_000;
/// Distinct underlyings (keys).
const UNDERLYINGS: usize = 16;
/// Messages per run: 8 per underlying, so the fullest partition stays well under the mock's
/// retention.
const MESSAGES: usize = 128;
/// Partitions of the topic.
const PARTITIONS: i32 = 16;
/// Messages a consumer takes at most per `next_batch`.
const MAX_BATCH: usize = 64;
/// Timed repetitions; the median is reported.
const REPEATS: usize = 5;

/// A chain slice of `underlying`: 5 expirations × 100 strikes × call/put.
fn chain_slice(underlying: &str, seed: u64) -> Vec<OptionQuote> {
    let spot = 100.0 + 10.0 * seed as f64;
    synthetic_chain(underlying, spot, 5, 100, spot - 50.0, seed, ROWS_PER_BATCH)
}

/// A fresh mock cluster with the quotes topic, a bus on it, and a joined consumer.
async fn setup() -> (
    MockCluster<'static, DefaultProducerContext>,
    KafkaBus,
    KafkaSubscription,
) {
    let cluster = MockCluster::new(1).unwrap();
    cluster.create_topic(OPTION_QUOTES, PARTITIONS, 1).unwrap();
    let mut config =
        KafkaBusConfig::from_url(&format!("kafka://{}", cluster.bootstrap_servers())).unwrap();
    config.consumer_properties = vec![("fetch.wait.max.ms".to_owned(), "10".to_owned())];
    let bus = KafkaBus::new(config).unwrap();
    let sub = bus.join(OPTION_QUOTES, "bench").await.unwrap();
    (cluster, bus, sub)
}

async fn publish_all(bus: &KafkaBus, templates: &[Message]) {
    for i in 0..MESSAGES {
        let message = templates[i % templates.len()].clone();
        bus.publish(OPTION_QUOTES, message).await.unwrap();
    }
    bus.flush().await.unwrap();
}

/// Receives until `MESSAGES × ROWS_PER_BATCH` rows arrived, committing after every batch.
async fn consume_all(sub: &mut KafkaSubscription) {
    let mut rows = 0;
    while rows < MESSAGES * ROWS_PER_BATCH {
        let batch = sub.next_batch(MAX_BATCH).await.unwrap().unwrap();
        for d in &batch {
            if let Message::Data(data) = &d.message {
                rows += data.num_rows();
            }
        }
        sub.commit().await.unwrap();
    }
    assert_eq!(rows, MESSAGES * ROWS_PER_BATCH, "every row arrives once");
}

/// One produce-then-consume run: (produce time, consume time).
async fn produce_then_consume(templates: &[Message]) -> (Duration, Duration) {
    let (_cluster, bus, mut sub) = setup().await;
    let start = Instant::now();
    publish_all(&bus, templates).await;
    let produced = start.elapsed();
    let start = Instant::now();
    consume_all(&mut sub).await;
    (produced, start.elapsed())
}

/// One run with the publisher and the consumer at once.
async fn end_to_end(templates: &[Message]) -> Duration {
    let (_cluster, bus, mut sub) = setup().await;
    let start = Instant::now();
    let consumer = tokio::spawn(async move {
        consume_all(&mut sub).await;
        sub
    });
    publish_all(&bus, templates).await;
    let sub = consumer.await.unwrap();
    let elapsed = start.elapsed();
    drop(sub);
    elapsed
}

fn print(label: &str, elapsed: Duration, message_bytes: usize) {
    let seconds = elapsed.as_secs_f64();
    println!(
        "{label:<26} {:>9.1} ms  {:>7.3} M quotes/s  {:>7.0} messages/s  {:>7.1} MB/s",
        seconds * 1e3,
        (MESSAGES * ROWS_PER_BATCH) as f64 / seconds / 1e6,
        MESSAGES as f64 / seconds,
        (MESSAGES * message_bytes) as f64 / seconds / 1e6,
    );
}

fn main() {
    let templates: Vec<Message> = (0..UNDERLYINGS)
        .map(|i| {
            let key = format!("U{i:02}");
            Message::Data(DataBatch::from_rows(key.clone(), &chain_slice(&key, i as u64)).unwrap())
        })
        .collect();
    let message_bytes = templates
        .iter()
        .map(|m| encode(m).unwrap().len())
        .sum::<usize>()
        / templates.len();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "optics Kafka bus benchmark (librdkafka mock cluster, 1 broker, {PARTITIONS} partitions): \
         {MESSAGES} messages × {ROWS_PER_BATCH} option quotes ({:.0} KB each encoded), \
         {UNDERLYINGS} underlyings, 1 publisher, 1 group member, {threads} worker threads, \
         median of {REPEATS}",
        message_bytes as f64 / 1e3
    );
    runtime.block_on(produce_then_consume(&templates)); // warm-up
    let (mut produce, mut consume, mut both) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        let (p, c) = runtime.block_on(produce_then_consume(&templates));
        produce.push(p);
        consume.push(c);
        both.push(runtime.block_on(end_to_end(&templates)));
    }
    print("produce (publish + flush)", median(produce), message_bytes);
    print("consume (receive + commit)", median(consume), message_bytes);
    print("end to end (concurrent)", median(both), message_bytes);
}
