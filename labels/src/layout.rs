//! A small display list: what every document is laid out into, and what the
//! ZPL and PDF backends draw. Coordinates are PostScript points with the
//! origin at the top left, as a label designer measures; the PDF backend
//! flips them, the ZPL backend converts them to 203 dpi dots.

use super::code128::Symbol;
use super::metrics::{one_line, text_width, truncate};
use super::qr::Matrix;
use super::shape::right_to_left;
use super::wrap::wrap;

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

/// A 2D symbol: square modules of whole dots, quiet zone not included.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Square {
    pub x: f32,
    pub y: f32,
    /// Module width in points: a whole number of dots.
    pub module: f32,
    pub matrix: Matrix,
}

/// How [`Page::code`] printed its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coded {
    /// As a Code 128 symbol.
    Linear,
    /// As a QR code: the data is not printable ASCII, or too long for the
    /// width at a readable module size.
    Matrix,
    /// Not at all: no symbol can hold it in the space (or it is empty); the
    /// text printed beside it stands alone.
    Text,
}

/// The narrowest module printed, in dots: 0.25 mm at 203 dpi, what
/// handheld and fixed scanners read reliably (GS1 general specifications
/// put the floor for logistics labels higher still; below this a symbol
/// prints but does not scan).
pub(crate) const MIN_MODULE_DOTS: u32 = 2;

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
    Square(Square),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    pub width: f32,
    pub height: f32,
    pub items: Vec<Item>,
    /// Text that had to be cut short even at its smallest size: what a
    /// caller checks before committing to print the page.
    pub cut: Vec<String>,
}

/// One paragraph of a [`Page::text_block`]: its text and whether it is
/// bold.
pub(crate) type Para<'a> = (&'a str, bool);

