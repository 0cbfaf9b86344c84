//! Exported generated chains as other engines read them: the blockchain test must pass
//! gigagas's own conformance runner (always) and go-ethereum's `evm blocktest` (where it is
//! installed: a whole-chain differential check — geth re-executes every block from the
//! genesis and must reach every header's state root and the head block); Amsterdam chains
//! export and say why geth cannot agree; the RLP export holds exactly the blocks.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_gen::{generate, GenOptions, Workload};
use gigagas_peers::{
    export::{export_chain, ExportError, Format, BLOCKTEST_FILE, GENESIS_FILE, RLP_FILE},
    run,
};
use revm::primitives::hardfork::SpecId;
use std::path::Path;

fn chain(dir: &Path, workload: Workload, spec: SpecId, blocks: usize) {
    let options = GenOptions {
        workload,
        blocks,
        block_gas: 3_000_000,
        seed: 7,
        spec,
        tx_gas_cap: Some(gigagas_gen::builder::EIP7825_TX_GAS_CAP),
        senders: 16,
        verify_threads: 2,
        precompiles: Vec::new(),
        slots: (workload == Workload::SstoreBloated).then_some(5_000),
        spread: false,
        existing_slots: false,
    };
    let chain = generate(&options, &|_| {}).unwrap_or_else(|e| panic!("{workload}: {e}"));
    chain.write(dir).expect("write chain");
}

/// Every workload on Prague and `mainnet-mix` on Osaka, exported.
fn exports() -> Vec<(String, tempfile::TempDir, gigagas_peers::ChainExport)> {
    let mut cases: Vec<(Workload, SpecId)> =
        Workload::ALL.iter().map(|w| (*w, SpecId::PRAGUE)).collect();
    cases.push((Workload::MainnetMix, SpecId::OSAKA));
    cases
        .into_iter()
        .map(|(workload, spec)| {
            let dir = tempfile::tempdir().expect("tempdir");
            chain(&dir.path().join("chain"), workload, spec, 3);
            let export = export_chain(&dir.path().join("chain"))
                .unwrap_or_else(|e| panic!("{workload} {spec:?}: {e}"));
            let out = dir.path().join("export");
            std::fs::create_dir(&out).unwrap();
            export
                .write(&out, &[Format::BlockTest, Format::Rlp])
                .unwrap();
            (format!("{workload} {spec:?}"), dir, export)
        })
        .collect()
}

#[test]
fn exported_chains_pass_gigagas_conformance_in_both_paths() {
    for (label, dir, export) in exports() {
        let file = dir.path().join("export").join(BLOCKTEST_FILE);
        let summary = gigagas_conformance::run_files(
            &[file],
            gigagas_conformance::RunOptions {
                mode: gigagas_conformance::Mode::Both,
                threads: 2,
                mutations: 0,
                disk: false,
            },
            &|| {},
        );
        let problems: Vec<String> = summary
            .failures
            .iter()
            .chain(&summary.skips)
            .map(|o| format!("{} {}: {} {}", o.test, o.reason, o.detail, o.fork))
            .collect();
        assert_eq!(
            (summary.passed, summary.total()),
            (1, 1),
            "{label}: {problems:?}"
        );
        let _ = &export.name;
        // The RLP export is the blocks, back to back.
        let rlp = std::fs::read(dir.path().join("export").join(RLP_FILE)).unwrap();
        assert_eq!(rlp, export.rlp(), "{label}");
        let mut rest = &rlp[..];
        for b in &export.blocks {
            let block: alloy_consensus::Block<alloy_consensus::TxEnvelope> =
                alloy_rlp::Decodable::decode(&mut rest).unwrap();
            assert_eq!(block.header.hash_slow(), b.hash, "{label}");
        }
        assert!(rest.is_empty(), "{label}");
        let genesis: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("export").join(GENESIS_FILE)).unwrap(),
        )
        .unwrap();
        assert_eq!(genesis["config"]["chainId"], 1, "{label}");
    }
}

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn exported_chains_pass_geth_evm_blocktest() {
    let evm = gigagas_peers::tools::evm_path();
    for (label, dir, export) in exports() {
        run::geth_blocktest(&evm, &dir.path().join("export"), &export, run::PEER_TIMEOUT)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
    }
}

