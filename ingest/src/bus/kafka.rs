//! The Kafka bus: [`Bus`] over Kafka through librdkafka (rdkafka), for the distributed mode
//! (`--bus kafka://host:9092`).
//!
//! # Topics, keys, partitions
//!
//! - A bus topic (see [`optics_schemas::bus::topics`], e.g. `optics.option_quotes`) is the
//!   Kafka topic of the same name behind [`KafkaBusConfig::topic_prefix`] (`prod.` gives
//!   `prod.optics.option_quotes`); a consumer group is [`KafkaBusConfig::group_prefix`] + the
//!   group name. The bus does not create topics: operators create them with the partition
//!   count they want (a partition is the unit a consumer group splits, so it bounds how many
//!   compute workers share a topic).
//! - The Kafka record key is [`Message::key`]: the underlying symbol, or `*` for market-wide
//!   reference data. The producer uses librdkafka's `murmur2_random` partitioner, the Java
//!   client's mapping of a key to a partition, so every producer of the cluster puts an
//!   underlying in the same partition; one partition therefore holds all of an underlying's
//!   messages, in publish order.
//! - The record value is the bus codec's bytes ([`optics_schemas::encode`]): the header
//!   repeats the key, and the body is one Arrow IPC stream or a JSON snapshot event.
//!
//! # Delivery guarantees
//!
//! - **Producer:** idempotent (`enable.idempotence=true`, `acks=all`): the brokers keep each
//!   partition's messages in the order they were accepted, without duplicates from retries.
//!   [`Bus::publish`] resolves once librdkafka has queued the message (so order is fixed);
//!   [`Bus::flush`] resolves once the brokers have acknowledged every queued message and
//!   reports any that could not be delivered within [`KafkaBusConfig::delivery_timeout`].
//!   Back-pressure: while the producer queue is full
//!   ([`KafkaBusConfig::producer_queue_messages`] or `…_bytes`), a publish waits for delivery
//!   reports to free room. Drop the bus only after a flush: queued messages die with it.
//! - **Consumer:** a consumer group with cooperative-sticky assignment (a rebalance moves only
//!   the partitions that change owner; a member keeps its position in the others),
//!   `enable.auto.commit=false` and `auto.offset.reset=earliest` (a new group starts at the
//!   oldest message the cluster holds). [`Subscription::commit`] commits, per partition the
//!   member still owns, the offset after the last message it received — so only what the
//!   consumer has acknowledged is committed, in order per partition. Offsets of partitions
//!   taken away by a rebalance are not committed (their new owner receives those messages
//!   again).
//! - **Follower** ([`KafkaBus::follow`]): a group of one, unique to the process, that starts
//!   at the end of each partition and never commits, so every follower sees every message
//!   published after it joined (the API replicas' snapshot events).
//! - Together: **at least once**. A message is redelivered only if it was received but not
//!   acknowledged (commit) before its member crashed, left, or lost the partition; an
//!   acknowledged message is never delivered again to the group.
//! - A record whose value does not decode is reported as an error by
//!   [`Subscription::next_batch`] (topic, partition, offset, reason) and counts as received,
//!   so the consumer can log it and commit past it instead of stalling on it forever.
//!
//! # Closing
//!
//! [`Bus::close`] refuses further publishes; a publisher waiting for room fails with
//! [`BusError::Closed`]. A subscription of a closed bus keeps delivering until the topic is
//! drained up to the end offsets it reads once, after the producer's queue is delivered:
//! its own partitions by itself, the others by the group's commits. It then answers `None`.
//! (Kafka has no "closed" topic: this is the local process shutting down.)
//!
//! # Configuration
//!
//! [`KafkaBusConfig::from_url`] parses `kafka://host:9092,host2:9092?topic_prefix=…&
//! group_prefix=…&client_id=…`; further librdkafka properties go in
//! [`KafkaBusConfig::producer_properties`] / [`KafkaBusConfig::consumer_properties`] (those
//! the guarantees rest on are refused, see [`PROTECTED_PROPERTIES`]). The bus needs a Tokio
//! runtime with the time driver enabled (rdkafka's stream consumer uses timers).

mod config;
mod subscription;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use optics_schemas::{Bus, BusError, BusFuture, Message, Pressure, Subscription};
use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message as _;
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext, ThreadedProducer};
use tokio::sync::{Notify, watch};

pub use config::{
    BrokerAddress, DEFAULT_KAFKA_PORT, KafkaBusConfig, KafkaBusError, PROTECTED_PROPERTIES,
};
pub use subscription::KafkaSubscription;
use subscription::Membership;

/// Followers created by this process: part of each follower's group name, so two followers
/// made in the same millisecond stay apart.
static FOLLOWERS: AtomicU64 = AtomicU64::new(0);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves the data consistent; a panicking holder cannot tear it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn backend(context: &str, error: impl fmt::Display) -> BusError {
    BusError::Backend(format!("{context}: {error}"))
}

