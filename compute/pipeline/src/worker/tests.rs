//! The worker's cycle on hand-made books: what one underlying's failure leaves of the others;
//! what a reference message is applied to on each of the worker's subscriptions.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::{
    AssetClass, DataBatch, DividendFrequency, EarningsTiming, ExerciseStyle, MARKET_WIDE_KEY,
    Message, OptionQuote, OptionType as QuoteType, SettlementStyle, occ_symbol,
};

use super::*;
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, price};
use optics_compute::time::ManualClock;

fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 18).unwrap()
}

fn quoted_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 18, 19, 0, 0).unwrap()
}

/// Calls and puts of `underlying` (spot 100, strikes 90–110) priced at 20 % vol, one cent
/// either side of the model price; `symbol_root` names the contracts (another root than
/// `underlying` makes quotes of one underlying sent under another's key).
fn quotes(underlying: &str, symbol_root: &str) -> Vec<OptionQuote> {
    let expiration = NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
    let years = optics_compute::time::years_to_expiry(quoted_at(), expiration);
    let mut quotes = Vec::new();
    for strike in [90.0, 95.0, 100.0, 105.0, 110.0] {
        for (quote_type, option_type) in [
            (QuoteType::Call, OptionType::Call),
            (QuoteType::Put, OptionType::Put),
        ] {
            let inputs = OptionInputs {
                option_type,
                model: PricingModel::BlackScholesMerton,
                underlying: 100.0,
                strike,
                years,
                rate: 0.04,
                dividend_yield: 0.0,
            };
            let value = price(&inputs, 0.2).unwrap();
            quotes.push(OptionQuote {
                underlying: underlying.to_owned(),
                option_symbol: occ_symbol(symbol_root, expiration, quote_type, strike).unwrap(),
                expiration,
                strike,
                option_type: quote_type,
                settlement: SettlementStyle::Pm,
                exercise_style: ExerciseStyle::American,
                bid: value - 0.01,
                ask: value + 0.01,
                bid_size: 10,
                ask_size: 10,
                last: None,
                volume: 50,
                open_interest: 1_000,
                oi_date: NaiveDate::from_ymd_opt(2026, 11, 17).unwrap(),
                quote_time: quoted_at(),
                underlying_price: 100.0,
            });
        }
    }
    quotes
}

/// An offline worker over an empty in-memory store (returned too), its clock at
/// [`quoted_at`].
fn offline_worker() -> (SnapshotStore, ComputeWorker) {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    let clock = Arc::new(ManualClock::new(quoted_at()));
    let worker = ComputeWorker::offline(store.clone(), clock, WorkerConfig::default());
    (store, worker)
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn an_underlying_that_fails_to_build_is_skipped_and_the_others_are_published() {
    block_on(async {
        let (store, mut worker) = offline_worker();
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        // IWM's quotes in QQQ's book: the chain refuses another underlying's quotes. (The bus
        // refuses such a message, so the book is filled directly; it stands for any failure.)
        worker.book_mut("QQQ").apply_quotes(quotes("IWM", "IWM"));
        assert!(
            cycle::build_underlying(
                "QQQ",
                worker.book("QQQ").unwrap(),
                &CycleContext {
                    as_of: quoted_at(),
                    rate: 0.04,
                    chain_only: false,
                },
            )
            .is_err(),
            "the QQQ book must fail to build for this test to mean anything"
        );

        let events = worker.publish_dirty(quoted_at()).await.unwrap();

        let announced: Vec<(&str, &str)> = events
            .iter()
            .map(|e| (e.underlying.as_str(), e.dataset.as_str()))
            .collect();
        assert_eq!(
            announced,
            [
                ("SPY", snapshot_datasets::CHAIN),
                ("SPY", snapshot_datasets::EXPOSURES),
                ("SPY", snapshot_datasets::EXPOSURE_SUMMARY),
                ("SPY", snapshot_datasets::FLOW),
                ("SPY", snapshot_datasets::FLOW_AGGREGATES),
            ]
        );
        assert_eq!(worker.stats().build_failures, 1);
        assert_eq!(worker.stats().snapshots, 5);
        assert_eq!(worker.stats().cycles, 1);
        for event in &events {
            let key = SnapshotKey::new(event.dataset.as_str(), trade_date(), "SPY");
            let snapshot = store.read(&key).await.unwrap().expect("published");
            assert_eq!(snapshot.num_rows() as u64, event.row_count);
        }
        let chain = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), "SPY");
        let spy = store.read(&chain).await.unwrap().unwrap();
        assert_eq!(spy.num_rows(), 5, "one row per strike");
        assert!(
            store
                .underlyings(snapshot_datasets::CHAIN, trade_date())
                .await
                .unwrap()
                == ["SPY"],
            "nothing of QQQ is published"
        );
        // Both books are settled: the failed one waits for its next change instead of failing
        // again every cycle.
        assert!(!worker.book("SPY").unwrap().is_dirty());
        assert!(!worker.book("QQQ").unwrap().is_dirty());
        assert!(worker.publish_dirty(quoted_at()).await.unwrap().is_empty());
        assert_eq!(worker.stats().build_failures, 1);
    });
}