#[test]
#[cfg_attr(
    not(gigagas_geth_evm),
    ignore = "needs geth evm v1.17.10 (scripts/install-geth-evm.sh)"
)]
fn geth_rejects_a_tampered_export() {
    // The same check must fail when a block's state root is wrong: flip the head's expected
    // post-state balance of one account.
    let dir = tempfile::tempdir().unwrap();
    chain(
        &dir.path().join("chain"),
        Workload::Transfers,
        SpecId::PRAGUE,
        2,
    );
    let mut export = export_chain(&dir.path().join("chain")).unwrap();
    let (_, account) = export.post.iter_mut().next().unwrap();
    account.balance += alloy_primitives::U256::from(1);
    let out = dir.path().join("export");
    std::fs::create_dir(&out).unwrap();
    export.write(&out, &[Format::BlockTest]).unwrap();
    let err = run::geth_blocktest(
        &gigagas_peers::tools::evm_path(),
        &out,
        &export,
        run::PEER_TIMEOUT,
    )
    .expect_err("a wrong post-state must fail");
    assert!(err.to_string().contains("did not pass"), "{err}");
}

/// `gen`'s default fork: an Amsterdam chain exports (network Amsterdam, a genesis with
/// `amsterdamTime`), runs through gigagas's conformance runner in both paths, and says why
/// geth cannot reach its state root, naming `--fork Osaka`.
#[test]
fn amsterdam_chains_export_and_say_why_geth_disagrees() {
    let dir = tempfile::tempdir().unwrap();
    chain(
        &dir.path().join("chain"),
        Workload::Transfers,
        SpecId::AMSTERDAM,
        1,
    );
    let export = export_chain(&dir.path().join("chain")).unwrap();
    assert_eq!(export.network, "Amsterdam");
    let why = export.geth_disagrees().unwrap();
    assert!(
        why.contains("EIP-8282") && why.contains("--fork Osaka"),
        "{why}"
    );
    let genesis = export.geth_genesis_json();
    assert_eq!(genesis["config"]["amsterdamTime"], 0);
    let out = dir.path().join("export");
    std::fs::create_dir(&out).unwrap();
    export
        .write(&out, &[Format::BlockTest, Format::Rlp])
        .unwrap();
    let summary = gigagas_conformance::run_files(
        &[out.join(BLOCKTEST_FILE)],
        gigagas_conformance::RunOptions {
            mode: gigagas_conformance::Mode::Both,
            threads: 2,
            mutations: 0,
            disk: false,
        },
        &|| {},
    );
    let problems: Vec<String> = summary
        .failures
        .iter()
        .chain(&summary.skips)
        .map(|o| format!("{} {}: {} {}", o.test, o.reason, o.detail, o.fork))
        .collect();
    assert_eq!((summary.passed, summary.total()), (1, 1), "{problems:?}");
}

#[test]
fn data_without_a_genesis_is_refused() {
    // A directory in the mainnet layout (touched pre-state only) has no chain.json.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("blocks")).unwrap();
    let err = export_chain(dir.path()).unwrap_err();
    assert!(matches!(err, ExportError::NotAChain(_)), "{err}");
    assert!(err.to_string().contains("not a generated chain"), "{err}");
    let err = export_chain(Path::new("/nonexistent/gigagas-peers")).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/gigagas-peers"),
        "{err}"
    );
}

