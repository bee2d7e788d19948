//! The league crate's tests.

/// Bad league files, each with its exact message; good ones, checked.
mod file;
/// The store's operations, run against every implementation of `Store`.
mod store;
