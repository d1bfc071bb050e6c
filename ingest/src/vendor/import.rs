//! The all-or-nothing import driver: a file streamed through its reader into an
//! [`ImportSink`], committed only when every line was good.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use optics_schemas::{DailyBar, EarningsEvent, EconomicEvent, OptionQuote};

use super::error::{ImportError, Reason};
use super::reader::{BarReader, DEFAULT_BATCH_ROWS, EarningsReader, EconomicReader, QuoteReader};

/// Which vendor layout a file is in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImportKind {
    /// ORATS "strikes" end-of-day chains (`orats-strikes`).
    OratsStrikes,
    /// Cboe DataShop Option EOD Summary (`cboe-eod`).
    CboeEod,
    /// Daily bars of one underlying (`bars`); the symbol is not in the file.
    Bars {
        /// The underlying's symbol.
        symbol: String,
    },
    /// Earnings reports of any symbols (`earnings`).
    Earnings,
    /// Macro releases (`economic-calendar`).
    EconomicCalendar,
}

impl ImportKind {
    /// The kind names of the command line.
    pub const NAMES: [&'static str; 5] = [
        "orats-strikes",
        "cboe-eod",
        "bars",
        "earnings",
        "economic-calendar",
    ];

    /// The kind's command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::OratsStrikes => "orats-strikes",
            Self::CboeEod => "cboe-eod",
            Self::Bars { .. } => "bars",
            Self::Earnings => "earnings",
            Self::EconomicCalendar => "economic-calendar",
        }
    }

    /// The kind named `name` (one of [`Self::NAMES`]); `bars` takes `bars_symbol`. `None` for
    /// an unknown name or `bars` without a symbol.
    pub fn from_name(name: &str, bars_symbol: Option<&str>) -> Option<Self> {
        match name {
            "orats-strikes" => Some(Self::OratsStrikes),
            "cboe-eod" => Some(Self::CboeEod),
            "bars" => bars_symbol.map(|s| Self::Bars {
                symbol: s.to_owned(),
            }),
            "earnings" => Some(Self::Earnings),
            "economic-calendar" => Some(Self::EconomicCalendar),
            _ => None,
        }
    }
}

/// The symbol a bars file is named after: the file name up to its last extension, upper case
/// (`spy.csv` → `SPY`, `BRK.B.csv` → `BRK.B`); `None` if that is empty.
pub fn symbol_from_file_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?.trim();
    (!stem.is_empty()).then(|| stem.to_ascii_uppercase())
}

/// One validated batch handed to a sink.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportBatch {
    /// Option quotes (ORATS, Cboe).
    Quotes(Vec<OptionQuote>),
    /// Daily bars.
    Bars(Vec<DailyBar>),
    /// Earnings reports.
    Earnings(Vec<EarningsEvent>),
    /// Macro releases.
    Economic(Vec<EconomicEvent>),
}

impl ImportBatch {
    /// Rows in the batch.
    pub fn len(&self) -> usize {
        match self {
            Self::Quotes(rows) => rows.len(),
            Self::Bars(rows) => rows.len(),
            Self::Earnings(rows) => rows.len(),
            Self::Economic(rows) => rows.len(),
        }
    }

    /// What the batch holds, in words (`option quotes`, `daily bars`, …).
    pub fn what(&self) -> &'static str {
        match self {
            Self::Quotes(_) => "option quotes",
            Self::Bars(_) => "daily bars",
            Self::Earnings(_) => "earnings reports",
            Self::Economic(_) => "economic calendar events",
        }
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sink's own failure.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Where an import goes. The driver calls [`stage`](Self::stage) for every batch of one file,
/// then exactly one of [`commit`](Self::commit) (every line was good) or
/// [`abort`](Self::abort) (a bad line, an I/O error, or a failed `stage`/`commit`). Nothing
/// staged may become visible before `commit`; `abort` discards everything staged since the
/// last commit and must be safe to call when nothing was staged. The quote archive implements
/// it by writing temporary files and renaming them on commit.
pub trait ImportSink {
    /// Keeps a validated batch, invisible to readers until [`commit`](Self::commit).
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError>;
    /// Makes everything staged visible, atomically.
    fn commit(&mut self) -> Result<(), SinkError>;
    /// Discards everything staged.
    fn abort(&mut self);
}

/// An in-memory [`ImportSink`] (tests, small tools): staged batches move to `committed` on
/// commit and are dropped on abort.
#[derive(Debug, Default, Clone)]
pub struct MemorySink {
    staged: Vec<ImportBatch>,
    committed: Vec<ImportBatch>,
    commits: usize,
    aborts: usize,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// The committed batches, in order.
    pub fn committed(&self) -> &[ImportBatch] {
        &self.committed
    }

