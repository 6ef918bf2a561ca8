//! The host process: [`run`] and `mwlab host --spec FILE`.

use std::io;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Duration;

use rrp::Address;
use rrp::node::Level;

use super::POLL;
use super::management;
use super::spec::{HostSpec, read_spec};
use super::state::Host;

/// Removes the control socket when the host stops.
struct RemoveOnDrop<'a>(&'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

/// Runs the host until `stop` is set or a `quit` request comes; removes the
/// control socket on the way out. The link (UDP socket, AF_PACKET port) is
/// open before the control socket appears, so that a control socket means a
/// host ready to receive.
pub fn run(spec: &HostSpec, stop: &AtomicBool) -> Result<(), String> {
    let (mgmt_tx, mgmt_rx) = std::sync::mpsc::channel();
    let host = Host::new(spec, spec.management.as_ref().map(|_| mgmt_tx.clone()))?;
    // The admin socket, served while the host runs (its handle removes it).
    let _admin = match &spec.management {
        Some(m) => {
            let handler = management::AdminHandler::new(mgmt_tx, Address(spec.address));
            let server = admin::server::serve(
                admin::server::ServerConfig::new(&m.admin),
                std::sync::Arc::new(handler),
            )
            .map_err(|e| format!("{}: admin socket {}: {e}", spec.name, m.admin.display()))?;
            Some(server)
        }
        None => {
            drop(mgmt_tx);
            None
        }
    };
    let path = spec.control.as_path();
    if path.exists() {
        // A socket left by an earlier run of this host.
        let _ = std::fs::remove_file(path);
    }
    let listener =
        UnixListener::bind(path).map_err(|e| format!("{}: {}: {e}", spec.name, path.display()))?;
    let _remove = RemoveOnDrop(path);
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("{}: {e}", spec.name))?;
    let host = &host;
    thread::scope(|scope| {
        scope.spawn(|| host.receive_loop(stop));
        if let Some(m) = &spec.management {
            let level = match host.level {
                Level::A => 1,
                Level::B => 2,
                Level::C => 3,
            };
            let cfg = m.agent_config(&spec.name, host.me(), level);
            let manager = m.manager_priority.map(|p| (p, m.sm_key, m.pool));
            scope.spawn(move || {
                management::run(host, cfg, manager, &mgmt_rx, &|| host.stopping(stop))
            });
        }
        while !host.stopping(stop) {
            match listener.accept() {
                Ok((conn, _)) => {
                    // The accepted stream must block (with a timeout).
                    if conn.set_nonblocking(false).is_ok() {
                        scope.spawn(move || host.serve(scope, conn, stop));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(10))
                }
                Err(_) => thread::sleep(POLL),
            }
        }
    });
    Ok(())
}

/// The body of `mwlab host --spec FILE`: reads the spec and runs the host
/// until SIGINT, SIGTERM or a `quit` request.
pub fn main_from_spec_file(path: &Path) -> Result<(), String> {
    let spec = read_spec(path)?;
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).map_err(|e| format!("signal: {e}"))?;
    }
    run(&spec, &stop)
}
