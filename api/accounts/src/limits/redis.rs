//! The shared limiter: counters in Redis, checked and counted by one Lua script when a request
//! is admitted and settled by another once its answer is known.
//!
//! Redis runs a script atomically, so replicas sharing one Redis admit exactly as one process
//! would. The month's units key holds what is charged and what requests in flight reserve, the
//! two hashes by endpoint only what is charged. Keys carry the window in their name (`…:m:<minute since epoch>`), so a new window is
//! a new key and nothing needs resetting; each key gets a relative TTL a little past its
//! window's end (relative, because the service's clock — a test's manual clock included — need
//! not agree with Redis's). All keys of one account share a `{a<id>}` hash tag, so the script
//! is also valid on Redis Cluster.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::{
    Decision, EndpointUsage, LimitError, LimitFuture, LimitRequest, Limiter, Quota, RateLimits,
    Settlement, UsageReport, WindowState, Windows, refusal, sort_usage,
};
use crate::AccountId;

/// How long connecting, and each command, may take before the request fails.
const REDIS_TIMEOUT: Duration = Duration::from_secs(2);
/// Keys outlive their window by this much (clock skew between replicas).
const WINDOW_SLACK: TimeDelta = TimeDelta::minutes(2);
/// A month's breakdown is kept this long after the month ends.
const MONTH_SLACK: TimeDelta = TimeDelta::days(2);

/// KEYS: the token's minute and hour counts, month units, the account's minute and hour
/// counts. ARGV: per-minute limit, per-hour limit, budget, cost, the three TTLs in seconds.
/// Counts the request in the token's and the account's minute and hour (the windows hold per
/// account too, so a revoked and recreated token gets no fresh ones) and reserves its cost in
/// the month. Returns `{admitted, minute, hour, month_units}` with the larger of the token's
/// and the account's counts — after counting when admitted, before when refused. The refusal
/// test is the same as [`super::refusal`].
const RESERVE_LUA: &str = r"
local m = tonumber(redis.call('GET', KEYS[1]) or '0')
local h = tonumber(redis.call('GET', KEYS[2]) or '0')
local b = tonumber(redis.call('GET', KEYS[3]) or '0')
local am = tonumber(redis.call('GET', KEYS[4]) or '0')
local ah = tonumber(redis.call('GET', KEYS[5]) or '0')
local cost = tonumber(ARGV[4])
m = math.max(m, am)
h = math.max(h, ah)
if m >= tonumber(ARGV[1]) or h >= tonumber(ARGV[2]) or b + cost > tonumber(ARGV[3]) then
  return {0, m, h, b}
end
local tm = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[5])
local th = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[6])
am = redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], ARGV[5])
ah = redis.call('INCR', KEYS[5])
redis.call('EXPIRE', KEYS[5], ARGV[6])
b = redis.call('INCRBY', KEYS[3], cost)
redis.call('EXPIRE', KEYS[3], ARGV[7])
return {1, math.max(tm, am), math.max(th, ah), b}
";

/// KEYS: month units, month calls by endpoint, month units by endpoint. ARGV: cost, `1` to charge or `0` to release, the month's TTL in seconds, endpoint.
/// A charge counts the call and its units by endpoint (the month's units already hold them); a
/// release takes the units back out of the month, unless the month's key is gone (the month
/// ended and expired), and never below zero. Returns the month's units after.
const SETTLE_LUA: &str = r"
local cost = tonumber(ARGV[1])
if ARGV[2] == '1' then
  redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
  redis.call('EXPIRE', KEYS[2], ARGV[3])
  redis.call('HINCRBY', KEYS[3], ARGV[4], cost)
  redis.call('EXPIRE', KEYS[3], ARGV[3])
elseif cost > 0 then
  local b = redis.call('GET', KEYS[1])
  if b then
    redis.call('DECRBY', KEYS[1], math.min(cost, tonumber(b)))
  end
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
";

/// The Redis [`Limiter`] (`--limiter redis://…`).
#[derive(Clone)]
pub struct RedisLimiter {
    connection: ConnectionManager,
    key_prefix: String,
    limits: RateLimits,
    reserve_script: redis::Script,
    settle_script: redis::Script,
}

impl fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("key_prefix", &self.key_prefix)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

