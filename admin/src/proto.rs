//! The admin protocol's messages (docs/admin-protocol.md).
//!
//! One JSON object per line each way. A request carries the protocol
//! version `v`, an optional `id` the answer echoes, and a command tagged by
//! `cmd` whose fields sit beside `v` and `id`:
//!
//! ```text
//! {"v":1,"id":7,"cmd":"show","what":"lrt","port":0}
//! {"v":1,"id":7,"ok":true,"result":[...]}
//! {"v":1,"id":7,"ok":false,"error":{"code":"forbidden","message":"..."}}
//! ```
//!
//! A streaming command (`capture`) is answered by several lines: each but
//! the last has `"more":true`.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use rrp::{Address, PortId};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request or response line, newline included (64 KiB).
/// A longer request is refused with [`AdminErrorCode::TooLong`] and the
/// connection closed. Streamed packets are cut to fit (see
/// [`CAPTURE_MAX_SNAPLEN`]).
pub const MAX_LINE: usize = 64 * 1024;

/// The largest snap length a capture may ask for: a captured packet's
/// base64 text then still fits one line.
pub const CAPTURE_MAX_SNAPLEN: u32 = 16 * 1024;

// ----- addresses and ports ---------------------------------------------------

/// A port of the box: its index (`0`, `1`, ...; a JSON number) or its
/// HR's address (`"0x0101"`; a JSON string with `0x`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PortSpec {
    /// The port's index.
    Index(PortId),
    /// The address of the port's HR.
    Hr(Address),
}

impl fmt::Display for PortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortSpec::Index(i) => write!(f, "{i}"),
            PortSpec::Hr(a) => write!(f, "{a}"),
        }
    }
}

impl FromStr for PortSpec {
    type Err = String;
    /// `3` is port 3; `0x0101` is the port whose HR has that address.
    fn from_str(s: &str) -> Result<PortSpec, String> {
        let t = s.trim();
        if t.starts_with("0x") || t.starts_with("0X") {
            t.parse::<Address>()
                .map(PortSpec::Hr)
                .map_err(|e| e.to_string())
        } else {
            t.parse::<u16>().map(|i| PortSpec::Index(PortId(i))).map_err(|_| {
                format!(
                    "not a port: {s:?} (a port index such as 0, or an HR address such as 0x0101)"
                )
            })
        }
    }
}

