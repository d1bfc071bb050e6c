//! Bus messages: what ingest publishes and compute consumes, embedded or over Kafka.
//!
//! # Wire format (version 1)
//!
//! ```text
//! offset  size  field
//! 0       4     magic  b"OPTB"
//! 4       2     format version, u16 little-endian (1)
//! 6       1     kind: the dataset code, or 32 for a snapshot event (see MessageKind::code)
//! 7       1     flags, 0 (reserved: e.g. body compression in a later version)
//! 8       2     key length k, u16 little-endian
//! 10      k     key, UTF-8: the underlying symbol, or "*" for market-wide reference data
//! 10+k    4     body length n, u32 little-endian
//! 14+k    n     body: one Arrow IPC stream (schema + one record batch) for row data,
//!               UTF-8 JSON for a snapshot event
//! ```
//!
//! The magic and the version sit at fixed offsets forever, so any later consumer can tell an
//! optics message and its version before reading anything else; a version this build does not
//! know is [`SchemaError::UnsupportedVersion`], not a misparse. The key doubles as the Kafka
//! message key, so one partition holds every message of an underlying, in order.
//!
//! # Why Arrow IPC for row data
//!
//! - **Zero-copy into compute:** the decoded batch's columns are the Arrow arrays the compute
//!   kernels take (`&[f64]` slices over the body buffer); no per-row parsing or allocation.
//! - **The schema travels with the data:** a consumer reads columns by name, so a producer may
//!   add columns (the consumer drops what it does not know) or a consumer may read an older
//!   producer's batch that lacks a nullable column (it becomes nulls), without a coordinated
//!   deploy.
//! - **Compact and fast:** fixed-width columns are raw little-endian values, strings one
//!   offsets buffer plus one bytes buffer; encoding and decoding are memcpy-speed (see the
//!   `bus_codec` benchmark), and the same arrays go into the Parquet quote archive unchanged.
//!
//! The snapshot event is a handful of fields that operators read in Kafka tooling, so it is
//! JSON; unknown JSON fields are ignored, for the same forward compatibility.

use std::fmt;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use arrow_array::{Array, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::reader::StreamDecoder;
use arrow_ipc::writer::StreamWriter;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::error::SchemaError;
use crate::table::{Dataset, Record, check_symbol};

/// First four bytes of every message.
pub const MAGIC: [u8; 4] = *b"OPTB";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;
/// The key of market-wide messages: economic calendar updates, and reference updates that span
/// the whole universe (a company-map refresh).
pub const MARKET_WIDE_KEY: &str = "*";
/// Bytes before the key: magic, version, kind, flags, key length.
const PREFIX_LEN: usize = 10;
/// Code of the snapshot event kind.
const SNAPSHOT_CODE: u8 = 32;

/// Topic names (Kafka topics; channel names of the embedded bus).
pub mod topics {
    /// Option quote batches, keyed by underlying.
    pub const OPTION_QUOTES: &str = "optics.option_quotes";
    /// Underlying tick batches, keyed by symbol.
    pub const UNDERLYING_TICKS: &str = "optics.underlying_ticks";
    /// Daily bar batches, keyed by symbol.
    pub const DAILY_BARS: &str = "optics.daily_bars";
    /// Every reference dataset, keyed by symbol or `*`.
    pub const REFERENCE: &str = "optics.reference";
    /// Snapshot events, keyed by underlying.
    pub const SNAPSHOTS: &str = "optics.snapshots";
}

/// Names of the datasets compute publishes as snapshots (the `dataset` of a [`SnapshotEvent`]).
pub mod snapshot_datasets {
    /// Option chains.
    pub const CHAIN: &str = "chain";
    /// Dealer exposures.
    pub const EXPOSURES: &str = "exposures";
    /// Dealer exposure summaries (per expiration and aggregate: totals, flips, levels).
    pub const EXPOSURE_SUMMARY: &str = "exposure_summary";
    /// Flow (volume, premium, open interest per contract).
    pub const FLOW: &str = "flow";
    /// Flow aggregates (volume and premium per strike across expirations and per expiration).
    pub const FLOW_AGGREGATES: &str = "flow_aggregates";
    /// Daily volatility statistics.
    pub const VOL_DAILY: &str = "vol_daily";
    /// The at-the-money term structure of each session close (per expiration).
    pub const VOL_TERM: &str = "vol_term";
    /// Reference data.
    pub const REFERENCE: &str = "reference";
    /// The quote archive.
    pub const QUOTES: &str = "quotes";
}

/// What a message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// A record batch of a dataset.
    Data(Dataset),
    /// A [`SnapshotEvent`].
    Snapshot,
}