#[test]
fn a_cycle_keeps_the_input_order_whatever_order_it_builds_in() {
    // Books of different sizes (the cycle starts with the largest), one of them failing.
    let mut books = Vec::new();
    for (underlying, root, contracts) in [
        ("AAA", "AAA", 4),
        ("BBB", "BBB", 10),
        ("QQQ", "IWM", 10),
        ("CCC", "CCC", 6),
        ("DDD", "DDD", 8),
    ] {
        let mut book = UnderlyingBook::default();
        let mut held = quotes(root, root);
        held.truncate(contracts);
        book.apply_quotes(held);
        books.push((underlying.to_owned(), Arc::new(book)));
    }
    let ctx = CycleContext {
        as_of: quoted_at(),
        rate: 0.04,
        chain_only: false,
    };
    let built = cycle::build_all(&books, &ctx);
    let names: Vec<&str> = built.iter().map(|(u, _)| u.as_str()).collect();
    assert_eq!(names, ["AAA", "BBB", "QQQ", "CCC", "DDD"]);
    for ((underlying, book), (_, snapshots)) in books.iter().zip(&built) {
        let alone = cycle::build_underlying(underlying, book, &ctx);
        match (snapshots, alone) {
            (Ok(snapshots), Ok(alone)) => {
                assert_eq!(snapshots.len(), alone.len(), "{underlying}");
                for (a, b) in snapshots.iter().zip(&alone) {
                    assert_eq!((a.dataset, &a.batch), (b.dataset, &b.batch), "{underlying}");
                }
            }
            (Err(_), Err(_)) => assert_eq!(underlying, "QQQ"),
            (snapshots, alone) => panic!(
                "{underlying}: built {:?}, alone {:?}",
                snapshots.is_ok(),
                alone.is_ok()
            ),
        }
    }
}

#[test]
fn a_cycle_builds_in_waves_largest_book_first_each_book_once() {
    let book = |root: &str, contracts: usize| {
        let mut book = UnderlyingBook::default();
        let mut held = quotes(root, root);
        held.truncate(contracts);
        book.apply_quotes(held);
        (root.to_owned(), Arc::new(book))
    };
    let books = vec![
        book("AAA", 2),
        book("BBB", 10),
        book("CCC", 6),
        book("DDD", 4),
        book("EEE", 1),
    ];
    let names = |waves: &[Vec<(String, Arc<UnderlyingBook>)>]| -> Vec<Vec<String>> {
        waves
            .iter()
            .map(|w| w.iter().map(|(u, _)| u.clone()).collect())
            .collect()
    };
    // Waves of at least 8 contracts: BBB (10) alone, CCC + DDD (10), the rest (3).
    assert_eq!(
        names(&cycle::waves(books.clone(), 8)),
        [vec!["BBB"], vec!["CCC", "DDD"], vec!["AAA", "EEE"]]
    );
    // One wave when it is large enough for everything; one book per wave at the other end.
    assert_eq!(
        names(&cycle::waves(books.clone(), 1_000)),
        [vec!["BBB", "CCC", "DDD", "AAA", "EEE"]]
    );
    assert_eq!(cycle::waves(books.clone(), 1).len(), 5);
    assert!(cycle::waves(Vec::new(), 8).is_empty());
}

