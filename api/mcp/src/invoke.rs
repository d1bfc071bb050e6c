//! Runs a routed tool call through the API's own router, in process, and turns the envelope
//! into a tool result.
//!
//! The request is the one a REST client would send — same path, query, body, bearer token —
//! plus `X-Service-Client`, so the API's compact windows apply (spec 4.4). Because it passes
//! the whole router (gate, limits, response cache, metrics), a tool call is authenticated,
//! plan-checked and metered exactly like the REST call, with no HTTP hop.

use axum::Router;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, Method, Request, StatusCode};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

use crate::catalog::{ListWindow, TOOLS, ToolSpec};
use crate::routes::{Call, Shape, Target};
use optics_api::registry::{self, DATA_PREFIX};

/// The client-identification header the compact windows key on.
pub const SERVICE_CLIENT_HEADER: &str = "x-service-client";
/// Its value for this server's calls.
pub const SERVICE_CLIENT: &str = concat!("optics-mcp/", env!("CARGO_PKG_VERSION"));
/// Largest payload read back from the router (a full chain with every expiration is tens of
/// MB; anything past this is a bug, answered as an error, not buffered without end).
const MAX_PAYLOAD_BYTES: usize = 256 * 1024 * 1024;
/// Longest reference section quoted by `help`.
const HELP_SECTION_CHARS: usize = 6_000;
/// Most reference sections one `help` answer quotes.
const HELP_SECTIONS: usize = 4;

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Whether it is an error the assistant should read and act on.
    pub is_error: bool,
    /// The structured result (the endpoint's `data`, or the error body).
    pub structured: Value,
    /// A short text for the assistant.
    pub text: String,
}

/// Most answers [`Invoker`] keeps parsed.
const PARSED_ANSWERS: usize = 512;

/// Calls endpoints through a router.
#[derive(Debug, Clone)]
pub struct Invoker {
    router: Router,
    /// Finished answers by request, with the response body they were made from. The API's
    /// response cache hands back the same body allocation for the same answer (until the data
    /// or the clock's second moves), so a body that is pointer-identical to the held one —
    /// held here, so its allocation cannot be reused — is the same answer, and parsing and
    /// shaping it again would only repeat the work.
    parsed: Arc<Mutex<HashMap<String, (Bytes, Outcome)>>>,
}

impl Invoker {
    /// Tool calls answered by `router` (the service's full router, gate included).
    pub fn new(router: Router) -> Self {
        Self {
            router,
            parsed: Arc::default(),
        }
    }

    /// The held answer to `key` if it was made from this very `body`.
    fn held(&self, key: &str, body: &Bytes) -> Option<Outcome> {
        let parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        parsed
            .get(key)
            .filter(|(held, _)| held.as_ptr() == body.as_ptr() && held.len() == body.len())
            .map(|(_, outcome)| outcome.clone())
    }

    fn hold(&self, key: String, body: Bytes, outcome: &Outcome) {
        let mut parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if parsed.len() >= PARSED_ANSWERS && !parsed.contains_key(&key) {
            // Bounded: start over rather than track recency; the next calls refill it.
            parsed.clear();
        }
        parsed.insert(key, (body, outcome.clone()));
    }

    /// Runs `tool` with `arguments` for the caller holding `authorization` (the
    /// `Authorization` header value, `Bearer …`).
    pub async fn run(
        &self,
        tool: &ToolSpec,
        arguments: Option<Map<String, Value>>,
        authorization: Option<&HeaderValue>,
    ) -> Outcome {
        let args = crate::args::Args::new(arguments);
        let call = match (tool.route)(&args) {
            Ok(call) => call,
            Err(error) => {
                return Outcome::error(
                    json!({"status": 400, "error": error.0}),
                    format!("{}: {}. See help topic {}.", tool.name, error.0, tool.name),
                );
            }
        };
        let mut notes = call.notes.clone();
        let unknown = args.unknown(&tool.arg_names());
        if !unknown.is_empty() {
            notes.push(format!(
                "ignored unknown argument{}: {}",
                if unknown.len() == 1 { "" } else { "s" },
                unknown.join(", ")
            ));
        }
        match &call.target {
            Target::Help { topic } => self.help(topic.as_deref(), authorization).await,
            Target::Endpoint { .. } => self.endpoint(tool, &call, notes, authorization).await,
        }
    }

