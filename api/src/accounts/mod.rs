//! Accounts, plans, API tokens and login sessions (spec parts 5 and 8).
//!
//! The records, the [`AccountStore`] trait with its SQLite and PostgreSQL stores, token issuing
//! and the operator functions live in [`optics_accounts`] and are re-exported here, so
//! `crate::accounts::…` names them as before. This crate adds the HTTP side:
//!
//! - [`http`]: the account area (`/account`, `/api/account/…`): login to a session, list,
//!   create, rotate and revoke tokens.
//! - [`throttle`]: login attempts counted per client address and per e-mail.
//! - [`cli`]: the functions behind `optics accounts …` / `optics tokens …`.

pub mod cli;
pub mod http;
pub mod throttle;

pub use optics_accounts::{
    Account, AccountError, AccountId, AccountStore, AuthorizationCode, Credentials,
    DEFAULT_SQLITE_FILE, IssuedToken, MonthlyUsage, NewAccount, NewSession, NewToken, OAuthClient,
    PasswordHashPhc, PgStore, Plan, SqliteStore, StoreFuture, TokenGrant, TokenInfo, TokenPolicy,
    TokenStatus, admin, model, normalise_email, open_store, postgres, sqlite, tokens,
};
