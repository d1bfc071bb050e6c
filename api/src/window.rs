//! Compact windows (spec 4.4): assistant clients get trimmed row lists, REST callers full ones.
//!
//! - **Who is compact by default:** a request carrying `X-Service-Client` (the header the
//!   assistant tool clients send) or `X-ApexVol-Client` (the same signal from the original
//!   service's public client), with any non-empty value. Everyone else gets full payloads.
//! - **Override:** `detail=compact` or `detail=full` wins either way.
//! - **Size:** under compact, `strikes_around` sets the strikes kept per side of the centre
//!   (spot) and `limit` the rows kept of a plain list; absent, the endpoint's compact default
//!   applies ([`GEX_STRIKES_PER_SIDE`], [`ZERO_DTE_STRIKES_PER_SIDE`], [`FLOW_ALL_FLOW_ROWS`],
//!   [`FLOW_TOP_ROWS`], [`VOL_SERIES_ROWS`]: day series keep their most recent sessions).
//!   `strikes_around=0` means no trimming. Under full, nothing is trimmed and the sizes are
//!   ignored.
//! - **Per side:** a strike-sorted list keeps the N strikes strictly below the centre and the N
//!   at or above it (so at most 2N rows), the way a chain window around spot reads.
//! - Every list a handler trims reports a [`Window`] (`detail`, `rows_total`, `rows_returned`,
//!   `truncated`); scalars, key levels, implications and summaries are never trimmed.

use std::ops::Range;

use axum::http::HeaderMap;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::params::QueryParams;

/// Headers that mark an assistant (tool-server) client.
pub const SERVICE_CLIENT_HEADERS: [&str; 2] = ["x-service-client", "x-apexvol-client"];

/// gex under compact: strikes per side in `gex_by_strike` and `gex_profile`.
pub const GEX_STRIKES_PER_SIDE: usize = 25;
/// zero-dte under compact: strikes per side in `by_strike` and `chain_table`.
pub const ZERO_DTE_STRIKES_PER_SIDE: usize = 30;
/// flow under compact: rows of `all_flow`.
pub const FLOW_ALL_FLOW_ROWS: usize = 25;
/// flow under compact: rows of `largest_flows` and of `unusual_activity`.
pub const FLOW_TOP_ROWS: usize = 10;
/// Day series under compact (hv-regimes, vrp timeseries, skew history, borrow-rate,
/// correlation-compare and relative-value timeseries): the most recent sessions kept.
pub const VOL_SERIES_ROWS: usize = 30;

/// Full payload or trimmed lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Lists trimmed to the window.
    Compact,
    /// Everything.
    Full,
}

/// True when the request carries a service-client header with a non-empty value.
pub fn is_service_client(headers: &HeaderMap) -> bool {
    SERVICE_CLIENT_HEADERS.iter().any(|name| {
        headers
            .get(*name)
            .is_some_and(|value| !value.as_bytes().iter().all(u8::is_ascii_whitespace))
    })
}

/// What the caller asked for: the effective detail and the sizes given, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRequest {
    /// Compact or full, after the header and the `detail` override.
    pub detail: Detail,
    /// `strikes_around` when given (clamped to its documented range).
    pub strikes_around: Option<usize>,
    /// `limit` when given (clamped to its documented range).
    pub limit: Option<usize>,
}

impl WindowRequest {
    /// Reads the header signal and the endpoint's `detail`, `strikes_around` and `limit`
    /// parameters (those the endpoint defines; the others are ignored).
    pub fn from_request(headers: &HeaderMap, params: &QueryParams) -> Result<Self, ApiError> {
        let endpoint = params.endpoint();
        let explicit = match endpoint.param("detail") {
            Some(_) => params.choice("detail")?,
            None => None,
        };
        let detail = match explicit {
            Some("compact") => Detail::Compact,
            Some(_) => Detail::Full,
            None if is_service_client(headers) => Detail::Compact,
            None => Detail::Full,
        };
        let size = |name: &str| -> Result<Option<usize>, ApiError> {
            if endpoint.param(name).is_none() || !params.is_given(name) {
                return Ok(None);
            }
            let value = params.int(name)?.value;
            Ok(Some(usize::try_from(value).unwrap_or(0)))
        };
        Ok(Self {
            detail,
            strikes_around: size("strikes_around")?,
            limit: size("limit")?,
        })
    }

