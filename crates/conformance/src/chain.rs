//! Imports one blockchain test: genesis, then every block through the selected paths.

use crate::{
    exceptions::Judgement,
    fixture::{genesis_state, to_pre_account, BlockchainTest, FixtureBlock, JsonHeader},
    fork::{parse_network, NetworkError, Schedule},
    header::{self, Body, RuleError},
};
use alloy_consensus::{transaction::SignerRecoverable, Block, Header, TxEnvelope};
use alloy_eip7928::BlockAccessList;
use alloy_primitives::{hex, map::HashMap, Address, B256, U256};
use alloy_rlp::Decodable;
use gigagas_data::{BlockInput, PreState, Transaction};
use gigagas_exec::{
    execute_parallel, execute_sequential, BlockAccess, BlockEnvs, ExecError, IntermediateRoots,
    PreparedBlock, Scheduler, WorkerPool,
};
use gigagas_verify::{
    check_against_header, compare_receipts,
    mutation::{mutants, MutationKind},
    VerifyError,
};
use revm::primitives::hardfork::SpecId;
use std::{collections::BTreeMap, path::Path, sync::Arc};

/// Which execution paths import each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Sequential execution only (it also builds the BAL, unchecked by a second path).
    Sequential,
    /// The BAL-parallel path only (the BAL still comes from a sequential run, whose results
    /// are not checked).
    Parallel,
    /// Both paths, each checked against the fixture.
    Both,
}

impl Mode {
    fn checks_sequential(self) -> bool {
        matches!(self, Self::Sequential | Self::Both)
    }
    fn runs_parallel(self) -> bool {
        matches!(self, Self::Parallel | Self::Both)
    }
}

/// Why a block was not imported.
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    /// The block RLP does not decode (or has trailing bytes).
    #[error("block RLP does not decode: {0}")]
    Decode(String),
    /// A transaction's integer field is wider than the transaction types hold (a gas price
    /// of more than 128 bits): the block's RLP is well formed but does not decode.
    #[error("tx {tx}: {field} of {len} bytes does not fit the decoder's type")]
    FieldRange {
        /// Transaction index.
        tx: usize,
        /// `nonce`, `gas price` or `gas limit`.
        field: &'static str,
        /// Bytes the field has.
        len: usize,
    },
    /// The parent is not a block this test imported.
    #[error("unknown parent {0}")]
    UnknownParent(B256),
    /// A header or body rule is broken.
    #[error("header/body rule {0}")]
    Rule(#[from] RuleError),
    /// A transaction's signature does not recover.
    #[error("tx {tx}: signature: {what}")]
    Signature {
        /// Transaction index.
        tx: usize,
        /// Recovery error.
        what: String,
    },
    /// Execution in `path` rejected the block or its results differ from the header.
    #[error("{path}: {error}")]
    Execution {
        /// `sequential` or `parallel`.
        path: &'static str,
        /// The engine's error (names block, transaction, account, slot).
        error: Box<ExecError>,
    },
    /// The parallel path accepted a BAL with one lie in it.
    #[error("BAL mutant accepted ({}): {description}", kind.name())]
    MutantAccepted {
        /// The lie.
        kind: MutationKind,
        /// Where.
        description: String,
    },
    /// The parallel path rejected a lying BAL, but not with an error naming the BAL defect.
    #[error("BAL mutant ({}) {description} rejected without naming the defect: {error}", kind.name())]
    MutantMisreported {
        /// The lie.
        kind: MutationKind,
        /// Where.
        description: String,
        /// The error it gave.
        error: Box<ExecError>,
    },
    /// The block access list execution built does not hash to the header's
    /// `block_access_list_hash` (EIP-7928; checked last, after the state root, as the
    /// execution specs do).
    #[error("BAL hash mismatch: header has {expected:?}, the BAL execution built hashes to {actual}{difference}")]
    BalHash {
        /// The header's `block_access_list_hash` (`None`: missing from an Amsterdam header).
        expected: Option<B256>,
        /// Hash of the BAL the sequential path built.
        actual: B256,
        /// Where the BAL the fixture states differs from the built one (empty if unknown).
        difference: String,
    },
    /// The block access list the fixture carries (a fourth body element, or the block's
    /// `blockAccessList` JSON) is malformed or does not hash to the header's.
    #[error("the block's own BAL: {0}")]
    FixtureBal(String),
    /// The post-state root of `path` differs from the header's.
    #[error("{path}: state root mismatch: header has {expected}, execution produced {actual}")]
    StateRoot {
        /// `sequential` or `parallel`.
        path: &'static str,
        /// Header value.
        expected: B256,
        /// Computed value.
        actual: B256,
    },
}

