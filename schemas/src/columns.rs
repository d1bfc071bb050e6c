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
    /// GICS industry within the sector (`Technology Hardware, Storage & Peripherals`); null
    /// for indices and funds. Added after the first release: a file written without it reads
    /// as all nulls.
    pub const INDUSTRY: &str = "industry";
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
        INDUSTRY,
    ];
}

/// The key columns the compute snapshots share, with one meaning everywhere: every snapshot
/// row starts with its underlying, session and instant, and rows of one contract, strike or
/// expiration name it with the same columns. A dataset whose key means something narrower
/// (an instant that is the session close, a column null on aggregate rows) says so in its
/// module documentation.
pub mod snapshot_keys {
    /// Underlying symbol (`SPX`, `SPY`, `AAPL`). Utf8, non-empty.
    pub const UNDERLYING: &str = "underlying";
    /// The session the row belongs to (ISO date, New York).
    pub const TRADE_DATE: &str = "trade_date";
    /// The instant the row describes: UTC timestamp, microseconds. Time to expiry runs from
    /// here.
    pub const AS_OF: &str = "as_of";
    /// Expiration date (ISO date).
    pub const EXPIRATION: &str = "expiration";
    /// `AM` or `PM` settlement of the series (see [`super::chain`]).
    pub const SETTLEMENT: &str = "settlement";
    /// Calendar days from `trade_date` to `expiration` (Int32); 0 on expiration day.
    pub const DTE: &str = "dte";
    /// Years from `as_of` to the close of `expiration` (16:00 New York, 13:00 on early-close
    /// days), calendar time / 365 (ACT/365 fixed). Zero or negative once that instant has
    /// passed.
    pub const YEARS_TO_EXPIRY: &str = "years_to_expiry";
    /// Strike price, dollars per share; positive.
    pub const STRIKE: &str = "strike";
}

/// Chain snapshots: one row per underlying × expiration × settlement × strike, the call and
/// the put of that strike side by side (the `chain` dataset that compute publishes).
///
/// The settlement is part of the grain because a cash index can list an AM-settled standard
/// series and a PM-settled weekly series on the same date (SPX and SPXW on the third Friday);
/// everywhere else each expiration has one settlement and the grain is expiration × strike.
/// The shared columns come first, then [`chain::CALL`]'s columns, then [`chain::PUT`]'s (the
/// same names with the prefix `call_` / `put_`). A side that is not listed at the strike is
/// null in every one of its columns.
pub mod chain {
    pub use super::snapshot_keys::{
        AS_OF, DTE, EXPIRATION, SETTLEMENT, STRIKE, TRADE_DATE, UNDERLYING, YEARS_TO_EXPIRY,
    };
    /// The underlying price the snapshot used, dollars: the traded price for stocks and ETFs,
    /// the cash index level for indices.
    pub const SPOT: &str = "spot";
    /// The forward price of the expiration, dollars: the price every contract of the
    /// expiration is valued on (see `forward_source`).
    pub const FORWARD: &str = "forward";
    /// How `forward` was obtained: `parity` (implied from call and put mids by put–call
    /// parity) or `carry` (spot × e^{(rate − dividend yield)·T} with the dividend yield the
    /// caller gave, when the quotes do not allow parity).
    pub const FORWARD_SOURCE: &str = "forward_source";
    /// Number of strikes whose call–put pair the parity forward combines (UInt32); 0 for a
    /// `carry` forward.
    pub const FORWARD_STRIKE_COUNT: &str = "forward_strike_count";
    /// Continuously compounded risk-free rate, decimal.
    pub const RATE: &str = "rate";
    /// The continuous yield q the forward implies, decimal: q = rate − ln(forward / spot) / T
    /// (dividends plus the stock-borrow cost, as the options price them). Equals the caller's
    /// dividend yield for a `carry` forward and for an expiration with T ≤ 0.
    pub const CARRY_YIELD: &str = "carry_yield";
    /// The pricing model: `bsm` (Black–Scholes–Merton on `spot` with yield `carry_yield`) or
    /// `black76` (Black-76 on `forward`, for cash indices; Greeks with respect to the
    /// forward). Both value a contract identically; they differ in what delta, gamma and rho
    /// hold fixed.
    pub const MODEL: &str = "model";

