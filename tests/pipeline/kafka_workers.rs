//! Compute workers on Kafka (librdkafka's mock cluster): two workers in one consumer group split
//! the underlyings; a worker crashes mid-session and the other in the group takes over from the
//! committed offsets, bringing every underlying's chain snapshot up to date.
//!
//! Each worker runs on its own clock, offset from the quotes' instant, so the `as_of` of a
//! chain snapshot tells which worker built it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_compute::store::{SnapshotKey, SnapshotStore};
use optics_compute::time::{Clock, ManualClock};
use optics_compute::worker::{ComputeWorker, WorkerConfig};
use optics_ingest::bus::kafka::{KafkaBus, KafkaBusConfig};
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::{Bus, ChainRow, DataBatch, Message, OptionQuote};
use optics_tests::fixtures::synthetic_chain;
use rdkafka::mocking::MockCluster;

const UNDERLYINGS: [&str; 8] = ["AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG", "HHH"];
const STEP: Duration = Duration::from_secs(60);

fn bus_on(bootstrap: &str) -> Arc<dyn Bus> {
    let mut config = KafkaBusConfig::from_url(&format!("kafka://{bootstrap}")).unwrap();
    config.consumer_properties = vec![
        ("session.timeout.ms".to_owned(), "3000".to_owned()),
        ("heartbeat.interval.ms".to_owned(), "100".to_owned()),
        ("fetch.wait.max.ms".to_owned(), "20".to_owned()),
    ];
    config.producer_properties = vec![("linger.ms".to_owned(), "1".to_owned())];
    config.group_join_timeout = STEP;
    Arc::new(KafkaBus::new(config).unwrap())
}

/// Each underlying's quotes, all stamped `at`.
fn quotes(at: DateTime<Utc>) -> Vec<(String, Vec<OptionQuote>)> {
    UNDERLYINGS
        .iter()
        .enumerate()
        .map(|(i, symbol)| {
            let spot = 100.0 + 10.0 * i as f64;
            let mut rows = synthetic_chain(symbol, spot, 2, 20, spot - 10.0, i as u64, 80);
            for row in &mut rows {
                row.quote_time = at;
            }
            ((*symbol).to_owned(), rows)
        })
        .collect()
}

async fn publish(bus: &Arc<dyn Bus>, chains: &[(String, Vec<OptionQuote>)]) {
    for (symbol, rows) in chains {
        let batch = DataBatch::from_rows(symbol.as_str(), rows).unwrap();
        bus.publish(topics::OPTION_QUOTES, Message::Data(batch))
            .await
            .unwrap();
    }
    bus.flush().await.unwrap();
}