/// A fake peer: an executable shell script printing `stdout` (and exiting with `code`).
fn fake_peer(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn one_export() -> (tempfile::TempDir, gigagas_peers::ChainExport) {
    let dir = tempfile::tempdir().unwrap();
    chain(
        &dir.path().join("chain"),
        Workload::Transfers,
        SpecId::PRAGUE,
        2,
    );
    let export = export_chain(&dir.path().join("chain")).unwrap();
    let out = dir.path().join("export");
    std::fs::create_dir(&out).unwrap();
    export
        .write(&out, &[Format::BlockTest, Format::Rlp])
        .unwrap();
    (dir, export)
}

/// A peer's claimed pass is checked against the export: a pass with a zero (or any other)
/// state root, another fork or another head hash is a failure; the true values pass.
#[test]
fn peers_claiming_a_pass_are_checked_against_the_head() {
    let (dir, export) = one_export();
    let out = dir.path().join("export");
    let head = export.blocks.last().unwrap();
    let root = head.block.header.state_root;
    let claim = |root: String, fork: &str| {
        format!(
            "echo '[{{\"name\":\"{}\",\"pass\":true,\"stateRoot\":\"{root}\",\"fork\":\"{fork}\"}}]'",
            export.name
        )
    };
    let zero = fake_peer(
        dir.path(),
        "evm-zero",
        &claim(format!("{}", alloy_primitives::B256::ZERO), export.network),
    );
    let err = run::geth_blocktest(&zero, &out, &export, run::PEER_TIMEOUT).unwrap_err();
    assert!(
        err.to_string().contains("claims a pass with state root"),
        "{err}"
    );
    let fork = fake_peer(
        dir.path(),
        "evm-fork",
        &claim(format!("{root}"), "Frontier"),
    );
    let err = run::geth_blocktest(&fork, &out, &export, run::PEER_TIMEOUT).unwrap_err();
    assert!(err.to_string().contains("fork"), "{err}");
    let none = fake_peer(
        dir.path(),
        "evm-none",
        &format!("echo '[{{\"name\":\"{}\",\"pass\":true}}]'", export.name),
    );
    assert!(run::geth_blocktest(&none, &out, &export, run::PEER_TIMEOUT).is_err());
    let honest = fake_peer(
        dir.path(),
        "evm-honest",
        &claim(format!("{root}"), export.network),
    );
    run::geth_blocktest(&honest, &out, &export, run::PEER_TIMEOUT).unwrap();

    // geth import: the last segment must name the head's number and hash.
    let number = head.block.header.number;
    let hex = alloy_primitives::hex::encode(head.hash);
    let segment = |hash: &str| {
        format!(
            "case \"$3\" in init) exit 0;; esac\necho 'INFO Imported new chain segment number={number} hash={hash} blocks=2 txs=4 mgas=1.0 elapsed=1ms' >&2"
        )
    };
    let liar = fake_peer(dir.path(), "geth-liar", &segment("000000..000000"));
    let err = run::geth_import(&liar, &out, &export, run::PEER_TIMEOUT).unwrap_err();
    assert!(err.to_string().contains("has hash"), "{err}");
    let honest = fake_peer(
        dir.path(),
        "geth-honest",
        &segment(&format!("{}..{}", &hex[..6], &hex[58..])),
    );
    run::geth_import(&honest, &out, &export, run::PEER_TIMEOUT).unwrap();
}

/// The genesis written in chunks by `gigagas-geth-init` is the one `geth init` writes: geth
/// imports the chain onto either and reaches the export's head (number and hash, so state
/// root), on a hot account large enough to span several chunks.
#[test]
#[cfg_attr(
    not(all(gigagas_geth, gigagas_geth_init)),
    ignore = "needs geth v1.17.10 and gigagas-geth-init (scripts/install-geth.sh)"
)]
fn geth_imports_onto_the_streamed_genesis_as_onto_its_own() {
    let dir = tempfile::tempdir().unwrap();
    chain(
        &dir.path().join("chain"),
        Workload::SstoreBloated,
        SpecId::OSAKA,
        2,
    );
    let export = export_chain(&dir.path().join("chain")).unwrap();
    let out = dir.path().join("export");
    std::fs::create_dir(&out).unwrap();
    export.write(&out, &[Format::Rlp]).unwrap();
    let geth = gigagas_peers::tools::geth_path();
    let own = run::geth_import(&geth, &out, &export, run::PEER_TIMEOUT).unwrap();
    let streamed = run::geth_import_with(&geth, &out, &export, 0, run::PEER_TIMEOUT).unwrap();
    assert!(own.own_mgas_per_s.is_some() && streamed.own_mgas_per_s.is_some());

    // Committed 700 slots at a time (several chunks of the 5,000-slot account), the genesis
    // block still hashes to the export's (its header holds the state root).
    let tool = gigagas_peers::tools::geth_init_path();
    let genesis = format!("{}", export.genesis.hash_slow());
    let init = |datadir: &Path, expect: &str| {
        std::process::Command::new(&tool)
            .arg("--datadir")
            .arg(datadir)
            .args(["--chunk", "700", "--expect-hash", expect])
            .arg(out.join(GENESIS_FILE))
            .output()
            .unwrap()
    };
    let done = init(&dir.path().join("chunked"), &genesis);
    assert!(done.status.success(), "{done:?}");
    assert!(
        String::from_utf8_lossy(&done.stdout).contains(&genesis),
        "{done:?}"
    );
    // A wrong expected hash is refused, naming both.
    let zero = format!("{}", alloy_primitives::B256::ZERO);
    let done = init(&dir.path().join("wrong"), &zero);
    assert!(!done.status.success());
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(err.contains(&genesis) && err.contains(&zero), "{err}");
}

