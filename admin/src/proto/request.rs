//! A request line: the protocol version, an `id`, and the command, read
//! with errors that say what is wrong.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::PROTOCOL_VERSION;
use super::command::Command;
use super::error::{AdminError, AdminErrorCode};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{PortSpec, Show};
    use rrp::PortId;

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
        let r = Request::new(None, Command::Reload(Default::default()));
        assert_eq!(r.to_line(), "{\"v\":1,\"cmd\":\"reload\"}\n");
        assert_eq!(Request::parse(b"{\"v\":1,\"cmd\":\"reload\"}"), Ok(r));
        let r = Request::parse(b"{\"v\":1,\"cmd\":\"reload\",\"dry_run\":true,\"confirm_s\":30}")
            .unwrap();
        assert_eq!(
            r.cmd,
            Command::Reload(crate::proto::ReloadRequest {
                dry_run: true,
                force: false,
                confirm_s: Some(30)
            })
        );
    }
}
