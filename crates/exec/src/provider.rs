//! Where execution reads the state before a block.

use crate::{ExecError, IntermediateRoots, PreparedBlock, StorageProbe};
use gigagas_data::{PreState, PreStateError};
use revm::database_interface::DatabaseRef;

/// The state a block executes against: accounts, storage, code and block hashes as revm's
/// [`DatabaseRef`], plus the EIP-7610 storage probe. Shared read-only by every worker, so
/// `Sync`. The in-memory [`PreState`] implements it, and so does the on-disk store's read
/// snapshot (`gigagas_store::DiskState`).
///
/// Every execution entry point is generic over it (monomorphised: no dynamic dispatch on the
/// read path). A read the provider cannot answer is a [`PreStateError`], which execution turns
/// into an error naming the block and transaction.
pub trait StateProvider: DatabaseRef<Error = PreStateError> + StorageProbe + Sync {
    /// The state as an in-memory [`PreState`], when it is one. Only the receipts of blocks
    /// before Byzantium need it (their intermediate state roots are computed from the whole
    /// pre-state); other providers answer `None` and such blocks are refused on them.
    fn in_memory(&self) -> Option<&PreState> {
        None
    }
}

impl StateProvider for PreState {
    fn in_memory(&self) -> Option<&PreState> {
        Some(self)
    }
}

/// The intermediate-root hook of `block` with the in-memory state it needs, `None` when the
/// block needs none; an error when it needs one and `state` is not in memory.
pub(crate) fn intermediate_roots<'a, S: StateProvider>(
    block: &'a PreparedBlock<'_>,
    state: &'a S,
) -> Result<Option<(&'a IntermediateRoots, &'a PreState)>, ExecError> {
    let Some(hook) = block.intermediate_root_hook() else {
        return Ok(None);
    };
    match state.in_memory() {
        Some(pre) => Ok(Some((hook, pre))),
        None => Err(ExecError::Unsupported {
            block: block.number(),
            what: "receipts before Byzantium need intermediate state roots, which only the in-memory state computes".into(),
        }),
    }
}
