//! The blockchain-test runner on the bundled fixtures (always), on tampered copies of them
//! (each tamper must fail, naming what differs), and on a representative subset of the
//! shared ethereum/tests set (both paths, no failure allowed).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use gigagas_conformance::{
    chain::TestResult, collect_files, fixture, run_files, run_test, Mode, RunOptions,
};
use gigagas_exec::WorkerPool;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The first test of a bundled fixture file, as JSON.
fn first_test(file: &str) -> Value {
    let text = std::fs::read_to_string(fixtures_dir().join(file)).unwrap();
    fixture::parse_file(&text)
        .unwrap()
        .into_values()
        .next()
        .unwrap()
}

fn run(value: Value, mode: Mode) -> TestResult {
    let test = fixture::parse_test(value).expect("test parses");
    run_test(
        &test,
        mode,
        0,
        false,
        &WorkerPool::new(3),
        Path::new("tampered.json"),
    )
}

fn failure(result: TestResult) -> (String, String) {
    match result {
        TestResult::Failed { category, detail } => (category, detail),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn bundled_fixtures_pass_in_every_mode() {
    let files = collect_files(&[fixtures_dir()]).unwrap();
    assert_eq!(files.len(), 4);
    for mode in [Mode::Sequential, Mode::Parallel, Mode::Both] {
        let summary = run_files(
            &files,
            RunOptions {
                mode,
                threads: 3,
                mutations: 0,
                disk: false,
            },
            &|| {},
        );
        assert_eq!(summary.failed, 0, "{mode:?}: {:#?}", summary.failures);
        assert_eq!(summary.skipped, 0);
        assert_eq!(summary.passed, 6, "{mode:?}");
        // Two fixtures expect rejections; their directory counts must be there.
        assert_eq!(summary.by_fork["FrontierToHomesteadAt5"].passed, 1);
    }
}

/// `--state disk`: every imported block of the bundled and EIP-7610 fixtures (selfdestruct,
/// re-creation, storage-only collisions, a fork transition) also goes through an on-disk
/// store, whose incremental root (split at every node) equals each header's, and whose
/// stored nodes equal a from-scratch build at the end of every test.
#[test]
fn fixtures_pass_through_the_on_disk_store() {
    let dirs = [
        fixtures_dir(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eip7610"),
    ];
    let files = collect_files(&dirs).unwrap();
    let summary = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 2,
            mutations: 0,
            disk: true,
        },
        &|| {},
    );
    assert_eq!(summary.failed, 0, "{:#?}", summary.failures);
    assert_eq!(summary.passed, 12);
    // Every block the tests import went through the store.
    let memory = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 2,
            mutations: 0,
            disk: false,
        },
        &|| {},
    );
    assert_eq!(memory.store_blocks, 0);
    assert!(summary.store_blocks >= 12, "{}", summary.store_blocks);
}

/// EIP-7610: creations onto an address that holds only storage collide, in both paths
/// (ethereum/tests fixtures the shared set lacks; see `tests/eip7610/README.md`).
#[test]
fn eip7610_collisions_pass_in_both_paths() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/eip7610");
    let files = collect_files(&[dir]).unwrap();
    assert_eq!(files.len(), 4);
    let summary = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 2,
            mutations: 1,
            disk: false,
        },
        &|| {},
    );
    assert_eq!(summary.failed, 0, "{:#?}", summary.failures);
    assert_eq!(summary.skipped, 0, "{:?}", summary.skip_reasons);
    assert_eq!(summary.passed, 6);
}

#[test]
fn a_wrong_state_root_in_a_header_is_caught_by_both_paths() {
    let mut value = first_test("balance_within_block.json");
    let header_root = value["blocks"][0]["blockHeader"]["stateRoot"]
        .as_str()
        .unwrap()
        .trim_start_matches("0x")
        .to_owned();
    let rlp = value["blocks"][0]["rlp"].as_str().unwrap().to_owned();
    assert!(rlp.contains(&header_root));
    let wrong = format!("{:064x}", 0xdead_beefu64);
    value["blocks"][0]["rlp"] = Value::String(rlp.replace(&header_root, &wrong));
    // Without its JSON header (which would now disagree with the RLP: a fixture error), the
    // block reaches both paths.
    value["blocks"][0]
        .as_object_mut()
        .unwrap()
        .remove("blockHeader");
    for (mode, path) in [
        (Mode::Sequential, "sequential"),
        (Mode::Parallel, "parallel"),
    ] {
        let (category, detail) = failure(run(value.clone(), mode));
        assert_eq!(category, format!("{path}: state root"), "{detail}");
        assert!(detail.contains("deadbeef"), "{detail}");
    }
}

