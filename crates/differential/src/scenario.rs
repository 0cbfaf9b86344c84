//! The differential block: a funded genesis with a few contracts and the system contracts
//! every fork from Prague on needs, and signed transactions covering the main state-change
//! kinds.

use alloy_consensus::{SignableTransaction, TxEip1559, TxEip2930, TxEip7702, TxEnvelope, TxLegacy};
use alloy_eips::eip7702::Authorization;
use alloy_primitives::{address, keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use revm::primitives::hardfork::SpecId;
use std::collections::BTreeMap;

/// Chain id of the scenario.
pub const CHAIN_ID: u64 = 1;

pub use gigagas_data::chain::AllocAccount;

/// The block environment both engines get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEnv {
    /// Block number.
    pub number: u64,
    /// Timestamp.
    pub timestamp: u64,
    /// Gas limit.
    pub gas_limit: u64,
    /// Base fee.
    pub base_fee: u64,
    /// Fee recipient.
    pub coinbase: Address,
    /// `PREVRANDAO`.
    pub prevrandao: B256,
    /// Parent block hash (block `number - 1`).
    pub parent_hash: B256,
    /// EIP-4788 parent beacon block root.
    pub parent_beacon_block_root: B256,
}

/// One block for both engines.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Fork rules.
    pub spec: SpecId,
    /// Genesis allocation.
    pub alloc: BTreeMap<Address, AllocAccount>,
    /// Block environment.
    pub env: BlockEnv,
    /// Signed transactions in block order.
    pub transactions: Vec<TxEnvelope>,
    /// What each transaction does (for messages).
    pub labels: Vec<&'static str>,
    /// Withdrawals (EIP-4895), credited after the transactions.
    pub withdrawals: Vec<alloy_eips::eip4895::Withdrawal>,
}

/// `SSTORE(calldata[0..32], calldata[32..64])`.
pub const STORE: Address = address!("0x00000000000000000000000000000000000c0de1");
/// Forwards its calldata to [`STORE`] with `CALL`.
pub const FORWARDER: Address = address!("0x00000000000000000000000000000000000c0de2");
/// `SSTORE(0, 1)` then `REVERT`.
pub const REVERTER: Address = address!("0x00000000000000000000000000000000000c0de3");
/// `SELFDESTRUCT(CALLER)`.
pub const DESTRUCTOR: Address = address!("0x00000000000000000000000000000000000c0de4");
/// A fresh account that receives a transfer.
pub const FRESH: Address = address!("0x000000000000000000000000000000000000beef");

const STORE_CODE: &str = "602035600035550000";
const REVERTER_CODE: &str = "600160005560006000fd";
const DESTRUCTOR_CODE: &str = "33ff";
/// Deploys the 5-byte runtime `SSTORE(0, 42)`.
const INIT_CODE: &str = "6005600c60003960056000f3602a600055";

#[allow(clippy::unwrap_used)] // constant hex, decoded by the scenario's own tests
fn forwarder_code() -> Bytes {
    // CALLDATACOPY(0, 0, CALLDATASIZE); CALL(GAS, STORE, 0, 0, CALLDATASIZE, 0, 0); POP; STOP
    let mut code = alloy_primitives::hex::decode("36600060003760006000366000600073").unwrap();
    code.extend_from_slice(STORE.as_slice());
    code.extend_from_slice(&[0x5a, 0xf1, 0x50, 0x00]);
    Bytes::from(code)
}

#[allow(clippy::unwrap_used)] // constant hex, decoded by the scenario's own tests
fn hex(code: &str) -> Bytes {
    alloy_primitives::hex::decode(code).unwrap().into()
}

/// The deterministic signer `i` of the scenario.
#[allow(clippy::expect_used)] // a keccak output is a valid secp256k1 key but with probability < 2^-127; the seeds are fixed
pub fn signer(i: u8) -> PrivateKeySigner {
    let key = keccak256([b"gigagas-differential".as_slice(), &[i]].concat());
    PrivateKeySigner::from_bytes(&key).expect("valid key")
}

fn store_call(slot: u64, value: u64) -> Bytes {
    let mut data = U256::from(slot).to_be_bytes::<32>().to_vec();
    data.extend_from_slice(&U256::from(value).to_be_bytes::<32>());
    data.into()
}

