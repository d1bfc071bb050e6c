//! Every column name of every inbound dataset, with its meaning and unit. Other crates import
//! these constants; no crate writes a column name as a string literal.
//!
//! Unit conventions used throughout:
//! - prices are **dollars** (per share for options: a premium of 1.25 is $125 per standard
//!   100-share contract);
//! - rates and ratios are **decimals** (0.05 is 5 %), unless a name says `pct`;
//! - sizes, volumes and open interest are **contracts** for options and **shares** for
//!   underlyings;
//! - dates are **ISO dates** stored as Arrow `Date32` (days since 1970-01-01), naming a trading
//!   day in New York;
//! - timestamps are **UTC, microseconds** since the Unix epoch (Arrow
//!   `Timestamp(Microsecond, "UTC")`).
//!
//! Each module also has `ALL`, the names in schema order.

/// Option quotes: one row per option contract per quote update (the `option_quotes` dataset).
pub mod option_quotes {
    /// Underlying symbol as the service names it (`SPX`, `SPY`, `AAPL`); the bus message key.
    /// Utf8, non-empty.
    pub const UNDERLYING: &str = "underlying";
    /// OCC option symbol, compact form (`SPXW261120C05000000`): root + `YYMMDD` + `C`/`P` +
    /// strike × 1000 as eight digits. Must agree with `expiration`, `option_type` and `strike`.
    pub const OPTION_SYMBOL: &str = "option_symbol";
    /// Expiration date (ISO date): the last trading day of the contract.
    pub const EXPIRATION: &str = "expiration";
    /// Strike price, dollars per share; positive, a multiple of 0.001.
    pub const STRIKE: &str = "strike";
    /// `C` (call) or `P` (put).
    pub const OPTION_TYPE: &str = "option_type";
    /// `AM` or `PM`: whether the settlement value is fixed at the open or the close of the
    /// expiration day.
    pub const SETTLEMENT: &str = "settlement";
    /// `AMERICAN` or `EUROPEAN` exercise.
    pub const EXERCISE_STYLE: &str = "exercise_style";
    /// Best bid, dollars per share; 0 when there is no bid. Finite, ≥ 0, ≤ `ask`.
    pub const BID: &str = "bid";
    /// Best ask (offer), dollars per share. Finite, ≥ 0.
    pub const ASK: &str = "ask";
    /// Size at the best bid, contracts.
    pub const BID_SIZE: &str = "bid_size";
    /// Size at the best ask, contracts.
    pub const ASK_SIZE: &str = "ask_size";
    /// Price of the last trade, dollars per share; null when the contract has not traded
    /// (ever, or in the data the source has).
    pub const LAST: &str = "last";
    /// Contracts traded in the current session up to `quote_time` (cumulative, resets each
    /// session).
    pub const VOLUME: &str = "volume";
    /// Open interest, contracts, as of the close of `oi_date`. OCC publishes it once a day,
    /// before the open, for the previous trade date.
    pub const OPEN_INTEREST: &str = "open_interest";
    /// The trade date (ISO date) whose end-of-day open interest `open_interest` is; never after
    /// the quote's date.
    pub const OI_DATE: &str = "oi_date";
    /// When the quote was observed: UTC timestamp, microseconds.
    pub const QUOTE_TIME: &str = "quote_time";
    /// Price of the underlying at `quote_time`, dollars: the traded price for stocks and ETFs,
    /// the cash index level for indices (not the forward; compute derives the forward).
    pub const UNDERLYING_PRICE: &str = "underlying_price";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        UNDERLYING,
        OPTION_SYMBOL,
        EXPIRATION,
        STRIKE,
        OPTION_TYPE,
        SETTLEMENT,
        EXERCISE_STYLE,
        BID,
        ASK,
        BID_SIZE,
        ASK_SIZE,
        LAST,
        VOLUME,
        OPEN_INTEREST,
        OI_DATE,
        QUOTE_TIME,
        UNDERLYING_PRICE,
    ];
}

