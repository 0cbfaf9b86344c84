//! `gigagas_data::geth_genesis`: a geth --dev genesis is read; forks after Osaka, a fork
//! that activates later than the genesis, and files that are not a geth genesis are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failure is the test failing

use alloy_primitives::{Address, U256};
use gigagas_data::geth_genesis::parse_geth_genesis;
use revm::primitives::hardfork::SpecId;

#[test]
fn reads_a_dev_genesis_and_refuses_what_it_cannot_run() {
    let good = br#"{"config":{"chainId":1,"homesteadBlock":0,"shanghaiTime":0,
        "cancunTime":0,"pragueTime":0,"osakaTime":0,"terminalTotalDifficulty":0,
        "depositContractAddress":"0x0000000000000000000000000000000000000000"},
        "gasLimit":"0xaf79e0","alloc":{
        "0000000000000000000000000000000000000001":{"balance":"0x1"},
        "0x71562b71999873db5b286df957af199ec94617f7":{"balance":"1000"},
        "000f3df6d732807ef1319fb7b8bb8522d0beac02":{"code":"0x3373","balance":"0x0",
          "nonce":"0x1","storage":{"0x01":"0x02","0x03":"0x0"}}}}"#;
    let g = parse_geth_genesis(good).unwrap();
    assert_eq!(g.chain_id, 1);
    assert_eq!(g.spec, SpecId::OSAKA);
    assert_eq!(g.alloc.len(), 3);
    let dev: Address = "0x71562b71999873db5b286df957af199ec94617f7"
        .parse()
        .unwrap();
    assert_eq!(g.alloc[&dev].balance, U256::from(1000));
    let beacon: Address = "0x000f3df6d732807ef1319fb7b8bb8522d0beac02"
        .parse()
        .unwrap();
    assert_eq!(g.alloc[&beacon].nonce, 1);
    assert_eq!(g.alloc[&beacon].storage.len(), 1);

    let bogota = String::from_utf8_lossy(good)
        .replace("\"osakaTime\":0", "\"osakaTime\":0,\"bogotaTime\":0");
    assert!(parse_geth_genesis(bogota.as_bytes())
        .unwrap_err()
        .contains("bogotaTime"));
    let later = String::from_utf8_lossy(good).replace("\"osakaTime\":0", "\"osakaTime\":100");
    assert!(parse_geth_genesis(later.as_bytes())
        .unwrap_err()
        .contains("osakaTime is 100"));
    let e = parse_geth_genesis(br#"{"schema":"gigagas.chain/1"}"#).unwrap_err();
    assert!(e.contains("not a geth genesis"), "{e}");
    assert!(parse_geth_genesis(b"[1,2]")
        .unwrap_err()
        .contains("not a geth genesis"));
}
