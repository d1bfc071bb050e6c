//! [`ArchiveSink`]: the vendor importer's all-or-nothing sink into the quote archive.

use std::collections::BTreeMap;

use object_store::ObjectStoreExt;
use object_store::path::Path;
use optics_schemas::OptionQuote;

use super::{
    ArchiveError, PartInfo, QuoteArchive, SessionKey, delete_if_present, group_by_session,
};
use crate::vendor::{ImportBatch, ImportSink, SinkError};

/// Default rows of one session buffered before they are staged as a temporary part.
pub const DEFAULT_FLUSH_ROWS: usize = 128 * 1024;

/// An [`ImportSink`] that archives an imported file's quotes, all or nothing.
///
/// - **stage**: rows are grouped by session and buffered; a session whose buffer reaches the
///   flush size (default [`DEFAULT_FLUSH_ROWS`]), or every session when all buffers together
///   reach four times it, is written as a sorted Parquet part to
///   `<prefix>/_tmp/<staging id>/<n>.parquet`. Memory stays bounded; nothing is visible.
/// - **commit**: the remaining buffers are staged, then every staged part is published with
///   `rename_if_not_exists` to the next free `part-<seq>` of its session (a concurrent writer
///   that took the number pushes this one to the next). Each part appears atomically. If a
///   publish fails, the parts this commit had already published are deleted again and the
///   remaining staged objects removed, so a failed commit leaves the archive as it was. What
///   is *not* guaranteed: a reader listing the archive *during* a multi-part commit can see
///   some of the file's parts before the rest, and a crash in the middle of commit leaves the
///   parts published so far (a manifest or commit log would close that window).
/// - **abort**: buffers are dropped and staged objects deleted; nothing of the file remains.
/// - **crash / drop without commit**: only `_tmp/` objects remain, which readers never list and
///   [`QuoteArchive::cleanup_staging`] removes. Dropping the sink deliberately does *not* clean
///   up, so that a drop behaves as a crash does.
///
/// Sync over async: the sink owns a current-thread tokio runtime and blocks on the archive's
/// async calls, so it must not be used from inside a tokio runtime (use
/// `tokio::task::spawn_blocking`, or [`QuoteArchive`] directly).
///
/// The staging id names the sink's `_tmp/` directory; give every concurrent import its own
/// (e.g. the import's sequence number). It is supplied by the caller so that runs are
/// deterministic.
pub struct ArchiveSink {
    archive: QuoteArchive,
    runtime: tokio::runtime::Runtime,
    staging_dir: Path,
    flush_rows: usize,
    buffers: BTreeMap<SessionKey, Vec<OptionQuote>>,
    buffered_rows: usize,
    staged: Vec<(SessionKey, Path)>,
    next_tmp: u64,
    published: Vec<PartInfo>,
}

impl std::fmt::Debug for ArchiveSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveSink")
            .field("archive", &self.archive)
            .field("staging_dir", &self.staging_dir)
            .field("flush_rows", &self.flush_rows)
            .field("buffered_rows", &self.buffered_rows)
            .field("staged", &self.staged.len())
            .finish_non_exhaustive()
    }
}

impl ArchiveSink {
    /// A sink into `archive` staging under `_tmp/<staging_id>/`. The id is 1–64 characters of
    /// `[A-Za-z0-9._-]` and not `.` or `..`.
    pub fn new(archive: QuoteArchive, staging_id: &str) -> Result<Self, ArchiveError> {
        let valid = !staging_id.is_empty()
            && staging_id.len() <= 64
            && staging_id != "."
            && staging_id != ".."
            && staging_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !valid {
            return Err(ArchiveError::InvalidStagingId(staging_id.to_owned()));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| ArchiveError::Io(e.to_string()))?;
        let staging_dir = archive.staging_root().join(staging_id);
        Ok(Self {
            archive,
            runtime,
            staging_dir,
            flush_rows: DEFAULT_FLUSH_ROWS,
            buffers: BTreeMap::new(),
            buffered_rows: 0,
            staged: Vec::new(),
            next_tmp: 0,
            published: Vec::new(),
        })
    }

    /// Sets the rows of one session buffered before staging (0 is taken as 1).
    pub fn with_flush_rows(mut self, rows: usize) -> Self {
        self.flush_rows = rows.max(1);
        self
    }

    /// The archive written to.
    pub fn archive(&self) -> &QuoteArchive {
        &self.archive
    }

    /// Temporary objects staged and not yet published or discarded.
    pub fn staged_objects(&self) -> Vec<Path> {
        self.staged.iter().map(|(_, p)| p.clone()).collect()
    }

