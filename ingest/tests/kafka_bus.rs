//! The Kafka bus against the `Bus` contract, on librdkafka's in-process mock cluster
//! (`rdkafka::mocking::MockCluster`, loopback only): configuration, byte-identical round trip,
//! per-key order and Java-compatible partitioning, a group of two splitting the partitions, a
//! leaver's partitions moving to the other member from its last commit, a restart resuming
//! from the committed offsets, followers that start at the end, poison records, back-pressure
//! and close.
//!
//! Bounded in time: every wait is inside `bounded` (a timeout that fails the test); consumers
//! are driven with short poll windows, never with sleeps standing in for assertions. Group
//! joins on the mock cluster take about 3 s (its initial rebalance delay) and each rebalance
//! about `session.timeout.ms − 1 s`, hence the short session timeout below.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use optics_ingest::bus::kafka::{
    BrokerAddress, DEFAULT_KAFKA_PORT, KafkaBus, KafkaBusConfig, KafkaBusError, KafkaSubscription,
};
use optics_schemas::{
    Bus, BusError, DataBatch, Delivery, Message, OptionQuote, Subscription, encode,
};
use optics_tests::fixtures::synthetic_chain;
use rdkafka::ClientConfig;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use support::key_seq;

const TOPIC: &str = "test.events";
const GROUP: &str = "compute";
/// Upper bound of any single step of a test.
const STEP: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// Helpers

async fn bounded<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(STEP, future).await {
        Ok(output) => output,
        Err(_) => panic!("{what} did not finish within {STEP:?}"),
    }
}

/// A mock cluster of one broker with `TOPIC` (behind `prefix`) in `partitions` partitions.
fn cluster(
    prefix: &str,
    partitions: i32,
) -> MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    let cluster = MockCluster::new(1).unwrap();
    cluster
        .create_topic(&format!("{prefix}{TOPIC}"), partitions, 1)
        .unwrap();
    cluster
}

/// A bus on `cluster` configured through the URL, with consumer timings short enough for
/// the mock cluster's rebalances.
fn bus_on(cluster: &MockCluster<'_, impl rdkafka::ClientContext>, query: &str) -> KafkaBus {
    let url = format!("kafka://{}{query}", cluster.bootstrap_servers());
    let mut config = KafkaBusConfig::from_url(&url).unwrap();
    config.consumer_properties = vec![
        ("session.timeout.ms".to_owned(), "3000".to_owned()),
        ("heartbeat.interval.ms".to_owned(), "100".to_owned()),
        ("fetch.wait.max.ms".to_owned(), "20".to_owned()),
    ];
    config.producer_properties = vec![("linger.ms".to_owned(), "1".to_owned())];
    config.group_join_timeout = STEP;
    KafkaBus::new(config).unwrap()
}

/// A small message whose `version` carries a per-key sequence number.
fn event(key: &str, seq: u64) -> Message {
    support::snapshot(key, seq, 1_795_188_600_000_000)
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("U{i:02}")).collect()
}

/// Publishes `seqs` of every key, interleaved, awaiting each publish; then flushes.
async fn publish_all(bus: &KafkaBus, keys: &[String], seqs: std::ops::Range<u64>) {
    for seq in seqs {
        for key in keys {
            bus.publish(TOPIC, event(key, seq)).await.unwrap();
        }
    }
    bounded("flush", bus.flush()).await.unwrap();
}

/// Receives (10 at most per read, without committing) until `got` holds at least `n`.
async fn receive_at_least(sub: &mut KafkaSubscription, n: usize, got: &mut Vec<Delivery>) {
    while got.len() < n {
        got.extend(
            bounded("next_batch", sub.next_batch(10))
                .await
                .unwrap()
                .unwrap(),
        );
    }
}

/// Receives until the bus is closed and the group drained, committing after each batch.
async fn drain(sub: &mut KafkaSubscription, max: usize) -> Vec<Delivery> {
    let mut got = Vec::new();
    while let Some(batch) = bounded("next_batch", sub.next_batch(max)).await.unwrap() {
        assert!(!batch.is_empty() && batch.len() <= max);
        got.extend(batch);
        bounded("commit", sub.commit()).await.unwrap();
    }
    got
}

