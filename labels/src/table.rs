//! A4 tables that flow over as many pages as they need, repeating their
//! column headings on each page, then "Page i of n" footers once the page
//! count is known.

use super::layout::{Align, LEADING, Page, Style, bold, regular};
use super::wrap::wrap;

pub(crate) const A4_WIDTH: f32 = 595.0;
pub(crate) const A4_HEIGHT: f32 = 842.0;
pub(crate) const A4_MARGIN: f32 = 40.0;
/// Content stops here; the footer sits below.
const BOTTOM: f32 = A4_HEIGHT - 60.0;
const FOOTER_Y: f32 = A4_HEIGHT - 42.0;
const CAPTION: f32 = 20.0;
const HEADER: f32 = 18.0;
const ROW: f32 = 16.0;
const GAP: f32 = 14.0;
const CELL_PAD: f32 = 4.0;
const CELL: Style = regular(9.5);

/// What a column's cells hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Text, wrapped onto as many lines as it needs: nothing is cut.
    Text,
    /// A barcode of the cell's data (Code 128, or a QR code where that
    /// cannot be) with the data in clear below it.
    Code,
    /// An SSCC as GS1-128, "(00) …" in clear below it; "-" for none.
    Sscc,
}

pub(crate) struct Column {
    pub title: &'static str,
    pub width: f32,
    pub align: Align,
    pub kind: Kind,
}

pub(crate) const fn col(title: &'static str, width: f32, align: Align) -> Column {
    Column {
        title,
        width,
        align,
        kind: Kind::Text,
    }
}

pub(crate) const fn code_col(title: &'static str, width: f32, kind: Kind) -> Column {
    Column {
        title,
        width,
        align: Align::Left,
        kind,
    }
}

/// Height of a barcode cell: bars, then the data in clear.
const CODE_BARS: f32 = 22.0;
const CODE_ROW: f32 = 38.0;

pub(crate) struct Table {
    pub caption: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<String>>,
    /// A last row in bold under a rule.
    pub total: Option<Vec<String>>,
}

/// Something drawn after the tables, kept whole on one page.
pub(crate) struct Tail<'a> {
    pub height: f32,
    pub draw: &'a dyn Fn(&mut Page, f32),
}

/// Lays `tables` out from `first_y` on `first`, then on new pages whose
/// header `continued` draws (answering where content starts).
pub(crate) fn flow(
    first: Page,
    first_y: f32,
    tables: &[Table],
    continued: &dyn Fn(&mut Page) -> f32,
    tail: Option<Tail<'_>>,
) -> Vec<Page> {
    let mut pages = vec![first];
    let mut y = first_y;
    let next_page = |pages: &mut Vec<Page>| -> f32 {
        let mut page = Page::new(A4_WIDTH, A4_HEIGHT);
        let start = continued(&mut page);
        pages.push(page);
        start
    };
    for table in tables {
        let caption = if table.caption.is_some() {
            CAPTION
        } else {
            0.0
        };
        // Never leave a caption and headings alone at the foot of a page.
        if y + caption + HEADER + ROW > BOTTOM {
            y = next_page(&mut pages);
        }
        if let Some(text) = &table.caption {
            if let Some(page) = pages.last_mut() {
                page.text(A4_MARGIN, y + 4.0, 400.0, bold(11.0), Align::Left, text);
            }
            y += CAPTION;
        }
        y = headings(&mut pages, y, table);
        for row in &table.rows {
            let h = row_height(&table.columns, row, CELL);
            if y + h > BOTTOM {
                y = next_page(&mut pages);
                y = headings(&mut pages, y, table);
            }
            if let Some(page) = pages.last_mut() {
                cells(page, y, &table.columns, row, CELL);
                page.fill(A4_MARGIN, y + h - 0.5, width(table), 0.5, 0.75);
            }
            y += h;
        }
        if let Some(total) = &table.total {
            if y + ROW + 2.0 > BOTTOM {
                y = next_page(&mut pages);
                y = headings(&mut pages, y, table);
            }
            if let Some(page) = pages.last_mut() {
                page.hline(A4_MARGIN, y, width(table), 1.0);
                // Totals are text, whatever the column holds above them.
                let text: Vec<Column> = table
                    .columns
                    .iter()
                    .map(|c| col(c.title, c.width, c.align))
                    .collect();
                cells(page, y + 2.0, &text, total, bold(9.5));
            }
            y += ROW + 2.0;
        }
        y += GAP;
    }
    if let Some(tail) = tail {
        if y + tail.height > BOTTOM {
            y = next_page(&mut pages);
        }
        if let Some(page) = pages.last_mut() {
            (tail.draw)(page, y);
        }
    }
    pages
}

/// "Page i of n" on the right of every page, `left` on the left.
pub(crate) fn footers(pages: &mut [Page], left: &str) {
    let n = pages.len();
    for (i, page) in pages.iter_mut().enumerate() {
        let w = A4_WIDTH - 2.0 * A4_MARGIN;
        page.hline(A4_MARGIN, FOOTER_Y - 6.0, w, 0.5);
        page.text(
            A4_MARGIN,
            FOOTER_Y,
            w - 80.0,
            regular(8.0),
            Align::Left,
            left,
        );
        let of = format!("Page {} of {n}", i + 1);
        page.text(A4_MARGIN, FOOTER_Y, w, regular(8.0), Align::Right, &of);
    }
}

fn width(table: &Table) -> f32 {
    table.columns.iter().map(|c| c.width).sum()
}

