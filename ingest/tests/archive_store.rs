//! The quote archive: round trips (in memory and on a local directory), sequence numbers and
//! in-file order, and the all-or-nothing import sink (commit, abort, failures, a crash at
//! every write of an import, cleanup).

use optics_tests::faulty_store::FaultyStore;

use std::future::Future;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use optics_ingest::archive::{ArchiveError, ArchiveSink, QuoteArchive, SessionKey, archive_order};
use optics_ingest::vendor::{
    ImportBatch, ImportKind, ImportOptions, ImportSink, import_file, import_reader,
};
use optics_schemas::{ExerciseStyle, OptionQuote, OptionType, SettlementStyle, occ_symbol};

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// 15:00 UTC (10:00/11:00 New York) on `day`, plus `seconds`.
fn at(day: NaiveDate, seconds: i64) -> DateTime<Utc> {
    day.and_hms_opt(15, 0, 0).unwrap().and_utc() + Duration::seconds(seconds)
}

/// A valid quote; the strike grid and times vary with `i` so that rows arrive out of archive
/// order.
fn quote(underlying: &str, day: NaiveDate, i: usize) -> OptionQuote {
    let expiration = day + Duration::days(7 * (i % 3) as i64 + 1);
    let option_type = if i.is_multiple_of(2) {
        OptionType::Put
    } else {
        OptionType::Call
    };
    let strike = 100.0 + 5.0 * ((i * 7) % 11) as f64;
    let bid = 1.0 + (i % 13) as f64 * 0.05;
    OptionQuote {
        underlying: underlying.to_owned(),
        option_symbol: occ_symbol(&root(underlying), expiration, option_type, strike).unwrap(),
        expiration,
        strike,
        option_type,
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
        bid,
        ask: bid + 0.1,
        bid_size: 10 + i as u32,
        ask_size: 20,
        last: (!i.is_multiple_of(4)).then_some(bid + 0.05),
        volume: i as u64 * 3,
        open_interest: 1000 + i as u64,
        oi_date: day - Duration::days(1),
        quote_time: at(day, 1000 - i as i64),
        underlying_price: 123.45,
    }
}

