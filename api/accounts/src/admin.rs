//! Operator functions: what `optics accounts …` and `optics tokens …` call, and the first-start
//! bootstrap of `optics run`. Accounts are named by email here (operators know emails, not ids).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use optics_compute::time::Clock;

use super::model::{Account, NewAccount, Plan, TokenInfo, normalise_email};
use super::tokens::{IssuedToken, TokenPolicy, issue_token, rotate_token as rotate};
use super::{AccountError, AccountStore};
use crate::password::{Password, PasswordHasher};
use crate::token::random_secret;

/// Email of the account `optics run` creates on first start.
pub const LOCAL_ACCOUNT_EMAIL: &str = "local@optics.localhost";
/// File name of the bootstrap token, in the data directory.
pub const LOCAL_TOKEN_FILE: &str = "api-token";
/// File name of the bootstrap account's password, beside the token file.
pub const LOCAL_PASSWORD_FILE: &str = "local-account-password";

/// What operator functions work with.
#[derive(Debug, Clone)]
pub struct AdminContext {
    /// The account store.
    pub store: Arc<dyn AccountStore>,
    /// Hashes new passwords.
    pub hasher: PasswordHasher,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// Token cap and lifetimes.
    pub tokens: TokenPolicy,
}

impl AdminContext {
    /// A context over `store` with the default token rules.
    pub fn new(
        store: Arc<dyn AccountStore>,
        hasher: PasswordHasher,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            store,
            hasher,
            clock,
            tokens: TokenPolicy::default(),
        }
    }

    async fn account(&self, email: &str) -> Result<Account, AccountError> {
        let email = normalise_email(email).map_err(AccountError::InvalidInput)?;
        self.store
            .account_by_email(&email)
            .await?
            .ok_or(AccountError::AccountNotFound)
    }
}

/// Creates an account. `plan_expires_at` ends the plan (a trial); `monthly_budget_units`
/// overrides the plan's budget.
pub async fn create_account(
    ctx: &AdminContext,
    email: &str,
    password: Password,
    plan: Plan,
    plan_expires_at: Option<DateTime<Utc>>,
    monthly_budget_units: Option<u64>,
) -> Result<Account, AccountError> {
    let email = normalise_email(email).map_err(AccountError::InvalidInput)?;
    let password_hash = ctx.hasher.hash(password).await?;
    ctx.store
        .create_account(NewAccount {
            email,
            password_hash,
            plan,
            plan_expires_at,
            monthly_budget_units,
            created_at: ctx.clock.now(),
        })
        .await
}

/// Sets an account's plan (and when it ends).
pub async fn set_plan(
    ctx: &AdminContext,
    email: &str,
    plan: Plan,
    plan_expires_at: Option<DateTime<Utc>>,
) -> Result<Account, AccountError> {
    let account = ctx.account(email).await?;
    ctx.store.set_plan(account.id, plan, plan_expires_at).await
}

/// Sets an account's own monthly budget (`None`: back to its plan's).
pub async fn set_budget(
    ctx: &AdminContext,
    email: &str,
    monthly_budget_units: Option<u64>,
) -> Result<Account, AccountError> {
    let account = ctx.account(email).await?;
    ctx.store
        .set_monthly_budget(account.id, monthly_budget_units)
        .await
}

/// Every account.
pub async fn list_accounts(ctx: &AdminContext) -> Result<Vec<Account>, AccountError> {
    ctx.store.list_accounts().await
}

/// Creates a token for the account with `email` (at most the policy's active tokens).
pub async fn create_token(
    ctx: &AdminContext,
    email: &str,
    name: Option<&str>,
    expires_in_days: Option<u32>,
) -> Result<IssuedToken, AccountError> {
    let account = ctx.account(email).await?;
    issue_token(
        &*ctx.store,
        &ctx.tokens,
        account.id,
        name,
        expires_in_days,
        ctx.clock.now(),
    )
    .await
}

/// Every token of the account with `email`, newest first.
pub async fn list_tokens(ctx: &AdminContext, email: &str) -> Result<Vec<TokenInfo>, AccountError> {
    let account = ctx.account(email).await?;
    ctx.store.list_tokens(account.id).await
}

/// Revokes a token of any account by id.
pub async fn revoke_token(ctx: &AdminContext, token_id: &str) -> Result<TokenInfo, AccountError> {
    ctx.store
        .revoke_token(None, token_id, ctx.clock.now())
        .await
}

/// Gives a token of the account with `email` a fresh secret.
pub async fn rotate_token(
    ctx: &AdminContext,
    email: &str,
    token_id: &str,
) -> Result<IssuedToken, AccountError> {
    let account = ctx.account(email).await?;
    rotate(&*ctx.store, account.id, token_id, ctx.clock.now()).await
}

/// What the first-start bootstrap created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    /// The local account's email.
    pub email: String,
    /// The file holding the token (one line, readable by the owner only).
    pub token_path: PathBuf,
    /// The file holding the account's password (for the account page), owner-only.
    pub password_path: PathBuf,
    /// Public id of the token.
    pub token_id: String,
}

/// On a store without accounts: creates a local Pro account with a random password and one
/// token, writes the token to `token_path` and the password to [`LOCAL_PASSWORD_FILE`] beside
/// it (both mode 0600), and says where. With accounts already there it does nothing and
/// returns `None` (as it does when another process bootstraps at the same moment).
pub async fn bootstrap_local_account(
    ctx: &AdminContext,
    token_path: &Path,
) -> Result<Option<Bootstrap>, AccountError> {
    if ctx.store.count_accounts().await? > 0 {
        return Ok(None);
    }
    let password_text = random_secret()?;
    let password = Password::new(password_text.clone())?;
    let account =
        match create_account(ctx, LOCAL_ACCOUNT_EMAIL, password, Plan::Pro, None, None).await {
            Ok(account) => account,
            Err(AccountError::EmailTaken) => return Ok(None),
            Err(e) => return Err(e),
        };
    let issued = issue_token(
        &*ctx.store,
        &ctx.tokens,
        account.id,
        Some("local (created on first start)"),
        None,
        ctx.clock.now(),
    )
    .await?;
    let password_path = token_path.with_file_name(LOCAL_PASSWORD_FILE);
    write_private_file(token_path, &format!("{}\n", issued.token.expose()))?;
    write_private_file(
        &password_path,
        &format!("email: {}\npassword: {password_text}\n", account.email),
    )?;
    Ok(Some(Bootstrap {
        email: account.email,
        token_path: token_path.to_owned(),
        password_path,
        token_id: issued.info.id,
    }))
}

/// Writes `contents` to `path` readable and writable by the owner only: written to a
/// temporary file created with mode 0600, synced, then renamed over `path`.
pub fn write_private_file(path: &Path, contents: &str) -> Result<(), AccountError> {
    let io = |source| AccountError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    // A leftover temporary (a crash between create and rename) or anything planted under its
    // name, a symbolic link included, is removed, not opened: the file is created new
    // (O_CREAT | O_EXCL, which never follows a link), so the mode below is its own.
    match std::fs::remove_file(&temporary) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary).map_err(io)?;
    file.write_all(contents.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)
}

#[cfg(all(test, unix))]
mod private_file_tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::write_private_file;

    #[test]
    fn a_planted_link_at_the_temporary_name_is_not_written_through() {
        let dir = std::env::temp_dir().join(format!("optics-private-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let token = dir.join("api-token");
        std::os::unix::fs::symlink(&victim, dir.join("api-token.tmp")).unwrap();
        write_private_file(&token, "secret\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(std::fs::read_to_string(&token).unwrap(), "secret\n");
        let mode = std::fs::metadata(&token).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
