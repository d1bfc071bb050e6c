//! Reading the body: every failure is a 400 naming the field.

use chrono::NaiveDate;
use optics_compute::strategy::StrategyError;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The body as a JSON object.
pub(crate) fn body_object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::bad_request(format!(
            "the body must be a JSON object, not {}",
            kind_of(body)
        ))
    })
}

pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An optional number: absent or null is `None`; anything but a JSON number is a 400.
pub(crate) fn opt_number(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<f64>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
            ApiError::bad_request(format!("{path}{field}: is not a representable number"))
        }),
        Some(other) => Err(ApiError::bad_request(format!(
            "{path}{field}: must be a number, not {}",
            kind_of(other)
        ))),
    }
}

/// A required number.
pub(crate) fn req_number(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<f64, ApiError> {
    opt_number(object, field, path)?
        .ok_or_else(|| ApiError::bad_request(format!("{path}{field}: is required")))
}

/// An optional string.
pub(crate) fn opt_text<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<&'a str>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(other) => Err(ApiError::bad_request(format!(
            "{path}{field}: must be a string, not {}",
            kind_of(other)
        ))),
    }
}

/// An optional YYYY-MM-DD date.
pub(crate) fn opt_date(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<NaiveDate>, ApiError> {
    opt_text(object, field, path)?
        .map(|text| {
            NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| {
                ApiError::bad_request(format!(
                    "{path}{field}: {text:?} is not a date in the form YYYY-MM-DD"
                ))
            })
        })
        .transpose()
}

/// A required, non-empty array of at most `max` objects.
pub(crate) fn object_array<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Vec<&'a Map<String, Value>>, ApiError> {
    let items = match object.get(field) {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request(format!("{field}: is required")));
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "{field}: must be an array, not {}",
                kind_of(other)
            )));
        }
    };
    if items.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{field}: at least one entry is required"
        )));
    }
    if items.len() > max {
        return Err(ApiError::bad_request(format!(
            "{field}: {} entries given; at most {max} are accepted",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_object().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "{field}[{index}]: must be an object, not {}",
                    kind_of(item)
                ))
            })
        })
        .collect()
}

/// A 424 when the chain lacks the quotes needed; a 400 for malformed input and for
/// constraints the chain cannot meet (module docs).
pub(crate) fn strategy_error(error: StrategyError) -> ApiError {
    match error {
        StrategyError::MissingQuotes(_) => ApiError::upstream(error.to_string()),
        other => ApiError::bad_request(other.to_string()),
    }
}

/// The ticker field, validated and covered.
pub(crate) fn body_ticker(
    state: &AppState,
    object: &Map<String, Value>,
) -> Result<Ticker, ApiError> {
    let raw = opt_text(object, "ticker", "")?
        .ok_or_else(|| ApiError::bad_request("ticker: is required"))?;
    state.covered_ticker(raw)
}
