//! Typed query parameters with the registry's defaults and bounds.
//!
//! [`QueryParams`] is an extractor for registered routes: it knows the matched endpoint's
//! [`ParamSpec`]s, so a handler asks for a parameter by name and gets it typed, defaulted and
//! checked against the documented bounds:
//!
//! | kind | absent | malformed | out of range |
//! | --- | --- | --- | --- |
//! | whole number ([`QueryParams::int`]) | the default | 400 "must be a whole number" | **clamped**, reported by [`QueryParams::clamp_notices`] |
//! | number ([`QueryParams::float`]) | the default | 400 (also NaN/inf) | clamped, reported |
//! | list of whole numbers ([`QueryParams::int_list`]) | the default | 400 | each value clamped, reported; too many values: 400 |
//! | choice ([`QueryParams::choice`]) | the default | 400 listing the allowed values | — |
//! | date ([`QueryParams::date`]) | `None` | 400 unless `YYYY-MM-DD` and a real date | — |
//! | boolean ([`QueryParams::bool`]) | the default | 400 unless `true`/`false`/`1`/`0` | — |
//! | symbols ([`QueryParams::symbols`]) | the default | 400 per bad symbol | more than allowed: 400 |
//!
//! Also: an empty value (`?limit=`) counts as absent; a value without a name (`?=5`) is a 400;
//! a parameter given twice is a 400; a
//! parameter the endpoint does not define is a 400 naming the accepted ones (a typo such as
//! `strike_around` must not be silently ignored); a required parameter that is absent is a 400.
//! Clamping is never silent: every clamp is recorded and handlers put
//! [`QueryParams::clamp_notices`] in their payload (`clamped`).

use std::cell::RefCell;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::registry::{EndpointSpec, ParamKind, ParamLocation, ParamSpec};
use crate::router::MatchedEndpoint;
use crate::ticker::Ticker;

/// A bounded number after clamping: the value to use, what was asked for, and the range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clamped<T> {
    /// The value to use (inside the range).
    pub value: T,
    /// The value requested (or the default when none was).
    pub requested: T,
    /// Smallest accepted value.
    pub min: Option<T>,
    /// Largest accepted value.
    pub max: Option<T>,
}

impl<T: PartialEq + Copy> Clamped<T> {
    /// True when the requested value was outside the range and moved to its edge.
    pub fn was_clamped(&self) -> bool {
        self.value != self.requested
    }
}

/// One clamp made visible to the caller: `{"parameter", "requested", "used", "min", "max"}`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ClampNotice {
    /// The parameter's name.
    pub parameter: &'static str,
    /// The value as the caller wrote it.
    pub requested: String,
    /// The value used.
    #[schema(value_type = f64)]
    pub used: serde_json::Value,
    /// The documented minimum.
    #[schema(value_type = Option<f64>)]
    pub min: serde_json::Value,
    /// The documented maximum.
    #[schema(value_type = Option<f64>)]
    pub max: serde_json::Value,
}

/// The query string of a registered endpoint, parsed against its parameter specs.
#[derive(Debug)]
pub struct QueryParams {
    endpoint: &'static EndpointSpec,
    pairs: Vec<(String, String)>,
    notices: RefCell<Vec<ClampNotice>>,
}

