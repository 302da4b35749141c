//! Line breaking for text that must be printed whole (addresses): at spaces
//! where there are any, inside a word only where the word alone is wider
//! than the line (a long compound, a CJK line without spaces).

use super::metrics::{one_line, text_width};

/// `text` broken into lines no wider than `width` points at `size`.
/// Nothing is dropped: joining the lines with spaces (or nothing, where a
/// word was broken) gives the text back.
pub(crate) fn wrap(text: &str, size: f32, bold: bool, width: f32) -> Vec<String> {
    let text = one_line(text);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let joined = if line.is_empty() {
            word.to_owned()
        } else {
            format!("{line} {word}")
        };
        if text_width(&joined, size, bold) <= width {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if text_width(word, size, bold) <= width {
            line = word.to_owned();
            continue;
        }
        // A word wider than the line: as many characters per line as fit
        // (at least one, so the loop always moves on).
        for c in word.chars() {
            let mut next = line.clone();
            next.push(c);
            if !line.is_empty() && text_width(&next, size, bold) > width {
                lines.push(std::mem::replace(&mut line, c.to_string()));
            } else {
                line = next;
            }
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn breaks_at_spaces_then_inside_long_words() {
        let lines = wrap("Very Long Street Name Number 12345", 10.0, false, 80.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.join(" "), "Very Long Street Name Number 12345");
        assert!(lines.iter().all(|l| text_width(l, 10.0, false) <= 80.0));
        let cjk = wrap("東京都千代田区丸の内一丁目九番二号", 10.0, false, 40.0);
        assert!(cjk.len() > 1);
        assert_eq!(cjk.concat(), "東京都千代田区丸の内一丁目九番二号");
        assert!(wrap("", 10.0, false, 40.0).is_empty());
    }

    proptest! {
        #[test]
        fn nothing_is_lost_and_lines_fit(words in prop::collection::vec("[a-zA-Zé東Ω0-9]{1,30}", 0..12), width in 20.0f32..300.0) {
            let text = words.join(" ");
            let lines = wrap(&text, 9.0, true, width);
            let squeezed: String = text.chars().filter(|c| *c != ' ').collect();
            let back: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            prop_assert_eq!(back, squeezed);
            for l in &lines {
                // A single character may be wider than a very narrow line.
                prop_assert!(text_width(l, 9.0, true) <= width || l.chars().count() == 1);
            }
        }
    }
}
