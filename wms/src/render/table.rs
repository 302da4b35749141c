//! A4 tables that flow over as many pages as they need, repeating their
//! column headings on each page, then "Page i of n" footers once the page
//! count is known.

use super::layout::{Align, Page, Style, bold, regular};

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

pub(crate) struct Column {
    pub title: &'static str,
    pub width: f32,
    pub align: Align,
}

pub(crate) const fn col(title: &'static str, width: f32, align: Align) -> Column {
    Column {
        title,
        width,
        align,
    }
}

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
            if y + ROW > BOTTOM {
                y = next_page(&mut pages);
                y = headings(&mut pages, y, table);
            }
            if let Some(page) = pages.last_mut() {
                cells(page, y, &table.columns, row, CELL);
                page.fill(A4_MARGIN, y + ROW - 0.5, width(table), 0.5, 0.75);
            }
            y += ROW;
        }
        if let Some(total) = &table.total {
            if y + ROW + 2.0 > BOTTOM {
                y = next_page(&mut pages);
                y = headings(&mut pages, y, table);
            }
            if let Some(page) = pages.last_mut() {
                page.hline(A4_MARGIN, y, width(table), 1.0);
                cells(page, y + 2.0, &table.columns, total, bold(9.5));
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
        let titles: Vec<String> = table.columns.iter().map(|c| c.title.to_owned()).collect();
        cells(page, y + 1.0, &table.columns, &titles, bold(8.5));
    }
    y + HEADER
}

fn cells(page: &mut Page, y: f32, columns: &[Column], values: &[String], style: Style) {
    let mut x = A4_MARGIN;
    for (column, value) in columns.iter().zip(values) {
        let w = column.width - 2.0 * CELL_PAD;
        page.text(x + CELL_PAD, y + 4.0, w, style, column.align, value);
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
