//! optics-accounts: accounts, plans, API tokens and login sessions (spec parts 5 and 8), and the
//! rate limiters that meter them. No HTTP here: the account area's routes, the token gate and
//! the usage endpoint live in optics-api, the operator commands' arguments in the binary.
//!
//! - [`model`]: the records — [`Account`] with its [`Plan`] (none, trial, basic, premium, pro)
//!   and optional own monthly budget, [`TokenInfo`], [`TokenGrant`], sessions, and the hosted
//!   connector's [`OAuthClient`]s and [`AuthorizationCode`]s.
//! - [`AccountStore`]: the storage trait, with [`SqliteStore`] (the embedded default, a file
//!   beside the data directory) and [`PgStore`] (`--db postgres://…`, shared by API replicas).
//!   Both run their migrations (`api/accounts/migrations/{sqlite,postgres}/`) when opened. The store
//!   also keeps each account's [`MonthlyUsage`], written behind by the in-memory limiter so
//!   the monthly budget survives a restart.
//! - [`tokens`]: issuing, rotating and revoking tokens with the lifetime and cap rules.
//! - [`admin`]: the operator functions behind `optics accounts …` / `optics tokens …` and the
//!   first-start bootstrap.
//! - [`token`] and [`password`]: the token format (prefix, secret, checksum, SHA-256 digest) and
//!   argon2id password hashing.
//! - [`limits`]: the [`limits::Limiter`] trait with its in-memory and Redis implementations.
//!
//! Secrets never leave through `Debug`, errors or logs: passwords, password hashes, tokens and
//! session secrets have redacting `Debug` impls, and the store keeps tokens and sessions as
//! SHA-256 digests only.

#![forbid(unsafe_code)]

pub mod admin;
pub mod limits;
mod migrate;
pub mod model;
mod open;
pub mod password;
pub mod postgres;
mod rows;
pub mod sqlite;
mod store;
pub mod token;
pub mod tokens;

pub use model::{
    Account, AccountId, AuthorizationCode, Credentials, MonthlyUsage, NewAccount, NewSession,
    NewToken, OAuthClient, PasswordHashPhc, Plan, Tier, TokenGrant, TokenInfo, TokenStatus,
    normalise_email,
};
pub use open::{DEFAULT_SQLITE_FILE, open_store};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;
pub use store::{AccountStore, StoreFuture};
pub use tokens::{IssuedToken, TokenPolicy};

/// Everything that can go wrong with accounts, tokens and their stores. Messages name the
/// problem and never carry a secret, a password or a hash.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// Bad input from a caller or an operator; the message says what is wrong.
    #[error("{0}")]
    InvalidInput(String),
    /// An account with this email exists.
    #[error("an account with this email already exists")]
    EmailTaken,
    /// No account with this id or email.
    #[error("no such account")]
    AccountNotFound,
    /// No token with this id (for this account).
    #[error("no such token")]
    TokenNotFound,
    /// The token is revoked or expired, so it cannot be rotated.
    #[error("the token is revoked or expired; create a new one")]
    TokenNotActive,
    /// The account already has the maximum number of active tokens.
    #[error("at most {max} tokens may be active; revoke one first")]
    TokenCapReached {
        /// The cap.
        max: u32,
    },
    /// The table of registered OAuth clients is full of clients someone approved.
    #[error("client registration is full; retry later")]
    ClientCapReached,
    /// Hashing a password failed (argon2 refused its input).
    #[error("password hashing failed: {0}")]
    Password(String),
    /// Every password-hashing slot is taken (a login burst); retry in a second.
    #[error("too many sign-ins at once; retry in a second")]
    HasherBusy,
    /// The operating system's random source failed.
    #[error(transparent)]
    Randomness(#[from] crate::token::RandomnessUnavailable),
    /// A stored row could not be read back (a corrupt value).
    #[error("corrupt account data: {0}")]
    Corrupt(String),
    /// A migration failed; the store is not usable.
    #[error("migration {version} ({name}) failed: {reason}")]
    Migration {
        /// Migration number.
        version: u32,
        /// Its file name.
        name: &'static str,
        /// Why.
        reason: String,
    },
    /// The store could not be reached or opened.
    #[error("account store unavailable: {0}")]
    Unavailable(String),
    /// An SQLite error.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A PostgreSQL error.
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A file could not be written (the bootstrap token file).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A background task failed.
    #[error("internal: {0}")]
    Internal(String),
}

impl AccountError {
    /// True when the store is there but cannot take the call now — another process holds the
    /// SQLite write lock past the busy timeout, the PostgreSQL connection is gone: a caller
    /// should be told to retry, not shown a fault.
    pub fn is_temporarily_unavailable(&self) -> bool {
        match self {
            Self::Unavailable(_) => true,
            Self::Sqlite(error) => matches!(
                error.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            Self::Postgres(error) => error.is_closed(),
            _ => false,
        }
    }
}