/// Underlying ticks: one row per top-of-book or trade update of an underlying.
pub mod underlying_ticks {
    /// Underlying symbol (`SPX`, `SPY`, `AAPL`); the bus message key. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// When the tick was observed: UTC timestamp, microseconds.
    pub const TICK_TIME: &str = "tick_time";
    /// Best bid, dollars; null for cash indices, which have no book.
    pub const BID: &str = "bid";
    /// Best ask, dollars; null for cash indices.
    pub const ASK: &str = "ask";
    /// Last trade price (the index level for cash indices), dollars; positive.
    pub const LAST: &str = "last";
    /// Size of the last trade, shares (0 for cash indices).
    pub const LAST_SIZE: &str = "last_size";
    /// Shares traded in the current session up to `tick_time` (cumulative).
    pub const VOLUME: &str = "volume";

    /// The names in schema order.
    pub const ALL: &[&str] = &[SYMBOL, TICK_TIME, BID, ASK, LAST, LAST_SIZE, VOLUME];
}

/// Daily bars: one row per underlying per session.
pub mod daily_bars {
    /// Underlying symbol; the bus message key. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// The session (ISO date, New York).
    pub const DATE: &str = "date";
    /// Opening price, dollars, as traded (not adjusted).
    pub const OPEN: &str = "open";
    /// Highest price of the session, dollars, as traded.
    pub const HIGH: &str = "high";
    /// Lowest price of the session, dollars, as traded.
    pub const LOW: &str = "low";
    /// Closing price, dollars, as traded.
    pub const CLOSE: &str = "close";
    /// Shares traded in the session (0 for cash indices).
    pub const VOLUME: &str = "volume";
    /// Close adjusted for later splits and dividends, dollars: the series for returns and
    /// realized volatility.
    pub const ADJ_CLOSE: &str = "adj_close";

    /// The names in schema order.
    pub const ALL: &[&str] = &[SYMBOL, DATE, OPEN, HIGH, LOW, CLOSE, VOLUME, ADJ_CLOSE];
}

/// Earnings events: one row per company report (past with actuals, or scheduled).
pub mod earnings {
    /// Underlying symbol. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// Report date (ISO date, New York).
    pub const REPORT_DATE: &str = "report_date";
    /// `BMO` (before market open), `AMC` (after market close) or `TBD`.
    pub const TIMING: &str = "timing";
    /// Fiscal period label as the company names it, e.g. `FY2026 Q3`. Utf8, non-empty.
    pub const FISCAL_QUARTER: &str = "fiscal_quarter";
    /// Consensus earnings-per-share estimate, dollars per share (may be negative).
    pub const EPS_ESTIMATE: &str = "eps_estimate";
    /// Reported earnings per share, dollars per share; null until reported.
    pub const EPS_ACTUAL: &str = "eps_actual";
    /// Consensus revenue estimate for the quarter, dollars; null when none.
    pub const REVENUE_ESTIMATE: &str = "revenue_estimate";
    /// Reported revenue for the quarter, dollars; null until reported.
    pub const REVENUE_ACTUAL: &str = "revenue_actual";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        SYMBOL,
        REPORT_DATE,
        TIMING,
        FISCAL_QUARTER,
        EPS_ESTIMATE,
        EPS_ACTUAL,
        REVENUE_ESTIMATE,
        REVENUE_ACTUAL,
    ];
}

/// Dividends: one row per declared (or projected) cash dividend.
pub mod dividends {
    /// Underlying symbol. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// Ex-dividend date (ISO date): the first session the shares trade without the dividend.
    pub const EX_DATE: &str = "ex_date";
    /// Payment date (ISO date); on or after `ex_date`.
    pub const PAY_DATE: &str = "pay_date";
    /// Cash amount, dollars per share; positive.
    pub const AMOUNT: &str = "amount";
    /// `MONTHLY`, `QUARTERLY`, `SEMIANNUAL`, `ANNUAL`, `IRREGULAR` or `SPECIAL`.
    pub const FREQUENCY: &str = "frequency";

