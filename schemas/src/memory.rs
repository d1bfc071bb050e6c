//! What the long-lived structures of a process hold, for `/metrics`: every holder (the bus, the
//! worker's books, the API's snapshot cache, …) reports its items and an estimate of its bytes
//! through [`MemoryHolder`], so an operator sees a holder grow before the process runs out of
//! memory, and a test can assert that none grows with session time.
//!
//! Bytes are estimated from lengths and capacities ([`HeapBytes`]): the structure's own
//! allocations, not the allocator's overhead or memory it keeps after a free (the process's
//! resident size, reported beside the holders, shows those). Arrow data counts the buffers a
//! batch references ([`batch_bytes`]), so batches that share a buffer each count it.

use arrow_array::RecordBatch;

use crate::{
    BorrowRate, ChainRow, Company, DailyBar, DataBatch, Dividend, EarningsEvent, EconomicEvent,
    ExposureRow, ExposureSummaryRow, FlowAggregateRow, FlowSnapshotRow, Message, OptionQuote,
    SnapshotEvent, VolDailyRow,
};

/// One holder's share of the process's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldMemory {
    /// The holder's name: a fixed string of the code (`bus_messages`, `worker_books`, …), so
    /// the series a scrape shows are a fixed set.
    pub holder: &'static str,
    /// What it holds, counted in its own unit (messages, contracts, rows, answers…; the
    /// holder's documentation says which).
    pub items: u64,
    /// Bytes it holds, estimated from lengths and capacities.
    pub bytes: u64,
}

impl HeldMemory {
    /// `items` and `bytes` of `holder`.
    pub fn new(holder: &'static str, items: usize, bytes: usize) -> Self {
        Self {
            holder,
            items: items as u64,
            bytes: bytes as u64,
        }
    }
}

/// A long-lived structure that reports what it holds.
pub trait MemoryHolder: Send + Sync {
    /// Appends one entry per holder the structure is made of. Called at scrape time: cheap
    /// (counters kept as the structure changes, or a walk that takes no lock for long).
    fn held_memory(&self, out: &mut Vec<HeldMemory>);
}

/// Bytes a value owns on the heap, beyond its own `size_of` (estimated from capacities).
pub trait HeapBytes {
    /// The heap bytes owned.
    fn heap_bytes(&self) -> usize;
}

impl HeapBytes for String {
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }
}

impl<T: HeapBytes> HeapBytes for Option<T> {
    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, HeapBytes::heap_bytes)
    }
}

impl<T: HeapBytes> HeapBytes for Vec<T> {
    fn heap_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
            + self.iter().map(HeapBytes::heap_bytes).sum::<usize>()
    }
}

/// Row types whose only heap data are their text fields.
macro_rules! heap_bytes_of_text_fields {
    ($($row:ty => [$($field:ident),*];)*) => {
        $(impl HeapBytes for $row {
            fn heap_bytes(&self) -> usize {
                0 $(+ self.$field.heap_bytes())*
            }
        })*
    };
}

heap_bytes_of_text_fields! {
    OptionQuote => [underlying, option_symbol];
    ExposureRow => [underlying];
    ExposureSummaryRow => [underlying];
    FlowSnapshotRow => [underlying];
    FlowAggregateRow => [underlying];
    DailyBar => [symbol];
    EarningsEvent => [symbol, fiscal_quarter];
    Dividend => [symbol];
    BorrowRate => [symbol];
    EconomicEvent => [country, event, actual, forecast, previous];
    Company => [symbol, name, sector, sector_etf, industry];
    SnapshotEvent => [dataset, underlying, path];
    VolDailyRow => [underlying];
}

impl HeapBytes for ChainRow {
    fn heap_bytes(&self) -> usize {
        self.underlying.heap_bytes()
            + self.call.option_symbol.heap_bytes()
            + self.put.option_symbol.heap_bytes()
    }
}

/// Bytes of the buffers `batch` references.
pub fn batch_bytes(batch: &RecordBatch) -> usize {
    batch.get_array_memory_size()
}

impl HeapBytes for DataBatch {
    fn heap_bytes(&self) -> usize {
        self.key().len() + batch_bytes(self.batch())
    }
}

impl HeapBytes for Message {
    fn heap_bytes(&self) -> usize {
        match self {
            Self::Data(data) => data.heap_bytes(),
            Self::Snapshot(event) => event.heap_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_counts_its_capacity_and_what_its_items_own() {
        let mut names: Vec<String> = Vec::with_capacity(4);
        names.push(String::with_capacity(10));
        names.push("abc".to_owned());
        let expected = 4 * std::mem::size_of::<String>() + 10 + names[1].capacity();
        assert_eq!(names.heap_bytes(), expected);
        assert_eq!(None::<String>.heap_bytes(), 0);
        assert_eq!(Some(String::with_capacity(7)).heap_bytes(), 7);
    }

    #[test]
    fn a_message_counts_its_batch_buffers() {
        let bar = DailyBar {
            symbol: "SPY".into(),
            date: chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            open: 1.0,
            high: 2.0,
            low: 0.5,
            close: 1.5,
            volume: 10,
            adj_close: 1.5,
        };
        let bars = vec![bar; 100];
        let message = Message::Data(DataBatch::from_rows("SPY", &bars).unwrap());
        let Message::Data(data) = &message else {
            unreachable!()
        };
        // At least the five f64 columns and the volumes of 100 rows.
        assert!(
            message.heap_bytes() >= 100 * 6 * 8,
            "{}",
            message.heap_bytes()
        );
        assert_eq!(message.heap_bytes(), 3 + batch_bytes(data.batch()));
    }
}
