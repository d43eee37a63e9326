//! Command line: `ovation serve` (the default), `migrate`, `user add|passwd|delete`, `import`, `recount` and `backup`.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::api::admin::members::read_csv;
use crate::config::Settings;
use crate::domain::ids::BoardSlug;
use crate::engine::state::AppState;
use crate::engine::{admin, recount, users};
use crate::{startup, telemetry};

/// Real-time voting and leaderboards. Settings come from ovation.toml and OVATION_*
/// environment variables (see docs/reference/configuration.md).
#[derive(Debug, Parser)]
#[command(name = "ovation", version = crate::VERSION, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API and pages (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage dashboard users.
    User {
        #[command(subcommand)]
        action: UserAction,
    },
    /// Import members from a CSV file (id,name,image_url,initial_votes,multiplier) into a
    /// board. The whole file is checked before anything is written.
    Import { board: String, file: PathBuf },
    /// Recount a board from its ledger and compare every bucket with Redis; with
    /// --repair, set what differs to the recount.
    Recount {
        board: String,
        #[arg(long)]
        repair: bool,
    },
    /// Copy a SQLite database, while the service runs, to a new file (a consistent
    /// snapshot). PostgreSQL and MariaDB are backed up with their own tools.
    Backup { file: PathBuf },
    /// Print the API's OpenAPI document (what `/api/v1/openapi.json` serves), as
    /// `docs/openapi.json` keeps it.
    Openapi,
}

#[derive(Debug, Subcommand)]
pub enum UserAction {
    /// Add a user; the password is asked for (or read from standard input).
    Add { name: String },
    /// Set a user's password; the user's dashboard sessions end.
    Passwd { name: String },
    /// Delete a user; the user's dashboard sessions end.
    Delete { name: String },
}

/// Members written per step of an import: each step is one SQL transaction and one
/// Redis round trip, and moves the progress bar.
const IMPORT_CHUNK: usize = 5_000;

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
        Command::User { action } => {
            startup::with_state(settings, async |state| user(state, action).await).await
        }
        Command::Import { board, file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("failed to read {}", file.display()))?;
            startup::with_state(settings, async |state| import(state, &board, &text).await).await
        }
        Command::Recount { board, repair } => {
            startup::with_state(settings, async |state| recount(state, &board, repair).await).await
        }
        Command::Openapi => {
            println!("{}", crate::api::openapi_document()?);
            Ok(())
        }
        Command::Backup { file } => {
            startup::backup(&settings, &file).await?;
            println!("backed up the database to {}", file.display());
            Ok(())
        }
    }
}

async fn user(state: &AppState, action: UserAction) -> anyhow::Result<()> {
    match action {
        UserAction::Add { name } => {
            users::add_user(state, &name, &read_password()?).await?;
            println!("added user {name}");
        }
        UserAction::Passwd { name } => {
            let ended = users::set_password(state, &name, &read_password()?).await?;
            println!("changed the password of {name}; ended {ended} session(s)");
        }
        UserAction::Delete { name } => {
            let ended = users::delete_user(state, &name).await?;
            println!("deleted user {name}; ended {ended} session(s)");
        }
    }
    Ok(())
}

/// The user who runs a command, as the audit log names them.
fn cli_actor() -> String {
    format!("cli:{}", std::env::var("USER").unwrap_or_default())
}

async fn recount(state: &AppState, board: &str, repair: bool) -> anyhow::Result<()> {
    let slug = BoardSlug::parse(board)?;
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} entries ({per_sec}, {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let found = recount::recount(state, &cli_actor(), &slug, repair, &progress).await?;
    bar.finish();
    for m in &found.mismatches {
        println!(
            "{} {} {}: {}{} live {}, recounted {}{}",
            m.period,
            m.bucket,
            m.view.as_str(),
            m.member,
            m.shard.map(|s| format!(" (shard {s})")).unwrap_or_default(),
            m.view.to_votes(m.live),
            m.view.to_votes(m.recounted),
            if m.repaired { " (repaired)" } else { "" }
        );
    }
    for (from, to) in &found.gaps {
        println!(
            "seq {from}–{to}: lost from SQL after Redis had trimmed them (restored from an older backup?); not counted"
        );
    }
    println!(
        "{slug}: {} entries, {} buckets compared, {} not in Redis any more, {} mismatches, {} repaired, {} seq lost",
        found.entries,
        found.buckets,
        found.skipped,
        found.mismatched,
        found.repaired,
        found.gaps.iter().map(|(f, t)| t - f + 1).sum::<i64>()
    );
    Ok(())
}

/// A password from the terminal without echo, or a line of standard input.
fn read_password() -> anyhow::Result<String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("password: ")?;
        let again = rpassword::prompt_password("again: ")?;
        anyhow::ensure!(first == again, "the passwords differ");
        Ok(first)
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }
}

async fn import(state: &AppState, board: &str, text: &str) -> anyhow::Result<()> {
    let slug = BoardSlug::parse(board)?;
    let config = admin::board_of(state, &slug)?;
    let members = match read_csv(&config, text) {
        Ok(members) => members,
        Err(err) => {
            for e in err.item_errors() {
                eprintln!(
                    "line {}: {}",
                    e["line"],
                    e["message"].as_str().unwrap_or("")
                );
            }
            anyhow::bail!("{err}");
        }
    };
    let bar = ProgressBar::new(members.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} members ({per_sec}, {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let actor = cli_actor();
    let mut written = 0;
    for chunk in members.chunks(IMPORT_CHUNK) {
        written += admin::upsert_members(state, &actor, &slug, chunk.to_vec()).await?;
        bar.set_position(written as u64);
    }
    bar.finish();
    println!("imported {written} members into {slug}");
    Ok(())
}