#[test]
fn a_cycle_of_several_waves_publishes_every_underlying_in_their_order() {
    block_on(async {
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
        let clock = Arc::new(ManualClock::new(quoted_at()));
        let config = WorkerConfig {
            wave_contracts: 25,
            ..WorkerConfig::default()
        };
        let mut worker = ComputeWorker::offline(store, clock, config);
        // Waves of at least 25 contracts over twelve books of 10: four waves of three books.
        let roots: Vec<String> = (0..12).map(|i| format!("U{i:02}")).collect();
        for root in &roots {
            worker.apply(&data(root, &quotes(root, root))).unwrap();
        }
        let books: Vec<(String, Arc<UnderlyingBook>)> = worker
            .books
            .iter()
            .map(|(u, b)| (u.clone(), Arc::clone(b)))
            .collect();
        assert_eq!(cycle::waves(books, 25).len(), 4);
        let events = worker.publish_dirty(quoted_at()).await.unwrap();
        let underlyings: Vec<&str> = events.iter().map(|e| e.underlying.as_str()).collect();
        let mut expected = Vec::new();
        for root in &roots {
            expected.extend([root.as_str(); 5]);
        }
        assert_eq!(underlyings, expected);
        assert_eq!(worker.stats().cycles, 1);
        assert_eq!(worker.stats().snapshots, 60);
        // Every book is clean: the next cycle has nothing to do.
        assert!(worker.publish_dirty(quoted_at()).await.unwrap().is_empty());
    });
}

/// Records what a worker hands over in process.
#[derive(Default)]
struct Recorder(
    std::sync::Mutex<Vec<(SnapshotKey, u64, usize)>>,
    std::sync::Mutex<Vec<(String, Vec<BatchTimes>)>>,
);

impl PublishedSnapshots for Recorder {
    fn published(&self, key: &SnapshotKey, version: u64, batch: &RecordBatch) -> bool {
        self.0
            .lock()
            .unwrap()
            .push((key.clone(), version, batch.num_rows()));
        true
    }

    fn quotes_served(&self, underlying: &str, batch_times: &[BatchTimes], _: DateTime<Utc>) {
        self.1
            .lock()
            .unwrap()
            .push((underlying.to_owned(), batch_times.to_vec()));
    }
}

#[test]
fn a_local_reader_gets_every_published_snapshot_with_its_version() {
    block_on(async {
        let (store, worker) = offline_worker();
        let recorder = Arc::new(Recorder::default());
        let mut worker = worker.with_local_reader(Arc::clone(&recorder) as _);
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        worker.apply(&data("QQQ", &quotes("QQQ", "QQQ"))).unwrap();
        let events = worker.publish_dirty(quoted_at()).await.unwrap();
        let mut handed = recorder.0.lock().unwrap().clone();
        handed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut announced: Vec<(SnapshotKey, u64, usize)> = events
            .iter()
            .map(|e| {
                let key = SnapshotKey::new(e.dataset.as_str(), e.trade_date, e.underlying.as_str());
                (key, e.version, e.row_count as usize)
            })
            .collect();
        announced.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(handed, announced);
        // Handed over before its file was written, at the version the file then got.
        for (key, version, _) in &handed {
            assert_eq!(store.latest(key).await.unwrap().unwrap().version, *version);
        }
        // Each underlying's one quote batch is served for the first time, once.
        let mut served = recorder.1.lock().unwrap().clone();
        served.sort();
        let batch = vec![BatchTimes {
            quoted_at: quoted_at(),
            entered_bus: None,
        }];
        assert_eq!(
            served,
            vec![("QQQ".to_owned(), batch.clone()), ("SPY".to_owned(), batch)]
        );
        // The next version of a key is handed over at the next version.
        recorder.0.lock().unwrap().clear();
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        let events = worker.publish_dirty(quoted_at()).await.unwrap();
        let handed = recorder.0.lock().unwrap().clone();
        assert_eq!(handed.len(), events.len());
        for ((_, version, _), event) in handed.iter().zip(&events) {
            assert_eq!((*version, event.version), (2, 2));
        }
    });
}

