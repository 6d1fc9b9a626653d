//! Charts with a row per label (a pool, a reason, a sweep's variant): the rows' labels and
//! mesh, which the bar charts share, and the box chart — per row (a sweep's variant), how a
//! figure spread over the runs: a line from the least run to the most, a box over the middle
//! half (p25 to p75), a tick at the median (`report::chart::Chart::Boxes`).

use plotters::coord::Shift;
use plotters::coord::ranged1d::{SegmentedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordusize;
use plotters::prelude::*;

use super::style::{FONT, colour};

/// The mesh of a chart with a row per label (the y axis' segments) and values along x.
pub(crate) fn draw_row_mesh<DB, X>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, SegmentedCoord<RangedCoordusize>>>,
    labels: &[String],
    y_labels: usize,
    axis: &str,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged + ValueFormatter<X::ValueType>,
{
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(y_labels)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_desc(axis)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(|e| e.to_string())
}

/// At most this many characters of a bar's label (the rest is "…").
const LABEL_CHARS: usize = 70;

/// The labels of a chart's rows, the first row's last (it is drawn on top, as segment n-1),
/// cut to [`LABEL_CHARS`]; and the width of the label area they need.
pub(crate) fn row_labels<'a>(
    rows: impl DoubleEndedIterator<Item = &'a String>,
) -> (Vec<String>, u32) {
    let labels: Vec<String> = (rows.rev())
        .map(|l| match l.chars().count() > LABEL_CHARS {
            true => format!("{}…", l.chars().take(LABEL_CHARS - 1).collect::<String>()),
            false => l.clone(),
        })
        .collect();
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(10);
    (labels, widest as u32 * 7 + 24)
}

/// A row's five figures: least, p25, median, p75, most.
pub(crate) type Spread = [f64; 5];

pub(crate) fn draw_boxes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    axis: &str,
    rows: &[(String, Option<Spread>)],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let n = rows.len();
    let most = (rows.iter())
        .filter_map(|(_, s)| Some(s.as_ref()?[4]))
        .fold(0.0f64, f64::max);
    let top = match most > 0.0 {
        true => most * 1.05,
        false => 1.0,
    };
    let (labels, label_area) = row_labels(rows.iter().map(|(l, _)| l));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(label_area)
        // A discrete range holds its end: n rows are the segments of 0..n-1.
        .build_cartesian_2d(0f64..top, (0..n.saturating_sub(1)).into_segmented())
        .map_err(|e| e.to_string())?;
    draw_row_mesh(&mut chart, &labels, n, axis)?;
    // In pixels: the chart's coordinates are those of `area`, which starts at the origin.
    let at = |x: f64, i: usize| chart.backend_coord(&(x, SegmentValue::CenterOf(i)));
    let band = (chart.backend_coord(&(0.0, SegmentValue::Exact(0))).1
        - chart.backend_coord(&(0.0, SegmentValue::Exact(1))).1)
        .abs();
    let half = (band * 3 / 10).max(3);
    for (k, (_, spread)) in rows.iter().enumerate() {
        let Some([least, p25, median, p75, most]) = *spread else {
            continue;
        };
        let i = n - 1 - k;
        let colour = colour(k);
        let ((x0, y), (x1, _)) = (at(least, i), at(most, i));
        let (q1, q3, m) = (at(p25, i).0, at(p75, i).0, at(median, i).0);
        let line = |from: (i32, i32), to: (i32, i32), width: u32, c: RGBColor| {
            (area.draw(&PathElement::new(vec![from, to], c.stroke_width(width))))
                .map_err(|e| e.to_string())
        };
        line((x0, y), (x1, y), 1, BLACK)?;
        for x in [x0, x1] {
            line((x, y - half / 2), (x, y + half / 2), 1, BLACK)?;
        }
        // At least 2 px wide, so a middle half of equal runs still shows.
        let corners = [(q1.min(m - 1), y - half), (q3.max(m + 1), y + half)];
        (area.draw(&Rectangle::new(corners, colour.mix(0.35).filled())))
            .and_then(|_| area.draw(&Rectangle::new(corners, colour)))
            .map_err(|e| e.to_string())?;
        line((m, y - half), (m, y + half), 3, colour)?;
    }
    Ok(())
}
