//! The API's one error type and the error envelope it writes.
//!
//! Every failure a handler, an extractor or the router can produce is an [`ApiError`]; its
//! single [`IntoResponse`] impl writes `{"success": false, "error": "…", …}` with the status of
//! the interface's error table (spec part 7). Handlers return `Result<_, ApiError>` and use `?`.

use std::fmt;

use axum::Json;
use axum::http::header::{ALLOW, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use optics_compute::expected_move::ExpectedMoveError;
use optics_compute::exposure::ExposureError;
use optics_compute::risk::RiskError;
use optics_compute::strategy::StrategyError;
use serde::Serialize;
use utoipa::ToSchema;

use crate::registry::{DATA_PREFIX, Tier};

/// Seconds a caller is asked to wait when the account store cannot take a call now.
pub const STORE_RETRY_AFTER_SECS: u64 = 5;

/// The fixed message of every 500: internal details are logged, never sent.
pub const INTERNAL_ERROR_MESSAGE: &str =
    "Internal error: the request could not be completed. It has been logged; please retry later.";

pub use optics_accounts::limits::RateLimit;

/// One entry of `did_you_mean`: a mounted endpoint near the requested path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Suggestion {
    /// HTTP method of the suggested endpoint.
    pub method: &'static str,
    /// Its full path, with `{ticker}`-style placeholders.
    pub path: String,
    /// Link to its section of the reference.
    pub docs: String,
}

/// The body of a 404: what was not found and where to look instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    /// The message (`No endpoint at /api/mcp/data/gexx/SPY`).
    pub error: String,
    /// Nearest mounted endpoints (empty when nothing is close).
    pub did_you_mean: Vec<Suggestion>,
    /// Where the documentation is.
    pub docs: Option<String>,
    /// The index of served endpoints (set for unknown paths).
    pub index: Option<String>,
    /// How many endpoints are served (set for unknown paths).
    pub endpoint_count: Option<usize>,
}

/// Every way a request can fail, one variant per status of the interface's error table.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: a malformed or missing parameter or body; the message says what and why.
    #[error("{0}")]
    BadRequest(String),
    /// 401: the token is missing or invalid (the message never says which account).
    #[error("Missing or invalid API token")]
    Unauthorized,
    /// 403: the plan does not allow the endpoint. `upgrade_required` is true when a higher plan
    /// would (then `required_tier` and `your_tier` are set); false when the account has no
    /// active plan at all.
    #[error("{}", forbidden_message(*.upgrade_required, *.required_tier))]
    Forbidden {
        /// True when a higher plan would allow the call.
        upgrade_required: bool,
        /// The endpoint's tier.
        required_tier: Option<Tier>,
        /// The caller's plan.
        your_tier: Option<String>,
    },
    /// 404: no such endpoint (with suggestions) or no such resource (e.g. an uncovered ticker).
    #[error("{}", .0.error)]
    NotFound(Box<NotFound>),
    /// 405: the path exists but not with this method.
    #[error("Method {method} is not allowed on {path}; allowed: {}", .allowed.join(", "))]
    MethodNotAllowed {
        /// The method used.
        method: String,
        /// The path requested.
        path: String,
        /// Methods the path accepts.
        allowed: Vec<&'static str>,
    },
    /// 424: the data needed to answer is missing upstream (no two-sided quote, a date not
    /// carried, the store not loaded). The body carries `upstream: true`.
    #[error("{0}")]
    Upstream(String),
    /// 429: a rate limit or the monthly budget is exhausted; `Retry-After` says when to retry.
    #[error("{}", .limit.describe())]
    RateLimited {
        /// Which limit.
        limit: RateLimit,
        /// Seconds until the window opens again.
        retry_after_secs: u64,
    },
    /// 500: a bug or an I/O failure. The cause is logged with its context and never sent.
    #[error("internal error while {context}: {source}")]
    Internal {
        /// What the server was doing (logged).
        context: &'static str,
        /// The cause (logged).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// 503: the options-flow volume feed is down (flow endpoints only). The body carries
    /// `data_unavailable: true`.
    #[error("{0}")]
    FlowUnavailable(String),
    /// 503: every slot for a heavy computation is taken, or the computation ran past its
    /// deadline; `Retry-After` says when to try again.
    #[error("{reason}")]
    Busy {
        /// What was refused and why.
        reason: String,
        /// Seconds to wait before retrying.
        retry_after_secs: u64,
    },
}

