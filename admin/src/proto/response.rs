//! A response line: a result or an error; streams send several.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{AdminError, AdminErrorCode};
use super::{PROTOCOL_VERSION, is_false};

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
