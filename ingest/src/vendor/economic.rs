//! Economic calendar: `date, time, country, event, importance, actual, forecast, previous`.
//! `time` is the New York release time `HH:MM` (24-hour), empty when not fixed; `country` an
//! ISO 3166-1 alpha-2 code or `EU` (any case; every row is `US` when the column is absent);
//! `importance` `high`, `medium` or `low` in any case; `forecast` may be headed `estimate`.
//! `actual`, `forecast` and `previous` are kept as published text (`3.2%`, `254K`), empty when
//! none; the `time`, `actual`, `forecast` and `previous` columns may be left out.

use chrono::NaiveTime;
use optics_schemas::{EconomicEvent, Importance};

use super::error::Reason;
use super::fields::{Cells, Col, Header};

/// The country of every row of a file without a `country` column.
pub const DEFAULT_COUNTRY: &str = "US";

/// The bound columns of an economic calendar file.
#[derive(Debug, Clone)]
pub(crate) struct Economic {
    date: Col,
    time: Option<Col>,
    country: Option<Col>,
    event: Col,
    importance: Col,
    actual: Option<Col>,
    forecast: Option<Col>,
    previous: Option<Col>,
}

impl Economic {
    pub(crate) fn bind(h: &Header) -> Result<Self, Reason> {
        let forecast = h.optional("forecast");
        let estimate = h.optional("estimate");
        if let (Some(_), Some(_)) = (forecast, estimate) {
            return Err(Reason::DuplicateColumn(
                "forecast (also headed estimate)".to_owned(),
            ));
        }
        Ok(Self {
            date: h.required("date")?,
            time: h.optional("time"),
            country: h.optional("country"),
            event: h.required("event")?,
            importance: h.required("importance")?,
            actual: h.optional("actual"),
            forecast: forecast.or(estimate),
            previous: h.optional("previous"),
        })
    }

    pub(crate) fn parse(
        &mut self,
        c: Cells<'_>,
        out: &mut Vec<EconomicEvent>,
    ) -> Result<(), Reason> {
        let published = |col: Option<Col>| {
            col.map(|col| c.raw(col))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let time = match self.time {
            Some(col) if !c.raw(col).is_empty() => Some(release_time(c, col)?),
            _ => None,
        };
        out.push(EconomicEvent {
            date: c.date(self.date)?,
            time,
            country: match self.country {
                Some(col) => country(c, col)?,
                None => DEFAULT_COUNTRY.to_owned(),
            },
            event: c.text(self.event)?.to_owned(),
            importance: importance(c, self.importance)?,
            actual: published(self.actual),
            forecast: published(self.forecast),
            previous: published(self.previous),
        });
        Ok(())
    }
}

/// `HH:MM`, 24-hour (a one-digit hour accepted).
fn release_time(c: Cells<'_>, col: Col) -> Result<NaiveTime, Reason> {
    let text = c.raw(col);
    let parsed = text.split_once(':').and_then(|(h, m)| {
        let digits = |s: &str, max: usize| {
            (!s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        (m.len() == 2).then_some(())?;
        NaiveTime::from_hms_opt(digits(h, 2)?, digits(m, 2)?, 0)
    });
    parsed.ok_or_else(|| Reason::Invalid {
        column: col.name,
        reason: format!("{text:?} is not a time HH:MM"),
    })
}

/// Two ASCII letters, upper-cased.
fn country(c: Cells<'_>, col: Col) -> Result<String, Reason> {
    let text = c.text(col)?;
    if text.len() == 2 && text.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(text.to_ascii_uppercase())
    } else {
        Err(Reason::Invalid {
            column: col.name,
            reason: format!("{text:?} is not a two-letter country code (US, EU, …)"),
        })
    }
}

/// `high`, `medium` or `low`, any case.
fn importance(c: Cells<'_>, col: Col) -> Result<Importance, Reason> {
    let text = c.text(col)?;
    match text.to_ascii_lowercase().as_str() {
        "high" => Ok(Importance::High),
        "medium" => Ok(Importance::Medium),
        "low" => Ok(Importance::Low),
        _ => Err(Reason::Invalid {
            column: col.name,
            reason: format!("{text:?} is not high, medium or low"),
        }),
    }
}
