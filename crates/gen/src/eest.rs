//! The EIP-7928 benchmark shapes of ethereum/execution-specs as `gen` workloads.
//!
//! Ported (read, then written anew in Rust) from the five test functions of
//! [`SOURCE_PATH`] at commit [`SOURCE_COMMIT`]: `test_parallel_execution_serial_chain`
//! (`bal-serial-chain`), `test_state_root_computation` (`bal-state-root`),
//! `test_prefetch_cold_storage` (`bal-prefetch-cold`), `test_deploy_then_interact`
//! (`bal-deploy-interact`) and `test_mixed_dependency_graph` (`bal-mixed-graph`). The bytecode
//! is assembled as the source's `Op`/`While`/`Initcode` helpers assemble it (minimal `PUSHn`,
//! `PUSH1 0x00` for zero, arguments pushed last-first; the helpers were read at
//! execution-specs `0bf9208e` for `While`/`Initcode` and `00653808` for `Opcode.__call__`),
//! and the gas figures the source derives from the fork (`reserve_gas`, `min_per_tx_gas`,
//! the transaction schedule, the deployment gas limit) come from revm's gas table for the
//! chain's fork ([`GasParams`]), so the loops stop where the source's would on that fork.
//!
//! What differs from the source, and why:
//! - Contracts the source deploys in a setup block (the serial chain's and the mixed graph's
//!   keccak-chain contracts) are in the genesis with the state that deployment leaves (code,
//!   nonce 1, slot 0 = 1), so the first generated block is the measured block.
//! - Each transaction of a block has its own sender (the source's `pre.fund_eoa()` per
//!   transaction); with `--blocks N` every block repeats the schedule with the same senders,
//!   and the state-dependent parts continue: `bal-state-root` writes the next untouched slot
//!   ranges, `bal-prefetch-cold` walks on along the chain (the genesis holds enough of it for
//!   every block), `bal-deploy-interact` deploys new contracts.
//! - Contracts the source places with `pre.deploy_contract` sit at [`CONTRACT_BASE`] + i.

use crate::contracts::Storage;
use alloy_primitives::{keccak256, Address, Bytes, TxKind, U256};
use gigagas_data::chain::AllocAccount;
use revm::{
    context_interface::{
        cfg::gas_params::{Eip2780TxInfo, GasParams},
        context::SStoreResult,
    },
    primitives::hardfork::SpecId,
};
use std::collections::BTreeMap;

/// The source file in ethereum/execution-specs.
pub const SOURCE_PATH: &str =
    "tests/benchmark/compute/eip7928_block_level_access_lists/test_block_access_list.py";
/// The execution-specs commit the shapes were ported from.
pub const SOURCE_COMMIT: &str = "1a0b1f938cf9877a91e1c368ba513b4f07e7925f";

/// First genesis contract of a shape (then `+ 1`, `+ 2`, ...).
pub const CONTRACT_BASE: Address =
    alloy_primitives::address!("0x0000000000000000000000000000792800000000");

/// The source's `_POINTER_SLOT` (2^256 − 1): the prefetch chain's shared cursor.
pub const POINTER_SLOT: U256 = U256::MAX;

/// Most genesis storage slots a shape may list (they travel in `chain.json`).
pub const MAX_GENESIS_SLOTS: u64 = 20_000_000;

/// Most transactions per block a shape may plan (each has its own funded sender).
pub const MAX_TXS_PER_BLOCK: u64 = 1_000_000;

/// How many transactions a block's gas is divided into (the source's `TxDensity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Density {
    /// Transactions at the transaction gas cap (fewest transactions), plus a remainder.
    Greedy,
    /// Half the most transactions that fit, gas shared equally.
    Half,
    /// The most transactions that fit (each at the minimum viable gas).
    Max,
}

impl Density {
    /// Every density, in the source's order.
    pub const ALL: [Density; 3] = [Self::Greedy, Self::Half, Self::Max];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Greedy => "greedy",
            Self::Half => "half",
            Self::Max => "max",
        }
    }
}

impl std::str::FromStr for Density {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| format!("unknown density {s:?} (greedy, half, max)"))
    }
}

/// Which contracts a shape's transactions call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Contracts {
    /// One contract for every transaction (`single_contract`).
    Single,
    /// A contract per transaction (`contract_per_tx`), or per deploy + call pair
    /// (`independent_pairs`).
    PerTx,
}

impl Contracts {
    /// Both, in the source's order.
    pub const ALL: [Contracts; 2] = [Self::Single, Self::PerTx];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::PerTx => "per-tx",
        }
    }
}

impl std::str::FromStr for Contracts {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown contracts {s:?} (single, per-tx)"))
    }
}

/// The group sizes the source's `test_mixed_dependency_graph` runs.
pub const SOURCE_GROUPS: [u16; 3] = [1, 2, 5];
/// Largest `bal-mixed-graph` group size accepted.
pub const MAX_GROUP: u16 = 1024;

/// One of the five shapes with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BalShape {
    /// `test_parallel_execution_serial_chain`: every transaction runs a keccak chain on one
    /// contract and ends with `SSTORE(0, SLOAD(0) + hash)` (all conflict on slot 0, last).
    SerialChain,
    /// `test_state_root_computation`: disjoint ranges of cold pre-populated slots written
    /// with 2^256 − 1, counting down from 2^256 − 1.
    StateRoot {
        /// One contract, or one per transaction.
        contracts: Contracts,
        /// Transactions per block.
        density: Density,
    },
    /// `test_prefetch_cold_storage`: cold SLOADs walking a keccak linked list, each
    /// transaction continuing from the pointer slot the previous one wrote.
    PrefetchCold,
    /// `test_deploy_then_interact`: CREATE then call of the created keccak-chain contract,
    /// as independent pairs (`per-tx`) or one deployment and serial calls (`single`).
    DeployInteract {
        /// Independent pairs (`PerTx`) or one deployment (`Single`).
        contracts: Contracts,
        /// Transactions per block.
        density: Density,
    },
    /// `test_mixed_dependency_graph`: groups of `group` serial keccak-chain transactions on
    /// one contract per group, the groups interleaved round-robin.
    MixedGraph {
        /// Transactions per group.
        group: u16,
        /// Transactions per block.
        density: Density,
    },
}

impl BalShape {
    /// Each shape with the source's first parameters (the CLI defaults).
    pub const DEFAULTS: [BalShape; 5] = [
        Self::SerialChain,
        Self::StateRoot {
            contracts: Contracts::Single,
            density: Density::Greedy,
        },
        Self::PrefetchCold,
        Self::DeployInteract {
            contracts: Contracts::PerTx,
            density: Density::Greedy,
        },
        Self::MixedGraph {
            group: 1,
            density: Density::Greedy,
        },
    ];

