//! The embedded account store: one SQLite file (WAL mode) beside the data directory.
//!
//! Reads — above all the per-request token lookup — run inline on the calling task from a
//! small pool of read connections: a point lookup through a cached prepared statement on a
//! page-cached file takes a few microseconds, less than handing it to another thread would.
//! Writes (account and token changes, sessions) are rare and may wait on a disk sync, so they
//! run on tokio's blocking pool through the single writer connection; WAL lets readers go on
//! meanwhile. Multi-row changes (the active-token cap) run in `BEGIN IMMEDIATE` transactions.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::AccountError;
use super::migrate::{CREATE_MIGRATIONS_TABLE, SQLITE};
use super::model::{
    Account, AccountId, AuthorizationCode, Credentials, MonthlyUsage, NewAccount, NewSession,
    NewToken, OAuthClient, PasswordHashPhc, Plan, TokenGrant, TokenInfo,
};
use super::rows::{
    ACCOUNT_COLUMNS, ADD_USAGE_TEMPLATE, COUNT_CLIENTS, DROP_ENDED_CODES, DROP_UNUSED_CLIENTS,
    GRANT_SELECT, INSERT_CLIENT, INSERT_CODE, MARK_CLIENT_USED, MONTH_USAGE_TEMPLATE, RawAccount,
    RawClient, RawCode, RawGrant, RawToken, RawUsage, SELECT_CLIENT, TAKE_CODE, TOKEN_COLUMNS,
    count_to_db, opt_secs, redirect_uris_to_db, secs, units_to_db, with_placeholders,
};
use super::store::{AccountStore, StoreFuture};
use crate::token::TokenHash;

/// Read connections kept open (two cores: more would only queue on the CPU).
const READ_CONNECTIONS: usize = 4;
/// How long a statement waits for a lock held by another connection or process (the CLI).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// SQLite's extended code for a UNIQUE violation.
const SQLITE_CONSTRAINT_UNIQUE: i32 = 2067;

/// The SQLite [`AccountStore`]. Cloning shares the connections.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

fn lock(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic while holding a connection leaves it usable (SQLite rolls back an unfinished
    // transaction when the next one begins), so a poisoned lock is taken over.
    connection
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates the database file readable by its owner only (it holds password hashes) before
/// SQLite opens it, which would create it under the process umask; SQLite gives its WAL and
/// shared-memory files the database file's mode. An existing file is left as it is.
fn create_private(path: &Path) -> Result<(), AccountError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(AccountError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

fn open_connection(path: &Path) -> Result<Connection, AccountError> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(|e| AccountError::Unavailable(format!("{}: {e}", path.display())))?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never wait for the writer. NORMAL sync is durable across process crashes
    // (a power cut may lose the last commits, never corrupt the file).
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    // The bundled SQLite is built with STAT4, which re-prepares a cached statement whenever a
    // parameter it could plan on is rebound — on every token lookup. Our queries are point
    // lookups on unique keys whose plan never depends on the value, so the planner stability
    // guarantee (one plan per statement) keeps the cached statements as they are.
    connection.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(connection)
}

impl SqliteStore {
    /// Opens (creating if needed) the store at `path`, its parent directory included, and
    /// applies missing migrations. Blocking: call it at start-up (or through
    /// [`super::open_store`], which runs it on the blocking pool).
    pub fn open(path: &Path) -> Result<Self, AccountError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| AccountError::Io {
                path: parent.to_owned(),
                source,
            })?;
        }
        create_private(path)?;
        let mut writer = open_connection(path)?;
        migrate(&mut writer)?;
        let readers = (0..READ_CONNECTIONS)
            .map(|_| open_connection(path).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: Mutex::new(writer),
                readers,
                next_reader: AtomicUsize::new(0),
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `read` on a free read connection (or waits for the next one in turn).
    fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, AccountError>,
    ) -> Result<T, AccountError> {
        let readers = &self.inner.readers;
        let start = self.inner.next_reader.fetch_add(1, Ordering::Relaxed);
        for offset in 0..readers.len() {
            if let Ok(connection) = readers[(start + offset) % readers.len()].try_lock() {
                return read(&connection);
            }
        }
        read(&lock(&readers[start % readers.len()]))
    }

    /// Runs `write` on the writer connection, on tokio's blocking pool.
    fn write<T, F>(&self, write: F) -> StoreFuture<'static, T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, AccountError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || write(&mut lock(&inner.writer)))
                .await
                .map_err(|e| AccountError::Internal(format!("sqlite write task: {e}")))?
        })
    }

    /// Runs `read` now and wraps its result in a ready future.
    fn ready<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, AccountError>,
    ) -> StoreFuture<'static, T> {
        Box::pin(std::future::ready(self.read(read)))
    }
}

