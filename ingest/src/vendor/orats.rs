//! ORATS "strikes" end-of-day layout: one line per (ticker, expiration, strike), call and put
//! side by side; each line becomes two [`OptionQuote`]s (call first).
//!
//! | ORATS column | use |
//! | --- | --- |
//! | `ticker` | underlying (and option root, see [`super::contracts`]) |
//! | `tradeDate` | quote time = 16:00 New York that day; `oi_date` |
//! | `expirDate` | expiration (not before `tradeDate`) |
//! | `strike` | strike |
//! | `spotPrice` (optional), `stockPrice` | underlying price: `spotPrice` when present and > 0 (the cash level for indices), else `stockPrice` |
//! | `callBidPrice` / `callAskPrice`, `putBidPrice` / `putAskPrice` | bid / ask |
//! | `callBidSize` / `callAskSize`, `putBidSize` / `putAskSize` | sizes |
//! | `callVolume`, `putVolume` | session volume |
//! | `callOpenInterest`, `putOpenInterest` | open interest, as of `tradeDate` |
//!
//! ORATS's model columns (`callValue`, `smvVol`, the IVs and Greeks, `residualRate`, `extVol`,
//! …), `dte` and `quoteDate` are ignored: optics computes its own. There is no last-trade
//! price, so `last` is `None`.

use chrono::NaiveDate;
use optics_compute::time::expiration_close_utc;
use optics_schemas::{OptionQuote, OptionType, occ_symbol};

use super::contracts::{Terms, terms_for_ticker};
use super::error::Reason;
use super::fields::{Cells, Col, Header, check_bid_ask};

/// One side (call or put) of a line.
#[derive(Debug, Clone, Copy)]
struct Side {
    option_type: OptionType,
    bid: Col,
    ask: Col,
    bid_size: Col,
    ask_size: Col,
    volume: Col,
    open_interest: Col,
}

/// The bound columns of an ORATS strikes file.
#[derive(Debug, Clone)]
pub(crate) struct OratsStrikes {
    ticker: Col,
    trade_date: Col,
    expir_date: Col,
    strike: Col,
    stock_price: Col,
    spot_price: Option<Col>,
    sides: [Side; 2],
    /// The last (ticker, expiration) seen and its terms: files are grouped by them, so this
    /// saves a calendar lookup per line.
    cache: Option<(String, NaiveDate, Terms)>,
}

impl OratsStrikes {
    pub(crate) fn bind(h: &Header) -> Result<Self, Reason> {
        let side = |option_type, prefix: [&'static str; 6]| -> Result<Side, Reason> {
            Ok(Side {
                option_type,
                bid: h.required(prefix[0])?,
                ask: h.required(prefix[1])?,
                bid_size: h.required(prefix[2])?,
                ask_size: h.required(prefix[3])?,
                volume: h.required(prefix[4])?,
                open_interest: h.required(prefix[5])?,
            })
        };
        Ok(Self {
            ticker: h.required("ticker")?,
            trade_date: h.required("tradeDate")?,
            expir_date: h.required("expirDate")?,
            strike: h.required("strike")?,
            stock_price: h.required("stockPrice")?,
            spot_price: h.optional("spotPrice"),
            sides: [
                side(
                    OptionType::Call,
                    [
                        "callBidPrice",
                        "callAskPrice",
                        "callBidSize",
                        "callAskSize",
                        "callVolume",
                        "callOpenInterest",
                    ],
                )?,
                side(
                    OptionType::Put,
                    [
                        "putBidPrice",
                        "putAskPrice",
                        "putBidSize",
                        "putAskSize",
                        "putVolume",
                        "putOpenInterest",
                    ],
                )?,
            ],
            cache: None,
        })
    }

    pub(crate) fn parse(&mut self, c: Cells<'_>, out: &mut Vec<OptionQuote>) -> Result<(), Reason> {
        let ticker = c.text(self.ticker)?;
        let trade_date = c.date(self.trade_date)?;
        let expiration = c.date(self.expir_date)?;
        if expiration < trade_date {
            return Err(Reason::Invalid {
                column: self.expir_date.name,
                reason: format!("expiration {expiration} is before the trade date {trade_date}"),
            });
        }
        let strike = c.positive(self.strike)?;
        let underlying_price = match self.spot_price {
            Some(spot) if c.f64_opt(spot)?.is_some_and(|v| v > 0.0) => c.positive(spot)?,
            _ => c.positive(self.stock_price)?,
        };
        let quote_time = expiration_close_utc(trade_date);

        let terms = match &self.cache {
            Some((t, e, terms)) if t == ticker && *e == expiration => terms,
            _ => {
                let terms = terms_for_ticker(ticker, expiration);
                &self.cache.insert((ticker.to_owned(), expiration, terms)).2
            }
        };

        for side in &self.sides {
            let bid = c.price(side.bid)?;
            let ask = c.price(side.ask)?;
            check_bid_ask(side.bid, bid, side.ask, ask)?;
            let option_symbol = occ_symbol(&terms.root, expiration, side.option_type, strike)
                .map_err(|e| Reason::Invalid {
                    column: "strike",
                    reason: e.to_string(),
                })?;
            out.push(OptionQuote {
                underlying: terms.underlying.clone(),
                option_symbol,
                expiration,
                strike,
                option_type: side.option_type,
                settlement: terms.settlement,
                exercise_style: terms.exercise_style,
                bid,
                ask,
                bid_size: c.count_u32(side.bid_size)?,
                ask_size: c.count_u32(side.ask_size)?,
                last: None,
                volume: c.count(side.volume)?,
                open_interest: c.count(side.open_interest)?,
                oi_date: trade_date,
                quote_time,
                underlying_price,
            });
        }
        Ok(())
    }
}
