//! Dashboard users: argon2id password hashes, the first `admin`, and login throttling.
//!
//! argon2 (the RustCrypto crate) hashes passwords: memory-hard, the current OWASP
//! recommendation, and the PHC string keeps its parameters beside the hash. Hash checks
//! run on the blocking pool, a few at a time, so a flood of logins cannot take the async
//! workers that serve votes.
//!
//! Login attempts are counted in Redis before the password is checked (count, then
//! check: parallel guesses cannot all slip in before the count moves), for 15 minutes,
//! so throttling holds across instances: per (user name, IP) — an attacker elsewhere
//! cannot lock the real admin out — and per IP for all names. IPv6 addresses count by
//! their /64, which one subscriber gets whole.

use std::net::IpAddr;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::Rng;
use tokio::sync::Semaphore;

use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::limit::ip_subject;
use crate::domain::session::SessionTicket;
use crate::store::sql::{self, SqlError};

/// How long login attempts are remembered.
const ATTEMPT_WINDOW_S: i64 = 15 * 60;
/// Attempts allowed per (user name, IP) within the window.
const ATTEMPTS_PER_USER_IP: i64 = 5;
/// Attempts allowed per IP address, any user name, within the window.
const ATTEMPTS_PER_IP: i64 = 20;
const PASSWORD_MIN: usize = 8;
/// Password hash checks running at once; further logins wait for a turn.
static HASH_CHECKS: Semaphore = Semaphore::const_new(2);

/// Hashes a password with argon2id and a random salt.
pub fn hash_password(password: &str) -> Result<String, EngineError> {
    let salt = SaltString::encode_b64(&rand::random::<[u8; 16]>())
        .map_err(|e| anyhow::anyhow!("failed to encode a salt: {e}"))?;
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("failed to hash a password: {e}"))?
        .to_string())
}

fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// Checks a password on the blocking pool, waiting for a turn behind [`HASH_CHECKS`].
async fn verify_off_the_workers(password: &str, hash: &str) -> Result<bool, EngineError> {
    let _turn = HASH_CHECKS
        .acquire()
        .await
        .map_err(|e| anyhow::anyhow!("hash check semaphore closed: {e}"))?;
    let (password, hash) = (password.to_owned(), hash.to_owned());
    tokio::task::spawn_blocking(move || verify_password(&password, &hash))
        .await
        .map_err(|e| EngineError::Internal(anyhow::anyhow!("hash check failed: {e}")))
}

fn check_username(username: &str) -> Result<(), EngineError> {
    if username.is_empty()
        || username.len() > 64
        || !username
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        return Err(EngineError::invalid(
            Code::InvalidUsername,
            "a user name is 1 to 64 characters of [A-Za-z0-9_.-]",
        ));
    }
    Ok(())
}

fn check_new(username: &str, password: &str) -> Result<(), EngineError> {
    check_username(username)?;
    if password.chars().count() < PASSWORD_MIN {
        return Err(EngineError::invalid(
            Code::InvalidPassword,
            format!("a password needs at least {PASSWORD_MIN} characters"),
        ));
    }
    Ok(())
}

/// Adds a dashboard user.
pub async fn add_user(state: &AppState, username: &str, password: &str) -> Result<(), EngineError> {
    let db = &state.db;
    check_new(username, password)?;
    sql::users::insert_user(db, username, &hash_password(password)?)
        .await
        .map_err(|e| match e {
            SqlError::Conflict => {
                EngineError::conflict(Code::UserExists, format!("user {username} exists"))
            }
            other => other.into(),
        })
}

/// Sets a user's password and ends all of the user's dashboard sessions; answers how
/// many were open.
pub async fn set_password(
    state: &AppState,
    username: &str,
    password: &str,
) -> Result<usize, EngineError> {
    let (db, redis) = (&state.db, &state.redis);
    check_new(username, password)?;
    if sql::users::set_password(db, username, &hash_password(password)?).await? {
        Ok(redis.close_user_sessions(username).await?)
    } else {
        Err(user_not_found(username))
    }
}

/// Deletes a user and ends all of the user's dashboard sessions; answers how many were
/// open. The last user cannot be deleted: nobody could sign in any more.
pub async fn delete_user(state: &AppState, username: &str) -> Result<usize, EngineError> {
    let (db, redis) = (&state.db, &state.redis);
    if sql::users::password_hash(db, username).await?.is_none() {
        return Err(user_not_found(username));
    }
    if sql::users::count_users(db).await? <= 1 {
        return Err(EngineError::conflict(
            Code::LastUser,
            format!("{username} is the only user; add another before deleting it"),
        ));
    }
    sql::users::delete_user(db, username).await?;
    Ok(redis.close_user_sessions(username).await?)
}

