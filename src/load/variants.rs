//! Sweep loading: every combination of a scenario's `spec.variants` (one option per dimension,
//! each a JSON merge patch on `spec`), loaded as scenarios of their own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::scenario;
use super::{LoadOptions, Loader, Scenario, suggestion};
use crate::error::InputError;
use crate::yaml::Document;

/// A scenario of a sweep: every variant of its matrix, loaded ([`load_sweeps`]).
#[derive(Debug)]
pub struct SweepScenario {
    pub name: String,
    pub file: PathBuf,
    pub sweep: scenario::SweepSpec,
    pub variants: Vec<Variant>,
}

/// One combination of the variant matrix (one option per dimension), loaded.
#[derive(Debug)]
pub struct Variant {
    /// `inventory=h100,overrides=none`, or `base` without variants.
    pub name: String,
    /// (dimension, option), in dimension order.
    pub options: Vec<(String, String)>,
    pub scenario: Scenario,
}

/// A scenario of a sweep before any variant is loaded: its matrix, named. A sweep loads its
/// variants a few at a time ([`SweepLoader::variant`]) and drops each once its runs are done,
/// so memory holds a few variants of the cluster, never the whole matrix.
#[derive(Debug)]
pub struct SweepPlan {
    pub name: String,
    pub file: PathBuf,
    pub sweep: scenario::SweepSpec,
    /// The scenario as written has `spec.replay`: its runs are replays over time.
    pub replay: bool,
    /// Every combination, in matrix order.
    pub variants: Vec<VariantName>,
    doc: Rc<Document>,
    /// Per variant, the (dimension, option) indices whose patches make it.
    combos: Vec<Vec<(usize, usize)>>,
    /// Which options have a patch, per dimension.
    patched: Vec<Vec<bool>>,
}

/// A variant's name and its options.
#[derive(Debug, Clone)]
pub struct VariantName {
    /// `inventory=h100,overrides=none`, or `base` without variants.
    pub name: String,
    /// (dimension, option), in dimension order.
    pub options: Vec<(String, String)>,
}

/// `--set DIMENSION=OPTION[,OPTION…]`: the options of a dimension a sweep keeps.
pub type Selection = Vec<(String, Vec<String>)>;

/// Reads sweep scenarios and loads their variants; files read once are kept parsed.
pub struct SweepLoader<'o> {
    loader: Loader<'o>,
}

impl<'o> SweepLoader<'o> {
    pub fn new(options: &'o LoadOptions) -> Self {
        SweepLoader {
            loader: Loader {
                plan_counts: None,
                cache: HashMap::new(),
                options,
            },
        }
    }

    /// The sweep scenarios of the files (every Scenario document), each with its matrix
    /// restricted by `select`. A bad scenario or matrix is reported in the errors and the
    /// others are planned.
    pub fn plans(
        &mut self,
        files: &[PathBuf],
        select: &Selection,
    ) -> (Vec<SweepPlan>, Vec<InputError>) {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        let mut dimensions_seen: Vec<String> = Vec::new();
        for (file, doc, sd) in self.loader.scenario_docs(files, &mut errors) {
            let dimensions = &sd.spec.variants;
            dimensions_seen.extend(dimensions.iter().map(|d| d.dimension.clone()));
            let combos = match matrix(&file, &doc, dimensions, select) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let variants = combos
                .iter()
                .map(|combo| {
                    let options: Vec<(String, String)> = combo
                        .iter()
                        .map(|&(d, o)| {
                            let dim = &dimensions[d];
                            (dim.dimension.clone(), dim.options[o].name.clone())
                        })
                        .collect();
                    let name = match options.is_empty() {
                        true => "base".to_string(),
                        false => options
                            .iter()
                            .map(|(d, o)| format!("{d}={o}"))
                            .collect::<Vec<_>>()
                            .join(","),
                    };
                    VariantName { name, options }
                })
                .collect();
            out.push(SweepPlan {
                name: sd.metadata.name.clone(),
                file: file.clone(),
                sweep: sd.spec.sweep.clone(),
                replay: sd.spec.replay.is_some(),
                variants,
                doc: doc.clone(),
                combos,
                patched: dimensions
                    .iter()
                    .map(|d| d.options.iter().map(|o| o.patch.is_some()).collect())
                    .collect(),
            });
        }
        for (dimension, _) in select {
            if !dimensions_seen.contains(dimension) {
                errors.push(InputError::new(
                    Path::new("--set"),
                    format!(
                        "no scenario has a variant dimension {dimension:?}{}",
                        suggestion(dimension, &dimensions_seen)
                    ),
                ));
            }
        }
        (out, errors)
    }

