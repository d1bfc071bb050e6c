//! The embedded bus: Kafka's model (partitions by key, consumer groups, commits) in process
//! memory, bounded.
//!
//! Each topic is a set of partition logs, `VecDeque`s of decoded [`Message`]s with offsets.
//! A message stays in its log until every consumer group known to the topic has committed
//! past it; that is what lets a restarted member resume after the group's last commit and
//! receive the uncommitted messages again. The number of messages a topic holds is bounded by
//! [`EmbeddedBusConfig::capacity_per_topic`] through a FIFO semaphore: a publisher takes a
//! permit per message and waits (in arrival order) when there is none; trimming committed
//! messages returns permits. So nothing is dropped and nothing grows without bound — but a
//! group that never commits, or a topic with no group at all, holds publishers back once the
//! capacity is reached (that is back-pressure, reported by [`Bus::pressure`]).
//!
//! Messages travel decoded: the log holds the `Message` (an Arrow batch is a few `Arc`s), and
//! a delivery clones it. Encoding is Kafka's business.
//!
//! Consumers wait on a `watch` channel bumped by every publish, membership change, partition
//! release and close; they mark the current value seen *before* reading the logs, so a publish
//! that lands after the read wakes them (no lost wake-ups).
//!
//! A partition changes owner as in Kafka's cooperative rebalancing: the member losing it
//! releases it when it next reads or commits (and reports it through
//! [`Subscription::take_revoked`]); only then does the member gaining it start, after the
//! group's last commit. So nothing the old owner does before it notices the change (finishing
//! a cycle, publishing what it built) races with the new owner's work.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use optics_schemas::memory::{HeapBytes, HeldMemory, MemoryHolder};
use optics_schemas::{Bus, BusError, BusFuture, Delivery, Message, Pressure, Subscription};
use tokio::sync::{Semaphore, watch};

/// Sizing of an [`EmbeddedBus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedBusConfig {
    /// Partitions per topic (at least 1): how finely a consumer group can split a topic. A key
    /// always maps to the same partition.
    pub partitions: u32,
    /// Messages a topic holds before a publish waits (at least 1): published but not yet
    /// committed by every consumer group of the topic. With 1,000-quote batches, 256 messages
    /// are about 35 MB of quotes.
    pub capacity_per_topic: usize,
}

impl Default for EmbeddedBusConfig {
    fn default() -> Self {
        Self {
            partitions: 16,
            capacity_per_topic: 256,
        }
    }
}

/// The in-process [`Bus`]. Cheap to clone (clones share the bus); use it as `Arc<dyn Bus>`.
#[derive(Clone)]
pub struct EmbeddedBus {
    inner: Arc<Inner>,
}

struct Inner {
    config: EmbeddedBusConfig,
    closed: AtomicBool,
    topics: Mutex<HashMap<String, Arc<Topic>>>,
}

struct Topic {
    /// One permit per message the topic may still take.
    permits: Semaphore,
    state: Mutex<TopicState>,
    /// Bumped on every publish, membership change and close.
    wake: watch::Sender<u64>,
}

struct TopicState {
    partitions: Vec<PartitionLog>,
    groups: HashMap<String, Group>,
    next_member_id: u64,
    closed: bool,
}

/// The messages of one partition still held, `log[i]` at offset `base + i`, each with the
/// moment the bus accepted it.
#[derive(Default)]
struct PartitionLog {
    base: u64,
    log: VecDeque<(Message, SystemTime)>,
}

impl PartitionLog {
    fn end(&self) -> u64 {
        self.base + self.log.len() as u64
    }
}

struct Group {
    /// Per partition, the offset after the last committed message.
    committed: Vec<u64>,
    /// Member ids in joining order; partition `p` goes to `members[p % members.len()]`.
    members: Vec<u64>,
    /// Per partition, the member that holds it now: the one it goes to once the previous
    /// holder has released it; `None` while nobody does.
    owners: Vec<Option<u64>>,
    /// Bumped on every membership change and release, so members recompute their assignment.
    generation: u64,
}

impl Group {
    fn assignment(&self, member: u64) -> impl Iterator<Item = u32> + '_ {
        let n = self.members.len();
        let index = self.members.iter().position(|&m| m == member);
        (0..self.committed.len())
            .filter(move |p| index.is_some_and(|i| p % n == i))
            .map(|p| p as u32)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The state is consistent between statements; a panicking holder cannot leave it torn.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// FNV-1a: a stable key → partition map (the same in every process and run, unlike std's
/// randomly seeded hasher), so tests and replays are deterministic.
fn partition_of(key: &str, partitions: u32) -> u32 {
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % u64::from(partitions)) as u32
}