    macro_rules! side_columns {
        ($($field:ident: $doc:literal,)*) => {
            /// The column names of one side of the chain row: [`CALL`] (`call_…`) or [`PUT`]
            /// (`put_…`). Each field is a column name; its documentation gives the meaning and
            /// unit.
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct SideColumns {
                $(#[doc = $doc] pub $field: &'static str,)*
            }

            /// The call side's column names (`call_bid`, …).
            pub const CALL: SideColumns = SideColumns {
                $($field: concat!("call_", stringify!($field)),)*
            };

            /// The put side's column names (`put_bid`, …).
            pub const PUT: SideColumns = SideColumns {
                $($field: concat!("put_", stringify!($field)),)*
            };

            /// The names in schema order.
            pub const ALL: &[&str] = &[
                UNDERLYING,
                TRADE_DATE,
                AS_OF,
                EXPIRATION,
                SETTLEMENT,
                DTE,
                YEARS_TO_EXPIRY,
                STRIKE,
                SPOT,
                FORWARD,
                FORWARD_SOURCE,
                FORWARD_STRIKE_COUNT,
                RATE,
                CARRY_YIELD,
                MODEL,
                $(concat!("call_", stringify!($field)),)*
                $(concat!("put_", stringify!($field)),)*
            ];
        };
    }

    side_columns! {
        option_symbol: "OCC option symbol of the contract (compact form); null when the side is not listed.",
        quote_time: "When the quote used was observed: UTC timestamp, microseconds (the latest quote of the contract wins).",
        bid: "Best bid, dollars per share; 0 when there is no bid.",
        ask: "Best ask, dollars per share.",
        mid: "(bid + ask) / 2 at the quotes' precision (the exact half cent for quotes in cents), dollars per share; null unless the quote is two-sided (bid > 0 and ask ≥ bid).",
        last: "Price of the last trade, dollars per share; null when the contract has not traded.",
        bid_size: "Contracts at the bid (UInt32).",
        ask_size: "Contracts at the ask (UInt32).",
        volume: "Contracts traded in the session up to the quote (UInt64).",
        open_interest: "Open interest, contracts (UInt64), at the close of `oi_date`; null when the quote's open interest is dated after `trade_date` (never attached).",
        oi_date: "The trade date (ISO date) the open interest applies to; never after `trade_date`.",
        iv: "Implied volatility of the mid, decimal annualised (0.25 = 25 %); null when there is none (see `iv_status`).",
        iv_status: "Null when `iv` is solved (or the side is not listed); otherwise why there is no IV: `no_two_sided_quote`, `expired` (T ≤ 0), `below_intrinsic`, `no_time_value`, `above_maximum` or `invalid_input`.",
        delta: "∂V/∂S per share (S = spot for `bsm`, forward for `black76`); null without an IV, like every Greek.",
        gamma: "∂²V/∂S², delta per $1 of the underlying.",
        theta: "Value change per calendar day of time passing, dollars per share.",
        vega: "Value change per vol point (0.01 of volatility), dollars per share.",
        rho: "Value change per point (0.01) of the rate, dollars per share.",
        epsilon: "Value change per point (0.01) of the yield, dollars per share (0 for `black76`).",
        vanna: "Delta change per vol point.",
        charm: "Delta change per calendar day.",
        vomma: "Vega change per vol point.",
        veta: "Vega change per calendar day.",
        speed: "Gamma change per $1 of the underlying.",
        zomma: "Gamma change per vol point.",
        color: "Gamma change per calendar day.",
        ultima: "Vomma change per vol point.",
        extrinsic: "Time value of the mid, dollars per share: mid − e^{−rT}·max(±(forward − strike), 0); a shortfall within half the bid–ask spread (quote rounding) reads as 0, a larger one (the mid is below intrinsic) as null.",
    }
}

/// Dealer exposures by strike: one row per underlying × expiration × strike (the `exposures`
/// dataset that compute publishes), with the call, put and net exposure of every measure, and
/// the per-expiration / aggregate summary rows ([`exposures::summary`]).
///
/// Dealer convention: dealers are long calls and short puts, so call exposures carry the sign
/// of the Greek and put exposures the opposite sign (put GEX ≤ 0); `net_… = call_… + put_…`.
/// Each exposure is `±Greek × open interest × 100 × a dollar scale`; the scale of each measure
/// is on the field of [`exposures::MeasureColumns`] (the full table, with formulas, is in
/// `optics_compute::exposure`). The measures come in the same order as
/// `optics_compute::exposure::ExposureKind::ALL`.
pub mod exposures {
    pub use super::snapshot_keys::{AS_OF, DTE, EXPIRATION, STRIKE, TRADE_DATE, UNDERLYING};
    /// The spot the exposures are scaled with, dollars; positive.
    pub const SPOT: &str = "spot";
    /// Open interest of the call at this strike, contracts (UInt64); 0 when not listed.
    pub const CALL_OPEN_INTEREST: &str = "call_open_interest";
    /// Open interest of the put at this strike, contracts (UInt64); 0 when not listed.
    pub const PUT_OPEN_INTEREST: &str = "put_open_interest";