impl MessageKind {
    /// The header byte. Market data 1–3, reference data 16–20, events 32+.
    pub const fn code(self) -> u8 {
        match self {
            Self::Data(Dataset::OptionQuotes) => 1,
            Self::Data(Dataset::UnderlyingTicks) => 2,
            Self::Data(Dataset::DailyBars) => 3,
            Self::Data(Dataset::Earnings) => 16,
            Self::Data(Dataset::Dividends) => 17,
            Self::Data(Dataset::BorrowRates) => 18,
            Self::Data(Dataset::EconomicCalendar) => 19,
            Self::Data(Dataset::Companies) => 20,
            Self::Snapshot => SNAPSHOT_CODE,
        }
    }

    /// The kind whose header byte is `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        if code == SNAPSHOT_CODE {
            return Some(Self::Snapshot);
        }
        Dataset::ALL
            .into_iter()
            .map(Self::Data)
            .find(|k| k.code() == code)
    }

    /// The topic messages of this kind go to.
    pub fn topic(self) -> &'static str {
        match self {
            Self::Data(Dataset::OptionQuotes) => topics::OPTION_QUOTES,
            Self::Data(Dataset::UnderlyingTicks) => topics::UNDERLYING_TICKS,
            Self::Data(Dataset::DailyBars) => topics::DAILY_BARS,
            Self::Data(_) => topics::REFERENCE,
            Self::Snapshot => topics::SNAPSHOTS,
        }
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Data(d) => f.write_str(d.name()),
            Self::Snapshot => f.write_str("snapshot"),
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// A validated record batch of one dataset with its bus key. Every row's symbol equals the key
/// (for reference data the key may instead be [`MARKET_WIDE_KEY`]; the economic calendar is
/// always market-wide), and the batch is in the dataset's canonical schema.
#[derive(Debug, Clone, PartialEq)]
pub struct DataBatch {
    dataset: Dataset,
    key: String,
    batch: RecordBatch,
}

impl DataBatch {
    /// Validates `batch` against `dataset` (see [`Dataset::validate_batch`]) and the key.
    pub fn try_new(
        dataset: Dataset,
        key: impl Into<String>,
        batch: &RecordBatch,
    ) -> Result<Self, SchemaError> {
        let batch = dataset.validate_batch(batch)?;
        Self::keyed(dataset, key.into(), batch)
    }

    /// Validates typed rows into a batch with the key.
    pub fn from_rows<R: Record>(key: impl Into<String>, rows: &[R]) -> Result<Self, SchemaError> {
        Self::keyed(R::DATASET, key.into(), R::to_batch(rows)?)
    }

    fn keyed(dataset: Dataset, key: String, batch: RecordBatch) -> Result<Self, SchemaError> {
        let invalid = |reason: String| SchemaError::InvalidKey {
            dataset,
            key: key.clone(),
            reason,
        };
        let market_wide = key == MARKET_WIDE_KEY;
        match dataset.key_column() {
            None if !market_wide => {
                return Err(invalid(format!(
                    "{dataset} is market-wide: its key must be `{MARKET_WIDE_KEY}`"
                )));
            }
            None => {}
            Some(_) if market_wide && dataset.is_reference() => {}
            Some(_) if market_wide => {
                return Err(invalid(format!(
                    "{dataset} messages are keyed by one underlying, not `{MARKET_WIDE_KEY}`"
                )));
            }
            Some(column) => {
                check_symbol(&key).map_err(invalid)?;
                let symbols = crate::table::Columns::new(dataset, &batch).str(column)?;
                if let Some(row) = (0..symbols.len()).find(|&i| symbols.value(i) != key) {
                    return Err(invalid(format!(
                        "row {row} has {column} `{}`",
                        symbols.value(row)
                    )));
                }
            }
        }
        Ok(Self {
            dataset,
            key,
            batch,
        })
    }

