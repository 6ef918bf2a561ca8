//! Error answers: why an admin request failed (docs/admin-protocol.md
//! "Error codes").

use std::fmt;

use serde::{Deserialize, Serialize};

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
    /// The line is longer than [`MAX_LINE`](super::MAX_LINE); the connection is closed.
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
