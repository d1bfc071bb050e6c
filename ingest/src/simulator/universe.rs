//! The coverage universe: the underlyings the simulator makes a market in, with the static
//! parameters that drive it.
//!
//! **These are approximate parameters for a synthetic market, not live data.** Price levels,
//! market caps, vols, betas, correlations and dividend yields are round numbers of the right
//! order of magnitude for each name (roughly late-2025 levels); earnings months and listing
//! families follow each company's usual pattern. The simulator starts its paths from these
//! values and lets them evolve; nothing here is meant to be quoted as a fact about a company.
//!
//! The real universe ([`Universe::real`]) has 4 cash indices (SPX, NDX, RUT priced on the
//! forward; the VIX level, whose options are priced on the forward too), 4 index ETFs, the 11
//! SPDR sector ETFs, 4 other ETFs (SMH, GLD, TLT, EEM) and 64 single stocks in all 11 GICS
//! sectors. [`Universe::scaled`] is the `--universe N` knob: the real universe followed by
//! deterministic synthetic stocks `SY0001`, `SY0002`, … drawn from a seeded generator (six
//! characters at most, so that they are valid OCC option roots).

use std::collections::HashMap;

use super::listing::{DailyExpirations, ListingRules, StrikeStyle};
use super::rng::{SplitMix64, derive_seed};
use crate::IngestError;
pub use optics_schemas::{AssetClass, EarningsTiming, ExerciseStyle};

/// The 11 GICS sectors, each with its SPDR Select Sector ETF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sector {
    /// Information Technology (XLK).
    Technology,
    /// Communication Services (XLC).
    CommunicationServices,
    /// Consumer Discretionary (XLY).
    ConsumerDiscretionary,
    /// Consumer Staples (XLP).
    ConsumerStaples,
    /// Energy (XLE).
    Energy,
    /// Financials (XLF).
    Financials,
    /// Health Care (XLV).
    HealthCare,
    /// Industrials (XLI).
    Industrials,
    /// Materials (XLB).
    Materials,
    /// Real Estate (XLRE).
    RealEstate,
    /// Utilities (XLU).
    Utilities,
}

impl Sector {
    /// Every sector, in declaration order.
    pub const ALL: [Sector; 11] = [
        Self::Technology,
        Self::CommunicationServices,
        Self::ConsumerDiscretionary,
        Self::ConsumerStaples,
        Self::Energy,
        Self::Financials,
        Self::HealthCare,
        Self::Industrials,
        Self::Materials,
        Self::RealEstate,
        Self::Utilities,
    ];

    /// The GICS sector name ("Information Technology", …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Technology => "Information Technology",
            Self::CommunicationServices => "Communication Services",
            Self::ConsumerDiscretionary => "Consumer Discretionary",
            Self::ConsumerStaples => "Consumer Staples",
            Self::Energy => "Energy",
            Self::Financials => "Financials",
            Self::HealthCare => "Health Care",
            Self::Industrials => "Industrials",
            Self::Materials => "Materials",
            Self::RealEstate => "Real Estate",
            Self::Utilities => "Utilities",
        }
    }

    /// A representative GICS industry of the sector, for the synthetic stocks of
    /// [`Universe::scaled`] (which have no real business to classify).
    pub fn generic_industry(self) -> &'static str {
        match self {
            Self::Technology => "Software",
            Self::CommunicationServices => "Media",
            Self::ConsumerDiscretionary => "Specialty Retail",
            Self::ConsumerStaples => "Food Products",
            Self::Energy => "Oil, Gas & Consumable Fuels",
            Self::Financials => "Banks",
            Self::HealthCare => "Health Care Equipment & Supplies",
            Self::Industrials => "Machinery",
            Self::Materials => "Chemicals",
            Self::RealEstate => "Diversified REITs",
            Self::Utilities => "Multi-Utilities",
        }
    }

    /// The sector's SPDR Select Sector ETF symbol.
    pub fn etf(self) -> &'static str {
        match self {
            Self::Technology => "XLK",
            Self::CommunicationServices => "XLC",
            Self::ConsumerDiscretionary => "XLY",
            Self::ConsumerStaples => "XLP",
            Self::Energy => "XLE",
            Self::Financials => "XLF",
            Self::HealthCare => "XLV",
            Self::Industrials => "XLI",
            Self::Materials => "XLB",
            Self::RealEstate => "XLRE",
            Self::Utilities => "XLU",
        }
    }
}

/// A company's usual quarterly reporting pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EarningsCadence {
    /// Which month of each calendar quarter the reports fall in: 0 for January, April, July,
    /// October (most companies, a few weeks after the quarter closes); 1 for February, May,
    /// August, November; 2 for March, June, September, December (off-calendar fiscal years).
    pub month_offset: u8,
    /// The typical day of that month (1–28; the simulator jitters it and moves it to a
    /// trading day).
    pub typical_day: u8,
    /// Before the open or after the close.
    pub timing: EarningsTiming,
}

impl EarningsCadence {
    /// The four report months of a year, ascending (1–12).
    pub fn report_months(&self) -> [u32; 4] {
        let first = 1 + u32::from(self.month_offset % 3);
        [first, first + 3, first + 6, first + 9]
    }
}