fn user_not_found(username: &str) -> EngineError {
    EngineError::not_found(Code::UserNotFound, format!("no user {username}"))
}

/// Opens a dashboard session for `user`, who has just signed in. Sessions live in Redis
/// (the cookie only names one), so that logging out, a password change or deleting the
/// user ends them on the server: a copied cookie stops working at once.
pub async fn open_session(state: &AppState, user: &str) -> Result<SessionTicket, EngineError> {
    let policy = &state.sessions;
    let ticket = SessionTicket {
        user: user.to_owned(),
        id: random_id(32),
        started: chrono::Utc::now().timestamp(),
    };
    let ttl = policy.ttl_s(&ticket, ticket.started).max(1);
    state
        .redis
        .open_session(
            user,
            &ticket.id,
            ttl,
            policy.absolute.as_secs().max(1) as i64,
        )
        .await?;
    Ok(ticket)
}

/// Whether the session is still open; a request keeps it open for the idle timeout
/// more (never past its absolute end).
pub async fn check_session(state: &AppState, ticket: &SessionTicket) -> Result<bool, EngineError> {
    let ttl = state.sessions.ttl_s(ticket, chrono::Utc::now().timestamp());
    if ttl <= 0 {
        state.redis.close_session(&ticket.user, &ticket.id).await?;
        return Ok(false);
    }
    Ok(state
        .redis
        .touch_session(&ticket.user, &ticket.id, ttl)
        .await?)
}

/// Ends the session (logout).
pub async fn close_session(state: &AppState, ticket: &SessionTicket) -> Result<(), EngineError> {
    Ok(state.redis.close_session(&ticket.user, &ticket.id).await?)
}

fn random_id(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| rng.sample(rand::distr::Alphanumeric) as char)
        .collect()
}

/// Creates `admin` when there is no user at all; answers the generated password when one
/// had to be made up (the caller prints it once).
pub async fn ensure_admin(
    state: &AppState,
    password: Option<&str>,
) -> Result<Option<String>, EngineError> {
    let db = &state.db;
    if sql::users::count_users(db).await? > 0 {
        return Ok(None);
    }
    let generated = password.is_none().then(|| random_id(20));
    let chosen = password.or(generated.as_deref()).unwrap_or_default();
    match add_user(state, "admin", chosen).await {
        // Another instance created it first.
        Err(EngineError::Conflict { .. }) => Ok(None),
        Err(other) => Err(other),
        Ok(()) => Ok(generated),
    }
}

/// Why a login failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginRefusal {
    /// Wrong user name or password (never says which).
    BadCredentials,
    /// Too many failures lately from this IP or for this user.
    Throttled,
}

/// Checks a login from `ip`: counts the attempt first, refuses while too many are
/// recent, and only then checks the password.
pub async fn login(
    state: &AppState,
    username: &str,
    password: &str,
    ip: Option<IpAddr>,
) -> Result<Result<(), LoginRefusal>, EngineError> {
    let (db, redis) = (&state.db, &state.redis);
    let ip = ip.map_or_else(|| "unknown".to_owned(), ip_subject);
    // A name no user can have gets no key of its own: keys stay small whatever is sent.
    let named = check_username(username).is_ok();
    let counts = redis
        .count_login_attempts(&ip, named.then_some(username), ATTEMPT_WINDOW_S)
        .await?;
    let over = counts.first().is_some_and(|&n| n > ATTEMPTS_PER_IP)
        || counts.get(1).is_some_and(|&n| n > ATTEMPTS_PER_USER_IP);
    if over {
        return Ok(Err(LoginRefusal::Throttled));
    }
    if !named {
        return Ok(Err(LoginRefusal::BadCredentials));
    }
    // An unknown user still costs one hash check, so timing does not tell names apart.
    let stored = sql::users::password_hash(db, username).await?;
    let dummy = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2vzbDLoDt7YkHOnvr4Yh0Pnl3BCAfUdaa4Jp+o1RN2w";
    let ok = verify_off_the_workers(password, stored.as_deref().unwrap_or(dummy)).await?
        && stored.is_some();
    if ok {
        // The user's own attempts from here start afresh; the IP's keep counting.
        redis.forget_login_attempts(&ip, username).await?;
        Ok(Ok(()))
    } else {
        Ok(Err(LoginRefusal::BadCredentials))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_against_their_hash_only() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("correct horsf", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn new_users_need_a_clean_name_and_a_long_password() {
        assert!(check_new("ops-1", "12345678").is_ok());
        assert_eq!(
            check_new("a b", "12345678").unwrap_err().code(),
            "invalid_username"
        );
        assert_eq!(
            check_new("ops", "1234567").unwrap_err().code(),
            "invalid_password"
        );
    }
}
