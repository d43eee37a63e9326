//! The `ovation` binary.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc malloc: the vote path allocates many small strings (key
/// names, arguments, JSON), and glibc's allocator took about a fifth of the server's CPU.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    match ovation::cli::run(ovation::cli::Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the chain of causes on one line, without a backtrace.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