/// The OCC root of a symbol (`BRK.B` → `BRKB`, `^VIX` → `VIX`).
fn root(underlying: &str) -> String {
    underlying
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

fn quotes(underlying: &str, day: NaiveDate, n: usize) -> Vec<OptionQuote> {
    (0..n).map(|i| quote(underlying, day, i)).collect()
}

fn sorted(mut rows: Vec<OptionQuote>) -> Vec<OptionQuote> {
    rows.sort_by(archive_order);
    rows
}

fn memory_archive() -> QuoteArchive {
    QuoteArchive::new(Arc::new(InMemory::new()), Path::from("archive"))
}

/// Every object path in the store, sorted.
fn all_objects(store: &Arc<dyn ObjectStore>) -> Vec<String> {
    block_on(async {
        let mut pending = vec![Path::default()];
        let mut found = Vec::new();
        while let Some(dir) = pending.pop() {
            let listing = store.list_with_delimiter(Some(&dir)).await.unwrap();
            found.extend(listing.objects.into_iter().map(|m| m.location.to_string()));
            pending.extend(listing.common_prefixes);
        }
        found.sort();
        found
    })
}

fn d1() -> NaiveDate {
    date(2026, 11, 19)
}

fn d2() -> NaiveDate {
    date(2026, 11, 20)
}

#[test]
fn round_trip_two_underlyings_two_dates() {
    let archive = memory_archive();
    let spy1 = quotes("SPY", d1(), 50);
    let qqq1 = quotes("QQQ", d1(), 30);
    let spy2 = quotes("SPY", d2(), 40);
    let vix2 = quotes("^VIX", d2(), 20);
    // One mixed batch and one single-session batch.
    let mut mixed = Vec::new();
    mixed.extend(spy1.iter().cloned());
    mixed.extend(qqq1.iter().cloned());
    mixed.extend(vix2.iter().cloned());
    let written = block_on(archive.append(&mixed)).unwrap();
    assert_eq!(written.len(), 3);
    block_on(archive.append(&spy2)).unwrap();

    let sessions = block_on(archive.list_sessions()).unwrap();
    assert_eq!(
        sessions,
        vec![
            SessionKey::new(d1(), "QQQ"),
            SessionKey::new(d1(), "SPY"),
            SessionKey::new(d2(), "SPY"),
            SessionKey::new(d2(), "^VIX"),
        ]
    );
    for (day, sym, rows) in [
        (d1(), "SPY", &spy1),
        (d1(), "QQQ", &qqq1),
        (d2(), "SPY", &spy2),
        (d2(), "^VIX", &vix2),
    ] {
        let back = block_on(archive.read_session(day, sym)).unwrap();
        assert_eq!(back, sorted(rows.clone()), "{day} {sym}");
    }
    // A session never recorded reads as empty.
    assert!(
        block_on(archive.read_session(d1(), "IWM"))
            .unwrap()
            .is_empty()
    );

    let objects = all_objects(archive.store());
    assert!(
        objects.contains(
            &"archive/quotes/trade_date=2026-11-20/underlying=%5EVIX/part-00000000.parquet"
                .to_owned()
        ),
        "{objects:?}"
    );
}

#[test]
fn trade_date_is_the_new_york_date() {
    let archive = memory_archive();
    // 2026-11-20 02:00 UTC is 2026-11-19 21:00 in New York.
    let mut q = quote("SPY", d1(), 0);
    q.quote_time = "2026-11-20T02:00:00Z".parse().unwrap();
    block_on(archive.append(std::slice::from_ref(&q))).unwrap();
    assert_eq!(
        block_on(archive.list_sessions()).unwrap(),
        vec![SessionKey::new(d1(), "SPY")]
    );
}

#[test]
fn sequence_numbers_follow_the_highest_part_and_parts_read_in_order() {
    let archive = memory_archive();
    let session = SessionKey::new(d1(), "SPY");
    let first = quotes("SPY", d1(), 10);
    let second: Vec<OptionQuote> = (10..25).map(|i| quote("SPY", d1(), i)).collect();
    let third: Vec<OptionQuote> = (25..30).map(|i| quote("SPY", d1(), i)).collect();
    let seqs: Vec<u32> = [&first, &second, &third]
        .iter()
        .map(|rows| block_on(archive.append(rows)).unwrap()[0].seq)
        .collect();
    assert_eq!(seqs, [0, 1, 2]);
    assert_eq!(block_on(archive.next_seq(&session)).unwrap(), 3);

    // A gap (part 7 written by someone else) is respected: the next part is 8.
    let stray = archive.part_path(&session, 7);
    let bytes = archive.encode_part(&mut quotes("SPY", d1(), 1)).unwrap();
    block_on(archive.store().put(&stray, bytes.into())).unwrap();
    assert_eq!(block_on(archive.next_seq(&session)).unwrap(), 8);
    let parts = block_on(archive.list_parts(&session)).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.seq).collect::<Vec<_>>(),
        [0, 1, 2, 7]
    );

    // Parts read back in sequence order, each sorted within itself.
    let back = block_on(archive.read_session(d1(), "SPY")).unwrap();
    let mut expected = sorted(first);
    expected.extend(sorted(second));
    expected.extend(sorted(third));
    expected.extend(quotes("SPY", d1(), 1));
    assert_eq!(back, expected);
}

