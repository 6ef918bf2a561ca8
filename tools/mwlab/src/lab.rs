//! A running lab: the mwrouterd and host processes of a [`Plan`], their
//! state file (so that `mwlab status` and `mwlab down` find them from another
//! invocation), and what the lab asks them (FIBs through the admin socket,
//! counters from the hosts' control sockets).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::host::Client;
use crate::netns::{self, Made};
use crate::plan::{Plan, Wiring};

/// The state file in the lab's directory.
pub const STATE_FILE: &str = "lab.json";

/// One process of the lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Proc {
    /// `router` or `host`.
    pub role: String,
    /// Its name in the topology.
    pub name: String,
    /// Its process id.
    pub pid: u32,
    /// Its log file.
    pub log: PathBuf,
}

/// What `mwlab status` and `mwlab down` read back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// The plan.
    pub plan: Plan,
    /// The processes.
    pub procs: Vec<Proc>,
    /// The namespaces and bridges of a netns lab.
    #[serde(default)]
    pub made: Made,
}

/// A lab this process started (its children are reaped on drop).
#[derive(Debug)]
pub struct Lab {
    /// The plan.
    pub plan: Plan,
    /// The processes.
    pub procs: Vec<Proc>,
    children: Vec<Option<Child>>,
    /// The namespaces and bridges of a netns lab.
    pub made: Made,
    /// Whether dropping the lab stops it (true unless detached).
    pub stop_on_drop: bool,
}

/// The program that runs the roles: the mwlab binary itself (`mwlab router
/// --config FILE` is mwrouterd, `mwlab host --spec FILE` a host).
#[derive(Debug, Clone)]
pub struct Binaries {
    /// mwlab.
    pub mwlab: PathBuf,
}

impl Binaries {
    /// The running executable.
    pub fn current() -> Result<Binaries, String> {
        Ok(Binaries {
            mwlab: std::env::current_exe().map_err(|e| e.to_string())?,
        })
    }
}

fn signal(pid: u32, sig: rustix::process::Signal) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|p| rustix::process::kill_process(p, sig).is_ok())
}

/// Whether process `pid` is alive (and not a zombie of ours).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    while !f() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

impl Lab {
    /// Writes the configurations and starts every process; returns when each
    /// router's admin socket and each host's control socket answer.
    pub fn up(plan: Plan, bins: &Binaries) -> Result<Lab, String> {
        std::fs::create_dir_all(&plan.dir).map_err(|e| format!("{}: {e}", plan.dir.display()))?;
        let made = match plan.wiring {
            Wiring::Udp => Made::default(),
            Wiring::Netns { .. } => netns::build(&plan)?,
        };
        let mut lab = Lab {
            plan,
            procs: Vec::new(),
            children: Vec::new(),
            made,
            stop_on_drop: true,
        };
        if let Some(text) = lab.plan.partitions_file() {
            let path = lab.plan.partitions_path();
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for i in 0..lab.plan.routers.len() {
            let r = lab.plan.routers[i].clone();
            std::fs::write(&r.config, lab.plan.daemon_config_toml(i))
                .map_err(|e| format!("{}: {e}", r.config.display()))?;
            let log = lab.plan.dir.join(format!("{}.log", r.name));
            let child = spawn(
                in_netns(r.netns.as_deref(), &bins.mwlab)
                    .arg("router")
                    .arg("--config")
                    .arg(&r.config),
                &log,
            )?;
            lab.push("router", &r.name, child, log);
        }
        for h in lab.plan.hosts.clone() {
            let spec = serde_json::to_string_pretty(&h.spec).expect("plain data");
            std::fs::write(&h.spec_file, spec)
                .map_err(|e| format!("{}: {e}", h.spec_file.display()))?;
            let log = lab.plan.dir.join(format!("{}.log", h.spec.name));
            let child = spawn(
                in_netns(h.netns.as_deref(), &bins.mwlab)
                    .arg("host")
                    .arg("--spec")
                    .arg(&h.spec_file),
                &log,
            )?;
            lab.push("host", &h.spec.name, child, log);
        }
        lab.save()?;
        for (i, r) in lab.plan.routers.clone().iter().enumerate() {
            let pid = lab.procs[i].pid;
            wait_for(
                &format!("router {}", r.name),
                Duration::from_secs(20),
                || r.socket.exists() || !alive(pid),
            )?;
            if !alive(pid) {
                return Err(format!(
                    "router {} exited: {}",
                    r.name,
                    tail(&lab.procs[i].log)
                ));
            }
        }
        let nr = lab.plan.routers.len();
        for (i, h) in lab.plan.hosts.clone().iter().enumerate() {
            let pid = lab.procs[nr + i].pid;
            wait_for(
                &format!("host {}", h.spec.name),
                Duration::from_secs(20),
                || h.spec.control.exists() || !alive(pid),
            )?;
            if !alive(pid) {
                return Err(format!(
                    "host {} exited: {}",
                    h.spec.name,
                    tail(&lab.procs[nr + i].log)
                ));
            }
        }
        Ok(lab)
    }

    fn push(&mut self, role: &str, name: &str, child: Child, log: PathBuf) {
        self.procs.push(Proc {
            role: role.into(),
            name: name.into(),
            pid: child.id(),
            log,
        });
        self.children.push(Some(child));
    }

    /// Writes the state file.
    pub fn save(&self) -> Result<(), String> {
        let st = State {
            plan: self.plan.clone(),
            procs: self.procs.clone(),
            made: self.made.clone(),
        };
        let path = self.plan.dir.join(STATE_FILE);
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&st).expect("plain data"),
        )
        .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The index of process `name` of `role` ("router", "host").
    fn proc_index(&self, role: &str, name: &str) -> Result<usize, String> {
        self.procs
            .iter()
            .position(|p| p.role == role && p.name == name)
            .ok_or_else(|| format!("no {role} {name}"))
    }