    /// Strikes to keep per side: `None` for no trimming (full detail, or `strikes_around=0`).
    pub fn strikes_per_side(&self, compact_default: usize) -> Option<usize> {
        match self.detail {
            Detail::Full => None,
            Detail::Compact => match self.strikes_around.unwrap_or(compact_default) {
                0 => None,
                n => Some(n),
            },
        }
    }

    /// Rows to keep of a plain list: `None` for no trimming (full detail).
    pub fn row_limit(&self, compact_default: usize) -> Option<usize> {
        match self.detail {
            Detail::Full => None,
            Detail::Compact => Some(self.limit.unwrap_or(compact_default)),
        }
    }
}

/// The `window` block of a trimmed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Window {
    /// The detail the response was built with.
    pub detail: Detail,
    /// Rows before trimming.
    pub rows_total: usize,
    /// Rows returned.
    pub rows_returned: usize,
    /// True when rows were left out.
    pub truncated: bool,
    /// Strikes kept per side of the centre, for strike windows under compact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strikes_around: Option<usize>,
    /// Row cap, for plain lists under compact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

impl Window {
    /// The window of several trimmed lists of one payload: totals added, truncated if any was.
    pub fn combine(self, other: Self) -> Self {
        Self {
            detail: self.detail,
            rows_total: self.rows_total + other.rows_total,
            rows_returned: self.rows_returned + other.rows_returned,
            truncated: self.truncated || other.truncated,
            strikes_around: self.strikes_around.or(other.strikes_around),
            limit: self.limit.or(other.limit),
        }
    }
}

/// Trims a list sorted by ascending strike to `per_side` strikes below `centre` and
/// `per_side` at or above it; `None` keeps everything. Returns the range of rows to keep and
/// the window block.
///
/// The rows must be sorted by `strike`; on unsorted input the result is still a valid range
/// (no panic) but not a meaningful window. A NaN centre keeps the first `per_side` rows.
pub fn window_around_strike<T>(
    rows: &[T],
    strike: impl Fn(&T) -> f64,
    centre: f64,
    per_side: Option<usize>,
    detail: Detail,
) -> (Range<usize>, Window) {
    let total = rows.len();
    let range = match per_side {
        None => 0..total,
        Some(n) => {
            let split = rows.partition_point(|row| strike(row) < centre);
            split.saturating_sub(n)..split.saturating_add(n).min(total)
        }
    };
    let window = Window {
        detail,
        rows_total: total,
        rows_returned: range.len(),
        truncated: range.len() < total,
        strikes_around: per_side,
        limit: None,
    };
    (range, window)
}

/// Keeps the last `limit` rows of a list in time order (the most recent sessions of a day
/// series); `None` keeps all.
pub fn window_last(rows: usize, limit: Option<usize>, detail: Detail) -> (Range<usize>, Window) {
    let (first, window) = window_first(rows, limit, detail);
    (rows - first.len()..rows, window)
}

/// Keeps the first `limit` rows of a list (already in the order to show); `None` keeps all.
pub fn window_first(rows: usize, limit: Option<usize>, detail: Detail) -> (Range<usize>, Window) {
    let kept = limit.map_or(rows, |n| n.min(rows));
    (
        0..kept,
        Window {
            detail,
            rows_total: rows,
            rows_returned: kept,
            truncated: kept < rows,
            strikes_around: None,
            limit,
        },
    )
}

#[cfg(test)]
mod tests;
