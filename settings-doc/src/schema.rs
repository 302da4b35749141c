//! Reading the JSON schemas schemars makes: `$ref`s followed, optional
//! values (`anyOf` with `null`) unwrapped, and each schema classified as
//! a table, a map, a tagged union, a list or a plain value.

use serde_json::{Map, Value};

pub struct Schemas<'a> {
    defs: Option<&'a Map<String, Value>>,
}

/// A schema with what refers to it: the place's own keywords come first
/// (a field's doc comment and default), then those of the definitions it
/// refers to.
pub struct Node<'a> {
    parts: Vec<&'a Value>,
    pub description: Option<String>,
    pub default: Option<&'a Value>,
}

pub enum Kind<'a> {
    /// Keys, each with whether it is required.
    Struct(Vec<(&'a str, Node<'a>, bool)>),
    /// Tables by name, each like this.
    Map(Node<'a>),
    /// Tables whose `tag` key names which of the variants each is.
    Tagged {
        tag: String,
        variants: Vec<(String, Node<'a>)>,
    },
    Array(Node<'a>),
    Leaf,
}

/// `anyOf: [X, {type: null}]`, what an `Option` is: the X.
fn optional(alternatives: &[Value]) -> Option<&Value> {
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    match alternatives {
        [a, b] if is_null(b) => Some(a),
        [a, b] if is_null(a) => Some(b),
        _ => None,
    }
}

fn alternatives(v: &Value) -> Option<&Vec<Value>> {
    v.get("oneOf")
        .or_else(|| v.get("anyOf"))
        .and_then(Value::as_array)
}

impl<'a> Schemas<'a> {
    pub fn new(root: &'a Value) -> Self {
        Self {
            defs: root
                .get("$defs")
                .or_else(|| root.get("definitions"))
                .and_then(Value::as_object),
        }
    }

    pub fn node(&self, at: &'a Value) -> Node<'a> {
        let mut parts = Vec::new();
        let mut queue = vec![at];
        while let Some(v) = queue.pop() {
            if parts.len() > 32 {
                // A type that contains itself: deep enough to document.
                break;
            }
            parts.push(v);
            let mut next = Vec::new();
            if let Some(def) = v
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.rsplit('/').next())
                .and_then(|name| self.defs?.get(name))
            {
                next.push(def);
            }
            if let Some(inner) = alternatives(v).and_then(|a| optional(a)) {
                next.push(inner);
            }
            if let Some(all) = v.get("allOf").and_then(Value::as_array) {
                next.extend(all);
            }
            // Depth first, in order: the place's own refinements win.
            queue.extend(next.into_iter().rev());
        }
        let first = |key: &str| parts.iter().find_map(|p| p.get(key));
        Node {
            description: first("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            default: first("default"),
            parts,
        }
    }

    fn get(&self, node: &Node<'a>, key: &str) -> Option<&'a Value> {
        node.parts.iter().find_map(|p| p.get(key))
    }

    /// The types the schema allows, `null` left out (it means unset).
    fn types(&self, node: &Node<'a>) -> Vec<&'a str> {
        match self.get(node, "type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The alternatives of a union (not the `null` of an optional value).
    fn union(&self, node: &Node<'a>) -> Option<&'a Vec<Value>> {
        node.parts
            .iter()
            .filter_map(|p| alternatives(p))
            .find(|a| optional(a).is_none())
    }

    pub fn kind(&self, node: &Node<'a>) -> Kind<'a> {
        if let Some(alternatives) = self.union(node) {
            return self.tagged(alternatives).unwrap_or(Kind::Leaf);
        }
        let properties: Vec<&'a Map<String, Value>> = node
            .parts
            .iter()
            .filter_map(|p| p.get("properties").and_then(Value::as_object))
            .collect();
        if !properties.is_empty() {
            let required: Vec<&str> = node
                .parts
                .iter()
                .filter_map(|p| p.get("required").and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut fields: Vec<(&'a str, Node<'a>, bool)> = Vec::new();
            for (name, schema) in properties.into_iter().flatten() {
                if !fields.iter().any(|(n, _, _)| n == name) {
                    let name = name.as_str();
                    fields.push((name, self.node(schema), required.contains(&name)));
                }
            }
            return Kind::Struct(fields);
        }
        let types = self.types(node);
        if types == ["object"] {
            if let Some(value) = self
                .get(node, "additionalProperties")
                .filter(|v| v.is_object())
            {
                return Kind::Map(self.node(value));
            }
        }
        if types == ["array"] {
            if let Some(items) = self.get(node, "items") {
                return Kind::Array(self.node(items));
            }
        }
        Kind::Leaf
    }

    /// A union whose alternatives are tables sharing a key that is a
    /// different constant in each: serde's internally tagged enum.
    fn tagged(&self, alternatives: &'a [Value]) -> Option<Kind<'a>> {
        let nodes: Vec<Node<'a>> = alternatives.iter().map(|a| self.node(a)).collect();
        let mut consts: Vec<Vec<(&'a str, String)>> = Vec::new();
        for node in &nodes {
            let Kind::Struct(fields) = self.kind(node) else {
                return None;
            };
            consts.push(
                fields
                    .iter()
                    .filter_map(|(name, f, _)| {
                        let value = self.get(f, "const").and_then(Value::as_str)?;
                        Some((*name, value.to_owned()))
                    })
                    .collect(),
            );
        }
        let value_of = |c: &[(&str, String)], key: &str| {
            c.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
        };
        let tag = consts
            .first()?
            .iter()
            .map(|(k, _)| *k)
            .find(|k| consts.iter().all(|c| value_of(c, k).is_some()))?;
        let variants = consts
            .iter()
            .zip(nodes)
            .map(|(c, node)| Some((value_of(c, tag)?, node)))
            .collect::<Option<Vec<_>>>()?;
        Some(Kind::Tagged {
            tag: tag.to_owned(),
            variants,
        })
    }

    /// Whether a list's entries are tables (`[[…]]`) rather than values.
    pub fn is_table(&self, node: &Node<'a>) -> bool {
        matches!(
            self.kind(node),
            Kind::Struct(_) | Kind::Tagged { .. } | Kind::Map(_)
        )
    }

    /// The type as a reader writes it: `string`, `integer, 0 to 255`,
    /// `"g" | "kg"`, `list of strings`.
    pub fn type_name(&self, node: &Node<'a>) -> String {
        if let Some(alternatives) = self.union(node) {
            return alternatives
                .iter()
                .map(|a| self.type_name(&self.node(a)))
                .collect::<Vec<_>>()
                .join(" | ");
        }
        if let Some(c) = self.get(node, "const") {
            return format!("`{c}`");
        }
        if let Some(values) = self.get(node, "enum").and_then(Value::as_array) {
            return values
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(" | ");
        }
        match self.kind(node) {
            Kind::Array(items) => {
                let inner = self.type_name(&items);
                return match inner.as_str() {
                    "string" | "integer" | "number" | "boolean" => format!("list of {inner}s"),
                    _ => format!("list of ({inner})"),
                };
            }
            Kind::Struct(fields) => {
                let inner: Vec<String> = fields
                    .iter()
                    .map(|(name, f, _)| format!("{name} = {}", self.type_name(f)))
                    .collect();
                return format!("{{ {} }}", inner.join(", "));
            }
            Kind::Map(_) | Kind::Tagged { .. } => return "table".into(),
            Kind::Leaf => {}
        }
        let types = self.types(node);
        match types.as_slice() {
            ["integer"] => {
                let bound = |k: &str| self.get(node, k).and_then(Value::as_i64);
                match (bound("minimum"), bound("maximum")) {
                    (Some(lo), Some(hi)) => format!("integer, {lo} to {hi}"),
                    (Some(0), None) => "integer, 0 or more".into(),
                    _ => "integer".into(),
                }
            }
            [t] => (*t).to_owned(),
            _ => "value".into(),
        }
    }

    /// For a choice among values some of which are documented (an enum's
    /// variants' doc comments): each such value and what it means.
    pub fn documented_values(&self, node: &Node<'a>) -> Vec<String> {
        let Some(alternatives) = self.union(node) else {
            return Vec::new();
        };
        if self.tagged(alternatives).is_some() {
            return Vec::new();
        }
        alternatives
            .iter()
            .filter_map(|a| {
                let d = a.get("description").and_then(Value::as_str)?;
                let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
                Some(format!("{}: {d}", self.type_name(&self.node(a))))
            })
            .collect()
    }
}
