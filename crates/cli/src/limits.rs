//! Every number a flag takes, with its documented bounds. A value outside them is refused
//! with an error naming the flag and the bound — never clamped, never saturated.

use anyhow::{bail, Result};

/// Most worker threads any command accepts (`--threads`): far above the cores of any machine
/// this runs on, low enough that a typo cannot spawn threads until the machine chokes.
pub const MAX_THREADS: usize = 1024;

/// Largest block gas limit `gen` and `bench --workload` accept (`--block-gas`): 10G.
pub const MAX_BLOCK_GAS: u64 = 10_000_000_000;

/// Most blocks `gen` and `bench --workload` generate (`--blocks`).
pub const MAX_BLOCKS: usize = 10_000;

/// Most funded sender keys of `gen` (`--senders`), and the fewest the generator needs.
pub const MAX_SENDERS: usize = 100_000;
/// See [`MAX_SENDERS`].
pub const MIN_SENDERS: usize = 2;

/// Most timed repeats of `bench` (`--repeats`).
pub const MAX_REPEATS: usize = 10_000;

/// Most warm-up passes of `bench` (`--warmup`).
pub const MAX_WARMUP: usize = 1_000;

/// Most threads `bench --contention-floor` measures: it holds one copy of the data set per
/// thread.
pub const MAX_FLOOR_STREAMS: usize = 64;

/// Largest mega-block size (`--mega`).
pub const MAX_MEGA: usize = 100_000;

/// Checks `value` of `flag` lies in `min..=max`.
pub fn check_range(flag: &str, value: usize, min: usize, max: usize) -> Result<usize> {
    if value < min {
        bail!("{flag} {value}: must be at least {min}");
    }
    if value > max {
        bail!("{flag} {value}: above the limit of {max}");
    }
    Ok(value)
}

/// The environment is input too: `RAYON_NUM_THREADS` sizes rayon's global pool (loading,
/// hashing, verification; each run's own pools follow `--threads`). A value that is not a
/// whole number or lies above [`MAX_THREADS`] is refused naming the variable (100,000 kept a
/// 0.1 s run from finishing in 200 s; 3,000 halved nothing but silently cut throughput
/// 200-fold).
pub fn check_environment() -> Result<()> {
    // rayon also reads the older name.
    for var in ["RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"] {
        check_thread_variable(var)?;
    }
    Ok(())
}

/// [`check_environment`] for one variable.
fn check_thread_variable(var: &'static str) -> Result<()> {
    let Some(value) = std::env::var_os(var) else {
        return Ok(());
    };
    let text = value.to_string_lossy();
    let Ok(n) = text.trim().parse::<usize>() else {
        bail!(
            "{var}={:?}: not a whole number of threads (unset it, or give 1 to {MAX_THREADS}; 0 means one per core)",
            gigagas_guard::text::printable(&text)
        );
    };
    if n > MAX_THREADS {
        bail!("{var}={n}: above the limit of {MAX_THREADS} threads (it sizes the global pool of loading, hashing and verification; the run's own pools follow --threads)");
    }
    Ok(())
}

/// Worker threads: 1..=[`MAX_THREADS`].
pub fn threads(flag: &str, value: usize) -> Result<usize> {
    check_range(flag, value, 1, MAX_THREADS)
}

/// A gas amount: a whole number, or a decimal with a suffix K, M or G (`30M`, `1.5G`).
/// Refuses zero, fractions of a unit of gas and anything above `u64::MAX` (never saturates).
pub fn parse_gas(s: &str) -> Result<u64, String> {
    let (number, scale): (&str, u128) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1_000),
        Some('M' | 'm') => (&s[..s.len() - 1], 1_000_000),
        Some('G' | 'g') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    let bad = || format!("not a gas amount: {s:?} (a whole number, or e.g. 30M, 1.5G)");
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(fraction.is_empty() || digits(fraction)) {
        return Err(bad());
    }
    let too_big = || {
        format!(
            "gas amount {s:?} is above the largest possible ({})",
            u64::MAX
        )
    };
    // Value = (whole + fraction / 10^len) * scale, computed exactly.
    let whole: u128 = whole.parse().map_err(|_| too_big())?;
    let mut value = whole.checked_mul(scale).ok_or_else(too_big)?;
    if !fraction.is_empty() {
        let fraction = fraction.trim_end_matches('0');
        let denominator = 10u128
            .checked_pow(fraction.len() as u32)
            .filter(|&d| d <= scale)
            .ok_or_else(|| format!("gas amount {s:?} is not a whole amount of gas"))?;
        let numerator: u128 = if fraction.is_empty() {
            0
        } else {
            fraction.parse().map_err(|_| bad())?
        };
        if !(numerator * scale).is_multiple_of(denominator) {
            return Err(format!("gas amount {s:?} is not a whole amount of gas"));
        }
        value += numerator * scale / denominator;
    }
    let value = u64::try_from(value).map_err(|_| too_big())?;
    if value == 0 {
        return Err(format!("gas must be positive: {s:?}"));
    }
    Ok(value)
}

