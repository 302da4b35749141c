//! Which items a rule applies to: conditions on the item's catalog fields
//! and on its price in the rule's origin price list.

use crate::Money;

/// The longest text a condition or a channel takes.
pub const MAX_TEXT: usize = 100;

/// What a condition looks at of one item.
#[derive(Debug, Clone, Copy)]
pub struct ItemFacts<'a> {
    pub sku: &'a str,
    pub brand: Option<&'a str>,
    pub category: Option<&'a str>,
    /// The channels the item has publication links in.
    pub channels: &'a [String],
    /// Its price in the rule's origin price list.
    pub price: Money,
}

/// A checked `condition_id` with its `condition_value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// Every item with a price in the origin list (no value).
    All,
    /// The SKU starts with the value (case-sensitive, as SKUs are codes).
    SkuPrefix(String),
    /// Brand, category and channel compare without regard to case.
    Brand(String),
    Category(String),
    /// The item has a publication link in this channel.
    Channel(String),
    /// The origin price is strictly below the amount.
    PriceBelow(Money),
    /// The origin price is strictly above the amount.
    PriceAbove(Money),
}

/// The `condition_id` values, in the order `conditions` objects are written.
pub const CONDITION_IDS: [&str; 7] = [
    "all",
    "sku_prefix",
    "brand",
    "category",
    "channel",
    "price_below",
    "price_above",
];

/// Why a condition was refused: its id is unknown, or its value is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConditionError {
    UnknownId,
    Value(String),
}

fn same_text(a: &str, b: &str) -> bool {
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

impl Condition {
    pub fn new(id: &str, value: &str) -> Result<Self, ConditionError> {
        let v = value.trim();
        let text = |make: fn(String) -> Condition| {
            if v.is_empty() {
                Err(ConditionError::Value(format!(
                    "is required for {}",
                    id.trim()
                )))
            } else if v.chars().count() > MAX_TEXT {
                Err(ConditionError::Value(format!(
                    "must be at most {MAX_TEXT} characters"
                )))
            } else if v.chars().any(char::is_control) {
                Err(ConditionError::Value(
                    "must not contain control characters".into(),
                ))
            } else {
                Ok(make(v.to_owned()))
            }
        };
        let amount = |make: fn(Money) -> Condition| match Money::parse(v) {
            Ok(m) if m.cents() >= 0 => Ok(make(m)),
            _ => Err(ConditionError::Value(
                "must be an amount like \"12.50\", not negative".into(),
            )),
        };
        match id.trim() {
            "all" if v.is_empty() => Ok(Self::All),
            "all" => Err(ConditionError::Value(
                "must be empty for condition all".into(),
            )),
            "sku_prefix" => text(Self::SkuPrefix),
            "brand" => text(Self::Brand),
            "category" => text(Self::Category),
            "channel" => text(Self::Channel),
            "price_below" => amount(Self::PriceBelow),
            "price_above" => amount(Self::PriceAbove),
            _ => Err(ConditionError::UnknownId),
        }
    }

    pub fn id(&self) -> &'static str {
        match self {
            Self::All => "all",
            Self::SkuPrefix(_) => "sku_prefix",
            Self::Brand(_) => "brand",
            Self::Category(_) => "category",
            Self::Channel(_) => "channel",
            Self::PriceBelow(_) => "price_below",
            Self::PriceAbove(_) => "price_above",
        }
    }

    pub fn value_string(&self) -> String {
        match self {
            Self::All => String::new(),
            Self::SkuPrefix(s) | Self::Brand(s) | Self::Category(s) | Self::Channel(s) => s.clone(),
            Self::PriceBelow(m) | Self::PriceAbove(m) => m.to_string(),
        }
    }

    pub fn holds(&self, item: &ItemFacts) -> bool {
        match self {
            Self::All => true,
            Self::SkuPrefix(p) => item.sku.starts_with(p.as_str()),
            Self::Brand(b) => item.brand.is_some_and(|x| same_text(x, b)),
            Self::Category(c) => item.category.is_some_and(|x| same_text(x, c)),
            Self::Channel(c) => item.channels.iter().any(|x| same_text(x, c)),
            Self::PriceBelow(m) => item.price < *m,
            Self::PriceAbove(m) => item.price > *m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(price: i64) -> (Vec<String>, i64) {
        (vec!["Amazon".into(), "shop".into()], price)
    }

    #[test]
    fn conditions_match_the_catalog_fields_and_the_price() {
        let (channels, cents) = item(1000);
        let facts = ItemFacts {
            sku: "TSH-RED-M",
            brand: Some("Acme"),
            category: None,
            channels: &channels,
            price: Money(cents),
        };
        let holds = |id: &str, v: &str| Condition::new(id, v).map(|c| c.holds(&facts));
        assert_eq!(holds("all", ""), Ok(true));
        assert_eq!(holds("sku_prefix", "TSH-"), Ok(true));
        assert_eq!(holds("sku_prefix", "tsh-"), Ok(false));
        assert_eq!(holds("brand", "ACME"), Ok(true));
        assert_eq!(holds("category", "shirts"), Ok(false));
        assert_eq!(holds("channel", "amazon"), Ok(true));
        assert_eq!(holds("channel", "ebay"), Ok(false));
        assert_eq!(holds("price_below", "10.00"), Ok(false));
        assert_eq!(holds("price_below", "10.01"), Ok(true));
        assert_eq!(holds("price_above", "9.99"), Ok(true));
        assert_eq!(holds("price_above", "10"), Ok(false));
    }

    #[test]
    fn values_are_checked() {
        assert_eq!(Condition::new("size", "M"), Err(ConditionError::UnknownId));
        for (id, v) in [
            ("all", "x"),
            ("brand", " "),
            ("brand", &"b".repeat(101)),
            ("category", "a\u{7}"),
            ("price_below", "-1"),
            ("price_above", "cheap"),
        ] {
            assert!(
                matches!(Condition::new(id, v), Err(ConditionError::Value(_))),
                "{id} {v}"
            );
        }
        assert_eq!(
            Condition::new("price_below", "5").map(|c| c.value_string()),
            Ok("5.00".into())
        );
        assert_eq!(
            Condition::new(" brand ", " Acme ").map(|c| (c.id(), c.value_string())),
            Ok(("brand", "Acme".into()))
        );
    }
}
