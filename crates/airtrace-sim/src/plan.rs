//! Sweep plans: a parameter study declared as data (`airtrace sweep PLAN.toml`).
//!
//! A plan names a base scenario, overrides applied to every run (`set`, in the
//! `KEY=VALUE` form of [`crate::overrides`]), the parameters to vary (`[[parameter]]`:
//! a list of values, or a range with a step, a count, a log scale), how they combine
//! (`product` or `zip`), the seeds, what to keep of each run and the reports to draw.
//! docs/sweeps.md is the reference.
//!
//! [`Plan::load`] reads the plan as strictly as a scenario (unknown keys, wrong types
//! and impossible values are `PLAN:LINE:COLUMN: message` errors), expands it into its
//! runs and loads the scenario with every combination of values, so that a value the
//! scenario refuses stops the sweep before any run, naming the plan's line and the
//! scenario's rule. Running is the Python side's business (a process pool or a Dask
//! cluster); [`metrics`] turns one run's summary into the columns of its row.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use airtrace_link::input::{read_text, MAX_SCENARIO_BYTES};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use toml::Spanned;

use crate::overrides::Override;
use crate::scenario::{line_col, Scenario, ScenarioError};
use crate::sim::{DirectionCounters, FlowSummary, LinkSummary, Summary};

/// Columns every row has besides the parameters and metrics; no parameter may take
/// these names.
pub const RESERVED: &[&str] = &[
    "id",
    "seed",
    "error",
    "wall_s",
    "host",
    "airtrace_version",
    "findings",
    "finding_kinds",
    "findings_cost_s",
];

/// The plan file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(default)]
    description: Option<String>,
    scenario: Spanned<PathBuf>,
    #[serde(default)]
    set: Vec<Spanned<String>>,
    #[serde(default)]
    seeds: Option<Spanned<Seeds>>,
    #[serde(default)]
    combine: Option<Spanned<Combine>>,
    #[serde(default, rename = "parameter")]
    parameters: Vec<Spanned<ParamSpec>>,
    #[serde(default)]
    keep: KeepSpec,
    #[serde(default, rename = "report")]
    reports: Vec<Spanned<ReportSpec>>,
}

/// `seeds = [1, 2, 3]` or `seeds = { from = 1, to = 20 }`.
#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "seeds are a list of integers such as [1, 2, 3] or a range { from = 1, to = 20 }"
)]
enum Seeds {
    List(Vec<u64>),
    Range { from: u64, to: u64 },
}

/// How the parameters' values make runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Every combination (the default).
    Product,
    /// The i-th value of every parameter together; they must have as many values.
    Zip,
}

/// A number of a range, kept as written: integer ranges give integers.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(untagged, expecting = "a number such as 0.01 or 10")]
enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    fn f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// Linear or logarithmic spacing of a range with a `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    Log,
}

/// One `[[parameter]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParamSpec {
    key: Spanned<String>,
    #[serde(default)]
    name: Option<Spanned<String>>,
    #[serde(default)]
    values: Option<Vec<Spanned<toml::Value>>>,
    #[serde(default)]
    from: Option<Number>,
    #[serde(default)]
    to: Option<Number>,
    #[serde(default)]
    step: Option<Number>,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    scale: Option<Scale>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    labels: Option<Vec<String>>,
}

/// `[keep]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeepSpec {
    #[serde(default)]
    metrics: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    findings: bool,
    #[serde(default)]
    bundles: bool,
}

/// One `[[report]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportSpec {
    #[serde(default)]
    title: Option<String>,
    x: Spanned<String>,
    y: Spanned<String>,
    #[serde(default)]
    group_by: Option<Spanned<String>>,
}

/// A loaded plan, expanded into its runs (what the Python side gets, as JSON).
#[derive(Debug, Serialize)]
pub struct Plan {
    /// The plan file.
    pub file: PathBuf,
    pub description: Option<String>,
    /// The base scenario, absolute.
    pub scenario: PathBuf,
    pub combine: Combine,
    /// The parameters, in the order of the file.
    pub parameters: Vec<Parameter>,
    /// The metric columns kept of each run, with their types.
    pub metrics: Vec<Column>,
    /// Run `airtrace diagnose` on each run's bundle and keep its findings.
    pub findings: bool,
    /// Keep each run's bundle.
    pub bundles: bool,
    pub reports: Vec<Report>,
    /// Every run: combinations in order, the seeds of each together.
    pub runs: Vec<Run>,
}

