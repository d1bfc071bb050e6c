//! Freshness under the partial update mix, on the injected clock: the simulator quotes the
//! liquid fifth of a ten-stock universe at every instant and the others at one instant in five
//! (as the freshness benchmark does), a worker cycles after each instant and hands its
//! snapshots to the API's cache in process, writing files only every third cycle. No
//! underlying's served chain may lag its newest quotes by more than two cycles, and every quote
//! batch is served exactly once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use chrono::{DateTime, NaiveTime, TimeDelta, Utc};
use optics_api::market::StoreMarketData;
use optics_api::{MarketDataReader, Ticker};
use optics_compute::time::{Clock, ManualClock, new_york_datetime};
use optics_ingest::pump::Routing;
use optics_ingest::simulator::live::{LiveConfig, LiveSimulator, VirtualSleeper};
use optics_ingest::simulator::session::LIQUID_SHARE;
use optics_ingest::simulator::universe::Universe;
use optics_ingest::source::QuoteSource;
use optics_pipeline::store::SnapshotKey;
use optics_pipeline::worker::{BatchTimes, ComputeWorker, PublishedSnapshots, WorkerConfig};
use optics_schemas::{Dataset, Message, OptionQuote};

use crate::support::{RATE, memory_store, runtime, trade_date, universe_of};

/// Ten small stocks: two liquid, eight in the tail.
const SYMBOLS: [&str; 10] = [
    "T", "VZ", "KO", "PEP", "PG", "INTC", "CSCO", "BAC", "WFC", "XOM",
];
/// The tail's update interval, in quoting instants (the benchmark's mix).
const TAIL_EVERY: u32 = 5;
/// Market time between quote snapshots; a cycle follows each.
const INTERVAL: TimeDelta = TimeDelta::minutes(5);
/// Market time between an underlying's files in the store: three cycles.
const STORE_EVERY: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// Instants (and cycles) the test runs: three of the tail's rounds.
const CYCLES: usize = 16;

/// One handover: the underlying, the quote times of the batches it serves for the first time,
/// and when.
type Served = (String, Vec<DateTime<Utc>>, DateTime<Utc>);

/// The API's cache, with a record of each quote-batch handover.
struct Recording {
    market: Arc<StoreMarketData>,
    served: Mutex<Vec<Served>>,
}

impl PublishedSnapshots for Recording {
    fn published(&self, key: &SnapshotKey, version: u64, batch: &RecordBatch) -> bool {
        self.market.published(key, version, batch)
    }

    fn quotes_served(&self, underlying: &str, times: &[BatchTimes], at: DateTime<Utc>) {
        self.market.quotes_served(underlying, times, at);
        self.served.lock().unwrap().push((
            underlying.to_owned(),
            times.iter().map(|t| t.quoted_at).collect(),
            at,
        ));
    }
}

fn universe() -> Arc<Universe> {
    universe_of(&SYMBOLS)
}

#[test]
fn under_the_update_mix_no_served_chain_lags_its_quotes_by_two_cycles() {
    runtime().block_on(async {
        let open =
            new_york_datetime(trade_date(), NaiveTime::from_hms_opt(9, 30, 0).unwrap()).to_utc();
        let clock = Arc::new(ManualClock::new(open));
        let mut live = LiveSimulator::new(
            universe(),
            LiveConfig {
                interval: INTERVAL,
                rate: RATE,
                tail_every: TAIL_EVERY,
                ..LiveConfig::new(11)
            },
            Arc::clone(&clock) as Arc<dyn Clock>,
            Arc::new(VirtualSleeper::new(Arc::clone(&clock))),
        );
        let store = memory_store();
        let recording = Arc::new(Recording {
            market: Arc::new(StoreMarketData::new(store.clone())),
            served: Mutex::new(Vec::new()),
        });
        let mut worker = ComputeWorker::offline(
            store,
            Arc::clone(&clock) as Arc<dyn Clock>,
            WorkerConfig {
                rate: RATE,
                // As `optics run`: files less often than cycles, so most handovers have none.
                store_every: STORE_EVERY,
                ..WorkerConfig::default()
            },
        )
        .with_local_reader(Arc::clone(&recording) as Arc<dyn PublishedSnapshots>);

        // Per underlying, each quote batch's newest quote time, and the instants quoted.
        let mut batches: BTreeMap<String, Vec<DateTime<Utc>>> = BTreeMap::new();
        let mut quoted_at: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for cycle in 0..CYCLES {
            let event = live
                .next_event()
                .await
                .unwrap()
                .expect("a live source goes on");
            for message in &event.messages {
                if !Routing::ComputeInputs.keeps(message) {
                    continue;
                }
                if let Message::Data(data) = message
                    && data.dataset() == Dataset::OptionQuotes
                {
                    let rows = data.rows::<OptionQuote>().unwrap();
                    let newest = rows.iter().map(|q| q.quote_time).max().unwrap();
                    batches
                        .entry(data.key().to_owned())
                        .or_default()
                        .push(newest);
                    quoted_at
                        .entry(data.key().to_owned())
                        .or_default()
                        .push(cycle);
                }
                worker.apply(message).unwrap();
            }
            worker.publish_dirty(clock.now()).await.unwrap();

            for symbol in SYMBOLS {
                let newest_quote = *batches[symbol].last().expect("quoted at the first instant");
                let chain = recording
                    .market
                    .chain(&Ticker::parse(symbol).unwrap())
                    .unwrap_or_else(|| panic!("{symbol}: no chain served"));
                let newest_served = chain
                    .rows
                    .iter()
                    .flat_map(|r| [r.call.quote_time, r.put.quote_time])
                    .flatten()
                    .max()
                    .unwrap();
                // Not merely within two cycles: the cycle right after the quotes serves them.
                assert_eq!(newest_served, newest_quote, "{symbol} at cycle {cycle}");
            }
        }

        // The mix: the liquid fifth at every instant; the others at the first instant, then
        // at one in TAIL_EVERY.
        let liquid = (SYMBOLS.len() as f64 * LIQUID_SHARE).ceil() as usize;
        let every: Vec<&String> = quoted_at
            .iter()
            .filter(|(_, instants)| instants.len() == CYCLES)
            .map(|(symbol, _)| symbol)
            .collect();
        assert_eq!(every.len(), liquid, "quoted at every instant: {every:?}");
        for (symbol, instants) in quoted_at.iter().filter(|(_, i)| i.len() < CYCLES) {
            assert_eq!(instants[0], 0, "{symbol}");
            for pair in instants[1..].windows(2) {
                assert_eq!(
                    pair[1] - pair[0],
                    TAIL_EVERY as usize,
                    "{symbol}: {instants:?}"
                );
            }
            assert!(instants[1] <= TAIL_EVERY as usize, "{symbol}: {instants:?}");
        }

        // Each batch was served exactly once, when the cycle after it handed its snapshots over.
        let mut served: BTreeMap<String, Vec<DateTime<Utc>>> = BTreeMap::new();
        for (symbol, times, at) in recording.served.lock().unwrap().iter() {
            for time in times {
                assert!(
                    *at - *time <= INTERVAL * 2,
                    "{symbol}: {time} served at {at}"
                );
            }
            served
                .entry(symbol.clone())
                .or_default()
                .extend(times.iter().copied());
        }
        assert_eq!(served, batches);
    });
}
