//! Not written yet.

use std::process::ExitCode;

use crate::cli::ReplayArgs;

pub fn run(_args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