impl Rejection {
    /// Short category for grouping failures.
    pub fn category(&self) -> String {
        match self {
            Self::Decode(_) => "rlp decode".into(),
            Self::FieldRange { .. } => "rlp decode: field range".into(),
            Self::UnknownParent(_) => "unknown parent".into(),
            Self::Rule(r) => format!("rule {}", r.rule),
            Self::Signature { .. } => "signature".into(),
            Self::Execution { path, error } => match error.as_ref() {
                ExecError::InvalidTx { .. } => format!("{path}: invalid tx"),
                ExecError::Verify(VerifyError::Header { field, .. }) => format!("{path}: {field}"),
                ExecError::Verify(VerifyError::HeaderRule { rule, .. }) => {
                    format!("{path}: rule {rule}")
                }
                ExecError::Verify(VerifyError::TxResult { field, .. }) => {
                    format!("{path}: parallel != sequential {field}")
                }
                ExecError::Verify(VerifyError::Bal { .. }) => format!("{path}: BAL check"),
                ExecError::Lifecycle { .. } => format!("{path}: lifecycle"),
                ExecError::Evm { .. } => format!("{path}: evm error"),
                ExecError::Sender { .. } => format!("{path}: sender"),
                ExecError::Unsupported { .. } => format!("{path}: unsupported"),
                ExecError::State { .. } => format!("{path}: state store"),
            },
            Self::StateRoot { path, .. } => format!("{path}: state root"),
            Self::BalHash { .. } => "BAL hash".into(),
            Self::FixtureBal(_) => "fixture BAL".into(),
            Self::MutantAccepted { kind, .. } => format!("BAL mutant accepted: {}", kind.name()),
            Self::MutantMisreported { kind, .. } => {
                format!("BAL mutant misreported: {}", kind.name())
            }
        }
    }
}

/// A test's result before it is labelled with file and name.
#[derive(Debug, Clone)]
pub enum TestResult {
    /// Every block behaved as the fixture says, in every selected path.
    Passed {
        /// Blocks imported.
        imported: usize,
        /// Blocks rejected as expected.
        rejected: usize,
        /// BAL mutants generated (and rejected) per kind.
        mutants: BTreeMap<MutationKind, usize>,
        /// Blocks the on-disk store also checked (0 without `disk`).
        store_blocks: usize,
        /// Blocks with `expectException` rejected for one of the expected reasons.
        exceptions_matched: usize,
        /// Of those, blocks judged with the transactions-root rule waived (legacy fixtures
        /// whose header does not commit to the invalid transaction).
        exceptions_waived: usize,
        /// Blocks with `expectException` rejected where the mapping could not tell whether
        /// the reason is the expected one (`crate::exceptions`): one line each.
        exceptions_unmapped: Vec<String>,
    },
    /// Something differs; `category` groups failures, `detail` names block/tx/account/slot.
    Failed {
        /// Short reason.
        category: String,
        /// Full message.
        detail: String,
    },
    /// Not run, with the reason.
    Skipped(String),
}

fn failed(category: impl Into<String>, detail: impl Into<String>) -> TestResult {
    TestResult::Failed {
        category: category.into(),
        detail: detail.into(),
    }
}

/// A block of the test chain after import.
struct Imported {
    header: Header,
    spec: SpecId,
    state: Arc<PreState>,
    total_difficulty: U256,
}

/// Expected-exception names that need checks this runner does not make (ommer header
/// validation); a test expecting one is skipped with this reason.
fn unchecked_exception(expected: &str) -> Option<&'static str> {
    let all_unchecked = expected.split('|').all(|e| {
        let e = e.trim();
        (e.contains("UNCLE") && !e.contains("UNCLES_OVER_PARIS")) || e.contains("OMMER")
    });
    all_unchecked
        .then_some("expects an ommer (uncle) header rejection; ommer headers are not validated")
}

