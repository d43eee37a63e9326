//! Charts as server-rendered SVG: no chart library to vendor, no script, so they work
//! under the strict Content-Security-Policy and without JavaScript, and an htmx refresh
//! of the live view redraws them with the numbers.
//!
//! Sized to be read on a phone: the drawing is 400 units wide, so its 12-unit text is
//! still 10 px on a 340 px screen. Every chart has a titled value axis with gridlines at
//! round ticks, numbers grouped by thousands, a titled time axis, a legend when it has
//! several lines, and a tooltip (`<title>`) with the exact value on every point and bar.

use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;

use crate::domain::period::{Bucket, Period};
use std::fmt::Write;

use crate::i18n::Lang;

const WIDTH: f64 = 400.0;
const HEIGHT: f64 = 240.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 44.0;
const RIGHT: f64 = 10.0;
/// Width of a digit or Latin letter in 12-unit text, roughly; CJK characters take two.
const CHAR: f64 = 7.0;

/// Escapes text for an SVG text node or attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// How wide `text` draws, in units.
fn text_width(text: &str) -> f64 {
    text.chars()
        .map(|c| if c.is_ascii() { CHAR } else { 2.0 * CHAR })
        .sum()
}

/// `text` cut to fit `width` units, with an ellipsis when cut.
fn fit(text: &str, width: f64) -> String {
    if text_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = CHAR;
    for c in text.chars() {
        used += text_width(c.encode_utf8(&mut [0; 4]));
        if used > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

fn open(svg: &mut String, title: &str) {
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = escape(title),
    );
}

/// Round ticks from 0 covering `max`: steps of 1, 2 or 5 times a power of ten, three to
/// six of them, and never less than 1 apart (counts are whole).
pub fn ticks(max: f64) -> Vec<f64> {
    let max = max.max(1.0);
    let rough = max / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * power)
        .max(1.0);
    let top = (max / step).ceil() * step;
    (0..)
        .map(|i| f64::from(i) * step)
        .take_while(|t| *t <= top + step / 2.0)
        .collect()
}

/// The plot area's left edge and the value of its top, for values up to `max`: wide
/// enough for the longest tick label.
struct ValueAxis {
    ticks: Vec<f64>,
    labels: Vec<String>,
    left: f64,
    top: f64,
}

impl ValueAxis {
    fn new(max: f64, lang: Lang) -> Self {
        let ticks = ticks(max);
        let labels: Vec<String> = ticks.iter().map(|t| lang.number(*t, 0)).collect();
        let widest = labels.iter().map(|l| text_width(l)).fold(0.0, f64::max);
        Self {
            top: ticks.last().copied().unwrap_or(1.0),
            ticks,
            labels,
            left: widest + 10.0,
        }
    }

    fn y(&self, value: f64) -> f64 {
        let base = HEIGHT - BOTTOM;
        base - (base - TOP) * value / self.top
    }

    /// Gridlines, tick labels and the axis title above them.
    fn draw(&self, svg: &mut String, unit: &str) {
        for (tick, label) in self.ticks.iter().zip(&self.labels) {
            let y = self.y(*tick);
            let _ = write!(
                svg,
                r#"<line class="grid" x1="{l}" y1="{y:.1}" x2="{r}" y2="{y:.1}"/><text class="tick" x="{lx}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
                l = self.left,
                r = WIDTH - RIGHT,
                lx = self.left - 4.0,
                ty = y + 4.0,
            );
        }
        let _ = write!(
            svg,
            r#"<text class="unit" x="{x}" y="14">{}</text>"#,
            escape(unit),
            x = 2.0,
        );
    }
}

/// One line of a line chart: a name and a value per point (`None`: nothing known there,
/// and the line breaks).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// A line chart over a time axis.
pub struct Lines<'a> {
    /// What the chart shows, for screen readers and the tooltip of the whole.
    pub title: &'a str,
    /// The value axis' title: the unit ("votes").
    pub unit: &'a str,
    /// The time axis' title, with the zone ("hour, Beijing time").
    pub axis: &'a str,
    /// A short label per point for the axis ("14:00").
    pub ticks: &'a [String],
    /// A whole label per point for its tooltip ("Mon 23 Nov 14:00 Beijing time").
    pub points: &'a [String],
    pub series: &'a [Series],
    pub lang: Lang,
}

