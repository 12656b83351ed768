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
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(_) => self.required_texts(field),
        }
    }

    /// A list of non-empty strings that must be there.
    pub(super) fn required_texts(&self, field: &str) -> Result<Vec<String>, SpecError> {
        self.required(field)?
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

    /// A field that must be there.
    pub(super) fn required(&self, field: &str) -> Result<&'a Value, SpecError> {
        self.get(field)
            .ok_or_else(|| self.bad(&format!("missing field {field:?}")))
    }

    /// An integer that is not negative.
    pub(super) fn count(&self, field: &str, default: Option<u64>) -> Result<u64, SpecError> {
        match (self.get(field), default) {
            (None, Some(default)) => Ok(default),
            (Some(value), _) => self.count_of(field, value),
            (None, None) => Err(self.bad(&format!("missing field {field:?}"))),
        }
    }

    /// A list of integers that are not negative, which must be there.
    pub(super) fn counts(&self, field: &str) -> Result<Vec<u64>, SpecError> {
        self.required(field)?
            .as_array()
            .ok_or_else(|| self.bad(&format!("field {field:?} must be a list of integers")))?
            .iter()
            .map(|item| self.count_of(field, item))
            .collect()
    }

    fn count_of(&self, field: &str, value: &Value) -> Result<u64, SpecError> {
        match (value.as_u64(), value.as_i64()) {
            (Some(count), _) => Ok(count),
            (None, Some(_)) => Err(self.bad(&format!("field {field:?} is not negative"))),
            (None, None) => Err(self.bad(&format!("field {field:?} must hold integers"))),
        }
    }

    /// A list of stages of another family, each read by `read`, which must be there.
    pub(super) fn stages<T>(
        &self,
        field: &str,
        read: impl Fn(&Value) -> Result<T, SpecError>,
    ) -> Result<Vec<T>, SpecError> {
        self.required(field)?
            .as_array()
            .ok_or_else(|| self.bad(&format!("field {field:?} must be a list of stages")))?
            .iter()
            .map(read)
            .collect()
    }
}

/// Whether `text` is base64 as the Python package checks a character map
/// (`base64.b64decode(text, validate=True)`, CPython 3.11's strict mode): letters, digits, `+`
/// and `/`, then the padding their count needs (none after a multiple of four, which may
/// still be followed by `=`s; `==` after two more; `=` after three), and no leading `=`.
pub(super) fn is_base64(text: &str) -> bool {
    let data = text.trim_end_matches('=');
    let (n, padding) = (data.len(), text.len() - data.len());
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    data.bytes().all(alphabet)
        && match n % 4 {
            0 => n > 0 || padding == 0,
            2 => padding == 2,
            3 => padding == 1,
            _ => false,
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

pub(super) fn integers<T: Copy + Into<serde_json::Number>>(items: &[T]) -> Value {
    Value::Array(items.iter().map(|&i| Value::Number(i.into())).collect())
}