#[allow(clippy::expect_used)] // signing a 32-byte hash with a valid local k256 key does not fail
fn sign<T: SignableTransaction<alloy_primitives::Signature>>(
    tx: T,
    key: &PrivateKeySigner,
) -> alloy_consensus::Signed<T> {
    let signature = key.sign_hash_sync(&tx.signature_hash()).expect("signing");
    tx.into_signed(signature)
}

/// Addresses of the EIP-8282 builder contracts, which geth 1.17.10 calls after the
/// transactions on Amsterdam and revm 43 does not.
pub fn eip8282_contracts() -> [Address; 2] {
    use alloy_eips::eip8282;
    [
        eip8282::BUILDER_DEPOSIT_CONTRACT_ADDRESS,
        eip8282::BUILDER_EXIT_CONTRACT_ADDRESS,
    ]
}

/// The differential block for `spec` (Prague or later).
pub fn build(spec: SpecId) -> Scenario {
    let eth = U256::from(10u64).pow(U256::from(18));
    let keys: Vec<PrivateKeySigner> = (0..7).map(signer).collect();
    let mut alloc = BTreeMap::new();
    for key in &keys[..6] {
        alloc.insert(
            key.address(),
            AllocAccount {
                balance: eth * U256::from(100),
                ..Default::default()
            },
        );
    }
    for (address, code) in gigagas_data::chain::system_contracts() {
        alloc.insert(
            address,
            AllocAccount {
                code,
                nonce: 1,
                ..Default::default()
            },
        );
    }
    alloc.insert(
        STORE,
        AllocAccount {
            code: hex(STORE_CODE),
            nonce: 1,
            storage: [
                (U256::from(1), U256::from(5)),
                (U256::from(2), U256::from(7)),
            ]
            .into(),
            ..Default::default()
        },
    );
    alloc.insert(
        FORWARDER,
        AllocAccount {
            code: forwarder_code(),
            nonce: 1,
            ..Default::default()
        },
    );
    alloc.insert(
        REVERTER,
        AllocAccount {
            code: hex(REVERTER_CODE),
            nonce: 1,
            ..Default::default()
        },
    );
    alloc.insert(
        DESTRUCTOR,
        AllocAccount {
            code: hex(DESTRUCTOR_CODE),
            nonce: 1,
            balance: eth,
            ..Default::default()
        },
    );

    let base_fee = 7u64;
    let gas = 1_000_000u64;
    let fee = |to: Address, nonce: u64, value: U256, input: Bytes| TxEip1559 {
        chain_id: CHAIN_ID,
        nonce,
        gas_limit: gas,
        max_fee_per_gas: 2_000_000_000,
        max_priority_fee_per_gas: 1_000_000_000,
        to: TxKind::Call(to),
        value,
        access_list: Default::default(),
        input,
    };
    let mut txs: Vec<(TxEnvelope, &'static str)> = vec![
        (
            sign(fee(FRESH, 0, eth, Bytes::new()), &keys[0]).into(),
            "transfer to a new account",
        ),
        (
            sign(
                TxLegacy {
                    chain_id: Some(CHAIN_ID),
                    nonce: 0,
                    gas_price: 1_000_000_000,
                    gas_limit: gas,
                    to: TxKind::Call(keys[2].address()),
                    value: eth,
                    input: Bytes::new(),
                },
                &keys[1],
            )
            .into(),
            "legacy transfer between funded accounts",
        ),
        (
            sign(
                TxEip1559 {
                    to: TxKind::Create,
                    ..fee(Address::ZERO, 1, U256::ZERO, hex(INIT_CODE))
                },
                &keys[0],
            )
            .into(),
            "contract deployment",
        ),
        (
            sign(fee(STORE, 0, U256::ZERO, store_call(1, 9)), &keys[2]).into(),
            "overwrite a stored slot",
        ),
        (
            sign(
                TxEip2930 {
                    chain_id: CHAIN_ID,
                    nonce: 0,
                    gas_price: 1_000_000_000,
                    gas_limit: gas,
                    to: TxKind::Call(STORE),
                    value: U256::ZERO,
                    input: store_call(0x100, 1),
                    access_list: Default::default(),
                },
                &keys[3],
            )
            .into(),
            "write a fresh slot (EIP-2930 tx)",
        ),
        (
            sign(fee(FORWARDER, 1, U256::ZERO, store_call(2, 0)), &keys[3]).into(),
            "call between contracts, clearing a slot",
        ),
        (
            sign(fee(REVERTER, 0, U256::ZERO, Bytes::new()), &keys[4]).into(),
            "reverting call",
        ),
        (
            sign(fee(DESTRUCTOR, 1, U256::ZERO, Bytes::new()), &keys[4]).into(),
            "self-destruct",
        ),
    ];
    // EIP-7702: key 6 delegates to STORE; key 5 sends the transaction that carries the
    // authorization and calls key 6's account, which writes into key 6's own storage.
    let delegate = keys[6].address();
    let auth = Authorization {
        chain_id: U256::from(CHAIN_ID),
        address: STORE,
        nonce: 0,
    };
    #[allow(clippy::expect_used)]
    // signing a 32-byte hash with a valid local k256 key does not fail
    let auth_sig = keys[6]
        .sign_hash_sync(&auth.signature_hash())
        .expect("signing");
    txs.push((
        sign(
            TxEip7702 {
                chain_id: CHAIN_ID,
                nonce: 0,
                gas_limit: gas,
                max_fee_per_gas: 2_000_000_000,
                max_priority_fee_per_gas: 1_000_000_000,
                to: delegate,
                value: U256::ZERO,
                access_list: Default::default(),
                authorization_list: vec![auth.into_signed(auth_sig)],
                input: store_call(3, 4),
            },
            &keys[5],
        )
        .into(),
        "EIP-7702 delegation and a call into the delegated account",
    ));
    txs.push((
        sign(fee(delegate, 1, U256::ZERO, store_call(4, 8)), &keys[5]).into(),
        "call into the delegated account again",
    ));

    let (transactions, labels) = txs.into_iter().unzip();
    Scenario {
        spec,
        alloc,
        env: BlockEnv {
            number: 1,
            timestamp: 1_000,
            gas_limit: 60_000_000,
            base_fee,
            coinbase: address!("0x00000000000000000000000000000000000c0b0e"),
            prevrandao: keccak256("prevrandao"),
            parent_hash: keccak256("parent"),
            parent_beacon_block_root: keccak256("beacon"),
        },
        transactions,
        labels,
        withdrawals: Vec::new(),
    }
}

