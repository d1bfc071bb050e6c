//! Replay: archived quotes → the same compute code → end-of-day snapshots, identical from run
//! to run.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Timelike, Utc};
use object_store::ObjectStoreExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_compute::time::NyseCalendar;
use optics_ingest::archive::{ArchiveSink, QuoteArchive};
use optics_ingest::replay::replay_session;
use optics_ingest::simulator::quotes::{ChainSpec, chain_snapshot};
use optics_ingest::simulator::surface::{Surface, SurfaceInputs};
use optics_ingest::simulator::universe::Universe;
use optics_ingest::vendor::{ImportBatch, ImportSink};
use optics_pipeline::store::SnapshotStore;
use optics_pipeline::worker::WorkerConfig;
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::{ChainRow, OptionQuote};

use crate::support::{close, memory_store, runtime, trade_date};

/// The simulated chain of `symbol` at `instant` of the trade date.
fn chain_at(symbol: &str, instant: DateTime<Utc>) -> Vec<OptionQuote> {
    let universe = Universe::real();
    let underlying = universe.get(symbol).unwrap();
    let surface = Surface::for_underlying(underlying, &SurfaceInputs::normal());
    let minute = f64::from(instant.minute());
    let spec = ChainSpec {
        underlying,
        trade_date: trade_date(),
        instant,
        spot: underlying.start_price * (1.0 + minute * 1e-4),
        previous_close: underlying.start_price,
        surface: &surface,
        rate: 0.04,
        seed: 3,
    };
    chain_snapshot(&spec, &NyseCalendar)
}

/// Two instants of SPY and QQQ quotes, archived.
async fn archive_with_two_instants() -> QuoteArchive {
    let archive = QuoteArchive::new(Arc::new(InMemory::new()), Path::from("archive"));
    for (hour, minute) in [(15, 0), (20, 59)] {
        let instant = Utc.with_ymd_and_hms(2026, 11, 18, hour, minute, 0).unwrap();
        for symbol in ["SPY", "QQQ"] {
            archive.append(&chain_at(symbol, instant)).await.unwrap();
        }
    }
    archive
}

#[test]
fn replaying_a_session_twice_writes_identical_snapshots() {
    runtime().block_on(async {
        let archive = archive_with_two_instants().await;
        let mut files = Vec::new();
        for _ in 0..2 {
            let store = memory_store();
            let config = WorkerConfig {
                rate: 0.04,
                ..WorkerConfig::default()
            };
            let mut seen = Vec::new();
            let summary = replay_session(&archive, &store, trade_date(), config, |u| {
                seen.push(u.to_owned())
            })
            .await
            .unwrap();
            assert_eq!(summary.underlyings, 2);
            assert_eq!(seen, ["QQQ", "SPY"]);
            assert_eq!(
                summary.events.len(),
                10,
                "chain, exposures, summary, flow, flow aggregates × 2"
            );
            let mut bytes = Vec::new();
            for event in &summary.events {
                let data = store
                    .object_store()
                    .get(&Path::from(event.path.as_str()))
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
                bytes.push((event.dataset.clone(), event.underlying.clone(), data));
            }
            // The chain is the later instant's: every row priced at the close, from the
            // 20:59 quotes.
            let chain = summary
                .events
                .iter()
                .find(|e| e.dataset == snapshot_datasets::CHAIN && e.underlying == "SPY")
                .unwrap();
            let key = optics_pipeline::store::SnapshotKey::new(
                snapshot_datasets::CHAIN,
                chain.trade_date,
                "SPY",
            );
            let snapshot = store.read(&key).await.unwrap().unwrap();
            let rows = ChainRow::from_batch(&snapshot.batches[0]).unwrap();
            assert!(rows.iter().all(|r| r.as_of == close()));
            let late = Utc.with_ymd_and_hms(2026, 11, 18, 20, 59, 0).unwrap();
            assert!(
                rows.iter()
                    .filter_map(|r| r.call.quote_time)
                    .all(|t| t == late)
            );
            files.push(bytes);
        }
        assert_eq!(
            files[0], files[1],
            "same archive and config → identical files"
        );
    });
}

#[test]
fn replaying_a_day_that_was_not_recorded_says_so() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        let archive = archive_with_two_instants().await;
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::default());
        let day = NaiveDate::from_ymd_opt(2026, 11, 17).unwrap();
        let err = replay_session(&archive, &store, day, WorkerConfig::default(), |_| {})
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("no session on 2026-11-17"),
            "{err}"
        );
        let saturday = NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let err = replay_session(&archive, &store, saturday, WorkerConfig::default(), |_| {})
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not a trading day"), "{err}");
    });
}

/// The SPY chain's quote times and the underlyings a replay of the trade date builds.
async fn replayed(archive: &QuoteArchive) -> (Vec<String>, Vec<DateTime<Utc>>) {
    let store = memory_store();
    let config = WorkerConfig {
        rate: 0.04,
        chain_only: true,
        ..WorkerConfig::default()
    };
    let mut seen = Vec::new();
    replay_session(archive, &store, trade_date(), config, |u| {
        seen.push(u.to_owned())
    })
    .await
    .unwrap();
    let key =
        optics_pipeline::store::SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), "SPY");
    let snapshot = store.read(&key).await.unwrap().unwrap();
    let mut times: Vec<DateTime<Utc>> = ChainRow::from_batch(&snapshot.batches[0])
        .unwrap()
        .iter()
        .filter_map(|r| r.call.quote_time)
        .collect();
    times.sort();
    times.dedup();
    (seen, times)
}

#[test]
fn replay_reads_an_import_once_it_has_committed_and_never_before() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let archive = runtime.block_on(archive_with_two_instants());
    let later = Utc.with_ymd_and_hms(2026, 11, 18, 20, 59, 30).unwrap();
    let mut imported = chain_at("SPY", later);
    imported.extend(chain_at("IWM", later));
    let stage = |sink: &mut ArchiveSink| {
        for chunk in imported.chunks(500) {
            sink.stage(ImportBatch::Quotes(chunk.to_vec())).unwrap();
        }
    };
    // An import that crashed before its commit (the sink dropped): not replayed.
    {
        let mut crashed = ArchiveSink::new(archive.clone(), "crashed")
            .unwrap()
            .with_flush_rows(300);
        stage(&mut crashed);
        assert!(!crashed.staged_objects().is_empty());
    }
    let last_appended = Utc.with_ymd_and_hms(2026, 11, 18, 20, 59, 0).unwrap();
    let (underlyings, spy_times) = runtime.block_on(replayed(&archive));
    assert_eq!(underlyings, ["QQQ", "SPY"]);
    assert_eq!(spy_times, [last_appended]);

    // The same quotes committed: replayed, the later quotes win.
    let mut sink = ArchiveSink::new(archive.clone(), "committed")
        .unwrap()
        .with_flush_rows(300);
    stage(&mut sink);
    sink.commit().unwrap();
    let (underlyings, spy_times) = runtime.block_on(replayed(&archive));
    assert_eq!(underlyings, ["IWM", "QQQ", "SPY"]);
    assert_eq!(spy_times, [later]);
}
