//! The pump: pulls a [`QuoteSource`], publishes its messages on the bus and archives its
//! option quotes. `optics run` (embedded bus) and `optics ingest` (Kafka) both run it.
//!
//! # What the archive keeps
//!
//! - A source whose [`archive_policy`](QuoteSource::archive_policy) is
//!   [`ArchivePolicy::EveryEvent`] (every source but the simulator: a vendor feed through
//!   `optics ingest`) has **every event's quotes archived**, before its messages are
//!   published. Vendor files bypass the pump and are archived whole by
//!   [`ArchiveSink`](crate::archive::ArchiveSink).
//! - The simulator ([`ArchivePolicy::Sampled`]) re-quotes its whole universe every interval
//!   (about 5 MB of Parquet a second for the default universe) and can regenerate any instant
//!   from its seed, so the archive keeps **the closing event of every session and the first
//!   event at least [`PumpConfig::archive_every`] of market time after the last one
//!   archived** (default 300 s; 0 keeps closes only). With `archive_every` equal to the
//!   simulator's interval, every event is archived.
//!
//! # When the archive fails
//!
//! A failed write is counted ([`PumpCounters::archive_failures`]) and reported to the caller's
//! observer (the binary prints it); the event is still published. The quotes of an
//! [`ArchivePolicy::EveryEvent`] source are kept and written with the next event's, so a
//! passing failure loses nothing (a write that failed after some of its sessions landed
//! repeats those rows; replay keeps the latest quote of each contract, so repeats are
//! harmless); for a sampled source the next event is due at once, so a passing failure costs
//! one sample. After
//! [`PumpConfig::max_consecutive_archive_failures`] failures in a row the pump stops with
//! [`PumpError::ArchiveFailing`]: a pump that published for hours while its archive stayed
//! unwritable would lose replay and chain-at-time input with nothing but a log line to say so.
//! `optics ingest` then exits non-zero.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, TimeDelta, Utc};
use optics_schemas::memory::HeapBytes;
use optics_schemas::{Bus, BusError, Dataset, Message, MessageKind, OptionQuote};

use crate::archive::{ArchiveError, QuoteArchive};
use crate::source::{ArchivePolicy, QuoteSource, SourceError, SourceEvent};

/// Consecutive failed archive writes after which the pump stops (see the module docs).
pub const DEFAULT_MAX_CONSECUTIVE_ARCHIVE_FAILURES: u32 = 5;

/// Which messages of a source go on the bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Everything (a Kafka deployment: topics exist for every dataset).
    Everything,
    /// What the compute worker consumes: option quotes, the reference data pricing needs
    /// (company map, dividends) and the series it keeps in the store (daily bars, earnings,
    /// borrow fees).
    ComputeInputs,
}

impl Routing {
    /// Whether `message` goes on the bus.
    pub fn keeps(self, message: &Message) -> bool {
        match self {
            Self::Everything => true,
            Self::ComputeInputs => matches!(
                message.kind(),
                MessageKind::Data(
                    Dataset::OptionQuotes
                        | Dataset::Companies
                        | Dataset::Dividends
                        | Dataset::DailyBars
                        | Dataset::Earnings
                        | Dataset::BorrowRates
                )
            ),
        }
    }
}

/// How the pump runs.
#[derive(Debug, Clone, PartialEq)]
pub struct PumpConfig {
    /// Market time between the archived events of an [`ArchivePolicy::Sampled`] source (zero:
    /// session closes only).
    pub archive_every: TimeDelta,
    /// Which messages go on the bus.
    pub routing: Routing,
    /// Failed archive writes in a row after which the pump stops (at least 1).
    pub max_consecutive_archive_failures: u32,
}

impl PumpConfig {
    /// Archiving a sample every `archive_every_secs` seconds of market time, routing with
    /// `routing`, stopping after [`DEFAULT_MAX_CONSECUTIVE_ARCHIVE_FAILURES`].
    pub fn new(archive_every_secs: u64, routing: Routing) -> Self {
        Self {
            archive_every: TimeDelta::seconds(
                i64::try_from(archive_every_secs).unwrap_or(i64::MAX / 1000),
            ),
            routing,
            max_consecutive_archive_failures: DEFAULT_MAX_CONSECUTIVE_ARCHIVE_FAILURES,
        }
    }
}