/// Per key, the sequence numbers in arrival order.
fn by_key(got: &[Delivery]) -> BTreeMap<String, Vec<u64>> {
    let mut map: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for d in got {
        let (k, s) = key_seq(d);
        map.entry(k).or_default().push(s);
    }
    map
}

/// Polls a future once: `Pending` means it is waiting.
fn poll_once<F: Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Polls both members (nothing is published meanwhile, so they receive nothing) until they
/// own disjoint, non-empty sets of partitions that cover all `partitions`.
async fn settle(a: &mut KafkaSubscription, b: &mut KafkaSubscription, partitions: u32) {
    bounded("the group settling", async {
        loop {
            let (pa, pb) = (a.assigned_partitions(), b.assigned_partitions());
            let union: BTreeSet<u32> = pa.iter().chain(&pb).copied().collect();
            if !pa.is_empty()
                && !pb.is_empty()
                && pa.len() + pb.len() == partitions as usize
                && union.len() == partitions as usize
            {
                return;
            }
            tokio::select! {
                got = a.next_batch(1) => panic!("nothing was published, got {got:?}"),
                got = b.next_batch(1) => panic!("nothing was published, got {got:?}"),
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    })
    .await;
}

/// Joins `group` as a second member while polling `first`, whose rebalance callbacks the
/// join needs.
async fn join_beside(
    bus: &KafkaBus,
    group: &str,
    first: &mut KafkaSubscription,
) -> KafkaSubscription {
    bounded("the second member joining", async {
        let joining = bus.join(TOPIC, group);
        tokio::select! {
            joined = joining => joined.unwrap(),
            got = first.next_batch(1) => panic!("nothing was published, got {got:?}"),
        }
    })
    .await
}

/// Kafka's murmur2 (the Java client's `Utils.murmur2`), written from the algorithm to check
/// the producer's partitioner independently.
fn java_murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    let mut h = SEED ^ data.len() as u32;
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for chunk in chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition the Java client's default partitioner picks for a keyed record.
fn java_partition(key: &str, partitions: u32) -> u32 {
    ((java_murmur2(key.as_bytes()) & 0x7fff_ffff) as u32) % partitions
}

// ---------------------------------------------------------------------------------------------
// Configuration

#[test]
fn the_url_names_brokers_and_options_and_bad_ones_are_refused_with_a_reason() {
    let config = KafkaBusConfig::from_url(
        "kafka://kafka-1:19092,kafka-2,[::1]:9094/?topic_prefix=prod.&group_prefix=blue-&client_id=optics-ingest",
    )
    .unwrap();
    assert_eq!(
        config.brokers,
        [
            BrokerAddress {
                host: "kafka-1".to_owned(),
                port: 19092
            },
            BrokerAddress {
                host: "kafka-2".to_owned(),
                port: DEFAULT_KAFKA_PORT
            },
            BrokerAddress {
                host: "::1".to_owned(),
                port: 9094
            },
        ]
    );
    assert_eq!(
        config.bootstrap_servers(),
        "kafka-1:19092,kafka-2:9092,[::1]:9094"
    );
    assert_eq!(
        config.kafka_topic("optics.option_quotes").unwrap(),
        "prod.optics.option_quotes"
    );
    assert_eq!(config.kafka_group("compute").unwrap(), "blue-compute");
    assert_eq!(config.client_id, "optics-ingest");
    let tuned =
        KafkaBusConfig::from_url("kafka://h?max_message_bytes=2000000&session_timeout_ms=10000")
            .unwrap();
    assert_eq!(tuned.max_message_bytes, 2_000_000);
    assert_eq!(
        tuned.consumer_properties,
        [
            ("session.timeout.ms".to_owned(), "10000".to_owned()),
            ("heartbeat.interval.ms".to_owned(), "1000".to_owned())
        ]
    );
    assert_eq!(
        "KAFKA://h".parse::<KafkaBusConfig>().unwrap().brokers[0].port,
        9092
    );

    for (url, needle) in [
        ("localhost:9092", "kafka://"),
        ("http://h:9092", "unsupported scheme"),
        ("kafkas://h:9092", "unsupported scheme"),
        ("kafka://", "no broker"),
        ("kafka://h:9092,,h2", "empty broker"),
        ("kafka://h:0", "port"),
        ("kafka://h:99999", "port"),
        ("kafka://user:pw@h:9092", "credentials"),
        ("kafka://h:9092/topics", "no path"),
        ("kafka://bad host", "host name"),
    ] {
        match KafkaBusConfig::from_url(url) {
            Err(KafkaBusError::InvalidUrl { reason, .. }) => {
                assert!(reason.contains(needle), "{url}: {reason}")
            }
            other => panic!("{url}: expected InvalidUrl, got {other:?}"),
        }
    }
    for (url, name) in [
        ("kafka://h?colour=red", "colour"),
        ("kafka://h?topic_prefix=a/b", "topic_prefix"),
        ("kafka://h?client_id=", "client_id"),
        ("kafka://h?max_message_bytes=10", "max_message_bytes"),
        ("kafka://h?session_timeout_ms=100", "session_timeout_ms"),
    ] {
        match KafkaBusConfig::from_url(url) {
            Err(KafkaBusError::InvalidOption { name: got, .. }) => assert_eq!(got, name, "{url}"),
            other => panic!("{url}: expected InvalidOption, got {other:?}"),
        }
    }
    assert!(matches!(
        config.kafka_topic("bad topic"),
        Err(KafkaBusError::InvalidOption { .. })
    ));

    // The guarantees cannot be configured away, and librdkafka's own refusals are reported.
    let mut unsafe_config = config.clone();
    unsafe_config.consumer_properties = vec![("enable.auto.commit".to_owned(), "true".to_owned())];
    assert_eq!(
        KafkaBus::new(unsafe_config).err(),
        Some(KafkaBusError::ProtectedProperty {
            name: "enable.auto.commit".to_owned()
        })
    );
    let mut refused = config;
    refused.producer_properties = vec![("linger.ms".to_owned(), "soon".to_owned())];
    assert!(matches!(
        KafkaBus::new(refused),
        Err(KafkaBusError::Client(_))
    ));
}

#[test]
fn the_test_murmur2_matches_kafkas_published_vectors() {
    // The Java client's UtilsTest.testMurmur2 cases.
    for (input, expected) in [
        (&b"21"[..], -973_932_308),
        (b"foobar", -790_332_482),
        (b"a-little-bit-long-string", -985_981_536),
        (b"a-little-bit-longer-string", -1_486_304_829),
        (
            b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
            -58_897_971,
        ),
        (b"abc", 479_470_107),
    ] {
        assert_eq!(
            java_murmur2(input),
            expected,
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Produce and consume

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quote_batch_and_an_event_round_trip_byte_identical_under_the_topic_prefix() {
    let cluster = cluster("blue.", 2);
    let bus = bus_on(&cluster, "?topic_prefix=blue.&group_prefix=t-");
    let rows: Vec<OptionQuote> = synthetic_chain("SPY", 590.0, 5, 100, 540.0, 7, 1_000);
    let quotes = Message::Data(DataBatch::from_rows("SPY", &rows).unwrap());
    let snapshot = event("QQQ", 3);
    bus.publish(TOPIC, quotes.clone()).await.unwrap();
    bus.publish(TOPIC, snapshot.clone()).await.unwrap();
    bounded("flush", bus.flush()).await.unwrap();

    let mut sub = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    assert_eq!(sub.topic_and_group(), ("blue.test.events", "t-compute"));
    let mut got = Vec::new();
    receive_at_least(&mut sub, 2, &mut got).await;
    bounded("commit", sub.commit()).await.unwrap();
    let find = |key: &str| got.iter().find(|d| d.message.key() == key).unwrap();
    for original in [&quotes, &snapshot] {
        let delivered = &find(original.key()).message;
        assert_eq!(delivered, original);
        assert_eq!(
            encode(delivered).unwrap(),
            encode(original).unwrap(),
            "byte-identical"
        );
    }
    let Message::Data(data) = &find("SPY").message else {
        panic!("quotes expected")
    };
    assert_eq!(data.rows::<OptionQuote>().unwrap(), rows);
    bus.close();
    assert_eq!(
        bounded("next_batch after close", sub.next_batch(10)).await,
        Ok(None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_follower_receives_every_message_published_after_it_joined_and_none_before() {
    let cluster = cluster("", 3);
    let bus = bus_on(&cluster, "?group_prefix=t-");
    let keys = keys(6);
    publish_all(&bus, &keys, 0..3).await;
    let (a, b) = bounded("two followers joining", async {
        tokio::join!(bus.follow(TOPIC, "api"), bus.follow(TOPIC, "api"))
    })
    .await;
    let (mut a, mut b) = (a.unwrap(), b.unwrap());
    let (group_a, group_b) = (a.topic_and_group().1, b.topic_and_group().1);
    assert!(group_a.starts_with("t-api-"), "{group_a}");
    assert_ne!(group_a, group_b, "a group of one each");
    assert_eq!(a.assigned_partitions(), vec![0, 1, 2]);
    assert_eq!(b.assigned_partitions(), vec![0, 1, 2]);

    publish_all(&bus, &keys, 3..5).await;
    let expected: BTreeMap<String, Vec<u64>> =
        keys.iter().map(|k| (k.clone(), vec![3, 4])).collect();
    for follower in [&mut a, &mut b] {
        let mut got = Vec::new();
        receive_at_least(follower, 12, &mut got).await;
        assert_eq!(
            by_key(&got),
            expected,
            "the later messages, once each, in order"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_above_the_message_size_arrives_whole_as_consecutive_parts() {
    let cluster = cluster("", 2);
    let bus = bus_on(&cluster, "?max_message_bytes=65536");
    // About 130 bytes a quote: 4,000 quotes encode to about 500 KB, eight or more parts.
    let rows: Vec<OptionQuote> = synthetic_chain("SPX", 5900.0, 8, 250, 5400.0, 5, 4_000);
    let whole = Message::Data(DataBatch::from_rows("SPX", &rows).unwrap());
    assert!(encode(&whole).unwrap().len() > 7 * 65_536);
    bus.publish(TOPIC, whole).await.unwrap();
    bounded("flush", bus.flush()).await.unwrap();

    let mut sub = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    let mut received: Vec<OptionQuote> = Vec::new();
    let mut parts = 0;
    while received.len() < rows.len() {
        for delivery in bounded("next_batch", sub.next_batch(100))
            .await
            .unwrap()
            .unwrap()
        {
            assert!(encode(&delivery.message).unwrap().len() <= 65_536);
            let Message::Data(data) = delivery.message else {
                panic!("quotes expected")
            };
            assert_eq!(data.key(), "SPX");
            received.extend(data.rows::<OptionQuote>().unwrap());
            parts += 1;
        }
    }
    assert!(parts >= 8, "{parts} parts");
    assert_eq!(received, rows, "every row once, in order");
    bounded("commit", sub.commit()).await.unwrap();
    bus.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_down_for_a_while_is_waited_out_not_reported_as_an_end() {
    let cluster = cluster("", 1);
    let bus = bus_on(&cluster, "");
    let keys = keys(1);
    let mut sub = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    publish_all(&bus, &keys, 0..5).await;
    let mut got = Vec::new();
    receive_at_least(&mut sub, 5, &mut got).await;
    bounded("commit", sub.commit()).await.unwrap();
    // The only broker goes away long enough for librdkafka to report every broker down,
    // then comes back: the subscription keeps going and receives what follows.
    cluster.broker_down(1).unwrap();
    let waited = tokio::time::timeout(Duration::from_secs(3), sub.next_batch(10)).await;
    assert!(
        waited.as_ref().map_or(true, |r| r.is_ok()),
        "a transient broker failure ended the subscription: {waited:?}"
    );
    cluster.broker_up(1).unwrap();
    for seq in 5..8 {
        bus.publish(TOPIC, event(&keys[0], seq)).await.unwrap();
    }
    bounded("flush", bus.flush()).await.unwrap();
    if let Ok(Ok(Some(batch))) = waited {
        got.extend(batch);
    }
    receive_at_least(&mut sub, 8, &mut got).await;
    assert_eq!(by_key(&got)[&keys[0]], (0..8).collect::<Vec<u64>>());
    bus.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_key_stays_in_its_java_partition_in_publish_order() {
    const PARTITIONS: u32 = 4;
    const PER_KEY: u64 = 60;
    let cluster = cluster("", PARTITIONS as i32);
    let bus = bus_on(&cluster, "");
    let keys = keys(12);
    publish_all(&bus, &keys, 0..PER_KEY).await;
    bus.close();
    // A closed bus takes no new members; another process's bus reads what this one wrote.
    assert_eq!(bus.join(TOPIC, GROUP).await.err(), Some(BusError::Closed));
    let bus = bus_on(&cluster, "");
    let mut sub = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    assert_eq!(
        sub.assigned_partitions(),
        (0..PARTITIONS).collect::<Vec<_>>()
    );
    bus.close();
    let got = drain(&mut sub, 7).await;
    assert_eq!(
        got.len(),
        keys.len() * PER_KEY as usize,
        "nothing lost, nothing duplicated"
    );
    let expected: Vec<u64> = (0..PER_KEY).collect();
    for (key, seqs) in by_key(&got) {
        assert_eq!(seqs, expected, "order or completeness of {key}");
    }
    let mut partitions_used = BTreeSet::new();
    for d in &got {
        let key = d.message.key();
        assert_eq!(
            d.partition,
            java_partition(key, PARTITIONS),
            "partition of {key}"
        );
        partitions_used.insert(d.partition);
    }
    assert!(
        partitions_used.len() > 1,
        "12 keys spread over the partitions"
    );
    // Offsets increase within each partition.
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    for d in &got {
        if let Some(&previous) = last.get(&d.partition) {
            assert!(d.offset > previous);
        }
        last.insert(d.partition, d.offset);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_of_two_splits_the_partitions_and_a_leavers_share_moves_from_its_commit() {
    const PARTITIONS: u32 = 4;
    const PER_KEY: u64 = 10;
    let cluster = cluster("", PARTITIONS as i32);
    let bus = bus_on(&cluster, "");
    let keys = keys(16);
    let mut a = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    let mut b = join_beside(&bus, GROUP, &mut a).await;
    settle(&mut a, &mut b, PARTITIONS).await;
    let (owned_a, owned_b) = (a.assigned_partitions(), b.assigned_partitions());
    // `a` held every partition before `b` joined: it is told of each one it gave up, once.
    assert_eq!(a.take_revoked(), owned_b, "a gave b's share up");
    assert!(a.take_revoked().is_empty(), "reported once");
    assert!(b.take_revoked().is_empty(), "b lost nothing");

    publish_all(&bus, &keys, 0..PER_KEY).await;
    let total = keys.len() * PER_KEY as usize;
    // Both members receive concurrently; `b` acknowledges only its first batch, then
    // receives the rest of its share without acknowledging it.
    let (mut got_a, mut got_b, mut acked_b) = (Vec::new(), Vec::new(), 0);
    bounded("both members receiving", async {
        while got_a.len() + got_b.len() < total {
            tokio::select! {
                batch = a.next_batch(8) => {
                    got_a.extend(batch.unwrap().unwrap());
                    a.commit().await.unwrap();
                }
                batch = b.next_batch(8) => {
                    got_b.extend(batch.unwrap().unwrap());
                    if acked_b == 0 {
                        b.commit().await.unwrap();
                        acked_b = got_b.len();
                    }
                }
            }
        }
    })
    .await;
    assert_eq!(got_a.len() + got_b.len(), total);
    assert!(
        !got_a.is_empty() && !got_b.is_empty(),
        "both members get a share"
    );
    for d in &got_a {
        assert!(owned_a.contains(&d.partition));
    }
    for d in &got_b {
        assert!(owned_b.contains(&d.partition));
    }
    let (keys_a, keys_b) = (by_key(&got_a), by_key(&got_b));
    let set_a: BTreeSet<_> = keys_a.keys().collect();
    assert!(
        set_a.is_disjoint(&keys_b.keys().collect()),
        "one member sees all of a key"
    );
    let expected: Vec<u64> = (0..PER_KEY).collect();
    for seqs in keys_a.values().chain(keys_b.values()) {
        assert_eq!(seqs, &expected);
    }

    // `b` leaves; `a` takes over its partitions from `b`'s last commit: exactly the records
    // `b` received but did not acknowledge, in order.
    drop(b);
    bus.close();
    let moved = drain(&mut a, 8).await;
    assert_eq!(a.assigned_partitions(), (0..PARTITIONS).collect::<Vec<_>>());
    assert!(
        a.take_revoked().is_empty(),
        "taking partitions over revokes none"
    );
    let unacked_b: Vec<(u32, u64)> = got_b[acked_b..]
        .iter()
        .map(|d| (d.partition, d.offset))
        .collect();
    let mut moved_positions: Vec<(u32, u64)> =
        moved.iter().map(|d| (d.partition, d.offset)).collect();
    let mut expected_positions = unacked_b.clone();
    moved_positions.sort_unstable();
    expected_positions.sort_unstable();
    assert_eq!(moved_positions, expected_positions);
    for (key, seqs) in by_key(&moved) {
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "order of {key}");
    }
    // Acknowledged output: every record exactly once.
    let acknowledged: Vec<(String, u64)> = got_a
        .iter()
        .chain(&got_b[..acked_b])
        .chain(&moved)
        .map(key_seq)
        .collect();
    let unique: BTreeSet<_> = acknowledged.iter().cloned().collect();
    assert_eq!(acknowledged.len(), total);
    assert_eq!(unique.len(), total);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_member_resumes_after_the_commit_nothing_acknowledged_comes_twice() {
    let cluster = cluster("", 3);
    let bus = bus_on(&cluster, "");
    let keys = keys(6);
    publish_all(&bus, &keys, 0..5).await;
    let total = keys.len() * 5;

    let mut first = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    let mut acknowledged = Vec::new();
    for _ in 0..2 {
        let batch = bounded("next_batch", first.next_batch(4))
            .await
            .unwrap()
            .unwrap();
        acknowledged.extend(batch);
        bounded("commit", first.commit()).await.unwrap();
    }
    let unacknowledged = bounded("next_batch", first.next_batch(5))
        .await
        .unwrap()
        .unwrap();
    assert!(!unacknowledged.is_empty());
    drop(first); // gone before acknowledging

    let mut restarted = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    bus.close();
    let rest = drain(&mut restarted, 4).await;
    let position = |d: &Delivery| (d.partition, d.offset);
    let acked_positions: BTreeSet<_> = acknowledged.iter().map(position).collect();
    let rest_positions: BTreeSet<_> = rest.iter().map(position).collect();
    assert!(
        acked_positions.is_disjoint(&rest_positions),
        "acknowledged records are not redelivered"
    );
    for d in &unacknowledged {
        assert!(
            rest_positions.contains(&position(d)),
            "unacknowledged {:?} is redelivered",
            position(d)
        );
    }
    assert_eq!(acknowledged.len() + rest.len(), total, "nothing lost");
    let all: BTreeSet<(String, u64)> = acknowledged.iter().chain(&rest).map(key_seq).collect();
    assert_eq!(all.len(), total);
    // Each partition resumes exactly at the committed offset: the first redelivered offset of a
    // partition follows the last acknowledged one.
    for (partition, first_offset) in rest.iter().fold(BTreeMap::new(), |mut m, d| {
        m.entry(d.partition).or_insert(d.offset);
        m
    }) {
        if let Some(last_acked) = acknowledged
            .iter()
            .filter(|d| d.partition == partition)
            .map(|d| d.offset)
            .max()
        {
            assert_eq!(first_offset, last_acked + 1, "partition {partition}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_record_is_reported_with_its_position_and_skipped_by_the_commit() {
    let cluster = cluster("", 1);
    let bus = bus_on(&cluster, "");
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    bounded("flush", bus.flush()).await.unwrap();
    let raw: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap_servers())
        .create()
        .unwrap();
    raw.send(
        BaseRecord::to(TOPIC)
            .key("SPY")
            .payload(&b"not an optics message"[..]),
    )
    .map_err(|(e, _)| e)
    .unwrap();
    raw.flush(STEP).unwrap();
    bus.publish(TOPIC, event("SPY", 1)).await.unwrap();
    bounded("flush", bus.flush()).await.unwrap();

    let mut sub = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    let mut first = Vec::new();
    let error = loop {
        match bounded("next_batch", sub.next_batch(10)).await {
            Ok(Some(batch)) => first.extend(batch),
            Ok(None) => panic!("the bus is open"),
            Err(error) => break error,
        }
    };
    assert_eq!(
        first.iter().map(key_seq).collect::<Vec<_>>(),
        [("SPY".to_owned(), 0)]
    );
    let BusError::Backend(reason) = error else {
        panic!("expected a backend error, got {error:?}")
    };
    assert!(
        reason.contains("undecodable") && reason.contains("test.events[0]@1"),
        "{reason}"
    );
    let after = bounded("next_batch", sub.next_batch(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.iter().map(|d| d.offset).collect::<Vec<_>>(), [2]);
    bounded("commit", sub.commit()).await.unwrap();
    drop(sub);
    // The next member starts after the commit, past the bad record.
    let mut next = bounded("join", bus.join(TOPIC, GROUP)).await.unwrap();
    bus.close();
    assert_eq!(bounded("next_batch", next.next_batch(10)).await, Ok(None));
}

// ---------------------------------------------------------------------------------------------
// Back-pressure, flush and close (no broker needed: an unreachable loopback port)

/// A bus whose brokers refuse connections, with room for one queued message.
fn unreachable_bus(delivery_timeout: Duration) -> KafkaBus {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = KafkaBusConfig::from_url(&format!("kafka://127.0.0.1:{port}")).unwrap();
    config.producer_queue_messages = 1;
    config.delivery_timeout = delivery_timeout;
    KafkaBus::new(config).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_producer_queue_holds_the_publisher_until_close_fails_it() {
    let bus = unreachable_bus(STEP);
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    let pressure = bus.pressure(TOPIC);
    assert_eq!((pressure.pending, pressure.capacity), (1, 1));
    assert!(pressure.is_full());
    let mut waiting = pin!(bus.publish(TOPIC, event("SPY", 1)));
    assert!(
        poll_once(waiting.as_mut()).is_pending(),
        "a full queue must hold the publisher"
    );
    bus.close();
    assert_eq!(
        bounded("the waiting publish", waiting).await,
        Err(BusError::Closed)
    );
    assert_eq!(
        bus.publish(TOPIC, event("SPY", 2)).await,
        Err(BusError::Closed)
    );
    assert_eq!(
        bus.subscribe(TOPIC, GROUP).await.err(),
        Some(BusError::Closed)
    );
    bus.close(); // idempotent
}

#[tokio::test(flavor = "current_thread")]
async fn flush_reports_messages_the_brokers_never_acknowledged() {
    let bus = unreachable_bus(Duration::from_millis(300));
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    match bounded("flush", bus.flush()).await {
        Err(BusError::Backend(reason)) => {
            assert!(
                reason.starts_with("1 message(s) could not be delivered"),
                "{reason}"
            )
        }
        other => panic!("expected a delivery failure, got {other:?}"),
    }
    // Reported once: the next flush has nothing outstanding.
    assert_eq!(bounded("flush", bus.flush()).await, Ok(()));
    assert_eq!(bus.pressure(TOPIC).pending, 0);
}
