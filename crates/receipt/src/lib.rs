//! The receipt model: a transaction's result as its receipt needs it, and the header values
//! built from a block's receipts (receipts root, logs bloom, block gas used under the fork's
//! rules). Execution produces these; the verifier compares them. Neither owns them.

use alloy_consensus::{Eip658Value, Receipt, RlpEncodableReceipt, TxType};
#[cfg(test)]
use alloy_consensus::{ReceiptEnvelope, ReceiptWithBloom};
use alloy_primitives::{Bloom, Log, B256};
use rayon::prelude::*;

mod ordered;
pub use ordered::ordered_trie_root;

/// The result of one transaction, as a receipt needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxReceipt {
    /// Transaction type (selects the receipt encoding).
    pub tx_type: TxType,
    /// Whether the transaction succeeded (EIP-658 status).
    pub success: bool,
    /// Gas charged to this transaction (after refunds).
    pub gas_used: u64,
    /// Gas charged to this and every earlier transaction of the block.
    pub cumulative_gas_used: u64,
    /// Logs emitted.
    pub logs: Vec<Log>,
    /// This transaction's regular-gas contribution to the block (EIP-8037/EIP-7778: before
    /// refunds, state gas excluded, at least the EIP-7623 floor).
    pub block_regular_gas: u64,
    /// This transaction's state-gas contribution to the block (EIP-8037).
    pub block_state_gas: u64,
    /// State root after this transaction, which pre-Byzantium receipts carry instead of a
    /// status; `None` where it was not computed.
    pub post_state: Option<B256>,
}

/// Which header rules apply to a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderRules {
    /// The receipts root can be rebuilt: receipts carry an EIP-658 status (Byzantium on) or
    /// the intermediate state roots were computed.
    pub receipts_root: bool,
    /// The header's gas used is EIP-8037's two-dimensional block gas (Amsterdam on):
    /// max(Σ regular gas, Σ state gas); before, the last receipt's cumulative gas.
    pub two_dimensional_gas: bool,
}

/// The block gas used the header must state, under `rules`.
pub fn block_gas_used(receipts: &[TxReceipt], rules: HeaderRules) -> u64 {
    if rules.two_dimensional_gas {
        let regular: u64 = receipts.iter().map(|r| r.block_regular_gas).sum();
        let state: u64 = receipts.iter().map(|r| r.block_state_gas).sum();
        regular.max(state)
    } else {
        receipts.last().map_or(0, |r| r.cumulative_gas_used)
    }
}

/// Logs of one receipt from which its bloom is built in pieces of this many on the current
/// pool (a receipt that fills a block with logs — tens of thousands — took most of its
/// block's verification on one thread).
const PARALLEL_LOGS: usize = 256;

/// Logs of one receipt (or piece) from which each distinct address and topic is hashed once
/// ([`TxReceipt::bloom`]); fewer are hashed as they come.
const DISTINCT_LOGS: usize = 8;

impl TxReceipt {
    /// The receipt's status field: the post-state root before Byzantium where computed, else
    /// the EIP-658 status.
    fn status(&self) -> Eip658Value {
        match self.post_state {
            Some(root) => Eip658Value::PostState(root),
            None => Eip658Value::Eip658(self.success),
        }
    }

    /// The receipt's logs bloom: the keccaks of every log's address and topics (a receipt
    /// with many logs in pieces on the current pool). A bloom's bits are idempotent, so of
    /// a receipt with several logs each distinct address and topic is hashed once: a busy
    /// receipt's logs repeat their contract's address and their event's signature.
    pub fn bloom(&self) -> Bloom {
        let serial = |logs: &[Log]| {
            let mut bloom = Bloom::default();
            if logs.len() < DISTINCT_LOGS {
                for log in logs {
                    bloom.accrue_log(log);
                }
                return bloom;
            }
            let mut seen = alloy_primitives::map::HashSet::<&[u8]>::default();
            for log in logs {
                for item in std::iter::once(log.address.as_slice())
                    .chain(log.topics().iter().map(|t| t.as_slice()))
                {
                    if seen.insert(item) {
                        bloom.m3_2048(item);
                    }
                }
            }
            bloom
        };
        if self.logs.len() < 2 * PARALLEL_LOGS {
            return serial(&self.logs);
        }
        self.logs
            .par_chunks(PARALLEL_LOGS)
            .map(serial)
            .reduce(Bloom::default, |a, b| a | b)
    }

