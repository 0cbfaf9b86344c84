//! The in-memory model every input format is turned into.

use crate::PreState;
use alloy_consensus::{Header, TxEnvelope};
use alloy_eips::eip4895::Withdrawal;
use alloy_primitives::{Address, B256};
use std::{path::PathBuf, sync::Arc};

/// One signed transaction as found in the block file.
#[derive(Debug, Clone)]
pub struct Transaction {
    /// The signed transaction (legacy, EIP-2930, EIP-1559, EIP-4844 or EIP-7702).
    pub envelope: TxEnvelope,
    /// The sender the block file claims (`from`); only a cross-check for sender recovery.
    pub claimed_sender: Address,
}

impl Transaction {
    /// Transaction hash (computed from the signed envelope).
    pub fn hash(&self) -> B256 {
        *self.envelope.hash()
    }
}

/// A block ready to execute: header, transactions, post-execution inputs and pre-state.
#[derive(Debug, Clone)]
pub struct BlockInput {
    /// Block header as given (the expected values: gas used, receipts root, logs bloom, ...).
    pub header: Header,
    /// Block hash as given in the file.
    pub hash: B256,
    /// Transactions in block order.
    pub transactions: Vec<Transaction>,
    /// Withdrawals (Shanghai and later), credited after the transactions.
    pub withdrawals: Vec<Withdrawal>,
    /// Hashes of the included ommers (uncles).
    pub ommers: Vec<B256>,
    /// Full ommer headers where the input carries them (blockchain tests), so that ommer
    /// miners are rewarded; empty for the mainnet data, which has only the hashes.
    pub ommer_headers: Vec<Header>,
    /// The state the block executes against, shared read-only by every worker.
    pub pre_state: Arc<PreState>,
    /// Where the block came from, for messages.
    pub source: PathBuf,
    /// Fork rules named by the data set (generated chains); `None`: the mainnet schedule by
    /// block number and timestamp.
    pub spec: Option<revm::primitives::hardfork::SpecId>,
    /// The block access list shipped with the block (generated Amsterdam chains); the header's
    /// `block_access_list_hash` commits to it. `None` for data without BALs (mainnet).
    pub access_list: Option<alloy_eip7928::BlockAccessList>,
    /// Whether `pre_state` is the whole world state (generated chains, blockchain tests): then
    /// the post-state root is computed and must equal the header's `stateRoot`. `false` for
    /// touched-only pre-states (the mainnet data), whose root says nothing.
    pub complete_state: bool,
    /// The chain id transactions are checked against and `CHAINID` returns: 1 for mainnet
    /// data, the node's for fetched data of another chain, the chain's own for generated ones.
    pub chain_id: u64,
}

impl BlockInput {
    /// Block number.
    pub fn number(&self) -> u64 {
        self.header.number
    }

    /// A copy that shares no memory with `self` (transactions re-decoded from their
    /// encoding, the pre-state deep-copied: [`PreState::deep_clone`]), for measurements that
    /// must rule out sharing between threads.
    pub fn deep_clone(&self) -> Self {
        use alloy_eips::eip2718::{Decodable2718, Encodable2718};
        let transactions = self
            .transactions
            .iter()
            .map(|tx| Transaction {
                envelope: TxEnvelope::decode_2718(&mut tx.envelope.encoded_2718().as_slice())
                    .unwrap_or_else(|_| tx.envelope.clone()),
                claimed_sender: tx.claimed_sender,
            })
            .collect();
        Self {
            transactions,
            pre_state: Arc::new(self.pre_state.deep_clone()),
            ..self.clone()
        }
    }

    /// Gas used as stated by the header.
    pub fn gas_used(&self) -> u64 {
        self.header.gas_used
    }
}

/// A loaded data set: blocks in ascending order.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Human-readable name (directory or archive).
    pub name: String,
    /// Blocks in ascending block-number order.
    pub blocks: Vec<BlockInput>,
}

impl Dataset {
    /// Total gas used by all blocks, as stated by their headers.
    pub fn total_gas(&self) -> u64 {
        self.blocks.iter().map(BlockInput::gas_used).sum()
    }

    /// Total number of transactions.
    pub fn total_txs(&self) -> usize {
        self.blocks.iter().map(|b| b.transactions.len()).sum()
    }
}
