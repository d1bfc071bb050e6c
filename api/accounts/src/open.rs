//! Choosing the account store from configuration: SQLite beside the data directory by
//! default, PostgreSQL when `--db` is a `postgres://` URL.

use std::path::Path;
use std::sync::Arc;

use super::{AccountError, AccountStore, PgStore, SqliteStore};

/// The SQLite file name inside the data directory.
pub const DEFAULT_SQLITE_FILE: &str = "accounts.sqlite3";

/// Opens the configured store and runs its migrations.
///
/// - `None`: SQLite at `<data_dir>/accounts.sqlite3`;
/// - `sqlite://<path>` (or `sqlite:<path>`): SQLite at that file;
/// - `postgres://…` or `postgresql://…`: PostgreSQL.
pub async fn open_store(
    db: Option<&str>,
    data_dir: &Path,
) -> Result<Arc<dyn AccountStore>, AccountError> {
    match db.map(str::trim).filter(|d| !d.is_empty()) {
        None => open_sqlite(data_dir.join(DEFAULT_SQLITE_FILE)).await,
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Arc::new(PgStore::connect(url).await?))
        }
        Some(url) => match url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            Some(path) if !path.is_empty() => open_sqlite(path.into()).await,
            _ => Err(AccountError::InvalidInput(
                "--db must be postgres://…, postgresql://… or sqlite://<file>".into(),
            )),
        },
    }
}

async fn open_sqlite(path: std::path::PathBuf) -> Result<Arc<dyn AccountStore>, AccountError> {
    let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
        .await
        .map_err(|e| AccountError::Internal(format!("opening the SQLite store: {e}")))??;
    Ok(Arc::new(store))
}
