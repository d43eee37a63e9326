# Ovation 的简体中文文本。键与 locales/en/ovation.ftl 相同。

## 数字、时间、时区

votes = { $count } 票
score = { $shown } 票
points = { $shown } 分
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
date-long = { $month }月{ $day }日（{ $weekday }）
month-short = { $month }月
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
period-rolling-24h = 过去 24 小时
period-rolling-7d = 过去 7 天
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
refused-blocked = 本榜单不接受此类投票。
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

## 后台实时视图

nav-members = 成员
nav-rules = 规则
nav-edit = 编辑
nav-public-page = 公开页面
live-period-hour = 小时
live-period-day = 日
live-period-week = 周
live-period-month = 月
live-period-all = 全部
live-period-rolling-24h = 过去 24 小时
live-period-rolling-7d = 过去 7 天
live-bucket = 时段
live-current = 当前
live-earlier = ← 更早
live-later = 更晚 →
live-view = 视图
live-view-display = 展示
live-view-real = 真实
live-show = 显示
live-export = 导出 CSV
live-pause = 暂停更新
live-resume = 恢复实时更新
live-paused = 已暂停
live-resets = { $when }重置
live-participants = { $shown } 位参与者
live-members = { $shown } 位成员有票
live-updated = 更新于 { $when }
live-top-100 = 前 100 名
live-empty = 此时段还没有投票。
live-new = 新
col-rank = 排名
col-member = 成员
col-score = 得分
chart-votes = 每{ $step ->
    [day] 日
   *[hour] 小时
}票数
chart-refusals = 每条规则每{ $step ->
    [day] 日
   *[hour] 小时
}拒绝的票数
chart-participants = 每{ $period ->
    [hour] 小时
    [week] 周
    [month] 月
   *[day] 日
}参与人数
chart-top = 前 10 名
chart-axis = { $step ->
    [day] 日期
    [week] ISO 周
    [month] 月份
   *[hour] 小时
}，{ $zone }
chart-day = { $month }月{ $day }日
chart-unit-votes = 票数
chart-unit-refused = 拒绝的票数
chart-unit-voters = 投票人数
chart-unit-real = 得分（真实）
chart-unit-display = 得分（展示）
chart-no-rules = 没有限流规则，所以没有被拒绝的票。
chart-no-periods = 此榜单只保留总榜，因此没有按时段的参与人数。
chart-refusals-kept = 拒绝记录保留 { $days } 天，更早的不显示。

## 后台

