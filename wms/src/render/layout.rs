//! A small display list: what every document is laid out into, and what the
//! ZPL and PDF backends draw. Coordinates are PostScript points with the
//! origin at the top left, as a label designer measures; the PDF backend
//! flips them, the ZPL backend converts them to 203 dpi dots.

use super::RenderError;
use super::code128::Symbol;
use super::metrics::{one_line, text_width, truncate};

/// One printer dot at 203 dpi, in points.
pub(crate) const DOT: f32 = 72.0 / 203.0;

/// Quiet zone each side of a Code 128 symbol, in modules (ISO/IEC 15417).
pub(crate) const QUIET_MODULES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Center,
    Right,
}

/// A single line of text, already fitted and positioned: `y` is the top of
/// the em box.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Text {
    pub x: f32,
    pub y: f32,
    pub size: f32,
    pub bold: bool,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Paint {
    /// Fill with a grey level, 0 black to 1 white.
    Fill(f32),
    /// Outline of the given width.
    Stroke(f32),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bars {
    pub x: f32,
    pub y: f32,
    pub height: f32,
    /// Module (narrowest bar) width in points: a whole number of dots.
    pub module: f32,
    pub symbol: Symbol,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Text(Text),
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        paint: Paint,
    },
    Bars(Bars),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    pub width: f32,
    pub height: f32,
    pub items: Vec<Item>,
}

/// Text style: size in points, bold or regular.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    pub size: f32,
    pub bold: bool,
}

pub(crate) const fn regular(size: f32) -> Style {
    Style { size, bold: false }
}

pub(crate) const fn bold(size: f32) -> Style {
    Style { size, bold: true }
}

impl Page {
    pub fn new(width: f32, height: f32) -> Self {
        Self {
            width,
            height,
            items: Vec::new(),
        }
    }

    /// Text in the box `x..x+w` at `y`, cut with "..." if it is too wide.
    pub fn text(&mut self, x: f32, y: f32, w: f32, style: Style, align: Align, text: &str) {
        self.text_shrink(x, y, w, style, style.size, align, text);
    }

    /// Like `text`, but first shrinks the size down to `min_size` to fit,
    /// for the few fields (names, carrier) better small than cut.
    #[allow(clippy::too_many_arguments)] // a text box is x, y, w, style, align, text
    pub fn text_shrink(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        style: Style,
        min_size: f32,
        align: Align,
        text: &str,
    ) {
        let line = one_line(text);
        if line.is_empty() {
            return;
        }
        let mut size = style.size;
        while size > min_size && text_width(&line, size, style.bold) > w {
            size = (size - 0.5).max(min_size);
        }
        let fitted = truncate(&line, size, style.bold, w);
        let width = text_width(&fitted, size, style.bold);
        let x = match align {
            Align::Left => x,
            Align::Center => x + (w - width) / 2.0,
            Align::Right => x + w - width,
        };
        self.items.push(Item::Text(Text {
            x,
            y,
            size,
            bold: style.bold,
            text: fitted,
        }));
    }

    /// A horizontal rule of thickness `t` whose top is at `y`.
    pub fn hline(&mut self, x: f32, y: f32, w: f32, t: f32) {
        self.fill(x, y, w, t, 0.0);
    }

    /// A vertical rule of thickness `t` whose left edge is at `x`.
    pub fn vline(&mut self, x: f32, y: f32, h: f32, t: f32) {
        self.fill(x, y, t, h, 0.0);
    }

    pub fn fill(&mut self, x: f32, y: f32, w: f32, h: f32, grey: f32) {
        self.items.push(Item::Rect {
            x,
            y,
            w,
            h,
            paint: Paint::Fill(grey),
        });
    }

    pub fn stroke(&mut self, x: f32, y: f32, w: f32, h: f32, line: f32) {
        self.items.push(Item::Rect {
            x,
            y,
            w,
            h,
            paint: Paint::Stroke(line),
        });
    }

    /// A Code 128 symbol of `data`, centred in `x..x+w` with its quiet
    /// zones inside that box. Modules are whole 203 dpi dots (at most
    /// `max_dots`), because a thermal printer cannot print a fraction of a
    /// dot and uneven bars do not scan. Answers the symbol's width.
    pub fn barcode(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        height: f32,
        max_dots: u32,
        data: &str,
    ) -> Result<f32, RenderError> {
        let symbol = Symbol::new(data)?;
        let modules = symbol.modules() + 2 * QUIET_MODULES;
        // Whole dots that fit: the quotient is small and non-negative.
        let fit = (w / (modules as f32 * DOT)).floor().max(0.0) as u32;
        let dots = fit.min(max_dots);
        if dots == 0 {
            return Err(RenderError::Barcode(format!(
                "{data:?} is too long for a {w:.0} pt wide Code 128 at 203 dpi"
            )));
        }
        let module = dots as f32 * DOT;
        let width = symbol.modules() as f32 * module;
        self.items.push(Item::Bars(Bars {
            x: x + (w - width) / 2.0,
            y,
            height,
            module,
            symbol,
        }));
        Ok(width)
    }

    /// `barcode`, or where the data cannot be encoded, a framed "NO
    /// BARCODE" notice with the reason in the same box, for documents that
    /// must print anyway (ZPL). Answers the error, if any.
    pub fn barcode_or_notice(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        height: f32,
        max_dots: u32,
        data: &str,
    ) -> Option<RenderError> {
        let err = self.barcode(x, y, w, height, max_dots, data).err()?;
        self.stroke(x, y, w, height, 1.0);
        let mid = y + height / 2.0;
        self.text(
            x + 4.0,
            mid - 12.0,
            w - 8.0,
            bold(10.0),
            Align::Center,
            "NO BARCODE",
        );
        self.text(
            x + 4.0,
            mid + 2.0,
            w - 8.0,
            regular(7.0),
            Align::Center,
            &err.to_string(),
        );
        Some(err)
    }

    /// All text on the page, in drawing order (for tests and previews).
    #[cfg(test)]
    pub fn texts(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_text_stays_in_its_box() {
        let mut p = Page::new(288.0, 432.0);
        p.text(10.0, 10.0, 100.0, bold(12.0), Align::Right, "RIGHT");
        p.text(10.0, 30.0, 100.0, regular(12.0), Align::Center, "mid");
        p.text_shrink(
            10.0,
            50.0,
            60.0,
            bold(16.0),
            8.0,
            Align::Left,
            "Shrinking name",
        );
        for item in &p.items {
            let Item::Text(t) = item else { continue };
            let right = t.x + text_width(&t.text, t.size, t.bold);
            assert!(t.x >= 10.0 - 1e-3 && right <= 110.0 + 1e-3, "{t:?}");
        }
        let Some(Item::Text(shrunk)) = p.items.get(2) else {
            panic!("three texts")
        };
        assert!(shrunk.size < 16.0 && shrunk.size >= 8.0);
    }

    #[test]
    fn barcode_modules_are_whole_dots() -> Result<(), RenderError> {
        let mut p = Page::new(288.0, 432.0);
        let w = p.barcode(10.0, 0.0, 268.0, 50.0, 4, "1Z999AA10123456784")?;
        let Some(Item::Bars(b)) = p.items.first() else {
            panic!("bars")
        };
        let dots = b.module / DOT;
        assert!((dots - dots.round()).abs() < 1e-4 && dots >= 1.0);
        assert!(b.x >= 10.0 && b.x + w <= 278.0);
        let long = "X".repeat(200);
        assert!(matches!(
            p.barcode(10.0, 0.0, 268.0, 50.0, 4, &long),
            Err(RenderError::Barcode(_))
        ));
        Ok(())
    }
}
