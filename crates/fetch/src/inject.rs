//! `gigagas inject`: send signed transactions to a node with `eth_sendRawTransaction`
//! (optionally after funding their senders from the node's unlocked account: transfers with
//! explicit nonces that the node signs with `eth_signTransaction`), wait for their inclusion,
//! and measure it.
//!
//! This module knows nothing of workloads: it takes raw signed transactions with their hashes
//! (`gigagas_gen::live` signs them). Inclusion is observed by a poller that runs while the
//! transactions are sent: it follows the chain head (`eth_blockNumber`) and reads each new
//! block's transaction hashes (`eth_getBlockByNumber(n, false)`); a transaction's latency is
//! the time from just before its `eth_sendRawTransaction` to the poll that first saw it in a
//! block. Every included transaction's receipt is then read (`eth_getTransactionReceipt`) for
//! its status, gas and block. Every wait has a deadline; every request has the client's
//! timeout and bounded retries.

use crate::{
    block::{hex, GET_BLOCK},
    rpc::Client,
    Failure, FetchError,
};
use alloy_primitives::{Address, Bytes, B256, U256};
use serde::Deserialize;
use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Mutex,
    },
    time::{Duration, Instant},
};

/// Longest inclusion wait accepted (`--wait`, seconds).
pub const MAX_WAIT_SECS: u64 = 3600;
/// Pause between two polls of the chain head.
pub const POLL: Duration = Duration::from_millis(10);

const SEND_RAW: &str = "eth_sendRawTransaction";
const SIGN: &str = "eth_signTransaction";
/// Gas of a plain value transfer.
const TRANSFER_GAS: u64 = 21_000;

/// Fees of the funding transfers (wei per gas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fees {
    /// maxFeePerGas.
    pub max_fee_per_gas: u128,
    /// maxPriorityFeePerGas.
    pub max_priority_fee_per_gas: u128,
}
const RECEIPT: &str = "eth_getTransactionReceipt";

/// How to talk to the node.
#[derive(Debug, Clone)]
pub struct InjectOptions {
    /// `http://` or `https://` URL of the JSON-RPC endpoint.
    pub rpc: String,
    /// Timeout of one request.
    pub timeout: Duration,
    /// Tries per request (transport errors, HTTP 429/5xx).
    pub attempts: u32,
    /// Longest wait for every transaction of a phase to be included, counted from the end of
    /// its sending.
    pub wait: Duration,
}

/// Why an injection stopped.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// A flag out of bounds.
    #[error("{flag}: {what}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// What is wrong with it.
        what: String,
    },
    /// A request failed; `what` names the transaction or the step.
    #[error("{what}: {source}")]
    Rpc {
        /// The transaction (index, hash, sender, nonce) or step the call was for.
        what: String,
        /// The failed call (method and node named).
        source: Box<FetchError>,
    },
    /// Transactions were not included before the deadline.
    #[error("{pending} of {sent} {phase} transactions not included within {waited:.0} s after sending (first: {first}); is the node mining (geth --dev mines on demand)?")]
    Timeout {
        /// The phase (funding, deployment, workload).
        phase: &'static str,
        /// Transactions still pending.
        pending: usize,
        /// Transactions sent in the phase.
        sent: usize,
        /// The first pending one.
        first: String,
        /// Seconds waited after the last send.
        waited: f64,
    },
    /// The node's state or answers do not allow going on.
    #[error("{0}")]
    Node(String),
}

/// One transaction to send.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// What messages call it: "transaction 3 (0x…, from 0x…, nonce 5)".
    pub label: String,
    /// The signed EIP-2718 encoding.
    pub raw: Bytes,
    /// Its hash.
    pub hash: B256,
}

/// A transaction seen in a block.
#[derive(Debug, Clone)]
pub struct Included {
    /// Its hash.
    pub hash: B256,
    /// The block that holds it.
    pub block: u64,
    /// From just before sending to the poll that saw it in a block.
    pub latency: Duration,
    /// Receipt status 1.
    pub success: bool,
    /// Gas it used (receipt).
    pub gas_used: u64,
    /// The contract it created (receipt), if any.
    pub contract_address: Option<Address>,
}

