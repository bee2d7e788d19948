//! Not written yet.

use std::process::ExitCode;

use crate::cli::RandomBotArgs;

pub fn run(_args: &RandomBotArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("not implemented yet")
}