    /// The receipt's EIP-2718 encoding with `bloom` (its own, [`Self::bloom`]), as the
    /// receipts trie holds it: the type byte of a typed transaction, then the RLP list
    /// [status, cumulative gas, bloom, logs]. The logs are encoded in place, not copied first.
    pub fn encoded_2718(&self, bloom: &Bloom) -> Vec<u8> {
        let receipt = Receipt {
            status: self.status(),
            cumulative_gas_used: self.cumulative_gas_used,
            logs: self.logs.iter().collect::<Vec<&Log>>(),
        };
        let typed = self.tx_type != TxType::Legacy;
        let mut out = Vec::with_capacity(receipt.rlp_encoded_length_with_bloom(bloom) + 1);
        if typed {
            out.push(u8::from(self.tx_type));
        }
        receipt.rlp_encode_with_bloom(bloom, &mut out);
        out
    }

    /// The receipt as alloy's envelope (the reference the encoding is tested against).
    #[cfg(test)]
    fn envelope(&self) -> ReceiptEnvelope {
        let receipt = Receipt {
            status: self.status(),
            cumulative_gas_used: self.cumulative_gas_used,
            logs: self.logs.clone(),
        };
        let with_bloom = ReceiptWithBloom::from(receipt);
        match self.tx_type {
            TxType::Legacy => ReceiptEnvelope::Legacy(with_bloom),
            TxType::Eip2930 => ReceiptEnvelope::Eip2930(with_bloom),
            TxType::Eip1559 => ReceiptEnvelope::Eip1559(with_bloom),
            TxType::Eip4844 => ReceiptEnvelope::Eip4844(with_bloom),
            TxType::Eip7702 => ReceiptEnvelope::Eip7702(with_bloom),
        }
    }
}

/// The keccaks of the addresses and topics one thread has met in a run of receipts, each
/// hashed once: a block's logs repeat their contracts' addresses and their events' signatures
/// (an ERC-20 `Transfer` in most receipts), and a bloom needs an item's hash, not the item.
/// Blooms accrued through it equal alloy's (`Bloom::m3_2048_hashed` of the same hash).
#[derive(Default)]
struct ItemHashes<'a>(alloy_primitives::map::HashMap<&'a [u8], B256>);

/// The most items an [`ItemHashes`] keeps: the first ones met, where a block's busy contracts
/// and events show up at once (~200 KiB, within a core's L2). On the 2-core VM, one thread,
/// 4,000 receipts of 4 logs: with every item distinct a map that grew without bound made the
/// bloom and root 1.33× slower than hashing each item, this one 1.13–1.16×; with items
/// repeating, 0.41–0.47×; on mainnet-mix 300M verification takes 0.63× either way.
const ITEM_HASHES: usize = 4096;

impl<'a> ItemHashes<'a> {
    /// `receipt`'s logs bloom, hashing only what this run has not met ([`TxReceipt::bloom`]
    /// for a receipt long enough to be split over the pool).
    fn bloom(&mut self, receipt: &'a TxReceipt) -> Bloom {
        if receipt.logs.len() >= 2 * PARALLEL_LOGS {
            return receipt.bloom();
        }
        let mut bloom = Bloom::default();
        for log in &receipt.logs {
            for item in std::iter::once(log.address.as_slice())
                .chain(log.topics().iter().map(|t| t.as_slice()))
            {
                match self.0.get(item) {
                    Some(hash) => bloom.m3_2048_hashed(hash),
                    None => {
                        let hash = alloy_primitives::keccak256(item);
                        bloom.m3_2048_hashed(&hash);
                        if self.0.len() < ITEM_HASHES {
                            self.0.insert(item, hash);
                        }
                    }
                }
            }
        }
        bloom
    }
}

/// The block's logs bloom and (with `with_root`) receipts root together, in parallel on the
/// current rayon pool: each receipt's bloom (every distinct address and topic hashed once
/// per thread's run of receipts, [`ItemHashes`]) and EIP-2718 encoding once, then the union
/// of the blooms and the ordered trie's root ([`ordered_trie_root`], its subtries built in
/// parallel).
pub fn bloom_and_root(receipts: &[TxReceipt], with_root: bool) -> (Bloom, Option<B256>) {
    let (blooms, encoded): (Vec<Bloom>, Vec<Vec<u8>>) = receipts
        .par_iter()
        .map_init(ItemHashes::default, |hashes, r| {
            let bloom = hashes.bloom(r);
            let encoded = if with_root {
                r.encoded_2718(&bloom)
            } else {
                Vec::new()
            };
            (bloom, encoded)
        })
        .unzip();
    let mut bloom = Bloom::default();
    for b in &blooms {
        bloom |= *b;
    }
    (bloom, with_root.then(|| ordered_trie_root(&encoded)))
}

