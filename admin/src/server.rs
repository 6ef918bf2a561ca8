//! The admin socket server (docs/admin-protocol.md).
//!
//! A UNIX stream socket; one thread accepts, one thread per client (at
//! most [`ServerConfig::max_clients`]; further clients get a `busy` error
//! and are closed). A client sends request lines and reads one answer per
//! request (several for a stream); it must complete each request line
//! within [`ServerConfig::idle_timeout`] or it is answered `timeout` and
//! closed. Nothing a client sends reaches the daemon except as a parsed,
//! permitted [`Command`] given to the [`Handler`]; a handler that panics is
//! answered `failed`.
//!
//! Dropping the [`ServerHandle`] stops the server, closes every client and
//! removes the socket file.

use std::collections::HashMap;
use std::fs;
use std::io::{self, BufRead, BufReader, ErrorKind, Write};
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::policy::{Peer, Policy, own_uid, peer_credentials};
use crate::proto::{AdminError, AdminErrorCode, Command, MAX_LINE, Privilege, Request, Response};

/// Where the daemon listens unless configured otherwise.
pub const DEFAULT_SOCKET: &str = "/run/mwrouter/mwrouterd.sock";

/// What the daemon does with a permitted command.
pub trait Handler: Send + Sync {
    /// Answers `cmd` for a peer with `privilege` (the server has already
    /// refused admin commands to read-only peers).
    fn handle(&self, cmd: &Command, privilege: Privilege) -> Result<Value, AdminError>;

    /// Answers `cmd` for `peer` (its credentials, when the kernel gave
    /// them: who asked for a configuration change is logged and kept). The
    /// default answers with [`Handler::handle`].
    fn handle_from(
        &self,
        cmd: &Command,
        privilege: Privilege,
        peer: Option<&Peer>,
    ) -> Result<Value, AdminError> {
        let _ = peer;
        self.handle(cmd, privilege)
    }

    /// Answers a streaming command ([`Command::streams`]): sends items
    /// through `out` and returns the final result. The default answers
    /// with [`Handler::handle`] alone.
    fn handle_stream(
        &self,
        cmd: &Command,
        privilege: Privilege,
        out: &mut dyn StreamOut,
    ) -> Result<Value, AdminError> {
        let _ = out;
        self.handle(cmd, privilege)
    }
}

/// The client end of a stream, for [`Handler::handle_stream`].
pub trait StreamOut {
    /// Sends one item (a `"more": true` line). An error means the client
    /// is gone, too slow, or the server stops: the handler should return.
    fn send(&mut self, item: Value) -> Result<(), AdminError>;

    /// Whether the client has hung up or the server stops (a handler
    /// waiting for something to send should poll this now and then).
    fn closed(&self) -> bool;
}

/// Looks up a peer's credentials (the default is [`peer_credentials`]).
pub type PeerLookup = Arc<dyn Fn(&UnixStream) -> io::Result<Peer> + Send + Sync>;

/// How the server runs.
#[derive(Clone)]
pub struct ServerConfig {
    /// The socket's path.
    pub path: PathBuf,
    /// Who may do what; also sets the socket's mode and group.
    pub policy: Policy,
    /// Clients served at once; more are answered `busy` and closed.
    pub max_clients: usize,
    /// Time a client has to send a complete request line.
    pub idle_timeout: Duration,
    /// Time a client has to take an answer.
    pub write_timeout: Duration,
    /// The longest request line, newline included.
    pub max_line: usize,
    /// Replaces the kernel's credentials (tests).
    pub peer_lookup: Option<PeerLookup>,
    /// The socket's mode (e.g. 0o660); `None`: from the policy (0660, or
    /// 0666 when everyone may read).
    pub mode: Option<u32>,
}

impl ServerConfig {
    /// The defaults at `path`: the safe policy (admin group only, 0660),
    /// 64 clients, 10 s to send a request, 5 s to take an answer, 64 KiB
    /// lines.
    pub fn new(path: impl Into<PathBuf>) -> ServerConfig {
        ServerConfig {
            path: path.into(),
            policy: Policy::default(),
            max_clients: 64,
            idle_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(5),
            max_line: MAX_LINE,
            peer_lookup: None,
            mode: None,
        }
    }
}

