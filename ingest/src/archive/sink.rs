//! [`ArchiveSink`]: the vendor importer's all-or-nothing sink into the quote archive.

use std::collections::BTreeMap;

use object_store::path::Path;
use optics_schemas::OptionQuote;

use super::manifest::{ManifestEntry, encode_commit, encode_manifest, valid_import_id};
use super::{
    ArchiveError, PartInfo, QuoteArchive, SessionKey, delete_if_present, group_by_session,
    list_recursive,
};
use crate::vendor::{ImportBatch, ImportSink, SinkError};

/// Default rows of one session buffered before they are staged as a part.
pub const DEFAULT_FLUSH_ROWS: usize = 128 * 1024;

/// An [`ImportSink`] that archives an imported file's quotes as one import, all or nothing
/// (the protocol is in the [module documentation](super)).
///
/// - **stage**: rows are grouped by session and buffered; a session whose buffer reaches the
///   flush size (default [`DEFAULT_FLUSH_ROWS`]), or every session when all buffers together
///   reach four times it, is written as a sorted Parquet part under `imports/<id>/`. Memory
///   stays bounded; nothing is visible.
/// - **commit**: the remaining buffers are staged, one manifest per session is created at the
///   session's next number, then the commit record: from that single create-only `PUT` on,
///   every part of the file is visible, and not one before it. If anything fails before the
///   commit point, the manifests and parts are deleted again and the archive is as it was.
/// - **abort**: buffers are dropped and the parts staged deleted; nothing of the file remains.
/// - **crash / drop without commit**: only objects no reader follows remain (parts, maybe
///   manifests of an import without a commit record), which
///   [`QuoteArchive::cleanup_uncommitted`] removes. Dropping the sink deliberately does *not*
///   clean up, so that a drop behaves as a crash does.
///
/// A sink commits once; the import id must be new to the archive (it names the import's
/// directory and its manifests, and stays there once committed).
///
/// Sync over async: the sink owns a current-thread tokio runtime and blocks on the archive's
/// async calls, so it must not be used from inside a tokio runtime (use
/// `tokio::task::spawn_blocking`, or [`QuoteArchive`] directly).
pub struct ArchiveSink {
    archive: QuoteArchive,
    runtime: tokio::runtime::Runtime,
    import_id: String,
    flush_rows: usize,
    buffers: BTreeMap<SessionKey, Vec<OptionQuote>>,
    buffered_rows: usize,
    /// The parts staged per session, in staging order.
    staged: BTreeMap<SessionKey, Vec<ManifestEntry>>,
    staged_paths: Vec<Path>,
    next_number: u32,
    published: Vec<PartInfo>,
    committed: bool,
}

impl std::fmt::Debug for ArchiveSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArchiveSink")
            .field("archive", &self.archive)
            .field("import_id", &self.import_id)
            .field("flush_rows", &self.flush_rows)
            .field("buffered_rows", &self.buffered_rows)
            .field("staged", &self.staged_paths.len())
            .field("committed", &self.committed)
            .finish_non_exhaustive()
    }
}