#[test]
fn with_a_reader_in_process_the_store_gets_an_underlying_every_store_every() {
    block_on(async {
        let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
        let clock = Arc::new(ManualClock::new(quoted_at()));
        let config = WorkerConfig {
            store_every: Duration::from_secs(60),
            ..WorkerConfig::default()
        };
        let recorder = Arc::new(Recorder::default());
        let mut worker = ComputeWorker::offline(store.clone(), clock, config)
            .with_local_reader(Arc::clone(&recorder) as _);
        let chain = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), "SPY");
        let handed = || recorder.0.lock().unwrap().len();

        // The first cycle writes (the store has nothing of SPY yet).
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        let first = worker.publish_dirty(quoted_at()).await.unwrap();
        assert_eq!(first.len(), 5);
        assert_eq!(
            (
                handed(),
                store.latest(&chain).await.unwrap().unwrap().version
            ),
            (5, 1)
        );

        // A change 10 s later: handed over, not written.
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        let later = quoted_at() + chrono::TimeDelta::seconds(10);
        assert!(worker.publish_dirty(later).await.unwrap().is_empty());
        assert_eq!(handed(), 10);
        assert_eq!(store.latest(&chain).await.unwrap().unwrap().version, 1);
        assert!(worker.book("SPY").unwrap().is_unstored());

        // Nothing new, but a minute since the last write (counted from SPY's phase, which
        // spreads the underlyings' writes): built again and written.
        let due = quoted_at() - store_phase("SPY", Duration::from_secs(60))
            + chrono::TimeDelta::seconds(60);
        assert!(due > later);
        let before = due - chrono::TimeDelta::milliseconds(1);
        assert!(worker.publish_dirty(before).await.unwrap().is_empty());
        let written = worker.publish_dirty(due).await.unwrap();
        assert_eq!(written.len(), 5);
        assert_eq!(store.latest(&chain).await.unwrap().unwrap().version, 2);
        assert!(!worker.book("SPY").unwrap().is_unstored());

        // A stopping worker writes what only the reader has.
        worker.apply(&data("SPY", &quotes("SPY", "SPY"))).unwrap();
        assert!(worker.publish_dirty(due).await.unwrap().is_empty());
        assert_eq!(worker.publish_all_unstored(due).await.unwrap().len(), 5);
        assert_eq!(store.latest(&chain).await.unwrap().unwrap().version, 3);
        assert!(worker.publish_all_unstored(due).await.unwrap().is_empty());

        // Every handover is newer than the one before, written or not (a reader keeps the
        // newest version it holds): five handovers, three files.
        let chain_versions: Vec<u64> = recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|(key, _, _)| *key == chain)
            .map(|(_, version, _)| *version)
            .collect();
        assert_eq!(chain_versions, [1, 2, 3, 4, 5]);
    });
}

fn spy_company() -> Company {
    Company {
        symbol: "SPY".into(),
        name: "SPDR S&P 500 ETF Trust".into(),
        asset_class: AssetClass::Etf,
        sector: None,
        sector_etf: None,
        market_cap: None,
        beta_spy: 1.0,
        corr_spy: 1.0,
        // Not so for SPY: a flag the books show only once the company map reached them.
        priced_on_forward: true,
        industry: None,
    }
}

fn data<R: Record>(key: &str, rows: &[R]) -> Message {
    Message::Data(DataBatch::from_rows(key, rows).unwrap())
}