/// A varied parameter.
#[derive(Debug, Serialize)]
pub struct Parameter {
    /// Its column.
    pub name: String,
    /// The scenario key it sets.
    pub key: String,
    /// Its column's type (`int64`, `float64`, `bool` or `string`).
    pub column_type: &'static str,
    /// How a range spaced its values, for plots.
    pub scale: Option<Scale>,
}

/// A metric column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    pub name: String,
    pub column_type: &'static str,
}

/// A report: `y` against `x`, one line per value of `group_by`.
#[derive(Debug, Serialize)]
pub struct Report {
    pub title: String,
    pub x: String,
    pub y: String,
    pub group_by: Option<String>,
}

/// One run: the overrides that make it (the plan's `set`, then one per parameter) and
/// its seed.
#[derive(Debug, Serialize)]
pub struct Run {
    pub seed: u64,
    pub set: Vec<String>,
    /// The parameters' column values, by name.
    pub values: Map<String, Json>,
}

/// A parameter expanded: its values, each as an override, a column value and the
/// place in the plan to blame for it.
struct Expanded {
    name: String,
    key: String,
    values: Vec<Value>,
    column_type: &'static str,
    scale: Option<Scale>,
    span: Range<usize>,
}

/// One value of a parameter.
struct Value {
    set: Override,
    column: Json,
    span: Range<usize>,
}