fn forbidden_message(upgrade_required: bool, required_tier: Option<Tier>) -> String {
    match (upgrade_required, required_tier) {
        (true, Some(tier)) => format!(
            "This endpoint requires the {} plan or higher",
            capitalised(tier.as_str())
        ),
        _ => "No active plan: this endpoint needs a paid or trial subscription".to_owned(),
    }
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

impl ApiError {
    /// A 400 with the given reason.
    pub fn bad_request(reason: impl Into<String>) -> Self {
        Self::BadRequest(reason.into())
    }

    /// A 424 with the given reason.
    pub fn upstream(reason: impl Into<String>) -> Self {
        Self::Upstream(reason.into())
    }

    /// A 500 that logs `source` under `context` and answers the fixed message.
    pub fn internal(
        context: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Internal {
            context,
            source: source.into(),
        }
    }

    /// An account-store failure under `context`: a 503 with Retry-After when the store is only
    /// busy or unreachable now (a lock another process holds, a lost connection), else a 500.
    pub fn account_store(context: &'static str, error: optics_accounts::AccountError) -> Self {
        if error.is_temporarily_unavailable() {
            tracing::warn!(%error, "{context}: the account store is unavailable");
            Self::Busy {
                reason: format!(
                    "The account database is busy; retry in {STORE_RETRY_AFTER_SECS} s"
                ),
                retry_after_secs: STORE_RETRY_AFTER_SECS,
            }
        } else {
            Self::internal(context, error)
        }
    }

    /// A 404 for a resource that does not exist (not for unknown paths: the router builds
    /// those with suggestions).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(Box::new(NotFound {
            error: message.into(),
            did_you_mean: Vec::new(),
            docs: Some(format!("{DATA_PREFIX}/docs")),
            index: None,
            endpoint_count: None,
        }))
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Upstream(_) => StatusCode::FAILED_DEPENDENCY,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Internal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            Self::FlowUnavailable(_) | Self::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The envelope this error is answered with.
    pub fn body(&self) -> ErrorBody {
        let mut body = ErrorBody::new(match self {
            // Never echo internal text.
            Self::Internal { .. } => INTERNAL_ERROR_MESSAGE.to_owned(),
            other => other.to_string(),
        });
        match self {
            Self::Forbidden {
                upgrade_required,
                required_tier,
                your_tier,
            } => {
                if *upgrade_required {
                    body.upgrade_required = Some(true);
                    body.required_tier = *required_tier;
                    body.your_tier.clone_from(your_tier);
                }
            }
            Self::NotFound(not_found) => {
                body.did_you_mean = Some(not_found.did_you_mean.clone());
                body.docs.clone_from(&not_found.docs);
                body.index.clone_from(&not_found.index);
                body.endpoint_count = not_found.endpoint_count;
            }
            Self::MethodNotAllowed { allowed, .. } => {
                body.allowed_methods = Some(allowed.clone());
            }
            Self::Upstream(_) => body.upstream = Some(true),
            Self::RateLimited {
                limit,
                retry_after_secs,
            } => {
                body.limit = Some(*limit);
                body.retry_after_seconds = Some(*retry_after_secs);
                if *limit == RateLimit::MonthlyBudget {
                    body.budget_exceeded = Some(true);
                }
            }
            Self::FlowUnavailable(_) => body.data_unavailable = Some(true),
            Self::Busy {
                retry_after_secs, ..
            } => body.retry_after_seconds = Some(*retry_after_secs),
            Self::BadRequest(_) | Self::Unauthorized | Self::Internal { .. } => {}
        }
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Internal { context, source } = &self {
            tracing::error!(context = *context, error = %source, "internal error");
        }
        let status = self.status();
        let body = self.body();
        let mut response = (status, Json(body)).into_response();
        let headers = response.headers_mut();
        match &self {
            Self::RateLimited {
                retry_after_secs, ..
            }
            | Self::Busy {
                retry_after_secs, ..
            } => {
                headers.insert(RETRY_AFTER, HeaderValue::from(*retry_after_secs));
            }
            Self::MethodNotAllowed { allowed, .. } => {
                if let Ok(value) = HeaderValue::from_str(&allowed.join(", ")) {
                    headers.insert(ALLOW, value);
                }
            }
            _ => {}
        }
        response
    }
}

/// A chain whose rows cannot be turned into priced contracts: missing upstream data (424).
impl From<ExposureError> for ApiError {
    fn from(error: ExposureError) -> Self {
        Self::upstream(format!("The chain cannot be read: {error}"))
    }
}

