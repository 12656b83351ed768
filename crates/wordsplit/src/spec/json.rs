//! Reading a stage's JSON object: its `"type"` and fields, checked; writing one with its keys
//! sorted (the canonical form both languages write).

use serde_json::{Map, Value};

use super::SpecError;

/// A stage's object, checked to have a string `"type"` and no field but `fields`.
pub(super) struct StageObject<'a> {
    pub(super) family: &'static str,
    pub(super) kind: &'a str,
    object: &'a Map<String, Value>,
}

impl<'a> StageObject<'a> {
    pub(super) fn read(family: &'static str, value: &'a Value) -> Result<Self, SpecError> {
        let object = value.as_object().ok_or_else(|| {
            SpecError(format!(
                "a {family} is an object with a string 'type', not {value}"
            ))
        })?;
        let kind = object.get("type").and_then(Value::as_str).ok_or_else(|| {
            SpecError(format!(
                "a {family} is an object with a string 'type', not {value}"
            ))
        })?;
        Ok(Self {
            family,
            kind,
            object,
        })
    }

    /// Refuse fields the kind does not have (a typo would otherwise be silently ignored).
    pub(super) fn only(&self, fields: &[&str]) -> Result<(), SpecError> {
        match self
            .object
            .keys()
            .find(|k| *k != "type" && !fields.contains(&k.as_str()))
        {
            Some(extra) => Err(self.bad(&format!("unknown field {extra:?}"))),
            None => Ok(()),
        }
    }

    pub(super) fn bad(&self, why: &str) -> SpecError {
        SpecError(format!("{} {:?}: {why}", self.family, self.kind))
    }

    pub(super) fn unknown(&self, known: &[&str]) -> SpecError {
        self.bad(&format!("unknown type; known: {}", known.join(", ")))
    }

    pub(super) fn get(&self, field: &str) -> Option<&'a Value> {
        self.object.get(field)
    }

    pub(super) fn text(&self, field: &str, default: Option<&str>) -> Result<String, SpecError> {
        match (self.get(field), default) {
            (Some(Value::String(text)), _) => Ok(text.clone()),
            (None, Some(default)) => Ok(default.to_owned()),
            (None, None) => Err(self.bad(&format!("missing field {field:?}"))),
            (Some(_), _) => Err(self.bad(&format!("field {field:?} must be a string"))),
        }
    }

    pub(super) fn flag(&self, field: &str, default: bool) -> Result<bool, SpecError> {
        match self.get(field) {
            None => Ok(default),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(self.bad(&format!("field {field:?} must be a boolean"))),
        }
    }

    /// A list of non-empty strings (empty when missing).
    pub(super) fn texts(&self, field: &str) -> Result<Vec<String>, SpecError> {
        let Some(value) = self.get(field) else {
            return Ok(Vec::new());
        };
        value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                    .collect()
            })
            .ok_or_else(|| {
                self.bad(&format!(
                    "field {field:?} must be a list of non-empty strings"
                ))
            })
    }
}

/// A stage's JSON object: `"type"` and the fields, keys sorted.
pub(super) fn stage(kind: &str, fields: Vec<(&str, Value)>) -> Value {
    let mut pairs: Vec<(&str, Value)> = fields;
    pairs.push(("type", Value::String(kind.to_owned())));
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

pub(super) fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}