#[test]
fn rows_are_sorted_and_row_groups_are_capped() {
    let archive = memory_archive().with_row_group_rows(16);
    let rows = quotes("SPY", d1(), 100);
    block_on(archive.append(&rows)).unwrap();
    let batches = block_on(archive.read_session_batches(d1(), "SPY")).unwrap();
    let back: Vec<OptionQuote> = batches
        .iter()
        .flat_map(|b| <OptionQuote as optics_schemas::Record>::from_batch(b).unwrap())
        .collect();
    assert!(back.windows(2).all(|w| archive_order(&w[0], &w[1]).is_le()));
    assert_eq!(back.len(), 100);
    // Row-group metadata: 100 rows in groups of ≤ 16, sorting columns declared.
    let part = &block_on(archive.list_parts(&SessionKey::new(d1(), "SPY"))).unwrap()[0];
    let bytes =
        block_on(async { archive.store().get(&part.path).await.unwrap().bytes().await }).unwrap();
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let meta = builder.metadata();
    assert_eq!(meta.num_row_groups(), 7);
    assert!(meta.row_groups().iter().all(|g| g.num_rows() <= 16));
    let sorting = meta.row_group(0).sorting_columns().unwrap();
    assert_eq!(
        sorting.iter().map(|s| s.column_idx).collect::<Vec<_>>(),
        [2, 3, 4, 15]
    );
}

#[test]
fn sink_commit_publishes_every_staged_part() {
    let archive = memory_archive();
    let mut sink = ArchiveSink::new(archive.clone(), "import-1")
        .unwrap()
        .with_flush_rows(16);
    // 40 SPY rows in batches of 8: a flush at 16 and 32 buffered rows, the rest at commit.
    let spy = quotes("SPY", d1(), 40);
    for chunk in spy.chunks(8) {
        sink.stage(ImportBatch::Quotes(chunk.to_vec())).unwrap();
    }
    sink.stage(ImportBatch::Quotes(quotes("QQQ", d1(), 5)))
        .unwrap();
    // Staged under the import's directory, but nothing visible yet.
    assert!(!sink.staged_objects().is_empty());
    assert!(block_on(archive.list_sessions()).unwrap().is_empty());
    assert!(
        all_objects(archive.store())
            .iter()
            .all(|p| p.starts_with("archive/imports/import-1/"))
    );

    sink.commit().unwrap();
    let published = sink.published().to_vec();
    // SPY: parts of 16, 16 and 8 rows (the last at commit) under one manifest, entry 0;
    // QQQ: one part, entry 0 of its session.
    let spy: Vec<(u32, Option<&str>)> = published
        .iter()
        .filter(|p| p.session.underlying == "SPY")
        .map(|p| (p.seq, p.import.as_deref()))
        .collect();
    assert_eq!(spy, [(0, Some("import-1")); 3]);
    assert_eq!(
        block_on(archive.list_sessions()).unwrap(),
        vec![SessionKey::new(d1(), "QQQ"), SessionKey::new(d1(), "SPY")]
    );
    let listed = block_on(archive.list_parts(&SessionKey::new(d1(), "SPY"))).unwrap();
    assert_eq!(
        listed,
        published
            .iter()
            .filter(|p| p.session.underlying == "SPY")
            .cloned()
            .collect::<Vec<_>>()
    );
    let mut back = block_on(archive.read_session(d1(), "SPY")).unwrap();
    back.sort_by(archive_order);
    assert_eq!(back, sorted(quotes("SPY", d1(), 40)));
    assert!(block_on(archive.list_uncommitted()).unwrap().is_empty());
    assert!(block_on(archive.is_committed("import-1")).unwrap());
    let objects = all_objects(archive.store());
    assert!(
        objects.contains(
            &"archive/quotes/trade_date=2026-11-19/underlying=SPY/part-00000000.import-import-1.manifest"
                .to_owned()
        ),
        "{objects:?}"
    );

    // A sink commits once, and its id cannot be taken again.
    assert!(
        sink.stage(ImportBatch::Quotes(quotes("SPY", d1(), 1)))
            .is_err()
    );
    assert!(matches!(
        ArchiveSink::new(archive.clone(), "import-1"),
        Err(ArchiveError::ImportIdInUse(_))
    ));

    // An append and a second import continue the session's numbering, and the session
    // reads back entry by entry.
    let appended: Vec<OptionQuote> = (100..103).map(|i| quote("SPY", d1(), i)).collect();
    assert_eq!(block_on(archive.append(&appended)).unwrap()[0].seq, 1);
    let mut sink = ArchiveSink::new(archive.clone(), "import-2").unwrap();
    let second: Vec<OptionQuote> = (200..204).map(|i| quote("SPY", d1(), i)).collect();
    sink.stage(ImportBatch::Quotes(second.clone())).unwrap();
    sink.commit().unwrap();
    assert_eq!(sink.published()[0].seq, 2);
    let back = block_on(archive.read_session(d1(), "SPY")).unwrap();
    assert_eq!(&back[40..43], sorted(appended).as_slice());
    assert_eq!(&back[43..], sorted(second).as_slice());
}