/// What the server has seen.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections accepted (served or not).
    pub accepted: AtomicU64,
    /// Connections refused with `busy`.
    pub busy: AtomicU64,
    /// Request lines read.
    pub requests: AtomicU64,
    /// Error answers sent.
    pub errors: AtomicU64,
    /// Clients closed for not sending a request in time.
    pub timeouts: AtomicU64,
    /// Requests refused with `forbidden`.
    pub forbidden: AtomicU64,
    /// Handler panics.
    pub panics: AtomicU64,
}

struct Shared {
    cfg: ServerConfig,
    handler: Arc<dyn Handler>,
    stop: AtomicBool,
    active: AtomicUsize,
    next_id: AtomicU64,
    clients: Mutex<HashMap<u64, UnixStream>>,
    stats: ServerStats,
    daemon_uid: u32,
}

/// A running server; dropping it stops it.
pub struct ServerHandle {
    shared: Arc<Shared>,
    accept: Option<thread::JoinHandle<()>>,
    path: PathBuf,
    inode: (u64, u64),
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("path", &self.path)
            .field("active", &self.active_clients())
            .finish()
    }
}

impl ServerHandle {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The server's counters.
    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }

    /// Clients being served now.
    pub fn active_clients(&self) -> usize {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// Stops the server (same as dropping it).
    pub fn stop(self) {}
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        if let Ok(clients) = self.shared.clients.lock() {
            for s in clients.values() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.shared.active.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        // Remove the socket file only if it is still the one we made.
        if let Ok(m) = fs::symlink_metadata(&self.path)
            && (m.dev(), m.ino()) == self.inode
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Binds `cfg.path` and starts serving with `handler`.
///
/// Creates the parent directory (mode 0755) if needed; removes a stale
/// socket file only when nothing listens on it (an error if a daemon does,
/// or if the path is not a socket); sets the socket's group and mode from
/// the policy before it appears at its path (it is bound under a temporary
/// name and renamed).
pub fn serve(cfg: ServerConfig, handler: Arc<dyn Handler>) -> io::Result<ServerHandle> {
    let path = cfg.path.clone();
    let listener = bind(&path, &cfg.policy, cfg.mode)?;
    let m = fs::symlink_metadata(&path)?;
    listener.set_nonblocking(true)?;
    let shared = Arc::new(Shared {
        cfg,
        handler,
        stop: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        next_id: AtomicU64::new(0),
        clients: Mutex::new(HashMap::new()),
        stats: ServerStats::default(),
        daemon_uid: own_uid(),
    });
    let sh = shared.clone();
    let accept = thread::Builder::new()
        .name("mwadmin-accept".into())
        .spawn(move || accept_loop(&sh, &listener));
    let accept = match accept {
        Ok(t) => t,
        Err(e) => {
            let _ = fs::remove_file(&path);
            return Err(e);
        }
    };
    Ok(ServerHandle {
        shared,
        accept: Some(accept),
        path,
        inode: (m.dev(), m.ino()),
    })
}

fn bind(path: &Path, policy: &Policy, mode: Option<u32>) -> io::Result<UnixListener> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "socket path has no file name"))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.exists() {
        fs::create_dir_all(&parent)?;
        fs::set_permissions(&parent, fs::Permissions::from_mode(0o755))?;
    }
    if let Ok(m) = fs::symlink_metadata(path) {
        if !m.file_type().is_socket() {
            return Err(io::Error::new(
                ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        match UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    ErrorKind::AddrInUse,
                    format!("a daemon already listens on {}", path.display()),
                ));
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => fs::remove_file(path)?,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("{} exists and cannot be checked: {e}", path.display()),
                ));
            }
        }
    }
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = parent.join(tmp_name);
    let _ = fs::remove_file(&tmp);
    let listener = UnixListener::bind(&tmp)?;
    let setup = (|| {
        if let Some(g) = policy.socket_group() {
            std::os::unix::fs::chown(&tmp, None, Some(g))?;
        }
        fs::set_permissions(
            &tmp,
            fs::Permissions::from_mode(mode.unwrap_or_else(|| policy.socket_mode())),
        )?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = setup {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(listener)
}

fn accept_loop(sh: &Arc<Shared>, listener: &UnixListener) {
    let tick = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    while !sh.stop.load(Ordering::SeqCst) {
        let mut fds = [rustix::event::PollFd::new(
            listener,
            rustix::event::PollFlags::IN,
        )];
        if rustix::event::poll(&mut fds, Some(&tick)).is_err() {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        loop {
            match listener.accept() {
                Ok((s, _)) => dispatch(sh, s),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // Out of file descriptors or similar: back off.
                    thread::sleep(Duration::from_millis(10));
                    break;
                }
            }
        }
    }
}

fn refuse_busy(sh: &Shared, s: &UnixStream) {
    sh.stats.busy.fetch_add(1, Ordering::Relaxed);
    sh.stats.errors.fetch_add(1, Ordering::Relaxed);
    let _ = s.set_nonblocking(false);
    let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    let e = AdminError::new(
        AdminErrorCode::Busy,
        format!(
            "too many clients (at most {}); try again",
            sh.cfg.max_clients
        ),
    );
    let mut w = s;
    let _ = w.write_all(Response::err(None, e).to_line().as_bytes());
}

fn dispatch(sh: &Arc<Shared>, s: UnixStream) {
    sh.stats.accepted.fetch_add(1, Ordering::Relaxed);
    if sh.active.fetch_add(1, Ordering::SeqCst) >= sh.cfg.max_clients {
        sh.active.fetch_sub(1, Ordering::SeqCst);
        refuse_busy(sh, &s);
        return;
    }
    let id = sh.next_id.fetch_add(1, Ordering::Relaxed);
    if let (Ok(c), Ok(mut m)) = (s.try_clone(), sh.clients.lock()) {
        m.insert(id, c);
    }
    let guard = ClientGuard { sh: sh.clone(), id };
    let sh2 = sh.clone();
    let spawned = thread::Builder::new()
        .name("mwadmin-client".into())
        .spawn(move || {
            let _guard = guard;
            serve_client(&sh2, s);
        });
    if let Err(e) = spawned {
        // The closure (and the guard, and the stream) were dropped.
        let _ = e;
    }
}

/// Unregisters a client when its thread ends (or could not start).
struct ClientGuard {
    sh: Arc<Shared>,
    id: u64,
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        if let Ok(mut m) = self.sh.clients.lock() {
            m.remove(&self.id);
        }
        self.sh.active.fetch_sub(1, Ordering::SeqCst);
    }
}

enum ReadLine {
    Line,
    Eof,
    TooLong,
    Timeout,
    Failed,
}

/// Reads one line (without its newline) into `buf`, within `timeout`, of
/// at most `max - 1` bytes. A last line without newline counts as a line.
fn read_line(
    r: &mut BufReader<UnixStream>,
    buf: &mut Vec<u8>,
    max: usize,
    timeout: Duration,
) -> ReadLine {
    buf.clear();
    let deadline = Instant::now() + timeout;
    loop {
        if r.buffer().is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return ReadLine::Timeout;
            }
            if r.get_ref().set_read_timeout(Some(left)).is_err() {
                return ReadLine::Failed;
            }
        }
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return ReadLine::Timeout;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return ReadLine::Failed,
        };
        if avail.is_empty() {
            return if buf.is_empty() {
                ReadLine::Eof
            } else {
                ReadLine::Line
            };
        }
        match avail.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if buf.len() + i + 1 > max {
                    return ReadLine::TooLong;
                }
                buf.extend_from_slice(&avail[..i]);
                r.consume(i + 1);
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                return ReadLine::Line;
            }
            None => {
                let n = avail.len();
                if buf.len() + n + 1 > max {
                    return ReadLine::TooLong;
                }
                buf.extend_from_slice(avail);
                r.consume(n);
            }
        }
    }
}

