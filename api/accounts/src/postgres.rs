//! The shared account store: PostgreSQL (`--db postgres://…`), for API replicas.
//!
//! A few connections, each used by one task at a time (transactions need that); a closed
//! connection is replaced on next use. Rows map exactly as in SQLite (Unix-second instants,
//! 32-byte digests). The active-token cap locks the account row (`FOR UPDATE`) before counting,
//! so concurrent creations on any replicas serialise per account.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, GenericClient, NoTls, Row};

use super::AccountError;
use super::migrate::{CREATE_MIGRATIONS_TABLE, PG_MIGRATION_LOCK, POSTGRES};
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

/// Connections kept per store.
const CONNECTIONS: usize = 4;
/// Advisory-lock key that serialises OAuth client registrations across replicas ("oclt").
const PG_CLIENTS_LOCK: i64 = 0x6f63_6c74;
/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The PostgreSQL [`AccountStore`]. Cloning shares the connections.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    schema: Option<String>,
    slots: Vec<Mutex<Option<Client>>>,
    next: AtomicUsize,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may carry a password: show only where it points.
        f.debug_struct("PgStore")
            .field("hosts", &self.inner.config.get_hosts().len())
            .field("dbname", &self.inner.config.get_dbname())
            .field("schema", &self.inner.schema)
            .finish_non_exhaustive()
    }
}

/// Whether `name` is a plain lower-case SQL identifier (safe to splice into `search_path`).
fn is_plain_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl PgStore {
    /// Connects to `url` and applies missing migrations in the default schema.
    pub async fn connect(url: &str) -> Result<Self, AccountError> {
        Self::open(url, None).await
    }

    /// Connects with every table in `schema` (created if missing; a plain lower-case
    /// identifier): deployments sharing a database, and one schema per test run.
    pub async fn connect_in_schema(url: &str, schema: &str) -> Result<Self, AccountError> {
        if !is_plain_identifier(schema) {
            return Err(AccountError::InvalidInput(format!(
                "schema {schema:?} must be a lower-case identifier"
            )));
        }
        Self::open(url, Some(schema.to_owned())).await
    }

    async fn open(url: &str, schema: Option<String>) -> Result<Self, AccountError> {
        let mut config = Config::from_str(url)
            .map_err(|e| AccountError::InvalidInput(format!("database URL: {e}")))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("optics-api");
        if let Some(schema) = &schema {
            // The schema must exist before a connection can use it as search_path.
            let bootstrap = connect_client(&config).await?;
            bootstrap
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .await
                .or_else(|e| {
                    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })?;
            config.options(format!("-c search_path={schema}"));
        }
        let store = Self {
            inner: Arc::new(Inner {
                config,
                schema,
                slots: (0..CONNECTIONS).map(|_| Mutex::new(None)).collect(),
                next: AtomicUsize::new(0),
            }),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Drops the schema this store was opened in, with everything in it (test clean-up).
    pub async fn drop_schema(&self) -> Result<(), AccountError> {
        let Some(schema) = &self.inner.schema else {
            return Err(AccountError::InvalidInput(
                "this store uses the default schema".into(),
            ));
        };
        let slot = self.client().await?;
        let client = slot
            .as_ref()
            .ok_or_else(|| AccountError::Unavailable("no connection".into()))?;
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await?;
        Ok(())
    }

    /// A connection for this task alone, (re)connected if needed.
    async fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, AccountError> {
        let slots = &self.inner.slots;
        let start = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let mut guard = None;
        for offset in 0..slots.len() {
            if let Ok(slot) = slots[(start + offset) % slots.len()].try_lock() {
                guard = Some(slot);
                break;
            }
        }
        let mut guard = match guard {
            Some(guard) => guard,
            None => slots[start % slots.len()].lock().await,
        };
        if guard.as_ref().is_none_or(Client::is_closed) {
            *guard = Some(connect_client(&self.inner.config).await?);
        }
        Ok(guard)
    }

    async fn migrate(&self) -> Result<(), AccountError> {
        let mut slot = self.client().await?;
        let client = slot
            .as_mut()
            .ok_or_else(|| AccountError::Unavailable("no connection".into()))?;
        for migration in POSTGRES {
            let fail = |e: tokio_postgres::Error| AccountError::Migration {
                version: migration.version,
                name: migration.name,
                reason: e.to_string(),
            };
            let transaction = client.transaction().await?;
            // Replicas starting together take turns; the lock ends with the transaction.
            transaction
                .execute("SELECT pg_advisory_xact_lock($1)", &[&PG_MIGRATION_LOCK])
                .await?;
            transaction.batch_execute(CREATE_MIGRATIONS_TABLE).await?;
            let version = i32::try_from(migration.version).unwrap_or(i32::MAX);
            let applied = transaction
                .query_opt(
                    "SELECT 1 FROM optics_schema_migrations WHERE version = $1",
                    &[&version],
                )
                .await?
                .is_some();
            if applied {
                transaction.commit().await?;
                continue;
            }
            transaction
                .batch_execute(migration.sql)
                .await
                .map_err(fail)?;
            transaction
                .execute(
                    "INSERT INTO optics_schema_migrations (version, name, applied_at) \
                     VALUES ($1, $2, extract(epoch FROM now())::bigint)",
                    &[&version, &migration.name],
                )
                .await
                .map_err(fail)?;
            transaction.commit().await.map_err(fail)?;
        }
        Ok(())
    }
}

async fn connect_client(config: &Config) -> Result<Client, AccountError> {
    let (client, connection) = config
        .connect(NoTls)
        .await
        .map_err(|e| AccountError::Unavailable(format!("cannot connect to PostgreSQL: {e}")))?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "PostgreSQL connection closed");
        }
    });
    Ok(client)
}