/// Runs one test through `mode` on `pool`; with `mutations > 0`, also that many BAL mutants
/// of each kind per valid block, each of which the parallel path must reject naming the
/// defect; with `disk`, every imported block's state transition also through the on-disk
/// store ([`crate::disk`]). `source` labels error messages.
pub fn run_test(
    test: &BlockchainTest,
    mode: Mode,
    mutations: usize,
    disk: bool,
    pool: &WorkerPool,
    source: &Path,
) -> TestResult {
    let schedule = match parse_network(&test.network) {
        Ok(s) => s,
        Err(NetworkError::Unknown(name)) => {
            return failed("unknown fork", format!("unknown network {name:?}"))
        }
        Err(NetworkError::Unsupported(why)) => return TestResult::Skipped(why.to_owned()),
    };
    if let Some(why) = test
        .blocks
        .iter()
        .filter_map(|b| b.expect_exception.as_deref())
        .find_map(unchecked_exception)
    {
        return TestResult::Skipped(why.to_owned());
    }

    // Genesis: its JSON header must be its RLP header, field for field (hash included).
    let genesis_state = genesis_state(&test.pre);
    let Some(genesis_rlp) = &test.genesis_rlp else {
        return failed("fixture", "no genesisRLP");
    };
    let genesis = match Header::decode(&mut &genesis_rlp[..]) {
        Ok(h) => h,
        Err(_) => match decode_block(genesis_rlp) {
            Ok((block, _)) => block.header,
            Err(e) => return failed("fixture", format!("genesis RLP: {e}")),
        },
    };
    if let Some(d) = test.genesis_block_header.first_difference(&genesis) {
        return failed(
            "fixture",
            format!(
                "genesisBlockHeader and genesisRLP disagree on {}: JSON {}, RLP {}",
                d.field, d.json, d.rlp
            ),
        );
    }
    let root = gigagas_state::state_root(&genesis_state);
    if root != genesis.state_root {
        return failed(
            "genesis state root",
            format!(
                "genesis: pre-state root {root}, header has {}",
                genesis.state_root
            ),
        );
    }
    let genesis_hash = genesis.hash_slow();
    let mut chain: HashMap<B256, Imported> = HashMap::default();
    chain.insert(
        genesis_hash,
        Imported {
            spec: schedule.spec(0, genesis.timestamp, U256::ZERO),
            total_difficulty: genesis.difficulty,
            header: genesis,
            state: Arc::new(genesis_state),
        },
    );

    let (mut imported, mut rejected) = (0, 0);
    let (mut exceptions_matched, mut exceptions_unmapped) = (0, Vec::new());
    let mut exceptions_waived = 0;
    let mut mutants = BTreeMap::new();
    let mut replay = match disk.then(crate::disk::DiskReplay::new).transpose() {
        Ok(r) => r,
        Err(e) => return failed("disk store", e),
    };
    for (k, block) in test.blocks.iter().enumerate() {
        if let Err(e) = check_json_header(block) {
            return failed("fixture", format!("block #{k}: {e}"));
        }
        let settings = ImportSettings {
            mode,
            mutations: if block.expect_exception.is_none() && mode.runs_parallel() {
                mutations
            } else {
                0
            },
            position: k,
            waive_transactions_root: false,
        };
        let given = block.given_bal();
        let outcome = import_block(
            &block.rlp,
            &chain,
            &schedule,
            settings,
            given.as_ref(),
            pool,
            source,
        );
        match (outcome, &block.expect_exception) {
            (Ok((hash, block, killed)), None) => {
                if let Some(replay) = &mut replay {
                    let parent = &chain[&block.header.parent_hash];
                    if let Err(e) = replay.apply(
                        &parent.header,
                        &parent.state,
                        &block.header,
                        hash,
                        &block.state,
                    ) {
                        return failed("disk store", format!("block #{k}: {e}"));
                    }
                }
                chain.insert(hash, block);
                imported += 1;
                for (kind, n) in killed {
                    *mutants.entry(kind).or_default() += n;
                }
            }
            (Ok((hash, ..)), Some(expected)) => {
                return failed(
                    "accepted an invalid block",
                    format!("block #{k} ({hash}) imported, but the fixture expects {expected}"),
                )
            }
            (Err(rejection), Some(expected)) => {
                rejected += 1;
                let mut rejection = rejection;
                let mut judgement = crate::exceptions::judge(expected, &rejection);
                // Legacy (retesteth-filled) fixtures build an invalid-transaction block's
                // header without the invalid transaction, so its transactions root does not
                // commit to the body: every client stops there. The expected transaction
                // exception is then checked by importing the block again with that one rule
                // waived, and counted apart.
                if matches!(judgement, Judgement::Mismatch(_))
                    && matches!(&rejection, Rejection::Rule(r)
                        if r.rule == "transactions_root"
                            || (r.rule == "blob_gas_used" && r.detail.starts_with("expected")))
                    && expected.contains("TransactionException.")
                {
                    let waived = ImportSettings {
                        waive_transactions_root: true,
                        ..settings
                    };
                    match import_block(
                        &block.rlp,
                        &chain,
                        &schedule,
                        waived,
                        given.as_ref(),
                        pool,
                        source,
                    ) {
                        Err(second) => {
                            judgement = crate::exceptions::judge(expected, &second);
                            if matches!(judgement, Judgement::Matched(_)) {
                                exceptions_waived += 1;
                            }
                            rejection = second;
                        }
                        Ok((hash, ..)) => {
                            return failed(
                                "accepted an invalid block",
                                format!(
                                    "block #{k} ({hash}): its transactions root does not commit to its body (legacy fixture); with that rule waived the block imports, but the fixture expects {expected}"
                                ),
                            )
                        }
                    }
                }
                match judgement {
                    Judgement::Matched(_) => exceptions_matched += 1,
                    Judgement::Unmapped(why) => exceptions_unmapped.push(format!(
                        "block #{k}: expected {expected}, rejected: {rejection} ({why})"
                    )),
                    Judgement::Mismatch(reason) => {
                        return failed(
                            crate::summary::WRONG_REASON,
                            format!(
                                "block #{k}: expected {expected}, rejected for {}: {rejection}",
                                crate::exceptions::describe(&reason)
                            ),
                        )
                    }
                }
            }
            (Err(rejection), None) => {
                return failed(rejection.category(), format!("block #{k}: {rejection}"));
            }
        }
    }

    // End state at the head.
    let Some(head) = chain.get(&test.lastblockhash) else {
        return failed(
            "head",
            format!("lastblockhash {} was not imported", test.lastblockhash),
        );
    };
    if test.post_state.is_none() && test.post_state_hash.is_none() {
        return failed(
            "no expected state",
            "the test has neither postState nor postStateHash: nothing to check the head state against",
        );
    }
    if let Some(expected) = &test.post_state {
        if let Some(diff) = first_state_difference(expected, &head.state) {
            return failed("post state", diff);
        }
    }
    if let Some(expected) = test.post_state_hash {
        let root = gigagas_state::state_root(&head.state);
        if root != expected {
            return failed(
                "post state",
                format!("head state root {root}, postStateHash {expected}"),
            );
        }
    }
    if let Some(replay) = &replay {
        if let Err(e) = replay.finish() {
            return failed("disk store", e);
        }
    }
    TestResult::Passed {
        imported,
        rejected,
        mutants,
        store_blocks: replay.as_ref().map_or(0, |r| r.blocks),
        exceptions_matched,
        exceptions_waived,
        exceptions_unmapped,
    }
}

