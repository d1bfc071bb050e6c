use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::{Array, Date32Array, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use chrono::{NaiveDate, TimeZone, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::*;

fn date(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap()
}

fn memory_store() -> SnapshotStore {
    SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"))
}

/// A small sorted batch: strikes `first..first+n`, one expiration.
fn batch(first: f64, n: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("underlying", DataType::Utf8, false),
        Field::new("expiration", DataType::Date32, false),
        Field::new("strike", DataType::Float64, false),
    ]));
    let strikes: Vec<f64> = (0..n).map(|i| first + i as f64).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["SPY"; n])),
            Arc::new(Date32Array::from(vec![20_000; n])),
            Arc::new(Float64Array::from(strikes)),
        ],
    )
    .unwrap()
}

fn strikes_of(snapshot: &Snapshot) -> Vec<f64> {
    snapshot
        .batches
        .iter()
        .flat_map(|b| {
            let col = b
                .column_by_name("strike")
                .unwrap()
                .as_any()
                .downcast_ref::<Float64Array>()
                .unwrap()
                .clone();
            (0..col.len()).map(move |i| col.value(i))
        })
        .collect()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn publish_then_read_returns_the_rows_and_the_event_describes_them() {
    block_on(async {
        let store = memory_store();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        let event = store
            .publish(&key, &batch(100.0, 5), &["expiration", "strike"], at())
            .await
            .unwrap();
        assert_eq!(event.dataset, "chain");
        assert_eq!(event.trade_date, date(20));
        assert_eq!(event.underlying, "SPY");
        assert_eq!(event.version, 1);
        assert_eq!(event.row_count, 5);
        assert_eq!(event.published_at, at());
        assert_eq!(
            event.path,
            "snapshots/chain/trade_date=2026-11-20/underlying=SPY/v-00000000000000000001.parquet"
        );
        event.validate().unwrap();

        let snap = store.read(&key).await.unwrap().unwrap();
        assert_eq!(snap.file.version, 1);
        assert_eq!(snap.num_rows(), 5);
        assert_eq!(strikes_of(&snap), vec![100.0, 101.0, 102.0, 103.0, 104.0]);
        assert_eq!(snap.batches[0].schema(), batch(0.0, 1).schema());
    });
}

#[test]
fn the_newest_version_wins_and_old_versions_are_pruned() {
    block_on(async {
        let store = memory_store();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        for i in 0..5 {
            let e = store
                .publish(&key, &batch(100.0 * (i + 1) as f64, 2), &["strike"], at())
                .await
                .unwrap();
            assert_eq!(e.version, i + 1);
        }
        assert_eq!(
            version_numbers(&store, &key).await,
            [4, 5],
            "only the newest two survive"
        );
        let snap = store.read(&key).await.unwrap().unwrap();
        assert_eq!(strikes_of(&snap), vec![500.0, 501.0]);
    });
}

#[test]
fn partitions_are_independent() {
    block_on(async {
        let store = memory_store();
        let spy = SnapshotKey::new("chain", date(20), "SPY");
        let qqq = SnapshotKey::new("chain", date(20), "QQQ");
        let spy_flow = SnapshotKey::new("flow", date(20), "SPY");
        store
            .publish(&spy, &batch(1.0, 1), &[], at())
            .await
            .unwrap();
        store
            .publish(&spy, &batch(2.0, 1), &[], at())
            .await
            .unwrap();
        let e = store
            .publish(&qqq, &batch(3.0, 1), &[], at())
            .await
            .unwrap();
        assert_eq!(e.version, 1);
        assert!(store.read(&spy_flow).await.unwrap().is_none());
        assert_eq!(
            store.underlyings("chain", date(20)).await.unwrap(),
            ["QQQ", "SPY"]
        );
        assert!(
            store
                .underlyings("chain", date(19))
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.trade_dates("nothing").await.unwrap().is_empty());
    });
}

#[test]
fn a_failed_or_foreign_write_never_hides_the_current_snapshot() {
    block_on(async {
        let store = memory_store();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        store
            .publish(&key, &batch(10.0, 3), &["strike"], at())
            .await
            .unwrap();
        // What a crashed writer can leave behind: a staging file of another name, and a
        // truncated object that is not a version file.
        let dir = store.partition_dir(&key);
        let stray = [
            dir.clone().join(".v-00000000000000000002.parquet.tmp"),
            dir.clone().join("v-2.parquet"),
        ];
        for path in &stray {
            store
                .object_store()
                .put(path, PutPayload::from(b"PAR1 trunc".to_vec()))
                .await
                .unwrap();
        }
        let snap = store.read(&key).await.unwrap().unwrap();
        assert_eq!(snap.file.version, 1);
        assert_eq!(strikes_of(&snap), vec![10.0, 11.0, 12.0]);
        // An encoding failure publishes nothing and leaves version 1 current.
        let err = store
            .publish(&key, &batch(0.0, 1), &["no_such_column"], at())
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::UnknownSortColumn(ref c) if c == "no_such_column"));
        assert_eq!(store.latest(&key).await.unwrap().unwrap().version, 1);
    });
}

