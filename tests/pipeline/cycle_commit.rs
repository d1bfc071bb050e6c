//! A worker commits what it consumed only once everything built from it is in the store: a bus
//! that watches the worker checks, at every commit of the quote topic, that the store holds the
//! datasets of every underlying delivered so far, each chain with every contract delivered,
//! and, at every `snapshot` event, that the file it names is already visible.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow_array::{Array, RecordBatch, StringArray};
use object_store::ObjectStoreExt;
use object_store::path::Path;
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_pipeline::store::{SnapshotKey, SnapshotStore};
use optics_pipeline::worker::WorkerConfig;
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::columns::chain as chain_col;
use optics_schemas::{
    Bus, BusError, BusFuture, DataBatch, Dataset, Delivery, Message, OptionQuote, Pressure,
    Subscription,
};

use crate::support::{
    instant, memory_store, runtime, simulated_quotes, start_price, start_worker, trade_date,
};

const DATASETS: [&str; 5] = [
    snapshot_datasets::CHAIN,
    snapshot_datasets::EXPOSURES,
    snapshot_datasets::EXPOSURE_SUMMARY,
    snapshot_datasets::FLOW,
    snapshot_datasets::FLOW_AGGREGATES,
];

/// What the watching bus saw.
#[derive(Debug, Default)]
struct Watch {
    /// Option symbols delivered to the worker, by underlying.
    delivered: BTreeMap<String, BTreeSet<String>>,
    /// Commits of the quote topic, and how many of them followed deliveries.
    commits: usize,
    commits_after_deliveries: usize,
    /// `snapshot` events seen.
    announced: usize,
    /// What was wrong, when it was.
    violations: Vec<String>,
}

/// The embedded bus, watched.
#[derive(Debug)]
struct WatchedBus {
    inner: EmbeddedBus,
    store: SnapshotStore,
    watch: Arc<Mutex<Watch>>,
}

#[derive(Debug)]
struct WatchedSubscription {
    inner: Box<dyn Subscription>,
    quotes: bool,
    store: SnapshotStore,
    watch: Arc<Mutex<Watch>>,
    /// Deliveries since the last commit.
    uncommitted: usize,
}

impl Bus for WatchedBus {
    fn publish<'a>(
        &'a self,
        topic: &'a str,
        message: Message,
    ) -> BusFuture<'a, Result<(), BusError>> {
        Box::pin(async move {
            if let Message::Snapshot(event) = &message {
                let visible = self
                    .store
                    .object_store()
                    .head(&Path::from(event.path.as_str()))
                    .await
                    .is_ok();
                let mut watch = self.watch.lock().unwrap();
                watch.announced += 1;
                if !visible {
                    watch
                        .violations
                        .push(format!("{} announced before it is visible", event.path));
                }
            }
            self.inner.publish(topic, message).await
        })
    }

    fn flush(&self) -> BusFuture<'_, Result<(), BusError>> {
        self.inner.flush()
    }

    fn subscribe<'a>(
        &'a self,
        topic: &'a str,
        group: &'a str,
    ) -> BusFuture<'a, Result<Box<dyn Subscription>, BusError>> {
        Box::pin(async move {
            let inner = self.inner.subscribe(topic, group).await?;
            Ok(Box::new(WatchedSubscription {
                inner,
                quotes: topic == topics::OPTION_QUOTES,
                store: self.store.clone(),
                watch: Arc::clone(&self.watch),
                uncommitted: 0,
            }) as Box<dyn Subscription>)
        })
    }

    fn pressure(&self, topic: &str) -> Pressure {
        self.inner.pressure(topic)
    }

    fn close(&self) {
        self.inner.close();
    }
}

impl Subscription for WatchedSubscription {
    fn next_batch(
        &mut self,
        max_messages: usize,
    ) -> BusFuture<'_, Result<Option<Vec<Delivery>>, BusError>> {
        Box::pin(async move {
            let batch = self.inner.next_batch(max_messages).await?;
            if self.quotes
                && let Some(deliveries) = &batch
            {
                self.uncommitted += deliveries.len();
                let mut watch = self.watch.lock().unwrap();
                for delivery in deliveries {
                    if let Message::Data(data) = &delivery.message
                        && data.dataset() == Dataset::OptionQuotes
                    {
                        let symbols = watch.delivered.entry(data.key().to_owned()).or_default();
                        for quote in data.rows::<OptionQuote>().unwrap() {
                            symbols.insert(quote.option_symbol);
                        }
                    }
                }
            }
            Ok(batch)
        })
    }

    fn commit(&mut self) -> BusFuture<'_, Result<(), BusError>> {
        Box::pin(async move {
            // Only a commit that follows deliveries has something to prove (and the check is
            // slow in a debug build: checking idle commits would starve the worker).
            if self.quotes && self.uncommitted > 0 {
                let delivered = self.watch.lock().unwrap().delivered.clone();
                let mut violations = Vec::new();
                for (underlying, symbols) in &delivered {
                    for dataset in DATASETS {
                        let key = SnapshotKey::new(dataset, trade_date(), underlying.as_str());
                        let Some(snapshot) = self.store.read(&key).await.unwrap() else {
                            violations.push(format!("commit before {underlying}'s {dataset}"));
                            continue;
                        };
                        if dataset == snapshot_datasets::CHAIN {
                            let contracts = option_symbols(&snapshot.batches);
                            if &contracts != symbols {
                                violations.push(format!(
                                    "commit with {} of {underlying}'s {} delivered contracts \
                                     in its chain",
                                    contracts.len(),
                                    symbols.len()
                                ));
                            }
                        }
                    }
                }
                let mut watch = self.watch.lock().unwrap();
                watch.commits_after_deliveries += 1;
                watch.violations.extend(violations);
                self.uncommitted = 0;
            }
            if self.quotes {
                self.watch.lock().unwrap().commits += 1;
            }
            self.inner.commit().await
        })
    }

    fn take_revoked(&mut self) -> Vec<u32> {
        self.inner.take_revoked()
    }
}

