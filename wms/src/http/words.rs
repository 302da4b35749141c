//! What a request got wrong, in words for the person who wrote it: serde
//! and the URL decoders describe a failure in Rust's terms ("expected i64",
//! "number too large to fit in target type", "struct PackRequest"); these
//! functions say the rule instead.

pub use depot_protocol::MAX_ID;

/// A Rust type name as the kind of value it takes.
fn kind(rust: &str) -> Option<&'static str> {
    let t = rust.trim().trim_matches('`');
    Some(match t {
        "i8" => "a whole number from -128 to 127",
        "i16" => "a whole number from -32768 to 32767",
        "i32" => "a whole number from -2147483648 to 2147483647",
        "i64" | "isize" => "a whole number from -9223372036854775808 to 9223372036854775807",
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number from 0 to 18446744073709551615",
        "f32" | "f64" => "a number",
        "bool" | "a boolean" => "true or false",
        "a string" | "string" | "str" | "a borrowed string" | "char" => "text",
        "a sequence" | "sequence" | "a vec" => "a list",
        "a map" | "map" => "an object",
        _ if t.starts_with("struct ") || t.starts_with("tuple struct ") => "an object",
        _ if t.starts_with("enum ") => "one of its documented values",
        _ if t.starts_with("a ") && !t.contains(['<', ':']) => return None,
        _ => return None,
    })
}

/// What serde says was given ("integer `-1`", "string \"x\"", "map").
fn given(what: &str) -> String {
    let what = what.trim();
    for (prefix, name) in [
        ("integer ", ""),
        ("floating point ", ""),
        ("string ", ""),
        ("boolean ", ""),
    ] {
        if let Some(v) = what.strip_prefix(prefix) {
            return format!("{name}{}", v.trim_matches('`'));
        }
    }
    match what {
        "map" => "an object".into(),
        "sequence" => "a list".into(),
        "null" => "null".into(),
        "unit value" => "nothing".into(),
        other => other.to_owned(),
    }
}

/// A serde data error's message, said as a rule. Unknown wordings are kept,
/// with any Rust type named in them put in words.
pub fn data_error(message: &str) -> String {
    let m = message.trim();
    if let Some(field) = m
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        return format!("{field} is required");
    }
    if let Some(rest) = m.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or("");
        return match rest.split_once("expected one of ") {
            Some((_, list)) => format!(
                "{field} is not a field here; the fields are {}",
                list.replace('`', "")
            ),
            None => format!("{field} is not a field here"),
        };
    }
    if let Some(rest) = m.strip_prefix("unknown variant `") {
        let value = rest.split('`').next().unwrap_or("");
        return match rest.split_once("expected one of ") {
            Some((_, list)) => format!("must be one of {}, not {value:?}", list.replace('`', "")),
            None => format!("{value:?} is not one of its values"),
        };
    }
    for (lead, sep) in [
        ("invalid type: ", ", expected "),
        ("invalid value: ", ", expected "),
    ] {
        if let Some((got, expected)) = m.strip_prefix(lead).and_then(|r| r.split_once(sep)) {
            let want = kind(expected).map_or_else(|| expected.to_owned(), str::to_owned);
            return format!("must be {want}, not {}", given(got));
        }
    }
    if m.starts_with("invalid length") {
        return m.replace("invalid length", "wrong number of values:");
    }
    match m {
        "invalid digit found in string" | "cannot parse integer from empty string" => {
            "must be a whole number".into()
        }
        "number too large to fit in target type" | "number too small to fit in target type" => {
            "is out of range for a whole number".into()
        }
        "invalid float literal" => "must be a number".into(),
        "provided string was not `true` or `false`" => "must be true or false".into(),
        "number out of range" => "is out of range".into(),
        _ => m.to_owned(),
    }
}

/// A path or query parameter that is not the number it must be.
pub fn not_an_id(name: &str, value: &str) -> String {
    if name == "business_id" {
        format!("{name} must be a whole number from 1 to 2147483647, not {value:?}")
    } else {
        format!("{name} must be a whole number from 1 to {MAX_ID}, not {value:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_never_shows_through() {
        for (serde, said) in [
            ("missing field `sku`", "sku is required"),
            (
                "unknown field `qty`, expected one of `sku`, `quantity`",
                "qty is not a field here; the fields are sku, quantity",
            ),
            (
                "unknown variant `shiped`, expected one of `packed`, `dispatched`",
                "must be one of packed, dispatched, not \"shiped\"",
            ),
            (
                "invalid type: string \"1\", expected i64",
                "must be a whole number from -9223372036854775808 to 9223372036854775807, not \"1\"",
            ),
            (
                "invalid value: integer `-1`, expected u32",
                "must be a whole number from 0 to 4294967295, not -1",
            ),
            (
                "invalid type: map, expected a string",
                "must be text, not an object",
            ),
            (
                "invalid type: sequence, expected struct PackRequest",
                "must be an object, not a list",
            ),
            (
                "number too large to fit in target type",
                "is out of range for a whole number",
            ),
            ("invalid digit found in string", "must be a whole number"),
            (
                "provided string was not `true` or `false`",
                "must be true or false",
            ),
        ] {
            assert_eq!(data_error(serde), said, "{serde}");
        }
    }
}
