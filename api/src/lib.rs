//! optics-api: the axum service — routing, the `{success, data}` envelope, errors, auth, plans,
//! limits, compact windows, the endpoint handlers, OpenAPI and the MCP tool server.
//!
//! The server arrives with the API-platform issue; until then this crate is empty on purpose.