    macro_rules! exposure_measure_columns {
        ($($field:ident: $suffix:literal, $doc:literal;)*) => {
            /// The column names of one side's measures: [`CALL`] (`call_…`), [`PUT`]
            /// (`put_…`) or [`NET`] (`net_…`). Each field is a column name (Float64, finite);
            /// its documentation gives the unit.
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct MeasureColumns {
                $(#[doc = $doc] pub $field: &'static str,)*
            }

            /// Number of measures per side.
            pub const MEASURE_COUNT: usize = [$(stringify!($field)),*].len();

            /// The call side's measure columns.
            pub const CALL: MeasureColumns = MeasureColumns {
                $($field: concat!("call_", $suffix),)*
            };
            /// The put side's measure columns (dealer-signed: short puts).
            pub const PUT: MeasureColumns = MeasureColumns {
                $($field: concat!("put_", $suffix),)*
            };
            /// call + put.
            pub const NET: MeasureColumns = MeasureColumns {
                $($field: concat!("net_", $suffix),)*
            };

            impl MeasureColumns {
                /// The names in schema order.
                pub const fn names(&self) -> [&'static str; MEASURE_COUNT] {
                    [$(self.$field),*]
                }
            }

            /// The names in schema order.
            pub const ALL: &[&str] = &[
                UNDERLYING,
                TRADE_DATE,
                AS_OF,
                EXPIRATION,
                DTE,
                STRIKE,
                SPOT,
                CALL_OPEN_INTEREST,
                PUT_OPEN_INTEREST,
                $(concat!("call_", $suffix),)*
                $(concat!("put_", $suffix),)*
                $(concat!("net_", $suffix),)*
            ];

            /// Exposure summaries: one row per underlying × expiration, plus one aggregate row
            /// per underlying with `expiration` null (the `exposure_summary` dataset). The
            /// measure columns hold totals over the expiration (or over all of them), with the
            /// names and units of [`CALL`], [`PUT`] and [`NET`]; the levels are defined in
            /// `optics_compute::exposure`.
            pub mod summary {
                pub use super::{AS_OF, SPOT, TRADE_DATE, UNDERLYING};
                /// Expiration date (ISO date); null on the aggregate row.
                pub const EXPIRATION: &str = "expiration";
                /// Calendar days from `trade_date` to `expiration` (Int32); null on the
                /// aggregate row.
                pub const DTE: &str = "dte";
                /// Contracts whose exposures are included (UInt64).
                pub const CONTRACTS: &str = "contracts";
                /// Σ call open interest, contracts (UInt64).
                pub const CALL_OPEN_INTEREST: &str = "call_open_interest";
                /// Σ put open interest, contracts (UInt64).
                pub const PUT_OPEN_INTEREST: &str = "put_open_interest";
                /// The spot at which total GEX, re-priced over hypothetical spots (each
                /// contract at its own IV and time, forwards moved in proportion), crosses zero
                /// — the crossing nearest spot; dollars, null when it never does over the grid.
                pub const FLIP_LEVEL: &str = "flip_level";
                /// Whether there is no flip level (Boolean; true exactly when `flip_level` is
                /// null).
                pub const FLIP_DEGENERATE: &str = "flip_degenerate";
                /// Why there is no flip level: `no_exposure`, `always_positive` or
                /// `always_negative`; null when there is one.
                pub const FLIP_DEGENERACY: &str = "flip_degeneracy";
                /// The same search on delta-adjusted GEX (GEX × |spot delta|), dollars;
                /// nullable.
                pub const DELTA_ADJUSTED_FLIP_LEVEL: &str = "delta_adjusted_flip_level";
                /// Where cumulative net GEX by strike (summed from the lowest strike up) changes
                /// sign, interpolated between strikes, dollars; nullable.
                pub const GAMMA_FLIP: &str = "gamma_flip";
                /// Strike of the largest call GEX, dollars; nullable.
                pub const CALL_WALL: &str = "call_wall";
                /// Call GEX at `call_wall`, dollars per 1 % move; nullable.
                pub const CALL_WALL_GEX: &str = "call_wall_gex_usd_per_pct";
                /// Strike of the largest |put GEX|, dollars; nullable.
                pub const PUT_WALL: &str = "put_wall";
                /// Put GEX (≤ 0) at `put_wall`, dollars per 1 % move; nullable.
                pub const PUT_WALL_GEX: &str = "put_wall_gex_usd_per_pct";
                /// Strike of the largest |net GEX|, dollars; nullable.
                pub const KEY_GAMMA_STRIKE: &str = "key_gamma_strike";
                /// Net GEX at `key_gamma_strike`, dollars per 1 % move; nullable.
                pub const KEY_GAMMA_GEX: &str = "key_gamma_gex_usd_per_pct";
                /// Strike of the most positive net GEX, dollars; nullable.
                pub const MAX_GAMMA_STRIKE: &str = "max_gamma_strike";
                /// Strike of the most negative net GEX, dollars; nullable.
                pub const MIN_GAMMA_STRIKE: &str = "min_gamma_strike";
                /// The listed strike nearest `flip_level`, dollars; nullable.
                pub const VOL_TRIGGER: &str = "vol_trigger";
                /// Strike of the largest |net charm exposure|, dollars; nullable.
                pub const CHARM_PRESSURE_STRIKE: &str = "charm_pressure_strike";
                /// Strike at or above spot of the largest |net vanna exposure|, dollars;
                /// nullable.
                pub const VANNA_RESISTANCE_STRIKE: &str = "vanna_resistance_strike";
                /// Strike below spot of the largest |net vanna exposure|, dollars; nullable.
                pub const VANNA_SUPPORT_STRIKE: &str = "vanna_support_strike";
                /// The listed strike minimising the intrinsic value paid to holders at
                /// expiration over open interest, dollars; nullable.
                pub const MAX_PAIN_STRIKE: &str = "max_pain_strike";
                /// That payout at `max_pain_strike`, dollars; nullable.
                pub const MAX_PAIN_USD: &str = "max_pain_usd";
                /// Call GEX / |put GEX| (unitless); null when put GEX is 0.
                pub const GEX_RATIO: &str = "gex_ratio";
                /// `SUPPRESSED` (net GEX > 0), `AMPLIFIED` (< 0) or `NEUTRAL`.
                pub const VOLATILITY_REGIME: &str = "volatility_regime";
                /// `CALL_DOMINATED`, `PUT_DOMINATED` or `BALANCED` (from `gex_ratio`).
                pub const POSITIONING: &str = "positioning";
                /// `BULLISH`, `BEARISH` or `NEUTRAL`.
                pub const DIRECTIONAL_BIAS: &str = "directional_bias";

                /// The names in schema order.
                pub const ALL: &[&str] = &[
                    UNDERLYING,
                    TRADE_DATE,
                    AS_OF,
                    EXPIRATION,
                    DTE,
                    SPOT,
                    CONTRACTS,
                    CALL_OPEN_INTEREST,
                    PUT_OPEN_INTEREST,
                    $(concat!("call_", $suffix),)*
                    $(concat!("put_", $suffix),)*
                    $(concat!("net_", $suffix),)*
                    FLIP_LEVEL,
                    FLIP_DEGENERATE,
                    FLIP_DEGENERACY,
                    DELTA_ADJUSTED_FLIP_LEVEL,
                    GAMMA_FLIP,
                    CALL_WALL,
                    CALL_WALL_GEX,
                    PUT_WALL,
                    PUT_WALL_GEX,
                    KEY_GAMMA_STRIKE,
                    KEY_GAMMA_GEX,
                    MAX_GAMMA_STRIKE,
                    MIN_GAMMA_STRIKE,
                    VOL_TRIGGER,
                    CHARM_PRESSURE_STRIKE,
                    VANNA_RESISTANCE_STRIKE,
                    VANNA_SUPPORT_STRIKE,
                    MAX_PAIN_STRIKE,
                    MAX_PAIN_USD,
                    GEX_RATIO,
                    VOLATILITY_REGIME,
                    POSITIONING,
                    DIRECTIONAL_BIAS,
                ];
            }
        };
    }

    exposure_measure_columns! {
        delta: "delta_shares", "Dealer delta, shares of the underlying: Δ·OI·100 (× spot for dollars).";
        gamma: "gamma_usd_per_pct", "GEX, dollars per 1 % move: γ·OI·100·S²·0.01.";
        delta_adjusted_gamma: "delta_adjusted_gamma_usd_per_pct", "GEX × |spot delta|, dollars per 1 % move.";
        vanna: "vanna_shares_per_vol_pt", "Delta shares per vol point: vanna·OI·100.";
        charm: "charm_shares_per_day", "Delta shares per calendar day: charm·OI·100 (positive: dealers get longer delta as time passes).";
        vega: "vega_usd_per_vol_pt", "Dollars per vol point: vega·OI·100.";
        theta: "theta_usd_per_day", "Dollars per calendar day: θ·OI·100.";
        speed: "speed_usd_per_pct_per_pct", "Change of GEX for a 1 % rise of spot, dollars per 1 % move per 1 % move: speed·OI·100·S³·10⁻⁴.";
        color: "color_usd_per_pct_per_day", "Change of GEX per calendar day, dollars per 1 % move per day: color·OI·100·S²·0.01.";
        zomma: "zomma_usd_per_pct_per_vol_pt", "Change of GEX per vol point, dollars per 1 % move per vol point: zomma·OI·100·S²·0.01.";
        vomma: "vomma_usd_per_vol_pt_per_vol_pt", "Change of vega exposure per vol point, dollars per vol point per vol point: vomma·OI·100.";
        ultima: "ultima_usd_per_vol_pt_cubed", "Change of vomma exposure per vol point, dollars per vol point³: ultima·OI·100.";
    }
}

/// Options flow: one row per contract that traded in the session (the `flow` dataset that
/// compute publishes): cumulative session volume, its premium and open interest. Individual
/// prints are not labelled.
pub mod flow {
    pub use super::snapshot_keys::{AS_OF, DTE, EXPIRATION, STRIKE, TRADE_DATE, UNDERLYING};
    /// `C` (call) or `P` (put).
    pub const OPTION_TYPE: &str = "option_type";
    /// Best bid, dollars per share; nullable.
    pub const BID: &str = "bid";
    /// Best ask, dollars per share; nullable.
    pub const ASK: &str = "ask";
    /// Mid, dollars per share; null unless the quote is two-sided.
    pub const MID: &str = "mid";
    /// Per-share delta from the chain; null without an IV.
    pub const DELTA: &str = "delta";
    /// Contracts traded in the session so far (UInt64); > 0.
    pub const VOLUME: &str = "volume";
    /// Open interest, contracts (UInt64).
    pub const OPEN_INTEREST: &str = "open_interest";
    /// volume × price × 100, dollars; the price is the mid, or (bid + ask)/2 for a one-sided
    /// quote with both fields present; null without a price.
    pub const PREMIUM_USD: &str = "premium_usd";
    /// volume / open interest (unitless); null when open interest is 0.
    pub const VOLUME_OI_RATIO: &str = "volume_oi_ratio";
    /// The unusual-activity flag (Boolean): volume ≥ a multiple of open interest (default 2×)
    /// and ≥ a minimum volume (default 100 contracts); see `optics_compute::flow`.
    pub const IS_UNUSUAL: &str = "is_unusual";
    /// `ITM` or `OTM` against spot (at the money counts as `OTM`).
    pub const MONEYNESS: &str = "moneyness";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        UNDERLYING,
        TRADE_DATE,
        AS_OF,
        EXPIRATION,
        DTE,
        STRIKE,
        OPTION_TYPE,
        BID,
        ASK,
        MID,
        DELTA,
        VOLUME,
        OPEN_INTEREST,
        PREMIUM_USD,
        VOLUME_OI_RATIO,
        IS_UNUSUAL,
        MONEYNESS,
    ];
}

/// Flow aggregates: one row per strike (across expirations) and one per expiration of one
/// underlying's session flow (the `flow_aggregates` dataset compute publishes beside `flow`,
/// from the same cycle): each figure is a sum over the [`flow`] rows of that strike or
/// expiration. Rows are ordered by `grouping` (`expiration` rows first), then the key
/// ascending, one row per key. `as_of` is the instant of the `flow` rows summed.
pub mod flow_aggregates {
    pub use super::snapshot_keys::{AS_OF, TRADE_DATE, UNDERLYING};
    /// What the row aggregates: `strike` (one strike across expirations) or `expiration`.
    pub const GROUPING: &str = "grouping";
    /// The strike of a `strike` row, dollars per share; positive. Null on an `expiration` row.
    pub const STRIKE: &str = "strike";
    /// The expiration of an `expiration` row (ISO date). Null on a `strike` row.
    pub const EXPIRATION: &str = "expiration";
    /// Σ call volume of the session so far, contracts (UInt64).
    pub const CALL_VOLUME: &str = "call_volume";
    /// Σ put volume, contracts (UInt64).
    pub const PUT_VOLUME: &str = "put_volume";
    /// Σ volume, contracts (UInt64): call + put volume; > 0.
    pub const VOLUME: &str = "volume";
    /// Σ call premium, dollars; ≥ 0 (a contract without a price counts 0).
    pub const CALL_PREMIUM_USD: &str = "call_premium_usd";
    /// Σ put premium, dollars; ≥ 0.
    pub const PUT_PREMIUM_USD: &str = "put_premium_usd";
    /// Σ premium, dollars, added in the `flow` rows' order: call + put premium up to rounding
    /// (relative 1e-9).
    pub const PREMIUM_USD: &str = "premium_usd";
    /// Contracts of the group that traded (its `flow` rows; UInt64): at least 1, at most
    /// `volume`.
    pub const CONTRACTS: &str = "contracts";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        UNDERLYING,
        TRADE_DATE,
        AS_OF,
        GROUPING,
        STRIKE,
        EXPIRATION,
        CALL_VOLUME,
        PUT_VOLUME,
        VOLUME,
        CALL_PREMIUM_USD,
        PUT_PREMIUM_USD,
        PREMIUM_USD,
        CONTRACTS,
    ];
}

