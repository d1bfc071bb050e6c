//! Bus envelope: encode/decode of every kind, keys, schema evolution, versions.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use common::*;
use optics_schemas::bus::{MAGIC, snapshot_datasets, topics};
use optics_schemas::columns::option_quotes as oq;
use optics_schemas::{
    DataBatch, Dataset, FORMAT_VERSION, MARKET_WIDE_KEY, Message, MessageKind, OptionQuote, Record,
    SchemaError, SnapshotEvent, decode, decode_header, encode,
};

fn round_trip(message: &Message) -> Vec<u8> {
    let bytes = encode(message).unwrap();
    assert_eq!(&bytes[..4], &MAGIC);
    assert_eq!(decode(&bytes).unwrap(), *message);
    let header = decode_header(&bytes).unwrap();
    assert_eq!(header.kind, message.kind());
    assert_eq!(header.key, message.key());
    assert_eq!(header.version, FORMAT_VERSION);
    bytes
}

fn snapshot() -> SnapshotEvent {
    SnapshotEvent {
        dataset: snapshot_datasets::CHAIN.to_owned(),
        trade_date: date(2026, 11, 20),
        underlying: "SPY".to_owned(),
        path: "chain/trade_date=2026-11-20/ticker=SPY/part-0.parquet".to_owned(),
        version: 42,
        row_count: 8_214,
        published_at: time(0),
    }
}

#[test]
fn every_kind_round_trips() {
    let messages = [
        Message::Data(DataBatch::from_rows("SPY", &spy_quotes()).unwrap()),
        Message::Data(DataBatch::from_rows("SPY", &ticks()).unwrap()),
        Message::Data(DataBatch::from_rows("SPX", &[index_tick()]).unwrap()),
        Message::Data(DataBatch::from_rows("AAPL", &bars()).unwrap()),
        Message::Data(DataBatch::from_rows(MARKET_WIDE_KEY, &earnings()).unwrap()),
        Message::Data(DataBatch::from_rows(MARKET_WIDE_KEY, &dividends()).unwrap()),
        Message::Data(DataBatch::from_rows("GME", &borrow()[1..]).unwrap()),
        Message::Data(DataBatch::from_rows(MARKET_WIDE_KEY, &calendar()).unwrap()),
        Message::Data(DataBatch::from_rows(MARKET_WIDE_KEY, &companies()).unwrap()),
        Message::Snapshot(snapshot()),
    ];
    for message in &messages {
        round_trip(message);
    }
    let quotes = &messages[0];
    assert_eq!(quotes.topic(), topics::OPTION_QUOTES);
    assert_eq!(messages[8].topic(), topics::REFERENCE);
    assert_eq!(messages[9].topic(), topics::SNAPSHOTS);
    let Message::Data(batch) = decode(&encode(quotes).unwrap()).unwrap() else {
        panic!("not data");
    };
    assert_eq!(batch.rows::<OptionQuote>().unwrap(), spy_quotes());
    assert!(matches!(
        batch.rows::<optics_schemas::DailyBar>(),
        Err(SchemaError::DatasetMismatch { .. })
    ));
}

#[test]
fn empty_batch_round_trips() {
    round_trip(&Message::Data(
        DataBatch::from_rows::<OptionQuote>("QQQ", &[]).unwrap(),
    ));
}

#[test]
fn kind_codes_are_stable() {
    // Codes are part of the wire format: changing one breaks every deployed consumer.
    let expected = [1, 2, 3, 16, 17, 18, 19, 20];
    for (dataset, code) in Dataset::ALL.into_iter().zip(expected) {
        assert_eq!(MessageKind::Data(dataset).code(), code);
        assert_eq!(
            MessageKind::from_code(code),
            Some(MessageKind::Data(dataset))
        );
    }
    assert_eq!(MessageKind::Snapshot.code(), 32);
    assert_eq!(MessageKind::from_code(0), None);
}

