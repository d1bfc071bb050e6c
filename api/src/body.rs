//! Typed request bodies of the POST endpoints.
//!
//! A handler takes the body as [`crate::ApiJson`]`<Value>` (its size bounded by axum's default
//! body limit, 2 MB, and its nesting by serde_json's recursion limit) and reads it into its request type with [`parse`]: `#[derive(Deserialize)]` types whose fields
//! use the deserializers below, through `serde_path_to_error`, so a bad field is a 400 in the
//! error envelope naming it: `legs[2].strike: must be a number, not a string`.
//!
//! Every field is optional at this level (`#[serde(default)]`): a missing required field is
//! reported by the handler as `field: is required`, as before the types existed, rather than
//! serde's `missing field`. Unknown fields are ignored.
//!
//! # What is accepted
//! - [`number`]: a JSON number, or a string holding one in decimal notation (`"600"`,
//!   `" -5.5 "`, what form-based and assistant clients send); `null` or absent is none. A string
//!   that is not a finite decimal number (`"six"`, `"NaN"`, `"inf"`, `""`) is a 400:
//!   `must be a number, not the string "six"`.
//! - [`text`]: a string; `null` or absent is none. Enumerations (`option_type`, `action`,
//!   `strategy_type`, `position_type`, …) are read as text and matched in any case by the
//!   compute crate's parsers (`call`, `Call`, `CALL`).
//! - [`date`]: `YYYY-MM-DD`, surrounding blanks ignored.
//! - [`List`]: an array of at most `MAX` entries, or a JSON string holding such an array
//!   (`"legs": "[{…}]"`, what some form-based clients send). The count is checked before an
//!   entry is read.
//! - [`Dollars`]: a number of dollars; [`Prices`], an object of at most `MAX` ticker → dollars
//!   entries (`underlying_prices`), counted before an entry is read.

use std::fmt;
use std::marker::PhantomData;

use chrono::NaiveDate;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ApiError;

/// The body as `T`: a 400 naming the field when it does not fit (module docs).
pub fn parse<T: DeserializeOwned>(body: Value) -> Result<T, ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(format!(
            "the body must be a JSON object, not {}",
            kind_of(&body)
        )));
    }
    serde_path_to_error::deserialize(body).map_err(ApiError::from)
}

impl From<serde_path_to_error::Error<serde_json::Error>> for ApiError {
    fn from(error: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let path = error.path().to_string();
        let reason = error.into_inner().to_string();
        if path == "." {
            Self::bad_request(reason)
        } else {
            Self::bad_request(format!("{path}: {reason}"))
        }
    }
}

/// `field: is required` unless `value` is present.
pub fn required<T>(value: Option<T>, field: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::bad_request(format!("{field}: is required")))
}

/// What kind of JSON value `value` is, for messages (`a string`, `an array`, …).
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error of a value of the wrong kind: `must be {what}, not {kind}`.
fn wrong_kind<E: de::Error>(what: &str, kind: &str) -> E {
    E::custom(format_args!("must be {what}, not {kind}"))
}

/// Visitor methods that reject the listed kinds of value with [`wrong_kind`]:
/// `reject!("a number"; bool str seq map)`.
macro_rules! reject {
    ($what:expr; $($kind:ident)*) => { $( reject!(@one $what; $kind); )* };
    (@one $what:expr; bool) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(wrong_kind($what, "a boolean"))
        }
    };
    (@one $what:expr; str) => {
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(wrong_kind($what, "a string"))
        }
    };
    (@one $what:expr; number) => {
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(wrong_kind($what, "a number"))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(wrong_kind($what, "a number"))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(wrong_kind($what, "a number"))
        }
    };
    (@one $what:expr; seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(wrong_kind($what, "an array"))
        }
    };
    (@one $what:expr; map) => {
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(wrong_kind($what, "an object"))
        }
    };
}

/// `null` and absent are none; `Some` is read again.
macro_rules! null_is_none {
    () => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    };
}

/// An optional number (module docs).
struct NumberVisitor;

impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Option<f64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Some(v as f64))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Some(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        decimal(v).map(Some).ok_or_else(|| {
            E::custom(format_args!(
                "must be a number, not the string {:?}",
                truncated(v)
            ))
        })
    }

    null_is_none!();
    reject!("a number"; bool seq map);
}

/// The finite number a string spells in decimal notation: digits with an optional sign,
/// point and exponent, blanks around it ignored. `f64::from_str` alone would also take
/// `inf` and `NaN`.
fn decimal(text: &str) -> Option<f64> {
    let text = text.trim();
    let spelled = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
    let value: f64 = text.parse().ok().filter(|_| spelled)?;
    value.is_finite().then_some(value)
}

/// At most 40 characters of a client's string, for an error message.
fn truncated(text: &str) -> String {
    const KEEP: usize = 40;
    match text.char_indices().nth(KEEP) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// An optional number: `#[serde(default, deserialize_with = "body::number")]`.
pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_any(NumberVisitor)
}

/// An optional string.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }

    null_is_none!();
    reject!("a string"; bool number seq map);
}

/// An optional string: `#[serde(default, deserialize_with = "body::text")]`.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    d.deserialize_any(TextVisitor)
}