    /// The dataset.
    pub fn dataset(&self) -> Dataset {
        self.dataset
    }

    /// The bus key: the underlying symbol, or [`MARKET_WIDE_KEY`].
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The batch, in the dataset's canonical schema.
    pub fn batch(&self) -> &RecordBatch {
        &self.batch
    }

    /// The batch, by value.
    pub fn into_batch(self) -> RecordBatch {
        self.batch
    }

    /// Rows in the batch.
    pub fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The batch as consecutive batches of at most `max_rows` rows each (at least one row),
    /// in order, with the same dataset and key: for a transport that bounds a message's size.
    /// The slices share the batch's buffers.
    pub fn split(self, max_rows: usize) -> Vec<Self> {
        let rows = self.batch.num_rows();
        let max_rows = max_rows.max(1);
        if rows <= max_rows {
            return vec![self];
        }
        (0..rows)
            .step_by(max_rows)
            .map(|offset| Self {
                dataset: self.dataset,
                key: self.key.clone(),
                batch: self.batch.slice(offset, max_rows.min(rows - offset)),
            })
            .collect()
    }

    /// The typed rows; `R` must be the row type of this batch's dataset.
    pub fn rows<R: Record>(&self) -> Result<Vec<R>, SchemaError> {
        if R::DATASET != self.dataset {
            return Err(SchemaError::DatasetMismatch {
                expected: R::DATASET,
                found: self.dataset,
            });
        }
        R::read(&self.batch)
    }
}

/// A snapshot became visible in the store: what compute publishes after writing (and renaming
/// or recording in the manifest) a dataset's files, so API replicas reload their cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotEvent {
    /// Snapshot dataset name, one of [`snapshot_datasets`] (lower-case letters, digits, `_`).
    pub dataset: String,
    /// The trade date the snapshot belongs to.
    pub trade_date: NaiveDate,
    /// Underlying symbol, or [`MARKET_WIDE_KEY`]; the bus key.
    pub underlying: String,
    /// Store path of the snapshot (a file or a partition directory), relative to the store root.
    pub path: String,
    /// Monotonic version of this (dataset, trade date, underlying) snapshot.
    pub version: u64,
    /// Rows in the snapshot.
    pub row_count: u64,
    /// When it became visible (microsecond precision on the wire).
    pub published_at: DateTime<Utc>,
}

impl SnapshotEvent {
    /// Checks every field's rule.
    pub fn validate(&self) -> Result<(), SchemaError> {
        let invalid = |field, reason: &str| SchemaError::InvalidSnapshotEvent {
            field,
            reason: reason.to_owned(),
        };
        let ds = &self.dataset;
        if ds.is_empty()
            || !ds
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(invalid(
                "dataset",
                "must be non-empty lower-case ASCII letters, digits and `_`",
            ));
        }
        if self.underlying != MARKET_WIDE_KEY {
            check_symbol(&self.underlying).map_err(|r| invalid("underlying", &r))?;
        }
        if self.path.is_empty() || self.path.chars().any(char::is_control) {
            return Err(invalid(
                "path",
                "must be non-empty without control characters",
            ));
        }
        Ok(())
    }
}

/// The JSON form of [`SnapshotEvent`]: ISO date, RFC 3339 UTC timestamp with microseconds.
#[derive(Serialize, Deserialize)]
struct SnapshotJson {
    dataset: String,
    trade_date: String,
    underlying: String,
    path: String,
    version: u64,
    row_count: u64,
    published_at: String,
}

// ---------------------------------------------------------------------------------------------

/// A bus message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Row data: option quotes, underlying ticks, bars or a reference dataset.
    Data(DataBatch),
    /// A snapshot became visible.
    Snapshot(SnapshotEvent),
}

impl Message {
    /// What the message carries.
    pub fn kind(&self) -> MessageKind {
        match self {
            Self::Data(d) => MessageKind::Data(d.dataset),
            Self::Snapshot(_) => MessageKind::Snapshot,
        }
    }

