//! Reading script replies: arrays, text, integers and score units.

use redis::Value;

use super::RedisFailure;

pub(super) fn reply_error(what: &str, value: &Value) -> RedisFailure {
    RedisFailure::Reply(format!("{what}: {value:?}"))
}

pub(super) fn as_array(value: &Value) -> Option<&[Value]> {
    match value {
        Value::Array(items) => Some(items),
        _ => None,
    }
}

pub(super) fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

pub(super) fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

/// A score as Redis prints it (`"5000"`, `"1.5e+16"`), back to integer units.
pub(super) fn parse_units(text: &str) -> Option<i64> {
    let value: f64 = text.parse().ok()?;
    (value.is_finite() && value.fract() == 0.0).then_some(value as i64)
}

pub(super) fn as_units(value: &Value) -> Option<i64> {
    match value {
        Value::BulkString(bytes) => parse_units(std::str::from_utf8(bytes).ok()?),
        Value::Double(d) => parse_units(&d.to_string()),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}
