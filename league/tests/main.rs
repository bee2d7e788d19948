//! The league crate's tests.

/// Bad league files, each with its exact message; good ones, checked.
mod file;
/// A real PostgreSQL server for the tests (shared with the end-to-end tests).
#[path = "../../tests/support/pg.rs"]
mod pg;
/// The PostgreSQL store's own operations: leases, duplicates, logs, workers.
mod pg_store;
/// The PostgreSQL store over TLS (sslmode, sslrootcert).
mod pg_tls;
/// The store's operations, run against every implementation of `Store`.
mod store;
/// Uploaded versions fetched by hash from a store, checked, built once and started.
mod uploaded;
