//! Compute workers on Kafka (librdkafka's mock cluster): a worker crashes mid-session, another
//! in the same consumer group takes over from the committed offsets, and every underlying's
//! chain snapshot is brought up to date.

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

const UNDERLYINGS: [&str; 4] = ["AAA", "BBB", "CCC", "DDD"];
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

/// Waits until every underlying's chain snapshot holds quotes stamped `at`.
async fn wait_for_chains(store: &SnapshotStore, at: DateTime<Utc>) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let mut fresh = 0;
        for symbol in UNDERLYINGS {
            let key = SnapshotKey::new(snapshot_datasets::CHAIN, at.date_naive(), symbol);
            if let Some(snapshot) = store.read(&key).await.unwrap() {
                let rows = ChainRow::from_batch(&snapshot.batches[0]).unwrap();
                if rows.iter().all(|r| r.call.quote_time == Some(at)) {
                    fresh += 1;
                }
            }
        }
        if fresh == UNDERLYINGS.len() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "only {fresh} of {} chains carry the quotes of {at} after {STEP:?}",
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

#[test]
fn a_worker_takes_over_the_underlyings_of_one_that_crashed() {
    let cluster = MockCluster::new(1).unwrap();
    cluster.create_topic(topics::OPTION_QUOTES, 4, 1).unwrap();
    cluster.create_topic(topics::REFERENCE, 1, 1).unwrap();
    cluster.create_topic(topics::SNAPSHOTS, 1, 1).unwrap();
    let bootstrap = cluster.bootstrap_servers();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
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
