//! Workloads: a genesis allocation and a deterministic stream of transactions each.

use crate::contracts::{self, call, mapping_slot, nested_mapping_slot, word, Storage};
pub use crate::eest::BalShape;
use alloy_primitives::{keccak256, Address, Bytes, TxKind, U256};
use gigagas_data::chain::{AllocAccount, StorageFill};
use rand::{rngs::StdRng, Rng};
use revm::primitives::hardfork::SpecId;
use std::collections::BTreeMap;

/// The workloads `gigagas gen` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// ETH transfers between funded accounts.
    Transfers,
    /// ERC-20 transfers between holders.
    Erc20,
    /// Swaps through a router over three constant-product pairs (hot reserve slots).
    Uniswap,
    /// NFT mints: every mint bumps one shared counter.
    NftMint,
    /// Transfers, token transfers, swaps, mints, storage spam and failing transactions in
    /// mainnet-like proportions.
    MainnetMix,
    /// Every transaction reads the slot the previous one wrote.
    SerialChain,
    /// One transaction carries most of the block's gas (a keccak loop), transfers fill the rest.
    LongTx,
    /// Cold SSTOREs (new slots, new values, same values, zeroing) into one account with a
    /// large storage (`--slots`, default 1M), or into many (`--spread`).
    SstoreBloated,
    /// keccak loops.
    Keccak,
    /// Precompile-heavy calls (ecrecover, modexp, point evaluation).
    Precompile,
    /// EIP-7702 transactions: each delegates an EOA and calls into it.
    Eip7702,
    /// One of the EIP-7928 benchmark shapes of ethereum/execution-specs, with its
    /// parameters ([`crate::eest`]).
    Bal(BalShape),
}

impl Workload {
    /// Every workload, in CLI order (the EIP-7928 shapes with their default parameters).
    pub const ALL: [Workload; 16] = [
        Self::Transfers,
        Self::Erc20,
        Self::Uniswap,
        Self::NftMint,
        Self::MainnetMix,
        Self::SerialChain,
        Self::LongTx,
        Self::SstoreBloated,
        Self::Keccak,
        Self::Precompile,
        Self::Eip7702,
        Self::Bal(BalShape::DEFAULTS[0]),
        Self::Bal(BalShape::DEFAULTS[1]),
        Self::Bal(BalShape::DEFAULTS[2]),
        Self::Bal(BalShape::DEFAULTS[3]),
        Self::Bal(BalShape::DEFAULTS[4]),
    ];

    /// CLI name (without parameters; [`std::fmt::Display`] adds an EIP-7928 shape's).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bal(shape) => shape.name(),
            Self::Transfers => "transfers",
            Self::Erc20 => "erc20",
            Self::Uniswap => "uniswap",
            Self::NftMint => "nft-mint",
            Self::MainnetMix => "mainnet-mix",
            Self::SerialChain => "serial-chain",
            Self::LongTx => "long-tx",
            Self::SstoreBloated => "sstore-bloated",
            Self::Keccak => "keccak",
            Self::Precompile => "precompile",
            Self::Eip7702 => "7702",
        }
    }
}

impl Workload {
    /// The EIP-7928 shape, if this is one.
    pub fn bal_shape(self) -> Option<BalShape> {
        match self {
            Self::Bal(shape) => Some(shape),
            _ => None,
        }
    }
}

/// Parses a workload name; an EIP-7928 shape may carry its parameters after colons
/// (`bal-state-root:per-tx:max`, `bal-mixed-graph:group-5:half`).
impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default();
        let workload = Self::ALL
            .into_iter()
            .find(|w| w.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload {s:?} (one of: {})", names.join(", "))
            })?;
        match workload {
            Self::Bal(shape) => Ok(Self::Bal(shape.parse_params(parts)?)),
            _ if s.contains(':') => Err(format!(
                "workload {name} takes no parameters after ':' (only the bal-* shapes do)"
            )),
            _ => Ok(workload),
        }
    }
}

/// The CLI name; an EIP-7928 shape with its parameters ([`BalShape::label`]).
impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Bal(shape) => f.write_str(&shape.label()),
            _ => f.write_str(self.name()),
        }
    }
}

/// What `--workload` of `bench` and `differential` takes: a workload, or the named set
/// [`crate::eest::EEST_BAL_SET`] (`eest-bal`: the five EIP-7928 shapes with every parameter
/// set of their source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkloadSet {
    /// One workload.
    One(Workload),
    /// `eest-bal`.
    EestBal,
}

