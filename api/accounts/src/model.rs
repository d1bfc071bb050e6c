//! The account, plan, token and session records every [`super::AccountStore`] reads and writes.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::token::TokenHash;

/// The lowest plan whose tokens may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Any account with an active plan (utility endpoints: index, search, expirations,
    /// calendars, usage).
    Any,
    /// Basic plan and above.
    Basic,
    /// Premium plan and above.
    Premium,
    /// Pro plan.
    Pro,
}

impl Tier {
    /// The lower-case name used in payloads (`basic`, `premium`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Any => "any",
            Self::Basic => "basic",
            Self::Premium => "premium",
            Self::Pro => "pro",
        }
    }
}

/// Database id of an account.
pub type AccountId = i64;

/// The subscription an account holds. Only `trial`, `basic`, `premium` and `pro` open the data
/// endpoints (spec part 5); `none` is an account without an active plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    /// No subscription: every data request is a 403 without `upgrade_required`.
    None,
    /// A trial: opens what Basic opens (utility and Basic-tier endpoints).
    Trial,
    /// Basic: utility, chain, strategy and other Basic-tier endpoints.
    Basic,
    /// Premium: everything up to the Premium tier.
    Premium,
    /// Pro: every endpoint.
    Pro,
}

impl Plan {
    /// Every plan, lowest first.
    pub const ALL: [Self; 5] = [
        Self::None,
        Self::Trial,
        Self::Basic,
        Self::Premium,
        Self::Pro,
    ];

    /// The lower-case name used in payloads, the database and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Trial => "trial",
            Self::Basic => "basic",
            Self::Premium => "premium",
            Self::Pro => "pro",
        }
    }

    /// Parses the lower-case name; anything else is `None`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|plan| plan.as_str() == name)
    }

    /// One line on what the plan opens (the CLI's help on its values).
    pub fn describe(self) -> &'static str {
        match self {
            Self::None => "No subscription: every data request is a 403 without `upgrade_required`",
            Self::Trial => "A trial: opens what Basic opens (utility and Basic-tier endpoints)",
            Self::Basic => "Basic: utility, chain, strategy and other Basic-tier endpoints",
            Self::Premium => "Premium: everything up to the Premium tier",
            Self::Pro => "Pro: every endpoint",
        }
    }

    /// Whether the plan opens the data endpoints at all (a paid or trial plan).
    pub fn is_active(self) -> bool {
        self != Self::None
    }

    /// The highest endpoint tier this plan opens (`None` for no plan). A trial opens what
    /// Basic opens: the spec names trial beside the paid plans without a tier of its own.
    pub fn highest_tier(self) -> Option<Tier> {
        match self {
            Self::None => None,
            Self::Trial | Self::Basic => Some(Tier::Basic),
            Self::Premium => Some(Tier::Premium),
            Self::Pro => Some(Tier::Pro),
        }
    }

    /// Whether a token of this plan may call an endpoint of `tier`.
    pub fn grants(self, tier: Tier) -> bool {
        self.highest_tier().is_some_and(|highest| tier <= highest)
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One account (never carries its password hash: see [`Credentials`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Database id.
    pub id: AccountId,
    /// Login email, trimmed and lower-cased.
    pub email: String,
    /// The plan as stored (see [`Account::active_plan`] for what applies now).
    pub plan: Plan,
    /// When the plan ends (a trial, a lapsed subscription); `None` = until changed.
    pub plan_expires_at: Option<DateTime<Utc>>,
    /// This account's own monthly budget in data units; `None` = its plan's default.
    pub monthly_budget_units: Option<u64>,
    /// When the account was created.
    pub created_at: DateTime<Utc>,
}

impl Account {
    /// The plan in force at `now`: the stored plan, or [`Plan::None`] once it has expired.
    pub fn active_plan(&self, now: DateTime<Utc>) -> Plan {
        active_plan(self.plan, self.plan_expires_at, now)
    }
}

/// The plan in force at `now` given the stored plan and its end.
pub fn active_plan(plan: Plan, expires_at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Plan {
    match expires_at {
        Some(end) if end <= now => Plan::None,
        _ => plan,
    }
}

/// An argon2id hash in PHC string form (`$argon2id$v=19$m=…`). Its `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHashPhc(String);

impl PasswordHashPhc {
    /// Wraps a PHC string read from the store or produced by the hasher.
    pub fn new(phc: String) -> Self {
        Self(phc)
    }

    /// The PHC string, for the store and the verifier only.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PasswordHashPhc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHashPhc(<redacted>)")
    }
}

/// What login needs: the account and its password hash.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The account.
    pub account: Account,
    /// Its password hash.
    pub password_hash: PasswordHashPhc,
}

/// A new account to insert.
#[derive(Debug, Clone)]
pub struct NewAccount {
    /// Normalised email (see [`normalise_email`]).
    pub email: String,
    /// argon2id hash of the password.
    pub password_hash: PasswordHashPhc,
    /// Initial plan.
    pub plan: Plan,
    /// When that plan ends, if it does.
    pub plan_expires_at: Option<DateTime<Utc>>,
    /// Own monthly budget; `None` = the plan's default.
    pub monthly_budget_units: Option<u64>,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

/// Where a token stands at a given instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenStatus {
    /// Usable.
    Active,
    /// Past its `expires_at`.
    Expired,
    /// Revoked by its owner or an operator.
    Revoked,
}

/// A token as listed: its public id and display prefix, never its secret or hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Public id (`tok_…`), used in the rotate and revoke calls.
    pub id: String,
    /// Owning account.
    pub account_id: AccountId,
    /// The owner's label.
    pub name: String,
    /// The token's first characters (`optx_Ab3x`), enough to recognise it, useless to use it.
    pub prefix: String,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// End of life; `None` = never expires.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When its secret was last replaced, if ever.
    pub rotated_at: Option<DateTime<Utc>>,
}

