//! Languages: English and Simplified Chinese, through Fluent (`fluent-templates`, the
//! messages compiled in from `locales/<lang>/*.ftl`). Plural forms come from the
//! messages' CLDR plural categories; numbers, times, time zones and durations are
//! formatted here, per language, so no page or answer glues words together by hand.
//!
//! The API speaks English; pages pick the language from a `lang` cookie (set by the
//! language switch) or else `Accept-Language`.

use std::borrow::Cow;
use std::collections::HashMap;

use chrono::{DateTime, Datelike, Duration, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use fluent_templates::fluent_bundle::FluentValue;
use fluent_templates::{LanguageIdentifier, Loader, langid};

use crate::domain::period::{HalfLife, Rolling, SlotUnit};

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // Fluent wraps arguments in Unicode isolation marks by default; in HTML they are
        // invisible characters that only get in the way (copying, searching, tests).
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

static EN: LanguageIdentifier = langid!("en");
static ZH: LanguageIdentifier = langid!("zh-CN");

/// A language the pages speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Zh,
}

/// A message argument: text or a number (numbers choose plural forms).
pub enum Arg<'a> {
    Text(Cow<'a, str>),
    Number(f64),
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(s: &'a str) -> Self {
        Arg::Text(Cow::Borrowed(s))
    }
}

impl From<String> for Arg<'_> {
    fn from(s: String) -> Self {
        Arg::Text(Cow::Owned(s))
    }
}

impl From<i64> for Arg<'_> {
    fn from(n: i64) -> Self {
        Arg::Number(n as f64)
    }
}

impl From<&i64> for Arg<'_> {
    fn from(n: &i64) -> Self {
        Arg::Number(*n as f64)
    }
}