    /// The bus (Kafka) key: the underlying symbol, or [`MARKET_WIDE_KEY`].
    pub fn key(&self) -> &str {
        match self {
            Self::Data(d) => &d.key,
            Self::Snapshot(s) => &s.underlying,
        }
    }

    /// The topic the message goes to.
    pub fn topic(&self) -> &'static str {
        self.kind().topic()
    }

    /// See [`encode`].
    pub fn encode(&self) -> Result<Vec<u8>, SchemaError> {
        encode(self)
    }

    /// See [`decode`].
    pub fn decode(bytes: &[u8]) -> Result<Self, SchemaError> {
        decode(bytes)
    }
}

/// Encodes a message in the current format version. Fails only on a snapshot event that breaks
/// its rules (data batches are valid by construction) or an Arrow writer error.
pub fn encode(message: &Message) -> Result<Vec<u8>, SchemaError> {
    let kind = message.kind();
    let key = message.key();
    let key_len = u16::try_from(key.len()).map_err(|_| SchemaError::InvalidPayload {
        kind,
        reason: "key longer than 65535 bytes".to_owned(),
    })?;
    let capacity = match message {
        Message::Data(d) => d.batch.get_array_memory_size() + 1024,
        Message::Snapshot(_) => 256,
    };
    let mut out = Vec::with_capacity(capacity);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(kind.code());
    out.push(0);
    out.extend_from_slice(&key_len.to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    let body_len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let body_start = out.len();
    let mut out = match message {
        Message::Data(d) => {
            let mut writer = StreamWriter::try_new(out, d.batch.schema_ref())?;
            writer.write(&d.batch)?;
            writer.finish()?;
            writer.into_inner()?
        }
        Message::Snapshot(event) => {
            event.validate()?;
            let json = SnapshotJson {
                dataset: event.dataset.clone(),
                trade_date: event.trade_date.to_string(),
                underlying: event.underlying.clone(),
                path: event.path.clone(),
                version: event.version,
                row_count: event.row_count,
                published_at: event
                    .published_at
                    .to_rfc3339_opts(SecondsFormat::Micros, true),
            };
            serde_json::to_writer(&mut out, &json).map_err(|e| SchemaError::InvalidPayload {
                kind,
                reason: e.to_string(),
            })?;
            out.flush().ok();
            out
        }
    };
    let body_len =
        u32::try_from(out.len() - body_start).map_err(|_| SchemaError::InvalidPayload {
            kind,
            reason: "body longer than 4 GiB".to_owned(),
        })?;
    out[body_len_at..body_start].copy_from_slice(&body_len.to_le_bytes());
    Ok(out)
}

/// The header of a message, read without decoding the body (for routing and filtering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// Format version.
    pub version: u16,
    /// What the message carries.
    pub kind: MessageKind,
    /// The bus key.
    pub key: &'a str,
}

/// A cursor over the message bytes that reports truncation instead of panicking.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], SchemaError> {
        if self.bytes.len() < n {
            return Err(SchemaError::Truncated {
                field,
                needed: n,
                available: self.bytes.len(),
            });
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], SchemaError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }
}

