# Ovation's English messages. Keys are shared with locales/zh-CN/ovation.ftl.

## Numbers, times, zones

votes = { $count ->
    [one] { $count } vote
   *[other] { $count } votes
}
score = { $shown } { $count ->
    [one] vote
   *[other] votes
}
points = { $shown } { $count ->
    [one] point
   *[other] points
}
zone-city = { $city } time
zone-UTC = UTC
zone-Etc-UTC = UTC
zone-Asia-Shanghai = Beijing time
zone-Asia-Hong-Kong = Hong Kong time
zone-Asia-Taipei = Taipei time
zone-Asia-Tokyo = Tokyo time
zone-Europe-London = London time
day-today = today { $time }
day-tomorrow = tomorrow { $time }
month-short = { $month ->
    [1] Jan
    [2] Feb
    [3] Mar
    [4] Apr
    [5] May
    [6] Jun
    [7] Jul
    [8] Aug
    [9] Sep
    [10] Oct
    [11] Nov
   *[12] Dec
}
day-date = { $weekday } { $day } { $mon } { $time }
date-long = { $weekday } { $day } { $mon }
weekday-mon = Mon
weekday-tue = Tue
weekday-wed = Wed
weekday-thu = Thu
weekday-fri = Fri
weekday-sat = Sat
weekday-sun = Sun
wait =
    in { $days ->
        [0] {""}
       *[other] {$days} d{" "}
    }{ $hours ->
        [0] {""}
       *[other] {$hours} h{" "}
    }{ $minutes } min

## Periods and windows

period-hour = This hour
period-day = Today
period-week = This week
period-month = This month
period-all = All time
period-rolling-hours = { $n ->
    [one] Last hour
   *[other] Last { $n } hours
}
period-rolling-days = { $n ->
    [one] Last day
   *[other] Last { $n } days
}
period-trending = { $n ->
    [one] Trending (half-life 1 hour)
   *[other] Trending (half-life { $n } hours)
}
window-second = this second
window-minute = this minute
window-hour = this hour
window-day = today
window-week = this week
window-month = this month
window-campaign = in this campaign
window-rolling = in any { $span }

## Rate-limit refusals and quotas

refused-voter-member = You have given { $name } { $limit ->
    [one] your vote
   *[other] { $limit } votes
} { $window }, the most one voter may.
refused-voter = You have used your { $limit ->
    [one] vote
   *[other] { $limit } votes
} { $window }.
refused-member = { $name } has received the { $limit ->
    [one] one vote
   *[other] { $limit } votes
} allowed { $window }.
refused-other = The limit of { $limit ->
    [one] one vote
   *[other] { $limit } votes
} { $window } from where you vote is reached.
opens-again = Voting opens again { $when } { $zone }, { $within }.
opens-never = That limit holds for the whole campaign.
refused-blocked = Votes like this one are not taken on this board.
refused-rooms = You have opened { $limit ->
    [one] a new room
   *[other] { $limit } new rooms
} { $window }, the most one may: vote in a room that is open already.
refused-others = You can still vote for others: { $remaining } of { $limit } left { $window }.
quota-left = { $remaining } of { $limit } { $limit ->
    [one] vote
   *[other] votes
} left { $window }
quota-per-member = At most { $limit ->
    [one] one vote
   *[other] { $limit } votes
} for each member { $window }

## The voting page

language = Language
periods = Periods
vote = Vote
vote-for = Vote for { $name }
thanks = Thanks — your vote for { $name } counts.
no-members = No members yet.
voting-closed = Voting is closed.
sign-in-to-vote = Sign in to vote
sign-in-again = Your sign-in has expired: sign in again to vote.
voting-as = Voting as
refused-member-disabled = { $name } does not take votes now.
campaign-ended = Voting has closed.
campaign-not-started = Voting has not opened yet.

## The dashboard's live view

