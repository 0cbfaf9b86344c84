//! Field-by-field and account-by-account differences between two outcomes.

use crate::Outcome;
use alloy_eip7928::{AccountChanges, BlockAccessList};
use alloy_primitives::Address;

/// Every difference between gigagas's and geth's outcome, one readable line each. BAL
/// accounts in `ignore` (rules one side does not implement) are left out of the account
/// comparison and listed separately by the caller.
pub fn differences(
    gigagas: &Outcome,
    geth: &Outcome,
    labels: &[&str],
    ignore: &[Address],
) -> Vec<String> {
    let mut out = Vec::new();
    if gigagas.state_root != geth.state_root {
        out.push(format!(
            "state root: gigagas {}, geth {}",
            gigagas.state_root, geth.state_root
        ));
    }
    if gigagas.receipts_root != geth.receipts_root {
        out.push(format!(
            "receipts root: gigagas {}, geth {}",
            gigagas.receipts_root, geth.receipts_root
        ));
    }
    if gigagas.gas_used != geth.gas_used {
        out.push(format!(
            "block gas used: gigagas {}, geth {}",
            gigagas.gas_used, geth.gas_used
        ));
    }
    for (i, label) in labels.iter().enumerate() {
        let (a, b) = (gigagas.tx_gas.get(i), geth.tx_gas.get(i));
        if a != b {
            out.push(format!("tx {i} ({label}): gas gigagas {a:?}, geth {b:?}"));
        }
        let (a, b) = (gigagas.tx_success.get(i), geth.tx_success.get(i));
        if a != b {
            out.push(format!(
                "tx {i} ({label}): success gigagas {a:?}, geth {b:?}"
            ));
        }
    }
    if gigagas.bal_hash != geth.bal_hash {
        let show = |h: &Option<alloy_primitives::B256>| {
            h.map_or_else(|| "none".to_owned(), |h| h.to_string())
        };
        out.push(format!(
            "BAL hash: gigagas {}, geth {}",
            show(&gigagas.bal_hash),
            show(&geth.bal_hash)
        ));
    }
    if let (Some(a), Some(b)) = (&gigagas.bal, &geth.bal) {
        out.extend(bal_differences(a, b, ignore));
    }
    out
}

/// Account-by-account BAL differences, ignoring the accounts in `ignore`.
pub fn bal_differences(
    gigagas: &BlockAccessList,
    geth: &BlockAccessList,
    ignore: &[Address],
) -> Vec<String> {
    let find = |bal: &BlockAccessList, a: &Address| bal.iter().find(|c| c.address == *a).cloned();
    let mut addresses: Vec<Address> = gigagas
        .iter()
        .chain(geth.iter())
        .map(|c| c.address)
        .collect();
    addresses.sort();
    addresses.dedup();
    let mut out = Vec::new();
    for address in addresses.into_iter().filter(|a| !ignore.contains(a)) {
        match (find(gigagas, &address), find(geth, &address)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => {
                out.push(format!("BAL account {address}: {}", account_diff(&a, &b)))
            }
            (Some(_), None) => out.push(format!("BAL account {address}: only in gigagas's BAL")),
            (None, Some(_)) => out.push(format!("BAL account {address}: only in geth's BAL")),
            (None, None) => {}
        }
    }
    out
}

fn account_diff(a: &AccountChanges, b: &AccountChanges) -> String {
    let mut parts = Vec::new();
    if a.storage_changes != b.storage_changes {
        parts.push(format!(
            "storage changes gigagas {:?} geth {:?}",
            a.storage_changes, b.storage_changes
        ));
    }
    if a.storage_reads != b.storage_reads {
        parts.push(format!(
            "storage reads gigagas {:?} geth {:?}",
            a.storage_reads, b.storage_reads
        ));
    }
    if a.balance_changes != b.balance_changes {
        parts.push(format!(
            "balance changes gigagas {:?} geth {:?}",
            a.balance_changes, b.balance_changes
        ));
    }
    if a.nonce_changes != b.nonce_changes {
        parts.push(format!(
            "nonce changes gigagas {:?} geth {:?}",
            a.nonce_changes, b.nonce_changes
        ));
    }
    if a.code_changes != b.code_changes {
        parts.push("code changes differ".to_owned());
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::B256;

    fn outcome() -> Outcome {
        Outcome {
            state_root: B256::repeat_byte(1),
            receipts_root: B256::repeat_byte(2),
            gas_used: 100,
            tx_gas: vec![60, 40],
            tx_success: vec![true, false],
            bal: Some(vec![AccountChanges {
                address: Address::repeat_byte(9),
                ..Default::default()
            }]),
            bal_hash: Some(B256::repeat_byte(3)),
        }
    }

    #[test]
    fn equal_outcomes_have_no_differences_and_each_field_is_reported() {
        let a = outcome();
        assert!(differences(&a, &a, &["x", "y"], &[]).is_empty());
        let mut b = a.clone();
        b.tx_gas[1] = 41;
        b.state_root = B256::ZERO;
        let d = differences(&a, &b, &["x", "y"], &[]);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].starts_with("state root"));
        assert!(d[1].contains("tx 1 (y)"));
        let mut c = a.clone();
        c.bal.as_mut().unwrap()[0]
            .nonce_changes
            .push(Default::default());
        let d = differences(&a, &c, &["x", "y"], &[]);
        assert!(d[0].contains("nonce changes"), "{d:?}");
        assert!(differences(&a, &c, &["x", "y"], &[Address::repeat_byte(9)]).is_empty());
    }
}
