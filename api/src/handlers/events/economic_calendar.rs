//! `GET /economic-calendar`: the stored macro releases of one country over a date window, as a
//! flat list and grouped by day, with the published values read as numbers.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{NaiveDate, TimeDelta};
use optics_compute::calendars::{
    ECONOMIC_DEFAULT_SPAN_DAYS, ECONOMIC_MAX_SPAN_DAYS, RELEASE_UNITS, parse_release_value,
    release_public,
};
use optics_compute::time::new_york_date;
use optics_schemas::{EconomicEvent, Importance};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// One scheduled release.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EconomicEventRow {
    /// Release date, New York.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// Release time `HH:MM`, US Eastern (New York); null when the calendar gives none.
    pub time: Option<String>,
    /// ISO 3166-1 alpha-2 country code (`EU` for the euro area).
    pub country: String,
    /// Release name.
    pub event: String,
    /// `HIGH`, `MEDIUM` or `LOW`: how much the release usually moves markets.
    pub impact: &'static str,
    /// The same value as `impact` (the interface's name for it).
    pub importance: &'static str,
    /// Consensus forecast as a number, in `unit`; null when none is published or the text
    /// does not read as a number.
    pub estimate: Option<f64>,
    /// The previous period's value as a number, in `unit`; null likewise.
    pub previous: Option<f64>,
    /// The released value as a number, in `unit`; null until released (see `released`), or
    /// when the text does not read as a number.
    pub actual: Option<f64>,
    /// The unit of the three numbers: `%`, `K` (thousands), `M` (millions), `B` (billions),
    /// `T` (trillions), or null for a plain number (an index level, a count).
    pub unit: Option<&'static str>,
    /// The forecast as published.
    pub estimate_text: Option<String>,
    /// The previous value as published.
    pub previous_text: Option<String>,
    /// The released value as published; null until released.
    pub actual_text: Option<String>,
    /// Whether the release's time (its date's end, without a time) has passed: only then is
    /// `actual` shown.
    pub released: bool,
}

/// The `/economic-calendar` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EconomicCalendarPayload {
    /// Every release of `country` from `from_date` to `to_date`, by date, then time (untimed
    /// last), then name.
    pub events: Vec<EconomicEventRow>,
    /// The same rows by date (`YYYY-MM-DD`); days without a release are absent.
    pub by_date: BTreeMap<String, Vec<EconomicEventRow>>,
    /// Releases with impact `HIGH`.
    pub high_count: usize,
    /// Releases with impact `MEDIUM`.
    pub medium_count: usize,
    /// Releases with impact `LOW`.
    pub low_count: usize,
    /// All releases in the window.
    pub total_count: usize,
    /// First day of the window (default: today in New York).
    #[schema(value_type = IsoDate)]
    pub from_date: NaiveDate,
    /// Last day of the window, included (default: from_date + 14 days).
    #[schema(value_type = IsoDate)]
    pub to_date: NaiveDate,
    /// The calendar's country.
    pub country: String,
    /// The zone of every `date` and `time`: `America/New_York`.
    pub timezone: &'static str,
    /// How `estimate`, `previous` and `actual` are read from the published texts.
    pub value_rule: String,
    /// When an `actual` is shown.
    pub release_rule: &'static str,
    /// The clock's freshness (releases belong to no trading session).
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `release_rule` of the payload.
const RELEASE_RULE: &str = "actual and actual_text are shown once the release time (New York) \
                            has passed; a release without a time once its date has passed in \
                            New York";

/// `GET /economic-calendar?from_date=&to_date=&country=US`.
pub async fn economic_calendar(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<EconomicCalendarPayload>>, ApiError> {
    let now = state.now();
    let from = params
        .date("from_date")?
        .unwrap_or_else(|| new_york_date(now));
    let to = match params.date("to_date")? {
        Some(to) => to,
        None => from
            .checked_add_signed(TimeDelta::days(ECONOMIC_DEFAULT_SPAN_DAYS))
            .unwrap_or(from),
    };
    if to < from {
        return Err(ApiError::bad_request(format!(
            "to_date {to} is before from_date {from}"
        )));
    }
    let span = (to - from).num_days();
    if span > ECONOMIC_MAX_SPAN_DAYS {
        return Err(ApiError::bad_request(format!(
            "from_date {from} to to_date {to} spans {span} days; at most \
             {ECONOMIC_MAX_SPAN_DAYS} days are served at once"
        )));
    }
    let country = country_code(params.text("country")?.unwrap_or("US"))?;
    let coverage = state.market_data()?.coverage();
    let events: Vec<EconomicEventRow> = coverage
        .economic_events(&country, from, to)
        .map(|event| event_row(event, release_public(event.date, event.time, now)))
        .collect();
    let mut by_date: BTreeMap<String, Vec<EconomicEventRow>> = BTreeMap::new();
    for row in &events {
        by_date
            .entry(row.date.to_string())
            .or_default()
            .push(row.clone());
    }
    let count = |importance: Importance| {
        events
            .iter()
            .filter(|e| e.impact == importance.as_str())
            .count()
    };
    Ok(ok(EconomicCalendarPayload {
        high_count: count(Importance::High),
        medium_count: count(Importance::Medium),
        low_count: count(Importance::Low),
        total_count: events.len(),
        events,
        by_date,
        from_date: from,
        to_date: to,
        country,
        timezone: "America/New_York",
        value_rule: format!(
            "the published text with an optional sign, digits, one decimal point and `,` \
             thousands separators, and an optional trailing unit ({}); anything else is null \
             (the text is kept)",
            RELEASE_UNITS.join(", ")
        ),
        release_rule: RELEASE_RULE,
        freshness: state.freshness(),
    }))
}

/// Two ASCII letters, upper-cased; anything else is a 400.
fn country_code(raw: &str) -> Result<String, ApiError> {
    if raw.len() == 2 && raw.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(raw.to_ascii_uppercase())
    } else {
        Err(ApiError::bad_request(format!(
            "country must be a two-letter ISO 3166-1 code such as US or EU, got {raw:?}"
        )))
    }
}

/// The row of `event`; its actual only when `released`.
fn event_row(event: &EconomicEvent, released: bool) -> EconomicEventRow {
    let actual_text = event.actual.clone().filter(|_| released);
    let read = |text: &Option<String>| text.as_deref().and_then(parse_release_value);
    let (estimate, previous, actual) = (
        read(&event.forecast),
        read(&event.previous),
        read(&actual_text),
    );
    EconomicEventRow {
        date: event.date,
        time: event.time.map(|t| t.format("%H:%M").to_string()),
        country: event.country.clone(),
        event: event.event.clone(),
        impact: event.importance.as_str(),
        importance: event.importance.as_str(),
        estimate: estimate.map(|v| v.value),
        previous: previous.map(|v| v.value),
        actual: actual.map(|v| v.value),
        // The unit of the first value that carries one (they share it when published alike).
        unit: [actual, estimate, previous]
            .into_iter()
            .flatten()
            .find_map(|v| v.unit),
        estimate_text: event.forecast.clone(),
        previous_text: event.previous.clone(),
        actual_text,
        released,
    }
}