    /// CLI name of the shape (without parameters).
    pub fn name(self) -> &'static str {
        match self {
            Self::SerialChain => "bal-serial-chain",
            Self::StateRoot { .. } => "bal-state-root",
            Self::PrefetchCold => "bal-prefetch-cold",
            Self::DeployInteract { .. } => "bal-deploy-interact",
            Self::MixedGraph { .. } => "bal-mixed-graph",
        }
    }

    /// The source's test function.
    pub fn source_function(self) -> &'static str {
        match self {
            Self::SerialChain => "test_parallel_execution_serial_chain",
            Self::StateRoot { .. } => "test_state_root_computation",
            Self::PrefetchCold => "test_prefetch_cold_storage",
            Self::DeployInteract { .. } => "test_deploy_then_interact",
            Self::MixedGraph { .. } => "test_mixed_dependency_graph",
        }
    }

    /// The name with its parameters: `bal-state-root:per-tx:max`, `bal-mixed-graph:group-5:half`.
    pub fn label(self) -> String {
        match self {
            Self::SerialChain | Self::PrefetchCold => self.name().to_owned(),
            Self::StateRoot { contracts, density }
            | Self::DeployInteract { contracts, density } => {
                format!("{}:{}:{}", self.name(), contracts.name(), density.name())
            }
            Self::MixedGraph { group, density } => {
                format!("{}:group-{group}:{}", self.name(), density.name())
            }
        }
    }

    /// The shape with some parameters replaced; an error names a parameter the shape does
    /// not take or a group size out of range.
    pub fn with(
        self,
        contracts: Option<Contracts>,
        density: Option<Density>,
        group: Option<u16>,
    ) -> Result<BalShape, String> {
        let refuse = |what: &str| {
            Err(format!(
                "{what} does not apply to {} (its source, {}, has no such parameter)",
                self.name(),
                self.source_function()
            ))
        };
        let mut shape = self;
        match &mut shape {
            Self::SerialChain | Self::PrefetchCold => {
                if contracts.is_some() {
                    return refuse("the contracts parameter (--contracts, single|per-tx)");
                }
                if density.is_some() {
                    return refuse("the density parameter (--density, greedy|half|max)");
                }
            }
            Self::StateRoot {
                contracts: c,
                density: d,
            }
            | Self::DeployInteract {
                contracts: c,
                density: d,
            } => {
                *c = contracts.unwrap_or(*c);
                *d = density.unwrap_or(*d);
            }
            Self::MixedGraph {
                group: g,
                density: d,
            } => {
                if contracts.is_some() {
                    return refuse("the contracts parameter (--contracts, single|per-tx)");
                }
                *d = density.unwrap_or(*d);
                *g = group.unwrap_or(*g);
            }
        }
        if let Some(group) = group {
            if !matches!(shape, Self::MixedGraph { .. }) {
                return refuse("the group parameter (--group, group-N)");
            }
            if !(1..=MAX_GROUP).contains(&group) {
                return Err(format!(
                    "--group {group} (group size {group}): must be 1 to {MAX_GROUP}"
                ));
            }
        }
        Ok(shape)
    }

    /// Parses the parameters after the name (`per-tx`, `max`, `group-5`, in any order).
    pub fn parse_params<'a>(self, params: impl Iterator<Item = &'a str>) -> Result<Self, String> {
        let (mut contracts, mut density, mut group) = (None, None, None);
        for p in params {
            if let Some(d) = Density::ALL.into_iter().find(|d| d.name() == p) {
                density = Some(d);
            } else if let Some(c) = Contracts::ALL.into_iter().find(|c| c.name() == p) {
                contracts = Some(c);
            } else if let Some(n) = p.strip_prefix("group-") {
                group = Some(
                    n.parse::<u16>()
                        .map_err(|_| format!("{p:?}: group size 1 to {MAX_GROUP}"))?,
                );
            } else {
                return Err(format!(
                    "unknown parameter {p:?} of {} (greedy, half, max, single, per-tx, group-N)",
                    self.name()
                ));
            }
        }
        self.with(contracts, density, group)
    }

    /// Whether the source runs this parameter set (group sizes other than 1, 2, 5 are an
    /// extension).
    pub fn in_source(self) -> bool {
        match self {
            Self::MixedGraph { group, .. } => SOURCE_GROUPS.contains(&group),
            _ => true,
        }
    }
}

/// The named set `eest-bal`: every shape with every parameter set of its source (1 + 6 + 1 +
/// 6 + 9 = 23 workloads), in the source's order.
pub fn eest_bal_set() -> Vec<BalShape> {
    let mut out = vec![BalShape::SerialChain];
    for contracts in Contracts::ALL {
        for density in Density::ALL {
            out.push(BalShape::StateRoot { contracts, density });
        }
    }
    out.push(BalShape::PrefetchCold);
    for contracts in [Contracts::PerTx, Contracts::Single] {
        for density in Density::ALL {
            out.push(BalShape::DeployInteract { contracts, density });
        }
    }
    for group in SOURCE_GROUPS {
        for density in Density::ALL {
            out.push(BalShape::MixedGraph { group, density });
        }
    }
    out
}

/// Name of the named set of [`eest_bal_set`].
pub const EEST_BAL_SET: &str = "eest-bal";

// ---------------------------------------------------------------------------------------
// Bytecode, assembled as the source's helpers assemble it.

const STOP: u8 = 0x00;
const ADD: u8 = 0x01;
const SUB: u8 = 0x03;
const GT: u8 = 0x11;
const SHA3: u8 = 0x20;
const CALLDATALOAD: u8 = 0x35;
const CODECOPY: u8 = 0x39;
const MLOAD: u8 = 0x51;
const MSTORE: u8 = 0x52;
const SLOAD: u8 = 0x54;
const SSTORE: u8 = 0x55;
const JUMPI: u8 = 0x57;
const PC: u8 = 0x58;
const GAS: u8 = 0x5a;
const JUMPDEST: u8 = 0x5b;
const PUSH1: u8 = 0x60;
const DUP2: u8 = 0x81;
const DUP3: u8 = 0x82;
const RETURN: u8 = 0xf3;

/// `PUSHn value` with the smallest `n` (zero as `PUSH1 0x00`), as the source pushes ints.
fn push(value: U256) -> Vec<u8> {
    let bytes = value.to_be_bytes::<32>();
    let skip = bytes.iter().take_while(|b| **b == 0).count().min(31);
    let data = &bytes[skip..];
    let mut out = Vec::with_capacity(1 + data.len());
    out.push(PUSH1 + (data.len() as u8 - 1));
    out.extend_from_slice(data);
    out
}

fn push_u64(value: u64) -> Vec<u8> {
    push(U256::from(value))
}

/// `While(body, GT(GAS, reserve))`: `JUMPDEST body PUSH reserve GAS GT PUSH4 back PC SUB
/// JUMPI`, jumping back to the `JUMPDEST`.
fn while_gas_above(body: &[u8], reserve: u64) -> Vec<u8> {
    let mut condition = push_u64(reserve);
    condition.extend_from_slice(&[GAS, GT]);
    let back = (body.len() + condition.len() + 6) as u32;
    let mut out = vec![JUMPDEST];
    out.extend_from_slice(body);
    out.extend_from_slice(&condition);
    out.push(0x63); // PUSH4
    out.extend_from_slice(&back.to_be_bytes());
    out.extend_from_slice(&[PC, SUB, JUMPI]);
    out
}

/// Gas of the opcodes the shapes use under one fork (revm's table for it).
#[derive(Debug, Clone)]
pub struct Costs {
    params: GasParams,
    spec: SpecId,
}

const VERYLOW: u64 = 3;
const BASE: u64 = 2;
const HIGH: u64 = 10;
const JUMPDEST_GAS: u64 = 1;
const KECCAK_BASE: u64 = 30;

