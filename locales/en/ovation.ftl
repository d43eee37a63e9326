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
day-date = { $weekday } { $day } { $month ->
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
} { $time }
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
refused-member-disabled = { $name } does not take votes now.
campaign-ended = Voting has closed.
campaign-not-started = Voting has not opened yet.
