//! One member of a Kafka consumer group: a [`Subscription`] over an rdkafka stream consumer.
//!
//! librdkafka runs rebalance callbacks only while the application polls the consumer, so every
//! wait of this type polls it: messages that arrive while the member waits for something else
//! (its first assignment, a commit during a rebalance) are buffered here, stamped with the
//! *assignment epoch* of their partition. A partition revoked and perhaps assigned again gets a
//! new epoch, and buffered messages of an old epoch are dropped: librdkafka fetches that
//! partition again from the group's committed offset, so keeping them would deliver them twice.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, SystemTime};

use optics_schemas::{BusError, BusFuture, Delivery, Message, Subscription};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{
    BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance, StreamConsumer,
};
use rdkafka::error::{KafkaError, KafkaResult, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message as _};
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{KafkaBusConfig, Shared, backend, lock};

/// Messages a subscription buffers at most while it polls for another reason (a commit
/// waiting out a rebalance); beyond it the commit retry only sleeps.
const MAX_BUFFERED: usize = 4_096;
/// librdkafka events (rebalances, errors) served at most in one non-blocking poll.
const MAX_EVENTS_PER_POLL: usize = 64;
/// How often a member of a closed bus rechecks whether the group has drained the topic.
const DRAIN_RECHECK: Duration = Duration::from_millis(100);
/// Pause between attempts to seek a partition librdkafka is not fetching yet.
const SEEK_RETRY: Duration = Duration::from_millis(20);
/// Pause between commit attempts while the group rebalances.
const COMMIT_RETRY: Duration = Duration::from_millis(50);

/// `timeout` from now; `None` when that is beyond what the clock can represent (no deadline).
fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Commit failures that a finished rebalance resolves: retried until the commit timeout.
fn is_rebalance_error(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::RebalanceInProgress
                | RDKafkaErrorCode::IllegalGeneration
                | RDKafkaErrorCode::UnknownMemberId
                | RDKafkaErrorCode::StaleMemberEpoch
                | RDKafkaErrorCode::AssignmentLost
                | RDKafkaErrorCode::NotCoordinator
                | RDKafkaErrorCode::CoordinatorLoadInProgress
                | RDKafkaErrorCode::CoordinatorNotAvailable
                | RDKafkaErrorCode::RequestTimedOut
        )
    )
}

/// The consumer's context: follows the member's assignment through rebalance callbacks.
struct GroupContext {
    topic: String,
    state: Mutex<GroupState>,
    /// Bumped after every rebalance callback, so waits return and callers re-read the state.
    rebalances: AtomicU64,
}

#[derive(Debug, Default)]
struct GroupState {
    /// Partitions this member owns, each with the epoch of its assignment.
    assigned: BTreeMap<i32, u64>,
    next_epoch: u64,
    /// Per owned partition, the offset after the last message handed out by `next_batch`:
    /// what a commit commits. Dropped when the partition is revoked.
    received: BTreeMap<i32, i64>,
    /// Partitions revoked since [`Subscription::take_revoked`] last ran.
    revoked: BTreeSet<i32>,
    /// Whether the member has received its first assignment (possibly empty).
    joined: bool,
    /// Rebalance errors not yet reported to the consumer.
    errors: Vec<String>,
}

impl ClientContext for GroupContext {}

impl ConsumerContext for GroupContext {
    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        {
            let mut state = lock(&self.state);
            match rebalance {
                // Cooperative assignment lists the partitions added (eager: all of them).
                Rebalance::Assign(partitions) => {
                    for element in partitions.elements_for_topic(&self.topic) {
                        let epoch = state.next_epoch;
                        state.next_epoch += 1;
                        state.assigned.insert(element.partition(), epoch);
                    }
                    state.joined = true;
                }
                Rebalance::Revoke(partitions) => {
                    for element in partitions.elements_for_topic(&self.topic) {
                        state.assigned.remove(&element.partition());
                        state.received.remove(&element.partition());
                        state.revoked.insert(element.partition());
                    }
                }
                Rebalance::Error(error) => state.errors.push(error.to_string()),
            }
        }
        self.rebalances.fetch_add(1, Ordering::AcqRel);
    }
}

