//! Account passwords: argon2id hashes in PHC string form.
//!
//! The default cost is OWASP's first argon2id recommendation (19 MiB, 2 passes, 1 lane; the
//! argon2 crate's default). Hashing and verifying are CPU-bound for tens of milliseconds, so
//! the async entry points run them on tokio's blocking pool.

use std::fmt;
use std::sync::Arc;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use argon2::{Algorithm, Argon2, Params, Version};

use crate::{AccountError, PasswordHashPhc};

/// Shortest accepted password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest accepted password, in bytes (bounds the work an attacker can ask for).
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// A password as typed. Its `Debug` never prints it.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// Checks the length rules; the error says which one failed (never the password).
    pub fn new(password: String) -> Result<Self, AccountError> {
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(AccountError::InvalidInput(format!(
                "password must have at least {MIN_PASSWORD_CHARS} characters"
            )));
        }
        if password.len() > MAX_PASSWORD_BYTES {
            return Err(AccountError::InvalidInput(format!(
                "password must be at most {MAX_PASSWORD_BYTES} bytes"
            )));
        }
        Ok(Self(password))
    }

    /// A password presented at login: no length rule (a wrong one simply fails), but the
    /// same upper bound so a huge body cannot buy a long hash.
    pub fn presented(password: String) -> Option<Self> {
        (password.len() <= MAX_PASSWORD_BYTES).then_some(Self(password))
    }

    fn bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(<redacted>)")
    }
}

/// argon2id cost parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordCost {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes over memory.
    pub iterations: u32,
    /// Lanes.
    pub parallelism: u32,
}

impl PasswordCost {
    /// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
    pub const OWASP: Self = Self {
        memory_kib: Params::DEFAULT_M_COST,
        iterations: Params::DEFAULT_T_COST,
        parallelism: Params::DEFAULT_P_COST,
    };

    /// The cheapest cost argon2 accepts: for tests only, where hundreds of accounts are made.
    pub const TEST_ONLY_MINIMUM: Self = Self {
        memory_kib: 8,
        iterations: 1,
        parallelism: 1,
    };
}

impl Default for PasswordCost {
    fn default() -> Self {
        Self::OWASP
    }
}

/// Hashes and verifies passwords with one argon2id configuration.
#[derive(Clone)]
pub struct PasswordHasher {
    inner: Arc<HasherInner>,
}

struct HasherInner {
    argon2: Argon2<'static>,
    /// A hash of a random password, verified against when the email is unknown so that a
    /// login for a missing account takes as long as one for an existing account. Made when
    /// the hasher is: made on the first unknown-email login instead, that login would take
    /// a hash longer than any other and so tell that the email is unknown.
    decoy: PasswordHashPhc,
    /// Hashes that may run at once (about one per core): each argon2id hash holds its memory
    /// cost (19 MiB by default) and a core for its duration, so a login flood must queue at
    /// the door, not on the blocking pool.
    slots: Arc<tokio::sync::Semaphore>,
}

impl fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordHasher")
            .field("params", self.inner.argon2.params())
            .finish()
    }
}

impl PasswordHasher {
    /// A hasher with the given cost; the error says which parameter argon2 refused. Blocking
    /// for one hash (the decoy): build it at start-up.
    pub fn new(cost: PasswordCost) -> Result<Self, AccountError> {
        let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
            .map_err(|e| AccountError::InvalidInput(format!("argon2 parameters: {e}")))?;
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let decoy = hash_with(&argon2, &Password(crate::token::random_secret()?))?;
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Ok(Self {
            inner: Arc::new(HasherInner {
                argon2,
                decoy,
                slots: Arc::new(tokio::sync::Semaphore::new(cores)),
            }),
        })
    }

    /// The same hasher with `slots` concurrent hashes instead of one per core.
    #[must_use]
    pub fn with_slots(self, slots: usize) -> Self {
        let inner = HasherInner {
            argon2: self.inner.argon2.clone(),
            decoy: self.inner.decoy.clone(),
            slots: Arc::new(tokio::sync::Semaphore::new(slots.max(1))),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The PHC string of `password` with a fresh random salt (blocking; see [`Self::hash`]).
    pub fn hash_blocking(&self, password: &Password) -> Result<PasswordHashPhc, AccountError> {
        hash_with(&self.inner.argon2, password)
    }

    /// Whether `password` matches `stored` (blocking). A malformed stored hash is `false`.
    /// The comparison inside argon2 is constant-time.
    pub fn verify_blocking(&self, password: &Password, stored: &PasswordHashPhc) -> bool {
        match PasswordHash::new(stored.as_str()) {
            Ok(parsed) => self
                .inner
                .argon2
                .verify_password(password.bytes(), &parsed)
                .is_ok(),
            Err(_) => false,
        }
    }

    /// Spends the time of one verification and returns `false`: for an unknown email.
    pub fn verify_decoy_blocking(&self, password: &Password) -> bool {
        let _ = self.verify_blocking(password, &self.inner.decoy);
        false
    }

    /// [`Self::hash_blocking`] on tokio's blocking pool, waiting for a hashing slot (an
    /// operator's account creation: rare, so it queues rather than fails).
    pub async fn hash(&self, password: Password) -> Result<PasswordHashPhc, AccountError> {
        let hasher = self.clone();
        let slot = Arc::clone(&self.inner.slots)
            .acquire_owned()
            .await
            .map_err(|e| AccountError::Internal(format!("password hashing slots: {e}")))?;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            hasher.hash_blocking(&password)
        })
        .await
        .map_err(|e| AccountError::Internal(format!("password hashing task: {e}")))?
    }

