//! The [`AccountStore`] trait: accounts, tokens and sessions behind one interface, with SQLite
//! ([`super::SqliteStore`], embedded default) and PostgreSQL ([`super::PgStore`], shared by API
//! replicas) implementations.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use chrono::{DateTime, Utc};

use super::AccountError;
use super::model::{
    Account, AccountId, AuthorizationCode, Credentials, MonthlyUsage, NewAccount, NewSession,
    NewToken, OAuthClient, Plan, TokenGrant, TokenInfo,
};
use crate::token::TokenHash;

/// The future every store method returns (boxed so the trait can be used as `dyn`).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AccountError>> + Send + 'a>>;

/// Persistent accounts, API tokens and login sessions.
///
/// Implementations keep tokens and sessions by SHA-256 digest only. Every method that changes
/// a token is atomic: the active-token cap holds under concurrent creation, and a rotation
/// replaces the stored digest in one statement, so the old secret stops working at once.
pub trait AccountStore: Send + Sync + fmt::Debug {
    /// `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    /// Inserts an account; [`AccountError::EmailTaken`] when the email exists.
    fn create_account(&self, account: NewAccount) -> StoreFuture<'_, Account>;

    /// The account with this id.
    fn account(&self, id: AccountId) -> StoreFuture<'_, Option<Account>>;

    /// The account with this (normalised) email and its password hash, for login.
    fn credentials<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Credentials>>;

    /// The account with this (normalised) email.
    fn account_by_email<'a>(&'a self, email: &'a str) -> StoreFuture<'a, Option<Account>>;

    /// Every account, by id.
    fn list_accounts(&self) -> StoreFuture<'_, Vec<Account>>;

    /// How many accounts exist (the first-start bootstrap creates one when there are none).
    fn count_accounts(&self) -> StoreFuture<'_, u64>;

    /// Sets the plan and its end; [`AccountError::AccountNotFound`] for an unknown id.
    fn set_plan(
        &self,
        id: AccountId,
        plan: Plan,
        plan_expires_at: Option<DateTime<Utc>>,
    ) -> StoreFuture<'_, Account>;

    /// Sets (or with `None` clears) the account's own monthly budget.
    fn set_monthly_budget(
        &self,
        id: AccountId,
        monthly_budget_units: Option<u64>,
    ) -> StoreFuture<'_, Account>;

    /// Inserts a token unless the account already has `max_active` active ones at `now`
    /// ([`AccountError::TokenCapReached`]); atomic under concurrent calls.
    fn insert_token(
        &self,
        token: NewToken,
        max_active: u32,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, TokenInfo>;

    /// Every token of the account (active, expired and revoked), newest first.
    fn list_tokens(&self, account_id: AccountId) -> StoreFuture<'_, Vec<TokenInfo>>;

    /// Replaces the digest and display prefix of an active token of the account in one
    /// statement. [`AccountError::TokenNotFound`] when the account has no such token,
    /// [`AccountError::TokenNotActive`] when it is revoked or expired.
    fn rotate_token<'a>(
        &'a self,
        account_id: AccountId,
        token_id: &'a str,
        new_hash: TokenHash,
        new_prefix: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo>;

    /// Revokes a token (of `account_id` when given, of any account for operators). Revoking
    /// a revoked token returns it unchanged; an unknown id is [`AccountError::TokenNotFound`].
    fn revoke_token<'a>(
        &'a self,
        account_id: Option<AccountId>,
        token_id: &'a str,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, TokenInfo>;

    /// The token with this digest and its account's plan: the one lookup per data request.
    fn token_grant<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, Option<TokenGrant>>;

    /// Stores a login session (and drops sessions that have ended).
    fn create_session(&self, session: NewSession) -> StoreFuture<'_, ()>;

    /// The account of the session with this digest, if it has not ended at `now`.
    fn session_account<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AccountId>>;

    /// Ends a session.
    fn delete_session<'a>(&'a self, hash: &'a TokenHash) -> StoreFuture<'a, ()>;

    /// Registers an OAuth client. When `max_clients` are registered, clients nobody approved
    /// that registered before `unused_before` are dropped first; if the table is still full,
    /// [`AccountError::ClientCapReached`].
    fn register_oauth_client(
        &self,
        client: OAuthClient,
        max_clients: u64,
        unused_before: DateTime<Utc>,
    ) -> StoreFuture<'_, ()>;

    /// The registered client with this id.
    fn oauth_client<'a>(&'a self, client_id: &'a str) -> StoreFuture<'a, Option<OAuthClient>>;

    /// Stores an approval's code (dropping codes that have ended) and marks its client used.
    fn insert_authorization_code(&self, code: AuthorizationCode) -> StoreFuture<'_, ()>;

    /// Redeems the code with this digest: deletes it in the same statement that reads it, so
    /// it is returned at most once, and only if it has not ended at `now`.
    fn take_authorization_code<'a>(
        &'a self,
        hash: &'a TokenHash,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Option<AuthorizationCode>>;

    /// Adds each row's calls and units to the stored totals of its (account, month, endpoint),
    /// creating the rows that do not exist yet, in one transaction. Additive, so several
    /// writers (a restarted process and the one it replaced) never overwrite each other.
    fn add_monthly_usage(&self, usage: Vec<MonthlyUsage>) -> StoreFuture<'_, ()>;

    /// Every account's stored usage in `month` (`YYYY-MM`), by endpoint.
    fn monthly_usage<'a>(&'a self, month: &'a str) -> StoreFuture<'a, Vec<MonthlyUsage>>;
}