impl QueryParams {
    /// Parses `query` (the part after `?`, percent-encoded) for `endpoint`. Fails on duplicate
    /// or unknown parameter names and on absent required query parameters.
    pub fn parse(endpoint: &'static EndpointSpec, query: Option<&str>) -> Result<Self, ApiError> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            if name.is_empty() {
                return Err(ApiError::bad_request(format!(
                    "A query parameter has no name (={value}); remove it or name it"
                )));
            }
            let Some(spec) = endpoint.param(&name) else {
                return Err(unknown_parameter(endpoint, &name));
            };
            if spec.location != ParamLocation::Query {
                return Err(ApiError::bad_request(format!(
                    "{name} is a {} parameter of {}, not a query parameter",
                    location_word(spec.location),
                    endpoint.path
                )));
            }
            // Empty is the parameter left out (`allowEmptyValue` in the document); white
            // space alone is neither a value nor empty.
            if !value.is_empty() && value.trim().is_empty() {
                return Err(ApiError::bad_request(format!(
                    "Parameter {name} is blank; give it a value, or leave it out (or empty) for \
                     its default"
                )));
            }
            if pairs.iter().any(|(seen, _)| *seen == name) {
                return Err(ApiError::bad_request(format!(
                    "Parameter {name} is given more than once; give it once (lists are \
                     comma-separated)"
                )));
            }
            pairs.push((name.into_owned(), value.into_owned()));
        }
        let params = Self {
            endpoint,
            pairs,
            notices: RefCell::new(Vec::new()),
        };
        for spec in endpoint.params {
            if spec.required
                && spec.location == ParamLocation::Query
                && params.raw(spec.name).is_none()
            {
                return Err(ApiError::bad_request(format!(
                    "Missing required parameter {} ({})",
                    spec.name, spec.bounds
                )));
            }
        }
        Ok(params)
    }

    /// The endpoint these parameters belong to.
    pub fn endpoint(&self) -> &'static EndpointSpec {
        self.endpoint
    }

    /// The value as given (trimmed), `None` when absent or empty.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// True when the caller gave the parameter a non-empty value.
    pub fn is_given(&self, name: &str) -> bool {
        self.raw(name).is_some()
    }

    /// Every clamp made so far, for the payload's `clamped` field.
    pub fn clamp_notices(&self) -> Vec<ClampNotice> {
        self.notices.borrow().clone()
    }

    fn spec(&self, name: &str) -> Result<&'static ParamSpec, ApiError> {
        self.endpoint.param(name).ok_or_else(|| {
            ApiError::internal(
                "reading a query parameter",
                format!("endpoint {} has no parameter {name}", self.endpoint.slug),
            )
        })
    }

    fn kind_mismatch(&self, name: &str, wanted: &str) -> ApiError {
        ApiError::internal(
            "reading a query parameter",
            format!(
                "parameter {name} of {} is not a {wanted} in the registry",
                self.endpoint.slug
            ),
        )
    }

    fn missing(spec: &ParamSpec) -> ApiError {
        ApiError::bad_request(format!(
            "Missing required parameter {} ({})",
            spec.name, spec.bounds
        ))
    }

    /// The parameter parsed with its text as given, or else its default and the default's
    /// text; a parameter with neither is missing.
    fn given_or_default<T: ToString>(
        &self,
        name: &str,
        spec: &ParamSpec,
        parse: fn(&str, &str) -> Result<T, ApiError>,
        default: Option<T>,
    ) -> Result<(T, String), ApiError> {
        match self.raw(name) {
            Some(raw) => Ok((parse(spec.name, raw)?, raw.to_owned())),
            None => {
                let default = default.ok_or_else(|| Self::missing(spec))?;
                let text = default.to_string();
                Ok((default, text))
            }
        }
    }

    /// Records a [`ClampNotice`] when the value used is not the one requested.
    fn note_clamp<T, B>(
        &self,
        spec: &ParamSpec,
        raw: String,
        requested: T,
        value: T,
        min: B,
        max: B,
    ) where
        T: PartialEq + Into<serde_json::Value>,
        B: Into<serde_json::Value>,
    {
        if value != requested {
            self.notices.borrow_mut().push(ClampNotice {
                parameter: spec.name,
                requested: raw,
                used: value.into(),
                min: min.into(),
                max: max.into(),
            });
        }
    }

    /// A whole-number parameter, defaulted and clamped to its documented range.
    pub fn int(&self, name: &str) -> Result<Clamped<i64>, ApiError> {
        let spec = self.spec(name)?;
        let ParamKind::Int { min, max } = spec.kind else {
            return Err(self.kind_mismatch(name, "whole number"));
        };
        let (requested, raw) =
            self.given_or_default(name, spec, parse_whole, spec.default_int())?;
        let value = requested.clamp(min, max);
        self.note_clamp(spec, raw, requested, value, min, max);
        Ok(Clamped {
            value,
            requested,
            min: Some(min),
            max: Some(max),
        })
    }

    /// A number parameter, finite, defaulted and clamped to the bounds that are documented.
    pub fn float(&self, name: &str) -> Result<Clamped<f64>, ApiError> {
        let spec = self.spec(name)?;
        let ParamKind::Float { min, max } = spec.kind else {
            return Err(self.kind_mismatch(name, "number"));
        };
        let (requested, raw) =
            self.given_or_default(name, spec, parse_number, spec.default_float())?;
        let mut value = requested;
        if let Some(min) = min {
            value = value.max(min);
        }
        if let Some(max) = max {
            value = value.min(max);
        }
        self.note_clamp(spec, raw, requested, value, min, max);
        Ok(Clamped {
            value,
            requested,
            min,
            max,
        })
    }

    /// A comma-separated list of whole numbers (the default when absent); each value clamped
    /// to the range, more values than allowed is a 400.
    pub fn int_list(&self, name: &str) -> Result<Vec<Clamped<i64>>, ApiError> {
        let spec = self.spec(name)?;
        let ParamKind::IntList { min, max, max_len } = spec.kind else {
            return Err(self.kind_mismatch(name, "list of whole numbers"));
        };
        let raw = match self.raw(name).or(spec.default) {
            Some(raw) => raw,
            None => return Err(Self::missing(spec)),
        };
        let items: Vec<&str> = split_list(raw);
        if items.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{name} needs at least one value ({})",
                spec.bounds
            )));
        }
        if items.len() > max_len {
            return Err(ApiError::bad_request(format!(
                "{name} takes at most {max_len} values, got {}",
                items.len()
            )));
        }
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            let requested = parse_whole(spec.name, item)?;
            let value = requested.clamp(min, max);
            if value != requested {
                self.notices.borrow_mut().push(ClampNotice {
                    parameter: spec.name,
                    requested: item.to_owned(),
                    used: value.into(),
                    min: min.into(),
                    max: max.into(),
                });
            }
            values.push(Clamped {
                value,
                requested,
                min: Some(min),
                max: Some(max),
            });
        }
        Ok(values)
    }

    /// One of the documented words (case-insensitive), or the default when absent and the
    /// default is one of them; `None` when absent without such a default.
    pub fn choice(&self, name: &str) -> Result<Option<&'static str>, ApiError> {
        let spec = self.spec(name)?;
        let ParamKind::Choice(allowed) = spec.kind else {
            return Err(self.kind_mismatch(name, "choice"));
        };
        match self.raw(name) {
            Some(raw) => allowed
                .iter()
                .find(|word| word.eq_ignore_ascii_case(raw))
                .map(|word| Some(*word))
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "Unknown value {raw:?} for {name}; allowed: {}",
                        allowed.join(", ")
                    ))
                }),
            None => Ok(spec
                .default
                .and_then(|d| allowed.iter().find(|word| **word == d).copied())),
        }
    }

    /// A `YYYY-MM-DD` date; `None` when absent (a 400 when the parameter is required).
    pub fn date(&self, name: &str) -> Result<Option<NaiveDate>, ApiError> {
        let spec = self.spec(name)?;
        if spec.kind != ParamKind::Date {
            return Err(self.kind_mismatch(name, "date"));
        }
        match self.raw(name) {
            Some(raw) => parse_date(raw).map(Some).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "{name} must be a date written YYYY-MM-DD, got {raw:?}"
                ))
            }),
            None if spec.required => Err(Self::missing(spec)),
            None => Ok(None),
        }
    }

    /// `true`/`false` (also `1`/`0`, any case), or the default (false when there is none).
    pub fn bool(&self, name: &str) -> Result<bool, ApiError> {
        let spec = self.spec(name)?;
        if spec.kind != ParamKind::Bool {
            return Err(self.kind_mismatch(name, "boolean"));
        }
        let raw = self.raw(name).or(spec.default).unwrap_or("false");
        parse_bool(raw).ok_or_else(|| {
            ApiError::bad_request(format!("{name} must be true or false, got {raw:?}"))
        })
    }

    /// A comma-separated list of tickers (the default when absent), each validated and
    /// upper-cased, duplicates removed in order; more than allowed is a 400.
    pub fn symbols(&self, name: &str) -> Result<Vec<Ticker>, ApiError> {
        let spec = self.spec(name)?;
        let ParamKind::SymbolList { max_len } = spec.kind else {
            return Err(self.kind_mismatch(name, "symbol list"));
        };
        let raw = match self.raw(name).or(spec.default) {
            Some(raw) => raw,
            None => return Err(Self::missing(spec)),
        };
        let mut tickers: Vec<Ticker> = Vec::new();
        for item in split_list(raw) {
            let ticker = Ticker::parse(item)?;
            if !tickers.contains(&ticker) {
                tickers.push(ticker);
            }
        }
        if tickers.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{name} needs at least one symbol"
            )));
        }
        if tickers.len() > max_len {
            return Err(ApiError::bad_request(format!(
                "{name} takes at most {max_len} symbols, got {}",
                tickers.len()
            )));
        }
        Ok(tickers)
    }

    /// A single ticker given in the query (e.g. `vol-arb-scan?ticker=`), or its default.
    pub fn ticker(&self, name: &str) -> Result<Ticker, ApiError> {
        let spec = self.spec(name)?;
        if spec.kind != ParamKind::Symbol {
            return Err(self.kind_mismatch(name, "symbol"));
        }
        match self.raw(name).or(spec.default) {
            Some(raw) => Ticker::parse(raw),
            None => Err(Self::missing(spec)),
        }
    }

    /// A comma-separated list of names (e.g. `fields`), `None` when absent.
    pub fn names(&self, name: &str) -> Result<Option<Vec<String>>, ApiError> {
        let spec = self.spec(name)?;
        if spec.kind != ParamKind::NameList {
            return Err(self.kind_mismatch(name, "name list"));
        }
        Ok(self
            .raw(name)
            .map(|raw| split_list(raw).into_iter().map(str::to_owned).collect()))
    }

    /// Free text, `None` when absent (a 400 when required).
    pub fn text(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let spec = self.spec(name)?;
        match self.raw(name) {
            Some(raw) => Ok(Some(raw)),
            None if spec.required => Err(Self::missing(spec)),
            None => Ok(None),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let Some(MatchedEndpoint(endpoint)) = parts.extensions.get::<MatchedEndpoint>().copied()
        else {
            return Err(ApiError::internal(
                "reading query parameters",
                "QueryParams used on a route that is not in the registry",
            ));
        };
        Self::parse(endpoint, parts.uri.query())
    }
}