/// A strategy request the chain cannot serve: missing quotes are upstream data (424); every
/// other refusal names the input at fault (400).
impl From<StrategyError> for ApiError {
    fn from(error: StrategyError) -> Self {
        match error {
            StrategyError::MissingQuotes(_) => Self::upstream(error.to_string()),
            other => Self::bad_request(other.to_string()),
        }
    }
}

/// A risk request: no hedge contract or no price for an underlying is upstream data (424);
/// every other refusal names the input at fault (400).
impl From<RiskError> for ApiError {
    fn from(error: RiskError) -> Self {
        match error {
            RiskError::NoHedgeContract(_) | RiskError::MissingUnderlyingPrice { .. } => {
                Self::upstream(error.to_string())
            }
            other => Self::bad_request(other.to_string()),
        }
    }
}

/// An expected move that cannot be priced: a 400 when the caller asked for an expiration that
/// is not listed, else missing upstream data (424).
impl From<ExpectedMoveError> for ApiError {
    fn from(error: ExpectedMoveError) -> Self {
        match error {
            ExpectedMoveError::ExpirationNotListed(_) => Self::bad_request(error.to_string()),
            ExpectedMoveError::Input(input) => input.into(),
            other => Self::upstream(format!("No expected move: {other}")),
        }
    }
}

/// Stored series the volatility and earnings statistics refuse (a non-finite value): upstream
/// data at fault (424), never the caller.
impl From<optics_compute::vol::VolError> for ApiError {
    fn from(error: optics_compute::vol::VolError) -> Self {
        Self::upstream(format!("The stored series cannot be used: {error}"))
    }
}

/// The error envelope: `success: false`, the message, and the fields a status adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always false.
    pub success: bool,
    /// What went wrong, for a person.
    pub error: String,
    /// 424: true when missing upstream data caused the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<bool>,
    /// 403: true when a higher plan would allow the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upgrade_required: Option<bool>,
    /// 403: the endpoint's tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub required_tier: Option<Tier>,
    /// 403: the caller's plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub your_tier: Option<String>,
    /// 404: the nearest served endpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<Vec<Suggestion>>,
    /// 404: where the documentation is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// 404 on an unknown path: the index of served endpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// 404 on an unknown path: how many endpoints are served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint_count: Option<usize>,
    /// 405: the methods the path accepts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_methods: Option<Vec<&'static str>>,
    /// 429: which limit was hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<RateLimit>,
    /// 429: seconds until a retry can succeed (also in `Retry-After`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// 429 on the monthly budget: true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_exceeded: Option<bool>,
    /// 503: true when the flow feed is unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_unavailable: Option<bool>,
}

impl ErrorBody {
    /// An error envelope with only the message.
    pub fn new(error: impl Into<String>) -> Self {
        Self {
            success: false,
            error: error.into(),
            upstream: None,
            upgrade_required: None,
            required_tier: None,
            your_tier: None,
            did_you_mean: None,
            docs: None,
            index: None,
            endpoint_count: None,
            allowed_methods: None,
            limit: None,
            retry_after_seconds: None,
            budget_exceeded: None,
            data_unavailable: None,
        }
    }
}

impl fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_keep_their_cause_out_of_the_body() {
        let err = ApiError::internal("reading the chain", "disk /secret/path exploded");
        let body = serde_json::to_value(err.body()).unwrap();
        assert_eq!(body["error"], INTERNAL_ERROR_MESSAGE);
        assert!(!body.to_string().contains("secret"));
        assert_eq!(err.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn forbidden_without_plan_has_no_upgrade_fields() {
        let err = ApiError::Forbidden {
            upgrade_required: false,
            required_tier: Some(Tier::Pro),
            your_tier: None,
        };
        let body = serde_json::to_value(err.body()).unwrap();
        assert!(body.get("upgrade_required").is_none());
        assert!(body.get("required_tier").is_none());
        let err = ApiError::Forbidden {
            upgrade_required: true,
            required_tier: Some(Tier::Pro),
            your_tier: Some("basic".into()),
        };
        let body = serde_json::to_value(err.body()).unwrap();
        assert_eq!(body["upgrade_required"], true);
        assert_eq!(body["required_tier"], "pro");
        assert_eq!(body["your_tier"], "basic");
        assert_eq!(
            body["error"],
            "This endpoint requires the Pro plan or higher"
        );
    }
}