/// Checks a valid block's JSON header (`blockHeader`) against the header its `rlp` holds:
/// the first field that differs (hash included) is an error naming it with both values. A
/// block with `expectException` is not checked: its JSON (`rlp_decoded`) may not be able to
/// state the invalid header (a pre-fork header with blob fields, a field of 400 bits) and
/// the block is judged by its rejection. When the RLP header does not decode there is
/// nothing to compare: the import then fails on it.
fn check_json_header(block: &FixtureBlock) -> Result<(), String> {
    let (None, Some(json)) = (&block.expect_exception, &block.block_header) else {
        return Ok(());
    };
    let Some(header) = rlp_header(&block.rlp) else {
        return Ok(());
    };
    let Some(object) = json.as_object() else {
        return Err(format!("blockHeader is not a JSON object: {json}"));
    };
    match JsonHeader(object.clone()).first_difference(&header) {
        Some(d) => Err(format!(
            "blockHeader and rlp disagree on {}: JSON {}, RLP {}",
            d.field, d.json, d.rlp
        )),
        None => Ok(()),
    }
}

/// The header of a block given as RLP hex, if the hex, the block's list and the header
/// decode (the rest of the block is not looked at).
fn rlp_header(rlp_hex: &str) -> Option<Header> {
    let bytes = hex::decode(rlp_hex).ok()?;
    let mut buf = &bytes[..];
    let outer = alloy_rlp::Header::decode(&mut buf).ok()?;
    if !outer.list || outer.payload_length > buf.len() {
        return None;
    }
    let mut payload = &buf[..outer.payload_length];
    Header::decode(&mut payload).ok()
}

/// Per-block settings of an import.
#[derive(Clone, Copy)]
struct ImportSettings {
    mode: Mode,
    /// BAL mutants per kind to try (0: none).
    mutations: usize,
    /// Position of the block in the fixture (rotates the scheduler).
    position: usize,
    /// Take the header's transactions root and blob gas used to be the body's (legacy
    /// invalid-transaction fixtures only; the block is judged, never imported).
    waive_transactions_root: bool,
}