/// Receipts root (EIP-658 receipts; meaningful from Byzantium on).
pub fn receipts_root(receipts: &[TxReceipt]) -> B256 {
    let encoded: Vec<Vec<u8>> = receipts
        .par_iter()
        .map(|r| r.encoded_2718(&r.bloom()))
        .collect();
    ordered_trie_root(&encoded)
}

/// The block's logs bloom: the union of every log's bloom.
pub fn logs_bloom(receipts: &[TxReceipt]) -> Bloom {
    let mut bloom = Bloom::default();
    for receipt in receipts {
        bloom |= receipt.bloom();
    }
    bloom
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::{Address, Bytes, LogData};

    fn receipt(i: u64, logs: usize) -> TxReceipt {
        TxReceipt {
            tx_type: if i.is_multiple_of(2) {
                TxType::Eip1559
            } else {
                TxType::Legacy
            },
            success: !i.is_multiple_of(3),
            gas_used: 21_000 + i,
            cumulative_gas_used: (i + 1) * 30_000,
            logs: (0..logs)
                .map(|l| Log {
                    address: Address::with_last_byte(l as u8 + 1),
                    data: LogData::new_unchecked(
                        vec![B256::with_last_byte(i as u8), B256::with_last_byte(l as u8)],
                        Bytes::from(vec![l as u8; l]),
                    ),
                })
                .collect(),
            block_regular_gas: 0,
            block_state_gas: 0,
            post_state: None,
        }
    }

    /// The combined, parallel computation gives the same bloom and root as the two separate
    /// ones, and leaves the root out when not asked for.
    #[test]
    fn bloom_and_root_equal_the_separate_values() {
        for n in [0, 1, 2, 17, 300] {
            let receipts: Vec<TxReceipt> = (0..n).map(|i| receipt(i, (i % 4) as usize)).collect();
            let (bloom, root) = bloom_and_root(&receipts, true);
            assert_eq!(bloom, logs_bloom(&receipts), "{n} receipts");
            assert_eq!(root, Some(receipts_root(&receipts)), "{n} receipts");
            // The parallel root is alloy-consensus's receipts root.
            let envelopes: Vec<ReceiptEnvelope> =
                receipts.iter().map(TxReceipt::envelope).collect();
            assert_eq!(
                root,
                Some(alloy_consensus::proofs::calculate_receipt_root(&envelopes)),
                "{n} receipts"
            );
            assert_eq!(bloom_and_root(&receipts, false), (bloom, None));
        }
        let receipts: Vec<TxReceipt> = (0..5).map(|i| receipt(i, 2)).collect();
        assert_ne!(logs_bloom(&receipts), Bloom::default());
    }

    /// A receipt's own encoding (logs borrowed) and bloom (in pieces past 2 × PARALLEL_LOGS
    /// logs) equal alloy's envelope's, for every transaction type, both status kinds and log
    /// counts around the parallel threshold.
    #[test]
    fn the_encoding_and_bloom_equal_alloy_s_envelope() {
        use alloy_eips::eip2718::Encodable2718;
        let types = [
            TxType::Legacy,
            TxType::Eip2930,
            TxType::Eip1559,
            TxType::Eip4844,
            TxType::Eip7702,
        ];
        let counts = [
            0,
            1,
            DISTINCT_LOGS - 1,
            DISTINCT_LOGS,
            2 * PARALLEL_LOGS - 1,
            2 * PARALLEL_LOGS,
            5 * PARALLEL_LOGS + 3,
        ];
        for (i, (tx_type, logs)) in types
            .iter()
            .flat_map(|t| counts.iter().map(move |c| (*t, *c)))
            .enumerate()
        {
            let mut r = receipt(i as u64, 0);
            r.tx_type = tx_type;
            r.logs = (0..logs)
                .map(|l| Log {
                    address: Address::with_last_byte((l % 251) as u8),
                    data: LogData::new_unchecked(
                        (0..l % 5)
                            .map(|t| B256::with_last_byte((l + t) as u8))
                            .collect(),
                        Bytes::from(vec![l as u8; l % 70]),
                    ),
                })
                .collect();
            if i % 3 == 0 {
                r.post_state = Some(B256::with_last_byte(i as u8));
            }
            let envelope = r.envelope();
            assert_eq!(
                r.bloom(),
                *envelope.logs_bloom(),
                "{tx_type:?}, {logs} logs"
            );
            assert_eq!(
                r.encoded_2718(&r.bloom()),
                envelope.encoded_2718(),
                "{tx_type:?}, {logs} logs"
            );
        }
    }

    /// Past the items the cache keeps (every address and topic distinct, more than
    /// `ITEM_HASHES` on one thread), each item is still hashed into its receipt's bloom.
    #[test]
    fn the_block_bloom_past_the_cache_is_alloy_s() {
        let word = |n: u64| B256::from(alloy_primitives::U256::from(n));
        let receipts: Vec<TxReceipt> = (0..(ITEM_HASHES as u64 / 4))
            .map(|i| {
                let mut r = receipt(i, 0);
                r.logs = (0..3)
                    .map(|l| {
                        let n = (i * 3 + l) * 3;
                        Log {
                            address: Address::from_word(word(n)),
                            data: LogData::new_unchecked(
                                vec![word(n + 1), word(n + 2), B256::with_last_byte(7)],
                                Bytes::new(),
                            ),
                        }
                    })
                    .collect();
                r
            })
            .collect();
        let mut expected = Bloom::default();
        for r in &receipts {
            expected.accrue_logs(&r.logs);
        }
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (bloom, root) = one.install(|| bloom_and_root(&receipts, true));
        assert_eq!(bloom, expected);
        assert_eq!(root, Some(receipts_root(&receipts)));
    }

    /// Logs of no data from `(address byte, topic bytes)` picks: drawn from a few values, most
    /// addresses and topics repeat.
    fn repeating_logs(picks: &[(u8, Vec<u8>)]) -> Vec<Log> {
        picks
            .iter()
            .map(|(a, topics)| Log {
                address: Address::with_last_byte(*a),
                data: LogData::new_unchecked(
                    topics.iter().map(|t| B256::with_last_byte(*t)).collect(),
                    Bytes::new(),
                ),
            })
            .collect()
    }

    proptest::proptest! {
        /// Hashing each distinct address and topic once gives alloy's bloom, whatever the
        /// repeats: logs drawn from a few addresses and topics (so most repeat), any count.
        #[test]
        fn the_bloom_of_repeated_logs_is_alloy_s(
            picks in proptest::collection::vec((0u8..4, proptest::collection::vec(0u8..6, 0..5)), 0..700)
        ) {
            let mut r = receipt(1, 0);
            r.logs = repeating_logs(&picks);
            let mut expected = Bloom::default();
            expected.accrue_logs(&r.logs);
            proptest::prop_assert_eq!(r.bloom(), expected);
        }

        /// A block's bloom with each address and topic hashed once per thread's run of
        /// receipts is alloy's, and each receipt keeps its own bloom in the receipts root:
        /// receipts whose logs repeat a few addresses and topics across the block.
        #[test]
        fn the_block_bloom_of_repeated_items_is_alloy_s(
            block in proptest::collection::vec(
                proptest::collection::vec((0u8..5, proptest::collection::vec(0u8..7, 0..5)), 0..6),
                0..300,
            )
        ) {
            let receipts: Vec<TxReceipt> = block
                .iter()
                .enumerate()
                .map(|(i, logs)| {
                    let mut r = receipt(i as u64, 0);
                    r.logs = repeating_logs(logs);
                    r
                })
                .collect();
            let mut expected = Bloom::default();
            for r in &receipts {
                expected.accrue_logs(&r.logs);
            }
            let envelopes: Vec<ReceiptEnvelope> = receipts.iter().map(TxReceipt::envelope).collect();
            let (bloom, root) = bloom_and_root(&receipts, true);
            proptest::prop_assert_eq!(bloom, expected);
            proptest::prop_assert_eq!(
                root,
                Some(alloy_consensus::proofs::calculate_receipt_root(&envelopes))
            );
        }
    }
}