/// A block that holds transactions of a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStat {
    /// Block number.
    pub number: u64,
    /// Transactions in the block (all of them).
    pub txs: usize,
    /// Of which sent by this phase.
    pub ours: usize,
    /// Gas used by the block.
    pub gas_used: u64,
    /// The block's gas limit.
    pub gas_limit: u64,
}

/// What one phase (funding, deployments, workload) did.
#[derive(Debug, Clone, Default)]
pub struct Phase {
    /// Its transactions in sending order.
    pub included: Vec<Included>,
    /// The blocks that hold them, ascending.
    pub blocks: Vec<BlockStat>,
    /// Seconds spent sending.
    pub send_seconds: f64,
    /// Seconds from the first send to the last inclusion seen.
    pub seconds: f64,
}

impl Phase {
    /// Latency percentiles of the phase's transactions: (p50, p90, max) in seconds.
    pub fn latency(&self) -> (f64, f64, f64) {
        let mut l: Vec<f64> = self
            .included
            .iter()
            .map(|i| i.latency.as_secs_f64())
            .collect();
        l.sort_by(f64::total_cmp);
        (
            percentile(&l, 0.5),
            percentile(&l, 0.9),
            percentile(&l, 1.0),
        )
    }

    /// Transactions whose receipt says failure (status 0).
    pub fn failed(&self) -> usize {
        self.included.iter().filter(|i| !i.success).count()
    }

    /// Gas used by the phase's transactions (receipts).
    pub fn gas_used(&self) -> u64 {
        self.included.iter().map(|i| i.gas_used).sum()
    }
}

/// Nearest-rank percentile of sorted `values` (`q` in 0..=1); 0 when empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A JSON-RPC node to inject into.
pub struct Node {
    client: Client,
    /// `host[:port]` of the node.
    pub host: String,
    wait: Duration,
}

fn quantity<T: TryFrom<U256>>(raw: &str) -> Option<T> {
    let s: String = serde_json::from_str(raw).ok()?;
    let n: U256 = s.parse().ok()?;
    T::try_from(n).ok()
}

impl Node {
    /// Checks the options and prepares a client (no request yet).
    pub fn connect(options: &InjectOptions) -> Result<Self, InjectError> {
        let host = crate::rpc_host(&options.rpc).map_err(|e| match e {
            FetchError::Flag { flag, what } => InjectError::Flag { flag, what },
            other => InjectError::Node(other.to_string()),
        })?;
        let flag = |flag, what: String| Err(InjectError::Flag { flag, what });
        if options.timeout.is_zero()
            || options.timeout > Duration::from_secs(crate::MAX_TIMEOUT_SECS)
        {
            return flag(
                "--timeout",
                format!(
                    "{} s is out of range 1 to {}",
                    options.timeout.as_secs(),
                    crate::MAX_TIMEOUT_SECS
                ),
            );
        }
        if !(1..=crate::MAX_ATTEMPTS).contains(&options.attempts) {
            return flag(
                "--retries",
                format!(
                    "{} is out of range 0 to {}",
                    options.attempts.saturating_sub(1),
                    crate::MAX_ATTEMPTS - 1
                ),
            );
        }
        if options.wait.is_zero() || options.wait > Duration::from_secs(MAX_WAIT_SECS) {
            return flag(
                "--wait",
                format!(
                    "{} s is out of range 1 to {MAX_WAIT_SECS}",
                    options.wait.as_secs()
                ),
            );
        }
        Ok(Self {
            client: Client::new(
                &options.rpc,
                host.clone(),
                options.timeout,
                options.attempts,
                Duration::from_millis(200),
                16 << 20,
            ),
            host,
            wait: options.wait,
        })
    }

    fn call(
        &self,
        what: impl FnOnce() -> String,
        method: &str,
        params: serde_json::Value,
    ) -> Result<Box<serde_json::value::RawValue>, InjectError> {
        self.client
            .call(method, params, None)
            .map_err(|source| InjectError::Rpc {
                what: what(),
                source: Box::new(source),
            })
    }

