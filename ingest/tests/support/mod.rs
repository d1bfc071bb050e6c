//! Shared by the bus, pump and simulator tests: small bus messages, the quotes of a source
//! event, and a sample correlation.

#![allow(dead_code)]

use chrono::{DateTime, NaiveDate};
use optics_ingest::source::SourceEvent;
use optics_schemas::{Dataset, Delivery, Message, OptionQuote, SnapshotEvent};

/// A small message whose `version` carries a per-key sequence number, published at
/// `published_micros` (microseconds since the epoch).
pub fn snapshot(key: &str, seq: u64, published_micros: i64) -> Message {
    Message::Snapshot(SnapshotEvent {
        dataset: "chain".to_owned(),
        trade_date: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
        underlying: key.to_owned(),
        path: format!("chain/{key}/{seq}"),
        version: seq,
        row_count: 0,
        published_at: DateTime::from_timestamp_micros(published_micros).unwrap(),
    })
}

/// The key and sequence number of a [`snapshot`] delivery.
pub fn key_seq(d: &Delivery) -> (String, u64) {
    match &d.message {
        Message::Snapshot(e) => (e.underlying.clone(), e.version),
        Message::Data(_) => panic!("unexpected data message"),
    }
}

/// The option quotes `event` carries.
pub fn quotes(event: &SourceEvent) -> Vec<OptionQuote> {
    event
        .messages_of(Dataset::OptionQuotes)
        .flat_map(|m| match m {
            Message::Data(batch) => batch.rows::<OptionQuote>().unwrap(),
            Message::Snapshot(_) => Vec::new(),
        })
        .collect()
}

/// The sample (Pearson) correlation of two series of the same length.
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}
