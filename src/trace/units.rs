//! Numbers as traces write them, in the units they use, turned into schedsim's integers
//! (millicores, bytes, thousandths of a GPU). Values are read as exact decimals (`6`, `0.5`,
//! `12000.0` as pandas writes an integer column with a gap) and rounded up at the unit's
//! resolution, as Kubernetes' `Quantity.MilliValue` rounds a fraction of a millicore up.

use serde::{Deserialize, Serialize};

/// The unit of the CPU column.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum CpuUnit {
    /// Cores (`6`, `0.5`): Helios and Acme `cpu_num`.
    #[default]
    Cores,
    /// Millicores: openb `cpu_milli`.
    Milli,
    /// Percent of a core, `600` = 6 cores: PAI 2020 `plan_cpu` (its README).
    Percent,
}

impl CpuUnit {
    /// Millicores per unit written, over a decimal scale (percent: 10 millicores).
    fn milli_per_unit(self) -> u64 {
        match self {
            CpuUnit::Cores => 1000,
            CpuUnit::Milli => 1,
            CpuUnit::Percent => 10,
        }
    }

    /// `text` in millicores.
    pub fn milli(self, text: &str) -> Result<u64, String> {
        decimal(text, self.milli_per_unit())
    }
}

/// The unit of the memory column.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum MemoryUnit {
    /// Mebibytes: openb `memory_mib`.
    #[default]
    MiB,
    /// Gibibytes: Acme Kalos `mem_per_pod_GB`, PAI `plan_mem`.
    GiB,
    #[serde(rename = "bytes")]
    Bytes,
}

impl MemoryUnit {
    /// `text` in bytes.
    pub fn bytes(self, text: &str) -> Result<u64, String> {
        let scale = match self {
            MemoryUnit::MiB => 1 << 20,
            MemoryUnit::GiB => 1 << 30,
            MemoryUnit::Bytes => 1,
        };
        decimal(text, scale)
    }
}

/// The unit of the GPU column.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum GpuUnit {
    /// GPUs (`8`; `0.5` is half of one shared GPU): openb `num_gpu`, Helios/Acme `gpu_num`.
    #[default]
    Count,
    /// Percent of a GPU, `50` = half a GPU, `800` = 8 GPUs: PAI 2020 `plan_gpu` (its README).
    Percent,
}

impl GpuUnit {
    /// `text` as thousandths of a GPU in total.
    pub fn milli(self, text: &str) -> Result<u64, String> {
        decimal(text, if self == GpuUnit::Count { 1000 } else { 10 })
    }
}

/// A total GPU request in thousandths as openb writes it, `(num_gpu, gpu_milli)`: below one GPU
/// it is one shared GPU (README.upstream.md: `gpu_milli` is for "GPU-sharing workloads (i.e.,
/// `num_gpu==1`)"); from one GPU up, whole GPUs, and a remainder (`150` percent) is spread
/// evenly over the GPUs it needs (2 × 750), rounded up.
pub fn gpu_shape(total_milli: u64) -> Result<(u32, u32), String> {
    if total_milli == 0 {
        return Ok((0, 0));
    }
    let count = total_milli.div_ceil(1000);
    let count = u32::try_from(count).map_err(|_| format!("{count} GPUs is too many"))?;
    Ok((count, total_milli.div_ceil(u64::from(count)) as u32))
}

/// A non-negative decimal (`12`, `0.5`, `+3.`, `.25`) times `scale`, rounded up to an integer.
pub fn decimal(text: &str, scale: u64) -> Result<u64, String> {
    let s = text.trim();
    let s = s.strip_prefix('+').unwrap_or(s);
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if s.starts_with('-') && s.len() > 1 {
        return Err(format!("must not be negative, found {text:?}"));
    }
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return Err(format!("expected a number, found {text:?}"));
    }
    let too_large = || format!("{text:?} is too large");
    let mut value: u64 = 0;
    for b in whole.bytes() {
        value = (value.checked_mul(10))
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_large)?;
    }
    value = value.checked_mul(scale).ok_or_else(too_large)?;
    // The fraction times the scale, digit by digit: value += scale × 0.d1d2… exactly, then up.
    let (mut numerator, mut denominator, mut exact) = (0u128, 1u128, true);
    for b in fraction.bytes() {
        if denominator > u128::from(u64::MAX) {
            exact &= b == b'0'; // past u64's precision: only zeros keep it exact
            continue;
        }
        numerator = numerator * 10 + u128::from(b - b'0');
        denominator *= 10;
    }
    let scaled = numerator * u128::from(scale);
    let mut part = scaled / denominator;
    if scaled % denominator != 0 || !exact {
        part += 1;
    }
    let part = u64::try_from(part).map_err(|_| too_large())?;
    value.checked_add(part).ok_or_else(too_large)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_scale_exactly_and_round_up() {
        assert_eq!(decimal("6", 1000), Ok(6000));
        assert_eq!(decimal("0.5", 1000), Ok(500));
        assert_eq!(decimal("12000.0", 1), Ok(12000));
        assert_eq!(decimal(".25", 1000), Ok(250));
        assert_eq!(decimal("+3.", 1000), Ok(3000));
        assert_eq!(decimal("0.0001", 1000), Ok(1));
        assert_eq!(decimal(" 7 ", 1), Ok(7));
        assert_eq!(decimal("0.100000000000000000000000001", 1000), Ok(101));
        assert_eq!(decimal("0.1000000000000000000000000000", 1000), Ok(100));
        assert!(decimal("-1", 1).unwrap_err().contains("negative"));
        assert!(decimal("", 1).unwrap_err().contains("expected a number"));
        assert!(decimal("1e3", 1).unwrap_err().contains("expected a number"));
        assert!(decimal(".", 1).is_err());
        assert!(
            decimal("99999999999999999999", 1)
                .unwrap_err()
                .contains("too large")
        );
        assert!(decimal("18446744073709551615", 2).is_err());
    }

    #[test]
    fn units_convert_as_the_traces_document() {
        assert_eq!(CpuUnit::Percent.milli("600"), Ok(6000)); // PAI: 600 = 6 cores
        assert_eq!(CpuUnit::Milli.milli("88000"), Ok(88000));
        assert_eq!(CpuUnit::Cores.milli("2"), Ok(2000));
        assert_eq!(MemoryUnit::MiB.bytes("16384"), Ok(16 << 30));
        assert_eq!(MemoryUnit::GiB.bytes("1.5"), Ok(3 << 29));
        assert_eq!(GpuUnit::Percent.milli("50"), Ok(500)); // PAI: 50 = half a GPU
        assert_eq!(GpuUnit::Percent.milli("800"), Ok(8000));
        assert_eq!(gpu_shape(0), Ok((0, 0)));
        assert_eq!(gpu_shape(500), Ok((1, 500)));
        assert_eq!(gpu_shape(8000), Ok((8, 1000)));
        assert_eq!(gpu_shape(1500), Ok((2, 750)));
    }
}