    fn nonsense(&self, what: String, method: &str, answer: &str) -> InjectError {
        InjectError::Rpc {
            what,
            source: Box::new(FetchError::Rpc {
                block: None,
                method: method.to_owned(),
                host: self.host.clone(),
                what: Failure::Nonsense(format!(
                    "unexpected answer {}",
                    crate::rpc::snippet(answer.as_bytes())
                )),
            }),
        }
    }

    /// `eth_chainId`.
    pub fn chain_id(&self) -> Result<u64, InjectError> {
        crate::store::chain_id(&self.client).map_err(|source| InjectError::Rpc {
            what: "the node's chain id".into(),
            source: Box::new(source),
        })
    }

    /// `eth_blockNumber`.
    pub fn block_number(&self) -> Result<u64, InjectError> {
        const M: &str = "eth_blockNumber";
        let raw = self.call(|| "the chain head".into(), M, serde_json::json!([]))?;
        quantity(raw.get()).ok_or_else(|| self.nonsense("the chain head".into(), M, raw.get()))
    }

    /// `eth_accounts`: the node's unlocked accounts.
    pub fn accounts(&self) -> Result<Vec<Address>, InjectError> {
        const M: &str = "eth_accounts";
        let raw = self.call(|| "the node's accounts".into(), M, serde_json::json!([]))?;
        serde_json::from_str(raw.get())
            .map_err(|_| self.nonsense("the node's accounts".into(), M, raw.get()))
    }

    /// `eth_getTransactionCount(address, "pending")`: the next nonce.
    pub fn nonce(&self, address: Address) -> Result<u64, InjectError> {
        self.nonce_at(address, "pending")
    }

    /// `eth_getTransactionCount(address, tag)`.
    fn nonce_at(&self, address: Address, tag: &str) -> Result<u64, InjectError> {
        const M: &str = "eth_getTransactionCount";
        let what = || format!("the nonce of {address} ({tag})");
        let raw = self.call(what, M, serde_json::json!([address, tag]))?;
        quantity(raw.get()).ok_or_else(|| self.nonsense(what(), M, raw.get()))
    }

    /// `eth_getBalance(address, "latest")`.
    pub fn balance(&self, address: Address) -> Result<U256, InjectError> {
        const M: &str = "eth_getBalance";
        let what = || format!("the balance of {address}");
        let raw = self.call(what, M, serde_json::json!([address, "latest"]))?;
        quantity(raw.get()).ok_or_else(|| self.nonsense(what(), M, raw.get()))
    }

    /// `eth_getCode(address, "latest")`.
    pub fn code(&self, address: Address) -> Result<Bytes, InjectError> {
        const M: &str = "eth_getCode";
        let what = || format!("the code of {address}");
        let raw = self.call(what, M, serde_json::json!([address, "latest"]))?;
        serde_json::from_str(raw.get()).map_err(|_| self.nonsense(what(), M, raw.get()))
    }

    /// keccak256 of the code at `address` (`eth_getCode`).
    pub fn code_hash(&self, address: Address) -> Result<B256, InjectError> {
        self.code(address).map(alloy_primitives::keccak256)
    }

    /// Sends `value` wei from the node's account `from` to each address and waits for every
    /// transfer's inclusion.
    ///
    /// Each transfer gets an explicit nonce, counted up from `from`'s next nonce (the larger
    /// of its `"pending"` and `"latest"` transaction counts, read once), and is signed by the
    /// node (`eth_signTransaction`: 21,000 gas, `fees`), then sent as raw bytes like every
    /// other phase. Letting the node pick each nonce (`eth_sendTransaction` without one)
    /// raced: a dev node that mines on arrival could hand out a nonce still held by the
    /// previous transfer ("replacement transaction underpriced"). Raw sends also make a
    /// retried request harmless: the node answers "already known" for the same bytes.
    pub fn fund(
        &self,
        from: Address,
        to: &[(Address, U256)],
        fees: Fees,
    ) -> Result<Phase, InjectError> {
        let first = self.nonce(from)?.max(self.nonce_at(from, "latest")?);
        let mut txs = Vec::with_capacity(to.len());
        for (i, (address, value)) in to.iter().enumerate() {
            let nonce = first + i as u64;
            let label = format!(
                "funding {} of {} ({address}, {value} wei from {from}, nonce {nonce})",
                i + 1,
                to.len()
            );
            let raw = self.sign_transfer(from, *address, *value, nonce, fees, &label)?;
            txs.push(Outgoing {
                hash: alloy_primitives::keccak256(&raw),
                raw,
                label,
            });
        }
        self.send_raw("funding", &txs)
    }

