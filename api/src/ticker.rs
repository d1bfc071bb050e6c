//! Ticker symbols as the API accepts them.
//!
//! Rule (documented in the reference): a ticker is trimmed and **upper-cased** (`spy` is
//! `SPY`; symbols are case-insensitive and stored upper-case), then must be 1–12 characters of
//! `A–Z`, `0–9`, `.` and `-`, optionally led by one `^` for an index (`BRK.B`, `BF-B`, `^SPX`).
//! Anything else is a 400 naming the value and the rule. Whether the symbol is *covered* is a
//! separate question answered by the market data ([`crate::AppState::covered_ticker`]).

use std::fmt;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use serde::Serialize;

use crate::error::ApiError;

/// Longest symbol accepted.
pub const MAX_TICKER_LEN: usize = 12;

/// A syntactically valid, upper-case ticker symbol.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Ticker(String);

impl Ticker {
    /// Validates and normalises `raw` (see the module docs for the rule).
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let symbol = raw.trim().to_ascii_uppercase();
        let body = symbol.strip_prefix('^').unwrap_or(&symbol);
        let valid = !body.is_empty()
            && body.len() <= MAX_TICKER_LEN
            && body
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if valid {
            Ok(Self(symbol))
        } else {
            Err(ApiError::bad_request(format!(
                "Invalid ticker {raw:?}: use 1 to {MAX_TICKER_LEN} letters, digits, '.' or '-', \
                 optionally led by '^' (e.g. SPY, BRK.B, ^SPX)"
            )))
        }
    }

    /// The symbol, upper case.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Ticker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Ticker {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The `{ticker}` path segment, validated. (Coverage is checked by the handler through
/// [`crate::AppState::covered_ticker`] or the market data.)
impl<S: Send + Sync> FromRequestParts<S> for Ticker {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))?;
        let raw = params
            .iter()
            .find_map(|(name, value)| (name == "ticker").then_some(value))
            .ok_or_else(|| {
                ApiError::internal(
                    "extracting the ticker",
                    "route has no {ticker} segment but its handler asks for one",
                )
            })?;
        Self::parse(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_upper_cases_real_symbols() {
        for (raw, want) in [
            ("SPY", "SPY"),
            ("spy", "SPY"),
            (" qqq ", "QQQ"),
            ("BRK.B", "BRK.B"),
            ("bf-b", "BF-B"),
            ("^spx", "^SPX"),
            ("XLRE", "XLRE"),
        ] {
            assert_eq!(Ticker::parse(raw).unwrap().as_str(), want, "{raw}");
        }
    }

    #[test]
    fn rejects_bad_characters_and_lengths() {
        for raw in [
            "",
            "^",
            "S P Y",
            "SPY;DROP",
            "SP$Y",
            "ABCDEFGHIJKLM",
            "^^SPX",
            "SPY/QQQ",
            "ÄPPL",
        ] {
            let err = Ticker::parse(raw).unwrap_err();
            assert!(
                matches!(err, ApiError::BadRequest(ref m) if m.contains("Invalid ticker")),
                "{raw}: {err}"
            );
        }
    }
}