/// Before Byzantium receipts carry the state root after each transaction; both paths rebuild
/// them, so a wrong receipts root in a Frontier header is caught.
#[test]
fn pre_byzantium_receipts_roots_are_rebuilt_by_both_paths() {
    let mut value = first_test("double_kill.json");
    assert_eq!(value["network"], "Frontier");
    let root = value["blocks"][0]["blockHeader"]["receiptTrie"]
        .as_str()
        .unwrap()
        .trim_start_matches("0x")
        .to_owned();
    let rlp = value["blocks"][0]["rlp"].as_str().unwrap().to_owned();
    let wrong = format!("{:064x}", 0xbad_u64);
    value["blocks"][0]["rlp"] = Value::String(rlp.replace(&root, &wrong));
    value["blocks"][0]
        .as_object_mut()
        .unwrap()
        .remove("blockHeader");
    for (mode, path) in [
        (Mode::Sequential, "sequential"),
        (Mode::Parallel, "parallel"),
    ] {
        let (category, detail) = failure(run(value.clone(), mode));
        assert_eq!(category, format!("{path}: receipts_root"), "{detail}");
    }
}

/// A genesis header in JSON that disagrees with the genesis RLP (any field, the hash left as
/// the RLP's) fails, naming the field; both fixtures' headers agree as they are.
#[test]
fn a_genesis_header_disagreeing_with_its_rlp_fails() {
    for file in [
        "balance_within_block.json",
        "baseFee.json",
        "ContractCreationFailsOnHomestead.json",
    ] {
        let value = first_test(file);
        for (field, tampered) in [
            ("gasLimit", "0x01"),
            ("timestamp", "0x0badbeef"),
            ("coinbase", "0x00000000000000000000000000000000000000aa"),
            ("extraData", "0x1234"),
            ("nonce", "0x00000000000000aa"),
            (
                "receiptTrie",
                "0x1111111111111111111111111111111111111111111111111111111111111111",
            ),
        ] {
            let mut value = value.clone();
            value["genesisBlockHeader"][field] = Value::String(tampered.into());
            let (category, detail) = failure(run(value, Mode::Sequential));
            assert_eq!(category, "fixture", "{file} {field}: {detail}");
            assert!(
                detail.contains(&format!("disagree on {field}")),
                "{file} {field}: {detail}"
            );
        }
        // A field the RLP has and the JSON leaves out (or the reverse) disagrees too.
        let mut value = value.clone();
        let header = value["genesisBlockHeader"].as_object_mut().unwrap();
        if header.remove("baseFeePerGas").is_none() {
            header.insert("baseFeePerGas".into(), Value::String("0x07".into()));
        }
        let (_, detail) = failure(run(value, Mode::Sequential));
        assert!(
            detail.contains("disagree on baseFeePerGas"),
            "{file}: {detail}"
        );
    }
}