impl Lines<'_> {
    pub fn render(&self) -> String {
        let mut svg = String::new();
        open(&mut svg, self.title);
        let max = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
            .fold(0.0, f64::max);
        let values = ValueAxis::new(max, self.lang);
        values.draw(&mut svg, self.unit);
        let n = self.points.len();
        let width = WIDTH - RIGHT - values.left;
        let x = |i: usize| values.left + width * i as f64 / (n.max(2) - 1) as f64;
        let base = HEIGHT - BOTTOM;
        let _ = write!(
            svg,
            r#"<line class="axis" x1="{l}" y1="{base}" x2="{r}" y2="{base}"/>"#,
            l = values.left,
            r = WIDTH - RIGHT,
        );
        // As many time labels as fit side by side, evenly spread, first and last included.
        let widest = self.ticks.iter().map(|t| text_width(t)).fold(0.0, f64::max);
        let fits = ((width / (widest + 14.0)).floor() as usize)
            .clamp(2, 7)
            .min(n);
        let mut shown: Vec<usize> = (0..fits)
            .map(|k| (k * (n.max(1) - 1) + (fits - 1) / 2) / (fits - 1).max(1))
            .collect();
        shown.dedup();
        for i in shown {
            let anchor = match i {
                0 => "start",
                i if i + 1 == n => "end",
                _ => "middle",
            };
            let _ = write!(
                svg,
                r#"<line class="axis" x1="{x:.1}" y1="{base}" x2="{x:.1}" y2="{b4}"/><text class="tick" x="{x:.1}" y="{ty}" text-anchor="{anchor}">{}</text>"#,
                escape(&self.ticks[i]),
                x = x(i),
                b4 = base + 4.0,
                ty = base + 16.0,
            );
        }
        let _ = write!(
            svg,
            r#"<text class="unit" x="{mid}" y="{y}" text-anchor="middle">{}</text>"#,
            escape(self.axis),
            mid = values.left + width / 2.0,
            y = HEIGHT - 6.0,
        );
        for (s, series) in self.series.iter().enumerate() {
            let mut run = Vec::new();
            let mut runs = Vec::new();
            for (i, v) in series.values.iter().enumerate() {
                match v {
                    Some(v) => run.push(format!("{:.1},{:.1}", x(i), values.y(*v))),
                    None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
                    None => {}
                }
            }
            if !run.is_empty() {
                runs.push(run);
            }
            for run in runs {
                let _ = write!(
                    svg,
                    r#"<polyline class="line s{}" points="{}"/>"#,
                    s % 6,
                    run.join(" ")
                );
            }
            for (i, v) in series.values.iter().enumerate() {
                if let Some(v) = v {
                    let _ = write!(
                        svg,
                        r#"<circle class="pt s{}" cx="{:.1}" cy="{:.1}" r="5"><title>{} · {}: {}</title></circle>"#,
                        s % 6,
                        x(i),
                        values.y(*v),
                        escape(&self.points[i]),
                        escape(&series.name),
                        self.lang.number(*v, 0),
                    );
                }
            }
        }
        svg.push_str("</svg>");
        if self.series.len() > 1 {
            svg.push_str(r#"<ul class="legend">"#);
            for (s, series) in self.series.iter().enumerate() {
                let _ = write!(
                    svg,
                    r#"<li><span class="swatch s{}"></span>{}</li>"#,
                    s % 6,
                    escape(&series.name)
                );
            }
            svg.push_str("</ul>");
        }
        svg
    }
}