#[test]
fn racing_publishers_get_distinct_versions() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = memory_store().with_keep_versions(100);
        let key = SnapshotKey::new("chain", date(20), "SPY");
        let mut tasks = Vec::new();
        for i in 0..8 {
            let (store, key) = (store.clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                store
                    .publish(&key, &batch(i as f64, 1), &[], at())
                    .await
                    .unwrap()
                    .version
            }));
        }
        let mut versions = Vec::new();
        for t in tasks {
            versions.push(t.await.unwrap());
        }
        versions.sort_unstable();
        assert_eq!(versions, (1..=8).collect::<Vec<u64>>());
    });
}

#[test]
fn files_declare_their_sort_order_and_carry_statistics() {
    block_on(async {
        let store = memory_store().with_row_group_rows(10);
        let key = SnapshotKey::new("chain", date(20), "SPY");
        store
            .publish(&key, &batch(100.0, 25), &["expiration", "strike"], at())
            .await
            .unwrap();
        let file = store.latest(&key).await.unwrap().unwrap();
        let bytes = store
            .object_store()
            .get(&file.path)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let reader = SerializedFileReader::new(bytes).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.num_row_groups(), 3);
        let group = meta.row_group(1);
        let sorting = group.sorting_columns().unwrap();
        assert_eq!(
            sorting.iter().map(|s| s.column_idx).collect::<Vec<_>>(),
            vec![1, 2]
        );
        let stats = group.column(2).statistics().unwrap();
        assert_eq!(stats.min_bytes_opt().unwrap(), 110.0f64.to_le_bytes());
        assert_eq!(stats.max_bytes_opt().unwrap(), 119.0f64.to_le_bytes());
    });
}

#[test]
fn history_helpers_find_current_files_and_latest_dates() {
    block_on(async {
        let store = memory_store();
        for d in [17, 18, 19, 20] {
            for sym in ["SPY", "QQQ"] {
                if d == 20 && sym == "QQQ" {
                    continue;
                }
                let key = SnapshotKey::new("chain", date(d), sym);
                store
                    .publish(&key, &batch(1.0, 1), &[], at())
                    .await
                    .unwrap();
                store
                    .publish(&key, &batch(2.0, 1), &[], at())
                    .await
                    .unwrap();
            }
        }
        assert_eq!(
            store.trade_dates("chain").await.unwrap(),
            vec![date(17), date(18), date(19), date(20)]
        );
        let mut files = store.current_partitions("chain").await.unwrap();
        files.retain(|f| (date(18)..=date(19)).contains(&f.key.trade_date));
        let seen: Vec<(NaiveDate, &str, u64)> = files
            .iter()
            .map(|f| (f.key.trade_date, f.key.underlying.as_str(), f.version))
            .collect();
        assert_eq!(
            seen,
            vec![
                (date(18), "QQQ", 2),
                (date(18), "SPY", 2),
                (date(19), "QQQ", 2),
                (date(19), "SPY", 2)
            ]
        );
        assert_eq!(
            store.latest_trade_date("chain", "QQQ", None).await.unwrap(),
            Some(date(19))
        );
        assert_eq!(
            store
                .latest_trade_date("chain", "SPY", Some(date(18)))
                .await
                .unwrap(),
            Some(date(18))
        );
        assert_eq!(
            store.latest_trade_date("chain", "IWM", None).await.unwrap(),
            None
        );
    });
}