    /// `eth_signTransaction` of an EIP-1559 transfer from the node's unlocked `from`: the
    /// signed EIP-2718 bytes.
    fn sign_transfer(
        &self,
        from: Address,
        to: Address,
        value: U256,
        nonce: u64,
        fees: Fees,
        label: &str,
    ) -> Result<Bytes, InjectError> {
        #[derive(Deserialize)]
        struct Signed {
            raw: Bytes,
        }
        let what = || {
            format!(
                "signing the {label} (eth_signTransaction: does the node hold {from} unlocked?)"
            )
        };
        let raw = self.call(
            what,
            SIGN,
            serde_json::json!([{
                "from": from,
                "to": to,
                "value": format!("0x{value:x}"),
                "nonce": hex(nonce),
                "gas": hex(TRANSFER_GAS),
                "maxFeePerGas": format!("0x{:x}", fees.max_fee_per_gas),
                "maxPriorityFeePerGas": format!("0x{:x}", fees.max_priority_fee_per_gas),
            }]),
        )?;
        let signed: Signed =
            serde_json::from_str(raw.get()).map_err(|_| self.nonsense(what(), SIGN, raw.get()))?;
        if signed.raw.is_empty() {
            return Err(self.nonsense(what(), SIGN, raw.get()));
        }
        Ok(signed.raw)
    }

    /// Sends `txs` in order with `eth_sendRawTransaction` while a poller watches new blocks,
    /// then waits (at most the `wait` option after the last send) for all to be included and
    /// reads their receipts. A refusal stops the phase naming the transaction.
    pub fn send_raw(&self, phase: &'static str, txs: &[Outgoing]) -> Result<Phase, InjectError> {
        let hashes: Vec<B256> = txs.iter().map(|t| t.hash).collect();
        let labels: Vec<String> = txs.iter().map(|t| t.label.clone()).collect();
        let send = |i: usize| -> Result<B256, InjectError> {
            let tx = &txs[i];
            let what = || tx.label.clone();
            match self
                .client
                .call(SEND_RAW, serde_json::json!([tx.raw]), None)
            {
                Ok(raw) => {
                    let got: B256 = serde_json::from_str(raw.get())
                        .map_err(|_| self.nonsense(what(), SEND_RAW, raw.get()))?;
                    if got != tx.hash {
                        return Err(self.nonsense(
                            format!("{}: the node names it {got}", what()),
                            SEND_RAW,
                            raw.get(),
                        ));
                    }
                    Ok(got)
                }
                // A retried send whose first try arrived.
                Err(FetchError::Rpc {
                    what: Failure::Refused { message, .. },
                    ..
                }) if message.contains("already known") => Ok(tx.hash),
                Err(source) => Err(InjectError::Rpc {
                    what: what(),
                    source: Box::new(source),
                }),
            }
        };
        self.send_and_wait(phase, txs.len(), &labels, Some(&hashes), &send)
    }