impl Costs {
    /// The gas table of `spec` (as `CfgEnv::with_spec_and_mainnet_gas_params` sets it).
    pub fn new(spec: SpecId) -> Self {
        Self {
            params: GasParams::new_spec(spec),
            spec,
        }
    }

    fn amsterdam(&self) -> bool {
        self.spec.is_enabled_in(SpecId::AMSTERDAM)
    }

    /// Intrinsic gas of a transaction with no value and no access list, the calldata floor
    /// (EIP-7623/7976) included: what its gas limit must at least be.
    pub fn intrinsic(&self, input: &[u8], create: bool) -> u64 {
        let eip2780 = self.amsterdam().then_some(Eip2780TxInfo {
            value: U256::ZERO,
            is_self_transfer: false,
        });
        let gas = self.params.initial_tx_gas(input, create, 0, 0, 0, eip2780);
        let floor = if self.spec.is_enabled_in(SpecId::PRAGUE) {
            gas.floor_gas()
        } else {
            0
        };
        gas.initial_total_gas().max(floor)
    }

    /// Intrinsic gas deducted before execution (no calldata floor): `gas limit − this` is
    /// the gas execution starts with.
    pub fn deducted_before_execution(&self, input: &[u8], create: bool) -> u64 {
        let eip2780 = self.amsterdam().then_some(Eip2780TxInfo {
            value: U256::ZERO,
            is_self_transfer: false,
        });
        self.params
            .initial_tx_gas(input, create, 0, 0, 0, eip2780)
            .initial_total_gas()
    }

    /// A cold `SLOAD`.
    pub fn sload_cold(&self) -> u64 {
        self.params.warm_storage_read_cost() + self.params.cold_storage_additional_cost()
    }

    /// An `SSTORE` from `original` (= present) to `new`, regular gas plus EIP-8037 state gas.
    pub fn sstore(&self, cold: bool, original: U256, new: U256) -> u64 {
        let vals = SStoreResult {
            original_value: original,
            present_value: original,
            new_value: new,
        };
        let state = if self.amsterdam() {
            self.params.sstore_state_gas(&vals)
        } else {
            0
        };
        self.params.sstore_static_gas() + self.params.sstore_dynamic_gas(true, &vals, cold) + state
    }

    /// `SHA3` of one word.
    fn sha3_word(&self) -> u64 {
        KECCAK_BASE + self.params.keccak256_cost(32)
    }

    /// Memory expansion from nothing to one word.
    fn first_word(&self) -> u64 {
        self.params.memory_cost(1)
    }

    /// The source's `_derive_loop_gas`: (per-iteration gas, exit overhead) of
    /// `While(body, GT(GAS, PUSH reserve))` for a body of `body_gas`.
    fn loop_gas(body_gas: u64) -> (u64, u64) {
        // JUMPDEST, body, PUSH GAS GT, PUSH4 PC SUB JUMPI.
        let per_iter = JUMPDEST_GAS
            + body_gas
            + (VERYLOW + BASE + VERYLOW)
            + (VERYLOW + BASE + VERYLOW + HIGH);
        (per_iter, per_iter - body_gas - JUMPDEST_GAS)
    }

    /// Code deposit of `len` bytes (regular before Amsterdam, EIP-8037 state gas from it).
    fn code_deposit(&self, len: usize) -> u64 {
        self.params.code_deposit_cost(len) + self.params.code_deposit_state_gas(len)
    }
}

/// A contract of a shape: runtime code and the gas figures its transactions are sized by.
#[derive(Debug, Clone)]
pub struct Contract {
    /// Runtime code.
    pub code: Bytes,
    /// Gas of the code before its loop.
    pub setup_gas: u64,
    /// Gas of one loop iteration.
    pub per_iter_gas: u64,
    /// The loop runs while more than this gas is left.
    pub reserve_gas: u64,
}

/// The source's `_build_keccak_chain`: `MSTORE(0, 1)`; while gas is above the reserve,
/// `MSTORE(0, SHA3(0, 32))`; then `SSTORE(0, ADD(SLOAD(0), MLOAD(0)))`, `STOP`.
pub fn keccak_chain(costs: &Costs) -> Contract {
    let prefix = [PUSH1, 1, PUSH1, 0, MSTORE];
    let setup_gas = 3 * VERYLOW + costs.first_word();
    let body = [PUSH1, 0x20, PUSH1, 0, SHA3, PUSH1, 0, MSTORE];
    let body_gas = 4 * VERYLOW + costs.sha3_word();
    let cleanup = [
        PUSH1, 0, MLOAD, PUSH1, 0, SLOAD, ADD, PUSH1, 0, SSTORE, STOP,
    ];
    // SLOAD(0) cold, then a warm non-zero → non-zero SSTORE (the source's placeholder
    // values 1 → 2).
    // PUSH1 MLOAD PUSH1 SLOAD ADD PUSH1 SSTORE STOP.
    let cleanup_gas =
        5 * VERYLOW + costs.sload_cold() + costs.sstore(false, U256::from(1), U256::from(2));
    let (per_iter_gas, exit_overhead) = Costs::loop_gas(body_gas);
    let reserve_gas = per_iter_gas + exit_overhead + cleanup_gas;
    let mut code = prefix.to_vec();
    code.extend(while_gas_above(&body, reserve_gas));
    code.extend_from_slice(&cleanup);
    Contract {
        code: code.into(),
        setup_gas,
        per_iter_gas,
        reserve_gas,
    }
}

/// The source's `_build_sequential_sstore_code`: `MSTORE(0, CALLDATALOAD(0))`; while gas is
/// above the reserve, `SSTORE(MLOAD(0), 2^256 − 1)`, `MSTORE(0, SUB(MLOAD(0), 1))`; `STOP`.
pub fn sequential_sstore(costs: &Costs) -> Contract {
    let mut setup = vec![PUSH1, 0, CALLDATALOAD, PUSH1, 0, MSTORE];
    let setup_gas = 4 * VERYLOW + costs.first_word();
    let mut body = push(U256::MAX);
    body.extend_from_slice(&[PUSH1, 0, MLOAD, SSTORE]);
    body.extend_from_slice(&[PUSH1, 1, PUSH1, 0, MLOAD, SUB, PUSH1, 0, MSTORE]);
    // Cold non-zero → 2^256 − 1 (the source's placeholder original value 1).
    let body_gas = 3 * VERYLOW + costs.sstore(true, U256::from(1), U256::MAX) + 6 * VERYLOW;
    let (per_iter_gas, exit_overhead) = Costs::loop_gas(body_gas);
    let reserve_gas = per_iter_gas + exit_overhead; // cleanup: STOP
    setup.extend(while_gas_above(&body, reserve_gas));
    setup.push(STOP);
    Contract {
        code: setup.into(),
        setup_gas,
        per_iter_gas,
        reserve_gas,
    }
}

