//! The pump (`optics run` and `optics ingest`): which events' quotes reach the archive, and
//! what happens when the archive cannot be written. The simulator runs on a `ManualClock`
//! moved by its `VirtualSleeper` (no wall clock); the archive is in memory.

mod support;

use optics_tests::faulty_store::FaultyStore;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_compute::time::{Clock, ManualClock, new_york_datetime};
use optics_ingest::archive::QuoteArchive;
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_ingest::pump::{
    DEFAULT_MAX_CONSECUTIVE_ARCHIVE_FAILURES, PumpConfig, PumpCounters, PumpEnd, PumpError,
    PumpNotice, Routing, pump,
};
use optics_ingest::simulator::live::{LiveConfig, LiveSimulator, VirtualSleeper};
use optics_ingest::simulator::universe::Universe;
use optics_ingest::source::{ArchivePolicy, QuoteSource, SourceError, SourceEvent, SourceFuture};
use optics_schemas::OptionQuote;
use support::quotes;

const SEED: u64 = 11;

fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 18).unwrap()
}

fn new_york(hour: u32, minute: u32) -> DateTime<Utc> {
    new_york_datetime(
        trade_date(),
        NaiveTime::from_hms_opt(hour, minute, 0).unwrap(),
    )
    .to_utc()
}

fn universe() -> Arc<Universe> {
    let real = Universe::real();
    Arc::new(
        Universe::new(
            ["AAPL", "XLE"]
                .iter()
                .map(|s| real.get(s).unwrap().clone())
                .collect(),
        )
        .unwrap(),
    )
}

/// The live simulator from 15:40 New York through the 16:00 close of the trade date, one
/// snapshot every `interval`; it ends just after the close.
fn live(interval: TimeDelta) -> LiveSimulator {
    let clock = Arc::new(ManualClock::new(new_york(15, 40)));
    LiveSimulator::new(
        universe(),
        LiveConfig {
            interval,
            stop_at: Some(new_york(16, 1)),
            ..LiveConfig::new(SEED)
        },
        Arc::clone(&clock) as Arc<dyn Clock>,
        Arc::new(VirtualSleeper::new(clock)),
    )
}

/// Every event of a source, drained directly (what the pump is given).
fn events_of(mut source: impl QuoteSource) -> Vec<SourceEvent> {
    block_on(async {
        let mut events = Vec::new();
        while let Some(event) = source.next_event().await.unwrap() {
            events.push(event);
        }
        events
    })
}

/// The simulator's events passed on as a vendor feed's would be: same events, the default
/// archive policy (every event).
#[derive(Debug)]
struct VendorFeed(LiveSimulator);

impl QuoteSource for VendorFeed {
    fn name(&self) -> &str {
        "vendor-feed"
    }

