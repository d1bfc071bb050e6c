//! A whole live session in bounded memory: the simulator on a manual clock, through the
//! embedded bus, a running compute worker, the snapshot store and the API's snapshot cache
//! (handed each snapshot in process), from one session's open past its close into the next
//! session, as `optics run` wires them.
//! After every quote snapshot the holders `/metrics` reports are read and checked against the
//! bound each one has by design (the listing, the bus's capacity, a window of sessions):
//! counts, not timings. Nothing may grow with session time or with the number of cycles.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveTime, TimeDelta, Utc};
use optics_api::market::StoreMarketData;
use optics_api::metrics::Metrics;
use optics_api::{MarketDataReader, Ticker};
use optics_compute::time::{Clock, ManualClock, new_york_datetime};
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_ingest::pump::Routing;
use optics_ingest::simulator::live::{LiveConfig, LiveSimulator, VirtualSleeper};
use optics_ingest::simulator::universe::Universe;
use optics_ingest::source::QuoteSource;
use optics_pipeline::worker::{ComputeWorker, PublishedSnapshots, WorkerConfig};
use optics_schemas::bus::topics;
use optics_schemas::memory::HeldMemory;
use optics_schemas::{Bus, Message};

use crate::support::{RATE, memory_store, runtime, trade_date, universe_of};

/// Three small stocks: a cycle is quick even in a test build.
const SYMBOLS: [&str; 3] = ["T", "VZ", "KO"];
/// Datasets the worker publishes per underlying and cycle.
const DATASETS_PER_UNDERLYING: usize = 5;
/// Market time between quote snapshots: a 6.5-hour session is 40 of them.
const INTERVAL_MINUTES: i64 = 10;

/// Every holder `optics run` reports; a new one must be given a bound here.
const HOLDERS: [&str; 15] = [
    "api_chain_footers",
    "api_chains",
    "api_coverage",
    "api_exposures",
    "api_flow_aggregates",
    "api_flows",
    "api_vol_history_memo",
    "bus_consumer_groups",
    "bus_messages",
    "simulator_carried_open_interest",
    "simulator_session",
    "simulator_tape",
    "store_version_memo",
    "worker_books",
    "worker_pending_reference",
];

fn universe() -> Arc<Universe> {
    universe_of(&SYMBOLS)
}

fn items(sample: &BTreeMap<&'static str, HeldMemory>, holder: &str) -> u64 {
    sample
        .get(holder)
        .unwrap_or_else(|| panic!("{holder} not reported"))
        .items
}

/// Waits (at most a minute) until the API serves every symbol's chain of `at`.
async fn served(market: &StoreMarketData, at: DateTime<Utc>) {
    let tickers: Vec<Ticker> = SYMBOLS.iter().map(|s| Ticker::parse(s).unwrap()).collect();
    let all_served = || {
        tickers
            .iter()
            .all(|t| market.chain(t).is_some_and(|chain| chain.as_of == at))
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        while !all_served() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the chains of {at} were not served within a minute"));
}

fn sample_of(metrics: &Metrics) -> BTreeMap<&'static str, HeldMemory> {
    metrics
        .held_memory(&[])
        .into_iter()
        .map(|held| (held.holder, held))
        .collect()
}

/// The holders once the worker's books have taken in the whole snapshot of `at` (at most a
/// minute). A chain of `at` can be served from a cycle that ran while part of the snapshot's
/// messages were still on the bus, and a busy machine makes that likely; the books reach the
/// listing a few cycles later. Books holding more than the listing (two sessions) never
/// settle, and fail here.
async fn settled_sample(
    metrics: &Metrics,
    at: DateTime<Utc>,
) -> BTreeMap<&'static str, HeldMemory> {
    let caught_up = |sample: &BTreeMap<_, _>| {
        items(sample, "worker_books") == items(sample, "simulator_session")
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let sample = sample_of(metrics);
            if caught_up(&sample) {
                return sample;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        let sample = sample_of(metrics);
        panic!(
            "{at}: the books hold {} contracts, the listing {}",
            items(&sample, "worker_books"),
            items(&sample, "simulator_session")
        )
    })
}