    /// Sends `count` transactions with `send(i)` (which returns the hash) while a poller marks
    /// inclusions; `known` are the hashes when known before sending.
    fn send_and_wait(
        &self,
        phase: &'static str,
        count: usize,
        labels: &[String],
        known: Option<&[B256]>,
        send: &(dyn Fn(usize) -> Result<B256, InjectError> + Sync),
    ) -> Result<Phase, InjectError> {
        let start_block = self.block_number()?;
        let mut watch = Watch {
            seen: vec![None; count],
            ..Watch::default()
        };
        if let Some(hashes) = known {
            for (i, h) in hashes.iter().enumerate() {
                watch.pending.insert(*h, (i, None));
            }
        }
        let watch = Mutex::new(watch);
        let failed = AtomicBool::new(false);
        let t0 = Instant::now();
        let mut sent_at: Vec<Option<Instant>> = vec![None; count];
        let (send_result, poll_result) = std::thread::scope(|scope| {
            let poller = scope.spawn(|| self.poll(phase, start_block, &watch, &failed, labels));
            let result = (|| {
                for (i, slot) in sent_at.iter_mut().enumerate() {
                    let at = Instant::now();
                    *slot = Some(at);
                    let hash = send(i)?;
                    watch
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .sent(i, hash, at);
                }
                Ok(())
            })();
            {
                let mut w = watch
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                w.sent_all = Some(Instant::now());
            }
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            (result, poller.join())
        });
        send_result?;
        let poll = poll_result
            .map_err(|_| InjectError::Node(format!("{phase}: the inclusion poller panicked")))?;
        poll?;
        let watch = watch
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let send_seconds = watch
            .sent_all
            .map_or(0.0, |t| t.duration_since(t0).as_secs_f64());
        let mut hash_of = vec![B256::ZERO; count];
        for (h, (i, _)) in &watch.pending {
            hash_of[*i] = *h;
        }
        let mut included = Vec::with_capacity(count);
        let mut last_seen = t0;
        for i in 0..count {
            let (Some((block, seen)), Some(sent)) = (watch.seen[i], sent_at[i]) else {
                return Err(InjectError::Node(format!(
                    "{phase}: transaction {i} ({}) was not seen sent and included",
                    labels[i]
                )));
            };
            last_seen = last_seen.max(seen);
            let latency = seen.saturating_duration_since(sent);
            included.push(self.receipt(&labels[i], hash_of[i], block, latency)?);
        }
        let blocks = watch.blocks();
        Ok(Phase {
            included,
            blocks,
            send_seconds,
            seconds: last_seen.duration_since(t0).as_secs_f64(),
        })
    }

    /// Follows the head from `start_block + 1`, marking the phase's transactions as seen,
    /// until all sent ones are seen, the sender failed, or the deadline after the last send.
    fn poll(
        &self,
        phase: &'static str,
        start_block: u64,
        watch: &Mutex<Watch>,
        failed: &AtomicBool,
        labels: &[String],
    ) -> Result<(), InjectError> {
        let mut next = start_block + 1;
        loop {
            if failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            let head = self.block_number()?;
            while next <= head {
                let block = self.block_hashes(next)?;
                let now = Instant::now();
                watch
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .saw_block(next, &block, now);
                next += 1;
            }
            let (done, sent, pending, sent_all) = watch
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .progress(labels);
            if done {
                return Ok(());
            }
            if let Some(at) = sent_all {
                let waited = at.elapsed();
                if waited > self.wait {
                    return Err(InjectError::Timeout {
                        phase,
                        pending: pending.0,
                        sent,
                        first: pending.1,
                        waited: waited.as_secs_f64(),
                    });
                }
            }
            std::thread::sleep(POLL);
        }
    }

    /// Block `number`'s header facts and transaction hashes.
    fn block_hashes(&self, number: u64) -> Result<BlockHead, InjectError> {
        let what = || format!("block {number} while waiting for inclusions");
        let raw = self
            .client
            .call(
                GET_BLOCK,
                serde_json::json!([hex(number), false]),
                Some(number),
            )
            .map_err(|source| InjectError::Rpc {
                what: what(),
                source: Box::new(source),
            })?;
        serde_json::from_str::<BlockHead>(raw.get())
            .map_err(|_| self.nonsense(what(), GET_BLOCK, raw.get()))
    }

