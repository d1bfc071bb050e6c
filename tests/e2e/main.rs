//! End-to-end tests: start the real `optics` binary.

mod accounts_cli;
mod faults;
mod import_calendars;
mod import_cli;
mod import_vol;
mod price_cli;
mod run_command;
mod serve_api;
mod serve_follow;
mod sql_cli;
mod stock_screens;
mod support;