    /// Variant `v` of a plan: its options' patches merged into the scenario, loaded.
    pub fn variant(&mut self, plan: &SweepPlan, v: usize) -> Result<Scenario, Vec<InputError>> {
        let mut patched: Option<Document> = None;
        for &(d, o) in &plan.combos[v] {
            if plan.patched[d][o] {
                let base = patched.as_ref().unwrap_or(&plan.doc);
                patched = Some(
                    base.merge_patched("spec", &format!("spec.variants[{d}].options[{o}].patch")),
                );
            }
        }
        let doc = patched.map_or_else(|| plan.doc.clone(), Rc::new);
        self.loader.scenario(&plan.file, &doc)
    }
}

/// Loads every Scenario document of the files with each combination of its variants (the
/// matrix, restricted by `select`), all at once: for callers that hold the whole matrix (tests,
/// benchmarks); `schedsim sweep` plans and loads variants as it runs them. A bad scenario or
/// variant is reported in the errors and the others still load.
pub fn load_sweeps(
    files: &[PathBuf],
    options: &LoadOptions,
    select: &Selection,
) -> (Vec<SweepScenario>, Vec<InputError>) {
    let mut loader = SweepLoader::new(options);
    let (plans, mut errors) = loader.plans(files, select);
    let mut out = Vec::new();
    for plan in plans {
        let mut variants = Vec::new();
        for (v, name) in plan.variants.iter().enumerate() {
            match loader.variant(&plan, v) {
                Ok(scenario) => variants.push(Variant {
                    name: name.name.clone(),
                    options: name.options.clone(),
                    scenario,
                }),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if !variants.is_empty() {
            out.push(SweepScenario {
                name: plan.name,
                file: plan.file,
                sweep: plan.sweep,
                variants,
            });
        }
    }
    (out, errors)
}

/// The combinations of one option per dimension, first dimension slowest, as
/// (dimension index, option index) lists; `select` keeps only the named options.
fn matrix(
    file: &Path,
    doc: &Document,
    dimensions: &[scenario::VariantDimension],
    select: &Selection,
) -> Result<Vec<Vec<(usize, usize)>>, InputError> {
    let mut combos: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    let mut names: Vec<&str> = Vec::new();
    for (d, dim) in dimensions.iter().enumerate() {
        let at = format!("spec.variants[{d}]");
        if names.contains(&dim.dimension.as_str()) {
            return Err(doc.error(
                file,
                &format!("{at}.dimension"),
                format!("duplicate dimension {:?}", dim.dimension),
            ));
        }
        names.push(&dim.dimension);
        if dim.options.is_empty() {
            return Err(doc.error(file, &format!("{at}.options"), "a dimension needs options"));
        }
        let option_names: Vec<String> = dim.options.iter().map(|o| o.name.clone()).collect();
        for (o, name) in option_names.iter().enumerate() {
            if option_names[..o].contains(name) {
                return Err(doc.error(
                    file,
                    &format!("{at}.options[{o}].name"),
                    format!("duplicate option {name:?}"),
                ));
            }
        }
        let kept: Vec<usize> = match select.iter().find(|(name, _)| *name == dim.dimension) {
            None => (0..dim.options.len()).collect(),
            Some((_, wanted)) => {
                let mut kept = Vec::new();
                for w in wanted {
                    match option_names.iter().position(|n| n == w) {
                        Some(o) => kept.push(o),
                        None => {
                            return Err(InputError::new(
                                Path::new("--set"),
                                format!(
                                    "dimension {:?} of {} has no option {w:?}{}",
                                    dim.dimension,
                                    file.display(),
                                    suggestion(w, &option_names)
                                ),
                            ));
                        }
                    }
                }
                kept
            }
        };
        let count = (combos.len() as u64).saturating_mul(kept.len() as u64);
        if crate::limits::VARIANTS.exceeded_by(count) {
            return Err(doc.error(
                file,
                &format!("spec.variants[{d}]"),
                crate::limits::VARIANTS.message(format!("{count} variants")),
            ));
        }
        combos = combos
            .into_iter()
            .flat_map(|c| {
                kept.iter().map(move |&o| {
                    let mut c = c.clone();
                    c.push((d, o));
                    c
                })
            })
            .collect();
    }
    Ok(combos)
}