fn account_of(row: Option<Row>) -> Result<Option<Account>, AccountError> {
    row.map(|r| RawAccount::read(&r)?.into_account())
        .transpose()
}

fn token_of(row: Option<Row>) -> Result<Option<TokenInfo>, AccountError> {
    row.map(|r| RawToken::read(&r)?.into_info()).transpose()
}

async fn token_where(
    client: &impl GenericClient,
    token_id: &str,
    account_id: Option<AccountId>,
) -> Result<Option<TokenInfo>, AccountError> {
    let sql = format!(
        "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE id = $1 AND ($2::bigint IS NULL OR account_id = $2)"
    );
    token_of(client.query_opt(&sql, &[&token_id, &account_id]).await?)
}

macro_rules! with_client {
    ($store:expr, |$client:ident| $body:expr) => {{
        let store = $store;
        Box::pin(async move {
            let mut slot = store.client().await?;
            let $client = slot
                .as_mut()
                .ok_or_else(|| AccountError::Unavailable("no connection".into()))?;
            $body
        })
    }};
}

impl PgStore {
    async fn update_account(
        &self,
        id: AccountId,
        assignments: &str,
        values: &[&(dyn ToSql + Sync)],
    ) -> Result<Account, AccountError> {
        let slot = self.client().await?;
        let client = slot
            .as_ref()
            .ok_or_else(|| AccountError::Unavailable("no connection".into()))?;
        let sql =
            format!("UPDATE accounts SET {assignments} WHERE id = $1 RETURNING {ACCOUNT_COLUMNS}");
        let mut all: Vec<&(dyn ToSql + Sync)> = vec![&id];
        all.extend_from_slice(values);
        account_of(client.query_opt(&sql, &all).await?)?.ok_or(AccountError::AccountNotFound)
    }
}

