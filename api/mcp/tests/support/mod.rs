//! The tool-server tests' fixture: the service router over the chain tests' SPY market and a
//! fresh SQLite account store, with accounts and tokens made directly in the store.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use optics_api::AppState;
use optics_api::accounts::{
    AccountId, AccountStore, NewAccount, Plan, SqliteStore, TokenPolicy, tokens,
};
use optics_api::auth::{AccessConfig, AccessControl, PasswordCost, PasswordHasher};
use optics_api::limits::{InMemoryLimiter, PlanBudgets, RateLimits};
use optics_compute::time::{Clock, ManualClock};

#[path = "../../../tests/chain_support/mod.rs"]
mod chain_support;

pub struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Fixture {
    pub router: axum::Router,
    pub access: AccessControl,
    pub clock: Arc<ManualClock>,
    _dir: Scratch,
}

/// The password of every fixture account.
pub const PASSWORD: &str = "correct horse battery";

/// The service router over the chain tests' SPY market and a fresh SQLite account store, with
/// `per_minute` requests a minute.
pub fn fixture(per_minute: u32) -> Fixture {
    let dir = std::env::temp_dir().join(format!(
        "optics-mcp-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let store: Arc<dyn AccountStore> =
        Arc::new(SqliteStore::open(&dir.join("accounts.sqlite3")).unwrap());
    // 20 seconds into a minute: a minute window opens 40 s later.
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 20).unwrap(),
    ));
    let limits = RateLimits {
        per_minute,
        per_hour: 1_000,
    };
    let access = AccessControl::new(
        store,
        Arc::new(InMemoryLimiter::new(limits)),
        clock.clone() as Arc<dyn Clock>,
        PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).unwrap(),
        AccessConfig {
            budgets: PlanBudgets::default(),
            ..AccessConfig::default()
        },
    );
    let state = AppState::new(clock.clone() as Arc<dyn Clock>)
        .with_market_data(Arc::new(chain_support::MemoryMarket::spy()));
    let router = optics_api::auth::service_router(state, access.clone());
    Fixture {
        router,
        access,
        clock,
        _dir: Scratch(dir),
    }
}

impl Fixture {
    pub async fn account(&self, email: &str, plan: Plan) -> AccountId {
        let password_hash = self
            .access
            .hasher()
            .hash(optics_api::auth::Password::new(PASSWORD.into()).unwrap())
            .await
            .unwrap();
        self.access
            .store()
            .create_account(NewAccount {
                email: email.into(),
                password_hash,
                plan,
                plan_expires_at: None,
                monthly_budget_units: None,
                created_at: self.clock.now(),
            })
            .await
            .unwrap()
            .id
    }

    pub async fn token(&self, account: AccountId) -> (String, String) {
        let issued = tokens::issue_token(
            &**self.access.store(),
            &TokenPolicy::default(),
            account,
            Some("assistant"),
            None,
            self.clock.now(),
        )
        .await
        .unwrap();
        (issued.token.expose().to_owned(), issued.info.id)
    }
}
