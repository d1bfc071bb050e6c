//! Login attempts counted per client address and per e-mail, in fixed windows, so neither a
//! flood from one address nor a guessing run against one account reaches the password hasher.
//!
//! Counts are held in this process (each replica throttles what it receives; the per-account
//! request limits live in the shared limiter). The table is bounded: past [`MAX_KEYS`] keys
//! expired windows are dropped, and if every key is still live new keys are refused — a
//! flood of distinct addresses then meets a 429 instead of growing memory.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

/// Attempts one client address may make per window.
pub const PER_ADDRESS: u32 = 30;
/// Attempts against one e-mail per window.
pub const PER_EMAIL: u32 = 10;
/// The window, seconds.
pub const WINDOW_SECS: i64 = 300;
/// Keys (addresses and e-mails) held at most.
pub const MAX_KEYS: usize = 100_000;
/// Tokens an account may create or rotate per [`TOKEN_WINDOW_SECS`].
pub const TOKEN_ISSUES: u32 = 10;
/// The token-issue window, seconds.
pub const TOKEN_WINDOW_SECS: i64 = 3_600;
/// Dashboard tokens an account may ask for per [`TOKEN_WINDOW_SECS`]: one per page load, and
/// each rotates the same single token, so the bound is on writes, not on tokens.
pub const DASHBOARD_TOKENS: u32 = 120;

/// One key's window: when it opened and the attempts in it.
#[derive(Debug, Clone, Copy)]
struct Window {
    opened: DateTime<Utc>,
    attempts: u32,
}

/// The attempt counters.
#[derive(Debug)]
pub struct LoginThrottle {
    windows: Mutex<HashMap<String, Window>>,
    per_address: u32,
    per_email: u32,
    window: TimeDelta,
    max_keys: usize,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        Self::new(PER_ADDRESS, PER_EMAIL, WINDOW_SECS, MAX_KEYS)
    }
}

impl LoginThrottle {
    /// Counters with the given limits.
    pub fn new(per_address: u32, per_email: u32, window_secs: i64, max_keys: usize) -> Self {
        Self {
            windows: Mutex::new(HashMap::new()),
            per_address,
            per_email,
            window: TimeDelta::seconds(window_secs.max(1)),
            max_keys: max_keys.max(1),
        }
    }

    /// Counts one attempt from `address` (when known) against `email` (when it parses) at
    /// `now`; `Err(seconds)` when either is over its limit (nothing is counted then), with the
    /// seconds until the later of the two windows reopens.
    pub fn attempt(
        &self,
        address: Option<IpAddr>,
        email: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), u64> {
        let keys: Vec<(String, u32)> = address
            .map(|a| (format!("ip:{a}"), self.per_address))
            .into_iter()
            .chain(email.map(|e| (format!("email:{e}"), self.per_email)))
            .collect();
        self.attempt_keys(keys, now)
    }

    /// The counters of token issues: [`TOKEN_ISSUES`] per account per [`TOKEN_WINDOW_SECS`],
    /// counted with [`Self::attempt_account`].
    pub fn token_issues() -> Self {
        Self::new(0, TOKEN_ISSUES, TOKEN_WINDOW_SECS, MAX_KEYS)
    }

    /// The counters of dashboard tokens: [`DASHBOARD_TOKENS`] per account per
    /// [`TOKEN_WINDOW_SECS`], counted with [`Self::attempt_account`].
    pub fn dashboard_tokens() -> Self {
        Self::new(0, DASHBOARD_TOKENS, TOKEN_WINDOW_SECS, MAX_KEYS)
    }

    /// Counts one attempt against the account `account_id` (the per-key limit that applies to
    /// an e-mail applies to the account); `Err(seconds)` past it.
    pub fn attempt_account(&self, account_id: i64, now: DateTime<Utc>) -> Result<(), u64> {
        self.attempt_keys(vec![(format!("account:{account_id}"), self.per_email)], now)
    }

    /// Counts one attempt under each key (with its limit); nothing is counted when any key
    /// is over its limit.
    pub fn attempt_keys(&self, keys: Vec<(String, u32)>, now: DateTime<Utc>) -> Result<(), u64> {
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let window = self.window;
        let live = |w: &Window| now < w.opened + window;
        let mut wait = 0i64;
        for (key, limit) in &keys {
            if let Some(w) = windows.get(key).filter(|w| live(w))
                && w.attempts >= *limit
            {
                wait = wait.max((w.opened + window - now).num_seconds().max(1));
            }
        }
        let missing = keys
            .iter()
            .filter(|(k, _)| !windows.contains_key(k))
            .count();
        if wait == 0 && windows.len() + missing > self.max_keys {
            windows.retain(|_, w| live(w));
            if windows.len() + missing > self.max_keys {
                // Every held window is live: refuse rather than grow.
                wait = windows
                    .values()
                    .map(|w| (w.opened + window - now).num_seconds().max(1))
                    .min()
                    .unwrap_or(1);
            }
        }
        if wait > 0 {
            return Err(u64::try_from(wait).unwrap_or(1));
        }
        for (key, _) in keys {
            let w = windows.entry(key).or_insert(Window {
                opened: now,
                attempts: 0,
            });
            if !live(w) {
                *w = Window {
                    opened: now,
                    attempts: 0,
                };
            }
            w.attempts += 1;
        }
        Ok(())
    }

    /// Keys held (for tests and memory reports).
    pub fn keys(&self) -> usize {
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + TimeDelta::seconds(secs)
    }

    #[test]
    fn each_key_has_its_own_window() {
        let throttle = LoginThrottle::new(3, 2, 60, 100);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(throttle.attempt(Some(ip), Some("a@x.io"), at(0)).is_ok());
        assert!(throttle.attempt(Some(ip), Some("a@x.io"), at(1)).is_ok());
        // The e-mail is spent (2), the address is not (2 of 3).
        assert_eq!(throttle.attempt(Some(ip), Some("a@x.io"), at(2)), Err(58));
        assert!(throttle.attempt(Some(ip), Some("b@x.io"), at(3)).is_ok());
        // Now the address is spent too.
        assert_eq!(throttle.attempt(Some(ip), Some("c@x.io"), at(4)), Err(56));
        // Another address still reaches other accounts.
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(throttle.attempt(Some(other), Some("c@x.io"), at(5)).is_ok());
        // The windows reopen.
        assert!(throttle.attempt(Some(ip), Some("a@x.io"), at(60)).is_ok());
    }

    #[test]
    fn the_table_is_bounded() {
        let throttle = LoginThrottle::new(5, 5, 60, 4);
        for i in 0..4u8 {
            let ip = IpAddr::from([10, 0, 0, i]);
            assert!(throttle.attempt(Some(ip), None, at(0)).is_ok());
        }
        let fresh = IpAddr::from([10, 0, 1, 0]);
        assert_eq!(throttle.attempt(Some(fresh), None, at(10)), Err(50));
        assert_eq!(throttle.keys(), 4);
        // Once the windows expire, their keys make room.
        assert!(throttle.attempt(Some(fresh), None, at(61)).is_ok());
        assert_eq!(throttle.keys(), 1);
    }
}