/// The source's `_build_sload_chain_code`: `MSTORE(0, SLOAD(POINTER))`; while gas is above
/// the reserve, `MSTORE(0, SLOAD(MLOAD(0)))`; then `SSTORE(POINTER, MLOAD(0))`, `STOP`.
pub fn sload_chain(costs: &Costs) -> Contract {
    let mut code = push(POINTER_SLOT);
    code.extend_from_slice(&[SLOAD, PUSH1, 0, MSTORE]);
    let setup_gas = VERYLOW + costs.sload_cold() + 2 * VERYLOW + costs.first_word();
    let body = [PUSH1, 0, MLOAD, SLOAD, PUSH1, 0, MSTORE];
    let body_gas = 4 * VERYLOW + costs.sload_cold();
    let mut cleanup = vec![PUSH1, 0, MLOAD];
    cleanup.extend(push(POINTER_SLOT));
    cleanup.extend_from_slice(&[SSTORE, STOP]);
    let cleanup_gas = 3 * VERYLOW + costs.sstore(false, U256::from(1), U256::from(2));
    let (per_iter_gas, exit_overhead) = Costs::loop_gas(body_gas);
    let reserve_gas = per_iter_gas + exit_overhead + cleanup_gas;
    code.extend(while_gas_above(&body, reserve_gas));
    code.extend(cleanup);
    Contract {
        code: code.into(),
        setup_gas,
        per_iter_gas,
        reserve_gas,
    }
}

/// The source's `Initcode(deploy_code=runtime, initcode_prefix=SSTORE(0, 1))`: `SSTORE(0, 1)`,
/// then `PUSHn len PUSH1 0 DUP2 PUSH1 offset DUP3 CODECOPY RETURN` and the runtime code.
pub fn initcode(runtime: &[u8]) -> Result<Bytes, String> {
    let prefix = [PUSH1, 1, PUSH1, 0, SSTORE];
    let len = runtime.len();
    let len_bytes = len.to_be_bytes();
    let skip = len_bytes.iter().take_while(|b| **b == 0).count();
    let size = (len_bytes.len() - skip).max(2);
    let offset = 9 + size + prefix.len();
    if offset > 0xff {
        return Err("initcode prefix too long".into());
    }
    let mut code = prefix.to_vec();
    code.push(PUSH1 + (size as u8 - 1));
    code.extend_from_slice(&len_bytes[len_bytes.len() - size..]);
    code.extend_from_slice(&[PUSH1, 0, DUP2, PUSH1, offset as u8, DUP3, CODECOPY, RETURN]);
    code.extend_from_slice(runtime);
    Ok(code.into())
}

/// The source's `_derive_tx_schedule`: per-transaction gas limits that fill `budget`.
pub fn tx_schedule(budget: u64, min_per_tx: u64, tx_cap: u64, density: Density) -> Vec<u64> {
    match density {
        Density::Greedy => {
            let full = budget / tx_cap;
            let remainder = budget - full * tx_cap;
            let mut out = vec![tx_cap; full as usize];
            if remainder >= min_per_tx {
                out.push(remainder);
            }
            out
        }
        Density::Half | Density::Max => {
            let max_txs = budget / min_per_tx;
            let n = if density == Density::Half {
                max_txs / 2
            } else {
                max_txs
            }
            .max(1);
            let per_tx = (budget / n).min(tx_cap).max(min_per_tx);
            vec![per_tx; n as usize]
        }
    }
}

/// The source's `_compute_hash_chain(1, length)`: keccak of the previous key, from 1.
pub fn hash_chain(length: u64) -> impl Iterator<Item = U256> {
    std::iter::successors(Some(U256::from(1)), |k| {
        Some(U256::from_be_bytes(keccak256(k.to_be_bytes::<32>()).0))
    })
    .skip(1)
    .take(length as usize)
}

/// One planned transaction of a shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeTx {
    /// Sender key index (every transaction of a block has its own).
    pub sender: usize,
    /// Call target, or a creation.
    pub to: Target,
    /// Call data (init code for a creation).
    pub input: Bytes,
    /// Gas limit.
    pub gas_limit: u64,
}

/// Where a planned transaction goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A genesis contract.
    Contract(Address),
    /// A contract creation.
    Create,
    /// The contract the creation by sender `n` in the same block makes.
    CreatedBy(usize),
}

/// A shape sized for a chain: its genesis contracts and each block's transactions.
#[derive(Debug, Clone)]
pub struct ShapePlan {
    /// The shape.
    pub shape: BalShape,
    /// Genesis contracts (code, nonce 1, pre-populated storage).
    pub contracts: BTreeMap<Address, AllocAccount>,
    /// Senders a block needs (one per transaction).
    pub senders: usize,
    /// Gas limits of a block's transactions, in block order.
    pub schedule: Vec<u64>,
    /// Call targets and data, in block order, for block `1`; see [`ShapePlan::block`].
    kind: PlanKind,
}

#[derive(Debug, Clone)]
enum PlanKind {
    /// Every transaction calls `targets[i]` with no data (serial chain, prefetch, mixed).
    Calls { targets: Vec<Address> },
    /// State root: transaction `i` calls `targets[i]` with `start - count * per_tx` where
    /// `count` is how many earlier transactions (in earlier blocks too) hit that contract.
    StateRoot {
        targets: Vec<Address>,
        contracts: usize,
        slots_per_tx: u64,
    },
    /// Deploy then interact.
    Deploy { initcode: Bytes, pairs: bool },
}

/// Why a shape cannot be sized.
fn too_small(shape: BalShape, budget: u64, what: &str) -> String {
    format!(
        "{} at --block-gas {budget}: {what} (the source skips this case)",
        shape.label()
    )
}

