//! The args of the FGD simulator's GPU-sharing plugins (hkust-adsl/kubernetes-scheduler-simulator
//! at `8f3d641`, `pkg/type/config.go`: `GpuPluginCfg`, `OpenGpuSharePluginCfg`). The plugins
//! decode them with `frameworkruntime.DecodeInto` (JSON: unknown fields are ignored). Each
//! value the reference defines is accepted; the ones schedsim does not simulate are refused
//! with what it does simulate.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawGpuPluginArgs {
    dim_ext_method: Option<String>,
    norm_method: Option<String>,
    gpu_sel_method: Option<String>,
}

/// `GpuDimExtMethod` and `NormMethod` values of the reference.
const DIM_EXT_METHODS: [&str; 4] = ["merge", "share", "divide", "extend"];
const NORM_METHODS: [&str; 3] = ["node", "pod", "max"];

fn check_value(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Option<String>,
    known: &[&str],
) -> Result<(), InputError> {
    match value {
        Some(v) if !known.contains(&v.as_str()) => Err(doc.error(
            file,
            path,
            format!(
                "Unsupported value: {v:?}: supported values: {}",
                quoted(known)
            ),
        )),
        _ => Ok(()),
    }
}

fn quoted(values: &[&str]) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    parts.join(", ")
}

/// `OpenGpuSharePluginCfg`: `gpuSelMethod` picks a sharing pod's GPU at Reserve (`best`,
/// `worst`, `random`, or a score plugin's own choice, `FGDScore`).
pub(super) fn apply_open_gpu_share(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawGpuPluginArgs = doc.decode(file, path, value)?;
    check_value(
        doc,
        file,
        &format!("{path}.dimExtMethod"),
        &raw.dim_ext_method,
        &DIM_EXT_METHODS,
    )?;
    check_value(
        doc,
        file,
        &format!("{path}.normMethod"),
        &raw.norm_method,
        &NORM_METHODS,
    )?;
    args.gpu_sel = match raw.gpu_sel_method.as_deref() {
        None | Some("") => None,
        Some("best") => Some(GpuSel::BestFit),
        Some("worst") => Some(GpuSel::WorstFit),
        Some("random") => Some(GpuSel::Random),
        Some("FGDScore") => Some(GpuSel::Fgd),
        Some(other) => {
            return Err(doc.error(
                file,
                &format!("{path}.gpuSelMethod"),
                format!(
                    "Unsupported value: {other:?}: schedsim simulates \"best\", \"worst\", \
                     \"random\" and \"FGDScore\""
                ),
            ));
        }
    };
    Ok(())
}

/// `GpuPluginCfg` of DotProductScore: schedsim simulates its `merge`/`max` form, the one the
/// FGD experiments run (`dimExtMethod: merge`, `normMethod: max`).
pub(super) fn apply_dot_product(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawGpuPluginArgs = doc.decode(file, path, value)?;
    let dim = format!("{path}.dimExtMethod");
    let norm = format!("{path}.normMethod");
    check_value(doc, file, &dim, &raw.dim_ext_method, &DIM_EXT_METHODS)?;
    check_value(doc, file, &norm, &raw.norm_method, &NORM_METHODS)?;
    for (at, value, simulated) in [
        (&dim, &raw.dim_ext_method, "merge"),
        (&norm, &raw.norm_method, "max"),
    ] {
        if value.as_deref() != Some(simulated) {
            let given = value.as_deref().unwrap_or("");
            return Err(doc.error(
                file,
                at,
                format!(
                    "{given:?} is not simulated: schedsim simulates DotProductScore with \
                     dimExtMethod \"merge\" and normMethod \"max\" (the FGD experiments' setting)"
                ),
            ));
        }
    }
    args.dot_product_args = true;
    Ok(())
}