/// A record taken from librdkafka, not yet handed out.
enum Buffered {
    Record {
        partition: i32,
        offset: i64,
        /// The assignment epoch of the partition when the record was polled.
        epoch: u64,
        decoded: Result<Message, String>,
        /// The record's timestamp (the producer's create time, or the broker's append time).
        entered_bus: Option<SystemTime>,
    },
    Error(BusError),
}

/// Records whether it was woken: a poll that answers `Pending` after waking itself has served
/// an event (a rebalance) and may have more to give right away.
#[derive(Default)]
struct WokenFlag(AtomicBool);

impl Wake for WokenFlag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// A member of a consumer group of the [`KafkaBus`](super::KafkaBus): the [`Subscription`]
/// that [`KafkaBus::join`](super::KafkaBus::join) returns (and `subscribe` boxes).
pub struct KafkaSubscription {
    topic: String,
    group: String,
    consumer: Arc<StreamConsumer<GroupContext>>,
    shared: Arc<Shared>,
    closed: watch::Receiver<bool>,
    buffer: VecDeque<Buffered>,
    /// Per partition, the offset this member last committed (to skip commits that change
    /// nothing).
    committed: BTreeMap<i32, i64>,
    /// Per partition, `(low, high)` watermarks read once after the bus closed.
    drain_ends: Option<BTreeMap<i32, (i64, i64)>>,
    commit_timeout: Duration,
    request_timeout: Duration,
    membership: Membership,
}

/// What a subscription is to its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Membership {
    /// One of the workers that split a topic: starts at the oldest message the cluster holds
    /// when the group has committed nothing (a new group misses nothing), and commits.
    Member,
    /// The only member of a group of its own, following a topic from its end: it read the
    /// current state elsewhere and wants what comes next; it never commits, so its group
    /// leaves no offsets behind.
    Follower,
}

impl Membership {
    fn offset_reset(self) -> &'static str {
        match self {
            Self::Member => "earliest",
            Self::Follower => "latest",
        }
    }
}

impl KafkaSubscription {
    /// Creates the consumer, subscribes it to `topic` in `group`, and waits for the member's
    /// first assignment.
    pub(super) async fn join(
        config: &KafkaBusConfig,
        shared: Arc<Shared>,
        topic: String,
        group: String,
        membership: Membership,
    ) -> Result<Self, BusError> {
        let mut client = ClientConfig::new();
        client
            .set("bootstrap.servers", config.bootstrap_servers())
            .set("client.id", &config.client_id)
            .set("group.id", &group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", membership.offset_reset())
            .set("enable.partition.eof", "false")
            .set("partition.assignment.strategy", "cooperative-sticky");
        for (name, value) in &config.consumer_properties {
            client.set(name, value);
        }
        let context = GroupContext {
            topic: topic.clone(),
            state: Mutex::new(GroupState::default()),
            rebalances: AtomicU64::new(0),
        };
        let consumer: StreamConsumer<GroupContext> = client
            .create_with_context(context)
            .map_err(|e| backend("creating the Kafka consumer", e))?;
        consumer
            .subscribe(&[&topic])
            .map_err(|e| backend(&format!("subscribing to {topic}"), e))?;
        let closed = shared.closed.subscribe();
        let mut subscription = Self {
            topic,
            group,
            consumer: Arc::new(consumer),
            shared,
            closed,
            buffer: VecDeque::new(),
            committed: BTreeMap::new(),
            drain_ends: None,
            commit_timeout: config.commit_timeout,
            request_timeout: config.request_timeout,
            membership,
        };
        let deadline = deadline_after(config.group_join_timeout);
        while !lock(&subscription.context().state).joined {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(BusError::Backend(format!(
                    "joining consumer group `{}` on {}: no partition assignment within {:?}",
                    subscription.group, subscription.topic, config.group_join_timeout
                )));
            }
            subscription.wait(deadline.map(|d| d - now)).await;
        }
        Ok(subscription)
    }