impl Lang {
    pub const EVERY: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The BCP 47 tag (`en`, `zh-CN`), as in `<html lang>` and the `lang` cookie.
    pub fn tag(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Zh => "zh-CN",
        }
    }

    /// The language's own name, for the switch.
    pub fn name(self) -> &'static str {
        match self {
            Self::En => "English",
            Self::Zh => "简体中文",
        }
    }

    fn id(self) -> &'static LanguageIdentifier {
        match self {
            Self::En => &EN,
            Self::Zh => &ZH,
        }
    }

    /// A tag as the cookie or a query holds it.
    pub fn parse(tag: &str) -> Option<Self> {
        let tag = tag.trim().to_ascii_lowercase();
        if tag == "zh" || tag.starts_with("zh-") || tag.starts_with("zh_") {
            Some(Self::Zh)
        } else if tag == "en" || tag.starts_with("en-") || tag.starts_with("en_") {
            Some(Self::En)
        } else {
            None
        }
    }

    /// The best language of an `Accept-Language` header (by quality, then order).
    pub fn negotiate(accept: &str) -> Self {
        let mut best: Option<(f32, Lang)> = None;
        for part in accept.split(',') {
            let mut pieces = part.split(';');
            let tag = pieces.next().unwrap_or("");
            let quality = pieces
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            if let Some(lang) = Self::parse(tag)
                && best.is_none_or(|(q, _)| quality > q)
            {
                best = Some((quality, lang));
            }
        }
        best.map_or(Self::En, |(_, lang)| lang)
    }

    /// The message `key`.
    pub fn t(self, key: &str) -> String {
        LOCALES.lookup(self.id(), key)
    }

    /// A period's name under `prefix`: `period-day`; a rolling window's from
    /// `period-rolling-hours` or `period-rolling-days` with its length; a trending
    /// period's from `period-trending` with its half-life in hours.
    pub fn period(self, prefix: &str, period: &str) -> String {
        if let Ok(half_life) = HalfLife::parse(period) {
            return self.tr(
                &format!("{prefix}-trending"),
                &[("n", Arg::Number(f64::from(half_life.hours())))],
            );
        }
        match Rolling::parse(period) {
            Ok(window) => {
                let unit = match window.unit() {
                    SlotUnit::Hour => "hours",
                    SlotUnit::Day => "days",
                };
                self.tr(
                    &format!("{prefix}-rolling-{unit}"),
                    &[("n", Arg::Number(window.slots() as f64))],
                )
            }
            Err(_) => self.t(&format!("{prefix}-{period}")),
        }
    }

    /// The message `key` with arguments.
    pub fn tr(self, key: &str, args: &[(&'static str, Arg<'_>)]) -> String {
        let args: HashMap<Cow<'static, str>, FluentValue<'_>> = args
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    Arg::Text(text) => FluentValue::from(text.as_ref()),
                    Arg::Number(n) => FluentValue::from(*n),
                };
                (Cow::Borrowed(*name), value)
            })
            .collect();
        LOCALES.lookup_with_args(self.id(), key, &args)
    }

    /// Sentences one after the other: a space between them in English, none in Chinese.
    pub fn sentences(self, parts: &[String]) -> String {
        let gap = match self {
            Self::En => " ",
            Self::Zh => "",
        };
        parts.join(gap)
    }

    /// A number with `decimals` decimals (rounded) and thousands grouped: `1,234.5`
    /// (both languages group by thousands with a comma).
    pub fn number(self, value: f64, decimals: u32) -> String {
        let text = format!("{:.*}", decimals as usize, value.abs());
        let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
        let mut grouped = String::with_capacity(text.len() + whole.len() / 3 + 1);
        if value < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
            grouped.push('-');
        }
        for (i, digit) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(digit);
        }
        if !fraction.is_empty() {
            grouped.push('.');
            grouped.push_str(fraction);
        }
        grouped
    }

    /// A time zone as people call it: "Beijing time", "北京时间", "New York time".
    pub fn zone(self, tz: Tz) -> String {
        let key = format!("zone-{}", tz.name().replace(['/', '_'], "-"));
        let named = LOCALES.lookup_single_language::<&str>(self.id(), &key, None);
        match named {
            Ok(name) => name,
            Err(_) => {
                let city = tz
                    .name()
                    .rsplit('/')
                    .next()
                    .unwrap_or(tz.name())
                    .replace('_', " ");
                self.tr("zone-city", &[("city", city.into())])
            }
        }
    }

    /// A local time of day relative to `now`: "today 21:30", "tomorrow 00:00", or with
    /// the date further out.
    pub fn when(self, at: DateTime<Utc>, tz: Tz, now: DateTime<Utc>) -> String {
        let (local, today) = (at.with_timezone(&tz), now.with_timezone(&tz).date_naive());
        let clock = format!("{:02}:{:02}", local.hour(), local.minute());
        let day = local.date_naive();
        if day == today {
            self.tr("day-today", &[("time", clock.into())])
        } else if today.succ_opt() == Some(day) {
            self.tr("day-tomorrow", &[("time", clock.into())])
        } else {
            let weekday = self.t(weekday_key(local.weekday()));
            self.tr(
                "day-date",
                &[
                    ("time", clock.into()),
                    ("weekday", weekday.into()),
                    ("month", i64::from(local.month()).into()),
                    ("mon", self.month(local.month()).into()),
                    ("day", i64::from(local.day()).into()),
                    ("year", i64::from(local.year()).into()),
                ],
            )
        }
    }

    /// A local date: "Tue 3 Nov", "11月3日（周二）".
    pub fn date(self, at: DateTime<Utc>, tz: Tz) -> String {
        let local = at.with_timezone(&tz);
        self.tr(
            "date-long",
            &[
                ("weekday", self.t(weekday_key(local.weekday())).into()),
                ("month", i64::from(local.month()).into()),
                ("mon", self.month(local.month()).into()),
                ("day", i64::from(local.day()).into()),
            ],
        )
    }

    /// A month's short name: "Nov", "11月".
    fn month(self, month: u32) -> String {
        self.tr("month-short", &[("month", i64::from(month).into())])
    }

    /// A lifetime in plain words, in the largest unit that counts it whole: "7 days",
    /// "36 hours", "90 minutes", "45 seconds".
    pub fn lifetime(self, seconds: i64) -> String {
        let (count, unit) = [(86_400, "days"), (3_600, "hours"), (60, "minutes")]
            .into_iter()
            .find(|(unit, _)| seconds % unit == 0)
            .map_or((seconds, "seconds"), |(unit, name)| (seconds / unit, name));
        self.tr(
            "lifetime",
            &[("count", count.into()), ("unit", unit.into())],
        )
    }

    /// A duration from now: "in 7 h 14 min", "7 小时 14 分钟后".
    pub fn within(self, wait: Duration) -> String {
        let minutes = (wait.num_seconds().max(0) + 59) / 60;
        let (days, hours, mins) = (minutes / 1440, minutes % 1440 / 60, minutes % 60);
        self.tr(
            "wait",
            &[
                ("days", days.into()),
                ("hours", hours.into()),
                ("minutes", mins.into()),
            ],
        )
    }
}

