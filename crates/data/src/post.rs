//! What a block's execution left: its final accounts as revm's caches hold them.

use alloy_primitives::{Address, B256};
use revm::{
    bytecode::Bytecode,
    database::{states::CacheAccount, CacheState},
};

/// The final accounts of an executed block: one revm cache (the sequential path, and the
/// parallel commit on one lane), or several whose accounts are disjoint (the parallel commit's
/// lanes, [`lane_of`]: each account in exactly one part, the part of its lane or part 0).
/// Readers iterate [`Self::accounts`]; nothing joins the parts into one map.
#[derive(Debug, Clone, Default)]
pub struct PostState {
    parts: Vec<CacheState>,
}

/// The lane of `address` among `lanes` (1 to 31): the part of a [`PostState`] that holds it,
/// unless part 0 does (accounts moved there for post-execution).
pub fn lane_of(address: &Address, lanes: usize) -> usize {
    if lanes <= 1 {
        return 0;
    }
    // Every byte counts (generated chains number their accounts in a few bytes): the address
    // folded through splitmix64's finalizer, its high bits reduced to the lane count.
    let word = |range: std::ops::Range<usize>| {
        let mut bytes = [0u8; 8];
        bytes[..range.len()].copy_from_slice(&address[range]);
        u64::from_le_bytes(bytes)
    };
    let h = mix(word(0..8) ^ mix(word(8..16) ^ mix(word(16..20))));
    (((h >> 32) * lanes as u64) >> 32) as usize
}

/// splitmix64's finalizer: every input bit moves about half the output bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl PostState {
    /// The parts of a lane-split commit, part `j` holding lane `j`'s accounts (part 0 may also
    /// hold others). The caller keeps every account in one part.
    pub fn from_parts(parts: Vec<CacheState>) -> Self {
        Self { parts }
    }

    /// Every account, each once, in no particular order.
    pub fn accounts(&self) -> impl Iterator<Item = (&Address, &CacheAccount)> + '_ {
        self.parts.iter().flat_map(|p| p.accounts.iter())
    }

    /// The account at `address`, if execution loaded it.
    pub fn account(&self, address: &Address) -> Option<&CacheAccount> {
        let lane = lane_of(address, self.parts.len());
        self.parts
            .get(lane)
            .and_then(|p| p.accounts.get(address))
            .or_else(|| match lane {
                0 => None,
                _ => self.parts.first()?.accounts.get(address),
            })
    }

    /// Code created during the block, by hash.
    pub fn contract(&self, code_hash: &B256) -> Option<&Bytecode> {
        self.parts.iter().find_map(|p| p.contracts.get(code_hash))
    }

    /// Number of accounts.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.accounts.len()).sum()
    }

    /// True when execution left no account.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A block's final accounts, whichever way they are held: revm's one cache, or a
/// [`PostState`] of parts. What the post-state's readers (`gigagas_state::apply_changes`,
/// the roots) take.
pub trait FinalAccounts {
    /// Every account, each once, in no particular order.
    fn final_accounts(&self) -> impl Iterator<Item = (&Address, &CacheAccount)>;
    /// Code created during the block, by hash.
    fn created_code(&self, code_hash: &B256) -> Option<&Bytecode>;
}

impl FinalAccounts for CacheState {
    fn final_accounts(&self) -> impl Iterator<Item = (&Address, &CacheAccount)> {
        self.accounts.iter()
    }
    fn created_code(&self, code_hash: &B256) -> Option<&Bytecode> {
        self.contracts.get(code_hash)
    }
}

impl FinalAccounts for PostState {
    fn final_accounts(&self) -> impl Iterator<Item = (&Address, &CacheAccount)> {
        self.accounts()
    }
    fn created_code(&self, code_hash: &B256) -> Option<&Bytecode> {
        self.contract(code_hash)
    }
}

impl From<CacheState> for PostState {
    fn from(cache: CacheState) -> Self {
        Self { parts: vec![cache] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use revm::state::AccountInfo;

    fn account(nonce: u64) -> AccountInfo {
        AccountInfo {
            nonce,
            ..AccountInfo::default()
        }
    }

    #[test]
    fn parts_read_as_one_cache() {
        let lanes = 4;
        let addresses: Vec<Address> = (0u8..64).map(Address::repeat_byte).collect();
        let mut parts: Vec<CacheState> = (0..lanes).map(|_| CacheState::new()).collect();
        for (i, a) in addresses.iter().enumerate() {
            // Every eighth account sits in part 0 whatever its lane (moved there).
            let part = if i % 8 == 0 { 0 } else { lane_of(a, lanes) };
            parts[part].insert_account(*a, account(i as u64 + 1));
        }
        let post = PostState::from_parts(parts);
        assert_eq!(post.len(), addresses.len());
        for (i, a) in addresses.iter().enumerate() {
            let cached = post.account(a).expect("every account is found");
            assert_eq!(
                cached.account.as_ref().map(|p| p.info.nonce),
                Some(i as u64 + 1)
            );
        }
        assert!(post.account(&Address::repeat_byte(0xee)).is_none());
        assert_eq!(post.accounts().count(), addresses.len());
        // Lanes spread addresses over every part, also addresses that differ in one byte.
        let used: std::collections::HashSet<usize> =
            addresses.iter().map(|a| lane_of(a, lanes)).collect();
        assert_eq!(used.len(), lanes);
        assert_eq!(lane_of(&addresses[5], 1), 0);
        for byte in [0, 7, 12, 19] {
            let mut counts = [0usize; 16];
            for i in 0..=255u8 {
                let mut a = Address::ZERO;
                a[byte] = i;
                counts[lane_of(&a, 16)] += 1;
            }
            // 256 addresses over 16 lanes: 16 each on average; none empty, none over 3x.
            assert!(
                counts.iter().all(|&c| (1..=48).contains(&c)),
                "byte {byte}: {counts:?}"
            );
        }
    }
}
