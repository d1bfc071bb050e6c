//! The streaming readers: CSV lines in, validated row batches out.

use std::io::Read;

use csv::StringRecord;
use optics_schemas::{DailyBar, EarningsEvent, EconomicEvent, OptionQuote, Record, SchemaError};

use super::bars::Bars;
use super::cboe::CboeEod;
use super::earnings::Earnings;
use super::economic::Economic;
use super::error::{ImportError, Reason};
use super::fields::{Cells, Header};
use super::orats::OratsStrikes;

/// The default cap on rows per batch.
pub const DEFAULT_BATCH_ROWS: usize = 8192;

/// What turns one CSV line into rows.
pub(crate) trait LineParser {
    type Row: Record;
    /// The most rows one line can produce (the batch cap is never below it).
    const MAX_ROWS_PER_LINE: usize;
    fn parse(&mut self, cells: Cells<'_>, out: &mut Vec<Self::Row>) -> Result<(), Reason>;
}

/// The two option-quote layouts.
#[derive(Debug, Clone)]
pub(crate) enum QuoteParser {
    Orats(OratsStrikes),
    Cboe(CboeEod),
}

impl LineParser for QuoteParser {
    type Row = OptionQuote;
    const MAX_ROWS_PER_LINE: usize = 2;
    fn parse(&mut self, cells: Cells<'_>, out: &mut Vec<OptionQuote>) -> Result<(), Reason> {
        match self {
            Self::Orats(p) => p.parse(cells, out),
            Self::Cboe(p) => p.parse(cells, out),
        }
    }
}

impl LineParser for Bars {
    type Row = DailyBar;
    const MAX_ROWS_PER_LINE: usize = 1;
    fn parse(&mut self, cells: Cells<'_>, out: &mut Vec<DailyBar>) -> Result<(), Reason> {
        Bars::parse(self, cells, out)
    }
}

impl LineParser for Earnings {
    type Row = EarningsEvent;
    const MAX_ROWS_PER_LINE: usize = 1;
    fn parse(&mut self, cells: Cells<'_>, out: &mut Vec<EarningsEvent>) -> Result<(), Reason> {
        Earnings::parse(self, cells, out)
    }
}

impl LineParser for Economic {
    type Row = EconomicEvent;
    const MAX_ROWS_PER_LINE: usize = 1;
    fn parse(&mut self, cells: Cells<'_>, out: &mut Vec<EconomicEvent>) -> Result<(), Reason> {
        Economic::parse(self, cells, out)
    }
}

/// The format-independent machinery: the CSV reader, batching, line bookkeeping and the
/// schema validation of each batch.
#[derive(Debug)]
pub(crate) struct Engine<R, P> {
    csv: csv::Reader<R>,
    parser: P,
    file: String,
    batch_rows: usize,
    record: StringRecord,
    /// The source line of each row of the batch being built.
    lines: Vec<u64>,
    lines_read: u64,
    rows_read: u64,
    done: bool,
}

impl<R: Read, P: LineParser> Engine<R, P> {
    fn new(
        reader: R,
        file: &str,
        batch_rows: usize,
        bind: impl FnOnce(&Header) -> Result<P, Reason>,
    ) -> Result<Self, ImportError> {
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            .from_reader(reader);
        let header = csv
            .headers()
            .map_err(|e| csv_error(file, 1, &e))
            .and_then(|h| Header::new(h).map_err(|r| ImportError::new(file, 1, r)))?;
        let parser = bind(&header).map_err(|r| ImportError::new(file, 1, r))?;
        Ok(Self {
            csv,
            parser,
            file: file.to_owned(),
            batch_rows: batch_rows.max(P::MAX_ROWS_PER_LINE),
            record: StringRecord::new(),
            lines: Vec::new(),
            lines_read: 0,
            rows_read: 0,
            done: false,
        })
    }

    fn fail(&mut self, line: u64, reason: Reason) -> Option<Result<Vec<P::Row>, ImportError>> {
        self.done = true;
        Some(Err(ImportError::new(self.file.clone(), line, reason)))
    }

    fn next_batch(&mut self) -> Option<Result<Vec<P::Row>, ImportError>> {
        if self.done {
            return None;
        }
        let mut rows = Vec::with_capacity(self.batch_rows.min(DEFAULT_BATCH_ROWS));
        self.lines.clear();
        while rows.len() + P::MAX_ROWS_PER_LINE <= self.batch_rows {
            match self.csv.read_record(&mut self.record) {
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Ok(true) => {
                    let line = self.record.position().map_or(0, |p| p.line());
                    let before = rows.len();
                    if let Err(reason) = self.parser.parse(Cells(&self.record), &mut rows) {
                        return self.fail(line, reason);
                    }
                    self.lines
                        .extend(std::iter::repeat_n(line, rows.len() - before));
                    self.lines_read += 1;
                }
                Err(e) => {
                    let last = self.csv.position().line();
                    self.done = true;
                    return Some(Err(csv_error(&self.file, last, &e)));
                }
            }
        }
        if rows.is_empty() {
            return None;
        }
        if let Err(e) = P::Row::to_batch(&rows) {
            let (line, reason) = schema_reason(e, &self.lines);
            return self.fail(line, reason);
        }
        self.rows_read += rows.len() as u64;
        Some(Ok(rows))
    }
}

fn csv_error(file: &str, fallback_line: u64, e: &csv::Error) -> ImportError {
    let line = e.position().map_or(fallback_line, csv::Position::line);
    let reason = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => Reason::FieldCount {
            found: *len,
            expected: *expected_len,
        },
        csv::ErrorKind::Io(io) => Reason::Io(io.to_string()),
        csv::ErrorKind::Utf8 { err, .. } => Reason::Csv(format!("invalid UTF-8: {err}")),
        _ => Reason::Csv(e.to_string()),
    };
    ImportError::new(file, line, reason)
}