fn weekday_key(day: Weekday) -> &'static str {
    match day {
        Weekday::Mon => "weekday-mon",
        Weekday::Tue => "weekday-tue",
        Weekday::Wed => "weekday-wed",
        Weekday::Thu => "weekday-thu",
        Weekday::Fri => "weekday-fri",
        Weekday::Sat => "weekday-sat",
        Weekday::Sun => "weekday-sun",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(raw: &str) -> DateTime<Utc> {
        raw.parse().unwrap()
    }

    #[test]
    fn accept_language_picks_by_quality_and_the_cookie_tag_parses() {
        assert_eq!(Lang::negotiate("zh-CN,zh;q=0.9,en;q=0.8"), Lang::Zh);
        assert_eq!(Lang::negotiate("en-US,en;q=0.9,zh;q=0.8"), Lang::En);
        assert_eq!(Lang::negotiate("fr-FR, zh-TW;q=0.5"), Lang::Zh);
        assert_eq!(Lang::negotiate("fr"), Lang::En);
        assert_eq!(Lang::negotiate(""), Lang::En);
        assert_eq!(Lang::parse("zh-CN"), Some(Lang::Zh));
        assert_eq!(Lang::parse("de"), None);
    }

    #[test]
    fn numbers_round_and_group_by_thousands() {
        assert_eq!(Lang::En.number(202.2, 0), "202");
        assert_eq!(Lang::En.number(207288.0, 0), "207,288");
        assert_eq!(Lang::Zh.number(1234567.891, 2), "1,234,567.89");
        assert_eq!(Lang::En.number(-1234.5, 1), "-1,234.5");
        assert_eq!(Lang::En.number(-0.4, 0), "0");
    }

    #[test]
    fn plural_forms_zones_and_times_read_naturally() {
        assert_eq!(Lang::En.tr("votes", &[("count", 1.into())]), "1 vote");
        assert_eq!(Lang::En.tr("votes", &[("count", 3.into())]), "3 votes");
        assert_eq!(Lang::Zh.tr("votes", &[("count", 3.into())]), "3 票");
        let shanghai: Tz = "Asia/Shanghai".parse().unwrap();
        assert_eq!(Lang::En.zone(shanghai), "Beijing time");
        assert_eq!(Lang::Zh.zone(shanghai), "北京时间");
        let new_york: Tz = "America/New_York".parse().unwrap();
        assert_eq!(Lang::En.zone(new_york), "New York time");
        let now = at("2026-11-23T08:46:00Z");
        let midnight = at("2026-11-23T16:00:00Z");
        assert_eq!(Lang::En.when(midnight, shanghai, now), "tomorrow 00:00");
        assert_eq!(Lang::Zh.when(midnight, shanghai, now), "明天 00:00");
        assert_eq!(Lang::En.within(midnight - now), "in 7 h 14 min");
        assert_eq!(Lang::Zh.within(midnight - now), "7 小时 14 分钟后");
        assert_eq!(Lang::En.within(Duration::seconds(30)), "in 1 min");
        assert_eq!(
            Lang::En.when(at("2026-11-30T01:00:00Z"), shanghai, now),
            "Mon 30 Nov 09:00"
        );
    }

    #[test]
    fn both_languages_have_every_message() {
        let keys = |ftl: &str| -> std::collections::BTreeSet<String> {
            ftl.lines()
                .filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))
                .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().to_owned()))
                .collect()
        };
        let en = keys(include_str!("../locales/en/ovation.ftl"));
        let zh = keys(include_str!("../locales/zh-CN/ovation.ftl"));
        assert!(en.len() > 200, "{}", en.len());
        assert_eq!(
            en.symmetric_difference(&zh).collect::<Vec<_>>(),
            Vec::<&String>::new()
        );
    }
}