impl Plan {
    /// Reads, expands and checks the plan at `path` (see the [module docs](self)).
    pub fn load(path: &Path) -> Result<Plan, ScenarioError> {
        let text = read_text(path, MAX_SCENARIO_BYTES).map_err(|e| ScenarioError {
            file: path.to_path_buf(),
            place: None,
            message: format!("cannot read the plan: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// [`Plan::load`] on text; `path` names it in errors and anchors the scenario path.
    pub fn parse(path: &Path, text: &str) -> Result<Plan, ScenarioError> {
        let error = |span: Option<Range<usize>>, message: String| {
            ScenarioError {
                file: path.to_path_buf(),
                place: span.map(|s| line_col(text, s.start)),
                message,
            }
            .cut()
        };
        let file: PlanFile =
            toml::from_str(text).map_err(|e| error(e.span(), e.message().trim().to_string()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let scenario = base.join(file.scenario.get_ref());
        let scenario_text = read_text(&scenario, MAX_SCENARIO_BYTES).map_err(|e| {
            error(
                Some(file.scenario.span()),
                format!("cannot read the scenario {}: {e}", scenario.display()),
            )
        })?;
        let mut set = Vec::new();
        for arg in &file.set {
            let o = Override::parse(arg.get_ref()).map_err(|m| error(Some(arg.span()), m))?;
            set.push(o);
        }
        let mut parameters: Vec<Expanded> = Vec::new();
        for spec in &file.parameters {
            let p = expand(spec).map_err(|(span, m)| error(Some(span), m))?;
            if RESERVED.contains(&p.name.as_str()) || parameters.iter().any(|q| q.name == p.name) {
                let why = if p.name == "seed" {
                    "vary the seed with `seeds = [...]`, not a parameter".to_string()
                } else {
                    format!(
                        "the column name {:?} is taken: give this parameter another `name`",
                        p.name
                    )
                };
                return Err(error(Some(p.span.clone()), why));
            }
            parameters.push(p);
        }
        let combine = file
            .combine
            .as_ref()
            .map_or(Combine::Product, |c| *c.get_ref());
        let combinations = combinations(combine, &parameters)
            .map_err(|m| error(file.combine.as_ref().map(|c| c.span()), m))?;
        // Load the scenario with every combination, before any run.
        let mut flows = None;
        let mut scenario_seed = 0;
        let mut runs_set = Vec::with_capacity(combinations.len());
        for combination in &combinations {
            let mut overrides = set.clone();
            for (p, &i) in parameters.iter().zip(combination) {
                overrides.push(p.values[i].set.clone());
            }
            let loaded =
                Scenario::parse_with(&scenario, &scenario_text, &overrides).map_err(|e| {
                    // The place in the plan of the override the scenario blames (its
                    // message starts with it), else of the scenario itself.
                    let blamed = overrides
                        .iter()
                        .position(|o| e.message.starts_with(&format!("{o}: ")));
                    let span = match blamed {
                        Some(k) if k < set.len() => file.set[k].span(),
                        Some(k) => {
                            let p = &parameters[k - set.len()];
                            p.values[combination[k - set.len()]].span.clone()
                        }
                        None => file.scenario.span(),
                    };
                    error(Some(span), e.to_string())
                })?;
            if *flows.get_or_insert(loaded.flows.len()) != loaded.flows.len() {
                return Err(error(
                    None,
                    "the combinations give scenarios with different numbers of flows; a sweep's runs share their columns".into(),
                ));
            }
            scenario_seed = loaded.seed;
            runs_set.push(overrides.iter().map(|o| o.arg().to_string()).collect());
        }
        distinct(&runs_set, &parameters)
            .map_err(|(span, m)| error(span.or(file.combine.as_ref().map(|c| c.span())), m))?;
        let seeds = match &file.seeds {
            None => vec![scenario_seed],
            Some(s) => seeds(s.get_ref()).map_err(|m| error(Some(s.span()), m))?,
        };
        let metrics = kept_metrics(file.keep.metrics.as_deref(), flows.unwrap_or(1))
            .map_err(|(span, m)| error(Some(span), m))?;
        let reports = file
            .reports
            .iter()
            .map(|r| report(r.get_ref(), &parameters, &metrics))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|(span, m)| error(Some(span), m))?;
        let mut runs = Vec::with_capacity(combinations.len() * seeds.len());
        for (combination, set) in combinations.iter().zip(runs_set) {
            let values: Map<String, Json> = parameters
                .iter()
                .zip(combination)
                .map(|(p, &i)| (p.name.clone(), p.values[i].column.clone()))
                .collect();
            for &seed in &seeds {
                runs.push(Run {
                    seed,
                    set: set.clone(),
                    values: values.clone(),
                });
            }
        }
        Ok(Plan {
            file: path.to_path_buf(),
            description: file.description,
            scenario,
            combine,
            parameters: parameters
                .into_iter()
                .map(|p| Parameter {
                    name: p.name,
                    key: p.key,
                    column_type: p.column_type,
                    scale: p.scale,
                })
                .collect(),
            metrics,
            findings: file.keep.findings,
            bundles: file.keep.bundles,
            reports,
            runs,
        })
    }
}

/// Refuses combinations that would make the same runs (the overrides of each are in
/// `runs_set`), blaming a parameter that repeats a value when there is one.
fn distinct(
    runs_set: &[Vec<String>],
    parameters: &[Expanded],
) -> Result<(), (Option<Range<usize>>, String)> {
    if runs_set.iter().collect::<BTreeSet<_>>().len() == runs_set.len() {
        return Ok(());
    }
    let repeats = parameters.iter().find(|p| {
        let values: BTreeSet<&str> = p.values.iter().map(|v| v.set.arg()).collect();
        values.len() != p.values.len()
    });
    Err((
        repeats.map(|p| p.span.clone()),
        "a value is listed twice: two combinations would be the same runs".into(),
    ))
}

/// The metric columns `[keep] metrics` names (all of them when it names none) of a
/// scenario with `flows` flows.
fn kept_metrics(
    names: Option<&[Spanned<String>]>,
    flows: usize,
) -> Result<Vec<Column>, (Range<usize>, String)> {
    let all = metric_columns(flows);
    let Some(names) = names else { return Ok(all) };
    names
        .iter()
        .map(|name| {
            all.iter()
                .find(|c| c.name == *name.get_ref())
                .cloned()
                .ok_or_else(|| {
                    let known: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
                    let why = format!(
                        "unknown metric {:?}; the metrics of this scenario are {}",
                        name.get_ref(),
                        known.join(", ")
                    );
                    (name.span(), why)
                })
        })
        .collect()
}

/// A parameter's values, or the rule its spec breaks (and where).
fn expand(spec: &Spanned<ParamSpec>) -> Result<Expanded, (Range<usize>, String)> {
    let s = spec.get_ref();
    let at = spec.span();
    let bad = |m: &str| (at.clone(), m.to_string());
    let range = [
        s.from.is_some(),
        s.to.is_some(),
        s.step.is_some(),
        s.count.is_some(),
        s.scale.is_some(),
    ];
    let raw: Vec<(toml::Value, Range<usize>)> = match &s.values {
        Some(_) if range.contains(&true) => {
            return Err(bad(
                "give `values` or a range (`from`, `to`, `step` or `count`), not both",
            ))
        }
        Some(list) if list.is_empty() => return Err(bad("`values` is empty")),
        Some(list) => list
            .iter()
            .map(|v| (v.get_ref().clone(), v.span()))
            .collect(),
        None => range_values(s)
            .map_err(|m| (at.clone(), m))?
            .into_iter()
            .map(|v| (v, at.clone()))
            .collect(),
    };
    let key = s.key.get_ref();
    let mut values = Vec::with_capacity(raw.len());
    for (v, span) in &raw {
        let text = match (&s.unit, v) {
            (None, v) => v.to_string(),
            (Some(unit), toml::Value::Integer(_) | toml::Value::Float(_)) => {
                toml::Value::String(format!("{v} {unit}")).to_string()
            }
            (Some(_), _) => {
                return Err((
                    span.clone(),
                    "a parameter with a `unit` takes numbers".into(),
                ))
            }
        };
        let set = Override::parse(&format!("{key}={text}")).map_err(|m| (s.key.span(), m))?;
        values.push(Value {
            set,
            column: column_value(v),
            span: span.clone(),
        });
    }
    let mut column_type = column_type(raw.iter().map(|(v, _)| v));
    if column_type == "string" {
        for (value, (v, _)) in values.iter_mut().zip(&raw) {
            if !value.column.is_string() {
                value.column = Json::String(v.to_string());
            }
        }
    }
    if let Some(labels) = &s.labels {
        if labels.len() != values.len() {
            return Err(bad(&format!(
                "{} labels for {} values: give one per value",
                labels.len(),
                values.len()
            )));
        }
        for (value, label) in values.iter_mut().zip(labels) {
            value.column = Json::String(label.clone());
        }
        column_type = "string";
    }
    Ok(Expanded {
        name: s.name.as_ref().unwrap_or(&s.key).get_ref().clone(),
        key: key.clone(),
        values,
        column_type,
        scale: s.values.is_none().then(|| s.scale.unwrap_or(Scale::Linear)),
        span: at,
    })
}

/// The values of a `from`/`to` range with a `step` or a `count`.
fn range_values(s: &ParamSpec) -> Result<Vec<toml::Value>, String> {
    let (Some(from), Some(to)) = (s.from, s.to) else {
        return Err("a parameter needs `values`, or `from` and `to` with `step` or `count`".into());
    };
    let (a, b) = (from.f64(), to.f64());
    if a > b {
        return Err("`from` must not be above `to`".into());
    }
    let ints = matches!((from, to), (Number::Int(_), Number::Int(_)));
    let floats: Vec<f64> = match (s.step, s.count, s.scale) {
        (Some(_), Some(_), _) => return Err("give `step` or `count`, not both".into()),
        (Some(_), None, Some(Scale::Log)) => {
            return Err("a log scale takes a `count`, not a `step`".into())
        }
        (Some(step), None, _) => {
            let d = step.f64();
            if d.is_nan() || d <= 0.0 {
                return Err("`step` must be above 0".into());
            }
            let n = ((b - a) / d + 1e-9).floor() as usize + 1;
            if n > 1_000_000 {
                return Err(format!("{n} values: too many"));
            }
            let ints = ints && matches!(step, Number::Int(_));
            return Ok((0..n).map(|i| number(a + i as f64 * d, ints)).collect());
        }
        (None, Some(0), _) => return Err("`count` must be at least 1".into()),
        (None, Some(1), _) => vec![a],
        (None, Some(n), Some(Scale::Log)) => {
            if a <= 0.0 {
                return Err("a log scale needs `from` above 0".into());
            }
            let ratio = (b / a).ln() / f64::from(n - 1);
            (0..n)
                .map(|i| {
                    if i == n - 1 {
                        b
                    } else {
                        a * (ratio * f64::from(i)).exp()
                    }
                })
                .collect()
        }
        (None, Some(n), _) => {
            let d = (b - a) / f64::from(n - 1);
            (0..n)
                .map(|i| if i == n - 1 { b } else { a + d * f64::from(i) })
                .collect()
        }
        (None, None, _) => return Err("a range needs a `step` or a `count`".into()),
    };
    let exact = ints && floats.iter().all(|v| v.fract() == 0.0);
    Ok(floats.into_iter().map(|v| number(v, exact)).collect())
}

/// `v` as a TOML integer (when `int`) or as a float rounded to 12 significant digits
/// (so that 0.1 + 0.2 is written 0.3).
fn number(v: f64, int: bool) -> toml::Value {
    if int {
        toml::Value::Integer(v.round() as i64)
    } else {
        toml::Value::Float(format!("{v:.11e}").parse().unwrap_or(v))
    }
}

/// The column type that holds all of `values`.
fn column_type<'a>(mut values: impl Iterator<Item = &'a toml::Value> + Clone) -> &'static str {
    if values.clone().all(|v| v.is_integer()) {
        "int64"
    } else if values.clone().all(|v| v.is_integer() || v.is_float()) {
        "float64"
    } else if values.all(|v| v.is_bool()) {
        "bool"
    } else {
        "string"
    }
}

/// A value as its column holds it: numbers and booleans as they are, strings as
/// themselves, arrays and tables as their TOML text (and so is every value of a column
/// of mixed types, see [`expand`]).
fn column_value(v: &toml::Value) -> Json {
    match v {
        toml::Value::Integer(i) => Json::from(*i),
        toml::Value::Float(f) => Json::from(*f),
        toml::Value::Boolean(b) => Json::from(*b),
        toml::Value::String(s) => Json::from(s.clone()),
        other => Json::from(other.to_string()),
    }
}

/// The combinations, as indices into each parameter's values.
fn combinations(combine: Combine, parameters: &[Expanded]) -> Result<Vec<Vec<usize>>, String> {
    let sizes: Vec<usize> = parameters.iter().map(|p| p.values.len()).collect();
    match combine {
        Combine::Zip => {
            let n = sizes.first().copied().unwrap_or(1);
            if let Some(p) = parameters.iter().find(|p| p.values.len() != n) {
                return Err(format!(
                    "zip needs as many values in every parameter: {} has {}, {} has {n}",
                    p.name,
                    p.values.len(),
                    parameters[0].name
                ));
            }
            Ok((0..n).map(|i| vec![i; sizes.len()]).collect())
        }
        Combine::Product => {
            let mut out = vec![Vec::new()];
            for n in sizes {
                out = out
                    .into_iter()
                    .flat_map(|c: Vec<usize>| {
                        (0..n).map(move |i| {
                            let mut c = c.clone();
                            c.push(i);
                            c
                        })
                    })
                    .collect();
            }
            Ok(out)
        }
    }
}

fn seeds(seeds: &Seeds) -> Result<Vec<u64>, String> {
    let list = match seeds {
        Seeds::List(list) => list.clone(),
        Seeds::Range { from, to } if from <= to => (*from..=*to).collect(),
        Seeds::Range { .. } => return Err("`from` must not be above `to`".into()),
    };
    if list.is_empty() {
        return Err("no seeds".into());
    }
    if list.iter().collect::<BTreeSet<_>>().len() != list.len() {
        return Err("a seed is listed twice".into());
    }
    Ok(list)
}

fn report(
    spec: &ReportSpec,
    parameters: &[Expanded],
    metrics: &[Column],
) -> Result<Report, (Range<usize>, String)> {
    let is_parameter = |n: &str| n == "seed" || parameters.iter().any(|p| p.name == n);
    let is_metric = |n: &str| metrics.iter().any(|c| c.name == n);
    let x = spec.x.get_ref();
    if !is_parameter(x) && !is_metric(x) {
        return Err((
            spec.x.span(),
            format!("x = {x:?} is neither a parameter, `seed` nor a kept metric"),
        ));
    }
    let y = spec.y.get_ref();
    if !is_metric(y) {
        return Err((spec.y.span(), format!("y = {y:?} is not a kept metric")));
    }
    if let Some(g) = &spec.group_by {
        if !is_parameter(g.get_ref()) {
            return Err((
                g.span(),
                format!(
                    "group_by = {:?} is not a parameter (or `seed`)",
                    g.get_ref()
                ),
            ));
        }
    }
    let group_by = spec.group_by.as_ref().map(|g| g.get_ref().clone());
    Ok(Report {
        title: spec.title.clone().unwrap_or_else(|| match &group_by {
            Some(g) => format!("{y} against {x}, by {g}"),
            None => format!("{y} against {x}"),
        }),
        x: x.clone(),
        y: y.clone(),
        group_by,
    })
}

/// The metric columns of a run's row, from its summary: `run_end_s` and `events`; the
/// link counters as `forward_*` and `reverse_*`; each flow's numbers, named as in
/// summary.json when the scenario has one flow, `flow<N>_*` when it has several.
pub fn metrics(summary: &Summary) -> Map<String, Json> {
    let mut out = Map::new();
    out.insert("run_end_s".into(), Json::from(summary.end_s));
    out.insert("events".into(), Json::from(summary.events));
    let mut put = |prefix: String, value: Json| {
        for (k, v) in value.as_object().into_iter().flatten() {
            // Numbers and flags are columns; names and nested tables (Split-TCP's
            // zones) are not.
            if !v.is_string() && !v.is_object() {
                out.insert(format!("{prefix}{k}"), v.clone());
            }
        }
    };
    if let Some(link) = &summary.link {
        for (dir, counters) in [("forward", &link.forward), ("reverse", &link.reverse)] {
            put(
                format!("{dir}_"),
                serde_json::to_value(counters).unwrap_or_default(),
            );
        }
    }
    let one = summary.flows.len() == 1;
    for (i, flow) in summary.flows.iter().enumerate() {
        let prefix = if one {
            String::new()
        } else {
            format!("flow{}_", i + 1)
        };
        put(prefix, serde_json::to_value(flow).unwrap_or_default());
    }
    out
}

/// The metric columns of a scenario with `flows` flows, and their types.
fn metric_columns(flows: usize) -> Vec<Column> {
    let flow = FlowSummary {
        name: String::new(),
        app: "",
        protocol: "",
        start_s: 0.0,
        end_s: Some(0.0),
        finished: false,
        bytes_delivered: 0,
        goodput_bps: 0.0,
        retransmissions: 0,
        timeouts: 0,
        fast_retransmits: 0,
        ecn_reductions: 0,
        idle_s: 0.0,
        packets_sent: 0,
        packets_returned: 0,
        elfn_probes: None,
        split: None,
    };
    let template = Summary {
        scenario: String::new(),
        seed: 0,
        end_s: 0.0,
        events: 0,
        link: Some(LinkSummary {
            forward: DirectionCounters::default(),
            reverse: DirectionCounters::default(),
        }),
        network: None,
        flows: vec![flow; flows],
    };
    metrics(&template)
        .into_iter()
        .map(|(name, v)| Column {
            name,
            column_type: match v {
                Json::Bool(_) => "bool",
                Json::Number(n) if n.is_f64() => "float64",
                _ => "int64",
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan beside the crate's manifest (the tests' working directory), over
    /// scenarios/clean.toml.
    fn parse(body: &str) -> Result<Plan, ScenarioError> {
        let text = format!("scenario = \"../../scenarios/clean.toml\"\n{body}");
        Plan::parse(Path::new("p.toml"), &text)
    }

    fn refused(body: &str) -> String {
        parse(body).unwrap_err().to_string()
    }

    #[test]
    fn ranges_lists_and_seeds_expand_into_runs() {
        let plan = parse(
            r#"set = ["captures=[]", "link.forward.loss.model=bernoulli"]
seeds = { from = 1, to = 3 }
[[parameter]]
key = "link.forward.loss.p"
name = "p"
from = 0.001
to = 0.1
count = 3
scale = "log"
[[parameter]]
key = "link.delay"
from = 10
to = 50
step = 20
unit = "ms"
[[parameter]]
key = "flow[1].tcp.variant"
values = ["reno", "newreno"]
"#,
        )
        .unwrap();
        assert_eq!(plan.runs.len(), 3 * 3 * 2 * 3);
        let first = &plan.runs[0];
        assert_eq!(first.seed, 1);
        assert_eq!(
            first.set,
            [
                "captures=[]",
                "link.forward.loss.model=bernoulli",
                "link.forward.loss.p=0.001",
                "link.delay=\"10 ms\"",
                "flow[1].tcp.variant=\"reno\""
            ]
        );
        let distinct = |name: &str| -> Vec<Json> {
            let mut seen: Vec<Json> = Vec::new();
            for r in &plan.runs {
                if !seen.contains(&r.values[name]) {
                    seen.push(r.values[name].clone());
                }
            }
            seen
        };
        assert_eq!(
            distinct("p"),
            [Json::from(0.001), Json::from(0.01), Json::from(0.1)]
        );
        assert_eq!(
            distinct("link.delay"),
            [Json::from(10), Json::from(30), Json::from(50)]
        );
        assert_eq!(
            distinct("flow[1].tcp.variant"),
            [Json::from("reno"), Json::from("newreno")]
        );
        assert_eq!(plan.runs.last().unwrap().set[3], "link.delay=\"50 ms\"");
        let kinds: Vec<(&str, &str)> = plan
            .parameters
            .iter()
            .map(|p| (p.name.as_str(), p.column_type))
            .collect();
        assert_eq!(
            kinds,
            [
                ("p", "float64"),
                ("link.delay", "int64"),
                ("flow[1].tcp.variant", "string")
            ]
        );
        assert_eq!(plan.parameters[0].scale, Some(Scale::Log));
        assert!(plan
            .metrics
            .iter()
            .any(|c| c.name == "goodput_bps" && c.column_type == "float64"));
        assert!(plan
            .metrics
            .iter()
            .any(|c| c.name == "forward_lost" && c.column_type == "int64"));
    }

    #[test]
    fn a_value_the_scenario_refuses_is_named_where_the_plan_gives_it() {
        let unknown = refused("[[parameter]]\nkey = \"link.dealy\"\nvalues = [\"1 ms\"]\n");
        assert!(unknown.starts_with("p.toml:4:11: "), "{unknown}");
        assert!(
            unknown.contains("clean.toml: --set link.dealy=\"1 ms\": unknown field `dealy`"),
            "{unknown}"
        );
        let wrong_type =
            refused("[[parameter]]\nkey = \"link.queue_packets\"\nvalues = [10, \"fifty\"]\n");
        assert!(wrong_type.starts_with("p.toml:4:15: "), "{wrong_type}");
        assert!(
            wrong_type.contains("invalid type: string \"fifty\""),
            "{wrong_type}"
        );
        let impossible = refused(
            "set = [\"link.forward.loss.model=bernoulli\"]\n[[parameter]]\nkey = \"link.forward.loss.p\"\nvalues = [0.01,\n  1.5]\n",
        );
        assert!(impossible.starts_with("p.toml:6:3: "), "{impossible}");
        assert!(
            impossible.contains("--set link.forward.loss.p=1.5: link.forward.loss: "),
            "{impossible}"
        );
        let in_set = refused("set = [\"captures=[]\",\n  \"link.mtu=20\"]\n");
        assert!(in_set.starts_with("p.toml:3:3: "), "{in_set}");
        assert!(in_set.contains("RFC 791"), "{in_set}");
        let range = refused("[[parameter]]\nkey = \"link.mtu\"\nfrom = 20\nto = 1500\ncount = 3\n");
        assert!(range.starts_with("p.toml:2:1: "), "{range}");
    }

    #[test]
    fn the_plan_itself_is_read_strictly() {
        let typo = refused("seed = [1]\n");
        assert!(
            typo.starts_with("p.toml:2:1: unknown field `seed`"),
            "{typo}"
        );
        let zip = refused(
            "combine = \"zip\"\n[[parameter]]\nkey = \"seed\"\nname = \"s\"\nvalues = [1, 2]\n[[parameter]]\nkey = \"link.mtu\"\nvalues = [1500]\n",
        );
        assert!(
            zip.starts_with("p.toml:2:11: zip needs as many values"),
            "{zip}"
        );
        for (body, rule) in [
            (
                "[[parameter]]\nkey = \"link.mtu\"\nfrom = 1\nto = 2\n",
                "needs a `step` or a `count`",
            ),
            (
                "[[parameter]]\nkey = \"link.mtu\"\nfrom = 100\nto = 200\nstep = 0\n",
                "`step` must be above 0",
            ),
            (
                "[[parameter]]\nkey = \"link.mtu\"\nvalues = [100]\nstep = 1\n",
                "not both",
            ),
            (
                "[[parameter]]\nkey = \"link.mtu\"\nvalues = [100, 100]\n",
                "listed twice",
            ),
            (
                "[[parameter]]\nkey = \"seed\"\nvalues = [1]\n",
                "seeds = [...]",
            ),
            (
                "[[parameter]]\nkey = \"flow.bytes\"\nvalues = [1]\n",
                "`flow` is an array: index it",
            ),
            (
                "[[parameter]]\nkey = \"link..mtu\"\nvalues = [1]\n",
                "is not a key path",
            ),
            (
                "[[parameter]]\nkey = \"link.delay\"\nvalues = [\"a\"]\nunit = \"ms\"\n",
                "takes numbers",
            ),
            ("seeds = []\n", "no seeds"),
            (
                "[keep]\nmetrics = [\"goodput\"]\n",
                "unknown metric \"goodput\"; the metrics of this scenario are bytes_delivered, ",
            ),
            (
                "[[report]]\nx = \"seed\"\ny = \"goodput\"\n",
                "y = \"goodput\" is not a kept metric",
            ),
        ] {
            let err = refused(body);
            assert!(
                err.starts_with("p.toml:") && err.contains(rule),
                "{body}: {err}"
            );
        }
    }

    #[test]
    fn zip_pairs_values_and_may_repeat_one() {
        let plan = parse(
            "combine = \"zip\"\n[[parameter]]\nkey = \"link.delay\"\nvalues = [\"1 ms\", \"2 ms\"]\n[[parameter]]\nkey = \"duration\"\nvalues = [\"10 s\", \"10 s\"]\n",
        )
        .unwrap();
        assert_eq!(plan.runs.len(), 2);
        assert_eq!(
            plan.runs[1].set,
            ["link.delay=\"2 ms\"", "duration=\"10 s\""]
        );
        assert_eq!(plan.runs[0].seed, 1, "the scenario's seed");
    }

    #[test]
    fn metrics_name_flow_columns_by_number_when_there_are_several() {
        let one: Vec<String> = metric_columns(1).into_iter().map(|c| c.name).collect();
        assert!(one.contains(&"goodput_bps".to_string()) && one.contains(&"run_end_s".to_string()));
        assert!(!one.iter().any(|n| n == "name" || n == "app"));
        let two: Vec<String> = metric_columns(2).into_iter().map(|c| c.name).collect();
        assert!(
            two.contains(&"flow2_timeouts".to_string()) && !two.contains(&"timeouts".to_string())
        );
    }
}