#[test]
fn header_layout() {
    let bytes = encode(&Message::Snapshot(snapshot())).unwrap();
    assert_eq!(&bytes[0..4], b"OPTB");
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 1);
    assert_eq!(bytes[6], 32);
    assert_eq!(bytes[7], 0);
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
    assert_eq!(&bytes[10..13], b"SPY");
    let body_len = u32::from_le_bytes(bytes[13..17].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 17 + body_len);
    let json: serde_json::Value = serde_json::from_slice(&bytes[17..]).unwrap();
    assert_eq!(json["trade_date"], "2026-11-20");
    assert_eq!(json["published_at"], "2026-11-20T15:30:00.123456Z");
}

#[test]
fn keys_are_enforced() {
    // Every quote must belong to the key's underlying.
    let mut rows = spy_quotes();
    rows[3].underlying = "QQQ".into();
    let err = DataBatch::from_rows("SPY", &rows).unwrap_err();
    assert!(matches!(err, SchemaError::InvalidKey { .. }), "{err}");
    assert!(err.to_string().contains("row 3"), "{err}");
    // Market data is never market-wide; the calendar always is.
    assert!(DataBatch::from_rows(MARKET_WIDE_KEY, &spy_quotes()).is_err());
    assert!(DataBatch::from_rows("US", &calendar()).is_err());
    // A per-symbol reference update must match its key.
    assert!(DataBatch::from_rows("AAPL", &borrow()).is_err());
    assert!(DataBatch::from_rows("AAPL", &borrow()[..1]).is_ok());
    assert!(DataBatch::from_rows("", &borrow()[..0]).is_err());
}

/// A newer producer adds a column this build does not know: the message still decodes, and the
/// batch comes out in this build's schema.
#[test]
fn extra_unknown_column_is_dropped() {
    let batch = OptionQuote::to_batch(&spy_quotes()).unwrap();
    let mut fields: Vec<Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    // Inserted in the middle, to show columns are matched by name, not position.
    fields.insert(3, Field::new("iv_vendor", DataType::Float64, true));
    columns.insert(
        3,
        Arc::new(Float64Array::from(vec![Some(0.2); batch.num_rows()])),
    );
    fields.push(Field::new("exchange", DataType::Utf8, false));
    columns.push(Arc::new(StringArray::from(vec!["CBOE"; batch.num_rows()])));
    let newer = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();

    let bytes = encode_raw(
        MessageKind::Data(Dataset::OptionQuotes),
        "SPY",
        &ipc(&newer),
    );
    let Message::Data(decoded) = decode(&bytes).unwrap() else {
        panic!("not data");
    };
    assert_eq!(decoded.batch(), &batch);
    assert_eq!(decoded.rows::<OptionQuote>().unwrap(), spy_quotes());
}

/// An older producer lacks a nullable column: it reads as nulls; lacking a required one is an
/// error naming it.
#[test]
fn missing_columns() {
    let batch = OptionQuote::to_batch(&spy_quotes()).unwrap();
    let without = |name: &str| {
        let keep: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| batch.schema().field(i).name() != name)
            .collect();
        batch.project(&keep).unwrap()
    };
    let kind = MessageKind::Data(Dataset::OptionQuotes);
    let older = encode_raw(kind, "SPY", &ipc(&without(oq::LAST)));
    let Message::Data(decoded) = decode(&older).unwrap() else {
        panic!("not data");
    };
    assert_eq!(
        decoded
            .batch()
            .column_by_name(oq::LAST)
            .unwrap()
            .null_count(),
        10
    );

    let broken = encode_raw(kind, "SPY", &ipc(&without(oq::OPEN_INTEREST)));
    assert!(matches!(
        decode(&broken).unwrap_err(),
        SchemaError::MissingColumn {
            column: oq::OPEN_INTEREST,
            ..
        }
    ));
}