nav-boards = 榜单
nav-keys = API 密钥
nav-audit = 审计日志
log-out = 退出登录
save = 保存
delete = 删除
cancel = 取消
list-separator = 、
login-title = 登录
login-heading = Ovation 管理后台
login-user = 用户名
login-password = 密码
login-submit = 登录
login-wrong = 用户名或密码错误。
login-throttled = 登录失败次数过多，请 15 分钟后再试。
audit-when = 时间
audit-who = 操作人
audit-action = 操作
audit-what = 对象
audit-detail = 详情
audit-filter = 筛选
audit-none = 暂无记录。
audit-none-filtered = 没有符合筛选条件的记录。
audit-newest = 显示最新的 500 条记录。
boards-new = 新建榜单
boards-board = 榜单
boards-status = 状态
boards-status-live = 进行中
boards-status-not-started = 未开始
boards-status-closed = 已结束
boards-off = 关闭
boards-votes-today = 今日票数
boards-none = 还没有榜单。
board-edit = 编辑榜单
board-slug = 标识（slug）
board-slug-hint = 1 到 64 个小写字母、数字或连字符，以字母或数字开头
board-title = 标题
board-description = 简介
board-membership = 成员方式
board-membership-closed = 封闭：仅限已登记的成员
board-membership-open = 开放：任何成员 ID
board-timezone = 时区
board-multiplier = 展示倍数 N
board-carry-over = 结转比例 r（0 到 1）
board-starts = 活动开始时间（RFC 3339，留空表示不限）
board-ends = 活动结束时间
board-max-count = 每次投票的最大票数
board-decimals = 页面显示的小数位数
board-retention = 已归档的周期在 Redis 中保留的天数（留空：永久）
board-retention-hour = 小时
board-retention-day = 日
board-retention-week = 周
board-retention-month = 月
board-archive-top = 每个周期每种视图归档的条目数
board-archive = 归档…
board-archive-now = 归档已结束的周期，并从 Redis 释放超过保留期的周期
board-archive-hint = 每个已结束的周期都会写入归档；超过保留期的周期会从 Redis 删除，此后其页面从归档读取。
live-archived = 已归档
members-history = 历史
history-chart = 各周期得分，从早到晚
flash-board-archived = 已归档 { $archived } 个周期，已从 Redis 释放 { $released } 个。
board-embed = 允许嵌入投票页的网站（每行一个来源，例如 https://shop.example）
board-scoring = 计分方式（创建后不可更改）
board-scoring-votes = 投票：两种视图、倍数、结转
board-scoring-scores = 分数：通过 incr、decr、set、best 写入
board-score-decimals = 分数保留的小数位数（分数榜，0 到 6）
board-storage = 存储方式（创建后不可更改）
board-storage-full = 完整：每个时段一个有序集合
board-storage-top-n = 前 N 名（分数榜）：保存全部分数，只排名前 N 名
board-storage-sharded = 分片：分数榜按成员、投票榜按投票人分布在多个有序集合中
board-retain = 前 N 名：参与排名的成员数（retain）
board-trim-at = 前 N 名：达到此数时裁剪回 N（留空为 1.2 × N）
board-shards = 分片：每个时段的有序集合数（2 到 256）
board-fixed = 计分与存储
board-instances = 榜单（创建后不可更改）
board-instances-one = 一个榜单
board-instances-family = 每个直播间、比赛或地区一个榜单：首次写入时创建，地址为 <slug>:<房间>
board-instance-ttl = 房间的榜单在多久没有写入后从 Redis 中移除
board-unit-minutes = 分钟
board-unit-hours = 小时
board-unit-days = 天
family-search = 房间
family-find = 查找
family-all = 全部房间
family-live = { $shown } 个活跃房间，最近写入的在前
family-matching = { $shown } 个活跃房间匹配
family-instance = 房间
family-last-write = 最后写入
family-members = 当前成员
family-none = 没有活跃房间：房间的榜单在第一次写入时创建。
family-next = 下一页 →
board-family-fixed = 每个房间一个榜单，{ $lifetime }没有写入即移除
lifetime = { $unit ->
    [days] { $count } 天
    [hours] { $count } 小时
    [minutes] { $count } 分钟
   *[seconds] { $count } 秒
}
board-public = 在 /b/<slug> 开放公开投票页
board-ledger = 保留账本：记录每一次被接受的写入，用于审计、重新计票与撤销（每房间一榜：每个房间有自己的账本，可供查阅；创建时关闭，创建后可在此开启）
board-late-grace = 截止后的宽限（秒，0 到 3600）：截止前投出的票在网关延迟送达时仍然计入
board-delete-confirm = 输入标识 { $slug } 以删除此榜单及其成员、规则和排名
board-delete = 删除榜单
keys-new-secret = 新密钥——请立即复制，之后不会再显示：
keys-name = 名称
keys-key = 密钥
keys-scopes = 权限范围
keys-channel = 渠道
keys-created = 创建时间
keys-state = 状态
keys-revoked = 已吊销
keys-live = 有效
keys-revoke = 吊销…
keys-revoke-now = 立即吊销“{ $name }”
keys-revoke-hint = 使用此密钥的客户端将立即被拒绝。
keys-none = 还没有密钥。
keys-new = 新建密钥
keys-bound = 绑定渠道（可选）
keys-create = 创建密钥
keys-boards = 排行榜
keys-leagues = 联赛
keys-reach-all = 全部
keys-reach-none = 无
keys-boards-field = 可访问的排行榜（可选）
keys-leagues-field = 可访问的联赛（可选）
keys-reach-hint = 用逗号分隔的标识。留空表示全部排行榜或联赛——但绑定渠道的密钥只能访问这里列出的联赛。访问其他排行榜或联赛时返回 key_not_allowed。
members-find = 查找
members-find-hint = ID 或名称
members-search = 搜索
members-rank-score = { $period }：排名 · 得分
members-votes = 投票
members-open = 开放
members-disabled = 已停用
members-disable = 停用
members-enable = 启用
members-no-match = 没有与“{ $q }”匹配的成员。
members-pages = 分页
members-previous = ← 上一页
members-next = 下一页 →
members-range = 第 { $first }–{ $last } 位，共 { $total } 位
members-display-note = 排名和得分为当前时段的展示视图。
members-edit = 添加或编辑成员
members-id = ID
members-id-hint = 1 到 64 个字母、数字或 _ . : -
members-image = 图片 URL
members-initial = 初始票数
members-multiplier = 倍数（留空则用榜单的）
members-save = 保存成员
members-import = 导入 CSV
members-import-columns = 列如下，需含表头行；留空的单元格保留成员原值：
members-import-file = 选择 CSV 文件（内容会填入下方）
members-import-paste = 粘贴 CSV
members-preview = 预览
preview-title = 导入预览
preview-summary = 将写入 { $count } 位成员：新增 { $new } 位，更新 { $updated } 位，不变 { $unchanged } 位。尚未写入任何内容。
preview-import = 导入 { $count } 位成员
preview-errors = 有 { $count } 行有误；改正之前不会导入任何内容。
preview-line = 行
preview-problem = 问题
preview-change = 变化
preview-new = 新增
preview-updated = 更新
preview-unchanged = 不变
preview-fix = 改正后重新预览
rules-heading = 限流规则
rules-rule = 规则
rules-words = 说明
rules-dimensions = 维度（逗号分隔）
rules-window = 时间窗口
rules-limit = 上限
rules-overrides = 例外，每行一条：
rules-missing = 缺少该值的投票
rules-missing-refuse = 拒绝
rules-missing-skip = 跳过此规则
rules-none = 没有规则：所有投票都会被接受。
rules-new = 新建规则
rules-add = 添加规则
rule-who-voter = 每位投票人
rule-who-member = 每位成员
rule-who-channel = 每个渠道
rule-who-terminal = 每种终端
rule-who-ip = 每个 IP 地址
rule-for = 对
rule-words = { $who }{ $per }最多 { $limit } 票
rule-per-second = 每秒
rule-per-minute = 每分钟
rule-per-hour = 每小时
rule-per-day = 每天
rule-per-week = 每周
rule-per-month = 每月
rule-per-campaign = 整个活动期间
rule-per-rolling = 任意 { $span } 内
rule-skips = （缺少这些值的投票不受此规则限制）
rule-blocked = 禁止
flash-board-created = 已创建榜单 { $slug }。
flash-board-saved = 榜单已保存。
flash-board-not-deleted = 未删除：输入的确认与标识不符。
flash-board-deleted = 已删除榜单 { $slug }。
flash-member-saved = 已保存成员 { $id }。
flash-member-enabled = 已启用成员 { $id }。
flash-member-disabled = 已停用成员 { $id }。
flash-imported = 已导入 { $count } 位成员。
flash-key-revoked = 已吊销密钥 { $id }。
flash-rule-added = 已添加规则“{ $name }”：{ $words }。
flash-rule-saved = 已保存规则“{ $name }”：{ $words }。
flash-rule-deleted = 已删除规则 { $id }。
nav-leagues = 联赛
leagues-league = 联赛
leagues-tiers = 段位
leagues-tiers-hint = 每行一个段位，从低到高：名称、晋级比例、降级比例（0 到 1），例如“silver 0.15 0.15”。最低段位不降级，最高段位不晋级。
leagues-season = 赛季
leagues-bracket-size = 分组人数
leagues-none = 还没有联赛。
leagues-new = 新建联赛
leagues-slug = 标识
leagues-title = 标题
leagues-timezone = 时区
leagues-rewards = 奖励
leagues-rewards-hint = 每行一项奖励：段位、名次、奖励，例如“gold 1-3 crown”。
leagues-webhook = Webhook 地址（可选）
leagues-create = 创建联赛
leagues-save = 保存设置
leagues-settings = 设置
leagues-settings-hint = 修改从下个赛季开始生效。
leagues-seasons = 赛季
leagues-season-n = 第 { $n } 赛季
leagues-live = 进行中
leagues-ends = 结束于 { $at }。
leagues-ended = 已于 { $at } 结束。
leagues-preview = 预览结算…
leagues-no-players = 本赛季还没有玩家加入。
leagues-rank = 名次
leagues-player = 玩家
leagues-score = 分数
leagues-zone = 区域
leagues-bracket = 分组
leagues-deliveries = Webhook 投递
leagues-no-webhook = 此联赛没有 Webhook。
leagues-attempts = 尝试次数
leagues-status = 最近应答
leagues-delivered = 已投递
leagues-next-attempt = 下次尝试 { $at }
leagues-no-deliveries = 还没有投递。
leagues-webhook-secret = 签名密钥：
leagues-previous-secret = 在 { $at } 之前，投递还会附带用旧密钥计算的签名。
leagues-rotate = 更换密钥…
leagues-rotate-now = 立即生成新密钥
leagues-rotate-hint = 一天之内，投递会同时用新旧两个密钥签名，接收方可以在不拒收任何投递的情况下切换。
leagues-gave-up = 已于 { $at } 放弃
leagues-resend = 重新发送
flash-secret-rotated = 已启用新的签名密钥。
flash-delivery-resent = 投递 { $id } 正在重新发送。
leagues-preview-of = 立即结算第 { $n } 赛季
leagues-preview-sum = { $brackets } 个分组共 { $players } 名玩家。确认之前不会有任何改变。
leagues-promotions = 晋级
leagues-demotions = 降级
leagues-move = 变动
leagues-reward = 奖励
leagues-nobody = 无。
leagues-close = 结算本赛季…
leagues-close-now = 立即结算第 { $n } 赛季
leagues-close-hint = 结果将被记录，玩家升降段位，奖励在其下次加入时发放，下个赛季立即开始。
leagues-back = 返回联赛
league-season-day = 日
league-season-week = 周
league-season-month = 月
league-zone-promote = 晋级区
league-zone-stay = 保级区
league-zone-demote = 降级区
flash-league-saved = 联赛已保存；修改从下个赛季开始生效。
flash-season-closed = 第 { $season } 赛季已结算：{ $players } 名玩家。
league-closing = 赛季已结束，正在结算
leagues-limits = 计分限制
leagues-limits-hint = 每行一条：计数对象（player、ip 或 player+ip）、最多写入次数、时间窗口（second 到 month，或 rolling:10m），然后是名称（可选），例如“player 10 minute 每分钟十次”。立即生效。
home-intro = 实时投票与排行榜。
home-dashboard = 登录管理后台
home-docs = API 文档
home-boards = 公开投票页面
home-no-boards = 还没有开放公开页面的排行榜。
leagues-rewards-given = 本赛季发放的奖励
leagues-handed = 已交付
leagues-waiting = 等待该玩家通过参赛时所用的密钥再次加入
nav-revocations = 撤销
revocations-title = 撤销投票
revocations-hint = 撤销某个投票者的投票：这些票将从每个周期的排行中移除（两种视图，以及它们带来的结转），该投票者也不再计入参与人数。频率限制保留这些票已用的额度。
revocations-voter = 投票者
revocations-search = 查询
revocations-member = 选项
revocations-counted = 已计票数
revocations-struck = 已撤销票数
revocations-no-votes = 账本中没有该投票者的投票。
revocations-revoke = 撤销该投票者的投票…
revocations-from = 起始（RFC 3339；留空：从第一票起）
revocations-to = 截止（RFC 3339；留空：到现在）
revocations-reason = 原因
revocations-revoke-now = 立即撤销 { $voter } 的投票
revocations-revoke-hint = 此操作无法恢复，并会连同原因记入审计日志。
revocations-past = 已做的撤销
revocations-votes = 撤销票数
revocations-none = 尚无撤销。
flash-revoked = 已撤销 { $voter } 的 { $votes } 票。