    async fn endpoint(
        &self,
        tool: &ToolSpec,
        call: &Call,
        notes: Vec<String>,
        authorization: Option<&HeaderValue>,
    ) -> Outcome {
        let Target::Endpoint {
            slug,
            path,
            query,
            body,
        } = &call.target
        else {
            unreachable!("endpoint() is called for endpoint targets only");
        };
        let Some(spec) = registry::endpoint(slug) else {
            return Outcome::error(
                json!({"status": 500, "error": "tool routed to an unknown endpoint"}),
                format!(
                    "{}: this server cannot answer the tool (unknown endpoint)",
                    tool.name
                ),
            );
        };
        let uri = request_uri(spec.path, path, query);
        let response = self
            .send(
                if body.is_some() {
                    Method::POST
                } else {
                    Method::GET
                },
                &uri,
                body.as_ref(),
                authorization,
            )
            .await;
        let (status, retry_after, bytes) = match response {
            Ok(parts) => parts,
            Err(text) => {
                return Outcome::error(json!({"status": 500, "error": text}), text);
            }
        };
        let key = format!(
            "{}\n{uri}\n{}\n{}",
            tool.name,
            body.as_ref().map(Value::to_string).unwrap_or_default(),
            notes.join("\n")
        );
        if status.is_success()
            && let Some(outcome) = self.held(&key, &bytes)
        {
            return outcome;
        }
        let envelope = parse_body(&bytes);
        if status.is_success() {
            let mut data = match envelope {
                Value::Object(mut object) => object.remove("data").unwrap_or(Value::Null),
                _ => Value::Null,
            };
            let mut notes = notes;
            apply_shape(call.shape, &mut data, &mut notes);
            if let Some(window) = tool.window {
                state_window(window, &mut data);
            }
            if !notes.is_empty()
                && let Value::Object(object) = &mut data
            {
                object.insert("tool_notes".into(), json!(notes));
            }
            let text = summary(tool, path, &data, &notes);
            let outcome = Outcome {
                is_error: false,
                structured: data,
                text,
            };
            self.hold(key, bytes, &outcome);
            return outcome;
        }
        let ticker = path
            .iter()
            .find(|(name, _)| *name == "ticker")
            .map(|(_, v)| v.as_str());
        self.refusal(tool, status, retry_after, envelope, ticker, authorization)
            .await
    }

