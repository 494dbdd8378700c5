//! The covenant binary: parse the command line, run, map errors to exit codes.

use std::process::ExitCode;

use clap::Parser;
use covenant::cli::{renamed, run, Cli, Command};

fn main() -> ExitCode {
    tune_malloc();
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

/// glibc's malloc, tuned for a server whose requests each allocate and free up to a few MiB.
/// Each setting given in the environment (`MALLOC_ARENA_MAX`, `MALLOC_TRIM_THRESHOLD_`,
/// `MALLOC_MMAP_THRESHOLD_`, or `GLIBC_TUNABLES`) wins over covenant's.
///
/// - **Two arenas.** glibc gives each thread that allocates its own arena, up to eight per
///   core, and a freed review's memory stays in the arena of the blocking-pool thread that
///   judged it: 32 concurrent 5 MiB CRD updates peaked at 365 MiB with the default and 246 MiB
///   with two arenas. Two keep peak memory near what the reviews in flight hold.
/// - **Keep 16 MiB before trimming, and map only blocks of 4 MiB and more.** With glibc's
///   defaults a thread's arena gave its free top back to the kernel (`madvise`) every few
///   large reviews and took it again (`mprotect`, then a page fault per page touched): 39
///   `madvise` and 34 `mprotect` calls over 200 CRD updates (`strace -c`), kernel time
///   callgrind never shows. With these there are no `madvise` calls, and the CRD update's CPU
///   per request fell by about a tenth in the load bench (medians of alternated runs). The
///   burst's peak stayed where it was.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        let unset = |var: &str, tunable: &str| std::env::var_os(var).is_none() && !tunables.contains(tunable);
        let settings = [
            (unset("MALLOC_ARENA_MAX", "arena_max"), libc::M_ARENA_MAX, 2),
            (unset("MALLOC_TRIM_THRESHOLD_", "trim_threshold"), libc::M_TRIM_THRESHOLD, 16 << 20),
            (unset("MALLOC_MMAP_THRESHOLD_", "mmap_threshold"), libc::M_MMAP_THRESHOLD, 4 << 20),
        ];
        for (wanted, parameter, value) in settings {
            if wanted {
                // SAFETY: malloc tuning calls made before any thread is started.
                #[allow(unsafe_code)]
                unsafe {
                    libc::mallopt(parameter, value);
                }
            }
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
