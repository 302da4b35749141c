//! Reading a JSON body field by field, so that every field of the wrong type
//! and every unknown field is named at once (serde stops at the first).

use crate::FieldError;
use serde_json::{Map, Number, Value};

pub(crate) struct Fields<'a> {
    obj: &'a Map<String, Value>,
    prefix: String,
    errors: Vec<FieldError>,
}

impl<'a> Fields<'a> {
    /// `body` must be an object whose keys are among `known`; `what` names
    /// it in the error for the others, `prefix` goes before field names.
    pub fn new(
        body: &'a Value,
        known: &[&str],
        what: &str,
        prefix: &str,
    ) -> Result<Self, Vec<FieldError>> {
        let Some(obj) = body.as_object() else {
            let name = if prefix.is_empty() { "body" } else { prefix };
            return Err(vec![FieldError::new(name, "must be a JSON object")]);
        };
        let mut f = Self {
            obj,
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}.")
            },
            errors: Vec::new(),
        };
        for k in obj.keys().filter(|k| !known.contains(&k.as_str())) {
            f.fail(k, format!("is not a field of {what}"));
        }
        Ok(f)
    }

    pub fn fail(&mut self, name: &str, status: impl Into<String>) {
        self.errors
            .push(FieldError::new(format!("{}{name}", self.prefix), status));
    }

    /// The value of `name`; `null` reads as absent.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !v.is_null())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn typed<T>(
        &mut self,
        name: &str,
        want: &str,
        f: impl Fn(&'a Value) -> Option<T>,
    ) -> Option<T> {
        let v = self.get(name)?;
        let t = f(v);
        if t.is_none() {
            self.fail(name, format!("must be {want}"));
        }
        t
    }

    pub fn int(&mut self, name: &str) -> Option<i64> {
        self.typed(name, "an integer", Value::as_i64)
    }

    /// An id: an integer, or the string of digits answers write ids as.
    pub fn id(&mut self, name: &str) -> Option<i64> {
        self.typed(name, "an integer id", |v| match v {
            Value::String(s) if s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
            v => v.as_i64(),
        })
    }

    pub fn string(&mut self, name: &str) -> Option<String> {
        self.typed(name, "a string", |v| v.as_str().map(str::to_owned))
    }

    pub fn number(&mut self, name: &str) -> Option<Number> {
        self.typed(name, "a number", |v| match v {
            Value::Number(n) => Some(n.clone()),
            _ => None,
        })
    }

    pub fn object(&mut self, name: &str) -> Option<&'a Map<String, Value>> {
        self.typed(name, "an object", Value::as_object)
    }

    pub fn array(&mut self, name: &str) -> Option<&'a Vec<Value>> {
        self.typed(name, "an array", Value::as_array)
    }

    /// An array of strings; each other element is named by its index.
    pub fn strings(&mut self, name: &str) -> Option<Vec<String>> {
        let list = self.array(name)?;
        let mut out = Vec::with_capacity(list.len());
        for (i, v) in list.iter().enumerate() {
            match v.as_str() {
                Some(s) => out.push(s.to_owned()),
                None => self.fail(&format!("{name}[{i}]"), "must be a string"),
            }
        }
        Some(out)
    }

    pub fn into_errors(self) -> Vec<FieldError> {
        self.errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_wrong_field_is_named() {
        let body = json!({"a": "1", "b": 1.5, "c": [1, "x"], "d": null, "e": "12", "zz": 1});
        let mut f = Fields::new(&body, &["a", "b", "c", "d", "e"], "a test", "")
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(f.int("a"), None);
        assert_eq!(f.int("b"), None);
        assert_eq!(f.strings("c"), Some(vec!["x".to_owned()]));
        assert_eq!(f.string("d"), None);
        assert_eq!(f.id("e"), Some(12));
        let names: Vec<_> = f.into_errors().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["zz", "a", "b", "c[0]"]);
    }

    #[test]
    fn a_body_must_be_an_object() {
        let errors = Fields::new(&json!([1]), &[], "a test", "").err();
        assert_eq!(errors.map(|e| e[0].name.clone()), Some("body".into()));
        let errors = Fields::new(&json!(3), &[], "a move", "positions[2]").err();
        assert_eq!(
            errors.map(|e| e[0].name.clone()),
            Some("positions[2]".into())
        );
    }
}
