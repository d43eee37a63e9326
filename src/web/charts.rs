//! Charts as server-rendered SVG: no chart library to vendor, no script, so they work
//! under the strict Content-Security-Policy and without JavaScript, and an htmx refresh
//! of the live view redraws them with the numbers.

use std::fmt::Write;

const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 180.0;
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 20.0;
const TOP: f64 = 10.0;

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

fn open(svg: &mut String, title: &str) {
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}"><title>{}</title>"#,
        escape(title),
        escape(title)
    );
}

fn axes(svg: &mut String, max: f64, first: &str, last: &str) {
    let base = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        r#"<line class="axis" x1="{LEFT}" y1="{base}" x2="{WIDTH}" y2="{base}"/><line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}"/><text x="{x}" y="{y}" text-anchor="end">{max}</text><text x="{x}" y="{base}" text-anchor="end">0</text><text x="{LEFT}" y="{HEIGHT}">{first}</text><text x="{WIDTH}" y="{HEIGHT}" text-anchor="end">{last}</text>"#,
        x = LEFT - 4.0,
        y = TOP + 8.0,
        max = format_number(max),
        first = escape(first),
        last = escape(last),
    );
}

fn format_number(n: f64) -> String {
    if n.fract() == 0.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    }
}

fn nice_max(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0_f64, f64::max).max(1.0)
}

fn polyline(values: &[f64], max: f64) -> String {
    let span = (values.len().max(2) - 1) as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = LEFT + (WIDTH - LEFT) * i as f64 / span;
            let y = HEIGHT - BOTTOM - (HEIGHT - BOTTOM - TOP) * v / max;
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One or more series over the same labels (`series`: name, values), as lines.
pub fn lines(title: &str, labels: &[String], series: &[(String, Vec<f64>)]) -> String {
    let mut svg = String::new();
    open(&mut svg, title);
    let max = nice_max(series.iter().flat_map(|(_, v)| v.iter().copied()));
    axes(
        &mut svg,
        max,
        labels.first().map_or("", String::as_str),
        labels.last().map_or("", String::as_str),
    );
    for (i, (name, values)) in series.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<polyline class="line s{}" points="{}"><title>{}</title></polyline>"#,
            i % 4,
            polyline(values, max),
            escape(name)
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Horizontal bars, best first (`items`: label, value).
pub fn bars(title: &str, items: &[(String, f64)]) -> String {
    let mut svg = String::new();
    open(&mut svg, title);
    let max = nice_max(items.iter().map(|(_, v)| *v));
    let row = (HEIGHT - TOP) / items.len().max(1) as f64;
    let label_width = 120.0;
    for (i, (label, value)) in items.iter().enumerate() {
        let y = TOP + row * i as f64;
        let width = (WIDTH - label_width - 50.0) * value / max;
        let _ = write!(
            svg,
            r#"<text x="{lx}" y="{ty:.1}" text-anchor="end">{label}</text><rect class="bar" x="{label_width}" y="{y:.1}" width="{width:.1}" height="{h:.1}"/><text x="{vx:.1}" y="{ty:.1}">{value}</text>"#,
            lx = label_width - 4.0,
            ty = y + row * 0.65,
            label = escape(label),
            h = row * 0.75,
            vx = label_width + width + 4.0,
            value = format_number(*value),
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_points_scale_to_the_maximum() {
        let svg = bars(
            "top",
            &[("<script>alert(1)</script>".into(), 4.0), ("b".into(), 2.0)],
        );
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        let svg = lines(
            "votes",
            &["a".into(), "b".into()],
            &[("v".into(), vec![0.0, 10.0])],
        );
        assert!(svg.contains(r#"points="40.0,160.0 480.0,10.0""#), "{svg}");
    }
}