/// The first legacy transaction integer field wider than the decoder's type (nonce and gas
/// limit 8 bytes, gas price 16), as (transaction index, field, bytes): why a block whose RLP
/// is well formed does not decode.
fn oversized_tx_field(bytes: &[u8]) -> Option<(usize, &'static str, usize)> {
    fn list(buf: &mut &[u8]) -> Option<Vec<(bool, usize, usize)>> {
        // (is list, payload start offset, payload length) of each item of the list at `buf`.
        let outer = alloy_rlp::Header::decode(buf).ok()?;
        if !outer.list || buf.len() < outer.payload_length {
            return None;
        }
        let base = buf.as_ptr() as usize;
        let mut payload = &buf[..outer.payload_length];
        let mut items = Vec::new();
        while !payload.is_empty() {
            let h = alloy_rlp::Header::decode(&mut payload).ok()?;
            if payload.len() < h.payload_length {
                return None;
            }
            items.push((h.list, payload.as_ptr() as usize - base, h.payload_length));
            payload = &payload[h.payload_length..];
        }
        Some(items)
    }
    let mut buf = bytes;
    let block_items = list(&mut buf)?;
    let &(is_list, offset, len) = block_items.get(1)?;
    if !is_list {
        return None;
    }
    // The transactions, one by one.
    let mut tx_buf = buf.get(offset..offset + len)?;
    let mut k = 0;
    while !tx_buf.is_empty() {
        let h = alloy_rlp::Header::decode(&mut tx_buf).ok()?;
        let item = tx_buf.get(..h.payload_length)?;
        if h.list {
            let mut with_header = Vec::new();
            alloy_rlp::Header {
                list: true,
                payload_length: item.len(),
            }
            .encode(&mut with_header);
            with_header.extend_from_slice(item);
            let fields = list(&mut &with_header[..])?;
            for (i, name, max) in [(0, "nonce", 8), (1, "gas price", 16), (2, "gas limit", 8)] {
                if let Some(&(false, _, flen)) = fields.get(i) {
                    if flen > max {
                        return Some((k, name, flen));
                    }
                }
            }
        }
        tx_buf = &tx_buf[h.payload_length..];
        k += 1;
    }
    None
}

/// The first account where `given` (the fixture's BAL) and `built` (execution's) differ.
fn bal_difference(given: &BlockAccessList, built: &BlockAccessList) -> String {
    let find = |bal: &BlockAccessList, a: Address| bal.iter().find(|c| c.address == a).cloned();
    for b in built {
        match find(given, b.address) {
            None => return format!("; the block's BAL lacks account {}", b.address),
            Some(g) if g != *b => {
                return format!(
                    "; account {} differs: the block's BAL says {g:?}, execution built {b:?}",
                    b.address
                )
            }
            Some(_) => {}
        }
    }
    match given.iter().find(|g| find(built, g.address).is_none()) {
        Some(g) => format!(
            "; the block's BAL lists account {}, which execution did not access",
            g.address
        ),
        None => "; the two BALs hold the same accounts (order or encoding differs)".into(),
    }
}

/// Decodes a block: header, transactions, ommers, optional withdrawals and, in bal@v2.0.0
/// fixtures, the block access list as a fourth body element. No trailing bytes.
fn decode_block(bytes: &[u8]) -> Result<(Block<TxEnvelope>, Option<BlockAccessList>), String> {
    let mut slice = bytes;
    match Block::<TxEnvelope>::decode(&mut slice) {
        Ok(block) if slice.is_empty() => Ok((block, None)),
        Ok(_) => Err(format!("{} trailing bytes", slice.len())),
        Err(first) => {
            // Only the four-element body is tried again; any other defect keeps the
            // decoder's own message.
            let mut buf = bytes;
            let four = (|| -> alloy_rlp::Result<_> {
                let outer = alloy_rlp::Header::decode(&mut buf)?;
                if !outer.list || buf.len() < outer.payload_length {
                    return Err(alloy_rlp::Error::Custom("not a block list"));
                }
                let (mut payload, rest) = buf.split_at(outer.payload_length);
                let header = Header::decode(&mut payload)?;
                let transactions = Vec::<TxEnvelope>::decode(&mut payload)?;
                let ommers = Vec::<Header>::decode(&mut payload)?;
                let withdrawals = alloy_eips::eip4895::Withdrawals::decode(&mut payload)?;
                let bal = BlockAccessList::decode(&mut payload)?;
                if !payload.is_empty() || !rest.is_empty() {
                    return Err(alloy_rlp::Error::Custom("trailing bytes"));
                }
                Ok((
                    Block {
                        header,
                        body: alloy_consensus::BlockBody {
                            transactions,
                            ommers,
                            withdrawals: Some(withdrawals),
                        },
                    },
                    bal,
                ))
            })();
            match four {
                Ok((block, bal)) => Ok((block, Some(bal))),
                Err(_) => Err(first.to_string()),
            }
        }
    }
}

