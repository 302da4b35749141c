//! Reads an exposition back into samples: what the tests of `/metrics`
//! check, on the edge and the cloud alike. It takes the text format
//! (OpenMetrics and Prometheus 0.0.4): comment lines are skipped, and a
//! sample's timestamp or exemplar, which this service never writes, is
//! ignored.

/// One line of an exposition: `name{labels} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// Whether the sample has exactly these labels, in any order.
    pub fn has_labels(&self, labels: &[(&str, &str)]) -> bool {
        self.labels.len() == labels.len() && self.has_at_least(labels)
    }

    /// Whether the sample has these labels, and maybe others.
    pub fn has_at_least(&self, labels: &[(&str, &str)]) -> bool {
        labels.iter().all(|(k, v)| self.label(k) == Some(*v))
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The value of the sample named `name` with exactly `labels`.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s.name == name && s.has_labels(labels))
        .map(|s| s.value)
}

/// Every sample of an exposition, in order; the first malformed line is
/// an error naming it.
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| sample(l).ok_or_else(|| format!("malformed sample line: {l:?}")))
        .collect()
}

fn sample(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        let (parsed, after) = label_set(inner)?;
        labels = parsed;
        rest = after;
    }
    let value = rest.strip_prefix(' ')?.split(' ').next()?.parse().ok()?;
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// The labels up to the closing brace, and what follows it.
fn label_set(mut s: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    loop {
        if let Some(after) = s.strip_prefix('}') {
            return Some((labels, after));
        }
        let eq = s.find('=')?;
        let key = s[..eq].to_owned();
        let (value, after) = quoted(s[eq + 1..].strip_prefix('"')?)?;
        labels.push((key, value));
        s = after.strip_prefix(',').unwrap_or(after);
    }
}

/// A label value after its opening quote, unescaped, and what follows its
/// closing quote.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_with_and_without_labels() {
        let text = "# HELP a_total A.\n# TYPE a counter\na_total 3\n\
                    b{route=\"/v1/x/{id}\",le=\"+Inf\"} 2.5\n\
                    c{v=\"q\\\"uote\\\\back\\nline\",w=\"\"} -1\n# EOF\n";
        let samples = parse(text).expect("parse");
        assert_eq!(samples.len(), 3);
        assert_eq!(value(&samples, "a_total", &[]), Some(3.0));
        assert_eq!(
            value(&samples, "b", &[("le", "+Inf"), ("route", "/v1/x/{id}")]),
            Some(2.5)
        );
        assert_eq!(value(&samples, "b", &[("le", "+Inf")]), None);
        assert_eq!(
            value(&samples, "c", &[("v", "q\"uote\\back\nline"), ("w", "")]),
            Some(-1.0)
        );
    }

    #[test]
    fn malformed_lines_are_refused() {
        for bad in ["x", "x{a=\"1\" 2", "x{a=1} 2", "x not_a_number"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("x +Inf").expect("inf")[0].value, f64::INFINITY);
    }
}
