//! Dashboard sessions in Redis: open, touch (renewing the idle timeout), close one or all
//! of a user's.

use redis::AsyncCommands;

use super::{RedisFailure, RedisStore};

impl RedisStore {
    /// Opens a dashboard session that lives `ttl_s` unless touched, and records it
    /// among the user's sessions (kept `absolute_s`, the longest a session lives).
    pub async fn open_session(
        &self,
        user: &str,
        id: &str,
        ttl_s: i64,
        absolute_s: i64,
    ) -> Result<(), RedisFailure> {
        let (key, all) = (self.keys.session(user, id), self.keys.user_sessions(user));
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg(&key)
            .arg(user)
            .arg("EX")
            .arg(ttl_s)
            .ignore()
            .sadd(&all, id)
            .ignore()
            .expire(&all, absolute_s)
            .ignore();
        self.bounded("session_open", |mut conn| async move {
            Ok(pipe.query_async::<()>(&mut conn).await?)
        })
        .await
    }

    /// Whether the session is still open; if it is, it lives `ttl_s` more (one GETEX).
    pub async fn touch_session(
        &self,
        user: &str,
        id: &str,
        ttl_s: i64,
    ) -> Result<bool, RedisFailure> {
        let key = self.keys.session(user, id);
        self.bounded("session_touch", |mut conn| async move {
            let owner: Option<String> = redis::cmd("GETEX")
                .arg(key)
                .arg("EX")
                .arg(ttl_s)
                .query_async(&mut conn)
                .await?;
            Ok(owner.as_deref() == Some(user))
        })
        .await
    }

    /// Ends one session.
    pub async fn close_session(&self, user: &str, id: &str) -> Result<(), RedisFailure> {
        let (key, all) = (self.keys.session(user, id), self.keys.user_sessions(user));
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore().srem(&all, id).ignore();
        self.bounded("session_close", |mut conn| async move {
            Ok(pipe.query_async::<()>(&mut conn).await?)
        })
        .await
    }

    /// Ends every session of a user; answers how many were open.
    pub async fn close_user_sessions(&self, user: &str) -> Result<usize, RedisFailure> {
        let all = self.keys.user_sessions(user);
        let keys = self.keys.clone();
        let user = user.to_owned();
        self.bounded("session_close_all", |mut conn| async move {
            let ids: Vec<String> = conn.smembers(&all).await?;
            let mut doomed: Vec<String> = ids.iter().map(|id| keys.session(&user, id)).collect();
            doomed.push(all);
            let open: usize = redis::cmd("DEL")
                .arg(&doomed)
                .query_async(&mut conn)
                .await?;
            Ok(open.saturating_sub(1))
        })
        .await
    }
}