    /// Kills process `i` at once (SIGKILL) and reaps it.
    fn kill_proc(&mut self, i: usize) {
        if let Some(c) = self.children[i].as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        } else {
            signal(self.procs[i].pid, rustix::process::Signal::KILL);
        }
    }

    /// Starts process `i` again as `cmd` (its log goes on in
    /// `NAME.restarted.log`), saves the state, and returns once `ready`
    /// exists (its socket), or an error with its log's tail if it exits
    /// first.
    fn respawn(&mut self, i: usize, cmd: &mut Command, ready: &Path) -> Result<(), String> {
        let (role, name) = (self.procs[i].role.clone(), self.procs[i].name.clone());
        let _ = std::fs::remove_file(ready);
        let log = self.plan.dir.join(format!("{name}.restarted.log"));
        let child = spawn(cmd, &log)?;
        let pid = child.id();
        self.procs[i].pid = pid;
        self.procs[i].log = log;
        self.children[i] = Some(child);
        self.save()?;
        wait_for(&format!("{role} {name}"), Duration::from_secs(20), || {
            ready.exists() || !alive(pid)
        })?;
        if !alive(pid) {
            return Err(format!(
                "{role} {name} exited: {}",
                tail(&self.procs[i].log)
            ));
        }
        Ok(())
    }

    /// Kills router `name` at once (SIGKILL: a crash, not a shutdown).
    pub fn kill_router(&mut self, name: &str) -> Result<(), String> {
        let i = self.proc_index("router", name)?;
        self.kill_proc(i);
        Ok(())
    }

    /// Sends router `name` `sig` (none: it was told to stop otherwise, as
    /// by `mwctl drain`; SIGTERM drains first with `drain.on_sigterm`:
    /// docs/daemon.md "Draining before maintenance") and waits at most
    /// `timeout` for it to exit; how long it took.
    pub fn stop_router(
        &mut self,
        name: &str,
        sig: Option<rustix::process::Signal>,
        timeout: Duration,
    ) -> Result<Duration, String> {
        let i = self.proc_index("router", name)?;
        let start = Instant::now();
        let pid = self.procs[i].pid;
        if let Some(sig) = sig {
            signal(pid, sig);
        }
        match self.children[i].as_mut() {
            Some(c) => wait_for(&format!("router {name} to stop"), timeout, || {
                matches!(c.try_wait(), Ok(Some(_)))
            })?,
            None => wait_for(&format!("router {name} to stop"), timeout, || !alive(pid))?,
        }
        Ok(start.elapsed())
    }

    /// Starts router `name` again from its configuration (after
    /// [`Lab::stop_router`] or [`Lab::kill_router`]), with `bins` (the same
    /// binary or a new one); returns when its admin socket answers. Its log
    /// goes on in `NAME.restarted.log`.
    pub fn start_router(&mut self, name: &str, bins: &Binaries) -> Result<(), String> {
        let i = self.proc_index("router", name)?;
        let r = self
            .plan
            .routers
            .iter()
            .find(|r| r.name == name)
            .cloned()
            .ok_or_else(|| format!("no router {name}"))?;
        let mut cmd = in_netns(r.netns.as_deref(), &bins.mwlab);
        cmd.arg("router").arg("--config").arg(&r.config);
        self.respawn(i, &mut cmd, &r.socket)
    }

    /// Kills host `name` (SIGKILL) and starts it again from its spec (a
    /// host without an address starts without one again); returns when its
    /// control socket answers. Its log goes on in `NAME.restarted.log`.
    pub fn restart_host(&mut self, name: &str, bins: &Binaries) -> Result<(), String> {
        let i = self.proc_index("host", name)?;
        let h = self
            .plan
            .hosts
            .iter()
            .find(|h| h.spec.name == name)
            .cloned()
            .ok_or_else(|| format!("no host {name}"))?;
        self.kill_proc(i);
        let mut cmd = in_netns(h.netns.as_deref(), &bins.mwlab);
        cmd.arg("host").arg("--spec").arg(&h.spec_file);
        self.respawn(i, &mut cmd, &h.spec.control)
    }

    /// Stops every process (SIGTERM, then SIGKILL after 3 s) and removes the
    /// lab's directory.
    pub fn down(mut self) -> Result<(), String> {
        self.stop_all();
        self.stop_on_drop = false;
        remove_dir(&self.plan.dir)
    }

    fn stop_all(&mut self) {
        stop_procs(&self.procs);
        for c in self.children.iter_mut().flatten() {
            let _ = c.wait();
        }
        self.made.remove();
        self.made = Made::default();
    }

    /// The state of router `name`'s process.
    pub fn router_alive(&self, name: &str) -> bool {
        self.procs
            .iter()
            .any(|p| p.role == "router" && p.name == name && alive(p.pid))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if self.stop_on_drop {
            self.stop_all();
            let _ = remove_dir(&self.plan.dir);
        }
    }
}