/// What the archive shows: every committed session with its rows in reading order.
fn visible(archive: &QuoteArchive) -> Vec<(SessionKey, Vec<OptionQuote>)> {
    block_on(async {
        let mut out = Vec::new();
        for session in archive.list_sessions().await.unwrap() {
            let rows = archive
                .read_session(session.trade_date, &session.underlying)
                .await
                .unwrap();
            out.push((session, rows));
        }
        out
    })
}

/// An import of three sessions (SPY over three parts, QQQ over two, IWM on another day in
/// one) into an archive that already holds an appended SPY part; the store is imaged after
/// every write of the import, staging and commit, as a crash right after that write would
/// leave it.
#[test]
fn a_crash_at_any_write_before_the_commit_record_leaves_nothing_visible() {
    let store = FaultyStore::new();
    let archive = QuoteArchive::new(store.clone(), Path::from("archive"));
    block_on(archive.append(&quotes("SPY", d1(), 5))).unwrap();
    let before_objects = all_objects(archive.store());
    let before = visible(&archive);

    store.set_imaging(true);
    let mut sink = ArchiveSink::new(archive.clone(), "crash-test")
        .unwrap()
        .with_flush_rows(10);
    let spy: Vec<OptionQuote> = (10..38).map(|i| quote("SPY", d1(), i)).collect();
    let qqq = quotes("QQQ", d1(), 15);
    let iwm = quotes("IWM", d2(), 4);
    for batch in [&spy, &qqq, &iwm] {
        for chunk in batch.chunks(7) {
            sink.stage(ImportBatch::Quotes(chunk.to_vec())).unwrap();
        }
    }
    sink.commit().unwrap();
    store.set_imaging(false);
    let images = store.take_images();
    let writes: Vec<&str> = images.iter().map(|i| i.0.as_str()).collect();
    // SPY in two parts, QQQ in two (one staged at commit), IWM in one; three manifests; the
    // commit record last.
    let parts = writes
        .iter()
        .filter(|w| w.starts_with("put archive/imports/crash-test/trade_date="))
        .count();
    assert_eq!(parts, 5, "{writes:?}");
    assert_eq!(images.len(), parts + 4, "{writes:?}");
    let last = images.len() - 1;
    assert!(
        writes[last].ends_with("imports/crash-test/_committed"),
        "{writes:?}"
    );

    for (write, image) in &images[..last] {
        let crashed = QuoteArchive::new(image.clone(), Path::from("archive"));
        assert_eq!(visible(&crashed), before, "crash after {write}");
        assert!(!block_on(crashed.is_committed("crash-test")).unwrap());
        // What the crash left is one uncommitted import, and cleanup removes exactly it.
        let uncommitted = block_on(crashed.list_uncommitted()).unwrap();
        assert_eq!(uncommitted.len(), 1, "crash after {write}");
        assert_eq!(uncommitted[0].import_id, "crash-test");
        let far_future = "2100-01-01T00:00:00Z".parse().unwrap();
        let removed = block_on(crashed.cleanup_uncommitted(far_future)).unwrap();
        assert_eq!(removed, uncommitted);
        assert_eq!(
            all_objects(&(image.clone() as Arc<dyn ObjectStore>)),
            before_objects,
            "cleanup after a crash after {write}"
        );
        // The same import id can be used again once cleaned up.
        assert!(ArchiveSink::new(crashed, "crash-test").is_ok());
    }

    // After the commit record: the whole import at once.
    let committed = QuoteArchive::new(images[last].1.clone(), Path::from("archive"));
    let shown = visible(&committed);
    assert_eq!(
        shown.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>(),
        vec![
            SessionKey::new(d1(), "QQQ"),
            SessionKey::new(d1(), "SPY"),
            SessionKey::new(d2(), "IWM"),
        ]
    );
    let rows_of = |sym: &str| {
        shown
            .iter()
            .find(|(s, _)| s.underlying == sym)
            .unwrap()
            .1
            .clone()
    };
    let mut spy_back = rows_of("SPY");
    assert_eq!(&spy_back[..5], sorted(quotes("SPY", d1(), 5)).as_slice());
    let mut imported = spy_back.split_off(5);
    imported.sort_by(archive_order);
    assert_eq!(imported, sorted(spy));
    let mut qqq_back = rows_of("QQQ");
    qqq_back.sort_by(archive_order);
    assert_eq!(qqq_back, sorted(qqq));
    assert_eq!(rows_of("IWM"), sorted(iwm));
    assert!(block_on(committed.list_uncommitted()).unwrap().is_empty());
}