    /// Verifies against `stored`, or against the decoy when `stored` is `None`, on tokio's
    /// blocking pool. Every hashing slot taken is [`AccountError::HasherBusy`] at once (a
    /// login answers 429; it does not queue).
    pub async fn verify(
        &self,
        password: Password,
        stored: Option<PasswordHashPhc>,
    ) -> Result<bool, AccountError> {
        let hasher = self.clone();
        let slot = Arc::clone(&self.inner.slots)
            .try_acquire_owned()
            .map_err(|_| AccountError::HasherBusy)?;
        Ok(tokio::task::spawn_blocking(move || {
            let _slot = slot;
            match stored {
                Some(stored) => hasher.verify_blocking(&password, &stored),
                None => hasher.verify_decoy_blocking(&password),
            }
        })
        .await
        .unwrap_or(false))
    }
}

fn hash_with(
    argon2: &Argon2<'static>,
    password: &Password,
) -> Result<PasswordHashPhc, AccountError> {
    argon2
        .hash_password(password.bytes())
        .map(|hash| PasswordHashPhc::new(hash.to_string()))
        .map_err(|e| AccountError::Password(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hasher() -> PasswordHasher {
        PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_verification_without_a_free_slot_is_refused_at_once() {
        // One slot, a hash costly enough to still be running when the second call starts.
        let hasher = PasswordHasher::new(PasswordCost::OWASP)
            .unwrap()
            .with_slots(1);
        let password = || Password::new("correct horse battery".into()).unwrap();
        let stored = hasher.hash_blocking(&password()).unwrap();
        // `join!` polls the first call first: it takes the slot before the second asks.
        let (first, second) = tokio::join!(
            hasher.verify(password(), Some(stored.clone())),
            hasher.verify(password(), Some(stored.clone()))
        );
        assert!(first.unwrap());
        assert!(matches!(second, Err(AccountError::HasherBusy)));
        // The slot is free again.
        assert!(hasher.verify(password(), Some(stored)).await.unwrap());
    }

    #[test]
    fn hashes_are_salted_argon2id_phc_strings_that_verify() {
        let hasher = hasher();
        let password = Password::new("correct horse battery".into()).unwrap();
        let a = hasher.hash_blocking(&password).unwrap();
        let b = hasher.hash_blocking(&password).unwrap();
        assert!(
            a.as_str().starts_with("$argon2id$v=19$m=8,t=1,p=1$"),
            "{}",
            a.as_str()
        );
        assert_ne!(a, b, "each hash has its own salt");
        assert!(hasher.verify_blocking(&password, &a));
        let wrong = Password::new("correct horse battery!".into()).unwrap();
        assert!(!hasher.verify_blocking(&wrong, &a));
        assert!(!hasher.verify_blocking(&password, &PasswordHashPhc::new("garbage".into())));
        assert!(!hasher.verify_decoy_blocking(&password));
    }

    #[test]
    fn the_decoy_exists_from_the_start_with_the_hasher_cost() {
        let hasher = hasher();
        // Made by `new`, with the same parameters as every real hash, so an unknown email
        // costs exactly one verification of the same price.
        let decoy = hasher.inner.decoy.as_str();
        assert!(decoy.starts_with("$argon2id$v=19$m=8,t=1,p=1$"), "{decoy}");
        let other = PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).unwrap();
        assert_ne!(
            other.inner.decoy.as_str(),
            decoy,
            "a random password per hasher"
        );
    }

    #[test]
    fn a_hash_verifies_under_another_cost_setting() {
        // The PHC string carries its own parameters, so raising the cost keeps old logins.
        let old = hasher();
        let password = Password::new("12345678".into()).unwrap();
        let stored = old.hash_blocking(&password).unwrap();
        let new = PasswordHasher::new(PasswordCost {
            memory_kib: 64,
            iterations: 2,
            parallelism: 1,
        })
        .unwrap();
        assert!(new.verify_blocking(&password, &stored));
    }

    #[test]
    fn password_rules_and_redaction() {
        assert!(Password::new("short".into()).is_err());
        assert!(Password::new("x".repeat(MAX_PASSWORD_BYTES + 1)).is_err());
        let password = Password::new("hunter2hunter2".into()).unwrap();
        assert_eq!(format!("{password:?}"), "Password(<redacted>)");
        assert!(Password::presented("x".repeat(MAX_PASSWORD_BYTES + 1)).is_none());
        assert!(
            PasswordHasher::new(PasswordCost {
                memory_kib: 1,
                iterations: 1,
                parallelism: 1
            })
            .is_err()
        );
    }
}
