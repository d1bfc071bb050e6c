//! The small enums of the datasets. Each is stored in Arrow as a `Utf8` column holding its code
//! (the string in the table below), so Parquet dictionary-encodes it and a DataFusion query can
//! say `WHERE option_type = 'C'`. The same codes are the serde representation.

/// Implemented by every enum stored as a code string.
pub trait WireEnum: Copy + Sized + 'static {
    /// What the enum is, for error messages ("option type").
    const WHAT: &'static str;
    /// Every variant, in declaration order.
    const ALL: &'static [Self];
    /// The code stored in Arrow, JSON and OCC-style text.
    fn as_str(self) -> &'static str;
    /// The variant whose code is `code` (exact, case-sensitive).
    fn from_code(code: &str) -> Option<Self>;
}

macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[derive(serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $code)] $variant ),+
        }

        impl WireEnum for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $code),+ }
            }
            fn from_code(code: &str) -> Option<Self> {
                match code { $($code => Some(Self::$variant),)+ _ => None }
            }
        }

        impl $name {
            /// The code stored in Arrow and JSON.
            pub fn as_str(self) -> &'static str {
                <Self as WireEnum>::as_str(self)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::SchemaError;
            fn from_str(code: &str) -> Result<Self, $crate::SchemaError> {
                <Self as WireEnum>::from_code(code).ok_or_else(|| $crate::SchemaError::UnknownEnumValue {
                    what: $what,
                    value: code.to_owned(),
                })
            }
        }
    };
}

/// Every code enum of the crate (inbound and snapshot datasets) is declared with this macro.
pub(crate) use wire_enum;

wire_enum! {
    /// Call or put; the codes are the letters of the OCC symbol.
    OptionType, "option type" {
        /// `C`
        Call = "C",
        /// `P`
        Put = "P",
    }
}

wire_enum! {
    /// When the settlement value of an expiring contract is fixed: from the opening prints of
    /// the expiration day (AM: standard monthly SPX, RUT, NDX) or the closing price (PM: equity
    /// and ETF options, SPXW weeklies and dailies).
    SettlementStyle, "settlement style" {
        /// `AM`: special opening quotation of the expiration day.
        Am = "AM",
        /// `PM`: closing price of the expiration day.
        Pm = "PM",
    }
}

wire_enum! {
    /// American (exercisable any day: equity and ETF options) or European (only at expiration:
    /// cash-settled index options).
    ExerciseStyle, "exercise style" {
        /// `AMERICAN`
        American = "AMERICAN",
        /// `EUROPEAN`
        European = "EUROPEAN",
    }
}

wire_enum! {
    /// When an earnings report is released relative to the regular session of its date.
    EarningsTiming, "earnings timing" {
        /// `BMO`: before the market opens; the report date's open already reflects it.
        BeforeOpen = "BMO",
        /// `AMC`: after the market closes; the next session reflects it.
        AfterClose = "AMC",
        /// `TBD`: not announced (yet).
        Unknown = "TBD",
    }
}

wire_enum! {
    /// How much an economic release usually moves markets.
    Importance, "importance" {
        /// `LOW`
        Low = "LOW",
        /// `MEDIUM`
        Medium = "MEDIUM",
        /// `HIGH`
        High = "HIGH",
    }
}

wire_enum! {
    /// What an underlying is.
    AssetClass, "asset class" {
        /// `INDEX`: a cash index (SPX, NDX, RUT, VIX); not tradable itself.
        Index = "INDEX",
        /// `ETF`: an exchange-traded fund (SPY, QQQ, XLK …).
        Etf = "ETF",
        /// `STOCK`: a single stock.
        Stock = "STOCK",
    }
}

wire_enum! {
    /// How often a dividend is paid.
    DividendFrequency, "dividend frequency" {
        /// `MONTHLY`: 12 a year.
        Monthly = "MONTHLY",
        /// `QUARTERLY`: 4 a year.
        Quarterly = "QUARTERLY",
        /// `SEMIANNUAL`: 2 a year.
        SemiAnnual = "SEMIANNUAL",
        /// `ANNUAL`: 1 a year.
        Annual = "ANNUAL",
        /// `IRREGULAR`: no fixed schedule.
        Irregular = "IRREGULAR",
        /// `SPECIAL`: a one-off payment outside the regular schedule.
        Special = "SPECIAL",
    }
}

impl DividendFrequency {
    /// Regular payments per year, `None` for irregular and special dividends.
    pub fn payments_per_year(self) -> Option<u32> {
        match self {
            Self::Monthly => Some(12),
            Self::Quarterly => Some(4),
            Self::SemiAnnual => Some(2),
            Self::Annual => Some(1),
            Self::Irregular | Self::Special => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<E: WireEnum + PartialEq + std::fmt::Debug>() {
        for &variant in E::ALL {
            assert_eq!(E::from_code(variant.as_str()), Some(variant));
        }
        assert_eq!(E::from_code(""), None);
    }

    #[test]
    fn codes_round_trip() {
        round_trips::<OptionType>();
        round_trips::<SettlementStyle>();
        round_trips::<ExerciseStyle>();
        round_trips::<EarningsTiming>();
        round_trips::<Importance>();
        round_trips::<AssetClass>();
        round_trips::<DividendFrequency>();
    }

    #[test]
    fn parse_errors_name_the_enum() {
        let err = "X".parse::<OptionType>().unwrap_err();
        assert_eq!(err.to_string(), "unknown option type `X`");
        assert_eq!(
            "c".parse::<OptionType>().ok(),
            None,
            "codes are case-sensitive"
        );
    }

    #[test]
    fn serde_uses_the_codes() {
        assert_eq!(
            serde_json::to_string(&EarningsTiming::AfterClose).unwrap(),
            "\"AMC\""
        );
        let parsed: AssetClass = serde_json::from_str("\"ETF\"").unwrap();
        assert_eq!(parsed, AssetClass::Etf);
    }
}
