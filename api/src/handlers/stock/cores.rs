//! `GET /cores/{ticker}`: the analytics row — several hundred named numeric fields computed from
//! the stored bars and vol_daily history, the live chain and flow, and the reference data; the
//! curated default subset, `fields=a,b,c` or `fields=all`. Every field is defined in the
//! catalog served at `/docs` (`optics_compute::cores::catalog`).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use optics_compute::cores::{CoresHistory, CoresRow, DEFAULT_FIELDS, catalog, field_index};
use optics_compute::time::new_york_date;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::market::cores::cores_row;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::suggest::levenshtein;

/// Closest catalog names an unknown field name is answered with.
pub const FIELD_SUGGESTIONS: usize = 3;

/// The value of `fields` that asks for every catalog field.
pub const ALL_FIELDS: &str = "all";

/// Units of the row, as the catalog states them field by field.
pub const UNITS: &str = "IVs and HVs in percentage points, price changes in percent, borrow in \
                         percent per year, market cap in dollars, dates as YYYYMMDD integers; \
                         each field's unit is in the cores field catalog at /docs";

/// The `/cores/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CoresPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The requested fields by vendor name (`iv30d`, `clsHv20d`, …), each a number or null
    /// when it cannot be computed for this ticker today; units per field in the catalog.
    #[serde(flatten)]
    // A free-form object in the document: `additionalProperties` of numbers would also bind
    // the flattened freshness fields (a boolean, strings), which are not in this map.
    #[schema(value_type = Object)]
    pub fields: BTreeMap<String, Option<f64>>,
    /// Fields in the catalog (the `fields=all` count).
    pub available_field_count: usize,
    /// Fields in this response.
    pub returned_field_count: usize,
    /// `default` (the curated subset), `all` or `requested`.
    pub field_set: &'static str,
    /// Of the returned fields, how many are null.
    pub null_field_count: usize,
    /// Why fields are null (which inputs are missing); null when none is.
    pub reason: Option<String>,
    /// Units of the figures.
    pub units: &'static str,
    /// Where every field's definition, unit and source are listed.
    pub catalog: &'static str,
    /// The freshness of the newest input session (bars, vol_daily or chain).
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// Heading of the cores field catalog in the served `/docs`.
pub const CATALOG_HEADING: &str = "## Cores fields";

/// The cores field catalog as a Markdown table (name, unit, definition, source), generated
/// from [`catalog`] and appended to the served `/docs`.
pub fn catalog_markdown() -> String {
    let mut out = format!(
        "\n{CATALOG_HEADING}\n\nThe {} fields of `/cores/{{ticker}}`, in row order. `fields=all` \
         returns every one; without `fields` the curated default subset of {} is returned: {}.\n\n\
         | field | unit | definition | source |\n| --- | --- | --- | --- |\n",
        catalog().len(),
        DEFAULT_FIELDS.len(),
        DEFAULT_FIELDS
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for f in catalog() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.name,
            f.unit.replace('|', "\\|"),
            f.definition.replace('|', "\\|"),
            f.source.replace('|', "\\|")
        ));
    }
    out
}

