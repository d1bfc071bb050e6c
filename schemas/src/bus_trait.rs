//! The `Bus` trait: how ingest hands messages to compute, embedded or over Kafka.
//!
//! Compute workers see only these traits and the [`Message`] types, so they consume the bus
//! without knowing whether it is the in-process bus of `optics run` or a Kafka cluster.
//!
//! # Model (Kafka's, so the Kafka implementation is a thin mapping)
//!
//! - A **topic** (see [`topics`](crate::bus::topics)) is split into partitions; a message goes
//!   to the partition of its **key** ([`Message::key`], the underlying symbol), so every
//!   message of one underlying is in one partition, in publish order. A publisher that awaits
//!   each [`Bus::publish`] therefore has its messages of a key delivered in that order.
//! - A **consumer group** (a group id) shares a topic's partitions among its members: each
//!   message is delivered to one member of the group, and one member sees all of an
//!   underlying. Two groups each see every message.
//! - A consumer receives messages in batches ([`Subscription::next_batch`]) and **commits**
//!   ([`Subscription::commit`]) once it has durably handled them. A member that joins the
//!   group later (a restart, or a rebalance moving a partition to it) starts after the last
//!   committed message: what was delivered but not committed is delivered again (at least
//!   once; a consumer that writes idempotently — snapshots keyed by version — gets effectively
//!   once).
//! - **Back-pressure:** a publisher waits while the bus cannot take more
//!   ([`Bus::publish`] does not resolve); nothing is dropped and no buffer grows without
//!   bound. [`Bus::pressure`] reports how full the bus is, for metrics and for sources that
//!   want to know they are being held back.
//! - **Closing** ([`Bus::close`]) stops accepting messages; consumers still receive what was
//!   accepted before, then their [`Subscription::next_batch`] answers `None`.
//!
//! # Why boxed futures and not `async fn` or the `async-trait` crate
//!
//! The bus is passed around as `Arc<dyn Bus>` (chosen at run time: `--bus kafka://…`), and an
//! `async fn` in a trait is not object-safe. The `async-trait` crate would make the same
//! `Pin<Box<dyn Future + Send>>` behind a procedural macro; writing the [`BusFuture`] alias by
//! hand costs nothing at run time (one allocation per call, per *batch* of rows), keeps the
//! `Send` bound and the borrow of `self` visible in the signatures and in rustdoc, and spares
//! every crate a proc-macro dependency. Methods that never wait ([`Bus::pressure`],
//! [`Bus::close`]) are plain functions.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

use crate::bus::Message;

/// The future a bus method returns: boxed so the traits are object-safe, `Send` so it can be
/// awaited in a spawned task, and borrowing the bus (or subscription) for `'a`.
pub type BusFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A message bus: publish keyed messages to topics, subscribe consumer groups.
///
/// Implementations: the embedded bus (`optics_ingest::bus::EmbeddedBus`, bounded in-process
/// log) and Kafka. Use it as `Arc<dyn Bus>`.
pub trait Bus: Send + Sync + fmt::Debug {
    /// Publishes `message` to `topic` (normally [`Message::topic`]) in the partition of its key.
    ///
    /// Resolves once the bus has accepted the message in order: after it, a later publish of
    /// the same key is delivered after this one. Waits while the topic is full
    /// (back-pressure). Accepted is not yet durable on Kafka; see [`Bus::flush`].
    ///
    /// # Errors
    /// [`BusError::Closed`] after [`Bus::close`] (also for a publisher waiting when the bus
    /// closes); [`BusError::Backend`] when the transport fails.
    fn publish<'a>(
        &'a self,
        topic: &'a str,
        message: Message,
    ) -> BusFuture<'a, Result<(), BusError>>;

    /// Resolves once every message accepted so far is durable in the bus (Kafka: acknowledged
    /// by the brokers). Immediate for the embedded bus, whose log is the process's memory.
    ///
    /// # Errors
    /// [`BusError::Backend`] if some message could not be delivered.
    fn flush(&self) -> BusFuture<'_, Result<(), BusError>>;

    /// Joins consumer group `group` on `topic`. The subscription receives its share of the
    /// topic's partitions, starting after the group's last committed message of each (or at the
    /// oldest message the bus still holds, for a group new to the topic). Dropping the
    /// subscription leaves the group; its partitions move to the remaining members.
    ///
    /// # Errors
    /// [`BusError::Closed`] after [`Bus::close`]; [`BusError::Backend`] when the transport
    /// fails.
    fn subscribe<'a>(
        &'a self,
        topic: &'a str,
        group: &'a str,
    ) -> BusFuture<'a, Result<Box<dyn Subscription>, BusError>>;

    /// How full `topic` is: messages held back against its capacity. `pending == capacity`
    /// means the next publish waits.
    fn pressure(&self, topic: &str) -> Pressure;

    /// Stops accepting messages: later and waiting publishes fail with [`BusError::Closed`].
    /// Consumers receive everything accepted before, then `None`. Idempotent.
    fn close(&self);
}

