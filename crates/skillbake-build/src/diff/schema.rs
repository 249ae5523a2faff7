//! Classifies the changes between two `schema.json` files: the parameters a pack accepts. The
//! comparison walks both schemas together, keyword by keyword, and asks of every difference
//! whether a call that was valid stays valid (compatible) or may now be rejected (breaking).
//!
//! * Local `$ref`s are followed on both sides (sibling keywords override the target's), so a
//!   change in `$defs` is reported where it takes effect (`/properties/to/oneOf/1/maxItems`);
//!   recursive schemas stop at the first repeated pair of references.
//! * `true` is any value and `false` none; a missing subschema (`additionalProperties`, `items`)
//!   is `true`.
//! * Keywords are classified as in the rule table ([`super::rules`]): `type`, `enum`, `const`,
//!   bounds, `multipleOf`, `pattern`, `format`, `uniqueItems`, `required`, `properties`,
//!   `additionalProperties`, `items`/`prefixItems`, `anyOf`/`oneOf`/`allOf`, `dependentRequired`,
//!   `default` and the annotations. Other validation keywords (`not`, `if`/`then`/`else`,
//!   `patternProperties`, `propertyNames`, `contains`, `unevaluated*`, `dependentSchemas`,
//!   `$schema`) are reported as `schema-keyword-changed` (breaking, to be reviewed) when they
//!   differ; keywords outside the JSON Schema vocabulary are annotations.
//! * An added `oneOf` alternative is not proved compatible (a value matching two alternatives
//!   becomes invalid); an added `anyOf` alternative is.

use super::rules::Rule;
use super::Change;
use serde_json::{Map, Value};

/// Annotation keywords: documentation that validators do not use.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
];

/// Keywords that only locate or name schemas.
const IGNORED: &[&str] = &[
    "$id",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
];

/// Validation keywords this module does not classify beyond "changed".
const OPAQUE: &[&str] = &[
    "$schema",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "contains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependencies",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// Lower bounds: raising one rejects values.
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
];

/// Upper bounds: lowering one rejects values.
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
];

/// Keywords handled by name in [`Walk::keywords`].
const HANDLED: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "pattern",
    "format",
    "uniqueItems",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "anyOf",
    "oneOf",
    "allOf",
    "dependentRequired",
    "default",
];

/// Deepest nesting followed (schemas nest a few levels; this bounds hostile input).
const MAX_DEPTH: usize = 64;

/// The changes from `old` to `new` (both parsed `schema.json` documents), in walk order.
pub fn compare(old: &Value, new: &Value, file: &str) -> Vec<Change> {
    let mut walk = Walk {
        old_root: old,
        new_root: new,
        file,
        out: Vec::new(),
        refs: Vec::new(),
    };
    walk.schema(old, new, "");
    walk.out
}

struct Walk<'a> {
    old_root: &'a Value,
    new_root: &'a Value,
    file: &'a str,
    out: Vec<Change>,
    /// The pairs of `$ref`s being followed (cycle guard).
    refs: Vec<(Option<String>, Option<String>)>,
}

/// A schema after `$ref` resolution: any value, no value, or an object of keywords.
enum Shape {
    Any,
    Nothing,
    Object(Map<String, Value>),
}