/// Daily volatility statistics: one row per underlying × session (the `vol_daily` dataset that
/// compute publishes once per session close). Every volatility is **annualised percentage
/// points** (25.0 = 25 %); every statistic column is nullable (null when the history or the
/// chain does not allow it). Formulas: `optics_compute::vol`. `as_of` is the session close.
pub mod vol_daily {
    pub use super::snapshot_keys::{AS_OF, TRADE_DATE, UNDERLYING};
    /// The session's closing price of the underlying, dollars; > 0.
    pub const CLOSE: &str = "close";
    /// Close-to-close realized vol over exactly 5 sessions (`hv_basis`: sample standard
    /// deviation of daily log returns × √252 × 100), percentage points; ≥ 0.
    pub const HV_5D_PCT: &str = "hv_5d_pct";
    /// The same over 10 sessions.
    pub const HV_10D_PCT: &str = "hv_10d_pct";
    /// The same over 20 sessions.
    pub const HV_20D_PCT: &str = "hv_20d_pct";
    /// The same over 30 sessions.
    pub const HV_30D_PCT: &str = "hv_30d_pct";
    /// The same over 60 sessions.
    pub const HV_60D_PCT: &str = "hv_60d_pct";
    /// The same over 90 sessions.
    pub const HV_90D_PCT: &str = "hv_90d_pct";
    /// The same over 120 sessions.
    pub const HV_120D_PCT: &str = "hv_120d_pct";
    /// The same over 180 sessions.
    pub const HV_180D_PCT: &str = "hv_180d_pct";
    /// The same over 252 sessions.
    pub const HV_252D_PCT: &str = "hv_252d_pct";
    /// 30-session HV with the earnings reaction sessions in the window dropped, percentage
    /// points; ≥ 0.
    pub const HV_30D_EX_EARNINGS_PCT: &str = "hv_30d_ex_earnings_pct";
    /// Whether an earnings reaction session falls in the 30-session window (Boolean).
    pub const EARNINGS_IN_HV_30D_WINDOW: &str = "earnings_in_hv_30d_window";
    /// ATM implied vol interpolated to 10 calendar days (linear in total variance across
    /// expirations, flat outside them; `iv_basis`), percentage points; > 0.
    pub const IV10D_PCT: &str = "iv10d_pct";
    /// The same at 20 days.
    pub const IV20D_PCT: &str = "iv20d_pct";
    /// The same at 30 days (`iv30d`, the VRP basis).
    pub const IV30D_PCT: &str = "iv30d_pct";
    /// The same at 60 days.
    pub const IV60D_PCT: &str = "iv60d_pct";
    /// The same at 90 days.
    pub const IV90D_PCT: &str = "iv90d_pct";
    /// The same at 180 days.
    pub const IV6M_PCT: &str = "iv6m_pct";
    /// The same at 365 days.
    pub const IV1YR_PCT: &str = "iv1yr_pct";
    /// The nearest expiration after the trade date with an ATM IV (Date32).
    pub const FRONT_EXPIRATION: &str = "front_expiration";
    /// ATM IV of `front_expiration` at its forward, percentage points; > 0.
    pub const FRONT_ATM_IV_PCT: &str = "front_atm_iv_pct";
    /// 25-delta skew at 30 days: put IV at |Δ| = 0.25 minus call IV at Δ = 0.25, each wing
    /// interpolated to 30 days in total variance, percentage points (positive: puts richer).
    pub const SKEW25_30D_PCT: &str = "skew25_30d_pct";
    /// Slope of the fitted smile at 30 days: dσ/dk at k = ln(K/F) = 0 of the implied vol in
    /// percentage points (raw SVI fits of the expirations around 30 days, linear in time
    /// between them; for a history without chains, the model surface's). Negative: puts richer.
    pub const SKEW_SLOPE_30D: &str = "skew_slope_30d";
    /// Curvature of the same smile: d²σ/dk² at k = 0, percentage points.
    pub const SMILE_CURVATURE_30D: &str = "smile_curvature_30d";
    /// Where `iv30d_pct` sits between its one-year (252-session) low (0) and high (100).
    pub const IV_RANK: &str = "iv_rank";
    /// Share of the one-year sessions with `iv30d_pct` strictly below today's, 0–100.
    pub const IV_PERCENTILE: &str = "iv_percentile";
    /// `iv30d_pct − hv_30d_pct`, percentage points.
    pub const VRP_30D_PCT: &str = "vrp_30d_pct";
    /// `iv30d_pct / hv_30d_pct` (unitless); ≥ 0.
    pub const VRP_RATIO: &str = "vrp_ratio";
    /// Beta of daily log returns to SPY over 252 sessions (unitless).
    pub const BETA_SPY_1Y: &str = "beta_spy_1y";
    /// Correlation of daily log returns with SPY over 252 sessions, −1 to 1.
    pub const CORRELATION_SPY_1Y: &str = "correlation_spy_1y";
    /// Close-to-close log return `ln(close / previous session's close)`, decimal (0.01 ≈ 1 %);
    /// null on an underlying's first session.
    pub const LOG_RETURN_1D: &str = "log_return_1d";
    /// Past earnings reports whose reaction session is in the closes up to the trade date with
    /// a known timing (before open: the report date's session; after close: the next one) and
    /// an opening price that session (UInt64). Every `earnings_*` column is null for an
    /// underlying without earnings reports (ETFs, indices).
    pub const EARNINGS_COUNT: &str = "earnings_count";
    /// Of those, gap ≥ 0 (UInt64). The gap of a report is `(open of the reaction session /
    /// previous close − 1) × 100`, percent.
    pub const EARNINGS_UP_COUNT: &str = "earnings_up_count";
    /// Gap < 0 (UInt64).
    pub const EARNINGS_DOWN_COUNT: &str = "earnings_down_count";
    /// EPS at or above the estimate (UInt64).
    pub const EARNINGS_BEAT_COUNT: &str = "earnings_beat_count";
    /// EPS below the estimate (UInt64).
    pub const EARNINGS_MISS_COUNT: &str = "earnings_miss_count";
    /// Mean signed gap, percent.
    pub const EARNINGS_AVG_MOVE_PCT: &str = "earnings_avg_move_pct";
    /// Mean absolute gap, percent; ≥ 0.
    pub const EARNINGS_AVG_ABS_MOVE_PCT: &str = "earnings_avg_abs_move_pct";
    /// Mean gap of the up reports, percent.
    pub const EARNINGS_AVG_UP_MOVE_PCT: &str = "earnings_avg_up_move_pct";
    /// Mean gap of the down reports, percent (negative).
    pub const EARNINGS_AVG_DOWN_MOVE_PCT: &str = "earnings_avg_down_move_pct";
    /// Mean signed gap of the beats, percent.
    pub const EARNINGS_AVG_BEAT_MOVE_PCT: &str = "earnings_avg_beat_move_pct";
    /// Mean signed gap of the misses, percent.
    pub const EARNINGS_AVG_MISS_MOVE_PCT: &str = "earnings_avg_miss_move_pct";
    /// Largest up gap, percent.
    pub const EARNINGS_MAX_UP_PCT: &str = "earnings_max_up_pct";
    /// Most negative gap, percent (signed).
    pub const EARNINGS_MAX_DOWN_PCT: &str = "earnings_max_down_pct";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        UNDERLYING,
        TRADE_DATE,
        AS_OF,
        CLOSE,
        HV_5D_PCT,
        HV_10D_PCT,
        HV_20D_PCT,
        HV_30D_PCT,
        HV_60D_PCT,
        HV_90D_PCT,
        HV_120D_PCT,
        HV_180D_PCT,
        HV_252D_PCT,
        HV_30D_EX_EARNINGS_PCT,
        EARNINGS_IN_HV_30D_WINDOW,
        IV10D_PCT,
        IV20D_PCT,
        IV30D_PCT,
        IV60D_PCT,
        IV90D_PCT,
        IV6M_PCT,
        IV1YR_PCT,
        FRONT_EXPIRATION,
        FRONT_ATM_IV_PCT,
        SKEW25_30D_PCT,
        SKEW_SLOPE_30D,
        SMILE_CURVATURE_30D,
        IV_RANK,
        IV_PERCENTILE,
        VRP_30D_PCT,
        VRP_RATIO,
        BETA_SPY_1Y,
        CORRELATION_SPY_1Y,
        LOG_RETURN_1D,
        EARNINGS_COUNT,
        EARNINGS_UP_COUNT,
        EARNINGS_DOWN_COUNT,
        EARNINGS_BEAT_COUNT,
        EARNINGS_MISS_COUNT,
        EARNINGS_AVG_MOVE_PCT,
        EARNINGS_AVG_ABS_MOVE_PCT,
        EARNINGS_AVG_UP_MOVE_PCT,
        EARNINGS_AVG_DOWN_MOVE_PCT,
        EARNINGS_AVG_BEAT_MOVE_PCT,
        EARNINGS_AVG_MISS_MOVE_PCT,
        EARNINGS_MAX_UP_PCT,
        EARNINGS_MAX_DOWN_PCT,
    ];
}