/// `text` read as a `YYYY-MM-DD` date (blanks around it ignored), by the same strict rule as a
/// query date ([`crate::params::parse_date`]): `2026-1-5` is refused in a body as in a query.
pub fn parse_date(text: &str) -> Result<NaiveDate, String> {
    crate::params::parse_date(text.trim())
        .ok_or_else(|| format!("{text:?} is not a date in the form YYYY-MM-DD"))
}

/// An optional `YYYY-MM-DD` date: `#[serde(default, deserialize_with = "body::date")]`.
pub fn date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
    text(d)?
        .map(|t| parse_date(&t).map_err(de::Error::custom))
        .transpose()
}

/// A number of dollars (a value of `underlying_prices`); `null` is not one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dollars(pub f64);

impl<'de> Deserialize<'de> for Dollars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match number(d)? {
            Some(v) => Ok(Self(v)),
            None => Err(de::Error::custom("must be a number of dollars, not null")),
        }
    }
}

/// An array of at most `MAX` entries, or a JSON string holding one (module docs). Absent or
/// `null` is an absent `Option<List<…>>`.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T, const MAX: usize>(pub Vec<T>);

impl<T, const MAX: usize> List<T, MAX> {
    /// The entries; `field: at least one entry is required` when there are none.
    pub fn non_empty(self, field: &str) -> Result<Vec<T>, ApiError> {
        if self.0.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{field}: at least one entry is required"
            )));
        }
        Ok(self.0)
    }
}

/// The error of a list or object longer than `max`: `given` entries (a size the input
/// declares, checked before any entry is read), or one more than `max` (counted as read).
fn too_many<E: de::Error>(given: Option<usize>, max: usize) -> E {
    match given {
        Some(n) => E::custom(format_args!(
            "{n} entries given; at most {max} are accepted"
        )),
        None => E::custom(format_args!(
            "more than {max} entries given; at most {max} are accepted"
        )),
    }
}

/// The declared size `hint`, refused with [`too_many`] above `max`.
fn within<E: de::Error>(hint: Option<usize>, max: usize) -> Result<usize, E> {
    match hint {
        Some(n) if n > max => Err(too_many(hint, max)),
        _ => Ok(hint.unwrap_or(0)),
    }
}

/// One more entry read where `held` are already held: refused with [`too_many`] at `max`.
fn room_for<E: de::Error>(held: usize, max: usize) -> Result<(), E> {
    if held >= max {
        Err(too_many(None, max))
    } else {
        Ok(())
    }
}

struct ListVisitor<T, const MAX: usize> {
    /// Whether a string holding the array is read (not inside such a string).
    text_allowed: bool,
    entries: PhantomData<T>,
}

impl<'de, T: DeserializeOwned, const MAX: usize> Visitor<'de> for ListVisitor<T, MAX> {
    type Value = List<T, MAX>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let declared = within(seq.size_hint(), MAX)?;
        let mut entries = Vec::with_capacity(declared);
        while let Some(entry) = seq.next_element::<T>()? {
            room_for(entries.len(), MAX)?;
            entries.push(entry);
        }
        Ok(List(entries))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        // Only a string that holds an array, once: `"all of them"` or a string in a string is
        // a string where an array belongs.
        if !self.text_allowed || !v.trim_start().starts_with('[') {
            return Err(wrong_kind("an array", "a string"));
        }
        let mut json = serde_json::Deserializer::from_str(v);
        let inner = ListVisitor::<T, MAX> {
            text_allowed: false,
            entries: PhantomData,
        };
        let mut track = serde_path_to_error::Track::new();
        let list = serde_path_to_error::Deserializer::new(&mut json, &mut track)
            .deserialize_seq(inner)
            .and_then(|list| json.end().map(|()| list));
        list.map_err(|error| {
            let path = track.path().to_string();
            if path == "." {
                E::custom(format_args!("(a JSON string): {error}"))
            } else {
                E::custom(format_args!("(a JSON string) at {path}: {error}"))
            }
        })
    }

    reject!("an array"; bool number map);
}

impl<'de, T: DeserializeOwned, const MAX: usize> Deserialize<'de> for List<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor::<T, MAX> {
            text_allowed: true,
            entries: PhantomData,
        })
    }
}

/// An object of at most `MAX` entries of key → [`Dollars`] (`underlying_prices`), in key
/// order. Absent or `null` is an absent `Option<Prices<…>>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices<const MAX: usize>(pub std::collections::BTreeMap<String, f64>);

struct PricesVisitor<const MAX: usize>;

impl<'de, const MAX: usize> Visitor<'de> for PricesVisitor<MAX> {
    type Value = Prices<MAX>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of ticker → price")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        within(map.size_hint(), MAX)?;
        let mut prices = std::collections::BTreeMap::new();
        while let Some((key, Dollars(price))) = map.next_entry::<String, Dollars>()? {
            room_for(prices.len(), MAX)?;
            prices.insert(key, price);
        }
        Ok(Prices(prices))
    }

    reject!("an object of ticker → price"; bool str number seq);
}

impl<'de, const MAX: usize> Deserialize<'de> for Prices<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PricesVisitor::<MAX>)
    }
}