fn headings(pages: &mut [Page], y: f32, table: &Table) -> f32 {
    if let Some(page) = pages.last_mut() {
        page.fill(A4_MARGIN, y, width(table), HEADER, 0.88);
        let mut x = A4_MARGIN;
        for c in &table.columns {
            let w = c.width - 2.0 * CELL_PAD;
            page.text(x + CELL_PAD, y + 5.0, w, bold(8.5), c.align, c.title);
            x += c.width;
        }
    }
    y + HEADER
}

/// The lines of a text cell.
fn lines(column: &Column, value: &str, style: Style) -> Vec<String> {
    wrap(value, style.size, style.bold, column.width - 2.0 * CELL_PAD)
}

/// A row as tall as its tallest cell, and at least [`ROW`].
fn row_height(columns: &[Column], values: &[String], style: Style) -> f32 {
    columns
        .iter()
        .zip(values)
        .map(|(c, v)| match c.kind {
            Kind::Text => lines(c, v, style).len() as f32 * style.size * LEADING + 5.0,
            Kind::Code | Kind::Sscc => CODE_ROW,
        })
        .fold(ROW, f32::max)
}

fn cells(page: &mut Page, y: f32, columns: &[Column], values: &[String], style: Style) {
    let mut x = A4_MARGIN;
    for (column, value) in columns.iter().zip(values) {
        let w = column.width - 2.0 * CELL_PAD;
        match column.kind {
            Kind::Text => {
                for (i, line) in lines(column, value, style).iter().enumerate() {
                    let top = y + 4.0 + i as f32 * style.size * LEADING;
                    page.text(x + CELL_PAD, top, w, style, column.align, line);
                }
            }
            Kind::Code => {
                // The quiet zones take the cell's padding.
                page.code(x, y + 3.0, column.width, CODE_BARS, 2, value);
                page.text_shrink(
                    x + CELL_PAD,
                    y + 4.0 + CODE_BARS,
                    w,
                    regular(7.0),
                    5.0,
                    Align::Center,
                    value,
                );
            }
            Kind::Sscc if value.len() == 18 => {
                page.sscc(x, y + 3.0, column.width, CODE_BARS, 2, value);
                let readable = format!("(00) {value}");
                page.text_shrink(
                    x + CELL_PAD,
                    y + 4.0 + CODE_BARS,
                    w,
                    regular(7.0),
                    5.0,
                    Align::Center,
                    &readable,
                );
            }
            Kind::Sscc => {
                page.text(x + CELL_PAD, y + 4.0, w, style, Align::Left, "-");
            }
        }
        x += column.width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: usize) -> Table {
        Table {
            caption: Some("Items".into()),
            columns: vec![col("A", 100.0, Align::Left), col("B", 60.0, Align::Right)],
            rows: (0..rows)
                .map(|i| vec![format!("row {i}"), i.to_string()])
                .collect(),
            total: Some(vec!["Total".into(), rows.to_string()]),
        }
    }

    fn start(page: &mut Page) -> f32 {
        page.text(A4_MARGIN, 40.0, 200.0, bold(12.0), Align::Left, "continued");
        70.0
    }

    #[test]
    fn short_tables_fit_one_page() {
        let pages = flow(
            Page::new(A4_WIDTH, A4_HEIGHT),
            200.0,
            &[table(5)],
            &start,
            None,
        );
        assert_eq!(pages.len(), 1);
    }

    #[test]
    fn long_tables_continue_with_headings_and_every_row() {
        let mut pages = flow(
            Page::new(A4_WIDTH, A4_HEIGHT),
            200.0,
            &[table(100)],
            &start,
            None,
        );
        assert!(pages.len() >= 3, "{}", pages.len());
        footers(&mut pages, "doc");
        let n = pages.len();
        for (i, page) in pages.iter().enumerate() {
            let texts = page.texts();
            assert!(texts.contains(&"A"), "headings on page {i}");
            let of = format!("Page {} of {n}", i + 1);
            assert!(texts.contains(&of.as_str()));
        }
        let rows: usize = pages
            .iter()
            .map(|p| p.texts().iter().filter(|t| t.starts_with("row ")).count())
            .sum();
        assert_eq!(rows, 100);
    }

    #[test]
    fn long_cells_wrap_and_keep_every_word() {
        let mut t = table(2);
        let long = "Llanfairpwllgwyngyll Gogerychwyrndrobwll Llantysilio Gogogoch Station Road";
        t.rows[0][0] = long.into();
        let pages = flow(Page::new(A4_WIDTH, A4_HEIGHT), 200.0, &[t], &start, None);
        let texts = pages[0].texts().join(" ");
        for word in long.split(' ') {
            assert!(texts.contains(word), "{word} missing from {texts}");
        }
        assert!(!texts.contains("..."), "{texts}");
    }

    #[test]
    fn tail_moves_to_a_new_page_when_needed() {
        let draw = |page: &mut Page, y: f32| {
            page.text(A4_MARGIN, y, 200.0, regular(9.0), Align::Left, "Signature");
        };
        let tail = Tail {
            height: 700.0,
            draw: &draw,
        };
        let pages = flow(
            Page::new(A4_WIDTH, A4_HEIGHT),
            200.0,
            &[table(3)],
            &start,
            Some(tail),
        );
        assert_eq!(pages.len(), 2);
        assert!(pages[1].texts().contains(&"Signature"));
    }
}