/// The Kafka [`Bus`]: one idempotent producer shared by all publishers, and one Kafka
/// consumer per subscription. Cheap to clone (clones share the producer); use it as
/// `Arc<dyn Bus>`. See the [module documentation](self) for topics and guarantees.
#[derive(Clone)]
pub struct KafkaBus {
    inner: Arc<Inner>,
}

struct Inner {
    config: KafkaBusConfig,
    producer: ThreadedProducer<DeliveryTracker>,
    shared: Arc<Shared>,
}

/// State the bus shares with its producer callbacks and its subscriptions.
#[derive(Debug)]
struct Shared {
    /// `true` once [`Bus::close`] was called.
    closed: watch::Sender<bool>,
    /// Messages queued in librdkafka without a delivery report yet.
    in_flight: AtomicU64,
    /// Notified on every delivery report and on close.
    progress: Notify,
    /// Delivery failures since the last flush.
    failures: Mutex<DeliveryFailures>,
}

#[derive(Debug, Default)]
struct DeliveryFailures {
    count: u64,
    first: Option<String>,
}

impl Shared {
    fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves once every queued message has its delivery report.
    async fn producer_idle(&self) {
        loop {
            let notified = self.progress.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a report that lands in between still wakes us.
            notified.as_mut().enable();
            if self.in_flight.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// The producer's context: counts delivery reports and keeps the failures for `flush`.
struct DeliveryTracker {
    shared: Arc<Shared>,
}

impl ClientContext for DeliveryTracker {}

impl ProducerContext for DeliveryTracker {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _opaque: ()) {
        if let Err((error, message)) = result {
            let mut failures = lock(&self.shared.failures);
            failures.count += 1;
            if failures.first.is_none() {
                failures.first = Some(format!(
                    "{}[{}]: {error}",
                    message.topic(),
                    message.partition()
                ));
            }
        }
        self.shared.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.shared.progress.notify_waiters();
    }
}

impl KafkaBus {
    /// Creates the producer (librdkafka connects lazily: nothing is sent to the brokers yet).
    ///
    /// # Errors
    /// [`KafkaBusError`] for an invalid configuration or one librdkafka refuses.
    pub fn new(config: KafkaBusConfig) -> Result<Self, KafkaBusError> {
        config.validate()?;
        let shared = Arc::new(Shared {
            closed: watch::Sender::new(false),
            in_flight: AtomicU64::new(0),
            progress: Notify::new(),
            failures: Mutex::new(DeliveryFailures::default()),
        });
        let mut client = ClientConfig::new();
        client
            .set("bootstrap.servers", config.bootstrap_servers())
            .set("client.id", &config.client_id)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random")
            .set(
                "queue.buffering.max.messages",
                config.producer_queue_messages.to_string(),
            )
            .set(
                "queue.buffering.max.kbytes",
                config.producer_queue_bytes.div_ceil(1024).to_string(),
            )
            .set("linger.ms", config.linger.as_millis().to_string())
            .set(
                "message.timeout.ms",
                config.delivery_timeout.as_millis().max(1).to_string(),
            );
        for (name, value) in &config.producer_properties {
            client.set(name, value);
        }
        let producer = client
            .create_with_context(DeliveryTracker {
                shared: Arc::clone(&shared),
            })
            .map_err(|e| KafkaBusError::Client(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                producer,
                shared,
            }),
        })
    }

    /// Parses `url` (see [`KafkaBusConfig::from_url`]) and creates the bus.
    ///
    /// # Errors
    /// As [`KafkaBusConfig::from_url`] and [`KafkaBus::new`].
    pub fn from_url(url: &str) -> Result<Self, KafkaBusError> {
        Self::new(KafkaBusConfig::from_url(url)?)
    }

    /// The configuration in effect.
    pub fn config(&self) -> &KafkaBusConfig {
        &self.inner.config
    }

    fn kafka_topic(&self, topic: &str) -> Result<String, BusError> {
        self.inner
            .config
            .kafka_topic(topic)
            .map_err(|e| BusError::Backend(e.to_string()))
    }

    /// Joins consumer group `group` on `topic` ([`Bus::subscribe`] with the concrete type):
    /// resolves once the member has its first assignment (possibly empty, when the group has
    /// more members than the topic has partitions).
    ///
    /// # Errors
    /// [`BusError::Closed`] after [`Bus::close`]; [`BusError::Backend`] for an invalid topic or
    /// group name, a consumer librdkafka cannot create, or no assignment within
    /// [`KafkaBusConfig::group_join_timeout`].
    pub async fn join(&self, topic: &str, group: &str) -> Result<KafkaSubscription, BusError> {
        self.subscription(topic, group, Membership::Member).await
    }

