//! The `BlockchainTests` JSON format: one file maps test names to a genesis, blocks (as RLP,
//! possibly with `expectException`) and the expected end state.

use alloy_primitives::{map::HashMap, Address, Bytes, B256, U256};
use gigagas_data::{PreAccount, PreState};
use revm::{bytecode::Bytecode, state::AccountInfo};
use serde::Deserialize;
use std::{collections::BTreeMap, sync::Arc};

/// One blockchain test.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockchainTest {
    /// Fork or fork-transition name (`Cancun`, `FrontierToHomesteadAt5`, ...).
    pub network: String,
    /// Genesis state.
    pub pre: BTreeMap<Address, FixtureAccount>,
    /// RLP of the genesis block.
    #[serde(rename = "genesisRLP")]
    pub genesis_rlp: Option<Bytes>,
    /// The genesis header as JSON (its `hash` and `stateRoot` are used).
    pub genesis_block_header: GenesisHeader,
    /// Blocks in import order (valid and invalid).
    pub blocks: Vec<FixtureBlock>,
    /// Hash of the chain head after importing every block.
    pub lastblockhash: B256,
    /// Expected state at the head.
    pub post_state: Option<BTreeMap<Address, FixtureAccount>>,
    /// Expected state root at the head (large tests carry this instead of `postState`).
    pub post_state_hash: Option<B256>,
    /// `NoProof` or `Ethash` (PoW seals are not verified; see the README).
    #[serde(default)]
    pub seal_engine: Option<String>,
}

/// The fields of the genesis header the runner uses.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenesisHeader {
    /// Genesis block hash.
    pub hash: B256,
    /// Genesis state root.
    pub state_root: B256,
}

/// One block of a test.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureBlock {
    /// The block's RLP, hex (may be deliberately malformed).
    pub rlp: String,
    /// Set when the block must be rejected: the expected reason(s), `|`-separated.
    pub expect_exception: Option<String>,
}

/// An account in `pre` / `postState`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FixtureAccount {
    /// Balance in wei.
    pub balance: U256,
    /// Nonce.
    pub nonce: U256,
    /// Code.
    #[serde(default)]
    pub code: Bytes,
    /// Storage (zero values may appear and mean absent).
    #[serde(default)]
    pub storage: BTreeMap<U256, U256>,
}

/// Parses one fixture file: test name → test.
pub fn parse_file(text: &str) -> Result<BTreeMap<String, serde_json::Value>, serde_json::Error> {
    serde_json::from_str(text)
}

/// Parses one test from its JSON value.
pub fn parse_test(value: serde_json::Value) -> Result<BlockchainTest, serde_json::Error> {
    serde_json::from_value(value)
}

/// An account as the engine's pre-state holds it.
pub fn to_pre_account(account: &FixtureAccount) -> PreAccount {
    let code = Bytecode::new_raw(account.code.clone());
    PreAccount {
        info: AccountInfo {
            balance: account.balance,
            nonce: account.nonce.saturating_to(),
            code_hash: code.hash_slow(),
            code: Some(code),
            ..Default::default()
        },
        storage: account
            .storage
            .iter()
            .filter(|(_, v)| !v.is_zero())
            .map(|(k, v)| (*k, *v))
            .collect(),
    }
}

/// The genesis state of a test (no block hashes yet).
pub fn genesis_state(pre: &BTreeMap<Address, FixtureAccount>) -> PreState {
    let accounts: HashMap<Address, PreAccount> = pre
        .iter()
        .map(|(address, account)| (*address, to_pre_account(account)))
        .collect();
    PreState::new(accounts, Arc::default())
}