/// Horizontal bars, best first (`items`: label, value), each labelled with its value;
/// long labels are shortened, whole in the tooltip.
pub fn bars(title: &str, unit: &str, items: &[(String, f64)], lang: Lang) -> String {
    let mut svg = String::new();
    open(&mut svg, title);
    let max = items.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1.0);
    let label_width = 120.0;
    let values: Vec<String> = items.iter().map(|(_, v)| lang.number(*v, 0)).collect();
    let value_width = values.iter().map(|v| text_width(v)).fold(0.0, f64::max) + 8.0;
    let plot = WIDTH - RIGHT - label_width - value_width;
    let row = (HEIGHT - TOP - 4.0) / items.len().max(10) as f64;
    let _ = write!(
        svg,
        r#"<text class="unit" x="{WIDTH}" y="14" text-anchor="end">{}</text>"#,
        escape(unit)
    );
    for (i, ((label, value), shown)) in items.iter().zip(&values).enumerate() {
        let y = TOP + row * i as f64;
        let width = (plot * value / max).max(1.0);
        let _ = write!(
            svg,
            r#"<g><title>{whole}: {shown}</title><text class="tick" x="{lx}" y="{ty:.1}" text-anchor="end">{label}</text><rect class="bar" x="{label_width}" y="{y:.1}" width="{width:.1}" height="{h:.1}"/><text class="value" x="{vx:.1}" y="{ty:.1}">{shown}</text></g>"#,
            whole = escape(label),
            lx = label_width - 6.0,
            ty = y + row * 0.62,
            label = escape(&fit(label, label_width - 10.0)),
            h = row * 0.72,
            vx = label_width + width + 4.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A bucket as a chart's time axis shows it, short: `14:00`, `11/23`, `W48`, `2026-11`.
pub fn short_label(l: Lang, bucket: &Bucket, tz: Tz, with_day: bool) -> String {
    let Some(start) = bucket.start.map(|s| s.with_timezone(&tz)) else {
        return bucket.label.clone();
    };
    let day = || {
        l.tr(
            "chart-day",
            &[
                ("month", i64::from(start.month()).into()),
                ("day", i64::from(start.day()).into()),
            ],
        )
    };
    match bucket.period {
        Period::Hour if with_day => format!("{} {:02}:{:02}", day(), start.hour(), start.minute()),
        Period::Hour => format!("{:02}:{:02}", start.hour(), start.minute()),
        Period::Day => day(),
        Period::Week => bucket
            .label
            .rsplit('-')
            .next()
            .unwrap_or_default()
            .to_owned(),
        Period::Month | Period::All | Period::Rolling(_) | Period::Trending(_) => {
            bucket.label.clone()
        }
    }
}

/// A bucket whole, for a tooltip: "today 14:00 Beijing time", "Tue 3 Nov Beijing time",
/// "2026-W48".
pub fn long_label(l: Lang, bucket: &Bucket, tz: Tz, now: DateTime<Utc>) -> String {
    match (bucket.period, bucket.start) {
        (Period::Hour, Some(start)) => format!("{} {}", l.when(start, tz, now), l.zone(tz)),
        (Period::Day, Some(start)) => format!("{} {}", l.date(start, tz), l.zone(tz)),
        _ => bucket.label.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_shortened_and_whole_in_the_tooltip() {
        let svg = bars(
            "top",
            "votes",
            &[
                ("<script>alert(1)</script>".into(), 4.0),
                ("Alexandria Ocasio-Montgomery the Third".into(), 207_288.0),
            ],
            Lang::En,
        );
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt;: 4</title>"));
        assert!(svg.contains("<title>Alexandria Ocasio-Montgomery the Third: 207,288</title>"));
        assert!(svg.contains(">Alexandria Oca…</text>"), "{svg}");
        assert!(svg.contains(r#"class="value" x="#) && svg.contains(">207,288</text>"));
    }

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(ticks(0.0), vec![0.0, 1.0]);
        assert_eq!(ticks(3.0), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(ticks(10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(
            ticks(207_288.0),
            vec![0.0, 50_000.0, 100_000.0, 150_000.0, 200_000.0, 250_000.0]
        );
        assert_eq!(ticks(1_001.0), vec![0.0, 500.0, 1_000.0, 1_500.0]);
    }

    #[test]
    fn lines_have_axes_ticks_tooltips_a_legend_and_gaps() {
        let ticks: Vec<String> = (0..24).map(|h| format!("{h:02}:00")).collect();
        let points: Vec<String> = ticks
            .iter()
            .map(|t| format!("23 Nov {t} Beijing time"))
            .collect();
        let mut votes: Vec<Option<f64>> = (0..24).map(|h| Some(f64::from(h) * 1000.0)).collect();
        votes[23] = None;
        let svg = Lines {
            title: "votes per hour",
            unit: "votes",
            axis: "hour, Beijing time",
            ticks: &ticks,
            points: &points,
            series: &[
                Series {
                    name: "votes".into(),
                    values: votes,
                },
                Series {
                    name: "five a day".into(),
                    values: vec![Some(1.0); 24],
                },
            ],
            lang: Lang::En,
        }
        .render();
        // The value axis: round ticks, grouped, and its unit.
        for label in [
            ">0<", ">5,000<", ">10,000<", ">15,000<", ">20,000<", ">25,000<",
        ] {
            assert!(svg.contains(label), "{label} in {svg}");
        }
        assert!(svg.contains(r#"<text class="unit" x="2" y="14">votes</text>"#));
        // The time axis: its title with the zone, the first and last hours among its labels.
        assert!(svg.contains(">hour, Beijing time</text>"));
        assert!(svg.contains(r#"text-anchor="start">00:00</text>"#));
        assert!(svg.contains(r#"text-anchor="end">23:00</text>"#));
        // Every known point has its tooltip; the unknown last hour has none.
        assert!(svg.contains("<title>23 Nov 22:00 Beijing time · votes: 22,000</title>"));
        assert!(!svg.contains("23 Nov 23:00 Beijing time · votes"));
        assert_eq!(svg.matches("<circle").count(), 23 + 24);
        // Two lines: a legend names both.
        assert!(svg.contains(r#"<li><span class="swatch s1"></span>five a day</li>"#));
    }
}