fn migrate(connection: &mut Connection) -> Result<(), AccountError> {
    connection.execute_batch(CREATE_MIGRATIONS_TABLE)?;
    for migration in SQLITE {
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let applied: bool = transaction.query_row(
            "SELECT EXISTS (SELECT 1 FROM optics_schema_migrations WHERE version = ?1)",
            [migration.version],
            |row| row.get(0),
        )?;
        if applied {
            continue;
        }
        let fail = |e: rusqlite::Error| AccountError::Migration {
            version: migration.version,
            name: migration.name,
            reason: e.to_string(),
        };
        transaction.execute_batch(migration.sql).map_err(fail)?;
        transaction
            .execute(
                "INSERT INTO optics_schema_migrations (version, name, applied_at) \
                 VALUES (?1, ?2, CAST(strftime('%s', 'now') AS INTEGER))",
                params![migration.version, migration.name],
            )
            .map_err(fail)?;
        transaction.commit().map_err(fail)?;
    }
    Ok(())
}

fn account_where(
    connection: &Connection,
    condition: &str,
    value: &dyn rusqlite::ToSql,
) -> Result<Option<Account>, AccountError> {
    let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE {condition}");
    connection
        .prepare_cached(&sql)?
        .query_row([value], |row| RawAccount::read(row))
        .optional()?
        .map(RawAccount::into_account)
        .transpose()
}

fn token_where(
    connection: &Connection,
    token_id: &str,
    account_id: Option<AccountId>,
) -> Result<Option<TokenInfo>, AccountError> {
    let sql = format!(
        "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE id = ?1 AND (?2 IS NULL OR account_id = ?2)"
    );
    connection
        .prepare_cached(&sql)?
        .query_row(params![token_id, account_id], |row| RawToken::read(row))
        .optional()?
        .map(RawToken::into_info)
        .transpose()
}

fn is_unique_violation(error: &rusqlite::Error) -> bool {
    matches!(error, rusqlite::Error::SqliteFailure(e, _)
        if e.code == ErrorCode::ConstraintViolation && e.extended_code == SQLITE_CONSTRAINT_UNIQUE)
}

fn update_account(
    connection: &Connection,
    id: AccountId,
    assignments: &str,
    values: &[&dyn rusqlite::ToSql],
) -> Result<Account, AccountError> {
    let sql =
        format!("UPDATE accounts SET {assignments} WHERE id = ?1 RETURNING {ACCOUNT_COLUMNS}");
    let mut all: Vec<&dyn rusqlite::ToSql> = vec![&id];
    all.extend_from_slice(values);
    connection
        .prepare_cached(&sql)?
        .query_row(all.as_slice(), |row| RawAccount::read(row))
        .optional()?
        .ok_or(AccountError::AccountNotFound)?
        .into_account()
}

