//! The `BlockchainTests` JSON format: one file maps test names to a genesis, blocks (as RLP,
//! possibly with `expectException`) and the expected end state.

use alloy_primitives::{map::HashMap, Address, Bloom, Bytes, B256, B64, U256, U64};
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
    /// The genesis header as JSON: every field must agree with `genesisRLP`.
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

/// The genesis header as the fixture writes it in JSON (ethereum/tests field names).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenesisHeader {
    /// Genesis block hash.
    pub hash: B256,
    /// Genesis state root.
    pub state_root: B256,
    /// Parent hash.
    pub parent_hash: B256,
    /// Ommers hash.
    pub uncle_hash: B256,
    /// Beneficiary.
    pub coinbase: Address,
    /// Transactions root.
    pub transactions_trie: B256,
    /// Receipts root.
    pub receipt_trie: B256,
    /// Logs bloom.
    pub bloom: Bloom,
    /// Difficulty.
    pub difficulty: U256,
    /// Block number.
    pub number: U64,
    /// Gas limit.
    pub gas_limit: U64,
    /// Gas used.
    pub gas_used: U64,
    /// Timestamp.
    pub timestamp: U64,
    /// Extra data.
    pub extra_data: Bytes,
    /// Mix hash (prev-randao).
    pub mix_hash: B256,
    /// PoW nonce.
    pub nonce: B64,
    /// EIP-1559 base fee.
    #[serde(default)]
    pub base_fee_per_gas: Option<U64>,
    /// EIP-4895 withdrawals root.
    #[serde(default)]
    pub withdrawals_root: Option<B256>,
    /// EIP-4844 blob gas used.
    #[serde(default)]
    pub blob_gas_used: Option<U64>,
    /// EIP-4844 excess blob gas.
    #[serde(default)]
    pub excess_blob_gas: Option<U64>,
    /// EIP-4788 parent beacon block root.
    #[serde(default)]
    pub parent_beacon_block_root: Option<B256>,
    /// EIP-7685 requests hash.
    #[serde(default)]
    pub requests_hash: Option<B256>,
    /// EIP-7928 block access list hash.
    #[serde(default)]
    pub block_access_list_hash: Option<B256>,
    /// EIP-7843 slot number (Amsterdam fixtures from bal@v7).
    #[serde(default)]
    pub slot_number: Option<U64>,
}

impl GenesisHeader {
    /// The first field in which `header` (decoded from `genesisRLP`) differs from this JSON
    /// header, as (field, JSON value, RLP value); `None` when they agree.
    pub fn first_difference(
        &self,
        header: &alloy_consensus::Header,
    ) -> Option<(&'static str, String, String)> {
        fn differ<T: PartialEq + std::fmt::Debug>(
            name: &'static str,
            json: T,
            rlp: T,
        ) -> Option<(&'static str, String, String)> {
            (json != rlp).then(|| (name, format!("{json:?}"), format!("{rlp:?}")))
        }
        let h = header;
        let u = |x: U64| x.to::<u64>();
        differ("parentHash", self.parent_hash, h.parent_hash)
            .or_else(|| differ("uncleHash", self.uncle_hash, h.ommers_hash))
            .or_else(|| differ("coinbase", self.coinbase, h.beneficiary))
            .or_else(|| differ("stateRoot", self.state_root, h.state_root))
            .or_else(|| {
                differ(
                    "transactionsTrie",
                    self.transactions_trie,
                    h.transactions_root,
                )
            })
            .or_else(|| differ("receiptTrie", self.receipt_trie, h.receipts_root))
            .or_else(|| differ("bloom", self.bloom, h.logs_bloom))
            .or_else(|| differ("difficulty", self.difficulty, h.difficulty))
            .or_else(|| differ("number", u(self.number), h.number))
            .or_else(|| differ("gasLimit", u(self.gas_limit), h.gas_limit))
            .or_else(|| differ("gasUsed", u(self.gas_used), h.gas_used))
            .or_else(|| differ("timestamp", u(self.timestamp), h.timestamp))
            .or_else(|| differ("extraData", &self.extra_data, &h.extra_data))
            .or_else(|| differ("mixHash", self.mix_hash, h.mix_hash))
            .or_else(|| differ("nonce", self.nonce, h.nonce))
            .or_else(|| {
                differ(
                    "baseFeePerGas",
                    self.base_fee_per_gas.map(u),
                    h.base_fee_per_gas,
                )
            })
            .or_else(|| differ("withdrawalsRoot", self.withdrawals_root, h.withdrawals_root))
            .or_else(|| differ("blobGasUsed", self.blob_gas_used.map(u), h.blob_gas_used))
            .or_else(|| {
                differ(
                    "excessBlobGas",
                    self.excess_blob_gas.map(u),
                    h.excess_blob_gas,
                )
            })
            .or_else(|| {
                differ(
                    "parentBeaconBlockRoot",
                    self.parent_beacon_block_root,
                    h.parent_beacon_block_root,
                )
            })
            .or_else(|| differ("requestsHash", self.requests_hash, h.requests_hash))
            .or_else(|| {
                differ(
                    "blockAccessListHash",
                    self.block_access_list_hash,
                    h.block_access_list_hash,
                )
            })
            .or_else(|| differ("slotNumber", self.slot_number.map(u), h.slot_number))
    }
}

/// One block of a test.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureBlock {
    /// The block's RLP, hex (may be deliberately malformed).
    pub rlp: String,
    /// Set when the block must be rejected: the expected reason(s), `|`-separated.
    pub expect_exception: Option<String>,
    /// The block decoded as JSON (execution-specs fixtures); Amsterdam ones hold the block's
    /// access list (`blockAccessList`) here.
    #[serde(default, rename = "rlp_decoded")]
    pub rlp_decoded: Option<serde_json::Value>,
    /// The block's access list at block level (some execution-specs releases).
    #[serde(default)]
    pub block_access_list: Option<serde_json::Value>,
}

impl FixtureBlock {
    /// The block access list the fixture states for this block, if any (`None` also when
    /// it does not parse: the header's hash is what the block commits to).
    pub fn given_bal(&self) -> Option<alloy_eip7928::BlockAccessList> {
        let value = self.block_access_list.as_ref().or_else(|| {
            self.rlp_decoded
                .as_ref()
                .and_then(|d| d.get("blockAccessList"))
        })?;
        serde_json::from_value(value.clone()).ok()
    }
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
        fill: None,
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
