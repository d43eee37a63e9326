//! The only code that talks to SQL or Redis.

pub mod redis;
pub mod sql;
