//! Row values as both stores read them (integers, text, bytes) and their conversion into the
//! model, so SQLite and PostgreSQL map rows identically.

use chrono::{DateTime, Utc};

use super::AccountError;
use super::model::{
    Account, AuthorizationCode, MonthlyUsage, OAuthClient, Plan, TokenGrant, TokenInfo,
};
use crate::token::TokenHash;

/// Columns of `accounts` that make an [`Account`], in this order.
pub(crate) const ACCOUNT_COLUMNS: &str =
    "id, email, plan, plan_expires_at, monthly_budget_units, created_at";

/// Columns of `api_tokens` that make a [`TokenInfo`], in this order.
pub(crate) const TOKEN_COLUMNS: &str =
    "id, account_id, name, prefix, created_at, expires_at, revoked_at, rotated_at";

/// The grant lookup: a token and its account's plan, by digest (placeholder `{hash}`).
pub(crate) const GRANT_SELECT: &str = "SELECT t.id, t.token_hash, t.expires_at, t.revoked_at, \
     a.id, a.plan, a.plan_expires_at, a.monthly_budget_units \
     FROM api_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.token_hash = ";

/// Adds one row of monthly usage to the stored totals (same SQL on both engines but for the
/// placeholder style; `{n}` stands for the n-th parameter).
pub(crate) const ADD_USAGE_TEMPLATE: &str = "INSERT INTO monthly_usage (month, account_id, endpoint, calls, units) \
     VALUES ({1}, {2}, {3}, {4}, {5}) ON CONFLICT (month, account_id, endpoint) \
     DO UPDATE SET calls = monthly_usage.calls + excluded.calls, \
     units = monthly_usage.units + excluded.units";

/// One month's usage rows (placeholder `{1}`: the month).
pub(crate) const MONTH_USAGE_TEMPLATE: &str = "SELECT account_id, endpoint, calls, units \
     FROM monthly_usage WHERE month = {1} ORDER BY account_id, endpoint";

/// Registered OAuth clients; with [`DROP_UNUSED_CLIENTS`] and [`INSERT_CLIENT`], the steps of
/// a registration.
pub(crate) const COUNT_CLIENTS: &str = "SELECT COUNT(*) FROM oauth_clients";

/// Drops clients nobody approved that registered before `{1}`.
pub(crate) const DROP_UNUSED_CLIENTS: &str =
    "DELETE FROM oauth_clients WHERE last_used_at IS NULL AND created_at < {1}";

/// Inserts a client (`{1}` id, `{2}` name, `{3}` redirect URIs as a JSON array, `{4}` instant).
pub(crate) const INSERT_CLIENT: &str = "INSERT INTO oauth_clients \
     (client_id, client_name, redirect_uris, created_at) VALUES ({1}, {2}, {3}, {4})";

/// A client by id (`{1}`), as [`RawClient`] reads it.
pub(crate) const SELECT_CLIENT: &str = "SELECT client_id, client_name, redirect_uris, \
     created_at, last_used_at FROM oauth_clients WHERE client_id = {1}";

/// Drops codes that ended at or before `{1}`.
pub(crate) const DROP_ENDED_CODES: &str = "DELETE FROM oauth_codes WHERE expires_at <= {1}";

/// Inserts a code, its columns in [`RawCode`]'s order.
pub(crate) const INSERT_CODE: &str = "INSERT INTO oauth_codes (code_hash, client_id, \
     account_id, redirect_uri, code_challenge, resource, created_at, expires_at) \
     VALUES ({1}, {2}, {3}, {4}, {5}, {6}, {7}, {8})";

/// Marks client `{1}` approved at `{2}`.
pub(crate) const MARK_CLIENT_USED: &str =
    "UPDATE oauth_clients SET last_used_at = {2} WHERE client_id = {1}";

/// Deletes the code with digest `{1}` and returns it, columns in [`RawCode`]'s order.
pub(crate) const TAKE_CODE: &str = "DELETE FROM oauth_codes WHERE code_hash = {1} RETURNING \
     code_hash, client_id, account_id, redirect_uri, code_challenge, resource, created_at, \
     expires_at";

/// `template` with `{n}` replaced by `?n` (SQLite) or `$n` (PostgreSQL).
pub(crate) fn with_placeholders(template: &str, sigil: char) -> String {
    (1..=9).fold(template.to_owned(), |sql, n| {
        sql.replace(&format!("{{{n}}}"), &format!("{sigil}{n}"))
    })
}

/// A result row of either engine, read by column position.
pub(crate) trait ColumnRow {
    /// The engine's error.
    type Error;
    /// The value in column `index`.
    fn column<T: ColumnValue>(&self, index: usize) -> Result<T, Self::Error>;
}

/// A value type both engines read (integers, text, bytes and their nulls).
pub(crate) trait ColumnValue:
    rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a>
{
}

impl<T> ColumnValue for T where
    T: rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a>
{
}

