//! The CPU reference: libsecp256k1 (the `secp256k1` crate, the library alloy-consensus
//! recovers senders with) and keccak-256, one signature at a time. The kernel must agree with
//! it on every input.

use crate::SigInput;
use alloy_primitives::{keccak256, Address};
use rayon::prelude::*;
use secp256k1::ecdsa::{RecoverableSignature, RecoveryId};
use secp256k1::{Message, SECP256K1};

/// The address libsecp256k1 recovers for `sig`, or `None` where its recovery fails (r or s
/// zero or ≥ n, r not the x of a curve point, the result at infinity). High s is accepted, as
/// libsecp256k1's recovery does: the fork's low-s rule belongs to the caller.
pub fn recover_one(sig: &SigInput) -> Option<Address> {
    let recid = RecoveryId::try_from(i32::from(sig.y_parity)).ok()?;
    let mut compact = [0u8; 64];
    compact[..32].copy_from_slice(&sig.r.to_be_bytes::<32>());
    compact[32..].copy_from_slice(&sig.s.to_be_bytes::<32>());
    let rs = RecoverableSignature::from_compact(&compact, recid).ok()?;
    let key = SECP256K1
        .recover_ecdsa(&Message::from_digest(sig.hash.0), &rs)
        .ok()?;
    let ser = key.serialize_uncompressed();
    Some(Address::from_slice(&keccak256(&ser[1..])[12..]))
}

/// [`recover_one`] for every signature, in parallel on the current rayon pool.
pub fn recover(sigs: &[SigInput]) -> Vec<Option<Address>> {
    sigs.par_iter().with_min_len(64).map(recover_one).collect()
}