    /// The names in schema order.
    pub const ALL: &[&str] = &[SYMBOL, EX_DATE, PAY_DATE, AMOUNT, FREQUENCY];
}

/// Borrow rates: one row per underlying per date.
pub mod borrow_rates {
    /// Underlying symbol. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// The date the rate applies to (ISO date).
    pub const DATE: &str = "date";
    /// Annualised stock-borrow fee, decimal (0.0025 = 0.25 % a year); finite, ≥ 0.
    pub const BORROW_RATE: &str = "borrow_rate";
    /// Whether the stock is hard to borrow (locate needed, fee elevated).
    pub const IS_HARD_TO_BORROW: &str = "is_hard_to_borrow";

    /// The names in schema order.
    pub const ALL: &[&str] = &[SYMBOL, DATE, BORROW_RATE, IS_HARD_TO_BORROW];
}

/// Economic calendar: one row per scheduled macro release.
pub mod economic_calendar {
    /// Release date (ISO date, New York).
    pub const DATE: &str = "date";
    /// Release time of day, New York local time (Arrow `Time32(Second)`); null when the
    /// release has no fixed time ("all day", tentative).
    pub const TIME: &str = "time";
    /// Country or area, ISO 3166-1 alpha-2 upper case (`US`), or `EU` for the euro area.
    pub const COUNTRY: &str = "country";
    /// Release name as published (`Nonfarm Payrolls`, `CPI YoY`). Utf8, non-empty.
    pub const EVENT: &str = "event";
    /// `LOW`, `MEDIUM` or `HIGH`.
    pub const IMPORTANCE: &str = "importance";
    /// Reported value as published text with its unit (`3.2%`, `254K`); null before release.
    pub const ACTUAL: &str = "actual";
    /// Consensus forecast as published text; null when none.
    pub const FORECAST: &str = "forecast";
    /// Previous period's value as published text; null when none.
    pub const PREVIOUS: &str = "previous";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        DATE, TIME, COUNTRY, EVENT, IMPORTANCE, ACTUAL, FORECAST, PREVIOUS,
    ];
}

/// Company map: one row per underlying of the coverage universe.
pub mod companies {
    /// Underlying symbol. Utf8, non-empty.
    pub const SYMBOL: &str = "symbol";
    /// Company, fund or index name (`Apple Inc.`, `SPDR S&P 500 ETF Trust`). Utf8, non-empty.
    pub const NAME: &str = "name";
    /// `INDEX`, `ETF` or `STOCK`.
    pub const ASSET_CLASS: &str = "asset_class";
    /// GICS sector name (`Information Technology`); null for indices and broad ETFs.
    pub const SECTOR: &str = "sector";
    /// Symbol of the sector's SPDR ETF (`XLK`); null when `sector` is null.
    pub const SECTOR_ETF: &str = "sector_etf";
    /// Market capitalisation, dollars; null for indices and ETFs. Positive.
    pub const MARKET_CAP: &str = "market_cap";
    /// Beta of daily returns to SPY's, decimal ratio (SPY itself is 1).
    pub const BETA_SPY: &str = "beta_spy";
    /// Correlation of daily returns with SPY's, decimal in [-1, 1].
    pub const CORR_SPY: &str = "corr_spy";
    /// Whether options on it are priced on the forward (Black-76): true for cash indices (SPX,
    /// NDX, RUT, VIX), whose options are European and cash-settled.
    pub const PRICED_ON_FORWARD: &str = "priced_on_forward";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        SYMBOL,
        NAME,
        ASSET_CLASS,
        SECTOR,
        SECTOR_ETF,
        MARKET_CAP,
        BETA_SPY,
        CORR_SPY,
        PRICED_ON_FORWARD,
    ];
}
