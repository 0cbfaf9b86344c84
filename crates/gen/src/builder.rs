//! Block building: execute candidate transactions until the block is full, fill in the
//! header, verify through both gigagas paths.

use crate::workload::{
    genesis, storage_fills, Bloat, Precompile, TxPlan, TxStream, Workload, DEFAULT_BLOATED_SLOTS,
    MAX_BLOATED_SLOTS,
};
use alloy_consensus::{
    proofs, Block, BlockBody, Header, SignableTransaction, TxEip1559, TxEip7702, TxEnvelope,
    EMPTY_OMMER_ROOT_HASH,
};
use alloy_eips::{eip1559::BaseFeeParams, eip4895::Withdrawals, eip7702::Authorization};
use alloy_primitives::{keccak256, map::HashMap, Address, TxKind, B256, U256};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use gigagas_data::{
    chain::{
        apply_bal, lazy_genesis_state, system_contracts, AllocAccount, ChainBlock, ChainMeta,
        CHAIN_SCHEMA,
    },
    BlockInput, PreAccount, PreState, Transaction,
};
use gigagas_exec::{
    post_execution, pre_execution, recover_senders, tx_env, BlockEnvs, ExecError, PreparedBlock,
    Scheduler, WorkerPool,
};
use gigagas_receipt::TxReceipt;
use rand::{rngs::StdRng, SeedableRng};
use revm::{
    context::ContextTr, database::State, handler::MainBuilder, handler::MainContext,
    primitives::hardfork::SpecId, Context, ExecuteCommitEvm, ExecuteEvm,
};
use std::{collections::BTreeMap, sync::Arc, time::Instant};

/// Generator settings.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// Workload.
    pub workload: Workload,
    /// Blocks to generate.
    pub blocks: usize,
    /// Block gas limit (blocks are filled until the next transaction no longer fits).
    pub block_gas: u64,
    /// Seed of every random choice and of the keys.
    pub seed: u64,
    /// Fork rules (Cancun or later).
    pub spec: SpecId,
    /// Per-transaction gas cap (EIP-7825: 2^24); `None` allows giant transactions.
    pub tx_gas_cap: Option<u64>,
    /// Funded sender keys.
    pub senders: usize,
    /// Worker threads for the parallel verification of every block.
    pub verify_threads: usize,
    /// Precompiles the `precompile` workload cycles through (empty: all of them).
    pub precompiles: Vec<Precompile>,
    /// `sstore-bloated` only: genesis slots of the bloated account(s), 1 to
    /// [`MAX_BLOATED_SLOTS`] (`None`: [`DEFAULT_BLOATED_SLOTS`]).
    pub slots: Option<u64>,
    /// `sstore-bloated` only: the slots and writes spread over many accounts
    /// ([`crate::workload::spread_accounts`]) instead of one.
    pub spread: bool,
    /// `sstore-bloated` only: the execution-specs seed's block
    /// (`test_sstore_bloated[…-existing_slots_True-write_new_value_True-…]`): every SSTORE a
    /// cold write of a new value to an existing genesis slot, spread evenly over the whole
    /// key range, no slot written twice in a block (instead of the four kinds of writes).
    pub existing_slots: bool,
}

/// EIP-7825's transaction gas cap.
pub const EIP7825_TX_GAS_CAP: u64 = 1 << 24;

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// Execution or verification of a generated block failed (a gigagas or generator bug).
    #[error("generated block {block}: {error}")]
    Exec {
        /// Block number.
        block: u64,
        /// The error.
        error: Box<ExecError>,
    },
    /// A check of the generated chain failed.
    #[error("generated block {block}: {what}")]
    Check {
        /// Block number.
        block: u64,
        /// What differs.
        what: String,
    },
    /// Bad options.
    #[error("{0}")]
    Options(String),
}

