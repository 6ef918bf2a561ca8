//! An optional HTTP listener for Prometheus on a loopback address (a
//! scraper on the box, or a tunnel, reaches it; nothing else does): `GET
//! /metrics`, the box's counters, and `GET /fabric/metrics`, the fabric
//! scrape of the performance manager (docs/stats.md "The HTTP listener").
//! One accepting thread; each connection gets a short-lived thread with
//! I/O timeouts, at most [`MAX_CONNECTIONS`] at once (more are closed
//! unanswered). The request head is parsed by `httparse` (hyper's parser);
//! the connections, their bound and their timeouts are this file's.
//! Stopped by dropping its [`Handle`].

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

use admin::stats::{Error, Result};

/// Connections served at once.
const MAX_CONNECTIONS: usize = 4;
/// Longest request head read.
const MAX_HEAD: usize = 8192;
/// Time a client has to send its request head.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// Time one write of the answer may block.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the accepting thread looks at its stop flag.
const TICK: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 50_000_000,
};

/// The content type of the text exposition.
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Request headers parsed at most.
const MAX_HEADERS: usize = 32;

/// What a path answers: the text of a scrape, made at each request.
pub type Source = Box<dyn Fn() -> String + Send>;

/// The paths served and what each answers.
type Routes = Arc<Vec<(&'static str, Mutex<Source>)>>;

/// A running metrics listener; dropping it stops the listener (the
/// accepting thread is joined and the socket closed; a connection being
/// answered finishes within its timeouts).
#[derive(Debug)]
pub struct Handle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Handle {
    /// The address bound (with the port the kernel chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Listens on `addr` (a loopback address: 127.0.0.0/8 or ::1, else
/// [`Error::NotLoopback`]) and answers `GET /metrics` (and `HEAD`) with
/// what `source` returns, as `text/plain; version=0.0.4`; 404 for other
/// paths, 405 for other methods, 400 for what is not an HTTP/1.x request.
/// Every answer closes its connection.
pub fn serve_prometheus(
    addr: SocketAddr,
    source: impl Fn() -> String + Send + 'static,
) -> Result<Handle> {
    serve_paths(addr, vec![("/metrics", Box::new(source))])
}

/// [`serve_prometheus`] with several paths, each answered by its source
/// (mwrouterd: `/metrics` and `/fabric/metrics`).
pub fn serve_paths(addr: SocketAddr, routes: Vec<(&'static str, Source)>) -> Result<Handle> {
    if !addr.ip().to_canonical().is_loopback() {
        return Err(Error::NotLoopback(addr));
    }
    let listener = TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let routes: Routes = Arc::new(
        routes
            .into_iter()
            .map(|(path, source)| (path, Mutex::new(source)))
            .collect(),
    );
    let thread = thread::Builder::new().name("mw-metrics".into()).spawn({
        let stop = stop.clone();
        move || accept_loop(listener, routes, stop)
    })?;
    Ok(Handle {
        addr: local,
        stop,
        thread: Some(thread),
    })
}

/// Decrements the count of connections being served when dropped.
struct Active(Arc<AtomicUsize>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn accept_loop(listener: TcpListener, routes: Routes, stop: Arc<AtomicBool>) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        let mut fds = [PollFd::new(&listener, PollFlags::IN)];
        if poll(&mut fds, Some(&TICK)).is_err() {
            thread::sleep(Duration::from_millis(50));
            continue;
        }
        loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                        continue; // closed unanswered: the scraper retries
                    }
                    active.fetch_add(1, Ordering::Relaxed);
                    let guard = Active(active.clone());
                    let routes = routes.clone();
                    // A failed spawn drops the closure, and the guard with it.
                    let _ =
                        thread::Builder::new()
                            .name("mw-metrics-conn".into())
                            .spawn(move || {
                                let mut stream = stream;
                                let _ = serve_one(&mut stream, &routes);
                                // The slot is free before the client sees the
                                // end of the answer: a client that asks again
                                // at once is never over the bound.
                                drop(guard);
                                let _ = stream.shutdown(std::net::Shutdown::Write);
                            });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // WouldBlock: all taken; anything else (EMFILE...): next tick.
                Err(_) => break,
            }
        }
    }
}

fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n"))
}

fn serve_one(stream: &mut TcpStream, routes: &Routes) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let _ = stream.set_nodelay(true);
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while head_end(&buf).is_none() {
        if buf.len() > MAX_HEAD {
            return respond(stream, 431, "text/plain", "request head too large\n", false);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return respond(stream, 408, "text/plain", "request timeout\n", false);
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let parsed = match req.parse(&buf) {
        Ok(httparse::Status::Complete(_)) => (req.method, req.path),
        Ok(httparse::Status::Partial) | Err(_) => (None, None),
    };
    let (Some(method), Some(target)) = parsed else {
        return respond(stream, 400, "text/plain", "bad request\n", false);
    };
    if !target.starts_with('/') {
        return respond(stream, 400, "text/plain", "bad request\n", false);
    }
    let path = target.split('?').next().unwrap_or(target);
    let head = method == "HEAD";
    let Some((_, source)) = routes.iter().find(|(p, _)| *p == path) else {
        return respond(stream, 404, "text/plain", "not found\n", head);
    };
    if method != "GET" && !head {
        return respond(stream, 405, "text/plain", "use GET\n", false);
    }
    let text = catch_unwind(AssertUnwindSafe(|| {
        let f = source.lock().unwrap_or_else(PoisonError::into_inner);
        f()
    }));
    match text {
        Ok(text) => respond(stream, 200, METRICS_TYPE, &text, head),
        Err(_) => respond(stream, 500, "text/plain", "metrics failed\n", head),
    }
}

fn respond(
    stream: &mut TcpStream,
    code: u16,
    content_type: &str,
    body: &str,
    head_only: bool,
) -> io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        _ => "Internal Server Error",
    };
    let allow = if code == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    stream.write_all(&out)?;
    stream.flush()
}
