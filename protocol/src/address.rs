//! Whether an address can carry a parcel: what each country's addresses
//! must have and how its postcodes look, from Google's address metadata
//! (the data behind libaddressinput and Chrome's address forms), kept in
//! `data/countries.json` and refreshed with `data/refresh-countries.py`.
//!
//! Nothing here changes an address: what the channel sent is kept as sent,
//! and the problems are listed beside it (`address_issues` on an order), so
//! a person can correct them.

use crate::FieldError;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

/// A postal address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Address {
    #[schema(format = "opt-line", max_length = 200)]
    pub name: Option<String>,
    #[schema(format = "opt-line", max_length = 200)]
    pub line1: Option<String>,
    #[schema(format = "opt-line", max_length = 200)]
    pub line2: Option<String>,
    #[schema(format = "opt-line", max_length = 100)]
    pub city: Option<String>,
    #[schema(format = "opt-line", max_length = 100)]
    pub region: Option<String>,
    #[schema(format = "opt-line", max_length = 20)]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2.
    #[schema(pattern = "^\\s*([A-Za-z]{2})?\\s*$")]
    pub country: Option<String>,
}

/// One country's rules, as the data file has them.
#[derive(Debug, Deserialize)]
pub struct Country {
    /// ISO 3166-1 alpha-2.
    pub code: String,
    pub name: String,
    /// Fields an address must have: A street, C city, S region, Z postcode.
    require: String,
    /// The postcode pattern, where the country has postcodes.
    zip: Option<String>,
    /// An example postcode, for the message.
    zipex: Option<String>,
    /// "postal", "zip", "pin", "eircode": what people call the postcode.
    zip_name: String,
    /// "state", "province", "prefecture", "emirate", ...
    state_name: String,
    #[serde(skip)]
    pattern: OnceLock<Option<Regex>>,
}

static COUNTRIES: LazyLock<HashMap<String, Country>> = LazyLock::new(|| {
    let list: Vec<Country> =
        serde_json::from_str(include_str!("../data/countries.json")).unwrap_or_default();
    list.into_iter().map(|c| (c.code.clone(), c)).collect()
});

/// The country with this ISO 3166-1 alpha-2 code, if it is one.
pub fn country(code: &str) -> Option<&'static Country> {
    COUNTRIES.get(code)
}

impl Country {
    fn requires(&self, field: char) -> bool {
        self.require.contains(field)
    }

    /// Whether the country uses postcodes at all.
    pub fn has_postcodes(&self) -> bool {
        self.zip.is_some()
    }

    /// Whether `postcode` has this country's form (case and surrounding
    /// space ignored). Countries without postcodes take any.
    pub fn postcode_fits(&self, postcode: &str) -> bool {
        let pattern = self.pattern.get_or_init(|| {
            self.zip
                .as_deref()
                .and_then(|z| Regex::new(&format!("^(?:{z})$")).ok())
        });
        match pattern {
            Some(re) => re.is_match(&postcode.trim().to_uppercase()),
            None => true,
        }
    }

    fn postcode_word(&self) -> String {
        match self.zip_name.as_str() {
            "zip" => "ZIP code".into(),
            "eircode" => "Eircode".into(),
            "pin" => "PIN code".into(),
            other => format!("{other} code"),
        }
    }

    fn example(&self) -> String {
        self.zipex
            .as_deref()
            .map_or_else(String::new, |e| format!(", such as {e}"))
    }
}

fn blank(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(|s| s.trim().is_empty())
}

