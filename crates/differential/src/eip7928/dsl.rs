//! A small Rust counterpart of the execution-specs test DSL (`pre.fund_eoa`,
//! `pre.deploy_contract`, `Op.X(args)`, `Transaction(...)`, `Withdrawal(...)`), so that a
//! ported test reads like its Python original.
// The EIP-7928 case suite is built from constants (keys from fixed seeds, fixed hex, cases
// naming their own accounts): a failed unwrap is a bug in a case, which the suite's own tests
// run into; no input of gigagas reaches it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::scenario::{AllocAccount, BlockEnv, Scenario, CHAIN_ID};
use alloy_consensus::{SignableTransaction, TxEip1559, TxEip2930, TxEip7702, TxEnvelope, TxLegacy};
use alloy_eips::{
    eip2930::{AccessList, AccessListItem},
    eip4895::Withdrawal,
    eip7702::{Authorization, SignedAuthorization},
};
use alloy_primitives::{address, keccak256, Address, Bytes, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use revm::primitives::hardfork::SpecId;
use std::collections::{BTreeMap, HashMap};

/// An amount in wei (`u64` or `U256`).
pub trait Wei {
    /// As `U256`.
    fn wei(self) -> U256;
}
impl Wei for u64 {
    fn wei(self) -> U256 {
        U256::from(self)
    }
}
impl Wei for U256 {
    fn wei(self) -> U256 {
        self
    }
}

/// EVM bytecode under construction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Code(pub Vec<u8>);

impl Code {
    /// The bytes.
    pub fn bytes(&self) -> Bytes {
        Bytes::from(self.0.clone())
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::ops::Add for Code {
    type Output = Code;
    fn add(mut self, rhs: Code) -> Code {
        self.0.extend(rhs.0);
        self
    }
}

/// An opcode argument: a number pushed, or code whose result is left on the stack.
#[derive(Debug, Clone)]
pub enum Arg {
    /// `PUSHn value` (PUSH1 0 for zero, as the Python DSL does).
    N(U256),
    /// Code that leaves one value on the stack.
    C(Code),
}

impl From<u64> for Arg {
    fn from(v: u64) -> Self {
        Arg::N(U256::from(v))
    }
}
impl From<i32> for Arg {
    fn from(v: i32) -> Self {
        Arg::N(U256::from(v as u64))
    }
}
impl From<U256> for Arg {
    fn from(v: U256) -> Self {
        Arg::N(v)
    }
}
impl From<Address> for Arg {
    fn from(v: Address) -> Self {
        Arg::N(U256::from_be_slice(v.as_slice()))
    }
}
impl From<Code> for Arg {
    fn from(v: Code) -> Self {
        Arg::C(v)
    }
}

/// `PUSHn v` with the fewest bytes (`PUSH1 0` for zero).
pub fn push(v: U256) -> Code {
    let bytes = v.to_be_bytes::<32>();
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(31);
    let n = 32 - first;
    let mut out = vec![0x5f + n as u8];
    out.extend_from_slice(&bytes[first..]);
    Code(out)
}

/// `opcode` with its arguments in the Python DSL's order (the first argument ends on top of
/// the stack).
pub fn op(opcode: u8, args: Vec<Arg>) -> Code {
    let mut out = Vec::new();
    for a in args.into_iter().rev() {
        match a {
            Arg::N(v) => out.extend(push(v).0),
            Arg::C(c) => out.extend(c.0),
        }
    }
    out.push(opcode);
    Code(out)
}

/// Opcode numbers used by the ported tests.
pub mod opc {
    #![allow(missing_docs)]
    pub const STOP: u8 = 0x00;
    pub const ADD: u8 = 0x01;
    pub const ISZERO: u8 = 0x15;
    pub const ADDRESS: u8 = 0x30;
    pub const BALANCE: u8 = 0x31;
    pub const CALLER: u8 = 0x33;
    pub const CALLVALUE: u8 = 0x34;
    pub const CALLDATALOAD: u8 = 0x35;
    pub const CALLDATASIZE: u8 = 0x36;
    pub const CALLDATACOPY: u8 = 0x37;
    pub const CODECOPY: u8 = 0x39;
    pub const EXTCODESIZE: u8 = 0x3b;
    pub const EXTCODECOPY: u8 = 0x3c;
    pub const EXTCODEHASH: u8 = 0x3f;
    pub const TIMESTAMP: u8 = 0x42;
    pub const NUMBER: u8 = 0x43;
    pub const SELFBALANCE: u8 = 0x47;
    pub const POP: u8 = 0x50;
    pub const MLOAD: u8 = 0x51;
    pub const MSTORE: u8 = 0x52;
    pub const SLOAD: u8 = 0x54;
    pub const SSTORE: u8 = 0x55;
    pub const GAS: u8 = 0x5a;
    pub const TLOAD: u8 = 0x5c;
    pub const TSTORE: u8 = 0x5d;
    pub const CREATE: u8 = 0xf0;
    pub const CALL: u8 = 0xf1;
    pub const CALLCODE: u8 = 0xf2;
    pub const RETURN: u8 = 0xf3;
    pub const DELEGATECALL: u8 = 0xf4;
    pub const CREATE2: u8 = 0xf5;
    pub const STATICCALL: u8 = 0xfa;
    pub const REVERT: u8 = 0xfd;
    pub const INVALID: u8 = 0xfe;
    pub const SELFDESTRUCT: u8 = 0xff;
}

/// A bare opcode (no arguments).
pub fn o(opcode: u8) -> Code {
    Code(vec![opcode])
}

/// Shorthands for the opcodes with arguments.
#[macro_export]
macro_rules! op {
    ($name:ident $(, $arg:expr)* $(,)?) => {
        $crate::eip7928::dsl::op(
            $crate::eip7928::dsl::opc::$name,
            vec![$($crate::eip7928::dsl::Arg::from($arg)),*],
        )
    };
}

/// `CALL(gas, to, value, 0, 0, 0, 0)`.
pub fn call(gas: impl Into<Arg>, to: Address, value: u64) -> Code {
    op(
        opc::CALL,
        vec![
            gas.into(),
            to.into(),
            value.into(),
            0u64.into(),
            0u64.into(),
            0u64.into(),
            0u64.into(),
        ],
    )
}

/// A call-family opcode with no memory arguments: `CALL`/`CALLCODE` get a value argument,
/// `DELEGATECALL`/`STATICCALL` do not.
pub fn any_call(opcode: u8, gas: impl Into<Arg>, to: Address, value: u64) -> Code {
    let mut args: Vec<Arg> = vec![gas.into(), to.into()];
    if matches!(opcode, opc::CALL | opc::CALLCODE) {
        args.push(value.into());
    }
    args.extend([0u64.into(), 0u64.into(), 0u64.into(), 0u64.into()]);
    op(opcode, args)
}

/// Initcode that returns `deploy` (`CODECOPY` + `RETURN`), as `Initcode(deploy_code=...)`.
pub fn initcode(deploy: &[u8]) -> Code {
    assert!(deploy.len() < 256);
    let n = deploy.len() as u8;
    let mut out = vec![0x60, n, 0x60, 12, 0x60, 0, 0x39, 0x60, n, 0x60, 0, 0xf3];
    out.extend_from_slice(deploy);
    Code(out)
}

/// `MSTORE`s `code` at memory 0 (left-aligned, 32-byte words) so that `CREATE(v, 0, len)`
/// can use it.
pub fn mstore_code(code: &Code) -> Code {
    let mut out = Code::default();
    for (i, chunk) in code.0.chunks(32).enumerate() {
        let mut word = [0u8; 32];
        word[..chunk.len()].copy_from_slice(chunk);
        out = out
            + op(
                opc::MSTORE,
                vec![(i as u64 * 32).into(), U256::from_be_bytes(word).into()],
            );
    }
    out
}

/// The EIP-7702 delegation indicator for `target`.
pub fn delegation(target: Address) -> Bytes {
    let mut v = vec![0xef, 0x01, 0x00];
    v.extend_from_slice(target.as_slice());
    v.into()
}

/// One transaction as the Python `Transaction(...)`; the type follows from the fields
/// (authorizations → 4, `max_fee` → 2, access list → 1, else legacy), as there.
#[derive(Debug, Clone)]
pub struct Tx {
    /// Sender (must have a key in the builder).
    pub from: Address,
    /// Recipient; `None` creates.
    pub to: Option<Address>,
    /// Value.
    pub value: U256,
    /// Calldata / initcode.
    pub data: Bytes,
    /// Gas limit.
    pub gas: u64,
    /// EIP-2930 access list.
    pub access_list: Option<Vec<(Address, Vec<u64>)>>,
    /// EIP-7702 authorizations.
    pub auths: Vec<SignedAuthorization>,
    /// EIP-1559 fees (max fee, priority fee).
    pub fees: Option<(u128, u128)>,
    /// Gas price of a legacy/2930 transaction.
    pub gas_price: u128,
}

impl Tx {
    /// A call from `from` to `to` with the Python defaults (gas price 10, no value).
    pub fn call(from: Address, to: Address) -> Self {
        Self {
            from,
            to: Some(to),
            value: U256::ZERO,
            data: Bytes::new(),
            gas: DEFAULT_GAS,
            access_list: None,
            auths: Vec::new(),
            fees: None,
            gas_price: 10,
        }
    }
    /// A contract-creation transaction.
    pub fn create(from: Address, initcode: Code) -> Self {
        Self {
            to: None,
            data: initcode.bytes(),
            ..Self::call(from, Address::ZERO)
        }
    }
    /// With value.
    pub fn value(mut self, v: impl Wei) -> Self {
        self.value = v.wei();
        self
    }
    /// With gas limit.
    pub fn gas(mut self, g: u64) -> Self {
        self.gas = g;
        self
    }
    /// With calldata.
    pub fn data(mut self, d: impl Into<Bytes>) -> Self {
        self.data = d.into();
        self
    }
    /// With an EIP-2930 access list.
    pub fn access(mut self, list: Vec<(Address, Vec<u64>)>) -> Self {
        self.access_list = Some(list);
        self
    }
    /// With EIP-7702 authorizations.
    pub fn auths(mut self, a: Vec<SignedAuthorization>) -> Self {
        self.auths = a;
        self
    }
    /// As an EIP-1559 transaction.
    pub fn fees(mut self, max_fee: u128, priority: u128) -> Self {
        self.fees = Some((max_fee, priority));
        self
    }
}

/// Gas limit of a ported transaction unless the test depends on it: generous, because the
/// Python tests' 21,000-gas transfers assume a gas schedule without EIP-8037 state gas.
pub const DEFAULT_GAS: u64 = 1_000_000;

/// The Python framework's default fee recipient.
pub const COINBASE: Address = address!("0x2adc25665018aa1fe0e6bc666dac8fc2697ff9ba");

/// Builds one scenario: pre-state, transactions, withdrawals.
#[derive(Debug)]
pub struct Builder {
    alloc: BTreeMap<Address, AllocAccount>,
    keys: HashMap<Address, PrivateKeySigner>,
    nonces: HashMap<Address, u64>,
    next_key: u16,
    next_contract: u64,
    txs: Vec<TxEnvelope>,
    withdrawals: Vec<Withdrawal>,
    /// Block environment (editable).
    pub env: BlockEnv,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An Amsterdam genesis with every system contract.
    pub fn new() -> Self {
        let mut alloc = BTreeMap::new();
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
        Self {
            alloc,
            keys: HashMap::new(),
            nonces: HashMap::new(),
            next_key: 0,
            next_contract: 0,
            txs: Vec::new(),
            withdrawals: Vec::new(),
            env: BlockEnv {
                number: 1,
                timestamp: 12,
                gas_limit: 60_000_000,
                base_fee: 7,
                coinbase: COINBASE,
                prevrandao: keccak256("prevrandao"),
                parent_hash: keccak256("parent"),
                parent_beacon_block_root: keccak256("beacon"),
            },
        }
    }

    /// A fresh EOA with a key; listed in the genesis only when `wei > 0`
    /// (`pre.fund_eoa(amount=wei)`).
    pub fn eoa(&mut self, wei: impl Wei) -> Address {
        let key = keccak256([b"gigagas-eip7928".as_slice(), &self.next_key.to_be_bytes()].concat());
        self.next_key += 1;
        let signer = PrivateKeySigner::from_bytes(&key).expect("valid key");
        let address = signer.address();
        self.keys.insert(address, signer);
        let wei = wei.wei();
        if wei > U256::ZERO {
            self.alloc.insert(
                address,
                AllocAccount {
                    balance: wei,
                    ..Default::default()
                },
            );
        }
        address
    }

    /// A funded EOA (`pre.fund_eoa()`: 1,000 ETH here).
    pub fn funded(&mut self) -> Address {
        self.eoa(U256::from(10u64).pow(U256::from(21)))
    }

    /// An address that is nowhere in the genesis and has no key.
    pub fn nobody(&mut self, tag: u8) -> Address {
        let mut a = [0u8; 20];
        a[0] = 0xde;
        a[1] = 0xad;
        a[19] = tag;
        Address::from(a)
    }

    /// `pre.deploy_contract(code)`: nonce 1 at the next contract address.
    pub fn contract(&mut self, code: Code) -> Address {
        self.contract_with(code, &[], 0u64)
    }

    /// `pre.deploy_contract(code, storage=..., balance=...)`.
    pub fn contract_with(
        &mut self,
        code: Code,
        storage: &[(u64, u64)],
        balance: impl Wei,
    ) -> Address {
        self.next_contract += 1;
        let address = Address::from_word(B256::from(U256::from(
            0x1000 * self.next_contract + 0xc0de_0000_0000,
        )));
        self.put(address, code.bytes(), storage, balance, 1);
        address
    }

    /// An account at a chosen address.
    pub fn put(
        &mut self,
        address: Address,
        code: Bytes,
        storage: &[(u64, u64)],
        balance: impl Wei,
        nonce: u64,
    ) {
        self.alloc.insert(
            address,
            AllocAccount {
                balance: balance.wei(),
                nonce,
                code,
                storage: storage
                    .iter()
                    .map(|(k, v)| (U256::from(*k), U256::from(*v)))
                    .collect(),
            },
        );
    }

    /// Marks an existing EOA as delegated in the genesis (`pre.fund_eoa(delegation=...)`).
    pub fn delegate_in_genesis(&mut self, eoa: Address, target: Address) {
        let a = self.alloc.entry(eoa).or_default();
        a.code = delegation(target);
    }

    /// Genesis nonce of an account.
    pub fn set_nonce(&mut self, a: Address, nonce: u64) {
        self.alloc.entry(a).or_default().nonce = nonce;
        self.nonces.insert(a, nonce);
    }

    /// The next nonce `from` will use.
    pub fn nonce(&self, from: Address) -> u64 {
        self.nonces
            .get(&from)
            .copied()
            .unwrap_or_else(|| self.alloc.get(&from).map_or(0, |a| a.nonce))
    }

    /// Bumps the tracked nonce of `a` (an authorization it signed was applied).
    pub fn bump(&mut self, a: Address) {
        let n = self.nonce(a);
        self.nonces.insert(a, n + 1);
    }

    /// An EIP-7702 authorization signed by `signer`.
    pub fn auth(
        &self,
        signer: Address,
        to: Address,
        nonce: u64,
        chain_id: u64,
    ) -> SignedAuthorization {
        let auth = Authorization {
            chain_id: U256::from(chain_id),
            address: to,
            nonce,
        };
        let sig = self.keys[&signer]
            .sign_hash_sync(&auth.signature_hash())
            .expect("signing");
        auth.into_signed(sig)
    }

    /// Signs and appends a transaction (nonce taken from the builder's count).
    pub fn tx(&mut self, t: Tx) -> &mut Self {
        let nonce = self.nonce(t.from);
        self.nonces.insert(t.from, nonce + 1);
        let key = self.keys.get(&t.from).expect("sender has a key").clone();
        let kind = t.to.map_or(TxKind::Create, TxKind::Call);
        let access_list = t.access_list.clone().map(|l| {
            AccessList(
                l.into_iter()
                    .map(|(address, slots)| AccessListItem {
                        address,
                        storage_keys: slots
                            .into_iter()
                            .map(|s| B256::from(U256::from(s)))
                            .collect(),
                    })
                    .collect(),
            )
        });
        // Authorizations that will apply bump their authority's nonce (after the sender's).
        for a in &t.auths {
            if let Ok(authority) = a.recover_authority() {
                if (a.chain_id.is_zero() || a.chain_id == U256::from(CHAIN_ID))
                    && self.nonce(authority) == a.nonce
                {
                    self.bump(authority);
                }
            }
        }
        let envelope: TxEnvelope = if !t.auths.is_empty() {
            let (max_fee, prio) = t.fees.unwrap_or((t.gas_price, t.gas_price));
            sign(
                TxEip7702 {
                    chain_id: CHAIN_ID,
                    nonce,
                    gas_limit: t.gas,
                    max_fee_per_gas: max_fee,
                    max_priority_fee_per_gas: prio,
                    to: t.to.expect("7702 transactions call"),
                    value: t.value,
                    access_list: access_list.unwrap_or_default(),
                    authorization_list: t.auths,
                    input: t.data,
                },
                &key,
            )
            .into()
        } else if let Some((max_fee, prio)) = t.fees {
            sign(
                TxEip1559 {
                    chain_id: CHAIN_ID,
                    nonce,
                    gas_limit: t.gas,
                    max_fee_per_gas: max_fee,
                    max_priority_fee_per_gas: prio,
                    to: kind,
                    value: t.value,
                    access_list: access_list.unwrap_or_default(),
                    input: t.data,
                },
                &key,
            )
            .into()
        } else if let Some(access_list) = access_list {
            sign(
                TxEip2930 {
                    chain_id: CHAIN_ID,
                    nonce,
                    gas_price: t.gas_price,
                    gas_limit: t.gas,
                    to: kind,
                    value: t.value,
                    input: t.data,
                    access_list,
                },
                &key,
            )
            .into()
        } else {
            sign(
                TxLegacy {
                    chain_id: Some(CHAIN_ID),
                    nonce,
                    gas_price: t.gas_price,
                    gas_limit: t.gas,
                    to: kind,
                    value: t.value,
                    input: t.data,
                },
                &key,
            )
            .into()
        };
        self.txs.push(envelope);
        self
    }

    /// Appends a withdrawal of `gwei` to `to` (`Withdrawal(index, validator_index, ...)`).
    pub fn withdraw(&mut self, to: Address, gwei: u64) -> &mut Self {
        let index = self.withdrawals.len() as u64;
        self.withdrawals.push(Withdrawal {
            index,
            validator_index: index,
            address: to,
            amount: gwei,
        });
        self
    }

    /// The scenario.
    pub fn build(self) -> Scenario {
        let n = self.txs.len();
        Scenario {
            spec: SpecId::AMSTERDAM,
            alloc: self.alloc,
            env: self.env,
            transactions: self.txs,
            labels: vec!["eip7928 scenario"; n],
            withdrawals: self.withdrawals,
        }
    }
}

fn sign<T: SignableTransaction<alloy_primitives::Signature>>(
    tx: T,
    key: &PrivateKeySigner,
) -> alloy_consensus::Signed<T> {
    let signature = key.sign_hash_sync(&tx.signature_hash()).expect("signing");
    tx.into_signed(signature)
}
