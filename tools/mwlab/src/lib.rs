//! mwlab: a whole MessageWay on one machine (docs/architecture.md "Who uses it"): one
//! router process (mwrouterd's code) per router and one host process (a real
//! MessageWay node) per host, wired on loopback UDP as a topology file says
//! (the format mwsim reads), converged, exercised and torn down.
//!
//! - [`plan`]: from a topology to router configurations and host specs;
//! - [`lab`]: the processes, their state file, what the lab asks them;
//! - [`netns`]: namespaces, bridges and veths of a `--netns` lab;
//! - [`host`]: the host role and its control socket, and
//!   [`host::management`], a host's in-band management (agent, client,
//!   admin socket);
//! - [`checks`]: the checks (convergence, agreement with mwsim, paths through
//!   the routers' FIBs, traffic, HR-DOWN);
//! - [`tour`]: `mwlab demo`, the checks in order;
//! - [`cli`]: the command line.
//!
//! docs/mwlab.md is the user's guide.

pub mod checks;
pub mod cli;
pub mod host;
pub mod lab;
pub mod netns;
pub mod plan;
pub mod tour;
