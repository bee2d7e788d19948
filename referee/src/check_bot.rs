//! Not written yet.

use std::process::ExitCode;

use crate::cli::CheckBotArgs;

pub fn run(_args: &CheckBotArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
