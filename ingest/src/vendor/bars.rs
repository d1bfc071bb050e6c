//! Daily bars: `date, open, high, low, close, volume` and optionally `adj_close` (also read as
//! `Adj Close`, `adjClose`); the symbol comes from the caller. Without `adj_close` (or with an
//! empty cell) the adjusted close is the close. Volume may be written as a float with no
//! fractional part (`1234.0`). The bar rules (prices > 0, low ≤ open, close ≤ high) are the
//! schema's.

use optics_schemas::DailyBar;

use super::error::Reason;
use super::fields::{Cells, Col, Header};

/// The bound columns of a bars file.
#[derive(Debug, Clone)]
pub(crate) struct Bars {
    symbol: String,
    date: Col,
    open: Col,
    high: Col,
    low: Col,
    close: Col,
    volume: Col,
    adj_close: Option<Col>,
}

impl Bars {
    pub(crate) fn bind(h: &Header, symbol: &str) -> Result<Self, Reason> {
        Ok(Self {
            symbol: symbol.to_owned(),
            date: h.required("date")?,
            open: h.required("open")?,
            high: h.required("high")?,
            low: h.required("low")?,
            close: h.required("close")?,
            volume: h.required("volume")?,
            adj_close: h.optional("adj_close"),
        })
    }

    pub(crate) fn parse(&mut self, c: Cells<'_>, out: &mut Vec<DailyBar>) -> Result<(), Reason> {
        let close = c.positive(self.close)?;
        let adj_close = match self.adj_close {
            Some(col) if !c.raw(col).is_empty() => c.positive(col)?,
            _ => close,
        };
        out.push(DailyBar {
            symbol: self.symbol.clone(),
            date: c.date(self.date)?,
            open: c.positive(self.open)?,
            high: c.positive(self.high)?,
            low: c.positive(self.low)?,
            close,
            volume: c.count(self.volume)?,
            adj_close,
        });
        Ok(())
    }
}