/// Maps a schema validation error of a batch to the offending line.
fn schema_reason(e: SchemaError, lines: &[u64]) -> (u64, Reason) {
    let line_of = |row: usize| lines.get(row).or(lines.first()).copied().unwrap_or(0);
    match e {
        SchemaError::InvalidValue {
            column,
            row,
            reason,
            ..
        } => (line_of(row), Reason::Invalid { column, reason }),
        SchemaError::UnexpectedNull { column, row, .. } => (
            line_of(row),
            Reason::Invalid {
                column,
                reason: "null in a non-nullable column".to_owned(),
            },
        ),
        other => (
            line_of(0),
            Reason::Invalid {
                column: "(batch)",
                reason: other.to_string(),
            },
        ),
    }
}

macro_rules! reader_common {
    ($name:ident, $row:ty) => {
        impl<R: Read> $name<R> {
            /// The underlying reader (for example to read a byte counter).
            pub fn get_ref(&self) -> &R {
                self.0.csv.get_ref()
            }

            /// Data lines read so far (the header not counted).
            pub fn lines_read(&self) -> u64 {
                self.0.lines_read
            }

            /// Rows yielded so far.
            pub fn rows_read(&self) -> u64 {
                self.0.rows_read
            }

            /// The display name of the file.
            pub fn file(&self) -> &str {
                &self.0.file
            }
        }

        impl<R: Read> Iterator for $name<R> {
            type Item = Result<Vec<$row>, ImportError>;

            /// The next batch of validated rows (at most the batch cap); after an error, `None`.
            fn next(&mut self) -> Option<Self::Item> {
                self.0.next_batch()
            }
        }
    };
}

/// Streams [`OptionQuote`] batches out of an ORATS strikes or Cboe EOD file. Memory is bounded
/// by the batch cap whatever the file size. The header is read (and its required columns
/// checked) when the reader is made; each batch is validated by
/// [`Record::to_batch`](optics_schemas::Record::to_batch) before it is yielded; the first bad
/// line ends the stream with its error.
#[derive(Debug)]
pub struct QuoteReader<R>(Engine<R, QuoteParser>);

impl<R: Read> QuoteReader<R> {
    /// A reader of the ORATS "strikes" layout (two quotes per line, call then put). `file` is
    /// the display name used in errors; batches hold at most `batch_rows` rows (at least 2).
    pub fn orats_strikes(reader: R, file: &str, batch_rows: usize) -> Result<Self, ImportError> {
        Engine::new(reader, file, batch_rows, |h| {
            OratsStrikes::bind(h).map(QuoteParser::Orats)
        })
        .map(Self)
    }

    /// A reader of the Cboe DataShop Option EOD Summary layout.
    pub fn cboe_eod(reader: R, file: &str, batch_rows: usize) -> Result<Self, ImportError> {
        Engine::new(reader, file, batch_rows, |h| {
            CboeEod::bind(h).map(QuoteParser::Cboe)
        })
        .map(Self)
    }
}

reader_common!(QuoteReader, OptionQuote);

/// Streams [`DailyBar`] batches out of a daily-bars file for one symbol; see [`QuoteReader`]
/// for the streaming and validation contract.
#[derive(Debug)]
pub struct BarReader<R>(Engine<R, Bars>);

impl<R: Read> BarReader<R> {
    /// A reader of a bars file whose rows all belong to `symbol`.
    pub fn new(
        reader: R,
        file: &str,
        symbol: &str,
        batch_rows: usize,
    ) -> Result<Self, ImportError> {
        if symbol.trim().is_empty() {
            return Err(ImportError::new(file, 0, Reason::Empty("symbol")));
        }
        Engine::new(reader, file, batch_rows, |h| Bars::bind(h, symbol.trim())).map(Self)
    }
}

reader_common!(BarReader, DailyBar);

/// Streams [`EarningsEvent`] batches out of an earnings file (one report per line, any
/// symbols); see [`QuoteReader`] for the streaming and validation contract.
#[derive(Debug)]
pub struct EarningsReader<R>(Engine<R, Earnings>);

impl<R: Read> EarningsReader<R> {
    /// A reader of an earnings file.
    pub fn new(reader: R, file: &str, batch_rows: usize) -> Result<Self, ImportError> {
        Engine::new(reader, file, batch_rows, Earnings::bind).map(Self)
    }
}

reader_common!(EarningsReader, EarningsEvent);

/// Streams [`EconomicEvent`] batches out of an economic calendar file (one release per line);
/// see [`QuoteReader`] for the streaming and validation contract.
#[derive(Debug)]
pub struct EconomicReader<R>(Engine<R, Economic>);

impl<R: Read> EconomicReader<R> {
    /// A reader of an economic calendar file.
    pub fn new(reader: R, file: &str, batch_rows: usize) -> Result<Self, ImportError> {
        Engine::new(reader, file, batch_rows, Economic::bind).map(Self)
    }
}

reader_common!(EconomicReader, EconomicEvent);