/// A generated, verified chain.
#[derive(Debug, Clone)]
pub struct GeneratedChain {
    /// `chain.json`.
    pub meta: ChainMeta,
    /// The blocks with their BALs and senders.
    pub blocks: Vec<ChainBlock>,
    /// Wall time of generation (build + verify), seconds.
    pub seconds: f64,
    /// Failed (reverted or halted) transactions per block.
    pub failed_txs: Vec<usize>,
}

impl GeneratedChain {
    /// Total gas used (header values).
    pub fn gas_used(&self) -> u64 {
        self.blocks.iter().map(|b| b.block.header.gas_used).sum()
    }

    /// Total transactions.
    pub fn txs(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| b.block.body.transactions.len())
            .sum()
    }

    /// Writes `blocks.rlp` and then `chain.json` into `dir` (created if missing), each
    /// through a uniquely named temporary file in `dir` and a rename; a temporary file is
    /// removed when its write or rename fails. Writing into a fresh directory that is renamed
    /// into place afterwards (as `gigagas gen` does) keeps an old chain whole until the new
    /// one is complete.
    pub fn write(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let write = |name: &str, bytes: &[u8]| {
            let tmp = dir.join(format!(".{name}.{}.partial", std::process::id()));
            let result = std::fs::write(&tmp, bytes).and_then(|()| {
                std::fs::File::open(&tmp)?.sync_all()?;
                std::fs::rename(&tmp, dir.join(name))
            });
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        };
        write(
            gigagas_data::chain::CHAIN_BLOCKS,
            &gigagas_data::chain::encode_blocks(&self.blocks),
        )?;
        write(
            gigagas_data::chain::CHAIN_META,
            &serde_json::to_vec(&self.meta).map_err(std::io::Error::from)?,
        )
    }
}

#[allow(clippy::expect_used)] // a keccak output is a valid secp256k1 key but with probability < 2^-127; the seeds are fixed
pub(crate) fn key(seed: u64, i: usize) -> PrivateKeySigner {
    let k = keccak256(
        [
            b"gigagas-gen".as_slice(),
            &seed.to_be_bytes(),
            &(i as u64).to_be_bytes(),
        ]
        .concat(),
    );
    PrivateKeySigner::from_bytes(&k).expect("valid key")
}

const COINBASE: Address = gigagas_data::genesis_root::GENERATED_COINBASE;
/// Priority fee of every generated transaction, wei per gas. Its max fee is the block's base
/// fee plus this tip ([`max_fee`]): generated blocks are full, so EIP-1559 raises the base fee
/// 12.5% per block, and a fixed cap would be passed after some 60 blocks.
const TIP: u128 = 1_000_000_000;

/// The max fee per gas of a transaction in a block with `base_fee`: the base fee plus
/// [`TIP`], so that every transaction pays exactly base fee + tip however high the base fee
/// has risen.
fn max_fee(base_fee: u64) -> u128 {
    u128::from(base_fee) + TIP
}

/// What a chain too long for its base fee can do about it.
const FEE_FIX: &str = "each full block raises the EIP-1559 base fee by 12.5% from 1 gwei at \
                       the genesis; generate fewer blocks (--blocks), or fewer or smaller blocks \
                       with more senders (--block-gas, --senders)";

/// The gas limit a planned transaction is signed with.
pub(crate) fn gas_limit(plan: &TxPlan, cap: u64) -> u64 {
    let want = if let Some(c) = plan.gas_cap {
        c
    } else if plan.input.is_empty() && plan.delegate.is_none() {
        100_000
    } else {
        2_000_000
    };
    want.min(cap)
}

#[allow(clippy::expect_used)] // signing a 32-byte hash with a valid local k256 key does not fail
fn sign<T: SignableTransaction<alloy_primitives::Signature>>(
    tx: T,
    key: &PrivateKeySigner,
) -> alloy_consensus::Signed<T> {
    let sig = key.sign_hash_sync(&tx.signature_hash()).expect("signing");
    tx.into_signed(sig)
}