impl WorkloadSet {
    /// The workloads, in order.
    pub fn workloads(&self) -> Vec<Workload> {
        match self {
            Self::One(w) => vec![*w],
            Self::EestBal => crate::eest::eest_bal_set()
                .into_iter()
                .map(Workload::Bal)
                .collect(),
        }
    }

    /// Whether this names a set (whose members that do not fit a block size are skipped, as
    /// the source skips them) rather than one workload (which must fit).
    pub fn is_set(&self) -> bool {
        matches!(self, Self::EestBal)
    }
}

impl std::str::FromStr for WorkloadSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == crate::eest::EEST_BAL_SET {
            return Ok(Self::EestBal);
        }
        s.parse::<Workload>()
            .map(Self::One)
            .map_err(|e| format!("{e}, or the set {}", crate::eest::EEST_BAL_SET))
    }
}

/// What [`expand_sets`] makes of workload sets and block sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expanded {
    /// Workload × block gas, in order, each once.
    pub pairs: Vec<(Workload, u64)>,
    /// Members of named sets skipped because they do not fit a size, each with the reason.
    pub skipped: Vec<String>,
}

/// Workload × block gas pairs of `sets` at each of `block_gas`, and the members of named sets
/// that were skipped because they do not fit a size (as the source skips them), each with
/// the reason. A workload named on its own that does not fit is an error. `tx_cap`: the
/// transaction gas cap the chains are generated with.
pub fn expand_sets(
    sets: &[WorkloadSet],
    block_gas: &[u64],
    tx_cap: Option<u64>,
) -> Result<Expanded, String> {
    let mut pairs = Vec::new();
    let mut skipped = Vec::new();
    for set in sets {
        for workload in set.workloads() {
            for &gas in block_gas {
                if let Some(shape) = workload.bal_shape() {
                    // Sized for one block: whether it fits does not depend on the count.
                    if let Err(e) =
                        crate::eest::ShapePlan::new(shape, SpecId::AMSTERDAM, gas, tx_cap, 1)
                    {
                        if set.is_set() {
                            skipped.push(e);
                            continue;
                        }
                        return Err(e);
                    }
                }
                if !pairs.contains(&(workload, gas)) {
                    pairs.push((workload, gas));
                }
            }
        }
    }
    Ok(Expanded { pairs, skipped })
}

/// A precompile the `precompile` workload calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precompile {
    /// 0x01: secp256k1 public-key recovery, 20 calls per transaction.
    Ecrecover,
    /// 0x05: 1024-bit modular exponentiation with a 256-bit exponent, 5 calls per transaction.
    Modexp,
    /// 0x0a: EIP-4844 KZG point evaluation (a valid proof), 10 calls per transaction.
    PointEvaluation,
}

impl Precompile {
    /// Every precompile the workload knows, in CLI order.
    pub const ALL: [Precompile; 3] = [Self::Ecrecover, Self::Modexp, Self::PointEvaluation];

    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ecrecover => "ecrecover",
            Self::Modexp => "modexp",
            Self::PointEvaluation => "point-evaluation",
        }
    }

    /// The contract's selector, calls per transaction, and the precompile's input.
    fn call(self) -> (u64, u64, Bytes) {
        match self {
            Self::Ecrecover => (0, 20, ecrecover_input()),
            Self::Modexp => (1, 5, modexp_input()),
            Self::PointEvaluation => (2, 10, point_evaluation_input()),
        }
    }
}

impl std::str::FromStr for Precompile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
                format!("unknown precompile {s:?} (one of: {})", names.join(", "))
            })
    }
}

/// What one transaction should do; the builder fills in nonce and gas limit and signs it.
#[derive(Debug, Clone)]
pub struct TxPlan {
    /// Index of the sending key.
    pub sender: usize,
    /// Recipient, or a contract creation.
    pub to: TxKind,
    /// Value in wei.
    pub value: U256,
    /// Call data.
    pub input: Bytes,
    /// EIP-7702: index of a delegate key whose EOA delegates to this address in the same tx.
    pub delegate: Option<(usize, Address)>,
    /// Caps this transaction's gas limit (`None`: the builder's cap).
    pub gas_cap: Option<u64>,
}