/// What keeps `a` from being a deliverable address, field by field (named
/// `shipping_address.<field>`); empty when it can be shipped to. `buyer`
/// stands in for a missing recipient name.
pub fn issues(a: &Address, buyer: Option<&str>) -> Vec<FieldError> {
    let field = |f: &str| format!("shipping_address.{f}");
    let mut out = Vec::new();
    if blank(&a.name) && buyer.is_none_or(|b| b.trim().is_empty()) {
        out.push(FieldError::new(
            field("name"),
            "no recipient: neither the address nor the buyer has a name",
        ));
    }
    let Some(code) = a.country.as_deref().filter(|c| !c.trim().is_empty()) else {
        out.push(FieldError::new(field("country"), "the country is missing"));
        if blank(&a.line1) {
            out.push(FieldError::new(
                field("line1"),
                "the street and number are missing",
            ));
        }
        return out;
    };
    let Some(c) = country(code) else {
        out.push(FieldError::new(
            field("country"),
            format!("{code:?} is not a country code ISO 3166-1 assigns"),
        ));
        return out;
    };
    if c.requires('A') && blank(&a.line1) {
        out.push(FieldError::new(
            field("line1"),
            "the street and number are missing",
        ));
    }
    if c.requires('C') && blank(&a.city) {
        out.push(FieldError::new(
            field("city"),
            format!("the city is missing (required in {})", c.name),
        ));
    }
    if c.requires('S') && blank(&a.region) {
        out.push(FieldError::new(
            field("region"),
            format!("the {} is missing (required in {})", c.state_name, c.name),
        ));
    }
    match a.postal_code.as_deref().filter(|p| !p.trim().is_empty()) {
        None if c.requires('Z') => out.push(FieldError::new(
            field("postal_code"),
            format!(
                "the {} is missing (required in {}{})",
                c.postcode_word(),
                c.name,
                c.example()
            ),
        )),
        Some(p) if !c.postcode_fits(p) => out.push(FieldError::new(
            field("postal_code"),
            format!(
                "{p:?} is not a {} {}{}",
                c.name,
                c.postcode_word(),
                c.example()
            ),
        )),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line1: &str, postcode: &str, city: &str, region: &str, country: &str) -> Address {
        let some = |s: &str| Some(s.to_owned()).filter(|s| !s.is_empty());
        Address {
            name: some("Ada"),
            line1: some(line1),
            line2: None,
            city: some(city),
            region: some(region),
            postal_code: some(postcode),
            country: some(country),
        }
    }

    fn names(a: &Address) -> Vec<String> {
        issues(a, None).into_iter().map(|e| e.name).collect()
    }

    #[test]
    fn the_data_covers_the_world() {
        assert!(COUNTRIES.len() > 240, "{}", COUNTRIES.len());
        for code in ["GR", "JP", "AE", "US", "GB", "BR", "IN", "CN", "RU", "TR"] {
            assert!(country(code).is_some(), "{code}");
        }
        // Every pattern compiles.
        for c in COUNTRIES.values() {
            if let Some(z) = &c.zip {
                assert!(Regex::new(&format!("^(?:{z})$")).is_ok(), "{}", c.code);
                if let Some(ex) = &c.zipex {
                    assert!(c.postcode_fits(ex), "{}: example {ex}", c.code);
                }
            }
        }
    }

    #[test]
    fn complete_addresses_of_many_countries_pass() {
        for a in [
            at("Οδός Ερμού 25", "105 63", "Αθήνα", "", "GR"),
            at("ul. Floriańska 14/3", "31-021", "Kraków", "", "PL"),
            at("350 Fifth Avenue", "10118", "New York", "NY", "US"),
            at("10 Downing Street", "SW1A 2AA", "London", "", "GB"),
            at("sw1a 2aa", "sw1a 2aa", "London", "", "GB"),
            at("丸の内1-9-2", "100-0005", "千代田区", "東京都", "JP"),
            at("شارع الشيخ زايد", "", "", "دبي", "AE"),
            at("Calle de Alcalá 123", "28009", "Madrid", "Madrid", "ES"),
        ] {
            assert_eq!(names(&a), Vec::<String>::new(), "{a:?}");
        }
    }

    #[test]
    fn each_problem_is_named() {
        assert_eq!(
            names(&at("Ερμού 25", "", "Αθήνα", "", "GR")),
            ["shipping_address.postal_code"]
        );
        assert_eq!(
            names(&at("Ερμού 25", "1056", "Αθήνα", "", "GR")),
            ["shipping_address.postal_code"]
        );
        assert_eq!(
            names(&at("Main St 1", "10118", "New York", "", "US")),
            ["shipping_address.region"]
        );
        assert_eq!(
            names(&at("", "", "", "", "")),
            ["shipping_address.country", "shipping_address.line1"]
        );
        assert_eq!(
            names(&at("x", "1", "y", "", "XX")),
            ["shipping_address.country"]
        );
        let nobody = Address::default();
        assert!(
            issues(&nobody, Some("Ada"))
                .iter()
                .all(|e| !e.name.ends_with(".name"))
        );
        assert!(names(&nobody).contains(&"shipping_address.name".to_owned()));
        let msg = issues(&at("Ερμού 25", "", "Αθήνα", "", "GR"), None);
        assert!(msg[0].status.contains("151 24"), "{msg:?}");
    }
}
