//! Reading a tool call's arguments the way assistant clients really send them.
//!
//! Clients built on different SDKs disagree on types: numbers arrive as strings (`"252"`),
//! booleans as `"true"`, enums in any case (`"CALL"`), and list arguments (`legs`,
//! `positions`) either as JSON arrays or as one string holding the JSON. Each reader below
//! accepts those forms, normalises them, and fails with a message that names the argument and
//! what it takes — the message the assistant reads and acts on.

use serde_json::{Map, Value};

/// Longest free-text argument accepted (a search query, a list of fields), in bytes.
pub const MAX_TEXT_BYTES: usize = 512;
/// Longest JSON-in-a-string argument accepted (`legs`, `positions`), in bytes.
pub const MAX_JSON_ARGUMENT_BYTES: usize = 64 * 1024;

/// A tool argument that cannot be used, with the message for the assistant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

impl ArgError {
    fn new(name: &str, what: impl std::fmt::Display) -> Self {
        Self(format!("argument `{name}`: {what}"))
    }
}

/// The arguments of one call, with lenient typed readers.
#[derive(Debug, Clone, Default)]
pub struct Args {
    values: Map<String, Value>,
}

impl Args {
    /// Wraps the call's argument object. Keys are matched case-insensitively, and an argument
    /// passed as `null` or `""` counts as absent (clients send both for "not given").
    pub fn new(values: Option<Map<String, Value>>) -> Self {
        let values = values
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, v)| !matches!(v, Value::Null) && v.as_str() != Some(""))
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        Self { values }
    }

    /// The raw value of `name`, if given.
    pub fn raw(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// Whether `name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The names given that are not in `known`, in the order given.
    pub fn unknown<'a>(&'a self, known: &[&str]) -> Vec<&'a str> {
        self.values
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect()
    }

    /// A required argument is missing.
    pub fn missing(name: &str) -> ArgError {
        ArgError::new(name, "is required")
    }

    /// Free text, trimmed, at most [`MAX_TEXT_BYTES`].
    pub fn text(&self, name: &str) -> Result<Option<String>, ArgError> {
        let Some(value) = self.raw(name) else {
            return Ok(None);
        };
        let text = match value {
            Value::String(s) => s.trim().to_owned(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => return Err(ArgError::new(name, format!("expected text, got {other}"))),
        };
        if text.len() > MAX_TEXT_BYTES {
            return Err(ArgError::new(
                name,
                format!("longer than {MAX_TEXT_BYTES} bytes"),
            ));
        }
        Ok((!text.is_empty()).then_some(text))
    }

    /// A required [`Args::text`].
    pub fn required_text(&self, name: &str) -> Result<String, ArgError> {
        self.text(name)?.ok_or_else(|| Self::missing(name))
    }

    /// A ticker symbol, upper-cased (the API validates its form and coverage).
    pub fn symbol(&self, name: &str) -> Result<Option<String>, ArgError> {
        Ok(self
            .text(name)?
            .map(|s| s.trim_start_matches('$').to_ascii_uppercase()))
    }

    /// A required [`Args::symbol`].
    pub fn required_symbol(&self, name: &str) -> Result<String, ArgError> {
        self.symbol(name)?.ok_or_else(|| Self::missing(name))
    }

    /// Comma-separated symbols, given as `"SPY,QQQ"`, `"SPY QQQ"` or `["SPY", "QQQ"]`:
    /// upper-cased, empty entries dropped, joined with commas.
    pub fn symbol_list(&self, name: &str) -> Result<Option<String>, ArgError> {
        let Some(value) = self.raw(name) else {
            return Ok(None);
        };
        let items: Vec<String> = match value {
            Value::String(s) => s
                .split([',', ' ', ';'])
                .map(|t| t.trim().trim_start_matches('$').to_ascii_uppercase())
                .filter(|t| !t.is_empty())
                .collect(),
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.trim().trim_start_matches('$').to_ascii_uppercase()),
                    other => Err(ArgError::new(
                        name,
                        format!("expected symbols, got {other}"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(ArgError::new(
                    name,
                    format!("expected comma-separated symbols, got {other}"),
                ));
            }
        };
        let joined = items.join(",");
        if joined.len() > MAX_TEXT_BYTES {
            return Err(ArgError::new(
                name,
                format!("longer than {MAX_TEXT_BYTES} bytes"),
            ));
        }
        Ok((!joined.is_empty()).then_some(joined))
    }

    /// A number, given as a JSON number or as a numeric string (`"0.3"`, `" 252 "`).
    pub fn number(&self, name: &str) -> Result<Option<f64>, ArgError> {
        let Some(value) = self.raw(name) else {
            return Ok(None);
        };
        let number = match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().trim_end_matches('%').parse::<f64>().ok(),
            _ => None,
        };
        match number {
            Some(n) if n.is_finite() => Ok(Some(n)),
            _ => Err(ArgError::new(
                name,
                format!("expected a number, got {value}"),
            )),
        }
    }

    /// A required [`Args::number`].
    pub fn required_number(&self, name: &str) -> Result<f64, ArgError> {
        self.number(name)?.ok_or_else(|| Self::missing(name))
    }

    /// A whole number, given as a JSON number or a numeric string; `20.0` is accepted, `20.5`
    /// is not.
    pub fn integer(&self, name: &str) -> Result<Option<i64>, ArgError> {
        match self.number(name)? {
            None => Ok(None),
            Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => Ok(Some(n as i64)),
            Some(n) => Err(ArgError::new(
                name,
                format!("expected a whole number, got {n}"),
            )),
        }
    }

    /// `true`/`false`, also as strings (`"true"`, `"False"`, `"1"`, `"no"`).
    pub fn boolean(&self, name: &str) -> Result<Option<bool>, ArgError> {
        let Some(value) = self.raw(name) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_i64() {
                Some(0) => Some(false),
                Some(1) => Some(true),
                _ => None,
            },
            Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "1" => Some(true),
                "false" | "no" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        };
        parsed
            .map(Some)
            .ok_or_else(|| ArgError::new(name, format!("expected true or false, got {value}")))
    }

    /// One of `choices`, matched case-insensitively with `-` and spaces read as `_`; returns
    /// the canonical spelling.
    pub fn choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, ArgError> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        let wanted = text.to_ascii_lowercase().replace(['-', ' '], "_");
        choices
            .iter()
            .find(|c| c.to_ascii_lowercase() == wanted)
            .copied()
            .map(Some)
            .ok_or_else(|| {
                ArgError::new(
                    name,
                    format!("{text:?} is not one of {}", choices.join(", ")),
                )
            })
    }

    /// A list of JSON objects (`legs`, `positions`): a JSON array, one object (read as a
    /// one-item list), or a string holding either. A string that is not JSON is returned as
    /// [`JsonList::Text`] for the caller's own text form.
    pub fn json_list(&self, name: &str) -> Result<Option<JsonList>, ArgError> {
        let Some(value) = self.raw(name) else {
            return Ok(None);
        };
        let value = match value {
            Value::String(s) => {
                let s = s.trim();
                if s.len() > MAX_JSON_ARGUMENT_BYTES {
                    return Err(ArgError::new(
                        name,
                        format!("longer than {MAX_JSON_ARGUMENT_BYTES} bytes"),
                    ));
                }
                if !s.starts_with(['[', '{']) {
                    return Ok(Some(JsonList::Text(s.to_owned())));
                }
                serde_json::from_str::<Value>(s)
                    .map_err(|e| ArgError::new(name, format!("is not valid JSON: {e}")))?
            }
            other => other.clone(),
        };
        match value {
            Value::Array(items) => Ok(Some(JsonList::Items(items))),
            object @ Value::Object(_) => Ok(Some(JsonList::Items(vec![object]))),
            other => Err(ArgError::new(
                name,
                format!("expected a JSON array of objects, got {other}"),
            )),
        }
    }
}