/// Genesis slots of `sstore-bloated` unless `--slots` says otherwise.
pub const DEFAULT_BLOATED_SLOTS: u64 = 1_000_000;
/// Most genesis slots `sstore-bloated` takes (the loader's bound on `storage_fill`).
pub const MAX_BLOATED_SLOTS: u64 = gigagas_data::chain::MAX_FILL_SLOTS;
/// Slot `i` of a bloated account holds `(i mod BLOAT_PERIOD) + 1`, so that the slots
/// `r, r + 4, r + 8, ...` share one value (a transaction can rewrite many of them with
/// the value they already hold).
pub const BLOAT_PERIOD: u64 = 4;
/// First of the `--spread` accounts (then `+ 1`, `+ 2`, ...).
pub const SPREAD_BASE: Address =
    alloy_primitives::address!("0x00000000000000000000000000000000d0000000");
/// Cold SSTOREs per `sstore-bloated` transaction into existing slots (new value, same value,
/// to zero).
pub const BLOAT_EXISTING_PER_TX: u64 = 100;
/// Cold SSTOREs per `sstore-bloated` transaction into new slots (zero to non-zero: 20,000
/// gas more each before Amsterdam).
pub const BLOAT_NEW_PER_TX: u64 = 55;

/// Gas budget of an `sstore-bloated` transaction besides its SSTOREs (intrinsic gas, call
/// data, dispatch), with room to spare.
const TX_OVERHEAD_GAS: u64 = 60_000;
/// Gas budget of one cold SSTORE into an existing slot under `spec`, with room to spare:
/// measured 5,230 before Amsterdam (2,100 + 2,900 and the loop), 12,250 on Amsterdam.
pub fn existing_slot_gas(spec: SpecId) -> u64 {
    if spec.is_enabled_in(SpecId::AMSTERDAM) {
        13_500
    } else {
        5_600
    }
}

/// Gas budget of one cold SSTORE into a new slot under `spec`: 22,100 and the loop, plus
/// EIP-8037's state gas from Amsterdam on (64 state bytes × 1,530; measured 110,500 in
/// all).
pub fn new_slot_gas(spec: SpecId) -> u64 {
    let regular = 22_700;
    if spec.is_enabled_in(SpecId::AMSTERDAM) {
        regular
            + revm::primitives::eip8037::SSTORE_SET_BYTES
                * revm::primitives::eip8037::CPSB_GLAMSTERDAM
    } else {
        regular
    }
}

/// How `sstore-bloated` lays out its genesis storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bloat {
    /// Slots over all bloated accounts.
    pub slots: u64,
    /// Spread them over [`spread_accounts`] accounts instead of one.
    pub spread: bool,
}

impl Default for Bloat {
    fn default() -> Self {
        Self {
            slots: DEFAULT_BLOATED_SLOTS,
            spread: false,
        }
    }
}

/// Accounts of `--spread` for `slots` slots: ⌈√slots⌉ (1,000 accounts of 1,000 slots at
/// 1M; 3,163 of about 3,162 at 10M), so accounts and slots per account grow alike.
pub fn spread_accounts(slots: u64) -> u64 {
    let mut k = (slots as f64).sqrt() as u64;
    while k * k < slots {
        k += 1;
    }
    while k > 1 && (k - 1) * (k - 1) >= slots {
        k -= 1;
    }
    k.max(1)
}

/// The genesis accounts of a workload whose storage follows a rule (`chain.json`'s
/// `storage_fill`): `sstore-bloated`'s StorageSpam account(s), none for the others.
pub fn storage_fills(workload: Workload, bloat: &Bloat) -> Vec<StorageFill> {
    if workload != Workload::SstoreBloated {
        return Vec::new();
    }
    let (address, accounts) = if bloat.spread {
        (SPREAD_BASE, spread_accounts(bloat.slots))
    } else {
        (contracts::SPAM, 1)
    };
    vec![StorageFill {
        address,
        accounts,
        slots: bloat.slots,
        period: BLOAT_PERIOD,
        nonce: 1,
        code: contracts::code("StorageSpam"),
    }]
}

/// Token units each holder starts with.
const HOLDING: u64 = 1_000_000_000_000;

