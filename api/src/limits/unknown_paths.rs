//! Paths under the data prefix that answered "no such endpoint" to an authenticated token, kept
//! seven days so `/me/usage` can show a client built against a path that does not exist.
//!
//! Held in this process (each replica reports what it served). Every input is bounded: a path
//! is cut at [`MAX_PATH_CHARS`], a token keeps its [`MAX_PATHS_PER_TOKEN`] most recent paths,
//! and at most [`MAX_TOKENS`] tokens are tracked (the least recently seen is dropped first).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

/// How long a path is remembered, days.
pub const RETENTION_DAYS: i64 = 7;
/// Characters of a path kept.
pub const MAX_PATH_CHARS: usize = 256;
/// Distinct paths kept per token.
pub const MAX_PATHS_PER_TOKEN: usize = 20;
/// Tokens tracked.
pub const MAX_TOKENS: usize = 10_000;

/// One path and how often it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathHits {
    /// The path as requested (cut at [`MAX_PATH_CHARS`]).
    pub path: String,
    /// Requests in the retention window.
    pub count: u64,
    /// The latest.
    pub last_seen: DateTime<Utc>,
}

/// The recorder.
#[derive(Debug, Default)]
pub struct UnknownPaths {
    by_token: Mutex<HashMap<String, Vec<PathHits>>>,
}

impl UnknownPaths {
    /// Records one request of `path` by `token_id` at `now`.
    pub fn record(&self, token_id: &str, path: &str, now: DateTime<Utc>) {
        let path: String = path.chars().take(MAX_PATH_CHARS).collect();
        let mut by_token = self
            .by_token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !by_token.contains_key(token_id) && by_token.len() >= MAX_TOKENS {
            let cutoff = now - TimeDelta::days(RETENTION_DAYS);
            by_token.retain(|_, hits| hits.iter().any(|h| h.last_seen > cutoff));
            if by_token.len() >= MAX_TOKENS {
                let stalest = by_token
                    .iter()
                    .min_by_key(|(_, hits)| hits.iter().map(|h| h.last_seen).max())
                    .map(|(token, _)| token.clone());
                if let Some(token) = stalest {
                    by_token.remove(&token);
                }
            }
        }
        let hits = by_token.entry(token_id.to_owned()).or_default();
        match hits.iter_mut().find(|h| h.path == path) {
            Some(hit) => {
                hit.count += 1;
                hit.last_seen = now;
            }
            None => {
                if hits.len() >= MAX_PATHS_PER_TOKEN
                    && let Some(oldest) = hits
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, h)| h.last_seen)
                        .map(|(i, _)| i)
                {
                    hits.swap_remove(oldest);
                }
                hits.push(PathHits {
                    path,
                    count: 1,
                    last_seen: now,
                });
            }
        }
    }

    /// `token_id`'s paths seen in the last [`RETENTION_DAYS`], most requested first.
    pub fn recent(&self, token_id: &str, now: DateTime<Utc>) -> Vec<PathHits> {
        let cutoff = now - TimeDelta::days(RETENTION_DAYS);
        let by_token = self
            .by_token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut hits: Vec<PathHits> = by_token
            .get(token_id)
            .map(|hits| {
                hits.iter()
                    .filter(|h| h.last_seen > cutoff)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        hits.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.path.cmp(&b.path)));
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hours: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + TimeDelta::hours(hours)
    }

    #[test]
    fn counts_per_token_forget_after_seven_days_and_stay_bounded() {
        let paths = UnknownPaths::default();
        paths.record("t1", "/api/mcp/data/gexx/SPY", at(0));
        paths.record("t1", "/api/mcp/data/gexx/SPY", at(1));
        paths.record("t1", "/api/mcp/data/chains/SPY", at(2));
        paths.record("t2", "/api/mcp/data/x", at(2));
        let recent = paths.recent("t1", at(3));
        assert_eq!(recent.len(), 2);
        assert_eq!(
            (recent[0].path.as_str(), recent[0].count),
            ("/api/mcp/data/gexx/SPY", 2)
        );
        assert_eq!(paths.recent("t1", at(24 * 7 + 1)).len(), 1);
        assert!(paths.recent("t1", at(24 * 7 + 2)).is_empty());
        for i in 0..(MAX_PATHS_PER_TOKEN + 5) {
            paths.record("t3", &format!("/p/{i}"), at(i as i64));
        }
        assert_eq!(paths.recent("t3", at(30)).len(), MAX_PATHS_PER_TOKEN);
        paths.record("t3", &"x".repeat(10_000), at(40));
        assert!(
            paths
                .recent("t3", at(40))
                .iter()
                .all(|h| h.path.len() <= MAX_PATH_CHARS)
        );
    }
}
