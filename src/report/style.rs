//! The charts' look: the font (the bundled DejaVu Sans, so PNG text needs no system font
//! library) and the colours of their series.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

pub(crate) const FONT: &str = "sans-serif";

pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let font: &'static [u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, font);
    });
}

/// The i-th series' colour.
pub(crate) fn colour(i: usize) -> RGBColor {
    let c = Palette99::pick(i).to_rgba();
    RGBColor(c.0, c.1, c.2)
}
