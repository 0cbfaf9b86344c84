//! The write and root stages: a verified block's changes applied to its pre-state (or its
//! early root's updates written to the node store), then (unless [`RootMode::None`]) the root
//! of the result, compared with the header's on complete states. A block is written only
//! after it verified and its root matched.

use super::{
    early::{incremental_root, incremental_root_of_execution, EarlyRoot},
    BlockTimeline, Ctx, Executed, StageSpan,
};
use crate::root::{full_root, RootMode};
use gigagas_data::PreState;
use gigagas_exec::ExecError;
use gigagas_verify::VerifyError;
use std::collections::BTreeMap;

/// The write and root stages of one verified block (`early`: its write and root from its
/// shipped list, when they started before execution).
pub(super) fn commit_block(
    ctx: Ctx<'_, '_>,
    done: Executed,
    early: Option<EarlyRoot>,
) -> Result<BlockTimeline, ExecError> {
    let case = &ctx.cases[done.index];
    let (input, options, clock, pool) = (case.prepared.input, ctx.options, ctx.clock, ctx.stages);
    // Inside a mega-block, a block after the first gets its incremental root only now, on
    // the node store the block before it was written to.
    let early = match (early, &input.access_list) {
        (None, _) if options.root == RootMode::Incremental && !options.bal.has_bal() => {
            incremental_root_of_execution(ctx, input, &done.post)
        }
        (None, Some(bal)) if options.root == RootMode::Incremental => {
            incremental_root(ctx, input, bal)
        }
        (early, _) => early,
    };
    let (post_state, write, early_root, prefetch, pending) = match early {
        Some(e) => (e.post_state, e.write, Some(e.root), e.prefetch, e.pending),
        None => {
            let (post_state, write): (PreState, _) = clock.on(pool, || {
                gigagas_state::apply_changes(&input.pre_state, &done.post)
            });
            (post_state, write, None, None, None)
        }
    };
    let mut stages = BTreeMap::from([
        ("recover", done.recover),
        (
            "prefetch",
            prefetch.unwrap_or(StageSpan {
                start_ns: done.recover.end_ns,
                end_ns: done.recover.end_ns,
            }),
        ),
        ("execute", done.execute),
        ("verify", done.verify),
        ("write", write),
    ]);
    let (mut state_root, mut root_checked) = (None, false);
    if options.root != RootMode::None {
        let (root, span) = match early_root.flatten() {
            Some((Ok(root), span)) => (root, span),
            Some((Err(e), _)) => {
                return Err(ExecError::Unsupported {
                    block: input.number(),
                    what: format!("incremental state root: {e}"),
                })
            }
            None => clock.on(pool, || full_root(options.root, &post_state)),
        };
        stages.insert("root", span);
        if input.complete_state {
            if root != input.header.state_root {
                return Err(ExecError::Verify(VerifyError::Header {
                    block: input.number(),
                    field: "state_root",
                    expected: input.header.state_root.to_string(),
                    actual: root.to_string(),
                }));
            }
            root_checked = true;
        }
        state_root = Some(root);
    }
    // The block verified and its root matched: only now is it written.
    if let (Some(pending), Some(trie)) = (pending, ctx.trie) {
        let (written, span) = clock.on(pool, || trie.commit(input, pending));
        written.map_err(|e| ExecError::State {
            block: input.number(),
            what: format!("writing the state: {e}"),
        })?;
        stages.insert("write", span);
    }
    Ok(BlockTimeline {
        number: input.number(),
        gas: input.gas_used(),
        txs: input.transactions.len(),
        stages,
        unit: done.unit,
        checks: crate::checks::Checks::of(case, options.mode, state_root.is_some(), root_checked),
        state_root,
        root_checked,
        read_bytes: None,
        demand_reads: done.demand_reads,
        read_ahead: done.read_ahead,
        write: ctx.trie.and_then(|t| t.block_write(input.number())),
    })
}
