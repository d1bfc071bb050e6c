//! Arrow Flight SQL over the snapshot store (`optics serve --flight-sql ADDR`): the tables of
//! `optics sql` ([`optics_api::sql`]) for any Flight SQL client — ADBC from Python or R, the
//! Flight SQL JDBC driver, DBeaver — with the rows travelling as Arrow, not text.
//!
//! - **Who may ask.** Every call carries an API token of an account with an active plan, as
//!   `authorization: Bearer <token>`; a client that only knows user and password does the
//!   Flight handshake with any user name and the token as the password, and is handed the
//!   bearer header back. A query is not metered against the monthly budget (it is no
//!   endpoint): the bounds below keep one caller from taking the server.
//! - **What a query may do.** Read: DDL, DML and `SET` are refused ([`read_only`]), so nothing
//!   is written into the store. Statements and prepared statements (without parameters), and
//!   the catalog calls a SQL tool browses with (catalogs, schemas, tables with their columns,
//!   server information).
//! - **Bounds.** The query text ([`FlightSqlSettings::max_query_bytes`]), the queries running
//!   at once (others are told to retry), the memory one query's sorts, joins and aggregates
//!   may hold, and the time a query may run.
//! - **Stateless handles.** A ticket or prepared-statement handle is the query text itself:
//!   any replica answers it, and nothing is held between calls.

use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::FlightSqlService;
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetSqlInfo, CommandGetTables, CommandPreparedStatementQuery, CommandStatementQuery,
    ProstMessageExt, SqlInfo, TicketStatementQuery,
};
use arrow_flight::{
    Action, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse,
    IpcMessage, SchemaAsIpc, Ticket,
};
use base64::Engine as _;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::ipc::writer::IpcWriteOptions;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::{DataFrame, SessionContext};
use futures_util::{Stream, StreamExt, TryStreamExt};
use optics_api::ApiError;
use optics_api::auth::AccessControl;
use optics_api::sql::{SqlError, StoreTable, read_only, store_context_in};
use optics_pipeline::store::SnapshotStore;
use prost::Message;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status, Streaming};

/// The bounds a Flight SQL server keeps its callers within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlightSqlSettings {
    /// Longest query text accepted, bytes.
    pub max_query_bytes: usize,
    /// Queries running at once; one more is refused with `RESOURCE_EXHAUSTED` (retry).
    pub concurrent_queries: usize,
    /// Memory all running queries' sorts, joins and aggregates may hold together, bytes (a
    /// query that needs more fails with `RESOURCE_EXHAUSTED`).
    pub memory_limit_bytes: usize,
    /// Longest a query may run, from its planning to its last batch.
    pub query_timeout: Duration,
}

impl Default for FlightSqlSettings {
    fn default() -> Self {
        Self {
            max_query_bytes: 64 * 1024,
            concurrent_queries: 2,
            memory_limit_bytes: 1 << 30,
            query_timeout: Duration::from_secs(300),
        }
    }
}

/// The largest gRPC message a client may send: a query plus its envelope.
const MAX_REQUEST_MESSAGE_BYTES: usize = 1 << 20;

/// What the server says of itself (`GetSqlInfo`).
static SERVER_INFO: LazyLock<SqlInfoData> = LazyLock::new(|| {
    let mut info = SqlInfoDataBuilder::new();
    info.append(SqlInfo::FlightSqlServerName, "optics");
    info.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
    // The Arrow columnar format version the batches are written in.
    info.append(SqlInfo::FlightSqlServerArrowVersion, "1.5");
    info.append(SqlInfo::FlightSqlServerReadOnly, true);
    info.append(SqlInfo::FlightSqlServerTransaction, 0_i32);
    info.append(SqlInfo::FlightSqlServerCancel, false);
    info.append(SqlInfo::FlightSqlServerStatementTimeout, 0_i32);
    info.build().expect("the server information is well formed")
});

type BatchStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::FlightData, Status>> + Send>>;

/// The Flight SQL service over one snapshot store.
#[derive(Clone)]
pub struct StoreFlightSql {
    store: SnapshotStore,
    access: AccessControl,
    settings: FlightSqlSettings,
    running: Arc<Semaphore>,
    runtime: Arc<RuntimeEnv>,
}

