//! A workload for a live node (`gigagas inject`): the same transaction stream as
//! [`crate::generate`], signed for the node's chain id from given nonces, plus the
//! transactions that deploy the workload's contracts (a node has no generated genesis).
//!
//! Each contract is created by one transaction from a deployer key derived from the seed: its
//! init code stores the contract's genesis storage slot by slot and returns the runtime code.
//! The contracts land at the deployer's CREATE addresses, so the genesis storage and the
//! stream are built for that [`Layout`] instead of the fixed addresses of generated chains.

use crate::{
    builder::{gas_limit, key},
    contracts,
    workload::{genesis_at, Layout, Precompile, TxStream, Workload},
    GenError,
};
use alloy_consensus::{SignableTransaction, TxEip1559, TxEip7702, TxEnvelope};
use alloy_eips::{eip2718::Encodable2718, eip7702::Authorization};
use alloy_primitives::{keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use rand::{rngs::StdRng, SeedableRng};
use std::collections::BTreeMap;

/// EIP-3860's init code size limit.
pub const MAX_INITCODE_BYTES: usize = 49_152;

/// What to sign.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Workload.
    pub workload: Workload,
    /// Workload transactions (deployments not counted).
    pub txs: usize,
    /// Seed of every random choice and of the keys (the same seed as `gigagas gen`).
    pub seed: u64,
    /// The node's chain id (`eth_chainId`).
    pub chain_id: u64,
    /// Sender keys.
    pub senders: usize,
    /// Precompiles the `precompile` workload cycles through (empty: all).
    pub precompiles: Vec<Precompile>,
    /// `maxFeePerGas` of every transaction, wei.
    pub max_fee_per_gas: u128,
    /// `maxPriorityFeePerGas` of every transaction, wei.
    pub max_priority_fee_per_gas: u128,
    /// Gas of the `long-tx` workload's long transaction.
    pub long_tx_gas: u64,
    /// Per-transaction gas cap (EIP-7825's 2^24 on Osaka and later).
    pub tx_gas_cap: u64,
}

/// One signed transaction, ready for `eth_sendRawTransaction`.
#[derive(Debug, Clone)]
pub struct LiveTx {
    /// Its EIP-2718 encoding.
    pub raw: Bytes,
    /// Its hash.
    pub hash: B256,
    /// The signer.
    pub sender: Address,
    /// Its nonce.
    pub nonce: u64,
    /// Its gas limit.
    pub gas_limit: u64,
    /// The most it can cost its sender: gas limit × max fee + value.
    pub max_cost: U256,
}

/// A contract-creating transaction and what it must create.
#[derive(Debug, Clone)]
pub struct Deployment {
    /// The contract's name in `contracts/bytecode.json`.
    pub name: String,
    /// The address of this contract in generated chains.
    pub fixed: Address,
    /// Where the transaction creates it.
    pub address: Address,
    /// keccak256 of its runtime code.
    pub code_hash: B256,
    /// Storage slots its init code writes.
    pub slots: usize,
    /// The transaction.
    pub tx: LiveTx,
}

/// A signed workload for a live node.
#[derive(Debug, Clone)]
pub struct LiveWorkload {
    /// The deployer's address (sends [`LiveWorkload::deployments`]).
    pub deployer: Address,
    /// The workload's sender addresses.
    pub senders: Vec<Address>,
    /// Contract creations, in nonce order; sent and included before [`LiveWorkload::txs`].
    pub deployments: Vec<Deployment>,
    /// The workload's transactions in stream order.
    pub txs: Vec<LiveTx>,
    /// Where the contracts land.
    pub layout: Layout,
}

impl LiveWorkload {
    /// Wei every sending account needs for all its transactions at their max fee (deployer
    /// and senders; accounts that send nothing are left out).
    pub fn funding(&self) -> BTreeMap<Address, U256> {
        let mut need: BTreeMap<Address, U256> = BTreeMap::new();
        for tx in self
            .deployments
            .iter()
            .map(|d| &d.tx)
            .chain(self.txs.iter())
        {
            *need.entry(tx.sender).or_default() += tx.max_cost;
        }
        need
    }
}

/// The deployer key of a seed (distinct from every sender key).
#[allow(clippy::expect_used)] // a keccak output is a valid secp256k1 key but with probability < 2^-127; the seeds are fixed
fn deployer_key(seed: u64) -> PrivateKeySigner {
    let k = keccak256([b"gigagas-inject-deployer".as_slice(), &seed.to_be_bytes()].concat());
    PrivateKeySigner::from_bytes(&k).expect("valid key")
}

/// The addresses of the workload's sender keys (the same keys `gigagas gen` funds).
pub fn sender_addresses(seed: u64, senders: usize) -> Vec<Address> {
    (0..senders).map(|i| key(seed, i).address()).collect()
}

/// The deployer's address for `seed`.
pub fn deployer_address(seed: u64) -> Address {
    deployer_key(seed).address()
}