impl ShapePlan {
    /// Sizes `shape` for blocks of `budget` gas (the source's `gas_benchmark_value`) under
    /// `spec` with transactions capped at `tx_cap` (the source's `tx_gas_limit`: EIP-7825's cap,
    /// or the block gas without one), for `blocks` blocks.
    pub fn new(
        shape: BalShape,
        spec: SpecId,
        budget: u64,
        tx_cap: Option<u64>,
        blocks: u64,
    ) -> Result<ShapePlan, String> {
        let costs = Costs::new(spec);
        let tx_cap = tx_cap.unwrap_or(budget).min(budget);
        let check_txs = |n: usize| -> Result<(), String> {
            if n as u64 > MAX_TXS_PER_BLOCK {
                return Err(format!(
                    "{}: {n} transactions per block, at most {MAX_TXS_PER_BLOCK} (lower --block-gas)",
                    shape.label()
                ));
            }
            Ok(())
        };
        let check_slots = |n: u64| -> Result<(), String> {
            if n > MAX_GENESIS_SLOTS {
                return Err(format!(
                    "{}: {n} genesis storage slots, at most {MAX_GENESIS_SLOTS} (lower --block-gas or --blocks)",
                    shape.label()
                ));
            }
            Ok(())
        };
        let deployed = |code: &Bytes, storage: Storage| AllocAccount {
            nonce: 1,
            code: code.clone(),
            storage,
            ..Default::default()
        };
        let address = |i: usize| {
            let base = U256::from_be_slice(CONTRACT_BASE.as_slice());
            Address::from_word((base + U256::from(i)).into())
        };
        let slot0 = || -> Storage { [(U256::ZERO, U256::from(1))].into() };
        match shape {
            BalShape::SerialChain => {
                let c = keccak_chain(&costs);
                let min = costs.intrinsic(&[], false) + c.setup_gas + c.reserve_gas;
                let schedule = tx_schedule(budget, min, tx_cap, Density::Greedy);
                if schedule.is_empty() {
                    return Err(too_small(shape, budget, "no transaction fits"));
                }
                check_txs(schedule.len())?;
                let contract = address(0);
                Ok(ShapePlan {
                    shape,
                    contracts: [(contract, deployed(&c.code, slot0()))].into(),
                    senders: schedule.len(),
                    kind: PlanKind::Calls {
                        targets: vec![contract; schedule.len()],
                    },
                    schedule,
                })
            }
            BalShape::MixedGraph { group, density } => {
                let c = keccak_chain(&costs);
                let min = costs.intrinsic(&[], false) + c.setup_gas + c.reserve_gas;
                let mut schedule = tx_schedule(budget, min, tx_cap, density);
                let groups = schedule.len() / group as usize;
                if groups == 0 {
                    return Err(too_small(
                        shape,
                        budget,
                        &format!(
                            "only {} transactions fit, fewer than a group",
                            schedule.len()
                        ),
                    ));
                }
                schedule.truncate(groups * group as usize);
                check_txs(schedule.len())?;
                let contracts: BTreeMap<Address, AllocAccount> = (0..groups)
                    .map(|g| (address(g), deployed(&c.code, slot0())))
                    .collect();
                // Round-robin: round r holds one transaction of every group.
                let targets = (0..schedule.len()).map(|i| address(i % groups)).collect();
                Ok(ShapePlan {
                    shape,
                    contracts,
                    senders: schedule.len(),
                    kind: PlanKind::Calls { targets },
                    schedule,
                })
            }
            BalShape::StateRoot { contracts, density } => {
                let c = sequential_sstore(&costs);
                let intrinsic = costs.intrinsic(&[0xff; 32], false);
                let min = intrinsic + c.setup_gas + c.reserve_gas;
                let schedule = tx_schedule(budget, min, tx_cap, density);
                if schedule.is_empty() {
                    return Err(too_small(shape, budget, "no transaction fits"));
                }
                check_txs(schedule.len())?;
                let n = schedule.len();
                // The gas execution starts with: the source subtracts the floor-inclusive
                // intrinsic gas, which on Amsterdam (64 gas per calldata byte) exceeds what is
                // deducted before execution, so its loop would write one slot more than it
                // counts and overlap the next range by one.
                let available =
                    schedule[0] - costs.deducted_before_execution(&[0xff; 32], false) - c.setup_gas;
                let slots_per_tx = (available / c.per_iter_gas).max(1);
                let count = if contracts == Contracts::PerTx { n } else { 1 };
                let txs_per_contract = n.div_ceil(count) as u64 * blocks;
                let slots_per_contract = (slots_per_tx + 1) * txs_per_contract;
                check_slots(slots_per_contract * count as u64)?;
                let storage: Storage = (0..slots_per_contract)
                    .map(|i| (U256::MAX - U256::from(i), U256::from(1)))
                    .collect();
                let accounts = (0..count)
                    .map(|k| (address(k), deployed(&c.code, storage.clone())))
                    .collect();
                Ok(ShapePlan {
                    shape,
                    contracts: accounts,
                    senders: n,
                    kind: PlanKind::StateRoot {
                        targets: (0..n).map(|i| address(i % count)).collect(),
                        contracts: count,
                        slots_per_tx,
                    },
                    schedule,
                })
            }
            BalShape::PrefetchCold => {
                let c = sload_chain(&costs);
                let intrinsic = costs.intrinsic(&[], false);
                let min = intrinsic + c.setup_gas + c.reserve_gas;
                let schedule = tx_schedule(budget, min, tx_cap, Density::Greedy);
                if schedule.is_empty() {
                    return Err(too_small(shape, budget, "no transaction fits"));
                }
                check_txs(schedule.len())?;
                let available =
                    schedule[0] - costs.deducted_before_execution(&[], false) - c.setup_gas;
                let slots_per_tx = (available / c.per_iter_gas).max(1);
                let total = (slots_per_tx + 1) * schedule.len() as u64 * blocks;
                check_slots(total + 2)?;
                let mut storage = Storage::new();
                let mut previous = U256::from(1);
                for key in hash_chain(total) {
                    storage.insert(previous, key);
                    previous = key;
                }
                storage.insert(previous, previous);
                storage.insert(POINTER_SLOT, U256::from(1));
                let contract = address(0);
                Ok(ShapePlan {
                    shape,
                    contracts: [(contract, deployed(&c.code, storage))].into(),
                    senders: schedule.len(),
                    kind: PlanKind::Calls {
                        targets: vec![contract; schedule.len()],
                    },
                    schedule,
                })
            }
            BalShape::DeployInteract { contracts, density } => {
                let c = keccak_chain(&costs);
                let init = initcode(&c.code)?;
                let intrinsic = costs.intrinsic(&[], false);
                // SSTORE(0, 1) of the init code: PUSH1 PUSH1 and a cold zero → non-zero write.
                let init_exec = 2 * VERYLOW + costs.sstore(true, U256::ZERO, U256::from(1));
                let top_frame_state = if spec.is_enabled_in(SpecId::AMSTERDAM) {
                    costs.params.create_state_gas()
                } else {
                    0
                };
                let deploy_gas = costs.intrinsic(&init, true)
                    + init_exec
                    + costs.code_deposit(c.code.len())
                    + top_frame_state
                    + 10_000;
                let min_call = intrinsic + c.setup_gas + c.reserve_gas;
                let pairs = contracts == Contracts::PerTx;
                let fraction = match density {
                    Density::Greedy => None,
                    Density::Half => Some(2),
                    Density::Max => Some(1),
                };
                let mut schedule = Vec::new();
                if pairs {
                    let per_pair_min = deploy_gas + min_call;
                    let n = match fraction {
                        None => {
                            let per_pair = deploy_gas + tx_cap;
                            let mut n = (budget / per_pair).max(1);
                            let remainder = budget.saturating_sub(n * per_pair);
                            if remainder >= per_pair_min {
                                n += 1;
                            }
                            n
                        }
                        Some(div) => (budget / per_pair_min / div).max(1),
                    };
                    let per_pair = budget / n;
                    if per_pair < per_pair_min {
                        return Err(too_small(shape, budget, "no deploy + call pair fits"));
                    }
                    let call = tx_cap.min(per_pair - deploy_gas);
                    check_txs(2 * n as usize)?;
                    for _ in 0..n {
                        schedule.push(deploy_gas);
                        schedule.push(call);
                    }
                } else {
                    let Some(call_budget) = budget.checked_sub(deploy_gas) else {
                        return Err(too_small(shape, budget, "the deployment does not fit"));
                    };
                    let n = match fraction {
                        None => {
                            let mut n = call_budget / tx_cap;
                            if call_budget - n * tx_cap >= min_call {
                                n += 1;
                            }
                            n
                        }
                        Some(div) => (call_budget / min_call / div).max(1),
                    };
                    if n == 0 || call_budget / n < min_call {
                        return Err(too_small(
                            shape,
                            budget,
                            "no call fits beside the deployment",
                        ));
                    }
                    let call = tx_cap.min(call_budget / n);
                    check_txs(n as usize + 1)?;
                    schedule.push(deploy_gas);
                    schedule.extend(std::iter::repeat_n(call, n as usize));
                }
                Ok(ShapePlan {
                    shape,
                    contracts: BTreeMap::new(),
                    senders: schedule.len(),
                    kind: PlanKind::Deploy {
                        initcode: init,
                        pairs,
                    },
                    schedule,
                })
            }
        }
    }

