//! Whether the parts of a process that can fail on their own while it goes on serving are
//! working: the worker's snapshot publication, a replica's refresh from the store, the reference
//! reload. Each keeps a [`HealthTracker`] that it tells of every attempt; `/health` lists them.
//!
//! A failing part does not stop the process: reads keep answering from the last snapshots (with
//! their honest age) while the tracker says what has been failing, since when, and why in a
//! few words. The reason is a category ("permission denied"), never the failing path or URL:
//! `/health` answers without a token; the full error goes to the log.

use std::error::Error;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// The parts `/health` reports, by the names it gives them (fixed, like the metrics' labels).
pub mod components {
    /// A compute worker's cycles writing snapshots to the store.
    pub const SNAPSHOT_PUBLICATION: &str = "snapshot_publication";
    /// The API reading newly published snapshots (a replica polls the store).
    pub const SNAPSHOT_REFRESH: &str = "snapshot_refresh";
    /// The API reading the reference tables other processes merge.
    pub const REFERENCE_REFRESH: &str = "reference_refresh";
    /// The pump writing sampled quotes to the quote archive.
    pub const QUOTE_ARCHIVE: &str = "quote_archive";
}

/// One part's state, as `/health` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComponentHealth {
    /// The part: a fixed name of the code (`snapshot_publication`, `snapshot_refresh`, …).
    pub component: &'static str,
    /// `ok`, or `failing` when its last attempt failed.
    pub status: &'static str,
    /// Attempts failed in a row (0 once one succeeds).
    pub consecutive_failures: u64,
    /// When an attempt last succeeded (`None`: none has yet).
    pub last_success_at: Option<DateTime<Utc>>,
    /// When an attempt last failed.
    pub last_failure_at: Option<DateTime<Utc>>,
    /// Why the last failure failed, as a category.
    pub last_error: Option<String>,
}

impl ComponentHealth {
    /// Whether the part's last attempt failed.
    pub fn is_failing(&self) -> bool {
        self.consecutive_failures > 0
    }
}

#[derive(Debug, Default)]
struct Attempts {
    consecutive_failures: u64,
    last_success_at: Option<DateTime<Utc>>,
    last_failure_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
}

/// The attempts of one part, told by the part and read by `/health` (cheap on both sides: a
/// short lock, no allocation on success).
#[derive(Debug)]
pub struct HealthTracker {
    component: &'static str,
    attempts: Mutex<Attempts>,
}

impl HealthTracker {
    /// A part that has not tried anything yet.
    pub fn new(component: &'static str) -> Self {
        Self {
            component,
            attempts: Mutex::new(Attempts::default()),
        }
    }

    fn attempts(&self) -> std::sync::MutexGuard<'_, Attempts> {
        self.attempts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An attempt succeeded at `at`.
    pub fn succeeded(&self, at: DateTime<Utc>) {
        let mut attempts = self.attempts();
        attempts.consecutive_failures = 0;
        attempts.last_success_at = Some(at);
    }

    /// An attempt failed at `at`, for `reason` (a category: see [`failure_category`]).
    pub fn failed(&self, at: DateTime<Utc>, reason: String) {
        let mut attempts = self.attempts();
        attempts.consecutive_failures += 1;
        attempts.last_failure_at = Some(at);
        attempts.last_error = Some(reason);
    }

    /// Records `outcome` at `at`: a success, or a failure described as `what` failed (see
    /// [`failure_category`]).
    pub fn record<T, E: Error + 'static>(
        &self,
        at: DateTime<Utc>,
        outcome: &Result<T, E>,
        what: &str,
    ) {
        match outcome {
            Ok(_) => self.succeeded(at),
            Err(error) => self.failed(at, failure_category(error, what)),
        }
    }

    /// The part's state now.
    pub fn report(&self) -> ComponentHealth {
        let attempts = self.attempts();
        ComponentHealth {
            component: self.component,
            status: if attempts.consecutive_failures > 0 {
                "failing"
            } else {
                "ok"
            },
            consecutive_failures: attempts.consecutive_failures,
            last_success_at: attempts.last_success_at,
            last_failure_at: attempts.last_failure_at,
            last_error: attempts.last_error.clone(),
        }
    }
}

/// The category of `error` that can be shown without a token: the kind of the first I/O error
/// in its chain of sources (`permission denied`, `connection refused`, `no space left on
/// device`…), or `what` when there is none. Paths, URLs and messages stay in the log.
pub fn failure_category(error: &(dyn Error + 'static), what: &str) -> String {
    let mut source: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return format!("{what}: {}", io.kind());
        }
        source = current.source();
    }
    what.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[derive(Debug, thiserror::Error)]
    #[error("writing /srv/optics/snapshots/chain/x.parquet")]
    struct Wrapped(#[source] std::io::Error);

    #[test]
    fn a_failure_is_reported_until_the_next_success() {
        let tracker = HealthTracker::new("snapshot_publication");
        let t0 = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        assert_eq!(tracker.report().status, "ok");
        assert_eq!(tracker.report().last_success_at, None);
        tracker.succeeded(t0);
        let t1 = t0 + chrono::TimeDelta::seconds(1);
        tracker.failed(t1, "writing a snapshot: permission denied".to_owned());
        tracker.failed(t1, "writing a snapshot: permission denied".to_owned());
        let failing = tracker.report();
        assert!(failing.is_failing());
        assert_eq!(failing.status, "failing");
        assert_eq!(failing.consecutive_failures, 2);
        assert_eq!(failing.last_success_at, Some(t0));
        assert_eq!(failing.last_failure_at, Some(t1));
        let t2 = t1 + chrono::TimeDelta::seconds(1);
        tracker.record(t2, &Ok::<(), std::fmt::Error>(()), "writing a snapshot");
        let recovered = tracker.report();
        assert_eq!(recovered.status, "ok");
        assert_eq!(recovered.consecutive_failures, 0);
        // The last failure stays on record for whoever looks after the fact.
        assert_eq!(recovered.last_failure_at, Some(t1));
    }

    #[test]
    fn the_category_names_the_io_kind_and_never_the_path() {
        let error = Wrapped(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        let category = failure_category(&error, "writing a snapshot");
        assert_eq!(category, "writing a snapshot: permission denied");
        let plain = std::fmt::Error;
        assert_eq!(failure_category(&plain, "encoding"), "encoding");
    }
}
