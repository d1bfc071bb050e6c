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
use crate::pricing::{OptionInputs, OptionType, PricingModel, price};
use crate::time::ManualClock;

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
    let years = crate::time::years_to_expiry(quoted_at(), expiration);
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
        worker.apply_to(&message, to).unwrap();
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
    }
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