    /// Moves every partition this member owns to its end as of now (its high watermark), so
    /// that what is published from now on is delivered and nothing published before it.
    /// librdkafka resolves a `latest` start lazily, once fetching begins, and would skip what
    /// is published between the assignment and that moment.
    pub(super) async fn seek_to_end(&mut self) -> Result<(), BusError> {
        let partitions: Vec<i32> = lock(&self.context().state)
            .assigned
            .keys()
            .copied()
            .collect();
        let consumer = Arc::clone(&self.consumer);
        let topic = self.topic.clone();
        let timeout = self.request_timeout;
        // Both calls block on the broker's answer. Right after the assignment librdkafka may
        // not be fetching a partition yet, and refuses a seek ("erroneous state") until it is.
        let sought = tokio::task::spawn_blocking(move || -> KafkaResult<()> {
            let deadline = std::time::Instant::now() + timeout;
            for partition in partitions {
                let (_, high) = consumer.fetch_watermarks(&topic, partition, timeout)?;
                loop {
                    match consumer.seek(&topic, partition, Offset::Offset(high), timeout) {
                        Ok(()) => break,
                        Err(KafkaError::Seek(_)) if std::time::Instant::now() < deadline => {
                            std::thread::sleep(SEEK_RETRY);
                        }
                        Err(error) => return Err(error),
                    }
                }
            }
            Ok(())
        })
        .await
        .map_err(|e| BusError::Backend(format!("seeking {} to its end: {e}", self.topic)))?;
        sought.map_err(|e| backend(&format!("seeking {} to its end", self.topic), e))?;
        self.buffer.clear();
        Ok(())
    }

    /// The partitions this member owns now, ascending. Rebalance callbacks run while the
    /// member is polled (`next_batch`, `commit`), so this is the assignment as of the last poll.
    pub fn assigned_partitions(&self) -> Vec<u32> {
        lock(&self.context().state)
            .assigned
            .keys()
            .filter_map(|&p| u32::try_from(p).ok())
            .collect()
    }

    /// The Kafka topic (with the prefix) and consumer group id (with the prefix).
    pub fn topic_and_group(&self) -> (&str, &str) {
        (&self.topic, &self.group)
    }

    fn context(&self) -> &Arc<GroupContext> {
        self.consumer.context()
    }

    /// Buffers what librdkafka handed over: a record (decoded now, so a bad one is reported
    /// with its position) or a consumer error.
    fn accept(&mut self, polled: KafkaResult<BorrowedMessage<'_>>) {
        let record = match polled {
            Ok(record) => record,
            Err(error) if is_transient(&error) => {
                // librdkafka reconnects by itself; the member keeps its assignment and
                // position, so there is nothing to hand the caller but a log line.
                tracing::warn!(
                    topic = %self.topic,
                    group = %self.group,
                    %error,
                    "consumer error librdkafka recovers from; retrying"
                );
                return;
            }
            Err(error) => {
                let error = backend(&format!("consuming {}", self.topic), error);
                self.buffer.push_back(Buffered::Error(error));
                return;
            }
        };
        let (partition, offset) = (record.partition(), record.offset());
        if record.topic() != self.topic || partition < 0 || offset < 0 {
            return;
        }
        let Some(&epoch) = lock(&self.context().state).assigned.get(&partition) else {
            return; // revoked in the meantime: its new owner fetches it
        };
        let decoded = match record.payload() {
            Some(bytes) => Message::decode(bytes).map_err(|e| e.to_string()),
            None => Err("the record has no value".to_owned()),
        };
        let entered_bus = record
            .timestamp()
            .to_millis()
            .and_then(|ms| u64::try_from(ms).ok())
            .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
        self.buffer.push_back(Buffered::Record {
            partition,
            offset,
            epoch,
            decoded,
            entered_bus,
        });
    }