struct Keys {
    minute: String,
    hour: String,
    account_minute: String,
    account_hour: String,
    month_units: String,
    month_calls_by_endpoint: String,
    month_units_by_endpoint: String,
}

impl RedisLimiter {
    /// Connects to `url` (`redis://host:port/db`) and checks the connection. `key_prefix`
    /// namespaces every key (deployments sharing a Redis; one prefix per test).
    pub async fn connect(
        url: &str,
        key_prefix: &str,
        limits: RateLimits,
    ) -> Result<Self, LimitError> {
        if key_prefix.is_empty() || key_prefix.contains(['{', '}']) {
            return Err(LimitError::Config(
                "the Redis key prefix must be non-empty and free of braces".into(),
            ));
        }
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(2);
        let connection = ConnectionManager::new_with_config(client, config).await?;
        Ok(Self {
            connection,
            key_prefix: key_prefix.to_owned(),
            limits,
            reserve_script: redis::Script::new(RESERVE_LUA),
            settle_script: redis::Script::new(SETTLE_LUA),
        })
    }

    fn keys(&self, token_id: &str, account_id: AccountId, windows: &Windows) -> Keys {
        let account = format!("{}:{{a{account_id}}}", self.key_prefix);
        Keys {
            minute: format!("{account}:t:{token_id}:m:{}", windows.minute_index),
            hour: format!("{account}:t:{token_id}:h:{}", windows.hour_index),
            account_minute: format!("{account}:m:{}", windows.minute_index),
            account_hour: format!("{account}:h:{}", windows.hour_index),
            month_units: format!("{account}:b:{}", windows.month_index),
            month_calls_by_endpoint: format!("{account}:calls:{}", windows.month_index),
            month_units_by_endpoint: format!("{account}:units:{}", windows.month_index),
        }
    }

    /// Deletes every key under this limiter's prefix (tests clean up with it).
    pub async fn delete_all_keys(&self) -> Result<u64, LimitError> {
        let mut connection = self.connection.clone();
        let pattern = format!("{}:*", self.key_prefix);
        let mut cursor: u64 = 0;
        let mut deleted = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(500)
                .query_async(&mut connection)
                .await?;
            if !keys.is_empty() {
                let removed: u64 = redis::cmd("DEL")
                    .arg(&keys)
                    .query_async(&mut connection)
                    .await?;
                deleted += removed;
            }
            if next == 0 {
                return Ok(deleted);
            }
            cursor = next;
        }
    }
}

/// `url` fit for a message or a log line: the user and password of the authority
/// (`redis://user:secret@host`) and any `pass`/`password` query value (`redis+unix:///sock?
/// pass=secret`) become `***`. A Redis URL often carries the server's password.
pub fn redacted_url(url: &str) -> String {
    let (before_query, query) = match url.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (url, None),
    };
    let mut redacted = match before_query.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find(['/', '#']).unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            match authority.rfind('@') {
                Some(at) => format!("{scheme}://***{}{path}", &authority[at..]),
                None => before_query.to_owned(),
            }
        }
        None => before_query.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.to_ascii_lowercase().contains("pass") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&pairs.join("&"));
    }
    redacted
}

fn ttl_secs(now: DateTime<Utc>, until: DateTime<Utc>) -> i64 {
    (until - now).num_seconds().max(1)
}

impl Limiter for RedisLimiter {
    fn reserve<'a>(&'a self, request: LimitRequest<'a>) -> LimitFuture<'a, Decision> {
        Box::pin(async move {
            let windows = Windows::at(request.now);
            let keys = self.keys(request.token_id, request.account_id, &windows);
            let mut connection = self.connection.clone();
            let (admitted, minute, hour, month): (u8, u64, u64, u64) = self
                .reserve_script
                .key(&keys.minute)
                .key(&keys.hour)
                .key(&keys.month_units)
                .key(&keys.account_minute)
                .key(&keys.account_hour)
                .arg(self.limits.per_minute)
                .arg(self.limits.per_hour)
                .arg(request.monthly_budget_units)
                .arg(request.cost_units)
                .arg(ttl_secs(
                    request.now,
                    windows.minute_resets_at + WINDOW_SLACK,
                ))
                .arg(ttl_secs(request.now, windows.hour_resets_at + WINDOW_SLACK))
                .arg(ttl_secs(request.now, windows.month_resets_at + MONTH_SLACK))
                .invoke_async(&mut connection)
                .await?;
            let quota = Quota::from_counts(
                self.limits,
                request.monthly_budget_units,
                &windows,
                minute,
                hour,
                month,
            );
            if admitted == 1 {
                return Ok(Decision::Admitted(quota));
            }
            let (limit, retry_after_secs) = refusal(&quota, request.cost_units, request.now)
                .ok_or_else(|| {
                    LimitError::Protocol(format!(
                        "refused with room left (minute {minute}, hour {hour}, month {month})"
                    ))
                })?;
            Ok(Decision::Refused {
                limit,
                retry_after_secs,
                quota,
            })
        })
    }