/// One underlying of the universe and the static parameters the simulator uses for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Underlying {
    /// Ticker, upper case (`SPX`, `AAPL`, `SY0001`).
    pub symbol: String,
    /// Company or fund name.
    pub name: String,
    /// Index, ETF or stock.
    pub asset_class: AssetClass,
    /// GICS sector of a stock or a sector ETF; `None` for broad indices and non-equity ETFs.
    pub sector: Option<Sector>,
    /// GICS industry of a stock (`Software`, `Banks`); `None` for indices and funds, which GICS
    /// does not classify. Synthetic stocks carry their sector's
    /// [`generic industry`](Sector::generic_industry).
    pub industry: Option<String>,
    /// Approximate market capitalisation of a stock, in billions of US dollars.
    pub market_cap_usd_bn: Option<f64>,
    /// Approximate price level the simulator starts from, dollars (index points).
    pub start_price: f64,
    /// Base at-the-money implied vol level, decimal (0.25 = 25 %).
    pub base_iv: f64,
    /// Beta of daily returns to SPY.
    pub beta: f64,
    /// Correlation of daily returns to SPY, in [-1, 1].
    pub correlation: f64,
    /// Continuous dividend yield, decimal.
    pub dividend_yield: f64,
    /// Quarterly earnings pattern (stocks only).
    pub earnings: Option<EarningsCadence>,
    /// Which expirations it lists.
    pub listing: ListingRules,
    /// How its strike increments scale.
    pub strike_style: StrikeStyle,
    /// True when its options are priced on the forward (Black-76): SPX, NDX, RUT and VIX. The
    /// chain's price for these is the forward, not spot.
    pub priced_on_forward: bool,
    /// True for the generated names (`SY0001`, …) of [`Universe::scaled`].
    pub synthetic: bool,
}

impl Underlying {
    /// European for cash indices, American otherwise.
    pub fn exercise_style(&self) -> ExerciseStyle {
        match self.asset_class {
            AssetClass::Index => ExerciseStyle::European,
            AssetClass::Etf | AssetClass::Stock => ExerciseStyle::American,
        }
    }

    /// The SPDR sector ETF of a stock's sector (`None` for ETFs and indices).
    pub fn sector_etf(&self) -> Option<&'static str> {
        match self.asset_class {
            AssetClass::Stock => self.sector.map(Sector::etf),
            AssetClass::Etf | AssetClass::Index => None,
        }
    }

    /// The option root of an expiration family: the symbol for the standard series, and for
    /// the others the short-dated root when the underlying has one (`SPXW`, `NDXP`, `RUTW`,
    /// `VIXW`).
    pub fn option_root(&self, family: super::listing::ExpirationFamily) -> &str {
        match self.listing.short_dated_root {
            Some(root) if !family.is_standard() => root,
            _ => &self.symbol,
        }
    }

    /// Checks the parameters are usable: a non-empty upper-case alphanumeric symbol, positive
    /// finite price and vol, finite beta, correlation in [-1, 1], dividend yield in [0, 1).
    pub fn validate(&self) -> Result<(), IngestError> {
        let invalid = |reason: &str| {
            Err(IngestError::InvalidUnderlying {
                symbol: self.symbol.clone(),
                reason: reason.to_owned(),
            })
        };
        if self.symbol.is_empty()
            || !self
                .symbol
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            return invalid("the symbol must be upper-case ASCII letters and digits");
        }
        if !(self.start_price.is_finite() && self.start_price > 0.0) {
            return invalid("start_price must be positive");
        }
        if !(self.base_iv.is_finite() && self.base_iv > 0.0) {
            return invalid("base_iv must be positive");
        }
        if !self.beta.is_finite() {
            return invalid("beta must be finite");
        }
        if !(-1.0..=1.0).contains(&self.correlation) {
            return invalid("correlation must lie in [-1, 1]");
        }
        if !(0.0..1.0).contains(&self.dividend_yield) {
            return invalid("dividend_yield must lie in [0, 1)");
        }
        if let Some(industry) = &self.industry
            && (industry.is_empty() || industry.trim() != industry)
        {
            return invalid("industry must be non-empty without surrounding whitespace");
        }
        if let Some(cap) = self.market_cap_usd_bn
            && !(cap.is_finite() && cap > 0.0)
        {
            return invalid("market_cap_usd_bn must be positive");
        }
        if let Some(earnings) = self.earnings
            && !(earnings.month_offset < 3 && (1..=28).contains(&earnings.typical_day))
        {
            return invalid("earnings month_offset must be 0–2 and typical_day 1–28");
        }
        if self.listing.monthlies == 0 {
            return invalid("every underlying lists monthlies");
        }
        Ok(())
    }
}

/// The set of underlyings the simulator covers, in a fixed order, with lookup by symbol.
#[derive(Debug, Clone, PartialEq)]
pub struct Universe {
    underlyings: Vec<Underlying>,
    by_symbol: HashMap<String, usize>,
}

impl Universe {
    /// A universe of `underlyings` in the given order, after validating each one and checking
    /// the symbols are unique.
    pub fn new(underlyings: Vec<Underlying>) -> Result<Self, IngestError> {
        let mut by_symbol = HashMap::with_capacity(underlyings.len());
        for (index, underlying) in underlyings.iter().enumerate() {
            underlying.validate()?;
            if by_symbol.insert(underlying.symbol.clone(), index).is_some() {
                return Err(IngestError::DuplicateSymbol {
                    symbol: underlying.symbol.clone(),
                });
            }
        }
        Ok(Self {
            underlyings,
            by_symbol,
        })
    }

    /// The built-in coverage universe: indices, index ETFs, sector and other ETFs, then single
    /// stocks (see the [module documentation](self)).
    pub fn real() -> Self {
        Self::from_valid(real_underlyings())
    }

    /// The `--universe N` knob: exactly `n` underlyings. The real universe comes first (its
    /// first `n` names when `n` is smaller), then synthetic stocks `SY0001`, `SY0002`, … up
    /// to `n`. Synthetic name `i` depends only on `(seed, i)`, so a larger `n` extends a smaller
    /// one and the same `(n, seed)` always gives the same universe.
    pub fn scaled(n: usize, seed: u64) -> Self {
        let mut underlyings = real_underlyings();
        underlyings.truncate(n);
        let synthetic = n - underlyings.len();
        underlyings.extend((1..=synthetic).map(|i| synthetic_underlying(i, seed)));
        Self::from_valid(underlyings)
    }