    /// Takes one record or error that librdkafka already holds, without waiting; serves the
    /// events (rebalances) queued before it. Answers whether it buffered anything.
    fn poll_now(&mut self) -> bool {
        let consumer = Arc::clone(&self.consumer);
        let flag = Arc::new(WokenFlag::default());
        let waker = Waker::from(Arc::clone(&flag));
        let mut cx = Context::from_waker(&waker);
        let mut recv = pin!(consumer.recv());
        for _ in 0..MAX_EVENTS_PER_POLL {
            flag.0.store(false, Ordering::Release);
            match recv.as_mut().poll(&mut cx) {
                Poll::Ready(polled) => {
                    self.accept(polled);
                    return true;
                }
                Poll::Pending if flag.0.load(Ordering::Acquire) => {}
                Poll::Pending => return false,
            }
        }
        false
    }

    /// Waits until librdkafka hands over a record or an error (buffered), a rebalance callback
    /// ran, the bus closed, or `tick` passed.
    async fn wait(&mut self, tick: Option<Duration>) {
        let consumer = Arc::clone(&self.consumer);
        let context = Arc::clone(consumer.context());
        let rebalances = context.rebalances.load(Ordering::Acquire);
        let was_closed = *self.closed.borrow_and_update();
        let polled = {
            let mut recv = pin!(consumer.recv());
            let mut closing = pin!(self.closed.changed());
            let mut ticked = pin!(async move {
                match tick {
                    Some(duration) => tokio::time::sleep(duration).await,
                    None => std::future::pending().await,
                }
            });
            poll_fn(|cx| {
                if let Poll::Ready(polled) = recv.as_mut().poll(cx) {
                    return Poll::Ready(Some(polled));
                }
                if context.rebalances.load(Ordering::Acquire) != rebalances
                    || (!was_closed && closing.as_mut().poll(cx).is_ready())
                    || ticked.as_mut().poll(cx).is_ready()
                {
                    return Poll::Ready(None);
                }
                Poll::Pending
            })
            .await
        };
        if let Some(polled) = polled {
            self.accept(polled);
        }
    }

    /// Hands out up to `max` buffered records of partitions still owned in the same
    /// assignment, advancing the received positions. An error is returned alone: the records
    /// before it go out first, and it comes with the next call.
    fn take(&mut self, max: usize) -> Result<Vec<Delivery>, BusError> {
        let context = Arc::clone(self.context());
        let mut state = lock(&context.state);
        if !state.errors.is_empty() {
            let errors = std::mem::take(&mut state.errors).join("; ");
            return Err(BusError::Backend(format!(
                "rebalance of group `{}` on {}: {errors}",
                self.group, self.topic
            )));
        }
        let mut out = Vec::new();
        while out.len() < max {
            let Some(item) = self.buffer.pop_front() else {
                break;
            };
            let (partition, offset, epoch, decoded, entered_bus) = match item {
                Buffered::Error(error) if out.is_empty() => return Err(error),
                error @ Buffered::Error(_) => {
                    self.buffer.push_front(error);
                    break;
                }
                Buffered::Record {
                    partition,
                    offset,
                    epoch,
                    decoded,
                    entered_bus,
                } => (partition, offset, epoch, decoded, entered_bus),
            };
            if state.assigned.get(&partition) != Some(&epoch) {
                continue; // the partition moved since: fetched again from the commit
            }
            match decoded {
                Ok(message) => {
                    state.received.insert(partition, offset + 1);
                    out.push(Delivery {
                        partition: u32::try_from(partition).unwrap_or_default(),
                        offset: u64::try_from(offset).unwrap_or_default(),
                        message,
                        entered_bus,
                    });
                }
                Err(reason) if out.is_empty() => {
                    // Counts as received: a commit skips it rather than stalling on it.
                    state.received.insert(partition, offset + 1);
                    return Err(BusError::Backend(format!(
                        "undecodable message at {}[{partition}]@{offset}: {reason}",
                        self.topic
                    )));
                }
                Err(reason) => {
                    self.buffer.push_front(Buffered::Record {
                        partition,
                        offset,
                        epoch,
                        decoded: Err(reason),
                        entered_bus,
                    });
                    break;
                }
            }
        }
        Ok(out)
    }