/// Where a workload's contracts live. Generated chains put them at the fixed addresses of
/// [`contracts`] ([`Layout::FIXED`]); a live node (`gigagas inject`) gets them wherever their
/// deploying transactions create them, and every address the genesis storage and the
/// transaction stream name follows the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Token A (ERC-20).
    pub token_a: Address,
    /// Token B (ERC-20).
    pub token_b: Address,
    /// Constant-product pairs of A/B.
    pub pairs: [Address; 3],
    /// The swap router.
    pub router: Address,
    /// NFT mint contract.
    pub nft: Address,
    /// Storage spam / overwrite contract.
    pub spam: Address,
    /// Keccak loop.
    pub compute: Address,
    /// Serial-chain contract.
    pub serial: Address,
    /// Precompile caller.
    pub precompiles: Address,
}

impl Layout {
    /// The fixed addresses of generated chains.
    pub const FIXED: Layout = Layout {
        token_a: contracts::TOKEN_A,
        token_b: contracts::TOKEN_B,
        pairs: contracts::PAIRS,
        router: contracts::ROUTER,
        nft: contracts::NFT,
        spam: contracts::SPAM,
        compute: contracts::COMPUTE,
        serial: contracts::SERIAL,
        precompiles: contracts::PRECOMPILES,
    };

    /// The layout with every fixed address replaced through `map` (addresses it does not
    /// name stay).
    pub fn mapped(map: &dyn Fn(Address) -> Address) -> Layout {
        let f = Self::FIXED;
        Layout {
            token_a: map(f.token_a),
            token_b: map(f.token_b),
            pairs: f.pairs.map(map),
            router: map(f.router),
            nft: map(f.nft),
            spam: map(f.spam),
            compute: map(f.compute),
            serial: map(f.serial),
            precompiles: map(f.precompiles),
        }
    }
}

/// Accounts the workload needs besides the funded senders.
pub fn genesis(workload: Workload, senders: &[Address]) -> BTreeMap<Address, AllocAccount> {
    genesis_at(workload, senders, &Layout::FIXED)
}

/// [`genesis`] with the contracts at `layout` (storage that names a contract names it there).
pub fn genesis_at(
    workload: Workload,
    senders: &[Address],
    layout: &Layout,
) -> BTreeMap<Address, AllocAccount> {
    let mut alloc = BTreeMap::new();
    let contract = |name: &str, storage: Storage| AllocAccount {
        nonce: 1,
        code: contracts::code(name),
        storage,
        ..Default::default()
    };
    let uses = |w: &[Workload]| w.contains(&workload) || workload == Workload::MainnetMix;
    if uses(&[Workload::Erc20, Workload::Uniswap]) {
        for token in [layout.token_a, layout.token_b] {
            let mut storage: Storage = BTreeMap::new();
            let mut supply = U256::ZERO;
            for s in senders {
                storage.insert(mapping_slot(*s, 0), U256::from(HOLDING));
                // Unlimited allowance for the router.
                storage.insert(nested_mapping_slot(*s, layout.router, 1), U256::MAX);
                supply += U256::from(HOLDING);
            }
            for pair in layout.pairs {
                storage.insert(
                    mapping_slot(pair, 0),
                    U256::from(HOLDING) * U256::from(1000),
                );
                supply += U256::from(HOLDING) * U256::from(1000);
            }
            storage.insert(U256::from(2), supply);
            alloc.insert(token, contract("Token", storage));
        }
        for pair in layout.pairs {
            let reserve = U256::from(HOLDING) * U256::from(1000);
            let storage: Storage = [
                (U256::ZERO, word(layout.token_a)),
                (U256::from(1), word(layout.token_b)),
                (U256::from(2), reserve),
                (U256::from(3), reserve),
            ]
            .into();
            alloc.insert(pair, contract("Pair", storage));
        }
        alloc.insert(layout.router, contract("Router", BTreeMap::new()));
    }
    if uses(&[Workload::NftMint]) {
        alloc.insert(layout.nft, contract("Nft", BTreeMap::new()));
    }
    // sstore-bloated's StorageSpam accounts come from `storage_fills`.
    if uses(&[Workload::Eip7702]) {
        alloc.insert(layout.spam, contract("StorageSpam", BTreeMap::new()));
    }
    if uses(&[Workload::Keccak, Workload::LongTx]) {
        alloc.insert(layout.compute, contract("Compute", BTreeMap::new()));
    }
    if uses(&[Workload::SerialChain]) {
        alloc.insert(layout.serial, contract("SerialChain", BTreeMap::new()));
    }
    if uses(&[Workload::Precompile]) {
        alloc.insert(layout.precompiles, contract("Precompiles", BTreeMap::new()));
    }
    alloc
}