/// Waits until every underlying's chain snapshot holds quotes stamped `at`; returns each
/// underlying's snapshot `as_of` (the clock of the worker that built it).
async fn wait_for_chains(
    store: &SnapshotStore,
    at: DateTime<Utc>,
) -> BTreeMap<String, DateTime<Utc>> {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let mut fresh = BTreeMap::new();
        for symbol in UNDERLYINGS {
            let key = SnapshotKey::new(snapshot_datasets::CHAIN, at.date_naive(), symbol);
            if let Some(snapshot) = store.read(&key).await.unwrap() {
                let rows = ChainRow::from_batch(&snapshot.batches[0]).unwrap();
                if rows.iter().all(|r| r.call.quote_time == Some(at)) {
                    fresh.insert(symbol.to_owned(), rows[0].as_of);
                }
            }
        }
        if fresh.len() == UNDERLYINGS.len() {
            return fresh;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {} of {} chains carry the quotes of {at} after {STEP:?}",
            fresh.len(),
            UNDERLYINGS.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn worker(
    bus: Arc<dyn Bus>,
    store: &SnapshotStore,
    clock: &Arc<ManualClock>,
    id: &str,
) -> ComputeWorker {
    let clock: Arc<dyn Clock> = Arc::clone(clock) as Arc<dyn Clock>;
    ComputeWorker::new(
        bus,
        store.clone(),
        clock,
        WorkerConfig {
            worker_id: id.to_owned(),
            interval: Duration::from_millis(50),
            ..WorkerConfig::default()
        },
    )
}

fn mock_cluster() -> MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    let cluster = MockCluster::new(1).unwrap();
    cluster.create_topic(topics::OPTION_QUOTES, 4, 1).unwrap();
    cluster.create_topic(topics::REFERENCE, 1, 1).unwrap();
    cluster.create_topic(topics::SNAPSHOTS, 1, 1).unwrap();
    cluster
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_worker_takes_over_the_underlyings_of_one_that_crashed() {
    let cluster = mock_cluster();
    let bootstrap = cluster.bootstrap_servers();
    runtime().block_on(async {
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
        let first = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 20, 15, 30, 0).unwrap();
        let clock = Arc::new(ManualClock::new(first));
        let ingest = bus_on(&bootstrap);

        // Worker A serves every underlying, then crashes (its task is aborted: no last cycle,
        // no last commit).
        let a = tokio::spawn(
            worker(bus_on(&bootstrap), &store, &clock, "a").run(std::future::pending()),
        );
        publish(&ingest, &quotes(first)).await;
        tokio::time::timeout(STEP, wait_for_chains(&store, first))
            .await
            .unwrap();
        a.abort();
        let _ = a.await;

        // Worker B joins the same group: it resumes from A's committed offsets and serves the
        // newer quotes of every underlying.
        let later = first + TimeDelta::minutes(1);
        clock.set(later);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let b = tokio::spawn(worker(bus_on(&bootstrap), &store, &clock, "b").run(async {
            let _ = stopped.await;
        }));
        publish(&ingest, &quotes(later)).await;
        tokio::time::timeout(STEP, wait_for_chains(&store, later))
            .await
            .unwrap();
        stop.send(()).unwrap();
        let stats = tokio::time::timeout(STEP, b)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let per_round: usize = quotes(later).iter().map(|q| q.1.len()).sum();
        // B saw the new round, plus at most what A had not committed when it crashed.
        assert!(stats.quotes_accepted as usize >= per_round, "{stats:?}");
        assert!(stats.quotes_accepted as usize <= 2 * per_round, "{stats:?}");
    });
}

#[test]
fn two_workers_split_the_underlyings_and_one_takes_over_when_the_other_dies() {
    let cluster = mock_cluster();
    let bootstrap = cluster.bootstrap_servers();
    runtime().block_on(async {
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
        let start = chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 11, 20, 15, 0, 0).unwrap();
        // A's clock runs one second after the quotes' instant, B's two: a snapshot's as_of
        // names its builder.
        let (clock_a, clock_b) = (
            Arc::new(ManualClock::new(start)),
            Arc::new(ManualClock::new(start)),
        );
        let builder = |at: DateTime<Utc>, as_of: DateTime<Utc>| match (as_of - at).num_seconds() {
            1 => "a",
            2 => "b",
            other => panic!("a snapshot built at {other} s from its quotes"),
        };
        let ingest = bus_on(&bootstrap);
        let a = tokio::spawn(
            worker(bus_on(&bootstrap), &store, &clock_a, "a").run(std::future::pending()),
        );
        let (stop_b, b_stopped) = tokio::sync::oneshot::channel::<()>();
        let b = tokio::spawn(
            worker(bus_on(&bootstrap), &store, &clock_b, "b").run(async {
                let _ = b_stopped.await;
            }),
        );

        // Rounds of quotes, one a minute of market time, until the group has settled with
        // both workers serving: each round every underlying is built by exactly one of them.
        let mut round = 0;
        let mut split = BTreeMap::new();
        while split.len() < 2 {
            assert!(
                round < 30,
                "the group never split the underlyings: {split:?}"
            );
            let at = start + TimeDelta::minutes(round);
            clock_a.set(at + TimeDelta::seconds(1));
            clock_b.set(at + TimeDelta::seconds(2));
            publish(&ingest, &quotes(at)).await;
            split.clear();
            for (symbol, as_of) in wait_for_chains(&store, at).await {
                split
                    .entry(builder(at, as_of))
                    .or_insert_with(Vec::new)
                    .push(symbol);
            }
            round += 1;
        }
        let (served_by_a, served_by_b) = (split["a"].clone(), split["b"].clone());
        let settled_after = round;
        assert_eq!(served_by_a.len() + served_by_b.len(), UNDERLYINGS.len());

        // A dies mid-session (no last cycle, no last commit). The next round reaches every
        // underlying through B, A's included: none lost, none left a round behind.
        a.abort();
        let _ = a.await;
        for _ in 0..2 {
            let at = start + TimeDelta::minutes(round);
            clock_a.set(at + TimeDelta::seconds(1));
            clock_b.set(at + TimeDelta::seconds(2));
            publish(&ingest, &quotes(at)).await;
            let built = wait_for_chains(&store, at).await;
            for (symbol, as_of) in &built {
                assert_eq!(builder(at, *as_of), "b", "{symbol} after A died");
            }
            round += 1;
        }
        stop_b.send(()).unwrap();
        let stats = tokio::time::timeout(STEP, b)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(stats.snapshots > 0, "{stats:?}");
        eprintln!(
            "split after {settled_after} rounds: a served {served_by_a:?}, b served {served_by_b:?}"
        );
    });
}