nav-webhooks = Webhook
webhooks-title = Webhook
webhooks-hint = 每个 webhook 关注本榜单的一个前列榜；每当它发生所关注的变化（成员进入或离开前列、超过另一成员），就向其发送一次签名的 POST（X-Ovation-Signature，用它的密钥签名）。每次变化一次投递，直到接收方回应 2xx 为止，最多重试三天。
webhooks-url = 地址
webhooks-top = 关注的前列榜
webhooks-events = 事件
webhooks-secret = 密钥
webhooks-test = 发送测试
webhooks-delete = 删除…
webhooks-delete-now = 删除此 webhook
webhooks-none = 尚无 webhook。
webhooks-add = 添加 webhook
webhooks-add-now = 添加 webhook
webhooks-period = 周期
webhooks-size = 前列人数
webhooks-event-entered_top = 进入前列
webhooks-event-left_top = 离开前列
webhooks-event-overtook = 超过其他成员
webhooks-deliveries = 最近的投递
webhooks-webhook = Webhook
webhooks-status = 状态
webhooks-attempts = 尝试次数
webhooks-answer = 最近回应
webhooks-body = 发送内容
webhooks-delivered = 已送达
webhooks-gave-up = 已放弃
webhooks-pending = 待发送
webhooks-no-deliveries = 尚未发送任何内容。
flash-webhook-added = 已添加 webhook { $id }。
flash-webhook-tested = 已为 webhook { $id } 排入测试投递 { $delivery }。
flash-webhook-deleted = 已删除 webhook { $id }。
