//! The Flight SQL door driven by arrow-flight's own Flight SQL client over loopback: tokens
//! (bearer header and handshake), statements, prepared statements, the catalog calls, and the
//! refusals (no token, a write, an oversized query) that leave the store as it was.

use std::sync::Arc;

use arrow_flight::sql::client::FlightSqlServiceClient;
use arrow_flight::sql::{CommandGetTables, SqlInfo};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Float64Type;
use futures_util::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use optics_api::accounts::{AccountStore, NewAccount, Plan, SqliteStore, TokenPolicy, tokens};
use optics_api::auth::{AccessConfig, AccessControl, PasswordCost, PasswordHasher};
use optics_api::limits::{InMemoryLimiter, RateLimits};
use optics_compute::time::{Clock, ManualClock};
use optics_flight::{FlightSqlSettings, StoreFlightSql, serve_flight_sql};
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_schemas::VolDailyRow;
use tonic::transport::Channel;

struct Server {
    address: std::net::SocketAddr,
    store: SnapshotStore,
    token: String,
    revoked: String,
    _dir: Scratch,
    _stop: tokio::sync::oneshot::Sender<()>,
}

struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
}

async fn publish_vol(store: &SnapshotStore, date: NaiveDate, rows: &[(&str, f64)]) {
    let as_of: DateTime<Utc> = date.and_hms_opt(21, 0, 0).unwrap().and_utc();
    let rows: Vec<VolDailyRow> = rows
        .iter()
        .map(|(symbol, close)| VolDailyRow::new(symbol, date, as_of, *close))
        .collect();
    store
        .publish(
            &SnapshotKey::new("vol_daily", date, MARKET_WIDE),
            &VolDailyRow::to_batch(&rows).unwrap(),
            &[],
            as_of,
        )
        .await
        .unwrap();
}