nav-members = Members
nav-rules = Rules
nav-edit = Edit
nav-public-page = Public page
live-period-hour = Hour
live-period-day = Day
live-period-week = Week
live-period-month = Month
live-period-all = All time
live-period-rolling-hours = Last { $n } h
live-period-rolling-days = { $n ->
    [one] Last day
   *[other] Last { $n } days
}
live-period-trending = Trending { $n } h
live-bucket = Bucket
live-current = current
live-earlier = ← Earlier
live-later = Later →
live-view = View
live-view-display = display
live-view-real = real
live-show = Show
live-export = Export CSV
live-pause = Pause updates
live-resume = Resume live updates
live-paused = paused
live-resets = resets { $when }
live-participants = { $count ->
    [one] { $shown } participant
   *[other] { $shown } participants
}
live-votes = { $count ->
    [one] { $shown } vote
   *[other] { $shown } votes
}
live-members = { $count ->
    [one] { $shown } member with votes
   *[other] { $shown } members with votes
}
live-updated = updated { $when }
live-top-100 = Top 100
live-empty = No votes in this bucket yet.
live-new = new
col-rank = Rank
col-member = Member
col-score = Score
chart-votes = Votes per { $step ->
    [day] day
   *[hour] hour
}
chart-refusals = Refused votes per rule per { $step ->
    [day] day
   *[hour] hour
}
chart-participants = Participants per { $period ->
    [hour] hour
    [week] week
    [month] month
   *[day] day
}
chart-top = Top 10
chart-axis = { $step ->
    [day] day
    [week] ISO week
    [month] month
   *[hour] hour
}, { $zone }
chart-day = { $month }/{ $day }
chart-unit-votes = votes
chart-unit-refused = refused votes
chart-unit-voters = voters
chart-unit-real = score (real)
chart-unit-display = score (display)
chart-no-rules = No rate-limit rules, so nothing is refused.
chart-no-periods = This board keeps only all-time rankings, so there are no participants per period.
chart-refusals-kept = Refusals are kept { $days } days; older ones are not drawn.

## The dashboard