/// Hashes of the up to 256 ancestors of a block whose parent is `parent`.
fn ancestor_hashes(chain: &HashMap<B256, Imported>, parent: B256) -> HashMap<u64, B256> {
    let mut hashes = HashMap::default();
    let mut cursor = parent;
    while let Some(block) = chain.get(&cursor) {
        hashes.insert(block.header.number, cursor);
        if hashes.len() == 256 || block.header.number == 0 {
            break;
        }
        cursor = block.header.parent_hash;
    }
    hashes
}

fn import_block(
    rlp_hex: &str,
    chain: &HashMap<B256, Imported>,
    schedule: &Schedule,
    settings: ImportSettings,
    given: Option<&BlockAccessList>,
    pool: &WorkerPool,
    source: &Path,
) -> Result<(B256, Imported, BTreeMap<MutationKind, usize>), Rejection> {
    let ImportSettings {
        mode,
        mutations,
        position,
        waive_transactions_root,
    } = settings;
    let bytes = hex::decode(rlp_hex).map_err(|e| Rejection::Decode(e.to_string()))?;
    let (mut block, body_bal) =
        decode_block(&bytes).map_err(|e| match oversized_tx_field(&bytes) {
            Some((tx, field, len)) => Rejection::FieldRange { tx, field, len },
            None => Rejection::Decode(e),
        })?;
    if waive_transactions_root {
        // The values the body gives: what the legacy filler's header left out.
        block.header.transactions_root =
            alloy_consensus::proofs::calculate_transaction_root(&block.body.transactions);
        if block.header.blob_gas_used.is_some() {
            use alloy_consensus::Transaction as _;
            let blobs: u64 = block
                .body
                .transactions
                .iter()
                .map(|tx| tx.blob_versioned_hashes().map_or(0, |h| h.len() as u64))
                .sum();
            block.header.blob_gas_used = Some(blobs * alloy_eips::eip4844::DATA_GAS_PER_BLOB);
        }
    }
    let hash = block.header.hash_slow();
    let parent = chain
        .get(&block.header.parent_hash)
        .ok_or(Rejection::UnknownParent(block.header.parent_hash))?;
    let spec = schedule.spec(
        block.header.number,
        block.header.timestamp,
        parent.total_difficulty,
    );
    let body = Body {
        transactions: &block.body.transactions,
        ommers: header::Ommers::Headers(&block.body.ommers),
        bomb_delay: None,
        withdrawals: block.body.withdrawals.as_ref().map(|w| w.0.as_slice()),
    };
    header::check(&block.header, &body, spec, &parent.header, parent.spec)?;
    let amsterdam = spec.is_enabled_in(SpecId::AMSTERDAM);
    if let Some(bal) = &body_bal {
        // bal@v2.0.0 fixtures carry the BAL as a fourth body element; it must be the one
        // the header commits to.
        if !amsterdam {
            return Err(Rejection::Decode(
                "a block access list in the body before Amsterdam".into(),
            ));
        }
        let given = alloy_eip7928::compute_block_access_list_hash(bal);
        if block.header.block_access_list_hash != Some(given) {
            return Err(Rejection::FixtureBal(format!(
                "the body's BAL hashes to {given}, the header has {:?}",
                block.header.block_access_list_hash
            )));
        }
    }
    header::check_transactions_form(&block.body.transactions)?;

    let homestead = spec.is_enabled_in(SpecId::HOMESTEAD);
    let senders = block
        .body
        .transactions
        .iter()
        .enumerate()
        .map(|(tx, envelope)| {
            let recovered = if homestead {
                envelope.recover_signer()
            } else {
                envelope.recover_signer_unchecked()
            };
            recovered.map_err(|e| Rejection::Signature {
                tx,
                what: e.to_string(),
            })
        })
        .collect::<Result<Vec<Address>, _>>()?;

    let pre = Arc::new(
        (*parent.state)
            .clone()
            .with_block_hashes(Arc::new(ancestor_hashes(chain, block.header.parent_hash))),
    );
    let input = BlockInput {
        hash,
        transactions: block
            .body
            .transactions
            .iter()
            .zip(&senders)
            .map(|(envelope, sender)| Transaction {
                envelope: envelope.clone(),
                claimed_sender: *sender,
            })
            .collect(),
        withdrawals: block
            .body
            .withdrawals
            .clone()
            .map(|w| w.0)
            .unwrap_or_default(),
        ommers: block.body.ommers.iter().map(Header::hash_slow).collect(),
        ommer_headers: block.body.ommers.clone(),
        complete_state: true,
        chain_id: 1,
        pre_state: pre.clone(),
        source: source.to_path_buf(),
        spec: Some(spec),
        access_list: None,
        header: block.header,
    };
    let mut prepared =
        PreparedBlock::with_envs(&input, &senders, BlockEnvs::with_spec(&input, spec));
    // The full state is known here, so pre-Byzantium receipts (intermediate state roots) are
    // rebuilt too.
    prepared.intermediate_roots = Some(IntermediateRoots(Arc::new(|pre, cache| {
        gigagas_engine::post_state_root(pre, cache)
    })));
    let rules = prepared.header_rules();
    let exec = |path: &'static str| {
        move |e: ExecError| Rejection::Execution {
            path,
            error: Box::new(e),
        }
    };

    // Sequential: builds the BAL (and, in sequential/both mode, is checked itself).
    let sequential = execute_sequential(&prepared, &*pre).map_err(exec("sequential"))?;
    let mut post = None;
    if mode.checks_sequential() {
        check_against_header(&input.header, &sequential.receipts, rules)
            .map_err(|e| exec("sequential")(e.into()))?;
        post = Some(checked_post_state(
            &pre,
            &sequential.post,
            &input.header,
            "sequential",
        )?);
    }

    if mode.runs_parallel() {
        let plan = gigagas_engine::plan_from(&prepared, &sequential.access, &sequential)
            .map_err(exec("parallel"))?;
        // Rotate schedulers over the blocks so every dispatch order is exercised.
        let scheduler = Scheduler::ALL[position % Scheduler::ALL.len()];
        let parallel =
            execute_parallel(&prepared, &*pre, &plan, pool, scheduler).map_err(exec("parallel"))?;
        check_against_header(&input.header, &parallel.receipts, rules)
            .map_err(|e| exec("parallel")(e.into()))?;
        if mode.checks_sequential() {
            compare_receipts(input.number(), &sequential.receipts, &parallel.receipts)
                .map_err(|e| exec("parallel")(e.into()))?;
        }
        post = Some(checked_post_state(
            &pre,
            &parallel.post,
            &input.header,
            "parallel",
        )?);
    }
    // EIP-7928: the BAL execution built must be the one the header commits to (checked
    // after the state root, as the execution specs' `state_transition` does).
    if amsterdam {
        let actual = sequential.access.hash();
        if input.header.block_access_list_hash != Some(actual) {
            return Err(Rejection::BalHash {
                expected: input.header.block_access_list_hash,
                actual,
                difference: given
                    .map(|given| bal_difference(given, &sequential.access.bal))
                    .unwrap_or_default(),
            });
        }
    }
    let killed = if mutations > 0 {
        reject_mutants(&prepared, &pre, &sequential.access, mutations, pool)?
    } else {
        BTreeMap::new()
    };
    let Some(state) = post else {
        return Err(exec("sequential")(ExecError::Unsupported {
            block: input.number(),
            what: "the mode runs neither the sequential nor the parallel path".into(),
        }));
    };
    let total_difficulty = parent.total_difficulty + input.header.difficulty;
    Ok((
        hash,
        Imported {
            header: input.header,
            spec,
            state: Arc::new(state),
            total_difficulty,
        },
        killed,
    ))
}