    /// The parts published by the last successful commit.
    pub fn published(&self) -> &[PartInfo] {
        &self.published
    }

    /// Stages rows (see the type's docs). Fallible counterpart of [`ImportSink::stage`].
    pub fn stage_quotes(&mut self, rows: Vec<OptionQuote>) -> Result<(), ArchiveError> {
        for (session, mut rows) in group_by_session(rows) {
            self.buffered_rows += rows.len();
            let buffer = self.buffers.entry(session.clone()).or_default();
            buffer.append(&mut rows);
            if buffer.len() >= self.flush_rows {
                self.flush_session(&session)?;
            }
        }
        if self.buffered_rows >= self.flush_rows.saturating_mul(4) {
            self.flush_all()?;
        }
        Ok(())
    }

    /// Publishes everything staged (see the type's docs).
    pub fn commit_parts(&mut self) -> Result<&[PartInfo], ArchiveError> {
        self.published.clear();
        if let Err(e) = self.flush_all() {
            self.discard();
            return Err(e);
        }
        let staged = std::mem::take(&mut self.staged);
        let archive = &self.archive;
        let result = self.runtime.block_on(async {
            let mut next: BTreeMap<&SessionKey, u32> = BTreeMap::new();
            let mut published = Vec::with_capacity(staged.len());
            for (i, (session, tmp)) in staged.iter().enumerate() {
                let outcome = publish(archive, &mut next, session, tmp).await;
                match outcome {
                    Ok(part) => published.push(part),
                    Err(e) => {
                        // Roll back: unpublish what this commit published, drop the rest.
                        for part in &published {
                            let _ = delete_if_present(&**archive.store(), &part.path).await;
                        }
                        for (_, rest) in &staged[i..] {
                            let _ = delete_if_present(&**archive.store(), rest).await;
                        }
                        return Err(e);
                    }
                }
            }
            Ok(published)
        });
        self.published = result?;
        Ok(&self.published)
    }

    /// Drops the buffers and deletes the staged objects (best effort).
    fn discard(&mut self) {
        self.buffers.clear();
        self.buffered_rows = 0;
        let staged = std::mem::take(&mut self.staged);
        let store = self.archive.store();
        self.runtime.block_on(async {
            for (_, tmp) in &staged {
                let _ = delete_if_present(&**store, tmp).await;
            }
        });
    }

    fn flush_all(&mut self) -> Result<(), ArchiveError> {
        let sessions: Vec<SessionKey> = self.buffers.keys().cloned().collect();
        for session in sessions {
            self.flush_session(&session)?;
        }
        Ok(())
    }

    /// Writes the buffer of `session` as one temporary part.
    fn flush_session(&mut self, session: &SessionKey) -> Result<(), ArchiveError> {
        let Some(mut rows) = self.buffers.remove(session) else {
            return Ok(());
        };
        self.buffered_rows -= rows.len();
        if rows.is_empty() {
            return Ok(());
        }
        let bytes = self.archive.encode_part(&mut rows)?;
        let tmp = self
            .staging_dir
            .clone()
            .join(format!("{:08}.parquet", self.next_tmp));
        self.next_tmp += 1;
        let store = self.archive.store();
        self.runtime
            .block_on(store.put(&tmp, bytes.into()))
            .map_err(ArchiveError::from)?;
        self.staged.push((session.clone(), tmp));
        Ok(())
    }
}

/// Renames `tmp` to the next free part of `session`.
async fn publish<'s>(
    archive: &QuoteArchive,
    next: &mut BTreeMap<&'s SessionKey, u32>,
    session: &'s SessionKey,
    tmp: &Path,
) -> Result<PartInfo, ArchiveError> {
    let mut seq = match next.get(session) {
        Some(&seq) => seq,
        None => archive.next_seq(session).await?,
    };
    loop {
        let path = archive.part_path(session, seq);
        match archive.store().rename_if_not_exists(tmp, &path).await {
            Ok(()) => {
                next.insert(
                    session,
                    seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted)?,
                );
                let bytes = archive.store().head(&path).await.map_or(0, |m| m.size);
                return Ok(PartInfo {
                    session: session.clone(),
                    seq,
                    path,
                    bytes,
                });
            }
            Err(object_store::Error::AlreadyExists { .. }) => {
                seq = seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl ImportSink for ArchiveSink {
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError> {
        match batch {
            ImportBatch::Quotes(rows) => Ok(self.stage_quotes(rows)?),
            ImportBatch::Bars(_) => Err(Box::new(ArchiveError::NotQuotes("daily bars"))),
        }
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        self.commit_parts()?;
        Ok(())
    }

    fn abort(&mut self) {
        self.discard();
    }
}
