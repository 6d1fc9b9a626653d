//! A pod's share of GPUs as the FGD paper's simulator annotates it (reference:
//! hkust-adsl/kubernetes-scheduler-simulator at `8f3d641`,
//! `pkg/type/open-gpu-share/utils/{const,pod}.go`): milli of each GPU, how many GPUs, the
//! models it may run on and, once placed, the GPU indices. Annotations are not validated by
//! the API server, so nothing here refuses a pod: a value the reference cannot read counts
//! as absent, as its readers do.

use std::collections::BTreeMap;

use super::quantity::Quantity;

/// Milli of each GPU the pod takes (1000 = a whole GPU); on a pod only.
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";
/// How many GPUs the pod takes; on a node, an allocatable resource (how many it has).
pub const GPU_COUNT: &str = "alibabacloud.com/gpu-count";
/// The GPU indices of a placed pod (`"1"`, `"0-1-2-3"`).
pub const GPU_INDEX: &str = "alibabacloud.com/gpu-index";
/// The GPU model: a node's label; on a pod, the models it accepts (`"V100M16|V100M32"`).
pub const GPU_MODEL: &str = "alibabacloud.com/gpu-card-model";

/// One GPU's capacity in milli.
pub const MILLI: i64 = 1000;

/// What a pod asks of GPUs through the annotations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GpuShare {
    /// Milli of each GPU (`GetGpuMilliFromPodAnnotation`: the quantity's `Value()`).
    pub milli: i64,
    /// GPUs (`GetGpuCountFromPodAnnotation`: a non-negative integer, else 0).
    pub count: u32,
    /// The accepted models as written, `|`-separated; empty for any.
    pub models: String,
    /// The GPU indices given in advance (`alibabacloud.com/gpu-index`), when they parse.
    pub index: Option<Vec<usize>>,
}

impl GpuShare {
    /// The pod's share, when it asks for GPU milli (the Open-Gpu-Share Filter passes every
    /// other pod).
    pub fn of(annotations: &BTreeMap<String, String>) -> Option<Self> {
        let milli = (annotations.get(GPU_MILLI))
            .and_then(|v| v.parse::<Quantity>().ok())
            .map_or(0, |q| q.value());
        if milli <= 0 {
            return None;
        }
        let count = (annotations.get(GPU_COUNT))
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|c| *c >= 0)
            .map_or(0, |c| u32::try_from(c).unwrap_or(u32::MAX));
        let index = annotations.get(GPU_INDEX).and_then(|v| parse_index(v));
        Some(GpuShare {
            milli,
            count,
            models: annotations.get(GPU_MODEL).cloned().unwrap_or_default(),
            index,
        })
    }

    /// Whether `model` is one it accepts (`IsNodeAccessibleToPodByType`): any model when the
    /// list names none, never a node without a model otherwise.
    pub fn accepts(&self, model: &str) -> bool {
        accepts(&self.models, model)
    }
}

/// `IsNodeAccessibleToPodByType`: no list accepts any node; a list never a node without a
/// model; else a model it names, or none when it names no model (`"|"`).
pub fn accepts(models: &str, node_model: &str) -> bool {
    if models.is_empty() {
        return true;
    }
    if node_model.is_empty() {
        return false;
    }
    let mut named = false;
    for m in models.split('|').filter(|m| !m.is_empty()) {
        if m == node_model {
            return true;
        }
        named = true;
    }
    !named
}

/// `GpuIdStrToIntList`: `"2-3-4"` → [2, 3, 4]; `None` when a part is not a number.
pub fn parse_index(value: &str) -> Option<Vec<usize>> {
    if value.is_empty() {
        return None;
    }
    value.split('-').map(|p| p.parse().ok()).collect()
}

/// The annotation value of GPU indices (`"0-1"`).
pub fn format_index(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    parts.join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reads_the_reference_annotations() {
        let a = annotations(&[(GPU_MILLI, "460"), (GPU_COUNT, "1"), (GPU_MODEL, "T4|P100")]);
        let share = GpuShare::of(&a).unwrap();
        assert_eq!((share.milli, share.count), (460, 1));
        assert!(share.accepts("T4") && !share.accepts("V100M16") && !share.accepts(""));
        // No milli: not a GPU pod for the plugin; an unreadable count counts as 0.
        assert_eq!(GpuShare::of(&annotations(&[(GPU_COUNT, "2")])), None);
        let a = annotations(&[(GPU_MILLI, "1000"), (GPU_COUNT, "-1")]);
        assert_eq!(GpuShare::of(&a).unwrap().count, 0);
        // Quantities: "0.5" rounds up to 1, as `Value()` does.
        assert_eq!(
            GpuShare::of(&annotations(&[(GPU_MILLI, "0.5")]))
                .unwrap()
                .milli,
            1
        );
        assert!(accepts("", "T4") && accepts("", "") && accepts("|", "T4"));
        assert!(!accepts("|", "") && !accepts("T4", ""));
    }

    #[test]
    fn gpu_indices_round_trip() {
        assert_eq!(parse_index("0-1-3"), Some(vec![0, 1, 3]));
        assert_eq!(parse_index("1-x"), None);
        assert_eq!(parse_index(""), None);
        assert_eq!(format_index(&[2, 5]), "2-5");
    }
}