impl TokenInfo {
    /// Where the token stands at `now`.
    pub fn status(&self, now: DateTime<Utc>) -> TokenStatus {
        token_status(self.revoked_at, self.expires_at, now)
    }
}

/// Revoked wins over expired; a token expires at its `expires_at` instant exactly.
pub fn token_status(
    revoked_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> TokenStatus {
    if revoked_at.is_some() {
        TokenStatus::Revoked
    } else if expires_at.is_some_and(|end| end <= now) {
        TokenStatus::Expired
    } else {
        TokenStatus::Active
    }
}

/// A token to insert: only its hash is stored.
#[derive(Debug, Clone)]
pub struct NewToken {
    /// Public id.
    pub id: String,
    /// Owning account.
    pub account_id: AccountId,
    /// Label.
    pub name: String,
    /// Display prefix.
    pub prefix: String,
    /// SHA-256 of the whole token.
    pub hash: TokenHash,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// End of life; `None` = never.
    pub expires_at: Option<DateTime<Utc>>,
}

/// What authenticating a request needs, read in one lookup by token hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenGrant {
    /// Public id of the token.
    pub token_id: String,
    /// The stored hash (compared again in constant time by the caller).
    pub hash: TokenHash,
    /// End of life of the token.
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation instant, if revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Owning account.
    pub account_id: AccountId,
    /// The account's stored plan.
    pub plan: Plan,
    /// When that plan ends.
    pub plan_expires_at: Option<DateTime<Utc>>,
    /// The account's own monthly budget, if set.
    pub monthly_budget_units: Option<u64>,
}

/// A login session to insert (only the hash of its secret is stored).
#[derive(Debug, Clone)]
pub struct NewSession {
    /// SHA-256 of the session secret carried by the cookie.
    pub hash: TokenHash,
    /// The signed-in account.
    pub account_id: AccountId,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// When the session stops being accepted.
    pub expires_at: DateTime<Utc>,
}

/// A client of the hosted connector's authorization server, registered by itself (RFC 7591).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    /// Public id the client presents (`cli_…`).
    pub client_id: String,
    /// The name the consent page shows.
    pub client_name: String,
    /// Where codes may be sent; a request must name one of them exactly.
    pub redirect_uris: Vec<String>,
    /// Registration instant.
    pub created_at: DateTime<Utc>,
    /// When an account holder last approved it (never: it may be dropped when the table fills).
    pub last_used_at: Option<DateTime<Utc>>,
}