/// Runs the parallel path on `per_kind` mutants of each kind of the block's (correct) BAL;
/// every one must be rejected with a BAL or lifecycle error. Returns the count per kind.
fn reject_mutants(
    prepared: &PreparedBlock<'_>,
    pre: &PreState,
    access: &BlockAccess,
    per_kind: usize,
    pool: &WorkerPool,
) -> Result<BTreeMap<MutationKind, usize>, Rejection> {
    let n = prepared.txs.len();
    let mut killed = BTreeMap::new();
    for mutant in mutants(&access.bal, n, per_kind) {
        let lying = BlockAccess {
            bal: mutant.bal,
            lifecycle: access.lifecycle.clone(),
        };
        // Ordered dispatch: the lowest-index defect is always the one reported.
        let result = gigagas_engine::execute_from_bal(prepared, pre, &lying, pool);
        match result {
            Ok(_) => {
                return Err(Rejection::MutantAccepted {
                    kind: mutant.kind,
                    description: mutant.description,
                })
            }
            Err(ExecError::Verify(VerifyError::Bal { .. }) | ExecError::Lifecycle { .. }) => {
                *killed.entry(mutant.kind).or_default() += 1;
            }
            Err(other) => {
                return Err(Rejection::MutantMisreported {
                    kind: mutant.kind,
                    description: mutant.description,
                    error: Box::new(other),
                })
            }
        }
    }
    Ok(killed)
}