    /// Follows `topic` from its end: every message published after this returns is received,
    /// none published before. The follower is a consumer group of its own (`name`, the process
    /// id, the start time and a count make it unique), positioned at the end of each
    /// partition, so every follower of a topic receives every message: what an API replica
    /// needs of the snapshot events (it reads the current state from the store at start). Its
    /// `commit` does nothing, so its group leaves no offsets behind when it goes.
    ///
    /// # Errors
    /// As [`join`](Self::join), and [`BusError::Backend`] when the partitions' ends cannot be
    /// read.
    pub async fn follow(&self, topic: &str, name: &str) -> Result<KafkaSubscription, BusError> {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_millis());
        let unique = format!(
            "{name}-{}-{started}-{}",
            std::process::id(),
            FOLLOWERS.fetch_add(1, Ordering::Relaxed)
        );
        let mut follower = self
            .subscription(topic, &unique, Membership::Follower)
            .await?;
        follower.seek_to_end().await?;
        Ok(follower)
    }

    async fn subscription(
        &self,
        topic: &str,
        group: &str,
        membership: Membership,
    ) -> Result<KafkaSubscription, BusError> {
        if self.inner.shared.is_closed() {
            return Err(BusError::Closed);
        }
        let kafka_topic = self.kafka_topic(topic)?;
        let kafka_group = self
            .inner
            .config
            .kafka_group(group)
            .map_err(|e| BusError::Backend(e.to_string()))?;
        KafkaSubscription::join(
            &self.inner.config,
            Arc::clone(&self.inner.shared),
            kafka_topic,
            kafka_group,
            membership,
        )
        .await
    }

    async fn publish_message(&self, topic: &str, message: Message) -> Result<(), BusError> {
        let shared = &self.inner.shared;
        if shared.is_closed() {
            return Err(BusError::Closed);
        }
        let kafka_topic = self.kafka_topic(topic)?;
        let payload = message
            .encode()
            .map_err(|e| backend("encoding the message", e))?;
        let max_bytes = self.inner.config.max_message_bytes;
        let message = match message {
            Message::Data(data) if payload.len() > max_bytes && data.num_rows() > 1 => {
                // Rows in proportion to bytes, with a tenth to spare for the per-message
                // header and schema; a part still too large splits again.
                let parts = payload.len().div_ceil(max_bytes * 9 / 10);
                let rows_per_part = data.num_rows().div_ceil(parts);
                for part in data.split(rows_per_part) {
                    Box::pin(self.publish_message(topic, Message::Data(part))).await?;
                }
                return Ok(());
            }
            message => message,
        };
        let key = message.key();
        loop {
            let notified = shared.progress.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before trying, so a delivery report (room) or a close in between
            // still wakes this publisher.
            notified.as_mut().enable();
            if shared.is_closed() {
                return Err(BusError::Closed);
            }
            // Counted before sending: the report may arrive before `send` returns.
            shared.in_flight.fetch_add(1, Ordering::AcqRel);
            let record = BaseRecord::to(&kafka_topic).key(key).payload(&payload);
            let error = match self.inner.producer.send(record) {
                Ok(()) => return Ok(()),
                Err((error, _record)) => error,
            };
            shared.in_flight.fetch_sub(1, Ordering::AcqRel);
            match error {
                KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull) => notified.await,
                error => return Err(backend(&format!("publishing to {kafka_topic}"), error)),
            }
        }
    }

    async fn flush_producer(&self) -> Result<(), BusError> {
        let shared = &self.inner.shared;
        shared.producer_idle().await;
        let failures = std::mem::take(&mut *lock(&shared.failures));
        match failures.first {
            None => Ok(()),
            Some(first) => Err(BusError::Backend(format!(
                "{} message(s) could not be delivered; first: {first}",
                failures.count
            ))),
        }
    }
}

impl fmt::Debug for KafkaBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaBus")
            .field("brokers", &self.inner.config.bootstrap_servers())
            .field("topic_prefix", &self.inner.config.topic_prefix)
            .field("group_prefix", &self.inner.config.group_prefix)
            .field("closed", &self.inner.shared.is_closed())
            .field(
                "in_flight",
                &self.inner.shared.in_flight.load(Ordering::Relaxed),
            )
            .finish_non_exhaustive()
    }
}

impl Bus for KafkaBus {
    fn publish<'a>(
        &'a self,
        topic: &'a str,
        message: Message,
    ) -> BusFuture<'a, Result<(), BusError>> {
        Box::pin(self.publish_message(topic, message))
    }

    fn flush(&self) -> BusFuture<'_, Result<(), BusError>> {
        Box::pin(self.flush_producer())
    }

    fn subscribe<'a>(
        &'a self,
        topic: &'a str,
        group: &'a str,
    ) -> BusFuture<'a, Result<Box<dyn Subscription>, BusError>> {
        Box::pin(async move {
            let subscription = self.join(topic, group).await?;
            Ok(Box::new(subscription) as Box<dyn Subscription>)
        })
    }

    fn pressure(&self, _topic: &str) -> Pressure {
        // librdkafka has one queue for all topics of the producer. Counted here rather than
        // with `rd_kafka_outq_len`, which also counts protocol requests.
        Pressure {
            pending: self.inner.shared.in_flight.load(Ordering::Acquire),
            capacity: u64::from(self.inner.config.producer_queue_messages),
        }
    }

    fn close(&self) {
        self.inner.shared.closed.send_replace(true);
        self.inner.shared.progress.notify_waiters();
    }
}