/// One message of each reference dataset the worker uses, for SPY.
fn reference_messages() -> Vec<Message> {
    let date = trade_date();
    vec![
        data(MARKET_WIDE_KEY, &[spy_company()]),
        data(
            "SPY",
            &[Dividend {
                symbol: "SPY".into(),
                ex_date: date,
                pay_date: date + chrono::Days::new(14),
                amount: 1.5,
                frequency: DividendFrequency::Quarterly,
            }],
        ),
        data(
            "SPY",
            &[EarningsEvent {
                symbol: "SPY".into(),
                report_date: date,
                timing: EarningsTiming::AfterClose,
                fiscal_quarter: "Q3 2026".into(),
                eps_estimate: 1.0,
                eps_actual: None,
                revenue_estimate: None,
                revenue_actual: None,
            }],
        ),
        data(
            "SPY",
            &[BorrowRate {
                symbol: "SPY".into(),
                date,
                borrow_rate: 0.003,
                is_hard_to_borrow: false,
            }],
        ),
    ]
}

/// (SPY priced on the forward, SPY's dividend yield at 100, dividends / earnings / borrow rows
/// kept for the store, reference rows counted) after every reference message applied to `to`.
fn applied_to(to: ApplyTo) -> (bool, f64, [usize; 3], u64) {
    let (_, mut worker) = offline_worker();
    for message in reference_messages() {
        worker.apply_to(&message, None, to).unwrap();
    }
    let book = worker.book("SPY");
    let pending = &worker.pending_reference;
    (
        book.is_some_and(UnderlyingBook::priced_on_forward),
        book.map_or(0.0, |b| b.dividend_yield(100.0)),
        [
            pending.dividends.len(),
            pending.earnings.len(),
            pending.borrow.len(),
        ],
        worker.stats().reference_rows,
    )
}

#[test]
fn the_books_subscription_sets_metadata_and_the_store_subscription_keeps_the_rows() {
    // $1.50 a quarter on a $100 spot.
    let spy_yield = 0.06;
    assert_eq!(applied_to(ApplyTo::Books), (true, spy_yield, [0, 0, 0], 0));
    assert_eq!(applied_to(ApplyTo::Store), (false, 0.0, [1, 1, 1], 3));
    // An offline worker (`apply`): both.
    assert_eq!(
        applied_to(ApplyTo::Everything),
        (true, spy_yield, [1, 1, 1], 3)
    );
}

#[test]
fn no_worker_id_names_the_shared_reference_group() {
    for id in ["0", "store", "reference-store", "ence-store", ""] {
        let config = WorkerConfig {
            worker_id: id.into(),
            ..WorkerConfig::default()
        };
        assert_ne!(
            config.books_reference_group(),
            config.store_reference_group(),
            "{id:?}"
        );
    }
    assert_eq!(
        WorkerConfig::default().store_reference_group(),
        "optics-compute-reference-store"
    );
}

/// A subscription that only reports the revocations it is given.
#[derive(Debug, Default)]
struct Revocations(Vec<u32>);

impl Subscription for Revocations {
    fn next_batch(
        &mut self,
        _max_messages: usize,
    ) -> optics_schemas::BusFuture<'_, Result<Option<Vec<Delivery>>, BusError>> {
        Box::pin(std::future::pending())
    }

    fn commit(&mut self) -> optics_schemas::BusFuture<'_, Result<(), BusError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn take_revoked(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.0)
    }
}

fn delivery(partition: u32, offset: u64, message: Message) -> Delivery {
    Delivery {
        partition,
        offset,
        message,
        entered_bus: None,
    }
}

#[test]
fn a_quote_batch_is_served_with_the_moment_it_entered_the_bus() {
    block_on(async {
        let (_, worker) = offline_worker();
        let recorder = Arc::new(Recorder::default());
        let mut worker = worker.with_local_reader(Arc::clone(&recorder) as _);
        let entered = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        let read = vec![Delivery {
            entered_bus: Some(entered),
            ..delivery(3, 0, data("SPY", &quotes("SPY", "SPY")))
        }];
        assert!(
            worker
                .apply_deliveries(Some(read), ApplyTo::Everything)
                .unwrap()
        );
        worker.publish_dirty(quoted_at()).await.unwrap();
        let served = recorder.1.lock().unwrap().clone();
        assert_eq!(
            served,
            vec![(
                "SPY".to_owned(),
                vec![BatchTimes {
                    quoted_at: quoted_at(),
                    entered_bus: Some(entered),
                }]
            )]
        );
    });
}