/// The at-the-money term structure at a session close: one row per underlying × expiration ×
/// settlement of the closing chain (the `vol_term` dataset, published with `vol_daily`, one
/// market-wide partition per trade date). Volatilities in annualised percentage points;
/// formulas: `optics_compute::vol::implied`. `as_of` is the session close; every expiration
/// is after the trade date, so `years_to_expiry` > 0.
pub mod vol_term {
    pub use super::snapshot_keys::{
        AS_OF, DTE, EXPIRATION, SETTLEMENT, TRADE_DATE, UNDERLYING, YEARS_TO_EXPIRY,
    };
    /// The expiration's forward, dollars; > 0.
    pub const FORWARD: &str = "forward";
    /// IV at the forward (log-moneyness interpolation in total variance between the strikes
    /// around it), percentage points; > 0; null when the forward is outside the strikes with
    /// an IV.
    pub const ATM_IV_PCT: &str = "atm_iv_pct";
    /// Call IV at Δ = 0.25, percentage points; > 0.
    pub const CALL25_IV_PCT: &str = "call25_iv_pct";
    /// Put IV at Δ = −0.25, percentage points; > 0.
    pub const PUT25_IV_PCT: &str = "put25_iv_pct";
    /// `put25_iv_pct − call25_iv_pct`, percentage points.
    pub const SKEW25_PCT: &str = "skew25_pct";

    /// The names in schema order.
    pub const ALL: &[&str] = &[
        UNDERLYING,
        TRADE_DATE,
        AS_OF,
        EXPIRATION,
        SETTLEMENT,
        DTE,
        YEARS_TO_EXPIRY,
        FORWARD,
        ATM_IV_PCT,
        CALL25_IV_PCT,
        PUT25_IV_PCT,
        SKEW25_PCT,
    ];
}
