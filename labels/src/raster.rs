//! A shaped line as a 1-bit image at the printer's 203 dpi, for text a
//! Zebra's resident font cannot draw (see `zpl`): the glyph outlines of the
//! vendored fonts filled with ab_glyph_rasterizer's coverage, a dot black
//! where at least half of it is covered (a thermal head has no grey).

use super::fonts;
use super::layout::DOT;
use super::shape::Shaped;
use ab_glyph_rasterizer::{Point, Rasterizer, point};
use rustybuzz::ttf_parser::{GlyphId, OutlineBuilder};

/// Dots, packed 8 to a byte, most significant bit leftmost, each row
/// padded to whole bytes: the layout of a ZPL `^GF` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bitmap {
    /// Top left corner on the label, in dots.
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

impl Bitmap {
    pub fn new(left: u32, top: u32, width: u32, height: u32) -> Self {
        let bytes = (width as usize).div_ceil(8) * height as usize;
        Self {
            left,
            top,
            width,
            height,
            data: vec![0; bytes],
        }
    }

    pub fn bytes_per_row(&self) -> usize {
        (self.width as usize).div_ceil(8)
    }

    #[cfg(test)]
    pub fn get(&self, x: u32, y: u32) -> bool {
        if x >= self.width || y >= self.height {
            return false;
        }
        let i = y as usize * self.bytes_per_row() + x as usize / 8;
        self.data.get(i).is_some_and(|b| b & (0x80 >> (x % 8)) != 0)
    }

    pub fn set(&mut self, x: u32, y: u32) {
        if x >= self.width || y >= self.height {
            return;
        }
        let i = y as usize * self.bytes_per_row() + x as usize / 8;
        if let Some(b) = self.data.get_mut(i) {
            *b |= 0x80 >> (x % 8);
        }
    }

    /// Black dots, for tests and comparisons.
    #[cfg(test)]
    pub fn count(&self) -> u32 {
        self.data.iter().map(|b| b.count_ones()).sum()
    }
}

/// Where and how large a line is drawn, in label dots.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    /// The line's start (left edge of its first glyph's advance).
    pub x: f32,
    pub baseline: f32,
    /// Dots per em.
    pub scale: f32,
    /// The label's size in dots: ink outside it is clipped.
    pub page: (u32, u32),
}

impl Placement {
    /// A line at `x`, `baseline` and `size` in points.
    pub fn from_points(x: f32, baseline: f32, size: f32, page: (u32, u32)) -> Self {
        Self {
            x: x / DOT,
            baseline: baseline / DOT,
            scale: size / DOT,
            page,
        }
    }
}

/// The line's ink, cropped to its bounding box on the label; `None` where
/// there is nothing to print (spaces only, or all of it off the label).
pub(crate) fn rasterize(shaped: &Shaped, at: Placement) -> Option<Bitmap> {
    // Each glyph's box in label dots: (font, id, origin x, baseline, k, box).
    struct Placed {
        id: u16,
        key: fonts::FontKey,
        ox: f32,
        oy: f32,
        k: f32,
        x0: i64,
        y0: i64,
        x1: i64,
        y1: i64,
    }
    let mut placed = Vec::new();
    for g in &shaped.glyphs {
        let Some(font) = fonts::font(g.font) else {
            continue;
        };
        let Some(bbox) = font.face.glyph_bounding_box(GlyphId(g.id)) else {
            continue;
        };
        let k = at.scale / font.units_per_em;
        let ox = at.x + g.x * at.scale;
        let oy = at.baseline - g.y * at.scale;
        // Dots are whole: a glyph covers every dot its box touches.
        let x0 = (ox + f32::from(bbox.x_min) * k).floor() as i64;
        let x1 = (ox + f32::from(bbox.x_max) * k).ceil() as i64;
        let y0 = (oy - f32::from(bbox.y_max) * k).floor() as i64;
        let y1 = (oy - f32::from(bbox.y_min) * k).ceil() as i64;
        placed.push(Placed {
            id: g.id,
            key: g.font,
            ox,
            oy,
            k,
            x0,
            y0,
            x1,
            y1,
        });
    }
    let (pw, ph) = (i64::from(at.page.0), i64::from(at.page.1));
    let left = placed.iter().map(|p| p.x0).min()?.clamp(0, pw);
    let top = placed.iter().map(|p| p.y0).min()?.clamp(0, ph);
    let right = placed.iter().map(|p| p.x1).max()?.clamp(0, pw);
    let bottom = placed.iter().map(|p| p.y1).max()?.clamp(0, ph);
    if right <= left || bottom <= top {
        return None;
    }
    // Within the label's few thousand dots: the conversions cannot fail.
    let to_u32 = |v: i64| u32::try_from(v).unwrap_or(0);
    let mut bitmap = Bitmap::new(
        to_u32(left),
        to_u32(top),
        to_u32(right - left),
        to_u32(bottom - top),
    );
    for p in &placed {
        let Some(font) = fonts::font(p.key) else {
            continue;
        };
        let (w, h) = ((p.x1 - p.x0).max(0) as usize, (p.y1 - p.y0).max(0) as usize);
        if w == 0 || h == 0 {
            continue;
        }
        // One rasterizer per glyph: TrueType and CFF outlines wind in
        // opposite directions, and overlapping glyphs (a mark on its base)
        // must not cancel each other out.
        let mut outline = Outline {
            raster: Rasterizer::new(w, h),
            dx: p.ox - p.x0 as f32,
            dy: p.oy - p.y0 as f32,
            k: p.k,
            start: point(0.0, 0.0),
            last: point(0.0, 0.0),
        };
        if font
            .face
            .outline_glyph(GlyphId(p.id), &mut outline)
            .is_none()
        {
            continue;
        }
        outline.raster.for_each_pixel_2d(|x, y, coverage| {
            if coverage < 0.5 {
                return;
            }
            let lx = p.x0 + i64::from(x) - left;
            let ly = p.y0 + i64::from(y) - top;
            if let (Ok(lx), Ok(ly)) = (u32::try_from(lx), u32::try_from(ly)) {
                bitmap.set(lx, ly);
            }
        });
    }
    Some(bitmap)
}