/// Reads and checks the header; returns it and the body.
fn split(bytes: &[u8]) -> Result<(Header<'_>, &[u8]), SchemaError> {
    // A prefix of the magic is a truncated message; anything else is not ours.
    let n = bytes.len().min(MAGIC.len());
    if bytes[..n] != MAGIC[..n] {
        return Err(SchemaError::BadMagic);
    }
    let mut r = Reader { bytes };
    r.take(MAGIC.len(), "magic")?;
    let version = u16::from_le_bytes(r.array("format version")?);
    if version != FORMAT_VERSION {
        return Err(SchemaError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let [code] = r.array("kind")?;
    let kind = MessageKind::from_code(code).ok_or(SchemaError::UnknownKind(code))?;
    let [flags] = r.array("flags")?;
    if flags != 0 {
        return Err(SchemaError::UnsupportedFlags(flags));
    }
    let key_len = u16::from_le_bytes(r.array("key length")?);
    let key = std::str::from_utf8(r.take(usize::from(key_len), "key")?).map_err(|_| {
        SchemaError::InvalidPayload {
            kind,
            reason: "the key is not UTF-8".to_owned(),
        }
    })?;
    let body_len = u32::from_le_bytes(r.array("body length")?);
    let body = r.take(body_len as usize, "body")?;
    if !r.bytes.is_empty() {
        return Err(SchemaError::TrailingBytes(r.bytes.len()));
    }
    debug_assert!(PREFIX_LEN + key.len() + 4 + body.len() == bytes.len());
    Ok((Header { version, kind, key }, body))
}

/// Reads the header of a message without decoding its body.
pub fn decode_header(bytes: &[u8]) -> Result<Header<'_>, SchemaError> {
    split(bytes).map(|(header, _)| header)
}

/// Decodes and validates a message. Never panics: truncated, garbage or hostile bytes give an
/// error. Row data is validated exactly like [`DataBatch::try_new`]; columns unknown to this
/// build are dropped and missing nullable columns read as nulls.
pub fn decode(bytes: &[u8]) -> Result<Message, SchemaError> {
    let (header, body) = split(bytes)?;
    match header.kind {
        MessageKind::Data(dataset) => {
            let batch = read_ipc(body).map_err(|reason| SchemaError::InvalidPayload {
                kind: header.kind,
                reason,
            })?;
            Ok(Message::Data(DataBatch::try_new(
                dataset, header.key, &batch,
            )?))
        }
        MessageKind::Snapshot => {
            let invalid = |reason: String| SchemaError::InvalidPayload {
                kind: header.kind,
                reason,
            };
            let json: SnapshotJson =
                serde_json::from_slice(body).map_err(|e| invalid(e.to_string()))?;
            let trade_date = json
                .trade_date
                .parse::<NaiveDate>()
                .map_err(|e| invalid(format!("trade_date: {e}")))?;
            let published_at = DateTime::parse_from_rfc3339(&json.published_at)
                .map_err(|e| invalid(format!("published_at: {e}")))?
                .with_timezone(&Utc);
            let event = SnapshotEvent {
                dataset: json.dataset,
                trade_date,
                underlying: json.underlying,
                path: json.path,
                version: json.version,
                row_count: json.row_count,
                published_at,
            };
            event.validate()?;
            if event.underlying != header.key {
                return Err(invalid(format!(
                    "the key `{}` is not the event's underlying `{}`",
                    header.key, event.underlying
                )));
            }
            Ok(Message::Snapshot(event))
        }
    }
}

/// Reads an Arrow IPC stream holding exactly one schema and at most one record batch.
///
/// `StreamDecoder` over one in-memory buffer slices the body without copying and never
/// allocates more than the input holds, whatever lengths the stream claims. arrow-ipc 59 still
/// panics on some malformed but well-formed-flatbuffer schemas (`unwrap`s and `panic!`s in its
/// schema conversion); a consumer must not die on one poisoned message, so such a panic becomes
/// an error here.
fn read_ipc(body: &[u8]) -> Result<RecordBatch, String> {
    let decode = || -> Result<RecordBatch, arrow_schema::ArrowError> {
        let mut buffer = Buffer::from(body);
        let mut decoder = StreamDecoder::new();
        let mut batch = None;
        while !buffer.is_empty() {
            match decoder.decode(&mut buffer)? {
                Some(b) if batch.is_none() => batch = Some(b),
                Some(_) => {
                    return Err(arrow_schema::ArrowError::IpcError(
                        "more than one record batch".to_owned(),
                    ));
                }
                None => {}
            }
        }
        decoder.finish()?;
        match (batch, decoder.schema()) {
            (Some(b), _) => Ok(b),
            (None, Some(schema)) => Ok(RecordBatch::new_empty(schema)),
            (None, None) => Err(arrow_schema::ArrowError::IpcError(
                "no schema in the stream".to_owned(),
            )),
        }
    };
    match catch_unwind(AssertUnwindSafe(decode)) {
        Ok(result) => result.map_err(|e| format!("Arrow IPC: {e}")),
        Err(_) => Err("Arrow IPC: malformed stream (the reader panicked)".to_owned()),
    }
}