impl ArchiveSink {
    /// A sink into `archive` for the import `import_id`: 1–64 characters of `[A-Za-z0-9._-]`,
    /// not `.` or `..`, and not used by the archive yet ([`ArchiveError::ImportIdInUse`]).
    pub fn new(archive: QuoteArchive, import_id: &str) -> Result<Self, ArchiveError> {
        if !valid_import_id(import_id) {
            return Err(ArchiveError::InvalidImportId(import_id.to_owned()));
        }
        // I/O and timers on: a remote archive's client (S3) needs both.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ArchiveError::Io(e.to_string()))?;
        let dir = archive.import_dir(import_id);
        // Objects, not directories: a local directory keeps empty ones after a cleanup.
        let in_use = !runtime
            .block_on(list_recursive(&**archive.store(), &dir))?
            .is_empty();
        if in_use {
            return Err(ArchiveError::ImportIdInUse(import_id.to_owned()));
        }
        Ok(Self {
            archive,
            runtime,
            import_id: import_id.to_owned(),
            flush_rows: DEFAULT_FLUSH_ROWS,
            buffers: BTreeMap::new(),
            buffered_rows: 0,
            staged: BTreeMap::new(),
            staged_paths: Vec::new(),
            next_number: 0,
            published: Vec::new(),
            committed: false,
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

    /// The import id.
    pub fn import_id(&self) -> &str {
        &self.import_id
    }

    /// Parts staged and not yet committed or discarded.
    pub fn staged_objects(&self) -> Vec<Path> {
        if self.committed {
            Vec::new()
        } else {
            self.staged_paths.clone()
        }
    }

    /// The parts published by the commit.
    pub fn published(&self) -> &[PartInfo] {
        &self.published
    }

    /// Stages rows (see the type's docs). Fallible counterpart of [`ImportSink::stage`].
    pub fn stage_quotes(&mut self, rows: Vec<OptionQuote>) -> Result<(), ArchiveError> {
        if self.committed {
            return Err(ArchiveError::ImportIdInUse(self.import_id.clone()));
        }
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

    /// Commits everything staged as one import (see the type's docs) and returns its parts.
    pub fn commit_parts(&mut self) -> Result<&[PartInfo], ArchiveError> {
        if self.committed {
            return Err(ArchiveError::ImportIdInUse(self.import_id.clone()));
        }
        self.published.clear();
        if let Err(e) = self.flush_all() {
            self.discard();
            return Err(e);
        }
        if self.staged.is_empty() {
            // An empty file: nothing to make visible, and the id stays free.
            return Ok(&self.published);
        }
        let (archive, import_id, staged) = (&self.archive, &self.import_id, &self.staged);
        let result = self.runtime.block_on(async {
            let mut manifests = Vec::with_capacity(staged.len());
            let mut published = Vec::new();
            let outcome =
                write_manifests(archive, import_id, staged, &mut manifests, &mut published).await;
            let outcome = match outcome {
                Ok(()) => commit(archive, import_id, &manifests).await,
                Err(e) => Err(e),
            };
            match outcome {
                Ok(()) => Ok(published),
                Err(e) => {
                    // Nothing is visible yet: take back the manifests (the parts go with
                    // `discard`). Best effort; leftovers are invisible and cleaned up later.
                    for manifest in &manifests {
                        let _ = delete_if_present(&**archive.store(), manifest).await;
                    }
                    Err(e)
                }
            }
        });
        match result {
            Ok(published) => {
                self.published = published;
                self.committed = true;
                self.staged.clear();
                self.staged_paths.clear();
                Ok(&self.published)
            }
            Err(e) => {
                self.discard();
                Err(e)
            }
        }
    }

    /// Drops the buffers and deletes the staged parts (best effort).
    fn discard(&mut self) {
        self.buffers.clear();
        self.buffered_rows = 0;
        self.staged.clear();
        let staged = std::mem::take(&mut self.staged_paths);
        let store = self.archive.store();
        self.runtime.block_on(async {
            for path in &staged {
                let _ = delete_if_present(&**store, path).await;
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

    /// Writes the buffer of `session` as the import's next part.
    fn flush_session(&mut self, session: &SessionKey) -> Result<(), ArchiveError> {
        let Some(mut rows) = self.buffers.remove(session) else {
            return Ok(());
        };
        self.buffered_rows -= rows.len();
        if rows.is_empty() {
            return Ok(());
        }
        let bytes = self.archive.encode_part(&mut rows)?;
        let entry = ManifestEntry {
            number: self.next_number,
            rows: rows.len() as u64,
            bytes: bytes.len() as u64,
        };
        let path = self
            .archive
            .import_part_path(&self.import_id, session, entry.number);
        self.runtime
            .block_on(self.archive.put_create(&path, bytes.into()))?;
        self.next_number = self
            .next_number
            .checked_add(1)
            .ok_or(ArchiveError::SequenceExhausted)?;
        self.staged.entry(session.clone()).or_default().push(entry);
        self.staged_paths.push(path);
        Ok(())
    }
}

/// Creates one manifest per session at the session's next free number; records each
/// manifest written in `manifests` (also on failure, for the rollback) and the parts it names
/// in `published`.
async fn write_manifests(
    archive: &QuoteArchive,
    import_id: &str,
    staged: &BTreeMap<SessionKey, Vec<ManifestEntry>>,
    manifests: &mut Vec<Path>,
    published: &mut Vec<PartInfo>,
) -> Result<(), ArchiveError> {
    for (session, entries) in staged {
        let text = encode_manifest(import_id, entries);
        let mut seq = archive.next_seq(session).await?;
        let path = loop {
            let path = archive.manifest_path(session, seq, import_id);
            match archive.put_create(&path, text.clone().into()).await {
                Ok(()) => break path,
                Err(ArchiveError::Store(object_store::Error::AlreadyExists { .. })) => {
                    seq = seq.checked_add(1).ok_or(ArchiveError::SequenceExhausted)?;
                }
                Err(e) => return Err(e),
            }
        };
        manifests.push(path);
        published.extend(entries.iter().map(|e| PartInfo {
            session: session.clone(),
            seq,
            path: archive.import_part_path(import_id, session, e.number),
            bytes: e.bytes,
            import: Some(import_id.to_owned()),
        }));
    }
    Ok(())
}

/// Writes the commit record: the commit point.
async fn commit(
    archive: &QuoteArchive,
    import_id: &str,
    manifests: &[Path],
) -> Result<(), ArchiveError> {
    let record = archive.commit_record_path(import_id);
    match archive
        .put_create(&record, encode_commit(manifests).into())
        .await
    {
        Ok(()) => Ok(()),
        // A PUT can fail after the object landed (a lost response): then the import did
        // commit, and rolling back would delete parts readers already follow.
        Err(e) => match archive.is_committed(import_id).await {
            Ok(true) => Ok(()),
            _ => Err(e),
        },
    }
}

impl ImportSink for ArchiveSink {
    fn stage(&mut self, batch: ImportBatch) -> Result<(), SinkError> {
        match batch {
            ImportBatch::Quotes(rows) => Ok(self.stage_quotes(rows)?),
            other => Err(Box::new(ArchiveError::NotQuotes(other.what()))),
        }
    }

    fn commit(&mut self) -> Result<(), SinkError> {
        self.commit_parts()?;
        Ok(())
    }

    fn abort(&mut self) {
        if !self.committed {
            self.discard();
        }
    }
}