/// A command running `program` in namespace `ns` (`ip netns exec`, which
/// execs it: the process id is the program's), or directly.
fn in_netns(ns: Option<&str>, program: &Path) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

fn spawn(cmd: &mut Command, log: &Path) -> Result<Child, String> {
    let f = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let f2 = f.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(f))
        .stderr(Stdio::from(f2))
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))
}

/// The last lines of a log file.
pub fn tail(path: &Path) -> String {
    let s = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// Stops processes: SIGTERM, up to 3 s, then SIGKILL.
pub fn stop_procs(procs: &[Proc]) {
    for p in procs {
        signal(p.pid, rustix::process::Signal::TERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while procs.iter().any(|p| alive(p.pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in procs.iter().filter(|p| alive(p.pid)) {
        signal(p.pid, rustix::process::Signal::KILL);
    }
}

fn remove_dir(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// Reads a lab's state file.
pub fn load_state(dir: &Path) -> Result<State, String> {
    let path = dir.join(STATE_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (no lab there? `mwlab up` first)", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Stops the lab described in `dir` (from another invocation) and removes
/// the directory.
pub fn down_dir(dir: &Path) -> Result<usize, String> {
    let st = load_state(dir)?;
    stop_procs(&st.procs);
    st.made.remove();
    remove_dir(dir)?;
    Ok(st.procs.len())
}

/// Asks router admin socket `sock` (mwctl's library, JSON answer).
pub fn mwctl(sock: &Path, args: &[&str]) -> Result<Value, String> {
    let mut all = vec![
        "mwctl".to_string(),
        "--socket".into(),
        sock.display().to_string(),
        "--json".into(),
        "--timeout".into(),
        "2".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = mwctl::main_with(all, &mut out, &mut err);
    if code != 0 {
        return Err(String::from_utf8_lossy(&err).trim().to_string());
    }
    serde_json::from_slice(&out).map_err(|e| format!("mwctl's answer: {e}"))
}

/// One FIB entry as the routers report it: (router, ingress port, dst) ->
/// (q, egress port or None for local, native next hop).
pub type FibMap = BTreeMap<(String, u16, u16), (u16, Option<u16>, String)>;

fn hex16(v: &Value) -> Option<u16> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        Value::String(s) => u16::from_str_radix(s.trim_start_matches("0x"), 16).ok(),
        _ => None,
    }
}

/// The FIBs of the routers whose processes are alive.
pub fn fibs(plan: &Plan, skip: &[String]) -> FibMap {
    let mut m = FibMap::new();
    for r in &plan.routers {
        if skip.contains(&r.name) {
            continue;
        }
        let Ok(v) = mwctl(&r.socket, &["show", "fib"]) else {
            continue;
        };
        let rows = v.as_array().cloned().unwrap_or_default();
        for row in rows {
            let (Some(port), Some(dst), Some(q)) = (
                row.get("port").and_then(Value::as_u64),
                row.get("dst").and_then(hex16),
                row.get("q").and_then(Value::as_u64),
            ) else {
                continue;
            };
            let egress = row.get("egress").and_then(Value::as_u64).map(|e| e as u16);
            let native = row
                .get("native")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            m.insert(
                (r.name.clone(), port as u16, dst),
                (q as u16, egress, native),
            );
        }
    }
    m
}

/// A host's control client.
pub fn host_client(plan: &Plan, name: &str) -> Result<Client, String> {
    let h = plan
        .hosts
        .iter()
        .find(|h| h.spec.name == name)
        .ok_or_else(|| format!("no host {name}"))?;
    Client::connect(&h.spec.control, Duration::from_secs(3))
}