    async fn next(&mut self, max: usize) -> Result<Option<Vec<Delivery>>, BusError> {
        loop {
            while self.buffer.len() < max && self.poll_now() {}
            let batch = self.take(max)?;
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
            if *self.closed.borrow() {
                if self.drained().await? {
                    return Ok(None);
                }
                self.wait(Some(DRAIN_RECHECK)).await;
            } else {
                self.wait(None).await;
            }
        }
    }

    /// After close: whether the group has consumed the topic up to its end offsets, read once
    /// after the producer's queue is delivered — this member's partitions by what it received,
    /// the others by the group's commits.
    async fn drained(&mut self) -> Result<bool, BusError> {
        self.shared.producer_idle().await;
        let ends = match &self.drain_ends {
            Some(ends) => ends.clone(),
            None => {
                let ends = self.read_end_offsets().await?;
                self.drain_ends = Some(ends.clone());
                ends
            }
        };
        let (assigned, received) = {
            let state = lock(&self.context().state);
            (state.assigned.clone(), state.received.clone())
        };
        let mut ask_group = Vec::new();
        for (&partition, &(low, high)) in &ends {
            if high <= low {
                continue;
            }
            match received.get(&partition) {
                Some(&next) if assigned.contains_key(&partition) => {
                    if next < high {
                        return Ok(false);
                    }
                }
                _ => ask_group.push(partition),
            }
        }
        if ask_group.is_empty() {
            return Ok(true);
        }
        let committed = self.read_committed(&ask_group).await?;
        Ok(ask_group.iter().all(|partition| {
            let (low, high) = ends.get(partition).copied().unwrap_or_default();
            committed.get(partition).copied().unwrap_or(low) >= high
        }))
    }

    async fn read_end_offsets(&self) -> Result<BTreeMap<i32, (i64, i64)>, BusError> {
        let consumer = Arc::clone(&self.consumer);
        let topic = self.topic.clone();
        let timeout = self.request_timeout;
        tokio::task::spawn_blocking(move || {
            let metadata = consumer.fetch_metadata(Some(&topic), timeout)?;
            let mut ends = BTreeMap::new();
            for t in metadata.topics().iter().filter(|t| t.name() == topic) {
                for partition in t.partitions() {
                    let id = partition.id();
                    ends.insert(id, consumer.fetch_watermarks(&topic, id, timeout)?);
                }
            }
            Ok::<_, KafkaError>(ends)
        })
        .await
        .map_err(|e| backend("reading end offsets", e))?
        .map_err(|e| backend(&format!("reading the end offsets of {}", self.topic), e))
    }

    /// The group's committed offsets of `partitions` (absent: nothing committed).
    async fn read_committed(&self, partitions: &[i32]) -> Result<BTreeMap<i32, i64>, BusError> {
        let consumer = Arc::clone(&self.consumer);
        let topic = self.topic.clone();
        let partitions = partitions.to_vec();
        let timeout = self.request_timeout;
        tokio::task::spawn_blocking(move || {
            let mut request = TopicPartitionList::new();
            for &p in &partitions {
                request.add_partition(&topic, p);
            }
            let answer = consumer.committed_offsets(request, timeout)?;
            Ok::<_, KafkaError>(
                answer
                    .elements_for_topic(&topic)
                    .iter()
                    .filter_map(|e| match e.offset() {
                        Offset::Offset(o) => Some((e.partition(), o)),
                        _ => None,
                    })
                    .collect(),
            )
        })
        .await
        .map_err(|e| backend("reading committed offsets", e))?
        .map_err(|e| {
            backend(
                &format!("reading the committed offsets of group `{}`", self.group),
                e,
            )
        })
    }