    /// An error response turned into what an assistant can act on.
    async fn refusal(
        &self,
        tool: &ToolSpec,
        status: StatusCode,
        retry_after: Option<u64>,
        envelope: Value,
        ticker: Option<&str>,
        authorization: Option<&HeaderValue>,
    ) -> Outcome {
        let message = envelope
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the request failed")
            .to_owned();
        let mut structured = match envelope {
            Value::Object(mut object) => {
                object.remove("success");
                Value::Object(object)
            }
            _ => json!({}),
        };
        structured["status"] = json!(status.as_u16());
        let retry = retry_after.or_else(|| {
            structured
                .get("retry_after_seconds")
                .and_then(Value::as_u64)
        });
        let text = match status {
            StatusCode::UNAUTHORIZED => format!(
                "{}: the API token was refused (missing, revoked or expired). Create or rotate \
                 a token on the account page and reconnect.",
                tool.name
            ),
            StatusCode::FORBIDDEN => {
                if structured.get("upgrade_required").and_then(Value::as_bool) == Some(true) {
                    let required = structured
                        .get("required_tier")
                        .and_then(Value::as_str)
                        .unwrap_or("a higher")
                        .to_owned();
                    let yours = structured
                        .get("your_tier")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_owned();
                    structured["action"] = json!("upgrade");
                    format!(
                        "{}: upgrade needed — this tool needs the {required} plan and the \
                         token's plan is {yours}. The account holder can upgrade on the \
                         account page.",
                        tool.name
                    )
                } else {
                    format!("{}: {message}", tool.name)
                }
            }
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                let after = retry.unwrap_or(1);
                structured["retry_after_seconds"] = json!(after);
                format!("{}: {message}. Retry after {after} s.", tool.name)
            }
            StatusCode::NOT_FOUND if ticker.is_some() => {
                let ticker = ticker.unwrap_or_default();
                let suggestions = self.suggestions(ticker, authorization).await;
                let text = if suggestions.is_empty() {
                    format!(
                        "{}: {ticker} is not covered. Use search_tickers to find a covered \
                         symbol.",
                        tool.name
                    )
                } else {
                    format!(
                        "{}: {ticker} is not covered. Did you mean: {}?",
                        tool.name,
                        suggestions.join(", ")
                    )
                };
                structured["suggestions"] = json!(suggestions);
                text
            }
            StatusCode::FAILED_DEPENDENCY => format!(
                "{}: {message}. The data is missing upstream; retry in a few seconds or pick \
                 another expiration or date.",
                tool.name
            ),
            StatusCode::BAD_REQUEST => format!(
                "{}: {message}. Check the arguments (help topic {}).",
                tool.name, tool.name
            ),
            _ => format!("{}: {message}", tool.name),
        };
        Outcome::error(structured, text)
    }

    /// Covered symbols close to `ticker`, from the search endpoint.
    async fn suggestions(&self, ticker: &str, authorization: Option<&HeaderValue>) -> Vec<String> {
        let uri = request_uri(
            "/search",
            &[],
            &[("q", ticker.to_owned()), ("limit", "5".into())],
        );
        let Ok((status, _, bytes)) = self.send(Method::GET, &uri, None, authorization).await else {
            return Vec::new();
        };
        if !status.is_success() {
            return Vec::new();
        }
        let envelope = parse_body(&bytes);
        let data = &envelope["data"];
        let rows = data
            .get("results")
            .or_else(|| data.get("matches"))
            .and_then(Value::as_array)
            .or_else(|| data.as_array());
        rows.into_iter()
            .flatten()
            .filter_map(|row| {
                row.get("symbol")
                    .or_else(|| row.get("ticker"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .take(5)
            .collect()
    }

    /// Sends one request through the router: status, `Retry-After`, parsed body.
    async fn send(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
        authorization: Option<&HeaderValue>,
    ) -> Result<(StatusCode, Option<u64>, Bytes), String> {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header(SERVICE_CLIENT_HEADER, SERVICE_CLIENT);
        if let Some(authorization) = authorization {
            request = request.header(AUTHORIZATION, authorization);
        }
        let request = match body {
            Some(body) => request
                .header(CONTENT_TYPE, "application/json")
                .body(Body::from(serde_json::to_vec(body).unwrap_or_default())),
            None => request.body(Body::empty()),
        }
        .map_err(|_| "the tool built an invalid request".to_owned())?;
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .map_err(|_| "the API did not answer".to_owned())?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let bytes = axum::body::to_bytes(response.into_body(), MAX_PAYLOAD_BYTES)
            .await
            .map_err(|_| "the API's answer was too large to return".to_owned())?;
        Ok((status, retry_after, bytes))
    }

    /// The `help` tool: the catalog and the served reference.
    async fn help(&self, topic: Option<&str>, authorization: Option<&HeaderValue>) -> Outcome {
        let reference = match self
            .send(
                Method::GET,
                &format!("{DATA_PREFIX}/docs"),
                None,
                authorization,
            )
            .await
            .map(|(status, retry, bytes)| (status, retry, parse_body(&bytes)))
        {
            Ok((status, _, Value::String(markdown))) if status.is_success() => markdown,
            Ok((status, _, body)) => {
                let message = body
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("the reference is not available")
                    .to_owned();
                return Outcome::error(
                    json!({"status": status.as_u16(), "error": message}),
                    format!("help: {message}"),
                );
            }
            Err(text) => return Outcome::error(json!({"status": 500, "error": text}), text),
        };
        let sections = markdown_sections(&reference);
        let topic = topic.map(|t| t.trim().to_ascii_lowercase());
        let (structured, text) = match topic.as_deref() {
            None | Some("") => {
                let tools: Vec<Value> = TOOLS
                    .iter()
                    .map(|t| json!({"name": t.name, "title": t.title}))
                    .collect();
                let conventions = pick_sections(&sections, |s| {
                    ["units", "compact windows", "errors"]
                        .iter()
                        .any(|h| s.heading.to_ascii_lowercase() == *h)
                });
                (
                    json!({"tools": tools, "reference": conventions,
                           "more": "call help with a tool name, an endpoint name or a word"}),
                    format!(
                        "{} tools; pass `topic` (a tool name such as get_gex, an endpoint \
                         such as cores, or a word such as units) for details.",
                        TOOLS.len()
                    ),
                )
            }
            Some(topic) => {
                if let Some(tool) = TOOLS.iter().find(|t| t.name == topic) {
                    let quoted = pick_sections(&sections, |s| {
                        tool.endpoints
                            .iter()
                            .any(|slug| s.anchor.as_deref() == Some(slug))
                    });
                    (
                        json!({
                            "tool": tool.name,
                            "description": tool.description(),
                            "arguments": tool.input_schema(),
                            "endpoints": tool.endpoints,
                            "reference": quoted,
                        }),
                        format!("{}: {}", tool.name, tool.description()),
                    )
                } else {
                    let slug = topic.trim_start_matches('/');
                    let mut quoted = pick_sections(&sections, |s| {
                        s.anchor.as_deref() == Some(slug)
                            || s.heading.to_ascii_lowercase().contains(topic)
                    });
                    if quoted.is_empty() {
                        quoted = pick_sections(&sections, |s| {
                            s.body.to_ascii_lowercase().contains(topic)
                        });
                    }
                    let text = if quoted.is_empty() {
                        format!("help: nothing in the reference about {topic:?}")
                    } else {
                        format!(
                            "help: {} reference section{} about {topic:?}",
                            quoted.len(),
                            if quoted.len() == 1 { "" } else { "s" }
                        )
                    };
                    (json!({"topic": topic, "reference": quoted}), text)
                }
            }
        };
        Outcome {
            is_error: false,
            structured,
            text,
        }
    }
}

impl Outcome {
    fn error(structured: Value, text: String) -> Self {
        Self {
            is_error: true,
            structured,
            text,
        }
    }
}

/// A response body as JSON; a body that is not JSON (the Markdown of the documentation routes)
/// as a string.
fn parse_body(bytes: &Bytes) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// `template` (a registry path like `/vrp/{ticker}/timeseries`) with its segments filled and
/// the query appended, under the data prefix.
fn request_uri(template: &str, path: &[(&str, String)], query: &[(&str, String)]) -> String {
    let mut uri = format!("{DATA_PREFIX}{template}");
    for (name, value) in path {
        uri = uri.replace(&format!("{{{name}}}"), &percent_encode(value));
    }
    if !query.is_empty() {
        let mut serializer = form_urlencoded::Serializer::new(String::new());
        for (name, value) in query {
            serializer.append_pair(name, value);
        }
        uri.push('?');
        uri.push_str(&serializer.finish());
    }
    uri
}

/// Percent-encodes a path segment (everything but unreserved characters and `^`).
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'^') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Applies a tool's payload change, noting it.
fn apply_shape(shape: Shape, data: &mut Value, notes: &mut Vec<String>) {
    match shape {
        Shape::AsIs => {}
        Shape::OneGreek(greek) => {
            if let Some(Value::Object(aggregates)) = data.get_mut("aggregates") {
                aggregates.retain(|name, _| name == greek);
            }
            if let Some(Value::Object(matrices)) = data.get_mut("greek_matrices") {
                let kept = matrices.remove(greek);
                let left_out: Vec<String> = matrices.keys().cloned().collect();
                matrices.clear();
                if let Some(kept) = kept {
                    matrices.insert(greek.into(), kept);
                }
                notes.push(format!(
                    "greek_matrices and aggregates hold {greek} only; left out {} (greek=all \
                     returns every one)",
                    left_out.join(", ")
                ));
            }
        }
        Shape::MinMarketCap(min) => {
            let mut dropped = 0usize;
            let mut kept_total = 0usize;
            if let Value::Object(object) = data {
                for (_, value) in object.iter_mut() {
                    if let Value::Array(rows) = value
                        && rows.iter().any(|r| r.get("market_cap").is_some())
                    {
                        let before = rows.len();
                        rows.retain(|r| {
                            r.get("market_cap")
                                .and_then(Value::as_f64)
                                .is_some_and(|cap| cap >= min)
                        });
                        dropped += before - rows.len();
                        kept_total += rows.len();
                    }
                }
            }
            notes.push(format!(
                "{kept_total} rows at or above the market cap kept, {dropped} dropped"
            ));
        }
        Shape::ExpirationTotalsOnly => {
            let mut trimmed = 0usize;
            if let Some(Value::Array(expirations)) = data.get_mut("by_expiration") {
                for expiration in expirations.iter_mut() {
                    if let Value::Object(row) = expiration {
                        let before = row.len();
                        row.retain(|key, value| {
                            !matches!(value, Value::Array(_)) || key == "expiration"
                        });
                        row.remove("window");
                        trimmed += usize::from(row.len() < before);
                    }
                }
            }
            if trimmed > 0 {
                notes.push(format!(
                    "by_expiration gives each of {trimmed} expirations its totals, flip and \
                     walls without its per-strike lists; for one expiration's strikes pass \
                     expiration=<date> with aggregate=false, or detail=full for every list"
                ));
            }
        }
        Shape::ProfileAroundSpot(each_side) => {
            let spot = data.get("stock_price").and_then(Value::as_f64);
            let mut total = 0usize;
            let mut kept = 0usize;
            if let (Some(spot), Some(Value::Object(exposures))) = (spot, data.get_mut("exposures"))
            {
                for exposure in exposures.values_mut() {
                    if let Some(Value::Array(profile)) = exposure.get_mut("profile") {
                        total = total.max(profile.len());
                        window_around(profile, spot, each_side);
                        kept = kept.max(profile.len());
                    }
                }
            }
            if kept < total {
                notes.push(format!(
                    "each exposure profile keeps the {each_side} strikes on each side of the \
                     price: {kept} of {total} strikes (the REST endpoint returns all)"
                ));
            }
        }
        Shape::ZThreshold(threshold) => {
            let z = data.get("z_score").and_then(Value::as_f64);
            let assessment = match z {
                Some(z) => json!({
                    "z_score_threshold": threshold,
                    "z_score": z,
                    "exceeds": z.abs() >= threshold,
                    "direction": if z >= 0.0 { "iv_above_mean" } else { "iv_below_mean" },
                }),
                None => json!({
                    "z_score_threshold": threshold,
                    "z_score": null,
                    "exceeds": null,
                    "reason": "no z-score: too little IV history",
                }),
            };
            if let Value::Object(object) = data {
                object.insert("threshold_assessment".into(), assessment);
            }
        }
    }
}

/// Keeps the `each_side` rows (sorted by `strike`) below and above `spot`.
fn window_around(rows: &mut Vec<Value>, spot: f64, each_side: usize) {
    let strike = |row: &Value| {
        row.get("strike")
            .and_then(Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    let first_above = rows.partition_point(|row| strike(row) < spot);
    let start = first_above.saturating_sub(each_side);
    let end = (first_above + each_side).min(rows.len());
    rows.truncate(end);
    rows.drain(..start);
}

/// Adds a `window` block for `window.list` when the payload has none of its own: how many rows
/// came back, how many there are when the payload says, and how to ask for more.
fn state_window(window: ListWindow, data: &mut Value) {
    let Value::Object(object) = data else {
        return;
    };
    if object.contains_key("window") {
        return;
    }
    let Some(returned) = object
        .get(window.list)
        .and_then(Value::as_array)
        .map(Vec::len)
    else {
        return;
    };
    let total = window
        .total
        .and_then(|field| object.get(field))
        .and_then(Value::as_u64);
    let block = json!({
        "list": window.list,
        "rows_returned": returned,
        "rows_total": total,
        "truncated": total.map(|t| t > returned as u64),
        "more": window.widen,
    });
    object.insert("window".into(), block);
}

/// Most scalar fields quoted in a summary.
const SUMMARY_SCALARS: usize = 12;

/// A short text for the assistant: the top-level scalars, the size of each list, the window.
fn summary(tool: &ToolSpec, path: &[(&str, String)], data: &Value, notes: &[String]) -> String {
    let subject = path
        .iter()
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join("/");
    let mut text = if subject.is_empty() {
        tool.name.to_owned()
    } else {
        format!("{} {subject}", tool.name)
    };
    if let Value::Object(object) = data {
        let scalars: Vec<String> = object
            .iter()
            .filter_map(|(k, v)| match v {
                Value::Number(n) => Some(format!("{k}={n}")),
                Value::String(s) if s.len() <= 40 => Some(format!("{k}={s}")),
                Value::Bool(b) => Some(format!("{k}={b}")),
                _ => None,
            })
            .take(SUMMARY_SCALARS)
            .collect();
        if !scalars.is_empty() {
            text.push_str(": ");
            text.push_str(&scalars.join(", "));
        }
        let lists: Vec<String> = object
            .iter()
            .filter(|(k, _)| k.as_str() != "tool_notes")
            .filter_map(|(k, v)| v.as_array().map(|rows| format!("{k}: {} rows", rows.len())))
            .collect();
        if !lists.is_empty() {
            text.push_str("; ");
            text.push_str(&lists.join(", "));
        }
        if let Some(window) = object.get("window").or_else(|| object.get("strike_window")) {
            let total = window.get("rows_total").and_then(Value::as_u64);
            let returned = window.get("rows_returned").and_then(Value::as_u64);
            let more = window.get("more").and_then(Value::as_str).unwrap_or(
                if object.contains_key("strike_window") {
                    "strikes_around=0 returns every strike"
                } else {
                    "detail=full or a larger strikes_around/limit returns more"
                },
            );
            match (returned, total) {
                (Some(returned), Some(total)) if returned < total => {
                    text.push_str(&format!("; window: {returned} of {total} rows ({more})"));
                }
                (Some(returned), None) => {
                    text.push_str(&format!("; window: {returned} rows ({more})"));
                }
                _ => {}
            }
        }
    }
    for note in notes {
        text.push_str("; note: ");
        text.push_str(note);
    }
    text.push_str(". Full result in the structured content.");
    text
}

/// One section of the reference Markdown.
#[derive(Debug)]
struct Section {
    heading: String,
    anchor: Option<String>,
    body: String,
}

fn markdown_sections(markdown: &str) -> Vec<Section> {
    let mut sections = Vec::new();
    let mut current: Option<Section> = None;
    for line in markdown.lines() {
        if line.starts_with('#') {
            if let Some(done) = current.take() {
                sections.push(done);
            }
            let title = line.trim_start_matches('#').trim();
            let (anchor, heading) = match title.strip_prefix("<a id=\"") {
                Some(rest) => match rest.split_once("\"></a>") {
                    Some((id, heading)) => (Some(id.to_owned()), heading.trim().to_owned()),
                    None => (None, title.to_owned()),
                },
                None => (None, title.to_owned()),
            };
            current = Some(Section {
                heading,
                anchor,
                body: String::new(),
            });
        } else if let Some(section) = &mut current {
            section.body.push_str(line);
            section.body.push('\n');
        }
    }
    sections.extend(current);
    sections
}

fn pick_sections(sections: &[Section], wanted: impl Fn(&Section) -> bool) -> Vec<Value> {
    sections
        .iter()
        .filter(|s| wanted(s))
        .take(HELP_SECTIONS)
        .map(|s| {
            let body = s.body.trim();
            let (body, cut) = match body.char_indices().nth(HELP_SECTION_CHARS) {
                Some((at, _)) => (&body[..at], true),
                None => (body, false),
            };
            json!({"heading": s.heading, "text": body, "truncated": cut})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_filled_and_encoded_and_queries_appended() {
        assert_eq!(
            request_uri(
                "/correlation/{ticker}/compare/{ticker2}",
                &[("ticker", "BRK.B".into()), ("ticker2", "A/B?".into())],
                &[("days", "100".into()), ("q", "a b&c".into())]
            ),
            "/api/mcp/data/correlation/BRK.B/compare/A%2FB%3F?days=100&q=a+b%26c"
        );
    }

    #[test]
    fn reference_sections_keep_their_anchor_and_heading() {
        let sections = markdown_sections(
            "# Title\nintro\n## Units\nall points\n#### <a id=\"gex\"></a>GET /gex/{ticker}\n\nbody\n",
        );
        assert_eq!(sections.len(), 3);
        assert_eq!(sections[1].heading, "Units");
        assert_eq!(sections[2].anchor.as_deref(), Some("gex"));
        assert_eq!(sections[2].heading, "GET /gex/{ticker}");
    }

    #[test]
    fn a_one_greek_heatmap_says_what_it_left_out() {
        let mut data = json!({"greek_matrices": {"delta": [[0.5]], "gamma": [[0.1]]}});
        let mut notes = Vec::new();
        apply_shape(Shape::OneGreek("gamma"), &mut data, &mut notes);
        assert_eq!(data["greek_matrices"], json!({"gamma": [[0.1]]}));
        assert!(notes[0].contains("left out delta"));
    }

    #[test]
    fn a_sized_list_states_its_window_unless_the_payload_has_one() {
        let rule = ListWindow {
            list: "results",
            total: Some("total_matches"),
            widen: "limit returns up to 200 rows",
        };
        let mut data = json!({"results": [1, 2], "total_matches": 9});
        state_window(rule, &mut data);
        assert_eq!(
            data["window"],
            json!({"list": "results", "rows_returned": 2, "rows_total": 9, "truncated": true,
                   "more": "limit returns up to 200 rows"})
        );
        let mut own = json!({"results": [1], "window": {"rows_total": 1}});
        state_window(rule, &mut own);
        assert_eq!(own["window"], json!({"rows_total": 1}));
    }

    #[test]
    fn assistant_sized_exposures_keep_totals_and_the_strikes_near_the_price() {
        let mut gex = json!({"by_expiration": [
            {"expiration": "2026-11-20", "total_gex": 1.0, "gex_by_strike": [1, 2], "detailed": [3],
             "window": {"rows_total": 2}}
        ]});
        let mut notes = Vec::new();
        apply_shape(Shape::ExpirationTotalsOnly, &mut gex, &mut notes);
        assert_eq!(
            gex["by_expiration"][0],
            json!({"expiration": "2026-11-20", "total_gex": 1.0})
        );
        assert_eq!(notes.len(), 1);

        let profile: Vec<Value> = (0..100).map(|k| json!({"strike": k as f64})).collect();
        let mut exposure =
            json!({"stock_price": 50.5, "exposures": {"gamma": {"profile": profile}}});
        apply_shape(Shape::ProfileAroundSpot(3), &mut exposure, &mut notes);
        let kept: Vec<f64> = exposure["exposures"]["gamma"]["profile"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["strike"].as_f64().unwrap())
            .collect();
        assert_eq!(kept, vec![48.0, 49.0, 50.0, 51.0, 52.0, 53.0]);
        assert!(notes[1].contains("6 of 100 strikes"));
    }

    #[test]
    fn the_z_threshold_is_assessed_on_the_payload() {
        let mut data = json!({"z_score": -2.4});
        apply_shape(Shape::ZThreshold(2.0), &mut data, &mut Vec::new());
        assert_eq!(data["threshold_assessment"]["exceeds"], true);
        assert_eq!(data["threshold_assessment"]["direction"], "iv_below_mean");
        let mut data = json!({"z_score": 1.0});
        apply_shape(Shape::ZThreshold(2.0), &mut data, &mut Vec::new());
        assert_eq!(data["threshold_assessment"]["exceeds"], false);
    }
}