/// Line height as a multiple of the font size.
pub(crate) const LEADING: f32 = 1.15;

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
            cut: Vec::new(),
        }
    }

    /// Paragraphs that must print whole (an address) in the box `x..x+w`,
    /// `y..y+h`: each wraps onto as many lines as it needs, and the size
    /// shrinks from `size` towards `min_size` until every line fits the
    /// box. Only when nothing fits at `min_size` is the text cut, and the
    /// cut recorded in [`Page::cut`]. Answers the bottom of the text.
    #[allow(clippy::too_many_arguments)] // a text box is x, y, w, h, sizes, text
    pub fn text_block(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        size: f32,
        min_size: f32,
        paras: &[Para<'_>],
    ) -> f32 {
        let lines_at = |size: f32| -> Vec<(String, bool)> {
            paras
                .iter()
                .flat_map(|(text, bold)| {
                    wrap(text, size, *bold, w)
                        .into_iter()
                        .map(move |l| (l, *bold))
                })
                .collect()
        };
        let mut size = size.max(min_size);
        let mut lines = lines_at(size);
        while lines.len() as f32 * size * LEADING > h && size > min_size {
            size = (size - 0.5).max(min_size);
            lines = lines_at(size);
        }
        let step = size * LEADING;
        // Lines that fit the height (at least one).
        let room = ((h / step).floor() as usize).max(1);
        if lines.len() > room {
            let dropped: Vec<&str> = lines[room..].iter().map(|(l, _)| l.as_str()).collect();
            self.cut.push(dropped.join(" "));
            lines.truncate(room);
        }
        let mut bottom = y;
        for (i, (line, bold)) in lines.iter().enumerate() {
            let top = y + step * i as f32;
            let style = Style { size, bold: *bold };
            let align = if right_to_left(line) {
                Align::Right
            } else {
                Align::Left
            };
            self.text(x, top, w, style, align, line);
            bottom = top + size;
        }
        bottom
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

    /// `data` as a barcode that fits `x..x+w` by `height`, chosen before
    /// anything is drawn so no data can fail a document: a Code 128 symbol
    /// centred with its quiet zones inside the box, modules whole 203 dpi
    /// dots from [`MIN_MODULE_DOTS`] to `max_dots` (a thermal printer cannot
    /// print a fraction of a dot, and uneven bars do not scan); where that
    /// cannot be, a QR code of the UTF-8 text, centred; where neither fits,
    /// nothing, and the text printed beside the symbol stands alone.
    #[allow(clippy::too_many_arguments)] // a symbol box is x, y, w, height, size, data
    pub fn code(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        height: f32,
        max_dots: u32,
        data: &str,
    ) -> Coded {
        if let Ok(symbol) = Symbol::new(data) {
            let modules = symbol.modules() + 2 * QUIET_MODULES;
            if let Some(dots) = whole_dots(w, modules, max_dots) {
                self.bars(x, y, w, height, dots, symbol);
                return Coded::Linear;
            }
        }
        let Some(matrix) = Matrix::encode(data) else {
            return Coded::Text;
        };
        let Some(dots) = whole_dots(w.min(height), matrix.span(), max_dots) else {
            return Coded::Text;
        };
        let module = dots as f32 * DOT;
        let side = matrix.size as f32 * module;
        self.items.push(Item::Square(Square {
            x: x + (w - side) / 2.0,
            y: y + (height - side) / 2.0,
            module,
            matrix,
        }));
        Coded::Matrix
    }

    /// An SSCC as a GS1-128 symbol centred in `x..x+w` (nothing when it is
    /// not 18 digits or cannot fit at a readable size).
    pub fn sscc(
        &mut self,
        x: f32,
        y: f32,
        w: f32,
        height: f32,
        max_dots: u32,
        sscc: &str,
    ) -> Coded {
        let Ok(symbol) = Symbol::sscc(sscc) else {
            return Coded::Text;
        };
        match whole_dots(w, symbol.modules() + 2 * QUIET_MODULES, max_dots) {
            Some(dots) => {
                self.bars(x, y, w, height, dots, symbol);
                Coded::Linear
            }
            None => Coded::Text,
        }
    }

    /// A Code 128 symbol known to fit, centred in `x..x+w`.
    pub fn bars(&mut self, x: f32, y: f32, w: f32, height: f32, dots: u32, symbol: Symbol) {
        let module = dots as f32 * DOT;
        let width = symbol.modules() as f32 * module;
        self.items.push(Item::Bars(Bars {
            x: x + (w - width) / 2.0,
            y,
            height,
            module,
            symbol,
        }));
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

/// The module size in whole dots (at most `max_dots`) at which `modules`
/// fill no more than `w` points, if that is at least [`MIN_MODULE_DOTS`].
pub(crate) fn whole_dots(w: f32, modules: usize, max_dots: u32) -> Option<u32> {
    // The quotient is small and non-negative.
    let fit = (w / (modules as f32 * DOT)).floor().max(0.0) as u32;
    Some(fit.min(max_dots)).filter(|d| *d >= MIN_MODULE_DOTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_to_left_lines_of_a_block_keep_to_the_right() {
        let mut p = Page::new(288.0, 432.0);
        let paras: [Para<'_>; 3] = [
            ("محمد العلي", true),
            ("שדרות רוטשילד 22", false),
            ("Tel Aviv 6688218", false),
        ];
        p.text_block(10.0, 10.0, 200.0, 100.0, 10.0, 7.0, &paras);
        let lines: Vec<&Text> = p
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Text(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(lines.len(), 3);
        for t in &lines[..2] {
            let right = t.x + text_width(&t.text, t.size, t.bold);
            assert!((right - 210.0).abs() < 1e-3 && t.x > 10.0, "{t:?}");
        }
        assert!((lines[2].x - 10.0).abs() < 1e-3, "{:?}", lines[2]);
    }

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
    fn barcode_modules_are_whole_dots() {
        let mut p = Page::new(288.0, 432.0);
        let coded = p.code(10.0, 0.0, 268.0, 50.0, 4, "1Z999AA10123456784");
        assert_eq!(coded, Coded::Linear);
        let Some(Item::Bars(b)) = p.items.first() else {
            panic!("bars")
        };
        let dots = b.module / DOT;
        assert!((dots - dots.round()).abs() < 1e-4 && dots >= MIN_MODULE_DOTS as f32);
        let end = b.x + b.symbol.modules() as f32 * b.module;
        assert!(b.x >= 10.0 && end <= 278.0);
    }

    #[test]
    fn what_code_128_cannot_carry_becomes_a_qr_code_or_text() {
        let mut p = Page::new(288.0, 432.0);
        assert_eq!(
            p.code(0.0, 0.0, 288.0, 96.0, 4, "Commande-Éric-12"),
            Coded::Matrix
        );
        let long = "R".repeat(67);
        assert_eq!(p.code(0.0, 100.0, 288.0, 96.0, 4, &long), Coded::Matrix);
        for item in &p.items {
            let Item::Square(q) = item else {
                panic!("a QR code, not {item:?}")
            };
            let side = q.matrix.size as f32 * q.module;
            assert!(q.x >= 0.0 && q.x + side <= 288.0);
            let dots = q.module / DOT;
            assert!((dots - dots.round()).abs() < 1e-4 && dots >= MIN_MODULE_DOTS as f32);
        }
        assert_eq!(p.code(0.0, 0.0, 288.0, 20.0, 4, &long), Coded::Text);
        assert_eq!(p.code(0.0, 0.0, 288.0, 96.0, 4, ""), Coded::Text);
        assert_eq!(p.items.len(), 2);
    }
}