impl ColumnRow for rusqlite::Row<'_> {
    type Error = rusqlite::Error;

    fn column<T: ColumnValue>(&self, index: usize) -> Result<T, Self::Error> {
        self.get(index)
    }
}

impl ColumnRow for tokio_postgres::Row {
    type Error = tokio_postgres::Error;

    fn column<T: ColumnValue>(&self, index: usize) -> Result<T, Self::Error> {
        self.try_get(index)
    }
}

/// A `monthly_usage` row as read (the month is the one asked for).
#[derive(Debug)]
pub(crate) struct RawUsage {
    pub(crate) account_id: i64,
    pub(crate) endpoint: String,
    pub(crate) calls: i64,
    pub(crate) units: i64,
}

impl RawUsage {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            account_id: row.column(0)?,
            endpoint: row.column(1)?,
            calls: row.column(2)?,
            units: row.column(3)?,
        })
    }

    pub(crate) fn into_usage(self, month: &str) -> Result<MonthlyUsage, AccountError> {
        let count = |value: i64, what: &str| {
            u64::try_from(value)
                .map_err(|_| AccountError::Corrupt(format!("negative {what} {value}")))
        };
        Ok(MonthlyUsage {
            account_id: self.account_id,
            month: month.to_owned(),
            endpoint: self.endpoint,
            calls: count(self.calls, "call count")?,
            units: count(self.units, "unit count")?,
        })
    }
}

/// A usage count as a database integer (a count past `i64::MAX` cannot happen in practice;
/// it is refused rather than wrapped).
pub(crate) fn count_to_db(count: u64) -> Result<i64, AccountError> {
    i64::try_from(count)
        .map_err(|_| AccountError::InvalidInput(format!("count {count} is too large")))
}

/// An `accounts` row as read.
#[derive(Debug)]
pub(crate) struct RawAccount {
    pub(crate) id: i64,
    pub(crate) email: String,
    pub(crate) plan: String,
    pub(crate) plan_expires_at: Option<i64>,
    pub(crate) monthly_budget_units: Option<i64>,
    pub(crate) created_at: i64,
}

impl RawAccount {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            id: row.column(0)?,
            email: row.column(1)?,
            plan: row.column(2)?,
            plan_expires_at: row.column(3)?,
            monthly_budget_units: row.column(4)?,
            created_at: row.column(5)?,
        })
    }

    pub(crate) fn into_account(self) -> Result<Account, AccountError> {
        Ok(Account {
            id: self.id,
            email: self.email,
            plan: plan(&self.plan)?,
            plan_expires_at: optional_instant(self.plan_expires_at)?,
            monthly_budget_units: optional_units(self.monthly_budget_units)?,
            created_at: instant(self.created_at)?,
        })
    }
}

/// An `api_tokens` row as read.
#[derive(Debug)]
pub(crate) struct RawToken {
    pub(crate) id: String,
    pub(crate) account_id: i64,
    pub(crate) name: String,
    pub(crate) prefix: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: Option<i64>,
    pub(crate) revoked_at: Option<i64>,
    pub(crate) rotated_at: Option<i64>,
}

impl RawToken {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            id: row.column(0)?,
            account_id: row.column(1)?,
            name: row.column(2)?,
            prefix: row.column(3)?,
            created_at: row.column(4)?,
            expires_at: row.column(5)?,
            revoked_at: row.column(6)?,
            rotated_at: row.column(7)?,
        })
    }

    pub(crate) fn into_info(self) -> Result<TokenInfo, AccountError> {
        Ok(TokenInfo {
            id: self.id,
            account_id: self.account_id,
            name: self.name,
            prefix: self.prefix,
            created_at: instant(self.created_at)?,
            expires_at: optional_instant(self.expires_at)?,
            revoked_at: optional_instant(self.revoked_at)?,
            rotated_at: optional_instant(self.rotated_at)?,
        })
    }
}

/// An `oauth_clients` row as read.
#[derive(Debug)]
pub(crate) struct RawClient {
    pub(crate) client_id: String,
    pub(crate) client_name: String,
    pub(crate) redirect_uris: String,
    pub(crate) created_at: i64,
    pub(crate) last_used_at: Option<i64>,
}

impl RawClient {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            client_id: row.column(0)?,
            client_name: row.column(1)?,
            redirect_uris: row.column(2)?,
            created_at: row.column(3)?,
            last_used_at: row.column(4)?,
        })
    }

    pub(crate) fn into_client(self) -> Result<OAuthClient, AccountError> {
        let redirect_uris = serde_json::from_str(&self.redirect_uris).map_err(|e| {
            AccountError::Corrupt(format!("redirect URIs of {}: {e}", self.client_id))
        })?;
        Ok(OAuthClient {
            client_id: self.client_id,
            client_name: self.client_name,
            redirect_uris,
            created_at: instant(self.created_at)?,
            last_used_at: optional_instant(self.last_used_at)?,
        })
    }
}

