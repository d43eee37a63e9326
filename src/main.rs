//! The `ovation` binary.

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    ovation::cli::run(ovation::cli::Cli::parse()).await
}
