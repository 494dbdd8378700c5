//! `covenant serve --dev` as a person starts it: the release of the binary under test, on
//! ports the kernel picks, and what its banner prints.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// What the process wrote after its banner: stdout's lines and stderr's, gathered as they come.
pub type Written = std::sync::Arc<std::sync::Mutex<(Vec<String>, Vec<String>)>>;

/// A running `covenant serve --dev`, killed when dropped.
pub struct DevServer {
    /// The process.
    pub child: Child,
    /// The banner's lines, up to its last ("offline, in CI.").
    pub banner: Vec<String>,
    /// What it writes after the banner (both streams drained, so it never blocks on a pipe).
    pub written: Written,
}

impl DevServer {
    /// Start it with certificates in `dir` and `extra` arguments, and wait for its banner.
    pub fn start(dir: &std::path::Path, extra: &[&str]) -> DevServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_covenant"))
            .args(["serve", "--dev", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"])
            .args(["--api-listen", "127.0.0.1:0", "--dev-cert-dir"])
            .arg(dir)
            .args(extra)
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let mut lines = BufReader::new(stdout).lines();
        let mut banner = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            let last = line.contains("offline, in CI.");
            banner.push(line);
            if last {
                break;
            }
        }
        assert!(banner.last().is_some_and(|l| l.contains("offline, in CI.")), "no banner: {banner:?}");
        let written = Written::default();
        let out = written.clone();
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(|l| out.lock().unwrap().0.push(l)));
        let err = written.clone();
        std::thread::spawn(move || {
            BufReader::new(stderr).lines().map_while(Result::ok).for_each(|l| err.lock().unwrap().1.push(l))
        });
        DevServer { child, banner, written }
    }

    /// The address the banner's `which` line names (`webhook`, `admin`, `api`, `console`):
    /// `127.0.0.1:PORT`.
    pub fn addr(&self, which: &str) -> String {
        self.banner
            .iter()
            .find_map(|l| l.trim().strip_prefix(which).map(str::trim_start))
            .and_then(|rest| rest.split("://").nth(1))
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no {which} address in the banner: {:?}", self.banner))
            .to_string()
    }

    /// The banner's `curl` lines.
    pub fn curls(&self) -> Vec<String> {
        self.banner.iter().filter(|l| l.trim().starts_with("curl ")).cloned().collect()
    }
}

impl Drop for DevServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