#[test]
fn a_revoked_partitions_books_forget_their_quotes_and_are_not_published() {
    block_on(async {
        let (store, mut worker) = offline_worker();
        worker.book_mut("SPY").set_annual_dividend(2.0);
        let read = vec![
            delivery(3, 0, data("SPY", &quotes("SPY", "SPY"))),
            delivery(5, 0, data("QQQ", &quotes("QQQ", "QQQ"))),
        ];
        assert!(
            worker
                .apply_deliveries(Some(read), ApplyTo::Everything)
                .unwrap()
        );
        assert!(worker.book("SPY").unwrap().is_dirty());

        // Nothing revoked: nothing released.
        worker.release_revoked(&mut Revocations::default());
        assert_eq!(worker.book("SPY").unwrap().len(), 10);
        // Partition 3 moves to another worker before this one's cycle.
        worker.release_revoked(&mut Revocations(vec![3, 7]));
        let spy = worker.book("SPY").unwrap();
        assert!(spy.is_empty() && !spy.is_dirty());
        assert_eq!(spy.dividend_yield(100.0), 0.02, "reference data kept");
        assert_eq!(worker.book("QQQ").unwrap().len(), 10, "partition 5 kept");
        assert_eq!(worker.stats().books_released, 1);

        let events = worker.publish_dirty(quoted_at()).await.unwrap();
        assert!(events.iter().all(|e| e.underlying == "QQQ"), "{events:?}");
        assert_eq!(
            store
                .underlyings(snapshot_datasets::CHAIN, trade_date())
                .await
                .unwrap(),
            ["QQQ"]
        );

        // The partition comes back: the book starts again from the redelivered quotes.
        let again = vec![delivery(3, 0, data("SPY", &quotes("SPY", "SPY")))];
        worker
            .apply_deliveries(Some(again), ApplyTo::Everything)
            .unwrap();
        assert_eq!(worker.book("SPY").unwrap().len(), 10);
        let events = worker.publish_dirty(quoted_at()).await.unwrap();
        assert!(events.iter().all(|e| e.underlying == "SPY") && events.len() == 5);
    });
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_cycle_starts_once_the_burst_is_in_and_not_before_its_spacing() {
    let timing = CycleTiming::for_interval(Duration::from_secs(1));
    assert_eq!(
        timing,
        CycleTiming {
            settle: ARRIVAL_SETTLE,
            patience: ms(500),
            spacing: ms(950),
        }
    );
    // A burst after the spacing: as soon as it has been quiet for the settle.
    assert_eq!(cycle_start(ms(1_000), ms(1_040), ms(0), timing), ms(1_065));
    // A burst before it: when the spacing has passed, not at the next tick.
    assert_eq!(
        cycle_start(ms(1_000), ms(1_040), ms(600), timing),
        ms(1_550)
    );
    // A feed that never pauses: half an interval after the first quote.
    assert_eq!(cycle_start(ms(1_000), ms(1_700), ms(0), timing), ms(1_500));
}

#[test]
fn cycles_late_behind_the_feed_catch_up_with_it() {
    // Bursts of 40 ms every second; the last cycle ran 600 ms into the previous second, where
    // waiting for the tick would hold every burst 600 ms.
    let timing = CycleTiming::for_interval(Duration::from_secs(1));
    let mut last_cycle = ms(600);
    let mut lags = Vec::new();
    for second in 1..=20 {
        let burst = ms(1_000 * second);
        let start = cycle_start(burst, burst + ms(40), last_cycle, timing);
        lags.push((start - burst).as_millis());
        last_cycle = start;
    }
    assert_eq!(lags[0], 550);
    assert!(lags.windows(2).all(|w| w[1] <= w[0]), "{lags:?}");
    assert!(lags[11..].iter().all(|&lag| lag == 65), "{lags:?}");
}