/// A store with two sessions of `vol_daily`, an account with an active token and one with a
/// revoked token, and the server on a free loopback port.
async fn server(settings: FlightSqlSettings) -> Server {
    let store = SnapshotStore::new(Arc::new(InMemory::new()), Path::from("snapshots"));
    publish_vol(&store, day(19), &[("SPY", 100.0), ("^VIX", 15.0)]).await;
    publish_vol(&store, day(20), &[("SPY", 101.5), ("^VIX", 16.0)]).await;

    let dir = std::env::temp_dir().join(format!(
        "optics-flight-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let accounts: Arc<dyn AccountStore> =
        Arc::new(SqliteStore::open(&dir.join("accounts.sqlite3")).unwrap());
    let clock = Arc::new(ManualClock::new(
        Utc.with_ymd_and_hms(2026, 11, 20, 14, 30, 0).unwrap(),
    ));
    let access = AccessControl::new(
        Arc::clone(&accounts),
        Arc::new(InMemoryLimiter::new(RateLimits {
            per_minute: 60,
            per_hour: 1_000,
        })),
        clock.clone() as Arc<dyn Clock>,
        PasswordHasher::new(PasswordCost::TEST_ONLY_MINIMUM).unwrap(),
        AccessConfig::default(),
    );
    let mut issued = Vec::new();
    for email in ["quant@example.com", "gone@example.com"] {
        let account = accounts
            .create_account(NewAccount {
                email: email.into(),
                password_hash: access
                    .hasher()
                    .hash(optics_api::auth::Password::new("correct horse battery".into()).unwrap())
                    .await
                    .unwrap(),
                plan: Plan::Pro,
                plan_expires_at: None,
                monthly_budget_units: None,
                created_at: clock.now(),
            })
            .await
            .unwrap();
        let token = tokens::issue_token(
            &*accounts,
            &TokenPolicy::default(),
            account.id,
            Some("sql"),
            None,
            clock.now(),
        )
        .await
        .unwrap();
        issued.push((account.id, token));
    }
    let (gone_account, gone) = &issued[1];
    accounts
        .revoke_token(Some(*gone_account), &gone.info.id, clock.now())
        .await
        .unwrap();

    let service = StoreFlightSql::new(store.clone(), access, settings).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve_flight_sql(listener, service, async {
        let _ = stopped.await;
    }));
    Server {
        address,
        store,
        token: issued[0].1.token.expose().to_owned(),
        revoked: issued[1].1.token.expose().to_owned(),
        _dir: Scratch(dir),
        _stop: stop,
    }
}

async fn client(server: &Server) -> FlightSqlServiceClient<Channel> {
    let channel = Channel::from_shared(format!("http://{}", server.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    FlightSqlServiceClient::new(channel)
}

/// The batches of every endpoint of `info`.
async fn fetch(
    client: &mut FlightSqlServiceClient<Channel>,
    info: arrow_flight::FlightInfo,
) -> Result<Vec<RecordBatch>, String> {
    let mut batches = Vec::new();
    for endpoint in info.endpoint {
        let ticket = endpoint.ticket.expect("an endpoint carries its ticket");
        let stream = client.do_get(ticket).await.map_err(|e| e.to_string())?;
        batches.extend(
            stream
                .try_collect::<Vec<_>>()
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(batches)
}

/// Runs `query` as a statement and returns its batches.
async fn statement(
    client: &mut FlightSqlServiceClient<Channel>,
    query: &str,
) -> Result<Vec<RecordBatch>, String> {
    let info = client
        .execute(query.to_owned(), None)
        .await
        .map_err(|e| e.to_string())?;
    fetch(client, info).await
}

fn closes(batches: &[RecordBatch]) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for batch in batches {
        let symbols = datafusion::arrow::compute::cast(
            batch.column(0),
            &datafusion::arrow::datatypes::DataType::Utf8,
        )
        .unwrap();
        let symbols = symbols.as_string::<i32>();
        let values = batch.column(1).as_primitive::<Float64Type>();
        for row in 0..batch.num_rows() {
            out.push((symbols.value(row).to_owned(), values.value(row)));
        }
    }
    out
}

const NEWEST_CLOSES: &str = "SELECT underlying, close FROM vol_daily \
                             WHERE trade_date = DATE '2026-11-20' ORDER BY underlying";

#[tokio::test]
async fn a_bearer_token_reads_the_store_and_nothing_else_gets_in() {
    let server = server(FlightSqlSettings::default()).await;
    let mut anonymous = client(&server).await;
    let refused = statement(&mut anonymous, NEWEST_CLOSES).await.unwrap_err();
    assert!(
        refused.contains("valid authentication credentials"),
        "{refused}"
    );

    let mut revoked = client(&server).await;
    revoked.set_header("authorization", format!("Bearer {}", server.revoked));
    let refused = statement(&mut revoked, NEWEST_CLOSES).await.unwrap_err();
    assert!(
        refused.contains("valid authentication credentials"),
        "{refused}"
    );
    let refused = revoked
        .handshake("anyone", &server.revoked)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("valid authentication credentials"),
        "{refused}"
    );

    let mut quant = client(&server).await;
    quant.set_header("authorization", format!("Bearer {}", server.token));
    let batches = statement(&mut quant, NEWEST_CLOSES).await.unwrap();
    assert_eq!(
        closes(&batches),
        [("SPY".to_owned(), 101.5), ("^VIX".to_owned(), 16.0)]
    );
}

#[tokio::test]
async fn a_handshake_with_the_token_as_password_hands_back_the_bearer_header() {
    let server = server(FlightSqlSettings::default()).await;
    let mut quant = client(&server).await;
    let payload = quant.handshake("quant", &server.token).await.unwrap();
    assert_eq!(payload, server.token.as_bytes());
    assert_eq!(quant.token(), Some(&server.token));
    let batches = statement(
        &mut quant,
        "SELECT underlying, avg(close) FROM vol_daily GROUP BY underlying ORDER BY underlying",
    )
    .await
    .unwrap();
    assert_eq!(
        closes(&batches),
        [("SPY".to_owned(), 100.75), ("^VIX".to_owned(), 15.5)]
    );
}

#[tokio::test]
async fn a_prepared_statement_runs_like_a_statement() {
    let server = server(FlightSqlSettings::default()).await;
    let mut quant = client(&server).await;
    quant.set_header("authorization", format!("Bearer {}", server.token));
    let mut prepared = quant.prepare(NEWEST_CLOSES.to_owned(), None).await.unwrap();
    let schema = prepared.dataset_schema().unwrap();
    assert_eq!(schema.field(0).name(), "underlying");
    assert_eq!(schema.field(1).name(), "close");
    let info = prepared.execute().await.unwrap();
    let batches = fetch(&mut quant, info).await.unwrap();
    assert_eq!(
        closes(&batches),
        [("SPY".to_owned(), 101.5), ("^VIX".to_owned(), 16.0)]
    );
    prepared.close().await.unwrap();
}

#[tokio::test]
async fn the_catalog_lists_the_tables_with_their_columns() {
    let server = server(FlightSqlSettings::default()).await;
    let mut quant = client(&server).await;
    quant.set_header("authorization", format!("Bearer {}", server.token));
    let info = quant
        .get_tables(CommandGetTables {
            include_schema: true,
            ..CommandGetTables::default()
        })
        .await
        .unwrap();
    let batches = fetch(&mut quant, info).await.unwrap();
    let names: Vec<String> = batches
        .iter()
        .flat_map(|batch| {
            let column = batch
                .column_by_name("table_name")
                .unwrap()
                .as_string::<i32>();
            (0..column.len())
                .map(|i| column.value(i).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(names, ["vol_daily"]);
    assert!(batches[0].column_by_name("table_schema").is_some());

    let info = quant
        .get_sql_info(vec![
            SqlInfo::FlightSqlServerName,
            SqlInfo::FlightSqlServerReadOnly,
        ])
        .await
        .unwrap();
    let rows: usize = fetch(&mut quant, info)
        .await
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 2);
}

#[tokio::test]
async fn writes_bad_sql_and_oversized_queries_are_refused_and_the_store_is_unchanged() {
    let server = server(FlightSqlSettings {
        max_query_bytes: 512,
        ..FlightSqlSettings::default()
    })
    .await;
    let before = server.store.current_partitions("vol_daily").await.unwrap();
    let mut quant = client(&server).await;
    quant.set_header("authorization", format!("Bearer {}", server.token));
    for refused in [
        "INSERT INTO vol_daily SELECT * FROM vol_daily",
        "COPY (SELECT * FROM vol_daily) TO 'memory:///copy.parquet'",
        "CREATE TABLE copy AS SELECT * FROM vol_daily",
        "DROP TABLE vol_daily",
        "SET datafusion.execution.batch_size = 1",
    ] {
        let error = statement(&mut quant, refused).await.unwrap_err();
        assert!(error.contains("invalid argument"), "{refused}: {error}");
        let error = quant.prepare(refused.to_owned(), None).await.unwrap_err();
        assert!(
            error.to_string().contains("invalid argument"),
            "{refused}: {error}"
        );
    }
    let error = statement(&mut quant, "SELECT * FROM no_such_table")
        .await
        .unwrap_err();
    assert!(
        error.contains("invalid argument") && error.contains("no_such_table"),
        "{error}"
    );
    let long = format!("SELECT 1 -- {}", "x".repeat(600));
    let error = statement(&mut quant, &long).await.unwrap_err();
    assert!(error.contains("at most 512"), "{error}");
    let error = statement(&mut quant, "  ").await.unwrap_err();
    assert!(error.contains("empty"), "{error}");

    assert_eq!(
        server.store.current_partitions("vol_daily").await.unwrap(),
        before
    );
    let batches = statement(&mut quant, "SELECT count(*) FROM vol_daily")
        .await
        .unwrap();
    assert_eq!(
        batches[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        4
    );
}
