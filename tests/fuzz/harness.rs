//! A mutation fuzzer on stable Rust for the input edge of schedsim: the YAML/JSON loader (and,
//! for inputs that still load, the whole scenario load and simulation), the quantity parser,
//! the strategic-merge engine, DRA's CEL device selectors (compiled or refused, and evaluated on
//! a device within the runtime budget), and object metadata (names, namespaces, labels,
//! annotations and selector values of random Unicode, which must load or be refused with a
//! positioned error). Seeds are the bundled scenarios, fixtures and test data; mutations are
//! chosen with a seeded RNG, so a run is reproducible from its seed. A panic in
//! any target is caught, counted and its input kept.
//!
//! Run it long with `cargo run --release --example fuzz -- [INPUTS] [SEED]`; `cargo test --test
//! fuzz` runs a short bounded pass.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::Value;

use schedsim::model::quantity::Quantity;
use schedsim::resolve::smp::{Schema, strategic_merge};

/// What a run did.
#[derive(Debug, Default)]
pub struct Stats {
    pub inputs: u64,
    pub loader: u64,
    pub full_loads: u64,
    pub quantities: u64,
    pub merges: u64,
    /// CEL device selectors compiled, and of those evaluated.
    pub selectors: u64,
    /// Object metadata inputs, loaded and simulated.
    pub metadata: u64,
    pub panics: u64,
    /// The first panicking inputs (target, input, message).
    pub crashes: Vec<(String, String, String)>,
    /// The slowest input and its time.
    pub slowest: (Duration, String),
}

/// Seed texts: every YAML and JSON file under the project's scenarios, fixtures and test
/// data, up to 256 KiB each.
pub fn seeds() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ["scenarios", "fixtures", "tests/data"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                && e.metadata().is_ok_and(|m| m.len() <= 256 << 10)
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push((p, text));
            }
        }
    }
    out.sort();
    out
}

const YAML_CHARS: &[u8] = b":-[]{}&*!|>'\"#%@,?\n \t\\0123456789.eEiKMGTPm~<=";
const EXTREME_NUMBERS: &[&str] = &[
    "99999999999999999999",
    "-1",
    "1e400",
    "0x1F",
    ".inf",
    "NaN",
    "-9223372036854775808",
    "18446744073709551616",
    "0.0000000000000000001",
    "1Ei",
    "8Ei",
    "1e19",
    "4294967296",
    "''",
    "null",
    "~",
];