impl Serialize for PortSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PortSpec::Index(i) => i.serialize(s),
            PortSpec::Hr(a) => a.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PortSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PortSpec, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = PortSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a port index (0) or an HR address (\"0x0101\")")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PortSpec, E> {
                u16::try_from(v)
                    .map(|i| PortSpec::Index(PortId(i)))
                    .map_err(|_| E::custom(format!("port index {v} is too large")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PortSpec, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("port index {v} is negative")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PortSpec, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

// ----- commands --------------------------------------------------------------

/// What `show` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Show {
    /// The box: name, HR count, FIB version, known SANs, uptime.
    Router {},
    /// The running configuration, in the TOML the daemon reads
    /// (`{"toml": "..."}`).
    Config {},
    /// Every HR: address, SAN, MTU, cost, state, table sizes.
    Hrs {},
    /// Every port: backend, state, HR, traffic totals.
    Ports {},
    /// The LRT of one HR (or of all).
    Lrt {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The RTs an HR keeps (learned and twin-derived).
    Rts {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
        /// Only RTs of this SAN.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        san: Option<Address>,
    },
    /// The best route of an HR to every destination it knows.
    Routes {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The FIB entries the workers use.
    Fib {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The other routers (buddies) on each HR's SAN.
    Neighbors {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The dataplane counters per port, drops by reason.
    Counters {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The lookup a packet to `dst` gets on each ingress HR (or one).
    Route {
        /// The destination.
        dst: Address,
        /// Only this ingress port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
    /// The in-band management agent: identity, M_Key state (never the
    /// key), counters, the notices received
    /// ([`crate::view::ManagementInfo`]).
    Management {},
    /// The multicast groups: member SANs, branches, counters
    /// ([`crate::view::McastInfo`]).
    Mcast {},
    /// The dataplane's workers: core, the ports each receives from, its
    /// packets ([`crate::view::WorkerRow`]).
    Workers {},
}

impl Show {
    /// The `what` of this target.
    pub fn name(&self) -> &'static str {
        match self {
            Show::Router {} => "router",
            Show::Config {} => "config",
            Show::Hrs {} => "hrs",
            Show::Ports {} => "ports",
            Show::Lrt { .. } => "lrt",
            Show::Rts { .. } => "rts",
            Show::Routes { .. } => "routes",
            Show::Fib { .. } => "fib",
            Show::Neighbors { .. } => "neighbors",
            Show::Counters { .. } => "counters",
            Show::Route { .. } => "route",
            Show::Management {} => "management",
            Show::Mcast {} => "mcast",
            Show::Workers {} => "workers",
        }
    }
}

/// A port's administrative state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortState {
    /// Enabled.
    Up,
    /// Disabled: the HR is down (LINK-DOWN handling).
    Down,
}

/// A change of the static LRT entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum RouteOp {
    /// Adds (or replaces) a static LRT entry on one HR.
    Add {
        /// The HR (port) whose SAN the node is on.
        port: PortSpec,
        /// The node's address.
        dst: Address,
        /// Its native address on that SAN: `02:00:00:00:00:01` (MAC),
        /// `127.0.0.1:7000` or `[::1]:7000` (UDP), or colon-separated hex.
        native: String,
        /// Its name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Whether it is a router HR (capability 2).
        #[serde(default, skip_serializing_if = "is_false")]
        router: bool,
        /// The groups (logical addresses) it listens to (docs/multicast.md).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        groups: Vec<Address>,
    },
    /// Removes a static LRT entry.
    Del {
        /// The HR (port).
        port: PortSpec,
        /// The node's address.
        dst: Address,
    },
}

/// What `clear` clears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Clear {
    /// The dataplane counters (of one port, or all).
    Counters {
        /// Only this port.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        port: Option<PortSpec>,
    },
}

/// The daemon's log level: `log.level` in its configuration, `log_level`
/// here (the most detailed level logged).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// The default.
    #[default]
    Info,
    /// Protocol events.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// The level's name (also what `tracing`'s filters take).
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// How `stats` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatsFormat {
    /// A [`crate::admin::view::Stats`] object.
    #[default]
    Json,
    /// `{"text": "..."}` in the Prometheus text exposition format.
    Prometheus,
}

/// A request's command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Reads a table (read-only).
    Show(Show),
    /// Sets a port up or down (admin).
    Port {
        /// The port.
        port: PortSpec,
        /// Its new state.
        state: PortState,
    },
    /// Adds or removes a static LRT entry (admin).
    Route(RouteOp),
    /// Clears counters (admin).
    Clear(Clear),
    /// Sets the daemon's log level (admin).
    LogLevel {
        /// The level.
        level: LogLevel,
    },
    /// Reloads the configuration file (admin).
    Reload {},
    /// Streams the packets of a port (admin; see [`CaptureEvent`]).
    Capture {
        /// The port.
        port: PortSpec,
        /// Stop after this many packets (default: until the client leaves).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        /// Also the packets the dataplane drops on this port, each with
        /// its reason.
        #[serde(default, skip_serializing_if = "is_false")]
        drops: bool,
        /// The packets queued for transmission on this port instead of those
        /// received: forwarded to it, or sent by the control plane.
        #[serde(default, skip_serializing_if = "is_false")]
        transmitted: bool,
        /// Bytes kept of each packet (default and maximum
        /// [`CAPTURE_MAX_SNAPLEN`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snaplen: Option<u32>,
    },
    /// Traffic and control-plane totals (read-only).
    Stats {
        /// JSON or Prometheus text.
        #[serde(default, skip_serializing_if = "is_default_format")]
        format: StatsFormat,
    },
    /// The daemon's and the protocol's versions (read-only).
    Version {},
    /// Sends one management datagram to a node and answers with its
    /// response (admin; [`crate::mad`]).
    Mad(crate::mad::MadQuery),
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default_format(f: &StatsFormat) -> bool {
    *f == StatsFormat::Json
}

/// Who may do what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Privilege {
    /// May only read.
    ReadOnly,
    /// May change things.
    Admin,
}

impl Privilege {
    /// The privilege's name.
    pub fn name(self) -> &'static str {
        match self {
            Privilege::ReadOnly => "read_only",
            Privilege::Admin => "admin",
        }
    }
}

impl Command {
    /// Every `cmd` name, in documentation order.
    pub const NAMES: [&'static str; 10] = [
        "show",
        "port",
        "route",
        "clear",
        "log_level",
        "reload",
        "capture",
        "stats",
        "version",
        "mad",
    ];

    /// The command's `cmd` name.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Show(_) => "show",
            Command::Port { .. } => "port",
            Command::Route(_) => "route",
            Command::Clear(_) => "clear",
            Command::LogLevel { .. } => "log_level",
            Command::Reload {} => "reload",
            Command::Capture { .. } => "capture",
            Command::Stats { .. } => "stats",
            Command::Version {} => "version",
            Command::Mad(_) => "mad",
        }
    }

    /// Whether the command changes something (or, for `capture`, reveals
    /// traffic) and so needs [`Privilege::Admin`].
    pub fn needs_admin(&self) -> bool {
        match self {
            Command::Show(_) | Command::Stats { .. } | Command::Version {} => false,
            Command::Port { .. }
            | Command::Route(_)
            | Command::Clear(_)
            | Command::LogLevel { .. }
            | Command::Reload {}
            | Command::Capture { .. }
            | Command::Mad(_) => true,
        }
    }

    /// The privilege the command needs.
    pub fn privilege(&self) -> Privilege {
        if self.needs_admin() {
            Privilege::Admin
        } else {
            Privilege::ReadOnly
        }
    }

    /// Whether the answer is a stream of lines (`capture`).
    pub fn streams(&self) -> bool {
        matches!(self, Command::Capture { .. })
    }
}