    /// The transactions of block `number` (1-based), in block order.
    pub fn block(&self, number: u64) -> Vec<ShapeTx> {
        let earlier = number.saturating_sub(1);
        self.schedule
            .iter()
            .enumerate()
            .map(|(i, &gas_limit)| {
                let (to, input) = match &self.kind {
                    PlanKind::Calls { targets } => (Target::Contract(targets[i]), Bytes::new()),
                    PlanKind::StateRoot {
                        targets,
                        contracts,
                        slots_per_tx,
                    } => {
                        // Transactions that hit this contract before: in earlier blocks
                        // (every block hits it alike) and earlier in this block.
                        let per_block = self.schedule.len().div_ceil(*contracts) as u64;
                        let count = earlier * per_block + (i / contracts) as u64;
                        let start = U256::MAX - U256::from(count) * U256::from(*slots_per_tx);
                        (
                            Target::Contract(targets[i]),
                            Bytes::from(start.to_be_bytes::<32>().to_vec()),
                        )
                    }
                    PlanKind::Deploy { initcode, pairs } => {
                        let deployer = if *pairs { i - i % 2 } else { 0 };
                        if i == deployer {
                            (Target::Create, initcode.clone())
                        } else {
                            (Target::CreatedBy(deployer), Bytes::new())
                        }
                    }
                };
                ShapeTx {
                    sender: i,
                    to,
                    input,
                    gas_limit,
                }
            })
            .collect()
    }
}

/// Resolves a [`Target`] for signing: the created contract's address is the deployer's
/// CREATE address at the nonce it deploys with (`nonces[n]` at the time of the deploy).
pub fn resolve(target: Target, addresses: &[Address], deploy_nonces: &[u64]) -> TxKind {
    match target {
        Target::Contract(a) => TxKind::Call(a),
        Target::Create => TxKind::Create,
        Target::CreatedBy(n) => TxKind::Call(addresses[n].create(deploy_nonces[n])),
    }
}

