//! The write and root stages started early: a block that ships its BAL has every post-value
//! before it executes, so its post-state and root are computed from the list beside its
//! execution (and, with an incremental root, held as a [`PendingRoot`] the commit stage
//! writes only once the block verified). Blocks without a list get theirs from execution's
//! changes in the commit stage.

use super::{Ctx, StageSpan, Unit};
use crate::root::{
    change_set, change_set_of_execution, full_root, touched_post_state, PendingRoot, RootMode,
};
use alloy_primitives::B256;
use gigagas_data::{BlockInput, PreState};

/// The write and root stages done from a shipped BAL, before execution confirmed it.
pub(super) struct EarlyRoot {
    /// The unit's prefetch (on its first block).
    pub(super) prefetch: Option<StageSpan>,
    /// The block's post-state (touched accounts for an incremental root).
    pub(super) post_state: PreState,
    /// When the post-state was built.
    pub(super) write: StageSpan,
    /// The root and when it was computed (`None` without a root).
    pub(super) root: Option<(Result<B256, String>, StageSpan)>,
    /// The incremental root's updates, written by the commit stage once the block verified.
    pub(super) pending: Option<PendingRoot>,
}

/// Each block's early write and root ([`early_root`]); `None` where they must wait for
/// execution: without a list, and inside a mega-block with an incremental root (a block
/// needs the one before it written), so there only the unit's first block has one. The
/// unit's `prefetch` span is put on its first block.
pub(super) fn early_roots(
    ctx: Ctx<'_, '_>,
    unit: &Unit<'_>,
    prefetch: Option<StageSpan>,
) -> Vec<Option<EarlyRoot>> {
    let options = ctx.options;
    ctx.cases[unit.blocks.clone()]
        .iter()
        .enumerate()
        .map(|(j, case)| {
            if !options.bal.has_bal() || (j > 0 && options.root == RootMode::Incremental) {
                return None;
            }
            let mut early = early_root(ctx, case.prepared.input)?;
            if j == 0 {
                early.prefetch = prefetch;
            }
            Some(early)
        })
        .collect()
}

/// Write and root from the block's shipped BAL; `None` for blocks without one or without a
/// complete state (whose root is computed from execution's changes).
fn early_root(ctx: Ctx<'_, '_>, input: &BlockInput) -> Option<EarlyRoot> {
    let bal = input
        .access_list
        .as_ref()
        .filter(|_| input.complete_state)?;
    if ctx.options.root == RootMode::Incremental && ctx.trie.is_some() {
        return incremental_root(ctx, input, bal);
    }
    let rebuild = || {
        let mut accounts: alloy_primitives::map::HashMap<_, _> = input
            .pre_state
            .accounts()
            .map(|(a, acc)| (*a, acc.clone()))
            .collect();
        gigagas_data::chain::apply_bal(&mut accounts, bal);
        PreState::new(accounts, input.pre_state.block_hashes().clone())
    };
    let (post_state, write) = ctx.clock.on(ctx.stages, rebuild);
    let root = match ctx.options.root {
        RootMode::None => None,
        mode => Some(
            ctx.clock
                .on(ctx.stages, || Ok(full_root(mode, &post_state))),
        ),
    };
    Some(EarlyRoot {
        prefetch: None,
        post_state,
        write,
        root,
        pending: None,
    })
}

/// The incremental root of `input` from its BAL's changes (computed on the node store as it
/// is after the block before it: written, or computed and laid over it with the overlay);
/// written by the commit stage only once the block verified. `None` without a node store.
pub(super) fn incremental_root(
    ctx: Ctx<'_, '_>,
    input: &BlockInput,
    bal: &alloy_eip7928::BlockAccessList,
) -> Option<EarlyRoot> {
    let trie = ctx.trie?;
    let ((post_state, computed), span) = ctx.clock.on(ctx.stages, || {
        let post_state = touched_post_state(&input.pre_state, bal);
        let changes = change_set(bal, &post_state);
        let computed = trie.compute(input, &changes);
        (post_state, computed)
    });
    Some(pending_root(post_state, computed, span))
}

/// The incremental root of `input` from the changes its execution made (a run without a
/// list knows its writes only now); written by the commit stage. `None` without a node store.
pub(super) fn incremental_root_of_execution(
    ctx: Ctx<'_, '_>,
    input: &BlockInput,
    post: &gigagas_data::PostState,
) -> Option<EarlyRoot> {
    let trie = ctx.trie?;
    let (computed, span) = ctx.clock.on(ctx.stages, || {
        let changes = change_set_of_execution(&input.pre_state, post);
        trie.compute(input, &changes)
    });
    // Only a full root reads the post-state; an incremental one has its changes.
    let empty = PreState::new(Default::default(), Default::default());
    Some(pending_root(empty, computed, span))
}

/// An incremental root's outcome as an [`EarlyRoot`] (its write is the commit's).
fn pending_root(
    post_state: PreState,
    computed: Result<PendingRoot, String>,
    span: StageSpan,
) -> EarlyRoot {
    let (root, pending) = match computed {
        Ok(p) => (Ok(p.root()), Some(p)),
        Err(e) => (Err(e), None),
    };
    EarlyRoot {
        prefetch: None,
        post_state,
        write: StageSpan::default(),
        root: Some((root, span)),
        pending,
    }
}