/// The first block of a generated chain as a scenario (its pre-state is the chain's genesis
/// allocation), so that geth can execute exactly what `gigagas gen` produced.
pub fn from_generated(
    spec: SpecId,
    meta: &gigagas_data::chain::ChainMeta,
    first: &gigagas_data::chain::ChainBlock,
) -> Scenario {
    // A generated chain's `storage_fill` was checked when it was generated or loaded.
    let alloc = meta
        .full_alloc()
        .unwrap_or_else(|e| panic!("chain.json storage_fill: {e}"));
    from_generated_block(spec, alloc, first)
}

/// Any block of a generated chain as a scenario, given the allocation it starts from (the
/// genesis with the BALs of every earlier block applied: `gigagas_data::chain::apply_bal`,
/// `alloc_of`).
pub fn from_generated_block(
    spec: SpecId,
    alloc: BTreeMap<Address, AllocAccount>,
    first: &gigagas_data::chain::ChainBlock,
) -> Scenario {
    let h = &first.block.header;
    Scenario {
        spec,
        alloc,
        env: BlockEnv {
            number: h.number,
            timestamp: h.timestamp,
            gas_limit: h.gas_limit,
            base_fee: h.base_fee_per_gas.unwrap_or_default(),
            coinbase: h.beneficiary,
            prevrandao: h.mix_hash,
            parent_hash: h.parent_hash,
            parent_beacon_block_root: h.parent_beacon_block_root.unwrap_or_default(),
        },
        transactions: first.block.body.transactions.clone(),
        labels: vec!["generated"; first.block.body.transactions.len()],
        withdrawals: first
            .block
            .body
            .withdrawals
            .as_ref()
            .map(|w| w.to_vec())
            .unwrap_or_default(),
    }
}