/// `workload` with the `gen` flags `--contracts`, `--density`, `--group` applied; an error
/// names a flag given for a workload that does not take it.
pub fn with_flags(
    workload: crate::Workload,
    contracts: Option<Contracts>,
    density: Option<Density>,
    group: Option<u16>,
) -> Result<crate::Workload, String> {
    let flags = [
        ("--contracts", contracts.is_some()),
        ("--density", density.is_some()),
        ("--group", group.is_some()),
    ];
    match workload.bal_shape() {
        Some(shape) => shape
            .with(contracts, density, group)
            .map(crate::Workload::Bal),

        None => match flags.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(format!(
                "{flag} applies to the bal-* workloads only, not {workload}"
            )),
            None => Ok(workload),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{builder::EIP7825_TX_GAS_CAP, generate, GenOptions, GeneratedChain, Workload};
    use alloy_eip7928::AccountChanges;
    use alloy_primitives::hex;
    use gigagas_data::{BlockInput, DataSource};
    use gigagas_engine::{prepare_chain, run_block, Mode};
    use gigagas_exec::{Scheduler, WorkerPool};
    use std::collections::{BTreeSet, HashMap};

    fn options(shape: BalShape, block_gas: u64, blocks: usize) -> GenOptions {
        GenOptions {
            workload: Workload::Bal(shape),
            blocks,
            block_gas,
            seed: 3,
            spec: SpecId::AMSTERDAM,
            tx_gas_cap: Some(EIP7825_TX_GAS_CAP),
            senders: 2,
            verify_threads: 2,
            precompiles: Vec::new(),
            slots: None,
            spread: false,
            existing_slots: false,
        }
    }

    /// Per-transaction gas used of each block, after the chain was written, loaded and every
    /// block verified through both paths (sequential against the header with its state
    /// root; parallel from the shipped BAL with every scheduler).
    fn verified(chain: &GeneratedChain) -> Vec<Vec<u64>> {
        let dir = tempfile::tempdir().expect("tempdir");
        chain.write(dir.path()).expect("write");
        let source = DataSource::open(dir.path()).expect("open");
        let dataset = gigagas_data::load(&source).expect("load");
        let blocks: &[BlockInput] = &dataset.blocks;
        assert_eq!(blocks.len(), chain.blocks.len());
        let cases = prepare_chain(blocks).expect("prepare");
        let pool = WorkerPool::new(2);
        let mut gas = Vec::new();
        for case in &cases {
            assert!(case.state_root_checked, "complete genesis: root checked");
            run_block(case, Mode::Sequential, None).expect("sequential run verifies");
            for scheduler in Scheduler::ALL {
                let mode = Mode::Parallel {
                    threads: 2,
                    scheduler,
                };
                run_block(case, mode, Some(&pool)).expect("parallel run verifies");
            }
            assert!(case.baseline.receipts.iter().all(|r| r.success));
            gas.push(case.baseline.receipts.iter().map(|r| r.gas_used).collect());
        }
        gas
    }

    fn account(bal: &[AccountChanges], address: Address) -> &AccountChanges {
        bal.iter()
            .find(|a| a.address == address)
            .unwrap_or_else(|| panic!("{address} not in the BAL"))
    }

    /// BAL indices (transaction index + 1) that write `slot` of `account`.
    fn writers(account: &AccountChanges, slot: U256) -> Vec<u64> {
        account
            .storage_changes
            .iter()
            .filter(|s| s.slot == slot)
            .flat_map(|s| s.changes.iter().map(|c| c.block_access_index.0))
            .collect()
    }

    #[test]
    fn keccak_chain_is_assembled_as_the_source_assembles_it() {
        // Amsterdam (revm 43): loop 75 gas, exit 26, cleanup 3·5 + 2,100 (cold SLOAD) +
        // 10,100 (warm non-zero SSTORE, EIP-8038) = 12,215 → reserve 12,316 = 0x301c.
        let c = keccak_chain(&Costs::new(SpecId::AMSTERDAM));
        assert_eq!(
            hex::encode(&c.code),
            concat!(
                "6001600052",       // MSTORE(0, 1)
                "5b",               // JUMPDEST
                "6020600020600052", // MSTORE(0, SHA3(0, 32))
                "61301c5a11",       // GT(GAS, 12316)
                "6300000013580357", // JUMPI(SUB(PC, 19))
                "60005160005401600055",
                "00" // SSTORE(0, ADD(SLOAD(0), MLOAD(0))) STOP
            )
        );
        assert_eq!(
            (c.setup_gas, c.per_iter_gas, c.reserve_gas),
            (12, 75, 12_316)
        );
        // Osaka prices the warm SSTORE at 2,900: reserve 75 + 26 + 15 + 2,100 + 2,900.
        assert_eq!(keccak_chain(&Costs::new(SpecId::OSAKA)).reserve_gas, 5_116);
        // The PUSH4 jumps back onto the loop's JUMPDEST: PC of `PC` minus 19.
        let pc_at = c.code.iter().position(|b| *b == PC).unwrap();
        assert_eq!(c.code[pc_at - 19], JUMPDEST);

        let init = initcode(&c.code).unwrap();
        let len = c.code.len();
        assert_eq!(
            hex::encode(&init[..16]),
            format!("600160005561{len:04x}60008160108239f3")
        );
        assert_eq!(&init[16..], &c.code[..]);
    }

    #[test]
    fn the_other_contracts_are_assembled_as_the_source_assembles_them() {
        let costs = Costs::new(SpecId::AMSTERDAM);
        let s = sequential_sstore(&costs);
        let code = hex::encode(&s.code);
        assert!(code.starts_with("6000356000525b7f"), "{code}");
        assert!(code.contains(&format!("{}6000515560016000510360005", "ff".repeat(32))));
        assert!(
            code.ends_with("580357") || code.ends_with("58035700"),
            "{code}"
        );
        assert_eq!(s.code.last(), Some(&STOP));
        // Body: 9 pushes/memory ops + a cold non-zero SSTORE (100 + 2,000 + 10,000).
        assert_eq!(s.per_iter_gas, 1 + 27 + 12_100 + 8 + 18);

        let p = sload_chain(&costs);
        let code = hex::encode(&p.code);
        assert!(
            code.starts_with(&format!("7f{}54600052", "ff".repeat(32))),
            "{code}"
        );
        assert!(
            code.ends_with(&format!("6000517f{}5500", "ff".repeat(32))),
            "{code}"
        );
        assert_eq!(p.per_iter_gas, 1 + 12 + 2_100 + 8 + 18);
    }

    #[test]
    fn schedules_follow_the_source() {
        let cap = EIP7825_TX_GAS_CAP;
        // 30M greedy: one transaction at the cap and the remainder.
        assert_eq!(
            tx_schedule(30_000_000, 30_000, cap, Density::Greedy),
            vec![cap, 30_000_000 - cap]
        );
        // A remainder below the minimum is dropped.
        assert_eq!(
            tx_schedule(2 * cap + 10, 30_000, cap, Density::Greedy),
            vec![cap, cap]
        );
        assert_eq!(
            tx_schedule(30_000_000, 30_000, cap, Density::Max),
            vec![30_000; 1000]
        );
        assert_eq!(
            tx_schedule(30_000_000, 30_000, cap, Density::Half),
            vec![60_000; 500]
        );
        // Fewer than one transaction's gas: the source's max(1, ·) keeps one at the minimum.
        assert_eq!(tx_schedule(10_000, 30_000, cap, Density::Max), vec![30_000]);
        assert!(tx_schedule(10_000, 30_000, cap, Density::Greedy).is_empty());
    }

    #[test]
    fn names_parameters_and_the_named_set() {
        let set = eest_bal_set();
        assert_eq!(set.len(), 23);
        let labels: BTreeSet<String> = set.iter().map(|s| s.label()).collect();
        assert_eq!(labels.len(), 23, "every member distinct");
        for shape in &set {
            assert!(shape.in_source());
            let w: Workload = shape.label().parse().unwrap();
            assert_eq!(w, Workload::Bal(*shape), "{}", shape.label());
            assert_eq!(w.to_string(), shape.label());
        }
        let w: Workload = "bal-mixed-graph:half:group-5".parse().unwrap();
        assert_eq!(
            w,
            Workload::Bal(BalShape::MixedGraph {
                group: 5,
                density: Density::Half
            })
        );
        for bad in [
            "bal-serial-chain:max",
            "bal-state-root:group-2",
            "bal-mixed-graph:per-tx",
            "bal-mixed-graph:group-0",
            "bal-state-root:dense",
            "erc20:max",
        ] {
            assert!(bad.parse::<Workload>().is_err(), "{bad}");
        }
        let e = with_flags(Workload::Erc20, None, Some(Density::Max), None).unwrap_err();
        assert!(e.contains("--density") && e.contains("erc20"), "{e}");
        let e = with_flags(
            Workload::Bal(BalShape::SerialChain),
            None,
            Some(Density::Max),
            None,
        )
        .unwrap_err();
        assert!(
            e.contains("--density") && e.contains("bal-serial-chain"),
            "{e}"
        );

        // The set at 30M: group 5 at greedy density (2 transactions) is skipped as the
        // source skips it; named alone it is an error.
        let sets = ["eest-bal".parse::<crate::WorkloadSet>().unwrap()];
        let crate::Expanded { pairs, skipped } =
            crate::expand_sets(&sets, &[30_000_000], Some(EIP7825_TX_GAS_CAP)).unwrap();
        assert_eq!(pairs.len() + skipped.len(), 23);
        assert!(
            skipped.iter().any(|s| s.contains("group-5:greedy")),
            "{skipped:?}"
        );
        assert!(skipped.iter().all(|s| s.contains("group")), "{skipped:?}");
        let alone = ["bal-mixed-graph:group-5:greedy".parse().unwrap()];
        assert!(crate::expand_sets(&alone, &[30_000_000], Some(EIP7825_TX_GAS_CAP)).is_err());
        let crate::Expanded { pairs, skipped } =
            crate::expand_sets(&sets, &[300_000_000], Some(EIP7825_TX_GAS_CAP)).unwrap();
        assert_eq!((pairs.len(), skipped.len()), (23, 0));
    }

    #[test]
    fn serial_chain_conflicts_on_slot_zero_yet_runs_in_parallel_from_the_bal() {
        // 100M: five transactions at the 2^24 cap and a remainder of 16.1M.
        let chain = generate(&options(BalShape::SerialChain, 100_000_000, 1), &|_| {}).unwrap();
        let gas = verified(&chain);
        let block = &chain.blocks[0];
        let t = block.block.body.transactions.len() as u64;
        assert_eq!(t, 6);
        let contract = account(&block.bal, CONTRACT_BASE);
        // Every transaction reads and writes slot 0, and nothing else of the contract.
        assert_eq!(writers(contract, U256::ZERO), (1..=t).collect::<Vec<_>>());
        assert!(contract.storage_reads.is_empty());
        assert_eq!(contract.storage_changes.len(), 1);
        // From the BAL each transaction is independent: the critical-path bound (by gas) is
        // Σ gas / max gas ≈ T, not 1.
        let total: u64 = gas[0].iter().sum();
        let longest = *gas[0].iter().max().unwrap();
        let bound = total as f64 / longest as f64;
        assert!(bound > 0.95 * t as f64, "bound {bound:.2} for {t} txs");
        // Each transaction used (nearly) all its gas: the loop ran to its reserve.
        for (tx, used) in block.block.body.transactions.iter().zip(&gas[0]) {
            let limit = alloy_consensus::Transaction::gas_limit(tx);
            assert!(limit - used < 13_000, "{used} of {limit}");
        }
    }

    #[test]
    fn state_root_writes_disjoint_cold_slots() {
        for contracts in Contracts::ALL {
            for density in [Density::Greedy, Density::Max] {
                let shape = BalShape::StateRoot { contracts, density };
                let chain = generate(&options(shape, 30_000_000, 2), &|_| {})
                    .unwrap_or_else(|e| panic!("{}: {e}", shape.label()));
                verified(&chain);
                let plan = ShapePlan::new(
                    shape,
                    SpecId::AMSTERDAM,
                    30_000_000,
                    Some(EIP7825_TX_GAS_CAP),
                    2,
                )
                .unwrap();
                let mut seen: BTreeSet<(Address, U256)> = BTreeSet::new();
                let mut txs = 0;
                for block in &chain.blocks {
                    txs += block.block.body.transactions.len();
                    let mut per_index: HashMap<u64, usize> = HashMap::new();
                    for (address, pre) in &plan.contracts {
                        let a = account(&block.bal, *address);
                        assert!(
                            a.storage_reads.is_empty(),
                            "{}: reads {:?} changes {}",
                            shape.label(),
                            &a.storage_reads[..a.storage_reads.len().min(4)],
                            a.storage_changes.len()
                        );
                        for s in &a.storage_changes {
                            // Written once in the block, with 2^256 − 1, a pre-populated slot,
                            // never written by an earlier block.
                            assert_eq!(s.changes.len(), 1, "{}", shape.label());
                            assert_eq!(s.changes[0].new_value, U256::MAX);
                            assert_eq!(pre.storage.get(&s.slot), Some(&U256::from(1)));
                            assert!(seen.insert((*address, s.slot)), "slot written twice");
                            *per_index
                                .entry(s.changes[0].block_access_index.0)
                                .or_default() += 1;
                        }
                    }
                    // Every transaction wrote its own slots.
                    let n = block.block.body.transactions.len() as u64;
                    assert_eq!(per_index.len() as u64, n, "{}", shape.label());
                }
                assert!(seen.len() >= txs, "{}", shape.label());
                if density == Density::Max {
                    assert!(txs > 1000, "{}: {txs} txs", shape.label());
                }
            }
        }
    }

    #[test]
    fn prefetch_chain_keys_are_storage_reads_only() {
        let chain = generate(&options(BalShape::PrefetchCold, 30_000_000, 2), &|_| {}).unwrap();
        verified(&chain);
        let hashed: BTreeSet<U256> = hash_chain(40_000).collect();
        let mut keys = hashed.clone();
        keys.insert(U256::from(1));
        let mut read = BTreeSet::new();
        for block in &chain.blocks {
            let n = block.block.body.transactions.len() as u64;
            assert_eq!(n, 2);
            let c = account(&block.bal, CONTRACT_BASE);
            // Only the pointer slot changes, once per transaction.
            assert_eq!(c.storage_changes.len(), 1);
            assert_eq!(c.storage_changes[0].slot, POINTER_SLOT);
            assert_eq!(writers(c, POINTER_SLOT), (1..=n).collect::<Vec<_>>());
            // Every read is a chain key, read in no other block either.
            for slot in &c.storage_reads {
                assert!(keys.contains(slot), "{slot} is not a chain key");
                assert!(read.insert(*slot), "{slot} read twice");
            }
            // No hashed chain key anywhere else in the BAL (slot 1, the seed, is also a slot
            // of the EIP-2935 history contract).
            for a in &block.bal {
                for s in &a.storage_changes {
                    assert!(!hashed.contains(&s.slot));
                }
                if a.address != CONTRACT_BASE {
                    assert!(a.storage_reads.iter().all(|s| !hashed.contains(s)));
                }
            }
        }
        // 30M of cold SLOADs at ~2,140 gas each: thousands of keys per block.
        assert!(read.len() > 2 * 10_000, "{} keys read", read.len());
        // The walk is contiguous from slot 1: the keys read are the chain's first ones.
        let first: BTreeSet<U256> = std::iter::once(U256::from(1))
            .chain(hash_chain(read.len() as u64 - 1))
            .collect();
        assert_eq!(read, first);
    }

    #[test]
    fn a_deployment_is_visible_to_its_call_at_the_next_index() {
        for contracts in Contracts::ALL {
            for density in [Density::Greedy, Density::Half] {
                let shape = BalShape::DeployInteract { contracts, density };
                let chain = generate(&options(shape, 30_000_000, 2), &|_| {})
                    .unwrap_or_else(|e| panic!("{}: {e}", shape.label()));
                let gas = verified(&chain);
                let runtime = keccak_chain(&Costs::new(SpecId::AMSTERDAM)).code;
                for (block, gas) in chain.blocks.iter().zip(&gas) {
                    let txs = &block.block.body.transactions;
                    let mut deployed = 0;
                    for (i, tx) in txs.iter().enumerate() {
                        if !alloy_consensus::Transaction::kind(tx).is_create() {
                            continue;
                        }
                        deployed += 1;
                        let sender = block.senders[i];
                        let nonce = alloy_consensus::Transaction::nonce(tx);
                        let created = sender.create(nonce);
                        let a = account(&block.bal, created);
                        // The code change at the deployment's index ...
                        assert_eq!(a.code_changes.len(), 1);
                        assert_eq!(a.code_changes[0].block_access_index.0, i as u64 + 1);
                        assert_eq!(a.code_changes[0].new_code, runtime);
                        // ... and the next transaction calls it and runs its code (its
                        // slot-0 write, most of its gas used).
                        let next = &txs[i + 1];
                        assert_eq!(alloy_consensus::Transaction::to(next), Some(created));
                        assert!(writers(a, U256::ZERO).contains(&(i as u64 + 2)));
                        let limit = alloy_consensus::Transaction::gas_limit(next);
                        assert!(limit - gas[i + 1] < 13_000, "{}", shape.label());
                        // Its slot 0 is written by its init code and then only by later calls.
                        assert!(writers(a, U256::ZERO).iter().all(|&k| k > i as u64));
                    }
                    match contracts {
                        Contracts::PerTx => assert_eq!(deployed * 2, txs.len()),
                        Contracts::Single => {
                            assert_eq!(deployed, 1);
                            assert!(txs.len() >= 2);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn mixed_graph_groups_are_serial_inside_and_independent_across() {
        for group in SOURCE_GROUPS {
            let shape = BalShape::MixedGraph {
                group,
                density: Density::Half,
            };
            let chain = generate(&options(shape, 30_000_000, 1), &|_| {}).unwrap();
            verified(&chain);
            let block = &chain.blocks[0];
            let n = block.block.body.transactions.len() as u64;
            let groups = n / group as u64;
            assert_eq!(n % group as u64, 0);
            assert!(groups > 1, "{groups} groups");
            for g in 0..groups {
                let address = Address::from_word(
                    (U256::from_be_slice(CONTRACT_BASE.as_slice()) + U256::from(g)).into(),
                );
                let a = account(&block.bal, address);
                // Round-robin: group g's transactions sit at g, g + groups, ... and only they
                // write its slot 0 (serial inside).
                let expected: Vec<u64> = (0..group as u64).map(|r| r * groups + g + 1).collect();
                assert_eq!(
                    writers(a, U256::ZERO),
                    expected,
                    "group {g} of size {group}"
                );
                assert_eq!(a.storage_changes.len(), 1);
            }
            // Independent across: no storage slot is touched by two groups.
            for a in &block.bal {
                for s in &a.storage_changes {
                    // Transactions only (system calls at 0 and n + 1 are no group's).
                    let touching: BTreeSet<u64> = s
                        .changes
                        .iter()
                        .map(|c| c.block_access_index.0)
                        .filter(|k| (1..=n).contains(k))
                        .map(|k| (k - 1) % groups)
                        .collect();
                    assert!(touching.len() <= 1, "{} slot {} shared", a.address, s.slot);
                }
            }
        }
    }
}
