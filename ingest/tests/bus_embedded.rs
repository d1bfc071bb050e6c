//! The embedded bus against the `Bus` contract: per-key order under concurrent publishers,
//! back-pressure, consumer groups, commit and restart, close. Deterministic: no sleeps; a
//! future that must be waiting is polled once by hand and checked to be pending.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use chrono::{DateTime, NaiveDate};
use optics_ingest::bus::{EmbeddedBus, EmbeddedBusConfig};
use optics_schemas::{
    Bus, BusError, DataBatch, ExerciseStyle, Message, OptionQuote, OptionType, SettlementStyle,
    Subscription, occ_symbol,
};
use support::key_seq;

const TOPIC: &str = "test.events";

/// A small message whose `version` carries a per-key sequence number.
fn event(key: &str, seq: u64) -> Message {
    support::snapshot(key, seq, 0)
}

fn bus(partitions: u32, capacity_per_topic: usize) -> EmbeddedBus {
    EmbeddedBus::new(EmbeddedBusConfig {
        partitions,
        capacity_per_topic,
    })
}

/// A key that `bus` maps to `partition`.
fn key_in(bus: &EmbeddedBus, partition: u32) -> String {
    (0..)
        .map(|i| format!("S{i}"))
        .find(|k| bus.partition_of(k) == partition)
        .unwrap()
}

/// Polls a future once without a runtime waker: `Pending` means it is waiting.
fn poll_once<F: Future + ?Sized>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Receives until the bus is closed and drained, committing after each batch.
async fn drain(mut sub: Box<dyn Subscription>, max: usize) -> Vec<(String, u64)> {
    let mut got = Vec::new();
    while let Some(batch) = sub.next_batch(max).await.unwrap() {
        assert!(!batch.is_empty() && batch.len() <= max);
        got.extend(batch.iter().map(key_seq));
        sub.commit().await.unwrap();
    }
    got
}