/// A write failing at any point of an import (staging a part, a manifest, the commit record)
/// fails the import and leaves the archive exactly as it was; with enough writes allowed, the
/// same import commits.
#[test]
fn a_failed_write_anywhere_in_an_import_rolls_it_back() {
    let mut rows: Vec<OptionQuote> = (10..38).map(|i| quote("SPY", d1(), i)).collect();
    rows.extend(quotes("QQQ", d1(), 15));
    rows.extend(quotes("IWM", d2(), 4));
    let options = ImportOptions {
        batch_rows: 7,
        progress: None,
    };
    let mut failures = 0;
    for budget in 0.. {
        let store = FaultyStore::new();
        let archive = QuoteArchive::new(store.clone(), Path::from("archive"));
        block_on(archive.append(&quotes("SPY", d1(), 5))).unwrap();
        let before = all_objects(archive.store());
        store.set_write_budget(Some(budget));
        let mut sink = ArchiveSink::new(archive.clone(), "failing")
            .unwrap()
            .with_flush_rows(10);
        let result = stage_rows(&mut sink, &rows, &options).and_then(|()| sink.commit());
        store.set_write_budget(None);
        if result.is_ok() {
            assert_eq!(store.failed_writes(), 0);
            assert_eq!(
                block_on(archive.list_sessions()).unwrap().len(),
                3,
                "budget {budget}"
            );
            break;
        }
        failures += 1;
        assert!(store.failed_writes() > 0);
        assert_eq!(all_objects(archive.store()), before, "budget {budget}");
        assert!(block_on(archive.list_uncommitted()).unwrap().is_empty());
    }
    // Parts, three manifests and the commit record: every one of them failed once.
    assert!(failures >= 8, "{failures} failing writes tried");
}

/// Stages `rows` in batches of `options.batch_rows`, aborting on the first failure as the
/// import driver does.
fn stage_rows(
    sink: &mut ArchiveSink,
    rows: &[OptionQuote],
    options: &ImportOptions<'_>,
) -> Result<(), optics_ingest::vendor::SinkError> {
    for chunk in rows.chunks(options.batch_rows) {
        if let Err(e) = sink.stage(ImportBatch::Quotes(chunk.to_vec())) {
            sink.abort();
            return Err(e);
        }
    }
    Ok(())
}

