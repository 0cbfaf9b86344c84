//! Incremental vs from-scratch state root, serial vs parallel, one hot storage trie vs the
//! same number of slot changes spread over many accounts, and the fork threshold.
//!
//! cargo run --release -p gigagas-trie --example incremental_root -- [hot_slots] [changes] [reps]
//! (defaults 1000000 4200 15). Prints markdown tables; times are medians (and minima) of
//! interleaved repetitions of `compute_updates` (read-only, so every repetition sees the same
//! pre-state); the writes are timed once per case.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{keccak256, B256, U256};
use gigagas_trie::{
    compute_updates, from_scratch, write_updates, AccountChange, AccountInfo, ChangeSet,
    MemoryStore, Parallelism,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::{collections::BTreeMap, time::Instant};

const EOAS: usize = 50_000;
const TOUCHED_EOAS: usize = 200;

type Storages = Vec<(B256, Vec<(B256, U256)>)>;

fn rand_b256(rng: &mut StdRng) -> B256 {
    B256::from(rng.random::<[u8; 32]>())
}

fn eoa(i: usize) -> B256 {
    keccak256((i as u64).to_be_bytes())
}

fn contract(i: usize) -> B256 {
    keccak256((u64::MAX - i as u64).to_be_bytes())
}

fn info(nonce: u64) -> AccountInfo {
    AccountInfo {
        nonce,
        balance: U256::from(nonce) * U256::from(10u64).pow(U256::from(18)),
        code_hash: keccak256([1]),
    }
}

/// `contracts` contracts with `slots_each` slots, plus the EOAs.
fn pre_state(
    rng: &mut StdRng,
    contracts: usize,
    slots_each: usize,
) -> (Vec<(B256, AccountInfo)>, Storages) {
    let mut accounts: Vec<(B256, AccountInfo)> =
        (0..EOAS).map(|i| (eoa(i), info(i as u64 % 100))).collect();
    let mut storages = Vec::with_capacity(contracts);
    for c in 0..contracts {
        accounts.push((contract(c), info(1)));
        storages.push((
            contract(c),
            (0..slots_each)
                .map(|_| (rand_b256(rng), U256::from(rng.random::<u64>() | 1)))
                .collect(),
        ));
    }
    (accounts, storages)
}

/// A cold SSTORE mix: 50% new slots, 45% updates of existing slots, 5% deletions.
fn slot_change(rng: &mut StdRng, existing: &[(B256, U256)]) -> (B256, U256) {
    let r: f64 = rng.random();
    if r < 0.5 {
        (rand_b256(rng), U256::from(rng.random::<u64>() | 1))
    } else {
        let k = existing[rng.random_range(0..existing.len())].0;
        (
            k,
            if r < 0.95 {
                U256::from(rng.random::<u64>() | 1)
            } else {
                U256::ZERO
            },
        )
    }
}

fn eoa_changes(cs: &mut ChangeSet) {
    for i in 0..TOUCHED_EOAS {
        cs.accounts.insert(
            eoa(i * 7),
            AccountChange {
                info: Some(info(1000 + i as u64)),
                ..Default::default()
            },
        );
    }
}

/// `changes` slot changes in contract 0 (the hot one).
fn hot_changes(
    rng: &mut StdRng,
    storages: &Storages,
    changes: usize,
    with_eoas: bool,
) -> ChangeSet {
    let mut storage = BTreeMap::new();
    while storage.len() < changes {
        let (k, v) = slot_change(rng, &storages[0].1);
        storage.insert(k, v);
    }
    let mut cs = ChangeSet::default();
    cs.accounts.insert(
        contract(0),
        AccountChange {
            info: Some(info(1)),
            storage_wiped: false,
            storage,
        },
    );
    if with_eoas {
        eoa_changes(&mut cs);
    }
    cs
}

/// One slot change in each of `changes` contracts.
fn spread_changes(rng: &mut StdRng, storages: &Storages, changes: usize) -> ChangeSet {
    let mut cs = ChangeSet::default();
    for (c, (_, slots)) in storages.iter().enumerate().take(changes) {
        let storage = BTreeMap::from([slot_change(rng, slots)]);
        cs.accounts.insert(
            contract(c),
            AccountChange {
                info: Some(info(1)),
                storage_wiped: false,
                storage,
            },
        );
    }
    eoa_changes(&mut cs);
    cs
}

fn pools() -> [rayon::ThreadPool; 2] {
    [1, 2].map(|n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .expect("pool")
    })
}

fn median_min(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0])
}

fn ms(s: f64) -> String {
    format!("{:.2}", s * 1e3)
}

/// Times `compute_updates` under each configuration, interleaved `reps` times.
fn time_configs(
    store: &MemoryStore,
    cs: &ChangeSet,
    configs: &[(Option<usize>, Parallelism)],
    reps: usize,
) -> Vec<(f64, f64)> {
    let pools = pools();
    let mut times = vec![Vec::new(); configs.len()];
    for _ in 0..reps {
        for (i, (threads, p)) in configs.iter().enumerate() {
            let t = Instant::now();
            let u = match threads {
                None => compute_updates(store, cs, *p),
                Some(n) => pools[n - 1].install(|| compute_updates(store, cs, *p)),
            }
            .expect("in-memory store");
            times[i].push(t.elapsed().as_secs_f64());
            std::hint::black_box(u);
        }
    }
    times.into_iter().map(median_min).collect()
}