impl std::fmt::Debug for StoreFlightSql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreFlightSql")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl StoreFlightSql {
    /// The service over `store`, admitting the tokens `access` knows.
    pub fn new(
        store: SnapshotStore,
        access: AccessControl,
        settings: FlightSqlSettings,
    ) -> Result<Self, DataFusionError> {
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_limit(settings.memory_limit_bytes, 1.0)
            .build_arc()?;
        Ok(Self {
            store,
            access,
            settings,
            running: Arc::new(Semaphore::new(settings.concurrent_queries.max(1))),
            runtime,
        })
    }

    /// The gRPC service, with the request size bounded.
    pub fn into_server(self) -> FlightServiceServer<Self> {
        FlightServiceServer::new(self).max_decoding_message_size(MAX_REQUEST_MESSAGE_BYTES)
    }

    /// Admits a call by its bearer token.
    async fn admit<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|value| value.to_str().ok());
        match self.access.authenticate(header).await {
            Ok(_) => Ok(()),
            Err(error) => Err(refusal(&error)),
        }
    }

    /// The store's tables, as `optics sql` sees them.
    async fn context(&self) -> Result<(SessionContext, Vec<StoreTable>), Status> {
        store_context_in(&self.store, Arc::clone(&self.runtime))
            .await
            .map_err(|error| match error {
                SqlError::Query(error) => status_of(&error),
                other => {
                    tracing::warn!(error = %other, "flight sql: listing the snapshot store");
                    Status::unavailable("the snapshot store could not be listed; retry")
                }
            })
    }

    /// Plans `query` (read-only) over the current tables.
    async fn plan(&self, query: &[u8]) -> Result<DataFrame, Status> {
        if query.len() > self.settings.max_query_bytes {
            return Err(Status::invalid_argument(format!(
                "the query is {} bytes; at most {} are accepted",
                query.len(),
                self.settings.max_query_bytes
            )));
        }
        let query = std::str::from_utf8(query)
            .map_err(|_| Status::invalid_argument("the query is not UTF-8 text"))?;
        if query.trim().is_empty() {
            return Err(Status::invalid_argument("the query is empty"));
        }
        let (ctx, _) = self.context().await?;
        ctx.sql_with_options(query, read_only())
            .await
            .map_err(|e| status_of(&e))
    }

    /// The answer to a planned query: a ticket that runs it again, and its schema.
    fn flight_info(
        schema: &Schema,
        ticket: Ticket,
        descriptor: FlightDescriptor,
    ) -> Result<FlightInfo, Status> {
        Ok(FlightInfo::new()
            .try_with_schema(schema)
            .map_err(|e| Status::internal(format!("encoding the result schema: {e}")))?
            .with_endpoint(FlightEndpoint::new().with_ticket(ticket))
            .with_descriptor(descriptor)
            .with_ordered(true))
    }

    /// A catalog command's answer to `GetFlightInfo`, for an admitted caller: a ticket that is
    /// the command itself, and the schema of its result.
    async fn command_info(
        &self,
        request: Request<FlightDescriptor>,
        ticket: Ticket,
        schema: &Schema,
    ) -> Result<Response<FlightInfo>, Status> {
        self.admit(&request).await?;
        Self::flight_info(schema, ticket, request.into_inner()).map(Response::new)
    }

    /// Runs `query` and streams its batches, within the running-query and time bounds.
    async fn run(&self, query: &[u8]) -> Result<Response<BatchStream>, Status> {
        let permit = Arc::clone(&self.running).try_acquire_owned().map_err(|_| {
            Status::resource_exhausted(format!(
                "{} queries are running, the most this server runs at once; retry shortly",
                self.settings.concurrent_queries
            ))
        })?;
        let timeout = self.settings.query_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let frame = tokio::time::timeout_at(deadline, self.plan(query))
            .await
            .map_err(|_| timed_out(timeout))??;
        let schema: SchemaRef = Arc::new(frame.schema().as_arrow().clone());
        let batches = tokio::time::timeout_at(deadline, frame.execute_stream())
            .await
            .map_err(|_| timed_out(timeout))?
            .map_err(|e| status_of(&e))?;
        let bounded = bounded_batches(batches, permit, deadline, timeout);
        let encoded = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .build(bounded)
            .map_err(|error| match error {
                FlightError::Tonic(status) => *status,
                other => Status::internal(format!("encoding the rows: {other}")),
            });
        Ok(Response::new(Box::pin(encoded)))
    }
}