fn mutate_text(rng: &mut ChaCha8Rng, text: &str, other: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let rounds = rng.random_range(1..=4);
    for _ in 0..rounds {
        let len = bytes.len().max(1);
        let at = rng.random_range(0..len).min(bytes.len());
        match rng.random_range(0..8) {
            0 => {
                if at < bytes.len() {
                    bytes[at] = YAML_CHARS[rng.random_range(0..YAML_CHARS.len())];
                }
            }
            1 => bytes.insert(at, YAML_CHARS[rng.random_range(0..YAML_CHARS.len())]),
            2 => {
                let end = (at + rng.random_range(1..40)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                // Duplicate the line around `at`.
                let (s, e) = line_at(&bytes, at);
                let line = bytes[s..e].to_vec();
                bytes.splice(s..s, line);
            }
            4 => {
                // A line of another seed in place of this one.
                let lines: Vec<&str> = other.lines().collect();
                if !lines.is_empty() {
                    let (s, e) = line_at(&bytes, at);
                    let l = lines[rng.random_range(0..lines.len())];
                    bytes.splice(s..e, format!("{l}\n").into_bytes());
                }
            }
            5 => {
                // An extreme number in place of the next digit run.
                if let Some(d) = bytes[at..].iter().position(u8::is_ascii_digit) {
                    let s = at + d;
                    let e = s + bytes[s..].iter().take_while(|b| b.is_ascii_digit()).count();
                    let n = EXTREME_NUMBERS[rng.random_range(0..EXTREME_NUMBERS.len())];
                    bytes.splice(s..e, n.bytes());
                }
            }
            6 => {
                // Indent or dedent a line.
                let (s, _) = line_at(&bytes, at);
                if rng.random_bool(0.5) {
                    bytes.splice(s..s, *b"  ");
                } else if bytes[s..].starts_with(b"  ") {
                    bytes.drain(s..s + 2);
                }
            }
            _ => {
                // An anchor or an alias at a value position.
                let token: &[u8] = if rng.random_bool(0.5) { b"&x " } else { b"*x " };
                if let Some(c) = bytes[at..].windows(2).position(|w| w == b": ") {
                    let p = at + c + 2;
                    bytes.splice(p..p, token.iter().copied());
                }
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn line_at(bytes: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(bytes.len());
    let s = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let e = bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| at + p + 1);
    (s, e)
}

const QUANTITY_CHARS: &[u8] = b"0123456789.+-eEinumkKMGTP ";
const QUANTITIES: &[&str] = &[
    "100m",
    "1.5Gi",
    "8Ei",
    "1e19",
    "-0.5",
    ".5",
    "5.",
    "1e-3",
    "0.1m",
    "1Ei",
    "16Ki",
    "2k",
    "9223372036854775807",
    "9223372036854775808",
    "1E3",
    "1e+3",
    "3Mi",
    "0",
    "+1",
    "123456789P",
];

fn quantity_input(rng: &mut ChaCha8Rng) -> String {
    let mut s: Vec<u8> = QUANTITIES[rng.random_range(0..QUANTITIES.len())]
        .bytes()
        .collect();
    for _ in 0..rng.random_range(0..4) {
        let c = QUANTITY_CHARS[rng.random_range(0..QUANTITY_CHARS.len())];
        match rng.random_range(0..3) {
            0 if !s.is_empty() => {
                let at = rng.random_range(0..s.len());
                s[at] = c;
            }
            1 => {
                let at = rng.random_range(0..=s.len());
                s.insert(at, c);
            }
            _ if !s.is_empty() => {
                s.remove(rng.random_range(0..s.len()));
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// Pod templates from the seeds: every object with a `containers` list, as JSON.
fn pod_specs(seeds: &[(PathBuf, String)]) -> Vec<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                if m.get("containers").is_some_and(Value::is_array) {
                    out.push(v.clone());
                }
                m.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (path, text) in seeds {
        if let Ok(docs) = schedsim::yaml::parse_documents(text.clone(), path) {
            docs.iter().for_each(|d| walk(&d.value, &mut out));
        }
    }
    out
}

const DIRECTIVES: &[&str] = &[
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$setElementOrder/volumes",
    "$deleteFromPrimitiveList/args",
    "$deleteFromPrimitiveList/finalizers",
];

/// A structural mutation of a JSON value: directives, deletions, type changes, nulls.
fn mutate_value(rng: &mut ChaCha8Rng, v: &mut Value, depth: u32) {
    match v {
        Value::Object(m) if depth < 8 => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if rng.random_bool(0.3) {
                    mutate_value(rng, m.get_mut(&k).unwrap(), depth + 1);
                }
            }
            match rng.random_range(0..10) {
                0 => {
                    let d = DIRECTIVES[rng.random_range(0..DIRECTIVES.len())];
                    let value = match rng.random_range(0..4) {
                        0 => Value::from("delete"),
                        1 => Value::from("replace"),
                        2 => Value::from(vec![Value::from("main"), Value::Null]),
                        _ => Value::from(vec![serde_json::json!({"name": "main"})]),
                    };
                    m.insert(d.into(), value);
                }
                1 if !m.is_empty() => {
                    let k = m.keys().nth(rng.random_range(0..m.len())).unwrap().clone();
                    m.insert(k, Value::Null);
                }
                2 if !m.is_empty() => {
                    let k = m.keys().nth(rng.random_range(0..m.len())).unwrap().clone();
                    m.insert(k, Value::from(rng.random_range(-3..3)));
                }
                _ => {}
            }
        }
        Value::Array(a) if depth < 8 => {
            for item in a.iter_mut() {
                if rng.random_bool(0.3) {
                    mutate_value(rng, item, depth + 1);
                }
            }
            if rng.random_bool(0.2) {
                a.push(serde_json::json!({"$patch": "delete", "name": "main"}));
            }
            if !a.is_empty() && rng.random_bool(0.2) {
                let i = rng.random_range(0..a.len());
                let dup = a[i].clone();
                a.push(dup);
            }
        }
        _ if rng.random_bool(0.1) => *v = Value::from("x"),
        _ => {}
    }
}

const SCHEMAS: [Schema; 5] = [
    Schema::PodTemplateSpec,
    Schema::ObjectMeta,
    Schema::PodSpec,
    Schema::Container,
    Schema::Volume,
];

/// Limits for fuzzing: a mutated digit turns `count: 4` into `count: 400000`; simulating that
/// proves nothing the limit tests do not, and would make one input take minutes.
const FUZZ_LIMITS: [(&str, &str); 4] = [
    ("SCHEDSIM_MAX_NODES", "2000"),
    ("SCHEDSIM_MAX_PODS", "5000"),
    ("SCHEDSIM_MAX_ALIAS_EXPANSION", "100000"),
    ("SCHEDSIM_MAX_FILE_BYTES", "10000000"),
];

/// Runs `inputs` inputs from `seed`; `progress` is called every 10,000.
pub fn run(inputs: u64, seed: u64, mut progress: impl FnMut(&Stats)) -> Stats {
    for (name, value) in FUZZ_LIMITS {
        // SAFETY: set before this process starts any thread of its own; the test harness's
        // other tests do not read these variables.
        unsafe { std::env::set_var(name, value) };
    }
    let seeds = seeds();
    assert!(!seeds.is_empty(), "no seed files");
    let specs = pod_specs(&seeds);
    let selectors = selector_seeds(&seeds);
    let scratch = std::env::temp_dir().join(format!("schedsim-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stats = Stats::default();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..inputs {
        let target = rng.random_range(0..12);
        let started = Instant::now();
        let (name, input, result) = match target {
            0..6 => {
                stats.loader += 1;
                let (path, text) = &seeds[rng.random_range(0..seeds.len())];
                let (_, other) = &seeds[rng.random_range(0..seeds.len())];
                let input = mutate_text(&mut rng, text, other);
                let full = rng.random_range(0..50) == 0;
                stats.full_loads += u64::from(full);
                let file = scratch.join(format!("input-{i}.yaml"));
                let result = catch_unwind(AssertUnwindSafe(|| {
                    let parsed = schedsim::yaml::parse_documents(input.clone(), path);
                    if full && parsed.is_ok() {
                        std::fs::write(&file, &input).unwrap();
                        let loaded = schedsim::load::load_files(
                            std::slice::from_ref(&file),
                            &Default::default(),
                        );
                        for s in &loaded.scenarios {
                            let _ = schedsim::simulate(s);
                            explain_every_pod(s);
                        }
                        let _ = std::fs::remove_file(&file);
                    }
                }));
                ("loader", input, result)
            }
            6..8 => {
                stats.quantities += 1;
                let input = quantity_input(&mut rng);
                let result = catch_unwind(AssertUnwindSafe(|| {
                    if let Ok(q) = input.parse::<Quantity>() {
                        let _ = (q.value(), q.milli_value(), q.is_negative());
                    }
                }));
                ("quantity", input, result)
            }
            10 => {
                stats.selectors += 1;
                let input = selector_input(&mut rng, &selectors);
                let result = catch_unwind(AssertUnwindSafe(|| {
                    check_selector(&input);
                    // The same text as `explain -l` takes it.
                    let _ = schedsim::explain::selector::Selector::parse(&input);
                }));
                ("selector", input, result)
            }
            11 => {
                stats.metadata += 1;
                let input = metadata_input(&mut rng).to_string();
                let file = scratch.join(format!("input-{i}.json"));
                let result = catch_unwind(AssertUnwindSafe(|| {
                    std::fs::write(&file, &input).unwrap();
                    let loaded = schedsim::load::load_files(
                        std::slice::from_ref(&file),
                        &Default::default(),
                    );
                    for e in &loaded.errors {
                        // An error names its field. (Its position can be missing: a JSON
                        // string may hold characters YAML, which positions JSON, cannot.)
                        assert!(e.field.is_some(), "an error without its field: {e}");
                    }
                    for s in &loaded.scenarios {
                        let _ = schedsim::simulate(s);
                    }
                    let _ = std::fs::remove_file(&file);
                }));
                ("metadata", input, result)
            }
            _ => {
                stats.merges += 1;
                let mut original = specs[rng.random_range(0..specs.len())].clone();
                let mut patch = specs[rng.random_range(0..specs.len())].clone();
                mutate_value(&mut rng, &mut original, 0);
                mutate_value(&mut rng, &mut patch, 0);
                let schema = SCHEMAS[rng.random_range(0..SCHEMAS.len())];
                let input = format!("{schema:?} {original} <- {patch}");
                let result = catch_unwind(AssertUnwindSafe(|| {
                    let _ = strategic_merge(&original, &patch, schema);
                }));
                ("smp", input, result)
            }
        };
        let took = started.elapsed();
        if took > stats.slowest.0 {
            stats.slowest = (took, format!("{name}: {}", excerpt(&input)));
        }
        stats.inputs += 1;
        if let Err(payload) = result {
            stats.panics += 1;
            if stats.crashes.len() < 10 {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                stats.crashes.push((name.into(), input, message));
            }
        }
        if stats.inputs % 10_000 == 0 {
            progress(&stats);
        }
    }
    std::panic::set_hook(hook);
    let _ = std::fs::remove_dir_all(&scratch);
    stats
}

/// Characters for names and labels: the valid alphabet, the near misses (uppercase, `_`, `/`,
/// spaces), and what the issue found accepted: control, bidi and zero-width characters, emoji,
/// combining marks, other scripts.
const NAME_CHARS: &[char] = &[
    'a',
    'z',
    '0',
    '9',
    '-',
    '.',
    'A',
    'Z',
    '_',
    '/',
    ' ',
    ':',
    '\u{0}',
    '\u{7}',
    '\u{1b}',
    '\n',
    '\u{7f}',
    '\u{85}',
    '\u{a0}',
    '\u{ad}',
    '\u{200b}',
    '\u{200d}',
    '\u{202e}',
    '\u{2066}',
    '\u{2028}',
    '\u{feff}',
    '\u{301}',
    'é',
    'ß',
    'İ',
    'ä',
    '日',
    '\u{1f680}',
    '\u{1f1fa}',
    '\u{e000}',
    '\u{10ffff}',
];

/// A name, label key or value: often a valid one, otherwise random characters of
/// [`NAME_CHARS`], sometimes very long.
fn name_input(rng: &mut ChaCha8Rng) -> String {
    match rng.random_range(0..6) {
        0 => "gpu-node-1".into(),
        1 => "example.com/team".into(),
        2 => "x".repeat(rng.random_range(60..320)),
        3 => String::new(),
        _ => (0..rng.random_range(1..12))
            .map(|_| NAME_CHARS[rng.random_range(0..NAME_CHARS.len())])
            .collect(),
    }
}

/// A scenario whose node and pod have fuzzed metadata and a fuzzed pod-affinity selector.
fn metadata_input(rng: &mut ChaCha8Rng) -> Value {
    let pairs = |rng: &mut ChaCha8Rng| -> serde_json::Map<String, Value> {
        (0..rng.random_range(0..3))
            .map(|_| (name_input(rng), Value::from(name_input(rng))))
            .collect()
    };
    let node_labels = pairs(rng);
    let node_annotations = pairs(rng);
    let pod_labels = pairs(rng);
    let name_field = if rng.random_bool(0.2) {
        "generateName"
    } else {
        "name"
    };
    let (node_name, pod_name, namespace) = (name_input(rng), name_input(rng), name_input(rng));
    let (key, value) = (name_input(rng), name_input(rng));
    serde_json::json!({
        "apiVersion": "schedsim.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "fuzz-metadata"},
        "spec": {
            "nodes": [{
                "metadata": {"name": node_name, "labels": node_labels, "annotations": node_annotations},
                "status": {"allocatable": {"cpu": "4", "pods": "10"}}
            }],
            "workloads": [{
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {name_field: pod_name, "namespace": namespace, "labels": pod_labels},
                "spec": {
                    "containers": [{"name": "c", "image": "i"}],
                    "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 1,
                        "podAffinityTerm": {
                            "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
                            "matchLabelKeys": [key],
                            "topologyKey": "kubernetes.io/hostname"
                        }
                    }]}}
                }
            }]
        }
    })
}

/// `schedsim explain` on every workload pod of a scenario, every node listed.
fn explain_every_pod(s: &schedsim::load::Scenario) {
    let ask = schedsim::explain::Ask {
        pods: s.workloads.iter().map(|p| p.key()).collect(),
        all_nodes: true,
        top: 3,
        ..Default::default()
    };
    if let Ok(e) = schedsim::explain::explain(s, &ask) {
        let report = schedsim::explain::ExplainReport {
            schema_version: schedsim::explain::report::SCHEMA_VERSION,
            scenarios: vec![e],
        };
        let _ = schedsim::explain::report::render(&report);
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(120).collect::<String>().replace('\n', "⏎")
}

/// Selector texts: every `expression:` of the seed files, and hostile ones.
fn selector_seeds(seeds: &[(PathBuf, String)]) -> Vec<String> {
    let mut out: Vec<String> = seeds
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| line.trim().split_once("expression:"))
        .map(|(_, rest)| {
            let rest = rest.trim().trim_end_matches('}').trim();
            rest.trim_matches(|c| c == '\'' || c == '"').to_string()
        })
        .filter(|e| !e.is_empty() && e.len() < 2000)
        .collect();
    out.extend(
        [
            "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, true)))",
            "cel.bind(a, 'xxxxxxxxxx', cel.bind(b, a.replace('x', a), b.replace('x', b).size() > 1))",
            "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).size() > 0",
            "device.attributes['d'].s.split('').join(device.attributes['d'].s) == ''",
            "'a'.matches('(a*)*b') || 'aaaaaaaaaaaaaaaaaaaaaaaa'.find('(a|a)*') == ''",
        ]
        .map(String::from),
    );
    out
}

/// A selector mutated from the seeds: characters changed, two spliced, or one wrapped in a
/// loop over a list or the device's attributes.
fn selector_input(rng: &mut ChaCha8Rng, seeds: &[String]) -> String {
    let pick = |rng: &mut ChaCha8Rng| seeds[rng.random_range(0..seeds.len())].clone();
    let mut e = pick(rng);
    for _ in 0..rng.random_range(1..4) {
        e = match rng.random_range(0..6) {
            0 => format!(
                "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{}, {e})",
                rng.random_range(0..9)
            ),
            1 => format!("device.attributes.exists(d, {e})"),
            2 => format!(
                "({e}) {} ({})",
                ["&&", "||", "==", "+"][rng.random_range(0..4)],
                pick(rng)
            ),
            3 => format!("cel.bind(v, {e}, v)"),
            _ => {
                const ALPHABET: &[u8] = b"()[]{}.,:?!&|=<>+-*/% 'x019abdev_";
                let mut chars: Vec<char> = e.chars().collect();
                for _ in 0..rng.random_range(1..4) {
                    let at = rng.random_range(0..=chars.len());
                    match rng.random_range(0..3) {
                        0 if at < chars.len() => {
                            chars.remove(at);
                        }
                        _ => {
                            chars.insert(at, ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
                        }
                    }
                }
                chars.into_iter().collect()
            }
        };
    }
    e
}

/// A selector compiles or is refused, and one that compiles answers or errs on a device,
/// within the runtime budget.
fn check_selector(expression: &str) {
    use schedsim::dra::cel::{Device, Selector};
    let attribute = |json: serde_json::Value| serde_json::from_value(json).unwrap();
    let attributes = std::collections::BTreeMap::from([
        (
            "s".to_string(),
            attribute(serde_json::json!({"string": "some_example_value"})),
        ),
        ("d/n".to_string(), attribute(serde_json::json!({"int": 3}))),
        (
            "v".to_string(),
            attribute(serde_json::json!({"version": "1.2.3"})),
        ),
        (
            "b".to_string(),
            attribute(serde_json::json!({"bool": true})),
        ),
    ]);
    let capacity = std::collections::BTreeMap::from([(
        "memory".to_string(),
        serde_json::from_value(serde_json::json!({"value": "40Gi"})).unwrap(),
    )]);
    let device = Device {
        allow_multiple_allocations: Some(false),
        driver: "d",
        attributes: &attributes,
        capacity: &capacity,
    };
    if let Ok(selector) = Selector::compile(expression) {
        let _ = selector.matches(&device);
    }
}