/// Base fee of the genesis block.
pub const GENESIS_BASE_FEE: u64 = gigagas_data::genesis_root::GENESIS_BASE_FEE;

/// The genesis header of a generated chain: [`gigagas_data::genesis_root::generated_genesis_header`]
/// (the loader rebuilds it to check `genesis_hash` against the allocation).
pub fn genesis_header(spec: SpecId, block_gas: u64, seed: u64, state_root: B256) -> Header {
    gigagas_data::genesis_root::generated_genesis_header(spec, block_gas, seed, state_root)
}

/// The base fee of block `number` after `parent` by EIP-1559; an error naming the cause and
/// the fix when it would not fit the header's 64 bits (some 190 full blocks in a row).
fn next_base_fee(parent: &Header, number: u64) -> Result<u64, GenError> {
    let params = BaseFeeParams::ethereum();
    let base = u128::from(parent.base_fee_per_gas.unwrap_or_default());
    let target = u128::from(parent.gas_limit) / params.elasticity_multiplier;
    let used = u128::from(parent.gas_used);
    if target > 0 && used > target {
        let increase = (base * (used - target) / (target * params.max_change_denominator)).max(1);
        if base + increase > u128::from(u64::MAX) {
            return Err(GenError::Check {
                block: number,
                what: format!(
                    "its base fee would exceed 2^64 - 1 wei per gas (the parent's is {base}): \
                     {FEE_FIX}"
                ),
            });
        }
    }
    Ok(alloy_eips::calc_next_block_base_fee(
        parent.gas_used,
        parent.gas_limit,
        parent.base_fee_per_gas.unwrap_or_default(),
        params,
    ))
}

fn header_template(
    opts: &GenOptions,
    number: u64,
    parent: &Header,
    parent_hash: B256,
) -> Result<Header, GenError> {
    // Every block's base fee follows EIP-1559 from its parent, the genesis included (as
    // other clients check it).
    let base_fee = next_base_fee(parent, number)?;
    Ok(Header {
        parent_hash,
        ommers_hash: EMPTY_OMMER_ROOT_HASH,
        beneficiary: COINBASE,
        number,
        gas_limit: opts.block_gas,
        timestamp: 12 * number,
        mix_hash: keccak256([opts.seed.to_be_bytes(), number.to_be_bytes()].concat()),
        base_fee_per_gas: Some(base_fee),
        withdrawals_root: Some(proofs::calculate_withdrawals_root(&[])),
        blob_gas_used: Some(0),
        excess_blob_gas: Some(0),
        parent_beacon_block_root: Some(keccak256(number.to_be_bytes())),
        requests_hash: opts
            .spec
            .is_enabled_in(SpecId::PRAGUE)
            .then_some(alloy_eips::eip7685::EMPTY_REQUESTS_HASH),
        ..Default::default()
    })
}