#[test]
fn a_whole_live_session_and_the_next_open_keep_every_holder_bounded() {
    runtime().block_on(async {
        let day = trade_date();
        let open = new_york_datetime(day, NaiveTime::from_hms_opt(9, 30, 0).unwrap()).to_utc();
        let clock = Arc::new(ManualClock::new(open));
        let mut live = LiveSimulator::new(
            universe(),
            LiveConfig {
                interval: TimeDelta::minutes(INTERVAL_MINUTES),
                rate: RATE,
                ..LiveConfig::new(11)
            },
            Arc::clone(&clock) as Arc<dyn Clock>,
            Arc::new(VirtualSleeper::new(Arc::clone(&clock))),
        );
        let bus_config = EmbeddedBusConfig::default();
        let embedded = Arc::new(EmbeddedBus::new(bus_config));
        let bus: Arc<dyn Bus> = Arc::clone(&embedded) as Arc<dyn Bus>;
        let store = memory_store();

        // The API's cache, following the snapshot events as `optics run`'s does.
        let market = Arc::new(StoreMarketData::new(store.clone()));
        let mut announcements = bus
            .subscribe(topics::SNAPSHOTS, "optics-api")
            .await
            .unwrap();
        let follower = Arc::clone(&market);
        let follower_task = tokio::spawn(async move {
            while let Ok(Some(batch)) = announcements.next_batch(256).await {
                for delivery in batch {
                    if let Message::Snapshot(event) = delivery.message {
                        follower.apply(&event).await.unwrap();
                    }
                }
                announcements.commit().await.unwrap();
            }
        });
        let worker = ComputeWorker::new(
            Arc::clone(&bus),
            store.clone(),
            Arc::clone(&clock) as Arc<dyn Clock>,
            WorkerConfig {
                interval: Duration::from_millis(5),
                rate: RATE,
                ..WorkerConfig::default()
            },
        )
        .with_local_reader(Arc::clone(&market) as Arc<dyn PublishedSnapshots>);
        let metrics: Metrics = market.metrics().clone();
        metrics.watch_memory(Arc::clone(&embedded) as _);
        metrics.watch_memory(worker.memory());
        metrics.watch_memory(Arc::new(store.clone()));
        metrics.watch_memory(live.memory());
        metrics.watch_memory_of(&market);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let worker_task = tokio::spawn(worker.run(async {
            let _ = stopped.await;
        }));

        // The session, its close, and the first hour of the next session.
        let next_day_until = open + TimeDelta::days(1) + TimeDelta::hours(1);
        let mut samples: Vec<(DateTime<Utc>, BTreeMap<&'static str, HeldMemory>)> = Vec::new();
        let mut freed_check = None;
        loop {
            let event = live
                .next_event()
                .await
                .unwrap()
                .expect("a live source goes on");
            if event.at > next_day_until {
                break;
            }
            let mut published = 0;
            for message in event.messages {
                if Routing::ComputeInputs.keeps(&message) {
                    bus.publish(message.topic(), message).await.unwrap();
                    published += 1;
                }
            }
            served(&market, event.at).await;
            let sample = settled_sample(&metrics, event.at).await;
            assert_eq!(
                sample.keys().copied().collect::<Vec<_>>(),
                HOLDERS,
                "every holder reported, each with its bound below"
            );

            let listed = items(&sample, "simulator_session");
            let n = SYMBOLS.len() as u64;
            // The bus: this snapshot's messages and the announcements of two cycles at most
            // (each: a file per dataset and underlying, and the four market-wide reference
            // tables), whatever the number of cycles before; its groups are the worker's four
            // and the API's one.
            let per_cycle = n * DATASETS_PER_UNDERLYING as u64 + 4;
            assert!(
                items(&sample, "bus_messages") <= published + 2 * per_cycle,
                "{}: bus holds {} messages",
                event.at,
                items(&sample, "bus_messages")
            );
            assert_eq!(items(&sample, "bus_consumer_groups"), 5);
            // The books: the latest quote of each listed contract of this session, no more.
            assert!(listed > 0);
            assert!(items(&sample, "worker_books") <= listed, "{}", event.at);
            // The API: one snapshot per dataset and underlying, each no larger than the
            // listing (a chain row holds a call and a put; flow and its groups one row per
            // contract that traded at most; exposures a row per strike and expiration plus
            // the summaries).
            assert!(items(&sample, "api_chains") <= listed);
            assert!(items(&sample, "api_flows") <= listed);
            assert!(items(&sample, "api_flow_aggregates") <= listed);
            assert!(items(&sample, "api_exposures") <= listed + n * 64);
            // The store's memo: the partitions of two trade dates at most (this one, and the
            // previous session's until its week has passed), whatever the number of versions.
            let per_day = n * DATASETS_PER_UNDERLYING as u64 + 8;
            assert!(items(&sample, "store_version_memo") <= 2 * per_day);
            // The carried open interest lives only between a close and the next open.
            assert_eq!(items(&sample, "simulator_carried_open_interest"), 0);
            assert_eq!(items(&sample, "simulator_tape"), n);
            // Reference rows are merged by every cycle.
            assert!(items(&sample, "worker_pending_reference") <= 64 * n);
            // No client traffic in this test: the API's coverage is the reference data only,
            // and no history was read.
            assert!(items(&sample, "api_coverage") <= 64 * n);
            assert_eq!(items(&sample, "api_vol_history_memo"), 0);
            assert_eq!(items(&sample, "api_chain_footers"), 0);

            // A replaced snapshot is freed: the chain held at this sample is gone once a newer
            // one was installed and nobody reads it any more.
            if let Some((at, freed)) = freed_check.take() {
                let freed: std::sync::Weak<_> = freed;
                assert!(
                    freed.upgrade().is_none(),
                    "the chain of {at} is still held after {}",
                    event.at
                );
            }
            let held_now = market.chain(&Ticker::parse("T").unwrap()).unwrap();
            freed_check = Some((event.at, Arc::downgrade(&held_now)));
            drop(held_now);
            samples.push((event.at, sample));
        }

        // What the session held at its first hour, at its close and at the next day's open:
        // the same listing-bound counts, not counts that grew with the cycles in between.
        let close = new_york_datetime(day, NaiveTime::from_hms_opt(16, 0, 0).unwrap()).to_utc();
        let at = |instant: DateTime<Utc>| {
            &samples
                .iter()
                .find(|(at, _)| *at == instant)
                .unwrap_or_else(|| panic!("a sample at {instant}"))
                .1
        };
        let first_hour = at(open + TimeDelta::hours(1));
        let at_close = at(close);
        let next_open = at(open + TimeDelta::days(1));
        for holder in ["worker_books", "api_chains", "simulator_session"] {
            assert_eq!(
                items(first_hour, holder),
                items(at_close, holder),
                "{holder}: the session's listing, not its cycles"
            );
        }
        // The next session replaces the books, the chains and the listing: its own, not both.
        assert_eq!(
            items(next_open, "worker_books"),
            items(next_open, "simulator_session")
        );
        assert!(items(next_open, "api_chains") <= items(next_open, "simulator_session"));
        assert!(
            items(next_open, "worker_books") < items(at_close, "worker_books") * 3 / 2,
            "books of two sessions: {} then {}",
            items(at_close, "worker_books"),
            items(next_open, "worker_books")
        );
        assert!(samples.len() >= 40 + 7, "{} samples", samples.len());

        let _ = stop.send(());
        worker_task.await.unwrap().unwrap();
        bus.close();
        follower_task.await.unwrap();
    });
}
