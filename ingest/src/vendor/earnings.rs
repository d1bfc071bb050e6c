//! Earnings reports: `symbol, date, timing, fiscal_quarter, eps_estimate, eps_actual,
//! revenue_estimate, revenue_actual` (the report date may also be headed `report_date`).
//! `timing` is `bmo` (before the open), `amc` (after the close) or `tbd`, in any case. An empty
//! `eps_actual`, `revenue_estimate` or `revenue_actual` is not reported (null); the last three
//! columns may be left out altogether. EPS in dollars per share, revenue in dollars. The schema
//! checks the rest (a well-formed symbol, finite EPS, revenue ≥ 0).

use optics_schemas::{EarningsEvent, EarningsTiming};

use super::error::Reason;
use super::fields::{Cells, Col, Header};

/// The bound columns of an earnings file.
#[derive(Debug, Clone)]
pub(crate) struct Earnings {
    symbol: Col,
    date: Col,
    timing: Col,
    fiscal_quarter: Col,
    eps_estimate: Col,
    eps_actual: Option<Col>,
    revenue_estimate: Option<Col>,
    revenue_actual: Option<Col>,
}

impl Earnings {
    pub(crate) fn bind(h: &Header) -> Result<Self, Reason> {
        Ok(Self {
            symbol: h.required("symbol")?,
            date: h
                .optional("date")
                .or_else(|| h.optional("report_date"))
                .ok_or(Reason::MissingColumn("date"))?,
            timing: h.required("timing")?,
            fiscal_quarter: h.required("fiscal_quarter")?,
            eps_estimate: h.required("eps_estimate")?,
            eps_actual: h.optional("eps_actual"),
            revenue_estimate: h.optional("revenue_estimate"),
            revenue_actual: h.optional("revenue_actual"),
        })
    }

    pub(crate) fn parse(
        &mut self,
        c: Cells<'_>,
        out: &mut Vec<EarningsEvent>,
    ) -> Result<(), Reason> {
        let optional = |col: Option<Col>| match col {
            Some(col) => c.f64_opt(col),
            None => Ok(None),
        };
        out.push(EarningsEvent {
            symbol: c.text(self.symbol)?.to_ascii_uppercase(),
            report_date: c.date(self.date)?,
            timing: timing(c, self.timing)?,
            fiscal_quarter: c.text(self.fiscal_quarter)?.to_owned(),
            eps_estimate: c.f64(self.eps_estimate)?,
            eps_actual: optional(self.eps_actual)?,
            revenue_estimate: optional(self.revenue_estimate)?,
            revenue_actual: optional(self.revenue_actual)?,
        });
        Ok(())
    }
}

/// `bmo`, `amc` or `tbd`, any case.
fn timing(c: Cells<'_>, col: Col) -> Result<EarningsTiming, Reason> {
    let text = c.text(col)?;
    match text.to_ascii_lowercase().as_str() {
        "bmo" => Ok(EarningsTiming::BeforeOpen),
        "amc" => Ok(EarningsTiming::AfterClose),
        "tbd" => Ok(EarningsTiming::Unknown),
        _ => Err(Reason::Invalid {
            column: col.name,
            reason: format!("{text:?} is not bmo, amc or tbd"),
        }),
    }
}