/// Feeds a glyph outline (font units, y up) to the rasterizer (dots from
/// the glyph box's top left, y down).
struct Outline {
    raster: Rasterizer,
    dx: f32,
    dy: f32,
    k: f32,
    start: Point,
    last: Point,
}

impl Outline {
    fn at(&self, x: f32, y: f32) -> Point {
        point(self.dx + x * self.k, self.dy - y * self.k)
    }
}

impl OutlineBuilder for Outline {
    fn move_to(&mut self, x: f32, y: f32) {
        self.start = self.at(x, y);
        self.last = self.start;
    }

    fn line_to(&mut self, x: f32, y: f32) {
        let p = self.at(x, y);
        self.raster.draw_line(self.last, p);
        self.last = p;
    }

    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        let (c, p) = (self.at(x1, y1), self.at(x, y));
        self.raster.draw_quad(self.last, c, p);
        self.last = p;
    }

    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        let (c1, c2, p) = (self.at(x1, y1), self.at(x2, y2), self.at(x, y));
        self.raster.draw_cubic(self.last, c1, c2, p);
        self.last = p;
    }

    fn close(&mut self) {
        if self.last != self.start {
            self.raster.draw_line(self.last, self.start);
        }
        self.last = self.start;
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::shape;
    use super::*;

    const PAGE: (u32, u32) = (812, 1218);

    #[test]
    fn a_glyph_lands_in_its_box() -> Result<(), String> {
        // "東" at 12 pt (about 34 dots per em) with its origin at (100, 200).
        let s = shape("東", false);
        let at = Placement {
            x: 100.0,
            baseline: 200.0,
            scale: 34.0,
            page: PAGE,
        };
        let b = rasterize(&s, at).ok_or("no ink")?;
        // The ideograph fills most of its em: about 0.9 em square, sitting
        // about 0.1 em below the baseline.
        assert!(
            (28..=36).contains(&b.width) && (28..=36).contains(&b.height),
            "{b:?}"
        );
        assert!((100..=104).contains(&b.left), "{}", b.left);
        assert!(
            b.top >= 166 && b.top + b.height <= 206,
            "{} {}",
            b.top,
            b.height
        );
        let dots = b.count();
        assert!(dots > 150 && dots < b.width * b.height / 2, "{dots}");
        Ok(())
    }

    #[test]
    fn ink_is_clipped_to_the_label() {
        let s = shape("Ωmega", true);
        let at = Placement {
            x: 790.0,
            baseline: 30.0,
            scale: 40.0,
            page: PAGE,
        };
        let b = rasterize(&s, at);
        assert!(b.is_some_and(|b| b.left + b.width <= 812 && b.top + b.height <= 1218));
        assert!(rasterize(&shape("   ", false), at).is_none());
    }
}