/// Per key, the sequence numbers in arrival order.
fn by_key(got: &[(String, u64)]) -> BTreeMap<String, Vec<u64>> {
    let mut map: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (k, s) in got {
        map.entry(k.clone()).or_default().push(*s);
    }
    map
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn per_key_order_is_kept_under_concurrent_publishers() {
    // A small buffer so publishers contend and wait on one another and on the consumers.
    let bus: Arc<dyn Bus> = Arc::new(bus(4, 8));
    let a = bus.subscribe(TOPIC, "compute").await.unwrap();
    let b = bus.subscribe(TOPIC, "compute").await.unwrap();
    let consumers = [tokio::spawn(drain(a, 5)), tokio::spawn(drain(b, 3))];
    const PER_KEY: u64 = 300;
    let publishers: Vec<_> = (0..4)
        .map(|p| {
            let bus = Arc::clone(&bus);
            tokio::spawn(async move {
                let keys: Vec<String> = (0..3).map(|k| format!("K{p}{k}")).collect();
                for seq in 0..PER_KEY {
                    for key in &keys {
                        bus.publish(TOPIC, event(key, seq)).await.unwrap();
                    }
                }
            })
        })
        .collect();
    for p in publishers {
        p.await.unwrap();
    }
    bus.close();
    let mut owners: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = BTreeMap::new();
    for (i, c) in consumers.into_iter().enumerate() {
        for (key, seqs) in by_key(&c.await.unwrap()) {
            assert!(
                owners.insert(key.clone(), i).is_none(),
                "{key} seen by both members"
            );
            all.insert(key, seqs);
        }
    }
    assert_eq!(all.len(), 12);
    let expected: Vec<u64> = (0..PER_KEY).collect();
    for (key, seqs) in &all {
        assert_eq!(seqs, &expected, "order or completeness of {key}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_topic_holds_the_publisher_until_a_consumer_commits() {
    let bus = bus(2, 2);
    let mut sub = bus.subscribe(TOPIC, "compute").await.unwrap();
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    assert!(!bus.pressure(TOPIC).is_full());
    bus.publish(TOPIC, event("SPY", 1)).await.unwrap();
    let pressure = bus.pressure(TOPIC);
    assert_eq!((pressure.pending, pressure.capacity), (2, 2));
    assert!(pressure.is_full());

    let mut third = pin!(bus.publish(TOPIC, event("SPY", 2)));
    assert!(
        poll_once(third.as_mut()).is_pending(),
        "a full buffer must block"
    );
    // Received but not committed: still held (it may have to be delivered again).
    let batch = sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(batch.len(), 2);
    assert!(poll_once(third.as_mut()).is_pending());
    sub.commit().await.unwrap();
    third.await.unwrap();
    assert_eq!(bus.pressure(TOPIC).pending, 1);
    let batch = sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(
        batch.iter().map(key_seq).collect::<Vec<_>>(),
        [("SPY".to_owned(), 2)]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_topic_without_consumers_fills_then_holds_publishers_nothing_is_dropped() {
    let bus = bus(1, 3);
    for seq in 0..3 {
        bus.publish(TOPIC, event("QQQ", seq)).await.unwrap();
    }
    let mut fourth = pin!(bus.publish(TOPIC, event("QQQ", 3)));
    assert!(poll_once(fourth.as_mut()).is_pending());
    // A group that joins late starts at the oldest message held.
    let mut sub = bus.subscribe(TOPIC, "late").await.unwrap();
    let batch = sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(
        batch.iter().map(|d| d.offset).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    sub.commit().await.unwrap();
    fourth.await.unwrap();
    let batch = sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(batch.iter().map(|d| d.offset).collect::<Vec<_>>(), [3]);
}

#[tokio::test(flavor = "current_thread")]
async fn closing_releases_a_waiting_publisher_with_an_error() {
    let bus = bus(1, 1);
    let _sub = bus.subscribe(TOPIC, "compute").await.unwrap();
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    let mut waiting = pin!(bus.publish(TOPIC, event("SPY", 1)));
    assert!(poll_once(waiting.as_mut()).is_pending());
    bus.close();
    assert_eq!(waiting.await, Err(BusError::Closed));
}

#[tokio::test(flavor = "current_thread")]
async fn two_members_of_a_group_split_the_keys_without_duplicates_or_losses() {
    let bus = bus(8, 1_000);
    let a = bus.subscribe(TOPIC, "compute").await.unwrap();
    let b = bus.subscribe(TOPIC, "compute").await.unwrap();
    let keys: Vec<String> = (0..20).map(|i| format!("U{i:02}")).collect();
    for seq in 0..10 {
        for key in &keys {
            bus.publish(TOPIC, event(key, seq)).await.unwrap();
        }
    }
    bus.close();
    let got_a = drain(a, 7).await;
    let got_b = drain(b, 7).await;
    let (keys_a, keys_b) = (by_key(&got_a), by_key(&got_b));
    assert!(
        !keys_a.is_empty() && !keys_b.is_empty(),
        "both members get a share"
    );
    let set_a: BTreeSet<_> = keys_a.keys().collect();
    let set_b: BTreeSet<_> = keys_b.keys().collect();
    assert!(
        set_a.is_disjoint(&set_b),
        "one member sees all of an underlying"
    );
    assert_eq!(got_a.len() + got_b.len(), 200);
    for seqs in keys_a.values().chain(keys_b.values()) {
        assert_eq!(seqs, &(0..10).collect::<Vec<u64>>());
    }
    // Who gets what is the key's partition.
    for key in set_a {
        assert_eq!(bus.partition_of(key) % 2, 0);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_second_group_sees_every_message() {
    let bus = bus(4, 1_000);
    let a1 = bus.subscribe(TOPIC, "compute").await.unwrap();
    let a2 = bus.subscribe(TOPIC, "compute").await.unwrap();
    let b = bus.subscribe(TOPIC, "archive").await.unwrap();
    for seq in 0..25 {
        for key in ["SPX", "SPY", "QQQ", "IWM"] {
            bus.publish(TOPIC, event(key, seq)).await.unwrap();
        }
    }
    bus.close();
    let mut group_a = drain(a1, 10).await;
    group_a.extend(drain(a2, 10).await);
    let group_b = drain(b, 10).await;
    assert_eq!(group_b.len(), 100);
    assert_eq!(by_key(&group_b), by_key(&group_a));
    assert!(
        by_key(&group_b)
            .values()
            .all(|s| *s == (0..25).collect::<Vec<_>>())
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_restarted_member_resumes_after_the_commit_and_gets_the_uncommitted_again() {
    let bus = bus(4, 100);
    let mut first = bus.subscribe(TOPIC, "compute").await.unwrap();
    let mut other_group = bus.subscribe(TOPIC, "archive").await.unwrap();
    for seq in 0..10 {
        bus.publish(TOPIC, event("SPY", seq)).await.unwrap();
    }
    let batch = first.next_batch(4).await.unwrap().unwrap();
    assert_eq!(
        batch.iter().map(|d| d.offset).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    first.commit().await.unwrap();
    let batch = first.next_batch(3).await.unwrap().unwrap();
    assert_eq!(
        batch.iter().map(|d| d.offset).collect::<Vec<_>>(),
        [4, 5, 6]
    );
    drop(first); // crash before committing 4..=6

    let mut restarted = bus.subscribe(TOPIC, "compute").await.unwrap();
    let batch = restarted.next_batch(100).await.unwrap().unwrap();
    let seqs: Vec<u64> = batch.iter().map(|d| key_seq(d).1).collect();
    assert_eq!(seqs, (4..10).collect::<Vec<_>>());
    restarted.commit().await.unwrap();
    // The committed prefix of the slowest group is still held for it: 10 of "archive".
    assert_eq!(bus.pressure(TOPIC).pending, 10);
    let batch = other_group.next_batch(100).await.unwrap().unwrap();
    assert_eq!(batch.len(), 10, "another group is unaffected");
    other_group.commit().await.unwrap();
    assert_eq!(bus.pressure(TOPIC).pending, 0);
}

#[tokio::test(flavor = "current_thread")]
async fn when_a_member_leaves_its_partitions_move_to_the_others_from_the_commit() {
    let bus = bus(2, 100);
    let mut a = bus.subscribe(TOPIC, "compute").await.unwrap();
    let mut b = bus.subscribe(TOPIC, "compute").await.unwrap();
    // Two keys in different partitions.
    let (k0, k1) = (&key_in(&bus, 0), &key_in(&bus, 1));
    for seq in 0..4 {
        bus.publish(TOPIC, event(k0, seq)).await.unwrap();
        bus.publish(TOPIC, event(k1, seq)).await.unwrap();
    }
    let got_a = a.next_batch(100).await.unwrap().unwrap();
    assert!(got_a.iter().all(|d| d.partition == 0) && got_a.len() == 4);
    let got_b = b.next_batch(2).await.unwrap().unwrap();
    assert!(got_b.iter().all(|d| d.partition == 1) && got_b.len() == 2);
    b.commit().await.unwrap();
    let _uncommitted = b.next_batch(1).await.unwrap().unwrap();
    drop(b);
    a.commit().await.unwrap();
    let moved = a.next_batch(100).await.unwrap().unwrap();
    let seqs: Vec<(String, u64)> = moved.iter().map(key_seq).collect();
    assert_eq!(seqs, [(k1.clone(), 2), (k1.clone(), 3)]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_joining_member_gets_a_partition_only_once_its_owner_has_released_it() {
    let bus = bus(2, 100);
    let mut a = bus.subscribe(TOPIC, "compute").await.unwrap();
    let (k0, k1) = (&key_in(&bus, 0), &key_in(&bus, 1));
    for seq in 0..2 {
        bus.publish(TOPIC, event(k0, seq)).await.unwrap();
        bus.publish(TOPIC, event(k1, seq)).await.unwrap();
    }
    assert_eq!(a.next_batch(100).await.unwrap().unwrap().len(), 4);
    a.commit().await.unwrap();
    assert!(a.take_revoked().is_empty(), "nothing revoked yet");
    // `a` received seq 2 of k1 but has not committed it when `b` joins.
    bus.publish(TOPIC, event(k1, 2)).await.unwrap();
    assert_eq!(a.next_batch(100).await.unwrap().unwrap().len(), 1);
    let mut b = bus.subscribe(TOPIC, "compute").await.unwrap();
    bus.publish(TOPIC, event(k1, 3)).await.unwrap();
    {
        // Partition 1 goes to `b`, but `a` still holds it: `b` waits.
        let mut waiting = std::pin::pin!(b.next_batch(100));
        assert!(poll_once(waiting.as_mut()).is_pending());
        // `a` learns of the change on its next read, which releases the partition.
        bus.publish(TOPIC, event(k0, 2)).await.unwrap();
        let kept = a.next_batch(100).await.unwrap().unwrap();
        assert_eq!(
            kept.iter().map(key_seq).collect::<Vec<_>>(),
            [(k0.clone(), 2)]
        );
        assert_eq!(a.take_revoked(), [1]);
        assert!(a.take_revoked().is_empty(), "reported once");
        // `b` starts after the group's commit: `a`'s uncommitted seq 2 comes again.
        let moved = waiting.await.unwrap().unwrap();
        let seqs: Vec<(String, u64)> = moved.iter().map(key_seq).collect();
        assert_eq!(seqs, [(k1.clone(), 2), (k1.clone(), 3)]);
    }
    assert!(b.take_revoked().is_empty());
    // A commit by `a` no longer covers the partition it released.
    a.commit().await.unwrap();
    drop(b);
    let back = a.next_batch(100).await.unwrap().unwrap();
    assert_eq!(
        back.len(),
        2,
        "back to `a` from the group's commit: {back:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn closing_delivers_what_was_accepted_then_ends_consumers() {
    let bus = bus(4, 100);
    let mut waiting_sub = bus.subscribe(TOPIC, "idle").await.unwrap();
    let mut busy_sub = bus.subscribe(TOPIC, "busy").await.unwrap();
    {
        let mut waiting = pin!(waiting_sub.next_batch(10));
        assert!(
            poll_once(waiting.as_mut()).is_pending(),
            "nothing to read yet"
        );
        bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
        let batch = waiting.await.unwrap().unwrap();
        assert_eq!(batch.len(), 1);
    }
    waiting_sub.commit().await.unwrap();
    bus.publish(TOPIC, event("SPY", 1)).await.unwrap();
    {
        let batch = waiting_sub.next_batch(10).await.unwrap().unwrap();
        assert_eq!(batch.len(), 1);
        waiting_sub.commit().await.unwrap();
        let mut waiting = pin!(waiting_sub.next_batch(10));
        assert!(poll_once(waiting.as_mut()).is_pending());
        bus.close();
        assert_eq!(waiting.await, Ok(None), "a waiting consumer ends cleanly");
    }
    // What was accepted before the close is still delivered.
    let batch = busy_sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(batch.len(), 2);
    assert_eq!(busy_sub.next_batch(10).await, Ok(None));
    assert_eq!(
        bus.publish(TOPIC, event("SPY", 2)).await,
        Err(BusError::Closed)
    );
    assert_eq!(
        bus.subscribe(TOPIC, "new").await.err(),
        Some(BusError::Closed)
    );
    bus.close(); // idempotent
}

#[tokio::test(flavor = "current_thread")]
async fn deleting_an_abandoned_group_releases_its_messages() {
    let bus = bus(1, 2);
    let sub = bus.subscribe(TOPIC, "gone").await.unwrap();
    assert!(
        !bus.delete_group(TOPIC, "gone"),
        "a group with members stays"
    );
    drop(sub);
    bus.publish(TOPIC, event("SPY", 0)).await.unwrap();
    bus.publish(TOPIC, event("SPY", 1)).await.unwrap();
    assert!(bus.pressure(TOPIC).is_full());
    assert!(bus.delete_group(TOPIC, "gone"));
    assert!(!bus.delete_group(TOPIC, "gone"));
    // No group left: messages are held again until one joins (it starts at the oldest).
    assert_eq!(bus.pressure(TOPIC).pending, 2);
    let mut sub = bus.subscribe(TOPIC, "new").await.unwrap();
    assert_eq!(sub.next_batch(10).await.unwrap().unwrap().len(), 2);
    sub.commit().await.unwrap();
    assert_eq!(bus.pressure(TOPIC).pending, 0);
}

#[tokio::test(flavor = "current_thread")]
async fn a_quote_batch_arrives_intact_and_decoded() {
    let expiration = NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
    let rows: Vec<OptionQuote> = [OptionType::Call, OptionType::Put]
        .into_iter()
        .map(|option_type| OptionQuote {
            underlying: "SPY".to_owned(),
            option_symbol: occ_symbol("SPY", expiration, option_type, 590.0).unwrap(),
            expiration,
            strike: 590.0,
            option_type,
            settlement: SettlementStyle::Pm,
            exercise_style: ExerciseStyle::American,
            bid: 10.1,
            ask: 10.3,
            bid_size: 12,
            ask_size: 40,
            last: None,
            volume: 1_000,
            open_interest: 20_000,
            oi_date: NaiveDate::from_ymd_opt(2026, 11, 19).unwrap(),
            quote_time: DateTime::from_timestamp_micros(1_795_188_600_000_000).unwrap(),
            underlying_price: 587.12,
        })
        .collect();
    let message = Message::Data(DataBatch::from_rows("SPY", &rows).unwrap());
    let bus: Arc<dyn Bus> = Arc::new(EmbeddedBus::default());
    let mut sub = bus.subscribe(message.topic(), "compute").await.unwrap();
    bus.publish(message.topic(), message.clone()).await.unwrap();
    bus.flush().await.unwrap();
    let batch = sub.next_batch(10).await.unwrap().unwrap();
    assert_eq!(batch.len(), 1);
    assert_eq!(batch[0].message, message);
    let Message::Data(data) = &batch[0].message else {
        unreachable!()
    };
    assert_eq!(data.rows::<OptionQuote>().unwrap(), rows);
}

/// The messages and consumer groups the bus reports holding.
fn held(bus: &EmbeddedBus) -> (u64, u64, u64) {
    use optics_schemas::memory::MemoryHolder;
    let mut out = Vec::new();
    bus.held_memory(&mut out);
    let find = |name: &str| *out.iter().find(|h| h.holder == name).unwrap();
    let messages = find("bus_messages");
    (
        messages.items,
        messages.bytes,
        find("bus_consumer_groups").items,
    )
}

#[tokio::test]
async fn the_bus_reports_what_it_holds_and_releases_what_every_group_committed() {
    let bus = bus(2, 64);
    assert_eq!(held(&bus), (0, 0, 0));
    let mut sub = bus.subscribe(TOPIC, "g").await.unwrap();
    for seq in 0..10 {
        bus.publish(TOPIC, event("SPY", seq)).await.unwrap();
    }
    let (messages, bytes, groups) = held(&bus);
    assert_eq!((messages, groups), (10, 1));
    assert!(
        bytes >= 10 * std::mem::size_of::<Message>() as u64,
        "{bytes}"
    );
    // Delivered but not committed: still held, for a restarted member.
    let batch = sub.next_batch(100).await.unwrap().unwrap();
    assert_eq!(batch.len(), 10);
    assert_eq!(held(&bus).0, 10);
    sub.commit().await.unwrap();
    assert_eq!(held(&bus).0, 0);
    // A group whose member left keeps its offsets (and is counted) until deleted.
    drop(sub);
    assert_eq!(held(&bus).2, 1);
    assert!(bus.delete_group(TOPIC, "g"));
    assert_eq!(held(&bus).2, 0);
}
