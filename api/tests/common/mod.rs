//! Shared by the router tests: a state on a fixed clock, and one-shot requests.

#![allow(dead_code)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use chrono::{DateTime, TimeZone, Utc};
use http_body_util::BodyExt;
use optics_api::AppState;
use optics_compute::time::ManualClock;
use tower::ServiceExt;

/// Friday 2026-11-20 15:00 UTC: 10:00 in New York, the market open.
pub fn friday_morning() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap()
}

/// A state whose clock stands at `at`.
pub fn state_at(at: DateTime<Utc>) -> AppState {
    AppState::new(Arc::new(ManualClock::new(at)))
}

/// A response read to the end.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON (panics with the body text when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the error envelope with `status` and returns its body.
    pub fn error(&self, status: StatusCode) -> serde_json::Value {
        assert_eq!(self.status, status, "body: {}", self.text());
        assert!(
            self.header("content-type")
                .is_some_and(|ct| ct.starts_with("application/json")),
            "{:?}",
            self.headers
        );
        let body = self.json();
        assert_eq!(body["success"], false, "{body}");
        assert!(
            body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{body}"
        );
        body
    }

    /// Asserts a 200 envelope and returns `data`.
    pub fn data(&self) -> serde_json::Value {
        assert_eq!(self.status, StatusCode::OK, "body: {}", self.text());
        let body = self.json();
        assert_eq!(body["success"], true, "{body}");
        body["data"].clone()
    }
}

/// Sends one request through `app` in-process.
pub async fn send(app: &Router, request: Request<Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

/// `GET uri` with the given headers.
pub async fn get(app: &Router, uri: &str, headers: &[(&str, &str)]) -> Answer {
    let mut request = Request::builder().method(Method::GET).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(app, request.body(Body::empty()).unwrap()).await
}

/// `method uri` with a body and an optional content type.
pub async fn with_body(
    app: &Router,
    method: Method,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
) -> Answer {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    send(app, request.body(Body::from(body.to_owned())).unwrap()).await
}

/// The documented field names of `slug` in the reference records, as key paths: `a.b[].c`
/// with `<…>` / `{…}` for any key; `x, y` lists and `p10 to p90` ranges expanded.
pub fn documented_fields(slug: &str) -> Vec<Vec<String>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/reference-records.json");
    let records: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let endpoint = records["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == slug)
        .unwrap_or_else(|| panic!("{slug} is not in the reference records"));
    let mut out = Vec::new();
    for field in endpoint["fields"].as_array().unwrap() {
        let spec = field[0].as_str().unwrap();
        // `prefix.first, second, third`: the names after the first share its prefix.
        let mut parts = spec.split(',').map(str::trim);
        let first = parts.next().unwrap();
        let (prefix, head) = match first.rfind('.') {
            Some(i) => (&first[..=i], &first[i + 1..]),
            None => ("", first),
        };
        for name in std::iter::once(head).chain(parts) {
            for name in expand_range(name) {
                out.push(
                    format!("{prefix}{name}")
                        .split('.')
                        .map(str::to_owned)
                        .collect(),
                );
            }
        }
    }
    out
}

/// `p10 to p90` → the cone's percentiles, `clsHv5d to clsHv252d` → the nine standard
/// windows; any other name as it is.
fn expand_range(name: &str) -> Vec<String> {
    match name {
        "p10 to p90" => ["p10", "p25", "p50", "p75", "p90"]
            .map(String::from)
            .to_vec(),
        "clsHv5d to clsHv252d" => [5, 10, 20, 30, 60, 90, 120, 180, 252]
            .map(|w| format!("clsHv{w}d"))
            .to_vec(),
        other => vec![other.to_owned()],
    }
}

/// Whether `value` has the key path (`[]` walks every element, `<…>`/`{…}` every key).
pub fn has_path(value: &serde_json::Value, path: &[String]) -> bool {
    let Some((head, rest)) = path.split_first() else {
        return true;
    };
    let (key, each) = match head.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (head.as_str(), false),
    };
    let any_key = key.starts_with('<') || key.starts_with('{');
    let children: Vec<&serde_json::Value> = match value {
        serde_json::Value::Object(map) if any_key => map.values().collect(),
        serde_json::Value::Object(map) => map.get(key).into_iter().collect(),
        _ => Vec::new(),
    };
    !children.is_empty()
        && children.iter().all(|child| {
            if each {
                child.as_array().is_some_and(|items| {
                    !items.is_empty() && items.iter().all(|i| has_path(i, rest))
                })
            } else {
                has_path(child, rest)
            }
        })
}