fn location_word(location: ParamLocation) -> &'static str {
    match location {
        ParamLocation::Path => "path",
        ParamLocation::Query => "query",
        ParamLocation::Body => "body",
    }
}

fn unknown_parameter(endpoint: &EndpointSpec, name: &str) -> ApiError {
    let accepted: Vec<&str> = endpoint
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::Query)
        .map(|p| p.name)
        .collect();
    let nearest = accepted
        .iter()
        .map(|candidate| (crate::suggest::levenshtein(name, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 3)
        .min();
    let hint = nearest
        .map(|(_, candidate)| format!(" Did you mean {candidate}?"))
        .unwrap_or_default();
    let list = if accepted.is_empty() {
        "none".to_owned()
    } else {
        accepted.join(", ")
    };
    ApiError::bad_request(format!(
        "Unknown query parameter {name:?} for {}.{hint} Accepted: {list}",
        endpoint.path
    ))
}

/// Splits a comma list, trimming items and dropping empty ones (`"SPY, QQQ,"`).
fn split_list(raw: &str) -> Vec<&str> {
    raw.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// An optional sign and decimal digits; anything else (`1.5`, `1e3`, `ten`) is not a whole
/// number. Values beyond `i64` saturate, so they clamp like any other out-of-range value.
fn parse_whole(name: &str, raw: &str) -> Result<i64, ApiError> {
    let (negative, digits) = match raw.as_bytes().first() {
        Some(b'-') => (true, &raw[1..]),
        Some(b'+') => (false, &raw[1..]),
        _ => (false, raw),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::bad_request(format!(
            "{name} must be a whole number, got {raw:?}"
        )));
    }
    let magnitude = digits.parse::<i64>().unwrap_or(i64::MAX);
    Ok(if negative { -magnitude } else { magnitude })
}

fn parse_number(name: &str, raw: &str) -> Result<f64, ApiError> {
    raw.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            ApiError::bad_request(format!("{name} must be a finite number, got {raw:?}"))
        })
}

/// Strict `YYYY-MM-DD` (four-digit year, two-digit month and day) naming a real date.
pub fn parse_date(raw: &str) -> Option<NaiveDate> {
    let bytes = raw.as_bytes();
    let shape_ok = bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
    if !shape_ok {
        return None;
    }
    let year = raw[0..4].parse().ok()?;
    let month = raw[5..7].parse().ok()?;
    let day = raw[8..10].parse().ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

fn parse_bool(raw: &str) -> Option<bool> {
    if raw.eq_ignore_ascii_case("true") || raw == "1" {
        Some(true)
    } else if raw.eq_ignore_ascii_case("false") || raw == "0" {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