/// Post-state of one path, its root checked against the header.
fn checked_post_state(
    pre: &PreState,
    cache: &gigagas_data::PostState,
    header: &Header,
    path: &'static str,
) -> Result<PreState, Rejection> {
    let post = gigagas_state::apply_changes(pre, cache);
    let root = gigagas_state::state_root(&post);
    if root != header.state_root {
        return Err(Rejection::StateRoot {
            path,
            expected: header.state_root,
            actual: root,
        });
    }
    Ok(post)
}

/// First account where `state` differs from the fixture's expected state, described.
fn first_state_difference(
    expected: &std::collections::BTreeMap<Address, crate::fixture::FixtureAccount>,
    state: &PreState,
) -> Option<String> {
    for (address, fixture) in expected {
        let want = to_pre_account(fixture);
        let Some(have) = state.account(address) else {
            return Some(format!("account {address} missing from the head state"));
        };
        if want.info.balance != have.info.balance {
            return Some(format!(
                "account {address}: balance {} expected {}",
                have.info.balance, want.info.balance
            ));
        }
        if want.info.nonce != have.info.nonce {
            return Some(format!(
                "account {address}: nonce {} expected {}",
                have.info.nonce, want.info.nonce
            ));
        }
        if want.info.code_hash != have.info.code_hash {
            return Some(format!(
                "account {address}: code hash {} expected {}",
                have.info.code_hash, want.info.code_hash
            ));
        }
        for (slot, value) in want.storage.iter().chain(have.storage.iter()) {
            let (w, h) = (
                want.storage.get(slot).copied().unwrap_or_default(),
                have.storage.get(slot).copied().unwrap_or_default(),
            );
            if w != h {
                let _ = value;
                return Some(format!(
                    "account {address} slot {slot:#x}: {h:#x} expected {w:#x}"
                ));
            }
        }
    }
    let extra = state
        .accounts()
        .map(|(a, _)| a)
        .find(|a| !expected.contains_key(*a));
    extra.map(|a| format!("account {a} exists in the head state but not in postState"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_rlp::Encodable;

    /// bal@v2.0.0 fixtures carry the BAL as a fourth body element (the genesis RLP error
    /// "unexpected list length"): it decodes, and the three-element form still does.
    #[test]
    fn a_four_element_body_decodes_with_its_bal() {
        let block = Block::<TxEnvelope> {
            header: Header::default(),
            body: alloy_consensus::BlockBody {
                transactions: Vec::new(),
                ommers: Vec::new(),
                withdrawals: Some(Default::default()),
            },
        };
        let mut three = Vec::new();
        block.encode(&mut three);
        let (decoded, bal) = decode_block(&three).unwrap();
        assert_eq!(decoded.header, block.header);
        assert!(bal.is_none());

        let bal: BlockAccessList = vec![alloy_eip7928::AccountChanges {
            address: Address::repeat_byte(7),
            ..Default::default()
        }];
        let mut payload = Vec::new();
        block.header.encode(&mut payload);
        Vec::<TxEnvelope>::new().encode(&mut payload);
        Vec::<Header>::new().encode(&mut payload);
        alloy_eips::eip4895::Withdrawals::default().encode(&mut payload);
        bal.encode(&mut payload);
        let mut four = Vec::new();
        alloy_rlp::Header {
            list: true,
            payload_length: payload.len(),
        }
        .encode(&mut four);
        four.extend_from_slice(&payload);
        assert!(Block::<TxEnvelope>::decode(&mut &four[..]).is_err());
        let (decoded, given) = decode_block(&four).unwrap();
        assert_eq!(decoded.header, block.header);
        assert_eq!(given, Some(bal));
        // Trailing bytes are still refused.
        four.push(0x80);
        assert!(decode_block(&four).is_err());
    }
}