/// A query stopped at the time bound.
fn timed_out(timeout: Duration) -> Status {
    Status::deadline_exceeded(format!(
        "the query ran past {} s, the longest a query may run here",
        timeout.as_secs()
    ))
}

/// The query's batches until its end, an error or the deadline, holding `permit` throughout.
fn bounded_batches(
    batches: datafusion::physical_plan::SendableRecordBatchStream,
    permit: OwnedSemaphorePermit,
    deadline: tokio::time::Instant,
    timeout: Duration,
) -> impl Stream<Item = Result<RecordBatch, FlightError>> + Send {
    futures_util::stream::unfold(Some((batches, permit)), move |state| async move {
        let (mut batches, permit) = state?;
        match tokio::time::timeout_at(deadline, batches.next()).await {
            Ok(Some(Ok(batch))) => Some((Ok(batch), Some((batches, permit)))),
            Ok(Some(Err(error))) => {
                Some((Err(FlightError::Tonic(Box::new(status_of(&error)))), None))
            }
            Ok(None) => None,
            Err(_) => Some((Err(FlightError::Tonic(Box::new(timed_out(timeout)))), None)),
        }
    })
}

/// A refused token, as the gRPC status a client acts on.
fn refusal(error: &ApiError) -> Status {
    match error {
        ApiError::Unauthorized => Status::unauthenticated(
            "an active API token is needed: send `authorization: Bearer <token>`, or \
             handshake with the token as the password",
        ),
        ApiError::Forbidden { .. } => Status::permission_denied("the account's plan is not active"),
        other => {
            tracing::warn!(error = %other, "flight sql: checking a token");
            Status::unavailable("the account store cannot be reached; retry")
        }
    }
}

/// A DataFusion failure as a status: the query's own faults (SQL, planning, a refused
/// statement, a value that does not cast) are told as they are; running out of the memory
/// bound is `RESOURCE_EXHAUSTED`; a failed read of the store is logged and told as
/// `UNAVAILABLE` without its internals.
fn status_of(error: &DataFusionError) -> Status {
    match error.find_root() {
        DataFusionError::ResourcesExhausted(message) => Status::resource_exhausted(format!(
            "the query needs more memory than this server lets one hold: {message}"
        )),
        DataFusionError::ObjectStore(_)
        | DataFusionError::IoError(_)
        | DataFusionError::ParquetError(_) => {
            tracing::warn!(%error, "flight sql: reading the snapshot store");
            Status::unavailable("reading the snapshot store failed; retry")
        }
        root => Status::invalid_argument(root.to_string()),
    }
}

/// A one-batch answer (the catalog calls).
fn one_batch(batch: Result<RecordBatch, FlightError>) -> BatchStream {
    let schema = match &batch {
        Ok(batch) => Some(batch.schema()),
        Err(_) => None,
    };
    let mut encoder = FlightDataEncoderBuilder::new();
    if let Some(schema) = schema {
        encoder = encoder.with_schema(schema);
    }
    Box::pin(
        encoder
            .build(futures_util::stream::once(async { batch }))
            .map_err(|e| Status::internal(format!("encoding the answer: {e}"))),
    )
}

fn ticket_of(message: &impl ProstMessageExt) -> Ticket {
    Ticket::new(message.as_any().encode_to_vec())
}

#[tonic::async_trait]
impl FlightSqlService for StoreFlightSql {
    type FlightService = Self;

