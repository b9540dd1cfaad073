//! `--set KEY=VALUE`: changing one value of a scenario without editing its file.
//!
//! An override names a value by its path in the TOML document, dots between keys and a
//! 1-based `[N]` after an array (the same spelling the scenario's error messages use):
//! `seed=7`, `link.forward.loss.p=0.02`, `flow[1].tcp.variant=newreno`,
//! `captures=[]`. The value is read as a TOML value (`0.02`, `true`, `[]`,
//! `{ model = "none" }`, `"text"`); what is not one is taken as a string, so
//! `newreno` and `10 ms` need no quotes.
//!
//! Overrides are applied to the parsed document before it is deserialized
//! ([`apply`]), so a value set here is checked by exactly the rules a value in the file
//! is. Values set here carry spans past the end of the file's text (one per override,
//! see [`Marks`]): an error at such a span, or a broken rule whose key path meets an
//! override's, names the `--set` argument instead of a place in the file; every other
//! error keeps its `FILE:LINE:COLUMN`.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use toml::de::{DeArray, DeTable, DeValue};
use toml::Spanned;

use crate::scenario::Key;

/// One `KEY=VALUE` override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The argument as given, for messages.
    arg: String,
    /// The key path.
    path: Vec<Step>,
    /// The value's text (after the `=`, trimmed).
    value: String,
}

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    /// 0-based (written 1-based).
    Index(usize),
}

impl Override {
    /// Reads `KEY=VALUE`; the error says what is wrong with it.
    pub fn parse(arg: &str) -> Result<Override, String> {
        let bad = |why: &str| format!("--set {arg}: {why}");
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=VALUE, e.g. link.delay=\"20 ms\""))?;
        let key = key.trim();
        let mut path = Vec::new();
        for part in key.split('.') {
            let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(bad(&format!(
                    "{key:?} is not a key path (keys joined by dots, [N] after an array: flow[1].tcp.mss)"
                )));
            }
            path.push(Step::Key(name.to_string()));
            while !rest.is_empty() {
                let index = rest
                    .strip_prefix('[')
                    .and_then(|r| r.split_once(']'))
                    .and_then(|(n, r)| Some((n.parse::<usize>().ok()?, r)));
                match index {
                    Some((0, _)) => return Err(bad(
                        "indices count from 1, as in error messages: flow[1] is the first [[flow]]",
                    )),
                    Some((n, r)) => {
                        path.push(Step::Index(n - 1));
                        rest = r;
                    }
                    None => return Err(bad(&format!("{part:?}: an index is [N], N from 1"))),
                }
            }
        }
        Ok(Override {
            arg: arg.to_string(),
            path,
            value: value.trim().to_string(),
        })
    }

    /// The argument as given (`KEY=VALUE`).
    pub fn arg(&self) -> &str {
        &self.arg
    }

    /// True when the override sets the value at `path` or inside it, or a value that
    /// holds it: a rule broken there may be the override's doing.
    pub(crate) fn meets(&self, path: &[Key]) -> bool {
        !path.is_empty()
            && self
                .path
                .iter()
                .zip(path)
                .all(|(step, key)| match (step, key) {
                    (Step::Key(a), Key::Name(b)) => a == b,
                    (Step::Index(a), Key::Index(b)) => a == b,
                    _ => false,
                })
    }

    /// The value, as TOML or else as a string.
    fn value(&self) -> DeValue<'_> {
        match DeValue::parse(&self.value) {
            Ok(v) => v.into_inner(),
            Err(_) => DeValue::String(Cow::Borrowed(&self.value)),
        }
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "--set {}", self.arg)
    }
}

/// The spans given to the values of overrides: override `i` gets `start + i`, past
/// the end of the text, where no span of the file can be.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Marks {
    start: usize,
}

impl Marks {
    /// Marks for overrides of `text`.
    pub(crate) fn after(text: &str) -> Marks {
        Marks {
            start: text.len() + 1,
        }
    }