impl AccountStore for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn create_account(&self, account: NewAccount) -> StoreFuture<'_, Account> {
        self.write(move |connection| {
            let budget = units_to_db(account.monthly_budget_units)?;
            let sql = format!(
                "INSERT INTO accounts (email, password_hash, plan, plan_expires_at, \
                 monthly_budget_units, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                 RETURNING {ACCOUNT_COLUMNS}"
            );
            let inserted = connection.prepare_cached(&sql)?.query_row(
                params![
                    account.email,
                    account.password_hash.as_str(),
                    account.plan.as_str(),
                    opt_secs(account.plan_expires_at),
                    budget,
                    secs(account.created_at),
                ],
                |row| RawAccount::read(row),
            );
            match inserted {
                Ok(raw) => raw.into_account(),
                Err(e) if is_unique_violation(&e) => Err(AccountError::EmailTaken),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn account(&self, id: AccountId) -> StoreFuture<'_, Option<Account>> {
        self.ready(|c| account_where(c, "id = ?1", &id))
    }

    fn credentials<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Credentials>> {
        self.ready(|connection| {
            let sql =
                format!("SELECT {ACCOUNT_COLUMNS}, password_hash FROM accounts WHERE email = ?1");
            let row = connection
                .prepare_cached(&sql)?
                .query_row([email], |row| {
                    Ok((RawAccount::read(row)?, row.get::<_, String>(6)?))
                })
                .optional()?;
            row.map(|(raw, hash)| {
                Ok(Credentials {
                    account: raw.into_account()?,
                    password_hash: PasswordHashPhc::new(hash),
                })
            })
            .transpose()
        })
    }

    fn account_by_email<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Account>> {
        self.ready(|c| account_where(c, "email = ?1", &email))
    }

    fn list_accounts(&self) -> StoreFuture<'_, Vec<Account>> {
        self.ready(|connection| {
            let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY id");
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map([], |row| RawAccount::read(row))?;
            rows.map(|raw| raw?.into_account()).collect()
        })
    }

    fn count_accounts(&self) -> StoreFuture<'_, u64> {
        self.ready(|connection| {
            let count: i64 =
                connection.query_row("SELECT COUNT(*) FROM accounts", [], |r| r.get(0))?;
            Ok(u64::try_from(count).unwrap_or(0))
        })
    }

    fn set_plan(
        &self,
        id: AccountId,
        plan: Plan,
        plan_expires_at: Option<DateTime<Utc>>,
    ) -> StoreFuture<'_, Account> {
        self.write(move |connection| {
            update_account(
                connection,
                id,
                "plan = ?2, plan_expires_at = ?3",
                &[&plan.as_str(), &opt_secs(plan_expires_at)],
            )
        })
    }

    fn set_monthly_budget(
        &self,
        id: AccountId,
        monthly_budget_units: Option<u64>,
    ) -> StoreFuture<'_, Account> {
        self.write(move |connection| {
            let budget = units_to_db(monthly_budget_units)?;
            update_account(connection, id, "monthly_budget_units = ?2", &[&budget])
        })
    }

    fn insert_token(
        &self,
        token: NewToken,
        max_active: u32,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, TokenInfo> {
        self.write(move |connection| {
            // IMMEDIATE takes the write lock before counting, so two creations cannot both
            // see room for one more token.
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let exists: bool = transaction.query_row(
                "SELECT EXISTS (SELECT 1 FROM accounts WHERE id = ?1)",
                [token.account_id],
                |r| r.get(0),
            )?;
            if !exists {
                return Err(AccountError::AccountNotFound);
            }
            let active: i64 = transaction.query_row(
                "SELECT COUNT(*) FROM api_tokens WHERE account_id = ?1 AND revoked_at IS NULL \
                 AND (expires_at IS NULL OR expires_at > ?2)",
                params![token.account_id, secs(now)],
                |r| r.get(0),
            )?;
            if active >= i64::from(max_active) {
                return Err(AccountError::TokenCapReached { max: max_active });
            }
            let sql = format!(
                "INSERT INTO api_tokens (id, account_id, name, prefix, token_hash, created_at, \
                 expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING {TOKEN_COLUMNS}"
            );
            let raw = transaction.query_row(
                &sql,
                params![
                    token.id,
                    token.account_id,
                    token.name,
                    token.prefix,
                    token.hash.0.as_slice(),
                    secs(token.created_at),
                    opt_secs(token.expires_at),
                ],
                |row| RawToken::read(row),
            )?;
            transaction.commit()?;
            raw.into_info()
        })
    }

    fn list_tokens(&self, account_id: AccountId) -> StoreFuture<'_, Vec<TokenInfo>> {
        self.ready(move |connection| {
            let sql = format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE account_id = ?1 \
                 ORDER BY created_at DESC, id"
            );
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map([account_id], |row| RawToken::read(row))?;
            rows.map(|raw| raw?.into_info()).collect()
        })
    }

    fn rotate_token<'a>(
        &'a self,
        account_id: AccountId,
        token_id: &'a str,
        new_hash: TokenHash,
        new_prefix: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo> {
        let token_id = token_id.to_owned();
        let new_prefix = new_prefix.to_owned();
        self.write(move |connection| {
            // One UPDATE: the old digest is gone the moment it commits.
            let sql = format!(
                "UPDATE api_tokens SET token_hash = ?1, prefix = ?2, rotated_at = ?3 \
                 WHERE id = ?4 AND account_id = ?5 AND revoked_at IS NULL \
                 AND (expires_at IS NULL OR expires_at > ?3) RETURNING {TOKEN_COLUMNS}"
            );
            let rotated = connection
                .prepare_cached(&sql)?
                .query_row(
                    params![
                        new_hash.0.as_slice(),
                        new_prefix,
                        secs(now),
                        token_id,
                        account_id
                    ],
                    |row| RawToken::read(row),
                )
                .optional()?;
            match rotated {
                Some(raw) => raw.into_info(),
                None => match token_where(connection, &token_id, Some(account_id))? {
                    Some(_) => Err(AccountError::TokenNotActive),
                    None => Err(AccountError::TokenNotFound),
                },
            }
        })
    }

    fn revoke_token<'a>(
        &'a self,
        account_id: Option<AccountId>,
        token_id: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo> {
        let token_id = token_id.to_owned();
        self.write(move |connection| {
            let sql = format!(
                "UPDATE api_tokens SET revoked_at = ?1 WHERE id = ?2 \
                 AND (?3 IS NULL OR account_id = ?3) AND revoked_at IS NULL \
                 RETURNING {TOKEN_COLUMNS}"
            );
            let revoked = connection
                .prepare_cached(&sql)?
                .query_row(params![secs(now), token_id, account_id], |row| {
                    RawToken::read(row)
                })
                .optional()?;
            match revoked {
                Some(raw) => raw.into_info(),
                None => token_where(connection, &token_id, account_id)?
                    .ok_or(AccountError::TokenNotFound),
            }
        })
    }

    fn token_grant<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, Option<TokenGrant>> {
        self.ready(|connection| {
            let sql = format!("{GRANT_SELECT}?1");
            connection
                .prepare_cached(&sql)?
                .query_row([hash.0.as_slice()], |row| RawGrant::read(row))
                .optional()?
                .map(RawGrant::into_grant)
                .transpose()
        })
    }

    fn create_session(&self, session: NewSession) -> StoreFuture<'_, ()> {
        self.write(move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute(
                "DELETE FROM sessions WHERE expires_at <= ?1",
                [secs(session.created_at)],
            )?;
            transaction.execute(
                "INSERT INTO sessions (session_hash, account_id, created_at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    session.hash.0.as_slice(),
                    session.account_id,
                    secs(session.created_at),
                    secs(session.expires_at),
                ],
            )?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn session_account<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AccountId>> {
        self.ready(move |connection| {
            Ok(connection
                .prepare_cached(
                    "SELECT account_id FROM sessions WHERE session_hash = ?1 AND expires_at > ?2",
                )?
                .query_row(params![hash.0.as_slice(), secs(now)], |r| r.get(0))
                .optional()?)
        })
    }

    fn delete_session<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, ()> {
        let hash = *hash;
        self.write(move |connection| {
            connection.execute(
                "DELETE FROM sessions WHERE session_hash = ?1",
                [hash.0.as_slice()],
            )?;
            Ok(())
        })
    }

    fn register_oauth_client(
        &self,
        client: OAuthClient,
        max_clients: u64,
        unused_before: DateTime<Utc>,
    ) -> StoreFuture<'_, ()> {
        self.write(move |connection| {
            let redirect_uris = redirect_uris_to_db(&client.redirect_uris)?;
            let max = count_to_db(max_clients)?;
            // IMMEDIATE: the count and the insert see no other registration in between.
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let count = |t: &rusqlite::Transaction<'_>| -> rusqlite::Result<i64> {
                t.query_row(COUNT_CLIENTS, [], |r| r.get(0))
            };
            if count(&transaction)? >= max {
                transaction.execute(
                    &with_placeholders(DROP_UNUSED_CLIENTS, '?'),
                    [secs(unused_before)],
                )?;
                if count(&transaction)? >= max {
                    return Err(AccountError::ClientCapReached);
                }
            }
            transaction.execute(
                &with_placeholders(INSERT_CLIENT, '?'),
                params![
                    client.client_id,
                    client.client_name,
                    redirect_uris,
                    secs(client.created_at)
                ],
            )?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn oauth_client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<OAuthClient>> {
        self.ready(move |connection| {
            connection
                .prepare_cached(&with_placeholders(SELECT_CLIENT, '?'))?
                .query_row([client_id], |row| RawClient::read(row))
                .optional()?
                .map(RawClient::into_client)
                .transpose()
        })
    }

    fn insert_authorization_code(&self, code: AuthorizationCode) -> StoreFuture<'_, ()> {
        self.write(move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            transaction.execute(
                &with_placeholders(DROP_ENDED_CODES, '?'),
                [secs(code.created_at)],
            )?;
            transaction.execute(
                &with_placeholders(INSERT_CODE, '?'),
                params![
                    code.hash.0.as_slice(),
                    code.client_id,
                    code.account_id,
                    code.redirect_uri,
                    code.code_challenge,
                    code.resource,
                    secs(code.created_at),
                    secs(code.expires_at),
                ],
            )?;
            transaction.execute(
                &with_placeholders(MARK_CLIENT_USED, '?'),
                params![code.client_id, secs(code.created_at)],
            )?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn take_authorization_code<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AuthorizationCode>> {
        let hash = *hash;
        self.write(move |connection| {
            let raw = connection
                .prepare_cached(&with_placeholders(TAKE_CODE, '?'))?
                .query_row([hash.0.as_slice()], |row| RawCode::read(row))
                .optional()?;
            let code = raw.map(RawCode::into_code).transpose()?;
            Ok(code.filter(|code| code.expires_at > now))
        })
    }

    fn add_monthly_usage(&self, usage: Vec<MonthlyUsage>) -> StoreFuture<'_, ()> {
        if usage.is_empty() {
            return Box::pin(std::future::ready(Ok(())));
        }
        self.write(move |connection| {
            let transaction =
                connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let sql = with_placeholders(ADD_USAGE_TEMPLATE, '?');
                let mut statement = transaction.prepare_cached(&sql)?;
                for row in &usage {
                    statement.execute(params![
                        row.month,
                        row.account_id,
                        row.endpoint,
                        count_to_db(row.calls)?,
                        count_to_db(row.units)?,
                    ])?;
                }
            }
            transaction.commit()?;
            Ok(())
        })
    }

    fn monthly_usage<'a>(&'a self, month: &'a str) -> StoreFuture<'a, Vec<MonthlyUsage>> {
        self.ready(move |connection| {
            let sql = with_placeholders(MONTH_USAGE_TEMPLATE, '?');
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map([month], |row| RawUsage::read(row))?;
            rows.map(|raw| raw?.into_usage(month)).collect()
        })
    }
}

#[cfg(all(test, unix))]
mod private_database_tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::SqliteStore;

    #[test]
    fn a_new_database_is_readable_by_its_owner_only() {
        let dir = std::env::temp_dir().join(format!("optics-sqlite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("accounts.sqlite3");
        let _ = std::fs::remove_file(&path);
        let store = SqliteStore::open(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