/// A block gas limit: a gas amount up to [`MAX_BLOCK_GAS`].
pub fn parse_block_gas(s: &str) -> Result<u64, String> {
    let gas = parse_gas(s)?;
    if gas > MAX_BLOCK_GAS {
        return Err(format!(
            "block gas {s:?} ({gas}) is above the limit of 10G ({MAX_BLOCK_GAS})"
        ));
    }
    Ok(gas)
}

/// A gas threshold: `0` or `off` for none, else a gas amount up to [`MAX_BLOCK_GAS`].
pub fn parse_gas_threshold(s: &str) -> Result<u64, String> {
    match s {
        "off" | "0" => Ok(0),
        _ => parse_block_gas(s),
    }
}

/// A size in bytes as `--trie-buffer` takes it: a number of bytes with an optional binary
/// suffix (`K`, `M`, `G`, or `KiB`, `MiB`, `GiB`), or `off` / `0` for none.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t == "off" {
        return Ok(0);
    }
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{s:?}: a number of bytes (256M, 1GiB, 0 or off)"))?;
    let shift = match unit {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit {unit:?} (K, M, G, KiB, MiB or GiB)"
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?}: too large"))
}

/// A worker pool's warm spin (`--warm-spin`): `off` or `0` for none, else a whole number
/// with a unit (`us`, `ms` or `s`) up to [`gigagas_exec::MAX_WARM_SPIN`].
pub fn parse_warm_spin(s: &str) -> Result<std::time::Duration, String> {
    use std::time::Duration;
    if matches!(s, "off" | "0") {
        return Ok(Duration::ZERO);
    }
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| {
        format!("warm spin {s:?}: expected a whole number with us, ms or s, or off")
    })?;
    let spin = match unit {
        "us" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        _ => {
            return Err(format!(
                "warm spin {s:?}: expected a unit of us, ms or s (e.g. 10ms), or off"
            ))
        }
    };
    if spin > gigagas_exec::MAX_WARM_SPIN {
        return Err(format!(
            "warm spin {s:?} is above the limit of {} ms",
            gigagas_exec::MAX_WARM_SPIN.as_millis()
        ));
    }
    Ok(spin)
}

/// A per-transaction gas cap: a gas amount, or `off`/`none` for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxGasCap(pub Option<u64>);

/// See [`TxGasCap`].
pub fn parse_tx_gas_cap(s: &str) -> Result<TxGasCap, String> {
    match s {
        "off" | "none" => Ok(TxGasCap(None)),
        n => parse_gas(n).map(|g| TxGasCap(Some(g))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_spins_are_bounded_and_never_coerced() {
        use std::time::Duration;
        assert_eq!(parse_warm_spin("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_warm_spin("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_warm_spin("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_warm_spin("off"), Ok(Duration::ZERO));
        assert_eq!(parse_warm_spin("0"), Ok(Duration::ZERO));
        for bad in [
            "",
            "10",
            "ms",
            "-1ms",
            "1.5ms",
            "2s",
            "1001ms",
            "10 ms",
            "10MS",
            "99999999999999999999us",
        ] {
            assert!(parse_warm_spin(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn gas_amounts_are_exact_and_never_saturate() {
        assert_eq!(parse_gas("30M"), Ok(30_000_000));
        assert_eq!(parse_gas("1.5G"), Ok(1_500_000_000));
        assert_eq!(parse_gas("21000"), Ok(21_000));
        assert_eq!(parse_gas("2.50k"), Ok(2_500));
        assert_eq!(parse_gas("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "0",
            "0M",
            "",
            "M",
            "-1",
            "1.5",
            "1e3",
            "inf",
            "NaN",
            "1.0000000001G",
            "18446744073709551616",
            "99999999999999999999G",
            "999999999999999999999999999999999999999999",
        ] {
            assert!(parse_gas(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_block_gas("10G").is_ok());
        assert!(parse_block_gas("10.000000001G")
            .unwrap_err()
            .contains("10G"));
        assert_eq!(parse_tx_gas_cap("off"), Ok(TxGasCap(None)));
        assert!(parse_tx_gas_cap("0").is_err());
    }

    #[test]
    fn thread_counts_are_bounded() {
        assert!(threads("--threads", 0).is_err());
        assert!(threads("--threads", MAX_THREADS + 1)
            .unwrap_err()
            .to_string()
            .contains("--threads"));
        assert_eq!(threads("--threads", 8).unwrap(), 8);
    }
}