/// A valid ecrecover input (hash, v, r, s) — any signature of the scenario's keys works.
fn ecrecover_input() -> Bytes {
    // keccak("gigagas") signed by a fixed key; computed once at build time would need the
    // signer here, so any well-formed (v, r, s) with r, s in range is used: the precompile
    // returns an address or empty output, both of which cost the same gas.
    let mut input = keccak256("gigagas").to_vec();
    input.extend_from_slice(&U256::from(27).to_be_bytes::<32>());
    input.extend_from_slice(
        &U256::from_be_bytes(keccak256("r").0)
            .wrapping_shr(4)
            .to_be_bytes::<32>(),
    );
    input.extend_from_slice(
        &U256::from_be_bytes(keccak256("s").0)
            .wrapping_shr(4)
            .to_be_bytes::<32>(),
    );
    input.into()
}

/// modexp input: 128-byte base and modulus (odd), 32-byte exponent with the top bit set
/// (EIP-2565/EIP-7883 price it by the modulus size and the exponent's bit length).
fn modexp_input() -> Bytes {
    let len = |n: u64| U256::from(n).to_be_bytes::<32>();
    let fill = |seed: &str, n: usize| -> Vec<u8> {
        (0..n.div_ceil(32))
            .flat_map(|i| keccak256(format!("{seed}{i}")).0)
            .take(n)
            .collect()
    };
    let mut input = Vec::with_capacity(96 + 128 + 32 + 128);
    input.extend_from_slice(&len(128));
    input.extend_from_slice(&len(32));
    input.extend_from_slice(&len(128));
    input.extend(fill("base", 128));
    let mut exponent = fill("exponent", 32);
    exponent[0] |= 0x80;
    input.extend(exponent);
    let mut modulus = fill("modulus", 128);
    modulus[0] |= 0x80;
    modulus[127] |= 1;
    input.extend(modulus);
    input.into()
}

/// Point-evaluation input proving that the zero polynomial evaluates to 0 at z = 0: the
/// commitment and the proof are the G1 point at infinity (a valid proof, so the precompile
/// does the full pairing check). Versioned hash = 0x01 ‖ sha256(commitment)[1..].
fn point_evaluation_input() -> Bytes {
    use sha2::Digest;
    let mut infinity = [0u8; 48];
    infinity[0] = 0xc0;
    let mut versioned_hash: [u8; 32] = sha2::Sha256::digest(infinity).into();
    versioned_hash[0] = 0x01;
    let mut input = Vec::with_capacity(192);
    input.extend_from_slice(&versioned_hash);
    input.extend_from_slice(&[0u8; 64]); // z, y
    input.extend_from_slice(&infinity); // commitment
    input.extend_from_slice(&infinity); // proof
    input.into()
}

/// `overwrite(first, stride, count, value)` of StorageSpam.
fn overwrite(first: u64, stride: u64, count: u64, value: U256) -> Bytes {
    let n = U256::from;
    call(
        "overwrite(uint256,uint256,uint256,uint256)",
        &[n(first), n(stride), n(count), value],
    )
}

/// Streams the transactions of a workload.
#[derive(Debug)]
pub struct TxStream {
    workload: Workload,
    /// Precompiles the `precompile` workload cycles through.
    precompiles: Vec<Precompile>,
    senders: usize,
    count: u64,
    /// Gas the long transaction of the current block may use (set per block).
    pub long_tx_gas: u64,
    long_tx_sent: bool,
    /// Where the contracts the transactions call live.
    layout: Layout,
    /// `sstore-bloated`'s accounts, their genesis slot counts and next new slot.
    bloated: Vec<BloatedAccount>,
    /// Gas budget of one new-slot SSTORE under the chain's fork (state gas included).
    new_slot_gas: u64,
    /// Gas budget of one SSTORE into an existing slot under the chain's fork.
    existing_slot_gas: u64,
    /// An EIP-7928 shape's plan: its blocks hold exactly the planned transactions.
    shape: Option<crate::eest::ShapePlan>,
    /// `sstore-bloated` writes new values to existing slots only
    /// ([`crate::GenOptions::existing_slots`]).
    existing_only: bool,
    /// The rest of the current block's planned transactions (EIP-7928 shapes).
    queue: std::collections::VecDeque<TxPlan>,
}