    /// The receipt of an included transaction; it must name the block it was seen in.
    fn receipt(
        &self,
        label: &str,
        hash: B256,
        block: u64,
        latency: Duration,
    ) -> Result<Included, InjectError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Receipt {
            status: String,
            gas_used: String,
            block_number: String,
            #[serde(default)]
            contract_address: Option<Address>,
        }
        let raw = self.call(|| label.to_owned(), RECEIPT, serde_json::json!([hash]))?;
        let bad = || self.nonsense(label.to_owned(), RECEIPT, raw.get());
        let r: Receipt = serde_json::from_str(raw.get()).map_err(|_| bad())?;
        let q = |s: &str| quantity::<u64>(&serde_json::Value::from(s).to_string());
        let (status, gas_used, number) = (
            q(&r.status).ok_or_else(bad)?,
            q(&r.gas_used).ok_or_else(bad)?,
            q(&r.block_number).ok_or_else(bad)?,
        );
        if number != block {
            return Err(InjectError::Node(format!(
                "{label}: seen in block {block}, its receipt says block {number} (the chain reorganised?)"
            )));
        }
        Ok(Included {
            hash,
            block,
            latency,
            success: status == 1,
            gas_used,
            contract_address: r.contract_address,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockHead {
    gas_used: String,
    gas_limit: String,
    transactions: Vec<B256>,
}

/// What the sender and the poller share.
#[derive(Default)]
struct Watch {
    /// Hash → (index, sent at).
    pending: HashMap<B256, (usize, Option<Instant>)>,
    /// Index → (block, seen at).
    seen: Vec<Option<(u64, Instant)>>,
    /// Every transaction in the blocks polled: hash → (block, seen at).
    in_blocks: HashMap<B256, (u64, Instant)>,
    /// Blocks polled: number → (transactions, gas used, gas limit).
    heads: std::collections::BTreeMap<u64, (usize, u64, u64)>,
    sent: usize,
    sent_all: Option<Instant>,
}

impl Watch {
    fn saw_block(&mut self, number: u64, block: &BlockHead, now: Instant) {
        for h in &block.transactions {
            self.in_blocks.insert(*h, (number, now));
            if let Some((i, _)) = self.pending.get(h) {
                if self.seen[*i].is_none() {
                    self.seen[*i] = Some((number, now));
                }
            }
        }
        let q = |s: &str| quantity::<u64>(&serde_json::Value::from(s).to_string());
        self.heads.insert(
            number,
            (
                block.transactions.len(),
                q(&block.gas_used).unwrap_or_default(),
                q(&block.gas_limit).unwrap_or_default(),
            ),
        );
    }

    /// Records that transaction `i` with `hash` was sent at `at` (and seen, if a block polled
    /// before its send returned holds it).
    fn sent(&mut self, i: usize, hash: B256, at: Instant) {
        self.pending.insert(hash, (i, Some(at)));
        self.sent += 1;
        if self.seen[i].is_none() {
            self.seen[i] = self.in_blocks.get(&hash).copied();
        }
    }

    /// The polled blocks that hold transactions of the phase.
    fn blocks(&self) -> Vec<BlockStat> {
        let mut ours: std::collections::BTreeMap<u64, usize> = Default::default();
        for (block, _) in self.seen.iter().flatten() {
            *ours.entry(*block).or_default() += 1;
        }
        ours.into_iter()
            .map(|(number, ours)| {
                let (txs, gas_used, gas_limit) = self.heads[&number];
                BlockStat {
                    number,
                    txs,
                    ours,
                    gas_used,
                    gas_limit,
                }
            })
            .collect()
    }

    /// (every sent transaction seen and all sent, sent, (pending count, first pending
    /// label), when sending ended).
    fn progress(&self, labels: &[String]) -> (bool, usize, (usize, String), Option<Instant>) {
        // A transaction counts as sent once its send returned (`Some` time); one seen in a
        // block before its send returned is seen all the same.
        let mut pending = 0;
        let mut first: Option<usize> = None;
        for (i, _) in self.pending.values().filter(|(_, at)| at.is_some()) {
            if self.seen[*i].is_none() {
                pending += 1;
                first = Some(first.map_or(*i, |f| f.min(*i)));
            }
        }
        let label = first.map_or_else(String::new, |i| labels[i].clone());
        (
            pending == 0 && self.sent_all.is_some(),
            self.sent,
            (pending, label),
            self.sent_all,
        )
    }
}