    /// Builds a universe from underlyings known to be valid and unique (the built-in table
    /// and the generator, both covered by tests).
    fn from_valid(underlyings: Vec<Underlying>) -> Self {
        let by_symbol = underlyings
            .iter()
            .enumerate()
            .map(|(index, underlying)| (underlying.symbol.clone(), index))
            .collect();
        Self {
            underlyings,
            by_symbol,
        }
    }

    /// The underlying with this exact (upper-case) symbol.
    pub fn get(&self, symbol: &str) -> Option<&Underlying> {
        self.by_symbol.get(symbol).map(|&i| &self.underlyings[i])
    }

    /// True when `symbol` is covered.
    pub fn contains(&self, symbol: &str) -> bool {
        self.by_symbol.contains_key(symbol)
    }

    /// The position of `symbol` in the universe's order.
    pub fn index_of(&self, symbol: &str) -> Option<usize> {
        self.by_symbol.get(symbol).copied()
    }

    /// The underlyings, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Underlying> {
        self.underlyings.iter()
    }

    /// The underlyings as a slice, in order.
    pub fn as_slice(&self) -> &[Underlying] {
        &self.underlyings
    }

    /// The symbols, in order.
    pub fn symbols(&self) -> impl Iterator<Item = &str> {
        self.underlyings.iter().map(|u| u.symbol.as_str())
    }

    /// How many underlyings.
    pub fn len(&self) -> usize {
        self.underlyings.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.underlyings.is_empty()
    }
}

impl<'a> IntoIterator for &'a Universe {
    type Item = &'a Underlying;
    type IntoIter = std::slice::Iter<'a, Underlying>;

    fn into_iter(self) -> Self::IntoIter {
        self.underlyings.iter()
    }
}

// ---------------------------------------------------------------------------------------------
// The built-in table
// ---------------------------------------------------------------------------------------------

use EarningsTiming::{AfterClose as Amc, BeforeOpen as Bmo};
use Sector::{
    CommunicationServices as Comm, ConsumerDiscretionary as Disc, ConsumerStaples as Stap,
    Energy as Ener, Financials as Fin, HealthCare as Hlth, Industrials as Indu, Materials as Matl,
    RealEstate as Rlst, Technology as Tech, Utilities as Util,
};

/// Weeklies or monthlies only, for a stock row.
#[derive(Debug, Clone, Copy)]
enum Listed {
    Weeklies,
    Monthlies,
}

/// (symbol, name, sector, market cap $bn, price, base IV, beta, correlation to SPY, dividend
/// yield, (earnings month offset, typical day, timing), listed families, GICS industry).
type StockRow = (
    &'static str,
    &'static str,
    Sector,
    f64,
    f64,
    f64,
    f64,
    f64,
    f64,
    (u8, u8, EarningsTiming),
    Listed,
    &'static str,
);

/// (symbol, name, sector, price, base IV, beta, correlation to SPY, dividend yield).
type FundRow = (
    &'static str,
    &'static str,
    Option<Sector>,
    f64,
    f64,
    f64,
    f64,
    f64,
);

/// Index ETFs; all list weeklies, quarterlies and LEAPS (dailies below).
#[rustfmt::skip]
const INDEX_ETFS: &[FundRow] = &[
    ("SPY", "SPDR S&P 500 ETF Trust",                      None, 680.0, 0.15, 1.00, 1.00, 0.012),
    ("QQQ", "Invesco QQQ Trust",                           None, 610.0, 0.19, 1.20, 0.93, 0.005),
    ("IWM", "iShares Russell 2000 ETF",                    None, 245.0, 0.22, 1.15, 0.82, 0.011),
    ("DIA", "SPDR Dow Jones Industrial Average ETF Trust", None, 470.0, 0.14, 0.90, 0.94, 0.015),
];

/// Sector and other ETFs: weeklies, monthlies, LEAPS.
#[rustfmt::skip]
const OTHER_ETFS: &[FundRow] = &[
    ("XLK",  "Technology Select Sector SPDR Fund",             Some(Tech), 285.0, 0.22, 1.20, 0.90, 0.006),
    ("XLF",  "Financial Select Sector SPDR Fund",              Some(Fin),   53.0, 0.18, 1.05, 0.80, 0.014),
    ("XLE",  "Energy Select Sector SPDR Fund",                 Some(Ener),  90.0, 0.24, 0.85, 0.45, 0.032),
    ("XLV",  "Health Care Select Sector SPDR Fund",            Some(Hlth), 140.0, 0.16, 0.65, 0.60, 0.016),
    ("XLY",  "Consumer Discretionary Select Sector SPDR Fund", Some(Disc), 235.0, 0.21, 1.15, 0.85, 0.008),
    ("XLP",  "Consumer Staples Select Sector SPDR Fund",       Some(Stap),  78.0, 0.13, 0.50, 0.45, 0.026),
    ("XLI",  "Industrial Select Sector SPDR Fund",             Some(Indu), 152.0, 0.17, 1.00, 0.85, 0.013),
    ("XLU",  "Utilities Select Sector SPDR Fund",              Some(Util),  85.0, 0.17, 0.55, 0.45, 0.028),
    ("XLB",  "Materials Select Sector SPDR Fund",              Some(Matl),  88.0, 0.19, 0.95, 0.72, 0.019),
    ("XLRE", "Real Estate Select Sector SPDR Fund",            Some(Rlst),  41.0, 0.19, 0.85, 0.65, 0.033),
    ("XLC",  "Communication Services Select Sector SPDR Fund", Some(Comm), 112.0, 0.19, 1.05, 0.78, 0.009),
    ("SMH",  "VanEck Semiconductor ETF",                       Some(Tech), 340.0, 0.32, 1.60, 0.75, 0.004),
    ("GLD",  "SPDR Gold Shares",                               None,       380.0, 0.18, 0.10, 0.10, 0.000),
    ("TLT",  "iShares 20+ Year Treasury Bond ETF",             None,        90.0, 0.14, -0.10, -0.15, 0.043),
    ("EEM",  "iShares MSCI Emerging Markets ETF",              None,        53.0, 0.19, 0.75, 0.65, 0.022),
];

