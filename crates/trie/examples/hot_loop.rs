//! Diagnostic: `compute_updates` of one hot storage trie in a loop (for CPU-time / profiler
//! runs). hot_loop <serial|N threads> [slots] [changes] [iterations]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing
use alloy_primitives::{B256, U256};
use gigagas_trie::{
    compute_updates, from_scratch, AccountChange, AccountInfo, ChangeSet, Parallelism,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::{collections::BTreeMap, time::Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().cloned().unwrap_or_else(|| "2".into());
    let slots: usize = args.get(1).map_or(200_000, |s| s.parse().unwrap());
    let changes: usize = args.get(2).map_or(4_200, |s| s.parse().unwrap());
    let iters: usize = args.get(3).map_or(50, |s| s.parse().unwrap());
    let mut rng = StdRng::seed_from_u64(1);
    let spread = std::env::var("SPREAD").ok();
    let (store, cs) = if let Some(kind) = spread {
        // 10k contracts x slots/10k, changes: one slot in each of `changes` contracts
        // (kind "info": account changes only).
        let owners: Vec<B256> = (0..10_000u64)
            .map(|i| alloy_primitives::keccak256(i.to_be_bytes()))
            .collect();
        let storages: Vec<(B256, Vec<(B256, U256)>)> = owners
            .iter()
            .map(|o| {
                (
                    *o,
                    (0..slots / 10_000)
                        .map(|_| (B256::from(rng.random::<[u8; 32]>()), U256::from(1)))
                        .collect(),
                )
            })
            .collect();
        let (_, store) = from_scratch(
            owners.iter().map(|o| (*o, AccountInfo::default())),
            storages,
            Parallelism::Serial,
        );
        let mut cs = ChangeSet::default();
        for o in &owners[..changes] {
            let storage = if kind == "info" {
                BTreeMap::new()
            } else {
                BTreeMap::from([(B256::from(rng.random::<[u8; 32]>()), U256::from(2))])
            };
            cs.accounts.insert(
                *o,
                AccountChange {
                    info: Some(AccountInfo {
                        nonce: 1,
                        ..Default::default()
                    }),
                    storage_wiped: false,
                    storage,
                },
            );
        }
        (store, cs)
    } else {
        let owner = B256::repeat_byte(7);
        let pre: Vec<(B256, U256)> = (0..slots)
            .map(|_| (B256::from(rng.random::<[u8; 32]>()), U256::from(1)))
            .collect();
        let (_, store) = from_scratch(
            [(owner, AccountInfo::default())],
            [(owner, pre)],
            Parallelism::Serial,
        );
        let storage: BTreeMap<B256, U256> = (0..changes)
            .map(|_| (B256::from(rng.random::<[u8; 32]>()), U256::from(2)))
            .collect();
        let mut cs = ChangeSet::default();
        cs.accounts.insert(
            owner,
            AccountChange {
                info: Some(AccountInfo::default()),
                storage_wiped: false,
                storage,
            },
        );
        (store, cs)
    };
    let (pool, p) = match mode.as_str() {
        "serial" => (None, Parallelism::Serial),
        n => (
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n.parse().unwrap())
                    .build()
                    .unwrap(),
            ),
            Parallelism::DEFAULT,
        ),
    };
    let start = Instant::now();
    for _ in 0..iters {
        let u = match &pool {
            None => compute_updates(&store, &cs, p),
            Some(pool) => pool.install(|| compute_updates(&store, &cs, p)),
        };
        std::hint::black_box(u.unwrap());
    }
    eprintln!(
        "{mode}: {:.2} ms per update",
        start.elapsed().as_secs_f64() * 1e3 / iters as f64
    );
}
