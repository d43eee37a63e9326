//! The board a request names (`BoardName`): a plain board, or one instance of a family,
//! found in the configuration cache (never SQL) with the keys its rankings live under.
//!
//! An instance has no row and no cache entry of its own: it is its family's
//! configuration (`BoardConfig`) and the instance's keys, put together per request, so
//! nothing in the process grows with the instances ever written.

use std::sync::Arc;

use super::config::BoardConfig;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::board::BoardSettings;
use crate::domain::code::Code;
use crate::domain::ids::{BoardName, InstanceId};
use crate::store::redis::BoardKeys;

/// A board that keeps rankings: a plain board, or an instance of a family.
#[derive(Debug, Clone)]
pub struct BoardRef {
    /// The board's configuration: a family's for an instance.
    pub config: Arc<BoardConfig>,
    pub instance: Option<InstanceId>,
    /// Where its rankings live: the board's keys, or the instance's.
    pub keys: BoardKeys,
}

impl BoardRef {
    /// The board `name` names in `config`: an instance of a family, or a plain board.
    /// A family without an instance is 422 `instance_required` (its rankings are its
    /// instances'); an instance of a plain board names no board (404).
    pub fn of(config: Arc<BoardConfig>, name: &BoardName) -> Result<Self, EngineError> {
        let family = config.board.settings.instances;
        let keys = match (family, &name.instance) {
            (Some(family), Some(instance)) => {
                config.keys.instance(instance.as_str(), family.ttl_s * 1000)
            }
            (Some(_), None) => {
                return Err(EngineError::invalid(
                    Code::InstanceRequired,
                    format!(
                        "board {} is a family: name one of its boards, {}:<instance>",
                        name.slug, name.slug
                    ),
                ));
            }
            (None, Some(_)) => {
                return Err(EngineError::not_found(
                    Code::BoardNotFound,
                    format!("no board {name}: board {} has no instances", name.slug),
                ));
            }
            (None, None) => config.keys.clone(),
        };
        Ok(Self {
            config,
            instance: name.instance.clone(),
            keys,
        })
    }

    /// A plain board as a whole (a family is 422 `instance_required`).
    pub fn plain(config: Arc<BoardConfig>) -> Result<Self, EngineError> {
        let name = BoardName::from(config.board.slug.clone());
        Self::of(config, &name)
    }

    pub fn settings(&self) -> &BoardSettings {
        &self.config.board.settings
    }

    /// The name the API shows: `<slug>` or `<slug>:<instance>`.
    pub fn name(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{}:{instance}", self.config.board.slug),
            None => self.config.board.slug.to_string(),
        }
    }

    /// What keys the read cache by: the board's id (a board deleted and created again
    /// under its slug starts afresh) and the instance.
    pub fn cache_id(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{}:{instance}", self.config.board.id),
            None => self.config.board.id.to_string(),
        }
    }

    /// Whether the board's closed buckets go to the archive: an instance's never do (its
    /// keys expire with it).
    pub fn archived(&self) -> bool {
        self.instance.is_none()
    }
}

/// Reads a board's name from a route or a batch item: a malformed slug names no board
/// (404 `board_not_found`, as an unknown one), a malformed instance is 422
/// `invalid_instance`.
pub fn parse_name(raw: &str) -> Result<BoardName, EngineError> {
    BoardName::parse(raw).map_err(|e| match e.code {
        Code::InvalidBoardSlug => EngineError::not_found(Code::BoardNotFound, e.message),
        _ => e.into(),
    })
}

/// Finds the board `name` names, for writing or reading rankings: 404 `board_not_found`
/// when there is no such board.
pub fn find(state: &AppState, name: &BoardName) -> Result<BoardRef, EngineError> {
    let config = state.config.board(&name.slug).ok_or_else(|| {
        EngineError::not_found(Code::BoardNotFound, format!("no board {}", name.slug))
    })?;
    BoardRef::of(config, name)
}