#[test]
fn sink_abort_leaves_nothing() {
    let archive = memory_archive();
    block_on(archive.append(&quotes("SPY", d1(), 5))).unwrap();
    let before = all_objects(archive.store());
    let mut sink = ArchiveSink::new(archive.clone(), "import-1")
        .unwrap()
        .with_flush_rows(4);
    sink.stage(ImportBatch::Quotes(quotes("SPY", d1(), 20)))
        .unwrap();
    sink.stage(ImportBatch::Quotes(quotes("IWM", d2(), 20)))
        .unwrap();
    assert!(all_objects(archive.store()).len() > before.len());
    sink.abort();
    assert_eq!(all_objects(archive.store()), before);
    assert_eq!(
        block_on(archive.read_session(d1(), "SPY")).unwrap().len(),
        5
    );
    // Abort with nothing staged is fine; the sink is reusable afterwards.
    sink.abort();
    sink.stage(ImportBatch::Quotes(quotes("IWM", d2(), 2)))
        .unwrap();
    sink.commit().unwrap();
    assert_eq!(
        block_on(archive.read_session(d2(), "IWM")).unwrap().len(),
        2
    );
}

#[test]
fn dropped_sink_leaves_only_objects_that_readers_ignore_and_cleanup_removes() {
    let archive = memory_archive();
    block_on(archive.append(&quotes("SPY", d1(), 5))).unwrap();
    let before = all_objects(archive.store());
    {
        let mut sink = ArchiveSink::new(archive.clone(), "crashed")
            .unwrap()
            .with_flush_rows(4);
        sink.stage(ImportBatch::Quotes(quotes("SPY", d1(), 20)))
            .unwrap();
        sink.stage(ImportBatch::Quotes(quotes("QQQ", d1(), 20)))
            .unwrap();
        // Dropped here without commit or abort: a crash.
    }
    // Debris of the layout before manifests: a staged part under `_tmp/`.
    let legacy = Path::from("archive/_tmp/import-9-0/00000000.parquet");
    let bytes = archive.encode_part(&mut quotes("IWM", d1(), 2)).unwrap();
    block_on(archive.store().put(&legacy, bytes.into())).unwrap();

    let uncommitted = block_on(archive.list_uncommitted()).unwrap();
    let ids: Vec<&str> = uncommitted.iter().map(|u| u.import_id.as_str()).collect();
    assert_eq!(ids, ["_tmp/import-9-0", "crashed"]);
    assert!(
        uncommitted[1]
            .objects
            .iter()
            .all(|p| p.as_ref().starts_with("archive/imports/crashed/"))
    );
    // Readers see the archive as it was.
    assert_eq!(
        block_on(archive.list_sessions()).unwrap(),
        vec![SessionKey::new(d1(), "SPY")]
    );
    assert_eq!(
        block_on(archive.read_session(d1(), "SPY")).unwrap().len(),
        5
    );
    assert!(
        block_on(archive.read_session(d1(), "QQQ"))
            .unwrap()
            .is_empty()
    );
    // Nothing idle before a cutoff in the past is removed; a later cutoff removes exactly the
    // debris.
    let long_ago = "2000-01-01T00:00:00Z".parse().unwrap();
    assert!(
        block_on(archive.cleanup_uncommitted(long_ago))
            .unwrap()
            .is_empty()
    );
    let far_future = "2100-01-01T00:00:00Z".parse().unwrap();
    assert_eq!(
        block_on(archive.cleanup_uncommitted(far_future)).unwrap(),
        uncommitted
    );
    assert_eq!(all_objects(archive.store()), before);
}

#[test]
fn sink_rejects_bars_and_bad_staging_ids() {
    let archive = memory_archive();
    for bad in ["", ".", "..", "a/b", "x y", &"x".repeat(65)] {
        assert!(ArchiveSink::new(archive.clone(), bad).is_err(), "{bad:?}");
    }
    let mut sink = ArchiveSink::new(archive, "ok-1.2_3").unwrap();
    assert!(sink.stage(ImportBatch::Bars(Vec::new())).is_err());
}

