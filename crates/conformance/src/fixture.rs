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
    /// The genesis header as JSON: every field must agree with `genesisRLP`.
    pub genesis_block_header: JsonHeader,
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

/// A block header as the fixture writes it in JSON (`genesisBlockHeader`, each block's
/// `blockHeader`; ethereum/tests field names), kept as raw JSON so that every field, of any
/// width, can be compared with the header decoded from the RLP ([`JsonHeader::first_difference`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct JsonHeader(pub serde_json::Map<String, serde_json::Value>);

/// A field in which a JSON header and the header decoded from RLP differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderDifference {
    /// The JSON field name (`gasLimit`, `hash`, ...).
    pub field: String,
    /// The JSON value as written (`absent` when the JSON leaves the field out).
    pub json: String,
    /// The RLP header's value (`absent` when the RLP header lacks the field).
    pub rlp: String,
}

impl std::fmt::Display for HeaderDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: JSON {}, RLP {}", self.field, self.json, self.rlp)
    }
}

/// How a header field is written: a quantity (leading zeros allowed) or fixed bytes.
enum Field<'a> {
    Number(Option<U256>),
    Bytes(Option<&'a [u8]>),
}

const ABSENT: &str = "absent";

impl JsonHeader {
    /// The first field in which `header` (decoded from the block's or the genesis RLP)
    /// differs from this JSON header, in header order, then `hash` (the RLP header's hash),
    /// then any JSON field that is no header field; `None` when they agree. A field present
    /// on one side only differs; numbers of any width are compared without leading zeros.
    pub fn first_difference(&self, header: &alloy_consensus::Header) -> Option<HeaderDifference> {
        let h = header;
        let num = |x: u64| Field::Number(Some(U256::from(x)));
        let opt = |x: Option<u64>| Field::Number(x.map(U256::from));
        let hash = h.hash_slow();
        let fields: [(&str, Field<'_>); 23] = [
            ("parentHash", Field::Bytes(Some(&h.parent_hash[..]))),
            ("uncleHash", Field::Bytes(Some(&h.ommers_hash[..]))),
            ("coinbase", Field::Bytes(Some(&h.beneficiary[..]))),
            ("stateRoot", Field::Bytes(Some(&h.state_root[..]))),
            (
                "transactionsTrie",
                Field::Bytes(Some(&h.transactions_root[..])),
            ),
            ("receiptTrie", Field::Bytes(Some(&h.receipts_root[..]))),
            ("bloom", Field::Bytes(Some(&h.logs_bloom[..]))),
            ("difficulty", Field::Number(Some(h.difficulty))),
            ("number", num(h.number)),
            ("gasLimit", num(h.gas_limit)),
            ("gasUsed", num(h.gas_used)),
            ("timestamp", num(h.timestamp)),
            ("extraData", Field::Bytes(Some(&h.extra_data[..]))),
            ("mixHash", Field::Bytes(Some(&h.mix_hash[..]))),
            ("nonce", Field::Bytes(Some(&h.nonce[..]))),
            ("baseFeePerGas", opt(h.base_fee_per_gas)),
            (
                "withdrawalsRoot",
                Field::Bytes(h.withdrawals_root.as_ref().map(|r| &r[..])),
            ),
            ("blobGasUsed", opt(h.blob_gas_used)),
            ("excessBlobGas", opt(h.excess_blob_gas)),
            (
                "parentBeaconBlockRoot",
                Field::Bytes(h.parent_beacon_block_root.as_ref().map(|r| &r[..])),
            ),
            (
                "requestsHash",
                Field::Bytes(h.requests_hash.as_ref().map(|r| &r[..])),
            ),
            (
                "blockAccessListHash",
                Field::Bytes(h.block_access_list_hash.as_ref().map(|r| &r[..])),
            ),
            ("slotNumber", opt(h.slot_number)),
        ];
        let hash_field = ("hash", Field::Bytes(Some(&hash[..])));
        for (name, rlp) in fields.iter().chain(std::iter::once(&hash_field)) {
            if let Some(d) = self.differs(name, rlp) {
                return Some(d);
            }
        }
        let known = |k: &str| k == "hash" || fields.iter().any(|(name, _)| *name == k);
        self.0
            .iter()
            .find(|(k, _)| !known(k))
            .map(|(k, v)| HeaderDifference {
                field: k.clone(),
                json: v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                rlp: "no such header field".into(),
            })
    }

    /// `Some` when the JSON field `name` does not say `rlp`.
    fn differs(&self, name: &str, rlp: &Field<'_>) -> Option<HeaderDifference> {
        let rlp_text = match rlp {
            Field::Number(Some(n)) => format!("{n:#x}"),
            Field::Bytes(Some(b)) => format!("0x{}", alloy_primitives::hex::encode(b)),
            Field::Number(None) | Field::Bytes(None) => ABSENT.to_owned(),
        };
        let difference = |json: String| {
            Some(HeaderDifference {
                field: name.to_owned(),
                json,
                rlp: rlp_text.clone(),
            })
        };
        let Some(json) = self.0.get(name) else {
            return match rlp {
                Field::Number(None) | Field::Bytes(None) => None,
                _ => difference(ABSENT.to_owned()),
            };
        };
        let Some(text) = json.as_str() else {
            return difference(format!("{json} (not a 0x-hex string)"));
        };
        let digits = text.strip_prefix("0x").unwrap_or(text).to_ascii_lowercase();
        let same = match rlp {
            Field::Number(Some(n)) => {
                let trimmed = digits.trim_start_matches('0');
                text.starts_with("0x") && trimmed == format!("{n:x}").trim_start_matches('0')
            }
            Field::Bytes(Some(b)) => {
                text.starts_with("0x") && digits == alloy_primitives::hex::encode(b)
            }
            Field::Number(None) | Field::Bytes(None) => false,
        };
        if same {
            None
        } else {
            difference(text.to_owned())
        }
    }
}

/// One block of a test.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixtureBlock {
    /// The block's RLP, hex (may be deliberately malformed).
    pub rlp: String,
    /// The block's header as JSON (valid blocks): every field must agree with the header in
    /// `rlp` (JSON, not yet checked to be an object).
    #[serde(default)]
    pub block_header: Option<serde_json::Value>,
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