impl EmbeddedBus {
    /// A bus with the given sizing (`partitions` and `capacity_per_topic` are raised to 1 if
    /// zero).
    pub fn new(config: EmbeddedBusConfig) -> Self {
        let config = EmbeddedBusConfig {
            partitions: config.partitions.max(1),
            capacity_per_topic: config.capacity_per_topic.clamp(1, Semaphore::MAX_PERMITS),
        };
        Self {
            inner: Arc::new(Inner {
                config,
                closed: AtomicBool::new(false),
                topics: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The sizing in effect.
    pub fn config(&self) -> EmbeddedBusConfig {
        self.inner.config
    }

    /// The partition `key` maps to.
    pub fn partition_of(&self, key: &str) -> u32 {
        partition_of(key, self.inner.config.partitions)
    }

    /// Forgets consumer group `group` of `topic` (its committed offsets), so its uncommitted
    /// messages no longer hold publishers back. Answers `false`, and forgets nothing, if the
    /// group has members or is unknown.
    pub fn delete_group(&self, topic: &str, group: &str) -> bool {
        let Some(topic) = lock(&self.inner.topics).get(topic).cloned() else {
            return false;
        };
        let trimmed = {
            let mut state = lock(&topic.state);
            if !state
                .groups
                .get(group)
                .is_some_and(|g| g.members.is_empty())
            {
                return false;
            }
            state.groups.remove(group);
            state.trim()
        };
        topic.permits.add_permits(trimmed);
        true
    }

    fn topic(&self, name: &str) -> Result<Arc<Topic>, BusError> {
        let mut topics = lock(&self.inner.topics);
        // Checked under the map's lock, which `close` also takes: no topic appears after.
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(BusError::Closed);
        }
        let config = self.inner.config;
        let topic = topics.entry(name.to_owned()).or_insert_with(|| {
            Arc::new(Topic {
                permits: Semaphore::new(config.capacity_per_topic),
                state: Mutex::new(TopicState {
                    partitions: (0..config.partitions)
                        .map(|_| PartitionLog::default())
                        .collect(),
                    groups: HashMap::new(),
                    next_member_id: 0,
                    closed: false,
                }),
                wake: watch::Sender::new(0),
            })
        });
        Ok(Arc::clone(topic))
    }
}

impl Default for EmbeddedBus {
    fn default() -> Self {
        Self::new(EmbeddedBusConfig::default())
    }
}

impl fmt::Debug for EmbeddedBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut topics: Vec<String> = lock(&self.inner.topics).keys().cloned().collect();
        topics.sort();
        f.debug_struct("EmbeddedBus")
            .field("config", &self.inner.config)
            .field("closed", &self.inner.closed.load(Ordering::Relaxed))
            .field("topics", &topics)
            .finish()
    }
}

impl TopicState {
    /// Drops the messages every group has committed; answers how many.
    fn trim(&mut self) -> usize {
        if self.groups.is_empty() {
            return 0;
        }
        let mut trimmed = 0;
        for (p, log) in self.partitions.iter_mut().enumerate() {
            let low = self.groups.values().map(|g| g.committed[p]).min();
            let low = low.unwrap_or(log.base).min(log.end());
            while log.base < low {
                log.log.pop_front();
                log.base += 1;
                trimmed += 1;
            }
        }
        trimmed
    }
}

impl Topic {
    fn wake_consumers(&self) {
        self.wake.send_modify(|v| *v = v.wrapping_add(1));
    }
}

impl Bus for EmbeddedBus {
    fn publish<'a>(
        &'a self,
        topic: &'a str,
        message: Message,
    ) -> BusFuture<'a, Result<(), BusError>> {
        Box::pin(async move {
            let topic = self.topic(topic)?;
            // FIFO: a publisher that waits is served before later ones.
            topic
                .permits
                .acquire()
                .await
                .map_err(|_| BusError::Closed)?
                .forget();
            let partition = self.partition_of(message.key()) as usize;
            let accepted = SystemTime::now();
            {
                let mut state = lock(&topic.state);
                if state.closed {
                    return Err(BusError::Closed);
                }
                state.partitions[partition]
                    .log
                    .push_back((message, accepted));
            }
            topic.wake_consumers();
            Ok(())
        })
    }

    fn flush(&self) -> BusFuture<'_, Result<(), BusError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe<'a>(
        &'a self,
        topic: &'a str,
        group: &'a str,
    ) -> BusFuture<'a, Result<Box<dyn Subscription>, BusError>> {
        Box::pin(async move {
            let topic_state = self.topic(topic)?;
            let member = {
                let mut state = lock(&topic_state.state);
                let member = state.next_member_id;
                state.next_member_id += 1;
                let committed: Vec<u64> = state.partitions.iter().map(|p| p.base).collect();
                let entry = state
                    .groups
                    .entry(group.to_owned())
                    .or_insert_with(|| Group {
                        owners: vec![None; committed.len()],
                        committed,
                        members: Vec::new(),
                        generation: 0,
                    });
                entry.members.push(member);
                entry.generation += 1;
                member
            };
            topic_state.wake_consumers();
            let wake = topic_state.wake.subscribe();
            Ok(Box::new(EmbeddedSubscription {
                topic_name: topic.to_owned(),
                group: group.to_owned(),
                member,
                topic: topic_state,
                generation: None,
                positions: BTreeMap::new(),
                cursor: 0,
                revoked: BTreeSet::new(),
                wake,
            }) as Box<dyn Subscription>)
        })
    }

    fn pressure(&self, topic: &str) -> Pressure {
        let capacity = self.inner.config.capacity_per_topic;
        let available = lock(&self.inner.topics)
            .get(topic)
            .map_or(capacity, |t| t.permits.available_permits());
        Pressure {
            pending: (capacity - available.min(capacity)) as u64,
            capacity: capacity as u64,
        }
    }

    fn close(&self) {
        let topics = lock(&self.inner.topics);
        self.inner.closed.store(true, Ordering::Release);
        for topic in topics.values() {
            lock(&topic.state).closed = true;
            topic.permits.close();
            topic.wake_consumers();
        }
    }
}

