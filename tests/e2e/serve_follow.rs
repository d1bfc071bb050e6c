//! `optics serve --bus kafka://…` as an API replica of the distributed deployment: it follows
//! the workers' snapshot events on a Kafka broker (librdkafka's mock cluster, on loopback) and
//! serves a newly published chain as soon as its event arrives. The store poll is set to an
//! hour, so only the event can bring the new chain within the test's bound.

use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::chain::{ChainMarket, build_chain};
use optics_compute::pricing::PricingModel;
use optics_ingest::bus::kafka::KafkaBus;
use optics_pipeline::store::{SnapshotKey, SnapshotStore};
use optics_schemas::bus::topics;
use optics_schemas::{Bus, ChainRow, Message};
use rdkafka::mocking::MockCluster;

use crate::support::{OPTICS, TempDir, get, start_listening};

/// Longest wait for the replica to serve what an event announced; the event path takes well
/// under a second, a poll would take an hour.
const BOUND: Duration = Duration::from_secs(60);

fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

/// A SPY chain priced at `spot`, as of `minute` past 15:00 UTC on the trade date.
fn chain(spot: f64, minute: u32) -> Vec<ChainRow> {
    let quotes = optics_tests::fixtures::synthetic_chain("SPY", spot, 2, 21, spot - 10.0, 5, 80);
    let as_of: DateTime<Utc> = trade_date().and_hms_opt(15, minute, 0).unwrap().and_utc();
    build_chain(
        &quotes,
        &ChainMarket {
            underlying: "SPY".to_owned(),
            trade_date: trade_date(),
            as_of,
            spot: Some(spot),
            rate: 0.04,
            dividend_yield: 0.01,
            model: PricingModel::BlackScholesMerton,
        },
    )
    .unwrap()
    .rows
}

fn served_spot(address: &str, token: &str) -> f64 {
    let (status, body) = get(address, "/api/mcp/data/chain/SPY", Some(token));
    assert_eq!(status, 200, "{body}");
    body["data"]["stock_price"].as_f64().expect("stock_price")
}

#[test]
fn a_replica_on_the_bus_serves_a_new_snapshot_when_its_event_arrives() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cluster = MockCluster::new(1).unwrap();
    cluster.create_topic(topics::SNAPSHOTS, 3, 1).unwrap();
    let bus_url = format!("kafka://{}", cluster.bootstrap_servers());

    let dir = TempDir::new("serve-follow");
    let store = SnapshotStore::local(&dir.path().join("snapshots")).unwrap();
    let key = SnapshotKey::new("chain", trade_date(), "SPY");
    let publish = |rows: Vec<ChainRow>| {
        runtime.block_on(store.publish(
            &key,
            &ChainRow::to_batch(&rows).unwrap(),
            &[],
            rows[0].as_of,
        ))
    };
    publish(chain(100.0, 0)).unwrap();

    let mut command = Command::new(OPTICS);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--bus", &bus_url])
        .args([
            "--poll-ms",
            "3600000",
            "--bootstrap-local-account",
            "--data-dir",
        ])
        .arg(dir.path())
        .env_remove("RUST_LOG");
    let (_server, address, printed) = start_listening(command);
    assert!(
        printed.contains("following snapshot events; polling the store every 3600000 ms"),
        "{printed}"
    );
    let token = std::fs::read_to_string(dir.path().join("api-token")).expect("token file");
    let token = token.trim();
    assert_eq!(served_spot(&address, token), 100.0);

    // A worker publishes a newer chain and announces it.
    let event = publish(chain(104.5, 1)).unwrap();
    let announcer = KafkaBus::from_url(&bus_url).unwrap();
    runtime.block_on(async {
        announcer
            .publish(topics::SNAPSHOTS, Message::Snapshot(event))
            .await
            .unwrap();
        announcer.flush().await.unwrap();
    });
    let deadline = Instant::now() + BOUND;
    loop {
        let spot = served_spot(&address, token);
        if spot == 104.5 {
            break;
        }
        assert_eq!(spot, 100.0, "the held chain until the new one");
        assert!(
            Instant::now() < deadline,
            "the announced chain was not served within {BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
