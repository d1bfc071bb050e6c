//! `GET /docs`: the one-file Markdown reference of the served endpoints.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::{MARKDOWN_CONTENT_TYPE, REFERENCE_MARKDOWN, location_word};
use crate::registry::{Cost, DATA_PREFIX, Method, ParamKind, Registry};
use crate::state::AppState;

/// The Markdown reference.
#[utoipa::path(
    get,
    path = "/docs",
    tag = "platform",
    operation_id = "docs",
    summary = "One-file API reference (Markdown)",
    description = "The whole API in one Markdown file. Returned as is, not in the envelope.",
    responses((status = 200, description = "Markdown", content_type = "text/markdown", body = String))
)]
pub async fn docs(State(state): State<AppState>) -> Response {
    (
        [(CONTENT_TYPE, MARKDOWN_CONTENT_TYPE)],
        state.catalogue.reference_markdown.clone(),
    )
        .into_response()
}

fn kind_word(kind: ParamKind) -> String {
    match kind {
        ParamKind::Int { min, max } => format!("whole number, {min} to {max} (clamped)"),
        ParamKind::Float { min, max } => match (min, max) {
            (Some(min), Some(max)) => format!("number, {min} to {max} (clamped)"),
            (Some(min), None) => format!("number, at least {min} (clamped)"),
            (None, Some(max)) => format!("number, at most {max} (clamped)"),
            (None, None) => "number".to_owned(),
        },
        ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
        ParamKind::Bool => "true or false".to_owned(),
        ParamKind::Date => "date YYYY-MM-DD".to_owned(),
        ParamKind::Symbol => "ticker".to_owned(),
        ParamKind::SymbolList { max_len } => format!("comma-separated tickers, at most {max_len}"),
        ParamKind::IntList { min, max, max_len } => {
            format!("comma-separated whole numbers {min} to {max} (clamped), at most {max_len}")
        }
        ParamKind::NameList => "comma-separated names".to_owned(),
        ParamKind::Text => "text".to_owned(),
        ParamKind::Number => "JSON number".to_owned(),
        ParamKind::Array => "JSON array".to_owned(),
        ParamKind::Object => "JSON object".to_owned(),
    }
}

fn cost_words(cost: Cost) -> String {
    match cost {
        Cost::Free => "free".to_owned(),
        Cost::Units(1) => "1 unit per call".to_owned(),
        Cost::Units(n) => format!("{n} units per call"),
        Cost::PerSymbol => "1 unit per symbol requested".to_owned(),
    }
}

/// A table cell: pipes escaped, on one line.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The served reference: the hand-written text, then one section per mounted endpoint grouped
/// by family (anchors `#<slug>` and `#family-<slug>`, which the index links to), with its
/// parameters from the registry and, where the family declares its payload type, the response
/// fields from that type's schema.
pub fn reference_markdown(registry: &Registry) -> String {
    let data_schemas = crate::handlers::data_schemas();
    let mut out = String::with_capacity(REFERENCE_MARKDOWN.len() + 4096);
    out.push_str(REFERENCE_MARKDOWN);
    out.push_str("\n## Endpoints served by this build\n\n");
    out.push_str(&format!(
        "{} endpoints are served. Paths are relative to `{DATA_PREFIX}`. An endpoint of the \
         interface that is not listed here is not served by this build and answers 404.\n",
        registry.endpoint_count()
    ));
    for (family, _) in registry.families() {
        out.push_str(&format!(
            "\n### <a id=\"family-{}\"></a>{}\n",
            family.slug, family.name
        ));
        for spec in registry
            .mounted()
            .iter()
            .filter(|e| e.family == family.slug)
        {
            out.push_str(&format!(
                "\n#### <a id=\"{}\"></a>{} {}\n\n{}\n\n- tier: {}\n- cost: {}\n",
                spec.slug,
                spec.method.as_str(),
                spec.path,
                spec.summary,
                spec.tier.as_str(),
                cost_words(spec.cost)
            ));
            let example = match (spec.method, spec.example.body) {
                (Method::Post, Some(body)) => {
                    format!(
                        "POST {}{} with body `{body}`",
                        DATA_PREFIX, spec.example.request
                    )
                }
                _ => format!(
                    "{} {}{}",
                    spec.method.as_str(),
                    DATA_PREFIX,
                    spec.example.request
                ),
            };
            out.push_str(&format!("- example: `{example}`\n"));
            if !spec.params.is_empty() {
                out.push_str(
                    "\n| parameter | in | required | default | accepts |\n| --- | --- | --- | --- | --- |\n",
                );
                for p in spec.params {
                    out.push_str(&format!(
                        "| `{}` | {} | {} | {} | {} |\n",
                        p.name,
                        location_word(p.location),
                        if p.required { "yes" } else { "no" },
                        p.default.unwrap_or("—"),
                        kind_word(p.kind)
                    ));
                }
            }
            let fields = data_schemas
                .iter()
                .find(|d| d.slug == spec.slug)
                .map(crate::openapi::data_fields)
                .unwrap_or_default();
            if !fields.is_empty() {
                out.push_str(
                    "\nResponse fields, under `data` (`[]`: each item of a list, `<key>`: each \
                     key of a map):\n\n| field | type | meaning |\n| --- | --- | --- |\n",
                );
                for field in fields {
                    out.push_str(&format!(
                        "| `{}` | {} | {} |\n",
                        cell(&field.path),
                        cell(&field.kind),
                        cell(&field.description)
                    ));
                }
            }
        }
    }
    if registry.mounted().iter().any(|e| e.slug == "cores") {
        out.push_str(&crate::handlers::stock::cores::catalog_markdown());
    }
    out
}