#[test]
fn keys_that_cannot_form_paths_are_rejected() {
    block_on(async {
        let store = memory_store();
        for (dataset, sym) in [
            ("Chain", "SPY"),
            ("", "SPY"),
            ("chain/x", "SPY"),
            ("chain", ""),
            ("chain", "../etc"),
            ("chain", "A/B"),
            ("chain", ".hidden"),
        ] {
            let key = SnapshotKey::new(dataset, date(20), sym);
            let err = store
                .publish(&key, &batch(1.0, 1), &[], at())
                .await
                .unwrap_err();
            assert!(matches!(err, StoreError::InvalidKey { .. }), "{key}: {err}");
        }
        // Reserved characters are fine: they are percent-encoded in the path.
        let vix = SnapshotKey::new("chain", date(20), "^VIX");
        store
            .publish(&vix, &batch(1.0, 1), &[], at())
            .await
            .unwrap();
        assert_eq!(
            store.underlyings("chain", date(20)).await.unwrap(),
            ["^VIX"]
        );
        assert!(store.read(&vix).await.unwrap().is_some());
    });
}

#[test]
fn a_local_directory_store_survives_reopening() {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "optics-store-test-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    block_on(async {
        let key = SnapshotKey::new("chain", date(20), "SPY");
        {
            let store = SnapshotStore::local(&dir).unwrap();
            store
                .publish(&key, &batch(7.0, 2), &["strike"], at())
                .await
                .unwrap();
        }
        let reopened = SnapshotStore::local(&dir).unwrap();
        let snap = reopened.read(&key).await.unwrap().unwrap();
        assert_eq!(strikes_of(&snap), vec![7.0, 8.0]);
        assert!(
            dir.join("chain/trade_date=2026-11-20/underlying=SPY/v-00000000000000000001.parquet")
                .is_file()
        );
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_undecodable_newest_version_falls_back_to_the_previous_one() {
    // A newest file cut short (what a power loss before the fsync could leave) or corrupt:
    // readers get the previous version, and the local store's fsynced publications of an
    // encoded symbol find their files.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "optics-store-fallback-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    block_on(async {
        let store = SnapshotStore::local(&dir).unwrap();
        for symbol in ["SPY", "^VIX"] {
            let key = SnapshotKey::new("chain", date(20), symbol);
            store
                .publish(&key, &batch(7.0, 2), &["strike"], at())
                .await
                .unwrap();
            store
                .publish(&key, &batch(9.0, 2), &["strike"], at())
                .await
                .unwrap();
            let newest = store.latest(&key).await.unwrap().unwrap();
            assert_eq!(newest.version, 2);
            // Truncate the newest file in place.
            let on_disk = newest
                .path
                .parts()
                .fold(std::fs::canonicalize(&dir).unwrap(), |d, p| {
                    d.join(p.as_ref())
                });
            let bytes = std::fs::read(&on_disk).unwrap();
            std::fs::write(&on_disk, &bytes[..bytes.len() / 2]).unwrap();
            let snap = store.read(&key).await.unwrap().unwrap();
            assert_eq!(snap.file.version, 1, "{symbol}");
            assert_eq!(strikes_of(&snap), vec![7.0, 8.0]);
            // With no decodable version left, the newest one's error is returned.
            let oldest = store.versions(&key).await.unwrap()[0].clone();
            let on_disk = oldest
                .path
                .parts()
                .fold(std::fs::canonicalize(&dir).unwrap(), |d, p| {
                    d.join(p.as_ref())
                });
            std::fs::write(&on_disk, b"not parquet").unwrap();
            assert!(store.read(&key).await.is_err());
        }
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn version_file_names_round_trip() {
    assert_eq!(version_file_name(42), "v-00000000000000000042.parquet");
    assert_eq!(
        parse_version_file_name("v-00000000000000000042.parquet"),
        Some(42)
    );
    assert_eq!(parse_version_file_name("v-42.parquet"), None);
    assert_eq!(
        parse_version_file_name("v-0000000000000000004x.parquet"),
        None
    );
    assert_eq!(
        parse_version_file_name(&version_file_name(u64::MAX)),
        Some(u64::MAX)
    );
}

#[test]
fn store_urls_open_the_right_backends_or_say_why_not() {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "optics-store-url-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    block_on(async {
        let key = SnapshotKey::new("chain", date(20), "SPY");
        for location in [
            dir.display().to_string(),
            format!("file://{}", dir.display()),
        ] {
            let store = SnapshotStore::from_url(&location).unwrap();
            store
                .publish(&key, &batch(1.0, 1), &[], at())
                .await
                .unwrap();
        }
        assert_eq!(
            SnapshotStore::local(&dir)
                .unwrap()
                .latest(&key)
                .await
                .unwrap()
                .unwrap()
                .version,
            2,
            "both spellings are the same directory"
        );
        let memory = SnapshotStore::from_url("memory://").unwrap();
        memory
            .publish(&key, &batch(1.0, 1), &[], at())
            .await
            .unwrap();
        let s3 = SnapshotStore::from_url("s3://bucket/optics/snapshots").unwrap();
        assert_eq!(s3.prefix().as_ref(), "optics/snapshots");
    });
    std::fs::remove_dir_all(&dir).unwrap();
    for bad in [
        "",
        "   ",
        "file://relative/dir",
        "ftp://host/x",
        "s3://",
        "gs://bucket",
    ] {
        let err = SnapshotStore::from_url(bad).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidUrl { .. }),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn a_foreign_writer_that_went_ahead_and_pruned_is_found_by_listing() {
    block_on(async {
        let (ours, theirs) = two_writers();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        for i in 1..=2u32 {
            let e = ours
                .publish(&key, &batch(f64::from(i), 1), &[], at())
                .await
                .unwrap();
            assert_eq!(e.version, u64::from(i));
        }
        // They publish 3..=6 and prune down to 5 and 6: our next number (3) is free again.
        for i in 3..=6u32 {
            let e = theirs
                .publish(&key, &batch(f64::from(i), 1), &[], at())
                .await
                .unwrap();
            assert_eq!(e.version, u64::from(i));
        }
        let e = ours.publish(&key, &batch(7.0, 1), &[], at()).await.unwrap();
        assert_eq!(
            e.version, 7,
            "our last file is gone: list, and go past theirs"
        );
        let snap = ours.read(&key).await.unwrap().unwrap();
        assert_eq!(strikes_of(&snap), vec![7.0]);
        assert_eq!(version_numbers(&ours, &key).await, [6, 7]);
    });
}

#[test]
fn a_foreign_writer_that_took_our_next_number_pushes_us_past_it() {
    block_on(async {
        let (ours, theirs) = two_writers();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        ours.publish(&key, &batch(1.0, 1), &[], at()).await.unwrap();
        let e = theirs
            .publish(&key, &batch(2.0, 1), &[], at())
            .await
            .unwrap();
        assert_eq!(e.version, 2);
        // Our version 1 is still there, so we try 2 without listing: taken, never overwritten.
        let e = ours.publish(&key, &batch(3.0, 1), &[], at()).await.unwrap();
        assert_eq!(e.version, 3);
        let snap = ours.read(&key).await.unwrap().unwrap();
        assert_eq!(strikes_of(&snap), vec![3.0]);
        let version_2 = theirs.read(&key).await.unwrap().unwrap().file;
        assert_eq!(version_2.version, 3);
        let old = SnapshotFile {
            version: 2,
            path: ours.version_path(&key, 2),
            ..version_2
        };
        assert_eq!(
            strikes_of(&Snapshot {
                batches: ours.read_file(&old).await.unwrap(),
                file: old,
            }),
            vec![2.0],
            "their version 2 is theirs"
        );
    });
}

#[test]
fn leftovers_below_the_kept_versions_are_swept_by_a_periodic_listing() {
    block_on(async {
        let store = memory_store();
        let key = SnapshotKey::new("chain", date(20), "SPY");
        for i in 1..=10u32 {
            store
                .publish(&key, &batch(f64::from(i), 1), &[], at())
                .await
                .unwrap();
        }
        // A straggler of another writer lands late, below the kept versions: deleting just the
        // version each publication pushes out never reaches it.
        let straggler = store.version_path(&key, 3);
        let bytes = encode_parquet(&batch(0.0, 1), &[], 16).unwrap();
        store
            .object_store()
            .put(&straggler, PutPayload::from(bytes))
            .await
            .unwrap();
        for i in 11..SWEEP_EVERY_VERSIONS {
            let e = store
                .publish(&key, &batch(i as f64, 1), &[], at())
                .await
                .unwrap();
            assert_eq!(e.version, i);
        }
        let last = SWEEP_EVERY_VERSIONS - 1;
        assert_eq!(version_numbers(&store, &key).await, [3, last - 1, last]);
        store
            .publish(&key, &batch(0.0, 1), &[], at())
            .await
            .unwrap();
        assert_eq!(
            version_numbers(&store, &key).await,
            [last, SWEEP_EVERY_VERSIONS]
        );
    });
}

/// Two handles over the same objects, as two processes would have (no shared memory of the
/// versions published).
fn two_writers() -> (SnapshotStore, SnapshotStore) {
    let objects: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    (
        SnapshotStore::new(Arc::clone(&objects), Path::from("snapshots")),
        SnapshotStore::new(objects, Path::from("snapshots")),
    )
}

async fn version_numbers(store: &SnapshotStore, key: &SnapshotKey) -> Vec<u64> {
    store
        .versions(key)
        .await
        .unwrap()
        .iter()
        .map(|f| f.version)
        .collect()
}

#[test]
fn float_columns_outside_the_sort_order_are_written_without_a_dictionary() {
    let has_dictionary = |sort_columns: &[&str]| -> Vec<(String, bool)> {
        let bytes = encode_parquet(&batch(100.0, 64), sort_columns, 1024).unwrap();
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let group = reader.metadata().row_group(0);
        group
            .columns()
            .iter()
            .map(|c| {
                (
                    c.column_path().string(),
                    c.dictionary_page_offset().is_some(),
                )
            })
            .collect()
    };
    let expect = |strike: bool| {
        vec![
            ("underlying".to_owned(), true),
            ("expiration".to_owned(), true),
            ("strike".to_owned(), strike),
        ]
    };
    assert_eq!(has_dictionary(&[]), expect(false));
    assert_eq!(has_dictionary(&["expiration", "strike"]), expect(true));
}

#[test]
fn the_version_memo_keeps_only_the_last_week_of_trade_dates() {
    use optics_schemas::memory::MemoryHolder;
    let remembered = |store: &SnapshotStore| {
        let mut out = Vec::new();
        store.held_memory(&mut out);
        assert_eq!(out[0].holder, "store_version_memo");
        out[0].items
    };
    block_on(async {
        let store = memory_store();
        assert_eq!(remembered(&store), 0);
        // Two partitions a day over two weeks of November: a live worker's pattern.
        for day in 1..=14 {
            for underlying in ["SPY", "QQQ"] {
                let key = SnapshotKey::new("chain", date(day), underlying);
                store
                    .publish(&key, &batch(1.0, 1), &[], at())
                    .await
                    .unwrap();
            }
        }
        // The 7th through the 14th: eight days of two partitions.
        assert_eq!(remembered(&store), 16);
        // A forgotten partition is found by listing: its next version follows the stored one.
        let old = SnapshotKey::new("chain", date(1), "SPY");
        let event = store
            .publish(&old, &batch(2.0, 1), &[], at())
            .await
            .unwrap();
        assert_eq!(event.version, 2);
        // An older date does not push the window back.
        assert_eq!(remembered(&store), 17);
        let next = SnapshotKey::new("chain", date(15), "SPY");
        store
            .publish(&next, &batch(1.0, 1), &[], at())
            .await
            .unwrap();
        // The 8th through the 15th: the 1st and the 7th are forgotten.
        assert_eq!(remembered(&store), 15);
    });
}