impl AccountStore for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn create_account(&self, account: NewAccount) -> StoreFuture<'_, Account> {
        with_client!(self, |client| {
            let budget = units_to_db(account.monthly_budget_units)?;
            let sql = format!(
                "INSERT INTO accounts (email, password_hash, plan, plan_expires_at, \
                 monthly_budget_units, created_at) VALUES ($1, $2, $3, $4, $5, $6) \
                 RETURNING {ACCOUNT_COLUMNS}"
            );
            let inserted = client
                .query_one(
                    &sql,
                    &[
                        &account.email,
                        &account.password_hash.as_str(),
                        &account.plan.as_str(),
                        &opt_secs(account.plan_expires_at),
                        &budget,
                        &secs(account.created_at),
                    ],
                )
                .await;
            match inserted {
                Ok(row) => RawAccount::read(&row)?.into_account(),
                Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                    Err(AccountError::EmailTaken)
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    fn account(&self, id: AccountId) -> StoreFuture<'_, Option<Account>> {
        with_client!(self, |client| {
            let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1");
            account_of(client.query_opt(&sql, &[&id]).await?)
        })
    }

    fn credentials<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Credentials>> {
        with_client!(self, |client| {
            let sql =
                format!("SELECT {ACCOUNT_COLUMNS}, password_hash FROM accounts WHERE email = $1");
            client
                .query_opt(&sql, &[&email])
                .await?
                .map(|row| {
                    Ok(Credentials {
                        account: RawAccount::read(&row)?.into_account()?,
                        password_hash: PasswordHashPhc::new(row.try_get(6)?),
                    })
                })
                .transpose()
        })
    }

    fn account_by_email<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Account>> {
        with_client!(self, |client| {
            let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = $1");
            account_of(client.query_opt(&sql, &[&email]).await?)
        })
    }

    fn list_accounts(&self) -> StoreFuture<'_, Vec<Account>> {
        with_client!(self, |client| {
            let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY id");
            client
                .query(&sql, &[])
                .await?
                .iter()
                .map(|row| RawAccount::read(row)?.into_account())
                .collect()
        })
    }

    fn count_accounts(&self) -> StoreFuture<'_, u64> {
        with_client!(self, |client| {
            let count: i64 = client
                .query_one("SELECT COUNT(*) FROM accounts", &[])
                .await?
                .try_get(0)?;
            Ok(u64::try_from(count).unwrap_or(0))
        })
    }

    fn set_plan(
        &self,
        id: AccountId,
        plan: Plan,
        plan_expires_at: Option<DateTime<Utc>>,
    ) -> StoreFuture<'_, Account> {
        Box::pin(async move {
            self.update_account(
                id,
                "plan = $2, plan_expires_at = $3",
                &[&plan.as_str(), &opt_secs(plan_expires_at)],
            )
            .await
        })
    }

    fn set_monthly_budget(
        &self,
        id: AccountId,
        monthly_budget_units: Option<u64>,
    ) -> StoreFuture<'_, Account> {
        Box::pin(async move {
            let budget = units_to_db(monthly_budget_units)?;
            self.update_account(id, "monthly_budget_units = $2", &[&budget])
                .await
        })
    }

    fn insert_token(
        &self,
        token: NewToken,
        max_active: u32,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, TokenInfo> {
        with_client!(self, |client| {
            let transaction = client.transaction().await?;
            // The row lock serialises creations per account; the count that follows (a new
            // statement, so a new snapshot under READ COMMITTED) sees every committed token.
            let locked = transaction
                .query_opt(
                    "SELECT id FROM accounts WHERE id = $1 FOR UPDATE",
                    &[&token.account_id],
                )
                .await?;
            if locked.is_none() {
                return Err(AccountError::AccountNotFound);
            }
            let active: i64 = transaction
                .query_one(
                    "SELECT COUNT(*) FROM api_tokens WHERE account_id = $1 AND revoked_at IS NULL \
                     AND (expires_at IS NULL OR expires_at > $2)",
                    &[&token.account_id, &secs(now)],
                )
                .await?
                .try_get(0)?;
            if active >= i64::from(max_active) {
                return Err(AccountError::TokenCapReached { max: max_active });
            }
            let sql = format!(
                "INSERT INTO api_tokens (id, account_id, name, prefix, token_hash, created_at, \
                 expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {TOKEN_COLUMNS}"
            );
            let row = transaction
                .query_one(
                    &sql,
                    &[
                        &token.id,
                        &token.account_id,
                        &token.name,
                        &token.prefix,
                        &token.hash.0.as_slice(),
                        &secs(token.created_at),
                        &opt_secs(token.expires_at),
                    ],
                )
                .await?;
            transaction.commit().await?;
            RawToken::read(&row)?.into_info()
        })
    }

    fn list_tokens(&self, account_id: AccountId) -> StoreFuture<'_, Vec<TokenInfo>> {
        with_client!(self, |client| {
            let sql = format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE account_id = $1 \
                 ORDER BY created_at DESC, id"
            );
            client
                .query(&sql, &[&account_id])
                .await?
                .iter()
                .map(|row| RawToken::read(row)?.into_info())
                .collect()
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
        with_client!(self, |client| {
            let sql = format!(
                "UPDATE api_tokens SET token_hash = $1, prefix = $2, rotated_at = $3 \
                 WHERE id = $4 AND account_id = $5 AND revoked_at IS NULL \
                 AND (expires_at IS NULL OR expires_at > $3) RETURNING {TOKEN_COLUMNS}"
            );
            let rotated = client
                .query_opt(
                    &sql,
                    &[
                        &new_hash.0.as_slice(),
                        &new_prefix,
                        &secs(now),
                        &token_id,
                        &account_id,
                    ],
                )
                .await?;
            match token_of(rotated)? {
                Some(info) => Ok(info),
                None => match token_where(&*client, token_id, Some(account_id)).await? {
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
        with_client!(self, |client| {
            let sql = format!(
                "UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 \
                 AND ($3::bigint IS NULL OR account_id = $3) AND revoked_at IS NULL \
                 RETURNING {TOKEN_COLUMNS}"
            );
            let revoked = client
                .query_opt(&sql, &[&secs(now), &token_id, &account_id])
                .await?;
            match token_of(revoked)? {
                Some(info) => Ok(info),
                None => token_where(&*client, token_id, account_id)
                    .await?
                    .ok_or(AccountError::TokenNotFound),
            }
        })
    }

    fn token_grant<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, Option<TokenGrant>> {
        with_client!(self, |client| {
            let sql = format!("{GRANT_SELECT}$1");
            client
                .query_opt(&sql, &[&hash.0.as_slice()])
                .await?
                .map(|row| RawGrant::read(&row)?.into_grant())
                .transpose()
        })
    }

    fn create_session(&self, session: NewSession) -> StoreFuture<'_, ()> {
        with_client!(self, |client| {
            client
                .execute(
                    "DELETE FROM sessions WHERE expires_at <= $1",
                    &[&secs(session.created_at)],
                )
                .await?;
            client
                .execute(
                    "INSERT INTO sessions (session_hash, account_id, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4)",
                    &[
                        &session.hash.0.as_slice(),
                        &session.account_id,
                        &secs(session.created_at),
                        &secs(session.expires_at),
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn session_account<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AccountId>> {
        with_client!(self, |client| {
            Ok(client
                .query_opt(
                    "SELECT account_id FROM sessions WHERE session_hash = $1 AND expires_at > $2",
                    &[&hash.0.as_slice(), &secs(now)],
                )
                .await?
                .map(|row| row.try_get(0))
                .transpose()?)
        })
    }

    fn delete_session<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, ()> {
        with_client!(self, |client| {
            client
                .execute(
                    "DELETE FROM sessions WHERE session_hash = $1",
                    &[&hash.0.as_slice()],
                )
                .await?;
            Ok(())
        })
    }

    fn register_oauth_client(
        &self,
        client: OAuthClient,
        max_clients: u64,
        unused_before: DateTime<Utc>,
    ) -> StoreFuture<'_, ()> {
        with_client!(self, |client_slot| {
            let redirect_uris = redirect_uris_to_db(&client.redirect_uris)?;
            let max = count_to_db(max_clients)?;
            let transaction = client_slot.transaction().await?;
            // Registrations on several replicas serialise on a transaction-scoped advisory
            // lock, so the count and the insert see no other registration in between.
            transaction
                .execute("SELECT pg_advisory_xact_lock($1)", &[&PG_CLIENTS_LOCK])
                .await?;
            let count = async |t: &tokio_postgres::Transaction<'_>| -> Result<i64, AccountError> {
                Ok(t.query_one(COUNT_CLIENTS, &[]).await?.try_get(0)?)
            };
            if count(&transaction).await? >= max {
                transaction
                    .execute(
                        &with_placeholders(DROP_UNUSED_CLIENTS, '$'),
                        &[&secs(unused_before)],
                    )
                    .await?;
                if count(&transaction).await? >= max {
                    return Err(AccountError::ClientCapReached);
                }
            }
            transaction
                .execute(
                    &with_placeholders(INSERT_CLIENT, '$'),
                    &[
                        &client.client_id,
                        &client.client_name,
                        &redirect_uris,
                        &secs(client.created_at),
                    ],
                )
                .await?;
            transaction.commit().await?;
            Ok(())
        })
    }

    fn oauth_client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<OAuthClient>> {
        with_client!(self, |client| {
            client
                .query_opt(&with_placeholders(SELECT_CLIENT, '$'), &[&client_id])
                .await?
                .map(|row| RawClient::read(&row)?.into_client())
                .transpose()
        })
    }

    fn insert_authorization_code(&self, code: AuthorizationCode) -> StoreFuture<'_, ()> {
        with_client!(self, |client| {
            let transaction = client.transaction().await?;
            transaction
                .execute(
                    &with_placeholders(DROP_ENDED_CODES, '$'),
                    &[&secs(code.created_at)],
                )
                .await?;
            transaction
                .execute(
                    &with_placeholders(INSERT_CODE, '$'),
                    &[
                        &code.hash.0.as_slice(),
                        &code.client_id,
                        &code.account_id,
                        &code.redirect_uri,
                        &code.code_challenge,
                        &code.resource,
                        &secs(code.created_at),
                        &secs(code.expires_at),
                    ],
                )
                .await?;
            transaction
                .execute(
                    &with_placeholders(MARK_CLIENT_USED, '$'),
                    &[&code.client_id, &secs(code.created_at)],
                )
                .await?;
            transaction.commit().await?;
            Ok(())
        })
    }

    fn take_authorization_code<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AuthorizationCode>> {
        with_client!(self, |client| {
            let row = client
                .query_opt(&with_placeholders(TAKE_CODE, '$'), &[&hash.0.as_slice()])
                .await?;
            let code = row
                .map(|row| RawCode::read(&row)?.into_code())
                .transpose()?;
            Ok(code.filter(|code| code.expires_at > now))
        })
    }

    fn add_monthly_usage(&self, usage: Vec<MonthlyUsage>) -> StoreFuture<'_, ()> {
        with_client!(self, |client| {
            if usage.is_empty() {
                return Ok(());
            }
            let transaction = client.transaction().await?;
            let statement = transaction
                .prepare(&with_placeholders(ADD_USAGE_TEMPLATE, '$'))
                .await?;
            for row in &usage {
                transaction
                    .execute(
                        &statement,
                        &[
                            &row.month,
                            &row.account_id,
                            &row.endpoint,
                            &count_to_db(row.calls)?,
                            &count_to_db(row.units)?,
                        ],
                    )
                    .await?;
            }
            transaction.commit().await?;
            Ok(())
        })
    }

    fn monthly_usage<'a>(&'a self, month: &'a str) -> StoreFuture<'a, Vec<MonthlyUsage>> {
        with_client!(self, |client| {
            client
                .query(&with_placeholders(MONTH_USAGE_TEMPLATE, '$'), &[&month])
                .await?
                .iter()
                .map(|row| RawUsage::read(row)?.into_usage(month))
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_identifiers_become_schemas() {
        assert!(is_plain_identifier("optics_test_1a2b"));
        assert!(!is_plain_identifier("Optics"));
        assert!(!is_plain_identifier("a;drop"));
        assert!(!is_plain_identifier("1abc"));
        assert!(!is_plain_identifier(""));
    }
}
