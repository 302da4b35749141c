//! HTML the service writes itself: the release-notes page and the login
//! and claim pages. Everything that comes from a request or the database
//! goes through [`escape`].

/// Escapes text for HTML content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_ampersands() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'q'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"
        );
        assert_eq!(escape("&amp;"), "&amp;amp;");
        assert_eq!(escape("plain ñ"), "plain ñ");
    }
}