/// A block's `blockHeader` in JSON that disagrees with the header in its `rlp` (any field,
/// a 400-bit number, the hash, a field left out or one no header has) fails as a fixture
/// error naming the block, the field and both values, instead of passing on the RLP alone.
#[test]
fn a_block_header_disagreeing_with_its_rlp_fails() {
    let wide = format!("0x{}", "f".repeat(100));
    for file in [
        "balance_within_block.json",
        "baseFee.json",
        "ContractCreationFailsOnHomestead.json",
        "double_kill.json",
    ] {
        let value = first_test(file);
        assert!(
            matches!(
                run(value.clone(), Mode::Sequential),
                TestResult::Passed { .. }
            ),
            "{file} passes as it is"
        );
        let blocks = value["blocks"].as_array().unwrap().len();
        for k in [0, blocks - 1] {
            if value["blocks"][k].get("blockHeader").is_none() {
                continue;
            }
            for (field, tampered) in [
                ("gasLimit", wide.as_str()),
                ("gasUsed", "0x01"),
                ("number", "0x0100"),
                ("timestamp", "0x0badbeef"),
                ("difficulty", "0x0123456789"),
                ("coinbase", "0x00000000000000000000000000000000000000aa"),
                ("extraData", "0x1234"),
                (
                    "mixHash",
                    "0x1111111111111111111111111111111111111111111111111111111111111111",
                ),
                (
                    "stateRoot",
                    "0x2222222222222222222222222222222222222222222222222222222222222222",
                ),
                (
                    "hash",
                    "0x3333333333333333333333333333333333333333333333333333333333333333",
                ),
                ("unknownField", "0x01"),
            ] {
                let mut value = value.clone();
                value["blocks"][k]["blockHeader"][field] = Value::String(tampered.into());
                let (category, detail) = failure(run(value, Mode::Sequential));
                assert_eq!(category, "fixture", "{file} #{k} {field}: {detail}");
                assert!(
                    detail.starts_with(&format!(
                        "block #{k}: blockHeader and rlp disagree on {field}: JSON {tampered}, RLP "
                    )),
                    "{file} #{k} {field}: {detail}"
                );
            }
            // The same number with other leading zeros or hex case agrees.
            let mut value = value.clone();
            let gas = value["blocks"][k]["blockHeader"]["gasLimit"]
                .as_str()
                .unwrap();
            let padded = format!("0x0000{}", gas.trim_start_matches("0x").to_uppercase());
            value["blocks"][k]["blockHeader"]["gasLimit"] = Value::String(padded);
            assert!(
                matches!(run(value, Mode::Sequential), TestResult::Passed { .. }),
                "{file} #{k}: leading zeros"
            );
        }
        // A field the RLP header has and the JSON leaves out disagrees; so does a header
        // that is no object.
        let mut value = value.clone();
        value["blocks"][0]["blockHeader"]
            .as_object_mut()
            .unwrap()
            .remove("receiptTrie");
        let (_, detail) = failure(run(value.clone(), Mode::Sequential));
        assert!(
            detail.contains(
                "block #0: blockHeader and rlp disagree on receiptTrie: JSON absent, RLP 0x"
            ),
            "{file}: {detail}"
        );
        value["blocks"][0]["blockHeader"] = Value::String("0x01".into());
        let (category, detail) = failure(run(value, Mode::Sequential));
        assert_eq!(category, "fixture");
        assert!(
            detail.contains("blockHeader is not a JSON object"),
            "{file}: {detail}"
        );
    }
}

/// A block with `expectException` keeps being judged by its expected reason: its decoded
/// JSON (`rlp_decoded.blockHeader`, which may not be able to state an invalid header) is
/// not held against its RLP, and an RLP that does not decode is no fixture error (the import
/// rejects it, and the rejection is judged).
#[test]
fn invalid_blocks_keep_being_judged_by_their_expected_reason() {
    let value = first_test("baseFee.json");
    let k = value["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|b| b.get("expectException").is_some())
        .unwrap();
    assert!(value["blocks"][k]["rlp_decoded"]["blockHeader"].is_object());
    let mut tampered = value.clone();
    tampered["blocks"][k]["rlp_decoded"]["blockHeader"]["gasLimit"] = Value::String("0x07".into());
    assert!(
        matches!(
            run(tampered, Mode::Sequential),
            TestResult::Passed {
                exceptions_matched: 1..,
                ..
            }
        ),
        "an invalid block's decoded JSON is not checked"
    );
    // An undecodable RLP: rejected by the import, so judged by its expected reason (an RLP
    // error is not the expected one here: a wrong-reason failure, not a fixture error).
    let mut broken = value;
    broken["blocks"][k]["rlp"] = Value::String("0xf9ffff01".into());
    let (category, detail) = failure(run(broken, Mode::Sequential));
    assert_ne!(category, "fixture", "{detail}");
    assert!(
        detail.contains(&format!("block #{k}: expected ")),
        "{detail}"
    );
}

#[test]
fn a_wrong_expected_post_state_names_the_account() {
    let mut value = first_test("balance_within_block.json");
    let post = value["postState"].as_object_mut().unwrap();
    let (address, account) = post.iter_mut().next().unwrap();
    let address = address.clone();
    account["balance"] = Value::String("0x1234".into());
    let (category, detail) = failure(run(value, Mode::Both));
    assert_eq!(category, "post state");
    assert!(detail.contains(&address[2..]), "{detail}");
}

#[test]
fn an_invalid_block_that_is_accepted_fails_the_test() {
    // Drop the expectation from a block the fixture says must be rejected.
    let mut value = first_test("baseFee.json");
    let blocks = value["blocks"].as_array_mut().unwrap();
    let invalid = blocks
        .iter_mut()
        .find(|b| b.get("expectException").is_some())
        .unwrap();
    invalid.as_object_mut().unwrap().remove("expectException");
    let (category, detail) = failure(run(value, Mode::Both));
    assert!(
        category.starts_with("rule") || category.contains("invalid tx"),
        "{category}: {detail}"
    );
}

#[test]
fn bad_input_fails_the_test_and_the_run_goes_on() {
    let mut unknown_fork = first_test("balance_within_block.json");
    unknown_fork["network"] = Value::String("Atlantis".into());
    let (category, _) = failure(run(unknown_fork, Mode::Both));
    assert_eq!(category, "unknown fork");

    let mut bad_rlp = first_test("balance_within_block.json");
    bad_rlp["blocks"][0]["rlp"] = Value::String("0xf9ffff01".into());
    let (category, _) = failure(run(bad_rlp, Mode::Both));
    assert_eq!(category, "rlp decode");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{ not json").unwrap();
    std::fs::copy(
        fixtures_dir().join("double_kill.json"),
        dir.path().join("double_kill.json"),
    )
    .unwrap();
    let files = collect_files(&[dir.path().to_path_buf()]).unwrap();
    let summary = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 2,
            mutations: 0,
            disk: false,
        },
        &|| {},
    );
    assert_eq!((summary.passed, summary.failed), (2, 1));
    assert_eq!(summary.failures[0].reason, "invalid JSON");
    assert!(summary.failures[0].file.ends_with("broken.json"));
}