fn orats_sample() -> PathBuf {
    FsPath::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vendor/orats_strikes_sample.csv")
}

#[test]
fn vendor_import_goes_through_the_sink_all_or_nothing() {
    let archive = memory_archive();
    // A good file is archived...
    let mut sink = ArchiveSink::new(archive.clone(), "good").unwrap();
    let summary = import_file(&orats_sample(), &ImportKind::OratsStrikes, &mut sink).unwrap();
    let sessions = block_on(archive.list_sessions()).unwrap();
    assert!(!sessions.is_empty());
    let archived: usize = sessions
        .iter()
        .map(|s| {
            block_on(archive.read_session(s.trade_date, &s.underlying))
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(archived as u64, summary.rows);
    let before = all_objects(archive.store());

    // ...a file with a bad last line leaves nothing, even with small batches already staged.
    let mut text = std::fs::read_to_string(orats_sample()).unwrap();
    text.push_str("this,is,not,a,valid,line\n");
    let mut sink = ArchiveSink::new(archive.clone(), "bad")
        .unwrap()
        .with_flush_rows(1);
    let options = ImportOptions {
        batch_rows: 1,
        progress: None,
    };
    let result = import_reader(
        text.as_bytes(),
        "bad.csv",
        None,
        &ImportKind::OratsStrikes,
        &mut sink,
        options,
    );
    assert!(result.is_err());
    assert_eq!(all_objects(archive.store()), before);
}

#[test]
fn local_filesystem_round_trip() {
    let dir = std::env::temp_dir().join(format!("optics-archive-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _cleanup = RemoveOnDrop(dir.clone());
    let archive = QuoteArchive::local(&dir).unwrap();
    let spy = quotes("SPY", d1(), 60);
    let brk = quotes("BRK.B", d2(), 25);
    block_on(archive.append(&spy)).unwrap();
    let mut sink = ArchiveSink::new(archive.clone(), "local-1")
        .unwrap()
        .with_flush_rows(10);
    sink.stage(ImportBatch::Quotes(brk.clone())).unwrap();
    // Crash debris from another import must not be read.
    let mut crashed = ArchiveSink::new(archive.clone(), "local-crash")
        .unwrap()
        .with_flush_rows(1);
    crashed
        .stage(ImportBatch::Quotes(quotes("QQQ", d1(), 3)))
        .unwrap();
    drop(crashed);
    sink.commit().unwrap();

    assert_eq!(
        block_on(archive.list_sessions()).unwrap(),
        vec![SessionKey::new(d1(), "SPY"), SessionKey::new(d2(), "BRK.B")]
    );
    assert_eq!(
        block_on(archive.read_session(d1(), "SPY")).unwrap(),
        sorted(spy)
    );
    let mut back = block_on(archive.read_session(d2(), "BRK.B")).unwrap();
    back.sort_by(archive_order);
    assert_eq!(back, sorted(brk));
    assert!(
        dir.join(
            "quotes/trade_date=2026-11-20/underlying=BRK.B/part-00000000.import-local-1.manifest"
        )
        .is_file()
    );
    assert!(
        dir.join("imports/local-1/trade_date=2026-11-20/underlying=BRK.B/part-00000000.parquet")
            .is_file()
    );
    let far_future = "2100-01-01T00:00:00Z".parse().unwrap();
    let removed = block_on(archive.cleanup_uncommitted(far_future)).unwrap();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].import_id, "local-crash");

    // A fresh handle on the same directory sees the same archive.
    let reopened = QuoteArchive::local(&dir).unwrap();
    assert_eq!(block_on(reopened.list_sessions()).unwrap().len(), 2);
}

/// Removes the test's directory even when an assertion fails.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