/// Init code that writes `storage` (non-zero values) and returns `code`.
fn init_code(storage: &BTreeMap<U256, U256>, code: &[u8]) -> (Vec<u8>, usize) {
    let mut init = Vec::new();
    let mut slots = 0;
    for (slot, value) in storage {
        if value.is_zero() {
            continue;
        }
        slots += 1;
        init.push(0x7f); // PUSH32 value
        init.extend_from_slice(&value.to_be_bytes::<32>());
        init.push(0x7f); // PUSH32 slot
        init.extend_from_slice(&slot.to_be_bytes::<32>());
        init.push(0x55); // SSTORE
    }
    // PUSH2 len, DUP1, PUSH2 offset, PUSH0, CODECOPY, PUSH0, RETURN: 11 bytes, then the code.
    let offset = init.len() + 11;
    let len = code.len() as u16;
    init.push(0x61);
    init.extend_from_slice(&len.to_be_bytes());
    init.push(0x80);
    init.push(0x61);
    init.extend_from_slice(&(offset as u16).to_be_bytes());
    init.extend_from_slice(&[0x5f, 0x39, 0x5f, 0xf3]);
    init.extend_from_slice(code);
    (init, slots)
}

#[allow(clippy::expect_used)] // signing a 32-byte hash with a valid local k256 key does not fail
fn signed<T: SignableTransaction<alloy_primitives::Signature>>(
    tx: T,
    key: &PrivateKeySigner,
) -> alloy_consensus::Signed<T> {
    let sig = key.sign_hash_sync(&tx.signature_hash()).expect("signing");
    tx.into_signed(sig)
}

fn live_tx(envelope: TxEnvelope, sender: Address, value: U256, max_fee: u128) -> LiveTx {
    use alloy_consensus::Transaction as _;
    let gas_limit = envelope.gas_limit();
    LiveTx {
        raw: envelope.encoded_2718().into(),
        hash: *envelope.hash(),
        sender,
        nonce: envelope.nonce(),
        gas_limit,
        max_cost: U256::from(gas_limit) * U256::from(max_fee) + value,
    }
}