/// An `sstore-bloated` target.
#[derive(Debug, Clone)]
struct BloatedAccount {
    address: Address,
    /// Genesis slots `0..slots`.
    slots: u64,
    /// Next slot never written (from `slots` on).
    next_new: u64,
    /// Transactions sent into the account in existing-slots mode (the next residue).
    next_residue: u64,
}

impl TxStream {
    /// A stream over `senders` funded keys; the `precompile` workload cycles through
    /// `precompiles` (all of them when empty).
    pub fn new(workload: Workload, senders: usize, precompiles: &[Precompile]) -> Self {
        Self {
            workload,
            precompiles: if precompiles.is_empty() {
                Precompile::ALL.to_vec()
            } else {
                precompiles.to_vec()
            },
            senders,
            count: 0,
            long_tx_gas: 0,
            long_tx_sent: false,
            layout: Layout::FIXED,
            bloated: Vec::new(),
            new_slot_gas: 0,
            existing_slot_gas: 0,
            shape: None,
            queue: Default::default(),
            existing_only: false,
        }
    }

    /// The stream of an EIP-7928 shape sized by `plan`: each block holds exactly the
    /// plan's transactions ([`TxStream::plan_block`], then [`TxStream::next`] until `None`).
    pub fn with_shape(mut self, plan: crate::eest::ShapePlan) -> Self {
        self.shape = Some(plan);
        self
    }

    /// Queues block `number`'s planned transactions (EIP-7928 shapes; nothing for the other
    /// workloads). `addresses` are the senders' addresses and `nonces` their nonces before the
    /// block (a created contract's address follows from its deployer's).
    pub fn plan_block(&mut self, number: u64, addresses: &[Address], nonces: &[u64]) {
        let Some(plan) = &self.shape else {
            return;
        };
        self.queue = plan
            .block(number)
            .into_iter()
            .map(|tx| TxPlan {
                sender: tx.sender,
                to: crate::eest::resolve(tx.to, addresses, nonces),
                value: U256::ZERO,
                input: tx.input,
                delegate: None,
                gas_cap: Some(tx.gas_limit),
            })
            .collect();
    }

    /// Whether blocks hold a fixed plan of transactions (an EIP-7928 shape) rather than
    /// being filled until the next transaction does not fit.
    pub fn is_planned(&self) -> bool {
        self.shape.is_some()
    }

    /// The stream writing into the accounts of `fills` (`sstore-bloated`; see
    /// [`storage_fills`]) under fork `spec` (which prices a new slot).
    pub fn with_storage_fills(mut self, fills: &[StorageFill], spec: SpecId) -> Self {
        self.new_slot_gas = new_slot_gas(spec);
        self.existing_slot_gas = existing_slot_gas(spec);
        self.bloated = fills
            .iter()
            .flat_map(|f| {
                (0..f.accounts).map(|k| BloatedAccount {
                    address: f.account(k),
                    slots: f.slots_of(k),
                    next_new: f.slots_of(k),
                    next_residue: 0,
                })
            })
            .collect();
        self
    }

    /// `sstore-bloated` as the execution-specs seed's block: every transaction writes new
    /// values to [`BLOAT_EXISTING_PER_TX`] existing slots `r, r + s, r + 2s, …` of its
    /// account (`s` = slots ÷ writes, so the writes span the whole key range, and the keys,
    /// hashed, fall evenly over the trie), `r` taking the next residue each time: no slot is
    /// written twice until `s` transactions have gone into the account (every write cold).
    pub fn with_existing_slots_only(mut self, on: bool) -> Self {
        self.existing_only = on;
        self
    }