struct Case {
    name: &'static str,
    store: MemoryStore,
    changes: ChangeSet,
    scratch: [(f64, f64); 3],
}

fn build_case(
    name: &'static str,
    accounts: Vec<(B256, AccountInfo)>,
    storages: Storages,
    changes: ChangeSet,
    reps: usize,
) -> Case {
    let pools = pools();
    let mut scratch_times = [Vec::new(), Vec::new(), Vec::new()];
    let mut store = MemoryStore::default();
    for _ in 0..reps {
        for (i, t) in scratch_times.iter_mut().enumerate() {
            let start = Instant::now();
            let (_, s) = match i {
                0 => from_scratch(accounts.clone(), storages.clone(), Parallelism::Serial),
                _ => pools[i - 1].install(|| {
                    from_scratch(accounts.clone(), storages.clone(), Parallelism::DEFAULT)
                }),
            };
            t.push(start.elapsed().as_secs_f64());
            store = s;
        }
    }
    let scratch = scratch_times.map(median_min);
    Case {
        name,
        store,
        changes,
        scratch,
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("number"))
        .collect();
    let hot_slots = args.first().copied().unwrap_or(1_000_000);
    let changes = args.get(1).copied().unwrap_or(4_200);
    let reps = args.get(2).copied().unwrap_or(15);
    let mut rng = StdRng::seed_from_u64(7928);

    eprintln!("building pre-states ({hot_slots} slots each case)...");
    let (accounts, storages) = pre_state(&mut rng, 1, hot_slots);
    let hot = hot_changes(&mut rng, &storages, changes, true);
    let hot_case = build_case("hot: 1 account", accounts, storages.clone(), hot, 3);
    let hot_storages = storages;
    let spread_contracts = changes.max(10_000);
    let (accounts, storages) = pre_state(&mut rng, spread_contracts, hot_slots / spread_contracts);
    let spread = spread_changes(&mut rng, &storages, changes);
    let spread_case = build_case(
        "spread: 1 slot in each of N accounts",
        accounts,
        storages,
        spread,
        3,
    );

    println!("## Incremental vs from scratch ({changes} changed slots + {TOUCHED_EOAS} EOAs; {hot_slots} pre-filled slots; {EOAS} EOAs; medians of {reps}, min in parentheses; ms)\n");
    println!("| case | from scratch serial | from scratch 2 threads | incremental serial | incremental rayon 1 thread | incremental 2 threads | speedup 2 threads vs serial (median; min) | writes |");
    println!("|---|---|---|---|---|---|---|---|");
    let configs = [
        (None, Parallelism::Serial),
        (Some(1), Parallelism::DEFAULT),
        (Some(2), Parallelism::DEFAULT),
    ];
    let mut speedups = Vec::new();
    for case in [&hot_case, &spread_case] {
        let t = time_configs(&case.store, &case.changes, &configs, reps);
        let mut store = case.store.clone();
        let updates = compute_updates(&store, &case.changes, Parallelism::Serial).expect("memory");
        let start = Instant::now();
        write_updates(&mut store, updates).expect("memory");
        let write = start.elapsed().as_secs_f64();
        let speedup = (t[0].0 / t[2].0, t[0].1 / t[2].1);
        speedups.push(speedup);
        println!(
            "| {} | {} | {} | {} ({}) | {} ({}) | {} ({}) | {:.2}×; {:.2}× | {} |",
            case.name,
            ms(case.scratch[0].0),
            ms(case.scratch[2].0),
            ms(t[0].0),
            ms(t[0].1),
            ms(t[1].0),
            ms(t[1].1),
            ms(t[2].0),
            ms(t[2].1),
            speedup.0,
            speedup.1,
            ms(write),
        );
    }
    println!(
        "\nhot speedup / spread speedup at 2 threads: {:.2} by medians, {:.2} by minima (goal ≥ 0.9)\n",
        speedups[0].0 / speedups[1].0,
        speedups[0].1 / speedups[1].1
    );
    let _ = hot_case.scratch[1];

    println!("## Fork threshold: one hot storage trie alone, n changed slots, 2 threads (medians of {reps} × max(1, 1024/n) interleaved runs; ms, speedup vs serial)\n");
    let splits = [8usize, 16, 32, 64, 128, 256, 1024];
    print!("| n | serial |");
    for s in splits {
        print!(" split ≥ {s} |");
    }
    println!();
    println!("|---|---|{}", "---|".repeat(splits.len()));
    for n in [16usize, 32, 64, 128, 256, 512, 1024, 2048, 4200, 16_000] {
        let cs = hot_changes(&mut rng, &hot_storages, n, false);
        let mut configs = vec![(None, Parallelism::Serial)];
        configs.extend(splits.map(|s| {
            (
                Some(2),
                Parallelism::Parallel {
                    split_min_changes: s,
                },
            )
        }));
        let t = time_configs(&hot_case.store, &cs, &configs, reps * (1024 / n).max(1));
        print!("| {n} | {} |", ms(t[0].0));
        for x in &t[1..] {
            print!(" {} ({:.2}×) |", ms(x.0), t[0].0 / x.0);
        }
        println!();
    }
}