/// Running totals of a pump, readable from other tasks (a metrics endpoint, a test).
#[derive(Debug, Default)]
pub struct PumpCounters {
    events: AtomicU64,
    archived_events: AtomicU64,
    archived_quotes: AtomicU64,
    archive_failures: AtomicU64,
    source_errors: AtomicU64,
    published_messages: AtomicU64,
    published_quotes: AtomicU64,
    /// Quotes kept for the next write after a failed one, and their bytes.
    unarchived_quotes: AtomicU64,
    unarchived_bytes: AtomicU64,
}

/// What the pump holds between events: `pump_unarchived_quotes` (items: quotes of an
/// every-event source whose archive write failed, kept for the next write; at most
/// [`PumpConfig::max_consecutive_archive_failures`] events' worth, since the pump stops after
/// that many failures in a row).
impl optics_schemas::memory::MemoryHolder for PumpCounters {
    fn held_memory(&self, out: &mut Vec<optics_schemas::memory::HeldMemory>) {
        out.push(optics_schemas::memory::HeldMemory {
            holder: "pump_unarchived_quotes",
            items: self.unarchived_quotes.load(Ordering::Relaxed),
            bytes: self.unarchived_bytes.load(Ordering::Relaxed),
        });
    }
}

/// A reading of [`PumpCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PumpStats {
    /// Events taken from the source.
    pub events: u64,
    /// Events whose quotes were archived.
    pub archived_events: u64,
    /// Quotes archived.
    pub archived_quotes: u64,
    /// Archive writes that failed.
    pub archive_failures: u64,
    /// Events the source failed to produce.
    pub source_errors: u64,
    /// Messages the bus took (on Kafka: queued; the bus's flush confirms their delivery).
    pub published_messages: u64,
    /// Option quotes in those messages.
    pub published_quotes: u64,
}

impl PumpCounters {
    /// The current totals.
    pub fn stats(&self) -> PumpStats {
        PumpStats {
            events: self.events.load(Ordering::Relaxed),
            archived_events: self.archived_events.load(Ordering::Relaxed),
            archived_quotes: self.archived_quotes.load(Ordering::Relaxed),
            archive_failures: self.archive_failures.load(Ordering::Relaxed),
            source_errors: self.source_errors.load(Ordering::Relaxed),
            published_messages: self.published_messages.load(Ordering::Relaxed),
            published_quotes: self.published_quotes.load(Ordering::Relaxed),
        }
    }

    /// Failed archive writes so far.
    pub fn archive_failures(&self) -> u64 {
        self.archive_failures.load(Ordering::Relaxed)
    }
}

/// Something the pump's caller should hear about (the binary prints them).
#[derive(Debug)]
pub enum PumpNotice<'a> {
    /// The quotes of the event at `at` were archived.
    Archived {
        /// The event's instant.
        at: DateTime<Utc>,
    },
    /// Archiving the quotes of the event at `at` failed.
    ArchiveFailed {
        /// The event's instant.
        at: DateTime<Utc>,
        /// Why.
        error: &'a ArchiveError,
        /// Failures in a row, this one included.
        consecutive: u32,
        /// The totals, this failure included.
        stats: PumpStats,
    },
    /// The source could not produce an event (it is polled again).
    SourceFailed {
        /// The source's name.
        source: &'a str,
        /// Why.
        error: &'a SourceError,
    },
}

/// How a pump ended normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PumpEnd {
    /// The source has nothing more (a replay of a past date).
    SourceEnded,
    /// The bus was closed (shutdown).
    BusClosed,
}

/// Why a pump stopped early.
#[derive(Debug, thiserror::Error)]
pub enum PumpError {
    /// The archive failed this many writes in a row (see the module docs).
    #[error("the quote archive failed {consecutive} writes in a row (last: {last}); stopping")]
    ArchiveFailing {
        /// Failures in a row.
        consecutive: u32,
        /// The last failure.
        last: ArchiveError,
    },
    /// Publishing failed for another reason than a closed bus.
    #[error("publishing: {0}")]
    Bus(BusError),
}