    fn span(self, i: usize) -> Range<usize> {
        self.start + i..self.start + i + 1
    }

    /// The override an error at `span` is about, if any.
    pub(crate) fn blamed(
        self,
        overrides: &[Override],
        span: Option<Range<usize>>,
    ) -> Option<&Override> {
        overrides.get(span?.start.checked_sub(self.start)?)
    }
}

/// Applies `overrides`, in order, to the document `root`; a later override of the same
/// key wins. The error names the override that cannot be applied and why.
pub(crate) fn apply<'a>(
    root: &mut DeTable<'a>,
    overrides: &'a [Override],
    marks: Marks,
) -> Result<(), String> {
    for (i, o) in overrides.iter().enumerate() {
        let span = marks.span(i);
        let value = respan(o.value(), &span);
        set(root, &o.path, value, &span).map_err(|why| format!("{o}: {why}"))?;
    }
    Ok(())
}

/// Puts `value` at `path` under `table`, making the tables on the way that are missing.
fn set<'a>(
    table: &mut DeTable<'a>,
    path: &[Step],
    value: Spanned<DeValue<'a>>,
    span: &Range<usize>,
) -> Result<(), String> {
    let Some((Step::Key(key), rest)) = path.split_first() else {
        unreachable!("a key path, and what follows an index, starts with a key")
    };
    if rest.is_empty() {
        match table.get_mut(key.as_str()) {
            Some(old) => *old = value,
            None => {
                table.insert(Spanned::new(span.clone(), Cow::Owned(key.clone())), value);
            }
        }
        return Ok(());
    }
    if !table.contains_key(key.as_str()) {
        if let Step::Index(_) = rest[0] {
            return Err(format!("there is no `{key}` to index"));
        }
        let empty = Spanned::new(span.clone(), DeValue::Table(DeTable::new()));
        table.insert(Spanned::new(span.clone(), Cow::Owned(key.clone())), empty);
    }
    let mut item = table.get_mut(key.as_str()).expect("present or just added");
    let mut rest = rest;
    while let Some((Step::Index(i), after)) = rest.split_first() {
        let array = match item.get_mut() {
            DeValue::Array(array) => array,
            other => return Err(format!("`{key}` is {}, not an array", kind(other))),
        };
        let len = array.len();
        let Some(element) = array.get_mut(*i) else {
            return Err(format!("`{key}` has {len} entries, no [{}]", i + 1));
        };
        if after.is_empty() {
            *element = value;
            return Ok(());
        }
        item = element;
        rest = after;
    }
    match item.get_mut() {
        DeValue::Table(inner) => set(inner, rest, value, span),
        DeValue::Array(_) => Err(format!(
            "`{key}` is an array: index it, as in {key}[1].{}",
            dotted(rest)
        )),
        other => Err(format!("`{key}` is {}, not a table", kind(other))),
    }
}

/// The value with `span` on it and on everything inside it.
fn respan<'a>(value: DeValue<'a>, span: &Range<usize>) -> Spanned<DeValue<'a>> {
    let value = match value {
        DeValue::Table(table) => DeValue::Table(
            table
                .into_iter()
                .map(|(k, v)| {
                    (
                        Spanned::new(span.clone(), k.into_inner()),
                        respan(v.into_inner(), span),
                    )
                })
                .collect(),
        ),
        DeValue::Array(items) => {
            let mut array = DeArray::new();
            for item in items.iter() {
                array.push(respan(item.get_ref().clone(), span));
            }
            DeValue::Array(array)
        }
        scalar => scalar,
    };
    Spanned::new(span.clone(), value)
}

fn kind(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{}]", i + 1)),
        }
    }
    out
}