    fn next_event(&mut self) -> SourceFuture<'_, Result<Option<SourceEvent>, SourceError>> {
        self.0.next_event()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn bus() -> EmbeddedBus {
    // Nothing consumes: room for every message of a test.
    EmbeddedBus::new(EmbeddedBusConfig {
        partitions: 1,
        capacity_per_topic: 1 << 20,
    })
}

/// The archive's quotes of the trade date, grouped by quote time.
fn archived_by_instant(archive: &QuoteArchive) -> BTreeMap<DateTime<Utc>, Vec<OptionQuote>> {
    block_on(async {
        let mut by_instant: BTreeMap<DateTime<Utc>, Vec<OptionQuote>> = BTreeMap::new();
        for session in archive.list_sessions_on(trade_date()).await.unwrap() {
            for row in archive
                .read_session(session.trade_date, &session.underlying)
                .await
                .unwrap()
            {
                by_instant.entry(row.quote_time).or_default().push(row);
            }
        }
        by_instant
    })
}

/// Sorted for comparison (the archive sorts rows within a part).
fn canonical(mut rows: Vec<OptionQuote>) -> Vec<OptionQuote> {
    rows.sort_by(|a, b| {
        (&a.underlying, &a.option_symbol, a.quote_time).cmp(&(
            &b.underlying,
            &b.option_symbol,
            b.quote_time,
        ))
    });
    rows
}

/// Runs the real pump over `source` into an in-memory archive.
fn run_pump(
    mut source: impl QuoteSource,
    archive_every_secs: u64,
) -> (QuoteArchive, Arc<PumpCounters>, PumpEnd) {
    let archive = QuoteArchive::new(Arc::new(InMemory::new()), Path::from("archive"));
    let counters = Arc::new(PumpCounters::default());
    let config = PumpConfig::new(archive_every_secs, Routing::Everything);
    let mut archived_notices = 0u64;
    let ended = block_on(pump(
        &mut source,
        &bus(),
        &archive,
        &config,
        &counters,
        |notice| match notice {
            PumpNotice::Archived { .. } => archived_notices += 1,
            other => panic!("unexpected {other:?}"),
        },
    ))
    .unwrap();
    // Each archived event is told to the caller (`optics ingest`'s /health hears of it).
    assert_eq!(archived_notices, counters.stats().archived_events);
    (archive, counters, ended)
}

#[test]
fn the_simulator_archives_every_snapshot_when_the_archive_interval_is_its_interval() {
    let interval = TimeDelta::minutes(5);
    let expected = events_of(live(interval));
    // 15:40, 15:45, …, 16:00 (the close).
    assert_eq!(expected.len(), 5);
    assert!(expected.last().unwrap().session_close);

    let (archive, counters, ended) = run_pump(live(interval), 300);
    assert_eq!(ended, PumpEnd::SourceEnded);
    let archived = archived_by_instant(&archive);
    assert_eq!(
        archived.keys().copied().collect::<Vec<_>>(),
        expected.iter().map(|e| e.at).collect::<Vec<_>>()
    );
    for event in &expected {
        assert_eq!(
            canonical(archived[&event.at].clone()),
            canonical(quotes(event)),
            "the quotes of {}",
            event.at
        );
    }
    let stats = counters.stats();
    assert_eq!(stats.events, 5);
    assert_eq!(stats.archived_events, 5);
    assert_eq!(
        stats.archived_quotes,
        expected.iter().map(|e| e.quote_count() as u64).sum::<u64>()
    );
    assert_eq!(stats.archive_failures, 0);
}

#[test]
fn the_simulator_is_sampled_every_archive_interval_and_at_the_close() {
    let interval = TimeDelta::minutes(1);
    let expected = events_of(live(interval));
    assert_eq!(expected.len(), 21);
    let instants: Vec<DateTime<Utc>> = expected.iter().map(|e| e.at).collect();

    // Every five minutes of market time from the first event, the close among them.
    let (archive, counters, _) = run_pump(live(interval), 300);
    let every_fifth: Vec<DateTime<Utc>> = instants.iter().step_by(5).copied().collect();
    assert_eq!(every_fifth.last(), Some(&new_york(16, 0)));
    assert_eq!(
        archived_by_instant(&archive)
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        every_fifth
    );
    assert_eq!(counters.stats().events, 21);
    assert_eq!(counters.stats().archived_events, 5);

    // Every 7 minutes: 15:40, 15:47, 15:54, then the close.
    let (archive, _, _) = run_pump(live(interval), 420);
    let mut sampled: Vec<DateTime<Utc>> = instants.iter().step_by(7).copied().collect();
    sampled.push(new_york(16, 0));
    assert_eq!(
        archived_by_instant(&archive)
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        sampled
    );

    // 0: the close only.
    let (archive, _, _) = run_pump(live(interval), 0);
    assert_eq!(
        archived_by_instant(&archive)
            .keys()
            .copied()
            .collect::<Vec<_>>(),
        [new_york(16, 0)]
    );
}

#[test]
fn a_vendor_feed_has_every_event_archived_whatever_the_archive_interval() {
    let interval = TimeDelta::minutes(1);
    let expected = events_of(VendorFeed(live(interval)));
    assert_eq!(
        VendorFeed(live(interval)).archive_policy(),
        ArchivePolicy::EveryEvent
    );
    let (archive, counters, _) = run_pump(VendorFeed(live(interval)), 300);
    let archived = archived_by_instant(&archive);
    assert_eq!(archived.len(), expected.len());
    for event in &expected {
        assert_eq!(
            canonical(archived[&event.at].clone()),
            canonical(quotes(event))
        );
    }
    assert_eq!(counters.stats().archived_events, expected.len() as u64);
}

/// What [`pump_into`] ran: the pump's result, its counters, its archive-failure notices as
/// `(consecutive, total failures)`, and the archive.
struct PumpRun {
    result: Result<PumpEnd, PumpError>,
    counters: Arc<PumpCounters>,
    notices: Vec<(u32, u64)>,
    archive: QuoteArchive,
}

/// A pump over `source` into an archive on `store`, collecting its notices; `on_failure`
/// hears the number of failures in a row after each.
fn pump_into(
    store: &Arc<FaultyStore>,
    mut source: impl QuoteSource,
    on_failure: impl Fn(u32) + Send + Sync,
) -> PumpRun {
    let archive = QuoteArchive::new(store.clone(), Path::from("archive"));
    let counters = Arc::new(PumpCounters::default());
    let config = PumpConfig::new(300, Routing::Everything);
    let notices = Mutex::new(Vec::new());
    let result = block_on(pump(
        &mut source,
        &bus(),
        &archive,
        &config,
        &counters,
        |notice| match notice {
            PumpNotice::ArchiveFailed {
                consecutive, stats, ..
            } => {
                notices
                    .lock()
                    .unwrap()
                    .push((consecutive, stats.archive_failures));
                on_failure(consecutive);
            }
            PumpNotice::SourceFailed { error, .. } => panic!("{error}"),
            PumpNotice::Archived { .. } => {}
        },
    ));
    PumpRun {
        result,
        counters,
        notices: notices.into_inner().unwrap(),
        archive,
    }
}

#[test]
fn a_persistently_failing_archive_is_counted_reported_and_stops_the_pump() {
    let store = FaultyStore::new();
    store.set_write_budget(Some(0));
    let PumpRun {
        result,
        counters,
        notices,
        archive,
    } = pump_into(&store, VendorFeed(live(TimeDelta::minutes(1))), |_| {});
    let max = DEFAULT_MAX_CONSECUTIVE_ARCHIVE_FAILURES;
    match result {
        Err(PumpError::ArchiveFailing { consecutive, .. }) => assert_eq!(consecutive, max),
        other => panic!("the pump should stop, got {other:?}"),
    }
    // One notice per failure, counted; the pump stopped at the failure that hit the limit
    // (every event until then was still taken and published).
    let expected: Vec<(u32, u64)> = (1..=max).map(|k| (k, u64::from(k))).collect();
    assert_eq!(notices, expected);
    let stats = counters.stats();
    assert_eq!(stats.archive_failures, u64::from(max));
    assert_eq!(stats.events, u64::from(max));
    assert_eq!(stats.archived_events, 0);
    assert!(store.failed_writes() >= u64::from(max));
    store.set_write_budget(None);
    assert!(block_on(archive.list_sessions()).unwrap().is_empty());

    // A sampled source stops the same way.
    let store = FaultyStore::new();
    store.set_write_budget(Some(0));
    let run = pump_into(&store, live(TimeDelta::minutes(1)), |_| {});
    assert!(matches!(run.result, Err(PumpError::ArchiveFailing { .. })));
    assert_eq!(run.counters.archive_failures(), u64::from(max));
}

#[test]
fn a_passing_archive_failure_loses_no_vendor_quote() {
    let interval = TimeDelta::minutes(1);
    let expected = events_of(VendorFeed(live(interval)));
    let store = FaultyStore::new();
    store.set_write_budget(Some(0));
    // The archive comes back after two failed writes.
    let recovering = Arc::clone(&store);
    let PumpRun {
        result,
        counters,
        notices,
        archive,
    } = pump_into(&store, VendorFeed(live(interval)), move |consecutive| {
        if consecutive == 2 {
            recovering.set_write_budget(None);
        }
    });
    assert_eq!(result.unwrap(), PumpEnd::SourceEnded);
    assert_eq!(notices, [(1, 1), (2, 2)]);
    assert_eq!(counters.archive_failures(), 2);
    // The first two events' quotes were written with the third's: all there, once each.
    let archived = archived_by_instant(&archive);
    assert_eq!(
        archived.keys().copied().collect::<BTreeSet<_>>(),
        expected.iter().map(|e| e.at).collect::<BTreeSet<_>>()
    );
    for event in &expected {
        assert_eq!(
            canonical(archived[&event.at].clone()),
            canonical(quotes(event))
        );
    }
}