/// What the bus holds: `bus_messages` (items: messages published and not yet committed by
/// every group of their topic, at most [`EmbeddedBusConfig::capacity_per_topic`] per topic;
/// bytes: their batches) and `bus_consumer_groups` (items: groups across topics, members or
/// not; bytes: their offsets and owners).
impl MemoryHolder for EmbeddedBus {
    fn held_memory(&self, out: &mut Vec<HeldMemory>) {
        let topics: Vec<Arc<Topic>> = lock(&self.inner.topics).values().cloned().collect();
        let (mut messages, mut message_bytes) = (0, 0);
        let (mut groups, mut group_bytes) = (0, 0);
        for topic in topics {
            let state = lock(&topic.state);
            for partition in &state.partitions {
                messages += partition.log.len();
                message_bytes += partition.log.capacity()
                    * std::mem::size_of::<(Message, SystemTime)>()
                    + partition
                        .log
                        .iter()
                        .map(|(message, _)| message.heap_bytes())
                        .sum::<usize>();
            }
            groups += state.groups.len();
            group_bytes += state
                .groups
                .iter()
                .map(|(name, group)| {
                    std::mem::size_of::<Group>()
                        + name.capacity()
                        + group.committed.capacity() * std::mem::size_of::<u64>()
                        + group.members.capacity() * std::mem::size_of::<u64>()
                        + group.owners.capacity() * std::mem::size_of::<Option<u64>>()
                })
                .sum::<usize>();
        }
        out.push(HeldMemory::new("bus_messages", messages, message_bytes));
        out.push(HeldMemory::new("bus_consumer_groups", groups, group_bytes));
    }
}

/// A member of a consumer group of the [`EmbeddedBus`].
struct EmbeddedSubscription {
    topic_name: String,
    group: String,
    member: u64,
    topic: Arc<Topic>,
    /// The group generation `positions` was computed for; `None` before the first read.
    generation: Option<u64>,
    /// Per assigned partition, the offset of the next message to deliver.
    positions: BTreeMap<u32, u64>,
    /// Which assigned partition a batch starts with, rotated for fairness.
    cursor: usize,
    /// Partitions lost to other members since [`Subscription::take_revoked`] last ran.
    revoked: BTreeSet<u32>,
    wake: watch::Receiver<u64>,
}