    /// Batches staged and not yet committed or aborted.
    pub fn staged(&self) -> &[ImportBatch] {
        &self.staged
    }

    /// Every committed quote, in file order.
    pub fn quotes(&self) -> impl Iterator<Item = &OptionQuote> {
        self.committed.iter().flat_map(|b| match b {
            ImportBatch::Quotes(rows) => rows.as_slice(),
            _ => &[],
        })
    }

    /// Every committed bar, in file order.
    pub fn bars(&self) -> impl Iterator<Item = &DailyBar> {
        self.committed.iter().flat_map(|b| match b {
            ImportBatch::Bars(rows) => rows.as_slice(),
            _ => &[],
        })
    }

    /// Every committed earnings report, in file order.
    pub fn earnings(&self) -> impl Iterator<Item = &EarningsEvent> {
        self.committed.iter().flat_map(|b| match b {
            ImportBatch::Earnings(rows) => rows.as_slice(),
            _ => &[],
        })
    }

    /// Every committed economic calendar event, in file order.
    pub fn economic(&self) -> impl Iterator<Item = &EconomicEvent> {
        self.committed.iter().flat_map(|b| match b {
            ImportBatch::Economic(rows) => rows.as_slice(),
            _ => &[],
        })
    }

    /// How many times `commit` was called.
    pub fn commits(&self) -> usize {
        self.commits
    }

    /// How many times `abort` was called.
    pub fn aborts(&self) -> usize {
        self.aborts
    }
}

impl ImportSink for MemorySink {
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError> {
        self.staged.push(batch);
        Ok(())
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        self.committed.append(&mut self.staged);
        self.commits += 1;
        Ok(())
    }

    fn abort(&mut self) {
        self.staged.clear();
        self.aborts += 1;
    }
}

/// How far an import has read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes read from the file so far (the CSV reader reads ahead in blocks, so this runs up
    /// to one block ahead of the rows delivered).
    pub bytes_read: u64,
    /// The file's size, when known.
    pub total_bytes: Option<u64>,
}

/// Options of [`import_file_with`] / [`import_reader`].
pub struct ImportOptions<'a> {
    /// Cap on rows per batch (default [`DEFAULT_BATCH_ROWS`]).
    pub batch_rows: usize,
    /// Called after every batch and once at the end. A command-line progress bar attaches
    /// here: `Some(&mut |p: Progress| bar.set_position(p.bytes_read))` with an indicatif
    /// `ProgressBar::new(total_bytes)`; the library itself has no terminal dependency.
    pub progress: Option<&'a mut dyn FnMut(Progress)>,
}

impl Default for ImportOptions<'_> {
    fn default() -> Self {
        Self {
            batch_rows: DEFAULT_BATCH_ROWS,
            progress: None,
        }
    }
}

impl fmt::Debug for ImportOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportOptions")
            .field("batch_rows", &self.batch_rows)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// What a successful import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    /// Display name of the file.
    pub file: String,
    /// The kind's name (`orats-strikes`, …).
    pub kind: &'static str,
    /// Data lines read (header not counted).
    pub lines: u64,
    /// Rows committed (two per line for ORATS).
    pub rows: u64,
    /// Batches staged.
    pub batches: u64,
    /// Bytes read.
    pub bytes: u64,
}

/// A reader that counts the bytes read through it.
#[derive(Debug)]
pub struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R> CountingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        Self { inner, count: 0 }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.count
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Imports one file with the default options. See [`import_reader`].
pub fn import_file(
    path: &Path,
    kind: &ImportKind,
    sink: &mut dyn ImportSink,
) -> Result<ImportSummary, ImportError> {
    import_file_with(path, kind, sink, ImportOptions::default())
}

