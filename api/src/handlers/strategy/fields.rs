//! What the strategy endpoints' request bodies share: the leg ([`LegBody`]), the ticker and
//! the mapping of the math's errors to statuses. Bodies are read with [`crate::body`].

use optics_compute::strategy::LegInput;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::body::{self, kind_of};
use crate::error::ApiError;
use crate::openapi::IsoDate;
use crate::state::AppState;
use crate::ticker::Ticker;

/// One leg of `/pop` or `/analyze-strategy` (`legs[]`). Enumerations are matched in any case.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "an object")]
pub struct LegBody {
    /// CALL or PUT (`/pop`'s name; `/analyze-strategy` reads it when `type` is absent).
    #[serde(default, deserialize_with = "body::text")]
    pub option_type: Option<String>,
    /// CALL or PUT (`/analyze-strategy`'s name; `/pop` reads it when `option_type` is absent).
    #[serde(default, rename = "type", deserialize_with = "body::text")]
    pub kind: Option<String>,
    /// BUY or SELL.
    #[serde(default, deserialize_with = "body::text")]
    pub action: Option<String>,
    /// Strike, dollars.
    #[serde(default, deserialize_with = "body::number")]
    pub strike: Option<f64>,
    /// Expiration, YYYY-MM-DD (`/analyze-strategy`, required there; `/pop` ignores it).
    #[serde(default)]
    #[schema(value_type = Option<IsoDate>)]
    pub expiration: Option<Value>,
    /// Premium, dollars per share.
    #[serde(default, deserialize_with = "body::number")]
    pub premium: Option<f64>,
    /// Contracts (default 1).
    #[serde(default, deserialize_with = "body::number")]
    pub quantity: Option<f64>,
    /// IV, decimal (above 5 read as percentage points).
    #[serde(default, deserialize_with = "body::number")]
    pub iv: Option<f64>,
    /// Per-share delta.
    #[serde(default, deserialize_with = "body::number")]
    pub delta: Option<f64>,
    /// Per-share theta, dollars per calendar day.
    #[serde(default, deserialize_with = "body::number")]
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point.
    #[serde(default, deserialize_with = "body::number")]
    pub vega: Option<f64>,
}

impl LegBody {
    /// The leg for the math, of type `option_type`, expiring in `years` (on `expiration`).
    pub(crate) fn input(
        self,
        option_type: Option<String>,
        years: f64,
        expiration: Option<chrono::NaiveDate>,
    ) -> LegInput {
        LegInput {
            option_type,
            action: self.action,
            strike: self.strike,
            years_to_expiry: Some(years),
            expiration,
            premium: self.premium,
            quantity: self.quantity,
            iv: self.iv,
            delta: self.delta,
            theta: self.theta,
            vega: self.vega,
        }
    }

    /// The required `expiration` of `legs[index]`.
    pub(crate) fn expiration_date(&self, index: usize) -> Result<chrono::NaiveDate, ApiError> {
        let field = format!("legs[{index}].expiration");
        match &self.expiration {
            None => Err(ApiError::bad_request(format!("{field}: is required"))),
            Some(Value::String(text)) => body::parse_date(text)
                .map_err(|reason| ApiError::bad_request(format!("{field}: {reason}"))),
            Some(other) => Err(ApiError::bad_request(format!(
                "{field}: must be a string, not {}",
                kind_of(other)
            ))),
        }
    }
}

/// The required ticker field, validated and covered.
pub(crate) fn body_ticker(state: &AppState, ticker: Option<&str>) -> Result<Ticker, ApiError> {
    state.covered_ticker(body::required(ticker, "ticker")?)
}