/// An authorization code an account holder's approval produced: what the token request must
/// match. Stored by the SHA-256 of the code; redeemed (deleted) at most once.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationCode {
    /// SHA-256 of the code sent to the client.
    pub hash: TokenHash,
    /// The client it was issued to.
    pub client_id: String,
    /// The approving account.
    pub account_id: AccountId,
    /// The redirect URI of the authorization request.
    pub redirect_uri: String,
    /// The PKCE S256 challenge (base64url, no padding).
    pub code_challenge: String,
    /// The resource (audience) the token is for.
    pub resource: String,
    /// Approval instant.
    pub created_at: DateTime<Utc>,
    /// When the code stops being accepted.
    pub expires_at: DateTime<Utc>,
}

impl fmt::Debug for AuthorizationCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizationCode")
            .field("client_id", &self.client_id)
            .field("account_id", &self.account_id)
            .field("redirect_uri", &self.redirect_uri)
            .field("resource", &self.resource)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// Calls and budget units one account spent on one endpoint in one calendar month (UTC): the
/// stored form of the in-memory limiter's month, so a restart keeps the budget spent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MonthlyUsage {
    /// The account.
    pub account_id: AccountId,
    /// The month, `YYYY-MM` (UTC).
    pub month: String,
    /// The endpoint as the usage breakdown names it (`GET /chain/{ticker}`).
    pub endpoint: String,
    /// Admitted calls.
    pub calls: u64,
    /// Budget units they cost.
    pub units: u64,
}

/// Longest accepted email (RFC 5321's path limit).
pub const MAX_EMAIL_LEN: usize = 254;

/// Trims and lower-cases an email and checks its shape (`local@domain`, no spaces or control
/// characters, at most [`MAX_EMAIL_LEN`]); the error says what is wrong.
pub fn normalise_email(email: &str) -> Result<String, String> {
    let email = email.trim().to_lowercase();
    if email.is_empty() {
        return Err("email is empty".into());
    }
    if email.len() > MAX_EMAIL_LEN {
        return Err(format!("email is longer than {MAX_EMAIL_LEN} characters"));
    }
    if email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("email contains spaces or control characters".into());
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@') =>
        {
            Ok(email)
        }
        _ => Err("email must look like name@domain".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn plans_open_tiers_in_order() {
        use Tier::*;
        let cases = [
            (Plan::None, [false, false, false, false]),
            (Plan::Trial, [true, true, false, false]),
            (Plan::Basic, [true, true, false, false]),
            (Plan::Premium, [true, true, true, false]),
            (Plan::Pro, [true, true, true, true]),
        ];
        for (plan, expected) in cases {
            let got = [Any, Basic, Premium, Pro].map(|tier| plan.grants(tier));
            assert_eq!(got, expected, "{plan}");
            assert_eq!(Plan::parse(plan.as_str()), Some(plan));
        }
        assert_eq!(Plan::parse("PRO"), None);
    }

    #[test]
    fn plan_and_token_expiry_apply_at_the_instant() {
        let end = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
        let before = end - chrono::TimeDelta::seconds(1);
        assert_eq!(active_plan(Plan::Pro, Some(end), before), Plan::Pro);
        assert_eq!(active_plan(Plan::Pro, Some(end), end), Plan::None);
        assert_eq!(active_plan(Plan::Pro, None, end), Plan::Pro);
        assert_eq!(token_status(None, Some(end), before), TokenStatus::Active);
        assert_eq!(token_status(None, Some(end), end), TokenStatus::Expired);
        assert_eq!(
            token_status(Some(before), None, before),
            TokenStatus::Revoked
        );
    }

    #[test]
    fn emails_are_normalised_or_rejected_with_a_reason() {
        assert_eq!(
            normalise_email("  Ann@Example.COM ").unwrap(),
            "ann@example.com"
        );
        for bad in ["", "ann", "@x", "ann@", "a b@x", "a@b@c"] {
            assert!(normalise_email(bad).is_err(), "{bad:?}");
        }
        assert!(normalise_email(&format!("{}@x.io", "a".repeat(260))).is_err());
    }

    #[test]
    fn password_hash_debug_is_redacted() {
        let hash = PasswordHashPhc::new("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into());
        assert_eq!(format!("{hash:?}"), "PasswordHashPhc(<redacted>)");
    }
}