/// Inputs that used to pass or hang: a test without any expected end state, a file without
/// tests, a symlink loop, a FIFO named like a fixture, and a folder without fixtures.
#[test]
fn hostile_fixture_files_fail_instead_of_passing() {
    let mut no_post = first_test("balance_within_block.json");
    no_post.as_object_mut().unwrap().remove("postState");
    no_post.as_object_mut().unwrap().remove("postStateHash");
    let (category, _) = failure(run(no_post, Mode::Both));
    assert_eq!(category, "no expected state");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.json"), "{}").unwrap();
    std::fs::copy(
        fixtures_dir().join("double_kill.json"),
        dir.path().join("double_kill.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loop")).unwrap();
    let made_fifo = std::process::Command::new("mkfifo")
        .arg(dir.path().join("fifo.json"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made_fifo, "mkfifo is needed for this test");
    let files = collect_files(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(files.len(), 3, "{files:?}");
    let summary = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 2,
            mutations: 0,
            disk: false,
        },
        &|| {},
    );
    assert_eq!(
        (summary.passed, summary.failed),
        (2, 2),
        "{:#?}",
        summary.failures
    );
    let reasons: Vec<&str> = summary.failures.iter().map(|f| f.reason.as_str()).collect();
    assert!(
        reasons.contains(&"no tests") && reasons.contains(&"unreadable file"),
        "{reasons:?}"
    );

    let empty = tempfile::tempdir().unwrap();
    assert!(collect_files(&[empty.path().to_path_buf()]).is_err());
}