/// The scenario text with `overrides` applied, as TOML: what the bundle keeps as its
/// scenario.toml, so that it runs again as it ran. With no overrides, `text` itself;
/// otherwise a comment naming the file and the overrides, then the document (the
/// file's comments and key order are not kept). The text must load (it has been
/// checked by [`crate::Scenario::parse_with`]).
pub fn effective_text(name: &str, text: &str, overrides: &[Override]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut root = DeTable::parse(text).map_err(|e| e.to_string())?;
    apply(root.get_mut(), overrides, Marks::after(text))?;
    let table =
        toml::Table::deserialize(toml::de::Deserializer::from(root)).map_err(|e| e.to_string())?;
    let body = toml::to_string(&table).map_err(|e| e.to_string())?;
    let args: Vec<String> = overrides
        .iter()
        .map(|o| format!("{o:?}", o = o.arg))
        .collect();
    Ok(format!(
        "# {name} with --set {}\n# (the file's comments and key order are not kept)\n{body}",
        args.join(" --set ")
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario::{ScenarioError, Vantage};
    use crate::units::Size;
    use crate::Scenario;

    const FILE: &str = r#"seed = 1

[link]
rate = "2 Mbit/s"
delay = "50 ms"

[[flow]]
app = "bulk"
bytes = "5 MB"
"#;

    fn load(text: &str, args: &[&str]) -> Result<Scenario, ScenarioError> {
        let overrides: Vec<Override> = args.iter().map(|a| Override::parse(a).unwrap()).collect();
        Scenario::parse_with(Path::new("s.toml"), text, &overrides)
    }

    fn message(args: &[&str]) -> String {
        let err = load(FILE, args).unwrap_err();
        assert_eq!(err.place, None, "{err}");
        err.to_string()
    }

    fn path(arg: &str) -> Vec<Step> {
        Override::parse(arg).unwrap().path
    }

    #[test]
    fn key_paths_take_dots_and_1_based_indices() {
        use Step::{Index, Key};
        assert_eq!(path("seed=7"), [Key("seed".into())]);
        assert_eq!(
            path("flow[2].tcp.mss=536"),
            [
                Key("flow".into()),
                Index(1),
                Key("tcp".into()),
                Key("mss".into())
            ]
        );
        assert_eq!(path(" link.delay = 20 ms ").len(), 2);
        for bad in [
            "seed",
            "flow[0].bytes=1",
            "flow[x].bytes=1",
            "a..b=1",
            "=1",
            "a b=1",
        ] {
            let err = Override::parse(bad).unwrap_err();
            assert!(err.starts_with(&format!("--set {bad}: ")), "{err}");
        }
    }

    #[test]
    fn values_are_toml_or_else_strings() {
        let is = |arg: &str, want: fn(&DeValue<'_>) -> bool| {
            want(&Override::parse(arg).unwrap().value())
        };
        assert!(is("a=0.02", |v| matches!(v, DeValue::Float(_))));
        assert!(is("a=7", |v| matches!(v, DeValue::Integer(_))));
        assert!(is("a=[]", |v| matches!(v, DeValue::Array(_))));
        assert!(is("a={ model = \"none\" }", |v| matches!(
            v,
            DeValue::Table(_)
        )));
        assert!(is(
            "a=newreno",
            |v| matches!(v, DeValue::String(s) if s == "newreno")
        ));
        assert!(is(
            "a=10 ms",
            |v| matches!(v, DeValue::String(s) if s == "10 ms")
        ));
        assert!(is(
            "a=\"true\"",
            |v| matches!(v, DeValue::String(s) if s == "true")
        ));
    }

    #[test]
    fn overrides_set_values_and_make_missing_tables() {
        let s = load(
            FILE,
            &[
                "seed=7",
                "captures=[\"sender\"]",
                "link.forward.loss.model=bernoulli",
                "link.forward.loss.p=0.02",
                "flow[1].tcp.variant=newreno",
                "flow[1].bytes=1000",
                "seed=8",
            ],
        )
        .unwrap();
        assert_eq!(s.seed, 8, "the last override of a key wins");
        assert_eq!(s.captures(), [Vantage::Sender]);
        let loss = s.link.unwrap().forward.unwrap().loss.unwrap();
        assert!(matches!(loss, crate::scenario::LossSpec::Bernoulli { p } if p == 0.02));
        assert_eq!(
            s.flows[0].tcp.as_ref().unwrap().variant.as_deref(),
            Some("newreno")
        );
        assert_eq!(s.flows[0].bytes, Some(Size(1000)));
    }

    #[test]
    fn a_bad_override_is_named_with_the_rule_it_breaks() {
        let unknown = message(&["link.dealy=5 ms"]);
        assert!(
            unknown.starts_with("s.toml: --set link.dealy=5 ms: unknown field `dealy`"),
            "{unknown}"
        );
        let wrong_type = message(&["link.queue_packets=fifty"]);
        assert!(
            wrong_type.starts_with(
                "s.toml: --set link.queue_packets=fifty: invalid type: string \"fifty\""
            ),
            "{wrong_type}"
        );
        let impossible = message(&["link.loss={ model = \"bernoulli\", p = 1.5 }"]);
        assert!(
            impossible.contains("--set link.loss={ model"),
            "{impossible}"
        );
        assert!(
            impossible.contains(": link.loss: ") && impossible.contains("[0, 1]"),
            "{impossible}"
        );
        let inside = message(&["flow[1].tcp.variant=vegas"]);
        assert!(
            inside.ends_with("--set flow[1].tcp.variant=vegas: flow[1].tcp.variant: unknown variant \"vegas\" (tahoe, reno, newreno or sack)"),
            "{inside}"
        );
        let missing = message(&["link.reverse.loss.model=bernoulli"]);
        assert!(
            missing.contains("--set link.reverse.loss.model=bernoulli: missing field `p`"),
            "{missing}"
        );
    }

    #[test]
    fn an_override_must_fit_the_document() {
        let array = message(&["flow.tcp.variant=reno"]);
        assert!(
            array.ends_with("`flow` is an array: index it, as in flow[1].tcp.variant"),
            "{array}"
        );
        let beyond = message(&["flow[2].bytes=1"]);
        assert!(beyond.ends_with("`flow` has 1 entries, no [2]"), "{beyond}");
        let scalar = message(&["link.rate.unit=x"]);
        assert!(
            scalar.ends_with("`rate` is a string, not a table"),
            "{scalar}"
        );
    }

    #[test]
    fn errors_of_the_file_keep_their_place() {
        let typo = FILE.replace("delay", "dealy");
        let err = load(&typo, &["seed=3", "link.rate=1 Mbit/s"]).unwrap_err();
        assert_eq!(err.place.map(|p| p.0), Some(5), "{err}");
        let zero = FILE.replace("\"5 MB\"", "0");
        let err = load(&zero, &["link.delay=1 ms"]).unwrap_err();
        assert!(
            err.to_string().starts_with("s.toml:9:9: flow[1].bytes:"),
            "{err}"
        );
    }

    #[test]
    fn the_effective_text_loads_as_the_overridden_file() {
        let args = [
            "seed=7",
            "link.forward.loss={ model = \"bernoulli\", p = 0.01 }",
            "flow[1].tcp.mss=536",
        ];
        let overrides: Vec<Override> = args.iter().map(|a| Override::parse(a).unwrap()).collect();
        let text = effective_text("s.toml", FILE, &overrides).unwrap();
        assert!(
            text.starts_with("# s.toml with --set \"seed=7\" --set "),
            "{text}"
        );
        let again = Scenario::parse(Path::new("s.toml"), &text).unwrap();
        let direct = load(FILE, &args).unwrap();
        assert_eq!(format!("{again:?}"), format!("{direct:?}"));
        assert_eq!(effective_text("s.toml", FILE, &[]).unwrap(), FILE);
    }
}