/// Invalid rows are rejected on the way in from the bus too.
#[test]
fn decode_validates_rows() {
    let mut rows = spy_quotes();
    rows[2].bid = 5.0;
    let columns: Vec<ArrayRef> = {
        // Build the batch without validation: take a valid one and swap the bid column.
        let valid = OptionQuote::to_batch(&spy_quotes()).unwrap();
        let mut columns = valid.columns().to_vec();
        columns[valid.schema().index_of(oq::BID).unwrap()] = Arc::new(Float64Array::from(
            rows.iter().map(|r| r.bid).collect::<Vec<_>>(),
        ));
        columns
    };
    let invalid = RecordBatch::try_new(OptionQuote::schema(), columns).unwrap();
    let bytes = encode_raw(
        MessageKind::Data(Dataset::OptionQuotes),
        "SPY",
        &ipc(&invalid),
    );
    match decode(&bytes).unwrap_err() {
        SchemaError::InvalidValue { column, row, .. } => assert_eq!((column, row), (oq::BID, 2)),
        other => panic!("{other}"),
    }
}

#[test]
fn future_version_is_a_clear_error() {
    let mut bytes = encode(&Message::Snapshot(snapshot())).unwrap();
    bytes[4..6].copy_from_slice(&2u16.to_le_bytes());
    let err = decode(&bytes).unwrap_err();
    assert!(
        matches!(
            err,
            SchemaError::UnsupportedVersion {
                found: 2,
                supported: 1
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade the consumer"));
    // Whatever follows the version in a future layout is never looked at.
    let future = [b"OPTB".as_slice(), &7u16.to_le_bytes(), &[0xff; 3]].concat();
    assert!(matches!(
        decode(&future).unwrap_err(),
        SchemaError::UnsupportedVersion { found: 7, .. }
    ));
}

#[test]
fn header_errors() {
    let good = encode(&Message::Snapshot(snapshot())).unwrap();
    let with = |at: usize, value: u8| {
        let mut b = good.clone();
        b[at] = value;
        decode(&b).unwrap_err()
    };
    assert!(matches!(with(0, b'X'), SchemaError::BadMagic));
    assert!(matches!(with(6, 99), SchemaError::UnknownKind(99)));
    assert!(matches!(with(7, 1), SchemaError::UnsupportedFlags(1)));
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(
        decode(&long).unwrap_err(),
        SchemaError::TrailingBytes(1)
    ));
    assert!(matches!(
        decode(&good[..good.len() - 1]).unwrap_err(),
        SchemaError::Truncated { field: "body", .. }
    ));
    assert!(matches!(
        decode(b"OP").unwrap_err(),
        SchemaError::Truncated { .. }
    ));
    assert!(matches!(
        decode(b"").unwrap_err(),
        SchemaError::Truncated { .. }
    ));
    assert!(matches!(
        decode(b"{\"a\":1}").unwrap_err(),
        SchemaError::BadMagic
    ));
}

#[test]
fn snapshot_event_rules() {
    let mut event = snapshot();
    event.dataset = "Chain".into();
    assert!(encode(&Message::Snapshot(event)).is_err());
    let mut event = snapshot();
    event.path.clear();
    assert!(encode(&Message::Snapshot(event)).is_err());
    let mut event = snapshot();
    event.underlying = MARKET_WIDE_KEY.into();
    event.dataset = snapshot_datasets::REFERENCE.into();
    round_trip(&Message::Snapshot(event));
    // Unknown JSON fields from a newer producer are ignored.
    let body = br#"{"dataset":"flow","trade_date":"2026-11-20","underlying":"QQQ","path":"flow/x","version":1,"row_count":3,"published_at":"2026-11-20T21:00:00Z","writer":"compute-7"}"#;
    let bytes = encode_raw(MessageKind::Snapshot, "QQQ", body);
    let Message::Snapshot(event) = decode(&bytes).unwrap() else {
        panic!("not a snapshot");
    };
    assert_eq!(event.dataset, "flow");
    // The key must be the event's underlying.
    let bytes = encode_raw(MessageKind::Snapshot, "SPY", body);
    assert!(matches!(
        decode(&bytes).unwrap_err(),
        SchemaError::InvalidPayload { .. }
    ));
}

/// An Arrow IPC stream of `batch`.
fn ipc(batch: &RecordBatch) -> Vec<u8> {
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).unwrap();
    writer.write(batch).unwrap();
    writer.finish().unwrap();
    writer.into_inner().unwrap()
}

/// A version-1 message around an arbitrary body (as another producer would write it).
fn encode_raw(kind: MessageKind, key: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.push(kind.code());
    out.push(0);
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}