/// On a genesis written the ways geth accepts beyond what `export` writes (field names in
/// another case, decimal and zero-padded numbers, unprefixed addresses and short storage
/// words, a repeated storage key or field, null storage), `gigagas-geth-init` gives the
/// genesis hash `geth init` gives; an address given twice and data after the object are
/// refused.
#[test]
#[cfg_attr(
    not(all(gigagas_geth, gigagas_geth_init)),
    ignore = "needs geth v1.17.10 and gigagas-geth-init (scripts/install-geth.sh)"
)]
fn the_streamed_genesis_decodes_what_geth_init_decodes() {
    let (dir, _export) = one_export();
    let text = std::fs::read_to_string(dir.path().join("export").join(GENESIS_FILE)).unwrap();
    let odd = r#""1111111111111111111111111111111111111111": {"Balance": "12345", "NONCE": "5", "storage": {"0x01": "0x02", "0x0001": "0x03", "03": "0x04"}},
        "0x2222222222222222222222222222222222222222": {"balance": "0x10", "nonce": "0x00", "storage": null, "code": "0x6001"},
        "0x3333333333333333333333333333333333333333": {"balance": "0x1", "balance": "0x7"},"#;
    let at = text.find("\"alloc\": {").unwrap() + "\"alloc\": {".len();
    let genesis = dir.path().join("odd.json");
    std::fs::write(&genesis, format!("{}{odd}{}", &text[..at], &text[at..])).unwrap();
    let geth = std::process::Command::new(gigagas_peers::tools::geth_path())
        .arg("--datadir")
        .arg(dir.path().join("geth-own"))
        .arg("init")
        .arg(&genesis)
        .output()
        .unwrap();
    assert!(geth.status.success(), "{geth:?}");
    let log = String::from_utf8_lossy(&geth.stderr).into_owned();
    // geth logs the hash as `hash=aaaaaa..bbbbbb`.
    let short = log
        .rsplit("hash=")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let tool = |genesis: &Path, datadir: &str| {
        std::process::Command::new(gigagas_peers::tools::geth_init_path())
            .arg("--datadir")
            .arg(dir.path().join(datadir))
            .args(["--chunk", "2"])
            .arg(genesis)
            .output()
            .unwrap()
    };
    let ours = tool(&genesis, "streamed");
    assert!(ours.status.success(), "{ours:?}");
    let out = String::from_utf8_lossy(&ours.stdout).into_owned();
    let full = out
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_start_matches("0x");
    assert_eq!(
        format!("{}..{}", &full[..6], &full[58..]),
        short,
        "geth init: {log}\ngigagas-geth-init: {out}"
    );
    // Refused: an address given twice (its first storage may already be committed), and
    // anything after the genesis object.
    let twice = dir.path().join("twice.json");
    let dup = r#""0x2222222222222222222222222222222222222222": {"balance": "0x1"},"#;
    std::fs::write(&twice, format!("{}{odd}{dup}{}", &text[..at], &text[at..])).unwrap();
    let done = tool(&twice, "twice");
    assert!(!done.status.success());
    assert!(
        String::from_utf8_lossy(&done.stderr).contains("given twice"),
        "{done:?}"
    );
    let trailing = dir.path().join("trailing.json");
    std::fs::write(&trailing, format!("{text} {{}}")).unwrap();
    let done = tool(&trailing, "trailing");
    assert!(!done.status.success());
    assert!(
        String::from_utf8_lossy(&done.stderr).contains("after the genesis"),
        "{done:?}"
    );
}

/// A peer that never exits is killed at the deadline, and the error says what was waited
/// for, the flag that sets the limit and the (escaped) end of its stderr.
#[test]
fn a_hanging_peer_fails_at_its_deadline() {
    let (dir, export) = one_export();
    let out = dir.path().join("export");
    let hang = fake_peer(
        dir.path(),
        "evm-hang",
        "echo 'loading \x1b[1mblocks' >&2\nsleep 1000",
    );
    let err = run::geth_blocktest(&hang, &out, &export, std::time::Duration::from_millis(500))
        .unwrap_err()
        .to_string();
    assert!(err.contains("blocktest.json"), "{err}");
    assert!(err.contains("--timeout"), "{err}");
    assert!(err.contains("loading \\u{1b}[1mblocks"), "{err}");
    assert!(!err.contains('\x1b'), "{err}");
}
