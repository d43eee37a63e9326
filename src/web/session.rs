//! What the session cookie holds: the ticket of the admin's server-side session, the
//! visitor's id, the CSRF token and a one-shot flash message.

use actix_session::{Session, SessionExt};
use actix_web::{FromRequest, HttpRequest, dev::Payload};
use rand::Rng;
use std::future::{Ready, ready};

use crate::domain::session::SessionTicket;
use crate::error::PageError;
use crate::i18n::Lang;

const TICKET: &str = "session";
const VISITOR: &str = "visitor";
const CSRF: &str = "csrf";
const FLASH: &str = "flash";

fn random_token(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| rng.sample(rand::distr::Alphanumeric) as char)
        .collect()
}

/// The session's CSRF token, made on first use.
pub fn csrf_token(session: &Session) -> String {
    match session.get::<String>(CSRF) {
        Ok(Some(token)) => token,
        _ => {
            let token = random_token(32);
            // A session that cannot be written yields a token that will not verify: the
            // next form post is refused, which is the safe way to fail.
            let _ = session.insert(CSRF, &token);
            token
        }
    }
}

/// Checks a submitted CSRF token against the session's, in constant time.
pub fn verify_csrf(session: &Session, submitted: Option<&str>) -> Result<(), PageError> {
    let expected = session.get::<String>(CSRF).ok().flatten();
    match (expected, submitted) {
        (Some(expected), Some(submitted))
            if expected.len() == submitted.len()
                && expected
                    .bytes()
                    .zip(submitted.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0 =>
        {
            Ok(())
        }
        _ => Err(PageError::Forbidden(
            "this form has expired or did not come from this site; reload the page and try again"
                .into(),
        )),
    }
}

/// Signs a user in with the server-side session `ticket` names; the cookie starts
/// afresh so a planted cookie cannot ride along.
pub fn sign_in(session: &Session, ticket: &SessionTicket) -> Result<(), PageError> {
    session.renew();
    session
        .insert(TICKET, ticket)
        .map_err(|e| PageError::Internal(anyhow::anyhow!("failed to write the session: {e}")))?;
    let _ = session.insert(CSRF, random_token(32));
    Ok(())
}

/// Forgets the cookie's contents (the server-side session is ended by the caller).
pub fn sign_out(session: &Session) {
    session.purge();
}

/// The server-side session the cookie names, if any. It may have ended since: the
/// `/admin` middleware checks it with Redis on every request.
pub fn signed_in(session: &Session) -> Option<SessionTicket> {
    session.get::<SessionTicket>(TICKET).ok().flatten()
}

/// The visitor's id for the public page, made on first visit.
pub fn visitor_id(session: &Session) -> String {
    match session.get::<String>(VISITOR) {
        Ok(Some(id)) => id,
        _ => {
            let id = format!("v-{}", random_token(22));
            let _ = session.insert(VISITOR, &id);
            id
        }
    }
}

/// Leaves a message for the next page shown.
pub fn flash(session: &Session, message: &str) {
    let _ = session.insert(FLASH, message);
}

/// Takes the message left for this page.
pub fn take_flash(session: &Session) -> Option<String> {
    session.remove_as::<String>(FLASH).and_then(Result::ok)
}

/// The answer to a vote on the voting page, kept for the page the browser is sent back
/// to without JavaScript, where it shows at the member voted for.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VoteNotice {
    pub member: String,
    pub text: String,
    pub refused: bool,
}

const NOTICE: &str = "notice";
const SECRET: &str = "new_key";

/// Keeps a new API key's secret for the page the browser is sent to, which shows it once.
pub fn leave_secret(session: &Session, secret: &str) {
    let _ = session.insert(SECRET, secret);
}

/// Takes the new API key's secret: it is shown this once.
pub fn take_secret(session: &Session) -> Option<String> {
    session.remove_as::<String>(SECRET).and_then(Result::ok)
}

/// Leaves a vote's answer for the next page shown.
pub fn leave_notice(session: &Session, notice: &VoteNotice) {
    let _ = session.insert(NOTICE, notice);
}

/// Takes the vote's answer left for this page.
pub fn take_notice(session: &Session) -> Option<VoteNotice> {
    session.remove_as::<VoteNotice>(NOTICE).and_then(Result::ok)
}

/// The signed-in admin, and the language their pages speak; a handler that takes it
/// cannot run without a session.
pub struct AdminUser {
    pub name: String,
    pub lang: Lang,
}

impl AdminUser {
    /// The audit log's name for this user.
    pub fn actor(&self) -> String {
        format!("user:{}", self.name)
    }
}

impl FromRequest for AdminUser {
    type Error = PageError;
    type Future = Ready<Result<Self, PageError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            signed_in(&req.get_session())
                .map(|ticket| AdminUser {
                    name: ticket.user,
                    lang: crate::web::lang::of(req),
                })
                .ok_or(PageError::SignInRequired),
        )
    }
}