/// Single stocks. Earnings offset 0 = Jan/Apr/Jul/Oct, 1 = Feb/May/Aug/Nov, 2 = Mar/Jun/Sep/Dec.
#[rustfmt::skip]
const STOCKS: &[StockRow] = &[
    // Information Technology
    ("AAPL", "Apple Inc.",                        Tech, 3800.0,  255.0, 0.26, 1.15, 0.72, 0.004, (0, 28, Amc), Listed::Weeklies, "Technology Hardware, Storage & Peripherals"),
    ("MSFT", "Microsoft Corporation",             Tech, 3800.0,  510.0, 0.24, 1.05, 0.74, 0.007, (0, 27, Amc), Listed::Weeklies, "Software"),
    ("NVDA", "NVIDIA Corporation",                Tech, 4500.0,  185.0, 0.45, 1.75, 0.70, 0.000, (1, 25, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("AVGO", "Broadcom Inc.",                     Tech, 1600.0,  340.0, 0.45, 1.45, 0.64, 0.007, (2, 11, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("ORCL", "Oracle Corporation",                Tech,  800.0,  280.0, 0.45, 1.30, 0.55, 0.007, (2, 10, Amc), Listed::Weeklies, "Software"),
    ("CRM",  "Salesforce, Inc.",                  Tech,  240.0,  250.0, 0.32, 1.15, 0.55, 0.007, (1, 27, Amc), Listed::Weeklies, "Software"),
    ("ADBE", "Adobe Inc.",                        Tech,  150.0,  350.0, 0.32, 1.15, 0.55, 0.000, (2, 12, Amc), Listed::Weeklies, "Software"),
    ("AMD",  "Advanced Micro Devices, Inc.",      Tech,  380.0,  235.0, 0.52, 1.75, 0.60, 0.000, (1,  4, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("INTC", "Intel Corporation",                 Tech,  170.0,   37.0, 0.50, 1.20, 0.50, 0.000, (0, 24, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("CSCO", "Cisco Systems, Inc.",               Tech,  280.0,   70.0, 0.22, 0.90, 0.60, 0.023, (1, 13, Amc), Listed::Weeklies, "Communications Equipment"),
    ("QCOM", "QUALCOMM Incorporated",             Tech,  180.0,  165.0, 0.35, 1.30, 0.60, 0.021, (1,  5, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("IBM",  "International Business Machines Corporation", Tech, 270.0, 290.0, 0.26, 0.75, 0.50, 0.023, (0, 22, Amc), Listed::Weeklies, "IT Services"),
    ("MU",   "Micron Technology, Inc.",           Tech,  220.0,  200.0, 0.55, 1.50, 0.55, 0.002, (2, 20, Amc), Listed::Weeklies, "Semiconductors & Semiconductor Equipment"),
    ("PLTR", "Palantir Technologies Inc.",        Tech,  430.0,  180.0, 0.62, 2.00, 0.55, 0.000, (1,  3, Amc), Listed::Weeklies, "Software"),
    // Communication Services
    ("GOOGL", "Alphabet Inc. (Class A)",          Comm, 3000.0,  250.0, 0.30, 1.05, 0.62, 0.003, (0, 28, Amc), Listed::Weeklies, "Interactive Media & Services"),
    ("META", "Meta Platforms, Inc.",              Comm, 1800.0,  720.0, 0.35, 1.25, 0.62, 0.003, (0, 28, Amc), Listed::Weeklies, "Interactive Media & Services"),
    ("NFLX", "Netflix, Inc.",                     Comm,  470.0,  110.0, 0.35, 1.10, 0.50, 0.000, (0, 18, Amc), Listed::Weeklies, "Entertainment"),
    ("DIS",  "The Walt Disney Company",           Comm,  200.0,  112.0, 0.26, 1.10, 0.55, 0.009, (1,  7, Amc), Listed::Weeklies, "Entertainment"),
    ("T",    "AT&T Inc.",                         Comm,  190.0,   27.0, 0.20, 0.55, 0.35, 0.041, (0, 23, Bmo), Listed::Weeklies, "Diversified Telecommunication Services"),
    ("VZ",   "Verizon Communications Inc.",       Comm,  175.0,   41.0, 0.20, 0.45, 0.30, 0.066, (0, 22, Bmo), Listed::Weeklies, "Diversified Telecommunication Services"),
    // Consumer Discretionary
    ("AMZN", "Amazon.com, Inc.",                  Disc, 2400.0,  225.0, 0.32, 1.25, 0.65, 0.000, (0, 28, Amc), Listed::Weeklies, "Broadline Retail"),
    ("TSLA", "Tesla, Inc.",                       Disc, 1400.0,  430.0, 0.60, 2.00, 0.55, 0.000, (0, 22, Amc), Listed::Weeklies, "Automobiles"),
    ("HD",   "The Home Depot, Inc.",              Disc,  380.0,  380.0, 0.24, 1.00, 0.60, 0.024, (1, 18, Bmo), Listed::Weeklies, "Specialty Retail"),
    ("MCD",  "McDonald's Corporation",            Disc,  215.0,  300.0, 0.18, 0.65, 0.45, 0.024, (0, 28, Bmo), Listed::Weeklies, "Hotels, Restaurants & Leisure"),
    ("NKE",  "NIKE, Inc.",                        Disc,   95.0,   65.0, 0.38, 1.10, 0.45, 0.025, (2, 20, Amc), Listed::Weeklies, "Textiles, Apparel & Luxury Goods"),
    ("SBUX", "Starbucks Corporation",             Disc,  100.0,   88.0, 0.32, 1.00, 0.50, 0.028, (0, 28, Amc), Listed::Weeklies, "Hotels, Restaurants & Leisure"),
    // Consumer Staples
    ("WMT",  "Walmart Inc.",                      Stap,  800.0,  100.0, 0.22, 0.55, 0.40, 0.009, (1, 19, Bmo), Listed::Weeklies, "Consumer Staples Distribution & Retail"),
    ("PG",   "The Procter & Gamble Company",      Stap,  360.0,  150.0, 0.17, 0.45, 0.35, 0.028, (0, 22, Bmo), Listed::Weeklies, "Household Products"),
    ("KO",   "The Coca-Cola Company",             Stap,  300.0,   70.0, 0.16, 0.50, 0.35, 0.029, (0, 22, Bmo), Listed::Weeklies, "Beverages"),
    ("PEP",  "PepsiCo, Inc.",                     Stap,  200.0,  145.0, 0.19, 0.50, 0.35, 0.039, (0, 10, Bmo), Listed::Weeklies, "Beverages"),
    ("COST", "Costco Wholesale Corporation",      Stap,  410.0,  920.0, 0.22, 0.80, 0.50, 0.005, (2, 12, Amc), Listed::Weeklies, "Consumer Staples Distribution & Retail"),
    // Energy
    ("XOM",  "Exxon Mobil Corporation",           Ener,  480.0,  115.0, 0.23, 0.85, 0.40, 0.035, (0, 28, Bmo), Listed::Weeklies, "Oil, Gas & Consumable Fuels"),
    ("CVX",  "Chevron Corporation",               Ener,  310.0,  155.0, 0.24, 0.90, 0.40, 0.044, (0, 28, Bmo), Listed::Weeklies, "Oil, Gas & Consumable Fuels"),
    ("COP",  "ConocoPhillips",                    Ener,  115.0,   90.0, 0.30, 1.00, 0.40, 0.035, (1,  5, Bmo), Listed::Weeklies, "Oil, Gas & Consumable Fuels"),
    ("SLB",  "SLB N.V.",                          Ener,   50.0,   35.0, 0.35, 1.15, 0.40, 0.032, (0, 20, Bmo), Listed::Weeklies, "Energy Equipment & Services"),
    // Financials
    ("JPM",  "JPMorgan Chase & Co.",              Fin,   830.0,  300.0, 0.22, 1.05, 0.60, 0.019, (0, 14, Bmo), Listed::Weeklies, "Banks"),
    ("BAC",  "Bank of America Corporation",       Fin,   380.0,   50.0, 0.26, 1.25, 0.60, 0.022, (0, 15, Bmo), Listed::Weeklies, "Banks"),
    ("WFC",  "Wells Fargo & Company",             Fin,   260.0,   82.0, 0.27, 1.15, 0.58, 0.021, (0, 14, Bmo), Listed::Weeklies, "Banks"),
    ("GS",   "The Goldman Sachs Group, Inc.",     Fin,   240.0,  780.0, 0.28, 1.35, 0.62, 0.020, (0, 15, Bmo), Listed::Weeklies, "Capital Markets"),
    ("MS",   "Morgan Stanley",                    Fin,   250.0,  155.0, 0.27, 1.35, 0.62, 0.025, (0, 16, Bmo), Listed::Weeklies, "Capital Markets"),
    ("V",    "Visa Inc.",                         Fin,   660.0,  340.0, 0.20, 0.90, 0.60, 0.007, (0, 28, Amc), Listed::Weeklies, "Financial Services"),
    ("MA",   "Mastercard Incorporated",           Fin,   520.0,  570.0, 0.21, 1.00, 0.62, 0.005, (0, 28, Bmo), Listed::Weeklies, "Financial Services"),
    ("COIN", "Coinbase Global, Inc.",             Fin,    85.0,  330.0, 0.65, 2.30, 0.50, 0.000, (1,  1, Amc), Listed::Weeklies, "Capital Markets"),
    // Health Care
    ("UNH",  "UnitedHealth Group Incorporated",   Hlth,  310.0,  340.0, 0.35, 0.60, 0.30, 0.026, (0, 15, Bmo), Listed::Weeklies, "Health Care Providers & Services"),
    ("LLY",  "Eli Lilly and Company",             Hlth,  900.0, 1000.0, 0.32, 0.50, 0.30, 0.006, (1,  6, Bmo), Listed::Weeklies, "Pharmaceuticals"),
    ("JNJ",  "Johnson & Johnson",                 Hlth,  470.0,  195.0, 0.18, 0.45, 0.30, 0.027, (0, 14, Bmo), Listed::Weeklies, "Pharmaceuticals"),
    ("MRK",  "Merck & Co., Inc.",                 Hlth,  230.0,   90.0, 0.25, 0.45, 0.30, 0.036, (0, 28, Bmo), Listed::Weeklies, "Pharmaceuticals"),
    ("PFE",  "Pfizer Inc.",                       Hlth,  145.0,   25.0, 0.24, 0.55, 0.30, 0.068, (0, 28, Bmo), Listed::Weeklies, "Pharmaceuticals"),
    ("ABBV", "AbbVie Inc.",                       Hlth,  400.0,  225.0, 0.25, 0.55, 0.35, 0.030, (0, 28, Bmo), Listed::Weeklies, "Biotechnology"),
    // Industrials
    ("CAT",  "Caterpillar Inc.",                  Indu,  270.0,  570.0, 0.30, 1.15, 0.55, 0.011, (0, 28, Bmo), Listed::Weeklies, "Machinery"),
    ("BA",   "The Boeing Company",                Indu,  160.0,  210.0, 0.35, 1.30, 0.50, 0.000, (0, 27, Bmo), Listed::Weeklies, "Aerospace & Defense"),
    ("GE",   "GE Aerospace",                      Indu,  320.0,  300.0, 0.30, 1.20, 0.55, 0.005, (0, 21, Bmo), Listed::Weeklies, "Aerospace & Defense"),
    ("HON",  "Honeywell International Inc.",      Indu,  130.0,  200.0, 0.22, 0.95, 0.55, 0.023, (0, 23, Bmo), Listed::Weeklies, "Industrial Conglomerates"),
    ("UPS",  "United Parcel Service, Inc.",       Indu,   80.0,   95.0, 0.30, 1.00, 0.45, 0.069, (0, 28, Bmo), Listed::Weeklies, "Air Freight & Logistics"),
    ("RTX",  "RTX Corporation",                   Indu,  230.0,  175.0, 0.24, 0.70, 0.40, 0.016, (0, 21, Bmo), Listed::Weeklies, "Aerospace & Defense"),
    // Materials
    ("LIN",  "Linde plc",                         Matl,  210.0,  440.0, 0.19, 0.90, 0.55, 0.013, (1,  1, Bmo), Listed::Monthlies, "Chemicals"),
    ("FCX",  "Freeport-McMoRan Inc.",             Matl,   60.0,   42.0, 0.42, 1.50, 0.50, 0.014, (0, 22, Bmo), Listed::Weeklies, "Metals & Mining"),
    ("NEM",  "Newmont Corporation",               Matl,   95.0,   85.0, 0.40, 0.70, 0.20, 0.012, (0, 23, Amc), Listed::Weeklies, "Metals & Mining"),
    // Real Estate
    ("PLD",  "Prologis, Inc.",                    Rlst,  110.0,  120.0, 0.25, 1.05, 0.50, 0.033, (0, 16, Bmo), Listed::Monthlies, "Industrial REITs"),
    ("AMT",  "American Tower Corporation",        Rlst,   85.0,  180.0, 0.24, 0.80, 0.40, 0.037, (0, 28, Bmo), Listed::Monthlies, "Specialized REITs"),
    ("EQIX", "Equinix, Inc.",                     Rlst,   75.0,  780.0, 0.25, 0.90, 0.45, 0.024, (1, 12, Amc), Listed::Monthlies, "Specialized REITs"),
    // Utilities
    ("NEE",  "NextEra Energy, Inc.",              Util,  170.0,   82.0, 0.24, 0.65, 0.35, 0.028, (0, 24, Bmo), Listed::Weeklies, "Electric Utilities"),
    ("DUK",  "Duke Energy Corporation",           Util,   95.0,  122.0, 0.17, 0.45, 0.30, 0.035, (1,  6, Bmo), Listed::Monthlies, "Electric Utilities"),
    ("SO",   "The Southern Company",              Util,  100.0,   92.0, 0.17, 0.45, 0.30, 0.032, (0, 28, Bmo), Listed::Monthlies, "Electric Utilities"),
];

/// The four cash indices.
fn indices() -> [Underlying; 4] {
    let index = |symbol: &str,
                 name: &str,
                 price: f64,
                 iv: f64,
                 (beta, correlation, dividend_yield): (f64, f64, f64),
                 listing: ListingRules,
                 strike_style: StrikeStyle| Underlying {
        symbol: symbol.to_owned(),
        name: name.to_owned(),
        asset_class: AssetClass::Index,
        sector: None,
        industry: None,
        market_cap_usd_bn: None,
        start_price: price,
        base_iv: iv,
        beta,
        correlation,
        dividend_yield,
        earnings: None,
        listing,
        strike_style,
        priced_on_forward: true,
        synthetic: false,
    };
    [
        index(
            "SPX",
            "S&P 500 Index",
            6_800.0,
            0.16,
            (1.0, 0.99, 0.012),
            ListingRules::cash_index(DailyExpirations::EveryTradingDay, "SPXW"),
            StrikeStyle::Index,
        ),
        index(
            "NDX",
            "Nasdaq-100 Index",
            25_000.0,
            0.20,
            (1.2, 0.93, 0.006),
            ListingRules::cash_index(DailyExpirations::MondayWednesday, "NDXP"),
            StrikeStyle::Index,
        ),
        index(
            "RUT",
            "Russell 2000 Index",
            2_450.0,
            0.22,
            (1.15, 0.82, 0.012),
            ListingRules::cash_index(DailyExpirations::MondayWednesday, "RUTW"),
            StrikeStyle::Index,
        ),
        // The VIX level moves against the market: a beta of about −4 in return terms, and
        // options priced on the VIX future of their expiration (the forward), with a high vol of
        // vol.
        index(
            "VIX",
            "Cboe Volatility Index",
            17.0,
            0.85,
            (-4.0, -0.75, 0.0),
            ListingRules::vix(),
            StrikeStyle::Volatility,
        ),
    ]
}

fn fund(row: &FundRow, listing: ListingRules) -> Underlying {
    let &(symbol, name, sector, price, iv, beta, correlation, dividend_yield) = row;
    Underlying {
        symbol: symbol.to_owned(),
        name: name.to_owned(),
        asset_class: AssetClass::Etf,
        sector,
        industry: None,
        market_cap_usd_bn: None,
        start_price: price,
        base_iv: iv,
        beta,
        correlation,
        dividend_yield,
        earnings: None,
        listing,
        strike_style: StrikeStyle::Etf,
        priced_on_forward: false,
        synthetic: false,
    }
}

fn stock(row: &StockRow) -> Underlying {
    let &(
        symbol,
        name,
        sector,
        cap,
        price,
        iv,
        beta,
        correlation,
        dividend_yield,
        earnings,
        listed,
        industry,
    ) = row;
    let (month_offset, typical_day, timing) = earnings;
    Underlying {
        symbol: symbol.to_owned(),
        name: name.to_owned(),
        asset_class: AssetClass::Stock,
        sector: Some(sector),
        industry: Some(industry.to_owned()),
        market_cap_usd_bn: Some(cap),
        start_price: price,
        base_iv: iv,
        beta,
        correlation,
        dividend_yield,
        earnings: Some(EarningsCadence {
            month_offset,
            typical_day,
            timing,
        }),
        listing: match listed {
            Listed::Weeklies => ListingRules::with_weeklies(),
            Listed::Monthlies => ListingRules::monthly_only(true),
        },
        strike_style: StrikeStyle::Equity,
        priced_on_forward: false,
        synthetic: false,
    }
}

/// The built-in underlyings in universe order: indices, index ETFs, other ETFs, stocks.
fn real_underlyings() -> Vec<Underlying> {
    let mut all = Vec::with_capacity(4 + INDEX_ETFS.len() + OTHER_ETFS.len() + STOCKS.len());
    all.extend(indices());
    all.extend(INDEX_ETFS.iter().map(|row| {
        let dailies = match row.0 {
            "SPY" | "QQQ" => DailyExpirations::EveryTradingDay,
            "IWM" => DailyExpirations::MondayWednesday,
            _ => DailyExpirations::None,
        };
        fund(row, ListingRules::index_etf(dailies))
    }));
    all.extend(
        OTHER_ETFS
            .iter()
            .map(|row| fund(row, ListingRules::with_weeklies())),
    );
    all.extend(STOCKS.iter().map(stock));
    all
}

// ---------------------------------------------------------------------------------------------
// Synthetic underlyings
// ---------------------------------------------------------------------------------------------

fn round_to(value: f64, step: f64) -> f64 {
    (value / step).round() * step
}

/// The ticker of synthetic stock `i`: `SY0001` … `SY9999`, then `Z` and five base-36 digits
/// (`Z007PS` for 10 000): always six characters or fewer, a valid OCC option root.
pub fn synthetic_symbol(i: usize) -> String {
    if i < 10_000 {
        return format!("SY{i:04}");
    }
    const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut code = [b'0'; 5];
    let mut rest = i;
    for digit in code.iter_mut().rev() {
        *digit = DIGITS[rest % 36];
        rest /= 36;
    }
    let mut symbol = String::with_capacity(6);
    symbol.push('Z');
    symbol.extend(code.iter().map(|&c| char::from(c)));
    symbol
}

/// Synthetic stock number `i` (1-based) of the universe with `seed`: a function of `(seed, i)`
/// only. Parameters are drawn to look like a broad US stock universe:
///
/// - sector uniform over the 11 GICS sectors; market cap log-uniform $2–300 bn;
/// - price log-uniform $8–600, to the cent;
/// - base IV 18–45 % plus a small-cap premium of up to 25 points (smaller companies are more
///   volatile), to the half point;
/// - beta rising with the IV (0.5–2.0), correlation to SPY 0.25–0.75 and higher for larger
///   companies;
/// - a dividend (0.5–4 %) for about half the names;
/// - quarterly earnings in a random month of the quarter cycle, day 5–28, before the open or
///   after the close;
/// - weeklies for companies above $50 bn (and a fifth of the others), LEAPS above $10 bn.
fn synthetic_underlying(i: usize, seed: u64) -> Underlying {
    let mut rng = SplitMix64::new(derive_seed(seed, i as u64));
    let sector = Sector::ALL[rng.below(Sector::ALL.len() as u64) as usize];
    let cap = round_to(rng.log_uniform(2.0, 300.0), 0.1);
    // 0 for the largest, 1 for the smallest companies.
    let smallness = 1.0 - (cap / 2.0).ln() / (300.0_f64 / 2.0).ln();
    let price = round_to(rng.log_uniform(8.0, 600.0), 0.01);
    let iv = round_to(rng.uniform(0.18, 0.45) + 0.25 * smallness, 0.005);
    let beta = round_to(
        0.5 + 1.5 * (iv - 0.18) / 0.52 + rng.uniform(-0.15, 0.15),
        0.01,
    );
    let correlation = round_to(0.75 - 0.3 * smallness + rng.uniform(-0.2, 0.0), 0.01);
    let dividend_yield = if rng.chance(0.5) {
        round_to(rng.uniform(0.005, 0.04), 0.001)
    } else {
        0.0
    };
    let earnings = EarningsCadence {
        month_offset: rng.below(3) as u8,
        typical_day: 5 + rng.below(24) as u8,
        timing: if rng.chance(0.5) {
            EarningsTiming::BeforeOpen
        } else {
            EarningsTiming::AfterClose
        },
    };
    let weeklies = cap > 50.0 || rng.chance(0.2);
    let leaps = cap > 10.0;
    Underlying {
        symbol: synthetic_symbol(i),
        name: format!("Synthetic {} Company {i:04}", sector.name()),
        asset_class: AssetClass::Stock,
        sector: Some(sector),
        industry: Some(sector.generic_industry().to_owned()),
        market_cap_usd_bn: Some(cap),
        start_price: price,
        base_iv: iv,
        beta: beta.max(0.3),
        correlation: correlation.clamp(0.05, 0.95),
        dividend_yield,
        earnings: Some(earnings),
        listing: if weeklies {
            ListingRules {
                leaps,
                ..ListingRules::with_weeklies()
            }
        } else {
            ListingRules::monthly_only(leaps)
        },
        strike_style: StrikeStyle::Equity,
        priced_on_forward: false,
        synthetic: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_table_is_valid() {
        let universe = Universe::new(real_underlyings()).unwrap();
        assert_eq!(universe, Universe::real());
    }

    #[test]
    fn synthetic_names_are_valid() {
        for seed in [0, 1, 42, u64::MAX] {
            let universe = Universe::scaled(2_000, seed);
            Universe::new(universe.as_slice().to_vec()).unwrap();
        }
    }

    #[test]
    fn duplicates_and_bad_parameters_are_rejected() {
        let mut underlyings = real_underlyings();
        underlyings.push(underlyings[0].clone());
        assert_eq!(
            Universe::new(underlyings),
            Err(IngestError::DuplicateSymbol {
                symbol: "SPX".into()
            })
        );
        let mut bad = real_underlyings()[0].clone();
        bad.correlation = 1.5;
        assert!(matches!(
            Universe::new(vec![bad]),
            Err(IngestError::InvalidUnderlying { .. })
        ));
    }

    #[test]
    fn synthetic_symbols_are_unique_occ_roots() {
        let mut seen = std::collections::HashSet::new();
        for i in (1..20_000).chain([60_000, 1_000_000]) {
            let symbol = synthetic_symbol(i);
            assert!(symbol.len() <= 6, "{symbol}");
            assert!(seen.insert(symbol.clone()), "{symbol}");
            let expiration = chrono::NaiveDate::from_ymd_opt(2026, 12, 18).unwrap();
            optics_schemas::occ_symbol(&symbol, expiration, optics_schemas::OptionType::Call, 10.0)
                .unwrap();
        }
        assert_eq!(synthetic_symbol(1), "SY0001");
        assert_eq!(synthetic_symbol(10_000), "Z007PS");
    }

    /// The GICS industries (the 2023 structure) of each sector, written out from the
    /// published hierarchy, independently of the table above.
    fn gics_industries(sector: Sector) -> &'static [&'static str] {
        match sector {
            Sector::Energy => &["Energy Equipment & Services", "Oil, Gas & Consumable Fuels"],
            Sector::Materials => &[
                "Chemicals",
                "Construction Materials",
                "Containers & Packaging",
                "Metals & Mining",
                "Paper & Forest Products",
            ],
            Sector::Industrials => &[
                "Aerospace & Defense",
                "Building Products",
                "Construction & Engineering",
                "Electrical Equipment",
                "Industrial Conglomerates",
                "Machinery",
                "Trading Companies & Distributors",
                "Commercial Services & Supplies",
                "Professional Services",
                "Air Freight & Logistics",
                "Passenger Airlines",
                "Marine Transportation",
                "Ground Transportation",
                "Transportation Infrastructure",
            ],
            Sector::ConsumerDiscretionary => &[
                "Automobile Components",
                "Automobiles",
                "Household Durables",
                "Leisure Products",
                "Textiles, Apparel & Luxury Goods",
                "Hotels, Restaurants & Leisure",
                "Diversified Consumer Services",
                "Distributors",
                "Broadline Retail",
                "Specialty Retail",
            ],
            Sector::ConsumerStaples => &[
                "Consumer Staples Distribution & Retail",
                "Beverages",
                "Food Products",
                "Tobacco",
                "Household Products",
                "Personal Care Products",
            ],
            Sector::HealthCare => &[
                "Health Care Equipment & Supplies",
                "Health Care Providers & Services",
                "Health Care Technology",
                "Biotechnology",
                "Pharmaceuticals",
                "Life Sciences Tools & Services",
            ],
            Sector::Financials => &[
                "Banks",
                "Financial Services",
                "Consumer Finance",
                "Capital Markets",
                "Mortgage Real Estate Investment Trusts (REITs)",
                "Insurance",
            ],
            Sector::Technology => &[
                "IT Services",
                "Software",
                "Communications Equipment",
                "Technology Hardware, Storage & Peripherals",
                "Electronic Equipment, Instruments & Components",
                "Semiconductors & Semiconductor Equipment",
            ],
            Sector::CommunicationServices => &[
                "Diversified Telecommunication Services",
                "Wireless Telecommunication Services",
                "Media",
                "Entertainment",
                "Interactive Media & Services",
            ],
            Sector::Utilities => &[
                "Electric Utilities",
                "Gas Utilities",
                "Multi-Utilities",
                "Water Utilities",
                "Independent Power and Renewable Electricity Producers",
            ],
            Sector::RealEstate => &[
                "Diversified REITs",
                "Industrial REITs",
                "Hotel & Resort REITs",
                "Office REITs",
                "Health Care REITs",
                "Residential REITs",
                "Retail REITs",
                "Specialized REITs",
                "Real Estate Management & Development",
            ],
        }
    }

    #[test]
    fn every_stock_has_an_industry_of_its_sector() {
        let universe = Universe::scaled(real_underlyings().len() + 300, 11);
        let mut real_stocks = 0;
        for u in &universe {
            match u.asset_class {
                AssetClass::Stock => {
                    let sector = u.sector.unwrap();
                    let industry = u.industry.as_deref().unwrap_or_default();
                    assert!(
                        gics_industries(sector).contains(&industry),
                        "{}: {industry:?} is not a GICS industry of {}",
                        u.symbol,
                        sector.name()
                    );
                    if u.synthetic {
                        assert_eq!(industry, sector.generic_industry(), "{}", u.symbol);
                    } else {
                        real_stocks += 1;
                    }
                }
                // GICS classifies companies, not funds or indices.
                AssetClass::Etf | AssetClass::Index => assert_eq!(u.industry, None, "{}", u.symbol),
            }
        }
        assert_eq!(real_stocks, STOCKS.len());
        assert_eq!(
            universe.get("AAPL").unwrap().industry.as_deref(),
            Some("Technology Hardware, Storage & Peripherals")
        );
        assert_eq!(
            universe.get("JPM").unwrap().industry.as_deref(),
            Some("Banks")
        );
        let mut bad = universe.get("AAPL").unwrap().clone();
        bad.industry = Some(" Software".into());
        assert!(matches!(
            Universe::new(vec![bad]),
            Err(IngestError::InvalidUnderlying { .. })
        ));
    }

    #[test]
    fn earnings_months_follow_the_offset() {
        let cadence = |month_offset| EarningsCadence {
            month_offset,
            typical_day: 10,
            timing: EarningsTiming::AfterClose,
        };
        assert_eq!(cadence(0).report_months(), [1, 4, 7, 10]);
        assert_eq!(cadence(1).report_months(), [2, 5, 8, 11]);
        assert_eq!(cadence(2).report_months(), [3, 6, 9, 12]);
    }
}