/// Generates and verifies a chain; `progress(k)` after each block.
pub fn generate(opts: &GenOptions, progress: &dyn Fn(usize)) -> Result<GeneratedChain, GenError> {
    if !opts.spec.is_enabled_in(SpecId::CANCUN) {
        return Err(GenError::Options(format!(
            "fork {:?}: generated chains need Cancun or later",
            opts.spec
        )));
    }
    if opts.senders < 2 {
        return Err(GenError::Options("at least 2 senders".into()));
    }
    if opts.workload != Workload::SstoreBloated
        && (opts.slots.is_some() || opts.spread || opts.existing_slots)
    {
        return Err(GenError::Options(format!(
            "slots, spread and existing slots apply to the sstore-bloated workload only, not {}",
            opts.workload
        )));
    }
    let bloat = Bloat {
        slots: opts.slots.unwrap_or(DEFAULT_BLOATED_SLOTS),
        spread: opts.spread,
    };
    if !(1..=MAX_BLOATED_SLOTS).contains(&bloat.slots) {
        return Err(GenError::Options(format!(
            "{} slots: 1 to {MAX_BLOATED_SLOTS}",
            bloat.slots
        )));
    }
    // Filled storage stays a rule (`PreAccount::fill`): the builder's states hold only the
    // slots its blocks change, and each root streams the rule's slots (bounded memory).
    let fills = storage_fills(opts.workload, &bloat);
    let start = Instant::now();
    // An EIP-7928 shape is sized for the block gas first: its contracts join the genesis and
    // every transaction of a block gets its own sender.
    let shape = opts
        .workload
        .bal_shape()
        .map(|shape| {
            crate::eest::ShapePlan::new(
                shape,
                opts.spec,
                opts.block_gas,
                opts.tx_gas_cap,
                opts.blocks as u64,
            )
        })
        .transpose()
        .map_err(GenError::Options)?;
    let senders = shape
        .as_ref()
        .map_or(opts.senders, |p| p.senders.max(opts.senders));
    let keys: Vec<PrivateKeySigner> = (0..senders).map(|i| key(opts.seed, i)).collect();
    let addresses: Vec<Address> = keys.iter().map(|k| k.address()).collect();
    let mut alloc: BTreeMap<Address, AllocAccount> = genesis(opts.workload, &addresses);
    if let Some(plan) = &shape {
        alloc.extend(plan.contracts.clone());
    }
    let funds = U256::from(10u64).pow(U256::from(27)); // 10^9 ETH each
    for a in &addresses {
        alloc.insert(
            *a,
            AllocAccount {
                balance: funds,
                ..Default::default()
            },
        );
    }
    for (address, code) in system_contracts() {
        alloc.insert(
            address,
            AllocAccount {
                nonce: 1,
                code,
                ..Default::default()
            },
        );
    }
    let mut state: HashMap<Address, PreAccount> =
        lazy_genesis_state(&alloc, &fills).map_err(GenError::Options)?;
    let genesis_root = gigagas_state::state_root(&PreState::new(state.clone(), Arc::default()));
    let genesis_header = genesis_header(opts.spec, opts.block_gas, opts.seed, genesis_root);
    let genesis_hash = genesis_header.hash_slow();

    let mut hashes: HashMap<u64, B256> = HashMap::default();
    hashes.insert(0, genesis_hash);
    let mut rng = StdRng::seed_from_u64(opts.seed);
    let mut stream = TxStream::new(opts.workload, senders, &opts.precompiles)
        .with_storage_fills(&fills, opts.spec)
        .with_existing_slots_only(opts.existing_slots);
    if let Some(plan) = shape {
        stream = stream.with_shape(plan);
    }
    let mut nonces = vec![0u64; senders];
    let pool = WorkerPool::new(opts.verify_threads);
    let mut blocks = Vec::with_capacity(opts.blocks);
    let mut failed_txs = Vec::with_capacity(opts.blocks);
    let (mut parent, mut parent_hash) = (genesis_header, genesis_hash);
    for k in 1..=opts.blocks as u64 {
        let pre = Arc::new(PreState::new(state.clone(), Arc::new(hashes.clone())));
        let template = header_template(opts, k, &parent, parent_hash)?;
        let long_tx_gas = (opts.block_gas as f64 * 0.8) as u64;
        stream.start_block(opts.tx_gas_cap.map_or(long_tx_gas, |c| c.min(long_tx_gas)));
        stream.plan_block(k, &addresses, &nonces);
        let (built, post, failed) = build_block(
            opts,
            template,
            &pre,
            &keys,
            &addresses,
            &mut stream,
            &mut rng,
            &mut nonces,
        )?;
        if stream.is_planned() && failed > 0 {
            return Err(GenError::Check {
                block: k,
                what: format!(
                    "{failed} transaction(s) of {} failed: its gas plan does not hold under {:?}",
                    opts.workload, opts.spec
                ),
            });
        }
        failed_txs.push(failed);
        verify_block(opts, &built, &pre, &post, &pool)?;
        // The next pre-state comes from the BAL, as a loader derives it; it must be the state
        // execution left (equal states, equal roots: the header's was computed from `post`).
        apply_bal(&mut state, &built.bal);
        let derived = PreState::new(state.clone(), Arc::default());
        if let Some(what) = gigagas_state::first_difference(&derived, &post) {
            return Err(GenError::Check {
                block: k,
                what: format!("the state derived from the BAL differs from execution's: {what}"),
            });
        }
        parent_hash = built.block.header.hash_slow();
        hashes.insert(k, parent_hash);
        parent = built.block.header.clone();
        blocks.push(built);
        progress(k as usize);
    }
    Ok(GeneratedChain {
        meta: ChainMeta {
            schema: CHAIN_SCHEMA.to_owned(),
            fork: <&str>::from(opts.spec).to_owned(),
            chain_id: 1,
            workload: workload_label(opts),
            seed: opts.seed,
            block_gas: opts.block_gas,
            blocks: blocks.len(),
            genesis_hash,
            alloc,
            genesis_header: None,
            fetched_from: None,
            storage_fill: fills,
        },
        blocks,
        seconds: start.elapsed().as_secs_f64(),
        failed_txs,
    })
}