// ----- requests --------------------------------------------------------------

/// One request line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    /// Protocol version ([`PROTOCOL_VERSION`]).
    pub v: u32,
    /// Echoed in the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// The command; its fields sit beside `v` and `id`.
    #[serde(flatten)]
    pub cmd: Command,
}

/// A request that could not be read: the error to answer with, and the
/// request's `id` when it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRequest {
    /// The request's `id`, if any.
    pub id: Option<u64>,
    /// What is wrong.
    pub error: AdminError,
}

impl Request {
    /// A version-1 request.
    pub fn new(id: Option<u64>, cmd: Command) -> Request {
        Request {
            v: PROTOCOL_VERSION,
            id,
            cmd,
        }
    }

    /// The request as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a request serializes");
        s.push('\n');
        s
    }

    /// Reads one request line (without its newline). Errors are classified
    /// as the protocol says: `bad_json` (not JSON, or not UTF-8),
    /// `bad_request` (not an object, missing or mistyped fields),
    /// `bad_version`, `unknown_command`.
    pub fn parse(line: &[u8]) -> Result<Request, BadRequest> {
        let value: Value = serde_json::from_slice(line).map_err(|e| BadRequest {
            id: None,
            error: AdminError::new(AdminErrorCode::BadJson, format!("not JSON: {e}")),
        })?;
        Request::from_value(value)
    }

    /// Reads a request from a parsed JSON value.
    pub fn from_value(value: Value) -> Result<Request, BadRequest> {
        let bad = |id, code, msg: String| BadRequest {
            id,
            error: AdminError::new(code, msg),
        };
        let Value::Object(mut map) = value else {
            return Err(bad(
                None,
                AdminErrorCode::BadRequest,
                "a request is a JSON object".into(),
            ));
        };
        let id = match map.remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
            Some(other) => {
                return Err(bad(
                    None,
                    AdminErrorCode::BadRequest,
                    format!("\"id\" must be an unsigned integer, not {other}"),
                ));
            }
        };
        let v = match map.remove("v") {
            None => {
                return Err(bad(
                    id,
                    AdminErrorCode::BadRequest,
                    "missing \"v\" (the protocol version, 1)".into(),
                ));
            }
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
            Some(other) => {
                return Err(bad(
                    id,
                    AdminErrorCode::BadRequest,
                    format!("\"v\" must be an unsigned integer, not {other}"),
                ));
            }
        };
        if v != u64::from(PROTOCOL_VERSION) {
            return Err(bad(
                id,
                AdminErrorCode::BadVersion,
                format!(
                    "protocol version {v} is not supported (this daemon speaks {PROTOCOL_VERSION})"
                ),
            ));
        }
        match map.get("cmd") {
            None => {
                return Err(bad(
                    id,
                    AdminErrorCode::BadRequest,
                    "missing \"cmd\"".into(),
                ));
            }
            Some(Value::String(c)) => {
                if !Command::NAMES.contains(&c.as_str()) {
                    let mut c = c.clone();
                    truncate_at_char(&mut c, 64);
                    return Err(bad(
                        id,
                        AdminErrorCode::UnknownCommand,
                        format!(
                            "unknown command {c:?} (known: {})",
                            Command::NAMES.join(", ")
                        ),
                    ));
                }
            }
            Some(other) => {
                return Err(bad(
                    id,
                    AdminErrorCode::BadRequest,
                    format!("\"cmd\" must be a string, not {}", json_type(other)),
                ));
            }
        }
        // serde would take a number as a variant's index: tags are names.
        for tag in ["what", "op"] {
            if let Some(t) = map.get(tag)
                && !t.is_string()
            {
                return Err(bad(
                    id,
                    AdminErrorCode::BadRequest,
                    format!("\"{tag}\" must be a string, not {}", json_type(t)),
                ));
            }
        }
        let cmd: Command = serde_json::from_value(Value::Object(map))
            .map_err(|e| bad(id, AdminErrorCode::BadRequest, e.to_string()))?;
        Ok(Request {
            v: PROTOCOL_VERSION,
            id,
            cmd,
        })
    }
}