    fn settle<'a>(
        &'a self,
        request: LimitRequest<'a>,
        settlement: Settlement,
    ) -> LimitFuture<'a, WindowState> {
        Box::pin(async move {
            let windows = Windows::at(request.now);
            let keys = self.keys(request.token_id, request.account_id, &windows);
            let mut connection = self.connection.clone();
            let month: u64 = self
                .settle_script
                .key(&keys.month_units)
                .key(&keys.month_calls_by_endpoint)
                .key(&keys.month_units_by_endpoint)
                .arg(request.cost_units)
                .arg(u8::from(settlement == Settlement::Charge))
                .arg(ttl_secs(request.now, windows.month_resets_at + MONTH_SLACK))
                .arg(request.endpoint)
                .invoke_async(&mut connection)
                .await?;
            Ok(WindowState::new(
                request.monthly_budget_units,
                month,
                windows.month_resets_at,
            ))
        })
    }

    fn usage<'a>(
        &'a self,
        token_id: &'a str,
        account_id: AccountId,
        monthly_budget_units: u64,
        now: DateTime<Utc>,
    ) -> LimitFuture<'a, UsageReport> {
        Box::pin(async move {
            let windows = Windows::at(now);
            let keys = self.keys(token_id, account_id, &windows);
            let mut connection = self.connection.clone();
            type Counts = (Vec<Option<u64>>, HashMap<String, u64>, HashMap<String, u64>);
            let (counts, calls, units): Counts = redis::pipe()
                .cmd("MGET")
                .arg(&keys.minute)
                .arg(&keys.hour)
                .arg(&keys.month_units)
                .arg(&keys.account_minute)
                .arg(&keys.account_hour)
                .cmd("HGETALL")
                .arg(&keys.month_calls_by_endpoint)
                .cmd("HGETALL")
                .arg(&keys.month_units_by_endpoint)
                .query_async(&mut connection)
                .await?;
            let count = |i: usize| counts.get(i).copied().flatten().unwrap_or(0);
            let mut by_endpoint: Vec<EndpointUsage> = calls
                .into_iter()
                .map(|(endpoint, calls)| EndpointUsage {
                    units: units.get(&endpoint).copied().unwrap_or(0),
                    endpoint,
                    calls,
                })
                .collect();
            sort_usage(&mut by_endpoint);
            Ok(UsageReport {
                quota: Quota::from_counts(
                    self.limits,
                    monthly_budget_units,
                    &windows,
                    count(0).max(count(3)),
                    count(1).max(count(4)),
                    count(2),
                ),
                by_endpoint,
            })
        })
    }

    fn limits(&self) -> RateLimits {
        self.limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_survive_redaction() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/"),
            ("redis://:s3cret@cache:6379/0", "redis://***@cache:6379/0"),
            (
                "rediss://ops:s3cret@cache.example/2",
                "rediss://***@cache.example/2",
            ),
            ("redis://ops:p@ss@cache/", "redis://***@cache/"),
            (
                "redis+unix:///run/redis.sock?db=1&pass=s3cret",
                "redis+unix:///run/redis.sock?db=1&pass=***",
            ),
            (
                "redis://cache/?password=s3cret",
                "redis://cache/?password=***",
            ),
        ] {
            let redacted = redacted_url(url);
            assert_eq!(redacted, shown, "{url}");
            assert!(!redacted.contains("s3cret"), "{redacted}");
        }
    }
}
