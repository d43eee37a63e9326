//! `announce.lua`: a configuration change's version bump and notice.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::reply::{as_int, reply_error};
use super::{RedisFailure, RedisStore};

static ANNOUNCE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("announce.lua")));

impl RedisStore {
    /// Counts a configuration change and tells every instance (`payload` names what
    /// changed); answers the new configuration version.
    pub async fn announce_config_change(&self, payload: &str) -> Result<i64, RedisFailure> {
        let mut call = ANNOUNCE.key(self.keys.config_version());
        call.arg(self.keys.config_channel()).arg(payload);
        let reply = self.run_script_all("announce", &ANNOUNCE, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .ok_or_else(|| reply_error("announce", &Value::Array(reply.clone())))
    }
}
