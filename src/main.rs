//! The covenant binary: parse the command line, run, map errors to exit codes.

use std::process::ExitCode;

use clap::Parser;
use covenant::cli::{renamed, run, Cli};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if let Some(refusal) = renamed(&args) {
        eprintln!("{refusal}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