    /// The same stream calling the contracts at `layout` instead of the fixed addresses.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// The next `sstore-bloated` call: into one of the bloated accounts (chosen at random),
    /// the transactions cycle through four kinds of cold SSTOREs, every slot written once
    /// per transaction: (0) [`BLOAT_NEW_PER_TX`] new slots (zero → non-zero, consecutive
    /// slots past every slot written so far), then [`BLOAT_EXISTING_PER_TX`] genesis slots
    /// at a random start and stride (1) with a new value, (2) with the value they hold
    /// (stride [`BLOAT_PERIOD`]), (3) set to zero. Kinds (1) and (2) pick genesis slots of
    /// the account's first three quarters, kind (3) of its last quarter; a slot an earlier
    /// transaction already changed gets what the kind writes all the same (so a "same
    /// value" write may change a slot kind (1) changed before).
    /// Returns the contract, the call data and a gas limit that covers the call with room
    /// to spare (so that a block fills close to its gas limit).
    fn bloated_call(&mut self, rng: &mut StdRng) -> (Address, Bytes, u64) {
        assert!(
            !self.bloated.is_empty(),
            "sstore-bloated stream without its storage fill (TxStream::with_storage_fills)"
        );
        let a = rng.random_range(0..self.bloated.len());
        let target = &mut self.bloated[a];
        let n = target.slots;
        // A tag that no genesis value equals (those are 1..=BLOAT_PERIOD).
        let fresh = U256::from(BLOAT_PERIOD + self.count);
        if self.existing_only {
            let count = BLOAT_EXISTING_PER_TX.min(n);
            let stride = (n / count.max(1)).max(1);
            let residue = target.next_residue % stride;
            target.next_residue += 1;
            return (
                target.address,
                overwrite(residue, stride, count, fresh),
                TX_OVERHEAD_GAS + count * self.existing_slot_gas,
            );
        }
        let (input, count) = match self.count % 4 {
            0 => {
                let first = target.next_new;
                target.next_new += BLOAT_NEW_PER_TX;
                let gas = TX_OVERHEAD_GAS + BLOAT_NEW_PER_TX * self.new_slot_gas;
                return (
                    target.address,
                    overwrite(first, 1, BLOAT_NEW_PER_TX, fresh),
                    gas,
                );
            }
            kind => {
                // Kinds 1 and 2 keep to the genesis slots [0, m), kind 3 clears slots of
                // [m, n) only, so that no kind meets a slot another one cleared (which would
                // make its write a new slot's, priced like kind 0).
                let m = n - n / 4;
                if kind == 2 {
                    // Slots r, r + P, ... below m hold r + 1.
                    let residue = rng.random_range(0..BLOAT_PERIOD.min(m));
                    let available = (m - residue).div_ceil(BLOAT_PERIOD);
                    let count = BLOAT_EXISTING_PER_TX.min(available);
                    let first = residue + BLOAT_PERIOD * rng.random_range(0..=available - count);
                    let value = U256::from(residue + 1);
                    (overwrite(first, BLOAT_PERIOD, count, value), count)
                } else {
                    // An account of fewer than 4 slots has nothing to clear: new values.
                    let (start, len, value) = if kind == 3 && m < n {
                        (m, n - m, U256::ZERO)
                    } else {
                        (0, m, fresh)
                    };
                    let count = BLOAT_EXISTING_PER_TX.min(len);
                    let stride = if count > 1 {
                        rng.random_range(1..=(len - 1) / (count - 1))
                    } else {
                        1
                    };
                    let first = start + rng.random_range(0..=len - 1 - (count - 1) * stride);
                    (overwrite(first, stride, count, value), count)
                }
            }
        };
        (
            target.address,
            input,
            TX_OVERHEAD_GAS + count * self.existing_slot_gas,
        )
    }

    /// Starts a new block.
    pub fn start_block(&mut self, long_tx_gas: u64) {
        self.long_tx_gas = long_tx_gas;
        self.long_tx_sent = false;
    }

    /// The next transaction; `addresses` are the senders' addresses. `None` only for an
    /// EIP-7928 shape, when the current block's planned transactions are all out.
    pub fn next(&mut self, rng: &mut StdRng, addresses: &[Address]) -> Option<TxPlan> {
        if self.shape.is_some() {
            return self.queue.pop_front();
        }
        Some(self.next_unplanned(rng, addresses))
    }

