//! The systemd notification protocol (sd_notify(3)): one datagram of
//! `KEY=value` lines to the socket in `$NOTIFY_SOCKET` (a path, or an
//! abstract name written `@name`). mwrouterd says READY=1 once its ports
//! are up and the first FIBs published, STATUS= what it does, WATCHDOG=1
//! while its threads make progress ([`super::watchdog`]), RELOADING=1 /
//! READY=1 around a reload and STOPPING=1 when it stops (docs/daemon.md
//! "systemd").
//!
//! The protocol is a single `sendto`, so it is written here on std's
//! `UnixDatagram` rather than taken from a crate: no `unsafe`, no
//! dependency, and the abstract namespace through std's `SocketAddrExt`.

use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

/// Where the notifications go; a no-op when the daemon was not started by
/// systemd with `Type=notify` (no `$NOTIFY_SOCKET`).
#[derive(Debug)]
pub struct Notifier {
    to: Option<(UnixDatagram, SocketAddr)>,
}

impl Notifier {
    /// A notifier that sends nothing.
    pub fn none() -> Notifier {
        Notifier { to: None }
    }

    /// The notifier of `$NOTIFY_SOCKET`, if set and usable.
    pub fn from_env() -> Notifier {
        match std::env::var_os("NOTIFY_SOCKET") {
            Some(s) => match Notifier::to(&s.to_string_lossy()) {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!("NOTIFY_SOCKET {}: {e}", s.to_string_lossy());
                    Notifier::none()
                }
            },
            None => Notifier::none(),
        }
    }

    /// A notifier sending to `socket`: a path, or `@name` for an abstract
    /// socket.
    pub fn to(socket: &str) -> std::io::Result<Notifier> {
        let addr = if let Some(name) = socket.strip_prefix('@') {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name.as_bytes())?
        } else if socket.starts_with('/') {
            SocketAddr::from_pathname(socket)?
        } else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "neither a path nor an abstract name (@name)",
            ));
        };
        let sock = UnixDatagram::unbound()?;
        Ok(Notifier {
            to: Some((sock, addr)),
        })
    }

    /// Whether notifications go anywhere.
    pub fn enabled(&self) -> bool {
        self.to.is_some()
    }

    /// Sends `state` (`KEY=value` lines); a failure is logged at debug
    /// only: the daemon runs without a manager as well.
    pub fn send(&self, state: &str) {
        if let Some((sock, addr)) = &self.to
            && let Err(e) = sock.send_to_addr(state.as_bytes(), addr)
        {
            tracing::debug!("sd_notify {state:?}: {e}");
        }
    }

    /// READY=1 with the main pid and a status line.
    pub fn ready(&self, status: &str) {
        self.send(&format!(
            "READY=1\nMAINPID={}\nSTATUS={}",
            std::process::id(),
            one_line(status)
        ));
    }

    /// STATUS=`status`.
    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={}", one_line(status)));
    }

    /// WATCHDOG=1.
    pub fn watchdog(&self) {
        self.send("WATCHDOG=1");
    }

    /// RELOADING=1 with the monotonic time systemd asks of it.
    pub fn reloading(&self) {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        let usec = t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1_000;
        self.send(&format!(
            "RELOADING=1\nMONOTONIC_USEC={usec}\nSTATUS=reloading"
        ));
    }

    /// STOPPING=1.
    pub fn stopping(&self) {
        self.send("STOPPING=1\nSTATUS=stopping");
    }
}

/// A status on one line (a newline would start another assignment).
fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// The watchdog interval systemd expects (`$WATCHDOG_USEC`), if it is for
/// this process (`$WATCHDOG_PID` unset or ours).
pub fn watchdog_from_env() -> Option<Duration> {
    watchdog_interval(
        std::env::var("WATCHDOG_USEC").ok().as_deref(),
        std::env::var("WATCHDOG_PID").ok().as_deref(),
        std::process::id(),
    )
}

/// The watchdog interval of `usec` (`$WATCHDOG_USEC`), unless `pid`
/// (`$WATCHDOG_PID`) names another process than `me`.
pub fn watchdog_interval(usec: Option<&str>, pid: Option<&str>, me: u32) -> Option<Duration> {
    if let Some(p) = pid
        && p.trim().parse::<u32>().ok() != Some(me)
    {
        return None;
    }
    let us: u64 = usec?.trim().parse().ok()?;
    (us > 0).then(|| Duration::from_micros(us))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recv(s: &UnixDatagram) -> String {
        let mut buf = [0u8; 512];
        let n = s.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[test]
    fn sends_to_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let s = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::to(path.to_str().unwrap()).unwrap();
        assert!(n.enabled());
        n.ready("2 HRs\nup");
        let got = recv(&s);
        assert!(got.starts_with("READY=1\nMAINPID="), "{got}");
        assert!(got.ends_with("\nSTATUS=2 HRs up"), "{got}");
        n.watchdog();
        assert_eq!(recv(&s), "WATCHDOG=1");
        n.stopping();
        assert!(recv(&s).starts_with("STOPPING=1\n"));
        n.reloading();
        assert!(recv(&s).starts_with("RELOADING=1\nMONOTONIC_USEC="));
    }

    #[test]
    fn sends_to_an_abstract_name() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("mwrouter-notify-test-{}", std::process::id());
        let s = UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
        Notifier::to(&format!("@{name}")).unwrap().status("x");
        assert_eq!(recv(&s), "STATUS=x");
    }

    #[test]
    fn refuses_a_relative_socket() {
        assert!(Notifier::to("notify").is_err());
        assert!(!Notifier::none().enabled());
        Notifier::none().watchdog();
    }

    #[test]
    fn watchdog_interval_is_for_this_process_only() {
        let d = Some(Duration::from_secs(30));
        assert_eq!(watchdog_interval(Some("30000000"), None, 7), d);
        assert_eq!(watchdog_interval(Some("30000000"), Some("7"), 7), d);
        assert_eq!(watchdog_interval(Some("30000000"), Some("8"), 7), None);
        assert_eq!(watchdog_interval(Some("0"), None, 7), None);
        assert_eq!(watchdog_interval(Some("x"), None, 7), None);
        assert_eq!(watchdog_interval(None, None, 7), None);
    }
}