    /// Commits, for every partition still owned, the offset after the last record handed
    /// out; retries while the group rebalances, serving the rebalance in between.
    async fn commit_received(&mut self) -> Result<(), BusError> {
        let deadline = deadline_after(self.commit_timeout);
        loop {
            let offsets: Vec<(i32, i64)> = {
                let context = Arc::clone(self.context());
                let state = lock(&context.state);
                self.committed
                    .retain(|partition, _| state.received.contains_key(partition));
                state
                    .received
                    .iter()
                    .filter(|&(p, o)| self.committed.get(p) != Some(o))
                    .map(|(&p, &o)| (p, o))
                    .collect()
            };
            if offsets.is_empty() {
                return Ok(());
            }
            let consumer = Arc::clone(&self.consumer);
            let topic = self.topic.clone();
            let request = offsets.clone();
            let result = tokio::task::spawn_blocking(move || {
                let mut list = TopicPartitionList::new();
                for (partition, offset) in request {
                    list.add_partition_offset(&topic, partition, Offset::Offset(offset))?;
                }
                consumer.commit(&list, CommitMode::Sync)
            })
            .await
            .map_err(|e| backend("committing offsets", e))?;
            match result {
                Ok(()) => {
                    self.committed.extend(offsets);
                    return Ok(());
                }
                Err(error)
                    if (is_rebalance_error(&error) || is_transient(&error))
                        && deadline.is_none_or(|d| Instant::now() < d) =>
                {
                    if self.buffer.len() < MAX_BUFFERED {
                        self.wait(Some(COMMIT_RETRY)).await;
                    } else {
                        tokio::time::sleep(COMMIT_RETRY).await;
                    }
                }
                Err(error) if is_transient(&error) => {
                    // The brokers are away longer than the commit timeout: the offsets stay
                    // uncommitted and go with the next commit (commits are cumulative); if
                    // this member dies first, the group redelivers them (at least once).
                    tracing::warn!(
                        topic = %self.topic,
                        group = %self.group,
                        %error,
                        "commit deferred to the next one: the group's coordinator is unreachable"
                    );
                    return Ok(());
                }
                Err(error) => {
                    return Err(backend(
                        &format!(
                            "committing offsets of {} for group `{}`",
                            self.topic, self.group
                        ),
                        error,
                    ));
                }
            }
        }
    }
}

impl Subscription for KafkaSubscription {
    fn next_batch(
        &mut self,
        max_messages: usize,
    ) -> BusFuture<'_, Result<Option<Vec<Delivery>>, BusError>> {
        Box::pin(self.next(max_messages.max(1)))
    }

    fn commit(&mut self) -> BusFuture<'_, Result<(), BusError>> {
        match self.membership {
            Membership::Member => Box::pin(self.commit_received()),
            Membership::Follower => Box::pin(std::future::ready(Ok(()))),
        }
    }

    /// With cooperative assignment a partition reaches its new owner only after this member
    /// has run the revocation callback (in a poll), so what it publishes before then cannot
    /// overwrite the new owner's work.
    fn take_revoked(&mut self) -> Vec<u32> {
        std::mem::take(&mut lock(&self.context().state).revoked)
            .into_iter()
            .filter_map(|p| u32::try_from(p).ok())
            .collect()
    }
}

impl fmt::Debug for KafkaSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.context().state);
        f.debug_struct("KafkaSubscription")
            .field("topic", &self.topic)
            .field("group", &self.group)
            .field("assigned", &state.assigned.keys().collect::<Vec<_>>())
            .field("received", &state.received)
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

/// Whether a consumer error is one librdkafka recovers from by itself (a broker restarting, a
/// connection lost, a request timed out): reported for information, not a reason to stop. A
/// worker that stopped on them would turn a 10-second broker restart into a dead worker.
fn is_transient(error: &KafkaError) -> bool {
    let (KafkaError::MessageConsumption(code) | KafkaError::ConsumerCommit(code)) = error else {
        return false;
    };
    matches!(
        code,
        RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::WaitingForCoordinator
            | RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::Resolve
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::NetworkException
            | RDKafkaErrorCode::NotCoordinator
            | RDKafkaErrorCode::CoordinatorNotAvailable
            | RDKafkaErrorCode::CoordinatorLoadInProgress
            | RDKafkaErrorCode::LeaderNotAvailable
            | RDKafkaErrorCode::NotLeaderForPartition
    )
}