/// A client's redirect URIs as stored (a JSON array of strings).
pub(crate) fn redirect_uris_to_db(uris: &[String]) -> Result<String, AccountError> {
    serde_json::to_string(uris).map_err(|e| AccountError::Internal(format!("redirect URIs: {e}")))
}

/// An `oauth_codes` row as read.
#[derive(Debug)]
pub(crate) struct RawCode {
    pub(crate) hash: Vec<u8>,
    pub(crate) client_id: String,
    pub(crate) account_id: i64,
    pub(crate) redirect_uri: String,
    pub(crate) code_challenge: String,
    pub(crate) resource: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: i64,
}

impl RawCode {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            hash: row.column(0)?,
            client_id: row.column(1)?,
            account_id: row.column(2)?,
            redirect_uri: row.column(3)?,
            code_challenge: row.column(4)?,
            resource: row.column(5)?,
            created_at: row.column(6)?,
            expires_at: row.column(7)?,
        })
    }

    pub(crate) fn into_code(self) -> Result<AuthorizationCode, AccountError> {
        Ok(AuthorizationCode {
            hash: TokenHash::from_slice(&self.hash)
                .ok_or_else(|| AccountError::Corrupt("code digest length".into()))?,
            client_id: self.client_id,
            account_id: self.account_id,
            redirect_uri: self.redirect_uri,
            code_challenge: self.code_challenge,
            resource: self.resource,
            created_at: instant(self.created_at)?,
            expires_at: instant(self.expires_at)?,
        })
    }
}

/// A grant lookup row as read.
#[derive(Debug)]
pub(crate) struct RawGrant {
    pub(crate) token_id: String,
    pub(crate) hash: Vec<u8>,
    pub(crate) expires_at: Option<i64>,
    pub(crate) revoked_at: Option<i64>,
    pub(crate) account_id: i64,
    pub(crate) plan: String,
    pub(crate) plan_expires_at: Option<i64>,
    pub(crate) monthly_budget_units: Option<i64>,
}

impl RawGrant {
    /// The row's columns, in the order its `SELECT` lists them.
    pub(crate) fn read<R: ColumnRow>(row: &R) -> Result<Self, R::Error> {
        Ok(Self {
            token_id: row.column(0)?,
            hash: row.column(1)?,
            expires_at: row.column(2)?,
            revoked_at: row.column(3)?,
            account_id: row.column(4)?,
            plan: row.column(5)?,
            plan_expires_at: row.column(6)?,
            monthly_budget_units: row.column(7)?,
        })
    }

    pub(crate) fn into_grant(self) -> Result<TokenGrant, AccountError> {
        Ok(TokenGrant {
            hash: TokenHash::from_slice(&self.hash).ok_or_else(|| {
                AccountError::Corrupt("a stored token digest is not 32 bytes".into())
            })?,
            token_id: self.token_id,
            expires_at: optional_instant(self.expires_at)?,
            revoked_at: optional_instant(self.revoked_at)?,
            account_id: self.account_id,
            plan: plan(&self.plan)?,
            plan_expires_at: optional_instant(self.plan_expires_at)?,
            monthly_budget_units: optional_units(self.monthly_budget_units)?,
        })
    }
}

fn plan(name: &str) -> Result<Plan, AccountError> {
    Plan::parse(name).ok_or_else(|| AccountError::Corrupt(format!("unknown plan {name:?}")))
}

/// Unix seconds → instant.
pub(crate) fn instant(secs: i64) -> Result<DateTime<Utc>, AccountError> {
    DateTime::from_timestamp(secs, 0)
        .ok_or_else(|| AccountError::Corrupt(format!("instant {secs} is out of range")))
}

fn optional_instant(secs: Option<i64>) -> Result<Option<DateTime<Utc>>, AccountError> {
    secs.map(instant).transpose()
}

fn optional_units(units: Option<i64>) -> Result<Option<u64>, AccountError> {
    units
        .map(|u| {
            u64::try_from(u).map_err(|_| AccountError::Corrupt(format!("negative budget {u}")))
        })
        .transpose()
}

/// Instant → Unix seconds (sub-second parts are dropped: the stores keep whole seconds).
pub(crate) fn secs(at: DateTime<Utc>) -> i64 {
    at.timestamp()
}

/// Optional instant → optional Unix seconds.
pub(crate) fn opt_secs(at: Option<DateTime<Utc>>) -> Option<i64> {
    at.map(secs)
}

/// A budget in units as a database integer; larger than `i64::MAX` is refused.
pub(crate) fn units_to_db(units: Option<u64>) -> Result<Option<i64>, AccountError> {
    units
        .map(|u| {
            i64::try_from(u)
                .map_err(|_| AccountError::InvalidInput(format!("budget {u} is too large")))
        })
        .transpose()
}