/// What a list argument held.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonList {
    /// JSON items.
    Items(Vec<Value>),
    /// Text that is not JSON (a tool may have a text form, e.g. `BUY 1 C 150`).
    Text(String),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Args {
        Args::new(value.as_object().cloned())
    }

    #[test]
    fn numbers_booleans_and_enums_arrive_in_the_forms_clients_send() {
        let a = args(json!({
            "Limit": "20", "delta": " 0.3 ", "whole": 20.0, "half": 20.5,
            "aggregate": "False", "type": "PUT", "view": "Mean-Reversion", "empty": ""
        }));
        assert_eq!(a.integer("limit").unwrap(), Some(20));
        assert_eq!(a.number("delta").unwrap(), Some(0.3));
        assert_eq!(a.integer("whole").unwrap(), Some(20));
        assert!(a.integer("half").unwrap_err().0.contains("whole number"));
        assert_eq!(a.boolean("aggregate").unwrap(), Some(false));
        assert_eq!(a.choice("type", &["call", "put"]).unwrap(), Some("put"));
        assert_eq!(
            a.choice("view", &["mean_reversion", "pairs"]).unwrap(),
            Some("mean_reversion")
        );
        assert!(!a.has("empty"));
        let bad = a.choice("type", &["calls", "puts"]).unwrap_err();
        assert_eq!(bad.0, "argument `type`: \"PUT\" is not one of calls, puts");
    }

    #[test]
    fn list_arguments_come_as_arrays_strings_of_json_or_text() {
        let a = args(json!({
            "legs": "[{\"strike\": 150}]",
            "one": {"strike": 1},
            "text": "BUY 1 C 150",
            "broken": "[{",
            "tickers": ["spy", " qqq"],
            "csv": "spy, qqq iwm",
        }));
        assert_eq!(
            a.json_list("legs").unwrap(),
            Some(JsonList::Items(vec![json!({"strike": 150})]))
        );
        assert_eq!(
            a.json_list("one").unwrap(),
            Some(JsonList::Items(vec![json!({"strike": 1})]))
        );
        assert_eq!(
            a.json_list("text").unwrap(),
            Some(JsonList::Text("BUY 1 C 150".into()))
        );
        assert!(
            a.json_list("broken")
                .unwrap_err()
                .0
                .contains("not valid JSON")
        );
        assert_eq!(a.symbol_list("tickers").unwrap().unwrap(), "SPY,QQQ");
        assert_eq!(a.symbol_list("csv").unwrap().unwrap(), "SPY,QQQ,IWM");
    }

    #[test]
    fn oversized_text_is_refused_before_it_is_used() {
        let a = args(json!({"q": "x".repeat(MAX_TEXT_BYTES + 1)}));
        assert!(a.text("q").unwrap_err().0.contains("longer than"));
    }
}