fn send(sh: &Shared, mut w: &UnixStream, r: &Response) -> io::Result<()> {
    if !r.ok {
        sh.stats.errors.fetch_add(1, Ordering::Relaxed);
    }
    w.write_all(r.to_line().as_bytes())
}

fn serve_client(sh: &Shared, s: UnixStream) {
    if s.set_nonblocking(false).is_err() || s.set_write_timeout(Some(sh.cfg.write_timeout)).is_err()
    {
        return;
    }
    let peer = match &sh.cfg.peer_lookup {
        Some(f) => f(&s),
        None => peer_credentials(&s),
    };
    let privilege = match &peer {
        Ok(p) => sh.cfg.policy.privilege(p, sh.daemon_uid),
        Err(_) => None,
    };
    let Ok(rs) = s.try_clone() else {
        return;
    };
    let mut reader = BufReader::with_capacity(16 * 1024, rs);
    let mut buf = Vec::new();
    loop {
        match read_line(&mut reader, &mut buf, sh.cfg.max_line, sh.cfg.idle_timeout) {
            ReadLine::Line => {}
            ReadLine::Eof | ReadLine::Failed => return,
            ReadLine::TooLong => {
                let e = AdminError::new(
                    AdminErrorCode::TooLong,
                    format!(
                        "request line longer than {} bytes; closing",
                        sh.cfg.max_line
                    ),
                );
                let _ = send(sh, &s, &Response::err(None, e));
                return;
            }
            ReadLine::Timeout => {
                sh.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                let e = AdminError::new(
                    AdminErrorCode::Timeout,
                    format!(
                        "no complete request within {} ms; closing",
                        sh.cfg.idle_timeout.as_millis()
                    ),
                );
                let _ = send(sh, &s, &Response::err(None, e));
                return;
            }
        }
        if sh.stop.load(Ordering::SeqCst) {
            return;
        }
        sh.stats.requests.fetch_add(1, Ordering::Relaxed);
        let req = match Request::parse(&buf) {
            Ok(r) => r,
            Err(b) => {
                if send(sh, &s, &Response::err(b.id, b.error)).is_err() {
                    return;
                }
                continue;
            }
        };
        let Some(privilege) = privilege else {
            sh.stats.forbidden.fetch_add(1, Ordering::Relaxed);
            let who = match &peer {
                Ok(p) => format!("uid {} (gid {})", p.uid, p.gid),
                Err(e) => format!("a peer whose credentials cannot be read ({e})"),
            };
            let e = AdminError::forbidden(format!("{who} may not use this socket"));
            let _ = send(sh, &s, &Response::err(req.id, e));
            return;
        };
        if req.cmd.needs_admin() && privilege != Privilege::Admin {
            sh.stats.forbidden.fetch_add(1, Ordering::Relaxed);
            let uid = peer.as_ref().map(|p| p.uid).unwrap_or(u32::MAX);
            let e = AdminError::forbidden(format!(
                "`{}` needs the admin privilege; uid {uid} may only read",
                req.cmd.name()
            ));
            if send(sh, &s, &Response::err(req.id, e)).is_err() {
                return;
            }
            continue;
        }
        let result = if req.cmd.streams() {
            let mut out = ClientOut {
                sh,
                w: &s,
                id: req.id,
                gone: false,
            };
            catch_unwind(AssertUnwindSafe(|| {
                sh.handler.handle_stream(&req.cmd, privilege, &mut out)
            }))
        } else {
            catch_unwind(AssertUnwindSafe(|| {
                sh.handler
                    .handle_from(&req.cmd, privilege, peer.as_ref().ok())
            }))
        };
        let resp = match result {
            Ok(Ok(v)) => Response::ok(req.id, v),
            Ok(Err(e)) => Response::err(req.id, e),
            Err(_) => {
                sh.stats.panics.fetch_add(1, Ordering::Relaxed);
                Response::err(
                    req.id,
                    AdminError::failed(format!(
                        "internal error while handling `{}`",
                        req.cmd.name()
                    )),
                )
            }
        };
        if send(sh, &s, &resp).is_err() {
            return;
        }
    }
}

struct ClientOut<'a> {
    sh: &'a Shared,
    w: &'a UnixStream,
    id: Option<u64>,
    gone: bool,
}

impl StreamOut for ClientOut<'_> {
    fn send(&mut self, item: Value) -> Result<(), AdminError> {
        if self.gone || self.sh.stop.load(Ordering::SeqCst) {
            return Err(AdminError::failed("the stream is closed"));
        }
        let line = Response::item(self.id, item).to_line();
        let mut w = self.w;
        w.write_all(line.as_bytes()).map_err(|e| {
            self.gone = true;
            AdminError::failed(format!("client gone: {e}"))
        })
    }

    fn closed(&self) -> bool {
        if self.gone || self.sh.stop.load(Ordering::SeqCst) {
            return true;
        }
        let mut b = [0u8; 1];
        match rustix::net::recv(
            self.w.as_fd(),
            &mut b[..],
            rustix::net::RecvFlags::PEEK | rustix::net::RecvFlags::DONTWAIT,
        ) {
            Ok((_, 0)) => true,
            Ok(_) => false,
            Err(e) => e != rustix::io::Errno::AGAIN && e != rustix::io::Errno::INTR,
        }
    }
}