impl<'de> Deserialize<'de> for Request {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Request, D::Error> {
        let v = Value::deserialize(d)?;
        Request::from_value(v).map_err(|e| de::Error::custom(e.error.message))
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut i = max;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        s.truncate(i);
        s.push('…');
    }
}

// ----- responses -------------------------------------------------------------

/// Why an admin request failed (the admin protocol's codes; the draft's
/// ERR codes are `rrp::ErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdminErrorCode {
    /// The line is not JSON (or not UTF-8).
    BadJson,
    /// JSON, but not a valid request: not an object, a missing field, a
    /// field of the wrong type, an unknown field or value.
    BadRequest,
    /// A protocol version this daemon does not speak.
    BadVersion,
    /// `cmd` names no command.
    UnknownCommand,
    /// The line is longer than [`MAX_LINE`]; the connection is closed.
    TooLong,
    /// The peer may not do this (or may not use the socket at all).
    Forbidden,
    /// The command was valid but did not succeed.
    Failed,
    /// The port, address or entry named does not exist.
    NotFound,
    /// No complete request line arrived in time; the connection is closed.
    Timeout,
    /// Too many clients; the connection is closed.
    Busy,
    /// The daemon does not implement this (yet, or for this port).
    Unsupported,
    /// An in-band request (`mad`) got no answer after every try.
    NoAnswer,
    /// A code this client does not know (a newer daemon).
    #[serde(other)]
    Other,
}

impl AdminErrorCode {
    /// The code as it appears on the wire.
    pub fn name(self) -> &'static str {
        match self {
            AdminErrorCode::BadJson => "bad_json",
            AdminErrorCode::BadRequest => "bad_request",
            AdminErrorCode::BadVersion => "bad_version",
            AdminErrorCode::UnknownCommand => "unknown_command",
            AdminErrorCode::TooLong => "too_long",
            AdminErrorCode::Forbidden => "forbidden",
            AdminErrorCode::Failed => "failed",
            AdminErrorCode::NotFound => "not_found",
            AdminErrorCode::Timeout => "timeout",
            AdminErrorCode::Busy => "busy",
            AdminErrorCode::Unsupported => "unsupported",
            AdminErrorCode::NoAnswer => "no_answer",
            AdminErrorCode::Other => "other",
        }
    }
}

