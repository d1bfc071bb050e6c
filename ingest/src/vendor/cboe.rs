//! Cboe DataShop "Option EOD Summary" layout: one line per contract.
//!
//! | Cboe column | use |
//! | --- | --- |
//! | `underlying_symbol` | underlying, a leading `^` dropped (`^SPX` → `SPX`) |
//! | `root` | OCC root (`SPX` vs `SPXW`), which also decides settlement and exercise (see [`super::contracts`]) |
//! | `quote_date` | quote time = 16:00 New York that day |
//! | `expiration`, `strike`, `option_type` (`C`/`P`, any case) | the contract |
//! | `bid_eod` / `ask_eod`, `bid_size_eod` / `ask_size_eod` | bid / ask and sizes at the close |
//! | `underlying_bid_eod` / `underlying_ask_eod` | underlying price = their mid when both are > 0 … |
//! | `active_underlying_price_1545` (optional) | … else this |
//! | `trade_volume` | session volume |
//! | `close` | `last` when `trade_volume` > 0 and `close` > 0, else `None` |
//! | `open_interest` | open interest; Cboe reports the OCC figure published that morning, i.e. as of the previous trading day's close, so `oi_date` = the trading day before `quote_date` |
//!
//! Ignored: `open`, `high`, `low`, the 15:45 snapshot (`*_1545`, except the fallback above),
//! Cboe's IV and Greeks, `vwap`, `delivery_code`.

use optics_compute::time::{NyseCalendar, expiration_close_utc};
use optics_schemas::{OptionQuote, OptionType, occ_symbol};

use super::contracts::terms_for_root;
use super::error::Reason;
use super::fields::{Cells, Col, Header, check_bid_ask};

/// The bound columns of a Cboe EOD summary file.
#[derive(Debug, Clone)]
pub(crate) struct CboeEod {
    underlying_symbol: Col,
    quote_date: Col,
    root: Col,
    expiration: Col,
    strike: Col,
    option_type: Col,
    close: Col,
    trade_volume: Col,
    bid_size: Col,
    bid: Col,
    ask_size: Col,
    ask: Col,
    underlying_bid: Col,
    underlying_ask: Col,
    active_underlying: Option<Col>,
    open_interest: Col,
}

impl CboeEod {
    pub(crate) fn bind(h: &Header) -> Result<Self, Reason> {
        Ok(Self {
            underlying_symbol: h.required("underlying_symbol")?,
            quote_date: h.required("quote_date")?,
            root: h.required("root")?,
            expiration: h.required("expiration")?,
            strike: h.required("strike")?,
            option_type: h.required("option_type")?,
            close: h.required("close")?,
            trade_volume: h.required("trade_volume")?,
            bid_size: h.required("bid_size_eod")?,
            bid: h.required("bid_eod")?,
            ask_size: h.required("ask_size_eod")?,
            ask: h.required("ask_eod")?,
            underlying_bid: h.required("underlying_bid_eod")?,
            underlying_ask: h.required("underlying_ask_eod")?,
            active_underlying: h.optional("active_underlying_price_1545"),
            open_interest: h.required("open_interest")?,
        })
    }

    pub(crate) fn parse(&mut self, c: Cells<'_>, out: &mut Vec<OptionQuote>) -> Result<(), Reason> {
        let symbol = c.text(self.underlying_symbol)?;
        let symbol = symbol.strip_prefix('^').unwrap_or(symbol);
        if symbol.is_empty() {
            return Err(Reason::Empty(self.underlying_symbol.name));
        }
        let root = c.text(self.root)?;
        let quote_date = c.date(self.quote_date)?;
        let expiration = c.date(self.expiration)?;
        if expiration < quote_date {
            return Err(Reason::Invalid {
                column: self.expiration.name,
                reason: format!("expiration {expiration} is before the quote date {quote_date}"),
            });
        }
        let strike = c.positive(self.strike)?;
        let type_text = c.text(self.option_type)?;
        let option_type = match type_text {
            "C" | "c" => OptionType::Call,
            "P" | "p" => OptionType::Put,
            _ => {
                return Err(Reason::UnknownOptionType {
                    column: self.option_type.name,
                    value: type_text.to_owned(),
                });
            }
        };
        let bid = c.price(self.bid)?;
        let ask = c.price(self.ask)?;
        check_bid_ask(self.bid, bid, self.ask, ask)?;

        let ub = c.price(self.underlying_bid)?;
        let ua = c.price(self.underlying_ask)?;
        let underlying_price = if ub > 0.0 && ua > 0.0 {
            check_bid_ask(self.underlying_bid, ub, self.underlying_ask, ua)?;
            0.5 * (ub + ua)
        } else if let Some(active) = self.active_underlying {
            c.positive(active)?
        } else {
            return Err(Reason::Invalid {
                column: self.underlying_bid.name,
                reason: "no underlying price: underlying_bid_eod/underlying_ask_eod are not both > 0 and there is no active_underlying_price_1545 column".to_owned(),
            });
        };

        let terms = terms_for_root(symbol, root);
        let option_symbol =
            occ_symbol(&terms.root, expiration, option_type, strike).map_err(|e| {
                Reason::Invalid {
                    column: self.root.name,
                    reason: e.to_string(),
                }
            })?;
        let volume = c.count(self.trade_volume)?;
        let close = c.price(self.close)?;
        out.push(OptionQuote {
            underlying: terms.underlying,
            option_symbol,
            expiration,
            strike,
            option_type,
            settlement: terms.settlement,
            exercise_style: terms.exercise_style,
            bid,
            ask,
            bid_size: c.count_u32(self.bid_size)?,
            ask_size: c.count_u32(self.ask_size)?,
            last: (volume > 0 && close > 0.0).then_some(close),
            volume,
            open_interest: c.count(self.open_interest)?,
            oi_date: NyseCalendar.previous_trading_day(quote_date),
            quote_time: expiration_close_utc(quote_date),
            underlying_price,
        });
        Ok(())
    }
}
