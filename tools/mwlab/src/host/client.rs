//! The client side of the control protocol: a connection to a host's
//! control socket.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::send::DEFAULT_RATE_PPS;

/// A connection to a host's control socket.
#[derive(Debug)]
pub struct Client {
    input: BufReader<UnixStream>,
    out: UnixStream,
    timeout: Duration,
}

impl Client {
    /// Connects to the socket at `path`, retrying until `timeout` while the
    /// host is starting (no socket yet, or not listening yet). `timeout` is
    /// also how long [`Client::request`] waits for an answer, beyond what the
    /// request itself asks to wait (`timeout_ms`, a `send` with `wait`).
    pub fn connect(path: &Path, timeout: Duration) -> Result<Client, String> {
        let deadline = Instant::now() + timeout;
        let conn = loop {
            match UnixStream::connect(path) {
                Ok(c) => break c,
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!("{}: {e}", path.display()));
                }
                Err(_) => thread::sleep(Duration::from_millis(20)),
            }
        };
        let out = conn.try_clone().map_err(|e| e.to_string())?;
        Ok(Client {
            input: BufReader::new(conn),
            out,
            timeout,
        })
    }

    /// Sends one request and reads its answer.
    pub fn request(&mut self, req: &Value) -> Result<Value, String> {
        let ms = |k: &str| req.get(k).and_then(Value::as_u64).unwrap_or(0);
        let mut wait = self.timeout + Duration::from_millis(ms("timeout_ms"));
        if req.get("wait").and_then(Value::as_bool) == Some(true) {
            let rate = req
                .get("rate_pps")
                .and_then(Value::as_f64)
                .unwrap_or(DEFAULT_RATE_PPS);
            if rate > 0.0 {
                wait += Duration::from_secs_f64(ms("count") as f64 / rate);
            }
        }
        self.input
            .get_ref()
            .set_read_timeout(Some(wait))
            .map_err(|e| e.to_string())?;
        writeln!(self.out, "{req}")
            .and_then(|_| self.out.flush())
            .map_err(|e| format!("request: {e}"))?;
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) => Err("the host closed the connection".into()),
            Ok(_) => serde_json::from_str(&line).map_err(|e| format!("answer {line:?}: {e}")),
            Err(e) => Err(format!("answer: {e}")),
        }
    }
}

/// Whether a read on a socket with a timeout ended without data and without
/// failing (timed out, would block, or interrupted): try again later.
pub(super) fn nothing_yet(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}