/// The option symbols of both sides of a chain snapshot.
fn option_symbols(batches: &[RecordBatch]) -> BTreeSet<String> {
    let mut symbols = BTreeSet::new();
    for batch in batches {
        for column in [chain_col::CALL.option_symbol, chain_col::PUT.option_symbol] {
            let array = batch
                .column_by_name(column)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap();
            symbols.extend(array.iter().flatten().map(str::to_owned));
        }
    }
    symbols
}

/// The simulator's quotes of `symbols` at the test's instant.
fn simulated(symbols: &[&str]) -> Vec<(String, Vec<OptionQuote>)> {
    symbols
        .iter()
        .map(|symbol| {
            let quotes = simulated_quotes(symbol, instant(), start_price(symbol), 5);
            ((*symbol).to_owned(), quotes)
        })
        .collect()
}

#[test]
fn every_file_of_a_cycle_is_visible_before_its_offsets_are_committed() {
    let chains = simulated(&["SPY", "AAPL"]);
    let runtime = runtime();
    let store = memory_store();
    let watch = Arc::new(Mutex::new(Watch::default()));
    let stats = runtime.block_on(async {
        let bus: Arc<dyn Bus> = Arc::new(WatchedBus {
            inner: EmbeddedBus::new(EmbeddedBusConfig::default()),
            store: store.clone(),
            watch: Arc::clone(&watch),
        });
        let config = WorkerConfig {
            interval: Duration::from_millis(50),
            max_batch_messages: 2,
            ..WorkerConfig::default()
        };
        let worker = start_worker(&bus, &store, instant(), config);
        // Quotes trickle in across many cycles, each underlying's chain filling over several.
        let parts: Vec<Vec<(&str, &[OptionQuote])>> = (0..8)
            .map(|part| {
                chains
                    .iter()
                    .map(|(symbol, quotes)| {
                        let size = quotes.len().div_ceil(8);
                        let from = (part * size).min(quotes.len());
                        let to = ((part + 1) * size).min(quotes.len());
                        (symbol.as_str(), &quotes[from..to])
                    })
                    .collect()
            })
            .collect();
        for part in parts {
            for (symbol, quotes) in part {
                if quotes.is_empty() {
                    continue;
                }
                let batch = DataBatch::from_rows(symbol, quotes).unwrap();
                bus.publish(topics::OPTION_QUOTES, Message::Data(batch))
                    .await
                    .unwrap();
            }
            tokio::time::sleep(Duration::from_millis(60)).await;
        }
        // Until the worker has consumed and committed everything.
        let total: usize = chains.iter().map(|c| c.1.len()).sum();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let done = {
                let watch = watch.lock().unwrap();
                let delivered: usize = watch.delivered.values().map(BTreeSet::len).sum();
                delivered == total && bus.pressure(topics::OPTION_QUOTES).pending == 0
            };
            if done {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                let watch = watch.lock().unwrap();
                let delivered: usize = watch.delivered.values().map(BTreeSet::len).sum();
                panic!(
                    "not consumed within two minutes: {delivered} of {total} contracts \
                     delivered, {} messages uncommitted, {} commits",
                    bus.pressure(topics::OPTION_QUOTES).pending,
                    watch.commits
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        worker.stop().await
    });
    let watch = watch.lock().unwrap();
    assert!(
        watch.violations.is_empty(),
        "{} violations, first: {:?}",
        watch.violations.len(),
        watch.violations.first()
    );
    assert!(
        watch.commits_after_deliveries >= 2,
        "several cycles committed deliveries ({} of {} commits)",
        watch.commits_after_deliveries,
        watch.commits
    );
    assert_eq!(watch.announced as u64, stats.snapshots);
    assert!(stats.cycles >= 2);
    assert_eq!(stats.build_failures, 0);
}