/// Pulls `source` until it ends, the bus closes, or the archive keeps failing: archives each
/// due event's option quotes (see the module docs), then publishes its messages per
/// `config.routing`. `counters` are updated as it goes; `notify` hears every failure.
pub async fn pump(
    source: &mut dyn QuoteSource,
    bus: &dyn Bus,
    archive: &QuoteArchive,
    config: &PumpConfig,
    counters: &Arc<PumpCounters>,
    mut notify: impl FnMut(PumpNotice<'_>) + Send,
) -> Result<PumpEnd, PumpError> {
    let policy = source.archive_policy();
    let max_failures = config.max_consecutive_archive_failures.max(1);
    let mut last_archived: Option<DateTime<Utc>> = None;
    let mut consecutive_failures = 0u32;
    // Quotes of an every-event source whose write failed, retried with the next event's.
    let mut unarchived: Vec<OptionQuote> = Vec::new();
    loop {
        let event = match source.next_event().await {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(PumpEnd::SourceEnded),
            Err(error) => {
                counters.source_errors.fetch_add(1, Ordering::Relaxed);
                notify(PumpNotice::SourceFailed {
                    source: source.name(),
                    error: &error,
                });
                continue;
            }
        };
        counters.events.fetch_add(1, Ordering::Relaxed);
        let due = match policy {
            ArchivePolicy::EveryEvent => true,
            ArchivePolicy::Sampled => {
                event.session_close
                    || (config.archive_every > TimeDelta::zero()
                        && last_archived.is_none_or(|t| event.at - t >= config.archive_every))
            }
        };
        if due && (event.quote_count() > 0 || !unarchived.is_empty()) {
            let mut rows = std::mem::take(&mut unarchived);
            let written = match quotes_of(&event, &mut rows) {
                Ok(()) => archive.append(&rows).await.map(|_| rows.len()),
                Err(e) => Err(e),
            };
            match written {
                Ok(quotes) => {
                    counters.unarchived_quotes.store(0, Ordering::Relaxed);
                    counters.unarchived_bytes.store(0, Ordering::Relaxed);
                    last_archived = Some(event.at);
                    consecutive_failures = 0;
                    counters.archived_events.fetch_add(1, Ordering::Relaxed);
                    counters
                        .archived_quotes
                        .fetch_add(quotes as u64, Ordering::Relaxed);
                    notify(PumpNotice::Archived { at: event.at });
                }
                Err(error) => {
                    // A sampled source: `last_archived` stays, so the next event is due at once.
                    if policy == ArchivePolicy::EveryEvent {
                        unarchived = rows;
                    }
                    counters
                        .unarchived_quotes
                        .store(unarchived.len() as u64, Ordering::Relaxed);
                    counters
                        .unarchived_bytes
                        .store(unarchived.heap_bytes() as u64, Ordering::Relaxed);
                    consecutive_failures += 1;
                    counters.archive_failures.fetch_add(1, Ordering::Relaxed);
                    notify(PumpNotice::ArchiveFailed {
                        at: event.at,
                        error: &error,
                        consecutive: consecutive_failures,
                        stats: counters.stats(),
                    });
                    if consecutive_failures >= max_failures {
                        return Err(PumpError::ArchiveFailing {
                            consecutive: consecutive_failures,
                            last: error,
                        });
                    }
                }
            }
        }
        for message in event.messages {
            if config.routing.keeps(&message) {
                let quotes = match &message {
                    Message::Data(batch) if batch.dataset() == Dataset::OptionQuotes => {
                        batch.num_rows() as u64
                    }
                    _ => 0,
                };
                match bus.publish(message.topic(), message).await {
                    Ok(()) => {
                        counters.published_messages.fetch_add(1, Ordering::Relaxed);
                        counters
                            .published_quotes
                            .fetch_add(quotes, Ordering::Relaxed);
                    }
                    Err(BusError::Closed) => return Ok(PumpEnd::BusClosed),
                    Err(error) => return Err(PumpError::Bus(error)),
                }
            }
        }
    }
}

/// Appends the option quotes of `event` to `rows`.
fn quotes_of(event: &SourceEvent, rows: &mut Vec<OptionQuote>) -> Result<(), ArchiveError> {
    rows.reserve(event.quote_count());
    for message in event.messages_of(Dataset::OptionQuotes) {
        if let Message::Data(batch) = message {
            rows.extend(batch.rows::<OptionQuote>()?);
        }
    }
    Ok(())
}