impl fmt::Display for AdminErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error answer: `{"code": "...", "message": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminError {
    /// Machine-readable.
    pub code: AdminErrorCode,
    /// For people.
    pub message: String,
}

impl AdminError {
    /// An error with this code and message.
    pub fn new(code: AdminErrorCode, message: impl Into<String>) -> AdminError {
        AdminError {
            code,
            message: message.into(),
        }
    }

    /// `failed`.
    pub fn failed(message: impl Into<String>) -> AdminError {
        AdminError::new(AdminErrorCode::Failed, message)
    }

    /// `not_found`.
    pub fn not_found(message: impl Into<String>) -> AdminError {
        AdminError::new(AdminErrorCode::NotFound, message)
    }

    /// `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> AdminError {
        AdminError::new(AdminErrorCode::BadRequest, message)
    }

    /// `unsupported`.
    pub fn unsupported(message: impl Into<String>) -> AdminError {
        AdminError::new(AdminErrorCode::Unsupported, message)
    }

    /// `forbidden`.
    pub fn forbidden(message: impl Into<String>) -> AdminError {
        AdminError::new(AdminErrorCode::Forbidden, message)
    }
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AdminError {}

/// One response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Protocol version.
    pub v: u32,
    /// The request's `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// Success.
    pub ok: bool,
    /// More lines follow for the same request (streams only).
    #[serde(default, skip_serializing_if = "is_false")]
    pub more: bool,
    /// The answer, when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What went wrong, when not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<AdminError>,
}

impl Response {
    /// A final success.
    pub fn ok(id: Option<u64>, result: Value) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            id,
            ok: true,
            more: false,
            result: Some(result),
            error: None,
        }
    }

    /// One item of a stream (`"more": true`).
    pub fn item(id: Option<u64>, result: Value) -> Response {
        Response {
            more: true,
            ..Response::ok(id, result)
        }
    }

    /// A failure.
    pub fn err(id: Option<u64>, error: AdminError) -> Response {
        Response {
            v: PROTOCOL_VERSION,
            id,
            ok: false,
            more: false,
            result: None,
            error: Some(error),
        }
    }

    /// The response as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a response serializes");
        s.push('\n');
        s
    }

    /// Reads a response line.
    pub fn parse(line: &[u8]) -> Result<Response, serde_json::Error> {
        serde_json::from_slice(line)
    }

    /// The result or the error.
    pub fn into_result(self) -> Result<Value, AdminError> {
        if self.ok {
            Ok(self.result.unwrap_or(Value::Null))
        } else {
            Err(self.error.unwrap_or_else(|| {
                AdminError::new(AdminErrorCode::Other, "error response without an error")
            }))
        }
    }
}

// ----- capture ---------------------------------------------------------------

/// Direction of a captured packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Received on the port.
    Rx,
    /// Transmitted on the port.
    Tx,
}

/// A `capture` command's request, checked: what every handler of the
/// command serves (the daemon, the sample).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureRequest {
    /// The port.
    pub port: PortSpec,
    /// Stop after this many packets (`None`: until the client leaves).
    pub count: Option<u64>,
    /// Also the packets dropped on the port, with their reasons.
    pub drops: bool,
    /// What the port transmits instead of what it receives.
    pub transmitted: bool,
    /// Bytes kept of each packet (at most [`CAPTURE_MAX_SNAPLEN`]).
    pub snaplen: u32,
}

impl CaptureRequest {
    /// The request of `cmd`: `None` when it is not `capture`, a
    /// `bad-request` error when it asks for `drops` and `transmitted`
    /// together (checked before anything is streamed).
    pub fn of(cmd: &Command) -> Option<Result<CaptureRequest, AdminError>> {
        let Command::Capture {
            port,
            count,
            drops,
            transmitted,
            snaplen,
        } = cmd
        else {
            return None;
        };
        if *drops && *transmitted {
            return Some(Err(AdminError::bad_request(
                "capture: `drops` and `transmitted` exclude each other",
            )));
        }
        Some(Ok(CaptureRequest {
            port: *port,
            count: *count,
            drops: *drops,
            transmitted: *transmitted,
            snaplen: snaplen
                .unwrap_or(CAPTURE_MAX_SNAPLEN)
                .min(CAPTURE_MAX_SNAPLEN),
        }))
    }

    /// The direction of the packets it captures.
    pub fn direction(&self) -> Direction {
        if self.transmitted {
            Direction::Tx
        } else {
            Direction::Rx
        }
    }
}