fn short(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn list(values: &[&Value]) -> String {
    values
        .iter()
        .map(|v| format!("`{}`", short(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON pointer token: `~` and `/` escaped.
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Follows a local `#/...` reference.
fn lookup<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    // The fragment is percent-encoded (RFC 3986); `pointer` undoes `~0` and `~1`.
    root.pointer(&skillbake_format::percent::decode(pointer)?)
}

/// Resolves `$ref` chains (at most 32 hops) and merges sibling keywords over the target.
fn shape(root: &Value, v: &Value) -> (Shape, Option<String>) {
    let mut current = v.clone();
    let mut first_ref = None;
    for _ in 0..32 {
        match current {
            Value::Bool(true) => return (Shape::Any, first_ref),
            Value::Bool(false) => return (Shape::Nothing, first_ref),
            Value::Object(mut map) => {
                let Some(Value::String(reference)) = map.get("$ref").cloned() else {
                    return (Shape::Object(map), first_ref);
                };
                let Some(target) = lookup(root, &reference) else {
                    return (Shape::Object(map), first_ref);
                };
                first_ref.get_or_insert_with(|| reference.clone());
                map.shift_remove("$ref");
                current = match target {
                    Value::Object(t) => {
                        let mut merged = t.clone();
                        for (k, v) in map {
                            merged.insert(k, v);
                        }
                        Value::Object(merged)
                    }
                    other if map.is_empty() => other.clone(),
                    // `false` with siblings is still `false`; `true` with siblings is them.
                    Value::Bool(false) => Value::Bool(false),
                    _ => Value::Object(map),
                };
            }
            // Not a schema (validation reports it): compare nothing inside.
            _ => return (Shape::Any, first_ref),
        }
    }
    (Shape::Any, first_ref)
}

fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// The JSON types a `type` keyword allows (`None`: any).
fn types(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        ),
        _ => None,
    }
}

fn covers(set: &[String], t: &str) -> bool {
    set.iter().any(|s| s == t) || (t == "integer" && set.iter().any(|s| s == "number"))
}

fn required(map: &Map<String, Value>) -> Vec<String> {
    match map.get("required") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn is_false(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(false)))
}

impl Walk<'_> {
    fn push(&mut self, rule: Rule, ptr: &str, message: String) {
        self.out.push(Change {
            rule,
            file: Some(self.file.to_string()),
            pointer: Some(if ptr.is_empty() {
                "/".to_string()
            } else {
                ptr.to_string()
            }),
            message,
            detail: None,
            subject: None,
        });
    }

    fn schema(&mut self, old: &Value, new: &Value, ptr: &str) {
        if self.refs.len() >= MAX_DEPTH {
            return;
        }
        let (o, oref) = shape(self.old_root, old);
        let (n, nref) = shape(self.new_root, new);
        if oref.is_some() || nref.is_some() {
            let pair = (oref, nref);
            if self.refs.contains(&pair) {
                return;
            }
            self.refs.push(pair);
            self.shapes(o, n, ptr);
            self.refs.pop();
        } else {
            self.refs.push((None, None));
            self.shapes(o, n, ptr);
            self.refs.pop();
        }
    }

    fn shapes(&mut self, o: Shape, n: Shape, ptr: &str) {
        match (o, n) {
            (Shape::Nothing, Shape::Nothing) => {}
            (_, Shape::Nothing) => self.push(
                Rule::ConstraintTightened,
                ptr,
                "the schema became `false`: no value is accepted".into(),
            ),
            (Shape::Nothing, _) => self.push(
                Rule::ConstraintRelaxed,
                ptr,
                "the schema is no longer `false`: values are accepted".into(),
            ),
            (o, n) => {
                let empty = Map::new();
                let om = match &o {
                    Shape::Object(m) => m,
                    _ => &empty,
                };
                let nm = match &n {
                    Shape::Object(m) => m,
                    _ => &empty,
                };
                self.keywords(om, nm, ptr);
            }
        }
    }

    fn keywords(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        self.types(o, n, ptr);
        self.enums(o, n, ptr);
        self.presence(o, n, ptr, "const");
        for &k in LOWER {
            self.bound(o, n, ptr, k, true);
        }
        for &k in UPPER {
            self.bound(o, n, ptr, k, false);
        }
        self.multiple_of(o, n, ptr);
        self.presence(o, n, ptr, "pattern");
        self.presence(o, n, ptr, "format");
        self.unique(o, n, ptr);
        self.properties(o, n, ptr);
        self.additional(o, n, ptr, "additionalProperties");
        self.additional(o, n, ptr, "additionalItems");
        self.items(o, n, ptr);
        self.tuple(o, n, ptr, "prefixItems");
        self.alternatives(o, n, ptr, "anyOf");
        self.alternatives(o, n, ptr, "oneOf");
        self.all_of(o, n, ptr);
        self.dependent_required(o, n, ptr);
        let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (a, b) = (o.get(k), n.get(k));
            if a == b {
                continue;
            }
            let at = format!("{ptr}/{}", token(k));
            let what = match (a, b) {
                (Some(a), Some(b)) => {
                    format!("`{k}` changed from `{}` to `{}`", short(a), short(b))
                }
                (None, Some(b)) => format!("`{k}` added: `{}`", short(b)),
                (Some(a), None) => format!("`{k}` removed (was `{}`)", short(a)),
                (None, None) => continue,
            };
            if k == "default" {
                self.push(
                    Rule::DefaultChanged,
                    &at,
                    format!("{what}: calls that leave it out get another value"),
                );
            } else if ANNOTATIONS.contains(&k.as_str()) {
                self.push(Rule::AnnotationChanged, &at, what);
            } else if OPAQUE.contains(&k.as_str()) {
                self.push(
                    Rule::SchemaKeywordChanged,
                    &at,
                    format!(
                        "{what}; skillbake cannot tell whether calls that were valid stay valid"
                    ),
                );
            } else if IGNORED.contains(&k.as_str())
                || HANDLED.contains(&k.as_str())
                || LOWER.contains(&k.as_str())
                || UPPER.contains(&k.as_str())
            {
            } else {
                self.push(
                    Rule::AnnotationChanged,
                    &at,
                    format!("{what} (not a JSON Schema keyword: validators ignore it)"),
                );
            }
        }
    }

    fn types(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        if o.get("type") == n.get("type") {
            return;
        }
        let at = format!("{ptr}/type");
        let (old, new) = (types(o.get("type")), types(n.get("type")));
        match (old, new) {
            (None, Some(new)) => self.push(
                Rule::TypeNarrowed,
                &at,
                format!("`type` was not restricted, now `{}`", new.join("`, `")),
            ),
            (Some(old), None) => self.push(
                Rule::TypeWidened,
                &at,
                format!("`type` was `{}`, now any type", old.join("`, `")),
            ),
            (Some(old), Some(new)) => {
                let lost: Vec<&String> = old.iter().filter(|t| !covers(&new, t)).collect();
                let gained: Vec<&String> = new.iter().filter(|t| !covers(&old, t)).collect();
                if !lost.is_empty() {
                    let narrowed =
                        lost.iter().any(|t| t.as_str() == "number") && covers(&new, "integer");
                    let why = if narrowed {
                        " (`number` narrowed to `integer`: fractions are rejected)".to_string()
                    } else {
                        String::new()
                    };
                    self.push(
                        Rule::TypeNarrowed,
                        &at,
                        format!(
                            "`type` no longer accepts `{}`{why}",
                            lost.iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join("`, `")
                        ),
                    );
                }
                if !gained.is_empty() {
                    self.push(
                        Rule::TypeWidened,
                        &at,
                        format!(
                            "`type` also accepts `{}`",
                            gained
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join("`, `")
                        ),
                    );
                }
            }
            (None, None) => self.push(
                Rule::SchemaKeywordChanged,
                &at,
                "`type` changed to a value that is not a type name".into(),
            ),
        }
    }

    fn enums(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let at = format!("{ptr}/enum");
        match (o.get("enum"), n.get("enum")) {
            (Some(Value::Array(a)), Some(Value::Array(b))) => {
                let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
                let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
                if !removed.is_empty() {
                    self.push(
                        Rule::EnumValueRemoved,
                        &at,
                        format!("`enum` no longer has {}", list(&removed)),
                    );
                }
                if !added.is_empty() {
                    self.push(
                        Rule::EnumValueAdded,
                        &at,
                        format!("`enum` also has {}", list(&added)),
                    );
                }
            }
            (None, Some(b)) => self.push(
                Rule::ConstraintTightened,
                &at,
                format!("`enum` added: only `{}` are accepted", short(b)),
            ),
            (Some(a), None) => self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!("`enum` removed (was `{}`)", short(a)),
            ),
            (a, b) if a != b => self.push(
                Rule::SchemaKeywordChanged,
                &at,
                "`enum` changed to a value that is not a list".into(),
            ),
            _ => {}
        }
    }

    /// Keywords whose presence restricts and whose change is not provably compatible.
    fn presence(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, k: &str) {
        let at = format!("{ptr}/{k}");
        match (o.get(k), n.get(k)) {
            (a, b) if a == b => {}
            (None, Some(b)) => self.push(
                Rule::ConstraintTightened,
                &at,
                format!("`{k}` added: `{}`", short(b)),
            ),
            (Some(a), None) => self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!("`{k}` removed (was `{}`)", short(a)),
            ),
            (Some(a), Some(b)) => self.push(
                Rule::ConstraintTightened,
                &at,
                format!(
                    "`{k}` changed from `{}` to `{}`: values the old one accepted may be rejected",
                    short(a),
                    short(b)
                ),
            ),
            (None, None) => {}
        }
    }

    fn bound(
        &mut self,
        o: &Map<String, Value>,
        n: &Map<String, Value>,
        ptr: &str,
        k: &str,
        lower: bool,
    ) {
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            return;
        }
        let at = format!("{ptr}/{k}");
        let (x, y) = (number(a), number(b));
        let tighter = |old: f64, new: f64| if lower { new > old } else { new < old };
        match (a, b, x, y) {
            (None, Some(b), _, Some(_)) => self.push(
                Rule::ConstraintTightened,
                &at,
                format!("`{k}` added: `{}`", short(b)),
            ),
            (Some(a), None, Some(_), _) => self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!("`{k}` removed (was `{}`)", short(a)),
            ),
            (Some(a), Some(b), Some(x), Some(y)) => {
                let rule = if tighter(x, y) {
                    Rule::ConstraintTightened
                } else {
                    Rule::ConstraintRelaxed
                };
                self.push(
                    rule,
                    &at,
                    format!("`{k}` changed from `{}` to `{}`", short(a), short(b)),
                );
            }
            // Draft-4 boolean `exclusiveMinimum` and other non-numbers.
            _ => self.push(
                Rule::SchemaKeywordChanged,
                &at,
                format!(
                    "`{k}` changed from `{}` to `{}`",
                    a.map(short).unwrap_or_else(|| "(absent)".into()),
                    b.map(short).unwrap_or_else(|| "(absent)".into())
                ),
            ),
        }
    }

    fn multiple_of(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let (a, b) = (o.get("multipleOf"), n.get("multipleOf"));
        if a == b {
            return;
        }
        let at = format!("{ptr}/multipleOf");
        match (number(a), number(b)) {
            (Some(x), Some(y)) if x > 0.0 && (x / y).fract() == 0.0 => self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!(
                    "`multipleOf` changed from `{x}` to `{y}`: every old multiple is a new one"
                ),
            ),
            _ => self.presence(o, n, ptr, "multipleOf"),
        }
    }

    fn unique(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let on = |m: &Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
        let at = format!("{ptr}/uniqueItems");
        match (on(o), on(n)) {
            (false, true) => self.push(
                Rule::ConstraintTightened,
                &at,
                "`uniqueItems` is now true: lists with repeated items are rejected".into(),
            ),
            (true, false) => self.push(
                Rule::ConstraintRelaxed,
                &at,
                "`uniqueItems` is no longer true".into(),
            ),
            _ => {}
        }
    }

    fn properties(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let empty = Map::new();
        let op = o
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let np = n
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let (oreq, nreq) = (required(o), required(n));
        let closed = is_false(n.get("additionalProperties"));
        let removed: Vec<&String> = op.keys().filter(|k| !np.contains_key(*k)).collect();
        let mut added: Vec<&String> = np.keys().filter(|k| !op.contains_key(*k)).collect();
        for name in removed {
            let at = format!("{ptr}/properties/{}", token(name));
            let old_schema = self.resolved(self.old_root, op.get(name));
            let twin = added
                .iter()
                .position(|a| self.resolved(self.new_root, np.get(*a)) == old_schema);
            if let Some(i) = twin {
                let new_name = added.remove(i);
                self.push(
                    Rule::PropertyRenamed,
                    &at,
                    format!("property `{name}` was renamed to `{new_name}` (same schema): calls that pass `{name}` break"),
                );
                continue;
            }
            let effect = if closed {
                "calls that pass it are rejected"
            } else {
                "calls that pass it are accepted but it is ignored"
            };
            self.push(
                Rule::PropertyRemoved,
                &at,
                format!("property `{name}` was removed: {effect}"),
            );
        }
        for name in added {
            let at = format!("{ptr}/properties/{}", token(name));
            if nreq.contains(name) {
                self.push(
                    Rule::RequiredPropertyAdded,
                    &at,
                    format!("required property `{name}` was added: existing calls lack it"),
                );
            } else {
                self.push(
                    Rule::OptionalPropertyAdded,
                    &at,
                    format!("optional property `{name}` was added"),
                );
            }
        }
        for (name, ov) in op {
            if let Some(nv) = np.get(name) {
                self.schema(ov, nv, &format!("{ptr}/properties/{}", token(name)));
            }
        }
        for name in &nreq {
            let newly_declared = np.contains_key(name) && !op.contains_key(name);
            if !oreq.contains(name) && !newly_declared {
                self.push(
                    Rule::PropertyNowRequired,
                    &format!("{ptr}/required"),
                    format!(
                        "property `{name}` is now required: calls that leave it out are rejected"
                    ),
                );
            }
        }
        for name in &oreq {
            let still_declared = np.contains_key(name) || !op.contains_key(name);
            if !nreq.contains(name) && still_declared {
                self.push(
                    Rule::PropertyNowOptional,
                    &format!("{ptr}/required"),
                    format!("property `{name}` is no longer required"),
                );
            }
        }
    }

    /// A property's schema with references followed, for rename detection.
    fn resolved(&self, root: &Value, v: Option<&Value>) -> Option<Value> {
        match shape(root, v?).0 {
            Shape::Any => Some(Value::Bool(true)),
            Shape::Nothing => Some(Value::Bool(false)),
            Shape::Object(mut m) => {
                for k in ANNOTATIONS {
                    m.shift_remove(*k);
                }
                Some(Value::Object(m))
            }
        }
    }

    fn additional(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, k: &str) {
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            return;
        }
        let at = format!("{ptr}/{k}");
        match (is_false(a), is_false(b)) {
            (false, true) if k == "additionalProperties" => self.push(
                Rule::AdditionalPropertiesClosed,
                &at,
                "`additionalProperties` is now `false`: calls with properties not listed are rejected".into(),
            ),
            (true, false) if k == "additionalProperties" => self.push(
                Rule::AdditionalPropertiesOpened,
                &at,
                "`additionalProperties` is no longer `false`: properties not listed are accepted".into(),
            ),
            _ => {
                let any = Value::Bool(true);
                self.schema(a.unwrap_or(&any), b.unwrap_or(&any), &at);
            }
        }
    }

    fn items(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let (a, b) = (o.get("items"), n.get("items"));
        if a == b {
            return;
        }
        match (a, b) {
            (Some(Value::Array(_)), Some(Value::Array(_))) => self.tuple(o, n, ptr, "items"),
            (Some(Value::Array(_)), _) | (_, Some(Value::Array(_))) => self.push(
                Rule::SchemaKeywordChanged,
                &format!("{ptr}/items"),
                "`items` changed between a list of schemas and one schema".into(),
            ),
            _ => {
                let any = Value::Bool(true);
                self.schema(
                    a.unwrap_or(&any),
                    b.unwrap_or(&any),
                    &format!("{ptr}/items"),
                );
            }
        }
    }

    fn tuple(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, k: &str) {
        let empty = Vec::new();
        let a = o.get(k).and_then(Value::as_array).unwrap_or(&empty);
        let b = n.get(k).and_then(Value::as_array).unwrap_or(&empty);
        if a == b {
            return;
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.schema(x, y, &format!("{ptr}/{k}/{i}"));
        }
        if a.len() != b.len() {
            self.push(
                Rule::SchemaKeywordChanged,
                &format!("{ptr}/{k}"),
                format!("`{k}` has {} positions instead of {}", b.len(), a.len()),
            );
        }
    }

    fn alternatives(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, k: &str) {
        let at = format!("{ptr}/{k}");
        let (a, b) = (o.get(k), n.get(k));
        if a == b {
            return;
        }
        let (Some(Value::Array(a)), Some(Value::Array(b))) = (a, b) else {
            match (a, b) {
                (None, Some(_)) => self.push(
                    Rule::ConstraintTightened,
                    &at,
                    format!("`{k}` added: values must match one of its alternatives"),
                ),
                (Some(_), None) => {
                    self.push(Rule::ConstraintRelaxed, &at, format!("`{k}` removed"))
                }
                _ => self.push(Rule::SchemaKeywordChanged, &at, format!("`{k}` changed")),
            }
            return;
        };
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.schema(x, y, &format!("{at}/{i}"));
        }
        if b.len() < a.len() {
            self.push(
                Rule::ConstraintTightened,
                &at,
                format!(
                    "`{k}` lost {} alternative(s): values only they matched are rejected",
                    a.len() - b.len()
                ),
            );
        } else if b.len() > a.len() && k == "anyOf" {
            self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!("`{k}` has {} more alternative(s)", b.len() - a.len()),
            );
        } else if b.len() > a.len() {
            self.push(
                Rule::SchemaKeywordChanged,
                &at,
                format!("`oneOf` has {} more alternative(s): a value that now matches two of them is rejected", b.len() - a.len()),
            );
        }
    }

    fn all_of(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let at = format!("{ptr}/allOf");
        let empty = Vec::new();
        let a = o.get("allOf").and_then(Value::as_array).unwrap_or(&empty);
        let b = n.get("allOf").and_then(Value::as_array).unwrap_or(&empty);
        if a == b {
            return;
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.schema(x, y, &format!("{at}/{i}"));
        }
        if b.len() > a.len() {
            self.push(
                Rule::ConstraintTightened,
                &at,
                format!(
                    "`allOf` has {} more schema(s) every value must match",
                    b.len() - a.len()
                ),
            );
        } else if b.len() < a.len() {
            self.push(
                Rule::ConstraintRelaxed,
                &at,
                format!("`allOf` has {} schema(s) fewer", a.len() - b.len()),
            );
        }
    }

    fn dependent_required(&mut self, o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str) {
        let empty = Map::new();
        let a = o
            .get("dependentRequired")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let b = n
            .get("dependentRequired")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        if a == b {
            return;
        }
        let names = |m: &Map<String, Value>, k: &str| -> Vec<String> {
            m.get(k)
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (x, y) = (names(a, k), names(b, k));
            let at = format!("{ptr}/dependentRequired/{}", token(k));
            let more: Vec<&String> = y.iter().filter(|s| !x.contains(s)).collect();
            let fewer: Vec<&String> = x.iter().filter(|s| !y.contains(s)).collect();
            if !more.is_empty() {
                self.push(
                    Rule::ConstraintTightened,
                    &at,
                    format!(
                        "with `{k}`, `{}` is now required too",
                        more.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("`, `")
                    ),
                );
            }
            if !fewer.is_empty() {
                self.push(
                    Rule::ConstraintRelaxed,
                    &at,
                    format!(
                        "with `{k}`, `{}` is no longer required",
                        fewer
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("`, `")
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(old: Value, new: Value) -> Vec<(&'static str, String)> {
        compare(&old, &new, "schema.json")
            .into_iter()
            .map(|c| (c.rule.as_str(), c.pointer.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn references_are_followed_and_cycles_stop() {
        let old = json!({"properties": {"to": {"$ref": "#/$defs/r"}}, "$defs": {"r": {"type": "array", "maxItems": 50}}});
        let new = json!({"properties": {"to": {"$ref": "#/$defs/r"}}, "$defs": {"r": {"type": "array", "maxItems": 10}}});
        assert_eq!(
            rules(old, new),
            [("constraint-tightened", "/properties/to/maxItems".into())]
        );
        let tree = json!({"properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(rules(tree.clone(), tree).is_empty());
        let mut tree2 = json!({"properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}, "required": []});
        tree2["properties"]["name"] = json!({"type": "string"});
        assert_eq!(
            rules(
                json!({"properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}),
                tree2
            )
            .first()
            .map(|r| r.0),
            Some("optional-property-added")
        );
    }

    #[test]
    fn integer_is_a_number() {
        let r = rules(json!({"type": "number"}), json!({"type": "integer"}));
        assert_eq!(r, [("type-narrowed", "/type".into())]);
        let r = rules(
            json!({"type": "integer"}),
            json!({"type": ["number", "null"]}),
        );
        assert_eq!(r, [("type-widened", "/type".into())]);
    }
}
