//! Every error code the API and the pages answer with: stable snake_case strings in JSON
//! bodies (`"error": {"code": …}`), one enum so a code is named once and a typo does not
//! compile.

use std::fmt;

/// Declares `Code` with each variant's JSON string, once: the enum, [`Code::as_str`]
/// and [`Code::EVERY`] come from the same list, so none can miss a code.
macro_rules! codes {
    ($($variant:ident => $text:literal,)*) => {
        /// A stable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            /// Every code, in the order declared.
            pub const EVERY: &[Code] = &[$(Code::$variant,)*];

            /// The code as it appears in JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    AlreadyExists => "already_exists",
    AmbiguousBucket => "ambiguous_bucket",
    ArchiveBusy => "archive_busy",
    ApiKeyNotFound => "api_key_not_found",
    BatchTooLarge => "batch_too_large",
    BoardExists => "board_exists",
    BoardNotFound => "board_not_found",
    CampaignEnded => "campaign_ended",
    CampaignNotStarted => "campaign_not_started",
    ChannelRequired => "channel_required",
    CountExceedsLimit => "count_exceeds_limit",
    DuplicateMember => "duplicate_member",
    EmptyBatch => "empty_batch",
    EmptyDimensions => "empty_dimensions",
    Forbidden => "forbidden",
    IdempotencyKeyReused => "idempotency_key_reused",
    InternalError => "internal_error",
    InvalidArchiveTop => "invalid_archive_top",
    InvalidBoardSlug => "invalid_board_slug",
    InvalidBucket => "invalid_bucket",
    InvalidChannel => "invalid_channel",
    InvalidCount => "invalid_count",
    InvalidCsv => "invalid_csv",
    InvalidDescription => "invalid_description",
    InvalidDimension => "invalid_dimension",
    InvalidDisplayDecimals => "invalid_display_decimals",
    InvalidEncoding => "invalid_encoding",
    InvalidField => "invalid_field",
    InvalidIdempotencyKey => "invalid_idempotency_key",
    InvalidImageUrl => "invalid_image_url",
    InvalidInitialVotes => "invalid_initial_votes",
    InvalidIp => "invalid_ip",
    InvalidItem => "invalid_item",
    InvalidLimit => "invalid_limit",
    InvalidMaxCount => "invalid_max_count",
    InvalidMemberId => "invalid_member_id",
    InvalidMembers => "invalid_members",
    InvalidMembership => "invalid_membership",
    InvalidMissing => "invalid_missing",
    InvalidName => "invalid_name",
    InvalidNumber => "invalid_number",
    InvalidOp => "invalid_op",
    InvalidOrigin => "invalid_origin",
    InvalidOverride => "invalid_override",
    InvalidPassword => "invalid_password",
    InvalidPath => "invalid_path",
    InvalidPeriod => "invalid_period",
    InvalidPeriods => "invalid_periods",
    InvalidProfile => "invalid_profile",
    InvalidQuery => "invalid_query",
    InvalidScope => "invalid_scope",
    InvalidScopes => "invalid_scopes",
    InvalidRetention => "invalid_retention",
    InvalidScoring => "invalid_scoring",
    InvalidStorage => "invalid_storage",
    InvalidTerminal => "invalid_terminal",
    InvalidTimestamp => "invalid_timestamp",
    InvalidTimezone => "invalid_timezone",
    InvalidTitle => "invalid_title",
    InvalidUsername => "invalid_username",
    InvalidValue => "invalid_value",
    InvalidView => "invalid_view",
    InvalidVoter => "invalid_voter",
    InvalidWindow => "invalid_window",
    IpRequired => "ip_required",
    LastUser => "last_user",
    MalformedBody => "malformed_body",
    MalformedJson => "malformed_json",
    MemberDisabled => "member_disabled",
    MemberIdImmutable => "member_id_immutable",
    MemberNotFound => "member_not_found",
    MemberRequired => "member_required",
    MethodNotAllowed => "method_not_allowed",
    OperatorNotAllowed => "operator_not_allowed",
    PayloadTooLarge => "payload_too_large",
    PeriodNotEnabled => "period_not_enabled",
    RateLimited => "rate_limited",
    RouteNotFound => "route_not_found",
    RuleNotFound => "rule_not_found",
    ScoreOverflow => "score_overflow",
    SlugImmutable => "slug_immutable",
    StoreUnavailable => "store_unavailable",
    TerminalRequired => "terminal_required",
    TooManyBoards => "too_many_boards",
    TooManyMembers => "too_many_members",
    TooManyRules => "too_many_rules",
    Unauthorized => "unauthorized",
    UnsupportedContentType => "unsupported_content_type",
    UserExists => "user_exists",
    UserNotFound => "user_not_found",
    VoterRequired => "voter_required",
    WrongScoring => "wrong_scoring",
    InvalidRatio => "invalid_ratio",
    InvalidSeason => "invalid_season",
    InvalidTiers => "invalid_tiers",
    InvalidBracketSize => "invalid_bracket_size",
    InvalidReward => "invalid_reward",
    UnknownTier => "unknown_tier",
    InvalidWebhook => "invalid_webhook",
    InvalidLeagueSlug => "invalid_league_slug",
    InvalidPlayer => "invalid_player",
    NotJoined => "not_joined",
    SeasonClosing => "season_closing",
    AlreadyClosing => "already_closing",
    BracketNotFound => "bracket_not_found",
    InvalidBracket => "invalid_bracket",
    InvalidDelta => "invalid_delta",
    SeasonNotFound => "season_not_found",
    LeagueExists => "league_exists",
    LeagueNotFound => "league_not_found",
    KeyNotAllowed => "key_not_allowed",
    InvalidBoards => "invalid_boards",
    InvalidLeagues => "invalid_leagues",
    DeliveryNotFound => "delivery_not_found",
    DuplicateBoard => "duplicate_board",
    InvalidInstance => "invalid_instance",
    InstanceRequired => "instance_required",
    InvalidTtl => "invalid_ttl",
    InvalidCursor => "invalid_cursor",
    NotForFamily => "not_for_family",
    TooManyStreams => "too_many_streams",
    TooManyStreamsFromIp => "too_many_streams_from_ip",
    TooManyExports => "too_many_exports",
    FamilyFull => "family_full",
    InstanceNotLive => "instance_not_live",
    WebhookNotFound => "webhook_not_found",
    TooManyWebhooks => "too_many_webhooks",
    BucketReleased => "bucket_released",
    NegativeScore => "negative_score",
    InvalidProvider => "invalid_provider",
    ProviderExists => "provider_exists",
    ProviderNotFound => "provider_not_found",
    ProviderInUse => "provider_in_use",
    ProviderNotAccepted => "provider_not_accepted",
    TokenRequired => "token_required",
    TokenTooLarge => "token_too_large",
    TokenMalformed => "token_malformed",
    TokenAlgorithmRefused => "token_algorithm_refused",
    TokenUnknownKey => "token_unknown_key",
    TokenBadSignature => "token_bad_signature",
    TokenWrongIssuer => "token_wrong_issuer",
    TokenWrongAudience => "token_wrong_audience",
    TokenExpired => "token_expired",
    TokenNotYetValid => "token_not_yet_valid",
    TokenTooOld => "token_too_old",
    TokenClaimsInvalid => "token_claims_invalid",
    VoterMismatch => "voter_mismatch",
    JwksUnavailable => "jwks_unavailable",
    InvalidThreshold => "invalid_threshold",
    WatchNotFound => "watch_not_found",
    TooManyWatches => "too_many_watches",
    LedgerRequired => "ledger_required",
    SubjectNotFound => "subject_not_found",
    AlreadyReviewed => "already_reviewed",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the JSON string, as tests of answers do.
impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