    /// Basic credentials (any user, the API token as the password) or a bearer header; the
    /// answer carries the bearer header the client then sends with every call.
    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<
        Response<Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>>,
        Status,
    > {
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .trim()
            .to_owned();
        let token = match header.split_once(' ') {
            Some((scheme, credentials)) if scheme.eq_ignore_ascii_case("basic") => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(credentials.trim())
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .ok_or_else(|| Status::unauthenticated("malformed Basic credentials"))?;
                decoded
                    .split_once(':')
                    .map(|(_, password)| password.to_owned())
                    .ok_or_else(|| Status::unauthenticated("malformed Basic credentials"))?
            }
            Some((scheme, credentials)) if scheme.eq_ignore_ascii_case("bearer") => {
                credentials.trim().to_owned()
            }
            _ => String::new(),
        };
        let bearer = format!("Bearer {token}");
        self.access
            .authenticate(Some(&bearer))
            .await
            .map_err(|e| refusal(&e))?;
        let answer = HandshakeResponse {
            protocol_version: 0,
            payload: token.clone().into(),
        };
        let mut response: Response<
            Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>,
        > = Response::new(Box::pin(futures_util::stream::once(async { Ok(answer) })));
        let value = MetadataValue::try_from(bearer.as_str())
            .map_err(|_| Status::unauthenticated("malformed token"))?;
        response.metadata_mut().insert("authorization", value);
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.admit(&request).await?;
        let frame = self.plan(query.query.as_bytes()).await?;
        let ticket = ticket_of(&TicketStatementQuery {
            statement_handle: query.query.into_bytes().into(),
        });
        Self::flight_info(frame.schema().as_arrow(), ticket, request.into_inner())
            .map(Response::new)
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        self.run(&ticket.statement_handle).await
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        self.admit(&request).await?;
        let frame = self.plan(query.query.as_bytes()).await?;
        let IpcMessage(dataset_schema) =
            SchemaAsIpc::new(frame.schema().as_arrow(), &IpcWriteOptions::default())
                .try_into()
                .map_err(|e| Status::internal(format!("encoding the result schema: {e}")))?;
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: query.query.into_bytes().into(),
            dataset_schema,
            // No parameters: values are written into the query.
            parameter_schema: Default::default(),
        })
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.admit(&request).await?;
        let frame = self.plan(&query.prepared_statement_handle).await?;
        let ticket = ticket_of(&query);
        Self::flight_info(frame.schema().as_arrow(), ticket, request.into_inner())
            .map(Response::new)
    }

    async fn do_get_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        self.run(&query.prepared_statement_handle).await
    }

    async fn do_action_close_prepared_statement(
        &self,
        _query: ActionClosePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<(), Status> {
        // Nothing is held for a handle.
        self.admit(&request).await
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let ticket = ticket_of(&query);
        self.command_info(request, ticket, &query.into_builder().schema())
            .await
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        let (ctx, _) = self.context().await?;
        let mut builder = query.into_builder();
        for catalog in ctx.catalog_names() {
            builder.append(catalog);
        }
        Ok(Response::new(one_batch(builder.build())))
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let ticket = ticket_of(&query);
        self.command_info(request, ticket, &query.into_builder().schema())
            .await
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        let (ctx, _) = self.context().await?;
        let mut builder = query.into_builder();
        for catalog in ctx.catalog_names() {
            if let Some(provider) = ctx.catalog(&catalog) {
                for schema in provider.schema_names() {
                    builder.append(&catalog, schema);
                }
            }
        }
        Ok(Response::new(one_batch(builder.build())))
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let ticket = ticket_of(&query);
        self.command_info(request, ticket, &query.into_builder().schema())
            .await
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        let (ctx, tables) = self.context().await?;
        let state = ctx.state();
        let defaults = &state.config_options().catalog;
        let (catalog, schema) = (
            defaults.default_catalog.clone(),
            defaults.default_schema.clone(),
        );
        let mut builder = query.into_builder();
        for table in tables {
            let provider = ctx
                .table_provider(table.name)
                .await
                .map_err(|e| status_of(&e))?;
            builder
                .append(&catalog, &schema, table.name, "TABLE", &provider.schema())
                .map_err(|e| Status::internal(format!("listing the tables: {e}")))?;
        }
        Ok(Response::new(one_batch(builder.build())))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let ticket = ticket_of(&query);
        let schema = query.into_builder(&SERVER_INFO).schema();
        self.command_info(request, ticket, &schema).await
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.admit(&request).await?;
        Ok(Response::new(one_batch(
            query.into_builder(&SERVER_INFO).build(),
        )))
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// Serves `service` on `listener` until `shutdown` resolves.
pub async fn serve_flight_sql(
    listener: tokio::net::TcpListener,
    service: StoreFlightSql,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tonic::transport::Server::builder()
        // A caller's streams on one connection, bounded like the HTTP API's connections.
        .max_concurrent_streams(Some(32))
        .add_service(service.into_server())
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
}
