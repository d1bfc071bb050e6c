//! End-to-end tests: start the real `optics` binary.

mod price_cli;