/// Signs the deployments (from `deployer_nonce`) and `opts.txs` transactions of the workload
/// (sender `i` from `sender_nonces[i]`) for chain `opts.chain_id`. Refuses what cannot be
/// deployed by transaction: `sstore-bloated` (a 1,000,000-slot genesis account) and init code
/// above EIP-3860's limit.
pub fn live_workload(
    opts: &LiveOptions,
    deployer_nonce: u64,
    sender_nonces: &[u64],
) -> Result<LiveWorkload, GenError> {
    if let Some(shape) = opts.workload.bal_shape() {
        return Err(GenError::Options(format!(
            "workload {}: the EIP-7928 shapes are generated chains only (their contracts start with planned storage and every block is sized for one gas limit)",
            shape.label()
        )));
    }
    if opts.workload == Workload::SstoreBloated {
        return Err(GenError::Options(format!(
            "workload {}: its contract starts with {} storage slots (or more with --slots), too many to deploy by transaction",
            opts.workload,
            crate::workload::DEFAULT_BLOATED_SLOTS
        )));
    }
    if opts.senders < 2 || sender_nonces.len() != opts.senders {
        return Err(GenError::Options(format!(
            "{} senders with {} nonces: at least 2 senders, one nonce each",
            opts.senders,
            sender_nonces.len()
        )));
    }
    let keys: Vec<PrivateKeySigner> = (0..opts.senders).map(|i| key(opts.seed, i)).collect();
    let addresses: Vec<Address> = keys.iter().map(|k| k.address()).collect();
    let deployer = deployer_key(opts.seed);
    // EIP-2681: an account's nonce never reaches 2^64 - 1, so the last usable one is 2^64 - 2.
    // Each transaction raises any one account's nonce at most once, so a start that leaves
    // room for `opts.txs` (the deployer: its deployments) can never wrap.
    let room = |who: String, nonce: u64, uses: u64| {
        if nonce.checked_add(uses).is_none_or(|last| last == u64::MAX) {
            return Err(GenError::Options(format!(
                "{who} has nonce {nonce}: {uses} more transactions would pass the largest \
                 nonce 2^64 - 2 (EIP-2681); use other accounts (--seed) or fewer transactions"
            )));
        }
        Ok(())
    };
    let deployments = genesis_at(opts.workload, &addresses, &Layout::FIXED).len() as u64;
    room(
        format!("the deployer {}", deployer.address()),
        deployer_nonce,
        deployments,
    )?;
    for (address, nonce) in addresses.iter().zip(sender_nonces) {
        room(format!("sender {address}"), *nonce, opts.txs as u64)?;
    }

    // The contracts in fixed-address order; the i-th is created by the deployer's nonce + i.
    let fixed: Vec<Address> = genesis_at(opts.workload, &addresses, &Layout::FIXED)
        .into_keys()
        .collect();
    let placed: BTreeMap<Address, Address> = fixed
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, deployer.address().create(deployer_nonce + i as u64)))
        .collect();
    let layout = Layout::mapped(&|a| placed.get(&a).copied().unwrap_or(a));
    let alloc = genesis_at(opts.workload, &addresses, &layout);
    let names = contract_names();

    let mut deployments = Vec::with_capacity(fixed.len());
    for (i, fixed_address) in fixed.iter().enumerate() {
        let address = placed[fixed_address];
        let account = alloc
            .get(&address)
            .ok_or_else(|| GenError::Options(format!("contract {fixed_address} not placed")))?;
        let (init, slots) = init_code(&account.storage, &account.code);
        let name = names
            .iter()
            .find(|(_, code)| *code == account.code)
            .map_or_else(|| fixed_address.to_string(), |(n, _)| n.clone());
        if init.len() > MAX_INITCODE_BYTES {
            return Err(GenError::Options(format!(
                "workload {}: contract {name} with {slots} storage slots needs {} bytes of init code, above EIP-3860's {MAX_INITCODE_BYTES}; use fewer senders",
                opts.workload,
                init.len()
            )));
        }
        // Intrinsic (53,000 + at most 40 gas a byte under EIP-7623's floor), a fresh SSTORE
        // each slot (22,100 + the pushes), the code deposit (200 a byte), and headroom.
        let gas = 100_000
            + 40 * init.len() as u64
            + 22_200 * slots as u64
            + 200 * account.code.len() as u64;
        if gas > opts.tx_gas_cap {
            return Err(GenError::Options(format!(
                "workload {}: deploying {name} needs up to {gas} gas, above the transaction gas cap {}; use fewer senders",
                opts.workload, opts.tx_gas_cap
            )));
        }
        let envelope: TxEnvelope = signed(
            TxEip1559 {
                chain_id: opts.chain_id,
                nonce: deployer_nonce + i as u64,
                gas_limit: gas,
                max_fee_per_gas: opts.max_fee_per_gas,
                max_priority_fee_per_gas: opts.max_priority_fee_per_gas,
                to: TxKind::Create,
                value: U256::ZERO,
                access_list: Default::default(),
                input: init.into(),
            },
            &deployer,
        )
        .into();
        deployments.push(Deployment {
            name,
            fixed: *fixed_address,
            address,
            code_hash: keccak256(&account.code),
            slots,
            tx: live_tx(
                envelope,
                deployer.address(),
                U256::ZERO,
                opts.max_fee_per_gas,
            ),
        });
    }

    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut stream =
        TxStream::new(opts.workload, opts.senders, &opts.precompiles).with_layout(layout);
    stream.start_block(opts.long_tx_gas.min(opts.tx_gas_cap));
    let mut nonces = sender_nonces.to_vec();
    let mut txs = Vec::with_capacity(opts.txs);
    for _ in 0..opts.txs {
        // Only an EIP-7928 shape's stream ends (refused above).
        let Some(plan) = stream.next(&mut rng, &addresses) else {
            break;
        };
        let limit = gas_limit(&plan, opts.tx_gas_cap);
        let s = plan.sender;
        let envelope: TxEnvelope = match plan.delegate {
            None => signed(
                TxEip1559 {
                    chain_id: opts.chain_id,
                    nonce: nonces[s],
                    gas_limit: limit,
                    max_fee_per_gas: opts.max_fee_per_gas,
                    max_priority_fee_per_gas: opts.max_priority_fee_per_gas,
                    to: plan.to,
                    value: plan.value,
                    access_list: Default::default(),
                    input: plan.input.clone(),
                },
                &keys[s],
            )
            .into(),
            Some((partner, target)) => {
                let auth = Authorization {
                    chain_id: U256::from(opts.chain_id),
                    address: target,
                    nonce: nonces[partner],
                };
                let TxKind::Call(to) = plan.to else {
                    return Err(GenError::Options(
                        "an EIP-7702 transaction cannot create a contract".into(),
                    ));
                };
                #[allow(clippy::expect_used)]
                // signing a 32-byte hash with a valid local k256 key does not fail
                let auth_sig = keys[partner]
                    .sign_hash_sync(&auth.signature_hash())
                    .expect("signing");
                signed(
                    TxEip7702 {
                        chain_id: opts.chain_id,
                        nonce: nonces[s],
                        gas_limit: limit,
                        max_fee_per_gas: opts.max_fee_per_gas,
                        max_priority_fee_per_gas: opts.max_priority_fee_per_gas,
                        to,
                        value: plan.value,
                        access_list: Default::default(),
                        authorization_list: vec![auth.into_signed(auth_sig)],
                        input: plan.input.clone(),
                    },
                    &keys[s],
                )
                .into()
            }
        };
        nonces[s] += 1;
        if let Some((partner, _)) = plan.delegate {
            nonces[partner] += 1;
        }
        txs.push(live_tx(
            envelope,
            addresses[s],
            plan.value,
            opts.max_fee_per_gas,
        ));
    }
    Ok(LiveWorkload {
        deployer: deployer.address(),
        senders: addresses,
        deployments,
        txs,
        layout,
    })
}

/// Every compiled contract's name and runtime code.
fn contract_names() -> Vec<(String, Bytes)> {
    [
        "Token",
        "Pair",
        "Router",
        "Nft",
        "StorageSpam",
        "Compute",
        "SerialChain",
        "Precompiles",
    ]
    .into_iter()
    .map(|n| (n.to_owned(), contracts::code(n)))
    .collect()
}
