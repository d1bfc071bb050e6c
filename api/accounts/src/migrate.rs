//! The schema migrations of both stores, compiled into the binary from `api/accounts/migrations/`.
//!
//! Each store records applied versions in `optics_schema_migrations` and applies the missing
//! ones in order, each in its own transaction, when it is opened. PostgreSQL takes an advisory
//! lock first so replicas starting together do not race.

/// One migration: a number, its file name and its SQL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    pub(crate) version: u32,
    pub(crate) name: &'static str,
    pub(crate) sql: &'static str,
}

/// One migration of `engine`'s directory, its SQL compiled in.
macro_rules! migration {
    ($engine:literal, $version:literal, $name:literal) => {
        Migration {
            version: $version,
            name: $name,
            sql: include_str!(concat!("../migrations/", $engine, "/", $name)),
        }
    };
}

/// SQLite migrations, oldest first.
pub(crate) const SQLITE: &[Migration] = &[
    migration!("sqlite", 1, "0001_accounts.sql"),
    migration!("sqlite", 2, "0002_monthly_usage.sql"),
    migration!("sqlite", 3, "0003_oauth.sql"),
];

/// PostgreSQL migrations, oldest first.
pub(crate) const POSTGRES: &[Migration] = &[
    migration!("postgres", 1, "0001_accounts.sql"),
    migration!("postgres", 2, "0002_monthly_usage.sql"),
    migration!("postgres", 3, "0003_oauth.sql"),
];

/// The bookkeeping table (same DDL on both engines).
pub(crate) const CREATE_MIGRATIONS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS optics_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at BIGINT  NOT NULL
)";

/// Advisory-lock key that serialises PostgreSQL migrations across replicas ("optx" in ASCII).
pub(crate) const PG_MIGRATION_LOCK: i64 = 0x6f70_7478;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_engines_have_the_same_numbered_migrations() {
        let versions =
            |list: &[Migration]| list.iter().map(|m| (m.version, m.name)).collect::<Vec<_>>();
        assert_eq!(versions(SQLITE), versions(POSTGRES));
        for (index, migration) in SQLITE.iter().enumerate() {
            assert_eq!(migration.version as usize, index + 1);
            assert!(
                migration
                    .name
                    .starts_with(&format!("{:04}_", migration.version))
            );
        }
    }
}