/// Imports one file; the display name in errors is the path as given. See [`import_reader`].
pub fn import_file_with(
    path: &Path,
    kind: &ImportKind,
    sink: &mut dyn ImportSink,
    options: ImportOptions<'_>,
) -> Result<ImportSummary, ImportError> {
    let name = path.display().to_string();
    let opened = File::open(path).and_then(|f| {
        let len = f.metadata()?.len();
        Ok((f, len))
    });
    match opened {
        Ok((file, len)) => import_reader(file, &name, Some(len), kind, sink, options),
        Err(e) => {
            sink.abort();
            Err(ImportError::new(name, 0, Reason::Io(e.to_string())))
        }
    }
}

/// Streams `reader` (named `file` in errors, `total_bytes` long if known) through the reader
/// of `kind` into `sink`: every batch is staged as soon as it is validated, and the sink is
/// committed only after the last line; on the first error the sink is aborted and the error
/// returned, so nothing of a bad file is ever committed. Memory stays bounded by the batch cap
/// (plus whatever the sink keeps).
pub fn import_reader<R: Read>(
    reader: R,
    file: &str,
    total_bytes: Option<u64>,
    kind: &ImportKind,
    sink: &mut dyn ImportSink,
    mut options: ImportOptions<'_>,
) -> Result<ImportSummary, ImportError> {
    let counting = CountingReader::new(reader);
    let batch_rows = options.batch_rows;
    let result = match kind {
        ImportKind::OratsStrikes => QuoteReader::orats_strikes(counting, file, batch_rows)
            .and_then(|r| drive_quotes(r, total_bytes, sink, &mut options)),
        ImportKind::CboeEod => QuoteReader::cboe_eod(counting, file, batch_rows)
            .and_then(|r| drive_quotes(r, total_bytes, sink, &mut options)),
        ImportKind::Bars { symbol } => BarReader::new(counting, file, symbol, batch_rows)
            .and_then(|r| drive_bars(r, total_bytes, sink, &mut options)),
        ImportKind::Earnings => EarningsReader::new(counting, file, batch_rows)
            .and_then(|r| drive_earnings(r, total_bytes, sink, &mut options)),
        ImportKind::EconomicCalendar => EconomicReader::new(counting, file, batch_rows)
            .and_then(|r| drive_economic(r, total_bytes, sink, &mut options)),
    };
    let finish = result.and_then(|(lines, rows, batches, bytes)| {
        sink.commit()
            .map_err(|e| ImportError::new(file, 0, Reason::Sink(e.to_string())))?;
        Ok(ImportSummary {
            file: file.to_owned(),
            kind: kind.name(),
            lines,
            rows,
            batches,
            bytes,
        })
    });
    if finish.is_err() {
        sink.abort();
    }
    finish
}

type Counts = (u64, u64, u64, u64);

macro_rules! drive {
    ($name:ident, $reader:ident, $variant:ident) => {
        fn $name<R: Read>(
            mut reader: $reader<CountingReader<R>>,
            total_bytes: Option<u64>,
            sink: &mut dyn ImportSink,
            options: &mut ImportOptions<'_>,
        ) -> Result<Counts, ImportError> {
            let mut batches = 0;
            let mut report = |reader: &$reader<CountingReader<R>>| {
                if let Some(progress) = options.progress.as_mut() {
                    progress(Progress {
                        bytes_read: reader.get_ref().bytes_read(),
                        total_bytes,
                    });
                }
            };
            while let Some(batch) = reader.next() {
                let batch = batch?;
                // The line of the batch's last row is not known here; a sink error is about
                // the file as a whole.
                sink.stage(ImportBatch::$variant(batch))
                    .map_err(|e| ImportError::new(reader.file(), 0, Reason::Sink(e.to_string())))?;
                batches += 1;
                report(&reader);
            }
            report(&reader);
            Ok((
                reader.lines_read(),
                reader.rows_read(),
                batches,
                reader.get_ref().bytes_read(),
            ))
        }
    };
}

drive!(drive_quotes, QuoteReader, Quotes);
drive!(drive_bars, BarReader, Bars);
drive!(drive_earnings, EarningsReader, Earnings);
drive!(drive_economic, EconomicReader, Economic);