impl EmbeddedSubscription {
    /// Recomputes the assignment after a membership change or a release: releases the
    /// partitions that go to another member now (remembered for
    /// [`Subscription::take_revoked`]), keeps the position of those kept, and takes those
    /// nobody holds any more, starting after the group's last commit. Answers whether it
    /// released any (the caller wakes the other members after unlocking).
    fn refresh(&mut self, state: &mut TopicState) -> bool {
        let group = state
            .groups
            .get_mut(&self.group)
            .expect("a member's group exists");
        if self.generation == Some(group.generation) {
            return false;
        }
        let target: BTreeSet<u32> = group.assignment(self.member).collect();
        let released: Vec<u32> = self
            .positions
            .keys()
            .copied()
            .filter(|p| !target.contains(p))
            .collect();
        for &p in &released {
            self.positions.remove(&p);
            group.owners[p as usize] = None;
            self.revoked.insert(p);
        }
        for p in target {
            let owner = &mut group.owners[p as usize];
            if owner.is_none() {
                *owner = Some(self.member);
                self.positions.insert(p, group.committed[p as usize]);
            }
        }
        if !released.is_empty() {
            group.generation += 1;
        }
        self.generation = Some(group.generation);
        !released.is_empty()
    }

    /// Takes up to `max` available messages of the assigned partitions.
    fn take(&mut self, state: &TopicState, max: usize) -> Vec<Delivery> {
        let assigned: Vec<u32> = self.positions.keys().copied().collect();
        let mut out = Vec::new();
        for i in 0..assigned.len() {
            if out.len() >= max {
                break;
            }
            let p = assigned[(self.cursor + i) % assigned.len()];
            let log = &state.partitions[p as usize];
            let position = self.positions.get_mut(&p).expect("assigned partition");
            *position = (*position).max(log.base);
            while *position < log.end() && out.len() < max {
                let (message, entered) = &log.log[(*position - log.base) as usize];
                out.push(Delivery {
                    partition: p,
                    offset: *position,
                    message: message.clone(),
                    entered_bus: Some(*entered),
                });
                *position += 1;
            }
        }
        self.cursor = self.cursor.wrapping_add(1);
        out
    }
}

impl Subscription for EmbeddedSubscription {
    fn next_batch(
        &mut self,
        max_messages: usize,
    ) -> BusFuture<'_, Result<Option<Vec<Delivery>>, BusError>> {
        let max = max_messages.max(1);
        Box::pin(async move {
            loop {
                // Seen before reading: anything published after the read bumps it again.
                self.wake.borrow_and_update();
                {
                    let topic = Arc::clone(&self.topic);
                    let mut state = lock(&topic.state);
                    if self.refresh(&mut state) {
                        drop(state);
                        topic.wake_consumers();
                        state = lock(&topic.state);
                    }
                    let batch = self.take(&state, max);
                    if !batch.is_empty() {
                        return Ok(Some(batch));
                    }
                    if state.closed {
                        return Ok(None);
                    }
                }
                // The sender lives in `self.topic`, so this only ever returns after a bump.
                if self.wake.changed().await.is_err() {
                    return Ok(None);
                }
            }
        })
    }

    fn commit(&mut self) -> BusFuture<'_, Result<(), BusError>> {
        Box::pin(async move {
            let (trimmed, released) = {
                let topic = Arc::clone(&self.topic);
                let mut state = lock(&topic.state);
                let released = self.refresh(&mut state);
                let group = state
                    .groups
                    .get_mut(&self.group)
                    .expect("a member's group exists");
                for (&p, &position) in &self.positions {
                    let committed = &mut group.committed[p as usize];
                    *committed = (*committed).max(position);
                }
                (state.trim(), released)
            };
            self.topic.permits.add_permits(trimmed);
            if released {
                self.topic.wake_consumers();
            }
            Ok(())
        })
    }

    fn take_revoked(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.revoked).into_iter().collect()
    }
}

impl Drop for EmbeddedSubscription {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.topic.state);
            if let Some(group) = state.groups.get_mut(&self.group) {
                group.members.retain(|&m| m != self.member);
                for owner in &mut group.owners {
                    if *owner == Some(self.member) {
                        *owner = None;
                    }
                }
                group.generation += 1;
            }
        }
        self.topic.wake_consumers();
    }
}

impl fmt::Debug for EmbeddedSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddedSubscription")
            .field("topic", &self.topic_name)
            .field("group", &self.group)
            .field("member", &self.member)
            .field("positions", &self.positions)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_of_is_stable_and_in_range() {
        assert_eq!(partition_of("SPY", 16), partition_of("SPY", 16));
        for key in ["SPY", "QQQ", "SPX", "AAPL", "*"] {
            assert!(partition_of(key, 7) < 7);
            assert_eq!(partition_of(key, 1), 0);
        }
    }

    #[test]
    fn assignment_splits_partitions_round_robin() {
        let group = Group {
            committed: vec![0; 5],
            members: vec![3, 8],
            owners: vec![None; 5],
            generation: 2,
        };
        assert_eq!(group.assignment(3).collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!(group.assignment(8).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(group.assignment(9).count(), 0);
    }
}