/// One member of a consumer group on one topic.
pub trait Subscription: Send + fmt::Debug {
    /// Waits until at least one message is available and returns up to `max_messages` of
    /// those available (each partition's in order). `None` once the bus is closed and this
    /// member has received every message of its partitions.
    ///
    /// **Cancel-safe:** dropping the future before it resolves (a `select!` that took another
    /// branch, a timeout) loses nothing; the messages it would have returned come with the
    /// next call. Workers rely on this to wait for messages and for their cycle tick at once.
    ///
    /// # Errors
    /// [`BusError::Backend`] when the transport fails.
    fn next_batch(
        &mut self,
        max_messages: usize,
    ) -> BusFuture<'_, Result<Option<Vec<Delivery>>, BusError>>;

    /// Commits every message this member has received so far: call it after the messages are
    /// durably handled (written, published). A member that joins the group later starts after
    /// the committed ones. Messages of a partition the group moved to another member since
    /// they were received are not committed (that member receives them again).
    ///
    /// # Errors
    /// [`BusError::Backend`] when the transport fails.
    fn commit(&mut self) -> BusFuture<'_, Result<(), BusError>>;

    /// The partitions the group has taken from this member since the last call, ascending
    /// (a rebalance, a member joining). Their messages now go to another member, which starts
    /// after the group's last commit: whatever this member built from them and has not
    /// published is stale, and publishing it later would overwrite the new owner's newer
    /// work.
    ///
    /// The assignment changes only while the subscription is polled ([`next_batch`]
    /// (Self::next_batch), [`commit`](Self::commit)), and a batch holds only messages of the
    /// assignment current when it is returned. So a consumer that calls this right after
    /// `next_batch` resolves, and drops the state of the partitions it names *before*
    /// applying the batch, never drops messages of a partition assigned to it again; one that
    /// also calls it before publishing never publishes state of a partition it has lost.
    fn take_revoked(&mut self) -> Vec<u32>;
}

/// A message as a consumer receives it, with its position in the topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The partition of the message's key.
    pub partition: u32,
    /// The message's offset within the partition: increasing, never reused (consecutive from 0
    /// in the embedded bus; Kafka may leave gaps).
    pub offset: u64,
    /// The message.
    pub message: Message,
    /// When the bus accepted the message, on the publishing side's wall clock (the embedded
    /// bus: the publish; Kafka: the record's timestamp); `None` where the bus does not say.
    /// Latency metrics measure from it; nothing computed depends on it.
    pub entered_bus: Option<SystemTime>,
}

/// How full a topic is (see [`Bus::pressure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pressure {
    /// Messages the bus holds that block new ones: in the embedded bus, those some consumer
    /// group has not committed yet; on Kafka, those in the producer's queue (all topics).
    pub pending: u64,
    /// How many it holds before a publish waits.
    pub capacity: u64,
}

impl Pressure {
    /// `true` when the next publish waits.
    pub fn is_full(&self) -> bool {
        self.pending >= self.capacity
    }

    /// `pending / capacity`, 0 to 1.
    pub fn fill_ratio(&self) -> f64 {
        if self.capacity == 0 {
            1.0
        } else {
            (self.pending as f64 / self.capacity as f64).min(1.0)
        }
    }
}

/// What can go wrong on the bus. Implementations map their transport errors to
/// [`BusError::Backend`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BusError {
    /// The bus was closed.
    #[error("the bus is closed")]
    Closed,
    /// The transport failed (Kafka client error, …).
    #[error("bus backend: {0}")]
    Backend(String),
}
