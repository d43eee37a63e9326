//! Command line: `ovation serve` (the default) and `ovation migrate`.

use clap::{Parser, Subcommand};

use crate::config::Settings;
use crate::{startup, telemetry};

/// Real-time voting and leaderboards. Settings come from ovation.toml and OVATION_*
/// environment variables (see README).
#[derive(Debug, Parser)]
#[command(name = "ovation", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
}

/// Runs the chosen command.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = Settings::load()?;
    telemetry::init(&settings.log);
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            startup::Application::build(settings).await?.run().await?;
            Ok(())
        }
        Command::Migrate => startup::migrate(&settings).await,
    }
}
