//! The client end of the admin socket: one connection, requests answered
//! in turn, streamed answers item by item.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::proto::{AdminError, Command, Request, Response};
use serde_json::Value;

/// The longest answer line the client reads (a whole FIB of 65,536 entries
/// per HR fits).
pub const MAX_RESPONSE: usize = 256 * 1024 * 1024;

/// What can go wrong.
#[derive(Debug)]
pub enum ClientError {
    /// The daemon cannot be reached: no socket, no permission, no answer.
    Unreachable {
        /// The socket.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The daemon answered with an error.
    Daemon(AdminError),
    /// Anything else: a malformed answer, a local file.
    Other(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unreachable { path, why } => {
                write!(f, "cannot reach mwrouterd at {}: {why}", path.display())
            }
            ClientError::Daemon(e) => write!(f, "{}: {}", e.code, e.message),
            ClientError::Other(s) => f.write_str(s),
        }
    }
}

/// A connection to the daemon.
pub struct Client {
    path: PathBuf,
    w: UnixStream,
    r: BufReader<UnixStream>,
    next_id: u64,
}

impl Client {
    /// Connects to `path`; answers must come within `timeout` (`None`:
    /// wait for ever).
    pub fn connect(path: &Path, timeout: Option<Duration>) -> Result<Client, ClientError> {
        let unreachable = |e: io::Error| ClientError::Unreachable {
            path: path.to_path_buf(),
            why: describe_connect_error(&e),
        };
        let w = UnixStream::connect(path).map_err(unreachable)?;
        w.set_read_timeout(timeout).map_err(unreachable)?;
        w.set_write_timeout(timeout).map_err(unreachable)?;
        let r = BufReader::new(w.try_clone().map_err(unreachable)?);
        Ok(Client {
            path: path.to_path_buf(),
            w,
            r,
            next_id: 1,
        })
    }

    /// Changes the answer timeout.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.w.set_read_timeout(timeout).map_err(|e| self.lost(&e))
    }

    fn lost(&self, e: &io::Error) -> ClientError {
        let why = match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "no answer in time".to_string(),
            _ => e.to_string(),
        };
        ClientError::Unreachable {
            path: self.path.clone(),
            why,
        }
    }

    fn send(&mut self, cmd: Command) -> Result<u64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let line = Request::new(Some(id), cmd).to_line();
        if let Err(e) = self.w.write_all(line.as_bytes()) {
            // The daemon may have said why before it closed (busy, forbidden).
            if let Ok(r) = self.read(id)
                && let Err(d) = r.into_result()
            {
                return Err(ClientError::Daemon(d));
            }
            return Err(self.lost(&e));
        }
        Ok(id)
    }

    fn read(&mut self, id: u64) -> Result<Response, ClientError> {
        let mut buf = Vec::new();
        let n = Read::take(&mut self.r, MAX_RESPONSE as u64)
            .read_until(b'\n', &mut buf)
            .map_err(|e| self.lost(&e))?;
        if n == 0 {
            return Err(ClientError::Unreachable {
                path: self.path.clone(),
                why: "the daemon closed the connection without answering".into(),
            });
        }
        if buf.last() != Some(&b'\n') {
            return Err(ClientError::Other(format!(
                "the daemon's answer is incomplete or longer than {MAX_RESPONSE} bytes"
            )));
        }
        let r = Response::parse(&buf)
            .map_err(|e| ClientError::Other(format!("malformed answer from the daemon: {e}")))?;
        // An error about the connection itself (busy, timeout, too long)
        // comes without id.
        if r.id.is_some() && r.id != Some(id) {
            return Err(ClientError::Other(format!(
                "answer for request {:?}, expected {id}",
                r.id
            )));
        }
        Ok(r)
    }

    /// Sends `cmd` and returns its result.
    pub fn request(&mut self, cmd: Command) -> Result<Value, ClientError> {
        let id = self.send(cmd)?;
        let r = self.read(id)?;
        if r.more {
            return Err(ClientError::Other(
                "the daemon streamed an answer to a plain request".into(),
            ));
        }
        r.into_result().map_err(ClientError::Daemon)
    }

    /// Sends a streaming `cmd`: gives every item to `item`, returns the
    /// final result.
    pub fn stream(
        &mut self,
        cmd: Command,
        mut item: impl FnMut(Value) -> Result<(), ClientError>,
    ) -> Result<Value, ClientError> {
        let id = self.send(cmd)?;
        loop {
            let r = self.read(id)?;
            if r.more && r.ok {
                item(r.result.unwrap_or(Value::Null))?;
                continue;
            }
            return r.into_result().map_err(ClientError::Daemon);
        }
    }
}

fn describe_connect_error(e: &io::Error) -> String {
    let hint = match e.kind() {
        io::ErrorKind::NotFound => {
            " (is mwrouterd running? --socket or MWCTL_SOCKET name another socket)"
        }
        io::ErrorKind::ConnectionRefused => " (nothing listens there: is mwrouterd running?)",
        io::ErrorKind::PermissionDenied => {
            " (the socket's mode or group keeps you out: ask for the admin or read-only group)"
        }
        _ => "",
    };
    format!("{e}{hint}")
}
