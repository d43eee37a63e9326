//! The admin API (`admin` scope): boards, members, rate-limit rules, watches, API keys, identity
//! providers, leagues.

pub mod adjustments;
pub mod api_keys;
pub mod board_webhooks;
pub mod boards;
pub mod held;
pub mod identity_providers;
pub mod leagues;
pub mod ledger;
pub mod members;
pub mod revocations;
pub mod rules;
pub mod watches;

use actix_web::web;
use serde::{Deserialize, Deserializer};

use crate::domain::code::Code;
use crate::error::ApiError;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/admin")
            .service(boards::create_board)
            .service(boards::list_boards)
            .service(boards::get_board)
            .service(boards::update_board)
            .service(boards::delete_board)
            .service(boards::archive_board)
            .service(ledger::get_ledger)
            .service(ledger::recount_board)
            .service(board_webhooks::create_webhook)
            .service(board_webhooks::list_webhooks)
            .service(board_webhooks::test_webhook)
            .service(board_webhooks::delete_webhook)
            .service(revocations::create_revocation)
            .service(revocations::list_revocations)
            .service(members::upsert_members)
            .service(members::import_members)
            .service(members::update_member)
            .service(members::delete_member)
            .service(adjustments::create_adjustment)
            .service(rules::create_rule)
            .service(rules::list_rules)
            .service(rules::get_rule)
            .service(rules::update_rule)
            .service(rules::delete_rule)
            .service(watches::create_watch)
            .service(watches::list_watches)
            .service(watches::update_watch)
            .service(watches::delete_watch)
            .service(held::list_held)
            .service(held::review_held)
            .service(api_keys::create_api_key)
            .service(api_keys::list_api_keys)
            .service(api_keys::revoke_api_key)
            .service(identity_providers::create_provider)
            .service(identity_providers::list_providers)
            .service(identity_providers::get_provider)
            .service(identity_providers::update_provider)
            .service(identity_providers::delete_provider)
            .service(leagues::create_league)
            .service(leagues::list_leagues)
            .service(leagues::get_league)
            .service(leagues::update_league)
            .service(leagues::delete_league)
            .service(leagues::close_league)
            .service(leagues::rotate_webhook_secret)
            .default_service(web::to(super::not_found)),
    );
}

/// A board slug from a path: an ill-formed one names no board.
fn board_slug(raw: &str) -> Result<crate::domain::ids::BoardSlug, ApiError> {
    crate::domain::ids::BoardSlug::parse(raw)
        .map_err(|e| ApiError::not_found(Code::BoardNotFound, e.message))
}

/// Reads a field that may be absent (`None`), null (`Some(None)`) or set (`Some(Some)`),
/// so a PATCH can clear a value.
fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