/// The workload as recorded in `chain.json`: its name, and for `precompile` restricted to
/// some precompiles, which (`precompile:modexp`).
fn workload_label(opts: &GenOptions) -> String {
    let mut label = opts.workload.to_string();
    let mut chosen = opts.precompiles.clone();
    chosen.sort_unstable();
    chosen.dedup();
    if opts.workload == Workload::Precompile && !chosen.is_empty() && chosen.len() < 3 {
        let names: Vec<&str> = chosen.iter().map(|p| p.name()).collect();
        label = format!("{label}:{}", names.join(","));
    }
    if opts.existing_slots {
        label.push_str(":existing-slots");
    }
    label
}

#[allow(clippy::too_many_arguments)]
fn build_block(
    opts: &GenOptions,
    mut header: Header,
    pre: &Arc<PreState>,
    keys: &[PrivateKeySigner],
    addresses: &[Address],
    stream: &mut TxStream,
    rng: &mut StdRng,
    nonces: &mut [u64],
) -> Result<(ChainBlock, PreState, usize), GenError> {
    let number = header.number;
    let base_fee = header.base_fee_per_gas.unwrap_or_default();
    let max_fee = max_fee(base_fee);
    let exec = |e: ExecError| GenError::Exec {
        block: number,
        error: Box::new(e),
    };
    let skeleton = generated_input(opts, header.clone(), pre, Vec::new(), None);
    let envs = BlockEnvs::with_spec(&skeleton, opts.spec);
    let mut db = State::builder()
        .with_database_ref(&**pre)
        .with_bal_builder()
        .build();
    db.set_bal_index(alloy_eip7928::BlockAccessIndex::PRE_EXECUTION);
    pre_execution(&mut db, &skeleton, &envs.cfg, &envs.block).map_err(exec)?;
    let mut txs: Vec<TxEnvelope> = Vec::new();
    let mut senders: Vec<Address> = Vec::new();
    let mut receipts: Vec<TxReceipt> = Vec::new();
    let mut cumulative = 0u64;
    {
        let mut evm = Context::mainnet()
            .with_db(&mut db)
            .with_block(envs.block.clone())
            .with_cfg(envs.cfg.clone())
            .build_mainnet();
        loop {
            let remaining = opts.block_gas - cumulative;
            let Some(plan) = stream.next(rng, addresses) else {
                break;
            };
            let cap = opts.tx_gas_cap.unwrap_or(u64::MAX);
            let limit = gas_limit(&plan, cap);
            if limit > remaining {
                if stream.is_planned() {
                    return Err(GenError::Check {
                        block: number,
                        what: format!(
                            "planned transaction {} ({limit} gas) does not fit the {remaining} gas left",
                            txs.len()
                        ),
                    });
                }
                break;
            }
            let s = plan.sender;
            let envelope: TxEnvelope = match plan.delegate {
                None => sign(
                    TxEip1559 {
                        chain_id: 1,
                        nonce: nonces[s],
                        gas_limit: limit,
                        max_fee_per_gas: max_fee,
                        max_priority_fee_per_gas: TIP,
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
                        chain_id: U256::from(1),
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
                    sign(
                        TxEip7702 {
                            chain_id: 1,
                            nonce: nonces[s],
                            gas_limit: limit,
                            max_fee_per_gas: max_fee,
                            max_priority_fee_per_gas: TIP,
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
            let i = txs.len();
            evm.ctx
                .db_mut()
                .set_bal_index(alloy_eip7928::BlockAccessIndex::from_tx_index(i as u64));
            let env = tx_env(&envelope, addresses[s]);
            let out = evm.transact(env.clone()).map_err(|e| match e {
                revm::context::result::EVMError::Transaction(
                    revm::context::result::InvalidTransaction::LackOfFundForMaxFee { .. },
                ) => GenError::Check {
                    block: number,
                    what: format!(
                        "sender {} cannot pay for transaction {i} at a base fee of {base_fee} \
                         wei per gas ({e}): {FEE_FIX}",
                        addresses[s]
                    ),
                },
                e => exec(ExecError::InvalidTx {
                    block: number,
                    tx: i,
                    what: e.to_string(),
                }),
            })?;
            evm.commit(out.state);
            cumulative += out.result.tx_gas_used();
            receipts.push(gigagas_receipt::TxReceipt {
                tx_type: envelope.tx_type(),
                success: out.result.is_success(),
                gas_used: out.result.tx_gas_used(),
                cumulative_gas_used: cumulative,
                logs: out.result.logs().to_vec(),
                block_regular_gas: out.result.gas().block_regular_gas_used(),
                block_state_gas: out.result.gas().block_state_gas_used(),
                post_state: None,
            });
            nonces[s] += 1;
            if let Some((partner, _)) = plan.delegate {
                nonces[partner] += 1;
            }
            txs.push(envelope);
            senders.push(addresses[s]);
        }
    }
    db.set_bal_index(alloy_eip7928::BlockAccessIndex::from_tx_index(
        txs.len() as u64
    ));
    post_execution(&mut db, &skeleton, &envs.cfg, &envs.block).map_err(exec)?;
    let bal = db.take_built_alloy_bal().unwrap_or_default();
    let post = gigagas_state::apply_changes(pre, &db.cache);
    let amsterdam = opts.spec.is_enabled_in(SpecId::AMSTERDAM);
    let rules = gigagas_receipt::HeaderRules {
        receipts_root: true,
        two_dimensional_gas: amsterdam,
    };
    header.state_root = gigagas_state::state_root(&post);
    header.receipts_root = gigagas_receipt::receipts_root(&receipts);
    header.logs_bloom = gigagas_receipt::logs_bloom(&receipts);
    header.gas_used = gigagas_receipt::block_gas_used(&receipts, rules);
    header.transactions_root = proofs::calculate_transaction_root(&txs);
    header.block_access_list_hash =
        amsterdam.then(|| alloy_eip7928::compute_block_access_list_hash(&bal));
    let failed = receipts.iter().filter(|r| !r.success).count();
    Ok((
        ChainBlock {
            block: Block {
                header,
                body: BlockBody {
                    transactions: txs,
                    ommers: Vec::new(),
                    withdrawals: Some(Withdrawals::default()),
                },
            },
            bal,
            senders,
        },
        post,
        failed,
    ))
}

/// A generated block as the executor takes it.
fn generated_input(
    opts: &GenOptions,
    header: Header,
    pre: &Arc<PreState>,
    transactions: Vec<Transaction>,
    access_list: Option<alloy_eip7928::BlockAccessList>,
) -> BlockInput {
    BlockInput {
        hash: header.hash_slow(),
        header,
        transactions,
        withdrawals: Vec::new(),
        ommers: Vec::new(),
        ommer_headers: Vec::new(),
        pre_state: pre.clone(),
        source: "generator".into(),
        spec: Some(opts.spec),
        access_list,
        complete_state: true,
        chain_id: 1,
    }
}

/// The block through gigagas as any loaded block goes: senders recovered, sequential run
/// (BAL equal to the shipped one), parallel from the shipped BAL with every scheduler, each
/// post-state equal to the built block's `post` (whose root the header holds).
fn verify_block(
    opts: &GenOptions,
    built: &ChainBlock,
    pre: &Arc<PreState>,
    post: &PreState,
    pool: &WorkerPool,
) -> Result<(), GenError> {
    let number = built.block.header.number;
    let exec = |e: ExecError| GenError::Exec {
        block: number,
        error: Box::new(e),
    };
    let transactions = built
        .block
        .body
        .transactions
        .iter()
        .zip(&built.senders)
        .map(|(envelope, sender)| Transaction {
            envelope: envelope.clone(),
            claimed_sender: *sender,
        })
        .collect();
    let input = generated_input(
        opts,
        built.block.header.clone(),
        pre,
        transactions,
        Some(built.bal.clone()),
    );
    let senders = recover_senders(&input).map_err(exec)?;
    let prepared = PreparedBlock::new(&input, &senders).map_err(exec)?;
    let gigagas_engine::BothPaths {
        sequential,
        parallel,
    } = gigagas_engine::execute_both(&prepared, pre, pool, &Scheduler::ALL).map_err(exec)?;
    gigagas_verify::check_against_header(
        &input.header,
        &sequential.receipts,
        prepared.header_rules(),
    )
    .map_err(|e| exec(e.into()))?;
    if sequential.access.bal != built.bal {
        return Err(GenError::Check {
            block: number,
            what: "sequential re-execution built a different BAL".into(),
        });
    }
    let runs = std::iter::once(("sequential".to_owned(), &sequential.post)).chain(
        parallel
            .iter()
            .map(|(scheduler, run)| (format!("parallel ({scheduler})"), &run.post)),
    );
    for (path, run_post) in runs {
        let state = gigagas_state::apply_changes(pre, run_post);
        if let Some(what) = gigagas_state::first_difference(&state, post) {
            return Err(GenError::Check {
                block: number,
                what: format!("the {path} post-state differs from the built block's: {what}"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(workload: Workload) -> GenOptions {
        GenOptions {
            workload,
            blocks: 2,
            block_gas: 3_000_000,
            seed: 7,
            spec: SpecId::AMSTERDAM,
            tx_gas_cap: Some(EIP7825_TX_GAS_CAP),
            senders: 16,
            verify_threads: 2,
            precompiles: Vec::new(),
            slots: (workload == Workload::SstoreBloated).then_some(5_000),
            spread: false,
            existing_slots: false,
        }
    }

    /// 100 full blocks raise the base fee some 80,000-fold (past the 1,000 gwei a fixed max
    /// fee once allowed, at block ~70): every transaction's max fee follows the base fee.
    #[test]
    fn a_hundred_full_blocks_generate() {
        let opts = GenOptions {
            blocks: 100,
            block_gas: 1_000_000,
            spec: SpecId::PRAGUE,
            ..options(Workload::Transfers)
        };
        let chain = generate(&opts, &|_| {}).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(chain.blocks.len(), 100);
        let last = &chain.blocks[99].block;
        let base_fee = last.header.base_fee_per_gas.unwrap();
        assert!(
            u128::from(base_fee) > 1_000_000_000_000,
            "base fee {base_fee}"
        );
        for tx in &last.body.transactions {
            assert_eq!(
                alloy_consensus::Transaction::max_fee_per_gas(tx),
                max_fee(base_fee)
            );
        }
    }

    /// A base fee that would pass 64 bits is refused naming the cause and the fix.
    #[test]
    fn a_base_fee_beyond_64_bits_is_refused_with_the_fix() {
        let parent = Header {
            gas_limit: 1_000_000,
            gas_used: 1_000_000,
            base_fee_per_gas: Some(u64::MAX - 10),
            ..Default::default()
        };
        let err = next_base_fee(&parent, 211).unwrap_err().to_string();
        assert!(err.contains("block 211"), "{err}");
        assert!(err.contains("12.5%") && err.contains("--blocks"), "{err}");
        let parent = Header {
            base_fee_per_gas: Some(1_000_000_000),
            ..parent
        };
        assert_eq!(next_base_fee(&parent, 1).unwrap(), 1_125_000_000);
    }

    #[test]
    fn every_workload_generates_verified_blocks() {
        for workload in Workload::ALL {
            let chain =
                generate(&options(workload), &|_| {}).unwrap_or_else(|e| panic!("{workload}: {e}"));
            assert_eq!(chain.blocks.len(), 2, "{workload}");
            let failed: usize = chain.failed_txs.iter().sum();
            if workload == Workload::MainnetMix {
                assert!(
                    failed * 5 < chain.txs(),
                    "{workload}: {failed} of {} failed",
                    chain.txs()
                );
            } else {
                assert_eq!(
                    failed,
                    0,
                    "{workload}: {failed} of {} transactions failed",
                    chain.txs()
                );
            }
            assert!(chain.txs() >= 2, "{workload}: {} txs", chain.txs());
            for b in &chain.blocks {
                assert!(b.block.header.gas_used > 0, "{workload}");
                assert!(b.block.header.block_access_list_hash.is_some());
            }
        }
    }

    #[test]
    fn each_precompile_runs_on_its_own_and_succeeds() {
        // Every call `require`s success, so a transaction that did not fail ran all its
        // precompile calls with a valid input (including a valid KZG proof).
        for (precompile, min_gas) in [
            (Precompile::Ecrecover, 20 * 3_000),
            (Precompile::Modexp, 5 * 21_000),
            (Precompile::PointEvaluation, 10 * 50_000),
        ] {
            let mut opts = options(Workload::Precompile);
            opts.precompiles = vec![precompile];
            let chain = generate(&opts, &|_| {}).unwrap_or_else(|e| panic!("{precompile:?}: {e}"));
            assert_eq!(chain.failed_txs.iter().sum::<usize>(), 0, "{precompile:?}");
            assert_eq!(
                chain.meta.workload,
                format!("precompile:{}", precompile.name())
            );
            let block = &chain.blocks[0].block;
            let per_tx = block.header.gas_used / block.body.transactions.len() as u64;
            assert!(per_tx > min_gas, "{precompile:?}: {per_tx} gas per tx");
        }
        assert_eq!(
            generate(&options(Workload::Precompile), &|_| {})
                .unwrap()
                .meta
                .workload,
            "precompile"
        );
    }

    #[test]
    fn generation_is_deterministic() {
        let a = generate(&options(Workload::Erc20), &|_| {}).unwrap();
        let b = generate(&options(Workload::Erc20), &|_| {}).unwrap();
        assert_eq!(
            a.blocks.last().unwrap().block.header.hash_slow(),
            b.blocks.last().unwrap().block.header.hash_slow()
        );
        let mut other = options(Workload::Erc20);
        other.seed = 8;
        let c = generate(&other, &|_| {}).unwrap();
        assert_ne!(
            a.blocks[0].block.header.hash_slow(),
            c.blocks[0].block.header.hash_slow()
        );
    }
}