/// A captured packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedPacket {
    /// Time, nanoseconds since the UNIX epoch.
    pub ts_ns: u64,
    /// Received or transmitted.
    pub dir: Direction,
    /// The packet's length on the wire (the data may be shorter: snap length).
    pub len: u32,
    /// The bytes kept, base64 (RFC 4648, with padding).
    pub data: String,
    /// The dataplane dropped it, for this reason (`no-route`, `mtu`, ...;
    /// the names of `rrp::DropReason::name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<String>,
}

impl CapturedPacket {
    /// A packet from its bytes, keeping at most `snaplen` of them.
    pub fn new(ts_ns: u64, dir: Direction, bytes: &[u8], snaplen: u32) -> CapturedPacket {
        let keep = bytes.len().min(snaplen as usize);
        CapturedPacket {
            ts_ns,
            dir,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
            data: base64_encode(&bytes[..keep]),
            drop: None,
        }
    }

    /// The bytes kept.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        base64_decode(&self.data)
    }
}

/// The streamed items of a capture (each a `"more": true` line's result).
/// The final line's result is a [`CaptureSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaptureEvent {
    /// First item: what the packets are.
    Start {
        /// The port.
        port: PortId,
        /// Its HR's address.
        hr: Address,
        /// pcap link type: 1 (Ethernet frames as on the wire) or 147
        /// (LINKTYPE_USER0: raw MessageWay packets, e.g. UDP payloads).
        linktype: u32,
        /// Bytes kept per packet.
        snaplen: u32,
    },
    /// A packet.
    Packet(CapturedPacket),
}

/// The final answer to a capture.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureSummary {
    /// Packets sent to the client.
    pub captured: u64,
    /// Packets the capture could not keep up with (not sent).
    #[serde(default)]
    pub lost: u64,
    /// Why the capture ended: `count` (reached), `client` (the client
    /// left), `stopped` (the daemon stops), `port` (the port went away).
    #[serde(default)]
    pub ended: String,
    /// Captured drops by reason (`--drops`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drops: BTreeMap<String, u64>,
}

// ----- base64 ----------------------------------------------------------------

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 (RFC 4648, standard alphabet, padded).
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes [`base64_encode`]'s output (padding required); `None` if invalid.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let quads = s.len() / 4;
    for (qi, q) in s.chunks(4).enumerate() {
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && qi + 1 != quads) {
            return None;
        }
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            n = (n << 6) | val(c)?;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// A JSON object from pairs (for handlers building small answers).
pub fn object<I, K>(pairs: I) -> Value
where
    I: IntoIterator<Item = (K, Value)>,
    K: Into<String>,
{
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect::<Map<_, _>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for n in 0..40usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let e = base64_encode(&data);
            assert_eq!(base64_decode(&e).as_deref(), Some(&data[..]), "{e}");
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_decode("Zm9=vYmFy"), None);
        assert_eq!(base64_decode("Zm8"), None);
        assert_eq!(base64_decode("Z!8="), None);
    }

    #[test]
    fn addresses_and_ports() {
        assert_eq!("0x0101".parse::<Address>(), Ok(Address(0x101)));
        assert_eq!("257".parse::<Address>(), Ok(Address(257)));
        assert!("0x10000".parse::<Address>().is_err());
        assert_eq!("3".parse::<PortSpec>(), Ok(PortSpec::Index(PortId(3))));
        assert_eq!(
            "0x0115".parse::<PortSpec>(),
            Ok(PortSpec::Hr(Address(0x115)))
        );
        assert!("eth0".parse::<PortSpec>().is_err());
        let v: Value = serde_json::to_value(PortSpec::Hr(Address(0x115))).unwrap();
        assert_eq!(v, Value::String("0x0115".into()));
    }

    #[test]
    fn request_shape() {
        let r = Request::new(
            Some(7),
            Command::Show(Show::Lrt {
                port: Some(PortSpec::Index(PortId(0))),
            }),
        );
        assert_eq!(
            r.to_line(),
            "{\"v\":1,\"id\":7,\"cmd\":\"show\",\"what\":\"lrt\",\"port\":0}\n"
        );
        assert_eq!(Request::parse(r.to_line().trim_end().as_bytes()), Ok(r));
        let r = Request::new(None, Command::Reload {});
        assert_eq!(r.to_line(), "{\"v\":1,\"cmd\":\"reload\"}\n");
    }
}