/// A representative subset of the shared ethereum/tests set, both paths, with one BAL mutant
/// of each kind per valid block (every one must be rejected naming its defect).
#[test]
#[cfg_attr(
    not(gigagas_shared_blockchain_tests),
    ignore = "needs ../shared/data/ethereum-tests/BlockchainTests (GIGAGAS_SHARED_DATA)"
)]
fn shared_subset_passes_in_both_paths() {
    let root = gigagas_data::shared_data_dir("ethereum-tests/BlockchainTests");
    let dirs: Vec<PathBuf> = [
        "ValidBlocks",
        "InvalidBlocks",
        "TransitionTests",
        "GeneralStateTests/stSStoreTest",
        "GeneralStateTests/stSelfBalance",
        "GeneralStateTests/Pyspecs/cancun",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    let files = collect_files(&dirs).unwrap();
    let summary = run_files(
        &files,
        RunOptions {
            mode: Mode::Both,
            threads: 4,
            mutations: 1,
            disk: false,
        },
        &|| {},
    );
    assert_eq!(summary.failed, 0, "{:#?}", summary.failures);
    assert!(summary.passed > 1000, "only {} passed", summary.passed);
    assert!(
        summary.skipped * 50 < summary.total(),
        "{:?}",
        summary.skip_reasons
    );
    eprintln!(
        "shared subset: {} passed, {} skipped ({:?})",
        summary.passed, summary.skipped, summary.skip_reasons
    );
}

/// EIP-7708 on the official `simple_transfer_mainnet` (tests-bal@v7.3.1, see
/// `tests/amsterdam/README.md`): gigagas fails it on the logs bloom, and the cause is the
/// fork's gas rules, not a dropped log. Under revm 43's Amsterdam (glamsterdam-devnet-8:
/// EIP-8037 state gas and EIP-2780 on) the fixture's 21,000-gas transfer of 1 wei to an
/// account that does not exist runs out of gas (creating the account costs state gas beyond
/// 21,000), so the value moves back and no Transfer log is left; bal-devnet-7, which filled
/// the fixture, charged 21,000 in all. The gas used is the whole limit either way: it agrees.
#[test]
fn eip7708_simple_transfer_fails_on_the_bloom_because_the_transfer_runs_out_of_gas() {
    use revm::{
        context::{BlockEnv, CfgEnv, Context, TxEnv},
        context_interface::result::{ExecutionResult, HaltReason, OutOfGasError},
        database::{CacheDB, EmptyDB},
        primitives::{address, hardfork::SpecId, TxKind, U256},
        state::AccountInfo,
        ExecuteEvm, MainBuilder, MainContext,
    };
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/amsterdam/simple_transfer_mainnet.json");
    let text = std::fs::read_to_string(&file).unwrap();
    let value = fixture::parse_file(&text)
        .unwrap()
        .into_values()
        .next()
        .unwrap();
    let receipt = &value["blocks"][0]["receipts"][0];
    assert_eq!(
        receipt["logs"].as_array().unwrap().len(),
        1,
        "the fixture's one Transfer log"
    );
    let (category, detail) = failure(run(value.clone(), Mode::Sequential));
    assert_eq!(category, "sequential: logs_bloom", "{detail}");
    assert!(
        detail.ends_with(&format!("execution produced 0x{}", "0".repeat(512))),
        "gigagas leaves no log: {detail}"
    );

    // The same transfer in revm with gigagas's Amsterdam config (`BlockEnvs::with_spec`).
    let from = address!("0x1ad9bc24818784172ff393bb6f89f094d4d2ca29");
    let to = address!("0xc0f6dc9e5836f54caadbf59cc69346c508e1992b");
    let transfer = |recipient_exists: bool, gas_limit: u64| {
        let mut db = CacheDB::new(EmptyDB::default());
        let funded = AccountInfo {
            balance: U256::from(1_000_000_000_000_000_000_000u128),
            ..Default::default()
        };
        db.insert_account_info(from, funded);
        if recipient_exists {
            let one = AccountInfo {
                balance: U256::from(1),
                ..Default::default()
            };
            db.insert_account_info(to, one);
        }
        let cfg = CfgEnv::<SpecId>::default().with_spec_and_mainnet_gas_params(SpecId::AMSTERDAM);
        assert!(!cfg.amsterdam_eip7708_disabled && cfg.enable_amsterdam_eip8037);
        let block = BlockEnv {
            basefee: 7,
            gas_limit: 0x0727_0e00,
            ..Default::default()
        };
        let mut evm = Context::mainnet()
            .with_db(db)
            .with_block(block)
            .with_cfg(cfg)
            .build_mainnet();
        let tx = TxEnv::builder()
            .caller(from)
            .kind(TxKind::Call(to))
            .value(U256::from(1))
            .gas_limit(gas_limit)
            .gas_price(7)
            .gas_priority_fee(Some(0))
            .tx_type(Some(2))
            .chain_id(Some(1))
            .build()
            .unwrap();
        evm.transact(tx).unwrap().result
    };
    // The fixture's transaction: out of gas at exactly its 21,000, no log.
    let result = transfer(false, 21_000);
    assert!(
        matches!(
            result,
            ExecutionResult::Halt {
                reason: HaltReason::OutOfGas(OutOfGasError::Basic),
                ..
            }
        ),
        "{result:?}"
    );
    assert_eq!(result.tx_gas_used(), 21_000);
    assert!(result.logs().is_empty());
    // To an existing account, or with gas for the new account's state gas, the log is the
    // fixture's, byte for byte.
    for (exists, gas) in [(true, 21_000), (false, 1_000_000)] {
        let result = transfer(exists, gas);
        assert!(result.is_success(), "{result:?}");
        let logs = result.logs();
        assert_eq!(logs.len(), 1);
        let log = serde_json::to_value(&logs[0]).unwrap();
        assert_eq!(log["address"], receipt["logs"][0]["address"]);
        assert_eq!(log["topics"], receipt["logs"][0]["topics"]);
        assert_eq!(log["data"], receipt["logs"][0]["data"]);
        if !exists {
            // 21,000 plus the state gas of the new account.
            assert!(result.tx_gas_used() > 21_000, "{result:?}");
        }
    }
}
