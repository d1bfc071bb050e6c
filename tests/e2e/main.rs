//! End-to-end tests: start the real `optics` binary.

mod accounts_cli;
mod import_cli;
mod price_cli;
mod serve_api;
