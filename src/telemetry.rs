//! Logging: a tracing subscriber writing to stderr, plain or JSON, filtered by `--log-level`
//! or `RUST_LOG`. Object contents are never logged.

use tracing_subscriber::EnvFilter;

/// Log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Plain,
    /// One JSON object per line.
    Json,
}

/// Install the global subscriber. Safe to call more than once (later calls do nothing).
pub fn init(format: LogFormat, level: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    // Colour only for a person at a terminal: a log file or a collector gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    let _ = match format {
        LogFormat::Plain => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// A log line that may repeat in a flood (refused requests, failed accepts): written at most
/// once per `every`, each line saying how many were left out since the last. What is left out
/// is still counted in a metric by the caller.
#[derive(Debug)]
pub struct Throttle {
    every: std::time::Duration,
    state: std::sync::Mutex<(Option<std::time::Instant>, u64)>,
}

impl Throttle {
    /// At most one line per `every`.
    pub const fn new(every: std::time::Duration) -> Throttle {
        Throttle { every, state: std::sync::Mutex::new((None, 0)) }
    }

    /// Whether to write a line now; `Some(n)` with how many were left out before it.
    pub fn admit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        match state.0 {
            Some(last) if now.duration_since(last) < self.every => {
                state.1 += 1;
                None
            }
            _ => {
                let skipped = state.1;
                *state = (Some(now), 0);
                Some(skipped)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttle_admits_one_line_per_period_and_counts_the_rest() {
        let t = Throttle::new(std::time::Duration::from_secs(3600));
        assert_eq!(t.admit(), Some(0));
        for _ in 0..5 {
            assert_eq!(t.admit(), None);
        }
        let t = Throttle::new(std::time::Duration::ZERO);
        assert_eq!(t.admit(), Some(0));
        assert_eq!(t.admit(), Some(0));
    }
}