    fn next_unplanned(&mut self, rng: &mut StdRng, addresses: &[Address]) -> TxPlan {
        self.count += 1;
        let sender = rng.random_range(0..self.senders);
        let other = |rng: &mut StdRng| {
            addresses[(sender + 1 + rng.random_range(0..self.senders - 1)) % self.senders]
        };
        let plan = |to: Address, input: Bytes| TxPlan {
            sender,
            to: TxKind::Call(to),
            value: U256::ZERO,
            input,
            delegate: None,
            gas_cap: None,
        };
        let n = U256::from;
        match self.workload {
            Workload::Transfers => TxPlan {
                value: n(1 + rng.random_range(0..1_000_000u64)),
                ..plan(other(rng), Bytes::new())
            },
            Workload::Erc20 => {
                let token = if rng.random_bool(0.5) {
                    self.layout.token_a
                } else {
                    self.layout.token_b
                };
                plan(
                    token,
                    call(
                        "transfer(address,uint256)",
                        &[word(other(rng)), n(rng.random_range(1..1000u64))],
                    ),
                )
            }
            Workload::Uniswap => {
                let pair = self.layout.pairs[rng.random_range(0..self.layout.pairs.len())];
                let zero_for_one = rng.random_bool(0.5);
                plan(
                    self.layout.router,
                    call(
                        "swapExactIn(address,bool,uint256,uint256)",
                        &[
                            word(pair),
                            n(zero_for_one as u64),
                            n(rng.random_range(1_000..100_000u64)),
                            U256::ZERO,
                        ],
                    ),
                )
            }
            Workload::NftMint => plan(
                self.layout.nft,
                call("mint(address)", &[word(addresses[sender])]),
            ),
            Workload::SerialChain => plan(self.layout.serial, call("step()", &[])),
            Workload::Keccak => plan(
                self.layout.compute,
                call("hash(bytes32,uint256)", &[n(self.count), n(400)]),
            ),
            Workload::LongTx => {
                if !self.long_tx_sent && self.long_tx_gas > 100_000 {
                    self.long_tx_sent = true;
                    // 122.6 gas per round measured (two MSTOREs, a 64-byte keccak, the checked loop).
                    let rounds = self.long_tx_gas / 130;
                    TxPlan {
                        gas_cap: Some(self.long_tx_gas),
                        ..plan(
                            self.layout.compute,
                            call("hash(bytes32,uint256)", &[n(self.count), n(rounds)]),
                        )
                    }
                } else {
                    TxPlan {
                        value: n(1),
                        ..plan(other(rng), Bytes::new())
                    }
                }
            }
            Workload::SstoreBloated => {
                let (to, input, gas) = self.bloated_call(rng);
                TxPlan {
                    gas_cap: Some(gas),
                    ..plan(to, input)
                }
            }
            Workload::Precompile => {
                let kind = self.precompiles[(self.count as usize - 1) % self.precompiles.len()];
                let (which, rounds, input) = kind.call();
                let mut data =
                    call("run(uint8,uint256,bytes)", &[n(which), n(rounds), n(0x60)]).to_vec();
                data.extend_from_slice(&n(input.len() as u64).to_be_bytes::<32>());
                data.extend_from_slice(&input);
                plan(self.layout.precompiles, data.into())
            }
            Workload::Eip7702 => {
                // The sender delegates its "partner" EOA (sender + 1) to StorageSpam and calls it.
                let partner = (sender + 1) % self.senders;
                TxPlan {
                    delegate: Some((partner, self.layout.spam)),
                    ..plan(
                        addresses[partner],
                        call("spam(uint256,uint256)", &[n(self.count), n(2)]),
                    )
                }
            }
            // Planned by `plan_block` (`next` never gets here for a shape); an unplanned
            // stream of a shape sends nothing but transfers.
            Workload::Bal(_) => TxPlan {
                value: n(1),
                ..plan(other(rng), Bytes::new())
            },
            Workload::MainnetMix => {
                let kinds = [
                    (40, Workload::Transfers),
                    (25, Workload::Erc20),
                    (15, Workload::Uniswap),
                    (5, Workload::NftMint),
                    (5, Workload::Keccak),
                ];
                let roll = rng.random_range(0..100u32);
                if roll >= 95 {
                    // A failing token transfer: more than any holder has (reverts).
                    return plan(
                        self.layout.token_a,
                        call("transfer(address,uint256)", &[word(other(rng)), U256::MAX]),
                    );
                }
                if roll >= 90 {
                    return plan(
                        self.layout.spam,
                        call("spam(uint256,uint256)", &[n(self.count), n(5)]),
                    );
                }
                let mut acc = 0;
                let kind = kinds
                    .iter()
                    .find(|(share, _)| {
                        acc += share;
                        roll < acc
                    })
                    .map_or(Workload::Transfers, |(_, k)| *k);
                let mut inner = TxStream {
                    workload: kind,
                    precompiles: Vec::new(),
                    senders: self.senders,
                    count: self.count,
                    long_tx_gas: 0,
                    long_tx_sent: true,
                    layout: self.layout,
                    bloated: Vec::new(),
                    new_slot_gas: 0,
                    existing_slot_gas: 0,
                    shape: None,
                    queue: Default::default(),
                    existing_only: false,
                };
                inner.next_unplanned(rng, addresses)
            }
        }
    }
}
