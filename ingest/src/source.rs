//! The `QuoteSource` trait: what the ingest loop pulls market data from.
//!
//! A source yields [`SourceEvent`]s: the bus [`Message`]s that belong to one instant of
//! market time (option-quote batches keyed by underlying, underlying ticks, daily bars and
//! reference data), in the order they should be published. The ingest loop is the same
//! whatever the source:
//!
//! ```ignore
//! while let Some(event) = source.next_event().await? {
//!     for message in event.messages {
//!         bus.publish(message.topic(), message).await?;
//!     }
//! }
//! ```
//!
//! Implementations:
//! - [`SessionSimulator`](crate::simulator::session::SessionSimulator): one simulated session
//!   in virtual time, as fast as the CPU allows (no clock, no waiting); ends after the close.
//! - [`LiveSimulator`](crate::simulator::live::LiveSimulator): the simulator on a
//!   [`Clock`](optics_compute::time::Clock) — the wall clock, an accelerated or past-date
//!   clock — waiting for each interval, rolling from session to session; idle (and saying when
//!   the next session opens) outside market hours.
//! - A vendor's live adapter implements the same trait: it waits on its socket instead of a
//!   clock and maps the vendor's records to the same messages.
//!
//! # Why a boxed future
//! As for the bus ([`optics_schemas::Bus`]): the source is chosen at run time
//! (`Box<dyn QuoteSource>`), and an `async fn` in a trait is not object-safe. One allocation
//! per event (a batch of thousands of rows) costs nothing measurable.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{Dataset, Message, MessageKind, SchemaError};

use crate::simulator::SimulatorError;

/// The future a source method returns: boxed so the trait is object-safe, `Send` so it can be
/// awaited in a spawned task.
pub type SourceFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The messages of one instant of market time.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceEvent {
    /// The market instant the messages belong to (every quote's `quote_time`).
    pub at: DateTime<Utc>,
    /// The trade date (New York) of the session the instant belongs to.
    pub trade_date: NaiveDate,
    /// True for the last event of a session (the closing snapshot, with the day's bars).
    pub session_close: bool,
    /// The messages, in publication order.
    pub messages: Vec<Message>,
}

impl SourceEvent {
    /// The messages of one dataset.
    pub fn messages_of(&self, dataset: Dataset) -> impl Iterator<Item = &Message> {
        self.messages
            .iter()
            .filter(move |m| m.kind() == MessageKind::Data(dataset))
    }

    /// Rows of `dataset` across the event's messages.
    pub fn row_count(&self, dataset: Dataset) -> usize {
        self.messages
            .iter()
            .map(|m| match m {
                Message::Data(batch) if batch.dataset() == dataset => batch.num_rows(),
                _ => 0,
            })
            .sum()
    }

    /// Option quotes in the event.
    pub fn quote_count(&self) -> usize {
        self.row_count(Dataset::OptionQuotes)
    }
}

/// Why a source could not produce its next event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SourceError {
    /// The simulator failed.
    #[error(transparent)]
    Simulator(#[from] SimulatorError),
    /// A record from the source failed validation.
    #[error("invalid data from the source: {0}")]
    Schema(String),
    /// The source's transport failed (a vendor connection).
    #[error("{source_name}: {reason}")]
    Backend {
        /// Which source.
        source_name: String,
        /// What went wrong.
        reason: String,
    },
}

impl From<SchemaError> for SourceError {
    fn from(error: SchemaError) -> Self {
        Self::Schema(error.to_string())
    }
}

/// Which of a source's option-quote batches the quote archive keeps (see
/// [`crate::pump`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchivePolicy {
    /// Every event's quotes: each batch of a vendor feed is news that exists nowhere else.
    EveryEvent,
    /// A sample: the event of each session close and one per archive interval of market
    /// time. For a source whose every event re-quotes the whole universe (the simulator: a
    /// few MB a second) and can regenerate any instant from its seed.
    Sampled,
}

/// A source of market data: see the module documentation.
pub trait QuoteSource: Send + fmt::Debug {
    /// A short name for logs and errors (`simulator`, `simulator-live`, a vendor's name).
    fn name(&self) -> &str;

    /// Which of the source's quote batches are archived; every one unless the source says
    /// otherwise.
    fn archive_policy(&self) -> ArchivePolicy {
        ArchivePolicy::EveryEvent
    }

    /// The next event: waits (if the source is live) until its instant has come. `Ok(None)`
    /// when the source has nothing more to give (a finished replay); a live source never ends
    /// by itself.
    ///
    /// # Errors
    /// A [`SourceError`] when the event cannot be produced; the source may be polled again.
    fn next_event(&mut self) -> SourceFuture<'_, Result<Option<SourceEvent>, SourceError>>;
}