/// The catalog names closest to `unknown` (case-insensitive edit distance), nearest first.
pub fn closest_fields(unknown: &str) -> Vec<&'static str> {
    let lower = unknown.to_ascii_lowercase();
    let mut ranked: Vec<(usize, &'static str)> = catalog()
        .iter()
        .map(|f| (levenshtein(&lower, &f.name.to_ascii_lowercase()), f.name))
        .collect();
    ranked.sort();
    ranked
        .into_iter()
        .take(FIELD_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect()
}

/// The catalog positions `fields` asks for, with the field-set label; a 400 naming the
/// closest names for an unknown one.
pub fn requested_fields(
    fields: Option<Vec<String>>,
) -> Result<(Vec<usize>, &'static str), ApiError> {
    let names = match fields {
        None => return Ok((default_indices(), "default")),
        Some(names) if names.is_empty() => return Ok((default_indices(), "default")),
        Some(names) => names,
    };
    if names.len() == 1 && names[0].eq_ignore_ascii_case(ALL_FIELDS) {
        return Ok(((0..catalog().len()).collect(), "all"));
    }
    let mut indices = Vec::with_capacity(names.len());
    let mut unknown = Vec::new();
    for name in &names {
        match field_index(name.trim()) {
            Some(i) if !indices.contains(&i) => indices.push(i),
            Some(_) => {}
            None => unknown.push(format!(
                "`{name}` (closest: {})",
                closest_fields(name.trim()).join(", ")
            )),
        }
    }
    if !unknown.is_empty() {
        return Err(ApiError::bad_request(format!(
            "unknown cores field{} {}; fields takes catalog names (see the cores field catalog \
             at /docs) or `all`",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join("; ")
        )));
    }
    Ok((indices, "requested"))
}

fn default_indices() -> Vec<usize> {
    DEFAULT_FIELDS
        .iter()
        .filter_map(|n| field_index(n))
        .collect()
}

/// The payload of `row` restricted to `indices`.
pub fn payload_of(
    row: &CoresRow,
    indices: &[usize],
    field_set: &'static str,
    reasons: Vec<String>,
    freshness: Freshness,
) -> CoresPayload {
    let fields: BTreeMap<String, Option<f64>> = indices
        .iter()
        .map(|&i| (catalog()[i].name.to_owned(), row.value(i)))
        .collect();
    let null_field_count = fields.values().filter(|v| v.is_none()).count();
    CoresPayload {
        ticker: row.ticker.clone(),
        available_field_count: catalog().len(),
        returned_field_count: fields.len(),
        field_set,
        null_field_count,
        reason: (null_field_count > 0 && !reasons.is_empty()).then(|| reasons.join("; ")),
        fields,
        units: UNITS,
        catalog: "/docs (section \"Cores fields\")",
        freshness,
    }
}

/// `GET /cores/{ticker}?fields=iv30d,slope` (or `fields=all`).
pub async fn cores(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<CoresPayload>>, ApiError> {
    let (indices, field_set) = requested_fields(params.names("fields")?)?;
    let today = new_york_date(state.now());
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    let chain = reader.chain(&ticker);
    let flow = reader.flow(&ticker);
    let vol = reader.vol_history(&ticker).await?;
    let symbol = ticker.as_str();
    let row = cores_row(
        &coverage,
        chain.as_deref(),
        &CoresHistory::from_rows(&vol, today),
        flow.as_deref(),
        symbol,
        today,
    );
    let mut reasons = Vec::new();
    let last_bar = coverage
        .bars_of(symbol)
        .iter()
        .take_while(|b| b.date <= today)
        .last()
        .map(|b| b.date);
    if last_bar.is_none() {
        reasons.push(format!("no daily bars are stored for {ticker}"));
    }
    if vol.is_empty() {
        reasons.push(format!("no vol_daily rows are stored for {ticker}"));
    }
    if chain.is_none() {
        reasons.push(format!(
            "no live chain for {ticker}: delta IVs, fit error and option activity need one"
        ));
    }
    if flow.is_none() {
        reasons.push(format!("no session flow for {ticker}"));
    }
    if coverage.borrow_of(symbol).is_empty() {
        reasons.push(format!("no borrow fees are stored for {ticker}"));
    }
    if coverage.reports_of(symbol).is_empty() {
        reasons.push(format!("no earnings reports are listed for {ticker}"));
    }
    if coverage.get(symbol).and_then(|c| c.market_cap).is_none() {
        reasons.push(format!(
            "no market cap in the company reference for {ticker}"
        ));
    }
    reasons.push(
        "windowed statistics need their full history (see each field's definition)".to_owned(),
    );
    let session = [
        last_bar,
        vol.last().map(|r| r.trade_date),
        chain.as_ref().map(|c| c.trade_date),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(today);
    Ok(ok(payload_of(
        &row,
        &indices,
        field_set,
        reasons,
        state.freshness_of(session),
    )))
}
