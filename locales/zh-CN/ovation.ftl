# Ovation 的简体中文文本。键与 locales/en/ovation.ftl 相同。

## 数字、时间、时区

votes = { $count } 票
score = { $shown } 票
zone-city = { $city }时间
zone-UTC = 协调世界时
zone-Etc-UTC = 协调世界时
zone-Asia-Shanghai = 北京时间
zone-Asia-Hong-Kong = 香港时间
zone-Asia-Taipei = 台北时间
zone-Asia-Tokyo = 东京时间
zone-Europe-London = 伦敦时间
day-today = 今天 { $time }
day-tomorrow = 明天 { $time }
day-date = { $month }月{ $day }日（{ $weekday }）{ $time }
weekday-mon = 周一
weekday-tue = 周二
weekday-wed = 周三
weekday-thu = 周四
weekday-fri = 周五
weekday-sat = 周六
weekday-sun = 周日
wait =
    { $days ->
        [0] {""}
       *[other] {$days} 天{" "}
    }{ $hours ->
        [0] {""}
       *[other] {$hours} 小时{" "}
    }{ $minutes } 分钟后

## 周期与时间窗

period-hour = 本小时
period-day = 今天
period-week = 本周
period-month = 本月
period-all = 总榜
window-second = 本秒内
window-minute = 本分钟内
window-hour = 本小时内
window-day = 今天
window-week = 本周
window-month = 本月
window-campaign = 整个活动期间
window-rolling = 任意 { $span } 内

## 限流提示与剩余票数

refused-voter-member = 你{ $window }已为 { $name } 投了 { $limit } 票，这是每位投票人的上限。
refused-voter = 你{ $window }的 { $limit } 票已用完。
refused-member = { $name }{ $window }已获得允许的 { $limit } 票。
refused-other = 你所在位置{ $window }的 { $limit } 票上限已满。
opens-again = { $when }（{ $zone }）恢复投票，{ $within }。
opens-never = 该上限在整个活动期间有效。
refused-others = 你仍可投给其他成员：{ $window }还剩 { $remaining } / { $limit } 票。
quota-left = { $window }还剩 { $remaining } / { $limit } 票
quota-per-member = 每位成员{ $window }最多 { $limit } 票

## 投票页

language = 语言
periods = 周期
vote = 投票
vote-for = 为 { $name } 投票
thanks = 谢谢，你为 { $name } 投的票已计入。
no-members = 还没有成员。
voting-closed = 投票已结束。
refused-member-disabled = { $name } 目前不接受投票。
campaign-ended = 投票已结束。
campaign-not-started = 投票尚未开始。
