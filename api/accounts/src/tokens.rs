//! Issuing, rotating and revoking API tokens: the rules of spec part 5 over any
//! [`AccountStore`].

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};

use super::model::{AccountId, NewToken, TokenInfo};
use super::{AccountError, AccountStore};
use crate::token::{ApiToken, random_public_id};

/// Longest token name, in characters.
pub const MAX_TOKEN_NAME_CHARS: usize = 100;

/// The token rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenPolicy {
    /// Most tokens active at once per account.
    pub max_active: u32,
    /// Lifetime when creation does not say (`expires_in_days` absent).
    pub default_lifetime_days: u32,
    /// Longest lifetime a creation may ask for (0 = never expires is always allowed).
    pub max_lifetime_days: u32,
}

impl Default for TokenPolicy {
    /// 3 active tokens, one year by default, at most ten years.
    fn default() -> Self {
        Self {
            max_active: 3,
            default_lifetime_days: 365,
            max_lifetime_days: 3_650,
        }
    }
}

impl TokenPolicy {
    /// The expiry of a token created at `now` asking for `expires_in_days` (`None` = the
    /// default lifetime, `Some(0)` = never). Above the maximum is refused, not clamped: a
    /// token that silently expires earlier than asked would break someone's job later.
    pub fn expiry(
        &self,
        now: DateTime<Utc>,
        expires_in_days: Option<u32>,
    ) -> Result<Option<DateTime<Utc>>, AccountError> {
        let days = expires_in_days.unwrap_or(self.default_lifetime_days);
        if days == 0 {
            return Ok(None);
        }
        if days > self.max_lifetime_days {
            return Err(AccountError::InvalidInput(format!(
                "expires_in_days must be between 0 (never) and {}",
                self.max_lifetime_days
            )));
        }
        Ok(Some(now + TimeDelta::days(i64::from(days))))
    }
}

/// A token just created or rotated: the secret, shown once, and its listing.
#[derive(Clone)]
pub struct IssuedToken {
    /// The whole token. This is the only time it is available.
    pub token: ApiToken,
    /// Its public record.
    pub info: TokenInfo,
}

impl fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedToken")
            .field("token", &self.token)
            .field("info", &self.info)
            .finish()
    }
}

/// Checks a token name: trimmed, 1 to 100 characters, no control characters. An empty name
/// becomes `"API token"`.
pub fn token_name(name: Option<&str>) -> Result<String, AccountError> {
    let name = name.map(str::trim).unwrap_or("");
    if name.is_empty() {
        return Ok("API token".to_owned());
    }
    if name.chars().count() > MAX_TOKEN_NAME_CHARS {
        return Err(AccountError::InvalidInput(format!(
            "token name must be at most {MAX_TOKEN_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(AccountError::InvalidInput(
            "token name must not contain control characters".into(),
        ));
    }
    Ok(name.to_owned())
}

/// Creates a token for `account_id` (refused once `policy.max_active` are active).
pub async fn issue_token(
    store: &dyn AccountStore,
    policy: &TokenPolicy,
    account_id: AccountId,
    name: Option<&str>,
    expires_in_days: Option<u32>,
    now: DateTime<Utc>,
) -> Result<IssuedToken, AccountError> {
    let name = token_name(name)?;
    let expires_at = policy.expiry(now, expires_in_days)?;
    let token = ApiToken::generate()?;
    let info = store
        .insert_token(
            NewToken {
                id: random_public_id("tok_")?,
                account_id,
                name,
                prefix: token.display_prefix(),
                hash: token.hash(),
                created_at: now,
                expires_at,
            },
            policy.max_active,
            now,
        )
        .await?;
    Ok(IssuedToken { token, info })
}

/// Gives an active token of `account_id` a fresh secret; the old one stops working at once.
/// The id, name and expiry stay: rotating a leaked secret does not extend its life.
pub async fn rotate_token(
    store: &dyn AccountStore,
    account_id: AccountId,
    token_id: &str,
    now: DateTime<Utc>,
) -> Result<IssuedToken, AccountError> {
    let token = ApiToken::generate()?;
    let info = store
        .rotate_token(
            account_id,
            token_id,
            token.hash(),
            &token.display_prefix(),
            now,
        )
        .await?;
    Ok(IssuedToken { token, info })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn lifetimes_default_to_a_year_zero_means_never() {
        let policy = TokenPolicy::default();
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
        assert_eq!(
            policy.expiry(now, None).unwrap(),
            Some(now + TimeDelta::days(365))
        );
        assert_eq!(policy.expiry(now, Some(0)).unwrap(), None);
        assert_eq!(
            policy.expiry(now, Some(7)).unwrap(),
            Some(now + TimeDelta::days(7))
        );
        assert!(policy.expiry(now, Some(3_651)).is_err());
    }

    #[test]
    fn names_are_checked() {
        assert_eq!(token_name(None).unwrap(), "API token");
        assert_eq!(token_name(Some("  ci  ")).unwrap(), "ci");
        assert!(token_name(Some(&"x".repeat(101))).is_err());
        assert!(token_name(Some("a\nb")).is_err());
    }
}
