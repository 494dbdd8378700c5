//! The covenant binary: parse the command line, run, map errors to exit codes.

use std::process::ExitCode;

use clap::Parser;
use covenant::cli::{renamed, run, Cli, Command};

fn main() -> ExitCode {
    bound_malloc_arenas();
    raise_open_files();
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
    // The server keeps SIGPIPE ignored: a client (the apiserver giving up on a review) that
    // resets its connection while the answer is written must cost that connection, never the
    // process. Vectored socket writes cannot ask the kernel not to raise it.
    if !matches!(cli.command, Command::Serve(_)) {
        restore_sigpipe();
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", chain(&e));
            ExitCode::from(2)
        }
    }
}

/// Writing into a closed pipe (`covenant diff … | head -1`) ends a command quietly, as it
/// does for other command-line tools, instead of a panic about a broken pipe: Rust ignores
/// SIGPIPE by default, so the default action is restored (for every command but `serve`).
fn restore_sigpipe() {
    // SAFETY: setting a signal's disposition to its default before any thread is started.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// An error and its causes, each said once: a cause whose text the message already carries
/// (an error that quotes its source) is not repeated.
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// glibc gives each thread that allocates its own malloc arena, up to eight per core, and a
/// freed review's memory stays in the arena of the blocking-pool thread that judged it: 32
/// concurrent 5 MiB CRD updates peaked at 365 MiB with the default and 246 MiB with two
/// arenas. Two keep peak memory near what the reviews in flight hold (`MALLOC_ARENA_MAX` in
/// the environment still wins).
fn bound_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: a malloc tuning call made before any thread is started.
        #[allow(unsafe_code)]
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// Raise the open-file soft limit to the hard limit, as servers do, and tell the library
/// what was found: it fits its connection cap below it and logs both.
fn raise_open_files() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit and setrlimit read and write only the struct passed.
        #[allow(unsafe_code)]
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return;
            }
            let before = limit.rlim_cur;
            if limit.rlim_cur < limit.rlim_max {
                let mut raised = limit;
                raised.rlim_cur = limit.rlim_max;
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit = raised;
                }
            }
            covenant::cli::open_files_raised(before, limit.rlim_cur, limit.rlim_max);
        }
    }
}