nav-boards = Boards
nav-keys = API keys
nav-audit = Audit log
log-out = Log out
save = Save
delete = Delete
cancel = Cancel
list-separator = {", "}
login-title = Sign in
login-heading = Ovation dashboard
login-user = User name
login-password = Password
login-submit = Sign in
login-wrong = Wrong user name or password.
login-throttled = Too many failed sign-ins; wait 15 minutes and try again.
audit-when = When
audit-who = Who
audit-action = Action
audit-what = What
audit-detail = Detail
audit-filter = Filter
audit-none = Nothing recorded.
audit-none-filtered = Nothing recorded for this filter.
audit-newest = The newest 500 entries.
boards-new = New board
boards-board = Board
boards-status = Status
boards-status-live = live
boards-status-not-started = not started
boards-status-closed = closed
boards-off = off
boards-votes-today = Votes today
boards-none = No boards yet.
board-edit = Edit board
board-slug = Slug
board-slug-hint = 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit
board-title = Title
board-description = Description
board-membership = Membership
board-membership-closed = closed: registered members only
board-membership-open = open: any member id
board-rolling = Rolling windows
board-rolling-hint = Up to four, by length: 1h to 168h (UTC hours) or 1d to 90d (the board's local days), like “24h, 72h, 30d”.
board-trending = Trending half-lives
board-trending-hint = Up to four, in hours from 1h to 720h, like “6h, 24h”: a vote that old weighs half of one now.
board-timezone = Timezone
board-multiplier = Display multiplier N
board-carry-over = Carry-over ratio r (0 to 1)
board-starts = Campaign starts (RFC 3339, empty for none)
board-ends = Campaign ends
board-max-count = Largest count per vote
board-decimals = Decimals shown on pages
board-retention = Days a closed bucket stays in Redis once archived (empty: forever)
board-retention-hour = Hours
board-retention-day = Days
board-retention-week = Weeks
board-retention-month = Months
board-archive-top = Entries archived per bucket and view
board-archive = Archive…
board-archive-now = Archive closed buckets and free Redis of those past retention
board-archive-hint = Every closed bucket is written to the archive; the Redis keys of those past their retention are deleted, and their pages read from the archive from then on.
live-archived = archived
members-history = History
history-chart = Score per bucket, oldest to newest
adjust = Adjust
adjust-title = Adjust the score
adjust-hint = Changes this member's score in one bucket only: no other period, no carry-over, no rolling window. Recorded in the ledger and the audit log with the reason.
adjust-view = View
adjust-both = Both views
adjust-real = Real votes
adjust-display = Displayed score
adjust-delta = Change (votes, + or −)
adjust-reason = Reason
adjust-now = Adjust
flash-member-adjusted = Member { $id } adjusted by { $delta } in { $bucket }.
flash-board-archived = { $archived } buckets archived, { $released } released from Redis.
board-embed = Sites that may embed the voting page (one origin per line, such as https://shop.example)
board-voters = Signed-in voters
board-voters-who = Who may vote on the public page
board-voters-anyone = Anyone (a cookie tells visitors apart)
board-voters-signed-in = Only visitors signed in with an identity provider
board-providers = Identity providers whose tokens the board takes (names, comma-separated)
board-scoring = Scoring (fixed at creation)
board-scoring-votes = votes: two views, multiplier, carry-over
board-scoring-scores = scores: set by incr, decr, set and best
board-score-decimals = Decimals a score keeps (scores boards, 0 to 6)
board-storage = Storage (fixed at creation)
board-storage-full = full: one sorted set per bucket
board-storage-top-n = top N (scores boards): every score kept, the best N ranked
board-storage-sharded = sharded: a scores board's members, a votes board's voters spread over several sorted sets
board-retain = Top N: members ranked (retain)
board-trim-at = Top N: trim back to N at (empty for 1.2 × N)
board-shards = Sharded: sorted sets per bucket (2 to 256)
board-fixed = Scoring and storage
board-instances = Boards (fixed at creation)
board-instances-one = one board
board-instances-family = one board per live room, match or region: each made by its first write, addressed as <slug>:<room>
board-instance-ttl = A room's board leaves Redis after this long without a write
board-rooms = Rooms (a family)
board-max-live = The most rooms live at once (a write that would open one more is refused)
board-room-pages = Each room has a public voting page (with the public page on)
board-room-ledger-days = Days a room's ledger stays in SQL after the room expired
board-unit-minutes = minutes
board-unit-hours = hours
board-unit-days = days
family-search = Room
family-find = Find
family-all = All rooms
family-live = { $count ->
    [one] 1 live room, most recently written first
   *[other] { $shown } live rooms, most recently written first
}
family-matching = Of { $count ->
    [one] 1 live room
   *[other] { $shown } live rooms
}, those whose name holds the text, most recently written first; a page looks through { $budget } rooms at most, so it may show fewer and still have a next one.
family-instance = Room
family-last-write = Last write
family-members = Members now
family-none = No live rooms: a room's board is made by its first write.
family-next = Next page →
board-family-fixed = one board per room, each gone after { $lifetime } without a write
lifetime = { $unit ->
    [days] { $count ->
        [one] 1 day
       *[other] { $count } days
    }
    [hours] { $count ->
        [one] 1 hour
       *[other] { $count } hours
    }
    [minutes] { $count ->
        [one] 1 minute
       *[other] { $count } minutes
    }
   *[seconds] { $count ->
        [one] 1 second
       *[other] { $count } seconds
    }
}
board-public = Public voting page at /b/<slug>
board-ledger = Keep a ledger: every accepted write recorded, for audits, recounts and revocations (one board per room: each room's own ledger, to read; starts off, turn it on here once created)
board-late-grace = Late grace after the end, in seconds (0 to 3600): votes stamped before the end still count when a gateway delivers them this late
board-delete-confirm = Type the slug { $slug } to delete the board, its members, rules and rankings
board-delete = Delete board
keys-new-secret = New key — copy it now, it is not shown again:
keys-name = Name
keys-key = Key
keys-scopes = Scopes
keys-channel = Channel
keys-created = Created
keys-state = State
keys-revoked = revoked
keys-live = live
keys-revoke = Revoke…
keys-revoke-now = Revoke “{ $name }” now
keys-revoke-hint = Clients using it are refused at once.
keys-none = No keys yet.
keys-new = New key
keys-bound = Bound to channel (optional)
keys-create = Create key
keys-boards = Boards
keys-leagues = Leagues
keys-reach-all = all
keys-reach-none = none
keys-boards-field = Boards it may reach (optional)
keys-leagues-field = Leagues it may reach (optional)
keys-reach-hint = Slugs separated by commas. Empty: every board or league — except that a key bound to a channel reaches only the leagues named here. Elsewhere the key is refused with key_not_allowed.
members-find = Find
members-find-hint = id or name
members-search = Search
members-rank-score = { $period }: rank · score
members-votes = Votes
members-open = open
members-disabled = disabled
members-disable = Disable
members-enable = Enable
members-no-match = No member matches “{ $q }”.
members-pages = Pages
members-previous = ← Previous
members-next = Next →
members-range = { $first }–{ $last } of { $total }
members-display-note = Ranks and scores are the display view of the current bucket.
members-edit = Add or edit a member
members-id = Id
members-id-hint = 1 to 64 letters, digits and _ . : -
members-image = Image URL
members-initial = Initial votes
members-multiplier = Multiplier (empty: the board's)
members-save = Save member
members-import = Import CSV
members-import-columns = Columns, with a header line; an empty cell keeps the member's value:
members-import-file = Choose a CSV file (its text lands below)
members-import-paste = Paste the CSV
members-preview = Preview
preview-title = Import preview
preview-summary = { $count ->
    [one] One member will be written
   *[other] { $count } members will be written
}: { $new } new, { $updated } updated, { $unchanged } unchanged. Nothing has been written yet.
preview-import = { $count ->
    [one] Import one member
   *[other] Import { $count } members
}
preview-errors = { $count ->
    [one] One line is wrong
   *[other] { $count } lines are wrong
}; nothing will be imported until they are fixed.
preview-line = Line
preview-problem = Problem
preview-change = Change
preview-new = new
preview-updated = updated
preview-unchanged = unchanged
preview-fix = Fix and preview again
rules-heading = Rate-limit rules
rules-rule = Rule
rules-words = In plain words
rules-dimensions = Dimensions (comma-separated)
rules-window = Window
rules-limit = Limit
rules-overrides = Overrides, one per line:
rules-missing = Votes lacking a value
rules-missing-refuse = are refused
rules-missing-skip = skip this rule
rules-none = No rules: every vote is accepted.
rules-new = New rule
rules-add = Add rule
rule-who-voter = each voter
rule-who-member = each member
rule-who-channel = each channel
rule-who-terminal = each terminal
rule-who-ip = each IP address
rule-who-creator = each creator of rooms (a voting page's address, an API key)
rule-for = {" "}for{" "}
rule-words = { $who }, { $limit } { $per }
rule-words-rooms = { $who }, { $limit } new { $limit ->
    [one] room
   *[other] rooms
} { $per }
rule-per-second = per second
rule-per-minute = per minute
rule-per-hour = per hour
rule-per-day = per day
rule-per-week = per week
rule-per-month = per month
rule-per-campaign = in the whole campaign
rule-per-rolling = in any { $span }
rule-skips = {" "}(votes without these values skip the rule)
rule-blocked = blocked
flash-board-created = Board { $slug } created.
flash-board-saved = Board saved.
flash-board-not-deleted = Not deleted: the confirmation did not match the slug.
flash-board-deleted = Board { $slug } deleted.
flash-member-saved = Member { $id } saved.
flash-member-enabled = Member { $id } enabled.
flash-member-disabled = Member { $id } disabled.
flash-imported = { $count ->
    [one] Imported one member.
   *[other] Imported { $count } members.
}
flash-key-revoked = Key { $id } revoked.
flash-rule-added = Rule “{ $name }” added: { $words }.
flash-rule-saved = Rule “{ $name }” saved: { $words }.
flash-rule-deleted = Rule { $id } deleted.
nav-leagues = Leagues
leagues-league = League
leagues-tiers = Tiers
leagues-tiers-hint = One tier per line, lowest first: name, share promoted, share demoted (0 to 1), like “silver 0.15 0.15”. The lowest tier demotes nobody, the highest promotes nobody.
leagues-season = Season
leagues-bracket-size = Bracket size
leagues-none = No leagues yet.
leagues-new = New league
leagues-slug = Slug
leagues-title = Title
leagues-timezone = Time zone
leagues-rewards = Rewards
leagues-rewards-hint = One reward per line: tier, ranks, reward, like “gold 1-3 crown”.
leagues-webhook = Webhook URL (optional)
leagues-create = Create league
leagues-save = Save settings
leagues-settings = Settings
leagues-settings-hint = Changes apply from the next season.
leagues-seasons = Seasons
leagues-season-n = Season { $n }
leagues-live = live
leagues-ends = Ends { $at }.
leagues-ended = Ended { $at }.
leagues-preview = Preview the close…
leagues-no-players = Nobody has joined this season yet.
leagues-rank = Rank
leagues-player = Player
leagues-score = Score
leagues-zone = Zone
leagues-bracket = Bracket
leagues-deliveries = Webhook deliveries
leagues-no-webhook = This league has no webhook.
leagues-attempts = Attempts
leagues-status = Last answer
leagues-delivered = Delivered
leagues-next-attempt = next attempt { $at }
leagues-no-deliveries = No deliveries yet.
leagues-webhook-secret = Signing secret:
leagues-previous-secret = Deliveries also carry a signature with the previous secret until { $at }.
leagues-rotate = Rotate the secret…
leagues-rotate-now = Make a new secret now
leagues-rotate-hint = For a day, deliveries are signed with both the new and the old secret, so the receiver can switch without refusing any.
leagues-gave-up = gave up { $at }
leagues-resend = Send again
flash-secret-rotated = A new signing secret is in use.
flash-delivery-resent = Delivery { $id } is being sent again.
leagues-preview-of = Closing season { $n } now
leagues-preview-sum = { $players } players in { $brackets } brackets. Nothing changes until you confirm.
leagues-promotions = Promotions
leagues-demotions = Demotions
leagues-move = Move
leagues-reward = Reward
leagues-nobody = Nobody.
leagues-close = Close the season…
leagues-close-now = Close season { $n } now
leagues-close-hint = Results are recorded, players move tiers, rewards wait for their next join and the next season starts at once.
leagues-back = Back to the league
league-season-day = Day
league-season-week = Week
league-season-month = Month
league-zone-promote = Promotion
league-zone-stay = Stays
league-zone-demote = Demotion
flash-league-saved = League saved; the changes apply from the next season.
flash-season-closed = Season { $season } closed: { $players } players.
league-closing = the season is over; its close is running
leagues-limits = Score limits
leagues-limits-hint = One per line: per (player, ip or player+ip), most writes, window (second to month, or rolling:10m), then its name (optional), like “player 10 minute ten a minute”. In effect at once.
home-intro = Real-time voting and leaderboards.
home-dashboard = Sign in to the dashboard
home-docs = API documentation
home-boards = Public voting pages
home-no-boards = No board has a public page yet.
leagues-rewards-given = Rewards this season gave
leagues-handed = Handed over
leagues-waiting = waiting for the player's next join through the key that played the season
nav-revocations = Revocations
revocations-title = Revocations
revocations-hint = Strike out a voter's votes: they leave every period's ranking, both views and the carry-over they gave, and the voter no longer counts among the participants. Rate limits keep what the votes used.
revocations-voter = Voter
revocations-search = Look up
revocations-member = Member
revocations-counted = Votes counted
revocations-struck = Votes struck out
revocations-no-votes = This voter has no votes in the ledger.
revocations-revoke = Strike out this voter's votes…
revocations-from = From (RFC 3339; empty: their first vote)
revocations-to = Until (RFC 3339; empty: now)
revocations-reason = Reason
revocations-revoke-now = Strike out { $voter }'s votes now
revocations-revoke-hint = This cannot be undone. It is recorded in the audit log with the reason.
revocations-past = Revocations made
revocations-votes = Votes struck out
revocations-none = No revocations yet.
flash-revoked = { $votes } votes of { $voter } struck out.

nav-webhooks = Webhooks
webhooks-title = Webhooks
webhooks-hint = Each webhook watches one top of this board and is sent a signed POST (X-Ovation-Signature, with its secret) whenever that top changes with events it wants: a member entering or leaving the top, or overtaking another. One delivery per change, retried until the receiver answers 2xx, for three days.
webhooks-url = URL
webhooks-top = Top watched
webhooks-events = Events
webhooks-secret = Secret
webhooks-test = Send a test
webhooks-delete = Delete…
webhooks-delete-now = Delete this webhook
webhooks-none = No webhooks yet.
webhooks-add = Add a webhook
webhooks-add-now = Add the webhook
webhooks-period = Period
webhooks-size = Members in the top
webhooks-event-entered_top = entered the top
webhooks-event-left_top = left the top
webhooks-event-overtook = overtook another member
webhooks-deliveries = Recent deliveries
webhooks-webhook = Webhook
webhooks-status = Status
webhooks-attempts = Attempts
webhooks-answer = Last answer
webhooks-body = Sent
webhooks-delivered = delivered
webhooks-gave-up = given up
webhooks-pending = pending
webhooks-no-deliveries = Nothing sent yet.
flash-webhook-added = Webhook { $id } added.
flash-webhook-tested = Test delivery { $delivery } to webhook { $id } queued.
flash-webhook-deleted = Webhook { $id } deleted.
nav-providers = Identity providers
providers-hint = Identity providers sign your voters' tokens. A board that accepts one takes votes carrying its tokens; a board whose voters are "signed in" takes no others on its voting page.
providers-new-secret = The new provider's HS256 secret, shown this once: mint your voters' tokens with it.
providers-name = Name
providers-kind = Kind
providers-kind-jwks = jwks: public keys at a JWKS URL
providers-kind-hmac = hmac: an HS256 secret made here
providers-issuer = Issuer (iss)
providers-audience = Audience (aud)
providers-keys = Keys
providers-jwks-url = JWKS URL (jwks only)
providers-algorithms = Algorithms (jwks only)
providers-voter-claim = Claim naming the voter
providers-channel-claim = Claim naming the channel (optional)
providers-terminal-claim = Claim naming the terminal (optional)
providers-max-age = Oldest token taken, in seconds since its iat
providers-leeway = Clock leeway, in seconds
providers-ages = Oldest / leeway
providers-login = Sign-in address (optional)
providers-none = No identity providers yet.
providers-new = New identity provider
providers-create = Create provider
providers-delete-now = Delete { $name }
flash-provider-created = Identity provider { $name } created.
flash-provider-deleted = Identity provider { $name } deleted.
board-share = Show it elsewhere
board-share-overlay = Stream overlay (OBS browser source; period, top 1–50 and theme transparent, dark or light in the address)
board-share-embed = The voting page in your site
nav-held = Held votes
held-title = Held votes
held-hint = Votes the board's watches held for review: they count nowhere until released. Release counts them as if accepted when cast; drop leaves them in the ledger, never counted. Each review is in the audit log.
held-watch = Watch
held-subject = Subject
held-held = Held
held-released = Released
held-dropped = Dropped
held-when = First – last
held-members = Held for
held-sample = Voters and addresses
held-every-member = every member
held-release = Release
held-drop = Drop
held-none = No votes held.
flash-held-released = { $votes } held votes released.
flash-held-dropped = { $votes } held votes dropped.
board-tell-held = Tell voters when a watch holds their vote for review (off: a held vote answers as an accepted one, so a vote farm learns nothing)
